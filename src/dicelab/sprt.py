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
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dicelab.errors import UserError
from dicelab.registry import PolicySpec
from dicelab.stats import Estimate
from dicelab.text import parse_decimal

#: Games of one seating in one unit (a unit plays twice this many).
UNIT_GAMES = 128
#: Units computed per kernel call (all judged in order).
BATCH_UNITS = 32
#: Units before the first judgement: the variance of the unit scores must be estimated
#: from enough units, or the first few decide on noise.
MIN_UNITS = 16


#: The largest Elo difference a hypothesis may name (an expected score of 99.68%).
MAX_ELO = 1000


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
        """From ``elo0=0,elo1=10,alpha=0.05,beta=0.05`` (any subset; the rest default).

        >>> SprtSpec.parse("elo1=5,alpha=0.01")
        SprtSpec(elo0=0.0, elo1=5.0, alpha=0.01, beta=0.05)
        """
        values: dict[str, float] = {}
        for item in filter(None, (x.strip() for x in text.split(","))):
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
        """The GSPRT log-likelihood ratio of ``n`` units of this mean and variance."""
        s0, s1 = elo_score(self.elo0), elo_score(self.elo1)
        drift = (s1 - s0) * (2 * mean - s0 - s1)
        if var <= 0.0:
            return math.copysign(math.inf, drift) if drift else 0.0
        return n * drift / (2 * var)

    def to_dict(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


@dataclass(frozen=True)
class SprtResult:
    """A finished sequential test: ``decision`` is ``"H1"`` (the policy is the stronger
    by ``elo1``), ``"H0"`` or ``"undecided"`` (``max_games`` reached)."""

    policy: str
    opponent: str
    spec: SprtSpec
    decision: str
    llr: float
    units: int
    games: int
    score: Estimate
    crn: bool
    seed: int
    elapsed_s: float
    game: str = "farkle"

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "policy": self.policy, "opponent": self.opponent,
                "sprt": self.spec.to_dict(),
                "decision": self.decision, "llr": self.llr, "bounds": list(self.spec.bounds),
                "units": self.units, "games": self.games, "score": self.score.mean,
                "score_se": self.score.se, "crn": self.crn, "seed": self.seed,
                "elapsed_s": self.elapsed_s}


def sprt(policy: str | PolicySpec, opponent: str | PolicySpec, spec: SprtSpec, *,
         max_games: int = 10_000_000, seed: int | None = None, game: str | None = None,
         target: int | None = None, rules: Any = None, ending: str | None = None,
         crn: bool = True) -> SprtResult:
    """Play ``policy`` against ``opponent`` (names or parsed specs of one game) unit by
    unit until the SPRT decides (or ``max_games`` games are played); see the module
    docstring. ``target`` and ``ending`` are Farkle's.

    >>> r = sprt("threshold-300", "threshold-1000", SprtSpec(0, 20), seed=1, target=2000)
    >>> r.decision, r.games
    ('H1', 4096)
    """
    from dicelab.seeding import check_games, check_seed
    from dicelab.tournament import O_TIES, O_WINS, TABLE_GAMES, _check, _group_seed

    a, b = _check([policy, opponent], 2, game)
    max_games = check_games(max_games)
    seed = check_seed(seed)
    tables = TABLE_GAMES[a.game].make(rules, ending, target)
    n_units = max(1, max_games // (2 * UNIT_GAMES))
    seeds = (_group_seed(seed, 0), _group_seed(seed, 0 if crn else 1))
    plans = [tables.plan(list(seats), games=n_units * UNIT_GAMES, seed=s, crn=crn,
                         chunk_games=UNIT_GAMES)
             for seats, s in (((a, b), seeds[0]), ((b, a), seeds[1]))]
    lo_bound, hi_bound = spec.bounds
    started = time.perf_counter()
    scores: list[float] = []
    llr = 0.0
    decision = "undecided"
    for first in range(0, n_units, BATCH_UNITS):
        stop = min(first + BATCH_UNITS, n_units)
        per = [tables.outcomes(p.run_range(first, stop)) for p in plans]
        for u in range(stop - first):
            ab, ba = per[0][u], per[1][u]
            x = (ab[0, O_WINS] + 0.5 * ab[0, O_TIES]
                 + ba[1, O_WINS] + 0.5 * ba[1, O_TIES]) / (2 * UNIT_GAMES)
            scores.append(float(x))
            n = len(scores)
            mean = float(np.mean(scores))
            var = float(np.var(scores, ddof=1)) if n > 1 else 0.0
            llr = spec.llr(n, mean, var) if n >= MIN_UNITS else 0.0
            if llr >= hi_bound:
                decision = "H1"
            elif llr <= lo_bound:
                decision = "H0"
            if decision != "undecided":
                break
        if decision != "undecided":
            break
    n = len(scores)
    arr = np.array(scores)
    score = Estimate(float(arr.mean()), float(arr.std(ddof=1) / math.sqrt(n)) if n > 1
                     else math.nan, n * 2 * UNIT_GAMES, df=n - 1 if n > 1 else None)
    return SprtResult(a.name, b.name, spec, decision, float(llr), n, n * 2 * UNIT_GAMES, score,
                      crn, seed, time.perf_counter() - started, a.game)


@dataclass
class SprtRun:
    """Sequential tests of every pair of a set of policies (``dicelab tournament --sprt``)."""

    policies: list[str]
    spec: SprtSpec
    seed: int
    max_games: int
    crn: bool
    rules: Any
    target: int | None
    pairs: list[SprtResult]
    elapsed_s: float
    game: str = "farkle"

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "policies": self.policies, "sprt": self.spec.to_dict(),
                "seed": self.seed, "max_games": self.max_games, "crn": self.crn,
                "rules": self.rules.name, "target": self.target,
                "games": sum(p.games for p in self.pairs), "elapsed_s": self.elapsed_s,
                "pairs": [p.to_dict() for p in self.pairs]}

    def to_frame(self):
        import pandas as pd

        from dicelab.results import frame_row

        return pd.DataFrame([frame_row({k: v for k, v in p.to_dict().items()
                                        if k != "elapsed_s"}) for p in self.pairs])

    def manifest(self) -> dict[str, Any]:
        return {"game": self.game, "experiment": "sprt", "policies": self.policies,
                "sprt": self.spec.to_dict(), "seed": self.seed, "max_games": self.max_games,
                "crn": self.crn, "rules": self.rules.to_dict() if hasattr(self.rules, "to_dict")
                else self.rules.name, "target": self.target,
                "elapsed_s": self.elapsed_s}


def sprt_pairs(policies: list[str], spec: SprtSpec, *, max_games: int = 10_000_000,
               seed: int | None = None, game: str | None = None, target: int | None = None,
               rules: str | None = None, ending: str | None = None, crn: bool = True,
               progress=None) -> SprtRun:
    """:func:`sprt` for every pair of ``policies`` (each pair its own seed, derived from
    ``seed`` and the pair's index)."""
    import itertools

    from dicelab.seeding import check_seed
    from dicelab.tournament import TABLE_GAMES, _check, _group_seed

    specs = _check(policies, 2, game)
    seed = check_seed(seed)
    tables = TABLE_GAMES[specs[0].game].make(rules, ending, target)
    started = time.perf_counter()
    pairs = list(itertools.combinations(specs, 2))
    out = []
    for i, (a, b) in enumerate(pairs):
        out.append(sprt(a, b, spec, max_games=max_games, seed=_group_seed(seed, 1000 + i),
                        target=tables.target, rules=tables.rules, crn=crn))
        if progress is not None:
            progress(i + 1, len(pairs))
    return SprtRun([s.name for s in specs], spec, seed, max_games, crn, tables.rules,
                   tables.target, out, time.perf_counter() - started, tables.game)
