"""Head-to-head comparisons: pair seeds, scores, verdicts, the CLI."""

from __future__ import annotations

import json
import math

import pytest
from cli_helpers import run_cli
from scipy.stats import t as t_dist

from dicelab.cli.main import main
from dicelab.compare import Comparison, PairResult, compare, pair_seed
from dicelab.errors import UserError
from dicelab.simulate import simulate


def test_each_pair_replays_alone_with_its_recorded_seed():
    c = compare(["threshold-300", "ai", "threshold-600"], games=30_000, seed=9)
    assert [(p.policy, p.opponent) for p in c.pairs] == [
        ("threshold-300", "ai"), ("threshold-300", "threshold-600"), ("ai", "threshold-600")]
    assert len({p.seed for p in c.pairs}) == 3
    for i, p in enumerate(c.pairs):
        assert p.seed == pair_seed(9, i)
        alone = simulate(p.policy, [p.opponent], games=30_000, seed=p.seed).to_dict()
        assert (alone["seats"][0]["wins"], alone["seats"][0]["ties"]) == (p.wins, p.ties)
        assert alone["seats"][1]["wins"] == p.losses
    # same seed, same comparison
    again = compare(["threshold-300", "ai", "threshold-600"], games=30_000, seed=9)
    assert [(p.wins, p.ties) for p in again.pairs] == [(p.wins, p.ties) for p in c.pairs]


def test_score_interval_and_verdicts():
    p = PairResult("a", "b", games=1000, wins=500, ties=100, seed=1)
    assert p.losses == 400 and p.score == pytest.approx(0.55)
    # per-game outcome x in {0, 1/2, 1}: var = E[x^2] - E[x]^2
    var = (500 + 0.25 * 100) / 1000 - 0.55**2
    assert p.score_se == pytest.approx(math.sqrt(var / 1000))
    assert p.verdict == "better"
    assert PairResult("a", "b", 1000, 400, 100, 1).verdict == "worse"
    assert PairResult("a", "b", 1000, 450, 100, 1).verdict == "tie"  # exactly 1/2
    assert PairResult("a", "b", 1000, 495, 10, 1).verdict == "tie"


def test_games_without_spread_give_an_interval_not_a_point():
    from scipy.stats import binomtest

    from dicelab.stats import wilson_interval

    # one game: no standard error; the interval is the exact one of one game won
    one = PairResult("a", "b", games=1, wins=1, ties=0, seed=1)
    assert math.isnan(one.score_se)
    assert one.score_ci95 == pytest.approx((0.025, 1.0))
    assert one.verdict == "tie"
    assert PairResult("a", "b", 1, 0, 0, 1).verdict == "tie"
    assert PairResult("a", "b", 1, 0, 1, 1).verdict == "tie"
    # every game won: SE 0, yet the interval has width; few games decide nothing
    lo, hi = PairResult("a", "b", 2, 2, 0, 1).score_ci95
    assert lo < 0.5 < hi == 1.0
    assert PairResult("a", "b", 2, 0, 0, 1).verdict == "tie"
    assert PairResult("a", "b", 2, 0, 2, 1).score_ci95 == wilson_interval(1, 2)  # two ties
    assert PairResult("a", "b", 2, 0, 2, 1).verdict == "tie"
    assert PairResult("a", "b", 200, 200, 0, 1).verdict == "better"
    assert PairResult("a", "b", 200, 0, 0, 1).verdict == "worse"
    # every game won or lost: the exact interval, deciding from 6 games on, as the sign
    # test does (p = 2^(1 - n))
    for n in range(1, 12):
        for wins in (0, n):
            p = PairResult("a", "b", n, wins, 0, 1)
            ci = binomtest(wins, n).proportion_ci(0.95, method="exact")
            assert p.score_ci95 == pytest.approx((ci.low, ci.high))
            assert (p.verdict != "tie") == (n >= 6) == (binomtest(wins, n).pvalue < 0.05)


def test_few_games_with_spread_take_a_t_interval():
    """With spread, a t interval on games - 1 degrees of freedom within [0, 1]: from few
    games a normal one calls a winner the exact test does not (5 of 6 won: p = 0.22; 26
    of 40: p = 0.08)."""
    from scipy.stats import binomtest, t

    for games, wins, ties in ((6, 5, 0), (40, 26, 0), (10, 6, 0), (10, 9, 0), (12, 8, 3),
                              (1000, 500, 100)):
        p = PairResult("a", "b", games, wins, ties, 1)
        half = float(t.ppf(0.975, games - 1)) * p.score_se
        assert p.score_ci95 == pytest.approx((max(p.score - half, 0.0),
                                              min(p.score + half, 1.0)))
    for games, wins in ((6, 5), (40, 26)):
        assert binomtest(wins, games).pvalue > 0.05
        assert PairResult("a", "b", games, wins, 0, 1).verdict == "tie"
    assert PairResult("a", "b", 10, 9, 0, 1).verdict == "better"
    assert PairResult("a", "b", 10, 0, 1, 1).score_ci95[0] == 0.0


def test_cli_one_game_is_no_verdict(capsys):
    main(["compare", "threshold-300", "ai", "-n", "1", "--target", "1000", "--seed", "4",
          "--json"])
    pair = json.loads(capsys.readouterr().out)["pairs"][0]
    assert pair["score_se"] is None and pair["verdict"] == "tie"
    lo, hi = pair["score_ci95"]
    assert lo < 0.5 < hi


def test_mean_scores_are_complementary_and_verdicts_follow_the_interval():
    c = compare(["threshold-300", "threshold-350", "threshold-2000"], games=20_000, seed=3)
    ms = c.mean_scores()
    assert sum(ms.values()) == pytest.approx(1.5)  # three pairings, one point each
    for p in c.pairs:
        lo, hi = p.score_ci95
        assert p.verdict == ("tie" if lo <= 0.5 <= hi else "better" if lo > 0.5 else "worse")
    # banking only at 2000 loses clearly to both
    assert [p.verdict for p in c.pairs if p.opponent == "threshold-2000"] == ["better"] * 2


def _comparison(pairs: list[PairResult], method: str = "monte-carlo") -> Comparison:
    names = list(dict.fromkeys(n for p in pairs for n in (p.policy, p.opponent)))
    return Comparison("farkle", names, "default", 1000, 1, 100, pairs, 0.0, method=method)


def test_mean_scores_carry_their_intervals():
    """The ranking line's mean scores come with 95% intervals: the pairs' variances add
    (independent games), and a policy in one pair has that pair's interval."""
    ab, ac, bc = (PairResult("a", "b", 400, 210, 20, 1), PairResult("a", "c", 400, 300, 0, 2),
                  PairResult("b", "c", 400, 200, 0, 3))
    c = _comparison([ab, ac, bc])
    ms, ci = c.mean_scores(), c.mean_score_ci95()
    q = t_dist.ppf(0.975, 399)  # t on games - 1, as each pair's own interval
    half = q * math.sqrt(ab.score_se ** 2 + ac.score_se ** 2) / 2
    assert ci["a"] == pytest.approx((ms["a"] - half, ms["a"] + half), rel=1e-12)
    half = q * math.sqrt(ab.score_se ** 2 + bc.score_se ** 2) / 2
    assert ci["b"] == pytest.approx((ms["b"] - half, ms["b"] + half), rel=1e-12)
    assert json.loads(json.dumps(c.to_dict()))["mean_score_ci95"]["c"] == pytest.approx(
        list(ci["c"]))
    # two policies: the pair's own interval, from each side
    two = _comparison([ac]).mean_score_ci95()
    assert two["a"] == ac.score_ci95
    assert two["c"] == pytest.approx((1 - ac.score_ci95[1], 1 - ac.score_ci95[0]))
    # games without spread: never a zero-width interval, within [0, 1]
    sweep = _comparison([PairResult("a", "b", 50, 50, 0, 1), PairResult("a", "c", 50, 50, 0, 2),
                         PairResult("b", "c", 50, 50, 0, 3)]).mean_score_ci95()
    assert sweep["a"][0] < 1.0 == sweep["a"][1]
    assert 0.0 == sweep["c"][0] < sweep["c"][1]
    # exact: nothing to estimate
    assert _comparison([ab], method="exact").mean_score_ci95() is None


@pytest.mark.parametrize("games", [10, 20, 40, 100_000])
def test_mean_score_intervals_use_the_t_quantile_as_the_pairs_do(games):
    """The mean score's interval used the normal quantile while each pair's used t on
    games - 1: from few games it was too narrow. From many the two agree."""
    k = games // 3
    pairs = [PairResult("a", "b", games, k, 1, 1), PairResult("a", "c", games, 2 * k, 0, 2),
             PairResult("b", "c", games, k + 1, 0, 3)]
    c = _comparison(pairs)
    ms, ci = c.mean_scores(), c.mean_score_ci95()
    se = math.sqrt(pairs[0].score_se ** 2 + pairs[1].score_se ** 2) / 2
    t_half, z_half = t_dist.ppf(0.975, games - 1) * se, 1.959963984540054 * se
    assert ci["a"] == pytest.approx((ms["a"] - t_half, ms["a"] + t_half), rel=1e-12)
    # as one pair's own interval: the same quantile on the same SE (where not cut at 0)
    (lo, hi), s = pairs[2].score_ci95, pairs[2].score_se
    assert (hi - lo) / (2 * s) == pytest.approx(t_dist.ppf(0.975, games - 1), rel=1e-12)
    if games >= 100_000:  # many games: within 1e-4 of the normal interval
        assert ci["a"] == pytest.approx((ms["a"] - z_half, ms["a"] + z_half), rel=1e-4)
    else:
        assert ci["a"][1] - ci["a"][0] > 2 * z_half * (1 + 1e-3)


def test_mean_score_intervals_of_pairs_without_spread_keep_their_half_widths():
    """A pair with no spread counts with its own interval's half width, whatever the
    quantile: two such pairs give sqrt(h1^2 + h2^2) / 2; one game a pair too."""
    for games in (1, 5):
        pairs = [PairResult("a", "b", games, games, 0, 1),
                 PairResult("a", "c", games, 0, 0, 2), PairResult("b", "c", games, 0, 0, 3)]
        ms, ci = _comparison(pairs).mean_scores(), _comparison(pairs).mean_score_ci95()
        h = [(hi - lo) / 2 for lo, hi in (p.score_ci95 for p in pairs[:2])]
        half = math.sqrt(h[0] ** 2 + h[1] ** 2) / 2
        assert ci["a"] == pytest.approx((max(ms["a"] - half, 0.0), min(ms["a"] + half, 1.0)),
                                        rel=1e-12)


@pytest.mark.parametrize(("games", "words"), [(1, "1 game per table"),
                                              (2, "2 games per table"),
                                              (1000, "1,000 games per table")])
def test_the_report_counts_the_games_per_table_in_words(capsys, games, words):
    """The title said '1 games per table' (compare -n 1)."""
    from dicelab.cli import render

    pairs = [PairResult("a", "b", games, games, 0, 1)]
    c = Comparison("farkle", ["a", "b"], "default", 1000, 1, games, pairs, 0.0)
    render.show(c)
    out = " ".join(capsys.readouterr().out.split())  # the title may wrap
    assert f"target 1,000, {words} (one table per pair), seed 1" in out


def test_cli_ranking_line_shows_the_intervals(capsys):
    code, out, _err = run_cli(capsys, ["compare", "threshold-300", "ai", "threshold-600",
                                       "-n", "300", "--target", "1000", "--seed", "4"])
    line = out[out.index("mean score over its pairings"):]  # the last line, maybe wrapped
    assert code == 0 and line.count("[") == 3, line
    code, out, _err = run_cli(capsys, ["compare", "threshold-300", "ai", "-n", "300",
                                       "--target", "1000", "--seed", "4", "--json"])
    report = json.loads(out)
    lo, hi = report["mean_score_ci95"]["ai"]
    assert code == 0 and lo < report["mean_score"]["ai"] < hi


@pytest.mark.slow
def test_penta_pairs_and_frame():
    c = compare(["optimal", "greedy"], games=10_000, seed=4)
    assert c.game == "penta" and c.target is None
    (p,) = c.pairs
    assert p.verdict == "better" and p.score > 0.65
    frame = c.to_frame()
    assert list(frame["policy"]) == ["optimal"]
    assert frame.loc[0, "score_ci95_lo"] < frame.loc[0, "score"] < frame.loc[0, "score_ci95_hi"]


@pytest.mark.parametrize(("policies", "message"), [
    (["ai"], "at least two"),
    (["ai", "optimal"], "one game"),
    (["ai", "ai"], "twice"),
    (["ai", "bogus"], "unknown policy"),
])
def test_bad_input(policies, message):
    with pytest.raises(UserError, match=message):
        compare(policies, games=10, seed=1)


def test_cli_json_table_and_out(capsys, tmp_path):
    main(["compare", "threshold-300", "threshold-1000", "-n", "20000", "--seed", "5",
          "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["games_per_table"] == 20000 and d["seed"] == 5 and d["target"] == 10000
    (pair,) = d["pairs"]
    assert pair["verdict"] == "better" and pair["score_ci95"][0] > 0.5
    main(["compare", "threshold-300", "threshold-1000", "-n", "20000", "--seed", "5",
          "--out", str(tmp_path / "cmp")])
    out = capsys.readouterr().out
    assert "head to head" in out and "better" in out
    manifest = json.loads((tmp_path / "cmp" / "manifest.json").read_text())
    assert manifest["pair_seeds"]["threshold-300 vs threshold-1000"] == pair["seed"]
    assert (tmp_path / "cmp" / "summary.parquet").is_file()


def test_cli_errors_are_one_line(capsys, tmp_path):
    code, out, err = run_cli(capsys, ["compare", "ai", "-n", "10"])
    assert out == ""
    assert code == 2 and err.startswith("error:") and err.count("\n") == 1
    code, _, err = run_cli(capsys, ["compare", "ai", "max-ev", "-n", "0",
                                 "--out", str(tmp_path / "never")])
    assert code == 2 and "--games" in err and not (tmp_path / "never").exists()
    code, _, err = run_cli(capsys, ["compare", "ai", "max-ev", "--seed", "-1",
                                    "--out", str(tmp_path / "never")])
    assert code == 2 and "--seed" in err and err.count("\n") == 1
    assert not (tmp_path / "never").exists()


def test_first_to_bank_reaches_every_pair():
    c = compare(["threshold-300", "ai", "threshold-600"], games=5000, seed=2, target=3000,
                ending="first-to-bank")
    assert all(p.ties == 0 for p in c.pairs)  # the first to bank the target wins at once
    assert c.manifest()["rules"]["ending"] == "first-to-bank"
    last = compare(["threshold-300", "ai", "threshold-600"], games=5000, seed=2, target=3000)
    assert sum(p.ties for p in last.pairs) > 0
    assert last.manifest()["rules"]["ending"] == "last-round"


def test_the_ending_is_recorded_in_the_summary_and_its_table(capsys):
    # as simulate's JSON and Parquet rows record it: two comparisons that differ only in
    # the ending must not read the same
    c = compare(["threshold-300", "threshold-600"], games=2000, seed=2, target=3000,
                ending="first-to-bank")
    assert c.to_dict()["ending"] == "first-to-bank"
    assert (c.to_frame()["ending"] == "first-to-bank").all()
    main(["compare", "threshold-300", "threshold-600", "-n", "2000", "--seed", "2",
          "--target", "3000", "--ending", "first-to-bank", "--json"])
    assert json.loads(capsys.readouterr().out)["ending"] == "first-to-bank"


@pytest.mark.parametrize("games", [1, 300])
def test_every_rate_of_the_table_shows_its_interval(capsys, games):
    """The score, the win rate and the tie rate each print with the interval the JSON
    carries (a rate alone, without it, looked exact), from one game on (Wilson)."""
    argv = ["compare", "threshold-300", "ai", "-n", str(games), "--target", "1000",
            "--seed", "4"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    (pair,) = json.loads(out)["pairs"]
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    (row,) = [line for line in out.splitlines() if "│ threshold-300 │" in line]
    for key in ("score", "win_rate", "tie_rate"):
        lo, hi = pair[f"{key}_ci95"]
        assert f"[{100 * lo:.2f}%, {100 * hi:.2f}%]" in row, (key, row)
    assert row.count("[") == 3 and "n/a" not in row
