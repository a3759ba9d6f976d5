"""The simulator playing the exact two-player policy agrees with the solver's numbers."""

from __future__ import annotations

import math

import pytest

from dicelab.errors import UserError
from dicelab.farkle.rules import PRESETS, load_rules
from dicelab.farkle.solve import solve_optimal_win
from dicelab.simulate import simulate


@pytest.mark.slow
@pytest.mark.parametrize(("target", "seed", "ending"), [(1000, 31, "last-round"),
                                                       (2500, 32, "last-round"),
                                                       (1000, 33, "first-to-bank"),
                                                       (2000, 34, "first-to-bank")])
def test_optimal_win_self_play_matches_exact_outcome_probabilities(target, seed, ending):
    sol = solve_optimal_win(load_rules("default", ending), target)
    games = 200_000
    res = simulate("optimal-win", ["optimal-win"], games=games, seed=seed, target=target,
                   first_seat=0, ending=ending)
    first, second = res.seat(0), res.seat(1)
    assert res.to_dict()["ending"] == ending
    o = sol.first_outcome
    for observed, exact in ((first.wins, o.win), (first.ties, o.tie), (second.wins, o.loss)):
        se = math.sqrt(exact * (1 - exact) / games)
        assert abs(observed / games - exact) < 4 * se + 1e-12, (observed, exact, se)
    assert first.ties == second.ties
    if ending == "first-to-bank":
        assert sol.first_outcome.tie == 0.0 and first.ties == 0
        assert first.wins + second.wins == games


@pytest.mark.slow
def test_optimal_win_self_play_under_facebook_matches_the_exact_value():
    """The farkle penalty's solve, played by the simulator from its streak table."""
    target = 1500
    sol = solve_optimal_win(PRESETS["facebook"], target)
    games = 200_000
    res = simulate("optimal-win", ["optimal-win"], games=games, seed=35, target=target,
                   rules="facebook", first_seat=0)
    first, second = res.seat(0), res.seat(1)
    p_win = sol.first_outcome.win
    se = math.sqrt(p_win * (1 - p_win) / games)
    assert abs(first.wins / games - p_win) < 4 * se, (first.wins, p_win, se)
    assert first.ties == 0 and first.wins + second.wins == games


@pytest.mark.slow
def test_optimal_win_under_a_penalty_and_the_last_round_matches_the_exact_value(tmp_path):
    """The penalty's policy table with a last-round table: the default scoring, the third
    lost turn in a row costs 500, the last round."""
    path = tmp_path / "penalty.toml"
    path.write_text("farkle-penalty = 500\n")
    target, games = 1000, 200_000
    sol = solve_optimal_win(load_rules(str(path)), target)
    assert sol.first_outcome.tie > 0 and sol.policy_table().last_value is not None
    res = simulate("optimal-win", ["optimal-win"], games=games, seed=36, target=target,
                   rules=str(path), first_seat=0)
    first, second = res.seat(0), res.seat(1)
    o = sol.first_outcome
    for observed, exact in ((first.wins, o.win), (first.ties, o.tie), (second.wins, o.loss)):
        se = math.sqrt(exact * (1 - exact) / games)
        assert abs(observed / games - exact) < 4 * se, (observed, exact, se)


def test_fair_head_start_is_the_most_even_start():
    """The reported head start minimises |W(0, h) - 0.5| over every head start h."""
    target = 1500
    sol = solve_optimal_win(PRESETS["default"], target)
    assert sol.win_value(0, 0) == pytest.approx(sol.first_outcome.score, abs=1e-9)
    gaps = {h: abs(sol.win_value(0, h) - 0.5) for h in range(0, target, 50)}
    best = min(gaps.values())
    assert gaps[sol.fair_head_start] == pytest.approx(best, abs=1e-12)
    assert sol.fair_head_start_value == pytest.approx(sol.win_value(0, sol.fair_head_start))


def test_optimal_win_is_refused_with_more_than_two_seats():
    with pytest.raises(UserError, match="two-seat"):
        simulate("optimal-win", ["ai", "ai"], games=10, seed=1, target=1000)
