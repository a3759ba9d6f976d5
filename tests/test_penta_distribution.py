"""Exact Penta score distributions and the exact head to head: a plain-Python turn-by-turn
enumeration on late cards, the solver's optimum, T. Verhoeff's published anchor, Monte
Carlo agreement, the CLI."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from collections import Counter
from math import factorial

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run_cli
from naive_penta import BOXES, allowed_scores, card_total, immediate_points
from numba_threads import with_threads

from dicelab import dice
from dicelab.cache import cache_path
from dicelab.compare import compare
from dicelab.penta.distribution import cache_key, propagate, score_distribution
from dicelab.penta.head_to_head import exact_pair, exact_seats, seat_outcomes
from dicelab.penta.policies import POLICIES, Scorecard, decision_tables
from dicelab.penta.rules import BOX_NAMES, UPPER_BONUS, get_rules
from dicelab.penta.simulate import MAX_TOTAL, simulate_penta
from dicelab.penta.solver import solve
from dicelab.penta.tables import roll_index

#: T. Verhoeff, optimal solitaire Yahtzee with the free-choice joker (dicelab's
#: ``free-joker``): mean 254.5896, SD 59.61 (published to two decimals).
VERHOEFF_MEAN, VERHOEFF_SD = 254.5896, 59.61
#: How far the SD moves when ties between equal-value options are settled differently:
#: the fixed order (tie tolerance 1e-10) against the plain float argmax (tolerance 0)
#: moves it by 2.2e-8 under free-joker (102,841 optimal decisions differ) and 2.6e-7
#: under seed (109,104), the mean by 0 (benchmarks/bench_penta_distribution.py --ties).
#: Far below the published rounding.
TIE_SD_BOUND = 1e-6

@pytest.fixture(scope="module")
def _store(tmp_path_factory):
    """The module's computed distributions, as cache files (a few kB each)."""
    return tmp_path_factory.mktemp("penta-distributions")


@pytest.fixture
def dist(_store):
    """``dist(policy, rules)``: the distribution from the empty card, computed once per
    module (or found in the test's cache directory, where the session puts the ones its
    tests computed: tests/conftest.py); its cache file is put into the test's cache
    directory, so the commands the test runs load it instead of computing it again."""
    def get(policy: str, rules: str):
        here = cache_path(cache_key(policy, get_rules(rules)))
        if not here.exists() and (_store / here.name).exists():
            shutil.copy(_store / here.name, here)
        if here.exists():
            d = score_distribution(policy, rules)
            assert d.from_cache
        else:
            d = score_distribution(policy, rules)
            shutil.copy(here, _store / here.name)
        return d
    return get


# --- (a) a plain-Python enumeration of every turn on late cards ----------------------------


def _multisets(n: int):
    """Every multiset of ``n`` dice with its probability."""
    for combo in itertools.combinations_with_replacement(range(1, 7), n):
        ways = factorial(n)
        for c in Counter(combo).values():
            ways //= factorial(c)
        yield combo, ways / 6 ** n


def _reference(rules: str, policy: str, filled: dict[str, int], bonuses: int) -> dict[int, float]:
    """P(TOTAL = s) by enumerating every roll and reroll of every remaining turn, with the
    policy's decisions read from its tables and the naive scorer."""
    tables = decision_tables(policy, rules)
    p = tables.policies.index(policy)
    cards = {(tuple(sorted(filled.items())), bonuses): 1.0}
    while True:
        if len(next(iter(cards))[0]) == len(BOXES):
            break
        nxt: dict = {}
        for (items, nb), w in cards.items():
            card = dict(items)
            i = int(tables.slot[Scorecard(tuple(card.get(b) for b in BOX_NAMES)).state])
            rolls = {roll: q for roll, q in _multisets(5)}
            for keep_of in (tables.keep2, tables.keep1):
                after: dict = {}
                for roll, q in rolls.items():
                    keep = tuple(dice.dice_of_rank(keep_of(p, i, roll_index(roll))))
                    for rest, q2 in _multisets(5 - len(keep)):
                        r = tuple(sorted(keep + rest))
                        after[r] = after.get(r, 0.0) + q * q2
                rolls = after
            for roll, q in rolls.items():
                box = BOX_NAMES[tables.box(p, i, roll_index(roll))]
                scores, bonus = allowed_scores(rules, card, roll)
                assert box in scores
                assert immediate_points(card, box, scores[box], bonus) >= scores[box]
                new = dict(card)
                new[box] = scores[box]
                key = (tuple(sorted(new.items())), nb + (bonus > 0))
                nxt[key] = nxt.get(key, 0.0) + w * q
        cards = nxt
    out: dict[int, float] = {}
    for (items, nb), w in cards.items():
        t = card_total(dict(items), nb)
        out[t] = out.get(t, 0.0) + w
    return out


#: Late cards: every box but one or two filled (a near upper bonus, a 50 in the Penta
#: box for the bonus and the joker, the joker's lower boxes open).
_UPPER = {"ones": 3, "twos": 6, "threes": 9, "fives": 15, "sixes": 18}
_LOWER = {"three-of-a-kind": 20, "four-of-a-kind": 0, "full-house": 25,
          "small-straight": 30, "large-straight": 0, "chance": 22}
CARDS = [
    ("seed", "optimal", {**_UPPER, **_LOWER, "penta": 50}, 1, ("fours",)),
    ("seed", "optimal", {**_UPPER, **_LOWER, "penta": 50}, 1, ("fours", "large-straight")),
    ("seed", "greedy", {**_UPPER, **_LOWER, "fours": 8}, 0, ("chance", "penta")),
    ("free-joker", "optimal", {**_UPPER, **_LOWER, "penta": 50}, 0,
     ("fours", "full-house")),
    pytest.param("hasbro", "optimal", {**_UPPER, **_LOWER, "penta": 0}, 0,
                 ("fours", "small-straight"), marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("rules", "policy", "base", "bonuses", "open_boxes"), CARDS)
@pytest.mark.slow
def test_late_cards_match_a_plain_enumeration(rules, policy, base, bonuses, open_boxes):
    filled = {b: s for b, s in base.items() if b not in open_boxes}
    card = Scorecard(tuple(filled.get(b) for b in BOX_NAMES), bonuses)
    d = score_distribution(policy, rules, card)
    ref = _reference(rules, policy, filled, bonuses)
    want = np.zeros(MAX_TOTAL + 1)
    for t, w in ref.items():
        want[t] = w
    assert np.abs(d.probability - want).max() <= 1e-12
    assert abs(d.probability.sum() - 1.0) <= 1e-12
    assert not d.from_cache  # a card other than the empty one is never cached
    # the events of the same pass: boxes filled before keep their score
    for b, s in filled.items():
        assert d.box_means[BOX_NAMES.index(b)] == s


def test_the_same_bits_on_one_and_two_threads():
    card = Scorecard.parse("ones=3,twos=6,threes=9,three-of-a-kind=20,chance=22,penta=50")
    tables = decision_tables("optimal", "seed")
    one, two = (with_threads(n, lambda: propagate(tables.slot, tables.decisions[0],
                                                  get_rules("seed"), card))
                for n in (1, 2))
    assert np.array_equal(one["probability"], two["probability"])
    assert np.array_equal(one["events"], two["events"])


# --- (b), (e) the optimum, and probabilities that sum to one --------------------------------


@pytest.mark.parametrize("rules", ["seed", pytest.param("hasbro", marks=pytest.mark.slow),
                                   pytest.param("no-bonus", marks=pytest.mark.slow)])
def test_optimal_mean_is_the_solvers_optimum(dist, rules):
    d = dist("optimal", rules)
    assert abs(d.mean - solve(rules).expected_score) <= 1e-9
    assert abs(d.probability.sum() - 1.0) <= 1e-12


@pytest.mark.parametrize(("policy", "rules"), [
    ("optimal", "seed"), ("greedy", "seed"),
    # free-joker's tables and distribution (ten seconds) only in the slow tier, as the
    # anchor below: test_penta_solver keeps free-joker's published optimum fast
    pytest.param("optimal", "free-joker", marks=pytest.mark.slow)])
def test_the_events_add_up_to_the_mean(dist, policy, rules):
    d = dist(policy, rules)
    assert abs(d.probability.sum() - 1.0) <= 1e-12
    assert (d.probability >= 0).all()
    assert d.mean == pytest.approx(d.box_means.sum() + UPPER_BONUS * d.p_upper_bonus
                                   + get_rules(rules).penta_bonus * d.mean_penta_bonuses,
                                   abs=1e-9)
    lo, hi = d.support
    assert d.probability[:lo].sum() == 0 and d.probability[hi + 1:].sum() == 0
    assert list(d.percentiles) == [1, 5, 10, 25, 50, 75, 90, 95, 99]
    cdf = d.cdf()
    for q, v in d.percentiles.items():
        assert cdf[int(v)] >= q / 100 - 1e-9 and cdf[int(v) - 1] < q / 100


def test_greedy_scores_less_than_optimal(dist):
    assert dist("greedy", "seed").mean < dist("optimal", "seed").mean - 30


# --- (c) the published anchor ---------------------------------------------------------------


@pytest.mark.slow
def test_verhoeff_free_choice_joker_anchor(dist):
    d = dist("optimal", "free-joker")
    assert abs(d.mean - VERHOEFF_MEAN) <= 1e-4
    # published to two decimals: rounding (0.005) plus what tie-breaking can move
    assert abs(d.sd - VERHOEFF_SD) <= 0.005 + TIE_SD_BOUND


# --- (d) Monte Carlo agrees within 4 standard errors ----------------------------------------


def _moments(d):
    s = d.scores
    m = d.mean
    return [float(d.probability @ (s - m) ** k) for k in (2, 4)]


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
def test_simulation_agrees_within_4_se(dist, policy):
    d = dist(policy, "seed")
    n = 400_000
    sim = simulate_penta([policy], games=n, seed=20261201, rules="seed").seat(0)
    var, m4 = _moments(d)
    assert abs(sim.mean_final_score.mean - d.mean) <= 4 * math.sqrt(var / n)
    assert abs(sim.final_score_sd - d.sd) <= 4 * math.sqrt((m4 - var * var) / (4 * var * n))
    for got, p in ((sim.p_upper_bonus.p, d.p_upper_bonus),
                   (sim.p_penta_fifty.p, d.p_penta_fifty)):
        assert abs(got - p) <= 4 * math.sqrt(p * (1 - p) / n)
    # Penta bonuses per game: SE from the simulation's own spread
    assert abs(sim.mean_penta_bonuses.mean - d.mean_penta_bonuses) <= \
        4 * sim.mean_penta_bonuses.se
    for name, box in sim.mean_box_scores.items():
        assert abs(box.mean - d.box_means[BOX_NAMES.index(name)]) <= 4 * box.se + 1e-12


# --- the disk cache -------------------------------------------------------------------------


def test_the_empty_cards_distribution_is_cached_on_disk(dist, _isolated_cache_dir):
    # the test's fresh cache directory (with the session's decision blocks: greedy's table
    # is not built again); the module's distribution is put there only after the two calls,
    # and the session's (a link to the session's copy) is taken away before them
    here = cache_path(cache_key("greedy", get_rules("seed")))
    here.unlink(missing_ok=True)
    first = score_distribution("greedy", "seed")
    again = score_distribution("greedy", "seed")
    assert not first.from_cache and again.from_cache
    assert np.array_equal(first.probability, again.probability)
    assert again.compute_s == first.compute_s
    assert any(p.name.startswith("penta-distribution-greedy-seed")
               for p in _isolated_cache_dir.iterdir())
    assert np.array_equal(first.probability, dist("greedy", "seed").probability)


# --- exact head to head ---------------------------------------------------------------------


def test_seat_outcomes_by_brute_force():
    rng = np.random.default_rng(3)
    pmfs = [rng.dirichlet(np.ones(5)) for _ in range(3)]
    alone, shared, share = seat_outcomes(pmfs)
    want = np.zeros((3, 3))
    for xs in itertools.product(range(5), repeat=3):
        w = math.prod(pmfs[i][x] for i, x in enumerate(xs))
        top = [i for i, x in enumerate(xs) if x == max(xs)]
        for i in top:
            want[0 if len(top) == 1 else 1, i] += w
            want[2, i] += w / len(top)
    assert np.allclose([alone, shared, share], want, atol=1e-15, rtol=0)


@pytest.mark.slow
def test_exact_pair_from_the_two_distributions(dist):
    p = exact_pair("optimal", "greedy", "seed")
    a, b = dist("optimal", "seed").probability, dist("greedy", "seed").probability
    below_b = np.cumsum(b) - b
    assert p.first == p.second  # the seat does not matter in Penta
    assert p.win_rate == pytest.approx(float(a @ below_b), abs=1e-14)
    assert p.tie_rate == pytest.approx(float(a @ b), abs=1e-14)
    assert p.win_rate + p.tie_rate + p.loss_rate == pytest.approx(1.0, abs=1e-12)
    assert p.verdict == "better"
    q = exact_pair("greedy", "optimal", "seed")
    assert q.win_rate == pytest.approx(p.loss_rate, abs=1e-12)
    assert q.tie_rate == pytest.approx(p.tie_rate)


@pytest.mark.slow
def test_monte_carlo_compare_agrees_within_4_se(dist):
    n = 200_000
    dist("optimal", "seed"), dist("greedy", "seed")
    exact = compare(["optimal", "greedy"], exact=True, rules="seed").pairs[0]
    mc = compare(["optimal", "greedy"], games=n, seed=17, rules="seed").pairs[0]
    for got, p in ((mc.wins / n, exact.win_rate), (mc.ties / n, exact.tie_rate)):
        assert abs(got - p) <= 4 * math.sqrt(p * (1 - p) / n)
    assert abs(mc.score - exact.score) <= 4 * mc.score_se


@pytest.mark.slow
def test_three_seats_agree_with_a_simulation_within_4_se(dist):
    seats = ["optimal", "greedy", "greedy"]
    dist("optimal", "seed"), dist("greedy", "seed")
    ex = exact_seats(seats, "seed")
    assert ex.share.sum() == pytest.approx(1.0, abs=1e-12)
    assert ex.win[1] == pytest.approx(ex.win[2], abs=1e-15)
    n = 200_000
    sim = simulate_penta(seats, games=n, seed=5, rules="seed")
    for s in range(3):
        seat = sim.seat(s)
        for got, p in ((seat.win_rate.p, ex.win[s]), (seat.tie_rate.p, ex.tie[s])):
            assert abs(got - p) <= 4 * math.sqrt(p * (1 - p) / n)
    assert abs(sim.ties / n - ex.tie_rate) <= 4 * math.sqrt(ex.tie_rate * (1 - ex.tie_rate) / n)


# --- the CLI --------------------------------------------------------------------------------


def test_cli_distribution_json_plot_and_out(dist, capsys, tmp_path):
    png, out = tmp_path / "d.png", tmp_path / "run"
    ref = dist("greedy", "seed")
    code, stdout, err = run_cli(capsys, ["solve", "penta", "--distribution", "--policy",
                                         "greedy", "--json", "--plot", str(png),
                                         "--out", str(out)])
    assert code == 0, err
    d = json.loads(stdout)
    assert d["policy"] == "greedy" and d["rules"] == "seed"
    assert d["expected_final_score"] == pytest.approx(ref.mean, abs=1e-9)
    assert sum(d["probability"]) == pytest.approx(1.0, abs=1e-12)
    lo = d["support"][0]  # P(final >= T), summed here from the exact probabilities
    assert d["p_at_least"] == pytest.approx(
        {str(t): sum(d["probability"][max(t - lo, 0):]) for t in (200, 250, 300, 350, 400)},
        abs=1e-12)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frame = pd.read_parquet(out / "distribution.parquet")
    assert list(frame.columns) == ["final_score", "probability"]
    assert frame["probability"].sum() == pytest.approx(1.0, abs=1e-12)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["experiment"] == "score-distribution" and manifest["policy"] == "greedy"
    code, stdout, err = run_cli(capsys, ["solve", "penta", "--distribution", "-p", "greedy"])
    assert code == 0, err
    assert "final score SD" in stdout and "final score p90" in stdout
    row = stdout.split("P(final score >= 300)")[1].split("\n")[0]
    assert f"{100 * ref.p_at_least(300):.4f}%" in row  # a probability, in percent


def test_a_figure_marks_an_at_least_target_with_its_probability():
    """An at-least:T objective's histogram marks T with P(TOTAL >= T) summed by hand, and
    its axis reaches T even where T lies beyond the central mass."""
    from dicelab.plots import score_distribution_figure

    scores = np.arange(50, 251)
    p = np.exp(-0.5 * ((scores - 150) / 20.0) ** 2)
    p /= p.sum()
    for target in (170, 400):
        ax = score_distribution_figure(scores, p, title="t", mean=150.0,
                                       target=target).axes[0]
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        reach = sum(float(q) for s, q in zip(scores, p, strict=True) if s >= target)
        assert labels == ["mean 150.00",
                          f"target {target}: P(TOTAL >= {target}) = {reach:.6f}"]
        assert ax.get_xlim()[0] < target < ax.get_xlim()[1]
    ax = score_distribution_figure(scores, p, title="t").axes[0]
    assert ax.get_legend() is None


def test_cli_compare_exact_penta(dist, capsys, tmp_path):
    dist("optimal", "seed"), dist("greedy", "seed")
    code, stdout, err = run_cli(capsys, ["compare", "optimal", "greedy", "--exact",
                                         "--json", "--out", str(tmp_path / "x")])
    assert code == 0, err
    d = json.loads(stdout)
    assert d["method"] == "exact" and d["game"] == "penta"
    pair = d["pairs"][0]
    assert pair["win_rate"] + pair["tie_rate"] + pair["loss_rate"] == \
        pytest.approx(1.0, abs=1e-12)
    code, stdout, err = run_cli(capsys, ["compare", "optimal", "greedy", "--exact"])
    assert code == 0, err
    assert "Penta head to head, exact" in stdout


@pytest.mark.parametrize(("argv", "needle"), [
    (["solve", "penta", "--distribution", "--policy", "bogus"], "unknown Penta policy"),
    (["solve", "penta", "--distribution", "--rules", "bogus"], "unknown Penta rule set"),
    (["solve", "penta", "--policy", "greedy"], "--policy: only with --distribution\n"),
    (["solve", "penta", "-p", "greedy", "--plot", "{tmp}/x.png"], "--policy: only with"),
    (["solve", "penta", "--plot", "{tmp}/x.png"], "--plot: only with --distribution or"),
    (["solve", "penta", "--out", "{tmp}/o"], "--out: only with --distribution or"),
    (["solve", "penta", "--distribution", "--plot", "{tmp}/x.jpg"], "must end in .png"),
    (["solve", "penta", "--distribution", "--plot", "{tmp}/no/such/x.png"], "does not exist"),
    (["solve", "penta", "--distribution", "--out", "{tmp}/o", "--plot", "{tmp}/p/x.png"],
     "the directory {tmp}/p does not exist"),
    (["solve", "penta", "--distribution", "--out", "{tmp}/o", "--plot", "{tmp}/o/p/x.png"],
     "the directory {tmp}/o/p does not exist"),
    (["solve", "penta", "--distribution", "--out", "{tmp}/file"], "not a directory"),
    (["compare", "optimal", "greedy", "--exact", "--target", "1000"],
     "--target applies to Farkle only"),
    (["compare", "optimal", "ai", "--exact"], "one game"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(capsys, tmp_path, argv, needle):
    (tmp_path / "file").write_text("")
    before = sorted(tmp_path.rglob("*"))
    code, _, err = run_cli(capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2
    needle = needle.replace("{tmp}", str(tmp_path))
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err
    assert sorted(tmp_path.rglob("*")) == before


def test_a_plot_goes_in_the_folder_out_creates(capsys, tmp_path):
    """``--out d1 --plot d1/p.png``: --out makes d1, so the plot may go there; all three
    files are written."""
    out = tmp_path / "d1"
    code, _, err = run_cli(capsys, ["solve", "penta", "--distribution", "-p", "greedy",
                                    "--out", str(out), "--plot", str(out / "p.png")])
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["distribution.parquet",
                                                     "manifest.json", "p.png"]
    assert (out / "p.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("policy", POLICIES)
def test_a_card_with_bonuses_is_refused_under_rules_without_them(policy):
    from dicelab.errors import UserError

    with pytest.raises(UserError, match="no Penta bonuses"):
        score_distribution(policy, "no-bonus", "penta=50,ones=3,bonuses=1")
    with pytest.raises(UserError, match="full"):  # the same card check passes with 0
        score_distribution(policy, "no-bonus", ",".join(
            f"{b}=0" for b in BOX_NAMES if b not in ("chance", "penta"))
            + ",chance=5,penta=50,bonuses=0")
