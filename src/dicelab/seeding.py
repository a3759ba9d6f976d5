"""Seeding: ``seed -> numpy SeedSequence -> one child per fixed-size chunk of games``.

The chunk layout is a function of the number of games only (``CHUNK_GAMES`` games per
chunk, the last one possibly shorter). Chunk ``i`` is seeded by
``SeedSequence(seed, spawn_key=(i,))``, which is what ``SeedSequence(seed).spawn(...)``
would give as its ``i``-th child, but computable for any chunk on its own, so one
thread, many threads or a cluster of workers produce identical results.
"""

from __future__ import annotations

import secrets

import numpy as np

from dicelab.config import CHUNK_GAMES, MAX_GAMES, MIN_UNIT_GAMES, MIN_UNITS
from dicelab.errors import UserError
from dicelab.rng import state_from_seedsequence
from dicelab.text import is_whole

__all__ = ["CHUNK_GAMES", "MAX_SEED", "check_games", "check_seed", "chunk_bounds", "chunk_states",
           "fresh_seed", "group_seed", "n_chunks", "unit_chunk_games"]


#: The largest seed: saved tables and manifests store a seed as an unsigned 64-bit integer.
MAX_SEED = 2**64 - 1


def fresh_seed() -> int:
    """A random 64-bit seed, used when the user gives none (and reported so runs repeat)."""
    return secrets.randbits(63)


def check_seed(seed: int | None) -> int:
    """The user's seed as an int (``UserError`` unless an integer 0 to :data:`MAX_SEED`);
    a fresh one when ``None``."""
    if seed is None:
        return fresh_seed()
    if not is_whole(seed) or seed < 0:
        raise UserError(f"--seed must be a non-negative integer, not {seed}")
    if seed > MAX_SEED:
        raise UserError(f"--seed {seed} is too large: at most {MAX_SEED} (2**64 - 1)")
    return int(seed)


def group_seed(seed: int, key: int) -> int:
    """The seed (63-bit) of part ``key`` of a run seeded with ``seed``: a tournament's
    group or table, a sequential test's pair, a tuning run's opponent."""
    state = np.random.SeedSequence([seed, 7, key]).generate_state(1, np.uint64)[0]
    return int(state) >> 1


def check_games(games, what: str = "--games", unit: str = "games") -> int:
    """A positive number of games (or rolls), at most :data:`~dicelab.config.MAX_GAMES`,
    as an int; ``UserError`` otherwise."""
    if not is_whole(games) or games <= 0:
        raise UserError(f"{what} must be a positive number of {unit}, not {games}")
    if games > MAX_GAMES:
        raise UserError(f"{what} {games:,} is more than one run plays (at most "
                        f"{MAX_GAMES:,} {unit}); run several with different seeds")
    return int(games)


def n_chunks(games: int, chunk_games: int = CHUNK_GAMES) -> int:
    return (games + chunk_games - 1) // chunk_games


def unit_chunk_games(games: int) -> int:
    """Games per chunk of a run whose chunks are the units of its error estimate: the
    standard :data:`CHUNK_GAMES`, or for a run of fewer than :data:`~dicelab.config.
    MIN_UNITS` such chunks, ``games / MIN_UNITS`` rounded up (at least
    :data:`~dicelab.config.MIN_UNIT_GAMES`), so that a short run has units enough to
    measure its spread. A function of the number of games only, like the chunks.

    >>> unit_chunk_games(1_000_000), unit_chunk_games(20_000), unit_chunk_games(100)
    (8192, 1250, 16)
    """
    return min(CHUNK_GAMES, max(MIN_UNIT_GAMES, -(-int(games) // MIN_UNITS)))


def chunk_bounds(games: int, first: int = 0, stop: int | None = None,
                 chunk_games: int = CHUNK_GAMES) -> np.ndarray:
    """Where chunks ``first .. stop-1`` (default: all) begin, and where the last one ends:
    int64 array ``b`` of length ``stop - first + 1``, chunk ``first + i`` plays games
    ``[b[i], b[i+1])``.

    >>> chunk_bounds(20000).tolist(), chunk_bounds(20000, 1, 3).tolist()
    ([0, 8192, 16384, 20000], [8192, 16384, 20000])
    """
    stop = n_chunks(games, chunk_games) if stop is None else stop
    b = np.arange(first, stop + 1, dtype=np.int64) * chunk_games
    return np.minimum(b, np.int64(games))


def chunk_states(seed: int, first: int, stop: int) -> np.ndarray:
    """Generator states for chunks ``first .. stop-1``: uint64 array of shape (stop-first, 4)."""
    out = np.empty((stop - first, 4), dtype=np.uint64)
    for j, i in enumerate(range(first, stop)):
        out[j] = state_from_seedsequence(np.random.SeedSequence(seed, spawn_key=(i,)))
    return out
