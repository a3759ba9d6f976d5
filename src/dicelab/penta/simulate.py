"""Simulate Penta games: each seat plays its own card with its own dice (layer 2).

``simulate_penta(seats, games=1_000_000, seed=1)`` plays ``games`` games per seat.
Games are split into fixed chunks (:mod:`dicelab.seeding`); each chunk owns one
xoshiro256** generator and rolls all of seat 0's games, then seat 1's, ..., so results
are identical whatever the number of threads. With ``streams=STREAM_PER_TURN`` every
turn draws from its own stream instead, keyed by (game, seat, turn) from the chunk's
generator (:func:`dicelab.rng.keyed_state`): a seat's dice then do not depend on the
other seats' policies, so tables that share the seed and swap the policies give each
seat's luck to each policy in turn (common random numbers for tournaments). Within a
chunk the games advance in lockstep, turn by turn and roll by roll, so that the table
lookups of different games overlap in memory.

:func:`play_scripted` plays the same kernels (:func:`_play_chunk`; with a seat that decides
turn by turn :func:`_play_chunk_online`) on given dice, one script of faces per seat and
game, for checks against a reference.

Everything is accumulated in integers (histograms of TOTAL, per-box sums and sums
of squares, counts: a :class:`Tallies`) and merged exactly; :class:`PentaResult` turns
them into means with 95% intervals, percentiles and win rates (:class:`PentaSeat`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numba
import numpy as np
from numba import njit

from dicelab import config, dice, seeding, user_policy
from dicelab.errors import UserError
from dicelab.jit import helper
from dicelab.parallel import in_background, run_blocks
from dicelab.penta.builtin import check_table, family_of
from dicelab.penta.objective_play import (
    SEAT_WIN,
    TIE_REL,
    new_win_scratch,
    seat_turn,
    table_seat,
)
from dicelab.penta.policies import (
    DecisionTables,
    all_states,
    decision_block_stored,
    decision_tables,
)
from dicelab.penta.rules import (
    BOX_NAMES,
    FACES,
    N_BOXES,
    N_DICE,
    PENTA_BOX,
    REROLLS,
    RuleParams,
    RuleSet,
    get_rules,
    state_index,
)
from dicelab.penta.scoring import MAX_TOTAL, TABLES, apply_box, roll_box_scores
from dicelab.penta.solver import compile_kernel as compile_solver_kernel
from dicelab.penta.solver import solve
from dicelab.penta.tables import BOX_SHIFT, KEEP1_SHIFT, KEEP_BITS, N_ROLLS, ROLL_BASE
from dicelab.penta.widget import (
    decide_roll,
    keep_tied,
    new_cand_scratch,
    new_turn_scratch,
    state_value,
)
from dicelab.registry import PolicySpec, parse_policy, valid_names
from dicelab.resources import check_memory
from dicelab.results import frame_row, played_by, policy_params
from dicelab.rng import (
    STREAM_PER_CHUNK,
    STREAM_PER_TURN,
    faces_rank,
    keyed_state,
    roll_dice,
    roll_dice_at,
)
from dicelab.runner import PER_CHUNK, LazyArrays, executor_info, plan_token, run_plan
from dicelab.stats import (
    Estimate,
    Proportion,
    fields,
    mean_estimate,
    percentiles_from_histogram,
)

if TYPE_CHECKING:
    import pandas as pd

#: Names of the game kernels, as manifests record them (``kernel``): the seats play from
#: decision tables; a seat decides turn by turn (an objective's, penta-win); every seat is
#: played by the Python referee (a user's policy at the table).
TABLE_KERNEL, ONLINE_KERNEL, REFEREE_KERNEL = "tables", "online", "referee"

#: Histogram bins of TOTAL: 0..MAX_TOTAL (:data:`dicelab.penta.scoring.MAX_TOTAL`).


class SeatPolicies(NamedTuple):
    """What the seats play: ``decisions[seat_policy[s], slot[state], r]`` (see
    :class:`~dicelab.penta.policies.DecisionTables`), or, for a seat whose
    ``online[online_of[s]]`` has a kind (:class:`~dicelab.penta.objective_play.
    OnlineSeat`), decisions taken turn by turn from its value tables, ties settled by
    ``optimal``'s values ``mean_values``. ``online`` holds each distinct seat once, led by
    the seat of the tables: its length, part of the kernels' type, does not grow with the
    seats (a tuple of one entry per seat made a table of 100 seats a compile of minutes)."""

    slot: np.ndarray  # int32 (N_STATES,)
    decisions: np.ndarray  # uint16 (policies, rows, 252)
    seat_policy: np.ndarray  # int64 (seats,)
    online: tuple  # distinct OnlineSeats, the tables' (kind 0) first
    online_of: np.ndarray  # int64 (seats,): each seat's entry of ``online``
    mean_values: np.ndarray  # float64 (N_STATES,) or empty (no online seat)


class DiceSource(NamedTuple):
    """Where a chunk's dice come from: the generator ``state`` (``streams``: drawn in turn,
    or the key of a stream per turn; see the module docstring) or, if ``faces`` is not
    empty, scripts. Script ``i`` (seat ``s``, game ``g``: ``i = s * games + g``) is
    ``faces[bounds[i]:bounds[i + 1]]`` (faces 1..6); a roll of ``n`` dice reads its next
    ``n`` faces from ``cursor[i]`` on. A script that runs out sets ``short[i]``; its game
    goes on with 1s, so the kernel always finishes."""

    state: np.ndarray  # uint64 (4,)
    faces: np.ndarray  # int64 (n,)
    bounds: np.ndarray  # int64 (scripts + 1,)
    cursor: np.ndarray  # int64 (scripts,)
    short: np.ndarray  # int64 (scripts,)
    streams: int  # dicelab.rng.STREAM_PER_CHUNK or STREAM_PER_TURN


class Tallies(NamedTuple):
    """Integer books of chunks ``j`` and seats ``s`` (leading axes (chunks, seats)).

    ``hist[j, s, t]``: games with TOTAL ``t``; ``box_sum``/``box_sq[j, s, b]``: sums of the
    scores of box ``b`` and of their squares; ``upper_bonus``, ``fifty``: games with the
    upper bonus / 50 in the Penta box; ``bonus_sum``/``bonus_sq``: Penta bonuses per game
    (sum and sum of squares); ``illegal``: box choices the rules forbid (a bug if not 0);
    ``wins``: games won alone; ``tied``: games with a shared highest TOTAL that the seat
    shares; ``ties[j]``: games with a shared highest TOTAL; ``beat[j, s, q]``: games seat
    ``s`` finished with a higher TOTAL than seat ``q``.
    """

    hist: np.ndarray
    box_sum: np.ndarray
    box_sq: np.ndarray
    upper_bonus: np.ndarray
    fifty: np.ndarray
    bonus_sum: np.ndarray
    bonus_sq: np.ndarray
    illegal: np.ndarray
    wins: np.ndarray
    tied: np.ndarray
    ties: np.ndarray
    beat: np.ndarray


def tallies_bytes(chunks: int, seats: int) -> int:
    """Bytes of :func:`new_tallies` (``chunks``, ``seats``)."""
    return 8 * (chunks * seats * (MAX_TOTAL + 1 + 2 * N_BOXES + 7 + seats) + chunks)


def new_tallies(chunks: int, seats: int) -> Tallies:
    """Zeroed :class:`Tallies` for ``chunks`` chunks of ``seats`` seats."""
    def zeros(*shape: int) -> np.ndarray:
        return np.zeros(shape, dtype=np.int64)

    per_seat = ("upper_bonus", "fifty", "bonus_sum", "bonus_sq", "illegal", "wins", "tied")
    return Tallies(hist=zeros(chunks, seats, MAX_TOTAL + 1),
                   box_sum=zeros(chunks, seats, N_BOXES), box_sq=zeros(chunks, seats, N_BOXES),
                   ties=zeros(chunks), beat=zeros(chunks, seats, seats),
                   **{name: zeros(chunks, seats) for name in per_seat})


#: The fields of :class:`Tallies` a ``per_chunk`` run keeps chunk by chunk: who finished
#: ahead of whom, what a tournament's uncertainty is computed from.
CHUNK_TALLIES = ("wins", "tied", "beat")


def _sum_chunks(t: Tallies) -> dict[str, np.ndarray]:
    """The books summed over chunks, by field name (``ties`` keeps one element)."""
    out = {name: a.sum(axis=0) for name, a in t._asdict().items()}
    out["ties"] = t.ties.sum(keepdims=True)
    return out


class Lockstep(NamedTuple):
    """The cards of a chunk's games, one seat at a time (games advance together), each
    seat's TOTALs (``totals[s, g]``) and, with a stream per turn, each game's generator
    of the turn (``keyed[g]``)."""

    mask: np.ndarray
    up: np.ndarray
    fifty: np.ndarray
    roll: np.ndarray
    row: np.ndarray
    keep: np.ndarray
    nbonus: np.ndarray
    totals: np.ndarray  # int64 (seats, games)
    scores: np.ndarray  # int64 (13,)
    keyed: np.ndarray  # uint64 (games, 4)
    trace_state: np.ndarray  # int64 (seats, 14, games): the state after each turn
    trace_total: np.ndarray  # int64 (seats, 14, games): the TOTAL after each turn


@helper(cache=True)
def _new_lockstep(seats, games):
    return Lockstep(np.empty(games, dtype=np.int64), np.empty(games, dtype=np.int64),
                    np.empty(games, dtype=np.int64), np.empty(games, dtype=np.int64),
                    np.empty(games, dtype=np.int64), np.empty(games, dtype=np.int64),
                    np.empty(games, dtype=np.int64), np.empty((seats, games), dtype=np.int64),
                    np.empty(N_BOXES, dtype=np.int64), np.empty((games, 4), dtype=np.uint64),
                    np.zeros((seats, N_BOXES + 1, games), dtype=np.int64),
                    np.zeros((seats, N_BOXES + 1, games), dtype=np.int64))


@helper(cache=True)
def _scripted_roll(src, i, n):
    """Global rank of the next ``n`` faces of script ``i`` (the first ``n``-dice multiset,
    all 1s, with ``short[i]`` set if the script has fewer left)."""
    pos = src.cursor[i]
    if pos + n > src.bounds[i + 1]:
        src.short[i] = 1
        return np.int64(dice.SIZE_OFFSET[n])
    src.cursor[i] = pos + n
    return faces_rank(src.faces, pos, n)


@njit(inline="always")
def _box_score(rp, T, ordinary, penta_face, m, f, r, b, scores):
    """(score, Penta bonus) of writing final roll ``r`` into box ``b`` of a card with
    filled boxes ``m`` and 50 flag ``f``; score -1 if the rules forbid the box."""
    if penta_face[r] != 0 and (m >> PENTA_BOX) & 1:
        # a Penta with the Penta box filled: the rule set's joker and bonus
        bonus = roll_box_scores(rp, T, m, f, r, scores)
        return scores[b], bonus
    # any other roll scores ordinarily (as roll_box_scores gives it)
    return (-1 if (m >> b) & 1 else ordinary[b, r]), 0


@helper(cache=True)
def _play_seat(src, pol, rp, T, W, tl, j, s):
    """Play seat ``s``'s games of chunk ``j`` in lockstep: TOTALs into ``W.totals[s]``,
    books into row ``(j, s)`` of ``tl``.

    Table lookups are gathered in their own passes over all games (no random numbers
    in between), so many cache misses are in flight at once; the random numbers are
    drawn in game order in separate passes, which fixes the stream's use. The arrays are
    taken out of their groups once, here: an array group handed to an inlined helper
    inside the game loops costs reference-count updates per game and turn (measured:
    the simulation a third slower).
    """
    G = W.mask.shape[0]
    p = pol.seat_policy[s]
    slot, dec = pol.slot, pol.decisions
    trace_state, trace_total = W.trace_state[s], W.trace_total[s]
    ordinary, penta_face = T.ordinary, T.penta_face
    subsets, keep_size, union = T.subsets, T.keep_size, T.union
    mask, up, fifty, roll, row, kk, nbonus = (W.mask, W.up, W.fifty, W.roll, W.row, W.keep,
                                              W.nbonus)
    scores = W.scores
    totals = W.totals[s]
    box_sum = tl.box_sum[j, s]
    box_sq = tl.box_sq[j, s]
    state = src.state
    scripted = src.faces.shape[0] > 0
    per_turn = src.streams == STREAM_PER_TURN
    keyed = W.keyed
    key0 = state[0]
    key1 = state[1]
    first = s * G  # script of game g: first + g
    upper = 0
    fifties = 0
    illegal = 0
    for g in range(G):
        mask[g] = 0
        up[g] = 0
        fifty[g] = 0
        totals[g] = 0
        nbonus[g] = 0
    for turn in range(N_BOXES):
        for g in range(G):
            row[g] = slot[state_index(mask[g], up[g], fifty[g])]
        # the draw loops are written out for each dice source: a branch and a call to the
        # script reader inside the generator's loops cost 40% of the simulation's speed
        if scripted:
            for g in range(G):
                roll[g] = _scripted_roll(src, first + g, np.int64(N_DICE)) - ROLL_BASE
        elif per_turn:
            for g in range(G):
                keyed[g, 0], keyed[g, 1], keyed[g, 2], keyed[g, 3] = keyed_state(
                    key0, key1, g, s, turn)
                roll[g] = roll_dice_at(keyed, g, N_DICE) - ROLL_BASE
        else:
            for g in range(G):
                roll[g] = roll_dice(state, N_DICE) - ROLL_BASE
        for stage in range(REROLLS):
            shift = 0 if stage == 0 else KEEP1_SHIFT
            for g in range(G):
                r = roll[g]
                kk[g] = subsets[r, (dec[p, row[g], r] >> shift) & KEEP_BITS]
            if scripted:
                for g in range(G):
                    n = N_DICE - keep_size[kk[g]]
                    if n > 0:
                        roll[g] = union[kk[g], _scripted_roll(src, first + g, n)]
            elif per_turn:
                for g in range(G):
                    n = N_DICE - keep_size[kk[g]]
                    if n > 0:
                        roll[g] = union[kk[g], roll_dice_at(keyed, g, n)]
            else:
                for g in range(G):
                    n = N_DICE - keep_size[kk[g]]
                    if n > 0:
                        roll[g] = union[kk[g], roll_dice(state, n)]
        for g in range(G):
            kk[g] = dec[p, row[g], roll[g]] >> BOX_SHIFT
        for g in range(G):
            r = roll[g]
            b = kk[g]
            m = mask[g]
            f = fifty[g]
            sc, bonus = _box_score(rp, T, ordinary, penta_face, m, f, r, b, scores)
            if sc < 0:
                illegal += 1  # a decision the rules forbid: the wrapper raises
                sc = 0
            pts, nu, nf = apply_box(up[g], f, b, sc)
            upper += pts > sc
            fifties += nf > f
            nbonus[g] += bonus > 0
            up[g] = nu
            fifty[g] = nf
            mask[g] = m | (1 << b)
            totals[g] += pts + bonus
            box_sum[b] += sc
            box_sq[b] += sc * sc
            trace_state[turn + 1, g] = state_index(mask[g], nu, nf)
            trace_total[turn + 1, g] = totals[g]
    bonus_sum = 0
    bonus_sq = 0
    for g in range(G):
        bonus_sum += nbonus[g]
        bonus_sq += nbonus[g] * nbonus[g]
    tl.upper_bonus[j, s] += upper
    tl.fifty[j, s] += fifties
    tl.illegal[j, s] += illegal
    tl.bonus_sum[j, s] += bonus_sum
    tl.bonus_sq[j, s] += bonus_sq


@njit(inline="always")
def _draw(src, W, g, i, n, scripted, per_turn):
    """Global rank of ``n`` dice for game ``g`` (script ``i``) from the chunk's source."""
    if scripted:
        return _scripted_roll(src, i, np.int64(n))
    if per_turn:
        return roll_dice_at(W.keyed, g, n)
    return roll_dice(src.state, n)


@helper(cache=True)
def _play_seat_online(src, pol, rp, T, W, tl, j, s):
    """Seat ``s``'s games of chunk ``j`` for a seat that decides turn by turn
    (:func:`~dicelab.penta.objective_play.seat_turn`), one game after another; books as
    :func:`_play_seat`. penta-win reads its opponents' cards from ``W.trace_*``: a seat
    before it has played one more turn than it when it starts a turn."""
    seat = pol.online[pol.online_of[s]]
    G = W.mask.shape[0]
    S = pol.seat_policy.shape[0]
    X = new_cand_scratch()
    Mw = new_turn_scratch()
    Sw = new_win_scratch(max(1, S - 1))
    n_opp = seat.opponents.shape[0]
    opp_states = np.zeros(n_opp, dtype=np.int64)
    opp_totals = np.zeros(n_opp, dtype=np.int64)
    scores = W.scores
    scripted = src.faces.shape[0] > 0
    per_turn = src.streams == STREAM_PER_TURN
    key0, key1 = src.state[0], src.state[1]
    eps = config.PENTA_TIE_EPS
    upper = 0
    fifties = 0
    illegal = 0
    for g in range(G):
        # int64, not literal 0s: numba would type (and compile) the calls for those too
        mask = up = fifty = total = nbonus = np.int64(0)
        for turn in range(N_BOXES):
            for q in range(n_opp):
                o = seat.opponents[q]
                done = turn + 1 if o < s else turn
                opp_states[q] = W.trace_state[o, done, g]
                opp_totals[q] = W.trace_total[o, done, g]
            seat_turn(seat, rp, T, mask, up, fifty, total, opp_states, opp_totals, X, Sw)
            mean_ready = False  # optimal's widget of the state: computed when a keep is tied
            if per_turn:
                (W.keyed[g, 0], W.keyed[g, 1], W.keyed[g, 2],
                 W.keyed[g, 3]) = keyed_state(key0, key1, g, s, turn)
            r = _draw(src, W, g, s * G + g, N_DICE, scripted, per_turn) - ROLL_BASE
            for left in range(REROLLS, 0, -1):
                if not mean_ready and keep_tied(T, X, 0, TIE_REL, r, left):
                    state_value(pol.mean_values, rp, T, mask, up, fifty, Mw, False, 0.0)
                    mean_ready = True
                pos = decide_roll(rp, T, pol.mean_values, mask, up, fifty, X, 0, Mw, TIE_REL,
                                  eps, r, left)
                k = T.subsets[r, pos]
                n = N_DICE - T.keep_size[k]
                if n > 0:
                    r = T.union[k, _draw(src, W, g, s * G + g, n, scripted, per_turn)]
            b = decide_roll(rp, T, pol.mean_values, mask, up, fifty, X, 0, Mw, TIE_REL, eps,
                            r, np.int64(0))  # the rerolls' signature (left: int64)
            sc, bonus = _box_score(rp, T, T.ordinary, T.penta_face, mask, fifty, r, b, scores)
            if sc < 0:
                illegal += 1
                sc = 0
            pts, nu, nf = apply_box(up, fifty, b, sc)
            upper += pts > sc
            fifties += nf > fifty
            nbonus += bonus > 0
            up, fifty, mask = nu, nf, mask | (1 << b)
            total += pts + bonus
            tl.box_sum[j, s, b] += sc
            tl.box_sq[j, s, b] += sc * sc
            W.trace_state[s, turn + 1, g] = state_index(mask, up, fifty)
            W.trace_total[s, turn + 1, g] = total
        W.totals[s, g] = total
        tl.bonus_sum[j, s] += nbonus
        tl.bonus_sq[j, s] += nbonus * nbonus
    tl.upper_bonus[j, s] += upper
    tl.fifty[j, s] += fifties
    tl.illegal[j, s] += illegal


@helper(cache=True)
def _book_games(W, tl, j):
    """Row ``j`` of ``tl``: each seat's TOTALs (``W.totals``) into its histogram, then who won
    each game."""
    S = W.totals.shape[0]
    G = W.totals.shape[1]
    totals = W.totals
    for s in range(S):
        for g in range(G):
            tl.hist[j, s, min(totals[s, g], MAX_TOTAL)] += 1
    if S > 1:
        for g in range(G):
            best = totals[0, g]
            for s in range(1, S):
                best = max(best, totals[s, g])
            n_best = 0
            for s in range(S):
                if totals[s, g] == best:
                    n_best += 1
            for s in range(S):
                if totals[s, g] == best:
                    if n_best == 1:
                        tl.wins[j, s] += 1
                    else:
                        tl.tied[j, s] += 1
            if n_best > 1:
                tl.ties[j] += 1
            for s in range(S):
                for q in range(S):
                    if totals[s, g] > totals[q, g]:
                        tl.beat[j, s, q] += 1


# The chunk loops are inlined into the chunk kernels: a function of its own would add a
# level whose library optimises and generates all of the game kernel's code once more
# on a first run. :func:`play_scripted` calls them from Python (compiled on their own).
@njit(inline="always", cache=True)
def _play_chunk(src, pol, rp, T, W, tl, j):
    """Every seat's games of chunk ``j``, every seat playing from decision tables, then who
    won each game (row ``j`` of ``tl``). Tables with an online seat play
    :func:`_play_chunk_online`: this kernel does not compile their turn."""
    for s in range(pol.seat_policy.shape[0]):
        _play_seat(src, pol, rp, T, W, tl, j, s)
    _book_games(W, tl, j)


@njit(inline="always", cache=True)
def _play_chunk_online(src, pol, rp, T, W, tl, j):
    """:func:`_play_chunk` for a table with online seats (objectives', penta-win)."""
    S = pol.seat_policy.shape[0]
    # seats that play from tables, then objectives' seats, then penta-win's, which read
    # the others' cards turn by turn (each seat's dice are its own, whatever the order)
    for phase in range(3):
        for s in range(S):
            kind = pol.online[pol.online_of[s]].kind
            if (phase == 0) == (kind == 0) and (phase == 2) == (kind == SEAT_WIN):
                if kind == 0:
                    _play_seat(src, pol, rp, T, W, tl, j, s)
                else:
                    _play_seat_online(src, pol, rp, T, W, tl, j, s)
    _book_games(W, tl, j)


@helper(cache=True)
def _chunk_start(states, bounds, first, j, seats, streams):
    """The dice source and the lockstep arrays of chunk ``first + j``."""
    no_script = np.zeros(0, dtype=np.int64)
    src = DiceSource(states[j].copy(), no_script, np.zeros(1, dtype=np.int64), no_script,
                     no_script, streams)
    return src, _new_lockstep(seats, bounds[first + j + 1] - bounds[first + j])


@njit(cache=True, nogil=True)
def _simulate_chunks(lo, hi, states, bounds, first, pol, rp, T, tl, streams):
    """Chunks ``first + lo .. first + hi - 1`` on their generators ``states[j]``
    (``streams``: the layout, see the module docstring), every seat playing from decision
    tables; chunk ``first + j`` writes only row ``j`` of ``tl``."""
    for j in range(lo, hi):
        src, W = _chunk_start(states, bounds, first, j, pol.seat_policy.shape[0], streams)
        _play_chunk(src, pol, rp, T, W, tl, j)


@njit(cache=True, nogil=True)
def _simulate_chunks_online(lo, hi, states, bounds, first, pol, rp, T, tl, streams):
    """:func:`_simulate_chunks` for a table with online seats."""
    for j in range(lo, hi):
        src, W = _chunk_start(states, bounds, first, j, pol.seat_policy.shape[0], streams)
        _play_chunk_online(src, pol, rp, T, W, tl, j)


# --- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PentaSeat:
    """What one seat's games estimate: attributes for code, :meth:`to_dict` for JSON.

    ``mean_final_score``: mean TOTAL; ``final_score_sd``: its standard deviation;
    ``percentiles[q]``: the lower empirical ``q``-th percentile of TOTAL;
    ``p_upper_bonus``/``p_penta_fifty``: games with the upper bonus / 50 in the Penta box;
    ``mean_penta_bonuses``: Penta bonuses per game; ``mean_box_scores[name]``: mean score of
    each box. With several seats: ``wins`` (alone), ``ties`` (a shared highest TOTAL),
    ``losses``, ``win_rate``, ``tie_rate`` (else None). ``expected_final_score``: the
    exact mean TOTAL where it is known without more work: ``optimal``'s (the solver's
    value), an objective's once its exact distribution was computed (else None).
    """

    seat: int
    policy: str
    mean_final_score: Estimate
    final_score_sd: float
    percentiles: dict[int, float]
    p_upper_bonus: Proportion
    p_penta_fifty: Proportion
    mean_penta_bonuses: Estimate
    mean_box_scores: dict[str, Estimate]
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    win_rate: Proportion | None = None
    tie_rate: Proportion | None = None
    expected_final_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat": self.seat,
            "policy": self.policy,
            **fields("mean_final_score", self.mean_final_score),
            "final_score_sd": self.final_score_sd,
            "final_score_percentiles": {str(q): v for q, v in self.percentiles.items()},
            **fields("p_upper_bonus", self.p_upper_bonus),
            **fields("p_penta_fifty", self.p_penta_fifty),
            **fields("mean_penta_bonuses", self.mean_penta_bonuses),
            "mean_box_scores": {name: b.mean for name, b in self.mean_box_scores.items()},
            "mean_box_scores_se": {name: b.se for name, b in self.mean_box_scores.items()},
        }
        if self.win_rate is not None and self.tie_rate is not None:
            out.update({"wins": self.wins, "ties": self.ties, "losses": self.losses,
                        **fields("win_rate", self.win_rate),
                        **fields("tie_rate", self.tie_rate)})
        if self.expected_final_score is not None:
            out["expected_final_score"] = self.expected_final_score
        return out


@dataclass(frozen=True)
class PentaResult:
    """Integer accumulators of a Penta simulation, per seat, and what they estimate.

    ``hist[s, t]``: games of seat ``s`` with TOTAL ``t`` (0..MAX_TOTAL); ``box_sum``/
    ``box_sq`` (seats, 13): sums of box scores and their squares; ``upper_bonus``,
    ``fifty``: games with the upper bonus / 50 in the Penta box; ``bonus_sum``/
    ``bonus_sq``: Penta bonuses (sum over games, and of squares); ``wins[s]``: games seat
    ``s`` won alone; ``tied[s]``: games it shared the highest TOTAL; ``ties``: games with a
    shared top. :meth:`seat` gives one seat's estimates.

    ``elapsed_s``: simulation wall time; ``setup_s``: solving or loading the values and
    the decision tables before it; ``threads``: numba threads of this process;
    ``kernel``: the game kernel that played (``TABLE_KERNEL``, ...); ``seat_params``:
    each seat's policy family and parameters;
    ``executor``: "local" (this process) or "dask" (``workers`` Dask workers).
    ``beat[s, q]``: games seat ``s`` finished with a higher TOTAL than seat ``q``;
    ``chunk_tallies``: with ``per_chunk``, each chunk's ``wins``, ``tied`` (chunks, seats)
    and ``beat`` (chunks, seats, seats), else None.
    """

    seats: tuple[str, ...]
    rules: str
    games: int
    seed: int
    seed_given: bool
    hist: np.ndarray
    box_sum: np.ndarray
    box_sq: np.ndarray
    upper_bonus: np.ndarray
    fifty: np.ndarray
    bonus_sum: np.ndarray
    bonus_sq: np.ndarray
    wins: np.ndarray
    tied: np.ndarray
    ties: int
    elapsed_s: float
    setup_s: float
    threads: int
    table_bytes: int
    exact_scores: tuple[float | None, ...]  # each seat's, where known (PentaSeat)
    chunk_games: int = config.CHUNK_GAMES
    game: str = "penta"
    executor: str = "local"
    workers: int | None = None
    beat: np.ndarray | None = None
    chunk_tallies: dict[str, np.ndarray] | None = None
    kernel: str | None = None
    seat_params: tuple[dict[str, Any], ...] = ()

    @property
    def games_per_s(self) -> float:
        """Games (all seats together count as one game) per second of simulation."""
        return self.games / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    @property
    def tie_rate(self) -> Proportion:
        """Games whose highest TOTAL was shared (meaningful with several seats)."""
        return Proportion(int(self.ties), self.games)

    def seat(self, s: int) -> PentaSeat:
        """Seat ``s``'s estimates."""
        n = self.games
        values = np.arange(MAX_TOTAL + 1, dtype=np.int64)
        h = self.hist[s].astype(object)  # exact sums of squares beyond int64
        score = mean_estimate(int((h * values).sum()), int((h * values * values).sum()), n,
                              (0.0, float(MAX_TOTAL)))
        sd = float(score.se * np.sqrt(n)) if n > 1 else float("nan")
        boxes = {name: mean_estimate(int(self.box_sum[s, b]), int(self.box_sq[s, b]), n,
                                     (0.0, np.inf))  # (a box scores 0 or more)
                 for b, name in enumerate(BOX_NAMES)}
        duel: dict[str, Any] = {}
        if len(self.seats) > 1:
            wins, tied = int(self.wins[s]), int(self.tied[s])
            duel = {"wins": wins, "ties": tied, "losses": n - wins - tied,
                    "win_rate": Proportion(wins, n), "tie_rate": Proportion(tied, n)}
        exact = self.exact_scores[s]
        return PentaSeat(
            seat=s, policy=self.seats[s], mean_final_score=score, final_score_sd=sd,
            percentiles=percentiles_from_histogram(self.hist[s], values),
            p_upper_bonus=Proportion(int(self.upper_bonus[s]), n),
            p_penta_fifty=Proportion(int(self.fifty[s]), n),
            mean_penta_bonuses=mean_estimate(int(self.bonus_sum[s]), int(self.bonus_sq[s]),
                                             n, (0.0, np.inf)),
            mean_box_scores=boxes, expected_final_score=exact, **duel)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "game": self.game,
            "rules": self.rules,
            "games": self.games,
            "seed": self.seed,
            "seats": [self.seat(s).to_dict() for s in range(len(self.seats))],
            "elapsed_s": self.elapsed_s,
            "games_per_s": self.games_per_s,
            "setup_s": self.setup_s,
            "threads": self.threads,
            "table_bytes": self.table_bytes,
            "kernel": self.kernel,
            "executor": self.executor,
            "workers": self.workers,
        }
        if len(self.seats) > 1:
            d.update({"ties": self.tie_rate.count, **fields("tie_rate", self.tie_rate)})
        return d

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        """One row per seat: the seat's summary flattened by :func:`dicelab.results.frame_row`."""
        return pd.DataFrame([{"game": self.game, "rules": self.rules, "games": self.games,
                              "seed": self.seed, **frame_row(self.seat(s).to_dict())}
                             for s in range(len(self.seats))])

    def manifest(self) -> dict[str, Any]:
        return {"game": self.game, "rules": get_rules(self.rules).to_dict(),
                "games": self.games, "seed": self.seed, "seed_given": self.seed_given,
                "chunk_games": self.chunk_games, "elapsed_s": self.elapsed_s,
                "setup_s": self.setup_s,
                **played_by(self.seats, self.seat_params, kernels=[self.kernel],
                            threads=self.threads, executor=self.executor,
                            workers=self.workers, seats=True)}


# --- running ------------------------------------------------------------------------------


def _has_online(seats: Sequence[PolicySpec]) -> bool:
    """Whether a seat of ``seats`` decides turn by turn in the kernel (its family's
    ``online``: an objective's or penta-win's seat, not from decision tables)."""
    return any(family_of(spec).online for spec in seats)


def _online_of(seats: Sequence[PolicySpec]) -> np.ndarray:
    """Each seat's entry of :attr:`SeatPolicies.online`: 0 (the tables') or its distinct
    online seat's, numbered from 1 in the order of the seats (an objective's seat is the
    same at every seat; one that watches the others is not)."""
    entry: dict = {}
    out = np.zeros(len(seats), dtype=np.int64)
    for s, spec in enumerate(seats):
        family = family_of(spec)
        if family.online:
            out[s] = entry.setdefault((spec.name, s) if family.watches else spec.name,
                                      len(entry) + 1)
    return out


def _seat_policies(tables: DecisionTables, seats: Sequence[PolicySpec],
                   rules: RuleSet) -> SeatPolicies:
    online_of = _online_of(seats)
    online = [table_seat()]
    for s, spec in enumerate(seats):
        if online_of[s] == len(online):
            online.append(family_of(spec).kernel_seat(spec, s, len(seats), rules))
    mean = solve(rules).values if _has_online(seats) else np.zeros(0)
    blocks = [family_of(s).block(s) for s in seats]
    return SeatPolicies(tables.slot, tables.decisions,
                        np.array([0 if b is None else tables.policies.index(b) for b in blocks],
                                 dtype=np.int64), tuple(online), online_of, mean)


def _table_families(seats: Sequence[PolicySpec]) -> tuple[str, ...]:
    """The decision-table blocks ``seats`` play from (their families')."""
    blocks = (family_of(s).block(s) for s in seats)
    return tuple(dict.fromkeys(b for b in blocks if b is not None))


@dataclass(frozen=True, eq=False)
class PentaPlan(LazyArrays):
    """One Penta run as a picklable value, for :func:`dicelab.runner.run_plan`.

    ``seats``: Penta PolicySpecs; ``rules``: a rule-set name. The decision tables
    (270 MB per policy) are built (or loaded) by each process that plays, the first
    time it needs them. Accumulators: the fields of :class:`Tallies`, summed over chunks;
    with ``per_chunk`` also each chunk's ``wins``, ``tied`` and ``beat`` (named
    ``dicelab.runner.PER_CHUNK + name``). ``streams``: the random-stream layout
    (:data:`dicelab.rng.STREAM_PER_CHUNK` or ``STREAM_PER_TURN``).
    """

    seats: tuple[PolicySpec, ...]
    rules: str
    seed: int
    games: int
    batch_chunks: int = config.BATCH_CHUNKS
    per_chunk: bool = False
    streams: int = STREAM_PER_CHUNK
    #: games per chunk: part of what a seed means (simulations use the standard size; a
    #: sequential test takes smaller units)
    chunk_games: int = config.CHUNK_GAMES

    @property
    def families(self) -> tuple[str, ...]:
        """The seats' families that play from decision tables."""
        return _table_families(self.seats)

    def kernel_arrays(self) -> tuple[SeatPolicies, RuleParams]:
        """What the kernel plays from: the seats' decision blocks and the rule set."""
        def build() -> tuple[SeatPolicies, RuleParams]:
            rs = get_rules(self.rules)
            return (_seat_policies(decision_tables(self.families, rs), self.seats, rs),
                    rs.params)
        return self._lazy(build)

    def token(self) -> str:
        return plan_token("penta", tuple(s.name for s in self.seats), self.rules, self.seed,
                          self.games, self.batch_chunks, self.per_chunk, self.streams,
                          self.chunk_games)

    def prepare(self) -> None:
        """The decision tables, and the game kernel compiled (or loaded), before the clock.

        When a decision block has to be built, the game kernel compiles on a thread of its
        own while the solver's kernel (compiled first: numba compiles one function at a
        time) builds the tables, so a first run takes the longer of the two, not both."""
        rs = get_rules(self.rules)
        if all(decision_block_stored(f, rs) for f in self.families):
            self.kernel_arrays()
            self._compile()
            return
        compile_solver_kernel(decisions=True)
        join = in_background(self._compile)
        self.kernel_arrays()  # (interrupted or failed: not waiting for the compile)
        join()

    def _compile(self) -> None:
        """Compile (or load) the game kernel, on no chunks: empty arrays of the types it
        plays from (:class:`SeatPolicies`, as made by :func:`_seat_policies`)."""
        pol = SeatPolicies(np.zeros(0, dtype=np.int32), np.zeros((0, 0, N_ROLLS), np.uint16),
                           np.zeros(len(self.seats), dtype=np.int64),
                           (table_seat(),) * (1 + int(_online_of(self.seats).max())),
                           np.zeros(len(self.seats), dtype=np.int64), np.zeros(0))
        self._kernel()(0, 0, np.zeros((0, 4), np.uint64), np.zeros(1, np.int64), 0, pol,
                       get_rules(self.rules).params, TABLES, new_tallies(0, len(self.seats)),
                       self.streams)

    @property
    def kernel(self) -> str:
        """The name of the game kernel this plan runs (:meth:`_kernel`'s)."""
        return ONLINE_KERNEL if _has_online(self.seats) else TABLE_KERNEL

    def _kernel(self):
        """The chunks' kernel: :func:`_simulate_chunks_online` if a seat decides turn by
        turn, else :func:`_simulate_chunks` (which does not compile the online seats' turn)."""
        return _simulate_chunks_online if _has_online(self.seats) else _simulate_chunks

    def empty(self) -> dict[str, np.ndarray]:
        return _sum_chunks(new_tallies(0, len(self.seats)))

    def run_range(self, first: int, stop: int) -> dict[str, np.ndarray]:
        pol, rp = self.kernel_arrays()
        tl = new_tallies(stop - first, len(self.seats))
        run_blocks(self._kernel(), stop - first, seeding.chunk_states(self.seed, first, stop),
                   seeding.chunk_bounds(self.games, first, stop, self.chunk_games), 0, pol, rp,
                   TABLES, tl, self.streams)
        out = _sum_chunks(tl)
        if self.per_chunk:
            out.update({PER_CHUNK + name: getattr(tl, name) for name in CHUNK_TALLIES})
        return out


def _table_bytes(n_policies: int) -> int:
    """Bytes of the decision tables for ``n_policies`` policies (as DecisionTables.nbytes)."""
    states, slot = all_states()
    return int(slot.nbytes + states.nbytes
               + states.size * N_ROLLS * np.dtype(np.uint16).itemsize * n_policies)


def _specs(seats: Sequence[PolicySpec | str]) -> list[PolicySpec]:
    if not seats:
        raise UserError("give at least one seat policy")
    specs = [s if isinstance(s, PolicySpec) else parse_policy(s, "penta") for s in seats]
    for spec in specs:
        if spec.game != "penta":
            raise UserError(f"policy '{spec.name}' is not a Penta policy; valid: "
                            f"{valid_names('penta')}")
    check_table(specs)
    return specs


def _exact_scores(specs: Sequence[PolicySpec], rs: RuleSet) -> tuple[float | None, ...]:
    """Each seat's exact expected TOTAL where its family knows it without more work."""
    return tuple(family_of(spec).expected_score(spec, rs) for spec in specs)


def check_legal(illegal: np.ndarray) -> None:
    if illegal.any():
        raise RuntimeError("a Penta policy table chose a box the rules forbid "
                           f"({int(illegal.sum())} times): a bug")


def simulate_penta(seats: Sequence[PolicySpec | str], games: int = config.DEFAULT_GAMES,
                   seed: int | None = None, rules: str | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   client: Any = None, per_chunk: bool = False,
                   streams: int = STREAM_PER_CHUNK,
                   chunk_games: int = config.CHUNK_GAMES) -> PentaResult:
    """Play ``games`` games of Penta for every seat (each its own card and dice).

    ``seats``: policy specs or names (``optimal``, ``greedy``); ``rules``: a rule set
    name (default ``seed``). ``progress(done, total)`` is called between batches of
    ``config.BATCH_CHUNKS`` chunks. ``client``: a ``distributed.Client`` to play the
    chunks on a Dask cluster (each worker builds the decision tables itself; same results
    as a local run). ``per_chunk``: keep each chunk's outcomes too
    (``result.chunk_tallies``); ``streams``: the random-stream layout (a stream per turn
    for common random numbers: :data:`dicelab.rng.STREAM_PER_TURN`); ``chunk_games``: games
    per chunk (the standard size, or a comparison's units:
    :func:`dicelab.seeding.unit_chunk_games`). The example is not
    run as a doctest: the decision tables it needs take seconds to build and 270 MB of
    cache per policy.

    >>> r = simulate_penta(["optimal"], games=100_000, seed=1)  # doctest: +SKIP
    >>> r.seat(0).mean_final_score.mean  # doctest: +SKIP
    254.4...
    """
    games = seeding.check_games(games)
    specs = _specs(seats)
    rs = get_rules(rules)
    for spec in specs:
        family_of(spec).check_rules(spec, rs)
    check_memory(f"Penta games of {len(specs):,} seats (the books of a batch of chunks)",
                 2 * tallies_bytes(config.BATCH_CHUNKS, len(specs)))
    seed_given = seed is not None
    seed = seeding.check_seed(seed)
    if streams not in (STREAM_PER_CHUNK, STREAM_PER_TURN):
        raise ValueError(f"unknown stream layout {streams}")
    if any(family_of(s).by_referee for s in specs):
        return _simulate_by_referee(specs, rs, games, int(seed), seed_given, progress,
                                    streams, client, per_chunk, chunk_games)
    plan = PentaPlan(tuple(specs), rs.name, int(seed), games,
                     batch_chunks=config.BATCH_CHUNKS, per_chunk=per_chunk, streams=streams,
                     chunk_games=chunk_games)
    t0 = time.perf_counter()
    if client is None:
        plan.prepare()  # the tables, before the clock starts; workers build their own
    exact = _exact_scores(specs, rs)
    setup = time.perf_counter() - t0

    t1 = time.perf_counter()
    acc = run_plan(plan, progress=progress, client=client)
    elapsed = time.perf_counter() - t1
    check_legal(acc["illegal"])
    return PentaResult(
        seats=tuple(s.name for s in specs), rules=rs.name, games=games, seed=int(seed),
        seed_given=seed_given, hist=acc["hist"], box_sum=acc["box_sum"],
        box_sq=acc["box_sq"], upper_bonus=acc["upper_bonus"], fifty=acc["fifty"],
        bonus_sum=acc["bonus_sum"], bonus_sq=acc["bonus_sq"], wins=acc["wins"],
        tied=acc["tied"], ties=int(acc["ties"][0]), elapsed_s=elapsed, setup_s=setup,
        threads=numba.get_num_threads(), table_bytes=_table_bytes(len(plan.families)),
        exact_scores=exact, beat=acc["beat"], chunk_games=chunk_games,
        chunk_tallies={name: acc[PER_CHUNK + name] for name in CHUNK_TALLIES}
        if per_chunk else None, kernel=plan.kernel,
        seat_params=tuple(policy_params(s) for s in specs), **executor_info(client))


# --- seats of users' policies: the Python referee --------------------------------------------


def referee_policies(specs) -> list:
    """The policy objects the referee asks for ``specs`` (their families'), each at its
    seat: a user's own, or a built-in's, which plays its seat as the kernel does."""
    return [family_of(s).policy(s, seat, len(specs)) for seat, s in enumerate(specs)]


def _simulate_by_referee(specs: list[PolicySpec], rs, games: int, seed: int, seed_given: bool,
                         progress, streams: int, client, per_chunk: bool,
                         chunk_games: int = config.CHUNK_GAMES) -> PentaResult:
    """A run with a user's policy in some seat: every seat played by the Python referee
    (:mod:`dicelab.penta.referee`) on the kernel's chunks and dice, so the built-in seats
    play and score as in the kernel."""
    from dicelab.penta.referee import play_chunks

    t0 = time.perf_counter()
    policies = referee_policies(specs)
    if client is not None:  # the workers load the users' policies by their names
        plan = RefereePlan(tuple(specs), rs.name, seed, games, streams=streams,
                           chunk_games=chunk_games, per_chunk=per_chunk, batch_chunks=1)
        acc = run_plan(plan, progress=progress, client=client)
        acc.update({f"chunk_{name}": acc.pop(PER_CHUNK + name) for name in CHUNK_TALLIES
                    if PER_CHUNK + name in acc})
    else:
        acc = play_chunks(policies, rs, seed, games, max_total=MAX_TOTAL, streams=streams,
                          progress=progress, per_chunk=per_chunk, chunk_games=chunk_games)
    exact = _exact_scores(specs, rs)
    return PentaResult(
        seats=tuple(s.name for s in specs), rules=rs.name, games=games, seed=seed,
        seed_given=seed_given, hist=acc["hist"], box_sum=acc["box_sum"],
        box_sq=acc["box_sq"], upper_bonus=acc["upper_bonus"], fifty=acc["fifty"],
        bonus_sum=acc["bonus_sum"], bonus_sq=acc["bonus_sq"], wins=acc["wins"],
        tied=acc["tied"], ties=int(acc["ties"][0]), elapsed_s=time.perf_counter() - t0,
        setup_s=0.0, threads=1, table_bytes=0, exact_scores=exact, beat=acc["beat"],
        chunk_games=chunk_games,
        chunk_tallies={name: acc[f"chunk_{name}"] for name in CHUNK_TALLIES}
        if per_chunk else None, kernel=REFEREE_KERNEL,
        seat_params=tuple(policy_params(s) for s in specs), **executor_info(client))


@dataclass(frozen=True)
class RefereePlan:
    """Games with a user's Penta policy at the table, as a plan for
    :func:`dicelab.runner.run_plan` (a sequential test's units, or a run on Dask): the
    chunks of ``chunk_games`` a :class:`PentaPlan` would play, played by the Python
    referee range by range (:meth:`run_range`, accumulators as :class:`PentaPlan`'s,
    with ``per_chunk`` each chunk's too).

    Pickled (to a Dask worker), a user's policy named from a file or a module
    (``FILE.py:NAME``) travels as its name and is loaded again there: the worker must
    see the same file at the same path (a local cluster does)."""

    seats: tuple[PolicySpec, ...]
    rules: str
    seed: int
    games: int
    streams: int = STREAM_PER_CHUNK
    chunk_games: int = config.CHUNK_GAMES
    per_chunk: bool = True
    batch_chunks: int = 1
    #: the game kernel (what manifests record): every seat played by the referee
    kernel: ClassVar[str] = REFEREE_KERNEL

    def token(self) -> str:
        return plan_token("penta-referee", tuple(s.name for s in self.seats), self.rules,
                          self.seed, self.games, self.streams, self.chunk_games,
                          self.per_chunk)

    def prepare(self) -> None:
        pass

    def empty(self) -> dict[str, np.ndarray]:
        return {k: np.zeros_like(v) for k, v in self.run_range(0, 0).items()
                if not k.startswith(PER_CHUNK)}

    def run_range(self, first: int, stop: int) -> dict[str, np.ndarray]:
        from dicelab.penta.referee import play_chunks

        acc = play_chunks(referee_policies(self.seats), get_rules(self.rules), self.seed,
                          self.games, max_total=MAX_TOTAL, streams=self.streams,
                          per_chunk=self.per_chunk, first=first, stop=stop,
                          chunk_games=self.chunk_games)
        for name in CHUNK_TALLIES:
            chunk = acc.pop(f"chunk_{name}", None)
            if self.per_chunk:
                acc[PER_CHUNK + name] = chunk
        return acc

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["seats"] = tuple(s.name if s.policy is not None
                               and user_policy.looks_like_reference(s.name) else s
                               for s in self.seats)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        seats = tuple(parse_policy(s, "penta") if isinstance(s, str) else s
                      for s in state["seats"])
        self.__dict__.update(state, seats=seats)


# --- scripted dice ------------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedGames:
    """Games played by :func:`play_scripted`, game ``g`` of seat ``s`` on script ``[s][g]``.

    ``totals[s, g]``: TOTAL; ``faces_used[s, g]``: faces the game read; ``exhausted[s, g]``:
    its script ran out (the game was played on with 1s: its numbers are not the
    script's). ``tallies``: what the kernel booked, summed over the games (the fields of
    :class:`Tallies`, each seat's games together as in :class:`PentaResult`).
    """

    seats: tuple[str, ...]
    rules: str
    totals: np.ndarray
    faces_used: np.ndarray
    exhausted: np.ndarray
    tallies: dict[str, np.ndarray]

    @property
    def complete(self) -> bool:
        """No script ran out."""
        return not self.exhausted.any()


def play_scripted(seats: Sequence[PolicySpec | str], scripts: Sequence[Sequence[Sequence[int]]],
                  rules: str | None = None) -> ScriptedGames:
    """Play Penta on given dice: ``scripts[s][g]`` are the faces (1..6) of seat ``s``'s game
    ``g``, every roll of ``n`` dice reading the next ``n`` (the first roll of a turn five,
    a reroll as many as are not kept). Every seat plays the same number of games; seats
    meet as in :func:`simulate_penta` (game ``g`` of each seat is one game).

    The kernel is the simulation's own, one chunk holding all the games. A script that is
    too short is reported in ``exhausted`` (up to 195 faces a game: 13 turns of 15); the
    decision tables are built or loaded as for a simulation.
    """
    specs = _specs(seats)
    rs = get_rules(rules)
    if len(scripts) != len(specs):
        raise UserError(f"{len(specs)} seats but scripts for {len(scripts)}")
    n_games = len(scripts[0])
    if n_games == 0 or any(len(per_seat) != n_games for per_seat in scripts):
        raise UserError("give every seat the same positive number of game scripts")
    rows = [np.asarray(faces, dtype=np.int64).reshape(-1) for per_seat in scripts
            for faces in per_seat]
    faces = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    if ((faces < 1) | (faces > FACES)).any():
        raise UserError(f"script faces must be 1..{FACES}")
    bounds = np.zeros(len(rows) + 1, dtype=np.int64)
    bounds[1:] = np.cumsum([r.size for r in rows])
    if faces.size == 0:  # an empty faces array means "roll the generator"
        faces = np.zeros(1, dtype=np.int64)
    src = DiceSource(np.zeros(4, dtype=np.uint64), faces, bounds, bounds[:-1].copy(),
                     np.zeros(len(rows), dtype=np.int64), STREAM_PER_CHUNK)
    pol = _seat_policies(decision_tables(_table_families(specs), rs), specs, rs)
    W = _new_lockstep(len(specs), n_games)
    tl = new_tallies(1, len(specs))
    # all the games as one chunk (row 0 of ``tl``); TOTALs stay in ``W.totals``
    play = _play_chunk_online if _has_online(specs) else _play_chunk
    play(src, pol, rs.params, TABLES, W, tl, 0)
    acc = _sum_chunks(tl)
    check_legal(acc["illegal"])
    shape = (len(specs), n_games)
    return ScriptedGames(tuple(s.name for s in specs), rs.name, W.totals.copy(),
                         (src.cursor - bounds[:-1]).reshape(shape),
                         src.short.reshape(shape).astype(bool), acc)
