"""Best responses under the farkle penalty: ``optimal-win:vs=P`` when the third lost turn
in a row costs points.

The states are those of :mod:`dicelab.farkle.penalty_game` (my lost turns in a row, the
other's, my total, the other's; totals from the solvers' floor below zero) for two
movers: me, playing my best turn against the current values, and the fixed opponent,
playing its turn slices (:mod:`dicelab.farkle.head_to_head`), whose exact turn results
make its states linear in mine.

* **Order.** A lost turn of mine at ``(x, y)`` passes to the opponent at ``(y, x)`` with my
  count one higher, and one of its passes back with its count one higher; so within a
  pair of totals the count states are visited in decreasing order of the counts' sum,
  each once, mine and the opponent's at the same sum side by side (each reads only the
  sum above). A bank moves to a larger sum of the totals; the third lost turn to a lower
  one, read from the sweep before (Gauss-Seidel), as in the self-play solve.
* **My turn** is :func:`dicelab.farkle.penalty_game._turn_back` with the opponent's
  values in place of the self-play ones (a bank at ``m`` is worth ``1 - ov[its count, 0,
  y, m]``, a lost turn ``1 - ov[...]`` at the state it passes to) and the opponent's
  catch-up tables for a bank past the target (under ``last-round``, by its lost turns in
  a row: its last turn may depend on them).
* **Policy iteration**, as in the self-play solve: an improvement sweep solves my turn at
  every state of mine and keeps how it ends; evaluation sweeps re-evaluate both fixed
  turns (a dot product per state) until no value moves by more than a hundredth of
  ``config.PENALTY_SWEEP_TOL``; the solve stops when an improvement sweep moves no value
  by more than ``config.PENALTY_SWEEP_TOL``. Values start at one half. The error
  estimate is the self-play solve's (:func:`penalty_game.solve_penalty_arrays`), with
  its must-roll term (my turn's guess rows past the cap, and leads read at the edge of
  the opponent's catch-up tables).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit, prange, uint64

from dicelab import config
from dicelab.farkle.head_to_head import Side, bank_sums
from dicelab.farkle.penalty_game import (
    K,
    _catch_at,
    _contraction,
    _lost_turn,
    _scratch,
    _turn_back,
    _turn_ends,
    evaluate_policy,
    improve_policy,
    must_roll_error,
    stacked,
)
from dicelab.farkle.rules import FIRST_TO_BANK, POINT_UNIT, FarkleRules, SetAsides
from dicelab.farkle.two_player import Catch, _turn

#: Version of the cached solve's arrays.
FORMAT_VERSION = 1


@njit(parallel=True, cache=True)
def _respond_kernel(diag, full, split, turn, rolls, catches, side, my_catch, ftb, pen,
                    values, dist, ends, offs, rows_max, change, states, gap):
    """One Gauss-Seidel pass over the pairs with ``a + b == diag`` (in parallel).

    ``values`` = (mv, ov, mw, mt, ow, ot): my value, the opponent's, and with ``split``
    both players' P(win) and P(tie), each (K, K, T, T) indexed [mover's count, other's
    count, mover's index, other's index]. ``catches``: the opponent's last turns, one per
    its lost-turn count (:func:`dicelab.farkle.penalty_game.stacked`); ``my_catch``:
    mine. ``dist``/``ends``/``full``/``states``/``gap`` as in
    :func:`dicelab.farkle.penalty_game._sweep_kernel`."""
    mv, ov, mw, mt, ow, ot = values
    t = turn.t
    s_tot = offs[t]
    a_lo = (diag + 1) // 2
    a_hi = min(diag, t - 1)
    size = rows_max if full else 1
    n_groups = rolls.class_start[7] - rolls.class_start[1]
    no_tie = np.zeros((t, t))  # bank_sums on values alone: no tie term
    no_catch_tie = np.zeros_like(my_catch.tie)
    for q in prange(a_hi - a_lo + 1):
        a = a_lo + q
        b = diag - a
        scratch = _scratch(size, n_groups)
        moved = 0.0
        n_states = 0
        worst = 0.0
        for k in range(2 * (K - 1), -1, -1):  # the counts' sum, highest first
            for i in range(max(0, k - (K - 1)), min(K - 1, k) + 1):
                j = k - i
                for side_ in range(2):
                    if side_ == 0:
                        x = a
                        y = b
                    else:
                        if a == b:
                            break
                        x = b
                        y = a
                    # me to move at (x, y), my count i, the opponent's j
                    c, bx, by = _lost_turn(i, j, x, pen)
                    beta = 1.0 - ov[c, bx, y, by]
                    base = ((i * K + j) * t + y) * s_tot + offs[x]
                    row = dist[base:base + t - 1 - x]
                    e = ends[i, j, x, y]
                    val = 0.0
                    if full:
                        catch = _catch_at(catches, j)
                        val, top = _turn_back(x, y, beta, turn, rolls, ov[j, 0], catch,
                                              scratch)
                        _turn_ends(x, y, top, turn, rolls, catch, scratch, row, e)
                        n_states += (top - 1) * 6 + 1
                    acc = e[0] + e[3] * beta
                    obank = ov[j, 0, y]
                    ox = uint64(x + 1)
                    for jj in range(uint64(row.size)):
                        acc += row[jj] * (1.0 - obank[ox + jj])
                    if full:
                        worst = max(worst, abs(acc - val))
                    moved = max(moved, abs(acc - mv[i, j, x, y]))
                    mv[i, j, x, y] = acc
                    # the opponent to move at (y, x), its count i, mine j
                    sl = side.normal[i, j, y, x]
                    p = side.bust[sl]
                    c2, bx2, by2 = _lost_turn(i, j, y, pen)
                    cv = bank_sums(side.dist[sl], y, x, t, ftb, mv[j, 0], no_tie,
                                   my_catch.value, no_catch_tie)[0]
                    o = cv + p * (1.0 - mv[c2, bx2, x, by2])
                    moved = max(moved, abs(o - ov[i, j, y, x]))
                    ov[i, j, y, x] = o
                    if not split:
                        continue
                    bt = ot[c, bx, y, by]
                    w = e[1] + e[3] * (1.0 - ow[c, bx, y, by] - bt)
                    tt = e[2] + e[3] * bt
                    obw = ow[j, 0, y]
                    obt = ot[j, 0, y]
                    for jj in range(uint64(row.size)):
                        w += row[jj] * (1.0 - obw[ox + jj] - obt[ox + jj])
                        tt += row[jj] * obt[ox + jj]
                    moved = max(moved, abs(w - mw[i, j, x, y]), abs(tt - mt[i, j, x, y]))
                    mw[i, j, x, y] = w
                    mt[i, j, x, y] = tt
                    cw, ct = bank_sums(side.dist[sl], y, x, t, ftb, mw[j, 0], mt[j, 0],
                                       my_catch.win, my_catch.tie)
                    lt = mt[c2, bx2, x, by2]
                    w = cw + p * (1.0 - mw[c2, bx2, x, by2] - lt)
                    tt = ct + p * lt
                    moved = max(moved, abs(w - ow[i, j, y, x]), abs(tt - ot[i, j, y, x]))
                    ow[i, j, y, x] = w
                    ot[i, j, y, x] = tt
        change[a, b] = moved
        if full:
            states[a, b] = n_states
            gap[a, b] = worst


def respond_bytes(big_t: int) -> int:
    """Memory of a best-response solve over ``big_t`` indices: both players' values
    (value, P(win), P(tie)), my turns' endings and the work arrays."""
    n = K * K * big_t * big_t
    return 8 * (n * (6 + 4) + n * (big_t - 1) // 2 + 4 * big_t * big_t)


def solve_response_arrays(sa: SetAsides, rules: FarkleRules, t: int, tol: float, side: Side,
                          catches: tuple[Catch, ...], my_catch: Catch, rows_max: int,
                          progress: Callable[[float], None] | None = None,
                          sweep_tol: float | None = None,
                          max_sweeps: int | None = None) -> dict[str, np.ndarray]:
    """The best response to the opponent whose turns are ``side`` (its slices at every
    state, :func:`dicelab.farkle.head_to_head.grid_of`) and whose last turns are
    ``catches`` (one per lost-turn count), to ``t`` units.

    Returns ``m_val``, ``m_win``, ``m_tie`` (mine, as the player to move) and ``o_val``,
    ``o_win``, ``o_tie`` (the opponent's), each (K, K, T, T) over indices ``u = units +
    floor``, ``sweeps`` (each improvement sweep's largest change) and ``meta`` = (error
    estimate, turn DPs, improvement sweeps, floor units, turn-DP states of one sweep,
    evaluation sweeps)."""
    pen = rules.farkle_penalty // POINT_UNIT
    floor = rules.penalty_floor()
    big_t = t + floor
    sweep_tol = config.PENALTY_SWEEP_TOL if sweep_tol is None else sweep_tol
    max_sweeps = config.PENALTY_MAX_SWEEPS if max_sweeps is None else max_sweeps
    turn = _turn(sa, big_t, tol, rules)
    shape = (K, K, big_t, big_t)
    mv, ov = np.full(shape, 0.5), np.full(shape, 0.5)
    mw, mt, ow, ot = (np.zeros(shape) for _ in range(4))
    offs = np.zeros(big_t + 1, dtype=np.int64)
    offs[1:] = np.cumsum(big_t - 1 - np.arange(big_t))
    dist = np.zeros(K * K * big_t * int(offs[-1]))
    ends = np.zeros((*shape, 4))
    change = np.zeros((big_t, big_t))
    states = np.zeros((big_t, big_t), dtype=np.int64)
    gap = np.zeros((big_t, big_t))
    rolls = sa.arrays()
    ftb = rules.ending_code == FIRST_TO_BANK
    both = stacked(catches)

    def sweep(full: bool, split: bool = False) -> float:
        for diag in range(2 * big_t - 2, -1, -1):
            _respond_kernel(diag, full, split, turn, rolls, both, side, my_catch, ftb,
                            pen, (mv, ov, mw, mt, ow, ot), dist, ends, offs, rows_max,
                            change, states, gap)
        return float(change.max())

    what = "a best response with the farkle penalty"

    def evaluate(split: bool) -> list[float]:
        return evaluate_policy(sweep, split, sweep_tol, max_sweeps, what)

    improve, rho, n_eval = improve_policy(sweep, sweep_tol, max_sweeps, progress, what)
    if ftb:  # no ties: P(win) is the value
        final = evaluate(False)
        mw[:], ow[:] = mv, ov
    else:
        mw[:], ow[:] = mv, ov  # a start for the split evaluation
        final = evaluate(True)
    n_eval += len(final)
    rho = max(rho, _contraction(final))
    if progress is not None:
        progress(1.0)
    estimate = (2.0 * improve[-1] + final[-1]) * rho / (1.0 - rho) + float(gap.max())
    estimate += must_roll_error(turn, both.cap, rho)  # my turns' under must-roll
    meta = np.array([estimate, float(len(improve) * K * K * big_t * big_t),
                     float(len(improve)), float(floor), float(states.sum()), float(n_eval)])
    return {"m_val": mv, "m_win": mw, "m_tie": mt, "o_val": ov, "o_win": ow, "o_tie": ot,
            "sweeps": np.array(improve), "meta": meta}


__all__ = ["FORMAT_VERSION", "respond_bytes", "solve_response_arrays"]
