"""Exact head to head under the farkle penalty: two fixed policies' win and tie
probabilities when the third lost turn in a row costs points.

The penalty adds each player's lost turns in a row to the game's state and lets totals
fall below zero (down to the solvers' floor, :meth:`FarkleRules.penalty_floor`; a penalty
that would go lower stops there, as in :mod:`dicelab.farkle.penalty_game`). Each policy
is read, as the simulation kernel plays it, at every state (my count, the other's, my
total, the other's): its turn slices (:mod:`dicelab.farkle.head_to_head`) and their
exact turn results. With both turns fixed the game is linear:

* a bank moves to the other player's turn at a larger sum of the totals;
* a lost turn passes the turn at the same totals with the loser's count one higher;
  within the pair of states ``{A at (a, b), B at (b, a)}`` the counts only grow, so the
  18 states of a pair are evaluated in decreasing order of the counts' sum, each once;
* the third lost turn lowers the sum by the penalty: that state is read as it stands.

A sweep visits the sums from the largest down and is
repeated until no value moves by more than ``config.PENALTY_SWEEP_TOL``
(Gauss-Seidel). The values start at 0; a sweep's change contracts by the chance that
play passes through a penalty, and the reported ``tolerance`` is the last change times
``1 + rho / (1 - rho)`` (``rho`` the last ratio of successive changes, at most 0.99, as in
:mod:`dicelab.farkle.penalty_game`): an estimate, checked in the tests against a plain
value iteration.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab import config
from dicelab.errors import UserError
from dicelab.farkle.head_to_head import Side, bank_sums
from dicelab.farkle.penalty_game import _contraction, _lost_turn
from dicelab.farkle.rules import FIRST_TO_BANK, PENALTY_STREAK, POINT_UNIT, FarkleRules

K = PENALTY_STREAK


@njit(inline="always")
def _state(me, other, s, r, x, y, u_t, ftb, pen, my_w, my_t, ot_w, ot_t):
    """Evaluate the mover (side ``me``, count ``s``, index ``x``) against ``other`` (count
    ``r``, index ``y``) from the other's values; write it, return the change."""
    sl = me.normal[s, r, x, y]
    win, tie = bank_sums(me.dist[sl], x, y, u_t, ftb, ot_w[r, 0], ot_t[r, 0],
                         other.catch_win[r], other.catch_tie[r])
    _, s2, x2 = _lost_turn(s, r, x, pen)
    p = me.bust[sl]
    win += p * (1.0 - ot_w[r, s2, y, x2] - ot_t[r, s2, y, x2])
    tie += p * ot_t[r, s2, y, x2]
    moved = max(abs(win - my_w[s, r, x, y]), abs(tie - my_t[s, r, x, y]))
    my_w[s, r, x, y] = win
    my_t[s, r, x, y] = tie
    return moved


@njit(cache=True)
def _sweep(u_t, ftb, pen, side_a, side_b, a_win, a_tie, b_win, b_tie):
    """One sweep: the pairs with ``a + b == diag`` (indices) for ``diag`` from the largest
    down (on one thread: a diagonal's work is too small to share; 0.3 s a sweep at
    10,000): A to move at (a, b) and B to move at (b, a), at
    every pair of counts, in decreasing order of their sum. Returns the largest change."""
    worst = 0.0
    for diag in range(2 * u_t - 2, -1, -1):
        lo = max(0, diag - (u_t - 1))
        hi = min(diag, u_t - 1)
        for q in range(hi - lo + 1):
            a = lo + q
            b = diag - a
            for c in range(2 * K - 2, -1, -1):
                for s in range(max(0, c - K + 1), min(c, K - 1) + 1):
                    r = c - s
                    worst = max(worst, _state(side_a, side_b, s, r, a, b, u_t, ftb, pen,
                                              a_win, a_tie, b_win, b_tie))
                    worst = max(worst, _state(side_b, side_a, s, r, b, a, u_t, ftb, pen,
                                              b_win, b_tie, a_win, a_tie))
    return worst


def play_penalty(side_a: Side, side_b: Side, rules: FarkleRules, target: int,
                 tol: float | None = None, max_sweeps: int | None = None
                 ) -> dict[str, np.ndarray]:
    """The game's values at no lost turns and totals from 0 (``a_win[a, b]`` etc., as
    :func:`dicelab.farkle.head_to_head.play_sides`), and ``meta`` = (tolerance, sweeps,
    last change, states)."""
    tol = config.PENALTY_SWEEP_TOL if tol is None else tol
    max_sweeps = config.PENALTY_MAX_SWEEPS if max_sweeps is None else max_sweeps
    t = target // POINT_UNIT
    floor = rules.penalty_floor()
    u_t = t + floor
    pen = rules.farkle_penalty // POINT_UNIT
    ftb = rules.ending_code == FIRST_TO_BANK
    vals = [np.zeros((K, K, u_t, u_t)) for _ in range(4)]
    changes: list[float] = []
    while not changes or changes[-1] > tol:
        if len(changes) >= max_sweeps:
            raise UserError(f"the exact evaluation under the farkle penalty did not settle "
                            f"in {max_sweeps} sweeps (last change {changes[-1]:.1e})")
        changes.append(_sweep(u_t, ftb, pen, side_a, side_b, *vals))
    worst, rho = changes[-1], _contraction(changes)
    bound = worst * rho / (1.0 - rho)
    out = {k: np.ascontiguousarray(v[0, 0, floor:, floor:])
           for k, v in zip(("a_win", "a_tie", "b_win", "b_tie"), vals, strict=True)}
    out["meta"] = np.array([bound + worst, float(len(changes)), worst, 2.0 * vals[0].size])
    return out


__all__ = ["play_penalty"]
