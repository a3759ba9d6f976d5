"""Farkle simulation runner (layer 2): chunking, seeding, reduction, the result object.

``simulate_farkle(seats, games=..., seed=...)`` plays ``games`` games in parallel over
fixed-size chunks (:mod:`dicelab.seeding`), each chunk with its own generator, and sums
the chunks' integer statistics; the result is identical for the same seed whatever the
number of threads or Dask workers. The run is a :class:`FarklePlan` executed by
:func:`dicelab.runner.run_plan`, in this process or on a Dask cluster.
:func:`simulate_bust_frequencies` estimates the bust risk per number of dice, beside the
exact values.

Two game kernels play the chunks; :func:`kernel_for` (the one place that decides)
picks the :mod:`dicelab.farkle.lanes` kernel (``"lanes-32"`` for solitaire,
``"lanes-16"`` with more seats) when every seat is a ``threshold-T`` policy and
:mod:`dicelab.farkle.kernels` (``"general"``) otherwise. The lanes kernel interleaves the
draws of :func:`~dicelab.farkle.lanes.lanes_for` games per chunk, so which games a seed
gives depends on the kernel too: results record it (``kernel``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dicelab import config, user_policy
from dicelab.config import CHUNK_GAMES, DEFAULT_GAMES, HIST_HEADROOM
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import lanes
from dicelab.farkle.builtin import as_policy, family_of, named, tabulable
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    POINT_UNIT,
    FarkleRules,
    SetAsideArrays,
    check_seats,
    check_target,
    load_rules,
    set_asides,
)
from dicelab.registry import PolicySpec, parse_policy
from dicelab.resources import check_memory
from dicelab.results import frame_row, played_by, policy_params
from dicelab.runner import PER_CHUNK, LazyArrays, executor_info, plan_token, run_plan
from dicelab.seeding import check_games, check_seed, chunk_bounds, chunk_states, n_chunks
from dicelab.stats import (
    Estimate,
    Proportion,
    fields,
    mean_estimate,
    percentiles_from_histogram,
    ratio_estimate,
)

if TYPE_CHECKING:
    import pandas as pd

PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
#: Names of the game kernels, as recorded in results and manifests.
GENERAL_KERNEL = "general"
#: The referee in Python (:mod:`dicelab.farkle.pysim`): seats that decide move by move.
REFEREE_KERNEL = "referee"


def lanes_kernel(n_seats: int) -> str:
    """The name of the lanes kernel for ``n_seats`` seats: ``lanes-<lanes>``."""
    return f"lanes-{lanes.lanes_for(n_seats)}"


@dataclass(frozen=True)
class FarkleSeat:
    """One seat's statistics over a simulation, each with its uncertainty.

    ``mean_final_score``, ``mean_turns``: per-game means; ``points_per_turn``,
    ``bust_rate_per_turn``, ``bust_rate_per_roll``: ratios of per-game sums (games are the
    independent units); ``bust_by_dice[n]``: busts among rolls of ``n`` dice;
    ``percentiles``: exact, from the histogram of final totals (a value equal to
    ``histogram_top`` means "at least"); ``mean_place``: the mean finishing place.
    """

    seat: int
    policy: str
    params: dict[str, Any]
    wins: int
    ties: int
    losses: int
    win_rate: Proportion
    tie_rate: Proportion
    mean_final_score: Estimate
    mean_turns: Estimate
    points_per_turn: Estimate
    bust_rate_per_turn: Estimate
    bust_rate_per_roll: Estimate
    bust_by_dice: dict[int, Proportion]
    rolls: int
    hot_dice: int
    triggered_last_round: int
    percentiles: dict[int, float]
    histogram_top: float
    mean_place: Estimate  # finishing place, 1 = first (tied seats share the best place)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat, "policy": self.policy, "params": self.params,
            "wins": self.wins, "ties": self.ties, "losses": self.losses,
            **fields("win_rate", self.win_rate), **fields("tie_rate", self.tie_rate),
            **fields("mean_final_score", self.mean_final_score),
            **fields("mean_turns", self.mean_turns),
            **fields("points_per_turn", self.points_per_turn),
            **fields("bust_rate_per_turn", self.bust_rate_per_turn),
            **fields("bust_rate_per_roll", self.bust_rate_per_roll),
            "bust_rate_by_dice": {str(n): {"rolls": b.n, "busts": b.count,
                                           **fields("bust_rate", b)}
                                  for n, b in self.bust_by_dice.items()},
            "rolls": self.rolls, "hot_dice": self.hot_dice,
            "triggered_last_round": self.triggered_last_round,
            "final_score_percentiles": {str(q): v for q, v in self.percentiles.items()},
            "final_score_histogram_top": self.histogram_top,
            **fields("mean_place", self.mean_place),
        }


@dataclass
class FarkleResult:
    """Summed integer statistics of a Farkle simulation, and their estimates.

    ``stats``: int64 (seats, kernels.N_STATS); ``hist``: int64 (seats, bins), final totals
    in units of 50; ``counters``: int64 [games, capped games, script errors].
    ``elapsed_s``: the simulation's wall time (``setup_s``: building the policy tables and
    compiling the kernel, before it).
    """

    seats: list[str]
    seat_params: list[dict[str, Any]]
    rules: FarkleRules
    target: int
    seed: int
    games: int
    first_seat: int | None
    stats: np.ndarray
    hist: np.ndarray
    counters: np.ndarray
    elapsed_s: float
    threads: int
    seed_given: bool = True
    setup_s: float = 0.0
    chunk_games: int = CHUNK_GAMES
    game: str = "farkle"
    #: "local" (this process, ``threads`` numba threads) or "dask" (``workers`` workers)
    executor: str = "local"
    workers: int | None = None
    #: the game kernel that played the run (:func:`kernel_for`); part of what a seed means
    kernel: str = GENERAL_KERNEL
    #: with ``per_chunk``: each chunk's ``stats`` (chunks, seats, N_STATS), else None
    chunk_stats: np.ndarray | None = field(default=None, repr=False)
    _seats: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def games_per_s(self) -> float:
        return self.games / self.elapsed_s if self.elapsed_s > 0 else math.nan

    @property
    def capped_games(self) -> int:
        return int(self.counters[K.C_CAPPED])

    def seat(self, s: int) -> FarkleSeat:
        """Seat ``s``'s statistics (computed once)."""
        if s not in self._seats:
            self._seats[s] = self._seat(s)
        return self._seats[s]

    def _seat(self, s: int) -> FarkleSeat:
        st = [float(x) for x in self.stats[s]]
        n = self.games
        wins = int(self.stats[s, K.ST_WINS])
        ties = int(self.stats[s, K.ST_TIES])
        rolls_n = self.stats[s, K.ST_ROLLS_N:K.ST_ROLLS_N + 6]
        busts_n = self.stats[s, K.ST_BUSTS_N:K.ST_BUSTS_N + 6]
        values = np.arange(self.hist.shape[1], dtype=np.int64) * POINT_UNIT
        # totals (and so points per turn) fall below zero only under the farkle penalty
        points = None if self.rules.farkle_penalty else (0.0, math.inf)
        return FarkleSeat(
            seat=s, policy=self.seats[s], params=self.seat_params[s],
            wins=wins, ties=ties, losses=n - wins - ties,
            win_rate=Proportion(wins, n), tie_rate=Proportion(ties, n),
            mean_final_score=mean_estimate(st[K.ST_SCORE], st[K.ST_SCORE_SQ], n, points),
            mean_turns=mean_estimate(st[K.ST_TURNS], st[K.ST_TURNS_SQ], n, (1.0, math.inf)),
            points_per_turn=ratio_estimate(st[K.ST_SCORE], st[K.ST_SCORE_SQ], st[K.ST_TURNS],
                                           st[K.ST_TURNS_SQ], st[K.ST_SCORE_TURNS], n, points),
            bust_rate_per_turn=ratio_estimate(st[K.ST_BUST_TURNS], st[K.ST_BUST_TURNS_SQ],
                                              st[K.ST_TURNS], st[K.ST_TURNS_SQ],
                                              st[K.ST_BUST_TURNS_TURNS], n, (0.0, 1.0)),
            bust_rate_per_roll=ratio_estimate(st[K.ST_BUST_ROLLS], st[K.ST_BUST_ROLLS_SQ],
                                              st[K.ST_ROLLS], st[K.ST_ROLLS_SQ],
                                              st[K.ST_ROLLS_BUST_ROLLS], n, (0.0, 1.0)),
            bust_by_dice={i + 1: Proportion(int(busts_n[i]), int(rolls_n[i]))
                          for i in range(6)},
            rolls=int(self.stats[s, K.ST_ROLLS]),
            hot_dice=int(self.stats[s, K.ST_HOT_DICE]),
            triggered_last_round=int(self.stats[s, K.ST_TRIGGERS]),
            percentiles=percentiles_from_histogram(self.hist[s], values, PERCENTILES),
            histogram_top=float(values[-1]),
            mean_place=_place(st[K.ST_AHEAD], st[K.ST_AHEAD_SQ], n, len(self.seats)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "games": self.games,
            "seed": self.seed,
            "seed_given": self.seed_given,
            "rules": self.rules.name,
            "ending": self.rules.ending,
            "target": self.target,
            "first_seat": self.first_seat,
            "elapsed_s": self.elapsed_s,
            "games_per_s": self.games_per_s,
            "setup_s": self.setup_s,
            "threads": self.threads,
            "executor": self.executor,
            "workers": self.workers,
            "kernel": self.kernel,
            "capped_games": self.capped_games,
            "seats": [self.seat(s).to_dict() for s in range(len(self.seats))],
        }

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        """One row per seat: the run's keys and the seat's statistics, flattened."""
        run = {"game": self.game, "games": self.games, "seed": self.seed,
               "rules": self.rules.name, "ending": self.rules.ending, "target": self.target}
        return pd.DataFrame([{**run, **frame_row(self.seat(s).to_dict())}
                             for s in range(len(self.seats))])

    def manifest(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "rules": self.rules.to_dict(),
            "target": self.target,
            "seed": self.seed,
            "seed_given": self.seed_given,
            "games": self.games,
            "chunk_games": self.chunk_games,
            "first_seat": self.first_seat,
            "elapsed_s": self.elapsed_s,
            "setup_s": self.setup_s,
            "capped_games": self.capped_games,
            **played_by(self.seats, self.seat_params, kernels=[self.kernel],
                        threads=self.threads, executor=self.executor, workers=self.workers,
                        seats=True),
        }


def _place(ahead: float, ahead_sq: float, n: int, seats: int) -> Estimate:
    """Mean finishing place (1 + seats strictly ahead) with its standard error, its
    interval (a t interval, as the mean's) within 1 to ``seats``."""
    e = mean_estimate(ahead, ahead_sq, n)
    return Estimate(1.0 + e.mean, e.se, e.n, df=e.df, bounds=(1.0, float(seats)))


def _seat_params(seat) -> dict[str, Any]:
    if isinstance(seat, PolicySpec):
        return policy_params(seat)
    if isinstance(seat, PolicyTable):
        return {"family": "table"}
    return {"family": "user", **getattr(seat, "params", {})}


def kernel_for(seats: Sequence[PolicySpec | PolicyTable],
               streams: int = K.STREAM_PER_CHUNK, rules: FarkleRules | None = None) -> str:
    """The game kernel that plays these seats: the one place this choice is made.

    :data:`REFEREE_KERNEL` when a seat only decides move by move (no table:
    :func:`dicelab.farkle.builtin.tabulable`); else :func:`lanes_kernel` when every seat
    is a ``threshold-T`` policy with ``T`` at most
    :data:`dicelab.farkle.lanes.MAX_THRESHOLD` (52,428,750), else :data:`GENERAL_KERNEL`
    (``ai`` seats, exact-policy tables, higher thresholds, a stream per turn: see
    :data:`dicelab.farkle.kernels.STREAM_PER_TURN`, or ``rules`` with house rules of
    banking and losing, which only the general kernel plays). Decided from the names
    alone, so a Dask client knows it without building any table.

    >>> from dicelab.registry import parse_policy
    >>> [kernel_for([parse_policy(p)]) for p in ("threshold-300", "ai", "threshold-60000000")]
    ['lanes-32', 'general', 'general']
    >>> kernel_for([parse_policy("threshold-300"), parse_policy("threshold-500")])
    'lanes-16'
    """
    if not all(tabulable(s) for s in seats):
        return REFEREE_KERNEL
    lanes_ok = streams == K.STREAM_PER_CHUNK and (rules is None or rules.standard_banking) \
        and all(_lanes_threshold(s) <= lanes.MAX_THRESHOLD for s in seats)
    return lanes_kernel(len(seats)) if seats and lanes_ok else GENERAL_KERNEL


def _lanes_threshold(seat) -> float:
    """The threshold the lanes kernel would play a seat by (its family's), or infinity."""
    t = family_of(seat).lanes_threshold(seat) if isinstance(seat, PolicySpec) else None
    return math.inf if t is None else t


@dataclass(frozen=True)
class _Built:
    """What a plan builds once per process: the seat and roll arrays, the chosen kernel,
    and for the lanes kernel the thresholds (int64, seats) and the outcome table."""

    seats: K.Seats
    rolls: SetAsideArrays
    kernel: str
    thr: np.ndarray | None
    outcomes: np.ndarray | None

    def run_chunks(self, states: np.ndarray, bounds: np.ndarray, game: K.Game,
                   stats: np.ndarray, hist: np.ndarray, counters: np.ndarray) -> None:
        """Play chunks with this plan's kernel (arrays as :func:`kernels.run_chunks`)."""
        if self.kernel != GENERAL_KERNEL:
            lanes.run_chunks(states, bounds, game, self.thr, self.outcomes,
                             lanes.lanes_for(game.n_seats), stats, hist, counters)
        else:
            K.run_chunks(states, bounds, game, self.seats, self.rolls, stats, hist, counters)

    def warm_up(self, game: K.Game) -> None:
        """Compile (or load from numba's cache) the kernel that will run, on no chunks."""
        if self.kernel != GENERAL_KERNEL:
            lanes.warm_up(game, self.thr, self.outcomes)
            return
        s = game.n_seats
        self.run_chunks(np.zeros((0, 4), np.uint64), np.zeros(1, np.int64), game,
                        np.zeros((0, s, K.N_STATS), np.int64), np.zeros((0, s, 1), np.int64),
                        np.zeros((0, K.N_CHUNK_COUNTERS), np.int64))


def _build(kernel: str, seats: K.Seats, rules: FarkleRules) -> _Built:
    sa = set_asides(rules)
    if kernel == GENERAL_KERNEL:
        return _Built(seats, sa.arrays(), kernel, None, None)
    thr = np.ascontiguousarray(seats.params[:, K.P_THRESHOLD], dtype=np.int64)
    return _Built(seats, sa.arrays(), kernel, thr, lanes.outcome_table(sa))


@dataclass(frozen=True, eq=False)
class FarklePlan(LazyArrays):
    """One Farkle run as a picklable value, for :func:`dicelab.runner.run_plan`.

    Holds the seats (PolicySpecs by name, or ready PolicyTables), the rules, target,
    seed, number of games and starting seat; builds the kernel arrays (exact policy
    tables included; the outcome table for the lanes kernel) and picks the kernel the
    first time a process needs them. Accumulators: ``stats`` (seats, kernels.N_STATS),
    ``hist`` (seats, bins), ``counters`` (kernels.N_CHUNK_COUNTERS), all int64.
    """

    seats: tuple[PolicySpec | PolicyTable, ...]
    rules: FarkleRules
    target: int
    seed: int
    games: int
    first_seat: int | None = None
    #: chunks per kernel call (:data:`dicelab.config.BATCH_CHUNKS` when the plan is made)
    batch_chunks: int = field(default_factory=lambda: config.BATCH_CHUNKS)
    #: also return each chunk's statistics (``"by_chunk:stats"``, (chunks, seats, N_STATS))
    per_chunk: bool = False
    #: the random-stream layout (:data:`dicelab.farkle.kernels.STREAM_PER_CHUNK` or
    #: ``STREAM_PER_TURN``)
    streams: int = K.STREAM_PER_CHUNK
    #: games per chunk: part of what a seed means (simulations use the standard size; a
    #: sequential test takes smaller units)
    chunk_games: int = CHUNK_GAMES

    @property
    def n_bins(self) -> int:
        return (self.target + HIST_HEADROOM) // POINT_UNIT + 1

    @property
    def game(self) -> K.Game:
        """The kernels' :class:`~dicelab.farkle.kernels.Game` of this run."""
        return K.Game(len(self.seats), -1 if self.first_seat is None else int(self.first_seat),
                      self.target, self.rules.ending_code, self.streams,
                      self.rules.farkle_penalty)

    def built(self) -> _Built | list:
        """The kernel arrays and the kernel's choice, built once per plan object (for
        the referee: the seats' Policy objects)."""
        if self.kernel == REFEREE_KERNEL:
            return self._lazy(lambda: [as_policy(s, self.rules, self.target, len(self.seats))
                                       for s in self.seats])
        return self._lazy(lambda: _build(self.kernel,
                                         seat_arrays(list(self.seats), self.rules, self.target),
                                         self.rules))

    @property
    def kernel(self) -> str:
        """The game kernel this plan runs (:func:`kernel_for` of its seats)."""
        return kernel_for(self.seats, self.streams, self.rules)

    def token(self) -> str:
        if all(named(s) for s in self.seats):
            seats: tuple = tuple(s.name for s in self.seats)
        else:  # tables are not worth hashing: name the run uniquely instead
            import uuid

            seats = (uuid.uuid4().hex,)
        return plan_token("farkle", seats, self.rules, self.target, self.seed, self.games,
                          self.first_seat, self.batch_chunks, self.per_chunk, self.streams,
                          self.chunk_games)

    def prepare(self) -> None:
        built = self.built()
        if self.kernel != REFEREE_KERNEL:
            built.warm_up(self.game)

    def empty(self) -> dict[str, np.ndarray]:
        s = len(self.seats)
        return {"stats": np.zeros((s, K.N_STATS), dtype=np.int64),
                "hist": np.zeros((s, self.n_bins), dtype=np.int64),
                "counters": np.zeros(K.N_CHUNK_COUNTERS, dtype=np.int64)}

    def run_range(self, first: int, stop: int) -> dict[str, np.ndarray]:
        built = self.built()
        if self.kernel == REFEREE_KERNEL:  # seats that decide move by move
            from dicelab.farkle.pysim import play_python

            acc = play_python(built, self.rules, self.target, self.seed, self.games,
                              self.n_bins, first_seat=self.first_seat, streams=self.streams,
                              per_chunk=self.per_chunk, chunks=(first, stop),
                              chunk_games=self.chunk_games)
            if self.per_chunk:
                acc[PER_CHUNK + "stats"] = acc.pop("chunk_stats")
            return acc
        s, m = len(self.seats), stop - first
        b_stats = np.zeros((m, s, K.N_STATS), dtype=np.int64)
        b_hist = np.zeros((m, s, self.n_bins), dtype=np.int64)
        b_counters = np.zeros((m, K.N_CHUNK_COUNTERS), dtype=np.int64)
        built.run_chunks(chunk_states(self.seed, first, stop),
                         chunk_bounds(self.games, first, stop, self.chunk_games), self.game,
                         b_stats, b_hist, b_counters)
        out = {"stats": b_stats.sum(axis=0), "hist": b_hist.sum(axis=0),
               "counters": b_counters.sum(axis=0)}
        if self.per_chunk:
            out[PER_CHUNK + "stats"] = b_stats
        return out

    def __getstate__(self) -> dict:
        """A user's policy goes by its name (``FILE.py:NAME``): a Dask worker loads it
        again (its code is in a module only this process has imported)."""
        state = super().__getstate__()
        state["seats"] = tuple(s.name if isinstance(s, PolicySpec) and s.policy is not None
                               and user_policy.looks_like_reference(s.name) else s
                               for s in self.seats)
        return state

    def __setstate__(self, state: dict) -> None:
        seats = tuple(parse_policy(s, "farkle") if isinstance(s, str) else s
                      for s in state["seats"])
        self.__dict__.update(state, seats=seats)


def simulate_farkle(seats: list[PolicySpec | PolicyTable], *, games: int = DEFAULT_GAMES,
                    seed: int | None = None, target: int | None = None,
                    rules: str | FarkleRules | None = None, ending: str | None = None,
                    first_seat: int | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    client: Any = None, per_chunk: bool = False,
                    streams: int = K.STREAM_PER_CHUNK, chunk_games: int = CHUNK_GAMES
                    ) -> FarkleResult:
    """Simulate ``games`` Farkle games, one seat per policy; returns a :class:`FarkleResult`.

    ``seats``: 1..7 policies (names, parsed policies, PolicyTables or policy objects);
    ``target``: positive multiple of
    50 (default 10,000); ``rules``: preset name, TOML path or FarkleRules (default
    ``default``); ``ending``: replaces the rules' ending rule (``last-round``,
    ``first-to-bank``); ``first_seat``: fixed starting seat, else it rotates with the game
    index (both refused for one seat, which neither changes); ``client``: a
    ``distributed.Client`` to run the chunks on a Dask cluster (same results as a local
    run); ``per_chunk``: keep each chunk's statistics too
    (``result.chunk_stats``); ``streams``: the random-stream layout (one per turn for
    common random numbers: :data:`dicelab.farkle.kernels.STREAM_PER_TURN`);
    ``chunk_games``: games per chunk (the standard size, or a comparison's units:
    :func:`dicelab.seeding.unit_chunk_games`). All-threshold seats are played by the
    lanes kernel, seats that decide move by move (no table) by the referee in Python
    (:func:`simulate_python`), any other mix by the general kernel (:func:`kernel_for`;
    ``result.kernel``).

    >>> from dicelab.registry import parse_policy
    >>> r = simulate_farkle([parse_policy("threshold-300")], games=1000, seed=1)
    >>> r.seat(0).mean_final_score.n
    1000
    """
    seats = [parse_policy(s, "farkle") if isinstance(s, str) else s for s in seats]
    games, seed, seed_given, target, rules = _checked(seats, games, seed, target, rules,
                                                      ending, first_seat)
    if kernel_for(seats) == REFEREE_KERNEL:  # a policy that decides move by move
        if client is not None:
            moving = [s.name if isinstance(s, PolicySpec) else str(getattr(s, "name", s))
                      for s in seats if not tabulable(s)]
            raise UserError(f"--dask: policy '{moving[0]}' decides move by move (no table) "
                            "and plays in this process only")
        return _referee_run(seats, rules, target, seed, seed_given, games, first_seat,
                            progress, per_chunk, streams, chunk_games)
    plan = FarklePlan(tuple(seats), rules, target, seed, games,
                      None if first_seat is None else int(first_seat), per_chunk=per_chunk,
                      streams=streams, chunk_games=chunk_games)
    check_memory(f"a simulation to {target:,} (its histograms of final totals)",
                 plan.batch_chunks * len(seats) * plan.n_bins * 8 * 3)

    import numba

    t0 = time.perf_counter()
    if client is None:
        plan.prepare()  # policy tables and compilation before the clock starts
    t1 = time.perf_counter()
    acc = run_plan(plan, progress=progress, client=client)
    elapsed = time.perf_counter() - t1
    counters = acc["counters"]
    if counters[K.C_GAMES] != games:  # a kernel bug, never a user error
        raise RuntimeError(f"played {counters[K.C_GAMES]} games, expected {games}")
    return FarkleResult(seats=[s.name for s in seats],
                        seat_params=[_seat_params(x) for x in seats],
                        rules=rules, target=target, seed=seed, games=games,
                        first_seat=first_seat, stats=acc["stats"], hist=acc["hist"],
                        counters=counters, elapsed_s=elapsed, threads=numba.get_num_threads(),
                        seed_given=seed_given, setup_s=t1 - t0, kernel=plan.kernel,
                        chunk_games=chunk_games, chunk_stats=acc.get(PER_CHUNK + "stats"),
                        **executor_info(client))


def _checked(seats, games, seed, target, rules, ending, first_seat):
    """A simulation's arguments checked: (games, seed, seed given, target, rules)."""
    check_seats(len(seats))
    games = check_games(games)
    target = check_target(target)
    rules = load_rules(rules, ending)
    if first_seat is not None and not 0 <= first_seat < len(seats):
        raise UserError(f"--first must be a seat number 0..{len(seats) - 1}, not {first_seat}")
    if len(seats) == 1 and ending is not None:
        raise UserError("--ending is for two or more seats: a solitaire game ends when its "
                        "one player reaches the target, under either rule")
    if len(seats) == 1 and first_seat is not None:
        raise UserError("--first picks the seat that starts a game of two or more seats: a "
                        "solitaire game's one player starts every game")
    for seat in seats:
        if isinstance(seat, PolicySpec) and seat.game != "farkle":
            raise UserError(f"policy '{seat.name}' is a {seat.game} policy, not farkle")
    return games, check_seed(seed), seed is not None, target, rules


def simulate_python(seats: list, *, games: int = DEFAULT_GAMES, seed: int | None = None,
                    target: int | None = None, rules: str | FarkleRules | None = None,
                    ending: str | None = None, first_seat: int | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    per_chunk: bool = False, streams: int = K.STREAM_PER_CHUNK
                    ) -> FarkleResult:
    """Simulate as :func:`simulate_farkle` does, every seat played by the referee in
    Python (:mod:`dicelab.farkle.pysim`): what :func:`simulate_farkle` does when a seat
    only decides move by move. ``seats``: names, PolicySpecs, PolicyTables or policy
    objects (``decide(state) -> Move``); ``result.kernel`` is ``"referee"``.

    >>> from dicelab.registry import parse_policy
    >>> r = simulate_python(["threshold-300"], games=20, seed=1, target=1000)
    >>> r.games, r.kernel, r.seat(0).mean_final_score.n
    (20, 'referee', 20)
    """
    seats = [parse_policy(s, "farkle") if isinstance(s, str) else s for s in seats]
    games, seed, seed_given, target, rules = _checked(seats, games, seed, target, rules,
                                                      ending, first_seat)
    return _referee_run(seats, rules, target, seed, seed_given, games, first_seat, progress,
                        per_chunk, streams)


def _referee_run(seats, rules, target, seed, seed_given, games, first_seat, progress,
                 per_chunk, streams, chunk_games=CHUNK_GAMES) -> FarkleResult:
    from dicelab.farkle.pysim import play_python

    n_bins = (target + HIST_HEADROOM) // POINT_UNIT + 1
    check_memory(f"a simulation to {target:,} (its histograms of final totals)",
                 len(seats) * n_bins * 8 * 3)
    t0 = time.perf_counter()
    policies = [as_policy(s, rules, target, len(seats)) for s in seats]
    t1 = time.perf_counter()
    acc = play_python(policies, rules, target, seed, games, n_bins, first_seat=first_seat,
                      streams=streams, per_chunk=per_chunk, progress=progress,
                      chunk_games=chunk_games)
    return FarkleResult(seats=[s.name for s in seats],
                        seat_params=[_seat_params(x) for x in seats],
                        rules=rules, target=target, seed=seed, games=games,
                        first_seat=first_seat, stats=acc["stats"], hist=acc["hist"],
                        counters=acc["counters"], elapsed_s=time.perf_counter() - t1,
                        threads=1, seed_given=seed_given, setup_s=t1 - t0,
                        kernel=REFEREE_KERNEL, chunk_games=chunk_games,
                        chunk_stats=acc.get("chunk_stats"))


@dataclass
class BustRiskResult:
    """Exact and simulated bust probabilities for 1..6 dice: ``p_bust[n]`` exact,
    :meth:`bust_rate` simulated (``busts[n]`` of ``rolls`` rolls)."""

    rules: FarkleRules
    seed: int
    rolls: int
    p_bust: dict[int, float]
    busts: dict[int, int]
    elapsed_s: float

    game = "farkle"
    kernel = "bust-counts"  # the compiled kernel that rolls and counts

    def bust_rate(self, n: int) -> Proportion:
        """The simulated share of busting rolls of ``n`` dice."""
        return Proportion(self.busts[n], self.rolls)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        """One row per number of dice: exact and simulated bust risk."""
        return pd.DataFrame([{"rules": self.rules.name, "seed": self.seed, **frame_row(r)}
                             for r in self.to_dict()["bust_risk"]])

    def manifest(self) -> dict[str, Any]:
        return {"game": "farkle", "experiment": "bust-risk", "rules": self.rules.to_dict(),
                "seed": self.seed, "rolls_per_dice_count": self.rolls,
                "chunk_games": CHUNK_GAMES, "elapsed_s": self.elapsed_s}

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for n in range(1, 7):
            e = self.bust_rate(n)
            rows.append({"dice": n, "p_bust": self.p_bust[n], **fields("bust_rate", e),
                         "busts": e.count, "rolls": self.rolls})
        return {"rules": self.rules.name, "seed": self.seed, "rolls_per_dice_count": self.rolls,
                "elapsed_s": self.elapsed_s, "bust_risk": rows}


def simulate_bust_frequencies(rules: str | FarkleRules | None = None, *, rolls: int = DEFAULT_GAMES,
                              seed: int | None = None) -> BustRiskResult:
    """Roll 1..6 dice ``rolls`` times each and count busts, beside the exact bust risk.

    >>> r = simulate_bust_frequencies(rolls=10_000, seed=1)
    >>> round(r.p_bust[6], 4)
    0.0231
    """
    rolls = check_games(rolls, unit="rolls")
    rules = load_rules(rules)
    seed = check_seed(seed)
    sa = set_asides(rules)
    K.bust_counts(np.zeros((0, 4), np.uint64), np.zeros(1, np.int64), sa.roll_class,
                  np.zeros((0, 7), np.int64))
    t0 = time.perf_counter()
    total = np.zeros(7, dtype=np.int64)
    n = n_chunks(rolls)
    for lo in range(0, n, config.BATCH_CHUNKS):
        hi = min(lo + config.BATCH_CHUNKS, n)
        out = np.zeros((hi - lo, 7), dtype=np.int64)
        K.bust_counts(chunk_states(seed, lo, hi), chunk_bounds(rolls, lo, hi), sa.roll_class,
                      out)
        total += out.sum(axis=0)
    elapsed = time.perf_counter() - t0
    return BustRiskResult(rules=rules, seed=seed, rolls=rolls,
                          p_bust={n: float(sa.bust[n]) for n in range(1, 7)},
                          busts={n: int(total[n]) for n in range(1, 7)}, elapsed_s=elapsed)
