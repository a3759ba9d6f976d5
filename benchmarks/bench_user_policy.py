"""Benchmark: policies users write, each figure beside its budget.

    .venv/bin/python benchmarks/bench_user_policy.py [--games 1000000] [--json]

* a numba-compiled Farkle bank rule simulated, beside the built-in ``ai`` in the same
  run (budget: at least half of ``ai``'s games/s); solitaire games to 10,000, kernels
  compiled and the rule's table built before the clock starts;
* a plain-Python bank rule (compiled by dicelab, as every rule numba can compile is)
  evaluated exactly against ``optimal-win`` at 10,000, from its name to the answer, in a
  fresh process with ``optimal-win``'s table already in the cache (budget 60 s);
* ``dicelab evaluate`` of that rule at 10,000, end to end in a fresh process, the
  ``optimal-win`` solution cached (budget 2 min).

The machine should be otherwise idle. ``--json`` prints one JSON list of ``{"what",
"figure", "command"}`` rows (benchmarks/run_all.py's table).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "docs" / "examples" / "policies" / "farkle_rules.py")


def simulation_rates(games: int) -> tuple[float, float]:
    """(games/s of ai, games/s of a numba-compiled copy of cautious), same run."""
    import numba

    from dicelab.farkle.policy import bank_rule
    from dicelab.farkle.simulate import simulate_farkle
    from dicelab.registry import parse_policy

    @bank_rule
    @numba.njit
    def cautious(my, opp, turn_points, dice_left, base=350, big=1000):
        return turn_points >= (big if dice_left >= 3 else base)

    rates = []
    for seat in (parse_policy("ai"), cautious):
        simulate_farkle([seat], games=20_000, seed=1)  # compile, build the table
        r = simulate_farkle([seat], games=games, seed=2)
        rates.append(games / r.elapsed_s)
    return rates[0], rates[1]


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    dicelab = str(Path(sys.executable).parent / "dicelab")
    subprocess.run([dicelab, "solve", "farkle", "-p", "optimal-win", "--json"], check=True,
                   capture_output=True)  # in the cache, as a user's second command finds it
    ai, mine = simulation_rates(args.games)
    exact_s = timed([dicelab, "compare", f"{EXAMPLE}:cautious", "optimal-win", "--exact",
                     "--json"])
    evaluate_s = timed([dicelab, "evaluate", f"{EXAMPLE}:cautious", "--json"])
    rows = [
        {"what": "Farkle: a numba-compiled bank rule simulated (solitaire, to 10,000)",
         "figure": f"{mine:,.0f} games/s, {mine / ai:.2f}x the built-in ai's {ai:,.0f} "
                   "(budget: at least 0.5x)",
         "command": "python benchmarks/bench_user_policy.py"},
        {"what": "Farkle: a plain-Python bank rule against optimal-win at 10,000, exactly",
         "figure": f"{exact_s:.1f} s end to end (budget 60 s)",
         "command": "dicelab compare docs/examples/policies/farkle_rules.py:cautious "
                    "optimal-win --exact"},
        {"what": "Farkle: dicelab evaluate of a bank rule at 10,000",
         "figure": f"{evaluate_s:.1f} s end to end (budget 120 s)",
         "command": "dicelab evaluate docs/examples/policies/farkle_rules.py:cautious"},
    ]
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']}: {row['figure']}")


if __name__ == "__main__":
    main()
