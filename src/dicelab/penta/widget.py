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
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab.penta.rules import N_BOXES, PENTA_BOX, UPPER_BONUS, UPPER_TARGET
from dicelab.penta.scoring import roll_box_scores
from dicelab.penta.tables import N_KEEPS, N_ROLLS, ROLL_BASE

N_STATES = (1 << N_BOXES) << 7
FULL_MASK = (1 << N_BOXES) - 1
_N_SMALL = ROLL_BASE  # keeps of 0..4 dice are ranks 0..ROLL_BASE-1
_SIXTH = 1.0 / 6.0


@njit(inline="always")
def state_index(mask, up, fifty):
    return (mask << 7) | (up << 1) | fifty


@njit(cache=True)
def best_box(V, mask, up, fifty, scores, bonus):
    """Best allowed box for scores ``scores`` (-1 = not allowed): returns (value, box).

    ``value`` = points (box + ``bonus`` + upper bonus if earned) + ``V`` of the next state.
    Ties go to the lowest box number.
    """
    best = -np.inf
    arg = -1
    for b in range(N_BOXES):
        sc = scores[b]
        if sc < 0:
            continue
        pts = sc + bonus
        nu = up
        nf = fifty
        if b < 6:
            nu = min(UPPER_TARGET, up + sc)
            if up < UPPER_TARGET and nu >= UPPER_TARGET:
                pts += UPPER_BONUS
        elif b == PENTA_BOX:
            nf = 1 if sc == 50 else 0
        v = pts + V[state_index(mask | (1 << b), nu, nf)]
        if v > best:
            best = v
            arg = b
    return best, arg


@njit(inline="always")
def _update(e3, box, r, v, b, track):
    if v > e3[r]:
        e3[r] = v
        if track:
            box[r] = b


@njit(cache=True)
def final_values(V, rp, table, penta_face, penta_roll, roll_counts, mask, up, fifty,
                 e3, box, track, scores, cand):
    """``e3[r]``: value of ending the turn with roll ``r`` in the best box.

    If ``track``, ``box[r]`` receives that box (ties: the lowest box number).
    ``scores`` (int64[13]) and ``cand`` (float64[6]) are scratch.
    """
    for r in range(N_ROLLS):
        e3[r] = -np.inf
    for b in range(N_BOXES):
        if (mask >> b) & 1:
            continue
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
                _update(e3, box, r, cand[roll_counts[r, face]], b, track)
        elif b == PENTA_BOX:
            v0 = V[state_index(nm, up, 0)]
            v1 = 50.0 + V[state_index(nm, up, 1)]
            for r in range(N_ROLLS):
                _update(e3, box, r, v1 if table[b, r] == 50 else v0, b, track)
        else:
            base = V[state_index(nm, up, fifty)]
            for r in range(N_ROLLS):
                _update(e3, box, r, table[b, r] + base, b, track)
    if (mask >> PENTA_BOX) & 1:
        # a Penta with the Penta box filled: joker and bonus rules
        for f in range(1, 7):
            r = penta_roll[f]
            bonus = roll_box_scores(rp, table, penta_face, mask, fifty, r, scores)
            v, arg = best_box(V, mask, up, fifty, scores, bonus)
            e3[r] = v
            if track:
                box[r] = arg


@njit(cache=True)
def reroll_stage(vals, add, sub_ptr, sub_idx, E, M, arg, track, out):
    """Values ``vals[r]`` of 5-dice rolls -> ``out[r]``: value of roll ``r`` with one reroll.

    ``E``/``M`` (float64[462]) are scratch; if ``track``, ``arg[S]`` is the keep (global
    rank) achieving ``M[S]`` (ties: the larger keep, i.e. fewer dice rerolled).
    """
    for r in range(N_ROLLS):
        E[ROLL_BASE + r] = vals[r]
    for k in range(_N_SMALL - 1, -1, -1):
        s = 0.0
        for f in range(1, 7):
            s += E[add[k, f]]
        E[k] = s * _SIXTH
    if track:
        for k in range(N_KEEPS):
            m = E[k]
            a = k
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                if M[p] > m:
                    m = M[p]
                    a = arg[p]
            M[k] = m
            arg[k] = a
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
                track):
    """Expected points to come from state (mask, up, fifty) given ``V`` of later states.

    With ``track``: ``box[r]`` best box for a final roll, ``arg1[S]``/``arg2[S]`` best keep
    within multiset ``S`` with one / two rerolls left (see :func:`reroll_stage`).
    """
    final_values(V, rp, table, penta_face, penta_roll, roll_counts, mask, up, fifty, e3, box,
                 track, scores, cand)
    reroll_stage(e3, add, sub_ptr, sub_idx, E, M, arg1, track, r2)
    reroll_stage(r2, add, sub_ptr, sub_idx, E, M, arg2, track, r1)
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
def _lane_max(e3, box, r, la, v, b, track):
    # selects rather than branches: the comparisons are unpredictable, selects vectorise
    if track:
        better = v > e3[r, la]
        box[r, la] = b if better else box[r, la]
        e3[r, la] = v if better else e3[r, la]
    else:
        e3[r, la] = max(e3[r, la], v)


@njit(cache=True)
def final_values_lanes(V, rp, table, penta_face, penta_roll, roll_counts, mask, fifty, ups,
                       e3, scores, cand, base, box, track):
    """:func:`final_values` for the upper totals ``ups[l]`` (l < LANES): ``e3[r, l]``
    (and, if ``track``, the best box ``box[r, l]``)."""
    for r in range(N_ROLLS):
        for la in range(LANES):
            e3[r, la] = -np.inf
    for b in range(N_BOXES):
        if (mask >> b) & 1:
            continue
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
                    _lane_max(e3, box, r, la, cand[c, la], b, track)
        elif b == PENTA_BOX:
            for la in range(LANES):
                cand[0, la] = V[state_index(nm, ups[la], 0)]
                cand[1, la] = 50.0 + V[state_index(nm, ups[la], 1)]
            for r in range(N_ROLLS):
                c = 1 if table[b, r] == 50 else 0
                for la in range(LANES):
                    _lane_max(e3, box, r, la, cand[c, la], b, track)
        else:
            for la in range(LANES):
                base[la] = V[state_index(nm, ups[la], fifty)]
            for r in range(N_ROLLS):
                t = table[b, r]
                for la in range(LANES):
                    _lane_max(e3, box, r, la, t + base[la], b, track)
    if (mask >> PENTA_BOX) & 1:
        for f in range(1, 7):
            r = penta_roll[f]
            bonus = roll_box_scores(rp, table, penta_face, mask, fifty, r, scores)
            for la in range(LANES):
                v, arg = best_box(V, mask, ups[la], fifty, scores, bonus)
                e3[r, la] = v
                if track:
                    box[r, la] = arg


@njit(cache=True)
def reroll_stage_lanes(vals, add, sub_ptr, sub_idx, E, M, out, m, arg, track):
    """:func:`reroll_stage` on (., LANES) arrays; ``m`` is scratch; ``arg`` as there."""
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
                M[k, la] = E[k, la]
                arg[k, la] = k
            for j in range(sub_ptr[k], sub_ptr[k + 1]):
                p = sub_idx[j]
                for la in range(LANES):
                    better = M[p, la] > M[k, la]
                    arg[k, la] = arg[p, la] if better else arg[k, la]
                    M[k, la] = M[p, la] if better else M[k, la]
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
