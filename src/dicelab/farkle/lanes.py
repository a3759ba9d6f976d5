"""The fast path for games where every seat plays ``threshold-T`` (layer 1, pure).

The general kernel (:mod:`dicelab.farkle.kernels`) plays one game at a time; its
per-roll work is a chain of dependent steps (draw, rank, scoring lookups, decision,
branch), and every end of turn is a branch the processor mispredicts. Threshold seats
need far less per roll, and this kernel exploits it:

* **One lookup per roll.** :func:`outcome_table` maps each raw draw ``u < 6**n`` of a
  roll of ``n`` dice straight to its outcome: the points of all scoring dice and the
  dice left to roll (6 after hot dice), or a bust. The outcomes of ``n`` dice start at
  index ``6**n``, so the bound of the draw is also where its outcomes are.
* **The bank decision is a sign.** A lane keeps its *surplus*: turn points minus the
  seat's threshold, in units of 50. A roll adds its points, and a bust adds a huge
  number, so "the turn is over" (banked or bust) is ``surplus >= 0``.
* **Lanes, in SIMD.** Each chunk plays :func:`lanes_for` games side by side (32 for
  solitaire, 16 with more seats), and every lane's state is a *column* of one array
  (field ``f`` of lane ``j`` at ``f * width + j``). A pass has two loops:

  1. the draws, lane after lane, with the generator state in registers: each raw draw
     and its outcome code (scalar: the random numbers themselves);
  2. everything else, for all lanes at once and without a branch: the surplus, the
     bank-or-bust decision, the counts, the turn's booking (masked: a lane whose turn
     goes on adds zeros), the next seat and its threshold and the round cap. Every
     address is a constant offset plus the lane, and the seat loop has a compile-time
     length (the thresholds come as a tuple), so LLVM turns this loop into vector code
     (AVX-512 or AVX2, whatever the machine has).

  Only lanes whose turn needs more (a bank that reached the target, the end of a game,
  a packed counter to flush) go through a scalar step, found from one bit per lane.
  It runs after the next pass's draws, which need nothing from it. The round cap and
  the last round share one countdown: when a seat triggers the last round, the scalar
  step shortens it to the turns the other seats have left.
* **Lean statistics.** A seat's game has three numbers in the vector loop: its total,
  its rolls by dice count (one packed counter, 10 bits per dice count, counted on every
  roll) and its turn ends (busts by dice count packed the same way, and the turns
  banked right after hot dice). The rest follows when the game ends: a seat's turns
  from the game's turns and who began, its busts from the packed busts; counters are
  flushed to the statistics when a field half fills.

Why a threshold limit (:data:`MAX_THRESHOLD`, about 52 million): the general kernel
caps a turn at ``MAX_TURN_ROLLS`` rolls, and this kernel never caps a turn. Every
scoring roll adds at least 50 points, so a ``threshold-T`` turn has at most ``T / 50``
rolls, and up to the limit no turn reaches that cap: the two kernels play the same
games. The runner plays higher thresholds with the general kernel
(:func:`dicelab.farkle.simulate.kernel_for`), and this kernel refuses them.

The draws of a chunk come from its one generator, lane after lane within a pass: the
games are a deterministic function of ``(seed, chunk, lanes)``, whatever the number of
threads. With ``lanes=1`` the kernel plays exactly the general kernel's games (same
draws, same order), which is how the tests check it bit for bit; the product uses
:func:`lanes_for`. Statistics, histogram and counters have the general kernel's layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from dicelab.dice import MAX_DICE, POW6, SEQ_OFFSET, SEQ_TO_RANK
from dicelab.farkle import kernels as K
from dicelab.farkle.scoring import POINT_UNIT
from dicelab.rng import below_s

#: Games in flight per chunk: :data:`SOLO_LANES` for solitaire, :data:`LANES` with more
#: seats (see :func:`lanes_for`). Part of the definition of a run: changing it changes
#: which draws each game gets (but not the distribution of anything).
LANES = 16
SOLO_LANES = 32

#: Packed counters: 10 bits per dice count n = 1..6 (field n - 1). One is added per roll
#: (per bust); a seat's game counter is flushed to the statistics when a field reaches
#: 512 (bit 9 of some field set), before the lane's next roll, so no field overflows.
_FIELD_BITS = 10
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_HALF_FULL = sum(1 << (_FIELD_BITS * m + _FIELD_BITS - 1) for m in range(MAX_DICE))
#: The highest threshold this kernel plays: its turns (at most ``T / 50`` rolls) stay
#: below the general kernel's cap on the rolls of a turn.
MAX_LANE_TURN_ROLLS = K.MAX_TURN_ROLLS - 1
MAX_THRESHOLD = POINT_UNIT * MAX_LANE_TURN_ROLLS

#: Outcome codes: ``points / 50 << 7 | hot << 6 | 10 * (dice - 1)``. ``dice``: the dice
#: left to roll (1..6, 6 after hot dice), or for a bust the dice just rolled, kept as the
#: shift of its field in the packed counters (so the kernel shifts by it directly);
#: ``hot``: a scoring roll that used every die. A bust's ``points / 50`` is
#: :data:`_BUST`: far above any surplus of a scoring turn (< :data:`_BUSTED`).
_POINTS_SHIFT = 7
_HOT_BIT = 6
_SHIFT_MASK = 63
_BUST = 1 << 23
_BUSTED = 1 << 22
#: The field shift of 6 dice (a fresh turn).
_SIX = _FIELD_BITS * (MAX_DICE - 1)

#: A seat's packed turn ends: busts by dice count in the fields of the roll counter and,
#: in bits 60..63, the turns banked right after hot dice (flushed when it reaches 8).
_HOT_END_SHIFT = 60
_HOT_END_MASK = 15
_FULL = _HALF_FULL | (1 << 63)
#: The countdown of a lane that plays no game (never reaches 0).
_NEVER = 1 << 62


def outcome_table(max_keep: np.ndarray, all_score: np.ndarray) -> np.ndarray:
    """Outcome of every raw draw: ``code[6**n + u]`` for ``u < 6**n`` (int32; entries below
    6 and between the dice counts' ranges are unused).

    ``code = points / 50 << 7 | hot << 6 | 10 * (left - 1)`` where ``points`` is the
    score of all scoring dice, ``left`` the dice left to roll (6 after hot dice) and
    ``hot`` 1 if every die scored; a bust has ``points / 50 = _BUST`` and ``left = n``,
    the dice rolled. Raw draw ``u`` of ``n`` dice is the roll ``SEQ_TO_RANK[SEQ_OFFSET[n]
    + u]`` of the general kernel.
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
    shift = _FIELD_BITS * np.maximum(np.where(bust, n_of, left) - 1, 0)
    hot = (~bust & (keep == n_of)).astype(np.int64)
    code = (points << _POINTS_SHIFT) | (hot << _HOT_BIT) | shift
    table = np.zeros(2 * POW6[MAX_DICE], dtype=np.int32)
    for n in range(1, MAX_DICE + 1):
        table[POW6[n]:2 * POW6[n]] = code[SEQ_OFFSET[n]:SEQ_OFFSET[n] + POW6[n]]
    return table


#: The lane array, ``W = lanes_for(seats)`` columns wide: field ``f`` of lane ``j`` at
#: ``f * W + j`` (int64). Columns past the chunk's lane count are inactive, never booked.
_DICE = 0  # the dice to roll, as their field shift 10 * (dice - 1)
_CODE = 1  # the outcome code of this pass's roll
_SUR = 2  # surplus: turn points minus threshold, units of 50
_SEAT = 3  # the seat to play (past the last: none, the lane is retired)
_THR = 4  # its threshold, units of 50
_TURNS = 5  # turns left: before the round cap, then (after a trigger) of the last round
_ACTIVE = 6  # 0: retired (all its games played); rolls on, unbooked
_LANE_FIELDS = 7
#: Then the seats' games so far: field ``k`` of seat ``q`` is the lane field
#: ``_LANE_FIELDS + k * seats + q``.
_SEAT_FIELDS = 3
_TOTAL = 0  # units of 50
_GACC = 1  # packed rolls by dice count
_GEND = 2  # packed turn ends: busts by dice count | turns banked right after hot dice
#: 6**n at the field shift of n dice: the bound of a draw and where its outcomes start.
_POW6U = np.zeros(_SIX + 1, dtype=np.uint64)
for _n in range(1, MAX_DICE + 1):
    _POW6U[_FIELD_BITS * (_n - 1)] = POW6[_n]
#: The lane of a one-bit mask ``1 << j`` (j < 36) is ``_LANE_OF_BIT[(1 << j) % 37]``: the
#: powers of two up to 2**35 are distinct modulo 37.
_LANE_OF_BIT = np.zeros(37, dtype=np.int64)
for _j in range(36):
    _LANE_OF_BIT[(1 << _j) % 37] = _j


@njit(inline="always")
def lanes_for(n_seats):
    """The lane count (and column width) for ``n_seats`` seats: more lanes hide more
    latency, but with several seats the vector loop grows and 32 lanes were slower.
    Measured on the benchmark machine (AVX-512 and AVX2 code alike)."""
    return SOLO_LANES if n_seats == 1 else LANES


@njit(inline="always")
def _col(f, w):
    """Where lane field ``f`` starts in a lane array ``w`` columns wide."""
    return uint64(f * w)


@njit(inline="always")
def _seat_col(k, q, w, n_seats):
    """Where field ``k`` of seat ``q`` starts."""
    return uint64((_LANE_FIELDS + k * n_seats + q) * w)


@njit(inline="always")
def _flush(stats, s, first, packed):
    """Add a packed counter (one field per dice count) to seat ``s``'s statistics
    ``first .. first + 5``; returns the sum of its fields."""
    tot = np.int64(0)
    for m in range(6):
        v = (packed >> (_FIELD_BITS * m)) & _FIELD_MASK
        stats[s, first + m] += v
        tot += v
    return tot


@njit(inline="always")
def _start_game(S, w, j, s, thr, max_turns):
    """Lane ``j`` starts a game with seat ``s`` to play (its dice, outcome and seat
    counters are already those of a fresh turn)."""
    S[_col(_SEAT, w) + j] = s
    S[_col(_THR, w) + j] = thr[s]
    S[_col(_SUR, w) + j] = -thr[s]
    S[_col(_TURNS, w) + j] = max_turns


@njit(cache=True)
def _chunk(st, first_game, n_games, first_seat, target, thr_t, out, lanes, stats, hist,
           counters):
    """Play games ``first_game ..`` (``n_games``) of one chunk in ``lanes`` lanes.

    ``st``: the chunk's generator (uint64[4]); ``thr_t``: the seats' thresholds in units
    of 50, a tuple (its length, the seat count, is a compile-time constant).
    """
    n_seats = len(thr_t)
    n_lanes = min(lanes, n_games)
    max_turns = K.MAX_ROUNDS * n_seats
    target50 = target // POINT_UNIT
    seats64 = np.int64(n_seats)
    thr0 = np.int64(thr_t[0])
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    s3 = st[3]
    w = lanes_for(n_seats)  # a compile-time constant, like n_seats
    uw = uint64(w)
    S = np.zeros((_LANE_FIELDS + _SEAT_FIELDS * n_seats) * w, dtype=np.int64)
    thr = np.zeros(n_seats, dtype=np.int64)
    for q in range(n_seats):
        thr[q] = thr_t[q]
    # per lane and seat, what was flushed out of the packed counters during the game
    # (rare): rolls, rolls of 6 dice, busts, turns banked right after hot dice
    fl = np.zeros((4, w, n_seats), dtype=np.int64)
    first = np.zeros(w, dtype=np.int64)  # the seat that began the lane's game
    trig = np.full(w, -1, dtype=np.int64)  # the seat that triggered the last round
    last = np.zeros(w, dtype=np.int64)  # the game's turns once its last round is over
    cut = np.zeros(w, dtype=np.bool_)  # the round cap comes before the last round ends
    started = 0
    for lane in range(w):
        j = uint64(lane)
        S[_col(_DICE, w) + j] = _SIX
        S[_col(_CODE, w) + j] = _SIX  # (columns past n_lanes: no points, 6 dice; no seat)
        S[_col(_SUR, w) + j] = -1
        S[_col(_THR, w) + j] = 1
        S[_col(_SEAT, w) + j] = n_seats + 1
        S[_col(_TURNS, w) + j] = _NEVER
        if lane < n_lanes:
            S[_col(_ACTIVE, w) + j] = 1
            s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
            started += 1
            first[j] = s
            _start_game(S, w, j, s, thr, max_turns)
    live = n_lanes
    flagged = np.int64(0)  # bit j: lane j's last pass needs the scalar step
    while True:
        # ---- the draws, lane after lane (a retired lane keeps rolling, unbooked, until
        # the chunk's last game ends: cheaper than testing it on every roll); with every
        # lane in use, a loop of compile-time length. (Written out twice, not through a
        # helper: the helper made LLVM's code for solitaire about 3% slower.)
        if n_lanes == w:
            for j in range(uw):
                sh = uint64(S[_col(_DICE, w) + j])
                bound = _POW6U[sh]
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                S[_col(_CODE, w) + j] = out[bound + uint64(u)]
        else:
            for lane in range(n_lanes):
                j = uint64(lane)
                sh = uint64(S[_col(_DICE, w) + j])
                bound = _POW6U[sh]
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                S[_col(_CODE, w) + j] = out[bound + uint64(u)]
        # ---- the scalar step for the lanes flagged in the last pass, in lane order. It
        # comes after the draws (which need nothing from it: a lane whose turn ended rolls
        # 6 dice), so the vector stores it reads have long reached the cache.
        while flagged != 0:
            bit = flagged & -flagged
            flagged ^= bit
            j = uint64(_LANE_OF_BIT[bit % 37])
            for p in range(n_seats):  # (a roll can fill a counter in the middle of a turn)
                ga = S[_seat_col(_GACC, p, w, n_seats) + j]
                if ga & _HALF_FULL:
                    fl[0, j, p] += _flush(stats, p, K.ST_ROLLS_N, ga)
                    fl[1, j, p] += (ga >> (_FIELD_BITS * 5)) & _FIELD_MASK
                    S[_seat_col(_GACC, p, w, n_seats) + j] = 0
                ge = S[_seat_col(_GEND, p, w, n_seats) + j]
                if ge & _FULL:
                    fl[2, j, p] += _flush(stats, p, K.ST_BUSTS_N, ge)
                    fl[3, j, p] += (ge >> _HOT_END_SHIFT) & _HOT_END_MASK
                    S[_seat_col(_GEND, p, w, n_seats) + j] = 0
            left = S[_col(_TURNS, w) + j]
            if trig[j] < 0:
                q = np.int64(0)
                if n_seats > 1:
                    q = S[_col(_SEAT, w) + j] - 1  # the seat that played the last turn
                    q += seats64 * np.int64(q < 0)
                if S[_seat_col(_TOTAL, q, w, n_seats) + j] >= target50:
                    # q banked to the target: the last round begins, and the countdown
                    # becomes the other seats' one more turn each (unless the round cap
                    # comes first: then the game is capped, as in the general kernel)
                    trig[j] = q
                    cut[j] = left < n_seats - 1
                    last[j] = max_turns - left + min(left, n_seats - 1)
                    left = min(left, n_seats - 1)
                    S[_col(_TURNS, w) + j] = left
            if left > 0:
                continue  # the game goes on
            # ---- book the game (as the general kernel does)
            counters[K.C_GAMES] += 1
            k_end = max_turns
            if trig[j] < 0 or cut[j]:
                counters[K.C_CAPPED] += 1
            else:
                stats[trig[j], K.ST_TRIGGERS] += 1
                k_end = last[j]
            # the highest total and how many seats have it, branch-free
            top = np.int64(-1)
            n_top = np.int64(0)
            for p in range(n_seats):
                v = S[_seat_col(_TOTAL, p, w, n_seats) + j]
                n_top = n_top * (v <= top) + (v >= top)
                top = max(top, v)
            for p in range(n_seats):
                ga = S[_seat_col(_GACC, p, w, n_seats) + j]
                ge = S[_seat_col(_GEND, p, w, n_seats) + j]
                n_rolls = _flush(stats, p, K.ST_ROLLS_N, ga) + fl[0, j, p]
                n_rolls6 = ((ga >> (_FIELD_BITS * 5)) & _FIELD_MASK) + fl[1, j, p]
                n_busts = _flush(stats, p, K.ST_BUSTS_N, ge) + fl[2, j, p]
                hot_last = ((ge >> _HOT_END_SHIFT) & _HOT_END_MASK) + fl[3, j, p]
                # seats take turns from the one that began: p played every n-th turn;
                # 6 dice are rolled at a turn's start and after hot dice
                d = p - first[j]
                d += seats64 * np.int64(d < 0)
                tu = (k_end - d + seats64 - 1) // seats64
                K.book_seat(stats, hist, p, S[_seat_col(_TOTAL, p, w, n_seats) + j] * POINT_UNIT,
                            top * POINT_UNIT, n_top, tu, n_rolls, n_busts,
                            n_rolls6 - tu + hot_last)
                for k in range(_SEAT_FIELDS):
                    S[_seat_col(k, p, w, n_seats) + j] = 0
                for k in range(4):
                    fl[k, j, p] = 0
            trig[j] = -1
            # ---- next game in this lane, or retire it (it keeps the turn it was given,
            # then plays one-roll turns, booked to no seat)
            if started < n_games:
                s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
                started += 1
                first[j] = s
                _start_game(S, w, j, s, thr, max_turns)
            else:
                S[_col(_ACTIVE, w) + j] = 0
                S[_col(_THR, w) + j] = 1
                S[_col(_SEAT, w) + j] = n_seats + 1  # no seat's: never booked
                S[_col(_TURNS, w) + j] = _NEVER
                live -= 1
        if live == 0:
            break
        # ---- every lane at once, branch-free (vectorised): the roll, and if the turn
        # is over its booking, the next seat and its threshold, and the countdown
        for j in range(uw):
            code = S[_col(_CODE, w) + j]
            sur = S[_col(_SUR, w) + j] + (code >> _POINTS_SHIFT)
            over = np.int64(sur >= 0)  # banked or bust
            bust = np.int64(sur >= _BUSTED)
            x = code & _SHIFT_MASK  # dice left (6 after hot dice), or rolled in a bust
            # the turn's end, packed: a bust by its dice, or a bank right after hot dice
            # (added only if the turn is over)
            end = (bust << x) | (((code >> _HOT_BIT) & 1) << _HOT_END_SHIFT)
            if n_seats == 1:  # (a compile-time choice)
                active = S[_col(_ACTIVE, w) + j]
                booked = over & active
                one = active << S[_col(_DICE, w) + j]  # this roll, packed (none if retired)
                thr_cur = thr0
                m = -booked
                points = (sur + thr_cur) & (bust - 1)  # the turn's points unless a bust
                total = S[_seat_col(_TOTAL, 0, w, n_seats) + j] + (points & m)
                S[_seat_col(_TOTAL, 0, w, n_seats) + j] = total
                ga = S[_seat_col(_GACC, 0, w, n_seats) + j] + one
                S[_seat_col(_GACC, 0, w, n_seats) + j] = ga
                ge = S[_seat_col(_GEND, 0, w, n_seats) + j] + (end & m)
                S[_seat_col(_GEND, 0, w, n_seats) + j] = ge
                # the target reached (the scalar step ends the game), or a counter to flush
                flag = (m & -np.int64(total >= target50)) | ((ga | ge) & _FULL)
                thr_next = thr_cur
            else:
                active = S[_col(_ACTIVE, w) + j]
                booked = over & active
                one = active << S[_col(_DICE, w) + j]
                thr_cur = S[_col(_THR, w) + j]
                points = (sur + thr_cur) & (bust - 1)
                seat = S[_col(_SEAT, w) + j]
                nxt = seat + booked
                nxt -= seats64 * np.int64(nxt == seats64)
                thr_next = np.int64(1)  # (a retired lane: seat past the last)
                flag = np.int64(0)
                full = np.int64(0)
                for q in range(n_seats):  # unrolled: n_seats is a compile-time constant
                    sq = -np.int64(seat == q)  # all ones for the seat that rolled
                    m = -booked & sq  # and if its turn is over
                    total = S[_seat_col(_TOTAL, q, w, n_seats) + j] + (points & m)
                    S[_seat_col(_TOTAL, q, w, n_seats) + j] = total
                    ga = S[_seat_col(_GACC, q, w, n_seats) + j] + (one & sq)
                    S[_seat_col(_GACC, q, w, n_seats) + j] = ga
                    ge = S[_seat_col(_GEND, q, w, n_seats) + j] + (end & m)
                    S[_seat_col(_GEND, q, w, n_seats) + j] = ge
                    # the target reached (the scalar step sees whether it triggers the
                    # last round), or a packed counter to flush
                    flag |= m & -np.int64(total >= target50)
                    full |= ga | ge
                    sel = -np.int64(nxt == q)
                    thr_next = (thr_t[q] & sel) | (thr_next & ~sel)
                flag |= full & _FULL
                S[_col(_THR, w) + j] = thr_next
                S[_col(_SEAT, w) + j] = nxt
            om = -over
            S[_col(_SUR, w) + j] = (-thr_next & om) | (sur & ~om)
            S[_col(_DICE, w) + j] = x + ((_SIX - x) & om)
            turns = S[_col(_TURNS, w) + j] - booked
            S[_col(_TURNS, w) + j] = turns
            flag |= booked & np.int64(turns == 0)  # the round cap, or the last round over
            flagged |= np.int64(flag != 0) << np.int64(j)


@njit(cache=True, parallel=True)
def _run_chunks(states, bounds, first_seat, target, thr_t, out, lanes, stats, hist,
                counters):
    for c in prange(states.shape[0]):
        _chunk(states[c].copy(), bounds[c], bounds[c + 1] - bounds[c], first_seat, target,
               thr_t, out, lanes, stats[c], hist[c], counters[c])


def run_chunks(states, bounds, n_seats, first_seat, target, thr, out, lanes,
               stats, hist, counters):
    """Play chunk ``c`` = games ``bounds[c] .. bounds[c+1]-1`` with generator ``states[c]``.

    Arrays as :func:`dicelab.farkle.kernels.run_chunks` (``stats``, ``hist``,
    ``counters`` per chunk, zeroed by the caller); ``thr[s]``: seat s's threshold in
    points, a multiple of 50 from 50 to :data:`MAX_THRESHOLD`; ``lanes``: 1 to
    :func:`lanes_for` (seats); ``out``: :func:`outcome_table`. Raises ValueError otherwise.
    """
    thr_t = tuple(int(t) // POINT_UNIT for t in thr)
    if len(thr_t) != n_seats or n_seats < 1:
        raise ValueError("lanes kernel: one threshold per seat, at least one seat")
    if any(int(t) % POINT_UNIT or not 1 <= int(t) // POINT_UNIT <= MAX_LANE_TURN_ROLLS
           for t in thr):
        raise ValueError("lanes kernel: thresholds must be multiples of 50 "
                         "from 50 to MAX_THRESHOLD")
    if not 1 <= lanes <= lanes_for(n_seats):
        raise ValueError(f"lanes kernel: 1 to {lanes_for(n_seats)} lanes for {n_seats} seat(s)")
    _run_chunks(states, bounds, first_seat, target, thr_t, out, lanes, stats, hist,
                counters)
