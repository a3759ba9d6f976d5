"""Farkle game kernel and runner: scripted game flow under both endings, the general
kernel against the plain-Python games of tests/naive_farkle, statistics, reproducibility
across thread counts and batches, table policies, results, bad input."""

from __future__ import annotations

import dataclasses
import math
import random

import naive_farkle as nf
import numpy as np
import pytest
from numba_threads import with_threads

from dicelab import config, runner
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import simulate as fsim
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import ENDINGS, PRESETS, set_asides
from dicelab.farkle.simulate import simulate_bust_frequencies, simulate_farkle
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]
BUST6 = [2, 3, 4, 6, 2, 3]  # no scoring die
ONE6 = [1, 2, 3, 4, 6, 6]  # only the 1: 100 points, 5 dice left
ONES6 = [1, 1, 1, 2, 3, 4]  # three 1s: 1000 points, 3 dice left
STRAIGHT = [1, 2, 3, 4, 5, 6]  # 1500, hot dice


def rolls(*groups):
    """A dice script: the faces of consecutive rolls, one list per roll."""
    return [f for g in groups for f in g]


def seats_of(*names):
    return [parse_policy(n) if isinstance(n, str) else n for n in names]


def run_script(seats, faces, target, n_games=1, first_seat=0, table=DEFAULT,
               ending="last-round"):
    """Run the jitted game kernel on scripted dice; returns a small record."""
    seats = seat_arrays(seats_of(*seats), table, target)
    s = seats.kinds.size
    game = K.Game(s, first_seat, target, ENDINGS[ending], K.STREAM_PER_CHUNK,
                  table.farkle_penalty)
    tally = K.Tally(np.zeros((s, K.N_STATS), dtype=np.int64),
                    np.zeros((s, (target + config.HIST_HEADROOM) // 50 + 1), dtype=np.int64),
                    np.zeros(K.N_CHUNK_COUNTERS, dtype=np.int64))
    totals = np.zeros((n_games, s), dtype=np.int64)
    used = K.run_scripted(np.asarray(faces, dtype=np.int64), n_games, game, seats,
                          set_asides(table).arrays(), tally, totals)
    return {"used": int(used), "stats": tally.stats, "counters": tally.counters,
            "totals": totals, "hist": tally.hist}


def col(rec, c):
    return rec["stats"][:, c].tolist()


# ----------------------------------------------------------------------- scripted flow


def test_hot_dice_then_bust_then_bank_solitaire():
    faces = STRAIGHT + BUST6 + STRAIGHT + ONES6
    rec = run_script(["threshold-2000"], faces, target=2000)
    assert rec["counters"][K.C_SCRIPT_ERRORS] == 0
    assert rec["used"] == len(faces)  # the game ends as soon as the target is banked
    assert rec["totals"].tolist() == [[2500]]
    assert col(rec, K.ST_TURNS) == [2]
    assert col(rec, K.ST_ROLLS) == [4]
    assert col(rec, K.ST_BUST_ROLLS) == [1]
    assert col(rec, K.ST_BUST_TURNS) == [1]
    assert col(rec, K.ST_HOT_DICE) == [2]
    assert col(rec, K.ST_ROLLS_N + 5) == [4] and col(rec, K.ST_BUSTS_N + 5) == [1]
    assert col(rec, K.ST_WINS) == [1]
    assert rec["hist"][0, 2500 // 50] == 1


def test_bank_right_after_hot_dice():
    # 5 -> 50 with 5 dice left; 1 1 1 5 5 -> +1100, all five kept: hot dice, bank 1150
    faces = rolls([5, 2, 3, 4, 6, 6], [1, 1, 1, 5, 5])
    rec = run_script(["threshold-1000"], faces, target=1000)
    assert rec["totals"].tolist() == [[1150]]
    assert col(rec, K.ST_HOT_DICE) == [1] and col(rec, K.ST_ROLLS) == [2]
    assert rec["used"] == len(faces)


def test_scoring_dice_of_one_roll_only():
    # two 5s kept, then one 5: not three of a kind (50 + 50 + 50, not 500)
    faces = rolls([5, 5, 2, 3, 4, 6], [5, 2, 3, 4])
    rec = run_script(["threshold-150"], faces, target=150)
    assert rec["totals"].tolist() == [[150]]


def test_last_round_seat_overtakes_the_trigger():
    faces = rolls(ONES6, [1, 1, 1, 1, 2, 3])  # seat 0 banks 1000 (trigger), seat 1 banks 1100
    rec = run_script(["threshold-1000", "threshold-1000"], faces, target=1000)
    assert rec["used"] == len(faces)  # the trigger does not play again
    assert rec["totals"].tolist() == [[1000, 1100]]
    assert col(rec, K.ST_WINS) == [0, 1] and col(rec, K.ST_TIES) == [0, 0]
    assert col(rec, K.ST_TRIGGERS) == [1, 0]
    assert col(rec, K.ST_TURNS) == [1, 1]


def test_last_round_bust_leaves_the_trigger_winning():
    rec = run_script(["threshold-1000", "threshold-200"], ONES6 + BUST6, target=1000)
    assert rec["totals"].tolist() == [[1000, 0]]
    assert col(rec, K.ST_WINS) == [1, 0]
    # a longer game: seat 0 busts first, seat 1 banks 250, then seat 0 triggers, seat 1 busts
    faces = rolls(BUST6, [1, 1, 5, 2, 3, 4], ONES6, BUST6)
    rec = run_script(["threshold-1000", "threshold-200"], faces, target=1000)
    assert rec["used"] == len(faces)
    assert rec["totals"].tolist() == [[1000, 250]]
    assert col(rec, K.ST_TURNS) == [2, 2]
    assert col(rec, K.ST_BUST_TURNS) == [1, 1]


def test_equal_highest_totals_are_ties():
    rec = run_script(["threshold-1000", "threshold-1000"], ONES6 + ONES6, target=1000)
    assert rec["totals"].tolist() == [[1000, 1000]]
    assert col(rec, K.ST_WINS) == [0, 0] and col(rec, K.ST_TIES) == [1, 1]


def test_ai_chases_the_leader_in_the_last_round():
    # seat 0 triggers with 100; ai (threshold 50) must beat 100, so it rolls on to 200
    faces = rolls(ONE6, [5, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6], [1, 2, 3, 4])
    rec = run_script(["threshold-100", "ai:base=50,step=0"], faces, target=100)
    assert rec["used"] == len(faces)
    assert rec["totals"].tolist() == [[100, 200]]
    assert col(rec, K.ST_WINS) == [0, 1]
    # without chase it banks its first 50 and loses
    rec = run_script(["threshold-100", "ai:base=50,step=0,chase=0"], faces, target=100)
    assert rec["used"] == 12 and rec["totals"].tolist() == [[100, 50]]


def test_ai_lowers_its_threshold_with_few_dice_left():
    # 50 (5 left), 100 (4 left), 150 (3 left), 200 (2 left: T = 250, roll), 250 (1 left: T = 200)
    faces = rolls([5, 2, 2, 3, 3, 4], [5, 2, 3, 4, 6], [5, 2, 3, 4], [5, 2, 3], [5, 2])
    rec = run_script(["ai"], faces, target=250)
    assert rec["used"] == len(faces) and rec["totals"].tolist() == [[250]]
    rec = run_script(["threshold-300"], [*faces, 1], target=250)
    assert rec["totals"].tolist() == [[350]]  # threshold-300 rolls the last die


def test_seven_seats_last_round():
    # seat 0 triggers with 100; seat 1 busts; seat 2 ties at 100; seat 3: 50, then 150
    faces = rolls(ONE6, BUST6, ONE6, [5, 2, 3, 4, 6, 6], [1, 2, 3, 4, 6], BUST6, BUST6, BUST6)
    rec = run_script(["threshold-100"] * 7, faces, target=100)
    assert rec["used"] == len(faces)
    assert rec["totals"].tolist() == [[100, 0, 100, 150, 0, 0, 0]]
    assert col(rec, K.ST_WINS) == [0, 0, 0, 1, 0, 0, 0]
    assert col(rec, K.ST_TURNS) == [1] * 7
    # seat 3 busts instead: seats 0 and 2 share the win
    faces = ONE6 + BUST6 + ONE6 + BUST6 * 4
    rec = run_script(["threshold-100"] * 7, faces, target=100)
    assert col(rec, K.ST_TIES) == [1, 0, 1, 0, 0, 0, 0] and sum(col(rec, K.ST_WINS)) == 0


def test_start_seat_rotates_with_the_game_index():
    faces = ONES6 + BUST6 + ONES6 + BUST6
    rec = run_script(["threshold-1000", "threshold-1000"], faces, target=1000, n_games=2,
                     first_seat=-1)
    assert rec["totals"].tolist() == [[1000, 0], [0, 1000]]
    rec = run_script(["threshold-1000", "threshold-1000"], faces, target=1000, n_games=2,
                     first_seat=0)
    assert rec["totals"].tolist() == [[1000, 0], [1000, 0]]


def test_exhausted_script_is_reported():
    rec = run_script(["threshold-1000"], ONE6, target=1000)
    assert rec["counters"][K.C_SCRIPT_ERRORS] == 1 and rec["counters"][K.C_GAMES] == 0


# ----------------------------------------------------------------------- first-to-bank


def test_first_to_bank_the_first_to_reach_the_target_wins_at_once():
    # under last-round seat 1 would play once more and win with 1100
    faces = rolls(ONES6, [1, 1, 1, 1, 2, 3])
    rec = run_script(["threshold-1000", "threshold-1000"], faces, target=1000,
                     ending="first-to-bank")
    assert rec["used"] == 6  # seat 1 never rolls
    assert rec["totals"].tolist() == [[1000, 0]]
    assert col(rec, K.ST_WINS) == [1, 0] and col(rec, K.ST_TIES) == [0, 0]
    assert col(rec, K.ST_TRIGGERS) == [1, 0] and col(rec, K.ST_TURNS) == [1, 0]
    # equal totals cannot happen: the second seat never gets its turn
    rec = run_script(["threshold-1000", "threshold-1000"], ONES6 + ONES6, target=1000,
                     ending="first-to-bank")
    assert rec["totals"].tolist() == [[1000, 0]] and col(rec, K.ST_TIES) == [0, 0]
    # a bank below the target goes on as usual, whatever the ending
    faces = rolls([5, 2, 3, 4, 6, 6], BUST6, ONE6)
    rec = run_script(["threshold-50", "threshold-1000"], faces, target=150,
                     ending="first-to-bank")
    assert rec["used"] == len(faces) and rec["totals"].tolist() == [[150, 0]]
    assert col(rec, K.ST_WINS) == [1, 0] and col(rec, K.ST_TURNS) == [2, 1]


def test_first_to_bank_with_seven_seats_and_rotating_start():
    # seat 0 busts, seat 1 banks 100 (below 150), seat 2 busts, seat 3 banks 1000 and wins:
    # seats 4..6 never play
    faces = rolls(BUST6, ONE6, BUST6, ONES6)
    seats = ["threshold-100", "threshold-100", "ai", *(["threshold-50"] * 4)]
    rec = run_script(seats, faces, target=150, ending="first-to-bank")
    assert rec["used"] == len(faces)
    assert rec["totals"].tolist() == [[0, 100, 0, 1000, 0, 0, 0]]
    assert col(rec, K.ST_WINS) == [0, 0, 0, 1, 0, 0, 0]
    assert col(rec, K.ST_TRIGGERS) == [0, 0, 0, 1, 0, 0, 0]
    assert col(rec, K.ST_TURNS) == [1, 1, 1, 1, 0, 0, 0]
    # the ai banks 1000 from 0 against 100 (its threshold 300): it wins at once
    faces = rolls(BUST6, ONE6, ONES6)
    rec = run_script(seats, faces, target=150, ending="first-to-bank")
    assert rec["used"] == len(faces)
    assert rec["totals"].tolist() == [[0, 100, 1000, 0, 0, 0, 0]]
    assert col(rec, K.ST_WINS) == [0, 0, 1, 0, 0, 0, 0]
    assert col(rec, K.ST_TURNS) == [1, 1, 1, 0, 0, 0, 0]
    # the start rotates with the game index: the second game starts with seat 1
    faces = ONES6 + ONES6
    rec = run_script(["threshold-1000"] * 3, faces, target=1000, n_games=2, first_seat=-1,
                     ending="first-to-bank")
    assert rec["totals"].tolist() == [[1000, 0, 0], [0, 1000, 0]]
    assert col(rec, K.ST_WINS) == [1, 1, 0]


# ----------------------------------------------------------------------- naive cross-check


def naive_policy(p):
    if isinstance(p, PolicyTable):
        return nf.Table(p)
    spec = parse_policy(p)
    if spec.family == "threshold":
        return nf.Threshold(spec.params["threshold"])
    q = spec.params
    return nf.Ai(q["base"], q["step"], q["per"], q["max-steps"], q["two-dice"], q["one-die"],
                 q["chase"])


def random_table(rng, shape, last_d=None):
    m, o, p = shape
    value = rng.integers(0, 4, size=(m, o, p, 7)).astype(np.float32)  # many ties
    bank = (rng.random((m, o, p, 7)) < 0.45).astype(np.uint8)
    lv = lb = None
    if last_d:
        lv = rng.integers(0, 4, size=(last_d, p, 7)).astype(np.float32)
        lb = (rng.random((last_d, p, 7)) < 0.45).astype(np.uint8)
    return PolicyTable("random", value, bank, lv, lb)


def naive_stats(policies, faces, target, n_games, first_seat, ending, table=DEFAULT):
    stream = nf.FaceStream(faces)
    s = len(policies)
    stats = np.zeros((s, K.N_STATS), dtype=np.int64)
    totals_all = []
    for i in range(n_games):
        start = first_seat if first_seat >= 0 else i % s
        totals, logs, trigger = nf.play_game(table, policies, stream, target, start,
                                             ending)
        totals_all.append(totals)
        stats[trigger, K.ST_TRIGGERS] += 1
        for seat, res in enumerate(nf.outcome(totals)):
            stats[seat, K.ST_WINS] += res == "win"
            stats[seat, K.ST_TIES] += res == "tie"
            lg = logs[seat]
            stats[seat, K.ST_SCORE] += totals[seat]
            stats[seat, K.ST_SCORE_SQ] += totals[seat] ** 2
            stats[seat, K.ST_TURNS] += lg["turns"]
            stats[seat, K.ST_TURNS_SQ] += lg["turns"] ** 2
            stats[seat, K.ST_SCORE_TURNS] += totals[seat] * lg["turns"]
            stats[seat, K.ST_ROLLS] += lg["rolls"]
            stats[seat, K.ST_ROLLS_SQ] += lg["rolls"] ** 2
            stats[seat, K.ST_BUST_ROLLS] += lg["bust_rolls"]
            stats[seat, K.ST_BUST_ROLLS_SQ] += lg["bust_rolls"] ** 2
            stats[seat, K.ST_ROLLS_BUST_ROLLS] += lg["rolls"] * lg["bust_rolls"]
            stats[seat, K.ST_BUST_TURNS] += lg["bust_turns"]
            stats[seat, K.ST_BUST_TURNS_SQ] += lg["bust_turns"] ** 2
            stats[seat, K.ST_BUST_TURNS_TURNS] += lg["bust_turns"] * lg["turns"]
            stats[seat, K.ST_HOT_DICE] += lg["hot"]
            ahead = sum(x > totals[seat] for x in totals)  # finishing place - 1
            stats[seat, K.ST_AHEAD] += ahead
            stats[seat, K.ST_AHEAD_SQ] += ahead**2
            for q, x in enumerate(totals):
                stats[seat, K.ST_BEAT + q] += totals[seat] > x
            for n in range(1, 7):
                stats[seat, K.ST_ROLLS_N + n - 1] += lg["rolls_n"][n]
                stats[seat, K.ST_BUSTS_N + n - 1] += lg["busts_n"][n]
    return stats, np.array(totals_all, dtype=np.int64), stream.pos


CASES = {
    # name: (seats, target, games); "table" seats are random PolicyTables
    "solo-threshold": (["threshold-300"], 1500, 40),
    "solo-ai": (["ai"], 1500, 40),
    "solo-table": (["table"], 1500, 30),
    "ai-vs-threshold": (["ai", "threshold-500"], 3000, 40),
    "table-vs-table": (["table", "table"], 2000, 30),
    "three-seats-ai-variants": (["ai:per=500,max-steps=2", "ai:chase=0", "threshold-350"],
                                3000, 30),
    "four-tables": (["table", "ai", "table", "table"], 1500, 30),
    "five-seats": (["ai", "threshold-250", "table", "ai:one-die=0,two-dice=0",
                    "threshold-800"], 2000, 20),
    "six-seats": (["threshold-150", "table", "ai:base=400,step=50", "threshold-300", "ai",
                   "table"], 2000, 15),
    "seven-seats": (["threshold-200", "ai", "threshold-600", "ai:two-dice=100", "threshold-50",
                     "ai:base=500", "threshold-1000"], 2000, 10),
}
#: Random tables: (M, O, P) and the rows of a last-round table (None: no last-round table)
TABLE_SHAPES = [((3, 2, 6), 3), ((1, 1, 30), None), ((40, 40, 4), 50), ((2, 5, 12), None)]


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("case", list(CASES))
def test_kernel_matches_naive_game_on_random_dice(case, ending):
    """Every statistic, every final total and the dice used, game by game, against the
    plain-Python games on the same random faces, with the start rotating and fixed."""
    names, target, n_games = CASES[case]
    rng = np.random.default_rng(len(case))
    shapes = iter(TABLE_SHAPES)
    names = [random_table(rng, *next(shapes)) if n == "table" else n for n in names]
    pyrng = random.Random(len(case) * 7919)
    faces = [pyrng.randint(1, 6) for _ in range(400_000)]
    for first in (-1, 1 % len(names)):
        rec = run_script(names, faces, target, n_games=n_games, first_seat=first,
                         ending=ending)
        assert rec["counters"][K.C_SCRIPT_ERRORS] == 0
        policies = [naive_policy(p) for p in names]
        stats, totals, used = naive_stats(policies, faces, target, n_games, first, ending)
        assert rec["totals"].tolist() == totals.tolist()
        assert rec["used"] == used
        np.testing.assert_array_equal(rec["stats"], stats)
        if ending == "first-to-bank":
            assert (stats[:, K.ST_TIES] == 0).all()
            assert (totals >= target).sum() == n_games  # the one winner, at the target


# ----------------------------------------------------------------------- table policies


def threshold_table(t):
    """A PolicyTable that plays exactly like threshold-t (M = O = 1)."""
    p_dim = t // 50 + 1
    p = np.arange(p_dim, dtype=np.float32)
    value = np.broadcast_to(p[None, None, :, None], (1, 1, p_dim, 7)).copy()
    bank = (value * 50 >= t).astype(np.uint8)
    return PolicyTable(f"table-threshold-{t}", value, bank)


def test_table_reproducing_threshold_is_bit_identical(monkeypatch):
    # all-threshold seats normally get the lanes kernel (other games for a seed, tested in
    # test_farkle_lanes.py); here both runs must go through the general kernel
    monkeypatch.setattr(fsim, "kernel_for", lambda *args, **kwargs: fsim.GENERAL_KERNEL)
    a = simulate_farkle(seats_of("threshold-300"), games=20_000, seed=5)
    assert a.kernel == fsim.GENERAL_KERNEL
    b = simulate_farkle([threshold_table(300)], games=20_000, seed=5)
    np.testing.assert_array_equal(a.stats, b.stats)
    np.testing.assert_array_equal(a.hist, b.hist)
    a = simulate_farkle(seats_of("ai", "threshold-450"), games=20_000, seed=6, target=5000)
    b = simulate_farkle([*seats_of("ai"), threshold_table(450)], games=20_000, seed=6,
                        target=5000)
    np.testing.assert_array_equal(a.stats, b.stats)
    assert b.to_dict()["seats"][1]["policy"] == "table-threshold-450"


def test_last_round_table_is_used_only_in_the_last_round():
    # normal table: bank at any points; last-round table: bank only when beating the leader
    d_dim, p_dim = 10, 12
    d_idx = np.arange(d_dim)[:, None, None]
    value = np.broadcast_to(np.arange(p_dim, dtype=np.float32)[None, None, :, None],
                            (1, 1, p_dim, 7)).copy()
    bank = np.ones_like(value, dtype=np.uint8)
    p_idx = np.arange(p_dim)[None, :, None]
    last_bank = np.broadcast_to(p_idx > d_idx, (d_dim, p_dim, 7)).astype(np.uint8)
    last_value = np.broadcast_to(p_idx.astype(np.float32), (d_dim, p_dim, 7)).copy()
    chaser = PolicyTable("chaser", value, bank, last_value, last_bank)
    faces = rolls(ONE6, [5, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6], [1, 2, 3, 4])
    rec = run_script(["threshold-100", chaser], faces, target=100)
    assert rec["used"] == len(faces) and rec["totals"].tolist() == [[100, 200]]
    # outside the last round the same table banks its first 50, then 100 (trigger)
    faces = rolls([5, 2, 3, 4, 6, 6], BUST6, ONE6, BUST6)
    rec = run_script([chaser, "threshold-100"], faces, target=100)
    assert rec["used"] == len(faces) and rec["totals"].tolist() == [[150, 0]]


# ----------------------------------------------------------------------- statistics


@pytest.mark.slow
@pytest.mark.parametrize(("rules", "threshold", "target", "seed"),
                         [("default", 300, 10_000, 11), ("ones-300", 400, 5000, 12)])
def test_solitaire_estimates_agree_with_exact_values(rules, threshold, target, seed):
    table = PRESETS[rules]
    dist = nf.threshold_turn_distribution(table, threshold)
    ppt = sum(k * p for k, p in dist.items())
    turns = nf.expected_turns_to_target(dist, target)
    r = simulate_farkle(seats_of(f"threshold-{threshold}"), games=150_000, seed=seed,
                        target=target, rules=rules)
    s = r.seat(0)
    assert abs(s.points_per_turn.mean - ppt) < 4 * s.points_per_turn.se
    assert abs(s.bust_rate_per_turn.mean - dist[0]) < 4 * s.bust_rate_per_turn.se
    assert abs(s.mean_turns.mean - turns) < 4 * s.mean_turns.se
    assert s.win_rate.p == 1.0 and r.capped_games == 0
    assert s.percentiles[1] >= target
    exact_bust = set_asides(table).bust
    for n in range(1, 7):
        e = s.bust_by_dice[n]
        if e.n < 1000:
            continue
        assert abs(e.p - exact_bust[n]) < 4 * np.sqrt(exact_bust[n] * (1 - exact_bust[n]) / e.n)


def test_bust_risk_simulation_agrees_with_exact():
    r = simulate_bust_frequencies("default", rolls=300_000, seed=3).to_dict()
    for row in r["bust_risk"]:
        se = np.sqrt(row["p_bust"] * (1 - row["p_bust"]) / row["rolls"])
        assert abs(row["bust_rate"] - row["p_bust"]) < 4 * se
        assert row["bust_rate_ci95"][0] < row["bust_rate"] < row["bust_rate_ci95"][1]


def test_two_seat_symmetry_with_rotating_start():
    r = simulate_farkle(seats_of("threshold-300", "threshold-300"), games=60_000, seed=2)
    s0, s1 = r.seat(0), r.seat(1)
    assert s0.wins + s1.wins + s0.ties == r.games
    assert s0.ties == s1.ties and s0.losses == s1.wins
    diff = s0.win_rate.p - s1.win_rate.p
    se = np.sqrt((s0.win_rate.p + s1.win_rate.p) / r.games)
    assert abs(diff) < 4 * se
    assert s0.triggered_last_round + s1.triggered_last_round == r.games


def test_first_to_bank_runs_have_no_ties_and_one_winner_per_game():
    for seats in (["ai", "threshold-300"], ["threshold-300", "threshold-500", "threshold-700"]):
        r = simulate_farkle(seats_of(*seats), games=20_000, seed=8, target=3000,
                            ending="first-to-bank")
        assert r.rules.ending == "first-to-bank" and r.to_dict()["ending"] == "first-to-bank"
        summary = [r.seat(s) for s in range(len(seats))]
        assert sum(x.ties for x in summary) == 0
        assert sum(x.wins for x in summary) == r.games
        # the trigger is the winner: every win is a trigger, and the reverse
        assert [x.wins for x in summary] == [x.triggered_last_round for x in summary]
        # the winner is the one seat at the target; every other seat ends below it
        at_target = r.hist[:, 3000 // 50:].sum(axis=1)
        assert at_target.tolist() == [x.wins for x in summary]


# ----------------------------------------------------------------------- reproducibility


def test_same_seed_same_results_whatever_the_thread_count_or_batches():
    games = 3 * config.CHUNK_GAMES + 17
    seats = seats_of("threshold-300", "ai")

    def run():
        return simulate_farkle(seats, games=games, seed=123)

    a = with_threads(1, run)
    b = with_threads(2, run)
    np.testing.assert_array_equal(a.stats, b.stats)
    np.testing.assert_array_equal(a.hist, b.hist)
    np.testing.assert_array_equal(a.counters, b.counters)
    # one chunk per batch (one kernel call each) sums to the same
    plan = fsim.FarklePlan(tuple(seats), DEFAULT, 10_000, 123, games)
    for batch in (1, 2):
        got = with_threads(2, lambda b=batch: runner.run_plan(
            dataclasses.replace(plan, batch_chunks=b)))
        np.testing.assert_array_equal(got["stats"], a.stats)
        np.testing.assert_array_equal(got["hist"], a.hist)
        np.testing.assert_array_equal(got["counters"], a.counters)
    d = simulate_farkle(seats, games=games, seed=124)
    assert not np.array_equal(a.stats, d.stats)


#: Games of a fixed seed as the earlier kernels played them (before the set-aside encoding
#: and the named argument groups): 20,000 games, seed 99. Per seat wins, points and rolls
#: summed, and the first 16 hex digits of the SHA-256 of the statistic columns up to the
#: busts by dice count (int64, seats x 29). The seed's meaning includes CHUNK_GAMES and the
#: lane counts.
GOLDEN = {
    ("threshold-300",): (10_000, [20000], [208398050], [759286], "a6a245656e329cd6"),
    ("threshold-300", "threshold-500"): (5000, [11333, 8537], [96592450, 88747050],
                                         [351665, 479647], "78bed841c40f94e5"),
    ("ai", "threshold-300"): (5000, [10847, 9041], [92076750, 94452650], [359717, 343417],
                              "f5b1b0877515cf03"),
    ("max-ev", "ai"): (5000, [12312, 7617], [102142500, 81535850], [421995, 339319],
                       "d58509229a00ddbe"),
    ("fastest",): (3000, [20000], [67028800], [274503], "c778e002e5bc9843"),
    ("ai:base=350,two-dice=0", "threshold-450", "ai:chase=0"): (
        4000, [7793, 5206, 6790], [66136650, 64511950, 71027500], [312605, 337446, 265903],
        "9fdd67d9be8105b5"),
}


@pytest.mark.parametrize("names", list(GOLDEN), ids=" ".join)
def test_a_seed_plays_the_games_it_played_before(names):
    import hashlib

    target, wins, score, rolls_, digest = GOLDEN[names]
    r = simulate_farkle(seats_of(*names), games=20_000, seed=99, target=target)
    assert r.stats[:, K.ST_WINS].tolist() == wins
    assert r.stats[:, K.ST_SCORE].tolist() == score
    assert r.stats[:, K.ST_ROLLS].tolist() == rolls_
    columns = np.ascontiguousarray(r.stats[:, :K.ST_BUSTS_N + 6])
    assert hashlib.sha256(columns.tobytes()).hexdigest()[:16] == digest


def test_progress_callback_ticks_up_to_the_total():
    ticks = []
    simulate_farkle(seats_of("threshold-300"), games=40 * config.CHUNK_GAMES // 2, seed=1,
                    progress=lambda done, total: ticks.append((done, total)))
    assert ticks[-1] == (20 * config.CHUNK_GAMES, 20 * config.CHUNK_GAMES)
    assert [t[0] for t in ticks] == sorted({t[0] for t in ticks})
    assert len(ticks) == -(-20 // config.BATCH_CHUNKS)


def test_the_batch_size_is_read_from_config(monkeypatch):
    # config.BATCH_CHUNKS chunks per kernel call (one progress tick, one Dask task): a
    # change of it reaches Farkle runs, as it reaches Penta runs
    monkeypatch.setattr(config, "BATCH_CHUNKS", 1)
    ticks = []
    simulate_farkle(seats_of("threshold-300"), games=3 * config.CHUNK_GAMES, seed=1,
                    progress=lambda done, total: ticks.append(done))
    assert ticks == [config.CHUNK_GAMES, 2 * config.CHUNK_GAMES, 3 * config.CHUNK_GAMES]


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_games_that_never_end_are_capped_and_counted(ending):
    r = simulate_farkle(seats_of("threshold-1000000", "threshold-1000000"), games=2, seed=1,
                        target=50, ending=ending)
    assert r.capped_games == 2 and r.to_dict()["capped_games"] == 2
    assert r.stats[0, K.ST_TURNS] == 2 * config.MAX_ROUNDS
    r = simulate_farkle(seats_of("threshold-1000000"), games=2, seed=1, target=50)
    assert r.capped_games == 2 and r.to_dict()["capped_games"] == 2
    assert r.stats[0, K.ST_TURNS] == 2 * config.MAX_ROUNDS
    r = simulate_farkle(seats_of("ai", "threshold-1000000"), games=2, seed=1, target=50,
                        ending=ending)
    assert r.capped_games == 0  # ai banks, and wins


def test_fixed_first_seat():
    r = simulate_farkle(seats_of("threshold-300", "threshold-300"), games=20_000, seed=4,
                        first_seat=0)
    s0, s1 = r.seat(0), r.seat(1)
    assert s0.win_rate.p - s1.win_rate.p > 4 * np.hypot(s0.win_rate.se, s1.win_rate.se)
    assert r.manifest()["first_seat"] == 0


# ----------------------------------------------------------------------- results and errors


def test_typed_seat_summary_is_what_the_dict_reports():
    r = simulate_farkle(seats_of("threshold-300", "ai"), games=5000, seed=9, target=5000,
                        rules="basic")
    d = r.to_dict()
    for s in range(2):
        seat, sd = r.seat(s), d["seats"][s]
        assert seat is r.seat(s)  # computed once
        assert seat.wins + seat.ties + seat.losses == r.games
        assert (sd["wins"], sd["ties"], sd["losses"]) == (seat.wins, seat.ties, seat.losses)
        assert seat.win_rate.count == seat.wins and seat.win_rate.n == r.games
        assert sd["win_rate"] == seat.win_rate.p and sd["win_rate_ci95"] == list(
            seat.win_rate.ci95)
        assert sd["mean_final_score"] == seat.mean_final_score.mean == r.stats[
            s, K.ST_SCORE] / r.games
        assert sd["mean_turns_se"] == seat.mean_turns.se and seat.mean_turns.n == r.games
        assert seat.rolls == r.stats[s, K.ST_ROLLS] == sum(
            b.n for b in seat.bust_by_dice.values())
        assert seat.bust_rate_per_roll.mean == pytest.approx(
            sum(b.count for b in seat.bust_by_dice.values()) / seat.rolls, rel=1e-12)
        assert sd["bust_rate_by_dice"]["6"]["busts"] == seat.bust_by_dice[6].count
        assert seat.hot_dice == sd["hot_dice"] and seat.policy == sd["policy"]
        lo, hi = seat.mean_final_score.ci95
        assert lo < seat.mean_final_score.mean < hi
        assert list(seat.percentiles) == list(fsim.PERCENTILES)
        assert list(seat.percentiles.values()) == sorted(seat.percentiles.values())
        assert seat.histogram_top == (5000 + config.HIST_HEADROOM) // 50 * 50
    assert r.seat(1).params["base"] == 300 and r.seat(0).params == {
        "family": "threshold", "threshold": 300}


def test_result_dict_frame_and_manifest():
    r = simulate_farkle(seats_of("threshold-300", "ai"), games=5000, seed=9, target=5000,
                        rules="basic", ending="first-to-bank")
    d = r.to_dict()
    for key in ("games", "seed", "seed_given", "rules", "ending", "target", "elapsed_s",
                "games_per_s", "setup_s", "kernel", "capped_games", "seats"):
        assert key in d
    assert d["seed"] == 9 and d["seed_given"] is True and d["rules"] == "basic"
    assert d["target"] == 5000 and d["ending"] == "first-to-bank" and d["setup_s"] >= 0
    for s in d["seats"]:
        for key in ("policy", "wins", "ties", "losses", "win_rate", "win_rate_ci95",
                    "mean_final_score", "mean_turns", "points_per_turn", "bust_rate_per_turn",
                    "bust_rate_per_roll", "bust_rate_by_dice", "final_score_percentiles"):
            assert key in s
        lo, hi = s["win_rate_ci95"]
        assert lo <= s["win_rate"] <= hi
    assert d["seats"][1]["params"]["base"] == 300
    f = r.to_frame()
    assert len(f) == 2 and f["policy"].tolist() == ["threshold-300", "ai"]
    assert (f["ending"] == "first-to-bank").all() and (f["target"] == 5000).all()
    # intervals become <stat>_lo / <stat>_hi, nested summaries <key>_<subkey>
    for stat in ("win_rate", "mean_final_score", "points_per_turn",
                 "bust_rate_by_dice_1_bust_rate"):
        assert (f[f"{stat}_ci95_lo"] <= f[f"{stat}_ci95_hi"]).all()
    assert f["bust_rate_by_dice_6_busts"].tolist() == [
        s["bust_rate_by_dice"]["6"]["busts"] for s in d["seats"]]
    assert f["final_score_percentiles_50"].tolist() == [
        s["final_score_percentiles"]["50"] for s in d["seats"]]
    assert not any(isinstance(v, list | dict) for v in f.iloc[0].tolist())
    m = r.manifest()
    assert m["rules"]["name"] == "basic" and m["rules"]["ending"] == "first-to-bank"
    assert m["seed"] == 9 and m["games"] == 5000 and m["seed_given"] is True
    assert m["policies"][1]["params"]["one-die"] == 100
    assert m["chunk_games"] == config.CHUNK_GAMES and m["kernel"] == fsim.GENERAL_KERNEL


def test_fresh_seed_is_recorded_and_reproduces():
    r = simulate_farkle(seats_of("threshold-300"), games=3000)
    assert r.to_dict()["seed_given"] is False
    again = simulate_farkle(seats_of("threshold-300"), games=3000, seed=r.seed)
    np.testing.assert_array_equal(r.stats, again.stats)
    assert again.to_dict()["seed_given"] is True


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seats": ["threshold-300"] * 8}, "1 to 7 seats"),
    ({"seats": []}, "1 to 7 seats"),
    ({"target": 125}, "multiple of 50"),
    ({"target": 0}, "multiple of 50"),
    ({"target": -50}, "multiple of 50"),
    ({"games": 0}, "positive number of games"),
    ({"games": 2.5}, "positive number of games"),
    ({"rules": "nope"}, "unknown Farkle rules"),
    ({"rules": "missing.toml"}, "not found"),
    ({"ending": "sudden"}, "--ending must be one of last-round, first-to-bank"),
    ({"seed": -1}, "non-negative"),
    ({"first_seat": 1}, "seat number"),
    ({"first_seat": -1}, "seat number"),
    ({"seats": ["optimal"]}, "penta policy"),
    ({"seats": ["optimal-win"] * 3}, "two-seat games only"),
])
def test_bad_input_raises_user_error(kwargs, message):
    seats = seats_of(*kwargs.pop("seats", ["threshold-300"]))
    with pytest.raises(UserError, match=message):
        simulate_farkle(seats, **{"games": 10, **kwargs})


def test_seat_arrays_lay_out_every_kind_of_seat():
    tables = [random_table(np.random.default_rng(1), (2, 3, 5), 4),
              random_table(np.random.default_rng(2), (1, 1, 7))]
    seats = seat_arrays([tables[0], parse_policy("threshold-450"), parse_policy("ai:one-die=0"),
                         tables[1]], DEFAULT, 5000)
    assert seats.kinds.tolist() == [K.TABLE, K.THRESHOLD, K.AI, K.TABLE]
    assert seats.params[1, K.P_THRESHOLD] == 450
    assert seats.params[2].tolist() == [300, 100, 1000, 5, 50, 0, 1]  # the P_* layout
    # the tables one after the other in the flat arrays; the last-round table after its own
    m = seats.table_meta
    assert m[0, [K.T_OFFSET, K.T_M, K.T_O, K.T_P, K.T_D]].tolist() == [0, 2, 3, 5, 4]
    assert m[0, K.T_LAST_OFFSET] == tables[0].value.size
    assert m[3, K.T_OFFSET] == tables[0].value.size + tables[0].last_value.size
    assert m[3, K.T_LAST_OFFSET] == -1 and m[1, K.T_LAST_OFFSET] == -1
    assert seats.table_value.size == seats.table_bank.size == m[3, K.T_OFFSET] + 7 * 7
    np.testing.assert_array_equal(seats.table_value[m[3, K.T_OFFSET]:],
                                  tables[1].value.ravel())
    with pytest.raises(UserError, match="penta policy"):
        seat_arrays([parse_policy("greedy")], DEFAULT, 5000)
    with pytest.raises(TypeError, match="PolicySpec or a PolicyTable"):
        seat_arrays(["ai"], DEFAULT, 5000)


def test_a_turn_that_can_never_bust_is_capped(tmp_path):
    f = tmp_path / "all-score.toml"
    f.write_text('name = "all-score"\nsingles = {1 = 100, 2 = 50, 3 = 50, 4 = 50, 5 = 50, '
                 '6 = 50}\n')
    r = simulate_farkle(seats_of("threshold-100000000000"), games=1, seed=1, rules=str(f))
    assert r.capped_games == 1
    assert r.stats[0, K.ST_ROLLS] == config.MAX_TURN_ROLLS
    assert r.stats[0, K.ST_ROLLS_N:K.ST_ROLLS_N + 6].sum() == config.MAX_TURN_ROLLS
    assert r.stats[0, K.ST_SCORE] == 0  # a turn cut off by the cap banks nothing


@pytest.mark.slow
def test_exact_policies_played_by_the_kernel_match_their_solved_values():
    """The kernel plays the solvers' PolicyTables: simulated means agree with exact values."""
    from dicelab.farkle.solitaire import solve_fastest, solve_max_ev

    ev = solve_max_ev(DEFAULT).expected_score
    r = simulate_farkle(seats_of("max-ev"), games=40_000, seed=21).seat(0)
    assert abs(r.points_per_turn.mean - ev) < 4 * r.points_per_turn.se
    turns = solve_fastest(DEFAULT, 5000).expected_turns_to_target
    r = simulate_farkle(seats_of("fastest"), games=40_000, seed=22, target=5000).seat(0)
    assert abs(r.mean_turns.mean - turns) < 4 * r.mean_turns.se


@pytest.mark.parametrize("games", [2, 5, 200])
def test_the_mean_place_interval_is_a_t_interval_within_the_places(games):
    """From a few games the mean place's interval is a t interval (it was a normal one)
    kept within 1 to the number of seats (two games printed [0.520, 2.480])."""
    from scipy.stats import t as t_dist

    r = simulate_farkle(seats_of("threshold-300", "ai"), games=games, seed=1, target=1000)
    for s in range(2):
        e = r.seat(s).mean_place
        lo, hi = e.ci95
        q = float(t_dist.ppf(0.975, games - 1))
        assert e.df == games - 1 and 1.0 <= lo <= e.mean <= hi <= 2.0
        assert lo == pytest.approx(max(1.0, e.mean - q * e.se))
        assert hi == pytest.approx(min(2.0, e.mean + q * e.se))


def test_per_game_means_keep_to_what_a_game_can_give():
    """From two games the t interval is wide: it stops at 1 turn and 0 points (no penalty),
    and two games alike (one turn each) measure no error at all."""
    spread = [simulate_farkle([parse_policy("threshold-300")] * 2, games=2, seed=seed,
                              target=300).seat(0) for seed in (0, 2)]
    alike, apart = spread
    assert alike.mean_turns.mean == 1.0 and math.isnan(alike.mean_turns.se)
    assert apart.mean_turns.ci95[0] == 1.0 < apart.mean_turns.mean
    assert apart.mean_turns.mean - 1.96 * apart.mean_turns.se < 1.0  # (a normal one: below)
    for s in spread:
        assert s.mean_final_score.ci95[0] == 0.0 and s.points_per_turn.ci95[0] == 0.0
    penalty = simulate_farkle([parse_policy("threshold-300")] * 2, games=4, seed=1,
                              target=300, rules=PRESETS["facebook"]).seat(0)
    assert penalty.mean_final_score.bounds is None  # totals may fall below zero there
