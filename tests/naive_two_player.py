"""Plain-Python reference for the two-player Farkle solver (small instances only).

Deliberately simple and independent of ``dicelab.farkle.two_player`` and of the
set-aside encoding of ``dicelab.farkle.rules``:

* rolls are enumerated as multisets with multinomial probabilities computed here; a
  roll's options are every distinct (points, dice left) of the legal subsets of its dice,
  from the plain-Python scorer of :mod:`naive_farkle` (every subset tried);
* the last round is a memoised recursion over (need, dice);
* the game is solved by plain value iteration over the *whole* state space
  (my total, opponent total, turn points, dice), all score pairs at once, until no value
  moves by more than ``1e-14``: no ordering of pairs, no fixed-point algebra, no
  policy-stability intervals;
* ``last-round``: turn points are capped at a fixed bank total ``target + cap`` (a bank
  total at least ``cap`` units above any opponent's, whose catch-up chance is
  ``last_round(cap)``); ``first-to-bank``: a bank at the target wins (value 1), so no
  state past it is ever worth rolling from and no cap is needed.

Values are vectorised with numpy over the (t, t) grid of score pairs and over each roll's
options (the first of equal values wins, options sorted by points then dice left, both
descending, as the rules specify); nothing else.
"""

from __future__ import annotations

import functools
import itertools
from math import factorial
from typing import NamedTuple

import naive_farkle as nf
import numpy as np


def roll_outcomes(rules) -> dict[int, list[tuple[float, list[tuple[int, int]]]]]:
    """n -> [(probability, [(points in units of 50, dice to roll next), ...])]: rolls of n
    dice with the same options merged; options sorted by points, then dice, descending."""
    out: dict[int, list] = {}
    for n in range(1, 7):
        merged: dict[tuple, float] = {}
        for roll in itertools.combinations_with_replacement(range(1, 7), n):
            ways = factorial(n)
            for f in range(1, 7):
                ways //= factorial(roll.count(f))
            opts = tuple((p // 50, left) for p, left in nf.setaside_options(rules, roll))
            merged[opts] = merged.get(opts, 0.0) + ways / 6**n
        out[n] = [(p, list(o)) for o, p in merged.items() if o]
    return out


def min_bank_units(rules) -> int:
    """The fewest turn points (units of 50) a turn may bank with (the rule text: 50, or
    the minimum to bank)."""
    return max(rules.min_bank, 50) // 50


class LastRound:
    """The trailing player's last turn: (value, P(win), P(tie)) of needing more than d.

    A decision point is (need x, dice n, turn points so far k, counted up to the minimum
    to bank f): banking is allowed once k reaches f."""

    def __init__(self, rules, far: int = 400):
        self.rolls = roll_outcomes(rules)
        self.f = min_bank_units(rules)
        self.must_roll = rules.hot_dice == "must-roll"
        self.far = far  # must-roll: six dice ahead by more than this are counted as lost

    def point(self, x: int, n: int, k: int | None = None) -> tuple[float, float, float]:
        """Decision point with x units still needed (x < 0: already ahead), n dice, and
        k = min(turn points, f) units set aside (None: f, banking allowed)."""
        return self._point(x, n, self.f if k is None else k)

    @functools.cache  # noqa: B019 - the instance lives for one test
    def _point(self, x: int, n: int, k: int) -> tuple[float, float, float]:
        may_bank = k >= self.f and not (self.must_roll and n == 6)
        if may_bank and x < 0:
            return (1.0, 1.0, 0.0)
        if x < -self.far:  # (must-roll only: a truncation of the hot-dice chain)
            return (0.0, 0.0, 0.0)
        roll = self.roll(x, n, k)
        if may_bank and x == 0 and roll[0] <= 0.5:
            return (0.5, 0.0, 1.0)
        return roll

    def roll(self, x: int, n: int, k: int | None = None) -> tuple[float, float, float]:
        """Rolling n dice at that point."""
        k = self.f if k is None else k
        v = w = t = 0.0
        for p, opts in self.rolls[n]:
            best = max((self.point(x - s, nn, min(k + s, self.f)) for s, nn in opts),
                       key=lambda o: o[0])
            v, w, t = v + p * best[0], w + p * best[1], t + p * best[2]
        return v, w, t

    def turn(self, d: int) -> tuple[float, float, float]:
        """A whole last turn (must roll 6) needing more than d units."""
        for x in range(-1, d + 1):  # fill the memo bottom-up to keep the recursion shallow
            for n in range(1, 7):
                for k in range(self.f + 1):
                    self.point(x, n, k)
        return self.roll(d, 6, 0)


def _padded(rolls, sizes):
    """The classes of rolls of the given sizes as arrays, in groups of similar option
    counts (less padding): per group, each option's offset ``points * 7 + dice`` from the
    row of the roll (C, K), which of the K slots hold an option, and the weights
    (len(sizes), C): a class's probability in its size's row."""
    classes = [(k, p, opts) for k, n in enumerate(sizes) for p, opts in rolls[n]]
    groups = []
    for width in (1, 2, 4, 8, 16, 32, 64):
        members = [c for c in classes if width // 2 < len(c[2]) <= width]
        if not members:
            continue
        offset = np.zeros((len(members), width), dtype=np.int64)
        valid = np.zeros((len(members), width), dtype=bool)
        weight = np.zeros((len(sizes), len(members)))
        for c, (k, p, opts) in enumerate(members):
            weight[k, c] = p
            for j, (s, nn) in enumerate(opts):
                offset[c, j], valid[c, j] = s * 7 + nn, True
        groups.append((offset, valid, weight))
    assert sum(len(g[0]) for g in groups) == len(classes)
    return groups


def _best_roll(states, i, padded, bust, beta):
    """(value, P(win), P(tie)), stacked (3, pairs, sizes), of rolling each size of
    ``padded`` at row ``i`` at every score pair: every roll's best option (the first of
    equal values), a bust (probabilities ``bust``, one per size) worth ``beta`` (3, pairs).
    ``states[k, pair, row * 7 + dice]``: value, P(win), P(tie) (k = 0, 1, 2); the last
    entry is worth -inf (padding)."""
    pairs, n_states = states.shape[1], states.shape[2]
    out = bust[None, None, :] * beta[:, :, None]
    base = (np.arange(pairs) * n_states)[:, None]
    for offset, valid, weight in padded:
        idx = np.where(valid, i * 7 + offset, n_states - 1)  # (C, K)
        j = np.argmax(np.take(states[0], idx, axis=1), axis=-1)  # (pairs, C): first max
        flat = idx[np.arange(len(idx)), j] + base  # (pairs, C): the state each roll leads to
        for k in range(3):
            out[k] += states[k].reshape(-1)[flat] @ weight.T  # (pairs, sizes)
    return out


class Solution(NamedTuple):
    """The converged value iteration: ``value``, ``win``, ``tie`` (t, t) for the player to
    move at the turn's start; ``states[row * 7 + dice, a, b]`` (value, win, tie) at every
    decision point after a set-aside (row = turn points in units of 50) and
    ``bank_margin[row * 7 + dice, a, b]`` the value of banking there minus that of rolling
    (inf where banking is forced, -inf where it is not allowed); ``rolls`` the roll
    outcomes it used; ``sweeps`` until nothing moved by 1e-14."""

    value: np.ndarray
    win: np.ndarray
    tie: np.ndarray
    states: np.ndarray
    bank_margin: np.ndarray
    rolls: dict
    sweeps: int
    opponent: np.ndarray | None = None


def solve(rules, target: int, cap: int | None = None, sweeps: int = 5000,
          hot_rows: int = 72, floor: int = 0, opponent: dict[int, float] | None = None
          ) -> Solution:
    """Value iteration over every state of the game to ``target`` under ``rules``.

    ``cap`` (units; ``last-round`` only): banking is forced at a total ``cap`` units past
    the target. Under ``first-to-bank`` the cap is not needed (give None). A minimum to
    bank (``rules.min_bank``): below it every turn state rolls. Hot dice must-roll: six
    dice never bank; the turn rows go ``hot_rows`` further, six dice at the last rows are
    valued as a bank (a truncation of the hot-dice chain).

    The farkle penalty (``rules.farkle_penalty``): a state is also (my lost turns in a row
    s, the other's r), each 0..2; the third lost turn in a row costs the penalty and
    restarts the count; totals go down to ``floor`` units below zero (a penalty stops
    there), indexed ``u = units + floor``. Then ``value/win/tie`` are (3, 3, T, T) with
    ``T = t + floor``, indexed [s, r, u_me, u_other].

    ``opponent`` (``first-to-bank`` only): the other player does not play optimally but
    every turn banks ``g`` points with probability ``opponent[g]`` (0: the turn is lost),
    whatever the state: the solution is then the best response to it, and ``opponent``
    of the result its (value, P(win), P(tie)) as the player to move, shaped as ``value``.
    """
    k_streak = 3 if rules.farkle_penalty else 1
    assert floor == 0 or k_streak == 3
    pen = rules.farkle_penalty // 50
    t = target // 50 + floor
    ftb = rules.ending == "first-to-bank"
    assert ftb == (cap is None)
    rolls = roll_outcomes(rules)
    max_s = max(s for n in rolls for _, o in rolls[n] for s, _ in o)
    bust = np.array([1.0 - sum(p for p, _ in rolls[n]) for n in range(1, 7)])
    every_size = _padded(rolls, range(1, 7))  # rolls after a set-aside: 1..6 dice
    six = _padded(rolls, [6])  # the turn's first roll
    cap = 0 if ftb else cap
    if not ftb:
        last = LastRound(rules)
        d_max = t + cap + max_s + t + 2
        lr = np.array([last.turn(d) for d in range(d_max)])  # (d, 3)
    f = min_bank_units(rules)  # banking is allowed from f units of turn points on
    must_roll = rules.hot_dice == "must-roll"
    rows = max(t + cap, f) + max_s + 1 + (hot_rows if must_roll else 0)
    allowed = np.array([n < 6 or not must_roll for n in range(1, 7)])  # dice that may bank
    # states, flattened: ((s * K + r) * t + a) * t + b
    n = k_streak * k_streak * t * t
    s_me, r_other, a, b = np.unravel_index(np.arange(n), (k_streak, k_streak, t, t))

    def index(s, r, a, b):
        return ((s * k_streak + r) * t + a) * t + b

    w = np.stack([np.full(n, 0.5), np.full(n, 0.25), np.zeros(n)])
    o = w.copy()  # the other's values as the player to move (self-play: w)
    assert opponent is None or ftb
    # value, P(win), P(tie) of every pair's turn states (row = turn points, column =
    # dice), then the padding entry
    states = np.zeros((3, n, (rows + 1) * 7 + 1))
    states[0, :, -1] = -np.inf
    margin = np.full((n, (rows + 1) * 7), np.inf)
    for sweep in range(1, sweeps + 1):
        val, win, tie = w if opponent is None else o
        # a lost turn: the other moves at (b, a), my count one higher; the third costs
        # the penalty (never below the floor) and restarts it
        third = s_me == k_streak - 1
        swap = np.where(third, index(r_other, 0, b, np.maximum(a - pen, 0)),
                        index(r_other, np.minimum(s_me + 1, k_streak - 1), b, a))
        beta = np.stack([1.0 - val[swap], 1.0 - win[swap] - tie[swap], tie[swap]])
        for i in range(rows - 1, 0, -1):
            m = a + i
            inside = m < t
            nxt = index(r_other, 0, b, np.minimum(m, t - 1))  # after a bank below the target
            if ftb:
                bank = np.stack([np.where(inside, 1.0 - val[nxt], 1.0),
                                 np.where(inside, 1.0 - win[nxt] - tie[nxt], 1.0),
                                 np.where(inside, tie[nxt], 0.0)])
                forced = ~inside
            else:
                d = np.clip(m - b, 0, d_max - 1)
                bank = np.stack([np.where(inside, 1.0 - val[nxt], 1.0 - lr[d, 0]),
                                 np.where(inside, 1.0 - win[nxt] - tie[nxt],
                                          1.0 - lr[d, 1] - lr[d, 2]),
                                 np.where(inside, tie[nxt], lr[d, 2])])
                forced = m >= t + cap
            here = slice(i * 7 + 1, i * 7 + 7)  # dice 1..6 at row i
            if i < f:  # below the minimum to bank: the turn must roll
                states[:, :, here] = _best_roll(states, i, every_size, bust, beta)
                margin[:, here] = -np.inf
                continue
            if i + max_s >= rows or (forced.all() and allowed.all()):
                states[:, :, here] = bank[:, :, None]
                margin[:, here] = np.where(allowed[None, :], np.inf, -np.inf)
                continue
            roll = _best_roll(states, i, every_size, bust, beta)  # (3, pairs, 6)
            banks = allowed[None, :] & (forced[:, None] | (bank[0][:, None] >= roll[0]))
            states[:, :, here] = np.where(banks, bank[:, :, None], roll)
            margin[:, here] = np.where(~allowed[None, :], -np.inf, np.where(
                forced[:, None], np.inf, bank[0][:, None] - roll[0]))
        new = _best_roll(states, 0, six, bust[5:], beta)[:, :, 0]
        moved = np.abs(new - w).max()
        w = new
        if opponent is not None:  # the opponent's turn, from my new values
            third = s_me == k_streak - 1
            swap = np.where(third, index(r_other, 0, b, np.maximum(a - pen, 0)),
                            index(r_other, np.minimum(s_me + 1, k_streak - 1), b, a))
            q = opponent.get(0, 0.0)
            theirs = q * np.stack([1.0 - w[0, swap], 1.0 - w[1, swap] - w[2, swap], w[2, swap]])
            for g, p in opponent.items():
                if g == 0:
                    continue
                m = a + g // 50
                mine = index(r_other, 0, b, np.minimum(m, t - 1))
                theirs += p * np.where(m < t, np.stack([1.0 - w[0, mine],
                                                        1.0 - w[1, mine] - w[2, mine],
                                                        w[2, mine]]),
                                       np.array([1.0, 1.0, 0.0])[:, None])
            moved = max(moved, np.abs(theirs - o).max())
            o = theirs
        if moved < 1e-14:
            shape = (k_streak, k_streak, t, t)
            grid = w.reshape(3, *shape)
            turn = np.moveaxis(np.moveaxis(states[:, :, :-1], 0, -1).reshape(*shape, -1, 3), 4, 0)
            bank_margin = np.moveaxis(margin.reshape(*shape, -1), 4, 0)
            if k_streak == 1:
                grid, turn, bank_margin = grid[:, 0, 0], turn[:, 0, 0], bank_margin[:, 0, 0]
            other = None if opponent is None else o.reshape(3, *shape).copy()
            if k_streak == 1 and other is not None:
                other = other[:, 0, 0]
            return Solution(*grid.copy(), turn, bank_margin, rolls, sweep, other)
    raise RuntimeError("value iteration did not converge")


def table_turn_value(table, a: int, b: int, bank_value, beta: float, rolls,
                     floor: int = 1, hot_rows: int = 0) -> float:
    """Exact value of one turn from (a, b) played the way PolicyTable's docstring says,
    banking only from ``floor`` units of turn points on (the minimum to bank).

    ``bank_value(m)``: value of banking at total ``m`` (units); ``beta``: value of a bust.
    Set-aside: the option whose (clamped) table entry is highest, ties to more points,
    then more dice; then ``bank`` decides. Computed bottom-up over turn points.
    ``hot_rows`` (hot dice must-roll, where the table never banks six dice): turn points
    are followed that many rows further; six dice past them count as a loss (0), a
    truncation.
    """
    n_p = table.value.shape[2]
    max_s = max(s for n in rolls for _, o in rolls[n] for s, _ in o)
    vals: dict[tuple[int, int], float] = {}
    last = n_p + max_s + hot_rows

    def state(tp: int, n: int) -> float:
        if tp <= last:
            return vals[(tp, n)]
        return 0.0 if n == 6 else bank_value(a + tp)  # past the rows followed

    def roll(tp: int, n: int) -> float:
        total = (1.0 - sum(p for p, _ in rolls[n])) * beta
        for p, opts in rolls[n]:
            s, nn = max(opts, key=lambda o: (table.value[a, b, min(tp + o[0], n_p - 1), o[1]],
                                             o[0], o[1]))
            total += p * state(tp + s, nn)
        return total

    for tp in range(last, 0, -1):
        for n in range(1, 7):
            if table.bank[a, b, min(tp, n_p - 1), n] and tp >= floor:
                vals[(tp, n)] = bank_value(a + tp)
            else:
                vals[(tp, n)] = roll(tp, n)
    return roll(0, 6)


def table_last_turn_value(table, d: int, rolls, floor: int = 1) -> float:
    """Exact value of a last turn needing more than ``d`` units, played from the table
    (banking only from ``floor`` units of turn points on)."""
    lv, lb = table.last_value, table.last_bank
    d_rows, n_p = lv.shape[0], lv.shape[1]
    dd = min(d, d_rows - 1)
    max_s = max(s for n in rolls for _, o in rolls[n] for s, _ in o)
    vals: dict[tuple[int, int], float] = {}

    def roll(tp: int, n: int) -> float:
        total = 0.0
        for p, opts in rolls[n]:
            s, nn = max(opts, key=lambda o: (lv[dd, min(tp + o[0], n_p - 1), o[1]],
                                             o[0], o[1]))
            total += p * vals[(tp + s, nn)]
        return total

    for tp in range(n_p + max_s, 0, -1):
        for n in range(1, 7):
            if lb[dd, min(tp, n_p - 1), n] and tp >= floor:
                vals[(tp, n)] = 1.0 if tp > d else 0.5 if tp == d else 0.0
            else:
                vals[(tp, n)] = roll(tp, n)
    return roll(0, 6)
