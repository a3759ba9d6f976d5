"""A tabular Q-learning agent for the Farkle turn and the solitaire game, judged exactly
(layer 3).

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
:func:`train_solo` adds the banked total to the state (the batch's ``mode="solo"``) and
:func:`solo_policy_turns` gives a solitaire policy's exact expected turns to the target,
which ``fastest``'s is the optimum of.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle.rules import HOT_DICE, POINT_UNIT, FarkleRules, set_asides
from dicelab.rl import kernels
from dicelab.rl.batch import FarkleBatch
from dicelab.rl.common import check_target_argument
from dicelab.rl.farkle import FarkleActions, check_rules
from dicelab.stats import Estimate, fields, mean_estimate
from dicelab.text import is_whole

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


def turn_outcomes(rules: FarkleRules, choose: np.ndarray
                  ) -> tuple[np.ndarray, float, float]:
    """The exact outcome of one turn under the policy ``choose[row, class]`` (an action;
    rows past the table's last play its last row): ``bank[g]``, the probability to bank
    ``g`` rows (of 50 points); the probability to lose the turn; the probability still
    rolling past ``MAX_EVAL_ROWS``. An action illegal at the turn points reached is an
    error."""
    sa = set_asides(rules)
    bank = np.zeros(MAX_EVAL_ROWS + sa.max_points + 1)
    mass = np.zeros((MAX_EVAL_ROWS + 1, HOT_DICE + 1))
    lost, unfinished, bad = kernels.turn_outcomes(
        np.ascontiguousarray(choose, dtype=np.int64), sa.class_start, sa.class_prob,
        sa.option_start, sa.points, sa.dice, sa.bust, sa.bank_floor, MAX_EVAL_ROWS, bank,
        mass)
    if bad >= 0:
        raise UserError(f"the policy's action for roll class {bad} is illegal (an option "
                        "the roll does not have, or a bank the rules forbid there)")
    return bank, lost, unfinished


def turn_policy_score(rules: FarkleRules, choose: np.ndarray) -> tuple[float, float]:
    """(exact expected turn score, probability still rolling past ``MAX_EVAL_ROWS``) of
    the turn policy ``choose[row, class]`` (see :func:`turn_outcomes`)."""
    bank, _, unfinished = turn_outcomes(rules, choose)
    return float(bank @ (np.arange(bank.size) * POINT_UNIT)), unfinished


def solo_policy_turns(rules: FarkleRules, target: int, choose: np.ndarray
                      ) -> tuple[float, float]:
    """(exact expected turns to reach ``target`` from 0, the largest probability of a
    turn still rolling past ``MAX_EVAL_ROWS``) of the solitaire policy
    ``choose[total // 50, row, class]``: from the top total down, each total's turn
    outcome (:func:`turn_outcomes`) gives ``E(u) = (1 + sum_g P(bank g) E(u + g)) / (1 -
    P(lost))`` (a lost turn keeps the total; rules without a farkle penalty)."""
    big = target // POINT_UNIT
    turns = np.zeros(big + 1 + MAX_EVAL_ROWS + 64)
    worst = 0.0
    for u in range(big - 1, -1, -1):
        bank, lost, unfinished = turn_outcomes(rules, choose[u])
        worst = max(worst, unfinished)
        if lost >= 1.0:
            return float("inf"), worst
        ahead = turns[u:u + bank.size]
        turns[u] = (1.0 + float(bank[:ahead.size] @ ahead)) / (1.0 - lost)
    return float(turns[0]), worst


@dataclass
class Training:
    """A Q-learning run and its learning curve, judged exactly against the optimum
    (``kind`` ``"turn"``: expected turn score against ``max-ev``; ``"solo"``: expected
    turns to ``target`` against ``fastest``). ``curve["exact"]`` is the greedy policy's
    exact measure, ``curve["gap"]`` its distance from the optimum (>= 0)."""

    kind: str
    rules: FarkleRules
    target: int | None
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
    #: the solitaire agent against a two-seat opponent (:func:`duel`), once played
    duel: Duel | None = None

    @property
    def measure(self) -> str:
        return "expected turn score" if self.kind == "turn" else "expected turns to the target"

    @property
    def final(self) -> float:
        return float(self.curve["exact"].iloc[-1])

    @property
    def final_gap(self) -> float:
        """The greedy policy's distance from the optimum (exact): points per turn below
        ``max-ev``, or turns more than ``fastest``."""
        return float(self.curve["gap"].iloc[-1])

    def manifest(self) -> dict[str, Any]:
        return {"experiment": f"rl-{self.kind}-qlearning", "rules": self.rules.to_dict(),
                "target": self.target,
                "agent": {"kind": "tabular Q-learning", "games": self.games,
                          "steps": self.steps, "rows": self.rows, "seed": self.seed,
                          "alpha_min": self.alpha_min, "epsilon": list(self.epsilon)},
                "elapsed_s": self.elapsed_s}

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "rules": self.rules.name, "target": self.target,
                "measure": self.measure,
                "optimum": self.optimum, "optimal_policy": "max-ev" if self.kind == "turn"
                else "fastest", "final_exact": self.final, "final_gap": self.final_gap,
                "final_unfinished": float(self.curve["unfinished"].iloc[-1]),
                "transitions": int(self.curve["transitions"].iloc[-1]),
                **({} if self.duel is None else {"duel": self.duel.to_dict()})}

    def to_frame(self) -> pd.DataFrame:
        return self.curve

    def agent(self) -> Callable[[dict], int]:
        """The greedy policy as a function from the environment's observation to its
        action (:class:`~dicelab.rl.farkle.FarkleTurnEnv`'s for ``kind`` ``"turn"``,
        :class:`~dicelab.rl.farkle.FarkleSoloEnv`'s for ``"solo"``): what
        :func:`dicelab.rl.policy.as_policy` makes a dicelab policy of, with that
        encoding."""
        acts = FarkleActions(self.rules)
        rows = self.rows
        if self.kind == "turn":
            choose = greedy_table(acts, self.q)[None]
        else:
            choose = np.stack([greedy_table(acts, q_u) for q_u in self.q])

        def act(obs: dict) -> int:
            o = np.asarray(obs["observation"])[None]
            total = 0 if self.kind == "turn" else min(int(o[0, 8]) // POINT_UNIT,
                                                      choose.shape[0] - 1)
            row = min(int(o[0, 7]) // POINT_UNIT, rows - 1)
            return int(choose[total, row, roll_classes(acts, o)[0]])

        return act


def _check_training(rules, games, steps, rows, evaluations, alpha_min, epsilon,
                    what: str) -> FarkleRules:
    table = check_rules(rules, None)
    if table.farkle_penalty:
        raise UserError(f"rules '{table.name}' have a farkle-penalty, which {what} does not "
                        "count: train on rules without one")
    for name, v in (("games", games), ("steps", steps), ("rows", rows),
                    ("evaluations", evaluations)):
        if not is_whole(v) or v < 1:
            raise UserError(f"{name} must be a positive integer, not {v!r}")
    if not 0.0 < alpha_min <= 1.0:
        raise UserError(f"alpha_min must be in (0, 1], not {alpha_min!r}")
    if len(epsilon) != 2 or not all(0.0 <= e <= 1.0 for e in epsilon):
        raise UserError(f"epsilon must be two numbers in [0, 1], not {epsilon!r}")
    return table


def _q_learn(batch: FarkleBatch, q: np.ndarray, state, steps: int, seed: int,
             alpha_min: float, epsilon: tuple[float, float], evaluations: int, judge
             ) -> list[dict]:
    """The shared loop: ``state(obs)`` indexes ``q`` by game, ``judge(q)`` gives (exact,
    gap, unfinished) of the greedy policy."""
    games = batch.num_envs
    rng = np.random.default_rng(seed)
    q_flat = q.reshape(-1)  # views: the updates write into q
    n_flat = np.zeros(q.size)
    obs, _ = batch.reset()
    s = state(obs)
    marks = set(np.linspace(0, steps, evaluations + 1).astype(int)[1:].tolist())
    curve = []
    episodes = 0
    for t in range(1, steps + 1):
        eps = epsilon[0] + (epsilon[1] - epsilon[0]) * (t - 1) / max(steps - 1, 1)
        mask = obs["action_mask"].astype(bool)
        greedy = np.where(mask, q[s], -np.inf).argmax(axis=1)
        explore = np.argmax(mask * rng.random(mask.shape), axis=1)
        a = np.where(rng.random(games) < eps, explore, greedy)
        idx = (*s, a)
        obs, reward, done, _, _ = batch.step(a)
        nxt = state(obs)
        best_next = np.where(obs["action_mask"].astype(bool), q[nxt], -np.inf).max(axis=1)
        target = np.where(done, reward, reward + best_next)
        # the step's targets averaged per (state, action), then a sample-average step
        seen, which = np.unique(np.ravel_multi_index(idx, q.shape), return_inverse=True)
        count = np.bincount(which).astype(float)
        mean = np.bincount(which, weights=target) / count
        step = np.maximum(count / (n_flat[seen] + count), alpha_min)
        q_flat[seen] += step * (mean - q_flat[seen])
        n_flat[seen] += count
        s = nxt
        episodes += int(done.sum())
        if t in marks:
            exact, gap, unfinished = judge(q)
            curve.append({"steps": t, "transitions": t * games, "episodes": episodes,
                          "exact": exact, "gap": gap, "unfinished": unfinished})
    return curve


def train_turn(rules=None, *, games: int = 256, steps: int = 2000, rows: int = 60,
               seed: int = 0, alpha_min: float = 0.02, epsilon: tuple[float, float] = (0.3, 0.02),
               evaluations: int = 10) -> Training:
    """Train the tabular agent on one turn for ``steps`` batch steps of ``games`` turns at
    once, evaluating its greedy policy exactly ``evaluations`` times (evenly spaced)."""
    table = _check_training(rules, games, steps, rows, evaluations, alpha_min, epsilon,
                            "one turn")
    from dicelab.farkle.solitaire import max_ev_capped

    t0 = time.perf_counter()
    optimum = max_ev_capped(table).expected_score
    batch = FarkleBatch(games, rules=table, mode="turn", seed=seed)
    acts = batch.actions
    q = np.zeros((rows, acts.sa.n_classes, acts.n_actions))

    def state(obs):
        o = obs["observation"]
        return np.minimum(o[:, 7] // POINT_UNIT, rows - 1), roll_classes(acts, o)

    def judge(q):
        score, unfinished = turn_policy_score(table, greedy_table(acts, q))
        return score, optimum - score, unfinished

    curve = _q_learn(batch, q, state, steps, seed, alpha_min, epsilon, evaluations, judge)
    return Training("turn", table, None, games, steps, rows, seed, alpha_min,
                    tuple(epsilon), optimum, pd.DataFrame(curve), q,
                    time.perf_counter() - t0)


def train_solo(rules=None, *, target: int = 1000, games: int = 256, steps: int = 2000,
               rows: int = 40, seed: int = 0, alpha_min: float = 0.02,
               epsilon: tuple[float, float] = (0.3, 0.02), evaluations: int = 10
               ) -> Training:
    """Train the tabular agent on the solitaire game to ``target`` (its state adds the
    banked total; the reward is -1 a turn), judged by :func:`solo_policy_turns` against
    ``fastest``. The table has ``target / 50 * rows * classes * actions`` entries: keep
    the target small."""
    table = _check_training(rules, games, steps, rows, evaluations, alpha_min, epsilon,
                            "this judge")
    target = check_target_argument(target)
    from dicelab.farkle.solitaire import fastest_solution

    big = target // POINT_UNIT
    t0 = time.perf_counter()
    optimum = fastest_solution(table, target).expected_turns_to_target
    batch = FarkleBatch(games, rules=table, target=target, mode="solo", seed=seed)
    acts = batch.actions
    q = np.zeros((big, rows, acts.sa.n_classes, acts.n_actions))

    def state(obs):
        o = obs["observation"]
        return (np.minimum(o[:, 8] // POINT_UNIT, big - 1),
                np.minimum(o[:, 7] // POINT_UNIT, rows - 1), roll_classes(acts, o))

    def judge(q):
        choose = np.stack([greedy_table(acts, q[u]) for u in range(big)])
        turns, unfinished = solo_policy_turns(table, target, choose)
        return turns, turns - optimum, unfinished

    curve = _q_learn(batch, q, state, steps, seed, alpha_min, epsilon, evaluations, judge)
    return Training("solo", table, target, games, steps, rows, seed, alpha_min,
                    tuple(epsilon), optimum, pd.DataFrame(curve), q,
                    time.perf_counter() - t0)


@dataclass(frozen=True)
class Duel:
    """A solitaire agent (:func:`train_solo`) against ``opponent`` in two seats: ``games``
    games with the agent moving first and ``games`` with it moving second, on common dice
    (the k-th turn of the game's first mover draws the same dice in both runs). Each is
    the agent's P(win) + P(tie)/2 with its standard error. Beside them, exactly, the same
    for ``reference``, the optimal solitaire policy the agent learns towards."""

    opponent: str
    target: int
    games: int
    seed: int
    first: Estimate
    second: Estimate
    reference: str
    reference_first: float
    reference_second: float

    @property
    def seats_averaged(self) -> Estimate:
        """The two seats' mean; its SE treats the runs as independent, which the common
        dice (negatively correlated across the swapped seats) make conservative."""
        return Estimate((self.first.mean + self.second.mean) / 2,
                        math.hypot(self.first.se, self.second.se) / 2, 2 * self.games)

    @property
    def reference_averaged(self) -> float:
        return (self.reference_first + self.reference_second) / 2

    def to_dict(self) -> dict[str, Any]:
        return {"opponent": self.opponent, "target": self.target,
                "games_per_seat": self.games, "seed": self.seed,
                **fields("agent_first", self.first), **fields("agent_second", self.second),
                **fields("agent_seats_averaged", self.seats_averaged),
                "reference": self.reference, "reference_first": self.reference_first,
                "reference_second": self.reference_second,
                "reference_seats_averaged": self.reference_averaged}


def duel(training: Training, *, opponent: str = "optimal-win", games: int = 20_000,
         seed: int = 0, progress: Callable[[int, int], None] | None = None) -> Duel:
    """Play ``training``'s greedy solitaire agent against ``opponent`` in both seats
    (the referee plays it move by move, :func:`dicelab.farkle.simulate.simulate_python`)
    and solve ``fastest`` against the same opponent exactly (:class:`Duel`)."""
    if training.kind != "solo":
        raise UserError("a duel needs a solitaire agent (train_solo): a turn agent does "
                        "not know its total")
    from dicelab.farkle import kernels as K
    from dicelab.farkle.exact import exact_pair
    from dicelab.farkle.simulate import simulate_python
    from dicelab.rl.policy import as_policy

    agent = as_policy(training.agent(), name="q-learning", encoding="solo")
    seats = []
    for first in (0, 1):
        def tick(done: int, _total: int, base: int = first * games) -> None:
            if progress is not None:
                progress(base + done, 2 * games)

        res = simulate_python([agent, opponent], games=games, seed=seed,
                              target=training.target, rules=training.rules,
                              first_seat=first, progress=tick, streams=K.STREAM_PER_TURN)
        s = res.seat(0)
        seats.append(mean_estimate(s.wins + s.ties / 2, s.wins + s.ties / 4, games))
    ref = exact_pair("fastest", opponent, rules=training.rules, target=training.target)
    return Duel(opponent, training.target, games, seed, seats[0], seats[1], "fastest",
                ref.first.win + ref.first.tie / 2, ref.second.win + ref.second.tie / 2)
