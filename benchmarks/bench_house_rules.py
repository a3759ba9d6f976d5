"""Benchmark: the Farkle solvers under the default rules and under the house rules.

Times, best of ``--repeat`` runs with kernels compiled: ``max-ev``, ``fastest`` to
``--target`` and ``optimal-win`` to ``--two-player-target``, for the default table and
for the default table with each house rule the solvers model (a minimum to bank of 300,
hot dice must-roll), plus the exact head to head of ``ai`` against ``threshold-300``,
and that head to head under the ``facebook`` preset (the farkle penalty) to ``--target``.
``--facebook-target T``: also the ``facebook`` preset's ``optimal-win`` solve to ``T``
(the farkle penalty; once, with its peak memory), checked against the published first
player's 53.487% at 10,000 (M. Busche's analysis of Facebook Farkle); with
``--facebook-response P`` instead the best response to ``P`` (``optimal-win:vs=P``).
``--head-to-head``: only the exact head-to-head jobs. The cache is bypassed. Run it from
two checkouts to compare them (no slowdown of the default rules):
``PYTHONPATH=OTHER/src .venv/bin/python benchmarks/bench_house_rules.py``.

    .venv/bin/python benchmarks/bench_house_rules.py
    .venv/bin/python benchmarks/bench_house_rules.py --two-player-target 5000 --json
    .venv/bin/python benchmarks/bench_house_rules.py --default-only --repeat 1 \
        --facebook-target 10000
    .venv/bin/python benchmarks/bench_house_rules.py --facebook-only --json  # make bench
    .venv/bin/python benchmarks/bench_house_rules.py --facebook-only \
        --facebook-response threshold-300 --json  # make bench
    .venv/bin/python benchmarks/bench_house_rules.py --head-to-head --repeat 1 --json  # make bench

``--json`` prints one JSON list of ``{"what", "figure", "command"}`` rows (the table of
``benchmarks/run_all.py``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import tempfile
import time

import benchopts


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=benchopts.count(), default=10_000)
    ap.add_argument("--two-player-target", type=benchopts.count(), default=3000)
    ap.add_argument("--repeat", type=benchopts.count(), default=3)
    ap.add_argument("--default-only", action="store_true",
                    help="only the default rules (what an older checkout can run)")
    ap.add_argument("--facebook-target", type=benchopts.count(), default=0,
                    help="also solve optimal-win under the facebook preset to this target")
    ap.add_argument("--facebook-only", action="store_true",
                    help="only the facebook solve (to --facebook-target, default 10000)")
    ap.add_argument("--facebook-response", default=None, metavar="POLICY",
                    help="the facebook solve is the best response to POLICY instead")
    ap.add_argument("--head-to-head", action="store_true",
                    help="only the exact head to head of ai against threshold-300")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.facebook_only and (args.head_to_head or args.default_only):
        ap.error("--facebook-only measures the facebook solve alone: not with "
                 + ("--head-to-head" if args.head_to_head else "--default-only"))
    if args.facebook_response is not None:
        if not (args.facebook_only or args.facebook_target):
            ap.error("--facebook-response names the opponent of the facebook solve: give "
                     "--facebook-only or --facebook-target")
        from dicelab.errors import UserError
        from dicelab.registry import parse_policy

        try:
            parse_policy(args.facebook_response, "farkle")
        except UserError as exc:
            ap.error(f"--facebook-response: {exc}")
    scratch = tempfile.mkdtemp(prefix="dicelab-bench-")
    os.environ["DICELAB_CACHE_DIR"] = scratch
    try:
        from dicelab.farkle import solitaire
        from dicelab.farkle.exact import exact_pair, solve_best_response, solve_optimal_win
        from dicelab.farkle.rules import PRESETS

        default = PRESETS["default"]
        variants = {} if args.facebook_only else {"default": default}
        if args.facebook_only:
            args.facebook_target = args.facebook_target or 10_000
        if not args.default_only and not args.facebook_only:
            variants["min-bank-300"] = dataclasses.replace(default, name="mb", min_bank=300)
            variants["must-roll"] = dataclasses.replace(default, name="mr",
                                                        hot_dice="must-roll")
        tp = args.two_player_target
        rows = []
        for name, rules in variants.items():
            jobs = {
                "max-ev": lambda r=rules: solitaire.solve_max_ev(r),
                f"fastest {args.target}": lambda r=rules: solitaire.solve_fastest(r, args.target),
                f"optimal-win {tp}": lambda r=rules: solve_optimal_win(r, tp, use_cache=False),
                f"exact ai vs threshold-300 {tp}": lambda r=rules: exact_pair(
                    "ai", "threshold-300", rules=r, target=tp, use_cache=False),
            }
            if name == "default" and not args.default_only:
                jobs[f"exact ai vs threshold-300 {args.target} (facebook)"] = lambda: exact_pair(
                    "ai", "threshold-300", rules=PRESETS["facebook"], target=args.target,
                    use_cache=False)
            if args.head_to_head:
                jobs = {job: fn for job, fn in jobs.items() if job.startswith("exact ")}
            for job, fn in jobs.items():
                fn()  # compile or load the kernels
                rows.append({"rules": name, "job": job, "seconds": _best(fn, args.repeat)})
                if not args.json:
                    print(f"{name:14s} {job:34s} {rows[-1]['seconds']:8.3f} s", flush=True)
        if args.facebook_target:
            t0 = time.perf_counter()
            fb, ft, vs = PRESETS["facebook"], args.facebook_target, args.facebook_response
            sol = solve_optimal_win(fb, ft, use_cache=False) if vs is None else \
                solve_best_response(fb, ft, vs, use_cache=False)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
            rows.append({"rules": "facebook", "job": f"{sol.policy} {args.facebook_target}",
                         "seconds": time.perf_counter() - t0, "peak_gib": peak,
                         "p_win": sol.first_outcome.win, "states": sol.states,
                         "sweeps": sol.sweeps,
                         "tolerance": sol.tolerance})
            if not args.json:
                r = rows[-1]
                print(f"facebook       {sol.policy} {args.facebook_target:<22d} "
                      f"{r['seconds']:8.1f} s  peak {peak:.2f} GiB  P(win) {r['p_win']:.3%} "
                      f"({sol.states:,} states, {sol.sweeps} sweeps)", flush=True)
            p_win = sol.first_outcome.win
            if vs is None and ft == 10_000 and f"{p_win:.3%}" != "53.487%":
                raise SystemExit(f"facebook P(win) {p_win:.6%} is not the published 53.487%")
        if args.json:
            print(json.dumps([_table_row(r, args) for r in rows]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _table_row(r: dict, args) -> dict:
    """A row in the form of ``benchmarks/run_all.py``'s table."""
    if r["rules"] == "facebook":
        return {"what": f"Farkle {r['job'].split()[0]} solve, rules facebook (farkle "
                        f"penalty), target {args.facebook_target:,}",
                "figure": f"{r['seconds']:.0f} s, peak {r['peak_gib']:.2f} GiB, P(win) "
                          f"{r['p_win']:.3%} ({r['sweeps']} sweeps)",
                "command": "python benchmarks/bench_house_rules.py --facebook-only" + (
                    f" --facebook-response {args.facebook_response}"
                    if args.facebook_response else "")}
    if r["job"].startswith("exact "):  # "exact A vs B TARGET" or "... TARGET (facebook)"
        words = r["job"].split()
        rules = "facebook (farkle penalty)" if words[-1] == "(facebook)" else r["rules"]
        return {"what": f"Farkle exact head to head {' '.join(words[1:4])}, rules {rules}, "
                        f"target {int(words[4]):,} (kernels compiled)",
                "figure": f"{r['seconds']:.3f} s",
                "command": "python benchmarks/bench_house_rules.py" + (
                    " --head-to-head" if args.head_to_head else "")}
    return {"what": f"Farkle {r['job']}, rules {r['rules']}",
            "figure": f"{r['seconds']:.3f} s",
            "command": "python benchmarks/bench_house_rules.py"}


if __name__ == "__main__":
    main()
