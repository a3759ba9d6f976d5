"""Exact Farkle answers for any policy by name (layer 2): the front of the solvers.

* :func:`solve_policy`: what ``dicelab solve farkle`` computes for a policy;
* :func:`policy_table`: the decision table through which the simulation kernel plays an
  exact policy (``max-ev``, ``fastest``, ``optimal-win``, ``optimal-win:vs=P``);
* :func:`resolve`: any policy as the game engine reads it (a ``threshold-T`` or ``ai``
  spec, or the PolicyTable of an exact policy);
* :func:`solve_best_response` and :func:`exact_pair`: the game engine's best response
  and exact head to head, for policies given by name.

Solutions are cached on disk (:func:`dicelab.cache.cached`) under
:func:`dicelab.cache.entry_key`: the rules' content digest (a preset's name is not
enough: a user's TOML file may reuse it), the target and a format version.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dicelab import cache, config
from dicelab.digest import text_digest
from dicelab.errors import UserError
from dicelab.farkle import fixed, solitaire, solve
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import FarkleRules, check_target, load_rules
from dicelab.farkle.solitaire import fastest_table, max_ev_table
from dicelab.farkle.solve import OptimalWinSolution, solve_optimal_win
from dicelab.outcomes import ExactPair
from dicelab.registry import PolicySpec, parse_policy


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
    :func:`~dicelab.farkle.solve.least_policy_table_bytes`: an hour's solve must not end
    in that refusal). Returns the checked target."""
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
        # the factor of OptimalWinSolution.policy_table's own check
        check_memory(f"the {spec.name} policy table to {target:,}",
                     solve.least_policy_table_bytes(rules, target) * 1.5)
    return target


def resolve(policy: str | PolicySpec | PolicyTable, rules: FarkleRules, target: int,
            progress: Callable[[float], None] | None = None) -> PolicySpec | PolicyTable:
    """A policy as the game engine reads it: a ``threshold-T`` or ``ai`` spec, or the
    PolicyTable of an exact policy (solved or loaded from the cache; ``progress(fraction)``
    through an ``optimal-win`` solve)."""
    if isinstance(policy, str):
        policy = parse_policy(policy, "farkle")
    if isinstance(policy, PolicySpec) and policy.family == "user":
        policy = policy.policy
    if isinstance(policy, PolicyTable):
        return fixed.check_table(policy, rules)
    if not isinstance(policy, PolicySpec):
        return _tabulable(policy)
    spec = policy
    if spec.game != "farkle":
        raise UserError(f"policy '{spec.name}' is a {spec.game} policy; exact head to head "
                        "of Farkle takes Farkle policies")
    if spec.family in ("threshold", "ai"):
        return spec
    return policy_table(spec, rules, target, 2, progress=progress)


def _named(policy) -> bool:
    """Whether a policy is a built-in one named by its name (whose evaluations are
    cached; a user's policy is code that may change under the same name)."""
    if isinstance(policy, str):
        policy = parse_policy(policy, "farkle")
    return isinstance(policy, PolicySpec) and policy.family != "user"


def _tabulable(policy):
    """A policy object the engine can read (a bank rule), or the refusal that says why
    not."""
    if hasattr(policy, "slices") and hasattr(policy, "normal_rows"):
        return policy
    raise UserError(f"policy '{getattr(policy, 'name', policy)}' cannot be answered exactly: "
                    "the exact solvers read a policy written as a bank rule "
                    "(dicelab.farkle.policy.bank_rule) or a policy table; simulate it instead")


def solve_best_response(rules: FarkleRules, target: int, opponent, *,
                        tol: float = config.OPTIMAL_WIN_TOL, use_cache: bool = True,
                        progress: Callable[[float], None] | None = None
                        ) -> OptimalWinSolution:
    """The policy of maximum ``P(win) + 0.5 P(tie)`` against a fixed ``opponent``
    (``optimal-win:vs=OPPONENT``): any Farkle policy (a name, a PolicySpec or a
    PolicyTable, or a user's policy). See :func:`dicelab.farkle.solve.solve_best_response`;
    cached on disk for built-in opponents.

    >>> from dicelab.farkle.rules import PRESETS
    >>> br = solve_best_response(PRESETS["default"], 1000, "threshold-300")
    >>> br.policy, round(br.p_win + br.p_tie / 2, 4) > 0.6
    ('optimal-win:vs=threshold-300', True)
    """
    target = check_target(target)
    return solve.solve_best_response(rules, target, fixed.name_of(opponent),
                                     lambda: resolve(opponent, rules, target), tol=tol,
                                     use_cache=use_cache and _named(opponent),
                                     progress=progress)


def optimal_win_solution(spec: PolicySpec, rules: FarkleRules, target: int, progress=None
                         ) -> OptimalWinSolution:
    """``optimal-win`` (self-play) or ``optimal-win:vs=POLICY`` (a best response), solved
    or loaded from the cache."""
    if "vs" in spec.params:
        return solve_best_response(rules, target, spec.params["vs"], progress=progress)
    return solve_optimal_win(rules, target, progress=progress)


def exact_pair(policy: str | PolicySpec | PolicyTable, opponent: str | PolicySpec | PolicyTable,
               *, rules: str | FarkleRules | None = None, target: int | None = None,
               ending: str | None = None, use_cache: bool = True,
               progress: Callable[[float], None] | None = None) -> ExactPair:
    """``policy`` against ``opponent`` in a two-seat Farkle game, exactly (both seats).

    Named policies' evaluations are cached on disk (key: both names, the rules' content,
    the target); a PolicyTable's are not. ``progress(fraction)``: through the solves of
    exact policies, each its half (an evaluation from the cache needs none).

    >>> p = exact_pair("threshold-300", "threshold-300", target=1000)
    >>> p.verdict, round(p.first.score + p.second.score, 12)
    ('tie', 1.0)
    """
    rules = load_rules(rules, ending)
    target = check_target(target)
    a, b = fixed.name_of(policy), fixed.name_of(opponent)
    t0 = time.perf_counter()
    named = all(_named(p) for p in (policy, opponent))
    key = cache.entry_key("farkle-exact-pair", rules.name, rules.digest(), t=target,
                          a=text_digest([a, b])[:12]) if use_cache and named else None

    def half(k: int) -> Callable[[float], None] | None:
        return None if progress is None else (lambda f: progress((k + f) / 2))

    def build() -> dict[str, np.ndarray]:
        return solve.evaluate(resolve(policy, rules, target, half(0)),
                              resolve(opponent, rules, target, half(1)), rules, target)

    arrays, from_cache = cache.cached(key, f"{solve.FORMAT_VERSION}:{a}:{b}", build) \
        if key else (build(), False)
    first, second = solve.outcomes_of(arrays)
    return ExactPair("farkle", a, b, rules.name, first, second, time.perf_counter() - t0,
                     from_cache, ending=rules.ending, target=target,
                     tolerance=float(arrays["meta"][0]))


@dataclass(frozen=True)
class ThresholdSolution:
    """``threshold-T`` exactly: one turn's result distribution, and the expected turns to
    reach ``target`` solitaire."""

    policy: str
    rules: str
    target: int
    distribution: solitaire.TurnDistribution
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
                 ) -> (ThresholdSolution | solitaire.MaxEvSolution | solitaire.FastestSolution
                       | OptimalWinSolution):
    """What ``dicelab solve farkle`` computes: the exact answer for a Farkle policy.

    ``threshold-T``: :class:`ThresholdSolution`; ``max-ev``:
    :class:`~dicelab.farkle.solitaire.MaxEvSolution`; ``fastest``:
    :class:`~dicelab.farkle.solitaire.FastestSolution` (cached); ``optimal-win``:
    :class:`~dicelab.farkle.solve.OptimalWinSolution` (cached; ``progress(fraction)`` is
    called as it solves).

    >>> solve_policy("threshold-300").expected_turns_to_target > 20
    True
    """
    spec = policy if isinstance(policy, PolicySpec) else parse_policy(policy, "farkle")
    rules = load_rules(rules, ending)
    t = check_target(target)
    if spec.family == "threshold":
        t0 = time.perf_counter()
        dist = solitaire.threshold_distribution(rules, spec.params["threshold"])
        turns = solitaire.race(rules, t, solitaire.threshold_bank_table(
            spec.params["threshold"]))[0, rules.penalty_floor()]
        return ThresholdSolution(spec.name, rules.name, t, dist, float(turns),
                                 time.perf_counter() - t0)
    if spec.family == "max-ev":
        return solitaire.solve_max_ev(rules)
    if spec.family == "fastest":
        return solitaire.fastest_solution(rules, t)
    if spec.family == "optimal-win":
        return optimal_win_solution(spec, rules, t, progress=progress)
    raise UserError(f"{spec.name} has no exact turn analysis: its threshold depends on the "
                    "game state (its deficit); simulate it, e.g. dicelab simulate -s ai --vs "
                    "threshold-300")


__all__ = ["ThresholdSolution", "check_policy_table", "exact_pair", "fastest_table",
           "max_ev_table", "optimal_win_solution", "policy_table", "resolve",
           "solve_best_response", "solve_optimal_win", "solve_policy"]
