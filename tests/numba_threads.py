"""Run test code on a given number of numba threads (for the reproducibility tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numba

T = TypeVar("T")


def with_threads(n: int, fn: Callable[[], T]) -> T:
    """``fn()`` with ``n`` numba threads (at most what numba was started with), restoring
    the thread count afterwards."""
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        return fn()
    finally:
        numba.set_num_threads(before)
