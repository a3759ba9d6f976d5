"""Playing an objective's policy: decisions on demand and the exact distribution of the final
score (layer 2).

The policies of :mod:`dicelab.penta.objectives` (named ``optimal:OBJECTIVE``, e.g.
``optimal:at-least:300``) and ``penta-win`` (:mod:`dicelab.penta.penta_win`) decide from
value tables that depend on more than the card (the score so far; the opponents' cards),
so they are not tabulated per (state, roll) as ``optimal`` is. At the start of each turn
:func:`seat_decisions` runs the candidate widget for the player's state and fills one row
of decisions (the 252 rolls, packed as in :class:`~dicelab.penta.policies.DecisionTables`),
which the simulation kernel then plays like a table's row. Ties under the objective are
settled by ``optimal``'s values (:func:`dicelab.penta.widget.decide_lane`): where the
objective is settled (a target reached or out of reach) the policy plays ``optimal``.

:func:`objective_distribution` computes the exact distribution of such a policy's final
TOTAL by a forward pass over (state, TOTAL so far), the decisions of every pair with a
probability above 0 made as the simulator makes them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from dicelab import cache as disk_cache
from dicelab import config, dice
from dicelab.errors import UserError
from dicelab.jit import read_only
from dicelab.parallel import run_blocks, threads
from dicelab.penta.distribution import (
    MAX_OUTCOMES,
    N_CODES,
    N_EVENTS,
    ScoreDistribution,
    distribution_from,
    outcome_step,
    score_distribution,
    turn_outcomes,
)
from dicelab.penta.objectives import (
    Objective,
    ObjectiveSolution,
    RowSpec,
    at_least_table,
    cached_rows,
    new_row_table,
    objective_of,
    parse_objective,
    rows_of,
    score_bounds,
    score_utility,
    solve_objective,
)
from dicelab.penta.policies import Option, Scorecard, check_turn, decision_tables
from dicelab.penta.rules import (
    BOX_NAMES,
    N_BOXES,
    N_DICE,
    N_STATES,
    PENTA_BOX,
    RuleSet,
    get_rules,
    state_fifty,
    state_index,
    state_mask,
    state_up,
)
from dicelab.penta.scoring import MAX_TOTAL, TABLES, apply_box, roll_box_scores
from dicelab.penta.solver import layer_states, row_blocks, solve
from dicelab.penta.tables import KEEP_SIZE, N_KEEPS, N_ROLLS, ROLL_BASE, SUBSETS
from dicelab.penta.widget import (
    KEEP_PREFERENCE,
    RowTable,
    decide_lanes,
    decide_roll,
    fill_cands,
    fill_row_cands,
    fill_state_cands,
    new_cand_scratch,
    new_turn_scratch,
    state_value,
    turn_from_cands,
)
from dicelab.resources import check_memory

#: Kinds of :class:`OnlineSeat`: a seat that plays from decision tables (not online),
#: values per state, values per (state, need), penta-win.
SEAT_TABLE, SEAT_STATE, SEAT_ROWS, SEAT_WIN = 0, 1, 2, 3
#: The most seats at a table with a penta-win seat (its win share sums over the others'
#: tie patterns; it plays against seats that are not penta-win).
WIN_MAX_SEATS = 8
#: What ``dicelab analyse`` judges penta-win's decisions by: its win share against the
#: table's other cards (P(alone on top) + P(top shared by k seats) / k).
WIN_SHARE = "win-share"
#: Objectives' ties are relative (their values are not points): options within this share
#: of the best value's magnitude are tied (the values are maxima and sums of terms of one
#: sign, so their rounding is relative, about 1e-15).
TIE_REL = 1e-12
#: A need far below every row: every candidate reads the value below the rows.
_SETTLED = -(1 << 40)
#: Bump when the forward pass or the decisions change.
FORMAT_VERSION = 1


def _frozen_rows(R: RowTable) -> RowTable:
    return RowTable(read_only(R.F, np.float64), read_only(R.off, np.int64),
                    read_only(R.lo, np.int64), read_only(R.width, np.int64))


def _empty_rows() -> RowTable:
    z = np.zeros(N_STATES, dtype=np.int64)
    return _frozen_rows(RowTable(np.zeros(2), z, z, z))


def frozen_seat(kind: int, V=None, mult=None, R=None, start: int = 0, H=None,
                opponents=None) -> OnlineSeat:
    """An :class:`OnlineSeat` (fields left out: empty), every array a read-only view: the
    one way to build one, so that every seat, a memory-mapped table's included, is one
    numba type (a writable one would compile each kernel it reaches once more)."""
    none = np.zeros(0)
    return OnlineSeat(kind, read_only(none if V is None else V, np.float64),
                      read_only(none if mult is None else mult, np.float64),
                      _empty_rows() if R is None else _frozen_rows(R), int(start),
                      _empty_rows() if H is None else _frozen_rows(H),
                      read_only(np.zeros(0) if opponents is None else opponents, np.int64))


class OnlineSeat(NamedTuple):
    """What the kernels decide a seat's turns from (one type for every kind, unused fields
    small): ``kind`` (``SEAT_STATE``, ``SEAT_ROWS``, ``SEAT_WIN``); ``V``/``mult`` a value
    per state and a utility's factors (``SEAT_STATE``); ``R`` the rows and ``start`` the
    need of TOTAL 0 (``SEAT_ROWS``: need = start - TOTAL so far); ``SEAT_WIN``: ``R`` the
    at-least table of every target, ``H`` ``optimal``'s distribution of the points to come
    per state (need = points), ``opponents`` the seats it plays against (seat numbers)."""

    kind: int
    V: np.ndarray
    mult: np.ndarray
    R: RowTable
    start: int
    H: RowTable
    opponents: np.ndarray


def online_seat(solution: ObjectiveSolution) -> OnlineSeat:
    """The :class:`OnlineSeat` of a solved objective (not ``mean``: ``optimal`` is a table)."""
    if solution.rows is not None:
        return frozen_seat(SEAT_ROWS, R=solution.rows, start=solution.start)
    if solution.objective.kind == "mean":
        raise ValueError("optimal plays from its decision table")
    return frozen_seat(SEAT_STATE, V=solution.values, mult=solution.mult)


def table_seat() -> OnlineSeat:
    """The :class:`OnlineSeat` of a seat that plays from decision tables."""
    return frozen_seat(SEAT_TABLE)


def win_seat(rules: RuleSet, seat: int, seats: int,
             progress: Callable[[int, int], None] | None = None) -> OnlineSeat:
    """penta-win's :class:`OnlineSeat` at seat ``seat`` of a table of ``seats``: the
    table of every target (:func:`~dicelab.penta.objectives.at_least_table`, built if it
    is not in the cache) and ``optimal``'s distribution of the points to come."""
    if not 2 <= seats <= WIN_MAX_SEATS:
        raise UserError(f"penta-win plays at tables of 2 to {WIN_MAX_SEATS} seats, not "
                        f"{seats}")
    table = at_least_table(rules, progress=progress)
    return frozen_seat(SEAT_WIN, R=table.rows, H=points_to_come(rules),
                       opponents=np.array([q for q in range(seats) if q != seat]))


class WinScratch(NamedTuple):
    """penta-win's work arrays: ``u[m]`` the win share of a final TOTAL ``m``, ``du[m] =
    u[m] - u[m - 1]`` (never negative: a higher TOTAL never wins less), ``tail[m]`` the sum
    of ``du`` from ``m`` up, ``poly`` the tie polynomial, ``pmf``/``below`` an opponent's."""

    u: np.ndarray
    du: np.ndarray
    tail: np.ndarray
    poly: np.ndarray
    nxt: np.ndarray
    pmf: np.ndarray
    below: np.ndarray


@njit(cache=True)
def new_win_scratch(seats):
    n = MAX_TOTAL + 2
    return WinScratch(np.zeros(n), np.zeros(n), np.zeros(n + 1), np.zeros((seats + 1, n)),
                      np.zeros((seats + 1, n)), np.zeros((seats, n)), np.zeros((seats, n)))


@njit(cache=True)
def win_share(H, opp_states, opp_totals, n_opp, S):
    """``S.u[m]``: the expected win share of a final TOTAL ``m`` against opponents in states
    ``opp_states[q]`` with ``opp_totals[q]`` so far, each finishing as ``optimal`` does
    (``H``); a top shared by ``k + 1`` counts ``1 / (k + 1)``. ``S.du`` its steps. Returns
    the range [lo, hi] of TOTALs where ``du`` may be non-zero."""
    n = MAX_TOTAL + 2
    lo, hi = n, 0
    for q in range(n_opp):
        s = opp_states[q]
        x = opp_totals[q]
        o = H.off[s] + 1
        w = H.width[s]
        acc = 0.0
        for m in range(n):
            k = m - x
            p = H.F[o + k] if 0 <= k < w else 0.0
            S.pmf[q, m] = p
            S.below[q, m] = acc
            acc += p
        lo = min(lo, x)
        hi = max(hi, x + w)
    for m in range(n):
        S.poly[0, m] = 1.0
        for k in range(1, n_opp + 1):
            S.poly[k, m] = 0.0
    for q in range(n_opp):
        for m in range(n):
            b = S.below[q, m]
            p = S.pmf[q, m]
            for k in range(q + 1, 0, -1):
                S.poly[k, m] = S.poly[k, m] * b + S.poly[k - 1, m] * p
            S.poly[0, m] *= b
    prev = 0.0
    for m in range(n):
        v = 0.0
        for k in range(n_opp + 1):
            v += S.poly[k, m] / (k + 1)
        S.u[m] = v
        S.du[m] = v - prev
        prev = v
    S.tail[n] = 0.0
    for m in range(n - 1, -1, -1):
        S.tail[m] = S.tail[m + 1] + S.du[m]
    return lo, min(hi + 1, n - 1)


@njit(inline="always")
def _dot4(x, y):
    """``sum_i x[i] y[i]`` of two vectors of one length, as four running sums in a fixed
    order (independent chains the compiler may put side by side in vector registers
    without reassociating: the same result on every machine)."""
    m = x.shape[0]
    s0 = s1 = s2 = s3 = 0.0
    q = m - m % 4
    for i in range(0, q, 4):
        s0 += x[i] * y[i]
        s1 += x[i + 1] * y[i + 1]
        s2 += x[i + 2] * y[i + 2]
        s3 += x[i + 3] * y[i + 3]
    for i in range(q, m):
        s0 += x[i] * y[i]
    return (s0 + s1) + (s2 + s3)


@njit(inline="always")
def _win_value(G, S, s2, x2, lo, hi):
    """u(x2) plus the clairvoyant continuation: sum over needs d of du[x2 + d] G[s2, d]."""
    n = S.u.shape[0]
    v = S.u[min(x2, n - 1)]
    o = G.off[s2] + 1
    d_lo = max(1, lo - x2)
    d_hi = min(G.width[s2], hi - x2)
    if d_hi < d_lo:
        return v
    return v + _dot4(S.du[x2 + d_lo:x2 + d_hi + 1], G.F[o + d_lo - 1:o + d_hi])


@njit(inline="always")
def _win_entry(ctx, b, sc, bonus, A, i, j):
    G, S, mask, up, fifty, x, lo, hi = ctx
    pts, nu, nf = apply_box(up, fifty, b, sc)
    v = _win_value(G, S, state_index(mask | (1 << b), nu, nf), x + pts + bonus, lo, hi)
    for la in range(config.PENTA_SOLVER_LANES):
        A[i, j, la] = v


@njit(cache=True)
def fill_win_cands(G, rp, T, mask, up, fifty, x, S, lo, hi, X):
    """penta-win's candidates (every lane alike): the win share after each entry, the rest
    of the game valued as if the opponents' final TOTALs were known (the table of every
    target ``G``)."""
    fill_cands(_win_entry, (G, S, mask, up, fifty, x, lo, hi), rp, T, mask, fifty, X)


@njit(cache=True)
def seat_turn(seat, rp, T, mask, up, fifty, x, opp_states, opp_totals, X, S):
    """Prepare one turn of an online seat in state (``mask``, ``up``, ``fifty``) with ``x``
    points so far (and, ``SEAT_WIN``, its opponents' states and points): afterwards
    :func:`~dicelab.penta.widget.decide_roll` (lane 0, :data:`TIE_REL`) gives each
    decision of the turn, once ``optimal``'s widget of the state is there for a keep whose
    options are tied (:func:`~dicelab.penta.widget.keep_tied`)."""
    if seat.kind == SEAT_STATE:
        ups = np.full(config.PENTA_SOLVER_LANES, up, dtype=np.int64)
        fill_state_cands(seat.V, seat.mult, rp, T, mask, fifty, ups, X)
    elif seat.kind == SEAT_ROWS:
        fill_row_cands(seat.R, rp, T, mask, up, fifty, seat.start - x, X)
    else:
        lo, hi = win_share(seat.H, opp_states, opp_totals, opp_states.shape[0], S)
        fill_win_cands(seat.R, rp, T, mask, up, fifty, x, S, lo, hi, X)
    turn_from_cands(T, mask, X, True)


# --- the exact distribution of an objective's policy -----------------------------------------
# The forward pass of :mod:`dicelab.penta.distribution`, over (state, TOTAL so far): the
# probability of each pair, layer by layer. A state's TOTALs so far lie within its
# :func:`~dicelab.penta.objectives.score_bounds`, and its vector covers those. Work items:
# a group of up to 8 consecutive needs of one state's row (their decisions differ), or a
# state's *settled* TOTALs (below or above its row: every option reads the same value, so
# ``optimal`` decides, one set of decisions for them all), or, for an objective on states,
# the whole state. Items' turn outcomes are computed in parallel blocks, then pushed to the
# next layer in the items' order on one thread (the sums never depend on the threads).


class _Items(NamedTuple):
    state: np.ndarray  # int64: position in the layer
    c0: np.ndarray  # int64: first need of a group; _SETTLED: a range of TOTALs
    x_lo: np.ndarray  # int64: the range of TOTALs an item's lane 0 applies to
    x_hi: np.ndarray


@njit(cache=True, nogil=True)
def _item_outcomes(lo, hi, seat, Vmean, ref_slot, ref_dec, rp, T, states, items, first,
                   out_code, out_p, out_n, out_differ, illegal, rel):
    """Items ``first + lo .. first + hi - 1``: each lane's turn outcomes (lane 0 only for a
    range item) into row ``item - first`` of the outputs."""
    X = new_cand_scratch()
    Mw = new_turn_scratch()
    rows = np.empty((config.PENTA_SOLVER_LANES, N_ROLLS), dtype=np.uint16)
    mass = np.empty(N_ROLLS)
    Q = np.empty(N_KEEPS)
    dense = np.zeros(N_CODES)
    scores = np.empty(N_BOXES, dtype=np.int64)
    ups = np.empty(config.PENTA_SOLVER_LANES, dtype=np.int64)
    last = -1
    for it in range(first + lo, first + hi):
        i = it - first
        s = states[items.state[it]]
        mask, up, fifty = state_mask(s), state_up(s), state_fifty(s)
        if s != last:
            state_value(Vmean, rp, T, mask, up, fifty, Mw, False, 0.0)
            last = s
        c0 = items.c0[it]
        lanes = 1
        if seat.kind == SEAT_STATE:
            for la in range(config.PENTA_SOLVER_LANES):
                ups[la] = up
            fill_state_cands(seat.V, seat.mult, rp, T, mask, fifty, ups, X)
        else:
            fill_row_cands(seat.R, rp, T, mask, up, fifty, c0, X)
            if c0 != _SETTLED:
                lanes = min(config.PENTA_SOLVER_LANES, items.x_hi[it] - items.x_lo[it] + 1)
        turn_from_cands(T, mask, X, True)
        ref = ref_dec[ref_slot[s]]
        for la in range(config.PENTA_SOLVER_LANES):
            out_n[i, la] = 0
        decide_lanes(rp, T, Vmean, mask, up, fifty, X, lanes, Mw, rel, config.PENTA_TIE_EPS,
                     rows)
        for la in range(lanes):
            bad, differ = turn_outcomes(rows[la], ref, rp, T, mask, fifty, mass, Q, dense,
                                        scores)
            illegal[i] += bad
            out_differ[i, la] = differ
            m = 0
            for c in range(N_CODES):
                if dense[c] != 0.0:
                    if m < MAX_OUTCOMES:
                        out_code[i, la, m] = c
                        out_p[i, la, m] = dense[c]
                    m += 1
                    dense[c] = 0.0
            out_n[i, la] = m


@njit(cache=True)
def _push(rp, states, items, first, n_items, out_code, out_p, out_n, out_differ, xlo, off, F,
          xlo_next, off_next, F_next, events, differ):
    """Move the probability of each item's TOTALs so far through its lanes' outcomes."""
    for it in range(first, first + n_items):
        i = it - first
        s = states[items.state[it]]
        base = off[items.state[it]] - xlo[items.state[it]]
        settled = items.c0[it] == _SETTLED
        for la in range(config.PENTA_SOLVER_LANES):
            if out_n[i, la] == 0:
                continue
            if settled:
                xa, xb = items.x_lo[it], items.x_hi[it]
            else:  # lane la: need c0 + la, i.e. TOTAL x_hi - la
                xa = xb = items.x_hi[it] - la
            w = 0.0
            for x in range(xa, xb + 1):
                w += F[base + x]
            if w == 0.0:
                continue
            differ[0] += w * out_differ[i, la]
            for o in range(out_n[i, la]):
                j, gain, b, sc, upper, fif, bonus = outcome_step(rp, s, out_code[i, la, o])
                p = out_p[i, la, o]
                to = off_next[j] - xlo_next[j] + gain
                for x in range(xa, xb + 1):
                    F_next[to + x] += F[base + x] * p
                p *= w
                events[b] += p * sc
                events[N_BOXES] += p * upper
                events[N_BOXES + 1] += p * fif
                events[N_BOXES + 2] += p * bonus


@njit(cache=True)
def _make_items(states, xlo, xhi, off, F, rlo, rhi, start, by_state, out_state, out_c0, out_lo,
                out_hi):
    """The items of a layer (see above): for each state with probability, its settled
    TOTALs (or all of them, ``by_state``) as range items, its row's TOTALs in groups."""
    n = 0
    L = config.PENTA_SOLVER_LANES
    for i in range(states.shape[0]):
        a, b = xlo[i], xhi[i]
        o = off[i] - a
        # TOTALs with probability
        first, last = b + 1, a - 1
        for x in range(a, b + 1):
            if F[o + x] != 0.0:
                first = min(first, x)
                last = x
        if first > last:
            continue
        if by_state:
            out_state[n], out_c0[n], out_lo[n], out_hi[n] = i, _SETTLED, first, last
            n += 1
            continue
        # row needs rlo..rhi <=> TOTALs start - rhi .. start - rlo
        r_a = max(first, start - rhi[i])
        r_b = min(last, start - rlo[i])
        if r_a > r_b:  # nothing in the row: all settled
            out_state[n], out_c0[n], out_lo[n], out_hi[n] = i, _SETTLED, first, last
            n += 1
            continue
        if first < r_a:
            out_state[n], out_c0[n], out_lo[n], out_hi[n] = i, _SETTLED, first, r_a - 1
            n += 1
        if r_b < last:
            out_state[n], out_c0[n], out_lo[n], out_hi[n] = i, _SETTLED, r_b + 1, last
            n += 1
        x = r_b  # groups from the highest TOTAL (lowest need) down
        while x >= r_a:
            g_lo = max(r_a, x - L + 1)
            has = False
            for y in range(g_lo, x + 1):
                if F[o + y] != 0.0:
                    has = True
            if has:
                out_state[n], out_c0[n], out_lo[n], out_hi[n] = i, start - x, g_lo, x
                n += 1
            x = g_lo - 1
    return n


def _layer_vectors(bounds, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xlo = bounds.xmin[states]
    xhi = bounds.xmax[states]
    width = xhi - xlo + 1
    off = (np.cumsum(width) - width).astype(np.int64)
    return xlo.astype(np.int64), off, width


#: Items per batch of the forward pass (their outcome buffers: about 10 kB per item).
_BATCH = 4096


def forward(seat: OnlineSeat, rules: RuleSet, card: Scorecard | None = None,
            rel: float = TIE_REL, progress: Callable[[int, int], None] | None = None
            ) -> dict[str, np.ndarray]:
    """The forward pass of an objective's policy from ``card`` (default: empty):
    ``probability`` (P(TOTAL = s)), ``events`` (of the turns still to play), ``differ``
    (expected decisions per game that differ from ``optimal``'s table), ``peak_bytes``.
    ``rel``: the objective's tie tolerance (that of the simulator by default). ``ValueError``
    if no game reaches ``card`` (its TOTAL outside its state's bounds). ``progress(done,
    total)`` counts the (state, TOTAL so far) pairs of the layers passed."""
    card = Scorecard() if card is None else card
    rp = rules.params
    bounds = score_bounds(rules)
    Vmean = solve(rules).values
    ref = decision_tables("optimal", rules)
    ref_dec = ref.decisions[ref.policies.index("optimal")]
    layers = layer_states()
    by_state = seat.kind == SEAT_STATE
    events = np.zeros(N_EVENTS)
    differ = np.zeros(1)
    n0 = bin(card.mask).count("1")
    states = layers[n0]
    xlo, off, width = _layer_vectors(bounds, states)
    F = np.zeros(int(width.sum()))
    i0 = int(np.searchsorted(states, card.state))
    if (i0 >= states.size or states[i0] != card.state
            or not xlo[i0] <= card.total < xlo[i0] + width[i0]):
        raise ValueError(f"no game reaches this card with TOTAL {card.total}")
    F[off[i0] + card.total - xlo[i0]] = 1.0
    peak = 0
    lanes = config.PENTA_SOLVER_LANES
    pairs = [int(_layer_vectors(bounds, layers[n])[2].sum()) for n in range(n0, N_BOXES)]
    for n in range(n0, N_BOXES):
        nxt = layers[n + 1]
        xlo_n, off_n, width_n = _layer_vectors(bounds, nxt)
        pos = np.full(N_STATES, -1, dtype=np.int64)
        pos[nxt] = np.arange(nxt.size)
        held = 8 * (F.size + int(width_n.sum())) + _BATCH * lanes * MAX_OUTCOMES * 12
        check_memory("the exact score distribution of an objective's policy", held + 4e8)
        peak = max(peak, held)
        # next-layer vectors indexed by state: scatter offsets over N_STATES
        off_s = np.zeros(N_STATES, dtype=np.int64)
        xlo_s = np.zeros(N_STATES, dtype=np.int64)
        off_s[nxt], xlo_s[nxt] = off_n, xlo_n
        F_next = np.zeros(int(width_n.sum()))
        rlo = seat.R.lo[states]
        rhi = rlo + seat.R.width[states] - 1
        cap = int(width.sum()) // lanes + 4 * states.size + 8
        it_state = np.empty(cap, dtype=np.int64)
        it_c0 = np.empty(cap, dtype=np.int64)
        it_lo = np.empty(cap, dtype=np.int64)
        it_hi = np.empty(cap, dtype=np.int64)
        n_items = _make_items(states, xlo, xlo + width - 1, off, F, rlo, rhi, seat.start,
                              by_state, it_state, it_c0, it_lo, it_hi)
        items = _Items(it_state[:n_items], it_c0[:n_items], it_lo[:n_items], it_hi[:n_items])
        out_code = np.zeros((_BATCH, lanes, MAX_OUTCOMES), dtype=np.int16)
        out_p = np.zeros((_BATCH, lanes, MAX_OUTCOMES))
        out_n = np.zeros((_BATCH, lanes), dtype=np.int64)
        out_differ = np.zeros((_BATCH, lanes))
        illegal = np.zeros(_BATCH, dtype=np.int64)
        for first in range(0, n_items, _BATCH):
            k = min(_BATCH, n_items - first)
            run_blocks(_item_outcomes, k, seat, Vmean, ref.slot, ref_dec, rp, TABLES, states,
                       items, first, out_code, out_p, out_n, out_differ, illegal, float(rel))
            if illegal.any():
                raise RuntimeError("an objective's decisions chose a box the rules forbid: a bug")
            _push(rp, states, items, first, k, out_code, out_p, out_n, out_differ, xlo, off, F,
                  xlo_s, off_s, F_next, events, differ)
            if progress is not None:
                layer = pairs[n - n0] * (first + k) // max(1, n_items)
                progress(sum(pairs[:n - n0]) + layer, sum(pairs))
        states, xlo, off, width, F = nxt, xlo_n, off_n, width_n, F_next
    probability = np.zeros(MAX_TOTAL + 1)
    for i in range(states.size):
        probability[xlo[i]:xlo[i] + width[i]] += F[off[i]:off[i] + width[i]]
    return {"probability": probability, "events": events, "differ": differ[0],
            "peak_bytes": np.array(peak)}



def _distribution_entry(solution: ObjectiveSolution,
                        progress: Callable[[int, int], None] | None = None
                        ) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    arrays = forward(online_seat(solution), solution.rules, progress=progress)
    arrays["differ"] = np.array(arrays["differ"])
    arrays["compute_s"] = np.array(time.perf_counter() - t0)
    return arrays


#: The cache entry of an objective's exact distribution: its key and format version.
_DISTRIBUTION_VERSION = f"{FORMAT_VERSION}"


def _distribution_key(obj: Objective, rs: RuleSet) -> str:
    return disk_cache.entry_key("penta-objective-distribution", rs.name, rs.digest,
                                objective=obj.name)


def objective_distribution(objective: str | Objective, rules: str | RuleSet | None = None,
                           use_cache: bool = True,
                           progress: Callable[[int, int], None] | None = None,
                           forward_progress: Callable[[int, int], None] | None = None
                           ) -> ScoreDistribution:
    """The exact distribution of the final TOTAL under ``objective``'s policy (policy name
    ``optimal:OBJECTIVE``; ``mean``: ``optimal``'s own) from an empty card, with the
    expected number of its decisions per game that differ from ``optimal``'s. Solves the
    objective first if needed (``progress`` follows that, ``forward_progress`` the forward
    pass: see :func:`forward`); cached on disk."""
    obj = objective if isinstance(objective, Objective) else parse_objective(objective)
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    t0 = time.perf_counter()
    if obj.kind == "mean":
        dist = score_distribution("optimal", rs, use_cache=use_cache)
        return dataclasses.replace(dist, differ_from_optimal=0.0)
    solution = solve_objective(obj, rs, use_cache=use_cache, progress=progress)
    if use_cache:
        arrays, from_cache = disk_cache.cached(
            _distribution_key(obj, rs), _DISTRIBUTION_VERSION,
            lambda: _distribution_entry(solution, forward_progress))
    else:
        arrays, from_cache = _distribution_entry(solution, forward_progress), False
    return distribution_from(f"optimal:{obj.name}", rs, arrays, from_cache, t0)


def known_distribution(objective: str | Objective, rules: str | RuleSet | None = None
                       ) -> ScoreDistribution | None:
    """:func:`objective_distribution` when it is on disk already (``dicelab solve penta
    --objective`` or a report card computed it), else None: nothing is solved or run."""
    obj = objective if isinstance(objective, Objective) else parse_objective(objective)
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    if obj.kind == "mean":
        return None
    t0 = time.perf_counter()
    arrays = disk_cache.load(_distribution_key(obj, rs), _DISTRIBUTION_VERSION)
    return None if arrays is None else distribution_from(f"optimal:{obj.name}", rs, arrays,
                                                         True, t0)


@dataclass(frozen=True)
class ObjectiveReport:
    """An objective solved, beside ``optimal``: the solution (its optimum), the exact
    distribution of the final TOTAL under its policy and under ``optimal``, and the
    objective's value of ``optimal``'s play (:attr:`optimal_value`)."""

    solution: ObjectiveSolution
    policy: ScoreDistribution
    optimal: ScoreDistribution
    optimal_value: float

    @property
    def objective(self) -> Objective:
        return self.solution.objective

    def to_dict(self) -> dict:
        d = self.solution.to_dict()
        d.update({
            "value_of_optimal": self.optimal_value,
            "gain_over_optimal": self.solution.value - self.optimal_value,
            "decisions_differing_from_optimal": self.policy.differ_from_optimal,
            "distribution": self.policy.to_dict(),
            "optimal_distribution": self.optimal.to_dict()})
        return d


def objective_report(objective: str | Objective, rules: str | RuleSet | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     forward_progress: Callable[[int, int], None] | None = None
                     ) -> ObjectiveReport:
    """Solve ``objective`` and compare its policy with ``optimal`` (both exactly);
    ``progress`` follows the solve, ``forward_progress`` the exact distribution's pass."""
    obj = objective if isinstance(objective, Objective) else parse_objective(objective)
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    solution = solve_objective(obj, rs, progress=progress)
    policy = objective_distribution(obj, rs, forward_progress=forward_progress)
    base = score_distribution("optimal", rs)
    return ObjectiveReport(solution, policy, base, objective_of(obj, rs, base.probability))


# --- optimal's distribution of the points to come, from every state --------------------------
# penta-win values a final TOTAL by its win share against opponents who play ``optimal``
# from the cards they hold; that needs P(points still to come = k) for every state:
# :func:`points_to_come`, a :class:`RowTable` whose row of state ``s`` holds k = 0 ..
# most[s]. Backwards from the full card (row [1]): a state's row is the sum over its turn's
# outcomes (``optimal``'s decisions) of the next state's row shifted by the points gained.


@njit(cache=True, nogil=True)
def _points_blocks(lo, hi, H, states, bounds, slot, dec, rp, T):
    mass = np.empty(N_ROLLS)
    Q = np.empty(N_KEEPS)
    dense = np.zeros(N_CODES)
    scores = np.empty(N_BOXES, dtype=np.int64)
    no_row = np.zeros(0, dtype=np.uint16)
    for i in range(bounds[lo], bounds[hi]):
        s = states[i]
        o, w = H.off[s] + 1, H.width[s]
        for k in range(w):
            H.F[o + k] = 0.0
        turn_outcomes(dec[slot[s]], no_row, rp, T, state_mask(s), state_fifty(s), mass, Q,
                      dense, scores)
        for c in range(N_CODES):
            p = dense[c]
            if p == 0.0:
                continue
            dense[c] = 0.0
            j, gain, _, _, _, _, _ = outcome_step(rp, s, c)
            oj, wj = H.off[j] + 1, H.width[j]
            for k in range(wj):
                H.F[o + gain + k] += p * H.F[oj + k]


def points_rows(rules: RuleSet) -> RowSpec:
    """The rows of :func:`points_to_come`: k = 0 .. most[s] points for each state."""
    bounds = score_bounds(rules)
    reach = bounds.xmax >= 0
    return RowSpec(np.zeros(N_STATES, dtype=np.int64),
                   np.where(reach, bounds.most + 1, 0).astype(np.int64), 0.0, 0.0,
                   final=lambda d: np.where(d == 0, 1.0, 0.0))


def solve_points(H: RowTable, rules: RuleSet, layers: range | None = None) -> None:
    """Fill :class:`RowTable` ``H`` of :func:`points_rows` (the full card's rows set)
    layer by layer from 12 filled boxes down to 0 (or ``layers``)."""
    ref = decision_tables("optimal", rules)
    dec = ref.decisions[ref.policies.index("optimal")]
    states_of = layer_states()
    for n in range(N_BOXES - 1, -1, -1) if layers is None else layers:
        states = states_of[n]
        blocks = row_blocks(H.width[states], 64 * max(1, threads()))
        run_blocks(_points_blocks, blocks.size - 1, H, states, blocks, ref.slot, dec,
                   rules.params, TABLES)


def _points_entry(rules: RuleSet) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    H = new_row_table(points_rows(rules), "optimal's distribution of the points to come "
                                          f"(rules '{rules.name}')")
    solve_points(H, rules)
    return {"F": H.F, "lo": H.lo, "width": H.width,
            "solve_s": np.array(time.perf_counter() - t0)}


_POINTS: dict[str, RowTable] = {}


def points_to_come_key(rules: RuleSet) -> str:
    """The cache key of :func:`points_to_come`'s table."""
    return disk_cache.entry_key("penta-points-to-come-optimal", rules.name, rules.digest)


def points_to_come(rules: str | RuleSet | None = None) -> RowTable:
    """``optimal``'s distribution of the points still to come from every state: row ``s``
    of the :class:`RowTable` holds P(points = k), k = 0 .. most[s] (about 2.3 GB, cached on
    disk and memory-mapped; refused before allocating if it does not fit the memory
    limit)."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    if rs.digest not in _POINTS:
        arrays, _ = cached_rows(points_to_come_key(rs), f"{FORMAT_VERSION}",
                                lambda: _points_entry(rs))
        _POINTS[rs.digest] = rows_of(arrays)
    return _POINTS[rs.digest]


# --- advice: every option of a decision under an objective -----------------------------------


@njit(cache=True)
def _prepare_turn(seat, Vmean, rp, T, mask, up, fifty, x, opp_states, opp_totals, X, Mw):
    """:func:`seat_turn` (its turn's values left in ``X``) and ``optimal``'s widget of the
    state (``Mw``)."""
    seat_turn(seat, rp, T, mask, up, fifty, x, opp_states, opp_totals, X,
              new_win_scratch(max(1, opp_states.shape[0])))
    state_value(Vmean, rp, T, mask, up, fifty, Mw, False, 0.0)


@njit(cache=True)
def _decide(rp, T, V, mask, up, fifty, X, Mw, r, left):
    return decide_roll(rp, T, V, mask, up, fifty, X, 0, Mw, TIE_REL, config.PENTA_TIE_EPS,
                       r, left)


def rank_objective_options(card: Scorecard, roll, rolls_left: int,
                           objective: str | Objective, rules: str | RuleSet | None = None
                           ) -> list[Option]:
    """Every option for ``roll`` (five faces) with ``rolls_left`` rerolls, ranked by
    ``objective`` (``optimal:OBJECTIVE``'s valuation, not ``mean``: see
    :func:`dicelab.penta.policies.rank_options`): ``expected_final_score`` holds the option's
    value in :attr:`Objective.unit` (``utility``: the certainty equivalent of the final
    TOTAL), ``loss`` its distance to the best. The first option is the one the policy
    plays; options within :data:`TIE_REL` of the best are tied."""
    obj = objective if isinstance(objective, Objective) else parse_objective(objective)
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    r = check_turn(card, roll, rolls_left, rs)
    seat = online_seat(solve_objective(obj, rs))
    V = solve(rs).values
    X, Mw = new_cand_scratch(), new_turn_scratch()
    rp = rs.params
    none = np.zeros(0, dtype=np.int64)
    _prepare_turn(seat, V, rp, TABLES, card.mask, card.up, card.fifty, card.total, none, none,
                  X, Mw)

    def unit(v: float) -> float:
        if obj.kind == "utility":
            return card.total + math.log(math.copysign(1.0, obj.theta) * v) / obj.theta
        return float(v)

    scores = np.empty(N_BOXES, dtype=np.int64)
    bonus = roll_box_scores(rp, TABLES, card.mask, card.fifty, r, scores)
    joker = TABLES.penta_face[r] != 0 and (card.mask >> PENTA_BOX) & 1
    raw = []  # (value, tie order, kind, keep, box, points)
    for b in range(N_BOXES):
        if scores[b] < 0:
            continue
        v = (X.jv[TABLES.penta_face[r], b, 0] if joker
             else X.cv[b, TABLES.box_class[b, r], 0])
        pts, _, _ = apply_box(card.up, card.fifty, b, int(scores[b]))
        raw.append((float(v), b - N_BOXES, "box", None, BOX_NAMES[b], int(pts) + bonus))
    box = int(_decide(rp, TABLES, V, card.mask, card.up, card.fifty, X, Mw, r, 0))
    played = ("box", BOX_NAMES[box])
    if rolls_left > 0:
        E = X.lanes.E if rolls_left == 2 else X.E1
        for k in SUBSETS[r]:
            if k < 0 or KEEP_SIZE[k] == N_DICE:
                continue
            raw.append((float(E[k, 0]), int(KEEP_PREFERENCE[k]), "keep",
                        tuple(dice.dice_of_rank(int(k))), None, None))
        pos = int(_decide(rp, TABLES, V, card.mask, card.up, card.fifty, X, Mw, r,
                          rolls_left))
        kept = int(SUBSETS[r, pos])
        if KEEP_SIZE[kept] < N_DICE:
            played = ("keep", tuple(dice.dice_of_rank(kept)))
    best = max(t[0] for t in raw)
    thr = best - TIE_REL * abs(best)

    def order(t):
        tied = t[0] >= thr
        is_played = (t[2], t[3] if t[2] == "keep" else t[4]) == played
        return (not is_played, not tied, t[1] if tied else -t[0])

    raw.sort(key=order)
    out: list[Option] = []
    top = unit(best)
    for val, _, kind, keep, box_name, pts in raw:
        tied = val >= thr
        out.append(Option(kind, keep, box_name, pts, unit(val), 0.0 if tied else top - unit(val),
                          tied, not out))
    return out


# --- judging logged decisions by an objective (``dicelab analyse``) ---------------------------


@njit(cache=True)
def _judge_turns(seat, V, rp, T, mask, up, fifty, total, n_rolls, rolls, keeps, box,
                 opp_states, opp_totals, n_opp, start, best, chosen, code, tied):
    """Per turn t (state ``mask[t]``, ``up[t]``, ``fifty[t]``, ``total[t]`` so far; a
    ``SEAT_WIN`` seat's opponents the first ``n_opp[t]`` of ``opp_states[t]`` and
    ``opp_totals[t]``) the seat's raw values (``E[u]``; a state objective's relative to the
    TOTAL so far; penta-win's win share):
    ``start[t]`` at the turn's start; per decision j (roll ``rolls[t, j]``, ``2 - j``
    rerolls left) ``best[t, j]`` the best option's, ``chosen[t, j]`` the chosen one's (keep
    ``keeps[t, j]`` if a roll follows, else box ``box[t]``), ``code[t, j]`` the option
    ``optimal:OBJECTIVE`` plays (a keep's rank, or -1 - box), ``tied[t, j]`` whether the
    chosen option is tied with the best (within :data:`TIE_REL`, relative)."""
    X, Mw = new_cand_scratch(), new_turn_scratch()
    for t in range(mask.shape[0]):
        m, u, f = mask[t], up[t], fifty[t]
        k = n_opp[t]
        _prepare_turn(seat, V, rp, T, m, u, f, total[t], opp_states[t, :k], opp_totals[t, :k],
                      X, Mw)
        start[t] = X.lanes.total[0]
        nr = n_rolls[t]
        for j in range(nr):
            r = rolls[t, j]
            left = 2 - j
            if left == 2:
                b_val = X.lanes.M[ROLL_BASE + r, 0]
            elif left == 1:
                b_val = X.M1[ROLL_BASE + r, 0]
            else:
                b_val = X.lanes.e3[r, 0]
            if j < nr - 1:
                k = keeps[t, j]
                c_val = X.lanes.E[k, 0] if left == 2 else X.E1[k, 0]
            else:
                b = box[t]
                if T.penta_face[r] != 0 and (m >> PENTA_BOX) & 1:
                    c_val = X.jv[T.penta_face[r], b, 0]
                else:
                    c_val = X.cv[b, T.box_class[b, r], 0]
            best[t, j] = b_val
            chosen[t, j] = c_val
            tied[t, j] = c_val >= b_val - TIE_REL * abs(b_val)
            kept = N_DICE
            if left > 0:
                pos = decide_roll(rp, T, V, m, u, f, X, 0, Mw, TIE_REL, config.PENTA_TIE_EPS,
                                  r, left)
                kept = T.subsets[r, pos]
            if left > 0 and KEEP_SIZE[kept] < N_DICE:
                code[t, j] = kept
            else:
                code[t, j] = -1 - decide_roll(rp, T, V, m, u, f, X, 0, Mw, TIE_REL,
                                              config.PENTA_TIE_EPS, r, 0)


@dataclass(frozen=True)
class Judged:
    """Logged turns judged by an objective, in its unit (:attr:`Objective.unit`; ``utility``
    its certainty equivalent of the final TOTAL), or by penta-win's win share
    (``objective`` None): ``start`` (n,), ``best``/``chosen``/``code``/``tied`` (n, 3) as
    the points analysis's arrays, ``outcome`` the objective's value of each final TOTAL
    (0..MAX_TOTAL; None for the win share, which depends on the other seats' TOTALs)."""

    objective: Objective | None
    start: np.ndarray
    best: np.ndarray
    chosen: np.ndarray
    code: np.ndarray
    tied: np.ndarray
    outcome: np.ndarray | None


def _judged(seat: OnlineSeat, rules: RuleSet, cols, opponents=None):
    """(start, best, chosen, code, tied) of :func:`_judge_turns` for the logged turns'
    columns ``cols`` (mask, up, fifty, total, n_rolls, rolls, keeps, box) and, for
    penta-win, ``opponents`` = (states, totals, counts) per turn."""
    n = len(cols[0])
    if opponents is None:
        opponents = (np.zeros((n, 0)), np.zeros((n, 0)), np.zeros(n))
    start = np.empty(n)
    best = np.full((n, 3), np.nan)
    chosen = np.full((n, 3), np.nan)
    code = np.zeros((n, 3), np.int64)
    tied = np.zeros((n, 3), np.bool_)
    as_int = [np.ascontiguousarray(a, dtype=np.int64) for a in (*cols, *opponents)]
    _judge_turns(seat, solve(rules).values, rules.params, TABLES, *as_int, start, best, chosen,
                 code, tied)
    return start, best, chosen, code, tied


def judge_turns(objective: str | Objective, rules: RuleSet, mask, up, fifty, total, n_rolls,
                rolls, keeps, box) -> Judged:
    """Judge logged Penta turns (arrays of the game log's columns) by ``objective``: each
    decision's best and chosen option valued as ``optimal:OBJECTIVE`` values them (not
    ``mean``, which the points analysis does; penta-win: :func:`judge_win_turns`)."""
    obj = objective if isinstance(objective, Objective) else parse_objective(objective)
    if obj.kind == "mean":
        raise ValueError("mean is judged in points by dicelab.analyse")
    seat = online_seat(solve_objective(obj, rules))
    start, best, chosen, code, tied = _judged(seat, rules, (mask, up, fifty, total, n_rolls,
                                                            rolls, keeps, box))
    outcome = score_utility(obj, rules)
    if obj.kind == "utility":  # certainty equivalents: the TOTAL so far plus the points'
        x = np.asarray(total, dtype=np.float64)
        sign = math.copysign(1.0, obj.theta)
        with np.errstate(invalid="ignore", divide="ignore"):
            start = x + np.log(sign * start) / obj.theta
            best = x[:, None] + np.log(sign * best) / obj.theta
            chosen = x[:, None] + np.log(sign * chosen) / obj.theta
        outcome = np.arange(MAX_TOTAL + 1, dtype=np.float64)
    return Judged(obj, start, best, chosen, code, tied, outcome)


def judge_win_turns(rules: RuleSet, mask, up, fifty, total, n_rolls, rolls, keeps, box,
                    opp_states, opp_totals, n_opp) -> Judged:
    """Judge logged Penta turns by penta-win's win share: each decision's best and chosen
    option valued as penta-win values them at that moment, against the other seats' cards
    (turn ``t``: the first ``n_opp[t]`` of ``opp_states[t]`` (state indices) and
    ``opp_totals[t]``), each finishing as ``optimal`` does. The values are penta-win's:
    the win share of the TOTAL after the box, the rest of its own game valued as if the
    others' final TOTALs were known (:func:`fill_win_cands`)."""
    n_opp = np.asarray(n_opp, dtype=np.int64)
    seat = win_seat(rules, 0, max(2, int(n_opp.max(initial=1)) + 1))
    start, best, chosen, code, tied = _judged(
        seat, rules, (mask, up, fifty, total, n_rolls, rolls, keeps, box),
        (opp_states, opp_totals, n_opp))
    return Judged(None, start, best, chosen, code, tied, None)


# --- the policies as policy objects (the referee's games, the game logs, ``play``) -----------


class OnlinePolicy:
    """``optimal:OBJECTIVE`` or ``penta-win`` as a Penta policy object
    (:class:`dicelab.penta.policy.Policy`): each turn prepared once as the simulation
    kernel prepares it (:func:`seat_turn`), each decision :func:`decide_roll`'s, so it
    plays the kernel's games. ``penta-win`` (``seat`` of ``seats``) values its TOTAL against
    the other seats' cards: whoever seats it shows it the table's cards before each of its
    turns (:meth:`observe`; :func:`dicelab.penta.referee.play_game` does)."""

    game = "penta"

    def __init__(self, name: str, seat_of: Callable[[RuleSet, int, int], OnlineSeat], *,
                 watches: bool, seat: int = 0, seats: int = 2) -> None:
        #: its turns' seat as the kernel plays it, made once per rule set:
        #: ``seat_of(rules, seat, seats)`` (its family's :meth:`kernel_seat`)
        self._seat_of = seat_of
        #: whether it values its TOTAL against the table's other cards (penta-win)
        self.watches = watches
        self.name = name
        self.params: dict = {}
        self.seat, self.seats = seat, seats
        self._cards: list[Scorecard] | None = None
        self._seat: tuple[str, OnlineSeat] | None = None
        self._turn: tuple | None = None

    def __repr__(self) -> str:
        return f"OnlinePolicy({self.name!r}, seat={self.seat}, seats={self.seats})"

    def observe(self, cards: list[Scorecard], seat: int) -> None:
        """The table's cards (one per seat, this policy's at ``seat``) before its turn."""
        if self.watches and len(cards) != self.seats:
            raise UserError(f"{self.name} was seated at a table of {self.seats}, not "
                            f"{len(cards)}")
        self._cards = list(cards)
        self.seat = seat

    def _online(self, rules: RuleSet) -> OnlineSeat:
        if self._seat is None or self._seat[0] != rules.digest:
            self._seat = (rules.digest, self._seat_of(rules, self.seat, self.seats))
        return self._seat[1]

    def _opponents(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.watches:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if self._cards is None:
            raise UserError(f"{self.name} needs the table's cards before its turn (observe)")
        others = [c for q, c in enumerate(self._cards) if q != self.seat]
        return (np.array([c.state for c in others], dtype=np.int64),
                np.array([c.total for c in others], dtype=np.int64))

    def decide(self, state):
        from dicelab.penta.tables import SUBSETS

        rs = state.rules
        card = state.card
        opp_states, opp_totals = self._opponents()
        key = (rs.digest, card, tuple(opp_states), tuple(opp_totals))
        V = solve(rs).values
        if self._turn is None or self._turn[0] != key:
            X, Mw = new_cand_scratch(), new_turn_scratch()
            _prepare_turn(self._online(rs), V, rs.params, TABLES, card.mask, card.up,
                          card.fifty, card.total, opp_states, opp_totals, X, Mw)
            self._turn = (key, X, Mw)
        _, X, Mw = self._turn
        r = check_turn(card, state.roll, state.rolls_left)
        d = int(_decide(rs.params, TABLES, V, card.mask, card.up, card.fifty, X, Mw, r,
                        state.rolls_left))
        if state.rolls_left == 0:
            return BOX_NAMES[d]
        return tuple(dice.dice_of_rank(int(SUBSETS[r, d])))
