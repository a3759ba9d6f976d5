"""The form in which an exact Farkle policy reaches the simulation kernel.

An exact policy (``max-ev``, ``fastest``, ``optimal-win``) is a value table over the
decision points of a turn. The kernel plays it like this, after every scoring roll:

1. **Set-aside.** For each option of the roll in the rule set's set-aside encoding
   (:class:`dicelab.farkle.rules.SetAsides`: every distinct pair of points and dice
   left), the turn would continue with ``tp' = tp + points`` and ``n'`` dice (6 after hot
   dice). The kernel picks the option whose state has the highest ``value``; ties go to
   more points ``tp'``, then to more dice ``n'`` (the encoding's order).
2. **Bank or roll.** At that state, ``bank == 1`` means bank ``tp'``, else roll ``n'``.

State index, with totals and points in units of 50 (all are multiples of 50):

* normal play: ``value[m, o, p, n']`` with ``m = min(my_total // 50, M - 1)``,
  ``o = min(best_opponent_total // 50, O - 1)``, ``p = min(tp' // 50, P - 1)``;
  a policy that ignores a quantity has that dimension of size 1 (``max-ev``: M = O = 1;
  ``fastest``: O = 1);
* last round, when this seat did not trigger it and must beat the leader, if the
  policy has a last-round table: ``last_value[d, p, n']`` with
  ``d = min((leader_total - my_total) // 50, D - 1)``; without one (``None``) the
  normal table is used.

``value`` is "higher is better" (for ``fastest``, minus the expected number of
turns); its scale is the policy's own. The solver must size ``P`` so that clamping
``p`` never changes a decision: from ``P - 1`` on the policy banks with every ``n'``,
and values up to ``P - 1`` are exact for every state a single roll can reach from a
state where the policy still rolls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PolicyTable:
    """Decision table of an exact Farkle policy (see the module docstring).

    ``value``: float32, shape (M, O, P, 7) (index 0 of the last axis unused);
    ``bank``: uint8, same shape; ``last_value``/``last_bank``: shape (D, P, 7) or None.
    """

    name: str
    value: np.ndarray
    bank: np.ndarray
    last_value: np.ndarray | None = None
    last_bank: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.value.ndim != 4 or self.value.shape[-1] != 7:
            raise ValueError("value must have shape (M, O, P, 7)")
        if self.bank.shape != self.value.shape:
            raise ValueError("bank must have the shape of value")
        if (self.last_value is None) != (self.last_bank is None):
            raise ValueError("last_value and last_bank go together")
        if self.last_value is not None:
            if self.last_value.ndim != 3 or self.last_value.shape[1:] != self.value.shape[2:]:
                raise ValueError("last_value must have shape (D, P, 7)")
            if self.last_bank.shape != self.last_value.shape:
                raise ValueError("last_bank must have the shape of last_value")
