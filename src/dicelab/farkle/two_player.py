"""Two-player Farkle solved exactly: the ``optimal-win`` policy.

The game (RULES.md §2): players alternate turns; the player to move with banked total
``a`` against ``b`` plays one turn; reaching the target by banking triggers the last
round, in which the other player plays exactly one more turn and must beat the leader;
equal final totals tie. A player maximises ``P(win) + 0.5 P(tie)``.

All totals and points are in units of 50 (``t = target // 50``). ``W[a, b]`` is the value
of starting a turn with totals ``a, b < t``.

Method
------
* **Last round.** The trailing player's last turn is solitaire "beat the leader": with
  ``x`` (units) still needed and ``n`` dice, ``LV[x, n] = max(bank, roll)`` where banking
  wins (1) if ``x < 0``, ties (0.5) if ``x == 0`` and loses (0) otherwise. ``x`` only falls,
  so one pass over increasing ``x`` solves it. ``S[d]`` is the value of a whole last turn
  needing more than ``d`` (``S[d] = P(win) + 0.5 P(tie)``); it never increases with ``d``.
* **Turn DP for one score pair.** From ``(a, b)`` the turn state is (bank total
  ``m = a + tp``, dice ``n``). Banking at ``m < t`` gives ``1 - W[b, m]``; at ``m >= t`` it
  gives ``1 - S[m - b]``; a bust gives ``beta = 1 - W[b, a]``. ``m`` only grows, so the turn
  is one backward pass over ``m``. Turn points are capped where banking is *provably*
  optimal: rolling can gain at most ``S[m - b] - bust_min (1 - beta)`` over banking (every
  roll busts at least with the smallest bust chance, every other outcome is worth at most
  1), so from the first ``m >= t`` with ``S[m - b] <= bust_min (1 - beta)`` on, banking is
  exact. Where that point is further than the tolerance cap (``S <= tol``) the turn is
  cut at the cap, costing at most ``tol`` there.
* **Cycles.** A bust passes the turn without changing totals, so ``W[a, b]`` and
  ``W[b, a]`` depend on each other. Every bank adds at least 50, so score pairs are solved
  in decreasing order of ``a + b`` (pairs on one anti-diagonal in parallel), and each pair
  ``{(a, b), (b, a)}`` is a 2-D fixed point ``x = f_ab(1 - y)``, ``y = f_ba(1 - x)``. For a
  fixed policy ``f`` is linear in the bust value (slope = the policy's bust probability),
  so each turn DP returns the line of its optimal policy and the two lines are solved
  exactly (policy iteration, i.e. Newton on a piecewise-linear map); it stops when the
  values stop moving, typically after two or three turn DPs per pair.
* **P(win), P(tie).** The same passes carry the win and tie probabilities of the chosen
  policy, so the outcome split of optimal self-play comes with no extra pass.

Error bound (``tolerance``): an error ``U`` in the already solved pairs moves a pair by at
most ``U`` (banks weigh ``1 - B``, the pair's own bust cycle ``B < 1``); a turn-points cap
adds at most its ``S - bust_min (1 - beta)``; a pair solved inside both stability intervals
is exact up to float rounding, allowed for as ``2**-50`` per anti-diagonal (the fallback
iteration, never needed in practice, adds its last step / (1 - B); a test forces it and
checks it against policy iteration). The bound is accumulated over
the anti-diagonals; the tests also check it against a solve with a much higher cap.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numba import njit, prange

from dicelab import cache, config
from dicelab.digest import text_digest
from dicelab.errors import UserError
from dicelab.farkle.head_to_head import bank_sums, cycle_outcomes
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    HOT_DICE,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    SetAsides,
    check_target,
    set_asides,
)
from dicelab.farkle.turn_dp import MUST_ROLL_ERR, must_roll_rows
from dicelab.resources import check_memory

FORMAT_VERSION = 2
_WINDOW = 0.01  # bust-value window of the policy-stability check (see _roll_value)
_ROUNDING = 2.0**-50  # per anti-diagonal: float64 rounding of one pair solve
_LAST_ROUND_CLAMP = 1e-6  # catch-up chance beyond the policy table's largest deficit
_MAX_LAST_ROUND = 20_000  # units of 50: a table whose turns run on longer is refused


class LastRound(NamedTuple):
    """The last round's values: ``lv/lw/lt[x, n]`` value / P(win) / P(tie) at a decision
    point needing ``x`` more (units) with ``n`` dice; ``s/sw/st[x]`` the same for a whole
    turn needing more than ``x``. Under ``first-to-bank`` there is no last round: all 0."""

    lv: np.ndarray
    lw: np.ndarray
    lt: np.ndarray
    s: np.ndarray
    sw: np.ndarray
    st: np.ndarray


class Catch(NamedTuple):
    """The other player's last turn when this one banks the target: at the other's total
    ``b`` against a lead of ``d`` units, ``value[b, d]`` = its P(win) + P(tie)/2, ``win``,
    ``tie``, and ``cap[b, d]`` = the largest value at that lead or any larger one (what the
    turn-points cap is proven with). Optimal self-play: the optimal last turn (the same at
    every ``b``); a best response: the fixed opponent's own last turn. ``first-to-bank``:
    all 0 (banking the target wins)."""

    value: np.ndarray
    win: np.ndarray
    tie: np.ndarray
    cap: np.ndarray


def _catch(value: np.ndarray, win: np.ndarray, tie: np.ndarray) -> Catch:
    cap = np.maximum.accumulate(value[:, ::-1], axis=1)[:, ::-1]
    return Catch(*(np.ascontiguousarray(x) for x in (value, win, tie, cap)))


class Solved(NamedTuple):
    """Values of the score pairs solved so far, (t, t) each, player to move first:
    ``value`` = P(win) + P(tie)/2, ``win``, ``tie``."""

    value: np.ndarray
    win: np.ndarray
    tie: np.ndarray


class Turn(NamedTuple):
    """What every turn DP of one solve shares: the target ``t`` (units), the smallest bust
    chance ``bust_min``, the cap tolerance ``eps``, the most points of a roll ``max_s``,
    and ``oflat[j]`` = option ``j``'s column offset ``points * 7 + dice`` in a work row;
    hot dice must-roll: ``hot_rows`` rows past the cap where six dice still roll, and
    ``hot_err`` the bound on the chance to climb past them (0 and 0.0 under may-bank)."""

    t: int
    bust_min: float
    eps: float
    max_s: int
    oflat: np.ndarray
    hot_rows: int
    hot_err: float
    hot_bank: float  # must-roll: the chance that six dice score with a set-aside that
    # leaves fewer dice (then a bank), what the last rows' guess counts on


class Work(NamedTuple):
    """A turn DP's rows (turn points i, dice n): value ``v``, bust probability ``bp``,
    P(win) / P(tie) through banks ``aw`` / ``at``, ``bk`` 1 where banking is chosen."""

    v: np.ndarray
    bp: np.ndarray
    aw: np.ndarray
    at: np.ndarray
    bk: np.ndarray


class TurnResult(NamedTuple):
    """One turn DP's result at the turn start: value, bust probability, P(win) and P(tie)
    through banks; the cap row ``top`` (rows from it bank for sure) and its error bound
    ``cap_err``; the rows filled; ``[lo, hi]``: bust values over which the policy stays
    optimal (with ``track``)."""

    value: float
    bust: float
    win: float
    tie: float
    top: int
    cap_err: float
    rows: int
    lo: float
    hi: float


@njit(cache=True)
def _work(rows):
    """Fresh :class:`Work` rows (a turn DP's scratch), from Python or jitted code."""
    return Work(np.empty((rows, 7)), np.empty((rows, 7)), np.empty((rows, 7)),
                np.empty((rows, 7)), np.zeros((rows, 7), dtype=np.uint8))


# ---------------------------------------------------------------------------------
# Kernels


@njit(cache=True)
def _last_round_kernel(x_max, rolls, ahead6, out):
    """Fill the :class:`LastRound` tables ``out`` for needs ``x = 0 .. x_max - 1`` (a
    decision point banks or rolls; a whole turn starts with 6 dice and must roll). Needs
    below 0 are won (value 1), but with six dice under hot dice must-roll, which cannot
    bank: ``ahead6`` (:func:`_ahead6`; 1 under may-bank), and there a tie cannot bank."""
    goff, gprob, ooff = rolls.class_start, rolls.class_prob, rolls.option_start
    opts, odice = rolls.points, rolls.dice
    lv, lw, lt, s, sw, st = out
    must_roll = rolls.bank_floor[HOT_DICE] > rolls.bank_floor[1]
    for x in range(x_max):
        for n in range(1, 8):
            nd = HOT_DICE if n == 7 else n  # n == 7: the turn start, which must roll
            v = 0.0
            w = 0.0
            tt = 0.0
            for g in range(goff[nd], goff[nd + 1]):
                bv = -1.0
                bw = 0.0
                bt = 0.0
                for j in range(ooff[g], ooff[g + 1]):
                    y = x - opts[j]
                    if y < 0:
                        cv = 1.0 if odice[j] < HOT_DICE else ahead6
                        cw, ct = cv, 0.0
                    else:
                        cv, cw, ct = lv[y, odice[j]], lw[y, odice[j]], lt[y, odice[j]]
                    if cv > bv:
                        bv, bw, bt = cv, cw, ct
                v += gprob[g] * bv
                w += gprob[g] * bw
                tt += gprob[g] * bt
            if n == 7:
                s[x], sw[x], st[x] = v, w, tt
            elif x == 0 and v <= 0.5 and not (must_roll and n == HOT_DICE):
                # banking ties; a tie in value prefers the sure bank
                lv[x, n], lw[x, n], lt[x, n] = 0.5, 0.0, 1.0
            else:
                lv[x, n], lw[x, n], lt[x, n] = v, w, tt


@njit(cache=True)
def _reach_kernel(rolls, ahead6, out):
    """``out[p, n]`` (shape (f, 7), f = the minimum to bank in units): the chance that a
    turn at ``p < f`` turn points with ``n`` dice to roll reaches ``f`` (where it may bank)
    before it busts, every set-aside chosen for that; row 0, 6 dice: a whole turn. Six
    dice at ``f`` or more are worth ``ahead6`` (:func:`_ahead6`)."""
    f = out.shape[0]
    goff, gprob, ooff = rolls.class_start, rolls.class_prob, rolls.option_start
    for p in range(f - 1, -1, -1):
        for n in range(1, 7):
            v = 0.0
            for g in range(goff[n], goff[n + 1]):
                best = 0.0
                for j in range(ooff[g], ooff[g + 1]):
                    q = p + rolls.points[j]
                    d = rolls.dice[j]
                    c = (1.0 if d < HOT_DICE else ahead6) if q >= f else out[q, d]
                    if c > best:
                        best = c
                v += gprob[g] * best
            out[p, n] = v


@njit(inline="always")
def _roll_value(i, n, beta, rolls, oflat, v, bp, aw, at, track, bounds):
    """Value of rolling ``n`` dice at row ``i``: (value, bust prob, win, tie).

    ``v, bp, aw, at`` are the flat (rows * 7) work arrays; option ``j`` leads to flat index
    ``i * 7 + oflat[j]``. With ``track``, narrows ``bounds = [lo, hi]`` (at most
    ``beta -+ _WINDOW``) to the bust values for which every set-aside chosen here stays
    optimal: all values are lines in the bust value with slopes in [0, 1]."""
    goff, gprob, ooff = rolls.class_start, rolls.class_prob, rolls.option_start
    rv = rolls.bust[n] * beta
    rb = rolls.bust[n]
    rw = 0.0
    rt = 0.0
    base = i * 7
    for g in range(goff[n], goff[n + 1]):
        j0 = ooff[g]
        j1 = ooff[g + 1]
        kb = base + oflat[j0]
        best = v[kb]
        second = -1.0
        for j in range(j0 + 1, j1):
            k = base + oflat[j]
            c = v[k]
            if c > best:
                second = best
                best = c
                kb = k
            elif c > second:
                second = c
        # a choice ahead by more than the window holds over the whole window (slopes <= 1)
        if track and best - second < _WINDOW:
            bb = bp[kb]
            for j in range(j0, j1):
                k = base + oflat[j]
                if k != kb:
                    db = bb - bp[k]
                    dv = best - v[k]
                    if db > dv:  # only a crossing inside [0, 1] can matter
                        bounds[0] = max(bounds[0], beta - dv / db)
                    elif -db > dv:
                        bounds[1] = min(bounds[1], beta - dv / db)
        p = gprob[g]
        rv += p * best
        rb += p * bp[kb]
        rw += p * aw[kb]
        rt += p * at[kb]
    return rv, rb, rw, rt


@njit(inline="always")
def _cap_row(a, b, beta, turn, rolls, c_cap):
    """The turn from ``(a, b)``'s cap: rows ``>= top`` bank for sure, past the proven (or
    tolerance) cap and where banking is allowed (the rules' minimum to bank; the bound on
    rolling holds at any bankable row). Returns ``(top, s_d, margin, cap_err)``: the
    other's catch-up value at the cap's lead or beyond, the bound ``bust_min (1 - beta)``
    on what rolling gains, and the cap's error (0 for the exact cap, valid while ``s_d <=
    bust_min (1 - beta')``; else the tolerance cap's, at most ``s_d <= eps``)."""
    margin = turn.bust_min * (1.0 - beta)
    thr = max(margin, turn.eps)
    d = max(turn.t - b, 1)
    while c_cap[b, d] > thr:
        d += 1
    s_d = c_cap[b, d]
    top = max(b + d - a, rolls.bank_floor[1] // POINT_UNIT)
    return top, s_d, margin, 0.0 if s_d <= margin else s_d


@njit(cache=True)
def _turn_kernel(a, b, beta, turn, rolls, solved, catch, work, fill_to, track):
    """Optimal turn from totals ``(a, b)`` given the bust value ``beta``.

    Writes the :class:`Work` rows for turn points ``i`` (units) and dice ``n``; row 0
    holds the turn start (6 dice). Returns a :class:`TurnResult`: with ``track``, [lo, hi]
    is an interval of bust values over which this policy stays optimal (its value is then
    the line ``value + bust prob * (beta' - beta)``).
    """
    t, bust_min, _, max_s, oflat, hot_rows, hot_err, hot_bank = turn
    w_val, w_win, w_tie = solved
    c_val, c_win, c_tie, c_cap = catch
    v, bp, aw, at, bk = work
    width = c_val.shape[1]
    top, s_d, _, cap_err = _cap_row(a, b, beta, turn, rolls, c_cap)
    if hot_rows > 0:
        # six dice roll on past the cap: the turn climbs past the rows held with a chance
        # of at most hot_err (its value there is a guess in [0, 1]), and leads past the
        # catch tables' width are read at its edge (worth at most c_cap there)
        cap_err += hot_err + c_cap[b, width - 1]
    bounds = np.empty(2)
    bounds[0] = max(0.0, beta - _WINDOW)
    bounds[1] = min(1.0, beta + _WINDOW)
    if cap_err == 0.0 and s_d > 0.0:  # the cap is exact while s_d <= bust_min (1 - beta')
        bounds[1] = min(bounds[1], 1.0 - s_d / bust_min)
    rows = max(top + hot_rows + max_s, fill_to)
    vf = v.reshape(v.size)
    bpf = bp.reshape(bp.size)
    awf = aw.reshape(aw.size)
    atf = at.reshape(at.size)
    for i in range(rows - 1, 0, -1):
        m = a + i
        v[i, 0] = 0.0  # column 0 (no dice) is unused
        bp[i, 0] = 0.0
        aw[i, 0] = 0.0
        at[i, 0] = 0.0
        bk[i, 0] = 0
        if m < t:
            bv = 1.0 - w_val[b, m]
            bw = 1.0 - w_win[b, m] - w_tie[b, m]
            bt = w_tie[b, m]
        else:
            dd = min(m - b, width - 1)
            bv = 1.0 - c_val[b, dd]
            bw = 1.0 - c_win[b, dd] - c_tie[b, dd]
            bt = c_tie[b, dd]
        if i >= top:
            for n in range(1, 7):
                if hot_rows > 0 and n == HOT_DICE and i + max_s < rows:
                    rv, rb, rw, rt = _roll_value(i, n, beta, rolls, oflat, vf, bpf, awf, atf,
                                                 track, bounds)
                    v[i, n] = rv
                    bp[i, n] = rb
                    aw[i, n] = rw
                    at[i, n] = rt
                    bk[i, n] = 0
                    continue
                if hot_rows > 0 and n == HOT_DICE:
                    # six dice at the last rows (must-roll): a guess, one roll that banks
                    # any set-aside leaving fewer dice, counting hot dice again as lost
                    rb = rolls.bust[HOT_DICE]
                    v[i, n] = hot_bank * bv + rb * beta
                    bp[i, n] = rb
                    aw[i, n] = hot_bank * bw
                    at[i, n] = hot_bank * bt
                    bk[i, n] = 0
                    continue
                v[i, n] = bv
                bp[i, n] = 0.0
                aw[i, n] = bw
                at[i, n] = bt
                bk[i, n] = 1
            continue
        for n in range(1, 7):
            rv, rb, rw, rt = _roll_value(i, n, beta, rolls, oflat, vf, bpf, awf, atf, track,
                                         bounds)
            if i * POINT_UNIT < rolls.bank_floor[n]:  # below the minimum to bank: roll
                v[i, n] = rv
                bp[i, n] = rb
                aw[i, n] = rw
                at[i, n] = rt
                bk[i, n] = 0
            elif bv >= rv:
                if track and rb > bv - rv:
                    bounds[1] = min(bounds[1], beta + (bv - rv) / rb)
                v[i, n] = bv
                bp[i, n] = 0.0
                aw[i, n] = bw
                at[i, n] = bt
                bk[i, n] = 1
            else:
                if track and rb > rv - bv:
                    bounds[0] = max(bounds[0], beta - (rv - bv) / rb)
                v[i, n] = rv
                bp[i, n] = rb
                aw[i, n] = rw
                at[i, n] = rt
                bk[i, n] = 0
    # the turn start: 6 dice, no banking with 0 points
    rv, rb, rw, rt = _roll_value(0, HOT_DICE, beta, rolls, oflat, vf, bpf, awf, atf, track,
                                 bounds)
    for n in range(7):
        v[0, n] = 0.0
        bp[0, n] = 0.0
        aw[0, n] = 0.0
        at[0, n] = 0.0
        bk[0, n] = 0
    v[0, HOT_DICE] = rv
    bp[0, HOT_DICE] = rb
    aw[0, HOT_DICE] = rw
    at[0, HOT_DICE] = rt
    return TurnResult(rv, rb, rw, rt, top, cap_err, rows, bounds[0], bounds[1])


@njit(parallel=True, cache=True)
def _solve_diagonal_kernel(diag, turn, rolls, solved, catch, rows_max, steps, top_out,
                           info_out):
    """Solve every pair ``{(a, b), (b, a)}`` with ``a + b == diag`` (pairs in parallel).

    Writes ``solved`` at both orientations, ``top_out`` (cap rows) and ``info_out[a, b] =
    (cap error, fixed-point error, max bust prob, turn DPs)``, a >= b. ``steps``:
    (Newton steps, fixed-point steps) before giving up on each (see the module docstring).
    """
    t = turn.t
    w_val, w_win, w_tie = solved
    newton_steps, fixed_point_steps = steps
    a_lo = (diag + 1) // 2
    a_hi = min(diag, t - 1)
    for q in prange(a_hi - a_lo + 1):
        a = a_lo + q
        b = diag - a
        work = _work(rows_max)
        x = _guess(w_val, a, b, t)
        y = _guess(w_val, b, a, t)
        err = 1.0
        dps = 0
        r1 = _turn_kernel(a, b, 1.0 - y, turn, rolls, solved, catch, work, 0, True)
        r2 = r1
        for it in range(newton_steps + fixed_point_steps):
            if it > 0:
                r1 = _turn_kernel(a, b, 1.0 - y, turn, rolls, solved, catch, work, 0, True)
            dps += 1
            if a == b:
                r2 = r1
            else:
                r2 = _turn_kernel(b, a, 1.0 - x, turn, rolls, solved, catch, work, 0, True)
                dps += 1
            b1 = r1.bust
            b2 = r2.bust
            if it < newton_steps:
                # the lines of the current policies: x = A1 + B1 (1 - y), y = A2 + B2 (1 - x)
                a1 = r1.value - b1 * (1.0 - y)
                a2 = r2.value - b2 * (1.0 - x)
                if a == b:
                    xn = (a1 + b1) / (1.0 + b1)
                    yn = xn
                else:
                    xn = (a1 + b1 - b1 * (a2 + b2)) / (1.0 - b1 * b2)
                    yn = a2 + b2 * (1.0 - xn)
                # both policies still optimal at the solution: it is exact (rounding aside)
                if r1.lo <= 1.0 - yn <= r1.hi and r2.lo <= 1.0 - xn <= r2.hi:
                    x = xn
                    y = yn
                    err = 0.0
                    break
            else:  # safeguard against cycling: plain fixed-point steps (a contraction)
                xn = r1.value
                yn = r2.value
            step = max(abs(xn - x), abs(yn - y))
            x = xn
            y = yn
            if it >= newton_steps and step <= 1e-15:
                err = step / (1.0 - max(b1, b2))
                break
        b1 = r1.bust
        b2 = r2.bust
        w_val[a, b] = x
        w_val[b, a] = y
        # outcome split of the final policies (bank paths + the pair's own cycle)
        w1, t1, w2, t2 = cycle_outcomes(r1.win, r1.tie, b1, r2.win, r2.tie, b2)
        w_win[a, b] = w1
        w_tie[a, b] = t1
        w_win[b, a] = w2
        w_tie[b, a] = t2
        top_out[a, b] = r1.top
        top_out[b, a] = r2.top
        info_out[a, b, 0] = max(r1.cap_err, r2.cap_err)
        info_out[a, b, 1] = err
        info_out[a, b, 2] = max(b1, b2)
        info_out[a, b, 3] = dps


@njit(cache=True)
def _guess(w_val, a, b, t):
    """A start for the fixed point of (a, b) from solved pairs further along."""
    if a + 1 < t and b + 1 < t:
        return min(1.0, max(0.0, w_val[a + 1, b] + w_val[a, b + 1] - w_val[a + 1, b + 1]))
    if b + 1 < t:
        return w_val[a, b + 1]
    if a + 1 < t:
        return w_val[a + 1, b]
    return 0.5


@njit(cache=True)
def _roll_values(i, beta, turn, rolls, work, out):
    """``out[n]``: the value of rolling ``n`` dice at row ``i`` of a filled turn DP (rows
    past ``i`` plus one roll filled: beyond the cap they bank, which is their value, but
    six dice under must-roll, which roll on)."""
    v, bp, aw, at, _ = work
    bounds = np.empty(2)
    for n in range(1, 7):
        out[n] = _roll_value(i, n, beta, rolls, turn.oflat, v.reshape(v.size),
                             bp.reshape(bp.size), aw.reshape(aw.size), at.reshape(at.size),
                             False, bounds)[0]


@njit(parallel=True, cache=True)
def _fill_table_kernel(n_p, turn, rolls, solved, catch, rows_max, value_out, bank_out,
                       top_out):
    """Policy table rows ``value_out[a, b, :n_p]`` (float32), ``bank_out`` (uint8) and the
    cap row of each pair ``top_out[a, b]`` (the caller checks that ``n_p`` covered it)."""
    t = turn.t
    for a in prange(t):
        rows = max(rows_max, n_p)
        work = _work(rows)
        for b in range(t):
            res = _turn_kernel(a, b, 1.0 - solved.value[b, a], turn, rolls, solved, catch,
                               work, n_p, False)
            top_out[a, b] = res.top
            for i in range(n_p):
                for n in range(7):
                    value_out[a, b, i, n] = np.float32(work.v[i, n])
                    bank_out[a, b, i, n] = work.bk[i, n]


@njit(parallel=True, cache=True)
def _respond_diagonal_kernel(diag, turn, rolls, mine, theirs, catch, side, my_catch,
                             first_to_bank, rows_max, steps, top_out, info_out):
    """Best response: every pair with ``a + b == diag``, me to move at (a, b) playing my
    best turn, the fixed opponent to move at (b, a) playing its own (``side``: its turn
    slices, :mod:`dicelab.farkle.head_to_head`; ``my_catch``: my optimal last turn when it
    banks the target). Its value is a line in mine, exact for every bust value, so Newton
    on my turn's line stops at the exact fixed point."""
    t = turn.t
    newton_steps, fixed_point_steps = steps
    # (arrays written inside a prange loop must not be reached through a tuple there:
    # numba's parallel lowering would write to copies)
    m_val, m_win, m_tie = mine
    o_val, o_win, o_tie = theirs
    lo = max(0, diag - (t - 1))
    hi = min(diag, t - 1)
    for q in prange(hi - lo + 1):
        a = lo + q
        b = diag - a
        work = _work(rows_max)
        sl = side.normal[b, a]
        cw, ct = bank_sums(side.dist[sl], b, a, t, first_to_bank, m_win, m_tie,
                           my_catch.win, my_catch.tie)
        cv = cw + 0.5 * ct
        bb = side.bust[sl]
        x = _guess(m_val, a, b, t)
        y = cv + bb * (1.0 - x)
        err = 1.0
        dps = 0
        r1 = _turn_kernel(a, b, 1.0 - y, turn, rolls, theirs, catch, work, 0, True)
        for it in range(newton_steps + fixed_point_steps):
            if it > 0:
                r1 = _turn_kernel(a, b, 1.0 - y, turn, rolls, theirs, catch, work, 0, True)
            dps += 1
            b1 = r1.bust
            if it < newton_steps:
                a1 = r1.value - b1 * (1.0 - y)
                xn = (a1 + b1 * (1.0 - cv - bb)) / (1.0 - b1 * bb)
                yn = cv + bb * (1.0 - xn)
                if r1.lo <= 1.0 - yn <= r1.hi:
                    x = xn
                    y = yn
                    err = 0.0
                    break
            else:
                xn = r1.value
                yn = cv + bb * (1.0 - xn)
            step = max(abs(xn - x), abs(yn - y))
            x = xn
            y = yn
            if it >= newton_steps and step <= 1e-15:
                err = step / (1.0 - max(b1, bb))
                break
        wa, ta, wb, tb = cycle_outcomes(r1.win, r1.tie, r1.bust, cw, ct, bb)
        m_val[a, b] = x
        m_win[a, b] = wa
        m_tie[a, b] = ta
        o_val[b, a] = y
        o_win[b, a] = wb
        o_tie[b, a] = tb
        top_out[a, b] = r1.top
        info_out[a, b, 0] = r1.cap_err
        info_out[a, b, 1] = err
        info_out[a, b, 2] = max(b1, bb)
        info_out[a, b, 3] = dps


# ---------------------------------------------------------------------------------
# Orchestration


@dataclass(frozen=True)
class _Tables:
    """The last round's tables of one solve; ``d_eps``: the first deficit whose catch-up
    value is at most the cap tolerance, and at least the minimum to bank (units), so
    every turn DP's cap row lies below ``t + d_eps``; ``reach[p, n]`` (rows below the
    minimum to bank, where a turn must roll): the chance to reach it from ``p`` with
    ``n`` dice, what a last turn against a lead below the minimum plays for."""

    last: LastRound
    d_eps: int
    catch: Catch
    reach: np.ndarray


def _min_bank_units(rules: FarkleRules) -> int:
    return rules.bank_floor[1] // POINT_UNIT


def _reach(sa: SetAsides, rules: FarkleRules) -> np.ndarray:
    reach = np.zeros((_min_bank_units(rules), 7))
    _reach_kernel(sa.arrays(), _ahead6(sa, rules), reach)
    return reach


def _ahead6(sa: SetAsides, rules: FarkleRules) -> float:
    """A last turn already ahead (any bank wins) with six dice to roll: 1 under may-bank;
    under must-roll it rolls, a roll with a set-aside that leaves fewer dice banks the
    win, one whose every set-aside is hot dice rolls again: (1 - bust - q) / (1 - q)."""
    if rules.hot_dice != "must-roll":
        return 1.0
    c0, c1 = sa.class_start[HOT_DICE], sa.class_start[HOT_DICE + 1]
    q = float(sum(sa.class_prob[c] for c in range(c0, c1)
                  if (sa.dice[sa.option_start[c]:sa.option_start[c + 1]] == HOT_DICE).all()))
    return (1.0 - float(sa.bust[HOT_DICE]) - q) / (1.0 - q)


def _last_round(sa: SetAsides, rules: FarkleRules, t: int, eps: float) -> _Tables:
    max_s = sa.max_points
    x_max = 2 * t + 8 * max_s + 64
    f = _min_bank_units(rules)
    reach = _reach(sa, rules)
    while True:
        last = LastRound(*(np.zeros((x_max, 7)) for _ in range(3)),
                         *(np.zeros(x_max) for _ in range(3)))
        if rules.ending_code == FIRST_TO_BANK:  # no last round: banking the target wins
            return _Tables(last, f, _catch(*(np.zeros((t, x_max)) for _ in range(3))), reach)
        _last_round_kernel(x_max, sa.arrays(), _ahead6(sa, rules), last)
        if f > 1:
            # a lead d below the minimum to bank f: any allowed bank (>= f > d) wins, so the
            # turn plays to reach f (no tie). From d >= f on every bank that wins or ties
            # is allowed, and the need-based tables are exact as they are.
            last.s[:f], last.sw[:f], last.st[:f] = reach[0, HOT_DICE], reach[0, HOT_DICE], 0.0
        below = np.nonzero(last.s <= eps)[0]
        # every turn DP may look up to 2 t + max points past the eps point
        if below.size and below[0] + 2 * t + 2 * max_s + 2 < x_max:
            catch = _catch(*(np.broadcast_to(a, (t, x_max)) for a in (last.s, last.sw,
                                                                     last.st)))
            return _Tables(last, max(int(below[0]), f), catch, reach)
        if x_max > 2 * t + 8 * sa.max_points + 64 + _MAX_LAST_ROUND:
            raise UserError("this scoring table lets a turn go on almost forever (the chance "
                            "to score 1,000,000 points in one turn is above the tolerance); "
                            "optimal-win needs a table where turns end")
        x_max *= 2


def _turn(sa: SetAsides, t: int, eps: float, rules: FarkleRules) -> Turn:
    hot = must_roll_rows(rules)
    c0, c1 = sa.class_start[HOT_DICE], sa.class_start[HOT_DICE + 1]
    hot_bank = float(sum(sa.class_prob[c] for c in range(c0, c1)
                         if (sa.dice[sa.option_start[c]:sa.option_start[c + 1]] < HOT_DICE).any()))
    return Turn(t, float(sa.bust[1:].min()), eps, sa.max_points,
                np.ascontiguousarray(sa.points * 7 + sa.dice), hot,
                MUST_ROLL_ERR if hot else 0.0, hot_bank)


def _cache_key(rules: FarkleRules, target: int, tol: float) -> str:
    return cache.entry_key("farkle-optimal-win", rules.name, rules.digest(), t=target,
                           tol=f"{tol:.3g}")


def _solve_arrays(sa: SetAsides, rules: FarkleRules, t: int, tol: float, tables: _Tables,
                  progress: Callable[[float], None] | None) -> dict[str, np.ndarray]:
    turn = _turn(sa, t, tol, rules)
    solved = Solved(np.zeros((t, t)), np.zeros((t, t)), np.zeros((t, t)))
    top = np.zeros((t, t), dtype=np.int64)
    info = np.zeros((t, t, 4))
    # rows: top <= t + d_eps (a >= 0, b <= t - 1), plus one roll past it
    rows_max = t + tables.d_eps + turn.hot_rows + sa.max_points + 2
    steps = (config.OPTIMAL_WIN_NEWTON_STEPS, config.OPTIMAL_WIN_FIXED_POINT_STEPS)
    total_pairs = t * (t + 1) // 2
    done = 0
    bound = 0.0
    rolls = sa.arrays()
    for diag in range(2 * t - 2, -1, -1):
        _solve_diagonal_kernel(diag, turn, rolls, solved, tables.catch, rows_max, steps, top,
                               info)
        a = np.arange((diag + 1) // 2, min(diag, t - 1) + 1)
        b = diag - a
        cap_err = info[a, b, 0].max()
        # fixed-point error (0 when exact) plus a float rounding allowance
        bound = max(bound, cap_err) + info[a, b, 1].max() + _ROUNDING
        done += a.size
        if progress is not None:
            progress(done / total_pairs)
    meta = np.array([bound, float(info[..., 3].sum()), float(info[..., 3].max())])
    return {"w_val": solved.value, "w_win": solved.win, "w_tie": solved.tie, "top": top,
            "meta": meta}


@dataclass(frozen=True)
class OptimalWinSolution:
    """The solved two-player game: values of every score pair and the optimal policy.

    Scalars: ``target`` (points), ``rules`` (scoring table name), ``tolerance`` (bound on the
    value error), ``states`` (turn DP states: score pairs x turn points x dice, plus the
    last-round states), ``solve_s`` (the original solve time, also when loaded from
    cache: see ``from_cache``), ``elapsed_s`` (this call: solve or load),
    ``memory_bytes`` (solution arrays), ``p_win/p_tie/p_loss``
    (first player under optimal self-play from 0 : 0), ``fair_head_start`` (points for the
    second player that make the first player's value closest to 0.5) and
    ``fair_head_start_value`` (that value).

    Example::

        sol = solve_optimal_win(load_rules("default"), 10_000)
        sol.p_win, sol.win_value(9000, 8500), sol.bank_decisions(0, 0)[6]  # 300 points
    """

    target: int
    rules: str
    tolerance: float
    cap_tolerance: float  # the ``tol`` the solve was asked for (sets the turn-points cap)
    states: int
    solve_s: float
    elapsed_s: float
    from_cache: bool
    memory_bytes: int
    p_win: float
    p_tie: float
    p_loss: float
    fair_head_start: int
    fair_head_start_value: float
    turn_dps: int
    table_rows: int
    farkle_rules: FarkleRules = field(repr=False)
    values: np.ndarray = field(repr=False)  # (t, t) W[a, b], player to move has a
    win_probability: np.ndarray = field(repr=False)  # (t, t) P(win) of the player to move
    tie_probability: np.ndarray = field(repr=False)  # (t, t)
    last_round_values: np.ndarray = field(repr=False)  # S[d]: a last turn needing > d
    #: a best response: the fixed opponent it answers (None: optimal self-play), and the
    #: opponent's values as the player to move, ``[b, a]`` (self-play: ``values`` etc.)
    opponent: str | None = None
    opponent_values: np.ndarray | None = field(default=None, repr=False)
    opponent_win: np.ndarray | None = field(default=None, repr=False)
    opponent_tie: np.ndarray | None = field(default=None, repr=False)
    #: the farkle penalty: values, P(win), P(tie) over (my lost turns in a row, the
    #: other's, my total, the other's), totals indexed from ``floor_points`` below zero
    #: (:mod:`dicelab.farkle.penalty_game`); None without the penalty
    streak_values: np.ndarray | None = field(default=None, repr=False)
    streak_win: np.ndarray | None = field(default=None, repr=False)
    streak_tie: np.ndarray | None = field(default=None, repr=False)
    floor_points: int = 0
    sweeps: int = 0  # Gauss-Seidel sweeps of the penalty's solve
    #: a best response under the penalty: the opponent's values over the same states, and
    #: its last turns by its lost turns in a row (what its policy table is built against)
    opponent_streak_values: np.ndarray | None = field(default=None, repr=False)
    opponent_catch: tuple | None = field(default=None, repr=False)
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def policy(self) -> str:
        """The policy's name: ``optimal-win`` or ``optimal-win:vs=<opponent>``."""
        return "optimal-win" if self.opponent is None else f"optimal-win:vs={self.opponent}"

    @property
    def second_outcome(self) -> tuple[float, float, float]:
        """(P(win), P(tie), P(loss)) of this policy when the other player moves first."""
        ow = self.win_probability if self.opponent_win is None else self.opponent_win
        ot = self.tie_probability if self.opponent_tie is None else self.opponent_tie
        w, t = float(ow[0, 0]), float(ot[0, 0])
        return 1.0 - w - t, t, w

    # -- queries ----------------------------------------------------------------------

    def _unit(self, what: str, points) -> int:
        if isinstance(points, bool) or not isinstance(points, int | np.integer) \
                or points < 0 or points >= self.target or points % POINT_UNIT:
            raise UserError(f"{what} must be a multiple of {POINT_UNIT} in 0..{self.target - 50}"
                            f" (a game still running), not {points!r}")
        return int(points) // POINT_UNIT

    def win_value(self, my_total: int, opp_total: int) -> float:
        """P(win) + 0.5 P(tie) for the player about to start a turn (totals in points)."""
        return float(self.values[self._unit("my total", my_total),
                                 self._unit("opponent total", opp_total)])

    def outcome(self, my_total: int, opp_total: int) -> tuple[float, float, float]:
        """(P(win), P(tie), P(loss)) for the player about to start a turn, optimal play."""
        a, b = self._unit("my total", my_total), self._unit("opponent total", opp_total)
        w, t = float(self.win_probability[a, b]), float(self.tie_probability[a, b])
        return w, t, 1.0 - w - t

    def last_round_value(self, deficit: int) -> float:
        """P(win) + 0.5 P(tie) of a last turn that must beat a lead of ``deficit`` points."""
        if isinstance(deficit, bool) or not isinstance(deficit, int | np.integer) \
                or deficit <= 0 or deficit % POINT_UNIT:
            raise UserError(f"deficit must be a positive multiple of {POINT_UNIT}, "
                            f"not {deficit!r}")
        d = int(deficit) // POINT_UNIT
        return float(self.last_round_values[d]) if d < self.last_round_values.size else 0.0

    def state_outcome(self, my_total: int, opp_total: int, my_farkles: int = 0,
                      opp_farkles: int = 0) -> tuple[float, float, float]:
        """(P(win), P(tie), P(loss)) for the player about to start a turn with the farkle
        penalty: totals in points (down to ``-floor_points``), and the lost turns in a row
        of each player (0 .. PENALTY_STREAK - 1)."""
        if self.streak_values is None:
            raise UserError("lost turns in a row matter only under a farkle penalty; "
                            "use outcome()")
        at = self._streak_state(my_total, opp_total, my_farkles, opp_farkles)
        w, t = float(self.streak_win[at]), float(self.streak_tie[at])
        return w, t, 1.0 - w - t

    def _streak_state(self, my_total: int, opp_total: int, my_farkles: int,
                      opp_farkles: int) -> tuple[int, int, int, int]:
        """The index ``(s, r, x, y)`` of a state under the farkle penalty, checked."""
        floor = self.floor_points // POINT_UNIT
        idx = []
        for what, points in (("my total", my_total), ("opponent total", opp_total)):
            if isinstance(points, bool) or not isinstance(points, int | np.integer) \
                    or not -self.floor_points <= points < self.target or points % POINT_UNIT:
                raise UserError(f"{what} must be a multiple of {POINT_UNIT} in "
                                f"{-self.floor_points}..{self.target - 50}, not {points!r}")
            idx.append(int(points) // POINT_UNIT + floor)
        k = self.streak_values.shape[0]
        for what, n in (("my farkles", my_farkles), ("opponent farkles", opp_farkles)):
            if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 0 <= n < k:
                raise UserError(f"{what} (lost turns in a row) must be in 0..{k - 1}, "
                                f"not {n!r}")
        return (int(my_farkles), int(opp_farkles), *idx)

    def last_round_tables(self) -> _Tables:
        """The last round's tables of this solve (made once; the same with the penalty,
        which a last turn cannot risk)."""
        tables = self._memo.get("last")
        if tables is None:
            tables = _last_round(set_asides(self.farkle_rules), self.farkle_rules,
                                 self.target // POINT_UNIT, self.cap_tolerance)
            self._memo["last"] = tables
        return tables

    def _kernel_args(self) -> tuple[SetAsides, _Tables, Turn, Solved]:
        """The turn DP's inputs of a solve without the penalty (whose states have the
        lost-turn counts: :mod:`dicelab.farkle.penalty_game` answers for it)."""
        if self.streak_values is not None:
            raise AssertionError("a penalty solution's turns come from penalty_game")
        sa = set_asides(self.farkle_rules)
        tables = self.last_round_tables()
        if self.opponent is None:
            theirs = Solved(self.values, self.win_probability, self.tie_probability)
        else:
            theirs = Solved(self.opponent_values, self.opponent_win, self.opponent_tie)
        return sa, tables, _turn(sa, self.target // POINT_UNIT, self.cap_tolerance,
                                 self.farkle_rules), theirs

    def bank_decisions(self, my_total: int, opp_total: int) -> np.ndarray:
        """uint8 (P, 7): 1 where the policy banks ``p * 50`` turn points with ``n`` dice left
        (n = 1..6; column 0 and row 0, the turn start, are 0). ``P = table_rows``. Under the
        farkle penalty: with no lost turns in a row on either side."""
        a, b = self._unit("my total", my_total), self._unit("opponent total", opp_total)
        if self.streak_values is not None:  # no lost turns in a row yet on either side
            from dicelab.farkle import penalty_game

            floor = self.floor_points // POINT_UNIT
            return penalty_game.bank_decisions(
                set_asides(self.farkle_rules), self.farkle_rules, self.cap_tolerance,
                self.streak_values, 0, 0, a + floor, b + floor, self.table_rows,
                self.opponent_streak_values, self.opponent_catch)
        sa, tables, turn, solved = self._kernel_args()
        work = _work(self.table_rows + sa.max_points + turn.t + tables.d_eps + turn.hot_rows + 2)
        _turn_kernel(a, b, 1.0 - solved.value[b, a], turn, sa.arrays(), solved, tables.catch,
                     work, self.table_rows, False)
        return work.bk[:self.table_rows].copy()

    def turn_values(self, my_total: int, opp_total: int, turn_points: int,
                    my_farkles: int = 0, opp_farkles: int = 0) -> tuple[float, np.ndarray]:
        """(value of banking, value of rolling ``n`` dice for n = 1..6): this policy's
        P(win) + P(tie)/2 at a decision point of a turn started at (my, opp) totals, with
        ``turn_points`` (points) set aside so far (index 0 of the roll values unused).
        Under the farkle penalty the totals may be below zero and the lost turns in a row
        of each player count (``my_farkles``, ``opp_farkles``)."""
        if isinstance(turn_points, bool) or not isinstance(turn_points, int | np.integer) \
                or turn_points < POINT_UNIT or turn_points % POINT_UNIT:
            raise UserError(f"turn points must be a positive multiple of {POINT_UNIT}, not "
                            f"{turn_points!r}")
        i = int(turn_points) // POINT_UNIT
        if self.streak_values is not None:
            from dicelab.farkle import penalty_game

            return penalty_game.turn_values(
                set_asides(self.farkle_rules), self.farkle_rules, self.cap_tolerance,
                self.streak_values, *self._streak_state(my_total, opp_total, my_farkles,
                                                        opp_farkles),
                i, self.opponent_streak_values, self.opponent_catch)
        if my_farkles or opp_farkles:
            raise UserError("lost turns in a row matter only under a farkle penalty")
        a, b = self._unit("my total", my_total), self._unit("opponent total", opp_total)
        sa, tables, turn, solved = self._kernel_args()
        rows = max(self.table_rows, i + sa.max_points + 2) + sa.max_points + turn.t \
            + tables.d_eps + turn.hot_rows + 2
        work = _work(rows)
        beta = 1.0 - solved.value[b, a]
        # rows past i filled (under must-roll the six dice's guess rows past those)
        _turn_kernel(a, b, beta, turn, sa.arrays(), solved, tables.catch, work,
                     i + sa.max_points + turn.hot_rows + 2, False)
        roll = np.zeros(7)
        _roll_values(i, beta, turn, sa.arrays(), work, roll)
        m = a + i
        bank = 1.0 - (solved.value[b, m] if m < turn.t else tables.catch.value[b, m - b])
        return float(bank), roll

    def policy_table(self) -> PolicyTable:
        """The policy as a :class:`PolicyTable` for the simulation kernel.

        ``value/bank``: shape (t, t, P, 7), ``t = target // 50``, ``P = table_rows``;
        ``last_value/last_bank``: shape (D, P, 7) with ``D = P - max points of a roll``
        (deficits from ``(D - 1) * 50`` on are played as ``(D - 1) * 50``; the chance to
        catch up from there is ``last_round_values[D - 1]``). Built on first call (one turn
        DP per score pair), kept in memory and, if the solve used the cache, cached on disk
        next to the solution (it is large: see ``policy_table_bytes``).
        """
        table = self._memo.get("table")
        if table is not None:
            return table
        check_memory(f"the {self.policy} policy table to {self.target:,}",
                     self.policy_table_bytes * 1.5)
        key = self._memo.get("cache_key")
        if key is None:
            arrays = self._build_table()
        else:
            arrays, _ = cache.cached(f"{key}-policy-table", FORMAT_VERSION, self._build_table)
        last = (arrays["last_value"], arrays["last_bank"]) if "last_value" in arrays \
            else (None, None)
        table = PolicyTable(self.policy, arrays["value"], arrays["bank"], *last,
                            floor=self.floor_points // POINT_UNIT)
        self._memo["table"] = table
        return table

    def _build_table(self) -> dict[str, np.ndarray]:
        if self.streak_values is not None:
            from dicelab.farkle import penalty_game

            sa = set_asides(self.farkle_rules)
            tables = _last_round(sa, self.farkle_rules, self.target // POINT_UNIT,
                                 self.cap_tolerance)
            arrays = penalty_game.table_arrays(sa, self.farkle_rules, self.cap_tolerance,
                                               self.streak_values, self.table_rows,
                                               self.opponent_streak_values,
                                               self.opponent_catch)
        else:
            sa, tables, turn, solved = self._kernel_args()
            arrays = self._table_arrays(sa, tables, turn, solved)
        if self.farkle_rules.ending_code == FIRST_TO_BANK:
            return arrays  # no last round to play
        return {**arrays, **self._last_round_table(sa, tables, arrays["value"].shape[-2])}

    def _table_arrays(self, sa: SetAsides, tables: _Tables, turn: Turn, solved: Solved
                      ) -> dict[str, np.ndarray]:
        t = turn.t
        n_p = self.table_rows
        rows_max = t + tables.d_eps + turn.hot_rows + sa.max_points + 2
        top = np.zeros((t, t), dtype=np.int64)
        while True:
            value = np.empty((t, t, n_p, 7), dtype=np.float32)
            bank = np.empty((t, t, n_p, 7), dtype=np.uint8)
            _fill_table_kernel(n_p, turn, sa.arrays(), solved, tables.catch, rows_max, value, bank,
                               top)
            # the solve's last pass ran at a bust value one tiny step away from this one,
            # so its cap can in principle sit one row lower: then widen and refill
            if top.max() + turn.hot_rows + sa.max_points <= n_p:
                return {"value": value, "bank": bank}
            n_p = int(top.max()) + turn.hot_rows + sa.max_points

    def _last_round_table(self, sa: SetAsides, tables: _Tables, n_p: int
                          ) -> dict[str, np.ndarray]:
        """The last round's table (``last_value``/``last_bank``, (D, P, 7))."""
        last = tables.last
        d_rows = n_p - sa.max_points
        x = np.arange(d_rows)[:, None] - np.arange(n_p)[None, :]  # need left, (D, P)
        lv_pad = np.ones((d_rows, n_p, 7))
        lb = np.zeros((d_rows, n_p, 7), dtype=np.uint8)
        inside = x >= 0
        lv_pad[inside] = last.lv[x[inside]]
        lb[~inside] = 1
        if self.farkle_rules.hot_dice == "must-roll":  # ahead with six dice: roll on
            lv_pad[:, :, HOT_DICE][~inside] = _ahead6(sa, self.farkle_rules)
            lb[:, :, HOT_DICE] = 0
        tie_bank = (x == 0)[:, :, None] & (last.lw[0][None, None, :] == 0.0) \
            & (last.lt[0][None, None, :] == 1.0)
        lb[tie_bank] = 1
        f = tables.reach.shape[0]
        if f > 1:  # a lead below the minimum to bank: play to reach it (see _last_round)
            below = min(f, d_rows)
            lv_pad[:below, :f] = tables.reach[None, :, :]
            lb[:below, :f] = 0
        lv_pad[:, :, 0] = 0.0
        lb[:, :, 0] = 0
        return {"last_value": lv_pad.astype(np.float32), "last_bank": lb}

    def to_dict(self) -> dict:
        """JSON-able summary (all scalar fields)."""
        second = self.second_outcome
        return {"game": "farkle", "policy": self.policy, "target": self.target,
                "rules": self.rules, "ending": self.farkle_rules.ending,
                "tolerance": self.tolerance, "states": self.states,
                "solve_s": self.solve_s, "elapsed_s": self.elapsed_s,
                "from_cache": self.from_cache,
                "memory_bytes": self.memory_bytes, "p_win": self.p_win, "p_tie": self.p_tie,
                "p_loss": self.p_loss, "second_p_win": second[0], "second_p_tie": second[1],
                "second_p_loss": second[2], "fair_head_start": self.fair_head_start,
                "fair_head_start_value": self.fair_head_start_value,
                "turn_dps": self.turn_dps, "table_rows": self.table_rows,
                "policy_table_bytes": self.policy_table_bytes,
                **({} if self.streak_values is None else {
                    "farkle_penalty": self.farkle_rules.farkle_penalty,
                    "floor_points": self.floor_points, "sweeps": self.sweeps})}

    @property
    def policy_table_bytes(self) -> int:
        """Size of :meth:`policy_table` (value float32 + bank uint8, both tables)."""
        t = self.target // POINT_UNIT
        states = t * t if self.streak_values is None else self.streak_values.size
        d_rows = 0 if self.farkle_rules.ending_code == FIRST_TO_BANK else \
            self.table_rows - set_asides(self.farkle_rules).max_points
        return (states + d_rows) * self.table_rows * 7 * 5


#: Bytes per score pair of a solve: values, win and tie probabilities of both movers,
#: cap rows, solver diagnostics.
_PAIR_BYTES = 8 * (6 + 1 + 4)


def _check(rules: FarkleRules, target, tol) -> tuple[int, float, SetAsides]:
    rules.require_solvable("optimal-win", must_roll=True, penalty=True)
    target = check_target(target)
    if not (isinstance(tol, float | int) and 0.0 < tol < 1e-2):
        raise UserError(f"tolerance must be a number in (0, 0.01), not {tol!r}")
    sa = set_asides(rules)
    if np.all(sa.bust[1:] == 0.0):
        raise UserError("optimal-win needs a scoring table under which some roll busts")
    t = target // POINT_UNIT
    check_memory(f"optimal-win to {target:,} ({t:,} x {t:,} score pairs)", t * t * _PAIR_BYTES)
    return target, float(tol), sa


def _solved(key: str, version: str | int, build, use_cache: bool,
            progress: Callable[[float], None] | None) -> tuple[dict[str, np.ndarray], bool]:
    def timed() -> dict[str, np.ndarray]:
        start = time.perf_counter()
        arrays = build()
        arrays["meta"] = np.append(arrays["meta"], time.perf_counter() - start)
        return arrays

    arrays, from_cache = cache.cached(key, version, timed) if use_cache else (timed(), False)
    if progress is not None and from_cache:
        progress(1.0)
    return arrays, from_cache


def _solution(rules: FarkleRules, target: int, tol: float, sa: SetAsides, tables: _Tables,
              arrays: dict[str, np.ndarray], from_cache: bool, t0: float,
              opponent: str | None, key: str | None) -> OptimalWinSolution:
    w_val, w_win, w_tie, top, meta = (arrays[k] for k in ("w_val", "w_win", "w_tie", "top",
                                                          "meta"))
    bound, turn_dps, _max_dps, seconds = (float(x) for x in meta)
    tie = float(w_tie[0, 0])
    win = float(w_win[0, 0])
    h = int(np.argmin(np.abs(w_val[0, :] - 0.5)))  # first (smallest) of equals
    last = tables.last
    n_last = 0 if rules.ending_code == FIRST_TO_BANK else last.s.size * 6
    states = int(np.maximum(top, 1).sum() - top.size) * 6 + top.size + n_last
    theirs = {} if opponent is None else {
        "opponent_values": arrays["o_val"], "opponent_win": arrays["o_win"],
        "opponent_tie": arrays["o_tie"]}
    sol = OptimalWinSolution(
        target=target, rules=rules.name, tolerance=bound, cap_tolerance=tol, states=states,
        solve_s=seconds, elapsed_s=time.perf_counter() - t0, from_cache=from_cache,
        memory_bytes=int(sum(a.nbytes for a in arrays.values()) + last.lv.nbytes * 3
                         + last.s.nbytes * 3),
        p_win=win, p_tie=tie, p_loss=1.0 - win - tie, fair_head_start=h * POINT_UNIT,
        fair_head_start_value=float(w_val[0, h]), turn_dps=int(turn_dps),
        table_rows=_table_rows(top, sa, tables, tol, must_roll_rows(rules)),
        farkle_rules=rules, values=w_val,
        win_probability=w_win, tie_probability=w_tie, last_round_values=last.s,
        opponent=opponent, **theirs)
    sol._memo["last"] = tables
    if key is not None:
        sol._memo["cache_key"] = key
    return sol


def solve_optimal_win(rules: FarkleRules, target: int, *, tol: float = config.OPTIMAL_WIN_TOL,
                      use_cache: bool = True,
                      progress: Callable[[float], None] | None = None) -> OptimalWinSolution:
    """Solve two-player Farkle for ``P(win) + 0.5 P(tie)`` under ``rules`` and ``target``.

    ``target``: positive multiple of 50 (points). ``rules.ending``: ``last-round`` or
    ``first-to-bank`` (then banking the target wins at once). ``tol``: the turn-points cap
    (banking from there on costs at most ``tol``); the achieved error bound is
    ``solution.tolerance``. The solution is cached on disk (key: the rules' content
    digest, target, tolerance, format version); a corrupt or stale entry is rebuilt.
    ``progress(fraction_done)`` is called after each anti-diagonal of score pairs.

    >>> from dicelab.farkle.rules import PRESETS
    >>> sol = solve_optimal_win(PRESETS["default"], 1000)
    >>> round(sol.p_win + sol.p_tie / 2, 4), sol.fair_head_start
    (0.5767, 300)
    """
    target, tol, sa = _check(rules, target, tol)
    t = target // POINT_UNIT
    if rules.farkle_penalty:
        return _penalty_solution(rules, target, tol, sa, use_cache, progress)
    tables = _last_round(sa, rules, t, tol)
    key = _cache_key(rules, target, tol)
    t0 = time.perf_counter()
    arrays, from_cache = _solved(key, FORMAT_VERSION,
                                 lambda: _solve_arrays(sa, rules, t, tol, tables, progress),
                                 use_cache, progress)
    return _solution(rules, target, tol, sa, tables, arrays, from_cache, t0, None,
                     key if use_cache else None)


def _opponent_tables(sa: SetAsides, rules: FarkleRules, target: int, tol: float, opponent
                     ) -> tuple[_Tables, Any, tuple[Catch, ...]]:
    """My optimal last turn, and the fixed opponent's side: its turn slices' outcomes and
    its own last turn when I bank the target (the :class:`Catch` of a best response), one
    per lost-turn count under the farkle penalty (then over the penalty's grid of totals,
    :func:`dicelab.farkle.head_to_head.grid_of`). The returned tables' ``catch`` is the
    one at count 0."""
    from dicelab.farkle import head_to_head

    grid = head_to_head.grid_of(rules, target)
    u = grid.t + grid.floor
    mine = _last_round(sa, rules, u, tol)
    x_max = mine.last.s.shape[0]
    while True:
        side = head_to_head.turn_outcomes(
            head_to_head.policy_slices(opponent, target, x_max, grid), rules)
        if rules.ending_code == FIRST_TO_BANK:
            none = _catch(*(np.zeros((u, x_max)) for _ in range(3)))
            return (_Tables(mine.last, mine.d_eps, none, mine.reach), side,
                    (none,) * grid.streaks)
        win = side.catch_win[..., :x_max].reshape(grid.streaks, u, x_max)
        tie = side.catch_tie[..., :x_max].reshape(grid.streaks, u, x_max)
        catches = tuple(_catch(w + 0.5 * t_, w, t_) for w, t_ in zip(win, tie, strict=True))
        below = np.stack([c.cap for c in catches]) <= tol
        if below[..., -1].all():
            d_eps = int(np.argmax(below, axis=-1).max())
            return (_Tables(mine.last, max(d_eps, mine.d_eps), catches[0], mine.reach), side,
                    catches)
        if x_max > 2 * u + 8 * sa.max_points + 64 + _MAX_LAST_ROUND:
            raise UserError("the opponent's last turn goes on almost forever; its best "
                            "response cannot be solved")
        x_max *= 2


def _my_catch(tables: _Tables, t: int) -> Catch:
    """My optimal last turn as a :class:`Catch` over ``t`` indices of the other's total (a
    best response's, when the opponent banks the target)."""
    last = tables.last
    return _catch(*(np.broadcast_to(a, (t, a.size)) for a in (last.s, last.sw, last.st)))


def solve_best_response(rules: FarkleRules, target: int, opponent, *,
                        tol: float = config.OPTIMAL_WIN_TOL, use_cache: bool = True,
                        progress: Callable[[float], None] | None = None
                        ) -> OptimalWinSolution:
    """The policy of maximum ``P(win) + 0.5 P(tie)`` against a fixed ``opponent``
    (``optimal-win:vs=OPPONENT``): any Farkle policy :mod:`dicelab.farkle.head_to_head`
    evaluates (a name, a PolicySpec or a PolicyTable).

    The solution's ``values`` are this policy's, as the player to move; ``opponent_values``
    the opponent's, as the player to move; ``p_win``/``p_tie`` from 0 : 0 moving first,
    ``second_outcome`` moving second. Exact up to ``tolerance``, like
    :func:`solve_optimal_win`; cached on disk for named opponents.

    >>> from dicelab.farkle.rules import PRESETS
    >>> br = solve_best_response(PRESETS["default"], 1000, "threshold-300")
    >>> br.policy, round(br.p_win + br.p_tie / 2, 4) > 0.6
    ('optimal-win:vs=threshold-300', True)
    """
    from dicelab.farkle import head_to_head

    target, tol, sa = _check(rules, target, tol)
    t = target // POINT_UNIT
    opp = head_to_head.resolve(opponent, rules, target)
    name = opp.name
    tables, side, catches = _opponent_tables(sa, rules, target, tol, opp)
    if rules.farkle_penalty:
        return _penalty_response(rules, target, tol, sa, tables, side, catches, name,
                                 opponent, use_cache, progress)

    def build() -> dict[str, np.ndarray]:
        turn = _turn(sa, t, tol, rules)
        mine = Solved(np.zeros((t, t)), np.zeros((t, t)), np.zeros((t, t)))
        theirs = Solved(np.zeros((t, t)), np.zeros((t, t)), np.zeros((t, t)))
        top = np.zeros((t, t), dtype=np.int64)
        info = np.zeros((t, t, 4))
        rows_max = t + tables.d_eps + turn.hot_rows + sa.max_points + 2
        steps = (config.OPTIMAL_WIN_NEWTON_STEPS, config.OPTIMAL_WIN_FIXED_POINT_STEPS)
        ftb = rules.ending_code == FIRST_TO_BANK
        rolls = sa.arrays()
        my_catch = _my_catch(tables, t)
        bound = 0.0
        for diag in range(2 * t - 2, -1, -1):
            _respond_diagonal_kernel(diag, turn, rolls, mine, theirs, tables.catch, side,
                                     my_catch, ftb, rows_max, steps, top, info)
            a = np.arange(max(0, diag - (t - 1)), min(diag, t - 1) + 1)
            bound = max(bound, info[a, diag - a, 0].max()) + info[a, diag - a, 1].max() \
                + _ROUNDING
            if progress is not None:
                progress(1.0 - diag / max(2 * t - 2, 1))
        meta = np.array([bound, float(info[..., 3].sum()), float(info[..., 3].max())])
        return {"w_val": mine.value, "w_win": mine.win, "w_tie": mine.tie,
                "o_val": theirs.value, "o_win": theirs.win, "o_tie": theirs.tie,
                "top": top, "meta": meta}

    named = not isinstance(opponent, PolicyTable)
    key = cache.entry_key("farkle-best-response", rules.name, rules.digest(), t=target,
                          tol=f"{tol:.3g}", vs=text_digest(name)[:12])
    t0 = time.perf_counter()
    arrays, from_cache = _solved(key, f"{FORMAT_VERSION}:{name}", build,
                                 use_cache and named, progress)
    return _solution(rules, target, tol, sa, tables, arrays, from_cache, t0, name,
                     key if use_cache and named else None)


def _table_rows(top: np.ndarray, sa: SetAsides, tables: _Tables, tol: float,
                hot_rows: int = 0) -> int:
    """Rows P of the policy table: past every rolling state plus one roll, and enough
    last-round deficits D = P - max points that a larger lead is caught up with a chance of
    at most 1e-6 (the table plays such a lead as D - 1)."""
    d_small = int(np.nonzero(tables.last.s <= max(tol, _LAST_ROUND_CLAMP))[0][0])
    return max(int(top.max()) + hot_rows, d_small + 1) + sa.max_points


@functools.lru_cache(maxsize=8)
def least_policy_table_bytes(rules: FarkleRules, target: int,
                             tol: float = config.OPTIMAL_WIN_TOL) -> int:
    """A lower bound of :attr:`OptimalWinSolution.policy_table_bytes` (self-play or a best
    response), known before the solve: at least ``t * t`` states, and at least the rows
    of :func:`_table_rows` that do not depend on the solve (the last-round deficits and
    one roll; under the penalty and ``first-to-bank``, the totals' rows), and under the
    penalty the runs of lost turns of both players and totals down to the penalty's
    floor. Held once per process, rule set and target."""
    target, tol, sa = _check(rules, target, tol)
    t = target // POINT_UNIT
    ftb = rules.ending_code == FIRST_TO_BANK
    u = t + rules.penalty_floor()  # totals per side (under the penalty, below zero too)
    states = PENALTY_STREAK**2 * u * u if rules.farkle_penalty else t * t
    if rules.farkle_penalty and ftb:
        rows = u + 1
    else:
        last = _last_round(sa, rules, t, tol)
        d_small = int(np.nonzero(last.last.s <= max(tol, _LAST_ROUND_CLAMP))[0][0])
        rows = max(must_roll_rows(rules), d_small + 1) + sa.max_points
    d_rows = 0 if ftb else rows - sa.max_points
    return (states + d_rows) * rows * 7 * 5


def _penalty_table_rows(sa: SetAsides, rules: FarkleRules, tol: float, vv: np.ndarray,
                        other: np.ndarray | None = None, catches: tuple | None = None
                        ) -> int:
    """Rows P of the penalty solution's policy table. Under ``first-to-bank`` every row
    from ``T - x`` on (the target reached) banks and wins, with the same value, so rows up
    to the top index ``T`` are enough: the kernel plays any more points as row ``T``.
    ``other``/``catches``: a best response's opponent (:func:`penalty_game.cap_rows`)."""
    from dicelab.farkle import penalty_game

    if rules.ending_code == FIRST_TO_BANK:
        return vv.shape[2] + 1
    t = vv.shape[2] - rules.penalty_floor()
    return _table_rows(penalty_game.cap_rows(sa, rules, tol, vv, other, catches), sa,
                       _last_round(sa, rules, t, tol), tol, must_roll_rows(rules))


def _penalty_key(kind: str, rules: FarkleRules, target: int, tol: float, **more) -> str:
    return cache.entry_key(kind, rules.name, rules.digest(), t=target, tol=f"{tol:.3g}",
                           floor=rules.penalty_floor(),
                           sweep_tol=f"{config.PENALTY_SWEEP_TOL:.3g}", **more)


def _penalty_solution(rules: FarkleRules, target: int, tol: float, sa: SetAsides,
                      use_cache: bool, progress: Callable[[float], None] | None
                      ) -> OptimalWinSolution:
    """``optimal-win`` under the farkle penalty (:mod:`dicelab.farkle.penalty_game`)."""
    from dicelab.farkle import penalty_game

    t = target // POINT_UNIT
    big_t = t + rules.penalty_floor()
    check_memory(f"optimal-win with the farkle penalty to {target:,} "
                 f"({penalty_game.K ** 2} x {big_t:,} x {big_t:,} states)",
                 penalty_game.solve_bytes(big_t))
    key = _penalty_key("farkle-optimal-win-penalty", rules, target, tol)
    t0 = time.perf_counter()
    arrays, from_cache = _solved(
        key, penalty_game.FORMAT_VERSION,
        lambda: penalty_game.solve_penalty_arrays(sa, rules, t, tol, progress), use_cache,
        progress)
    return _streak_solution(rules, target, tol, sa, arrays, ("v_val", "v_win", "v_tie"),
                            from_cache, t0)


def _streak_solution(rules: FarkleRules, target: int, tol: float, sa: SetAsides,
                     arrays: dict[str, np.ndarray], mine: tuple[str, str, str],
                     from_cache: bool, t0: float, opponent: str | None = None,
                     catches: tuple[Catch, ...] | None = None) -> OptimalWinSolution:
    """The :class:`OptimalWinSolution` of a solve under the farkle penalty: self-play, or
    a best response to ``opponent`` (its values ``o_val``/``o_win``/``o_tie`` in
    ``arrays``, its last turns ``catches``)."""
    floor = rules.penalty_floor()
    vv, vw, vt = (arrays[k] for k in mine)
    estimate, turn_dps, sweeps, _floor, states, _evaluations, seconds = (
        float(x) for x in arrays["meta"])

    def at_zero(x: np.ndarray) -> np.ndarray:  # no lost turns, totals from 0
        return np.ascontiguousarray(x[0, 0, floor:, floor:])

    w_val, w_win, w_tie = (at_zero(x) for x in (vv, vw, vt))
    win, tie = float(w_win[0, 0]), float(w_tie[0, 0])
    h = int(np.argmin(np.abs(w_val[0, :] - 0.5)))
    theirs: dict[str, Any] = {}
    if opponent is not None:
        theirs = {"opponent": opponent, "opponent_values": at_zero(arrays["o_val"]),
                  "opponent_win": at_zero(arrays["o_win"]),
                  "opponent_tie": at_zero(arrays["o_tie"]),
                  "opponent_streak_values": arrays["o_val"], "opponent_catch": catches}
    t = target // POINT_UNIT
    return OptimalWinSolution(
        target=target, rules=rules.name, tolerance=estimate, cap_tolerance=tol,
        states=int(states), solve_s=seconds,
        elapsed_s=time.perf_counter() - t0, from_cache=from_cache,
        memory_bytes=int(sum(a.nbytes for a in arrays.values())), p_win=win, p_tie=tie,
        p_loss=1.0 - win - tie, fair_head_start=h * POINT_UNIT,
        fair_head_start_value=float(w_val[0, h]), turn_dps=int(turn_dps),
        table_rows=_penalty_table_rows(sa, rules, tol, vv, theirs.get("opponent_streak_values"),
                                       catches),
        farkle_rules=rules, values=w_val, win_probability=w_win, tie_probability=w_tie,
        last_round_values=_last_round(sa, rules, t, tol).last.s, streak_values=vv,
        streak_win=vw, streak_tie=vt, floor_points=floor * POINT_UNIT, sweeps=int(sweeps),
        **theirs)


def _penalty_response(rules: FarkleRules, target: int, tol: float, sa: SetAsides,
                      tables: _Tables, side: Any, catches: tuple[Catch, ...], name: str,
                      opponent: Any, use_cache: bool,
                      progress: Callable[[float], None] | None) -> OptimalWinSolution:
    """A best response under the farkle penalty (:mod:`dicelab.farkle.penalty_response`)."""
    from dicelab.farkle import penalty_response

    t = target // POINT_UNIT
    big_t = t + rules.penalty_floor()
    check_memory(f"a best response with the farkle penalty to {target:,} "
                 f"({2 * penalty_response.K ** 2} x {big_t:,} x {big_t:,} states)",
                 penalty_response.respond_bytes(big_t))
    turn = _turn(sa, big_t, tol, rules)
    rows_max = big_t + tables.d_eps + turn.hot_rows + sa.max_points + 2
    my_catch = _my_catch(tables, big_t)

    def build() -> dict[str, np.ndarray]:
        return penalty_response.solve_response_arrays(sa, rules, t, tol, side, catches,
                                                      my_catch, rows_max, progress)

    named = not isinstance(opponent, PolicyTable)
    key = _penalty_key("farkle-best-response-penalty", rules, target, tol,
                       vs=text_digest(name)[:12])
    t0 = time.perf_counter()
    arrays, from_cache = _solved(key, f"{penalty_response.FORMAT_VERSION}:{name}", build,
                                 use_cache and named, progress)
    return _streak_solution(rules, target, tol, sa, arrays, ("m_val", "m_win", "m_tie"),
                            from_cache, t0, name, catches)
