"""Penta policies: rank_options / choose against the solver and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from naive_penta import allowed_scores, immediate_points, turn_value

from dicelab import dice
from dicelab.errors import UserError
from dicelab.penta import tables
from dicelab.penta.policies import (
    Scorecard,
    analyse_turn,
    choose,
    decision_tables,
    rank_options,
)
from dicelab.penta.rules import BOX_NAMES, get_rules
from dicelab.penta.solver import solve


def test_best_option_of_every_first_roll_averages_to_the_optimum():
    V0 = solve("seed").expected_score
    total = 0.0
    for r in range(tables.N_ROLLS):
        opts = rank_options(Scorecard(), tables.roll_dice_of(r), 2, "seed")
        assert opts[0].loss == 0.0 and all(o.loss >= 0 for o in opts)
        total += tables.ROLL_PROB[r] * opts[0].expected_final_score
    assert total == pytest.approx(V0, abs=1e-9)


def test_greedy_first_turn_matches_brute_force_immediate_points():
    turn = analyse_turn(np.zeros_like(solve("seed").values), get_rules("seed"), 0, 0, 0)
    exact = float((tables.ROLL_PROB * _two_rerolls(turn)).sum())
    assert exact == pytest.approx(turn_value("seed", {}, lambda after: 0.0), abs=1e-9)


def _two_rerolls(turn):
    # value of each first roll with two rerolls = best keep within it (keep2 values)
    out = np.empty(tables.N_ROLLS)
    for r in range(tables.N_ROLLS):
        subs = tables.SUBSETS[r, :tables.N_SUBSETS[r]]
        out[r] = max(turn.keep2[k] for k in subs)
    return out


def test_greedy_box_is_the_most_immediate_points_lowest_box_on_ties():
    card = Scorecard.parse("ones=2,twos=6,threes=9,fours=12,fives=15,penta=50,bonuses=0")
    filled = {BOX_NAMES[b]: s for b, s in enumerate(card.scores) if s is not None}
    for r in range(tables.N_ROLLS):
        roll = tables.roll_dice_of(r)
        scores, bonus = allowed_scores("seed", filled, tuple(roll))
        pts = {b: immediate_points(filled, b, s, bonus) for b, s in scores.items()}
        best = max(pts.values())
        want = min((b for b in pts if pts[b] == best), key=BOX_NAMES.index)
        got = choose("greedy", card, roll, 0, "seed")
        assert (got.box, got.points) == (want, best), roll


def test_choose_examples():
    card = Scorecard()
    assert choose("greedy", card, [6] * 5, 0).box == "penta"
    assert choose("optimal", card, [6] * 5, 0).box == "penta"
    opt = choose("optimal", card, [6, 6, 6, 2, 1], 2)
    assert opt.kind == "keep" and opt.keep == (6, 6, 6)
    joker = Scorecard.parse("fours=12,penta=50")
    assert choose("optimal", joker, [4] * 5, 0, "seed").box in (
        "three-of-a-kind", "four-of-a-kind", "full-house", "small-straight",
        "large-straight", "chance")
    forced = Scorecard.parse("penta=50")
    opts = rank_options(forced, [4] * 5, 0, "seed")
    assert [o.box for o in opts] == ["fours"] and opts[0].points == 120


def test_decision_tables_agree_with_rank_options():
    dt = decision_tables("optimal", "seed")
    card = Scorecard.parse("ones=3,sixes=18,chance=22")
    i = dt.slot[card.state]
    assert dt.states[i] == card.state
    for r in np.random.default_rng(3).integers(0, 252, 25):
        roll = tables.roll_dice_of(int(r))
        for rolls_left, table in ((2, dt.keep2), (1, dt.keep1)):
            opts = rank_options(card, roll, rolls_left, "seed")
            keep = table(0, i, int(r))
            if tables.KEEP_SIZE[keep] == 5:  # keeping all = scoring the best box now
                assert opts[0].kind == "box" or opts[0].loss == pytest.approx(0.0)
            else:
                chosen = next(o for o in opts if o.kind == "keep"
                              and o.keep == tuple(dice.dice_of_rank(keep)))
                assert chosen.expected_final_score == pytest.approx(opts[0].expected_final_score,
                                                              abs=1e-9)
        final = rank_options(card, roll, 0, "seed")
        box = dt.box(0, i, int(r))
        chosen = next(o for o in final if o.box == BOX_NAMES[box])
        assert chosen.loss == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("bad", ["ones=6", "penta=20", "fours=x", "bogus=3",
                                 "full-house=20", "bonuses=1", "chance=0", "chance=31",
                                 "four-of-a-kind=4", "large-straight=30", "fours=12,fours=8",
                                 "bonuses=2,penta=50,fours=20", "bonuses=1,bonuses=1"])
def test_bad_scorecards_are_user_errors(bad):
    with pytest.raises(UserError):
        Scorecard.parse(bad)


@pytest.mark.parametrize("text, message", [
    ("penta=50,bonuses=1", "bonuses=1 needs as many boxes filled besides the Penta box, not 0"),
    ("penta=50,ones=3,bonuses=2",
     "bonuses=2 needs as many boxes filled besides the Penta box, not 1"),
])
def test_more_bonuses_than_other_boxes_filled_is_said_in_the_cards_words(text, message):
    with pytest.raises(UserError) as exc:
        Scorecard.parse(text)
    assert str(exc.value) == message


@pytest.mark.parametrize("text, total", [
    ("", 0), ("chance=5,three-of-a-kind=30,full-house=25", 60),
    ("ones=3,twos=6,threes=9,fours=12,fives=15,sixes=12", 57),  # upper 57: no bonus
    ("ones=3,twos=6,threes=9,fours=12,fives=15,sixes=18", 63 + 35),
    ("penta=50,bonuses=2,large-straight=40,chance=30", 50 + 200 + 40 + 30),
])
def test_scorecard_totals(text, total):
    assert Scorecard.parse(text).total == total


def test_bonuses_only_under_rules_that_have_them():
    card = Scorecard.parse("penta=50,ones=3,bonuses=1")
    for rules in ("seed", "hasbro", "free-joker"):  # greedy: no solve needed
        assert rank_options(card, [1, 1, 1, 1, 1], 0, rules, "greedy")[0].kind == "box"
    for policy in ("optimal", "greedy"):
        with pytest.raises(UserError, match="no Penta bonuses"):
            rank_options(card, [1, 1, 1, 1, 1], 0, "no-bonus", policy)
    no_bonus = Scorecard.parse("penta=50,ones=3,bonuses=0")
    assert rank_options(no_bonus, [1, 1, 1, 1, 1], 0, "no-bonus", "greedy")[0].kind == "box"


def test_bad_turns_are_user_errors():
    with pytest.raises(UserError):
        rank_options(Scorecard(), [1, 2, 3], 2)
    with pytest.raises(UserError):
        rank_options(Scorecard(), [1, 2, 3, 4, 5], 3)
    full = Scorecard((0,) * 13)
    with pytest.raises(UserError):
        rank_options(full, [1, 2, 3, 4, 5], 0)
    with pytest.raises(UserError):
        choose("smart", Scorecard(), [1, 2, 3, 4, 5], 0)
