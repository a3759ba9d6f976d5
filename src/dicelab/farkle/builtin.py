"""dicelab's own Farkle policies as :class:`~dicelab.farkle.policy.Policy` objects
(layer 2), and :func:`as_policy`, the one way from any policy name or object to one.

Each plays as the simulation kernel plays the same name (:mod:`dicelab.farkle.kernels`):

* :class:`ThresholdPolicy` (``threshold-T``): set aside all scoring dice
  (:func:`~dicelab.farkle.policy.all_scoring`), bank once the turn points reach ``T``;
* :class:`AiPolicy` (``ai``): all scoring dice, then the thresholds of
  :func:`dicelab.farkle.kernels.ai_thresholds` (the one place the ai rule is written);
* :class:`TablePolicy` (``max-ev``, ``fastest``, ``optimal-win``, best responses, any
  :class:`~dicelab.farkle.policy_table.PolicyTable`): the set-aside of the highest value
  (:func:`~dicelab.farkle.policy.by_value`), then the table's bank, with its last-round
  table or its last-round rule (``"chase"``, ``"rule-to-beat"``).

Every one banks only where the rules allow it.

>>> from dicelab.farkle.rules import PRESETS
>>> from dicelab.farkle.policy import State
>>> s = State((1, 5, 2, 3, 3, 4), 300, 0, (1200, 2000), (0, 0), False, 10_000,
...           PRESETS["default"])
>>> as_policy("threshold-400", PRESETS["default"], 10_000).decide(s)
Move(keep=(1, 5), bank=True)
>>> ai = as_policy("ai", PRESETS["default"], 10_000)
>>> ai.decide(s), ai.decide(s._replace(totals=(1200, 5000)))  # 3,800 behind: 600 to bank
(Move(keep=(1, 5), bank=True), Move(keep=(1, 5), bank=False))
"""

from __future__ import annotations

from dicelab.errors import UserError
from dicelab.farkle.kernels import P_CHASE, ai_thresholds
from dicelab.farkle.policy import Move, Policy, State, all_scoring, by_value
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import POINT_UNIT, FarkleRules
from dicelab.registry import PolicySpec, parse_policy

#: The ai rule as plain Python: the kernel's own function, not a copy of it.
_ai_thresholds = ai_thresholds.py_func


class ThresholdPolicy:
    """``threshold-T``: all scoring dice, bank from ``T`` turn points on."""

    def __init__(self, threshold: int, name: str | None = None) -> None:
        self.threshold = int(threshold)
        self.name = name or f"threshold-{self.threshold}"

    def decide(self, state: State) -> Move:
        o = all_scoring(state)
        return Move(o.keep, state.turn_points + o.points >= self.threshold
                    and state.can_bank(o))


class AiPolicy:
    """``ai`` with its parameters (``params``: one row of the kernel's ``Seats.params``,
    :func:`dicelab.farkle.fixed.ai_params`)."""

    def __init__(self, params, name: str = "ai") -> None:
        self.params = tuple(int(p) for p in params)
        self.name = name
        self._out = [0] * 7

    def decide(self, state: State) -> Move:
        o = all_scoring(state)
        me, best = state.my_total, state.opp_total
        floor = best - me + 1 if state.last_round and self.params[P_CHASE] else 0
        _ai_thresholds(self.params, max(best - me, 0), floor, self._out)
        tp = state.turn_points + o.points
        return Move(o.keep, tp >= self._out[o.dice_left] and state.can_bank(o))


class TablePolicy:
    """A :class:`~dicelab.farkle.policy_table.PolicyTable` played as the kernel plays it
    (the table's docstring)."""

    def __init__(self, table: PolicyTable, name: str | None = None) -> None:
        self.table = table
        self.name = name or table.name

    def decide(self, state: State) -> Move:
        pt = self.table
        me, best = state.my_total, state.opp_total
        chase = state.last_round and pt.last_round != "rule"
        if state.last_round and pt.last_value is not None:
            d = min(max((best - me) // POINT_UNIT, 0), pt.last_value.shape[0] - 1)
            value, bank = pt.last_value[d], pt.last_bank[d]
        else:
            value, bank = pt.normal(state.my_lost, state.opp_lost, me, best)
        o = by_value(state, value)
        tp = state.turn_points + o.points
        banks = bool(bank[min(tp // POINT_UNIT, value.shape[0] - 1), o.dice_left])
        if chase:
            banks = me + tp > best and (pt.last_round == "chase" or banks)
        return Move(o.keep, banks and state.can_bank(o))


def as_policy(policy, rules: FarkleRules, target: int, n_seats: int = 2) -> Policy:
    """The :class:`~dicelab.farkle.policy.Policy` that plays ``policy`` in a game of
    ``n_seats`` to ``target`` under ``rules``: a name (``"ai:base=350"``), a
    ``PolicySpec`` (a user's too: its object), a ``PolicyTable``, or an object with
    ``decide`` (as it is). Exact policies are solved or loaded from the cache here."""
    if isinstance(policy, str):
        policy = parse_policy(policy, "farkle")
    if isinstance(policy, PolicySpec):
        if policy.game != "farkle":
            raise UserError(f"policy '{policy.name}' is a {policy.game} policy, not farkle")
        fam = policy.family
        if fam == "threshold":
            return ThresholdPolicy(policy.params["threshold"], policy.name)
        if fam == "ai":
            from dicelab.farkle.fixed import ai_params

            return AiPolicy(ai_params(policy).tolist(), policy.name)
        if fam == "user":
            return as_policy(policy.policy, rules, target, n_seats)
        from dicelab.farkle.exact import policy_table

        return TablePolicy(policy_table(policy, rules, target, n_seats), policy.name)
    if isinstance(policy, PolicyTable):
        return TablePolicy(policy)
    if callable(getattr(policy, "decide", None)) and hasattr(policy, "name"):
        return policy
    raise UserError(f"{policy!r} is not a Farkle policy: give a policy name, a PolicyTable "
                    "or an object with a name and decide(state) -> Move")


def tabulable(policy) -> bool:
    """Whether the simulation kernels can play this seat (a built-in name, a
    ``PolicyTable``, or an object with a ``table`` method); a policy that
    only decides move by move is played by the referee
    (:func:`dicelab.farkle.pysim.simulate_python`)."""
    if isinstance(policy, PolicySpec):
        return policy.family != "user" or tabulable(policy.policy)
    return isinstance(policy, PolicyTable) or callable(getattr(policy, "table", None))


__all__ = ["AiPolicy", "TablePolicy", "ThresholdPolicy", "as_policy", "tabulable"]
