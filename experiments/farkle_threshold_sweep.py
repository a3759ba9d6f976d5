"""Exact expected turn score of threshold-T, T = 50..2000, against max-ev.

    .venv/bin/python experiments/farkle_threshold_sweep.py [--rules default] [--target 10000]
        [--out DIR] [--json]

A shim kept for checkouts: the experiment is ``dicelab experiment run threshold-sweep``
(:mod:`dicelab.experiments`), which takes the same options. Without ``--out`` this writes
the checkout's ``results/farkle_threshold_sweep/<rules>`` (``<rules>-t<target>`` for a
target other than 10,000), whatever the current directory: ``sweep.parquet``,
``sweep.csv`` and ``manifest.json``, whose ``command`` is the ``dicelab`` command line
that reproduces them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dicelab.cli.main import main as dicelab

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a == "--out" or a.startswith("--out=") for a in argv):
        # the default directory, results/..., is the checkout's; a rules file named
        # relative to where we were must still be found
        argv = [str(Path(a).resolve()) if i and argv[i - 1] == "--rules" and Path(a).exists()
                else a for i, a in enumerate(argv)]
        os.chdir(ROOT)
    dicelab(["experiment", "run", "threshold-sweep", *argv])


if __name__ == "__main__":
    main()
