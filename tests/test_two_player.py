"""The two-player optimal-win solver against plain-Python references (tests/naive_two_player)."""

from __future__ import annotations

import os

import naive_two_player as naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba_threads import with_threads

from dicelab import cache
from dicelab.errors import UserError
from dicelab.farkle import two_player
from dicelab.farkle.scoring import ScoringTable, load_scoring
from dicelab.farkle.two_player import solve_optimal_win


def _small_table(name: str, one: int = 100, five: int = 0, three_ones: int = 0) -> ScoringTable:
    """A tiny table (few options, high bust risk) so the naive solver stays fast."""
    return ScoringTable(name=name, singles=(0, one, 0, 0, 0, five, 0),
                        three_of_a_kind=(0, three_ones, 0, 0, 0, 0, 0), n_of_a_kind_mode="none",
                        n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
                        four_and_pair_as_three_pairs=False, two_triplets=0)


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    old = os.environ.get("DICELAB_CACHE_DIR")
    os.environ["DICELAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        del os.environ["DICELAB_CACHE_DIR"]
    else:
        os.environ["DICELAB_CACHE_DIR"] = old


@pytest.fixture(scope="module")
def default_1000():
    return solve_optimal_win(load_scoring("default"), 1000, use_cache=False)


# ---------------------------------------------------------------------------------
# against the naive value iteration


@pytest.mark.parametrize(("table", "target", "cap"), [
    (_small_table("ones"), 800, 90),
    (_small_table("ones-fives", five=50, three_ones=300), 300, 150),
])
def test_all_states_match_naive_value_iteration(table, target, cap):
    # naive cap: a bank total cap units above any opponent; its catch-up chance is < 1e-11
    last = naive.LastRound(table)
    assert last.turn(cap)[0] < 1e-11
    w, win, tie = naive.solve(table, target, cap)
    sol = solve_optimal_win(table, target, tol=1e-11, use_cache=False)
    assert sol.tolerance < 1e-10
    np.testing.assert_allclose(sol.values, w, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sol.win_probability, win, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sol.tie_probability, tie, rtol=0, atol=1e-9)
    assert sol.p_win == pytest.approx(win[0, 0], abs=1e-9)
    assert sol.p_tie == pytest.approx(tie[0, 0], abs=1e-9)


@settings(max_examples=4, deadline=None)
@given(one=st.sampled_from([50, 100, 200]), target=st.integers(1, 10).map(lambda k: 50 * k))
def test_random_small_games_match_naive(one, target):
    table = _small_table(f"ones{one}", one=one)
    sol = solve_optimal_win(table, target, tol=1e-13, use_cache=False)
    cap = 1
    last = naive.LastRound(table)
    while last.turn(cap)[0] >= 1e-13:
        cap += 1
    w, _, _ = naive.solve(table, target, cap)
    np.testing.assert_allclose(sol.values, w, rtol=0, atol=1e-9)


def test_last_round_matches_brute_force(default_1000):
    last = naive.LastRound(load_scoring("default"))
    for d in range(1, 80):
        assert default_1000.last_round_value(50 * d) == pytest.approx(last.turn(d)[0], abs=1e-12)
    # beyond the table of values the catch-up chance is reported as 0 (below tolerance)
    assert default_1000.last_round_value(50 * default_1000.last_round_values.size) == 0.0


# ---------------------------------------------------------------------------------
# properties of the solution


def test_outcome_probabilities_are_consistent(default_1000):
    sol = default_1000
    w, t = sol.win_probability, sol.tie_probability
    assert np.all((w >= 0) & (t >= 0) & (w + t <= 1 + 1e-12))
    # value = P(win) + 0.5 P(tie): the policy evaluation agrees with the optimisation
    np.testing.assert_allclose(sol.values, w + 0.5 * t, rtol=0, atol=1e-12)
    assert sol.p_win + sol.p_tie + sol.p_loss == pytest.approx(1.0, abs=1e-15)
    assert sol.win_value(0, 0) == pytest.approx(sol.p_win + 0.5 * sol.p_tie, abs=1e-12)
    assert sol.p_win > sol.p_loss  # moving first is an advantage
    head = np.abs(sol.values[0] - 0.5)
    assert sol.fair_head_start == 50 * int(np.argmin(head))
    assert sol.fair_head_start_value == pytest.approx(sol.win_value(0, sol.fair_head_start))


def test_shifting_both_totals_and_the_target_changes_nothing(default_1000):
    # W_target(a, b) = W_(target + k)(a + k, b + k): only the distances to the target matter
    longer = solve_optimal_win(load_scoring("default"), 1250, use_cache=False)
    np.testing.assert_allclose(longer.values[5:, 5:], default_1000.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(longer.tie_probability[5:, 5:], default_1000.tie_probability,
                               rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(a=st.integers(0, 19), b=st.integers(0, 18))
def test_more_opponent_points_never_help(default_1000, a, b):
    sol = default_1000
    assert sol.win_value(50 * a, 50 * (b + 1)) <= sol.win_value(50 * a, 50 * b) + 1e-12


def test_own_points_are_not_monotone():
    # a documented finding, not a bug: from 2000 a 1000-point turn lands exactly on the
    # target 3000 and hands a trailing opponent an easy last turn; from 1950 the same turn
    # banks at 2950 and keeps the game going
    sol = solve_optimal_win(load_scoring("default"), 3000)
    assert sol.win_value(2000, 2900) < sol.win_value(1950, 2900) - 1e-3


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 200))
def test_last_round_value_never_increases_with_the_deficit(default_1000, d):
    sol = default_1000
    assert 0.0 <= sol.last_round_value(50 * (d + 1)) <= sol.last_round_value(50 * d) <= 1.0


def test_raising_the_cap_does_not_move_the_values(default_1000):
    tight = solve_optimal_win(load_scoring("default"), 1000, tol=1e-15, use_cache=False)
    assert default_1000.tolerance < 1e-10
    assert np.abs(tight.values - default_1000.values).max() < 1e-10
    assert tight.table_rows >= default_1000.table_rows


def test_reported_tolerance_bounds_a_coarse_cap():
    # with tol = 5e-3 the tolerance cap binds where the opponent's chance is small
    table = load_scoring("basic")
    coarse = solve_optimal_win(table, 2000, tol=5e-3, use_cache=False)
    fine = solve_optimal_win(table, 2000, tol=1e-13, use_cache=False)
    assert 1e-6 < coarse.tolerance <= 5e-3 * (1 + 1e-9)
    assert np.abs(coarse.values - fine.values).max() <= coarse.tolerance
    assert fine.tolerance < 1e-12


def test_fallback_fixed_point_iteration_agrees_with_policy_iteration(default_1000,
                                                                   monkeypatch):
    # no Newton step at all: every pair is solved by the fallback's plain iteration
    monkeypatch.setattr(two_player, "NEWTON_STEPS", 0)
    plain = solve_optimal_win(load_scoring("default"), 1000, use_cache=False)
    # many more turn DPs, and the bound now counts the last step of every pair
    assert plain.turn_dps > 5 * default_1000.turn_dps
    assert default_1000.tolerance < plain.tolerance < 1e-12
    gap = np.abs(plain.values - default_1000.values).max()
    assert gap <= plain.tolerance + default_1000.tolerance
    assert np.abs(plain.win_probability - default_1000.win_probability).max() < 1e-10
    assert np.abs(plain.tie_probability - default_1000.tie_probability).max() < 1e-10


def test_same_result_with_one_or_two_threads():
    table = load_scoring("basic")
    def run():
        return solve_optimal_win(table, 1500, use_cache=False)

    one = with_threads(1, run)
    two = with_threads(2, run)
    assert np.array_equal(one.values, two.values)
    assert np.array_equal(one.win_probability, two.win_probability)
    assert np.array_equal(one.tie_probability, two.tie_probability)


# ---------------------------------------------------------------------------------
# the policy table plays the solved policy


@pytest.mark.parametrize(("a", "b"), [(0, 0), (0, 19), (19, 0), (19, 19), (10, 12), (17, 3)])
def test_policy_table_reproduces_the_policy(default_1000, a, b):
    sol = default_1000
    table = sol.policy_table()
    t = 20
    assert table.value.shape == (t, t, sol.table_rows, 7) and table.value.dtype == np.float32
    assert table.bank[:, :, -1, 1:].all()  # from P - 1 on it always banks
    np.testing.assert_array_equal(table.bank[a, b], sol.bank_decisions(50 * a, 50 * b))
    rolls = naive.roll_outcomes(load_scoring("default"))
    s = sol.last_round_values

    def bank_value(m):
        return 1.0 - sol.values[b, m] if m < t else 1.0 - s[m - b]

    played = naive.table_turn_value(table, a, b, bank_value, 1.0 - sol.values[b, a], rolls)
    assert played == pytest.approx(sol.values[a, b], abs=1e-7)


@pytest.mark.parametrize("d", [1, 5, 20, 40, 89])
def test_last_round_table_reproduces_the_policy(default_1000, d):
    table = default_1000.policy_table()
    rolls = naive.roll_outcomes(load_scoring("default"))
    played = naive.table_last_turn_value(table, d, rolls)
    assert played == pytest.approx(default_1000.last_round_values[d], abs=1e-7)


@pytest.mark.parametrize(("a", "b"), [(18, 0), (19, 19), (5, 15)])
def test_policy_banks_where_rolling_cannot_pay(default_1000, a, b):
    # past the target, rolling gains at most S[lead] - bust_min * P(opponent's turn wins)
    sol = default_1000
    bank = sol.bank_decisions(50 * a, 50 * b)
    bust_min = 0.0231481481  # six dice
    rows = [p for p in range(1, sol.table_rows) if a + p >= 20
            and sol.last_round_values[a + p - b] <= bust_min * sol.values[b, a] * (1 - 1e-9)]
    assert rows, "the table reaches the provably-banking region"
    assert all(bank[p, 1:].all() for p in rows)
    # while a 50-point lead at the target is no reason to stop with six dice
    assert not sol.bank_decisions(950, 950)[1, 6]


# ---------------------------------------------------------------------------------
# cache, input checks


def test_cache_round_trip_and_corrupt_rebuild(monkeypatch):
    table = load_scoring("ones-300")
    first = solve_optimal_win(table, 600)
    assert not first.from_cache
    again = solve_optimal_win(table, 600)
    assert again.from_cache and again.solve_seconds == first.solve_seconds
    assert np.array_equal(again.values, first.values)
    built = first.policy_table()  # cached on disk next to the solution
    assert cache.cache_path(two_player._cache_key(table, 600, 1e-10) + "-policy-table").is_file()
    loaded = again.policy_table()
    assert np.array_equal(built.value, loaded.value) and np.array_equal(built.bank, loaded.bank)
    assert np.array_equal(built.last_bank, loaded.last_bank)
    path = cache.cache_path(two_player._cache_key(table, 600, 1e-10))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    rebuilt = solve_optimal_win(table, 600)
    assert not rebuilt.from_cache and np.array_equal(rebuilt.values, first.values)
    monkeypatch.setattr(two_player, "FORMAT_VERSION", two_player.FORMAT_VERSION + 1)
    assert not solve_optimal_win(table, 600).from_cache  # a stale format is rebuilt


def test_cache_key_follows_table_content_not_just_its_name():
    a = _small_table("mine", one=100)
    b = _small_table("mine", one=200)
    assert two_player._cache_key(a, 500, 1e-10) != two_player._cache_key(b, 500, 1e-10)


def test_progress_and_summary():
    seen = []
    sol = solve_optimal_win(_small_table("ones"), 500, use_cache=False, progress=seen.append)
    assert seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
    d = sol.to_dict()
    for key in ("target", "rules", "tolerance", "states", "solve_seconds", "from_cache",
                "memory_bytes", "p_win", "p_tie", "p_loss", "fair_head_start",
                "fair_head_start_value"):
        assert key in d
    assert d["rules"] == "ones" and d["target"] == 500 and d["states"] > 0


@pytest.mark.parametrize("target", [0, -50, 125, 10.0, "10000", True])
def test_bad_target_is_a_user_error(target):
    with pytest.raises(UserError, match="multiple of 50"):
        solve_optimal_win(load_scoring("default"), target)


@pytest.mark.parametrize(("my", "opp"), [(1000, 0), (-50, 0), (0, 75), (0, 1050)])
def test_bad_totals_are_user_errors(default_1000, my, opp):
    with pytest.raises(UserError):
        default_1000.win_value(my, opp)
    with pytest.raises(UserError):
        default_1000.bank_decisions(my, opp)
