"""Farkle policies, your own or dicelab's: what a policy sees and what it answers (layer 2).

A Farkle policy is asked once after every roll that scores. It sees a :class:`State` --
the roll, the turn's points so far, every seat's total and lost turns in a row, whether
this is the last round -- and answers a :class:`Move`: the dice to set aside, and
whether to bank the turn points then or roll the dice left. Any object with a ``name``
and a ``decide(state) -> Move`` method is a policy (:class:`Policy`); dicelab's referee
plays it, so it can be simulated, played against and logged.

A policy written as a **set-aside rule plus a bank rule** is more: dicelab can tabulate
it, so the simulation kernels play it at compiled speed and the exact solvers evaluate
it, answer it with a best response and judge it decision by decision. Write the bank
rule as a function of (my total, the best opponent's total, the turn points, the dice
left to roll) and decorate it with :func:`bank_rule`:

>>> @bank_rule
... def cautious(my, opp, turn_points, dice_left, *, base=350, big=1000):
...     # bank at `base`, but with 3 or more dice left keep rolling below `big`
...     return turn_points >= (big if dice_left >= 3 else base)
>>> from dicelab.farkle.rules import PRESETS
>>> s = State((1, 5, 2, 3, 3, 4), 300, 0, (1200, 2000), (0, 0), False, 10_000,
...           PRESETS["default"])
>>> s.options()[:2]
(SetAside(keep=(1, 5), points=150, dice_left=4), SetAside(keep=(1,), points=100, dice_left=5))
>>> cautious.decide(s)
Move(keep=(1, 5), bank=False)
>>> cautious.with_params(big=400).decide(s)
Move(keep=(1, 5), bank=True)

What a rule policy does beyond its rule (so that a table can hold it):

* it sets aside by its set-aside rule: ``"all-scoring"`` (:func:`all_scoring`: the most
  dice, then the most points, as ``threshold-T`` and ``ai`` do) or ``"max-ev"``
  (:func:`max_ev_setaside`: what ``max-ev`` sets aside);
* it banks only where the rules allow (a minimum to bank, hot dice that must roll);
* turn points from the target on bank (the rule is asked up to there);
* in the last round (``last_round``), by default it banks when its rule says so *and*
  its total would beat the leader's (``"rule-to-beat"``, as ``ai`` does): a bank short of
  the leader cannot win. ``"rule"`` follows the rule alone (as ``threshold-T`` does);
  ``"chase"`` banks exactly when its total would beat the leader's;
* the opponent's total is the highest of the other seats' (the leader's in the last
  round).

The bank rule may be plain Python or a ``numba.njit`` function; a plain one is compiled
with numba when numba can (and checked against the plain one on a sample of states),
else called as it is. Extra keyword parameters with integer or float defaults make a
family (:meth:`BankRule.with_params`), named on the command line like
``my_policies.py:cautious:big=800``.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from dicelab.errors import UserError, user_code_error
from dicelab.farkle.policy_table import LAST_ROUND_RULES, PolicyTable
from dicelab.farkle.rules import POINT_UNIT, FarkleRules, dice_after, set_asides
from dicelab.resources import check_memory
from dicelab.text import as_number_like

#: The set-aside rules a :class:`BankRule` may name.
SETASIDE_RULES = ("all-scoring", "max-ev")


class SetAside(NamedTuple):
    """One legal set-aside of a roll: the dice, their points, and the dice left to roll
    next (6 after hot dice: every die of the roll set aside)."""

    keep: tuple[int, ...]
    points: int
    dice_left: int


class Move(NamedTuple):
    """A policy's answer: set aside ``keep`` (dice of the roll), then bank (``True``) or
    roll the dice left (``False``)."""

    keep: tuple[int, ...]
    bank: bool


class State(NamedTuple):
    """A decision: the seat to play (``seat``) has rolled ``roll`` (sorted faces) with
    ``turn_points`` already set aside this turn. ``totals`` and ``lost`` (lost turns in a
    row, the farkle penalty's count) are every seat's, by seat; ``last_round``: some seat
    has banked the target and this is this seat's last turn."""

    roll: tuple[int, ...]
    turn_points: int
    seat: int
    totals: tuple[int, ...]
    lost: tuple[int, ...]
    last_round: bool
    target: int
    rules: FarkleRules

    @property
    def my_total(self) -> int:
        return self.totals[self.seat]

    @property
    def my_lost(self) -> int:
        return self.lost[self.seat]

    @property
    def opp_seat(self) -> int | None:
        """The other seat with the highest total (the lowest-numbered among equal
        totals); None when alone."""
        others = [s for s in range(len(self.totals)) if s != self.seat]
        return max(others, key=lambda s: (self.totals[s], -s)) if others else None

    @property
    def opp_total(self) -> int:
        """The highest total of the other seats (the leader's in the last round); 0 when
        alone."""
        s = self.opp_seat
        return 0 if s is None else self.totals[s]

    @property
    def opp_lost(self) -> int:
        s = self.opp_seat
        return 0 if s is None else self.lost[s]

    def options(self) -> tuple[SetAside, ...]:
        """Every distinct legal set-aside of the roll, most points first (then most dice
        set aside)."""
        return options(self.rules, self.roll)

    def can_bank(self, option: SetAside) -> bool:
        """Whether the rules allow banking after setting ``option`` aside."""
        return self.rules.can_bank(self.turn_points + option.points, option.dice_left)


@runtime_checkable
class Policy(Protocol):
    """A Farkle policy: a ``name`` and ``decide(state) -> Move``."""

    name: str

    def decide(self, state: State) -> Move: ...


@functools.lru_cache(maxsize=4096)
def options(rules: FarkleRules, roll: tuple[int, ...]) -> tuple[SetAside, ...]:
    """Every distinct legal set-aside of ``roll`` under ``rules``, most points first
    (then most dice set aside); empty for a roll that scores nothing.

    >>> from dicelab.farkle.rules import PRESETS
    >>> options(PRESETS["default"], (2, 3, 4, 6, 6, 6))
    (SetAside(keep=(6, 6, 6), points=600, dice_left=3),)
    """
    import itertools

    from dicelab.farkle.rules import setaside_points

    faces = tuple(sorted(int(f) for f in roll))
    found: dict[tuple[int, ...], int] = {}
    for k in range(1, len(faces) + 1):
        for sub in itertools.combinations(faces, k):
            if sub not in found:
                p = setaside_points(rules, sub)
                if p is not None:
                    found[sub] = p
    ranked = sorted(found.items(), key=lambda kp: (-kp[1], -len(kp[0]), kp[0]))
    return tuple(SetAside(k, p, dice_after(len(faces), len(k))) for k, p in ranked)


def all_scoring(state: State) -> SetAside:
    """Set aside all scoring dice: the most dice, and among those the most points (what
    ``threshold-T`` and ``ai`` do)."""
    return _all_scoring(state.rules, state.roll)


@functools.lru_cache(maxsize=4096)
def _all_scoring(rules: FarkleRules, roll: tuple[int, ...]) -> SetAside:
    return max(options(rules, roll), key=lambda o: (len(o.keep), o.points))


def by_value(state: State, value: np.ndarray) -> SetAside:
    """The set-aside whose next state has the highest ``value[p, n]`` (a (P, 7) table;
    ``p`` the turn points after it in units of 50, clamped to the last row; ``n`` the
    dice left): as the simulation kernel plays a :class:`PolicyTable` -- options in the
    model's order (more points, then more dice left), the first strict maximum of the
    float32 value wins."""
    rows = value.shape[0]
    best, choice = -math.inf, None
    for points, left in set_asides(state.rules).options(_rank(state.roll)):
        p = min((state.turn_points + points) // POINT_UNIT, rows - 1)
        v = float(np.float32(value[p, left]))
        if v > best:
            best, choice = v, (points, left)
    return next(o for o in state.options() if (o.points, o.dice_left) == choice)


def max_ev_setaside(state: State) -> SetAside:
    """What ``max-ev`` sets aside in this state (its decision table, by this seat's lost
    turns in a row)."""
    return by_value(state, _max_ev_values(state.rules)[_max_ev_streak(state)])


def _max_ev_streak(state: State) -> int:
    return min(state.my_lost, _max_ev_values(state.rules).shape[0] - 1)


@functools.lru_cache(maxsize=8)
def _max_ev_values(rules: FarkleRules) -> np.ndarray:
    """``max-ev``'s set-aside values (S, P, 7), one table per own lost turns in a row."""
    from dicelab.farkle.solitaire import max_ev_table

    t = max_ev_table(rules)
    s = t.streaks
    return np.stack([t.normal(k, 0, 0, 0)[0] for k in range(s)])


def _rank(roll) -> int:
    from dicelab.dice import rank_of_dice

    return rank_of_dice(list(roll))


# --- a bank rule as a policy ---------------------------------------------------------------

BankFunction = Callable[..., bool]


class BankRule:
    """A rule policy: a set-aside rule and a bank rule ``bank(my, opp, turn_points,
    dice_left, **params) -> bool`` (see the module docstring). Make one with
    :func:`bank_rule`."""

    #: a user's rule may read the run of lost turns (its set-asides or its bank function)
    same_without_penalty = False

    def __init__(self, bank: BankFunction, *, setaside: str = "all-scoring",
                 last_round: str = "rule-to-beat", name: str | None = None,
                 params: dict | None = None, space: dict | None = None) -> None:
        if setaside not in SETASIDE_RULES:
            raise UserError(f"a bank rule's set-aside rule is one of "
                            f"{', '.join(SETASIDE_RULES)}, not {setaside!r}")
        if last_round not in LAST_ROUND_RULES:
            raise UserError(f"a bank rule's last round is one of "
                            f"{', '.join(LAST_ROUND_RULES)}, not {last_round!r}")
        self.function = bank
        self.setaside = setaside
        self.last_round = last_round
        self.defaults = _keyword_defaults(bank)
        self.params = dict(self.defaults)
        for k, v in (params or {}).items():
            self.params[k] = _param(self.defaults, k, v)
        self.base_name = name or getattr(bank, "__name__", "bank-rule")
        self.space = dict(space or {})
        changed = [f"{k}={v}" for k, v in self.params.items() if v != self.defaults[k]]
        self.name = self.base_name + (":" + ",".join(changed) if changed else "")
        self._grids: dict = {}

    def __repr__(self) -> str:
        return (f"BankRule({self.name!r}, setaside={self.setaside!r}, "
                f"last_round={self.last_round!r})")

    def with_params(self, **params) -> BankRule:
        """The same rule with other parameters (the defaults for those not given)."""
        return BankRule(self.function, setaside=self.setaside, last_round=self.last_round,
                        name=self.base_name, params={**self.params, **params},
                        space=self.space)

    # -- the rule, as the referee asks it

    def wants_bank(self, my: int, opp: int, turn_points: int, dice_left: int, target: int
                   ) -> bool:
        """The rule's answer with this policy's conventions: from the target on, bank."""
        if turn_points >= target:
            return True
        try:
            answer = self.function(my, opp, turn_points, dice_left, **self.params)
        except (Exception, SystemExit) as exc:  # the user's code: its own traceback
            raise user_code_error(exc, f"bank rule {self.name} at (my, opp, turn_points, "
                                  f"dice_left) = {(my, opp, turn_points, dice_left)}"
                                  ) from None
        return _as_bool(answer, self.name, (my, opp, turn_points, dice_left))

    def choose(self, state: State) -> SetAside:
        return all_scoring(state) if self.setaside == "all-scoring" else max_ev_setaside(state)

    def decide(self, state: State) -> Move:
        option = self.choose(state)
        tp = state.turn_points + option.points
        beats = state.my_total + tp > state.opp_total
        if state.last_round and self.last_round == "chase":
            bank = beats
        else:
            bank = self.wants_bank(state.my_total, state.opp_total, tp, option.dice_left,
                                   state.target)
            if state.last_round and self.last_round == "rule-to-beat":
                bank = bank and beats
        return Move(option.keep, bool(bank and state.can_bank(option)))

    # -- the rule as tables (simulation kernels and exact solvers)

    def bank_grid(self, my_totals: np.ndarray, opp_totals: np.ndarray, target: int
                  ) -> np.ndarray:
        """uint8 (X, Y, R, 7): the rule's bank at (my total, opponent's total) =
        ``(my_totals[x], opp_totals[y])`` (points), turn points ``p * 50`` for ``p < R``
        and dice left ``n`` (column 0 unused); ``R = target // 50 + 1``, the last row
        banks. Row 0 rolls, unasked: a turn has at least 50 points after a set-aside, and
        a rule may divide by them. (An opponent's total from the target on is the leader's
        in the last round: no other total reaches it.)"""
        key = (target, np.asarray(my_totals).tobytes(), np.asarray(opp_totals).tobytes())
        if key in self._grids:
            return self._grids[key]
        self._grids.clear()  # one game's grid held at a time
        rows = target // POINT_UNIT + 1
        shape = (len(my_totals), len(opp_totals), rows, 7)
        check_memory(f"the decisions of {self.name}", math.prod(shape) * 2)
        out = np.zeros(shape, dtype=np.uint8)
        params = tuple(self.params.values())
        mine = np.asarray(my_totals, dtype=np.int64)
        theirs = np.asarray(opp_totals, dtype=np.int64)
        fast, filled = _compiled(self.function), False
        if fast is not None and _agrees(fast, self, mine, theirs, rows, params):
            at = np.zeros(4, dtype=np.int64)  # the state being asked
            try:
                filled = _grid_kernel()(fast, params, mine, theirs, out, at)
            except Exception:  # the compiled rule raised there
                filled = False
            if not filled:  # the plain rule there: its error, with the user's frames
                i, j, p, n = at.tolist()
                self.wants_bank(int(mine[i]), int(theirs[j]), p * POINT_UNIT, n, target)
        if not filled:  # (or the plain rule answers where the compiled one did not)
            for i, my in enumerate(mine.tolist()):
                for j, opp in enumerate(theirs.tolist()):
                    for p in range(1, rows):
                        for n in range(1, 7):
                            out[i, j, p, n] = self.wants_bank(my, opp, p * POINT_UNIT, n,
                                                              target)
        out[:, :, rows - 1, 1:] = 1
        out.setflags(write=False)
        self._grids[key] = out
        return out

    def _game_grid(self, rules: FarkleRules, target: int, leads: int) -> np.ndarray:
        """The bank grid of a game: my totals from the floor to the target, the
        opponent's to ``leads`` units beyond (the leader's in the last round)."""
        from dicelab.farkle.engine.model import model

        floor = model(rules).floor
        u = target // POINT_UNIT + floor
        totals = (np.arange(u + leads) - floor) * POINT_UNIT
        return self.bank_grid(totals[:u], totals, target)

    def normal_rows(self, rules: FarkleRules, target: int) -> int:
        """Rows (turn points, units of 50) of its turns outside the last round."""
        from dicelab.farkle.engine.model import model

        u = target // POINT_UNIT + model(rules).floor
        return _rows_used(self._game_grid(rules, target, 0)[:, :u])

    def table(self, rules: FarkleRules, target: int, leads: int) -> PolicyTable:
        """The rule as the simulation kernel plays it: a 4-D (or, with ``max-ev``
        set-asides under the penalty, 6-D) :class:`PolicyTable` over the game's totals,
        the opponent's axis running on ``leads`` units past the target for the last
        round's leader (:func:`dicelab.farkle.fixed.lead_rows`; past them it reads the
        last)."""
        from dicelab.farkle.engine.model import model

        bank = self._game_grid(rules, target, leads)
        rows = _rows_used(bank if self.last_round != "chase"
                          else bank[:, :bank.shape[0]])
        if self.setaside == "max-ev":  # each set-aside reads its own next row's value
            rows += model(rules).max_points
        values = self._values(rules, rows)
        s = values.shape[0]
        shape = (s, s, *bank.shape[:2], rows, 7)
        check_memory(f"the policy table of {self.name}", math.prod(shape) * 5)
        value = np.zeros(shape, np.float32) if self.setaside == "all-scoring" else \
            np.ascontiguousarray(np.broadcast_to(values[:, None, None, None], shape))
        bank = bank[:, :, :rows]
        if bank.shape[2] < rows:  # rows past the grid's last bank as it does
            bank = np.concatenate([bank, np.repeat(bank[:, :, -1:], rows - bank.shape[2],
                                                   axis=2)], axis=2)
        bank6 = np.ascontiguousarray(np.broadcast_to(bank[None, None], shape))
        return PolicyTable(self.name, value, bank6, floor=model(rules).floor,
                           last_round=self.last_round,
                           keep_all=self.setaside == "all-scoring")

    def _values(self, rules: FarkleRules, rows: int) -> np.ndarray:
        """(S, rows, 7) set-aside values: the all-scoring order (more dice set aside
        first: hot dice, then fewer dice left; points break ties in the kernel's option
        order) or ``max-ev``'s table, rows clamped as the kernel clamps them."""
        if self.setaside == "all-scoring":
            v = np.zeros((1, rows, 7), dtype=np.float32)
            v[0, :, 1:6] = 6 - np.arange(1, 6)
            v[0, :, 6] = 7
            return v
        mev = _max_ev_values(rules)
        idx = np.minimum(np.arange(rows), mev.shape[1] - 1)
        return np.ascontiguousarray(mev[:, idx])

    def slice_extent(self, grid) -> tuple[int, int]:
        """(slices, rows) at most: its bank at every state, then at most one slice per
        state (the engine's memory check, :class:`dicelab.farkle.fixed.FixedPolicy`)."""
        return grid.u * grid.u + grid.d, grid.u + grid.d + 2

    def slices(self, grid, rules: FarkleRules) -> tuple:
        """The rule as the game engine reads a fixed policy at the states of ``grid``: the
        fields of a :class:`dicelab.farkle.fixed.Slices`."""
        u, d = grid.u, grid.d
        bank = self._game_grid(rules, (u - grid.floor) * POINT_UNIT, d)
        chase = self.last_round != "rule"
        used = _rows_used(bank if self.last_round != "chase" else bank[:, :u])
        rows = max(used, d + 2) if chase else used  # past its rows a slice banks
        if self.setaside == "max-ev":  # each set-aside reads its own next row's value
            from dicelab.farkle.engine.model import model

            rows = max(rows, used + model(rules).max_points)
        cut = bank[..., :used, :]
        # normal play: the rule at (my index, the other's)
        normal_ids, normal_rows = _unique_rows(cut[:, :u].reshape(u * u, -1))
        # the last round: the rule at (my index x, the leader's x + lead), then the chase
        x_idx = np.arange(u)[:, None]
        lead = np.arange(d)[None, :]
        at_leader = cut[x_idx, x_idx + lead].reshape(u * d, -1)
        if self.last_round == "chase":
            at_leader = np.ones_like(at_leader)
        rule_ids, rule_rows = _unique_rows(at_leader)
        pair = rule_ids * d + (np.broadcast_to(lead, (u, d)).ravel() if chase else 0)
        pairs, last_ids = np.unique(pair, return_inverse=True)
        tables = np.ones((len(normal_rows) + len(pairs), rows, 7), dtype=np.uint8)
        tables[:len(normal_rows), :used] = normal_rows.reshape(-1, used, 7)
        last_tables = tables[len(normal_rows):]
        last_tables[:, :used] = rule_rows[pairs // d].reshape(-1, used, 7)
        if chase:
            p = np.arange(rows)[None, :, None]
            last_tables &= (p > (pairs % d)[:, None, None]).astype(np.uint8)
        tables[:, :, 0] = 0
        values = self._values(rules, rows)
        s_v = values.shape[0]
        n_banks = len(tables)
        k = np.minimum(np.arange(grid.streak), s_v - 1)  # the value table by own count
        normal = (k[:, None, None, None] * n_banks
                  + normal_ids.reshape(u, u)[None, None])
        last = (k[:, None, None] * n_banks + len(normal_rows)
                + last_ids.reshape(u, d)[None])
        keep_all = self.setaside == "all-scoring"
        return (np.ascontiguousarray(np.concatenate([tables] * s_v)),
                      np.zeros((1, 1, 7), np.float32) if keep_all
                      else np.ascontiguousarray(np.repeat(values, n_banks, axis=0),
                                                dtype=np.float32),
                      keep_all,
                      np.ascontiguousarray(np.broadcast_to(normal, grid.normal_shape),
                                           dtype=np.int64),
                      np.ascontiguousarray(np.broadcast_to(last, grid.last_shape),
                                           dtype=np.int64))


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of each row's distinct row, the distinct rows) of a 2-D uint8 array."""
    a = np.ascontiguousarray(a)
    keys = a.view(np.dtype((np.void, a.shape[1]))).ravel()
    _, first, ids = np.unique(keys, return_index=True, return_inverse=True)
    return ids.ravel(), a[first]


def bank_rule(function: BankFunction | None = None, *, setaside: str = "all-scoring",
              last_round: str = "rule-to-beat", name: str | None = None,
              space: dict | None = None):
    """Make a :class:`BankRule` policy of a bank function (a decorator, with or without
    arguments). ``setaside``: ``"all-scoring"`` or ``"max-ev"``; ``last_round``:
    ``"rule-to-beat"``, ``"rule"`` or ``"chase"`` (the module docstring); ``space``: the values
    ``dicelab tune`` searches for each parameter (``{"big": range(600, 1501, 100)}``)."""
    def make(f: BankFunction) -> BankRule:
        return BankRule(f, setaside=setaside, last_round=last_round, name=name, space=space)

    return make if function is None else make(function)


def _keyword_defaults(function: BankFunction) -> dict:
    """The bank function's parameters beyond the four, with their defaults (numbers)."""
    py = getattr(function, "py_func", function)  # a numba dispatcher's Python function
    try:
        sig = inspect.signature(py)
    except (TypeError, ValueError):
        raise UserError(f"{function!r} is not a function of (my, opp, turn_points, "
                        "dice_left)") from None
    ps = list(sig.parameters.values())
    positional = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    if len(positional) != 4 or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in ps):
        raise UserError(f"bank rule {getattr(py, '__name__', py)!r} must take (my, opp, "
                        "turn_points, dice_left) and then only parameters with defaults, "
                        f"not ({', '.join(p.name for p in ps)})")
    out = {}
    for p in ps[4:]:
        if p.default is p.empty or isinstance(p.default, bool) \
                or not isinstance(p.default, int | float):
            raise UserError(f"bank rule {py.__name__!r}: parameter {p.name!r} needs a "
                            "number as its default")
        out[p.name] = p.default
    return out


def _param(defaults: dict, key: str, value):
    if key not in defaults:
        known = ", ".join(defaults) or "none"
        raise UserError(f"unknown parameter {key!r} (this rule's parameters: {known})")
    try:
        return as_number_like(defaults[key], value)
    except ValueError as exc:
        raise UserError(f"parameter {key}: {exc}") from None


def _as_bool(answer, name: str, args) -> bool:
    if isinstance(answer, bool | np.bool_) or (isinstance(answer, int | np.integer)
                                              and answer in (0, 1)):
        return bool(answer)
    raise UserError(f"bank rule {name} returned {answer!r} at (my, opp, turn_points, "
                    f"dice_left) = {args}: it must return True or False")


def _rows_used(bank: np.ndarray) -> int:
    """Rows to the second from which every row banks with every dice count (as
    ``threshold-T`` has them: its slices are the same arrays)."""
    lowest = bank.min(axis=tuple(range(bank.ndim - 2)))  # (R, 7): 0 where some state rolls
    rows = np.nonzero((lowest[:, 1:] == 0).any(axis=-1))[0]
    return min(int(rows[-1]) + 3 if rows.size else 2, bank.shape[-2])


# --- compiled bank rules ---------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _compiled(function: BankFunction):
    """The bank function compiled by numba (taking its parameters positionally), or None
    where numba cannot compile it."""
    try:
        import numba
        from numba.core.registry import CPUDispatcher

        if isinstance(function, CPUDispatcher):
            return function if not function.py_func.__code__.co_kwonlyargcount else \
                numba.njit(_all_positional(function.py_func))
        return numba.njit(_all_positional(function))
    except Exception:  # anything numba refuses: the plain function is used
        return None


def _all_positional(function):
    """The function with its keyword-only parameters made positional, in their order
    (the grid kernel passes a rule's parameters by position)."""
    import types

    code = function.__code__
    if not code.co_kwonlyargcount:
        return function
    flat = code.replace(co_argcount=code.co_argcount + code.co_kwonlyargcount,
                        co_kwonlyargcount=0)
    return types.FunctionType(flat, function.__globals__, function.__name__,
                              None, function.__closure__)


def _agrees(fast, rule: BankRule, mine: np.ndarray, theirs: np.ndarray, rows: int,
            params: tuple) -> bool:
    """Whether the compiled rule answers as the plain one on a sample of states (and
    compiles at all, to a function returning a bool or an integer: a rule that
    returns another type anywhere is asked as it is, and refused where it does)."""
    from numba import typeof, types

    rng = np.random.default_rng(0)
    plain = getattr(rule.function, "py_func", rule.function)
    try:
        for _ in range(64):
            my, opp = int(rng.choice(mine)), int(rng.choice(theirs))
            tp, n = int(rng.integers(1, rows)) * POINT_UNIT, int(rng.integers(1, 7))
            answer = _as_bool(plain(my, opp, tp, n, **rule.params), rule.name,
                              (my, opp, tp, n))
            if bool(fast(my, opp, tp, n, *params)) != answer:
                return False
    except (Exception, SystemExit):  # a typing failure, a wrong answer: the plain rule's turn
        return False
    compiled = fast.overloads.get(tuple(typeof(x) for x in (my, opp, tp, n, *params)))
    if compiled is None:  # (not compiled for the grid's types: the plain rule)
        return False
    answers = compiled.signature.return_type
    answers = answers.type if isinstance(answers, types.Optional) else answers
    return isinstance(answers, types.Boolean | types.Integer)


@functools.lru_cache(maxsize=1)
def _grid_kernel():
    from numba import njit

    @njit
    def fill(fn, params, mine, theirs, out, at):
        """The rule's answers from row 1 (row 0 is no state) below the last row (it
        banks); False at the first answer that is not a bool, 0 or 1, ``at`` holding its
        (i, j, p, n), as it does for an exception."""
        for i in range(mine.shape[0]):
            at[0] = i
            for j in range(theirs.shape[0]):
                at[1] = j
                for p in range(1, out.shape[2] - 1):
                    at[2] = p
                    for n in range(1, 7):
                        at[3] = n
                        answer = fn(mine[i], theirs[j], p * POINT_UNIT, n, *params)
                        if answer is None:
                            return False
                        if answer == 1:
                            out[i, j, p, n] = 1
                        elif answer != 0:
                            return False
        return True

    return fill


__all__ = ["SETASIDE_RULES", "BankRule", "Move", "Policy", "SetAside", "State", "all_scoring",
           "bank_rule", "by_value", "max_ev_setaside", "options"]
