"""Speed of the exact Farkle solvers; prints numbers, asserts nothing.

    .venv/bin/python benchmarks/bench_farkle_solve.py [--optimal-win]

Times max-ev, fastest for targets 5,000 / 10,000 / 15,000 (no disk cache), the
threshold sweep 50..2000, and with ``--optimal-win`` the two-player solve for 10,000
(bypassing its cache) with its peak resident memory. The first call of each kernel
includes numba's compile or cache load, so it is run once before timing.
"""

from __future__ import annotations

import argparse
import resource
import time

from dicelab.farkle import turn_dp
from dicelab.farkle.scoring import PRESETS


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="default")
    ap.add_argument("--optimal-win", action="store_true")
    args = ap.parse_args()
    scoring = PRESETS[args.rules]
    turn_dp.solve_max_ev(scoring)  # warm-up: numba compile / cache load
    turn_dp.solve_fastest(scoring, 500)
    sol, secs = timed(turn_dp.solve_max_ev, scoring)
    print(f"max-ev            {secs:8.3f} s   value {sol.expected_score:.6f}  cap {sol.cap}")
    for target in (5000, 10000, 15000):
        f, secs = timed(turn_dp.solve_fastest, scoring, target)
        print(f"fastest {target:>6}    {secs:8.3f} s   expected turns {f.expected_turns:.6f}  "
              f"max Newton steps {int(f.newton_steps.max())}")
    sw, secs = timed(turn_dp.threshold_sweep, scoring)
    print(f"threshold sweep   {secs:8.3f} s   best T {sw.best_threshold} "
          f"({sw.best_score:.4f}), max-ev {sw.max_ev:.4f}")
    if args.optimal_win:
        from dicelab.farkle.two_player import solve_optimal_win

        ow, secs = timed(solve_optimal_win, scoring, 10000, use_cache=False)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"optimal-win 10000 {secs:8.3f} s   P(win) {ow.p_win:.6f} P(tie) {ow.p_tie:.6f} "
              f"states {ow.states:,}  peak RSS {peak:.2f} GiB")


if __name__ == "__main__":
    main()
