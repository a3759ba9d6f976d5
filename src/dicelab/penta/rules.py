"""Penta rule sets as named data (RULES.md §1).

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

Kernels receive a rule set as ``RuleSet.params``: an int64 array
``[joker_when, joker_order, penta_bonus]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dicelab.errors import UserError

#: Box order used everywhere (index = box number).
BOX_NAMES = (
    "ones", "twos", "threes", "fours", "fives", "sixes",
    "three-of-a-kind", "four-of-a-kind", "full-house", "small-straight",
    "large-straight", "chance", "penta",
)
N_BOXES = 13
UPPER_BOXES = 6
PENTA_BOX = 12
FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT = 8, 9, 10
#: Upper section threshold and bonus.
UPPER_TARGET = 63
UPPER_BONUS = 35

JOKER_NEVER, JOKER_IF_FIFTY, JOKER_IF_FILLED = 0, 1, 2
ORDER_FORCED, ORDER_FREE = 0, 1


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
    def params(self) -> np.ndarray:
        """``[joker_when, joker_order, penta_bonus]`` as int64, what the kernels take."""
        return np.array([self.joker_when, self.joker_order, self.penta_bonus], dtype=np.int64)


RULE_SETS: dict[str, RuleSet] = {
    "seed": RuleSet("seed", JOKER_IF_FIFTY, ORDER_FORCED, 100,
                    "the app's rules: joker and +100 only while the Penta box holds 50"),
    "hasbro": RuleSet("hasbro", JOKER_IF_FILLED, ORDER_FORCED, 100,
                      "forced joker whenever the Penta box is filled; +100 only with 50",
                      254.58772873),
    "free-joker": RuleSet("free-joker", JOKER_IF_FILLED, ORDER_FREE, 100,
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
