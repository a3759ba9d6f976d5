"""Penta policies, your own or dicelab's: what a policy sees and what it answers (layer 2).

A Penta policy is asked at every decision of a turn. It sees a :class:`State` -- the
card (a :class:`~dicelab.penta.policies.Scorecard`: each box's score or ``None`` if
open, the upper-section total, the Penta box and its +100 bonuses), the roll (five
sorted faces), the rolls left (2, 1 or 0) and the rule set -- and answers:

* with rolls left, the dice to keep (a sequence of faces of the roll); the others are
  rolled again. Keeping all five ends the rolling: the policy is then asked for a box
  with 0 rolls left;
* with no roll left, the box to fill: a name of
  :data:`~dicelab.penta.rules.BOX_NAMES` that the rules allow for this roll
  (:meth:`State.points` lists them with their points).

Any object with a ``name``, ``game = "penta"`` and a ``decide(state)`` method is a policy
(:class:`Policy`); a plain function of ``(card, roll, rolls_left)`` becomes one with
:func:`penta_policy`:

>>> @penta_policy
... def keep_sixes(card, roll, rolls_left):
...     if rolls_left:
...         return [d for d in roll if d == 6]  # reroll all but the sixes
...     points = points_of(card, roll)  # the boxes open to this roll, with their points
...     return max(points, key=points.get)
>>> s = State(Scorecard(), (2, 3, 6, 6, 6), 2, get_rules("seed"))
>>> ask(keep_sixes, s)
(6, 6, 6)
>>> ask(keep_sixes, s._replace(rolls_left=0))
'three-of-a-kind'

dicelab's own ``optimal`` and ``greedy`` are policies of this interface too
(:data:`BUILT_IN`), reading the decision tables the simulation kernel plays from
(:func:`dicelab.penta.policies.decision_tables`). :func:`ask` is how dicelab's referee
puts a question to any policy: an illegal answer is a :class:`~dicelab.errors.UserError`
naming the decision and the answer, and an exception in the policy's code one with the
policy's own traceback frames.
"""

from __future__ import annotations

import inspect
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from dicelab import dice
from dicelab.errors import UserError, user_code_error
from dicelab.penta.policies import (
    POLICIES,
    DecisionTables,
    Scorecard,
    TurnAnalysis,
    analyse_turn,
    checked_values,
    decision_tables,
    policy_values,
    table_policy,
)
from dicelab.penta.rules import BOX_NAMES, N_DICE, RuleSet, get_rules
from dicelab.penta.scoring import box_scores
from dicelab.penta.tables import ROLL_BASE, roll_index
from dicelab.text import as_number_like, counted

#: A policy's answer, as :func:`ask` returns it: the dice to keep, or a box name.
Answer = tuple[int, ...] | str


class State(NamedTuple):
    """One decision: ``card`` before this turn's box, ``roll`` (sorted faces), the rolls
    left (2, 1 or 0) and the rule set."""

    card: Scorecard
    roll: tuple[int, ...]
    rolls_left: int
    rules: RuleSet

    @property
    def open_boxes(self) -> tuple[str, ...]:
        """The boxes not filled yet."""
        return tuple(n for n, s in zip(BOX_NAMES, self.card.scores, strict=True) if s is None)

    def points(self) -> dict[str, int]:
        """The boxes this roll may go in now (joker rules applied), each with its score
        (without a Penta bonus: see :meth:`penta_bonus`)."""
        return points_of(self.card, self.roll, self.rules)

    def penta_bonus(self) -> int:
        """The +100 this roll earns in whichever box it goes (0 if none)."""
        return box_scores(self.rules, self.card.mask, self.card.fifty,
                          roll_index(self.roll))[1]

    def describe(self) -> str:
        """The decision in one line, as errors show it (the card in ``--card`` syntax)."""
        return (f"card '{card_text(self.card)}' (total {self.card.total}), roll "
                f"{' '.join(map(str, self.roll))}, {counted(self.rolls_left, 'roll')} left")


@runtime_checkable
class Policy(Protocol):
    """A Penta policy: a ``name``, ``game = "penta"`` and ``decide(state)`` answering the
    dice to keep (rolls left) or a box name (no roll left)."""

    name: str
    game: str

    def decide(self, state: State) -> Sequence[int] | str: ...


def points_of(card: Scorecard, roll: Sequence[int], rules: RuleSet | str | None = None
              ) -> dict[str, int]:
    """The boxes ``roll`` may go in on ``card``, each with the score it would get there.

    >>> points_of(Scorecard.parse("chance=20"), (1, 2, 3, 4, 5))["large-straight"]
    40
    """
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    scores, _ = box_scores(rs, card.mask, card.fifty, roll_index(roll))
    return {BOX_NAMES[b]: int(s) for b, s in enumerate(scores) if s >= 0}


def card_text(card: Scorecard) -> str:
    """The card as ``box=points,...`` (what :meth:`Scorecard.parse` reads).

    >>> card_text(Scorecard.parse("fours=12,penta=50"))
    'fours=12,penta=50'
    """
    items = [f"{n}={s}" for n, s in zip(BOX_NAMES, card.scores, strict=True) if s is not None]
    if card.penta_bonuses:
        items.append(f"bonuses={card.penta_bonuses}")
    return ",".join(items)


class FunctionPolicy:
    """A policy of a plain function ``decide(card, roll, rolls_left, **params)`` (see
    :func:`penta_policy`): ``card`` a :class:`Scorecard`, ``roll`` a tuple of five sorted
    faces. Keyword parameters with a number as their default are the policy's
    parameters (``FILE.py:NAME:key=value`` on the command line, :meth:`with_params`);
    ``space`` maps some of them to the ``range`` (or ``(low, high, step)``) ``tune``
    searches (default: the function's own ``space`` attribute, if it has one)."""

    game = "penta"

    def __init__(self, function: Callable, name: str | None = None,
                 params: dict | None = None, space: dict | None = None) -> None:
        self.function = function
        self.base_name = name or getattr(function, "__name__", "penta-policy")
        self.space = dict(space if space is not None else getattr(function, "space", {}))
        self.defaults = number_defaults(function)
        self.params = dict(self.defaults)
        for key, value in (params or {}).items():
            if key not in self.defaults:
                known = ", ".join(self.defaults) or "none"
                raise UserError(f"unknown parameter {key!r} (this policy's parameters: "
                                f"{known})")
            try:
                self.params[key] = as_number_like(self.defaults[key], value)
            except ValueError as exc:
                raise UserError(f"parameter {key}: {exc}") from None
        changed = [f"{k}={v}" for k, v in self.params.items() if v != self.defaults[k]]
        self.name = self.base_name + (":" + ",".join(changed) if changed else "")

    def __repr__(self) -> str:
        return f"FunctionPolicy({self.name!r})"

    def with_params(self, **params) -> FunctionPolicy:
        """The same policy with other parameters (the defaults for those not given)."""
        return FunctionPolicy(self.function, self.base_name, {**self.params, **params},
                              self.space)

    def decide(self, state: State):
        return self.function(state.card, state.roll, state.rolls_left, **self.params)


def number_defaults(function: Callable) -> dict:
    """The parameters of ``function`` after its three positional ones that have a number
    (not a bool) as their default."""
    try:
        sig = inspect.signature(getattr(function, "py_func", function))
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in list(sig.parameters.values())[3:]
            if p.default is not p.empty and isinstance(p.default, int | float)
            and not isinstance(p.default, bool)}


def positional_arity(function: Callable) -> int | None:
    """How many positional parameters without a default ``function`` takes (None if it
    takes ``*args`` or has no signature)."""
    py = getattr(function, "py_func", function)
    try:
        sig = inspect.signature(py)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in ps):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in ps)


def penta_policy(function: Callable | None = None, *, name: str | None = None,
                 space: dict | None = None):
    """Make a Penta :class:`FunctionPolicy` of ``function(card, roll, rolls_left)``
    (a decorator, with or without ``name=`` and ``space=``: the ranges ``tune``
    searches, ``space={"high": range(3, 7)}``)."""
    def make(f: Callable) -> FunctionPolicy:
        if positional_arity(f) != 3:
            raise UserError(f"Penta policy {getattr(f, '__name__', f)!r} must take (card, "
                            "roll, rolls_left)")
        return FunctionPolicy(f, name, space=space)

    return make if function is None else make(function)


class BuiltInPolicy:
    """dicelab's ``optimal`` or ``greedy`` (``name``), as a policy object."""

    game = "penta"

    def __init__(self, name: str) -> None:
        table_policy(name)
        self.name = name
        self.params: dict = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TablePolicy(BuiltInPolicy):
    """dicelab's ``optimal`` or ``greedy``, read from the decision tables (the choices
    the simulation kernel makes, ties settled alike)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        # the tables of the last rule set asked (weakly: releasing them frees them)
        self._last: tuple[RuleSet, weakref.ref] | None = None

    def tables(self, rules: RuleSet) -> DecisionTables:
        """The decision tables this policy reads under ``rules``."""
        tables = self._last[1]() if self._last and self._last[0] is rules else None
        if tables is None:
            tables = decision_tables(self.name, rules)
            self._last = (rules, weakref.ref(tables))
        return tables

    def decide(self, state: State) -> Answer:
        tables = self.tables(state.rules)
        p = tables.policies.index(self.name)
        i = int(tables.slot[state.card.state])
        r = roll_index(state.roll)
        if state.rolls_left == 0:
            return BOX_NAMES[tables.box(p, i, r)]
        keep = tables.keep2(p, i, r) if state.rolls_left == 2 else tables.keep1(p, i, r)
        return tuple(dice.dice_of_rank(keep))


class WidgetPolicy(BuiltInPolicy):
    """dicelab's ``optimal`` or ``greedy`` decided turn by turn by the one-turn widget
    (:func:`dicelab.penta.policies.analyse_turn`): the same choices as
    :class:`TablePolicy` without the 270 MB tables, at a widget's cost per turn (what the
    game logs of a few games play)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._turn: tuple[tuple, TurnAnalysis] | None = None

    def values(self, rules: RuleSet) -> np.ndarray:
        """The per-state values the widget decides by."""
        return policy_values(self.name, rules)

    def turn(self, card: Scorecard, rules: RuleSet) -> TurnAnalysis:
        """The widget of ``card``'s state under ``rules`` (the last one kept)."""
        key = (rules, card.mask, card.up, card.fifty)
        if self._turn is None or self._turn[0] != key:
            self._turn = (key, analyse_turn(self.values(rules), rules, *key[1:]))
        return self._turn[1]

    def decide(self, state: State) -> Answer:
        t = self.turn(state.card, state.rules)
        r = roll_index(state.roll)
        if state.rolls_left == 0:
            return BOX_NAMES[int(t.box[r])]
        keep = (t.play2 if state.rolls_left == 2 else t.play1)[ROLL_BASE + r]
        return tuple(dice.dice_of_rank(int(keep)))


class ValuesPolicy(WidgetPolicy):
    """The widget under given ``values`` (float64, one per state index: an estimate of the
    points still to come, e.g. a learned one): it decides as ``optimal`` does, by other
    values. :func:`dicelab.penta.distribution.values_distribution` gives its exact final
    TOTAL."""

    def __init__(self, name: str, values: np.ndarray) -> None:
        if not isinstance(name, str) or not name:
            raise UserError(f"a policy's name is a non-empty string, not {name!r}")
        self.name = name
        self.params: dict = {}
        self._values = values
        self._checked: np.ndarray | None = None
        self._turn = None

    def values(self, rules: RuleSet) -> np.ndarray:
        if self._checked is None:
            self._checked = checked_values(self._values, self.name)
        return self._checked


#: dicelab's Penta policies as policy objects, by name.
BUILT_IN: dict[str, TablePolicy] = {name: TablePolicy(name) for name in POLICIES}
optimal = BUILT_IN["optimal"]
greedy = BUILT_IN["greedy"]


def ask(policy: Policy, state: State) -> Answer:
    """``policy``'s answer to ``state``, checked: the dice to keep (a sorted tuple, a
    sub-multiset of the roll) with rolls left, the box name with none.

    >>> s = State(Scorecard.parse("sixes=18"), (1, 1, 2, 3, 6), 0, get_rules("seed"))
    >>> ask(penta_policy(lambda card, roll, left: "sixes"), s)
    Traceback (most recent call last):
    ...
    dicelab.errors.UserError: policy <lambda> answered 'sixes' at card 'sixes=18' (total 18), \
roll 1 1 2 3 6, 0 rolls left: sixes is filled (open: ones, twos, threes, fours, fives, \
three-of-a-kind, four-of-a-kind, full-house, small-straight, large-straight, chance, penta)
    """
    try:
        answer = policy.decide(state)
    except UserError:
        raise
    except (Exception, SystemExit) as exc:  # the user's code: its own frames
        raise user_code_error(exc, f"policy {policy.name} at {state.describe()}") from None

    def refuse(why: str) -> UserError:
        return UserError(f"policy {policy.name} answered {answer!r} at {state.describe()}: "
                         f"{why}")

    if state.rolls_left == 0:
        if not isinstance(answer, str):
            raise refuse("with no roll left, answer the box to fill (a name such as 'chance')")
        box = answer.strip().lower().replace("_", "-")
        if box not in BOX_NAMES:
            raise refuse(f"no such box; boxes are {', '.join(BOX_NAMES)}")
        allowed = state.points()
        if box not in allowed:
            if box not in state.open_boxes:
                raise refuse(f"{box} is filled (open: {', '.join(state.open_boxes)})")
            raise refuse(f"the rules put this roll in {', '.join(allowed)}, not {box}")
        return box
    if isinstance(answer, str):
        raise refuse(f"with rolls left, answer the dice to keep (all {N_DICE} to stop "
                     "rolling), not a box")
    try:
        items = list(answer)
        keep = tuple(sorted(int(d) for d in items))
        if any(isinstance(d, bool) or float(d) != int(d) for d in items):
            raise ValueError
    except (TypeError, ValueError):
        raise refuse("the dice to keep are a sequence of faces of the roll") from None
    if Counter(keep) - Counter(state.roll):
        raise refuse("these dice are not all in the roll")
    return keep


__all__ = ["BUILT_IN", "Answer", "BuiltInPolicy", "FunctionPolicy", "Policy", "State",
           "TablePolicy", "ValuesPolicy", "WidgetPolicy", "ask", "card_text", "greedy", "optimal",
           "penta_policy", "points_of", "positional_arity"]
