"""Farkle simulation speed: games/s and ns per die, next to the random numbers alone.

    .venv/bin/python benchmarks/bench_farkle.py [--games N] [--threads T] [--repeat R]

For 1-seat and 2-seat threshold-300 games to 10,000 (default rules) it prints games/s,
dice rolled per game, wall-clock ns per die, and the cost of the random numbers alone:
a jitted loop drawing exactly as many ``roll_dice`` results of each dice count, over the
same chunks, seeds, batches and threads. Targets on a 2-core machine: >= 1,000,000
solitaire games/s, >= 500,000 two-seat games/s, game cost within 2x of the RNG cost.
The best of ``--repeat`` runs is reported (the machine may be shared).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from dicelab.farkle import kernels as K
from dicelab.farkle import simulate as fsim
from dicelab.registry import parse_policy
from dicelab.seeding import chunk_bounds, chunk_states


def rng_only_seconds(seed: int, games: int, rolls_n: np.ndarray) -> float:
    """Wall-clock of drawing ``rolls_n[n]`` rolls of n dice in the runner's layout."""
    bounds = chunk_bounds(games)
    n_chunks = len(bounds) - 1
    share = np.diff(bounds) / games
    per_chunk = np.zeros((n_chunks, 7), dtype=np.int64)
    for n in range(1, 7):
        per_chunk[:, n] = np.floor(share * rolls_n[n]).astype(np.int64)
        per_chunk[0, n] += rolls_n[n] - per_chunk[:, n].sum()  # exact total
    K.rng_cost(np.zeros((0, 4), np.uint64), np.zeros((0, 7), np.int64), np.zeros(0, np.int64))
    t0 = time.perf_counter()
    for lo in range(0, n_chunks, fsim.BATCH_CHUNKS):
        hi = min(lo + fsim.BATCH_CHUNKS, n_chunks)
        states = chunk_states(seed, lo, hi)
        out = np.zeros(hi - lo, dtype=np.int64)
        K.rng_cost(states, per_chunk[lo:hi], out)
    return time.perf_counter() - t0


def bench(seats: list[str], games: int, repeat: int) -> None:
    specs = [parse_policy(s) for s in seats]
    best = None
    for i in range(repeat):
        r = fsim.simulate_farkle(specs, games=games, seed=1000 + i)
        if best is None or r.elapsed_s < best.elapsed_s:
            best = r
    r = best
    rolls_n = np.zeros(7, dtype=np.int64)
    for s in range(len(seats)):
        rolls_n[1:] += r.stats[s, K.ST_ROLLS_N:K.ST_ROLLS_N + 6]
    dice_rolled = int((rolls_n * np.arange(7)).sum())
    rng_s = min(rng_only_seconds(r.seed, games, rolls_n) for _ in range(repeat))
    label = " vs ".join(seats)
    print(f"{len(seats)} seat(s), {label}, target {r.target}, {games:,} games, "
          f"{numba.get_num_threads()} threads")
    print(f"  games/s            {r.games_per_s:15,.0f}   ({r.elapsed_s:.3f} s)")
    print(f"  rolls per game     {rolls_n.sum() / games:15.2f}")
    print(f"  dice per game      {dice_rolled / games:15.2f}")
    print(f"  ns per die (game)  {1e9 * r.elapsed_s / dice_rolled:15.3f}   wall clock")
    print(f"  ns per die (RNG)   {1e9 * rng_s / dice_rolled:15.3f}   same draws, same layout")
    print(f"  game / RNG         {r.elapsed_s / rng_s:15.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=3_000_000)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)
    fsim.simulate_farkle([parse_policy("threshold-300")], games=10_000, seed=0)  # warm-up
    bench(["threshold-300"], args.games, args.repeat)
    bench(["threshold-300", "threshold-300"], args.games, args.repeat)


if __name__ == "__main__":
    main()
