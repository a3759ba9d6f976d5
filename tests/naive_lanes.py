"""The threshold lanes kernel's runs, written out in plain Python: the definition of
which draws each game of a chunk gets, independent of the kernel's columns and masks.

A chunk plays its games in ``lanes`` lanes. Each pass, every lane (in lane order)
draws one roll from the chunk's one generator: a number ``u < 6**n`` whose base-6
digits are the faces. A lane's game is a plain-Python game (``all_scoring`` of
:mod:`naive_farkle`, bank at the threshold, the ending rule -- the last round, or the
first to bank the target wins at once -- and the round cap); when it ends, the lane
takes the chunk's next game (games are handed out in lane order), or,
when none is left, retires: it plays the turn that would have come next with that seat's
threshold, then turns of 50 points (solitaire: its threshold), and its draws go on
until the chunk's last game ends. Booked as the kernel books: per seat wins, ties,
points, turns, rolls, busts, hot dice, triggers, rolls and busts by dice count, the seats
that finished ahead of it and the seats it finished ahead of.
"""

from __future__ import annotations

from collections import Counter

import naive_farkle as nf
from naive_rng import Xoshiro


def _turn(t, threshold: int, log: dict | None):
    """One turn of ``threshold``, as a generator: yields dice counts, receives faces;
    returns the points banked (0 for a bust)."""
    n, points = 6, 0
    while True:
        faces = yield n
        kept, score = nf.all_scoring(t, faces)
        if log is not None:
            log["rolls"] += 1
            log["rolls_n"][n] += 1
        if kept == 0:
            if log is not None:
                log["busts"] += 1
                log["busts_n"][n] += 1
            return 0
        points += score
        n = 6 if kept == n else n - kept
        if log is not None and n == 6:
            log["hot"] += 1
        if points >= threshold:
            return points


def _game(t, thresholds, first: int, target: int, max_rounds: int, ending: str,
          result: dict):
    """A whole game as a generator; fills ``result`` (totals, logs, trigger, capped)."""
    n_seats = len(thresholds)
    totals = [0] * n_seats
    logs = [{"turns": 0, "rolls": 0, "busts": 0, "hot": 0, "rolls_n": Counter(),
             "busts_n": Counter()} for _ in range(n_seats)]
    seat, played, trig, left = first, 0, None, 0
    while True:
        logs[seat]["turns"] += 1
        totals[seat] += yield from _turn(t, thresholds[seat], logs[seat])
        played += 1
        if trig is None and totals[seat] >= target:
            # every other seat plays once more, or none (the trigger has won)
            trig, left = seat, 0 if ending == "first-to-bank" else n_seats - 1
        elif trig is not None:
            left -= 1
        over = trig is not None and left == 0
        if over or played == max_rounds * n_seats:
            result.update(totals=totals, logs=logs, trig=trig if over else None,
                          capped=not over, next_seat=(seat + 1) % n_seats)
            return
        seat = (seat + 1) % n_seats


def _retired(t, thresholds, seat: int):
    """A lane with no game left: the turn it was given, then turns booked to nobody."""
    yield from _turn(t, thresholds[seat], None)
    after = thresholds[0] if len(thresholds) == 1 else 50
    while True:
        yield from _turn(t, after, None)


def play_chunk(t, thresholds, target: int, state, first_game: int, n_games: int,
               lanes: int, first_seat: int, max_rounds: int, ending: str = "last-round"
               ) -> dict:
    """Play one chunk's games; returns per seat sums and the games and capped games."""
    assert ending in ("last-round", "first-to-bank")
    n_seats = len(thresholds)
    rng = Xoshiro(state)
    sums = [Counter() for _ in range(n_seats)]
    games = {"games": 0, "capped": 0}
    started = 0

    def start(lane_results, lane):
        nonlocal started
        first = first_seat if first_seat >= 0 else (first_game + started) % n_seats
        started += 1
        lane_results[lane] = {}
        g = _game(t, thresholds, first, target, max_rounds, ending, lane_results[lane])
        return g, g.send(None)

    n_lanes = min(lanes, n_games)
    results: list[dict] = [{} for _ in range(n_lanes)]
    gens, want, active = [], [], [True] * n_lanes
    for lane in range(n_lanes):
        g, n = start(results, lane)
        gens.append(g)
        want.append(n)
    live = n_lanes
    while live:
        for lane in range(n_lanes):
            u = rng.below(6 ** want[lane])
            faces = tuple(u // 6**i % 6 + 1 for i in range(want[lane]))
            try:
                want[lane] = gens[lane].send(faces)
                continue
            except StopIteration:
                pass
            r = results[lane]
            if not active[lane]:
                raise AssertionError("a retired lane never ends")
            games["games"] += 1
            games["capped"] += r["capped"]
            top = max(r["totals"])
            n_top = r["totals"].count(top)
            for s, (total, log) in enumerate(zip(r["totals"], r["logs"], strict=True)):
                sums[s]["wins"] += total == top and n_top == 1
                sums[s]["ties"] += total == top and n_top > 1
                sums[s]["score"] += total
                sums[s]["triggers"] += r["trig"] == s
                ahead = sum(x > total for x in r["totals"])
                sums[s]["ahead"] += ahead
                sums[s]["ahead_sq"] += ahead**2
                for q, x in enumerate(r["totals"]):
                    sums[s][f"beat_{q}"] += total > x
                for key in ("turns", "rolls", "busts", "hot"):
                    sums[s][key] += log[key]
                for n in range(1, 7):
                    sums[s][f"rolls_{n}"] += log["rolls_n"][n]
                    sums[s][f"busts_{n}"] += log["busts_n"][n]
            if started < n_games:
                gens[lane], want[lane] = start(results, lane)
            else:
                active[lane] = False
                live -= 1
                gens[lane] = _retired(t, thresholds, r["next_seat"])
                want[lane] = gens[lane].send(None)
    return {"seats": sums, **games}
