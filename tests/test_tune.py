"""The tuner: a small space is enumerated and its exact winner is the best member
(checked against a full scan); a large one is searched, and says so; reproducibly, with
both objectives; bad input."""

from __future__ import annotations

import json
import math

import pytest
from cli_helpers import run_cli

from dicelab.errors import UserError
from dicelab.farkle.exact import exact_pair
from dicelab.stats import ALPHA, holm, two_sided_p
from dicelab.tune import member, parse_ranges, space_size, tune


def test_a_small_space_is_enumerated_and_its_winner_is_the_best_member():
    """Every threshold-T, T = 100..800, against ai at 2,000: the scan's best is the
    tuner's (the space has 15 members: all are evaluated)."""
    scan = {t: exact_pair(f"threshold-{t}", "ai", target=2000).score
            for t in range(100, 801, 50)}
    r = tune("threshold", ["ai"], ranges={"threshold": (100, 800, 50)}, target=2000)
    best = max(scan, key=scan.get)
    assert (r.search, r.members, r.evaluated, r.trials, r.proven_best) == \
        ("enumerated", 15, 15, None, True)
    assert r.best == f"threshold-{best}"
    assert r.best_score == pytest.approx(scan[best], abs=1e-12)
    assert r.rechecked_score == r.best_score and r.rechecked_score_se == 0.0  # no winner's curse
    assert sorted(r.candidates["policy"]) == sorted(f"threshold-{t}" for t in scan)
    assert (r.candidates["score_se"] == 0.0).all()


def test_the_readme_example_finds_the_exact_optimum():
    """``tune threshold --against ai --target 3000``: threshold-250 at 0.446043, the best
    of the 40 thresholds (a search of 10 trials found threshold-300)."""
    r = tune("threshold", ["ai"], target=3000)
    assert r.evaluated == r.members == 40 and r.proven_best
    assert r.best == "threshold-250"
    assert r.best_score == pytest.approx(0.446043, abs=5e-7)


def test_a_large_space_is_searched_and_says_what_it_covered():
    r = tune("ai", ["threshold-300"], params=["base", "two-dice"], trials=6, seed=5,
             target=1500)
    assert r.members == space_size(r.ranges) == 19 * 9
    assert r.search == "cma-es" and r.trials == 6 and not r.proven_best
    assert 1 <= r.evaluated <= 6 and r.candidates["policy"].is_unique
    assert r.best_score == r.candidates["score"].max()


def test_ties_with_the_best_are_listed():
    """With no step to rise by (step=0), ai's max-steps changes nothing: its four members
    are one policy, and all tie."""
    r = tune("ai", ["threshold-300"], params=["step", "max-steps"],
             ranges={"step": (0, 0, 50), "max-steps": (0, 3, 1)}, target=1000)
    assert r.evaluated == 4 and len(r.tied_members) == 3 and r.best not in r.tied_members


def test_monte_carlo_members_equal_on_the_same_dice_are_listed_as_ties():
    """The ai members of the test above play alike, on the same dice: equal scores, a tie;
    members that play differently are not listed."""
    r = tune("ai", ["threshold-300"], params=["step", "max-steps"],
             ranges={"step": (0, 0, 50), "max-steps": (0, 2, 1)}, monte_carlo=True,
             budget=16_384, seed=1, target=1000)
    assert r.measured and r.best_score_se > 0
    assert r.evaluated == 3 and len(r.tied_members) == 2 and r.best not in r.tied_members
    r = tune("threshold", ["ai"], ranges={"threshold": (250, 2000, 1750)},
             monte_carlo=True, budget=16_384, seed=1, target=1000)
    assert r.candidates["score"].nunique() == 2 and r.tied_members == []


def test_monte_carlo_has_no_standard_error_from_one_unit():
    """The units are chunks of games: 16 of at least 16 games for a budget under 16 x
    8,192 (see test_tournament); 19 games are one chunk and a short one, 20 two units."""
    r = tune("threshold", ["ai"], ranges={"threshold": (300, 300, 50)}, monte_carlo=True,
             budget=19, seed=1, target=1000)
    assert math.isnan(r.best_score_se) and math.isnan(r.rechecked_score_se)
    r = tune("threshold", ["ai"], ranges={"threshold": (300, 300, 50)}, monte_carlo=True,
             budget=20, seed=1, target=1000)
    assert r.best_score_se > 0


@pytest.mark.parametrize("budget, units", [(1, None), (19, None), (2_000, 16)])
def test_monte_carlo_without_a_standard_error_names_no_best(capsys, budget, units):
    """Scores without a standard error (one unit of games per seating) cannot tell the
    members apart, however different: every member is tied with the highest, in the
    JSON and the text; from two units on the scores are measured and the best named."""
    measured = units is not None
    argv = ["tune", "threshold", "--against", "ai", "--range", "threshold=250:2000:1750",
            "--monte-carlo", "--budget", str(budget), "--seed", "1", "--target", "1000"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["evaluated"] == 2 and d["proven_best"] is False
    assert (d["best_score_se"] is not None) == measured
    assert len(d["tied_members"]) == (0 if measured else 1)
    assert d["best"] not in d["tied_members"]
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    assert ("no standard error (one unit of games per seating), so "
            "no best: all 2 members evaluated tie" in out) != measured
    assert ("highest score: threshold-" in out) != measured
    assert ("best found: threshold-" in out) == measured
    # the SE says how many units it comes from
    assert (f"SE: its standard error over {units} chunks of games per opponent" in out) \
        == measured
    assert "from so few chunks the SE is itself rough" not in out


def test_a_standard_error_from_few_units_says_it_is_rough(capsys):
    """40 games per seating are three units (16, 16 and 8 games): an SE, a rough one."""
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--range",
                                      "threshold=250:2000:1750", "--monte-carlo", "--budget",
                                      "40", "--seed", "1", "--target", "1000"])
    assert code == 0, err
    text = " ".join(out.split())
    assert "SE: its standard error over 3 chunks of games per opponent" in text
    assert "from so few chunks the SE is itself rough" in text


@pytest.mark.parametrize("budget, chunk, units", [(19, 16, 1), (40, 16, 3),
                                                  (20_000, 1_250, 16)])
def test_monte_carlo_records_its_budget_and_chunks(budget, chunk, units):
    """The budget and its chunk size are part of what the seed means: the JSON records
    them (null when exact), and the units the SEs come from follow from them."""
    r = tune("threshold", ["threshold-300"], ranges={"threshold": (300, 300, 50)},
             monte_carlo=True, budget=budget, seed=1, target=200)
    d = r.to_dict()
    assert (d["budget"], d["chunk_games"], r.units) == (budget, chunk, units)
    d = tune("threshold", ["threshold-300"], ranges={"threshold": (300, 300, 50)},
             target=200).to_dict()
    assert d["budget"] is None and d["chunk_games"] is None


def test_a_tune_knows_the_kernels_that_played_it():
    """The manifest's ``kernel`` (dicelab.results.save_run) comes from ``kernels``: the
    game kernels of the Monte Carlo games, each once; none for an exact tune, which
    plays no game (its manifest had no kernel at all)."""
    mc = tune("threshold", ["threshold-300"], ranges={"threshold": (200, 300, 100)},
              monte_carlo=True, budget=40, seed=1, target=200)
    assert mc.kernels == ("general",)
    exact = tune("threshold", ["threshold-300"], ranges={"threshold": (200, 300, 100)},
                 target=200)
    assert exact.kernels == ()


def test_the_chunk_count_is_said_when_the_recheck_has_no_spread(capsys):
    """Scores without spread (threshold-300 wins all 20 games against threshold-10000 at
    1,000, in the search and on fresh dice) leave the SEs n/a; the caption still says
    how many chunks they come from (it left the count out)."""
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "threshold-10000",
                                      "--range", "threshold=300:300:50", "--monte-carlo",
                                      "--budget", "20", "--seed", "1", "--target", "1000"])
    assert code == 0, err
    text = " ".join(out.split())
    assert "on fresh dice 100.0000% (SE n/a)" in text
    assert "SE: its standard error over 2 chunks of games per opponent" in text


def test_scores_without_spread_over_many_chunks_do_not_ask_for_a_larger_budget(capsys):
    """Every chunk won against threshold-10000 (at 1,000): no spread, no SE, over 16
    chunks; a larger budget would not give one, and the report does not say it would."""
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "threshold-10000",
                                      "--range", "threshold=300:300:50", "--monte-carlo",
                                      "--budget", "2000", "--seed", "2", "--target", "1000"])
    assert code == 0, err
    text = " ".join(out.split())
    assert ("its score has no standard error (all 16 chunks of games scored alike against "
            "the field)") in text
    assert "larger --budget" not in text and "one unit" not in text


def test_a_field_policy_beaten_in_every_game_leaves_the_best_named(capsys):
    """threshold-10000 is beaten in every game at 1,000 (no spread against it): the
    field's score is measured over its units, all opponents together, so the member that
    plays ai better is named best and the other measured worse; with threshold-10000
    alone every member wins every game, and all tie (no difference, not no test)."""
    argv = ["tune", "threshold", "--range", "threshold=250:2000:1750", "--monte-carlo",
            "--budget", "2000", "--seed", "1", "--target", "1000", "--json"]
    code, out, err = run_cli(capsys, [*argv, "--against", "threshold-10000", "--against", "ai"])
    assert code == 0, err
    d = json.loads(out)
    assert d["per_opponent"]["threshold-10000"]["score"] == 1.0
    assert d["best"] == "threshold-250" and d["tied_members"] == [] and not d["all_tied"]
    assert d["best_score_se"] > 0
    argv[3], argv[8] = "threshold=300:450:150", "2"
    code, out, err = run_cli(capsys, [*argv, "--against", "threshold-10000"])
    assert code == 0, err
    d = json.loads(out)
    assert d["best_score"] == 1.0 and d["all_tied"] and d["tied_members"] == ["threshold-450"]


def test_a_difference_the_same_in_every_unit_is_judged_by_the_sign_test():
    """No spread in a member's paired difference: the sign test where it differs (all
    units on one side), no test where it does not, or from one unit."""
    from dicelab.stats import Estimate, unit_p

    assert unit_p(Estimate(0.25, math.nan, 100), 16) == pytest.approx(2.0 ** -15)
    assert unit_p(Estimate(-0.25, math.nan, 100), 6) == pytest.approx(2.0 ** -5)
    assert math.isnan(unit_p(Estimate(-0.25, math.nan, 100), 5))  # could not reject: none
    assert unit_p(Estimate(0.0, math.nan, 100), 16, 0.5) == pytest.approx(2.0 ** -15)
    assert math.isnan(unit_p(Estimate(0.0, math.nan, 100), 16))
    assert math.isnan(unit_p(Estimate(0.25, math.nan, 100), 1))
    with_spread = Estimate(0.25, 0.1, 100, df=15)
    assert unit_p(with_spread, 16) == pytest.approx(two_sided_p(with_spread))


def test_the_search_is_reproducible():
    runs = [tune("ai", ["threshold-300"], params=["base", "two-dice"], trials=8, seed=5,
                 target=1500).candidates for _ in range(2)]
    assert runs[0].equals(runs[1])


def test_monte_carlo_candidates_carry_standard_errors_and_the_winner_is_rechecked():
    r = tune("ai", ["threshold-300"], params=["base"], ranges={"base": (200, 400, 50)},
             monte_carlo=True, budget=50_000, seed=2, target=1500)
    assert r.method == "monte-carlo" and r.search == "enumerated" and not r.proven_best
    assert (r.candidates["score_se"] > 0).all() and r.best_score_se > 0
    exact = exact_pair(r.best, "threshold-300", target=1500).score
    assert abs(r.rechecked_score - exact) <= 4 * r.rechecked_score_se
    # every candidate's estimate is within its own error of the exact score
    for name, score, se in r.candidates[["policy", "score", "score_se"]].itertuples(
            index=False):
        assert abs(score - exact_pair(name, "threshold-300", target=1500).score) <= 4 * se


def test_member_names_are_the_registry_names():
    assert member("ai", {"base": 300}) == "ai"  # the defaults are not spelled out


def test_cli_reports_the_coverage(capsys, tmp_path):
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai",
                                      "--range", "threshold=200:500:50", "--target", "1500",
                                      "--json", "--out", str(tmp_path / "t")])
    assert code == 0, err
    d = json.loads(out)
    assert d["best"].startswith("threshold-") and d["evaluated"] == d["members"] == 7
    assert d["search"] == "enumerated" and d["proven_best"] is True
    assert (tmp_path / "t" / "summary.parquet").exists()
    code, out, err = run_cli(capsys, ["tune", "ai", "--params", "base,two-dice", "--against",
                                      "threshold-300", "--trials", "4", "--target", "1000",
                                      "--seed", "1"])
    assert code == 0, err
    assert "of 171 members evaluated; the best found is not proven best" in out
    assert "best found: ai" in out


def test_the_json_carries_every_candidate_the_table_shows(capsys):
    """The text's table of the best candidates and ``--json``'s ``candidates`` give the
    same members and scores (the JSON had only the winner's)."""
    argv = ["tune", "threshold", "--against", "ai", "--range", "threshold=200:500:50",
            "--target", "1000"]
    code, text, err = run_cli(capsys, argv)
    assert code == 0, err
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    d = json.loads(out)
    rows = {c["params"]["threshold"]: c for c in d["candidates"]}
    assert sorted(rows) == list(range(200, 501, 50))
    assert all(c["policy"] == f"threshold-{t}" for t, c in rows.items())
    shown = [line.split("\u2502")[1:3] for line in text.splitlines() if "%" in line
             and line.count("\u2502") == 3]
    assert len(shown) == 7
    for t, score in shown:
        assert f"{100 * rows[int(t)]['score']:.4f}%" == score.strip()
    assert max(rows.values(), key=lambda c: c["score"])["policy"] == d["best"]


@pytest.mark.parametrize(("extra", "refused"), [
    # threshold=200:500:50: 7 members, evaluated whole whatever --trials says, exactly
    (["--trials", "5"], "--trials is for the search of a space of more than 50 members; "
                        "this one has 7 members"),
    (["--trials", "60"], "--trials is for the search"),  # the default, given
    (["--seed", "1"], "--seed is for --monte-carlo and the search of a large space"),
    (["--monte-carlo", "--budget", "20", "--trials", "5"], "--trials is for the search"),
    ([], None),
    (["--monte-carlo", "--budget", "20", "--seed", "1"], None),  # the dice read the seed
])
def test_an_option_a_small_space_does_not_read_is_one_error_line(capsys, tmp_path, extra,
                                                                 refused):
    """A space evaluated whole takes no --trials, and its exact evaluation draws nothing
    from a seed: both were accepted and silently ignored (the seed reported)."""
    out_dir = tmp_path / "t"
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "threshold-300",
                                      "--range", "threshold=200:500:50", "--target", "200",
                                      *extra, "--json", "--out", str(out_dir)])
    if refused is None:
        d = json.loads(out)
        assert code == 0 and d["search"] == "enumerated" and d["evaluated"] == 7
        assert (d["seed"] is None) == ("--monte-carlo" not in extra)  # null: none drawn
        assert "--seed" not in extra or d["seed"] == 1
        return
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"error: {refused}") and not out_dir.exists()


def test_a_large_space_reads_trials_and_seed():
    """ai's base and two-dice, 171 members: --trials sets the search, the seed its
    samples; trials as many as the members evaluate it whole, which reads no seed."""
    r = tune("ai", ["threshold-300"], params=["base", "two-dice"], trials=3, seed=1,
             target=200)
    assert (r.search, r.trials, r.seed) == ("cma-es", 3, 1) and r.evaluated <= 3
    with pytest.raises(UserError, match="--seed is for --monte-carlo"):
        tune("ai", ["threshold-300"], params=["base", "two-dice"], trials=171, seed=1,
             target=200)


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
    (["tune", "threshold", "--against", "ai", "--against", "ai"], "named twice"),
    (["tune", "threshold", "--against", "ai", "--against", "ai:base=300", "--monte-carlo"],
     "named twice (ai and ai:base=300 are both ai)"),
    (["tune", "ai"], "--against"),
])
def test_bad_input(capsys, tmp_path, argv, needle):
    code, _, err = run_cli(capsys, [*argv, "--out", str(tmp_path / "x")])
    assert code == 2 and err.startswith("error: ") and needle in err, err
    assert not (tmp_path / "x").exists()


PENTA_EXAMPLES = "docs/examples/policies/penta_rules.py"


def test_tune_searches_a_users_penta_family_by_simulation(capsys, tmp_path):
    out = tmp_path / "tuned"
    argv = ["tune", f"{PENTA_EXAMPLES}:keep_high", "--against", "greedy", "--monte-carlo",
            "--budget", "100", "--range", "high=5:6:1", "--seed", "3"]
    code, text, err = run_cli(capsys, [*argv, "--json", "--out", str(out)])
    assert code == 0, err
    r = json.loads(text)
    assert r["game"] == "penta" and r["method"] == "monte-carlo" and r["target"] is None
    assert r["search"] == "enumerated" and r["evaluated"] == r["members"] == 2
    assert r["best"].startswith(f"{PENTA_EXAMPLES}:keep_high")
    assert 0 <= r["best_score"] <= 1 and (out / "manifest.json").exists()
    # the same seed, the same candidates' scores (the same dice for every candidate)
    code, again, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    assert json.loads(again)["best_score"] == r["best_score"]


@pytest.mark.parametrize("extra, why", [
    ([], "add --monte-carlo"),
    (["--monte-carlo", "--target", "1000"], "--target applies to Farkle only"),
    (["--monte-carlo", "--range", "high=1:9:1"], "within 2..6"),
])
def test_tune_refuses_what_a_penta_family_cannot_do(capsys, tmp_path, extra, why):
    out = tmp_path / "tuned"
    code, text, err = run_cli(capsys, ["tune", f"{PENTA_EXAMPLES}:keep_high", "--against",
                                       "greedy", "--budget", "100", *extra, "--out",
                                       str(out)])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert why in err and not text and not out.exists()


def test_tune_refuses_a_penta_policy_without_a_space(capsys):
    code, _, err = run_cli(capsys, ["tune", f"{PENTA_EXAMPLES}:chase_penta", "--against",
                                    "greedy", "--monte-carlo"])
    assert code == 2 and "no parameter space to tune" in err, err


def test_one_member_without_a_standard_error_says_so_without_a_tie(capsys):
    """A space of one member: nothing to tie with, still no standard error to report."""
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--range",
                                      "threshold=300:300:50", "--monte-carlo", "--budget",
                                      "16", "--seed", "1", "--target", "1000"])
    assert code == 0, err
    assert "no standard error (one unit of games per seating); a " \
        "larger --budget gives one" in out
    assert "highest score: threshold-300" in out and "tie" not in out.split("score:")[0]


def test_tune_refuses_a_farkle_policy_without_a_space_by_what_it_is(capsys, tmp_path):
    """A bank rule without a space is told to give it one; a policy that decides move by
    move has no bank rule to give one to."""
    mine = tmp_path / "mine.py"
    mine.write_text("def rule(my, opp, turn_points, dice_left):\n"
                    "    return turn_points >= 300\n"
                    "def mover(state):\n"
                    "    return None\n")
    for name, says in (("rule", "give its bank rule one"),
                       ("mover", "not a policy that decides move by move")):
        code, out, err = run_cli(capsys, ["tune", f"{mine}:{name}", "--against",
                                          "threshold-300", "--budget", "100"])
        assert (code, out) == (2, "") and err.count("\n") == 1 and says in err, err


def test_monte_carlo_lists_the_members_within_noise_of_the_best():
    """Members the games cannot tell from the best (a paired test of each one's difference,
    Holm-corrected) are tied with it; members measured worse are not; the text marks
    each candidate."""
    r = tune("threshold", ["ai"], ranges={"threshold": (250, 400, 50)}, monte_carlo=True,
             budget=20_000, seed=1, target=1000)
    c = r.candidates.set_index("policy")
    assert r.measured and not r.all_tied
    assert math.isnan(c.loc[r.best, "p_holm"])  # the best is not compared with itself
    others = c.drop(index=r.best)
    # tied exactly when Holm does not reject no difference at 5%
    assert sorted(r.tied_members) == sorted(others.index[~(others["p_holm"] < ALPHA)])
    assert 0 < len(r.tied_members) < len(others)  # a near one tied, a far one not
    assert (others["diff_se"] > 0).all()
    assert (c["vs_best"] == ["best" if p == r.best else "tie" if p in r.tied_members
                              else "worse" for p in c.index]).all()
    # the p-values are Holm-corrected over the members compared
    assert others["p_holm"].tolist() == pytest.approx(holm(others["p_value"].tolist()))
    assert (others["p_holm"] >= others["p_value"]).all()
    assert (others["p_holm"] > others["p_value"]).any()


def test_monte_carlo_says_when_every_member_ties_with_the_best(capsys):
    """Two members whose scores differ by less than their noise: no best is named, in the
    JSON (all_tied) and the text; exact mode names the best of the same two."""
    argv = ["tune", "threshold", "--against", "ai", "--range", "threshold=250:300:50",
            "--target", "1000"]
    mc = ["--monte-carlo", "--budget", "20000", "--seed", "1"]
    code, out, err = run_cli(capsys, [*argv, *mc, "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["all_tied"] is True and d["alpha"] == ALPHA and d["best_score_se"] > 0
    assert d["tied_members"] == [p for p in ("threshold-250", "threshold-300")
                                 if p != d["best"]]
    assert {c["policy"]: c["vs_best"] for c in d["candidates"]} == {
        p: "highest" if p == d["best"] else "tie" for p in ("threshold-250", "threshold-300")}
    code, out, err = run_cli(capsys, [*argv, *mc])
    assert code == 0, err
    assert "no best: every member evaluated is tied with the highest score" in out
    assert "highest │" in out and "best │" not in out  # the table's vs best column
    assert "highest score: threshold-" in out and "best found" not in out
    code, out, err = run_cli(capsys, [*argv, "--json"])
    d = json.loads(out)
    assert d["all_tied"] is False and d["alpha"] is None and d["tied_members"] == []


@pytest.mark.parametrize("extra, why", [
    (["--budget", "5000"], "--budget applies to --monte-carlo only"),
    (["--budget", "100000"], "--budget applies to --monte-carlo only"),  # the default, named
    (["--range", "threshold=200:400:50", "--range", "threshold=250:300:50"],
     "--range threshold: given twice"),
    (["--range", "threshold=200:400:50", "--range", " threshold =200:400:50"],
     "--range threshold: given twice"),
])
def test_tune_refuses_an_option_it_would_ignore(capsys, tmp_path, extra, why):
    """An exact tune plays no games, and a second range of a parameter would replace the
    first: both are errors, before any work, not options silently dropped."""
    out = tmp_path / "tuned"
    code, text, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--target",
                                       "1000", *extra, "--out", str(out)])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert why in err and not text and not out.exists()


def test_ranges_of_different_parameters_are_taken():
    assert parse_ranges(["base=300:350:50", "two-dice=0:50:50"]) == {
        "base": (300, 350, 50), "two-dice": (0, 50, 50)}
    assert parse_ranges([]) == {}
    with pytest.raises(UserError, match="given twice"):
        parse_ranges(["base=300:350:50", "base=300:350:50"])


def test_a_budget_is_taken_with_monte_carlo_only():
    r = tune("threshold", ["ai"], ranges={"threshold": (300, 350, 50)}, monte_carlo=True,
             budget=300, seed=1, target=1000)
    assert r.evaluated == 2
    with pytest.raises(UserError, match="--monte-carlo only"):
        tune("threshold", ["ai"], ranges={"threshold": (300, 350, 50)}, budget=300, seed=1,
             target=1000)


def test_an_enumerated_winner_is_called_the_best_of_its_space_not_of_the_family(capsys):
    """Every member of a --range evaluated exactly: the winner is the best of that range,
    which the text names (a member outside it may score higher)."""
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--range",
                                      "threshold=300:400:50", "--target", "1000"])
    assert code == 0, err
    flat = " ".join(out.split())
    assert "the best of the 3 members of the space (threshold 300..400 step 50)" in flat
    assert "of the family" not in flat and "rules default, target 1,000, ending last-round" in flat
    code, out, err = run_cli(capsys, ["tune", "threshold", "--against", "ai", "--range",
                                      "threshold=300:400:50", "--target", "1000", "--ending",
                                      "first-to-bank", "--json"])
    assert code == 0 and json.loads(out)["ending"] == "first-to-bank", err
