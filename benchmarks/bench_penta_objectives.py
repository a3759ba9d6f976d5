"""Penta objectives and penta-win: time and memory (prints numbers).

Run: ``.venv/bin/python benchmarks/bench_penta_objectives.py [--target 300] [--table]
[--win-games 2000 [--win-only]] [--json]`` (``--json``: one JSON list of rows for
``benchmarks/run_all.py``)

* ``at-least:T`` for one T (targets: 10 min, 4 GB): the solve from an empty table cache
  (JIT warm), the values it holds and their bytes, and the exact distribution of the
  policy's score (the forward pass);
* with ``--table``, the table of every target (targets: 45 min, 8 GB on disk), from an
  empty table cache: the solve, the bytes, the file's size, and loading it again
  (memory-mapped);
* with ``--win-games N``: penta-win's decisions, simulated (target: at least 2,000
  games/s by the wall clock), penta-win against ``optimal``; the tables it needs come from
  the user's cache (``DICELAB_CACHE_DIR``), built there if missing (not timed), and are
  paged in by a first run of one chunk (not timed); ``--win-only``: only this. The
  games are played in chunks of 8,192 (one chunk per thread at a time), so N is rounded up
  to a whole number of chunks per thread, at least two: fewer games leave a core idle.
  The row gives the wall-clock games/s, the CPU time per game and the cores busy on
  average (CPU / wall);
* memory: the peak resident set size of the process.

The machine should be otherwise idle: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import tempfile
import time

import benchopts


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def _fresh_cache() -> str:
    d = tempfile.mkdtemp(prefix="dicelab-bench-objectives-")
    atexit.register(shutil.rmtree, d, True)
    return d


def main() -> None:
    ap = benchopts.Parser()
    ap.add_argument("--target", type=benchopts.count(0), default=300)
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--win-games", type=benchopts.count(), default=0)
    ap.add_argument("--win-only", action="store_true", help="only penta-win's figure")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from dicelab.penta.scoring import MAX_TOTAL

    if args.target >= MAX_TOTAL:  # the warm-up solves at-least:target+1
        ap.error(f"argument --target: at most {MAX_TOTAL - 1:,}, not {args.target:,}")
    if args.win_only and not args.win_games:
        ap.error("--win-only measures penta-win's games: give --win-games N")
    if args.win_only and args.table:
        ap.error("--table is not measured with --win-only")
    user_cache = os.environ.get("DICELAB_CACHE_DIR")
    rows: list[dict[str, str]] = []
    here = "python benchmarks/bench_penta_objectives.py"

    if args.win_games:
        from dicelab.parallel import threads
        from dicelab.penta.objective_play import points_to_come
        from dicelab.penta.objectives import at_least_table
        from dicelab.penta.simulate import simulate_penta
        from dicelab.seeding import CHUNK_GAMES

        at_least_table("seed")
        points_to_come("seed")
        per_round = threads() * CHUNK_GAMES  # a chunk for every thread
        games = max(2, -(-args.win_games // per_round)) * per_round
        # compiled, and the tables' pages read in (memory-mapped: a first touch per page)
        simulate_penta(["penta-win", "optimal"], games=CHUNK_GAMES, seed=2)
        cpu = time.process_time()
        wall = time.perf_counter()
        res = simulate_penta(["penta-win", "optimal"], games=games, seed=1)
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        rows.append({"what": "penta-win against optimal, simulated (tables loaded)",
                     "figure": f"{res.games / wall:,.0f} games/s by the wall clock "
                               f"({res.games:,} games, {res.threads} threads, "
                               f"{cpu / wall:.2f} cores busy; {1e3 * cpu / res.games:.3f} "
                               "CPU ms a game, the figure to compare on a shared machine)",
                     "command": f"{here} --win-games {args.win_games}"})

    if not args.win_only:
        rows.extend(_solves(args, here))
    if user_cache is not None:
        os.environ["DICELAB_CACHE_DIR"] = user_cache
    if args.json:
        print(json.dumps([{"what": r["what"], "figure": r["figure"]} for r in rows]))
    else:
        for r in rows:
            print(f"{r['what']}: {r['figure']}    [{r['command']}]")


def _solves(args: argparse.Namespace, here: str) -> list[dict[str, str]]:
    """The rows of one target's solve and distribution, the table of every target with
    ``--table``, and the peak memory, in an empty table cache."""
    rows: list[dict[str, str]] = []

    os.environ["DICELAB_CACHE_DIR"] = _fresh_cache()
    from dicelab.penta.objective_play import objective_distribution
    from dicelab.penta.objectives import at_least_table, release_tables, solve_objective
    from dicelab.penta.solver import solve

    solve("seed")
    solve_objective(f"at-least:{args.target + 1}", "seed", use_cache=False)  # JIT warm
    t0 = time.perf_counter()
    sol = solve_objective(f"at-least:{args.target}", "seed")
    rows.append({"what": f"Penta at-least:{args.target}, one target, solved (empty table "
                         "cache)",
                 "figure": f"{time.perf_counter() - t0:.0f} s; {sol.n_values:,} values, "
                           f"{sol.nbytes / 1e9:.2f} GB",
                 "command": here})
    t0 = time.perf_counter()
    dist = objective_distribution(f"at-least:{args.target}", "seed")
    p = dist.p_at_least(args.target)
    rows.append({"what": f"Penta at-least:{args.target}: exact distribution of its "
                         "policy's score (forward pass)",
                 "figure": f"{time.perf_counter() - t0:.0f} s (P = {p:.8f})",
                 "command": here})
    if args.table:
        release_tables()
        t0 = time.perf_counter()
        table = at_least_table("seed")
        built = time.perf_counter() - t0
        from dicelab.cache import cache_path
        from dicelab.penta.objectives import at_least_table_key

        size = cache_path(at_least_table_key(table.rules)).stat().st_size
        release_tables()
        t0 = time.perf_counter()
        at_least_table("seed")
        rows.append({"what": "Penta table of P(final >= T), every state and T: built, "
                             "stored / loaded (memory-mapped, checksummed)",
                     "figure": f"{built:.0f} s / {time.perf_counter() - t0:.1f} s; "
                               f"{table.n_values:,} values, {size / 1e9:.2f} GB on disk",
                     "command": f"{here} --table"})
    rows.append({"what": "Penta objectives: peak RSS of the benchmark",
                 "figure": f"{peak_rss_gb():.2f} GB", "command": here})
    return rows


if __name__ == "__main__":
    main()
