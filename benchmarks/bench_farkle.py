"""Farkle simulation speed: games/s and ns per die, next to the random numbers alone.

    .venv/bin/python benchmarks/bench_farkle.py [--games N] [--threads T] [--repeat R]

For 1-seat and 2-seat threshold-300 games to 10,000 (default rules) it prints:

* games/s of ``simulate_farkle`` (what ``dicelab simulate`` runs: the lane kernel of
  :mod:`dicelab.farkle.lanes` for threshold seats) and of the general kernel of
  :mod:`dicelab.farkle.kernels` (which plays ``ai`` and exact-policy seats) on the same
  games, layout and threads;
* dice rolled per game and wall-clock ns per die;
* the cost of the random numbers alone: a jitted loop making exactly as many draws
  ``u < 6**n`` of each dice count, over the same chunks, seeds and threads, the way the
  lane kernel makes them (generator state in registers, no rank lookup);
* a *floor*: the lane kernel's draw loop, lane count and staggered halves, and a vector
  loop that only moves the turn points, the dice, the seat to play and the banked
  totals and counts finished games (no statistics, last round or round cap): what this
  design costs before the report's bookkeeping.

Targets on a 2-core machine: >= 1,000,000 solitaire games/s, >= 500,000 two-seat
games/s, game cost within 2x of the RNG cost. The best of ``--repeat`` runs is reported
(the machine may be shared).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from numba import njit, prange, uint64

from dicelab.farkle import kernels as K
from dicelab.farkle import lanes as LN
from dicelab.farkle import simulate as fsim
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.scoring import PRESETS, compile_table
from dicelab.registry import parse_policy
from dicelab.rng import below_s
from dicelab.seeding import chunk_bounds, chunk_states

TARGET = 10_000


@njit(inline="always")
def _floor_vec(S, uw, lo, hi, thr_t, target50):
    """The floor's vector loop over lanes ``lo .. hi - 1``; returns the games finished."""
    n_seats = len(thr_t)
    finished = np.int64(0)
    for j in range(uint64(lo), uint64(hi)):
        code = S[uw + j]
        pts = S[2 * uw + j] + (code >> LN._POINTS_SHIFT)
        if n_seats == 1:  # (a compile-time choice) pts: the points minus the threshold
            thr0 = np.int64(thr_t[0])
            om = -np.int64(pts >= 0)
            bank = (pts + thr0) & (np.int64(pts >= LN._BUSTED) - 1) & om
            total = S[4 * uw + j] + bank
            won = -np.int64(total >= target50)
            S[4 * uw + j] = total & ~won
            fresh = -thr0
        else:
            # the seat's threshold by masks (vector code)
            seat = S[3 * uw + j]
            thr_cur = np.int64(thr_t[0])
            for q in range(1, n_seats):
                sel = -np.int64(seat == q)
                thr_cur = (thr_t[q] & sel) | (thr_cur & ~sel)
            om = -np.int64(pts >= thr_cur)
            bank = pts & (np.int64(pts >= LN._BUSTED) - 1) & om
            won = np.int64(0)
            for q in range(n_seats):
                m = -np.int64(seat == q)
                total = S[(4 + q) * uw + j] + (bank & m)
                won |= m & -np.int64(total >= target50)
                S[(4 + q) * uw + j] = total
            for q in range(n_seats):
                S[(4 + q) * uw + j] &= ~won
            nxt = seat - om
            S[3 * uw + j] = nxt & -np.int64(nxt < n_seats) & ~won
            fresh = np.int64(0)
        finished -= won
        S[2 * uw + j] = (fresh & om) | (pts & ~om)
        x = code & LN._SHIFT_MASK
        S[j] = x + ((LN._SIX - x) & om)
    return finished


@njit(cache=True)
def _floor_chunk(st, n_games, thr_t, target, out):
    """One chunk of the floor (generator ``st``); returns its rolls."""
    n_seats = len(thr_t)
    w = LN.lanes_for(n_seats)
    uw = uint64(w)
    h = w // 2
    target50 = target // 50
    s0, s1, s2, s3 = st[0], st[1], st[2], st[3]
    n_lanes = min(w, n_games)
    # columns: dice (as field shifts), outcome code, turn points, seat, then the seats'
    # totals (unused columns never bank)
    S = np.zeros((4 + n_seats) * w, dtype=np.int64)
    for j in range(uw):
        S[j] = LN._SIX
        S[uw + j] = LN._SIX
        S[2 * uw + j] = -thr_t[0] if n_seats == 1 else 0
    done = 0
    rolls = 0
    while done < n_games:
        for lane in range(min(h, n_lanes)):
            j = uint64(lane)
            bound = LN._POW6U[uint64(S[j])]
            u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
            S[uw + j] = out[bound + uint64(u)]
        if rolls > 0:
            done += _floor_vec(S, uw, h, w, thr_t, target50)
        for lane in range(h, n_lanes):
            j = uint64(lane)
            bound = LN._POW6U[uint64(S[j])]
            u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
            S[uw + j] = out[bound + uint64(u)]
        done += _floor_vec(S, uw, 0, h, thr_t, target50)
        rolls += n_lanes
    return rolls


@njit(cache=True, parallel=True)
def floor_kernel(states, bounds, thr_t, target, out, rolls_out):
    """Threshold games in lanes, with nothing but draw, lookup, decision and turn order.

    The lane kernel's draw loop, lane count and staggered halves, and a vector loop that
    only moves each lane's turn points, dice, seat and banked totals and counts finished
    games (a game ends when a seat banks to the target): no statistics, last round or
    round cap. Same outcome codes, same column layout. ``thr_t``: the seats' thresholds
    in units of 50 (a tuple: its length, the seat count, is compiled in); ``target`` in
    points.
    """
    for c in prange(states.shape[0]):
        rolls_out[c] = _floor_chunk(states[c].copy(), bounds[c + 1] - bounds[c], thr_t,
                                    target, out)


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


def _batches(games: int):
    bounds = chunk_bounds(games)
    n_chunks = len(bounds) - 1
    for lo in range(0, n_chunks, fsim.BATCH_CHUNKS):
        hi = min(lo + fsim.BATCH_CHUNKS, n_chunks)
        yield lo, hi, bounds[lo:hi + 1]


def general_kernel_seconds(seats: list[str], seed: int, games: int) -> float:
    """Wall-clock of the general kernel on the same games' layout (its own draws)."""
    table = PRESETS["default"]
    sa = seat_arrays([parse_policy(s) for s in seats], table, TARGET)
    arrays = fsim.scoring_arrays(compile_table(table))
    s = len(seats)
    n_bins = (TARGET + fsim.HIST_HEADROOM) // 50 + 1
    t0 = time.perf_counter()
    for lo, hi, b in _batches(games):
        m = hi - lo
        K.run_chunks(chunk_states(seed, lo, hi), b, s, -1, TARGET, *sa.kernel_args(), *arrays,
                     np.zeros((m, s, K.N_STATS), np.int64), np.zeros((m, s, n_bins), np.int64),
                     np.zeros((m, K.N_CHUNK_COUNTERS), np.int64))
    return time.perf_counter() - t0


def floor_seconds(seed: int, games: int, n_seats: int) -> tuple[float, int]:
    """(wall-clock, rolls) of the floor kernel for ``n_seats`` threshold-300 seats."""
    _, max_keep, all_score = fsim.scoring_arrays(compile_table(PRESETS["default"]))
    out = LN.outcome_table(max_keep, all_score)
    rolls = 0
    t0 = time.perf_counter()
    for lo, hi, b in _batches(games):
        r = np.zeros(hi - lo, dtype=np.int64)
        floor_kernel(chunk_states(seed, lo, hi), b, (300 // 50,) * n_seats, TARGET, out, r)
        rolls += int(r.sum())
    return time.perf_counter() - t0, rolls


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
    rolls = int(rolls_n.sum())
    dice_rolled = int((rolls_n * np.arange(7)).sum())
    rng_s = min(rng_only_seconds(r.seed, games, rolls_n) for _ in range(repeat))
    general_kernel_seconds(seats, r.seed, fsim.CHUNK_GAMES)  # compile / load
    gen_s = min(general_kernel_seconds(seats, r.seed, games) for _ in range(repeat))
    label = " vs ".join(seats)
    print(f"{len(seats)} seat(s), {label}, target {r.target}, {games:,} games, "
          f"{numba.get_num_threads()} threads")
    print(f"  games/s            {r.games_per_s:15,.0f}   ({r.elapsed_s:.3f} s, "
          f"kernel: {r.manifest().get('kernel', '?')})")
    print(f"  games/s, general   {games / gen_s:15,.0f}   ({gen_s:.3f} s, the kernel of ai "
          f"and exact-policy seats)")
    print(f"  rolls per game     {rolls / games:15.2f}")
    print(f"  dice per game      {dice_rolled / games:15.2f}")
    print(f"  ns per die (game)  {1e9 * r.elapsed_s / dice_rolled:15.3f}   wall clock")
    print(f"  ns per die (RNG)   {1e9 * rng_s / dice_rolled:15.3f}   same draws, same layout")
    print(f"  game / RNG         {r.elapsed_s / rng_s:15.2f}x")
    floor_seconds(r.seed, 1000, len(seats))  # compile / load
    fl_s, fl_rolls = min(floor_seconds(r.seed, games, len(seats)) for _ in range(repeat))
    per_roll_rng = rng_s / rolls
    print(f"  floor / RNG        {fl_s / fl_rolls / per_roll_rng:15.2f}x   draw + lookup + "
          f"bank decision + turn order only, per roll ({1e9 * fl_s / fl_rolls:.2f} ns per "
          f"roll against {1e9 * per_roll_rng:.2f})")


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
