"""Sequential testing of two policies of either game: stop as soon as the question is
decided (layer 2).

``sprt("ai", "threshold-300", SprtSpec.parse("elo0=0,elo1=10,alpha=0.05,beta=0.05"))``
(or ``sprt("optimal", "greedy", ...)`` for Penta) plays the pair in *units*: one small
chunk of games with each seating (the policy first, then second), the two chunks sharing
their dice through a stream per turn (common random numbers,
:data:`dicelab.rng.STREAM_PER_TURN`); the game's tables are the tournament's
(:class:`dicelab.tournament.TableGame`). After every
unit the generalized SPRT of chess-engine testing decides between H0 (the policy is
``elo0`` Elo stronger) and H1 (``elo1``): with ``n`` units of mean score ``x`` and
variance ``v`` (each unit's share of finishing ahead, level finishes half), the
log-likelihood ratio is ``n (s1 - s0) (2 x - s0 - s1) / (2 v)`` with ``s = 1 / (1 +
10^(-elo / 400))``; H1 is accepted at ``log((1 - beta) / alpha)``, H0 at
``log(beta / (1 - alpha))``. The units are computed in batches but judged one by one, in
order, so the decision and the games used depend only on the seed.

A unit is small (:data:`UNIT_GAMES` games with each seating) and the test looks after
every unit from the :data:`MIN_UNITS`-th on, with running sums (:class:`Judge`), so it
stops close to the bound it crosses rather than far past it. The variance must rest on
enough units: a look decides only once :data:`MIN_SPREAD` units have a score other than
the most common one (a pair that rarely plays differently waits for enough units that
differ, rather than deciding on one game), or the ratio crosses the bound even with the
largest variance units of this mean score can have (:func:`largest_var`: a lopsided
pair is decided at once). Units without spread measure no variance: every unit level
(two policies that play alike on common dice) gives no ratio (NaN, not an infinite
certainty), and such a pair ends ``undecided`` at ``max_games``; every unit at one
other score (a policy that wins every game) is judged on that largest variance alone.
Each result also gives the games the test needs on average under H0 and H1 (Wald's
approximation) and the games of a fixed-size test with the same error rates, both from
the measured unit variance.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from dicelab.errors import UserError
from dicelab.registry import PolicySpec
from dicelab.stats import Estimate, fields
from dicelab.text import comma_items, parse_decimal

#: Games of one seating in one unit (a unit plays twice this many, and the test looks
#: after every unit). Part of what a seed means: the unit is the chunk of the games'
#: seeding.
UNIT_GAMES = 8
#: Units before the first look: the variance of the unit scores must be estimated from
#: enough units, or the test decides on noise. From the 16th unit on, a pair whose true
#: score is H1's accepted H0 in 9% of runs (beta = 5%), most of the wrong decisions
#: resting on a variance measured too small; from the 64th, 5% or less
#: (``benchmarks/sprt_error_rates.py``).
MIN_UNITS = 64
#: Units off the most common score before the first look: a pair that rarely plays
#: differently has most units at one score (level, on common dice), and its variance
#: rests on the few that are not; one or two of them would decide (the ratio hundreds of
#: times past the bound, on one or two games).
MIN_SPREAD = 16
#: Games played by the first look (a smaller ``max_games`` ends the test undecided).
FIRST_LOOK_GAMES = MIN_UNITS * 2 * UNIT_GAMES
#: The most units computed per kernel call (all judged in order).
MAX_BATCH_UNITS = 1024


#: The largest Elo difference a hypothesis may name (an expected score of 99.68%).
MAX_ELO = 1000


def largest_var(n: int, mean: float) -> float:
    """The largest variance unit scores in [0, 1] can have, given ``n`` units of this
    mean: ``m (1 - m)`` (Bhatia-Davis), at the mean ``m`` moved one unit's worth toward
    1/2 (``(n mean + 1/2) / (n + 1)``), so that units all won (a mean of exactly 1)
    still bound a variance above 0: the mean is measured, not known.

    >>> largest_var(64, 0.5), round(largest_var(64, 1.0), 6)
    (0.25, 0.007633)
    """
    m = (n * mean + 0.5) / (n + 1)
    return m * (1 - m)


def elo_score(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class SprtSpec:
    """H0: ``elo0``, H1: ``elo1`` (the policy's strength over its opponent), error rates
    ``alpha`` (accepting H1 under H0) and ``beta`` (accepting H0 under H1)."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    @classmethod
    def parse(cls, text: str) -> SprtSpec:
        """From ``elo0=0,elo1=10,alpha=0.05,beta=0.05`` (any subset; the rest default; an
        empty item, two commas or one at an end, is refused).

        >>> SprtSpec.parse("elo1=5,alpha=0.01")
        SprtSpec(elo0=0.0, elo1=5.0, alpha=0.01, beta=0.05)
        """
        values: dict[str, float] = {}
        try:
            items = comma_items(text)
        except ValueError as exc:
            raise UserError(f"--sprt {text!r}: {exc}; write elo0=0,elo1=10,alpha=0.05,"
                            "beta=0.05") from None
        for item in items:
            key, sep, value = item.partition("=")
            key = key.strip()
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise UserError(f"--sprt '{text}': write elo0=0,elo1=10,alpha=0.05,beta=0.05")
            if key in values:
                raise UserError(f"--sprt '{text}': {key} is given twice")
            try:
                values[key] = parse_decimal(value.strip())
            except ValueError:
                raise UserError(f"--sprt '{text}': {key} must be a number") from None
        spec = cls(**values)
        for name in ("elo0", "elo1"):
            if not -MAX_ELO <= getattr(spec, name) <= MAX_ELO:
                raise UserError(f"--sprt '{text}': {name} must be within -{MAX_ELO:,} to "
                                f"{MAX_ELO:,} Elo (a score of 0.3% to 99.7%)")
        if spec.elo1 <= spec.elo0:
            raise UserError(f"--sprt '{text}': elo1 must be above elo0")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(spec, name) < 0.5:
                raise UserError(f"--sprt '{text}': {name} must be in (0, 0.5)")
        return spec

    @property
    def bounds(self) -> tuple[float, float]:
        """(accept H0 at or below, accept H1 at or above) the log-likelihood ratio."""
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, n: int, mean: float, var: float) -> float:
        """The GSPRT log-likelihood ratio of ``n`` units of this mean and variance; NaN
        without a variance (units without spread measure none: no ratio, not an infinite
        one).

        >>> SprtSpec(0, 10).llr(16, 0.5, 0.0)
        nan
        """
        if not var > 0.0:
            return math.nan
        s0, s1 = elo_score(self.elo0), elo_score(self.elo1)
        return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)

    def expected_units(self, var: float) -> tuple[float, float]:
        """Wald's approximation of the units the test needs on average when H0 holds and
        when H1 holds, for units of score variance ``var``: the expected LLR at a bound
        over its drift per unit (``(s1 - s0)^2 / (2 var)``, down under H0, up under H1).

        >>> [round(u) for u in SprtSpec(0, 10).expected_units(0.01)]
        [256, 256]
        """
        lo, hi = self.bounds
        drift = (elo_score(self.elo1) - elo_score(self.elo0)) ** 2 / (2 * var)
        return ((self.alpha * hi + (1 - self.alpha) * lo) / -drift,
                ((1 - self.beta) * hi + self.beta * lo) / drift)

    def fixed_units(self, var: float) -> float:
        """Units a test of a fixed size with the same error rates needs: the one-sided
        z test of s0 against s1, ``((z_(1-alpha) + z_(1-beta)) sd / (s1 - s0))^2``.

        >>> round(SprtSpec(0, 10).fixed_units(0.01))
        523
        """
        from scipy.stats import norm

        z = norm.ppf(1 - self.alpha) + norm.ppf(1 - self.beta)
        return (z * math.sqrt(var) / (elo_score(self.elo1) - elo_score(self.elo0))) ** 2

    def to_dict(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}

    @property
    def text(self) -> str:
        """The spec as ``--sprt`` takes it.

        >>> SprtSpec().text
        'elo0=0,elo1=10,alpha=0.05,beta=0.05'
        """
        return ",".join(f"{k}={v:g}" for k, v in self.to_dict().items())


@dataclass(frozen=True)
class SprtResult:
    """A finished sequential test: ``decision`` is ``"H1"`` (the policy is the stronger
    by ``elo1``), ``"H0"`` or ``"undecided"`` (``max_games`` reached).

    ``unit_var``: the variance of the unit scores it measured, from which the games the
    test needs on average (:attr:`expected_games`, Wald) and the games of a fixed-size
    test with the same error rates (:attr:`fixed_games`) follow; ``llr``: NaN when the
    units never varied (no variance: no ratio, and no decision) or when ``max_games``
    ended the test before its first look (:attr:`looked`)."""

    policy: str
    opponent: str
    spec: SprtSpec
    decision: str
    llr: float
    units: int
    games: int
    score: Estimate
    unit_var: float
    crn: bool
    seed: int
    elapsed_s: float
    game: str = "farkle"
    #: the game kernel that played the units
    kernel: str | None = None

    @property
    def looked(self) -> bool:
        """Whether the test looked at all: ``max_games`` reached its first look, at the
        :data:`MIN_UNITS`-th unit (fewer units than that cannot decide)."""
        return self.units >= MIN_UNITS

    @property
    def expected_games(self) -> tuple[float, float]:
        """Games the test needs on average under H0 and under H1 (NaN if the units did not
        vary)."""
        if not self.unit_var > 0:
            return (math.nan, math.nan)
        h0, h1 = self.spec.expected_units(self.unit_var)
        return (h0 * 2 * UNIT_GAMES, h1 * 2 * UNIT_GAMES)

    @property
    def fixed_games(self) -> float:
        """Games a fixed-size test with the same error rates needs (same units)."""
        if not self.unit_var > 0:
            return math.nan
        return math.ceil(self.spec.fixed_units(self.unit_var)) * 2 * UNIT_GAMES

    def to_dict(self) -> dict[str, Any]:
        h0, h1 = self.expected_games
        return {"game": self.game, "policy": self.policy, "opponent": self.opponent,
                "sprt": self.spec.to_dict(),
                "decision": self.decision, "llr": self.llr,
                "llr_bounds": list(self.spec.bounds),
                "units_played": self.units, "games": self.games, "expected_games_h0": h0,
                "expected_games_h1": h1, "fixed_games": self.fixed_games,
                **fields("score", self.score), "crn": self.crn,
                "seed": self.seed, "elapsed_s": self.elapsed_s}


class Judge:
    """The running test: units are added one by one, in order (:meth:`add`), and the
    log-likelihood ratio is updated from running sums (Welford's mean and variance), so a
    look costs the same at the ten-thousandth unit as at the first. A look decides only
    once the units vary enough: while every unit has the same score the ratio is NaN,
    and while fewer than :data:`MIN_SPREAD` units are off the most common score (the
    variance resting on too few) the ratio decides only if the largest variance of
    scores in [0, 1] of this mean (:func:`largest_var`) would cross the bound too (a
    lopsided pair is still decided at once; a pair that rarely differs waits). Units all
    at one score other than 1/2 (a policy that wins every game) are judged on that
    largest variance; all level, they give no ratio."""

    def __init__(self, spec: SprtSpec):
        self.spec = spec
        self.lo, self.hi = spec.bounds
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0
        self._counts: dict[float, int] = {}
        self._mode = 0  # units at the most common score
        self.llr = math.nan  # no ratio before the first look
        self.decision = "undecided"

    @property
    def var(self) -> float:
        """The sample variance of the unit scores (NaN below two units)."""
        return self._m2 / (self.n - 1) if self.n > 1 else math.nan

    @property
    def spread(self) -> int:
        """Units whose score is not the most common one."""
        return self.n - self._mode

    def add(self, x: float) -> str:
        """Add one unit's score; returns the decision (``H0``, ``H1`` or ``undecided``)."""
        self.n += 1
        d = x - self.mean
        self.mean += d / self.n
        self._m2 += d * (x - self.mean)
        self._counts[x] = c = self._counts.get(x, 0) + 1
        self._mode = max(self._mode, c)
        if self.n >= MIN_UNITS:
            self.llr = self.spec.llr(self.n, self.mean, self.var)
            if self.spread < MIN_SPREAD:
                # the variance rests on too few units: decide only on a ratio that
                # crosses the bound even with the largest variance scores in [0, 1] of
                # this mean can have
                worst = self.spec.llr(self.n, self.mean, largest_var(self.n, self.mean))
                if not (worst >= self.hi or worst <= self.lo):
                    return self.decision
                if math.isnan(self.llr) and self.mean != 0.5:
                    self.llr = worst  # every unit at one score, not level: that bound
            if self.llr >= self.hi:
                self.decision = "H1"
            elif self.llr <= self.lo:
                self.decision = "H0"
        return self.decision


def sprt(policy: str | PolicySpec, opponent: str | PolicySpec, spec: SprtSpec, *,
         max_games: int = 10_000_000, seed: int | None = None, game: str | None = None,
         target: int | None = None, rules: Any = None, ending: str | None = None,
         crn: bool = True) -> SprtResult:
    """Play ``policy`` against ``opponent`` (names or parsed specs of one game) unit by
    unit until the SPRT decides (or ``max_games`` games are played); see the module
    docstring. ``target`` and ``ending`` are Farkle's.

    >>> r = sprt("threshold-300", "threshold-1000", SprtSpec(0, 20), seed=1, target=2000)
    >>> r.decision, r.games
    ('H1', 1024)
    """
    from dicelab.seeding import check_games, check_seed, group_seed
    from dicelab.tournament import O_TIES, O_WINS, TABLE_GAMES, check_policies

    a, b = check_policies([policy, opponent], 2, game)
    max_games = check_games(max_games)
    if max_games < 2 * UNIT_GAMES:
        raise UserError(f"--games {max_games:,} is less than one unit of the sequential test "
                        f"({2 * UNIT_GAMES} games: {UNIT_GAMES} in each seating)")
    seed = check_seed(seed)
    tables = TABLE_GAMES[a.game].make(rules, ending, target)
    n_units = max_games // (2 * UNIT_GAMES)
    seeds = (group_seed(seed, 0), group_seed(seed, 0 if crn else 1))
    plans = [tables.plan(list(seats), games=n_units * UNIT_GAMES, seed=s, crn=crn,
                         chunk_games=UNIT_GAMES)
             for seats, s in (((a, b), seeds[0]), ((b, a), seeds[1]))]
    judge = Judge(spec)
    started = time.perf_counter()
    first = 0
    while first < n_units and judge.decision == "undecided":
        # a batch of units (computed together), judged one by one; a batch a quarter of
        # the units so far wastes little past the decision
        stop = min(n_units, first + min(MAX_BATCH_UNITS, max(MIN_UNITS, first // 4)))
        ab, ba = (tables.outcomes(p.run_range(first, stop)) for p in plans)
        x = (ab[:, 0, O_WINS] + 0.5 * ab[:, 0, O_TIES]
             + ba[:, 1, O_WINS] + 0.5 * ba[:, 1, O_TIES]) / (2 * UNIT_GAMES)
        for u in range(stop - first):
            if judge.add(float(x[u])) != "undecided":
                break
        first = stop
    n = judge.n
    # a share: its interval within [0, 1]; units without spread (every unit the same
    # score) measure no error, so no interval rather than a zero-width one
    measured = n > 1 and judge.var > 0
    score = Estimate(judge.mean, math.sqrt(judge.var / n) if measured else math.nan,
                     n * 2 * UNIT_GAMES, df=n - 1 if measured else None, bounds=(0.0, 1.0))
    return SprtResult(a.name, b.name, spec, judge.decision, float(judge.llr), n,
                      n * 2 * UNIT_GAMES, score, judge.var, crn, seed,
                      time.perf_counter() - started, a.game, plans[0].kernel)


@dataclass
class SprtRun:
    """Sequential tests of every pair of a set of policies (``dicelab tournament --sprt``)."""

    policies: list[str]
    spec: SprtSpec
    seed: int
    max_games: int
    crn: bool
    rules: Any  # FarkleRules or a Penta RuleSet: JSON gives its name, a manifest to_dict()
    target: int | None
    pairs: list[SprtResult]
    elapsed_s: float
    game: str = "farkle"
    #: each policy's family and parameters, in the order of ``policies``
    policy_params: list[dict[str, Any]] = field(default_factory=list)
    #: numba threads of this process (the units are played here, never on Dask);
    #: the manifest records the threads that played (:func:`dicelab.parallel.threads_used`)
    threads: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "policies": self.policies, "sprt": self.spec.to_dict(),
                "seed": self.seed, "max_games": self.max_games, "crn": self.crn,
                "rules": self.rules.name, "target": self.target,
                "ending": getattr(self.rules, "ending", None),
                "games": sum(p.games for p in self.pairs), "elapsed_s": self.elapsed_s,
                "pairs": [p.to_dict() for p in self.pairs]}

    def to_frame(self):
        import pandas as pd

        from dicelab.results import frame_row

        return pd.DataFrame([frame_row({k: v for k, v in p.to_dict().items()
                                        if k != "elapsed_s"}) for p in self.pairs])

    def manifest(self) -> dict[str, Any]:
        from dicelab.results import played_by
        from dicelab.runner import executor_info

        return {"game": self.game, "experiment": "sprt",
                **played_by(self.policies, self.policy_params,
                            kernels=[p.kernel for p in self.pairs], threads=self.threads,
                            **executor_info(None)),
                "sprt": self.spec.to_dict(), "seed": self.seed, "max_games": self.max_games,
                "chunk_games": UNIT_GAMES, "crn": self.crn,
                "rules": self.rules.to_dict(), "target": self.target,
                "elapsed_s": self.elapsed_s}


def sprt_pairs(policies: list[str], spec: SprtSpec, *, max_games: int = 10_000_000,
               seed: int | None = None, game: str | None = None, target: int | None = None,
               rules: str | None = None, ending: str | None = None, crn: bool = True,
               progress=None) -> SprtRun:
    """:func:`sprt` for every pair of ``policies`` (each pair its own seed, derived from
    ``seed`` and the pair's index)."""
    import itertools

    from dicelab.parallel import threads
    from dicelab.results import policy_params
    from dicelab.seeding import check_seed, group_seed
    from dicelab.tournament import TABLE_GAMES, check_policies

    specs = check_policies(policies, 2, game)
    seed = check_seed(seed)
    tables = TABLE_GAMES[specs[0].game].make(rules, ending, target)
    started = time.perf_counter()
    pairs = list(itertools.combinations(specs, 2))
    out = []
    for i, (a, b) in enumerate(pairs):
        out.append(sprt(a, b, spec, max_games=max_games, seed=group_seed(seed, 1000 + i),
                        target=tables.target, rules=tables.rules, crn=crn))
        if progress is not None:
            progress(i + 1, len(pairs))
    return SprtRun([s.name for s in specs], spec, seed, max_games, crn, tables.rules,
                   tables.target, out, time.perf_counter() - started, tables.game,
                   policy_params=[policy_params(s) for s in specs], threads=threads())
