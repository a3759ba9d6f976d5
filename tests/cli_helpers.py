"""Running the ``dicelab`` CLI in-process in tests (through ``main``, so errors exit 2)."""

from __future__ import annotations

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
