"""The ``zilch`` preset (the online game Zilch): its table, Busche's long-run optimum, and
every solver on a rule the engine learned as data (six dice that score nothing are worth
500 and roll on; a roll of six dice never loses).

References: tests/naive_farkle (the rule text, every subset), tests/naive_farkle_dp (plain
recursions, relative value iteration) and tests/naive_two_player (value iteration over
the whole game)."""

from __future__ import annotations

import dataclasses

import naive_farkle as nf
import naive_farkle_dp as naive_dp
import naive_two_player as naive
import numpy as np
import pytest

from dicelab import config
from dicelab.farkle import solitaire
from dicelab.farkle.engine.model import CLIMB_ERR, model
from dicelab.farkle.exact import exact_pair
from dicelab.farkle.rules import PRESETS, set_asides, setaside_points
from dicelab.farkle.solve import solve_optimal_win

ZILCH = PRESETS["zilch"]


@pytest.mark.parametrize(("dice", "points"), [
    ([1], 100), ([5], 50), ([1, 1, 1], 1000), ([4, 4, 4], 400), ([2, 2, 2, 2], 400),
    ([2, 2, 2, 2, 2], 800), ([1, 1, 1, 1, 1, 1], 8000), ([1, 2, 3, 4, 5, 6], 1500),
    ([2, 2, 3, 3, 4, 4], 1500), ([3, 3, 3, 3, 6, 6], 1500), ([2, 2, 2, 3, 3, 3], 500),
    ([2, 2, 3, 4, 6, 6], 500), ([2, 3], None), ([1, 2, 3, 4, 6, 6], None),
])
def test_the_table_scores_as_the_rules_say(dice, points):
    assert setaside_points(ZILCH, dice) == points
    assert nf.legal_setasides(ZILCH, tuple(dice)).get(tuple(sorted(dice))) == points


def test_six_dice_never_lose_and_nothing_scoring_is_hot_dice():
    sa = set_asides(ZILCH)
    assert sa.bust[6] == 0.0
    for n in range(1, 6):
        assert sa.bust[n] == pytest.approx(naive_dp.bust_probability("zilch", n), abs=1e-15)
    # a roll that scores nothing: one option, all six dice for 500, six dice again
    from dicelab import dice

    assert sa.options(dice.rank_of_dice([2, 2, 3, 4, 6, 6])) == [(500, 6)]
    m = model(ZILCH)
    assert m.six_rows > 0 and m.bank_floor[1] == 6 and m.streak == 3 and m.penalty == 10


def test_max_ev_reproduces_busches_620_855_points_per_turn():
    """M. Busche (2010), "Maximizing Expected Scores in the Game of Zilch": the best
    long-run average is 620.855 points per turn, with three banking rules, for zero, one
    and two zilches in a row."""
    sol = solitaire.solve_max_ev(ZILCH)
    assert round(sol.rate, 3) == 620.855
    assert sol.rate == pytest.approx(sol.rate_check, abs=1e-9)
    assert sol.value_error < 1e-9 and len(sol.distributions) == 3
    rules = [sol.bank_thresholds(s) for s in range(3)]
    for th in rules:
        assert th[6] is None  # six dice never lose: rolling them is never worse
        assert all(t >= 300 for n, t in th.items() if n < 6)  # the minimum to bank
    for n in range(1, 6):  # a zilch away from the penalty: bank no later
        assert rules[2][n] <= rules[1][n] <= rules[0][n]
    assert rules[2][5] < rules[0][5]
    assert sol.is_threshold_policy()


def test_max_evs_turn_in_the_long_run_mixes_the_counts_by_the_chains_stationary_shares():
    """The report's turn (P(lost turn), its spread) is the long run's, as its points per
    turn are: the three policies' turns mixed by the stationary law of the chain of lost
    turns in a row (a bank returns to 0, a loss moves on, the third back to 0), found
    here as the chain's left eigenvector. Without a penalty, the one policy's turn."""
    sol = solitaire.max_ev_capped(ZILCH)
    q = np.array([d.p_bust for d in sol.distributions])
    chain = np.zeros((3, 3))
    chain[:, 0] = 1.0 - q
    chain[[0, 1, 2], [1, 2, 0]] += q
    w, v = np.linalg.eig(chain.T)
    share = np.real(v[:, np.argmin(np.abs(w - 1.0))])
    share /= share.sum()
    turn = sol.long_run()
    assert turn.p_bust == pytest.approx(float(share @ q), abs=1e-12)
    # simulate -s max-ev --rules zilch --target 2000 -n 1000000 --seed 1: 18.83% [18.80%, 18.87%]
    assert turn.p_bust == pytest.approx(0.1882, abs=1e-4)
    assert turn.p_bust + turn.p_bank.sum() + turn.p_unresolved == pytest.approx(1.0, abs=1e-12)
    report = sol.to_dict()
    assert report["p_bust"] == turn.p_bust
    assert report["turn_score_sd"] == turn.sd
    free = solitaire.max_ev_capped(PRESETS["default"])
    assert free.to_dict()["p_bust"] == free.distributions[0].p_bust


@pytest.mark.slow  # the fast tier has zilch's max-ev through Busche's optimum (above)
def test_max_ev_under_zilch_matches_the_plain_relative_value_iteration():
    """With banking forced from 1,000 (six dice roll on past it, up to 31,000 points in the
    reference: hot dice climb far), the rate and both biases as the plain relative value
    iteration finds them, every distinct set-aside tried."""
    g, h1, h2 = naive_dp.max_ev_penalty_rate("zilch", 500, 1000, min_bank=300,
                                             six_roll_on=True, far=31_000)
    sol = solitaire.solve_max_ev(ZILCH, cap=1000)
    assert sol.rate == pytest.approx(g, abs=1e-9)
    np.testing.assert_allclose(sol.bias, [0.0, h1, h2], rtol=0, atol=1e-9)


def test_fastest_and_races_under_zilch():
    fast = solitaire.solve_fastest(ZILCH, 1000)
    assert fast.turns.shape[0] == 3
    race = solitaire.race(ZILCH, 1000, solitaire.threshold_bank_table(300))
    floor = ZILCH.penalty_floor()
    assert fast.expected_turns_to_target <= race[0, floor] + 1e-9
    d = solitaire.threshold_distribution(ZILCH, 300)
    assert d.p_bust + d.p_bank.sum() + d.p_unresolved == pytest.approx(1.0, abs=1e-12)
    assert d.p_unresolved <= CLIMB_ERR


@pytest.mark.slow
def test_optimal_win_under_zilch_matches_the_plain_value_iteration(monkeypatch):
    """Zilch's table with a small penalty, totals down to -100 (two penalties), to 100:
    every state against the plain value iteration (whose six dice bank at its cap: a
    difference of at most the catch-up chance there, below 1e-10). A third lost turn in a
    row reaches the floor from -50 and stops there from -100."""
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 100)
    rules = dataclasses.replace(ZILCH, name="zilch-small", farkle_penalty=50)
    last = naive.LastRound(rules)
    cap = 1
    while last.turn(cap)[0] >= 1e-10:
        cap += 1
    ref = naive.solve(rules, 100, cap, floor=2)
    sol = solve_optimal_win(rules, 100, tol=1e-12, use_cache=False)
    assert sol.streak_values.shape == (3, 3, 4, 4)
    np.testing.assert_allclose(sol.streak_values, ref.value, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sol.streak_win, ref.win, rtol=0, atol=1e-9)


def test_exact_head_to_head_under_zilch_agrees_with_itself_in_both_seats(monkeypatch):
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    p = exact_pair("threshold-300", "threshold-300", rules=ZILCH, target=1000)
    assert p.verdict == "tie" and p.score == pytest.approx(0.5, abs=1e-12)
    q = exact_pair("ai", "threshold-300", rules=ZILCH, target=1000)
    assert 0.0 < q.score < 1.0 and q.tolerance < 1e-9
