"""Two-player Farkle with the farkle penalty, solved: ``optimal-win`` when the third lost
turn in a row costs points (the ``facebook`` preset).

The penalty makes the game's state at a turn's start (my total, the other's total, my
lost turns in a row, the other's), and lets totals fall below zero. The solve follows
:mod:`dicelab.farkle.two_player` (one optimal turn DP per state, the same kernel, the same
bank values and caps) with two changes.

* **Totals below zero** are indexed from a floor: index ``u = total / 50 + floor`` with
  ``floor`` units (``config.PENALTY_FLOOR_POINTS``) below zero; a penalty that would go
  below the floor stops at it. A player that far below zero has lost three turns in a row
  at least ``floor / penalty`` times more often than banked, whose chance from ``0 : 0``
  is tiny; the tests show the value does not move when the floor is lowered.
* **Cycles.** A bank raises the sum of the totals by at least the minimum to bank; a lost
  turn passes the turn at the same totals with the loser's count one higher; the third
  one lowers the sum by the penalty and restarts the count. Within one pair of totals
  ``{(a, b), (b, a)}`` the lost turns form a chain of increasing counts (no cycle), so,
  given the states reached by a bank (larger sums, solved before) and by a penalty
  (smaller sums), each of the 18 states of a pair needs exactly one turn DP, in
  decreasing order of the two counts' sum. The penalty's targets are not solved yet when
  a pair is (their sum is smaller), so the whole game is solved by Gauss-Seidel sweeps
  over all pairs in decreasing order of the sum, each reading the penalty's targets from
  the sweep before, until no value moves by more than ``config.PENALTY_SWEEP_TOL``.
  Values start at 0.5.

Error: the sweeps contract (a penalty passes an error on with at most the chance that the
game reaches a penalty, times the error), so after a sweep whose largest change is ``d``
and whose ratio to the change before is ``rho < 1``, the error is at most about
``d * rho / (1 - rho)``, reported as the solution's ``tolerance`` (an estimate from the
observed contraction, not a proof; the tests compare with a plain value iteration).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit, prange

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    SetAsides,
)
from dicelab.farkle.two_player import (
    Solved,
    _cap_row,
    _last_round,
    _turn,
    _turn_kernel,
    _work,
)

#: Lost turns in a row counted (0 .. PENALTY_STREAK - 1).
K = PENALTY_STREAK


def floor_units(rules: FarkleRules, floor_points: int | None = None) -> int:
    """Units of 50 below zero that totals may reach (at least two penalties)."""
    pts = config.PENALTY_FLOOR_POINTS if floor_points is None else floor_points
    return max(pts, 2 * rules.farkle_penalty) // POINT_UNIT


@njit(inline="always")
def _roll(base, n, beta, rolls, oflat, v):
    """Value of rolling ``n`` dice at the flat row offset ``base``: every roll's best
    set-aside (each distinct (points, dice left) of the roll), a bust worth ``beta``."""
    goff, gprob, ooff = rolls.class_start, rolls.class_prob, rolls.option_start
    rv = rolls.bust[n] * beta
    for g in range(goff[n], goff[n + 1]):
        best = v[base + oflat[ooff[g]]]
        for j in range(ooff[g] + 1, ooff[g + 1]):
            c = v[base + oflat[j]]
            if c > best:
                best = c
        rv += gprob[g] * best
    return rv


@njit(cache=True)
def _turn_value(a, b, beta, turn, rolls, bank, catch, v):
    """The value of the optimal turn from ``(a, b)`` with bust value ``beta``: the turn
    DP of :func:`dicelab.farkle.two_player._turn_kernel` (same caps, same bank values,
    may-bank hot dice) keeping the values only. ``bank[y, m]``: the other's value after a
    bank at ``m < t``; ``v``: scratch of at least ``(top + max points) * 7``. Returns
    (value, cap row)."""
    t, max_s, oflat = turn.t, turn.max_s, turn.oflat
    c_val = catch.value
    width = c_val.shape[1]
    top = _cap_row(a, b, beta, turn, rolls, catch.cap)[0]
    for i in range(top + max_s - 1, 0, -1):
        m = a + i
        bv = 1.0 - (bank[b, m] if m < t else c_val[b, min(m - b, width - 1)])
        base = i * 7
        if i >= top:
            for n in range(1, 7):
                v[base + n] = bv
            continue
        for n in range(1, 7):
            rv = _roll(base, n, beta, rolls, oflat, v)
            v[base + n] = rv if (i * POINT_UNIT < rolls.bank_floor[n] or rv > bv) else bv
    return _roll(0, 6, beta, rolls, oflat, v), top


@njit(parallel=True, cache=True)
def _sweep_kernel(diag, turn, rolls, vv, vw, vt, catch, rows_max, pen, outcomes, change,
                  dps, states):
    """One Gauss-Seidel pass over the pairs with ``a + b == diag`` (in parallel).

    ``vv[s, r, x, y]``: value of the player to move at index ``x`` with ``s`` lost turns in
    a row, against ``y`` with ``r``; ``vw``/``vt`` P(win) / P(tie). Writes the 18 states of
    each pair, ``change[a, b]`` (the largest change) and ``states[a, b]`` (turn-DP states:
    decision points below the caps with 1..6 dice, and the turn starts). ``outcomes``:
    also carry P(win) and P(tie) (the full turn DP); else values only (the lean one)."""
    t = turn.t
    a_lo = (diag + 1) // 2
    a_hi = min(diag, t - 1)
    for q in prange(a_hi - a_lo + 1):
        a = a_lo + q
        b = diag - a
        work = _work(rows_max if outcomes else 1)
        v = np.empty(rows_max * 7)
        moved = 0.0
        n_dp = 0
        n_states = 0
        for k in range(2 * (K - 1), -1, -1):  # the counts' sum, highest first
            for sm in range(max(0, k - (K - 1)), min(K - 1, k) + 1):
                so = k - sm
                for side in range(2):
                    if side == 0:
                        x = a
                        y = b
                    else:
                        if a == b:
                            break
                        x = b
                        y = a
                    if sm < K - 1:  # a lost turn: the other moves, my count one higher
                        c, bx, by = so, sm + 1, x
                    else:  # the K-th: the penalty, and my count starts again
                        c, bx, by = so, 0, max(x - pen, 0)
                    beta = 1.0 - vv[c, bx, y, by]
                    # a bank: the other moves with its count, mine is 0
                    n_dp += 1
                    if not outcomes:
                        val, top = _turn_value(x, y, beta, turn, rolls, vv[so, 0], catch, v)
                        n_states += (top - 1) * 6 + 1
                        moved = max(moved, abs(val - vv[sm, so, x, y]))
                        vv[sm, so, x, y] = val
                        continue
                    ow = vw[c, bx, y, by]
                    ot = vt[c, bx, y, by]
                    res = _turn_kernel(x, y, beta, turn, rolls,
                                       Solved(vv[so, 0], vw[so, 0], vt[so, 0]), catch, work,
                                       0, False)
                    n_states += (res.top - 1) * 6 + 1
                    w = res.win + res.bust * (1.0 - ow - ot)
                    tt = res.tie + res.bust * ot
                    moved = max(moved, abs(res.value - vv[sm, so, x, y]),
                                abs(w - vw[sm, so, x, y]), abs(tt - vt[sm, so, x, y]))
                    vv[sm, so, x, y] = res.value
                    vw[sm, so, x, y] = w
                    vt[sm, so, x, y] = tt
        change[a, b] = moved
        dps[a, b] += n_dp
        states[a, b] = n_states


def _sweeps(sweep_once, sweep_tol: float, max_sweeps: int, what: str,
            progress: Callable[[float], None] | None, share: tuple[float, float]
            ) -> tuple[list[float], float]:
    """Gauss-Seidel sweeps until the largest change is at most ``sweep_tol`` (and
    shrinking): the changes, and the error estimate ``d rho / (1 - rho)``."""
    history: list[float] = []
    for sweep in range(1, max_sweeps + 1):
        history.append(sweep_once())
        if progress is not None:
            progress(share[0] + share[1] * sweep / (sweep + 4))  # sweeps: not known ahead
        if len(history) >= 3 and history[-1] <= sweep_tol and history[-1] < history[-2]:
            rho = history[-1] / history[-2]
            return history, history[-1] * rho / (1.0 - rho)
    raise UserError(f"optimal-win with the farkle penalty: the {what} did not settle in "
                    f"{max_sweeps} sweeps (last change {history[-1]:.2e})")


def solve_penalty_arrays(sa: SetAsides, rules: FarkleRules, t: int, tol: float,
                         progress: Callable[[float], None] | None = None,
                         floor_points: int | None = None,
                         sweep_tol: float | None = None,
                         max_sweeps: int | None = None) -> dict[str, np.ndarray]:
    """Solve optimal self-play with the farkle penalty to ``t`` units.

    Returns ``v_val``, ``v_win``, ``v_tie`` (K, K, T, T) over indices ``u = units +
    floor`` (``T = t + floor``), ``sweeps`` (each sweep's largest change: the values',
    then under ``last-round`` the outcome split's) and ``meta`` = (error estimate, turn
    DPs, sweeps, floor units, turn-DP states of one sweep)."""
    if rules.hot_dice == "must-roll":
        raise UserError("optimal-win does not model hot-dice = must-roll together with the "
                        f"farkle penalty (rules '{rules.name}') yet; simulate them instead")
    pen = rules.farkle_penalty // POINT_UNIT
    floor = floor_units(rules, floor_points)
    big_t = t + floor
    sweep_tol = config.PENALTY_SWEEP_TOL if sweep_tol is None else sweep_tol
    max_sweeps = config.PENALTY_MAX_SWEEPS if max_sweeps is None else max_sweeps
    tables = _last_round(sa, rules, big_t, tol)  # its catch tables cover every index
    catch = tables.catch
    turn = _turn(sa, big_t, tol, rules)
    vv = np.full((K, K, big_t, big_t), 0.5)
    change = np.zeros((big_t, big_t))
    dps = np.zeros((big_t, big_t), dtype=np.int64)
    states = np.zeros((big_t, big_t), dtype=np.int64)
    rows_max = big_t + tables.d_eps + sa.max_points + 2
    rolls = sa.arrays()
    diagonals = range(2 * big_t - 2, -1, -1)

    vw, vt = np.full_like(vv, 0.5), np.zeros_like(vv)

    def sweep(outcomes: bool) -> float:
        for diag in diagonals:
            _sweep_kernel(diag, turn, rolls, vv, vw, vt, catch, rows_max, pen, outcomes,
                          change, dps, states)
        return float(change.max())

    first_to_bank = rules.ending_code == FIRST_TO_BANK
    history, estimate = _sweeps(lambda: sweep(False), sweep_tol, max_sweeps, "values",
                                progress, (0.0, 1.0 if first_to_bank else 0.5))
    if first_to_bank:  # no ties: P(win) is the value
        vw, vt = vv.copy(), np.zeros_like(vv)
    else:  # the outcome split: the same sweeps carrying P(win) and P(tie)
        more, split_estimate = _sweeps(lambda: sweep(True), sweep_tol, max_sweeps,
                                       "win and tie probabilities", progress, (0.5, 0.5))
        history += more
        estimate = max(estimate, split_estimate)
    if progress is not None:
        progress(1.0)
    meta = np.array([estimate, float(dps.sum()), float(len(history)), float(floor),
                     float(states.sum())])
    return {"v_val": vv, "v_win": vw, "v_tie": vt, "sweeps": np.array(history),
            "meta": meta}
