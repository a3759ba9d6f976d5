"""Seat policies as the kernel's plain arrays (layer 2).

:func:`seat_arrays` turns the parsed policies of a game (:class:`PolicySpec` from
:mod:`dicelab.registry`, or a ready :class:`PolicyTable`) into one monomorphic set of
arrays for :mod:`dicelab.farkle.kernels`:

* ``kinds[s]``: ``THRESHOLD``, ``AI`` or ``TABLE``;
* ``params[s, :]``: THRESHOLD: ``[T, 0, ...]``; AI: ``[base, step, per, max-steps,
  two-dice, one-die, chase]`` (:data:`dicelab.registry.AI_DEFAULTS`);
* table policies: every seat's table flattened into one float32 ``table_value`` and one
  uint8 ``table_bank`` array, ``table_meta[s] = [offset, M, O, P, last_offset, D]``.

The ``ai`` policy (RULES.md §3), as the kernel plays it: after every scoring roll set
aside all scoring dice; with ``deficit = max(0, best opponent total - own total)``
(totals before this turn), bank when the turn points are at least
``base + step * min(max-steps, deficit // per)``, minus ``two-dice`` if 2 dice would be
left to roll and minus ``one-die`` if 1 die would be left. After hot dice, 6 dice are
left to roll (no reduction). In the last round (the seat plays its one remaining turn
and must beat the leader's total) with ``chase=1`` it never banks unless its total
would then exceed the leader's (a tie does not beat); the threshold still applies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.scoring import ScoringTable
from dicelab.registry import PolicySpec

_AI_KEYS = ("base", "step", "per", "max-steps", "two-dice", "one-die", "chase")
_EXACT_FAMILIES = ("max-ev", "fastest", "optimal-win")


@dataclass(frozen=True)
class SeatArrays:
    """The kernel's view of the seats (see the module docstring for the layout)."""

    names: tuple[str, ...]
    kinds: np.ndarray
    params: np.ndarray
    table_meta: np.ndarray
    table_value: np.ndarray
    table_bank: np.ndarray

    @property
    def n_seats(self) -> int:
        return len(self.names)

    def kernel_args(self) -> tuple:
        return (self.kinds, self.params, self.table_meta, self.table_value, self.table_bank)


def policy_params(spec: PolicySpec) -> dict[str, int]:
    """The parameters of a threshold/ai policy as recorded in manifests."""
    return dict(spec.params)


def exact_policy_table(spec: PolicySpec, table: ScoringTable, target: int,
                       n_seats: int) -> PolicyTable:
    """The PolicyTable of an exact policy (max-ev, fastest, optimal-win), from the solver."""
    try:
        from dicelab.farkle.exact import policy_table
    except ImportError:
        raise UserError(f"policy '{spec.name}' is not available yet") from None
    return policy_table(spec, table, target, n_seats)


def seat_arrays(seats: list[PolicySpec | PolicyTable], table: ScoringTable, target: int
                ) -> SeatArrays:
    """Kernel arrays for the given seats (PolicySpecs of Farkle, or PolicyTables).

    >>> from dicelab.registry import parse_policy
    >>> from dicelab.farkle.scoring import PRESETS
    >>> sa = seat_arrays([parse_policy("threshold-300"), parse_policy("ai")],
    ...                  PRESETS["default"], 10000)
    >>> sa.kinds.tolist(), int(sa.params[0, 0])
    ([0, 1], 300)
    """
    n = len(seats)
    kinds = np.zeros(n, dtype=np.int64)
    params = np.zeros((n, K.N_PARAMS), dtype=np.int64)
    meta = np.zeros((n, K.N_TABLE_META), dtype=np.int64)
    meta[:, K.T_LAST_OFFSET] = -1
    meta[:, K.T_M:K.T_P + 1] = 1
    meta[:, K.T_D] = 1
    values: list[np.ndarray] = []
    banks: list[np.ndarray] = []
    offset = 0
    names = []
    for s, seat in enumerate(seats):
        if isinstance(seat, PolicySpec):
            if seat.game != "farkle":
                raise UserError(f"policy '{seat.name}' is a {seat.game} policy, not farkle")
            names.append(seat.name)
            if seat.family == "threshold":
                kinds[s] = K.THRESHOLD
                params[s, K.P_THRESHOLD] = seat.params["threshold"]
                continue
            if seat.family == "ai":
                kinds[s] = K.AI
                for j, key in enumerate(_AI_KEYS):
                    params[s, j] = seat.params[key]
                continue
            if seat.family not in _EXACT_FAMILIES:
                raise UserError(f"policy '{seat.name}' cannot play Farkle")
            pt = exact_policy_table(seat, table, target, n)
        elif isinstance(seat, PolicyTable):
            names.append(seat.name)
            pt = seat
        else:
            raise TypeError(f"a seat is a PolicySpec or a PolicyTable, not {type(seat)}")
        kinds[s] = K.TABLE
        m, o, p, _ = pt.value.shape
        meta[s, K.T_OFFSET] = offset
        meta[s, K.T_M], meta[s, K.T_O], meta[s, K.T_P] = m, o, p
        values.append(np.ascontiguousarray(pt.value, dtype=np.float32).ravel())
        banks.append(np.ascontiguousarray(pt.bank, dtype=np.uint8).ravel())
        offset += pt.value.size
        if pt.last_value is not None:
            meta[s, K.T_LAST_OFFSET] = offset
            meta[s, K.T_D] = pt.last_value.shape[0]
            values.append(np.ascontiguousarray(pt.last_value, dtype=np.float32).ravel())
            banks.append(np.ascontiguousarray(pt.last_bank, dtype=np.uint8).ravel())
            offset += pt.last_value.size
    # never empty, so the kernel's argument types are the same with or without tables
    table_value = np.concatenate(values) if values else np.zeros(1, dtype=np.float32)
    table_bank = np.concatenate(banks) if banks else np.zeros(1, dtype=np.uint8)
    return SeatArrays(tuple(names), kinds, params, meta, table_value, table_bank)
