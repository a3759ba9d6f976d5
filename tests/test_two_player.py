"""The two-player optimal-win solver against plain-Python references (tests/naive_two_player:
value iteration over every state, every legal set-aside of every roll), under both
endings."""

from __future__ import annotations

import dataclasses

import naive_two_player as naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba_threads import with_threads

from dicelab import cache, config
from dicelab.errors import UserError
from dicelab.farkle import solve
from dicelab.farkle.engine import game
from dicelab.farkle.engine.model import model
from dicelab.farkle.rules import FarkleRules, load_rules
from dicelab.farkle.solve import solve_optimal_win


def _small_table(name: str, one: int = 100, five: int = 0, three_ones: int = 0,
                 ending: str = "last-round") -> FarkleRules:
    """A tiny table (few options, high bust risk) so the naive solver stays fast."""
    return FarkleRules(name=name, singles=(0, one, 0, 0, 0, five, 0),
                       three_of_a_kind=(0, three_ones, 0, 0, 0, 0, 0), n_of_a_kind_mode="none",
                       n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
                       four_and_pair_as_three_pairs=False, two_triplets=0, ending=ending)


@pytest.fixture(scope="module")
def default_1000():
    return solve_optimal_win(load_rules("default"), 1000, use_cache=False)


# ---------------------------------------------------------------------------------
# against the naive value iteration


def assert_matches_naive(sol, ref, atol=1e-9):
    """Every score pair: value, P(win), P(tie) of the solver against the naive solution."""
    np.testing.assert_allclose(sol.values, ref.value, rtol=0, atol=atol)
    np.testing.assert_allclose(sol.win_probability, ref.win, rtol=0, atol=atol)
    np.testing.assert_allclose(sol.tie_probability, ref.tie, rtol=0, atol=atol)
    assert sol.first_outcome.win == pytest.approx(ref.win[0, 0], abs=atol)
    assert sol.first_outcome.tie == pytest.approx(ref.tie[0, 0], abs=atol)


def naive_cap(rules, eps: float) -> int:
    """The naive solver's cap (units past the target): the first lead whose catch-up chance
    is below ``eps``."""
    last = naive.LastRound(rules)
    cap = 1
    while last.turn(cap)[0] >= eps:
        cap += 1
    return cap


@pytest.mark.parametrize(("table", "target", "cap"), [
    # 4 s; fast twin of the last round against the plain value iteration: test_advise's
    # two-player values (last-round-400-90), through the same solve
    pytest.param(_small_table("ones"), 800, 90, marks=pytest.mark.slow),
    pytest.param(_small_table("ones-fives", five=50, three_ones=300), 300, 150,
                 marks=pytest.mark.slow),
])
def test_all_states_match_naive_value_iteration(table, target, cap):
    # naive cap: a bank total cap units above any opponent; its catch-up chance is < 1e-11
    last = naive.LastRound(table)
    assert last.turn(cap)[0] < 1e-11
    ref = naive.solve(table, target, cap)
    sol = solve_optimal_win(table, target, tol=1e-11, use_cache=False)
    assert sol.tolerance < 1e-10
    assert_matches_naive(sol, ref)


@pytest.mark.slow
@settings(max_examples=4, deadline=None)
@given(one=st.sampled_from([100, 200]), target=st.integers(1, 6).map(lambda k: 50 * k),
       ending=st.sampled_from(["last-round", "first-to-bank"]))
def test_random_small_games_match_naive(one, target, ending):
    table = _small_table(f"ones{one}", one=one, ending=ending)
    sol = solve_optimal_win(table, target, tol=1e-13, use_cache=False)
    ref = naive.solve(table, target, None if ending == "first-to-bank" else
                      naive_cap(table, 1e-13))
    assert_matches_naive(sol, ref)


# ---------------------------------------------------------------------------------
# first-to-bank: banking the target wins at once


@pytest.mark.parametrize(("rules", "target"), [("default", 200), ("default", 300),
                                                ("default", 500), ("ones-300", 400)])
def test_first_to_bank_matches_naive_value_iteration_at_every_state(rules, target):
    table = load_rules(rules, "first-to-bank")
    ref = naive.solve(table, target)
    sol = solve_optimal_win(table, target, use_cache=False)
    assert sol.tolerance < 1e-12
    assert_matches_naive(sol, ref)
    # the table stops at the target's row (every row past it wins alike, so the kernel's
    # clamping changes nothing); with a roll's rows more its states and choices are
    # checked unclamped
    assert sol.table_rows == target // 50 + 1
    rows = target // 50 + model(table).max_points
    assert_states_match_naive(sol, ref, table_rows=rows)
    assert_bank_decisions_match_naive(sol, ref)
    assert assert_choices_match_naive(sol, ref, table_rows=rows) > 100
    # with nothing to lose by reaching the target, more points never hurt here
    assert not fewer_points_wins(ref, target // 50)
    # no last round, so no ties, and no last-round table
    assert sol.first_outcome.tie == 0.0 and not sol.tie_probability.any()
    assert sol.to_dict()["ending"] == "first-to-bank"
    table_ = sol.policy_table()
    assert table_.last_value is None and table_.last_bank is None
    t = target // 50
    assert sol.policy_table_bytes == t * t * sol.table_rows * 7 * 5
    # a bank that reaches the target is always taken: it wins
    for a, b in ((0, 0), (t - 1, t - 1), (t - 3, 2)):
        bank = sol.bank_decisions(50 * a, 50 * b)
        assert bank[max(t - a, 1):, 1:].all()


@pytest.mark.parametrize(("ending", "target", "p_win", "p_tie", "head_start"), [
    ("last-round", 200, 0.5561216240055493, 0.015345934175312128, 150),
    ("first-to-bank", 500, 0.7005744221560578, 0.0, 450),
])
def test_values_the_naive_value_iteration_confirms(ending, target, p_win, p_tie, head_start):
    # the default table; the naive solver gives the same numbers to 1e-15 (the tests of
    # every state above, under the slow marker for the last round)
    sol = solve_optimal_win(load_rules("default", ending), target)
    assert sol.first_outcome.win == pytest.approx(p_win, abs=1e-12)
    assert sol.first_outcome.tie == pytest.approx(p_tie, abs=1e-12)
    assert sol.fair_head_start == head_start


def test_first_to_bank_is_a_different_game_and_a_different_cache_entry():
    last = solve_optimal_win(load_rules("default"), 500)
    ftb = solve_optimal_win(load_rules("default", "first-to-bank"), 500)
    assert not last.from_cache and not ftb.from_cache
    assert np.abs(last.values - ftb.values).max() > 0.01
    # moving first is worth more when the other player gets no last turn
    assert ftb.first_outcome.win > last.first_outcome.score
    assert solve_optimal_win(load_rules("default", "first-to-bank"), 500).from_cache
    key = solve.cache_key
    assert key(load_rules("default"), 500, 1e-10) != key(
        load_rules("default", "first-to-bank"), 500, 1e-10)
    # the last round's states are counted only where there is a last round
    assert ftb.states < last.states


# ---------------------------------------------------------------------------------
# every legal set-aside: the optimum is the optimum


def naive_choices(ref, rows_below: int):
    """Every decision point of the naive solution where a roll offers a choice, with turn
    points below ``rows_below``: yields (turn points i (units), dice rolled n, options
    [(points, dice left), ...] in the model's order, index of the best option (t, t),
    margin of the best over the second best (t, t), and the values (K, t, t))."""
    for n in range(1, 7):
        for _, opts in ref.rolls[n]:
            if len(opts) < 2:
                continue
            for i in range(rows_below):
                if i == 0 and n != 6:  # a turn starts with six dice
                    continue
                v = np.stack([ref.states[(i + s) * 7 + d, :, :, 0] for s, d in opts])
                best = np.argmax(v, axis=0)  # the first of equal values
                top = np.take_along_axis(v, best[None], axis=0)[0]
                second = np.where(np.arange(len(opts))[:, None, None] == best[None], -np.inf,
                                  v).max(axis=0)
                yield i, n, opts, best, top - second, v


def fewer_points_wins(ref, rows_below: int) -> list[tuple]:
    """States where the best set-aside (ahead of every other by more than 1e-6) has fewer
    points than another leaving the same dice: (a, b, i, n, options, best option)."""
    found = []
    for i, n, opts, best, margin, _ in naive_choices(ref, rows_below):
        for k, (s, d) in enumerate(opts):
            if any(d2 == d and s2 > s for s2, d2 in opts):
                for a, b in zip(*np.nonzero((best == k) & (margin > 1e-6)), strict=True):
                    found.append((int(a), int(b), i, n, opts, (s, d)))
    return found


def kernel_choices(table, i: int, opts) -> np.ndarray:
    """Index (t, t) of the option the game kernel takes from a PolicyTable at turn points
    i, at every score pair: the first of the highest values (options in the model's
    order)."""
    p_dim = table.value.shape[2]
    vals = np.stack([table.value[:, :, min(i + s, p_dim - 1), d] for s, d in opts])
    return np.argmax(vals, axis=0)


def assert_states_match_naive(sol, ref, rows: int | None = None, table_rows=None):
    """Every score pair, every decision point after a set-aside that the policy table holds
    unclamped (and below ``rows``): its value (float32) is the naive value of that state."""
    pt = sol.policy_table(table_rows)
    rows = min(pt.value.shape[2] - 1, ref.states.shape[0] // 7, rows or ref.states.shape[0])
    naive_v = ref.states[:rows * 7, :, :, 0].reshape(rows, 7, *ref.value.shape)
    naive_v = np.moveaxis(naive_v, (0, 1), (2, 3))  # (t, t, rows, 7), as the table
    np.testing.assert_allclose(pt.value[:, :, 1:rows, 1:], naive_v[:, :, 1:, 1:], rtol=0,
                               atol=1e-6)


def assert_choices_match_naive(sol, ref, rows: int | None = None, table_rows=None) -> int:
    """The policy table's set-aside is the naive optimum wherever that is clear (ahead by
    1e-6: the table holds float32) and the table is not clamped (and below ``rows``);
    returns the number of (state, roll) decisions checked."""
    pt = sol.policy_table(table_rows)
    max_s = max(s for n in ref.rolls for _, o in ref.rolls[n] for s, _ in o)
    checked = 0
    below = min(pt.value.shape[2], ref.states.shape[0] // 7 - 1, rows or ref.states.shape[0])
    for i, _, opts, best, margin, _ in naive_choices(ref, below - max_s - 1):
        clear = margin > 1e-6
        wrong = clear & (kernel_choices(pt, i, opts) != best)
        assert not wrong.any(), (i, opts, np.argwhere(wrong)[:3].tolist())
        checked += int(clear.sum())
    return checked


def assert_bank_decisions_match_naive(sol, ref):
    """Every score pair, every decision point the table holds: the solver banks where the
    naive value of banking beats rolling by more than 1e-9, rolls where it is worse."""
    t = sol.target // 50
    rows = min(sol.table_rows, ref.bank_margin.shape[0] // 7 - 1)  # (the last: padding)
    for a in range(t):
        for b in range(t):
            bank = sol.bank_decisions(50 * a, 50 * b)
            margin = ref.bank_margin[:rows * 7, a, b].reshape(rows, 7)
            assert (bank[1:rows, 1:][margin[1:, 1:] > 1e-9] == 1).all(), (a, b)
            assert (bank[1:rows, 1:][margin[1:, 1:] < -1e-9] == 0).all(), (a, b)


@pytest.mark.slow
@pytest.mark.parametrize(("rules", "target", "eps"), [("basic", 300, 2e-11),
                                                      ("default", 200, 1e-10)])
def test_the_optimum_is_the_optimum_over_every_legal_set_aside(rules, target, eps):
    """The naive value iteration tries every legal subset of every roll; the solver agrees
    at every score pair and decision, and plays the states where fewer points with the
    same dice left are strictly better (they exist: landing exactly on the target hands
    the other player an easy last turn)."""
    table = load_rules(rules)
    ref = naive.solve(table, target, naive_cap(table, eps))
    sol = solve_optimal_win(table, target, use_cache=False)
    assert_matches_naive(sol, ref)
    assert_bank_decisions_match_naive(sol, ref)
    assert_states_match_naive(sol, ref)
    assert assert_choices_match_naive(sol, ref) > 10_000
    max_s = max(s for n in ref.rolls for _, o in ref.rolls[n] for s, _ in o)
    found = fewer_points_wins(ref, sol.table_rows - max_s - 1)
    assert found, "no state where fewer points are better"
    if rules == "basic":
        # the game's first turn: 100 points with 4 dice left, then 1 1 5 2: the 1 and the
        # 5 (250, two dice left) beat the two 1s (300 = the target, two dice left)
        assert (0, 0, 2, 4, [(5, 1), (4, 2), (3, 2), (2, 3), (1, 3)], (3, 2)) in found


def test_the_game_kernel_plays_fewer_points_where_they_are_better():
    """The game from 0 : 0 to 300 under ``basic`` (found above by the naive value
    iteration): 5 (50, five dice left), 5 (100, four left), then 1 1 5 2. The policy sets
    aside the 1 and the 5 and banks 250; the two 1s would have banked the target, 300."""
    from dicelab.farkle import kernels as K
    from dicelab.farkle.policies import seat_arrays
    from dicelab.farkle.rules import set_asides
    from dicelab.registry import parse_policy

    table = load_rules("basic")
    pt = solve_optimal_win(table, 300).policy_table()
    rolls = ([5, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6], [1, 1, 5, 2], [5, 5, 5, 2, 3, 4],
             [2, 3, 4, 6, 2, 3])
    faces = [f for roll in rolls for f in roll]
    tally = K.Tally(np.zeros((2, K.N_STATS), np.int64), np.zeros((2, 500), np.int64),
                    np.zeros(K.N_CHUNK_COUNTERS, np.int64))
    totals = np.zeros((1, 2), np.int64)
    used = K.run_scripted(np.array(faces, np.int64), 1, K.Game(2, 0, 300, 0),
                          seat_arrays([pt, parse_policy("threshold-300")], table, 300),
                          set_asides(table).arrays(), tally, totals)
    # seat 1 banks 500 and triggers the last round; seat 0's last turn busts
    assert totals.tolist() == [[250, 500]] and used == len(faces)
    assert tally.stats[0, K.ST_TURNS] == 2 and tally.stats[0, K.ST_ROLLS] == 4


def test_last_round_matches_brute_force(default_1000):
    last = naive.LastRound(load_rules("default"))
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
    first = sol.first_outcome
    assert first.win + first.tie + first.loss == pytest.approx(1.0, abs=1e-15)
    assert sol.win_value(0, 0) == pytest.approx(first.win + 0.5 * first.tie, abs=1e-12)
    assert first.win > first.loss  # moving first is an advantage
    head = np.abs(sol.values[0] - 0.5)
    assert sol.fair_head_start == 50 * int(np.argmin(head))
    assert sol.fair_head_start_value == pytest.approx(sol.win_value(0, sol.fair_head_start))


def test_shifting_both_totals_and_the_target_changes_nothing(default_1000):
    # W_target(a, b) = W_(target + k)(a + k, b + k): only the distances to the target matter
    longer = solve_optimal_win(load_rules("default"), 1250, use_cache=False)
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
    sol = solve_optimal_win(load_rules("default"), 3000)
    assert sol.win_value(2000, 2900) < sol.win_value(1950, 2900) - 1e-3


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 200))
def test_last_round_value_never_increases_with_the_deficit(default_1000, d):
    sol = default_1000
    assert 0.0 <= sol.last_round_value(50 * (d + 1)) <= sol.last_round_value(50 * d) <= 1.0


def test_raising_the_cap_does_not_move_the_values(default_1000):
    tight = solve_optimal_win(load_rules("default"), 1000, tol=1e-15, use_cache=False)
    assert default_1000.tolerance < 1e-10
    assert np.abs(tight.values - default_1000.values).max() < 1e-10
    assert tight.table_rows >= default_1000.table_rows


def test_reported_tolerance_bounds_a_coarse_cap():
    # with tol = 5e-3 the tolerance cap binds where the opponent's chance is small
    table = load_rules("basic")
    coarse = solve_optimal_win(table, 2000, tol=5e-3, use_cache=False)
    fine = solve_optimal_win(table, 2000, tol=1e-13, use_cache=False)
    assert 1e-6 < coarse.tolerance <= 5e-3 * (1 + 1e-9)
    assert np.abs(coarse.values - fine.values).max() <= coarse.tolerance
    assert fine.tolerance < 1e-12


def test_fallback_fixed_point_iteration_agrees_with_policy_iteration(default_1000,
                                                                   monkeypatch):
    # no Newton step at all: every pair is solved by the fallback's plain iteration
    monkeypatch.setattr(config, "OPTIMAL_WIN_NEWTON_STEPS", 0)
    plain = solve_optimal_win(load_rules("default"), 1000, use_cache=False)
    # many more turn DPs, and the bound now counts the last step of every pair
    assert plain.turn_dps > 5 * default_1000.turn_dps
    assert default_1000.tolerance < plain.tolerance < 1e-12
    gap = np.abs(plain.values - default_1000.values).max()
    assert gap <= plain.tolerance + default_1000.tolerance
    assert np.abs(plain.win_probability - default_1000.win_probability).max() < 1e-10
    assert np.abs(plain.tie_probability - default_1000.tie_probability).max() < 1e-10


def test_same_result_with_one_or_two_threads():
    table = load_rules("basic")
    def run():
        return solve_optimal_win(table, 1500, use_cache=False)

    one = with_threads(1, run)
    two = with_threads(2, run)
    assert np.array_equal(one.values, two.values)
    assert np.array_equal(one.win_probability, two.win_probability)
    assert np.array_equal(one.tie_probability, two.tie_probability)


def test_a_sums_units_are_each_swept_once_in_blocks_of_even_work():
    for n in range(1, 40):
        order = [game.unit_order(q, n) for q in range(n)]
        assert sorted(order) == list(range(n))
    # work growing along the sum, as a turn grows with the mover's deficit: a parallel
    # loop's two blocks carry the same share (in order the second had three quarters)
    work = np.arange(1, 101)
    order = np.array([game.unit_order(q, 100) for q in range(100)])
    assert work[order[:50]].sum() == work[order[50:]].sum()


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
    rolls = naive.roll_outcomes(load_rules("default"))
    s = sol.last_round_values

    def bank_value(m):
        return 1.0 - sol.values[b, m] if m < t else 1.0 - s[m - b]

    played = naive.table_turn_value(table, a, b, bank_value, 1.0 - sol.values[b, a], rolls)
    assert played == pytest.approx(sol.values[a, b], abs=1e-7)


@pytest.mark.parametrize("d", [1, 5, 20, 40, 89])
def test_last_round_table_reproduces_the_policy(default_1000, d):
    table = default_1000.policy_table()
    rolls = naive.roll_outcomes(load_rules("default"))
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
    table = load_rules("ones-300")
    first = solve_optimal_win(table, 600)
    assert not first.from_cache
    again = solve_optimal_win(table, 600)
    assert again.from_cache and again.solve_s == first.solve_s
    assert first.elapsed_s >= first.solve_s and again.elapsed_s < first.solve_s
    assert np.array_equal(again.values, first.values)
    built = first.policy_table()  # cached on disk next to the solution
    key = solve.cache_key(table, 600, 1e-10)
    assert cache.cache_path(key + "-policy-table").is_file()
    loaded = again.policy_table()
    assert np.array_equal(built.value, loaded.value) and np.array_equal(built.bank, loaded.bank)
    assert np.array_equal(built.last_bank, loaded.last_bank)
    path = cache.cache_path(key)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    rebuilt = solve_optimal_win(table, 600)
    assert not rebuilt.from_cache and np.array_equal(rebuilt.values, first.values)
    monkeypatch.setattr(solve, "FORMAT_VERSION", solve.FORMAT_VERSION + 1)
    assert not solve_optimal_win(table, 600).from_cache  # a stale format is rebuilt


def test_cache_key_follows_table_content_not_just_its_name():
    a = _small_table("mine", one=100)
    b = _small_table("mine", one=200)
    assert solve.cache_key(a, 500, 1e-10) != solve.cache_key(b, 500, 1e-10)


def test_progress_and_summary():
    seen = []
    sol = solve_optimal_win(_small_table("ones"), 500, use_cache=False, progress=seen.append)
    assert seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
    d = sol.to_dict()
    for key in ("target", "rules", "ending", "tolerance", "states", "solve_s", "elapsed_s",
                "from_cache",
                "memory_bytes", "p_win", "p_tie", "p_loss", "fair_head_start",
                "fair_head_start_value"):
        assert key in d
    assert d["rules"] == "ones" and d["target"] == 500 and d["states"] > 0


@pytest.mark.parametrize("target", [0, -50, 125, 10.0, "10000", True])
def test_bad_target_is_a_user_error(target):
    with pytest.raises(UserError, match="multiple of 50"):
        solve_optimal_win(load_rules("default"), target)


@pytest.mark.parametrize(("my", "opp"), [(1000, 0), (-50, 0), (0, 75), (0, 1050)])
def test_bad_totals_are_user_errors(default_1000, my, opp):
    with pytest.raises(UserError):
        default_1000.win_value(my, opp)
    with pytest.raises(UserError):
        default_1000.bank_decisions(my, opp)


# ---------------------------------------------------------------------------------
# house rule: a minimum to bank


MIN_BANK_GAMES = {
    # first-to-bank: the floor lies above the target's reach from some totals
    "default-ftb": (dataclasses.replace(load_rules("default", "first-to-bank"), name="mb",
                                        min_bank=300), 400),
    # last-round: leads below the floor play to reach it, leads above it as before
    "small-last-round": (dataclasses.replace(_small_table("ones-fives", five=50,
                                                          three_ones=300),
                                             min_bank=150), 400),
}


@pytest.mark.parametrize("case", list(MIN_BANK_GAMES))
@pytest.mark.slow
def test_minimum_to_bank_matches_naive_value_iteration_at_every_state(case):
    rules, target = MIN_BANK_GAMES[case]
    cap = None if rules.ending == "first-to-bank" else naive_cap(rules, 1e-12)
    ref = naive.solve(rules, target, cap)
    sol = solve_optimal_win(rules, target, tol=1e-12, use_cache=False)
    assert sol.tolerance < 1e-12
    assert_matches_naive(sol, ref)
    assert_states_match_naive(sol, ref)
    assert_bank_decisions_match_naive(sol, ref)  # never a bank below the minimum
    # first to bank: the table stops at the target's row; a roll's rows more, unclamped
    rows = sol.table_rows + model(rules).max_points
    assert assert_choices_match_naive(sol, ref, table_rows=rows) > 1000
    f = rules.min_bank // 50
    assert not sol.policy_table().bank[:, :, :f].any()
    # the minimum to bank changes the game
    plain = solve_optimal_win(dataclasses.replace(rules, min_bank=0), target, use_cache=False)
    assert np.abs(plain.values - sol.values).max() > 1e-2


def test_minimum_to_bank_policy_table_plays_the_policy():
    rules, target = MIN_BANK_GAMES["small-last-round"]
    sol = solve_optimal_win(rules, target, tol=1e-12, use_cache=False)
    table = sol.policy_table()
    rolls = naive.roll_outcomes(rules)
    t, f, s = target // 50, rules.min_bank // 50, sol.last_round_values
    last = naive.LastRound(rules)
    for d in (1, 2, 3, 4, 10):  # below, at and above the floor of 3 units
        assert s[d] == pytest.approx(last.turn(d)[0], abs=1e-12)
        played = naive.table_last_turn_value(table, d, rolls, floor=f)
        assert played == pytest.approx(s[d], abs=1e-7)
    assert s[1] == s[2] > s[3]  # below the floor a bank that is allowed wins

    for a, b in ((0, 0), (7, 5), (2, 7)):
        def bank_value(m, b=b):
            return 1.0 - sol.values[b, m] if m < t else 1.0 - s[m - b]

        played = naive.table_turn_value(table, a, b, bank_value, 1.0 - sol.values[b, a],
                                        rolls, floor=f)
        assert played == pytest.approx(sol.values[a, b], abs=1e-7)


# ---------------------------------------------------------------------------------
# house rule: hot dice must roll on (six dice never bank; past the cap they still roll)

MUST_ROLL_GAMES = {
    # the default table: hot dice 8.4% of six-dice rolls, some rolls only hot dice
    "default-ftb": pytest.param(
        (dataclasses.replace(load_rules("default", "first-to-bank"), name="mr",
                             hot_dice="must-roll"), 300, 360), marks=pytest.mark.slow),
    "small-last-round": (dataclasses.replace(_small_table("ones-fives", five=50,
                                                          three_ones=300),
                                             hot_dice="must-roll"), 400, 72),
    "small-ftb-min-bank": (dataclasses.replace(_small_table("ones-fives", five=50,
                                                            three_ones=300,
                                                            ending="first-to-bank"),
                                               hot_dice="must-roll", min_bank=150), 400, 72),
}


@pytest.mark.parametrize("case", list(MUST_ROLL_GAMES.values()), ids=list(MUST_ROLL_GAMES))
@pytest.mark.slow
def test_must_roll_matches_naive_value_iteration_at_every_state(case):
    rules, target, hot_rows = case
    cap = None if rules.ending == "first-to-bank" else naive_cap(rules, 1e-12)
    # the reference's rows go hot_rows past its cap (h^(rows / max points) below 1e-13)
    ref = naive.solve(rules, target, cap, hot_rows=hot_rows)
    sol = solve_optimal_win(rules, target, tol=1e-12, use_cache=False)
    assert sol.tolerance < 1e-12
    assert_matches_naive(sol, ref)
    assert_bank_decisions_match_naive(sol, ref)  # six dice never bank
    keep = ref.states.shape[0] // 7 - hot_rows  # below the reference's own truncation
    rows = sol.table_rows + model(rules).max_points  # unclamped past a first-to-bank target
    assert assert_choices_match_naive(sol, ref, keep, table_rows=rows) > 1000
    assert_states_match_naive(sol, ref, keep)
    assert not sol.policy_table().bank[..., 6].any()
    plain = solve_optimal_win(dataclasses.replace(rules, hot_dice="may-bank"), target,
                              use_cache=False)
    assert np.abs(plain.values - sol.values).max() > 1e-4


@pytest.mark.parametrize(("rules", "target", "policy"), [
    ("default", 1000, "optimal-win"), ("default", 1500, "optimal-win:vs=ai"),
    ("must-roll", 1000, "optimal-win"), ("first-to-bank", 1000, "optimal-win"),
    *(pytest.param(*case, marks=pytest.mark.slow) for case in (  # penalty solves: slower
        ("facebook", 500, "optimal-win"), ("facebook-last-round", 400, "optimal-win"),
        ("facebook", 500, "optimal-win:vs=threshold-300")))])
def test_the_policy_table_size_known_before_the_solve_is_a_lower_bound(rules, target, policy):
    """What refuses an optimal-win table over the memory limit before its solve never
    exceeds the table's size."""
    from dicelab.farkle.exact import solve_policy

    table = {"must-roll": dataclasses.replace(load_rules("default"), name="mr",
                                              hot_dice="must-roll"),
             "first-to-bank": load_rules("default", "first-to-bank"),
             "facebook-last-round": load_rules("facebook", "last-round")}.get(rules)
    table = load_rules(rules) if table is None else table
    bound = solve.least_policy_table_bytes(table, target)
    size = solve_policy(policy, table, target).policy_table_bytes
    assert 0 < bound <= size
