"""Exact optimal Penta solitaire: backward dynamic programming over turn-start states.

``solve("hasbro").expected_score`` is the optimal expected final score. States are
(filled boxes, upper total capped at 63, Penta box holds 50) -- see
:mod:`dicelab.penta.widget` for the index and the per-turn computation. Layers are
solved from 12 filled boxes down to 0, ``prange`` over fixed blocks of the states of
one layer (each block writes only its own states, so the result does not depend on
the number of threads); states that differ only in the upper total are solved 8 at a
time in vector lanes (:func:`dicelab.penta.widget.final_values_lanes`). Unreachable
states (an upper total the filled upper boxes cannot make; ``fifty`` with the Penta box
open) are skipped and hold NaN.

The value table (float64, 1,048,576 entries, 8 MiB) is cached on disk by
:func:`dicelab.cache.cached` under ``penta-values-<rules>``; a damaged or stale file is
rebuilt, never trusted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit, prange

from dicelab import cache as disk_cache
from dicelab.penta.rules import N_BOXES, PENTA_BOX, UPPER_TARGET, RuleSet, get_rules
from dicelab.penta.scoring import ORDINARY, PENTA_FACE
from dicelab.penta.tables import (
    ADD,
    BOX_SHIFT,
    KEEP1_SHIFT,
    KEEP_POS,
    N_KEEPS,
    N_ROLLS,
    PENTA_ROLL,
    ROLL_BASE,
    ROLL_COUNTS,
    ROLL_PROB,
    SUB,
)
from dicelab.penta.widget import (
    LANES,
    N_STATES,
    TIE_EPS,
    final_values_lanes,
    reroll_stage_lanes,
)

#: Version of the cached value format; bump when the state layout or rules change.
FORMAT_VERSION = 1
#: Work items per parallel block (fixed: results never depend on the thread count).
BLOCK = 16
#: ``solve_layer`` arguments meaning "values, not decisions".
_NO_SLOT = np.zeros(0, dtype=np.int32)
_NO_DECISIONS = np.zeros((0, N_ROLLS), dtype=np.uint16)


def _sub_csr() -> tuple[np.ndarray, np.ndarray]:
    ptr = [0]
    idx: list[int] = []
    for k in range(N_KEEPS):
        idx.extend(int(SUB[k, f]) for f in range(1, 7) if SUB[k, f] >= 0)
        ptr.append(len(idx))
    return np.array(ptr, dtype=np.int64), np.array(idx, dtype=np.int64)


SUB_PTR, SUB_IDX = _sub_csr()


def _reachable_uppers() -> list[np.ndarray]:
    """For each 6-bit set of filled upper boxes, the capped upper totals it can make."""
    out = []
    for um in range(64):
        s = {0}
        for f in range(1, 7):
            if (um >> (f - 1)) & 1:
                s = {min(UPPER_TARGET, a + k * f) for a in s for k in range(6)}
        out.append(np.array(sorted(s), dtype=np.int64))
    return out


@cache
def layer_states() -> tuple[np.ndarray, ...]:
    """``layer_states()[n]``: int64 indices of the reachable states with ``n`` filled boxes."""
    ups = _reachable_uppers()
    layers: list[list[np.ndarray]] = [[] for _ in range(N_BOXES + 1)]
    for mask in range(1 << N_BOXES):
        u = ups[mask & 63]
        base = (mask << 7) | (u << 1)
        n = bin(mask).count("1")
        layers[n].append(base)
        if (mask >> PENTA_BOX) & 1:
            layers[n].append(base | 1)
    return tuple(np.sort(np.concatenate(layer)) for layer in layers)


def n_reachable_states() -> int:
    return int(sum(len(s) for s in layer_states()))


@cache
def layer_groups() -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """Per layer: ``(head, ups, count)`` -- groups of up to ``LANES`` states that differ
    only in the upper total. ``head[g]`` is the state index with ``up = 0`` (mask and flag),
    ``ups[g, l]`` the upper totals (padded by repeating the last), ``count[g]`` the valid
    lanes. Every reachable state is in exactly one group."""
    ups_of = _reachable_uppers()
    out = []
    for n in range(N_BOXES + 1):
        heads, ups, counts = [], [], []
        for mask in range(1 << N_BOXES):
            if bin(mask).count("1") != n:
                continue
            u = ups_of[mask & 63]
            for fifty in (0, 1) if (mask >> PENTA_BOX) & 1 else (0,):
                for i in range(0, u.size, LANES):
                    part = u[i:i + LANES]
                    heads.append((mask << 7) | fifty)
                    ups.append(np.concatenate([part, np.full(LANES - part.size, part[-1])]))
                    counts.append(part.size)
        out.append((np.array(heads, dtype=np.int64), np.array(ups, dtype=np.int64),
                    np.array(counts, dtype=np.int64)))
    return tuple(out)


@njit(inline="always")
def _layer_block(bi, V, heads, ups, counts, rp, table, penta_face, penta_roll, roll_counts,
                 roll_prob, add, sub_ptr, sub_idx, slot, decisions, track, eps):
    """Block ``bi`` of a layer (see :func:`solve_layer`); ``track`` is a literal at each
    call site, so the value and the decision kernels each compile only their own path
    (``eps``, the tie tolerance, only matters to decisions)."""
    rows = N_ROLLS if track else 1
    krows = N_KEEPS if track else 1
    e3 = np.empty((N_ROLLS, LANES))
    r2 = np.empty((N_ROLLS, LANES))
    r1 = np.empty((N_ROLLS, LANES))
    E = np.empty((N_KEEPS, LANES))
    M = np.empty((N_KEEPS, LANES))
    cand = np.empty((6, LANES))
    m = np.empty(LANES)
    total = np.empty(LANES)
    scores = np.empty(N_BOXES, dtype=np.int64)
    box = np.empty((rows, LANES), dtype=np.int64)
    arg1 = np.empty((krows, LANES), dtype=np.int64)
    arg2 = np.empty((krows, LANES), dtype=np.int64)
    A = np.empty((krows, LANES))  # scratch of the tracked keeps and boxes
    pa = np.empty(LANES, dtype=np.int64)
    for g in range(bi * BLOCK, min(heads.shape[0], (bi + 1) * BLOCK)):
        head = heads[g]
        final_values_lanes(V, rp, table, penta_face, penta_roll, roll_counts, head >> 7,
                           head & 1, ups[g], e3, scores, cand, m, box, track, A, eps)
        reroll_stage_lanes(e3, add, sub_ptr, sub_idx, E, M, r2, m, arg1, track, A, pa, eps)
        reroll_stage_lanes(r2, add, sub_ptr, sub_idx, E, M, r1, m, arg2, track, A, pa, eps)
        if track:
            for la in range(counts[g]):
                i = slot[head | (ups[g, la] << 1)]
                for r in range(N_ROLLS):
                    decisions[i, r] = (
                        KEEP_POS[r, arg2[ROLL_BASE + r, la]]
                        | (KEEP_POS[r, arg1[ROLL_BASE + r, la]] << KEEP1_SHIFT)
                        | (box[r, la] << BOX_SHIFT))
        else:
            for la in range(LANES):
                total[la] = 0.0
            for r in range(N_ROLLS):
                p = roll_prob[r]
                for la in range(LANES):
                    total[la] += p * r1[r, la]
            for la in range(counts[g]):
                V[head | (ups[g, la] << 1)] = total[la]


@njit(cache=True, parallel=True)
def _values_layer(V, heads, ups, counts, rp, table, penta_face, penta_roll, roll_counts,
                  roll_prob, add, sub_ptr, sub_idx, slot, decisions):
    for bi in prange((heads.shape[0] + BLOCK - 1) // BLOCK):
        _layer_block(bi, V, heads, ups, counts, rp, table, penta_face, penta_roll,
                     roll_counts, roll_prob, add, sub_ptr, sub_idx, slot, decisions, False, 0.0)


@njit(cache=True, parallel=True)
def _decisions_layer(V, heads, ups, counts, rp, table, penta_face, penta_roll, roll_counts,
                     roll_prob, add, sub_ptr, sub_idx, slot, decisions, eps):
    for bi in prange((heads.shape[0] + BLOCK - 1) // BLOCK):
        _layer_block(bi, V, heads, ups, counts, rp, table, penta_face, penta_roll,
                     roll_counts, roll_prob, add, sub_ptr, sub_idx, slot, decisions, True, eps)


def solve_layer(V, heads, ups, counts, rp, table, penta_face, penta_roll, roll_counts,
                roll_prob, add, sub_ptr, sub_idx, slot, decisions, eps: float = TIE_EPS
                ) -> None:
    """One layer of the DP, state groups in parallel blocks (see :func:`layer_groups`).

    With an empty ``decisions`` it writes the groups' values into ``V``. Otherwise (the
    layers after it solved) it tracks the argmax instead and writes, for each state
    ``s`` and roll ``r``, the packed decision ``decisions[slot[s], r]`` (``KEEP_BITS``
    layout of :mod:`dicelab.penta.tables`): the same widget, so the decisions are those
    of exactly the values solved. Options within ``eps`` points of the best are ties,
    settled by the fixed order of :mod:`dicelab.penta.widget` (``TIE_EPS``; the
    values never depend on ``eps``).
    """
    if decisions.shape[0]:
        _decisions_layer(V, heads, ups, counts, rp, table, penta_face, penta_roll, roll_counts,
                         roll_prob, add, sub_ptr, sub_idx, slot, decisions, float(eps))
    else:
        _values_layer(V, heads, ups, counts, rp, table, penta_face, penta_roll, roll_counts,
                      roll_prob, add, sub_ptr, sub_idx, slot, decisions)


def solve_values(rules: RuleSet) -> np.ndarray:
    """Compute the value table of ``rules`` (no cache): float64[N_STATES], NaN = unreachable."""
    V = np.full(N_STATES, np.nan)
    V[layer_states()[N_BOXES]] = 0.0
    groups = layer_groups()
    rp = rules.params
    for n in range(N_BOXES - 1, -1, -1):
        heads, ups, counts = groups[n]
        solve_layer(V, heads, ups, counts, rp, ORDINARY, PENTA_FACE, PENTA_ROLL, ROLL_COUNTS,
                    ROLL_PROB, ADD, SUB_PTR, SUB_IDX, _NO_SLOT, _NO_DECISIONS)
    return V


@dataclass(frozen=True)
class PentaSolution:
    """A solved rule set: ``values[state]`` (see :mod:`dicelab.penta.widget`).

    ``expected_score`` is the optimal expected final score from an empty card;
    ``seconds`` the time to solve or load; ``cached`` whether it came from the disk cache.
    """

    rules: RuleSet
    values: np.ndarray
    seconds: float
    cached: bool

    @property
    def expected_score(self) -> float:
        return float(self.values[0])

    @property
    def n_states(self) -> int:
        return n_reachable_states()

    def to_dict(self) -> dict:
        return {"game": "penta", "rules": self.rules.name,
                "expected_score": self.expected_score, "states": self.n_states,
                "seconds": self.seconds, "cached": self.cached,
                "published_optimum": self.rules.published_optimum}


def cache_key(rules: RuleSet) -> str:
    return f"penta-values-{rules.name}"


_MEMO: dict[str, PentaSolution] = {}


def solve(rules: str | RuleSet | None = None, use_cache: bool = True) -> PentaSolution:
    """Solve Penta exactly under ``rules`` (a name or :class:`RuleSet`; default ``seed``).

    Loads the value table from the disk cache when it is there and intact, else
    solves (about a second on two cores) and stores it. Memoised per process.

    >>> solve("no-bonus").expected_score  # doctest: +SKIP
    245.87077...
    """
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    if use_cache and rs.name in _MEMO:
        return _MEMO[rs.name]
    t0 = time.perf_counter()
    if use_cache:
        arrays, was_cached = disk_cache.cached(cache_key(rs), FORMAT_VERSION,
                                               lambda: {"values": solve_values(rs)})
        values = arrays["values"]
        if values.shape != (N_STATES,) or values.dtype != np.float64 or not (
                np.isfinite(values[0])):
            # a well-formed file with the wrong content: rebuild rather than trust it
            values = solve_values(rs)
            disk_cache.store(cache_key(rs), FORMAT_VERSION, {"values": values})
            was_cached = False
    else:
        values, was_cached = solve_values(rs), False
    sol = PentaSolution(rs, values, time.perf_counter() - t0, was_cached)
    if use_cache:
        _MEMO[rs.name] = sol
    return sol

