"""Running the ``dicelab`` CLI in-process in tests (through ``main``, so errors exit 2)."""

from __future__ import annotations

import signal

from dicelab.cli.main import main


def run_cli(capsys, argv) -> tuple[int, str, str]:
    """``dicelab ARGV`` through :func:`dicelab.cli.main.main`: (exit code, stdout, stderr)."""
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def as_from_a_shell() -> None:
    """``preexec_fn`` of a child process: Ctrl-C with its default action and not blocked,
    as a shell starts a program. The test runner's worker need not have either (a run
    started in the background ignores SIGINT; a worker thread may block it), and the child
    would inherit that: a Ctrl-C test would hang."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
