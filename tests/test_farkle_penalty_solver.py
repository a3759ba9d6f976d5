"""``optimal-win`` under the farkle penalty (dicelab.farkle.penalty_game): its turn endings,
policy table, refusals, the golden 53.487% and the CLI, also with hot dice must-roll;
``max-ev`` under the penalty (and with must-roll) against the plain relative value
iteration. The plain-Python value iteration over every state (tests/naive_two_player: my
total, the other's, both players' lost turns in a row, turn points, dice; every legal
set-aside of every roll) under both endings, the floor below zero and max-ev simulated are
in tests/test_farkle_penalty_solver_slow.py, so that with whole files per worker they run
beside the golden solve."""

from __future__ import annotations

import dataclasses
import json
import types

import naive_farkle_dp as naive_dp
import naive_two_player as naive
import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle import solitaire, solve
from dicelab.farkle.engine import game
from dicelab.farkle.rules import PRESETS, load_rules
from dicelab.farkle.solve import solve_optimal_win

#: facebook with hot dice must-roll: six dice never bank, past the cap they roll on
FACEBOOK_MUST_ROLL = dataclasses.replace(PRESETS["facebook"], name="facebook-must-roll",
                                         hot_dice="must-roll")


@pytest.fixture(scope="module")
def facebook_600():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "PENALTY_FLOOR_POINTS", 1000)
        return solve_optimal_win(PRESETS["facebook"], 600, use_cache=False)


@pytest.fixture(scope="module")
def small_must_roll_300():
    """facebook with must-roll, a penalty of 100, to 300, totals down to -200: fast."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "PENALTY_FLOOR_POINTS", 200)
        rules = dataclasses.replace(FACEBOOK_MUST_ROLL, name="fb-small-must-roll",
                                    farkle_penalty=100)
        return solve_optimal_win(rules, 300, use_cache=False)




def test_penalty_changes_the_game_and_refuses_what_it_cannot_play(monkeypatch, facebook_600):
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 1000)
    sol = facebook_600  # facebook to 600, floor -1,000: solved once for the module
    plain = solve_optimal_win(dataclasses.replace(PRESETS["facebook"], farkle_penalty=0),
                              600, use_cache=False)
    assert abs(sol.first_outcome.win - plain.first_outcome.win) > 1e-4
    assert sol.to_dict()["farkle_penalty"] == 500
    bank, roll = sol.turn_values(0, 0, 300)  # the turn of the state asked about
    assert 0.0 < bank < 1.0 and 0.0 < roll[6] < 1.0
    with pytest.raises(UserError, match="my total"):
        sol.outcome(-1050, 0)
    with pytest.raises(UserError, match="lost turns"):
        sol.outcome(0, 0, 3, 0)
    assert sol.outcome(0, 0, 2, 0) != sol.outcome(0, 0)
    # without a penalty lost turns in a row change nothing: any count gets the one answer
    assert plain.outcome(0, 0, 2, 1) == plain.outcome(0, 0)


@pytest.mark.parametrize("solved", ["facebook_600", "small_must_roll_300"],
                         ids=["may-bank", "must-roll"])
def test_each_turn_ends_once_and_its_ending_gives_its_value(request, solved):
    """The kept turn endings (the policy evaluation's data) are probability distributions
    whose evaluation is the turn DP's value, at every state of a solve (under must-roll
    too, where six dice roll on past the cap and the last rows' guess ends the turn)."""
    sol = request.getfixturevalue(solved)
    m, g, seat, _ = sol.engine()
    vv = sol.streak_values
    _k, big_t = vv.shape[0], vv.shape[2]
    sc = game.scratch(m, g.rows)
    worst = 0.0
    step = 3 if big_t > 20 and m.six_rows else 1  # must-roll's turns are longer
    for s, r, x, y in np.ndindex(vv.shape):
        if x % step or y % step:
            continue
        c, bx, by = game.lost_turn(m, s, r, x)
        beta = 1.0 - vv[c, bx, y, by]
        value, _, _, _, rows = game.optimal_turn(m, g, seat, s, r, x, y, beta, sc, 0, False)
        lost = game.optimal_ends(m, g, sc, rows)
        ends = sc.ends[:rows]
        row = np.zeros(big_t - 1 - x)
        n = min(rows - 1, big_t - 1 - x)
        row[:n] = ends[1:n + 1]
        past = ends[big_t - x:].sum()
        # no bank below 300 points
        assert row.min(initial=0.0) >= 0.0 and row[:5].max(initial=0.0) == 0.0
        assert row.sum() + past + lost == pytest.approx(1.0, abs=1e-12)
        # first to bank: banking the target wins
        evaluated = past + lost * beta + row @ (1.0 - vv[r, 0, y, x + 1:])
        worst = max(worst, abs(evaluated - value), abs(value - vv[s, r, x, y]))
    assert worst < 1e-10


@pytest.mark.parametrize(("start_steps", "values_first"), [(1, 1.1), (8, 0.0)],
                         ids=["rough-start-values-first", "close-start-choices-always"])
def test_the_solve_ends_alike_however_it_starts_and_solves_kept_turns(
        monkeypatch, facebook_600, start_steps, values_first):
    """Policy iteration ends at the same values from a rougher or a closer start (the game
    without the penalty by 1 or 8 fixed-point steps), and whether an improvement sweep
    solves a kept turn's values first (from the second sweep on: every better turn is
    then solved again with its choices and followed) or always with its choices; the
    start itself lies close to the exact game without the penalty."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 1000)
    monkeypatch.setattr(solve, "START_STEPS", start_steps)
    monkeypatch.setattr(solve, "VALUES_FIRST", values_first)
    sol = solve_optimal_win(PRESETS["facebook"], 600, use_cache=False)
    np.testing.assert_allclose(sol.streak_values, facebook_600.streak_values, rtol=0,
                               atol=sol.tolerance + facebook_600.tolerance + 1e-12)
    assert sol.first_outcome.win == pytest.approx(facebook_600.first_outcome.win, abs=1e-10)
    u = facebook_600.streak_values.shape[2]
    free = dataclasses.replace(PRESETS["facebook"], farkle_penalty=0)
    exact = solve_optimal_win(free, u * 50, use_cache=False).streak_values[0, 0]
    start, _ = solve._start_values(PRESETS["facebook"], u, sol.cap_tolerance)
    assert np.abs(start - exact).max() < (0.2 if start_steps == 1 else 1e-4)


def _table_plays(sol, s, r, a, b):
    """State (s, r, a, b)'s turn played from the streak table in plain Python the way its
    docstring says (six dice followed 400 rows further under must-roll): its value."""
    must_roll = sol.farkle_rules.hot_dice == "must-roll"
    table = sol.policy_table()
    vv = sol.streak_values
    big_t = vv.shape[2]
    rolls = naive.roll_outcomes(sol.farkle_rules)
    pen = sol.farkle_rules.farkle_penalty // 50
    c, bx, by = (r, s + 1, a) if s < 2 else (r, 0, max(a - pen, 0))

    def bank_value(m):
        return 1.0 - vv[r, 0, b, m] if m < big_t else 1.0

    view = types.SimpleNamespace(value=table.value[s, r], bank=table.bank[s, r])
    return naive.table_turn_value(view, a, b, bank_value, 1.0 - vv[c, bx, b, by], rolls,
                                  floor=6, hot_rows=400 if must_roll else 0)


@pytest.mark.parametrize(("s", "r", "a", "b"), [(0, 0, 20, 20), (2, 0, 20, 20),
                                                (1, 2, 5, 31), (0, 1, 31, 0),
                                                (2, 2, 0, 0), (1, 1, 12, 25)])
def test_policy_table_plays_the_solved_policy(facebook_600, s, r, a, b):
    """The streak table, played in plain Python the way its docstring says, has the
    solved value at every kind of state (both counts, totals below zero, the floor);
    under must-roll: test_must_roll_with_the_penalty_plays_its_policy_table."""
    sol = facebook_600
    table = sol.policy_table()
    vv = sol.streak_values
    big_t = vv.shape[2]
    assert table.streaks == 3 and table.floor == 20
    # first to bank: rows up to the top index (past it every turn has banked the target)
    assert table.value.shape == (3, 3, big_t, big_t, big_t + 1, 7)
    assert table.bank[..., -1, 1:].all()  # from P - 1 on it always banks
    if s == r == 0 and a >= 20 and b >= 20:  # the decisions shown by `dicelab policy`
        np.testing.assert_array_equal(sol.bank_decisions(50 * (a - 20), 50 * (b - 20)),
                                      table.bank[0, 0, a, b])
    assert _table_plays(sol, s, r, a, b) == pytest.approx(vv[s, r, a, b], abs=1e-7)


def test_must_roll_with_the_penalty_plays_its_policy_table(small_must_roll_300):
    """Hot dice must-roll with the penalty (a small game): six dice never bank, past the
    cap too; the table plays the solved value at every kind of state; must-roll changes
    the game."""
    sol = small_must_roll_300
    vv = sol.streak_values
    assert sol.tolerance < 1e-9 and sol.floor_points == 200 and vv.shape == (3, 3, 10, 10)
    table = sol.policy_table()
    assert not table.bank[..., 6].any() and table.bank[..., -1, 1:6].all()
    np.testing.assert_array_equal(sol.bank_decisions(0, 0), table.bank[0, 0, 4, 4])
    for s, r, a, b in [(0, 0, 4, 4), (2, 0, 4, 4), (1, 2, 0, 9), (2, 2, 0, 0), (0, 1, 9, 3)]:
        assert _table_plays(sol, s, r, a, b) == pytest.approx(vv[s, r, a, b], abs=1e-7)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(config, "PENALTY_FLOOR_POINTS", 200)
        may_bank = solve_optimal_win(dataclasses.replace(sol.farkle_rules, hot_dice="may-bank"),
                                     300, use_cache=False)
    assert abs(may_bank.first_outcome.win - sol.first_outcome.win) > 1e-4


@pytest.mark.slow
def test_facebook_reproduces_the_published_first_player_win_of_53_487_percent(capsys):
    """The golden number (M. Busche, Facebook Farkle, both players playing to win): the
    first player wins 53.487%. About five minutes on two cores; then from the cache."""
    args = ["solve", "farkle", "-p", "optimal-win", "--rules", "facebook", "--target",
            "10000"]
    code, out, err = run_cli(capsys, [*args, "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["from_cache"] is False and d["p_tie"] == 0.0
    assert d["p_win"] == pytest.approx(0.5348702618, abs=1e-10)
    assert d["states"] == 372_405_600 and d["tolerance"] < 1e-10
    code, out, err = run_cli(capsys, args)
    assert code == 0, err
    assert "P(win) 53.4870%" in out and "372,405,600 states" in out


def test_default_rules_take_one_exact_sweep():
    sol = solve_optimal_win(load_rules("default"), 500, use_cache=False)
    assert sol.streak_values.shape[:2] == (1, 1) and sol.sweeps == 0
    assert "sweeps" not in sol.to_dict()


def test_cli_solves_facebook_and_reports_the_penalty_state(capsys, monkeypatch):
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 1000)
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "optimal-win", "--rules",
                                      "facebook", "--target", "500", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["farkle_penalty"] == 500 and d["floor_points"] == 1000 and d["p_tie"] == 0.0
    assert d["sweeps"] >= 2 and d["states"] > 0 and 0.5 < d["p_win"] < 1.0
    code, out, _ = run_cli(capsys, ["solve", "farkle", "-p", "optimal-win", "--rules",
                                    "facebook", "--target", "500"])
    assert code == 0 and f"P(win) {100 * d['p_win']:.4f}%" in out
    assert "farkle penalty 500" in out


# ---------------------------------------------------------------------------------
# max-ev: the long-run points per turn, one banking rule per run of lost turns


def test_max_ev_penalty_matches_plain_relative_value_iteration():
    """Against tests/naive_farkle_dp (every distinct set-aside, plain recursions, relative
    value iteration) on the basic table with a 500 penalty, banking forced from 1,000."""
    rules = dataclasses.replace(load_rules("basic"), farkle_penalty=500)
    g, h1, h2 = naive_dp.max_ev_penalty_rate("basic", 500, 1000)
    sol = solitaire.solve_max_ev(rules, cap=1000)
    assert sol.rate == pytest.approx(g, abs=1e-9)
    np.testing.assert_allclose(sol.bias, [0.0, h1, h2], rtol=0, atol=1e-9)
    # the penalty costs: below the plain max-ev, and a run of lost turns is a liability
    plain = solitaire.solve_max_ev(dataclasses.replace(rules, farkle_penalty=0), cap=1000)
    assert sol.rate < plain.expected_score - 1.0
    assert 0 > sol.bias[1] > sol.bias[2]


def test_max_ev_penalty_under_facebook():
    sol = solitaire.solve_max_ev(PRESETS["facebook"])
    # the same policies evaluated from their exact turn distributions and the chain of
    # lost turns in a row give the same long-run rate
    assert sol.rate == pytest.approx(sol.rate_check, abs=1e-9)
    assert sol.stationary.sum() == pytest.approx(1.0, abs=1e-15)
    th = {s: sol.bank_thresholds(s) for s in range(3)}
    for n in range(1, 7):  # with the penalty one loss away, bank no later than at 0
        assert th[2][n] <= th[0][n]
    assert th[2][5] < th[0][5]  # and strictly earlier somewhere
    assert all(t >= 300 for s in th.values() for t in s.values())  # the minimum to bank
    # without a penalty: one turn policy, and its rate is the expected turn score
    plain = solitaire.solve_max_ev(load_rules("default"))
    assert len(plain.distributions) == 1 and plain.bank.shape[0] == 1
    assert plain.rate == pytest.approx(plain.distributions[0].expected_score, rel=1e-14)


def test_cli_max_ev_under_facebook(capsys):
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "max-ev", "--rules",
                                      "facebook", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["farkle_penalty"] == 500
    assert set(d["bank_thresholds_by_lost_turns"]) == {"0", "1", "2"}
    assert abs(d["points_per_turn"] - d["points_per_turn_check"]) < 1e-9
    code, out, _ = run_cli(capsys, ["solve", "farkle", "-p", "max-ev", "--rules", "facebook"])
    assert code == 0 and "long-run points per turn" in out and "expected banked" in out


@pytest.mark.slow  # 5.4 s; fast twins: max-ev under the penalty, and under must-roll
def test_max_ev_penalty_under_must_roll_matches_the_plain_reference():
    """Hot dice must-roll with the penalty: six dice never bank, past the cap too (the
    reference recurses up to 9,000 points); the rate and both biases as the plain relative
    value iteration finds them, and the turn policies' exact distributions agree."""
    rules = dataclasses.replace(load_rules("basic"), name="basic-must-roll",
                                hot_dice="must-roll", farkle_penalty=500)
    g, h1, h2 = naive_dp.max_ev_penalty_rate("basic", 500, 1000, must_roll=True, far=9000)
    sol = solitaire.solve_max_ev(rules, cap=1000)
    assert sol.rate == pytest.approx(g, abs=1e-9)
    np.testing.assert_allclose(sol.bias, [0.0, h1, h2], rtol=0, atol=1e-9)
    assert sol.value_error < 1e-9 and sol.to_dict()["value_error"] == sol.value_error
    assert sol.rate == pytest.approx(sol.rate_check, abs=1e-9)
    assert not sol.bank[:, :, 6].any()  # every policy's error is within sol.value_error
    # must-roll costs a little against may-bank, with the penalty too
    # past the cap six dice roll on rather than bank: the rule changes the rate
    may_bank = solitaire.solve_max_ev(dataclasses.replace(rules, hot_dice="may-bank"),
                                            cap=1000)
    assert abs(may_bank.rate - sol.rate) > 1.0


@pytest.mark.parametrize("min_bank", [600, 700, 1000])
def test_max_ev_penalty_when_most_turns_are_lost(min_bank):
    """A high minimum to bank loses most turns: the rate's map then falls faster than 1
    (from 700 here), where plain iteration overshoots. The rate and biases still solve the
    average-reward equations with the solved policies' own turn distributions."""
    rules = dataclasses.replace(load_rules("basic"), farkle_penalty=500, min_bank=min_bank)
    sol = solitaire.solve_max_ev(rules, cap=min_bank)
    q = [d.p_bust for d in sol.distributions]
    assert (q[0] * (1 + q[1]) > 1) == (min_bank > 600)
    beta = [sol.bias[1], sol.bias[2], -500.0]
    for s, d in enumerate(sol.distributions):
        assert sol.rate + sol.bias[s] == pytest.approx(d.expected_score + q[s] * beta[s],
                                                      abs=1e-9)
    assert sol.rate == pytest.approx(sol.rate_check, abs=1e-9)
    assert 0 > sol.bias[1] > sol.bias[2]


def test_cli_max_ev_with_a_high_minimum_to_bank_and_the_penalty(capsys, tmp_path):
    path = tmp_path / "strict.toml"
    path.write_text('name = "strict"\nmin-bank = 1000\nfarkle-penalty = 500\n')
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "max-ev", "--rules",
                                      str(path), "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert abs(d["points_per_turn"] - d["points_per_turn_check"]) < 1e-9
    assert all(t >= 1000 for t in d["bank_thresholds"].values())
