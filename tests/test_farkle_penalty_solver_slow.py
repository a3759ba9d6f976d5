"""The long checks of ``optimal-win`` and ``max-ev`` under the farkle penalty (split from
tests/test_farkle_penalty_solver.py, so that a second worker runs them beside its golden
53.487% solve): the plain-Python value iteration over every state
(tests/naive_two_player), under both endings, the floor below zero, and max-ev's policy
simulated at the long-run rate."""

from __future__ import annotations

import dataclasses

import naive_two_player as naive
import numpy as np
import pytest
from test_two_player import _small_table, naive_cap

from dicelab import config
from dicelab.farkle import solitaire
from dicelab.farkle.rules import PRESETS
from dicelab.farkle.solve import solve_optimal_win
from dicelab.simulate import simulate

#: facebook's table and banking with a small penalty and floor, so the reference stays fast
FACEBOOK_SMALL = dataclasses.replace(PRESETS["facebook"], name="fb-small", farkle_penalty=100)
#: a tiny table under the last round, with a penalty of 50
SMALL_LAST_ROUND = dataclasses.replace(_small_table("ones-fives", five=50, three_ones=300),
                                       farkle_penalty=50)
#: hot dice must-roll with a penalty of 50: six dice never bank, past the cap they roll on
FACEBOOK_SMALL_MUST_ROLL = dataclasses.replace(FACEBOOK_SMALL, name="fb-small-must-roll",
                                               hot_dice="must-roll", farkle_penalty=50)


@pytest.mark.parametrize(("rules", "target", "floor_points"), [
    (FACEBOOK_SMALL, 300, 200), (SMALL_LAST_ROUND, 200, 100),
    (FACEBOOK_SMALL_MUST_ROLL, 300, 100)],
    ids=["facebook-first-to-bank", "small-last-round", "facebook-must-roll"])
@pytest.mark.slow
def test_penalty_matches_naive_value_iteration_at_every_state(monkeypatch, rules, target,
                                                              floor_points):
    """Sweeps to 1e-13, totals down to the floor (two penalties): every state against the
    plain value iteration."""
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", floor_points)
    cap = None if rules.ending == "first-to-bank" else naive_cap(rules, 1e-12)
    floor = floor_points // 50
    # must-roll: the reference's six dice roll 100 rows past its cap (5,000 points)
    ref = naive.solve(rules, target, cap, floor=floor, hot_rows=100)
    sol = solve_optimal_win(rules, target, tol=1e-12, use_cache=False)
    assert sol.floor_points == floor_points
    assert sol.sweeps >= 2
    for mine, theirs in ((sol.streak_values, ref.value), (sol.streak_win, ref.win),
                         (sol.streak_tie, ref.tie)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-10)
    # the queries read the same arrays: 0 : 0, and a state below zero after a penalty
    assert sol.first_outcome.win == pytest.approx(ref.win[0, 0, floor, floor], abs=1e-10)
    o = sol.outcome(-100, 50, 1, 2)
    assert (o.win, o.tie) == pytest.approx((ref.win[1, 2, floor - 2, floor + 1],
                                    ref.tie[1, 2, floor - 2, floor + 1]), abs=1e-10)
    # the penalty matters: a player about to risk it is worse off than one who is not
    assert sol.outcome(0, 0, 2, 0).win < sol.outcome(0, 0, 0, 0).win - 1e-3


@pytest.mark.slow
def test_floor_below_zero_does_not_move_the_value(monkeypatch):
    """Totals may fall below zero, down to the floor. At facebook to 600, lowering the
    floor from -2,000 to -3,000 moves no state with both totals >= 0 by more than 1e-9
    (from -1,000 to -2,000: below 1e-5), while states at the floor itself move a lot."""
    sols = {}
    for floor in (1000, 2000, 3000):
        monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", floor)
        sols[floor] = solve_optimal_win(PRESETS["facebook"], 600, use_cache=False)
        assert sols[floor].floor_points == floor
        assert sols[floor].first_outcome.tie == 0.0  # first to bank: no ties

    def moved(near: int, far: int, lowest: int) -> float:
        e, k = (far - near) // 50, (near + lowest) // 50  # lowest total compared
        return float(np.abs(sols[far].streak_values[:, :, e + k:, e + k:]
                            - sols[near].streak_values[:, :, k:, k:]).max())

    assert moved(2000, 3000, 0) < 1e-9
    assert moved(1000, 2000, 0) < 1e-5
    assert moved(1000, 2000, -1000) > 1e-3


@pytest.mark.slow
def test_simulated_max_ev_under_facebook_earns_the_long_run_rate():
    """The simulator plays max-ev's policy per run of lost turns. Its points per turn
    (final total over turns, the penalties counted) estimate the long-run rate without
    bias: the game ends on a bank, where the count is 0 again (Dynkin's formula with the
    bias h, h[0] = 0)."""
    sol = solitaire.solve_max_ev(PRESETS["facebook"])
    table = solitaire.max_ev_table(PRESETS["facebook"])
    assert table.streaks == 3 and table.value.shape[2:4] == (1, 1)
    for s in range(3):
        p = table.value.shape[4]
        np.testing.assert_array_equal(table.bank[s, 1, 0, 0], sol.bank[s, :p])
        np.testing.assert_array_equal(table.value[s, 2, 0, 0],
                                      sol.value[s, :p].astype(np.float32))
    res = simulate("max-ev", games=20_000, seed=11, target=20_000, rules="facebook")
    ppt = res.seat(0).points_per_turn
    assert abs(ppt.mean - sol.rate) < 4 * ppt.se, (ppt.mean, ppt.se, sol.rate)


@pytest.mark.slow
def test_max_ev_penalty_when_most_turns_are_lost_matches_plain_relative_value_iteration():
    """Banking from 700 on the basic table with a 500 penalty: the rate's map falls faster
    than 1 (tests/test_farkle_penalty_solver.py checks its equations fast); the plain
    relative value iteration over every set-aside finds the same rate and biases."""
    import naive_farkle_dp as naive_dp

    from dicelab.farkle.rules import load_rules

    rules = dataclasses.replace(load_rules("basic"), farkle_penalty=500, min_bank=700)
    g, h1, h2 = naive_dp.max_ev_penalty_rate("basic", 500, 700, min_bank=700)
    sol = solitaire.solve_max_ev(rules, cap=700)
    assert sol.rate == pytest.approx(g, abs=1e-9)
    np.testing.assert_allclose(sol.bias, [0.0, h1, h2], rtol=0, atol=1e-9)
