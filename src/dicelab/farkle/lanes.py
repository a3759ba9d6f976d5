"""The kernel of games where every seat plays ``threshold-T`` (layer 1, pure).

Each chunk plays :func:`lanes_for` games side by side ("lanes"), every lane's state a
column of one array. A pass draws one roll per lane (scalar: the random numbers, each
raw draw looked up straight in :func:`outcome_table`, the encoding's "all scoring dice"
outcome of that roll) and then plays every lane's roll in one branch-free loop that LLVM
vectorises: the turn points, bank or bust, the booking, the next seat, the last round
(or, under ``first-to-bank``, the end at once) and the round cap, all with masks. Only a
lane whose game is over goes through a scalar step, which books the game and starts the
next one. See ``docs/design/lanes-kernel.md`` for the layout and why it is fast.

The games are a deterministic function of ``(seed, chunk, lanes)``, whatever the number
of threads; with ``lanes=1`` the kernel plays exactly the general kernel's games (same
draws, same order), which is how the tests check it bit for bit. Statistics, histogram
and counters have the general kernel's layout. Thresholds above :data:`MAX_THRESHOLD`
(about 52 million) are refused: the general kernel caps a turn at ``MAX_TURN_ROLLS``
rolls and this kernel never does, so beyond it the two would not play the same games;
the runner plays them with the general kernel (:func:`dicelab.farkle.simulate.
kernel_for`).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types, uint64
from numba.extending import intrinsic

from dicelab.config import FARKLE_LANES, FARKLE_SOLO_LANES, MAX_ROUNDS, MAX_TURN_ROLLS
from dicelab.dice import MAX_DICE, POW6, SEQ_OFFSET, SEQ_TO_RANK
from dicelab.farkle import kernels as K
from dicelab.farkle.rules import FIRST_TO_BANK, HOT_DICE, POINT_UNIT, SetAsides
from dicelab.jit import compile_split, helper, loads, types_of
from dicelab.parallel import run_blocks, threads
from dicelab.rng import below_s

#: Packed counters: 9 bits per dice count n = 1..6 (field n - 1). At most one is added
#: to a field per pass (a roll, a bust), and every lane's counters are emptied into the
#: statistics every ``_FLUSH_PASSES`` passes, so no field overflows.
_FIELD_BITS = 9
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_FLUSH_PASSES = _FIELD_MASK
#: The highest threshold this kernel plays: its turns (at most ``T / 50`` rolls) stay
#: below the general kernel's cap on the rolls of a turn.
MAX_LANE_TURN_ROLLS = MAX_TURN_ROLLS - 1
MAX_THRESHOLD = POINT_UNIT * MAX_LANE_TURN_ROLLS

#: Outcome codes: ``points / 50 << 7 | hot << 6 | 9 * (dice - 1)``. ``dice``: the dice
#: left to roll (1..6, 6 after hot dice), or for a bust the dice just rolled, kept as the
#: shift of its field in the packed counters (so the kernel shifts by it directly);
#: ``hot``: a scoring roll that used every die. A bust's ``points / 50`` is
#: :data:`_BUST`: far above the points of any scoring turn (< :data:`_BUSTED`).
_POINTS_SHIFT = 7
_HOT_BIT = 6
_SHIFT_MASK = 63
_BUST = 1 << 23
_BUSTED = 1 << 22
#: The most a roll may score, in units of 50: a scoring turn's points (at most the
#: highest threshold minus 1, plus one roll) stay below :data:`_BUSTED`.
MAX_ROLL_POINTS = _BUSTED - MAX_LANE_TURN_ROLLS
#: The field shift of 6 dice (a fresh turn).
_SIX = _FIELD_BITS * (MAX_DICE - 1)

#: A seat's packed turn ends: busts by dice count in the fields of the roll counter and,
#: in bits 54..63, the turns banked right after hot dice.
_HOT_END_SHIFT = _FIELD_BITS * MAX_DICE
_HOT_END_MASK = (1 << (64 - _HOT_END_SHIFT)) - 1
#: The countdown of a lane that plays no game (never reaches 0).
_NEVER = 1 << 62


def outcome_table(set_asides: SetAsides) -> np.ndarray:
    """Outcome of every raw draw: ``code[6**n + u]`` for ``u < 6**n`` (int32; entries below
    6 and between the dice counts' ranges are unused).

    ``code = points / 50 << 7 | hot << 6 | 9 * (left - 1)`` where ``points`` and ``left``
    (the dice left to roll, 6 after hot dice) are the encoding's "all scoring dice" option
    of the roll and ``hot`` is 1 after hot dice; a bust has ``points / 50 = _BUST`` and
    ``left = n``, the dice rolled. Raw draw ``u`` of ``n`` dice is the roll
    ``SEQ_TO_RANK[SEQ_OFFSET[n] + u]`` of the general kernel.
    """
    if set_asides.max_points > MAX_ROLL_POINTS:
        raise ValueError("scores too large for the outcome table")
    ranks = SEQ_TO_RANK.astype(np.int64)
    n_of = np.repeat(np.arange(MAX_DICE + 1), POW6)  # dice count of each raw draw
    option = set_asides.roll_keep_all[ranks]
    bust = option < 0
    left = np.where(bust, n_of, set_asides.dice[option])
    points = np.where(bust, _BUST, set_asides.points[option])
    shift = _FIELD_BITS * np.maximum(left - 1, 0)
    hot = (~bust & (left == HOT_DICE)).astype(np.int64)
    code = (points << _POINTS_SHIFT) | (hot << _HOT_BIT) | shift
    table = np.zeros(2 * POW6[MAX_DICE], dtype=np.int32)
    for n in range(1, MAX_DICE + 1):
        table[POW6[n]:2 * POW6[n]] = code[SEQ_OFFSET[n]:SEQ_OFFSET[n] + POW6[n]]
    return table


#: The lane array, ``W = lanes_for(seats)`` columns wide: field ``f`` of lane ``j`` at
#: ``f * W + j`` (int64). Columns past the chunk's lane count are inactive, never booked.
_DICE = 0  # the dice to roll, as their field shift 9 * (dice - 1)
_CODE = 1  # the outcome code of this pass's roll
_PTS = 2  # the turn's points, units of 50 (solitaire: minus the threshold)
_SEAT = 3  # the seat to play (past the last: none, threshold 50)
_TURNS = 4  # turns left before the round cap
_TRIG = 5  # the seat that triggered the last round, or -1 (several seats)
_FLAG = 6  # nonzero: the lane needs the scalar step (its game or its retired turn is over)
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


def lanes_for(n_seats):
    """The lane count (and column width) for ``n_seats`` seats: more lanes hide more
    latency, but with several seats the vector loop grows (the choice is
    :data:`dicelab.config.FARKLE_SOLO_LANES` and ``FARKLE_LANES``)."""
    return FARKLE_SOLO_LANES if n_seats == 1 else FARKLE_LANES


#: :func:`lanes_for` in the kernels (Python callers need no compiled copy).
_lanes_for = njit(inline="always")(lanes_for)


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
    S[_col(_PTS, w) + j] = -thr[s] if len(thr) == 1 else 0
    S[_col(_TURNS, w) + j] = max_turns
    S[_col(_TRIG, w) + j] = -1


@njit(inline="always")
def _sum6(packed):
    """The sum of the six dice-count fields of a packed counter."""
    m = np.int64(_FIELD_MASK | _FIELD_MASK << (2 * _FIELD_BITS) | _FIELD_MASK << (4 * _FIELD_BITS))
    pairs = (packed & m) + ((packed >> _FIELD_BITS) & m)  # three sums, 18 bits apart
    f = np.int64((1 << (2 * _FIELD_BITS)) - 1)
    return (pairs & f) + ((pairs >> (2 * _FIELD_BITS)) & f) + ((pairs >> (4 * _FIELD_BITS)) & f)


@helper
def _flush_all(S, w, lo, hi, n_seats, active, stats, fl):
    """Empty the packed counters of every lane in play into the statistics, and note
    what was emptied (for the game's booking) in ``fl``. Rare: no need to inline it."""
    for lane in range(lo, hi):
        j = uint64(lane)
        if not active[j]:
            continue  # a retired lane's counters are never booked
        for p in range(n_seats):
            ga = S[_seat_col(_GACC, p, w, n_seats) + j]
            fl[0, j, p] += _flush(stats, p, K.ST_ROLLS_N, ga)
            fl[1, j, p] += (ga >> (_FIELD_BITS * 5)) & _FIELD_MASK
            S[_seat_col(_GACC, p, w, n_seats) + j] = 0
            ge = S[_seat_col(_GEND, p, w, n_seats) + j]
            fl[2, j, p] += _flush(stats, p, K.ST_BUSTS_N, ge)
            fl[3, j, p] += (ge >> _HOT_END_SHIFT) & _HOT_END_MASK
            S[_seat_col(_GEND, p, w, n_seats) + j] = 0


@intrinsic
def nonzero_bits8(typingctx, arr, start):
    """``nonzero_bits8(arr, start)``, in jitted code: bit i (i < 8) set where ``arr[start +
    i]`` is nonzero (int64). No bounds check: ``start + 8 <= len(arr)`` is the caller's.

    One vector load and compare whose mask becomes the bits (``kmovb`` with AVX-512, two
    ``movmskpd`` with AVX2): LLVM does not find this for a loop that builds the bits.
    """
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1
            and arr.layout == "C" and isinstance(start, types.Integer)):
        return None
    sig = types.int64(arr, start)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        vt = ir.VectorType(ir.IntType(64), 8)
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), vt.as_pointer())
        mask = builder.icmp_signed("!=", builder.load(ptr, align=8, typ=vt), ir.Constant(vt, None))
        return builder.zext(builder.bitcast(mask, ir.IntType(8)), ir.IntType(64))

    return sig, codegen


@helper(cache=True)
def _vec(S, w, lo, hi, thr_t, target50, at_once):
    """The vector loop: lanes ``lo .. hi - 1`` play the roll drawn for them, branch-free
    (see the module's docstring); returns their flag bits for the scalar step (bit j:
    lane j). ``hi - lo`` is a multiple of 8. ``at_once``: -1 if the first seat to bank
    the target wins at once (ending ``first-to-bank``), 0 for the last round."""
    n_seats = len(thr_t)
    for j in range(uint64(lo), uint64(hi)):
        code = S[_col(_CODE, w) + j]
        pts = S[_col(_PTS, w) + j] + (code >> _POINTS_SHIFT)
        bust = np.int64(pts >= _BUSTED)
        x = code & _SHIFT_MASK  # dice left (6 after hot dice), or rolled in a bust
        # the turn's end, packed: a bust by its dice, or a bank right after hot dice
        # (added only if the turn is over)
        end = (bust << x) | (((code >> _HOT_BIT) & 1) << _HOT_END_SHIFT)
        one = np.int64(1) << S[_col(_DICE, w) + j]  # this roll, packed
        if n_seats == 1:  # (a compile-time choice)
            thr0 = np.int64(thr_t[0])
            over = np.int64(pts >= 0)  # banked or bust (pts: points minus threshold)
            m = -over
            points = (pts + thr0) & (bust - 1)  # the turn's points unless a bust
            total = S[_seat_col(_TOTAL, 0, w, n_seats) + j] + (points & m)
            S[_seat_col(_TOTAL, 0, w, n_seats) + j] = total
            ga = S[_seat_col(_GACC, 0, w, n_seats) + j] + one
            S[_seat_col(_GACC, 0, w, n_seats) + j] = ga
            ge = S[_seat_col(_GEND, 0, w, n_seats) + j] + (end & m)
            S[_seat_col(_GEND, 0, w, n_seats) + j] = ge
            flag = m & -np.int64(total >= target50)  # the target reached: game over
            fresh = -thr0
        else:
            seat = S[_col(_SEAT, w) + j]
            thr_cur = np.int64(1)  # (no seat's: a retired lane plays one-roll turns)
            for q in range(n_seats):  # unrolled: n_seats is a compile-time constant
                sel = -np.int64(seat == q)
                thr_cur = (thr_t[q] & sel) | (thr_cur & ~sel)
            over = np.int64(pts >= thr_cur)  # banked or bust
            points = pts & (bust - 1)
            nxt = seat + over
            nxt -= np.int64(n_seats) * np.int64(nxt == n_seats)
            reached = np.int64(0)
            for q in range(n_seats):
                sq = -np.int64(seat == q)  # all ones for the seat that rolled
                m = -over & sq  # and if its turn is over
                total = S[_seat_col(_TOTAL, q, w, n_seats) + j] + (points & m)
                S[_seat_col(_TOTAL, q, w, n_seats) + j] = total
                ga = S[_seat_col(_GACC, q, w, n_seats) + j] + (one & sq)
                S[_seat_col(_GACC, q, w, n_seats) + j] = ga
                ge = S[_seat_col(_GEND, q, w, n_seats) + j] + (end & m)
                S[_seat_col(_GEND, q, w, n_seats) + j] = ge
                reached |= m & -np.int64(total >= target50)
            # the first seat to bank to the target triggers the last round, which is over
            # when the turn before the trigger's next one ends (or wins at once)
            trig = S[_col(_TRIG, w) + j]
            new = reached & -np.int64(trig < 0)
            trig = (seat & new) | (trig & ~new)
            S[_col(_TRIG, w) + j] = trig
            flag = (over & np.int64(nxt == trig)) | (new & at_once)
            S[_col(_SEAT, w) + j] = nxt
            fresh = np.int64(0)
        om = -over
        S[_col(_PTS, w) + j] = (fresh & om) | (pts & ~om)
        S[_col(_DICE, w) + j] = x + ((_SIX - x) & om)
        turns = S[_col(_TURNS, w) + j] - over
        S[_col(_TURNS, w) + j] = turns
        flag |= over & np.int64(turns == 0)  # the round cap, or the last round over
        S[_col(_FLAG, w) + j] = flag
    # the flags as bits: a mask move per 8 lanes (see the module's docstring)
    flagged = np.int64(0)
    for k in range(uint64(lo), uint64(hi), uint64(8)):
        flagged |= nonzero_bits8(S, _col(_FLAG, w) + k) << np.int64(k)
    return flagged


@helper(cache=True)
def _chunk(st, first_game, n_games, game, thr_t, out, lanes, tally):
    """Play games ``first_game ..`` (``n_games``) of one chunk in ``lanes`` lanes.

    ``st``: the chunk's generator (uint64[4]); ``game``: :class:`~dicelab.farkle.kernels.
    Game`; ``thr_t``: the seats' thresholds in units of 50, a tuple (its length, the seat
    count, is a compile-time constant); ``tally``: :class:`~dicelab.farkle.kernels.Tally`.
    """
    n_seats = len(thr_t)
    first_seat = game.first_seat
    first_to_bank = game.ending == FIRST_TO_BANK
    at_once = -np.int64(first_to_bank)
    stats, hist, counters = tally.stats, tally.hist, tally.counters
    n_lanes = min(lanes, n_games)
    max_turns = MAX_ROUNDS * n_seats
    target50 = game.target // POINT_UNIT
    seats64 = np.int64(n_seats)
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    s3 = st[3]
    w = _lanes_for(n_seats)  # a compile-time constant, like n_seats
    h = w // 2  # the lanes of the first half
    uh = uint64(h)
    uw = uint64(w)
    S = np.zeros((_LANE_FIELDS + _SEAT_FIELDS * n_seats) * w, dtype=np.int64)
    thr = np.zeros(n_seats, dtype=np.int64)
    for q in range(n_seats):
        thr[q] = thr_t[q]
    # per lane and seat, the game's counts outside its packed counters (what was emptied
    # from them during the game, minus what they held when it began): rolls, rolls of 6
    # dice, busts, turns banked right after hot dice
    fl = np.zeros((4, w, n_seats), dtype=np.int64)
    active = np.zeros(w, dtype=np.bool_)  # the lane plays a game (else: retired, unused)
    first = np.zeros(w, dtype=np.int64)  # the seat that began the lane's game
    ahead = np.zeros(n_seats, dtype=np.int64)  # (scratch of the game's booking)
    started = 0
    for lane in range(w):
        j = uint64(lane)
        # (columns past n_lanes: no points, 6 dice, no seat; never over, never booked)
        S[_col(_DICE, w) + j] = _SIX
        S[_col(_CODE, w) + j] = _SIX
        S[_col(_PTS, w) + j] = -1 if n_seats == 1 else 0
        S[_col(_SEAT, w) + j] = n_seats + 1
        S[_col(_TURNS, w) + j] = _NEVER
        if lane < n_lanes:
            active[j] = True
            s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
            started += 1
            first[j] = s
            _start_game(S, w, j, s, thr, max_turns)
    live = n_lanes
    flagged = np.int64(0)  # bit j: lane j's last pass needs the scalar step
    passes = 0
    flush_at = _FLUSH_PASSES  # the next pass that empties the packed counters
    while True:
        # ---- the draws of the first half (a retired lane keeps rolling, unbooked, until
        # the chunk's last game ends: cheaper than testing it on every roll), the vector
        # loop of the second half (from the second pass on), the draws of the second
        # half. With every lane in use, loops of compile-time length. (Written out, not
        # through a helper function: the helper's array arguments cost reference-count
        # updates on every pass.)
        if n_lanes == w:
            for j in range(uh):
                sh = uint64(S[_col(_DICE, w) + j])
                bound = _POW6U[sh]
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                S[_col(_CODE, w) + j] = out[bound + uint64(u)]
        else:
            for lane in range(min(h, n_lanes)):
                j = uint64(lane)
                sh = uint64(S[_col(_DICE, w) + j])
                bound = _POW6U[sh]
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                S[_col(_CODE, w) + j] = out[bound + uint64(u)]
        if passes > 0:
            flagged |= _vec(S, w, h, np.int64(w), thr_t, target50, at_once)
        if n_lanes == w:
            for j in range(uh, uw):
                sh = uint64(S[_col(_DICE, w) + j])
                bound = _POW6U[sh]
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                S[_col(_CODE, w) + j] = out[bound + uint64(u)]
        else:
            for lane in range(h, n_lanes):
                j = uint64(lane)
                sh = uint64(S[_col(_DICE, w) + j])
                bound = _POW6U[sh]
                u, s0, s1, s2, s3 = below_s(s0, s1, s2, s3, bound)
                S[_col(_CODE, w) + j] = out[bound + uint64(u)]
        passes += 1
        if passes == flush_at:
            flush_at += _FLUSH_PASSES
            _flush_all(S, w, np.int64(0), n_lanes, n_seats, active, stats, fl)
        # ---- the scalar step for the lanes flagged in the last pass, in lane order. It
        # comes after the draws (which need nothing from it: a lane whose turn ended rolls
        # 6 dice), so the vector stores it reads have long reached the cache.
        while flagged != 0:
            bit = flagged & -flagged
            flagged ^= bit
            j = uint64(_LANE_OF_BIT[bit % 37])
            if not active[j]:
                # a retired lane, at the end of the turn it was given: from now on it
                # belongs to no seat, and what it banks is dropped
                S[_col(_SEAT, w) + j] = n_seats + 1
                S[_col(_TURNS, w) + j] = _NEVER
                S[_col(_TRIG, w) + j] = -1
                for p in range(n_seats):
                    for k in range(_SEAT_FIELDS):
                        S[_seat_col(k, p, w, n_seats) + j] = 0
                continue
            # ---- the game is over: book it (as the general kernel does)
            left = S[_col(_TURNS, w) + j]
            if n_seats == 1:
                trig = np.int64(0)
                lasted = S[_seat_col(_TOTAL, 0, w, n_seats) + j] >= target50
            else:
                trig = S[_col(_TRIG, w) + j]
                # its last round was played out, or it was won at once
                lasted = (S[_col(_SEAT, w) + j] == trig) or (first_to_bank and trig >= 0)
            k_end = max_turns - left
            counters[K.C_GAMES] += 1
            if lasted:
                stats[trig, K.ST_TRIGGERS] += 1
            else:
                counters[K.C_CAPPED] += 1  # (with or without a trigger)
            # the highest total and how many seats have it, branch-free; each seat's
            # count of seats strictly ahead
            top = np.int64(-1)
            n_top = np.int64(0)
            for p in range(n_seats):
                v = S[_seat_col(_TOTAL, p, w, n_seats) + j]
                n_top = n_top * (v <= top) + (v >= top)
                top = max(top, v)
                ahead[p] = 0
            for p in range(n_seats):
                v = S[_seat_col(_TOTAL, p, w, n_seats) + j]
                for q in range(n_seats):
                    u = S[_seat_col(_TOTAL, q, w, n_seats) + j]
                    ahead[p] += u > v
                    stats[p, K.ST_BEAT + q] += v > u
            for p in range(n_seats):
                ga = S[_seat_col(_GACC, p, w, n_seats) + j]
                ge = S[_seat_col(_GEND, p, w, n_seats) + j]
                r = _sum6(ga)
                r6 = (ga >> (_FIELD_BITS * 5)) & _FIELD_MASK
                b = _sum6(ge)
                hl = (ge >> _HOT_END_SHIFT) & _HOT_END_MASK
                n_rolls = r + fl[0, j, p]
                n_rolls6 = r6 + fl[1, j, p]
                n_busts = b + fl[2, j, p]
                hot_last = hl + fl[3, j, p]
                # seats take turns from the one that began: p played every n-th turn;
                # 6 dice are rolled at a turn's start and after hot dice
                d = p - first[j]
                d += seats64 * np.int64(d < 0)
                tu = (k_end - d + seats64 - 1) // seats64
                K.book_seat(stats, hist, p, S[_seat_col(_TOTAL, p, w, n_seats) + j] * POINT_UNIT,
                            top * POINT_UNIT, n_top, ahead[p], tu, n_rolls, n_busts,
                            n_rolls6 - tu + hot_last)
                S[_seat_col(_TOTAL, p, w, n_seats) + j] = 0
                fl[0, j, p] = -r
                fl[1, j, p] = -r6
                fl[2, j, p] = -b
                fl[3, j, p] = -hl
            # ---- next game in this lane, or retire it: it plays the turn it was given
            # (its countdown ends with it), then one-roll turns, booked to no seat
            if started < n_games:
                s = first_seat if first_seat >= 0 else (first_game + started) % n_seats
                started += 1
                first[j] = s
                _start_game(S, w, j, s, thr, max_turns)
            else:
                _flush_all(S, w, np.int64(j), np.int64(j) + 1, n_seats, active, stats,
                           fl)  # its last counts
                active[j] = False
                S[_col(_TURNS, w) + j] = 1
                S[_col(_TRIG, w) + j] = -1
                live -= 1
        if live == 0:
            break
        # ---- the vector loop of the first half
        flagged |= _vec(S, w, np.int64(0), h, thr_t, target50, at_once)


@njit(cache=True, nogil=True)
def _run_chunks(lo, hi, states, bounds, game, thr_t, out, lanes, stats, hist, counters):
    """Chunks ``lo .. hi - 1`` (see :func:`run_chunks`)."""
    for c in range(lo, hi):
        _chunk(states[c].copy(), bounds[c], bounds[c + 1] - bounds[c], game, thr_t, out,
               lanes, K.Tally(stats[c], hist[c], counters[c]))


def _compile_split(game, thr_t: tuple, out: np.ndarray) -> None:
    """Compile the chunk on two cores (:func:`dicelab.jit.compile_split`): the vector loop
    in a child process, the counters' flush and the draw here, then the chunk, which loads
    the child's loop from numba's cache. The argument types are those the chunk calls them
    with: the lane and seat counts are compile-time constants (``tests/test_first_run.py``
    checks that this process compiles none of the child's again)."""
    n, w = len(thr_t), lanes_for(len(thr_t))
    lit_w, i64, u64 = types.literal(w), types.int64, types.uint64
    S = np.zeros(1, np.int64)
    tally = K.Tally(np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64),
                    np.zeros(1, np.int64))
    aside = [(_vec, types_of(S, lit_w, i64, i64, thr_t, i64, i64))]
    here = [
        (_flush_all, types_of(S, lit_w, i64, i64, types.literal(n), np.zeros(1, np.bool_),
                              np.zeros((1, 1), np.int64), np.zeros((1, 1, 1), np.int64)), 0),
        (below_s, (u64,) * 5, 0),
        (_chunk, types_of(np.zeros(4, np.uint64), i64, i64, game, thr_t, out, i64, tally), 1),
    ]
    compile_split(aside, here, threads())


def warm_up(game, thr, out) -> None:
    """Compile (or load from numba's cache) the kernel :func:`run_chunks` runs for
    ``game`` (its seat count) on no chunks; a compile runs on two cores."""
    s, thr_t = game.n_seats, tuple(int(t) // POINT_UNIT for t in thr)
    args = (np.zeros((0, 4), np.uint64), np.zeros(1, np.int64), game, thr_t, out,
            lanes_for(s), np.zeros((0, s, K.N_STATS), np.int64), np.zeros((0, s, 1), np.int64),
            np.zeros((0, K.N_CHUNK_COUNTERS), np.int64))
    if not loads(_run_chunks, (0, 0, *args)):
        _compile_split(game, thr_t, out)
    run_chunks(*args[:3], thr, *args[4:])


def run_chunks(states, bounds, game, thr, out, lanes, stats, hist, counters):
    """Play chunk ``c`` = games ``bounds[c] .. bounds[c+1]-1`` with generator ``states[c]``.

    ``game`` and the arrays as :func:`dicelab.farkle.kernels.run_chunks` (``stats``,
    ``hist``, ``counters`` per chunk, zeroed by the caller); ``thr[s]``: seat s's threshold
    in points, a multiple of 50 from 50 to :data:`MAX_THRESHOLD`; ``lanes``: 1 to
    :func:`lanes_for` (seats); ``out``: :func:`outcome_table`. Raises ValueError otherwise.
    """
    n_seats = game.n_seats
    thr_t = tuple(int(t) // POINT_UNIT for t in thr)
    if len(thr_t) != n_seats or n_seats < 1:
        raise ValueError("lanes kernel: one threshold per seat, at least one seat")
    if any(int(t) % POINT_UNIT or not 1 <= int(t) // POINT_UNIT <= MAX_LANE_TURN_ROLLS
           for t in thr):
        raise ValueError("lanes kernel: thresholds must be multiples of 50 "
                         "from 50 to MAX_THRESHOLD")
    if not 1 <= lanes <= lanes_for(n_seats):
        raise ValueError(f"lanes kernel: 1 to {lanes_for(n_seats)} lanes for {n_seats} seat(s)")
    run_blocks(_run_chunks, states.shape[0], states, bounds, game, thr_t, out, lanes, stats,
               hist, counters)
