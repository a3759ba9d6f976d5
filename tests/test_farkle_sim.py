"""Farkle game kernel and runner: scripted game flow, naive cross-checks, statistics,
reproducibility across thread counts, table policies, bad input."""

from __future__ import annotations

import random
import sys

import naive_farkle as nf
import numpy as np
import pytest
from numba_threads import with_threads

from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import simulate as fsim
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.scoring import PRESETS, compile_table
from dicelab.farkle.simulate import scoring_arrays, simulate_bust_frequencies, simulate_farkle
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


def run_script(seats, faces, target, n_games=1, first_seat=0, table=DEFAULT):
    """Run the jitted game kernel on scripted dice; returns a small record."""
    sa = seat_arrays(seats_of(*seats), table, target)
    arrays = scoring_arrays(compile_table(table))
    s = sa.n_seats
    stats = np.zeros((s, K.N_STATS), dtype=np.int64)
    hist = np.zeros((s, (target + fsim.HIST_HEADROOM) // 50 + 1), dtype=np.int64)
    counters = np.zeros(K.N_CHUNK_COUNTERS, dtype=np.int64)
    totals = np.zeros((n_games, s), dtype=np.int64)
    used = K.run_scripted(np.asarray(faces, dtype=np.int64), n_games, s, first_seat, target,
                          *sa.kernel_args(), *arrays, stats, hist, counters, totals)
    return {"used": int(used), "stats": stats, "counters": counters, "totals": totals,
            "hist": hist}


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


def naive_stats(policies, faces, target, n_games, first_seat):
    stream = nf.FaceStream(faces)
    s = len(policies)
    stats = np.zeros((s, K.N_STATS), dtype=np.int64)
    totals_all = []
    for i in range(n_games):
        start = first_seat if first_seat >= 0 else i % s
        totals, logs, trigger = nf.play_game(DEFAULT, policies, stream, target, start)
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
            for n in range(1, 7):
                stats[seat, K.ST_ROLLS_N + n - 1] += lg["rolls_n"][n]
                stats[seat, K.ST_BUSTS_N + n - 1] += lg["busts_n"][n]
    return stats, np.array(totals_all, dtype=np.int64), stream.pos


CASES = {
    "solo-threshold": (["threshold-300"], 1500, 40),
    "solo-ai": (["ai"], 1500, 40),
    "ai-vs-threshold": (["ai", "threshold-500"], 3000, 40),
    "three-seats-ai-variants": (["ai:per=500,max-steps=2", "ai:chase=0", "threshold-350"],
                                3000, 30),
    "seven-seats": (["threshold-200", "ai", "threshold-600", "ai:two-dice=100", "threshold-50",
                     "ai:base=500", "threshold-1000"], 2000, 10),
    "tables": ("tables", 1500, 30),
}


@pytest.mark.parametrize("case", list(CASES))
def test_kernel_matches_naive_game_on_random_dice(case):
    names, target, n_games = CASES[case]
    rng = np.random.default_rng(len(case))
    if names == "tables":
        names = [random_table(rng, (3, 2, 6), last_d=3), "ai",
                 random_table(rng, (1, 1, 30)), random_table(rng, (40, 40, 4), last_d=50)]
    pyrng = random.Random(len(case) * 7919)
    faces = [pyrng.randint(1, 6) for _ in range(400_000)]
    for first in (-1, 1 % len(names)):
        rec = run_script(names, faces, target, n_games=n_games, first_seat=first)
        assert rec["counters"][K.C_SCRIPT_ERRORS] == 0
        policies = [naive_policy(p) for p in names]
        stats, totals, used = naive_stats(policies, faces, target, n_games, first)
        assert rec["totals"].tolist() == totals.tolist()
        assert rec["used"] == used
        np.testing.assert_array_equal(rec["stats"], stats)


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
    monkeypatch.setattr(fsim, "kernel_for", lambda seats: fsim.GENERAL_KERNEL)
    a = simulate_farkle(seats_of("threshold-300"), games=20_000, seed=5)
    assert a.kernel == fsim.GENERAL_KERNEL
    b = simulate_farkle([threshold_table(300)], games=20_000, seed=5)
    np.testing.assert_array_equal(a.stats, b.stats)
    np.testing.assert_array_equal(a.hist, b.hist)
    a = simulate_farkle(seats_of("ai", "threshold-450"), games=20_000, seed=6, target=5000)
    b = simulate_farkle([*seats_of("ai"), threshold_table(450)], games=20_000, seed=6,
                        target=5000)
    np.testing.assert_array_equal(a.stats, b.stats)
    assert b.to_dict()["seats"][1]["strategy"] == "table-threshold-450"


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


@pytest.mark.parametrize(("rules", "threshold", "target", "seed"),
                         [("default", 300, 10_000, 11), ("ones-300", 400, 5000, 12)])
def test_solitaire_estimates_agree_with_exact_values(rules, threshold, target, seed):
    table = PRESETS[rules]
    dist = nf.threshold_turn_distribution(table, threshold)
    ppt = sum(k * p for k, p in dist.items())
    bust_turn = dist[0]
    turns = nf.expected_turns_to_target(dist, target)
    r = simulate_farkle(seats_of(f"threshold-{threshold}"), games=150_000, seed=seed,
                        target=target, rules=rules)
    s = r.to_dict()["seats"][0]
    assert abs(s["points_per_turn"] - ppt) < 4 * s["points_per_turn_se"]
    assert abs(s["bust_rate_per_turn"] - bust_turn) < 4 * s["bust_rate_per_turn_se"]
    assert abs(s["mean_turns"] - turns) < 4 * s["mean_turns_se"]
    assert s["win_rate"] == 1.0 and r.capped_games == 0
    assert s["final_score_percentiles"]["1"] >= target
    exact_bust = compile_table(table).bust
    for n in range(1, 7):
        e = s["bust_rate_by_dice"][str(n)]
        if e["rolls"] < 1000:
            continue
        se = np.sqrt(exact_bust[n] * (1 - exact_bust[n]) / e["rolls"])
        assert abs(e["rate"] - exact_bust[n]) < 4 * se


def test_bust_risk_simulation_agrees_with_exact():
    r = simulate_bust_frequencies("default", rolls=300_000, seed=3).to_dict()
    for row in r["bust_risk"]:
        se = np.sqrt(row["exact"] * (1 - row["exact"]) / row["rolls"])
        assert abs(row["simulated"] - row["exact"]) < 4 * se
        assert row["ci95"][0] < row["simulated"] < row["ci95"][1]


def test_two_seat_symmetry_with_rotating_start():
    r = simulate_farkle(seats_of("threshold-300", "threshold-300"), games=60_000, seed=2)
    s0, s1 = r.to_dict()["seats"]
    assert s0["wins"] + s1["wins"] + s0["ties"] == r.games
    assert s0["ties"] == s1["ties"]
    diff = s0["win_rate"] - s1["win_rate"]
    se = np.sqrt((s0["win_rate"] + s1["win_rate"]) / r.games)
    assert abs(diff) < 4 * se
    assert s0["triggered_last_round"] + s1["triggered_last_round"] == r.games


# ----------------------------------------------------------------------- reproducibility


def test_same_seed_same_results_whatever_the_thread_count(monkeypatch):
    games = 3 * fsim.CHUNK_GAMES + 17
    seats = seats_of("threshold-300", "ai")
    def run():
        return simulate_farkle(seats, games=games, seed=123)

    a = with_threads(1, run)
    b = with_threads(2, run)
    monkeypatch.setattr(fsim, "BATCH_CHUNKS", 1)
    c = with_threads(2, run)
    for x in (b, c):
        np.testing.assert_array_equal(a.stats, x.stats)
        np.testing.assert_array_equal(a.hist, x.hist)
        np.testing.assert_array_equal(a.counters, x.counters)
    d = simulate_farkle(seats, games=games, seed=124)
    assert not np.array_equal(a.stats, d.stats)


def test_progress_callback_ticks_up_to_the_total():
    ticks = []
    simulate_farkle(seats_of("threshold-300"), games=40 * fsim.CHUNK_GAMES // 2, seed=1,
                    progress=lambda done, total: ticks.append((done, total)))
    assert ticks[-1] == (20 * fsim.CHUNK_GAMES, 20 * fsim.CHUNK_GAMES)
    assert [t[0] for t in ticks] == sorted({t[0] for t in ticks}) and len(ticks) == 2


def test_games_that_never_end_are_capped_and_counted():
    r = simulate_farkle(seats_of("threshold-1000000"), games=2, seed=1, target=50)
    assert r.capped_games == 2 and r.to_dict()["capped_games"] == 2
    assert r.stats[0, K.ST_TURNS] == 2 * K.MAX_ROUNDS


def test_fixed_first_seat():
    r = simulate_farkle(seats_of("threshold-300", "threshold-300"), games=20_000, seed=4,
                        first_seat=0)
    s0, s1 = r.to_dict()["seats"]
    assert s0["win_rate"] > s1["win_rate"]  # moving first is an advantage
    assert r.manifest()["first_seat"] == 0


# ----------------------------------------------------------------------- results and errors


def test_result_dict_frame_and_manifest():
    r = simulate_farkle(seats_of("threshold-300", "ai"), games=5000, seed=9, target=5000,
                        rules="basic")
    d = r.to_dict()
    for key in ("games", "seed", "rules", "target", "elapsed_s", "games_per_s", "seats"):
        assert key in d
    assert d["seed"] == 9 and d["rules"] == "basic" and d["target"] == 5000
    for s in d["seats"]:
        for key in ("strategy", "wins", "ties", "win_rate", "win_rate_ci", "mean_final_score",
                    "mean_turns", "points_per_turn", "bust_rate_per_turn"):
            assert key in s
        lo, hi = s["win_rate_ci"]
        assert lo <= s["win_rate"] <= hi
    assert d["seats"][1]["params"]["base"] == 300
    f = r.to_frame()
    assert len(f) == 2 and f["strategy"].tolist() == ["threshold-300", "ai"]
    m = r.manifest()
    assert m["rules"]["name"] == "basic" and m["seed"] == 9 and m["games"] == 5000
    assert m["policies"][1]["params"]["one-die"] == 100
    assert m["chunk_games"] == fsim.CHUNK_GAMES


def test_fresh_seed_is_recorded_and_reproduces():
    r = simulate_farkle(seats_of("threshold-300"), games=3000)
    again = simulate_farkle(seats_of("threshold-300"), games=3000, seed=r.seed)
    np.testing.assert_array_equal(r.stats, again.stats)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seats": ["threshold-300"] * 8}, "1 to 7 seats"),
    ({"target": 125}, "multiple of 50"),
    ({"target": 0}, "multiple of 50"),
    ({"target": -50}, "multiple of 50"),
    ({"games": 0}, "positive number of games"),
    ({"rules": "nope"}, "unknown Farkle rules"),
    ({"rules": "missing.toml"}, "not found"),
    ({"seed": -1}, "non-negative"),
    ({"first_seat": 1}, "seat number"),
    ({"seats": ["optimal"]}, "penta policy"),
])
def test_bad_input_raises_user_error(kwargs, message):
    seats = seats_of(*kwargs.pop("seats", ["threshold-300"]))
    with pytest.raises(UserError, match=message):
        simulate_farkle(seats, **{"games": 10, **kwargs})


def test_exact_policy_without_solver_is_a_user_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "dicelab.farkle.exact", None)  # import fails
    with pytest.raises(UserError, match="not available yet"):
        simulate_farkle(seats_of("max-ev"), games=10, seed=1)


def test_a_turn_that_can_never_bust_is_capped(tmp_path):
    f = tmp_path / "all-score.toml"
    f.write_text('name = "all-score"\nsingles = {1 = 100, 2 = 50, 3 = 50, 4 = 50, 5 = 50, '
                 '6 = 50}\n')
    r = simulate_farkle(seats_of("threshold-100000000000"), games=1, seed=1, rules=str(f))
    assert r.capped_games == 1
    assert r.stats[0, K.ST_ROLLS] == K.MAX_TURN_ROLLS
    assert r.stats[0, K.ST_ROLLS_N:K.ST_ROLLS_N + 6].sum() == K.MAX_TURN_ROLLS


def test_benchmark_rng_kernel_draws_exactly_the_requested_rolls():
    # the checksum is the sum of the raw draws u < 6**n, in the order n = 1..6
    from dicelab.rng import rand_below
    from dicelab.seeding import chunk_states

    states = chunk_states(3, 0, 2)
    per_chunk = np.array([[0, 3, 0, 2, 0, 0, 5], [0, 0, 1, 0, 0, 4, 0]], dtype=np.int64)
    out = np.zeros(2, dtype=np.int64)
    K.rng_cost(states.copy(), per_chunk, out)
    for c in range(2):
        st = states[c].copy()
        expected = sum(int(rand_below(st, 6**n)) for n in range(1, 7)
                       for _ in range(per_chunk[c, n]))
        assert out[c] == expected


def test_exact_policies_played_by_the_kernel_match_their_solved_values():
    """The kernel plays the solvers' PolicyTables: simulated means agree with exact values."""
    from dicelab.farkle.turn_dp import solve_fastest, solve_max_ev

    ev = solve_max_ev(DEFAULT).expected_score
    r = simulate_farkle(seats_of("max-ev"), games=40_000, seed=21).to_dict()["seats"][0]
    assert abs(r["points_per_turn"] - ev) < 4 * r["points_per_turn_se"]
    turns = solve_fastest(DEFAULT, 5000).expected_turns
    r = simulate_farkle(seats_of("fastest"), games=40_000, seed=22,
                        target=5000).to_dict()["seats"][0]
    assert abs(r["mean_turns"] - turns) < 4 * r["mean_turns_se"]
