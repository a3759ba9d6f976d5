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

The draws of a chunk come from its one generator, lane after lane within a pass: the
games are a deterministic function of ``(seed, chunk, lanes)``, whatever the number of
threads. With ``lanes=1`` the kernel plays exactly the general kernel's games (same
draws, same order), which is how the tests check it bit for bit; the product uses
:data:`LANES`. Statistics, histogram and counters have the general kernel's layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

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

_POW6 = POW6.copy()
_SEQ_OFFSET = SEQ_OFFSET.copy()
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


@njit(cache=True)
def _chunk(st, first_game, n_games, n_seats, first_seat, target, thr, out,
           lanes, stats, hist, counters):
    """Play games ``first_game ..`` (``n_games``) of one chunk in ``lanes`` lanes.

    ``st``: the chunk's generator (uint64[4]); ``thr[s]``: seat s's threshold.
    """
    n_lanes = min(lanes, n_games)
    max_turns = K.MAX_ROUNDS * n_seats
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    s3 = st[3]
    # per-lane turn state
    dice = np.full(n_lanes, 6, dtype=np.int64)  # after a roll: left, or -n on a bust
    tp = np.zeros(n_lanes, dtype=np.int64)
    acc = np.zeros(n_lanes, dtype=np.int64)  # packed rolls of this turn
    lthr = np.zeros(n_lanes, dtype=np.int64)  # threshold of the seat to play
    active = np.ones(n_lanes, dtype=np.int64)
    # per-lane game state
    seat = np.zeros(n_lanes, dtype=np.int64)
    trigger = np.full(n_lanes, -1, dtype=np.int64)
    turns = np.zeros(n_lanes, dtype=np.int64)
    # per-lane, per-seat game counters, index lane * n_seats + seat
    totals = np.zeros(n_lanes * n_seats, dtype=np.int64)
    gacc = np.zeros(n_lanes * n_seats, dtype=np.int64)  # packed rolls (as acc)
    gcnt = np.zeros(n_lanes * n_seats, dtype=np.int64)  # turns | busts | hot last rolls
    grolls = np.zeros(n_lanes * n_seats, dtype=np.int64)  # rolls flushed out of gacc
    grolls6 = np.zeros(n_lanes * n_seats, dtype=np.int64)  # rolls of 6 dice, same
    # rare: turns longer than 256 rolls (rolls, rolls of 6 dice flushed so far)
    flushed = np.zeros(n_lanes, dtype=np.int64)
    flushed6 = np.zeros(n_lanes, dtype=np.int64)
    ended = np.zeros(n_lanes, dtype=np.int64)
    started = 0
    for lane in range(n_lanes):
        s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
        seat[lane] = s
        lthr[lane] = thr[s]
        started += 1
    live = n_lanes
    while live > 0:
        # ---- pass 1: one roll per lane; list the lanes whose turn ended. A retired lane
        # (its games all played) keeps rolling, unbooked, until the chunk's last game ends:
        # cheaper than testing every lane on every roll.
        n_end = 0
        for lane in range(n_lanes):
            n = dice[lane]
            u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, _POW6[n])
            code = np.int64(out[_SEQ_OFFSET[n] + u])
            a = acc[lane] + _ONE[n]
            left = code & 7
            t2 = tp[lane] + (code >> _DICE_BITS)
            bust = left == 0
            dice[lane] = left - n * bust
            tp[lane] = t2
            end = bust | (t2 >= lthr[lane])
            if a >= _FLUSH_AT:  # 256 rolls in this turn: flush (rare)
                if active[lane] != 0:
                    for m in range(6):
                        stats[seat[lane], K.ST_ROLLS_N + m] += (
                            (a >> (_FIELD_BITS * m)) & _FIELD_MASK)
                    flushed6[lane] += (a >> (_FIELD_BITS * 5)) & _FIELD_MASK
                    flushed[lane] += _FLUSH_ROLLS
                a = 0
                if not end and flushed[lane] >= K.MAX_TURN_ROLLS:
                    end = True
                    tp[lane] = -1  # marks a capped turn
            acc[lane] = a
            ended[n_end] = lane
            n_end += end
        # ---- pass 2: book the ended turns
        for e in range(n_end):
            lane = ended[e]
            if active[lane] == 0:  # retired: nothing is booked
                dice[lane] = 6
                tp[lane] = 0
                acc[lane] = 0
                continue
            s = seat[lane]
            x = dice[lane]
            t = tp[lane]
            i = lane * n_seats + s
            bust = x < 0
            ga = gacc[i] + acc[lane]
            if ga >= _FLUSH_AT:  # rare: 256 rolls of this seat in this game
                for m in range(6):
                    stats[s, K.ST_ROLLS_N + m] += (ga >> (_FIELD_BITS * m)) & _FIELD_MASK
                grolls[i] += ga >> _TOTAL_SHIFT
                grolls6[i] += (ga >> (_FIELD_BITS * 5)) & _FIELD_MASK
                ga = 0
            gacc[i] = ga
            gcnt[i] += 1 + (np.int64(bust) << _BUST_SHIFT) + (np.int64(x == 6) << _HOT_SHIFT)
            # branch-free: busts with n dice (+0 to the 1-die column when not a bust)
            stats[s, K.ST_BUSTS_N - 1 + max(-x, 1)] += bust
            dice[lane] = 6
            tp[lane] = 0
            acc[lane] = 0
            capped = t < 0
            if capped:  # rare: a turn of MAX_TURN_ROLLS rolls; nothing banked
                t = 0
            totals[i] += t * (1 - bust)
            if flushed[lane] != 0:
                grolls[i] += flushed[lane]
                grolls6[i] += flushed6[lane]
                flushed[lane] = 0
                flushed6[lane] = 0
            game_over = capped
            if not capped:
                if trigger[lane] < 0 and totals[i] >= target:
                    trigger[lane] = s
                s += 1
                if s == n_seats:
                    s = 0
                if s == trigger[lane]:
                    game_over = True
                else:
                    turns[lane] += 1
                    if turns[lane] >= max_turns:
                        game_over = True
                        capped = True
            seat[lane] = s
            lthr[lane] = thr[s]
            if not game_over:
                continue
            # ---- book the game (as the general kernel does)
            counters[K.C_GAMES] += 1
            if capped:
                counters[K.C_CAPPED] += 1
            elif trigger[lane] >= 0:
                stats[trigger[lane], K.ST_TRIGGERS] += 1
            row = lane * n_seats
            top = totals[row]
            for q in range(1, n_seats):
                top = max(top, totals[row + q])
            n_top = 0
            for q in range(n_seats):
                n_top += totals[row + q] == top
            for q in range(n_seats):
                iq = row + q
                ga = gacc[iq]
                for m in range(6):
                    stats[q, K.ST_ROLLS_N + m] += (ga >> (_FIELD_BITS * m)) & _FIELD_MASK
                c = gcnt[iq]
                tu = c & _CNT_MASK
                hot = ((ga >> (_FIELD_BITS * 5)) & _FIELD_MASK) + grolls6[iq] - tu + (
                    c >> _HOT_SHIFT)
                K.book_seat(stats, hist, q, totals[iq], top, n_top, tu,
                            (ga >> _TOTAL_SHIFT) + grolls[iq], (c >> _BUST_SHIFT) & _CNT_MASK,
                            hot)
                totals[iq] = 0
                gacc[iq] = 0
                gcnt[iq] = 0
                grolls[iq] = 0
                grolls6[iq] = 0
            # ---- next game in this lane, or retire it
            if started < n_games:
                s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
                started += 1
                seat[lane] = s
                lthr[lane] = thr[s]
                trigger[lane] = -1
                turns[lane] = 0
            else:
                active[lane] = 0
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
