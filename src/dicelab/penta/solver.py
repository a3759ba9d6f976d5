"""Exact optimal Penta solitaire: backward dynamic programming over turn-start states.

``solve("hasbro").expected_score`` is the optimal expected final score. States are
(filled boxes, upper total capped at 63, Penta box holds 50) -- see
:func:`dicelab.penta.rules.state_index` for the index and :mod:`dicelab.penta.widget`
for the per-turn computation. Layers are solved from 12 filled boxes down to 0, in
fixed blocks (``config.PENTA_SOLVER_BLOCK`` groups) of the states of one layer shared out
to the threads by :func:`dicelab.parallel.run_blocks` (each block writes only its own
states, so the result does not depend on the number of threads); states that differ only
in the upper total are solved ``config.PENTA_SOLVER_LANES`` at a time in vector lanes
(:func:`dicelab.penta.widget.final_values_lanes`). Unreachable states (an upper total
the filled upper boxes cannot make; ``fifty`` with the Penta box open) are skipped and
hold NaN.

The value table (float64, 1,048,576 entries, 8 MiB) is cached on disk by
:func:`dicelab.cache.cached` under :func:`cache_key` (the rule set's content digest),
with the time the solve took; a damaged or stale file is rebuilt, never trusted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types as nbtypes

from dicelab import cache as disk_cache
from dicelab import config
from dicelab.jit import compile_split, loads, types_of
from dicelab.parallel import run_blocks, threads
from dicelab.penta.rules import (
    FACES,
    N_BOXES,
    N_DICE,
    N_STATES,
    PENTA_BOX,
    UPPER_BOXES,
    UPPER_TARGET,
    RuleSet,
    get_rules,
    state_fifty,
    state_index,
    state_mask,
    state_up,
)
from dicelab.penta.scoring import TABLES, roll_box_scores
from dicelab.penta.tables import BOX_SHIFT, KEEP1_SHIFT, N_ROLLS, ROLL_BASE
from dicelab.penta.widget import (
    RowTable,
    best_box,
    fill_row_cands,
    fill_state_cands,
    final_values_lanes,
    lane_totals,
    new_cand_scratch,
    new_lane_scratch,
    reroll_stage_lanes,
    turn_from_cands,
    visit_box_lanes,
)

#: Version of the cached value format; bump when the state layout or rules change.
FORMAT_VERSION = 2


class Layer(NamedTuple):
    """The reachable states with one number of filled boxes, in groups of up to
    ``config.PENTA_SOLVER_LANES`` states that differ only in the upper total.

    ``heads[g]``: the group's state index with ``up = 0`` (mask and flag); ``ups[g, l]``:
    the upper totals (padded by repeating the last); ``counts[g]``: the valid lanes.
    """

    heads: np.ndarray  # int64 (groups,)
    ups: np.ndarray  # int64 (groups, lanes)
    counts: np.ndarray  # int64 (groups,)


#: No values to write (:class:`DecisionSink`).
_NO_VALUES = np.zeros(0)


class DecisionSink(NamedTuple):
    """Where the decision kernel writes: ``decisions[slot[s], r]`` for state ``s`` and, if
    ``values`` is not empty, the state's value ``values[s]`` (float64 (N_STATES,)): the
    tracked widget computes the values it decides on, so one sweep can give both."""

    slot: np.ndarray  # int32 (N_STATES,), -1 = no row
    decisions: np.ndarray  # uint16 (rows, 252)
    values: np.ndarray = _NO_VALUES



def _reachable_uppers() -> list[np.ndarray]:
    """For each set of filled upper boxes, the capped upper totals it can make."""
    out = []
    for um in range(1 << UPPER_BOXES):
        s = {0}
        for f in range(1, FACES + 1):
            if (um >> (f - 1)) & 1:
                s = {min(UPPER_TARGET, a + k * f) for a in s for k in range(N_DICE + 1)}
        out.append(np.array(sorted(s), dtype=np.int64))
    return out


@cache
def layer_states() -> tuple[np.ndarray, ...]:
    """``layer_states()[n]``: int64 indices of the reachable states with ``n`` filled boxes,
    in increasing order (the states of :func:`layer_groups`)."""
    lanes = np.arange(config.PENTA_SOLVER_LANES)
    out = []
    for layer in layer_groups():
        states = layer.heads[:, None] | state_index.py_func(0, layer.ups, 0)
        out.append(np.sort(states[lanes < layer.counts[:, None]]))
    return tuple(out)


def n_reachable_states() -> int:
    return int(sum(len(s) for s in layer_states()))


@cache
def layer_groups() -> tuple[Layer, ...]:
    """Per number of filled boxes: its :class:`Layer`, the groups in increasing order of
    filled boxes, then Penta flag, then upper total. Every reachable state is in exactly one
    group."""
    lanes = config.PENTA_SOLVER_LANES
    # the groups of upper totals each set of filled upper boxes can make (padded by
    # repeating the last), as rows of one table
    chunk_ups, chunk_counts, chunks_of = [], [], []
    for u in _reachable_uppers():
        rows = []
        for i in range(0, u.size, lanes):
            part = u[i:i + lanes]
            rows.append(len(chunk_ups))
            chunk_ups.append(np.concatenate([part, np.full(lanes - part.size, part[-1])]))
            chunk_counts.append(part.size)
        chunks_of.append(rows)
    ups_table = np.array(chunk_ups, dtype=np.int64)
    counts_table = np.array(chunk_counts, dtype=np.int64)
    heads: list[list[int]] = [[] for _ in range(N_BOXES + 1)]
    rows_of: list[list[int]] = [[] for _ in range(N_BOXES + 1)]
    for mask in range(1 << N_BOXES):
        n = bin(mask).count("1")
        rows = chunks_of[mask & ((1 << UPPER_BOXES) - 1)]
        for fifty in (0, 1) if (mask >> PENTA_BOX) & 1 else (0,):
            heads[n] += [state_index.py_func(mask, 0, fifty)] * len(rows)
            rows_of[n] += rows
    return tuple(Layer(np.array(h, dtype=np.int64), ups_table[r], counts_table[r])
                 for h, r in zip(heads, rows_of, strict=True))


@njit(inline="always")
def _turns(V, rp, T, head, ups, W, track, eps):
    """The turns of the lanes of one group (its ``head`` state and upper totals ``ups``)
    into ``W``, from the next layers' values ``V``."""
    final_values_lanes(V, rp, T, state_mask(head), state_fifty(head), ups, W, track, eps)
    reroll_stage_lanes(W.e3, T, W, W.arg1, track, W.r2, eps)
    reroll_stage_lanes(W.r2, T, W, W.arg2, track, W.r1, eps)


@njit(inline="always")
def _write_values(dst, head, ups, count, T, W):
    lane_totals(T, W)
    for la in range(count):
        dst[head | state_index(0, ups[la], 0)] = W.total[la]


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _values_blocks(lo, hi, V, layer, rp, T):
    """The values of blocks ``lo .. hi - 1`` of a layer (see :func:`solve_layer`) into
    ``V``: the untracked widget (no decision code to compile). Called from Python only,
    so without numba's C wrapper (as :func:`_decisions_blocks`)."""
    W = new_lane_scratch(None)
    heads, ups, counts = layer.heads, layer.ups, layer.counts
    block = config.PENTA_SOLVER_BLOCK
    for g in range(lo * block, min(heads.shape[0], hi * block)):
        _turns(V, rp, T, heads[g], ups[g], W, None, 0.0)
        _write_values(V, heads[g], ups[g], counts[g], T, W)


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def _decisions_blocks(lo, hi, V, layer, rp, T, out, eps):
    """The decisions of blocks ``lo .. hi - 1`` of a layer into ``out`` (and their values,
    if ``out.values`` is not empty), the tracked widget with tie tolerance ``eps``."""
    W = new_lane_scratch(True)
    heads, ups, counts = layer.heads, layer.ups, layer.counts
    block = config.PENTA_SOLVER_BLOCK
    for g in range(lo * block, min(heads.shape[0], hi * block)):
        head = heads[g]
        _turns(V, rp, T, head, ups[g], W, True, eps)
        for la in range(counts[g]):
            i = out.slot[head | state_index(0, ups[g, la], 0)]
            for r in range(N_ROLLS):
                out.decisions[i, r] = (
                    T.keep_pos[r, W.arg2[ROLL_BASE + r, la]]
                    | (T.keep_pos[r, W.arg1[ROLL_BASE + r, la]] << KEEP1_SHIFT)
                    | (W.box[r, la] << BOX_SHIFT))
        if out.values.shape[0] > 0:
            _write_values(out.values, head, ups[g], counts[g], T, W)


# --- objectives beyond the expected score: the same layers, candidate values ------------------
# An objective fills the widget's candidate values (:mod:`dicelab.penta.widget`); the layers,
# their order and the blocks on threads are those above. A state objective (a value per
# state: expected points, exponential utility) solves the groups of :func:`layer_groups`; a
# row objective (a value per state and *need*, see :class:`~dicelab.penta.widget.RowTable`)
# solves each state's row, ``config.PENTA_SOLVER_LANES`` consecutive needs at a time.


@njit(cache=True, nogil=True)
def _state_objective_blocks(lo, hi, V, mult, layer, rp, T):
    X = new_cand_scratch()
    W = X.lanes
    heads, ups, counts = layer.heads, layer.ups, layer.counts
    block = config.PENTA_SOLVER_BLOCK
    for g in range(lo * block, min(heads.shape[0], hi * block)):
        head = heads[g]
        mask = state_mask(head)
        fill_state_cands(V, mult, rp, T, mask, state_fifty(head), ups[g], X)
        turn_from_cands(T, mask, X, False)
        for la in range(counts[g]):
            V[head | state_index(0, ups[g, la], 0)] = W.total[la]


def solve_state_objective(V: np.ndarray, rules: RuleSet, mult: np.ndarray) -> None:
    """Fill ``V`` (float64[N_STATES], the full-card states' values set) layer by layer with
    the candidate widget: ``mult`` empty, expected points (the same values as
    :func:`solve_values`, by another path); else ``V[s] = max E[mult[points to come]]``
    with ``mult[g] = exp(theta g)`` times the full card's value."""
    groups = layer_groups()
    for n in range(N_BOXES - 1, -1, -1):
        layer = groups[n]
        n_blocks = -(-layer.heads.shape[0] // config.PENTA_SOLVER_BLOCK)
        run_blocks(_state_objective_blocks, n_blocks, V, mult, layer, rules.params, TABLES)


@njit(cache=True, nogil=True)
def _row_blocks(lo, hi, R, states, bounds, rp, T):
    """The rows of ``states[bounds[lo]:bounds[hi]]`` (one layer) from the next layers'."""
    X = new_cand_scratch()
    W = X.lanes
    lanes = config.PENTA_SOLVER_LANES
    for i in range(bounds[lo], bounds[hi]):
        s = states[i]
        mask, up, fifty = state_mask(s), state_up(s), state_fifty(s)
        c_lo = R.lo[s]
        width = R.width[s]
        base = R.off[s] + 1 - c_lo
        for c0 in range(c_lo, c_lo + width, lanes):
            fill_row_cands(R, rp, T, mask, up, fifty, c0, X)
            turn_from_cands(T, mask, X, False)
            for la in range(min(lanes, c_lo + width - c0)):
                R.F[base + c0 + la] = W.total[la]


def row_blocks(widths: np.ndarray, parts: int) -> np.ndarray:
    """Bounds of ``parts`` (at most) blocks of consecutive rows of about equal work (the
    sum of the ``widths``, rounded up to whole lane groups): ``bounds[b]:bounds[b + 1]``.

    >>> row_blocks(np.array([8, 8, 8, 8, 0, 16]), 3).tolist()
    [0, 2, 4, 6]
    """
    lanes = config.PENTA_SOLVER_LANES
    work = np.cumsum(-(-widths // lanes) + 1)  # +1: a row costs something even if empty
    if widths.size == 0:
        return np.zeros(1, dtype=np.int64)
    cuts = np.searchsorted(work, work[-1] * np.arange(1, parts) / parts, side="right")
    return np.unique(np.concatenate([[0], cuts, [widths.size]])).astype(np.int64)


def solve_rows(R: RowTable, rules: RuleSet, layers: range | None = None,
               progress: Callable[[int, int], None] | None = None) -> None:
    """Fill the rows of :class:`RowTable` ``R`` (sentinels and the full card's rows set),
    layers of 12 filled boxes down to 0 (or ``layers``), each in blocks of rows on the
    threads. ``progress(done, total)`` counts the rows' lanes."""
    states_of = layer_states()
    order = range(N_BOXES - 1, -1, -1) if layers is None else layers
    total = int(sum(R.width[states_of[n]].sum() for n in order))
    done = 0
    for n in order:
        states = states_of[n]
        widths = R.width[states]
        bounds = row_blocks(widths, 64 * max(1, threads()))
        run_blocks(_row_blocks, bounds.size - 1, R, states, bounds, rules.params, TABLES)
        done += int(widths.sum())
        if progress is not None:
            progress(done, total)


def _compile_split(V: np.ndarray, layer: Layer, rp, track: bool) -> None:
    """Compile the widget of the values (``track`` False: untracked, None) or decision
    kernel on two cores (:func:`dicelab.jit.compile_split`): the box visits, the best
    joker box and the reroll stage in a child process; the scratch, the joker scores and
    the final values (once the child stored the first two) here. The kernel's own compile
    then loads the child's from numba's cache. The argument types are those the kernel
    calls them with (``tests/test_first_run.py`` checks that this process compiles none
    of the child's again)."""
    i64, eps = nbtypes.int64, nbtypes.float64
    flag = nbtypes.literal(True) if track else nbtypes.none
    W = new_lane_scratch.py_func(True if track else None)
    T = TABLES
    ups = layer.ups[0] if layer.ups.shape[0] else np.zeros(config.PENTA_SOLVER_LANES, np.int64)
    aside = [
        (visit_box_lanes, types_of(V, T.ordinary, T.roll_counts, i64, i64, ups, i64, W.e3,
                                   W.box, W.A, W.cand, W.m, flag, eps)),
        (best_box, types_of(V, i64, i64, i64, W.scores, i64, eps)),
        (reroll_stage_lanes, types_of(W.e3, T, W, W.arg1, flag, W.r2, eps)),
    ]
    here = [
        (new_lane_scratch, types_of(flag), 0),
        (roll_box_scores, types_of(rp, T, i64, i64, i64, W.scores), 0),
        (final_values_lanes, types_of(V, rp, T, i64, i64, ups, W, flag, eps), 2),
    ]
    compile_split(aside, here, threads())


def compile_kernel(decisions: bool) -> None:
    """Compile (or load from numba's cache) the solver's kernel that solves values
    (``decisions`` False) or decisions, on no work; a compile runs on two cores
    (:func:`_compile_split`)."""
    empty = Layer(np.zeros(0, dtype=np.int64),
                  np.zeros((0, config.PENTA_SOLVER_LANES), dtype=np.int64),
                  np.zeros(0, dtype=np.int64))
    V = np.zeros(0)
    rp = get_rules(None).params
    if decisions:
        sink = DecisionSink(np.zeros(0, dtype=np.int32), np.zeros((0, N_ROLLS), np.uint16), V)
        args = (0, 0, V, empty, rp, TABLES, sink, 0.0)
        kernel = _decisions_blocks
    else:
        args = (0, 0, V, empty, rp, TABLES)
        kernel = _values_blocks
    if not loads(kernel, args):
        _compile_split(V, empty, rp, decisions)
        kernel(*args)


def solve_layer(V: np.ndarray, layer: Layer, rules: RuleSet,
                out: DecisionSink | None = None, eps: float | None = None) -> None:
    """One layer of the DP, state groups in parallel blocks (see :func:`layer_groups`).

    Without ``out`` it writes the groups' values into ``V``. With a :class:`DecisionSink`
    (the layers after it solved) it tracks the argmax instead and writes, for each state
    ``s`` and roll ``r``, the packed decision ``out.decisions[out.slot[s], r]``
    (``KEEP_BITS`` layout of :mod:`dicelab.penta.tables`), and the values into
    ``out.values`` if that is not empty (bit for bit those of the untracked widget): the
    same widget, so the decisions are those of exactly the values solved. Options within
    ``eps`` points (default ``config.PENTA_TIE_EPS``) of the best are ties, settled by the
    fixed order of :mod:`dicelab.penta.widget` (the values never depend on ``eps``).
    """
    n_blocks = -(-layer.heads.shape[0] // config.PENTA_SOLVER_BLOCK)
    compile_kernel(out is not None)
    if out is None:
        run_blocks(_values_blocks, n_blocks, V, layer, rules.params, TABLES)
    else:
        tol = config.PENTA_TIE_EPS if eps is None else eps
        run_blocks(_decisions_blocks, n_blocks, V, layer, rules.params, TABLES, out,
                   float(tol))


def solve_values(rules: RuleSet, decisions: DecisionSink | None = None) -> np.ndarray:
    """Compute the value table of ``rules`` (no cache): float64[N_STATES], NaN = unreachable.

    With ``decisions`` the same sweep also writes every state's decisions there (the
    tracked widget of :func:`solve_layer`, which computes the same values): one sweep and
    one kernel instead of a solve and then a decision build."""
    V = np.full(N_STATES, np.nan)
    V[layer_states()[N_BOXES]] = 0.0
    groups = layer_groups()
    sink = None if decisions is None else decisions._replace(values=V)
    for n in range(N_BOXES - 1, -1, -1):
        solve_layer(V, groups[n], rules, sink)
    return V


@dataclass(frozen=True)
class PentaSolution:
    """A solved rule set: ``values[state]`` (see :mod:`dicelab.penta.widget`).

    ``expected_score`` is the optimal expected final score from an empty card;
    ``elapsed_s`` the time of the call that produced it (solve or load);
    ``from_cache`` whether it came from the disk cache; ``solve_s`` how long the solve
    itself took (also when loaded: the cache entry keeps it).
    """

    rules: RuleSet
    values: np.ndarray
    elapsed_s: float
    from_cache: bool
    solve_s: float

    @property
    def expected_score(self) -> float:
        return float(self.values[0])

    @property
    def n_states(self) -> int:
        return n_reachable_states()

    def to_dict(self) -> dict:
        return {"game": "penta", "rules": self.rules.name,
                "expected_final_score": self.expected_score, "states": self.n_states,
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache,
                "solve_s": self.solve_s, "published_optimum": self.rules.published_optimum}


def cache_key(rules: RuleSet) -> str:
    """Disk-cache key of the value table of ``rules``: by content, the name for reading.

    >>> cache_key(get_rules("seed")) == f"penta-values-seed-{get_rules('seed').digest}"
    True
    """
    return disk_cache.entry_key("penta-values", rules.name, rules.digest)


_MEMO: dict[str, PentaSolution] = {}


def _solve_entry(rules: RuleSet, decisions: DecisionSink | None = None
                 ) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    values = solve_values(rules, decisions)
    return {"values": values, "solve_s": np.array(time.perf_counter() - t0)}


def _intact(arrays: dict[str, np.ndarray]) -> bool:
    values, solve_s = arrays.get("values"), arrays.get("solve_s")
    return (values is not None and values.shape == (N_STATES,) and values.dtype == np.float64
            and bool(np.isfinite(values[0])) and solve_s is not None and solve_s.shape == ())


def solve(rules: str | RuleSet | None = None, use_cache: bool = True) -> PentaSolution:
    """Solve Penta exactly under ``rules`` (a name or :class:`RuleSet`; default ``seed``).

    Loads the value table from the disk cache when it is there and intact, else
    solves (see docs/benchmarks.md for how long) and stores it. Memoised per process (by
    the rules' content).

    >>> sol = solve("no-bonus", use_cache=False)
    >>> round(sol.expected_score, 5), sol.from_cache, sol.solve_s > 0
    (245.87077, False, True)
    """
    return _solve(rules, use_cache, None)[0]


def solve_with_decisions(rules: str | RuleSet | None, decisions: DecisionSink
                         ) -> tuple[PentaSolution, bool]:
    """:func:`solve`, with the cache; if the values have to be computed (neither memoised
    nor cached), the sweep that computes them also writes every state's decisions into
    ``decisions`` (see :func:`solve_values`). Returns the solution and whether it did."""
    return _solve(rules, True, decisions)


def _solve(rules: str | RuleSet | None, use_cache: bool, decisions: DecisionSink | None
           ) -> tuple[PentaSolution, bool]:
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    key = cache_key(rs)
    if use_cache and key in _MEMO:
        return _MEMO[key], False
    t0 = time.perf_counter()
    if use_cache:
        arrays, from_cache = disk_cache.cached(key, FORMAT_VERSION,
                                               lambda: _solve_entry(rs, decisions))
        if not _intact(arrays):
            # a well-formed file with the wrong content: rebuild rather than trust it
            arrays = _solve_entry(rs, decisions)
            disk_cache.store(key, FORMAT_VERSION, arrays)
            from_cache = False
    else:
        arrays, from_cache = _solve_entry(rs, decisions), False
    sol = PentaSolution(rs, arrays["values"], time.perf_counter() - t0, from_cache,
                        float(arrays["solve_s"]))
    if use_cache:
        _MEMO[key] = sol
    return sol, not from_cache
