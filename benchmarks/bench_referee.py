"""Benchmark: Farkle policies that decide move by move, simulated by the referee in Python.

    .venv/bin/python benchmarks/bench_referee.py [--games 20000] [--json]

A plain-Python policy of a few lines (all scoring dice, bank from 350 turn points, as a
user writes it: ``decide(state) -> Move``), games to 10,000 through
:func:`dicelab.farkle.simulate.simulate_farkle` (which sends it to the referee), solitaire
and two seats (budget: at least 5,000 games/s). Each figure is the wall-clock rate and
the rate per second of this process's CPU time: on a shared machine the second is what
one idle core gives.

``--json`` prints one JSON list of ``{"what", "figure", "command"}`` rows
(benchmarks/run_all.py's table).
"""

from __future__ import annotations

import json
import time

import benchopts

from dicelab.farkle.policy import Move, all_scoring


class Steady:
    """All scoring dice; bank from 350 turn points."""

    name = "steady"

    def decide(self, state):
        o = all_scoring(state)
        return Move(o.keep, state.turn_points + o.points >= 350 and state.can_bank(o))


def rates(seats: int, games: int) -> tuple[float, float]:
    """(games/s by the wall clock, games/s of CPU time) of ``seats`` Steady seats."""
    from dicelab.farkle.simulate import simulate_farkle

    simulate_farkle([Steady()] * seats, games=500, seed=1)  # the options of every roll
    wall, cpu = time.perf_counter(), time.process_time()
    r = simulate_farkle([Steady()] * seats, games=games, seed=2)
    assert r.kernel == "referee"
    return games / (time.perf_counter() - wall), games / (time.process_time() - cpu)


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(), default=20_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for seats in (1, 2):
        wall, cpu = rates(seats, args.games)
        rows.append({"what": f"Farkle: a plain-Python move-by-move policy simulated by the "
                             f"referee ({'solitaire' if seats == 1 else 'two seats'}, to "
                             "10,000)",
                     "figure": f"{wall:,.0f} games/s ({cpu:,.0f} per CPU second; budget "
                               "5,000)",
                     "command": "python benchmarks/bench_referee.py"})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']}: {row['figure']}")


if __name__ == "__main__":
    main()
