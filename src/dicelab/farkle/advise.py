"""Advice for a Farkle position: every legal set-aside of a roll, then bank or roll, each
with its exact value and its loss against the best (layer 2).

``advise([1, 1, 5, 2, 3, 4], turn_points=350)``: solitaire, the value is the expected
final turn score under ``max-ev`` play from there on. With both totals
(``me=4000, opp=6000``) the value is the exact P(win) + P(tie)/2 of two-player play
(``optimal-win`` from there on, under the game's ending rule); with ``opp`` at or above
the target (and ``last-round``), it is the last turn: the chance to beat ``opp``.

An option is a set of dice to set aside (every distinct legal one: each die in it part of
a combination formed within this roll) and what follows: bank, or roll the dice left (6
after hot dice). Options worth the same (up to a relative 1e-12) are ties and say so
(``tie_with_best``, loss 0); the values assume play by ``max-ev`` (solitaire) or
``optimal-win`` (two players) after this decision.

A roll that scores nothing leaves no choice: the turn is lost (with the points set aside
so far; under a farkle penalty it adds to the run of lost turns, the third in a row costs
the penalty). The advice then has no options, ``turn_lost`` and the value of the lost
turn (``lost_turn_value``): solitaire 0 (under the penalty its long-run cost, as max-ev
counts it), two players the P(win) + P(tie)/2 left with the opponent to move, the last
round 0. Every value is exact up to ``tolerance``, in the advice's unit: the solve's
error bound (``max-ev``'s ``value_error``, ``optimal-win``'s ``tolerance``; the last
turn: rounding only, plus the climb past the rows held where six dice roll on).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle import policy
from dicelab.farkle.engine.model import CLIMB_ERR, model
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    POINT_UNIT,
    FarkleRules,
    check_floor,
    check_points,
    check_target,
    dice_after,
    load_rules,
    lost_turn_runs,
    runs_title,
    solver_floor,
)
from dicelab.farkle.solitaire import max_ev_capped, roll_values
from dicelab.farkle.solve import last_turn, solve_optimal_win

#: Options whose values differ by at most this fraction of the larger are ties.
TIE = 1e-12


def tied(best: float, value: float) -> bool:
    """Whether ``value`` ties ``best``: equal up to :data:`TIE` relative to the larger of
    the two (relative, so a tiny chance to win never ties a certain loss).

    >>> tied(0.5, 0.5 - 1e-14), tied(2e-47, 7e-48), tied(0.0, 0.0)
    (True, False, True)
    """
    return best - value <= TIE * max(abs(best), abs(value))


@dataclass(frozen=True)
class FarkleOption:
    """Set aside ``keep`` (points ``points``), then ``action``: ``"bank"`` or ``"roll"``
    (``dice`` dice); ``value`` in the advice's ``unit``; ``loss`` against the best."""

    keep: tuple[int, ...]
    points: int
    action: str
    dice: int
    value: float
    loss: float
    tie_with_best: bool

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "keep": list(self.keep)}


@dataclass(frozen=True)
class FarkleAdvice:
    """Every option of one decision, best first."""

    roll: tuple[int, ...]
    turn_points: int
    me: int | None
    opp: int | None
    target: int
    rules: str
    ending: str
    mode: str  # "solitaire", "two-player" or "last-round"
    policy: str  # whose play from here on the values assume
    unit: str  # what the values are
    options: list[FarkleOption]
    ties: int  # how many options are worth the best (1: it stands alone), cut off or not
    note: str | None = None  # an input given that these rules do not use (say so)
    #: two players under a farkle penalty: how far below zero (points) totals may fall
    floor_points: int | None = None
    #: the turns each player has lost in a row (:func:`~dicelab.farkle.rules.lost_turn_runs`:
    #: 0 under rules without a farkle penalty; solitaire: the opponent's 0)
    my_farkles: int = 0
    opp_farkles: int = 0
    #: the title's words for them (:func:`~dicelab.farkle.rules.runs_title`)
    runs_words: str = ""
    #: every value is exact (a solve, not a simulation) up to ``tolerance``, in ``unit``
    exact: bool = True
    tolerance: float = 0.0
    #: the roll scores nothing: no options, the turn is lost; ``lost_turn_value`` (in
    #: ``unit``) is what the position is worth after it, ``penalty_points`` the points it
    #: takes off the total (the farkle penalty, at the third lost turn in a row; two
    #: players: down to the floor), ``my_farkles_after`` the run of lost turns it leaves
    #: (all three None when the roll scores)
    turn_lost: bool = False
    lost_turn_value: float | None = None
    penalty_points: int | None = None
    my_farkles_after: int | None = None

    def to_dict(self) -> dict[str, Any]:
        alone = self.mode == "solitaire"  # max-ev's turn: no target, no ending
        return {"game": "farkle", "roll": list(self.roll), "turn_points": self.turn_points,
                "me": self.me, "opp": self.opp, "my_farkles": self.my_farkles,
                "opp_farkles": self.opp_farkles, "target": None if alone else self.target,
                "rules": self.rules, "ending": None if alone else self.ending,
                "mode": self.mode, "policy": self.policy,
                "unit": self.unit, "exact": self.exact, "tolerance": self.tolerance,
                "floor_points": self.floor_points, "turn_lost": self.turn_lost,
                "lost_turn_value": self.lost_turn_value,
                "penalty_points": self.penalty_points,
                "my_farkles_after": self.my_farkles_after,
                "tied_with_best": self.ties, "options": [o.to_dict() for o in self.options]}

    def top(self, k: int) -> FarkleAdvice:
        """The same advice with only the ``k`` best options (``ties`` still counts all)."""
        return dataclasses.replace(self, options=self.options[:k])


def legal_setasides(rules: FarkleRules, roll: list[int]) -> list[tuple[tuple[int, ...], int]]:
    """Every distinct legal set-aside of ``roll`` (sorted dice) with its points, most
    points first.

    >>> from dicelab.farkle.rules import PRESETS
    >>> legal_setasides(PRESETS["default"], [1, 2, 3, 4, 6, 6])
    [((1,), 100)]
    """
    return [(o.keep, o.points) for o in policy.options(rules, tuple(roll))]


def advise(roll, *, turn_points: int = 0, me: int | None = None, opp: int | None = None,
           target: int | None = None, rules: str | FarkleRules | None = None,
           ending: str | None = None, my_farkles: int = 0, opp_farkles: int = 0,
           floor: int | None = None, progress: Callable[[float], None] | None = None
           ) -> FarkleAdvice:
    """Every option of the decision after ``roll`` (the dice just rolled) with
    ``turn_points`` already set aside this turn (see the module docstring).
    ``my_farkles`` / ``opp_farkles`` are the turns each player has lost in a row (0 to 2;
    solitaire: mine only). They count under a farkle penalty (and the totals may then be
    below zero); under rules without one they are accepted and change nothing, which
    :attr:`FarkleAdvice.note` says. ``floor``: under a farkle penalty, how far below
    zero (points) two players' totals may fall (:func:`~dicelab.farkle.rules.check_floor`;
    None: the default; in the last round, which no solve values, it only bounds them,
    which the note says). ``progress(fraction)``: through the ``optimal-win`` solve
    two-player advice needs the first time (then cached on disk).

    >>> a = advise([1, 5, 2, 3, 4, 6])   # a straight: all six, then roll six again
    >>> (a.options[0].keep, a.options[0].action, a.options[0].dice)
    ((1, 2, 3, 4, 5, 6), 'roll', 6)
    """
    faces = [int(f) for f in roll]
    if not 1 <= len(faces) <= dice.MAX_DICE or not all(1 <= f <= dice.FACES for f in faces):
        raise UserError(f"--roll: 1 to {dice.MAX_DICE} dice 1..{dice.FACES}, e.g. "
                        f"1,1,5,2,3,4; not {','.join(map(str, faces)) or 'nothing'}")
    table = load_rules(rules, ending)
    t = check_target(target)
    # a run given under rules without a penalty is a true fact of the position that no
    # rule of this table uses: the values are those of 0 lost turns in a row
    opp_given = opp_farkles
    my_farkles, opp_farkles, note = lost_turn_runs(table, my_farkles, opp_farkles,
                                                   "these values")
    turn_points = check_points("--turn-points", turn_points, 0)
    if turn_points == 0 and len(faces) != dice.MAX_DICE:
        raise UserError(f"--turn-points 0 is a turn's first roll, which is all "
                        f"{dice.MAX_DICE} dice, not {len(faces)}")
    if (me is None) != (opp is None):
        raise UserError("give both --me and --opp (two players), or neither (solitaire)")
    if me is None and opp_given:
        raise UserError("--opp-farkles needs --me and --opp (two players)")
    if me is None and target is not None:
        raise UserError("--target needs --me and --opp (two players): solitaire advice "
                        "follows max-ev, which plays to no target")
    if me is None and floor is not None:
        raise UserError("--floor needs --me and --opp (two players): solitaire advice "
                        "follows max-ev, which plays no totals")
    if me is None and ending is not None:
        raise UserError("--ending needs --me and --opp (two players): solitaire advice "
                        "follows max-ev, whose turn no ending rule changes")
    floor_given, floor = floor is not None, check_floor(table, floor)
    options = legal_setasides(table, faces)  # none: the roll scores nothing, the turn is lost
    n = len(faces)
    deepest = None
    # (points, run left) if the turn is lost; without a penalty the run is not a state
    penalty = table.after_lost_turn(my_farkles) if table.farkle_penalty else (0, 0)
    if me is None:
        solo = max_ev_capped(table)
        value = functools.partial(solo.turn_values, lost_in_a_row=my_farkles)
        mode, unit = "solitaire", "expected final turn score (points{})".format(
            "; a lost turn at its long-run cost" if table.farkle_penalty else "")
        tolerance = max(solo.solve_at(turn_points + pts).value_error
                        for _, pts in options) if options else solo.value_error
        lost = solo.lost_turn_value(my_farkles)
    else:
        with solver_floor(floor):  # under the penalty totals go below zero, to the floor
            low = -table.penalty_floor() * POINT_UNIT
            deepest = -low if table.farkle_penalty else None
            me, opp = check_points("--me", me, low), check_points("--opp", opp, low)
            if me >= t:
                raise UserError(f"--me {me}: a banked total at the target {t} has ended "
                                "the game or started its last round")
            last = opp >= t
            if last and table.ending_code == FIRST_TO_BANK:
                raise UserError(f"--opp {opp}: under first-to-bank the game ended when the "
                                "opponent reached the target")
            mode = "last-round" if last else "two-player"
            # (under a penalty: else the runs are noted above, a floor refused)
            unread = [what for what, given in (("turns lost in a row", my_farkles or opp_farkles),
                                               ("--floor", floor_given)) if given]
            if last and unread:
                verb = "does" if unread == ["--floor"] else "do"
                note = (f"in the last round {' and '.join(unread)} {verb} not change these "
                        "values: this turn decides the game" + (
                            " (the floor only bounds the totals)" if floor_given else ""))
            unit = "P(win) + P(tie)/2"
            if last:  # a lost last turn leaves the opponent ahead: the game is lost
                value, lost = _last_turn(table, me, opp), 0.0
                tolerance = CLIMB_ERR if model(table).six_rows else 0.0
            else:
                sol = optimal_win_solution(table, t, progress)
                value = functools.partial(sol.turn_values, me, opp, my_farkles=my_farkles,
                                          opp_farkles=opp_farkles)
                tolerance = sol.tolerance
                lost = None if options else sol.lost_turn_value(me, opp, my_farkles,
                                                                opp_farkles)
            # a penalty stops at the floor
            penalty = (min(penalty[0], me - low), penalty[1])
    common = {"note": note, "floor_points": deepest, "my_farkles": my_farkles,
              "opp_farkles": opp_farkles, "tolerance": float(tolerance),
              "runs_words": runs_title(table, my_farkles, None if me is None else opp_farkles)}
    policy_name = "max-ev" if me is None else "optimal-win"
    if not options:  # no choice: the turn is lost
        return FarkleAdvice(tuple(faces), turn_points, me, opp, t, table.name, table.ending,
                            mode, policy_name, unit, [], 0, turn_lost=True,
                            lost_turn_value=float(lost) + 0.0, penalty_points=penalty[0],
                            my_farkles_after=penalty[1], **common)
    rows = []
    for keep, pts in options:
        tp = turn_points + pts
        left = dice_after(n, len(keep))
        bank, roll_values = value(tp)
        if table.can_bank(tp, left):
            rows.append((keep, pts, "bank", 0, bank))
        rows.append((keep, pts, "roll", left, float(roll_values[left])))
    best = max(r[4] for r in rows)
    rows.sort(key=lambda r: (-r[4], -r[1], r[2] != "bank"))
    out = [FarkleOption(keep, pts, action, d, v, 0.0 if tied(best, v) else best - v,
                        tied(best, v)) for keep, pts, action, d, v in rows]
    return FarkleAdvice(tuple(faces), turn_points, me, opp, t, table.name, table.ending,
                        mode, policy_name, unit, out, sum(o.tie_with_best for o in out),
                        **common)


#: The optimal-win solutions held in this process, (rules, target, penalty floor) ->
#: solution, the most recently used last (at most two).
_HELD: dict[tuple[FarkleRules, int, int], Any] = {}


def held_solutions_clear() -> None:
    """Forget the optimal-win solutions held in this process."""
    _HELD.clear()


def optimal_win_solution(rules: FarkleRules, target: int,
                         progress: Callable[[float], None] | None = None):
    """:func:`dicelab.farkle.solve.solve_optimal_win` (disk-cached), held once per
    process, rule set, target and penalty floor (the two most recent);
    ``progress(fraction)`` through a solve."""
    key = (rules, target, rules.penalty_floor())
    sol = _HELD.pop(key, None)
    if sol is None:
        sol = solve_optimal_win(rules, target, progress=progress)
    _HELD[key] = sol
    while len(_HELD) > 2:
        _HELD.pop(next(iter(_HELD)))
    return sol


def _last_turn(rules: FarkleRules, me: int, opp: int):
    """The last turn: beat ``opp`` (:func:`dicelab.farkle.solve.last_turn`, over the turn
    points from this turn's start, so a minimum to bank is played as it is)."""
    m = model(rules)
    lead = (opp - me) // POINT_UNIT

    def value(tp: int) -> tuple[float, np.ndarray]:
        p = tp // POINT_UNIT
        w = last_turn(m, lead, max(lead + 1, int(m.bank_floor[1]), p + 1) + m.max_points)
        return (1.0 if p > lead else 0.5 if p == lead else 0.0), roll_values(m, p, 0.0, w)

    return value
