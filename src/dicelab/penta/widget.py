"""The one-turn kernels ("widget") shared by the solver and the policies.

A turn-start state is one int64 index (:func:`dicelab.penta.rules.state_index`) of the
filled boxes ``mask``, the capped upper total ``up`` and the Penta flag ``fifty``.
``V[s]`` is the expected number of points still to come from state ``s`` under optimal
play (0 on a full card); the upper bonus and Penta bonuses are counted in the turn that
earns them (:func:`dicelab.penta.scoring.apply_box`).

With ``V`` known for the next layer, one turn is solved in three passes over plain
arrays (all values are expected *final* points from now on):

1. ``e3[r]``: the best box for each final roll ``r``: box points + bonuses + V(next);
2. a reroll stage maps values of 5-dice rolls to values of keeps,
   ``E[K] = mean_f E[K + f]`` (``E`` of a 5-dice keep = its roll value), then the
   best keep contained in each multiset, ``M[S] = max(E[S], max_f M[S - f])``, so the
   value of roll ``r`` with one more reroll is ``M[r]``;
3. two reroll stages, then ``V[s] = sum_r P(r) * value(r, 2 rerolls left)``.

The greedy policy is this same widget with ``V = 0`` (only this turn's points count).

The kernels take the static tables as one :class:`~dicelab.penta.scoring.TurnTables`
(``T``) and their work arrays as one :class:`TurnScratch` (one state) or
:class:`LaneScratch` (``config.PENTA_SOLVER_LANES`` states side by side), where the
results stay for the caller to read.

Decisions (which box, which keep) are argmaxes over these float64 values, and options
that are equal in real arithmetic come out of different summation paths a rounding
error apart (up to 8.5e-14 points). So the decision kernels (``track``) treat options
within ``eps`` (:data:`dicelab.config.PENTA_TIE_EPS`) points of each other as *ties*
and settle them by a fixed order, never by rounding: the lowest box number; the larger
keep (fewer dice rerolled), then the lower :mod:`dicelab.dice` rank
(:data:`KEEP_PREFERENCE`). Boxes are visited in increasing order and the choice moves to
a later box only when it is worth more than ``eps`` above the current choice; keeps: see
the comment above :func:`reroll_stage`. Either way the option played is worth at least
(best - ``eps``), and when every gap is either rounding (far below ``eps``) or genuine
(far above; measured: always) it is the first option in the order among those tied with
the best, whatever the summation order. The values themselves are the exact maxima,
untouched by any of this.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from dicelab import config
from dicelab.jit import helper
from dicelab.penta.rules import (
    FACES,
    N_BOXES,
    N_DICE,
    PENTA_BOX,
    PENTA_POINTS,
    UPPER_BOXES,
    state_index,
)
from dicelab.penta.scoring import MAX_CLASSES, apply_box, roll_box_scores
from dicelab.penta.tables import BOX_SHIFT, KEEP1_SHIFT, KEEP_SIZE, N_KEEPS, N_ROLLS, ROLL_BASE

_N_SMALL = ROLL_BASE  # keeps of 0..4 dice are ranks 0..ROLL_BASE-1
_SIXTH = 1.0 / FACES


def _keep_preference() -> np.ndarray:
    order = sorted(range(N_KEEPS), key=lambda k: (-int(KEEP_SIZE[k]), k))
    pref = np.empty(N_KEEPS, dtype=np.int64)
    pref[order] = np.arange(N_KEEPS)
    return pref


#: ``KEEP_PREFERENCE[k]``: rank of keep ``k`` in the tie order (0 = taken first among
#: tied keeps): more dice first, then the lower global rank (count vectors in ascending
#: order: fewer 1s, then fewer 2s, ...; so 6 6 before 5 5 before 1 1).
KEEP_PREFERENCE = _keep_preference()


class TurnScratch(NamedTuple):
    """Work arrays of the widget for one state; :func:`state_value` leaves its results here.

    ``e3[r]``: value of ending the turn with roll ``r`` in the best box, ``box[r]`` that
    box (if tracked); ``r2[r]`` / ``r1[r]``: value of roll ``r`` with one / two rerolls
    left; ``E1[K]`` / ``E2[K]``: value of keeping ``K`` (global rank) with one / two
    rerolls left, ``M1[S]`` / ``M2[S]`` the best of the keeps within multiset ``S`` and
    ``arg1[S]`` / ``arg2[S]`` the keep played there (if tracked). ``bv``, ``A``,
    ``scores``, ``cand``: scratch.
    """

    e3: np.ndarray  # float64 (252,)
    box: np.ndarray  # int64 (252,)
    bv: np.ndarray  # float64 (252,)
    r2: np.ndarray  # float64 (252,)
    r1: np.ndarray  # float64 (252,)
    E1: np.ndarray  # float64 (462,)
    M1: np.ndarray  # float64 (462,)
    E2: np.ndarray  # float64 (462,)
    M2: np.ndarray  # float64 (462,)
    arg1: np.ndarray  # int64 (462,)
    arg2: np.ndarray  # int64 (462,)
    A: np.ndarray  # float64 (462,)
    scores: np.ndarray  # int64 (13,)
    cand: np.ndarray  # float64 (6,)


@njit(cache=True)
def new_turn_scratch():
    """A fresh :class:`TurnScratch` (from Python or from a kernel)."""
    return TurnScratch(np.empty(N_ROLLS), np.full(N_ROLLS, -1, dtype=np.int64),
                       np.empty(N_ROLLS), np.empty(N_ROLLS), np.empty(N_ROLLS),
                       np.empty(N_KEEPS), np.empty(N_KEEPS), np.empty(N_KEEPS),
                       np.empty(N_KEEPS), np.empty(N_KEEPS, dtype=np.int64),
                       np.empty(N_KEEPS, dtype=np.int64), np.empty(N_KEEPS),
                       np.empty(N_BOXES, dtype=np.int64), np.empty(N_DICE + 1))


@njit(inline="always")
def _box_value(V, mask, up, fifty, b, sc, bonus):
    pts, nu, nf = apply_box(up, fifty, b, sc)
    return (pts + bonus) + V[state_index(mask | (1 << b), nu, nf)]


@helper(cache=True)
def best_box(V, mask, up, fifty, scores, bonus, eps):
    """Best allowed box for scores ``scores`` (-1 = not allowed): returns (value, box).

    ``value`` = points (box + ``bonus`` + upper bonus if earned) + ``V`` of the next state,
    the exact maximum; ``box`` is chosen as in :func:`final_values` (the lowest of tied
    boxes; worth at least ``value - eps``).
    """
    best = -np.inf
    bv = -np.inf
    arg = -1
    for b in range(N_BOXES):
        if scores[b] >= 0:
            v = _box_value(V, mask, up, fifty, b, scores[b], bonus)
            best = max(best, v)
            if v > bv + eps:  # as in :func:`_visit`
                arg = b
                bv = v
    return best, arg


@njit(inline="always")
def _visit(e3, box, bv, r, v, b, track, eps):
    # e3 stays the exact running maximum. The box (boxes come in increasing order) moves
    # only to a box worth more than eps above the current choice, whose value bv is kept:
    # bv >= e3 - eps throughout, and exact ties (equal up to rounding) keep the lowest box.
    e3[r] = max(e3[r], v)
    if track and v > bv[r] + eps:
        box[r] = b
        bv[r] = v


@helper
def _visit_box(V, T, mask, up, fifty, b, W, track, eps):
    """Offer every roll's value in open box ``b`` to :func:`_visit`."""
    nm = mask | (1 << b)
    e3, box, bv, cand = W.e3, W.box, W.bv, W.cand
    if b < UPPER_BOXES:
        face = b + 1
        for k in range(N_DICE + 1):
            pts, nu, nf = apply_box(up, fifty, b, k * face)
            cand[k] = pts + V[state_index(nm, nu, nf)]
        for r in range(N_ROLLS):
            _visit(e3, box, bv, r, cand[T.roll_counts[r, face]], b, track, eps)
    elif b == PENTA_BOX:
        p0, u0, f0 = apply_box(up, fifty, b, 0)
        p1, u1, f1 = apply_box(up, fifty, b, PENTA_POINTS)
        v0 = p0 + V[state_index(nm, u0, f0)]
        v1 = p1 + V[state_index(nm, u1, f1)]
        for r in range(N_ROLLS):
            _visit(e3, box, bv, r, v1 if T.ordinary[b, r] == PENTA_POINTS else v0, b, track,
                   eps)
    else:
        # a lower box adds its score and changes neither up nor fifty (apply_box)
        base = V[state_index(nm, up, fifty)]
        for r in range(N_ROLLS):
            _visit(e3, box, bv, r, T.ordinary[b, r] + base, b, track, eps)


@helper(cache=True)
def final_values(V, rp, T, mask, up, fifty, W, track, eps):
    """``W.e3[r]``: value of ending the turn with roll ``r`` in the best box.

    If ``track``, ``W.box[r]`` receives the box played: worth at least ``e3[r] - eps``,
    and of boxes tied with the best (equal up to rounding) the lowest.
    """
    e3, bv = W.e3, W.bv
    for r in range(N_ROLLS):
        e3[r] = -np.inf
        if track:
            bv[r] = -np.inf
    for b in range(N_BOXES):
        if not (mask >> b) & 1:
            _visit_box(V, T, mask, up, fifty, b, W, track, eps)
    if (mask >> PENTA_BOX) & 1:
        # a Penta with the Penta box filled: joker and bonus rules
        for f in range(1, FACES + 1):
            r = T.penta_roll[f]
            bonus = roll_box_scores(rp, T, mask, fifty, r, W.scores)
            v, arg = best_box(V, mask, up, fifty, W.scores, bonus, eps)
            e3[r] = v
            if track:
                W.box[r] = arg


# How keep decisions are tracked. M[S] = max(E[S], max_f M[S - f]) stays exact (it is
# the value). Beside it the tracked pass keeps arg[S] and A[S] = E[arg[S]], the exact value
# of that keep. The candidates at S are S itself (value E[S]) and arg[S - f] (value
# A[S - f]); of those with value >= M[S] - eps the first in KEEP_PREFERENCE order is taken
# (S itself, the largest, whenever it qualifies). One always qualifies (the candidate that
# gave the maximum has A >= M - eps), so E[arg[S]] >= M[S] - eps at every S: the keep played
# loses at most eps against the best keep, at any depth (not eps per level).
# When every gap between options is either rounding noise (far below eps) or genuine (far
# above it), induction over S shows arg[S] is the first keep in preference order among
# *all* keeps within S tied with the best: independent of how the values were summed.


@helper(cache=True)
def reroll_stage(vals, T, E, M, arg, A, track, out, eps):
    """Values ``vals[r]`` of 5-dice rolls -> ``out[r]``: value of roll ``r`` with one reroll.

    ``E[K]`` (float64[462]) receives the value of keeping ``K``, ``M[S]`` the exact best
    keep value within multiset ``S``. If ``track``, ``arg[S]`` is the keep (global rank)
    played in ``S``: the first in :data:`KEEP_PREFERENCE` order among the candidates
    within ``eps`` of ``M[S]`` (see the comment above); ``E[arg[S]] >= M[S] - eps``
    always. ``A`` (float64[462]) is scratch.
    """
    add, sub_ptr, sub_idx = T.add, T.sub_ptr, T.sub_idx
    for r in range(N_ROLLS):
        E[ROLL_BASE + r] = vals[r]
    for k in range(_N_SMALL - 1, -1, -1):
        s = 0.0
        for f in range(1, FACES + 1):
            s += E[add[k, f]]
        E[k] = s * _SIXTH
    if track:
        for k in range(N_KEEPS):
            m = E[k]
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                m = max(m, M[sub_idx[j]])
            M[k] = m
            thr = m - eps
            a = k
            av = E[k]
            if av < thr:
                pa = N_KEEPS
                for j in range(sub_ptr[k], sub_ptr[k + 1]):
                    p = sub_idx[j]
                    c = arg[p]
                    if A[p] >= thr and KEEP_PREFERENCE[c] < pa:
                        a = c
                        av = A[p]
                        pa = KEEP_PREFERENCE[c]
            arg[k] = a
            A[k] = av
    else:
        for k in range(N_KEEPS):
            m = E[k]
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                m = max(m, M[sub_idx[j]])
            M[k] = m
    for r in range(N_ROLLS):
        out[r] = M[ROLL_BASE + r]


@njit(cache=True)
def state_value(V, rp, T, mask, up, fifty, W, track, eps):
    """Expected points to come from state (mask, up, fifty) given ``V`` of later states.

    Leaves the whole turn in ``W`` (a :class:`TurnScratch`): with ``track`` also the box
    for each final roll and the keep played within each multiset with one / two rerolls
    left (see :func:`reroll_stage`); ties within ``eps`` as there.
    """
    final_values(V, rp, T, mask, up, fifty, W, track, eps)
    reroll_stage(W.e3, T, W.E1, W.M1, W.arg1, W.A, track, W.r2, eps)
    reroll_stage(W.r2, T, W.E2, W.M2, W.arg2, W.A, track, W.r1, eps)
    total = 0.0
    for r in range(N_ROLLS):
        total += T.roll_prob[r] * W.r1[r]
    return total


# --- the same widget for PENTA_SOLVER_LANES states at once ------------------------------------
# States with the same filled boxes and Penta flag but different upper totals share every
# index computation; only the values differ. Putting them in the lanes of 2-D arrays
# (innermost axis) turns the gathers above into contiguous vector loads. The arithmetic
# is the scalar widget's, operation for operation, so values are bit-identical to
# :func:`state_value` (a test checks it). The lane count is a compile-time constant, which
# lets LLVM turn every lane loop into vector instructions.
# ``track`` is True (decisions tracked), False or None (not tracked). With None the
# tracking code is not compiled at all: every test of it reads ``track is not None and
# track``, and numba prunes a branch on ``is not None`` of an argument typed None before
# typing (it prunes no branch on the value of a literal True or False).


class LaneScratch(NamedTuple):
    """Work arrays of the lane widget (``L = config.PENTA_SOLVER_LANES`` states).

    As :class:`TurnScratch`, lane ``l`` in the last axis: ``e3``, ``r2``, ``r1`` (252, L);
    ``E``, ``M`` (462, L) of the current reroll stage; ``box`` (252, L) and ``arg1``,
    ``arg2`` (462, L) only if tracked (else one row). Scratch: ``A`` (the tracked keeps'
    values, and the tracked boxes' values in :func:`final_values_lanes`), ``cand``,
    ``m``, ``total``, ``scores``, ``pa``.
    """

    e3: np.ndarray
    r2: np.ndarray
    r1: np.ndarray
    E: np.ndarray
    M: np.ndarray
    box: np.ndarray  # int64
    arg1: np.ndarray  # int64
    arg2: np.ndarray  # int64
    A: np.ndarray
    cand: np.ndarray  # float64 (6, L)
    m: np.ndarray  # float64 (L,)
    total: np.ndarray  # float64 (L,)
    scores: np.ndarray  # int64 (13,)
    pa: np.ndarray  # int64 (L,)


@helper(cache=True)
def new_lane_scratch(track):
    """A fresh :class:`LaneScratch`; the tracked decisions' arrays only if ``track``."""
    L = config.PENTA_SOLVER_LANES
    rows = N_ROLLS if track is not None and track else 1
    krows = N_KEEPS if track is not None and track else 1
    return LaneScratch(np.empty((N_ROLLS, L)), np.empty((N_ROLLS, L)), np.empty((N_ROLLS, L)),
                       np.empty((N_KEEPS, L)), np.empty((N_KEEPS, L)),
                       np.empty((rows, L), dtype=np.int64), np.empty((krows, L), dtype=np.int64),
                       np.empty((krows, L), dtype=np.int64), np.empty((krows, L)),
                       np.empty((N_DICE + 1, L)), np.empty(L), np.empty(L),
                       np.empty(N_BOXES, dtype=np.int64), np.empty(L, dtype=np.int64))


@njit(inline="always")
def _lane_visit(e3, box, bv, r, la, v, b, track, eps):
    # :func:`_visit` per lane; selects rather than branches: the comparisons are
    # unpredictable, selects vectorise
    e3[r, la] = max(e3[r, la], v)
    if track is not None and track:
        better = v > bv[r, la] + eps
        box[r, la] = b if better else box[r, la]
        bv[r, la] = v if better else bv[r, la]


@helper(cache=True)
def visit_box_lanes(V, ordinary, roll_counts, mask, fifty, ups, b, e3, box, bv, cand, base,
                     track, eps):
    """:func:`_visit_box` for the upper totals ``ups[l]``. It takes arrays, not their
    groups: called once per open box and group, a group handed to it would cost a
    reference-count update per array and call."""
    nm = mask | (1 << b)
    if b < UPPER_BOXES:
        face = b + 1
        for k in range(N_DICE + 1):
            for la in range(config.PENTA_SOLVER_LANES):
                pts, nu, nf = apply_box(ups[la], fifty, b, k * face)
                cand[k, la] = pts + V[state_index(nm, nu, nf)]
        for r in range(N_ROLLS):
            c = roll_counts[r, face]
            for la in range(config.PENTA_SOLVER_LANES):
                _lane_visit(e3, box, bv, r, la, cand[c, la], b, track, eps)
    elif b == PENTA_BOX:
        for la in range(config.PENTA_SOLVER_LANES):
            p0, u0, f0 = apply_box(ups[la], fifty, b, 0)
            p1, u1, f1 = apply_box(ups[la], fifty, b, PENTA_POINTS)
            cand[0, la] = p0 + V[state_index(nm, u0, f0)]
            cand[1, la] = p1 + V[state_index(nm, u1, f1)]
        for r in range(N_ROLLS):
            c = 1 if ordinary[b, r] == PENTA_POINTS else 0
            for la in range(config.PENTA_SOLVER_LANES):
                _lane_visit(e3, box, bv, r, la, cand[c, la], b, track, eps)
    else:
        # a lower box adds its score and changes neither up nor fifty (apply_box)
        for la in range(config.PENTA_SOLVER_LANES):
            base[la] = V[state_index(nm, ups[la], fifty)]
        for r in range(N_ROLLS):
            t = ordinary[b, r]
            for la in range(config.PENTA_SOLVER_LANES):
                _lane_visit(e3, box, bv, r, la, t + base[la], b, track, eps)


@helper(cache=True)
def final_values_lanes(V, rp, T, mask, fifty, ups, W, track, eps):
    """:func:`final_values` for the upper totals ``ups[l]``: ``W.e3[r, l]`` (and, if
    ``track``, the box played ``W.box[r, l]``); ``W`` is a :class:`LaneScratch`."""
    ordinary, roll_counts = T.ordinary, T.roll_counts
    e3, box, bv, cand, base = W.e3, W.box, W.A, W.cand, W.m
    for r in range(N_ROLLS):
        for la in range(config.PENTA_SOLVER_LANES):
            e3[r, la] = -np.inf
            if track is not None and track:
                bv[r, la] = -np.inf
    for b in range(N_BOXES):
        if not (mask >> b) & 1:
            visit_box_lanes(V, ordinary, roll_counts, mask, fifty, ups, b, e3, box, bv, cand,
                             base, track, eps)
    if (mask >> PENTA_BOX) & 1:
        for f in range(1, FACES + 1):
            r = T.penta_roll[f]
            bonus = roll_box_scores(rp, T, mask, fifty, r, W.scores)
            for la in range(config.PENTA_SOLVER_LANES):
                v, arg = best_box(V, mask, ups[la], fifty, W.scores, bonus, eps)
                e3[r, la] = v
                if track is not None and track:
                    box[r, la] = arg


@helper(cache=True)
def reroll_stage_lanes(vals, T, W, arg, track, out, eps):
    """:func:`reroll_stage` on (., L) arrays: ``vals`` -> ``out``, keep values in ``W.E``,
    best keeps in ``W.M`` and, if ``track``, the keep played in ``arg``."""
    add, sub_ptr, sub_idx = T.add, T.sub_ptr, T.sub_idx
    E, M, m, A, pa = W.E, W.M, W.m, W.A, W.pa
    for r in range(N_ROLLS):
        for la in range(config.PENTA_SOLVER_LANES):
            E[ROLL_BASE + r, la] = vals[r, la]
    for k in range(_N_SMALL - 1, -1, -1):
        a1 = add[k, 1]
        a2 = add[k, 2]
        a3 = add[k, 3]
        a4 = add[k, 4]
        a5 = add[k, 5]
        a6 = add[k, 6]
        for la in range(config.PENTA_SOLVER_LANES):
            E[k, la] = (((((E[a1, la] + E[a2, la]) + E[a3, la]) + E[a4, la]) + E[a5, la])
                        + E[a6, la]) * _SIXTH
    if track is not None and track:
        for k in range(N_KEEPS):
            for la in range(config.PENTA_SOLVER_LANES):
                m[la] = E[k, la]
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(config.PENTA_SOLVER_LANES):
                    m[la] = max(m[la], M[p, la])
            pk = KEEP_PREFERENCE[k]
            n_self = 0
            for la in range(config.PENTA_SOLVER_LANES):
                M[k, la] = m[la]
                m[la] -= eps  # from here on m is the tie threshold
                arg[k, la] = k
                A[k, la] = E[k, la]
                me = E[k, la] >= m[la]
                pa[la] = pk if me else N_KEEPS
                n_self += me
            if n_self == config.PENTA_SOLVER_LANES:
                continue  # k itself is played in every lane: no subset can come first
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(config.PENTA_SOLVER_LANES):
                    c = arg[p, la]
                    pc = KEEP_PREFERENCE[c]
                    take = (A[p, la] >= m[la]) & (pc < pa[la])
                    arg[k, la] = c if take else arg[k, la]
                    A[k, la] = A[p, la] if take else A[k, la]
                    pa[la] = pc if take else pa[la]
    else:
        for k in range(N_KEEPS):
            for la in range(config.PENTA_SOLVER_LANES):
                m[la] = E[k, la]
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(config.PENTA_SOLVER_LANES):
                    m[la] = max(m[la], M[p, la])
            for la in range(config.PENTA_SOLVER_LANES):
                M[k, la] = m[la]
    for r in range(N_ROLLS):
        for la in range(config.PENTA_SOLVER_LANES):
            out[r, la] = M[ROLL_BASE + r, la]


# --- the widget from candidate values: any objective ---------------------------------------
# A box's value in a turn depends on the roll only through the class of its score
# (:data:`dicelab.penta.scoring.BOX_CLASS`), so an objective is given to the widget as
# candidate values: ``cv[b, c, l]``, the value (under the objective) of writing a score of
# class ``c`` into open box ``b`` in lane ``l``, and ``jv[f, b, l]`` that of a Penta of face
# ``f`` in box ``b`` while the Penta box is filled (the joker and bonus rules: any score;
# -inf where the rules forbid the box). Filling them is the objective's part (:func:`
# fill_state_cands`, :func:`fill_row_cands`, and any valuation given to :func:`fill_cands`); the
# rest of the turn -- the best box per roll, the two reroll stages, the value -- is shared.
# Decisions are taken on demand (:func:`decide_lane`), not tracked through the stages.


class RowTable(NamedTuple):
    """A value table over (state, coordinate) pairs: state ``s`` holds coordinates
    ``lo[s] .. lo[s] + width[s] - 1`` at ``F[off[s] + 1 ...]``, between two sentinels:
    ``F[off[s]]``, the value of every coordinate below the row, and ``F[off[s] + 1 +
    width[s]]``, of every coordinate above it (:func:`row_value`). The coordinate is a
    *need*: writing ``g`` points moves coordinate ``c`` to ``c - g`` in the next state."""

    F: np.ndarray  # float64
    off: np.ndarray  # int64 (N_STATES,), -1: no row
    lo: np.ndarray  # int64 (N_STATES,)
    width: np.ndarray  # int64 (N_STATES,)


@njit(inline="always")
def row_value(R, s, c):
    """The value of coordinate ``c`` of state ``s`` in :class:`RowTable` ``R`` (a sentinel
    outside the row)."""
    i = c - R.lo[s]
    w = R.width[s]
    i = -1 if i < -1 else (w if i > w else i)
    return R.F[R.off[s] + 1 + i]


class CandScratch(NamedTuple):
    """Work arrays of the candidate widget: ``lanes`` (a :class:`LaneScratch`, untracked,
    where the turn's values are left), ``cv`` (13, MAX_CLASSES, L) and ``jv`` (7, 13, L)
    the candidate values (see the comment above), ``E1``/``M1`` (462, L) the keep values
    with one reroll left and the best within each multiset (``lanes.E``/``lanes.M`` hold
    those with two left after :func:`turn_from_cands`)."""

    lanes: LaneScratch
    cv: np.ndarray
    jv: np.ndarray
    E1: np.ndarray
    M1: np.ndarray


@njit(cache=True)
def new_cand_scratch():
    """A fresh :class:`CandScratch`."""
    L = config.PENTA_SOLVER_LANES
    return CandScratch(new_lane_scratch(None), np.empty((N_BOXES, MAX_CLASSES, L)),
                       np.full((FACES + 1, N_BOXES, L), -np.inf), np.empty((N_KEEPS, L)),
                       np.empty((N_KEEPS, L)))


@njit(cache=True)
def final_values_cands(T, mask, X):
    """``X.lanes.e3[r, l]``: the best candidate value of final roll ``r`` over the open
    boxes (a Penta with the Penta box filled: over ``X.jv``)."""
    e3, cv = X.lanes.e3, X.cv
    for r in range(N_ROLLS):
        for la in range(config.PENTA_SOLVER_LANES):
            e3[r, la] = -np.inf
    for b in range(N_BOXES):
        if (mask >> b) & 1:
            continue
        cls = T.box_class[b]
        for r in range(N_ROLLS):
            c = cls[r]
            for la in range(config.PENTA_SOLVER_LANES):
                e3[r, la] = max(e3[r, la], cv[b, c, la])
    if (mask >> PENTA_BOX) & 1:
        for f in range(1, FACES + 1):
            r = T.penta_roll[f]
            for la in range(config.PENTA_SOLVER_LANES):
                m = -np.inf
                for b in range(N_BOXES):
                    m = max(m, X.jv[f, b, la])
                e3[r, la] = m


@njit(inline="always")
def lane_totals(T, W):
    """``W.total[l] = sum_r P(r) W.r1[r, l]``: the value of the turn's start."""
    total = W.total
    for la in range(config.PENTA_SOLVER_LANES):
        total[la] = 0.0
    for r in range(N_ROLLS):
        p = T.roll_prob[r]
        for la in range(config.PENTA_SOLVER_LANES):
            total[la] += p * W.r1[r, la]


@njit(cache=True)
def turn_from_cands(T, mask, X, keep_e1):
    """The turn from filled candidates: ``X.lanes.total[l]`` its value; with ``keep_e1``
    also ``X.E1`` (keeps, one reroll left) and ``X.lanes.E`` (two left) for
    :func:`decide_lane`."""
    W = X.lanes
    final_values_cands(T, mask, X)
    reroll_stage_lanes(W.e3, T, W, W.arg1, None, W.r2, 0.0)
    if keep_e1:
        X.E1[:, :] = W.E
        X.M1[:, :] = W.M
    reroll_stage_lanes(W.r2, T, W, W.arg2, None, W.r1, 0.0)
    lane_totals(T, W)


@njit(inline="always")
def fill_cands(entry, ctx, rp, T, mask, fifty, X):
    """Fill ``X.cv`` and ``X.jv`` (see the comment above) through one valuation ``entry``:
    ``entry(ctx, b, score, bonus, A, i, j)`` writes every lane of ``A[i, j]``, the value
    of writing ``score`` (plus ``bonus`` points of Penta bonus) into box ``b``: for each
    open box and class of its scores into ``X.cv[b, c]`` (no bonus) and, with the Penta
    box filled, for each Penta face ``f`` and each box the joker rules allow into
    ``X.jv[f, b]`` (-inf in the others). ``ctx``: the valuation's data."""
    cv, jv = X.cv, X.jv
    for b in range(N_BOXES):
        if (mask >> b) & 1:
            continue
        for c in range(T.n_classes[b]):
            entry(ctx, b, T.class_score[b, c], 0, cv, b, c)
    if (mask >> PENTA_BOX) & 1:
        scores = X.lanes.scores
        for f in range(1, FACES + 1):
            bonus = roll_box_scores(rp, T, mask, fifty, T.penta_roll[f], scores)
            for b in range(N_BOXES):
                if scores[b] < 0:
                    for la in range(config.PENTA_SOLVER_LANES):
                        jv[f, b, la] = -np.inf
                else:
                    entry(ctx, b, scores[b], bonus, jv, f, b)


@njit(inline="always")
def _state_entry(ctx, b, sc, bonus, A, i, j):
    V, mult, mask, fifty, ups = ctx
    for la in range(config.PENTA_SOLVER_LANES):
        pts, nu, nf = apply_box(ups[la], fifty, b, sc)
        v = V[state_index(mask | (1 << b), nu, nf)]
        A[i, j, la] = (pts + bonus) + v if mult.shape[0] == 0 else mult[pts + bonus] * v


@njit(cache=True)
def fill_state_cands(V, mult, rp, T, mask, fifty, ups, X):
    """Candidates of the states (``mask``, ``ups[l]``, ``fifty``) from a value table over
    states: ``g + V[next]`` (``mult`` empty: expected points) or ``mult[g] * V[next]``
    (``mult[g] = exp(theta g)``: exponential utility), ``g`` the points the entry gains."""
    fill_cands(_state_entry, (V, mult, mask, fifty, ups), rp, T, mask, fifty, X)


@njit(inline="always")
def _row_entry(ctx, b, sc, bonus, A, i, j):
    R, mask, up, fifty, c0 = ctx
    pts, nu, nf = apply_box(up, fifty, b, sc)
    s2 = state_index(mask | (1 << b), nu, nf)
    for la in range(config.PENTA_SOLVER_LANES):
        A[i, j, la] = row_value(R, s2, c0 + la - (pts + bonus))


@njit(cache=True)
def fill_row_cands(R, rp, T, mask, up, fifty, c0, X):
    """Candidates of the coordinates ``c0 + l`` of state (``mask``, ``up``, ``fifty``) from
    a :class:`RowTable`: writing ``g`` points leads to coordinate ``c - g`` of the next
    state."""
    fill_cands(_row_entry, (R, mask, up, fifty, c0), rp, T, mask, fifty, X)


# On-demand decisions of an objective. Options whose objective values are within ``rel``
# times the best's magnitude of the best are *tied* (probabilities and utilities are not
# in points, so the tolerance is relative); among tied options the one ``optimal`` values
# most is played (the mean widget of the same state, ties there within ``eps`` points),
# then the fixed order of the module docstring. So where the objective no longer tells
# options apart -- a target already reached or out of reach -- the policy plays as
# ``optimal`` does, and otherwise it is the objective's best.


@njit(inline="always")
def _keeps_at_best(E, m, la, subsets, n, rel):
    """(how many keeps in ``subsets`` are tied with the best ``m`` under the objective
    (values ``E[k, la]``), the position of the last of them)."""
    thr = m - rel * abs(m)
    count = 0
    best = 0
    for j in range(n):
        if E[subsets[j], la] >= thr:
            count += 1
            best = j
    return count, best


@njit(inline="always")
def _pick_keep(E, m, la, Em, subsets, n, rel, eps):
    """The position in ``subsets`` of the keep played (objective values ``E[k, la]``, their
    best ``m``; ``optimal``'s values ``Em[k]``)."""
    count, best = _keeps_at_best(E, m, la, subsets, n, rel)
    if count == 1:
        return best
    thr = m - rel * abs(m)
    mm = -np.inf
    for j in range(n):
        k = subsets[j]
        if E[k, la] >= thr:
            mm = max(mm, Em[k])
    thr2 = mm - eps
    bp = N_KEEPS
    for j in range(n):
        k = subsets[j]
        if E[k, la] >= thr and Em[k] >= thr2 and KEEP_PREFERENCE[k] < bp:
            best = j
            bp = KEEP_PREFERENCE[k]
    return best


@njit(inline="always")
def _pick_box(ordinary, V, mask, up, fifty, r, vals, scores, joker, bonus, m, rel, eps):
    """The box played for roll ``r`` among boxes with objective values ``vals[b]`` (-inf:
    not allowed; ``m`` their best): the lowest of those tied with the best and valued most
    by ``optimal``. ``ordinary``: ``TABLES.ordinary``, passed alone (a call that takes the
    whole table tuple costs many times the decision)."""
    thr = m - rel * abs(m)
    count = 0
    box = 0
    for b in range(N_BOXES):
        if vals[b] >= thr:
            count += 1
            if count == 1:
                box = b
    if count == 1:
        return box
    mm = -np.inf
    for b in range(N_BOXES):
        if vals[b] >= thr:
            sc = scores[b] if joker else ordinary[b, r]
            pts, nu, nf = apply_box(up, fifty, b, sc)
            vals[N_BOXES + b] = (pts + bonus) + V[state_index(mask | (1 << b), nu, nf)]
            mm = max(mm, vals[N_BOXES + b])
    for b in range(N_BOXES - 1, -1, -1):
        if vals[b] >= thr and vals[N_BOXES + b] >= mm - eps:
            box = b
    return box


@njit(inline="always")
def _box_values(T, X, mask, r, la, scores, joker, vals):
    """``vals[b]``: the objective's value of box ``b`` for final roll ``r`` in lane ``la``
    (-inf: not allowed); returns the best."""
    m = -np.inf
    face = T.penta_face[r]
    for b in range(N_BOXES):
        if joker:
            v = X.jv[face, b, la] if scores[b] >= 0 else -np.inf
        else:
            v = -np.inf if (mask >> b) & 1 else X.cv[b, T.box_class[b, r], la]
        vals[b] = v
        m = max(m, v)
    return m


@njit(inline="always")
def _box_values_lanes(T, X, mask, r, scores, joker, bv, bm):
    """:func:`_box_values` of every lane: ``bv[b, l]``, and the best of each lane in
    ``bm[l]``."""
    face = T.penta_face[r]
    for la in range(config.PENTA_SOLVER_LANES):
        bm[la] = -np.inf
    for b in range(N_BOXES):
        if joker:
            for la in range(config.PENTA_SOLVER_LANES):
                bv[b, la] = X.jv[face, b, la] if scores[b] >= 0 else -np.inf
        elif (mask >> b) & 1:
            for la in range(config.PENTA_SOLVER_LANES):
                bv[b, la] = -np.inf
        else:
            c = T.box_class[b, r]
            for la in range(config.PENTA_SOLVER_LANES):
                bv[b, la] = X.cv[b, c, la]
        for la in range(config.PENTA_SOLVER_LANES):
            bm[la] = max(bm[la], bv[b, la])


@njit(cache=True)
def keep_tied(T, X, la, rel, r, left):
    """Whether the keep decision of lane ``la`` for roll ``r`` with ``left`` (1 or 2) rerolls
    left has options tied under the objective: only then does :func:`decide_roll` read
    ``optimal``'s keep values (``Mw``, :func:`state_value`); its box decisions never do."""
    E, M = (X.lanes.E, X.lanes.M) if left == 2 else (X.E1, X.M1)
    count, _ = _keeps_at_best(E, M[ROLL_BASE + r, la], la, T.subsets[r], T.n_subsets[r], rel)
    return count > 1


@njit(cache=True)
def decide_roll(rp, T, V, mask, up, fifty, X, la, Mw, rel, eps, r, left):
    """One decision of lane ``la`` (as :func:`decide_lane`): with ``left`` rerolls left the
    keep played from roll ``r`` (its position in ``SUBSETS[r]``), with none the box.
    ``Mw``: ``optimal``'s widget of the state (:func:`state_value` on ``V``), read for a keep
    only if :func:`keep_tied`; else its arrays are scratch."""
    if left == 2:
        return _pick_keep(X.lanes.E, X.lanes.M[ROLL_BASE + r, la], la, Mw.E2, T.subsets[r],
                          T.n_subsets[r], rel, eps)
    if left == 1:
        return _pick_keep(X.E1, X.M1[ROLL_BASE + r, la], la, Mw.E1, T.subsets[r],
                          T.n_subsets[r], rel, eps)
    scores = Mw.scores
    joker = T.penta_face[r] != 0 and ((mask >> PENTA_BOX) & 1) == 1
    bonus = roll_box_scores(rp, T, mask, fifty, r, scores) if joker else 0
    vals = Mw.A  # scratch (462,): the boxes' objective values, then optimal's
    m = _box_values(T, X, mask, r, la, scores, joker, vals)
    return _pick_box(T.ordinary, V, mask, up, fifty, r, vals, scores, joker, bonus, m, rel,
                     eps)


@njit(cache=True)
def decide_lanes(rp, T, V, mask, up, fifty, X, lanes, Mw, rel, eps, out):
    """The packed decisions (:mod:`dicelab.penta.tables` layout) of lanes ``0 .. lanes - 1``
    for every roll into ``out[l]`` (uint16 (L, 252)), after :func:`turn_from_cands`
    (``keep_e1``) on state (``mask``, ``up``, ``fifty``); ``Mw`` is the mean widget of that
    state (:class:`TurnScratch` after :func:`state_value` on the ``optimal`` values ``V``),
    which breaks the objective's ties (see the comment above). The lanes' keeps are
    compared side by side; a lane with tied keeps is settled alone."""
    L = config.PENTA_SOLVER_LANES
    E2, E1, M2, M1 = X.lanes.E, X.E1, X.lanes.M, X.M1
    scores = Mw.scores
    vals = Mw.A  # scratch, as in decide_roll
    thr = np.empty(L)
    cnt = np.empty(L, dtype=np.int64)
    best = np.empty(L, dtype=np.int64)
    penta_filled = ((mask >> PENTA_BOX) & 1) == 1
    ordinary = T.ordinary
    bv = np.empty((N_BOXES, L))
    bm = np.empty(L)
    for r in range(N_ROLLS):
        sub = T.subsets[r]
        n = T.n_subsets[r]
        for stage in range(2):
            E = E2 if stage == 0 else E1
            M = M2 if stage == 0 else M1
            for la in range(L):
                m = M[ROLL_BASE + r, la]
                thr[la] = m - rel * abs(m)
                cnt[la] = 0
                best[la] = 0
            for j in range(n):
                k = sub[j]
                for la in range(L):
                    hit = E[k, la] >= thr[la]
                    cnt[la] += hit
                    best[la] = j if hit else best[la]
            for la in range(lanes):
                pos = best[la]
                if cnt[la] > 1:
                    pos = _pick_keep(E, M[ROLL_BASE + r, la], la, Mw.E2 if stage == 0
                                     else Mw.E1, sub, n, rel, eps)
                if stage == 0:
                    out[la, r] = pos
                else:
                    out[la, r] |= pos << KEEP1_SHIFT
        joker = T.penta_face[r] != 0 and penta_filled
        bonus = roll_box_scores(rp, T, mask, fifty, r, scores) if joker else 0
        # the boxes side by side as the keeps: a lane with tied boxes is settled alone
        _box_values_lanes(T, X, mask, r, scores, joker, bv, bm)
        for la in range(L):
            thr[la] = bm[la] - rel * abs(bm[la])
            cnt[la] = 0
            best[la] = 0
        for b in range(N_BOXES):
            for la in range(L):
                hit = bv[b, la] >= thr[la]
                best[la] = b if hit and cnt[la] == 0 else best[la]
                cnt[la] += hit
        for la in range(lanes):
            box = best[la]
            if cnt[la] > 1:
                for b in range(N_BOXES):
                    vals[b] = bv[b, la]
                box = _pick_box(ordinary, V, mask, up, fifty, r, vals, scores, joker, bonus,
                                bm[la], rel, eps)
            out[la, r] |= box << BOX_SHIFT
