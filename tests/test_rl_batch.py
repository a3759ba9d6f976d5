"""The batched Farkle environment: the single-game environments' masks and observations,
its rollouts of a fixed policy against the exact values, errors, seeding."""

from __future__ import annotations

import functools
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
                        ({"games": 2, "target": 75}, "^target must be a positive multiple"),
                        ({"games": 2, "rules": "nope"}, "unknown Farkle rules")):
        with pytest.raises(UserError, match=message):
            FarkleBatch(**kw)


@pytest.mark.parametrize("seed", ["x", -1, 1.5, [1, -2]])
def test_a_bad_seed_is_one_user_error_at_construction_and_at_reset(seed):
    from dicelab.rl.batch import PentaBatch

    for make in (FarkleBatch, PentaBatch):
        with pytest.raises(UserError, match="seed must be a non-negative integer"):
            make(2, seed=seed)
        batch = make(2, seed=0)
        with pytest.raises(UserError, match="seed must be a non-negative integer"):
            batch.reset(seed=seed)
    for good in (0, 2**70, [1, 2]):  # what SeedSequence takes
        FarkleBatch(2, seed=good).reset()


def test_a_target_or_threshold_beyond_the_kernels_integers_is_one_user_error():
    from dicelab.rl.batch import MAX_POINTS

    with pytest.raises(UserError, match=r"^target must be at most"):
        FarkleBatch(2, target=MAX_POINTS + 50)
    batch = FarkleBatch(2, target=MAX_POINTS, seed=1)  # the largest is played
    batch.reset()
    _, reward, *_ = batch.step(batch.threshold_actions(MAX_POINTS))
    assert reward.shape == (2,)
    for bad in (MAX_POINTS + 50, 0, -50, 1.5, "300", None, True):
        with pytest.raises(UserError, match="threshold"):
            batch.threshold_actions(bad)


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


# --- the tabular agent and its exact judge -----------------------------------------------


def test_the_exact_judge_scores_threshold_300_and_max_ev_exactly():
    from dicelab.farkle.solitaire import max_ev_capped
    from dicelab.rl.farkle import FarkleTurnEnv
    from dicelab.rl.tabular import turn_policy_score

    rules = load_rules("default")
    env = FarkleTurnEnv(yardstick=True)
    acts, sa = env.actions, env.actions.sa
    sol = max_ev_capped(rules)
    rows = sol.cap // 50 + 1
    best = np.zeros((rows, sa.n_classes), dtype=np.int64)
    threshold = np.zeros_like(best)
    value = functools.lru_cache(maxsize=None)(env._value())
    for n in range(1, 7):
        for c in range(int(sa.class_start[n]), int(sa.class_start[n + 1])):
            rank = int(np.flatnonzero(sa.roll_class == c)[0])
            k = int(sa.keep_all[c] - sa.option_start[c])
            for row in range(rows):
                mask = acts.mask(rank, row * 50)
                best[row, c] = int(np.argmax(acts.values(rank, row * 50, mask, value)))
                threshold[row, c] = 2 * k + int(row * 50 + sa.points[sa.keep_all[c]] * 50 >= 300)
    score, unfinished = turn_policy_score(rules, best)
    assert score == pytest.approx(sol.expected_score, rel=1e-12)
    assert unfinished == 0.0
    score, _ = turn_policy_score(rules, threshold)
    assert score == pytest.approx(threshold_distribution(rules, 300).expected_score, rel=1e-12)


def test_the_exact_judge_of_a_solitaire_policy_gives_fastests_turns():
    from dicelab.farkle.solitaire import fastest_solution
    from dicelab.rl.farkle import FarkleActions, fastest_values
    from dicelab.rl.tabular import solo_policy_turns

    rules, target = load_rules("default"), 500
    sol = fastest_solution(rules, target)
    acts = FarkleActions(rules)
    sa = acts.sa
    big = target // 50
    rows = big + 1
    choose = np.zeros((big, rows, sa.n_classes), dtype=np.int64)
    firsts = [int(np.flatnonzero(sa.roll_class == c)[0]) for c in range(sa.n_classes)]
    for u in range(big):
        value = fastest_values(sol, rules, u * 50, 0)
        for c, rank in enumerate(firsts):
            for row in range(rows):
                mask = acts.mask(rank, row * 50)
                choose[u, row, c] = int(np.argmax(acts.values(rank, row * 50, mask, value)))
    turns, unfinished = solo_policy_turns(rules, target, choose)
    assert turns == pytest.approx(sol.expected_turns_to_target, rel=1e-10)
    assert unfinished == 0.0
    # threshold-300 at every total: race()'s expected turns
    thr = np.zeros_like(choose)
    for c in range(sa.n_classes):
        k = int(sa.keep_all[c] - sa.option_start[c])
        for row in range(rows):
            thr[:, row, c] = 2 * k + int((row + sa.points[sa.keep_all[c]]) * 50 >= 300)
    turns, _ = solo_policy_turns(rules, target, thr)
    assert turns == pytest.approx(race(rules, target, threshold_bank_table(300))[0, 0],
                                  rel=1e-10)


@pytest.mark.parametrize("kind", ["turn", "solo"])
def test_a_tiny_training_run_learns_and_is_reproducible(kind):
    from dicelab.rl.tabular import train_solo, train_turn

    train = train_turn if kind == "turn" else train_solo
    a = train(games=64, steps=200, seed=3, evaluations=2)
    b = train(games=64, steps=200, seed=3, evaluations=2)
    assert (a.q == b.q).all()
    assert list(a.curve.steps) == [100, 200]
    assert (a.curve.gap > 0).all() and (a.curve.exact > 0).all()
    assert a.final_gap == pytest.approx(abs(a.optimum - a.final))
    for kw, message in (({"games": 0}, "games"), ({"alpha_min": 0.0}, "alpha_min"),
                        ({"rules": "facebook"}, "farkle-penalty")):
        with pytest.raises(UserError, match=message):
            train(**kw)
    if kind == "solo":
        with pytest.raises(UserError, match=r"^target must be a positive multiple"):
            train(target=75)


def test_the_training_script_saves_a_curve_and_a_manifest(tmp_path, capsys):
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "rl_qlearning.py"
    spec = importlib.util.spec_from_file_location("rl_qlearning", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for kind in ("turn", "solo"):
        out = tmp_path / kind
        assert script.main(["--kind", kind, "--target", "500", "--games", "32", "--steps",
                            "50", "--evaluations", "1", "--duel", "100", "--out", str(out),
                            "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["summary"]["final_gap"] == pytest.approx(summary["final_gap"])
        assert manifest["command"][:4] == ["python", "experiments/rl_qlearning.py", "--kind",
                                           kind]
        assert (out / "summary.parquet").exists()
        assert ("duel" in summary) == (kind == "solo")
    duel = summary["duel"]
    assert duel["games_per_seat"] == 100 and duel["opponent"] == "optimal-win"
    assert 0 <= duel["agent_seats_averaged_ci95"][0] <= duel["agent_seats_averaged"] <= 1
    for argv, message in ((["--rules", "nope"], "unknown Farkle rules"),
                          (["--kind", "solo", "--duel", "-1"], "--duel"),
                          (["--kind", "solo", "--opponent", "nope"], "unknown policy")):
        bad = tmp_path / "bad"
        assert script.main([*argv, "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
        assert not bad.exists()


def test_a_solitaire_agent_plays_as_a_policy_what_its_exact_judge_scores():
    """The trained agent, wrapped as a dicelab policy and played move by move by the
    referee, takes the turns to the target that the exact judge of its greedy table
    gives (within 4 SE); its duel's exact reference is ``fastest``'s pair value."""
    import dataclasses

    from dicelab.farkle.exact import exact_pair
    from dicelab.farkle.simulate import simulate_python
    from dicelab.rl.policy import as_policy
    from dicelab.rl.tabular import duel, train_solo

    t = train_solo(games=64, steps=300, seed=5, evaluations=1, target=500)
    agent = as_policy(t.agent(), encoding="solo")
    played = simulate_python([agent], games=3000, seed=5, target=500).seat(0).mean_turns
    assert abs(played.mean - t.final) < 4 * played.se
    d = duel(t, games=200, seed=5)
    ref = exact_pair("fastest", "optimal-win", rules=t.rules, target=500)
    assert d.reference_first == pytest.approx(ref.first.win + ref.first.tie / 2)
    assert d.reference_second == pytest.approx(ref.second.win + ref.second.tie / 2)
    assert d.first.n == d.second.n == 200
    with pytest.raises(UserError, match="solitaire agent"):
        duel(dataclasses.replace(t, kind="turn"))


# --- Penta -------------------------------------------------------------------------------


def _card_of(rules, o):
    from dicelab.rl.penta import PentaCard

    card = PentaCard(rules)
    card.scores = [None if x < 0 else int(x) for x in o[:13]]
    card.bonuses = int(o[13])
    card.faces = o[14:19].tolist()
    card.rolls_left = int(o[19])
    return card


@pytest.mark.parametrize("rules", [
    # hasbro's joker (whenever the Penta box is filled, forced order): 1.1 s; fast twins:
    # free-joker (whenever filled) and seed (forced order)
    "seed", pytest.param("hasbro", marks=pytest.mark.slow), "free-joker", "no-bonus"])
def test_penta_batch_masks_and_observations_are_the_single_game_encoding(rules):
    from dicelab.penta.rules import get_rules
    from dicelab.rl.batch import PentaBatch

    rs = get_rules(rules)
    batch = PentaBatch(64, rules=rules, seed=1)
    obs, _ = batch.reset()
    rng = np.random.default_rng(1)
    acc = np.zeros(64)
    finished = 0
    for _ in range(300):
        for i in range(64):
            o = obs["observation"][i]
            card = _card_of(rs, o)
            assert (card.observation() == o).all()
            assert (card.mask() == obs["action_mask"][i]).all()
        # mostly boxes, so that games finish; every kind of keep still comes up
        m = obs["action_mask"] * np.where(np.arange(45) >= 32, 4.0, 1.0)
        obs, reward, done, _, info = batch.step(np.argmax(m * rng.random(m.shape), axis=1))
        acc += reward
        assert (info["final_obs"][done, -1] == acc[done]).all()  # the return is the score
        finished += int(done.sum())
        acc[done] = 0.0
    assert finished > 64


def _reroll_then_first_box(mask: np.ndarray, rolls_left) -> np.ndarray:
    first_box = 32 + np.argmax(mask[..., 32:], axis=-1)
    return np.where(np.asarray(rolls_left) > 0, 0, first_box)


def test_penta_batch_plays_a_fixed_policy_as_the_single_game_env_does():
    from dicelab.rl.batch import PentaBatch
    from dicelab.rl.penta import PentaSoloEnv

    batch = PentaBatch(1024, seed=2)
    obs, _ = batch.reset()
    scores: list[float] = []
    while len(scores) < 3000:
        a = _reroll_then_first_box(obs["action_mask"], obs["observation"][:, 19])
        obs, _, done, _, info = batch.step(a)
        scores.extend(info["final_obs"][done, -1].tolist())
    env = PentaSoloEnv()
    single: list[float] = []
    for g in range(600):
        obs, _ = env.reset(seed=g)
        done, total = False, 0.0
        while not done:
            a = int(_reroll_then_first_box(obs["action_mask"], obs["observation"][19]))
            obs, r, done, _, _ = env.step(a)
            total += r
        single.append(total)
    x, y = np.array(scores), np.array(single)
    se = math.sqrt(x.var() / x.size + y.var() / y.size)
    assert abs(x.mean() - y.mean()) < 4 * se


def test_penta_batch_refuses_illegal_actions_and_replays_a_seed():
    from dicelab.rl.batch import PentaBatch

    batch = PentaBatch(4, seed=3)
    obs, _ = batch.reset()
    before = obs["observation"].copy()
    with pytest.raises(IllegalActionError, match="game 0"):
        batch.step(np.full(4, 31))  # keeping all five is no keep
    assert (batch._obs == before).all()
    with pytest.raises(UserError, match="unknown Penta rule set"):
        PentaBatch(4, rules="yahtzee")
    again, _ = PentaBatch(4, seed=3).reset()
    assert (again["observation"] == before).all()


def test_a_solitaire_game_that_never_banks_is_truncated():
    """A policy that always rolls on never reaches the target: each game is truncated once
    it has played MAX_ROUNDS turns (as FarkleSoloEnv truncates it), its last observation
    in final_obs, its return minus its turns, and starts again at once; it ran for ever."""
    from dicelab.config import MAX_ROUNDS

    batch = FarkleBatch(3, target=1000, seed=1)
    obs, _ = batch.reset()
    returns, first = np.zeros(3), [None] * 3
    for _ in range(20 * MAX_ROUNDS):
        acts = 2 * np.argmax(obs["action_mask"][:, 0::2], axis=1)  # roll on, never bank
        obs, reward, terminated, truncated, info = batch.step(acts)
        assert not terminated.any()
        assert (info["_final_obs"] == truncated).all()
        for i in np.flatnonzero(truncated):
            if first[i] is None:
                first[i] = (returns[i] + reward[i], info["final_obs"][i].copy())
                assert obs["observation"][i, 8] == 0  # the next game, from 0
        returns += reward
        if all(f is not None for f in first):
            break
    for total_return, final in first:
        assert -MAX_ROUNDS - 10 < total_return <= -MAX_ROUNDS
        assert final[8] < 1000 and not final[:7].any()


@pytest.mark.parametrize("kind", ["solo", "turn", "penta"])
def test_no_batch_reward_is_negative_zero(kind):
    """As the single-game environments: a reward of nothing is 0.0, never -0.0."""
    from dicelab.rl.batch import PentaBatch

    batch = (PentaBatch(16, seed=6) if kind == "penta"
             else FarkleBatch(16, target=300, mode=kind, seed=6))
    obs, _ = batch.reset()
    rng = np.random.default_rng(6)
    zeros = 0
    for _ in range(100):
        obs, reward, *_ = batch.step(_random_legal(obs["action_mask"], rng))
        zeros += int((reward == 0).sum())
        assert not (np.signbit(reward) & (reward == 0)).any()
    assert zeros > 0
