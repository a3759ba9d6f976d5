"""One Farkle turn (layer 1): the roll step, the backward turn DP and the forward pass.

A turn's decision state after a set-aside is a *row* ``i`` (turn points in units of 50)
and the dice ``n`` left to roll (6 after hot dice); row 0 with six dice is the turn's
start, which must roll. Every set-aside adds points, so rows only grow within a turn:
the turn is one pass over the rows, backwards to decide, forwards to follow the
decisions. Tables are flat, ``v[i * 7 + n]`` (column 0 unused), and an option ``j``
leads from row ``i`` to the flat index ``i * 7 + model.oflat[j]``.

* :func:`turn_back`: the optimal turn given what banking at each row is worth
  (``bankv``) and what a lost turn is worth (``beta``): values and decisions (bank, and
  the option chosen for every roll class at every row); :func:`turn_back_tracked` also
  each state's slope in ``beta`` (its chance to lose the turn) and the interval of
  ``beta`` over which every decision stays optimal; :func:`turn_value` its values and
  bank decisions alone (no set-aside choices: a quarter faster).
* :func:`turn_ends`: how a turn with given decisions ends, followed forwards from its
  start: the chance to bank at each row, to lose the turn, and to be still rolling
  past the rows held.
* :func:`decide`: a fixed policy's set-aside choices from its value table (the first
  strict maximum, as the simulation kernel plays it), for :func:`turn_ends`.
* :func:`turn_eval`: the backward evaluation of fixed decisions for another bank value
  (a probability carried through the same turn).

Rows from ``top`` on bank where the rules allow it: the caller proves that banking is
optimal there (a solver's cap). Six dice that roll on past a banking region
(``model.six_rows > 0``) keep rolling there while a roll stays inside the rows held; at
the last ``max_points`` rows a roll would leave the table, and their value is the
caller's ``edge`` (a closed form, or a bound the caller accounts for).

Ties go to the first strict maximum: options come sorted (more points, then more dice),
and a bank worth as much as rolling is taken.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from dicelab.farkle.rules import HOT_DICE

#: Bust-value window of the stability interval (:func:`turn_back` with ``track``):
#: a choice ahead of every other by more than this holds over the whole window.
WINDOW = 0.01


@njit(inline="always")
def roll_step(m, i, n, beta, v, bp, choice, track, bounds, dominant=False, decide=True):
    """Rolling ``n`` dice at row ``i``: (value, slope). Each roll class takes its best
    option (the first strict maximum of ``v``), a lost turn is worth ``beta``; with
    ``decide`` the choices go to ``choice[i * C + c]``. With ``track``, ``slope`` is the
    chance to lose the turn under these choices (``bp`` holds the successors' slopes),
    and ``bounds`` narrows to the ``beta`` over which every choice here stays best (all
    values are lines in ``beta`` with slopes in [0, 1]). With ``dominant`` (the caller
    has checked that the rows a roll reaches grow with the points and the dice left)
    only the model's dominant options are read: the same choice.

    Indices are unsigned: a signed index is checked for wrapping around on every read,
    which costs this loop a factor of 2 to 3."""
    cs, os_, of, cp = m.class_start, m.option_start, m.oflat, m.class_prob
    rv = m.bust[n] * beta
    rb = m.bust[n]
    base = uint64(i * 7)
    at = uint64(i * cp.size)
    for c in range(uint64(cs[n]), uint64(cs[n + 1])):
        j0 = uint64(os_[c])
        j1 = uint64(os_[c + uint64(1)])
        jb = j0
        best = v[base + uint64(of[j0])]
        if track:
            second = -np.inf
            for j in range(j0 + uint64(1), j1):
                x = v[base + uint64(of[j])]
                if x > best:
                    second = best
                    best = x
                    jb = j
                elif x > second:
                    second = x
            bb = bp[base + uint64(of[jb])]
            if best - second < WINDOW:
                for j in range(j0, j1):
                    if j != jb:
                        k = base + uint64(of[j])
                        db = bb - bp[k]
                        dv = best - v[k]
                        if db > dv:  # only a crossing inside [0, 1] can matter
                            bounds[0] = max(bounds[0], beta - dv / db)
                        elif -db > dv:
                            bounds[1] = min(bounds[1], beta - dv / db)
            rb += cp[c] * bb
        elif dominant:
            q1 = uint64(m.dom_start[c + uint64(1)])
            for q in range(uint64(m.dom_start[c]) + uint64(1), q1):  # the first is j0
                x = v[base + uint64(m.dom_of[q])]
                if decide:
                    j = uint64(m.dom[q])
                    jb += (j - jb) * uint64(x > best)
                best = max(best, x)
        else:
            for j in range(j0 + uint64(1), j1):
                x = v[base + uint64(of[j])]
                if decide:
                    jb += (j - jb) * uint64(x > best)  # branch-free: a branch costs 2.5x
                best = max(best, x)
        if decide:
            choice[at + c] = jb
        rv += cp[c] * best
    return rv, rb


@njit(inline="always")
def _turn(m, floor, bankv, edge, edge_slope, beta, top, rows, v, bp, bk, choice, track,
          bounds, decide=True):
    """The optimal turn over rows ``0 .. rows - 1``; returns (value, slope) at its start.

    ``floor[n]``: the fewest rows a bank with ``n`` dice left needs (usually
    ``m.bank_floor``); ``bankv[i]``: the value of banking at row ``i``; ``beta``: the
    value of a lost turn; rows ``>= top`` bank (at least the floor of 1..5 dice there),
    six dice rolling on (``m.six_rows``) excepted; ``edge[i]`` (slope ``edge_slope``):
    the value of six dice at a row where a roll would leave the table
    (``i + m.max_points >= rows``). Writes ``v``, ``bp`` (slopes, with ``track``),
    ``bk`` (1 = bank) and, with ``decide``, ``choice`` (see :func:`roll_step`); ``bounds``
    as there, and also narrowed where a bank and a roll cross.
    """
    max_s = m.max_points
    six_on = m.six_rows > 0
    # the lowest row where the values fall with more points or more dice (a roll from a
    # row whose reach lies above it reads only the dominant options; not with track,
    # whose bounds need every option)
    fall = rows
    for i in range(rows - 1, 0, -1):
        base = i * 7
        bvi = bankv[i]
        dominant = not track and fall > i + max_s
        v[base] = 0.0
        bk[base] = 0
        for n in range(1, 7):
            k = base + n
            allowed = i >= floor[n]
            bank = i >= top and allowed and not (six_on and n == HOT_DICE)
            if not bank:
                if i + max_s < rows:
                    rv, rb = roll_step(m, i, n, beta, v, bp, choice, track, bounds, dominant,
                                       decide)
                else:
                    rv = edge[i]
                    rb = edge_slope
                bank = allowed and bvi >= rv
                if track and allowed and bank and rb > bvi - rv:
                    bounds[1] = min(bounds[1], beta + (bvi - rv) / rb)
                elif track and allowed and not bank and rb > rv - bvi:
                    bounds[0] = max(bounds[0], beta - (rv - bvi) / rb)
            if bank:
                rv = bvi
                rb = 0.0
            v[k] = rv
            bk[k] = bank
            if track:
                bp[k] = rb
        if not track:
            for n in range(1, 7):
                if (i + 1 < rows and v[base + n] > v[base + 7 + n]) or \
                        (n < HOT_DICE and v[base + n] > v[base + n + 1]):
                    fall = i
    if max_s < rows:
        rv, rb = roll_step(m, 0, HOT_DICE, beta, v, bp, choice, track, bounds,
                           not track and fall > max_s, decide)
    else:  # a table shorter than one roll: the first roll leaves it too
        rv = edge[0]
        rb = edge_slope
    v[:7] = 0.0
    bk[:7] = 0
    v[HOT_DICE] = rv
    if track:
        bp[:7] = 0.0
        bp[HOT_DICE] = rb
    return rv, rb


@njit(cache=True)
def turn_back(m, floor, bankv, edge, edge_slope, beta, top, rows, v, bp, bk, choice):
    """:func:`_turn` without slopes: (value, 0) at the turn's start."""
    return _turn(m, floor, bankv, edge, edge_slope, beta, top, rows, v, bp, bk, choice, False,
                 bp[:0])


@njit(cache=True)
def turn_value(m, floor, bankv, edge, edge_slope, beta, top, rows, v, bk):
    """:func:`turn_back` without the set-aside choices (the values and bank decisions
    alone): about a quarter faster, for a turn that need not be followed forwards."""
    return _turn(m, floor, bankv, edge, edge_slope, beta, top, rows, v, v[:0], bk, bk[:0],
                 False, v[:0], False)


@njit(cache=True)
def turn_back_tracked(m, floor, bankv, edge, edge_slope, beta, top, rows, v, bp, bk, choice,
                      bounds):
    """:func:`_turn` with each state's slope and the interval ``bounds`` over which every
    decision stays optimal. (Two kernels, not one with a flag: the tracking code in the
    same loop slows the plain DP by a factor of 3 or 4, measured.)"""
    return _turn(m, floor, bankv, edge, edge_slope, beta, top, rows, v, bp, bk, choice, True,
                 bounds)


@njit(cache=True)
def turn_ends(m, bk, bk_rows, choice, choice_rows, guess, reach, out):
    """How a turn with decisions ``bk`` and ``choice`` ends, followed from its start.

    Decisions are read at ``min(i, bk_rows - 1)`` and ``min(i, choice_rows - 1)`` (a
    fixed policy's last row stands for every row past it). Adds P(bank at row ``i``) to
    ``out[i]`` for rows ``i < L = out.size``, and returns (P(lost turn), P(still rolling
    past row L - 1)). With ``guess`` (a :func:`turn_back` table over L rows), six dice at
    a row where a roll would leave the table end as that table's edge guess does: a bank
    there with the chance ``m.six_bank``, a lost turn with ``m.bust[6]``, the rest
    unresolved. ``reach``: scratch of at least (L + max points + 1) * 7, so that a roll
    from any row lands in it (what lands past row L - 1 is still rolling)."""
    cs, cp, of = m.class_start, m.class_prob, m.oflat
    nc = cp.size
    rows = out.size
    size = (rows + m.max_points + 1) * 7
    reach[:size] = 0.0
    reach[HOT_DICE] = 1.0
    lost = 0.0
    left = 0.0
    for i in range(rows):
        ib = min(i, bk_rows - 1) * 7
        ic = uint64(min(i, choice_rows - 1) * nc)
        base = uint64(i * 7)
        for n in range(1, 7):
            r = reach[i * 7 + n]
            if r == 0.0:
                continue
            if i > 0 and bk[ib + n] != 0:
                out[i] += r
                continue
            if guess and n == HOT_DICE and i + m.max_points >= rows:
                out[i] += r * m.six_bank
                lost += r * m.bust[HOT_DICE]
                left += r * (1.0 - m.six_bank - m.bust[HOT_DICE])
                continue
            lost += r * m.bust[n]
            for c in range(uint64(cs[n]), uint64(cs[n + 1])):
                reach[base + uint64(of[choice[ic + c]])] += r * cp[c]
    for k in range(rows * 7, size):
        left += reach[k]
    return lost, left


@njit(cache=True)
def decide(m, value, choice):
    """``choice[i * C + c]`` for rows ``i < value.shape[0]``: the option of class ``c``
    whose state has the highest ``value`` (rows clamped at the last), the first strict
    maximum: how the simulation kernel sets aside for a table policy."""
    cs_all = m.option_start
    nc = m.class_prob.size
    last = value.shape[0] - 1
    for i in range(last + 1):
        for c in range(nc):
            best_j = cs_all[c]
            best_v = -np.inf
            for j in range(cs_all[c], cs_all[c + 1]):
                x = value[min(i + m.points[j], last), m.dice[j]]
                if x > best_v:
                    best_j = j
                    best_v = x
            choice[i * nc + c] = best_j


@njit(cache=True)
def follow(m, i, n, beta, table, choice):
    """Rolling ``n`` dice at row ``i`` with the options ``choice`` holds for that row: the
    expectation of ``table`` (flat, as ``v``), a lost turn worth ``beta``."""
    nc = m.class_prob.size
    acc = m.bust[n] * beta
    for c in range(m.class_start[n], m.class_start[n + 1]):
        acc += m.class_prob[c] * table[i * 7 + m.oflat[choice[i * nc + c]]]
    return acc


@njit(cache=True)
def turn_eval(m, bk, choice, bankv, edge, beta, rows, out):
    """The values ``out[i * 7 + n]`` of the decisions ``bk``/``choice`` of a
    :func:`turn_back` table over ``rows`` rows for another bank value ``bankv`` (a lost
    turn worth ``beta``, the six-dice edge worth ``edge``); returns the value at the
    start."""
    for i in range(rows - 1, -1, -1):
        base = i * 7
        out[base] = 0.0
        for n in range(1, 7):
            k = base + n
            if i == 0 and n != HOT_DICE:
                out[k] = 0.0
            elif i > 0 and bk[k] != 0:
                out[k] = bankv[i]
            elif n == HOT_DICE and i + m.max_points >= rows:
                out[k] = edge[i]
            else:
                out[k] = follow(m, i, n, beta, out, choice)
    return out[HOT_DICE]


@njit(cache=True)
def roll_values(m, i, beta, v, choice, out):
    """``out[n]``: the value of rolling ``n`` dice at row ``i`` of a filled
    :func:`turn_back` table ``v`` (rows past ``i`` plus one roll filled)."""
    for n in range(1, 7):
        out[n] = roll_step(m, i, n, beta, v, v, choice, False, v[:0])[0]


@njit(inline="always")
def _slice_ends(m, s, bank, value, keep_all, out_bust, out_left, out_dist):
    """Fixed turn ``s`` of :func:`slices_ends` followed forwards."""
    if keep_all:
        choice = m.keep_all.astype(np.int32)
        c_rows = 1
    else:
        c_rows = value.shape[1]
        choice = np.empty(c_rows * m.class_prob.size, dtype=np.int32)
        decide(m, value[s], choice)
    reach = np.empty((out_dist.shape[1] + m.max_points + 1) * 7)
    out_bust[s], out_left[s] = turn_ends(m, bank[s].ravel(), bank.shape[1], choice, c_rows,
                                         False, reach, out_dist[s])


@njit(cache=True, parallel=True)
def slices_ends(m, bank, value, keep_all, out_bust, out_left, out_dist):
    """Every fixed turn ``s`` (``bank[s]`` (P, 7); set-asides by ``value[s]`` (rows clamped
    at its last, as ``bank``'s), or all scoring dice with ``keep_all``) followed forwards,
    in parallel: ``out_bust[s]``, ``out_dist[s, i]`` = P(bank at row i) (zeroed) and
    ``out_left[s]`` (see :func:`turn_ends`)."""
    for s in prange(bank.shape[0]):
        _slice_ends(m, s, bank, value, keep_all, out_bust, out_left, out_dist)


@njit(cache=True)
def slice_ends(m, bank, value, keep_all, out_bust, out_left, out_dist):
    """:func:`slices_ends` of a single fixed turn (``bank.shape[0] == 1``), without the
    cost of starting the parallel threads (more than the turn itself)."""
    _slice_ends(m, 0, bank, value, keep_all, out_bust, out_left, out_dist)
