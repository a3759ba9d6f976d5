"""Index tables of Penta's dice over :mod:`dicelab.dice` ranks (plain int64/float64 arrays).

* A *roll* is a multiset of 5 dice, numbered locally ``0..251`` (global rank minus
  ``ROLL_BASE``); a *keep* is a multiset of 0..5 dice, numbered by its global rank
  ``0..461`` (dice.py lists multisets by size, so these are exactly ranks 0..461 and
  keep ``ROLL_BASE + r`` is roll ``r`` itself).
* ``ADD[k, f]``: keep ``k`` plus one die showing ``f`` (-1 if ``k`` has 5 dice).
* ``SUB[k, f]``: keep ``k`` minus one die showing ``f`` (-1 if ``k`` has none); the same
  as a list: ``SUB_IDX[SUB_PTR[k]:SUB_PTR[k + 1]]``.
* ``UNION[k, d]``: local roll index of keep ``k`` plus the rolled multiset ``d`` (a
  global rank of ``5 - |k|`` dice), -1 where sizes do not add up to 5.
* ``SUBSETS[r, j]``: the ``N_SUBSETS[r]`` keeps contained in roll ``r`` (-1 padded);
  a keep decision is stored as ``j``, an index into this row.
* ``ROLL_PROB[r]``: probability of roll ``r`` with five fair dice;
  ``ROLL_COUNTS[r, f]``: dice showing ``f``; ``PENTA_ROLL[f]``: the roll of five ``f``.

>>> roll_dice_of(int(PENTA_ROLL[4])), int(N_SUBSETS[roll_index([1, 2, 3, 4, 5])])
([4, 4, 4, 4, 4], 32)
"""

from __future__ import annotations

import numpy as np

from dicelab import dice
from dicelab.penta.rules import FACES, N_BOXES, N_DICE

ROLL_BASE = int(dice.SIZE_OFFSET[N_DICE])
N_ROLLS = int(dice.SIZE_OFFSET[N_DICE + 1]) - ROLL_BASE
N_KEEPS = ROLL_BASE + N_ROLLS
#: Keeps within one roll at most (five different dice: 2**5).
MAX_SUBSETS = 1 << N_DICE

ROLL_COUNTS = dice.COUNTS[ROLL_BASE:ROLL_BASE + N_ROLLS].copy()
ROLL_PROB = dice.PROB[ROLL_BASE:ROLL_BASE + N_ROLLS].copy()
KEEP_SIZE = dice.SIZE[:N_KEEPS].copy()


def _build():
    keys = dice.KEY[:N_KEEPS]
    size = dice.SIZE[:N_KEEPS]
    die = 7 ** np.arange(FACES + 1, dtype=np.int64)  # the key of one die showing f
    add = np.full((N_KEEPS, FACES + 1), -1, dtype=np.int64)
    sub = np.full((N_KEEPS, FACES + 1), -1, dtype=np.int64)
    for f in range(1, FACES + 1):
        small = size < N_DICE
        add[small, f] = dice.rank_of_keys(keys[small] + die[f])
        has = dice.COUNTS[:N_KEEPS, f] > 0
        sub[has, f] = dice.rank_of_keys(keys[has] - die[f])
    union = np.full((N_KEEPS, N_KEEPS), -1, dtype=np.int16)
    offset = dice.SIZE_OFFSET
    for n in range(N_DICE + 1):  # keeps of n dice and rolls of N_DICE - n
        ks = np.arange(offset[n], offset[n + 1])
        ds = np.arange(offset[N_DICE - n], offset[N_DICE - n + 1])
        union[np.ix_(ks, ds)] = dice.rank_of_keys(keys[ks][:, None] + keys[ds][None, :]
                                                  ) - ROLL_BASE
    subsets = np.full((N_ROLLS, MAX_SUBSETS), -1, dtype=np.int16)
    n_subsets = np.zeros(N_ROLLS, dtype=np.int64)
    for r in range(N_ROLLS):
        subs = sorted(dice.sub_multisets(ROLL_BASE + r))
        subsets[r, :len(subs)] = subs
        n_subsets[r] = len(subs)
    penta = np.array([-1] + [dice.rank_of_dice([f] * N_DICE) - ROLL_BASE
                             for f in range(1, FACES + 1)], dtype=np.int64)
    return add, sub, union, subsets, n_subsets, penta


ADD, SUB, UNION, SUBSETS, N_SUBSETS, PENTA_ROLL = _build()


def _sub_csr() -> tuple[np.ndarray, np.ndarray]:
    ptr = [0]
    idx: list[int] = []
    for k in range(N_KEEPS):
        idx.extend(int(SUB[k, f]) for f in range(1, FACES + 1) if SUB[k, f] >= 0)
        ptr.append(len(idx))
    return np.array(ptr, dtype=np.int64), np.array(idx, dtype=np.int64)


SUB_PTR, SUB_IDX = _sub_csr()

#: Bit layout of a packed decision (``dicelab.penta.policies.DecisionTables``): bits 0-4
#: and 5-9 index ``SUBSETS[r]`` (the keep with 2 / 1 rerolls left), bits 10-13 the box.
KEEP1_SHIFT = (MAX_SUBSETS - 1).bit_length()
KEEP_BITS = (1 << KEEP1_SHIFT) - 1
BOX_SHIFT = 2 * KEEP1_SHIFT
assert BOX_SHIFT + (N_BOXES - 1).bit_length() <= 16, "a decision must fit in uint16"


def _position_table() -> np.ndarray:
    pos = np.full((N_ROLLS, N_KEEPS), KEEP_BITS, dtype=np.uint16)
    for r in range(N_ROLLS):
        for j, k in enumerate(SUBSETS[r]):
            if k >= 0:
                pos[r, k] = j
    return pos


#: ``KEEP_POS[r, k]``: position of keep ``k`` in ``SUBSETS[r]`` (``KEEP_BITS`` if not a
#: sub-multiset).
KEEP_POS = _position_table()


def roll_index(dice_faces) -> int:
    """Local roll index (0..251) of five dice, e.g. ``roll_index([4, 4, 4, 4, 4])``."""
    faces = list(dice_faces)
    if len(faces) != N_DICE:
        raise ValueError(f"a Penta roll has {N_DICE} dice, not {len(faces)}")
    return dice.rank_of_dice(faces) - ROLL_BASE


def roll_dice_of(r: int) -> list[int]:
    """Sorted faces of local roll ``r``."""
    return dice.dice_of_rank(ROLL_BASE + r)
