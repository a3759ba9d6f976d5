"""Farkle head to head: ai vs optimal-win vs max-ev vs the best threshold-T.

    .venv/bin/python experiments/farkle_head_to_head.py [--games N] [--target T]
        [--rules R] [--seed S] [--out DIR]

Every pair of policies plays ``--games`` two-seat games (who starts rotates, so each
policy starts half the games). The best fixed threshold is the one of maximum exact
expected turn score (``turn_dp.threshold_sweep``). For each pair it reports the wins,
ties and losses of the first-named policy, its win rate with a 95% Wilson interval, and
its match score P(win) + 0.5 P(tie) with a 95% normal interval. The optimal-win line
is compared with the solver's exact value where it applies: against itself the exact
P(first wins) + 0.5 P(tie), averaged over both starting orders, is 0.5 by symmetry.

Writes ``results/farkle_head_to_head/<rules>-t<target>/pairs.parquet``, ``pairs.csv``
and ``manifest.json`` (atomically).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path

import pandas as pd

from dicelab.farkle import turn_dp
from dicelab.farkle.scoring import load_scoring
from dicelab.results import (
    atomic_write_parquet,
    atomic_write_text,
    prepare_out_dir,
    to_json,
    versions,
)
from dicelab.simulate import simulate
from dicelab.stats import Z95, wilson_interval

ROOT = Path(__file__).resolve().parents[1]


def match_row(a: str, b: str, result) -> dict:
    """Summary of one pairing from seat 0 (= ``a``)'s point of view."""
    s0 = result.seat_summary(0)
    n = result.games
    wins, ties = s0["wins"], s0["ties"]
    losses = n - wins - ties
    score = (wins + 0.5 * ties) / n
    second = (wins + 0.25 * ties) / n
    se = math.sqrt(max(second - score * score, 0.0) / n)
    lo, hi = wilson_interval(wins, n)
    return {"policy": a, "opponent": b, "games": n, "wins": wins, "ties": ties,
            "losses": losses, "win_rate": wins / n, "win_rate_lo": lo, "win_rate_hi": hi,
            "score": score, "score_se": se, "score_lo": score - Z95 * se,
            "score_hi": score + Z95 * se,
            "verdict": ("tie (interval contains 0.5)" if abs(score - 0.5) <= Z95 * se
                        else ("better" if score > 0.5 else "worse")),
            "seed": result.seed, "elapsed_s": result.elapsed_s}


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
    rows = []
    started = time.perf_counter()
    for i, (a, b) in enumerate(itertools.combinations(policies, 2)):
        res = simulate(a, [b], games=args.games, seed=args.seed + i, target=args.target,
                       rules=args.rules)
        row = match_row(a, b, res)
        rows.append(row)
        print(f"{a:>14} vs {b:<14} score {row['score']:.4f} "
              f"[{row['score_lo']:.4f}, {row['score_hi']:.4f}]  wins {row['win_rate']:.4f} "
              f"ties {row['ties']}  ({row['verdict']})", flush=True)
    frame = pd.DataFrame(rows)
    atomic_write_parquet(out / "pairs.parquet", frame)
    atomic_write_text(out / "pairs.csv", frame.to_csv(index=False))
    manifest = {"command": [sys.executable, *sys.argv], "experiment": "farkle_head_to_head",
                "policies": policies, "best_threshold_by_expected_turn_score": best_t,
                "rules": scoring.to_dict(), "target": args.target, "games_per_pair": args.games,
                "seeds": {f"{r['policy']} vs {r['opponent']}": r["seed"] for r in rows},
                "elapsed_s": time.perf_counter() - started,
                "files": {"table": "pairs.parquet", "csv": "pairs.csv"},
                "versions": versions()}
    atomic_write_text(out / "manifest.json",
                      json.dumps(json.loads(to_json(manifest)), indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
