"""Dice multisets: the one place that numbers them.

A roll of ``n`` six-sided dice is order-free for every rule in dicelab, so the
state of ``n`` dice is a multiset, stored as a count vector ``counts[f]`` for faces
``f = 1..6`` (index 0 unused). Every multiset of 0..6 dice has a *global rank*:
multisets are listed by size, then lexicographically by count vector, so

* size 0: 1 multiset, ranks ``SIZE_OFFSET[0] .. SIZE_OFFSET[1]-1``
* size 5: 252 multisets (Penta rolls), size 0..5 together: 462 (Penta keeps)
* size 1..6: 923 multisets (Farkle rolls)

Rolling ``n`` dice is one uniform integer ``u`` in ``[0, 6**n)`` whose base-6 digits
are the faces; ``SEQ_TO_RANK[SEQ_OFFSET[n] + u]`` is the global rank of the
resulting multiset. This keeps the random-number cost at one bounded draw per
roll, and it is exactly as fair as rolling the dice one by one.
"""

from __future__ import annotations

import itertools
from math import factorial

import numpy as np

MAX_DICE = 6
FACES = 6


def _multisets_of_size(n: int) -> list[tuple[int, ...]]:
    """Count vectors (length 7, index 0 unused) of all multisets of ``n`` dice."""
    out = []
    for combo in itertools.combinations_with_replacement(range(1, FACES + 1), n):
        c = [0] * (FACES + 1)
        for f in combo:
            c[f] += 1
        out.append(tuple(c))
    # lexicographic by count vector, highest count of face 1 first is irrelevant;
    # we fix the order as sorted() of the vectors so it is easy to reproduce.
    return sorted(out)


_ALL: list[tuple[int, ...]] = []
_SIZE_OFFSET = [0]
for _n in range(MAX_DICE + 1):
    _ALL.extend(_multisets_of_size(_n))
    _SIZE_OFFSET.append(len(_ALL))

#: Number of multisets of 0..6 dice (924).
N_MULTISETS = len(_ALL)
#: ``COUNTS[rank, f]``: how many dice show face ``f`` (column 0 unused), int64.
COUNTS = np.array(_ALL, dtype=np.int64)
#: Number of dice in multiset ``rank``.
SIZE = COUNTS.sum(axis=1)
#: Ranks of size ``n`` are ``SIZE_OFFSET[n] .. SIZE_OFFSET[n+1]-1``.
SIZE_OFFSET = np.array(_SIZE_OFFSET, dtype=np.int64)
#: Sum of the pips of multiset ``rank``.
PIPS = (COUNTS * np.arange(FACES + 1)).sum(axis=1)

_RANK_OF = {c: i for i, c in enumerate(_ALL)}


def rank_of_counts(counts) -> int:
    """Global rank of a count vector (length 7 with index 0 unused, or length 6 for faces 1..6)."""
    c = tuple(int(x) for x in counts)
    if len(c) == FACES:
        c = (0, *c)
    return _RANK_OF[c]


def rank_of_dice(dice) -> int:
    """Global rank of the multiset of the given faces, e.g. ``rank_of_dice([1, 5, 5])``."""
    c = [0] * (FACES + 1)
    for f in dice:
        if not 1 <= int(f) <= FACES:
            raise ValueError(f"a die shows 1..6, not {f}")
        c[int(f)] += 1
    return _RANK_OF[tuple(c)]


def dice_of_rank(rank: int) -> list[int]:
    """Sorted faces of multiset ``rank``."""
    return [f for f in range(1, FACES + 1) for _ in range(int(COUNTS[rank, f]))]


def probability(rank: int) -> float:
    """Probability that rolling ``SIZE[rank]`` fair dice gives exactly this multiset."""
    n = int(SIZE[rank])
    ways = factorial(n)
    for f in range(1, FACES + 1):
        ways //= factorial(int(COUNTS[rank, f]))
    return ways / FACES**n


#: ``PROB[rank]``: probability of multiset ``rank`` when rolling its number of dice.
PROB = np.array([probability(r) for r in range(N_MULTISETS)], dtype=np.float64)

#: ``SEQ_OFFSET[n]``: start of the block for ``n`` dice in ``SEQ_TO_RANK`` (length 8).
SEQ_OFFSET = np.array([sum(FACES**k for k in range(n)) for n in range(MAX_DICE + 2)],
                      dtype=np.int64)
#: ``POW6[n] = 6**n`` for n = 0..6.
POW6 = np.array([FACES**n for n in range(MAX_DICE + 1)], dtype=np.int64)


#: ``KEY[rank]``: the count vector of multiset ``rank`` as one number, ``sum(counts[f] *
#: 7**f)`` (a count is at most 6): the key of a union is the sum of the keys.
KEY = COUNTS @ (7 ** np.arange(FACES + 1, dtype=np.int64))
_KEY_ORDER = np.argsort(KEY)


def rank_of_keys(keys: np.ndarray) -> np.ndarray:
    """Ranks of the multisets with these :data:`KEY` values (int64 array; every key must
    be one of a multiset of 0..6 dice)."""
    return _KEY_ORDER[np.searchsorted(KEY, keys, sorter=_KEY_ORDER)]


def _seq_to_rank() -> np.ndarray:
    out = np.empty(int(SEQ_OFFSET[-1]), dtype=np.int16)
    for n in range(MAX_DICE + 1):
        u = np.arange(FACES**n, dtype=np.int64)
        faces = (u[:, None] // POW6[:n]) % FACES + 1  # the base-6 digits, as faces
        keys = (7 ** faces).sum(axis=1)
        out[SEQ_OFFSET[n]:SEQ_OFFSET[n + 1]] = rank_of_keys(keys)
    return out


#: ``SEQ_TO_RANK[SEQ_OFFSET[n] + u]``: rank of the multiset whose dice are the base-6 digits of u.
SEQ_TO_RANK = _seq_to_rank()


def sub_multisets(rank: int) -> list[int]:
    """Ranks of every sub-multiset (including empty and itself) of multiset ``rank``."""
    c = COUNTS[rank]
    out = []
    for sub in itertools.product(*(range(int(c[f]) + 1) for f in range(1, FACES + 1))):
        out.append(_RANK_OF[(0, *sub)])
    return out


def add_ranks(a: int, b: int) -> int:
    """Rank of the union (sum) of two multisets; raises KeyError above 6 dice."""
    return _RANK_OF[tuple(int(x) for x in COUNTS[a] + COUNTS[b])]
