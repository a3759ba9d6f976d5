"""Plain-Python reference for the two-player Farkle solver (tiny instances only).

Deliberately simple and independent of ``dicelab.farkle.two_player``:

* rolls are enumerated as multisets with multinomial probabilities computed here; the
  set-aside options come from the scoring table's ``keep_score`` (the rules data);
* the last round is a memoised recursion over (need, dice);
* the game is solved by plain value iteration over the *whole* state space
  (my total, opponent total, turn points, dice), all score pairs at once, until no value
  moves by more than ``1e-14``: no ordering of pairs, no fixed-point algebra, no
  policy-stability intervals;
* turn points are capped at a fixed bank total ``target + cap`` (a bank total at least
  ``cap`` units above any opponent's, whose catch-up chance is ``last_round(cap)``).

Values are vectorised over the (t, t) grid of score pairs with numpy, nothing else.
"""

from __future__ import annotations

import functools
import itertools
from math import factorial

import numpy as np

from dicelab import dice
from dicelab.farkle.scoring import ScoringTable, compile_table


def roll_outcomes(scoring: ScoringTable) -> dict[int, list[tuple[float, list[tuple[int, int]]]]]:
    """n -> [(probability, [(points in units of 50, dice to roll next), ...])] per roll."""
    comp = compile_table(scoring)
    out: dict[int, list] = {}
    for n in range(1, 7):
        merged: dict[tuple, float] = {}
        for roll in itertools.combinations_with_replacement(range(1, 7), n):
            ways = factorial(n)
            for f in range(1, 7):
                ways //= factorial(roll.count(f))
            r = dice.rank_of_dice(roll)
            opts = tuple(sorted(((int(comp.keep_score[r, k]) // 50, n - k if k < n else 6)
                                 for k in range(1, n + 1) if comp.keep_score[r, k] > 0),
                                reverse=True))  # more points first, then more dice
            merged[opts] = merged.get(opts, 0.0) + ways / 6**n
        out[n] = [(p, list(o)) for o, p in merged.items() if o]
    return out


class LastRound:
    """The trailing player's last turn: (value, P(win), P(tie)) of needing more than d."""

    def __init__(self, scoring: ScoringTable):
        self.rolls = roll_outcomes(scoring)

    @functools.cache  # noqa: B019 - the instance lives for one test
    def point(self, x: int, n: int) -> tuple[float, float, float]:
        """Decision point with x units still needed (x < 0: already ahead) and n dice."""
        if x < 0:
            return (1.0, 1.0, 0.0)
        roll = self.roll(x, n)
        if x == 0 and roll[0] <= 0.5:
            return (0.5, 0.0, 1.0)
        return roll

    def roll(self, x: int, n: int) -> tuple[float, float, float]:
        v = w = t = 0.0
        for p, opts in self.rolls[n]:
            best = max((self.point(x - s, nn) for s, nn in opts), key=lambda o: o[0])
            v, w, t = v + p * best[0], w + p * best[1], t + p * best[2]
        return v, w, t

    def turn(self, d: int) -> tuple[float, float, float]:
        """A whole last turn (must roll 6) needing more than d units."""
        for x in range(d + 1):  # fill the memo bottom-up to keep the recursion shallow
            for n in range(1, 7):
                self.point(x, n)
        return self.roll(d, 6)


def solve(scoring: ScoringTable, target: int, cap: int, sweeps: int = 5000):
    """Value iteration; returns (W, P(win), P(tie)) arrays (t, t) for the player to move."""
    t = target // 50
    rolls = roll_outcomes(scoring)
    max_s = max(s for n in rolls for _, o in rolls[n] for s, _ in o)
    last = LastRound(scoring)
    bust = {n: 1.0 - sum(p for p, _ in rolls[n]) for n in range(1, 7)}
    d_max = t + cap + max_s + t + 2
    lr = np.array([last.turn(d) for d in range(d_max)])  # (d, 3)
    rows = t + cap + max_s + 1
    a = np.arange(t)[:, None] * np.ones((1, t), dtype=int)
    b = a.T
    val = np.full((t, t), 0.5)
    win = np.full((t, t), 0.25)
    tie = np.zeros((t, t))
    for _ in range(sweeps):
        beta_v, beta_w, beta_t = 1.0 - val.T, 1.0 - win.T - tie.T, tie.T
        # V[row][k] = (value, win, tie) arrays over the (a, b) grid, k = dice
        V = [[None] * 7 for _ in range(rows)]
        for i in range(rows - 1, 0, -1):
            m = a + i
            inside = m < t
            mm = np.minimum(m, t - 1)
            d = np.clip(m - b, 0, d_max - 1)
            bank_v = np.where(inside, 1.0 - val[b, mm], 1.0 - lr[d, 0])
            bank_w = np.where(inside, 1.0 - win[b, mm] - tie[b, mm], 1.0 - lr[d, 1] - lr[d, 2])
            bank_t = np.where(inside, tie[b, mm], lr[d, 2])
            forced = m >= t + cap
            for n in range(1, 7):
                if i + max_s >= rows:
                    V[i][n] = (bank_v, bank_w, bank_t)
                    continue
                rv, rw, rt = bust[n] * beta_v, bust[n] * beta_w, bust[n] * beta_t
                for p, opts in rolls[n]:
                    bv, bw, bt = V[i + opts[0][0]][opts[0][1]]
                    for s, nn in opts[1:]:
                        cv, cw, ct = V[i + s][nn]
                        better = cv > bv
                        bv = np.where(better, cv, bv)
                        bw = np.where(better, cw, bw)
                        bt = np.where(better, ct, bt)
                    rv, rw, rt = rv + p * bv, rw + p * bw, rt + p * bt
                bank = forced | (bank_v >= rv)
                V[i][n] = (np.where(bank, bank_v, rv), np.where(bank, bank_w, rw),
                           np.where(bank, bank_t, rt))
        nv, nw, nt = bust[6] * beta_v, bust[6] * beta_w, bust[6] * beta_t
        for p, opts in rolls[6]:
            bv, bw, bt = V[opts[0][0]][opts[0][1]]
            for s, nn in opts[1:]:
                cv, cw, ct = V[s][nn]
                better = cv > bv
                bv = np.where(better, cv, bv)
                bw = np.where(better, cw, bw)
                bt = np.where(better, ct, bt)
            nv, nw, nt = nv + p * bv, nw + p * bw, nt + p * bt
        moved = max(np.abs(nv - val).max(), np.abs(nw - win).max(), np.abs(nt - tie).max())
        val, win, tie = nv, nw, nt
        if moved < 1e-14:
            return val, win, tie
    raise RuntimeError("value iteration did not converge")


def table_turn_value(table, a: int, b: int, bank_value, beta: float, rolls) -> float:
    """Exact value of one turn from (a, b) played the way PolicyTable's docstring says.

    ``bank_value(m)``: value of banking at total ``m`` (units); ``beta``: value of a bust.
    Set-aside: the size whose (clamped) table entry is highest, ties to more points, then
    more dice; then ``bank`` decides. Computed bottom-up over turn points.
    """
    n_p = table.value.shape[2]
    max_s = max(s for n in rolls for _, o in rolls[n] for s, _ in o)
    vals: dict[tuple[int, int], float] = {}

    def roll(tp: int, n: int) -> float:
        total = (1.0 - sum(p for p, _ in rolls[n])) * beta
        for p, opts in rolls[n]:
            s, nn = max(opts, key=lambda o: (table.value[a, b, min(tp + o[0], n_p - 1), o[1]],
                                             o[0], o[1]))
            total += p * vals[(tp + s, nn)]
        return total

    for tp in range(n_p + max_s, 0, -1):
        for n in range(1, 7):
            if table.bank[a, b, min(tp, n_p - 1), n]:
                vals[(tp, n)] = bank_value(a + tp)
            else:
                vals[(tp, n)] = roll(tp, n)
    return roll(0, 6)


def table_last_turn_value(table, d: int, rolls) -> float:
    """Exact value of a last turn needing more than ``d`` units, played from the table."""
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
            if lb[dd, min(tp, n_p - 1), n]:
                vals[(tp, n)] = 1.0 if tp > d else 0.5 if tp == d else 0.0
            else:
                vals[(tp, n)] = roll(tp, n)
    return roll(0, 6)
