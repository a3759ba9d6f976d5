"""Index tables of Penta's dice over :mod:`dicelab.dice` ranks (plain int64/float64 arrays).

* A *roll* is a multiset of 5 dice, numbered locally ``0..251`` (global rank minus
  ``ROLL_BASE``); a *keep* is a multiset of 0..5 dice, numbered by its global rank
  ``0..461`` (dice.py lists multisets by size, so these are exactly ranks 0..461 and
  keep ``ROLL_BASE + r`` is roll ``r`` itself).
* ``ADD[k, f]``: keep ``k`` plus one die showing ``f`` (-1 if ``k`` has 5 dice).
* ``SUB[k, f]``: keep ``k`` minus one die showing ``f`` (-1 if ``k`` has none).
* ``UNION[k, d]``: local roll index of keep ``k`` plus the rolled multiset ``d`` (a
  global rank of ``5 - |k|`` dice), -1 where sizes do not add up to 5.
* ``SUBSETS[r, j]``: the ``N_SUBSETS[r]`` keeps contained in roll ``r`` (-1 padded);
  a keep decision is stored as ``j``, an index into this row.
* ``ROLL_PROB[r]``: probability of roll ``r`` with five fair dice;
  ``ROLL_COUNTS[r, f]``: dice showing ``f``; ``PENTA_ROLL[f]``: the roll of five ``f``.
"""

from __future__ import annotations

import numpy as np

from dicelab import dice

N_ROLLS = 252
N_KEEPS = 462
ROLL_BASE = int(dice.SIZE_OFFSET[5])
MAX_SUBSETS = 32

ROLL_COUNTS = dice.COUNTS[ROLL_BASE:ROLL_BASE + N_ROLLS].copy()
ROLL_PROB = dice.PROB[ROLL_BASE:ROLL_BASE + N_ROLLS].copy()
ROLL_PIPS = dice.PIPS[ROLL_BASE:ROLL_BASE + N_ROLLS].copy()
KEEP_SIZE = dice.SIZE[:N_KEEPS].copy()


def _build():
    add = np.full((N_KEEPS, 7), -1, dtype=np.int64)
    sub = np.full((N_KEEPS, 7), -1, dtype=np.int64)
    for k in range(N_KEEPS):
        c = dice.COUNTS[k]
        for f in range(1, 7):
            if dice.SIZE[k] < 5:
                cc = c.copy()
                cc[f] += 1
                add[k, f] = dice.rank_of_counts(cc)
            if c[f] > 0:
                cc = c.copy()
                cc[f] -= 1
                sub[k, f] = dice.rank_of_counts(cc)
    union = np.full((N_KEEPS, N_KEEPS), -1, dtype=np.int16)
    for k in range(N_KEEPS):
        for d in range(N_KEEPS):
            if dice.SIZE[k] + dice.SIZE[d] == 5:
                union[k, d] = dice.add_ranks(k, d) - ROLL_BASE
    subsets = np.full((N_ROLLS, MAX_SUBSETS), -1, dtype=np.int16)
    n_subsets = np.zeros(N_ROLLS, dtype=np.int64)
    for r in range(N_ROLLS):
        subs = sorted(dice.sub_multisets(ROLL_BASE + r))
        subsets[r, :len(subs)] = subs
        n_subsets[r] = len(subs)
    penta = np.array([-1] + [dice.rank_of_dice([f] * 5) - ROLL_BASE for f in range(1, 7)],
                     dtype=np.int64)
    return add, sub, union, subsets, n_subsets, penta


ADD, SUB, UNION, SUBSETS, N_SUBSETS, PENTA_ROLL = _build()

#: Bit layout of a packed decision (``dicelab.penta.policies.DecisionTables``): bits 0-4
#: and 5-9 index ``SUBSETS[r]`` (the keep with 2 / 1 rerolls left), bits 10-13 the box.
KEEP_BITS, KEEP1_SHIFT, BOX_SHIFT = 31, 5, 10


def _position_table() -> np.ndarray:
    pos = np.full((N_ROLLS, N_KEEPS), 31, dtype=np.uint16)
    for r in range(N_ROLLS):
        for j, k in enumerate(SUBSETS[r]):
            if k >= 0:
                pos[r, k] = j
    return pos


#: ``KEEP_POS[r, k]``: position of keep ``k`` in ``SUBSETS[r]`` (31 if not a sub-multiset).
KEEP_POS = _position_table()


def roll_index(dice_faces) -> int:
    """Local roll index (0..251) of five dice, e.g. ``roll_index([4, 4, 4, 4, 4])``."""
    faces = list(dice_faces)
    if len(faces) != 5:
        raise ValueError(f"a Penta roll has 5 dice, not {len(faces)}")
    return dice.rank_of_dice(faces) - ROLL_BASE


def roll_dice_of(r: int) -> list[int]:
    """Sorted faces of local roll ``r``."""
    return dice.dice_of_rank(ROLL_BASE + r)
