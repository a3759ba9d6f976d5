"""Farkle games played by the referee in Python and tallied as the kernel tallies them
(layer 2), for policies the simulation kernels cannot play: a user's object that only
decides move by move (``decide(state) -> Move``, no ``table``).

:func:`play_python` plays ``games`` games with :func:`dicelab.farkle.referee.play_game`
and sums each seat's statistics into the kernel's arrays (``stats`` (seats,
``kernels.N_STATS``), ``hist``, ``counters``), so the same result object reports them
(:func:`dicelab.farkle.simulate.simulate_python`). Seeding follows the kernels' chunks:
chunk ``c`` (:data:`~dicelab.config.CHUNK_GAMES` games) draws its dice from
``default_rng(SeedSequence(seed, spawn_key=(c,)))``, so a seed gives the same games on
every run; they are not the kernels' games (another generator). With
``STREAM_PER_TURN`` every turn has its own stream, keyed by (game, place in the turn
order, the seat's turn number), as the kernels key theirs: common random numbers for
tournaments.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dicelab.config import CHUNK_GAMES
from dicelab.farkle import kernels as K
from dicelab.farkle.referee import GeneratorDice, Referee, play_game
from dicelab.farkle.rules import FarkleRules
from dicelab.seeding import chunk_bounds, n_chunks

#: Games between two progress ticks.
PROGRESS_GAMES = 500
#: The first word of a per-turn stream's spawn key (chunks' keys are one word).
TURN_STREAM = 2**31 - 2

_book_seat = K.book_seat.py_func  # the kernel's booking of a seat's game, as plain Python


class TurnDice:
    """Dice with a stream per turn (``begin_turn``): the referee calls it as each turn
    starts, with the seat's place in the turn order and its turns so far."""

    def __init__(self, seed: int, game: int) -> None:
        self.seed, self.game = seed, game
        self._dice: GeneratorDice | None = None

    def begin_turn(self, place: int, turn: int) -> None:
        ss = np.random.SeedSequence(self.seed, spawn_key=(TURN_STREAM, self.game, place, turn))
        self._dice = GeneratorDice(np.random.default_rng(ss))

    def roll(self, n: int) -> list[int]:
        return self._dice.roll(n)


def play_python(policies: list, rules: FarkleRules, target: int, seed: int, games: int,
                n_bins: int, *, first_seat: int | None = None,
                streams: int = K.STREAM_PER_CHUNK, per_chunk: bool = False,
                progress: Callable[[int, int], None] | None = None,
                chunks: tuple[int, int] | None = None, chunk_games: int = CHUNK_GAMES
                ) -> dict[str, np.ndarray]:
    """The referee games of ``policies`` (one Policy per seat) in chunks ``chunks =
    (first, stop)`` of a run of ``games`` (default: all), tallied: ``stats``, ``hist``
    (``n_bins`` bins of 50 points), ``counters``, and with ``per_chunk`` ``chunk_stats``
    (chunks, seats, N_STATS)."""
    s_n = len(policies)
    stats = np.zeros((s_n, K.N_STATS), dtype=np.int64)
    hist = np.zeros((s_n, n_bins), dtype=np.int64)
    counters = np.zeros(K.N_CHUNK_COUNTERS, dtype=np.int64)
    first_chunk, stop = chunks or (0, n_chunks(games, chunk_games))
    chunk_stats = np.zeros((stop - first_chunk if per_chunk else 0, s_n, K.N_STATS),
                           dtype=np.int64)
    bounds = chunk_bounds(games, first_chunk, stop, chunk_games)
    total = int(bounds[-1] - bounds[0])
    per_turn = streams == K.STREAM_PER_TURN
    done = 0
    for c in range(first_chunk, stop):
        before = stats.copy() if per_chunk else None
        dice = GeneratorDice(np.random.default_rng(np.random.SeedSequence(seed,
                                                                          spawn_key=(c,))))
        for i in range(int(bounds[c - first_chunk]), int(bounds[c - first_chunk + 1])):
            first = first_seat if first_seat is not None else i % s_n
            ref = Referee(s_n, rules=rules, target=target, first_seat=first,
                          dice=TurnDice(seed, i) if per_turn else dice)
            tally_game(play_game(ref, policies), stats, hist, counters)
            done += 1
            if progress is not None and done % PROGRESS_GAMES == 0:
                progress(done, total)
        if per_chunk:
            chunk_stats[c - first_chunk] = stats - before
    if progress is not None and done % PROGRESS_GAMES:
        progress(done, total)
    out = {"stats": stats, "hist": hist, "counters": counters}
    if per_chunk:
        out["chunk_stats"] = chunk_stats
    return out


def tally_game(ref: Referee, stats: np.ndarray, hist: np.ndarray, counters: np.ndarray
               ) -> None:
    """Book one finished game as the kernel's ``_run_chunk`` books it."""
    totals, n = ref.totals, ref.n
    counters[K.C_GAMES] += 1
    if ref.capped:
        counters[K.C_CAPPED] += 1
    elif ref.trigger is not None:
        stats[ref.trigger, K.ST_TRIGGERS] += 1
    top = max(totals)
    n_top = totals.count(top)
    for s in range(n):
        ahead = 0
        for q in range(n):
            ahead += totals[q] > totals[s]
            stats[s, K.ST_BEAT + q] += totals[s] > totals[q]
        for m in range(1, 7):
            stats[s, K.ST_ROLLS_N + m - 1] += ref.rolls_by_dice[s][m]
            stats[s, K.ST_BUSTS_N + m - 1] += ref.busts_by_dice[s][m]
        _book_seat(stats, hist, s, totals[s], top, n_top, ahead, ref.n_turns[s],
                   ref.n_rolls[s], ref.n_busts[s], ref.n_hot[s])


__all__ = ["PROGRESS_GAMES", "TURN_STREAM", "TurnDice", "play_python", "tally_game"]
