"""The one-turn kernels ("widget") shared by the solver and the policies.

A turn-start state is one int64 index ``s = (mask << 7) | (up << 1) | fifty`` with
``mask`` the 13-bit set of filled boxes, ``up`` the upper-section total capped at 63
and ``fifty`` whether the Penta box holds 50. ``V[s]`` is the expected number of
points still to come from state ``s`` under optimal play (0 on a full card); the
upper bonus (+35) and Penta bonuses (+100) are counted in the turn that earns them.

With ``V`` known for the next layer, one turn is solved in three passes over plain
arrays (all values are expected *final* points from now on):

1. ``e3[r]``: the best box for each final roll ``r``: box points + bonuses + V(next);
2. a reroll stage maps values of 5-dice rolls to values of keeps,
   ``E[K] = mean_f E[K + f]`` (``E`` of a 5-dice keep = its roll value), then the
   best keep contained in each multiset, ``M[S] = max(E[S], max_f M[S - f])``, so the
   value of roll ``r`` with one more reroll is ``M[r]``;
3. two reroll stages, then ``V[s] = sum_r P(r) * value(r, 2 rerolls left)``.

The greedy policy is this same widget with ``V = 0`` (only this turn's points count).

Decisions (which box, which keep) are argmaxes over these float64 values, and options
that are equal in real arithmetic come out of different summation paths a rounding
error apart (up to 8.5e-14 points). So the decision kernels (``track``) treat options
within :data:`TIE_EPS` points of each other as *ties* and settle them by a fixed order,
never by rounding: the lowest box number; the larger keep (fewer dice rerolled), then
the lower :mod:`dicelab.dice` rank (:data:`KEEP_PREFERENCE`). Boxes are visited in
increasing order and the choice moves to a later box only when it is worth more than
``TIE_EPS`` above the current choice; keeps: see the comment above :func:`reroll_stage`.
Either way the option played is worth at least (best - ``TIE_EPS``), and when every gap
is either rounding (far below ``TIE_EPS``) or genuine (far above; measured: always) it
is the first option in the order among those tied with the best, whatever the summation
order. The values themselves are the exact maxima, untouched by any of this.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab.penta.rules import N_BOXES, PENTA_BOX, UPPER_BONUS, UPPER_TARGET
from dicelab.penta.scoring import roll_box_scores
from dicelab.penta.tables import KEEP_SIZE, N_KEEPS, N_ROLLS, ROLL_BASE

#: Options whose values differ by at most this many points are ties (see the module
#: docstring). Measured over every option of every reachable state (about 5e9 pairs of
#: options per rule set; the gap of each option to the best of its decision): exactly tied
#: options differ by rounding of at most 8.5e-14 points (about one ulp at 256) in all four
#: rule sets; the smallest genuine gaps are 4.4e-9 (free-joker), 2.1e-8 (seed), 9.8e-8
#: (hasbro), 1.0e-7 (no-bonus) and 9.9e-7 (greedy). 1e-10 is 1,000 times the noise and
#: 44 times below the smallest genuine gap.
TIE_EPS = 1e-10

N_STATES = (1 << N_BOXES) << 7
FULL_MASK = (1 << N_BOXES) - 1
_N_SMALL = ROLL_BASE  # keeps of 0..4 dice are ranks 0..ROLL_BASE-1
_SIXTH = 1.0 / 6.0


def _keep_preference() -> np.ndarray:
    order = sorted(range(N_KEEPS), key=lambda k: (-int(KEEP_SIZE[k]), k))
    pref = np.empty(N_KEEPS, dtype=np.int64)
    pref[order] = np.arange(N_KEEPS)
    return pref


#: ``KEEP_PREFERENCE[k]``: rank of keep ``k`` in the tie order (0 = taken first among
#: tied keeps): more dice first, then the lower global rank (count vectors in ascending
#: order: fewer 1s, then fewer 2s, ...; so 6 6 before 5 5 before 1 1).
KEEP_PREFERENCE = _keep_preference()


@njit(inline="always")
def state_index(mask, up, fifty):
    return (mask << 7) | (up << 1) | fifty


@njit(inline="always")
def _box_value(V, mask, up, fifty, b, sc, bonus):
    pts = sc + bonus
    nu = up
    nf = fifty
    if b < 6:
        nu = min(UPPER_TARGET, up + sc)
        if up < UPPER_TARGET and nu >= UPPER_TARGET:
            pts += UPPER_BONUS
    elif b == PENTA_BOX:
        nf = 1 if sc == 50 else 0
    return pts + V[state_index(mask | (1 << b), nu, nf)]


@njit(cache=True)
def best_box(V, mask, up, fifty, scores, bonus, eps=TIE_EPS):
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


@njit(inline="always")
def _visit_box(V, table, roll_counts, mask, up, fifty, b, e3, box, bv, cand, track, eps):
    """Offer every roll's value in open box ``b`` to :func:`_visit`."""
    nm = mask | (1 << b)
    if b < 6:
        face = b + 1
        for k in range(6):
            sc = k * face
            nu = min(UPPER_TARGET, up + sc)
            pts = sc
            if up < UPPER_TARGET and nu >= UPPER_TARGET:
                pts += UPPER_BONUS
            cand[k] = pts + V[state_index(nm, nu, fifty)]
        for r in range(N_ROLLS):
            _visit(e3, box, bv, r, cand[roll_counts[r, face]], b, track, eps)
    elif b == PENTA_BOX:
        v0 = V[state_index(nm, up, 0)]
        v1 = 50.0 + V[state_index(nm, up, 1)]
        for r in range(N_ROLLS):
            _visit(e3, box, bv, r, v1 if table[b, r] == 50 else v0, b, track, eps)
    else:
        base = V[state_index(nm, up, fifty)]
        for r in range(N_ROLLS):
            _visit(e3, box, bv, r, table[b, r] + base, b, track, eps)


@njit(cache=True)
def final_values(V, rp, table, penta_face, penta_roll, roll_counts, mask, up, fifty,
                 e3, box, track, scores, cand, eps=TIE_EPS):
    """``e3[r]``: value of ending the turn with roll ``r`` in the best box.

    If ``track``, ``box[r]`` receives the box played: worth at least ``e3[r] - eps``, and
    of boxes tied with the best (equal up to rounding) the lowest. ``scores`` (int64[13])
    and ``cand`` (float64[6]) are scratch.
    """
    bv = np.empty(N_ROLLS if track else 0)
    for r in range(N_ROLLS):
        e3[r] = -np.inf
        if track:
            bv[r] = -np.inf
    for b in range(N_BOXES):
        if not (mask >> b) & 1:
            _visit_box(V, table, roll_counts, mask, up, fifty, b, e3, box, bv, cand, track,
                       eps)
    if (mask >> PENTA_BOX) & 1:
        # a Penta with the Penta box filled: joker and bonus rules
        for f in range(1, 7):
            r = penta_roll[f]
            bonus = roll_box_scores(rp, table, penta_face, mask, fifty, r, scores)
            v, arg = best_box(V, mask, up, fifty, scores, bonus, eps)
            e3[r] = v
            if track:
                box[r] = arg


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


@njit(cache=True)
def reroll_stage(vals, add, sub_ptr, sub_idx, E, M, arg, track, out, eps=TIE_EPS):
    """Values ``vals[r]`` of 5-dice rolls -> ``out[r]``: value of roll ``r`` with one reroll.

    ``E``/``M`` (float64[462]) are scratch; ``M[S]`` is the exact best keep value within
    multiset ``S``. If ``track``, ``arg[S]`` is the keep (global rank) played in ``S``:
    the first in :data:`KEEP_PREFERENCE` order among the candidates within ``eps`` of
    ``M[S]`` (see the comment above); ``E[arg[S]] >= M[S] - eps`` always.
    """
    for r in range(N_ROLLS):
        E[ROLL_BASE + r] = vals[r]
    for k in range(_N_SMALL - 1, -1, -1):
        s = 0.0
        for f in range(1, 7):
            s += E[add[k, f]]
        E[k] = s * _SIXTH
    if track:
        A = np.empty(N_KEEPS)
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
def state_value(V, rp, table, penta_face, penta_roll, roll_counts, roll_prob, add, sub_ptr,
                sub_idx, mask, up, fifty, e3, r2, r1, E, M, scores, cand, box, arg2, arg1,
                track, eps=TIE_EPS):
    """Expected points to come from state (mask, up, fifty) given ``V`` of later states.

    With ``track``: ``box[r]`` best box for a final roll, ``arg1[S]``/``arg2[S]`` best keep
    within multiset ``S`` with one / two rerolls left (see :func:`reroll_stage`); ties
    within ``eps`` as there.
    """
    final_values(V, rp, table, penta_face, penta_roll, roll_counts, mask, up, fifty, e3, box,
                 track, scores, cand, eps)
    reroll_stage(e3, add, sub_ptr, sub_idx, E, M, arg1, track, r2, eps)
    reroll_stage(r2, add, sub_ptr, sub_idx, E, M, arg2, track, r1, eps)
    total = 0.0
    for r in range(N_ROLLS):
        total += roll_prob[r] * r1[r]
    return total


# --- the same widget for LANES states at once ---------------------------------------------
# States with the same filled boxes and Penta flag but different upper totals share every
# index computation; only the values differ. Putting them in the lanes of 2-D arrays
# (innermost axis) turns the gathers above into contiguous vector loads. The arithmetic
# is the scalar widget's, operation for operation, so values are bit-identical to
# :func:`state_value` (a test checks it).

LANES = 8


@njit(inline="always")
def _lane_visit(e3, box, bv, r, la, v, b, track, eps):
    # :func:`_visit` per lane; selects rather than branches: the comparisons are
    # unpredictable, selects vectorise
    e3[r, la] = max(e3[r, la], v)
    if track:
        better = v > bv[r, la] + eps
        box[r, la] = b if better else box[r, la]
        bv[r, la] = v if better else bv[r, la]


@njit(inline="always")
def _visit_box_lanes(V, table, roll_counts, mask, fifty, ups, b, e3, box, bv, cand, base, track,
                     eps):
    """:func:`_visit_box` for the upper totals ``ups[l]``."""
    nm = mask | (1 << b)
    if b < 6:
        face = b + 1
        for k in range(6):
            sc = k * face
            for la in range(LANES):
                up = ups[la]
                nu = min(UPPER_TARGET, up + sc)
                pts = sc
                if up < UPPER_TARGET and nu >= UPPER_TARGET:
                    pts += UPPER_BONUS
                cand[k, la] = pts + V[state_index(nm, nu, fifty)]
        for r in range(N_ROLLS):
            c = roll_counts[r, face]
            for la in range(LANES):
                _lane_visit(e3, box, bv, r, la, cand[c, la], b, track, eps)
    elif b == PENTA_BOX:
        for la in range(LANES):
            cand[0, la] = V[state_index(nm, ups[la], 0)]
            cand[1, la] = 50.0 + V[state_index(nm, ups[la], 1)]
        for r in range(N_ROLLS):
            c = 1 if table[b, r] == 50 else 0
            for la in range(LANES):
                _lane_visit(e3, box, bv, r, la, cand[c, la], b, track, eps)
    else:
        for la in range(LANES):
            base[la] = V[state_index(nm, ups[la], fifty)]
        for r in range(N_ROLLS):
            t = table[b, r]
            for la in range(LANES):
                _lane_visit(e3, box, bv, r, la, t + base[la], b, track, eps)


@njit(cache=True)
def final_values_lanes(V, rp, table, penta_face, penta_roll, roll_counts, mask, fifty, ups,
                       e3, scores, cand, base, box, track, bv, eps):
    """:func:`final_values` for the upper totals ``ups[l]`` (l < LANES): ``e3[r, l]``
    (and, if ``track``, the box played ``box[r, l]``; ``bv`` (float64[252, LANES]) is
    then scratch)."""
    for r in range(N_ROLLS):
        for la in range(LANES):
            e3[r, la] = -np.inf
            if track:
                bv[r, la] = -np.inf
    for b in range(N_BOXES):
        if not (mask >> b) & 1:
            _visit_box_lanes(V, table, roll_counts, mask, fifty, ups, b, e3, box, bv, cand,
                             base, track, eps)
    if (mask >> PENTA_BOX) & 1:
        for f in range(1, 7):
            r = penta_roll[f]
            bonus = roll_box_scores(rp, table, penta_face, mask, fifty, r, scores)
            for la in range(LANES):
                v, arg = best_box(V, mask, ups[la], fifty, scores, bonus, eps)
                e3[r, la] = v
                if track:
                    box[r, la] = arg


@njit(cache=True)
def reroll_stage_lanes(vals, add, sub_ptr, sub_idx, E, M, out, m, arg, track, A, pa, eps):
    """:func:`reroll_stage` on (., LANES) arrays; ``m`` (float64[LANES]) is scratch; if
    ``track``, ``arg`` as there and ``A`` (float64[462, LANES]) and ``pa`` (int64[LANES])
    are scratch too (unused otherwise)."""
    for r in range(N_ROLLS):
        for la in range(LANES):
            E[ROLL_BASE + r, la] = vals[r, la]
    for k in range(_N_SMALL - 1, -1, -1):
        a1 = add[k, 1]
        a2 = add[k, 2]
        a3 = add[k, 3]
        a4 = add[k, 4]
        a5 = add[k, 5]
        a6 = add[k, 6]
        for la in range(LANES):
            E[k, la] = (((((E[a1, la] + E[a2, la]) + E[a3, la]) + E[a4, la]) + E[a5, la])
                        + E[a6, la]) * _SIXTH
    if track:
        for k in range(N_KEEPS):
            for la in range(LANES):
                m[la] = E[k, la]
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(LANES):
                    m[la] = max(m[la], M[p, la])
            pk = KEEP_PREFERENCE[k]
            n_self = 0
            for la in range(LANES):
                M[k, la] = m[la]
                m[la] -= eps  # from here on m is the tie threshold
                arg[k, la] = k
                A[k, la] = E[k, la]
                me = E[k, la] >= m[la]
                pa[la] = pk if me else N_KEEPS
                n_self += me
            if n_self == LANES:
                continue  # k itself is played in every lane: no subset can come first
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(LANES):
                    c = arg[p, la]
                    pc = KEEP_PREFERENCE[c]
                    take = (A[p, la] >= m[la]) & (pc < pa[la])
                    arg[k, la] = c if take else arg[k, la]
                    A[k, la] = A[p, la] if take else A[k, la]
                    pa[la] = pc if take else pa[la]
    else:
        for k in range(N_KEEPS):
            for la in range(LANES):
                m[la] = E[k, la]
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(LANES):
                    m[la] = max(m[la], M[p, la])
            for la in range(LANES):
                M[k, la] = m[la]
    for r in range(N_ROLLS):
        for la in range(LANES):
            out[r, la] = M[ROLL_BASE + r, la]
