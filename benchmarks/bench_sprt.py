"""Games a sequential test needs to decide a 1-point difference, against a fixed test.

    .venv/bin/python benchmarks/bench_sprt.py [--seeds 20] [--json]

The question: is ``ai`` better than ``ai:two-dice=0`` by a 1-point score difference
(H0: even, H1: 0.51; alpha = beta = 0.05)? The exact score is 0.512 (``dicelab compare
ai ai:two-dice=0 --exact``), and ``ai:max-steps=3`` against ``ai`` is even (0.500): one
pair where H1 holds, one where H0 does. A fixed-size test with independent games needs
``((z_0.95 + z_0.95) * sd / 0.01)^2`` games, ``sd`` the per-game standard deviation of
the score; the sequential test's average games are measured over ``--seeds`` runs, with
common random numbers and without. Target: at most a third of the fixed test's games.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
from scipy.stats import norm

from dicelab.sprt import SprtSpec, sprt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    spec = SprtSpec(0.0, 400 * math.log10(0.51 / 0.49), 0.05, 0.05)
    z = norm.ppf(0.95)
    fixed = math.ceil(((z + z) * 0.5 / 0.01) ** 2)  # sd <= 0.5 per game
    rows = []
    for a, b, truth in (("ai", "ai:two-dice=0", "H1"), ("ai:max-steps=3", "ai", "H0")):
        for crn in (True, False):
            res = [sprt(a, b, spec, seed=s, crn=crn) for s in range(args.seeds)]
            games = np.mean([r.games for r in res])
            right = sum(r.decision == truth for r in res)
            rows.append({
                "what": f"SPRT {a} vs {b} ({truth} true), 1-point difference, "
                        f"{'common' if crn else 'independent'} dice",
                "figure": f"{games:,.0f} games on average ({games / fixed:.0%} of a fixed "
                          f"test's {fixed:,}); {right} of {args.seeds} decisions right",
                "command": "python benchmarks/bench_sprt.py"})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']}: {row['figure']}")


if __name__ == "__main__":
    main()
