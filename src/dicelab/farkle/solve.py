"""Two-player Farkle solved exactly (layer 2): ``optimal-win``, best responses, exact pairs.

All three are the game sweep of :mod:`dicelab.farkle.engine.game` with different seats:

* :func:`solve_optimal_win`: seat A optimal, seat B = seat A (self-play);
* :func:`solve_best_response`: seat A optimal, seat B a fixed policy
  (``optimal-win:vs=POLICY``);
* :func:`exact_pair`: both seats fixed policies (exact head to head).

Where no rule lowers a total the sweep is exact in one pass; under a penalty for lost
turns in a row it is iterated: policy iteration for an optimal seat, plain sweeps for two
fixed ones (see the engine's docstring). The game (RULES.md §2): players alternate turns;
reaching the target by banking triggers the last round (the other player plays one more
turn and must beat the leader), or under ``first-to-bank`` wins at once; equal final
totals tie; a player maximises P(win) + P(tie)/2.

Error bound (``tolerance``), exact sweep: an error ``E`` in the states already solved moves
a unit by at most ``E`` (banks weigh ``1 - B``, the unit's own lost-turn cycle ``B <
1``); a turn-points cap adds at most its catch-up value; a unit solved inside both
stability intervals is exact up to float rounding (``ROUNDING`` per sum of the totals;
the fallback fixed-point steps, never needed in practice, add their last step /
(1 - B)). Iterated sweeps: after the last improvement sweep, whose largest change is
``d``, the solution is the last policy's own value; the policy-iteration bound ``2 d rho /
(1 - rho)`` (``rho``: the observed contraction of the evaluation sweeps), plus the last
evaluation's change and the largest gap between a turn DP and the evaluation of its
ending (rounding), is reported: an estimate from the observed contraction, not a proof;
the tests compare with a plain value iteration. Where six dice roll on past the caps, a
climb past the rows held (chance at most ``CLIMB_ERR``) and leads past the catch-up
tables are added.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from dicelab import cache, config
from dicelab.digest import text_digest
from dicelab.errors import UserError
from dicelab.farkle import fixed
from dicelab.farkle.engine import game, turn
from dicelab.farkle.engine.model import CLIMB_ERR, NO_BANK_UNITS, Model, model
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    HOT_DICE,
    POINT_UNIT,
    FarkleRules,
    check_lost_turns,
    check_points,
    check_target,
    solver_floor,
)
from dicelab.farkle.solitaire import check_turn_rows, roll_values, turn_table
from dicelab.outcomes import Outcome
from dicelab.resources import check_memory

#: Version of the cached solves' arrays.
FORMAT_VERSION = 5
#: Policy evaluation stops when no value moves by more than this share of the sweep
#: tolerance.
EVAL_MARGIN = 1e-2
#: ... or, before another improvement sweep, by this share of the square of the last
#: improvement's change (modified policy iteration), if that is more.
EVAL_SHARE = 1e-3
#: Fixed-point steps of the penalty's start (:func:`~.engine.game.unit_start`).
START_STEPS = 4
#: An improvement sweep solves a kept turn's values first (its choices only where the new
#: turn is better: a DP a quarter faster, and a second where it was not) once the last
#: sweep followed fewer than this share of the turns forwards. The first sweep follows
#: them all (no turn is kept yet), the second 37-76% and the third at most 1.2% (facebook
#: at 2,000 to 10,000, with must-roll, against threshold-300; zilch), so every sweep but
#: the second gains by it (0.77 + 0.01 DPs a state instead of 1).
VALUES_FIRST = 0.9
_LAST_ROUND_CLAMP = 1e-6  # catch-up chance beyond the policy table's largest deficit
_MAX_LAST_ROUND = 20_000  # units of 50: a table whose turns run on longer is refused


# ---------------------------------------------------------------------------------
# The optimal last turn


class LastRound(NamedTuple):
    """The last round of one solve, by the lead ``x`` (units) the last turn must beat:
    ``value[x, n]``, the value at a decision point needing ``x`` more with ``n`` dice
    (``x = 0``: level with the lead); ``level_bank[n]``, whether it banks there (a tie);
    ``catch``/``catch_win``/``catch_tie[x]``, the value / P(win) / P(tie) of a whole turn
    against a lead of ``x``; ``reach[p, n]`` (rows below the minimum to bank, where a turn
    must roll), the chance to reach it from ``p`` with ``n`` dice, what a last turn
    against a lead below the minimum plays for; ``d_eps``, the first lead whose catch-up
    value is at most the cap tolerance (and at least the minimum to bank), so every
    turn's cap lies below ``U + d_eps``. Under ``first-to-bank`` there is no last round:
    all 0."""

    value: np.ndarray
    level_bank: np.ndarray
    catch: np.ndarray
    catch_win: np.ndarray
    catch_tie: np.ndarray
    reach: np.ndarray
    d_eps: int


def last_turn(m: Model, lead: int, rows: int, floor: np.ndarray | None = None
              ) -> game.Scratch:
    """The optimal last turn that must beat a lead of ``lead`` units, over ``rows`` rows of
    turn points: a bank worth 1 above the lead, 1/2 level with it and 0 below, from
    ``floor`` (default the rules' bank floor) and banking from past the lead on; six dice
    that may not bank roll on and win with ``m.ahead6``."""
    floor = m.bank_floor if floor is None else floor
    check_turn_rows(m, rows, "the last turn")
    i = np.arange(rows)
    return turn_table(m, np.where(i > lead, 1.0, np.where(i == lead, 0.5, 0.0)),
                      max(lead + 1, int(floor[1])), floor=floor)[1]


def last_round(rules: FarkleRules, u: int, eps: float) -> LastRound:
    """The last round of a solve over ``u`` indices with cap tolerance ``eps``, over
    enough leads ``x_max`` that the catch-up value falls to ``eps`` well inside them.

    One turn DP whose row ``i`` needs ``x = x_max - 1 - i`` more: a bank ahead worth 1
    (six dice that may not bank roll on and win with ``m.ahead6``), level worth 1/2,
    behind 0; P(win) and P(tie) of its decisions from the same table. Any winning or tying
    bank is allowed (its turn points exceed a lead at or above the minimum to bank ``f``),
    six dice excepted where they may not bank. Against a lead below ``f`` any allowed bank
    wins, so the turn plays to reach ``f`` (no tie): ``reach``, the last turn against a lead
    of ``f - 1``."""
    m = model(rules)
    f = int(m.bank_floor[1])
    reach = last_turn(m, f - 1, f + m.max_points).v.reshape(-1, 7)[:f].copy()
    need_floor = np.zeros(7, dtype=np.int64)
    need_floor[HOT_DICE] = NO_BANK_UNITS if m.bank_floor[HOT_DICE] >= NO_BANK_UNITS else 0

    def attempt(x_max: int) -> LastRound | None:
        s, sw, st = np.zeros(x_max), np.zeros(x_max), np.zeros(x_max)
        if m.first_to_bank:  # no last round: banking the target wins
            return LastRound(np.zeros((x_max, 7)), np.zeros(7, dtype=bool), s, sw, st, reach, f)
        rows = x_max + m.max_points
        i = np.arange(rows)
        w = last_turn(m, x_max - 1, rows, need_floor)
        win, tie = np.zeros(rows * 7), np.zeros(rows * 7)
        for out, bank, edge in ((win, i >= x_max, m.ahead6), (tie, i == x_max - 1, 0.0)):
            turn.turn_eval(m, w.bk, w.choice, bank.astype(np.float64), np.full(rows, edge),
                           0.0, rows, out)
        for x in range(x_max):
            row = x_max - 1 - x
            s[x] = roll_values(m, row, 0.0, w)[HOT_DICE]
            sw[x], st[x] = (turn.follow(m, row, HOT_DICE, 0.0, t, w.choice) for t in (win, tie))
        if f > 1:
            # a lead d below the minimum to bank f: any allowed bank (>= f > d) wins, so the
            # turn plays to reach f (no tie). From d >= f on every bank that wins or ties is
            # allowed, and the need-based tables are exact as they are.
            s[:f], sw[:f], st[:f] = reach[0, HOT_DICE], reach[0, HOT_DICE], 0.0
        below = np.nonzero(s <= eps)[0]
        # every turn DP may look up to 2 U + max points past the eps point
        if not (below.size and below[0] + 2 * u + 2 * m.max_points + 2 < x_max):
            return None
        by_need = w.v.reshape(rows, 7)[x_max - 1::-1].copy()  # rows x_max - 1 .. 0
        return LastRound(by_need, w.bk.reshape(rows, 7)[x_max - 1] != 0, s, sw, st, reach,
                         max(int(below[0]), f))

    return _widening(m, u, 0, attempt, "this scoring table lets a turn go on almost forever "
                     "(the chance to score 1,000,000 points in one turn is above the "
                     "tolerance); optimal-win needs a table where turns end")


def _widening(m: Model, u: int, least: int, attempt, refusal: str):
    """``attempt(leads)`` over more and more last-round leads, from ``2 u + 8 max points
    + 64`` (or ``least``) doubling, until it gives an answer (not None); ``refusal``
    past :data:`_MAX_LAST_ROUND` more."""
    base = 2 * u + 8 * m.max_points + 64
    x_max = max(base, least)
    while (out := attempt(x_max)) is None:
        if x_max > base + _MAX_LAST_ROUND:
            raise UserError(refusal)
        x_max *= 2
    return out


# ---------------------------------------------------------------------------------
# Seats


def _cap(value: np.ndarray) -> np.ndarray:
    """The largest value at each lead or any larger one (along the last axis)."""
    return np.ascontiguousarray(np.maximum.accumulate(value[..., ::-1], axis=-1)[..., ::-1])


def _values(m: Model, u: int, start: float | np.ndarray = 0.0) -> tuple[np.ndarray, ...]:
    shape = (m.streak, m.streak, u, u)
    return np.full(shape, start, dtype=np.float64), np.zeros(shape), np.zeros(shape)


def _own(a: np.ndarray, dtype=np.float64) -> np.ndarray:
    """``a`` as the kernels take a seat's arrays: C-ordered and writable (a read-only
    array, such as a broadcast of one lead's row, is another type: a compile of its own)."""
    return np.require(a, dtype=dtype, requirements=["C", "W"])


def optimal_seat(m: Model, u: int, last: LastRound, start=0.5) -> game.Seat:
    """Seat A optimal: its values, and its optimal last turn at every count and total."""
    shape = (m.streak, u, last.catch.size)
    catch = [_own(np.broadcast_to(a, shape)) for a in (last.catch, last.catch_win,
                                                         last.catch_tie)]
    none = np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1, 1, 1), dtype=np.int64)
    return game.Seat(*_values(m, u, start), *catch, _cap(catch[0]), *none)


def fixed_seat(m: Model, u: int, side: fixed.Side, start=0.0) -> game.Seat:
    """A fixed seat: its values, its last turns and its turns' endings."""
    c_val = _own(side.catch_win + 0.5 * side.catch_tie)
    return game.Seat(*_values(m, u, start), c_val, _own(side.catch_win), _own(side.catch_tie),
                     _cap(c_val), _own(side.bust), _own(side.dist), _own(side.normal, np.int64))


# ---------------------------------------------------------------------------------
# The sweeps


class Sweeps(NamedTuple):
    """What a solve reports besides the values: the error bound, turn DPs, improvement
    sweeps (0: one exact sweep), turn-DP states of the last improvement sweep."""

    bound: float
    turn_dps: int
    sweeps: int
    states: int


def _game(m: Model, u: int, tol: float, d_eps: int, self_play: bool, a_optimal: bool
          ) -> game.Game:
    return game.Game(u, tol, self_play, a_optimal,
                     u + d_eps + m.six_rows + m.max_points + 2,
                     config.OPTIMAL_WIN_NEWTON_STEPS, config.OPTIMAL_WIN_FIXED_POINT_STEPS,
                     False)


def _info(u: int) -> game.Info:
    return game.Info(*(np.zeros((u, u), dtype=t) for t in (float, float, np.int64, float,
                                                           np.int64, float, np.int64)))


def _contraction(changes: list[float]) -> float:
    """The observed contraction of the evaluation sweeps (their last ratio)."""
    if len(changes) < 2 or changes[-2] <= 0.0:
        return 0.0
    return min(changes[-1] / changes[-2], 0.99)


def _kept(m: Model, u: int, optimal: bool) -> game.Kept:
    """Room for seat A's optimal turns as they end: where it is optimal and the sweeps are
    iterated (else a placeholder)."""
    k = m.streak
    offs = np.zeros(u + 1, dtype=np.int64)
    if not optimal or k == 1:
        return game.Kept(np.zeros(1), offs[:2], np.zeros((1, 1, 1, 1, 4)))
    offs[1:] = np.cumsum(u - 1 - np.arange(u))
    ends = np.zeros((k, k, u, u, 4))
    ends[..., 3] = -1.0  # no turn kept yet
    return game.Kept(np.zeros(k * k * u * int(offs[-1])), offs, ends)


def _sweeps(m: Model, g: game.Game, a: game.Seat, b: game.Seat, what: str,
            progress: Callable[[float], None] | None) -> Sweeps:
    """Solve the seats' values: :func:`_exact_sweep` where no rule lowers a total, else
    :func:`_iterated_sweeps`. ``progress``: None reports nothing."""
    u = g.u
    progress = progress or (lambda _done: None)
    info = _info(u)
    kept = _kept(m, u, g.a_optimal)
    if m.streak == 1:
        return _exact_sweep(m, g, a, b, kept, info, progress)
    return _iterated_sweeps(m, g, a, b, kept, info, what, progress)


def _exact_sweep(m: Model, g: game.Game, a: game.Seat, b: game.Seat, kept: game.Kept,
                 info: game.Info, progress: Callable[[float], None]) -> Sweeps:
    """One pass over the sums of the totals from the largest down solves every unit, each
    with the P(win) and P(tie) split. Two fixed seats need no turn DP: one thread."""
    if not g.a_optimal:
        game.sweep_serial(m, g, a, b, kept, True, True, info)
        return Sweeps(float(info.fp_err.max()), 0, 0, 0)
    u, bound = g.u, 0.0
    for diag in range(2 * u - 2, -1, -1):
        game.sweep_diagonal(diag, m, g, a, b, kept, True, 0, True, info)
        x = np.arange(max(0, diag - (u - 1)), min(diag, u - 1) + 1)
        # + a unit solved by Newton steps, to float rounding
        bound = max(bound, float(info.cap_err[x, diag - x].max())) \
            + float(info.fp_err[x, diag - x].max()) + game.ROUNDING
        progress(1.0 - diag / max(2 * u - 2, 1))
    return Sweeps(bound, int(info.dps.sum()), 0, 0)


def _iterated_sweeps(m: Model, g: game.Game, a: game.Seat, b: game.Seat, kept: game.Kept,
                     info: game.Info, what: str, progress: Callable[[float], None]
                     ) -> Sweeps:
    """Policy iteration (an optimal seat A) or plain sweeps (two fixed seats), until no
    value moves by more than the sweep tolerance, the last sweeps carrying P(win) and
    P(tie). An improvement sweep solves every optimal turn (one sum's units in parallel);
    an evaluation sweep re-evaluates the kept turns (one thread)."""
    u, k = g.u, m.streak
    sweep_tol, max_sweeps = config.PENALTY_SWEEP_TOL, config.PENALTY_MAX_SWEEPS

    def evaluate(split: bool, margin: float) -> list[float]:
        changes: list[float] = []
        while len(changes) < max_sweeps:
            changes.append(float(game.sweep_serial(m, g, a, b, kept, False, split, info)))
            if changes[-1] <= sweep_tol * margin:
                return changes
        raise UserError(f"{what}: the values did not settle in {max_sweeps} sweeps (last "
                        f"change {changes[-1]:.2e})")

    improve: list[float] = []
    rho = 0.0
    mode = game.IMPROVE
    while g.a_optimal:
        for diag in range(2 * u - 2, -1, -1):
            game.sweep_diagonal(diag, m, g, a, b, kept, False, mode, False, info)
        improve.append(float(info.change.max()))
        # where fewer turns changed, the next sweep's will mostly stay
        if info.followed.sum() < VALUES_FIRST * k * k * u * u:
            mode = game.IMPROVE_VALUES_FIRST
        progress(0.95 * len(improve) / (len(improve) + 2))  # not known ahead
        if improve[-1] <= sweep_tol:
            break
        if len(improve) >= max_sweeps:
            raise UserError(f"{what}: the policy did not settle in {max_sweeps} sweeps (last "
                            f"change {improve[-1]:.2e})")
        # modified policy iteration: while the policy still changes much, the next
        # improvement moves the values by about the square of this one's change, and
        # evaluating much further than that is wasted
        changes = evaluate(False, max(EVAL_MARGIN, EVAL_SHARE * improve[-1] ** 2 / sweep_tol))
        rho = max(rho, _contraction(changes))
    # the last policy's own values, with the outcome split (no ties under first-to-bank:
    # P(win) is the value)
    final = evaluate(not m.first_to_bank, EVAL_MARGIN if g.a_optimal else 1.0)
    if m.first_to_bank:
        for seat in (a, b):
            seat.w[:] = seat.v
            seat.t[:] = 0.0
    rho = max(rho, _contraction(final))
    progress(1.0)
    if g.a_optimal:
        bound = (2.0 * improve[-1] + final[-1]) * rho / (1.0 - rho) + float(info.gap.max())
    else:
        bound = final[-1] * rho / (1.0 - rho) + final[-1]
    if g.a_optimal and m.six_rows:  # A's turns climb past their rows, read catches at edges
        bound += (CLIMB_ERR + float(b.c_cap[..., -1].max())) / (1.0 - rho)
    return Sweeps(bound, len(improve) * k * k * u * u, len(improve), int(info.states.sum()))


# ---------------------------------------------------------------------------------
# The solved game


def at_zero(x: np.ndarray, floor: int) -> np.ndarray:
    """A (K, K, U, U) state array at no lost turns, totals from 0 (``floor`` units above
    index 0): (t, t)."""
    return x[0, 0, floor:, floor:]


def start_outcome(win: np.ndarray, tie: np.ndarray, floor: int) -> Outcome:
    """The outcome of the player to move at 0 : 0, no lost turns."""
    return Outcome(float(win[0, 0, floor, floor]), float(tie[0, 0, floor, floor]))


@dataclass(frozen=True)
class OptimalWinSolution:
    """The solved two-player game: values of every state and the optimal policy, of
    self-play ``optimal-win`` or of a best response (``opponent``: the fixed policy it
    answers).

    States are (my lost turns in a row, the other's, my total index, the other's), each
    total indexed from ``floor_points`` below zero (without a penalty for lost turns in a
    row: one count, no floor). ``streak_values``/``streak_win``/``streak_tie`` (K, K, U,
    U): this policy's P(win) + P(tie)/2, P(win), P(tie) as the player to move;
    ``values``/``win_probability``/``tie_probability`` the same at no lost turns and
    totals from 0, (t, t) (``values[a, b]``: my total ``a * 50``, the other's ``b * 50``);
    ``opponent_*``: the opponent's as the player to move (self-play: the same);
    ``last_round``: the last round's tables (:class:`LastRound`), ``last_round_values``
    their catch-up values.

    What the solve reports: ``target`` (points), ``tolerance`` (bound on the value error),
    ``cap_tolerance`` (the ``tol`` asked for), ``states`` (turn-DP states), ``solve_s``
    (the original solve, also when loaded from the cache), ``elapsed_s`` (this call),
    ``memory_bytes`` (its arrays), ``turn_dps``, ``sweeps`` (policy-improvement sweeps; 0:
    one exact sweep), ``table_rows`` (rows P of :meth:`policy_table`). Read from the
    arrays and the rules: ``first_outcome`` and ``second_outcome`` (:class:`~dicelab.
    outcomes.Outcome`: P(win), P(tie), P(loss), score), ``fair_head_start``,
    ``floor_points``.

    Example::

        sol = solve_optimal_win(load_rules("default"), 10_000)
        sol.first_outcome.win, sol.win_value(9000, 8500), sol.bank_decisions(0, 0)[6]  # 300 points
    """

    target: int
    farkle_rules: FarkleRules = field(repr=False)
    tolerance: float
    cap_tolerance: float
    states: int
    solve_s: float
    elapsed_s: float
    from_cache: bool
    memory_bytes: int
    turn_dps: int
    sweeps: int
    table_rows: int
    streak_values: np.ndarray = field(repr=False)
    streak_win: np.ndarray = field(repr=False)
    streak_tie: np.ndarray = field(repr=False)
    last_round: LastRound = field(repr=False)
    opponent_streak_values: np.ndarray = field(repr=False)
    opponent_streak_win: np.ndarray = field(repr=False)
    opponent_streak_tie: np.ndarray = field(repr=False)
    opponent: str | None = None
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def policy(self) -> str:
        """The policy's name: ``optimal-win`` or ``optimal-win:vs=<opponent>``."""
        return "optimal-win" if self.opponent is None else f"optimal-win:vs={self.opponent}"

    #: (t, t): P(win) + P(tie)/2 of the player to move at totals ``(a * 50, b * 50)``, no
    #: lost turns; P(win), P(tie); the opponent's values
    values = property(lambda self: self._at_zero(self.streak_values))
    win_probability = property(lambda self: self._at_zero(self.streak_win))
    tie_probability = property(lambda self: self._at_zero(self.streak_tie))
    opponent_values = property(lambda self: self._at_zero(self.opponent_streak_values))

    def _at_zero(self, x: np.ndarray) -> np.ndarray:
        return at_zero(x, self.floor_points // POINT_UNIT)

    @property
    def floor_points(self) -> int:
        """How far below zero (points) a total may fall: index 0 of the state arrays, whose
        index ``U`` is the target (the floor is a setting of the solve, not a rule)."""
        return (self.streak_values.shape[2] - self.target // POINT_UNIT) * POINT_UNIT

    @property
    def last_round_values(self) -> np.ndarray:
        """``[d]``: P(win) + P(tie)/2 of a last turn that must beat a lead of ``d`` units."""
        return self.last_round.catch

    @property
    def first_outcome(self) -> Outcome:
        """This policy's outcome moving first, from 0 : 0."""
        return start_outcome(self.streak_win, self.streak_tie, self.floor_points // POINT_UNIT)

    @property
    def second_outcome(self) -> Outcome:
        """This policy's outcome when the other player moves first."""
        theirs = start_outcome(self.opponent_streak_win, self.opponent_streak_tie,
                               self.floor_points // POINT_UNIT)
        return Outcome(theirs.loss, theirs.tie)

    @property
    def fair_head_start(self) -> int:
        """Points for the second player that make the first player's value closest to 0.5
        (the smallest of equals)."""
        return POINT_UNIT * int(np.argmin(np.abs(self.values[0, :] - 0.5)))

    @property
    def fair_head_start_value(self) -> float:
        """The first player's value with the fair head start."""
        return self.win_value(0, self.fair_head_start)

    # -- queries ----------------------------------------------------------------------

    def _state(self, my_total: int, opp_total: int, my_farkles: int = 0,
               opp_farkles: int = 0) -> tuple[int, int, int, int]:
        """The index ``(s, r, x, y)`` of a state, checked."""
        hi = self.target - POINT_UNIT
        x = check_points("my total", my_total, -self.floor_points, hi)
        y = check_points("opponent total", opp_total, -self.floor_points, hi)
        s, r = check_lost_turns("my farkles", my_farkles), check_lost_turns(
            "opponent farkles", opp_farkles)
        # a count matters only under a penalty for lost turns in a row (else one count)
        k, f = self.streak_values.shape[0] - 1, self.floor_points
        return min(s, k), min(r, k), (x + f) // POINT_UNIT, (y + f) // POINT_UNIT

    def win_value(self, my_total: int, opp_total: int, my_farkles: int = 0,
                  opp_farkles: int = 0) -> float:
        """P(win) + 0.5 P(tie) for the player about to start a turn (totals in points,
        down to ``-floor_points``; lost turns in a row of each player)."""
        return float(self.streak_values[self._state(my_total, opp_total, my_farkles,
                                                    opp_farkles)])

    def outcome(self, my_total: int, opp_total: int, my_farkles: int = 0,
                opp_farkles: int = 0) -> Outcome:
        """The outcome (P(win), P(tie), P(loss)) for the player about to start a turn."""
        at = self._state(my_total, opp_total, my_farkles, opp_farkles)
        return Outcome(float(self.streak_win[at]), float(self.streak_tie[at]))

    def lost_turn_value(self, my_total: int, opp_total: int, my_farkles: int = 0,
                        opp_farkles: int = 0) -> float:
        """P(win) + 0.5 P(tie) left to the player who loses the turn started at this state:
        one minus the opponent's value to move, the run of lost turns and the penalty
        applied (:func:`~dicelab.farkle.engine.game.lost_value`)."""
        m, g, _a, b = self.engine()
        state = self._state(my_total, opp_total, my_farkles, opp_farkles)
        return float(game.lost_value(m, g, b, *state)[0])

    def last_round_value(self, deficit: int) -> float:
        """P(win) + 0.5 P(tie) of a last turn that must beat a lead of ``deficit`` points."""
        d = check_points("deficit", deficit) // POINT_UNIT
        return float(self.last_round_values[d]) if d < self.last_round_values.size else 0.0

    def engine(self) -> tuple[Model, game.Game, game.Seat, game.Seat]:
        """The game as the engine reads it: (the model, the game, this policy's seat, the
        other's)."""
        if "engine" not in self._memo:
            with solver_floor(self.floor_points):  # its own, whatever the setting says now
                opp = None if self.opponent is None else self._memo["opponent_policy"]()
                m, g, a, b = _setup(self.farkle_rules, self.target,
                                    self.streak_values.shape[2], self.cap_tolerance,
                                    self.last_round, opp, self.streak_values,
                                    self.opponent_streak_values)
            a.w[:], a.t[:] = self.streak_win, self.streak_tie
            b.w[:], b.t[:] = self.opponent_streak_win, self.opponent_streak_tie
            self._memo["engine"] = m, g, a, b
        return self._memo["engine"]

    def _turn(self, state: tuple[int, int, int, int], fill_to: int):
        """The optimal turn at ``state``: (its table, the lost turn's value)."""
        m, g, _a, b = self.engine()
        beta = game.lost_value(m, g, b, *state)[0]
        rows = max(g.rows, fill_to + m.six_rows + m.max_points)
        if rows > g.rows:  # a turn past the solved table's rows (advice at many points)
            check_turn_rows(m, rows, f"a turn of {self.policy}")
        sc = game.scratch(m, rows)
        game.optimal_turn(m, g, b, *state, beta, sc, fill_to, False)
        return sc, beta

    def bank_decisions(self, my_total: int, opp_total: int, my_farkles: int = 0,
                       opp_farkles: int = 0) -> np.ndarray:
        """uint8 (P, 7): 1 where the policy banks ``p * 50`` turn points with ``n`` dice left
        (n = 1..6; column 0 and row 0, the turn start, are 0). ``P = table_rows``."""
        n_p = self.table_rows
        sc, _ = self._turn(self._state(my_total, opp_total, my_farkles, opp_farkles), n_p)
        bank = sc.bk[:n_p * 7].reshape(n_p, 7).copy()
        bank[0] = 0
        return bank

    def turn_values(self, my_total: int, opp_total: int, turn_points: int,
                    my_farkles: int = 0, opp_farkles: int = 0) -> tuple[float, np.ndarray]:
        """(value of banking, value of rolling ``n`` dice for n = 1..6): this policy's
        P(win) + P(tie)/2 at a decision point of a turn started at (my, opp) totals, with
        ``turn_points`` (points) set aside so far (index 0 of the roll values unused)."""
        i = check_points("turn points", turn_points) // POINT_UNIT
        m = model(self.farkle_rules)
        state = self._state(my_total, opp_total, my_farkles, opp_farkles)
        sc, beta = self._turn(state, i + m.max_points + m.six_rows + 2)
        return float(sc.bankv[i]), roll_values(m, i, beta, sc)

    def policy_table(self, rows: int | None = None) -> PolicyTable:
        """The policy as a :class:`PolicyTable` for the simulation kernel.

        ``value/bank``: shape (K, K, U, U, P, 7) (``P = table_rows``), totals indexed from
        ``floor_points`` below zero; ``last_value/last_bank``: shape (D, P, 7) with ``D = P
        - max points of a roll`` (deficits from ``(D - 1) * 50`` on are played as ``(D - 1)
        * 50``; the chance to catch up from there is ``last_round_values[D - 1]``). Built on
        first call (one turn DP per state), kept in memory and, if the solve used the
        cache, cached on disk next to the solution (see ``policy_table_bytes``). With
        ``rows`` (at least ``table_rows``), a table of that many rows, built afresh: it plays
        the same, and fewer of its lookups are clamped.
        """
        if rows is not None:
            arrays = self._build_table(max(rows, self.table_rows))
        elif "table" in self._memo:
            return self._memo["table"]
        else:
            check_memory(f"the {self.policy} policy table to {self.target:,}",
                         self.policy_table_bytes * 1.5)
            key = self._memo.get("cache_key")
            build = functools.partial(self._build_table, self.table_rows)
            arrays = build() if key is None else \
                cache.cached(f"{key}-policy-table", FORMAT_VERSION, build,
                             self.farkle_rules.cache_about())[0]
        table = PolicyTable(self.policy, arrays["value"], arrays["bank"],
                            arrays.get("last_value"), arrays.get("last_bank"),
                            floor=self.floor_points // POINT_UNIT)
        if rows is None:
            self._memo["table"] = table
        return table

    def _build_table(self, n_p: int) -> dict[str, np.ndarray]:
        m, g, a, b = self.engine()
        top = np.zeros(a.v.shape, dtype=np.int64)
        while True:
            value = np.empty((*a.v.shape, n_p, 7), dtype=np.float32)
            bank = np.empty(value.shape, dtype=np.uint8)
            game.fill_table(m, g, a, b, value, bank, top)
            # the solve's last pass ran at a bust value one tiny step away from this one,
            # so a cap can in principle sit one row lower: then widen and refill
            if m.first_to_bank or top.max() + m.six_rows + m.max_points <= n_p:
                break
            n_p = int(top.max()) + m.six_rows + m.max_points
        last = {} if m.first_to_bank else self._last_round_table(n_p)  # else no last round
        return {"value": value, "bank": bank, **last}

    def _last_round_table(self, n_p: int) -> dict[str, np.ndarray]:
        """The last round's table (``last_value``/``last_bank``, (D, P, 7))."""
        m = model(self.farkle_rules)
        last = self.last_round
        d_rows = n_p - m.max_points
        x = np.arange(d_rows)[:, None] - np.arange(n_p)[None, :]  # need left, (D, P)
        lv_pad = np.ones((d_rows, n_p, 7))
        lb = np.zeros((d_rows, n_p, 7), dtype=np.uint8)
        inside = x >= 0
        lv_pad[inside] = last.value[x[inside]]
        lb[~inside] = 1
        if m.bank_floor[HOT_DICE] >= NO_BANK_UNITS:  # ahead with six dice: roll on
            lv_pad[:, :, HOT_DICE][~inside] = m.ahead6
            lb[:, :, HOT_DICE] = 0
        lb[(x == 0)[:, :, None] & last.level_bank] = 1  # level: bank for the tie
        f = last.reach.shape[0]
        if f > 1:  # a lead below the minimum to bank: play to reach it (see last_round())
            below = min(f, d_rows)
            lv_pad[:below, :f] = last.reach[None, :, :]
            lb[:below, :f] = 0
        lv_pad[:, :, 0] = 0.0
        lb[:, :, 0] = 0
        return {"last_value": lv_pad.astype(np.float32), "last_bank": lb}

    @property
    def policy_table_bytes(self) -> int:
        """Size of :meth:`policy_table` (value float32 + bank uint8, both tables)."""
        return _table_bytes(model(self.farkle_rules), self.streak_values.size, self.table_rows)

    def to_dict(self) -> dict:
        """JSON-able summary (all scalar fields)."""
        first, second = self.first_outcome, self.second_outcome
        out = {"game": "farkle", "policy": self.policy, "target": self.target,
               "rules": self.farkle_rules.name, "ending": self.farkle_rules.ending,
               "tolerance": self.tolerance, "states": self.states,
               "solve_s": self.solve_s, "elapsed_s": self.elapsed_s,
               "from_cache": self.from_cache,
               "memory_bytes": self.memory_bytes, "p_win": first.win, "p_tie": first.tie,
               "p_loss": first.loss, "second_p_win": second.win, "second_p_tie": second.tie,
               "second_p_loss": second.loss, "fair_head_start": self.fair_head_start,
               "fair_head_start_value": self.fair_head_start_value,
               "turn_dps": self.turn_dps, "table_rows": self.table_rows,
               "policy_table_bytes": self.policy_table_bytes}
        if self.streak_values.shape[0] > 1:
            out.update({"farkle_penalty": self.farkle_rules.farkle_penalty,
                        "floor_points": self.floor_points, "sweeps": self.sweeps})
        return out


def _table_rows(m: Model, u: int, top: int, last: LastRound, tol: float) -> int:
    """Rows P of the policy table over ``u`` indices whose highest cap is row ``top``. Past
    every rolling state plus one roll, and enough last-round deficits D = P - max points
    that a larger lead is caught up with a chance of at most 1e-6 (the table plays such a
    lead as D - 1). Under ``first-to-bank`` every row from ``U - x`` on reaches the target
    and wins, with the same value at every row, so rows up to the target's index ``U`` are
    enough: the kernel plays any more as row U."""
    if m.first_to_bank:
        return u + 1
    d_small = int(np.nonzero(last.catch <= max(tol, _LAST_ROUND_CLAMP))[0][0])
    return max(top + m.six_rows, d_small + 1) + m.max_points


def _table_bytes(m: Model, states: int, rows: int) -> int:
    """Bytes of a policy table (value float32 + bank uint8) of ``states`` turns of
    ``rows`` rows, and its last round's."""
    return (states + (0 if m.first_to_bank else rows - m.max_points)) * rows * 7 * 5


@functools.lru_cache(maxsize=8)
def least_policy_table_bytes(rules: FarkleRules, target: int,
                             tol: float = config.OPTIMAL_WIN_TOL) -> int:
    """A lower bound of :attr:`OptimalWinSolution.policy_table_bytes` (self-play or a best
    response), known before the solve: every state (both players' lost turns in a row,
    totals from the floor), and the rows of :func:`_table_rows` that do not depend on the
    solve (under ``first-to-bank`` all of them; else the last round's deficits and one
    roll). Held once per process, rule set and target."""
    target, tol = _check(rules, target, tol)
    m = model(rules)
    u = target // POINT_UNIT + m.floor
    states = m.streak * m.streak * u * u
    return _table_bytes(m, states, _table_rows(m, u, 0, last_round(rules, u, tol), tol))


# ---------------------------------------------------------------------------------
# optimal-win and best responses


def _check(rules: FarkleRules, target, tol) -> tuple[int, float]:
    target = check_target(target)
    if not (isinstance(tol, float | int) and 0.0 < tol < 1e-2):
        raise UserError(f"tolerance must be a number in (0, 0.01), not {tol!r}")
    return target, float(tol)


def check_solve_memory(rules: FarkleRules, target: int, what: str, response: bool
                       ) -> tuple[Model, int]:
    """Refuse a solve (``what``, a best response with ``response``) that the memory limit
    cannot hold, before anything is built; returns its model and its indices ``u``. Its
    memory: each seat's values (value, P(win), P(tie)), the kept turn endings of the
    optimal seat under a penalty, the per-unit diagnostics."""
    m = model(rules)
    u = target // POINT_UNIT + m.floor
    n = m.streak * m.streak * u * u
    seats = 2 if response else 1
    kept = n * (4 + (u - 1) // 2) if m.streak > 1 else 0
    check_memory(f"{what} to {target:,} ({m.streak ** 2} x {u:,} x {u:,} states)",
                 8 * (seats * 3 * n + kept + 6 * u * u))
    return m, u


def cache_key(rules: FarkleRules, target: int, tol: float, opponent: str | None = None
              ) -> str:
    """The table cache's key of a solve: self-play, or the best response to ``opponent``
    (the rules' content, the target, the tolerances, the floor)."""
    kind, more = ("farkle-optimal-win", {}) if opponent is None else \
        ("farkle-best-response", {"vs": text_digest(opponent)[:12]})
    return cache.entry_key(kind, rules.name, rules.digest(), t=target, tol=f"{tol:.3g}",
                           floor=rules.penalty_floor(),
                           sweep_tol=f"{config.PENALTY_SWEEP_TOL:.3g}", **more)


def _setup(rules: FarkleRules, target: int, u: int, tol: float, last: LastRound, opponent,
           mine=0.5, theirs=0.0, seat: tuple[game.Seat, int] | None = None
           ) -> tuple[Model, game.Game, game.Seat, game.Seat]:
    """The game of an optimal-win solve over ``u`` indices: seat A optimal (its values from
    ``mine``), seat B A itself (``opponent`` None) or the fixed ``opponent`` (from
    ``theirs``; ``seat``: its :func:`opponent_seat`, already built)."""
    m = model(rules)
    a = optimal_seat(m, u, last, mine)
    if opponent is None:
        b, d_eps = a, last.d_eps
    elif seat is None:
        b, d_eps = opponent_seat(rules, target, tol, opponent, theirs)
    else:
        b, d_eps = seat
        b.v[:] = theirs
    return m, _game(m, u, tol, max(d_eps, last.d_eps), opponent is None, True), a, b


def _solve(rules: FarkleRules, target, tol, name: str | None,
           opponent: Callable[[], fixed.FixedPolicy] | None, use_cache: bool,
           progress: Callable[[float], None] | None, by_content: bool = False
           ) -> OptimalWinSolution:
    """Self-play (``name`` None) or the best response to ``opponent()``: the game's seats
    swept, or loaded from the cache (``by_content``: a best response cached under a
    digest of the opponent's turns as the game reads them, not its name alone)."""
    target, tol = _check(rules, target, tol)
    what = "optimal-win" if name is None else "a best response"
    m, u = check_solve_memory(rules, target, what, name is not None)
    last = last_round(rules, u, tol)
    seat, tag = None, name
    if use_cache and by_content:
        seat = opponent_seat(rules, target, tol, opponent())
        b = seat[0]
        tag = f"{name}:{cache.digest(b.bust, b.dist, b.normal, b.c_win, b.c_tie)[:16]}"

    def build() -> dict[str, np.ndarray]:
        start = time.perf_counter()
        opp = None if name is None else opponent()
        mine, theirs = (0.5, 0.5) if m.streak == 1 else _start_values(rules, u, tol, opp)
        _, g, a, b = _setup(rules, target, u, tol, last, opp, mine, theirs, seat)
        if m.streak > 1 and b is a:
            a.w[:] = a.v
        s = _sweeps(m, g, a, b, f"{what} with the farkle penalty", progress)
        top = np.zeros(a.v.shape, dtype=np.int64)  # the cap rows of A's turns: no table rows
        no_rows = np.empty((*a.v.shape, 0, 7))
        game.fill_table(m, g, a, b, no_rows.astype(np.float32), no_rows.astype(np.uint8), top)
        out = {"v": a.v, "w": a.w, "t": a.t, "top": top, "meta": np.array(s, dtype=np.float64)}
        if b is not a:
            out.update({"ov": b.v, "ow": b.w, "ot": b.t})
        return {**out, "seconds": np.array([time.perf_counter() - start])}

    key = cache_key(rules, target, tol, tag) if use_cache else None
    version = str(FORMAT_VERSION) if name is None else f"{FORMAT_VERSION}:{name}"
    t0 = time.perf_counter()
    arrays, from_cache = cache.cached(key, version, build, rules.cache_about()) if key \
        else (build(), False)
    if progress is not None and from_cache:
        progress(1.0)
    bound, turn_dps, sweeps, states = (float(x) for x in arrays["meta"])
    if not sweeps:  # one exact sweep: every state's turn DP, and the last round's
        top = arrays["top"]
        n_last = 0 if m.first_to_bank else last.catch.size * 6
        states = float((np.maximum(top, 1).sum() - top.size) * 6 + top.size + n_last)
    theirs = {f"opponent_streak_{k}": arrays.get(f"o{x}", arrays[x])
              for k, x in (("values", "v"), ("win", "w"), ("tie", "t"))}
    sol = OptimalWinSolution(
        target=target, farkle_rules=rules, tolerance=bound, cap_tolerance=tol,
        states=int(states), solve_s=float(arrays["seconds"][0]),
        elapsed_s=time.perf_counter() - t0, from_cache=from_cache,
        memory_bytes=int(sum(a.nbytes for a in arrays.values())), turn_dps=int(turn_dps),
        sweeps=int(sweeps), table_rows=_table_rows(m, u, int(arrays["top"].max()), last, tol),
        streak_values=arrays["v"], streak_win=arrays["w"], streak_tie=arrays["t"],
        last_round=last, opponent=name, **theirs)
    sol._memo.update({"opponent_policy": opponent, "cache_key": key})
    return sol


def solve_optimal_win(rules: FarkleRules, target: int, *, tol: float = config.OPTIMAL_WIN_TOL,
                      use_cache: bool = True,
                      progress: Callable[[float], None] | None = None) -> OptimalWinSolution:
    """Solve two-player Farkle for ``P(win) + 0.5 P(tie)`` under ``rules`` and ``target``
    (self-play ``optimal-win``).

    ``target``: positive multiple of 50 (points). ``tol``: the turn-points cap (banking
    from there on costs at most ``tol``); the achieved error bound is
    ``solution.tolerance``. The solution is cached on disk (key: the rules' content
    digest, target, tolerance, format version); a corrupt or stale entry is rebuilt.
    ``progress(fraction_done)`` is called as the solve goes.

    >>> from dicelab.farkle.rules import PRESETS
    >>> sol = solve_optimal_win(PRESETS["default"], 1000)
    >>> round(sol.first_outcome.score, 4), sol.fair_head_start
    (0.5767, 300)
    """
    return _solve(rules, target, tol, None, None, use_cache, progress)


def _start_values(rules: FarkleRules, u: int, tol: float, opponent=None
                  ) -> tuple[np.ndarray | float, np.ndarray | float]:
    """A start for the penalty's sweeps (A's values, B's): the same game without the
    penalty, solved roughly (:func:`~.engine.game.unit_start`) over the whole index
    range (index ``i`` of a game to ``u`` is total ``i - floor`` of the game to ``t``:
    only the distances between the totals and to the target matter), for every pair of
    counts; against a fixed ``opponent`` its best response there, when the opponent plays
    the same without the penalty (a threshold or ``ai``, whose turns read no run of lost
    turns: 4 improvement sweeps instead of 6 under ``facebook`` against
    ``threshold-300``), else one half."""
    if opponent is not None and not opponent.same_without_penalty:
        return 0.5, 0.5
    free = dataclasses.replace(rules, farkle_penalty=0)
    m, g, a, b = _setup(free, u * POINT_UNIT, u, tol, last_round(free, u, tol), opponent)
    g = g._replace(start=True, fixed_point=START_STEPS)
    kept, info = _kept(m, u, False), _info(u)
    for diag in range(2 * u - 2, -1, -1):
        game.sweep_diagonal(diag, m, g, a, b, kept, True, 0, False, info)
    return a.v[0, 0], b.v[0, 0]


def opponent_seat(rules: FarkleRules, target: int, tol: float, opponent, start=0.0
                  ) -> tuple[game.Seat, int]:
    """The fixed opponent's seat (its values from ``start``), over enough last-round leads
    that its catch-up value falls to ``tol`` inside them at every count and total; and the
    first lead from which it does (a best response's caps lie below it)."""
    m = model(rules)
    u = target // POINT_UNIT + m.floor

    def attempt(x_max: int) -> tuple[game.Seat, int] | None:
        seat = fixed_seat(m, u, fixed.side_of(opponent, rules, target, x_max), start)
        if m.first_to_bank:
            return seat, int(m.bank_floor[1])
        below = seat.c_cap <= tol
        return (seat, int(np.argmax(below, axis=-1).max())) if below[..., -1].all() else None

    return _widening(m, u, fixed.lead_rows([opponent], rules, target), attempt,
                     "the opponent's last turn goes on almost forever; its best response "
                     "cannot be solved")


def solve_best_response(rules: FarkleRules, target: int, name: str,
                        opponent: Callable[[], fixed.FixedPolicy], *,
                        tol: float = config.OPTIMAL_WIN_TOL, use_cache: bool = True,
                        by_content: bool = False,
                        progress: Callable[[float], None] | None = None
                        ) -> OptimalWinSolution:
    """The policy of maximum ``P(win) + 0.5 P(tie)`` against the fixed policy ``name``
    (``optimal-win:vs=NAME``); ``opponent()`` gives it as the engine reads it (a
    :class:`~dicelab.farkle.fixed.FixedPolicy`), called only when it is needed
    (:func:`dicelab.farkle.exact.solve_best_response` takes any policy by name).

    The solution's values are this policy's, as the player to move; ``opponent_values``
    the opponent's; ``first_outcome`` from 0 : 0 moving first, ``second_outcome``
    moving second. Exact up to ``tolerance``, like :func:`solve_optimal_win`; cached on
    disk when ``use_cache``, under the opponent's name, or with ``by_content`` under its
    name and a digest of its turns' endings as the game reads them (a user's policy or a
    table: code that may change under the same name).
    """
    return _solve(rules, target, tol, name, opponent, use_cache, progress, by_content)


# ---------------------------------------------------------------------------------
# Exact pairs


def pair_outcomes(side_a: fixed.Side, side_b: fixed.Side, rules: FarkleRules, target: int
                  ) -> tuple[Outcome, Outcome, float]:
    """Two fixed seats played exactly: (A's outcome moving first, A's outcome moving
    second, the error bound)."""
    m = model(rules)
    u = target // POINT_UNIT + m.floor
    a, b = fixed_seat(m, u, side_a), fixed_seat(m, u, side_b)
    g = _game(m, u, 0.0, 0, False, False)
    s = _sweeps(m, g, a, b, "the exact evaluation under the farkle penalty", None)
    b_first = start_outcome(b.w, b.t, m.floor)
    return start_outcome(a.w, a.t, m.floor), Outcome(b_first.loss, b_first.tie), s.bound


__all__ = ["FORMAT_VERSION", "LastRound", "OptimalWinSolution", "at_zero", "cache_key",
           "check_solve_memory", "fixed_seat", "last_round", "last_turn",
           "least_policy_table_bytes", "opponent_seat", "optimal_seat", "pair_outcomes",
           "solve_best_response", "solve_optimal_win", "start_outcome"]
