"""The ``dicelab`` console script: Ctrl-C is exit code 130 from the first instant.

Importing the command line (numpy, numba, typer) takes a moment; an interrupt then must
not end in a traceback, so the import happens inside the same guard as the run.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from dicelab.cli.main import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    finally:
        _ended()


def _ended() -> None:
    """The command has ended: its output is complete, or its ``interrupted`` line written.
    Ctrl-C while the interpreter then shuts down (waiting for a thread that stores a table
    in the cache, say) could only print a traceback from that wait, or end the process by
    the signal once Python gave its handler back; it is ignored (the exit code stays the
    command's)."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # An interrupt raised in code a library ran through CPython's PyRun_String (some do,
    # while they are imported) leaves the interpreter's mark "a KeyboardInterrupt went
    # unhandled" set, even though the guard above handled it; under ``python -m dicelab``
    # the interpreter then ended itself by SIGINT once shut down, and the exit code 130
    # was lost. Running nothing through the same function clears the mark.
    ctypes.pythonapi.PyRun_SimpleString(b"")
