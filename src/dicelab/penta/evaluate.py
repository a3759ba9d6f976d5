"""A Penta policy's report card (``dicelab evaluate`` for Penta; layer 2).

:func:`evaluate_penta` answers where a Penta policy stands:

* the mean and SD of its final TOTAL: exact when it has a distribution of its own within
  the memory limit (its family's :meth:`~dicelab.penta.builtin.Family.distribution`:
  ``optimal``, ``greedy`` and a policy given as values from their decision blocks,
  ``optimal:OBJECTIVE`` from its objective's forward pass), simulated with a 95%
  interval for any other policy (:func:`dicelab.penta.simulate.simulate_penta`: a
  user's policy by the referee's games; ``penta-win``, whose play depends on the other
  seats' cards);
* what it loses against ``optimal`` per class of decision -- the first keep, the second
  keep, the box -- from the analysis (:mod:`dicelab.analyse`) of games it plays move by
  move (the game-log driver, :func:`dicelab.logplay.play_games`, on the seed's log
  stream). A decision's loss is the expected final score it gives up against the best
  option, valued with optimal play after it; the losses of a game add up, on average, to
  what the policy scores below the optimum (``optimum - mean``), which the report shows
  beside them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dicelab import seeding
from dicelab.errors import UserError
from dicelab.penta.builtin import Stage, as_spec, family_of
from dicelab.penta.distribution import ScoreDistribution
from dicelab.penta.rules import RuleSet, get_rules
from dicelab.registry import PolicySpec
from dicelab.resources import OverMemoryLimit
from dicelab.stats import Estimate, fields, mean_estimate, unit_ratio

#: The decision classes of a turn, in order.
DECISION_CLASSES = ("first keep", "second keep", "box")
#: Games a report card plays when not told.
DEFAULT_EVALUATE_GAMES = 2_000


@dataclass(frozen=True)
class ClassLoss:
    """What a policy loses against ``optimal`` at one class of decision: ``decisions``
    made in ``games`` games, their mean loss (points of expected final score; a ratio over
    the games, with its delta-method SE: NaN when no decision of the class was made), and
    the loss per game with its standard error (``per_game``)."""

    decisions: int
    per_decision: Estimate
    per_game: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {"decisions": self.decisions, **fields("loss_per_decision", self.per_decision),
                **fields("loss_per_game", self.per_game)}


@dataclass(frozen=True)
class PentaEvaluation:
    """A Penta policy's report card (the module docstring).

    ``mean_final_score``: exact (``se`` 0) when ``exact``, else the simulation's estimate
    over ``games`` games; ``final_score_sd`` its SD; ``optimum``: the optimal expected final
    score; ``losses[cls]`` for each of :data:`DECISION_CLASSES`, from ``analysed_games``
    games; ``seed``: the simulation's and the analysed games' seed."""

    policy: str
    rules: str
    exact: bool
    games: int | None
    seed: int
    seed_given: bool
    mean_final_score: Estimate
    final_score_sd: float
    optimum: float
    analysed_games: int
    losses: dict[str, ClassLoss]
    total_loss: Estimate  # loss per game, all decisions
    loss_per_decision: Estimate  # the mean loss of all its decisions
    elapsed_s: float
    game: str = "penta"
    kernel: str | None = None  # the simulation's, where the mean is simulated

    @property
    def gap(self) -> float:
        """The optimum minus its mean final score."""
        return self.optimum - self.mean_final_score.mean

    @property
    def decisions(self) -> int:
        """Its decisions in the analysed games, every class."""
        return sum(loss.decisions for loss in self.losses.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "penta-evaluation", "game": "penta", "policy": self.policy,
            "rules": self.rules, "mean_exact": self.exact, "games": self.games,
            "seed": self.seed,
            **fields("mean_final_score", self.mean_final_score),
            "final_score_sd": self.final_score_sd, "optimum": self.optimum,
            "below_optimum": self.gap, "analysed_games": self.analysed_games,
            "loss_by_decision": {cls: loss.to_dict() for cls, loss in self.losses.items()},
            "total_decisions": self.decisions,
            **fields("total_loss_per_decision", self.loss_per_decision),
            **fields("total_loss_per_game", self.total_loss),
            "elapsed_s": self.elapsed_s,
        }

    def to_frame(self):
        import pandas as pd

        rows: list[tuple[str, float]] = [
            ("mean final score", self.mean_final_score.mean),
            ("mean final score se", self.mean_final_score.se),
            ("final score sd", self.final_score_sd),
            ("optimum", self.optimum), ("below optimum", self.gap)]
        for cls, loss in self.losses.items():
            rows += [(f"loss per game, {cls}", loss.per_game.mean),
                     (f"loss per game se, {cls}", loss.per_game.se),
                     (f"loss per decision, {cls}", loss.per_decision.mean),
                     (f"loss per decision se, {cls}", loss.per_decision.se)]
        rows += [("loss per game, all decisions", self.total_loss.mean),
                 ("loss per game se, all decisions", self.total_loss.se),
                 ("loss per decision, all decisions", self.loss_per_decision.mean),
                 ("loss per decision se, all decisions", self.loss_per_decision.se)]
        return pd.DataFrame(rows, columns=["measure", "value"])

    def manifest(self) -> dict[str, Any]:
        return {"kind": "penta-evaluation", "game": "penta", "policy": self.policy,
                "rules": get_rules(self.rules).to_dict(), "mean_exact": self.exact,
                "games": self.games, "seed": self.seed, "seed_given": self.seed_given,
                "analysed_games": self.analysed_games}


def exact_mean(spec: PolicySpec, rules: RuleSet) -> bool:
    """Whether a report card gives ``spec``'s final score exactly: its family has an exact
    distribution of it (:meth:`dicelab.penta.builtin.Family.has_distribution`: a table
    policy's, a policy given as values, an objective's)."""
    return family_of(spec).has_distribution(spec)


def _distribution(spec: PolicySpec, rules: RuleSet, stage: Stage | None
                  ) -> ScoreDistribution | None:
    """``spec``'s exact distribution when it has one (:func:`exact_mean`) within the
    memory limit, else None: it is simulated."""
    if not exact_mean(spec, rules):
        return None
    try:
        return family_of(spec).distribution(spec, rules, stage)
    except OverMemoryLimit:  # its decision block or forward pass does not fit: simulated
        return None


#: A loss is never negative: the range its intervals keep to.
LOSS_RANGE = (0.0, math.inf)


def class_losses(decisions, games: int) -> tuple[dict[str, ClassLoss], Estimate, Estimate]:
    """Each decision class's losses, and all decisions' (per game, per decision), of the
    decisions frame of :func:`dicelab.analyse.analyse_games` (one seat, ``games`` games).
    A loss per decision is a ratio over the games (:func:`dicelab.stats.unit_ratio`)."""
    chosen = decisions["chosen"].astype(str)
    is_box = chosen.str.startswith("box ").to_numpy()
    step = decisions["step"].to_numpy()
    cls = np.where(is_box, 2, np.minimum(step, 2) - 1)
    game = decisions["game"].to_numpy()
    loss = decisions["loss"].to_numpy(dtype=float)
    out = {}
    total = np.zeros(games)
    made = np.zeros(games)
    for k, name in enumerate(DECISION_CLASSES):
        mine = cls == k
        per_game = np.bincount(game[mine], weights=loss[mine], minlength=games)[:games]
        count = np.bincount(game[mine], minlength=games)[:games].astype(float)
        total += per_game
        made += count
        out[name] = ClassLoss(int(mine.sum()), unit_ratio(per_game, count, bounds=LOSS_RANGE),
                              mean_estimate(float(per_game.sum()),
                                            float((per_game ** 2).sum()), games, LOSS_RANGE))
    return (out, mean_estimate(float(total.sum()), float((total ** 2).sum()), games,
                               LOSS_RANGE), unit_ratio(total, made, bounds=LOSS_RANGE))


def evaluate_penta(policy, games: int = DEFAULT_EVALUATE_GAMES, seed: int | None = None,
                   progress: Callable[[int, int], None] | None = None, *,
                   rules: str | None = None, stage: Stage | None = None) -> PentaEvaluation:
    """The report card of ``policy`` (a name, a PolicySpec or a Penta policy object) under
    ``rules``: the final score, exactly (:func:`exact_mean`) or over ``games`` simulated
    games, and the losses of ``games`` games played move by move, both from ``seed``.
    ``progress(done, total)`` counts games; ``stage`` follows the exact distribution's
    work where it takes minutes (:meth:`dicelab.penta.builtin.Family.distribution`)."""
    from dicelab.analyse import analyse_games
    from dicelab.gamelog import format_games, parse_lines
    from dicelab.logplay import MAX_LOG_GAMES, play_games
    from dicelab.penta.solver import solve

    spec = as_spec(policy)
    rs = get_rules(rules)
    games = seeding.check_games(games)
    if games > MAX_LOG_GAMES:
        raise UserError(f"--games: a report card plays at most {MAX_LOG_GAMES:,} games "
                        "move by move")
    seed_given = seed is not None
    seed = seeding.check_seed(seed)
    t0 = time.perf_counter()
    dist = _distribution(spec, rs, stage)
    exact = dist is not None
    total_steps = games if exact else 2 * games
    if dist is not None:
        mean, sd = Estimate(dist.mean, 0.0, 0), dist.sd
        done, kernel = 0, None
    else:
        from dicelab.penta.simulate import simulate_penta

        sim = simulate_penta([spec], games=games, seed=seed, rules=rs.name,
                             progress=None if progress is None else
                             lambda d, _t: progress(d, total_steps))
        mean, sd = sim.seat(0).mean_final_score, sim.seat(0).final_score_sd
        done, kernel = games, sim.kernel
    played = play_games("penta", [spec], games=games, seed=seed, rules=rs.name,
                        progress=None if progress is None else
                        lambda d, _t: progress(done + d, total_steps))
    records = parse_lines(format_games(played).splitlines(), "<report card>", game="penta")
    # judged in expected final score, whatever the policy plays for (an objective's
    # player is judged by its objective in ``dicelab analyse``: it would lose nothing)
    analysis = analyse_games(records, logs=["<report card>"], objective="mean")
    losses, total, per_decision = class_losses(analysis.decisions, games)
    return PentaEvaluation(spec.name, rs.name, exact, None if exact else games, seed,
                           seed_given, mean, sd, float(solve(rs).expected_score), games,
                           losses, total, per_decision, time.perf_counter() - t0,
                           kernel=kernel)


__all__ = ["DECISION_CLASSES", "DEFAULT_EVALUATE_GAMES", "ClassLoss", "PentaEvaluation",
           "class_losses", "evaluate_penta", "exact_mean"]
