"""Farkle head to head: ai vs optimal-win vs max-ev vs the best threshold-T.

    .venv/bin/python experiments/farkle_head_to_head.py [--games N] [--target T]
        [--rules R] [--seed S] [--out DIR]

The best fixed threshold is the one of maximum exact expected turn score
(``turn_dp.threshold_sweep``). Every pair of the four policies then plays ``--games``
two-seat games (:func:`dicelab.compare.compare`; who starts rotates), and the match score
P(win) + P(tie)/2 of the first-named policy is reported with its 95% interval. Same as
``dicelab compare ai optimal-win max-ev threshold-<best> --out DIR``.

Writes ``results/farkle_head_to_head/<rules>-t<target>/pairs.parquet``, ``pairs.csv``
and ``manifest.json`` (atomically).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dicelab.compare import compare
from dicelab.farkle import turn_dp
from dicelab.farkle.scoring import load_scoring
from dicelab.results import atomic_write_text, prepare_out_dir, save_run

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--target", type=int, default=10000)
    ap.add_argument("--rules", default="default")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    scoring = load_scoring(args.rules)
    out = prepare_out_dir(args.out or ROOT / "results" / "farkle_head_to_head"
                          / f"{scoring.name}-t{args.target}")
    best_t = int(turn_dp.threshold_sweep(scoring).best_threshold)
    policies = ["ai", "optimal-win", "max-ev", f"threshold-{best_t}"]
    result = compare(policies, games=args.games, seed=args.seed, target=args.target,
                     rules=args.rules)
    for p in result.pairs:
        lo, hi = p.score_ci
        print(f"{p.policy:>14} vs {p.opponent:<14} score {p.score:.4f} [{lo:.4f}, {hi:.4f}] "
              f"wins {p.wins / p.games:.4f} ties {p.ties:,} ({p.verdict})")
    save_run(out, result, command=[sys.executable, *sys.argv], name="pairs")
    atomic_write_text(out / "pairs.csv", result.to_frame().to_csv(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
