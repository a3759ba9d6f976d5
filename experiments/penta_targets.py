"""How far the Penta objectives move the final score: for every target T, the most
P(final >= T) any policy reaches (each ``optimal:at-least:T`` its own) beside ``optimal``'s
P(final >= T), exactly.

    .venv/bin/python experiments/penta_targets.py [--rules seed] [--out DIR]

Reads the table of every target (:func:`dicelab.penta.objectives.at_least_table`, built
if it is not in the cache: about 2.3 GB and half an hour) and ``optimal``'s exact
distribution. Without ``--out`` this writes the checkout's ``results/penta_targets/<rules>``:
``summary.parquet`` (one row per T: ``p_optimal``, ``p_best``, their ratio) and
``manifest.json`` (the command, versions, the most telling targets). A bad option is one
``error:`` line and exit code 2, nothing written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dicelab.results import ScriptParser, run_script, to_json

ROOT = Path(__file__).resolve().parents[1]


class Targets:
    """The two curves and what reproduces them (the shape :func:`save_run` writes)."""

    game = "penta"

    def __init__(self, rules: str) -> None:
        from dicelab.penta.distribution import score_distribution
        from dicelab.penta.objectives import at_least_table

        t0 = time.perf_counter()
        table = at_least_table(rules)
        p = score_distribution("optimal", table.rules).probability
        tail = np.cumsum(p[::-1])[::-1]  # P(final >= T)
        n = min(tail.size, table.best.size)
        self.rules = table.rules.name
        self.frame = pd.DataFrame({"target": np.arange(n), "p_optimal": tail[:n],
                                   "p_best": np.asarray(table.best[:n])})
        self.mean = float(p @ np.arange(p.size))
        self.elapsed_s = time.perf_counter() - t0

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def manifest(self) -> dict:
        return {"experiment": "penta-targets", "rules": self.rules,
                "elapsed_s": self.elapsed_s}

    def to_dict(self) -> dict:
        f = self.frame.set_index("target")
        picks = [200, 250, 300, 350, 400, 500]
        return {"rules": self.rules, "optimal_mean": self.mean,
                "targets": {str(t): {"p_optimal": float(f.p_optimal[t]),
                                     "p_best": float(f.p_best[t])} for t in picks}}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="seed")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    command = ["python", "experiments/penta_targets.py", "--rules", args.rules]
    done = run_script(args.out or ROOT / "results" / "penta_targets" / args.rules,
                      lambda: Targets(args.rules), command)
    if isinstance(done, int):
        return done
    run, out = done
    d = run.to_dict()
    if args.json:
        print(to_json(d))
        return 0
    for t, v in d["targets"].items():
        print(f"P(final >= {t}): optimal {v['p_optimal']:.5f}, the best for {t} "
              f"{v['p_best']:.5f}")
    print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
