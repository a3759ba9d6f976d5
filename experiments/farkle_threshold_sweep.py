"""Exact expected turn score of threshold-T, T = 50..2000, against max-ev.

    .venv/bin/python experiments/farkle_threshold_sweep.py [--rules default] [--target 10000]

Writes ``results/farkle_threshold_sweep/<rules>/sweep.parquet``, ``sweep.csv`` and
``manifest.json`` (atomically, via dicelab.results). Columns: threshold, exact expected
turn score, P(bust), gap to max-ev, and the exact expected number of turns to reach
the target solitaire. Every number is exact (no simulation, no seed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dicelab.farkle import turn_dp
from dicelab.farkle.scoring import load_scoring
from dicelab.results import (
    atomic_write_parquet,
    atomic_write_text,
    prepare_out_dir,
    to_json,
    versions,
)

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="default")
    ap.add_argument("--target", type=int, default=10000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    scoring = load_scoring(args.rules)
    out = prepare_out_dir(args.out or ROOT / "results" / "farkle_threshold_sweep" / scoring.name)
    sweep = turn_dp.threshold_sweep(scoring)
    frame = sweep.to_frame()
    frame["expected_turns_to_target"] = [
        float(turn_dp.evaluate_race(scoring, args.target, turn_dp.threshold_bank_table(int(t)))[0])
        for t in sweep.thresholds]
    fastest = turn_dp.solve_fastest(scoring, args.target)
    atomic_write_parquet(out / "sweep.parquet", frame)
    atomic_write_text(out / "sweep.csv", frame.to_csv(index=False))
    manifest = {"command": [sys.executable, *sys.argv], "experiment": "farkle_threshold_sweep",
                "rules": scoring.to_dict(), "target": args.target, "exact": True,
                "summary": {**sweep.to_dict(),
                            "fastest_expected_turns": fastest.expected_turns,
                            "best_threshold_by_turns": int(frame.loc[
                                frame["expected_turns_to_target"].idxmin(), "threshold"])},
                "files": {"table": "sweep.parquet", "csv": "sweep.csv"},
                "versions": versions()}
    atomic_write_text(out / "manifest.json", json.dumps(json.loads(to_json(manifest)), indent=2)
                      + "\n")
    s = manifest["summary"]
    print(f"rules {scoring.name}: best threshold {s['best_threshold']} "
          f"({s['best_expected_turn_score']:.4f} points/turn), max-ev {s['max_ev']:.4f} "
          f"(gap {s['gap_of_best_to_max_ev']:.4f}); to reach {args.target}: best threshold "
          f"{s['best_threshold_by_turns']}, fastest {s['fastest_expected_turns']:.4f} turns")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
