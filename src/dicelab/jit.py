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
"""

from __future__ import annotations

import threading
import types
from typing import Any

from numba import njit
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
