"""The package's random numbers written out in plain Python integers, for the tests:
xoshiro256** and Lemire's bounded draw with rejection (as :mod:`dicelab.rng`)."""

from __future__ import annotations

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK64


class Xoshiro:
    """A generator state of four words (e.g. a chunk's, from ``seeding.chunk_states``)."""

    def __init__(self, state) -> None:
        self.s = [int(x) for x in state]

    def next_u64(self) -> int:
        s = self.s
        out = _rotl((s[1] * 5) & MASK64, 7) * 9 & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return out

    def below(self, bound: int) -> int:
        """Uniform in ``[0, bound)``: the high 32 bits times the bound, redrawn while the
        low half of the product falls below ``2**32 mod bound``."""
        m = (self.next_u64() >> 32) * bound
        if m & MASK32 < bound:
            threshold = (MASK32 + 1 - bound) % bound
            while m & MASK32 < threshold:
                m = (self.next_u64() >> 32) * bound
        return m >> 32
