"""Farkle simulation speed: games/s and ns per die, next to the random numbers alone.

    .venv/bin/python benchmarks/bench_farkle.py [--games N] [--threads T] [--repeat R] [--json]

For 1-seat and 2-seat threshold-300 games to 10,000 (default rules) it measures:

* games/s of ``simulate_farkle`` (what ``dicelab simulate`` runs: the lanes kernel of
  :mod:`dicelab.farkle.lanes` for threshold seats), and of the general kernel of
  :mod:`dicelab.farkle.kernels` (which plays ``ai`` and exact-policy seats) for ``ai``
  games, with the same chunk layout and threads;
* wall-clock ns per die rolled, beside the cost of the random numbers alone: a jitted
  loop making exactly as many draws ``u < 6**n`` of each dice count, over the same
  chunks, seeds and threads, the way the lanes kernel makes them.

Targets on a 2-core machine: >= 1,000,000 solitaire games/s, >= 500,000 two-seat games/s,
game cost within 2x of the random-number cost. The best of ``--repeat`` runs is reported
(the machine may be shared).
"""

from __future__ import annotations

import json
import time

import benchopts
import numba
import numpy as np
from numba import njit, prange

from dicelab.config import BATCH_CHUNKS
from dicelab.dice import POW6
from dicelab.farkle import kernels as K
from dicelab.farkle import simulate as fsim
from dicelab.registry import parse_policy
from dicelab.rng import below_s
from dicelab.seeding import chunk_bounds, chunk_states

_POW6U = POW6.astype(np.uint64)


@njit(cache=True, parallel=True)
def rng_cost(states, rolls_per_chunk, out):
    """Random numbers alone: chunk ``c`` draws ``rolls_per_chunk[c, n]`` rolls of ``n``
    dice, each one unbiased ``u < 6**n``, state in registers; ``out[c]`` gets the sum of
    the draws so they cannot be optimised away."""
    for c in prange(states.shape[0]):
        s0, s1, s2, s3 = states[c, 0], states[c, 1], states[c, 2], states[c, 3]
        acc = np.int64(0)
        for n in range(1, 7):
            bound = _POW6U[n]
            for _ in range(rolls_per_chunk[c, n]):
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                acc += u
        out[c] = acc


def rng_only_seconds(seed: int, games: int, rolls_n: np.ndarray) -> float:
    """Wall-clock of drawing ``rolls_n[n]`` rolls of n dice in the runner's layout."""
    bounds = chunk_bounds(games)
    n_chunks = len(bounds) - 1
    share = np.diff(bounds) / games
    per_chunk = np.zeros((n_chunks, 7), dtype=np.int64)
    for n in range(1, 7):
        per_chunk[:, n] = np.floor(share * rolls_n[n]).astype(np.int64)
        per_chunk[0, n] += rolls_n[n] - per_chunk[:, n].sum()  # exact total
    rng_cost(np.zeros((0, 4), np.uint64), np.zeros((0, 7), np.int64), np.zeros(0, np.int64))
    t0 = time.perf_counter()
    for lo in range(0, n_chunks, BATCH_CHUNKS):
        hi = min(lo + BATCH_CHUNKS, n_chunks)
        rng_cost(chunk_states(seed, lo, hi), per_chunk[lo:hi], np.zeros(hi - lo, np.int64))
    return time.perf_counter() - t0


def best_run(seats: list[str], games: int, repeat: int) -> fsim.FarkleResult:
    specs = [parse_policy(s) for s in seats]
    runs = [fsim.simulate_farkle(specs, games=games, seed=1000 + i) for i in range(repeat)]
    return min(runs, key=lambda r: r.elapsed_s)


def bench(seats: list[str], games: int, repeat: int) -> list[dict]:
    r = best_run(seats, games, repeat)
    rolls_n = np.zeros(7, dtype=np.int64)
    for s in range(len(seats)):
        rolls_n[1:] += r.stats[s, K.ST_ROLLS_N:K.ST_ROLLS_N + 6]
    dice_rolled = int((rolls_n * np.arange(7)).sum())
    rng_s = min(rng_only_seconds(r.seed, games, rolls_n) for _ in range(repeat))
    general = best_run(["ai", *seats[1:]], games, repeat)
    label = f"threshold-300, {'solitaire' if len(seats) == 1 else f'{len(seats)} seats'}"
    threads = numba.get_num_threads()
    cmd = "python benchmarks/bench_farkle.py"
    return [
        {"what": f"Farkle {label}, to 10,000", "figure": f"{r.games_per_s / 1e6:.2f} M games/s "
         f"({r.kernel} kernel, {threads} threads)", "command": cmd},
        {"what": f"Farkle {label}: ns per die rolled / random numbers alone",
         "figure": f"{1e9 * r.elapsed_s / dice_rolled:.3f} / {1e9 * rng_s / dice_rolled:.3f} "
                   f"ns ({r.elapsed_s / rng_s:.2f}x)", "command": cmd},
        {"what": f"Farkle {' vs '.join(['ai', *seats[1:]])} (general kernel)",
         "figure": f"{general.games_per_s / 1e6:.2f} M games/s", "command": cmd},
    ]


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(), default=3_000_000)
    ap.add_argument("--threads", type=benchopts.count(), default=None)
    ap.add_argument("--repeat", type=benchopts.count(), default=3)
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = ap.parse_args()
    if args.threads and args.threads > numba.config.NUMBA_NUM_THREADS:
        ap.error(f"argument --threads: at most {numba.config.NUMBA_NUM_THREADS} here, not "
                 f"{args.threads}")
    if args.threads:
        numba.set_num_threads(args.threads)
    for seats in (["threshold-300"], ["ai"]):  # warm-up: compile or load the kernels
        fsim.simulate_farkle([parse_policy(s) for s in seats], games=10_000, seed=0)
    rows = bench(["threshold-300"], args.games, args.repeat)
    rows += bench(["threshold-300", "threshold-300"], args.games, args.repeat)
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']:<70} {row['figure']}")


if __name__ == "__main__":
    main()
