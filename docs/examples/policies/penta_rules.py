"""Penta policies, a few lines each: name one on the command line as
``docs/examples/policies/penta_rules.py:NAME`` (docs/policies.md).

A Penta policy is a function of (card, roll, rolls_left): with rolls left it returns the
dice to keep (all five to stop rolling), with none the box to fill.
"""

import numpy as np

from dicelab.penta.policy import ValuesPolicy, points_of
from dicelab.penta.rules import N_STATES

UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")


def most_points(card, roll, rolls_left):
    """Never reroll; put the roll where it scores the most now."""
    if rolls_left:
        return roll
    points = points_of(card, roll)
    return max(points, key=points.get)


def chase_penta(card, roll, rolls_left):
    """Keep the most common face (the higher on a tie) and reroll the rest, chasing a
    Penta; then the upper box of that face if open, else the box with the most points."""
    face = max(set(roll), key=lambda f: (roll.count(f), f))
    if rolls_left:
        return [d for d in roll if d == face]
    points = points_of(card, roll)
    if "penta" in points and points["penta"] == 50:
        return "penta"
    if UPPER[face - 1] in points:
        return UPPER[face - 1]
    return max(points, key=points.get)


def keep_high(card, roll, rolls_left, high=5):
    """Keep the dice showing ``high`` or more and reroll the rest; then the box with the
    most points. A parameter: ``penta_rules.py:keep_high:high=4``."""
    if rolls_left:
        return [d for d in roll if d >= high]
    points = points_of(card, roll)
    return max(points, key=points.get)


#: What ``dicelab tune`` searches: ``dicelab tune penta_rules.py:keep_high --against
#: greedy --monte-carlo --budget 20000``.
keep_high.space = {"high": range(2, 7)}


#: A policy given as values: the one-turn widget (how ``optimal`` decides) under values
#: of every state, here zero: nothing counts but this turn's points, so it plays as
#: ``greedy`` does. A policy written this way is one decision block: ``compare --exact``
#: and ``evaluate`` answer it exactly (docs/policies.md).
this_turn = ValuesPolicy("this_turn", np.zeros(N_STATES))
