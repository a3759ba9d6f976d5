"""Time another version of the lanes kernel beside the installed one, and check its games.

    .venv/bin/python benchmarks/compare_lanes.py OTHER.py [--games N] [--repeat R]
                                                 [--seats 1,2] [--threads T]

``OTHER.py`` is a copy of ``src/dicelab/farkle/lanes.py`` with a change to try. For
threshold-300 seats (each seat count of ``--seats``) it first checks that both versions
play the same games (stats, histogram and counters on a few chunks, with the lanes of
:func:`lanes_for` and with one lane), then times ``--repeat`` runs of each, alternating
(A B, B A, ...), on one thread by default: the steadiest setting on a shared machine.
It prints the best and the median games/s of each and the median ratio. Both versions
are imported the same way, from copies in a temporary folder (compiled afresh on each
run): the installed module beside a copy of itself imported from another folder timed
2-3% apart, while two copies imported alike time within about 1.5%.

Why a tool for this: the vector loop's machine code moves by a few percent with changes
that should not matter (even renaming local variables), more than the run-to-run noise
of one timing. A change is kept only if it wins side by side, in the same process.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

from dicelab.farkle import kernels as K
from dicelab.farkle import lanes as LN
from dicelab.farkle import simulate as fsim
from dicelab.farkle.scoring import PRESETS, compile_table
from dicelab.seeding import chunk_bounds, chunk_states

TARGET = 10_000


def load(path: Path, name: str, tmp: Path):
    """Import a copy of ``path`` as module ``name`` (numba caches it beside the copy)."""
    copy = tmp / f"{name}.py"
    shutil.copyfile(path, copy)
    spec = importlib.util.spec_from_file_location(name, copy)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def play(mod, seats: int, games: int, seed: int, n_lanes: int | None = None):
    """(stats, hist, counters, seconds) of ``games`` threshold-300 games."""
    _, max_keep, all_score = fsim.scoring_arrays(compile_table(PRESETS["default"]))
    out = mod.outcome_table(max_keep, all_score)
    bounds = chunk_bounds(games)
    n_chunks = len(bounds) - 1
    states = chunk_states(seed, 0, n_chunks)
    bins = (TARGET + fsim.HIST_HEADROOM) // 50 + 1
    acc = (np.zeros((n_chunks, seats, K.N_STATS), np.int64),
           np.zeros((n_chunks, seats, bins), np.int64),
           np.zeros((n_chunks, K.N_CHUNK_COUNTERS), np.int64))
    lanes = mod.lanes_for(seats) if n_lanes is None else n_lanes
    t0 = time.perf_counter()
    mod.run_chunks(states, bounds, seats, -1, TARGET, np.full(seats, 300, np.int64), out,
                   lanes, *acc)
    return (*acc, time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path)
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--seats", default="1,2")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if not args.other.is_file():
        raise SystemExit(f"error: {args.other} is not a file")
    numba.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="dicelab-compare-") as tmp:
        # both versions imported the same way, each from a copy: an identical copy
        # imported differently from the installed module timed 2-3% apart
        installed = load(Path(LN.__file__), "lanes_installed", Path(tmp))
        other = load(args.other, "lanes_other", Path(tmp))
        compare(installed, other, args)


def compare(installed, other, args) -> None:
    """Check the games, then time both versions, for each seat count of ``--seats``."""
    for seats in (int(x) for x in args.seats.split(",")):
        for n_lanes in (None, 1):
            a = play(installed, seats, 3 * fsim.CHUNK_GAMES + 5, 7, n_lanes)
            b = play(other, seats, 3 * fsim.CHUNK_GAMES + 5, 7, n_lanes)
            same = all(np.array_equal(x, y) for x, y in zip(a[:3], b[:3], strict=True))
            print(f"{seats} seat(s), {'one lane' if n_lanes else 'default lanes'}: "
                  f"{'the same games' if same else 'OTHER GAMES'}")
        times: dict[str, list[float]] = {"installed": [], args.other.name: []}
        pair = [("installed", installed), (args.other.name, other)]
        for rep in range(args.repeat):
            for name, mod in pair if rep % 2 == 0 else pair[::-1]:
                times[name].append(play(mod, seats, args.games, 1)[3])
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(f"{seats} seat(s), {args.games:,} games, {args.threads} thread(s), "
              f"{args.repeat} runs each:")
        for name, v in times.items():
            print(f"  {name:24s} best {args.games / min(v) / 1e6:7.2f} M games/s, "
                  f"median {args.games / med[name] / 1e6:7.2f}")
        print(f"  median ratio {med['installed'] / med[args.other.name]:.3f} "
              f"(above 1: {args.other.name} is faster)")


if __name__ == "__main__":
    main()
