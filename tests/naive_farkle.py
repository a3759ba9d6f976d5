"""Slow, obviously-correct plain-Python Farkle: scorer, policies, games, exact values.

Written from RULES.md §2-3 and the FarkleRules fields alone (the points of each
combination and the ending rule), without the set-aside encoding or the kernels, so the
tests can check those against it. Set-asides are every subset of the roll's dice.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter

from dicelab.farkle.rules import FarkleRules

# --------------------------------------------------------------------------- scoring


def kind_points(t: FarkleRules, face: int, k: int) -> int:
    """Points of k (3..6) equal dice as one combination, 0 if not a combination."""
    three = t.three_of_a_kind[face]
    if k == 3:
        return three
    if t.n_of_a_kind_mode == "fixed":
        return {4: t.n_of_a_kind[0], 5: t.n_of_a_kind[1], 6: t.n_of_a_kind[2]}[k]
    if t.n_of_a_kind_mode == "double":
        return three * (2 ** (k - 3))
    if t.n_of_a_kind_mode == "linear":  # each die past three adds the triple again
        return three * (k - 2)
    return 0


def best_partition(t: FarkleRules, dice: tuple[int, ...]) -> int | None:
    """Best points of ``dice`` (any order) split entirely into combinations; None if impossible.

    The lowest die must belong to some combination: try each one containing it.
    """
    return _best(t, tuple(sorted(dice)))


@functools.cache
def _best(t: FarkleRules, dice: tuple[int, ...]) -> int | None:
    if not dice:
        return 0
    f = dice[0]
    cnt = Counter(dice)
    options = []

    def without(*pairs):
        c = Counter(cnt)
        for face, k in pairs:
            if c[face] < k:
                return None
            c[face] -= k
        return tuple(sorted(c.elements()))

    def attempt(points, *pairs):
        if points <= 0:
            return
        rest = without(*pairs)
        if rest is None:
            return
        sub = _best(t, rest)
        if sub is not None:
            options.append(points + sub)

    attempt(t.singles[f], (f, 1))
    for k in range(3, cnt[f] + 1):
        attempt(kind_points(t, f, k), (f, k))
    attempt(t.straight, *[(x, 1) for x in range(1, 7)])
    others = [x for x in range(1, 7) if x != f]
    for a, b in itertools.combinations(others, 2):
        attempt(t.three_pairs, (f, 2), (a, 2), (b, 2))
    if t.four_and_pair_as_three_pairs:
        for b in others:
            attempt(t.three_pairs, (f, 4), (b, 2))
            attempt(t.three_pairs, (b, 4), (f, 2))
    for b in others:
        attempt(t.two_triplets, (f, 3), (b, 3))
    return max(options) if options else None


def legal_setasides(t: FarkleRules, roll: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """Every legal non-empty set-aside (sorted dice) of a roll with its points."""
    out = {}
    roll = tuple(sorted(roll))
    for mask in range(1, 2 ** len(roll)):
        sub = tuple(sorted(roll[i] for i in range(len(roll)) if mask >> i & 1))
        if sub in out:
            continue
        p = best_partition(t, sub)
        if p is not None and p > 0:
            out[sub] = p
    if not out and len(roll) == 6 and t.six_dice_nothing:
        out[roll] = t.six_dice_nothing  # six dice that score nothing: all six, hot dice
    return out


def best_by_size(t: FarkleRules, roll: tuple[int, ...]) -> dict[int, int]:
    """For each set-aside size k with a legal set-aside: the most points."""
    out: dict[int, int] = {}
    for sub, p in legal_setasides(t, roll).items():
        out[len(sub)] = max(out.get(len(sub), 0), p)
    return out


def dice_left(rolled: int, kept: int) -> int:
    """Dice to roll next: the rest, or all six after hot dice."""
    return 6 if kept == rolled else rolled - kept


def setaside_options(t: FarkleRules, roll) -> list[tuple[int, int]]:
    """Every distinct (points, dice left to roll) of the roll's legal set-asides, sorted
    by points, then dice left, both descending; [] for a bust."""
    return list(_options(t, tuple(sorted(roll))))


@functools.cache
def _options(t: FarkleRules, roll: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple(sorted({(p, dice_left(len(roll), len(sub)))
                         for sub, p in legal_setasides(t, roll).items()}, reverse=True))


def all_scoring(t: FarkleRules, roll) -> tuple[int, int]:
    """(dice kept, points) of "set aside all scoring dice": the largest legal set-aside,
    most points among those; (0, 0) for a bust."""
    by = best_by_size(t, tuple(roll))
    if not by:
        return 0, 0
    k = max(by)
    return k, by[k]


def bust_probability(t: FarkleRules, n: int) -> float:
    """Exact bust risk of n dice by enumerating all 6**n ordered rolls."""
    busts = 0
    cache: dict[tuple[int, ...], bool] = {}
    for seq in itertools.product(range(1, 7), repeat=n):
        key = tuple(sorted(seq))
        if key not in cache:
            cache[key] = not best_by_size(t, key)
        busts += cache[key]
    return busts / 6**n


def roll_distribution(n: int) -> dict[tuple[int, ...], float]:
    """Sorted roll of n dice -> probability, by enumerating ordered rolls."""
    c: Counter = Counter(tuple(sorted(s)) for s in itertools.product(range(1, 7), repeat=n))
    return {k: v / 6**n for k, v in c.items()}


# --------------------------------------------------------------------------- exact values


def threshold_turn_distribution(t: FarkleRules, threshold: int,
                                chain_to: int = 8000) -> dict[int, float]:
    """Exact distribution of the banked points of one threshold-T turn (0 = bust). Under
    hot dice must-roll a turn's chain of hot dice has no end: it is followed up to
    ``chain_to`` turn points, what still rolls there counted as a bust (each hot dice adds
    at least 300 points, so that many hot dice in a row: a chance far below 1e-12)."""
    return rule_turn_distribution(t, lambda tp, n: tp >= threshold, chain_to)


def rule_turn_distribution(t: FarkleRules, bank, chain_to: int = 8000) -> dict[int, float]:
    """As :func:`threshold_turn_distribution`, for a turn that sets aside all scoring
    dice and banks where ``bank(turn_points, dice_left)`` (and the rules allow)."""
    dists = {n: roll_distribution(n) for n in range(1, 7)}
    scored = {n: {r: all_scoring(t, r) for r in dists[n]} for n in range(1, 7)}

    @functools.cache
    def from_state(tp: int, n: int) -> tuple[tuple[int, float], ...]:
        out: Counter = Counter()
        for r, p in dists[n].items():
            k, pts = scored[n][r]
            if k == 0:
                out[0] += p
                continue
            tp2 = tp + pts
            n2 = n - k or 6
            if bank(tp2, n2) and may_bank(t, tp2, n2):
                out[tp2] += p
            elif tp2 >= chain_to:
                out[0] += p
            else:
                for v, q in from_state(tp2, n2):
                    out[v] += p * q
        return tuple(out.items())

    return dict(from_state(0, 6))


def may_bank(t: FarkleRules, tp: int, n_next: int) -> bool:
    """The house rules of banking: at least ``min_bank`` turn points, and no bank right
    after hot dice when hot dice must roll on."""
    return tp >= t.min_bank and not (t.hot_dice == "must-roll" and n_next == 6)


def expected_turns_to_target(turn_dist: dict[int, float], target: int) -> float:
    """Expected turns for a solitaire player with iid turn scores to bank >= target."""
    bust = turn_dist.get(0, 0.0)
    need: dict[int, float] = {}
    for x in range(target - 50, -1, -50):
        acc = 1.0
        for d, p in turn_dist.items():
            if d > 0 and x + d < target:
                acc += p * need[x + d]
        need[x] = acc / (1 - bust)
    return need[0]


# --------------------------------------------------------------------------- games


class FaceStream:
    """Dice faces read in order; a roll of n dice takes the next n faces."""

    def __init__(self, faces):
        self.faces = list(faces)
        self.pos = 0

    def roll(self, n: int) -> tuple[int, ...]:
        if self.pos + n > len(self.faces):
            raise EOFError("script exhausted")
        r = tuple(self.faces[self.pos:self.pos + n])
        self.pos += n
        return r


class Threshold:
    def __init__(self, threshold: int):
        self.threshold = threshold


class Ai:
    def __init__(self, base=300, step=100, per=1000, max_steps=5, two_dice=50, one_die=100,
                 chase=1):
        self.base, self.step, self.per, self.max_steps = base, step, per, max_steps
        self.two_dice, self.one_die, self.chase = two_dice, one_die, chase


class Table:
    """Plays a dicelab PolicyTable as its docstring says, from plain nested lookups
    (4-D and 6-D tables, with their floor)."""

    def __init__(self, pt):
        self.pt = pt


def _clamp(i, dim):
    return max(0, min(i, dim - 1))


def _normal_entry(pt, my_streak: int, opp_streak: int, my_total: int, best_opp: int,
                  p: int, n2: int):
    """(value, bank) of a table's normal play, written out for both shapes."""
    shape = pt.value.shape
    m = _clamp(my_total // 50 + pt.floor, shape[-4])
    o = _clamp(best_opp // 50 + pt.floor, shape[-3])
    if len(shape) == 4:
        return pt.value[m, o, p, n2], pt.bank[m, o, p, n2]
    a = min(my_streak, shape[0] - 1)
    b = min(opp_streak, shape[1] - 1)
    return pt.value[a, b, m, o, p, n2], pt.bank[a, b, m, o, p, n2]


def play_turn(t: FarkleRules, policy, dice: FaceStream, my_total: int, best_opp: int,
              last_round: bool, leader: int, log: dict, my_streak: int = 0,
              opp_streak: int = 0) -> int:
    """One turn; returns the banked points (0: the turn is lost). ``my_streak``,
    ``opp_streak``: lost turns in a row of this seat and of the best opponent."""
    n, tp = 6, 0
    log["turns"] += 1
    while True:
        roll = dice.roll(n)
        log["rolls"] += 1
        log["rolls_n"][n] += 1
        options = setaside_options(t, roll)
        if not options:
            log["bust_rolls"] += 1
            log["bust_turns"] += 1
            log["busts_n"][n] += 1
            return 0
        if isinstance(policy, Table):
            pt = policy.pt
            best = None
            for pts, n2 in options:
                tp2 = tp + pts
                p = _clamp(tp2 // 50, pt.value.shape[-2])
                if last_round and pt.last_value is not None:
                    d = _clamp((leader - my_total) // 50, pt.last_value.shape[0])
                    v, b = pt.last_value[d, p, n2], pt.last_bank[d, p, n2]
                else:
                    v, b = _normal_entry(pt, my_streak, opp_streak, my_total, best_opp, p,
                                         n2)
                key = (float(v), tp2, n2)
                if best is None or key > best[0]:
                    best = (key, tp2, n2, bool(b))
            _, tp, n2, bank = best
        else:
            k, pts = all_scoring(t, roll)
            tp += pts
            n2 = n - k if k < n else 6
            if isinstance(policy, Threshold):
                bank = tp >= policy.threshold
            else:
                deficit = max(0, best_opp - my_total)
                thr = policy.base + policy.step * min(policy.max_steps, deficit // policy.per)
                if n2 == 2:
                    thr -= policy.two_dice
                if n2 == 1:
                    thr -= policy.one_die
                bank = tp >= thr
                if last_round and policy.chase and my_total + tp <= leader:
                    bank = False
        if n2 == 6:
            log["hot"] += 1
        if bank and may_bank(t, tp, n2):
            return tp
        n = n2


def new_log():
    return {"turns": 0, "rolls": 0, "bust_rolls": 0, "bust_turns": 0, "hot": 0,
            "rolls_n": Counter(), "busts_n": Counter()}


def play_game(t: FarkleRules, policies, dice: FaceStream, target: int, start: int,
              ending: str | None = None):
    """One game; returns (totals, per-seat logs, trigger seat).

    ``ending`` (default: the rules'): ``last-round``, the first seat to bank at least the
    target triggers one more turn of every other seat; ``first-to-bank``, it wins at once.
    """
    ending = t.ending if ending is None else ending
    assert ending in ("last-round", "first-to-bank")
    s_count = len(policies)
    totals = [0] * s_count
    streak = [0] * s_count  # lost turns in a row
    logs = [new_log() for _ in policies]
    seat = start
    trigger = None
    while True:
        # the best opponent: the highest other total, the lowest-numbered seat among equals
        others = [s for s in range(s_count) if s != seat]
        opp = max(others, key=lambda s: (totals[s], -s)) if others else None
        best = totals[opp] if others else 0
        pts = play_turn(t, policies[seat], dice, totals[seat], best, trigger is not None, best,
                        logs[seat], streak[seat], 0 if opp is None else streak[opp])
        totals[seat] += pts
        streak[seat] = streak[seat] + 1 if pts == 0 else 0
        if streak[seat] == 3:  # three farkles in a row
            totals[seat] -= t.farkle_penalty
            streak[seat] = 0
        if trigger is None and totals[seat] >= target:
            trigger = seat
            if ending == "first-to-bank":
                return totals, logs, trigger
        seat = (seat + 1) % s_count
        if seat == trigger:
            return totals, logs, trigger


def outcome(totals):
    """Per seat: 'win', 'tie' or 'loss'."""
    top = max(totals)
    n_top = totals.count(top)
    return ["loss" if x < top else ("win" if n_top == 1 else "tie") for x in totals]


# --------------------------------------------------------------------------- duels


def threshold_duel(t: FarkleRules, thresholds: tuple[int, int], target: int,
                   ending: str) -> tuple[float, float]:
    """(P(seat 0 wins), P(tie)) of a game of two threshold seats, seat 0 moving first.

    The turns are independent draws from the exact turn distributions of
    :func:`threshold_turn_distribution`; the game is solved over the totals from the top
    down. A pair of totals is met again after busts (the mover busts, then the other
    seat), a cycle solved in closed form: ``f0 = c0 + B0 f1``, ``f1 = c1 + B1 f0``.
    """
    dists = [threshold_turn_distribution(t, thr) for thr in thresholds]
    busts = [d.get(0, 0.0) for d in dists]
    banks = [[(x, p) for x, p in d.items() if x > 0] for d in dists]

    def last_turn(mover: int, own: int, leader: int) -> tuple[float, float]:
        """(P(seat 0 wins), P(tie)) when ``mover`` plays the last turn from ``own`` against
        the trigger's total ``leader``."""
        beat = busts[mover] * (own > leader)
        tie = busts[mover] * (own == leader)
        for x, p in banks[mover]:
            beat += p * (own + x > leader)
            tie += p * (own + x == leader)
        lose = 1.0 - beat - tie
        return (beat if mover == 0 else lose), tie

    # f[s][(x, y)] = (P(seat 0 wins), P(tie)) with seat s to move, totals x (seat 0), y
    f: list[dict[tuple[int, int], tuple[float, float]]] = [{}, {}]
    totals = range(0, target, 50)
    for total in range(2 * (target - 50), -1, -50):
        for x in totals:
            y = total - x
            if not 0 <= y < target:
                continue
            c = []
            for s in (0, 1):
                w = tie = 0.0
                own, other = (x, y) if s == 0 else (y, x)
                for v, p in banks[s]:
                    if own + v >= target:
                        if ending == "first-to-bank":
                            dw, dt = float(s == 0), 0.0
                        else:
                            dw, dt = last_turn(1 - s, other, own + v)
                    else:
                        nxt = (own + v, other) if s == 0 else (other, own + v)
                        dw, dt = f[1 - s][nxt]
                    w += p * dw
                    tie += p * dt
                c.append((w, tie))
            b0, b1 = busts
            # f0 = c0 + b0 f1, f1 = c1 + b1 f0 (componentwise)
            f0 = tuple((c[0][k] + b0 * c[1][k]) / (1 - b0 * b1) for k in range(2))
            f1 = tuple(c[1][k] + b1 * f0[k] for k in range(2))
            f[0][(x, y)] = f0
            f[1][(x, y)] = f1
    return f[0][(0, 0)]
