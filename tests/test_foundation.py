"""Tests of the shared foundation: dice multisets, RNG, seeding, stats, registry, cache."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_rng import Xoshiro
from numba import njit

from dicelab import cache, dice, seeding, stats
from dicelab.errors import UserError
from dicelab.registry import AI_DEFAULTS, parse_policy, parse_seats
from dicelab.rng import next_u64, rand_below, roll_dice

# --- dice multisets ---------------------------------------------------------------


def test_multiset_counts_per_size():
    sizes = [int(dice.SIZE_OFFSET[n + 1] - dice.SIZE_OFFSET[n]) for n in range(7)]
    assert sizes == [1, 6, 21, 56, 126, 252, 462]
    assert dice.N_MULTISETS == 924
    # Penta: 252 rolls of five dice, 462 keeps of 0..5 dice
    assert int(dice.SIZE_OFFSET[6]) == 462


def test_probabilities_match_enumeration_of_ordered_rolls():
    for n in range(7):
        seen = Counter(dice.rank_of_dice(r) for r in itertools.product(range(1, 7), repeat=n))
        for rank, count in seen.items():
            assert dice.PROB[rank] == pytest.approx(count / 6**n, abs=1e-15)
        lo, hi = dice.SIZE_OFFSET[n], dice.SIZE_OFFSET[n + 1]
        assert len(seen) == hi - lo
        assert dice.PROB[lo:hi].sum() == pytest.approx(1.0, abs=1e-12)


def test_seq_to_rank_is_base6_digits():
    for n in range(7):
        for u in range(0, 6**n, 7):
            digits = [(u // 6**i) % 6 + 1 for i in range(n)]
            assert dice.SEQ_TO_RANK[dice.SEQ_OFFSET[n] + u] == dice.rank_of_dice(digits)


def test_rank_round_trip_and_helpers():
    for r in range(dice.N_MULTISETS):
        assert dice.rank_of_dice(dice.dice_of_rank(r)) == r
        assert dice.PIPS[r] == sum(dice.dice_of_rank(r))
    r = dice.rank_of_dice([1, 5, 5])
    subs = {tuple(dice.dice_of_rank(s)) for s in dice.sub_multisets(r)}
    assert subs == {(), (1,), (5,), (1, 5), (5, 5), (1, 5, 5)}
    assert dice.add_ranks(dice.rank_of_dice([2]), r) == dice.rank_of_dice([1, 2, 5, 5])
    with pytest.raises(ValueError):
        dice.rank_of_dice([7])


# --- RNG --------------------------------------------------------------------------


@njit(cache=True)
def _u64s(state, n):
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = next_u64(state)
    return out


def test_xoshiro_matches_reference():
    state = seeding.chunk_states(12345, 0, 1)[0]
    ref = Xoshiro(state)
    expected = [ref.next_u64() for _ in range(50)]
    assert [int(x) for x in _u64s(state.copy(), 50)] == expected


@njit(cache=True)
def _belows(state, bounds):
    out = np.empty(len(bounds), dtype=np.int64)
    for i in range(len(bounds)):
        out[i] = rand_below(state, bounds[i])
    return out


def test_bounded_draws_match_reference():
    # bounds whose rejection zone (2**32 mod bound) is large, so that redraws happen
    bounds = np.array([6, 36, 46656, 3, 2**31 + 1, 3 * 2**30 + 7] * 200, dtype=np.int64)
    state = seeding.chunk_states(5, 0, 1)[0]
    ref = Xoshiro(state)
    expected = [ref.below(int(b)) for b in bounds]
    got = _belows(state, bounds)  # (advances state)
    assert got.tolist() == expected
    assert ref.next_u64() == int(_u64s(state, 1)[0])  # and as many words used


@njit(cache=True)
def _below_hist(state, bound, n):
    h = np.zeros(bound, dtype=np.int64)
    for _ in range(n):
        h[rand_below(state, bound)] += 1
    return h


@njit(cache=True)
def _roll_hist(state, ndice, n):
    h = np.zeros(924, dtype=np.int64)
    for _ in range(n):
        h[roll_dice(state, ndice)] += 1
    return h


def _chi2(observed, probs):
    expected = probs * observed.sum()
    return float((((observed - expected) ** 2) / expected).sum())


@pytest.mark.parametrize("bound", [2, 6, 7, 46656])
def test_rand_below_uniform(bound):
    state = seeding.chunk_states(7, 0, 1)[0]
    n = 400_000
    h = _below_hist(state, bound, n)
    assert h.min() >= 0 and h.sum() == n
    df = bound - 1
    # chi-square far beyond its mean + 6 sd would mean a biased generator
    assert _chi2(h, np.full(bound, 1 / bound)) < df + 6 * math.sqrt(2 * df)


@pytest.mark.parametrize("ndice", [1, 2, 5, 6])
def test_roll_dice_multinomial(ndice):
    state = seeding.chunk_states(99, 3, 4)[0]
    n = 300_000
    h = _roll_hist(state, ndice, n)
    lo, hi = dice.SIZE_OFFSET[ndice], dice.SIZE_OFFSET[ndice + 1]
    assert h[:lo].sum() == 0 and h[hi:].sum() == 0
    df = int(hi - lo - 1)
    assert _chi2(h[lo:hi], dice.PROB[lo:hi]) < df + 6 * math.sqrt(2 * df)


# --- seeding ----------------------------------------------------------------------


def test_chunk_states_depend_only_on_seed_and_chunk():
    a = seeding.chunk_states(5, 0, 10)
    b = seeding.chunk_states(5, 4, 6)
    assert np.array_equal(a[4:6], b)
    children = np.random.SeedSequence(5).spawn(3)
    assert np.array_equal(a[2], children[2].generate_state(4, np.uint64))
    assert not np.array_equal(seeding.chunk_states(6, 0, 1), a[:1])


def test_check_games_and_seed():
    assert seeding.check_games(5) == 5 and seeding.check_games(np.int64(7)) == 7
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(UserError, match="--games must be a positive number of games"):
            seeding.check_games(bad)
    with pytest.raises(UserError, match="--rolls must be a positive number of rolls"):
        seeding.check_games(0, what="--rolls", unit="rolls")
    assert seeding.check_seed(3) == 3 and 0 <= seeding.check_seed(None) < 2**63
    for bad in (-1, 1.5, True):
        with pytest.raises(UserError, match="--seed must be a non-negative integer"):
            seeding.check_seed(bad)
    assert seeding.check_seed(2**64 - 1) == seeding.MAX_SEED == 2**64 - 1
    for bad in (2**64, 10**23):
        with pytest.raises(UserError, match=f"--seed {bad} is too large: at most {2**64 - 1}"):
            seeding.check_seed(bad)


@pytest.mark.parametrize("argv", [
    ["simulate", "-s", "ai", "--target", "1000", "-n", "100"],
    ["tournament", "ai", "threshold-300", "--target", "1000", "-n", "100"],
    ["bust-risk", "-n", "100"],
])
def test_a_seed_too_large_to_save_is_refused_before_the_run(capsys, tmp_path, argv):
    """A seed of 2**64 used to run, then fail with a traceback saving summary.parquet."""
    from cli_helpers import run_cli

    code, out, err = run_cli(capsys, [*argv, "--seed", str(2**64), "--out",
                                      str(tmp_path / "o")])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"error: --seed {2**64} is too large")
    assert list(tmp_path.iterdir()) == []
    code, out, err = run_cli(capsys, [*argv, "--seed", str(2**64 - 1), "--out",
                                      str(tmp_path / "o")])
    assert code == 0, err
    assert (tmp_path / "o" / "manifest.json").is_file()


def test_chunk_bounds():
    b = seeding.chunk_bounds(2 * seeding.CHUNK_GAMES + 5)
    assert list(b) == [0, seeding.CHUNK_GAMES, 2 * seeding.CHUNK_GAMES,
                       2 * seeding.CHUNK_GAMES + 5]
    assert seeding.n_chunks(1) == 1
    assert list(seeding.chunk_bounds(3)) == [0, 3]


# --- stats ------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=2, max_size=200))
def test_mean_estimate_matches_numpy(xs):
    x = np.array(xs, dtype=np.float64)
    est = stats.mean_estimate(x.sum(), (x * x).sum(), len(x))
    assert est.mean == pytest.approx(x.mean(), abs=1e-9)
    if (x == x[0]).all():  # no spread measures no error
        assert math.isnan(est.se) and est.df is None
        return
    assert est.se == pytest.approx(x.std(ddof=1) / math.sqrt(len(x)), abs=1e-6)
    lo, hi = est.ci95
    assert lo < est.mean < hi and est.df == len(x) - 1


def test_wilson_interval_contains_estimate_and_is_bounded():
    for k, n in [(0, 10), (10, 10), (3, 10), (500, 1000)]:
        lo, hi = stats.wilson_interval(k, n)
        assert 0 <= lo <= k / n <= hi <= 1
    lo, hi = stats.wilson_interval(500, 1000)
    assert hi - lo == pytest.approx(2 * 1.96 * math.sqrt(0.25 / 1000), rel=0.01)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=300))
def test_percentiles_from_histogram_match_numpy(xs):
    values = np.arange(31)
    hist = np.bincount(xs, minlength=31)
    got = stats.percentiles_from_histogram(hist, values)
    for q, v in got.items():
        assert v == np.percentile(xs, q, method="inverted_cdf")


def test_ratio_estimate_reduces_to_mean_for_unit_denominators():
    y = np.array([3.0, 5.0, 4.0, 10.0])
    x = np.ones_like(y)
    r = stats.ratio_estimate(y.sum(), (y * y).sum(), x.sum(), (x * x).sum(), (x * y).sum(),
                             len(y))
    m = stats.mean_estimate(y.sum(), (y * y).sum(), len(y))
    assert r.mean == pytest.approx(m.mean)
    assert r.se == pytest.approx(m.se)


def test_a_rates_interval_stays_within_its_bounds():
    # one bust in ten rolls over three games: the normal interval reaches below 0
    y = np.array([1.0, 0.0, 0.0])
    x = np.array([4.0, 3.0, 3.0])
    args = (y.sum(), (y * y).sum(), x.sum(), (x * x).sum(), (x * y).sum(), len(y))
    free = stats.ratio_estimate(*args)
    assert free.ci95[0] < 0
    r = stats.ratio_estimate(*args, bounds=(0.0, 1.0))
    assert (r.mean, r.se) == (free.mean, free.se)
    assert r.ci95 == (0.0, free.ci95[1])
    assert stats.Estimate(0.9, 0.1, 5, bounds=(0.0, 1.0)).ci95 == pytest.approx((0.704, 1.0),
                                                                                abs=1e-3)
    # no SE, no interval, bounds or not
    assert all(np.isnan(stats.ratio_estimate(1.0, 1.0, 4.0, 16.0, 4.0, 1,
                                             bounds=(0.0, 1.0)).ci95))


@pytest.mark.parametrize(("y", "x"), [
    ([1.0, 1.0], [6.0, 6.0]),            # two games, one bust in six rolls each
    ([2.0, 1.0, 3.0], [4.0, 2.0, 6.0]),  # three games at the same ratio, sizes differ
    ([0.0, 0.0, 0.0], [5.0, 3.0, 7.0]),  # no bust at all
    ([550.0], [1.0]),                    # one game
])
def test_a_ratio_without_spread_has_no_interval_but_its_value(y, x):
    """As a mean's: games that all show the same ratio, or one game, measure no error:
    the ratio with no SE and no interval, never a zero-width one; the ratio itself is
    there (one game too)."""
    y, x = np.array(y), np.array(x)
    args = (y.sum(), (y * y).sum(), x.sum(), (x * x).sum(), (x * y).sum(), len(y))
    for bounds in (None, (0.0, math.inf)):
        r = stats.ratio_estimate(*args, bounds=bounds)
        assert r.mean == pytest.approx(y.sum() / x.sum()) and r.n == len(y)
        assert np.isnan(r.se) and r.df is None and all(np.isnan(r.ci95))
    # a neighbour with spread has its t interval
    y2, x2 = np.append(y, y[0] + 1.0), np.append(x, x[0])
    r = stats.ratio_estimate(y2.sum(), (y2 * y2).sum(), x2.sum(), (x2 * x2).sum(),
                             (x2 * y2).sum(), len(y2))
    assert r.se > 0 and r.df == len(y2) - 1 and r.ci95[0] < r.mean < r.ci95[1]


def test_a_short_last_chunk_joins_the_one_before_it():
    sizes = np.array([8192, 8192, 1])
    sums = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert stats.merge_short_tail(sums, sizes).tolist() == [[1.0, 2.0], [8.0, 10.0]]
    assert stats.merge_short_tail(sums[:2], np.array([8192, 8192])).tolist() == [[1.0, 2.0],
                                                                                 [3.0, 4.0]]
    assert stats.merge_short_tail(sums[:1], np.array([5])).tolist() == [[1.0, 2.0]]
    # one chunk and a short one: one unit, so no standard error
    two = stats.merge_short_tail(np.array([4000.0, 1.0]), np.array([8192, 1]))
    assert math.isnan(stats.unit_ratio(two, np.array([8193.0])).se)


def test_simulated_bust_rates_have_intervals_within_zero_and_one():
    from dicelab.simulate import simulate

    seat = simulate("ai", games=10, seed=8312364564032865049, target=1000).seat(0)
    for e in (seat.bust_rate_per_roll, seat.bust_rate_per_turn):
        assert e.mean - 1.959963984540054 * e.se < 0  # the normal interval would be
        assert e.ci95[0] == 0.0 and 0 < e.ci95[1] <= 1


# --- registry ---------------------------------------------------------------------


def test_parse_threshold_and_ai():
    spec = parse_policy("threshold-300")
    assert (spec.game, spec.family, spec.params) == ("farkle", "threshold", {"threshold": 300})
    assert parse_policy("ai").params == AI_DEFAULTS
    custom = parse_policy("ai:base=350,two-dice=0")
    assert custom.params["base"] == 350 and custom.params["two-dice"] == 0
    assert custom.name == "ai:base=350,two-dice=0"
    assert parse_policy("optimal").game == "penta"
    assert parse_policy("optimal-win").game == "farkle"


@pytest.mark.parametrize(("bad", "message"), [
    ("threshold-0", "positive multiple of 50"),
    ("threshold-310", "positive multiple of 50"),
    ("threshold--50", "positive multiple of 50"),
    ("threshold-", "unknown policy"),
    ("bogus", "unknown policy"),
    ("ai:base=333", "base must be a non-negative multiple of 50"),
    ("ai:base=0", "base and per must be positive"),
    ("ai:per=0", "base and per must be positive"),
    ("ai:max-steps=-1", "max-steps non-negative"),
    ("ai:step=-100", "step must be a non-negative multiple of 50"),
    ("ai:step=75", "step must be a non-negative multiple of 50"),
    ("ai:two-dice=-50", "two-dice must be a non-negative multiple of 50"),
    ("ai:one-die=25", "one-die must be a non-negative multiple of 50"),
    ("ai:chase=2", "chase is 0 or 1"),
    ("ai:chase=-1", "chase is 0 or 1"),
    ("ai:base=300,base=350", "base is given twice"),
    ("ai:two_dice=0,two-dice=50", "two-dice is given twice"),
    ("ai:nope=1", "ai parameters are base=300"),
    ("ai:base", "ai parameters are"),
    ("ai:base=x", "base must be an integer"),
    # nothing where parameters go, an empty one, or one without a key or value
    ("ai:", "nothing after the ':'; ai parameters are"),
    ("ai: ", "nothing after the ':'"),
    ("ai:,", "an empty parameter (two commas, or one at an end)"),
    ("ai:base=300,", "an empty parameter"),
    ("ai:,base=300", "an empty parameter"),
    ("ai:base=300,,step=50", "an empty parameter"),
    ("ai:base=", "parameters are key=value, not 'base='"),
    ("ai:=300", "parameters are key=value, not '=300'"),
    ("ai::", "parameters are key=value, not ':'"),
    # a built-in without parameters, followed by a colon
    ("greedy:", "policy 'greedy:': nothing after the ':' (greedy takes no parameters)"),
    ("threshold-300:", "(threshold-300 takes no parameters)"),
    ("max-ev :", "(max-ev takes no parameters)"),
])
def test_bad_policy_names_are_user_errors(bad, message):
    with pytest.raises(UserError) as exc:
        parse_policy(bad)
    assert "\n" not in str(exc.value) and message in str(exc.value)


BIG = 10**18  # the most points a policy's parameter names (registry.MAX_POLICY_POINTS)


@pytest.mark.parametrize(("name", "ok"), [
    (f"threshold-{BIG}", True), (f"threshold-{BIG + 50}", False),
    (f"threshold-{10**23}", False), (f"threshold-{(2**63 // 50 + 1) * 50}", False),
    (f"ai:base={BIG},step=0", True), (f"ai:base={BIG + 50},step=0", False),
    (f"ai:base={10**23}", False), (f"ai:base={BIG - 500}", True), (f"ai:base={BIG - 450}", False),
    (f"ai:base={BIG - 300},step=100,max-steps=3", True),
    (f"ai:base={BIG - 300},step=100,max-steps=4", False),
    ("ai:base=4611686018427387900,step=4611686018427387900,max-steps=3", False),
    (f"ai:per={BIG}", True), (f"ai:per={BIG + 1}", False),
    (f"ai:two-dice={BIG + 50}", False), (f"ai:one-die={BIG + 50}", False),
    (f"ai:max-steps={BIG // 100}", False), (f"ai:max-steps={BIG // 100 - 3}", True),
])
def test_policy_points_beyond_the_kernels_integers_are_refused(name, ok):
    """A threshold (or ai's highest threshold, base + step x max-steps) that a kernel's
    64-bit integer cannot hold was a traceback (or wrapped round to a negative threshold);
    up to 10^18 points it is a policy."""
    if ok:
        assert parse_policy(name).game == "farkle"
        return
    with pytest.raises(UserError) as exc:
        parse_policy(name)
    assert "\n" not in str(exc.value) and "at most 1,000,000,000,000,000,000" in str(exc.value)


def test_ai_names_are_canonical():
    # parameters at their defaults are dropped, the rest named in the kernels' order
    assert parse_policy("ai:chase=1,base=300").name == "ai"
    assert parse_policy(" ai: base = 350 , one_die = 0 ").name == "ai:base=350,one-die=0"
    assert parse_policy("ai:one_die=0, base=350").name == "ai:base=350,one-die=0"
    assert parse_policy("ai:chase=0").params["chase"] == 0
    assert list(parse_policy("ai:chase=0").params) == list(AI_DEFAULTS)


def test_unknown_policy_lists_valid_names():
    with pytest.raises(UserError, match=r"threshold-T.*optimal"):
        parse_policy("nonsense")


def test_seats_must_play_one_game():
    game, seats = parse_seats("threshold-300", ["ai", "max-ev"])
    assert game == "farkle" and [s.name for s in seats] == ["threshold-300", "ai", "max-ev"]
    with pytest.raises(UserError, match="penta policy"):
        parse_seats("threshold-300", ["optimal"])
    with pytest.raises(UserError, match="farkle policy"):
        parse_policy("ai", game="penta")


# --- cache ------------------------------------------------------------------------


def test_cache_round_trip_and_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        return {"v": np.arange(10, dtype=np.float64)}

    a, hit = cache.cached("unit-test", 1, build)
    assert not hit and len(calls) == 1
    b, hit = cache.cached("unit-test", 1, build)
    assert hit and len(calls) == 1 and np.array_equal(a["v"], b["v"])
    # a stale format version is rebuilt
    _, hit = cache.cached("unit-test", 2, build)
    assert not hit and len(calls) == 2
    # a corrupt file is rebuilt, never trusted
    path = cache.cache_path("unit-test")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    c, hit = cache.cached("unit-test", 2, build)
    assert not hit and len(calls) == 3 and np.array_equal(c["v"], a["v"])
    # a truncated file too
    path.write_bytes(path.read_bytes()[:100])
    _, hit = cache.cached("unit-test", 2, build)
    assert not hit and len(calls) == 4
    assert not list(tmp_path.glob("*.tmp"))


def test_a_name_in_both_games_needs_game(monkeypatch):
    """No name is shared today; the registry still handles one that is (RULES.md §3)."""
    from dicelab import registry

    shared = [registry._Family("farkle", "both", "both", registry._exact("farkle", "both")),
              registry._Family("penta", "both", "both", registry._exact("penta", "both"))]
    monkeypatch.setattr(registry, "_FAMILIES", [*registry._FAMILIES, *shared])
    with pytest.raises(UserError, match=r"both games.*--game"):
        parse_policy("both")
    assert parse_policy("both", game="penta").game == "penta"
    assert parse_policy("both", game="farkle").game == "farkle"
    game, seats = parse_seats("both", ["optimal"], game="penta")
    assert game == "penta" and [s.name for s in seats] == ["both", "optimal"]


def test_units_without_spread_have_no_standard_error():
    """Units at one ratio (two chunks can agree by chance) measure no error: NaN, not 0;
    one group with spread beside one without is measured."""
    den = np.array([8.0, 8.0, 8.0, 8.0])
    flat = stats.unit_ratio(np.array([3.0, 3.0, 5.0, 5.0]), den, np.array([0, 0, 1, 1]))
    assert flat.mean == 0.5 and math.isnan(flat.se) and all(map(math.isnan, flat.ci95))
    some = stats.unit_ratio(np.array([3.0, 3.0, 5.0, 6.0]), den, np.array([0, 0, 1, 1]))
    assert some.se > 0 and some.df == 2
    # without the strata the same units vary
    assert stats.unit_ratio(np.array([3.0, 3.0, 5.0, 5.0]), den).se > 0


@pytest.mark.parametrize("n", [2, 3, 30, 3000])
def test_a_mean_of_few_values_has_a_t_interval(n):
    """The SE of a mean comes from the same n values: a t interval on n - 1 degrees of
    freedom (from two values a normal one was 6.5 times too narrow); the same for a
    ratio of means over n games."""
    from scipy.stats import t as t_dist

    x = np.arange(n, dtype=float) % 7
    e = stats.mean_estimate(x.sum(), (x * x).sum(), n)
    q = float(t_dist.ppf(0.975, n - 1))
    assert e.df == n - 1 and e.ci95 == pytest.approx((e.mean - q * e.se, e.mean + q * e.se))
    r = stats.ratio_estimate(x.sum(), (x * x).sum(), 2.0 * n, 4.0 * n, 2 * x.sum(), n)
    assert r.df == n - 1 and r.ci95 == pytest.approx((r.mean - q * r.se, r.mean + q * r.se))


@pytest.mark.parametrize(("args", "words"), [
    ((0, "game"), "0 games"), ((1, "game"), "1 game"), ((2, "game"), "2 games"),
    ((1000, "state"), "1,000 states"), ((1, "turn"), "1 turn"), ((-1, "point"), "-1 points"),
    ((1, "die", "dice"), "1 die"), ((6, "die", "dice"), "6 dice"),
    ((1, "lost turn"), "1 lost turn"), ((2, "lost turn"), "2 lost turns"),
])
def test_a_count_and_its_noun(args, words):
    from dicelab.text import counted

    assert counted(*args) == words


@pytest.mark.parametrize(("vs", "words"), [([], "1 seat"), (["ai", "ai"], "3 seats")])
def test_a_refusal_counts_the_seats_in_words(capsys, vs, words):
    """'this game has 1 seats' (optimal-win simulated alone)."""
    from cli_helpers import run_cli

    argv = ["simulate", "-s", "optimal-win", "-n", "10", *[x for v in vs for x in ("--vs", v)]]
    code, out, err = run_cli(capsys, argv)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert f"plays two-seat games only (this game has {words});" in err
