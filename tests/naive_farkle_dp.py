"""Slow, obviously-correct Farkle turn recursions, independent of dicelab's kernels.

Nothing here imports dicelab's scoring or dice modules: the scoring of a set-aside is
recomputed from the rule text (RULES.md §2) by trying every partition into
combinations, rolls are enumerated as all 6**n ordered sequences, and set-asides as
every sub-multiset of the roll. Values are memoised plain-Python recursions over
(turn points, dice left) in points (not units).
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections import Counter

sys.setrecursionlimit(20000)


def _combos(rules: str) -> list[tuple[tuple[int, ...], int]]:
    """(counts of faces 1..6, points) of every combination of the named rules."""
    out = []

    def c(**faces):
        v = [0] * 6
        for f, k in faces.items():
            v[int(f[1:]) - 1] += k
        return tuple(v)

    out.append((c(f1=1), 100))
    out.append((c(f5=1), 50))
    for f in range(1, 7):
        out.append((c(**{f"f{f}": 3}), 1000 if f == 1 else 100 * f))
    if rules == "basic":
        return out
    if rules == "zilch":  # the online game Zilch: n of a kind doubles the triple per die
        for k in (4, 5, 6):
            for f in range(1, 7):
                out.append((c(**{f"f{f}": k}), (1000 if f == 1 else 100 * f) * 2 ** (k - 3)))
        out.append(((1, 1, 1, 1, 1, 1), 1500))
        for a, b, cc in itertools.combinations(range(1, 7), 3):
            out.append((c(**{f"f{a}": 2, f"f{b}": 2, f"f{cc}": 2}), 1500))
        for a, b in itertools.permutations(range(1, 7), 2):
            out.append((c(**{f"f{a}": 4, f"f{b}": 2}), 1500))
        return out
    assert rules == "default"
    for k, pts in ((4, 1000), (5, 2000), (6, 3000)):
        for f in range(1, 7):
            out.append((c(**{f"f{f}": k}), pts))
    out.append(((1, 1, 1, 1, 1, 1), 1500))
    for a, b, cc in itertools.combinations(range(1, 7), 3):
        out.append((c(**{f"f{a}": 2, f"f{b}": 2, f"f{cc}": 2}), 1500))
    for a, b in itertools.permutations(range(1, 7), 2):
        out.append((c(**{f"f{a}": 4, f"f{b}": 2}), 1500))
    for a, b in itertools.combinations(range(1, 7), 2):
        out.append((c(**{f"f{a}": 3, f"f{b}": 3}), 2500))
    return out


@functools.cache
def setaside_points(rules: str, counts: tuple[int, ...]) -> int | None:
    """Best partition of the dice ``counts`` (faces 1..6) into combinations; None if a
    die is left over in every partition (not a legal set-aside). Empty -> 0."""
    if sum(counts) == 0:
        return 0
    best = None
    for vec, pts in _combos(rules):
        if all(v <= x for v, x in zip(vec, counts, strict=True)):
            rest = setaside_points(rules, tuple(x - v for v, x in zip(vec, counts, strict=True)))
            if rest is not None and (best is None or pts + rest > best):
                best = pts + rest
    return best


@functools.cache
def roll_distribution(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """(sorted faces, probability) of every multiset, from all 6**n ordered rolls."""
    cnt = Counter(tuple(sorted(seq)) for seq in itertools.product(range(1, 7), repeat=n))
    total = 6**n
    return tuple((faces, k / total) for faces, k in sorted(cnt.items()))


@functools.cache
def options(rules: str, faces: tuple[int, ...], every: bool = False
            ) -> tuple[tuple[int, int], ...]:
    """Legal set-asides of a roll as (dice kept, points), every sub-multiset tried: the
    most points for each number of dice kept, or with ``every`` each distinct pair."""
    counts = [faces.count(f) for f in range(1, 7)]
    found: set[tuple[int, int]] = set()
    for sub in itertools.product(*(range(c + 1) for c in counts)):
        k = sum(sub)
        if k == 0:
            continue
        pts = setaside_points(rules, tuple(sub))
        if pts is not None and pts > 0:
            found.add((k, pts))
    if not found and len(faces) == 6 and rules == "zilch":
        found.add((6, 500))  # six dice that score nothing: 500, and all six count (hot dice)
    if every:
        return tuple(sorted(found))
    best: dict[int, int] = {}
    for k, pts in found:
        best[k] = max(best.get(k, 0), pts)
    return tuple(sorted(best.items()))


def bust_probability(rules: str, n: int) -> float:
    return sum(p for faces, p in roll_distribution(n) if not options(rules, faces))


def _next_dice(n: int, k: int) -> int:
    return 6 if k == n else n - k


def max_ev_values(rules: str, cap: int, every: bool = False, min_bank: int = 0,
                  must_roll: bool = False, far: int = 0, bust: float = 0.0,
                  six_roll_on: bool = False) -> dict[tuple[int, int], float]:
    """Max expected final turn points at every state (tp, n) with 0 < tp < cap (banking
    forced at turn points >= cap), and at (0, 6), the turn's start (a forced roll).
    ``every``: choose among every distinct legal set-aside, not only the most points for
    each number of dice kept. ``min_bank``: no bank with fewer turn points (cap >= it).
    ``must_roll``: no bank with six dice to roll (after hot dice), at any turn points;
    six dice at ``far`` points or more are counted as worth 0 (a truncation). ``bust``:
    what a lost turn is worth (0: nothing banked). ``six_roll_on``: six dice may bank
    but also roll on past the cap, up to ``far`` points (then they bank)."""
    state, roll = max_ev_recursion(rules, cap, every, min_bank, must_roll, far, bust,
                                   six_roll_on)
    out = {(tp, n): state(tp, n) for tp in range(50, cap, 50) for n in range(1, 7)}
    out[(0, 6)] = roll(0, 6)
    return out


def max_ev_recursion(rules: str, cap: int, every: bool = False, min_bank: int = 0,
                     must_roll: bool = False, far: int = 0, bust: float = 0.0,
                     six_roll_on: bool = False):
    """(state(tp, n), roll(tp, n)): the recursion of :func:`max_ev_values` (same
    arguments) at any turn points, a decision point's value and that of rolling ``n``
    dice there (a bust worth ``bust``), memoised and filled bottom-up."""
    assert cap >= min_bank and (not must_roll or far > cap)

    @functools.cache
    def state(tp: int, n: int) -> float:
        if must_roll and n == 6:
            return 0.0 if tp >= far else roll(tp, n)
        if six_roll_on and n == 6 and cap <= tp < far:
            return max(float(tp), roll(tp, n))
        if tp >= cap:
            return float(tp)
        if tp < min_bank:
            return roll(tp, n)
        return max(float(tp), roll(tp, n))

    @functools.cache
    def roll(tp: int, n: int) -> float:
        total = 0.0
        for faces, p in roll_distribution(n):
            opts = options(rules, faces, every)
            if opts:
                total += p * max(state(tp + pts, _next_dice(n, k)) for k, pts in opts)
            else:
                total += p * bust
        return total

    for tp in range(max(cap, far) - 50, 0, -50):  # bottom-up: a shallow recursion
        for n in range(1, 7):
            state(tp, n)
    return state, roll


def max_ev(rules: str, cap: int, every: bool = False, min_bank: int = 0) -> float:
    """Max expected turn score when banking is forced at turn points >= cap."""
    return max_ev_values(rules, cap, every, min_bank)[(0, 6)]


def threshold_outcomes(rules: str, threshold: int, must_roll: bool = False,
                       far: int = 0) -> dict[int, float]:
    """Distribution of a threshold-T turn: {banked points: probability}, 0 = bust.

    All scoring dice are set aside, i.e. the set-aside with the most dice. ``must_roll``:
    no bank with six dice to roll; a turn still rolling six dice at ``far`` points or more
    is dropped (a truncation: the result then sums to a little less than 1)."""

    @functools.cache
    def from_roll(tp: int, n: int) -> tuple[tuple[int, float], ...]:
        acc: Counter = Counter()
        if must_roll and n == 6 and tp >= far:
            return ()
        for faces, p in roll_distribution(n):
            opts = options(rules, faces)
            if not opts:
                acc[0] += p
                continue
            k, pts = max(opts)  # most dice = all scoring dice
            tp2, n2 = tp + pts, _next_dice(n, k)
            if tp2 >= threshold and not (must_roll and n2 == 6):
                acc[tp2] += p
            else:
                for x, q in from_roll(tp2, n2):
                    acc[x] += p * q
        return tuple(acc.items())

    return dict(from_roll(0, 6))


def fastest_turns(rules: str, target: int, sweeps: int = 200, every: bool = False,
                  min_bank: int = 0, must_roll: bool = False, far: int = 0) -> list[float]:
    """Expected turns to reach ``target`` solitaire under the best policy, per total
    (index = total // 50), by plain fixed-point iteration on each total's bust loop.
    ``every``, ``min_bank``, ``must_roll``: as in :func:`max_ev_values`; six dice at
    ``far`` turn points or more cost one more turn than the start (a truncation)."""
    units = target // 50
    turns = [0.0] * (units + 1)
    for m in range(units - 1, -1, -1):
        total = m * 50
        x = 1.0
        for _ in range(sweeps):

            @functools.cache
            def cost(tp: int, n: int, x=x, total=total) -> float:
                if must_roll and n == 6:
                    return x if tp >= far else roll_cost(tp, n, x)
                if tp == 0 or tp < min_bank:
                    return roll_cost(tp, n, x)
                bank = turns[min((total + tp) // 50, units)]
                if total + tp >= target:
                    return 0.0
                return min(bank, roll_cost(tp, n, x))

            @functools.cache
            def roll_cost(tp: int, n: int, x: float) -> float:
                c = 0.0
                for faces, p in roll_distribution(n):
                    opts = options(rules, faces, every)
                    if not opts:
                        c += p * x
                    else:
                        c += p * min(cost(tp + pts, _next_dice(n, k)) for k, pts in opts)
                return c

            x_new = 1.0 + roll_cost(0, 6, x)
            if abs(x_new - x) < 1e-13:
                x = x_new
                break
            x = x_new
        turns[m] = x
    return turns


def table_outcomes(rules: str, bank, value) -> dict[int, float]:
    """Distribution of a turn played from a decision table: {banked points: probability},
    0 = bust. ``bank``, ``value``: nested lists [row][n] (row = turn points // 50, rows
    past the last read as the last, which must bank). After every scoring roll the
    distinct legal set-aside whose state has the highest value is taken, ties to more
    points, then more dice left; then the table says bank (nonzero) or roll."""
    rows = len(bank)

    def row(tp: int) -> int:
        return min(tp // 50, rows - 1)

    @functools.cache
    def from_roll(tp: int, n: int) -> tuple[tuple[int, float], ...]:
        acc: Counter = Counter()
        for faces, p in roll_distribution(n):
            opts = options(rules, faces, every=True)
            if not opts:
                acc[0] += p
                continue
            _, tp2, n2 = max((value[row(tp + pts)][_next_dice(n, k)], tp + pts,
                              _next_dice(n, k)) for k, pts in opts)
            if bank[row(tp2)][n2]:
                acc[tp2] += p
            else:
                for x, q in from_roll(tp2, n2):
                    acc[x] += p * q
        return tuple(acc.items())

    return dict(from_roll(0, 6))


def max_ev_roll_value(rules: str, cap: int, states: dict[tuple[int, int], float], tp: int,
                      n: int) -> float:
    """Expected max-ev value of rolling ``n`` dice at turn points ``tp``, from
    ``states`` = :func:`max_ev_values` (every state at or past ``cap`` banks)."""

    def state(p: int, k: int) -> float:
        return float(p) if p >= cap else states[(p, k)]

    return sum(p * max(state(tp + pts, _next_dice(n, k)) for k, pts in opts)
               for faces, p in roll_distribution(n)
               if (opts := options(rules, faces, True)))


def max_ev_penalty_rate(rules: str, penalty: int, cap: int, sweeps: int = 200,
                        must_roll: bool = False, far: int = 0, min_bank: int = 0,
                        six_roll_on: bool = False) -> tuple[float, float, float]:
    """(g, h1, h2): the long-run points per turn of the best turn policy per run of lost
    turns s = 0, 1, 2 when the third lost turn in a row costs ``penalty``, by plain
    relative value iteration on ``g + h[s] = max E[banked] + P(bust) beta[s]``
    (``beta = h1, h2, -penalty``, ``h0 = 0``), every distinct set-aside tried.
    ``must_roll``, ``far``, ``min_bank``, ``six_roll_on``: as in :func:`max_ev_values`."""
    old = (0.0, 0.0, 0.0)
    for _ in range(sweeps):
        h1, h2 = old[1], old[2]
        e = [max_ev_values(rules, cap, every=True, bust=beta, must_roll=must_roll,
                           far=far, min_bank=min_bank, six_roll_on=six_roll_on)[(0, 6)]
             for beta in (h1, h2, -penalty)]
        new = (e[0], e[1] - e[0], e[2] - e[0])
        if max(abs(x - y) for x, y in zip(new, old, strict=True)) < 1e-11:
            return new
        old = new
    raise RuntimeError("relative value iteration did not converge")


def fastest_turns_penalty(rules: str, target: int, penalty: int, floor: int,
                          min_bank: int = 0, sweeps: int = 1000, must_roll: bool = False,
                          far: int = 0) -> dict[tuple[int, int], float]:
    """Expected turns to reach ``target`` solitaire under the best policy when the third
    lost turn in a row costs ``penalty`` points: ``{(lost in a row, total): turns}`` for
    totals from ``-floor`` (where a penalty stops) to the target, by plain Gauss-Seidel
    value iteration over every state and every legal set-aside. ``must_roll``: no bank
    with six dice to roll; six dice at ``far`` turn points or more cost what a lost turn
    costs (a truncation)."""
    assert not must_roll or far > target + floor
    totals = range(-floor, target, 50)
    turns = {(s, m): 0.0 for m in totals for s in range(3)}
    for _ in range(sweeps):
        moved = 0.0
        for (s, m), old in turns.items():
            beta = turns[(s + 1, m) if s < 2 else (0, max(m - penalty, -floor))]

            @functools.cache
            def cost(tp: int, n: int, m=m, beta=beta) -> float:
                if must_roll and n == 6:
                    return beta if tp >= far else roll_cost(tp, n)
                if tp == 0 or tp < min_bank:
                    return roll_cost(tp, n)
                if m + tp >= target:
                    return 0.0
                return min(turns[(0, m + tp)], roll_cost(tp, n))

            @functools.cache
            def roll_cost(tp: int, n: int, beta=beta) -> float:
                c = 0.0
                for faces, p in roll_distribution(n):
                    opts = options(rules, faces, True)
                    c += p * (min(cost(tp + pts, _next_dice(n, k)) for k, pts in opts)
                              if opts else beta)
                return c

            turns[(s, m)] = 1.0 + roll_cost(0, 6)
            moved = max(moved, abs(turns[(s, m)] - old))
        if moved < 1e-13:
            return turns
    raise RuntimeError("value iteration did not converge")
