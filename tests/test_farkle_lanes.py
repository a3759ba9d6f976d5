"""The threshold "lanes" kernel: its outcome table against the plain-Python scorer, bit
identity with the general kernel (lanes=1) under both endings, the plain-Python model of
the lane schedule (tests/naive_lanes), reproducibility and statistics with the product's
lane counts, and the runner's choice of kernel."""

from __future__ import annotations

import dataclasses
import itertools

import naive_farkle as nf
import naive_lanes as nl
import numba
import numpy as np
import pytest
from numba_threads import with_threads

from dicelab import config, runner
from dicelab.config import CHUNK_GAMES, FARKLE_LANES, FARKLE_SOLO_LANES
from dicelab.dice import POW6
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import lanes
from dicelab.farkle import simulate as fsim
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import ENDINGS, PRESETS, FarkleRules, load_rules, set_asides
from dicelab.farkle.simulate import simulate_farkle
from dicelab.farkle.solitaire import threshold_distribution
from dicelab.registry import parse_policy
from dicelab.seeding import chunk_bounds, chunk_states
from dicelab.stats import ratio_estimate

#: A table of one's own: doubling n of a kind, custom triples and singles, no two triplets.
HOUSE_TOML = """name = "house"
base = "default"
singles = { 1 = 100, 5 = 50 }
three-of-a-kind = { 2 = 250, 6 = 550 }
n-of-a-kind-mode = "double"
straight = 1000
three-pairs = 750
four-and-pair-as-three-pairs = false
two-triplets = 0
"""


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    f = tmp_path_factory.mktemp("rules") / "house.toml"
    f.write_text(HOUSE_TOML)
    return load_rules(str(f))


#: The default table with zilch's six dice that score nothing (500, hot dice) and no
#: house rule of banking: a table the lanes kernel plays.
SIX_NOTHING = dataclasses.replace(PRESETS["default"], name="six-nothing", six_dice_nothing=500)


def table_of(rules, house):
    return {"house": house, "six-nothing": SIX_NOTHING}.get(rules) or PRESETS[rules]


# ----------------------------------------------------------------------- flag bits


@numba.njit
def _bits_at(a, start):
    return lanes.nonzero_bits8(a, start)


def test_nonzero_bits8_gives_a_bit_per_nonzero_entry_for_every_pattern():
    """Every one of the 256 patterns of zero / nonzero entries, at offsets 0 to 16 of a
    longer array, with nonzero values of every sign and size (the jitted intrinsic
    against a plain loop)."""
    rng = np.random.default_rng(5)
    values = np.array([1, -1, 2**62, -2**63, 2**63 - 1, 7, 1 << 32], np.int64)
    for pattern in range(256):
        a = rng.choice(values, size=24)
        start = pattern % 17
        for i in range(8):
            if not pattern >> i & 1:
                a[start + i] = 0
        expected = sum(1 << i for i in range(8) if a[start + i] != 0)
        assert expected == pattern
        assert _bits_at(a, start) == pattern
        assert _bits_at(a, np.uint64(start)) == pattern


def test_nonzero_bits8_refuses_arrays_it_cannot_read_as_one_vector():
    with pytest.raises(numba.TypingError):
        _bits_at(np.zeros(16, np.int64)[::2], 0)  # strided
    with pytest.raises(numba.TypingError):
        _bits_at(np.zeros(16, np.int32), 0)


def test_lane_halves_are_whole_groups_of_eight_for_the_flag_bits():
    for w in (FARKLE_LANES, FARKLE_SOLO_LANES):
        assert w % 16 == 0 and w <= 36  # halves of 8k lanes; a lane's bit below 2**36
    assert [lanes.lanes_for(n) for n in range(1, 8)] == [FARKLE_SOLO_LANES] + [FARKLE_LANES] * 6


# ----------------------------------------------------------------------- outcome table


@pytest.mark.parametrize("rules", ["default", "basic", "ones-300", "house", "six-nothing"])
def test_outcome_table_matches_the_naive_scorer_for_every_raw_draw(rules, house):
    table = table_of(rules, house)
    code = lanes.outcome_table(set_asides(table))
    # raw draw u of n dice at 6**n + u: the draw's bound is where its outcomes start
    assert code.dtype == np.int32 and code.shape == (2 * int(POW6[6]),)
    by_roll: dict[tuple[int, ...], int] = {}
    for n in range(1, 7):
        got = code[POW6[n]:2 * POW6[n]]
        want = np.empty(int(POW6[n]), dtype=np.int64)
        # u's base-6 digits (least significant first) are the faces minus 1
        for u, digits in enumerate(itertools.product(range(6), repeat=n)):
            roll = tuple(sorted(d + 1 for d in reversed(digits)))
            if roll not in by_roll:
                kept, points = nf.all_scoring(table, roll)
                left = 6 if kept == n else n - kept
                # a bust: "points" 2**23 (units of 50) and the dice rolled; the dice as
                # the shift of their 9-bit packed-counter field; bit 6: every die scored
                by_roll[roll] = (1 << 23 << 7 | 9 * (n - 1)) if kept == 0 else (
                    points // 50 << 7 | (kept == n) << 6 | 9 * (left - 1))
            want[u] = by_roll[roll]
        np.testing.assert_array_equal(got, want, err_msg=f"{n} dice")
        # decode as the kernel does: a bust ends any turn (surplus >= 0 whatever the
        # threshold), a scoring roll adds at least 50 points and leaves 1..6 dice
        surplus = -(lanes.MAX_THRESHOLD // 50) + (got >> 7)
        busts = int((surplus >= 0).sum())
        assert busts == round(nf.bust_probability(table, n) * 6**n)
        scoring = got[surplus < 0]
        assert (scoring >> 7 >= 1).all()
        assert set(np.unique(scoring & 63).tolist()) <= {0, 9, 18, 27, 36, 45}


def _single_one(points):
    """Rules under which only a single 1 scores, worth ``points``."""
    return FarkleRules(name=f"one-{points}", singles=(0, points, 0, 0, 0, 0, 0),
                       three_of_a_kind=(0,) * 7, n_of_a_kind_mode="none",
                       n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
                       four_and_pair_as_three_pairs=False, two_triplets=0)


def test_outcome_table_refuses_scores_it_cannot_pack():
    with pytest.raises(ValueError, match="too large"):
        lanes.outcome_table(set_asides(_single_one(50 * lanes.MAX_ROLL_POINTS + 50)))
    # the largest: a roll of six 1s scores six times a single 1
    code = lanes.outcome_table(set_asides(_single_one(50 * (lanes.MAX_ROLL_POINTS // 6))))
    assert (code >> 7).max() == lanes._BUST
    assert (code >> 7)[(code >> 7) < lanes._BUST].max() == 6 * (lanes.MAX_ROLL_POINTS // 6)
    # ... and with it, a scoring turn of the highest threshold stays below a bust
    assert lanes.MAX_LANE_TURN_ROLLS - 1 + lanes.MAX_ROLL_POINTS < lanes._BUSTED
    # scores are whole units of 50 (the encoding refuses the rest)
    with pytest.raises(UserError, match="multiple of 50"):
        set_asides(_single_one(125))


# ----------------------------------------------------------------------- lanes=1 == general


def kernel_inputs(names, table, target):
    """The general kernel's seats and rolls, and the lanes kernel's thresholds and
    outcome table, for all-threshold seats."""
    seats = seat_arrays([parse_policy(n) for n in names], table, target)
    assert (seats.kinds == K.THRESHOLD).all()
    sa = set_asides(table)
    thr = np.ascontiguousarray(seats.params[:, K.P_THRESHOLD])
    return seats, sa.arrays(), thr, lanes.outcome_table(sa)


def zeros(n_chunks, n_seats, target):
    bins = (target + config.HIST_HEADROOM) // 50 + 1
    return (np.zeros((n_chunks, n_seats, K.N_STATS), np.int64),
            np.zeros((n_chunks, n_seats, bins), np.int64),
            np.zeros((n_chunks, K.N_CHUNK_COUNTERS), np.int64))


def run_both(names, table, target, games, seed, first_seat, n_lanes=1, ending="last-round"):
    """(general kernel, lanes kernel) outputs (stats, hist, counters) on the same chunks."""
    seats, rolls, thr, out = kernel_inputs(names, table, target)
    bounds = chunk_bounds(games)
    states = chunk_states(seed, 0, len(bounds) - 1)
    game = K.Game(len(names), first_seat, target, ENDINGS[ending])
    general = zeros(len(states), len(names), target)
    K.run_chunks(states.copy(), bounds, game, seats, rolls, *general)
    fast = zeros(len(states), len(names), target)
    lanes.run_chunks(states.copy(), bounds, game, thr, out, n_lanes, *fast)
    return general, fast


LANES1_CASES = {
    # name: (seats, rules, target, games, first seat (-1 rotates))
    "solo-several-chunks": (["threshold-300"], "default", 10_000, CHUNK_GAMES + 333, -1),
    "two-mixed-fixed-first": (["threshold-250", "threshold-1000"], "basic", 5000, 3000, 1),
    "two-mixed-rotating": (["threshold-1000", "threshold-250"], "ones-300", 2000,
                           2 * CHUNK_GAMES + 1, -1),
    "three": (["threshold-200", "threshold-450", "threshold-700"], "ones-300", 5000, 1500,
              -1),
    "three-house": (["threshold-350", "threshold-50", "threshold-2000"], "house", 10_000, 800,
                    2),
    # above the packed per-turn counters of earlier versions (25,550): still this kernel
    "high-threshold": (["threshold-30000", "threshold-1000"], "default", 5000, 400, -1),
    "seven": (["threshold-50", "threshold-100", "threshold-300", "threshold-500",
               "threshold-800", "threshold-1500", "threshold-2500"], "default", 10_000, 300,
              -1),
    "seven-fixed-first": (["threshold-300"] * 3 + ["threshold-600"] * 4, "house", 2000, 500,
                          3),
    "six-nothing": (["threshold-300", "threshold-1000"], "six-nothing", 3000, 1000, -1),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("case", list(LANES1_CASES))
def test_one_lane_is_bit_identical_to_the_general_kernel(case, ending, house):
    names, rules, target, games, first = LANES1_CASES[case]
    general, fast = run_both(names, table_of(rules, house), target, games, seed=len(case),
                             first_seat=first, ending=ending)
    for g, f in zip(general, fast, strict=True):
        np.testing.assert_array_equal(f, g)
    stats, _, counters = fast
    assert counters[:, K.C_GAMES].sum() == games and counters[:, K.C_CAPPED].sum() == 0
    assert stats[:, :, K.ST_TURNS].sum() > 0
    if ending == "first-to-bank":  # one winner per game, the seat that reached the target
        np.testing.assert_array_equal(stats[:, :, K.ST_WINS], stats[:, :, K.ST_TRIGGERS])
        assert stats[:, :, K.ST_TIES].sum() == 0 and stats[:, :, K.ST_WINS].sum() == games


TOP = f"threshold-{lanes.MAX_THRESHOLD}"  # the highest threshold the lanes kernel plays


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_one_lane_is_bit_identical_when_games_hit_the_round_cap(ending):
    # nobody banks (no turn reaches 52 million here), so both games run 5000 rounds: the
    # packed counters are emptied many times on the way
    general, fast = run_both([TOP, TOP], PRESETS["default"], 50, games=2, seed=1,
                             first_seat=-1, ending=ending)
    for g, f in zip(general, fast, strict=True):
        np.testing.assert_array_equal(f, g)
    stats, _, counters = fast
    assert counters[:, K.C_CAPPED].sum() == 2
    assert stats[:, :, K.ST_TURNS].sum() == 2 * 2 * config.MAX_ROUNDS
    assert stats[:, :, K.ST_ROLLS].sum() > 2 * 2 * config.MAX_ROUNDS  # > 511 of a count


ONES_ONLY_TOML = ('name = "ones-only"\nbase = "basic"\nsingles = {1 = 50}\n'
                  'three-of-a-kind = {1 = 0, 2 = 0, 3 = 0, 4 = 0, 5 = 0, 6 = 0}\n')


@pytest.mark.parametrize(("n_seats", "target", "games", "ending"), [
    (2, 251_000, 1500, "first-to-bank"),
    # 1.1 s each; fast twins: the other number of seats under the same ending
    pytest.param(2, 251_000, 1500, "last-round", marks=pytest.mark.slow),
    pytest.param(3, 252_000, 1000, "first-to-bank", marks=pytest.mark.slow),
    (3, 252_000, 1000, "last-round")])
def test_one_lane_is_bit_identical_when_the_last_round_meets_the_round_cap(
        n_seats, target, games, ending, tmp_path):
    # only single 1s score, 50 points each: threshold-50 seats gain 50 points a turn on
    # average, so the target is reached around round 5000 (the cap) and some games are
    # triggered so late that the cap comes before the last round ends (capped games
    # with a seat at the target, which the general kernel's totals show); under
    # first-to-bank a game that reaches the target ends there, and is never capped
    f = tmp_path / "ones.toml"
    f.write_text(ONES_ONLY_TOML)
    table = load_rules(str(f))
    names = ["threshold-50"] * n_seats
    general, fast = run_both(names, table, target, games, seed=11, first_seat=-1,
                             ending=ending)
    for g, x in zip(general, fast, strict=True):
        np.testing.assert_array_equal(x, g)
    seats, rolls, _, _ = kernel_inputs(names, table, target)
    assert games <= CHUNK_GAMES  # one chunk: the same games as run_both's
    totals = np.zeros((games, n_seats), np.int64)
    probe = zeros(1, n_seats, target)
    K._run_chunk(chunk_states(11, 0, 1)[0].copy(), np.zeros(0, np.int64),
                 np.zeros(2, np.int64), 0, games, K.Game(n_seats, -1, target, ENDINGS[ending]),
                 seats, rolls, K.Tally(probe[0][0], probe[1][0], probe[2][0]), totals)
    np.testing.assert_array_equal(probe[0][0], fast[0][0])
    capped = int(fast[2][:, K.C_CAPPED].sum())
    reached = int((totals.max(axis=1) >= target).sum())
    assert 0 < capped < games
    if ending == "last-round":
        assert reached > games - capped  # the cap cut some last rounds short
    else:
        assert reached == games - capped


def test_one_lane_is_bit_identical_when_a_counter_fills_in_the_middle_of_a_turn(tmp_path):
    # nothing busts, so a threshold-1,000,000 turn is some 3,000 rolls of 6 dice: the
    # rolling seat's packed counter would overflow (a field holds 511) if it were not
    # emptied while its turn goes on
    f = tmp_path / "all-score.toml"
    f.write_text('name = "all-score"\nsingles = {1 = 100, 2 = 50, 3 = 50, 4 = 50, 5 = 50, '
                 '6 = 50}\n')
    for names in (["threshold-1000000", "threshold-1000000"],
                  ["threshold-100", "threshold-1000000", "threshold-200"]):
        general, fast = run_both(names, load_rules(str(f)), 10_000, games=3, seed=5,
                                 first_seat=-1)
        for g, x in zip(general, fast, strict=True):
            np.testing.assert_array_equal(x, g)
        assert fast[0][:, :, K.ST_ROLLS_N + 5].max() > 1023  # more than a field holds


def test_thresholds_above_the_lanes_limit_go_to_the_general_kernel():
    # a threshold-T turn has at most T / 50 rolls: below the general kernel's turn cap
    assert lanes.MAX_THRESHOLD == 50 * (config.MAX_TURN_ROLLS - 1)
    # and a bust still ends a turn of the highest threshold (surplus >= _BUSTED)
    assert lanes._BUST - lanes.MAX_THRESHOLD // 50 >= lanes._BUSTED
    assert fsim.kernel_for([parse_policy("threshold-30000")]) == fsim.lanes_kernel(1)
    above = f"threshold-{lanes.MAX_THRESHOLD + 50}"
    assert fsim.kernel_for([parse_policy(TOP)]) == fsim.lanes_kernel(1)
    assert fsim.kernel_for([parse_policy(TOP), parse_policy(above)]) == fsim.GENERAL_KERNEL
    with pytest.raises(ValueError, match="thresholds"):
        run_both([above], PRESETS["default"], 10_000, games=1, seed=1, first_seat=-1)
    r = simulate_farkle([parse_policy(above)], games=200, seed=1)
    assert r.manifest()["kernel"] == fsim.GENERAL_KERNEL and r.games == 200


@pytest.mark.parametrize(("thr", "n_lanes", "match"), [
    ([300], FARKLE_SOLO_LANES + 1, "lanes"),
    ([300, 300], FARKLE_LANES + 1, "lanes"),
    ([300], 0, "lanes"),
    ([300, 300], 1, "seat"),  # (claims one seat more than it has thresholds)
    ([325], 1, "thresholds"),
    ([0], 1, "thresholds"),
    ([lanes.MAX_THRESHOLD + 50], 1, "thresholds"),
])
def test_the_lanes_kernel_refuses_what_it_has_no_columns_for(thr, n_lanes, match):
    _, _, _, out = kernel_inputs(["threshold-300"], PRESETS["default"], 10_000)
    bounds = chunk_bounds(10)
    seats = len(thr) + 1 if match == "seat" else len(thr)
    with pytest.raises(ValueError, match=match):
        lanes.run_chunks(chunk_states(1, 0, 1), bounds, K.Game(seats, -1, 10_000, 0),
                         np.array(thr, np.int64), out, n_lanes, *zeros(1, len(thr), 10_000))


# ----------------------------------------------------------------------- LANES


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_lanes_results_do_not_depend_on_threads_or_batches(ending):
    seats = [parse_policy("threshold-300"), parse_policy("threshold-500")]
    games = 3 * CHUNK_GAMES + 5  # the last chunk has fewer games than lanes

    def run():
        return simulate_farkle(seats, games=games, seed=77, target=5000, ending=ending)

    a = with_threads(1, run)
    b = with_threads(2, run)
    assert a.kernel == b.kernel == fsim.lanes_kernel(2) == "lanes-16"
    plan = fsim.FarklePlan(tuple(seats), load_rules(None, ending), 5000, 77, games)
    c = with_threads(2, lambda: runner.run_plan(dataclasses.replace(plan, batch_chunks=1)))
    for x in (b.stats, b.hist, b.counters), (c["stats"], c["hist"], c["counters"]):
        np.testing.assert_array_equal(a.stats, x[0])
        np.testing.assert_array_equal(a.hist, x[1])
        np.testing.assert_array_equal(a.counters, x[2])
    s0, s1 = a.seat(0), a.seat(1)
    assert s0.wins + s1.wins + s0.ties == games
    assert (s0.ties == 0) == (ending == "first-to-bank")


def points_per_turn(stats, games):
    """Points per turn of seat 0 with its SE, from per-chunk kernel statistics."""
    st = stats.sum(axis=0)[0].astype(float)
    return ratio_estimate(st[K.ST_SCORE], st[K.ST_SCORE_SQ], st[K.ST_TURNS], st[K.ST_TURNS_SQ],
                          st[K.ST_SCORE_TURNS], games)


def test_lanes_play_other_games_with_the_same_distribution():
    exact = threshold_distribution(PRESETS["default"], 300).expected_score
    assert abs(exact - 493.2621) < 1e-4
    games = 4 * CHUNK_GAMES
    one, many = run_both(["threshold-300"], PRESETS["default"], 10_000, games, seed=8,
                         first_seat=-1, n_lanes=lanes.lanes_for(1))
    # one = general kernel = lanes=1 (bit-identical, tested above)
    assert not np.array_equal(one[0], many[0])
    assert one[2][:, K.C_GAMES].sum() == many[2][:, K.C_GAMES].sum() == games
    a, b = points_per_turn(one[0], games), points_per_turn(many[0], games)
    for e in (a, b):
        assert abs(e.mean - exact) < 4 * e.se
    assert abs(a.mean - b.mean) < 4 * np.hypot(a.se, b.se)


@pytest.mark.slow
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_two_seat_win_and_tie_rates_agree_with_the_exact_duel(ending):
    """Both kernels, the lanes kernel with its product lane count, against the exact
    P(win) and P(tie) of the two threshold policies (naive_farkle.threshold_duel)."""
    names = ["threshold-300", "threshold-500"]
    win, tie = nf.threshold_duel(PRESETS["default"], (300, 500), 2000, ending)
    assert (tie == 0.0) == (ending == "first-to-bank")
    games = 4 * CHUNK_GAMES
    general, fast = run_both(names, PRESETS["default"], 2000, games, seed=13, first_seat=0,
                             n_lanes=lanes.lanes_for(2), ending=ending)
    for stats, _, _ in (general, fast):
        st = stats.sum(axis=0)
        for count, p in ((st[0, K.ST_WINS], win), (st[0, K.ST_TIES], tie),
                         (st[1, K.ST_WINS], 1 - win - tie)):
            assert abs(count - games * p) <= 4 * np.sqrt(games * p * (1 - p)) + 1e-9
    assert not np.array_equal(general[0], fast[0])


def assert_consistent(stats, hist, counters, games, ending="last-round"):
    """Statistics a lane run must agree on: nothing booked twice, nothing from a retired
    lane (which keeps rolling, unbooked, until its chunk ends)."""
    st = stats.sum(axis=0)
    assert counters[:, K.C_GAMES].sum() == games
    np.testing.assert_array_equal(hist.sum(axis=0).sum(axis=1), games)
    np.testing.assert_array_equal(st[:, K.ST_ROLLS_N:K.ST_ROLLS_N + 6].sum(axis=1),
                                  st[:, K.ST_ROLLS])
    np.testing.assert_array_equal(st[:, K.ST_BUSTS_N:K.ST_BUSTS_N + 6].sum(axis=1),
                                  st[:, K.ST_BUST_TURNS])
    np.testing.assert_array_equal(st[:, K.ST_BUST_ROLLS], st[:, K.ST_BUST_TURNS])
    assert st[:, K.ST_TRIGGERS].sum() + counters[:, K.C_CAPPED].sum() == games
    assert st[:, K.ST_WINS].sum() <= games <= st[:, K.ST_WINS].sum() + st[:, K.ST_TIES].sum()
    if ending == "first-to-bank":  # the trigger wins; only a capped game can be a tie
        capped = counters[:, K.C_CAPPED].sum()
        assert (st[:, K.ST_WINS] >= st[:, K.ST_TRIGGERS]).all()
        assert (st[:, K.ST_WINS] - st[:, K.ST_TRIGGERS]).sum() <= capped
        assert st[:, K.ST_TIES].sum() <= len(st) * capped


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize(("names", "target", "games"), [
    (["threshold-300"], 10_000, CHUNK_GAMES + 77),
    (["threshold-50", "threshold-2000", "threshold-350"], 5000, 3000),
    (["threshold-100", "threshold-250", "threshold-400", "threshold-800", "threshold-1200",
      "threshold-300", "threshold-600"], 3000, 1000),
    ([TOP, TOP], 50, 20),  # all hit the round cap; 12 lanes retire after 1 game
])
def test_lane_runs_book_every_game_once(names, target, games, ending):
    _, fast = run_both(names, PRESETS["default"], target, games, seed=11, first_seat=-1,
                       n_lanes=lanes.lanes_for(len(names)), ending=ending)
    assert_consistent(*fast, games, ending)


def test_retired_lanes_book_nothing(tmp_path):
    # 20 games in 16 lanes (not the 32 of solitaire runs, so that some lanes retire
    # early) under a table where nothing busts: every game is one turn of MAX_THRESHOLD
    # points or more (some 150,000 rolls); 12 lanes retire after their first game and
    # keep rolling, unbooked, while 4 lanes play a second game
    f = tmp_path / "all-score.toml"
    f.write_text('name = "all-score"\nsingles = {1 = 100, 2 = 50, 3 = 50, 4 = 50, 5 = 50, '
                 '6 = 50}\n')
    general, fast = run_both([TOP], load_rules(str(f)), 10_000, games=20, seed=2,
                             first_seat=-1, n_lanes=16)
    stats, hist, counters = fast
    assert_consistent(stats, hist, counters, 20)
    assert counters[:, K.C_CAPPED].sum() == 0
    assert stats[:, 0, K.ST_TURNS].sum() == 20 and stats[:, 0, K.ST_BUST_TURNS].sum() == 0
    assert stats[:, 0, K.ST_SCORE].sum() >= 20 * lanes.MAX_THRESHOLD
    # the same number of turns and games as the one-at-a-time kernel, other draws
    assert general[0][:, 0, K.ST_TURNS].sum() == 20


def test_chunks_smaller_than_lanes_and_the_lane_count_is_part_of_the_run():
    table = PRESETS["default"]
    runs = {}
    for n_lanes in (2, 5, lanes.lanes_for(2)):
        x, y = (run_both(["threshold-400", "threshold-300"], table, 2000, 9, seed=3,
                         first_seat=-1, n_lanes=n_lanes)[1] for _ in range(2))
        for p, q in zip(x, y, strict=True):  # deterministic
            np.testing.assert_array_equal(p, q)
        stats = x[0].sum(axis=0)
        assert x[2][:, K.C_GAMES].sum() == 9
        # two seats: each game has one winner or is a tie of both
        assert stats[0, K.ST_TIES] == stats[1, K.ST_TIES]
        assert stats[0, K.ST_WINS] + stats[1, K.ST_WINS] + stats[0, K.ST_TIES] == 9
        runs[n_lanes] = stats
    assert not np.array_equal(runs[2], runs[lanes.lanes_for(2)])


# ----------------------------------------------------------------------- kernel choice


def threshold_table(t):
    """A PolicyTable that plays exactly like threshold-t."""
    p_dim = t // 50 + 1
    value = np.broadcast_to(np.arange(p_dim, dtype=np.float32)[None, None, :, None],
                            (1, 1, p_dim, 7)).copy()
    return PolicyTable(f"table-threshold-{t}", value, (value * 50 >= t).astype(np.uint8))


@pytest.mark.parametrize(("seats", "kernel"), [
    (["threshold-300"], "lanes-32"),
    (["threshold-300", "threshold-1000", "threshold-50"], "lanes-16"),
    (["threshold-300", "ai"], fsim.GENERAL_KERNEL),
    (["ai"], fsim.GENERAL_KERNEL),
    (["threshold-300", "table"], fsim.GENERAL_KERNEL),
])
def test_simulate_farkle_picks_lanes_only_for_all_threshold_seats(seats, kernel):
    specs = [threshold_table(300) if n == "table" else parse_policy(n) for n in seats]
    r = simulate_farkle(specs, games=500, seed=1, target=2000)
    assert r.kernel == kernel
    assert r.manifest()["kernel"] == kernel and r.to_dict()["kernel"] == kernel
    plan = fsim.FarklePlan(tuple(specs), PRESETS["default"], 2000, 1, 500)
    assert plan.kernel == kernel
    built = plan.built()
    assert built.kernel == kernel and plan.built() is built  # built once per plan
    assert (built.outcomes is not None) == (kernel != fsim.GENERAL_KERNEL)
    assert (built.thr is not None) == (kernel != fsim.GENERAL_KERNEL)


def test_lanes_run_through_the_runner_is_the_lanes_kernel_on_the_same_chunks():
    games = CHUNK_GAMES + 11
    r = simulate_farkle([parse_policy("threshold-300"), parse_policy("threshold-600")],
                        games=games, seed=4, target=5000, first_seat=1)
    _, fast = run_both(["threshold-300", "threshold-600"], PRESETS["default"], 5000, games,
                       seed=4, first_seat=1, n_lanes=lanes.lanes_for(2))
    np.testing.assert_array_equal(r.stats, fast[0].sum(axis=0))
    np.testing.assert_array_equal(r.hist, fast[1].sum(axis=0))
    np.testing.assert_array_equal(r.counters, fast[2].sum(axis=0))


@pytest.mark.parametrize(("seats", "kernel"), [(["threshold-300", "threshold-500"], lanes),
                                               (["threshold-300", "ai"], K)])
def test_warm_up_compiles_the_kernel_that_runs_with_the_real_argument_types(
        seats, kernel, monkeypatch):
    calls = []
    real = kernel.run_chunks

    def spy(*args):
        calls.append(tuple(numba.typeof(a) for a in args))
        return real(*args)

    monkeypatch.setattr(kernel, "run_chunks", spy)
    plan = fsim.FarklePlan(tuple(map(parse_policy, seats)), PRESETS["default"], 5000, 1,
                           CHUNK_GAMES + 1)
    plan.prepare()
    assert len(calls) == 1  # the warm-up ran the plan's kernel
    plan.run_range(0, 2)
    assert len(calls) == 2 and calls[0] == calls[1]  # same types: nothing compiles on the clock


def test_lanes_runs_are_identical_on_a_dask_cluster():
    distributed = pytest.importorskip("distributed")
    seats = [parse_policy("threshold-300"), parse_policy("threshold-800")]
    games = 2 * CHUNK_GAMES + 9
    local = simulate_farkle(seats, games=games, seed=31, target=5000, ending="first-to-bank")
    plan = fsim.FarklePlan(tuple(seats), load_rules(None, "first-to-bank"), 5000, 31, games,
                           batch_chunks=1)  # several tasks
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        dask = simulate_farkle(seats, games=games, seed=31, target=5000, client=client,
                               ending="first-to-bank")
        tasks = runner.run_plan(plan, client=client)
    assert local.kernel == dask.kernel == fsim.lanes_kernel(2)
    assert dask.manifest()["kernel"] == fsim.lanes_kernel(2)
    for got in ((dask.stats, dask.hist, dask.counters),
                (tasks["stats"], tasks["hist"], tasks["counters"])):
        np.testing.assert_array_equal(local.stats, got[0])
        np.testing.assert_array_equal(local.hist, got[1])
        np.testing.assert_array_equal(local.counters, got[2])


# ------------------------------------------------ lanes runs against a plain-Python model


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize(("names", "rules", "target", "games", "first"), [
    (["threshold-300"], "default", 2000, 90, -1),  # 32 lanes, some play 3 games
    (["threshold-300", "threshold-500"], "default", 3000, 40, -1),
    (["threshold-200", "threshold-450", "threshold-700"], "basic", 2000, 37, 1),
    (["threshold-50"] * 2, "ones-300", 1500, 20, -1),  # 4 lanes retire at once
    (["threshold-150", "threshold-350", "threshold-1000", "threshold-250", "threshold-500"],
     "house", 2500, 33, -1),
])
def test_lanes_runs_are_the_plain_python_lane_schedule(names, rules, target, games, first,
                                                       ending, house):
    # which draws each game gets with LANES lanes (games handed out in lane order,
    # retired lanes rolling on: their dice decide where a rare redraw falls) is the
    # model of naive_lanes, which plays the games with the plain-Python scorer
    table = table_of(rules, house)
    _, _, thr, out = kernel_inputs(names, table, target)
    n_lanes = lanes.lanes_for(len(names))
    assert games < CHUNK_GAMES
    state = chunk_states(21, 0, 1)
    stats, hist, counters = zeros(1, len(names), target)
    lanes.run_chunks(state.copy(), np.array([0, games]),
                     K.Game(len(names), first, target, ENDINGS[ending]), thr, out, n_lanes,
                     stats, hist, counters)
    want = nl.play_chunk(table, [int(t) for t in thr], target, state[0], 0, games, n_lanes,
                         first, config.MAX_ROUNDS, ending)
    assert counters[0, K.C_GAMES] == want["games"] == games
    assert counters[0, K.C_CAPPED] == want["capped"]
    for s, sums in enumerate(want["seats"]):
        got = stats[0, s]
        assert (got[K.ST_WINS], got[K.ST_TIES], got[K.ST_TRIGGERS]) == (
            sums["wins"], sums["ties"], sums["triggers"])
        assert (got[K.ST_SCORE], got[K.ST_TURNS], got[K.ST_ROLLS], got[K.ST_BUST_ROLLS],
                got[K.ST_HOT_DICE]) == (sums["score"], sums["turns"], sums["rolls"],
                                        sums["busts"], sums["hot"])
        assert [int(got[K.ST_ROLLS_N + n - 1]) for n in range(1, 7)] == [
            sums[f"rolls_{n}"] for n in range(1, 7)]
        assert [int(got[K.ST_BUSTS_N + n - 1]) for n in range(1, 7)] == [
            sums[f"busts_{n}"] for n in range(1, 7)]
        assert (got[K.ST_AHEAD], got[K.ST_AHEAD_SQ]) == (sums["ahead"], sums["ahead_sq"])
        assert [int(got[K.ST_BEAT + q]) for q in range(len(names))] == [
            sums[f"beat_{q}"] for q in range(len(names))]
        assert not got[K.ST_BEAT + len(names):].any()
