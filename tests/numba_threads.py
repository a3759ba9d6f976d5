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


def dicts_by_threads(fn: Callable[[], object], counts: tuple[int, ...] = (1, 2)
                     ) -> list[dict]:
    """``fn().to_dict()`` run on each of ``counts`` threads, without its wall time
    (``elapsed_s``): what must be equal whatever the thread count."""
    out = []
    for n in counts:
        d = with_threads(n, lambda: fn().to_dict())
        d.pop("elapsed_s", None)
        out.append(d)
    return out
