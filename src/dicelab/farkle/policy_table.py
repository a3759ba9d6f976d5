"""The form in which an exact Farkle policy reaches the simulation kernel.

An exact policy (``max-ev``, ``fastest``, ``optimal-win``) is a value table over the
decision points of a turn. The kernel plays it like this, after every scoring roll:

1. **Set-aside.** For each option of the roll in the rule set's set-aside encoding
   (:class:`dicelab.farkle.rules.SetAsides`: every distinct pair of points and dice
   left), the turn would continue with ``tp' = tp + points`` and ``n'`` dice (6 after hot
   dice). The kernel picks the option whose state has the highest ``value``; ties go to
   more points ``tp'``, then to more dice ``n'`` (the encoding's order).
   A table with ``keep_all`` skips this step: it sets aside all scoring dice, as
   ``threshold-T`` does.
2. **Bank or roll.** At that state, ``bank == 1`` means bank ``tp'``, else roll ``n'``.

State index, with totals and points in units of 50 (all are multiples of 50; banked
totals may be negative under the farkle penalty, and ``//`` is floor division):

* normal play, in one of two forms:

  - 4-D, ``value[m, o, p, n']`` of shape (M, O, P, 7);
  - 6-D, ``value[s_me, s_opp, m, o, p, n']`` of shape (S, S, M, O, P, 7), for policies
    that play the farkle penalty: ``s_me = min(my_streak, S - 1)`` and
    ``s_opp = min(opp_streak, S - 1)`` with ``my_streak`` this seat's lost turns in a
    row before this turn and ``opp_streak`` the best opponent's (the seat whose total is
    ``best_opponent_total``; among several seats with that total, the lowest-numbered;
    0 when alone). A lost-turn count restarts at 0 after a bank and after the
    penalty's ``PENALTY_STREAK``-th lost turn (with or without a penalty), so it is
    below ``PENALTY_STREAK``. A 4-D table is the 6-D table with S = 1;

  with ``m = min(max(my_total // 50 + floor, 0), M - 1)``,
  ``o = min(max(best_opponent_total // 50 + floor, 0), O - 1)``,
  ``p = min(tp' // 50, P - 1)``: index 0 of the M and O axes stands for the total
  ``-floor * 50`` (``floor`` >= 0, default 0) and lower totals read row 0 too. A
  policy that ignores a quantity has that dimension of size 1 (``max-ev``: M = O = 1;
  ``fastest``: O = 1);
* last round, when this seat did not trigger it and must beat the leader, if the
  policy has a last-round table: ``last_value[d, p, n']`` of shape (D, P, 7) with
  ``d = min(max((leader_total - my_total) // 50, 0), D - 1)`` (no streak axes and
  no floor in either form); without one (``None``) the normal table is used, at the
  leader's total. A table's ``last_round`` can change its banks there (it then has no
  last-round table; set-asides still follow its normal table at the leader's total):
  ``"chase"`` banks exactly when its total would beat the leader's; ``"rule-to-beat"``
  banks when its table banks and its total would beat the leader's (as ``ai`` with
  ``chase=1``). Tabulated bank rules use them (:class:`dicelab.farkle.policy.BankRule`).

``value`` is "higher is better" (for ``fastest``, minus the expected number of
turns); its scale is the policy's own. The solver must size ``P`` so that clamping
``p`` never changes a decision: from ``P - 1`` on the policy banks with every ``n'``,
and values up to ``P - 1`` are exact for every state a single roll can reach from a
state where the policy still rolls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dicelab.farkle.rules import POINT_UNIT
from dicelab.text import is_whole

#: How a table banks in the last round (see the module docstring).
LAST_ROUND_RULES = ("rule", "rule-to-beat", "chase")


@dataclass(frozen=True)
class PolicyTable:
    """Decision table of an exact Farkle policy (see the module docstring).

    ``value``: float32, shape (M, O, P, 7) or (S, S, M, O, P, 7) (index 0 of the last
    axis unused; a 6-D table with S = 1 is kept in the 4-D form); ``bank``: uint8, same
    shape; ``last_value``/``last_bank``: shape (D, P, 7) or None; ``floor``: units of 50
    below zero that row 0 of the M and O axes stands for; ``last_round``: ``"rule"`` (the
    tables decide), ``"chase"`` or ``"rule-to-beat"`` (see the module docstring);
    ``keep_all``: it sets aside all scoring dice (the most dice, then the most points, as
    ``threshold-T`` does) whatever ``value`` says, then ``bank`` decides.
    """

    name: str
    value: np.ndarray
    bank: np.ndarray
    last_value: np.ndarray | None = None
    last_bank: np.ndarray | None = None
    floor: int = 0
    last_round: str = "rule"
    keep_all: bool = False

    def __post_init__(self) -> None:
        if self.value.ndim == 6 and self.value.shape[0] == 1:  # the 4-D form (S = 1)
            object.__setattr__(self, "value", self.value[0, 0])
            object.__setattr__(self, "bank", self.bank[0, 0])
        v = self.value
        if v.ndim not in (4, 6) or v.shape[-1] != 7 or min(v.shape) < 1:
            raise ValueError("value must have shape (M, O, P, 7) or (S, S, M, O, P, 7)")
        if v.ndim == 6 and v.shape[0] != v.shape[1]:
            raise ValueError("the streak axes of a 6-D value must have the same size "
                             f"(S, S, M, O, P, 7), not {v.shape}")
        if self.bank.shape != v.shape:
            raise ValueError("bank must have the shape of value")
        if not is_whole(self.floor) or self.floor < 0:
            raise ValueError(f"floor must be an integer >= 0, not {self.floor!r}")
        if self.last_round not in LAST_ROUND_RULES:
            raise ValueError(f"last_round is one of {LAST_ROUND_RULES}, not {self.last_round!r}")
        if self.last_round != "rule" and self.last_value is not None:
            raise ValueError("a table that chases in the last round has no last-round table")
        if (self.last_value is None) != (self.last_bank is None):
            raise ValueError("last_value and last_bank go together")
        if self.last_value is not None:
            if self.last_value.ndim != 3 or self.last_value.shape[1:] != v.shape[-2:]:
                raise ValueError("last_value must have shape (D, P, 7)")
            if self.last_bank.shape != self.last_value.shape:
                raise ValueError("last_bank must have the shape of last_value")

    @property
    def streaks(self) -> int:
        """S: the size of the lost-turn axes (1 for a 4-D table)."""
        return self.value.shape[0] if self.value.ndim == 6 else 1

    @property
    def dims(self) -> tuple[int, int, int, int]:
        """(S, M, O, P)."""
        m, o, p = self.value.shape[-4:-1]
        return self.streaks, m, o, p

    def clamped(self, my_streak, opp_streak, my_units, opp_units) -> tuple:
        """The indices (S, S, M, O axes) of normal play at these lost-turn counts and
        totals (units of 50), clamped as the kernel does (the module docstring); arrays
        broadcast."""
        s_dim, m_dim, o_dim, _ = self.dims
        return (np.clip(my_streak, 0, s_dim - 1), np.clip(opp_streak, 0, s_dim - 1),
                np.clip(np.add(my_units, self.floor), 0, m_dim - 1),
                np.clip(np.add(opp_units, self.floor), 0, o_dim - 1))

    def normal(self, my_streak: int, opp_streak: int, my_total: int, opp_total: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """(value, bank) of shape (P, 7) of normal play at these lost-turn counts and
        totals (points), indexed as the kernel does (the module docstring)."""
        at = self.clamped(my_streak, opp_streak, my_total // POINT_UNIT,
                          opp_total // POINT_UNIT)[6 - self.value.ndim:]
        return self.value[at], self.bank[at]
