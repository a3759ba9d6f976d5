"""Penta turn lines of a game log read and replayed in bulk (jitted; used by
:mod:`dicelab.gamelog`).

:func:`scan_lines` reads every line of a log's bytes: blank, a Penta turn in the strict
form the writers use (``{"seat": 0, "rolls": [[1, 3, 4, 5, 6], ...], "keeps": [...],
"box": "chance"}``: these keys in this order, integer dice 1..6, five to a roll, at
most three rolls and one keep fewer, a box by its exact name, any JSON whitespace), or
anything else (left to ``json``). A line it accepts decodes, as JSON, to exactly the
values it returns, so the replay can skip the decoder.

:func:`replay_games` replays games of such turns with the rules of
:class:`dicelab.gamelog._PentaGame` (seats in turn, kept dice shown by the next roll,
an open box the joker rule allows) and the scoring kernels, and marks a game at the
first turn it cannot accept. It only ever accepts what the Python replay accepts; a
game it marks is replayed again in Python, which names the line and the field.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab.dice import COUNTS, FACES, SEQ_OFFSET, SEQ_TO_RANK
from dicelab.penta.rules import BOX_NAMES, N_BOXES, N_DICE, REROLLS
from dicelab.penta.scoring import TABLES, apply_box, roll_box_scores
from dicelab.penta.tables import ROLL_BASE

_KEYS = [b'"seat"', b'"rolls"', b'"keeps"', b'"box"']
_NAMES = [f'"{n}"'.encode() for n in BOX_NAMES]


def _packed(words: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.cumsum([0] + [len(w) for w in words]).astype(np.int64)
    return np.frombuffer(b"".join(words), dtype=np.uint8).copy(), offsets


KEYS, KEY_OFF = _packed(_KEYS)
NAMES, NAME_OFF = _packed(_NAMES)
_ROLLS = REROLLS + 1
_OPEN, _CLOSE, _COMMA, _COLON, _BRACE, _END = 91, 93, 44, 58, 123, 125


@njit(cache=True)
def _ws(buf, i, end):
    """The index of the first byte at or after ``i`` that is not JSON whitespace."""
    while i < end and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13 or buf[i] == 10):
        i += 1
    return i


@njit(cache=True)
def _token(buf, i, end, words, off, k):
    """The index after word ``k`` of ``words`` (whitespace first), or -1."""
    i = _ws(buf, i, end)
    n = off[k + 1] - off[k]
    if i + n > end:
        return -1
    for q in range(n):
        if buf[i + q] != words[off[k] + q]:
            return -1
    return i + n


@njit(cache=True)
def _char(buf, i, end, c):
    """The index after byte ``c`` (whitespace first), or -1."""
    i = _ws(buf, i, end)
    return i + 1 if i < end and buf[i] == c else -1


@njit(cache=True)
def _dice(buf, i, end, out, max_n):
    """``[d, d, ...]`` (faces 1..6, at most ``max_n``) into ``out``: (index after, count),
    index -1 if it is not such a list."""
    i = _char(buf, i, end, _OPEN)
    if i < 0:
        return -1, 0
    i = _ws(buf, i, end)
    if i < end and buf[i] == _CLOSE:
        return i + 1, 0
    n = 0
    while n < max_n and i < end and 49 <= buf[i] <= 54:
        out[n] = buf[i] - 48
        n += 1
        i = _ws(buf, i + 1, end)
        if i < end and buf[i] == _CLOSE:
            return i + 1, n
        if i >= end or buf[i] != _COMMA:
            return -1, 0
        i = _ws(buf, i + 1, end)
    return -1, 0


@njit(cache=True)
def _rank(faces, n):
    u = 0
    for q in range(n - 1, -1, -1):
        u = u * 6 + faces[q] - 1
    return SEQ_TO_RANK[SEQ_OFFSET[n] + u]


@njit(cache=True)
def _key(buf, i, end, k):
    """The index after ``, "KEY":`` (key ``k`` of :data:`KEYS`; no comma before the
    first key), or -1 (also for ``i`` = -1)."""
    if k > 0 and i >= 0:
        i = _char(buf, i, end, _COMMA)
    i = _token(buf, i, end, KEYS, KEY_OFF, k) if i >= 0 else -1
    return _char(buf, i, end, _COLON) if i >= 0 else -1


@njit(cache=True)
def _dice_lists(buf, i, end, out, lens, ranks, most, exact):
    """``[L, L, ...]``, at most ``most`` lists of dice (each of ``exact`` dice, if not 0),
    into ``out[k]``, ``lens[k]`` and ``ranks[k]`` (dice ranks): (index after, count), or
    (-1, 0); ``i`` = -1 gives (-1, 0)."""
    i = _char(buf, i, end, _OPEN) if i >= 0 else -1
    if i < 0:
        return -1, 0
    j = _char(buf, i, end, _CLOSE)
    if j >= 0:
        return j, 0
    k = 0
    while k < most:
        i, n = _dice(buf, i, end, out[k], N_DICE)
        if i < 0 or (exact and n != exact):
            return -1, 0
        lens[k] = n
        ranks[k] = _rank(out[k], n)
        k += 1
        j = _char(buf, i, end, _COMMA)
        if j < 0:
            i = _char(buf, i, end, _CLOSE)
            return (i, k) if i >= 0 else (-1, 0)
        i = j
    return -1, 0


@njit(cache=True)
def _turn_line(buf, i, end, t, seat, n_rolls, dice, keep_len, keep_dice, roll_id, keep_rank,
               box, lens):
    """Whether ``buf[i:end]`` is a Penta turn in the strict form; if so its values go to
    row ``t`` of the outputs (which it clears first). ``lens``: scratch, 3 int64."""
    dice[t] = 0
    keep_dice[t] = 0
    keep_len[t] = 0
    roll_id[t] = 0
    keep_rank[t] = 0
    i = _char(buf, i, end, _BRACE)
    i = _key(buf, i, end, 0) if i >= 0 else -1
    if i < 0:
        return False
    i = _ws(buf, i, end)
    v, digits = 0, 0
    while i < end and 48 <= buf[i] <= 57 and digits < 10:
        v = v * 10 + buf[i] - 48
        digits += 1
        i += 1
    if digits == 0 or digits == 10 or (digits > 1 and buf[i - digits] == 48):
        return False  # not a number, too long, or a leading zero (not JSON)
    seat[t] = v
    i, nr = _dice_lists(buf, _key(buf, i, end, 1), end, dice[t], lens, roll_id[t], _ROLLS,
                        N_DICE)
    if i < 0 or nr == 0:
        return False
    roll_id[t, :nr] -= ROLL_BASE
    n_rolls[t] = nr
    i, nk = _dice_lists(buf, _key(buf, i, end, 2), end, keep_dice[t], keep_len[t],
                        keep_rank[t], nr - 1, 0)
    i = _key(buf, i, end, 3) if i >= 0 and nk == nr - 1 else -1
    if i < 0:
        return False
    b = 0
    while b < N_BOXES:
        j = _token(buf, i, end, NAMES, NAME_OFF, b)
        if j >= 0:
            break
        b += 1
    if b == N_BOXES:
        return False
    box[t] = b
    i = _char(buf, j, end, _END)
    return i >= 0 and _ws(buf, i, end) == end


#: :func:`scan_lines`' line kinds.
BLANK, TURN, OTHER = 0, 1, 2


@njit(cache=True)
def _scan(buf, starts, ends, kind, line_of, seat, n_rolls, dice, keep_len, keep_dice,
          roll_id, keep_rank, box):
    t = 0
    lens = np.empty(_ROLLS, np.int64)
    for ln in range(starts.size):
        s, e = starts[ln], ends[ln]
        j = _ws(buf, s, e)
        if j == e:
            kind[ln] = BLANK
        elif buf[j] == _BRACE and _turn_line(buf, j, e, t, seat, n_rolls, dice, keep_len,
                                             keep_dice, roll_id, keep_rank, box, lens):
            kind[ln] = TURN
            line_of[t] = ln
            t += 1
        else:
            kind[ln] = OTHER
    return t


def line_bounds(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) byte offsets of every line of ``buf`` (split at ``\\n``, which ends are
    left out; no line after a final ``\\n``)."""
    nl = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [buf.size]))
    if starts[-1] == buf.size and starts.size > 1:
        starts, ends = starts[:-1], ends[:-1]
    return starts.astype(np.int64), ends.astype(np.int64)


def scan_lines(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """(kind of every line (:data:`BLANK`, :data:`TURN`, :data:`OTHER`), the turns'
    columns): ``line`` (0-based line index), ``seat``, ``n_rolls``, ``dice`` (as logged,
    (n, 3, 5)), ``keep_len`` / ``keep_dice`` ((n, 2), (n, 2, 5)), ``roll_id`` (local roll
    indices), ``keep_rank`` (dice ranks), ``box``; unused places hold 0."""
    n = starts.size
    kind = np.empty(n, np.int8)
    cols = {"line": np.empty(n, np.int64), "seat": np.zeros(n, np.int64),
            "n_rolls": np.zeros(n, np.int64), "dice": np.zeros((n, _ROLLS, N_DICE), np.uint8),
            "keep_len": np.zeros((n, REROLLS), np.int64),
            "keep_dice": np.zeros((n, REROLLS, N_DICE), np.uint8),
            "roll_id": np.zeros((n, _ROLLS), np.int64),
            "keep_rank": np.zeros((n, REROLLS), np.int64), "box": np.zeros(n, np.int64)}
    t = _scan(buf, starts, ends, kind, *cols.values())
    return kind, {k: v[:t].copy() for k, v in cols.items()}


@njit(cache=True)
def _within(keep, r):
    """Whether the dice of keep rank ``keep`` are among those of local roll ``r``."""
    ok = True
    for f in range(1, FACES + 1):
        ok = ok and COUNTS[keep, f] <= COUNTS[ROLL_BASE + r, f]
    return ok


@njit(cache=True)
def _replay(rp, T, lo, hi, n_seats, first, seat, n_rolls, roll_id, keep_rank, box, mask,
            up, fifty, total, points, seat_off, totals, finished, bad):
    scores = np.empty(N_BOXES, np.int64)
    for g in range(lo.size):
        ns = n_seats[g]
        m_s = np.zeros(ns, np.int64)
        u_s = np.zeros(ns, np.int64)
        f_s = np.zeros(ns, np.int64)
        tot = np.zeros(ns, np.int64)
        count = np.zeros(ns, np.int64)
        nxt = first[g]
        over = False
        bad[g] = -1
        for t in range(lo[g], hi[g]):
            s = seat[t]
            if over or s != nxt:
                bad[g] = t
                break
            nr = n_rolls[t]
            ok = True
            for j in range(nr):
                r = roll_id[t, j]
                if j > 0 and not _within(keep_rank[t, j - 1], r):
                    ok = False  # the roll does not show the dice kept
                if j < nr - 1 and not _within(keep_rank[t, j], r):
                    ok = False  # a keep not among the dice showing
            b, m, f = box[t], m_s[s], f_s[s]
            if not ok or (m >> b) & 1:
                bad[g] = t
                break
            bonus = roll_box_scores(rp, T, m, f, roll_id[t, nr - 1], scores)
            if scores[b] < 0:  # not allowed by the joker rule
                bad[g] = t
                break
            pts, nu, nf = apply_box(u_s[s], f, b, scores[b])
            mask[t], up[t], fifty[t], total[t] = m, u_s[s], f, tot[s]
            points[t] = pts + bonus
            m_s[s], u_s[s], f_s[s] = m | (1 << b), nu, nf
            tot[s] += pts + bonus
            count[s] += 1
            nxt = s + 1 if s + 1 < ns else 0
            if count[s] == N_BOXES:
                over = True
                for q in range(ns):
                    if count[q] != N_BOXES:
                        over = False
        finished[g] = over
        totals[seat_off[g]:seat_off[g] + ns] = tot


def replay_games(params, cols: dict, lo, hi, n_seats, first):
    """Replay games ``g`` of turns ``lo[g]:hi[g]`` of ``cols`` (from :func:`scan_lines`)
    with ``n_seats[g]`` seats starting at ``first[g]``, under the rule set whose kernel
    parameters are ``params``. Adds the columns ``mask``, ``up``, ``fifty``, ``total``
    (the seat's card before each turn) and ``points`` (what the turn scored) for those
    turns, and returns per game (the first turn it refuses or -1, finished, the seats'
    totals from ``seat_off`` on)."""
    n = cols["seat"].size
    for k in ("mask", "up", "fifty", "total", "points"):
        cols.setdefault(k, np.zeros(n, np.int64))
    n_seats = np.asarray(n_seats, np.int64)
    seat_off = np.concatenate(([0], np.cumsum(n_seats))).astype(np.int64)
    totals = np.zeros(seat_off[-1], np.int64)
    finished = np.zeros(n_seats.size, np.bool_)
    bad = np.empty(n_seats.size, np.int64)
    _replay(params, TABLES, np.asarray(lo, np.int64), np.asarray(hi, np.int64), n_seats,
            np.asarray(first, np.int64), cols["seat"], cols["n_rolls"], cols["roll_id"],
            cols["keep_rank"], cols["box"], cols["mask"], cols["up"], cols["fifty"],
            cols["total"], cols["points"], seat_off, totals, finished, bad)
    return bad, finished, totals, seat_off
