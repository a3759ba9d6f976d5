"""Farkle simulation runner (layer 2): chunking, seeding, reduction, the result object.

``simulate_farkle(seats, games=..., seed=...)`` plays ``games`` games in parallel over
fixed-size chunks (:mod:`dicelab.seeding`), each chunk with its own generator, and sums
the chunks' integer statistics; the result is identical for the same seed whatever the
number of threads or Dask workers. The run is a :class:`FarklePlan` executed by
:func:`dicelab.runner.run_plan`, in this process or on a Dask cluster.
:func:`simulate_bust_frequencies` estimates the bust risk per number of dice, beside the
exact values.

Two game kernels play the chunks; :func:`kernel_for` (the one place that decides)
picks the fast :mod:`dicelab.farkle.lanes` kernel (``"lanes-32"`` for solitaire,
``"lanes-16"`` with more seats) when every seat is a ``threshold-T`` policy and
:mod:`dicelab.farkle.kernels` (``"general"``) otherwise. The lanes kernel interleaves the
draws of :func:`~dicelab.farkle.lanes.lanes_for` games per chunk, so which games a seed
gives depends on the kernel too: results record it (``kernel`` in ``to_dict()`` and the
manifest).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import lanes
from dicelab.farkle.policies import SeatArrays, seat_arrays
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.scoring import CompiledScoring, ScoringTable, compile_table, load_scoring
from dicelab.registry import PolicySpec
from dicelab.runner import LazyArrays, executor_info, plan_token, run_plan
from dicelab.seeding import CHUNK_GAMES, check_seed, chunk_bounds, chunk_states
from dicelab.stats import (
    mean_estimate,
    percentiles_from_histogram,
    proportion_estimate,
    ratio_estimate,
    wilson_interval,
)

DEFAULT_TARGET = 10_000
MAX_SEATS = 7
#: Chunks per kernel call: one progress tick per batch.
BATCH_CHUNKS = 16
#: Final-score histogram reaches this far above the target (units of 50 beyond go to
#: the last bin; percentiles landing there are reported as "at least").
HIST_HEADROOM = 20_000
PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
#: Names of the game kernels, as recorded in results and manifests.
GENERAL_KERNEL = "general"


def lanes_kernel(n_seats: int) -> str:
    """The name of the lanes kernel for ``n_seats`` seats: ``lanes-<lanes>``."""
    return f"lanes-{lanes.lanes_for(n_seats)}"


def check_target(target: int | None) -> int:
    """The game target: a positive multiple of 50 (default 10,000)."""
    if target is None:
        return DEFAULT_TARGET
    if isinstance(target, bool) or not isinstance(target, int | np.integer):
        raise UserError(f"--target must be an integer, not {target!r}")
    if target <= 0 or target % 50:
        raise UserError(f"--target must be a positive multiple of 50 (e.g. 5000, 10000, "
                        f"15000), not {target}")
    return int(target)


def scoring_arrays(compiled: CompiledScoring) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(keep_score, max_keep, all_score)`` as contiguous int64 arrays for the kernels."""
    keep_score = np.ascontiguousarray(compiled.keep_score, dtype=np.int64)
    max_keep = np.ascontiguousarray(compiled.max_keep, dtype=np.int64)
    all_score = np.ascontiguousarray(keep_score[np.arange(len(max_keep)), max_keep])
    return keep_score, max_keep, all_score


@dataclass
class FarkleResult:
    """Summed integer statistics of a Farkle simulation, and their estimates.

    ``stats``: int64 (seats, kernels.N_STATS); ``hist``: int64 (seats, bins), final totals
    in units of 50; ``counters``: int64 [games, capped games, script errors].
    """

    seats: list[str]
    seat_params: list[dict[str, Any]]
    rules: ScoringTable
    target: int
    seed: int
    games: int
    first_seat: int | None
    stats: np.ndarray
    hist: np.ndarray
    counters: np.ndarray
    elapsed_s: float
    threads: int
    chunk_games: int = CHUNK_GAMES
    game: str = "farkle"
    #: "local" (this process, ``threads`` numba threads) or "dask" (``workers`` workers)
    executor: str = "local"
    workers: int | None = None
    #: the game kernel that played the run (:func:`kernel_for`); part of what a seed means
    kernel: str = GENERAL_KERNEL

    @property
    def games_per_s(self) -> float:
        return self.games / self.elapsed_s if self.elapsed_s > 0 else math.nan

    @property
    def capped_games(self) -> int:
        return int(self.counters[K.C_CAPPED])

    def seat_summary(self, s: int) -> dict[str, Any]:
        st = [float(x) for x in self.stats[s]]
        n = self.games
        wins = int(self.stats[s, K.ST_WINS])
        ties = int(self.stats[s, K.ST_TIES])
        rolls_n = self.stats[s, K.ST_ROLLS_N:K.ST_ROLLS_N + 6]
        busts_n = self.stats[s, K.ST_BUSTS_N:K.ST_BUSTS_N + 6]
        by_dice = {}
        for i in range(6):
            r, b = int(rolls_n[i]), int(busts_n[i])
            e = proportion_estimate(b, r)
            by_dice[str(i + 1)] = {"rolls": r, "busts": b, "rate": e.mean,
                                   "ci95": list(wilson_interval(b, r))}
        score = mean_estimate(st[K.ST_SCORE], st[K.ST_SCORE_SQ], n)
        turns = mean_estimate(st[K.ST_TURNS], st[K.ST_TURNS_SQ], n)
        ppt = ratio_estimate(st[K.ST_SCORE], st[K.ST_SCORE_SQ], st[K.ST_TURNS],
                             st[K.ST_TURNS_SQ], st[K.ST_SCORE_TURNS], n)
        bpt = ratio_estimate(st[K.ST_BUST_TURNS], st[K.ST_BUST_TURNS_SQ], st[K.ST_TURNS],
                             st[K.ST_TURNS_SQ], st[K.ST_BUST_TURNS_TURNS], n)
        bpr = ratio_estimate(st[K.ST_BUST_ROLLS], st[K.ST_BUST_ROLLS_SQ], st[K.ST_ROLLS],
                             st[K.ST_ROLLS_SQ], st[K.ST_ROLLS_BUST_ROLLS], n)
        values = np.arange(self.hist.shape[1], dtype=np.int64) * 50
        pct = percentiles_from_histogram(self.hist[s], values, PERCENTILES)
        top = float(values[-1])
        return {
            "seat": s,
            "strategy": self.seats[s],
            "params": self.seat_params[s],
            "wins": wins,
            "ties": ties,
            "losses": n - wins - ties,
            "win_rate": wins / n,
            "win_rate_ci": list(wilson_interval(wins, n)),
            "tie_rate": ties / n,
            "tie_rate_ci": list(wilson_interval(ties, n)),
            "mean_final_score": score.mean,
            "mean_final_score_se": score.se,
            "mean_final_score_ci": list(score.ci95),
            "mean_turns": turns.mean,
            "mean_turns_se": turns.se,
            "mean_turns_ci": list(turns.ci95),
            "points_per_turn": ppt.mean,
            "points_per_turn_se": ppt.se,
            "points_per_turn_ci": list(ppt.ci95),
            "bust_rate_per_turn": bpt.mean,
            "bust_rate_per_turn_se": bpt.se,
            "bust_rate_per_turn_ci": list(bpt.ci95),
            "bust_rate_per_roll": bpr.mean,
            "bust_rate_per_roll_se": bpr.se,
            "bust_rate_per_roll_ci": list(bpr.ci95),
            "bust_rate_by_dice": by_dice,
            "rolls": int(self.stats[s, K.ST_ROLLS]),
            "hot_dice": int(self.stats[s, K.ST_HOT_DICE]),
            "triggered_last_round": int(self.stats[s, K.ST_TRIGGERS]),
            "final_score_percentiles": {str(q): v for q, v in pct.items()},
            # a percentile equal to this value means "at least this much"
            "final_score_histogram_top": top,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules.name,
            "target": self.target,
            "first_seat": self.first_seat,
            "elapsed_s": self.elapsed_s,
            "games_per_s": self.games_per_s,
            "threads": self.threads,
            "executor": self.executor,
            "workers": self.workers,
            "kernel": self.kernel,
            "capped_games": self.capped_games,
            "seats": [self.seat_summary(s) for s in range(len(self.seats))],
        }

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for s in range(len(self.seats)):
            d = self.seat_summary(s)
            row = {"game": self.game, "games": self.games, "seed": self.seed,
                   "rules": self.rules.name, "target": self.target}
            for key, v in d.items():
                if key == "params":
                    row["params"] = ",".join(f"{k}={x}" for k, x in v.items())
                elif key == "bust_rate_by_dice":
                    for nd, e in v.items():
                        row[f"bust_rate_{nd}_dice"] = e["rate"]
                elif key == "final_score_percentiles":
                    for q, x in v.items():
                        row[f"final_score_p{q}"] = x
                elif isinstance(v, list):
                    row[f"{key}_lo"], row[f"{key}_hi"] = v
                else:
                    row[key] = v
            rows.append(row)
        return pd.DataFrame(rows)

    def manifest(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "policies": [{"seat": s, "name": n, "params": p}
                         for s, (n, p) in enumerate(zip(self.seats, self.seat_params,
                                                        strict=True))],
            "rules": self.rules.to_dict(),
            "target": self.target,
            "seed": self.seed,
            "games": self.games,
            "chunk_games": self.chunk_games,
            "kernel": self.kernel,
            "first_seat": self.first_seat,
            "elapsed_s": self.elapsed_s,
            "threads": self.threads,
            "executor": self.executor,
            "workers": self.workers,
            "capped_games": self.capped_games,
        }


def _seat_params(seat: PolicySpec | PolicyTable) -> dict[str, Any]:
    if isinstance(seat, PolicySpec):
        return {"family": seat.family, **seat.params}
    return {"family": "table"}


def kernel_for(seats: Sequence[PolicySpec | PolicyTable]) -> str:
    """The game kernel that plays these seats: the one place this choice is made.

    :func:`lanes_kernel` when every seat is a ``threshold-T`` policy with ``T`` at most
    :data:`dicelab.farkle.lanes.MAX_THRESHOLD` (52,428,750), else :data:`GENERAL_KERNEL`
    (``ai`` seats, exact-policy tables, higher thresholds). Decided from the names
    alone, so a Dask client knows it without building any table.

    >>> from dicelab.registry import parse_policy
    >>> [kernel_for([parse_policy(p)]) for p in ("threshold-300", "ai", "threshold-60000000")]
    ['lanes-32', 'general', 'general']
    >>> kernel_for([parse_policy("threshold-300"), parse_policy("threshold-500")])
    'lanes-16'
    """
    lanes_ok = all(isinstance(s, PolicySpec) and s.family == "threshold"
                   and s.params["threshold"] <= lanes.MAX_THRESHOLD for s in seats)
    return lanes_kernel(len(seats)) if seats and lanes_ok else GENERAL_KERNEL


@dataclass(frozen=True)
class _Built:
    """What a plan builds once per process: seat and scoring arrays, the chosen kernel,
    and for the lanes kernel the thresholds (int64, seats) and the outcome table."""

    seats: SeatArrays
    scoring: tuple[np.ndarray, np.ndarray, np.ndarray]
    kernel: str
    thr: np.ndarray | None
    outcomes: np.ndarray | None

    def run_chunks(self, states: np.ndarray, bounds: np.ndarray, first_seat: int, target: int,
                   stats: np.ndarray, hist: np.ndarray, counters: np.ndarray) -> None:
        """Play chunks with this plan's kernel (arrays as :func:`kernels.run_chunks`)."""
        s = self.seats.n_seats
        if self.kernel != GENERAL_KERNEL:
            lanes.run_chunks(states, bounds, s, first_seat, target, self.thr, self.outcomes,
                             lanes.lanes_for(s), stats, hist, counters)
        else:
            K.run_chunks(states, bounds, s, first_seat, target, *self.seats.kernel_args(),
                         *self.scoring, stats, hist, counters)

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernel that will run, on no chunks."""
        s = self.seats.n_seats
        self.run_chunks(np.zeros((0, 4), np.uint64), np.zeros(1, np.int64), -1, 50,
                        np.zeros((0, s, K.N_STATS), np.int64), np.zeros((0, s, 1), np.int64),
                        np.zeros((0, K.N_CHUNK_COUNTERS), np.int64))


def _build(kernel: str, seats: SeatArrays,
           scoring: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _Built:
    if kernel == GENERAL_KERNEL:
        return _Built(seats, scoring, kernel, None, None)
    thr = np.ascontiguousarray(seats.params[:, K.P_THRESHOLD], dtype=np.int64)
    _, max_keep, all_score = scoring
    return _Built(seats, scoring, kernel, thr, lanes.outcome_table(max_keep, all_score))


@dataclass(frozen=True, eq=False)
class FarklePlan(LazyArrays):
    """One Farkle run as a picklable value, for :func:`dicelab.runner.run_plan`.

    Holds the seats (PolicySpecs by name, or ready PolicyTables), the scoring table,
    target, seed, number of games and starting seat; builds the kernel arrays (exact
    policy tables included; the outcome table for the lanes kernel) and picks the
    kernel the first time a process needs them. Accumulators: ``stats`` (seats,
    kernels.N_STATS), ``hist`` (seats, bins), ``counters`` (kernels.N_CHUNK_COUNTERS),
    all int64.
    """

    seats: tuple[PolicySpec | PolicyTable, ...]
    table: ScoringTable
    target: int
    seed: int
    games: int
    first_seat: int | None = None
    batch_chunks: int = BATCH_CHUNKS

    @property
    def n_bins(self) -> int:
        return (self.target + HIST_HEADROOM) // 50 + 1

    def _built(self) -> _Built:
        return self._lazy(lambda: _build(self.kernel,
                                         seat_arrays(list(self.seats), self.table, self.target),
                                         scoring_arrays(compile_table(self.table))))

    def kernel_arrays(self) -> tuple[SeatArrays, tuple[np.ndarray, ...]]:
        """``(seat arrays, scoring arrays)``, built once per plan object."""
        b = self._built()
        return b.seats, b.scoring

    def outcome_table(self) -> np.ndarray | None:
        """The lanes kernel's :func:`lanes.outcome_table` (None for the general kernel),
        built once per plan object."""
        return self._built().outcomes

    @property
    def kernel(self) -> str:
        """The game kernel this plan runs (:func:`kernel_for` of its seats)."""
        return kernel_for(self.seats)

    def token(self) -> str:
        if all(isinstance(s, PolicySpec) for s in self.seats):
            seats: tuple = tuple(s.name for s in self.seats)
        else:  # tables are not worth hashing: name the run uniquely instead
            import uuid

            seats = (uuid.uuid4().hex,)
        return plan_token("farkle", seats, self.table, self.target, self.seed, self.games,
                          self.first_seat, self.batch_chunks)

    def prepare(self) -> None:
        self._built().warm_up()

    def empty(self) -> dict[str, np.ndarray]:
        s = len(self.seats)
        return {"stats": np.zeros((s, K.N_STATS), dtype=np.int64),
                "hist": np.zeros((s, self.n_bins), dtype=np.int64),
                "counters": np.zeros(K.N_CHUNK_COUNTERS, dtype=np.int64)}

    def run_range(self, first: int, stop: int) -> dict[str, np.ndarray]:
        built = self._built()
        s, m = len(self.seats), stop - first
        bounds = chunk_bounds(self.games)
        fs = -1 if self.first_seat is None else int(self.first_seat)
        b_stats = np.zeros((m, s, K.N_STATS), dtype=np.int64)
        b_hist = np.zeros((m, s, self.n_bins), dtype=np.int64)
        b_counters = np.zeros((m, K.N_CHUNK_COUNTERS), dtype=np.int64)
        built.run_chunks(chunk_states(self.seed, first, stop), bounds[first:stop + 1], fs,
                         self.target, b_stats, b_hist, b_counters)
        return {"stats": b_stats.sum(axis=0), "hist": b_hist.sum(axis=0),
                "counters": b_counters.sum(axis=0)}


def simulate_farkle(seats: list[PolicySpec | PolicyTable], *, games: int = 1_000_000,
                    seed: int | None = None, target: int | None = None,
                    rules: str | ScoringTable | None = None, first_seat: int | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    client: Any = None) -> FarkleResult:
    """Simulate ``games`` Farkle games, one seat per policy; returns a :class:`FarkleResult`.

    ``seats``: 1..7 parsed policies (or PolicyTables); ``target``: positive multiple of
    50 (default 10,000); ``rules``: preset name, TOML path or ScoringTable (default
    ``default``); ``first_seat``: fixed starting seat, else it rotates with the game index;
    ``client``: a ``distributed.Client`` to run the chunks on a Dask cluster (same
    results as a local run). All-threshold seats are played by the lanes kernel, any
    other mix by the general one (:func:`kernel_for`; ``result.kernel``).

    >>> from dicelab.registry import parse_policy
    >>> r = simulate_farkle([parse_policy("threshold-300")], games=1000, seed=1)
    >>> r.to_dict()["games"]
    1000
    """
    if not 1 <= len(seats) <= MAX_SEATS:
        raise UserError(f"Farkle takes 1 to {MAX_SEATS} seats, not {len(seats)}")
    if isinstance(games, bool) or not isinstance(games, int | np.integer) or games <= 0:
        raise UserError(f"--games must be a positive number of games, not {games}")
    target = check_target(target)
    table = rules if isinstance(rules, ScoringTable) else load_scoring(rules)
    if first_seat is not None and not 0 <= first_seat < len(seats):
        raise UserError(f"--first must be a seat number 0..{len(seats) - 1}, not {first_seat}")
    seed = check_seed(seed)
    for seat in seats:
        if not isinstance(seat, PolicySpec | PolicyTable):
            raise TypeError(f"a seat is a PolicySpec or a PolicyTable, not {type(seat)}")
        if isinstance(seat, PolicySpec) and seat.game != "farkle":
            raise UserError(f"policy '{seat.name}' is a {seat.game} policy, not farkle")
    plan = FarklePlan(tuple(seats), table, target, seed, int(games),
                      None if first_seat is None else int(first_seat),
                      batch_chunks=BATCH_CHUNKS)

    import numba

    if client is None:
        plan.prepare()  # policy tables and compilation before the clock starts
    t0 = time.perf_counter()
    acc = run_plan(plan, progress=progress, client=client)
    elapsed = time.perf_counter() - t0
    counters = acc["counters"]
    if counters[K.C_GAMES] != games:  # a kernel bug, never a user error
        raise RuntimeError(f"played {counters[K.C_GAMES]} games, expected {games}")
    return FarkleResult(seats=[s.name for s in seats],
                        seat_params=[_seat_params(x) for x in seats],
                        rules=table, target=target, seed=seed, games=int(games),
                        first_seat=first_seat, stats=acc["stats"], hist=acc["hist"],
                        counters=counters, elapsed_s=elapsed, threads=numba.get_num_threads(),
                        kernel=plan.kernel,
                        **executor_info(client))


@dataclass
class BustRiskResult:
    """Exact and simulated bust probabilities for 1..6 dice."""

    rules: ScoringTable
    seed: int
    rolls: int
    exact: dict[int, float]
    busts: dict[int, int]
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for n in range(1, 7):
            b = self.busts[n]
            e = proportion_estimate(b, self.rolls)
            rows.append({"dice": n, "exact": self.exact[n], "simulated": e.mean,
                         "se": e.se, "ci95": list(wilson_interval(b, self.rolls)),
                         "busts": b, "rolls": self.rolls})
        return {"rules": self.rules.name, "seed": self.seed, "rolls_per_dice_count": self.rolls,
                "elapsed_s": self.elapsed_s, "bust_risk": rows}


def simulate_bust_frequencies(rules: str | ScoringTable | None = None, *, rolls: int = 1_000_000,
                              seed: int | None = None) -> BustRiskResult:
    """Roll 1..6 dice ``rolls`` times each and count busts, beside the exact bust risk.

    >>> r = simulate_bust_frequencies(rolls=10_000, seed=1)
    >>> round(r.exact[6], 4)
    0.0231
    """
    if isinstance(rolls, bool) or not isinstance(rolls, int | np.integer) or rolls <= 0:
        raise UserError(f"--games must be a positive number of rolls, not {rolls}")
    table = rules if isinstance(rules, ScoringTable) else load_scoring(rules)
    seed = check_seed(seed)
    compiled = compile_table(table)
    max_keep = np.ascontiguousarray(compiled.max_keep, dtype=np.int64)
    bounds = chunk_bounds(int(rolls))
    K.bust_counts(np.zeros((0, 4), np.uint64), np.zeros(1, np.int64), max_keep,
                  np.zeros((0, 7), np.int64))
    t0 = time.perf_counter()
    states = chunk_states(seed, 0, len(bounds) - 1)
    out = np.zeros((len(bounds) - 1, 7), dtype=np.int64)
    K.bust_counts(states, bounds, max_keep, out)
    elapsed = time.perf_counter() - t0
    total = out.sum(axis=0)
    return BustRiskResult(rules=table, seed=seed, rolls=int(rolls),
                          exact={n: float(compiled.bust[n]) for n in range(1, 7)},
                          busts={n: int(total[n]) for n in range(1, 7)}, elapsed_s=elapsed)
