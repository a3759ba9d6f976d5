"""Exact Farkle policies as :class:`~dicelab.farkle.policy_table.PolicyTable` s.

:func:`policy_table` is the one entry point the simulation runner uses to play an exact
policy: ``max-ev`` and ``fastest`` come from :mod:`dicelab.farkle.turn_dp`,
``optimal-win`` from :mod:`dicelab.farkle.two_player`.

Solutions are cached on disk (:func:`dicelab.cache.cached`) keyed by a digest of the
scoring table (a preset's name is not enough: a user's TOML file may reuse it), the
target and :data:`FORMAT_VERSION`.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from dicelab import cache
from dicelab.errors import UserError
from dicelab.farkle import turn_dp
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.scoring import POINT_UNIT, ScoringTable
from dicelab.registry import PolicySpec

#: Bump when the solvers or the cached array layout change.
FORMAT_VERSION = 1


def scoring_digest(scoring: ScoringTable) -> str:
    """Short digest of a scoring table's content (its name included, its source not)."""
    d = scoring.to_dict()
    d.pop("source", None)
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def _safe_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:40]


def fastest_solution(scoring: ScoringTable, target: int, *, use_cache: bool = True
                     ) -> turn_dp.FastestSolution:
    """:func:`turn_dp.solve_fastest`, cached on disk (a few seconds for large targets)."""
    target = turn_dp._check_target(target)
    if not use_cache:
        return turn_dp.solve_fastest(scoring, target)
    key = f"farkle-fastest-{_safe_name(scoring.name)}-{scoring_digest(scoring)}-t{target}"
    built: list[turn_dp.FastestSolution] = []

    def build() -> dict[str, np.ndarray]:
        sol = turn_dp.solve_fastest(scoring, target)
        built.append(sol)
        return {"turns": sol.turns, "value": sol.value, "bank": sol.bank,
                "newton_steps": sol.newton_steps,
                "solve_seconds": np.array([sol.solve_seconds])}

    arrays, from_cache = cache.cached(key, FORMAT_VERSION, build)
    if not from_cache:
        return built[0]
    return turn_dp.FastestSolution(scoring.name, target, arrays["turns"], arrays["value"],
                                   arrays["bank"], arrays["newton_steps"],
                                   float(arrays["solve_seconds"][0]), from_cache=True)


def _rows_needed(bank: np.ndarray, max_roll_units: int) -> int:
    """Rows P so that clamping p at P - 1 never changes a decision (PolicyTable contract).

    ``bank``: (..., P, 7). Every state where the policy still rolls is below row
    ``last_roll + 1``; one roll adds at most ``max_roll_units``.
    """
    rolls = bank[..., 1:, 1:] == 0
    other_axes = tuple(i for i in range(rolls.ndim) if i != rolls.ndim - 2)
    rows = np.nonzero(rolls.any(axis=other_axes))[0]
    last_roll = int(rows[-1]) + 1 if rows.size else 0  # row i of `rolls` is p = i + 1
    return last_roll + max_roll_units + 1


def max_ev_table(scoring: ScoringTable) -> PolicyTable:
    """PolicyTable of ``max-ev``: value = expected final turn points, shape (1, 1, P, 7)."""
    sol = turn_dp.solve_max_ev(scoring)
    arr = turn_dp.turn_arrays(scoring)
    p = _rows_needed(sol.bank, arr.max_roll_units)
    if p > sol.bank.shape[0]:  # cannot happen: the DP banks from its cap on
        raise AssertionError("max-ev table needs more rows than solved")
    value = sol.value[:p].astype(np.float32)[None, None]
    bank = np.ascontiguousarray(sol.bank[:p])
    return PolicyTable("max-ev", value, bank[None, None])


def fastest_table(scoring: ScoringTable, target: int) -> PolicyTable:
    """PolicyTable of ``fastest`` for ``target``: value = minus expected turns still
    needed, shape (target/50, 1, P, 7)."""
    sol = fastest_solution(scoring, target)
    arr = turn_dp.turn_arrays(scoring)
    p = min(_rows_needed(sol.bank, arr.max_roll_units), sol.bank.shape[1])
    value = (-sol.value[:, :p]).astype(np.float32)[:, None]
    bank = np.ascontiguousarray(sol.bank[:, :p])
    return PolicyTable("fastest", value, bank[:, None])


def policy_table(spec: PolicySpec, scoring: ScoringTable, target: int, n_seats: int
                 ) -> PolicyTable:
    """The decision table through which the simulation kernel plays an exact policy.

    ``spec``: a parsed ``max-ev``, ``fastest`` or ``optimal-win``; ``target``: the
    game's target (points); ``n_seats``: seats in the game (``optimal-win`` is a
    two-player policy).

    >>> from dicelab.registry import parse_policy
    >>> from dicelab.farkle.scoring import PRESETS
    >>> t = policy_table(parse_policy("max-ev"), PRESETS["default"], 10000, 2)
    >>> t.value.shape[:2]
    (1, 1)
    """
    if spec.game != "farkle":
        raise UserError(f"policy '{spec.name}' is not a Farkle policy")
    target = turn_dp._check_target(target)
    if spec.family == "max-ev":
        return max_ev_table(scoring)
    if spec.family == "fastest":
        return fastest_table(scoring, target)
    if spec.family == "optimal-win":
        if n_seats != 2:
            raise UserError(f"optimal-win plays two-seat games only (this game has {n_seats} "
                            "seats); use max-ev, fastest, ai or threshold-T with more seats")
        from dicelab.farkle.two_player import solve_optimal_win

        return solve_optimal_win(scoring, target).policy_table()
    raise UserError(f"policy '{spec.name}' has no exact decision table; exact tables exist "
                    "for max-ev, fastest and optimal-win")


__all__ = ["FORMAT_VERSION", "POINT_UNIT", "fastest_solution", "fastest_table", "max_ev_table",
           "policy_table", "scoring_digest"]
