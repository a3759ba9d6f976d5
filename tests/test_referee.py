"""The Farkle referee (dicelab.farkle.referee) and the built-in policies as Policy objects
(dicelab.farkle.builtin): on the same dice faces they play every game as the simulation
kernel does (totals, faces used, each seat's turns, rolls, busts and hot dice), every
house rule and both endings; Monte Carlo win rates of referee games agree with the exact
values; an illegal move or a policy that raises is one honest error."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_farkle_sim import run_script

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle import referee as referee_module
from dicelab.farkle.builtin import TablePolicy, as_policy, tabulable
from dicelab.farkle.exact import exact_pair
from dicelab.farkle.policies import seat_of
from dicelab.farkle.policy import Move, bank_rule
from dicelab.farkle.referee import GeneratorDice, Referee, play_game
from dicelab.farkle.rules import ENDINGS, PRESETS, load_rules
from dicelab.play import ScriptedDice
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]
MUST_ROLL = load_rules("default").__class__(name="must-roll", min_bank=200,
                                            hot_dice="must-roll", farkle_penalty=300)


def kernel_game(seats, faces, target, rules, first=0):
    """The kernel's game on scripted faces: (totals, faces used, per-seat statistics)."""
    rec = run_script(seats, faces, target, first_seat=first, table=rules, ending=rules.ending)
    assert rec["counters"][K.C_SCRIPT_ERRORS] == 0
    st = rec["stats"]
    counts = [[int(st[s, c]) for c in (K.ST_TURNS, K.ST_ROLLS, K.ST_BUST_TURNS, K.ST_HOT_DICE,
                                       K.ST_TRIGGERS)] for s in range(len(seats))]
    return rec["totals"][0].tolist(), rec["used"], counts


def referee_game(policies, faces, target, rules, first=0):
    dice = ScriptedDice(faces)
    ref = play_game(Referee(len(policies), rules=rules, target=target, dice=dice,
                            first_seat=first), policies)
    counts = [[ref.n_turns[s], ref.n_rolls[s], ref.n_busts[s], ref.n_hot[s],
               int(ref.trigger == s)] for s in range(len(policies))]
    return ref.totals, dice.pos, counts


CASES = [
    (["ai", "threshold-300"], 3000, "default"),
    (["threshold-250", "ai:base=400,two-dice=100,chase=0"], 3000, "ones-300"),
    (["ai", "threshold-350"], 2000, "facebook"),  # first to bank, 300 to bank, penalty
    (["max-ev", "fastest"], 2000, "facebook"),  # tables by runs of lost turns
    pytest.param(["optimal-win", "max-ev"], 600, "facebook", marks=pytest.mark.slow),
    (["max-ev", "fastest"], 2000, "default"),
    (["optimal-win", "ai"], 800, "default"),  # with its last-round table
    (["threshold-300", "optimal-win:vs=threshold-300"], 800, "default"),
    (["ai", "threshold-400", "max-ev"], 2000, "default"),
    (["ai", "threshold-300"], 2000, "zilch"),
    (["threshold-200", "ai", "max-ev"], 2000, "must-roll"),
    (["threshold-300"], 1500, "basic"),
]


@pytest.mark.parametrize(("names", "target", "rules"), CASES)
def test_every_builtin_policy_plays_as_the_kernel_on_the_same_faces(names, target, rules):
    table = MUST_ROLL if rules == "must-roll" else load_rules(rules)
    specs = [parse_policy(p, "farkle") for p in names]
    policies = [as_policy(s, table, target, len(specs)) for s in specs]
    rnd = random.Random(f"{names}{rules}")
    for game in range(6):
        faces = [rnd.randint(1, 6) for _ in range(8000)]
        first = game % len(names)
        assert referee_game(policies, faces, target, table, first) == \
            kernel_game(specs, faces, target, table, first)


def test_first_to_bank_and_last_round_endings_both_played():
    for ending in ENDINGS:
        table = load_rules("default", ending)
        specs = [parse_policy(p) for p in ("ai", "threshold-500", "threshold-250")]
        policies = [as_policy(s, table, 1500, 3) for s in specs]
        rnd = random.Random(ending)
        for game in range(6):
            faces = [rnd.randint(1, 6) for _ in range(6000)]
            assert referee_game(policies, faces, 1500, table, game % 3) == \
                kernel_game(specs, faces, 1500, table, game % 3)


# each last round once and each set-aside in the fast tier; the rest 0.3-0.5 s each, fast
# twins: the same last round under the other set-aside
@pytest.mark.parametrize(("setaside", "last_round"), [
    pytest.param("all-scoring", "chase", marks=pytest.mark.slow), ("max-ev", "chase"),
    ("all-scoring", "rule-to-beat"), pytest.param("max-ev", "rule-to-beat", marks=pytest.mark.slow),
    pytest.param("all-scoring", "rule", marks=pytest.mark.slow), ("max-ev", "rule")],
    ids=lambda v: v)
def test_tables_of_bank_rules_play_as_the_kernel_whatever_their_last_round(last_round,
                                                                           setaside):
    @bank_rule(last_round=last_round, setaside=setaside)
    def rule(my, opp, tp, n, *, base=350):
        return tp >= (base if my >= opp else base + 150 * (n >= 3))

    for rules, target in ((DEFAULT, 1500), (PRESETS["facebook"], 1500)):
        table = seat_of(rule, rules, target)
        assert table.last_round == last_round
        rnd = random.Random(last_round + setaside + rules.name)
        for game in range(6):
            faces = [rnd.randint(1, 6) for _ in range(8000)]
            mine = referee_game([TablePolicy(table), as_policy("ai", rules, target)], faces,
                                target, rules, game % 2)
            assert mine == kernel_game([table, parse_policy("ai")], faces, target, rules,
                                       game % 2)
            # the rule itself (its decide) plays as its table
            assert referee_game([rule, as_policy("ai", rules, target)], faces, target,
                                rules, game % 2) == mine


@pytest.mark.parametrize(("a", "b", "rules"), [("ai", "threshold-300", "default"),
                                               ("optimal-win", "threshold-400", "default")])
def test_monte_carlo_win_rates_of_referee_games_agree_with_exact_values(a, b, rules):
    target, games = 600, 3000
    table = load_rules(rules)
    exact = exact_pair(a, b, rules=table, target=target)
    pa, pb = as_policy(a, table, target), as_policy(b, table, target)
    dice = GeneratorDice(np.random.default_rng(2026))
    score = 0.0
    for i in range(games):  # seats alternate: the pair's score averages both
        first = i % 2
        ref = play_game(Referee(2, rules=table, target=target, dice=dice, first_seat=first),
                        [pa, pb])
        top = ref.winners()
        score += (1.0 if top == [0] else 0.5 if len(top) == 2 else 0.0)
    mean = score / games
    se = (mean * (1 - mean) / games) ** 0.5
    assert abs(mean - exact.score) < 4 * se, (mean, exact.score, se)


# --- what the referee refuses -----------------------------------------------------------------

class Illegal:
    name = "illegal"

    def __init__(self, move):
        self.move = move

    def decide(self, state):
        return self.move(state)


def one_game(policy, faces, rules=DEFAULT, target=1000):
    return play_game(Referee(1, rules=rules, target=target, dice=ScriptedDice(faces)),
                     [policy])


def test_an_illegal_set_aside_names_the_state_and_the_move():
    with pytest.raises(UserError) as e:
        one_game(Illegal(lambda s: Move((2, 3), False)), [1, 2, 3, 4, 6, 6])
    msg = str(e.value)
    assert "policy illegal answered Move(keep=(2, 3), bank=False)" in msg
    assert "roll [1, 2, 3, 4, 6, 6], turn points 0, totals [0]" in msg
    assert "[2, 3] is not a legal set-aside" in msg


@pytest.mark.parametrize("answer", [None, "bank", (1,), ((1,), "yes"), Move((), True)])
def test_answers_that_are_no_move_are_refused(answer):
    with pytest.raises(UserError, match=r"answered|not a legal"):
        one_game(Illegal(lambda s: answer), [1, 2, 3, 4, 6, 6])


@pytest.mark.parametrize("keep", [(1.9,), (1.0,), (True,), (np.float64(1),), ("1",)])
def test_dice_that_are_not_whole_numbers_are_refused(keep):
    """1.9 was read as a 1, and True too: a set-aside is faces of the roll."""
    with pytest.raises(UserError, match=r"faces of the roll \(whole numbers 1 to 6\)"):
        one_game(Illegal(lambda s: Move(keep, False)), [1, 2, 3, 4, 6, 6])


@pytest.mark.parametrize("keep", [(1,), [1], (np.int64(1),), (np.int8(1),)])
def test_whole_numbers_of_any_integer_type_and_sequence_are_faces(keep):
    ref = one_game(Illegal(lambda s: Move(keep, True)), [1, 2, 3, 4, 6, 6], target=100)
    assert ref.totals == [100] and ref.phase == "over"


def test_a_bank_the_rules_forbid_is_refused():
    # 100 points where 200 are needed, then hot dice that must roll
    with pytest.raises(UserError, match="at least 200 turn points"):
        one_game(Illegal(lambda s: Move((1,), True)), [1, 2, 3, 4, 6, 6], MUST_ROLL)
    with pytest.raises(UserError, match="hot dice must roll"):
        one_game(Illegal(lambda s: Move(s.roll, True)), [1, 2, 3, 4, 5, 6], MUST_ROLL)
    # the neighbour that is allowed: 200 points with dice left
    ref = one_game(Illegal(lambda s: Move((1, 1), True)), [1, 1, 2, 3, 4, 6], MUST_ROLL, 200)
    assert ref.totals == [200] and ref.phase == "over"


def test_a_policy_that_raises_shows_its_own_frames_and_the_state():
    def broken(state):
        return {}["no such key"]

    with pytest.raises(UserError) as e:
        one_game(Illegal(broken), [5, 2, 3, 4, 6, 6])
    msg = str(e.value)
    assert msg.startswith("policy illegal at seat 0: roll [2, 3, 4, 5, 6, 6]")
    assert "KeyError" in msg and "test_referee.py" in msg and "in broken" in msg
    assert "referee.py" not in msg.replace("test_referee.py", "")


def test_penalty_events_and_turn_records():
    faces = [2, 3, 4, 6, 2, 3] * 3 + [1, 1, 1, 2, 3, 4]
    ref = Referee(1, rules=PRESETS["facebook"], target=500, dice=ScriptedDice(faces),
                  record=True)
    play_game(ref, [as_policy("threshold-300", PRESETS["facebook"], 500)])
    assert ref.totals == [500] and ref.phase == "over"  # -500, then 1000
    kinds = [k for k, _, _ in ref.events]
    assert kinds.count("bust") == 3 and kinds.count("penalty") == 1
    assert kinds[-2:] == ["bank", "game-over"]
    assert ref.turns[0] == {"seat": 0, "rolls": [[2, 3, 4, 6, 2, 3]], "keeps": [],
                            "end": "bust"}
    assert ref.turns[-1] == {"seat": 0, "rolls": [[1, 1, 1, 2, 3, 4]], "keeps": [[1, 1, 1]],
                             "end": "bank"}


def test_a_game_past_the_kernels_cap_on_rounds_is_capped(monkeypatch):
    monkeypatch.setattr(referee_module, "MAX_ROUNDS", 3)
    never = Illegal(lambda s: Move(max(s.options(), key=lambda o: len(o.keep)).keep, False))
    ref = play_game(Referee(2, rules=DEFAULT, target=1000,
                            dice=GeneratorDice(np.random.default_rng(1))), [never, never])
    assert ref.capped and ref.phase == "over" and len(ref.turns) == 6


def test_as_policy_takes_names_specs_tables_and_objects():
    assert as_policy("threshold-300", DEFAULT, 1000).name == "threshold-300"
    assert as_policy(parse_policy("ai:base=400"), DEFAULT, 1000).name == "ai:base=400"
    obj = Illegal(lambda s: None)
    assert as_policy(obj, DEFAULT, 1000) is obj
    assert not tabulable(obj) and tabulable(parse_policy("ai"))
    with pytest.raises(UserError, match="not a Farkle policy"):
        as_policy(42, DEFAULT, 1000)
    with pytest.raises(UserError, match="penta policy"):
        as_policy(parse_policy("greedy"), DEFAULT, 1000)


# --- the referee at the table: play farkle -----------------------------------------------------

POLICY_FILE = '''
from dicelab.farkle.policy import Move, all_scoring

def steady(state):
    o = all_scoring(state)
    return Move(o.keep, state.turn_points + o.points >= 300 and state.can_bank(o))

def cheat(state):
    return Move(state.roll, True)
'''


def test_a_users_policy_is_the_computer_opponent_and_plays_as_its_copy_does(tmp_path):
    from dicelab.play import Player
    from dicelab.play.farkle import FarkleGame

    f = tmp_path / "mine.py"
    f.write_text(POLICY_FILE)
    user = parse_policy(f"{f}:steady", "farkle")
    assert user.family == "user" and not tabulable(user)
    rnd = random.Random(3)
    for game in range(4):
        faces = [rnd.randint(1, 6) for _ in range(6000)]
        g = FarkleGame([Player("me", user), Player("ai", parse_policy("ai"))], target=2000,
                       dice=ScriptedDice(faces), first_seat=game % 2)
        g.start()
        while g.phase != "over":
            g.step()
        # the user's copy of threshold-300 plays as the kernel's threshold-300
        totals, used, _ = kernel_game([parse_policy("threshold-300"), parse_policy("ai")],
                                      faces, 2000, DEFAULT, game % 2)
        assert (g.totals, g.dice.pos) == (totals, used)
        assert [e.kind for e in g.take_events()][-1] == "game-over"


def test_play_farkle_with_a_users_policy_at_the_terminal(tmp_path, capsys, monkeypatch):
    import io

    from cli_helpers import run_cli

    f = tmp_path / "mine.py"
    f.write_text(POLICY_FILE)
    keys = ["1", "5", "r", "b", "1 1 1", "5 5 5", "b"] * 60
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in keys)))
    code, out, err = run_cli(capsys, ["play", "farkle", "--ai", f"{f}:steady", "--seed", "3",
                                      "--target", "1000"])
    # without white space: a long temporary path wraps, or folds, at the page's width
    assert code == 0 and err == "" and f"Computer({f}:steady)" in "".join(out.split()), out
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in keys)))
    code, out, err = run_cli(capsys, ["play", "farkle", "--ai", f"{f}:cheat", "--seed", "3",
                                      "--target", "1000", "--humans", "1"])
    assert code == 2 and err.startswith("error: policy") and "cheat" in err


def test_simulate_log_of_a_users_policy_then_analyse(tmp_path, capsys):
    import json

    from cli_helpers import run_cli

    from dicelab.gamelog import read_games

    f = tmp_path / "mine.py"
    f.write_text(POLICY_FILE)
    log = tmp_path / "games.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", f"{f}:steady", "--vs", "fastest", "-n",
                                    "200", "--seed", "2", "--target", "1000", "--log",
                                    str(log), "--log-games", "4"])
    assert code == 0, err
    games = read_games(log)  # the log replays to its results
    assert len(games) == 4 and games[0].seats[0]["policy"].endswith("mine.py:steady")
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json"])
    assert code == 0, err
    players = json.loads(out)["players"]
    assert [p["policy"] for p in players][1] == "fastest" and players[0]["decisions"] > 0


@pytest.mark.parametrize(("names", "rules", "ending"), [
    (["ai", "threshold-300"], "facebook", None),  # first to bank, the penalty, 300 to bank
    (["threshold-250", "ai", "threshold-400"], "zilch", None),
    (["ai", "threshold-350"], "default", "first-to-bank"),
    (["threshold-200", "ai"], "must-roll", None),
])
def test_a_referee_games_log_replays_to_the_kernels_totals(names, rules, ending):
    import json

    from dicelab.gamelog import new_game_header, parse_lines

    table = MUST_ROLL if rules == "must-roll" else load_rules(rules, ending)
    specs = [parse_policy(p) for p in names]
    policies = [as_policy(s, table, 1500, len(specs)) for s in specs]
    seats = [{"name": f"seat {i}", "policy": s.name} for i, s in enumerate(specs)]
    rnd = random.Random(rules)
    for game in range(4):
        faces = [rnd.randint(1, 6) for _ in range(8000)]
        first = game % len(names)
        ref = play_game(Referee(len(names), rules=table, target=1500,
                                dice=ScriptedDice(faces), first_seat=first), policies)
        header = new_game_header("farkle", table, seats, target=1500, ending=table.ending,
                                 first_seat=first)
        rec = parse_lines([json.dumps(x) for x in [header, *ref.turns]])[0]
        assert rec.finished and rec.totals == kernel_game(specs, faces, 1500, table,
                                                          first)[0]


def test_turns_lost_on_their_first_roll_follow_each_other_without_end():
    # 10,000 turns in a row that score nothing: the game reaches the kernel's cap on
    # rounds (a loop, never a recursion)
    faces = [2, 3, 4, 6, 2, 3] * 10_000
    p = as_policy("threshold-300", DEFAULT, 1000)
    ref = play_game(Referee(2, rules=DEFAULT, target=1000, dice=ScriptedDice(faces)), [p, p])
    assert ref.capped and ref.totals == [0, 0] and len(ref.turns) == config.MAX_ROUNDS * 2
