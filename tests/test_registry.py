"""One registry of policies: every family of each game is one object
(:mod:`dicelab.farkle.builtin`, :mod:`dicelab.penta.builtin`, on the shared
:class:`dicelab.families.Family`), the tools ask it and never branch on a family's name;
every family, dicelab's and a user's, goes through the same path to the kernels, the
engine and the referee."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from dicelab import families
from dicelab.errors import UserError
from dicelab.farkle import builtin, exact, fixed
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy import bank_rule
from dicelab.farkle.rules import PRESETS
from dicelab.farkle.simulate import simulate_farkle, simulate_python
from dicelab.penta import builtin as penta_builtin
from dicelab.penta.policy import ValuesPolicy, penta_policy
from dicelab.penta.rules import N_STATES
from dicelab.registry import PolicySpec, family_names, parse_policy

SRC = Path(__file__).resolve().parents[1] / "src" / "dicelab"
#: The modules allowed to name a family: the registry parses the names, each game's
#: families module defines what each does.
OWNERS = {SRC / "registry.py", SRC / "farkle" / "builtin.py", SRC / "penta" / "builtin.py"}
#: Every family name of both games, a user's (``"user"``) included.
ALL_NAMES = {*family_names("farkle"), *family_names("penta"), "user"}
DEFAULT = PRESETS["default"]
TARGET = 500


@bank_rule(last_round="rule")
def t300(my, opp, tp, n):
    return tp >= 300


def _strings(node: ast.AST) -> set[str]:
    """The string constants of a constant or a tuple, list or set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_strings(e) for e in node.elts)) if node.elts else set()
    return set()


def _mentions_family(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Attribute) and n.attr == "family")
               or (isinstance(n, ast.Name) and "family" in n.id) for n in ast.walk(node))


def dispatches(source: str, names: set[str]) -> list[int]:
    """Lines of ``source`` that branch on a family name of ``names``: a comparison of a
    ``.family`` with such a name (or a collection of them), or a dict or collection that
    holds two or more of them (a table of families)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_mentions_family(s) for s in sides) \
                    and any(_strings(s) & names for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Dict):
            keys = set().union(*(_strings(k) for k in node.keys if k is not None)) \
                if node.keys else set()
            if len(keys & names) >= 2:
                found.append(node.lineno)
        elif isinstance(node, ast.Assign) and len(_strings(node.value) & names) >= 2 \
                and isinstance(node.value, ast.Tuple | ast.Set):
            found.append(node.lineno)
    return sorted(found)


def test_the_scan_sees_a_dispatch_on_a_family_name():
    names = set(family_names("farkle"))
    source = ("if spec.family == 'ai':\n    pass\n"
              "ok = seat.family in ('max-ev', 'fastest')\n"
              "SPACES = {'ai': 1, 'threshold': 2}\n"
              "EXACT = ('max-ev', 'optimal-win')\n"
              "fine = spec.name == 'ai' or family == 'greedy'\n")
    assert dispatches(source, names) == [1, 3, 4, 5]


def test_the_scan_sees_a_dispatch_on_a_penta_family_name():
    source = ("x = [s.policy if s.family == 'user' else 1 for s in seats]\n"
              "ONLINE_FAMILIES = ('objective', 'penta-win')\n"
              "ok = spec.family in ('optimal', 'greedy')\n")
    assert dispatches(source, ALL_NAMES) == [1, 2, 3]


def test_no_module_outside_the_registry_dispatches_on_a_family_name():
    found = [f"{path.relative_to(SRC)}:{line}"
             for path in sorted(SRC.rglob("*.py")) if path not in OWNERS
             for line in dispatches(path.read_text(), ALL_NAMES)]
    assert not found, "dispatch on a family name outside the registry: " + ", ".join(found)


@pytest.mark.parametrize("game, module", [("farkle", builtin), ("penta", penta_builtin)])
def test_every_registered_family_is_one_family_object(game, module):
    assert set(module.FAMILIES) == {*family_names(game), "user"}
    for name, fam in module.FAMILIES.items():
        assert fam.name == name and fam.game == game
        assert isinstance(fam, module.Family) and isinstance(fam, families.Family)
    assert module.USER is module.FAMILIES["user"] and not module.USER.named


def test_a_family_of_one_game_is_refused_for_the_other():
    with pytest.raises(UserError, match="is a penta policy, not farkle"):
        builtin.family_of(parse_policy("greedy"))
    with pytest.raises(UserError, match="is a farkle policy, not penta"):
        penta_builtin.family_of(parse_policy("ai"))


@penta_policy(space={"high": range(3, 7)})
def tunable_penta(card, roll, rolls_left, high=5):
    from dicelab.penta.policy import points_of

    points = points_of(card, roll)
    return [d for d in roll if d >= high] if rolls_left else max(points, key=points.get)


def test_both_games_read_a_users_tuning_space_alike():
    farkle = PolicySpec("farkle", "user", "cautious", {"base": 300},
                        policy=SimpleNamespace(space={"base": range(200, 601, 50)}))
    penta = PolicySpec("penta", "user", "tunable", dict(tunable_penta.params),
                       policy=tunable_penta)
    assert builtin.USER.space(farkle) == {"base": (200, 600, 50)}
    assert penta_builtin.USER.space(penta) == {"high": (3, 6, 1)}
    assert tunable_penta.with_params(high=4).space == tunable_penta.space
    wrong = penta_policy(tunable_penta.function, space={"low": range(3, 7)})
    with pytest.raises(UserError, match="not one of its parameters"):
        penta_builtin.USER.space(PolicySpec("penta", "user", "w", dict(wrong.params),
                                            policy=wrong))


@pytest.mark.parametrize("space, ok", [
    (range(200, 601, 50), (200, 600, 50)),
    ((200, 600, 50), (200, 600, 50)),
    ((3.0, 6.0, 1.5), None),
    ((600, 200, 50), None),
    ((200, 600, 0), None),
    ((200, 610, 50), None),
    (range(0), None),
    (["a", "b"], None),
])
def test_a_users_space_is_integer_ranges_and_a_refusal_says_so(space, ok):
    spec = PolicySpec("farkle", "user", "mine.py:rule", {"base": 300},
                      policy=SimpleNamespace(space={"base": space}))
    if ok is not None:
        assert builtin.USER.space(spec) == {"base": ok}
        return
    with pytest.raises(UserError, match=r"^policy 'mine\.py:rule': the space of 'base' must "
                       r"be a non-empty range or \(low, high, step\) of integers, step > 0 "
                       r"and high - low a multiple of it, not "):
        builtin.USER.space(spec)


class _PentaSpy(penta_builtin.Family):
    """A Penta family that records what it is asked, then answers as ``inner``."""

    def __init__(self, inner: penta_builtin.Family, asked: list[str]) -> None:
        self.inner, self.asked = inner, asked
        self.name, self.online, self.by_referee = inner.name, inner.online, inner.by_referee

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _ask(self, what, *args):
        self.asked.append(what)
        return getattr(self.inner, what)(*args)

    def block(self, spec):
        return self._ask("block", spec)

    def check(self, spec, seats):
        return self._ask("check", spec, seats)

    def policy(self, spec, seat=0, n_seats=2):
        return self._ask("policy", spec, seat, n_seats)

    def logged(self, spec, seat=0, n_seats=2):
        return self._ask("logged", spec, seat, n_seats)

    def check_exact(self, spec, rules):
        return self._ask("check_exact", spec, rules)


#: A user's policy given as values: zero values, greedy's decisions.
THIS_TURN = PolicySpec("penta", "user", "this-turn", {},
                       policy=ValuesPolicy("this-turn", np.zeros(N_STATES)))


@pytest.mark.parametrize("spec", [parse_policy("greedy"), THIS_TURN,
                                  parse_policy("optimal:at-least:300"),
                                  parse_policy("penta-win")], ids=lambda s: s.family)
def test_every_penta_tool_asks_the_family(spec, monkeypatch):
    from dicelab.compare import compare
    from dicelab.logplay import play_games
    from dicelab.penta.simulate import PentaPlan, referee_policies, simulate_penta

    asked: list[str] = []
    fam = penta_builtin.FAMILIES[spec.family]
    monkeypatch.setitem(penta_builtin.FAMILIES, spec.family, _PentaSpy(fam, asked))
    # the kernel: the decision-table block it plays from
    blocks = PentaPlan((spec,), "seed", 1, 10).families
    assert asked == ["block"] and blocks == ((fam.block(spec),) if fam.block(spec) else ())
    # the table's refusals, before any work
    if fam.name == "penta-win":
        with pytest.raises(UserError, match="tables of 2 to"):
            simulate_penta([spec], games=10, seed=1)
        assert asked[-1] == "check"
    # the referee and the game logs: its policy objects (an online family's plays its
    # seat as the kernel does: an OnlinePolicy at that seat of that table)
    if fam.online:
        from dicelab.penta.objective_play import OnlinePolicy

        got = referee_policies([parse_policy("optimal"), spec])
        assert isinstance(got[1], OnlinePolicy) and (got[1].seat, got[1].seats) == (1, 2)
        assert got[1].watches == (fam.name == "penta-win")
    else:
        assert referee_policies([spec]) == [fam.policy(spec)]
        games = play_games("penta", [spec], games=1, seed=5)
        assert len(games) == 1 and "logged" in asked
    assert "policy" in asked
    # the exact head to head: its refusal before any work, or none
    if fam.name == "penta-win":
        with pytest.raises(UserError, match="no score distribution"):
            compare([spec.name, "greedy"], exact=True)
        assert asked[-1] == "check_exact"


def test_a_users_move_by_move_penta_policy_is_refused_exactly_with_the_reason():
    spec = PolicySpec("penta", "user", "most", {}, policy=tunable_penta)
    with pytest.raises(UserError, match="decides move by move: an exact answer needs"):
        penta_builtin.USER.check_exact(spec, None)
    assert penta_builtin.USER.tabulated(THIS_TURN) and not penta_builtin.USER.tabulated(spec)


def _specs() -> list[PolicySpec]:
    user = PolicySpec("farkle", "user", t300.name, dict(t300.params), policy=t300)
    return [parse_policy(p, "farkle") for p in ("threshold-300", "ai", "max-ev", "fastest",
                                                "optimal-win")] + [user]


class _Spy(builtin.Family):
    """A family that records the policies it is asked for, then answers as ``inner``."""

    def __init__(self, inner: builtin.Family, asked: list[str]) -> None:
        self.inner, self.asked = inner, asked

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def policy(self, spec, rules, target, n_seats=2, progress=None):
        self.asked.append(spec.name)
        return self.inner.policy(spec, rules, target, n_seats, progress)


@pytest.mark.parametrize("spec", _specs(), ids=lambda s: s.family)
def test_every_family_reaches_kernels_engine_and_referee_through_its_policy(spec,
                                                                          monkeypatch):
    asked: list[str] = []
    monkeypatch.setitem(builtin.FAMILIES, spec.family,
                        _Spy(builtin.FAMILIES[spec.family], asked))
    # the simulation kernels: its seat is its policy's kernel seat
    seats = seat_arrays([spec, parse_policy("threshold-500")], DEFAULT, TARGET)
    policy = builtin.as_policy(spec, DEFAULT, TARGET)
    assert asked.count(spec.name) == 2
    code = policy.kernel_seat(DEFAULT, TARGET) if hasattr(policy, "kernel_seat") else None
    if isinstance(code, builtin.KernelCode):
        assert seats.kinds[0] == code.kind
        np.testing.assert_array_equal(seats.params[0], code.params)
    else:
        assert seats.kinds[0] == 2  # a table
    # the engine: its policy's slices
    resolved = exact.resolve(spec, DEFAULT, TARGET)
    assert asked[-1] == spec.name and asked.count(spec.name) == 3
    grid = fixed.grid_of(DEFAULT, TARGET, fixed.lead_rows([resolved], DEFAULT, TARGET))
    assert fixed.policy_slices(resolved, grid, DEFAULT).bank.shape[-1] == 7
    # the referee (play, logs, a move-by-move seat): its policy's decisions; and the
    # kernel's games of the same seat are the referee's
    ref = simulate_python([spec, "threshold-500"], games=200, seed=3, target=TARGET)
    assert asked.count(spec.name) == 4
    sim = simulate_farkle([spec, parse_policy("ai")], games=200, seed=3, target=TARGET)
    assert sim.kernel == "general" and ref.kernel == "referee"
    assert ref.seat(0).wins + ref.seat(1).wins + ref.seat(0).ties == 200


@pytest.mark.parametrize(("argv", "game"), [
    (["play", "farkle", "--ai", "bogus"], "farkle"),
    (["play", "penta", "--ai", "bogus"], "penta"),
    (["simulate", "-s", "bogus", "--game", "farkle", "-n", "10"], "farkle"),
    (["simulate", "-s", "ai", "--vs", "bogus", "-n", "10"], "farkle"),
    (["simulate", "-s", "greedy", "--vs", "bogus", "-n", "10"], "penta"),
    (["evaluate", "bogus", "--game", "penta"], "penta"),
    (["simulate", "-s", "bogus", "-n", "10"], None),
])
def test_an_unknown_policy_lists_the_policies_of_its_game(capsys, argv, game):
    """A policy name unknown where the game is known (play farkle, a seat beside a Farkle
    policy, --game) lists that game's policies only, as a policy of the other game does;
    with no game to go by, both games'."""
    from cli_helpers import run_cli

    from dicelab.registry import valid_names

    code, out, err = run_cli(capsys, argv)
    assert (code, out) == (2, "")
    listed = valid_names(game)
    assert err == f"error: unknown policy 'bogus'; valid policies are {listed}\n"
    assert ("farkle: " in listed, "penta: " in listed) == (game != "penta", game != "farkle")
    with pytest.raises(UserError, match="is a penta policy, not farkle; valid are farkle: "
                                        r"threshold-T[^;]*$"):
        parse_policy("optimal", "farkle")


@pytest.mark.parametrize(("text", "hint"), [
    ("ai:ai", "a policy of your own in ai.py is named ai.py:ai"),
    ("optimal:mine", "a policy of your own in optimal.py is named optimal.py:mine"),
])
def test_a_module_named_like_a_built_in_is_read_as_the_built_in_and_told_so(text, hint):
    """``ai:ai`` (a user's module ai.py) reads as the built-in ai with a parameter: the
    refusal says so and how to name the file; a bad parameter that is no module reference
    (``ai:base=zz``) keeps its own message alone."""
    with pytest.raises(UserError, match=re.escape(hint) + "$"):
        parse_policy(text)
    with pytest.raises(UserError, match=r"^policy 'ai:base=zz': base must be an integer$"):
        parse_policy("ai:base=zz", "farkle")
