"""Simulate Penta games: each seat plays its own card with its own dice (layer 2).

``simulate_penta(seats, games=1_000_000, seed=1)`` plays ``games`` games per seat.
Games are split into fixed chunks (:mod:`dicelab.seeding`); each chunk owns one
xoshiro256** generator and rolls all of seat 0's games, then seat 1's, ..., so results
are identical whatever the number of threads. Within a chunk the games advance in
lockstep, turn by turn and roll by roll, so that the table lookups of different
games overlap in memory.

Everything is accumulated in integers (histograms of TOTAL, per-box sums and sums
of squares, counts) and merged exactly; :class:`PentaResult` turns them into means
with 95% intervals, percentiles and win rates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numba import njit, prange

from dicelab import seeding, stats
from dicelab.errors import UserError
from dicelab.penta.policies import (
    BOX_SHIFT,
    KEEP1_SHIFT,
    KEEP_BITS,
    POLICIES,
    DecisionTables,
    all_states,
    decision_tables,
)
from dicelab.penta.rules import (
    BOX_NAMES,
    N_BOXES,
    PENTA_BOX,
    UPPER_BONUS,
    UPPER_TARGET,
    RuleSet,
    get_rules,
)
from dicelab.penta.scoring import ORDINARY, PENTA_FACE, roll_box_scores
from dicelab.penta.solver import solve
from dicelab.penta.tables import KEEP_SIZE, N_ROLLS, ROLL_BASE, SUBSETS, UNION
from dicelab.registry import PolicySpec, parse_policy
from dicelab.rng import roll_dice
from dicelab.runner import LazyArrays, executor_info, plan_token, run_plan

#: Histogram bins of TOTAL: 0..MAX_TOTAL (the highest possible TOTAL is 1575).
MAX_TOTAL = 1575
#: Chunks per kernel call (progress is reported between calls).
CHUNKS_PER_CALL = 16
# counters per (chunk, seat)
_UPPER_BONUS, _FIFTY, _BONUS_SUM, _BONUS_SQ, _ILLEGAL = range(5)
_N_COUNTS = 5


@njit(cache=True)
def _play_seat(st, p, slot, dec, rp, table, penta_face, subsets, keep_size,
               union, totals, box_sum, box_sq, counts, mask, up, fifty, roll, sl, kk, nbonus,
               scores):
    """Play one seat's ``totals.size`` games of a chunk in lockstep (writes ``totals``).

    Table lookups are gathered in their own passes over all games (no random numbers
    in between), so many cache misses are in flight at once; the random numbers are
    drawn in game order in separate passes, which fixes the stream's use.
    """
    G = totals.shape[0]
    for g in range(G):
        mask[g] = 0
        up[g] = 0
        fifty[g] = 0
        totals[g] = 0
        nbonus[g] = 0
    for _turn in range(N_BOXES):
        for g in range(G):
            sl[g] = slot[(mask[g] << 7) | (up[g] << 1) | fifty[g]]
        for g in range(G):
            roll[g] = roll_dice(st, 5) - ROLL_BASE
        for stage in range(2):
            shift = 0 if stage == 0 else KEEP1_SHIFT
            for g in range(G):
                r = roll[g]
                kk[g] = subsets[r, (dec[p, sl[g], r] >> shift) & KEEP_BITS]
            for g in range(G):
                n = 5 - keep_size[kk[g]]
                if n > 0:
                    roll[g] = union[kk[g], roll_dice(st, n)]
        for g in range(G):
            kk[g] = dec[p, sl[g], roll[g]] >> BOX_SHIFT
        for g in range(G):
            r = roll[g]
            b = kk[g]
            m = mask[g]
            bonus = 0
            if penta_face[r] != 0 and (m >> PENTA_BOX) & 1:
                bonus = roll_box_scores(rp, table, penta_face, m, fifty[g], r, scores)
                sc = scores[b]
            else:
                sc = table[b, r] if not (m >> b) & 1 else -1
            if sc < 0:
                counts[_ILLEGAL] += 1  # a decision the rules forbid: the wrapper raises
                sc = 0
            pts = sc + bonus
            if bonus > 0:
                nbonus[g] += 1
            if b < 6:
                nu = min(UPPER_TARGET, up[g] + sc)
                if up[g] < UPPER_TARGET and nu >= UPPER_TARGET:
                    pts += UPPER_BONUS
                    counts[_UPPER_BONUS] += 1
                up[g] = nu
            elif b == PENTA_BOX and sc == 50:
                fifty[g] = 1
                counts[_FIFTY] += 1
            mask[g] = m | (1 << b)
            totals[g] += pts
            box_sum[b] += sc
            box_sq[b] += sc * sc
    for g in range(G):
        counts[_BONUS_SUM] += nbonus[g]
        counts[_BONUS_SQ] += nbonus[g] * nbonus[g]


@njit(cache=True, parallel=True)
def _simulate_chunks(states, bounds, first, seat_policy, slot, dec, rp, table,
                     penta_face, subsets, keep_size, union, hist, box_sum, box_sq, counts,
                     wins, tied, ties):
    """Chunks ``first .. first + len(states) - 1``; chunk ``j`` writes only row ``j``."""
    S = seat_policy.shape[0]
    for j in prange(states.shape[0]):
        st = states[j].copy()
        G = bounds[first + j + 1] - bounds[first + j]
        totals = np.empty((S, G), dtype=np.int64)
        mask = np.empty(G, dtype=np.int64)
        up = np.empty(G, dtype=np.int64)
        fifty = np.empty(G, dtype=np.int64)
        roll = np.empty(G, dtype=np.int64)
        sl = np.empty(G, dtype=np.int64)
        kk = np.empty(G, dtype=np.int64)
        nbonus = np.empty(G, dtype=np.int64)
        scores = np.empty(N_BOXES, dtype=np.int64)
        for s in range(S):
            _play_seat(st, seat_policy[s], slot, dec, rp, table, penta_face,
                       subsets, keep_size, union, totals[s], box_sum[j, s], box_sq[j, s],
                       counts[j, s], mask, up, fifty, roll, sl, kk, nbonus, scores)
            for g in range(G):
                hist[j, s, min(totals[s, g], MAX_TOTAL)] += 1
        if S > 1:
            for g in range(G):
                best = totals[0, g]
                for s in range(1, S):
                    best = max(best, totals[s, g])
                n_best = 0
                for s in range(S):
                    if totals[s, g] == best:
                        n_best += 1
                for s in range(S):
                    if totals[s, g] == best:
                        if n_best == 1:
                            wins[j, s] += 1
                        else:
                            tied[j, s] += 1
                if n_best > 1:
                    ties[j] += 1


@dataclass(frozen=True)
class PentaResult:
    """Integer accumulators of a Penta simulation, per seat, and what they estimate.

    ``hist[s, t]``: games of seat ``s`` with TOTAL ``t`` (0..1575); ``box_sum``/``box_sq``
    (seats, 13): sums of box scores and their squares; ``upper_bonus``, ``fifty``: games
    with the upper bonus / 50 in the Penta box; ``bonus_sum``/``bonus_sq``: +100 bonuses
    (sum over games, and of squares); ``wins[s]``: games seat ``s`` won alone;
    ``tied[s]``: games it shared the highest TOTAL; ``ties``: games with a shared top.
    """

    seats: tuple[str, ...]
    rules: str
    games: int
    seed: int
    seed_given: bool
    hist: np.ndarray
    box_sum: np.ndarray
    box_sq: np.ndarray
    upper_bonus: np.ndarray
    fifty: np.ndarray
    bonus_sum: np.ndarray
    bonus_sq: np.ndarray
    wins: np.ndarray
    tied: np.ndarray
    ties: int
    seconds: float
    setup_seconds: float
    table_bytes: int
    exact_optimum: float | None
    game: str = "penta"
    #: "local" (this process) or "dask" (``workers`` Dask workers)
    executor: str = "local"
    workers: int | None = None

    @property
    def games_per_second(self) -> float:
        """Games (all seats together count as one game) per second of simulation."""
        return self.games / self.seconds if self.seconds > 0 else float("nan")

    def score(self, s: int) -> stats.Estimate:
        values = np.arange(MAX_TOTAL + 1, dtype=np.int64)
        h = self.hist[s].astype(object)
        total = int((h * values).sum())
        total_sq = int((h * values * values).sum())
        return stats.mean_estimate(total, total_sq, self.games)

    def sd(self, s: int) -> float:
        e = self.score(s)
        return float(e.se * np.sqrt(self.games)) if self.games > 1 else float("nan")

    def percentiles(self, s: int) -> dict[int, float]:
        return stats.percentiles_from_histogram(self.hist[s], np.arange(MAX_TOTAL + 1))

    def _proportion(self, k: int) -> dict[str, Any]:
        lo, hi = stats.wilson_interval(k, self.games)
        return {"p": k / self.games, "ci95": [lo, hi], "count": int(k)}

    def seat_dict(self, s: int) -> dict[str, Any]:
        e = self.score(s)
        bonus = stats.mean_estimate(int(self.bonus_sum[s]), int(self.bonus_sq[s]), self.games)
        boxes = {}
        for b, name in enumerate(BOX_NAMES):
            be = stats.mean_estimate(int(self.box_sum[s, b]), int(self.box_sq[s, b]), self.games)
            boxes[name] = {"mean": be.mean, "se": be.se}
        lo, hi = e.ci95
        out: dict[str, Any] = {
            "seat": s,
            "strategy": self.seats[s],
            "mean_final_score": e.mean,
            "mean_final_score_se": e.se,
            "mean_final_score_ci": [lo, hi],
            "sd": self.sd(s),
            "final_score_percentiles": {str(q): v for q, v in self.percentiles(s).items()},
            "p_upper_bonus": self._proportion(int(self.upper_bonus[s])),
            "p_penta_fifty": self._proportion(int(self.fifty[s])),
            "penta_bonuses": bonus.to_dict(),
            "boxes": boxes,
        }
        if len(self.seats) > 1:
            wins, tied = int(self.wins[s]), int(self.tied[s])
            out.update({"wins": wins, "ties": tied, "losses": self.games - wins - tied,
                        "win_rate": wins / self.games,
                        "win_rate_ci": list(stats.wilson_interval(wins, self.games)),
                        "tie_rate": tied / self.games,
                        "tie_rate_ci": list(stats.wilson_interval(tied, self.games))})
        if self.seats[s] == "optimal" and self.exact_optimum is not None:
            out["exact_mean"] = self.exact_optimum
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "game": "penta",
            "rules": self.rules,
            "games": self.games,
            "seed": self.seed,
            "seats": [self.seat_dict(s) for s in range(len(self.seats))],
            "elapsed_s": self.seconds,
            "games_per_s": self.games_per_second,
            "setup_s": self.setup_seconds,
            "table_bytes": self.table_bytes,
            "executor": self.executor,
            "workers": self.workers,
        }
        if len(self.seats) > 1:
            d["ties"] = self._proportion(int(self.ties))
        return d

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for s in range(len(self.seats)):
            sd = self.seat_dict(s)
            row = {"game": "penta", "seat": s, "strategy": sd["strategy"], "rules": self.rules,
                   "games": self.games, "seed": self.seed,
                   "mean_final_score": sd["mean_final_score"],
                   "mean_final_score_se": sd["mean_final_score_se"],
                   "mean_final_score_lo": sd["mean_final_score_ci"][0],
                   "mean_final_score_hi": sd["mean_final_score_ci"][1],
                   "sd": sd["sd"], "p_upper_bonus": sd["p_upper_bonus"]["p"],
                   "p_penta_fifty": sd["p_penta_fifty"]["p"],
                   "mean_penta_bonuses": sd["penta_bonuses"]["mean"]}
            for q, v in sd["final_score_percentiles"].items():
                row[f"final_score_p{q}"] = v
            for name, be in sd["boxes"].items():
                row[f"box_{name}"] = be["mean"]
            if len(self.seats) > 1:
                for key in ("wins", "ties", "win_rate", "tie_rate"):
                    row[key] = sd[key]
                row["win_rate_lo"], row["win_rate_hi"] = sd["win_rate_ci"]
            rows.append(row)
        return pd.DataFrame(rows)

    def manifest(self) -> dict[str, Any]:
        return {"game": "penta", "rules": self.rules,
                "policies": [{"seat": s, "name": n} for s, n in enumerate(self.seats)],
                "games": self.games, "seed": self.seed, "seed_given": self.seed_given,
                "chunk_games": seeding.CHUNK_GAMES, "elapsed_s": self.seconds,
                "setup_s": self.setup_seconds, "executor": self.executor,
                "workers": self.workers}


@dataclass(frozen=True, eq=False)
class PentaPlan(LazyArrays):
    """One Penta run as a picklable value, for :func:`dicelab.runner.run_plan`.

    ``seats``: Penta PolicySpecs; ``rules``: a rule-set name. The decision tables
    (270 MB per policy) are built (or loaded) by each process that plays, the first
    time it needs them. Accumulators (int64): ``hist`` (seats, MAX_TOTAL + 1),
    ``box_sum``/``box_sq`` (seats, 13), ``counts`` (seats, 5), ``wins``/``tied``
    (seats,), ``ties`` (1,).
    """

    seats: tuple[PolicySpec, ...]
    rules: str
    seed: int
    games: int
    batch_chunks: int = CHUNKS_PER_CALL

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.family for s in self.seats))

    def kernel_arrays(self) -> tuple[DecisionTables, RuleSet, np.ndarray]:
        """``(decision tables, rule set, seat_policy)``: seat ``s`` plays block
        ``seat_policy[s]`` of the tables."""
        def build() -> tuple[DecisionTables, RuleSet, np.ndarray]:
            rs = get_rules(self.rules)
            tables = decision_tables(self.families, rs)
            seat_policy = np.array([tables.policies.index(s.family) for s in self.seats],
                                   dtype=np.int64)
            return tables, rs, seat_policy
        return self._lazy(build)

    def token(self) -> str:
        return plan_token("penta", tuple(s.name for s in self.seats), self.rules, self.seed,
                          self.games, self.batch_chunks)

    def prepare(self) -> None:
        self.kernel_arrays()

    def empty(self) -> dict[str, np.ndarray]:
        S = len(self.seats)
        return {"hist": np.zeros((S, MAX_TOTAL + 1), dtype=np.int64),
                "box_sum": np.zeros((S, N_BOXES), dtype=np.int64),
                "box_sq": np.zeros((S, N_BOXES), dtype=np.int64),
                "counts": np.zeros((S, _N_COUNTS), dtype=np.int64),
                "wins": np.zeros(S, dtype=np.int64),
                "tied": np.zeros(S, dtype=np.int64),
                "ties": np.zeros(1, dtype=np.int64)}

    def run_range(self, first: int, stop: int) -> dict[str, np.ndarray]:
        tables, rs, seat_policy = self.kernel_arrays()
        S, m = len(self.seats), stop - first
        c_hist = np.zeros((m, S, MAX_TOTAL + 1), dtype=np.int64)
        c_box_sum = np.zeros((m, S, N_BOXES), dtype=np.int64)
        c_box_sq = np.zeros((m, S, N_BOXES), dtype=np.int64)
        c_counts = np.zeros((m, S, _N_COUNTS), dtype=np.int64)
        c_wins = np.zeros((m, S), dtype=np.int64)
        c_tied = np.zeros((m, S), dtype=np.int64)
        c_ties = np.zeros(m, dtype=np.int64)
        _simulate_chunks(seeding.chunk_states(self.seed, first, stop),
                         seeding.chunk_bounds(self.games), first, seat_policy, tables.slot,
                         tables.decisions, rs.params, ORDINARY, PENTA_FACE, SUBSETS,
                         KEEP_SIZE, UNION, c_hist, c_box_sum, c_box_sq, c_counts, c_wins,
                         c_tied, c_ties)
        return {"hist": c_hist.sum(axis=0), "box_sum": c_box_sum.sum(axis=0),
                "box_sq": c_box_sq.sum(axis=0), "counts": c_counts.sum(axis=0),
                "wins": c_wins.sum(axis=0), "tied": c_tied.sum(axis=0),
                "ties": c_ties.sum(keepdims=True)}


def _table_bytes(n_policies: int) -> int:
    """Bytes of the decision tables for ``n_policies`` policies (as DecisionTables.nbytes)."""
    states, slot = all_states()
    return int(slot.nbytes + states.nbytes
               + states.size * N_ROLLS * np.dtype(np.uint16).itemsize * n_policies)


def simulate_penta(seats: Sequence[PolicySpec | str], games: int = 1_000_000,
                   seed: int | None = None, rules: str | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   client: Any = None) -> PentaResult:
    """Play ``games`` games of Penta for every seat (each its own card and dice).

    ``seats``: policy specs or names (``optimal``, ``greedy``); ``rules``: a rule set
    name (default ``seed``). ``progress(done, total)`` is called between batches.
    ``client``: a ``distributed.Client`` to play the chunks on a Dask cluster (each
    worker builds the decision tables itself; same results as a local run).

    >>> r = simulate_penta(["optimal"], games=100_000, seed=1)  # doctest: +SKIP
    >>> r.score(0).mean  # doctest: +SKIP
    254.4...
    """
    if games <= 0:
        raise UserError(f"--games must be a positive number of games, not {games}")
    if not seats:
        raise UserError("give at least one seat policy")
    specs = [s if isinstance(s, PolicySpec) else parse_policy(s, "penta") for s in seats]
    for spec in specs:
        if spec.game != "penta" or spec.family not in POLICIES:
            raise UserError(f"policy '{spec.name}' is not a Penta policy; valid: "
                            f"{', '.join(POLICIES)}")
    rs = get_rules(rules)
    seed_given = seed is not None
    seed = seeding.check_seed(seed)
    plan = PentaPlan(tuple(specs), rs.name, int(seed), int(games),
                     batch_chunks=CHUNKS_PER_CALL)
    t0 = time.perf_counter()
    if client is None:
        plan.prepare()  # the tables, before the clock starts; workers build their own
    exact = solve(rs).expected_score if "optimal" in plan.families else None
    setup = time.perf_counter() - t0

    t1 = time.perf_counter()
    acc = run_plan(plan, progress=progress, client=client)
    seconds = time.perf_counter() - t1
    counts = acc["counts"]
    if counts[:, _ILLEGAL].any():
        raise RuntimeError("a Penta policy table chose a box the rules forbid "
                           f"({int(counts[:, _ILLEGAL].sum())} times): a bug")
    return PentaResult(
        seats=tuple(s.name for s in specs), rules=rs.name, games=games, seed=int(seed),
        seed_given=seed_given, hist=acc["hist"], box_sum=acc["box_sum"],
        box_sq=acc["box_sq"], upper_bonus=counts[:, _UPPER_BONUS].copy(),
        fifty=counts[:, _FIFTY].copy(), bonus_sum=counts[:, _BONUS_SUM].copy(),
        bonus_sq=counts[:, _BONUS_SQ].copy(), wins=acc["wins"], tied=acc["tied"],
        ties=int(acc["ties"][0]), seconds=seconds, setup_seconds=setup,
        table_bytes=_table_bytes(len(plan.families)), exact_optimum=exact,
        **executor_info(client))
