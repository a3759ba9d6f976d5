"""One entry point for simulations of either game (layer 2: orchestration).

``simulate("threshold-300")`` resolves the game from the policy names through the
registry and runs that game's runner. Usable from Python and notebooks; the CLI's
``dicelab simulate`` is a thin shell over it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dicelab.config import DEFAULT_GAMES
from dicelab.registry import parse_seats
from dicelab.results import SimulationResult
from dicelab.seeding import check_games


def simulate(strategy: str, vs: list[str] | None = None, *, game: str | None = None,
             games: int = DEFAULT_GAMES, seed: int | None = None, target: int | None = None,
             rules: str | None = None, ending: str | None = None,
             first_seat: int | None = None, threads: int | None = None,
             progress: Callable[[int, int], None] | None = None,
             client: Any = None) -> SimulationResult:
    """Simulate ``games`` games with ``strategy`` in seat 0 and each ``vs`` policy in a seat.

    ``progress(done, total)`` is called as chunks of games finish. ``client``: a
    ``distributed.Client`` to run the chunks on a Dask cluster (see
    :func:`dicelab.runner.dask_client`); the results are those of a local run.
    ``threads`` sets this process's numba threads (not the workers'); a run played by
    the Python referee (a policy that decides move by move) uses one, and its result and
    manifest say so (``threads``: :func:`dicelab.parallel.threads_used`). ``target``,
    ``ending`` and ``first_seat`` are Farkle's.

    >>> r = simulate("threshold-300", ["threshold-500"], games=2000, seed=1)
    >>> r.game, r.seat(0).wins + r.seat(1).wins + r.seat(0).ties <= 2000
    ('farkle', True)
    """
    games = check_games(games)
    if threads is not None:
        from dicelab.parallel import set_threads

        set_threads(threads)
    game_name, seats = parse_seats(strategy, vs, game)
    if game_name == "farkle":
        from dicelab.farkle.simulate import simulate_farkle

        return simulate_farkle(seats, games=games, seed=seed, target=target, rules=rules,
                               ending=ending, first_seat=first_seat, progress=progress,
                               client=client)
    from dicelab.penta.rules import refuse_farkle_options
    from dicelab.penta.simulate import simulate_penta

    refuse_farkle_options(("--target", target), ("--ending", ending), ("--first", first_seat))

    return simulate_penta(seats, games=games, seed=seed, rules=rules, progress=progress,
                          client=client)
