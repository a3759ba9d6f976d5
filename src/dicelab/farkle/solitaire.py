"""One-player uses of the Farkle turn (layer 2): ``max-ev``, ``fastest``, fixed turns.

Every function here is one turn of :mod:`dicelab.farkle.engine.turn` put to a
different question:

* :func:`evaluate_turn_policy` / :func:`threshold_distribution`: the exact distribution
  of a turn's result (P(lost turn), P(bank = x) for every x) under a policy of the turn
  points and dice left alone (``threshold-T`` is the bank table ``tp >= T`` with "set
  aside all scoring dice"); :func:`endings` follows any number of such fixed turns
  forwards as the simulation kernel plays them (under the rules' bank floor,
  :func:`legal_bank`), for a race's totals and for the engine's fixed players
  (:mod:`dicelab.farkle.fixed`) alike;
* :func:`solve_max_ev`: the turn policy of the most points per turn in the long run:
  one turn DP whose bank is worth its points and whose lost turn is worth 0; under a
  penalty for lost turns in a row, one policy per number of turns lost in a row before
  this one, from the average-reward equations;
* :func:`solve_fastest`: the fewest expected turns to reach a target from every total
  (and every number of lost turns in a row), a turn DP per state whose bank is worth
  the turns still needed from the total it reaches;
* :func:`race`: the expected turns of a fixed turn policy to reach a target;
* :func:`threshold_sweep`: ``threshold-T`` for a range of T beside ``max-ev``.

A turn's row is its turn points in units of 50 (:data:`~dicelab.farkle.rules.
POINT_UNIT`); every solver that maximises looks at every distinct legal set-aside of a
roll. Results are in points.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from dicelab import cache
from dicelab.config import DEEPEST_RACE_FLOOR_POINTS, FASTEST_TOL
from dicelab.errors import UserError
from dicelab.farkle.engine import game, turn
from dicelab.farkle.engine.model import Model, gain_bound, model
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import (
    HOT_DICE,
    NO_BANK,
    POINT_UNIT,
    FarkleRules,
    check_lost_turns,
    check_points,
    check_target,
)
from dicelab.resources import check_memory

#: Bump when a cached solitaire solution's arrays change.
FORMAT_VERSION = 5
#: Turn totals whose tail probability P(bank >= x) every turn summary reports.
TAIL_POINTS = (300, 500, 1000, 2000, 3000)


def check_turn_rows(m: Model, rows: int, what: str) -> None:
    """``UserError`` if a turn table over ``rows`` rows (its scratch, with the values it is
    given) would need more than the memory limit: ``what`` says whose table it is."""
    check_memory(f"{what} (turn points up to {rows * POINT_UNIT:,})",
                 rows * (7 * 8 * 3 + 7 + 4 * m.class_prob.size + 8 * 6))


def work(m: Model, rows: int) -> game.Scratch:
    """A turn table's scratch over ``rows`` rows, zeroed."""
    w = game.scratch(m, rows)
    for a in w:
        a.fill(0)
    return w


def turn_table(m: Model, bankv: np.ndarray, top: int, beta: float = 0.0,
               edge: np.ndarray | None = None, floor: np.ndarray | None = None
               ) -> tuple[float, game.Scratch]:
    """One optimal turn over ``bankv.size`` rows (:func:`dicelab.farkle.engine.turn.
    turn_back`): a bank at row ``i`` worth ``bankv[i]`` (from ``floor``, default the rules'
    bank floor), a lost turn ``beta``, banking from row ``top`` on, six dice leaving the
    table worth ``edge`` (default ``m.ahead6``). Returns (its value, its table)."""
    rows = bankv.size
    w = work(m, rows)
    value, _ = turn.turn_back(m, m.bank_floor if floor is None else floor, bankv,
                              np.full(rows, m.ahead6) if edge is None else edge, 0.0, beta,
                              top, rows, w.v, w.bp, w.bk, w.choice)
    return value, w


def roll_values(m: Model, i: int, beta: float, w: game.Scratch) -> np.ndarray:
    """``out[n]``: the value of rolling ``n`` dice (n = 1..6) at row ``i`` of a filled turn
    table ``w``, a lost turn worth ``beta``."""
    out = np.zeros(7)
    turn.roll_values(m, i, beta, w.v, w.choice, out)
    return out


# ---------------------------------------------------------------------------------
# A fixed turn


@dataclass(frozen=True)
class TurnDistribution:
    """Exact distribution of one turn's result under a fixed policy.

    ``p_bank[i]``: probability of banking exactly ``i * 50`` points (index 0 is 0: a turn
    never banks 0); ``p_bust``: probability of losing the turn; ``p_unresolved``: six dice
    rolling on past the rows computed (at most :data:`~dicelab.farkle.engine.model.
    CLIMB_ERR`; 0 where six dice bank like the rest).
    """

    policy: str
    rules: str
    p_bust: float
    p_bank: np.ndarray
    p_unresolved: float = 0.0

    @property
    def expected_score(self) -> float:
        """Expected points banked by the turn (a lost turn counts 0)."""
        return float(np.dot(self.p_bank, np.arange(self.p_bank.size))) * POINT_UNIT

    @property
    def sd(self) -> float:
        """Standard deviation of the points banked (a lost turn counts 0)."""
        x = np.arange(self.p_bank.size) * float(POINT_UNIT)
        mean = float(np.dot(self.p_bank, x))
        return math.sqrt(max(float(np.dot(self.p_bank, x * x)) - mean * mean, 0.0))

    def p_at_least(self, points: int) -> float:
        """P(bank >= points), for points > 0 (a lost turn banks nothing)."""
        i = max(-(-int(points) // POINT_UNIT), 1)
        if i >= self.p_bank.size:
            return 0.0
        # a running sum from the top keeps the tail monotone in ``points`` exactly
        return float(np.cumsum(self.p_bank[::-1])[::-1][i])

    def spread(self) -> dict:
        """The turn's spread as every summary reports it: its SD, P(lost turn) and the
        tail P(bank >= x) at :data:`TAIL_POINTS`."""
        return {"turn_score_sd": self.sd, "p_bust": self.p_bust,
                "p_at_least": {str(x): self.p_at_least(x) for x in TAIL_POINTS}}

    def to_dict(self) -> dict:
        nz = np.nonzero(self.p_bank)[0]
        return {"policy": self.policy, "rules": self.rules,
                "expected_turn_score": self.expected_score, **self.spread(),
                "p_bank": {int(i) * POINT_UNIT: float(self.p_bank[i]) for i in nz}}


def legal_bank(rules: FarkleRules, bank: np.ndarray) -> np.ndarray:
    """Bank tables (..., P, 7) as the kernel plays them under the rules' bank floor: it
    banks only where a table banks *and* the turn points reach ``bank_floor[n]`` (a
    threshold or ``ai`` seat at ``max(threshold, floor)``). Rows are added (copies of the
    last: the kernel's clamping) up to the first row where every dice count may bank."""
    first = [-(-floor // POINT_UNIT) for floor in rules.bank_floor]  # may bank from, by n
    if bank.shape[-2] > rules.min_bank // POINT_UNIT and not any(
            bank[..., :first[n], n].any() for n in range(1, 7)):
        return bank  # already legal: not copied (a policy table can take gigabytes)
    rows = max(bank.shape[-2], rules.min_bank // POINT_UNIT + 1)
    extra = np.repeat(bank[..., -1:, :], rows - bank.shape[-2], axis=-2)
    out = np.concatenate([bank, extra], axis=-2)
    out[..., np.arange(rows)[:, None] < np.array(first)[None, :]] = 0
    return np.ascontiguousarray(out, dtype=np.uint8)


def endings(rules: FarkleRules, bank: np.ndarray, value: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How fixed turns end, followed forwards as the kernel plays them
    (:func:`legal_bank`): turn ``s`` banks by ``bank[s]`` (uint8, (S, P, 7)) and sets
    aside by the first strict maximum of ``value[s]`` (rows clamped at its last), or all
    scoring dice (``value`` None). Returns P(lost turn) (S,), P(bank at row i) (S, G) and
    P(still rolling past those rows) (S,)."""
    bank = legal_bank(rules, bank)
    m = model(rules)
    n, rows = bank.shape[:2]
    dist = np.zeros((n, rows + m.max_points + 1 + m.six_rows))
    bust = np.zeros(n)
    left = np.zeros(n)
    keep_all = value is None
    follow = turn.slices_ends if n > 1 else turn.slice_ends
    follow(m, bank, np.zeros((1, 1, 7), np.float32) if keep_all else value, keep_all, bust,
           left, dist)
    return bust, dist, left


def fixed_turns(rules: FarkleRules, bank: np.ndarray, value: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`endings` of turn policies that depend only on (tp, n),
    checked: ``bank`` (S, P, 7), nonzero = bank at turn points p*50 with n dice to roll;
    rows are clamped at P - 1, whose row must bank for every n the rules let bank.
    Set-asides: with ``value`` None, all scoring dice (the threshold rule); else ``value``
    (S, P' <= P, 7), higher is better, chooses among the legal options exactly as the
    simulation kernel does (ties to more points, then more dice)."""
    bank = np.ascontiguousarray(bank, dtype=np.uint8)
    if bank.ndim != 3 or bank.shape[2] != 7 or bank.shape[1] < 2:
        raise ValueError("bank must have shape (P, 7) with P >= 2")
    if not bank[:, -1, 1:][:, np.array(rules.bank_floor[1:]) < NO_BANK].all():
        raise ValueError("the last row of bank must bank with every number of dice the "
                         "rules let bank")
    if value is not None:
        value = np.ascontiguousarray(value, dtype=np.float64)
        if value.ndim != 3 or value.shape[::2] != bank.shape[::2] \
                or value.shape[1] > bank.shape[1]:
            raise ValueError("value must have the shape of bank")
    return endings(rules, bank, value)


def evaluate_turn_policy(rules: FarkleRules, bank: np.ndarray,
                         value: np.ndarray | None = None, *, name: str = "policy"
                         ) -> TurnDistribution:
    """Exact result distribution of a turn policy that depends only on (tp, n).

    ``bank`` (P, 7) and ``value`` (P, 7) or None: one turn policy of
    :func:`fixed_turns`. The farkle penalty acts between turns, so one turn's result
    does not depend on it.

    >>> import numpy as np
    >>> from dicelab.farkle.rules import PRESETS
    >>> b = np.zeros((7, 7), np.uint8); b[6:] = 1     # threshold-300
    >>> round(evaluate_turn_policy(PRESETS["default"], b).expected_score, 1) > 0
    True
    """
    bust, dist, left = fixed_turns(rules, np.asarray(bank)[None],
                                   None if value is None else np.asarray(value)[None])
    return TurnDistribution(name, rules.name, float(bust[0]), dist[0], float(left[0]))


def threshold_bank(thr_n: np.ndarray, rows: int) -> np.ndarray:
    """Bank table (rows, 7): bank at turn points p (units) with n dice left iff
    p * 50 >= thr_n[n]; the last row banks with every n."""
    p = np.arange(rows)[:, None] * POINT_UNIT
    bank = np.zeros((rows, 7), dtype=np.uint8)
    bank[:, 1:] = p >= thr_n[None, 1:]
    bank[-1, 1:] = 1
    return bank


#: Bytes per row of turn points (50 each) a bank table takes while it is built (a
#: threshold's: the table, its turn points and their comparison, 29 measured).
BANK_ROW_BYTES = 32


def check_bank_rows(name: str, rows: int) -> None:
    """``UserError``, before it is built, if ``name``'s bank table of ``rows`` rows of turn
    points would not fit the memory limit."""
    check_memory(f"the bank table of {name} ({rows:,} rows of turn points)",
                 rows * BANK_ROW_BYTES)


def threshold_bank_table(threshold: int) -> np.ndarray:
    """Bank table (T/50 + 1, 7) of ``threshold-T``: bank as soon as tp >= T."""
    t = check_points("threshold", threshold)
    check_bank_rows(f"threshold-{t}", t // POINT_UNIT + 1)
    return threshold_bank(np.full(7, t), t // POINT_UNIT + 1)


def threshold_distribution(rules: FarkleRules, threshold: int) -> TurnDistribution:
    """Exact turn distribution of ``threshold-T`` (set aside all scoring dice).

    >>> from dicelab.farkle.rules import PRESETS
    >>> d = threshold_distribution(PRESETS["default"], 300)
    >>> round(float(d.p_bust), 4), bool(abs(d.p_bust + d.p_bank.sum() - 1) < 1e-12)
    (0.1958, True)
    """
    return evaluate_turn_policy(rules, threshold_bank_table(threshold),
                                name=f"threshold-{int(threshold)}")


def bank_runs(bank: np.ndarray) -> dict:
    """A bank table (P, 7) as data: ``bank_thresholds``, per dice left the first turn points
    at which it banks (``None``: never; :func:`bank_thresholds`), and ``runs``, the runs of
    turn points with the same decisions (``lo``, ``hi`` in points, ``hi`` None for the last
    run; ``bank`` per dice left 1..6).

    >>> bank_runs(threshold_bank_table(300))["bank_thresholds"]["1"]
    300
    """
    top = min(last_roll(bank) + 1, bank.shape[0] - 1)
    # a run starts at row 1 and at every row up to ``top`` that differs from the one before
    starts = [1, *(np.nonzero((bank[2:top + 1, 1:] != bank[1:top, 1:]).any(axis=1))[0] + 2)]
    ends = [(int(p) - 1) * POINT_UNIT for p in starts[1:]] + [None]
    runs = [{"lo": int(p) * POINT_UNIT, "hi": hi, "bank": [bool(b) for b in bank[p, 1:]]}
            for p, hi in zip(starts, ends, strict=True)]
    return {"bank_thresholds": text_keys(bank_thresholds(bank)), "runs": runs}


def text_keys(d: dict) -> dict:
    """``d`` keyed by its keys as text, as JSON reports give them."""
    return {str(k): v for k, v in d.items()}


def bank_thresholds(bank: np.ndarray, lo: int = 1) -> dict[int, int | None]:
    """Smallest turn points (in points) at which ``bank[p, n]`` is 1, per n = 1..6."""
    first = {n: np.flatnonzero(bank[lo:, n]) for n in range(1, 7)}
    return {n: int(i[0] + lo) * POINT_UNIT if i.size else None for n, i in first.items()}


# ---------------------------------------------------------------------------------
# max-ev


@dataclass(frozen=True)
class MaxEvSolution:
    """``max-ev``: the turn policy of the most points per turn in the long run.

    Without a penalty for lost turns in a row there is one turn policy, of maximum
    expected turn score. Under a penalty (``streak`` lost turns in a row cost points)
    there is one per number ``s`` of turns lost in a row before this one, from the
    average-reward equations ``g + h[s] = max over turn policies of E[points banked] +
    P(lost) beta[s]`` with ``beta[s] = h[s + 1]`` for ``s < streak - 1``, ``beta[last] =
    -penalty`` and ``h[0] = 0``.

    ``rate``: g, points per turn in the long run (without a penalty: the expected turn
    score); ``bias``: h (points). The policies' arrays are indexed ``[s, p, n]`` (shape
    (S, P, 7), p in units of 50, column 0 unused): ``value``, the expected final turn
    points (a lost turn counted as ``beta[s]``) at state (p*50, n), and ``bank``, the
    decision there; row 0 is the start of a turn (a forced roll). ``roll_value``: the
    value of rolling (-1 from ``cap`` on, where banking is proven at least as good, but
    six dice rolling on); ``distributions[s]``: the exact turn distribution of policy
    ``s``; ``exact_rows``: the rows whose decisions are exact (past them six dice rolling
    on meet the table's edge). ``stationary``: the long-run share of turns started at
    each ``s``; ``rate_check``: the rate recomputed from the exact turn distributions (an
    independent evaluation); ``value_error``: a bound on the error of every value below
    the cap, of ``rate`` and of ``bias`` (0 but where six dice roll on past the cap).
    """

    rules: str
    cap: int
    rate: float
    bias: np.ndarray
    value: np.ndarray
    bank: np.ndarray
    roll_value: np.ndarray
    distributions: tuple[TurnDistribution, ...]
    exact_rows: int
    stationary: np.ndarray
    rate_check: float
    iterations: int
    solve_s: float
    value_error: float
    farkle_rules: FarkleRules = field(repr=False)
    from_cache = False

    @property
    def elapsed_s(self) -> float:
        """Time to obtain the solution (max-ev is never cached: its solve time)."""
        return self.solve_s

    @property
    def expected_score(self) -> float:
        """Points per turn in the long run (the expected turn score without a penalty)."""
        return self.rate

    def bank_thresholds(self, lost_in_a_row: int = 0) -> dict[int, int | None]:
        """Smallest turn points at which max-ev banks, for n = 1..6 dice left."""
        return bank_thresholds(self.bank[lost_in_a_row, :self.exact_rows])

    def is_threshold_policy(self) -> bool:
        """True if, for every count and n, it banks at every turn total from its
        threshold up."""
        return all(t is None or self.bank[s, t // POINT_UNIT:, n].all()
                   for s in range(len(self.distributions))
                   for n, t in self.bank_thresholds(s).items())

    def turn_values(self, turn_points: int, lost_in_a_row: int = 0
                    ) -> tuple[float, np.ndarray]:
        """(value of banking, value of rolling ``n`` dice for n = 1..6) with ``turn_points``
        set aside, after ``lost_in_a_row`` lost turns (a count past the penalty's streak,
        or any count without a penalty, plays as the last one): the policy's expected
        final turn score, a lost turn counted as ``beta[s]``.

        Past the cap the values are read from a solve whose cap lies above the roll's
        successors (any cap at or above the proven one gives the same optimum, within its
        error bound)."""
        s = min(max(int(lost_in_a_row), 0), len(self.distributions) - 1)
        sol = self.solve_at(turn_points)
        return float(turn_points), sol.roll_value[s, int(turn_points) // POINT_UNIT].copy()

    def solve_at(self, turn_points: int) -> MaxEvSolution:
        """The solve :meth:`turn_values` reads at ``turn_points`` (its ``value_error`` is
        the bound there): this one below the cap, past it one whose cap lies above the
        roll's successors."""
        p = int(turn_points) // POINT_UNIT
        if p < self.cap // POINT_UNIT:
            return self
        need = (p + model(self.farkle_rules).max_points + 1) * POINT_UNIT
        return max_ev_capped(self.farkle_rules, -(-need // _CAP_STEP) * _CAP_STEP)

    def lost_turn_value(self, lost_in_a_row: int = 0) -> float:
        """What a lost turn counts after ``lost_in_a_row`` lost turns in a row: 0 without a
        penalty; under one ``beta[s]``, the bias of the run it leaves, or at the last of
        the streak minus the penalty."""
        s = min(max(int(lost_in_a_row), 0), len(self.distributions) - 1)
        if s + 1 < len(self.distributions):
            return float(self.bias[s + 1])
        return float(-self.farkle_rules.farkle_penalty)

    def long_run(self) -> TurnDistribution:
        """The result of a turn in the long run: the policies' turn distributions mixed by
        the share of turns started at each count (:attr:`stationary`); without a penalty
        the one policy's. Its points banked leave out the penalty (:attr:`rate` takes it
        off)."""
        d = self.distributions
        mix = [sum(w * getattr(x, f) for w, x in zip(self.stationary, d, strict=True))
               for f in ("p_bust", "p_bank", "p_unresolved")]
        return TurnDistribution("max-ev", self.rules, float(mix[0]), mix[1], float(mix[2]))

    def to_dict(self) -> dict:
        out = {"policy": "max-ev", "rules": self.rules,
               "expected_turn_score": self.expected_score, "cap": self.cap,
               **self.long_run().spread(),
               "bank_thresholds": text_keys(self.bank_thresholds()),
               "threshold_policy": self.is_threshold_policy(),
               "value_error": self.value_error,
               "solve_s": self.solve_s, "elapsed_s": self.elapsed_s,
               "from_cache": self.from_cache}
        if len(self.distributions) > 1:
            out.update({
                "farkle_penalty": self.farkle_rules.farkle_penalty, "points_per_turn": self.rate,
                "points_per_turn_check": self.rate_check,
                "bias": self.bias.tolist(), "stationary": self.stationary.tolist(),
                "p_bust_by_lost_turns": [d.p_bust for d in self.distributions],
                "expected_banked": [d.expected_score for d in self.distributions],
                "bank_thresholds_by_lost_turns": {
                    str(s): text_keys(self.bank_thresholds(s))
                    for s in range(len(self.distributions))},
                "iterations": self.iterations})
        return out


def _max_ev_policy(rules: FarkleRules, m: Model, cap: int, beta: float, w6: float,
                   bankv: np.ndarray, value: np.ndarray, bank: np.ndarray, roll: np.ndarray
                   ) -> tuple[TurnDistribution, float]:
    """The turn policy with a lost turn worth ``beta`` (points) and a bank at row ``i`` worth
    ``bankv[i] = i`` (units), written into ``value``, ``bank`` and ``roll`` (its rows of
    :class:`MaxEvSolution`'s arrays); returns its turn distribution and its error bound.
    Where six dice roll on past the cap, a roll leaving the table is bracketed by the lost
    turn's value and the bank plus W(6) (:func:`gain_bound`); the lower run is the solution
    and the largest gap below the cap between the runs its error bound."""
    c = cap // POINT_UNIT
    rows = bankv.size
    b = beta / POINT_UNIT
    _, w = turn_table(m, bankv, c, b, np.full(rows, b))
    error = 0.0
    if m.six_rows:
        _, hi = turn_table(m, bankv, c, b, bankv + w6 / POINT_UNIT)
        error = float(np.abs(hi.v[:(c + 1) * 7] - w.v[:(c + 1) * 7]).max()) * POINT_UNIT
    value[:] = w.v.reshape(rows, 7) * POINT_UNIT
    bank[:] = w.bk.reshape(rows, 7)
    roll[:, 1:] = -1.0
    for p in range(rows - m.max_points if m.six_rows else c):
        roll[p, 1:] = roll_values(m, p, b, w)[1:] * POINT_UNIT
    roll[c:, 1:HOT_DICE] = -1.0  # proven to bank with fewer than six dice
    # followed forwards: six dice at the edge of the table end as its edge guess
    lost, left = turn.turn_ends(m, w.bk, rows, w.choice, rows, True, w.reach, w.ends)
    dist = TurnDistribution("max-ev", rules.name, lost, w.ends.copy(), left)
    return dist, error


def solve_max_ev(rules: FarkleRules, cap: int | None = None, tol: float = 1e-12,
                 max_iterations: int = 1000) -> MaxEvSolution:
    """The turn policy of the most points per turn (``max-ev``; see :class:`MaxEvSolution`).

    ``cap`` (points): the DP banks at every turn total >= cap (six dice rolling on
    excepted). ``None`` uses the proven cap, which makes the result exact; a smaller cap
    gives the best policy among those forced to bank from ``cap`` on. A minimum to bank
    is honoured: below it the turn must roll.

    Under a penalty, each turn DP has a lost turn worth ``beta`` (the proven cap still
    holds: a lost turn worth less only makes banking better). ``g`` is the only unknown
    once ``beta[last] = -penalty`` is fixed: ``F(g) = E_0(h_1(g))`` with ``h_s =
    E_s(h_{s+1}) - g`` falls as ``g`` rises (at minus the chance of losing the first turns
    in a row, which passes 1 when turns are often lost, e.g. under a high minimum to
    bank), so ``F(g) - g`` falls at a slope of at least 1 and has one root, between the
    turn values with a lost turn worth ``-penalty`` and 0. Secant steps kept inside that
    bracket (halving it otherwise) find it, until ``F(g)`` is within ``tol`` points of
    ``g``.

    >>> from dicelab.farkle.rules import PRESETS
    >>> round(solve_max_ev(PRESETS["default"]).expected_score, 4)
    601.5587
    """
    m = model(rules)
    w = gain_bound(rules)
    # The proven cap: from (tp, n) a continuation that rolls busts with probability >=
    # bust[n] on its first roll (losing tp) and adds expected points <= W(n)
    # (:func:`gain_bound`), so its expected result is <= tp + W(n) - bust[n] * tp <= tp once
    # tp >= W(n) / bust[n]: the largest such bound over the n that can lose, rounded up to
    # a multiple of 50 (banking is then at least as good as rolling with fewer than six
    # dice, and with six unless six dice roll on), and at least the minimum to bank.
    bound = max(w[n] / m.bust[n] for n in range(1, HOT_DICE + 1) if m.bust[n] > 0.0)
    proven = (math.ceil(bound * (1 + 1e-9) / POINT_UNIT) + 1) * POINT_UNIT
    cap = max(proven if cap is None else check_points("cap", cap), rules.min_bank)
    t0 = time.perf_counter()
    w6 = float(w[HOT_DICE])
    rows = cap // POINT_UNIT + m.six_rows + m.max_points + 1
    # per row: the policies' value, roll and bank tables, two turn tables' scratch
    check_memory(f"max-ev under rules '{rules.name}' (turn points up to {cap:,})",
                 rows * (m.streak * 7 * 17 + 2 * (7 * 25 + 24 + 4 * m.class_prob.size)))
    bankv = np.arange(rows, dtype=np.float64)

    @functools.cache
    def turn_value(beta: float) -> float:
        """The turn's value in points with a lost turn worth ``beta`` points."""
        if beta > 0:
            raise UserError("a lost turn cannot be worth more than banking nothing")
        b = beta / POINT_UNIT  # units; six dice leaving the table end as a lost turn
        return turn_table(m, bankv, cap // POINT_UNIT, b, np.full(rows, b))[0] * POINT_UNIT

    def lost_values(g: float, clip: bool = False) -> list[float]:
        """``beta[s]`` for every count ``s`` at the rate ``g``: ``-penalty`` for the last,
        ``h[s + 1] = E_{s+1}(beta[s + 1]) - g`` before it (``clip``: each at most 0, as at
        the root, for a ``g`` away from it)."""
        betas = [-pen]
        for _ in range(k - 1):
            betas.insert(0, turn_value(betas[0]) - g)
            if clip:
                betas[0] = min(betas[0], 0.0)
        return betas

    k, pen = m.streak, float(rules.farkle_penalty)
    iterations = 0
    g = turn_value(0.0 if k > 1 else -pen)  # under a penalty, a start: the turn without it
    lo, hi, last = turn_value(-pen), g, None  # the root's bracket; the last (g, F(g) - g)
    moved = np.inf
    while k > 1 and moved >= tol:
        if iterations == max_iterations:
            raise UserError(f"max-ev with the farkle penalty did not settle in "
                            f"{max_iterations} iterations")
        iterations += 1
        g_new = turn_value(lost_values(g, clip=True)[0])
        f = g_new - g
        lo, hi = (g, hi) if f > 0 else (lo, g)
        moved = abs(f)
        if last is not None and f != last[1]:  # a secant step, kept inside the bracket
            g_new = g - f * (g - last[0]) / (f - last[1])
        if moved >= tol and not lo < g_new < hi:
            g_new = 0.5 * (lo + hi)
        last, g = (g, f), g_new
    betas = lost_values(g)
    value, roll = np.zeros((k, rows, 7)), np.zeros((k, rows, 7))
    bank = np.zeros((k, rows, 7), dtype=np.uint8)
    dists, errors = zip(*(_max_ev_policy(rules, m, cap, beta, w6, bankv, value[s], bank[s],
                                         roll[s]) for s, beta in enumerate(betas)), strict=True)
    eps = max(errors)
    # the same policies evaluated from their exact turn distributions: the chain of lost
    # turns in a row (a bank returns to 0, a loss moves on, the last to 0)
    q = np.array([d.p_bust for d in dists])
    chain = np.cumprod(np.concatenate([[1.0], q[:-1]]))
    share = chain / chain.sum()
    rate = sum(share[s] * (d.expected_score - (pen * q[s] if s == k - 1 else 0))
               for s, d in enumerate(dists))
    # each turn value is off by at most eps, moving with its lost turn's value at the slope
    # P(lost): g's map is off by eps (1 + q0 + q0 q1 + ...), and F(g) - g falls at a slope
    # of at least 1, so its root by no more; each h[s] = E_s(h[s + 1]) - g adds its own
    # eps, q[s] times the next one's, and g's
    e_g = eps * float(chain.sum())
    error, e_h = e_g, eps + e_g
    for s in range(k - 1, 0, -1):
        error = max(error, e_h)
        e_h = eps + q[s - 1] * e_h + e_g
    bias = np.array([0.0, *betas[:-1]])
    return MaxEvSolution(rules.name, cap, float(g), bias, value, bank, roll, dists,
                         rows - m.max_points, share, float(rate), iterations,
                         time.perf_counter() - t0, float(error), rules)


#: Where six dice roll on past the cap, advice from a higher cap rounds it up to this.
_CAP_STEP = 5000


@functools.lru_cache(maxsize=8)
def max_ev_capped(rules: FarkleRules, cap: int | None = None) -> MaxEvSolution:
    """:func:`solve_max_ev`, made once per process, rule set and cap (advice on many
    positions, as in a game analysis, reuses it)."""
    return solve_max_ev(rules, cap)


# ---------------------------------------------------------------------------------
# fastest


@dataclass(frozen=True)
class FastestSolution:
    """The solitaire policy of fewest expected turns to reach ``target``.

    States are a turn's start at a total (from ``floor_points`` below zero, where a
    penalty for lost turns in a row can push it) after ``s`` turns lost in a row (one
    count, 0, without such a penalty). Arrays are indexed ``[s, total // 50 + floor]``:
    ``turns`` (S, U + 1), the expected turns to reach the target (0 at the target,
    index U); ``value``/``bank`` (S, U, P, 7): the expected turns still needed after a
    set-aside at (turn points p*50, n dice) of a turn started there (row 0: the forced
    first roll; the turn being played not counted) and the decision (1 = bank);
    ``newton_steps``: per state the turn DPs its Newton steps took (without a penalty),
    else each sweep's largest relative change.

    Under a penalty the totals stop at the floor, which can only help the player: the
    expected turns are a lower bound on the game without a floor, and
    ``policy_turns_no_floor`` (this policy's race from 0 with the floor deepened until it
    settles, :func:`race_turns`; at its floor the turn is played as at ``floor_points``)
    an upper bound; ``no_floor_points`` is how deep that race went.
    """

    rules: str
    target: int
    turns: np.ndarray
    value: np.ndarray
    bank: np.ndarray
    newton_steps: np.ndarray
    solve_s: float
    elapsed_s: float
    from_cache: bool = False
    farkle_penalty: int = 0
    policy_turns_no_floor: float = math.nan
    no_floor_points: int = 0

    @property
    def floor_points(self) -> int:
        """How far below zero the totals go (points): the turns' indices past the target's."""
        return (self.turns.shape[1] - 1) * POINT_UNIT - self.target

    def _at(self, total: int, lost_in_a_row: int) -> tuple[int, int]:
        """The index ``[s, u]`` of a turn's start, checked."""
        total = check_points("total", total, -self.floor_points, self.target - POINT_UNIT)
        return (check_lost_turns("lost turns", lost_in_a_row, self.turns.shape[0]),
                (total + self.floor_points) // POINT_UNIT)

    def expected_turns_from(self, total: int, lost_in_a_row: int = 0) -> float:
        """Expected turns to reach the target from ``total`` after ``lost_in_a_row``
        lost turns."""
        return float(self.turns[self._at(total, lost_in_a_row)])

    @property
    def expected_turns_to_target(self) -> float:
        """Expected turns to reach the target from 0."""
        return self.expected_turns_from(0)

    def bank_at(self, total: int, lost_in_a_row: int = 0) -> np.ndarray:
        """The bank decisions (P, 7) of a turn started at ``total``."""
        return self.bank[self._at(total, lost_in_a_row)]

    def bank_thresholds(self, total: int, lost_in_a_row: int = 0) -> dict[int, int | None]:
        """Smallest turn points at which ``fastest`` banks at ``total``, per n."""
        return bank_thresholds(self.bank_at(total, lost_in_a_row))

    def to_dict(self) -> dict:
        half = self.target // 2 // POINT_UNIT * POINT_UNIT
        totals = [t for t in (0, half, self.target - 1000, self.target - 500)
                  if 0 <= t < self.target]
        out = {"policy": "fastest", "rules": self.rules, "target": self.target,
               "expected_turns_to_target": self.expected_turns_to_target,
               "bank_thresholds": {str(t): text_keys(self.bank_thresholds(t))
                                   for t in sorted(set(totals))},
               "solve_s": self.solve_s, "elapsed_s": self.elapsed_s,
               "from_cache": self.from_cache}
        if self.turns.shape[0] > 1:
            out.update({"farkle_penalty": self.farkle_penalty,
                        "floor_points": self.floor_points,
                        "policy_turns_no_floor": self.policy_turns_no_floor,
                        "no_floor_points": self.no_floor_points,
                        "sweeps": int(self.newton_steps.size),
                        "bank_thresholds_by_lost_turns": {
                            str(k): text_keys(self.bank_thresholds(0, k))
                            for k in range(self.turns.shape[0])}})
        return out


def check_fastest(rules: FarkleRules, target: int, floor_points: int | None = None) -> int:
    """Refuse, before any work, a ``fastest`` whose value and bank tables would not fit the
    memory limit; returns the checked target."""
    m = model(rules)
    target = check_target(target)
    big = target // POINT_UNIT + rules.penalty_floor(floor_points)
    p_rows = max(big, int(m.bank_floor[1])) + m.max_points + 1
    check_memory(f"fastest to {target:,} (its value and bank tables)",
                 m.streak * big * p_rows * 7 * 9)
    return target


def solve_fastest(rules: FarkleRules, target: int = 10_000, *, tol: float = FASTEST_TOL,
                  sweep_tol: float = 1e-13, max_sweeps: int = 500,
                  floor_points: int | None = None) -> FastestSolution:
    """The solitaire policy of fewest expected turns to reach ``target`` (``fastest``).

    Totals are solved from the top down. Without a penalty for lost turns in a row a
    lost turn leaves the total where it is: the turn's value is a line in its own
    expected turns ``x``, and ``x = 1 + A + B x`` is solved by Newton steps on the optimal
    turn (1-D policy iteration), which end in finitely many steps at the exact fixed
    point (``tol`` guards against rounding). Under a penalty, the states at a total are
    solved after ``s = streak - 1, ..., 0`` lost turns in a row, each lost turn reading the
    next count (solved just before) and the last the total the penalty leads to, from
    the sweep before (Gauss-Seidel), until no expected number of turns moves by more than
    ``sweep_tol`` (relative); the start is the game without the penalty. Totals go down to
    ``floor_points`` below zero (default :meth:`FarkleRules.penalty_floor`).

    >>> from dicelab.farkle.rules import PRESETS
    >>> sol = solve_fastest(PRESETS["default"], 1000)
    >>> 1 < sol.expected_turns_to_target < 10
    True
    """
    m = model(rules)
    target = check_fastest(rules, target, floor_points)
    k = m.streak
    floor = rules.penalty_floor(floor_points)
    big = target // POINT_UNIT + floor
    p_rows = max(big, int(m.bank_floor[1])) + m.max_points + 1
    t0 = time.perf_counter()
    value = np.zeros((k, big, p_rows, 7))
    bank = np.zeros((k, big, p_rows, 7), dtype=np.uint8)
    w = work(m, p_rows + m.max_points + 1)
    steps = np.zeros(big, dtype=np.int64)

    def state(u: int, s: int, beta: float | None) -> float:
        """The fewest expected turns from index ``u`` (``turns[0, :]``: from each index at
        no lost turn, solved above ``u``) after ``s`` lost turns in a row, when a lost turn
        costs ``beta`` turns more (``None``: the state itself, a self-loop solved by Newton
        steps on the turn's line). Fills the state's rows of ``value``/``bank`` (zeroed)
        and ``steps[u]`` (its turn DPs).

        The turn maximises minus the turns still needed: a bank at row ``i`` is worth
        ``-turns[u + i]`` (0 once it reaches the target), a lost turn ``-beta``; six dice
        that roll on past the target row roll until fewer dice bank the finish, which costs
        ``six_finish * beta`` exactly."""
        reach = max(big - u, int(m.bank_floor[1]))  # banking from here reaches the target
        rows = reach + m.max_points
        bankv = -turns[0, np.minimum(u + np.arange(rows), big)]
        x = turns[0, min(u + 1, big)] + 1.0 if beta is None else beta
        bounds = np.zeros(2)
        for dps in range(1, 201):
            b = -x
            edge = np.full(rows, m.six_finish * b)
            val, slope = turn.turn_back_tracked(m, m.bank_floor, bankv, edge, m.six_finish, b,
                                                reach, rows, w.v, w.bp, w.bk, w.choice, bounds)
            if beta is not None:
                x = 1.0 - val
                break
            if slope >= 1.0 - 1e-6:  # 1 - slope: P(bank), to 1e-16 absolute
                raise UserError(
                    "a turn that always loses never reaches the target" if slope >= 1.0
                    else f"fastest to {target:,}: from {(u - floor) * POINT_UNIT:,} a turn "
                    f"banks with probability {1.0 - slope:.1e} at most, too rare to count "
                    "the turns it takes in floating point")
            x_new = (1.0 - (val - slope * b)) / (1.0 - slope)  # val = a + slope * beta
            done = abs(x_new - x) <= tol * x_new or (dps > 1 and x_new >= x)
            x = x_new
            if done:
                break
        steps[u] = dps
        # the last policy's values at the fixed point: each state's line in the lost
        # turn's value
        final = b if beta is not None else -x
        v = (w.v[:rows * 7] + w.bp[:rows * 7] * (final - b)).reshape(rows, 7)
        value[s, u, :rows, 1:] = -v[:, 1:]  # (column 0 and the rows past these stay 0)
        bank[s, u, :rows] = w.bk[:rows * 7].reshape(rows, 7)
        bank[s, u, rows:, 1:] = 1  # past the rows computed every state banks the finish,
        if m.bank_floor[HOT_DICE] >= rows:  # but six dice that may not bank
            value[s, u, rows:, HOT_DICE] = m.six_finish * x
            bank[s, u, rows:, HOT_DICE] = 0
        return x

    turns = np.zeros((k, big + 1))
    if k > 1:  # start from the game without the penalty
        turns[:] = solve_fastest(dataclasses.replace(rules, farkle_penalty=0),
                                 big * POINT_UNIT, tol=tol).turns[0]
    changes = sweep_totals(m, turns, state, sweep_tol, max_sweeps, "fastest")
    bound = (math.nan, 0)
    if k > 1:
        steps = np.array(changes)
        bound = race_turns(rules, target, bank, -value, floor=floor)
    secs = time.perf_counter() - t0
    return FastestSolution(rules.name, target, turns, value, bank, steps, secs, secs,
                           farkle_penalty=rules.farkle_penalty,
                           policy_turns_no_floor=bound[0], no_floor_points=bound[1])


def fastest_solution(rules: FarkleRules, target: int) -> FastestSolution:
    """:func:`solve_fastest`, cached on disk (a few seconds for large targets)."""
    target = check_target(target)
    key = cache.entry_key("farkle-fastest", rules.name, rules.digest(), t=target,
                           floor=rules.penalty_floor())

    kept = ("turns", "value", "bank", "newton_steps")

    def build() -> dict[str, np.ndarray]:
        sol = solve_fastest(rules, target)
        return {**{k: getattr(sol, k) for k in kept}, "solve_s": np.array([sol.solve_s]),
                "no_floor": np.array([sol.policy_turns_no_floor, sol.no_floor_points])}

    t0 = time.perf_counter()
    arrays, from_cache = cache.cached(key, FORMAT_VERSION, build, rules.cache_about())
    return FastestSolution(rules.name, target, *(arrays[k] for k in kept),
                           float(arrays["solve_s"][0]), time.perf_counter() - t0,
                           from_cache=from_cache, farkle_penalty=rules.farkle_penalty,
                           policy_turns_no_floor=float(arrays["no_floor"][0]),
                           no_floor_points=int(arrays["no_floor"][1]))


# ---------------------------------------------------------------------------------
# Races and sweeps of fixed turns


def table_ends(rules: FarkleRules, bank: np.ndarray, value: np.ndarray | None, k: int,
               big: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`fixed_turns` of a race's turn policy ``bank`` (and ``value``): (P, 7) at
    every total, (U, P, 7) per total index or (S, U, P, 7) per run of lost turns and total
    index (``U = big``, ``S = k``). Returns P(lost turn), P(bank at row i) and P(rolling on
    past the rows), each led by the shape (S or 1, U or 1)."""
    bank = np.asarray(bank)
    lead = (1,) * (4 - bank.ndim) + bank.shape[:-2]
    if lead != {2: (1, 1), 3: (1, big), 4: (k, big)}.get(bank.ndim):
        raise ValueError(f"bank must have shape (P, 7), ({big}, P, 7) or ({k}, {big}, P, 7)")
    flat = (-1, *bank.shape[-2:])
    bust, dist, left = fixed_turns(rules, bank.reshape(flat),
                                   None if value is None else np.reshape(value, flat))
    return bust.reshape(lead), dist.reshape(*lead, -1), left.reshape(lead)


def race_ends(m: Model, big: int, bust: np.ndarray, dist: np.ndarray, left: np.ndarray
              ) -> np.ndarray:
    """Expected turns ``turns`` (S, big + 1) to the target (index ``big``) from each total
    index and run of lost turns, of turns that end as :func:`table_ends` says (each led
    by a shape broadcast to (S, big)); ``turns[:, big] = 0``.

    With ``B_s(u) = 1 + sum_g P_s(bank g at u) E(u + g, 0)`` and ``q_s(u)`` = P(lost):
    ``E(u, s) = B_s + q_s E(u, s + 1)`` and ``E(u, S - 1) = B + q E(u - penalty, 0)``
    (without a penalty ``S = 1`` and a lost turn stays at ``u``). Folded over the runs,
    ``E(u, 0) = sum_s c_s B_s + c_S E(u - penalty, 0)`` with ``c_s = q_0 ... q_(s-1)``: one
    sparse linear system over the totals, solved directly. A state from which the
    target is not reached for sure takes ``inf`` turns."""
    from scipy import sparse  # (a tenth of a second: not imported by every command)
    from scipy.sparse import linalg as sparse_linalg

    k = m.streak
    bust, left = np.broadcast_to(bust, (k, big)), np.broadcast_to(left, (k, big))
    dist = np.broadcast_to(dist, (k, big, dist.shape[-1]))
    check_memory("the race's linear system", 48 * k * big * dist.shape[-1])
    # P(not lost) summed, not 1 - P(lost): exact to its last digits when turns rarely bank
    going = dist.sum(axis=-1) + left
    c = np.cumprod(np.vstack([np.ones((1, big)), bust]), axis=0)  # c[S]: the streak's
    u = np.arange(big)
    down = np.maximum(u - m.penalty, 0)
    loop = down == u  # a lost streak that leaves the total where it is: 1 - c_S, summed
    s, g, j = np.nonzero(dist[:, :, 1:big])
    j += 1
    s, g, j = s[g + j < big], g[g + j < big], j[g + j < big]  # banks short of the target
    banks = sparse.csr_matrix((dist[s, g, j], (s * big + g, g + j)), shape=(k * big, big))
    system = sparse.csc_matrix(
        (np.concatenate([np.where(loop, (c[:k] * going).sum(axis=0), 1.0), -c[k][~loop],
                         -c[s, g] * dist[s, g, j]]),
         (np.concatenate([u, u[~loop], g]), np.concatenate([u, down[~loop], g + j]))),
        shape=(big, big))
    with warnings.catch_warnings():
        warnings.simplefilter("error", sparse_linalg.MatrixRankWarning)
        try:
            e = sparse_linalg.spsolve(system, c[:k].sum(axis=0))
        except sparse_linalg.MatrixRankWarning:  # no state reaches the target for sure
            e = np.full(big, np.inf)
    turns = np.zeros((k, big + 1))
    turns[0, :big] = np.where(np.isfinite(e) & (e >= 1.0), e, np.inf)
    b = 1.0 + (banks @ turns[0, :big]).reshape(k, big)
    for s in range(k - 1, 0, -1):
        turns[s, :big] = b[s] + bust[s] * (turns[0, down] if s == k - 1 else turns[s + 1, :big])
    return turns


def race(rules: FarkleRules, target: int, bank: np.ndarray, value: np.ndarray | None = None
         ) -> np.ndarray:
    """Expected turns to reach ``target`` solitaire under a fixed turn policy.

    ``bank`` (and ``value``, as in :func:`evaluate_turn_policy`): (P, 7), one turn policy
    at every total, (U, P, 7) per total index or (S, U, P, 7) per run of lost turns and
    total index (``U = target / 50 + floor`` with the rules' penalty floor, index ``u``
    played at total ``(u - floor) * 50``; S: the rules' streak, 1 without a penalty).
    Returns ``turns`` (S, U + 1) from each total index after each number of lost turns in
    a row (:func:`race_ends`). Each total's turn distribution comes from the forward pass:
    an evaluation independent of :func:`solve_fastest`'s backward one.

    >>> from dicelab.farkle.rules import PRESETS
    >>> e = race(PRESETS["default"], 1000, threshold_bank_table(300))
    >>> round(float(e[0, 0]), 3)  # expected turns from 0 when banking at 300 or more
    2.837
    """
    m = model(rules)
    big = check_target(target) // POINT_UNIT + rules.penalty_floor()
    return race_ends(m, big, *table_ends(rules, bank, value, m.streak, big))


def race_turns(rules: FarkleRules, target: int, bank: np.ndarray,
               value: np.ndarray | None = None, *, floor: int | None = None,
               tol: float = 1e-10, deepest: int = DEEPEST_RACE_FLOOR_POINTS) -> tuple[float, int]:
    """Expected turns of a turn policy (``bank``/``value`` as in :func:`race`, per-total
    tables indexed from ``floor`` units below zero, default the rules' penalty floor) to
    reach ``target`` from 0, and the floor (points below zero) the race was solved down
    to: that floor, doubled until the answer moves by at most ``tol`` (relative) from the
    one before; below the table's floor each turn is played as at its floor. A race whose
    answer still moves at ``deepest`` points below zero is refused: its expected turns
    grow with the depth totals may fall to, as when lost turns outweigh banks."""
    m = model(rules)
    t = check_target(target) // POINT_UNIT
    f0 = rules.penalty_floor() if floor is None else floor
    ends = table_ends(rules, bank, value, m.streak, t + f0)
    points, before = f0 * POINT_UNIT, None
    while True:
        extra = points // POINT_UNIT - f0  # rows below the table's floor, played as at it
        low = [x if x.shape[1] == 1 else np.concatenate([np.repeat(x[:, :1], extra, axis=1), x],
                                                         axis=1) for x in ends]
        turns = float(race_ends(m, t + f0 + extra, *low)[0, f0 + extra])
        if not rules.farkle_penalty or turns == np.inf or (
                before is not None and abs(turns - before) <= tol * turns):
            return turns, points
        if points >= deepest:
            raise UserError(
                f"the race to {target:,} does not settle under the farkle penalty: its "
                f"expected turns still grow as totals may fall deeper ({before:,.6f} with "
                f"totals down to -{points // 2:,}, {turns:,.6f} down to -{points:,})")
        before, points = turns, 2 * points


def sweep_totals(m: Model, turns: np.ndarray, state, tol: float, max_sweeps: int,
                 what: str) -> list[float]:
    """Expected turns to the target ``turns[s, u]`` (S, U + 1; 0 at ``U``) from every
    total index down and every count of lost turns in a row from the last, each from
    ``state(u, s, beta)``: a state whose lost turn costs ``beta`` turns more (``None``
    without a penalty: the state itself, a loop the state solves). A lost turn reads the
    next count (solved just before) and the last one the total the penalty leads to, from
    the sweep before (Gauss-Seidel), until no value moves by more than ``tol``
    (relative); without a penalty one sweep is exact. Returns each sweep's largest
    change."""
    k, big = turns.shape[0], turns.shape[1] - 1
    changes: list[float] = []
    while not changes or (k > 1 and changes[-1] > tol):
        if len(changes) >= max_sweeps:
            raise UserError(f"{what} with the farkle penalty did not settle in "
                            f"{max_sweeps} sweeps (last change {changes[-1]:.1e})")
        worst = 0.0
        for u in range(big - 1, -1, -1):
            for s in range(k - 1, -1, -1):
                beta = None if k == 1 else turns[s + 1, u] if s < k - 1 \
                    else turns[0, max(u - m.penalty, 0)]
                x = state(u, s, beta)
                if x < np.inf:
                    worst = max(worst, abs(x - turns[s, u]) / x)
                turns[s, u] = x
        changes.append(worst)
    return changes


@dataclass(frozen=True, kw_only=True)
class ThresholdSolution(TurnDistribution):
    """``threshold-T`` exactly: one turn's result distribution (a
    :class:`TurnDistribution`), and the expected turns to reach ``target`` solitaire
    (under a penalty for lost turns in a row, totals stop ``floor_points`` below zero)."""

    target: int
    expected_turns_to_target: float
    elapsed_s: float
    floor_points: int = 0
    from_cache = False

    def to_dict(self) -> dict:
        floor = {"floor_points": self.floor_points} if self.floor_points else {}
        return {**super().to_dict(), "target": self.target,
                "expected_turns_to_target": self.expected_turns_to_target, **floor,
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache}


def threshold_solution(rules: FarkleRules, threshold: int, target: int,
                       name: str | None = None) -> ThresholdSolution:
    """``threshold-T``'s turn distribution and its expected turns to ``target`` alone.

    >>> from dicelab.farkle.rules import PRESETS
    >>> threshold_solution(PRESETS["default"], 300, 10_000).expected_turns_to_target > 20
    True
    """
    t0 = time.perf_counter()
    bank = threshold_bank_table(threshold)
    d = evaluate_turn_policy(rules, bank, name=name or f"threshold-{threshold}")
    turns, floor = race_turns(rules, target, bank)
    return ThresholdSolution(**vars(d), target=target, expected_turns_to_target=turns,
                             elapsed_s=time.perf_counter() - t0,
                             floor_points=floor if rules.farkle_penalty else 0)


@dataclass(frozen=True)
class ThresholdSweep:
    """Exact expected turn score of ``threshold-T`` for each T in ``thresholds``."""

    rules: str
    thresholds: np.ndarray  # int64, points
    expected_score: np.ndarray  # float64, points
    p_bust: np.ndarray  # float64
    max_ev: float

    @property
    def best_threshold(self) -> int:
        """The T of highest expected turn score (the smallest one if several tie)."""
        return int(self.thresholds[int(np.argmax(self.expected_score))])

    @property
    def best_score(self) -> float:
        return float(self.expected_score.max())

    def gap_to_max_ev(self) -> np.ndarray:
        """max-ev's expected turn score minus each threshold's (points, >= 0)."""
        return self.max_ev - self.expected_score

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"threshold": self.thresholds,
                             "expected_turn_score": self.expected_score,
                             "p_bust": self.p_bust,
                             "gap_to_max_ev": self.gap_to_max_ev()})

    def to_dict(self) -> dict:
        return {"rules": self.rules, "best_threshold": self.best_threshold,
                "best_expected_turn_score": self.best_score,
                "max_ev_expected_turn_score": self.max_ev,
                "gap_of_best_to_max_ev": self.max_ev - self.best_score}


def threshold_sweep(rules: FarkleRules, thresholds=range(50, 2001, 50)) -> ThresholdSweep:
    """Exact expected turn score of every ``threshold-T`` in ``thresholds`` (points).

    >>> from dicelab.farkle.rules import PRESETS
    >>> sw = threshold_sweep(PRESETS["default"], range(50, 1001, 50))
    >>> sw.best_score <= sw.max_ev
    True
    """
    ts = np.array([check_points("threshold", int(t)) for t in thresholds], dtype=np.int64)
    if ts.size == 0:
        raise UserError("threshold sweep needs at least one threshold")
    dists = [threshold_distribution(rules, int(t)) for t in ts]
    scores = np.array([d.expected_score for d in dists])
    busts = np.array([d.p_bust for d in dists])
    free = dataclasses.replace(rules, farkle_penalty=0)  # one turn's score: no penalty
    return ThresholdSweep(rules.name, ts, scores, busts, solve_max_ev(free).expected_score)


# --- the solitaire policies as the simulation kernel plays them ------------------------


def last_roll(bank: np.ndarray) -> int:
    """The last row ``p >= 1`` of bank tables (..., P, 7) at which one of them still rolls
    with some number of dice (0: none does)."""
    rolls = (bank[..., 1:, 1:] == 0).any(axis=-1)
    rows = np.nonzero(rolls.reshape(-1, rolls.shape[-1]).any(axis=0))[0]
    return int(rows[-1]) + 1 if rows.size else 0  # row i of `rolls` is p = i + 1


def solitaire_table(name: str, value: np.ndarray, bank: np.ndarray, max_roll: int | None,
                    floor: int = 0) -> PolicyTable:
    """The PolicyTable of a one-player policy: ``value``/``bank`` (S, M, P, 7) by its own
    lost turns in a row and its own total, the same whatever the other's (shape (S, S, M,
    1, P, 7)). Its rows are cut where clamping never changes a decision (the PolicyTable
    contract): one roll (at most ``max_roll`` units) past the last row where it still
    rolls; ``None`` keeps every row."""
    p = bank.shape[-2] if max_roll is None else min(last_roll(bank) + max_roll + 1,
                                                    bank.shape[-2])
    k, u = value.shape[:2]
    shape = (k, k, u, 1, p, 7)
    return PolicyTable(name, np.broadcast_to(value[:, None, :, None, :p], shape)
                       .astype(np.float32),
                       np.broadcast_to(bank[:, None, :, None, :p], shape).copy(), floor=floor)


def max_ev_table(rules: FarkleRules) -> PolicyTable:
    """PolicyTable of ``max-ev``: value = expected final turn points, one policy per own
    lost turns in a row (the opponent's count and the totals do not matter), shape (S, S,
    1, 1, P, 7); where six dice roll on at every row, every row it solved."""
    sol = solve_max_ev(rules)
    m = model(rules)
    return solitaire_table("max-ev", sol.value[:, None], sol.bank[:, None],
                           None if m.six_rows else m.max_points)


def fastest_table(rules: FarkleRules, target: int) -> PolicyTable:
    """PolicyTable of ``fastest`` for ``target``: value = minus the expected turns still
    needed, one policy per own lost turns in a row and own total (from the rules' floor
    below zero), shape (S, S, U, 1, P, 7)."""
    sol = fastest_solution(rules, target)
    return solitaire_table("fastest", -sol.value, sol.bank, model(rules).max_points,
                           floor=sol.floor_points // POINT_UNIT)


__all__ = ["BANK_ROW_BYTES", "FastestSolution", "MaxEvSolution", "ThresholdSolution",
           "ThresholdSweep", "TurnDistribution", "bank_runs", "bank_thresholds",
           "check_bank_rows", "check_fastest", "endings",
           "evaluate_turn_policy", "fastest_solution", "fastest_table", "fixed_turns",
           "last_roll", "legal_bank", "max_ev_table", "race", "race_ends", "race_turns",
           "roll_values", "solve_fastest", "solve_max_ev", "table_ends", "threshold_bank",
           "threshold_bank_table",
           "threshold_distribution", "threshold_solution", "threshold_sweep"]
