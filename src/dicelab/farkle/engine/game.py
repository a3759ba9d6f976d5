"""Two-player Farkle as one sweep over the players' states (layer 1).

A state is a turn's start: the mover's lost turns in a row ``s`` and the other's ``r``,
the mover's total index ``x`` and the other's ``y`` (index = total in units of 50 plus
the model's ``floor``; ``U``, the target's index, ends the game or starts its last
round). Its value is the mover's P(win) + P(tie)/2. Two seats play: seat A, *optimal*
(its best turn against the values around it) or *fixed* (a policy whose turn endings
are known), and seat B, fixed, or seat A itself (self-play). A state's turn either
banks (the other moves next, at a larger sum of the totals; past the target the other
plays its last turn, or under ``first-to-bank`` the mover wins) or is lost (the other
moves next with the mover's count one higher, or after ``streak`` lost turns the
mover's total lowered by the penalty).

So the states are solved in *units*: the states of A at ``(x, y)`` and of B at ``(y,
x)`` (every count), swept by decreasing ``x + y``, one sum's units in parallel. Within a
unit a lost turn moves to a higher count sum, except the last lost turn of a streak:

* **Exact** (``streak == 1``: nothing lowers a total). A unit is two states whose lost
  turns lead to each other: ``X = f_A(1 - Y)``, ``Y = f_B(1 - X)``. With fixed turns
  each ``f`` is a line in the lost turn's value (slope: the chance to lose), so each
  optimal turn DP returns the line of its policy and the interval over which that
  policy stays optimal (:func:`~dicelab.farkle.engine.turn.turn_back` with ``track``),
  and the two lines are solved exactly (Newton's method on a piecewise-linear map,
  i.e. policy iteration), stopping when the solution lies inside both intervals:
  typically one or two turn DPs a state. One sweep solves the game.
* **Iterated** (a penalty lowers a total). The states of a unit are visited in
  decreasing order of their counts' sum, each once; the last lost turn of a streak
  reads a lower sum from the sweep before (Gauss-Seidel). An optimal state's turn is
  kept as how it ends (the chance to bank at each total below the target, and the
  value, P(win) and P(tie) of its banks past it, and of losing it), so that with the
  turns fixed a sweep is a dot product per state: *improvement* sweeps solve every
  optimal turn and keep it (or the turn kept before, where that is as good);
  *evaluation* sweeps re-evaluate the kept turns. The caller alternates them (policy
  iteration).

The outcome split (P(win), P(tie)) is carried by the same formulas from every state's
turn ending; an optimal turn's ending is its final table followed forwards
(:func:`~dicelab.farkle.engine.turn.turn_ends`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange, uint64

from dicelab.farkle.engine import turn
from dicelab.farkle.engine.model import CLIMB_ERR
from dicelab.farkle.rules import HOT_DICE

#: Per sum of the totals: float64 rounding of one unit's solve (added to the bound).
ROUNDING = 2.0**-50
#: An improvement sweep keeps a state's turn whose value falls short of the new turn DP's
#: by at most this (rounding: the largest gap between a DP and the evaluation of its own
#: ending is about 1e-15); the gap enters the error bound.
KEEP_GAP = 1e-14
#: ``improve`` of :func:`unit_chain`: solve every optimal turn with its choices, or (where
#: a turn is kept) its values first, and its choices only where the new turn is better.
IMPROVE, IMPROVE_VALUES_FIRST = 1, 2


class Game(NamedTuple):
    """What every state of one solve shares (with the :class:`~.model.Model`, which the
    kernels take beside it: a tuple in a tuple does not reach a parallel loop)."""

    u: int  # the target's index
    eps: float  # the turn-points cap's tolerance
    self_play: bool  # seat B is seat A
    a_optimal: bool  # seat A plays its best turn (else its fixed turns)
    rows: int  # rows of a turn DP's scratch
    newton: int  # Newton steps of an exact unit before plain fixed-point steps
    fixed_point: int  # the most fixed-point steps (with ``start``: the steps)
    start: bool  # a start for iterated sweeps: values alone (see :func:`unit_start`)


class Seat(NamedTuple):
    """One seat: its values as the mover (K, K, U, U), its last turn when the other banks
    the target (``c_*[count, own index, lead]``; ``c_cap``: the largest value at that lead
    or beyond), and its fixed turns (``normal[s, r, x, y]``: the slice played there,
    ``dist[slice, g]``: P(bank a gain of g units), ``bust[slice]``)."""

    v: np.ndarray
    w: np.ndarray
    t: np.ndarray
    c_val: np.ndarray
    c_win: np.ndarray
    c_tie: np.ndarray
    c_cap: np.ndarray
    bust: np.ndarray
    dist: np.ndarray
    normal: np.ndarray


class Kept(NamedTuple):
    """Seat A's optimal turns as they end (the iterated mode): ``dist`` rows of P(bank at
    index m), m = x + 1 .. U - 1, of state (s, r, x, y) at ``((s K + r) U + y) offs[U] +
    offs[x]``; ``ends[s, r, x, y]`` = (value, P(win), P(tie) of banks past the target,
    P(lost turn); -1 before a turn is kept)."""

    dist: np.ndarray
    offs: np.ndarray
    ends: np.ndarray


class Info(NamedTuple):
    """Per unit ``[x, y]``: the cap's error, the fixed point's error, turn DPs (exact
    mode); the largest change, turn-DP states, the gap between a turn DP and its ending's
    evaluation, the turns followed forwards (iterated mode)."""

    cap_err: np.ndarray
    fp_err: np.ndarray
    dps: np.ndarray
    change: np.ndarray
    states: np.ndarray
    gap: np.ndarray
    followed: np.ndarray


class Scratch(NamedTuple):
    """A turn DP's tables and its forward pass (see :mod:`~dicelab.farkle.engine.turn`)."""

    v: np.ndarray
    bp: np.ndarray
    bk: np.ndarray
    choice: np.ndarray
    reach: np.ndarray
    bankv: np.ndarray
    edge: np.ndarray
    ends: np.ndarray
    bounds: np.ndarray


@njit(cache=True)
def scratch(m, rows):
    """Fresh :class:`Scratch` over ``rows`` rows."""
    return Scratch(np.empty(rows * 7), np.empty(rows * 7), np.empty(rows * 7, dtype=np.uint8),
                   np.empty(rows * m.class_prob.size, dtype=np.int32),
                   np.empty((rows + m.max_points + 1) * 7), np.empty(rows), np.empty(rows),
                   np.empty(rows), np.empty(2))


@njit(inline="always")
def lost_turn(m, s, r, x):
    """Where a lost turn of the mover (counts ``s`` mine, ``r`` the other's, my index
    ``x``) leads, as the other's state: (its count, mine, my index)."""
    if s < m.streak - 1:
        return r, s + 1, x
    return r, 0, max(x - m.penalty, 0)


@njit(inline="always")
def banks(m, g, d, x, y, r, other, split, lo):
    """The bank part of a turn ending ``d`` (``d[k]``: P(bank a gain of ``lo + k``), at
    index ``x + lo + k``) against the other at ``y`` with count ``r``: (value, P(win),
    P(tie)) for the mover. A bank below the target hands the turn to the other (my count
    back to 0): a dot product with the other's values, without a branch. Past it the
    other plays its last turn (its catch-up tables, read at their edge past their last
    lead), or under ``first-to-bank`` the mover wins at once."""
    v = w = t = 0.0
    n = d.size
    base = x + lo
    below = min(n, max(g.u - base, 0))
    ov = other.v[r, 0, y]
    for k in range(uint64(below)):
        v += d[k] * (1.0 - ov[uint64(base) + k])
    if split:
        ow = other.w[r, 0, y]
        ot = other.t[r, 0, y]
        for k in range(uint64(below)):
            q = uint64(base) + k
            w += d[k] * (1.0 - ow[q] - ot[q])
            t += d[k] * ot[q]
    if m.first_to_bank:  # past the target: a win
        for k in range(below, n):
            v += d[k]
            w += d[k]
        return v, w, t
    cv = other.c_val[r, y]  # past the target: the other's last turn
    cw = other.c_win[r, y]
    ct = other.c_tie[r, y]
    last = cv.size - 1
    for k in range(below, n):
        p = d[k]
        if p == 0.0:
            continue
        q = min(base + k - y, last)
        v += p * (1.0 - cv[q])
        w += p * (1.0 - cw[q] - ct[q])
        t += p * ct[q]
    return v, w, t


@njit(inline="always")
def lost_value(m, g, other, s, r, x, y):
    """(value, P(win), P(tie)) for the mover of losing the turn."""
    c, bs, bx = lost_turn(m, s, r, x)
    ov = other.v[c, bs, y, bx]
    ot = other.t[c, bs, y, bx]
    return 1.0 - ov, 1.0 - other.w[c, bs, y, bx] - ot, ot


@njit(inline="always")
def cap_row(m, g, other, r, x, y, beta):
    """The turn's cap from ``(x, y)``: rows ``>= top`` bank for sure where the rules allow
    (six dice rolling on excepted). Rolling gains at most ``c - bust_min (1 - beta)`` over
    banking at a lead whose catch-up value (or any larger lead's) is ``c``: every roll
    loses with at least the smallest chance, every other outcome is worth at most 1. So
    from the first lead with ``c <= bust_min (1 - beta)`` on, banking is exact; where that
    is further than the tolerance cap (``c <= eps``) the turn is cut there, costing at
    most ``c``. Returns (top, c, cap error): 0 for the exact cap, valid while
    ``c <= bust_min (1 - beta')``."""
    margin = m.bust_min * (1.0 - beta)
    thr = max(margin, g.eps)
    d = max(g.u - y, 1)
    while other.c_cap[r, y, d] > thr:
        d += 1
    c = other.c_cap[r, y, d]
    top = max(y + d - x, m.bank_floor[1])
    return top, c, 0.0 if c <= margin else c


@njit(cache=True)
def optimal_turn(m, g, other, s, r, x, y, beta, sc, fill_to, track, decide=True):
    """The optimal turn of the mover at state (s, r, x, y) with a lost turn worth ``beta``:
    its table in ``sc`` over at least ``fill_to`` rows (without ``decide``, its values and
    bank decisions alone). Returns (value, slope, top, cap error, rows); with ``track``
    ``sc.bounds`` is the interval of ``beta`` over which the policy stays optimal (its
    value then a line of the slope), the cap's validity included."""
    top, c, cap_err = cap_row(m, g, other, r, x, y, beta)
    if m.six_rows > 0:
        # six dice climb past the rows held with a chance of at most CLIMB_ERR (their value
        # there a guess in [0, 1]), and leads past the catch tables are read at their edge
        cap_err += CLIMB_ERR + other.c_cap[r, y, other.c_cap.shape[2] - 1]
    rows = max(top + m.six_rows + m.max_points, fill_to)
    bust6 = m.bust[HOT_DICE]
    below = min(rows, max(g.u - x, 0))
    ov = other.v[r, 0, y]
    for i in range(uint64(below)):
        sc.bankv[i] = 1.0 - ov[uint64(x) + i]
    if m.first_to_bank:  # past the target: as banks() values a bank there
        sc.bankv[below:rows] = 1.0
    else:
        cv = other.c_val[r, y]
        last = cv.size - 1
        for i in range(below, rows):
            sc.bankv[i] = 1.0 - cv[min(x + i - y, last)]
    if m.six_rows > 0:
        for i in range(rows):
            sc.edge[i] = m.six_bank * sc.bankv[i] + bust6 * beta
    if track:
        sc.bounds[0] = max(0.0, beta - turn.WINDOW)
        sc.bounds[1] = min(1.0, beta + turn.WINDOW)
        if cap_err == 0.0 and c > 0.0:  # the cap is exact while c <= bust_min (1 - beta')
            sc.bounds[1] = min(sc.bounds[1], 1.0 - c / m.bust_min)
        value, slope = turn.turn_back_tracked(m, m.bank_floor, sc.bankv, sc.edge, bust6, beta,
                                              top, rows, sc.v, sc.bp, sc.bk, sc.choice,
                                              sc.bounds)
    elif decide:
        value, slope = turn.turn_back(m, m.bank_floor, sc.bankv, sc.edge, bust6, beta, top,
                                      rows, sc.v, sc.bp, sc.bk, sc.choice)
    else:
        value, slope = turn.turn_value(m, m.bank_floor, sc.bankv, sc.edge, bust6, beta, top,
                                       rows, sc.v, sc.bk)
    return value, slope, top, cap_err, rows


@njit(cache=True)
def optimal_ends(m, g, sc, rows):
    """The turn in ``sc`` (over ``rows`` rows) followed forwards: ``sc.ends[i]`` = P(bank
    at row i); returns P(lost turn)."""
    out = sc.ends[:rows]
    out[:] = 0.0
    return turn.turn_ends(m, sc.bk, rows, sc.choice, rows, True, sc.reach, out)[0]


@njit(inline="always")
def _guess(v, x, y, u):
    """A start for the fixed point of (x, y) from solved states further along."""
    if x + 1 < u and y + 1 < u:
        return min(1.0, max(0.0, v[0, 0, x + 1, y] + v[0, 0, x, y + 1] - v[0, 0, x + 1, y + 1]))
    if y + 1 < u:
        return v[0, 0, x, y + 1]
    if x + 1 < u:
        return v[0, 0, x + 1, y]
    return 0.5


@njit(inline="always")
def cycle_outcomes(win_a, tie_a, bust_a, win_b, tie_b, bust_b):
    """P(win) and P(tie) of the mover at each state of a unit from what it reaches through
    banks and its chance to lose the turn, which hands the turn to the other state: a
    2 x 2 linear system. Returns (first's win, tie, second's win, tie)."""
    det = 1.0 - bust_a * bust_b
    ta = (tie_a + bust_a * tie_b) / det
    tb = tie_b + bust_b * ta
    wa = (win_a + bust_a * (1.0 - tb - win_b) - bust_a * bust_b * (1.0 - ta)) / det
    wb = win_b + bust_b * (1.0 - wa - ta)
    return wa, ta, wb, tb


@njit(inline="always")
def fixed_turn(m, g, me, other, x, y, split):
    """The fixed turn of ``me`` at (x, y), no lost turns: (its banks' value, P(win),
    P(tie); its chance to lose)."""
    sl = me.normal[0, 0, x, y]
    v, w, t = banks(m, g, me.dist[sl, 1:], x, y, 0, other, split, 1)
    return v, w, t, me.bust[sl]


@njit(inline="always")
def optimal_line(m, g, other, x, y, beta, sc):
    """The optimal turn at (x, y), no lost turns, as a line in the lost turn's value
    ``beta``: (its value at 0, slope, the interval of ``beta`` where it stays optimal, cap
    error, rows)."""
    val, q, _, cap, rows = optimal_turn(m, g, other, 0, 0, x, y, beta, sc, 0, True)
    return val - q * beta, q, sc.bounds[0], sc.bounds[1], cap, rows


@njit(inline="always")
def split_of(m, g, optimal, me, other, x, y, sc, rows):
    """A turn's P(win) and P(tie) through its banks, and its chance to lose: an optimal
    turn's table in ``sc`` followed forwards, or the fixed turn's ending."""
    if optimal:
        q = optimal_ends(m, g, sc, rows)
        _, w, t = banks(m, g, sc.ends[:rows], x, y, 0, other, True, 0)
        return w, t, q
    _, w, t, q = fixed_turn(m, g, me, other, x, y, True)
    return w, t, q


@njit(cache=True)
def unit_exact(m, g, A, B, x, y, sa, sb, info):
    """Solve the unit of A at (x, y) and B at (y, x) (no penalty: one count), writing
    both states' values, P(win) and P(tie), and the unit's :class:`Info`."""
    u = g.u
    one = g.self_play and x == y  # one state whose lost turn leads to itself
    b_optimal = g.self_play
    # fixed turns are lines known at once: (bank part, chance to lose)
    c1 = q1 = c2 = q2 = 0.0
    if not g.a_optimal:
        c1, _, _, q1 = fixed_turn(m, g, A, B, x, y, False)
    if not b_optimal:
        c2, _, _, q2 = fixed_turn(m, g, B, A, y, x, False)
    xv = _guess(A.v, x, y, u) if g.a_optimal else c1 / (1.0 + q1) if one else 0.5
    yv = (xv if one else _guess(A.v, y, x, u)) if b_optimal else c2 + q2 * (1.0 - xv)
    err = 1.0
    dps = 0
    rows1 = rows2 = 0
    cap1 = cap2 = 0.0
    lo1, hi1, lo2, hi2 = -np.inf, np.inf, -np.inf, np.inf
    for it in range(g.newton + g.fixed_point):
        if g.a_optimal:
            c1, q1, lo1, hi1, cap1, rows1 = optimal_line(m, g, B, x, y, 1.0 - yv, sa)
            dps += 1
        if b_optimal and not one:
            c2, q2, lo2, hi2, cap2, rows2 = optimal_line(m, g, A, y, x, 1.0 - xv, sb)
            dps += 1
        if one:
            c2, q2, lo2, hi2 = c1, q1, lo1, hi1
        if it < g.newton:
            if one:
                xn = (c1 + q1) / (1.0 + q1)
                yn = xn
            else:
                xn = (c1 + q1 - q1 * (c2 + q2)) / (1.0 - q1 * q2)
                yn = c2 + q2 * (1.0 - xn)
            # both policies still optimal at the solution: it is exact (rounding aside)
            if lo1 <= 1.0 - yn <= hi1 and lo2 <= 1.0 - xn <= hi2:
                xv, yv = xn, yn
                err = 0.0
                break
        else:  # a safeguard against cycling: plain fixed-point steps (a contraction)
            xn = c1 + q1 * (1.0 - yv)
            yn = xn if one else c2 + q2 * (1.0 - xv)
        step = max(abs(xn - xv), abs(yn - yv))
        xv, yv = xn, yn
        if it >= g.newton and step <= 1e-15:
            err = step / (1.0 - max(q1, q2))
            break
    # the outcome split: every state's turn ending, then the unit's 2 x 2 system
    w1, t1, q1 = split_of(m, g, g.a_optimal, A, B, x, y, sa, rows1)
    w2, t2, q2 = (w1, t1, q2) if one else split_of(m, g, b_optimal, B, A, y, x, sb, rows2)
    wa, ta, wb, tb = cycle_outcomes(w1, t1, q1, w2, t2, q2)
    A.v[0, 0, x, y] = xv
    A.w[0, 0, x, y] = wa
    A.t[0, 0, x, y] = ta
    if not one:
        B.v[0, 0, y, x] = yv
        B.w[0, 0, y, x] = wb
        B.t[0, 0, y, x] = tb
    info.cap_err[x, y] = max(cap1, cap2)
    info.fp_err[x, y] = err
    info.dps[x, y] = dps


@njit(cache=True)
def unit_start(m, g, A, B, x, y, sa, sb):
    """A start for the iterated sweeps from the game without the penalty (one count, seat
    A optimal): the unit's values alone, by ``g.fixed_point`` plain fixed-point steps of
    the turns' values from :func:`_guess`. A step shrinks the error by the turns' chance
    to lose: four make a start within 2e-4 of the exact game's under ``facebook`` at
    4,000, from which the same improvement sweeps follow, at half the exact sweep's CPU."""
    u = g.u
    one = g.self_play and x == y
    c2 = q2 = 0.0
    if not g.self_play:
        c2, _, _, q2 = fixed_turn(m, g, B, A, y, x, False)
    xv = _guess(A.v, x, y, u)
    yv = xv if one else _guess(A.v, y, x, u) if g.self_play else c2 + q2 * (1.0 - xv)
    for _ in range(g.fixed_point):
        xv = optimal_turn(m, g, B, 0, 0, x, y, 1.0 - yv, sa, 0, False, False)[0]
        if one:
            yv = xv
        elif g.self_play:
            yv = optimal_turn(m, g, A, 0, 0, y, x, 1.0 - xv, sb, 0, False, False)[0]
        else:
            yv = c2 + q2 * (1.0 - xv)
    A.v[0, 0, x, y] = xv
    B.v[0, 0, y, x] = yv


@njit(cache=True)
def chain_state(m, g, me, other, kept, i, j, mx, my, optimal, sc, improve, split):
    """One state of :func:`unit_chain`: the mover ``me`` at ``(i, j, mx, my)``. Writes its
    value (and with ``split`` P(win), P(tie)); returns (its change, its turn-DP states,
    the gap between its turn DP and its ending's evaluation, 1 if its new turn was
    followed forwards)."""
    u = g.u
    lv, lw, lt = lost_value(m, g, other, i, j, mx, my)
    n_states = followed = 0
    worst = val = 0.0
    if optimal:  # its kept turn: banks below the target, past it, and the chance to lose
        at = ((i * m.streak + j) * u + my) * kept.offs[u] + kept.offs[mx]
        row = kept.dist[at:at + u - 1 - mx]
        e = kept.ends[i, j, mx, my]
        if improve:
            # values first: the DP without its choices (a quarter faster), where the kept
            # turn will likely stay
            first = improve == IMPROVE_VALUES_FIRST and e[3] >= 0.0
            val, _, top, _, rows = optimal_turn(m, g, other, i, j, mx, my, lv, sc, 0, False,
                                                not first)
            n_states = (top - 1) * 6 + 1
            # a kept turn as good as the new one stays (a greedy choice all the same), and
            # the new one is not followed forwards (a quarter of a state's work)
            if e[3] < 0.0 or e[0] + banks(m, g, row, mx, my, j, other, False, 1)[0] \
                    + e[3] * lv < val - KEEP_GAP:
                if first:  # its choices, to follow it
                    optimal_turn(m, g, other, i, j, mx, my, lv, sc, 0, False)
                followed = 1
                e[3] = optimal_ends(m, g, sc, rows)
                for kk in range(u - 1 - mx):
                    row[kk] = sc.ends[kk + 1] if kk + 1 < rows else 0.0
                e[0], e[1], e[2] = banks(m, g, sc.ends[u - mx:rows], mx, my, j, other, True,
                                         u - mx)
        past_v, past_w, past_t, q = e[0], e[1], e[2], e[3]
    else:
        sl = me.normal[i, j, mx, my]
        row = me.dist[sl, 1:]
        past_v = past_w = past_t = 0.0
        q = me.bust[sl]
    bv, bw, bt = banks(m, g, row, mx, my, j, other, split, 1)
    v = past_v + bv + q * lv
    w = past_w + bw + q * lw
    t = past_t + bt + q * lt
    if optimal and improve:
        worst = abs(v - val)
    moved = abs(v - me.v[i, j, mx, my])
    me.v[i, j, mx, my] = v
    if split:
        moved = max(moved, abs(w - me.w[i, j, mx, my]), abs(t - me.t[i, j, mx, my]))
        me.w[i, j, mx, my] = w
        me.t[i, j, mx, my] = t
    return moved, n_states, worst, followed


@njit(cache=True)
def unit_chain(m, g, A, B, kept, x, y, sc, improve, split, info):
    """One Gauss-Seidel pass over the unit of A at (x, y) and B at (y, x), every count, in
    decreasing order of the counts' sum (the iterated mode). ``improve``
    (:data:`IMPROVE` or :data:`IMPROVE_VALUES_FIRST`): solve seat A's optimal turns and
    keep them (0: evaluate the kept ones); ``split``: carry P(win)
    and P(tie) too. Writes the states and the unit's change (and with ``improve`` its
    turn-DP states, the largest gap between a DP and its ending's evaluation and the
    turns followed forwards)."""
    k = m.streak
    moved = 0.0
    n_states = followed = 0
    worst = 0.0
    both = not (g.self_play and x == y)
    for total in range(2 * (k - 1), -1, -1):
        for i in range(max(0, total - (k - 1)), min(k - 1, total) + 1):
            j = total - i
            d, n, w, f = chain_state(m, g, A, B, kept, i, j, x, y, g.a_optimal, sc, improve,
                                     split)
            moved, n_states, worst = max(moved, d), n_states + n, max(worst, w)
            followed += f
            if both:
                d, n, w, f = chain_state(m, g, B, A, kept, i, j, y, x, g.self_play, sc,
                                         improve, split)
                moved, n_states, worst = max(moved, d), n_states + n, max(worst, w)
                followed += f
    info.change[x, y] = moved
    if improve:
        info.states[x, y] = n_states
        info.gap[x, y] = worst
        info.followed[x, y] = followed


@njit(inline="always")
def unit_order(q, n):
    """The ``q``-th of ``n`` units of a sum in a parallel loop: the first, the last, the
    second, the one before the last... A unit's turns are about as long as the mover's
    deficit, which grows or falls along the sum, so paired this way every block of
    iterations (a parallel loop gives each thread one) carries an even share of the work;
    in order one thread had two thirds of a best response's turn-DP states."""
    h = q // 2
    return h if q % 2 == 0 else n - 1 - h


@njit(parallel=True, cache=True)
def sweep_diagonal(diag, m, g, A, B, kept, exact, improve, split, info):
    """Every unit with ``x + y == diag`` (in parallel): :func:`unit_exact` or
    :func:`unit_chain`. Under self-play a unit stands for both orders of its totals."""
    u = g.u
    lo = (diag + 1) // 2 if g.self_play else max(0, diag - (u - 1))
    n = min(diag, u - 1) - lo + 1
    for q in prange(n):
        x = lo + unit_order(np.int64(q), n)  # a parallel loop's index may be unsigned
        y = diag - x
        sa = scratch(m, g.rows if (g.a_optimal and (exact or improve)) else 1)
        if exact:
            sb = scratch(m, g.rows if g.self_play else 1)
            if g.start:
                unit_start(m, g, A, B, x, y, sa, sb)
            else:
                unit_exact(m, g, A, B, x, y, sa, sb, info)
        else:
            unit_chain(m, g, A, B, kept, x, y, sa, improve, split, info)


@njit(cache=True)
def sweep_serial(m, g, A, B, kept, exact, split, info):
    """A whole sweep without a turn DP, every sum of the totals from the largest down, on
    one thread: re-evaluating kept turns, or two fixed seats. (A sum's work is too small
    to share: launching a parallel loop per sum cost 50 times the work on a busy
    machine, measured.) Returns the largest change."""
    u = g.u
    sa = scratch(m, 1)
    for diag in range(2 * u - 2, -1, -1):
        lo = (diag + 1) // 2 if g.self_play else max(0, diag - (u - 1))
        for x in range(lo, min(diag, u - 1) + 1):
            if exact:
                unit_exact(m, g, A, B, x, diag - x, sa, sa, info)
            else:
                unit_chain(m, g, A, B, kept, x, diag - x, sa, 0, split, info)
    return info.change.max()


@njit(parallel=True, cache=True)
def fill_table(m, g, A, B, value_out, bank_out, top_out):
    """Seat A's policy table: at every state ``(s, r, x, y)`` its optimal turn's values
    (float32) and bank decisions over rows ``0 .. P - 1`` (row 0 and column 0 zero), and
    the turn's cap row (rows from it on bank; a table is valid where every cap lies
    ``six_rows + max_points`` rows below P). With ``P = 0`` the cap rows alone, without a
    turn DP."""
    k = m.streak
    u = g.u
    n_p = value_out.shape[4]
    for q in prange(u):
        x = unit_order(np.int64(q), u)  # turns are longer far behind: see unit_order
        sc = scratch(m, max(g.rows, n_p + m.six_rows + m.max_points))
        for s in range(k):
            for r in range(k):
                for y in range(u):
                    beta = lost_value(m, g, B, s, r, x, y)[0]
                    if n_p == 0:
                        top_out[s, r, x, y] = cap_row(m, g, B, r, x, y, beta)[0]
                        continue
                    top_out[s, r, x, y] = optimal_turn(m, g, B, s, r, x, y, beta, sc, n_p,
                                                       False, False)[2]
                    # column 0 of every row is 0 (see turn._turn); row 0 is the turn start
                    value_out[s, r, x, y] = sc.v[:n_p * 7].reshape(n_p, 7)
                    bank_out[s, r, x, y] = sc.bk[:n_p * 7].reshape(n_p, 7)
                    value_out[s, r, x, y, 0] = 0.0
                    bank_out[s, r, x, y, 0] = 0
