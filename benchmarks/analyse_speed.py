"""Speed of game analysis (``dicelab analyse``): one 13-turn Penta game once the tables
are loaded, and a log of 100,000 Penta games read, replayed and analysed.

    python benchmarks/analyse_speed.py [--games 100000]

The games are played by a random player (random keeps, a random open box) so every
decision is analysed; ``--distinct`` different games (10,000) are repeated to fill the
big log (repeats share the analysis kernel's work only within a block of turns of the
same state, so they cost almost as much as new games).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np


def random_games(n: int, seed: int) -> list:
    from dicelab.gamelog import new_game_header
    from dicelab.penta.rules import BOX_NAMES

    rng = np.random.default_rng(seed)
    header = new_game_header("penta", "seed", [{"name": "r", "policy": "random"}])
    out = []
    for _ in range(n):
        open_boxes = list(BOX_NAMES)
        events = []
        for _ in range(13):
            roll = sorted(int(x) for x in rng.integers(1, 7, 5))
            rolls, keeps = [roll], []
            for _ in range(int(rng.integers(0, 3))):
                keep = sorted(d for d in roll if rng.random() < 0.5)
                keeps.append(keep)
                roll = sorted(keep + [int(x) for x in rng.integers(1, 7, 5 - len(keep))])
                rolls.append(roll)
            # the forced joker may refuse a box: let the reader say which one is allowed
            box = open_boxes.pop(int(rng.integers(len(open_boxes))))
            events.append({"seat": 0, "rolls": rolls, "keeps": keeps, "box": box})
        out.append((dict(header), events))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--distinct", type=int, default=10_000)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="dicelab-analyse-bench-"))
    os.environ.setdefault("DICELAB_CACHE_DIR", str(scratch / "cache"))
    try:
        from dicelab.analyse import analyse_games
        from dicelab.errors import UserError
        from dicelab.gamelog import format_games, parse_lines, read_games
        from dicelab.penta.solver import solve

        t0 = time.perf_counter()
        solve(None)
        print(f"tables (solve or load): {time.perf_counter() - t0:.2f} s")
        games = []
        for h, ev in random_games(args.distinct * 6 // 5 + 10, seed=1):
            try:  # drop the few games the forced joker makes illegal
                parse_lines(format_games([(h, ev)]).splitlines())
                games.append((h, ev))
            except UserError:
                pass
            if len(games) == args.distinct:
                break
        one = parse_lines(format_games(games[:1]).splitlines())
        analyse_games(one)  # compile
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            analyse_games(one)
            times.append(time.perf_counter() - t0)
        print(f"one 13-turn game analysed: median {1e3 * np.median(times):.2f} ms, "
              f"best {1e3 * min(times):.2f} ms (tables loaded)")
        block = format_games(games)
        path = scratch / "games.jsonl"
        with open(path, "w") as fh:
            reps = -(-args.games // len(games))
            for _ in range(reps):
                fh.write(block)
        n_games = reps * len(games)
        print(f"log: {n_games:,} games, {path.stat().st_size / 1e6:.0f} MB")
        t0 = time.perf_counter()
        recs = read_games(path)
        t1 = time.perf_counter()
        res = analyse_games(recs)
        t2 = time.perf_counter()
        print(f"{n_games:,} games: read and replayed in {t1 - t0:.1f} s, analysed in "
              f"{t2 - t1:.1f} s, total {t2 - t0:.1f} s ({len(res.decisions):,} decisions)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
