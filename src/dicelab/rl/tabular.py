"""A tabular Q-learning agent for the Farkle turn, judged exactly (layer 3).

The agent learns on :class:`~dicelab.rl.batch.FarkleBatch` (``mode="turn"``: the reward
is the turn's points). Its state is the roll's class in the rules model (rolls with the
same options are one class) and the turn points before the roll, in rows of 50 capped at
``rows - 1``; its actions are the environments' (option ``k``, then bank or roll). Each
step moves every game once; the step's targets ``r + max Q(next)`` (``r`` at a turn's
end) are averaged per (state, action) and moved into Q with the sample-average step
``k / (n + k)``, at least ``alpha_min``. Exploration is epsilon-greedy among the legal
actions, epsilon falling linearly from ``epsilon[0]`` to ``epsilon[1]``.

:func:`turn_policy_score` evaluates any such greedy policy **exactly**: a forward pass
over the turn points (every set-aside adds points, so each row is visited once) gives its
expected turn score, which ``max-ev``'s is the optimum of (rows past
``MAX_EVAL_ROWS`` are left unfinished and their probability is reported, not hidden).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle.rules import HOT_DICE, POINT_UNIT, FarkleRules
from dicelab.rl.batch import FarkleBatch
from dicelab.rl.farkle import FarkleActions, check_rules

#: Turn points (rows of 50) a policy's exact evaluation follows; what is still rolling
#: past them is reported as ``unfinished``.
MAX_EVAL_ROWS = 1000
#: Base-7 weights of the face counts 1..6 (dicelab.dice's multiset key).
_KEY = 7 ** np.arange(1, dice.FACES + 1, dtype=np.int64)


def roll_classes(actions: FarkleActions, observation: np.ndarray) -> np.ndarray:
    """The roll class of each row of a batch of observations (face counts first)."""
    keys = observation[:, :dice.FACES] @ _KEY
    return actions.sa.roll_class[dice.rank_of_keys(keys)]


def greedy_table(actions: FarkleActions, q: np.ndarray) -> np.ndarray:
    """The greedy action of ``q`` (rows, classes, actions) at every row and class, among
    the actions legal at that row's turn points."""
    sa = actions.sa
    rows, n_classes, n_act = q.shape
    legal = np.zeros((rows, n_classes, n_act), dtype=bool)
    n_opt = np.diff(sa.option_start)
    k = np.arange(actions.max_options)
    has = k[None, :] < n_opt[:, None]  # (classes, options)
    legal[:, :, 0::2] = has[None]
    j = np.minimum(sa.option_start[:-1, None] + k[None, :], sa.points.size - 1)
    tp = np.arange(rows)[:, None, None] + sa.points[j][None]  # units after the set-aside
    floor = sa.bank_floor[sa.dice[j]] // POINT_UNIT
    legal[:, :, 1::2] = has[None] & (tp >= floor[None])
    return np.where(legal, q, -np.inf).argmax(axis=2)


def turn_policy_score(rules: FarkleRules, choose: np.ndarray) -> tuple[float, float]:
    """(exact expected turn score, probability still rolling past ``MAX_EVAL_ROWS``) of
    the turn policy ``choose[row, class]`` (an action; rows past the table's last play
    its last row). An action that is illegal at the turn points reached is an error."""
    acts = FarkleActions(rules)
    sa = acts.sa
    last = choose.shape[0] - 1
    mass = np.zeros((MAX_EVAL_ROWS + 1, HOT_DICE + 1))
    mass[0, HOT_DICE] = 1.0
    score = 0.0
    for row in range(MAX_EVAL_ROWS):
        for n in range(1, HOT_DICE + 1):
            m = mass[row, n]
            if m == 0.0:
                continue
            for c in range(int(sa.class_start[n]), int(sa.class_start[n + 1])):
                a = int(choose[min(row, last), c])
                k, bank = divmod(a, 2)
                if k >= sa.option_start[c + 1] - sa.option_start[c]:
                    raise UserError(f"the policy's action {a} is illegal for class {c}")
                j = int(sa.option_start[c]) + k
                to = row + int(sa.points[j])
                p = m * float(sa.class_prob[c])
                if bank:
                    if to * POINT_UNIT < sa.bank_floor[sa.dice[j]]:
                        raise UserError(f"the policy banks where the rules forbid it "
                                        f"(row {row}, class {c})")
                    score += p * to * POINT_UNIT
                else:
                    mass[min(to, MAX_EVAL_ROWS), int(sa.dice[j])] += p
    return score, float(mass[MAX_EVAL_ROWS].sum())


@dataclass
class TurnTraining:
    """A Q-learning run and its learning curve, judged against ``max-ev``."""

    rules: FarkleRules
    games: int
    steps: int
    rows: int
    seed: int
    alpha_min: float
    epsilon: tuple[float, float]
    optimum: float
    curve: pd.DataFrame
    q: np.ndarray = field(repr=False)
    elapsed_s: float = 0.0

    @property
    def final_score(self) -> float:
        return float(self.curve["exact_score"].iloc[-1])

    @property
    def final_gap(self) -> float:
        """Points per turn below ``max-ev`` (exact)."""
        return self.optimum - self.final_score

    def manifest(self) -> dict[str, Any]:
        return {"experiment": "rl-turn-qlearning", "rules": self.rules.to_dict(),
                "agent": {"kind": "tabular Q-learning", "games": self.games,
                          "steps": self.steps, "rows": self.rows, "seed": self.seed,
                          "alpha_min": self.alpha_min, "epsilon": list(self.epsilon)},
                "elapsed_s": self.elapsed_s}

    def to_dict(self) -> dict[str, Any]:
        return {"rules": self.rules.name, "max_ev": self.optimum,
                "final_exact_score": self.final_score, "final_gap": self.final_gap,
                "final_unfinished": float(self.curve["unfinished"].iloc[-1]),
                "transitions": int(self.curve["transitions"].iloc[-1])}

    def to_frame(self) -> pd.DataFrame:
        return self.curve


def train_turn(rules=None, *, games: int = 256, steps: int = 2000, rows: int = 60,
               seed: int = 0, alpha_min: float = 0.02, epsilon: tuple[float, float] = (0.3, 0.02),
               evaluations: int = 10) -> TurnTraining:
    """Train the tabular agent for ``steps`` batch steps of ``games`` turns at once,
    evaluating its greedy policy exactly ``evaluations`` times (evenly spaced)."""
    table = check_rules(rules, None)
    if table.farkle_penalty:
        raise UserError(f"rules '{table.name}' have a farkle-penalty, which one turn cannot "
                        "count: train on rules without one")
    for name, v, lo in (("games", games, 1), ("steps", steps, 1), ("rows", rows, 1),
                        ("evaluations", evaluations, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise UserError(f"{name} must be a positive integer, not {v!r}")
    if not 0.0 < alpha_min <= 1.0:
        raise UserError(f"alpha_min must be in (0, 1], not {alpha_min!r}")
    if len(epsilon) != 2 or not all(0.0 <= e <= 1.0 for e in epsilon):
        raise UserError(f"epsilon must be two numbers in [0, 1], not {epsilon!r}")
    from dicelab.farkle.advise import max_ev_solution

    t0 = time.perf_counter()
    optimum = max_ev_solution(table).expected_score
    batch = FarkleBatch(games, rules=table, mode="turn", seed=seed)
    acts = batch.actions
    rng = np.random.default_rng(seed)
    q = np.zeros((rows, acts.sa.n_classes, acts.n_actions))
    n = np.zeros_like(q)
    obs, _ = batch.reset()
    state = _state(acts, obs, rows)
    marks = set(np.linspace(0, steps, evaluations + 1).astype(int)[1:].tolist())
    curve = []
    turns = 0
    for t in range(1, steps + 1):
        eps = epsilon[0] + (epsilon[1] - epsilon[0]) * (t - 1) / max(steps - 1, 1)
        mask = obs["action_mask"].astype(bool)
        greedy = np.where(mask, q[state], -np.inf).argmax(axis=1)
        explore = np.argmax(mask * rng.random(mask.shape), axis=1)
        a = np.where(rng.random(games) < eps, explore, greedy)
        idx = (*state, a)
        obs, reward, done, _, _ = batch.step(a)
        nxt = _state(acts, obs, rows)
        best_next = np.where(obs["action_mask"].astype(bool), q[nxt], -np.inf).max(axis=1)
        target = np.where(done, reward, reward + best_next)
        total = np.zeros_like(q)
        count = np.zeros_like(q)
        np.add.at(total, idx, target)
        np.add.at(count, idx, 1.0)
        seen = count > 0
        step = np.maximum(count[seen] / (n[seen] + count[seen]), alpha_min)
        q[seen] += step * (total[seen] / count[seen] - q[seen])
        n[seen] += count[seen]
        state = nxt
        turns += int(done.sum())
        if t in marks:
            score, unfinished = turn_policy_score(table, greedy_table(acts, q))
            curve.append({"steps": t, "transitions": t * games, "turns": turns,
                          "exact_score": score, "gap": optimum - score,
                          "unfinished": unfinished})
    return TurnTraining(table, games, steps, rows, seed, alpha_min, tuple(epsilon), optimum,
                        pd.DataFrame(curve), q, time.perf_counter() - t0)


def _state(acts: FarkleActions, obs: dict, rows: int) -> tuple[np.ndarray, np.ndarray]:
    o = obs["observation"]
    return np.minimum(o[:, 7] // POINT_UNIT, rows - 1), roll_classes(acts, o)
