"""Benchmark: the Farkle engine's exact solves, each beside its budget, with its peak memory.

    .venv/bin/python benchmarks/bench_engine.py [--only NAME ...] [--json]
    .venv/bin/python benchmarks/bench_engine.py --checkout OTHER   # another checkout's code

Each solve runs in a fresh process with kernels compiled (a warm-up solve at a small
target first) and the table cache bypassed; its wall time, its CPU time (every thread:
the figure to compare on a shared machine) and the process's peak resident memory are
reported. ``--checkout DIR`` runs the same solves with ``DIR/src``
first on the path (an older checkout, for a figure "beside today's"; its modules are
found under the names it has). The machine should be otherwise idle.

``--json`` prints one JSON list of ``{"what", "figure", "command"}`` rows
(benchmarks/run_all.py's table).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import benchopts

HERE = Path(__file__).resolve().parent

#: name -> (what, rules, target, opponent or None, budget in seconds)
SOLVES = {
    "default": ("optimal-win, rules default, target 10,000", "default", 10_000, None, 15),
    "facebook": ("optimal-win, rules facebook (farkle penalty), target 10,000", "facebook",
                 10_000, None, 90),
    "facebook-response": ("best response to threshold-300, rules facebook, target 10,000",
                          "facebook", 10_000, "threshold-300", 180),
    "facebook-must-roll": ("optimal-win, rules facebook with hot dice must-roll, target "
                           "10,000", "facebook-must-roll", 10_000, None, 600),
    "zilch": ("optimal-win, rules zilch (six dice never lose, farkle penalty), target 5,000",
              "zilch", 5_000, None, None),
}

_CHILD = r"""
import dataclasses, json, resource, sys, time
args = json.loads(sys.argv[1])
from dicelab.farkle.rules import PRESETS
try:
    from dicelab.farkle.exact import solve_best_response, solve_optimal_win
except ImportError:  # a checkout from before the engine
    from dicelab.farkle.two_player import solve_best_response, solve_optimal_win
name = args["rules"]
rules = (dataclasses.replace(PRESETS["facebook"], name=name, hot_dice="must-roll")
         if name == "facebook-must-roll" else PRESETS[name])
def solve(target):
    if args["opponent"] is None:
        return solve_optimal_win(rules, target, use_cache=False)
    return solve_best_response(rules, target, args["opponent"], use_cache=False)
solve(500)  # compile or load the kernels
t0, c0 = time.perf_counter(), time.process_time()
sol = solve(args["target"])
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_bytes": peak,
                  "p_win": sol.first_outcome.win if hasattr(sol, "first_outcome")
                  else sol.p_win,  # a checkout from before the shared Outcome
                  "states": sol.states, "sweeps": getattr(sol, "sweeps", 0),
                  "tolerance": sol.tolerance}))
"""


def run(name: str, checkout: Path | None) -> dict:
    what, rules, target, opponent, budget = SOLVES[name]
    env = {**os.environ, "DICELAB_CACHE_DIR": tempfile.mkdtemp(prefix="dicelab-bench-")}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout / "src")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps({"rules": rules, "target": target,
                                                   "opponent": opponent})],
        env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"name": name, "what": what, "error": done.stderr.strip().splitlines()[-1]}
    return {"name": name, "what": what, "budget": budget, **json.loads(done.stdout)}


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(SOLVES), default=None)
    ap.add_argument("--checkout", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.checkout is not None and not (args.checkout / "src/dicelab").is_dir():
        ap.error(f"--checkout {args.checkout}: no src/dicelab there (a dicelab checkout)")
    rows = []
    for name in args.only or list(SOLVES):
        r = run(name, args.checkout)
        rows.append(r)
        if not args.json:
            if "error" in r:
                print(f"{name:20s} failed: {r['error']}", flush=True)
                continue
            budget = "" if r["budget"] is None else f" (budget {r['budget']} s)"
            print(f"{name:20s} {r['seconds']:8.1f} s{budget}  CPU {r['cpu_seconds']:.1f} s  peak "
                  f"{r['peak_bytes'] / 2**30:.2f} GiB  P(win) {r['p_win']:.6%}  "
                  f"{r['sweeps']} sweeps", flush=True)
    if args.json:
        cmd = "python benchmarks/bench_engine.py --only {}"
        print(json.dumps([{
            "what": f"Farkle {r['what']}",
            "figure": (f"failed: {r['error']}" if "error" in r else
                       f"{r['seconds']:.1f} s" + ("" if r["budget"] is None else
                                                  f" (budget {r['budget']} s)")
                       + f", CPU {r['cpu_seconds']:.1f} s"
                       + f", peak {r['peak_bytes'] / 2**30:.2f} GiB, P(win) {r['p_win']:.3%}"),
            "command": cmd.format(r["name"])} for r in rows]))


if __name__ == "__main__":
    main()
