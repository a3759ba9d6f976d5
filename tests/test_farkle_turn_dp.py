"""Exact Farkle turn analysis: kernels vs the independent recursions of naive_farkle_dp."""

from __future__ import annotations

import naive_farkle_dp as naive
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicelab import cache, dice
from dicelab.errors import UserError
from dicelab.farkle import exact, solitaire
from dicelab.farkle.rules import PRESETS, FarkleRules, load_rules, set_asides
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]
BASIC = PRESETS["basic"]


# --- against the brute-force recursions --------------------------------------------


@pytest.mark.parametrize("rules", ["default", "basic"])
def test_bust_risks_match_enumeration_and_seed(rules):
    arr = set_asides(PRESETS[rules])
    for n in range(1, 7):
        assert arr.bust[n] == pytest.approx(naive.bust_probability(rules, n), abs=1e-15)
    if rules == "default":
        # the seed's bust risks, rounded as printed there (exact counts / 6**n)
        seed = [66.67, 44.44, 27.78, 15.74, 7.72, 2.31]
        assert [round(100 * arr.bust[n], 2) for n in range(1, 7)] == seed


@pytest.mark.parametrize("rules,cap", [("default", 300), ("default", 1000), ("basic", 1000),
                                       ("basic", 2500)])
def test_max_ev_with_low_cap_matches_naive(rules, cap):
    # forced to bank from the cap on, more turn points can be worse (a roll from just
    # below the cap is worth more than the cap), so a set-aside of fewer points with the
    # same dice left can pay: the solver sees every one (for caps 1000, not 300 or 2500)
    got = solitaire.solve_max_ev(PRESETS[rules], cap=cap).expected_score
    every = naive.max_ev(rules, cap, every=True)
    assert got == pytest.approx(every, rel=1e-12)
    best_only = naive.max_ev(rules, cap)
    assert (every - best_only > 1e-3) == (cap == 1000)


@pytest.mark.parametrize("rules", [
    "default", pytest.param("basic", marks=pytest.mark.slow)])  # 0.8 s; fast twin: default
def test_max_ev_is_unaffected_by_the_dominated_set_asides(rules):
    """The solver chooses among every distinct legal set-aside (points, dice left); a
    set-aside with fewer points and the same dice left as another is never better for
    max-ev (its value only grows with the turn points). So the plain-Python max-ev with
    only the most points for each number of dice kept, the one with every distinct
    set-aside and the solver agree at every state below the proven cap, decisions too."""
    sa = set_asides(PRESETS[rules])
    dominated = sum(len(ops) - len({d for _, d in ops})
                    for ops in (sa.options(r) for r in range(dice.N_MULTISETS)))
    assert dominated > 100  # the encoding does offer them
    sol = solitaire.solve_max_ev(PRESETS[rules])
    best = naive.max_ev_values(rules, sol.cap)
    every = naive.max_ev_values(rules, sol.cap, every=True)
    assert best == every  # the same floats: the extra options are never chosen
    assert sol.expected_score == pytest.approx(every[(0, 6)], rel=1e-12)
    for (tp, n), v in every.items():
        if tp > 0:
            assert sol.value[0, tp // 50, n] == pytest.approx(v, rel=1e-12, abs=1e-9)
            assert sol.bank[0, tp // 50, n] == (v == tp), (tp, n)  # bank iff rolling is no better


@pytest.mark.parametrize("rules,threshold", [("default", 50), ("default", 300),
                                             ("default", 650), ("basic", 400)])
def test_threshold_distribution_matches_naive(rules, threshold):
    want = naive.threshold_outcomes(rules, threshold)
    got = solitaire.threshold_distribution(PRESETS[rules], threshold)
    assert got.p_bust == pytest.approx(want.pop(0), abs=1e-13)
    nz = {int(i) * 50: float(got.p_bank[i]) for i in np.nonzero(got.p_bank)[0]}
    assert nz.keys() == want.keys()
    for x, p in want.items():
        assert nz[x] == pytest.approx(p, abs=1e-13)
    assert got.expected_score == pytest.approx(sum(x * p for x, p in want.items()), rel=1e-12)


@pytest.mark.parametrize("rules,target", [
    ("default", 300),
    pytest.param("default", 600, marks=pytest.mark.slow),  # 1.3 s; fast twin: default-300
    ("basic", 400)])
def test_fastest_matches_naive(rules, target):
    sol = solitaire.solve_fastest(PRESETS[rules], target)
    want = naive.fastest_turns(rules, target)
    np.testing.assert_allclose(sol.turns[0], want, rtol=1e-11)
    # fewer points with the same dice left never help the race either
    assert naive.fastest_turns(rules, target, every=True) == want


@pytest.mark.parametrize(("rules", "seed"), [("default", 1), ("default", 2), ("basic", 3)])
def test_a_decision_table_is_played_as_the_plain_python_choice_says(rules, seed):
    """evaluate_turn_policy with a value table: every distinct set-aside is a candidate,
    the highest value wins, ties go to more points, then more dice (random small-integer
    values: many ties)."""
    rng = np.random.default_rng(seed)
    bank = (rng.random((10, 7)) < 0.3).astype(np.uint8)
    bank[-1] = 1
    value = rng.integers(0, 3, size=(10, 7)).astype(np.float64)
    got = solitaire.evaluate_turn_policy(PRESETS[rules], bank, value)
    want = naive.table_outcomes(rules, bank.tolist(), value.tolist())
    assert got.p_bust == pytest.approx(want.pop(0), abs=1e-13)
    nz = {int(i) * 50: float(got.p_bank[i]) for i in np.nonzero(got.p_bank)[0]}
    assert nz.keys() == want.keys()
    for x, p in want.items():
        assert nz[x] == pytest.approx(p, abs=1e-13)


# --- the cap -------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["default", "basic", "ones-300"])
def test_max_ev_value_does_not_move_when_cap_is_raised(rules):
    sol = solitaire.solve_max_ev(PRESETS[rules])
    big = solitaire.solve_max_ev(PRESETS[rules], cap=2 * sol.cap)
    assert big.expected_score == sol.expected_score
    rows = sol.cap // 50
    np.testing.assert_array_equal(big.value[:, :rows], sol.value[:, :rows])
    np.testing.assert_array_equal(big.bank[:, :rows], sol.bank[:, :rows])
    # with the doubled cap, rolling is computed above the proven cap: never better
    assert (big.roll_value[:, rows:2 * rows, 1:] <= big.value[:, rows:2 * rows, 1:]).all()
    assert big.bank[:, rows:2 * rows, 1:].all()


def test_cap_bound_is_an_upper_bound_on_gain():
    sol = solitaire.solve_max_ev(DEFAULT)
    w = solitaire.gain_bound(DEFAULT)
    tps = np.arange(sol.value.shape[1])[:, None] * 50.0
    # V(tp, n) - tp <= W(n): the true gain never exceeds the bound used in the proof
    assert (sol.value[0, 1:, 1:] - tps[1:] <= w[None, 1:] + 1e-9).all()


# --- known values, structure ----------------------------------------------------------


def test_max_ev_default_structure():
    sol = solitaire.solve_max_ev(DEFAULT)
    th = sol.bank_thresholds()
    assert sol.is_threshold_policy()
    # more dice left -> more risk worth taking, except 1 die (its hot dice are worth a lot)
    assert th[2] <= th[3] <= th[4] <= th[5] <= th[6]
    assert th[1] >= th[2]
    assert sol.to_dict()["expected_turn_score"] == sol.expected_score


def test_threshold_sweep_best_and_gap():
    sw = solitaire.threshold_sweep(DEFAULT)
    assert sw.thresholds[0] == 50 and sw.thresholds[-1] == 2000
    assert sw.best_score == pytest.approx(
        solitaire.threshold_distribution(DEFAULT, sw.best_threshold).expected_score, rel=1e-15)
    assert (sw.gap_to_max_ev() > 0).all()
    frame = sw.to_frame()
    assert len(frame) == 40 and frame["expected_turn_score"].idxmax() == int(
        np.argmax(sw.expected_score))


def test_fastest_decreases_in_total_and_zero_at_target():
    sol = solitaire.solve_fastest(DEFAULT, 5000)
    turns = sol.turns[0]
    assert turns[-1] == 0.0
    assert (np.diff(turns) <= 1e-12).all()
    assert (sol.newton_steps < 50).all()
    assert 1.0 < turns[-2] < 1.1  # 50 points short: any non-bust first roll ends it


def test_fastest_beats_every_threshold_race():
    sol = solitaire.solve_fastest(DEFAULT, 2000)
    for t in (200, 300, 500, 1000):
        race = solitaire.race(DEFAULT, 2000, solitaire.threshold_bank_table(t))
        assert sol.expected_turns_to_target <= race[0, 0] + 1e-12


# --- the tables the simulation kernel plays -------------------------------------------


@pytest.mark.parametrize("rules", ["default", "ones-300"])
def test_max_ev_table_plays_exactly_max_ev(rules):
    sol = solitaire.solve_max_ev(PRESETS[rules])
    table = exact.policy_table(parse_policy("max-ev"), PRESETS[rules], 10000, 3)
    assert table.value.dtype == np.float32 and table.value.shape[:2] == (1, 1)
    assert table.bank[0, 0, -1, 1:].all()
    played = solitaire.evaluate_turn_policy(PRESETS[rules], table.bank[0, 0], table.value[0, 0])
    assert played.expected_score == pytest.approx(sol.expected_score, rel=1e-12)


def test_fastest_table_plays_exactly_fastest():
    target = 3000
    sol = solitaire.fastest_solution(DEFAULT, target)
    table = exact.policy_table(parse_policy("fastest"), DEFAULT, target, 4)
    assert table.value.shape[:2] == (target // 50, 1)
    assert table.bank[:, 0, -1, 1:].all()
    played = solitaire.race(DEFAULT, target, table.bank[:, 0], table.value[:, 0])
    np.testing.assert_allclose(played, sol.turns, rtol=1e-12)
    # value is minus the expected turns still needed
    assert table.value[0, 0, 0, 6] == pytest.approx(-(sol.turns[0, 0] - 1), rel=1e-6)


def test_fastest_cache_roundtrip_and_corrupt_rebuild():
    a = solitaire.fastest_solution(BASIC, 1000)
    b = solitaire.fastest_solution(BASIC, 1000)
    assert not a.from_cache and b.from_cache
    np.testing.assert_array_equal(a.turns, b.turns)
    np.testing.assert_array_equal(a.bank, b.bank)
    files = list(cache.cache_dir().glob("*.npz"))
    assert len(files) == 1
    files[0].write_bytes(files[0].read_bytes()[:200])
    c = solitaire.fastest_solution(BASIC, 1000)
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
        solitaire.threshold_distribution(DEFAULT, 0)


# --- properties (hypothesis) ----------------------------------------------------------

points = st.integers(0, 20).map(lambda k: 50 * k)


@st.composite
def scoring_tables(draw):
    return FarkleRules(
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
    dist = solitaire.threshold_distribution(table, threshold)
    assert dist.p_bust + dist.p_bank.sum() == pytest.approx(1.0, abs=1e-12)
    assert (dist.p_bank[1:threshold // 50] == 0).all()  # never banks below T
    sol = solitaire.solve_max_ev(table)
    assert sol.expected_score >= dist.expected_score - 1e-9
    # V(tp, n) non-decreasing in tp, and at least tp
    assert (np.diff(sol.value[0, 1:, 1:], axis=0) >= -1e-9).all()
    tps = np.arange(1, sol.value.shape[1])[:, None] * 50.0
    assert (sol.value[0, 1:, 1:] >= tps - 1e-9).all()
    fast = solitaire.solve_fastest(table, 1000)
    assert (np.diff(fast.turns[0]) <= 1e-12).all()
    race = solitaire.race(table, 1000, solitaire.threshold_bank_table(threshold))
    assert fast.expected_turns_to_target <= race[0, 0] + 1e-9


@settings(max_examples=25, deadline=None)
@given(threshold=st.integers(1, 80).map(lambda k: 50 * k), at=st.integers(1, 5000))
def test_threshold_tail_is_a_distribution(threshold, at):
    d = solitaire.threshold_distribution(DEFAULT, threshold)
    assert 0.0 <= d.p_at_least(at) <= d.p_at_least(max(at - 50, 1)) <= 1.0 - d.p_bust + 1e-12
    assert d.expected_score <= solitaire.solve_max_ev(DEFAULT).expected_score


def test_policy_table_optimal_win_two_seats():
    table = exact.policy_table(parse_policy("optimal-win"), DEFAULT, 500, 2)
    assert table.name == "optimal-win"
    assert table.value.shape[:2] == (10, 10) and table.last_value is not None


# --- what `dicelab solve farkle` and `dicelab policy farkle` compute ---------------------


def test_solve_policy_gives_each_family_its_solution():
    import naive_farkle as nf

    from dicelab.farkle.solve import OptimalWinSolution

    th = exact.solve_policy("threshold-300", "basic", 2000)
    assert isinstance(th, exact.ThresholdSolution) and th.target == 2000
    want = nf.threshold_turn_distribution(BASIC, 300)
    assert th.expected_score == pytest.approx(
        sum(x * p for x, p in want.items()), rel=1e-12)
    assert th.expected_turns_to_target == pytest.approx(
        nf.expected_turns_to_target(want, 2000), rel=1e-12)
    d = th.to_dict()
    assert set(d["p_at_least"]) == {str(x) for x in solitaire.TAIL_POINTS}
    assert d["p_at_least"]["300"] == pytest.approx(1 - want[0], abs=1e-12)  # banks >= 300
    assert d["from_cache"] is False and d["target"] == 2000

    mev = exact.solve_policy("max-ev")
    assert isinstance(mev, solitaire.MaxEvSolution) and mev.from_cache is False
    assert mev.elapsed_s == mev.solve_s > 0
    turn = mev.distributions[0]
    assert turn.expected_score == pytest.approx(mev.expected_score, rel=1e-12)
    assert turn.p_bust + turn.p_bank.sum() == pytest.approx(1, abs=1e-12)
    d = mev.to_dict()
    assert d["expected_turn_score"] == mev.expected_score and d["from_cache"] is False
    assert set(d["bank_thresholds"]) == {"1", "2", "3", "4", "5", "6"}

    first = exact.solve_policy("fastest", "default", 1500)
    again = exact.solve_policy("fastest", "default", 1500)
    assert isinstance(first, solitaire.FastestSolution)
    assert not first.from_cache and again.from_cache and again.solve_s == first.solve_s
    np.testing.assert_array_equal(first.turns, again.turns)
    assert again.to_dict()["from_cache"] is True

    ow = exact.solve_policy("optimal-win", "default", 300, ending="first-to-bank")
    assert isinstance(ow, OptimalWinSolution)
    assert ow.farkle_rules.ending == "first-to-bank" and ow.to_dict()["ending"] == "first-to-bank"
    assert ow.first_outcome.tie == 0.0  # no last round: no ties

    with pytest.raises(UserError, match="simulate it"):
        exact.solve_policy("ai")
    with pytest.raises(UserError, match="penta policy"):
        exact.solve_policy("optimal")


@settings(max_examples=60, deadline=None)
@given(deficit=st.integers(-3000, 8000), floor=st.integers(-500, 2000),
       base=st.integers(1, 10).map(lambda k: 50 * k), step=st.integers(0, 4).map(lambda k: 50 * k),
       per=st.sampled_from([250, 1000, 1500]), steps=st.integers(0, 6),
       two=st.integers(0, 3).map(lambda k: 50 * k), one=st.integers(0, 4).map(lambda k: 50 * k))
def test_ai_thresholds_are_the_rule_of_rules_md(deficit, floor, base, step, per, steps, two, one):
    from dicelab.farkle import kernels as K

    deficit = max(deficit, 0)  # the kernel passes the deficit, 0 when not behind
    params = np.array([base, step, per, steps, two, one, 1], dtype=np.int64)
    out = np.zeros(7, dtype=np.int64)
    K.ai_thresholds(params, deficit, floor, out)
    t = base + step * min(steps, deficit // per)
    assert out[1:].tolist() == [max(t - one, floor), max(t - two, floor)] + [max(t, floor)] * 4


def test_bank_table_of_every_family():
    from dicelab.farkle.policies import bank_table
    from dicelab.farkle.solve import solve_optimal_win

    bank, title = bank_table(parse_policy("threshold-300"), DEFAULT)
    assert bank[6, 1:].all() and not bank[5, 1:].any() and "threshold-300" in title
    # ai behind by 2500: 300 + 2 * 100 = 500, minus 50 with two dice left, 100 with one
    bank, title = bank_table(parse_policy("ai"), DEFAULT, None, 500, 3000)
    first = [int(np.nonzero(bank[:, n])[0][0]) * 50 for n in range(1, 7)]
    assert first == [400, 450, 500, 500, 500, 500] and "chase not shown" in title
    assert bank[-1, 1:].all()
    mev = solitaire.solve_max_ev(DEFAULT)
    np.testing.assert_array_equal(bank_table(parse_policy("max-ev"), DEFAULT)[0],
                                  mev.bank[0, :mev.exact_rows])  # its solved rows
    fast = solitaire.fastest_solution(DEFAULT, 1000)
    got, title = bank_table(parse_policy("fastest"), DEFAULT, 1000, 500)
    np.testing.assert_array_equal(got, fast.bank[0, 10])
    assert title == "fastest to 1000 at own total 500 (rules default)"
    ftb = load_rules("default", "first-to-bank")
    got, title = bank_table(parse_policy("optimal-win"), ftb, 500, 300, 450)
    np.testing.assert_array_equal(got, solve_optimal_win(ftb, 500).bank_decisions(300, 450))
    for me, opp in ((1000, 0), (0, 75), (-50, 0)):
        with pytest.raises(UserError, match=r"--me|--opp"):
            bank_table(parse_policy("fastest"), DEFAULT, 1000, me, opp)


@pytest.mark.parametrize("rules", ["default", "facebook", "zilch"])
@pytest.mark.parametrize("shape", ["rising", "random", "falls"])
def test_the_dominant_options_give_the_choices_of_every_option(rules, shape):
    """The plain turn DP reads only each class's dominant options (no other option with
    as many points and dice left) where the rows a roll reaches grow with the points and
    the dice, else every option; the DP with tracking reads every option. Both give the
    same values (to rounding), banks and set-asides on rising bank values (the dominant
    options read) and on ones that fall (every option read there); the DP without its
    choices gives the same values and banks."""
    from dicelab.farkle.engine import turn
    from dicelab.farkle.engine.model import model

    m = model(PRESETS[rules])
    for c in range(m.class_prob.size):  # the dominant options, by their definition
        js = range(m.option_start[c], m.option_start[c + 1])
        dom = set(m.dom[m.dom_start[c]:m.dom_start[c + 1]])
        for j in js:
            beaten = any(k != j and m.points[k] >= m.points[j] and m.dice[k] >= m.dice[j]
                         for k in js)
            assert (j in dom) == (not beaten)
    top = 70
    rows = top + m.max_points + 10  # (the first roll reaches max_points rows: zilch 160)
    rng = np.random.default_rng(7)
    bankv = {"rising": np.sort(rng.random(rows)), "random": rng.random(rows),
             "falls": np.sort(rng.random(rows))[::-1].copy()}[shape]
    out = []
    for kernel in (turn.turn_back, turn.turn_back_tracked, turn.turn_value):
        v, bp = np.zeros(rows * 7), np.zeros(rows * 7)
        bk = np.zeros(rows * 7, dtype=np.uint8)
        choice = np.zeros(rows * m.class_prob.size, dtype=np.int32)
        edge = bankv * m.six_bank
        args = (m, m.bank_floor, bankv, edge, m.bust[6], 0.3, top, rows, v)
        if kernel is turn.turn_value:  # the values and banks alone
            value, _ = kernel(*args, bk)
        else:
            value, _ = kernel(*args, bp, bk, choice,
                              *([np.array([0.0, 1.0])] if kernel is turn.turn_back_tracked
                                else []))
        assert value == v[6]
        out.append((v, bk, choice))
    # the same sums over the same options; two compiled functions may round them apart
    # by an ulp (the host CPU's fused multiply-adds), so values agree to 1e-13
    (v0, bk0, c0), (v1, bk1, c1), (v2, bk2, c2) = out
    for v, bk in ((v1, bk1), (v2, bk2)):
        np.testing.assert_allclose(v0, v, rtol=1e-13, atol=0)
        assert np.array_equal(bk0, bk)
    assert np.array_equal(c0, c1) and not c2.any()  # turn_value writes no choice


def test_a_table_shorter_than_one_roll_starts_at_its_edge():
    """Under zilch one roll can add 160 rows: over fewer rows the first roll leaves the
    table too, and is worth its edge (it read past the table's end, a value that changed
    from run to run)."""
    from dicelab.farkle.engine import turn
    from dicelab.farkle.engine.model import model

    m = model(PRESETS["zilch"])
    rows = m.max_points - 10
    bankv = np.linspace(0.0, 1.0, rows)
    for kernel in (turn.turn_back, turn.turn_back_tracked):
        v, bp = np.zeros(rows * 7), np.zeros(rows * 7)
        bk = np.zeros(rows * 7, dtype=np.uint8)
        choice = np.zeros(rows * m.class_prob.size, dtype=np.int32)
        edge = bankv * m.six_bank
        args = (m, m.bank_floor, bankv, edge, m.bust[6], 0.3, 70, rows, v, bp, bk, choice)
        value, _ = kernel(*args, *([np.array([0.0, 1.0])] if kernel is turn.turn_back_tracked
                                   else []))
        assert value == v[6] == edge[0]
