"""A Farkle policy's report card, exactly (``dicelab evaluate``; layer 2).

:func:`evaluate_farkle` answers where a policy stands in the two-seat game:

* its score, P(win) + ½P(tie), against ``optimal-win`` and against ``ai``, in each seat
  (exact head to head, :func:`dicelab.farkle.exact.exact_pair`);
* its **exploitability**: what the best response to it scores against it, seats
  averaged, minus ½ (the value of a game with the seats balanced) -- beside what
  ``optimal-win``, which does not aim at it, already takes from it;
* its expected points in a turn from the start, and its expected turns to reach the
  target alone (exact: the turn endings of the game engine, then a linear system over
  totals and lost turns in a row);
* where it banks beside where ``optimal-win`` banks, at the start of the game;
* its costliest decisions: the states (totals, turn points, dice left) where its bank
  or roll gives up the most win probability, each valued as if both players play
  ``optimal-win`` from there on (a decision's own loss, not weighted by how often the
  state is reached).

Any policy the exact solvers read is accepted: a built-in name, a user's bank rule
(:mod:`dicelab.farkle.policy`), a :class:`~dicelab.farkle.policy_table.PolicyTable`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dicelab.errors import UserError
from dicelab.farkle import exact, fixed
from dicelab.farkle.engine.model import model
from dicelab.farkle.rules import POINT_UNIT, FarkleRules, check_target
from dicelab.farkle.solitaire import bank_thresholds, race_ends
from dicelab.outcomes import ExactPair
from dicelab.registry import PolicySpec, parse_policy

#: How many costliest decisions a report card lists.
WORST_DECISIONS = 10
#: Totals (mine and the opponent's) the decisions are examined at: this many steps
#: from 0 to the target.
DECISION_STEPS = 5


@dataclass(frozen=True)
class Decision:
    """A decision the policy makes and what it costs: at ``my``/``opp`` totals with
    ``turn_points`` set aside and ``dice`` left, it ``banks`` (or rolls) where the other
    choice is worth ``loss`` more P(win) + ½P(tie) under optimal play from there on."""

    my: int
    opp: int
    turn_points: int
    dice: int
    banks: bool
    loss: float


@dataclass
class FarkleEvaluation:
    """A policy's report card (the module docstring). Scores are P(win) + ½P(tie)."""

    policy: str
    rules: FarkleRules
    target: int
    vs_optimal_win: ExactPair
    vs_ai: ExactPair
    best_response_score: float  # the best response's score against it, seats averaged
    points_per_turn: float
    turns_to_target: float
    banks: np.ndarray = field(repr=False)  # (P, 7) at the start of the game
    optimal_banks: np.ndarray = field(repr=False)
    worst: list[Decision]
    elapsed_s: float
    seed: None = None  # exact: nothing sampled

    @property
    def exploitability(self) -> float:
        """What the best response takes from it: its score minus ½."""
        return self.best_response_score - 0.5

    @property
    def optimal_win_take(self) -> float:
        """What ``optimal-win`` takes from it: ½ minus its score against optimal-win."""
        return 0.5 - self.vs_optimal_win.score

    def to_dict(self) -> dict[str, Any]:
        def pair(p: ExactPair) -> dict:
            return {"score": p.score, "first": p.first.to_dict(), "second": p.second.to_dict()}

        return {
            "kind": "farkle-evaluation", "game": "farkle", "policy": self.policy,
            "rules": self.rules.name,
            "ending": self.rules.ending, "target": self.target,
            "vs_optimal_win": pair(self.vs_optimal_win), "vs_ai": pair(self.vs_ai),
            "exploitability": self.exploitability,
            "best_response_score": self.best_response_score,
            "optimal_win_take": self.optimal_win_take,
            "points_per_turn": self.points_per_turn, "turns_to_target": self.turns_to_target,
            "bank_thresholds": bank_thresholds(self.banks),
            "optimal_bank_thresholds": bank_thresholds(self.optimal_banks),
            "worst_decisions": [vars(d) for d in self.worst],
            "elapsed_s": self.elapsed_s,
        }

    def manifest(self) -> dict[str, Any]:
        return {"kind": "farkle-evaluation", "game": "farkle", "policy": self.policy,
                "rules": self.rules.to_dict(), "target": self.target}

    def to_frame(self):
        import pandas as pd

        rows = [("score vs optimal-win", self.vs_optimal_win.score),
                ("score vs optimal-win, moving first", self.vs_optimal_win.first.score),
                ("score vs optimal-win, moving second", self.vs_optimal_win.second.score),
                ("score vs ai", self.vs_ai.score),
                ("score vs ai, moving first", self.vs_ai.first.score),
                ("score vs ai, moving second", self.vs_ai.second.score),
                ("exploitability", self.exploitability),
                ("taken by optimal-win", self.optimal_win_take),
                ("points per turn", self.points_per_turn),
                ("turns to target", self.turns_to_target)]
        return pd.DataFrame(rows, columns=["measure", "value"])

    def figures(self) -> dict[str, Any]:
        from dicelab.plots import banks_side_by_side_figure

        at = (f"to {self.target:,} at 0 vs 0 (rules {self.rules.name}, ending "
              f"{self.rules.ending})")  # whose banks move
        return {"banks.png": banks_side_by_side_figure(
            [self.banks, self.optimal_banks],
            [f"{self.policy} {at}", f"optimal-win {at}"])}


def evaluate_farkle(policy, *, rules: FarkleRules, target: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> FarkleEvaluation:
    """The report card of ``policy`` (a name, a PolicySpec, a user's policy object or a
    PolicyTable) in the two-seat game to ``target`` under ``rules``. ``progress(done,
    total)`` counts its steps."""
    target = check_target(target)
    if isinstance(policy, str):
        policy = parse_policy(policy, "farkle")
    if isinstance(policy, PolicySpec) and policy.game != "farkle":
        raise UserError(f"policy '{policy.name}' is a {policy.game} policy; evaluate reads "
                        "Farkle policies")
    name = fixed.name_of(policy)
    resolved = exact.resolve(policy, rules, target)  # refused here if it cannot be read
    steps = 6
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    t0 = time.perf_counter()
    optimal = exact.solve_optimal_win(rules, target)
    step()
    vs_ow = exact.exact_pair(policy, "optimal-win", rules=rules, target=target)
    step()
    vs_ai = exact.exact_pair(policy, "ai", rules=rules, target=target)
    step()
    br = exact.solve_best_response(rules, target, policy)
    second = br.second_outcome
    br_score = 0.5 * (br.first_outcome.score + second.score)
    step()
    read = _slices(resolved, rules, target)  # once: the solitaire and the decisions
    per_turn, turns, banks = _solitaire(read, rules)
    step()
    worst = _costliest(read, optimal, rules, target, WORST_DECISIONS)
    step()
    return FarkleEvaluation(name, rules, target, vs_ow, vs_ai, br_score, per_turn, turns,
                            banks, optimal.bank_decisions(0, 0), worst,
                            time.perf_counter() - t0)


def _slices(resolved, rules: FarkleRules, target: int) -> tuple[fixed.Slices, fixed.Side,
                                                                 fixed.Grid]:
    d = fixed.lead_rows([resolved], rules, target)
    grid = fixed.grid_of(rules, target, d)
    slices = fixed.policy_slices(resolved, grid, rules)
    return slices, fixed.turn_outcomes(slices, rules), grid


def _solitaire(read: tuple[fixed.Slices, fixed.Side, fixed.Grid], rules: FarkleRules
               ) -> tuple[float, float, np.ndarray]:
    """(expected points of a turn from 0 : 0, expected turns to the target alone -- the
    opponent's total staying 0 -- and the bank table at the start)."""
    slices, side, grid = read
    u, zero = grid.u, grid.floor
    start = side.normal[0, 0, zero, zero]
    per_turn = float((side.dist[start] * np.arange(side.dist.shape[1])).sum() * POINT_UNIT)
    # its turns at each total and own run of lost turns, the opponent's total staying 0
    alone = side.normal[:, 0, :, zero]
    turns = race_ends(model(rules), u, side.bust[alone], side.dist[alone], 0.0)[0]
    return per_turn, float(turns[zero]), slices.bank[start].copy()


def costliest_decisions(resolved, optimal, rules: FarkleRules, target: int,
                        count: int = WORST_DECISIONS) -> list[Decision]:
    """The policy's bank-or-roll decisions that give up the most P(win) + ½P(tie) against
    ``optimal`` play from there on, at totals on a grid of :data:`DECISION_STEPS` steps,
    every turn points its table covers and every dice count, no lost turns in a row."""
    return _costliest(_slices(resolved, rules, target), optimal, rules, target, count)


def _costliest(read, optimal, rules: FarkleRules, target: int, count: int) -> list[Decision]:
    slices, _, grid = read
    step = max(target // DECISION_STEPS // POINT_UNIT * POINT_UNIT, POINT_UNIT)
    totals = range(0, target, step)
    found: list[Decision] = []
    rows = slices.bank.shape[1]
    for my in totals:
        for opp in totals:
            bank = slices.bank[slices.normal[0, 0, my // POINT_UNIT + grid.floor,
                                             opp // POINT_UNIT + grid.floor]]
            for p in range(1, min(rows, (target - my) // POINT_UNIT + 1)):
                tp = p * POINT_UNIT
                bank_v, roll_v = optimal.turn_values(my, opp, tp)
                for n in range(1, 7):
                    may_bank = rules.can_bank(tp, n)
                    best = max(bank_v, roll_v[n]) if may_bank else roll_v[n]
                    banks = bool(bank[p, n]) and may_bank
                    loss = best - (bank_v if banks else roll_v[n])
                    if loss > 1e-9:
                        found.append(Decision(my, opp, tp, n, banks, float(loss)))
    found.sort(key=lambda d: -d.loss)
    return found[:count]


__all__ = ["Decision", "FarkleEvaluation", "costliest_decisions", "evaluate_farkle"]
