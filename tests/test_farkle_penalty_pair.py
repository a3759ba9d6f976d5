"""Exact head to head under the farkle penalty (``dicelab.farkle.penalty_pair``): against a
plain-Python value iteration over every state, against the optimal-win solve, against
Monte Carlo (4 standard errors, fixed seeds); and the exact head to head under hot dice
must-roll."""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import naive_farkle as nf
import numpy as np
import pytest
from cli_helpers import run_cli
from test_head_to_head import assert_monte_carlo_agrees, naive_pair

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle import solitaire
from dicelab.farkle.exact import exact_pair, policy_table, solve_best_response, solve_optimal_win
from dicelab.farkle.rules import PRESETS, load_rules
from dicelab.farkle.simulate import simulate_farkle
from dicelab.registry import parse_policy

FACEBOOK = PRESETS["facebook"]


def naive_penalty_pair(rules, thr_a: int, thr_b: int, target: int, floor: int
                       ) -> tuple[tuple[float, float], tuple[float, float]]:
    """(P(win), P(tie)) of threshold-thr_a moving first against threshold-thr_b, and of
    threshold-thr_b moving first against threshold-thr_a, under the farkle penalty, by
    plain Gauss-Seidel value iteration over (mover, lost turns in a row of both, totals in
    points down to ``-floor``); a penalty stops at ``-floor``. Each turn's gains from the
    plain-Python scorer; the last turn is the same turn. (Every state is the mover's: the
    game of thr_b moving first is the same iteration's state of thr_b to move at 0 to 0.)"""
    dist = {x: nf.threshold_turn_distribution(rules, x) for x in {thr_a, thr_b}}
    thr = {0: thr_a, 1: thr_b}
    totals = range(-floor, target, 50)
    counts = range(3)
    val = {(who, s, r, a, b): (0.0, 0.0) for who in (0, 1) for s in counts for r in counts
           for a in totals for b in totals}

    @functools.cache
    def last_turn(who, own, lead_total):
        win = sum(p for g, p in dist[thr[who]].items() if g and own + g > lead_total)
        tie = sum(p for g, p in dist[thr[who]].items() if g and own + g == lead_total)
        return win, tie

    for _ in range(2_000):
        moved = 0.0
        for (who, s, r, a, b), old in val.items():
            other = 1 - who
            win = tie = 0.0
            for g, p in dist[thr[who]].items():
                if g == 0:  # lost: my count one higher; the third costs the penalty
                    after = (other, r, s + 1, b, a) if s < 2 else \
                        (other, r, 0, b, max(a - rules.farkle_penalty, -floor))
                    ow, ot = val[after]
                elif a + g < target:
                    ow, ot = val[(other, r, 0, b, a + g)]
                elif rules.ending == "first-to-bank":
                    ow, ot = 0.0, 0.0
                else:
                    ow, ot = last_turn(other, b, a + g)
                win += p * (1 - ow - ot)
                tie += p * ot
            val[(who, s, r, a, b)] = (win, tie)
            moved = max(moved, abs(win - old[0]), abs(tie - old[1]))
        if moved < 1e-14:
            break
    return val[(0, 0, 0, 0, 0)], val[(1, 0, 0, 0, 0)]


# a small penalty and floor keep the plain iteration's state space small
SMALL = [
    (dataclasses.replace(FACEBOOK, name="fb-250", farkle_penalty=250), 300, 400, 600),
    (dataclasses.replace(PRESETS["default"], name="pen-250", farkle_penalty=250), 250, 350,
     500),
]


@pytest.mark.parametrize(("rules", "a", "b", "target"), SMALL, ids=["facebook", "last-round"])
def test_exact_pair_matches_plain_value_iteration_under_the_penalty(rules, a, b, target,
                                                                    monkeypatch):
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    floor = 2 * rules.farkle_penalty
    assert rules.penalty_floor() * 50 == floor
    p = exact_pair(f"threshold-{a}", f"threshold-{b}", rules=rules, target=target,
                   use_cache=False)
    (win, tie), (bw, bt) = naive_penalty_pair(rules, a, b, target, floor)
    assert p.first.win == pytest.approx(win, abs=1e-10)
    assert p.first.tie == pytest.approx(tie, abs=1e-10)
    assert p.second.win == pytest.approx(1 - bw - bt, abs=1e-10)
    assert p.second.tie == pytest.approx(bt, abs=1e-10)
    assert 0.0 < p.tolerance < 1e-9
    if rules.ending == "last-round":
        assert p.first.tie > 1e-4  # the ties are really there
    # the penalty matters: the same pair without it differs
    free = exact_pair(f"threshold-{a}", f"threshold-{b}",
                      rules=dataclasses.replace(rules, farkle_penalty=0), target=target,
                      use_cache=False)
    assert abs(free.first.win - p.first.win) > 1e-6


def test_the_floor_does_not_move_the_value(monkeypatch):
    """Lowering the floor from 1,000 to 2,000 below zero moves nothing above 1e-10."""
    rules = SMALL[0][0]
    values = []
    for pts in (1000, 2000):
        monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", pts)
        values.append(exact_pair("ai", "threshold-300", rules=rules, target=1000,
                                 use_cache=False))
    assert values[0].first.win == pytest.approx(values[1].first.win, abs=1e-10)
    assert values[0].second.win == pytest.approx(values[1].second.win, abs=1e-10)


def test_optimal_win_self_play_is_the_solved_value(monkeypatch):
    """facebook's table under a penalty of 100 (the same penalty engine as facebook's 500,
    fewer totals)."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    rules = dataclasses.replace(FACEBOOK, name="fb-100", farkle_penalty=100)
    ow = solve_optimal_win(rules, 400)
    table = policy_table(parse_policy("optimal-win"), rules, 400, 2)
    p = exact_pair(table, table, rules=rules, target=400)
    assert p.first.win == pytest.approx(ow.first_outcome.win, abs=1e-9)
    assert p.second.win == pytest.approx(1 - ow.first_outcome.win, abs=1e-9)
    assert p.verdict == "tie"
    # and nothing it meets does better against it, in either seat
    for other in ("ai", "max-ev"):
        q = exact_pair(other, table, rules=rules, target=400)
        assert q.first.win <= ow.first_outcome.win + 1e-9
        assert q.second.win <= 1 - ow.first_outcome.win + 1e-9
        assert q.score < 0.5


@pytest.mark.slow
@pytest.mark.parametrize(("a", "b"), [("optimal-win", "ai"), ("max-ev", "threshold-350"),
                                      ("fastest", "optimal-win")])
def test_monte_carlo_agrees_with_the_exact_score_under_the_penalty(a, b):
    assert_monte_carlo_agrees(a, b, FACEBOOK, 1000, 100_000, seed=31)


# ---------------------------------------------------------------------------------
# hot dice must-roll: the exact head to head plays it (the turn distributions do)

MUST_ROLL = load_rules("default").with_ending("last-round")
MUST_ROLL = dataclasses.replace(MUST_ROLL, name="must-roll", hot_dice="must-roll")


def _must_roll_turn(threshold: int) -> dict[int, float]:
    """threshold-T's turn under must-roll, by the forward pass (checked against the plain
    scorer in test_farkle_house_rules)."""
    d = solitaire.threshold_distribution(MUST_ROLL, threshold)
    assert d.p_unresolved < 1e-12
    return {50 * g: float(p) for g, p in enumerate(d.p_bank) if p > 0} | {0: d.p_bust}


@pytest.mark.parametrize(("a", "b", "target"), [
    (300, 300, 600), pytest.param(250, 400, 800, marks=pytest.mark.slow)])
def test_exact_pair_under_must_roll_matches_plain_value_iteration(a, b, target):
    """The game over those turns, by plain value iteration."""
    win, tie = naive_pair(MUST_ROLL, a, b, target, turn=_must_roll_turn)
    p = exact_pair(f"threshold-{a}", f"threshold-{b}", rules=MUST_ROLL, target=target,
                   use_cache=False)
    assert p.first.win == pytest.approx(win, abs=1e-12)
    assert p.first.tie == pytest.approx(tie, abs=1e-12)
    may = exact_pair(f"threshold-{a}", f"threshold-{b}", target=target, use_cache=False)
    assert abs(may.first.win - p.first.win) > 1e-4


@pytest.mark.slow
def test_best_response_under_must_roll_is_what_its_table_plays():
    br = solve_best_response(MUST_ROLL, 600, "threshold-300", use_cache=False)
    played = exact_pair("optimal-win:vs=threshold-300", "threshold-300", rules=MUST_ROLL,
                        target=600, use_cache=False)
    assert played.first.win == pytest.approx(br.first_outcome.win, abs=1e-9)
    assert played.first.tie == pytest.approx(br.first_outcome.tie, abs=1e-9)
    ow = solve_optimal_win(MUST_ROLL, 600)
    self_play = exact_pair("optimal-win", "optimal-win", rules=MUST_ROLL, target=600,
                           use_cache=False)
    assert self_play.first.win == pytest.approx(ow.first_outcome.win, abs=1e-9)


# ---------------------------------------------------------------------------------
# threshold-T's race to the target with the penalty (``dicelab solve farkle -p threshold-T``)


def naive_race(rules, threshold: int, target: int, floor: int) -> float:
    """Expected turns from 0 to ``target`` solitaire, plain value iteration over (total
    down to ``-floor``, lost turns in a row)."""
    dist = nf.threshold_turn_distribution(rules, threshold)
    e = {(m, s): 0.0 for m in range(-floor, target, 50) for s in range(3)}

    def at(m, s):
        return 0.0 if m >= target else e[(m, s)]

    for _ in range(500):
        moved = 0.0
        for (m, s), old in e.items():
            lost = at(m, s + 1) if s < 2 else at(max(m - rules.farkle_penalty, -floor), 0)
            new = 1.0 + sum(p * (lost if g == 0 else at(m + g, 0)) for g, p in dist.items())
            e[(m, s)] = new
            moved = max(moved, abs(new - old))
        if moved < 1e-12:
            break
    return e[(0, 0)]


def test_threshold_race_with_the_penalty_matches_plain_value_iteration(monkeypatch):
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    rules = SMALL[0][0]
    turns = solitaire.race(rules, 2000, solitaire.threshold_bank_table(350))
    floor = rules.penalty_floor()
    assert turns[0, floor] == pytest.approx(naive_race(rules, 350, 2000, floor * 50),
                                            rel=1e-11)
    free = solitaire.race(dataclasses.replace(rules, farkle_penalty=0), 2000,
                          solitaire.threshold_bank_table(350))
    assert turns[0, floor] > free[0, 0] + 1e-3  # the penalty costs turns


def dense_race(rules, threshold: int, target: int, floor: int) -> float:
    """Expected turns from 0 to ``target`` solitaire, every (total down to ``-floor``, lost
    turns in a row) state one unknown of a dense linear system."""
    dist = nf.threshold_turn_distribution(rules, threshold)
    states = [(m, s) for m in range(-floor, target, 50) for s in range(3)]
    at = {x: i for i, x in enumerate(states)}
    a, b = np.eye(len(states)), np.ones(len(states))
    for (m, s), i in at.items():
        for g, p in dist.items():
            nxt = ((m, s + 1) if s < 2 else (max(m - rules.farkle_penalty, -floor), 0)) \
                if g == 0 else (m + g, 0)
            if nxt[0] < target:
                a[i, at[nxt]] -= p
    return float(np.linalg.solve(a, b)[at[(0, 0)]])


def test_a_threshold_race_deepens_its_floor_until_the_answer_settles(monkeypatch):
    """Where most turns are lost totals fall far below zero: the floor doubles until the
    expected turns stop moving, and equal the unbounded game's to 1e-9."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    rules = dataclasses.replace(PRESETS["default"], name="mb-1000", min_bank=1000,
                                farkle_penalty=250)
    turns, floor = solitaire.race_turns(rules, 1000, solitaire.threshold_bank_table(300))
    assert floor > 500 == rules.penalty_floor() * 50  # it went deeper than the start
    assert turns == pytest.approx(dense_race(rules, 300, 1000, floor), rel=1e-11)
    assert turns == pytest.approx(dense_race(rules, 300, 1000, 2 * floor), rel=1e-9)
    assert turns > dense_race(rules, 300, 1000, 500) + 0.01  # the start floor was too shallow
    solved = solitaire.threshold_solution(rules, 300, 1000)
    assert (solved.expected_turns_to_target, solved.floor_points) == (turns, floor)


@pytest.mark.slow
def test_a_race_that_settles_only_far_below_zero_is_solved_not_refused(capsys, monkeypatch):
    """threshold-2000 under facebook: its totals drift up by only 7 points a turn, so they
    fall far below zero. The race moves by 4e-6 turns (1e-8 relative) between 512,000
    and 1,024,000 below zero and not at all a doubling later: solved there (the threshold
    sweep's T = 2,000 under facebook), equal to the race with the floor doubled once
    more. (Its fast twin, the same deepening on a small race: the test above.)"""
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "threshold-2000", "--rules",
                                      "facebook", "--target", "2000", "--json"])
    assert code == 0, err
    got = json.loads(out)
    assert got["floor_points"] > 1_000_000
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 2 * got["floor_points"])
    deeper = solitaire.race(FACEBOOK, 2000, solitaire.threshold_bank_table(2000))
    assert got["expected_turns_to_target"] == pytest.approx(
        deeper[0, FACEBOOK.penalty_floor()], rel=1e-10)


def test_a_race_that_lost_turns_outweigh_takes_forever_or_is_refused():
    """Banks of 3,000 or more with P = 3%, and 500 points lost every third lost turn: from
    deep below zero the target is out of reach, so the expected turns have no bound."""
    rules = dataclasses.replace(PRESETS["default"], name="mb-3000", min_bank=3000,
                                farkle_penalty=500)
    bank = solitaire.threshold_bank_table(300)
    assert solitaire.race_turns(rules, 2000, bank)[0] == math.inf
    with pytest.raises(UserError, match=r"does not settle.*down to -8,000"):
        solitaire.race_turns(rules, 2000, bank, deepest=8000)
    free = dataclasses.replace(rules, farkle_penalty=0)  # without the penalty: finite
    assert solitaire.race_turns(free, 2000, bank) == (pytest.approx(
        1 / solitaire.threshold_distribution(free, 300).p_bank.sum(), rel=1e-12), 0)


@pytest.mark.slow
def test_threshold_race_with_the_penalty_matches_monte_carlo(capsys):
    code, out, err = run_cli(capsys, ["solve", "farkle", "-p", "threshold-300", "--rules",
                                      "facebook", "--target", "3000", "--json"])
    assert code == 0, err
    exact = json.loads(out)["expected_turns_to_target"]
    s = simulate_farkle([parse_policy("threshold-300")], games=40_000, seed=11, target=3000,
                        rules=FACEBOOK).seat(0)
    assert abs(s.mean_turns.mean - exact) <= 4 * s.mean_turns.se, (s.mean_turns, exact)


def test_the_tuner_scores_exactly_under_the_penalty(capsys, monkeypatch, tmp_path):
    """``dicelab tune`` (its exact objective) under facebook's table with a penalty of 100
    (a rules file): its best member's score is that member's exact head to head against
    the field (totals down to two penalties below zero, the smallest floor)."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    path = tmp_path / "fb-100.toml"
    path.write_text('base = "facebook"\nfarkle-penalty = 100\n')
    rules = load_rules(str(path))
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--rules",
                                      str(path), "--target", "400", "--range",
                                      "threshold=300:600:50", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["method"] == "exact" and d["rules"] == rules.name
    assert rules.farkle_penalty == 100
    exact = exact_pair(d["best"], "ai", rules=rules, target=400)
    assert d["best_score"] == pytest.approx(exact.score, abs=1e-12)


@pytest.mark.slow
def test_optimal_win_under_must_roll_and_the_penalty_plays_its_value(tmp_path, capsys,
                                                                      monkeypatch):
    """facebook's table with hot dice must-roll and a penalty of 100 at 400 (totals down
    to -200: two penalties): optimal-win's policy table against itself gives its
    self-play value exactly, and max-ev does no better against it in either seat
    (``dicelab compare --exact``, a rules file); the simulator plays the tables to that
    score."""
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 200)
    path = tmp_path / "facebook-must-roll.toml"
    path.write_text('base = "facebook"\nhot-dice = "must-roll"\nfarkle-penalty = 100\n')
    rules = load_rules(str(path))
    assert rules.hot_dice == "must-roll" and rules.farkle_penalty == 100
    target = 400
    ow = solve_optimal_win(rules, target)
    self_play = exact_pair("optimal-win", "optimal-win", rules=rules, target=target)
    assert self_play.first.win == pytest.approx(ow.first_outcome.win, abs=1e-9)
    assert self_play.second.win == pytest.approx(1 - ow.first_outcome.win, abs=1e-9)
    code, out, err = run_cli(capsys, ["compare", "optimal-win", "max-ev", "--exact",
                                      "--rules", str(path), "--target", str(target), "--json"])
    assert code == 0, err
    d = json.loads(out)
    pair = d["pairs"][0]
    assert d["method"] == "exact" and pair["tolerance"] < 1e-9
    assert pair["policy"] == "optimal-win" and pair["score"] > 0.5
    assert pair["first"]["win_rate"] >= ow.first_outcome.win - 1e-9
    assert pair["second"]["win_rate"] >= 1 - ow.first_outcome.win - 1e-9
    may_bank = solve_optimal_win(dataclasses.replace(rules, hot_dice="may-bank"), target)
    assert abs(may_bank.first_outcome.win - ow.first_outcome.win) > 1e-4
    # the simulator plays the policy tables to the exact score (within 4 standard errors)
    games = 60_000
    res = simulate_farkle([parse_policy("optimal-win"), parse_policy("max-ev")], games=games,
                          seed=41, target=target, rules=rules).seat(0)
    score = (res.wins + 0.5 * res.ties) / games
    se = math.sqrt(max((res.wins + 0.25 * res.ties) / games - score**2, 0.0) / games)
    assert abs(score - pair["score"]) <= 4 * se, (score, pair["score"], se)
