"""Exact Farkle turn analysis: kernels vs the independent recursions of naive_farkle_dp."""

from __future__ import annotations

import naive_farkle_dp as naive
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicelab import cache
from dicelab.errors import UserError
from dicelab.farkle import exact, turn_dp
from dicelab.farkle.scoring import PRESETS, ScoringTable
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]
BASIC = PRESETS["basic"]


# --- against the brute-force recursions --------------------------------------------


@pytest.mark.parametrize("rules", ["default", "basic"])
def test_bust_risks_match_enumeration_and_seed(rules):
    arr = turn_dp.turn_arrays(PRESETS[rules])
    for n in range(1, 7):
        assert arr.bust[n] == pytest.approx(naive.bust_probability(rules, n), abs=1e-15)
    if rules == "default":
        # the seed's bust risks, rounded as printed there (exact counts / 6**n)
        seed = [66.67, 44.44, 27.78, 15.74, 7.72, 2.31]
        assert [round(100 * arr.bust[n], 2) for n in range(1, 7)] == seed


@pytest.mark.parametrize("rules,cap", [("default", 300), ("default", 1000), ("basic", 1000),
                                       ("basic", 2500)])
def test_max_ev_with_low_cap_matches_naive(rules, cap):
    got = turn_dp.solve_max_ev(PRESETS[rules], cap=cap).expected_score
    assert got == pytest.approx(naive.max_ev(rules, cap), rel=1e-12)


def test_max_ev_with_proven_cap_matches_naive():
    sol = turn_dp.solve_max_ev(DEFAULT)
    assert sol.expected_score == pytest.approx(naive.max_ev("default", sol.cap), rel=1e-12)


@pytest.mark.parametrize("rules,threshold", [("default", 50), ("default", 300),
                                             ("default", 650), ("basic", 400)])
def test_threshold_distribution_matches_naive(rules, threshold):
    want = naive.threshold_outcomes(rules, threshold)
    got = turn_dp.threshold_distribution(PRESETS[rules], threshold)
    assert got.p_bust == pytest.approx(want.pop(0), abs=1e-13)
    nz = {int(i) * 50: float(got.p_bank[i]) for i in np.nonzero(got.p_bank)[0]}
    assert nz.keys() == want.keys()
    for x, p in want.items():
        assert nz[x] == pytest.approx(p, abs=1e-13)
    assert got.expected_score == pytest.approx(sum(x * p for x, p in want.items()), rel=1e-12)


@pytest.mark.parametrize("rules,target", [("default", 300), ("default", 600), ("basic", 400)])
def test_fastest_matches_naive(rules, target):
    sol = turn_dp.solve_fastest(PRESETS[rules], target)
    want = naive.fastest_turns(rules, target)
    np.testing.assert_allclose(sol.turns, want, rtol=1e-11)


# --- the cap -------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["default", "basic", "ones-300"])
def test_max_ev_value_does_not_move_when_cap_is_raised(rules):
    sol = turn_dp.solve_max_ev(PRESETS[rules])
    big = turn_dp.solve_max_ev(PRESETS[rules], cap=2 * sol.cap)
    assert big.expected_score == sol.expected_score
    rows = sol.cap // 50
    np.testing.assert_array_equal(big.value[:rows], sol.value[:rows])
    np.testing.assert_array_equal(big.bank[:rows], sol.bank[:rows])
    # with the doubled cap, rolling is computed above the proven cap: never better
    assert (big.roll_value[rows:2 * rows, 1:] <= big.value[rows:2 * rows, 1:]).all()
    assert big.bank[rows:2 * rows, 1:].all()


def test_cap_bound_is_an_upper_bound_on_gain():
    sol = turn_dp.solve_max_ev(DEFAULT)
    w = turn_dp.gain_bound(DEFAULT)
    tps = np.arange(sol.value.shape[0])[:, None] * 50.0
    # V(tp, n) - tp <= W(n): the true gain never exceeds the bound used in the proof
    assert (sol.value[1:, 1:] - tps[1:] <= w[None, 1:] + 1e-9).all()


# --- known values, structure ----------------------------------------------------------


def test_max_ev_default_structure():
    sol = turn_dp.solve_max_ev(DEFAULT)
    th = sol.bank_thresholds()
    assert sol.is_threshold_policy()
    # more dice left -> more risk worth taking, except 1 die (its hot dice are worth a lot)
    assert th[2] <= th[3] <= th[4] <= th[5] <= th[6]
    assert th[1] >= th[2]
    assert sol.to_dict()["expected_turn_score"] == sol.expected_score


def test_threshold_sweep_best_and_gap():
    sw = turn_dp.threshold_sweep(DEFAULT)
    assert sw.thresholds[0] == 50 and sw.thresholds[-1] == 2000
    assert sw.best_score == pytest.approx(
        turn_dp.threshold_distribution(DEFAULT, sw.best_threshold).expected_score, rel=1e-15)
    assert (sw.gap_to_max_ev() > 0).all()
    frame = sw.to_frame()
    assert len(frame) == 40 and frame["expected_turn_score"].idxmax() == int(
        np.argmax(sw.expected_score))


def test_fastest_decreases_in_total_and_zero_at_target():
    sol = turn_dp.solve_fastest(DEFAULT, 5000)
    assert sol.turns[-1] == 0.0
    assert (np.diff(sol.turns) <= 1e-12).all()
    assert (sol.newton_steps < 50).all()
    assert 1.0 < sol.turns[-2] < 1.1  # 50 points short: any non-bust first roll ends it


def test_fastest_beats_every_threshold_race():
    sol = turn_dp.solve_fastest(DEFAULT, 2000)
    for t in (200, 300, 500, 1000):
        race = turn_dp.evaluate_race(DEFAULT, 2000, turn_dp.threshold_bank_table(t))
        assert sol.expected_turns <= race[0] + 1e-12


# --- the tables the simulation kernel plays -------------------------------------------


@pytest.mark.parametrize("rules", ["default", "ones-300"])
def test_max_ev_table_plays_exactly_max_ev(rules):
    sol = turn_dp.solve_max_ev(PRESETS[rules])
    table = exact.policy_table(parse_policy("max-ev"), PRESETS[rules], 10000, 3)
    assert table.value.dtype == np.float32 and table.value.shape[:2] == (1, 1)
    assert table.bank[0, 0, -1, 1:].all()
    played = turn_dp.evaluate_turn_policy(PRESETS[rules], table.bank[0, 0], table.value[0, 0])
    assert played.expected_score == pytest.approx(sol.expected_score, rel=1e-12)


def test_fastest_table_plays_exactly_fastest():
    target = 3000
    sol = exact.fastest_solution(DEFAULT, target)
    table = exact.policy_table(parse_policy("fastest"), DEFAULT, target, 4)
    assert table.value.shape[:2] == (target // 50, 1)
    assert table.bank[:, 0, -1, 1:].all()
    played = turn_dp.evaluate_race(DEFAULT, target, table.bank[:, 0], table.value[:, 0])
    np.testing.assert_allclose(played, sol.turns, rtol=1e-12)
    # value is minus the expected turns still needed
    assert table.value[0, 0, 0, 6] == pytest.approx(-(sol.turns[0] - 1), rel=1e-6)


def test_fastest_cache_roundtrip_and_corrupt_rebuild():
    a = exact.fastest_solution(BASIC, 1000)
    b = exact.fastest_solution(BASIC, 1000)
    assert not a.from_cache and b.from_cache
    np.testing.assert_array_equal(a.turns, b.turns)
    np.testing.assert_array_equal(a.bank, b.bank)
    files = list(cache.cache_dir().glob("*.npz"))
    assert len(files) == 1
    files[0].write_bytes(files[0].read_bytes()[:200])
    c = exact.fastest_solution(BASIC, 1000)
    assert not c.from_cache
    np.testing.assert_array_equal(a.turns, c.turns)


def test_policy_table_refusals():
    with pytest.raises(UserError, match="two-seat games only"):
        exact.policy_table(parse_policy("optimal-win"), DEFAULT, 10000, 3)
    with pytest.raises(UserError, match="no exact decision table"):
        exact.policy_table(parse_policy("ai"), DEFAULT, 10000, 2)
    with pytest.raises(UserError, match="target"):
        exact.policy_table(parse_policy("fastest"), DEFAULT, 1234, 2)
    with pytest.raises(UserError, match="threshold"):
        turn_dp.threshold_distribution(DEFAULT, 0)


def test_scoring_digest_tells_tables_apart():
    same_name = ScoringTable(name="default", straight=1000)
    assert exact.scoring_digest(same_name) != exact.scoring_digest(DEFAULT)


# --- properties (hypothesis) ----------------------------------------------------------

points = st.integers(0, 20).map(lambda k: 50 * k)


@st.composite
def scoring_tables(draw):
    return ScoringTable(
        name="random",
        singles=(0, draw(st.integers(1, 4)) * 50, 0, 0, 0, draw(st.integers(1, 3)) * 50, 0),
        three_of_a_kind=(0, *(draw(st.integers(1, 20)) * 50 for _ in range(6))),
        n_of_a_kind_mode=draw(st.sampled_from(["fixed", "double", "none"])),
        n_of_a_kind=tuple(sorted(draw(st.integers(1, 60)) * 50 for _ in range(3))),
        straight=draw(points) * 3, three_pairs=draw(points) * 2,
        four_and_pair_as_three_pairs=draw(st.booleans()), two_triplets=draw(points) * 3)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=scoring_tables(), threshold=st.integers(1, 40).map(lambda k: 50 * k))
def test_properties_on_random_tables(table, threshold):
    dist = turn_dp.threshold_distribution(table, threshold)
    assert dist.p_bust + dist.p_bank.sum() == pytest.approx(1.0, abs=1e-12)
    assert (dist.p_bank[1:threshold // 50] == 0).all()  # never banks below T
    sol = turn_dp.solve_max_ev(table)
    assert sol.expected_score >= dist.expected_score - 1e-9
    # V(tp, n) non-decreasing in tp, and at least tp
    assert (np.diff(sol.value[1:, 1:], axis=0) >= -1e-9).all()
    tps = np.arange(1, sol.value.shape[0])[:, None] * 50.0
    assert (sol.value[1:, 1:] >= tps - 1e-9).all()
    fast = turn_dp.solve_fastest(table, 1000)
    assert (np.diff(fast.turns) <= 1e-12).all()
    race = turn_dp.evaluate_race(table, 1000, turn_dp.threshold_bank_table(threshold))
    assert fast.expected_turns <= race[0] + 1e-9


@settings(max_examples=25, deadline=None)
@given(threshold=st.integers(1, 80).map(lambda k: 50 * k), at=st.integers(1, 5000))
def test_threshold_tail_is_a_distribution(threshold, at):
    d = turn_dp.threshold_distribution(DEFAULT, threshold)
    assert 0.0 <= d.p_at_least(at) <= d.p_at_least(max(at - 50, 1)) <= 1.0 - d.p_bust + 1e-12
    assert d.expected_score <= turn_dp.solve_max_ev(DEFAULT).expected_score


def test_policy_table_optimal_win_two_seats():
    table = exact.policy_table(parse_policy("optimal-win"), DEFAULT, 500, 2)
    assert table.name == "optimal-win"
    assert table.value.shape[:2] == (10, 10) and table.last_value is not None
