"""Policy tables of the farkle penalty: 6-D tables (lost-turn axes of this seat and of the
best opponent) and a floor (totals below zero), played by the general kernel against the
plain-Python games of tests/naive_farkle, against their 4-D equivalents, and by the play
engine; their shape checks and the exact head to head's refusal."""

from __future__ import annotations

import random

import naive_farkle as nf
import numpy as np
import pytest
from test_farkle_sim import naive_policy, naive_stats, random_table, run_script

from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.exact import exact_pair
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import PENALTY_STREAK, PRESETS
from dicelab.farkle.simulate import simulate_farkle
from dicelab.play import Player, ScriptedDice
from dicelab.play.farkle import FarkleGame
from dicelab.registry import PolicySpec, parse_policy

FACEBOOK = PRESETS["facebook"]  # min bank 300, penalty 500, first to bank
DEFAULT = PRESETS["default"]
S = PENALTY_STREAK
TARGET, N_GAMES = 1500, 30


def streak_table(floor: int = 10, m_dim: int = 30, o_dim: int = 28, rows: int = 40,
                 seed: int = 0) -> PolicyTable:
    """A 6-D table from simple rules: the bank threshold rises with this seat's lost
    turns, falls with the opponent's, rises below zero and when behind; the value weighs
    the dice left by a weight that depends on the same things (so the set-aside choice
    varies with them too), plus small integer noise (ties)."""
    a = np.arange(S)[:, None, None, None, None, None]
    b = np.arange(S)[None, :, None, None, None, None]
    m = np.arange(m_dim)[None, None, :, None, None, None] - floor  # total // 50
    o = np.arange(o_dim)[None, None, None, :, None, None] - floor
    p = np.arange(rows)[None, None, None, None, :, None]
    n = np.arange(7)[None, None, None, None, None, :]
    thr = 700 + 250 * a - 150 * b + 300 * (m < 0) - 100 * (o < 0) + 100 * (o > m)
    bank = (p * 50 >= thr - 100 * (n <= 2)).astype(np.uint8)
    weight = (a + 2 * b + 3 * (m < 0) + (o < 0)) % 4 - 1
    noise = np.random.default_rng(seed).integers(0, 2, size=bank.shape)
    value = (p + weight * n + noise).astype(np.float32)
    return PolicyTable("streaks", value, bank, floor=floor)


def with_value(pt: PolicyTable, value, bank, floor: int) -> PolicyTable:
    return PolicyTable(pt.name, np.ascontiguousarray(value), np.ascontiguousarray(bank),
                       pt.last_value, pt.last_bank, floor=floor)


def faces_of(seed: int, n: int = 200_000) -> list[int]:
    rnd = random.Random(seed)
    return [rnd.randint(1, 6) for _ in range(n)]


def kernel_and_naive(seats, faces, target, n_games, first, rules):
    rec = run_script(seats, faces, target, n_games=n_games, first_seat=first, table=rules,
                     ending=rules.ending)
    assert rec["counters"][K.C_SCRIPT_ERRORS] == 0
    stats, totals, used = naive_stats([naive_policy(p) for p in seats], faces, target,
                                      n_games, first, rules.ending, rules)
    return rec, stats, totals, used


# ----------------------------------------------------------------------- kernel vs naive


CASES = [
    (["table", "threshold-1000"], 1),
    (["threshold-1000", "threshold-400", "table"], 2),  # ties of the best opponent
    (["table", "table"], 3),
]


@pytest.mark.parametrize(("seats", "seed"), CASES)
def test_kernel_plays_a_streak_table_with_floor_as_the_naive_games(seats, seed, monkeypatch):
    """Every statistic, final total and die used, under the farkle penalty; the games
    reach every lost-turn count of both seats and totals below zero of both."""
    pt = streak_table(seed=seed)
    seats = [pt if s == "table" else s for s in seats]
    faces = faces_of(seed)
    seen: set = set()
    play_turn = nf.play_turn

    def spy(t, policy, dice, my_total, best_opp, *rest):
        if isinstance(policy, nf.Table):
            seen.update({("me", rest[-2]), ("opp", rest[-1]), ("me<0", my_total < 0),
                         ("opp<0", best_opp < 0)})
        return play_turn(t, policy, dice, my_total, best_opp, *rest)

    monkeypatch.setattr(nf, "play_turn", spy)
    for first in (-1, 1):
        rec, stats, totals, used = kernel_and_naive(seats, faces, TARGET, N_GAMES, first,
                                                    FACEBOOK)
        assert rec["totals"].tolist() == totals.tolist()
        assert rec["used"] == used
        np.testing.assert_array_equal(rec["stats"], stats)
    want = {(w, k) for w in ("me", "opp") for k in range(S)} | {("me<0", True)}
    if len(seats) == 2:
        want.add(("opp<0", True))
    assert want <= seen


def test_the_streak_axes_and_the_floor_are_read():
    """The same games with the table's streak axes or floor dropped differ."""
    pt = streak_table(seed=1)
    faces = faces_of(1)
    # without its streak axes (counts 0 always), without its floor, floor forgotten
    flat = with_value(pt, pt.value[0, 0], pt.bank[0, 0], pt.floor)
    no_floor = with_value(pt, pt.value[:, :, pt.floor:, pt.floor:],
                          pt.bank[:, :, pt.floor:, pt.floor:], 0)
    shifted = with_value(pt, pt.value, pt.bank, 0)
    rec = run_script([pt, "threshold-1000"], faces, TARGET, n_games=N_GAMES, first_seat=-1,
                     table=FACEBOOK, ending=FACEBOOK.ending)
    for other in (flat, no_floor, shifted):
        rec2 = run_script([other, "threshold-1000"], faces, TARGET, n_games=N_GAMES,
                          first_seat=-1, table=FACEBOOK, ending=FACEBOOK.ending)
        assert not np.array_equal(rec2["stats"], rec["stats"])


def test_naive_games_count_lost_turns_and_take_the_penalty():
    bust = [2, 3, 4, 6, 2, 3]
    ones = [1, 1, 1, 2, 3, 4]
    faces = bust * 3 + ones
    totals, _, _ = nf.play_game(FACEBOOK, [nf.Threshold(300)], nf.FaceStream(faces), 500,
                                0, "first-to-bank")
    assert totals == [500]  # -500, then 1000
    rec = run_script(["threshold-300"], faces + bust * 20, 500, table=FACEBOOK,
                     ending="first-to-bank")
    assert rec["totals"].tolist() == [[500]]


# ----------------------------------------------------------------------- equivalences


def test_equal_streak_axes_play_as_the_4d_table():
    rng = np.random.default_rng(7)
    t4 = random_table(rng, (6, 5, 14), 4)
    v6 = np.broadcast_to(t4.value, (S, S, *t4.value.shape))
    b6 = np.broadcast_to(t4.bank, (S, S, *t4.bank.shape))
    t6 = PolicyTable("t6", np.ascontiguousarray(v6), np.ascontiguousarray(b6), t4.last_value,
                     t4.last_bank)
    assert (t4.streaks, t6.streaks) == (1, S)
    for rules in (FACEBOOK, DEFAULT):
        runs = [simulate_farkle([t, parse_policy("ai")], games=2000,
                                seed=11, target=1500, rules=rules) for t in (t4, t6)]
        np.testing.assert_array_equal(runs[0].stats, runs[1].stats)
        np.testing.assert_array_equal(runs[0].hist, runs[1].hist)


def test_a_floor_with_rows_shifted_plays_as_the_table_without():
    rng = np.random.default_rng(8)
    t4 = random_table(rng, (6, 5, 14), 4)
    f = 3
    pad = ((f, 0), (f, 0), (0, 0), (0, 0))
    # rows below zero like row 0: the same game even where totals go below zero
    edge = with_value(t4, np.pad(t4.value, pad, mode="edge"), np.pad(t4.bank, pad,
                                                                      mode="edge"), f)
    # rows below zero anything: the same game while totals stay at or above zero
    junk_v = np.pad(t4.value, pad, constant_values=99.0)
    junk_b = np.pad(t4.bank, pad, constant_values=1)
    junk = with_value(t4, junk_v, junk_b, f)
    opp = parse_policy("threshold-600")

    def sim(t, rules):
        return simulate_farkle([t, opp], games=2000, seed=12, target=1500, rules=rules)

    base = {r.name: sim(t4, r) for r in (FACEBOOK, DEFAULT)}
    for rules in (FACEBOOK, DEFAULT):
        np.testing.assert_array_equal(sim(edge, rules).stats, base[rules.name].stats)
    np.testing.assert_array_equal(sim(junk, DEFAULT).stats, base[DEFAULT.name].stats)
    # ... and not when they go below zero (so the junk rows are read)
    assert not np.array_equal(sim(junk, FACEBOOK).stats, base[FACEBOOK.name].stats)


def test_seat_arrays_lays_out_streaks_and_floor():
    pt = streak_table(floor=4, m_dim=9, o_dim=7, rows=5)
    t4 = random_table(np.random.default_rng(1), (2, 3, 5))
    seats = seat_arrays([t4, pt, parse_policy("ai")], DEFAULT, 1000)
    m = seats.table_meta
    assert m.shape[1] == K.N_TABLE_META
    cols = [K.T_OFFSET, K.T_S, K.T_M, K.T_O, K.T_P, K.T_FLOOR, K.T_LAST_OFFSET]
    assert m[0, cols].tolist() == [0, 1, 2, 3, 5, 0, -1]
    assert m[1, cols].tolist() == [t4.value.size, S, 9, 7, 5, 4, -1]
    assert m[2, K.T_S] == 1 and m[2, K.T_FLOOR] == 0
    np.testing.assert_array_equal(seats.table_value[t4.value.size:], pt.value.ravel())


def test_seats_share_a_policy_and_copy_tables_only_within_the_memory_limit(monkeypatch):
    seats = seat_arrays([parse_policy("max-ev"), parse_policy("max-ev")], PRESETS["facebook"],
                        1000)
    assert (seats.table_meta[0] == seats.table_meta[1]).all()  # one table for both seats
    assert seats.table_value.size == seats.table_meta[0, K.T_S] ** 2 * seats.table_meta[
        0, K.T_P] * 7  # not copied
    pt = streak_table(floor=4, m_dim=9, o_dim=7, rows=5)
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "1kB")
    with pytest.raises(UserError, match="policy tables, copied together"):
        seat_arrays([pt, pt], DEFAULT, 1000)


# ----------------------------------------------------------------------- shapes


def test_shape_checks():
    v4 = np.zeros((2, 3, 5, 7), np.float32)
    b4 = np.zeros((2, 3, 5, 7), np.uint8)
    v6, b6 = np.zeros((S, S, 2, 3, 5, 7), np.float32), np.zeros((S, S, 2, 3, 5, 7), np.uint8)
    last = np.zeros((4, 5, 7), np.float32), np.zeros((4, 5, 7), np.uint8)
    assert PolicyTable("a", v4, b4, *last).streaks == 1
    t6 = PolicyTable("b", v6, b6, *last, floor=2)
    assert (t6.streaks, t6.dims, t6.floor) == (S, (S, 2, 3, 5), 2)
    bad = [
        (np.zeros((3, 2, 3, 5, 7), np.float32), "shape"),  # 5-D
        (np.zeros((2, 3, 2, 3, 5, 7), np.float32), "streak axes"),
        (np.zeros((S, S, 2, 3, 5, 6), np.float32), "shape"),
    ]
    for value, msg in bad:
        with pytest.raises(ValueError, match=msg):
            PolicyTable("x", value, value.astype(np.uint8))
    with pytest.raises(ValueError, match="bank"):
        PolicyTable("x", v6, b4)
    with pytest.raises(ValueError, match="last_value"):
        PolicyTable("x", v6, b6, np.zeros((4, 6, 7), np.float32), np.zeros((4, 6, 7),
                                                                           np.uint8))
    for floor in (-1, 1.5, True):
        with pytest.raises(ValueError, match="floor"):
            PolicyTable("x", v6, b6, floor=floor)


def test_normal_reads_both_forms_as_the_kernel():
    pt = streak_table(floor=4, m_dim=9, o_dim=7, rows=5)
    v, b = pt.normal(5, 1, -250, 2000)  # counts clamp to S - 1, totals to the axes
    np.testing.assert_array_equal(v, pt.value[S - 1, 1, 0, 6])
    np.testing.assert_array_equal(b, pt.bank[S - 1, 1, 0, 6])
    v, _ = pt.normal(0, 0, -10_000, -50)
    np.testing.assert_array_equal(v, pt.value[0, 0, 0, 3])
    t4 = random_table(np.random.default_rng(2), (3, 2, 5))
    np.testing.assert_array_equal(t4.normal(2, 2, 100, -100)[0], t4.value[2, 0])


# ----------------------------------------------------------------------- other readers


def test_exact_head_to_head_refuses_penalty_tables_in_one_line():
    t4 = random_table(np.random.default_rng(3), (1, 1, 10))
    for pt in (streak_table(floor=0, m_dim=1, o_dim=1, rows=10),
               with_value(t4, t4.value, t4.bank, 2)):
        with pytest.raises(UserError, match="farkle penalty") as e:
            exact_pair(pt, "threshold-300", target=1000)
        assert "\n" not in str(e.value)


def test_play_engine_plays_a_streak_table_as_the_kernel():
    pt = streak_table(seed=4)
    for k, seed in enumerate((21, 22, 23)):
        faces = faces_of(seed, 20_000)
        policies = [pt, "threshold-1000"] if k % 2 == 0 else ["ai", pt]
        players = [Player(f"p{i}", PolicySpec("farkle", "user", "streak-table", {}, policy=p)
                          if p is pt else parse_policy(p, "farkle"))
                   for i, p in enumerate(policies)]
        g = FarkleGame(players, rules=FACEBOOK, target=1000, dice=ScriptedDice(faces))
        g.start()
        while g.phase != "over":
            g.step()
        rec = run_script(policies, faces, 1000, table=FACEBOOK, ending=FACEBOOK.ending)
        assert g.totals == rec["totals"][0].tolist() and g.dice.pos == rec["used"]
