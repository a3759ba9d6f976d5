"""Head-to-head comparison of policies: every pair plays two-seat games (layer 2).

``compare(["ai", "max-ev", "threshold-250"])`` plays ``games`` two-seat games for every
pair of policies (who starts rotates, so each starts half the games) and reports, for
the first-named policy of each pair, its wins, ties and losses, its win rate with a 95%
Wilson interval and its match score ``P(win) + P(tie)/2`` with a 95% t interval
(an exact or Wilson interval when the games show no spread: one game, or all one
outcome).
A pair whose score interval contains 1/2 is reported as a tie, never silently broken.

Each pair has its own seed, derived from the comparison's seed and the pair's index, and
recorded in the result, so every pair can be replayed alone with
``dicelab simulate -s A --vs B --seed S``. Usable from Python and notebooks; the CLI's
``dicelab compare`` is a thin shell over :func:`compare`.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dicelab.config import DEFAULT_GAMES
from dicelab.errors import UserError
from dicelab.registry import check_distinct, parse_policy
from dicelab.results import frame_row, played_by, policy_params
from dicelab.runner import executor_info
from dicelab.seeding import check_games, check_seed
from dicelab.stats import Z95, Estimate, Proportion, fields, quantile95, wilson_interval

if TYPE_CHECKING:
    from dicelab.penta.builtin import Stage


def pair_seed(seed: int, index: int) -> int:
    """The seed of pair ``index`` of a comparison seeded with ``seed`` (63-bit)."""
    state = np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0]
    return int(state) >> 1


#: Bytes a compare holds per pair, rounded up: its result (about 270 B measured) and its
#: rows of the report.
PAIR_BYTES = 1024


def check_size(n_policies: int) -> None:
    """Refuse, before listing the pairs, a compare whose pairs would not fit in the memory
    limit (a swept experiment file can name a million policies: 5e11 pairs).

    >>> check_size(10)  # 45 pairs
    """
    from dicelab.resources import check_memory

    pairs = math.comb(n_policies, 2)
    check_memory(f"a compare of {pairs:,} pairs", pairs * PAIR_BYTES)


@dataclass(frozen=True)
class PairResult:
    """One pairing, from the point of view of ``policy`` (seat 0 of the simulation)."""

    policy: str
    opponent: str
    games: int
    wins: int
    ties: int
    seed: int

    @property
    def losses(self) -> int:
        return self.games - self.wins - self.ties

    @property
    def score(self) -> float:
        """P(win) + P(tie)/2 of ``policy``."""
        return (self.wins + 0.5 * self.ties) / self.games

    @property
    def score_se(self) -> float:
        """The score's standard error; NaN from one game (no spread to measure)."""
        if self.games < 2:
            return math.nan
        second_moment = (self.wins + 0.25 * self.ties) / self.games
        return math.sqrt(max(second_moment - self.score**2, 0.0) / self.games)

    @property
    def score_ci95(self) -> tuple[float, float]:
        """A t interval on ``games - 1`` degrees of freedom (the SE is measured from the
        same games: from few, a normal interval is too narrow), within [0, 1]. When the
        games show no spread (one game, or every game the same outcome): every game won
        or lost, the exact (Clopper-Pearson) interval of that proportion, which excludes
        1/2 from 6 games on, as the sign test does; every game tied, the Wilson interval
        around 1/2. Never a zero-width interval."""
        se = self.score_se
        if se > 0:
            return Estimate(self.score, se, self.games, df=self.games - 1,
                            bounds=(0.0, 1.0)).ci95
        if self.ties == self.games:
            return wilson_interval(0.5 * self.games, self.games)
        from scipy.stats import binomtest

        ci = binomtest(self.wins, self.games).proportion_ci(0.95, method="exact")
        return (float(ci.low), float(ci.high))

    @property
    def verdict(self) -> str:
        """``better``, ``worse`` or ``tie`` (the 95% interval of the score contains 1/2)."""
        lo, hi = self.score_ci95
        if lo <= 0.5 <= hi:
            return "tie"
        return "better" if lo > 0.5 else "worse"

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "opponent": self.opponent, "games": self.games,
                "wins": self.wins, "ties": self.ties, "losses": self.losses,
                **fields("win_rate", Proportion(self.wins, self.games)),
                **fields("tie_rate", Proportion(self.ties, self.games)),
                "score": self.score, "score_se": self.score_se,
                "score_ci95": list(self.score_ci95), "verdict": self.verdict,
                "seed": self.seed}


@dataclass
class Comparison:
    """All pairings of a comparison; implements :class:`dicelab.results.SimulationResult`.

    ``method``: ``"monte-carlo"`` (``pairs`` are :class:`PairResult`, with ``seed`` and
    ``games_per_table``: each pair is one two-seat table, whose starting seat rotates) or
    ``"exact"`` (``pairs`` are :class:`dicelab.outcomes.ExactPair`; no seed, no games)."""

    game: str
    policies: list[str]
    rules: str
    target: int | None
    seed: int | None
    games_per_table: int | None
    pairs: list
    elapsed_s: float
    #: the rules table the manifest records (the rules' ``to_dict()``; None: ``rules``)
    rules_data: Any = field(default=None, repr=False)
    #: "local" or "dask" (``workers`` Dask workers), as for simulations
    executor: str = "local"
    workers: int | None = None
    method: str = "monte-carlo"
    #: Farkle's ending rule (None for Penta)
    ending: str | None = None
    #: each policy's family and parameters, in the order of ``policies``
    policy_params: list[dict[str, Any]] = field(default_factory=list)
    #: the game kernel of each pair, in the order of ``pairs`` (none: exact, or unknown)
    kernels: list[str] = field(default_factory=list)
    #: numba threads of this process
    threads: int | None = None
    #: games per chunk of a pair's simulation (none: exact)
    chunk_games: int | None = None

    def mean_scores(self) -> dict[str, float]:
        """Each policy's average match score over its pairings (a ranking, not a test)."""
        scores: dict[str, list[float]] = {p: [] for p in self.policies}
        for pr in self.pairs:
            scores[pr.policy].append(pr.score)
            scores[pr.opponent].append(1.0 - pr.score)
        return {p: float(np.mean(v)) for p, v in scores.items()}

    def mean_score_ci95(self) -> dict[str, tuple[float, float]] | None:
        """Each mean score's 95% interval (None when exact). The pairs play independent
        games, so the variances add; the quantile is Student's t on ``games - 1`` degrees
        of freedom (the fewest games of a pair), as each pair's own :attr:`PairResult.
        score_ci95`: every SE is measured from the same games. A pair whose games show no
        spread counts with its interval's half width (never a zero-width interval);
        within [0, 1]. A policy in one pair has that pair's interval."""
        if self.method == "exact":
            return None
        df = min((pr.games for pr in self.pairs), default=2) - 1
        # one game a pair: no pair has a spread, and the quantile cancels out
        q = quantile95(df) if df > 0 else Z95
        var: dict[str, list[float]] = {p: [] for p in self.policies}
        own: dict[str, tuple[float, float]] = {}
        for pr in self.pairs:
            lo, hi = pr.score_ci95
            own[pr.policy], own[pr.opponent] = (lo, hi), (1.0 - hi, 1.0 - lo)
            se = pr.score_se if pr.score_se > 0 else (hi - lo) / (2 * q)
            var[pr.policy].append(se * se)
            var[pr.opponent].append(se * se)
        out = {}
        for p, mean in self.mean_scores().items():
            if len(var[p]) == 1:
                out[p] = own[p]
                continue
            half = q * math.sqrt(sum(var[p])) / len(var[p])
            out[p] = (max(mean - half, 0.0), min(mean + half, 1.0))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "method": self.method, "policies": self.policies,
                "rules": self.rules, "ending": self.ending, "target": self.target,
                "seed": self.seed,
                "games_per_table": self.games_per_table, "elapsed_s": self.elapsed_s,
                "executor": self.executor, "workers": self.workers,
                "pairs": [p.to_dict() for p in self.pairs],
                "mean_score": self.mean_scores(),
                **({} if self.method == "exact" else {"mean_score_ci95": {
                    p: list(ci) for p, ci in self.mean_score_ci95().items()}})}

    def to_frame(self) -> pd.DataFrame:
        run = {"game": self.game, "method": self.method, "rules": self.rules,
               "ending": self.ending, "target": self.target}
        # the table holds results only: how long a pair took is in the JSON and manifest
        rows = [{k: v for k, v in frame_row(p.to_dict()).items()
                 if k not in ("elapsed_s", "from_cache")} for p in self.pairs]
        return pd.DataFrame([{**run, **row} for row in rows])

    def manifest(self) -> dict[str, Any]:
        seeds = {} if self.method == "exact" else {
            "pair_seeds": {f"{p.policy} vs {p.opponent}": p.seed for p in self.pairs},
            "pair_kernels": {f"{p.policy} vs {p.opponent}": k for p, k in
                             zip(self.pairs, self.kernels or [None] * len(self.pairs),
                                 strict=True)}}
        return {"game": self.game, "experiment": "compare", "method": self.method,
                "ending": self.ending,
                **played_by(self.policies, self.policy_params, kernels=self.kernels,
                            threads=self.threads, executor=self.executor,
                            workers=self.workers),
                "rules": self.rules_data if self.rules_data is not None else self.rules,
                "target": self.target, "seed": self.seed,
                "games_per_table": self.games_per_table, "chunk_games": self.chunk_games,
                **seeds, "elapsed_s": self.elapsed_s}


def compare(policies: list[str], *, games: int = DEFAULT_GAMES, seed: int | None = None,
            game: str | None = None, target: int | None = None, rules: str | None = None,
            ending: str | None = None, exact: bool = False,
            progress: Callable[[int, int], None] | None = None,
            client: Any = None, store: Any = None,
            stage: Stage | None = None) -> Comparison:
    """Play every pair of ``policies`` against each other in ``games`` two-seat games, or
    with ``exact`` evaluate every pair exactly (:func:`dicelab.farkle.exact.exact_pair`,
    :mod:`dicelab.penta.head_to_head`).

    ``progress(done, total)`` counts games over all pairs (exact: steps of the pairs'
    solves and evaluations; Penta: pairs, and ``stage`` follows the work of an exact
    distribution that takes minutes, :meth:`dicelab.penta.builtin.Family.distribution`).
    ``client``: a
    Dask client, as for :func:`dicelab.simulate.simulate`. ``store``: a
    :class:`dicelab.experiment_file.CellStore` keeping each finished pair (Monte Carlo),
    so that an interrupted run continues where it stopped.

    >>> c = compare(["threshold-300", "threshold-1000"], games=20_000, seed=1)
    >>> c.pairs[0].verdict
    'better'
    """
    from dicelab.simulate import simulate

    if len(policies) < 2:
        raise UserError("compare needs at least two policies, e.g. "
                        "dicelab compare ai max-ev threshold-300")
    specs = [parse_policy(p, game) for p in policies]
    games_of = {s.game for s in specs}
    if len(games_of) > 1:
        raise UserError("compare takes policies of one game; got "
                        + ", ".join(f"{s.name} ({s.game})" for s in specs))
    check_distinct(policies, specs, "compare: ")
    names = [s.name for s in specs]
    check_size(len(names))
    pairs = list(itertools.combinations(names, 2))
    by_name = dict(zip(names, specs, strict=True))  # a policy object has no name to parse
    if exact:
        return _exact(specs, pairs, target, rules, ending, progress, stage)
    games = check_games(games)
    seed = check_seed(seed)
    total = games * len(pairs)
    results = []
    kernels: list[str] = []
    rules_name, rules_data, target_used, chunk_games = None, None, None, None
    started = time.perf_counter()
    for i, (a, b) in enumerate(pairs):
        def tick(done: int, _total: int, base: int = i * games) -> None:
            if progress is not None:
                progress(base + done, total)

        s = pair_seed(seed, i)
        cell = None if store is None else store.get(f"pair-{i}")
        # a cell kept by a version that did not record the pair's kernel is played again
        if cell is None or not {"kernel", "chunk_games"} <= set(cell):
            res = simulate(by_name[a], [by_name[b]], game=specs[0].game, games=games, seed=s,
                           target=target, rules=rules, ending=ending, progress=tick,
                           client=client)
            first = res.seat(0)
            run = res.manifest()
            cell = {"wins": np.array(first.wins), "ties": np.array(first.ties),
                    "rules": np.array(json.dumps(run.get("rules"))),
                    "name": np.array(res.to_dict()["rules"]),
                    "target": np.array(getattr(res, "target", -1) or -1),
                    "kernel": np.array(run["kernel"]),
                    "chunk_games": np.array(run["chunk_games"])}
            if store is not None:
                store.put(f"pair-{i}", cell)
        results.append(PairResult(a, b, games, int(cell["wins"]), int(cell["ties"]), s))
        kernels.append(str(cell["kernel"]))
        chunk_games = int(cell["chunk_games"])
        rules_name = str(cell["name"])
        rules_data = json.loads(str(cell["rules"]))
        target_used = None if int(cell["target"]) < 0 else int(cell["target"])
    ending_used = (rules_data or {}).get("ending") if specs[0].game == "farkle" else None
    return Comparison(game=specs[0].game, policies=names, rules=str(rules_name),
                      ending=ending_used, target=target_used, seed=int(seed),
                      games_per_table=games,
                      pairs=results, elapsed_s=time.perf_counter() - started,
                      **executor_info(client),
                      rules_data=rules_data, kernels=kernels, chunk_games=chunk_games,
                      **_policies_and_threads(specs))


#: Progress steps of one exactly evaluated pair (a solve reports fractions of its share).
_EXACT_STEPS = 1000


def _exact(specs, pairs, target, rules, ending, progress, stage) -> Comparison:
    if specs[0].game == "penta":
        return _exact_penta(specs, pairs, target, rules, ending, progress, stage)
    from dicelab.farkle.builtin import check_exact, family_of
    from dicelab.farkle.exact import exact_pair
    from dicelab.farkle.rules import check_target, load_rules

    table = load_rules(rules, ending)
    target = check_target(target)
    # every policy's refusals (an exact policy's table against the memory limit) before
    # any solve
    for s in specs:
        family_of(s).check(s, table, target, 2)
        check_exact(s)
    started = time.perf_counter()
    by_name = {s.name: s for s in specs}
    results = []
    steps = _EXACT_STEPS * len(pairs)  # each pair's share: its solves, then its evaluation
    for i, (a, b) in enumerate(pairs):
        def tick(fraction: float, base: int = i * _EXACT_STEPS) -> None:
            if progress is not None:
                progress(base + int(0.9 * _EXACT_STEPS * fraction), steps)

        results.append(exact_pair(by_name[a], by_name[b], rules=table, target=target,
                                  progress=tick))
        if progress is not None:
            progress((i + 1) * _EXACT_STEPS, steps)
    return Comparison(game="farkle", policies=[s.name for s in specs], rules=table.name,
                      target=target, seed=None, games_per_table=None, pairs=results,
                      elapsed_s=time.perf_counter() - started, rules_data=table.to_dict(),
                      method="exact", ending=table.ending, **_policies_and_threads(specs))


def _exact_penta(specs, pairs, target, rules, ending, progress, stage) -> Comparison:
    """Penta pairs from the policies' exact score distributions
    (:mod:`dicelab.penta.head_to_head`)."""
    from dicelab.penta.builtin import family_of
    from dicelab.penta.head_to_head import exact_pair
    from dicelab.penta.rules import get_rules, refuse_farkle_options

    refuse_farkle_options(("--target", target), ("--ending", ending))

    rs = get_rules(rules)
    by_name = {s.name: s for s in specs}
    # every policy's refusal (one whose decisions cannot be tabulated) before any work
    for s in specs:
        family_of(s).check_exact(s, rs)
    started = time.perf_counter()
    dists: dict[str, Any] = {}

    def distribution(name: str):
        if name not in dists:
            spec = by_name[name]
            dists[name] = family_of(spec).distribution(spec, rs, stage)
        return dists[name]

    results = []
    for i, (a, b) in enumerate(pairs):
        results.append(exact_pair(distribution(a), distribution(b), rs))
        if progress is not None:
            progress(i + 1, len(pairs))
    return Comparison(game="penta", policies=[s.name for s in specs], rules=rs.name,
                      target=None, seed=None, games_per_table=None, pairs=results,
                      elapsed_s=time.perf_counter() - started, rules_data=rs.to_dict(),
                      method="exact", **_policies_and_threads(specs))


def _policies_and_threads(specs) -> dict[str, Any]:
    """A finished comparison's :attr:`Comparison.policy_params` and
    :attr:`Comparison.threads`."""
    from dicelab.parallel import threads

    return {"policy_params": [policy_params(s) for s in specs], "threads": threads()}
