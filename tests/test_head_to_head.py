"""Exact head to head and best responses: against a plain-Python game evaluation, against
Monte Carlo (4 standard errors, fixed seeds), and against each other."""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import naive_farkle as nf
import pytest
from cli_helpers import run_cli

from dicelab.compare import compare
from dicelab.farkle.exact import exact_pair, solve_best_response, solve_optimal_win
from dicelab.farkle.rules import PRESETS, load_rules
from dicelab.farkle.simulate import simulate_farkle
from dicelab.registry import parse_policy
from dicelab.simulate import simulate

DEFAULT = PRESETS["default"]


#: the plain-Python turn distributions, computed once per (rules, threshold) in a session
_threshold_turn_distribution = functools.cache(nf.threshold_turn_distribution)


def naive_pair(rules, thr_a: int, thr_b: int, target: int, turn=None) -> tuple[float, float]:
    """(P(win), P(tie)) of threshold-thr_a moving first against threshold-thr_b, by plain
    value iteration over (mover, totals); each turn's gain distribution from the
    plain-Python scorer (``naive_farkle``, or ``turn(threshold)``), the last turn the same
    turn."""
    return naive_pairs(rules, thr_a, thr_b, target, turn)[0]


def naive_pairs(rules, thr_a: int, thr_b: int, target: int, turn=None
                ) -> tuple[tuple[float, float], tuple[float, float]]:
    """:func:`naive_pair` of thr_a moving first, and of thr_b moving first, from one value
    iteration (its states are the mover's: thr_b moving first is thr_b to move at 0 to
    0)."""
    turn = turn or (lambda x: _threshold_turn_distribution(rules, x))
    dist = {x: turn(x) for x in {thr_a, thr_b}}
    thr = {0: thr_a, 1: thr_b}
    totals = range(0, target, 50)
    val = {(who, a, b): (0.0, 0.0) for who in (0, 1) for a in totals for b in totals}

    @functools.cache  # the same in every sweep
    def last_turn(who, own, lead_total):
        """(P(this last turn wins), P(tie)) of ``who`` at ``own`` against ``lead_total``."""
        win = sum(p for g, p in dist[thr[who]].items() if own + g > lead_total)
        tie = sum(p for g, p in dist[thr[who]].items() if own + g == lead_total)
        return win, tie

    for _ in range(10_000):
        moved = 0.0
        for (who, a, b), old in val.items():
            other = 1 - who
            win = tie = 0.0
            for g, p in dist[thr[who]].items():
                if a + g < target:
                    ow, ot = val[(other, b, a + g)]
                    win += p * (1 - ow - ot)
                    tie += p * ot
                elif rules.ending == "first-to-bank":
                    win += p
                else:
                    ow, ot = last_turn(other, b, a + g)
                    win += p * (1 - ow - ot)
                    tie += p * ot
            val[(who, a, b)] = (win, tie)
            moved = max(moved, abs(win - old[0]), abs(tie - old[1]))
        if moved < 1e-15:
            break
    return val[(0, 0, 0)], val[(1, 0, 0)]


@pytest.mark.parametrize("ending", ["last-round", "first-to-bank"])
@pytest.mark.parametrize(("a", "b", "target"), [(300, 300, 600), (250, 400, 800),
                                                (500, 200, 1000)])
def test_exact_pair_matches_plain_value_iteration(a, b, target, ending):
    rules = DEFAULT.with_ending(ending)
    (win, tie), (bw, bt) = naive_pairs(rules, a, b, target)
    p = exact_pair(f"threshold-{a}", f"threshold-{b}", rules=rules, target=target,
                   use_cache=False)
    assert p.first.win == pytest.approx(win, abs=1e-12)
    assert p.first.tie == pytest.approx(tie, abs=1e-12)
    # moving second is the other policy moving first
    assert p.second.win == pytest.approx(1 - bw - bt, abs=1e-12)
    assert p.second.tie == pytest.approx(bt, abs=1e-12)
    if ending == "first-to-bank":
        assert p.first.tie == 0.0 == p.second.tie


def test_a_policy_against_itself_is_a_tie_and_seats_add_up():
    p = exact_pair("ai", "ai", target=2000, use_cache=False)
    assert p.verdict == "tie"
    assert p.first.win == pytest.approx(p.second.loss, abs=1e-12)
    assert p.first.tie == pytest.approx(p.second.tie, abs=1e-12)


def _mc_score(a: str, b: str, target: int, games: int, seed: int) -> tuple[float, float]:
    res = simulate(a, [b], games=games, seed=seed, target=target)
    s = res.seat(0)
    score = (s.wins + 0.5 * s.ties) / games
    second = (s.wins + 0.25 * s.ties) / games
    return score, math.sqrt(max(second - score**2, 0.0) / games)


FAMILIES = [("ai", "threshold-350"), ("max-ev", "ai"), ("fastest", "threshold-300"),
            ("optimal-win", "max-ev"), ("optimal-win:vs=ai", "ai")]


@pytest.mark.slow
@pytest.mark.parametrize("target", [1000, 3000])
@pytest.mark.parametrize(("a", "b"), FAMILIES)
def test_monte_carlo_agrees_with_the_exact_score(a, b, target):
    """Every policy family, two targets: simulation within 4 standard errors."""
    exact = exact_pair(a, b, target=target)
    score, se = _mc_score(a, b, target, 200_000, seed=17)
    assert abs(score - exact.score) <= 4 * se, (score, exact.score, se)


@pytest.mark.slow
def test_monte_carlo_compare_agrees_with_compare_exact():
    policies = ["ai", "threshold-300", "max-ev"]
    mc = compare(policies, games=200_000, seed=5, target=2000)
    ex = compare(policies, exact=True, target=2000)
    assert ex.method == "exact" and mc.method == "monte-carlo"
    for m, e in zip(mc.pairs, ex.pairs, strict=True):
        assert (m.policy, m.opponent) == (e.policy, e.opponent)
        assert abs(m.score - e.score) <= 4 * m.score_se


@pytest.mark.parametrize("opponent", [
    "threshold-300", "ai",
    # 0.9 s; fast twin: test_best_response_under_a_minimum_to_bank_is_what_its_table_plays[max-ev]
    pytest.param("max-ev", marks=pytest.mark.slow)])
def test_best_response_is_what_its_table_plays_and_beats_optimal_win(opponent):
    br = solve_best_response(DEFAULT, 600, opponent, use_cache=False)
    played = exact_pair(f"optimal-win:vs={opponent}", opponent, target=600, use_cache=False)
    assert played.first.win == pytest.approx(br.first_outcome.win, abs=1e-9)
    assert played.first.tie == pytest.approx(br.first_outcome.tie, abs=1e-9)
    second = br.second_outcome
    assert played.second.win == pytest.approx(second.win, abs=1e-9)
    # knowing the opponent is worth something, in both seats, never less than nothing
    general = exact_pair("optimal-win", opponent, target=600)
    assert played.first.score >= general.first.score - 1e-9
    assert played.second.score >= general.second.score - 1e-9
    assert played.score > general.score


def test_best_response_to_optimal_win_is_optimal_win():
    br = solve_best_response(DEFAULT, 800, "optimal-win", use_cache=False)
    ow = solve_optimal_win(DEFAULT, 800)
    assert br.first_outcome.win == pytest.approx(ow.first_outcome.win, abs=1e-9)
    assert br.first_outcome.tie == pytest.approx(ow.first_outcome.tie, abs=1e-9)


def test_best_response_under_first_to_bank():
    rules = load_rules("default", "first-to-bank")
    br = solve_best_response(rules, 800, "threshold-300", use_cache=False)
    played = exact_pair("optimal-win:vs=threshold-300", "threshold-300", rules=rules,
                        target=800, use_cache=False)
    assert played.first.win == pytest.approx(br.first_outcome.win, abs=1e-9)
    assert br.first_outcome.tie == 0.0


def test_cli_exact_json_table_and_out(capsys, tmp_path):
    code, out, err = run_cli(capsys, ["compare", "ai", "threshold-350", "--exact",
                                      "--target", "1000", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["method"] == "exact" and d["seed"] is None
    pair = d["pairs"][0]
    assert pair["first"]["win_rate"] + pair["first"]["tie_rate"] + pair["first"]["loss_rate"] == \
        pytest.approx(1.0, abs=1e-12)
    code, out, err = run_cli(capsys, ["compare", "ai", "threshold-350", "--exact",
                                      "--target", "1000", "--out", str(tmp_path / "x")])
    assert code == 0, err
    assert "exact" in out and "1st win" in out
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    assert manifest["method"] == "exact"


@pytest.mark.parametrize(("argv", "needle"), [
    (["compare", "optimal", "greedy", "--exact", "--ending", "first-to-bank"],
     "--ending applies to Farkle only"),
    (["compare", "optimal-win:vs=bogus", "ai", "--exact"], "unknown policy 'bogus'"),
    (["compare", "optimal-win:vs=optimal", "ai", "--exact"], "penta policy"),
    (["compare", "optimal-win:versus=ai", "ai", "--exact"], "optimal-win:vs=POLICY"),
    (["compare", "threshold-1000000", "ai", "--exact", "--target", "1000"],
     "cannot be evaluated exactly"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, argv, needle):
    out_dir = tmp_path / "never"
    code, _, err = run_cli(capsys, [*argv, "--out", str(out_dir)])
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err
    assert not out_dir.exists()


# ---------------------------------------------------------------------------------
# house rule: a minimum to bank (a seat banks only from max(its threshold, the minimum))

MIN_BANK = dataclasses.replace(DEFAULT, name="min-bank", min_bank=300)


@pytest.mark.parametrize("ending", ["last-round", "first-to-bank"])
@pytest.mark.parametrize(("a", "b", "target"), [(100, 400, 800), (300, 350, 600)])
def test_exact_pair_under_a_minimum_to_bank_matches_plain_value_iteration(a, b, target,
                                                                          ending):
    rules = MIN_BANK.with_ending(ending)
    win, tie = naive_pair(rules, a, b, target)  # the plain turn distributions take the rule
    p = exact_pair(f"threshold-{a}", f"threshold-{b}", rules=rules, target=target,
                   use_cache=False)
    assert p.first.win == pytest.approx(win, abs=1e-12)
    assert p.first.tie == pytest.approx(tie, abs=1e-12)
    if a < 300:  # below the minimum, a threshold plays the minimum
        same = exact_pair("threshold-300", f"threshold-{b}", rules=rules, target=target,
                          use_cache=False)
        assert same.first.win == p.first.win and same.second.win == p.second.win


@pytest.mark.parametrize("opponent", [
    # 1.2 s; fast twin: test_best_response_is_what_its_table_plays_and_beats_optimal_win[ai]
    pytest.param("ai", marks=pytest.mark.slow), "max-ev"])
def test_best_response_under_a_minimum_to_bank_is_what_its_table_plays(opponent):
    """(The solve is cached: the head to head of ``optimal-win:vs=...`` plays its table.)"""
    br = solve_best_response(MIN_BANK, 600, opponent)
    played = exact_pair(f"optimal-win:vs={opponent}", opponent, rules=MIN_BANK, target=600,
                        use_cache=False)
    assert played.first.win == pytest.approx(br.first_outcome.win, abs=1e-9)
    assert played.first.tie == pytest.approx(br.first_outcome.tie, abs=1e-9)
    assert played.second.win == pytest.approx(br.second_outcome.win, abs=1e-9)
    general = exact_pair("optimal-win", opponent, rules=MIN_BANK, target=600,
                         use_cache=False)
    assert played.score >= general.score - 1e-12


def test_optimal_win_under_a_minimum_to_bank_plays_its_table_against_itself():
    ow = solve_optimal_win(MIN_BANK, 600)
    self_play = exact_pair("optimal-win", "optimal-win", rules=MIN_BANK, target=600,
                           use_cache=False)
    assert self_play.first.win == pytest.approx(ow.first_outcome.win, abs=1e-9)


def assert_monte_carlo_agrees(a: str, b: str, rules, target: int, games: int, seed: int):
    """``a`` against ``b`` (``a`` in the first seat) simulated: its score within 4 standard
    errors of the exact one."""
    exact = exact_pair(a, b, rules=rules, target=target, use_cache=False)
    res = simulate_farkle([parse_policy(a), parse_policy(b)], games=games, seed=seed,
                          target=target, rules=rules)
    s = res.seat(0)
    score = (s.wins + 0.5 * s.ties) / games
    se = math.sqrt(max((s.wins + 0.25 * s.ties) / games - score**2, 0.0) / games)
    assert abs(score - exact.score) <= 4 * se, (score, exact.score, se)


@pytest.mark.parametrize(("a", "b"), [("optimal-win", "ai"), ("max-ev", "threshold-100")])
def test_monte_carlo_agrees_with_the_exact_score_under_a_minimum_to_bank(a, b):
    assert_monte_carlo_agrees(a, b, MIN_BANK, 1000, 60_000, seed=29)

