"""Benchmark: policies users write, each figure beside its budget.

    .venv/bin/python benchmarks/bench_user_policy.py [--games 1000000]
        [--python-games 20000] [--json]

The four speed cases of "bring your own policy":

* a numba-compiled Farkle bank rule simulated, beside the built-in ``ai`` in the same
  run (budget: at least half of ``ai``'s games/s); solitaire games to 10,000, kernels
  compiled and the rule's table built before the clock starts;
* a plain-Python bank rule (compiled by dicelab, as every rule numba can compile is)
  evaluated exactly against ``optimal-win`` at 10,000, from its name to the answer, in a
  fresh process with ``optimal-win``'s table already in the cache (budget 60 s);
* a plain-Python Farkle policy that decides move by move (``decide(state) -> Move``),
  simulated by the referee with a progress bar drawn on stderr as the CLI draws it,
  solitaire games to 10,000 (budget: at least 5,000 games/s);
* ``dicelab evaluate`` of that bank rule at 10,000, end to end in a fresh process, the
  ``optimal-win`` solution cached (budget 2 min).

The run has a cache of its own (a temporary ``DICELAB_CACHE_DIR``) holding only
``optimal-win``'s solution: a user's cache may already hold what the two commands solve.

Every figure is given by the wall clock and by CPU time (this process's, or the child
process's): on a machine shared with other work only the CPU figure says what an idle
machine gives, and the report says which. ``--json`` prints one JSON list of ``{"what",
"figure", "command"}`` rows (benchmarks/run_all.py's table).
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchopts
from bench_referee import Steady

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "docs" / "examples" / "policies" / "farkle_rules.py")


def simulation_rates(games: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """((games/s, games per CPU second) of ai, the same of a numba-compiled copy of
    cautious), same run."""
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
        cpu = time.process_time()
        r = simulate_farkle([seat], games=games, seed=2)
        rates.append((games / r.elapsed_s, games / (time.process_time() - cpu)))
    return rates[0], rates[1]


def python_rate(games: int) -> tuple[float, float]:
    """(games/s, games per CPU second) of a plain-Python move-by-move policy simulated by
    the referee, with a rich progress bar updated as the CLI's is."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress

    from dicelab.farkle.simulate import simulate_farkle

    simulate_farkle([Steady()], games=500, seed=1)  # the options of every roll
    bar = Progress(BarColumn(), MofNCompleteColumn(),
                   console=Console(stderr=True, force_terminal=True), transient=True)
    with bar:
        task = bar.add_task("games", total=games)
        wall, cpu = time.perf_counter(), time.process_time()
        r = simulate_farkle([Steady()], games=games, seed=2,
                            progress=lambda done, total: bar.update(task, completed=done))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert r.kernel == "referee"
    return games / wall, games / cpu


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a fresh process running ``argv``."""
    t0, c0 = time.perf_counter(), _children_cpu()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - t0, _children_cpu() - c0


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(), default=1_000_000)
    ap.add_argument("--python-games", type=benchopts.count(), default=20_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    # a cache of this run's own: what a user's cache already holds (this rule's best
    # response, its exact pair) would answer the timed commands without solving them
    scratch = tempfile.mkdtemp(prefix="dicelab-bench-")
    atexit.register(shutil.rmtree, scratch, True)
    os.environ["DICELAB_CACHE_DIR"] = scratch
    dicelab = str(Path(sys.executable).parent / "dicelab")
    subprocess.run([dicelab, "solve", "farkle", "-p", "optimal-win", "--json"], check=True,
                   capture_output=True)  # in the cache, as a user's second command finds it
    load = os.getloadavg()[0]
    (ai, ai_cpu), (mine, mine_cpu) = simulation_rates(args.games)
    py, py_cpu = python_rate(args.python_games)
    exact_s, exact_cpu = timed([dicelab, "compare", f"{EXAMPLE}:cautious", "optimal-win",
                                "--exact", "--json"])
    evaluate_s, evaluate_cpu = timed([dicelab, "evaluate", f"{EXAMPLE}:cautious", "--json"])
    shared = f"; load average {load:.1f} at the start" + (
        ": the machine was shared, trust the CPU figure" if load > 1.5 else "")
    rows = [
        {"what": "Farkle: a numba-compiled bank rule simulated (solitaire, to 10,000)",
         "figure": f"{mine:,.0f} games/s, {mine / ai:.2f}x the built-in ai's {ai:,.0f}; per "
                   f"CPU second {mine_cpu:,.0f}, {mine_cpu / ai_cpu:.2f}x ai's {ai_cpu:,.0f} "
                   f"(budget: at least 0.5x){shared}",
         "command": "python benchmarks/bench_user_policy.py"},
        {"what": "Farkle: a plain-Python bank rule against optimal-win at 10,000, exactly",
         "figure": f"{exact_s:.1f} s end to end, {exact_cpu:.1f} s of CPU (budget 60 s)"
                   f"{shared}",
         "command": "dicelab compare docs/examples/policies/farkle_rules.py:cautious "
                    "optimal-win --exact"},
        {"what": "Farkle: a plain-Python move-by-move policy simulated with a progress bar "
                 "(solitaire, to 10,000)",
         "figure": f"{py:,.0f} games/s, {py_cpu:,.0f} per CPU second (budget 5,000)"
                   f"{shared}",
         "command": "python benchmarks/bench_user_policy.py"},
        {"what": "Farkle: dicelab evaluate of a bank rule at 10,000",
         "figure": f"{evaluate_s:.1f} s end to end, {evaluate_cpu:.1f} s of CPU (budget "
                   f"120 s){shared}",
         "command": "dicelab evaluate docs/examples/policies/farkle_rules.py:cautious"},
    ]
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']}: {row['figure']}")


if __name__ == "__main__":
    main()
