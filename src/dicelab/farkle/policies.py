"""Seat policies as the kernel's plain arrays (layer 2).

:func:`seat_arrays` turns the parsed policies of a game (:class:`PolicySpec` from
:mod:`dicelab.registry`, or a ready :class:`PolicyTable`) into one monomorphic set of
arrays for :mod:`dicelab.farkle.kernels`:

* ``kinds[s]``: ``THRESHOLD``, ``AI`` or ``TABLE``;
* ``params[s, :]``: THRESHOLD: ``[T, 0, ...]``; AI: ``[base, step, per, max-steps,
  two-dice, one-die, chase]`` (:data:`dicelab.registry.AI_DEFAULTS`);
* table policies: every seat's table flattened into one float32 ``table_value`` and one
  uint8 ``table_bank`` array, ``table_meta[s] = [offset, M, O, P, last_offset, D, S,
  floor]`` (a 4-D table as the 6-D one with S = 1).

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

import numpy as np

from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.builtin import KernelCode, as_policy, family_of
from dicelab.farkle.fixed import joined, lead_rows
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    POINT_UNIT,
    FarkleRules,
    check_points,
    check_target,
    lost_turn_runs,
)
from dicelab.jit import read_only
from dicelab.registry import PolicySpec
from dicelab.resources import check_memory


def seat_of(policy, rules: FarkleRules, target: int) -> KernelCode | PolicyTable:
    """A policy object as the simulation kernel plays it: by a rule of the kernel's own (its
    :class:`KernelCode`), or by a :class:`PolicyTable`: a table as it is, a tabulable policy
    (one with a ``table(rules, target, leads)`` method, such as a
    :class:`dicelab.farkle.policy.BankRule`) as its table."""
    if isinstance(policy, PolicyTable):
        return policy
    if callable(getattr(policy, "kernel_seat", None)):
        seat = policy.kernel_seat(rules, target)
        if isinstance(seat, KernelCode | PolicyTable):
            return seat
    if isinstance(policy, str) or not hasattr(policy, "name"):
        raise TypeError(f"a seat is a PolicySpec or a PolicyTable or a policy object, not "
                        f"{type(policy)}")
    if callable(getattr(policy, "table", None)):
        return policy.table(rules, target, lead_rows([policy], rules, target))
    raise UserError(f"policy '{getattr(policy, 'name', policy)}' decides move by move and "
                    "cannot be tabulated for the simulation kernels")


def seat_arrays(seats: list[PolicySpec | PolicyTable], rules: FarkleRules, target: int
                ) -> K.Seats:
    """The kernels' :class:`~dicelab.farkle.kernels.Seats` for the given seats
    (PolicySpecs of Farkle, or PolicyTables).

    >>> from dicelab.registry import parse_policy
    >>> from dicelab.farkle.rules import PRESETS
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
    meta[:, [K.T_M, K.T_O, K.T_P, K.T_D, K.T_S]] = 1  # a table's sizes: 1 but where set
    values: list[np.ndarray] = []
    banks: list[np.ndarray] = []

    def place(value: np.ndarray, bank: np.ndarray) -> int:
        """Append a table's value and bank to the shared arrays; returns its offset."""
        values.append(np.ascontiguousarray(value, dtype=np.float32).ravel())
        banks.append(np.ascontiguousarray(bank, dtype=np.uint8).ravel())
        return sum(v.size for v in values[:-1])

    placed: dict[PolicySpec, int] = {}  # a policy in several seats: one table, shared
    for s, seat in enumerate(seats):
        if isinstance(seat, PolicySpec) and seat in placed:
            kinds[s], meta[s] = K.TABLE, meta[placed[seat]]
            continue
        policy = as_policy(seat, rules, target, n) if isinstance(seat, PolicySpec) else seat
        pt = seat_of(policy, rules, target)
        if isinstance(pt, KernelCode):  # played by a rule of the kernel's own
            kinds[s], params[s] = pt
            continue
        if isinstance(seat, PolicySpec):
            placed[seat] = s
        kinds[s] = K.TABLE
        meta[s, K.T_OFFSET] = place(pt.value, pt.bank)
        meta[s, K.T_S], meta[s, K.T_M], meta[s, K.T_O], meta[s, K.T_P] = pt.dims
        meta[s, K.T_FLOOR] = pt.floor
        meta[s, K.T_KEEP_ALL] = int(pt.keep_all)
        if pt.last_round != "rule":
            meta[s, K.T_LAST_OFFSET] = K.CHASE if pt.last_round == "chase" else K.CHASE_RULE
        if pt.last_value is not None:
            meta[s, K.T_LAST_OFFSET] = place(pt.last_value, pt.last_bank)
            meta[s, K.T_D] = pt.last_value.shape[0]
    if len(values) > 1:  # copied into one array, next to the originals
        check_memory(f"the seats' {len(values)} policy tables, copied together",
                     2 * sum(v.nbytes + b.nbytes for v, b in zip(values, banks, strict=True)))
    if not values:  # never empty: the kernel's argument types are the same without tables
        place(np.zeros(1), np.zeros(1))
    return K.Seats(kinds, params, meta, read_only(joined(values, np.float32)),
                   read_only(joined(banks, np.uint8)))  # shared or made here: one type


def bank_table(spec: PolicySpec, rules: FarkleRules, target: int | None = None,
               my_total: int | None = None, opp_total: int | None = None, progress=None,
               my_farkles: int = 0, opp_farkles: int = 0, floor: int | None = None
               ) -> tuple[np.ndarray, str]:
    """(bank table, title): a Farkle policy's bank decisions at the given game scores and
    runs of lost turns (``my_farkles``, ``opp_farkles``:
    :func:`~dicelab.farkle.rules.lost_turn_runs`; under a farkle
    penalty the totals may be below zero, down to the solvers' floor: ``floor`` points,
    for ``fastest`` and ``optimal-win``, :meth:`~dicelab.farkle.builtin.Family.floor`).

    The table is uint8 (P, 7): 1 where the policy banks ``p * 50`` turn points with ``n``
    dice left (column 0 and row 0 unused), as :func:`dicelab.plots.policy_heatmap_figure`
    draws it; rows past the last are like the last row. The rules' minimum to bank and
    hot-dice rule are applied (:func:`dicelab.farkle.solitaire.legal_bank`). An exact
    policy is solved or loaded from the cache (``progress(fraction)`` through a solve),
    after the totals and counts are checked. The title names the counts where the policy
    reads them, and says so where it does not, and the floor where it has one. A target
    or a total (None: the default target, totals 0) given to a policy whose decisions do
    not read it is refused (:meth:`~dicelab.farkle.builtin.Family.check_picture`).

    >>> from dicelab.registry import parse_policy
    >>> from dicelab.farkle.rules import PRESETS
    >>> bank, title = bank_table(parse_policy("threshold-300"), PRESETS["default"])
    >>> int(bank[6, 1]), int(bank[5, 1]), title
    (1, 0, 'threshold-300 (rules default)')
    """
    family = family_of(spec)
    family.check_picture(spec, target, my_total, opp_total)
    t = check_target(target)
    my_total, opp_total = my_total or 0, opp_total or 0
    my_farkles, opp_farkles, _ = lost_turn_runs(rules, my_farkles, opp_farkles,
                                                "these decisions")
    with family.floor(spec, rules, floor):
        low = -rules.penalty_floor() * POINT_UNIT  # under the penalty: below zero
        my_total = check_points("--me", my_total, low, t - POINT_UNIT)
        opp_total = check_points("--opp", opp_total, low, t - POINT_UNIT)
        bank, title = family.bank_table(spec, rules, t, my_total, opp_total, progress,
                                        my_farkles, opp_farkles)
    deepest = family.floor_points(rules, floor)
    return bank, title if deepest is None else f"{title}; totals down to -{deepest:,}"
