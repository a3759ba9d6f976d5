"""Farkle head to head: ai vs optimal-win vs max-ev vs the best threshold-T.

    .venv/bin/python experiments/farkle_head_to_head.py [--games N] [--target T]
        [--rules R] [--seed S] [--dask ADDRESS] [--out DIR] [--json]

A shim kept for checkouts: the experiment is ``dicelab experiment run head-to-head``
(:mod:`dicelab.experiments`), which takes the same options; here the seed defaults to
2026, the seed of the committed results (the command's default is a fresh seed). Without
``--out`` this writes the checkout's ``results/farkle_head_to_head/<rules>-t<target>``,
whatever the current directory: ``pairs.parquet``, ``pairs.csv`` and ``manifest.json``,
whose ``command`` is the ``dicelab`` command line that reproduces them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dicelab.cli.main import main as dicelab

ROOT = Path(__file__).resolve().parents[1]

#: The seed of the committed results/farkle_head_to_head.
SEED = 2026


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a == "--seed" or a.startswith("--seed=") for a in argv):
        argv += ["--seed", str(SEED)]
    if not any(a == "--out" or a.startswith("--out=") for a in argv):
        # the default directory, results/..., is the checkout's; a rules file named
        # relative to where we were must still be found
        argv = [str(Path(a).resolve()) if i and argv[i - 1] == "--rules" and Path(a).exists()
                else a for i, a in enumerate(argv)]
        os.chdir(ROOT)
    dicelab(["experiment", "run", "head-to-head", *argv])


if __name__ == "__main__":
    main()
