"""A 10-policy, 2-seat Farkle tournament of 200,000 games per pair, and a Penta one.

    .venv/bin/python benchmarks/bench_tournament.py [--games 200000]
        [--penta-games 100000] [--json]

Ten policies (``ai`` variants, thresholds, ``max-ev``) meet in every pairing, each pair's
games split over its two seatings with common random numbers. Target on a 2-core
machine: under 60 s. Penta: ``optimal`` and ``greedy`` (the Penta policies there are), two
seats, the same way.
"""

from __future__ import annotations

import json
import time

import benchopts

from dicelab.tournament import tournament

POLICIES = ["ai", "ai:two-dice=0", "ai:base=350", "ai:one-die=0", "threshold-250",
            "threshold-300", "threshold-350", "threshold-400", "threshold-500", "max-ev"]


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(2), default=200_000, help="games per pair")
    ap.add_argument("--penta-games", type=benchopts.count(2), default=100_000,
                    help="Penta: games per pair")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tournament(POLICIES[:2], games=10_000, seed=0)  # compile or load the kernels
    t0 = time.perf_counter()
    t = tournament(POLICIES, games=args.games // 2, seed=1)
    secs = time.perf_counter() - t0
    rows = [{"what": f"Farkle tournament, {len(POLICIES)} policies, 2 seats, "
                     f"{args.games:,} games per pair",
             "figure": f"{secs:.1f} s ({len(t.tables) * t.games_per_table / secs / 1e6:.2f} M "
                       "games/s, common random numbers)",
             "command": "python benchmarks/bench_tournament.py"}]
    penta = ["optimal", "greedy"]
    tournament(penta, games=10_000, seed=0)  # the decision tables, and the kernel compiled
    t0 = time.perf_counter()
    t = tournament(penta, games=args.penta_games // 2, seed=1)
    secs = time.perf_counter() - t0
    rows.append({"what": f"Penta tournament, {len(penta)} policies, 2 seats, "
                         f"{args.penta_games:,} games per pair",
                 "figure": f"{secs:.1f} s ({len(t.tables) * t.games_per_table / secs / 1e6:.2f}"
                           " M games/s, common random numbers)",
                 "command": "python benchmarks/bench_tournament.py"})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(row["what"], row["figure"])


if __name__ == "__main__":
    main()
