"""Random numbers for the kernels: xoshiro256** seeded from numpy's SeedSequence.

Each fixed-size chunk of games owns one generator state (four uint64 words) derived
from ``SeedSequence(seed, spawn_key=(chunk,))`` (see :mod:`dicelab.seeding`), so a
chunk's random stream never depends on which thread or worker runs it.

The kernels here are small ``@njit`` functions for game loops: the generator step
(``xoshiro_step``, ``below_s``) is compiled once and inlined by LLVM, the wrappers around
it are inlined where they are called:

* ``xoshiro_step`` / ``below_s``: the same on a state held in four scalars (for loops
  that keep it in registers);
* ``next_u64(state)`` advances the state in place and returns 64 random bits;
* ``rand_below(state, n)`` is an unbiased integer in ``[0, n)`` for ``1 <= n < 2**32``
  (Lemire's multiply-shift with rejection, one 64-bit draw in the common case);
* ``roll_dice(state, n)`` rolls ``n`` dice and returns the global multiset rank
  (:mod:`dicelab.dice`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from dicelab.dice import POW6, SEQ_OFFSET, SEQ_TO_RANK

_MASK32 = uint64(0xFFFFFFFF)
_POW6 = POW6.copy()
_SEQ_OFFSET = SEQ_OFFSET.copy()
_SEQ_TO_RANK = SEQ_TO_RANK.copy()


@njit(inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit
def xoshiro_step(s0, s1, s2, s3):
    """One xoshiro256** step on a state held in four uint64 scalars.

    Returns ``(64 random bits, s0, s1, s2, s3)``. Game loops that keep the state in
    local variables (registers) use this form; :func:`next_u64` wraps it for arrays.
    """
    result = _rotl(s1 * uint64(5), 7) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit
def below_s(s0, s1, s2, s3, n):
    """Unbiased uniform integer in ``[0, n)``, ``1 <= n < 2**32``, on a scalar state.

    Lemire's multiply-shift with rejection: one 64-bit draw in the common case.
    Returns ``(value as int64, s0, s1, s2, s3)``.
    """
    bound = uint64(n)
    x, s0, s1, s2, s3 = xoshiro_step(s0, s1, s2, s3)
    m = (x >> uint64(32)) * bound
    low = m & _MASK32
    if low < bound:
        threshold = ((_MASK32 + uint64(1)) - bound) % bound
        while low < threshold:
            x, s0, s1, s2, s3 = xoshiro_step(s0, s1, s2, s3)
            m = (x >> uint64(32)) * bound
            low = m & _MASK32
    return np.int64(m >> uint64(32)), s0, s1, s2, s3


@njit(inline="always")
def next_u64(state):
    """xoshiro256** step: returns 64 random bits and advances ``state`` (uint64[4])."""
    result, state[0], state[1], state[2], state[3] = xoshiro_step(
        state[0], state[1], state[2], state[3])
    return result


@njit(inline="always")
def rand_below(state, n):
    """Unbiased uniform integer in ``[0, n)``, ``1 <= n < 2**32``, as int64."""
    u, state[0], state[1], state[2], state[3] = below_s(
        state[0], state[1], state[2], state[3], n)
    return u


@njit(inline="always")
def roll_dice(state, n):
    """Roll ``n`` (0..6) fair dice; returns the global multiset rank (int64)."""
    u = rand_below(state, _POW6[n])
    return np.int64(_SEQ_TO_RANK[_SEQ_OFFSET[n] + u])


#: Random-stream layouts of the game kernels: one stream per chunk, games drawing from it
#: in turn (every simulation), or one stream per turn, keyed by (game, seat, turn), so that
#: tables with the seats swapped give a seat the same dice whoever sits there (common random
#: numbers for tournaments). Farkle keys the seat by its place in the turn order.
STREAM_PER_CHUNK = 0
STREAM_PER_TURN = 1

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_MIX1 = uint64(0xBF58476D1CE4E5B9)
_MIX2 = uint64(0x94D049BB133111EB)


@njit(inline="always")
def _splitmix(x):
    """One splitmix64 output and the advanced counter."""
    x = x + _GOLDEN
    z = x
    z = (z ^ (z >> uint64(30))) * _MIX1
    z = (z ^ (z >> uint64(27))) * _MIX2
    return z ^ (z >> uint64(31)), x


@njit(inline="always")
def keyed_state(k0, k1, a, b, c):
    """A xoshiro256** state for the key (k0, k1, a, b, c): a chunk's two key words and
    three small integers (e.g. game index, seat in turn order, turn number). Different
    keys give unrelated streams (splitmix64 of a mixed key), computed in a few multiplies,
    so a stream per turn is cheap. Returns four uint64 words."""
    x = k0 ^ (uint64(a) * _MIX1) ^ ((uint64(b) << uint64(40)) | uint64(c))
    h, x = _splitmix(x ^ _splitmix(k1 ^ uint64(a))[0])
    s0 = h
    s1, x = _splitmix(x)
    s2, x = _splitmix(x)
    s3, x = _splitmix(x)
    return s0, s1 | uint64(1), s2, s3


@njit(inline="always")
def roll_dice_at(states, i, n):
    """:func:`roll_dice` on row ``i`` of ``states`` (uint64 (rows, 4)): one generator per
    row, e.g. a stream per game and turn made by :func:`keyed_state`."""
    u, states[i, 0], states[i, 1], states[i, 2], states[i, 3] = below_s(
        states[i, 0], states[i, 1], states[i, 2], states[i, 3], _POW6[n])
    return np.int64(_SEQ_TO_RANK[_SEQ_OFFSET[n] + u])


@njit(inline="always")
def faces_rank(faces, pos, n):
    """The global multiset rank of the ``n`` die faces (1..6) ``faces[pos:pos + n]``: how
    scripted dice become a roll, the same way :func:`roll_dice` reads a random draw."""
    u = np.int64(0)
    mult = np.int64(1)
    for i in range(n):
        u += (faces[pos + i] - 1) * mult
        mult *= 6
    return np.int64(_SEQ_TO_RANK[_SEQ_OFFSET[n] + u])


def state_from_seedsequence(ss: np.random.SeedSequence) -> np.ndarray:
    """A xoshiro256** state (uint64[4]) from a SeedSequence; never all zero."""
    st = ss.generate_state(4, np.uint64)
    if not st.any():  # probability 2**-256, but the all-zero state is a fixed point
        st[0] = 1
    return st
