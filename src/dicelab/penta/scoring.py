"""Box scoring of Penta rolls: ordinary scores, the joker and the +100 bonus (jitted).

``ORDINARY[b, r]`` is the score of box ``b`` for roll ``r`` with no joker (RULES.md §1
table; five equal dice are neither a full house nor a straight). ``roll_box_scores``
applies a rule set to a scorecard: which boxes may take a roll, what each scores and
whether the +100 bonus is earned.

Scorecard state, as the kernels see it: ``mask`` (bit ``b`` set = box ``b`` filled),
``fifty`` (1 if the Penta box holds 50; only meaningful with bit 12 set).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab.penta.rules import (
    FULL_HOUSE,
    JOKER_IF_FIFTY,
    JOKER_IF_FILLED,
    JOKER_NEVER,
    LARGE_STRAIGHT,
    N_BOXES,
    ORDER_FORCED,
    PENTA_BOX,
    SMALL_STRAIGHT,
    RuleSet,
)
from dicelab.penta.tables import N_ROLLS, ROLL_COUNTS


@njit(cache=True)
def _score_box(counts, box):
    """Ordinary score of ``box`` for five dice with ``counts[f]`` dice showing ``f``."""
    total = 0
    most = 0
    for f in range(1, 7):
        total += f * counts[f]
        if counts[f] > most:
            most = counts[f]
    if box < 6:
        return (box + 1) * counts[box + 1]
    if box == 6:
        return total if most >= 3 else 0
    if box == 7:
        return total if most >= 4 else 0
    if box == 8:
        has3 = False
        has2 = False
        for f in range(1, 7):
            if counts[f] == 3:
                has3 = True
            elif counts[f] == 2:
                has2 = True
        return 25 if has3 and has2 else 0
    if box == 9:
        for lo in range(1, 4):
            if counts[lo] and counts[lo + 1] and counts[lo + 2] and counts[lo + 3]:
                return 30
        return 0
    if box == 10:
        for lo in range(1, 3):
            if (counts[lo] and counts[lo + 1] and counts[lo + 2] and counts[lo + 3]
                    and counts[lo + 4]):
                return 40
        return 0
    if box == 11:
        return total
    return 50 if most == 5 else 0


@njit(cache=True)
def _ordinary_table(roll_counts, out):
    for b in range(N_BOXES):
        for r in range(roll_counts.shape[0]):
            out[b, r] = _score_box(roll_counts[r], b)


def ordinary_table() -> np.ndarray:
    """int64 array (13, 252): ordinary score of every box for every roll."""
    out = np.empty((N_BOXES, N_ROLLS), dtype=np.int64)
    _ordinary_table(ROLL_COUNTS, out)
    return out


#: ``ORDINARY[b, r]``: ordinary score of box ``b`` for roll ``r``.
ORDINARY = ordinary_table()
#: ``PENTA_FACE[r]``: the face of roll ``r`` if it is five equal dice, else 0.
PENTA_FACE = np.array([next((f for f in range(1, 7) if ROLL_COUNTS[r, f] == 5), 0)
                       for r in range(N_ROLLS)], dtype=np.int64)


@njit(cache=True)
def joker_applies(rp, mask, fifty, face):
    """True if a Penta of ``face`` (0 = not a Penta) is a joker on this scorecard."""
    if face == 0 or rp[0] == JOKER_NEVER or not (mask >> PENTA_BOX) & 1:
        return False
    if rp[0] == JOKER_IF_FIFTY:
        return fifty == 1
    return rp[0] == JOKER_IF_FILLED


@njit(cache=True)
def roll_box_scores(rp, table, penta_face, mask, fifty, r, out):
    """Score of roll ``r`` in every box under rule set ``rp``; returns the bonus earned.

    Writes ``out[b]`` (int64, length 13): the points box ``b`` would score, or -1 if ``b``
    is filled or not allowed (forced joker order). The return value is the Penta bonus
    (e.g. 100) earned whichever allowed box is chosen, else 0.
    """
    face = penta_face[r]
    bonus = 0
    if face != 0 and (mask >> PENTA_BOX) & 1 and fifty == 1:
        bonus = rp[2]
    if not joker_applies(rp, mask, fifty, face):
        for b in range(N_BOXES):
            out[b] = -1 if (mask >> b) & 1 else table[b, r]
        return bonus
    total = 5 * face
    for b in range(N_BOXES):
        out[b] = -1
    if rp[1] == ORDER_FORCED:
        if not (mask >> (face - 1)) & 1:
            out[face - 1] = total
            return bonus
        lower_open = False
        for b in range(6, PENTA_BOX):
            if not (mask >> b) & 1:
                lower_open = True
                out[b] = _joker_value(b, total)
        if not lower_open:
            for b in range(6):
                if not (mask >> b) & 1:
                    out[b] = 0
        return bonus
    # free choice: ordinary scores, joker values only once the face's upper box is filled
    upper_filled = (mask >> (face - 1)) & 1
    for b in range(N_BOXES):
        if not (mask >> b) & 1:
            if upper_filled and FULL_HOUSE <= b <= LARGE_STRAIGHT:
                out[b] = _joker_value(b, total)
            else:
                out[b] = table[b, r]
    return bonus


@njit(cache=True)
def _joker_value(b, total):
    if b == FULL_HOUSE:
        return 25
    if b == SMALL_STRAIGHT:
        return 30
    if b == LARGE_STRAIGHT:
        return 40
    return total


def box_scores(rules: RuleSet, mask: int, fifty: int, r: int) -> tuple[np.ndarray, int]:
    """Python wrapper of :func:`roll_box_scores`: (scores int64[13] with -1 = not allowed, bonus).

    >>> from dicelab.penta.rules import get_rules
    >>> from dicelab.penta.tables import roll_index
    >>> s, bonus = box_scores(get_rules("seed"), 1 << 12, 1, roll_index([4] * 5))
    >>> int(s[3]), int(bonus), int((s >= 0).sum())
    (20, 100, 1)
    """
    out = np.empty(N_BOXES, dtype=np.int64)
    bonus = roll_box_scores(rules.params, ORDINARY, PENTA_FACE, int(mask), int(fifty), int(r),
                            out)
    return out, int(bonus)
