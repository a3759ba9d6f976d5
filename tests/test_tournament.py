"""Tournaments: balanced tables, common random numbers, estimates against the exact
head to head, Holm verdicts, ratings, reproducibility, CLI and bad input."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from cli_helpers import run_cli
from numba_threads import dicts_by_threads
from tournament_checks import check_places

from dicelab.farkle import kernels as K
from dicelab.farkle.exact import exact_pair
from dicelab.farkle.simulate import simulate_farkle
from dicelab.registry import parse_policy
from dicelab.stats import holm
from dicelab.tournament import lineups, tournament

#: Three names for one behaviour: ai without its adjustments is threshold-300.
SAME = ["threshold-300", "ai:step=0,two-dice=0,one-die=0,chase=0",
        "ai:step=0,two-dice=0,one-die=0,chase=0,per=2000"]


@pytest.mark.parametrize("k", [2, 3, 4, 7])
@pytest.mark.parametrize("seats", [2, 3, 5, 7])
def test_every_policy_sits_in_every_seat_equally_often(k, seats):
    tables = lineups(k, seats)
    for s in range(seats):
        counts = Counter(lineup[s] for _, lineup in tables)
        assert set(counts) == set(range(k)) and len(set(counts.values())) == 1
    # a group's tables share their dice: with enough policies, the rotations of one
    # combination; with fewer policies than seats, one group of rotated seatings
    for g in {g for g, _ in tables}:
        rows = [lineup for gg, lineup in tables if gg == g]
        if k >= seats:
            assert sorted(map(sorted, rows)) == [sorted(rows[0])] * len(rows)
        else:
            assert len(Counter(p for row in rows for p in row).values()) == k


def test_per_turn_streams_play_fair_games_and_swap_the_luck():
    """A stream per turn: the exact score within 4 SE, and the two seatings of a pair
    strongly anti-correlated chunk by chunk (the luck goes with the place in turn order)."""
    a, b = parse_policy("threshold-300"), parse_policy("threshold-500")
    n = 8192 * 24
    ab = simulate_farkle([a, b], games=n, seed=5, per_chunk=True,
                         streams=K.STREAM_PER_TURN, target=3000)
    ba = simulate_farkle([b, a], games=n, seed=5, per_chunk=True,
                         streams=K.STREAM_PER_TURN, target=3000)
    assert ab.kernel == "general"
    exact = exact_pair("threshold-300", "threshold-500", target=3000)
    score = ((ab.stats[0, K.ST_WINS] + ab.stats[0, K.ST_TIES] / 2)
             + (ba.stats[1, K.ST_WINS] + ba.stats[1, K.ST_TIES] / 2)) / (2 * n)
    se = 0.5 / np.sqrt(2 * n)  # at most the independent-games SE
    assert abs(score - exact.score) <= 4 * se
    s1 = ab.chunk_stats[:, 0, K.ST_WINS].astype(float)
    s2 = ba.chunk_stats[:, 1, K.ST_WINS].astype(float)
    assert np.corrcoef(s1, s2)[0, 1] < -0.3


@pytest.mark.slow
@pytest.mark.parametrize("crn", [True, False])
def test_pair_scores_agree_with_the_exact_evaluation(crn):
    policies = ["ai", "threshold-350", "max-ev"]
    t = tournament(policies, games=60_000, seed=3, target=2000, crn=crn)
    for p in t.pairs():
        exact = exact_pair(p.policy, p.opponent, target=2000)
        assert abs(p.score.mean - exact.score) <= 4 * p.score.se, (p, exact.score)
    if crn:
        assert all(p.effective_games_per_game > 1 for p in t.pairs())
    else:
        assert all(p.effective_games_per_game == pytest.approx(1.0) for p in t.pairs())


def test_identical_policies_are_ties_and_ratings_cover_zero():
    """Three names of one behaviour on common dice play every game alike in both
    seatings: every unit's score is exactly a half. Units without spread measure no
    error, so no interval (not a zero-width one, whatever the rounding of the fit)."""
    t = tournament(SAME, games=20_000, seed=8, target=2000)
    assert all(p.verdict == "tie" and p.score.mean == 0.5 and np.isnan(p.score.se)
               for p in t.pairs())
    for s in t.standings():
        assert s.rating == pytest.approx(0.0, abs=1e-9)
        assert np.isnan(s.rating_ci95).all(), s
    # another behaviour beside it: the units vary, every interval is measured
    t = tournament([SAME[0], "threshold-350"], games=20_000, seed=8, target=2000)
    for s in t.standings():
        lo, hi = s.rating_ci95
        assert lo < s.rating < hi, s


def test_a_clearly_better_policy_ranks_first_with_every_verdict():
    t = tournament(["threshold-1000", "max-ev", "threshold-300"], games=20_000, seed=2,
                   target=3000)
    assert t.standings()[0].policy == "max-ev"
    verdicts = {(p.policy, p.opponent): p.verdict for p in t.pairs()}
    assert verdicts[("threshold-1000", "max-ev")] == "worse"
    assert verdicts[("max-ev", "threshold-300")] == "better"


def test_full_tables_have_places_and_ratings():
    t = tournament(["ai", "threshold-300", "max-ev", "threshold-1000"], seats=3,
                   games=10_000, seed=4, target=2000)
    places = {s.policy: s.mean_place.mean for s in t.standings()}
    assert 1 < places["max-ev"] < places["threshold-1000"] < 3
    check_places(t, 3)


def test_standings_are_ranked_by_win_rate_even_where_the_rating_disagrees():
    """At tables of three, ai wins more tables than threshold-300 but finishes behind it
    more often: its rating is lower. The standings follow the win rate, and the table
    says what the rating measures."""
    t = tournament(["ai", "max-ev", "threshold-300"], seats=3, games=10_000, seed=1)
    standing = {s.policy: s for s in t.standings()}
    ai, t300 = standing["ai"], standing["threshold-300"]
    assert ai.win_rate.mean > t300.win_rate.mean and ai.rating < t300.rating
    assert ai.rank < t300.rank
    rates = [s.win_rate.mean for s in t.standings()]
    assert rates == sorted(rates, reverse=True)
    assert [s.rank for s in t.standings()] == [1, 2, 3]


def test_same_seed_same_tournament_whatever_the_threads():
    one, two = dicts_by_threads(lambda: tournament(["ai", "threshold-300"], games=20_000,
                                                   seed=9, target=2000))
    assert one == two


def test_cli_json_out_and_figures(capsys, tmp_path):
    out = tmp_path / "t"
    code, stdout, err = run_cli(capsys, ["tournament", "ai", "threshold-300", "threshold-500",
                                         "-n", "9000", "--target", "2000", "--seed", "1",
                                         "--json", "--out", str(out)])
    assert code == 0, err
    d = json.loads(stdout)
    assert [s["rank"] for s in d["standings"]] == [1, 2, 3]
    assert len(d["pairs"]) == 3
    assert {p.name for p in out.iterdir()} == {"summary.parquet", "manifest.json",
                                                "win-matrix.png", "ratings.png"}
    files = json.loads((out / "manifest.json").read_text())["files"]
    assert files["summary"] == "summary.parquet"
    assert sorted(files["figures"]) == ["ratings.png", "win-matrix.png"]


@pytest.mark.parametrize(("argv", "needle"), [
    (["tournament", "ai"], "at least two"),
    (["tournament", "ai", "optimal"], "one game"),
    (["tournament", "ai", "max-ev", "--seats", "8"], "2 to 7"),
    (["tournament", "ai", "max-ev", "--seats", "1"], "2 to 7"),
    (["tournament", "ai", "optimal-win", "--seats", "3"], "two-seat"),
    (["tournament", "ai", "ai"], "named twice (ai)"),
    (["tournament", "ai", "max-ev", "ai:base=300"], "named twice (ai and ai:base=300 are "
                                                     "both ai)"),
    (["compare", "ai", "ai:base=300"], "compare: a policy is named twice (ai and "
                                       "ai:base=300 are both ai)"),
    (["tournament", "ai", "max-ev", "-n", "0"], "positive"),
])
def test_bad_input(capsys, tmp_path, argv, needle):
    code, _, err = run_cli(capsys, [*argv, "--out", str(tmp_path / "x")])
    assert code == 2 and err.startswith("error: ") and needle in err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("games, units", [(1, 1), (16, 1), (19, 1), (20, 2), (40, 3),
                                          (2_000, 16), (131_072 + 2_047, 16)])
def test_a_tables_units_are_its_chunks(games, units):
    """A table's units are its chunks of games: 8,192 games each, or for a table of fewer
    than 16 such chunks, 16 chunks of at least 16 games; a last chunk under a quarter of
    the others is part of the one before it (a unit of one game beside 8,192 would set
    the spread). Each unit is its group's, whatever the tail did to the count."""
    t = tournament(["threshold-300", "threshold-500", "threshold-1000"], games=games,
                   seed=1, target=1000)
    assert t.chunk_games == min(8192, max(16, -(-games // 16)))
    assert t.strata.tolist() == np.repeat(range(3), units).tolist()
    for u, g in enumerate(t.strata):  # a unit's games are its group's policies' only
        members = {p for table in t.tables if table["group"] == g for p in table["policies"]}
        played = {t.policies[p] for p in np.nonzero(t.units[u, :, 0])[0]}
        assert played == members and len(members) == 2


@pytest.mark.parametrize("games, measured", [(16, False), (19, False), (20, True), (2_000, True)])
def test_one_unit_per_table_gives_no_verdict(games, measured):
    """With one unit of games per table (one chunk: see above) the score has no standard
    error: no p-value, no verdict either way, however far the score is from a half, and no
    rating interval; a second unit gives them all, even from 20 games a table."""
    t = tournament(["threshold-1000", "max-ev"], games=games, seed=1, target=2000)
    (pair,) = t.pairs()
    assert abs(pair.score.mean - 0.5) > 0.1
    if measured:
        assert pair.score.se > 0 and 0 <= pair.p_value <= 1
        assert pair.verdict == ("worse" if pair.p_holm < 0.05 else "tie")
        assert (pair.verdict == "worse") == (games == 2_000)
    else:
        assert np.isnan(pair.score.se) and np.isnan(pair.p_value) and np.isnan(pair.p_holm)
        assert pair.verdict == "n/a"  # far from even, yet unmeasured: neither a tie nor not
    # the ratings' jackknife deletes the same units: an interval only from two on
    rating, ci = t.ratings()
    assert np.isfinite(rating).all() and np.isnan(ci).all() != measured
    if measured:
        assert (ci[:, 0] < rating).all() and (rating < ci[:, 1]).all()


@pytest.mark.parametrize("games, df", [(20, 1), (16_384, 15)])
def test_every_standing_interval_uses_the_units_degrees_of_freedom(games, df):
    """Every interval of a standing is a t interval on the units' degrees of freedom (two
    units of 16 and 4 games: one; 16 units: 15), not a normal one, six times too narrow at
    one."""
    from scipy.stats import t as t_dist

    t = tournament(["threshold-1000", "max-ev"], games=games, seed=1, target=2000)
    q = float(t_dist.ppf(0.975, df))
    for s in t.standings():
        for e in (s.win_rate, s.mean_place):
            assert e.df == df and e.se > 0
            lo, hi = e.bounds  # an interval stays within what the quantity can be
            assert e.ci95 == pytest.approx((max(e.mean - q * e.se, lo),
                                            min(e.mean + q * e.se, hi)))


def test_an_estimate_without_an_interval_says_so(capsys):
    """The text report shows ``[n/a]`` where an estimate has no interval (one unit of
    games per table), not the bare value: rich would take ``[n/a, n/a]`` for a tag."""
    code, out, _ = run_cli(capsys, ["tournament", "ai", "threshold-300", "-n", "16",
                                    "--target", "1000", "--seed", "1"])
    rows = [line for line in out.splitlines() if "│ ai " in line or "threshold-300 │" in line]
    # win rate, tie rate, mean place, rating
    assert code == 0 and rows and all(line.count("[n/a]") == 4 for line in rows[:2])
    code, out, _ = run_cli(capsys, ["tournament", "ai", "threshold-300", "-n", "2000",
                                    "--target", "1000", "--seed", "1"])
    standings = out.split("pairs:")[0]
    rows = [line for line in standings.splitlines() if "│ ai " in line
            or "│ threshold-300 " in line]
    assert code == 0 and "n/a]" not in standings
    assert len(rows) == 2 and all(line.count("[") == 4 for line in rows)


def _two_policy_tournament(ahead: list[int], games: int = 8192):
    """A two-policy tournament of one group whose unit ``u`` saw the first policy finish
    ahead in ``ahead[u]`` of ``games`` games and behind in the rest (no level finish)."""
    from dicelab.tournament import Tournament

    n = len(ahead)
    pair = np.zeros((n, 2, 2, 3))
    for u, a in enumerate(ahead):
        pair[u, 0, 1] = [a, 0, games]
        pair[u, 1, 0] = [games - a, 0, games]
    units = np.zeros((n, 2, 4))
    units[:, :, 0] = games
    units[:, 0, 1] = ahead
    units[:, 1, 1] = games - np.array(ahead)
    units[:, 0, 3] = games - np.array(ahead)
    units[:, 1, 3] = ahead
    return Tournament("farkle", ["a", "b"], 2, n * games, 1, True, "default", 1000, [],
                      units, pair, np.zeros((2, 2, 3)), np.zeros(n, dtype=np.int64), 0.0,
                      games)


@pytest.mark.parametrize("ahead, spread", [([4500, 4500], False), ([4500, 4500, 4500], False),
                                           ([4500, 4501], True), ([4499, 4500, 4501], True)])
def test_units_without_spread_give_no_verdict(ahead, spread):
    """Units that happen to agree exactly (two chunks of games can, by chance) measure no
    error: no p-value, no verdict, no interval, however far the score is from a half;
    units that differ by one game give them all."""
    t = _two_policy_tournament(ahead)
    (pair,) = t.pairs()
    assert pair.score.mean == pytest.approx(sum(ahead) / (8192 * len(ahead)))
    _rating, ci = t.ratings()
    if spread:
        assert pair.score.se > 0 and pair.p_holm < 0.05 and pair.verdict == "better"
        assert np.isfinite(ci).all()
    else:
        assert np.isnan(pair.score.se) and np.isnan(pair.p_value) and pair.verdict == "n/a"
        assert np.isnan(pair.score.ci95).all() and np.isnan(ci).all()
    for s in t.standings():
        assert np.isnan(s.win_rate.se) != spread and np.isnan(s.rating_ci95).all() != spread


@pytest.mark.parametrize("last, finite", [(8191, False), (8190, False), (8192, None)])
def test_a_rating_one_unit_from_infinity_has_no_interval(last, finite):
    """Every finish of b ahead of a in one unit: deleting that unit leaves no finite rating,
    so the jackknife has nothing to measure (it gave [-2,464, 4,511] around 1,024); the
    rating itself stands. Its neighbours: b ahead in two units (an interval), and never
    (no rating at all)."""
    t = _two_policy_tournament([8192] * 15 + [last])
    rating, ci = t.ratings()
    if finite is None:
        assert np.isnan(rating).all() and np.isnan(ci).all()
    else:
        assert rating[0] > 900 and np.isnan(ci).all()
    t = _two_policy_tournament([8192] * 14 + [8191, 8191])
    rating, ci = t.ratings()
    assert rating[0] > 900 and (ci[:, 0] < rating).all() and (rating < ci[:, 1]).all()
    assert ci[0, 0] > 0


@pytest.mark.parametrize("units, verdict", [(5, "n/a"), (6, "better"), (16, "better")])
def test_units_all_alike_give_the_sign_tests_verdict_once_it_can_reject(units, verdict):
    """Units that all give the same score, away from a half, carry no spread for a t test,
    but all lie on one side: the sign test's p-value, 2 ** (1 - units), once it can fall
    below 5% (six units); still no interval."""
    t = _two_policy_tournament([4500] * units)
    (pair,) = t.pairs()
    assert np.isnan(pair.score.se) and np.isnan(pair.score.ci95).all()
    assert pair.verdict == verdict
    assert (pair.p_value == pytest.approx(2.0 ** (1 - units))) == (verdict != "n/a")


@pytest.mark.parametrize("ahead", [[4400, 4500], [4400, 4450, 4500], [4400, 4500] * 3])
def test_a_rating_interval_from_few_units_is_a_t_interval(ahead):
    """With two policies the rating difference is the Elo of the pair's score, so its
    interval must be about the score's, mapped to Elo: a t interval on the units'
    degrees of freedom (a bootstrap over two units gave one about ten times too narrow)."""
    t = _two_policy_tournament(ahead)
    (pair,) = t.pairs()
    rating, ci = t.ratings()

    def elo(s):
        return 400 * np.log10(s / (1 - s)) / 2  # each policy gets half the difference

    lo, hi = pair.score.ci95
    assert rating[0] == pytest.approx(elo(pair.score.mean))
    assert ci[0] == pytest.approx([elo(lo), elo(hi)], rel=0.05)
    assert ci[1] == pytest.approx([-ci[0, 1], -ci[0, 0]])


def test_lopsided_intervals_stay_within_what_the_quantity_can_be():
    """threshold-10000 at a target of 1,000 wins about one game in ten thousand: the
    intervals of the rates stay within [0, 1] and of the mean place within [1, seats]
    (normal ones ran past them), each still around its value."""
    t = tournament(["threshold-300", "threshold-10000"], games=20_000, seed=1, target=1000)
    ranges = {"win_rate": (0.0, 1.0), "tie_rate": (0.0, 1.0), "mean_place": (1.0, 2.0)}
    for s in t.standings():
        for name, (low, high) in ranges.items():
            e = getattr(s, name)
            lo, hi = e.ci95
            assert np.isnan(e.se) or low <= lo <= e.mean <= hi <= high, (name, e)
    (pair,) = t.pairs()
    lo, hi = pair.score.ci95
    assert 0.99 < lo < pair.score.mean and hi == 1.0
    best = t.standings()[0]
    assert best.win_rate.ci95[1] == 1.0 and best.mean_place.ci95[0] == 1.0


@pytest.mark.parametrize("ahead, finite", [([8192, 8192], False), ([8192], False),
                                           ([8191, 8192], True), ([8192, 8191], True)])
def test_no_rating_where_one_policy_finished_ahead_in_every_game(ahead, finite):
    """Bradley-Terry has no finite rating for a policy that finished ahead in every game:
    the ratings are missing (the fit's regularisation printed about ±1,800); one game the
    other way gives them, without an interval: that game is in one unit, and deleting it
    leaves no finite rating (test_a_rating_one_unit_from_infinity_has_no_interval)."""
    t = _two_policy_tournament(ahead)
    rating, ci = t.ratings()
    assert np.isfinite(rating).all() == finite and np.isnan(rating).all() != finite
    if finite:
        assert rating[0] > 0
    assert np.isnan(ci).all()
    assert [s.policy for s in t.standings()] == ["a", "b"]  # ranked by win rate still


def test_one_game_a_table_prints_no_rating(capsys):
    """One game a table: one policy finished ahead both times, so no rating (JSON null,
    the text ``n/a`` alone, not a made-up ±1,800)."""
    argv = ["tournament", "ai", "threshold-300", "-n", "1", "--target", "1000", "--seed", "1"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    standings = json.loads(out)["standings"]
    assert [s["win_rate"] for s in standings] == [1.0, 0.0]
    assert all(s["rating"] is None and s["rating_ci95"] == [None, None] for s in standings)
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    rows = [line for line in out.split("pairs:")[0].splitlines() if line.startswith("│ ")]
    assert len(rows) == 2 and all(line.rstrip("│ ").endswith("n/a") for line in rows)
    assert "1,800" not in out


def test_policies_equal_on_every_count_share_their_rank(capsys):
    """Two names of one policy (max-steps=0 leaves step unused) on common dice mirror
    each other exactly: the same win rate, tie rate and rating, so the same rank, not
    the order given; a third policy ranks after both (1, 1, 3)."""
    same = ["ai:max-steps=0", "ai:max-steps=0,step=0"]
    t = tournament(same, games=300, seed=2, target=1000)
    assert [s.rank for s in t.standings()] == [1, 1]
    t = tournament([*same, "threshold-2000"], games=300, seed=2, target=1000)
    ranks = {s.policy: s.rank for s in t.standings()}
    assert sorted(ranks.values()) == [1, 2, 3]  # different dice per group: no exact tie
    code, out, err = run_cli(capsys, ["tournament", *same, "-n", "300", "--seed", "2",
                                      "--target", "1000", "--json"])
    assert code == 0, err
    assert [s["rank"] for s in json.loads(out)["standings"]] == [1, 1]
    # without common dice the two do not mirror each other, and rank apart
    t = tournament(same, games=300, seed=2, target=1000, crn=False)
    a, b = t.standings()
    assert a.win_rate.mean > b.win_rate.mean and (a.rank, b.rank) == (1, 2)


def test_the_win_matrix_writes_n_a_where_a_score_has_no_interval():
    """Cells without an interval (too few units) say [n/a], as the table does, not
    [nan, nan]; cells with one show it."""
    from dicelab.plots import win_matrix_figure

    s = np.array([[np.nan, 0.6, 0.7], [0.4, np.nan, 0.5], [0.3, 0.5, np.nan]])
    lo, hi = s - 0.01, s + 0.01
    lo[0, 2] = hi[0, 2] = lo[2, 0] = hi[2, 0] = np.nan
    texts = [t.get_text() for t in win_matrix_figure(["a", "b", "c"], s, lo, hi,
                                                     title="t").axes[0].texts]
    assert len(texts) == 6 and not any("nan" in t for t in texts), texts
    assert texts.count("0.700\n[n/a]") == texts.count("0.300\n[n/a]") == 1
    assert "0.600\n[0.590, 0.610]" in texts


@pytest.mark.parametrize("long", [1, 40, 70, 120])
def test_long_policy_names_leave_the_figures_room(long):
    """A policy of the user's is named by its path: the figures grow with the longest
    name, so the matrix's cells and the ratings' axis keep their size (an inch and more a
    cell, three inches of axis), never squeezed into a corner by the tick labels."""
    from dicelab.plots import ratings_figure, win_matrix_figure

    names = ["optimal", "greedy", "p" * long]
    s = np.array([[np.nan, 0.7, 0.9], [0.3, np.nan, 0.8], [0.1, 0.2, np.nan]])
    fig = win_matrix_figure(names, s, s - 0.01, s + 0.01, title="a tournament")
    fig.canvas.draw()
    box = fig.axes[0].get_window_extent()
    assert min(box.width, box.height) / 3 / fig.dpi >= 1.0, (box, long)
    assert all(t.get_window_extent().x0 >= 0 for t in fig.axes[0].get_yticklabels())
    fig = ratings_figure(names, np.array([100.0, 0.0, -100.0]),
                         np.array([[90.0, 110.0], [-10.0, 10.0], [-110.0, -90.0]]),
                         title="a tournament")
    fig.canvas.draw()
    assert fig.axes[0].get_window_extent().width / fig.dpi >= 3.0, long
    assert all(t.get_window_extent().x0 >= 0 for t in fig.axes[0].get_yticklabels())


def test_the_ratings_figure_says_when_a_rating_has_no_interval():
    """A point without a bar is not a rating known exactly: the axis says why."""
    from dicelab.plots import ratings_figure

    r = np.array([10.0, -10.0])
    label = ratings_figure(["a", "b"], r, np.full((2, 2), np.nan),
                           title="t").axes[0].get_xlabel()
    assert " ".join(label.split()).endswith("95% CI; no bar: no interval, too few units)"), label
    label = ratings_figure(["a", "b"], r, np.array([[5.0, 15.0], [-15.0, -5.0]]),
                           title="t").axes[0].get_xlabel()
    assert label.endswith("95% CI)"), label
    # no finite rating at all (one policy ahead in every game): no point, and it says why
    none = np.full(2, np.nan)
    label = " ".join(ratings_figure(["a", "b"], none, np.stack([none, none], axis=1),
                                    title="t").axes[0].get_xlabel().split())
    assert label.endswith("no point: no finite rating, a policy finished ahead in every "
                          "game it played)"), label


@pytest.mark.parametrize("half", [np.nan, 5.0])
@pytest.mark.parametrize("names", [["a", "b"], ["threshold-1000", "threshold-300"],
                                   ["docs/examples/policies/farkle_rules.py:practical",
                                    "max-ev"]])
def test_the_ratings_figure_label_fits_in_the_figure(half, names):
    """The axis label, with or without the note on missing bars, is drawn whole inside
    the figure, beside short names or long (the note ran past both edges)."""
    from dicelab.plots import ratings_figure

    r = np.array([10.0, -10.0])
    from matplotlib.text import Text

    fig = ratings_figure(names, r, np.stack([r - half, r + half], axis=1),
                         title="Farkle tournament, 2 seats, 16 games per table, seed 1")
    fig.canvas.draw()
    ax = fig.axes[0]
    words = {ax.get_xlabel(), *(ax.get_title(loc=w) for w in ("left", "center", "right"))}
    texts = [t for t in fig.findobj(Text) if t.get_text() and t.get_text() in words]
    assert len(texts) == 2 and ("no bar" in " ".join(ax.get_xlabel().split())) == np.isnan(half)
    for text in texts:
        box = text.get_window_extent(fig.canvas.get_renderer())
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (text, box, fig.bbox.width)


def test_a_kept_table_of_another_chunk_layout_is_played_again(tmp_path):
    """An experiment's kept table is reused only if its chunks are this run's units: one
    kept without its chunk size (another version's layout, of the same count of chunks)
    is played again, one kept by this run is read back."""
    from dicelab.experiment_file import CellStore
    from dicelab.seeding import n_chunks, unit_chunk_games

    args = dict(games=40, seed=1, target=1000)
    fresh = tournament(["threshold-300", "max-ev"], **args)
    store = CellStore(tmp_path / "old")
    chunks = n_chunks(40, unit_chunk_games(40))
    for t in range(2):
        store.put(f"table-{t}", {"outcomes": np.zeros((chunks, 2, 5), dtype=np.int64)})
    again = tournament(["threshold-300", "max-ev"], store=store, **args)
    assert np.array_equal(again.units, fresh.units) and fresh.units[:, :, 1].sum() > 0
    assert np.array_equal(again.pair_units, fresh.pair_units)
    kept = {t: store.get(f"table-{t}") for t in range(2)}
    assert all(int(c["chunk_games"]) == unit_chunk_games(40) for c in kept.values())
    for t in range(2):  # this run's cells: read back, not played
        kept[t]["outcomes"][:, :, 0] = 0
        store.put(f"table-{t}", kept[t])
    reused = tournament(["threshold-300", "max-ev"], store=store, **args)
    assert reused.units[:, :, 1].sum() == 0


def test_one_game_per_table_is_said_in_the_singular(capsys):
    """-n 1: 'tables of 1 game' in the table's title and '1 game per table' in the
    figures' (they said '1 games'); more games, plural."""
    for n, words in ((1, "1 game"), (2, "2 games")):
        code, out, err = run_cli(capsys, ["tournament", "threshold-300", "max-ev", "-n",
                                          str(n), "--seed", "1", "--target", "1000"])
        assert code == 0, err
        assert (f"2 tables of {words}, rules default, target 1,000, ending last-round, "
                "seed 1") in " ".join(out.split())
        t = tournament(["threshold-300", "max-ev"], games=n, seed=1, target=1000)
        titles = [" ".join(f.axes[0].get_title(loc=w) for w in ("center", "right"))
                  for f in t.figures().values()]
        assert all(f"{words} per table" in " ".join(x.split()) for x in titles), titles


def test_holm_is_the_step_down_correction_and_leaves_the_collector_as_it_was():
    """Holm by hand (sorted p-values times m, m - 1, ..., a running maximum, at most 1);
    the objects frozen around statsmodels' collection are thawed after it, and a caller's
    own frozen objects stay frozen."""
    import gc

    ps = [0.04, 0.01, math.nan, 0.03, 0.5]
    order = sorted((p, i) for i, p in enumerate(ps) if not math.isnan(p))
    want, top = {}, 0.0
    for k, (p, i) in enumerate(order):
        top = max(top, min(1.0, p * (len(order) - k)))
        want[i] = top
    got = holm(ps)
    assert math.isnan(got[2]) and all(got[i] == pytest.approx(w) for i, w in want.items())
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        holm(ps)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
