"""Sequential tests: error rates on identical policies, power on a known difference
(exact values from the exact head to head), reproducibility, CLI and bad input."""

from __future__ import annotations

import json
import math

import pytest
from cli_helpers import run_cli
from numba_threads import dicts_by_threads

from dicelab.errors import UserError
from dicelab.farkle.exact import exact_pair
from dicelab.sprt import (
    MIN_SPREAD,
    MIN_UNITS,
    UNIT_GAMES,
    Judge,
    SprtSpec,
    elo_score,
    largest_var,
    sprt,
)

#: A 1-point difference: H0 even, H1 the policy scores 0.51.
ONE_POINT = SprtSpec(0.0, 400 * math.log10(0.51 / 0.49), 0.05, 0.05)
#: ai without its two-dice reduction is 1.2 points worse (exact, below).
BETTER, WORSE = "ai", "ai:two-dice=0"
TWIN = "ai:step=0,two-dice=0,one-die=0,chase=0"  # plays exactly as threshold-300


def test_spec_parsing_and_bounds():
    assert SprtSpec.parse("elo0=0,elo1=10,alpha=0.05,beta=0.05") == SprtSpec()
    lo, hi = SprtSpec().bounds
    assert lo == pytest.approx(math.log(0.05 / 0.95)) and hi == pytest.approx(-lo)
    assert elo_score(0) == 0.5 and elo_score(400 * math.log10(0.51 / 0.49)) == \
        pytest.approx(0.51)
    for bad in ("elo1=0", "alpha=0.7", "elo0=1,elo0=2", "x=1", "elo1=a", "elo0"):
        with pytest.raises(UserError):
            SprtSpec.parse(bad)


def test_the_known_difference_is_real():
    assert exact_pair(BETTER, WORSE).score == pytest.approx(0.512, abs=0.001)


@pytest.mark.slow
def test_identical_policies_accept_h0_at_the_stated_rate():
    """Independent dice, elo 0 exactly: accepting H1 is an error of the first kind, which
    happens with probability at most alpha = 5%: at most 5 of 30 (binomial tail 0.8%)."""
    decisions = [sprt("threshold-300", TWIN, ONE_POINT, seed=s, crn=False, target=3000,
                      max_games=2_000_000).decision for s in range(30)]
    assert decisions.count("H1") <= 5
    assert decisions.count("undecided") == 0


@pytest.mark.parametrize("crn", [True, False])
def test_a_better_policy_is_detected(crn):
    for s in range(4):
        r = sprt(BETTER, WORSE, ONE_POINT, seed=s, crn=crn)
        assert r.decision == "H1", r
        r = sprt(WORSE, BETTER, ONE_POINT, seed=s, crn=crn)
        assert r.decision == "H0", r


def test_common_dice_decide_with_fewer_games():
    games = {crn: sum(sprt(BETTER, WORSE, ONE_POINT, seed=s, crn=crn).games for s in range(4))
             for crn in (True, False)}
    assert games[True] < games[False]


def test_same_seed_same_decision_whatever_the_threads():
    one, two = dicts_by_threads(lambda: sprt(BETTER, WORSE, ONE_POINT, seed=3, crn=False))
    assert one == two


def test_cli_sprt_json(capsys):
    code, out, err = run_cli(capsys, ["tournament", BETTER, WORSE, "--sprt",
                                      "elo0=0,elo1=7", "--seed", "1", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["pairs"][0]["decision"] == "H1" and d["pairs"][0]["games"] % (2 * UNIT_GAMES) == 0
    assert (d["rules"], d["ending"]) == ("default", "last-round")
    pair = d["pairs"][0]
    assert pair["expected_games_h1"] < pair["fixed_games"]


@pytest.mark.parametrize("where", ["end", "before the policies", "before an option"])
def test_a_bare_sprt_means_the_documented_defaults(capsys, where):
    argv = {"end": ["tournament", BETTER, WORSE, "--seed", "1", "--sprt"],
            "before the policies": ["tournament", "--sprt", BETTER, WORSE, "--seed", "1"],
            "before an option": ["tournament", BETTER, WORSE, "--sprt", "--seed", "1"]}[where]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["sprt"] == SprtSpec().to_dict() == {"elo0": 0, "elo1": 10, "alpha": 0.05,
                                                 "beta": 0.05}
    assert d["policies"] == [BETTER, WORSE]


def test_the_running_judge_is_the_batch_formula():
    """Unit by unit, the running LLR equals the formula on the units so far."""
    import numpy as np

    rng = np.random.default_rng(1)
    units = rng.normal(0.51, 0.03, 1000)
    judge = Judge(ONE_POINT)
    for n, x in enumerate(units, 1):
        judge.add(float(x))
        if n >= MIN_UNITS:
            want = ONE_POINT.llr(n, float(units[:n].mean()), float(units[:n].var(ddof=1)))
            assert judge.llr == pytest.approx(want, rel=1e-12)
        if judge.decision != "undecided":
            break
    assert judge.decision == "H1"


def test_looks_are_frequent_enough_that_the_overshoot_is_small():
    """A pair far apart (about 90 Elo) is decided at the first look; a pair nearer (1.2
    points) is decided at a later look, and its LLR lands near the bound, not several
    times past it (the test looks after every unit)."""
    spec = SprtSpec(0, 20)
    runs = [sprt("threshold-300", "threshold-1000", spec, seed=s, target=2000, crn=crn)
            for s in range(4) for crn in (True, False)]
    assert all(r.decision == "H1" and r.units == MIN_UNITS for r in runs)
    runs = [sprt(BETTER, WORSE, ONE_POINT, seed=s, crn=crn)
            for s in range(4) for crn in (True, False)]
    later = [r for r in runs if r.units > MIN_UNITS]
    assert all(r.decision == "H1" for r in runs) and len(later) >= len(runs) // 2
    assert sum(r.llr for r in later) / len(later) <= 1.1 * ONE_POINT.bounds[1]


def test_the_expected_games_and_the_fixed_test():
    """Wald's average sample number and the fixed test's size, from the measured unit
    variance: with alpha = beta = 0.05 the sequential test needs about half."""
    r = sprt(BETTER, WORSE, ONE_POINT, seed=1, crn=False)
    h0, h1 = r.expected_games
    assert h0 == pytest.approx(h1) and 0.4 < h1 / r.fixed_games < 0.6
    from scipy.stats import norm

    delta = 0.51 - 0.5
    z = 2 * norm.ppf(0.95)
    assert r.fixed_games == pytest.approx((z / delta) ** 2 * r.unit_var * 2 * UNIT_GAMES,
                                          abs=2 * UNIT_GAMES)


@pytest.mark.parametrize(("argv", "needle"), [
    (["tournament", "ai", "max-ev", "--sprt", "elo1=-5"], "elo1 must be above elo0"),
    (["tournament", "ai", "max-ev", "--sprt", "beta=1"], "beta"),
    (["tournament", "ai", "max-ev", "--sprt", "elo0=0", "--seats", "3"], "pairs"),
    (["tournament", "ai", "--sprt", "elo1=5"], "at least two"),
    (["tournament", "ai", "max-ev", "--sprt", "-n", "1"], "less than one unit"),
    (["tournament", "ai", "max-ev", "--sprt", "-n", str(2 * UNIT_GAMES - 1)], "one unit"),
])
def test_bad_sprt_input(capsys, argv, needle):
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and err.startswith("error: ") and needle in err


@pytest.mark.parametrize("most", [2 * UNIT_GAMES, 2 * UNIT_GAMES + 1, 5 * UNIT_GAMES - 1])
def test_the_test_plays_no_more_than_the_most_games(most):
    r = sprt("ai", "max-ev", SprtSpec(0, 10), max_games=most, seed=1, target=1000)
    assert r.decision == "undecided" and r.games == most // (2 * UNIT_GAMES) * 2 * UNIT_GAMES
    assert r.games <= most
    with pytest.raises(UserError, match="one unit"):
        sprt("ai", "max-ev", SprtSpec(0, 10), max_games=2 * UNIT_GAMES - 1, seed=1)


def test_a_test_ended_before_its_first_look_has_no_ratio(capsys):
    """--games below the first look (64 units): the test never looked, so no ratio (NaN,
    'n/a', and the caption says why), not an LLR of 0 beside a lopsided score; from the
    first look on, a ratio."""
    first_look = MIN_UNITS * 2 * UNIT_GAMES
    for most in (2 * UNIT_GAMES, first_look - 1):
        r = sprt("threshold-300", "max-ev", SprtSpec(0, 10), max_games=most, seed=1,
                 target=1000)
        assert r.decision == "undecided" and not r.looked and math.isnan(r.llr)
    r = sprt("threshold-300", "max-ev", SprtSpec(0, 10), max_games=first_look, seed=1,
             target=1000)
    assert r.looked and math.isfinite(r.llr)
    code, out, err = run_cli(capsys, ["tournament", "threshold-300", "max-ev", "--sprt",
                                      "-n", "100", "--seed", "1", "--target", "1000"])
    assert code == 0, err
    text = " ".join(out.split())
    assert "before its first look, at 1,024 games" in text and "same score" not in text


@pytest.mark.parametrize("loser", ["threshold-6000", "threshold-5000"])
def test_a_lopsided_score_keeps_its_interval_within_zero_and_one(loser):
    """A policy that wins nearly every game: the score's interval stays within [0, 1] (a
    normal interval ran past 100%)."""
    r = sprt("threshold-300", loser, SprtSpec(0, 10), seed=1, target=1000)
    assert r.decision == "H1" and r.score.mean > 0.98
    lo, hi = r.score.ci95
    assert r.score.se > 0 and lo < r.score.mean < hi <= 1.0
    # nearly every unit won outright: the normal interval would run past 100%
    assert (hi == 1.0) == (loser == "threshold-6000")


def test_units_all_won_are_decided_on_the_largest_variance():
    """threshold-300 wins every game of the first units against threshold-10000 (at
    1,000): the units measure no variance, but the largest variance units of that mean
    can have (largest_var) decides at the first look (it played on to 49,584 games, for
    16 units with a lost game); the score keeps no interval (not [100%, 100%]) and the
    games a test would need are not made up from a variance of 0."""
    first_look = MIN_UNITS * 2 * UNIT_GAMES
    r = sprt("threshold-300", "threshold-10000", SprtSpec(0, 10), seed=1, target=1000)
    assert r.decision == "H1" and r.games == first_look and r.unit_var == 0
    assert r.llr == pytest.approx(SprtSpec(0, 10).llr(MIN_UNITS, 1.0,
                                                      largest_var(MIN_UNITS, 1.0)))
    assert r.score.mean == 1.0 and math.isnan(r.score.se) and math.isnan(r.score.ci95[0])
    assert math.isnan(r.fixed_games)
    # the other way round: H0 (threshold-10000 is not the stronger)
    r = sprt("threshold-10000", "threshold-300", SprtSpec(0, 10), seed=1, target=1000)
    assert r.decision == "H0" and r.games == first_look


def test_policies_that_play_alike_on_common_dice_are_not_decided():
    """Two names of one policy on common dice: every unit is even, for ever; no spread
    is no evidence, so the test plays to its most games and ends undecided (it accepted
    H0 at the first look, from 256 games); on independent dice the units vary and it
    decides."""
    most = 64 * 2 * UNIT_GAMES
    r = sprt("threshold-300", TWIN, ONE_POINT, seed=1, target=1000, max_games=most)
    assert r.decision == "undecided" and r.games == most and math.isnan(r.llr)
    assert r.score.mean == 0.5 and r.unit_var == 0
    r = sprt("threshold-300", TWIN, SprtSpec(0, 200), seed=1, target=1000, crn=False,
             max_games=100 * most)
    assert r.decision == "H0" and r.unit_var > 0 and r.llr <= SprtSpec().bounds[0]


def test_the_judge_waits_for_spread():
    """Units all level give no ratio at any look; units all at one other score are judged
    on the largest variance of their mean, lopsided ones at the first look, others once
    that crosses a bound."""
    judge = Judge(ONE_POINT)
    for _ in range(10 * MIN_UNITS):
        assert judge.add(0.5) == "undecided" and math.isnan(judge.llr)
    for x, decided in ((1.0, "H1"), (0.0, "H0"), (0.95, "H1")):
        alike = Judge(ONE_POINT)
        for i in range(1, MIN_UNITS + 1):
            assert alike.add(x) == ("undecided" if i < MIN_UNITS else decided)
        assert alike.llr == pytest.approx(ONE_POINT.llr(MIN_UNITS, x,
                                                        largest_var(MIN_UNITS, x)))
    near = Judge(ONE_POINT)  # a score near the hypotheses: many units before a decision
    n = next(i for i in range(1, 100_000) if near.add(0.53) != "undecided")
    assert n > 10 * MIN_UNITS and near.decision == "H1"
    assert math.isnan(ONE_POINT.llr(100, 0.6, 0.0))


@pytest.mark.parametrize("off", [1 / 16, -1 / 16])
def test_a_pair_that_rarely_differs_is_not_decided_on_one_game(off):
    """Units mostly level, one in a hundred a game off: the variance rests on the few
    that differ, and one of them put the ratio hundreds of times past a bound (H0 at the
    first look, from one game). The test waits for MIN_SPREAD units off the level score,
    and then decides."""
    judge = Judge(SprtSpec())
    for i in range(1, 100 * MIN_SPREAD + 1):
        judge.add(0.5 + off if i % 100 == 0 else 0.5)
        if judge.spread < MIN_SPREAD:
            assert judge.decision == "undecided", (i, judge.llr)
    assert judge.spread == MIN_SPREAD and judge.decision == "H0"
    assert judge.llr < 100 * SprtSpec().bounds[0]  # no doubt by then: H0 is far off...
    judge = Judge(SprtSpec(-5, 5))
    for i in range(1, 100 * MIN_SPREAD + 1):
        judge.add(0.5 + off if i % 100 == 0 else 0.5)
    assert judge.decision == ("H1" if off > 0 else "H0")  # ...or the sign of the units off


def test_a_pair_that_rarely_differs_on_common_dice():
    """ai:max-steps=1 and ai (to 3,000) play alike but about 3,000 points behind: the
    decision (H0: its exact score, 49.985%, is at most elo0) comes after MIN_SPREAD units
    with a winner, not the first."""
    r = sprt("ai:max-steps=1", "ai", SprtSpec(), seed=1, target=3000)
    assert r.decision == "H0" and r.unit_var > 0
    first_look = MIN_UNITS * 2 * UNIT_GAMES
    assert r.games > 10 * first_look


def test_long_policy_names_leave_every_column_readable(capsys):
    """Long policy names (a user's file) do not squeeze the decision, the score or the
    numbers out of the table: it prints wider than the page instead."""
    policies = [f"docs/examples/policies/penta_rules.py:{p}" for p in ("most_points",
                                                                       "chase_penta")]
    code, out, err = run_cli(capsys, ["tournament", *policies, "--sprt", "--seed", "1",
                                      "-n", "32"])
    assert code == 0, err
    (row,) = [line for line in out.splitlines() if line.startswith("│ docs/")]
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[:3] == [*policies, "undecided"] and cells[3] == "32"
    assert "…" not in row and cells[4].endswith("]")
    code, out, err = run_cli(capsys, ["tournament", *policies, "--seed", "1", "-n", "2"])
    assert code == 0, err
    (row,) = [line for line in out.split("pairs:")[1].splitlines() if line.startswith("│ ")]
    assert "…" not in row and row.split("│")[5].strip() == "tie"
