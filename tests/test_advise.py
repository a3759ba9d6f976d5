"""Advice for one decision (dicelab.farkle.advise, ``dicelab advise``) against the
plain-Python references: every legal set-aside (tests/naive_farkle), the solitaire
max-ev recursion (tests/naive_farkle_dp), the two-player value iteration and the last
turn (tests/naive_two_player)."""

from __future__ import annotations

import dataclasses
import itertools
import json

import naive_farkle as nf
import naive_farkle_dp as nfd
import naive_two_player as ntp
import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab.cli import formats as F
from dicelab.errors import UserError
from dicelab.farkle import solitaire
from dicelab.farkle.advise import advise, legal_setasides, tied
from dicelab.farkle.rules import PRESETS, FarkleRules, load_rules


def _ones(ending: str = "last-round") -> FarkleRules:
    """Only a single 1 scores (100): few options, so the naive value iteration is quick."""
    return FarkleRules(name=f"ones-{ending}", singles=(0, 100, 0, 0, 0, 0, 0),
                       three_of_a_kind=(0,) * 7, n_of_a_kind_mode="none",
                       n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
                       four_and_pair_as_three_pairs=False, two_triplets=0, ending=ending)


def _pairs(advice):
    """{(keep, action, dice): value} of every option."""
    return {(o.keep, o.action, o.dice): o.value for o in advice.options}


@pytest.mark.parametrize("rules", ["default", "basic"])
def test_every_legal_set_aside_of_every_roll(rules):
    table = PRESETS[rules]
    for n in range(1, 7):
        for roll in itertools.combinations_with_replacement(range(1, 7), n):
            got = dict(legal_setasides(table, list(roll)))
            assert got == nf.legal_setasides(table, roll), roll


def test_options_are_every_set_aside_times_bank_or_roll_best_first():
    a = advise([1, 1, 5, 2, 3, 4], turn_points=350)
    assert len(a.options) == 2 * len(legal_setasides(PRESETS["default"], [1, 1, 5, 2, 3, 4]))
    values = [o.value for o in a.options]
    assert values == sorted(values, reverse=True)
    best = a.options[0]
    assert best.loss == 0.0 and best.tie_with_best
    for o in a.options:
        assert o.loss == pytest.approx(best.value - o.value, abs=1e-12)
        assert o.dice == (0 if o.action == "bank" else 6 - len(o.keep) or 6)
        if o.action == "bank":  # solitaire: banking is worth the turn points banked
            assert o.value == 350 + o.points


def test_solitaire_values_are_the_plain_python_max_ev():
    sol = solitaire.solve_max_ev(PRESETS["default"])
    states = nfd.max_ev_values("default", sol.cap, every=True)

    def roll_value(tp, n):
        return nfd.max_ev_roll_value("default", sol.cap, states, tp, n)

    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(40):
        n = int(rng.integers(1, 7))
        roll = sorted(int(f) for f in rng.integers(1, 7, n))
        if not nf.legal_setasides(PRESETS["default"], tuple(roll)):
            continue
        # from the turn's start to past the cap (where every successor banks)
        tp = 0 if n == 6 and rng.random() < 0.2 else 50 * int(rng.integers(1, sol.cap // 50
                                                                            + 12))
        for (keep, action, left), v in _pairs(advise(roll, turn_points=tp)).items():
            p = nf.legal_setasides(PRESETS["default"], tuple(keep))[tuple(keep)]
            want = tp + p if action == "bank" else roll_value(tp + p, left)
            assert v == pytest.approx(want, rel=1e-12), (roll, tp, keep, action)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize(("ending", "target", "cap"), [("last-round", 400, 90),
                                                        ("first-to-bank", 600, None)])
def test_two_player_values_are_the_plain_python_value_iteration(ending, target, cap):
    table = _ones(ending)
    ref = ntp.solve(table, target, cap)
    t = target // 50

    def naive(a, b, i, n):
        """(bank, roll) at a decision point; roll None where banking is forced."""
        v = ref.states[i * 7 + n, a, b, 0]
        margin = ref.bank_margin[i * 7 + n, a, b]
        if not np.isfinite(margin):
            return v, None
        return v + min(margin, 0.0), v - max(margin, 0.0)

    rng = np.random.default_rng(3)
    checked = 0
    while checked < 60:
        a, b = (int(x) for x in rng.integers(0, t, 2))
        n = int(rng.integers(1, 7))
        roll = sorted(int(f) for f in rng.integers(1, 7, n))
        if 1 not in roll:
            continue
        i0 = 0 if n == 6 and rng.random() < 0.3 else int(rng.integers(1, t + 4))
        if a + i0 >= t:
            continue
        got = advise(roll, turn_points=50 * i0, me=50 * a, opp=50 * b, target=target,
                     rules=table)
        assert got.mode == "two-player" and got.policy == "optimal-win"
        for (keep, action, left), v in _pairs(got).items():
            bank, roll_v = naive(a, b, i0 + 2 * len(keep), left if left else 6)
            if action == "bank":
                assert v == pytest.approx(bank, abs=1e-9), (a, b, i0, keep)
            elif roll_v is not None:
                assert v == pytest.approx(roll_v, abs=1e-9), (a, b, i0, keep, left)
            checked += 1


@pytest.mark.parametrize("hot_dice", ["may-bank", "must-roll"])
def test_last_turn_values_are_the_plain_python_last_turn(hot_dice):
    """Under must-roll, ahead with six dice the last turn still rolls (and can lose)."""
    table = dataclasses.replace(_ones(), hot_dice=hot_dice)
    last = ntp.LastRound(table)
    target = 800
    for me, opp, tp, roll in [(0, 800, 0, [1, 1, 2, 3, 4, 5]), (300, 900, 400, [1, 4]),
                              (400, 850, 300, [1, 1, 6]), (650, 800, 50, [1, 1, 1, 2]),
                              (700, 800, 50, [1, 1]), (650, 800, 100, [1, 1, 1]),
                              (700, 1000, 200, [1, 3, 3])]:
        got = advise(roll, turn_points=tp, me=me, opp=opp, target=target, rules=table)
        assert got.mode == "last-round"
        for (keep, action, left), v in _pairs(got).items():
            x = (opp - me - tp - 100 * len(keep)) // 50
            if action == "bank":
                assert v == (1.0 if x < 0 else 0.5 if x == 0 else 0.0)
                assert hot_dice == "may-bank" or len(keep) < len(roll)
            else:
                assert v == pytest.approx(last.roll(x, left)[0], abs=1e-12), (me, tp, keep)


def test_a_bank_that_reaches_the_target_hands_over_the_last_round():
    # me 600 + 300 banks 900 >= 800: the opponent's last turn needs more than 900 - 500;
    # the turn points may pass the target before the bank (700 + 200 + 200 here)
    table = _ones()
    last = ntp.LastRound(table)
    got = advise([1, 1, 3], turn_points=100, me=600, opp=500, target=800, rules=table)
    bank = {o.keep: o.value for o in got.options if o.action == "bank"}
    assert bank[(1, 1)] == pytest.approx(1.0 - last.turn((900 - 500) // 50)[0], abs=1e-9)
    past = advise([1, 1, 3], turn_points=200, me=700, opp=500, target=800, rules=table)
    bank = {o.keep: o.value for o in past.options if o.action == "bank"}
    assert bank[(1, 1)] == pytest.approx(1.0 - last.turn((1100 - 500) // 50)[0], abs=1e-9)


def test_equal_options_are_ties():
    # the last turn with 400 + 500 against 1,000: banking 1 1, 1 5 or 1 1 5 wins for sure
    # (worth 1), banking 1 ties (worth 1/2), rolling on risks a bust
    got = advise([1, 1, 5, 2, 3, 4], turn_points=500, me=400, opp=1000, target=1000)
    assert got.mode == "last-round" and got.ties == 3
    assert {(o.keep, o.action) for o in got.options if o.tie_with_best} == {
        ((1, 1), "bank"), ((1, 5), "bank"), ((1, 1, 5), "bank")}
    assert all(o.value == 1.0 and o.loss == 0.0 for o in got.options[:3])
    assert got.options[3].value < 1.0 and got.options[3].loss > 0.0
    assert got.top(1).ties == 3 and len(got.top(1).options) == 1
    # two set-asides with the same points and dice left: the same values
    solo = {(o.keep, o.action): o.value for o in advise([1, 2, 2, 2, 5, 5]).options}
    assert solo[((1, 5, 5), "roll")] == solo[((2, 2, 2), "roll")]
    assert solo[((1, 5, 5), "bank")] == solo[((2, 2, 2), "bank")] == 200


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"roll": [1, 7]}, "dice 1..6"),
    # a roll that scores nothing is advice (the turn is lost), not its position's errors
    ({"roll": [2, 3, 7]}, "dice 1..6"),
    ({"roll": [2, 3], "turn_points": 0}, "first roll"),
    ({"roll": [2, 3], "turn_points": 120}, "multiple of 50"),
    ({"roll": [2, 3], "turn_points": 100, "me": 1000, "opp": 0, "target": 1000},
     "ended the game"),
    ({"roll": [2, 3], "turn_points": 100, "me": 100, "opp": 1000, "target": 1000,
      "ending": "first-to-bank"}, "game ended"),
    ({"roll": [2, 3], "turn_points": 100, "target": 1000}, "--target needs --me and --opp"),
    ({"roll": []}, "dice 1..6"),
    ({"roll": [1, 5], "turn_points": 0}, "first roll"),
    ({"roll": [1, 5], "turn_points": 120}, "multiple of 50"),
    ({"roll": [1, 5], "turn_points": -50}, "multiple of 50"),
    ({"roll": [1, 5], "turn_points": 100, "me": 100}, "both --me and --opp"),
    ({"roll": [1, 5], "turn_points": 100, "me": 990, "opp": 0, "target": 1000},
     "multiple of 50"),
    ({"roll": [1, 5], "turn_points": 100, "me": 1000, "opp": 0, "target": 1000},
     "ended the game"),
    ({"roll": [1, 5], "turn_points": 100, "me": 100, "opp": 1000, "target": 1000,
      "ending": "first-to-bank"}, "game ended"),
    ({"roll": [1, 5], "turn_points": 100, "target": 1010}, "multiple of 50"),
    ({"roll": [1, 5], "turn_points": 100, "target": 1000}, "--target needs --me and --opp"),
    ({"roll": [1, 5], "turn_points": 100, "ending": "first-to-bank"},
     "--ending needs --me and --opp"),
])
def test_impossible_positions_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=message):
        advise(**kwargs)


# ---------------------------------------------------------------------------------
# the command


def test_a_tiny_chance_to_win_does_not_tie_a_certain_loss():
    """Far behind in the last round every roll has a chance below 1e-12 and every bank
    none: they were all ties of the best (loss 0) under an absolute tolerance."""
    got = advise([1, 5], turn_points=100, me=0, opp=100000, target=1000)
    best = got.options[0]
    assert best.action == "roll" and best.value > 0 and got.ties == 1
    banks = [o for o in got.options if o.action == "bank"]
    assert len(banks) == 3 and all(o.value == 0.0 and not o.tie_with_best for o in banks)
    assert all(o.loss == best.value for o in banks)
    rolls = [o for o in got.options[1:] if o.action == "roll"]
    assert rolls and all(0 < o.value < best.value and o.loss == best.value - o.value
                         for o in rolls)
    # the neighbours: banks that win for sure still tie, and equal values tie
    sure = advise([1, 5, 5], turn_points=300, me=900, opp=1000, target=1000)
    assert sure.ties == 5 and all(o.value == 1.0 and o.loss == 0.0
                                  for o in sure.options[:5])
    assert tied(0.0, 0.0) and tied(0.5, 0.5 - 1e-14) and not tied(2e-47, 7e-48)


def _table_rows(out: str) -> list[list[str]]:
    """The cells of a printed advice table's rows: #, option, value, loss."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()
            if line.startswith("│")]


def test_the_table_tells_tiny_values_and_losses_apart(capsys, monkeypatch):
    """Far behind in the last round every roll's chance is below 1e-44 and every bank's
    0: four decimals of a percent would print every value and loss as 0.0000%, while the
    JSON holds distinct values and no tie. Each value prints with its significant digits,
    and only the loss of an option that ties the best is zero."""
    from glossary_checks import capture_tables, check_tables

    printed = capture_tables(monkeypatch)
    argv = ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--me", "0",
            "--opp", "100000", "--target", "1000"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    options = json.loads(out)["options"]
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    rows = _table_rows(out)
    assert len(rows) == len(options) == 6
    for (_, _, value, loss), o in zip(rows, options, strict=True):
        assert float(value.rstrip("%")) == pytest.approx(100 * o["value"], rel=1e-3)
        assert (float(loss.rstrip("%")) == 0) == o["tie_with_best"]
    rolls = [value for _, what, value, _ in rows if what.endswith(("roll 6", "roll 1"))]
    assert len(rolls) == len(set(rolls)) == 3
    check_tables(printed, " ".join(argv))


def test_a_long_shots_options_print_apart_as_their_json_says(monkeypatch, capsys):
    """``advise penta --roll 6,6,6,6,6 --objective at-least:1200``: P(final >= 1200) of
    each option is below 2e-10, where eight decimals would show 0.00000000 for every value
    and loss. (The command's values, as its JSON gives them, through the table that prints
    them.)"""
    from glossary_checks import capture_tables, check_tables

    from dicelab.cli.render import advice_table

    printed = capture_tables(monkeypatch)
    values = [1.7424584069685088e-10, 5.5003652871085665e-11, 1.8548699828290132e-11,
              7.488265842417557e-12, 4.6498579735115484e-12]
    rows = [(f"option {i}", v, values[0] - v, i == 0) for i, v in enumerate(values)]
    advice_table("a long shot", "P(final score >= 1200)", rows, 1, F.number, 8,
                 tie_order="ties go to optimal's choice")
    shown = _table_rows(capsys.readouterr().out)
    assert [r[2] for r in shown] == ["1.7424584e-10", "5.5003653e-11", "1.8548700e-11",
                                     "7.4882658e-12", "4.6498580e-12"]
    assert [r[3] for r in shown] == ["0.00000000", "1.1924219e-10", "1.5569714e-10",
                                     "1.6675757e-10", "1.6959598e-10"]
    check_tables(printed, "advise penta --objective at-least:1200")


@pytest.mark.parametrize(("position", "refused"), [
    (["--target", "1000"], "--target"),  # solitaire: max-ev plays to no target
    (["--target", "10000"], "--target"),  # the default, given: still refused without totals
    ([], None),
    (["--target", "1000", "--me", "0", "--opp", "1000"], None),  # the last round
    (["--ending", "first-to-bank"], "--ending"),  # solitaire: max-ev's turn, no game to end
    (["--ending", "last-round"], "--ending"),  # the default, given: still refused
    (["--ending", "first-to-bank", "--my-farkles", "1", "--rules", "facebook"], "--ending"),
    (["--my-farkles", "1", "--rules", "facebook"], None),  # solitaire reads its own run
    (["--ending", "first-to-bank", "--me", "0", "--opp", "100", "--target", "300"], None),
])
def test_a_target_or_ending_without_both_totals_is_one_error_line(capsys, position, refused):
    """Solitaire advice follows max-ev, which plays to no target and which no ending rule
    changes: a --target or an --ending given without --me and --opp was silently ignored
    (and the JSON reported it), as --floor and --opp-farkles are not."""
    code, out, err = run_cli(capsys, ["advise", "farkle", "--roll", "1,1,5,2,3,4", *position,
                                      "--json", "--top", "1"])
    if refused:
        assert (code, out) == (2, "") and err.count("\n") == 1
        assert err.startswith(f"error: {refused} needs --me and --opp")
        return
    d = json.loads(out)
    assert code == 0 and err == "" and d["options"]
    assert (d["mode"] == "solitaire") == ("--me" not in position)
    if "--ending" in position:  # the ending given, else the rules' own
        assert d["ending"] == "first-to-bank"


def test_advise_farkle_command_table_and_json(capsys):
    code, out, err = run_cli(capsys, ["advise", "farkle", "--roll", "1,1,5,2,3,4",
                                      "--turn-points", "350"])
    assert code == 0 and err == ""
    first = next(line for line in out.splitlines() if "│  1 │" in line or "│ 1 │" in line)
    assert "set aside 1 (100), roll 5" in first
    code, out, _ = run_cli(capsys, ["advise", "farkle", "--roll", "1 1 5 2 3 4",
                                    "--turn-points", "350", "--json", "--top", "3"])
    d = json.loads(out)
    assert code == 0 and d["mode"] == "solitaire" and d["policy"] == "max-ev"
    # --top shortens the table, not the JSON: every option, ranked
    every = advise([1, 1, 5, 2, 3, 4], turn_points=350).options
    assert len(d["options"]) == len(every) > 3 and d["options"][0]["keep"] == [1]
    assert [o["value"] for o in d["options"]] == [o.value for o in every]
    assert d["options"][0]["action"] == "roll" and d["options"][0]["dice"] == 5
    assert d["target"] is None and d["ending"] is None  # max-ev plays to neither


def test_advise_farkle_two_players_command(capsys):
    code, out, _ = run_cli(capsys, ["advise", "farkle", "--roll", "5,5,2", "--turn-points",
                                    "300", "--me", "400", "--opp", "600", "--target", "1000",
                                    "--json"])
    d = json.loads(out)
    assert code == 0 and d["mode"] == "two-player" and d["unit"] == "P(win) + P(tie)/2"
    assert {(tuple(o["keep"]), o["action"]) for o in d["options"]} == {
        ((5,), "bank"), ((5,), "roll"), ((5, 5), "bank"), ((5, 5), "roll")}
    assert all(0.0 <= o["value"] <= 1.0 for o in d["options"])
    direct = advise([5, 5, 2], turn_points=300, me=400, opp=600, target=1000)
    assert [o["value"] for o in d["options"]] == [o.value for o in direct.options]


def test_the_last_turn_counts_the_options_tied_for_the_best(capsys):
    """The opponent at the target: every bank that beats 2,000 wins outright. The caption
    counts the options tied for the best, #1 among them, and the JSON says last-round."""
    argv = ["advise", "farkle", "--roll", "1,1,1,1,5,5", "--me", "1900", "--opp", "2000",
            "--target", "2000"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    d = json.loads(out)
    assert code == 0 and err == "" and d["mode"] == "last-round" and d["target"] == 2000
    best = [o for o in d["options"] if o["value"] == 1.0]
    assert d["tied_with_best"] == len(best) > 1
    code, out, _ = run_cli(capsys, [*argv, "--top", "0"])
    assert code == 0 and f"{len(best)} options tie for the best" in " ".join(out.split())


def test_runs_of_lost_turns_without_a_penalty_change_nothing_and_say_so(capsys):
    argv = ["advise", "farkle", "--roll", "5,5,2", "--turn-points", "300", "--me", "400",
            "--opp", "600", "--target", "1000", "--json"]
    code, plain, err = run_cli(capsys, argv)
    assert code == 0 and err == ""
    code, out, err = run_cli(capsys, [*argv, "--my-farkles", "2", "--opp-farkles", "1"])
    assert code == 0 and out == plain
    assert err == "note: rules 'default' have no farkle penalty: turns lost in a row do " \
                  "not change these values\n"


@pytest.mark.parametrize("argv", [
    ["advise", "farkle", "--roll", "2,3,4,6,6,7"],  # scores nothing, but a 7
    ["advise", "farkle", "--roll", "2,3,4,6,6,2,2"],  # seven dice
    ["advise", "farkle", "--roll", "2,3"],  # a first roll of two dice
    ["advise", "farkle", "--roll", "2,3", "--turn-points", "100", "--me", "1000", "--opp",
     "0", "--target", "1000"],
    ["advise", "farkle", "--roll", "2,3", "--turn-points", "100", "--my-farkles", "3",
     "--rules", "facebook"],
    ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--my-farkles", "3"],
    ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--opp-farkles", "1"],
    ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--top", "-1"],
    ["advise", "farkle", "--roll", "1,x"],
    ["advise", "farkle", "--roll", "1,1,1,1,1,1,1"],
    ["advise", "farkle", "--roll", "1,5", "--turn-points", "75"],
    ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--opp", "300"],
    ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--rules", "nope"],
    ["advise", "penta", "--roll", "1,2,3"],
    ["advise", "penta", "--roll", "1,2,3,4,5", "--rolls-left", "3"],
    ["advise", "penta", "--roll", "1,1,1,1,1", "--rules", "no-bonus",
     "--card", "penta=50,ones=3,bonuses=1"],
])
def test_advise_refusals_are_one_error_line(capsys, argv):
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize(("position", "refused"), [
    (["--turn-points", "1000000000000000000", "--me", "0", "--opp", "0"], True),  # the turn
    (["--turn-points", "100", "--me", "0", "--opp", "1000000000000000000"], True),  # the last
    (["--turn-points", "1000000000000000000"], True),  # solitaire
    (["--turn-points", "1000000", "--me", "0", "--opp", "0"], False),
    (["--turn-points", "100", "--me", "0", "--opp", "1000000"], False),
    (["--turn-points", "1000000"], False),
])
def test_advice_at_more_points_than_memory_holds_is_one_error_line(capsys, position,
                                                                    refused):
    """Turn points or an opponent's total past what a turn table can hold in memory: one
    line saying how much it would need (it was a MemoryError traceback with two
    players); far fewer points, still many, are advised."""
    target = ["--target", "300"] if "--me" in position else []
    code, out, err = run_cli(capsys, ["advise", "farkle", "--roll", "1,5", *position,
                                      *target, "--json"])
    if refused:
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith("error: ") and "would need" in err
    else:
        assert code == 0 and err == "" and json.loads(out)["options"]


def test_advise_penta_is_policy_penta(capsys):
    argv = ["--roll", "1,3,3,4,6", "--card", "ones=3,fours=12", "--rolls-left", "1",
            "--strategy", "greedy", "--json", "--top", "0"]
    code, new, _ = run_cli(capsys, ["advise", "penta", *argv])
    code_old, old, _ = run_cli(capsys, ["policy", "penta", *argv])
    assert code == code_old == 0 and new == old
    d = json.loads(new)
    assert d["game"] == "penta" and d["unit"] == "card total + this turn's expected points"
    assert d["options"][0]["played"] and d["options"][0]["loss"] == 0.0
    # optimal's values are the expected final score; every option is in the JSON, each
    # one's value named as in every advice (its unit says what it is)
    code, out, _ = run_cli(capsys, ["advise", "penta", *argv[:-5], "--json", "--top", "2"])
    d = json.loads(out)
    assert code == 0 and d["unit"] == "expected final score"
    assert len(d["options"]) > 2 and all("expected_final_score" not in o for o in d["options"])
    values = [o["value"] for o in d["options"]]
    assert values == sorted(values, reverse=True) and values[0] - values[-1] == pytest.approx(
        d["options"][-1]["loss"])
    code, out, err = run_cli(capsys, ["advise", "penta", "--roll", "1,2,3,4,5", "-s", "bogus"])
    assert (code, out) == (2, "") and err == "error: --strategy is optimal or greedy, not 'bogus'\n"


@pytest.mark.parametrize(("left", "words"), [(0, "0 rerolls left"), (1, "1 reroll left"),
                                             (2, "2 rerolls left")])
def test_advise_penta_title_counts_the_rerolls_in_words(capsys, left, words):
    """The title said '1 rerolls left'."""
    code, out, _ = run_cli(capsys, ["advise", "penta", "--roll", "1,3,3,4,6", "--rolls-left",
                                    str(left), "--strategy", "greedy", "--top", "1"])
    assert code == 0 and f"roll 1 3 3 4 6, {words}, card total 0" in out


@pytest.mark.parametrize(("runs", "last", "noted"), [
    ({"my_farkles": 2}, True, True), ({"opp_farkles": 1}, True, True),
    ({}, True, False), ({"my_farkles": 2}, False, False),
])
def test_runs_of_lost_turns_in_the_last_round_are_noted(runs, last, noted):
    """Under a penalty the last turn's values do not read the runs of lost turns (the turn
    decides the game): given, they were ignored without a word, as the runs under rules
    without a penalty are not."""
    where = {"me": 0, "opp": 300 if last else 100, "target": 300, "rules": FB_SMALL,
             "ending": "last-round", **({} if last else {"floor": 200})}
    got = advise([1, 5], turn_points=100, **where, **runs)
    assert got.mode == ("last-round" if last else "two-player")
    assert (got.note is not None) is noted
    if noted:
        assert got.note.startswith("in the last round turns lost in a row do not change")
        assert got.options == advise([1, 5], turn_points=100, **where).options


@pytest.mark.parametrize(("given", "note"), [
    ({"floor": 400}, "in the last round --floor does not change these values: this turn "
                     "decides the game (the floor only bounds the totals)"),
    ({"floor": 400, "my_farkles": 1},
     "in the last round turns lost in a row and --floor do not change these values"),
    ({}, None),
    # (before the last round the solve stops totals at the floor: no note, as above)
])
def test_a_floor_given_for_the_last_round_is_noted(given, note):
    """The last turn is valued without a solve: a --floor given there bounds the totals
    (--me -400 needs it) and changes no value; it was taken without a word."""
    where = {"me": -400 if "floor" in given else 0, "opp": 300, "target": 300,
             "rules": FB_SMALL, "ending": "last-round"}
    got = advise([1, 5], turn_points=100, **where, **given)
    assert got.mode == "last-round"
    if note is None:
        assert got.note is None
        return
    assert got.note.startswith(note)
    assert got.options == advise([1, 5], turn_points=100, **where, floor=600).options


def test_load_rules_of_the_advice_follows_the_ending():
    got = advise([1, 5], turn_points=100, me=0, opp=0, target=300,
                 rules=load_rules("default"), ending="first-to-bank")
    assert got.ending == "first-to-bank" and got.mode == "two-player"


# ---------------------------------------------------------------------------------
# under the farkle penalty


def test_solitaire_values_under_the_penalty_are_the_plain_python_max_ev():
    """After s lost turns in a row a lost turn is worth beta[s] (the long-run cost of the
    average-reward solution): the plain recursion with that bust value."""
    import dataclasses

    rules = dataclasses.replace(PRESETS["basic"], name="basic-pen", farkle_penalty=500)
    sol = solitaire.solve_max_ev(rules)
    rng = np.random.default_rng(11)
    for s, beta in enumerate((sol.bias[1], sol.bias[2], -500.0)):
        cap = sol.cap
        states = nfd.max_ev_values("basic", cap, every=True, bust=beta)
        checked = 0
        while checked < 15:
            n = int(rng.integers(1, 7))
            roll = sorted(int(f) for f in rng.integers(1, 7, n))
            if not nf.legal_setasides(rules, tuple(roll)):
                continue
            tp = 0 if n == 6 and rng.random() < 0.2 else 50 * int(rng.integers(1, cap // 50))
            got = advise(roll, turn_points=tp, rules=rules, my_farkles=s)
            assert "long-run cost" in got.unit
            for (keep, action, left), v in _pairs(got).items():
                p = nf.legal_setasides(rules, tuple(keep))[tuple(keep)]
                want = tp + p if action == "bank" else (
                    nfd.max_ev_roll_value("basic", cap, states, tp + p, left)
                    + nfd.bust_probability("basic", left) * beta)
                assert v == pytest.approx(want, rel=1e-10, abs=1e-9), (s, roll, tp, keep)
                checked += 1


#: facebook's table with a penalty of 100: small games under the penalty
FB_SMALL = dataclasses.replace(PRESETS["facebook"], name="fb-small", farkle_penalty=100)


@pytest.fixture(scope="module")
def fb_small_ref():
    """The plain value iteration of :data:`FB_SMALL` to 300, totals down to -200."""
    return ntp.solve(FB_SMALL, 300, None, floor=4)


def test_two_player_values_under_the_penalty_are_the_plain_python_value_iteration(
        monkeypatch, fb_small_ref):
    """Every option's value at random states (both runs of lost turns, totals below zero)
    against the plain value iteration over every state (facebook's table, a penalty of
    100, totals down to -200, to 300)."""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 200)
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)
    rules, ref = FB_SMALL, fb_small_ref
    target, floor = 300, 4
    u_t = target // 50 + floor
    rng = np.random.default_rng(5)
    checked = 0
    while checked < 80:
        s, r = (int(x) for x in rng.integers(0, 3, 2))
        a, b = (int(x) for x in rng.integers(0, u_t, 2))
        n = int(rng.integers(1, 7))
        roll = sorted(int(f) for f in rng.integers(1, 7, n))
        if 1 not in roll:
            continue
        i0 = 0 if n == 6 and rng.random() < 0.3 else int(rng.integers(1, u_t + 4))
        got = advise(roll, turn_points=50 * i0, me=50 * (a - floor), opp=50 * (b - floor),
                     target=target, rules=rules, my_farkles=s, opp_farkles=r)
        for (keep, action, left), v in _pairs(got).items():
            i = i0 + nf.legal_setasides(rules, tuple(keep))[tuple(keep)] // 50
            row = ref.states[i * 7 + left, s, r, a, b, 0] if i * 7 + left < len(
                ref.states) else None
            margin = ref.bank_margin[i * 7 + left, s, r, a, b]
            if row is None or not np.isfinite(margin):
                continue
            want = row + min(margin, 0.0) if action == "bank" else row - max(margin, 0.0)
            assert v == pytest.approx(want, abs=1e-9), (s, r, a, b, i0, keep, action)
            checked += 1
    with pytest.raises(UserError, match="turns lost in a row"):
        advise([1, 5], turn_points=100, me=0, opp=0, target=target, rules=rules,
               my_farkles=3)
    # without a penalty the runs of lost turns are facts no rule uses: the same values,
    # and a note that says so
    plain = advise([1, 5], turn_points=100, me=0, opp=0, target=400)
    for s, r in ((1, 0), (0, 2), (2, 1)):
        a = advise([1, 5], turn_points=100, me=0, opp=0, target=400, my_farkles=s,
                   opp_farkles=r)
        assert a.options == plain.options and "no farkle penalty" in a.note
    assert plain.note is None
    solo = advise([1, 5], turn_points=100, my_farkles=2)
    assert solo.options == advise([1, 5], turn_points=100).options and solo.note
    with pytest.raises(UserError, match="needs --me and --opp"):
        advise([1, 5], turn_points=100, opp_farkles=1)


def test_advise_farkle_command_under_facebook(capsys, monkeypatch):
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    code, out, err = run_cli(capsys, ["advise", "farkle", "--roll", "1,5,2,3,4,4",
                                      "--turn-points", "0", "--me", "-500", "--opp", "100",
                                      "--my-farkles", "2", "--opp-farkles", "1",
                                      "--target", "300", "--rules", "facebook", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["mode"] == "two-player" and 0.0 < d["options"][0]["value"] < 1.0


def test_advice_names_the_runs_of_lost_turns_and_the_ending_as_policy_farkle_does(
        capsys, monkeypatch):
    """Under a farkle penalty the runs change the values: the title and the JSON name
    them (two players' both, solitaire your own), in policy farkle's words; the ending
    named is the rules' own (facebook: first-to-bank) unless --ending replaces it."""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    two = ["advise", "farkle", "--roll", "1,5,2,3,4,4", "--me", "-500", "--opp", "100",
           "--target", "300", "--rules", "facebook"]
    seen = {}
    for s, r in ((0, 0), (2, 1)):
        argv = [*two, "--my-farkles", str(s), "--opp-farkles", str(r)]
        code, out, err = run_cli(capsys, [*argv, "--json"])
        assert code == 0, err
        d = json.loads(out)
        assert (d["my_farkles"], d["opp_farkles"], d["ending"]) == (s, r, "first-to-bank")
        seen[s, r] = d["options"][0]["value"]
        code, out, err = run_cli(capsys, argv)
        text = " ".join(out.split())  # the title as one line
        assert code == 0 and err == ""
        assert (f"Farkle (facebook, me -500, opponent 100, target 300, first-to-bank, lost "
                f"turns in a row {s} vs {r}, totals down to -1,000): roll 1 5 2 3 4 4") in text
    assert seen[0, 0] != seen[2, 1]  # different values, and the titles say why
    code, out, err = run_cli(capsys, [*two, "--ending", "last-round"])
    assert code == 0, err
    assert "target 300, last-round, lost turns in a row 0 vs 0," in " ".join(out.split())

    solo = ["advise", "farkle", "--roll", "1,5,2,3,4,4", "--rules", "facebook",
            "--my-farkles", "2"]
    code, out, err = run_cli(capsys, [*solo, "--json"])
    assert code == 0, err
    assert (json.loads(out)["my_farkles"], json.loads(out)["opp_farkles"]) == (2, 0)
    code, out, err = run_cli(capsys, solo)
    assert code == 0 and err == ""
    assert "Farkle (facebook, solitaire after 2 lost turns in a row): roll" in " ".join(
        out.split())
    code, out, err = run_cli(capsys, ["advise", "farkle", "--roll", "1,5,2,3,4,4",
                                      "--my-farkles", "2"])  # no penalty: no run named
    assert code == 0 and "Farkle (default, solitaire): roll" in " ".join(out.split())


def test_the_runs_title_is_policy_farkles():
    from dicelab.farkle.policies import bank_table
    from dicelab.farkle.rules import runs_title
    from dicelab.registry import parse_policy

    fb = PRESETS["facebook"]
    assert runs_title(fb, 2, 1) == ", lost turns in a row 2 vs 1"
    assert runs_title(fb, 1) == " after 1 lost turn in a row"
    assert runs_title(PRESETS["default"], 2, 1) == runs_title(PRESETS["default"], 2) == ""
    _, title = bank_table(parse_policy("max-ev"), fb, my_farkles=1)
    assert title.startswith(f"max-ev{runs_title(fb, 1)} (")
    a = advise([1, 5, 2, 3, 4, 4], rules=fb, my_farkles=1)
    assert a.runs_words == runs_title(fb, 1) and (a.my_farkles, a.opp_farkles) == (1, 0)


# ------------------------------------------------------------------ hot dice must-roll


def _must_roll(rules: FarkleRules, **more) -> FarkleRules:
    return dataclasses.replace(rules, **{"name": f"{rules.name}-must-roll", **more},
                               hot_dice="must-roll")


def _random_roll(rng, rules, n=None):
    """A scoring roll of ``n`` dice (random n by default)."""
    while True:
        k = int(rng.integers(1, 7)) if n is None else n
        roll = sorted(int(f) for f in rng.integers(1, 7, k))
        if nf.legal_setasides(rules, tuple(roll)):
            return roll


def test_solitaire_values_under_must_roll_are_the_plain_python_max_ev():
    """Six dice never bank, past the cap too (where they roll on): every option against
    the plain recursion followed to 16,000 points past the cap, hot dice and past the cap
    included; no option banks six dice."""
    rules = _must_roll(PRESETS["basic"])
    sol = solitaire.solve_max_ev(rules)
    _, roll_value = nfd.max_ev_recursion("basic", sol.cap, every=True, must_roll=True,
                                         far=sol.cap + 16_000)
    rng = np.random.default_rng(13)
    # hot dice (all dice scoring) just below the cap, at it and past it, then random
    cases = [([1, 5], sol.cap - 100), ([1, 1, 1, 5, 5, 5], sol.cap), ([5], sol.cap + 500)]
    checked = hot = 0
    while checked < 150:
        roll, tp = cases.pop() if cases else (_random_roll(rng, rules), None)
        n = len(roll)
        if tp is None:
            tp = 0 if n == 6 and rng.random() < 0.2 else \
                50 * int(rng.integers(1, sol.cap // 50 + 40))
        for (keep, action, left), v in _pairs(advise(roll, turn_points=tp,
                                                     rules=rules)).items():
            p = nf.legal_setasides(rules, tuple(keep))[tuple(keep)]
            assert not (action == "bank" and left == 0 and len(keep) == n), (roll, keep)
            want = tp + p if action == "bank" else roll_value(tp + p, left)
            assert v == pytest.approx(want, rel=1e-10, abs=1e-9), (roll, tp, keep, action)
            checked += 1
            hot += action == "roll" and left == 6
    assert hot >= 3


@pytest.mark.parametrize("penalty", [0, pytest.param(50, marks=pytest.mark.slow)],
                         ids=["no-penalty", "penalty"])
def test_two_player_values_under_must_roll_are_the_plain_python_value_iteration(
        penalty, monkeypatch):
    """Every option's value at random states against the plain value iteration whose six
    dice roll on 60 rows past its cap (with the penalty: both runs of lost turns, totals
    down to -100, two penalties), where the reference has a choice; no option banks hot
    dice."""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 100)
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)
    rules = _must_roll(PRESETS["facebook"], farkle_penalty=penalty, min_bank=100,
                       name="fb-mr")
    target = 300 if penalty else 400
    floor = 2 if penalty else 0
    ref = ntp.solve(rules, target, None, floor=floor, hot_rows=60)
    u_t = target // 50 + floor
    rng = np.random.default_rng(17)
    checked = hot = 0
    for _ in range(2000):
        if checked >= 60:
            break
        s, r = (int(x) for x in rng.integers(0, 3, 2)) if penalty else (0, 0)
        a, b = (int(x) for x in rng.integers(0, u_t, 2))
        roll = _random_roll(rng, rules)
        n = len(roll)
        i0 = 0 if n == 6 and rng.random() < 0.3 else int(rng.integers(1, u_t + 4))
        if not penalty and a + i0 >= u_t:
            continue
        got = advise(roll, turn_points=50 * i0, me=50 * (a - floor), opp=50 * (b - floor),
                     target=target, rules=rules, my_farkles=s, opp_farkles=r)
        for (keep, action, left), v in _pairs(got).items():
            i = i0 + nf.legal_setasides(rules, tuple(keep))[tuple(keep)] // 50
            at = (i * 7 + left, s, r, a, b) if penalty else (i * 7 + left, a, b)
            hot_roll = action == "roll" and left == 6  # a forced roll: the state's value
            if at[0] >= len(ref.states) or not (hot_roll or np.isfinite(ref.bank_margin[at])):
                continue
            row, margin = ref.states[at][0], ref.bank_margin[at]
            want = row if hot_roll else \
                row + min(margin, 0.0) if action == "bank" else row - max(margin, 0.0)
            assert v == pytest.approx(want, abs=1e-8), (s, r, a, b, i0, keep, action)
            checked += 1
            hot += action == "roll" and left == 6
    assert checked >= 60 and hot > 0


def test_two_player_values_at_a_given_floor_are_the_plain_python_value_iteration(
        capsys, fb_small_ref):
    """``floor`` (``--floor``) sets how far below zero the totals of two-player advice may
    fall: the values are the plain value iteration's at that floor (facebook's table, a
    penalty of 100, totals down to -200, to 300), not those of another floor, and each
    floor's solution is held apart from the other's."""
    rules, ref, target, floor = FB_SMALL, fb_small_ref, 300, 4
    roll, tp, me, opp = [1, 5, 5], 150, -200, 100

    def values(**kw):
        return _pairs(advise(roll, turn_points=tp, me=me, opp=opp, target=target,
                             rules=rules, my_farkles=2, **kw))

    at_floor = values(floor=200)
    for (keep, action, _), v in at_floor.items():
        i = (tp + nf.legal_setasides(rules, tuple(keep))[tuple(keep)]) // 50
        left = len(roll) - len(keep) or 6  # hot dice: six again
        row = ref.states[i * 7 + left, 2, 0, me // 50 + floor, opp // 50 + floor, 0]
        margin = ref.bank_margin[i * 7 + left, 2, 0, me // 50 + floor, opp // 50 + floor]
        want = row + min(margin, 0.0) if action == "bank" else row - max(margin, 0.0)
        assert v == pytest.approx(want, abs=1e-9), (keep, action)
    deeper = values(floor=400)  # totals down to -400: a lost turn at -200 costs more
    assert all(abs(deeper[k] - v) > 1e-6 for k, v in at_floor.items() if k[1] == "roll")
    assert values(floor=200) == at_floor
    assert advise(roll, turn_points=tp, me=me, opp=opp, target=target, rules=rules,
                  floor=200).to_dict()["floor_points"] == 200
    with pytest.raises(UserError, match="--me must be a multiple of 50 of at least -200"):
        advise(roll, turn_points=tp, me=-250, opp=opp, target=target, rules=rules, floor=200)
    for argv, message in (
            (["--me", "0", "--opp", "0"], "have no farkle penalty"),
            ([], "--floor needs --me and --opp"),
            (["--me", "0", "--opp", "0", "--rules", "facebook", "--floor", "950"],
             "--floor must be a multiple of 50 in 1000..1000000, not 950")):
        code, out, err = run_cli(capsys, ["advise", "farkle", "--roll", "1,1,5,2,3,4",
                                          "--floor", "2000", *argv])
        assert (code, out) == (2, "") and message in err and err.count("\n") == 1, err


# ---------------------------------------------------------------------------------
# a roll that scores nothing: no choice, the turn is lost; how exact the values are


def _best(roll, **where) -> float:
    """The value of a decision: its best option's, or the lost turn's when ``roll`` scores
    nothing."""
    a = advise(roll, **where)
    return a.lost_turn_value if a.turn_lost else a.options[0].value


def _exact_floor(monkeypatch) -> None:
    """:data:`FB_SMALL`'s solves at the floor of the tests above (totals down to -200)."""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 200)
    monkeypatch.setattr(config, "PENALTY_SWEEP_TOL", 1e-13)


@pytest.mark.parametrize("where", [
    {},
    {"rules": "facebook"},  # a farkle penalty: a lost turn at max-ev's long-run cost
    {"rules": "facebook", "my_farkles": 1},
    {"rules": "facebook", "my_farkles": 2},  # the third in a row: the penalty
    {"rules": "zilch", "my_farkles": 2},
    {"me": 400, "opp": 600, "target": 1000},
    {"me": 400, "opp": 1000, "target": 1000},  # the last round
    {"me": 100, "opp": -100, "target": 300, "rules": FB_SMALL, "my_farkles": 1,
     "opp_farkles": 2},
    {"me": -150, "opp": 100, "target": 300, "rules": FB_SMALL, "my_farkles": 2},
    {"me": -200, "opp": 100, "target": 300, "rules": FB_SMALL, "my_farkles": 2},  # floor
], ids=["solitaire", "penalty-0", "penalty-1", "penalty-2", "zilch-2", "two-player",
        "last-round", "fb-small-1", "fb-small-2", "fb-small-at-floor"])
def test_rolling_one_die_is_worth_its_six_faces_a_lost_turn_at_its_value(where,
                                                                          monkeypatch):
    """The value of rolling one die (the 1 of 1 2 set aside) is the mean over the die's
    faces of the advice on each: the best option of a 1 or a 5, the lost turn's value of
    the four that score nothing. So the lost turn's value is the one every roll's value
    counts (the solve's own), in every mode, under the penalty too (the run of lost turns
    moving on, the third in a row costing the penalty, stopped at the floor). These rolls
    were refused as errors."""
    _exact_floor(monkeypatch)
    tp0 = 300
    got = advise([1, 2], turn_points=tp0, **where)
    roll1 = next(o.value for o in got.options if o.keep == (1,) and o.action == "roll")
    faces = [_best([f], turn_points=tp0 + 100, **where) for f in range(1, 7)]
    assert roll1 == pytest.approx(sum(faces) / 6, rel=1e-9, abs=1e-9), faces
    lost = advise([2], turn_points=tp0 + 100, **where)
    assert lost.turn_lost and lost.options == [] and lost.ties == 0
    assert lost.mode == got.mode and lost.unit == got.unit
    assert lost.tolerance == pytest.approx(got.tolerance, rel=1e-12, abs=0)
    if lost.mode == "last-round":  # the opponent keeps the lead: the game is lost
        assert lost.lost_turn_value == pytest.approx(0.0, abs=1e-15)
    if lost.mode == "solitaire" and "rules" not in where:  # the turn scores 0
        assert lost.lost_turn_value == pytest.approx(0.0, abs=1e-15)


def test_a_lost_turn_is_worth_the_opponents_turn_after_it_as_the_solution_says(
        monkeypatch):
    """Two players: a lost turn hands the opponent the move at its total and mine (mine
    less the penalty at the third lost turn in a row, down to the floor; the runs moved
    on). Its value is my share of that position: the opponent's P(loss) + P(tie)/2, that
    is 1 - its value, read from the solution's public queries at the state after."""
    from dicelab.farkle.advise import optimal_win_solution

    sol = optimal_win_solution(PRESETS["default"], 1000)
    for me, opp, tp in ((400, 600, 350), (0, 0, 100), (900, 950, 50), (950, 0, 600)):
        a = advise([2, 3, 4], turn_points=tp, me=me, opp=opp, target=1000)
        assert a.turn_lost and a.mode == "two-player"
        o = sol.outcome(opp, me)  # the opponent to move
        assert a.lost_turn_value == pytest.approx(o.loss + o.tie / 2, abs=1e-12)
        assert a.lost_turn_value == pytest.approx(1 - sol.win_value(opp, me), abs=1e-12)
        assert (a.penalty_points, a.my_farkles_after) == (0, 0)
    _exact_floor(monkeypatch)
    sol = optimal_win_solution(FB_SMALL, 300)
    for me, s, r, after, paid, s_after in ((100, 0, 1, 100, 0, 1), (100, 1, 0, 100, 0, 2),
                                           (100, 2, 2, 0, 100, 0), (-150, 2, 0, -200, 50, 0),
                                           (-200, 2, 1, -200, 0, 0)):
        a = advise([3, 4], turn_points=150, me=me, opp=50, target=300, rules=FB_SMALL,
                   my_farkles=s, opp_farkles=r)
        assert (a.penalty_points, a.my_farkles_after) == (paid, s_after)
        want = 1 - sol.win_value(50, after, r, s_after)
        assert a.lost_turn_value == pytest.approx(want, abs=1e-9), (me, s, r)


def test_under_zilch_six_dice_that_score_nothing_score_500_and_fewer_lose_the_turn():
    six = advise([2, 3, 4, 6, 6, 2], rules="zilch")
    assert not six.turn_lost and six.lost_turn_value is None
    assert {(o.keep, o.points) for o in six.options} == {((2, 2, 3, 4, 6, 6), 500)}
    for roll, tp in (([2, 3, 4, 6, 6], 300), ([2, 3], 300), ([6], 500)):
        a = advise(roll, turn_points=tp, rules="zilch")
        assert a.turn_lost and a.options == [] and a.mode == "solitaire"
        assert (a.penalty_points, a.my_farkles_after) == (0, 1)
        assert a.lost_turn_value < 0  # under the penalty a lost turn costs, in the long run
    third = advise([2, 3], turn_points=300, rules="zilch", my_farkles=2)
    assert (third.penalty_points, third.my_farkles_after) == (500, 0)
    assert third.lost_turn_value == pytest.approx(-500.0, rel=1e-12)


def _caption(out: str) -> str:
    """A printed table's words as one line."""
    return " ".join(out.split())


@pytest.mark.parametrize(("argv", "words"), [
    (["--roll", "2,3,4,6,6,2"], ["the turn scores 0"]),
    (["--roll", "2,3,4", "--turn-points", "350"],
     ["with the 350 turn points set aside", "the turn scores 0"]),
    (["--roll", "2,3,4", "--turn-points", "350", "--me", "400", "--opp", "600", "--target",
      "1000"], ["with the 350 turn points set aside", "the opponent to move",
                "exact to ±"]),
    (["--roll", "2,3,4", "--turn-points", "350", "--me", "400", "--opp", "1000", "--target",
      "1000"], ["the opponent keeps the lead and wins"]),
    (["--roll", "2,3", "--turn-points", "300", "--rules", "zilch"],
     ["1 lost turn in a row now", "max-ev's long-run cost of a lost turn"]),
    (["--roll", "2,3", "--turn-points", "300", "--rules", "zilch", "--my-farkles", "2"],
     ["the third lost turn in a row costs the farkle penalty, 500 points"]),
], ids=["six-dice", "three-dice", "two-player", "last-round", "zilch", "zilch-third"])
def test_a_roll_that_scores_nothing_is_an_answer_with_every_advices_fields(
        capsys, monkeypatch, argv, words):
    """``advise farkle --roll 2,3,4,6,6,2`` was 'error: ... scores nothing' and exit 2.
    Now the answer: exit 0, the table's one row the lost turn and its caption what it
    costs; the JSON the fields of every advice (a scoring roll's), no options, turn_lost
    and the lost turn's value, all in the glossary."""
    from glossary_checks import capture_tables, check_keys, check_tables

    printed = capture_tables(monkeypatch)
    base = ["advise", "farkle"]
    code, out, err = run_cli(capsys, [*base, "--roll", "1,3,4", "--turn-points", "350",
                                      "--json"])
    assert code == 0, err
    shape = set(json.loads(out))
    code, out, err = run_cli(capsys, [*base, *argv, "--json"])
    assert (code, err) == (0, "")
    d = json.loads(out)
    assert set(d) == shape
    assert d["turn_lost"] is True and d["options"] == [] and d["tied_with_best"] == 0
    assert d["exact"] is True and d["tolerance"] >= 0.0
    assert isinstance(d["lost_turn_value"], float)
    assert isinstance(d["penalty_points"], int) and isinstance(d["my_farkles_after"], int)
    check_keys(d, " ".join(argv))
    printed.clear()
    code, out, err = run_cli(capsys, [*base, *argv])
    assert (code, err) == (0, "")
    text = _caption(out)
    assert "no choice: the roll scores nothing and the turn is lost" in text
    assert "none: nothing scores, the turn is lost" in text
    for w in words:
        assert w in text, w
    shown = next(line for line in out.splitlines() if "none: nothing scores" in line)
    value = shown.split("│")[2].strip()
    if d["mode"] == "solitaire":
        assert float(value.replace(",", "")) == pytest.approx(d["lost_turn_value"], abs=0.005)
    else:
        assert float(value.rstrip("%")) == pytest.approx(100 * d["lost_turn_value"],
                                                         abs=5e-5)
    check_tables(list(printed), " ".join(argv))


def test_a_scoring_roll_has_no_lost_turn_fields(capsys):
    code, out, _ = run_cli(capsys, ["advise", "farkle", "--roll", "1,1,5,2,3,4",
                                      "--turn-points", "350", "--json"])
    d = json.loads(out)
    assert code == 0 and d["turn_lost"] is False and d["options"]
    assert d["lost_turn_value"] is None and d["penalty_points"] is None
    assert d["my_farkles_after"] is None


def test_values_are_labelled_exact_with_the_error_bound_of_their_solve(capsys):
    """Two-player advice printed P(win) + ½P(tie) of the exact solve without saying so,
    or how exact: the caption says 'values exact to ±<bound>' (the solve's tolerance,
    rounded up), the JSON 'exact' and 'tolerance', in every mode (solitaire: max-ev's
    value_error; the last turn: rounding only, plus the climb of six dice that must roll
    on)."""
    import re

    from dicelab.farkle.advise import optimal_win_solution
    from dicelab.farkle.engine.model import CLIMB_ERR

    sol = optimal_win_solution(PRESETS["default"], 1000)
    argv = ["advise", "farkle", "--roll", "1,5,2", "--turn-points", "300", "--me", "400",
            "--opp", "600", "--target", "1000"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    d = json.loads(out)
    assert code == 0 and d["mode"] == "two-player" and d["exact"] is True
    assert sol.tolerance > 0 and d["tolerance"] == pytest.approx(sol.tolerance, rel=1e-12)
    code, out, err = run_cli(capsys, argv)
    assert code == 0 and err == ""
    shown = re.search(r"values exact to ±(\d)e(-\d+)", _caption(out))
    assert shown, out
    bound = int(shown[1]) * 10.0 ** int(shown[2])
    assert sol.tolerance <= bound * (1 + 1e-9) and bound < 10 * sol.tolerance

    solo = ["advise", "farkle", "--roll", "1,5,2", "--turn-points", "300"]
    code, out, _ = run_cli(capsys, [*solo, "--json"])
    d = json.loads(out)
    assert d["exact"] is True and d["tolerance"] == pytest.approx(
        solitaire.max_ev_capped(PRESETS["default"]).value_error, abs=1e-12)
    code, out, _ = run_cli(capsys, solo)
    assert "#1 is the best; values exact up to rounding" in _caption(out)

    last = ["advise", "farkle", "--roll", "1,5,2", "--turn-points", "300", "--me", "400",
            "--opp", "1000", "--target", "1000"]
    code, out, _ = run_cli(capsys, [*last, "--json"])
    d = json.loads(out)
    assert d["mode"] == "last-round" and d["exact"] is True
    assert d["tolerance"] == pytest.approx(0.0, abs=1e-300)
    must = advise([1, 5, 2], turn_points=300, me=400, opp=1000, target=1000,
                  rules=_must_roll(PRESETS["default"]))
    assert must.mode == "last-round" and must.tolerance == pytest.approx(CLIMB_ERR, rel=1e-12)
    # (the penalty's solve: iterated sweeps, their own bound)
    assert advise([1, 5, 2], turn_points=300, rules="facebook").exact


def test_the_bound_printed_is_never_below_the_tolerance():
    from dicelab.cli.render import _exact_to

    assert _exact_to(3.4638958368304884e-14) == "exact to ±4e-14"
    assert _exact_to(1e-9) == "exact to ±1e-9"
    assert _exact_to(9.6e-10, " points") == "exact to ±1e-9 points"
    assert _exact_to(1.0000001e-9) == "exact to ±2e-9"
    assert _exact_to(0.0) == "exact up to rounding"
