"""The sequential test's real error rates, against exact truth.

    .venv/bin/python benchmarks/sprt_error_rates.py [--quick] [--seeds 400] [--json]

Farkle's exact head to head (``dicelab compare A B --exact --target T``) gives a pair's
true score, so its true Elo difference ``e``. For each pair the SPRT (common dice, the
default) is run over ``--seeds`` seeds with hypotheses placed around ``e``, 10 Elo apart,
alpha = beta = 0.05:

* ``at H0``: elo0 = e, elo1 = e + 10: accepting H1 is an error (rate should be <= alpha);
* ``at H1``: elo0 = e - 10, elo1 = e: accepting H0 is an error (<= beta);
* ``between``: elo0 = e - 5, elo1 = e + 5: either answer is allowed (about half each);
* ``elo 0..10``: the default ``--sprt`` (elo0 = 0, elo1 = 10), whatever ``e`` is.

The pairs: two thresholds and two ``ai`` members that often play differently (most units
have a winner), and two ``ai`` members that rarely do (``ai:max-steps=1`` against ``ai``
to 3,000: the cap on the threshold's steps matters only 3,000 points behind, so about 1
unit in 100 has a winner; most units score exactly 1/2, the degenerate case of the
GSPRT's measured variance). Each rate is given with its exact (Clopper-Pearson) 95%
interval.
"""

from __future__ import annotations

import json
import math
import time

import benchopts
import numpy as np
from scipy.stats import binomtest

from dicelab.farkle.exact import exact_pair
from dicelab.sprt import SprtSpec, sprt

COMMAND = "python benchmarks/sprt_error_rates.py"
WIDTH = 10.0  # Elo between H0 and H1
ALPHA = BETA = 0.05
MAX_GAMES = 400_000

#: (policy, opponent, target, where the truth sits)
CASES = [
    ("threshold-300", "threshold-350", 3000, "at H0"),
    ("threshold-300", "threshold-350", 3000, "at H1"),
    ("threshold-300", "threshold-350", 3000, "between"),
    ("ai", "ai:two-dice=0", 3000, "at H0"),
    ("ai", "ai:two-dice=0", 3000, "at H1"),
    ("threshold-300", "threshold-250", 1000, "elo 0..10"),
    ("threshold-300", "threshold-350", 2000, "elo 0..10"),
    ("ai:max-steps=1", "ai", 3000, "elo 0..10"),
    ("ai", "ai:max-steps=1", 3000, "elo 0..10"),
    ("ai:max-steps=1", "ai", 3000, "at H0"),
    ("ai:max-steps=1", "ai", 3000, "at H1"),
    ("ai:max-steps=1", "ai", 3000, "between"),
]
QUICK = [0, 1, 7, 11]


def elo_of(score: float) -> float:
    return 400 * math.log10(score / (1 - score))


def spec_for(e: float, where: str) -> SprtSpec:
    lo = {"at H0": e, "at H1": e - WIDTH, "between": e - WIDTH / 2, "elo 0..10": 0.0}[where]
    return SprtSpec(lo, lo + WIDTH, ALPHA, BETA)


def rate(k: int, n: int) -> str:
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k / n:.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def run_case(a: str, b: str, target: int, where: str, seeds: int) -> dict:
    score = exact_pair(a, b, target=target).score
    e = elo_of(score)
    spec = spec_for(e, where)
    t = time.perf_counter()
    res = [sprt(a, b, spec, seed=s, target=target, max_games=MAX_GAMES) for s in range(seeds)]
    d = [r.decision for r in res]
    h0, h1, und = d.count("H0"), d.count("H1"), d.count("undecided")
    wrong = {"at H0": ("H1", h1), "at H1": ("H0", h0)}.get(where)
    if where == "elo 0..10":
        if e <= spec.elo0:
            wrong = ("H1", h1)
        elif e >= spec.elo1:
            wrong = ("H0", h0)
    finite = [abs(r.llr) / spec.bounds[1] for r in res if math.isfinite(r.llr)]
    return {"pair": f"{a} vs {b}", "target": target, "exact_score": score, "exact_elo": e,
            "sprt": f"elo0={spec.elo0:.2f},elo1={spec.elo1:.2f}", "where": where,
            "seeds": seeds, "H0": h0, "H1": h1, "undecided": und,
            "error": None if wrong is None else f"accept {wrong[0]}: {rate(wrong[1], seeds)}",
            "mean_games": float(np.mean([r.games for r in res])),
            "llr_over_bound": float(np.mean(finite)) if finite else math.nan,
            "seconds": time.perf_counter() - t}


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=benchopts.count(), default=None, help="default 400")
    ap.add_argument("--quick", action="store_true",
                    help=f"{len(QUICK)} of the cases, 50 seeds (seconds)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.quick and args.seeds is not None:
        ap.error("--quick runs 50 seeds: not with --seeds")
    cases = [CASES[i] for i in QUICK] if args.quick else CASES
    seeds = 50 if args.quick else args.seeds or 400
    rows = []
    if not args.json:
        print("| pair | target | exact score (Elo) | --sprt | truth | seeds | H0 / H1 / undecided "
              "| error rate [95% CI] | mean games | LLR / bound |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    for a, b, target, where in cases:
        r = run_case(a, b, target, where, seeds)
        rows.append(r)
        if not args.json:
            print(f"| {r['pair']} | {target:,} | {r['exact_score']:.5f} ({r['exact_elo']:+.2f}) "
                  f"| `{r['sprt']}` | {where} | {seeds} | {r['H0']} / {r['H1']} / "
                  f"{r['undecided']} | {r['error'] or 'either allowed'} | "
                  f"{r['mean_games']:,.0f} | {r['llr_over_bound']:.2f} |", flush=True)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
