"""The fast path for games where every seat plays ``threshold-T`` (layer 1, pure).

The general kernel (:mod:`dicelab.farkle.kernels`) plays one game at a time; its
per-roll work is a chain of dependent steps (draw, rank, scoring lookups, decision,
branch), and every end of turn is a branch the processor mispredicts. Threshold seats
need far less per roll, and this kernel exploits it:

* **One lookup per roll.** :func:`outcome_table` maps each raw draw ``u < 6**n`` of a
  roll of ``n`` dice straight to its outcome: the points of all scoring dice and the
  dice left to roll (6 after hot dice), or 0 for a bust.
* **Lanes.** Each chunk plays ``lanes`` games side by side. One pass rolls once for
  every lane (branch-free, the generator state in registers) and only lists the lanes
  whose turn ended; a second pass books those turns. Independent games overlap in the
  processor, and a pass costs one mispredicted branch instead of one per turn.
* **Lean statistics.** A turn's rolls by dice count live in one packed int64 per lane
  (9 bits per dice count, 9 bits of total), unpacked only when the turn ends.
* **Few instructions per roll.** Each lane's state is one row of a flat array (one base
  address for all its fields, where an array per field would spill the registers), and
  indices are unsigned (numba adds a negative-index fix-up to every signed one). This
  took the kernel from about 159 to about 116 instructions per roll (callgrind; the
  random numbers alone: about 22).

The draws of a chunk come from its one generator, lane after lane within a pass: the
games are a deterministic function of ``(seed, chunk, lanes)``, whatever the number of
threads. With ``lanes=1`` the kernel plays exactly the general kernel's games (same
draws, same order), which is how the tests check it bit for bit; the product uses
:data:`LANES`. Statistics, histogram and counters have the general kernel's layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from dicelab.dice import MAX_DICE, POW6, SEQ_OFFSET, SEQ_TO_RANK
from dicelab.farkle import kernels as K
from dicelab.rng import below_s

#: Games in flight per chunk. Part of the definition of a run: changing it changes
#: which draws each game gets (but not the distribution of anything).
LANES = 16

#: Packed per-turn roll counter: 9 bits per dice count n = 1..6 (field n - 1), and the
#: turn's total rolls in bits 54..62. Flushed every 256 rolls, so no field overflows.
_FIELD_BITS = 9
_TOTAL_SHIFT = 54
_FLUSH_AT = np.int64(256) << _TOTAL_SHIFT
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_FLUSH_ROLLS = 256

_POW6 = POW6.astype(np.uint64)
_SEQ_OFFSET = SEQ_OFFSET.astype(np.uint64)
#: ``_ONE[n]``: what one roll of n dice adds to the packed counter.
_ONE = np.array([0] + [(1 << (_FIELD_BITS * (n - 1))) + (1 << _TOTAL_SHIFT)
                       for n in range(1, MAX_DICE + 1)], dtype=np.int64)

#: Packed per-game turn counter: turns (bits 0..20), busts (21..41), turns whose last
#: roll left hot dice (42..62). A game is capped at 5000 rounds, far below 2**21 turns.
_BUST_SHIFT = 21
_HOT_SHIFT = 42
_CNT_MASK = (1 << 21) - 1

#: Outcome codes: ``points << 3 | dice left`` (dice left 1..6; 0 means a bust).
_DICE_BITS = 3


def outcome_table(max_keep: np.ndarray, all_score: np.ndarray) -> np.ndarray:
    """Outcome of every raw draw: ``code[SEQ_OFFSET[n] + u]`` for ``u < 6**n``.

    ``code = points << 3 | left`` where ``points`` is the score of all scoring dice and
    ``left`` the dice left to roll (6 after hot dice); ``code = 0`` is a bust. int32.
    """
    if int(all_score.max()) >= 1 << (31 - _DICE_BITS):
        raise ValueError("scores too large for the outcome table")
    ranks = SEQ_TO_RANK.astype(np.int64)
    n_of = np.repeat(np.arange(MAX_DICE + 1), POW6)  # dice count of each raw draw
    keep = max_keep[ranks]
    left = n_of - keep
    left[left == 0] = 6
    code = (all_score[ranks] << _DICE_BITS) | left
    code[keep == 0] = 0
    return code.astype(np.int32)


#: Lane rows: each lane's state is one row of ``_LW`` int64 in one flat array, so a lane
#: costs one base address (not one per array: those spill out of the registers), and the
#: fields pass 1 touches share a cache line. Unsigned indices skip numba's
#: negative-index fix-up on every access.
_LANE_FIELDS = 16
_LW = uint64(_LANE_FIELDS)
_DICE = uint64(0)  # after a roll: dice left, or -n on a bust
_TP = uint64(1)  # turn points
_ACC = uint64(2)  # packed rolls of this turn
_THR = uint64(3)  # threshold of the seat to play
_SEAT = uint64(4)
_TRIG = uint64(5)  # seat that triggered the last round, or -1
_TURNS = uint64(6)
_ACTIVE = uint64(7)
_FLUSHED = uint64(8)  # rare: turns longer than 256 rolls: rolls flushed so far
_FLUSHED6 = uint64(9)  # and rolls of 6 dice among them
#: Per lane and seat rows (index ``lane * n_seats + seat``), ``_GW`` int64 each.
_SEAT_FIELDS = 8
_GW = uint64(_SEAT_FIELDS)
_TOTAL = uint64(0)
_GACC = uint64(1)  # packed rolls (as _ACC)
_GCNT = uint64(2)  # turns | busts | hot last rolls
_GROLLS = uint64(3)  # rolls flushed out of _GACC
_GROLLS6 = uint64(4)  # rolls of 6 dice, same


@njit(cache=True)
def _chunk(st, first_game, n_games, n_seats, first_seat, target, thr, out,
           lanes, stats, hist, counters):
    """Play games ``first_game ..`` (``n_games``) of one chunk in ``lanes`` lanes.

    ``st``: the chunk's generator (uint64[4]); ``thr[s]``: seat s's threshold.
    """
    n_lanes = min(lanes, n_games)
    max_turns = K.MAX_ROUNDS * n_seats
    useats = uint64(n_seats)
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    s3 = st[3]
    # (sizes from the int constants: uint64 * int64 would be a float in numba)
    L = np.zeros(n_lanes * _LANE_FIELDS, dtype=np.int64)
    G = np.zeros(n_lanes * n_seats * _SEAT_FIELDS, dtype=np.int64)
    ended = np.zeros(n_lanes, dtype=np.uint64)
    started = 0
    for lane in range(n_lanes):
        r = uint64(lane) * _LW
        s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
        L[r + _DICE] = 6
        L[r + _SEAT] = s
        L[r + _THR] = thr[uint64(s)]
        L[r + _TRIG] = -1
        L[r + _ACTIVE] = 1
        started += 1
    live = n_lanes
    while live > 0:
        # ---- pass 1: one roll per lane; list the lanes whose turn ended. A retired lane
        # (its games all played) keeps rolling, unbooked, until the chunk's last game ends:
        # cheaper than testing every lane on every roll.
        n_end = uint64(0)
        r = uint64(0)
        for _ in range(n_lanes):
            n = uint64(L[r + _DICE])
            u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, _POW6[n])
            code = np.int64(out[_SEQ_OFFSET[n] + uint64(u)])
            a = L[r + _ACC] + _ONE[n]
            left = code & 7
            t2 = L[r + _TP] + (code >> _DICE_BITS)
            bust = left == 0
            L[r + _DICE] = left - np.int64(n) * bust
            L[r + _TP] = t2
            end = bust | (t2 >= L[r + _THR])
            if a >= _FLUSH_AT:  # 256 rolls in this turn: flush (rare)
                if L[r + _ACTIVE] != 0:
                    s = uint64(L[r + _SEAT])
                    for m in range(6):
                        stats[s, K.ST_ROLLS_N + m] += (
                            (a >> (_FIELD_BITS * m)) & _FIELD_MASK)
                    L[r + _FLUSHED6] += (a >> (_FIELD_BITS * 5)) & _FIELD_MASK
                    L[r + _FLUSHED] += _FLUSH_ROLLS
                a = 0
                if not end and L[r + _FLUSHED] >= K.MAX_TURN_ROLLS:
                    end = True
                    L[r + _TP] = -1  # marks a capped turn
            L[r + _ACC] = a
            ended[n_end] = r
            n_end += uint64(end)
            r += _LW
        # ---- pass 2: book the ended turns
        for e in range(n_end):
            r = ended[e]
            if L[r + _ACTIVE] == 0:  # retired: nothing is booked
                L[r + _DICE] = 6
                L[r + _TP] = 0
                L[r + _ACC] = 0
                continue
            s = L[r + _SEAT]
            x = L[r + _DICE]
            t = L[r + _TP]
            lane = r // _LW
            g = (lane * useats + uint64(s)) * _GW
            bust = x < 0
            ga = G[g + _GACC] + L[r + _ACC]
            if ga >= _FLUSH_AT:  # rare: 256 rolls of this seat in this game
                for m in range(6):
                    stats[uint64(s), K.ST_ROLLS_N + m] += (
                        (ga >> (_FIELD_BITS * m)) & _FIELD_MASK)
                G[g + _GROLLS] += ga >> _TOTAL_SHIFT
                G[g + _GROLLS6] += (ga >> (_FIELD_BITS * 5)) & _FIELD_MASK
                ga = 0
            G[g + _GACC] = ga
            G[g + _GCNT] += 1 + (np.int64(bust) << _BUST_SHIFT) + (
                np.int64(x == 6) << _HOT_SHIFT)
            # branch-free: busts with n dice (+0 to the 1-die column when not a bust)
            stats[uint64(s), uint64(K.ST_BUSTS_N - 1 + max(-x, 1))] += bust
            L[r + _DICE] = 6
            L[r + _TP] = 0
            L[r + _ACC] = 0
            capped = t < 0
            if capped:  # rare: a turn of MAX_TURN_ROLLS rolls; nothing banked
                t = 0
            total = G[g + _TOTAL] + t * (1 - bust)
            G[g + _TOTAL] = total
            if L[r + _FLUSHED] != 0:
                G[g + _GROLLS] += L[r + _FLUSHED]
                G[g + _GROLLS6] += L[r + _FLUSHED6]
                L[r + _FLUSHED] = 0
                L[r + _FLUSHED6] = 0
            game_over = capped
            if not capped:
                trig = L[r + _TRIG]
                if trig < 0 and total >= target:
                    trig = s
                    L[r + _TRIG] = s
                s += 1
                if s == n_seats:
                    s = 0
                if s == trig:
                    game_over = True
                else:
                    turns = L[r + _TURNS] + 1
                    L[r + _TURNS] = turns
                    if turns >= max_turns:
                        game_over = True
                        capped = True
            L[r + _SEAT] = s
            L[r + _THR] = thr[uint64(s)]
            if not game_over:
                continue
            # ---- book the game (as the general kernel does)
            counters[K.C_GAMES] += 1
            trig = L[r + _TRIG]
            if capped:
                counters[K.C_CAPPED] += 1
            elif trig >= 0:
                stats[uint64(trig), K.ST_TRIGGERS] += 1
            row = lane * useats * _GW
            top = G[row + _TOTAL]
            for q in range(1, n_seats):
                top = max(top, G[row + uint64(q) * _GW + _TOTAL])
            n_top = 0
            for q in range(n_seats):
                n_top += G[row + uint64(q) * _GW + _TOTAL] == top
            for q in range(n_seats):
                gq = row + uint64(q) * _GW
                ga = G[gq + _GACC]
                for m in range(6):
                    stats[q, K.ST_ROLLS_N + m] += (ga >> (_FIELD_BITS * m)) & _FIELD_MASK
                c = G[gq + _GCNT]
                tu = c & _CNT_MASK
                hot = ((ga >> (_FIELD_BITS * 5)) & _FIELD_MASK) + G[gq + _GROLLS6] - tu + (
                    c >> _HOT_SHIFT)
                K.book_seat(stats, hist, q, G[gq + _TOTAL], top, n_top, tu,
                            (ga >> _TOTAL_SHIFT) + G[gq + _GROLLS],
                            (c >> _BUST_SHIFT) & _CNT_MASK, hot)
                for f in range(_SEAT_FIELDS):
                    G[gq + uint64(f)] = 0
            # ---- next game in this lane, or retire it
            if started < n_games:
                s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
                started += 1
                L[r + _SEAT] = s
                L[r + _THR] = thr[uint64(s)]
                L[r + _TRIG] = -1
                L[r + _TURNS] = 0
            else:
                L[r + _ACTIVE] = 0
                live -= 1


@njit(cache=True, parallel=True)
def run_chunks(states, bounds, n_seats, first_seat, target, thr, out, lanes,
               stats, hist, counters):
    """Play chunk ``c`` = games ``bounds[c] .. bounds[c+1]-1`` with generator ``states[c]``.

    Arrays as :func:`dicelab.farkle.kernels.run_chunks` (``stats``, ``hist``,
    ``counters`` per chunk, zeroed by the caller); ``thr[s]``: seat s's threshold;
    ``out``: :func:`outcome_table`.
    """
    for c in prange(states.shape[0]):
        _chunk(states[c].copy(), bounds[c], bounds[c + 1] - bounds[c], n_seats, first_seat,
               target, thr, out, lanes, stats[c], hist[c], counters[c])
