"""The command line of this process: what manifests record as the command that
reproduces a run. :func:`dicelab.cli.main.main` sets it; the commands read it (a module of
its own, so that the commands need not import the app that registers them)."""

from __future__ import annotations

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
