"""A trained agent as a dicelab Farkle policy: the environments' observations rebuilt
from a policy's State, and the agent's action made a legal Move."""

from __future__ import annotations

import numpy as np
import pytest

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle.policy import Policy, State
from dicelab.rl import IllegalActionError
from dicelab.rl.aec import farkle_env
from dicelab.rl.farkle import FarkleSoloEnv
from dicelab.rl.policy import as_policy, observation


def _random_agent(seed: int):
    rng = np.random.default_rng(seed)
    return lambda obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))


def test_an_agent_is_a_policy_whose_moves_are_legal():
    policy = as_policy(_random_agent(0), name="random")
    assert isinstance(policy, Policy) and policy.name == "random"
    env = farkle_env(2, target=1000)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for agent in env.agent_iter(500):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        state = env.decision_state()
        assert state.seat == seat and state.target == env.target
        built = observation(state, "table")
        assert (built["observation"] == obs["observation"]).all()
        assert (built["action_mask"] == obs["action_mask"]).all()
        move = policy.decide(state)
        option = next(o for o in state.options() if o.keep == move.keep)
        assert not move.bank or state.can_bank(option)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_the_solo_encoding_is_the_solitaire_envs_and_the_action_becomes_its_move():
    env = FarkleSoloEnv(target=2000)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(300):
        state = env.decision_state()
        assert (observation(state, "solo")["observation"] == obs["observation"]).all()
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        move = as_policy(lambda o, a=a: a, encoding="solo").decide(state)
        points, left = info["options"][a // 2]
        option = next(o for o in state.options() if o.keep == move.keep)
        assert (option.points, option.dice_left, move.bank) == (points, left, bool(a % 2))
        obs, _, done, _, info = env.step(a)
        if done:
            obs, info = env.reset()


def test_an_agent_that_reads_the_yardstick_moves_as_advise_says():
    from dicelab.farkle.advise import advise
    from dicelab.farkle.rules import PRESETS
    from dicelab.farkle.solitaire import max_ev_capped
    from dicelab.rl.farkle import FarkleActions

    rules = PRESETS["default"]
    acts = FarkleActions(rules)
    sol = max_ev_capped(rules)

    def optimal(obs):  # the exact best action, from the observation alone
        o = obs["observation"]
        rank = dice.rank_of_counts([0, *o[:6].tolist()])
        values = acts.values(rank, int(o[7]), obs["action_mask"],
                             lambda tp: sol.turn_values(tp, 0))
        return int(np.argmax(values))

    policy = as_policy(optimal, name="optimal-agent", encoding="turn")
    rng = np.random.default_rng(4)
    for _ in range(50):
        n = int(rng.integers(1, 7))
        roll = tuple(sorted(rng.integers(1, 7, size=n).tolist()))
        tp = 0 if n == 6 else 50 * int(rng.integers(1, 30))
        state = State(roll, tp, 0, (0,), (0,), False, 10_000, rules)
        if not state.options():
            continue
        move = policy.decide(state)
        best = advise(list(roll), turn_points=tp).options[0]
        option = next(o for o in state.options() if o.keep == move.keep)
        assert (option.points, option.dice_left, move.bank) == \
            (best.points, option.dice_left, best.action == "bank")
        assert (best.dice == option.dice_left) or best.action == "bank"


def test_an_illegal_answer_or_bad_arguments_are_errors():
    from dicelab.farkle.rules import PRESETS

    state = State((2, 3, 4, 6, 6, 6), 0, 0, (0,), (0,), False, 10_000, PRESETS["default"])
    with pytest.raises(IllegalActionError, match="illegal"):
        as_policy(lambda obs: 2).decide(state)  # the roll has one option
    with pytest.raises(UserError, match="encoding"):
        as_policy(lambda obs: 0, encoding="pixels")
    with pytest.raises(UserError, match="function"):
        as_policy(3)
    with pytest.raises(UserError, match="name"):
        as_policy(lambda obs: 0, name="")
