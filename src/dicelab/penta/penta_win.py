"""penta-win against ``optimal``: the measurement with common random numbers, and the
clairvoyant ceiling, exactly (layer 2).

``penta-win`` (:mod:`dicelab.penta.objective_play`) maximises, at every decision, its
chance of finishing above the other seats, who are taken to play ``optimal`` from the
cards they hold. :func:`measure_penta_win` seats it at every position of a table whose
other seats play ``optimal`` and plays each table beside a table of ``optimal`` players on
the same seed with a stream per (game, seat, turn): every seat rolls the same dice in both,
the opponents play the same games, and a game's difference is due to penta-win's
decisions alone. The score of a seat is P(alone on top) + 1/2 P(shared top); the gain is
the paired difference per chunk of games, with a 95% interval over the chunks (Student's
t with one degree of freedom fewer than the units: :func:`paired_gain`). The chunks are
those of a tournament's tables (:func:`dicelab.seeding.unit_chunk_games`: 8,192 games, or
16 smaller ones for a run under 131,072 games); a run needs two whole chunks
(:data:`MIN_GAMES`) for an interval, and fewer games are refused.

The *clairvoyant* player knows the opponent's final TOTAL ``m`` before it starts and
plays the best policy for ``1[F > m] + 1/2 1[F = m]``: with ``optimal``'s exact
distribution ``p``, its share is ``sum_m p(m) W(m)``, ``W`` the row of the empty card in
the two-threshold table (:func:`~dicelab.penta.objectives.tie_rows`, :func:`tie_table`).
That is the ceiling of any two-seat player against ``optimal``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dicelab import cache as disk_cache
from dicelab import seeding
from dicelab.config import MIN_UNIT_GAMES
from dicelab.errors import UserError
from dicelab.penta.distribution import score_distribution
from dicelab.penta.objectives import (
    BEAT_MAX,
    FORMAT_VERSION,
    at_least_table,
    cached_rows,
    new_row_table,
    rows_of,
    score_bounds,
    start_values,
    tie_rows,
)
from dicelab.penta.rules import RuleSet, get_rules
from dicelab.penta.solver import solve_rows
from dicelab.penta.widget import RowTable
from dicelab.rng import STREAM_PER_TURN
from dicelab.stats import Estimate
from dicelab.text import is_whole

_TIES: dict[str, RowTable] = {}
#: The fewest games per seat position :func:`measure_penta_win` takes: two whole chunks
#: of the smallest size, the independent units its interval is estimated over.
MIN_GAMES = 2 * MIN_UNIT_GAMES


def tie_table(rules: str | RuleSet | None = None,
              progress: Callable[[int, int], None] | None = None,
              build: bool = True) -> RowTable | None:
    """The most ``E[(1[F >= d] + 1[F >= d + 1]) / 2]`` (``F`` the points to come) for every
    state and need ``d >= 0``: the clairvoyant's table (about 2.3 GB, cached on disk and
    memory-mapped; refused before allocating if it does not fit the memory limit). Not
    in the cache and not ``build``: ``None``."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    if rs.digest not in _TIES:
        spec = tie_rows(score_bounds(rs))
        key = disk_cache.entry_key("penta-tie-table", rs.name, rs.digest)
        if not build and disk_cache.load_mapped(key, f"{FORMAT_VERSION}", {"F"}) is None:
            return None

        def build_table() -> dict[str, np.ndarray]:
            t0 = time.perf_counter()
            R = new_row_table(spec, f"the Penta clairvoyant table (rules '{rs.name}')")
            solve_rows(R, rs, progress=progress)
            return {"F": R.F, "lo": R.lo, "width": R.width,
                    "solve_s": np.array(time.perf_counter() - t0)}

        arrays, _ = cached_rows(key, f"{FORMAT_VERSION}", build_table)
        _TIES[rs.digest] = rows_of(arrays)
    return _TIES[rs.digest]


def clairvoyant_ceiling(rules: str | RuleSet | None = None,
                        progress: Callable[[int, int], None] | None = None,
                        build: bool = True) -> float | None:
    """P(win) + 1/2 P(tie) of the clairvoyant two-seat player against ``optimal``
    (exact); ``None`` if its table is not cached and not ``build``."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    table = tie_table(rs, progress, build)
    if table is None:
        return None
    p = score_distribution("optimal", rs).probability
    row = start_values(table, 0)[1:]  # needs 0 .. most (then 0.0)
    w = np.zeros(p.size)
    n = min(p.size, row.size)
    w[:n] = row[:n]
    return float(p @ w)


def clairvoyant_bounds(seats: int = 2, rules: str | RuleSet | None = None
                       ) -> tuple[float, float]:
    """Exact bounds on the clairvoyant's win share at a table of ``seats`` (the others play
    ``optimal``), from the table of every target (``A(T)``, the most P(final >= T)).
    Knowing the highest of the others' TOTALs ``M`` and how many (``k``) reach it, the
    clairvoyant plays for ``(k 1[F > M] + 1[F >= M]) / (k + 1)``: its best is at least
    ``A(M + 1)`` and at most ``(k A(M + 1) + A(M)) / (k + 1)``. ``seats``: 2 to
    ``BEAT_MAX + 1`` (the clairvoyant and up to ``beat:N``'s most opponents)."""
    if not is_whole(seats) or not 2 <= seats <= BEAT_MAX + 1:
        raise UserError(f"the clairvoyant's bounds are for tables of 2 to {BEAT_MAX + 1} "
                        f"seats, not {seats!r}")
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    p = score_distribution("optimal", rs).probability
    best = at_least_table(rs).best
    A = np.zeros(p.size + 1)  # A(T) for T = 0 .. the last TOTAL + 1
    k = min(A.size, best.size)
    A[:k] = best[:k]
    n = seats - 1
    below = np.cumsum(p) - p
    lo = hi = 0.0
    for k in range(1, n + 1):
        pk = math.comb(n, k) * p ** k * below ** (n - k)  # P(M = m, k of them at m)
        lo += float(pk @ A[1:])
        hi += float(pk @ ((k * A[1:] + A[:-1]) / (k + 1)))
    return lo, hi


@dataclass(frozen=True)
class WinMeasurement:
    """penta-win against ``seats - 1`` ``optimal`` players, at every seat, with common
    random numbers (see the module docstring). Per seat position: penta-win's score and
    ``optimal``'s in the same seat of the all-``optimal`` table; ``gain``: their mean
    paired difference over the positions, ``gain_ci95`` its 95% interval (Student's t
    over the ``chunks``: the independent units, chunks of games with a short last one
    merged into the one before it, :func:`paired_gain`)."""

    rules: str
    seats: int
    games: int
    seed: int
    win_scores: tuple[float, ...]
    optimal_scores: tuple[float, ...]
    gain: float
    gain_se: float
    chunks: int
    elapsed_s: float
    games_per_s: float
    ceiling: float | None = None
    ceiling_bounds: tuple[float, float] | None = None

    @property
    def gain_ci95(self) -> tuple[float, float]:
        return Estimate(self.gain, self.gain_se, self.games, df=self.chunks - 1).ci95

    @property
    def share_of_gap(self) -> float | None:
        """The gain as a share of the gap between a fair share and the ceiling."""
        if self.ceiling is None:
            return None
        return self.gain / (self.ceiling - 1.0 / self.seats)

    @property
    def share_of_gap_bounds(self) -> tuple[float, float] | None:
        """The share of the gap for the ceiling's upper and lower bound."""
        if self.ceiling_bounds is None:
            return None
        lo, hi = self.ceiling_bounds
        fair = 1.0 / self.seats
        return self.gain / (hi - fair), self.gain / (lo - fair)

    def to_dict(self) -> dict:
        return {"game": "penta", "rules": self.rules, "seats": self.seats,
                "games_per_position": self.games, "seed": self.seed,
                "penta_win_scores": list(self.win_scores),
                "optimal_scores": list(self.optimal_scores),
                "fair_share": 1.0 / self.seats, "gain": self.gain, "gain_se": self.gain_se,
                "gain_ci95": list(self.gain_ci95), "chunks": self.chunks,
                "penta_win_score": 1.0 / self.seats + self.gain,
                "clairvoyant_ceiling": self.ceiling,
                "clairvoyant_ceiling_bounds": (None if self.ceiling_bounds is None
                                               else list(self.ceiling_bounds)),
                "share_of_gap": self.share_of_gap,
                "share_of_gap_bounds": (None if self.ceiling_bounds is None
                                        else list(self.share_of_gap_bounds)),
                "elapsed_s": self.elapsed_s,
                "penta_win_games_per_s": self.games_per_s}

    def manifest(self) -> dict:
        """What reproduces the run (:func:`dicelab.results.save_run`)."""
        return {"experiment": "penta-win-against-optimal", "game": "penta",
                "rules": self.rules, "seats": self.seats, "games": self.games,
                "seed": self.seed, "streams": "per (game, seat, turn)",
                "elapsed_s": self.elapsed_s}

    def to_frame(self):
        """One row per seat position of penta-win: its score, ``optimal``'s in that seat of
        the all-``optimal`` table on the same dice, and the fair share."""
        import pandas as pd

        return pd.DataFrame({"seats": self.seats, "position": range(self.seats),
                             "games": self.games, "penta_win_score": self.win_scores,
                             "optimal_score": self.optimal_scores,
                             "fair_share": 1.0 / self.seats})


def _chunk_scores(res, seat: int) -> np.ndarray:
    """Per chunk: the seat's P(alone on top) + 1/2 P(shared top) (chunks, )."""
    ct = res.chunk_tallies
    n = np.diff(seeding.chunk_bounds(res.games, chunk_games=res.chunk_games))
    return (ct["wins"][:, seat] + 0.5 * ct["tied"][:, seat]) / n


def paired_gain(diffs: np.ndarray, n: np.ndarray) -> tuple[float, float, int]:
    """(gain, its standard error, units) of chunks of ``n[c]`` games whose mean paired
    difference is ``diffs[c]``: the mean over the games, and ``sigma / sqrt(games)`` with
    ``sigma^2`` estimated as ``sum_c n_c (d_c - gain)^2 / (C - 1)`` over the ``C`` units
    (unbiased whatever their sizes). The units are the chunks, a last chunk of fewer than
    an eighth of the first's games merged into the one before it (a unit of a few games
    would add a degree of freedom whose term is far from normal: with a last chunk of one
    game the 95% interval would cover the gain about 89% of the time). At least two
    units.

    >>> gain, se, chunks = paired_gain(np.array([0.1, 0.3]), np.array([100, 100]))
    >>> round(gain, 12), round(se, 12), chunks
    (0.2, 0.1, 2)
    """
    n = np.asarray(n, dtype=np.float64)
    diffs = np.asarray(diffs, dtype=np.float64)
    if n.size > 1 and n[-1] < n[0] / 8:
        tail = (n[-2] * diffs[-2] + n[-1] * diffs[-1]) / (n[-2] + n[-1])
        n = np.append(n[:-2], n[-2] + n[-1])
        diffs = np.append(diffs[:-2], tail)
    c = n.size
    if c < 2:
        raise ValueError("an interval needs two units at least")
    games = float(n.sum())
    gain = float((n * diffs).sum() / games)
    sigma2 = float((n * (diffs - gain) ** 2).sum()) / (c - 1)
    return gain, math.sqrt(sigma2 / games), c


def measure_penta_win(seats: int = 2, games: int = 1_000_000, seed: int | None = None,
                      rules: str | None = None, ceiling: bool = True,
                      progress: Callable[[int, int], None] | None = None,
                      build_ceiling: bool = False) -> WinMeasurement:
    """Measure penta-win against ``optimal`` at every seat of tables of ``seats`` (see the
    module docstring); ``ceiling``: with the clairvoyant ceiling's exact bounds
    (:func:`clairvoyant_bounds`, from the table of every target: solved once, minutes,
    then cached) and, for two seats, the ceiling itself when its own table is cached
    (``build_ceiling`` builds it: 2.3 GB, minutes, then cached)."""
    from dicelab.penta.objective_play import WIN_MAX_SEATS
    from dicelab.penta.simulate import simulate_penta

    if not is_whole(seats) or not 2 <= seats <= WIN_MAX_SEATS:
        raise UserError(f"penta-win plays at tables of 2 to {WIN_MAX_SEATS} seats, not "
                        f"{seats!r}")
    seats = int(seats)
    rs = get_rules(rules)
    seed = seeding.check_seed(seed)
    games = seeding.check_games(games)
    if games < MIN_GAMES:
        raise UserError(f"penta-win's gain has an interval from two chunks of "
                        f"{MIN_UNIT_GAMES:,} games on: games must be at least "
                        f"{MIN_GAMES:,}, not {games:,}")
    chunk = seeding.unit_chunk_games(games)
    base = simulate_penta(["optimal"] * seats, games=games, seed=seed, rules=rs.name,
                          per_chunk=True, streams=STREAM_PER_TURN, chunk_games=chunk)
    n = np.diff(seeding.chunk_bounds(games, chunk_games=chunk)).astype(np.float64)
    diffs = np.zeros(n.size)
    win_scores, opt_scores = [], []
    elapsed = 0.0
    for p in range(seats):
        names = ["optimal"] * seats
        names[p] = "penta-win"
        res = simulate_penta(names, games=games, seed=seed, rules=rs.name, per_chunk=True,
                             streams=STREAM_PER_TURN, progress=progress, chunk_games=chunk)
        elapsed += res.elapsed_s
        w, o = _chunk_scores(res, p), _chunk_scores(base, p)
        win_scores.append(float((w * n).sum() / games))
        opt_scores.append(float((o * n).sum() / games))
        diffs += (w - o) / seats
    gain, se, c = paired_gain(diffs, n)
    top = (clairvoyant_ceiling(rs, build=build_ceiling) if ceiling and seats == 2
           else None)
    bounds = clairvoyant_bounds(seats, rs) if ceiling else None
    return WinMeasurement(rs.name, seats, games, int(seed), tuple(win_scores),
                          tuple(opt_scores), gain, se, c, elapsed, seats * games / elapsed,
                          top, bounds)


__all__ = ["MIN_GAMES", "WinMeasurement", "clairvoyant_bounds", "clairvoyant_ceiling",
           "measure_penta_win", "paired_gain", "tie_table"]
