"""Farkle: instructions per roll (callgrind) of the game, the floor and the random numbers.

    .venv/bin/python benchmarks/farkle_instructions.py [--small 16384] [--large 147456]

Seconds on a shared or virtual machine move by 10% from run to run; instruction counts
move less, but not by nothing: a few instructions per roll between runs of the same code
(more with other valgrind runs on the same cores: run it alone). For solitaire
threshold-300 games to 10,000 on one thread this runs, under
``valgrind --tool=callgrind``, the same three things ``bench_farkle.py`` times:

* ``game``: the lane kernel (what ``dicelab simulate`` runs for threshold seats);
* ``floor``: ``bench_farkle.floor_kernel`` (draw, outcome lookup, bank decision only);
* ``rng``: ``kernels.rng_cost``, the same draws with no game logic;

each for ``--small`` and ``--large`` games, and prints (instructions of the large run -
instructions of the small run) / (rolls of the large run - rolls of the small run), so
start-up and compilation cancel out. Needs valgrind; slow (about 5 minutes per run on a
2-core machine, 7 runs including a warm-up that fills numba's cache for valgrind's CPU).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dicelab.seeding import CHUNK_GAMES

MODES = ("rng", "floor", "game")
SEED = 3


def child(mode: str, games: int) -> None:
    """Run one mode for ``games`` games on one thread; print the rolls made."""
    import numba
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_farkle as B

    from dicelab.farkle import kernels as K
    from dicelab.farkle import simulate as fsim
    from dicelab.registry import parse_policy

    numba.set_num_threads(1)
    seats = [parse_policy("threshold-300")]

    def rolls_by_n(g: int) -> np.ndarray:
        r = fsim.simulate_farkle(seats, games=g, seed=SEED)
        out = np.zeros(7, dtype=np.int64)
        out[1:] = r.stats[0, K.ST_ROLLS_N:K.ST_ROLLS_N + 6]
        return out

    # compile or load every kernel and every multi-chunk code path in both runs, so that
    # only the measured work differs
    warm = 2 * fsim.CHUNK_GAMES
    per_warm = rolls_by_n(warm)
    B.floor_seconds(SEED, warm, 1)
    B.rng_only_seconds(SEED, warm, per_warm)
    if mode == "game":
        rolls = int(rolls_by_n(games).sum())
    elif mode == "floor":
        rolls = B.floor_seconds(SEED, games, 1)[1]
    else:
        draws = per_warm * games // warm
        B.rng_only_seconds(SEED, games, draws)
        rolls = int(draws.sum())
    print(f"ROLLS {rolls}")


def measure(mode: str, games: int, env: dict) -> tuple[int, int]:
    """(instructions, rolls) of one child run under callgrind."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--child", mode, str(games)],
        env=env, capture_output=True, text=True, errors="replace", check=True)
    instr = re.search(r"Collected : (\d+)", proc.stderr)
    rolls = re.search(r"ROLLS (\d+)", proc.stdout)
    if not instr or not rolls:
        raise SystemExit(f"could not read the counts of {mode} {games}:\n{proc.stderr[-2000:]}")
    return int(instr.group(1)), int(rolls.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=2 * 8192)
    ap.add_argument("--large", type=int, default=147_456)
    ap.add_argument("--child", nargs=2, metavar=("MODE", "GAMES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    if not 2 * CHUNK_GAMES <= args.small < args.large:
        raise SystemExit(f"error: need {2 * CHUNK_GAMES} <= --small < --large (runs of one "
                         "chunk take other code paths)")
    if shutil.which("valgrind") is None:
        raise SystemExit("error: valgrind is not installed")
    with tempfile.TemporaryDirectory(prefix="dicelab-callgrind-") as jit:
        # numba's cache keyed by valgrind's CPU; fixed hashing so both runs start alike
        env = {**os.environ, "NUMBA_CACHE_DIR": jit, "NUMBA_NUM_THREADS": "1",
               "PYTHONHASHSEED": "0"}
        measure("game", 100, env)  # warm-up: compiles everything for valgrind's CPU
        print("instructions per roll (callgrind, 1 thread, solitaire threshold-300):")
        for mode in MODES:
            i_small, r_small = measure(mode, args.small, env)
            i_large, r_large = measure(mode, args.large, env)
            print(f"  {mode:6s} {(i_large - i_small) / (r_large - r_small):8.1f}", flush=True)


if __name__ == "__main__":
    main()
