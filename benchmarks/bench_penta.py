"""Penta speed: full solve per rule set, simulated games/s, memory (prints numbers).

Run: ``.venv/bin/python benchmarks/bench_penta.py [--games N] [--rules seed,hasbro,...]
[--json]`` (``--json``: one JSON list of rows for ``benchmarks/run_all.py``)

* solve: wall time of ``solve_values`` per rule set, JIT warm, no cache (target <= 2 s);
* decision tables: time to build them from the values (kernels compiled; the first run
  on a fresh install, compiling included, is ``benchmarks/bench_first_run.py``'s), then to
  load them from the disk cache (every later process);
* simulate: optimal and greedy games/s after warm-up (target >= 1,000,000 optimal/s);
* reference: the same number of ``roll_dice`` draws alone (the random numbers' cost);
* memory: peak resident set size of the process.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import shutil
import tempfile
import time

import benchopts
import numba
import numpy as np
from numba import njit, prange

from dicelab import config, seeding
from dicelab.penta.policies import decision_tables, release_decision_tables
from dicelab.penta.rules import RULE_SETS
from dicelab.penta.simulate import simulate_penta
from dicelab.penta.solver import compile_kernel, n_reachable_states, solve, solve_values
from dicelab.rng import roll_dice


@njit(cache=True, parallel=True)
def _rng_only(states, games_per_chunk, draws_per_game, out):
    for j in prange(states.shape[0]):
        st = states[j].copy()
        acc = 0
        for _ in range(games_per_chunk * draws_per_game // 3):
            acc += roll_dice(st, 5) + roll_dice(st, 3) + roll_dice(st, 2)
        out[j] = acc


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(), default=2_000_000)
    ap.add_argument("--rules", type=benchopts.names(RULE_SETS),
                    default=["seed", "hasbro", "free-joker", "no-bonus"])
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = ap.parse_args()
    if "DICELAB_CACHE_DIR" not in os.environ:
        scratch = tempfile.mkdtemp(prefix="dicelab-bench-")
        atexit.register(shutil.rmtree, scratch, True)
        os.environ["DICELAB_CACHE_DIR"] = scratch
    say = (lambda *_: None) if args.json else print
    cmd = "python benchmarks/bench_penta.py"
    rows = []
    say(f"threads: {numba.get_num_threads()}, reachable states: {n_reachable_states():,}")

    solve_values(RULE_SETS["no-bonus"])  # JIT warm-up
    threads = numba.get_num_threads()
    for name in args.rules:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            v = solve_values(RULE_SETS[name])
            times.append(time.perf_counter() - t0)
        numba.set_num_threads(1)
        c0 = time.process_time()
        solve_values(RULE_SETS[name])
        cpu1 = time.process_time() - c0
        numba.set_num_threads(threads)
        say(f"solve {name:10s}: {v[0]:.8f}  best {min(times):.3f} s wall "
            f"(runs {', '.join(f'{t:.3f}' for t in times)}); 1 thread: {cpu1:.3f} s CPU")
        rows.append({"what": f"Penta solve, rules {name} (optimum {v[0]:.8f})",
                     "figure": f"{min(times):.2f} s ({threads} threads), {cpu1:.2f} s CPU "
                               "(1 thread)", "command": cmd})

    solve("seed")  # values into the (temporary) cache, so the table timing is the build alone
    compile_kernel(decisions=True)  # and its kernel compiled (or loaded)
    tables = decision_tables(("optimal", "greedy"), "seed")
    built = dict(tables.elapsed_s)
    release_decision_tables()  # as a new process would: from the disk cache
    tables = decision_tables(("optimal", "greedy"), "seed")
    assert all(tables.from_cache.values())
    say("decision tables (seed): " + ", ".join(
        f"{p} built {built[p]:.2f} s, loaded {t:.2f} s" for p, t in tables.elapsed_s.items())
        + f"; {tables.decisions[0].nbytes / 2**20:.0f} MiB per policy")
    for p, t in tables.elapsed_s.items():
        rows.append({"what": f"Penta decision table, {p} (seed): build (kernel compiled) / "
                             "load",
                     "figure": f"{built[p]:.2f} s / {t:.2f} s", "command": cmd})

    for pol in ("optimal", "greedy"):
        simulate_penta([pol], games=100_000, seed=0)  # warm-up
        for th in (threads, 1):
            numba.set_num_threads(th)
            best = None
            for _ in range(3):
                r = simulate_penta([pol], games=args.games, seed=1)
                best = r.games_per_s if best is None else max(best, r.games_per_s)
            score = r.seat(0).mean_final_score
            say(f"simulate {pol:8s} ({th} thread{'s' if th > 1 else ''}): {best:,.0f} games/s "
                f"({args.games:,} games, best of 3); mean {score.mean:.4f} +- {score.se:.4f}")
            rows.append({"what": f"Penta {pol} solitaire ({th} thread{'s' if th > 1 else ''})",
                         "figure": f"{best / 1e6:.2f} M games/s", "command": cmd})
        numba.set_num_threads(threads)

    # reference: 39 draws per game (13 turns x 3 rolls; real games skip rolls that keep all)
    bounds = seeding.chunk_bounds(args.games)
    states = seeding.chunk_states(1, 0, bounds.size - 1)
    out = np.zeros(states.shape[0], dtype=np.int64)
    _rng_only(states[:1], 3, 39, out[:1])
    t0 = time.perf_counter()
    _rng_only(states, config.CHUNK_GAMES, 39, out)
    dt = time.perf_counter() - t0
    say(f"random numbers alone (39 roll_dice per game): {args.games / dt:,.0f} games/s")
    say(f"peak RSS: {peak_rss_mb():,.0f} MiB")
    rows.append({"what": "Penta: random numbers alone (39 rolls per game)",
                 "figure": f"{args.games / dt / 1e6:.2f} M games/s", "command": cmd})
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
