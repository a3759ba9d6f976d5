"""The tuner: it finds the best member of a family (checked against a full scan),
reproducibly, with both objectives; bad input."""

from __future__ import annotations

import json

import pytest
from cli_helpers import run_cli

from dicelab.farkle.exact import exact_pair
from dicelab.tune import member, tune


def test_a_small_space_is_searched_to_its_best_member():
    """Every threshold-T, T = 100..800, against ai at 2,000: the scan's best is the
    tuner's (the space has 15 members; 40 trials cover it)."""
    scan = {t: exact_pair(f"threshold-{t}", "ai", target=2000).score
            for t in range(100, 801, 50)}
    r = tune("threshold", ["ai"], ranges={"threshold": (100, 800, 50)}, trials=40, seed=3,
             target=2000)
    best = max(scan, key=scan.get)
    assert r.best == f"threshold-{best}"
    assert r.best_score == pytest.approx(scan[best], abs=1e-12)
    assert r.rechecked_score == r.best_score  # exact: no winner's curse


def test_the_search_is_reproducible():
    runs = [tune("ai", ["threshold-300"], params=["base", "two-dice"], trials=8, seed=5,
                 target=1500).trials for _ in range(2)]
    assert runs[0].equals(runs[1])


def test_monte_carlo_objective_shares_the_dice_and_rechecks_on_fresh_ones():
    r = tune("ai", ["threshold-300"], params=["base"], ranges={"base": (200, 400, 50)},
             trials=4, monte_carlo=True, budget=20_000, seed=2, target=1500)
    assert r.method == "monte-carlo"
    exact = exact_pair(r.best, "threshold-300", target=1500).score
    assert abs(r.rechecked_score - exact) <= 4 * r.rechecked_se


def test_member_names_are_the_registry_names():
    assert member("ai", {"base": 300}) == "ai"  # the defaults are not spelled out


def test_cli_json_and_out(capsys, tmp_path):
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--trials", "6",
                                      "--range", "threshold=200:500:50", "--target", "1500",
                                      "--seed", "1", "--json", "--out", str(tmp_path / "t")])
    assert code == 0, err
    d = json.loads(out)
    assert d["best"].startswith("threshold-") and d["trials"] == 6
    assert (tmp_path / "t" / "summary.parquet").exists()


@pytest.mark.parametrize(("argv", "needle"), [
    (["tune", "bogus", "--against", "ai"], "unknown family"),
    (["tune", "ai", "--against", "ai", "--params", "bogus"], "no parameter"),
    (["tune", "ai", "--against", "ai", "--params", "base,base"], "twice"),
    (["tune", "ai", "--against", "ai", "--range", "base=1:2"], "NAME=LOW:HIGH:STEP"),
    (["tune", "ai", "--against", "ai", "--range", "base=200:610:50"], "multiple of step"),
    (["tune", "ai", "--against", "ai", "--range", "base=0:600:50"], "within"),
    (["tune", "ai", "--against", "ai", "--params", "base", "--range", "step=0:100:50"],
     "not a tuned parameter"),
    (["tune", "ai", "--against", "optimal"], "penta"),
    (["tune", "ai", "--against", "ai", "--trials", "0"], "--trials"),
    (["tune", "ai"], "--against"),
])
def test_bad_input(capsys, tmp_path, argv, needle):
    code, _, err = run_cli(capsys, [*argv, "--out", str(tmp_path / "x")])
    assert code == 2 and err.startswith("error: ") and needle in err, err
    assert not (tmp_path / "x").exists()
