"""Speed of the exact solitaire Farkle solvers; prints numbers, asserts nothing.

    .venv/bin/python benchmarks/bench_farkle_solve.py [--rules R] [--json]

Times max-ev, fastest for targets 5,000 / 10,000 / 15,000 (no disk cache) and the
threshold sweep 50..2000. The first call of each kernel includes numba's compile or
cache load, so it is run once before timing.
"""

from __future__ import annotations

import json
import time

import benchopts

from dicelab.errors import UserError
from dicelab.farkle import solitaire
from dicelab.farkle.rules import load_rules


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def main() -> None:
    ap = benchopts.Parser()
    ap.add_argument("--rules", default="default")
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = ap.parse_args()
    try:
        rules = load_rules(args.rules)
    except UserError as exc:
        ap.error(str(exc))
    solitaire.solve_max_ev(rules)  # warm-up: numba compile / cache load
    solitaire.solve_fastest(rules, 500)
    solitaire.threshold_sweep(rules)  # the sweep has kernels of its own
    cmd = "python benchmarks/bench_farkle_solve.py"
    sol, secs = timed(solitaire.solve_max_ev, rules)
    rows = [{"what": "Farkle max-ev solve", "figure": f"{secs * 1000:.0f} ms "
             f"({sol.expected_score:.4f} points per turn)", "command": cmd}]
    for target in (5000, 10000, 15000):
        f, secs = timed(solitaire.solve_fastest, rules, target)
        rows.append({"what": f"Farkle fastest solve, target {target:,}",
                     "figure": f"{secs:.2f} s ({f.expected_turns_to_target:.5f} turns)",
                     "command": cmd})
    sw, secs = timed(solitaire.threshold_sweep, rules)
    rows.append({"what": "Farkle threshold sweep, T = 50..2000 (exact)",
                 "figure": f"{secs:.2f} s (best T = {sw.best_threshold})", "command": cmd})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']:<50} {row['figure']}")


if __name__ == "__main__":
    main()
