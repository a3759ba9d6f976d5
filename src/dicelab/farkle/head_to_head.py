"""Exact head to head: the win, tie and loss probabilities of two fixed Farkle policies.

``exact_pair("ai", "threshold-350")`` evaluates a two-seat game exactly, without
sampling: every policy dicelab plays (``threshold-T``, ``ai`` with any parameters,
``max-ev``, ``fastest``, ``optimal-win``, ``optimal-win:vs=...`` or a
:class:`~dicelab.farkle.policy_table.PolicyTable`) is first turned into *turn slices*:
the (bank, value) tables through which the simulation kernel plays it at each game
state (own total, opponent total; in the last round, own total and the leader's lead).
Each slice's turn has an exact result distribution (P(bust), P(bank = g) for every gain
``g``) from the turn DP's forward pass, computed in parallel. The game then is a linear
recursion over score pairs, solved backwards in the order of the totals' sum (a bank
always adds points), with the bust cycle between ``(a, b)`` and ``(b, a)`` solved
exactly as a 2 x 2 linear system: no iteration, no tolerance beyond float rounding.

The slices are the policies as the kernel plays them -- the same set-aside choice (the
first strict maximum of the float32 value, in the model's option order), the same
clamping of table rows, the same ``ai`` rule (:func:`dicelab.farkle.kernels.
ai_thresholds`) -- so Monte Carlo runs of the same pair converge to these numbers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit, prange

from dicelab import cache
from dicelab.digest import text_digest
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.policies import ai_params
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    check_target,
    load_rules,
    set_asides,
)
from dicelab.farkle.turn_dp import _turn_distribution_kernel, legal_bank, must_roll_rows
from dicelab.registry import PolicySpec, parse_policy
from dicelab.resources import check_memory
from dicelab.stats import exact_verdict

#: Bump when the evaluation or its cached layout changes.
FORMAT_VERSION = 1
#: The most rows (turn points, units of 50) a turn slice may have: a policy that keeps
#: rolling far beyond that (``threshold-1000000``) is refused before anything is built.
MAX_SLICE_ROWS = 4096


class Slices(NamedTuple):
    """A policy as turn slices (see the module docstring).

    ``bank[s]`` (uint8, (P, 7)) and ``value[s]`` (float32, (P, 7); unused with
    ``keep_all``) are slice ``s``; ``normal[m, o]``: the slice at own total ``m``,
    opponent total ``o`` (units, below the target); ``last[m, d]``: the slice of a last
    turn at own total ``m`` that must beat a lead of ``d`` units.
    """

    bank: np.ndarray
    value: np.ndarray
    keep_all: bool
    normal: np.ndarray
    last: np.ndarray


# ---------------------------------------------------------------------------------
# Kernels


@njit(cache=True, parallel=True)
def _slice_distributions(rolls, bank, value, keep_all, out_bust, out_left, out_dist):
    """Each slice's exact turn result: ``out_bust[s]`` and ``out_dist[s, g]`` = P(bank a
    gain of ``g`` units) (``out_dist`` zeroed, shape (S, P + max points + 1 + the rows of
    hot dice must-roll)); ``out_left[s]``: the mass still rolling past those rows."""
    n_rows = out_dist.shape[1]
    for s in prange(bank.shape[0]):
        mass = np.zeros((n_rows, 7))
        v = value[min(np.int64(s), value.shape[0] - 1)]  # one dummy slice when keep_all
        bust, left = _turn_distribution_kernel(rolls, bank[s], v, keep_all, mass, out_dist[s])
        out_bust[s] = bust
        out_left[s] = left


class Side(NamedTuple):
    """One policy's side of the game, as the game recursions read it: its turns' exact
    results, and its last turn against every lead."""

    bust: np.ndarray  # (S,)
    dist: np.ndarray  # (S, G): P(bank a gain of g units)
    normal: np.ndarray  # (t, t) slice at (own, opponent)
    catch_win: np.ndarray  # (t, D): P(its last turn beats a lead of d), own total m
    catch_tie: np.ndarray  # (t, D): P(it ends level)


@njit(inline="always")
def bank_sums(dist, x, y, t, first_to_bank, other_win, other_tie, catch_win, catch_tie):
    """The mover's P(win) and P(tie) through banks, its turn's gains distributed as
    ``dist``, from totals (x, y): the other player's outcome as the mover at (y, x + g)
    below the target (``other_win/other_tie[y, m]``), else the other's last turn against
    a lead of x + g - y (``catch_win/catch_tie[y, d]``; a larger lead than the tables
    hold is never caught), or a win at once under ``first-to-bank``."""
    win = 0.0
    tie = 0.0
    width = catch_win.shape[1]
    for g in range(1, dist.shape[0]):
        p = dist[g]
        if p == 0.0:
            continue
        m = x + g
        if m < t:
            win += p * (1.0 - other_win[y, m] - other_tie[y, m])
            tie += p * other_tie[y, m]
        elif first_to_bank:
            win += p
        elif m - y < width:
            win += p * (1.0 - catch_win[y, m - y] - catch_tie[y, m - y])
            tie += p * catch_tie[y, m - y]
        else:
            win += p
    return win, tie


@njit(inline="always")
def cycle_outcomes(win_a, tie_a, bust_a, win_b, tie_b, bust_b):
    """P(win) and P(tie) of A (to move at (a, b)) and of B (to move at (b, a)) from what
    each reaches through banks and its bust probability: a bust hands the turn over, so
    the two are one 2 x 2 linear system. Returns (A win, A tie, B win, B tie)."""
    det = 1.0 - bust_a * bust_b
    ta = (tie_a + bust_a * tie_b) / det
    tb = tie_b + bust_b * ta
    wa = (win_a + bust_a * (1.0 - tb - win_b) - bust_a * bust_b * (1.0 - ta)) / det
    wb = win_b + bust_b * (1.0 - wa - ta)
    return wa, ta, wb, tb


@njit(cache=True, parallel=True)
def _play_diagonal(diag, t, first_to_bank, side_a, side_b, a_win, a_tie, b_win, b_tie):
    """Every pair with ``a + b == diag``: A to move at (a, b) and B to move at (b, a),
    whose bust cycle is a 2 x 2 linear system (everything else is solved already)."""
    lo = max(0, diag - (t - 1))
    hi = min(diag, t - 1)
    for q in prange(hi - lo + 1):
        a = lo + q
        b = diag - a
        sa_ = side_a.normal[a, b]
        sb_ = side_b.normal[b, a]
        cwa, cta = bank_sums(side_a.dist[sa_], a, b, t, first_to_bank, b_win, b_tie,
                             side_b.catch_win, side_b.catch_tie)
        cwb, ctb = bank_sums(side_b.dist[sb_], b, a, t, first_to_bank, a_win, a_tie,
                             side_a.catch_win, side_a.catch_tie)
        wa, ta, wb, tb = cycle_outcomes(cwa, cta, side_a.bust[sa_], cwb, ctb,
                                        side_b.bust[sb_])
        a_win[a, b] = wa
        a_tie[a, b] = ta
        b_win[b, a] = wb
        b_tie[b, a] = tb


# ---------------------------------------------------------------------------------
# Policies as turn slices


def _threshold_bank(thr_n: np.ndarray, rows: int) -> np.ndarray:
    """Bank table (rows, 7): bank at turn points p (units) with n dice left iff
    p * 50 >= thr_n[n]; the last row banks with every n."""
    p = np.arange(rows)[:, None] * POINT_UNIT
    bank = np.zeros((rows, 7), dtype=np.uint8)
    bank[:, 1:] = p >= thr_n[None, 1:]
    bank[-1, 1:] = 1
    return bank


def _rows_for(points: int) -> int:
    rows = points // POINT_UNIT + 2
    if rows > MAX_SLICE_ROWS:
        raise UserError(f"a policy that banks only from {points:,} turn points on cannot be "
                        f"evaluated exactly (at most {(MAX_SLICE_ROWS - 2) * POINT_UNIT:,})")
    return rows


class Grid(NamedTuple):
    """The game states a policy's slices are read at: totals (units) from ``-floor`` to the
    target, and ``streaks`` lost-turn counts (1 without the farkle penalty)."""

    t: int
    floor: int = 0
    streaks: int = 1

    @property
    def totals(self) -> np.ndarray:
        """Each index's total (units): ``index - floor``."""
        return np.arange(-self.floor, self.t)

    def shaped(self, normal: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``normal`` (S, S, U, U) and ``last`` (S, U, D) as the game reads them: without the
        penalty, (U, U) and (U, D)."""
        normal = np.ascontiguousarray(normal, dtype=np.int64)
        last = np.ascontiguousarray(last, dtype=np.int64)
        if self.streaks == 1 and self.floor == 0:
            return normal[0, 0], last[0]
        return normal, last


def _grid_shapes(grid: Grid, d_max: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    u = grid.floor + grid.t
    return (grid.streaks, grid.streaks, u, u), (grid.streaks, u, d_max)


def _keep_all_slices(tables: list[np.ndarray], normal: np.ndarray, last: np.ndarray,
                     grid: Grid) -> Slices:
    rows = max(b.shape[0] for b in tables)
    bank = np.ones((len(tables), rows, 7), dtype=np.uint8)
    bank[:, :, 0] = 0
    for s, b in enumerate(tables):
        bank[s, :b.shape[0]] = b
    return Slices(bank, np.zeros((1, 1, 7), np.float32), True, *grid.shaped(normal, last))


def _threshold_slices(spec: PolicySpec, grid: Grid, d_max: int) -> Slices:
    thr = np.full(7, spec.params["threshold"], dtype=np.int64)
    bank = _threshold_bank(thr, _rows_for(int(thr.max())))
    normal, last = _grid_shapes(grid, d_max)
    return _keep_all_slices([bank], np.zeros(normal, np.int64), np.zeros(last, np.int64),
                            grid)


def _ai_slices(spec: PolicySpec, grid: Grid, d_max: int) -> Slices:
    """``ai``: one slice per threshold level (deficit steps) and, with ``chase``, per
    last-round lead (the bank floor that beats the leader)."""
    params = ai_params(spec)
    keys: dict[tuple[int, ...], int] = {}
    tables: list[np.ndarray] = []

    def slice_of(deficit_units: int, floor: int) -> int:
        thr = np.zeros(7, dtype=np.int64)
        K.ai_thresholds(params, deficit_units * POINT_UNIT, floor, thr)
        key = tuple(int(x) for x in thr[1:])
        if key not in keys:
            keys[key] = len(tables)
            tables.append(_threshold_bank(thr, _rows_for(int(thr[1:].max()))))
        return keys[key]

    tot = grid.totals
    d = np.maximum(tot[None, :] - tot[:, None], 0)  # opponent minus own
    levels = {int(x): slice_of(int(x), 0) for x in np.unique(d)}
    normal_shape, last_shape = _grid_shapes(grid, d_max)
    normal = np.vectorize(levels.get, otypes=[np.int64])(d)
    chase = params[K.P_CHASE] != 0
    lead = np.array([slice_of(k, k * POINT_UNIT + 1 if chase else 0) for k in range(d_max)],
                    dtype=np.int64)
    return _keep_all_slices(tables, np.broadcast_to(normal, normal_shape),
                            np.broadcast_to(lead, last_shape), grid)


def _check_table(pt: PolicyTable, rules: FarkleRules) -> PolicyTable:
    """``pt``, if the exact head to head can play it under ``rules``: a table with
    lost-turn axes or totals below zero only under the farkle penalty."""
    if (pt.streaks != 1 or pt.floor != 0) and not rules.farkle_penalty:
        raise UserError(f"policy table '{pt.name}' plays the farkle penalty (lost-turn axes "
                        f"or totals below zero), which rules '{rules.name}' do not have")
    return pt


def _table_slices(pt: PolicyTable, grid: Grid, d_max: int) -> Slices:
    """A :class:`PolicyTable`, slice by slice, with the kernel's index clamping (totals
    and lost-turn counts clamped to the table's axes; in the last round the leader's count
    is 0)."""
    s_dim, m_dim, o_dim, rows = pt.dims
    values = [pt.value.reshape(-1, rows, 7)]
    banks = [pt.bank.reshape(-1, rows, 7)]
    tot = grid.totals
    own = np.clip(tot + pt.floor, 0, m_dim - 1)
    opp = np.clip(tot + pt.floor, 0, o_dim - 1)
    cnt = np.minimum(np.arange(grid.streaks), s_dim - 1)
    pair = (cnt[:, None] * s_dim + cnt[None, :])[:, :, None, None]
    normal = (pair * m_dim + own[None, None, :, None]) * o_dim + opp[None, None, None, :]
    lead = np.arange(d_max)[None, None, :]
    if pt.last_value is not None:
        last = s_dim * s_dim * m_dim * o_dim + np.minimum(lead, pt.last_value.shape[0] - 1)
        last = np.broadcast_to(last, _grid_shapes(grid, d_max)[1])
        values.append(pt.last_value)
        banks.append(pt.last_bank)
    else:  # the normal table, at the leader's total (its count 0)
        leader = np.clip(tot[None, :, None] + lead + pt.floor, 0, o_dim - 1)
        last = ((cnt[:, None, None] * s_dim) * m_dim + own[None, :, None]) * o_dim + leader
    return Slices(_joined(banks, np.uint8), _joined(values, np.float32), False,
                  *grid.shaped(normal, last))


def _joined(parts: list[np.ndarray], dtype) -> np.ndarray:
    """The parts as one contiguous array; a single contiguous part is not copied (a policy
    table can take gigabytes)."""
    return np.ascontiguousarray(parts[0] if len(parts) == 1 else np.concatenate(parts),
                                dtype=dtype)


def resolve(policy: str | PolicySpec | PolicyTable, rules: FarkleRules, target: int,
            progress: Callable[[float], None] | None = None) -> PolicySpec | PolicyTable:
    """A policy as the evaluation reads it: a ``threshold-T`` or ``ai`` spec, or the
    PolicyTable of an exact policy (solved or loaded from the cache; ``progress(fraction)``
    through an ``optimal-win`` solve)."""
    from dicelab.farkle.exact import policy_table

    if isinstance(policy, PolicyTable):
        return _check_table(policy, rules)
    spec = policy if isinstance(policy, PolicySpec) else parse_policy(policy, "farkle")
    if spec.game != "farkle":
        raise UserError(f"policy '{spec.name}' is a {spec.game} policy; exact head to head "
                        "of Farkle takes Farkle policies")
    if spec.family in ("threshold", "ai"):
        return spec
    return policy_table(spec, rules, target, 2, progress=progress)


def _normal_rows(policy: PolicySpec | PolicyTable) -> int:
    """Rows of the policy's turns outside the last round (how far one turn can bank)."""
    if isinstance(policy, PolicyTable):
        return policy.dims[3]
    if policy.family == "threshold":
        return _rows_for(policy.params["threshold"])
    p = policy.params
    return _rows_for(p["base"] + p["step"] * p["max-steps"])


def _slice_bytes(policy: PolicySpec | PolicyTable, grid: Grid, d_max: int, max_s: int) -> int:
    """Bytes of a policy's slices and their turn distributions (an upper estimate)."""
    if isinstance(policy, PolicyTable):
        s_dim, m_dim, o_dim, rows = policy.dims
        n = s_dim * s_dim * m_dim * o_dim + (
            0 if policy.last_value is None else policy.last_value.shape[0])
    else:
        n = d_max + 8 if policy.family == "ai" else 1
        rows = _normal_rows(policy) + d_max
    normal, last = _grid_shapes(grid, d_max)
    return (n * rows * 7 * 5 + n * (rows + max_s + 2) * 16
            + (math.prod(normal) + 3 * math.prod(last)) * 8)


def grid_of(rules: FarkleRules, target: int) -> Grid:
    """The states the evaluation reads a policy at under ``rules``: with the farkle
    penalty, totals down to the solvers' floor and three lost-turn counts."""
    if not rules.farkle_penalty:
        return Grid(target // POINT_UNIT)
    return Grid(target // POINT_UNIT, rules.penalty_floor(), PENALTY_STREAK)


def policy_slices(policy: PolicySpec | PolicyTable, target: int, d_max: int,
                  grid: Grid | None = None) -> Slices:
    """The turn slices of a resolved two-seat policy (:func:`resolve`; last-round leads up
    to ``d_max`` units) at the states of ``grid`` (default: no penalty)."""
    grid = Grid(target // POINT_UNIT) if grid is None else grid
    if isinstance(policy, PolicyTable):
        return _table_slices(policy, grid, d_max)
    if policy.family == "threshold":
        return _threshold_slices(policy, grid, d_max)
    return _ai_slices(policy, grid, d_max)


# ---------------------------------------------------------------------------------
# The evaluation


@dataclass(frozen=True)
class Outcome:
    """P(win), P(tie), P(loss) of one policy from the start of a game."""

    win: float
    tie: float

    @property
    def loss(self) -> float:
        return 1.0 - self.win - self.tie

    @property
    def score(self) -> float:
        """P(win) + P(tie)/2."""
        return self.win + 0.5 * self.tie

    def to_dict(self) -> dict[str, float]:
        return {"win": self.win, "tie": self.tie, "loss": self.loss, "score": self.score}


@dataclass(frozen=True)
class ExactPair:
    """Two Farkle policies head to head, exactly: ``first`` is ``policy``'s outcome when it
    moves first, ``second`` when ``opponent`` does; ``score`` averages the two seats."""

    policy: str
    opponent: str
    rules: str
    ending: str
    target: int
    first: Outcome
    second: Outcome
    elapsed_s: float
    from_cache: bool
    method: str = "exact"
    #: bound on the error of each probability: 0 (float rounding) without the farkle
    #: penalty, the iteration's estimate with it (:mod:`dicelab.farkle.penalty_pair`)
    tolerance: float = 0.0

    @property
    def score(self) -> float:
        return 0.5 * (self.first.score + self.second.score)

    @property
    def verdict(self) -> str:
        """``better``, ``worse`` or ``tie`` (the score within 1e-9 of one half)."""
        return exact_verdict(self.score)

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "opponent": self.opponent, "method": self.method,
                "rules": self.rules, "ending": self.ending, "target": self.target,
                "first": self.first.to_dict(), "second": self.second.to_dict(),
                "win_rate": 0.5 * (self.first.win + self.second.win),
                "tie_rate": 0.5 * (self.first.tie + self.second.tie),
                "score": self.score, "verdict": self.verdict, "tolerance": self.tolerance,
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache}


def legal_slices(slices: Slices, rules: FarkleRules) -> Slices:
    """The slices as the kernel plays them under the rules' bank floor: it banks only
    where a slice banks *and* the turn points reach ``bank_floor[n]`` (a threshold or
    ``ai`` seat at ``max(threshold, floor)``). Rows are added (copies of the last: the
    kernel's clamping) up to the first row where every dice count may bank."""
    if rules.standard_banking:
        return slices
    return slices._replace(bank=legal_bank(rules, slices.bank), value=slices.value
                           if slices.keep_all else _extend_rows(slices.value, rules))


def _extend_rows(table: np.ndarray, rules: FarkleRules) -> np.ndarray:
    rows = max(table.shape[-2], rules.min_bank // POINT_UNIT + 1)
    if rows == table.shape[-2]:
        return table
    extra = np.repeat(table[..., -1:, :], rows - table.shape[-2], axis=-2)
    return np.ascontiguousarray(np.concatenate([table, extra], axis=-2))


def turn_outcomes(slices: Slices, rules: FarkleRules) -> Side:
    """Every slice's exact turn result, and the policy's last turn against every lead the
    slices cover (what the game needs)."""
    rules.require_solvable("the exact head-to-head evaluation", must_roll=True,
                           penalty=slices.normal.ndim == 4)
    slices = legal_slices(slices, rules)
    sa = set_asides(rules)
    n_slices, rows = slices.bank.shape[:2]
    dist = np.zeros((n_slices, rows + sa.max_points + 1 + must_roll_rows(rules)))
    bust = np.zeros(n_slices)
    left = np.zeros(n_slices)
    _slice_distributions(sa.arrays(), slices.bank, slices.value, slices.keep_all, bust, left,
                         dist)
    width = dist.shape[1]
    tail = np.zeros((n_slices, width + 1))
    tail[:, :-1] = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]
    d = np.arange(slices.last.shape[-1])
    catch_win = np.where(d + 1 <= width, tail[slices.last, np.minimum(d + 1, width)], 0.0)
    catch_tie = np.where(d < width, dist[slices.last, np.minimum(d, width - 1)], 0.0)
    return Side(bust, dist, slices.normal, catch_win, catch_tie)


def _name(policy: str | PolicySpec | PolicyTable) -> str:
    if isinstance(policy, PolicyTable | PolicySpec):
        return policy.name
    return parse_policy(policy, "farkle").name


def lead_rows(policies, rules: FarkleRules, target: int) -> int:
    """How many last-round leads (units) the evaluation of these resolved policies must
    cover: from the lowest total (the penalty's floor) to the target, plus one turn's gain
    of any of them (with the extra rows of hot dice must-roll)."""
    return (target // POINT_UNIT + rules.penalty_floor() + max(_normal_rows(p) for p in policies)
            + set_asides(rules).max_points + 2 + must_roll_rows(rules))


def side_of(policy, rules: FarkleRules, target: int, d_max: int) -> Side:
    """One resolved policy's :class:`Side` (its memory checked first): what
    :func:`play_sides` reads, reusable against many opponents."""
    grid = grid_of(rules, target)
    check_memory(f"the exact evaluation to {target:,}",
                 _slice_bytes(policy, grid, d_max, set_asides(rules).max_points))
    return turn_outcomes(policy_slices(policy, target, d_max, grid), rules)


def play_sides(side_a: Side, side_b: Side, rules: FarkleRules, target: int
               ) -> dict[str, np.ndarray]:
    """The game's values for every score pair: ``a_win[a, b]``, ``a_tie[a, b]`` (A to move
    with A at ``a``, B at ``b`` units) and ``b_win[b, a]``, ``b_tie[b, a]`` (B to move);
    under the farkle penalty at no lost turns, with ``meta`` (see
    :func:`dicelab.farkle.penalty_pair.play_penalty`)."""
    if rules.farkle_penalty:
        from dicelab.farkle.penalty_pair import play_penalty

        return play_penalty(side_a, side_b, rules, target)
    t = target // POINT_UNIT
    out = {k: np.zeros((t, t)) for k in ("a_win", "a_tie", "b_win", "b_tie")}
    ftb = rules.ending_code == FIRST_TO_BANK
    for diag in range(2 * t - 2, -1, -1):
        _play_diagonal(diag, t, ftb, side_a, side_b, out["a_win"], out["a_tie"],
                       out["b_win"], out["b_tie"])
    return out


def outcomes_of(values: dict[str, np.ndarray]) -> tuple[Outcome, Outcome]:
    """(A's outcome moving first, A's outcome moving second) from :func:`play_sides`."""
    first = Outcome(float(values["a_win"][0, 0]), float(values["a_tie"][0, 0]))
    b_first = Outcome(float(values["b_win"][0, 0]), float(values["b_tie"][0, 0]))
    return first, Outcome(b_first.loss, b_first.tie)


def evaluate(policy_a, policy_b, rules: FarkleRules, target: int,
             progress: Callable[[float], None] | None = None) -> dict[str, np.ndarray]:
    """:func:`play_sides` of two policies (names, specs or PolicyTables);
    ``progress(fraction)`` through the solves of exact policies (each half)."""
    resolved = [resolve(p, rules, target, None if progress is None else
                        (lambda f, k=k: progress((k + f) / 2)))
                for k, p in enumerate((policy_a, policy_b))]
    d_max = lead_rows(resolved, rules, target)
    return play_sides(*(side_of(p, rules, target, d_max) for p in resolved), rules, target)


def exact_pair(policy: str | PolicySpec | PolicyTable, opponent: str | PolicySpec | PolicyTable,
               *, rules: str | FarkleRules | None = None, target: int | None = None,
               ending: str | None = None, use_cache: bool = True,
               progress: Callable[[float], None] | None = None) -> ExactPair:
    """``policy`` against ``opponent`` in a two-seat Farkle game, exactly.

    Named policies' evaluations are cached on disk (key: both names, the rules' content,
    the target); a PolicyTable's are not. ``progress(fraction)``: through the solves of
    exact policies (an evaluation from the cache needs none).

    >>> p = exact_pair("threshold-300", "threshold-300", target=1000)
    >>> p.verdict, round(p.first.score + p.second.score, 12)
    ('tie', 1.0)
    """
    rules = load_rules(rules, ending)
    rules.require_solvable("the exact head-to-head evaluation", must_roll=True, penalty=True)
    target = check_target(target)
    a, b = _name(policy), _name(opponent)
    t0 = time.perf_counter()

    def build() -> dict[str, np.ndarray]:
        return evaluate(policy, opponent, rules, target, progress)

    named = not any(isinstance(p, PolicyTable) for p in (policy, opponent))
    if use_cache and named:
        key = cache.entry_key("farkle-exact-pair", rules.name, rules.digest(), t=target,
                              a=text_digest([a, b])[:12])
        arrays, from_cache = cache.cached(key, f"{FORMAT_VERSION}:{a}:{b}", build)
    else:
        arrays, from_cache = build(), False
    first, second = outcomes_of(arrays)
    tolerance = float(arrays["meta"][0]) if "meta" in arrays else 0.0
    return ExactPair(a, b, rules.name, rules.ending, target, first, second,
                     time.perf_counter() - t0, from_cache, tolerance=tolerance)


__all__ = [
    "ExactPair",
    "Outcome",
    "Side",
    "Slices",
    "bank_sums",
    "cycle_outcomes",
    "evaluate",
    "exact_pair",
    "lead_rows",
    "outcomes_of",
    "play_sides",
    "policy_slices",
    "resolve",
    "side_of",
    "turn_outcomes",
]
