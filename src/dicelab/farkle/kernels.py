"""Jitted Farkle kernels: rolls, set-asides, turns and games, in chunked batches.

Layer 1 (pure, no I/O). :func:`run_chunks` plays chunks of games in parallel (one
generator per chunk), :func:`run_scripted` plays the same game code on scripted dice,
:func:`bust_counts` estimates bust frequencies. The arguments come in named groups:

* :class:`Game`: seats, starting seat (-1: rotates with the game index), target in
  points, ending rule (:data:`dicelab.farkle.rules.ENDINGS`);
* :class:`Seats`: ``kinds[s]`` (:data:`THRESHOLD`, :data:`AI`, :data:`TABLE`),
  ``params[s, :]`` (layout ``P_*`` below), and for table policies ``table_meta[s, :]``
  (layout ``T_*``) indexing into one flat float32 ``table_value`` and one flat uint8
  ``table_bank`` array (layout of :class:`dicelab.farkle.policy_table.PolicyTable`, 4-D
  tables as 6-D ones with S = 1; the best opponent whose lost turns a table reads is
  the lowest-numbered seat with the best other total);
* the rule set's :class:`~dicelab.farkle.rules.SetAsideArrays`: what each roll lets a
  seat set aside (threshold and ai seats set aside all scoring dice; table seats choose
  among every option by value);
* :class:`Tally`: the accumulators, int64 statistic columns per seat (``ST_*`` below),
  the final-score histogram and the game counters, so that merging chunks is an exact,
  order-independent sum.

Dice come from a xoshiro256** ``state`` (uint64[4]), or -- for tests -- a ``script`` of
die faces 1..6: a roll of ``n`` dice consumes the next ``n`` faces. The same game code
runs in both modes, so scripted tests exercise the real kernel.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange, uint64

from dicelab.config import MAX_ROUNDS, MAX_TURN_ROLLS
from dicelab.dice import POW6, SEQ_OFFSET, SEQ_TO_RANK
from dicelab.farkle.rules import FIRST_TO_BANK, HOT_DICE, MAX_SEATS, PENALTY_STREAK, POINT_UNIT
from dicelab.rng import (  # the stream layouts of Game.streams (Farkle keys a seat by its
    STREAM_PER_CHUNK,  # place in the turn order)
    STREAM_PER_TURN,
    below_s,
    faces_rank,
    keyed_state,
    roll_dice,
)

#: Seat policy kinds.
THRESHOLD = 0
AI = 1
TABLE = 2

#: Layout of ``params[s, :]`` (THRESHOLD uses column 0 only).
P_THRESHOLD = 0
P_BASE = 0
P_STEP = 1
P_PER = 2
P_MAX_STEPS = 3
P_TWO_DICE = 4
P_ONE_DIE = 5
P_CHASE = 6
N_PARAMS = 7

#: Layout of ``table_meta[s, :]``.
T_OFFSET = 0
T_M = 1
T_O = 2
T_P = 3
T_LAST_OFFSET = 4  # -1: no last-round table; CHASE, CHASE_RULE: none (see below)
T_D = 5
T_S = 6  # lost-turn axes (1: a 4-D table)
T_FLOOR = 7  # units of 50 below zero of row 0 of the M and O axes
T_KEEP_ALL = 8  # 1: sets aside all scoring dice (its values unused), then its bank decides
N_TABLE_META = 9
#: ``table_meta[s, T_LAST_OFFSET]`` of a table that, in the last round, banks exactly when
#: its total would beat the leader's (``CHASE``), or when its table banks too
#: (``CHASE_RULE``, read at the leader's total).
CHASE = -2
CHASE_RULE = -3

#: Per-seat statistic columns (int64, summed over games).
ST_WINS = 0
ST_TIES = 1
ST_SCORE = 2
ST_SCORE_SQ = 3
ST_TURNS = 4
ST_TURNS_SQ = 5
ST_SCORE_TURNS = 6
ST_ROLLS = 7
ST_ROLLS_SQ = 8
ST_BUST_ROLLS = 9
ST_BUST_ROLLS_SQ = 10
ST_ROLLS_BUST_ROLLS = 11
ST_BUST_TURNS = 12
ST_BUST_TURNS_SQ = 13
ST_BUST_TURNS_TURNS = 14
ST_HOT_DICE = 15
ST_TRIGGERS = 16
ST_ROLLS_N = 17  # 17 + n - 1 for n = 1..6: rolls of n dice
ST_BUSTS_N = 23  # 23 + n - 1: busts with n dice
ST_AHEAD = 29  # seats that finished strictly ahead (finishing place = 1 + this)
ST_AHEAD_SQ = 30
ST_BEAT = 31  # 31 + q: games this seat finished strictly ahead of seat q (q < MAX_SEATS)
N_STATS = ST_BEAT + MAX_SEATS

#: Per-game scratch columns.
_G_TURNS = 0
_G_ROLLS = 1
_G_BUSTS = 2  # a bust ends its turn: bust rolls = bust turns
_G_HOT = 3
_G_STREAK = 4  # lost turns in a row (the farkle penalty's count)
_N_G = 5

#: Game-level counters of a chunk: ``[games, capped games, script errors]``.
C_GAMES = 0
C_CAPPED = 1
C_SCRIPT_ERRORS = 2
N_CHUNK_COUNTERS = 3




class Game(NamedTuple):
    """What a game is besides its seats' policies (all int64)."""

    n_seats: int
    first_seat: int  # -1: the global game index modulo the seats
    target: int  # points
    ending: int  # dicelab.farkle.rules.ENDINGS
    streams: int = STREAM_PER_CHUNK
    penalty: int = 0  # points lost at the PENALTY_STREAK-th lost turn in a row


class Seats(NamedTuple):
    """The seats' policies as arrays (see the module docstring for the layouts)."""

    kinds: np.ndarray
    params: np.ndarray
    table_meta: np.ndarray
    table_value: np.ndarray
    table_bank: np.ndarray


class Tally(NamedTuple):
    """Accumulators of one chunk: ``stats`` int64 (seats, N_STATS), ``hist`` int64 (seats,
    bins) of final totals in units of 50 (first bin: 0 and below, last bin: that and
    above), ``counters`` int64
    (N_CHUNK_COUNTERS,)."""

    stats: np.ndarray
    hist: np.ndarray
    counters: np.ndarray


_SEQ_TO_RANK = SEQ_TO_RANK.copy()
_POW6U = POW6.astype(np.uint64)
_SEQ_OFFSET_U = SEQ_OFFSET.astype(np.uint64)


@njit(inline="always")
def ai_thresholds(params, deficit, floor, out):
    """The ``ai`` policy's bank thresholds (points) by dice left to roll, into
    ``out[1..6]``: ``base + step * min(max-steps, deficit // per)``, lowered by ``two-dice``
    with 2 dice left and ``one-die`` with 1, and never below ``floor`` (in the last round
    with ``chase``: what beats the leader). ``params``: one row of ``Seats.params``. The
    one place the ai rule is written (the kernel and the policy pictures use it)."""
    thr = params[P_BASE] + params[P_STEP] * min(params[P_MAX_STEPS], deficit // params[P_PER])
    for m in range(3, 7):
        out[m] = max(thr, floor)
    out[2] = max(thr - params[P_TWO_DICE], floor)
    out[1] = max(thr - params[P_ONE_DIE], floor)


@njit(cache=True)
def _scripted_roll(script, cursor, n):
    """Rank of a roll of ``n`` dice read from the next ``n`` faces of ``script``.

    ``cursor[0]`` is the read position; ``cursor[1]`` is set to 1 when the script runs
    out (the roll then reads as the empty multiset, i.e. a bust).
    """
    pos = cursor[0]
    if pos + n > script.shape[0]:
        cursor[1] = 1
        return np.int64(0)
    cursor[0] = pos + n
    return faces_rank(script, pos, n)


@njit(inline="always")
def book_seat(stats, hist, s, score, top, n_top, ahead, turns, rolls, busts, hot):
    """Add seat ``s``'s game to its statistics: its win or tie (``top``: the highest
    final total, reached by ``n_top`` seats), the seats that finished strictly ahead of
    it (``ahead``), the sums of ``ST_*`` and the histogram of final totals (units of 50,
    first bin: 0 and below, last bin: that and above). Every turn has at most one bust, on
    its last roll, so ``busts`` counts both bust rolls and bust turns."""
    best = np.int64(score == top)  # (branch-free: who wins is a coin flip to the processor)
    stats[s, ST_WINS] += best & np.int64(n_top == 1)
    stats[s, ST_TIES] += best & np.int64(n_top > 1)
    stats[s, ST_SCORE] += score
    stats[s, ST_SCORE_SQ] += score * score
    stats[s, ST_TURNS] += turns
    stats[s, ST_TURNS_SQ] += turns * turns
    stats[s, ST_SCORE_TURNS] += score * turns
    stats[s, ST_ROLLS] += rolls
    stats[s, ST_ROLLS_SQ] += rolls * rolls
    stats[s, ST_BUST_ROLLS] += busts
    stats[s, ST_BUST_ROLLS_SQ] += busts * busts
    stats[s, ST_ROLLS_BUST_ROLLS] += rolls * busts
    stats[s, ST_BUST_TURNS] += busts
    stats[s, ST_BUST_TURNS_SQ] += busts * busts
    stats[s, ST_BUST_TURNS_TURNS] += busts * turns
    stats[s, ST_HOT_DICE] += hot
    stats[s, ST_AHEAD] += ahead
    stats[s, ST_AHEAD_SQ] += ahead * ahead
    hist[s, min(max(score // POINT_UNIT, 0), hist.shape[1] - 1)] += 1


@njit(cache=True)
def _run_chunk(state, script, cursor, first_game, n_games, game, seats, rolls, tally,
               totals_out):
    """Play games ``first_game .. first_game + n_games - 1``: the whole game logic.

    Deliberately one function: every call of a jitted function with array arguments
    costs atomic reference-count updates on shared arrays, so nothing with array
    arguments is called per game, turn or roll (only on rare paths and in scripted mode).
    Dice come from ``state`` or, if ``script`` is non-empty, from its faces (``cursor``:
    read position, exhausted flag). ``totals_out[i, s]`` (if it has rows) receives game
    ``i``'s final totals.
    """
    n_seats = game.n_seats
    target = game.target
    first_to_bank = game.ending == FIRST_TO_BANK
    kinds, params, table_meta = seats.kinds, seats.params, seats.table_meta
    table_value, table_bank = seats.table_value, seats.table_bank
    roll_class, roll_keep_all = rolls.roll_class, rolls.roll_keep_all
    bank_floor = rolls.bank_floor
    option_start, opt_points, opt_dice = rolls.option_start, rolls.points, rolls.dice
    stats, hist, counters = tally.stats, tally.hist, tally.counters
    scripted = script.shape[0] > 0
    keep_totals = totals_out.shape[0] > 0
    # the generator in registers; indices on the roll path unsigned (numba adds a
    # negative-index fix-up to every signed index)
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    per_turn = game.streams == STREAM_PER_TURN
    key0 = state[0]
    key1 = state[1]
    totals = np.zeros(n_seats, dtype=np.int64)
    g = np.zeros((n_seats, _N_G), dtype=np.int64)
    thr_n = np.zeros(7, dtype=np.int64)
    max_turns = MAX_ROUNDS * n_seats
    for i in range(n_games):
        for s in range(n_seats):
            totals[s] = 0
            for j in range(_N_G):
                g[s, j] = 0
        seat = game.first_seat if game.first_seat >= 0 else (first_game + i) % n_seats
        starter = seat
        trigger = -1
        turns = 0
        capped = False
        while True:
            # ---- one turn of `seat`
            my_total = totals[seat]
            # the best other total (also the leader's in the last round) and its seat
            # (the lowest-numbered among equal totals); 0 and this seat when alone
            best_opp = np.int64(0)
            opp = seat
            for s in range(n_seats):
                if s != seat and (opp == seat or totals[s] > best_opp):
                    best_opp = totals[s]
                    opp = s
            last_round = trigger >= 0
            kind = kinds[seat]
            t_base = np.int64(0)
            p_dim = np.int64(1)
            chase_from = np.int64(-1)  # >= 0: bank only from these turn points on
            chase_only = False  # and there whatever the table says
            if kind == TABLE:
                p_dim = table_meta[seat, T_P]
                if last_round and table_meta[seat, T_LAST_OFFSET] <= CHASE:
                    chase_from = max(best_opp - my_total + 1, 0)
                    chase_only = table_meta[seat, T_LAST_OFFSET] == CHASE
                if last_round and table_meta[seat, T_LAST_OFFSET] >= 0:
                    d = min(max((best_opp - my_total) // POINT_UNIT, 0),
                            table_meta[seat, T_D] - 1)
                    t_base = table_meta[seat, T_LAST_OFFSET] + d * p_dim * 7
                else:
                    s_dim = table_meta[seat, T_S]
                    m_dim = table_meta[seat, T_M]
                    o_dim = table_meta[seat, T_O]
                    floor_u = table_meta[seat, T_FLOOR]
                    m = min(max(my_total // POINT_UNIT + floor_u, 0), m_dim - 1)
                    o = min(max(best_opp // POINT_UNIT + floor_u, 0), o_dim - 1)
                    s_me = min(g[seat, _G_STREAK], s_dim - 1)
                    s_opp = np.int64(0) if opp == seat else min(g[opp, _G_STREAK], s_dim - 1)
                    t_base = table_meta[seat, T_OFFSET] + (
                        ((s_me * s_dim + s_opp) * m_dim + m) * o_dim + o) * p_dim * 7
            elif kind == AI:
                floor = np.int64(0)
                if last_round and params[seat, P_CHASE] != 0:
                    floor = best_opp - my_total + 1  # a banked total must beat the leader
                ai_thresholds(params[seat], max(best_opp - my_total, 0), floor, thr_n)
            else:
                for m in range(1, 7):
                    thr_n[m] = params[seat, P_THRESHOLD]
            for m in range(1, 7):  # the rules' minimum to bank (and hot dice must-roll)
                thr_n[m] = max(thr_n[m], bank_floor[m])
            if per_turn:  # this turn's own dice (see STREAM_PER_TURN)
                place = seat - starter + n_seats * (seat < starter)
                s0, s1, s2, s3 = keyed_state(key0, key1, first_game + i, place,
                                             g[seat, _G_TURNS])
            n = np.int64(HOT_DICE)
            tp = np.int64(0)
            n_rolls = np.int64(0)
            hot = np.int64(0)
            # rolls of n dice in this turn, 10 bits per n, flushed every 512 rolls
            packed = np.int64(0)
            busted = False
            turn_capped = False
            while True:
                un = uint64(n)
                if scripted:
                    r = uint64(_scripted_roll(script, cursor, n))
                else:
                    u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, _POW6U[un])
                    r = uint64(_SEQ_TO_RANK[_SEQ_OFFSET_U[un] + uint64(u)])
                n_rolls += 1
                packed += np.int64(1) << (10 * (n - 1))
                if kind == TABLE:
                    if table_meta[seat, T_KEEP_ALL] != 0:  # all scoring dice
                        j = roll_keep_all[r]
                        if j < 0:
                            busted = True
                            break
                        tp += POINT_UNIT * opt_points[j]
                        n = opt_dice[j]
                        best_idx = t_base + min(tp // POINT_UNIT, p_dim - 1) * 7 + n
                    else:
                        c = roll_class[r]
                        if c < 0:
                            busted = True
                            break
                        # the option whose state has the highest value; options come in the
                        # model's order (more points, then more dice), so the first wins ties
                        best_v = -np.inf
                        best_idx = np.int64(-1)
                        tp_best = tp
                        n_best = n
                        for j in range(option_start[c], option_start[c + 1]):
                            tp2 = tp + POINT_UNIT * opt_points[j]
                            idx = t_base + min(tp2 // POINT_UNIT, p_dim - 1) * 7 + opt_dice[j]
                            v = np.float64(table_value[uint64(idx)])
                            if v > best_v:
                                best_v = v
                                best_idx = idx
                                tp_best = tp2
                                n_best = opt_dice[j]
                        tp = tp_best
                        n = n_best
                    hot += n == HOT_DICE  # 6 dice to roll only after hot dice
                    if chase_from >= 0:
                        if tp >= chase_from and tp >= bank_floor[uint64(n)] and (
                                chase_only or table_bank[uint64(best_idx)] != 0):
                            break
                    elif table_bank[uint64(best_idx)] != 0 and tp >= bank_floor[uint64(n)]:
                        break
                else:
                    j = roll_keep_all[r]
                    if j < 0:
                        busted = True
                        break
                    tp += POINT_UNIT * opt_points[j]
                    n = opt_dice[j]
                    hot += n == HOT_DICE
                    if tp >= thr_n[uint64(n)]:
                        break
                if (n_rolls & 511) == 0:
                    for m in range(6):
                        stats[seat, ST_ROLLS_N + m] += (packed >> (10 * m)) & 1023
                    packed = 0
                    if n_rolls >= MAX_TURN_ROLLS:
                        turn_capped = True
                        break
            # ---- book the turn
            for m in range(6):
                stats[seat, ST_ROLLS_N + m] += (packed >> (10 * m)) & 1023
            g[seat, _G_TURNS] += 1
            g[seat, _G_ROLLS] += n_rolls
            g[seat, _G_HOT] += hot
            if busted:
                g[seat, _G_BUSTS] += 1
                stats[seat, ST_BUSTS_N + n - 1] += 1
                g[seat, _G_STREAK] += 1
                if g[seat, _G_STREAK] == PENALTY_STREAK:
                    totals[seat] -= game.penalty
                    g[seat, _G_STREAK] = 0
            elif not turn_capped:
                totals[seat] += tp
                g[seat, _G_STREAK] = 0
            if turn_capped or (scripted and cursor[1] != 0):
                capped = True
                break
            if trigger < 0 and totals[seat] >= target:
                trigger = seat
                if first_to_bank:
                    break  # the first to bank the target wins at once
            seat += 1
            if seat == n_seats:
                seat = 0
            if seat == trigger:
                break
            turns += 1
            if turns >= max_turns:
                capped = True
                break
        # ---- book the game
        if scripted and cursor[1] != 0:
            counters[C_SCRIPT_ERRORS] += 1
            return
        counters[C_GAMES] += 1
        if capped:
            counters[C_CAPPED] += 1
        elif trigger >= 0:
            stats[trigger, ST_TRIGGERS] += 1
        top = totals[0]
        for s in range(1, n_seats):
            top = max(top, totals[s])
        n_top = 0
        for s in range(n_seats):
            n_top += totals[s] == top
        for s in range(n_seats):
            if keep_totals:
                totals_out[i, s] = totals[s]
            ahead = np.int64(0)
            for q in range(n_seats):
                ahead += totals[q] > totals[s]
                stats[s, ST_BEAT + q] += totals[s] > totals[q]
            book_seat(stats, hist, s, totals[s], top, n_top, ahead, g[s, _G_TURNS],
                      g[s, _G_ROLLS], g[s, _G_BUSTS], g[s, _G_HOT])


@njit(cache=True, parallel=True)
def run_chunks(states, bounds, game, seats, rolls, stats, hist, counters):
    """Play chunk ``c`` = games ``bounds[c] .. bounds[c+1]-1`` with generator ``states[c]``.

    ``stats``: int64 (chunks, seats, N_STATS), ``hist``: int64 (chunks, seats, bins),
    ``counters``: int64 (chunks, N_CHUNK_COUNTERS); all zeroed by the caller (row ``c`` is
    chunk ``c``'s :class:`Tally`). Each chunk writes only its own slices, so results do not
    depend on the number of threads.
    """
    no_script = np.zeros(0, dtype=np.int64)
    no_totals = np.zeros((0, game.n_seats), dtype=np.int64)
    for c in prange(states.shape[0]):
        state = states[c].copy()
        cursor = np.zeros(2, dtype=np.int64)
        _run_chunk(state, no_script, cursor, bounds[c], bounds[c + 1] - bounds[c], game,
                   seats, rolls, Tally(stats[c], hist[c], counters[c]), no_totals)


@njit(cache=True)
def run_scripted(script, n_games, game, seats, rolls, tally, totals_out):
    """Play ``n_games`` games whose dice are read from ``script`` (faces 1..6, in order).

    The same game code as :func:`run_chunks` (a roll of n dice consumes the next n
    faces); ``totals_out[i, s]`` receives game ``i``'s final totals. Stops at the first
    game the script cannot finish (``tally.counters[C_SCRIPT_ERRORS] == 1``). Returns the
    number of faces consumed.
    """
    state = np.zeros(4, dtype=np.uint64)
    cursor = np.zeros(2, dtype=np.int64)
    _run_chunk(state, script, cursor, 0, n_games, game, seats, rolls, tally, totals_out)
    return cursor[0]


@njit(cache=True, parallel=True)
def bust_counts(states, bounds, roll_class, out):
    """Roll ``n`` dice ``bounds[c+1]-bounds[c]`` times per chunk for n = 1..6.

    ``out[c, n]``: busts (rolls of class -1) among chunk ``c``'s rolls of ``n`` dice
    (int64, zeroed by the caller).
    """
    for c in prange(states.shape[0]):
        state = states[c].copy()
        m = bounds[c + 1] - bounds[c]
        for n in range(1, 7):
            b = np.int64(0)
            for _ in range(m):
                if roll_class[roll_dice(state, n)] < 0:
                    b += 1
            out[c, n] = b
