"""Box scoring of Penta rolls and what a box entry does to a card (jitted).

``ORDINARY[b, r]`` is the score of box ``b`` for roll ``r`` with no joker (RULES.md §1
table; five equal dice are neither a full house nor a straight). :func:`roll_box_scores`
applies a rule set to a scorecard: which boxes may take a roll, what each scores and
whether the Penta bonus is earned. :func:`apply_box` writes a score into a box: the
points TOTAL gains (upper bonus included) and the card's next upper total and Penta
flag. The widget, the solver and the simulator all score through these functions.

Scorecard state, as the kernels see it: ``mask`` (bit ``b`` set = box ``b`` filled),
``up`` (upper total capped at 63), ``fifty`` (1 if the Penta box holds 50).

:data:`TABLES` groups every static table a turn reads (a :class:`TurnTables`), the
one argument through which the kernels receive them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from dicelab.jit import helper
from dicelab.penta.rules import (
    CHANCE,
    FACES,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    FULL_HOUSE_POINTS,
    JOKER_IF_FIFTY,
    JOKER_IF_FILLED,
    JOKER_NEVER,
    LARGE_STRAIGHT,
    LARGE_STRAIGHT_POINTS,
    N_BOXES,
    N_DICE,
    ORDER_FORCED,
    PENTA_BONUS,
    PENTA_BOX,
    PENTA_POINTS,
    SMALL_STRAIGHT,
    SMALL_STRAIGHT_POINTS,
    THREE_OF_A_KIND,
    UPPER_BONUS,
    UPPER_BOXES,
    UPPER_TARGET,
    RuleSet,
)
from dicelab.penta.tables import (
    ADD,
    KEEP_POS,
    KEEP_SIZE,
    N_ROLLS,
    N_SUBSETS,
    PENTA_ROLL,
    ROLL_COUNTS,
    ROLL_PROB,
    SUB_IDX,
    SUB_PTR,
    SUBSETS,
    UNION,
)


def _score_box(counts: list[int], box: int) -> int:
    """Ordinary score of ``box`` for five dice with ``counts[f]`` dice showing ``f``."""
    total = 0
    most = 0
    for f in range(1, FACES + 1):
        total += f * counts[f]
        if counts[f] > most:
            most = counts[f]
    if box < UPPER_BOXES:
        return (box + 1) * counts[box + 1]
    if box == THREE_OF_A_KIND:
        return total if most >= 3 else 0
    if box == FOUR_OF_A_KIND:
        return total if most >= 4 else 0
    if box == FULL_HOUSE:
        has3 = False
        has2 = False
        for f in range(1, FACES + 1):
            if counts[f] == 3:
                has3 = True
            elif counts[f] == 2:
                has2 = True
        return FULL_HOUSE_POINTS if has3 and has2 else 0
    if box == SMALL_STRAIGHT:
        for lo in range(1, FACES - 2):
            if counts[lo] and counts[lo + 1] and counts[lo + 2] and counts[lo + 3]:
                return SMALL_STRAIGHT_POINTS
        return 0
    if box == LARGE_STRAIGHT:
        for lo in range(1, FACES - 3):
            if (counts[lo] and counts[lo + 1] and counts[lo + 2] and counts[lo + 3]
                    and counts[lo + 4]):
                return LARGE_STRAIGHT_POINTS
        return 0
    if box == CHANCE:
        return total
    return PENTA_POINTS if most == N_DICE else 0


def _ordinary() -> np.ndarray:
    """:data:`ORDINARY`, computed once at import (in Python: no kernel to compile)."""
    rolls = ROLL_COUNTS.tolist()
    return np.array([[_score_box(counts, b) for counts in rolls] for b in range(N_BOXES)],
                    dtype=np.int64)


#: ``ORDINARY[b, r]``: ordinary score of box ``b`` for roll ``r`` (int64 (13, 252)).
ORDINARY = _ordinary()
#: ``PENTA_FACE[r]``: the face of roll ``r`` if it is five equal dice, else 0.
PENTA_FACE = np.zeros(N_ROLLS, dtype=np.int64)
PENTA_FACE[PENTA_ROLL[1:]] = np.arange(1, FACES + 1)


def _score_classes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:data:`BOX_CLASS`, :data:`CLASS_SCORE`, :data:`N_CLASSES`: the distinct ordinary
    scores of each box, in increasing order (an upper box's class is the number of dice
    showing its face)."""
    n = np.array([len(np.unique(ORDINARY[b])) for b in range(N_BOXES)], dtype=np.int64)
    cls = np.zeros((N_BOXES, N_ROLLS), dtype=np.int64)
    score = np.full((N_BOXES, int(n.max())), -1, dtype=np.int64)
    for b in range(N_BOXES):
        values, cls[b] = np.unique(ORDINARY[b], return_inverse=True)
        score[b, :values.size] = values
    return cls, score, n


#: ``BOX_CLASS[b, r]``: the class of roll ``r``'s ordinary score in box ``b`` (an index
#: into ``CLASS_SCORE[b]``); ``CLASS_SCORE[b, c]``: the score of class ``c`` (-1 past
#: ``N_CLASSES[b]``). A turn's value of box ``b`` depends on the roll only through its
#: class, so a kernel values each class once and each roll by a lookup.
BOX_CLASS, CLASS_SCORE, N_CLASSES = _score_classes()
#: The most classes of one box (27: Three of a kind, 0 or 5..30).
MAX_CLASSES = int(N_CLASSES.max())


@njit(inline="always")
def _joker_value(b, total):
    if b == FULL_HOUSE:
        return FULL_HOUSE_POINTS
    if b == SMALL_STRAIGHT:
        return SMALL_STRAIGHT_POINTS
    if b == LARGE_STRAIGHT:
        return LARGE_STRAIGHT_POINTS
    return total


#: ``BOX_VALUES[b]``: every score box ``b`` can hold under some rule set (the ordinary
#: scores of all rolls and the joker values; an upper box scratched by a joker holds 0,
#: an ordinary score too).
BOX_VALUES: tuple[frozenset[int], ...] = tuple(
    frozenset(int(x) for x in ORDINARY[b])
    | (frozenset(int(_joker_value.py_func(b, N_DICE * f)) for f in range(1, FACES + 1))
       if UPPER_BOXES <= b < PENTA_BOX else frozenset())
    for b in range(N_BOXES))

#: The highest TOTAL there is (1575): every box at its most, the upper bonus, and a Penta
#: bonus in each turn after the first Penta.
MAX_TOTAL = (sum(max(v) for v in BOX_VALUES) + UPPER_BONUS + (N_BOXES - 1) * PENTA_BONUS)

class TurnTables(NamedTuple):
    """The static tables of a turn (see :mod:`dicelab.penta.tables`), one kernel argument."""

    #: int64 (13, 252): :data:`ORDINARY`
    ordinary: np.ndarray
    #: int64 (252,): :data:`PENTA_FACE`
    penta_face: np.ndarray
    #: int64 (7,): the roll of five ``f`` (index 0 unused)
    penta_roll: np.ndarray
    #: int64 (252, 7): dice showing each face
    roll_counts: np.ndarray
    #: float64 (252,): probability of each roll
    roll_prob: np.ndarray
    #: int64 (462, 7): keep plus one die
    add: np.ndarray
    #: int64 (463,) and (n,): keep minus one die, as a list per keep
    sub_ptr: np.ndarray
    sub_idx: np.ndarray
    #: int16 (252, 32): the keeps within each roll
    subsets: np.ndarray
    #: int64 (462,): dice in each keep
    keep_size: np.ndarray
    #: int16 (462, 462): keep + rolled dice -> roll
    union: np.ndarray
    #: uint16 (252, 462): position of a keep in ``subsets[r]``
    keep_pos: np.ndarray
    #: int64 (13, 252), (13, 27), (13,): :data:`BOX_CLASS`, :data:`CLASS_SCORE`,
    #: :data:`N_CLASSES`
    box_class: np.ndarray
    class_score: np.ndarray
    n_classes: np.ndarray
    #: int64 (252,): the number of keeps within each roll (``SUBSETS`` row lengths)
    n_subsets: np.ndarray


TABLES = TurnTables(ORDINARY, PENTA_FACE, PENTA_ROLL, ROLL_COUNTS, ROLL_PROB, ADD, SUB_PTR,
                    SUB_IDX, SUBSETS, KEEP_SIZE, UNION, KEEP_POS, BOX_CLASS, CLASS_SCORE,
                    N_CLASSES, N_SUBSETS)


@njit(inline="always")
def apply_box(up, fifty, b, sc):
    """Write score ``sc`` into box ``b`` of a card with upper total ``up`` and flag ``fifty``.

    Returns ``(points, up, fifty)``: the points TOTAL gains (``sc``, plus the upper bonus
    if this box completes the upper section; a Penta bonus is not included), and the
    card's next capped upper total and Penta flag.
    """
    if b < UPPER_BOXES:
        nu = min(UPPER_TARGET, up + sc)
        if up < UPPER_TARGET and nu >= UPPER_TARGET:
            return sc + UPPER_BONUS, nu, fifty
        return sc, nu, fifty
    if b == PENTA_BOX:
        return sc, up, 1 if sc == PENTA_POINTS else 0
    return sc, up, fifty


@njit(inline="always")
def joker_applies(rp, mask, fifty, face):
    """True if a Penta of ``face`` (0 = not a Penta) is a joker on this scorecard."""
    if face == 0 or rp.joker_when == JOKER_NEVER or not (mask >> PENTA_BOX) & 1:
        return False
    if rp.joker_when == JOKER_IF_FIFTY:
        return fifty == 1
    return rp.joker_when == JOKER_IF_FILLED


@helper(cache=True)
def roll_box_scores(rp, T, mask, fifty, r, out):
    """Score of roll ``r`` in every box under rule set ``rp``; returns the bonus earned.

    Writes ``out[b]`` (int64, length 13): the points box ``b`` would score, or -1 if ``b``
    is filled or not allowed (forced joker order). The return value is the Penta bonus
    (e.g. 100) earned whichever allowed box is chosen, else 0. ``T``: :data:`TABLES`.
    """
    table = T.ordinary
    face = T.penta_face[r]
    bonus = 0
    if face != 0 and (mask >> PENTA_BOX) & 1 and fifty == 1:
        bonus = rp.penta_bonus
    if not joker_applies(rp, mask, fifty, face):
        for b in range(N_BOXES):
            out[b] = -1 if (mask >> b) & 1 else table[b, r]
        return bonus
    total = N_DICE * face
    for b in range(N_BOXES):
        out[b] = -1
    if rp.joker_order == ORDER_FORCED:
        if not (mask >> (face - 1)) & 1:
            out[face - 1] = total
            return bonus
        lower_open = False
        for b in range(UPPER_BOXES, PENTA_BOX):
            if not (mask >> b) & 1:
                lower_open = True
                out[b] = _joker_value(b, total)
        if not lower_open:
            for b in range(UPPER_BOXES):
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


def box_scores(rules: RuleSet, mask: int, fifty: int, r: int) -> tuple[np.ndarray, int]:
    """Python wrapper of :func:`roll_box_scores`: (scores int64[13] with -1 = not allowed, bonus).

    >>> from dicelab.penta.rules import get_rules
    >>> from dicelab.penta.tables import roll_index
    >>> s, bonus = box_scores(get_rules("seed"), 1 << PENTA_BOX, 1, roll_index([4] * 5))
    >>> int(s[3]), int(bonus), int((s >= 0).sum())
    (20, 100, 1)
    """
    out = np.empty(N_BOXES, dtype=np.int64)
    bonus = roll_box_scores(rules.params, TABLES, int(mask), int(fifty), int(r), out)
    return out, int(bonus)
