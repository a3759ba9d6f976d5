"""Example Farkle policies: bank rules dicelab can simulate and solve exactly.

Try them:
    dicelab evaluate docs/examples/policies/farkle_rules.py:practical
    dicelab compare docs/examples/policies/farkle_rules.py:cautious ai --exact
    dicelab tune docs/examples/policies/farkle_rules.py:practical --against ai --params base,dice
"""

from dicelab.farkle.policy import bank_rule


@bank_rule(space={"base": range(200, 601, 50), "dice": range(3, 7),
                  "behind": range(4, 21, 2)})
def practical(my, opp, turn_points, dice_left, *, base=300, dice=4, behind=6):
    """Three numbers to remember: bank from `base` points, plus a point for every `behind`
    points the turn started behind; with `dice` or more dice left, from twice that."""
    need = base + max(opp - my, 0) // behind
    if dice_left >= dice:
        need *= 2
    return turn_points >= need


@bank_rule
def cautious(my, opp, turn_points, dice_left, *, base=350, big=1000):
    """Bank at `base`, unless 3 or more dice are left and the turn is below `big`."""
    return turn_points >= (big if dice_left >= 3 else base)


@bank_rule(last_round="rule")
def threshold_300(my, opp, turn_points, dice_left):
    """dicelab's threshold-300, written as a user would: the same games, bit for bit."""
    return turn_points >= 300


@bank_rule(setaside="max-ev")
def greedy_sets(my, opp, turn_points, dice_left, *, base=300):
    """Set aside what max-ev would, bank at `base`."""
    return turn_points >= base
