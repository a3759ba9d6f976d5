"""The reinforcement-learning environments: the ecosystem's checkers, masks that are
exactly the legal moves, errors, seeding, and the yardstick against dicelab's solvers."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test

import dicelab.rl  # noqa: F401  (registers the ids)
from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle.advise import advise
from dicelab.farkle.rules import HOT_DICE, PRESETS, dice_after, load_rules
from dicelab.farkle.solitaire import fastest_solution, max_ev_capped
from dicelab.farkle.solve import solve_optimal_win
from dicelab.penta.rules import RULE_SETS
from dicelab.penta.solver import solve as solve_penta
from dicelab.rl import ENV_IDS, IllegalActionError
from dicelab.rl.aec import farkle_env, outcome_rewards, penta_env
from dicelab.rl.common import game_over_text
from dicelab.rl.farkle import (
    TURN_OBS,
    FarkleActions,
    FarkleSoloEnv,
    FarkleTurnEnv,
    fastest_values,
)
from dicelab.rl.penta import N_KEEPS, N_OBS, PentaCard, PentaSoloEnv

SIX = range(int(dice.SIZE_OFFSET[HOT_DICE]), int(dice.SIZE_OFFSET[HOT_DICE + 1]))


def random_legal(obs, rng) -> int:
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


# --- the checkers ------------------------------------------------------------------------


@pytest.mark.parametrize("rules", list(PRESETS))
@pytest.mark.parametrize("env_id", ["dicelab/FarkleTurn-v0", "dicelab/FarkleSolo-v0"])
def test_farkle_envs_pass_gymnasiums_checker(env_id, rules):
    kw = {"target": 1000} if "Solo" in env_id else {}
    check_env(gym.make(env_id, rules=rules, **kw).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("rules", list(RULE_SETS))
def test_penta_env_passes_gymnasiums_checker(rules):
    check_env(gym.make("dicelab/PentaSolo-v0", rules=rules).unwrapped, skip_render_check=True)


ENV_MAKERS = {
    "FarkleTurn": lambda mode: FarkleTurnEnv(render_mode=mode),
    "FarkleSolo": lambda mode: FarkleSoloEnv(target=500, render_mode=mode),
    "PentaSolo": lambda mode: PentaSoloEnv(render_mode=mode),
    "farkle_env": lambda mode: farkle_env(2, target=500, render_mode=mode),
    "farkle_env-3": lambda mode: farkle_env(3, target=500, render_mode=mode),
    "penta_env": lambda mode: penta_env(2, render_mode=mode),
}


@pytest.mark.parametrize("name", list(ENV_MAKERS))
def test_render_before_reset_says_so_and_after_reset_shows_the_game(name):
    env = ENV_MAKERS[name]("ansi")
    before = env.render()
    assert isinstance(before, str) and "reset()" in before and "roll" not in before
    assert ENV_MAKERS[name](None).render() is None
    env.reset(seed=3)
    after = env.render()
    assert isinstance(after, str) and "roll" in after and "reset()" not in after
    assert "(" not in after.partition("card")[0]  # words, not a raw tuple of extras
    if name == "FarkleSolo":
        assert after.endswith(", total 0, lost turns in a row 0")


def _play_aec_out(env, seed: int) -> tuple[dict, list[float]]:
    """Play a whole AEC episode with random legal actions: the final reward of each
    agent, and every reward seen on the way (``last()``'s and ``env.rewards``)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    final, seen = {}, []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        seen += [reward, *env.rewards.values()]
        if term or trunc:
            final[agent] = reward
            env.step(None)
        else:
            env.step(random_legal(obs, rng))
    return final, seen


def _play_gym_out(env, seed: int):
    """Play a whole single-game episode with random legal actions: the last step's
    (obs, info) and the rewards."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rewards, done = [], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(random_legal(obs, rng))
        rewards.append(reward)
        done = terminated or truncated
    return obs, info, rewards


@pytest.mark.parametrize("name", ["farkle_env", "farkle_env-3", "penta_env"])
def test_render_after_a_whole_aec_episode_shows_the_finished_game(name):
    """Not the last turn's roll as if it were in progress: "game over", the winner (the
    seat whose reward is +1) or the seats tied at the top, each seat's final total (and
    Penta card)."""
    for seed in (3, 4, 5):
        env = ENV_MAKERS[name]("ansi")
        final, _ = _play_aec_out(env, seed)
        text = env.render()
        lines = text.splitlines()
        assert "roll [" not in text and "rerolls" not in text
        winners = [i for i, a in enumerate(env.possible_agents) if final[a] == 1.0]
        if winners:
            assert lines[0] == f"game over: seat {winners[0]} wins"
        else:
            assert lines[0].startswith("game over: a tie between seats")
        assert len(lines) == 1 + env.seats
        for i, agent in enumerate(env.possible_agents):
            total = env.observe(agent)["observation"][TURN_OBS if name.startswith("farkle")
                                                      else N_OBS - 1]
            assert lines[1 + i].startswith(f"seat {i}: final total {total} ")
            if name == "penta_env":
                assert " card (" in lines[1 + i] and "None" not in lines[1 + i]


@pytest.mark.parametrize("name", ["FarkleTurn", "FarkleSolo", "PentaSolo"])
def test_render_after_a_whole_episode_shows_the_finished_game(name):
    ends = set()
    for seed in range(3, 13):  # FarkleTurn: seeds 9 and 12 lose the turn
        env = ENV_MAKERS[name]("ansi")
        obs, info, rewards = _play_gym_out(env, seed)
        text = env.render()
        assert "roll [" not in text and "\n" not in text
        if name == "FarkleTurn":
            end = "banked" if rewards[-1] > 0 else "lost"
            ends.add(end)
            assert text.startswith(f"turn over: turn score {int(rewards[-1])} ({end}")
        elif name == "FarkleSolo":
            total = obs["observation"][TURN_OBS]
            assert total >= 500
            assert text == (f"game over: final total {total} after {info['turns']} "
                            f"turn{'s' * (info['turns'] != 1)} (target 500)")
        else:
            total = obs["observation"][-1]
            assert total == sum(rewards)
            assert text.startswith(f"game over: final total {total} card (")
    if name == "FarkleTurn":
        assert ends == {"banked", "lost"}


def test_render_of_a_game_stopped_at_the_cap_names_no_winner(monkeypatch):
    """A game the simulation caps is truncated: no rewards, so the text names no winner."""
    import dicelab.farkle.referee

    monkeypatch.setattr(dicelab.farkle.referee, "MAX_ROUNDS", 1)
    table = farkle_env(3, target=10_000, render_mode="ansi")
    final, _ = _play_aec_out(table, 1)
    assert final == dict.fromkeys(table.possible_agents, 0.0)  # truncated: no rewards
    text = table.render()
    assert text.startswith("game over (truncated: the game reached the cap of ")
    assert text.splitlines()[0].endswith(": no winner") and len(text.splitlines()) == 4
    solo = FarkleSoloEnv(target=10_000, render_mode="ansi")
    obs, _, rewards = _play_gym_out(solo, 1)
    assert rewards[-1] == -1.0
    assert solo.render() == ("game over (truncated: the game reached the cap of 5,000 "
                             f"rounds): final total {obs['observation'][TURN_OBS]} after 1 "
                             "turn (target 10000)")


def test_the_finished_games_text_names_the_winner_or_the_seats_tied_at_the_top():
    assert game_over_text([300, 500, 100]).splitlines() == [
        "game over: seat 1 wins", "seat 0: final total 300", "seat 1: final total 500",
        "seat 2: final total 100"]
    assert game_over_text([500, 500, 100]).splitlines()[0] == \
        "game over: a tie between seats 0 and 1"
    assert game_over_text([5, 5, 5]).splitlines()[0] == \
        "game over: a tie between seats 0, 1 and 2"
    assert game_over_text([300, 500], truncated="a cap").splitlines()[0] == \
        "game over (truncated: a cap): no winner"
    assert game_over_text([40], ["(banked)"], what="turn", label="turn score") == \
        "turn over: turn score 40 (banked)"


ENDLESS = {**ENV_MAKERS, "FarkleSolo": lambda mode: FarkleSoloEnv(target=300,
                                                                    render_mode=mode),
           "FarkleSolo-facebook": lambda mode: FarkleSoloEnv(target=300, rules="facebook",
                                                             render_mode=mode)}


@pytest.mark.parametrize("name", list(ENDLESS))
def test_no_reward_is_negative_zero(name):
    """A reward of nothing is 0.0, never -0.0 (FarkleSolo's step that ends no turn was
    minus a float count of 0): every reward over a few whole seeded episodes."""
    rewards = []
    for seed in range(4):
        env = ENDLESS[name](None)
        if hasattr(env, "agent_iter"):
            rewards += _play_aec_out(env, seed)[1]
        else:
            rewards += _play_gym_out(env, seed)[2]
    assert any(r == 0 for r in rewards)
    assert all(isinstance(r, float) for r in rewards)
    negative_zero = [i for i, r in enumerate(rewards) if r == 0 and math.copysign(1, r) < 0]
    assert not negative_zero


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_an_env_from_gym_make_renders_before_reset_and_steps_only_after(env_id):
    """``gym.make`` adds no OrderEnforcing wrapper to the ids (its ``render()`` before the
    first ``reset()`` raises ResetNeeded): the env renders the text docs/rl.md promises.
    The order holds all the same: ``step`` first is ResetNeeded; an env made again from
    its spec renders the same."""
    kw = {"target": 500} if env_id == "dicelab/FarkleSolo-v0" else {}
    env = gym.make(env_id, render_mode="ansi", **kw)
    assert env.render() == "no game yet: call reset() first"
    with pytest.raises(gym.error.ResetNeeded, match="no game yet: call reset"):
        env.step(0)
    again = gym.make(env.spec)
    assert again.render() == "no game yet: call reset() first"
    env.reset(seed=3)
    assert "roll" in env.render()
    assert gym.make(env_id, **kw).render() is None


@pytest.mark.parametrize("name", ["farkle_env", "farkle_env-3", "penta_env"])
def test_aec_game_asked_for_before_reset_is_resetneeded(name):
    env = ENV_MAKERS[name](None)
    for ask in (lambda: env.observe("player_0"), env.last, lambda: env.step(0)):
        with pytest.raises(gym.error.ResetNeeded, match="reset"):
            ask()
    if name.startswith("farkle"):
        for ask in (lambda: env.totals, env.decision_state):
            with pytest.raises(gym.error.ResetNeeded, match="reset"):
                ask()
    env.reset(seed=0)
    assert env.observe("player_0")["action_mask"].sum() > 0
    env.last()


@pytest.mark.parametrize("name", ["FarkleTurn", "FarkleSolo"])
def test_farkle_decision_state_before_reset_is_resetneeded(name):
    env = ENV_MAKERS[name](None)
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.decision_state()
    env.reset(seed=0)
    assert env.decision_state().roll


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_gymnasiums_checker_with_its_render_check(env_id):
    kw = {"target": 500} if env_id == "dicelab/FarkleSolo-v0" else {}
    check_env(gym.make(env_id, render_mode="ansi", **kw).unwrapped)


@pytest.mark.parametrize("name", ["farkle_env", "penta_env"])
def test_pettingzoos_render_test_in_ansi(name):
    # render_test first builds the env with render_mode="human", which these envs refuse
    # (they render text only): that build is read as None
    def make(render_mode=None):
        return ENV_MAKERS[name](None if render_mode == "human" else render_mode)

    render_test(make)


def test_every_registered_id_makes_its_env():
    for env_id in ENV_IDS:
        env = gym.make(env_id)
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert (info["action_mask"] == obs["action_mask"]).all()


@pytest.mark.parametrize("seats", range(2, 8))
def test_farkle_aec_passes_pettingzoos_api_test(seats):
    api_test(farkle_env(seats, target=1000), num_cycles=300)


@pytest.mark.parametrize("rules", ["basic", "ones-300", "facebook", "zilch"])
@pytest.mark.parametrize("ending", ["last-round", "first-to-bank"])
def test_farkle_aec_passes_the_api_test_under_every_preset(rules, ending):
    api_test(farkle_env(2, rules=rules, target=1000, ending=ending), num_cycles=300)


@pytest.mark.parametrize(("seats", "rules"), [(2, "seed"), (3, "hasbro"), (2, "free-joker"),
                                              (4, "no-bonus")])
def test_penta_aec_passes_pettingzoos_api_test(seats, rules):
    api_test(penta_env(seats, rules=rules), num_cycles=300)


# --- masks, errors, seeding --------------------------------------------------------------


def test_farkle_mask_is_every_option_of_the_roll_times_bank_or_roll():
    for rules in PRESETS.values():
        acts = FarkleActions(rules)
        for r in SIX:
            faces = dice.dice_of_rank(r)
            legal = {(p, dice_after(6, len(keep))) for keep, p in
                     _legal(rules, faces)}
            assert set(acts.option_list(r)) == legal
            mask = acts.mask(r, 0)
            for k, (p, left) in enumerate(acts.option_list(r)):
                assert mask[2 * k] == 1
                assert mask[2 * k + 1] == rules.can_bank(p, left)
            assert mask[2 * len(legal):].sum() == 0


def _legal(rules, faces):
    from dicelab.farkle.advise import legal_setasides

    return legal_setasides(rules, faces)


def test_penta_mask_is_one_action_per_keep_and_every_allowed_box():
    card = PentaCard(RULE_SETS["seed"])
    card.faces = [2, 2, 2, 5, 6]
    mask = card.mask()
    # distinct sub-multisets of {2,2,2,5,6} but all five: 4 * 2 * 2 - 1
    assert mask[:N_KEEPS].sum() == 15
    assert mask[N_KEEPS:].sum() == 13
    card.rolls_left = 0
    assert card.mask()[:N_KEEPS].sum() == 0


@pytest.mark.parametrize("make", [lambda: FarkleTurnEnv(), lambda: FarkleSoloEnv(target=500),
                                  lambda: PentaSoloEnv()])
def test_illegal_actions_and_finished_episodes_are_errors(make):
    env = make()
    obs, _ = env.reset(seed=1)
    illegal = np.flatnonzero(obs["action_mask"] == 0)
    with pytest.raises(IllegalActionError, match="illegal"):
        env.step(int(illegal[0]))
    for bad in (-1, env.action_space.n, 1.5, "0", None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    for bad in (float(legal), np.float32(legal), np.array(float(legal)), True, legal + 0.5):
        with pytest.raises(IllegalActionError, match="an action is an integer"):
            env.step(bad)  # a whole float too: not an integer
    env.step(np.array(legal))  # a 0-d integer array is an integer
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(random_legal(obs, rng))
    assert obs["action_mask"].sum() == 0 and info["action_mask"].sum() == 0
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: FarkleTurnEnv(rules="nope"), "unknown Farkle rules"),
    (lambda: FarkleTurnEnv(rules=3), "rules must be"),
    (lambda: FarkleSoloEnv(target=1010), "^target must be a positive multiple"),
    (lambda: FarkleSoloEnv(target=0), "^target must be a positive multiple"),
    (lambda: FarkleSoloEnv(ending="sudden"), "^ending must be one of"),
    (lambda: farkle_env(target=75), "^target must be a positive multiple"),
    (lambda: farkle_env(ending="sudden"), "^ending must be one of"),
    (lambda: FarkleTurnEnv(yardstick=1), "yardstick"),
    (lambda: FarkleTurnEnv(rules="facebook", yardstick=True), "farkle-penalty"),
    (lambda: FarkleTurnEnv(render_mode="human"), "render_mode"),
    (lambda: PentaSoloEnv(rules="yahtzee"), "unknown Penta rule set"),
    (lambda: farkle_env(1), "seats"),
    (lambda: farkle_env(8), "seats"),
    (lambda: farkle_env(True), "seats"),
    (lambda: farkle_env(3, yardstick=True), "two seats"),
    (lambda: penta_env(1), "seats"),
    (lambda: penta_env(2.0), "seats"),
    (lambda: penta_env(10**6), "a Penta table of 1,000,000 seats would need"),
    (lambda: farkle_env(2, rules="tomato.toml"), "tomato.toml"),
    (lambda: farkle_env(2, opponent="threshold-300"), "yardstick=True"),
    (lambda: farkle_env(2, yardstick=True, opponent="threshold-310"), "threshold"),
    (lambda: farkle_env(2, yardstick=True, opponent=3), "opponent"),
])
def test_bad_constructor_arguments_are_one_user_error(make, message):
    with pytest.raises(UserError, match=message):
        make()


def test_rules_file_and_ending_are_read_as_on_the_command_line(tmp_path):
    f = tmp_path / "house.toml"
    f.write_text('base = "default"\nmin-bank = 500\n')
    env = FarkleSoloEnv(rules=str(f), target=1000, ending="first-to-bank")
    assert env.rules == load_rules(str(f), "first-to-bank")
    assert env.rules.min_bank == 500


def test_reset_with_a_seed_replays_the_same_episode():
    def episode(env, seed):
        obs, _ = env.reset(seed=seed)
        out = [obs["observation"].tolist()]
        done = False
        while not done:
            obs, r, done, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
            out.append((obs["observation"].tolist(), r))
        return out

    for make in (lambda: FarkleSoloEnv(target=1500), PentaSoloEnv):
        assert episode(make(), 7) == episode(make(), 7)
        assert episode(make(), 7) != episode(make(), 8)


@pytest.mark.parametrize("make", [lambda: farkle_env(2, target=500), lambda: penta_env(2)])
def test_an_aec_game_played_to_its_end_needs_a_reset(make):
    """Once every agent has taken its last (dead) step, stepping or asking for the last
    move is Gymnasium's ResetNeeded, as for the single-game environments; the game after
    a reset plays as ever."""
    env = make()
    rng = np.random.default_rng(0)
    for _ in range(2):
        env.reset(seed=3)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else random_legal(obs, rng))
        assert env.agents == []
        for ask in (lambda: env.step(0), lambda: env.step(None), env.last):
            with pytest.raises(gym.error.ResetNeeded, match="the episode is over"):
                ask()


def test_the_action_spaces_sample_is_a_legal_move():
    env = FarkleSoloEnv(target=1000)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(2000):
        _, _, done, _, _ = env.step(env.action_space.sample())
        if done:
            env.reset()
    table = farkle_env(3, target=1000)
    table.reset(seed=0)
    for agent in table.agent_iter(2000):
        _, _, term, trunc, _ = table.last()
        table.step(None if term or trunc else table.action_space(agent).sample())


def test_a_random_masked_agent_never_moves_illegally_quick():
    _random_play(5_000)


@pytest.mark.slow
def test_a_random_masked_agent_never_moves_illegally_in_30000_steps_per_environment():
    _random_play(30_000)


def _random_play(steps: int) -> None:
    rng = np.random.default_rng(1)
    envs = [FarkleTurnEnv(), FarkleSoloEnv(target=2000, rules="facebook"),
            FarkleSoloEnv(target=2000, rules="zilch"), PentaSoloEnv(rules="hasbro")]
    for env in envs:
        obs, _ = env.reset(seed=2)
        for _ in range(steps):
            obs, _, done, _, info = env.step(random_legal(obs, rng))
            assert (info["action_mask"] == obs["action_mask"]).all()
            if done:
                obs, _ = env.reset()
    for env in (farkle_env(4, rules="facebook", target=2000), penta_env(3)):
        env.reset(seed=3)
        n = 0
        while n < steps:
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                env.step(None if term or trunc else random_legal(obs, rng))
                n += 1
            env.reset()


def test_solitaire_returns_are_minus_the_turns_and_the_final_score():
    env = FarkleSoloEnv(target=1000)
    obs, info = env.reset(seed=4)
    total, done = -info["lost_turns_at_start"], False
    rng = np.random.default_rng(4)
    while not done:
        obs, r, done, _, info = env.step(random_legal(obs, rng))
        total += r
    assert total == -info["turns"]
    assert obs["observation"][8] >= 1000
    env = PentaSoloEnv()
    obs, _ = env.reset(seed=4)
    score, done = 0.0, False
    while not done:
        obs, r, done, _, _ = env.step(random_legal(obs, rng))
        score += r
    assert score == obs["observation"][-1]


def test_aec_rewards_follow_the_totals():
    assert outcome_rewards([300, 500, 100]) == [-1.0, 1.0, -1.0]
    assert outcome_rewards([500, 500, 100]) == [0.0, 0.0, -1.0]
    for ending in ("last-round", "first-to-bank"):
        env = farkle_env(3, target=1000, ending=ending)
        rng = np.random.default_rng(5)
        for seed in range(5):
            env.reset(seed=seed)
            final = {}
            for agent in env.agent_iter():
                obs, reward, term, trunc, _ = env.last()
                if term:
                    final[agent] = reward
                env.step(None if term or trunc else random_legal(obs, rng))
            totals = env.totals
            assert [final[a] for a in env.possible_agents] == outcome_rewards(totals)
            assert max(totals) >= 1000
            if ending == "first-to-bank":
                assert sorted(totals)[-2] < 1000


# --- the yardstick against the solvers ---------------------------------------------------


def _first_roll_mean(values_of, bust_value: float, rules) -> float:
    """E over the first roll of six dice of the best action's value (a roll that scores
    nothing is worth ``bust_value``)."""
    acts = FarkleActions(rules)
    mean = 0.0
    for r in SIX:
        if acts.options(r):
            mean += float(dice.PROB[r]) * float(values_of(acts, r).max())
        else:
            mean += float(dice.PROB[r]) * bust_value
    return mean


@pytest.mark.parametrize("rules", ["default", "basic", "ones-300"])
def test_turn_yardstick_best_first_roll_is_max_evs_expected_turn_score(rules):
    env = FarkleTurnEnv(rules=rules, yardstick=True)
    value = env._value()
    mean = _first_roll_mean(lambda a, r: a.values(r, 0, a.mask(r, 0), value), 0.0, env.rules)
    assert mean == pytest.approx(max_ev_capped(env.rules).expected_score, rel=1e-11)


def test_turn_yardstick_agrees_with_advise_along_play():
    env = FarkleTurnEnv(yardstick=True)
    rng = np.random.default_rng(6)
    obs, info = env.reset(seed=6)
    checked = 0
    for _ in range(300):
        faces = dice.dice_of_rank(env._rank)
        adv = advise(faces, turn_points=env._tp)
        stick = info["yardstick"]["values"]
        opts = env.actions.option_list(env._rank)
        for o in adv.options:
            k = opts.index((o.points, dice_after(len(faces), len(o.keep))))
            assert stick[2 * k + (o.action == "bank")] == pytest.approx(o.value, abs=1e-9)
            checked += 1
        assert info["yardstick"]["best"] == pytest.approx(adv.options[0].value, abs=1e-9)
        a = random_legal(obs, rng)
        obs, _, done, _, info_next = env.step(a)
        assert info_next["loss"] == pytest.approx(info["yardstick"]["best"] - stick[a],
                                                  abs=1e-12)
        assert info_next["loss"] >= 0.0
        obs, info = env.reset() if done else (obs, info_next)
    assert checked > 500


@pytest.mark.parametrize(("rules", "target"), [("default", 1000), ("basic", 1500),
                                               ("facebook", 1000), ("zilch", 1000)])
def test_solo_yardstick_best_first_roll_is_fastests_expected_turns(rules, target):
    table = load_rules(rules)
    sol = fastest_solution(table, target)
    k = sol.turns.shape[0]
    from dicelab.farkle.engine.model import model

    m = model(table)
    floor = sol.floor_points // 50
    for total in (0, 300, target - 500, target - 50):
        for s in range(k):
            u = total // 50 + floor
            if k == 1:
                lost = sol.turns[0, u]
            elif s < k - 1:
                lost = sol.turns[s + 1, u]
            else:
                lost = sol.turns[0, max(u - m.penalty, 0)]
            value = fastest_values(sol, table, total, s)
            mean = _first_roll_mean(lambda a, r, v=value: a.values(r, 0, a.mask(r, 0), v),
                                    -(1.0 + lost), table)
            assert mean == pytest.approx(-sol.expected_turns_from(total, s), rel=1e-9)


def test_solo_yardstick_is_in_the_env_and_a_best_action_loses_nothing():
    env = FarkleSoloEnv(target=1500, yardstick=True)
    _, info = env.reset(seed=8)
    done = False
    while not done:
        a = int(np.argmax(info["yardstick"]["values"]))
        _obs, _, done, _, info = env.step(a)
        assert info["loss"] == 0.0


def test_penta_yardstick_best_first_roll_is_the_optimal_expected_score():
    rs = RULE_SETS["seed"]
    card = PentaCard(rs)
    mean = 0.0
    for r in range(int(dice.SIZE_OFFSET[5]), int(dice.SIZE_OFFSET[6])):
        card.faces = dice.dice_of_rank(r)
        mean += float(dice.PROB[r]) * float(card.values(card.mask()).max())
    assert mean == pytest.approx(solve_penta(rs).expected_score, rel=1e-12)


def test_penta_yardstick_loss_along_play():
    env = PentaSoloEnv(yardstick=True)
    obs, info = env.reset(seed=9)
    rng = np.random.default_rng(9)
    done = False
    while not done:
        stick = info["yardstick"]
        assert (np.isfinite(stick["values"]) == obs["action_mask"].astype(bool)).all()
        a = random_legal(obs, rng)
        obs, _, done, _, info = env.step(a)
        assert info["loss"] == pytest.approx(max(stick["best"] - stick["values"][a], 0.0)
                                             if stick["best"] - stick["values"][a] > 1e-12
                                             else 0.0)


@pytest.mark.parametrize(("rules", "ending"), [("default", "last-round"),
                                               ("default", "first-to-bank"),
                                               ("facebook", None)])
def test_two_seat_yardstick_best_first_roll_is_optimal_wins_value(rules, ending,
                                                                  monkeypatch):
    from dicelab import config

    # under facebook's penalty: totals down to two penalties below zero (the smallest floor)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    target = 1000
    env = farkle_env(2, rules=rules, target=target, ending=ending, yardstick=True)
    env.reset(seed=10)
    sol = solve_optimal_win(env.rules, target)
    x = sol.win_value(0, 0)

    def values_of(acts, r):
        return (env.action_values(r, 0, (0, 0), (0, 0)) + 1.0) / 2.0

    lost_value = 1.0 - sol.win_value(0, 0, 0, 1 if env.rules.farkle_penalty else 0)
    mean = _first_roll_mean(values_of, lost_value, env.rules)
    assert mean == pytest.approx(x, abs=1e-9)


def _yardstick_play(env, seed: int, check) -> int:
    """Random legal play of an AEC env with the yardstick on; ``check(agent, obs, values)``
    at every decision; every move's loss is at least 0. Returns the moves made."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    moves = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        stick = info["yardstick"]["values"]
        assert (np.isfinite(stick) == obs["action_mask"].astype(bool)).all()
        check(agent, obs, stick)
        env.step(random_legal(obs, rng))
        assert env.infos[agent]["loss"] >= 0.0
        moves += 1
    return moves


def test_two_seat_yardstick_along_play_has_a_loss_for_each_move():
    def check(agent, obs, stick):
        legal = stick[np.isfinite(stick)]
        assert ((legal >= -1.0 - 1e-12) & (legal <= 1.0 + 1e-12)).all()

    assert _yardstick_play(farkle_env(2, target=1000, yardstick=True), 11, check) > 0


def test_two_seat_yardstick_against_a_fixed_policy_is_the_best_response():
    from dicelab.farkle.exact import solve_best_response

    target = 1000
    env = farkle_env(2, target=target, yardstick=True, opponent="threshold-300")
    env.reset(seed=12)
    sol = solve_best_response(env.rules, target, "threshold-300")

    def values_of(acts, r):
        return (env.action_values(r, 0, (0, 0), (0, 0)) + 1.0) / 2.0

    # after a lost first turn the opponent moves first
    mean = _first_roll_mean(values_of, sol.second_outcome.score, env.rules)
    assert mean == pytest.approx(sol.win_value(0, 0), abs=1e-9)
    assert "vs=threshold-300" in env.infos[env.agent_selection]["yardstick"]["unit"]


def test_turn_yardstick_under_house_rules_of_banking_is_max_evs(tmp_path):
    f = tmp_path / "house.toml"
    f.write_text('base = "default"\nmin-bank = 350\nhot-dice = "must-roll"\n')
    env = FarkleTurnEnv(rules=str(f), yardstick=True)
    value = env._value()
    mean = _first_roll_mean(lambda a, r: a.values(r, 0, a.mask(r, 0), value), 0.0, env.rules)
    assert mean == pytest.approx(max_ev_capped(env.rules).expected_score, rel=1e-11)
    obs, info = env.reset(seed=13)
    rng = np.random.default_rng(13)
    for _ in range(500):  # no bank below 350, none with six dice after hot dice
        stick = info["yardstick"]["values"]
        assert (np.isfinite(stick) == obs["action_mask"].astype(bool)).all()
        obs, _, done, _, info = env.step(random_legal(obs, rng))
        if done:
            obs, info = env.reset()


def test_penta_table_yardstick_is_the_movers_own_card():
    env = penta_env(2, yardstick=True)

    def check(agent, obs, stick):
        card = env._cards[env.possible_agents.index(agent)]
        assert stick == pytest.approx(card.values(card.mask()))

    assert _yardstick_play(env, 14, check) >= 26


def test_numpy_integers_are_integers_everywhere_a_count_is_taken(tmp_path):
    """A library caller's NumPy integer (``argmax`` gives one) is an integer wherever a count
    is taken, as a Python int is; a bool or a float is not."""
    from dicelab.logplay import check_log_path
    from dicelab.rl.batch import FarkleBatch

    env = penta_env(np.int64(3))
    assert env.seats == 3 and type(env.seats) is int
    assert FarkleBatch(np.int64(4), target=500).num_envs == 4
    check_log_path(tmp_path / "games.jsonl", np.int32(2))
    for bad in (True, 3.0, np.float64(3)):
        with pytest.raises(UserError, match="--log-games"):
            check_log_path(tmp_path / "games.jsonl", bad)
        with pytest.raises(UserError, match="seats"):
            penta_env(bad)
        with pytest.raises(UserError, match="games"):
            FarkleBatch(bad, target=500)


def _mask_now(env, agent=None):
    return env.observe(agent)["action_mask"] if agent is not None else env.action_masks()


@pytest.mark.parametrize("name", list(ENV_MAKERS))
def test_a_copy_samples_legal_actions_of_its_own_game_and_an_env_pickles(name):
    """A copy's ``action_space.sample()`` drew from the original's mask (its space held a
    closure over the original), and no environment pickled (a class made in a function)."""
    import copy
    import pickle

    env = ENV_MAKERS[name](None)
    env.reset(seed=1)
    clone = copy.deepcopy(env)
    clone.reset(seed=2)
    aec = hasattr(env, "agent_selection")
    agent = clone.agent_selection if aec else None
    space = clone.action_space(agent) if aec else clone.action_space
    assert all(_mask_now(clone, agent)[space.sample()] for _ in range(100))

    again = pickle.loads(pickle.dumps(env))
    if aec:
        assert _play_aec_out(again, 5) == _play_aec_out(ENV_MAKERS[name](None), 5)
    else:
        mine, theirs = _play_gym_out(again, 5), _play_gym_out(ENV_MAKERS[name](None), 5)
        assert mine[2] == theirs[2] and np.array_equal(mine[0]["observation"],
                                                       theirs[0]["observation"])
