"""Independent blocks of work on this process's threads (layer 1).

``run_blocks(kernel, n, *args)`` calls ``kernel(lo, hi, *args)`` on contiguous ranges
``lo .. hi - 1`` that together cover blocks ``0 .. n - 1``, one range per thread, the
calling thread taking the first. The kernels are plain ``@njit(nogil=True)`` functions
that loop over their range: the threads run them at once, outside the GIL.

This is what numba's ``parallel=True`` and ``prange`` would do, without their cost at
compile time: a ``prange`` loop types its body twice (once in the function, once in the
generated parallel function, with an unsigned index) and lowers a parallel function of
its own, which took seconds on a first run. The ranges are those of numba's default
static schedule (equal shares in order). Every block must write only its own outputs, so
results never depend on the number of threads.

The number of threads is numba's for the calling thread (:func:`numba.get_num_threads`:
``NUMBA_NUM_THREADS``, or what :func:`numba.set_num_threads` set, e.g. ``--threads``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Notices (a thread count capped) go to this logger; the CLI prints them on stderr.
log = logging.getLogger(__name__)

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            import numba

            _POOL = ThreadPoolExecutor(max(1, numba.config.NUMBA_NUM_THREADS - 1),
                                       thread_name_prefix="dicelab-kernel")
        return _POOL


def block_ranges(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` (at most ``n``) contiguous ranges covering ``0 .. n - 1`` in order, their
    sizes differing by at most one (the larger first).

    >>> block_ranges(10, 3)
    [(0, 4), (4, 7), (7, 10)]
    >>> block_ranges(2, 4), block_ranges(0, 2)
    ([(0, 1), (1, 2)], [])
    """
    parts = max(1, min(parts, n))
    q, r = divmod(n, parts)
    out, lo = [], 0
    for i in range(parts if n > 0 else 0):
        hi = lo + q + (i < r)
        out.append((lo, hi))
        lo = hi
    return out


def threads() -> int:
    """The threads :func:`run_blocks` uses from the calling thread."""
    import numba

    return int(numba.get_num_threads())


#: Game kernels that play in Python, one game after another on the calling thread (the
#: referees of :mod:`dicelab.farkle.pysim` and :mod:`dicelab.penta.referee`, which play a
#: user's policy that decides move by move): ``--threads`` does not share their games out.
PYTHON_KERNELS = frozenset({"referee"})


def threads_used(kernels, count: int | None = None) -> int:
    """The threads that did a run's work in a process, as results and manifests record
    them: one when every game kernel that played (``kernels``; None for no game, as in an
    exact evaluation) is one of :data:`PYTHON_KERNELS`, else ``count`` (default
    :func:`threads`), numba's, among which the compiled kernels and the exact solvers
    share their work out. Informational: results never depend on it.

    >>> threads_used(["referee"], 2), threads_used(["referee", "general"], 2)
    (1, 2)
    """
    played = {k for k in kernels if k is not None}
    if played and played <= PYTHON_KERNELS:
        return 1
    return int(threads() if count is None else count)


def set_threads(n: int) -> int:
    """Use ``n`` numba threads from the calling thread (``--threads``), at most the cores
    numba can use (``NUMBA_NUM_THREADS``): more is capped, and a notice says so (results
    never depend on the count). Returns the count in use; ``UserError`` unless ``n`` is
    positive."""
    import numba

    from dicelab.errors import UserError
    from dicelab.text import counted

    if n <= 0:
        raise UserError(f"--threads must be positive, not {n}")
    cores = int(numba.config.NUMBA_NUM_THREADS)
    if n > cores:
        log.info("--threads %d is more than the %s numba can use; using %d", n,
                 counted(cores, "core"), cores)
    numba.set_num_threads(min(n, cores))
    return min(n, cores)


def run_blocks(kernel: Callable[..., Any], n: int, *args: Any) -> None:
    """``kernel(lo, hi, *args)`` over blocks ``0 .. n - 1``, one range per thread (see the
    module docstring). With no blocks the kernel is called once on the empty range, which
    compiles it (or loads it from numba's cache): a call on no work warms a kernel up. An
    exception of any range is raised here, after every range ended."""
    ranges = block_ranges(n, threads())
    if len(ranges) <= 1:
        kernel(0, n, *args)
        return
    pool = _pool()
    futures = [pool.submit(kernel, lo, hi, *args) for lo, hi in ranges[1:]]
    try:
        kernel(*ranges[0], *args)
    finally:
        for f in futures:
            f.exception()  # wait for every range, also when this one failed
    for f in futures:
        f.result()


def in_background(fn: Callable[[], Any]) -> Callable[[], None]:
    """Start ``fn()`` on a thread of its own; returns ``join()``, which waits for it and
    raises its exception, if any. For work that overlaps other work of this process, such
    as compiling a kernel while other (nogil) kernels run: numba compiles one function at
    a time, but a compile runs beside kernels that hold no GIL. The thread is a daemon: an
    interrupted command does not wait for it."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # handed to join()
            failure.append(exc)

    thread = threading.Thread(target=run, name="dicelab-background", daemon=True)
    thread.start()

    def join() -> None:
        thread.join()
        if failure:
            raise failure[0]

    return join
