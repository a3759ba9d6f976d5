"""Games played move by move in Python and recorded as game logs (layer 2).

The jitted simulation kernels keep only sums, not decisions, so a log of simulated games
comes from this driver: the same named policies, decided in Python from the same
tables and rules, on dice from their own stream of the run's seed
(``SeedSequence(seed, spawn_key=(LOG_STREAM,))``, game ``i`` its own child). So
``dicelab simulate ... --seed S --log F --log-games N`` writes the same N games on
every run with seed S; they are not the first N games of the kernels' statistics, which
play other dice.

Policies: Penta ``optimal`` and ``greedy`` (the widget's decisions, ties as the decision
tables settle them), ``optimal:OBJECTIVE`` and ``penta-win`` (decided turn by turn as the
simulation kernel decides them: :class:`dicelab.penta.objective_play.OnlinePolicy`);
every Farkle policy, a user's too, played by the referee
(:mod:`dicelab.farkle.referee`) as the simulation kernels play it
(:func:`dicelab.farkle.builtin.as_policy`).

Penta games, a user's policy's too, are played by the referee
(:func:`dicelab.penta.referee.play_game`).

>>> games = play_games("penta", ["greedy"], games=1, seed=3)
>>> len(games[0][1]), games[0][0]["seed"]
(13, 3)
"""

from __future__ import annotations

import numpy as np

from dicelab.errors import UserError
from dicelab.gamelog import new_game_header
from dicelab.text import is_whole

#: The spawn key of the log's dice stream (the kernels' chunks use keys 0, 1, ...).
LOG_STREAM = 2**31 - 1
#: Most games a log may hold.
MAX_LOG_GAMES = 1_000_000
#: Games ``simulate --log`` writes without ``--log-games``.
DEFAULT_LOG_GAMES = 100


def _rngs(seed: int, games: int):
    root = np.random.SeedSequence(seed, spawn_key=(LOG_STREAM,))
    return [np.random.default_rng(s) for s in root.spawn(games)]


# --- Farkle --------------------------------------------------------------------------------


class _SortedDice:
    """A log's dice: each roll drawn from the game's generator, its faces sorted."""

    def __init__(self, rng) -> None:
        self.rng = rng

    def roll(self, n: int) -> list[int]:
        return sorted(int(x) for x in self.rng.integers(1, 7, n))


def _farkle_game(policies: list, rules, target: int, first: int, rng) -> list[dict]:
    """One game played by the referee: its turns in the game-log form."""
    from dicelab.farkle.referee import Referee, play_game

    ref = play_game(Referee(len(policies), rules=rules, target=target, dice=_SortedDice(rng),
                            first_seat=first), policies)
    if ref.capped:
        raise UserError(f"--log: a game of {', '.join(p.name for p in policies)} ran past "
                        "the simulation's caps (a turn of a million rolls, or 5,000 rounds)")
    return ref.turns


# --- entry points ----------------------------------------------------------------------------


def play_games(game: str, policies: list[str], *, games: int, seed: int,
               target: int | None = None, rules=None, ending: str | None = None,
               first_seat: int | None = None, progress=None) -> list[tuple[dict, list[dict]]]:
    """``games`` games of ``policies`` (one per seat: names or PolicySpecs) as (header,
    turn events) pairs, ready for :func:`dicelab.gamelog.write_games`. Farkle's starting
    seat rotates with the game index unless ``first_seat`` is given. Penta:
    ``progress(done, games)`` after each game."""
    from dicelab.registry import parse_policy

    if not is_whole(games) or not 1 <= games <= MAX_LOG_GAMES:
        raise UserError(f"--log-games must be 1 to {MAX_LOG_GAMES:,}, not {games}")
    games = int(games)
    specs = [parse_policy(p, game) for p in policies]
    names = [{"name": f"seat {i}", "policy": s.name} for i, s in enumerate(specs)]
    out = []
    if game == "penta":
        from dicelab.penta.builtin import family_of
        from dicelab.penta.referee import play_game
        from dicelab.penta.rules import get_rules

        rs = get_rules(rules)
        policies = [family_of(s).logged(s, i, len(specs)) for i, s in enumerate(specs)]
        for rng in _rngs(seed, games):
            header = new_game_header("penta", rs, names, seed=seed)
            header["first_seat"] = 0
            out.append((header, play_game(policies, rs, rng)))
            if progress is not None:
                progress(len(out), games)
        return out
    from dicelab.farkle.rules import check_target, load_rules

    table = load_rules(rules, ending)
    t = check_target(target)
    from dicelab.farkle.builtin import as_policy

    n = len(specs)
    seats = [as_policy(s, table, t, n) for s in specs]
    if first_seat is not None and not 0 <= first_seat < n:
        raise UserError(f"--first must be a seat 0..{n - 1}, not {first_seat}")
    for i, rng in enumerate(_rngs(seed, games)):
        first = first_seat if first_seat is not None else i % n
        header = new_game_header("farkle", table, names, target=t, seed=seed, first_seat=first)
        out.append((header, _farkle_game(seats, table, t, first, rng)))
    return out


def check_log_path(path, games: int, taken: dict | None = None, *,
                   json_out: bool = False, creates: str | None = None) -> None:
    """``UserError`` before a run if ``path`` cannot take the log (``json_out`` and
    ``creates``, the run's ``--out``: as :func:`dicelab.files.check_output`), is (or links
    to) a file another output of the run writes (``taken``: option -> its paths), or
    ``games`` is out of range."""
    import os

    from dicelab.files import check_output

    if not is_whole(games) or not 1 <= games <= MAX_LOG_GAMES:
        raise UserError(f"--log-games must be 1 to {MAX_LOG_GAMES:,}, not {games}")
    check_output(path, "--log", json_out=json_out, creates=creates)
    for option, paths in (taken or {}).items():
        for other in paths:
            if os.path.realpath(path) == os.path.realpath(other):
                raise UserError(f"--log {path}: {option} writes {other} there; give the log "
                                "a file of its own")


def simulation_games(strategy: str, vs: list[str] | None, *, games: int, seed: int,
                     game: str | None = None, target: int | None = None, rules=None,
                     ending: str | None = None, first_seat: int | None = None) -> list:
    """The log of ``games`` games of a simulation's seats (``simulate --log``), played move
    by move: what :func:`dicelab.gamelog.write_games` writes."""
    from dicelab.registry import parse_seats

    g, specs = parse_seats(strategy, vs, game)
    return play_games(g, [s.name for s in specs], games=games, seed=seed, target=target,
                      rules=rules, ending=ending, first_seat=first_seat)


__all__ = ["DEFAULT_LOG_GAMES", "LOG_STREAM", "MAX_LOG_GAMES", "check_log_path", "play_games",
           "simulation_games"]
