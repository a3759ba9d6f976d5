"""The game engines of ``dicelab play`` on scripted dice and scripted decisions.

Farkle: the turn (hot dice, bust, refusals with reasons), the ending rules, the house
rules, the computer's play against the simulation kernel on the same dice, the coach's
costs against ``advise``. Penta: joker order and bonus, forced sacrifice, the computer's
default box, the coach's costs against ``rank_options``. Both: a seed and the same
decisions replay the same game; the turns are valid game logs.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.advise import advise
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.rules import ENDINGS, load_rules, set_asides
from dicelab.penta.policies import Scorecard, rank_options
from dicelab.play import IllegalMove, ScriptedDice, SeededDice, parse_faces
from dicelab.play.farkle import HOT_DICE_MESSAGE, LAST_ROUND_MESSAGE, TURN_LOST, FarkleGame
from dicelab.play.farkle import Player as FPlayer
from dicelab.play.penta import SACRIFICE_MESSAGE, PentaGame, parse_box, sacrifice_message
from dicelab.play.penta import Player as PPlayer
from dicelab.registry import parse_policy

BUST6 = [2, 3, 4, 6, 2, 3]


def rolls(*groups) -> list[int]:
    """A dice script: the faces of consecutive rolls, one list per roll."""
    return [f for g in groups for f in g]


def farkle(faces, n_humans=1, computers=(), **kw) -> FarkleGame:
    """A started game on these dice, then 1s (every roll scores) for turns to come."""
    players = [FPlayer(f"h{i}") for i in range(n_humans)]
    players += [FPlayer(c, parse_policy(c, "farkle")) for c in computers]
    g = FarkleGame(players, dice=ScriptedDice(list(faces) + [1] * 60), **kw)
    g.start()
    return g


def kinds(game) -> list[str]:
    return [e.kind for e in game.take_events()]


# --- Farkle: one turn --------------------------------------------------------------------


def test_hot_dice_brings_six_dice_back_and_keeps_the_points():
    g = farkle(rolls([1, 1, 1, 5, 5, 5], [1, 2, 3, 4, 6, 6]), target=5000)
    g.set_aside([1, 1, 1, 5, 5, 5])
    ev = g.take_events()
    assert any(e.kind == "hot-dice" and e.data["message"] == HOT_DICE_MESSAGE for e in ev)
    assert g.dice_left == 6 and g.turn_points == 2500 and g.phase == "bank-or-roll"
    g.roll_on()
    assert g.roll == [1, 2, 3, 4, 6, 6]
    g.set_aside([1])
    g.bank()
    assert g.totals == [2600]
    assert g.turns[0] == {"seat": 0, "rolls": [[1, 1, 1, 5, 5, 5], [1, 2, 3, 4, 6, 6]],
                          "keeps": [[1, 1, 1, 5, 5, 5], [1]], "end": "bank"}


def test_a_roll_that_scores_nothing_loses_the_turn():
    g = farkle(rolls([1, 2, 3, 4, 6, 6], [2, 3, 4, 6, 2], [1, 1, 1, 2, 3, 4]), n_humans=2,
               target=5000)
    g.set_aside([1])
    g.roll_on()
    ev = g.take_events()
    bust = [e for e in ev if e.kind == "bust"]
    assert bust and bust[0].data == {"message": TURN_LOST, "lost": 100}
    assert g.totals == [0, 0] and g.seat == 1 and g.roll == [1, 1, 1, 2, 3, 4]
    assert g.turns[0] == {"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6], [2, 3, 4, 6, 2]],
                          "keeps": [[1]], "end": "bust"}


@pytest.mark.parametrize(("faces", "reason"), [
    ([2], "a 2 cannot score in this roll"),
    ([6, 6], "a 6 cannot score in this roll"),
    ([5], "there is no 5 among the dice"),
    ([1, 1], "there is only 1 x 1 among the dice"),
    ([], "at least one scoring die"),
])
def test_a_set_aside_that_cannot_score_is_refused_with_the_reason(faces, reason):
    g = farkle([1, 2, 3, 4, 6, 6], target=5000)
    with pytest.raises(IllegalMove, match=reason):
        g.set_aside(faces)
    assert g.phase == "set-aside" and g.turn_points == 0  # nothing changed
    with pytest.raises(IllegalMove):
        g.bank()  # nothing set aside yet
    g.set_aside([1])
    assert g.turn_points == 100


def test_dice_of_a_combination_count_only_all_together():
    g = farkle([2, 2, 2, 3, 4, 6], target=5000)
    with pytest.raises(IllegalMove, match=r"2 2 does not score .*e\.g\. 2 2 2"):
        g.set_aside([2, 2])
    g.set_aside([2, 2, 2])
    assert g.turn_points == 200 and g.dice_left == 3


def test_typed_dice():
    assert parse_faces("1 15") == [1, 1, 5] and parse_faces("1,5") == [1, 5]
    for bad in ("7", "x", "1 a"):
        with pytest.raises(IllegalMove):
            parse_faces(bad)


# --- Farkle: the end of the game -------------------------------------------------------------


def test_last_round_gives_every_other_player_one_turn():
    faces = rolls([1, 1, 1, 2, 3, 4], [5, 2, 3, 4, 6, 6], [1, 1, 1, 5, 3, 4])
    g = farkle(faces, n_humans=3, target=1000)
    g.set_aside([1, 1, 1])
    g.bank()
    ev = g.take_events()
    assert [e.data["message"] for e in ev if e.kind == "last-round"] == [LAST_ROUND_MESSAGE]
    assert g.last_round and g.seat == 1
    g.set_aside([5])
    g.bank()
    assert g.phase != "over" and g.seat == 2
    g.set_aside([1, 1, 1, 5])
    g.bank()  # 1050 beats the trigger's 1000
    assert g.phase == "over" and g.totals == [1000, 50, 1050] and g.winners == [2]
    assert "game-over" in kinds(g)


def test_equal_highest_totals_share_the_win():
    g = farkle([1, 1, 1, 2, 3, 4] * 2, n_humans=2, target=1000)
    for _ in range(2):
        g.set_aside([1, 1, 1])
        g.bank()
    assert g.phase == "over" and g.winners == [0, 1]


def test_a_game_alone_takes_no_ending_rule():
    """One player ends the game on reaching the target under either rule: an ending
    given was accepted and changed nothing."""
    for ending in ("first-to-bank", "last-round"):
        with pytest.raises(UserError, match="--ending is for two or more players"):
            farkle([1, 1, 1, 2, 3, 4], target=1000, ending=ending)
    g = farkle([1, 1, 1, 2, 3, 4], target=1000, rules="facebook")  # the rules' own: taken
    assert g.rules.ending == "first-to-bank"
    g.set_aside([1, 1, 1])
    g.bank()
    assert g.phase == "over" and g.winners == [0]


def test_first_to_bank_ends_the_game_at_once():
    g = farkle([1, 1, 1, 2, 3, 4], n_humans=2, target=1000, ending="first-to-bank")
    g.set_aside([1, 1, 1])
    g.bank()
    assert g.phase == "over" and g.winners == [0] and "last-round" not in kinds(g)


# --- Farkle: house rules -------------------------------------------------------------------


def test_minimum_to_bank():
    g = farkle(rolls([1, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6], [1, 1, 2, 3]), rules="facebook",
               target=5000)
    g.set_aside([1])
    with pytest.raises(IllegalMove, match="at least 300 turn points"):
        g.bank()
    g.roll_on()
    g.set_aside([5])
    assert not g.can_bank()
    g.roll_on()
    g.set_aside([1, 1])
    g.bank()
    assert g.totals == [350]


def test_hot_dice_must_roll():
    rules = dataclasses.replace(load_rules("default"), name="must", hot_dice="must-roll")
    g = farkle(rolls([1, 1, 1, 5, 5, 5], [1, 2, 3, 4, 6, 6]), rules=rules, target=5000)
    g.set_aside([1, 1, 1, 5, 5, 5])
    with pytest.raises(IllegalMove, match="after hot dice you must roll"):
        g.bank()
    g.roll_on()
    g.set_aside([1])
    g.bank()
    assert g.totals == [2600]


def test_third_lost_turn_in_a_row_costs_the_penalty():
    faces = [1, 2, 3, 4, 6, 6] + [1, 1, 1, 2, 3] + BUST6 * 3 + [1, 1, 1, 2, 3, 4]
    g = farkle(faces, rules="facebook", target=5000)  # -500 at the third farkle
    g.set_aside([1])
    g.roll_on()
    g.set_aside([1, 1, 1])
    g.bank()  # 1100, then three lost turns (no decision in them)
    ev = g.take_events()
    assert [e.data["points"] for e in ev if e.kind == "penalty"] == [500]
    assert g.totals == [600] and g.streaks == [0]
    assert [t["end"] for t in g.turns] == ["bank", "bust", "bust", "bust"]


def test_a_bank_restarts_the_count_of_lost_turns():
    faces = BUST6 * 2 + [1, 1, 1, 2, 3, 4] + BUST6 * 2 + [1, 2, 3, 4, 6, 6]
    g = farkle(faces, rules="facebook", target=5000)
    g.set_aside([1, 1, 1])
    g.bank()
    assert g.totals == [1000] and g.phase == "set-aside"  # two busts, a bank, two busts


# --- Farkle: the computer plays as the simulation kernel --------------------------------------


def kernel_totals(policies, faces, target, rules):
    seats = seat_arrays([parse_policy(p, "farkle") for p in policies], rules, target)
    n = len(policies)
    game = K.Game(n, 0, target, ENDINGS[rules.ending], K.STREAM_PER_CHUNK,
                  rules.farkle_penalty)
    tally = K.Tally(np.zeros((n, K.N_STATS), np.int64),
                    np.zeros((n, (target + config.HIST_HEADROOM) // 50 + 1), np.int64),
                    np.zeros(K.N_CHUNK_COUNTERS, np.int64))
    totals = np.zeros((1, n), np.int64)
    used = K.run_scripted(np.asarray(faces, np.int64), 1, game, seats,
                          set_asides(rules).arrays(), tally, totals)
    assert tally.counters[K.C_SCRIPT_ERRORS] == 0
    return totals[0].tolist(), int(used)


@pytest.mark.parametrize(("policies", "target", "rules"), [
    (["ai", "threshold-300"], 3000, "default"),
    (["threshold-250", "ai:base=400,two-dice=100"], 3000, "ones-300"),
    (["ai", "threshold-350"], 2000, "facebook"),
    (["max-ev", "fastest"], 2000, "facebook"),  # their tables by run of lost turns
    (["optimal-win", "max-ev"], 600, "facebook"),
    (["max-ev", "fastest"], 2000, "default"),
    (["optimal-win", "ai"], 800, "default"),
    (["threshold-300", "optimal-win:vs=threshold-300"], 800, "default"),
    (["ai", "threshold-400", "max-ev"], 2000, "default"),
])
def test_the_computer_plays_as_the_kernel_on_the_same_dice(policies, target, rules,
                                                          monkeypatch):
    from dicelab import config

    # under facebook's penalty: totals down to two penalties below zero (the smallest floor)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    table = load_rules(rules)
    rnd = random.Random(11)
    for _ in range(4):
        faces = [rnd.randint(1, 6) for _ in range(6000)]
        g = farkle(faces, n_humans=0, computers=policies, target=target, rules=table)
        while g.phase != "over":
            g.step()
        assert (g.totals, g.dice.pos) == kernel_totals(policies, faces, target, table)


def test_ai_banks_by_its_thresholds():
    # 100 (5 dice), 150 (4 dice), 250 with 2 dice left: ai banks (300 - 50), threshold-300 rolls
    faces = rolls([1, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6], [5, 5, 2, 3], [1, 3])
    for policy, end in (("ai", [[1], [5], [5, 5]]), ("threshold-300", [[1], [5], [5, 5], [1]])):
        g = farkle(faces + BUST6 * 40, n_humans=0, computers=[policy], target=5000)
        g.step()
        g.step()
        g.step()
        if policy != "ai":
            g.step()
        assert g.turns[0]["keeps"] == end and g.turns[0]["end"] == "bank"


def test_ai_chases_the_leader_in_the_last_round():
    # the human banks 1000 (target 1000); the ai at 0 must beat it: 350 is not enough
    faces = rolls([1, 1, 1, 2, 3, 4], [1, 1, 5, 2, 3, 4], [2, 3, 4], [1, 2, 3, 4, 5, 6])
    g = farkle(faces, n_humans=1, computers=["ai"], target=1000)
    g.set_aside([1, 1, 1])
    g.bank()
    assert g.last_round
    while g.phase == "computer":
        g.step()
    assert g.phase == "over" and g.turns[1]["end"] == "bust" and g.winners == [0]


# --- Farkle: the coach ---------------------------------------------------------------------


def test_solitaire_coach_costs_expected_turn_points():
    g = farkle(rolls([1, 1, 5, 2, 3, 4], [2, 3, 4, 6, 2]), target=5000, coach=True)
    assert g.coach_unit == "points"
    adv = g.advice()
    ref = advise([1, 1, 5, 2, 3, 4], turn_points=0)
    assert [(o.keep, o.action) for o in adv.options] == \
        [(o.keep, o.action) for o in ref.options]
    g.set_aside([5])
    g.bank()
    cost = next(e.data for e in g.take_events() if e.kind == "cost")
    mine = next(o for o in ref.options if o.keep == (5,) and o.action == "bank")
    assert cost["unit"] == "points"
    assert cost["loss"] == pytest.approx(ref.options[0].value - mine.value)
    assert cost["loss"] > 0 and g.losses[0] == cost["loss"]


def test_two_player_coach_costs_win_probability():
    faces = [1, 1, 5, 2, 3, 4] + [1, 2, 3, 4, 6, 6] + BUST6 * 20
    g = farkle(faces, n_humans=1, computers=["threshold-300"], target=1000, coach=True)
    assert g.coach_unit == "win"
    g.set_aside([1, 1, 5])
    adv = g.advice()  # bank or roll after 1 1 5
    assert {o.action for o in adv.options} == {"bank", "roll"}
    g.roll_on()
    cost = next(e.data for e in g.take_events() if e.kind == "cost")
    ref = advise([1, 1, 5, 2, 3, 4], turn_points=0, me=0, opp=0, target=1000)
    mine = next(o for o in ref.options if o.keep == (1, 1, 5) and o.action == "roll")
    assert cost["unit"] == "win"
    assert cost["loss"] == pytest.approx(mine.loss, abs=1e-12)


def test_the_coach_leaves_out_banks_the_house_rules_forbid():
    rules = dataclasses.replace(load_rules("default"), name="min-300", min_bank=300)
    g = farkle([1, 2, 3, 4, 6, 6], rules=rules, target=5000, coach=True)
    assert g.coach_unit == "points"
    assert all(o.action == "roll" for o in g.advice().options)  # 100 < 300 to bank


def test_the_coach_says_why_when_the_solvers_refuse_the_rules(monkeypatch):
    from dicelab.errors import UserError
    from dicelab.play import farkle as play_farkle

    def refuse(*args, **kwargs):
        raise UserError("max-ev does not model the house rule(s) X of rules 'r' yet")

    monkeypatch.setattr(play_farkle, "advise", refuse)
    g = farkle([1, 2, 3, 4, 6, 6], target=5000, coach=True)
    assert g.coach_unit is None and "does not model the house rule(s) X" in g.coach_note
    assert g.advice() is None
    g.set_aside([1])
    g.bank()  # the game goes on without the coach
    assert g.totals == [100] and not [e for e in g.take_events() if e.kind == "cost"]


MUST_ROLL = dataclasses.replace(load_rules("default"), name="must-roll", hot_dice="must-roll")


@pytest.mark.parametrize(("rules", "humans", "seed"), [
    ("default", 1, 224), ("basic", 1, 224), ("ones-300", 1, 224),
    pytest.param("facebook", 1, 224, marks=pytest.mark.slow),  # 3.6 s; twin: facebook, 2
    (MUST_ROLL, 1, 224), ("default", 2, 72), ("basic", 2, 166), ("ones-300", 2, 72),
    ("facebook", 2, 72), (MUST_ROLL, 2, 166)])
def test_the_coach_judges_every_decision_of_whole_games_with_lost_turns(rules, humans, seed):
    """Whole games to 1,000 with the coach (two seats: P(win); three: expected points),
    seeded so that humans and the computer lose turns: the coach ranks every decision
    after them, under every preset and hot dice must roll (the runs of lost turns count
    under the penalty and change nothing without it)."""
    from dicelab.farkle.advise import legal_setasides
    from dicelab.play import table_players

    g = FarkleGame(table_players("farkle", humans, "ai"), rules=rules, target=1000,
                   dice=SeededDice(seed), coach=True)
    g.start()
    unit = "win" if humans == 1 else "points"
    assert g.coach_unit == unit and g.coach_note is None
    decisions = 0
    while g.phase != "over":
        if g.phase == "computer":
            g.step()
        elif g.phase == "set-aside":
            assert g.advice() is not None, g.coach_note
            g.set_aside(max(legal_setasides(g.rules, g.roll),
                            key=lambda kp: (len(kp[0]), kp[1]))[0])
        else:
            assert g.advice() is not None, g.coach_note
            decisions += 1
            g.bank() if g.turn_points >= 300 and g.can_bank() else g.roll_on()
    events = g.take_events()
    lost = [g.players[e.seat].human for e in events if e.kind == "bust"]
    assert lost.count(True) >= 2 and lost.count(False) >= 1, lost
    assert sum(e.kind == "cost" for e in events) == decisions > 0
    assert g.coach_unit == unit and g.coach_note is None


@pytest.mark.parametrize(("humans", "ai", "ending", "seed"), [
    (1, None, None, 0),  # alone: the bank that reaches the target
    (3, None, "last-round", 0),  # three seats: the last turn of the last round
    (2, "ai", "first-to-bank", 0),  # three seats: the first to bank the target
    (1, "ai", "last-round", 26)])  # two seats (P(win)): the last turn of the last round
def test_a_bank_that_wins_the_game_costs_nothing_whatever_the_coachs_measure(
        humans, ai, ending, seed):
    """Whole games to 1,000 with the coach, the humans banking at 300: every bank's cost
    says ``won`` exactly when the game ended on it with the banker its only winner (each
    game ends so: asserted), and that bank is not charged. Expected turn points (one
    seat, three) would charge it; P(win) (two seats) values it 1, the best."""
    from dicelab.farkle.advise import legal_setasides
    from dicelab.play import table_players

    g = FarkleGame(table_players("farkle", humans, ai), ending=ending, target=1000,
                   dice=SeededDice(seed), coach=True)
    g.start()
    unit = "win" if g.coach_unit == "win" else "points"
    assert unit == ("win" if len(g.players) == 2 else "points")
    won, charged = [], {u: [0.0] * len(g.players) for u in ("win", "points")}
    while g.phase != "over":
        if g.phase == "computer":
            g.step()
        elif g.phase == "set-aside":
            g.set_aside(max(legal_setasides(g.rules, g.roll),
                            key=lambda kp: (len(kp[0]), kp[1]))[0])
        elif g.turn_points >= 300 and g.can_bank():
            seat, last_round = g.seat, g.last_round
            (measured,) = [o.loss for o in g.advice().options if o.action == "bank"]
            g.bank()
            (cost,) = [e.data for e in g.take_events() if e.kind == "cost"]
            ended_won = g.phase == "over" and g.winners == [seat]
            assert cost["won"] == ended_won
            if ended_won:
                won.append((seat, last_round, measured))
                assert cost["loss"] == 0.0
            charged[cost["unit"]][seat] += cost["loss"]
        else:
            g.roll_on()
            for e in g.take_events():
                if e.kind == "cost":
                    assert not e.data["won"]
                    charged[e.data["unit"]][e.seat] += e.data["loss"]
    assert len(won) == 1 and g.losses == pytest.approx(charged[unit])
    if unit == "points":  # the last turn's, in P(win), kept apart (None: not judged)
        assert [x or 0.0 for x in g.last_turn_losses] == pytest.approx(charged["win"])
    seat, last_round, measured = won[0]
    assert last_round == (ending == "last-round" and humans + (ai is not None) > 1)
    if unit == "win" or last_round:
        assert measured == 0.0  # P(win) 1: the best option (a last turn is judged so)
    elif humans == 1:
        assert measured > 100  # expected turn points: rolling on was worth more


def test_a_coach_of_turn_points_judges_the_games_last_turn_by_the_chance_to_win():
    """Three seats, the coach counting expected turn points: the last turn of the last
    round decides the game alone, so it is judged in P(win) + P(tie)/2 of beating the
    highest total: banking 50 behind 1,000 loses for sure, rolling on is the best. Its
    loss is kept apart from the turn points lost before it."""
    faces = rolls([1, 1, 1, 2, 3, 4], [5, 2, 3, 4, 6, 6], [5, 2, 3, 4, 6, 6])
    g = farkle(faces, n_humans=3, target=1000, coach=True)
    assert g.coach_unit == "points"
    g.set_aside([1, 1, 1])
    g.bank()  # 1,000: the last round
    assert g.last_round and not g.final_turn and g.seat == 1
    assert g.advice().unit == "points"  # another turn follows this one
    g.set_aside([5])
    g.bank()
    points_lost = g.losses[1]
    assert points_lost > 0 and g.last_turn_losses == [None, None, None]
    assert g.final_turn and g.seat == 2
    adv = g.advice()
    ref = advise([5, 2, 3, 4, 6, 6], turn_points=0, me=0, opp=1000, target=1000)
    assert ref.mode == "last-round" and adv.unit == "win"
    assert [(o.keep, o.action) for o in adv.options] == [(o.keep, o.action)
                                                         for o in ref.options]
    assert [o.value for o in adv.options] == pytest.approx([o.value for o in ref.options])
    g.set_aside([5])
    bank, roll = (next(o for o in g.advice().options if o.action == a)
                  for a in ("bank", "roll"))
    assert bank.value == 0.0 and roll.loss == 0.0 and roll.value > 0
    g.take_events()
    g.bank()
    (cost,) = [e.data for e in g.take_events() if e.kind == "cost"]
    assert cost["unit"] == "win" and cost["loss"] == pytest.approx(roll.value)
    assert not cost["won"] and g.phase == "over" and g.winners == [0]
    assert g.last_turn_losses == [None, None, pytest.approx(roll.value)]
    assert g.losses == [0.0, points_lost, 0.0]


# --- Penta ---------------------------------------------------------------------------------


def penta(faces, computers=(), n_humans=1, **kw) -> PentaGame:
    players = [PPlayer(f"h{i}") for i in range(n_humans)]
    players += [PPlayer(c, parse_policy(c, "penta")) for c in computers]
    g = PentaGame(players, dice=ScriptedDice(faces), **kw)
    g.start()
    return g


def test_keep_reroll_and_score():
    g = penta([6, 6, 2, 3, 1] + [6, 4, 5] + [6, 6] + [1] * 200)
    g.keep([6, 6])
    assert g.roll == [6, 6, 6, 4, 5] and g.rolls_left == 1
    g.keep([6, 6, 6])
    assert g.roll == [6, 6, 6, 6, 6] and g.rolls_left == 0 and g.phase == "box"
    with pytest.raises(IllegalMove, match="no rerolls left"):
        g.back()
    g.score("chance")
    assert g.cards[0].scores[11] == 30 and g.round == 2
    assert g.turns[0] == {"seat": 0, "rolls": [[6, 6, 2, 3, 1], [6, 6, 6, 4, 5],
                                               [6, 6, 6, 6, 6]],
                          "keeps": [[6, 6], [6, 6, 6]], "box": "chance"}
    with pytest.raises(IllegalMove, match="there is no 6 among the dice"):
        g.keep([6])


def test_decisions_from_python_with_values_that_are_not_dice_or_boxes_are_illegal_moves():
    """keep, set_aside and score take integer faces and a box number or name: anything
    else (a float, a bool, text, None) is an IllegalMove that changes nothing, as an
    illegal decision is; integers of any kind are dice."""
    g = penta([6, 6, 2, 3, 1] + [1] * 200)
    for bad in (None, 6, [6.0], [6.7], [True], ["6"], "66"):
        with pytest.raises(IllegalMove, match="dice are"):
            g.keep(bad)
    g.keep([np.int64(6), 6])
    assert g.roll == [6, 6, 1, 1, 1] and g.rolls_left == 1
    g.stop()
    for bad in (1.5, None, True, [11]):
        with pytest.raises(IllegalMove, match="a box is its number"):
            g.score(bad)
    assert g.phase == "box" and g.cards[0].scores == (None,) * 13
    g.score(np.int64(11))
    assert g.cards[0].scores[11] == 15
    f = farkle([1, 5, 2, 3, 4, 6])
    for bad in (None, [1.0], [False], ["1"], "15"):
        with pytest.raises(IllegalMove, match="dice are"):
            f.set_aside(bad)
    assert f.phase == "set-aside" and f.turn_points == 0
    f.set_aside([np.int8(1), 5])
    assert f.turn_points == 150


def test_boxes_typed():
    assert parse_box("13") == 12 and parse_box("large straight") == 10
    assert [parse_box(n) for n in ("1", " 01 ", "12", "full-house", "-chance-")] == \
        [0, 0, 11, 8, 11]
    for bad, why in (("f", "could be"), ("14", "1 to 13"), ("bogus", "no box"),
                     ("0", "1 to 13"), ("001", "1 to 13"), ("-1", "not -1"),
                     ("1-", "not 1-"), ("--12", "not --12"), ("- 3", "not - 3"),
                     ("+1", "no box"), ("1 2", "no box"), ("-", "type a box")):
        with pytest.raises(IllegalMove, match=why):
            parse_box(bad)


def test_joker_forced_order_and_bonus():
    # Penta of 4s in the Penta box (50), then five 4s: only Fours (20) + 100
    g = penta([4] * 5 + [4] * 5 + [3] * 5 + [1] * 200)
    g.score("penta")
    assert g.box_scores() == ({3: 20}, 100)
    with pytest.raises(IllegalMove, match="must go in Fours"):
        g.score("chance")
    g.score("fours")
    assert g.cards[0].total == 50 + 20 + 100 and g.cards[0].penta_bonuses == 1
    # five 3s with Threes open: Threes only
    allowed, bonus = g.box_scores()
    assert allowed == {2: 15} and bonus == 100


def test_joker_in_the_lower_section_once_its_upper_box_is_filled():
    g = penta([2, 2, 2, 1, 1] + [5] * 5 + [2] * 5 + [1] * 200)
    g.score("twos")
    g.score("penta")
    allowed, bonus = g.box_scores()  # five 2s: Twos filled, so any open lower box
    assert bonus == 100 and allowed == {6: 10, 7: 10, 8: 25, 9: 30, 10: 40, 11: 10}
    g.score("large straight")
    assert g.cards[0].total == 6 + 50 + 40 + 100


def test_no_joker_after_a_scratched_penta_box():
    g = penta([1, 2, 3, 4, 6] + [5] * 5 + [1] * 200)
    g.score("penta")  # 0
    allowed, bonus = g.box_scores()
    assert bonus == 0 and allowed[10] == 0 and allowed[4] == 25 and len(allowed) == 12


def test_a_roll_no_open_box_scores_must_sacrifice_a_box():
    # fill everything that 1 1 2 2 3 could score in, then roll it
    card = Scorecard.parse("ones=2,twos=4,threes=3,chance=9")
    g = penta([1, 1, 2, 2, 3] + [1] * 200)
    g.cards[0] = card
    g.stop()
    assert g.must_sacrifice()
    # the game addresses "you" only alone at the table ("You"); anyone else is named
    assert [e.data["message"] for e in g.take_events() if e.kind == "sacrifice"] == \
        ["No open box scores: h0 must sacrifice one"]
    assert sacrifice_message("You") == SACRIFICE_MESSAGE
    g.score("penta")
    assert g.cards[0].scores[12] == 0


def test_the_default_box_is_the_computers_choice():
    g = penta([3, 4, 5, 6, 1] + [1] * 400, computers=["greedy"])
    assert g.choice_policy == "greedy"
    want = rank_options(Scorecard(), [1, 3, 4, 5, 6], 0, "seed", "greedy")[0].box
    assert g.default_box() == parse_box(want) == parse_box("small-straight")
    g.stop()
    g.score(g.default_box())
    assert g.phase == "computer"
    while g.phase == "computer":
        g.step()  # the computer plays its turn to the end
    assert g.seat == 0 and g.round == 2 and len(g.turns) == 2


def test_penta_coach_costs_expected_final_points():
    g = penta([6, 6, 2, 3, 1] + [1] * 300, coach=True)
    ref = rank_options(Scorecard(), [6, 6, 2, 3, 1], 2, "seed", "optimal")
    assert [o.expected_final_score for o in g.advice()] == [o.expected_final_score for o in ref]
    g.keep([1])
    cost = next(e.data for e in g.take_events() if e.kind == "cost")
    mine = next(o for o in ref if o.kind == "keep" and o.keep == (1,))
    assert cost["loss"] == pytest.approx(mine.loss) and cost["loss"] > 0
    assert cost["best"] == ("keep", ref[0].keep)


def test_a_full_game_ends_after_13_turns_each_with_the_winner():
    g = PentaGame([PPlayer("you"), PPlayer("c", parse_policy("greedy"))], dice=SeededDice(5))
    g.start()
    while g.phase != "over":
        if g.phase == "computer":
            g.step()
        else:
            if g.phase == "keep":
                g.stop()
            g.score(g.default_box())
    assert len(g.turns) == 26 and all(len(t["keeps"]) == len(t["rolls"]) - 1 for t in g.turns)
    assert g.winners == [s for s, t in enumerate(g.totals) if t == max(g.totals)]


# --- both: reproducible, and valid logs -------------------------------------------------------


def play_farkle_randomly(seed, coach=False, ask=False):
    players = [FPlayer("you"), FPlayer("ai", parse_policy("ai"))]
    g = FarkleGame(players, target=2000, dice=SeededDice(seed), coach=coach)
    g.start()
    rnd = random.Random(3)
    while g.phase != "over":
        if ask:
            g.advice()
        if g.phase == "computer":
            g.step()
        elif g.phase == "set-aside":
            g.set_aside(rnd.choice(g.legal_setasides())[0])
        elif g.can_bank() and rnd.random() < 0.4:
            g.bank()
        else:
            g.roll_on()
    return g


def test_the_same_seed_and_decisions_replay_the_same_game():
    a, b = play_farkle_randomly(7), play_farkle_randomly(7)
    assert a.turns == b.turns and a.totals == b.totals
    assert play_farkle_randomly(8).turns != a.turns


def test_turns_are_valid_game_logs(tmp_path):
    gamelog = pytest.importorskip("dicelab.gamelog")
    g = play_farkle_randomly(9)
    seats = [{"name": p.name, "policy": p.policy.name if p.policy else "human"}
             for p in g.players]
    header = gamelog.new_game_header("farkle", g.rules, seats, target=g.target, seed=9)
    gamelog.write_games(tmp_path / "f.jsonl", [(header, g.turns)])
    (rec,) = gamelog.read_games(tmp_path / "f.jsonl")
    assert rec.finished and rec.totals == g.totals and rec.winners == g.winners
    p = PentaGame([PPlayer("you"), PPlayer("c", parse_policy("greedy"))], dice=SeededDice(3))
    p.start()
    while p.phase != "over":
        if p.phase == "computer":
            p.step()
        elif p.phase == "keep" and p.rolls_left == 2:
            p.keep(p.roll[:2])
        else:
            p.score(p.default_box())
    header = gamelog.new_game_header("penta", "seed", [{"name": "you", "policy": "human"},
                                                       {"name": "c", "policy": "greedy"}])
    gamelog.write_games(tmp_path / "p.jsonl", [(header, p.turns)])
    (rec,) = gamelog.read_games(tmp_path / "p.jsonl")
    assert rec.finished and rec.totals == p.totals
