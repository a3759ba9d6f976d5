"""dicelab's own Farkle policies (layer 2): every Farkle family of the registry as one
object, and :func:`as_policy`, the one way from any policy name or object to a policy.

**Families.** The registry (:mod:`dicelab.registry`) parses a name into a
:class:`~dicelab.registry.PolicySpec` (its family and parameters). Everything a tool
asks of a Farkle policy it asks the spec's :class:`Family` (:func:`family_of`): one
object per family in :data:`FAMILIES` (``threshold``, ``ai``, ``max-ev``, ``fastest``,
``optimal-win``), and :data:`USER` for a policy a user wrote. No other module branches
on a family's name. A family gives

* the policy itself (:meth:`Family.policy`): an object that the referee plays
  (``decide``), the simulation kernels play (``kernel_seat``: kernel codes or a
  :class:`~dicelab.farkle.policy_table.PolicyTable`) and the game engine reads as a fixed
  player (``slices``, ``normal_rows``, ``slice_extent``: :class:`dicelab.farkle.fixed.
  FixedPolicy`); an exact family solves (or loads) its table here;
* what it refuses before any work (:meth:`Family.check`: ``optimal-win`` away from two
  seats, a table larger than the memory), whether it is ``solved``, whether its name
  identifies it (``named``: cache keys), the threshold the lanes kernel plays;
* its tuning space and members (:meth:`Family.space`, :meth:`Family.member`);
* its bank picture (:meth:`Family.bank_table`) and its own exact analysis
  (:meth:`Family.solve`, ``dicelab solve farkle``).

**Policies.** Each plays as the simulation kernel plays the same name
(:mod:`dicelab.farkle.kernels`):

* :class:`ThresholdPolicy` (``threshold-T``): set aside all scoring dice
  (:func:`~dicelab.farkle.policy.all_scoring`), bank once the turn points reach ``T``;
* :class:`AiPolicy` (``ai``): all scoring dice, then the thresholds of
  :func:`dicelab.farkle.kernels.ai_thresholds` (the one place the ai rule is written);
* :class:`TablePolicy` (``max-ev``, ``fastest``, ``optimal-win``, best responses, any
  :class:`~dicelab.farkle.policy_table.PolicyTable`): the set-aside of the highest value
  (:func:`~dicelab.farkle.policy.by_value`), then the table's bank, with its last-round
  table or its last-round rule (``"chase"``, ``"rule-to-beat"``).

Every one banks only where the rules allow it.

>>> from dicelab.farkle.rules import PRESETS
>>> from dicelab.farkle.policy import State
>>> s = State((1, 5, 2, 3, 3, 4), 300, 0, (1200, 2000), (0, 0), False, 10_000,
...           PRESETS["default"])
>>> as_policy("threshold-400", PRESETS["default"], 10_000).decide(s)
Move(keep=(1, 5), bank=True)
>>> ai = as_policy("ai", PRESETS["default"], 10_000)
>>> ai.decide(s), ai.decide(s._replace(totals=(1200, 5000)))  # 3,800 behind: 600 to bank
(Move(keep=(1, 5), bank=True), Move(keep=(1, 5), bank=False))
>>> family_of(parse_policy("optimal-win")).solved, family_of(parse_policy("ai")).space()["base"]
(True, (100, 1000, 50))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dicelab import config, families
from dicelab.errors import UserError
from dicelab.farkle import fixed, solve
from dicelab.farkle import kernels as K
from dicelab.farkle.kernels import P_CHASE, ai_thresholds
from dicelab.farkle.policy import BankRule, Move, Policy, State, all_scoring, by_value
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    POINT_UNIT,
    FarkleRules,
    check_floor,
    check_target,
    runs_title,
    solver_floor,
)
from dicelab.farkle.solitaire import (
    check_bank_rows,
    check_fastest,
    fastest_solution,
    fastest_table,
    legal_bank,
    max_ev_table,
    solve_max_ev,
    threshold_bank,
    threshold_bank_table,
    threshold_solution,
)
from dicelab.registry import AI_DEFAULTS, PolicySpec, parse_policy
from dicelab.resources import check_memory
from dicelab.text import counted

#: The ai rule as plain Python: the kernel's own function, not a copy of it.
_ai_thresholds = ai_thresholds.py_func

Progress = Callable[[float], None] | None


class KernelCode(NamedTuple):
    """A seat the simulation kernels play by a rule of their own, not a table: its kind
    (``kernels.THRESHOLD``, ``kernels.AI``) and its row of ``Seats.params``."""

    kind: int
    params: np.ndarray


# -- the policies ------------------------------------------------------------------------


class ThresholdPolicy:
    """``threshold-T``: all scoring dice, bank from ``T`` turn points on."""

    #: it plays the same under rules without the farkle penalty (it reads no lost turns)
    same_without_penalty = True

    def __init__(self, threshold: int, name: str | None = None) -> None:
        self.threshold = int(threshold)
        self.name = name or f"threshold-{self.threshold}"

    def decide(self, state: State) -> Move:
        o = all_scoring(state)
        return Move(o.keep, state.turn_points + o.points >= self.threshold
                    and state.can_bank(o))

    def kernel_seat(self, rules: FarkleRules, target: int) -> KernelCode:
        params = np.zeros(K.N_PARAMS, dtype=np.int64)
        params[K.P_THRESHOLD] = self.threshold
        return KernelCode(K.THRESHOLD, params)

    def normal_rows(self, rules: FarkleRules | None = None, target: int | None = None) -> int:
        return fixed.rows_for(self.threshold)

    def slice_extent(self, grid: fixed.Grid) -> tuple[int, int]:
        return 1, self.normal_rows() + grid.d

    def slices(self, grid: fixed.Grid, rules: FarkleRules) -> fixed.Slices:
        thr = np.full(7, self.threshold, dtype=np.int64)
        bank = threshold_bank(thr, fixed.rows_for(int(thr.max())))
        return fixed.keep_all_slices([bank], np.zeros(grid.normal_shape, np.int64),
                                     np.zeros(grid.last_shape, np.int64))


def ai_params(spec: PolicySpec) -> np.ndarray:
    """An ``ai`` policy's parameters as the kernels read them (layout ``kernels.P_*``)."""
    return np.array([spec.params[k] for k in AI_DEFAULTS], dtype=np.int64)


class AiPolicy:
    """``ai`` with its parameters (``params``: one row of the kernel's ``Seats.params``,
    :func:`ai_params`)."""

    same_without_penalty = True

    def __init__(self, params, name: str = "ai") -> None:
        self.params = tuple(int(p) for p in params)
        self.name = name
        self._out = [0] * 7

    def decide(self, state: State) -> Move:
        o = all_scoring(state)
        me, best = state.my_total, state.opp_total
        floor = best - me + 1 if state.last_round and self.params[P_CHASE] else 0
        _ai_thresholds(self.params, max(best - me, 0), floor, self._out)
        tp = state.turn_points + o.points
        return Move(o.keep, tp >= self._out[o.dice_left] and state.can_bank(o))

    def kernel_seat(self, rules: FarkleRules, target: int) -> KernelCode:
        return KernelCode(K.AI, np.array(self.params, dtype=np.int64))

    def normal_rows(self, rules: FarkleRules | None = None, target: int | None = None) -> int:
        p = self.params
        return fixed.rows_for(p[K.P_BASE] + p[K.P_STEP] * p[K.P_MAX_STEPS])

    def slice_extent(self, grid: fixed.Grid) -> tuple[int, int]:
        return grid.d + 8, self.normal_rows() + grid.d

    def thresholds(self, deficit: int, floor: int = 0) -> np.ndarray:
        """Its bank thresholds by dice left (int64, 7) at a deficit (points) and a bank
        floor (the last round's total to beat)."""
        thr = np.zeros(7, dtype=np.int64)
        ai_thresholds(np.array(self.params, dtype=np.int64), deficit, floor, thr)
        return thr

    def slices(self, grid: fixed.Grid, rules: FarkleRules) -> fixed.Slices:
        """One slice per threshold level (deficit steps) and, with ``chase``, per
        last-round lead (the bank floor that beats the leader)."""
        keys: dict[tuple[int, ...], int] = {}
        tables: list[np.ndarray] = []

        def slice_of(deficit_units: int, floor: int) -> int:
            thr = self.thresholds(deficit_units * POINT_UNIT, floor)
            key = tuple(int(x) for x in thr[1:])
            if key not in keys:
                keys[key] = len(tables)
                tables.append(threshold_bank(thr, fixed.rows_for(int(thr[1:].max()))))
            return keys[key]

        tot = grid.totals
        d = np.maximum(tot[None, :] - tot[:, None], 0)  # opponent minus own
        levels = {int(x): slice_of(int(x), 0) for x in np.unique(d)}
        normal = np.vectorize(levels.get, otypes=[np.int64])(d)
        chase = self.params[P_CHASE] != 0
        lead = np.array([slice_of(k, k * POINT_UNIT + 1 if chase else 0)
                         for k in range(grid.d)], dtype=np.int64)
        return fixed.keep_all_slices(tables, np.broadcast_to(normal, grid.normal_shape),
                                     np.broadcast_to(lead, grid.last_shape))


class TablePolicy:
    """A :class:`~dicelab.farkle.policy_table.PolicyTable` played as the kernel plays it
    (the table's docstring)."""

    same_without_penalty = False

    def __init__(self, table: PolicyTable, name: str | None = None) -> None:
        self.table = table
        self.name = name or table.name

    def decide(self, state: State) -> Move:
        pt = self.table
        me, best = state.my_total, state.opp_total
        chase = state.last_round and pt.last_round != "rule"
        if state.last_round and pt.last_value is not None:
            d = min(max((best - me) // POINT_UNIT, 0), pt.last_value.shape[0] - 1)
            value, bank = pt.last_value[d], pt.last_bank[d]
        else:
            value, bank = pt.normal(state.my_lost, state.opp_lost, me, best)
        o = by_value(state, value)
        tp = state.turn_points + o.points
        banks = bool(bank[min(tp // POINT_UNIT, value.shape[0] - 1), o.dice_left])
        if chase:
            banks = me + tp > best and (pt.last_round == "chase" or banks)
        return Move(o.keep, banks and state.can_bank(o))

    def kernel_seat(self, rules: FarkleRules, target: int) -> PolicyTable:
        return self.table

    def normal_rows(self, rules: FarkleRules | None = None, target: int | None = None) -> int:
        return self.table.dims[3]

    def slice_extent(self, grid: fixed.Grid) -> tuple[int, int]:
        s_dim, m_dim, o_dim, rows = self.table.dims
        last = 0 if self.table.last_value is None else self.table.last_value.shape[0]
        return s_dim * s_dim * m_dim * o_dim + last, rows

    def slices(self, grid: fixed.Grid, rules: FarkleRules) -> fixed.Slices:
        return fixed.table_slices(self.table, grid, rules)


# -- the families ------------------------------------------------------------------------


class Family(families.Family):
    """A Farkle policy family of the registry, as every tool asks for it (the module
    docstring; its name, tuning space and members: :class:`dicelab.families.Family`).
    Subclasses answer for one family."""

    game = "farkle"
    #: its decisions come from an exact solve (solved here, or loaded from the cache)
    solved = False
    #: it plays two-seat games only
    two_seats = False
    #: its solve stops totals at the penalty floor (``solve farkle --floor`` sets it)
    floored = False
    #: what its own exact analysis (:meth:`solve`) reads besides the scoring: the target,
    #: the ending rule (a family without one refuses the solve itself)
    solve_reads: tuple[str, ...] = ("target", "ending")
    #: what its bank picture (:meth:`bank_table`, ``policy farkle``) reads besides the
    #: scoring and the runs of lost turns: the target, the totals ``me`` and ``opp``, the
    #: ending rule; and why it reads no other (:meth:`check_picture`)
    picture_reads: tuple[str, ...] = ("target", "me", "opp")
    picture_ignores = ""

    def check(self, spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int) -> int:
        """What it refuses in a game of ``n_seats`` to ``target``, refused before any
        solve; returns the checked target."""
        target = check_target(target)
        if self.two_seats and n_seats != 2:
            raise UserError(f"{spec.name} plays two-seat games only (this game has "
                            f"{counted(n_seats, 'seat')}); use max-ev, fastest, ai or "
                            "threshold-T "
                            "with more seats")
        return target

    def check_solve(self, spec: PolicySpec, target: int | None, ending: str | None) -> None:
        """Refuse, before any work, a ``target`` or an ``ending`` given (not None) that its
        exact analysis does not read (``solve farkle -p max-ev --target``)."""
        _refuse_unread(spec, {"target": target, "ending": ending}, self.solve_reads,
                       SOLVE_READERS, SOLVE_IGNORES)

    def check_picture(self, spec: PolicySpec, target: int | None = None,
                      me: int | None = None, opp: int | None = None,
                      ending: str | None = None) -> None:
        """Refuse, before any work, a ``target``, a total (``me``, ``opp``) or an
        ``ending`` given (not None) that its bank picture does not read (``policy farkle
        max-ev --me 500``)."""
        _refuse_unread(spec, {"target": target, "me": me, "opp": opp, "ending": ending},
                       self.picture_reads, PICTURE_READERS, self.picture_ignores)

    def floor(self, spec: PolicySpec, rules: FarkleRules, points: int | None):
        """The block in which its solve stops totals ``points`` below zero (``--floor``,
        checked: :func:`~dicelab.farkle.rules.check_floor`; None: the default floor)."""
        if points is not None and not self.floored:
            raise UserError(f"--floor is for fastest and optimal-win, not {spec.name}: their "
                            "totals stop at the floor; a threshold's race goes as far "
                            "below zero as changes its answer, and max-ev plays no totals")
        return solver_floor(check_floor(rules, points))

    def floor_points(self, rules: FarkleRules, points: int | None = None) -> int | None:
        """How far below zero (points) its solve lets totals fall at ``--floor points``
        (None: the default floor); None where it stops no totals (not :attr:`floored`, or
        rules without a farkle penalty)."""
        if not (self.floored and rules.farkle_penalty):
            return None
        return rules.penalty_floor(points) * POINT_UNIT

    def policy(self, spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int = 2,
               progress: Progress = None):
        """The policy (see the module docstring) in a game of ``n_seats`` to ``target``."""
        raise NotImplementedError

    def tabulable(self, spec: PolicySpec) -> bool:
        """Whether the simulation kernels can play it (else the referee does)."""
        return True

    def lanes_threshold(self, spec: PolicySpec) -> int | None:
        """The threshold the lanes kernel plays it by, if it can."""
        return None

    def bank_table(self, spec: PolicySpec, rules: FarkleRules, target: int, me: int,
                   opp: int, progress: Progress = None, my_farkles: int = 0,
                   opp_farkles: int = 0) -> tuple[np.ndarray, str]:
        """(bank table, title) at the totals ``me``, ``opp`` and the runs of lost turns
        ``my_farkles``, ``opp_farkles`` (checked): see
        :func:`dicelab.farkle.policies.bank_table`."""
        raise UserError(f"policy '{spec.name}' has no bank picture: it is drawn for "
                        "dicelab's own policies")

    def solve(self, spec: PolicySpec, rules: FarkleRules, target: int,
              progress: Progress = None):
        """Its own exact analysis (``dicelab solve farkle``)."""
        raise UserError(f"{spec.name} has no exact turn analysis: its threshold depends on "
                        "the game state; simulate it, e.g. dicelab simulate -s ai --vs "
                        "threshold-300, or evaluate it: dicelab evaluate")


#: The policies whose bank picture reads each option (:meth:`Family.check_picture`).
PICTURE_READERS = {"target": "fastest, optimal-win and a bank rule",
                   "me": "fastest, optimal-win, ai and a bank rule",
                   "opp": "optimal-win, ai and a bank rule", "ending": "optimal-win"}
#: The policies whose solve reads each option (:meth:`Family.check_solve`) ...
SOLVE_READERS = {"target": "fastest, optimal-win and threshold-T's race",
                 "ending": "optimal-win"}
#: ... and why another's does not.
SOLVE_IGNORES = {"target": "its solve is one turn's, which plays to no target",
                 "ending": "its solve is one player's alone, whom no opponent's last round "
                           "or win ends"}


def _refuse_unread(spec: PolicySpec, given: dict, reads: tuple[str, ...],
                   readers: dict[str, str], why: str | dict[str, str]) -> None:
    """``UserError`` for the first option of ``given`` that is given (not None) but not
    in ``reads``: which policies read it (``readers``), and why this one does not
    (``why``, or ``why[option]``)."""
    for option, value in given.items():
        if value is not None and option not in reads:
            reason = why if isinstance(why, str) else why[option]
            raise UserError(f"--{option} is for {readers[option]}, not {spec.name}: {reason}")
#: A title's words where a policy's picture does not read the runs of lost turns given.
IGNORES_LOST = "lost turns in a row do not change it"
IGNORES_OPP_LOST = "the opponent's lost turns do not change it"


def _tag(rules: FarkleRules, ignored: str | None = None) -> str:
    return f"rules {rules.name}" + (f"; {ignored}" if ignored else "")


class Threshold(Family):
    name = "threshold"
    solve_reads = ("target",)
    picture_reads = ()
    picture_ignores = ("it banks from its threshold on, whatever the totals, the target "
                       "and the ending rule")

    def policy(self, spec, rules, target, n_seats=2, progress=None):
        return ThresholdPolicy(spec.params["threshold"], spec.name)

    def lanes_threshold(self, spec):
        return spec.params["threshold"]

    def space(self, spec=None):
        return {"threshold": (50, 2000, 50)}

    def default(self, ref):
        return parse_policy("threshold-300")

    def member(self, ref, values):
        return f"threshold-{values['threshold']}"

    def bank_table(self, spec, rules, target, me, opp, progress=None, my_farkles=0,
                   opp_farkles=0):
        bank = threshold_bank_table(spec.params["threshold"])
        ignored = IGNORES_LOST if my_farkles or opp_farkles else None
        return legal_bank(rules, bank), f"{spec.name} ({_tag(rules, ignored)})"

    def solve(self, spec, rules, target, progress=None):
        return threshold_solution(rules, spec.params["threshold"], target, spec.name)


class Ai(Family):
    name = "ai"
    picture_reads = ("me", "opp")
    picture_ignores = "its thresholds follow the deficit (its last-round chase is not shown)"

    def policy(self, spec, rules, target, n_seats=2, progress=None):
        return AiPolicy(ai_params(spec).tolist(), spec.name)

    def space(self, spec=None):
        return {"base": (100, 1000, 50), "step": (0, 500, 50), "per": (250, 5000, 250),
                "max-steps": (0, 10, 1), "two-dice": (0, 400, 50), "one-die": (0, 500, 50),
                "chase": (0, 1, 1)}

    def default(self, ref):
        return parse_policy("ai")

    def member(self, ref, values):
        given = ",".join(f"{k}={v}" for k, v in values.items())
        return parse_policy(f"ai:{given}" if given else "ai").name

    def bank_table(self, spec, rules, target, me, opp, progress=None, my_farkles=0,
                   opp_farkles=0):
        thr = self.policy(spec, rules, target).thresholds(max(opp - me, 0))
        rows = int(thr[1:].max()) // POINT_UNIT + 2
        check_bank_rows(spec.name, rows)
        bank = np.zeros((rows, 7), dtype=np.uint8)
        for n in range(1, 7):
            bank[max(int(thr[n]), POINT_UNIT) // POINT_UNIT:, n] = 1
        ignored = IGNORES_LOST if my_farkles or opp_farkles else None
        return legal_bank(rules, bank), (f"{spec.name} at {me} vs {opp} "
                                         f"({_tag(rules, ignored)}; last-round chase not "
                                         "shown)")


class Exact(Family):
    """A family whose policy is an exact solve's decision table."""

    solved = True

    def table(self, spec: PolicySpec, rules: FarkleRules, target: int,
              progress: Progress = None) -> PolicyTable:
        """The decision table through which the simulation kernel plays it."""
        raise NotImplementedError

    def policy(self, spec, rules, target, n_seats=2, progress=None):
        target = self.check(spec, rules, target, n_seats)
        return TablePolicy(self.table(spec, rules, target, progress), spec.name)


class MaxEv(Exact):
    name = "max-ev"
    solve_reads = ()
    picture_reads = ()
    picture_ignores = ("it maximises one turn's score, whatever the totals, the target and "
                       "the ending rule")

    def table(self, spec, rules, target, progress=None):
        return max_ev_table(rules)

    def bank_table(self, spec, rules, target, me, opp, progress=None, my_farkles=0,
                   opp_farkles=0):
        sol = solve_max_ev(rules)  # past its exact rows six dice meet the table's edge
        ignored = IGNORES_OPP_LOST if opp_farkles else None
        return sol.bank[my_farkles, :sol.exact_rows], (
            f"max-ev{runs_title(rules, my_farkles)} ({_tag(rules, ignored)})")

    def solve(self, spec, rules, target, progress=None):
        return solve_max_ev(rules)


class Fastest(Exact):
    name = "fastest"
    floored = True
    solve_reads = ("target",)
    picture_reads = ("target", "me")
    picture_ignores = ("it races to the target alone, whatever the opponent's total and the "
                       "ending rule")

    def check(self, spec, rules, target, n_seats):
        return check_fastest(rules, super().check(spec, rules, target, n_seats))

    def table(self, spec, rules, target, progress=None):
        return fastest_table(rules, target)

    def bank_table(self, spec, rules, target, me, opp, progress=None, my_farkles=0,
                   opp_farkles=0):
        sol = fastest_solution(rules, target)
        ignored = IGNORES_OPP_LOST if opp_farkles else None
        return sol.bank_at(me, my_farkles), (f"fastest to {target} at own total {me}"
                                             f"{runs_title(rules, my_farkles)} "
                                             f"({_tag(rules, ignored)})")

    def solve(self, spec, rules, target, progress=None):
        return fastest_solution(rules, target)


class OptimalWin(Exact):
    """``optimal-win`` (self-play) and ``optimal-win:vs=POLICY`` (a best response)."""

    name = "optimal-win"
    two_seats = True
    floored = True
    picture_reads = ("target", "me", "opp", "ending")

    def check(self, spec, rules, target, n_seats):
        target = super().check(spec, rules, target, n_seats)
        # the solve's own check first: the bound below builds the last round's tables
        solve.check_solve_memory(rules, target, spec.name, "vs" in spec.params)
        # the factor of OptimalWinSolution.policy_table's own check: an hour's solve
        # must not end in that refusal
        check_memory(f"the {spec.name} policy table to {target:,}",
                     solve.least_policy_table_bytes(rules, target) * 1.5)
        return target

    def solution(self, spec: PolicySpec, rules: FarkleRules, target: int,
                 progress: Progress = None) -> solve.OptimalWinSolution:
        """Its solution, solved or loaded from the cache."""
        if "vs" in spec.params:
            return best_response(rules, target, spec.params["vs"], progress=progress)
        return solve.solve_optimal_win(rules, target, progress=progress)

    def table(self, spec, rules, target, progress=None):
        return self.solution(spec, rules, target, progress).policy_table()

    def bank_table(self, spec, rules, target, me, opp, progress=None, my_farkles=0,
                   opp_farkles=0):
        sol = self.solution(spec, rules, target, progress)
        return sol.bank_decisions(me, opp, my_farkles, opp_farkles), (
            f"{spec.name} to {target} at {me} vs {opp}"
            f"{runs_title(rules, my_farkles, opp_farkles)} ({_tag(rules)}, ending "
            f"{rules.ending})")

    def solve(self, spec, rules, target, progress=None):
        return self.solution(spec, rules, target, progress)


class User(Family):
    """A user's policy (:mod:`dicelab.user_policy`): the spec holds its object."""

    name = "user"
    named = False
    picture_ignores = "the picture is of its bank rule before the last round"

    def policy(self, spec, rules, target, n_seats=2, progress=None):
        return as_policy(spec.policy, rules, target, n_seats)

    def tabulable(self, spec):
        return _tabulable(spec.policy)

    def space(self, spec=None):
        return families.user_space(spec)

    def bank_table(self, spec, rules, target, me, opp, progress=None, my_farkles=0,
                   opp_farkles=0):
        rule = spec.policy
        if not isinstance(rule, BankRule):
            raise UserError(f"policy '{spec.name}' has no bank picture: it is drawn for a "
                            "bank rule (dicelab.farkle.policy.bank_rule), and this policy "
                            "decides move by move or is a table")
        bank = rule.bank_grid(np.array([me]), np.array([opp]), target)[0, 0]
        changed = np.flatnonzero((bank[1:] != bank[:-1]).any(axis=1))
        rows = int(changed[-1]) + 3 if changed.size else 2  # then like the last row
        # its bank function reads the totals and the turn, not the runs of lost turns
        ignored = IGNORES_LOST if my_farkles or opp_farkles else None
        return legal_bank(rules, np.ascontiguousarray(bank[:rows])), (
            f"{spec.name} at {me} vs {opp} ({_tag(rules, ignored)}; set-aside "
            f"{rule.setaside}; last round not shown)")

    def solve(self, spec, rules, target, progress=None):
        raise UserError(f"{spec.name} is your own policy: dicelab solve farkle analyses "
                        "dicelab's policies; evaluate yours exactly with dicelab evaluate")


#: The registry's Farkle families by name, and a user's policies (``"user"``).
FAMILIES: dict[str, Family] = {f.name: f for f in (Threshold(), Ai(), MaxEv(), Fastest(),
                                                   OptimalWin(), User())}
USER = FAMILIES["user"]


def family_of(spec: PolicySpec) -> Family:
    """The :class:`Family` of a parsed Farkle policy (another game's is refused)."""
    return families.lookup(spec, "farkle", FAMILIES)


def family_named(ref: str) -> tuple[Family, PolicySpec]:
    """The family ``tune`` searches when it is named ``ref`` (``ai``, ``threshold``, or
    a user's policy, ``FILE.py:NAME``) and the member it starts from."""
    fam = FAMILIES.get(ref)
    if fam is not None and fam.space():
        return fam, fam.default(ref)
    from dicelab import user_policy

    tunable = ", ".join(f.name for f in FAMILIES.values() if f.space())
    if fam is not None or not user_policy.looks_like_reference(ref):
        raise UserError(f"unknown family '{ref}' to tune; valid: {tunable}, or your own "
                        "bank rule (FILE.py:NAME) with a space")
    spec = parse_policy(ref, "farkle")
    if not family_of(spec).space(spec):
        kind = "a policy table" if isinstance(spec.policy, PolicyTable) else \
            "a policy that decides move by move"
        space = "bank_rule(space={'base': range(200, 601, 50)})"
        raise UserError(f"policy '{ref}' has no parameter space to tune: " + (
            f"give its bank rule one, {space}" if isinstance(spec.policy, BankRule) else
            f"tune takes a bank rule with a space, {space}, not {kind}"))
    return family_of(spec), spec


# -- any policy --------------------------------------------------------------------------


def as_policy(policy, rules: FarkleRules, target: int, n_seats: int = 2,
              progress: Progress = None) -> Policy:
    """The :class:`~dicelab.farkle.policy.Policy` that plays ``policy`` in a game of
    ``n_seats`` to ``target`` under ``rules``: a name (``"ai:base=350"``), a
    ``PolicySpec`` (a user's too: its object), a ``PolicyTable``, or an object with
    ``decide`` (as it is). Exact policies are solved or loaded from the cache here
    (``progress(fraction)`` through a solve)."""
    if isinstance(policy, str):
        policy = parse_policy(policy, "farkle")
    if isinstance(policy, PolicySpec):
        return family_of(policy).policy(policy, rules, target, n_seats, progress)
    if isinstance(policy, PolicyTable):
        return TablePolicy(policy)
    if callable(getattr(policy, "decide", None)) and hasattr(policy, "name"):
        return policy
    raise UserError(f"{policy!r} is not a Farkle policy: give a policy name, a PolicyTable "
                    "or an object with a name and decide(state) -> Move")


def _tabulable(policy) -> bool:
    return isinstance(policy, PolicyTable) or callable(getattr(policy, "table", None))


def tabulable(policy) -> bool:
    """Whether the simulation kernels can play this seat (a built-in name, a
    ``PolicyTable``, or an object with a ``table`` method); a policy that
    only decides move by move is played by the referee
    (:func:`dicelab.farkle.pysim.simulate_python`)."""
    if isinstance(policy, PolicySpec):
        return family_of(policy).tabulable(policy)
    return _tabulable(policy)


def named(policy) -> bool:
    """Whether a policy is named by its name alone: a built-in name (whose evaluations
    are cached), not a user's policy (code that may change under the same name) or an
    object."""
    if isinstance(policy, str):
        policy = parse_policy(policy, "farkle")
    return isinstance(policy, PolicySpec) and family_of(policy).named


def resolve(policy, rules: FarkleRules, target: int, progress: Progress = None
            ) -> fixed.FixedPolicy:
    """A policy as the game engine reads it (:class:`dicelab.farkle.fixed.FixedPolicy`):
    its policy object, exact ones solved or loaded from the cache (``progress(fraction)``
    through an ``optimal-win`` solve). A policy that only decides move by move is
    refused here."""
    if isinstance(policy, PolicySpec) and policy.game != "farkle":
        raise UserError(f"policy '{policy.name}' is a {policy.game} policy; exact head to "
                        "head of Farkle takes Farkle policies")
    out = as_policy(policy, rules, target, 2, progress)
    if not callable(getattr(out, "slices", None)):
        shown = policy.name if isinstance(policy, PolicySpec) else \
            policy if isinstance(policy, str) else getattr(out, "name", out)
        raise _inexact(shown)
    return out


def check_exact(spec: PolicySpec) -> None:
    """Refuse, before any solve, a policy the exact solvers cannot read (one that
    decides move by move)."""
    if not tabulable(spec):
        raise _inexact(spec.name)


def _inexact(shown) -> UserError:
    return UserError(f"policy '{shown}' cannot be answered exactly: the exact solvers read "
                     "a policy written as a bank rule (dicelab.farkle.policy.bank_rule) or "
                     "a policy table; simulate it instead")


def best_response(rules: FarkleRules, target: int, opponent, *,
                  tol: float = config.OPTIMAL_WIN_TOL, use_cache: bool = True,
                  progress: Progress = None) -> solve.OptimalWinSolution:
    """The best response to any Farkle policy (a name, a spec, a table, a user's
    policy): :func:`dicelab.farkle.exact.solve_best_response`."""
    target = check_target(target)
    return solve.solve_best_response(rules, target, fixed.name_of(opponent),
                                     lambda: resolve(opponent, rules, target), tol=tol,
                                     use_cache=use_cache, by_content=not named(opponent),
                                     progress=progress)


__all__ = ["FAMILIES", "USER", "AiPolicy", "Family", "KernelCode", "TablePolicy",
           "ThresholdPolicy", "ai_params", "as_policy", "best_response", "check_exact",
           "family_named", "family_of", "named", "resolve", "tabulable"]
