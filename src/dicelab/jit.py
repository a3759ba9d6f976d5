"""Kernel helpers: jitted functions compiled for other kernels, without Python entry points.

numba compiles every ``@njit`` function a kernel calls on its own, and gives each one a
CPython wrapper (which unboxes every argument and boxes the result) and a C wrapper. A
function that only kernels call never runs them, yet they are compiled on every first
run, and for the turn kernels, whose arguments are groups of dozens of arrays
(:class:`~dicelab.penta.scoring.TurnTables`, the scratch groups), the wrappers are a
large share of the compile. ``@helper`` compiles a function for its kernel callers
without them; everything else is ``@njit``'s (the options, ``cache=True``, one compile
per type signature). See docs/design/first-run.md.

A helper stays callable from Python (tests, notebooks): such a call runs a twin, the same
function compiled with its wrappers on the first such call (and cached on disk under a
name of its own, beside the helper's). Commands call helpers from kernels, so they do
not compile the twin (except where Python code calls a helper as well: see the note).

>>> @helper
... def twice(x):
...     return 2 * x
>>> @njit
... def kernel(x):
...     return twice(x) + 1
>>> kernel(3), twice(4)
(7, 8)

A first run compiles on two cores: :func:`compile_split` compiles some of a kernel's
functions in a child process (which stores them in numba's on-disk cache) while this
process compiles the others; the kernel's own compile then loads the child's from the
cache. :func:`loads` tells whether a kernel is compiled or in the cache already, without
compiling it. See docs/design/first-run.md.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from numba import njit, typeof
from numba.core import event
from numba.core.registry import CPUDispatcher

#: What a helper's Python twin's qualified name ends with (the name its cache files take).
TWIN_SUFFIX = "__python"

_TWIN_LOCK = threading.Lock()


class HelperDispatcher(CPUDispatcher):
    """A dispatcher that compiles for kernels only (``no_cpython_wrapper``,
    ``no_cfunc_wrapper``); called from Python it runs :meth:`twin`."""

    def twin(self) -> CPUDispatcher:
        """The same function as a plain ``@njit`` dispatcher, made on the first call."""
        with _TWIN_LOCK:
            made = self.__dict__.get("_twin")
            if made is None:
                f = self.py_func
                copy = types.FunctionType(f.__code__, f.__globals__, f.__name__,
                                          f.__defaults__, f.__closure__)
                copy.__qualname__ = f.__qualname__ + TWIN_SUFFIX
                copy.__module__ = f.__module__
                copy.__doc__ = f.__doc__
                options = {k: v for k, v in self.targetoptions.items()
                           if k not in ("nopython", "no_cpython_wrapper", "no_cfunc_wrapper")}
                made = njit(cache=self.__dict__.get("_cache_wanted", False), **options)(copy)
                self.__dict__["_twin"] = made
            return made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.twin()(*args, **kwargs)


def helper(fn=None, *, cache: bool = False, **options: Any):
    """``@njit`` for a function that kernels call (see the module docstring): the same
    options, ``cache`` as there; usable bare (``@helper``) or with options."""
    def wrap(f):
        disp = HelperDispatcher(py_func=f, locals={}, targetoptions={
            "nopython": True, "boundscheck": None, "no_cpython_wrapper": True,
            "no_cfunc_wrapper": True, **options})
        disp.__dict__["_cache_wanted"] = cache
        if cache:
            disp.enable_caching()
        return disp
    return wrap if fn is None else wrap(fn)


#: (dispatcher, argument types): one compile of :func:`compile_split`.
Compile = tuple[CPUDispatcher, tuple]


class _WouldCompile(Exception):
    """Raised by :class:`_NoCompile` to stop a compile before it starts."""


class _NoCompile(event.Listener):
    """Stops this thread's compile of one dispatcher at its start (:func:`loads`)."""

    def __init__(self, dispatcher: CPUDispatcher) -> None:
        self.dispatcher = dispatcher
        self.thread = threading.get_ident()

    def on_start(self, ev: event.Event) -> None:
        if ev.data["dispatcher"] is self.dispatcher and threading.get_ident() == self.thread:
            raise _WouldCompile

    def on_end(self, ev: event.Event) -> None:
        pass


class _Compiling(event.Listener):
    """Calls ``notify(True)`` when some thread starts compiling with none compiling before,
    and ``notify(False)`` when the last compile under way ends (a compile compiles the
    functions it calls inside it: one start and one end for all)."""

    def __init__(self, notify: Callable[[bool], None]) -> None:
        self.tell = notify  # not ``notify``: event.Listener's own method
        self.depth: dict[int, int] = {}
        self.lock = threading.Lock()

    def _step(self, by: int) -> None:
        with self.lock:
            was = bool(self.depth)
            me = threading.get_ident()
            self.depth[me] = self.depth.get(me, 0) + by
            if self.depth[me] <= 0:
                del self.depth[me]
            now = bool(self.depth)
        if now != was:
            self.tell(now)

    def on_start(self, ev: event.Event) -> None:
        self._step(1)

    def on_end(self, ev: event.Event) -> None:
        self._step(-1)


@contextlib.contextmanager
def compiling(notify: Callable[[bool], None]) -> Iterator[None]:
    """While the block runs, ``notify(True)`` when numba starts compiling (a kernel not yet
    in the kernel cache: a first run) and ``notify(False)`` when it is done; loading a
    compiled kernel from the cache says nothing.

    >>> said = []
    >>> @njit
    ... def inner(x):
    ...     return x + 1
    >>> @njit
    ... def outer(x):
    ...     return inner(x) * 2
    >>> with compiling(said.append):
    ...     outer(1), outer(2)
    (4, 6)
    >>> said
    [True, False]
    """
    listener = _Compiling(notify)
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)


def loads(dispatcher: CPUDispatcher, args: Sequence[Any]) -> bool:
    """Whether ``dispatcher`` is compiled for the types of ``args`` (Python values) or loads
    that compile from numba's cache (then it is loaded); never compiles. (A listener of
    numba's compile events sees a compile start and end with an exception.)"""
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    guard = _NoCompile(dispatcher)
    event.register("numba:compile", guard)
    try:
        dispatcher.compile(sig)
    except _WouldCompile:
        return False
    finally:
        event.unregister("numba:compile", guard)
    return True


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def can_split(threads: int) -> bool:
    """Whether :func:`compile_split` compiles in a child process: the platform forks, the
    command may use ``threads`` >= 2 threads on at least two cores, and this process runs
    no other Python thread (a fork copies only the calling thread; another one could hold
    a lock the child needs, such as numba's compiler lock)."""
    return (hasattr(os, "fork") and threads >= 2 and _cores() >= 2
            and threading.active_count() == 1)


def _fork(compiles: Sequence[Compile]) -> tuple[int, int]:
    """Fork a child that runs ``compiles`` (each stored in numba's cache by the compile),
    writing a byte to a pipe after each, and exits: (its pid, the pipe's reading end), or
    (0, -1) if it could not start."""
    try:
        read, write = os.pipe()
    except OSError:
        return 0, -1
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return 0, -1
    if pid:
        os.close(write)
        return pid, read
    code = 1
    try:  # the child: quiet (the parent reports any error, compiling itself), never returns
        os.close(read)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        for dispatcher, sig in compiles:
            dispatcher.compile(sig)
            with contextlib.suppress(OSError):  # the parent no longer reads: it waits
                os.write(write, b".")
        code = 0
    finally:
        os._exit(code)


def compile_split(aside: Sequence[Compile],
                  here: Sequence[tuple[CPUDispatcher, tuple, int]], threads: int) -> None:
    """Compile ``aside`` in a child process and ``here`` in this one at the same time,
    in order; return when both are done. ``here[i] = (dispatcher, types, after)``: compiled
    once the child has done its first ``after`` compiles (which that compile loads).

    The functions of ``aside`` must be cached (``cache=True``): the child stores them in
    numba's cache, and what calls them loads them from there when it compiles. Without a
    child (:func:`can_split` false) this process compiles only ``here``, and the kernel's
    compile compiles the rest, as it does whatever the child did not get to (it failed).
    Either way the compiled code is the same."""
    pid, pipe = _fork(aside) if can_split(threads) else (0, -1)
    done = 0
    try:
        for dispatcher, sig, after in here:
            while pid and done < after:
                got = len(os.read(pipe, after - done))
                if not got:  # the child ended early
                    os.waitpid(pid, 0)
                    pid = 0
                done += got
            dispatcher.compile(sig)
    except BaseException:  # interrupted or failed: the child's work is not wanted
        if pid:
            os.kill(pid, signal.SIGTERM)
        raise
    finally:
        if pid:
            os.waitpid(pid, 0)  # its exit status does not matter: what it stored is loaded
        if pipe >= 0:
            os.close(pipe)


def types_of(*values: Any) -> tuple:
    """numba's types of ``values`` as a compile's argument types; a type passes through.

    >>> from numba import types
    >>> types_of(1, types.literal(False))
    (int64, Literal[bool](False))
    """
    from numba.core import types as nbtypes

    return tuple(v if isinstance(v, nbtypes.Type) else typeof(v) for v in values)


def read_only(a: Any, dtype: Any = None) -> np.ndarray:
    """A read-only plain-array view of ``a`` (as ``dtype``): how a shared table reaches the
    kernels. numba types a read-only array apart from a writable one, so a table made
    fresh and the same table memory-mapped from the cache would compile each kernel that
    reads it twice; passing both read-only makes them one type.

    >>> read_only([1, 2]).flags.writeable
    False
    """
    v = np.asarray(a, dtype=dtype).view(np.ndarray)
    v.flags.writeable = False
    return v
