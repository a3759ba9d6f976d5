"""Exact analysis of one Farkle turn, and the solitaire race to a target.

A turn's decision state after a set-aside is ``(tp, n)``: ``tp`` turn points (in units
of 50, :data:`dicelab.farkle.rules.POINT_UNIT`) and ``n`` dice to roll (6 after hot
dice). Every set-aside adds more than 0 points, so within a turn ``tp`` strictly grows:
evaluating a policy and optimising one are recursions over a DAG ordered by ``tp``,
with no iteration. The turn starts at ``(0, 6)`` with a forced roll.

Public functions (all take a :class:`~dicelab.farkle.rules.FarkleRules`):

* :func:`threshold_distribution` / :func:`evaluate_turn_policy`: the exact distribution
  of a turn's result (P(bust), P(bank = x) for every x) for a policy that depends only
  on ``(tp, n)``; ``threshold-T`` is the bank table ``tp >= T`` with "set aside all
  scoring dice".
* :func:`solve_max_ev`: the turn policy of maximum expected turn score, with a proven
  cap on ``tp`` above which banking is always at least as good (:func:`max_ev_cap`).
* :func:`solve_fastest`: the solitaire policy of fewest expected turns to reach a
  target, per starting total (the bust self-loop solved exactly per total).
* :func:`threshold_sweep`: exact expected turn score of ``threshold-T`` for a range
  of T, the best T and the gap to ``max-ev``.

Kernels are small ``@njit(cache=True)`` functions over the rule set's set-aside
encoding (:func:`~dicelab.farkle.rules.set_asides`) writing into ``out`` arrays; the
wrappers check input and allocate. Every solver that maximises looks at every distinct
legal set-aside of a roll (every pair of points and dice left).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from dicelab.config import FASTEST_TOL
from dicelab.errors import UserError
from dicelab.farkle.rules import (
    HOT_DICE,
    NO_BANK,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    check_points,
    check_target,
    set_asides,
)
from dicelab.resources import check_memory

# ---------------------------------------------------------------------------------
# Kernels: every one reads the set-aside encoding (dicelab.farkle.rules.SetAsideArrays)
# by classes of rolls; a class's options come sorted (more points, then more dice), so
# the first strict maximum of a value is the model's tie-break.


@njit(inline="always")
def _choose_option(rolls, c, p, value, pmax):
    """The option of class ``c`` at turn points ``p`` whose state has the highest
    ``value`` (rows clamped at ``pmax``); ties go to the first (more points, more dice)."""
    best_j = -1
    best_v = -np.inf
    for j in range(rolls.option_start[c], rolls.option_start[c + 1]):
        v = value[min(p + rolls.points[j], pmax), rolls.dice[j]]
        if v > best_v:
            best_j = j
            best_v = v
    return best_j


@njit(cache=True)
def _turn_distribution_kernel(rolls, bank, value, keep_all, mass, out_dist):
    """Forward propagation of probability mass through a turn; returns (P(bust), the
    mass that left the table).

    ``bank``/``value``: (Pb, 7), rows clamped at Pb - 1. ``keep_all``: set aside all
    scoring dice (threshold family) instead of choosing by ``value``. ``mass``: work
    array (Pd, 7), zeroed; ``out_dist[p]``: P(bank exactly p units), zeroed, length Pd.
    With Pd >= Pb + max roll + 1 no mass leaves unless the last row rolls with some dice
    (hot dice must-roll): then mass past Pd is counted as having left.
    """
    pb = bank.shape[0] - 1
    pd = mass.shape[0]
    mass[0, HOT_DICE] = 1.0
    bust = 0.0
    left = 0.0
    for p in range(pd):
        for n in range(1, 7):
            m = mass[p, n]
            if m == 0.0:
                continue
            if p > 0 and bank[min(p, pb), n] != 0:
                out_dist[p] += m
                continue
            bust += m * rolls.bust[n]
            for c in range(rolls.class_start[n], rolls.class_start[n + 1]):
                j = rolls.keep_all[c] if keep_all else _choose_option(rolls, c, p, value, pb)
                q = p + rolls.points[j]
                if q < pd:
                    mass[q, rolls.dice[j]] += m * rolls.class_prob[c]
                else:
                    left += m * rolls.class_prob[c]
    return bust, left


@njit(inline="always")
def _best_roll(rolls, n, p, value):
    """Expected ``value`` after rolling ``n`` dice at turn points ``p`` (a bust worth 0),
    choosing the best option of every roll."""
    acc = 0.0
    for c in range(rolls.class_start[n], rolls.class_start[n + 1]):
        best = 0.0
        for j in range(rolls.option_start[c], rolls.option_start[c + 1]):
            v = value[p + rolls.points[j], rolls.dice[j]]
            if v > best:
                best = v
        acc += rolls.class_prob[c] * best
    return acc


@njit(cache=True)
def _max_ev_kernel(rolls, cap, edge, offset, out_value, out_roll, out_bank):
    """Backward induction for max expected turn score; rows >= ``cap`` bank (``cap`` at
    least the rules' minimum to bank) where the rules allow, rows below bank only where
    the rules allow and it pays. A bank at ``p`` is worth ``p + offset`` (units; 0: the
    turn's points; ``-beta`` values a bust at ``beta`` instead of 0, shifting every value
    by ``-beta``), a bust 0.

    ``out_value[p, n]``: value in units of 50 at state (p, n) (row 0: the forced first
    roll); ``out_roll[p, n]``: value of rolling; ``out_bank[p, n]``: 1 = bank. Shapes
    (P, 7) with P >= cap + max roll units + 1, so every successor is in range. Where
    the rules forbid a bank at or past ``cap`` (6 dice under hot dice must-roll) the state
    rolls; its value is ``edge[p]`` where a roll would leave the table (``edge[p] >= 0``:
    a bound the caller brackets the true value with).
    """
    ptot = out_value.shape[0]
    top = ptot
    for j in range(rolls.points.size):
        top = min(top, ptot - rolls.points[j])  # rows from ptot - max points on: the edge
    for p in range(ptot - 1, cap - 1, -1):
        for n in range(1, 7):
            if p * POINT_UNIT >= rolls.bank_floor[n]:
                out_value[p, n] = p + offset
                out_roll[p, n] = -1.0  # not computed: banking is proven at least as good
                out_bank[p, n] = 1
            else:
                acc = edge[p] if p >= top else _best_roll(rolls, n, p, out_value)
                out_value[p, n] = acc
                out_roll[p, n] = acc
                out_bank[p, n] = 0
    for p in range(cap - 1, -1, -1):
        for n in range(1, 7):
            acc = _best_roll(rolls, n, p, out_value)
            out_roll[p, n] = acc
            if p * POINT_UNIT >= rolls.bank_floor[n] and p + offset >= acc:
                out_value[p, n] = p + offset
                out_bank[p, n] = 1
            else:
                out_value[p, n] = acc
                out_bank[p, n] = 0


@njit(cache=True)
def _gain_bound_kernel(rolls, out_w):
    """Upper bound W(n) on the expected points a turn can still add from n dice.

    W(n) = sum_r P(r) max_k (s + W(n')) over non-busting rolls ignores the loss of
    the turn points on a bust and the option to stop (both only lower the gain), so
    it bounds the expected points added by any continuation. Solved by value iteration
    from 0 (monotone increasing); the returned W is inflated by the contraction error
    bound so it stays an upper bound. Returns the number of iterations.
    """
    w = np.zeros(7)
    w_new = np.zeros(7)
    min_bust = 1.0
    for n in range(1, 7):
        min_bust = min(min_bust, rolls.bust[n])
    gamma = 1.0 - min_bust
    it = 0
    while True:
        it += 1
        delta = 0.0
        for n in range(1, 7):
            acc = 0.0
            for c in range(rolls.class_start[n], rolls.class_start[n + 1]):
                best = 0.0
                for j in range(rolls.option_start[c], rolls.option_start[c + 1]):
                    best = max(best, rolls.points[j] + w[rolls.dice[j]])
                acc += rolls.class_prob[c] * best
            w_new[n] = acc
            delta = max(delta, abs(acc - w[n]))
        for n in range(1, 7):
            w[n] = w_new[n]
        if delta <= 1e-12 * w[6] or it >= 100000:
            break
    slack = delta * gamma / (1.0 - gamma) if gamma < 1.0 else np.inf
    for n in range(1, 7):
        out_w[n] = w[n] + slack
    return it


@njit(cache=True)
def _finish_bust(rolls):
    """Under hot dice must-roll, a turn with six dice that banks as soon as it has fewer:
    the chance that it ends by a bust, not a bank. A roll with an option that leaves fewer
    dice banks, one whose every option is hot dice rolls again, so the chance is
    ``bust[6] / (1 - P(every option is hot dice))``."""
    only_hot = 0.0
    for c in range(rolls.class_start[HOT_DICE], rolls.class_start[HOT_DICE + 1]):
        every = True
        for j in range(rolls.option_start[c], rolls.option_start[c + 1]):
            every = every and rolls.dice[j] == HOT_DICE
        if every:
            only_hot += rolls.class_prob[c]
    return rolls.bust[HOT_DICE] / (1.0 - only_hot)


@njit(cache=True)
def _fastest_kernel(rolls, target, tol, out_turns, out_value, out_bank, out_iters, work_a,
                    work_b):
    """Fewest expected turns to reach ``target`` units, for every starting total.

    ``out_turns[m]``: expected turns from total m (length target + 1, out_turns[target]
    = 0); ``out_value[m, p, n]``: expected turns still needed at state (m, p, n) after a
    set-aside (row p = 0: the forced first roll, including the turn being played not
    counted); ``out_bank``: 1 = bank. Shapes (target, P, 7), P >= max(target, minimum to
    bank) + max roll + 1 (units).

    Within a turn the only unknown is E(m) itself (a bust leaves the total at m), so
    every value is linear, A + B * x with x = E(m). The optimal turn cost is concave
    piecewise linear in x, and x = 1 + A0 + B0 x is solved by Newton's method on it
    (= 1-D policy iteration), which ends in finitely many steps at the exact fixed
    point of the optimal policy.
    """
    ptot = out_value.shape[1]
    out_turns[target] = 0.0
    min_bank = rolls.bank_floor[1] // POINT_UNIT  # the same for n = 1..5
    # hot dice must-roll: at p >= reach with 6 dice the turn rolls; any roll with an
    # option that leaves fewer dice banks the finish (no turn more), a roll whose every
    # option is hot dice rolls again, a bust costs x: so its cost is x * hot_b, exactly
    must_roll = rolls.bank_floor[HOT_DICE] > rolls.bank_floor[1]
    hot_b = _finish_bust(rolls)
    for m in range(target - 1, -1, -1):
        # banking at p >= reach finishes the race; rows from `top` bank for sure
        reach = max(target - m, min_bank)
        x = out_turns[m + 1] + 1.0
        iters = 0
        while True:
            iters += 1
            for p in range(reach, ptot):
                for n in range(1, 7):
                    work_a[p, n] = 0.0
                    work_b[p, n] = hot_b if must_roll and n == HOT_DICE else 0.0
                    out_bank[m, p, n] = 0 if must_roll and n == HOT_DICE else 1
            for p in range(reach - 1, -1, -1):
                for n in range(1, 7):
                    ra = 0.0
                    rb = rolls.bust[n]
                    for c in range(rolls.class_start[n], rolls.class_start[n + 1]):
                        best_f = np.inf
                        best_a = 0.0
                        best_b = 0.0
                        for j in range(rolls.option_start[c], rolls.option_start[c + 1]):
                            a = work_a[p + rolls.points[j], rolls.dice[j]]
                            b = work_b[p + rolls.points[j], rolls.dice[j]]
                            f = a + b * x
                            if f < best_f:
                                best_f = f
                                best_a = a
                                best_b = b
                        ra += rolls.class_prob[c] * best_a
                        rb += rolls.class_prob[c] * best_b
                    bank_f = out_turns[min(m + p, target)]
                    if p * POINT_UNIT >= rolls.bank_floor[n] and bank_f <= ra + rb * x:
                        work_a[p, n] = bank_f
                        work_b[p, n] = 0.0
                        out_bank[m, p, n] = 1
                    else:
                        work_a[p, n] = ra
                        work_b[p, n] = rb
                        out_bank[m, p, n] = 0
            a0 = work_a[0, HOT_DICE]
            b0 = work_b[0, HOT_DICE]
            if b0 >= 1.0:  # cannot happen for x > 0 (banking beats certain busting)
                x = 2.0 * x + 1.0
                continue
            x_new = (1.0 + a0) / (1.0 - b0)
            done = abs(x_new - x) <= tol * x_new or (iters > 1 and x_new >= x) or iters >= 200
            x = x_new
            if done:
                break
        out_turns[m] = x
        out_iters[m] = iters
        for p in range(ptot):
            for n in range(1, 7):
                out_value[m, p, n] = work_a[p, n] + work_b[p, n] * x


@njit(cache=True)
def _fastest_penalty_sweep(rolls, pen, turns, out_value, out_bank):
    """One Gauss-Seidel sweep of ``fastest`` under the farkle penalty; returns the largest
    relative change.

    ``turns[s, m]``: expected turns to reach the top index ``T`` from index ``m`` with
    ``s`` lost turns in a row (``turns[:, T] = 0``); ``out_value[s, m, p, n]`` /
    ``out_bank``: the turn's expected turns still needed at (turn points p, n dice) and
    its decision. Totals fall from the top; at each the states are solved in the order
    ``s = 2, 1, 0``: a lost turn at ``s < 2`` passes to ``s + 1`` at the same total (solved
    just before), the third costs ``pen`` units (the floor, index 0, stops it), a lower
    total, read from the sweep before."""
    k, t = out_value.shape[0], out_value.shape[1]
    ptot = out_value.shape[2]
    min_bank = rolls.bank_floor[1] // POINT_UNIT
    # hot dice must-roll: six dice at p >= reach roll on until fewer dice bank the finish
    # (no turn more) or a bust costs beta (as in _fastest_kernel)
    must_roll = rolls.bank_floor[HOT_DICE] > rolls.bank_floor[1]
    hot_b = _finish_bust(rolls)
    worst = 0.0
    for m in range(t - 1, -1, -1):
        reach = max(t - m, min_bank)  # banking from here reaches the top index
        for s in range(k - 1, -1, -1):
            beta = turns[s + 1, m] if s < k - 1 else turns[0, max(m - pen, 0)]
            work = out_value[s, m]
            bank = out_bank[s, m]
            for p in range(reach, ptot):
                for n in range(1, 7):
                    six = must_roll and n == HOT_DICE
                    work[p, n] = hot_b * beta if six else 0.0
                    bank[p, n] = 0 if six else 1
            for p in range(reach - 1, -1, -1):
                for n in range(1, 7):
                    roll = rolls.bust[n] * beta
                    for c in range(rolls.class_start[n], rolls.class_start[n + 1]):
                        best = np.inf
                        for j in range(rolls.option_start[c], rolls.option_start[c + 1]):
                            best = min(best, work[p + rolls.points[j], rolls.dice[j]])
                        roll += rolls.class_prob[c] * best
                    bank_f = turns[0, m + p]
                    if p * POINT_UNIT >= rolls.bank_floor[n] and bank_f <= roll:
                        work[p, n] = bank_f
                        bank[p, n] = 1
                    else:
                        work[p, n] = roll
                        bank[p, n] = 0
            x = 1.0 + work[0, HOT_DICE]
            worst = max(worst, abs(x - turns[s, m]) / x)
            turns[s, m] = x
    return worst


# ---------------------------------------------------------------------------------
# Results

#: Turn totals whose tail probability P(bank >= x) every turn summary reports.
TAIL_POINTS = (300, 500, 1000, 2000, 3000)


@dataclass(frozen=True)
class TurnDistribution:
    """Exact distribution of one turn's result under a fixed policy.

    ``p_bank[i]``: probability of banking exactly ``i * 50`` points (index 0 is 0:
    a turn never banks 0); ``p_bust``: probability of losing the turn.
    """

    policy: str
    rules: str
    p_bust: float
    p_bank: np.ndarray
    #: hot dice must-roll: the chance that the turn is still rolling past the rows
    #: computed (at most :data:`MUST_ROLL_ERR`); 0 otherwise
    p_unresolved: float = 0.0

    @property
    def expected_score(self) -> float:
        """Expected points banked by the turn (a bust counts 0)."""
        return float(np.dot(self.p_bank, np.arange(self.p_bank.size))) * POINT_UNIT

    @property
    def sd(self) -> float:
        """Standard deviation of the points banked (a bust counts 0)."""
        x = np.arange(self.p_bank.size) * float(POINT_UNIT)
        mean = float(np.dot(self.p_bank, x))
        return math.sqrt(max(float(np.dot(self.p_bank, x * x)) - mean * mean, 0.0))

    def p_at_least(self, points: int) -> float:
        """P(bank >= points), for points > 0 (a bust banks nothing)."""
        i = max(-(-int(points) // POINT_UNIT), 1)
        if i >= self.p_bank.size:
            return 0.0
        # a running sum from the top keeps the tail monotone in ``points`` exactly
        return float(np.cumsum(self.p_bank[::-1])[::-1][i])

    def to_dict(self) -> dict:
        nz = np.nonzero(self.p_bank)[0]
        return {"policy": self.policy, "rules": self.rules,
                "expected_turn_score": self.expected_score, "turn_score_sd": self.sd,
                "p_bust": self.p_bust,
                "p_at_least": {str(x): self.p_at_least(x) for x in TAIL_POINTS},
                "p_bank": {int(i) * POINT_UNIT: float(self.p_bank[i]) for i in nz}}


def bank_runs(bank: np.ndarray) -> dict:
    """A bank table (P, 7) as data: per dice left, the first turn points at which it banks
    (``None``: never), and the runs of turn points with the same decisions (``lo``, ``hi``
    in points, ``hi`` None for the last run; ``bank`` per dice left 1..6).

    >>> bank_runs(threshold_bank_table(300))["bank_from"]["1"]
    300
    """
    rolls = np.nonzero((bank[1:, 1:] == 0).any(axis=1))[0]
    top = min(int(rolls[-1]) + 2 if rolls.size else 1, bank.shape[0] - 1)
    runs = []
    start = 1
    for p in range(2, top + 2):
        if p <= top and np.array_equal(bank[p, 1:], bank[start, 1:]):
            continue
        runs.append({"lo": start * POINT_UNIT, "hi": None if p > top else (p - 1) * POINT_UNIT,
                     "bank": [bool(bank[start, n]) for n in range(1, 7)]})
        start = p
    return {"bank_from": {str(n): t for n, t in _bank_thresholds(bank).items()},
            "runs": runs}


def _bank_thresholds(bank: np.ndarray, lo: int = 1) -> dict[int, int | None]:
    """Smallest turn points (in points) at which ``bank[p, n]`` is 1, per n = 1..6."""
    out: dict[int, int | None] = {}
    for n in range(1, 7):
        idx = np.nonzero(bank[lo:, n])[0]
        out[n] = int(idx[0] + lo) * POINT_UNIT if idx.size else None
    return out


@dataclass(frozen=True)
class MaxEvSolution:
    """The turn policy of maximum expected turn score.

    ``value[p, n]``/``bank[p, n]`` (shape (P, 7), p in units of 50, column 0 unused):
    expected final turn points (in points) at state (p*50, n) and the decision there;
    row 0 is the start of a turn (value = expected turn score, forced roll).
    ``cap``: turn points from which the DP banks (proven: see :func:`max_ev_cap`).
    """

    rules: str
    cap: int
    value: np.ndarray
    bank: np.ndarray
    roll_value: np.ndarray
    solve_s: float
    distribution: TurnDistribution = field(repr=False)
    #: a bound on the error of every value below the cap (points): 0 but under hot dice
    #: must-roll, where six dice past the cap roll on (see :func:`solve_max_ev`)
    value_error: float = 0.0

    @property
    def elapsed_s(self) -> float:
        """Time to obtain the solution (max-ev is never cached: its solve time)."""
        return self.solve_s

    from_cache = False

    @property
    def expected_score(self) -> float:
        """Maximum expected turn score, in points."""
        return float(self.value[0, 6])

    def bank_thresholds(self) -> dict[int, int | None]:
        """Smallest turn points at which max-ev banks, for n = 1..6 dice left."""
        return _bank_thresholds(self.bank)

    def is_threshold_policy(self) -> bool:
        """True if, for every n, max-ev banks at every turn total from its threshold up."""
        for n, t in self.bank_thresholds().items():
            if t is not None and not self.bank[t // POINT_UNIT:, n].all():
                return False
        return True

    def to_dict(self) -> dict:
        d = self.distribution
        return {"policy": "max-ev", "rules": self.rules,
                "expected_turn_score": self.expected_score, "cap": self.cap,
                "turn_score_sd": d.sd, "p_bust": d.p_bust,
                "p_at_least": {str(x): d.p_at_least(x) for x in TAIL_POINTS},
                "bank_thresholds": {str(n): t for n, t in self.bank_thresholds().items()},
                "threshold_policy": self.is_threshold_policy(),
                "solve_s": self.solve_s, "elapsed_s": self.elapsed_s,
                "from_cache": self.from_cache}


@dataclass(frozen=True)
class FastestSolution:
    """The solitaire policy of fewest expected turns to reach ``target``.

    ``turns[m]``: expected turns to reach the target from total ``m * 50`` (length
    target/50 + 1, last entry 0); ``value[m, p, n]``: expected turns still needed at
    state (turn points p*50, n dice) of a turn started at total m*50 (the current turn
    not counted); ``bank[m, p, n]``: 1 = bank. Shapes (target/50, P, 7).
    """

    rules: str
    target: int
    turns: np.ndarray
    value: np.ndarray
    bank: np.ndarray
    newton_steps: np.ndarray
    solve_s: float
    elapsed_s: float
    from_cache: bool = field(default=False)

    @property
    def expected_turns_to_target(self) -> float:
        """Expected turns to reach the target from 0."""
        return float(self.turns[0])

    def bank_thresholds(self, total: int) -> dict[int, int | None]:
        """Smallest turn points at which ``fastest`` banks at own total ``total``, per n."""
        if total < 0 or total >= self.target or total % POINT_UNIT:
            raise UserError(f"total must be a multiple of {POINT_UNIT} in 0..{self.target - 50}, "
                            f"not {total}")
        return _bank_thresholds(self.bank[total // POINT_UNIT])

    def bank_at(self, total: int) -> np.ndarray:
        """The bank decisions (P, 7) of a turn started at own total ``total``."""
        self.bank_thresholds(total)  # checks the total
        return self.bank[total // POINT_UNIT]

    def to_dict(self) -> dict:
        half = self.target // 2 // POINT_UNIT * POINT_UNIT
        totals = [t for t in (0, half, self.target - 1000, self.target - 500)
                  if 0 <= t < self.target]
        return {"policy": "fastest", "rules": self.rules, "target": self.target,
                "expected_turns_to_target": self.expected_turns_to_target,
                "bank_thresholds": {str(t): {str(n): v for n, v in
                                             self.bank_thresholds(t).items()}
                                    for t in dict.fromkeys(totals)},
                "solve_s": self.solve_s, "elapsed_s": self.elapsed_s,
                "from_cache": self.from_cache}


@dataclass(frozen=True)
class PenaltyFastestSolution(FastestSolution):
    """``fastest`` under the farkle penalty: one more state per total, the lost turns in a
    row ``s`` (0..2), and totals down to ``-floor_points``. Arrays are indexed
    ``[s, total // 50 + floor]``: ``turns`` (3, T + 1), ``value``/``bank`` (3, T, P, 7)
    with ``T = (target + floor_points) // 50``; ``newton_steps``: each sweep's largest
    relative change."""

    farkle_penalty: int = 0
    floor_points: int = 0

    def _index(self, total: int) -> int:
        if isinstance(total, bool) or not isinstance(total, int | np.integer) \
                or not -self.floor_points <= total < self.target or total % POINT_UNIT:
            raise UserError(f"total must be a multiple of {POINT_UNIT} in "
                            f"{-self.floor_points}..{self.target - 50}, not {total!r}")
        return (int(total) + self.floor_points) // POINT_UNIT

    def expected_turns_from(self, total: int, lost_in_a_row: int = 0) -> float:
        """Expected turns to reach the target from ``total`` after ``lost_in_a_row`` lost
        turns."""
        if not 0 <= lost_in_a_row < self.turns.shape[0]:
            raise UserError(f"lost turns in a row must be in 0..{self.turns.shape[0] - 1}")
        return float(self.turns[lost_in_a_row, self._index(total)])

    @property
    def expected_turns_to_target(self) -> float:
        return self.expected_turns_from(0)

    def bank_thresholds(self, total: int, lost_in_a_row: int = 0) -> dict[int, int | None]:
        return _bank_thresholds(self.bank_at(total, lost_in_a_row))

    def bank_at(self, total: int, lost_in_a_row: int = 0) -> np.ndarray:
        self.expected_turns_from(total, lost_in_a_row)  # checks both
        return self.bank[lost_in_a_row, self._index(total)]

    def to_dict(self) -> dict:
        return {**super().to_dict(), "farkle_penalty": self.farkle_penalty,
                "floor_points": self.floor_points, "sweeps": int(self.newton_steps.size),
                "bank_thresholds_by_lost_turns": {
                    str(k): {str(n): v for n, v in self.bank_thresholds(0, k).items()}
                    for k in range(self.turns.shape[0])}}


def solve_fastest_penalty(rules: FarkleRules, target: int = 10_000, *,
                          floor_points: int | None = None, tol: float = 1e-13,
                          max_sweeps: int = 500) -> PenaltyFastestSolution:
    """``fastest`` under the farkle penalty (:class:`PenaltyFastestSolution`).

    Gauss-Seidel sweeps over the totals from the top (:func:`_fastest_penalty_sweep`),
    starting from ``fastest`` without the penalty, until no expected number of turns
    moves by more than ``tol`` relative. Totals are indexed from a floor below zero as in
    :mod:`dicelab.farkle.penalty_game` (a penalty stops there).
    """
    from dicelab.farkle.penalty_game import K

    rules.require_solvable("fastest", must_roll=True, penalty=True)
    if not rules.farkle_penalty:
        raise UserError(f"rules '{rules.name}' have no farkle penalty; use solve_fastest")
    target = check_target(target)
    floor = rules.penalty_floor(floor_points)
    sa = set_asides(rules)
    big_t = target // POINT_UNIT + floor
    ptot = max(big_t, rules.min_bank // POINT_UNIT) + sa.max_points + 1
    check_memory(f"fastest to {target:,} with the farkle penalty", K * big_t * ptot * 7 * 9)
    t0 = time.perf_counter()
    free = solve_fastest(dataclasses.replace(rules, farkle_penalty=0), big_t * POINT_UNIT)
    turns = np.repeat(free.turns[None], K, axis=0)  # the start: no penalty
    value = np.zeros((K, big_t, ptot, 7))
    bank = np.zeros((K, big_t, ptot, 7), dtype=np.uint8)
    changes: list[float] = []
    rolls, pen = sa.arrays(), rules.farkle_penalty // POINT_UNIT
    while not changes or changes[-1] > tol:
        if len(changes) >= max_sweeps:
            raise UserError(f"fastest with the farkle penalty did not settle in {max_sweeps} "
                            f"sweeps (last change {changes[-1]:.1e})")
        changes.append(_fastest_penalty_sweep(rolls, pen, turns, value, bank))
    secs = time.perf_counter() - t0
    return PenaltyFastestSolution(rules.name, target, turns, value, bank, np.array(changes),
                                  secs, secs, farkle_penalty=rules.farkle_penalty,
                                  floor_points=floor * POINT_UNIT)


# ---------------------------------------------------------------------------------
# Wrappers


def evaluate_turn_policy(rules: FarkleRules, bank: np.ndarray,
                         value: np.ndarray | None = None, *, name: str = "policy"
                         ) -> TurnDistribution:
    """Exact result distribution of a turn policy that depends only on (tp, n).

    ``bank``: (P, 7) array, nonzero = bank at turn points p*50 with n dice to roll; rows
    are clamped at P - 1, whose row must bank for every n. Set-asides: with ``value``
    None, all scoring dice (the threshold rule); else ``value`` (P, 7), higher is
    better, chooses among the legal sizes exactly as the simulation kernel does
    (ties to more points, then more dice).

    >>> import numpy as np
    >>> from dicelab.farkle.rules import PRESETS
    >>> b = np.zeros((7, 7), np.uint8); b[6:] = 1     # threshold-300
    >>> round(evaluate_turn_policy(PRESETS["default"], b).expected_score, 1) > 0
    True
    """
    # one turn: the farkle penalty acts between turns, not within one
    rules.require_solvable("an exact turn evaluation", must_roll=True, penalty=True)
    sa = set_asides(rules)
    bank = np.ascontiguousarray(bank, dtype=np.uint8)
    if bank.ndim != 2 or bank.shape[1] != 7 or bank.shape[0] < 2:
        raise ValueError("bank must have shape (P, 7) with P >= 2")
    if not bank[-1, 1:][sa.bank_floor[1:] < NO_BANK].all():
        raise ValueError("the last row of bank must bank with every number of dice the "
                         "rules let bank")
    bank = legal_bank(rules, bank)
    keep_all = value is None
    if keep_all:
        val = np.zeros(bank.shape, dtype=np.float64)
    else:
        val = np.ascontiguousarray(value, dtype=np.float64)
        if val.shape[1:] != bank.shape[1:] or val.shape[0] > bank.shape[0]:
            raise ValueError("value must have the shape of bank")
        val = np.ascontiguousarray(np.concatenate(
            [val, np.repeat(val[-1:], bank.shape[0] - val.shape[0], axis=0)]))
    pd = bank.shape[0] + sa.max_points + 1 + must_roll_rows(rules)
    mass = np.zeros((pd, 7))
    dist = np.zeros(pd)
    bust, left = _turn_distribution_kernel(sa.arrays(), bank, val, keep_all, mass, dist)
    return TurnDistribution(name, rules.name, float(bust), dist, float(left))


#: Under hot dice must-roll, the most probability a turn may still be rolling past the
#: rows the solvers and evaluations hold (see :func:`must_roll_rows`).
MUST_ROLL_ERR = 2.0**-56


def hot_dice_chance(rules: FarkleRules) -> float:
    """The chance that a roll of six dice lets all six be set aside (hot dice again)."""
    sa = set_asides(rules)
    c0, c1 = sa.class_start[HOT_DICE], sa.class_start[HOT_DICE + 1]
    return float(sum(sa.class_prob[c] for c in range(c0, c1)
                     if (sa.dice[sa.option_start[c]:sa.option_start[c + 1]] == HOT_DICE).any()))


def must_roll_rows(rules: FarkleRules) -> int:
    """Rows (units of 50) past a solver's banking region that hot dice must-roll needs (0
    under may-bank). Past that region every state with fewer than six dice banks, so a turn
    climbs only by hot dice, each with at most :func:`hot_dice_chance` ``h`` and at most the
    most points of a roll; K such rolls, with h^(K - 1) <= :data:`MUST_ROLL_ERR`, bound
    the chance of climbing past the rows returned, K times the most points of a roll."""
    if rules.hot_dice != "must-roll":
        return 0
    h = hot_dice_chance(rules)
    k = 2 if h <= 0.0 else math.ceil(math.log(MUST_ROLL_ERR) / math.log(h)) + 1
    return k * set_asides(rules).max_points


def legal_bank(rules: FarkleRules, bank: np.ndarray) -> np.ndarray:
    """A bank table (..., P, 7) as the rules let it play: no bank below the minimum to
    bank (rows added up to that row, copies of the last, so the last row still banks)."""
    floor = np.array(rules.bank_floor)
    rows = max(bank.shape[-2], rules.min_bank // POINT_UNIT + 1)
    out = np.concatenate([bank, np.repeat(bank[..., -1:, :], rows - bank.shape[-2], axis=-2)],
                         axis=-2)
    out[..., np.arange(rows)[:, None] * POINT_UNIT < floor[None, :]] = 0
    return np.ascontiguousarray(out, dtype=np.uint8)


def threshold_bank_table(threshold: int) -> np.ndarray:
    """Bank table (T/50 + 1, 7) of ``threshold-T``: bank as soon as tp >= T."""
    t = check_points("threshold", threshold) // POINT_UNIT
    bank = np.zeros((t + 1, 7), dtype=np.uint8)
    bank[t:, 1:] = 1
    return bank


def threshold_distribution(rules: FarkleRules, threshold: int) -> TurnDistribution:
    """Exact turn distribution of ``threshold-T`` (set aside all scoring dice).

    >>> from dicelab.farkle.rules import PRESETS
    >>> d = threshold_distribution(PRESETS["default"], 300)
    >>> round(float(d.p_bust), 4), bool(abs(d.p_bust + d.p_bank.sum() - 1) < 1e-12)
    (0.1958, True)
    """
    return evaluate_turn_policy(rules, threshold_bank_table(threshold),
                                name=f"threshold-{int(threshold)}")


def race_with_penalty(rules: FarkleRules, target: int, turn: TurnDistribution,
                      tol: float = 1e-13, max_sweeps: int = 200) -> np.ndarray:
    """Expected turns to reach ``target`` solitaire under the farkle penalty, every turn
    played as ``turn`` (a policy that ignores the total, e.g. ``threshold-T``).

    Returns ``turns`` (3, F + T + 1): ``turns[s, u]`` from total ``u - F`` units with
    ``s`` lost turns in a row (``F`` = :meth:`FarkleRules.penalty_floor`; a penalty stops
    at ``-F``); ``turns[:, F + T]`` = 0. With ``B(u) = 1 + sum_g P(bank g) E(u + g, 0)``
    and ``q`` = P(bust): ``E(u, s) = B(u) + q E(u, s + 1)`` and ``E(u, 2) = B(u) + q
    E(u - penalty, 0)``. Going down from the target every term is known but the last,
    read from the sweep before (Gauss-Seidel, contraction ``q ** 3``), until no value
    moves by more than ``tol`` (relative)."""
    t = check_target(target) // POINT_UNIT
    floor = rules.penalty_floor()
    pen = rules.farkle_penalty // POINT_UNIT
    big = floor + t
    q = float(turn.p_bust)
    if q >= 1.0:
        raise UserError("a turn that always busts never reaches the target")
    gains = np.asarray(turn.p_bank, dtype=np.float64)
    e0 = np.zeros(big + 1)  # E(u, 0); e0[big] = 0 (reached)
    turns = np.zeros((PENALTY_STREAK, big + 1))
    for _ in range(max_sweeps):
        moved = 0.0
        for u in range(big - 1, -1, -1):
            after = e0[np.minimum(u + np.arange(1, gains.size), big)]
            b = 1.0 + float(np.dot(gains[1:], after))
            e2 = b + q * e0[max(u - pen, 0)]
            e1 = b + q * e2
            new = b + q * e1
            moved = max(moved, abs(new - e0[u]) / new)
            e0[u] = new
            turns[:, u] = (new, e1, e2)
        if moved <= tol:
            return turns
    raise UserError(f"the race with the farkle penalty did not settle in {max_sweeps} sweeps")


def gain_bound(rules: FarkleRules) -> np.ndarray:
    """W[n] (n = 1..6, points): an upper bound on the expected points any continuation
    of a turn can add when about to roll n dice (see :func:`max_ev_cap`)."""
    sa = set_asides(rules)
    w = np.zeros(7)
    _gain_bound_kernel(sa.arrays(), w)
    return w * POINT_UNIT


def max_ev_cap(rules: FarkleRules) -> int:
    """Turn points from which banking is provably at least as good as rolling, any n.

    Proof: from (tp, n) a continuation that rolls busts with probability >= bust[n] on
    its first roll (losing tp) and adds expected points <= W(n) (:func:`gain_bound`), so
    its expected result is <= tp + W(n) - bust[n] * tp <= tp once tp >= W(n) / bust[n].
    The cap is the largest such bound over n, rounded up to a multiple of 50.
    """
    sa = set_asides(rules)
    w = gain_bound(rules)
    bound = 0.0
    for n in range(1, 7):
        if sa.bust[n] <= 0.0:
            raise UserError(f"rules '{rules.name}': a roll of {n} dice can never bust, "
                            "so a turn can go on forever; max-ev is not defined")
        bound = max(bound, w[n] / sa.bust[n])
    return (math.ceil(bound * (1 + 1e-9) / POINT_UNIT) + 1) * POINT_UNIT


def solve_max_ev(rules: FarkleRules, cap: int | None = None) -> MaxEvSolution:
    """The turn policy of maximum expected turn score (``max-ev``).

    ``cap`` (points): the DP banks at every turn total >= cap. ``None`` uses the
    proven cap of :func:`max_ev_cap`, which makes the result exact; a smaller cap
    gives the best policy among those forced to bank from ``cap`` on. A minimum to bank
    (``rules.min_bank``) is honoured: below it the turn must roll.

    >>> from dicelab.farkle.rules import PRESETS
    >>> sol = solve_max_ev(PRESETS["default"])
    >>> sol.expected_score > 500
    True
    """
    rules.require_solvable("max-ev", must_roll=True)
    sa = set_asides(rules)
    cap = max_ev_cap(rules) if cap is None else check_points("cap", cap)
    cap = max(cap, rules.min_bank)  # from the minimum to bank on, the proof holds as is
    c = cap // POINT_UNIT
    ptot = c + must_roll_rows(rules) + sa.max_points + 1
    t0 = time.perf_counter()
    value = np.zeros((ptot, 7))
    roll = np.zeros((ptot, 7))
    bank = np.zeros((ptot, 7), dtype=np.uint8)
    # under must-roll, six dice past the cap roll on; where a roll leaves the table the
    # value is bracketed by 0 and p + W(6) (gain_bound): the lower run is the solution and
    # the largest gap between the runs below the cap is its error bound
    _max_ev_kernel(sa.arrays(), c, np.zeros(ptot), 0.0, value, roll, bank)
    error = 0.0
    if rules.hot_dice == "must-roll":
        hi = np.zeros((ptot, 7))
        w6 = gain_bound(rules)[HOT_DICE] / POINT_UNIT
        _max_ev_kernel(sa.arrays(), c, np.arange(ptot) + w6, 0.0, hi, np.zeros((ptot, 7)),
                       np.zeros((ptot, 7), dtype=np.uint8))
        error = float(np.abs(hi[:c + 1] - value[:c + 1]).max()) * POINT_UNIT
    secs = time.perf_counter() - t0
    value *= POINT_UNIT
    return MaxEvSolution(rules.name, cap, value, bank, roll * POINT_UNIT, secs,
                         evaluate_turn_policy(rules, bank, value, name="max-ev"),
                         value_error=error)


@dataclass(frozen=True)
class PenaltyMaxEvSolution:
    """``max-ev`` under the farkle penalty: one turn policy per number of turns lost in a
    row before this one (``s`` = 0, 1, 2), maximising the long-run average points per
    turn (the penalty counted when it falls), from the average-reward equations
    ``g + h[s] = max over turn policies of E[points banked] + P(bust) beta[s]`` with
    ``beta[s] = h[s + 1]`` for ``s < 2``, ``beta[2] = -penalty`` and ``h[0] = 0``.

    ``rate``: g, points per turn in the long run; ``bias``: h (points); ``streak[s]``:
    the turn policy at ``s`` as a :class:`MaxEvSolution` whose values count a bust as
    ``beta[s]``; ``stationary``: the long-run share of turns started at each ``s`` under
    these policies; ``rate_check``: the rate recomputed from the policies' exact turn
    distributions and ``stationary`` (an independent evaluation of the same policies).
    """

    rules: str
    penalty: int
    rate: float
    bias: np.ndarray
    streak: tuple[MaxEvSolution, ...]
    stationary: np.ndarray
    rate_check: float
    iterations: int
    solve_s: float
    #: a bound on the error of ``rate`` and ``bias`` (points): 0 but under hot dice
    #: must-roll, where six dice past the cap roll on (each turn DP bracketed as in
    #: :func:`solve_max_ev`, its gap carried through the average-reward equations)
    value_error: float = 0.0
    from_cache = False

    @property
    def elapsed_s(self) -> float:
        return self.solve_s

    def bank_thresholds(self) -> dict[int, dict[int, int | None]]:
        """Per ``s``: the smallest turn points at which the policy banks, by dice left."""
        return {s: sol.bank_thresholds() for s, sol in enumerate(self.streak)}

    def to_dict(self) -> dict:
        return {"policy": "max-ev", "rules": self.rules, "farkle_penalty": self.penalty,
                "points_per_turn": self.rate, "points_per_turn_check": self.rate_check,
                "bias": [float(x) for x in self.bias],
                "stationary": [float(x) for x in self.stationary],
                "p_bust": [float(sol.distribution.p_bust) for sol in self.streak],
                "expected_banked": [float(sol.distribution.expected_score)
                                    for sol in self.streak],
                "bank_thresholds": {str(s): {str(n): t for n, t in th.items()}
                                    for s, th in self.bank_thresholds().items()},
                "iterations": self.iterations, "value_error": self.value_error,
                "solve_s": self.solve_s}


def solve_max_ev_penalty(rules: FarkleRules, cap: int | None = None, tol: float = 1e-12,
                         max_iterations: int = 1000) -> PenaltyMaxEvSolution:
    """``max-ev`` under ``rules.farkle_penalty`` (see :class:`PenaltyMaxEvSolution`).

    Each turn DP is :func:`solve_max_ev`'s with a bust worth ``beta`` (every value shifted
    by ``-beta >= 0``; the proven cap still holds). ``g`` is the only unknown once
    ``beta[2] = -penalty`` is fixed: ``g -> E_0(h1(g))`` with ``h2 = E_2 - g``, ``h1 =
    E_1(h2) - g`` contracts (its slope is at most P(bust at 0) (1 + P(bust at 1)) < 1), and
    is iterated until ``g`` moves by less than ``tol`` points. ``cap`` as in
    :func:`solve_max_ev` (None: the proven cap, exact).

    >>> from dicelab.farkle.rules import PRESETS
    >>> sol = solve_max_ev_penalty(PRESETS["facebook"])
    >>> bool(abs(sol.rate - sol.rate_check) < 1e-9)
    True
    """
    if not rules.farkle_penalty:
        raise UserError(f"rules '{rules.name}' have no farkle penalty: use solve_max_ev")
    sa = set_asides(rules)
    cap = max(max_ev_cap(rules) if cap is None else check_points("cap", cap), rules.min_bank)
    c = cap // POINT_UNIT
    ptot = c + must_roll_rows(rules) + sa.max_points + 1
    t0 = time.perf_counter()
    rolls = sa.arrays()
    must_roll = rules.hot_dice == "must-roll"
    w6 = gain_bound(rules)[HOT_DICE] / POINT_UNIT if must_roll else 0.0

    def turn(beta: float, bracket: bool = False
             ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
        """(value of the turn in points with a bust worth beta, value, roll, bank, error
        bound in points: under must-roll with ``bracket``, the gap to the upper run)."""
        offset = -beta / POINT_UNIT
        if offset < 0:
            raise UserError("a lost turn cannot be worth more than banking nothing")
        value, roll = np.zeros((ptot, 7)), np.zeros((ptot, 7))
        bank = np.zeros((ptot, 7), dtype=np.uint8)
        # under must-roll, six dice past the cap roll on; where a roll leaves the table
        # the (shifted) value is bracketed by 0 and p + offset + W(6), as in solve_max_ev
        _max_ev_kernel(rolls, c, np.zeros(ptot), offset, value, roll, bank)
        error = 0.0
        if must_roll and bracket:
            hi = np.zeros((ptot, 7))
            _max_ev_kernel(rolls, c, np.arange(ptot) + offset + w6, offset, hi,
                           np.zeros((ptot, 7)), np.zeros((ptot, 7), dtype=np.uint8))
            error = float(np.abs(hi[:c + 1] - value[:c + 1]).max()) * POINT_UNIT
        return (float(value[0, 6]) - offset) * POINT_UNIT, value, roll, bank, error

    pen = float(rules.farkle_penalty)
    e2 = turn(-pen)[0]
    plain = dataclasses.replace(rules, farkle_penalty=0)  # one turn: the same as without
    g = float(solve_max_ev(plain, cap).expected_score)
    iterations, moved = 0, np.inf
    while moved >= tol:
        if iterations == max_iterations:
            raise UserError(f"max-ev with the farkle penalty did not settle in "
                            f"{max_iterations} iterations")
        iterations += 1
        g_new = turn(turn(e2 - g)[0] - g)[0]
        moved, g = abs(g_new - g), g_new
    h2 = e2 - g
    h1 = turn(h2)[0] - g
    betas = (h1, h2, -pen)
    streak, errors = [], []
    for beta in betas:
        _, value, roll, bank, error = turn(beta, bracket=True)
        offset = -beta / POINT_UNIT
        value = (value - offset) * POINT_UNIT
        roll = np.where(roll >= 0, (roll - offset) * POINT_UNIT, roll)
        streak.append(MaxEvSolution(rules.name, cap, value, bank, roll, 0.0,
                                    evaluate_turn_policy(plain, bank, value, name="max-ev"),
                                    value_error=error))
        errors.append(error)
    # the same policies evaluated from their exact turn distributions: the chain of
    # lost turns in a row (a bank returns to 0, a loss moves on, the third to 0)
    q = np.array([sol.distribution.p_bust for sol in streak])
    share = np.array([1.0, q[0], q[0] * q[1]])
    share /= share.sum()
    rate = sum(share[s] * (sol.distribution.expected_score - (pen * q[s] if s == 2 else 0))
               for s, sol in enumerate(streak))
    # each turn value is off by at most eps, moving with its bust value at the slope
    # P(bust): g's map is off by eps (1 + q0 + q0 q1) and contracts by q0 (1 + q1)
    eps = max(errors)
    e_g = eps * (1.0 + q[0] + q[0] * q[1]) / (1.0 - q[0] * (1.0 + q[1]))
    e_h2 = eps + e_g
    e_h1 = eps + q[1] * e_h2 + e_g
    return PenaltyMaxEvSolution(rules.name, rules.farkle_penalty, g, np.array([0.0, h1, h2]),
                                tuple(streak), share, float(rate), iterations,
                                time.perf_counter() - t0,
                                value_error=float(max(e_g, e_h1, e_h2)))


def solve_fastest(rules: FarkleRules, target: int = 10_000, *, tol: float = FASTEST_TOL
                  ) -> FastestSolution:
    """The solitaire policy of fewest expected turns to reach ``target`` (``fastest``).

    Totals are solved from the top down; at each total the bust self-loop is solved
    exactly by Newton steps on the (concave, piecewise-linear) turn cost, stopping when
    the policy repeats or the relative change is below ``tol``.

    >>> from dicelab.farkle.rules import PRESETS
    >>> sol = solve_fastest(PRESETS["default"], 1000)
    >>> 1 < sol.expected_turns_to_target < 10
    True
    """
    rules.require_solvable("fastest", must_roll=True)
    sa = set_asides(rules)
    t = check_target(target) // POINT_UNIT
    ptot = max(t, rules.min_bank // POINT_UNIT) + sa.max_points + 1
    check_memory(f"fastest to {target:,} (its value and bank tables)", t * ptot * 7 * 9)
    t0 = time.perf_counter()
    turns = np.zeros(t + 1)
    value = np.zeros((t, ptot, 7))
    bank = np.zeros((t, ptot, 7), dtype=np.uint8)
    iters = np.zeros(t, dtype=np.int64)
    wa = np.zeros((ptot, 7))
    wb = np.zeros((ptot, 7))
    _fastest_kernel(sa.arrays(), t, tol, turns, value, bank, iters, wa, wb)
    secs = time.perf_counter() - t0
    return FastestSolution(rules.name, int(target), turns, value, bank, iters, secs, secs)


@dataclass(frozen=True)
class ThresholdSweep:
    """Exact expected turn score of ``threshold-T`` for each T in ``thresholds``."""

    rules: str
    thresholds: np.ndarray  # int64, points
    expected_score: np.ndarray  # float64, points
    p_bust: np.ndarray  # float64
    max_ev: float

    @property
    def best_threshold(self) -> int:
        """The T of highest expected turn score (the smallest one if several tie)."""
        return int(self.thresholds[int(np.argmax(self.expected_score))])

    @property
    def best_score(self) -> float:
        return float(self.expected_score.max())

    def gap_to_max_ev(self) -> np.ndarray:
        """max-ev's expected turn score minus each threshold's (points, >= 0)."""
        return self.max_ev - self.expected_score

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"threshold": self.thresholds,
                             "expected_turn_score": self.expected_score,
                             "p_bust": self.p_bust,
                             "gap_to_max_ev": self.gap_to_max_ev()})

    def to_dict(self) -> dict:
        return {"rules": self.rules, "best_threshold": self.best_threshold,
                "best_expected_turn_score": self.best_score,
                "max_ev_expected_turn_score": self.max_ev,
                "gap_of_best_to_max_ev": self.max_ev - self.best_score}


def threshold_sweep(rules: FarkleRules, thresholds=range(50, 2001, 50)) -> ThresholdSweep:
    """Exact expected turn score of every ``threshold-T`` in ``thresholds`` (points).

    >>> from dicelab.farkle.rules import PRESETS
    >>> sw = threshold_sweep(PRESETS["default"], range(50, 1001, 50))
    >>> sw.best_score <= sw.max_ev
    True
    """
    ts = np.array([check_points("threshold", int(t)) for t in thresholds], dtype=np.int64)
    if ts.size == 0:
        raise UserError("threshold sweep needs at least one threshold")
    scores = np.empty(ts.size)
    busts = np.empty(ts.size)
    for i, t in enumerate(ts):
        d = threshold_distribution(rules, int(t))
        scores[i] = d.expected_score
        busts[i] = d.p_bust
    return ThresholdSweep(rules.name, ts, scores, busts, solve_max_ev(rules).expected_score)


def evaluate_race(rules: FarkleRules, target: int, bank: np.ndarray,
                  value: np.ndarray | None = None) -> np.ndarray:
    """Expected turns to reach ``target`` solitaire, for a policy given per own total.

    ``bank`` (and ``value``, as in :func:`evaluate_turn_policy`): shape (M, P, 7) with
    M = target/50 (row m is used at own total m*50), or (P, 7) for a policy that
    ignores the total (e.g. :func:`threshold_bank_table`). Returns ``turns`` of length
    M + 1 (``turns[m]`` from total m*50; ``turns[M]`` = 0). Each total's turn result
    distribution comes from the forward kernel, then E(m) = (1 + sum_p P(bank p)
    E(m + p)) / (1 - P(bust)), solved from the top down: an evaluation independent of
    the backward solver of :func:`solve_fastest`.

    >>> from dicelab.farkle.rules import PRESETS
    >>> e = evaluate_race(PRESETS["default"], 1000, threshold_bank_table(300))
    >>> round(float(e[0]), 3)  # expected turns from 0 when banking at 300 or more
    2.837
    """
    t = check_target(target) // POINT_UNIT
    check_memory(f"the race to {target:,}", 8 * (t + 1) * 2)
    bank = np.asarray(bank)
    same = bank.ndim == 2  # one turn policy at every total: one distribution
    if same:
        bank = np.broadcast_to(bank, (t, *bank.shape))
        if value is not None:
            value = np.broadcast_to(np.asarray(value), bank.shape)
    if bank.ndim != 3 or bank.shape[0] != t:
        raise ValueError(f"bank must have shape ({t}, P, 7) or (P, 7)")
    turns = np.zeros(t + 1)
    d = None
    for m in range(t - 1, -1, -1):
        if d is None or not same:
            d = evaluate_turn_policy(rules, bank[m], None if value is None else value[m])
        if d.p_bust >= 1.0:
            turns[m] = np.inf
            continue
        after = turns[np.minimum(m + np.arange(d.p_bank.size), t)]
        turns[m] = (1.0 + float(np.dot(d.p_bank[1:], after[1:]))) / (1.0 - d.p_bust)
    return turns
