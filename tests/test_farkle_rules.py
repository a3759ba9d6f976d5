"""Farkle scoring and legal set-asides, every roll of 1..6 dice, against tests/naive_farkle."""

from __future__ import annotations

import itertools

import naive_farkle as nf
import numpy as np
import pytest

from dicelab import dice
from dicelab.farkle import kernels as K
from dicelab.farkle.scoring import PRESETS, compile_table, parse_scoring_toml
from dicelab.farkle.simulate import scoring_arrays

HOUSE = parse_scoring_toml(
    """
    name = "house"
    base = "default"
    singles = {1 = 100, 5 = 50, 6 = 50}
    three-of-a-kind = {2 = 250}
    n-of-a-kind-mode = "double"
    three-pairs = 1000
    four-and-pair-as-three-pairs = false
    two-triplets = 0
    """, source="house.toml")

TABLES = [PRESETS["default"], PRESETS["basic"], PRESETS["ones-300"], HOUSE]
ROLLS = range(int(dice.SIZE_OFFSET[1]), int(dice.SIZE_OFFSET[7]))  # every roll of 1..6 dice


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_setaside_scores_and_legal_sizes_for_every_roll(table):
    c = compile_table(table)
    keep_score, max_keep, all_score = scoring_arrays(c)
    for r in ROLLS:
        roll = tuple(dice.dice_of_rank(r))
        p = nf.best_partition(table, roll)
        assert c.setaside_score[r] == (p if p is not None and p > 0 else -1), roll
        by = nf.best_by_size(table, roll)
        expected = np.zeros(7, dtype=np.int64)
        for k, pts in by.items():
            expected[k] = pts
        assert keep_score[r].tolist() == expected.tolist(), roll
        k, pts = nf.all_scoring(table, roll)
        assert max_keep[r] == k, roll
        assert all_score[r] == pts, roll
        # the chosen set-aside really is a sub-multiset of the roll with those points
        for kk in range(1, len(roll) + 1):
            s = int(c.keep_rank[r, kk])
            if expected[kk] == 0:
                assert s == -1
            else:
                assert dice.SIZE[s] == kk and np.all(dice.COUNTS[s] <= dice.COUNTS[r])
                assert nf.best_partition(table, tuple(dice.dice_of_rank(s))) == expected[kk]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_exact_bust_probability_by_full_enumeration(table):
    c = compile_table(table)
    for n in range(1, 7):
        assert c.bust[n] == pytest.approx(nf.bust_probability(table, n), abs=1e-15)


def test_default_bust_table_matches_the_published_risks():
    c = compile_table(PRESETS["default"])
    published = [66.67, 44.44, 27.78, 15.74, 7.72, 2.31]
    assert [round(100 * c.bust[n], 2) for n in range(1, 7)] == published
    # exact fractions: 4/6, 16/36, 60/216, 204/1296, 600/7776, 1080/46656
    assert c.bust[1] == pytest.approx(2 / 3)
    assert c.bust[6] == pytest.approx(1080 / 46656)


def test_rule_examples():
    t = PRESETS["default"]
    c = compile_table(t)
    r = dice.rank_of_dice([1, 2, 3, 4, 6, 6])  # RULES: only the 1 may be set aside
    assert c.max_keep[r] == 1 and c.keep_score[r].tolist() == [0, 100, 0, 0, 0, 0, 0]
    r = dice.rank_of_dice([1, 1, 1, 1])  # three 1s + a 1 beats four of a kind
    assert c.keep_score[r, 4] == 1100
    r = dice.rank_of_dice([2, 2, 2, 2, 3, 3])  # four of a kind + a pair = three pairs
    assert c.keep_score[r, 6] == 1500 and c.max_keep[r] == 6
    r = dice.rank_of_dice([5, 5, 2, 3, 4, 6])  # 5 5 and a straight-less rest
    assert c.max_keep[r] == 2 and c.keep_score[r, 2] == 100 and c.keep_score[r, 1] == 50
    r = dice.rank_of_dice([1, 2, 3, 4, 5, 6])
    assert c.keep_score[r, 6] == 1500 and c.keep_score[r, 2] == 150


def test_scripted_roll_maps_faces_to_the_multiset_rank():
    for n in range(1, 5):
        for seq in itertools.product(range(1, 7), repeat=n):
            cursor = np.zeros(2, dtype=np.int64)
            r = K._scripted_roll(np.array(seq, dtype=np.int64), cursor, n)
            assert r == dice.rank_of_dice(seq)
            assert cursor[0] == n and cursor[1] == 0
    cursor = np.zeros(2, dtype=np.int64)
    K._scripted_roll(np.array([1, 2], dtype=np.int64), cursor, 3)
    assert cursor[1] == 1  # exhausted script is flagged, not read past its end


def test_random_roll_kernel_is_fair_enough():
    """The jitted bust counter uses the real roll; 6-dice rolls hit every face evenly."""
    from dicelab.seeding import chunk_bounds, chunk_states

    bounds = chunk_bounds(200_000)
    states = chunk_states(7, 0, len(bounds) - 1)
    out = np.zeros((len(bounds) - 1, 7), dtype=np.int64)
    max_keep = scoring_arrays(compile_table(PRESETS["default"]))[1]
    K.bust_counts(states, bounds, max_keep, out)
    busts = out.sum(axis=0)
    for n in range(1, 7):
        p = compile_table(PRESETS["default"]).bust[n]
        se = np.sqrt(p * (1 - p) / 200_000)
        assert abs(busts[n] / 200_000 - p) < 4 * se
