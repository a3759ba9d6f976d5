"""Two-player Farkle with the farkle penalty, solved: ``optimal-win`` when the third lost
turn in a row costs points (the ``facebook`` preset).

The penalty makes the game's state at a turn's start (my total, the other's total, my
lost turns in a row, the other's), and lets totals fall below zero. The solve follows
:mod:`dicelab.farkle.two_player` (one optimal turn DP per state, the same kernel, the same
bank values and caps) with three changes.

* **Totals below zero** are indexed from a floor: index ``u = total / 50 + floor`` with
  ``floor`` units (``config.PENALTY_FLOOR_POINTS``) below zero; a penalty that would go
  below the floor stops at it. A player that far below zero has lost three turns in a row
  at least ``floor / penalty`` times more often than banked, whose chance from ``0 : 0``
  is tiny; the tests show the value does not move when the floor is lowered.
* **Cycles.** A bank raises the sum of the totals by at least the minimum to bank; a lost
  turn passes the turn at the same totals with the loser's count one higher; the third
  one lowers the sum by the penalty and restarts the count. Within one pair of totals
  ``{(a, b), (b, a)}`` the lost turns form a chain of increasing counts (no cycle), so,
  given the states reached by a bank (larger sums) and by a penalty (smaller sums), each
  of the 18 states of a pair needs exactly one turn DP, in decreasing order of the two
  counts' sum. A sweep visits the pairs in decreasing order of the sum (one sum's pairs
  in parallel), each state reading the penalty's target from the sweep before
  (Gauss-Seidel).
* **Policy iteration.** Plain sweeps converge slowly (16 to reach 1e-11 at 10,000): an
  error travels one penalty per sweep. So a sweep also keeps how each state's optimal
  turn *ends* (the chance of banking at each total, and of losing the turn, found by
  following the turn's policy forward: :func:`_turn_ends`); with the turns fixed the
  game is linear, and evaluating it again is one dot product per state, a thousand
  times cheaper than the turn DPs. After each sweep the fixed policy is evaluated until
  no value moves by more than ``_EVAL_MARGIN * config.PENALTY_SWEEP_TOL``, and the next
  sweep improves it; the solve stops when a sweep moves no value by more than
  ``config.PENALTY_SWEEP_TOL``. The values start from the same game without the penalty
  (:func:`start_values`). At 10,000 under ``facebook`` this takes 4 sweeps.

Error: after the last sweep, whose largest change is ``d``, the solution is the last
policy's own value; the policy iteration bound ``2 d rho / (1 - rho)`` (``rho``: the
observed contraction of the evaluation sweeps), plus the last evaluation's change and the
largest difference between a turn DP and the evaluation of its ending (rounding), is
reported as the solution's ``tolerance``: an estimate from the observed contraction,
not a proof; the tests compare with a plain value iteration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from numba import njit, prange, uint64

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    HOT_DICE,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    SetAsides,
    set_asides,
)
from dicelab.farkle.two_player import Catch, _cap_row, _last_round, _solve_arrays, _turn

#: Version of the cached solve's arrays (its ``meta`` layout).
FORMAT_VERSION = 3
#: Lost turns in a row counted (0 .. PENALTY_STREAK - 1).
K = PENALTY_STREAK
#: Policy evaluation stops when no value moves by more than this share of the sweep
#: tolerance.
_EVAL_MARGIN = 1e-2


@njit(inline="always")
def _roll_choose(base, n, beta, rolls, oflat, v, choice, at):
    """Value of rolling ``n`` dice at the flat row offset ``base``: every roll's best
    set-aside (each distinct (points, dice left) of the roll), a bust worth ``beta``. The
    best option of group ``g`` is written to ``choice[at + g]`` (as its offset
    ``oflat``)."""
    goff, gprob, ooff = rolls.class_start, rolls.class_prob, rolls.option_start
    rv = rolls.bust[n] * beta
    ub = uint64(base)
    for g in range(uint64(goff[n]), uint64(goff[n + 1])):
        jb = uint64(ooff[g])
        best = v[ub + uint64(oflat[jb])]
        for j in range(jb + uint64(1), uint64(ooff[g + uint64(1)])):
            c = v[ub + uint64(oflat[j])]
            jb += (j - jb) * uint64(c > best)  # branch-free: a branch costs 2.5x
            best = max(best, c)
        choice[uint64(at) + g] = oflat[jb]
        rv += gprob[g] * best
    return rv


@njit(inline="always")
def _lost_turn(s, r, x, pen):
    """The state a lost turn of the mover at index ``x`` (counts ``s`` mine, ``r`` the
    other's) passes to, as (the other's count, my count, my index): my count one higher,
    or at the third the penalty (stopped at the floor) and my count back at 0."""
    if s < K - 1:
        return r, s + 1, x
    return r, 0, max(x - pen, 0)


@njit(inline="always")
def _rows_of(top, turn):
    """Rows a turn DP with cap row ``top`` computes (see :func:`_turn_rows`)."""
    return top + turn.hot_rows + turn.max_s


@njit(cache=True)
def _turn_back(a, b, beta, turn, rolls, bank, catch, scratch):
    """The optimal turn from ``(a, b)`` with bust value ``beta``: the turn DP of
    :func:`dicelab.farkle.two_player._turn_kernel` (same caps, same bank values, hot dice
    may-bank or must-roll), keeping in ``scratch`` the values ``v``, the bank decisions
    ``bk`` (rows from the cap ``top`` on bank, but six dice under must-roll) and the chosen
    set-asides ``choice``. ``bank[y, m]``: the other's value after a bank at ``m < t``.
    Returns (value, top)."""
    return _turn_rows(a, b, beta, turn, rolls, bank, catch, scratch, 0)


@njit(cache=True)
def _turn_rows(a, b, beta, turn, rolls, bank, catch, scratch, fill_to):
    """:func:`_turn_back` with rows filled up to ``fill_to`` at least (a policy table's).

    Rows are computed up to ``top + max_s`` (may-bank) or ``top + hot_rows + max_s``
    (must-roll, :func:`_rows_of`). Under must-roll, six dice past the cap roll on while a
    roll stays inside the rows; at the last ``max_s`` rows their value is the guess of
    ``_turn_kernel``: a bank with the chance ``hot_bank`` (a set-aside that leaves fewer
    dice), a lost turn with ``bust[6]``, the rest (hot dice again) counted as lost for the
    mover."""
    v, bk, choice, _reach = scratch
    t, max_s, oflat, hot_rows = turn.t, turn.max_s, turn.oflat, turn.hot_rows
    c_val = catch.value
    width = c_val.shape[1]
    n_groups = rolls.class_start[7] - rolls.class_start[1]
    top = _cap_row(a, b, beta, turn, rolls, catch.cap)[0]
    rows = max(_rows_of(top, turn), fill_to)
    for i in range(rows - 1, 0, -1):
        m = a + i
        bv = 1.0 - (bank[b, m] if m < t else c_val[b, min(m - b, width - 1)])
        base = i * 7
        at = i * n_groups - rolls.class_start[1]
        if i >= top:
            for n in range(1, 7):
                if hot_rows > 0 and n == HOT_DICE:
                    if i + max_s < rows:
                        v[base + n] = _roll_choose(base, n, beta, rolls, oflat, v, choice, at)
                    else:
                        v[base + n] = turn.hot_bank * bv + rolls.bust[HOT_DICE] * beta
                    bk[base + n] = 0
                    continue
                v[base + n] = bv
                bk[base + n] = 1
            continue
        for n in range(1, 7):
            rv = _roll_choose(base, n, beta, rolls, oflat, v, choice, at)
            rolls_on = i * POINT_UNIT < rolls.bank_floor[n] or rv > bv
            v[base + n] = rv if rolls_on else bv
            bk[base + n] = 0 if rolls_on else 1
    return _roll_choose(0, 6, beta, rolls, oflat, v, choice, -rolls.class_start[1]), top


@njit(cache=True)
def _turn_ends(a, b, top, turn, rolls, catch, scratch, row, ends):
    """How the turn :func:`_turn_back` chose ends, following it from the turn's start:
    ``row[m - a - 1]`` = P(bank at index ``m``) for ``a < m < t``; ``ends`` = (value,
    P(win), P(tie) of the banks at ``m >= t`` (the other's last turn; a win under
    ``first-to-bank``), P(bust)). Under must-roll, six dice at the last rows end as their
    guess (:func:`_turn_rows`): a bank there with the chance ``hot_bank``, a lost turn
    with ``bust[6]``, the rest lost for the mover (in none of these)."""
    _v, bk, choice, reach = scratch
    t, end = turn.t, _rows_of(top, turn)
    hot_rows, max_s, hot_bank = turn.hot_rows, turn.max_s, turn.hot_bank
    c_val, c_win, c_tie = catch.value, catch.win, catch.tie
    width = c_val.shape[1]
    goff, gprob = rolls.class_start, rolls.class_prob
    n_groups = goff[7] - goff[1]
    reach[:end * 7] = 0.0
    reach[6] = 1.0
    row[:] = 0.0
    ends[:] = 0.0
    for i in range(end):
        m = a + i
        at = i * n_groups - goff[1]
        for n in range(1, 7):
            r = reach[i * 7 + n]
            if r == 0.0:
                continue
            guess = hot_rows > 0 and n == HOT_DICE and i >= top and i + max_s >= end
            if guess:  # what a bank here is worth, with the chance hot_bank
                ends[3] += r * rolls.bust[HOT_DICE]
                r *= hot_bank
            if guess or (i > 0 and bk[i * 7 + n]):
                if m < t:
                    row[m - a - 1] += r
                else:
                    d = min(m - b, width - 1)
                    ends[0] += r * (1.0 - c_val[b, d])
                    ends[1] += r * (1.0 - c_win[b, d] - c_tie[b, d])
                    ends[2] += r * c_tie[b, d]
                continue
            ends[3] += r * rolls.bust[n]
            ui = uint64(i * 7)
            for g in range(uint64(goff[n]), uint64(goff[n + 1])):
                reach[ui + uint64(choice[uint64(at) + g])] += r * gprob[g]


@njit(cache=True)
def _scratch(rows, n_groups):
    """A turn's work rows: values, bank decisions, chosen set-asides, reach."""
    return (np.empty(rows * 7), np.empty(rows * 7, dtype=np.uint8),
            np.empty(rows * n_groups, dtype=np.int32), np.empty(rows * 7))


@njit(parallel=True, cache=True)
def _sweep_kernel(diag, full, split, turn, rolls, catch, pen, vv, vw, vt, dist, ends, offs,
                  rows_max, change, states, gap):
    """One Gauss-Seidel pass over the pairs with ``a + b == diag`` (in parallel).

    ``vv[s, r, x, y]``: value of the player to move at index ``x`` with ``s`` lost turns in
    a row, against ``y`` with ``r``; ``vw``/``vt`` P(win) / P(tie). Each state's turn is
    kept as how it ends (``dist``: P(bank at each total below the target), rows of length
    ``t - 1 - x`` at ``((s * K + r) * t + y) * offs[t] + offs[x]``; ``ends``: the rest,
    see :func:`_turn_ends`). ``full``: solve each state's optimal turn against the
    current values and keep its ending (policy improvement); else re-evaluate the kept
    turns (policy evaluation: a dot product per state). ``split``: also carry P(win) and
    P(tie). Writes the states' values, ``change[a, b]`` (the pair's largest change) and,
    with ``full``, ``states[a, b]`` (turn-DP states: decision points below the caps with
    1..6 dice, and the turn starts) and ``gap[a, b]`` (the largest difference between a
    turn DP's value and its ending's evaluation: rounding)."""
    t = turn.t
    s_tot = offs[t]
    a_lo = (diag + 1) // 2
    a_hi = min(diag, t - 1)
    size = rows_max if full else 1
    n_groups = rolls.class_start[7] - rolls.class_start[1]
    for q in prange(a_hi - a_lo + 1):
        a = a_lo + q
        b = diag - a
        scratch = _scratch(size, n_groups)
        moved = 0.0
        n_states = 0
        worst = 0.0
        for k in range(2 * (K - 1), -1, -1):  # the counts' sum, highest first
            for sm in range(max(0, k - (K - 1)), min(K - 1, k) + 1):
                so = k - sm
                for side in range(2):
                    if side == 0:
                        x = a
                        y = b
                    else:
                        if a == b:
                            break
                        x = b
                        y = a
                    c, bx, by = _lost_turn(sm, so, x, pen)
                    base = ((sm * K + so) * t + y) * s_tot + offs[x]
                    row = dist[base:base + t - 1 - x]
                    e = ends[sm, so, x, y]
                    val = 0.0
                    if full:  # a bank: the other moves with its count, mine is 0
                        val, top = _turn_back(x, y, 1.0 - vv[c, bx, y, by], turn, rolls,
                                              vv[so, 0], catch, scratch)
                        _turn_ends(x, y, top, turn, rolls, catch, scratch, row, e)
                        n_states += (top - 1) * 6 + 1
                    ov = vv[so, 0, y]
                    acc = e[0] + e[3] * (1.0 - vv[c, bx, y, by])
                    ox = uint64(x + 1)
                    for j in range(uint64(row.size)):
                        acc += row[j] * (1.0 - ov[ox + j])
                    if full:
                        worst = max(worst, abs(acc - val))
                    moved = max(moved, abs(acc - vv[sm, so, x, y]))
                    vv[sm, so, x, y] = acc
                    if not split:
                        continue
                    ow = vw[so, 0, y]
                    ot = vt[so, 0, y]
                    bt = vt[c, bx, y, by]
                    w = e[1] + e[3] * (1.0 - vw[c, bx, y, by] - bt)
                    tt = e[2] + e[3] * bt
                    for j in range(uint64(row.size)):
                        w += row[j] * (1.0 - ow[ox + j] - ot[ox + j])
                        tt += row[j] * ot[ox + j]
                    moved = max(moved, abs(w - vw[sm, so, x, y]), abs(tt - vt[sm, so, x, y]))
                    vw[sm, so, x, y] = w
                    vt[sm, so, x, y] = tt
        change[a, b] = moved
        if full:
            states[a, b] = n_states
            gap[a, b] = worst


def solve_bytes(big_t: int) -> int:
    """Memory of a solve over ``big_t`` indices: the values (value, P(win), P(tie)), each
    state's turn ending (banks below the target, and four numbers) and the work arrays."""
    n = K * K * big_t * big_t
    return 8 * (n * (3 + 4) + K * K * big_t * big_t * (big_t - 1) // 2 + 4 * big_t * big_t)


def start_values(rules: FarkleRules, big_t: int, tol: float) -> np.ndarray:
    """A start for the sweeps: the same game without the penalty, solved over the whole
    index range (index ``u`` of a game to ``big_t`` units is total ``u - floor`` of the
    game to ``t``), for every pair of counts."""
    free = dataclasses.replace(rules, farkle_penalty=0)
    sa = set_asides(free)
    return _solve_arrays(sa, free, big_t, tol, _last_round(sa, free, big_t, tol), None)["w_val"]


def _contraction(changes: list[float]) -> float:
    """The observed contraction of the evaluation sweeps (their last ratio)."""
    if len(changes) < 2 or changes[-2] <= 0.0:
        return 0.0
    return min(changes[-1] / changes[-2], 0.99)


def evaluate_policy(sweep: Callable[[bool, bool], float], split: bool, sweep_tol: float,
                    max_sweeps: int, what: str) -> list[float]:
    """Sweep the kept turns (``sweep(False, split)``) until the values settle (well below
    ``sweep_tol``); the changes of the sweeps."""
    changes: list[float] = []
    while len(changes) < max_sweeps:
        changes.append(sweep(False, split))
        if changes[-1] <= sweep_tol * _EVAL_MARGIN:
            return changes
    raise UserError(f"{what}: a policy's values did not settle in {max_sweeps} sweeps "
                    f"(last change {changes[-1]:.2e})")


def improve_policy(sweep: Callable[[bool, bool], float], sweep_tol: float, max_sweeps: int,
                   progress: Callable[[float], None] | None, what: str
                   ) -> tuple[list[float], float, int]:
    """Policy iteration: an improvement sweep (``sweep(True, False)``), then the kept turns
    evaluated, until an improvement sweep moves no value by more than ``sweep_tol``.
    Returns (each improvement sweep's change, the largest observed contraction, the
    evaluation sweeps run)."""
    improve: list[float] = []
    rho = 0.0
    n_eval = 0
    while True:
        improve.append(sweep(True, False))
        if progress is not None:
            n = len(improve)
            progress(0.95 * n / (n + 2))  # improvement sweeps: not known ahead
        if improve[-1] <= sweep_tol:
            return improve, rho, n_eval
        if len(improve) >= max_sweeps:
            raise UserError(f"{what}: the policy did not settle in {max_sweeps} sweeps (last "
                            f"change {improve[-1]:.2e})")
        changes = evaluate_policy(sweep, False, sweep_tol, max_sweeps, what)
        n_eval += len(changes)
        rho = max(rho, _contraction(changes))


def solve_penalty_arrays(sa: SetAsides, rules: FarkleRules, t: int, tol: float,
                         progress: Callable[[float], None] | None = None,
                         floor_points: int | None = None,
                         sweep_tol: float | None = None,
                         max_sweeps: int | None = None) -> dict[str, np.ndarray]:
    """Solve optimal self-play with the farkle penalty to ``t`` units.

    Returns ``v_val``, ``v_win``, ``v_tie`` (K, K, T, T) over indices ``u = units +
    floor`` (``T = t + floor``), ``sweeps`` (each improvement sweep's largest change) and
    ``meta`` = (error estimate, turn DPs, improvement sweeps, floor units, turn-DP states
    of one sweep, evaluation sweeps)."""
    pen = rules.farkle_penalty // POINT_UNIT
    floor = rules.penalty_floor(floor_points)
    big_t = t + floor
    sweep_tol = config.PENALTY_SWEEP_TOL if sweep_tol is None else sweep_tol
    max_sweeps = config.PENALTY_MAX_SWEEPS if max_sweeps is None else max_sweeps
    tables = _last_round(sa, rules, big_t, tol)  # its catch tables cover every index
    turn = _turn(sa, big_t, tol, rules)
    vv = np.empty((K, K, big_t, big_t))
    vv[:] = start_values(rules, big_t, tol)
    vw, vt = vv.copy(), np.zeros_like(vv)
    offs = np.zeros(big_t + 1, dtype=np.int64)
    offs[1:] = np.cumsum(big_t - 1 - np.arange(big_t))
    dist = np.zeros(K * K * big_t * int(offs[-1]))
    ends = np.zeros((K, K, big_t, big_t, 4))
    change = np.zeros((big_t, big_t))
    states = np.zeros((big_t, big_t), dtype=np.int64)
    gap = np.zeros((big_t, big_t))
    rows_max = big_t + tables.d_eps + turn.hot_rows + sa.max_points + 2
    rolls = sa.arrays()

    def sweep(full: bool, split: bool = False) -> float:
        for diag in range(2 * big_t - 2, -1, -1):
            _sweep_kernel(diag, full, split, turn, rolls, tables.catch, pen, vv, vw, vt,
                          dist, ends, offs, rows_max, change, states, gap)
        return float(change.max())

    what = "optimal-win with the farkle penalty"

    def evaluate(split: bool) -> list[float]:
        return evaluate_policy(sweep, split, sweep_tol, max_sweeps, what)

    improve, rho, n_eval = improve_policy(sweep, sweep_tol, max_sweeps, progress, what)
    # the last policy's own values, with the outcome split
    first_to_bank = rules.ending_code == FIRST_TO_BANK
    final = evaluate(not first_to_bank)
    n_eval += len(final)
    rho = max(rho, _contraction(final))
    if first_to_bank:  # no ties: P(win) is the value
        vw, vt = vv.copy(), np.zeros_like(vv)
    if progress is not None:
        progress(1.0)
    estimate = (2.0 * improve[-1] + final[-1]) * rho / (1.0 - rho) + float(gap.max())
    estimate += must_roll_error(turn, tables.catch.cap, rho)
    meta = np.array([estimate, float(len(improve) * K * K * big_t * big_t),
                     float(len(improve)), float(floor), float(states.sum()), float(n_eval)])
    return {"v_val": vv, "v_win": vw, "v_tie": vt, "sweeps": np.array(improve),
            "meta": meta}


def must_roll_error(turn, cap: np.ndarray, rho: float) -> float:
    """The error a penalty solve adds under must-roll (0 under may-bank): a turn climbs
    past its rows with a chance of at most ``hot_err`` (valued there by a guess in [0, 1])
    and reads leads past the catch tables at their edge (worth at most ``cap`` there), as
    in ``two_player._turn_kernel``; carried through the evaluation's contraction ``rho``."""
    if not turn.hot_rows:
        return 0.0
    return (turn.hot_err + float(cap[..., -1].max())) / (1.0 - rho)


@njit(inline="always")
def _catch_at(catches, r):
    """The :class:`~dicelab.farkle.two_player.Catch` of lost-turn count ``r`` from
    :func:`stacked` ones."""
    return Catch(catches.value[r], catches.win[r], catches.tie[r], catches.cap[r])


def stacked(catches: tuple[Catch, ...]) -> Catch:
    """One :class:`~dicelab.farkle.two_player.Catch` per lost-turn count as one whose
    arrays have the count first (what the kernels take)."""
    return Catch(*(np.ascontiguousarray(np.stack(parts)) for parts in zip(*catches,
                                                                           strict=True)))


@njit(parallel=True, cache=True)
def _tops_kernel(turn, rolls, catches, pen, ov, out):
    """``out[s, r, x, y]``: the cap row of every state's optimal turn against the other's
    values ``ov`` and last turns ``catches`` (one per its lost-turn count)."""
    t = turn.t
    for q in prange(K * K * t):
        s, r, x = q // (K * t), (q // t) % K, q % t
        for y in range(t):
            c, bx, by = _lost_turn(s, r, x, pen)
            out[s, r, x, y] = _cap_row(x, y, 1.0 - ov[c, bx, y, by], turn, rolls,
                                       catches.cap[r])[0]


@njit(parallel=True, cache=True)
def _fill_table_kernel(turn, rolls, catches, pen, ov, rows_max, value_out, bank_out):
    """The policy table (:mod:`dicelab.farkle.policy_table`, the streak form): for every
    state ``(s, r, x, y)``, its optimal turn's value and bank decision at turn points
    ``p`` and dice ``n`` (row 0 and column 0 unused), against the other's values ``ov``
    and last turns ``catches`` (self-play: its own)."""
    t = turn.t
    n_p = value_out.shape[4]
    n_groups = rolls.class_start[7] - rolls.class_start[1]
    for q in prange(K * K * t):
        s, r, x = q // (K * t), (q // t) % K, q % t
        scratch = _scratch(max(rows_max, n_p), n_groups)
        v, bk = scratch[0], scratch[1]
        catch = _catch_at(catches, r)
        c_val = catch.value
        width = c_val.shape[1]
        for y in range(t):
            c, bx, by = _lost_turn(s, r, x, pen)
            bank = ov[r, 0]
            top = _turn_rows(x, y, 1.0 - ov[c, bx, y, by], turn, rolls, bank, catch,
                             scratch, n_p)[1]
            out = value_out[s, r, x, y]
            bo = bank_out[s, r, x, y]
            out[0, :] = 0.0
            bo[0, :] = 0
            for p in range(1, n_p):
                out[p, 0] = 0.0
                bo[p, 0] = 0
                if p < top:
                    for n in range(1, 7):
                        out[p, n] = v[p * 7 + n]
                        bo[p, n] = bk[p * 7 + n]
                    continue
                m = x + p
                bv = 1.0 - (bank[y, m] if m < t else c_val[y, min(m - y, width - 1)])
                for n in range(1, 7):
                    if turn.hot_rows > 0 and n == HOT_DICE:  # must-roll: six dice roll on
                        out[p, n] = v[p * 7 + n]
                        bo[p, n] = 0
                    else:
                        out[p, n] = bv
                        bo[p, n] = 1


def _against(sa: SetAsides, rules: FarkleRules, tol: float, vv: np.ndarray,
             other: np.ndarray | None, catches: tuple | None) -> tuple:
    """(the turn DP's tables, the other's values, its last turns by lost-turn count
    (:func:`stacked`), the rows a turn DP needs): the solved values' own under self-play
    (``other`` None)."""
    turn = _turn(sa, vv.shape[2], tol, rules)
    tables = _last_round(sa, rules, vv.shape[2], tol)
    d_eps = tables.d_eps
    if other is None:
        other, catches = vv, (tables.catch,) * K
    else:  # the first lead the opponent's last turns catch up with at most tol
        below = np.stack([c.cap for c in catches]) <= tol
        d_eps = max(d_eps, int(np.argmax(below, axis=-1).max()))
    rows_max = vv.shape[2] + d_eps + turn.hot_rows + sa.max_points + 2
    return turn, other, stacked(catches), rows_max


def cap_rows(sa: SetAsides, rules: FarkleRules, tol: float, vv: np.ndarray,
             other: np.ndarray | None = None, catches: tuple | None = None) -> np.ndarray:
    """The cap row of every state's optimal turn under the solved values ``vv`` (rows
    from it on bank); a best response's against the opponent's values ``other`` and last
    turns ``catches``."""
    turn, ov, catches, _ = _against(sa, rules, tol, vv, other, catches)
    tops = np.zeros(vv.shape, dtype=np.int64)
    _tops_kernel(turn, sa.arrays(), catches,
                 rules.farkle_penalty // POINT_UNIT, ov, tops)
    return tops


def table_arrays(sa: SetAsides, rules: FarkleRules, tol: float, vv: np.ndarray, n_p: int,
                 other: np.ndarray | None = None, catches: tuple | None = None
                 ) -> dict[str, np.ndarray]:
    """The policy table of the solved values ``vv`` (K, K, T, T) with ``n_p`` rows:
    ``value`` float32 and ``bank`` uint8 of shape (K, K, T, T, P, 7); ``other`` and
    ``catches`` as in :func:`cap_rows`."""
    turn, ov, catches, rows_max = _against(sa, rules, tol, vv, other, catches)
    value = np.empty((*vv.shape, n_p, 7), dtype=np.float32)
    bank = np.empty(value.shape, dtype=np.uint8)
    _fill_table_kernel(turn, sa.arrays(), catches, rules.farkle_penalty // POINT_UNIT, ov,
                       rows_max, value, bank)
    return {"value": value, "bank": bank}


def bank_decisions(sa: SetAsides, rules: FarkleRules, tol: float, vv: np.ndarray, s: int,
                   r: int, x: int, y: int, n_p: int, other: np.ndarray | None = None,
                   catches: tuple | None = None) -> np.ndarray:
    """uint8 (P, 7): 1 where the optimal turn of state ``(s, r, x, y)`` banks (rows from
    the cap on bank, but six dice under must-roll; row 0 and column 0 are 0); ``other``
    and ``catches`` as in :func:`cap_rows`."""
    turn, ov, catches, rows_max = _against(sa, rules, tol, vv, other, catches)
    rolls = sa.arrays()
    scratch = _scratch(max(rows_max, n_p), int(rolls.class_start[7] - rolls.class_start[1]))
    c, bx, by = _lost_turn(s, r, x, rules.farkle_penalty // POINT_UNIT)
    _turn_rows(x, y, 1.0 - ov[c, bx, y, by], turn, rolls, ov[r, 0], _catch_at(catches, r),
               scratch, n_p)
    bank = scratch[1][:n_p * 7].reshape(n_p, 7).copy()
    bank[0] = 0
    bank[:, 0] = 0
    return bank


@njit(cache=True)
def _roll_values_kernel(i, x, y, beta, top, turn, rolls, bank, catch, scratch, out):
    """``out[n]``: the value of rolling ``n`` dice with ``i`` units set aside, in the turn
    :func:`_turn_back` left in ``scratch`` (top ``top``): each roll's best set-aside, a
    bust worth ``beta``; a successor from the cap on banks (proven), but six dice under
    must-roll, which roll on (rows filled past ``i``: see :func:`turn_values`)."""
    v = scratch[0]
    t = turn.t
    must_roll = turn.hot_rows > 0
    c_val = catch.value
    width = c_val.shape[1]
    goff, gprob, ooff = rolls.class_start, rolls.class_prob, rolls.option_start
    for n in range(1, 7):
        acc = rolls.bust[n] * beta
        for g in range(goff[n], goff[n + 1]):
            best = -1.0
            for j in range(ooff[g], ooff[g + 1]):
                row = i + rolls.points[j]
                if row < top or (must_roll and rolls.dice[j] == HOT_DICE):
                    c = v[row * 7 + rolls.dice[j]]
                else:
                    m = x + row
                    c = 1.0 - (bank[y, m] if m < t else c_val[y, min(m - y, width - 1)])
                best = max(best, c)
            acc += gprob[g] * best
        out[n] = acc


def turn_values(sa: SetAsides, rules: FarkleRules, tol: float, vv: np.ndarray, s: int,
                r: int, x: int, y: int, i: int, other: np.ndarray | None = None,
                catches: tuple | None = None) -> tuple[float, np.ndarray]:
    """(value of banking, value of rolling ``n`` dice for n = 1..6) with ``i`` units set
    aside in the optimal turn of state ``(s, r, x, y)``; ``other`` and ``catches`` as in
    :func:`cap_rows`."""
    big_t = vv.shape[2]
    turn, ov, catches, rows_max = _against(sa, rules, tol, vv, other, catches)
    rolls = sa.arrays()
    fill_to = i + sa.max_points + turn.hot_rows + 2  # must-roll: six dice's rows past i
    scratch = _scratch(max(rows_max, fill_to),
                       int(rolls.class_start[7] - rolls.class_start[1]))
    c, bx, by = _lost_turn(s, r, x, rules.farkle_penalty // POINT_UNIT)
    beta = 1.0 - ov[c, bx, y, by]
    catch = Catch(*(a[r] for a in catches))
    top = _turn_rows(x, y, beta, turn, rolls, ov[r, 0], catch, scratch, fill_to)[1]
    roll = np.zeros(7)
    _roll_values_kernel(i, x, y, beta, top, turn, rolls, ov[r, 0], catch, scratch, roll)
    m = x + i
    bank = 1.0 - (ov[r, 0, y, m] if m < big_t else
                  catch.value[y, min(m - y, catch.value.shape[1] - 1)])
    return float(bank), roll
