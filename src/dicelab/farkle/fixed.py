"""Fixed Farkle policies as the game engine reads them: turn slices and their endings.

Every policy the engine reads as a fixed player is turned into *turn slices*: the
(bank, value) tables through which the simulation kernel plays it at each game state
(its lost turns in a row, the other's, its total, the other's; in the last round, its
total and the leader's lead). Each slice's turn has an exact ending
(P(lost turn), P(bank a gain of g) for every g), from the forward pass of fixed turns
(:func:`dicelab.farkle.solitaire.endings`). The slices are the policies as the kernel
plays them -- the same set-aside choice (the first strict maximum of the float32 value,
in the model's option order), the same clamping of table rows, the same ``ai`` rule
(:func:`dicelab.farkle.kernels.ai_thresholds`) -- so Monte Carlo runs converge to what
the engine computes from them.

A policy the engine reads is a :class:`FixedPolicy`: an object that gives its own
slices. dicelab's policies are such objects (:mod:`dicelab.farkle.builtin`: a
``threshold-T``, ``ai``, a policy table; the registry's families make them), and so is a
user's bank rule (:class:`dicelab.farkle.policy.BankRule`). This module builds the
pieces they share and never asks which policy it holds.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol

import numpy as np

from dicelab import cache
from dicelab.errors import UserError
from dicelab.farkle.engine.model import model
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import POINT_UNIT, FarkleRules
from dicelab.farkle.solitaire import endings, legal_bank
from dicelab.registry import parse_policy
from dicelab.resources import check_memory

#: Slices from which their endings are kept in the table cache: a policy table's (tens of
#: thousands at 10,000; 20 to 40 s to follow forwards); fewer are followed again.
CACHED_SLICES = 5000
#: Bump when the cached turn endings' arrays change.
ENDINGS_FORMAT = 1
#: The most rows (turn points, units of 50) a turn slice may have: a policy that keeps
#: rolling far beyond that (``threshold-1000000``) is refused before anything is built.
MAX_SLICE_ROWS = 4096


class Grid(NamedTuple):
    """The game states a policy is read at: total indices ``0 .. u - 1`` (index = total in
    units plus ``floor``), ``streak`` lost-turn counts, last-round leads below ``d``."""

    u: int
    floor: int
    streak: int
    d: int

    @property
    def totals(self) -> np.ndarray:
        """Each index's total (units): ``index - floor``."""
        return np.arange(self.u) - self.floor

    @property
    def normal_shape(self) -> tuple[int, int, int, int]:
        return self.streak, self.streak, self.u, self.u

    @property
    def last_shape(self) -> tuple[int, int, int]:
        return self.streak, self.u, self.d


def grid_of(rules: FarkleRules, target: int, d: int) -> Grid:
    """The states of a game to ``target`` under ``rules``: totals down to the rules'
    floor, their lost-turn counts, last-round leads below ``d`` units."""
    m = model(rules)
    return Grid(target // POINT_UNIT + m.floor, m.floor, m.streak, d)


class Slices(NamedTuple):
    """A policy as turn slices: ``bank[s]`` (uint8, (P, 7)) and ``value[s]`` (float32,
    (P, 7); unused with ``keep_all``) are slice ``s``; ``normal[s, r, x, y]``: the slice at
    its count, the other's, its index, the other's; ``last[s, x, d]``: the slice of a last
    turn at index ``x`` that must beat a lead of ``d`` units."""

    bank: np.ndarray
    value: np.ndarray
    keep_all: bool
    normal: np.ndarray
    last: np.ndarray


class Side(NamedTuple):
    """One fixed policy's side of the game: its turns' exact endings, and its last turn
    against every lead."""

    bust: np.ndarray  # (S,)
    dist: np.ndarray  # (S, G): P(bank a gain of g units)
    normal: np.ndarray  # (K, K, U, U): the slice at (its count, the other's, its index, ...)
    catch_win: np.ndarray  # (K, U, D): P(its last turn beats a lead of d) from index x
    catch_tie: np.ndarray  # (K, U, D): P(it ends level)


class FixedPolicy(Protocol):
    """A policy as the engine reads it: its turn slices at the states of a grid."""

    name: str
    #: it plays the same under the rules without the farkle penalty (its turns read no
    #: run of lost turns), so a best response to it may start from that game's solution
    same_without_penalty: bool

    def normal_rows(self, rules: FarkleRules, target: int) -> int:
        """Rows (turn points, units of 50) of its turns outside the last round."""

    def slice_extent(self, grid: Grid) -> tuple[int, int]:
        """(slices, rows) at most, for the memory check before they are built."""

    def slices(self, grid: Grid, rules: FarkleRules) -> tuple:
        """The fields of its :class:`Slices` at the states of ``grid``."""


def rows_for(points: int) -> int:
    rows = points // POINT_UNIT + 2
    if rows > MAX_SLICE_ROWS:
        raise UserError(f"a policy that banks only from {points:,} turn points on cannot be "
                        f"evaluated exactly (at most {(MAX_SLICE_ROWS - 2) * POINT_UNIT:,})")
    return rows


def keep_all_slices(tables: list[np.ndarray], normal: np.ndarray, last: np.ndarray
                     ) -> Slices:
    rows = max(b.shape[0] for b in tables)
    bank = np.ones((len(tables), rows, 7), dtype=np.uint8)
    bank[:, :, 0] = 0
    for s, b in enumerate(tables):
        bank[s, :b.shape[0]] = b
    return Slices(bank, np.zeros((1, 1, 7), np.float32), True,
                  np.ascontiguousarray(normal, dtype=np.int64),
                  np.ascontiguousarray(last, dtype=np.int64))


def table_slices(pt: PolicyTable, grid: Grid, rules: FarkleRules) -> Slices:
    """A :class:`PolicyTable`, slice by slice, with the kernel's index clamping (totals
    and lost-turn counts clamped to the table's axes; in the last round the leader's count
    is 0): a table with lost-turn axes or totals below zero only where lost turns in a
    row matter."""
    if (pt.streaks != 1 or pt.floor != 0) and model(rules).streak == 1:
        raise UserError(f"policy table '{pt.name}' plays the farkle penalty (lost-turn axes "
                        f"or totals below zero), which rules '{rules.name}' do not have")
    if pt.last_round != "rule":
        raise UserError(f"policy table '{pt.name}' chases in the last round: evaluate the "
                        "bank rule it was made of, which the engine reads directly")
    s_dim, m_dim, o_dim, rows = pt.dims
    values = [pt.value.reshape(-1, rows, 7)]
    banks = [pt.bank.reshape(-1, rows, 7)]
    tot, cnt = grid.totals, np.arange(grid.streak)
    shape = (s_dim, s_dim, m_dim, o_dim)
    normal = np.ravel_multi_index(pt.clamped(cnt[:, None, None, None], cnt[:, None, None],
                                             tot[:, None], tot), shape)
    lead = np.arange(grid.d)[None, None, :]
    if pt.last_value is not None:
        last = s_dim * s_dim * m_dim * o_dim + np.minimum(lead, pt.last_value.shape[0] - 1)
        values.append(pt.last_value)
        banks.append(pt.last_bank)
    else:  # the normal table, at the leader's total (its count 0)
        last = np.ravel_multi_index(pt.clamped(cnt[:, None, None], 0, tot[:, None],
                                               tot[:, None] + lead), shape)
    return Slices(joined(banks, np.uint8), joined(values, np.float32), pt.keep_all,
                  np.ascontiguousarray(np.broadcast_to(normal, grid.normal_shape),
                                       dtype=np.int64),
                  np.ascontiguousarray(np.broadcast_to(last, grid.last_shape),
                                       dtype=np.int64))


def joined(parts: list[np.ndarray], dtype) -> np.ndarray:
    """The parts as one contiguous array; a single contiguous part is not copied (a policy
    table can take gigabytes)."""
    return np.ascontiguousarray(parts[0] if len(parts) == 1 else np.concatenate(parts),
                                dtype=dtype)


def name_of(policy) -> str:
    """A policy's name: a name as typed (parsed), or the object's own."""
    if isinstance(policy, str):
        return parse_policy(policy, "farkle").name
    return policy.name


def policy_slices(policy: FixedPolicy, grid: Grid, rules: FarkleRules) -> Slices:
    """The turn slices of a policy as the engine reads it
    (:func:`dicelab.farkle.exact.resolve`) at the states of ``grid``, as the kernel plays
    them (:func:`legal_bank`; a slice's value rows are clamped as its bank rows)."""
    slices = Slices(*policy.slices(grid, rules))
    return slices._replace(bank=legal_bank(rules, slices.bank))


def slice_endings(slices: Slices, rules: FarkleRules) -> tuple[np.ndarray, np.ndarray]:
    """Every slice's P(lost turn) and P(bank at row i) (:func:`~dicelab.farkle.solitaire.
    endings`). The endings of :data:`CACHED_SLICES` slices or more (a policy table's, one
    slice per state) are kept in the table cache under a digest of the slices, so an
    evaluation against the same table again reads them."""
    value = None if slices.keep_all else slices.value
    if slices.bank.shape[0] < CACHED_SLICES:
        return endings(rules, slices.bank, value)[:2]

    def build() -> dict[str, np.ndarray]:
        return dict(zip(("bust", "dist"), endings(rules, slices.bank, value)[:2], strict=True))

    what = (slices.bank,) if value is None else (slices.bank, value)
    key = cache.entry_key("farkle-turn-endings", rules.name, rules.digest(),
                          s=cache.digest(*what)[:16])
    arrays, _ = cache.cached(key, str(ENDINGS_FORMAT), build, rules.cache_about())
    return arrays["bust"], arrays["dist"]


def turn_outcomes(slices: Slices, rules: FarkleRules) -> Side:
    """Every slice's exact turn ending, and the policy's last turn against every lead the
    slices cover (what the game needs)."""
    m = model(rules)
    bust, dist = slice_endings(slices, rules)
    if m.first_to_bank:  # no last round: no last turn to catch up with
        zero = np.zeros(slices.last.shape)
        return Side(bust, dist, slices.normal, zero, zero.copy())
    width = dist.shape[1]
    # P(bank at least g) of the slices a last turn plays (a table's normal slices, often
    # tens of thousands, play none)
    used, at = np.unique(slices.last, return_inverse=True)
    tail = np.zeros((len(used), width + 1))
    tail[:, :-1] = np.cumsum(dist[used, ::-1], axis=1)[:, ::-1]
    d = np.arange(slices.last.shape[-1])
    catch_win = np.where(d + 1 <= width,
                         tail[at.reshape(slices.last.shape), np.minimum(d + 1, width)], 0.0)
    catch_tie = np.where(d < width, dist[slices.last, np.minimum(d, width - 1)], 0.0)
    return Side(bust, dist, slices.normal, catch_win, catch_tie)


def lead_rows(policies, rules: FarkleRules, target: int) -> int:
    """How many last-round leads (units) an evaluation of these resolved policies must
    cover: from the lowest total (the floor) to the target, plus one turn's gain of any
    of them (with the rows of six dice rolling on)."""
    m = model(rules)
    return (target // POINT_UNIT + m.floor
            + max(p.normal_rows(rules, target) for p in policies)
            + m.max_points + 2 + m.six_rows)


def side_of(policy, rules: FarkleRules, target: int, d: int) -> Side:
    """One resolved policy's :class:`Side` over leads below ``d`` (its memory checked
    first)."""
    grid = grid_of(rules, target, d)
    n, rows = policy.slice_extent(grid)  # bytes of its slices and their endings, at most:
    check_memory(f"the exact evaluation to {target:,}",
                 n * rows * 7 * 5 + n * (rows + model(rules).max_points + 2) * 16
                 + (math.prod(grid.normal_shape) + 3 * math.prod(grid.last_shape)) * 8)
    return turn_outcomes(policy_slices(policy, grid, rules), rules)


__all__ = ["CACHED_SLICES", "MAX_SLICE_ROWS", "FixedPolicy", "Grid", "Side", "Slices",
           "grid_of", "joined", "keep_all_slices", "lead_rows", "name_of", "policy_slices",
           "rows_for", "side_of", "slice_endings", "table_slices", "turn_outcomes"]
