"""Penta rules: every box for every roll under every rule set vs the plain-Python scorer."""

from __future__ import annotations

import numpy as np
import pytest
from naive_penta import BOXES, LOWER, allowed_scores, joker_value, ordinary, play_game

from dicelab import dice
from dicelab.errors import UserError
from dicelab.penta import tables
from dicelab.penta.policies import Scorecard
from dicelab.penta.referee import fill
from dicelab.penta.rules import RULE_SETS, get_rules
from dicelab.penta.scoring import BOX_VALUES, MAX_TOTAL, ORDINARY, PENTA_FACE, box_scores

ALL_ROLLS = [tuple(tables.roll_dice_of(r)) for r in range(tables.N_ROLLS)]


def _filled(mask: int, fifty: int) -> dict[str, int]:
    """A scorecard dict for (mask, fifty); non-Penta box values do not matter to scoring."""
    out = {BOXES[b]: 0 for b in range(13) if (mask >> b) & 1}
    if "penta" in out and fifty:
        out["penta"] = 50
    return out


def _contexts():
    rng = np.random.default_rng(7)
    lower_full = sum(1 << b for b in range(6, 13))
    fixed = [(0, 0), (1 << 12, 1), (1 << 12, 0), ((1 << 12) | (1 << 3), 1),
             (lower_full, 1), (lower_full, 0), (lower_full | 0b101010, 1),
             ((1 << 13) - 1 - 1, 1), (((1 << 13) - 1) ^ (1 << 9), 1)]
    rand = [(int(m), int(f)) for m, f in zip(rng.integers(0, 1 << 13, 40),
                                              rng.integers(0, 2, 40), strict=True)]
    return [(m, f if (m >> 12) & 1 else 0) for m, f in fixed + rand]


def test_box_values_are_every_score_a_box_can_hold():
    # what Scorecard.check accepts: a box's ordinary scores, and a lower box's joker values
    for b, name in enumerate(BOXES):
        want = {ordinary(name, roll) for roll in ALL_ROLLS}
        if name in LOWER:
            want |= {joker_value(name, (f,) * 5) for f in range(1, 7)}
        assert BOX_VALUES[b] == want, name
    assert 0 not in BOX_VALUES[BOXES.index("chance")]


def test_ordinary_table_every_box_every_roll():
    for r, roll in enumerate(ALL_ROLLS):
        for b, name in enumerate(BOXES):
            assert ORDINARY[b, r] == ordinary(name, roll), (name, roll)
    assert tables.N_ROLLS == 252 == len(set(ALL_ROLLS))


@pytest.mark.parametrize("rules", list(RULE_SETS))
def test_every_box_every_roll_in_many_scorecards(rules):
    rs = get_rules(rules)
    for mask, fifty in _contexts():
        filled = _filled(mask, fifty)
        for r, roll in enumerate(ALL_ROLLS):
            scores, bonus = box_scores(rs, mask, fifty, r)
            want, want_bonus = allowed_scores(rules, filled, roll)
            got = {BOXES[b]: int(s) for b, s in enumerate(scores) if s >= 0}
            assert got == want, (rules, mask, fifty, roll)
            assert bonus == want_bonus, (rules, mask, fifty, roll)


def _only(rules, mask, fifty, faces):
    scores, bonus = box_scores(get_rules(rules), mask, fifty, tables.roll_index(faces))
    return {BOXES[b]: int(s) for b, s in enumerate(scores) if s >= 0}, bonus


PENTA_50 = 1 << 12
FOURS = 1 << 3
LOWER_FULL = sum(1 << b for b in range(6, 13))


def test_joker_five_4s_with_fours_open_is_forced_into_fours():
    got, bonus = _only("seed", PENTA_50, 1, [4] * 5)
    assert got == {"fours": 20} and bonus == 100


def test_joker_five_4s_with_fours_filled_goes_to_a_lower_box_at_joker_values():
    got, bonus = _only("seed", PENTA_50 | FOURS, 1, [4] * 5)
    assert got == {"three-of-a-kind": 20, "four-of-a-kind": 20, "full-house": 25,
                   "small-straight": 30, "large-straight": 40, "chance": 20}
    assert bonus == 100


def test_joker_with_lower_section_full_takes_any_open_upper_box_at_zero():
    got, bonus = _only("seed", LOWER_FULL | FOURS, 1, [4] * 5)
    assert got == {"ones": 0, "twos": 0, "threes": 0, "fives": 0, "sixes": 0}
    assert bonus == 100


def test_penta_box_scratched_seed_is_an_ordinary_roll_without_bonus():
    got, bonus = _only("seed", PENTA_50 | FOURS, 0, [4] * 5)
    assert bonus == 0
    assert got["large-straight"] == 0 and got["full-house"] == 0
    assert got["small-straight"] == 0
    assert got["ones"] == 0 and got["chance"] == 20 and got["four-of-a-kind"] == 20


def test_penta_box_scratched_hasbro_keeps_the_forced_joker_without_bonus():
    got, bonus = _only("hasbro", PENTA_50 | FOURS, 0, [4] * 5)
    assert bonus == 0
    assert got["large-straight"] == 40 and "ones" not in got


def test_penta_box_open_penta_may_go_anywhere_ordinarily():
    got, bonus = _only("seed", 0, 0, [4] * 5)
    assert bonus == 0 and got["penta"] == 50 and got["full-house"] == 0
    assert len(got) == 13


def test_free_joker_values_only_once_the_face_box_is_filled():
    got, _ = _only("free-joker", PENTA_50, 1, [4] * 5)
    assert got["large-straight"] == 0 and got["ones"] == 0 and len(got) == 12
    got, bonus = _only("free-joker", PENTA_50 | FOURS, 1, [4] * 5)
    assert got["large-straight"] == 40 and got["ones"] == 0 and bonus == 100


def test_no_bonus_rules_never_joker():
    got, bonus = _only("no-bonus", PENTA_50 | FOURS, 1, [4] * 5)
    assert bonus == 0 and got["large-straight"] == 0 and got["ones"] == 0


def test_the_highest_total_is_thirteen_pentas_under_the_forced_joker():
    """docs/rules.md: the highest TOTAL is 1575. A Penta in the Penta box, a Penta of each
    face forced into its upper box (105, +35), then five 6s in every lower box at joker
    values (185), +100 for each of the twelve Pentas after the first."""
    faces = [6, 1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6, 6]
    order = ["penta", *BOXES[:6], *LOWER]
    assert sorted(order) == sorted(BOXES)
    # the most each box can hold (ordinary scores and joker values), the bonuses: 1575
    most = sum(max([ordinary(b, roll) for roll in ALL_ROLLS]
                   + [joker_value(b, (f,) * 5) for f in range(1, 7) if b in LOWER])
               for b in BOXES)
    assert most + 35 + 12 * 100 == 1575 == MAX_TOTAL
    card, filled = Scorecard(), {}
    for f, box in zip(faces, order, strict=True):
        scores, bonus = allowed_scores("seed", filled, (f,) * 5)
        assert box in scores  # the forced order allows it
        got, got_bonus = _only("seed", card.mask, card.fifty, [f] * 5)
        assert (got, got_bonus) == (scores, bonus)
        card = fill(card, box, [f] * 5, get_rules("seed"))
        filled[box] = scores[box]
    assert card.total == 1575 and card.penta_bonuses == 12
    turns = iter(order)
    game = play_game("seed", (d for f in faces for d in [f] * 5),
                     lambda _card, roll, left: roll if left else next(turns))
    assert game["total"] == 1575 and game["upper_bonus"] and game["bonuses"] == 12


def test_unknown_rule_set_is_a_user_error():
    with pytest.raises(UserError, match="seed, hasbro, free-joker, no-bonus"):
        get_rules("yahtzee")


def test_index_tables_against_dice_module():
    for k in range(tables.N_KEEPS):
        for f in range(1, 7):
            if dice.SIZE[k] < 5:
                assert dice.dice_of_rank(int(tables.ADD[k, f])) == sorted(
                    [*dice.dice_of_rank(k), f])
            if tables.SUB[k, f] >= 0:
                assert sorted([*dice.dice_of_rank(int(tables.SUB[k, f])), f]) == \
                    dice.dice_of_rank(k)
    for r in range(tables.N_ROLLS):
        subs = [int(k) for k in tables.SUBSETS[r, :tables.N_SUBSETS[r]]]
        assert sorted(subs) == sorted(dice.sub_multisets(tables.ROLL_BASE + r))
        for k in subs:
            rest = list(dice.dice_of_rank(tables.ROLL_BASE + r))
            for f in dice.dice_of_rank(k):
                rest.remove(f)
            d = dice.rank_of_dice(rest)
            assert tables.UNION[k, d] == r
    assert tables.ROLL_PROB.sum() == pytest.approx(1.0, abs=1e-12)
    for f in range(1, 7):
        assert PENTA_FACE[tables.PENTA_ROLL[f]] == f
    assert sum(1 for r in range(252) if PENTA_FACE[r]) == 6
