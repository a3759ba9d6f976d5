"""The command line of this process: what manifests record as the command that
reproduces a run. :func:`dicelab.cli.main.main` sets it; the commands read it (a module of
its own, so that the commands need not import the app that registers them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

#: The command line of this process (``main``'s argv, bare options filled in).
ARGV: list[str] = []

#: What a command stopped by Ctrl-C adds to its one ``interrupted`` line (what it kept).
INTERRUPTED: list[str] = []


def finish_uninterrupted() -> None:
    """From here on Ctrl-C does not stop this command: it is writing its results (and then
    printing them), which takes a moment, and stopping half-way would leave some files
    without the others, or all of them with exit code 130. Ctrl-C before this call stops
    the command with nothing written. :func:`dicelab.cli.main.main` gives Ctrl-C its
    handler back when the command ends (the main thread only: signals are its)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def ctrl_c_between_compiles() -> Iterator[None]:
    """While the block runs, Ctrl-C stops the command as usual, except while this thread
    holds numba's compiler lock (compiling a kernel, or loading it from numba's cache, on
    a first run): then it stops the command when that compile is done.

    numba calls back into Python from its compiler, and an interrupt raised in such a
    callback is printed as ignored and lost (the command went on, and exited 0), or left
    the compile half done (a traceback: ``no compiled object yet``). Waiting for the
    compile keeps numba's cache whole; the longest compile of one kernel is a few
    seconds. Only the main thread takes signals, and a Ctrl-C set aside (ignored, as in a
    job a shell started in the background) stays so: then this does nothing."""
    import signal
    import threading

    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    from numba.core import event
    from numba.core.compiler_lock import global_compiler_lock

    pending: list[int] = []

    def on_ctrl_c(signum: int, frame: object) -> None:
        if global_compiler_lock.is_locked():  # held by this (the main) thread
            pending.append(signum)
            return
        raise KeyboardInterrupt

    class CompileDone(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            pass

        def on_end(self, ev: event.Event) -> None:  # the lock released
            if (pending and threading.current_thread() is threading.main_thread()
                    and not global_compiler_lock.is_locked()):
                pending.clear()
                raise KeyboardInterrupt

    done = CompileDone()
    event.register("numba:compiler_lock", done)
    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is on_ctrl_c:  # (not set aside since)
            signal.signal(signal.SIGINT, previous)
        event.unregister("numba:compiler_lock", done)


def interrupted_line() -> str:
    """The one line on stderr of an interrupted command: ``interrupted``, and what the
    command noted in :data:`INTERRUPTED`.

    >>> INTERRUPTED[:] = ["2 finished table(s) kept in results/.partial/x"]
    >>> interrupted_line()
    'interrupted: 2 finished table(s) kept in results/.partial/x'
    >>> INTERRUPTED.clear()
    """
    return "interrupted" + (": " + "; ".join(INTERRUPTED) if INTERRUPTED else "")


def reproducing_command(seed: int | None) -> list[str]:
    """``dicelab ...`` as typed, with the seed the run used spelled out when it was drawn.

    >>> ARGV[:] = ["simulate", "-s", "ai"]
    >>> reproducing_command(7)
    ['dicelab', 'simulate', '-s', 'ai', '--seed', '7']
    """
    argv = list(ARGV)
    given = any(a == "--seed" or a.startswith("--seed=") for a in argv)
    if seed is not None and not given:
        argv += ["--seed", str(seed)]
    return ["dicelab", *argv]
