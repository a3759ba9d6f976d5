"""Benchmark: solve two-player Farkle (optimal-win) and build its policy table.

Prints, per target: solve seconds, turn DPs, states, first player's P(win)/P(tie)/P(loss),
fair head start, tolerance, peak memory (RSS), and the policy table's build time and size.
The speed target: target 10,000 under the default table in at most 60 s on 2 cores,
memory under 4 GB. The cache is bypassed (a private temporary cache dir is used).

    .venv/bin/python benchmarks/bench_two_player.py                 # 5000 10000 15000
    .venv/bin/python benchmarks/bench_two_player.py --targets 10000 --rules basic --table
    .venv/bin/python benchmarks/bench_two_player.py --targets 10000 --json   # for run_all
"""

from __future__ import annotations

import atexit
import os
import resource
import shutil
import sys
import tempfile
import time

import benchopts


def _rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux, bytes on macOS
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=benchopts.count(), nargs="+", default=[5000, 10000, 15000])
    ap.add_argument("--rules", default="default")
    ap.add_argument("--table", action="store_true", help="also build the policy table")
    ap.add_argument("--threads", type=benchopts.count(), default=None)
    ap.add_argument("--ending", default=None, help="last-round or first-to-bank")
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = ap.parse_args()
    import numba

    from dicelab.errors import UserError
    from dicelab.farkle.rules import load_rules
    from dicelab.farkle.solve import solve_optimal_win

    if args.threads and args.threads > numba.config.NUMBA_NUM_THREADS:
        ap.error(f"argument --threads: at most {numba.config.NUMBA_NUM_THREADS} here, not "
                 f"{args.threads}")
    try:
        rules = load_rules(args.rules, args.ending)
    except UserError as exc:
        ap.error(str(exc))
    scratch = tempfile.mkdtemp(prefix="dicelab-bench-")
    atexit.register(shutil.rmtree, scratch, True)
    os.environ["DICELAB_CACHE_DIR"] = scratch
    if args.threads:
        numba.set_num_threads(args.threads)
    say = (lambda *a, **k: None) if args.json else print
    t0 = time.perf_counter()
    solve_optimal_win(rules, 200, use_cache=False)  # compile (or load) the kernels
    say(f"warm-up (jit compile/load) {time.perf_counter() - t0:.1f} s, "
        f"threads {numba.get_num_threads()}")
    rows = []
    for target in args.targets:
        t0 = time.perf_counter()
        sol = solve_optimal_win(rules, target, use_cache=False)
        wall = time.perf_counter() - t0
        rows.append({"what": f"Farkle optimal-win solve, target {target:,} ({rules.ending})",
                     "figure": f"{wall:.1f} s, peak {_rss_mb() / 1024:.2f} GB "
                               f"({numba.get_num_threads()} threads)",
                     "command": "python benchmarks/bench_two_player.py --targets "
                                f"{target}"})
        say(f"target {target:>6} rules {args.rules}: solve {wall:6.1f} s "
            f"(kernel {sol.solve_s:.1f} s), turn DPs {sol.turn_dps:,}, "
            f"states {sol.states:,}, tolerance {sol.tolerance:.1e}")
        first = sol.first_outcome
        say(f"    first player P(win) {first.win:.6f}  P(tie) {first.tie:.6f}  "
            f"P(loss) {first.loss:.6f}  value {sol.win_value(0, 0):.6f}")
        say(f"    fair head start {sol.fair_head_start} points "
            f"(first player's value {sol.fair_head_start_value:.6f}); "
            f"solution arrays {sol.memory_bytes / 1e6:.1f} MB; "
            f"policy table would be {sol.policy_table_bytes / 1e6:.0f} MB "
            f"(P = {sol.table_rows})")
        if args.table:
            t0 = time.perf_counter()
            table = sol.policy_table()
            say(f"    policy table built in {time.perf_counter() - t0:.1f} s, "
                f"value {table.value.shape}")
            del table
            sol._memo.clear()
        say(f"    peak RSS so far {_rss_mb():.0f} MB")
    if args.json:
        import json

        print(json.dumps(rows))


if __name__ == "__main__":
    main()
