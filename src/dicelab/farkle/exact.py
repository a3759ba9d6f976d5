"""Exact Farkle policies as :class:`~dicelab.farkle.policy_table.PolicyTable` s.

:func:`policy_table` is the one entry point the simulation runner uses to play an exact
policy: ``max-ev`` and ``fastest`` come from :mod:`dicelab.farkle.turn_dp`,
``optimal-win`` from :mod:`dicelab.farkle.two_player`.

Solutions are cached on disk (:func:`dicelab.cache.cached`) under
:func:`dicelab.cache.entry_key`: the rules' content digest (a preset's name is not
enough: a user's TOML file may reuse it), the target and :data:`FORMAT_VERSION`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dicelab import cache
from dicelab.errors import UserError
from dicelab.farkle import turn_dp
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import POINT_UNIT, FarkleRules, check_target, load_rules, set_asides
from dicelab.registry import PolicySpec, parse_policy

if TYPE_CHECKING:
    from dicelab.farkle.two_player import OptimalWinSolution

#: Bump when the solvers or the cached array layout change.
FORMAT_VERSION = 2


def fastest_solution(rules: FarkleRules, target: int, *, use_cache: bool = True
                     ) -> turn_dp.FastestSolution:
    """:func:`turn_dp.solve_fastest`, cached on disk (a few seconds for large targets)."""
    target = check_target(target)
    if rules.farkle_penalty:  # a few seconds, not cached
        return turn_dp.solve_fastest_penalty(rules, target)
    if not use_cache:
        return turn_dp.solve_fastest(rules, target)
    key = cache.entry_key("farkle-fastest", rules.name, rules.digest(), t=target)
    built: list[turn_dp.FastestSolution] = []

    def build() -> dict[str, np.ndarray]:
        sol = turn_dp.solve_fastest(rules, target)
        built.append(sol)
        return {"turns": sol.turns, "value": sol.value, "bank": sol.bank,
                "newton_steps": sol.newton_steps,
                "solve_s": np.array([sol.solve_s])}

    t0 = time.perf_counter()
    arrays, from_cache = cache.cached(key, FORMAT_VERSION, build)
    if not from_cache:
        return built[0]
    return turn_dp.FastestSolution(rules.name, target, arrays["turns"], arrays["value"],
                                   arrays["bank"], arrays["newton_steps"],
                                   float(arrays["solve_s"][0]), time.perf_counter() - t0,
                                   from_cache=True)


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


def max_ev_table(rules: FarkleRules) -> PolicyTable:
    """PolicyTable of ``max-ev``: value = expected final turn points, shape (1, 1, P, 7);
    under a farkle penalty one policy per own lost turns in a row (the opponent's count
    does not matter), shape (3, 3, 1, 1, P, 7)."""
    if rules.farkle_penalty:
        return _max_ev_penalty_table(rules)
    sol = turn_dp.solve_max_ev(rules)
    if rules.hot_dice == "must-roll":  # six dice roll at every row: keep all it solved
        p = sol.bank.shape[0]
    else:
        p = _rows_needed(sol.bank, set_asides(rules).max_points)
    if p > sol.bank.shape[0]:  # cannot happen: the DP banks from its cap on
        raise AssertionError("max-ev table needs more rows than solved")
    value = sol.value[:p].astype(np.float32)[None, None]
    bank = np.ascontiguousarray(sol.bank[:p])
    return PolicyTable("max-ev", value, bank[None, None])


def _max_ev_penalty_table(rules: FarkleRules) -> PolicyTable:
    sol = turn_dp.solve_max_ev_penalty(rules)
    if rules.hot_dice == "must-roll":  # six dice roll at every row: keep all it solved
        p = sol.streak[0].bank.shape[0]
    else:
        p = max(_rows_needed(st.bank, set_asides(rules).max_points) for st in sol.streak)
    value = np.stack([st.value[:p] for st in sol.streak]).astype(np.float32)
    bank = np.stack([st.bank[:p] for st in sol.streak])
    k = len(sol.streak)
    shape = (k, k, 1, 1, p, 7)
    return PolicyTable("max-ev", np.broadcast_to(value[:, None, None, None], shape).copy(),
                       np.broadcast_to(bank[:, None, None, None], shape).copy())


def fastest_table(rules: FarkleRules, target: int) -> PolicyTable:
    """PolicyTable of ``fastest`` for ``target``: value = minus expected turns still
    needed, shape (target/50, 1, P, 7); under a farkle penalty (3, 3, T, 1, P, 7), one
    policy per own lost turns in a row and totals from the floor below zero."""
    sol = fastest_solution(rules, target)
    p = min(_rows_needed(sol.bank, set_asides(rules).max_points), sol.bank.shape[-2])
    value = (-sol.value[..., :p, :]).astype(np.float32)
    bank = np.ascontiguousarray(sol.bank[..., :p, :])
    if not isinstance(sol, turn_dp.PenaltyFastestSolution):
        return PolicyTable("fastest", value[:, None], bank[:, None])
    # under the penalty: one policy per own lost turns in a row, totals from the floor
    k = value.shape[0]
    shape = (k, k, *value.shape[1:2], 1, p, 7)
    return PolicyTable("fastest", np.broadcast_to(value[:, None, :, None], shape).copy(),
                       np.broadcast_to(bank[:, None, :, None], shape).copy(),
                       floor=sol.floor_points // POINT_UNIT)


def policy_table(spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int,
                 progress=None) -> PolicyTable:
    """The decision table through which the simulation kernel plays an exact policy.

    ``spec``: a parsed ``max-ev``, ``fastest`` or ``optimal-win``; ``target``: the
    game's target (points); ``n_seats``: seats in the game (``optimal-win`` is a
    two-player policy).

    >>> from dicelab.registry import parse_policy
    >>> from dicelab.farkle.rules import PRESETS
    >>> t = policy_table(parse_policy("max-ev"), PRESETS["default"], 10000, 2)
    >>> t.value.shape[:2]
    (1, 1)
    """
    target = check_policy_table(spec, rules, target, n_seats)
    if spec.family == "max-ev":
        return max_ev_table(rules)
    if spec.family == "fastest":
        return fastest_table(rules, target)
    return optimal_win_solution(spec, rules, target, progress=progress).policy_table()


def check_policy_table(spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int
                       ) -> int:
    """What :func:`policy_table` refuses, refused before any solve: another game's policy,
    a policy without a table, ``optimal-win`` at other than two seats, and an
    ``optimal-win`` table larger than the memory limit (from a lower bound of its size,
    :func:`~dicelab.farkle.two_player.least_policy_table_bytes`: an hour's solve must not
    end in that refusal). Returns the checked target."""
    from dicelab.resources import check_memory

    if spec.game != "farkle":
        raise UserError(f"policy '{spec.name}' is not a Farkle policy")
    target = check_target(target)
    if spec.family not in ("max-ev", "fastest", "optimal-win"):
        raise UserError(f"policy '{spec.name}' has no exact decision table; exact tables "
                        "exist for max-ev, fastest and optimal-win")
    if spec.family == "optimal-win":
        if n_seats != 2:
            raise UserError(f"optimal-win plays two-seat games only (this game has {n_seats} "
                            "seats); use max-ev, fastest, ai or threshold-T with more seats")
        from dicelab.farkle.two_player import least_policy_table_bytes

        # the factor of OptimalWinSolution.policy_table's own check
        check_memory(f"the {spec.name} policy table to {target:,}",
                     least_policy_table_bytes(rules, target) * 1.5)
    return target


def optimal_win_solution(spec: PolicySpec, rules: FarkleRules, target: int, progress=None
                         ) -> OptimalWinSolution:
    """``optimal-win`` (self-play) or ``optimal-win:vs=POLICY`` (a best response), solved
    or loaded from the cache."""
    from dicelab.farkle.two_player import solve_best_response, solve_optimal_win

    if "vs" in spec.params:
        return solve_best_response(rules, target, spec.params["vs"], progress=progress)
    return solve_optimal_win(rules, target, progress=progress)


@dataclass(frozen=True)
class ThresholdSolution:
    """``threshold-T`` exactly: one turn's result distribution, and the expected turns to
    reach ``target`` solitaire."""

    policy: str
    rules: str
    target: int
    distribution: turn_dp.TurnDistribution
    expected_turns_to_target: float
    elapsed_s: float
    from_cache = False

    def to_dict(self) -> dict:
        return {**self.distribution.to_dict(), "target": self.target,
                "expected_turns_to_target": self.expected_turns_to_target,
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache}


def solve_policy(policy: str | PolicySpec, rules: str | FarkleRules | None = None,
                 target: int | None = None, ending: str | None = None,
                 progress=None
                 ) -> (ThresholdSolution | turn_dp.MaxEvSolution | turn_dp.PenaltyMaxEvSolution
                       | turn_dp.FastestSolution
                       | OptimalWinSolution):
    """What ``dicelab solve farkle`` computes: the exact answer for a Farkle policy.

    ``threshold-T``: :class:`ThresholdSolution`; ``max-ev``: :class:`~dicelab.farkle.
    turn_dp.MaxEvSolution` (under a farkle penalty :class:`~dicelab.farkle.turn_dp.
    PenaltyMaxEvSolution`); ``fastest``: :class:`~dicelab.farkle.turn_dp.FastestSolution`
    (cached); ``optimal-win``: :class:`~dicelab.farkle.two_player.OptimalWinSolution`
    (cached; ``progress(fraction)`` is called as it solves).

    >>> solve_policy("threshold-300").expected_turns_to_target > 20
    True
    """
    spec = policy if isinstance(policy, PolicySpec) else parse_policy(policy, "farkle")
    rules = load_rules(rules, ending)
    t = check_target(target)
    if spec.family == "threshold":
        t0 = time.perf_counter()
        dist = turn_dp.threshold_distribution(rules, spec.params["threshold"])
        if rules.farkle_penalty:  # the race's state has the lost turns in a row
            turns = float(turn_dp.race_with_penalty(rules, t, dist)[0, rules.penalty_floor()])
        else:
            turns = float(turn_dp.evaluate_race(rules, t, turn_dp.threshold_bank_table(
                spec.params["threshold"]))[0])
        return ThresholdSolution(spec.name, rules.name, t, dist, turns,
                                 time.perf_counter() - t0)
    if spec.family == "max-ev":
        if rules.farkle_penalty:  # the average-reward problem: a policy per streak
            return turn_dp.solve_max_ev_penalty(rules)
        return turn_dp.solve_max_ev(rules)
    if spec.family == "fastest":
        return fastest_solution(rules, t)
    if spec.family == "optimal-win":
        return optimal_win_solution(spec, rules, t, progress=progress)
    raise UserError(f"{spec.name} has no exact turn analysis: its threshold depends on the "
                    "game state (its deficit); simulate it, e.g. dicelab simulate -s ai --vs "
                    "threshold-300")


__all__ = ["FORMAT_VERSION", "ThresholdSolution", "fastest_solution", "fastest_table",
           "max_ev_table", "policy_table", "solve_policy"]
