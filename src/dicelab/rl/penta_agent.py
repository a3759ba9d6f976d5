"""A Penta agent that learns the value of a card from its own games, judged exactly
(layer 3).

The agent decides as ``optimal`` does, by the one-turn widget (the best keeps and box for
the values of the states a turn can lead to, :func:`dicelab.penta.policies.analyse_turn`),
but with values it learns instead of the solved ones: a linear function of a few features
of the card (:func:`features`),

* which of the 13 boxes are still open;
* the capped upper total and how many upper boxes are open (the upper bonus);
* whether the Penta box holds 50 and how many boxes are open (the Penta bonuses).

It learns by approximate policy iteration on Monte Carlo returns. Each iteration plays
``games`` games with the current values, fits the features of each turn's starting card
to the points the game scored from that turn on (ridge least squares), and plays the next
iteration with the fitted values. Iteration 0 plays with zero values, which is
``greedy``. The agent knows the dice (the widget's expectations) but not the values of
the game: those it learns from play.

:func:`judge` evaluates the final policy **exactly**: the decision block of the widget
under the learned values and the forward pass of
:func:`dicelab.penta.distribution.values_distribution`, so its gap to ``optimal`` is an
exact number. The learning curve beside it is each iteration's own games (a mean and its
standard error).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dicelab.errors import UserError
from dicelab.penta import referee
from dicelab.penta.distribution import ScoreDistribution, values_distribution
from dicelab.penta.policies import Scorecard
from dicelab.penta.policy import ValuesPolicy
from dicelab.penta.rules import (
    FULL_CARD,
    MASK_SHIFT,
    N_BOXES,
    N_STATES,
    UP_SHIFT,
    UPPER_BOXES,
    UPPER_TARGET,
    RuleSet,
    state_index,
)
from dicelab.rl.penta import check_penta_rules
from dicelab.stats import mean_estimate
from dicelab.text import is_whole

#: The upper bonus's block: cells by the *slack*, the par (three of each face) of the open
#: upper boxes minus the points the bonus still needs, in steps of ``SLACK_STEP`` clipped
#: to +-``SLACK_CLIP``, per number of open upper boxes; then one cell for a bonus earned
#: and one for a bonus no longer possible.
SLACK_STEP = 5
SLACK_CLIP = 30
N_SLACK = 2 * SLACK_CLIP // SLACK_STEP + 1
N_UPPER_CELLS = N_SLACK * UPPER_BOXES + 2
#: Feature blocks: open boxes; the upper bonus; (Penta 50, open boxes).
N_FEATURES = N_BOXES + N_UPPER_CELLS + 2 * (N_BOXES + 1)
#: Iterations whose games each fit uses (the latest ones), and how far the weights move
#: towards each new fit (after the first): a damped policy iteration, which a single
#: misjudged fit does not throw back.
MEMORY = 3
STEP = 0.5
_PAR = 3 * np.arange(1, UPPER_BOXES + 1)
_UP_MASK = (1 << UPPER_TARGET.bit_length()) - 1


def _parts(states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per state: the open boxes (0/1, states x 13) and the column of each one-hot block."""
    s = np.asarray(states, dtype=np.int64)
    open_ = 1 - (((s >> MASK_SHIFT)[:, None] >> np.arange(N_BOXES)) & 1)
    upper_open = open_[:, :UPPER_BOXES].sum(axis=1)
    need = np.maximum(UPPER_TARGET - ((s >> UP_SHIFT) & _UP_MASK), 0)
    slack = np.clip(open_[:, :UPPER_BOXES] @ _PAR - need, -SLACK_CLIP, SLACK_CLIP)
    cell = (slack + SLACK_CLIP) // SLACK_STEP * UPPER_BOXES + np.maximum(upper_open - 1, 0)
    cell = np.where(need == 0, N_UPPER_CELLS - 2,
                    np.where(upper_open == 0, N_UPPER_CELLS - 1, cell))
    penta = N_BOXES + N_UPPER_CELLS + (s & 1) * (N_BOXES + 1) + open_.sum(axis=1)
    return open_, N_BOXES + cell, penta


def features(states: np.ndarray) -> np.ndarray:
    """The feature matrix (float64, states x :data:`N_FEATURES`) of state indices."""
    open_, upper, penta = _parts(states)
    x = np.zeros((open_.shape[0], N_FEATURES))
    x[:, :N_BOXES] = open_
    rows = np.arange(open_.shape[0])
    x[rows, upper] = 1.0
    x[rows, penta] = 1.0
    return x


def values_of(weights: np.ndarray) -> np.ndarray:
    """The value of every state index under ``weights`` (``features(s) @ weights``; 0 on
    a full card)."""
    s = np.arange(N_STATES)
    open_, upper, penta = _parts(s)
    v = open_ @ weights[:N_BOXES] + weights[upper] + weights[penta]
    v[(s >> MASK_SHIFT) == FULL_CARD] = 0.0
    return v


def play_game(values: np.ndarray, rules: RuleSet, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    """One game by the widget under ``values``, played by the Penta referee: (each turn's
    starting state index, the points the game scored from that turn on)."""
    card = Scorecard()
    states = np.empty(N_BOXES, dtype=np.int64)
    totals = np.empty(N_BOXES, dtype=np.int64)
    for t, turn in enumerate(referee.play_game([ValuesPolicy("rl-penta", values)], rules,
                                               rng)):
        states[t] = state_index(card.mask, card.up, card.fifty)
        totals[t] = card.total
        card = referee.fill(card, turn["box"], turn["rolls"][-1], rules)
    return states, card.total - totals


@dataclass
class PentaTraining:
    """A run of the agent: its learning curve (``curve``: per iteration the games played
    and their mean final score with its SE), the final weights and values, and once
    judged (:func:`judge`) the exact distribution of the final policy."""

    rules: RuleSet
    games: int
    iterations: int
    seed: int
    ridge: float
    curve: pd.DataFrame
    weights: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)
    elapsed_s: float = 0.0
    #: once judged: ``optimal``'s exact mean and the policy's exact distribution
    optimum: float | None = None
    exact: ScoreDistribution | None = field(default=None, repr=False)

    def policy(self, name: str = "rl-penta") -> ValuesPolicy:
        """The learned policy as a dicelab Penta policy object."""
        return ValuesPolicy(name, self.values)

    @property
    def final_gap(self) -> float | None:
        """Points below ``optimal``'s mean, exactly (after :func:`judge`)."""
        return None if self.exact is None else self.optimum - self.exact.mean

    def manifest(self) -> dict[str, Any]:
        return {"experiment": "rl-penta-policy-iteration", "rules": self.rules.name,
                "agent": {"kind": "linear values, approximate policy iteration",
                          "features": N_FEATURES, "games": self.games,
                          "iterations": self.iterations, "seed": self.seed,
                          "ridge": self.ridge},
                "elapsed_s": self.elapsed_s}

    def to_dict(self) -> dict[str, Any]:
        last = self.curve.iloc[-1]
        return {"rules": self.rules.name, "measure": "mean final score",
                "optimum": self.optimum, "optimal_policy": "optimal",
                "final_exact": None if self.exact is None else self.exact.mean,
                "final_exact_sd": None if self.exact is None else self.exact.sd,
                "final_gap": self.final_gap, "games": int(self.curve["games"].sum()),
                "last_iteration_mean": float(last["mean"]),
                "last_iteration_se": float(last["se"])}

    def to_frame(self) -> pd.DataFrame:
        return self.curve


def train_penta(rules=None, *, games: int = 500, iterations: int = 6, seed: int = 0,
                ridge: float = 1.0) -> PentaTraining:
    """Train the agent (see the module docstring): ``iterations`` rounds of ``games``
    games each, iteration ``k`` drawing its dice from ``SeedSequence(seed, spawn_key=(k,))``
    (a seed gives the same run)."""
    rs = check_penta_rules(rules)
    for name, value, low in (("games", games, 1), ("iterations", iterations, 1)):
        if not is_whole(value) or value < low:
            raise UserError(f"{name} must be an integer >= {low}, not {value!r}")
    games, iterations = int(games), int(iterations)
    if not ridge > 0:
        raise UserError(f"ridge must be > 0, not {ridge!r}")
    t0 = time.perf_counter()
    weights = np.zeros(N_FEATURES)
    values = np.zeros(N_STATES)
    curve, recent = [], []
    for k in range(iterations):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k,)))
        played = [play_game(values, rs, rng) for _ in range(games)]
        states = np.concatenate([p[0] for p in played])
        to_come = np.concatenate([p[1] for p in played]).astype(np.float64)
        finals = to_come[::N_BOXES]
        est = mean_estimate(float(finals.sum()), float((finals**2).sum()), games)
        curve.append({"iteration": k, "games": games, "mean": est.mean, "se": est.se})
        recent = [*recent, (features(states), to_come)][-MEMORY:]
        x = np.concatenate([r[0] for r in recent])
        y = np.concatenate([r[1] for r in recent])
        fit = np.linalg.solve(x.T @ x + ridge * np.eye(N_FEATURES), x.T @ y)
        weights = fit if k == 0 else (1 - STEP) * weights + STEP * fit
        values = values_of(weights)
    return PentaTraining(rs, games, iterations, seed, ridge, pd.DataFrame(curve), weights,
                         values, time.perf_counter() - t0)


def judge(training: PentaTraining) -> PentaTraining:
    """Evaluate the trained policy exactly (its final TOTAL's distribution); returns the
    training with ``exact`` and ``optimum`` set."""
    from dicelab.penta.solver import solve

    training.optimum = float(solve(training.rules).values[0])
    training.exact = values_distribution(training.values, training.rules, "rl-penta")
    return training


__all__ = ["N_FEATURES", "PentaTraining", "features", "judge", "play_game", "train_penta",
           "values_of"]
