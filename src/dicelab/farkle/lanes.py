"""The fast path for games where every seat plays ``threshold-T`` (layer 1, pure).

The general kernel (:mod:`dicelab.farkle.kernels`) plays one game at a time; its
per-roll work is a chain of dependent steps (draw, rank, scoring lookups, decision,
branch), and every end of turn is a branch the processor mispredicts. Threshold seats
need far less per roll, and this kernel exploits it:

* **One lookup per roll.** :func:`outcome_table` maps each raw draw ``u < 6**n`` of a
  roll of ``n`` dice straight to its outcome: the points of all scoring dice and the
  dice left to roll (6 after hot dice), or a bust.
* **The bank decision is a sign.** A lane keeps its *surplus*: turn points minus the
  seat's threshold, in units of 50. A roll adds its points, and a bust adds a huge
  number, so "the turn is over" (banked or bust) is ``surplus >= 0``.
* **Lanes.** Each chunk plays ``lanes`` games side by side. One pass rolls once for
  every lane (branch-free, the generator state in registers) and only lists the lanes
  whose turn ended; a second pass books those turns. Independent games overlap in the
  processor, and a pass costs one mispredicted branch instead of one per turn.
* **Lean statistics.** A turn's rolls by dice count live in one packed int64 per lane
  (10 bits per dice count), added to the seat's packed game counter when the turn ends
  and unpacked only when the game ends; busts by dice count, turns, busts and hot dice
  are counted in the seat's row and booked when the game ends.
* **Few instructions per roll.** Every lane's state is one row of one flat array that
  also holds the small tables, the parked generator state and the list of ended lanes
  (one base address for all of them); each seat of each lane has one row of a second
  array. Indices are unsigned (numba adds a negative-index fix-up to every signed one),
  and the booking pass has no data-dependent branch except the end of a game.

Why a threshold limit (:data:`MAX_THRESHOLD`): every scoring roll adds at least 50
points, so a ``threshold-T`` turn has at most ``T / 50`` rolls; up to 511 rolls fit the
packed per-turn counter, and a turn can never reach the general kernel's roll cap. The
runner plays higher thresholds with the general kernel
(:func:`dicelab.farkle.simulate.kernel_for`), and this kernel refuses them.

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
from dicelab.farkle.scoring import POINT_UNIT
from dicelab.rng import below_s

#: Games in flight per chunk. Part of the definition of a run: changing it changes
#: which draws each game gets (but not the distribution of anything).
LANES = 16

#: Packed roll counters: 10 bits per dice count n = 1..6 (field n - 1). A turn adds at
#: most 511 to a field; a seat's game counter is flushed to the statistics as soon as a
#: field reaches 512 (bit 9 of some field set), so no field ever overflows.
_FIELD_BITS = 10
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_HALF_FULL = sum(1 << (_FIELD_BITS * m + _FIELD_BITS - 1) for m in range(MAX_DICE))
#: The longest turn the packed counters hold, and so the highest threshold this kernel
#: plays (a turn of ``threshold-T`` has at most ``T / 50`` rolls): 25,550.
MAX_LANE_TURN_ROLLS = (1 << (_FIELD_BITS - 1)) - 1
MAX_THRESHOLD = POINT_UNIT * MAX_LANE_TURN_ROLLS

#: Outcome codes: ``points / 50 << 5 | 4 * dice``. ``dice``: the dice left to roll
#: (1..6, 6 after hot dice), or for a bust the dice just rolled, whose ``points / 50``
#: is :data:`_BUST`: far above any surplus of a scoring turn (< :data:`_BUSTED`).
_DICE_BITS = 5
_DICE_MASK = 7 << 2
_BUST = 1 << 25
_BUSTED = 1 << 24
_SIX = 6 << 2  # the dice field of a fresh turn

#: Per dice count n (row n, 4 int64): [6**n, SEQ_OFFSET[n], one roll of n dice packed,
#: unused]. Copied to the front of the lane array (one base address for both).
_NT = np.zeros(4 * (MAX_DICE + 1), dtype=np.int64)
for _n in range(1, MAX_DICE + 1):
    _NT[4 * _n] = POW6[_n]
    _NT[4 * _n + 1] = SEQ_OFFSET[_n]
    _NT[4 * _n + 2] = 1 << (_FIELD_BITS * (_n - 1))
_NT[0] = 1
#: After the table, 4 slots hold the generator state while the booking pass runs: stored
#: there, it does not occupy 4 registers through the booking code (which then spills
#: less; about 7 fewer instructions per roll).
_RNG = uint64(_NT.shape[0])

#: Packed per-game turn counter: turns (bits 0..20), busts (21..41), turns whose last
#: roll left hot dice (42..62). A game is capped at 5000 rounds, far below 2**21 turns.
_BUST_SHIFT = 21
_HOT_SHIFT = 42
_CNT_MASK = (1 << 21) - 1


def outcome_table(max_keep: np.ndarray, all_score: np.ndarray) -> np.ndarray:
    """Outcome of every raw draw: ``code[SEQ_OFFSET[n] + u]`` for ``u < 6**n`` (int32).

    ``code = points / 50 << 5 | 4 * left`` where ``points`` is the score of all scoring
    dice and ``left`` the dice left to roll (6 after hot dice); a bust has
    ``points / 50 = _BUST`` and ``left = n``, the dice rolled.
    """
    if int(all_score.max()) >= POINT_UNIT * _BUSTED:
        raise ValueError("scores too large for the outcome table")
    if (all_score % POINT_UNIT).any():
        raise ValueError(f"scores must be multiples of {POINT_UNIT}")
    ranks = SEQ_TO_RANK.astype(np.int64)
    n_of = np.repeat(np.arange(MAX_DICE + 1), POW6)  # dice count of each raw draw
    keep = max_keep[ranks]
    left = n_of - keep
    left[left == 0] = 6
    bust = keep == 0
    points = np.where(bust, _BUST, all_score[ranks] // POINT_UNIT)
    if (points[~bust] <= 0).any():
        raise ValueError("a scoring roll must score at least 50 points")
    code = (points << _DICE_BITS) | (np.where(bust, n_of, left) << 2)
    return code.astype(np.int32)


#: Lane rows: each lane's state is one row of ``_LW`` int64 in one flat array, after the
#: per-dice-count table. Fields:
_LANE_FIELDS = 16
_LW = uint64(_LANE_FIELDS)
_DICE = uint64(0)  # 4 * dice to roll; after a roll, the code's dice field
_SUR = uint64(1)  # surplus: turn points minus threshold, units of 50 (>= 0: turn over)
_ACC = uint64(2)  # packed rolls of this turn
_GR = uint64(3)  # G row of the seat to play
_GBEG = uint64(4)  # G row of this lane's seat 0
_GEND = uint64(5)  # one past this lane's last G row
_TRIG = uint64(6)  # G row of the seat that triggered the last round, or -1
_TURNS = uint64(7)  # turns left before the round cap (counting down)
_ACTIVE = uint64(8)  # 0: retired (all its games played); it rolls on, unbooked
_TT = uint64(9)  # the total that triggers the last round: the target, then never
_NEVER = np.int64(1) << 62
#: Per lane and seat rows (``lane * n_seats + seat``), ``_GW`` int64 each:
_SEAT_FIELDS = 16
_GW = uint64(_SEAT_FIELDS)
_TOTAL = uint64(0)  # units of 50
_GACC = uint64(1)  # packed rolls (as _ACC)
_GCNT = uint64(2)  # turns | busts | hot last rolls
_GROLLS = uint64(3)  # rolls flushed out of _GACC
_GROLLS6 = uint64(4)  # rolls of 6 dice among them
_THR = 5  # the seat's threshold, units of 50: set once per chunk, kept across games
_THRU = uint64(_THR)  # (fields 0 .. _THR - 1 and the busts count; zeroed after a game)
_GBUSTS = uint64(9)  # _GBUSTS + n: busts with n dice (fields 10..15)

#: What a turn adds to _GCNT, at index 2 * (code's dice) + bust.
_CNT = np.zeros(2 * (MAX_DICE + 1), dtype=np.int64)
for _x in range(1, MAX_DICE + 1):
    _CNT[2 * _x] = 1 + ((1 << _HOT_SHIFT) if _x == 6 else 0)
    _CNT[2 * _x + 1] = 1 + (1 << _BUST_SHIFT)

#: The front of the lane array: [_NT | 4 generator slots | _CNT | 2 unused]; the lane
#: rows start at _NTU, and after them (at ``rend``) the list of lanes whose turn ended.
_CNT0 = uint64(_NT.shape[0] + 4)
_NT_LEN = _NT.shape[0] + 4 + _CNT.shape[0] + 2
_NTU = uint64(_NT_LEN)


@njit(inline="always")
def _flush(stats, s, ga):
    """Add a packed roll counter to seat ``s``'s rolls by dice count; returns its total."""
    tot = np.int64(0)
    for m in range(6):
        v = (ga >> (_FIELD_BITS * m)) & _FIELD_MASK
        stats[s, K.ST_ROLLS_N + m] += v
        tot += v
    return tot


@njit(inline="always")
def _start_game(L, G, r, row, s, target50, max_turns):
    """Lane row ``r`` starts a game with seat ``s`` to play (``row``: its seat 0's G row)."""
    gr = row + uint64(s) * _GW
    L[r + _GR] = gr
    L[r + _SUR] = -G[gr + _THRU]
    L[r + _TRIG] = -1
    L[r + _TT] = target50
    L[r + _TURNS] = max_turns


@njit(cache=True)
def _chunk(st, first_game, n_games, n_seats, first_seat, target, thr, out,
           lanes, stats, hist, counters):
    """Play games ``first_game ..`` (``n_games``) of one chunk in ``lanes`` lanes.

    ``st``: the chunk's generator (uint64[4]); ``thr[s]``: seat s's threshold
    (50 .. :data:`MAX_THRESHOLD`, checked by :func:`run_chunks`).
    """
    n_lanes = min(lanes, n_games)
    max_turns = K.MAX_ROUNDS * n_seats
    target50 = target // POINT_UNIT
    useats = uint64(n_seats)
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    s3 = st[3]
    # (sizes from the int constants: uint64 * int64 would be a float in numba)
    L = np.zeros(_NT_LEN + n_lanes * (_LANE_FIELDS + 1), dtype=np.int64)
    for i in range(_NT.shape[0]):
        L[i] = _NT[i]
    for i in range(_CNT.shape[0]):
        L[_CNT0 + uint64(i)] = _CNT[i]
    G = np.zeros(n_lanes * n_seats * _SEAT_FIELDS, dtype=np.int64)
    started = 0
    for lane in range(n_lanes):
        r = _NTU + uint64(lane) * _LW
        row = uint64(lane) * useats * _GW
        for q in range(n_seats):
            G[row + uint64(q) * _GW + _THRU] = thr[q] // POINT_UNIT
        s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
        L[r + _DICE] = _SIX
        L[r + _GBEG] = row
        L[r + _GEND] = row + useats * _GW
        L[r + _ACTIVE] = 1
        _start_game(L, G, r, row, s, target50, max_turns)
        started += 1
    live = n_lanes
    rend = _NTU + uint64(n_lanes) * _LW
    while live > 0:
        # ---- pass 1: one roll per lane; list the lanes whose turn ended. A retired lane
        # (its games all played) keeps rolling, unbooked, until the chunk's last game ends:
        # cheaper than testing every lane on every roll.
        n_end = uint64(0)
        r = _NTU
        while r != rend:
            n4 = uint64(L[r + _DICE])
            u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, L[n4])
            code = np.int64(out[uint64(L[n4 + uint64(1)]) + uint64(u)])
            L[r + _ACC] += L[n4 + uint64(2)]
            sur = L[r + _SUR] + (code >> _DICE_BITS)
            L[r + _SUR] = sur
            L[r + _DICE] = code & _DICE_MASK
            L[rend + n_end] = r
            n_end += uint64(sur >= 0)
            r += _LW
        # ---- pass 2: book the ended turns (the generator parked in L meanwhile)
        L[_RNG] = np.int64(s0)
        L[_RNG + uint64(1)] = np.int64(s1)
        L[_RNG + uint64(2)] = np.int64(s2)
        L[_RNG + uint64(3)] = np.int64(s3)
        for e in range(n_end):
            r = uint64(L[rend + uint64(e)])
            if L[r + _ACTIVE] == 0:  # retired: nothing is booked; one-roll turns from now
                L[r + _DICE] = _SIX
                L[r + _SUR] = -1
                L[r + _ACC] = 0
                continue
            d4 = uint64(L[r + _DICE])  # 4 * (dice left, or rolled in a bust)
            x = d4 >> uint64(2)
            sur = L[r + _SUR]
            gr = uint64(L[r + _GR])
            b = np.int64(sur >= _BUSTED)
            ga = G[gr + _GACC] + L[r + _ACC]
            if ga & _HALF_FULL:  # rare: flush the seat's packed rolls
                G[gr + _GROLLS] += _flush(stats, (gr - uint64(L[r + _GBEG])) // _GW, ga)
                G[gr + _GROLLS6] += (ga >> (_FIELD_BITS * 5)) & _FIELD_MASK
                ga = 0
            G[gr + _GACC] = ga
            G[gr + _GCNT] += L[_CNT0 + (d4 >> uint64(1)) + uint64(b)]
            G[gr + _GBUSTS + x] += b  # +0 to the busts with x dice when not a bust
            # branch-free: the turn's points (surplus + threshold) unless a bust
            total = G[gr + _TOTAL] + ((sur + G[gr + _THRU]) & (b - 1))
            G[gr + _TOTAL] = total
            L[r + _DICE] = _SIX
            L[r + _ACC] = 0
            if total >= L[r + _TT]:  # the target, until the last round is triggered
                L[r + _TRIG] = np.int64(gr)
                L[r + _TT] = _NEVER
            # next seat, wrapping to seat 0 branch-free (lanes end turns in no fixed order:
            # a branch here is mispredicted every other turn of a two-seat game)
            gr += _GW
            gr -= uint64(gr == uint64(L[r + _GEND])) * (useats * _GW)
            L[r + _GR] = gr
            L[r + _SUR] = -G[gr + _THRU]
            capped = False
            if np.int64(gr) != L[r + _TRIG]:
                left = L[r + _TURNS] - 1
                L[r + _TURNS] = left
                if left > 0:
                    continue
                capped = True
            # ---- book the game (as the general kernel does)
            row = uint64(L[r + _GBEG])
            counters[K.C_GAMES] += 1
            trig = L[r + _TRIG]
            if capped:
                counters[K.C_CAPPED] += 1
            elif trig >= 0:
                stats[(uint64(trig) - row) // _GW, K.ST_TRIGGERS] += 1
            # the highest total and how many seats have it: one scalar pass, branch-free
            # (a handful of seats: vectorised loops only add set-up)
            top = np.int64(-1)
            n_top = np.int64(0)
            gq = row
            for _ in range(n_seats):
                v = G[gq + _TOTAL]
                n_top = n_top * (v <= top) + (v >= top)
                top = max(top, v)
                gq += _GW
            gq = row
            for q in range(useats):
                ga = G[gq + _GACC]
                rolls = _flush(stats, q, ga) + G[gq + _GROLLS]
                rolls6 = ((ga >> (_FIELD_BITS * 5)) & _FIELD_MASK) + G[gq + _GROLLS6]
                for m in range(1, MAX_DICE + 1):
                    stats[q, K.ST_BUSTS_N - 1 + m] += G[gq + _GBUSTS + uint64(m)]
                c = G[gq + _GCNT]
                tu = c & _CNT_MASK
                hot = rolls6 - tu + (c >> _HOT_SHIFT)
                K.book_seat(stats, hist, q, G[gq + _TOTAL] * POINT_UNIT, top * POINT_UNIT,
                            n_top, tu, rolls, (c >> _BUST_SHIFT) & _CNT_MASK, hot)
                for f in range(_THR):  # the counting fields (the threshold stays)
                    G[gq + uint64(f)] = 0
                for m in range(1, MAX_DICE + 1):
                    G[gq + _GBUSTS + uint64(m)] = 0
                gq += _GW
            # ---- next game in this lane, or retire it
            if started < n_games:
                s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
                started += 1
                _start_game(L, G, r, row, s, target50, max_turns)
            else:
                L[r + _ACTIVE] = 0
                live -= 1
        s0 = uint64(L[_RNG])
        s1 = uint64(L[_RNG + uint64(1)])
        s2 = uint64(L[_RNG + uint64(2)])
        s3 = uint64(L[_RNG + uint64(3)])


@njit(cache=True, parallel=True)
def run_chunks(states, bounds, n_seats, first_seat, target, thr, out, lanes,
               stats, hist, counters):
    """Play chunk ``c`` = games ``bounds[c] .. bounds[c+1]-1`` with generator ``states[c]``.

    Arrays as :func:`dicelab.farkle.kernels.run_chunks` (``stats``, ``hist``,
    ``counters`` per chunk, zeroed by the caller); ``thr[s]``: seat s's threshold, at
    most :data:`MAX_THRESHOLD` (else ValueError); ``out``: :func:`outcome_table`.
    """
    for s in range(n_seats):
        if thr[s] < POINT_UNIT or thr[s] > MAX_THRESHOLD or thr[s] % POINT_UNIT != 0:
            raise ValueError("lanes kernel: thresholds must be multiples of 50 "
                             "from 50 to MAX_THRESHOLD")
    for c in prange(states.shape[0]):
        _chunk(states[c].copy(), bounds[c], bounds[c + 1] - bounds[c], n_seats, first_seat,
               target, thr, out, lanes, stats[c], hist[c], counters[c])
