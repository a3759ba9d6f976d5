"""Best responses under the farkle penalty (``optimal-win:vs=P``,
dicelab.farkle.solve): against a plain-Python value iteration over every state
(tests/naive_two_player with a fixed opponent), against the exact head to head of its own
policy table (both seats, both endings), against every other policy the opponent meets,
against optimal-win (the best response to it is its own value) and against Monte Carlo."""

from __future__ import annotations

import dataclasses
import json
import threading

import naive_farkle as nf
import naive_two_player as naive
import numpy as np
import pytest
from cli_helpers import run_cli
from test_head_to_head import assert_monte_carlo_agrees

from dicelab import config
from dicelab.farkle.exact import exact_pair, solve_best_response, solve_optimal_win
from dicelab.farkle.rules import PRESETS, solver_floor

FACEBOOK = PRESETS["facebook"]
#: facebook's table and banking with a small penalty: the plain reference stays small
FACEBOOK_SMALL = dataclasses.replace(FACEBOOK, name="fb-small", farkle_penalty=100)
#: the default table, the last round, a penalty
LAST_ROUND = dataclasses.replace(PRESETS["default"], name="pen-100", farkle_penalty=100)


def test_best_response_matches_plain_value_iteration_at_every_state(monkeypatch):
    """Mine and the opponent's values at every state (both counts, totals down to -200)
    against value iteration over every legal set-aside, the opponent threshold-350, to 300."""
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 200)
    rules, target = FACEBOOK_SMALL, 300
    ref = naive.solve(rules, target, None, floor=4,
                      opponent=nf.threshold_turn_distribution(rules, 350))
    br = solve_best_response(rules, target, "threshold-350", use_cache=False)
    assert br.floor_points == 200 and br.sweeps >= 2
    np.testing.assert_allclose(br.streak_values, ref.value, rtol=0, atol=1e-10)
    np.testing.assert_allclose(br.opponent_streak_values, ref.opponent[0], rtol=0, atol=1e-10)
    assert br.first_outcome.win == pytest.approx(ref.win[0, 0, 4, 4], abs=1e-10)
    assert br.second_outcome.win == pytest.approx(1 - ref.opponent[1, 0, 0, 4, 4], abs=1e-10)
    assert br.outcome(-100, 50, 1, 2).win == pytest.approx(ref.win[1, 2, 2, 5],
                                                                abs=1e-10)
    assert br.tolerance < 1e-9


@pytest.mark.slow  # fast twin: test_best_response_matches_plain_value_iteration_at_every_state
def test_best_response_under_must_roll_matches_plain_value_iteration(monkeypatch):
    """Hot dice must-roll with the penalty: six dice never bank (past the cap too), the
    opponent's turns too; mine and the opponent's values at every state against the plain
    value iteration (its hot-dice chain followed 50 rows further), and the policy table
    played by the exact head to head in both seats."""
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 200)
    rules = dataclasses.replace(FACEBOOK_SMALL, name="fb-small-must-roll",
                                hot_dice="must-roll")
    target = 200
    ref = naive.solve(rules, target, None, floor=4, hot_rows=50,
                      opponent=nf.threshold_turn_distribution(rules, 350))
    br = solve_best_response(rules, target, "threshold-350", use_cache=False)
    assert br.tolerance < 1e-6
    np.testing.assert_allclose(br.streak_values, ref.value, rtol=0, atol=1e-7)
    np.testing.assert_allclose(br.opponent_streak_values, ref.opponent[0], rtol=0, atol=1e-7)
    table = br.policy_table()
    assert not table.bank[..., 6].any()
    played = exact_pair(table, "threshold-350", rules=rules, target=target, use_cache=False)
    assert played.first.win == pytest.approx(br.first_outcome.win, abs=1e-6)
    assert played.second.win == pytest.approx(br.second_outcome.win, abs=1e-6)
    free = solve_best_response(dataclasses.replace(rules, hot_dice="may-bank"), target,
                               "threshold-350", use_cache=False)
    assert abs(free.first_outcome.win - br.first_outcome.win) > 1e-4  # must-roll changes the game


@pytest.mark.parametrize(("rules", "target", "opponent"), [
    # first-to-bank's best response is checked at every state by the plain value iteration,
    # and its table played in both seats under must-roll, in the fast tier
    pytest.param(FACEBOOK, 600, "threshold-300", marks=pytest.mark.slow),
    (LAST_ROUND, 200, "max-ev")], ids=["facebook", "last-round"])
def test_best_response_plays_its_value_and_beats_every_other_policy(rules, target, opponent,
                                                                    monkeypatch):
    """Its policy table, played by the exact head to head (an independent evaluation),
    gives its solved outcome in both seats; no other policy does better against the same
    opponent in either seat. (Totals down to two penalties below zero, the smallest
    floor, keep it fast.)"""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    br = solve_best_response(rules, target, opponent, use_cache=False)
    played = exact_pair(br.policy_table(), opponent, rules=rules, target=target,
                        use_cache=False)
    second = br.second_outcome
    assert played.first.win == pytest.approx(br.first_outcome.win, abs=1e-9)
    assert played.first.tie == pytest.approx(br.first_outcome.tie, abs=1e-9)
    assert played.second.win == pytest.approx(second.win, abs=1e-9)
    assert played.second.tie == pytest.approx(second.tie, abs=1e-9)
    if rules.ending == "last-round":
        assert br.first_outcome.tie > 1e-3  # ties are really there
    for other in ("optimal-win", "ai", "max-ev", "threshold-350"):
        q = exact_pair(other, opponent, rules=rules, target=target)
        assert q.first.score <= played.first.score + 1e-9, other
        assert q.second.score <= played.second.score + 1e-9, other
        if other == "optimal-win":  # which is not the best response to this opponent
            assert played.score > q.score + 1e-4
    # its first decisions: no bank below the minimum to bank, a bank at the last row
    bank = br.bank_decisions(0, 0)
    assert bank[:rules.min_bank // 50, 1:].sum() == 0 and bank[-1, 1:].all()
    if rules.ending == "last-round":  # against optimal-win: optimal-win's own value
        ow = solve_optimal_win(rules, target)
        to_ow = solve_best_response(rules, target, "optimal-win")
        assert to_ow.first_outcome.score == pytest.approx(ow.first_outcome.score, abs=1e-9)
        assert to_ow.second_outcome.score == pytest.approx(1 - ow.first_outcome.score, abs=1e-9)


def test_cli_solves_a_best_response_under_facebook(capsys, monkeypatch):
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "optimal-win:vs=threshold-300",
                                      "--rules", "facebook", "--target", "600", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["policy"] == "optimal-win:vs=threshold-300" and d["farkle_penalty"] == 500
    assert 0.7 < d["p_win"] < 0.8 and d["tolerance"] < 1e-9


@pytest.mark.slow
def test_monte_carlo_agrees_with_the_best_response():
    assert_monte_carlo_agrees("optimal-win:vs=ai", "ai", FACEBOOK, 1000, 100_000, seed=37)


@pytest.mark.parametrize("opponent", [None, "threshold-350"])
def test_a_solved_game_keeps_its_floor_when_the_setting_changes(monkeypatch, opponent):
    """A solution queried after ``config.PENALTY_FLOOR_POINTS`` changed in the same process
    answers at the floor it was solved with (its arrays'), as it did before the change."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 200)
    rules, target = FACEBOOK_SMALL, 300

    def solved():
        if opponent is None:
            return solve_optimal_win(rules, target, use_cache=False)
        return solve_best_response(rules, target, opponent, use_cache=False)

    def answers(sol):
        return (sol.bank_decisions(-100, 50, 1, 2), sol.turn_values(0, 100, 150, 2, 0)[1],
                sol.policy_table().value)

    before, later = solved(), solved()
    expected = answers(before)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 1000)
    assert later.floor_points == 200
    for got, want in zip(answers(later), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_solver_floor_holds_in_its_own_thread_only(monkeypatch):
    """A solved game rebuilds its engine inside ``solver_floor``: that floor is read there,
    and only in that thread; another thread meanwhile, and the same thread after the
    block, read the setting."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 1000)
    inside, release, seen = threading.Event(), threading.Event(), {}

    def hold() -> None:
        with solver_floor(3000):
            seen["inside"] = FACEBOOK.penalty_floor()
            inside.set()
            release.wait(10)
        seen["after"] = FACEBOOK.penalty_floor()

    thread = threading.Thread(target=hold)
    thread.start()
    assert inside.wait(10)
    seen["other thread"] = FACEBOOK.penalty_floor()
    release.set()
    thread.join(10)
    # facebook's penalty is 500: the floor is at least two penalties, 1,000 points
    assert seen == {"inside": 60, "other thread": 20, "after": 20}
    assert FACEBOOK.penalty_floor(400) == 20 and LAST_ROUND.penalty_floor() == 20
