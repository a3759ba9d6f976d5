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
