"""The Penta model in one place: boxes, points, bonuses, the state index, the rule sets.

Every fact of RULES.md §1 that code needs is written here once and imported by the
scoring, widget, solver, policies and simulator.

The four rule sets differ only in what happens when a Penta (five equal dice) is
rolled while the Penta box is already filled:

============  ====================  =================  ==========
rule set      joker applies when    joker box choice   +100 bonus
============  ====================  =================  ==========
``seed``      Penta box holds 50    forced order       with 50
``hasbro``    Penta box filled      forced order       with 50
``free-joker`` Penta box filled     any open box [*]   with 50
``no-bonus``  never                 --                 never
============  ====================  =================  ==========

Forced order: the upper box of the Penta's face if open (its face sum); else any open
lower box at joker values (Full house 25, Small straight 30, Large straight 40, the
others the dice sum); only with the lower section full, any open upper box at 0.

[*] free-joker: any open box; upper boxes score as usual, and Full house / straights
take their joker values only if the upper box of the Penta's face is already filled
(else they score 0 as for any five equal dice).

Kernels receive a rule set as ``RuleSet.params``, a :class:`RuleParams` (a NamedTuple
of three ints, which numba passes by value); results (manifests) record it as
``RuleSet.to_dict()``, the name, description and the parameters in words.

A turn-start state is one int64 index (:func:`state_index`)
``s = (mask << MASK_SHIFT) | (up << UP_SHIFT) | fifty``: ``mask`` the set of filled
boxes (bit ``b`` = box ``b``), ``up`` the upper-section total capped at
:data:`UPPER_TARGET`, ``fifty`` 1 if the Penta box holds 50.

>>> s = state_index(1 << PENTA_BOX, 12, 1)
>>> int(state_mask(s)) == 1 << PENTA_BOX, int(state_up(s)), int(state_fifty(s))
(True, 12, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from numba import njit

from dicelab.digest import text_digest
from dicelab.errors import UserError

# --- boxes and points ---------------------------------------------------------------------

#: Box order used everywhere (index = box number).
BOX_NAMES = (
    "ones", "twos", "threes", "fours", "fives", "sixes",
    "three-of-a-kind", "four-of-a-kind", "full-house", "small-straight",
    "large-straight", "chance", "penta",
)
N_BOXES = len(BOX_NAMES)
#: Boxes ``0 .. UPPER_BOXES - 1`` are the upper section; box ``f - 1`` takes face ``f``.
UPPER_BOXES = 6
(THREE_OF_A_KIND, FOUR_OF_A_KIND, FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT, CHANCE,
 PENTA_BOX) = range(UPPER_BOXES, N_BOXES)
#: Dice per roll, faces per die, rolls per turn (the first and two rerolls).
N_DICE = 5
FACES = 6
REROLLS = 2
#: Fixed points of the boxes that do not score the dice sum (also their joker values).
FULL_HOUSE_POINTS = 25
SMALL_STRAIGHT_POINTS = 30
LARGE_STRAIGHT_POINTS = 40
PENTA_POINTS = 50
#: Upper section: at least ``UPPER_TARGET`` points (three of each face) earn ``UPPER_BONUS``.
UPPER_TARGET = 63
UPPER_BONUS = 35
#: The bonus of a further Penta while the Penta box holds 50 (rule sets with a bonus).
PENTA_BONUS = 100

# --- the state index ----------------------------------------------------------------------

#: Bits of the capped upper total (0..63), and where the fields sit in a state index.
UP_BITS = UPPER_TARGET.bit_length()
UP_SHIFT = 1
MASK_SHIFT = UP_SHIFT + UP_BITS
#: Size of a table indexed by state (1,048,576: reachable or not).
N_STATES = 1 << (N_BOXES + MASK_SHIFT)
#: ``mask`` of a full card.
FULL_CARD = (1 << N_BOXES) - 1


@njit(inline="always")
def state_index(mask, up, fifty):
    """Index of the turn-start state (filled boxes ``mask``, capped upper total ``up``,
    Penta box holds 50: ``fifty``)."""
    return (mask << MASK_SHIFT) | (up << UP_SHIFT) | fifty


@njit(inline="always")
def state_mask(s):
    """Filled boxes of state ``s``."""
    return s >> MASK_SHIFT


@njit(inline="always")
def state_up(s):
    """Capped upper total of state ``s``."""
    return (s >> UP_SHIFT) & ((1 << UP_BITS) - 1)


@njit(inline="always")
def state_fifty(s):
    """1 if the Penta box of state ``s`` holds 50."""
    return s & 1


# --- rule sets ----------------------------------------------------------------------------

JOKER_NEVER, JOKER_IF_FIFTY, JOKER_IF_FILLED = 0, 1, 2
ORDER_FORCED, ORDER_FREE = 0, 1
#: How results write ``joker_when`` and ``joker_order`` (:meth:`RuleSet.to_dict`), by value:
#: the joker never applies, applies while the Penta box holds 50, or once it is filled
#: (50 or 0); a joker Penta goes by the forced order, or to any open box (free joker).
JOKER_WHEN_WORDS = ("never", "if-fifty", "if-filled")
JOKER_ORDER_WORDS = ("forced", "free")


class RuleParams(NamedTuple):
    """What the kernels know of a rule set (see the module docstring's table)."""

    #: ``JOKER_NEVER``, ``JOKER_IF_FIFTY`` or ``JOKER_IF_FILLED``
    joker_when: int
    #: ``ORDER_FORCED`` or ``ORDER_FREE``
    joker_order: int
    #: points of the bonus for a further Penta while the Penta box holds 50 (0: none)
    penta_bonus: int


@dataclass(frozen=True)
class RuleSet:
    """One named Penta rule set (see the module docstring for the table)."""

    name: str
    joker_when: int
    joker_order: int
    penta_bonus: int
    description: str
    published_optimum: float | None = None

    @property
    def params(self) -> RuleParams:
        """The rule set as the kernels take it."""
        return RuleParams(int(self.joker_when), int(self.joker_order), int(self.penta_bonus))

    @property
    def digest(self) -> str:
        """Digest of the rules' content (not the name): what cached tables are keyed by.

        >>> RULE_SETS["seed"].digest == RuleSet("x", JOKER_IF_FIFTY, ORDER_FORCED,
        ...                                     PENTA_BONUS, "").digest
        True
        """
        return text_digest(self.params._asdict())

    def to_dict(self) -> dict[str, Any]:
        """The rule set as JSON-able data, what manifests record as ``rules``: its name,
        description and three parameters, the joker's in words (:data:`JOKER_WHEN_WORDS`,
        :data:`JOKER_ORDER_WORDS`), the bonus in points (0: none). A rule set whose joker
        never applies still states its (unused) order.

        >>> RULE_SETS["no-bonus"].to_dict()  # doctest: +NORMALIZE_WHITESPACE
        {'name': 'no-bonus', 'description': 'no +100 bonus and no joker at all',
         'joker_when': 'never', 'joker_order': 'forced', 'penta_bonus': 0}
        >>> d = RULE_SETS["free-joker"].to_dict()
        >>> d["joker_when"], d["joker_order"], d["penta_bonus"]
        ('if-filled', 'free', 100)
        """
        p = self.params
        return {"name": self.name, "description": self.description,
                "joker_when": JOKER_WHEN_WORDS[p.joker_when],
                "joker_order": JOKER_ORDER_WORDS[p.joker_order],
                "penta_bonus": p.penta_bonus}


RULE_SETS: dict[str, RuleSet] = {
    "seed": RuleSet("seed", JOKER_IF_FIFTY, ORDER_FORCED, PENTA_BONUS,
                    "the app's rules: joker and +100 only while the Penta box holds 50"),
    "hasbro": RuleSet("hasbro", JOKER_IF_FILLED, ORDER_FORCED, PENTA_BONUS,
                      "forced joker whenever the Penta box is filled; +100 only with 50",
                      254.58772873),
    "free-joker": RuleSet("free-joker", JOKER_IF_FILLED, ORDER_FREE, PENTA_BONUS,
                          "with the Penta box filled a Penta may go in any open box; "
                          "joker values only if its upper box is filled; +100 only with 50",
                          254.58960948),
    "no-bonus": RuleSet("no-bonus", JOKER_NEVER, ORDER_FORCED, 0,
                        "no +100 bonus and no joker at all", 245.87077),
}
DEFAULT_RULES = "seed"


def get_rules(name: str | None) -> RuleSet:
    """The rule set called ``name`` (``None`` = ``seed``); ``UserError`` if unknown."""
    if name is None:
        return RULE_SETS[DEFAULT_RULES]
    key = name.strip().lower()
    if key not in RULE_SETS:
        raise UserError(f"unknown Penta rule set '{name}'; valid: {', '.join(RULE_SETS)}")
    return RULE_SETS[key]


def refuse_farkle_options(*options: tuple[str, Any]) -> None:
    """A ``UserError`` for the first of ``options`` (flag, value) that is given: the
    Farkle options (a target, an ending rule, who moves first) mean nothing in Penta.

    >>> refuse_farkle_options(("--target", None), ("--ending", "last-round"))
    Traceback (most recent call last):
    dicelab.errors.UserError: --ending applies to Farkle only; ...
    """
    for name, value in options:
        if value is not None:
            raise UserError(f"{name} applies to Farkle only; a Penta game is 13 turns per "
                            "seat, every seat on its own card")
