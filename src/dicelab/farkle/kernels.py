"""Jitted Farkle kernels: rolls, set-asides, turns and games, in chunked batches.

Layer 1 (pure, no I/O). :func:`run_chunks` plays chunks of games in parallel (one
generator per chunk), :func:`run_scripted` plays the same game code on scripted dice,
:func:`bust_counts` estimates bust frequencies. Everything is plain arrays:

* scoring: ``keep_score[r, k]`` / ``max_keep[r]`` of
  :class:`dicelab.farkle.scoring.CompiledScoring` plus ``all_score[r] =
  keep_score[r, max_keep[r]]`` (the points of "all scoring dice");
* seats: ``kinds[s]`` (:data:`THRESHOLD`, :data:`AI`, :data:`TABLE`), ``params[s, :]``
  (see :mod:`dicelab.farkle.policies` for the layout), and for table policies
  ``table_meta[s, :]`` indexing into one flat float32 ``table_value`` and one flat
  uint8 ``table_bank`` array (layout of :class:`dicelab.farkle.policy_table.PolicyTable`);
* dice source: a xoshiro256** ``state`` (uint64[4]), or -- for tests -- a ``script``
  of die faces 1..6: a roll of ``n`` dice consumes the next ``n`` faces. The same
  game code runs in both modes, so scripted tests exercise the real kernel.

Statistics are accumulated per seat in int64 columns (``ST_*`` below) so that merging
chunks is an exact, order-independent sum.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from dicelab.dice import POW6, SEQ_OFFSET, SEQ_TO_RANK
from dicelab.rng import below_s, roll_dice

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
T_LAST_OFFSET = 4  # -1: no last-round table
T_D = 5
N_TABLE_META = 6

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
N_STATS = 29

#: Per-game scratch columns.
_G_TURNS = 0
_G_ROLLS = 1
_G_BUSTS = 2  # a bust ends its turn: bust rolls = bust turns
_G_HOT = 3
_N_G = 4

#: Game-level counters of a chunk: ``[games, capped games, script errors]``.
C_GAMES = 0
C_CAPPED = 1
C_SCRIPT_ERRORS = 2
N_CHUNK_COUNTERS = 3

#: Safety cap: a game stops after this many rounds (a policy that practically never
#: banks, e.g. threshold-100000, would otherwise never finish). Capped games are counted.
MAX_ROUNDS = 5000
#: Safety cap on the rolls of one turn: under a table where no roll of 6 dice busts, a
#: policy that never banks would roll forever. Such a game ends as a capped game.
MAX_TURN_ROLLS = 1 << 20

_SEQ_OFFSET = SEQ_OFFSET.copy()
_SEQ_TO_RANK = SEQ_TO_RANK.copy()
_POW6U = POW6.astype(np.uint64)
_SEQ_OFFSET_U = SEQ_OFFSET.astype(np.uint64)


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
    u = np.int64(0)
    mult = np.int64(1)
    for i in range(n):
        u += (script[pos + i] - 1) * mult
        mult *= 6
    cursor[0] = pos + n
    return np.int64(_SEQ_TO_RANK[_SEQ_OFFSET[n] + u])


@njit(inline="always")
def book_seat(stats, hist, s, score, top, n_top, turns, rolls, busts, hot):
    """Add seat ``s``'s game to its statistics: its win or tie (``top``: the highest
    final total, reached by ``n_top`` seats), the sums of ``ST_*`` and the histogram of
    final totals (units of 50, last bin: that and above). Every turn has at most one
    bust, on its last roll, so ``busts`` counts both bust rolls and bust turns."""
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
    hist[s, min(score // 50, hist.shape[1] - 1)] += 1


@njit(cache=True)
def _run_chunk(state, script, cursor, first_game, n_games, n_seats, first_seat, target,
               kinds, params, table_meta, table_value, table_bank,
               keep_score, max_keep, all_score, stats, hist, counters, totals_out):
    """Play games ``first_game .. first_game + n_games - 1``: the whole game logic.

    Deliberately one function: every call of a jitted function with array arguments
    costs atomic reference-count updates on shared arrays, so nothing with array
    arguments is called per game, turn or roll (only on rare paths and in scripted mode).
    Dice come from ``state`` or, if ``script`` is non-empty, from its faces (``cursor``:
    read position, exhausted flag). ``totals_out[i, s]`` (if it has rows) receives game
    ``i``'s final totals.
    """
    scripted = script.shape[0] > 0
    keep_totals = totals_out.shape[0] > 0
    # the generator in registers; indices on the roll path unsigned (numba adds a
    # negative-index fix-up to every signed index)
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    totals = np.zeros(n_seats, dtype=np.int64)
    g = np.zeros((n_seats, _N_G), dtype=np.int64)
    thr_n = np.zeros(7, dtype=np.int64)
    max_turns = MAX_ROUNDS * n_seats
    for i in range(n_games):
        for s in range(n_seats):
            totals[s] = 0
            for j in range(_N_G):
                g[s, j] = 0
        seat = first_seat if first_seat >= 0 else (first_game + i) % n_seats
        trigger = -1
        turns = 0
        capped = False
        while True:
            # ---- one turn of `seat`
            my_total = totals[seat]
            best_opp = np.int64(0)  # also the leader's total in the last round
            for s in range(n_seats):
                if s != seat and totals[s] > best_opp:
                    best_opp = totals[s]
            last_round = trigger >= 0
            kind = kinds[seat]
            t_base = np.int64(0)
            p_dim = np.int64(1)
            if kind == TABLE:
                p_dim = table_meta[seat, T_P]
                if last_round and table_meta[seat, T_LAST_OFFSET] >= 0:
                    d = min(max((best_opp - my_total) // 50, 0), table_meta[seat, T_D] - 1)
                    t_base = table_meta[seat, T_LAST_OFFSET] + d * p_dim * 7
                else:
                    o_dim = table_meta[seat, T_O]
                    m = min(my_total // 50, table_meta[seat, T_M] - 1)
                    o = min(best_opp // 50, o_dim - 1)
                    t_base = table_meta[seat, T_OFFSET] + (m * o_dim + o) * p_dim * 7
            else:
                # THRESHOLD and AI bank when tp >= thr_n[dice left to roll]
                thr = params[seat, P_THRESHOLD]
                floor = np.int64(0)
                two = np.int64(0)
                one = np.int64(0)
                if kind == AI:
                    deficit = max(best_opp - my_total, 0)
                    thr = params[seat, P_BASE] + params[seat, P_STEP] * min(
                        params[seat, P_MAX_STEPS], deficit // params[seat, P_PER])
                    two = params[seat, P_TWO_DICE]
                    one = params[seat, P_ONE_DIE]
                    if last_round and params[seat, P_CHASE] != 0:
                        floor = best_opp - my_total + 1  # a banked total must beat the leader
                for m in range(3, 7):
                    thr_n[m] = max(thr, floor)
                thr_n[2] = max(thr - two, floor)
                thr_n[1] = max(thr - one, floor)
            n = np.int64(6)
            tp = np.int64(0)
            rolls = np.int64(0)
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
                rolls += 1
                packed += np.int64(1) << (10 * (n - 1))
                k = max_keep[r]
                if k == 0:
                    busted = True
                    break
                if kind == TABLE:
                    # the set-aside whose state has the highest value; ties: more points,
                    # then more dice (policy_table.py)
                    best_v = -np.inf
                    best_tp = np.int64(-1)
                    best_n = np.int64(-1)
                    best_idx = np.int64(-1)
                    for kk in range(1, n + 1):
                        sc = keep_score[r, uint64(kk)]
                        if sc <= 0:
                            continue
                        tp2 = tp + sc
                        n2 = n - kk
                        if n2 == 0:
                            n2 = 6
                        idx = t_base + min(tp2 // 50, p_dim - 1) * 7 + n2
                        v = np.float64(table_value[uint64(idx)])
                        if v > best_v or (v == best_v and (
                                tp2 > best_tp or (tp2 == best_tp and n2 > best_n))):
                            best_v = v
                            best_tp = tp2
                            best_n = n2
                            best_idx = idx
                    tp = best_tp
                    n = best_n
                    hot += n == 6  # 6 dice to roll only after hot dice
                    if table_bank[uint64(best_idx)] != 0:
                        break
                else:
                    tp += all_score[r]
                    n -= k
                    h = np.int64(n == 0)  # hot dice: all 6 back in play (branch-free)
                    n += 6 * h
                    hot += h
                    if tp >= thr_n[uint64(n)]:
                        break
                if (rolls & 511) == 0:
                    for m in range(6):
                        stats[seat, ST_ROLLS_N + m] += (packed >> (10 * m)) & 1023
                    packed = 0
                    if rolls >= MAX_TURN_ROLLS:
                        turn_capped = True
                        break
            # ---- book the turn
            for m in range(6):
                stats[seat, ST_ROLLS_N + m] += (packed >> (10 * m)) & 1023
            g[seat, _G_TURNS] += 1
            g[seat, _G_ROLLS] += rolls
            g[seat, _G_HOT] += hot
            if busted:
                g[seat, _G_BUSTS] += 1
                stats[seat, ST_BUSTS_N + n - 1] += 1
            elif not turn_capped:
                totals[seat] += tp
            if turn_capped or (scripted and cursor[1] != 0):
                capped = True
                break
            if trigger < 0 and totals[seat] >= target:
                trigger = seat
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
            book_seat(stats, hist, s, totals[s], top, n_top, g[s, _G_TURNS], g[s, _G_ROLLS],
                      g[s, _G_BUSTS], g[s, _G_HOT])


@njit(cache=True, parallel=True)
def run_chunks(states, bounds, n_seats, first_seat, target,
               kinds, params, table_meta, table_value, table_bank,
               keep_score, max_keep, all_score, stats, hist, counters):
    """Play chunk ``c`` = games ``bounds[c] .. bounds[c+1]-1`` with generator ``states[c]``.

    ``stats``: int64 (chunks, seats, N_STATS), ``hist``: int64 (chunks, seats, bins) of
    final totals in units of 50 (last bin: that and above), ``counters``: int64
    (chunks, N_CHUNK_COUNTERS); all zeroed by the caller. Each chunk writes only its
    own slices, so results do not depend on the number of threads. The first seat is
    ``first_seat``, or (if -1) the global game index modulo the number of seats.
    """
    no_script = np.zeros(0, dtype=np.int64)
    no_totals = np.zeros((0, n_seats), dtype=np.int64)
    for c in prange(states.shape[0]):
        state = states[c].copy()
        cursor = np.zeros(2, dtype=np.int64)
        _run_chunk(state, no_script, cursor, bounds[c], bounds[c + 1] - bounds[c], n_seats,
                   first_seat, target, kinds, params, table_meta, table_value, table_bank,
                   keep_score, max_keep, all_score, stats[c], hist[c], counters[c],
                   no_totals)


@njit(cache=True)
def run_scripted(script, n_games, n_seats, first_seat, target,
                 kinds, params, table_meta, table_value, table_bank,
                 keep_score, max_keep, all_score, stats, hist, counters, totals_out):
    """Play ``n_games`` games whose dice are read from ``script`` (faces 1..6, in order).

    The same game code as :func:`run_chunks` (a roll of n dice consumes the next n
    faces); ``totals_out[i, s]`` receives game ``i``'s final totals. Stops at the first
    game the script cannot finish (``counters[C_SCRIPT_ERRORS] == 1``). Returns the
    number of faces consumed.
    """
    state = np.zeros(4, dtype=np.uint64)
    cursor = np.zeros(2, dtype=np.int64)
    _run_chunk(state, script, cursor, 0, n_games, n_seats, first_seat, target,
               kinds, params, table_meta, table_value, table_bank,
               keep_score, max_keep, all_score, stats, hist, counters, totals_out)
    return cursor[0]


@njit(cache=True, parallel=True)
def bust_counts(states, bounds, max_keep, out):
    """Roll ``n`` dice ``bounds[c+1]-bounds[c]`` times per chunk for n = 1..6.

    ``out[c, n]``: busts among chunk ``c``'s rolls of ``n`` dice (int64, zeroed by caller).
    """
    for c in prange(states.shape[0]):
        state = states[c].copy()
        m = bounds[c + 1] - bounds[c]
        for n in range(1, 7):
            b = np.int64(0)
            for _ in range(m):
                if max_keep[roll_dice(state, n)] == 0:
                    b += 1
            out[c, n] = b


@njit(cache=True, parallel=True)
def rng_cost(states, rolls_per_chunk, out):
    """Random numbers alone: chunk ``c`` draws ``rolls_per_chunk[c, n]`` rolls of ``n``
    dice, each one unbiased ``u < 6**n`` (what a roll costs before any game logic).

    Same parallel layout as :func:`run_chunks`; ``out[c]`` gets the sum of the draws, so
    they cannot be optimised away. For the benchmark.
    """
    for c in prange(states.shape[0]):
        # the draws as the lane kernel makes them: state in registers, raw draw u < 6**n
        # (the game looks its outcome up from u, with no rank in between)
        s0, s1, s2, s3 = states[c, 0], states[c, 1], states[c, 2], states[c, 3]
        acc = np.int64(0)
        for n in range(1, 7):
            bound = _POW6U[n]
            for _ in range(rolls_per_chunk[c, n]):
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                acc += u
        out[c] = acc
