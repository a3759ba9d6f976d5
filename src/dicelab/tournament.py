"""Tournaments: every seat assignment of a set of policies, balanced over the games, with
win rates, finishing places, pairwise verdicts and ratings, each with its uncertainty
(layer 2), for either game.

``tournament(["ai", "max-ev", "threshold-300"], seats=2, games=200_000, seed=1)``, or
``tournament(["optimal", "greedy"], seats=4, ...)`` for Penta:

* **Tables.** With at least as many policies as seats, every combination of ``seats``
  policies is a *group*, played in all its rotations (policy ``i`` of the group in seat
  ``(i + r) % seats``), so each policy sits in each seat equally often. With fewer
  policies than seats, one group: the seating ``s -> policies[(s + r) % K]`` for every
  rotation ``r``. Each table plays ``games`` games. What a game is lives behind one small
  interface, :class:`TableGame` (:class:`FarkleTables`, :class:`PentaTables`): it plays
  one table's games and returns who finished ahead of whom, chunk by chunk; everything
  below is the same for both games.
* **Common random numbers.** The tables of a group share their seed and draw one
  stream per turn (:data:`dicelab.rng.STREAM_PER_TURN`), keyed by (game, seat, turn
  number): in Farkle the seat is the place in the turn order (the starting seat rotates
  with the game index), in Penta the seat itself. Whoever sits there in game ``i`` gets
  the same dice in every rotation, so when the seats are swapped the luck goes to the
  other policy and much of it cancels in any comparison within the group (``crn=False``:
  a seed per table and the usual stream per chunk). In Penta the first roll of every
  turn is the same for whoever sits in the seat; each reroll takes the next draw of the
  turn's stream, whose leading base-6 digits are the faces, so a reroll of as many dice
  at the same point of the turn rolls the same faces and one of fewer dice a subset
  (but for the rare rejected draw).
* **Uncertainty.** The independent units are (group, chunk of games): a chunk's tables
  share their dice, different chunks and groups do not. Every rate is a ratio of sums
  over units, with its delta-method standard error over the units, so the correlation
  the common dice create is counted, not assumed away. The variance the same games would
  have had with independent dice per table (each table's own chunk-to-chunk variance,
  without the covariances) gives the measured variance reduction: *effective games per
  game*.
* **Pairwise verdicts.** For each pair, the share of their common games in which the
  first finished ahead (level finishes count half), a two-sided z test of one half, and
  Holm's correction over all pairs (:mod:`statsmodels`), so a table of ten policies does
  not declare chance differences.
* **Ratings.** Bradley-Terry strengths from the pairwise results (every game of a
  table of ``N`` is broken into its pairwise finishes: rank breaking, the standard
  consistent estimator of Plackett-Luce strengths), fitted by :func:`choix.
  ilsr_pairwise_dense`, on the Elo scale (400 log10 of the strength ratio), with 95%
  t intervals on a jackknife standard error over the units within each group (see
  :meth:`Tournament.ratings`). Per-policy rates are stratified the same way: the groups
  are the design, not a sample. A rating measures how often a policy finishes ahead of
  another, not how often it wins its table; at three or more seats the two can
  disagree, and the standings are ranked by the win rate.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from dicelab.config import DEFAULT_GAMES
from dicelab.errors import UserError
from dicelab.registry import PolicySpec, check_distinct, parse_policy
from dicelab.seeding import check_games, check_seed, group_seed
from dicelab.stats import (
    ALPHA,
    Estimate,
    fields,
    holm,
    merge_short_tail,
    quantile95,
    unit_p,
    unit_ratio,
)
from dicelab.text import counted

#: A rating's jackknife SE (Elo) at or below this is no spread, only the fit's rounding.
RATING_SPREAD = 1e-6
#: Elo points per natural-log unit of strength.
ELO = 400 / math.log(10)


def lineups(n_policies: int, seats: int) -> list[tuple[int, tuple[int, ...]]]:
    """(group, policy index per seat) of every table, in order (see the module docstring).

    >>> lineups(3, 2)
    [(0, (0, 1)), (0, (1, 0)), (1, (0, 2)), (1, (2, 0)), (2, (1, 2)), (2, (2, 1))]
    >>> lineups(2, 3)
    [(0, (0, 1, 0)), (0, (1, 0, 1))]
    """
    if n_policies >= seats:
        out = []
        for g, combo in enumerate(itertools.combinations(range(n_policies), seats)):
            for r in range(seats):
                out.append((g, tuple(combo[(s - r) % seats] for s in range(seats))))
        return out
    return [(0, tuple((s + r) % n_policies for s in range(seats))) for r in range(n_policies)]


#: The figures a tournament saves with ``--out`` (:meth:`Tournament.figures`).
FIGURE_FILES = ("win-matrix.png", "ratings.png")


def count_tables(n_policies: int, seats: int) -> int:
    """``len(lineups(n_policies, seats))``, without listing them.

    >>> count_tables(3, 2), count_tables(2, 3), count_tables(2, 2**63)
    (6, 2, 2)
    """
    if n_policies >= seats:
        return math.comb(n_policies, seats) * seats
    return n_policies


def _check_size(n_policies: int, seats: int, games: int) -> None:
    """Refuse, before listing the tables, a tournament whose tables and per-chunk sums
    would not fit in the memory limit."""
    from dicelab.resources import check_memory
    from dicelab.seeding import n_chunks, unit_chunk_games

    tables, chunks = count_tables(n_policies, seats), n_chunks(games, unit_chunk_games(games))
    per_table = 8 * seats + 64 + chunks * seats * (3 + seats) * 8  # lineup, outcomes
    units = tables * chunks * n_policies * (4 + 3 * n_policies) * 8
    check_memory(f"a tournament of {tables:,} tables of {seats:,} seats",
                 tables * per_table + units)


@dataclass(frozen=True)
class PolicyStanding:
    """One policy over the whole tournament."""

    policy: str
    games: int  # seat-games it played
    win_rate: Estimate  # won alone
    tie_rate: Estimate  # shared the top
    mean_place: Estimate  # mean finishing place (1 = first; level seats share the best place)
    rating: float  # Elo scale, mean 0: how often it finishes ahead of another policy
    rating_ci95: tuple[float, float]
    rank: int  # by win rate (then tie rate, rating), 1 = best; equal on all, equal rank

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "games": self.games, **fields("win_rate", self.win_rate),
                **fields("tie_rate", self.tie_rate), **fields("mean_place", self.mean_place),
                "rating": self.rating, "rating_ci95": list(self.rating_ci95), "rank": self.rank}


@dataclass(frozen=True)
class PairVerdict:
    """``policy`` against ``opponent`` in the games they played at one table."""

    policy: str
    opponent: str
    games: int
    ahead: int  # games ``policy`` finished strictly ahead
    behind: int
    score: Estimate  # P(ahead) + P(level)/2
    p_value: float  # two-sided, score = 1/2
    p_holm: float  # Holm-corrected over all pairs
    effective_games_per_game: float  # variance with independent dice / with common dice

    @property
    def verdict(self) -> str:
        """``better``/``worse`` if Holm rejects an even score at 5% (Student's t on the
        units, or the sign test where every unit gives the same score:
        :func:`dicelab.stats.unit_p`), else ``tie``. Without a test (one chunk of games a
        table, or every unit exactly level) ``tie`` only for a score of exactly 1/2 (as
        identical policies on common dice play), else ``n/a``: 100% against 3% from one
        unit is not a tie but unmeasured."""
        if math.isnan(self.p_holm):
            return "tie" if self.score.mean == 0.5 else "n/a"
        if self.p_holm >= ALPHA:
            return "tie"
        return "better" if self.score.mean > 0.5 else "worse"

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "opponent": self.opponent, "games": self.games,
                "ahead": self.ahead, "behind": self.behind, "score": self.score.mean,
                "score_se": self.score.se, "score_ci95": list(self.score.ci95),
                "p_value": self.p_value, "p_holm": self.p_holm, "verdict": self.verdict,
                "effective_games_per_game": self.effective_games_per_game}


@dataclass
class Tournament:
    """A finished tournament: its tables and the per-unit sums everything is estimated
    from (``units``, ``pair_units``, ``cells``: see :func:`_units`)."""

    game: str
    policies: list[str]
    seats_per_table: int
    games_per_table: int
    seed: int
    crn: bool
    rules: Any  # FarkleRules or a Penta RuleSet: JSON gives its name, a manifest to_dict()
    target: int | None
    tables: list[dict[str, Any]]
    units: np.ndarray
    pair_units: np.ndarray
    cells: np.ndarray
    strata: np.ndarray  # the group (or table, without common dice) of each unit
    elapsed_s: float
    chunk_games: int  # games per chunk of a table: its units (seeding.unit_chunk_games)
    executor: str = "local"
    workers: int | None = None
    #: each policy's family and parameters, in the order of ``policies``
    policy_params: list[dict[str, Any]] = field(default_factory=list)
    #: numba threads of this process; the manifest records the threads that played
    #: (:func:`dicelab.parallel.threads_used`: one where only the Python referee played)
    threads: int | None = None
    _memo: dict = field(default_factory=dict, repr=False)

    # units[u, p, :] = [seat-games, wins, ties, ahead-of-it]
    _GAMES, _WINS, _TIES, _AHEAD = range(4)

    def pairs(self) -> list[PairVerdict]:
        """Every pair that met, first-listed policy first, with Holm-corrected verdicts."""
        if "pairs" in self._memo:
            return self._memo["pairs"]
        rows = []
        k = len(self.policies)
        for i, j in itertools.combinations(range(k), 2):
            ahead, level, common = (self.pair_units[:, i, j, f] for f in range(3))
            num = ahead + 0.5 * level
            if common.sum() == 0:
                continue
            score = unit_ratio(num, common, bounds=(0.0, 1.0))
            # the same games with each table's own dice: no covariance between tables
            n = int((common > 0).sum())
            # NaN with one unit a group, or every unit level: no test
            p = unit_p(score, n, 0.5)
            s_nn, s_nd, s_dd = self.cells[i, j]
            r = score.mean
            d = float(common.sum())
            var_ind = (s_nn - 2 * r * s_nd + r * r * s_dd) / max(n - 1, 1) * n / d**2
            var_crn = score.se**2
            behind = d - ahead.sum() - level.sum()
            rows.append([i, j, int(d), int(ahead.sum()), int(behind), score, p,
                         var_ind / var_crn if var_crn > 0 else math.nan])
        adjusted = holm([r[6] for r in rows])
        out = [PairVerdict(self.policies[i], self.policies[j], g, a, b, s, p, h, e)
               for (i, j, g, a, b, s, p, e), h in zip(rows, adjusted, strict=True)]
        self._memo["pairs"] = out
        return out

    def ratings(self) -> tuple[np.ndarray, np.ndarray]:
        """Bradley-Terry ratings (Elo scale, mean 0) and their 95% intervals (policies, 2):
        a t interval on a jackknife standard error over the units, deleting one unit of
        one group at a time (the rest of its group reweighted to the group's size: the
        design is fixed), on the units' degrees of freedom (units minus groups), the
        same as every other interval of the tournament. NaN where there is no spread to
        measure: a single unit a group, or none at all.

        Both NaN when no finite rating exists: when some policies finished ahead of all
        the others in every game they met (the graph of who finished ahead of whom is not
        strongly connected), Bradley-Terry's maximum likelihood puts them infinitely far
        apart, and any number (the fit's regularisation gave about 1,800) would be made
        up. The intervals alone are NaN when deleting one unit would leave no finite
        rating (every finish of a policy ahead of some other lies in one unit): the
        jackknife would measure the distance to that made-up number (a policy ahead in
        all but one of 131,072 games got the interval [-2,464, 4,511] around 1,024).

        Not a bootstrap: with few units a group (two chunks of games a table) the
        resamples take only a handful of distinct values and the percentile interval is
        far too narrow; the t interval widens with the few degrees of freedom instead."""
        if "ratings" in self._memo:
            return self._memo["ratings"]
        import choix
        from scipy.sparse.csgraph import connected_components

        def fit(sums: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
            wins = sums[..., 0] + 0.5 * sums[..., 1]
            np.fill_diagonal(wins, 0.0)  # (level finishes count half a win each way)
            return choix.ilsr_pairwise_dense(wins, alpha=1e-9, max_iter=1000,
                                             initial_params=start, tol=1e-12)

        def finite(sums: np.ndarray) -> bool:
            """Whether a finite rating exists: who finished ahead of whom is strongly
            connected."""
            ahead = sums[..., 0] + 0.5 * sums[..., 1] > 0
            np.fill_diagonal(ahead, False)
            return connected_components(ahead, directed=True, connection="strong")[0] == 1

        total = self.pair_units.sum(axis=0)
        if not finite(total):
            none = np.full(len(self.policies), np.nan)
            self._memo["ratings"] = (none, np.stack([none, none], axis=1))
            return self._memo["ratings"]
        theta = fit(total)
        point = ELO * (theta - theta.mean())
        var = np.zeros(point.size)
        df = 0
        for g in np.unique(self.strata):
            members = np.nonzero(self.strata == g)[0]
            m = members.size
            if m < 2:
                continue
            group = self.pair_units[members].sum(axis=0)
            rest = total - group
            deleted = [rest + (group - self.pair_units[u]) * (m / (m - 1)) for u in members]
            if not all(finite(d) for d in deleted):
                var[:], df = np.nan, 0
                break
            reps = np.array([fit(d, theta) for d in deleted])
            reps = ELO * (reps - reps.mean(axis=1, keepdims=True))
            var += (m - 1) / m * ((reps - reps.mean(axis=0)) ** 2).sum(axis=0)
            df += m - 1
        half = quantile95(df) * np.sqrt(var) if df else np.full(point.size, np.nan)
        # no spread measures no error (below RATING_SPREAD: the fit's rounding)
        half = np.where(np.sqrt(var) > RATING_SPREAD, half, np.nan)
        ci = np.stack([point - half, point + half], axis=1)
        self._memo["ratings"] = (point, ci)
        return point, ci

    def standings(self) -> list[PolicyStanding]:
        """Every policy, ranked by its win rate (the share of its tables it won alone),
        then its tie rate, then its rating: what a table is played for. The rating
        measures something else, how often a policy finishes ahead of each other one, and
        at three or more seats it can order the policies differently (a policy that wins
        more tables but also finishes last more often rates lower)."""
        rating, ci = self.ratings()
        rows = []
        for p, name in enumerate(self.policies):
            u = self.units[:, p, :]
            games = u[:, self._GAMES]
            # seats ahead of it: 0 to seats - 1, so a place of 1 to seats
            place = unit_ratio(u[:, self._AHEAD], games, self.strata)
            rows.append((name, int(games.sum()),
                         unit_ratio(u[:, self._WINS], games, self.strata, bounds=(0.0, 1.0)),
                         unit_ratio(u[:, self._TIES], games, self.strata, bounds=(0.0, 1.0)),
                         Estimate(1.0 + place.mean, place.se, place.n, df=place.df,
                                  bounds=(1.0, float(self.seats_per_table))),
                         float(rating[p]),
                         (float(ci[p, 0]), float(ci[p, 1]))))
        def key(r):
            return (-r[2].mean, -r[3].mean, -np.nan_to_num(r[5]))

        rows.sort(key=key)
        # equal on every count, equal rank (1, 1, 3): a tie is not broken by the order given
        return [PolicyStanding(*r, 1 + sum(key(o) < key(r) for o in rows)) for r in rows]

    def matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(score, lo, hi), each (policies, policies): row i's score against column j with
        its 95% interval (NaN where they never met)."""
        k = len(self.policies)
        score, lo, hi = (np.full((k, k), np.nan) for _ in range(3))
        for p in self.pairs():
            i, j = self.policies.index(p.policy), self.policies.index(p.opponent)
            score[i, j], (lo[i, j], hi[i, j]) = p.score.mean, p.score.ci95
            score[j, i], lo[j, i], hi[j, i] = 1 - p.score.mean, 1 - hi[i, j], 1 - lo[i, j]
        return score, lo, hi

    def figures(self) -> dict[str, Any]:
        """The win matrix and the ratings as matplotlib figures, by file name."""
        from dicelab.plots import ratings_figure, win_matrix_figure

        rating, ci = self.ratings()
        what = (f"{self.game.capitalize()} tournament, {self.seats_per_table} seats, "
                f"{counted(self.games_per_table, 'game')} per table, seed {self.seed}")
        matrix, ratings = FIGURE_FILES
        return {matrix: win_matrix_figure(self.policies, *self.matrix(), title=what),
                ratings: ratings_figure(self.policies, rating, ci, title=what)}

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "policies": self.policies,
                "seats_per_table": self.seats_per_table,
                "games_per_table": self.games_per_table, "chunk_games": self.chunk_games,
                "seed": self.seed, "crn": self.crn,
                "rules": self.rules.name, "target": self.target,
                "ending": getattr(self.rules, "ending", None),
                "tables": self.tables, "elapsed_s": self.elapsed_s,
                "executor": self.executor, "workers": self.workers,
                "standings": [s.to_dict() for s in self.standings()],
                "pairs": [p.to_dict() for p in self.pairs()]}

    def to_frame(self) -> pd.DataFrame:
        """One row per policy (standings) and one per pair, told apart by ``kind``."""
        from dicelab.results import frame_row

        rows = [{"kind": "policy", **frame_row(s.to_dict())} for s in self.standings()]
        rows += [{"kind": "pair", **frame_row(p.to_dict())} for p in self.pairs()]
        return pd.DataFrame(rows)

    def manifest(self) -> dict[str, Any]:
        from dicelab.results import played_by

        return {"game": self.game, "experiment": "tournament",
                **played_by(self.policies, self.policy_params,
                            kernels=[t.get("kernel") for t in self.tables],
                            threads=self.threads, executor=self.executor,
                            workers=self.workers),
                "seats_per_table": self.seats_per_table,
                "games_per_table": self.games_per_table, "chunk_games": self.chunk_games,
                "seed": self.seed, "crn": self.crn, "rules": self.rules.to_dict(),
                "target": self.target, "tables": self.tables, "elapsed_s": self.elapsed_s}


#: Columns of a table's outcomes, (chunks, seats, O_BEAT + seats) int64, what every game
#: gives a tournament: games the seat won alone, shared the top, the seats that finished
#: strictly ahead of it (summed over games), and from column O_BEAT + q on the games it
#: finished strictly ahead of seat q.
O_WINS, O_TIES, O_AHEAD, O_BEAT = range(4)


class TableGame(Protocol):
    """The game-specific part of a tournament (and of a sequential test): one table's
    games as per-chunk outcomes.

    ``game``: its name; ``rules``: the rules (FarkleRules or a Penta RuleSet), which the
    results record by ``name`` (JSON) and ``to_dict()`` (manifests); ``target``:
    Farkle's target (None for Penta). Each game's class (in :data:`TABLE_GAMES`) also has
    ``check(specs, seats)``, the seats it plays (a ``UserError`` otherwise), and
    ``make(rules, ending, target)``, which checks those and returns the instance."""

    game: str
    rules: Any
    target: int | None

    def play(self, seats: list[PolicySpec], *, games: int, seed: int, crn: bool,
             chunk_games: int, progress: Callable[[int, int], None], client: Any
             ) -> tuple[np.ndarray, str]:
        """``games`` games of ``seats`` from ``seed`` (``crn``: the stream per turn that
        tables sharing the seed share), as outcomes (layout ``O_*``), chunk by chunk
        (``chunk_games`` games each), and the name of the game kernel that played them."""

    def plan(self, seats: list[PolicySpec], *, games: int, seed: int, crn: bool,
             chunk_games: int) -> Any:
        """The same games as a :class:`dicelab.runner.Plan` in chunks of ``chunk_games``,
        to be played range by range; :meth:`outcomes` reads what it returns. Its
        ``kernel`` names the game kernel that plays them."""

    def outcomes(self, acc: dict[str, np.ndarray]) -> np.ndarray:
        """The outcomes (layout ``O_*``) of a plan's accumulators, chunk by chunk."""


@dataclass(frozen=True)
class FarkleTables:
    """Farkle tables: 2 to 7 seats, a stream per turn keyed by the place in the turn
    order (:data:`dicelab.rng.STREAM_PER_TURN`)."""

    rules: Any
    target: int
    game: str = "farkle"

    @classmethod
    def make(cls, rules: Any, ending: str | None, target: int | None) -> FarkleTables:
        """``rules``: a preset name, a TOML path or FarkleRules (None: ``default``)."""
        from dicelab.farkle.rules import check_target, load_rules

        return cls(load_rules(rules, ending), check_target(target))

    @staticmethod
    def check(specs: list[PolicySpec], seats: int) -> None:
        from dicelab.farkle.rules import MAX_SEATS

        if not 2 <= seats <= MAX_SEATS:
            raise UserError(f"--seats must be 2 to {MAX_SEATS} for Farkle, not {seats}")
        from dicelab.farkle.builtin import family_of

        for s in specs:
            if family_of(s).two_seats and seats != 2:
                raise UserError(f"{s.name} plays two-seat games only; use --seats 2")

    def play(self, seats, *, games, seed, crn, chunk_games, progress, client):
        from dicelab.farkle import kernels as K
        from dicelab.farkle.simulate import simulate_farkle

        res = simulate_farkle(seats, games=games, seed=seed, target=self.target,
                              rules=self.rules, progress=progress, client=client,
                              per_chunk=True, chunk_games=chunk_games,
                              streams=K.STREAM_PER_TURN if crn else K.STREAM_PER_CHUNK)
        return self._columns(res.chunk_stats), res.kernel

    def plan(self, seats, *, games, seed, crn, chunk_games):
        from dicelab.farkle import kernels as K
        from dicelab.farkle.simulate import FarklePlan

        return FarklePlan(tuple(seats), self.rules, self.target, seed, games,
                          streams=K.STREAM_PER_TURN if crn else K.STREAM_PER_CHUNK,
                          chunk_games=chunk_games, per_chunk=True)

    def outcomes(self, acc) -> np.ndarray:
        from dicelab.runner import PER_CHUNK

        return self._columns(acc[PER_CHUNK + "stats"])

    @staticmethod
    def _columns(chunk_stats) -> np.ndarray:
        from dicelab.farkle import kernels as K

        st = np.asarray(chunk_stats, dtype=np.int64)
        n = st.shape[1]
        return st[:, :, [K.ST_WINS, K.ST_TIES, K.ST_AHEAD, *range(K.ST_BEAT, K.ST_BEAT + n)]]


@dataclass(frozen=True)
class PentaTables:
    """Penta tables: any number of seats (within the memory limit), a stream per turn
    keyed by the seat (:data:`dicelab.rng.STREAM_PER_TURN`); the highest TOTAL wins,
    equal TOTALs share it."""

    rules: Any
    target: None = None
    game: str = "penta"

    @classmethod
    def make(cls, rules: Any, ending: str | None, target: int | None) -> PentaTables:
        """``rules``: a rule-set name (None: ``seed``) or a RuleSet."""
        from dicelab.penta.rules import RuleSet, get_rules, refuse_farkle_options

        refuse_farkle_options(("--target", target), ("--ending", ending))
        return cls(rules if isinstance(rules, RuleSet) else get_rules(rules))

    @staticmethod
    def check(specs: list[PolicySpec], seats: int) -> None:
        if seats < 2:
            raise UserError(f"--seats must be at least 2 for Penta, not {seats}")

    def play(self, seats, *, games, seed, crn, chunk_games, progress, client):
        from dicelab.penta.simulate import simulate_penta
        from dicelab.rng import STREAM_PER_CHUNK, STREAM_PER_TURN

        res = simulate_penta(seats, games=games, seed=seed, rules=self.rules.name,
                             progress=progress, client=client, per_chunk=True,
                             streams=STREAM_PER_TURN if crn else STREAM_PER_CHUNK,
                             chunk_games=chunk_games)
        return self._columns(res.chunk_tallies), res.kernel

    def plan(self, seats, *, games, seed, crn, chunk_games):
        from dicelab.penta.simulate import PentaPlan, RefereePlan
        from dicelab.rng import STREAM_PER_CHUNK, STREAM_PER_TURN

        streams = STREAM_PER_TURN if crn else STREAM_PER_CHUNK
        from dicelab.penta.builtin import family_of

        for s in seats:  # before any game (as simulate_penta)
            family_of(s).check_rules(s, self.rules)
        if any(family_of(s).by_referee for s in seats):  # played by the Python referee
            return RefereePlan(tuple(seats), self.rules.name, seed, games, streams=streams,
                               chunk_games=chunk_games)
        return PentaPlan(tuple(seats), self.rules.name, seed, games, per_chunk=True,
                         streams=streams, chunk_games=chunk_games)

    def outcomes(self, acc) -> np.ndarray:
        from dicelab.penta.simulate import CHUNK_TALLIES, check_legal
        from dicelab.runner import PER_CHUNK

        check_legal(acc["illegal"])
        return self._columns({name: acc[PER_CHUNK + name] for name in CHUNK_TALLIES})

    @staticmethod
    def _columns(t: dict[str, np.ndarray]) -> np.ndarray:
        beat = np.asarray(t["beat"], dtype=np.int64)
        return np.concatenate([np.asarray(t["wins"], dtype=np.int64)[..., None],
                               np.asarray(t["tied"], dtype=np.int64)[..., None],
                               beat.sum(axis=1)[..., None], beat], axis=2)


#: Each game's tables, by game name.
TABLE_GAMES: dict[str, type[FarkleTables] | type[PentaTables]] = {
    "farkle": FarkleTables, "penta": PentaTables}


def tournament(policies: list[str | PolicySpec], *, seats: int = 2,
               games: int = DEFAULT_GAMES, seed: int | None = None, game: str | None = None,
               target: int | None = None, rules: str | None = None,
               ending: str | None = None, crn: bool = True,
               progress: Callable[[int, int], None] | None = None,
               client: Any = None, store: Any = None) -> Tournament:
    """Play every table of ``policies`` (names, or parsed specs) at ``seats`` seats,
    ``games`` games per table. The policies' game decides whose tables
    (:data:`TABLE_GAMES`); ``target`` and ``ending`` are Farkle's, ``rules`` either
    game's.

    ``store``: a :class:`dicelab.experiment_file.CellStore` keeping each finished table,
    so that an interrupted run continues where it stopped.

    >>> t = tournament(["threshold-300", "threshold-1000"], games=20_000, seed=1)
    >>> t.standings()[0].policy, t.pairs()[0].verdict
    ('threshold-300', 'better')
    """
    from dicelab.parallel import threads
    from dicelab.results import policy_params
    from dicelab.runner import executor_info
    from dicelab.seeding import unit_chunk_games

    specs = check_policies(policies, seats, game)
    games = check_games(games)
    chunk_games = unit_chunk_games(games)
    seed = check_seed(seed)
    _check_size(len(specs), seats, games)
    tables_of = TABLE_GAMES[specs[0].game].make(rules, ending, target)
    plan = lineups(len(specs), seats)
    k = len(specs)
    started = time.perf_counter()
    done = 0
    total = games * len(plan)
    per_table_units: list[np.ndarray] = []
    tables = []
    for t, (g, lineup) in enumerate(plan):
        s = group_seed(seed, g if crn else t)

        def tick(d: int, _n: int, base: int = done) -> None:
            if progress is not None:
                progress(base + d, total)

        seats_of = [specs[i] for i in lineup]
        cell = None if store is None else store.get(f"table-{t}")
        # a cell of another chunk layout (kept by a version that cut the games otherwise)
        # is played again: its chunks are not these units; so is one that does not name
        # the kernel that played it (kept by an older version)
        if (cell is None or not {"outcomes", "kernel"} <= set(cell)
                or cell.get("chunk_games") != chunk_games):
            outcomes, kernel = tables_of.play(seats_of, games=games, seed=s, crn=crn,
                                              chunk_games=chunk_games, progress=tick,
                                              client=client)
            cell = {"outcomes": outcomes, "chunk_games": np.int64(chunk_games),
                    "kernel": np.array(kernel)}
            if store is not None:
                store.put(f"table-{t}", cell)
        done += games
        tables.append({"group": g, "policies": [x.name for x in seats_of], "seed": s,
                       "kernel": str(cell["kernel"])})
        per_table_units.append(cell["outcomes"])
    units, pair_units, cells, strata = _units(plan, per_table_units, k, crn, games,
                                              chunk_games)
    return Tournament(tables_of.game, [s.name for s in specs], seats, games, seed, crn,
                      tables_of.rules, tables_of.target, tables, units, pair_units, cells,
                      strata, time.perf_counter() - started, chunk_games,
                      **executor_info(client), policy_params=[policy_params(s) for s in specs],
                      threads=threads())


def check_policies(policies: list[str | PolicySpec], seats: int, game: str | None,
                   what: str = "tournament") -> list[PolicySpec]:
    if len(policies) < 2:
        raise UserError(f"a {what} needs at least two policies, e.g. dicelab {what} "
                        "ai max-ev threshold-300")
    specs = [parse_policy(p, game) for p in policies]
    kinds = {s.game for s in specs}
    if len(kinds) > 1:
        raise UserError("a tournament takes policies of one game; got "
                        + ", ".join(f"{s.name} ({s.game})" for s in specs))
    check_distinct(policies, specs)
    TABLE_GAMES[specs[0].game].check(specs, seats)
    return specs


def _units(plan, per_table: list[np.ndarray], k: int, crn: bool, games: int,
           chunk_games: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sum the tables' per-chunk outcomes (layout ``O_*``, chunks of ``chunk_games``)
    into per-unit (group or table, chunk) sums, a short last chunk merged into the one
    before it (:func:`~dicelab.stats.merge_short_tail`).

    Returns ``units`` (units, policies, [seat-games, wins, ties, seats ahead]), ``pair``
    (units, policies, policies, [games p finished ahead of q, level, common games]),
    ``cells`` (policies, policies, [S_nn, S_nd, S_dd]): the sums of squares and
    products of those two over every (unit, table) cell, for the independent-dice
    variance; and ``strata`` (units,), the group (or table) of each unit."""
    from dicelab.seeding import chunk_bounds

    sizes = np.diff(chunk_bounds(games, chunk_games=chunk_games))
    chunk_games = merge_short_tail(sizes.astype(float), sizes)
    per_table = [merge_short_tail(st, sizes) for st in per_table]
    n_chunks = chunk_games.size
    groups = sorted({g for g, _ in plan}) if crn else list(range(len(plan)))
    n_units = len(groups) * n_chunks
    units = np.zeros((n_units, k, 4))
    pair = np.zeros((n_units, k, k, 3))
    cells = np.zeros((k, k, 3))
    for t, ((g, lineup), st) in enumerate(zip(plan, per_table, strict=True)):
        base = (groups.index(g) if crn else t) * n_chunks
        rows = slice(base, base + n_chunks)
        ahead_pq = np.zeros((k, k, n_chunks))
        level_pq = np.zeros((k, k, n_chunks))
        common = np.zeros((k, k, n_chunks))
        for s, p in enumerate(lineup):
            units[rows, p, 0] += chunk_games
            units[rows, p, 1] += st[:, s, O_WINS]
            units[rows, p, 2] += st[:, s, O_TIES]
            units[rows, p, 3] += st[:, s, O_AHEAD]
            for s2, q in enumerate(lineup):
                if s2 == s or p == q:
                    continue
                ahead = st[:, s, O_BEAT + s2]
                ahead_pq[p, q] += ahead
                level_pq[p, q] += chunk_games - ahead - st[:, s2, O_BEAT + s]
                common[p, q] += chunk_games
        for f, a in enumerate((ahead_pq, level_pq, common)):
            pair[rows, :, :, f] += np.moveaxis(a, 2, 0)
        score = ahead_pq + 0.5 * level_pq
        cells[:, :, 0] += (score * score).sum(axis=2)
        cells[:, :, 1] += (score * common).sum(axis=2)
        cells[:, :, 2] += (common * common).sum(axis=2)
    return units, pair, cells, np.arange(n_units) // n_chunks
