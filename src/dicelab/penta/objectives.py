"""Penta solitaire for objectives beyond the expected score, solved exactly (layer 2).

An *objective* is a function ``u`` of the final TOTAL; its policy maximises ``E[u(TOTAL)]``
over every way of playing, and ``solve_objective`` finds that maximum exactly:

==================  ===========================================================  ===========
objective           ``u(TOTAL)``                                                  state
==================  ===========================================================  ===========
``mean``            TOTAL (today's ``optimal``)                                   the card
``at-least:T``      1 if TOTAL >= T, else 0: the chance of reaching T              card, need
``utility:theta=X`` ``sign(X) exp(X TOTAL)``: risk-seeking (X > 0), -averse (< 0)   the card
``beat:N``          the win share against N independent ``optimal`` players        card, need
==================  ===========================================================  ===========

``mean`` and ``utility`` need only the card: ``exp(X (a + b)) = exp(X a) exp(X b)``, so
the points already scored factor out and one value per turn-start state is enough (the
solver's state groups, :func:`dicelab.penta.solver.solve_state_objective`). ``at-least``
and ``beat`` depend on the points already scored: their values live on (state, *need*)
pairs, a :class:`~dicelab.penta.widget.RowTable` with one row of needs per state
(:func:`dicelab.penta.solver.solve_rows`). For ``at-least:T`` the need is ``T - x``
(``x`` the TOTAL so far): ``P(x + F >= T) = P(F >= T - x)`` depends on ``x`` and ``T``
only through it, so *one* table of needs ``d = 1 .. maxF(state)`` holds P(final >= T)
for every state, every score so far and every T at once (:func:`at_least_table`; 2.3 GB,
cached on disk and memory-mapped). A need of 0 or less is met (1); a need above the most
the state can still score is out of reach (0). One T needs only the needs that score so
far can leave: ``T - xmax(s) .. T - xmin(s)``, the bounds of the TOTAL so far a state
can have (:func:`score_bounds`). ``beat:N`` is ``u`` of the TOTAL on needs ``x_sat - x``,
where ``x_sat`` is the first TOTAL whose win share is 1 in float64 (from the exact
distribution of ``optimal``'s score).

Decisions are taken on demand from these values (:func:`dicelab.penta.widget.decide_lane`),
ties settled by ``optimal``'s values: see :mod:`dicelab.penta.objective_play`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from numba import njit

from dicelab import cache as disk_cache
from dicelab.errors import UserError
from dicelab.penta.rules import (
    FACES,
    N_BOXES,
    N_STATES,
    PENTA_BOX,
    RuleSet,
    get_rules,
    state_fifty,
    state_index,
    state_mask,
    state_up,
)
from dicelab.penta.scoring import MAX_TOTAL, TABLES, apply_box, roll_box_scores
from dicelab.penta.solver import (
    layer_states,
    solve,
    solve_rows,
    solve_state_objective,
)
from dicelab.penta.widget import RowTable, row_value
from dicelab.resources import check_memory
from dicelab.text import parse_decimal, parse_int

#: Notices of long solves (the CLI shows INFO on stderr; a library user through logging).
log = logging.getLogger(__name__)

#: Objective kinds, in the order of the docs.
KINDS = ("mean", "at-least", "utility", "beat")
#: The largest |theta| of ``utility``: ``exp(theta * MAX_TOTAL)`` must stay a normal float64
#: (``exp(0.4 * 1575)`` is 1e273).
THETA_MAX = 0.4
#: The smallest |theta| of ``utility``: below it ``E[exp(theta TOTAL)]`` differs from 1 by
#: too little for float64, and the certainty equivalent ``log(E) / theta`` is rounding
#: noise; such a theta is the expected score (``mean``).
THETA_MIN = 1e-6
#: The most opponents of ``beat:N``.
BEAT_MAX = 100
#: Bump when the tables' layout or their computation changes.
FORMAT_VERSION = 1
_SYNTAX = "mean, at-least:T, utility:theta=X or beat:N"


@dataclass(frozen=True)
class Objective:
    """A parsed objective (see the module docstring); :attr:`name` is its canonical text."""

    kind: str
    target: int | None = None
    theta: float | None = None
    opponents: int | None = None

    @property
    def name(self) -> str:
        if self.kind == "at-least":
            return f"at-least:{self.target}"
        if self.kind == "utility":
            return f"utility:theta={self.theta!r}"
        if self.kind == "beat":
            return f"beat:{self.opponents}"
        return "mean"

    @property
    def unit(self) -> str:
        """What the objective's value is, in words."""
        return {"mean": "expected final score",
                "at-least": f"P(final score >= {self.target})",
                "utility": "certainty equivalent (points)",
                "beat": f"win share against {self.opponents} optimal player"
                        + ("s" if (self.opponents or 0) > 1 else "")}[self.kind]

    @property
    def on_rows(self) -> bool:
        """Whether the values depend on the score so far (a row of needs per state)."""
        return self.kind in ("at-least", "beat")

    def __str__(self) -> str:
        return self.name


def parse_objective(text: str) -> Objective:
    """``mean``, ``at-least:T`` (T = 0 .. 1575, the possible TOTALs), ``utility:theta=X``
    (1e-6 <= |X| <= 0.4) or ``beat:N`` (N = 1 .. 100); ``UserError`` otherwise.

    >>> parse_objective("at-least:300").name, parse_objective(" utility:theta=-0.01 ").theta
    ('at-least:300', -0.01)
    """
    raw = text
    text = text.strip().lower()
    kind, sep, arg = text.partition(":")
    if kind == "mean" and not sep:
        return Objective("mean")
    if kind == "at-least" and sep:
        try:
            t = parse_int(arg.strip())
        except ValueError:
            raise UserError(f"objective '{raw}': T must be an integer, e.g. at-least:300"
                            ) from None
        if not 0 <= t <= MAX_TOTAL:
            raise UserError(f"objective '{raw}': T must be a possible final score, 0 to "
                            f"{MAX_TOTAL}, not {t}")
        return Objective("at-least", target=t)
    if kind == "utility" and sep:
        key, eq, value = arg.partition("=")
        if key.strip() != "theta" or not eq:
            raise UserError(f"objective '{raw}': write utility:theta=X, e.g. "
                            "utility:theta=0.01 (risk-seeking) or utility:theta=-0.01")
        try:
            theta = parse_decimal(value)
        except ValueError:
            raise UserError(f"objective '{raw}': theta must be a number") from None
        if theta == 0.0:
            raise UserError(f"objective '{raw}': theta 0 is the expected score: use mean")
        if abs(theta) < THETA_MIN:
            raise UserError(f"objective '{raw}': |theta| must be at least {THETA_MIN:g} "
                            "(a smaller theta is the expected score within rounding: use "
                            "mean)")
        if abs(theta) > THETA_MAX:
            raise UserError(f"objective '{raw}': |theta| must be at most {THETA_MAX} "
                            "(exp(theta x TOTAL) must fit a float)")
        return Objective("utility", theta=theta)
    if kind == "beat" and sep:
        try:
            n = parse_int(arg.strip())
        except ValueError:
            raise UserError(f"objective '{raw}': N must be an integer, e.g. beat:1") from None
        if not 1 <= n <= BEAT_MAX:
            raise UserError(f"objective '{raw}': N must be 1 to {BEAT_MAX}, not {n}")
        return Objective("beat", opponents=n)
    raise UserError(f"unknown objective '{raw}'; valid: {_SYNTAX}")


# --- bounds of the score ------------------------------------------------------------------


@njit(cache=True)
def _transitions(rp, T, s, gains, nexts):
    """Every (points gained, next state) a turn from state ``s`` can end in, some several
    times (each score class of each open box; a Penta's joker and bonus entries): the
    number written into ``gains``/``nexts``."""
    mask, up, fifty = state_mask(s), state_up(s), state_fifty(s)
    n = 0
    for b in range(N_BOXES):
        if (mask >> b) & 1:
            continue
        for c in range(T.n_classes[b]):
            pts, nu, nf = apply_box(up, fifty, b, T.class_score[b, c])
            gains[n] = pts
            nexts[n] = state_index(mask | (1 << b), nu, nf)
            n += 1
    if (mask >> PENTA_BOX) & 1:
        scores = np.empty(N_BOXES, dtype=np.int64)
        for f in range(1, FACES + 1):
            bonus = roll_box_scores(rp, T, mask, fifty, T.penta_roll[f], scores)
            for b in range(N_BOXES):
                if scores[b] >= 0:
                    pts, nu, nf = apply_box(up, fifty, b, scores[b])
                    gains[n] = pts + bonus
                    nexts[n] = state_index(mask | (1 << b), nu, nf)
                    n += 1
    return n


@njit(cache=True)
def _bounds(layers, rp, T, most, xmin, xmax):
    """``most[s]``: the most points still to come from ``s``; ``xmin``/``xmax[s]``: the
    least and most TOTAL so far a game can reach ``s`` with (over every transition of
    :func:`_transitions`, which holds every real one)."""
    gains = np.empty(512, dtype=np.int64)
    nexts = np.empty(512, dtype=np.int64)
    n_layers = len(layers)
    for i in range(n_layers - 2, -1, -1):
        for s in layers[i]:
            m = 0
            for q in range(_transitions(rp, T, s, gains, nexts)):
                m = max(m, gains[q] + most[nexts[q]])
            most[s] = m
    xmin[0] = 0
    xmax[0] = 0
    for i in range(n_layers - 1):
        for s in layers[i]:
            for q in range(_transitions(rp, T, s, gains, nexts)):
                j = nexts[q]
                xmin[j] = min(xmin[j], xmin[s] + gains[q])
                xmax[j] = max(xmax[j], xmax[s] + gains[q])


@dataclass(frozen=True)
class ScoreBounds:
    """Per state index (int64[N_STATES]): ``most`` points still to come, the least and
    most TOTAL so far (``xmin``, ``xmax``); unreachable states hold -1."""

    most: np.ndarray
    xmin: np.ndarray
    xmax: np.ndarray


@cache
def _score_bounds(rules: RuleSet) -> ScoreBounds:
    from numba.typed import List

    layers = List(layer_states())
    most = np.full(N_STATES, -1, dtype=np.int64)
    most[layer_states()[N_BOXES]] = 0
    xmin = np.full(N_STATES, np.iinfo(np.int64).max, dtype=np.int64)
    xmax = np.full(N_STATES, -1, dtype=np.int64)
    _bounds(layers, rules.params, TABLES, most, xmin, xmax)
    xmin[xmax < 0] = -1
    return ScoreBounds(most, xmin, xmax)


def score_bounds(rules: str | RuleSet | None = None) -> ScoreBounds:
    """:class:`ScoreBounds` of ``rules`` (computed once per process, in about a second).

    >>> b = score_bounds("seed")
    >>> int(b.most[0]), int(b.xmin[0]), int(b.xmax[0])
    (1575, 0, 0)
    """
    return _score_bounds(rules if isinstance(rules, RuleSet) else get_rules(rules))


# --- row tables ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RowSpec:
    """What a row table holds: per state index the needs ``lo[s] .. lo[s] + width[s] - 1``
    (width 0 for an unreachable state), the value ``low`` below a row and ``high`` above
    it, and the full card's rows (``final(d)``, vectorised over needs; None: zeros)."""

    lo: np.ndarray
    width: np.ndarray
    low: float
    high: float
    final: Callable[[np.ndarray], np.ndarray] | None = None

    @property
    def n_values(self) -> int:
        return int(self.width.sum())

    @property
    def nbytes(self) -> int:
        """Bytes of the table: the values, two sentinels per state, ``off``/``lo``/``width``."""
        return 8 * (self.n_values + 2 * N_STATES) + 3 * 8 * N_STATES


def at_least_rows(bounds: ScoreBounds, target: int | None) -> RowSpec:
    """The needs of ``at-least:target`` (``None``: every target, needs 1 .. most)."""
    if target is None:
        lo = np.ones(N_STATES, dtype=np.int64)
        hi = bounds.most
    else:
        lo = np.maximum(1, target - bounds.xmax)
        hi = np.minimum(bounds.most, target - bounds.xmin)
    return _spec(bounds, lo, hi, 1.0, 0.0)


def _spec(bounds: ScoreBounds, lo: np.ndarray, hi: np.ndarray, low: float, high: float,
          final: Callable[[np.ndarray], np.ndarray] | None = None) -> RowSpec:
    reach = bounds.xmax >= 0
    width = np.where(reach, np.maximum(0, hi - lo + 1), 0).astype(np.int64)
    return RowSpec(np.where(reach, lo, 0).astype(np.int64), width, low, high, final)


def tie_rows(bounds: ScoreBounds) -> RowSpec:
    """The needs ``d >= 0`` of the two-threshold table ``max E[(1[F >= d] + 1[F >= d + 1])
    / 2]`` (``F`` the points to come): the chance of finishing above a known score, a tie
    counting half."""
    return _spec(bounds, np.zeros(N_STATES, dtype=np.int64), bounds.most, 1.0, 0.0,
                 final=lambda d: np.where(d == 0, 0.5, 0.0))


def utility_rows(bounds: ScoreBounds, u: np.ndarray) -> tuple[RowSpec, int]:
    """The needs ``x_sat - x`` of ``max E[u(TOTAL)]`` for a non-decreasing ``u`` over
    TOTALs 0..MAX_TOTAL (constant from ``x_sat`` on, or past the end), and ``x_sat``."""
    top = float(u[-1])
    flat = np.flatnonzero(u != top)
    x_sat = int(flat[-1]) + 1 if flat.size else 0
    vals = np.asarray(u, dtype=np.float64)
    return _spec(bounds, np.maximum(1, x_sat - bounds.xmax), x_sat - bounds.xmin, top, 0.0,
                 final=lambda d: vals[np.clip(x_sat - d, 0, vals.size - 1)]), x_sat


def new_row_table(spec: RowSpec, what: str) -> RowTable:
    """Allocate and initialise a :class:`RowTable` for ``spec`` (sentinels set, the full
    card's rows filled, the rest to be solved); refused before allocating if it does not
    fit the memory limit."""
    check_memory(what, spec.nbytes)
    width = spec.width
    off = row_offsets(width)
    F = np.empty(int(off[-1] + width[-1] + 2))
    F[off] = spec.low
    F[off + 1 + width] = spec.high
    for s in layer_states()[N_BOXES]:
        w = int(width[s])
        if w > 0:
            d = spec.lo[s] + np.arange(w)
            F[off[s] + 1:off[s] + 1 + w] = 0.0 if spec.final is None else spec.final(d)
    return RowTable(F, off, spec.lo, width)


def row_offsets(width: np.ndarray) -> np.ndarray:
    """Where each state's row starts (its low sentinel) in a table of these widths."""
    size = width + 2
    return (np.cumsum(size) - size).astype(np.int64)


def row_lookup(R: RowTable, state: int, need: int) -> float:
    """The value of ``need`` in ``state``'s row of ``R``."""
    return float(row_value(R, int(state), int(need)))


def start_values(R: RowTable, state: int = 0) -> np.ndarray:
    """``state``'s whole row of ``R`` with its two sentinels: values of needs ``lo - 1 ..
    lo + width``."""
    o, w = int(R.off[state]), int(R.width[state])
    return np.asarray(R.F[o:o + w + 2]).copy()


# --- solutions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectiveSolution:
    """A solved objective under one rule set.

    ``value``: the optimum of ``E[u(TOTAL)]`` from an empty card (``utility``: its
    certainty equivalent in points, see :attr:`certainty_equivalent`); ``values``: a value
    per state (``mean``, ``utility``) or ``rows`` (``at-least``, ``beat``) with ``start``,
    the need of the empty card; ``elapsed_s`` this call, ``solve_s`` the solve itself
    (kept by the cache), ``from_cache``; ``table``: where ``at-least`` values came from
    (``"one target"`` or ``"every target"``).
    """

    objective: Objective
    rules: RuleSet
    raw_value: float
    elapsed_s: float
    solve_s: float
    from_cache: bool
    values: np.ndarray | None = None
    mult: np.ndarray | None = None
    rows: RowTable | None = None
    start: int = 0
    table: str | None = None
    n_values: int = 0
    nbytes: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def value(self) -> float:
        """The optimum in the objective's unit (:attr:`Objective.unit`)."""
        if self.objective.kind == "utility":
            return self.certainty_equivalent
        return self.raw_value

    @property
    def certainty_equivalent(self) -> float:
        """``utility``: the sure TOTAL worth as much, ``log(sign(theta) E[u]) / theta``."""
        th = self.objective.theta or 0.0
        return math.log(math.copysign(1.0, th) * self.raw_value) / th

    def to_dict(self) -> dict:
        return {"game": "penta", "rules": self.rules.name, "objective": self.objective.name,
                "unit": self.objective.unit, "value": self.value,
                "expected_utility": self.raw_value if self.objective.kind == "utility"
                else None, "values": self.n_values, "bytes": self.nbytes,
                "table": self.table, "elapsed_s": self.elapsed_s, "solve_s": self.solve_s,
                "from_cache": self.from_cache}


def utility_mult(theta: float) -> np.ndarray:
    """``exp(theta g)`` for gains ``g = 0 .. MAX_TOTAL``: the factor a utility's value takes
    for ``g`` points."""
    return np.exp(theta * np.arange(MAX_TOTAL + 1, dtype=np.float64))


def _key(kind: str, rules: RuleSet, **parts) -> str:
    return disk_cache.entry_key(f"penta-{kind}", rules.name, rules.digest, **parts)


def _state_entry(objective: Objective, rs: RuleSet) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    what = f"the Penta {objective.name} value table (rules '{rs.name}')"
    check_memory(what, 8 * N_STATES * 2)
    log.info("solving %s: this can take a minute", what)
    V = np.full(N_STATES, np.nan)
    mult = utility_mult(objective.theta) if objective.kind == "utility" else np.zeros(0)
    V[layer_states()[N_BOXES]] = math.copysign(1.0, objective.theta) if mult.size else 0.0
    solve_state_objective(V, rs, mult)
    return {"values": V, "solve_s": np.array(time.perf_counter() - t0)}


def _row_entry(spec: RowSpec, rs: RuleSet, what: str,
               progress: Callable[[int, int], None] | None) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    R = new_row_table(spec, what)
    log.info("solving %s: this can take minutes", what)
    solve_rows(R, rs, progress=progress)
    return {"F": R.F, "lo": R.lo, "width": R.width, "solve_s": np.array(time.perf_counter() - t0)}


def rows_of(arrays: dict[str, np.ndarray]) -> RowTable:
    """The :class:`RowTable` of a stored row table (``F``, ``lo``, ``width``)."""
    width = np.asarray(arrays["width"], dtype=np.int64)
    return RowTable(arrays["F"], row_offsets(width), np.asarray(arrays["lo"], dtype=np.int64),
                    width)


def cached_rows(key: str, version: str, build: Callable[[], dict[str, np.ndarray]]
                 ) -> tuple[dict[str, np.ndarray], bool]:
    """A row table's arrays from the cache (``F`` memory-mapped), else built and stored;
    and whether they came from the cache."""
    arrays = disk_cache.load_mapped(key, version, {"F"})
    if arrays is not None and {"F", "lo", "width", "solve_s"} <= arrays.keys():
        return arrays, True
    arrays = build()
    disk_cache.store(key, version, arrays)
    return arrays, False


_MEMO: dict[tuple[str, str], ObjectiveSolution] = {}


def opponent_share(pmf: np.ndarray, n: int) -> np.ndarray:
    """``u[m]``: the expected win share of a final TOTAL ``m`` (0..MAX_TOTAL) against ``n``
    independent players whose TOTAL has distribution ``pmf``; a top shared by ``k + 1``
    players counts ``1 / (k + 1)``.

    >>> opponent_share(np.array([0.5, 0.5, 0.0]), 1).tolist()
    [0.25, 0.75, 1.0]
    """
    p = np.asarray(pmf, dtype=np.float64)
    below = np.cumsum(p) - p
    u = np.zeros(p.size)
    for k in range(n + 1):
        u += math.comb(n, k) * p ** k * below ** (n - k) / (k + 1)
    return u


def score_utility(objective: Objective, rules: RuleSet) -> np.ndarray:
    """``u[m]``: the objective's function of the final TOTAL ``m`` = 0..MAX_TOTAL."""
    m = np.arange(MAX_TOTAL + 1, dtype=np.float64)
    if objective.kind == "mean":
        return m
    if objective.kind == "at-least":
        return (m >= objective.target).astype(np.float64)
    if objective.kind == "utility":
        return math.copysign(1.0, objective.theta) * np.exp(objective.theta * m)
    return beat_share(rules, objective.opponents)


def objective_of(objective: Objective, rules: RuleSet, probability: np.ndarray) -> float:
    """The objective's value (in :attr:`Objective.unit`) of a final-TOTAL distribution
    ``probability`` (P(TOTAL = m), m = 0..MAX_TOTAL): ``E[u(TOTAL)]``, for ``utility`` its
    certainty equivalent."""
    p = np.asarray(probability, dtype=np.float64)
    u = score_utility(objective, rules)
    nz = p > 0
    e = float(p[nz] @ u[nz])
    if objective.kind == "utility":
        return math.log(math.copysign(1.0, objective.theta) * e) / objective.theta
    return e


def solve_objective(objective: str | Objective, rules: str | RuleSet | None = None,
                    use_cache: bool = True,
                    progress: Callable[[int, int], None] | None = None) -> ObjectiveSolution:
    """Solve ``objective`` (text or :class:`Objective`) exactly under ``rules``.

    ``mean`` is :func:`dicelab.penta.solver.solve`; ``utility`` a value per state (8 MiB,
    a couple of seconds); ``at-least:T`` the rows of one target, or the table of every
    target (:func:`at_least_table`) when that is in the cache; ``beat:N`` the rows of the
    win share (needs ``optimal``'s exact distribution). Cached on disk and memoised;
    ``progress(done, total)`` follows a row solve.

    >>> round(solve_objective("at-least:0", "seed").value, 12)  # doctest: +SKIP
    1.0
    """
    obj = objective if isinstance(objective, Objective) else parse_objective(objective)
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    memo = (obj.name, rs.digest)
    if use_cache and memo in _MEMO:
        return _MEMO[memo]
    t0 = time.perf_counter()
    if obj.kind == "mean":
        sol = solve(rs, use_cache=use_cache)
        out = ObjectiveSolution(obj, rs, sol.expected_score, time.perf_counter() - t0,
                                sol.solve_s, sol.from_cache, values=sol.values,
                                n_values=sol.n_states, nbytes=sol.values.nbytes)
    elif obj.kind == "utility":
        key = _key("utility", rs, theta=repr(obj.theta))
        if use_cache:
            arrays, from_cache = disk_cache.cached(key, FORMAT_VERSION,
                                                   lambda: _state_entry(obj, rs))
        else:
            arrays, from_cache = _state_entry(obj, rs), False
        V = arrays["values"]
        out = ObjectiveSolution(obj, rs, float(V[0]), time.perf_counter() - t0,
                                float(arrays["solve_s"]), from_cache, values=V,
                                mult=utility_mult(obj.theta),
                                n_values=int(np.isfinite(V).sum()), nbytes=V.nbytes)
    elif obj.kind == "at-least":
        out = _solve_at_least(obj, rs, use_cache, progress, t0)
    else:
        out = _solve_beat(obj, rs, use_cache, progress, t0)
    if use_cache:
        _MEMO[memo] = out
    return out


def _solve_at_least(obj: Objective, rs: RuleSet, use_cache: bool,
                    progress: Callable[[int, int], None] | None, t0: float
                    ) -> ObjectiveSolution:
    bounds = score_bounds(rs)
    if use_cache:
        table = at_least_table(rs, build=False)
        if table is not None:
            return ObjectiveSolution(obj, rs, row_lookup(table.rows, 0, obj.target),
                                     time.perf_counter() - t0, table.solve_s, True,
                                     rows=table.rows, start=obj.target, table="every target",
                                     n_values=table.n_values, nbytes=table.nbytes)
    spec = at_least_rows(bounds, obj.target)
    what = f"the Penta at-least:{obj.target} table (rules '{rs.name}')"
    if use_cache:
        arrays, from_cache = cached_rows(
            _key("at-least", rs, t=obj.target), f"{FORMAT_VERSION}",
            lambda: _row_entry(spec, rs, what, progress))
    else:
        arrays, from_cache = _row_entry(spec, rs, what, progress), False
    R = rows_of(arrays)
    return ObjectiveSolution(obj, rs, row_lookup(R, 0, obj.target), time.perf_counter() - t0,
                             float(arrays["solve_s"]), from_cache, rows=R, start=obj.target,
                             table="one target", n_values=spec.n_values, nbytes=spec.nbytes)


def beat_share(rules: RuleSet, opponents: int) -> np.ndarray:
    """``u`` of ``beat:opponents``: the win share of each final TOTAL against that many
    ``optimal`` players (from ``optimal``'s exact distribution, cached)."""
    from dicelab.penta.distribution import score_distribution

    return opponent_share(score_distribution("optimal", rules).probability, opponents)


def _solve_beat(obj: Objective, rs: RuleSet, use_cache: bool,
                progress: Callable[[int, int], None] | None, t0: float) -> ObjectiveSolution:
    u = beat_share(rs, obj.opponents)
    spec, x_sat = utility_rows(score_bounds(rs), u)
    what = f"the Penta {obj.name} table (rules '{rs.name}')"
    version = f"{FORMAT_VERSION}:u={disk_cache.digest(u)[:16]}"
    build = lambda: _row_entry(spec, rs, what, progress)  # noqa: E731
    if use_cache:
        arrays, from_cache = cached_rows(_key("beat", rs, n=obj.opponents), version, build)
    else:
        arrays, from_cache = build(), False
    R = rows_of(arrays)
    return ObjectiveSolution(obj, rs, row_lookup(R, 0, x_sat), time.perf_counter() - t0,
                             float(arrays["solve_s"]), from_cache, rows=R, start=x_sat,
                             n_values=spec.n_values, nbytes=spec.nbytes,
                             extra={"x_sat": x_sat, "share": u})


# --- the table of every target ------------------------------------------------------------


@dataclass(frozen=True)
class AtLeastTable:
    """P(final >= T) under the best play for T, for every state, TOTAL so far and T: the
    row of state ``s`` holds needs ``d = 1 .. most[s]`` (``P(points to come >= d)``);
    ``rows`` is memory-mapped from the cache. ``best[T]`` (T = 0..MAX_TOTAL): the most
    P(final >= T) from an empty card."""

    rules: RuleSet
    rows: RowTable
    solve_s: float
    elapsed_s: float
    from_cache: bool
    n_values: int
    nbytes: int

    @property
    def best(self) -> np.ndarray:
        row = start_values(self.rows, 0)  # needs 0 .. most
        out = np.zeros(MAX_TOTAL + 1)
        out[:row.size - 1] = row[:-1]
        return out

    def to_dict(self) -> dict:
        return {"game": "penta", "rules": self.rules.name, "table": "at-least, every target",
                "values": self.n_values, "bytes": self.nbytes, "solve_s": self.solve_s,
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache,
                "best": self.best.tolist()}


def at_least_table_key(rules: RuleSet) -> str:
    return _key("at-least-table", rules)


def at_least_table_bytes(rules: str | RuleSet | None = None) -> int:
    """Bytes the table of every target takes (to hold while building it, and on disk)."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    return at_least_rows(score_bounds(rs), None).nbytes


_TABLES: dict[str, AtLeastTable] = {}


def at_least_table(rules: str | RuleSet | None = None, build: bool = True,
                   progress: Callable[[int, int], None] | None = None
                   ) -> AtLeastTable | None:
    """The table of every target under ``rules``: loaded (memory-mapped) from the cache,
    else, with ``build``, solved and stored (about 2.3 GB; refused before allocating if
    it does not fit the memory limit), else ``None``."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    if rs.digest in _TABLES:
        return _TABLES[rs.digest]
    t0 = time.perf_counter()
    spec = at_least_rows(score_bounds(rs), None)
    key = at_least_table_key(rs)
    version = f"{FORMAT_VERSION}"
    arrays = disk_cache.load_mapped(key, version, {"F"})
    from_cache = arrays is not None
    if arrays is None:
        if not build:
            return None
        what = f"the Penta at-least table of every target (rules '{rs.name}')"
        arrays = _row_entry(spec, rs, what, progress)
        disk_cache.store(key, version, arrays)
    table = AtLeastTable(rs, rows_of(arrays), float(arrays["solve_s"]),
                         time.perf_counter() - t0, from_cache, spec.n_values, spec.nbytes)
    _TABLES[rs.digest] = table
    return table


def release_tables() -> None:
    """Forget the memoised solutions and tables (a table of every target maps 2.3 GB)."""
    _MEMO.clear()
    _TABLES.clear()


__all__ = ["BEAT_MAX", "KINDS", "THETA_MAX", "THETA_MIN", "AtLeastTable", "Objective",
           "ObjectiveSolution",
           "RowSpec", "ScoreBounds", "at_least_rows", "at_least_table", "at_least_table_bytes",
           "at_least_table_key", "beat_share", "cached_rows", "new_row_table", "objective_of",
           "opponent_share", "parse_objective", "release_tables", "row_lookup", "row_offsets",
           "rows_of", "score_bounds", "score_utility", "solve_objective", "start_values",
           "tie_rows", "utility_mult", "utility_rows"]
