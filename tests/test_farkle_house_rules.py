"""Farkle house rules (minimum to bank, hot dice must roll, three farkles in a row, linear
n of a kind, the ``facebook`` preset): the rule data, the game kernel against the
plain-Python games on the same dice, the turn solvers against the plain-Python
recursions, Monte Carlo against exact values, and the solvers that refuse what they do
not model."""

from __future__ import annotations

import dataclasses
import json
import random

import naive_farkle as nf
import naive_farkle_dp as nd
import numpy as np
import pytest
from cli_helpers import run_cli
from test_farkle_sim import naive_policy, naive_stats, random_table, run_script

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import solitaire
from dicelab.farkle.engine.model import CLIMB_ERR
from dicelab.farkle.exact import exact_pair
from dicelab.farkle.rules import (
    NO_BANK,
    PRESETS,
    load_rules,
    parse_rules_toml,
    setaside_points,
    solver_floor,
)
from dicelab.farkle.simulate import simulate_farkle
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]
FACEBOOK = PRESETS["facebook"]


def house(**kw):
    return dataclasses.replace(DEFAULT, name="house", **kw)


MIN_BANK = house(min_bank=300)
MUST_ROLL = house(hot_dice="must-roll")
PENALTY = house(farkle_penalty=500)
ALL = house(min_bank=200, hot_dice="must-roll", farkle_penalty=300)


# ----------------------------------------------------------------------- rules as data


def test_facebook_preset_scores_as_published():
    fb = FACEBOOK
    pts = lambda *d: setaside_points(fb, d)  # noqa: E731
    assert pts(1) == 100 and pts(5) == 50
    assert pts(2, 2, 2) == 200 and pts(1, 1, 1) == 1000
    # four, five, six of a kind: 2, 3, 4 times the triple
    assert (pts(2, 2, 2, 2), pts(2, 2, 2, 2, 2), pts(2, 2, 2, 2, 2, 2)) == (400, 600, 800)
    assert pts(1, 1, 1, 1, 1, 1) == 4000
    assert pts(1, 2, 3, 4, 5, 6) == 1500
    assert pts(2, 2, 3, 3, 4, 4) == 750
    assert pts(2, 2, 2, 2, 3, 3) is None  # four of a kind plus a pair is not three pairs
    assert pts(2, 2, 2, 3, 3, 3) == 500  # two triplets: two triples
    assert (fb.min_bank, fb.hot_dice, fb.farkle_penalty, fb.ending) == \
        (300, "may-bank", 500, "first-to-bank")


def test_linear_mode_adds_the_triple_per_extra_die_against_the_reference():
    r = house(n_of_a_kind_mode="linear")
    for face in range(1, 7):
        for k in range(3, 7):
            assert r.points_of_kind(face, k) == nf.kind_points(r, face, k) \
                == r.three_of_a_kind[face] * (k - 2)


def test_bank_floor_is_the_one_banking_rule():
    assert DEFAULT.bank_floor == (50,) * 7 and DEFAULT.standard_banking
    assert MIN_BANK.bank_floor == (300,) * 7
    assert MUST_ROLL.bank_floor[6] == NO_BANK and MUST_ROLL.bank_floor[1:6] == (50,) * 5
    assert not MUST_ROLL.can_bank(5000, 6) and MUST_ROLL.can_bank(50, 5)
    assert not MIN_BANK.can_bank(250, 3) and MIN_BANK.can_bank(300, 6)


def test_standard_rules_keep_their_records_and_cache_keys():
    # digests as before the house rules existed: cached tables stay valid
    assert {k: PRESETS[k].digest() for k in ("default", "basic", "ones-300")} == {
        "default": "9fa1bf046eba76d4", "basic": "1b44c1384bce4b71",
        "ones-300": "15bfb65cbd8dd0bf"}
    assert "min_bank" not in DEFAULT.to_dict() and FACEBOOK.to_dict()["min_bank"] == 300
    assert len({r.digest() for r in (DEFAULT, MIN_BANK, MUST_ROLL, PENALTY, ALL)}) == 5


def test_toml_reads_every_house_rule():
    r = parse_rules_toml('min-bank = 350\nhot-dice = "must-roll"\nfarkle-penalty = 1000\n'
                         'n-of-a-kind-mode = "linear"\n', "h.toml")
    assert (r.min_bank, r.hot_dice, r.farkle_penalty, r.n_of_a_kind_mode) == \
        (350, "must-roll", 1000, "linear")
    assert load_rules("facebook") is FACEBOOK


@pytest.mark.parametrize(("line", "field"), [
    ("min-bank = 310", "min-bank"), ("min-bank = -50", "min-bank"),
    ('min-bank = "300"', "min-bank"), ("farkle-penalty = -500", "farkle-penalty"),
    ("farkle-penalty = 2.5", "farkle-penalty"), ('hot-dice = "sometimes"', "hot-dice"),
    ("hot-dice = true", "hot-dice"), ('ending = "sudden"', "ending"),
    ('n-of-a-kind-mode = "triple"', "n-of-a-kind-mode")])
def test_bad_house_rule_is_one_line_naming_the_field(tmp_path, capsys, line, field):
    path = tmp_path / "bad.toml"
    path.write_text(line + "\n")
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, ["simulate", "--strategy", "threshold-300", "-n", "10",
                                    "--rules", str(path), "--out", str(out)])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and field in lines[0]
    assert not out.exists()


# ----------------------------------------------------------------------- the game kernel

HOUSE_CASES = {
    "min-bank": (MIN_BANK, ["threshold-100", "ai", "table"], 2000, 30),
    "must-roll": (MUST_ROLL, ["threshold-300", "table", "ai:base=200"], 2000, 30),
    "penalty": (PENALTY, ["threshold-1000", "table", "ai"], 1500, 30),
    "all": (ALL, ["threshold-50", "ai", "table", "threshold-600"], 1500, 20),
    "facebook": (FACEBOOK, ["threshold-250", "ai", "table"], 2000, 30),
    "zilch": (PRESETS["zilch"], ["threshold-300", "table", "ai"], 2000, 30),  # six dice score
}


@pytest.mark.parametrize("case", list(HOUSE_CASES))
def test_kernel_matches_naive_game_under_house_rules(case):
    """Every statistic, final total (negative ones included) and die used, against the
    plain-Python games on the same faces."""
    rules, names, target, n_games = HOUSE_CASES[case]
    rng = np.random.default_rng(len(case))
    names = [random_table(rng, (3, 2, 12), 4) if n == "table" else n for n in names]
    pyrng = random.Random(len(case) * 104729)
    faces = [pyrng.randint(1, 6) for _ in range(400_000)]
    for first in (-1, 1):
        rec = run_script(names, faces, target, n_games=n_games, first_seat=first,
                         table=rules, ending=rules.ending)
        assert rec["counters"][K.C_SCRIPT_ERRORS] == 0
        stats, totals, used = naive_stats([naive_policy(p) for p in names], faces, target,
                                          n_games, first, rules.ending, rules)
        assert rec["totals"].tolist() == totals.tolist()
        assert rec["used"] == used
        np.testing.assert_array_equal(rec["stats"], stats)


def test_penalty_takes_points_at_the_third_lost_turn_in_a_row():
    bust = [2, 3, 4, 6, 2, 3]
    ones = [1, 1, 1, 2, 3, 4]  # 1000 points, banked by threshold-300
    three = bust * 3 + ones * 2  # -500, then 500, then 1500: the target
    broken = bust * 2 + ones + bust * 2 + ones  # a bank in between: no penalty
    for faces, with_penalty in ((three, 1500), (broken, 2000)):
        for rules, want in ((PENALTY, with_penalty), (DEFAULT, 2000)):
            rec = run_script(["threshold-300"], faces, 1500, table=rules)
            assert rec["used"] == len(faces) and rec["totals"].tolist() == [[want]]
    rec = run_script(["threshold-300"], bust * 6 + ones * 3, 1000, table=PENALTY)
    assert rec["totals"].tolist() == [[1000]]  # -1000, 0, 1000: below zero and back
    assert rec["hist"][0, 0] == 0 and rec["hist"][0, 1000 // 50] == 1


def test_min_bank_makes_low_thresholds_play_the_minimum():
    a = simulate_farkle([parse_policy("threshold-100")], games=3000, seed=5, target=2000,
                        rules=MIN_BANK)
    b = simulate_farkle([parse_policy("threshold-300")], games=3000, seed=5, target=2000,
                        rules=MIN_BANK)
    assert a.kernel == b.kernel == "general"
    np.testing.assert_array_equal(a.stats, b.stats)


# ----------------------------------------------------------------------- solvers


def test_max_ev_with_a_minimum_to_bank_against_the_reference():
    rules = dataclasses.replace(PRESETS["basic"], min_bank=400)
    cap = 1000
    sol = solitaire.solve_max_ev(rules, cap=cap)
    ref = nd.max_ev_values("basic", cap, every=True, min_bank=400)
    for (tp, n), v in ref.items():
        assert sol.value[0, tp // 50, n] == pytest.approx(v, rel=1e-12), (tp, n)
    assert (sol.bank[0, :8] == 0).all()  # below 400 the turn never banks
    assert sol.expected_score == pytest.approx(ref[(0, 6)], rel=1e-12)


def test_fastest_with_a_minimum_to_bank_against_the_reference():
    rules = dataclasses.replace(PRESETS["basic"], min_bank=300)
    sol = solitaire.solve_fastest(rules, 500)
    ref = nd.fastest_turns("basic", 500, every=True, min_bank=300)
    np.testing.assert_allclose(sol.turns[0], ref, rtol=1e-9)
    assert sol.expected_turns_to_target > solitaire.solve_fastest(
        dataclasses.replace(rules, min_bank=0), 500).expected_turns_to_target


def test_fastest_refuses_a_bank_too_rare_to_count_in_floating_point():
    """A minimum to bank of 50,000 leaves P(bank) near 1e-15 (about 6e18 turns once read
    from 1 - P(lost)): refused, where a minimum of 3,000 (P near 3%) is solved."""
    with pytest.raises(UserError, match=r"banks with probability .* too rare"):
        solitaire.solve_fastest(dataclasses.replace(PRESETS["basic"], min_bank=50_000), 500)
    sol = solitaire.solve_fastest(dataclasses.replace(PRESETS["basic"], min_bank=3000), 500)
    assert 10 < sol.expected_turns_to_target < 1e3


def test_threshold_distribution_with_a_minimum_to_bank_against_the_reference():
    got = solitaire.threshold_distribution(MIN_BANK, 150)
    ref = nf.threshold_turn_distribution(MIN_BANK, 150)
    assert got.p_bust == pytest.approx(ref[0], abs=1e-12)
    for x, p in ref.items():
        if x:
            assert got.p_bank[x // 50] == pytest.approx(p, abs=1e-12)
    assert got.p_bank[:6].sum() == 0.0


@pytest.mark.slow
def test_simulation_agrees_with_the_exact_race_under_a_minimum_to_bank():
    exact = solitaire.race(MIN_BANK, 3000, solitaire.threshold_bank_table(200))[0, 0]
    s = simulate_farkle([parse_policy("threshold-200")], games=60_000, seed=21, target=3000,
                        rules=MIN_BANK).seat(0)
    assert abs(s.mean_turns.mean - exact) < 4 * s.mean_turns.se


BASIC_MUST_ROLL = dataclasses.replace(PRESETS["basic"], name="basic-must-roll",
                                      hot_dice="must-roll")


def test_max_ev_under_must_roll_against_the_reference():
    # six dice never bank, past the cap too: the reference recurses up to 17,000 points
    cap = 1000
    sol = solitaire.solve_max_ev(BASIC_MUST_ROLL, cap=cap)
    ref = nd.max_ev_values("basic", cap, every=True, must_roll=True, far=cap + 16_000)
    for (tp, n), v in ref.items():
        assert sol.value[0, tp // 50, n] == pytest.approx(v, abs=1e-9), (tp, n)
    assert sol.value_error < 1e-9
    assert not sol.bank[0, :, 6].any() and sol.bank[0, cap // 50:, 1:6].all()
    assert sol.distributions[0].expected_score == pytest.approx(sol.expected_score, abs=1e-9)
    # the proven cap: a hair below the standard rule, whose 6-dice bank is far out
    full = solitaire.solve_max_ev(MUST_ROLL)
    plain = solitaire.solve_max_ev(DEFAULT)
    turn = full.distributions[0]
    assert full.value_error < 1e-9 and turn.p_unresolved < CLIMB_ERR
    assert turn.expected_score == pytest.approx(full.expected_score, abs=1e-9)
    assert 0 < plain.expected_score - full.expected_score < 1e-9
    assert full.bank_thresholds()[6] is None


@pytest.mark.slow
def test_fastest_under_must_roll_against_the_reference():
    sol = solitaire.solve_fastest(BASIC_MUST_ROLL, 500)
    ref = nd.fastest_turns("basic", 500, every=True, must_roll=True, far=5000)
    np.testing.assert_allclose(sol.turns[0], ref, rtol=1e-11)
    assert not sol.bank[..., 6].any()
    # replayed by the independent forward evaluation, the same race
    race = solitaire.race(BASIC_MUST_ROLL, 500, sol.bank[0], -sol.value[0])
    np.testing.assert_allclose(race, sol.turns, rtol=1e-11)
    assert solitaire.solve_fastest(MUST_ROLL, 1000).expected_turns_to_target > \
        solitaire.solve_fastest(DEFAULT, 1000).expected_turns_to_target


@pytest.mark.parametrize("threshold", [100, 300, 1000])
def test_threshold_distribution_under_must_roll_against_the_reference(threshold):
    got = solitaire.threshold_distribution(BASIC_MUST_ROLL, threshold)
    ref = nd.threshold_outcomes("basic", threshold, must_roll=True, far=threshold + 16_000)
    assert got.p_bust == pytest.approx(ref[0], abs=1e-14)
    for x, p in ref.items():  # past the rows followed: still rolling, at most CLIMB_ERR
        if x:
            mine = got.p_bank[x // 50] if x // 50 < got.p_bank.size else 0.0
            assert mine == pytest.approx(p, abs=1e-14), x
    d = solitaire.threshold_distribution(MUST_ROLL, threshold)
    assert d.p_unresolved < CLIMB_ERR
    assert d.p_bust + d.p_bank.sum() + d.p_unresolved == pytest.approx(1.0, abs=1e-13)


@pytest.mark.slow
def test_simulation_agrees_with_the_exact_race_under_must_roll():
    bank = solitaire.threshold_bank_table(300)
    exact = solitaire.race(MUST_ROLL, 3000, bank)[0, 0]
    s = simulate_farkle([parse_policy("threshold-300")], games=60_000, seed=23, target=3000,
                        rules=MUST_ROLL).seat(0)
    assert abs(s.mean_turns.mean - exact) < 4 * s.mean_turns.se


@pytest.mark.parametrize("rules", [PENALTY, FACEBOOK])
def test_turn_solvers_play_the_penalty_between_turns(rules):
    # the one-player solvers read the penalty from the model: a policy per run of lost
    # turns, and totals below zero
    sol = solitaire.solve_max_ev(rules)
    assert len(sol.distributions) == 3 and sol.farkle_rules.farkle_penalty == 500
    fast = solitaire.solve_fastest(rules, 1000)
    assert fast.turns.shape[0] == 3 and fast.floor_points == rules.penalty_floor() * 50
    free = dataclasses.replace(rules, farkle_penalty=0)
    assert sol.rate < solitaire.solve_max_ev(free).rate
    assert fast.expected_turns_to_target > \
        solitaire.solve_fastest(free, 1000).expected_turns_to_target
    # one turn's result does not depend on the penalty, which acts between turns
    d, e = (solitaire.threshold_distribution(r, 300) for r in (rules, free))
    assert d.p_bust == e.p_bust and (d.p_bank == e.p_bank).all()


def test_a_threshold_race_under_the_penalty_says_where_its_totals_stop(capsys):
    """``solve farkle -p threshold-T`` under a penalty names the race's floor (text and
    JSON), as ``fastest`` and ``optimal-win`` do: the first floor doubled once, where the
    answer stops moving; without a penalty there is none."""
    argv = ["solve", "farkle", "-p", "threshold-300", "--target", "1000"]
    code, out, _ = run_cli(capsys, [*argv, "--rules", "facebook"])
    assert code == 0 and "the race's totals down to -4,000" in out
    code, out, _ = run_cli(capsys, [*argv, "--rules", "facebook", "--json"])
    assert code == 0 and json.loads(out)["floor_points"] == 2 * FACEBOOK.penalty_floor() * 50
    code, out, _ = run_cli(capsys, [*argv, "--json"])
    assert code == 0 and "floor_points" not in json.loads(out)


@pytest.mark.parametrize("rules", [PENALTY, ALL])
def test_the_exact_head_to_head_plays_every_house_rule(rules, monkeypatch):
    # totals down to two penalties below zero (the smallest floor) and a short race: the
    # same evaluation sweeps on a small grid
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    p = exact_pair("threshold-300", "ai", rules=rules, target=300, use_cache=False)
    assert 0.0 < p.score < 1.0 and 0.0 < p.tolerance < 1e-9


def test_cli_solves_fastest_under_must_roll_and_the_penalty(tmp_path, capsys):
    both = tmp_path / "both.toml"  # fastest models must-roll with the penalty
    both.write_text('hot-dice = "must-roll"\nfarkle-penalty = 500\n')
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "fastest", "--rules",
                                      str(both), "--target", "1000", "--json"])
    assert code == 0, err
    rules = load_rules(str(both))
    assert json.loads(out)["expected_turns_to_target"] == pytest.approx(
        solitaire.solve_fastest(rules, 1000).expected_turns_to_target, rel=1e-12)


def test_fastest_brackets_the_game_without_a_floor():
    """Where most turns are lost the floor matters. Its policy's race (a forward pass at
    every total and run of lost turns) plays exactly ``fastest`` at the floor it was
    solved with; with the floor deepened it bounds the unbounded game from above, as
    ``fastest`` at the floor does from below: a deeper floor's answer lies between."""
    rules = dataclasses.replace(PRESETS["basic"], name="b-1000", min_bank=1000,
                                farkle_penalty=250)
    shallow = solitaire.solve_fastest(rules, 1000, floor_points=500)
    with solver_floor(500):  # the race at the fastest's own floor
        played = solitaire.race(rules, 1000, shallow.bank, -shallow.value)
    np.testing.assert_allclose(played, shallow.turns, rtol=1e-10)
    deep = solitaire.solve_fastest(rules, 1000, floor_points=2000)
    low, high = shallow.expected_turns_to_target, shallow.policy_turns_no_floor
    assert low + 0.05 < deep.expected_turns_to_target <= deep.policy_turns_no_floor <= high
    assert high == solitaire.race_turns(rules, 1000, shallow.bank, -shallow.value,
                                        floor=10)[0]
    assert shallow.no_floor_points > 500


def test_fastest_says_where_the_floor_changes_its_answer(tmp_path, capsys, monkeypatch):
    argv = ["solve", "farkle", "-p", "fastest", "--target", "1000", "--rules"]
    code, out, err = run_cli(capsys, [*argv, "facebook"])
    assert code == 0 and "with no floor to totals: the same to 1e-9" in out, err
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # two penalties below zero
    lost = tmp_path / "lost.toml"
    lost.write_text('base = "basic"\nmin-bank = 1000\nfarkle-penalty = 250\n')
    code, out, err = run_cli(capsys, [*argv, str(lost), "--json"])
    d = json.loads(out)
    assert code == 0 and d["policy_turns_no_floor"] > d["expected_turns_to_target"] + 0.1
    code, out, err = run_cli(capsys, [*argv, str(lost)])
    assert code == 0 and f"from {d['expected_turns_to_target']:.6f} to " \
        f"{d['policy_turns_no_floor']:.6f}" in " ".join(out.split()), out


@pytest.mark.slow
def test_fastest_under_the_penalty_against_the_reference():
    """Every state (lost turns in a row, totals down to the floor) against a plain value
    iteration over every legal set-aside."""
    rules = dataclasses.replace(PRESETS["basic"], name="b-pen", min_bank=300,
                                farkle_penalty=100)
    sol = solitaire.solve_fastest(rules, 500, floor_points=200)
    ref = nd.fastest_turns_penalty("basic", 500, 100, 200, min_bank=300)
    assert sol.floor_points == 200 and sol.turns.shape == (3, 15)
    for (s, m), v in ref.items():
        assert sol.expected_turns_from(m, s) == pytest.approx(v, rel=1e-12), (s, m)
    assert sol.expected_turns_to_target > solitaire.solve_fastest(
        dataclasses.replace(rules, farkle_penalty=0), 500).expected_turns_to_target


@pytest.mark.slow  # 6.5 s; fast twins: fastest under each rule alone against the reference
def test_fastest_under_must_roll_and_the_penalty_against_the_reference():
    """Six dice never bank, past the target too (a bust there is a lost turn, toward the
    penalty): every state against the plain value iteration, six dice followed up to
    1,500 turn points."""
    rules = dataclasses.replace(PRESETS["basic"], name="b-pen-mr", hot_dice="must-roll",
                                farkle_penalty=100)
    sol = solitaire.solve_fastest(rules, 300, floor_points=200)
    ref = nd.fastest_turns_penalty("basic", 300, 100, 200, must_roll=True, far=1500)
    assert sol.turns.shape == (3, 11)
    for (s, m), v in ref.items():
        assert sol.expected_turns_from(m, s) == pytest.approx(v, rel=1e-12), (s, m)
    assert not sol.bank[..., 6].any()
    may_bank = solitaire.solve_fastest(dataclasses.replace(rules, hot_dice="may-bank"),
                                             300, floor_points=200)
    assert sol.expected_turns_to_target > may_bank.expected_turns_to_target


@pytest.mark.slow
def test_fastest_under_must_roll_and_the_penalty_simulated():
    rules = dataclasses.replace(FACEBOOK, name="facebook-must-roll", hot_dice="must-roll")
    sol = solitaire.solve_fastest(rules, 3000)
    assert not sol.bank[..., 6].any()
    s = simulate_farkle([parse_policy("fastest")], games=40_000, seed=37, target=3000,
                        rules=rules).seat(0)
    assert abs(s.mean_turns.mean - sol.expected_turns_to_target) < 4 * s.mean_turns.se


@pytest.mark.slow
def test_fastest_under_facebook_simulated_and_shown(capsys):
    sol = solitaire.solve_fastest(FACEBOOK, 3000)
    th = sol.bank_thresholds(0, 2)
    assert all(th[n] <= sol.bank_thresholds(0, 0)[n] for n in range(1, 7))
    assert sol.expected_turns_from(0, 2) > sol.expected_turns_from(0, 0)
    with pytest.raises(UserError, match="total"):
        sol.expected_turns_from(-2050)
    s = simulate_farkle([parse_policy("fastest")], games=40_000, seed=29, target=3000,
                        rules=FACEBOOK).seat(0)
    assert abs(s.mean_turns.mean - sol.expected_turns_to_target) < 4 * s.mean_turns.se
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "fastest", "--rules",
                                      "facebook", "--target", "3000"])
    assert code == 0, err
    assert f"{sol.expected_turns_to_target:.6f}" in out and "farkle penalty 500" in out


def test_advice_under_a_minimum_to_bank_offers_only_legal_banks():
    from dicelab.farkle.advise import advise

    a = advise([1, 5, 2, 3, 4, 6], turn_points=0, rules=MIN_BANK)
    assert a.options and all(o.action == "roll" for o in a.options if o.points < 300)
    sol = solitaire.solve_max_ev(MIN_BANK)
    best = max((o for o in a.options if o.action == "roll" and o.keep == (1,)),
               key=lambda o: o.value)
    assert best.value == pytest.approx(sol.roll_value[0, 2, 5], rel=1e-12)
    # must-roll: a straight is hot dice, which roll on (no bank)
    hot = advise([1, 5, 2, 3, 4, 6], rules=MUST_ROLL)
    assert [(o.action, o.dice) for o in hot.options if len(o.keep) == 6] == [("roll", 6)]
    # the last round under a minimum to bank: a bank needs 300 turn points even where
    # fewer would beat the leader (the plain recursion over need, dice and turn points)
    import naive_two_player as ntp

    last = ntp.LastRound(MIN_BANK)
    for me, opp, tp, roll in ((850, 1000, 0, [1, 5, 2, 3, 4, 6]), (900, 1000, 150, [5, 5, 2]),
                              (600, 1000, 200, [1, 2, 3])):
        a = advise(roll, turn_points=tp, me=me, opp=opp, target=1000, rules=MIN_BANK)
        for o in a.options:
            p = tp + o.points
            if o.action == "bank":
                assert p >= 300 and o.value == (1.0 if me + p > opp else 0.0 if
                                                me + p < opp else 0.5)
            else:
                x = (opp - me - p) // 50
                want = last.roll(x, o.dice, min(p // 50, last.f))[0]
                assert o.value == pytest.approx(want, abs=1e-12), (me, opp, tp, o)


@pytest.mark.parametrize(("table", "says"), [
    ("singles = {1=100,2=50,3=50,4=50,5=50,6=50}\n",
     "a roll of 1 die can never lose, so a turn can go on forever"),
    # every roll of six dice scores 500 as six dice of nothing (the triples score 0): the
    # chances of the six-dice rolls that keep all six add up to 1 less a rounding error
    ("singles = {}\nthree-of-a-kind = {1=0,2=0,3=0,4=0,5=0,6=0}\n"
     'n-of-a-kind-mode = "none"\nstraight = 0\nthree-pairs = 0\ntwo-triplets = 0\n'
     "six-dice-nothing = 500\n",
     "every roll of six dice lets all six be set aside, so a turn can go on forever")])
@pytest.mark.parametrize("argv", [
    ["solve", "farkle", "-p", "max-ev"], ["solve", "farkle", "-p", "threshold-300"],
    ["advise", "farkle", "--roll", "1,2,3,4,5,6"],
    ["compare", "ai", "threshold-300", "--exact", "--target", "1000"]])
def test_a_table_whose_turn_never_ends_is_refused_by_every_exact_command(
        tmp_path, capsys, table, says, argv):
    """(The six-dice table hung the exact commands, its memory growing without end.)"""
    toml = tmp_path / "endless.toml"
    toml.write_text(table)
    code, out, err = run_cli(capsys, [*argv, "--rules", str(toml)])
    assert (code, out) == (2, "") and err == f"error: rules 'endless': {says}\n"
