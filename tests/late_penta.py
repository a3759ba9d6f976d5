"""The small Penta variant of the tests: penta-win's tables (the table of every target and
``optimal``'s distribution of the points to come) for the states of the last layers only,
solved by the same kernels as the whole tables. A game on them is exact from the cards of
those layers on; before, a row is empty (every option worth 0 to penta-win, which then
plays ``optimal``'s choice)."""

from __future__ import annotations

import dataclasses

import numpy as np

from dicelab import cache as disk_cache
from dicelab.penta import objective_play, objectives
from dicelab.penta.objective_play import points_rows, solve_points
from dicelab.penta.objectives import new_row_table
from dicelab.penta.rules import (
    MASK_SHIFT,
    N_BOXES,
    N_STATES,
    PENTA_BOX,
    UP_BITS,
    UP_SHIFT,
    UPPER_BOXES,
    UPPER_TARGET,
    get_rules,
)
from dicelab.penta.solver import layer_states, solve_rows

#: The solver runs on the layers with at least this many boxes filled (two turns left: the
#: cards of the tests; the layer of three boxes open costs three times as much again).
FIRST_LAYER = N_BOXES - 2


def reach(states) -> np.ndarray:
    """The states a game from ``states`` may reach, ``states`` among them (a superset: a
    box filled takes any upper total from the state's up, and the Penta box 0 or 50)."""
    seen, todo = set(), [int(s) for s in states]
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        mask, up, fifty = s >> MASK_SHIFT, (s >> UP_SHIFT) & ((1 << UP_BITS) - 1), s & 1
        for b in range(N_BOXES):
            if not mask >> b & 1:
                ups = range(up, UPPER_TARGET + 1) if b < UPPER_BOXES else (up,)
                fifties = {fifty, 1} if b == PENTA_BOX else {fifty}
                todo += [(mask | 1 << b) << MASK_SHIFT | u << UP_SHIFT | f
                         for u in ups for f in fifties]
    return np.array(sorted(seen), dtype=np.int64)


def late(spec, first: int = FIRST_LAYER, cards=None):
    """``spec`` with rows only for states of ``first`` filled boxes or more (and with
    ``cards``, a sequence of states, only for those a game from them may reach, the full
    cards' rows all kept: the same rows of those states, solved at a fraction of the
    cost)."""
    keep = np.zeros(N_STATES, dtype=bool)
    for n in range(first, N_BOXES + 1):
        keep[layer_states()[n]] = True
    if cards is not None:
        kept = np.zeros(N_STATES, dtype=bool)
        kept[reach(cards)] = True
        kept[layer_states()[N_BOXES]] = True
        keep &= kept
    return dataclasses.replace(spec, width=np.where(keep, spec.width, 0))


def late_rows(spec, first: int = FIRST_LAYER, cards=None):
    """The row table of ``spec`` (rules ``seed``) for the late states (those reachable
    from ``cards`` only, when given: see :func:`late`)."""
    R = new_row_table(late(spec, first, cards), "a test table")
    solve_rows(R, get_rules("seed"), layers=range(N_BOXES - 1, first - 1, -1))
    return R


def late_points(first: int = FIRST_LAYER):
    """``optimal``'s distribution of the points to come, for the late states."""
    rs = get_rules("seed")
    H = new_row_table(late(points_rows(rs), first), "a test table")
    solve_points(H, rs, layers=range(N_BOXES - 1, first - 1, -1))
    return H


def store_late_win_tables(every_target, points) -> None:
    """Store the late tables in the cache directory (``DICELAB_CACHE_DIR``) as penta-win's
    tables of rules ``seed``, where a new process (``dicelab play``, ``analyse``) loads
    them as the whole tables."""
    rs = get_rules("seed")
    entries = ((objectives.at_least_table_key(rs), f"{objectives.FORMAT_VERSION}",
                every_target),
               (objective_play.points_to_come_key(rs), f"{objective_play.FORMAT_VERSION}",
                points))
    for key, version, R in entries:
        disk_cache.store(key, version, {"F": np.asarray(R.F), "lo": np.asarray(R.lo),
                                        "width": np.asarray(R.width),
                                        "solve_s": np.array(0.0)})
