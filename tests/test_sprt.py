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
from dicelab.sprt import SprtSpec, elo_score, sprt

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
    assert d["pairs"][0]["decision"] == "H1" and d["pairs"][0]["games"] % 256 == 0


@pytest.mark.parametrize(("argv", "needle"), [
    (["tournament", "ai", "max-ev", "--sprt", "elo1=-5"], "elo1 must be above elo0"),
    (["tournament", "ai", "max-ev", "--sprt", "beta=1"], "beta"),
    (["tournament", "ai", "max-ev", "--sprt", "elo0=0", "--seats", "3"], "pairs"),
    (["tournament", "ai", "--sprt", "elo1=5"], "at least two"),
])
def test_bad_sprt_input(capsys, argv, needle):
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and err.startswith("error: ") and needle in err
