"""One registry of Farkle policies: every family is one object
(:mod:`dicelab.farkle.builtin`), the tools ask it and never branch on a family's name;
every family, dicelab's and a user's, goes through the same path to the kernels, the
engine and the referee."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from dicelab.farkle import builtin, exact, fixed
from dicelab.farkle.policies import seat_arrays
from dicelab.farkle.policy import bank_rule
from dicelab.farkle.rules import PRESETS
from dicelab.farkle.simulate import simulate_farkle, simulate_python
from dicelab.registry import PolicySpec, family_names, parse_policy

SRC = Path(__file__).resolve().parents[1] / "src" / "dicelab"
#: The modules allowed to name a Farkle family: the registry parses the names, the
#: families module defines what each does.
OWNERS = {SRC / "registry.py", SRC / "farkle" / "builtin.py"}
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


def test_no_module_outside_the_registry_dispatches_on_a_farkle_family_name():
    names = set(family_names("farkle"))
    found = [f"{path.relative_to(SRC)}:{line}"
             for path in sorted(SRC.rglob("*.py")) if path not in OWNERS
             for line in dispatches(path.read_text(), names)]
    assert not found, "dispatch on a Farkle family name outside the registry: " + \
        ", ".join(found)


def test_every_registered_farkle_family_is_one_family_object():
    assert set(builtin.FAMILIES) == {*family_names("farkle"), "user"}
    for name, fam in builtin.FAMILIES.items():
        assert fam.name == name and isinstance(fam, builtin.Family)


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
