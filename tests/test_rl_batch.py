"""The batched Farkle environment: the single-game environments' masks and observations,
its rollouts of a fixed policy against the exact values, errors, seeding."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dicelab.errors import UserError
from dicelab.farkle.rules import load_rules
from dicelab.farkle.solitaire import race, threshold_bank_table, threshold_distribution
from dicelab.rl import IllegalActionError
from dicelab.rl.batch import FarkleBatch


def _random_legal(mask: np.ndarray, rng) -> np.ndarray:
    return np.argmax(mask * rng.random(mask.shape), axis=1)


@pytest.mark.parametrize("rules", ["default", "facebook", "zilch"])
@pytest.mark.parametrize("mode", ["solo", "turn"])
def test_masks_and_observations_are_the_single_game_encoding(rules, mode):
    batch = FarkleBatch(64, rules=rules, target=1000, mode=mode, seed=1)
    obs, info = batch.reset()
    rng = np.random.default_rng(1)
    space = batch.single_observation_space
    for _ in range(200):
        for i in range(batch.num_envs):
            rank, tp = int(batch._rank[i]), int(batch._tp[i])
            assert (obs["action_mask"][i] == batch.actions.mask(rank, tp)).all()
            extra = (int(batch._total[i]), int(batch._lost[i])) if mode == "solo" else ()
            assert (obs["observation"][i] == batch.actions.observation(rank, tp, extra)).all()
            assert space.contains({"observation": obs["observation"][i],
                                   "action_mask": obs["action_mask"][i]})
        obs, reward, done, _, info = batch.step(_random_legal(obs["action_mask"], rng))
        assert (info["action_mask"] == obs["action_mask"]).all()
        if mode == "solo":
            assert (info["final_obs"][done, 8] >= 1000).all()
            assert (reward <= 0).all() and (reward[done] <= -1).all()
        else:
            assert (reward >= 0).all() and (reward[~done] == 0).all()


def test_threshold_turns_match_the_exact_turn_score_within_4_standard_errors():
    rules = load_rules("default")
    exact = threshold_distribution(rules, 300)
    batch = FarkleBatch(1024, mode="turn", seed=2)
    _, info = batch.reset()
    total, turns = 0.0, int(info["lost_turns_at_start"].sum())
    for _ in range(300):
        _, reward, done, _, info = batch.step(batch.threshold_actions(300))
        total += reward.sum()
        turns += int(done.sum()) + int(info["lost_turns_at_start"][done].sum())
    assert turns > 50_000
    assert abs(total / turns - exact.expected_score) < 4 * exact.sd / math.sqrt(turns)


@pytest.mark.parametrize(("rules", "target"), [("default", 1000), ("facebook", 1500)])
def test_threshold_games_match_the_exact_expected_turns_within_4_standard_errors(rules,
                                                                                   target):
    table = load_rules(rules)
    floor = table.penalty_floor()
    exact = race(table, target, threshold_bank_table(300))[0, floor]
    batch = FarkleBatch(1024, rules=rules, target=target, seed=3)
    _, info = batch.reset()
    acc = info["lost_turns_at_start"].astype(float)
    games: list[float] = []
    for _ in range(400):
        _, reward, done, _, info = batch.step(batch.threshold_actions(300))
        acc -= reward
        games.extend(acc[done].tolist())
        acc[done] = info["lost_turns_at_start"][done]
    x = np.array(games)
    assert x.size > 10_000
    assert abs(x.mean() - exact) < 4 * x.std() / math.sqrt(x.size)


def test_an_illegal_action_moves_no_game():
    batch = FarkleBatch(8, seed=4)
    obs, _ = batch.reset()
    before = obs["observation"].copy()
    actions = np.zeros(8, dtype=np.int64)
    actions[5] = batch.actions.n_actions - 1  # the last option: never legal at once
    with pytest.raises(IllegalActionError, match="game 5"):
        batch.step(actions)
    assert (batch._obs == before).all()
    for bad in (np.zeros(7, dtype=np.int64), np.zeros(8), [-1] * 8):
        with pytest.raises(IllegalActionError):
            batch.step(bad)


def test_step_before_reset_and_bad_arguments_are_errors():
    import gymnasium as gym

    with pytest.raises(gym.error.ResetNeeded):
        FarkleBatch(4).step(np.zeros(4, dtype=np.int64))
    for kw, message in (({"games": 0}, "games"), ({"games": True}, "games"),
                        ({"games": 2, "mode": "race"}, "mode"),
                        ({"games": 2, "target": 75}, "--target"),
                        ({"games": 2, "rules": "nope"}, "unknown Farkle rules")):
        with pytest.raises(UserError, match=message):
            FarkleBatch(**kw)


def test_the_same_seed_gives_the_same_games_whatever_the_batch_around_them():
    def play(games, seed):
        batch = FarkleBatch(games, target=1000, seed=seed)
        obs, _ = batch.reset()
        out = [obs["observation"][:4].copy()]
        for _ in range(50):
            obs, *_ = batch.step(batch.threshold_actions(350))
            out.append(obs["observation"][:4].copy())
        return np.array(out)

    assert (play(16, 5) == play(16, 5)).all()
    assert (play(16, 5) == play(8, 5)).all()  # game i's dice are its own
    assert not (play(16, 5) == play(16, 6)).all()
    batch = FarkleBatch(16, target=1000, seed=5)
    batch.reset()
    again, _ = batch.reset(seed=5)
    fresh, _ = FarkleBatch(16, target=1000, seed=5).reset()
    assert (again["observation"] == fresh["observation"]).all()
