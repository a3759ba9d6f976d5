"""What a command may allocate: the memory limit, and a refusal before allocating.

Every solver and runner estimates the bytes it will hold before it allocates them and
calls :func:`check_memory`; a size the machine cannot hold is one ``UserError`` line
that says how much it would need and which limit applies, never an out-of-memory
traceback after minutes of work.

The limit is :data:`MEMORY_FRACTION` of this machine's physical memory, or
``$DICELAB_MEMORY_LIMIT`` (a size such as ``8GB``) if set.
"""

from __future__ import annotations

import os

from dicelab.errors import UserError
from dicelab.text import human_bytes

#: The share of physical memory one command may plan to use.
MEMORY_FRACTION = 0.8
MEMORY_ENV = "DICELAB_MEMORY_LIMIT"


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def memory_limit() -> tuple[int | None, str]:
    """(bytes a command may plan to use, what that limit is, in words)."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if raw:
        from dicelab.cache import parse_size

        return parse_size(raw, f"${MEMORY_ENV}"), f"${MEMORY_ENV}"
    phys = physical_memory()
    if phys is None:
        return None, "no limit known"
    return int(phys * MEMORY_FRACTION), (f"{MEMORY_FRACTION:.0%} of this machine's "
                                        f"{human_bytes(phys)} of memory")


class OverMemoryLimit(UserError):
    """What :func:`check_memory` raises: a ``UserError`` a caller with another way to
    answer (a simulation instead of an exact table) may catch, and no other."""


def check_memory(what: str, n_bytes: float) -> None:
    """:class:`OverMemoryLimit` if ``what`` would need more than the memory limit.

    >>> check_memory("a small table", 1000)
    """
    limit, why = memory_limit()
    if limit is not None and n_bytes > limit:
        raise OverMemoryLimit(f"{what} would need {human_bytes(n_bytes)} of memory, more "
                              f"than the limit of {human_bytes(limit)} ({why})")
