"""Policies users write (dicelab.farkle.policy, dicelab.user_policy): a copy of a built-in
policy plays and scores as the built-in does, bit for bit and exactly; a bank rule's own
decisions (the referee's) are what its tables say; the best response to a user's rule
against plain value iteration; every bad policy file or name gets one honest error."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import textwrap

import naive_farkle as nf
import naive_two_player as naive
import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab.errors import UserError
from dicelab.farkle import fixed
from dicelab.farkle import kernels as K
from dicelab.farkle.exact import exact_pair, solve_best_response
from dicelab.farkle.policies import seat_of
from dicelab.farkle.policy import BankRule, Move, State, bank_rule
from dicelab.farkle.rules import POINT_UNIT, PRESETS
from dicelab.farkle.simulate import simulate_farkle
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]
FACEBOOK = PRESETS["facebook"]
#: facebook's table and banking under a small penalty: the same penalty engine, fewer totals
FACEBOOK_SMALL = dataclasses.replace(FACEBOOK, name="fb-100", farkle_penalty=100)
EXAMPLES = "docs/examples/policies/farkle_rules.py"


@bank_rule(last_round="rule")
def t300(my, opp, tp, n):
    return tp >= 300


@bank_rule
def ai_copy(my, opp, tp, n, *, base=300, step=100, per=1000, max_steps=5, two=50, one=100):
    thr = base + step * min(max_steps, max(opp - my, 0) // per)
    if n == 2:
        thr -= two
    elif n == 1:
        thr -= one
    return tp >= thr


def _numbers(pair) -> list[float]:
    return [pair.first.win, pair.first.tie, pair.second.win, pair.second.tie]


@pytest.mark.parametrize(("rules", "target"), [(DEFAULT, 1000), (FACEBOOK_SMALL, 400)],
                         ids=["default", "facebook"])
def test_copies_of_built_in_policies_have_their_exact_values(rules, target, monkeypatch):
    """(Under the penalty, totals down to two penalties below zero, the smallest floor.)"""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    for copy, built_in in ((t300, "threshold-300"), (ai_copy, "ai")):
        for other in ("ai", "max-ev"):
            mine = exact_pair(copy, other, rules=rules, target=target, use_cache=False)
            theirs = exact_pair(built_in, other, rules=rules, target=target, use_cache=False)
            # the same numbers; under the penalty the engine may add a turn's endings in
            # another order (other padding rows): a difference in the last bits at most
            np.testing.assert_allclose(_numbers(mine), _numbers(theirs), rtol=1e-13, atol=0,
                                       err_msg=str((copy, other)))
            if rules is DEFAULT:
                assert mine.first == theirs.first and mine.second == theirs.second


@pytest.mark.parametrize("rules", [DEFAULT, FACEBOOK], ids=["default", "facebook"])
def test_copies_of_built_in_policies_play_the_same_games_bit_for_bit(rules):
    """The general kernel plays both (a seat that is not a threshold, or a random
    stream per turn: all-threshold seats otherwise go to the lanes kernel, another
    random-stream layout)."""
    runs = [([t300, "ai"], ["threshold-300", "ai"], K.STREAM_PER_CHUNK),
            ([ai_copy, t300], ["ai", "threshold-300"], K.STREAM_PER_CHUNK),
            ([t300], ["threshold-300"], K.STREAM_PER_TURN)]
    for mine, theirs, streams in runs:
        a = simulate_farkle([parse_policy(p) if isinstance(p, str) else p for p in mine],
                            games=4000, seed=11, target=2000, rules=rules, streams=streams)
        b = simulate_farkle([parse_policy(p) for p in theirs], games=4000, seed=11,
                            target=2000, rules=rules, streams=streams)
        assert a.kernel == b.kernel == "general"
        np.testing.assert_array_equal(a.stats, b.stats)
        np.testing.assert_array_equal(a.hist, b.hist)


def _kernel_bank(rule: BankRule, table, s: State, tp: int, n: int) -> bool:
    """What the simulation kernel banks with this table (policy_table's docstring)."""
    leader = s.opp_total
    _, bank = table.normal(0, 0, s.my_total, leader)
    says = bank[min(tp // POINT_UNIT, bank.shape[0] - 1), n] != 0
    if s.last_round and table.last_round != "rule":
        beats = s.my_total + tp > leader
        says = beats if table.last_round == "chase" else says and beats
    return bool(says and s.rules.can_bank(tp, n))


@pytest.mark.parametrize("last_round", ["rule-to-beat", "rule", "chase"])
def test_a_bank_rule_decides_as_its_table_says(last_round):
    """The referee's answer (decide) against the table the kernel plays, at random
    states of both rounds, the opponent's total past the target in the last round."""
    @bank_rule(last_round=last_round)
    def behind(my, opp, tp, n, *, base=300):
        return tp >= base + (200 if opp - my > 500 else 0) - (50 if n <= 2 else 0)

    target = 2000
    table = seat_of(behind, DEFAULT, target)
    rng = np.random.default_rng(5)
    roll = (1, 5, 2, 3, 4, 6)
    for _ in range(3000):
        last = bool(rng.integers(2))
        my = int(rng.integers(0, target // 50)) * 50
        opp = int(rng.integers(target // 50, 3 * target // 50) if last
                  else rng.integers(0, target // 50)) * 50
        tp = int(rng.integers(0, 60)) * 50
        s = State(roll, tp, 0, (my, opp), (0, 0), last, target, DEFAULT)
        move = behind.decide(s)
        option = next(o for o in s.options() if o.keep == move.keep)
        assert option == max(s.options(), key=lambda o: (len(o.keep), o.points))
        assert move.bank == _kernel_bank(behind, table, s, tp + option.points,
                                         option.dice_left), (s, move)


@pytest.mark.parametrize("last_round", ["rule-to-beat", "rule"])
def test_a_max_ev_set_aside_rule_sets_aside_as_its_table_says(last_round):
    """With max-ev's set-asides a set-aside lands on rows past where the rule banks (250
    + a straight): the kernel's table must still tell those rows apart, as the referee
    (max-ev's whole table) does; the exact engine and the simulation then agree."""
    @bank_rule(setaside="max-ev", last_round=last_round)
    def sets(my, opp, tp, n, *, base=300):
        return tp >= base

    target = 1000
    table = seat_of(sets, DEFAULT, target)
    for tp in range(0, 300, 50):
        for roll in itertools.product(range(1, 7), repeat=3):
            roll = (1, 5, *roll)
            s = State(roll, tp, 0, (0, 0), (0, 0), False, target, DEFAULT)
            value, _ = table.normal(0, 0, 0, 0)
            kernel = max(s.options(), key=lambda o: (  # the first strict maximum
                float(value[min((tp + o.points) // POINT_UNIT, value.shape[0] - 1),
                            o.dice_left]), o.points, o.dice_left))
            assert sets.choose(s).points == kernel.points, (tp, roll)
    # the engine's turn from 0 : 0 against the referee's choices, every roll enumerated
    grid = fixed.grid_of(DEFAULT, target, fixed.lead_rows([sets], DEFAULT, target))
    side = fixed.turn_outcomes(fixed.policy_slices(sets, grid, DEFAULT), DEFAULT)
    start = side.dist[side.normal[0, 0, 0, 0]]
    engine = float((start * np.arange(start.size)).sum()) * POINT_UNIT

    @functools.cache
    def plain(tp: int, n: int) -> float:
        if tp >= 300:
            return float(tp)
        return sum(p * plain(tp + o.points, o.dice_left)
                   for roll, p in nf.roll_distribution(n).items()
                   if (s := State(roll, tp, 0, (0, 0), (0, 0), False, target, DEFAULT)
                       ).options() for o in [sets.choose(s)])

    assert engine == pytest.approx(plain(0, 6), rel=1e-12)
    exact = exact_pair(sets, "ai", target=target, use_cache=False)
    res = simulate_farkle([sets, parse_policy("ai")], games=40_000, seed=4, target=target)
    seat = res.seat(0)
    score = (seat.wins + 0.5 * seat.ties) / res.games
    se = np.sqrt(max((seat.wins + 0.25 * seat.ties) / res.games - score**2, 0.0) / res.games)
    assert abs(score - exact.score) <= 4 * se, (score, exact.score, se)


def test_best_response_to_a_user_rule_matches_plain_value_iteration():
    """A rule that banks by the dice left, under first-to-bank: the engine's best
    response against value iteration over every state and every legal set-aside; no
    other policy does better against the rule, in either seat."""
    rules = dataclasses.replace(DEFAULT, name="default-ftb", ending="first-to-bank")
    target = 800

    @bank_rule
    def by_dice(my, opp, tp, n, *, low=250, high=600):
        return tp >= (high if n >= 3 else low)

    ref = naive.solve(rules, target, None, opponent=nf.rule_turn_distribution(
        rules, lambda tp, n: tp >= target or tp >= (600 if n >= 3 else 250)))
    br = solve_best_response(rules, target, by_dice, use_cache=False)
    np.testing.assert_allclose(br.values, ref.value, rtol=0, atol=1e-9)
    assert br.first_outcome.win == pytest.approx(ref.win[0, 0], abs=1e-9)
    played = exact_pair(br.policy_table(), by_dice, rules=rules, target=target,
                        use_cache=False)
    for other in ("optimal-win", "ai", "max-ev", "threshold-350", t300):
        q = exact_pair(other, by_dice, rules=rules, target=target)
        assert q.first.score <= played.first.score + 1e-9, other
        assert q.second.score <= played.second.score + 1e-9, other


def test_a_best_response_to_a_user_rule_is_cached_by_what_the_rule_decides():
    """The best response to a user's rule is cached under the rule's name and a digest of
    its turns: the same rule again is loaded with the same values; a rule of the same name
    that decides otherwise is solved anew, and so is the same rule under other rules. An
    exact pair with a user's rule or a table likewise."""
    rules = dataclasses.replace(DEFAULT, name="default-ftb", ending="first-to-bank")

    def rule(low):
        @bank_rule
        def mine(my, opp, tp, n):
            return tp >= (600 if n >= 3 else low)
        return mine

    first = solve_best_response(rules, 600, rule(250))
    again = solve_best_response(rules, 600, rule(250))
    other = solve_best_response(rules, 600, rule(300))
    assert not first.from_cache and again.from_cache and not other.from_cache
    assert again.policy == other.policy == first.policy == "optimal-win:vs=mine"
    np.testing.assert_array_equal(again.values, first.values)
    assert other.first_outcome.win != first.first_outcome.win
    assert not solve_best_response(DEFAULT, 600, rule(250)).from_cache
    fresh = solve_best_response(rules, 600, rule(250), use_cache=False)
    assert not fresh.from_cache and fresh.first_outcome == first.first_outcome
    # so is an exact pair with a user's rule or a table, in either seat
    pair = exact_pair(rule(250), "ai", rules=rules, target=600)
    assert exact_pair(rule(250), "ai", rules=rules, target=600).from_cache
    assert not pair.from_cache and pair.first.win != exact_pair(
        rule(300), "ai", rules=rules, target=600).first.win
    table = first.policy_table()
    back = exact_pair("ai", table, rules=rules, target=600)
    again = exact_pair("ai", table, rules=rules, target=600)
    assert not back.from_cache and again.from_cache and again.first == back.first
    assert not exact_pair("ai", other.policy_table(), rules=rules, target=600).from_cache


def test_the_endings_of_a_tables_slices_are_cached_by_the_slices(monkeypatch):
    """The endings of a policy table's many slices are kept in the table cache under a
    digest of the slices: read back equal to the forward pass, and another table's are its
    own. (Small slice sets are followed again: the limit lowered here.)"""
    from dicelab import cache
    from dicelab.farkle.builtin import resolve
    from dicelab.farkle.solitaire import endings

    rules = dataclasses.replace(DEFAULT, name="default-ftb", ending="first-to-bank")
    grid = fixed.grid_of(rules, 600, 30)
    tables = [solve_best_response(rules, 600, t).policy_table()
              for t in ("threshold-300", "threshold-500")]
    monkeypatch.setattr(fixed, "CACHED_SLICES", 1)

    def stored() -> set[str]:
        return {f.key for f in cache.scan().entries if f.key.startswith("farkle-turn-endings")}

    for table in tables:
        slices = fixed.policy_slices(resolve(table, rules, 600), grid, rules)
        want = endings(rules, slices.bank, slices.value)[:2]
        before = stored()
        for _ in range(2):  # the forward pass, then the cache
            got = fixed.slice_endings(slices, rules)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
        assert len(stored() - before) == 1
    assert len(stored()) == 2


def test_monte_carlo_of_a_user_rule_agrees_with_its_exact_score():
    spec = parse_policy(f"{EXAMPLES}:cautious:big=800")
    exact = exact_pair(spec, "ai", target=1500, use_cache=False)
    res = simulate_farkle([spec, parse_policy("ai")], games=40_000, seed=3, target=1500)
    s = res.seat(0)
    score = (s.wins + 0.5 * s.ties) / res.games
    se = np.sqrt(max((s.wins + 0.25 * s.ties) / res.games - score**2, 0.0) / res.games)
    assert abs(score - exact.score) <= 4 * se, (score, exact.score, se)


def test_parameters_by_name_and_their_errors():
    spec = parse_policy(f"{EXAMPLES}:cautious:big=800,base=300")
    assert spec.family == "user" and spec.params == {"base": 300, "big": 800}
    assert spec.name.endswith("cautious:base=300,big=800")
    for bad, says in ((":cautious:bog=1", "unknown parameter 'bog'"),
                      (":cautious:big=1.5", "not an integer"),
                      (":cautious:big=", "key=value"),
                      (":cautious:big=1,big=2", "given twice"),
                      (":cautious:big=800,", "an empty parameter"),
                      (":cautious:,big=800", "an empty parameter"),
                      (":cautious:=800", "key=value"),
                      (":threshold_300:x=1", "unknown parameter"),
                      (":nothing", "has no 'nothing'")):
        with pytest.raises(UserError, match=says) as refused:
            parse_policy(EXAMPLES + bad)
        if bad != ":nothing":  # which policy: a command may name several
            assert str(refused.value).startswith(f"policy '{EXAMPLES}{bad}': ")


def test_a_missing_name_is_answered_with_the_close_ones_and_how_many_names_there_are(
        capsys, tmp_path):
    """A file of many policies: the one misspelled is suggested, and the list of what the
    file defines says how many it leaves out (it is cut at twelve)."""
    names = [f"rule_{c}" for c in "abcdefghijklmnop"] + ["zeta_bank"]
    (tmp_path / "many.py").write_text("".join(f"def {n}(my, opp, tp, n):\n    return True\n"
                                              for n in names))
    code, out, err = run_cli(capsys, ["simulate", "-s", f"{tmp_path}/many.py:zeta_bnak",
                                      "-n", "10"])
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "has no 'zeta_bnak' (did you mean 'zeta_bank'? it defines: rule_a, " in err
    assert err.rstrip().endswith("rule_l and 5 more)")


@pytest.mark.parametrize("compiled", [False, True])
def test_a_bank_rule_is_asked_only_at_states_a_turn_reaches(capsys, tmp_path, compiled):
    """A rule that divides by the turn points, or asserts they are positive, is never
    asked at 0 turn points (no turn banks before it sets dice aside); it plays, and is
    tabulated, as any rule."""
    head = "import numba\n@numba.njit\n" if compiled else ""
    (tmp_path / "share.py").write_text(
        f"{head}def share(my, opp, turn_points, dice_left):\n"
        "    return (opp - my) / turn_points < 5 and turn_points >= 300\n"
        "def positive(my, opp, turn_points, dice_left):\n"
        "    assert turn_points > 0\n"
        "    return turn_points >= 300\n")
    for name in ("share", "positive"):
        rule = f"{tmp_path}/share.py:{name}"
        code, _, err = run_cli(capsys, ["compare", rule, "threshold-300", "--exact",
                                        "--target", "1000", "--json"])
        assert code == 0, err
        code, _, err = run_cli(capsys, ["simulate", "-s", rule, "--vs", "ai", "-n", "200",
                                        "--seed", "1", "--target", "1000"])
        assert code == 0, err


def test_plain_functions_are_bank_rules_and_the_referee_allows_only_legal_banks():
    def plain(my, opp, tp, n):
        return True

    rule = BankRule(plain)
    s = State((1, 1, 1, 2, 3, 4), 0, 0, (0, 0), (0, 0), False, 1000,
              PRESETS["facebook"])  # facebook: no bank below 500... if it has a minimum
    move = rule.decide(s)
    assert move == Move((1, 1, 1), s.rules.can_bank(1000, 3))


def test_a_numba_rule_compiled_for_other_types_too_fills_its_grid_compiled(monkeypatch):
    """Only the types the grid asks it with count: a float signature answering floats,
    compiled before, does not send the rule to the plain (one call a state) loop."""
    import numba

    @numba.njit
    def rule(my, opp, tp, n):
        return tp * 0 + (tp >= 300)  # an integer for integers, a float for floats

    assert rule(1.0, 2.0, 300.0, 4.0) == 1.0
    asked = []
    monkeypatch.setattr(BankRule, "wants_bank", lambda self, *a: asked.append(a))
    totals = np.arange(0, 500, POINT_UNIT)
    grid = BankRule(rule).bank_grid(totals, totals, 500)
    assert not asked
    assert (grid[:, :, :6, 1:] == 0).all() and (grid[:, :, 6:, 1:] == 1).all()


_AT_ONE_STATE = """\
def rule(my, opp, tp, n):
    if my == 650 and opp == 350 and tp == 450 and n == 2:
        {}
    return tp >= 300
"""

def _falls_through(my, opp, tp, n):  # numba: an optional bool, never None here
    if tp >= 300 + (my > opp) * 100:
        return True
    elif tp < 300 + (my > opp) * 100:
        return False


def _zero_or_one(my, opp, tp, n):
    return 1 if tp >= 350 or n == 1 else 0


@pytest.mark.parametrize("function", [_falls_through, _zero_or_one])
def test_a_compiled_rule_answering_0_1_or_an_optional_bool_has_the_plain_rules_grid(
        function):
    rule = BankRule(function)
    totals = np.arange(0, 1000, POINT_UNIT)
    grid = rule.bank_grid(totals, totals, 1000)
    plain = np.zeros_like(grid)  # row 0 (no turn banks before a set-aside) rolls, unasked
    for (i, my), (j, opp), p, n in itertools.product(enumerate(totals), enumerate(totals),
                                                     range(1, grid.shape[2] - 1), range(1, 7)):
        plain[i, j, p, n] = bool(function(int(my), int(opp), p * POINT_UNIT, n))
    plain[:, :, -1, 1:] = 1
    np.testing.assert_array_equal(grid, plain)


BAD_FILES = {
    "wrong_signature.py": ("def rule(my, opp):\n    return True\n",
                           "rule", "must take (my, opp, turn_points, dice_left)"),
    "raises_on_import.py": ("import math\nx = 1 / 0\n", "rule", "ZeroDivisionError"),
    "raises_in_rule.py": ("def rule(my, opp, tp, n):\n    return {}['x']\n", "rule",
                          "KeyError"),
    "not_bool.py": ("def rule(my, opp, tp, n):\n    return 'yes'\n", "rule",
                    "must return True or False"),
    "not_a_policy.py": ("rule = 42\n", "rule", "is an int"),
    # a rule numba compiles, wrong at one state only: the compiled grid finds it
    "raises_at_one_state.py": (_AT_ONE_STATE.format("raise ValueError('here')"), "rule",
                               "(650, 350, 450, 2): ValueError: here"),
    "divides_by_zero_at_one_state.py": (_AT_ONE_STATE.format("return 1 // (n - 2) > 0"),
                                        "rule", "(650, 350, 450, 2): ZeroDivisionError"),
    "none_at_one_state.py": (_AT_ONE_STATE.format("return None"), "rule",
                             "returned None at (my, opp, turn_points, dice_left) = "
                             "(650, 350, 450, 2): it must return True or False"),
    "two_at_one_state.py": (_AT_ONE_STATE.format("return 2"), "rule",
                            "returned 2 at (my, opp, turn_points, dice_left) = "
                            "(650, 350, 450, 2)"),
    "half_at_one_state.py": (_AT_ONE_STATE.format("return 0.5"), "rule",
                             "returned 0.5 at (my, opp, turn_points, dice_left) = "
                             "(650, 350, 450, 2)"),
    "exits_in_rule.py": ("import sys\ndef rule(my, opp, tp, n):\n    sys.exit(0)\n", "rule",
                         "SystemExit: 0"),
    "exits_in_decide.py": ("import sys\ndef rule(state):\n    sys.exit('bye')\n", "rule",
                           "SystemExit: bye"),
    "exits_when_made.py": ("import sys\nclass Rule:\n    name = 'r'\n"
                           "    def __init__(self):\n        sys.exit(3)\n"
                           "    def decide(self, state):\n        pass\n", "Rule",
                           "making a Rule failed: SystemExit: 3"),
    "recurses.py": ("def rule(my, opp, tp, n):\n    return rule(my, opp, tp, n)\n", "rule",
                    "RecursionError"),
}
_RAISES = ("raises_on_import.py", "raises_in_rule.py", "raises_at_one_state.py",
           "divides_by_zero_at_one_state.py", "exits_in_rule.py", "exits_in_decide.py",
           "exits_when_made.py", "recurses.py")


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_policy_file_is_one_error_and_exit_2(tmp_path, capsys, name):
    text, obj, says = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(text)
    out = tmp_path / "out.json"
    code, _, err = run_cli(capsys, ["simulate", "-s", f"{path}:{obj}", "--games", "100",
                                         "--json", "--out", str(out)])
    assert code == 2, err
    assert err.startswith("error: ") and says in err, err
    assert "Traceback" not in err and not out.exists()
    if name in _RAISES:  # the user's own frames, a frame repeated counted
        assert f"{path}:" in err and "dicelab/" not in err.split("\n", 1)[1]
        assert len(err.splitlines()) <= 4, err
    if name == "recurses.py":
        assert err.splitlines()[2].startswith("  [the line above "), err
    if name == "not_a_policy.py":  # named as given, its file with it
        assert err.startswith(f"error: '{path}:{obj}' is an int; "), err


@pytest.mark.parametrize(("ref", "says"), [
    ("no_such_file.py:rule", "does not exist"),
    ("no_such_module_xyz:rule", "no module named 'no_such_module_xyz'"),
    ("dicelab.registry:GAMES", "is a tuple"),
    ("policies.py", "unknown policy 'policies.py': a policy in a file is named FILE.py:NAME"),
    ("policies.py:", "a policy in a file is named FILE.py:NAME"),
    ("policies.py:1x", "a policy in a file is named FILE.py:NAME"),
    ("policies.pyx", "valid policies are"),
    ("dir/policies:rule", "a policy in a file is named FILE.py:NAME"),
    ("dir/policies.txt:rule", "a policy in a file is named FILE.py:NAME"),
    ("dir/policies", "a policy in a file is named FILE.py:NAME"),
    ("thresh", "valid policies are"),
])
def test_a_missing_policy_is_one_error(capsys, ref, says):
    code, _, err = run_cli(capsys, ["simulate", "-s", ref, "--games", "100"])
    assert code == 2 and err.startswith("error: ") and says in err, err


@pytest.fixture
def naming_dir(tmp_path, monkeypatch):
    """A working directory with my.py (a bank rule with a parameter), pkgdir/ (a
    directory, no package), pkg/ (a package defining rule) and a:b/my.py (a ':' in the
    path)."""
    rule = "def rule(my, opp, tp, n, *, base=300):\n    return tp >= base\n"
    (tmp_path / "my.py").write_text(rule)
    (tmp_path / "pkgdir").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(rule)
    (tmp_path / "a:b").mkdir()
    (tmp_path / "a:b" / "my.py").write_text(rule)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("ref", "says"), [
    ("my.py:", "unknown policy 'my.py:': a name is missing after the colon"),
    ("my.py::", "a name is missing after the colon"),
    ("nodir/x.py:", "a name is missing after the colon"),
    ("json:", "a name is missing after the colon"),
    ("optimal-win:vs=my.py:", "the opponent: unknown policy 'my.py:': a name is missing"),
    ("my.py:rule:", "policy 'my.py:rule:': nothing after the last ':'"),
    ("pkgdir:rule", "pkgdir is a directory"),
    ("pkgdir/:rule", "pkgdir/ is a directory, not a .py file"),
    ("pkgdir/", "pkgdir/ is a directory, not a .py file"),
    ("a:c/my.py:rule", "policy file a:c/my.py does not exist"),
])
@pytest.mark.parametrize("importable", [False, True], ids=["cwd", "on-sys-path"])
def test_a_name_cut_short_or_of_a_directory_is_one_error(capsys, naming_dir, monkeypatch,
                                                         ref, says, importable):
    """(My.py: was refused as any unknown name, my.py:rule: taken silently, pkgdir:rule
    said the directory defines nothing, a path with ':' could not be named.) With the
    directory on sys.path too, where pkgdir imports as a namespace package."""
    if importable:
        monkeypatch.syspath_prepend(str(naming_dir))
    out = naming_dir / "out"
    code, text, err = run_cli(capsys, ["simulate", "-s", ref, "-n", "10", "--target", "300",
                                       "--out", str(out)])
    assert code == 2 and not text and not out.exists(), err
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err


def test_the_neighbours_of_a_name_cut_short_load(capsys, naming_dir, monkeypatch):
    """A path with ':' in it to a file that exists, with parameters, relative or absolute;
    a package defining the name; the plain names beside them."""
    from dicelab.results import policy_code

    for ref, params in [("a:b/my.py:rule", {"base": 300}),
                        (f"{naming_dir}/a:b/my.py:rule:base=350", {"base": 350}),
                        ("my.py:rule:base=400", {"base": 400}),
                        ("my.py:rule", {"base": 300})]:
        spec = parse_policy(ref)
        assert spec.family == "user" and spec.name == ref and spec.params == params, ref
    monkeypatch.syspath_prepend(str(naming_dir))
    assert parse_policy("pkg:rule").name == "pkg:rule"
    assert policy_code(["optimal-win:vs=a:b/my.py:rule"]) == {
        "a:b/my.py:rule": policy_code(["my.py:rule"])["my.py:rule"]}


def test_a_path_with_a_colon_plays_and_is_recorded(capsys, naming_dir):
    (naming_dir / "a:b" / "my.py").write_text("def rule(my, opp, tp, n):\n"
                                              "    return tp >= 300\n")
    code, _, err = run_cli(capsys, ["simulate", "-s", "a:b/my.py:rule", "--vs",
                                    "threshold-300", "-n", "10", "--seed", "1", "--target",
                                    "300", "--out", "run"])
    assert code == 0, err
    manifest = json.loads((naming_dir / "run" / "manifest.json").read_text())
    assert set(manifest["policy_code"]) == {"a:b/my.py:rule"}


def test_a_policy_named_in_another_script_loads(tmp_path):
    """Any Python name: a letter of any script first (not only A-Z), not a digit."""
    path = tmp_path / "règles.py"
    path.write_text("def élan(my, opp, tp, n, *, base=300):\n    return tp >= base\n")
    spec = parse_policy(f"{path}:élan:base=350")
    assert spec.name == f"{path}:élan:base=350" and spec.params == {"base": 350}
    with pytest.raises(UserError, match=r"a policy in a file is named FILE\.py:NAME"):
        parse_policy(f"{path}:1élan")


def test_a_policy_from_an_importable_module(tmp_path, monkeypatch, capsys):
    (tmp_path / "mypolicies.py").write_text(textwrap.dedent("""
        def steady(my, opp, turn_points, dice_left, base=400):
            return turn_points >= base
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = run_cli(capsys, ["simulate", "-s", "mypolicies:steady:base=350",
                                      "--games", "2000", "--seed", "1", "--target", "2000",
                                      "--json"])
    assert code == 0, err
    assert "mypolicies:steady:base=350" in out


def test_evaluate_reports_exact_numbers_a_plain_reference_agrees_with(capsys, tmp_path):
    """threshold-300 written by a user: its points per turn and turns to the target
    against the plain-Python turn distribution; its scores against the exact pairs; the
    best response takes at least what optimal-win takes; the report's files."""
    import json

    target = 500
    out = tmp_path / "card"
    code, stdout, err = run_cli(capsys, ["evaluate", f"{EXAMPLES}:threshold_300", "--target",
                                         str(target), "--json", "--out", str(out)])
    assert code == 0, err
    card = json.loads(stdout)
    dist = nf.threshold_turn_distribution(DEFAULT, 300)
    assert card["points_per_turn"] == pytest.approx(sum(g * p for g, p in dist.items()),
                                                    rel=1e-12)
    assert card["turns_to_target"] == pytest.approx(
        nf.expected_turns_to_target(dist, target), rel=1e-9)
    vs_ai = exact_pair("threshold-300", "ai", target=target)
    assert card["vs_ai"]["score"] == pytest.approx(vs_ai.score, abs=1e-12)
    assert card["exploitability"] >= card["optimal_win_take"] - 1e-12 > 0
    assert card["bank_thresholds"] == {str(n): 300 for n in range(1, 7)}
    worst = card["worst_decisions"]
    assert worst and all(a["loss"] >= b["loss"] > 0 for a, b in itertools.pairwise(worst))
    assert {p.name for p in out.iterdir()} == {"summary.parquet", "manifest.json",
                                               "banks.png"}


@pytest.mark.parametrize(("target", "rules", "ending"), [(200, "default", "last-round"),
                                                         (250, "basic", "first-to-bank")])
def test_evaluate_banks_figure_names_the_target_rules_and_ending(target, rules, ending):
    """optimal-win's banks depend on the target, the rules and the ending rule: the
    panels say which."""
    from dicelab.evaluate import evaluate_farkle
    from dicelab.farkle.rules import load_rules

    card = evaluate_farkle("threshold-300", rules=load_rules(rules, ending), target=target)
    fig = card.figures()["banks.png"]
    titles = [" ".join(ax.get_title().split()) for ax in fig.axes]  # wrapped to fit
    assert titles == [f"{p} to {target:,} at 0 vs 0 (rules {rules}, ending {ending})"
                      for p in ("threshold-300", "optimal-win")]


def test_evaluate_plot_goes_in_the_folder_out_creates(capsys, tmp_path):
    """The banks' picture of --plot is written into the --out folder the run creates."""
    out = tmp_path / "card"
    code, text, err = run_cli(capsys, ["evaluate", "threshold-300", "--target", "200",
                                       "--json", "--out", str(out), "--plot", str(out / "b.png")])
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        "b.png", "banks.png", "manifest.json", "summary.parquet"]
    # the game is named, as Penta's report card names it
    assert json.loads(text)["game"] == "farkle"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["game"] == "farkle"
    assert manifest["files"] == {"summary": "summary.parquet", "figures": ["banks.png"]}


def test_evaluate_optimal_win_shows_no_negative_zero(capsys):
    """optimal-win's best response scores ½ against it to the last bits, a hair below or
    above: the card says 0.00%, never -0.00%."""
    code, out, err = run_cli(capsys, ["evaluate", "optimal-win", "--target", "200"])
    assert code == 0, err
    assert "exploitability 0.00%" in out and "-0.00" not in out


def test_evaluate_refuses_before_any_work(capsys, tmp_path):
    for argv, says in (
            (["evaluate", "optimal", "--target", "5000"], "Farkle only"),
            (["evaluate", "threshold-300", "--games", "10"], "leave out --games"),
            (["evaluate", "threshold-300", "--plot", str(tmp_path / "no" / "x.png")],
             "--plot"),
            (["evaluate", "threshold-300", "--plot", str(tmp_path / "x.txt")], ".png"),
            (["evaluate", f"{EXAMPLES}:nothing"], "has no 'nothing'"),
            (["evaluate", "threshold-300", "--target", "75"], "multiple of 50")):
        code, _, err = run_cli(capsys, argv)
        assert code == 2 and err.startswith("error: ") and says in err, (argv, err)
    assert list(tmp_path.iterdir()) == []


def test_tune_searches_a_user_family_and_finds_the_exact_best(capsys):
    import json

    family = f"{EXAMPLES}:practical"
    code, stdout, err = run_cli(capsys, ["tune", family, "--against", "ai", "--params",
                                         "base,dice", "--range", "base=250:350:50",
                                         "--range", "dice=3:4:1", "--target", "1000",
                                         "--json"])
    assert code == 0, err
    result = json.loads(stdout)
    assert result["proven_best"] and result["evaluated"] == 6
    scores = {(b, d): exact_pair(f"{family}:base={b},dice={d}", "ai", target=1000).score
              for b in (250, 300, 350) for d in (3, 4)}
    (b, d), best = max(scores.items(), key=lambda kv: kv[1])
    assert result["best_score"] == pytest.approx(best, abs=1e-12)
    assert result["best"].endswith(f"practical:base={b},dice={d}") or \
        abs(scores[(b, d)] - result["best_score"]) < 1e-12


def test_a_user_family_without_a_space_is_refused(capsys):
    code, _, err = run_cli(capsys, ["tune", f"{EXAMPLES}:cautious", "--against", "ai"])
    assert code == 2 and "no parameter space" in err


def test_tournament_and_compare_take_user_policies(capsys):
    import json

    code, stdout, err = run_cli(capsys, ["tournament", f"{EXAMPLES}:cautious", "ai",
                                         "threshold-300", "--games", "2000", "--seed", "4",
                                         "--target", "2000", "--json"])
    assert code == 0, err
    assert any("cautious" in p for p in json.loads(stdout)["policies"])
    code, stdout, err = run_cli(capsys, ["compare", f"{EXAMPLES}:cautious:big=800", "ai",
                                         "--exact", "--target", "1000", "--json"])
    assert code == 0, err
    pair = json.loads(stdout)["pairs"][0]
    ref = exact_pair(parse_policy(f"{EXAMPLES}:cautious:big=800"), "ai", target=1000)
    assert pair["first"]["win_rate"] == pytest.approx(ref.first.win, abs=1e-12)


def test_policy_farkle_draws_a_users_bank_rule(capsys, tmp_path):
    # the copy of threshold-300 banks where threshold-300 banks
    code, mine, err = run_cli(capsys, ["policy", "farkle", f"{EXAMPLES}:threshold_300",
                                       "--json"])
    assert code == 0, err
    code, theirs, err = run_cli(capsys, ["policy", "farkle", "threshold-300", "--json"])
    assert code == 0, err
    mine, theirs = json.loads(mine), json.loads(theirs)
    assert mine["bank_thresholds"] == theirs["bank_thresholds"]
    assert mine["runs"] == theirs["runs"]
    # practical at 1,000 vs 3,000: 300 + 2,000 // 6 = 633 with 1-3 dice (650 on the
    # 50-point grid), twice that with 4-6 dice (1,300); its parameters are taken
    practical = ["policy", "farkle", f"{EXAMPLES}:practical:dice=5", "--me", "1000",
                 "--opp", "3000"]
    code, out, err = run_cli(capsys, [*practical, "--json"])
    assert code == 0, err
    assert json.loads(out)["bank_thresholds"] == {"1": 650, "2": 650, "3": 650, "4": 650,
                                                  "5": 1300, "6": 1300}
    png = tmp_path / "practical.png"
    code, out, err = run_cli(capsys, [*practical, "--plot", str(png)])
    assert code == 0, err
    assert png.stat().st_size > 0


def test_policy_farkle_refuses_a_policy_that_decides_move_by_move(capsys, tmp_path):
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        from dicelab.farkle.policy import Move, all_scoring

        def keep_all(state):
            o = all_scoring(state)
            return Move(o.keep, state.turn_points + o.points >= 400 and state.can_bank(o))
    """))
    png = tmp_path / "out.png"
    code, out, err = run_cli(capsys, ["policy", "farkle", f"{tmp_path}/mine.py:keep_all",
                                      "--plot", str(png)])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "decides move by move" in err and not out and not png.exists()


@pytest.mark.parametrize("argv", [
    ["solve", "farkle", "-p", "optimal-win:vs={f}", "--target", "1000"],
    ["compare", "ai", "optimal-win:vs={f}", "--exact", "--target", "1000"],
    ["compare", "ai", "{f}", "--exact", "--target", "1000"],
])
def test_an_exact_refusal_names_the_policy_as_given(capsys, tmp_path, argv):
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        from dicelab.farkle.policy import Move, all_scoring

        class Mover:
            name = "inner-name"

            def decide(self, state):
                o = all_scoring(state)
                return Move(o.keep, state.turn_points + o.points >= 400 and state.can_bank(o))
    """))
    f = f"{tmp_path}/mine.py:Mover"
    code, out, err = run_cli(capsys, [a.format(f=f) for a in argv])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert f"policy '{f}' cannot be answered exactly" in err and not out


@pytest.mark.slow  # fast twin: test_best_response_to_a_user_rule_matches_plain_value_iteration
def test_best_response_to_a_user_rule_under_the_penalty_is_the_built_ins():
    """Under a penalty for lost turns in a row a user's rule may read the run of lost
    turns, so its best response starts from one half, not from the game without the
    penalty as a threshold's does: a rule that plays as threshold-350 gets the same
    best response by the other path, within the solves' error bounds."""
    target = 1000

    @bank_rule
    def at_350(my, opp, tp, n):
        return tp >= 350

    assert not at_350.same_without_penalty
    mine = solve_best_response(FACEBOOK, target, at_350, use_cache=False)
    built_in = solve_best_response(FACEBOOK, target, "threshold-350", use_cache=False)
    bound = mine.tolerance + built_in.tolerance
    np.testing.assert_allclose(mine.streak_values, built_in.streak_values, rtol=0,
                               atol=bound)
    np.testing.assert_allclose(mine.opponent_streak_values, built_in.opponent_streak_values,
                               rtol=0, atol=bound)
    # the two paths differ: the start from the game without the penalty saves a sweep
    assert mine.sweeps > built_in.sweeps


NAMED_OTHERWISE = textwrap.dedent("""
    from dicelab.farkle.policy import Move, all_scoring, bank_rule
    from dicelab.penta.policy import greedy


    class Steady:
        name = "steady-v2"  # not its name in this file

        def __init__(self):
            self.calls = 0

        def decide(self, state):
            self.calls += 1
            o = all_scoring(state)
            return Move(o.keep, state.turn_points + o.points >= 350 and state.can_bank(o))


    def _bank(my, opp, turn_points, dice_left, *, base=300):
        return turn_points >= base


    alias = bank_rule(_bank)


    class PentaCopy:
        game = "penta"
        name = "copy of greedy"

        def decide(self, state):
            return greedy.decide(state)
""")


@pytest.mark.parametrize(("ref", "game"), [("Steady", "farkle"), ("alias", "farkle"),
                                           ("alias:base=400", "farkle"),
                                           ("PentaCopy", "penta")])
def test_a_users_policy_is_named_by_the_reference_that_loads_it_again(tmp_path, ref, game):
    """A game log and a Dask worker load a policy again by its name: the name is the
    file and the name in it, whatever the policy object calls itself."""
    (tmp_path / "named.py").write_text(NAMED_OTHERWISE)
    spec = parse_policy(f"{tmp_path}/named.py:{ref}", game)
    assert spec.name == f"{tmp_path}/named.py:{ref}"
    again = parse_policy(spec.name, game)
    assert again.name == spec.name and again.params == spec.params


def test_a_logged_game_of_a_policy_named_otherwise_is_written(tmp_path, capsys):
    (tmp_path / "named.py").write_text(NAMED_OTHERWISE)
    log = tmp_path / "games.jsonl"
    ref = f"{tmp_path}/named.py:Steady"
    code, _, err = run_cli(capsys, ["simulate", "-s", ref, "--vs", "threshold-300", "-n",
                                    "20", "--seed", "1", "--target", "500", "--log", str(log),
                                    "--log-games", "3", "--json"])
    assert code == 0 and log.exists(), err
    header = json.loads(log.read_text().splitlines()[0])
    assert [s["policy"] for s in header["seats"]] == [ref, "threshold-300"]
    assert parse_policy(ref).name == ref  # what analyse reads the log's policy with
    code, _, err = run_cli(capsys, ["evaluate", ref, "--target", "500"])
    assert code == 2 and err == f"error: policy '{ref}' cannot be answered exactly: the " \
        "exact solvers read a policy written as a bank rule (dicelab.farkle.policy." \
        "bank_rule) or a policy table; simulate it instead\n", err


@pytest.mark.parametrize("first", [True, False])
def test_compare_exact_refuses_a_policy_that_decides_move_by_move_before_any_pair(
        tmp_path, capsys, monkeypatch, first):
    """Named by the reference, before optimal-win is solved for the first pair."""
    from dicelab.farkle import exact

    def no_pair(*args, **kwargs):
        raise AssertionError("a pair was evaluated before the refusal")

    monkeypatch.setattr(exact, "exact_pair", no_pair)
    (tmp_path / "named.py").write_text(NAMED_OTHERWISE)
    ref = f"{tmp_path}/named.py:Steady"
    policies = [ref, "optimal-win", "ai"] if first else ["optimal-win", "ai", ref]
    code, out, err = run_cli(capsys, ["compare", *policies, "--exact", "--target", "500"])
    assert code == 2 and not out and err == f"error: policy '{ref}' cannot be answered " \
        "exactly: the exact solvers read a policy written as a bank rule (dicelab.farkle." \
        "policy.bank_rule) or a policy table; simulate it instead\n", err


@pytest.mark.parametrize("argv", [["simulate"], ["play", "farkle"], ["play", "penta"]])
def test_the_help_of_a_policy_option_says_a_users_policy_is_taken(capsys, argv):
    code, out, _ = run_cli(capsys, [*argv, "--help"])
    assert code == 0 and "FILE.py:NAME" in " ".join(out.split()), out


def test_what_a_policy_prints_leaves_json_alone(tmp_path, capsys):
    """A policy that prints as it is imported and as it decides: under --json its lines go
    to standard error and the JSON is all of standard output; without it, they stay."""
    noisy = tmp_path / "noisy.py"
    noisy.write_text("print('importing')\n"
                     "def rule(my, opp, turn_points, dice_left):\n"
                     "    if my == opp == 0 and dice_left == 6:\n"
                     "        print('deciding', turn_points)\n"
                     "    return turn_points >= 300\n")
    argv = ["simulate", "-s", f"{noisy}:rule", "-n", "10", "--seed", "1", "--target", "300"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0 and json.loads(out)["games"] == 10 and "deciding" in err, (out, err)
    code, out, _ = run_cli(capsys, argv)
    assert code == 0 and "deciding" in out  # (no --json: printed as usual)


def test_a_manifest_records_the_code_of_each_users_policy_it_names(capsys, tmp_path):
    """--out's manifest.json gives the SHA-256 of the file of every user's policy the run
    names (the name stays when the code changes): another digest once the file is edited,
    none for a run of built-in policies only."""
    import hashlib

    rules = tmp_path / "mine.py"
    rules.write_text("def rule(my, opp, tp, n):\n    return tp >= 300\n")

    def manifest(*policies: str) -> dict:
        out = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
        code, _, err = run_cli(capsys, ["simulate", "-s", policies[0], "--vs", *policies[1:],
                                        "-n", "50", "--seed", "1", "--target", "500",
                                        "--out", str(out)])
        assert code == 0, err
        return json.loads((out / "manifest.json").read_text())

    first = manifest(f"{rules}:rule", "threshold-300")
    assert first["policy_code"] == {
        f"{rules}:rule": hashlib.sha256(rules.read_bytes()).hexdigest()}
    rules.write_text("def rule(my, opp, tp, n):\n    return tp >= 350\n")
    edited = manifest(f"{rules}:rule", "threshold-300")
    assert edited["policy_code"][f"{rules}:rule"] != first["policy_code"][f"{rules}:rule"]
    assert "policy_code" not in manifest("ai", "threshold-300")


def test_a_manifest_records_the_code_of_a_users_policy_named_as_a_parameter(
        capsys, tmp_path, monkeypatch):
    """A best response to a user's rule (optimal-win:vs=FILE.py:NAME), in an experiment
    whose manifest holds that name only inside the other: the file's SHA-256 is recorded
    under the name as given inside."""
    import hashlib

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("def rule(my, opp, tp, n):\n    return tp >= 300\n")
    (tmp_path / "vs.toml").write_text(
        'kind = "compare"\npolicies = ["optimal-win:vs=mine.py:rule", "threshold-300"]\n'
        "games = 100\nseed = 1\ntarget = 300\n")
    code, _, err = run_cli(capsys, ["experiment", "run", "vs.toml", "--out", "run"])
    assert code == 0, err
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["policy_code"] == {
        "mine.py:rule": hashlib.sha256((tmp_path / "mine.py").read_bytes()).hexdigest()}


@pytest.mark.parametrize(("named", "ref", "recorded"), [
    ("optimal-win:vs={}:rule", "{}:rule", True),
    ("optimal-win:vs= {}:rule:base=350 ", "{}:rule:base=350", True),
    ("optimal-win:vs=optimal-win:vs={}:rule", "{}:rule", True),
    ("{}:rule", "{}:rule", True),
    ("{}:rule:base=350", "{}:rule:base=350", True),
    ("optimal-win:vs={}.gone.py:rule", "{}.gone.py:rule", False),
    ("optimal-win:vs=ai", None, False),
    ("ai:base=350", None, False),
    ("optimal-win:vs={}c:rule", None, False),
])
def test_policy_code_finds_a_users_policy_named_inside_another_name(tmp_path, named, ref,
                                                                     recorded):
    """results.policy_code and user_policy.references: a user's policy as a parameter's
    value, at any depth, keyed by the name given inside; a built-in one or a missing file
    records nothing. Nothing is run."""
    import hashlib

    from dicelab.results import policy_code
    from dicelab.user_policy import references, source_digest

    mine = tmp_path / "mine.py"
    mine.write_text("raise SystemExit('run')\n")
    text = named.format(mine)
    assert references(text) == ([] if ref is None else [ref.format(mine)])
    digest = hashlib.sha256(mine.read_bytes()).hexdigest() if recorded else None
    assert source_digest(text) == digest
    expected = {ref.format(mine): digest} if recorded else {}
    assert policy_code(["dicelab", "simulate", "-s", text]) == expected
    assert policy_code({"policies": [{"name": text}]}) == expected
    for option in ("--strategy=", "-s=", "--vs="):  # an option's value written with '='
        assert policy_code(["dicelab", "simulate", option + text]) == expected


def test_the_library_functions_take_a_policy_object_as_they_take_its_name(tmp_path):
    """simulate, compare (Monte Carlo and exact) and tournament play a policy object (a
    bank rule defined in Python) as they play the same rule named in a file; tune, whose
    argument is a family's name, refuses an object with one line."""
    from dicelab.compare import compare
    from dicelab.simulate import simulate
    from dicelab.tournament import tournament
    from dicelab.tune import tune

    path = tmp_path / "mine.py"
    path.write_text("def cautious(my, opp, tp, n):\n    return tp >= 350 or n < 3\n")
    named = f"{path}:cautious"
    rule = parse_policy(named).policy
    assert isinstance(rule, BankRule)
    a = simulate(rule, ["ai"], games=200, seed=3)
    b = simulate(named, ["ai"], games=200, seed=3)
    assert np.array_equal(a.seat(0).wins, b.seat(0).wins) and a.seat(0).wins > 0
    c, d = compare([rule, "ai"], games=200, seed=3), compare([named, "ai"], games=200, seed=3)
    assert (c.pairs[0].wins, c.pairs[0].ties) == (d.pairs[0].wins, d.pairs[0].ties)
    e = compare([rule, "threshold-300"], exact=True, target=500)
    f = compare([named, "threshold-300"], exact=True, target=500)
    assert e.pairs[0].score == pytest.approx(f.pairs[0].score, abs=1e-12)
    t = tournament([rule, "ai"], games=200, seed=3)
    u = tournament([named, "ai"], games=200, seed=3)
    assert t.to_dict()["pairs"][0]["score"] == u.to_dict()["pairs"][0]["score"]
    with pytest.raises(UserError, match="tune takes the name of a family"):
        tune(rule, ["ai"], target=1000)
