"""Speed of game analysis (``dicelab analyse``): one 13-turn Penta game once the tables
are loaded, and a log of 100,000 Penta games read, replayed and analysed.

    python benchmarks/analyse_speed.py [--games 100000] [--repeats 3] [--json]

The games are played by a random player (random keeps, a random open box) so every
decision is analysed; ``--distinct`` different games (10,000) are repeated to fill the
big log (repeats share the analysis kernel's work only within a block of turns of the
same state, so they cost almost as much as new games). Times are wall-clock medians of
the repeats, with the process's CPU time beside them (less sensitive to other work on a
shared machine). ``--json`` prints one JSON list of rows for ``benchmarks/run_all.py``
(the figures of docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import benchopts
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


def _timed(f, n: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds of ``n`` calls of ``f``."""
    wall, cpu = [], []
    for _ in range(n):
        t, c = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return float(np.median(wall)), float(np.median(cpu))


def main() -> None:
    ap = benchopts.Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=benchopts.count(), default=100_000)
    ap.add_argument("--distinct", type=benchopts.count(), default=10_000)
    ap.add_argument("--repeats", type=benchopts.count(), default=3)
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = ap.parse_args()
    say = (lambda *_: None) if args.json else print
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="dicelab-analyse-bench-"))
    os.environ.setdefault("DICELAB_CACHE_DIR", str(scratch / "cache"))
    try:
        from dicelab.analyse import analyse_games
        from dicelab.errors import UserError
        from dicelab.gamelog import format_games, parse_lines, read_games
        from dicelab.penta.solver import solve

        t0 = time.perf_counter()
        solve(None)
        say(f"tables (solve or load): {time.perf_counter() - t0:.2f} s")
        games = []
        for h, ev in random_games(args.distinct * 6 // 5 + 10, seed=1):
            try:  # drop the few games the forced joker makes illegal
                parse_lines(format_games([(h, ev)]).splitlines())
                games.append((h, ev))
            except UserError:
                pass
            if len(games) == args.distinct:
                break
        one_lines = format_games(games[:1]).splitlines()
        one = parse_lines(one_lines)
        for _ in range(20):  # compile, and touch the value table's pages this game reads
            analyse_games(one)
        wall, cpu = _timed(lambda: analyse_games(one), 50)
        say(f"one 13-turn game analysed: median {1e3 * wall:.2f} ms (CPU {1e3 * cpu:.2f} ms), "
            "tables loaded")
        rows.append({"what": "Penta analysis: one 13-turn game, tables loaded (median of 50)",
                     "figure": f"{1e3 * wall:.2f} ms, {1e3 * cpu:.2f} ms CPU"})
        wall, cpu = _timed(lambda: analyse_games(parse_lines(one_lines)), 50)
        say(f"one 13-turn game read and analysed: median {1e3 * wall:.2f} ms "
            f"(CPU {1e3 * cpu:.2f} ms)")
        rows.append({"what": "Penta analysis: one 13-turn game read from its lines and "
                             "analysed (median of 50)",
                     "figure": f"{1e3 * wall:.2f} ms, {1e3 * cpu:.2f} ms CPU"})
        block = format_games(games)
        path = scratch / "games.jsonl"
        with open(path, "w") as fh:
            reps = -(-args.games // len(games))
            for _ in range(reps):
                fh.write(block)
        n_games = reps * len(games)
        say(f"log: {n_games:,} games, {path.stat().st_size / 1e6:.0f} MB")
        runs = []
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            recs = read_games(path)
            t1 = time.perf_counter()
            res = analyse_games(recs)
            t2, c2 = time.perf_counter(), time.process_time()
            runs.append((t1 - t0, t2 - t1, t2 - t0, c2 - c0))
            n_decisions = len(res.decisions)
            del recs, res
        read, analysed, total, cpu = np.median(np.array(runs), axis=0)
        say(f"{n_games:,} games ({n_decisions:,} decisions), median of "
            f"{args.repeats}: read and replayed {read:.1f} s, analysed {analysed:.1f} s, "
            f"total {total:.1f} s (CPU {cpu:.1f} s)")
        rows.append({"what": f"Penta analysis: {n_games:,} random games ({n_decisions:,} "
                             f"decisions), read and replayed / analysed / total (median of "
                             f"{args.repeats})",
                     "figure": f"{read:.1f} s / {analysed:.1f} s / {total:.1f} s, "
                               f"{cpu:.1f} s CPU"})
        if args.json:
            print(json.dumps(rows))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
