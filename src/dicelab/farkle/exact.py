"""Exact Farkle answers for any policy by name (layer 2): the front of the solvers.

* :func:`solve_policy`: what ``dicelab solve farkle`` computes for a policy;
* :func:`policy_table`: the decision table through which the simulation kernel plays an
  exact policy (``max-ev``, ``fastest``, ``optimal-win``, ``optimal-win:vs=P``);
* :func:`resolve`: any policy as the game engine reads it (its policy object from its
  family, :mod:`dicelab.farkle.builtin`; exact ones solved or loaded);
* :func:`solve_best_response` and :func:`exact_pair`: the game engine's best response
  and exact head to head, for policies given by name.

Solutions are cached on disk (:func:`dicelab.cache.cached`) under
:func:`dicelab.cache.entry_key`: the rules' content digest (a preset's name is not
enough: a user's TOML file may reuse it), the target and a format version.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dicelab import cache, config
from dicelab.digest import text_digest
from dicelab.errors import UserError
from dicelab.farkle import builtin, fixed, solve
from dicelab.farkle.builtin import resolve
from dicelab.farkle.policy_table import PolicyTable
from dicelab.farkle.rules import FarkleRules, check_target, load_rules
from dicelab.farkle.solitaire import FastestSolution, MaxEvSolution, ThresholdSolution
from dicelab.farkle.solve import OptimalWinSolution, solve_optimal_win
from dicelab.outcomes import ExactPair, Outcome
from dicelab.registry import PolicySpec, parse_policy

#: Version of the cached exact pairs' outcomes.
PAIR_FORMAT_VERSION = 5


def policy_table(spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int,
                 progress=None) -> PolicyTable:
    """The decision table through which the simulation kernel plays an exact policy.

    ``spec``: a parsed ``max-ev``, ``fastest`` or ``optimal-win``; ``target``: the
    game's target (points); ``n_seats``: seats in the game (``optimal-win`` is a
    two-player policy). Refused before any solve: another game's policy, a policy
    without a table, ``optimal-win`` at other than two seats, and an ``optimal-win``
    table larger than the memory limit (from a lower bound of its size,
    :func:`~dicelab.farkle.solve.least_policy_table_bytes`: an hour's solve must not end
    in that refusal).

    >>> from dicelab.registry import parse_policy
    >>> from dicelab.farkle.rules import PRESETS
    >>> t = policy_table(parse_policy("max-ev"), PRESETS["default"], 10000, 2)
    >>> t.value.shape[:2]
    (1, 1)
    """
    if spec.game != "farkle":
        raise UserError(f"policy '{spec.name}' is not a Farkle policy")
    family = builtin.family_of(spec)
    if not family.solved:
        exact = ", ".join(f.name for f in builtin.FAMILIES.values() if f.solved)
        raise UserError(f"policy '{spec.name}' has no exact decision table; exact tables "
                        f"exist for {exact}")
    return family.table(spec, rules, family.check(spec, rules, target, n_seats), progress)


def solve_best_response(rules: FarkleRules, target: int, opponent, *,
                        tol: float = config.OPTIMAL_WIN_TOL, use_cache: bool = True,
                        progress: Callable[[float], None] | None = None
                        ) -> OptimalWinSolution:
    """The policy of maximum ``P(win) + 0.5 P(tie)`` against a fixed ``opponent``
    (``optimal-win:vs=OPPONENT``): any Farkle policy (a name, a PolicySpec or a
    PolicyTable, or a user's policy). See :func:`dicelab.farkle.solve.solve_best_response`;
    cached on disk (a user's policy or a table by what it decides, not its name alone).

    >>> from dicelab.farkle.rules import PRESETS
    >>> br = solve_best_response(PRESETS["default"], 1000, "threshold-300")
    >>> br.policy, round(br.first_outcome.score, 4) > 0.6
    ('optimal-win:vs=threshold-300', True)
    """
    return builtin.best_response(rules, target, opponent, tol=tol, use_cache=use_cache,
                                 progress=progress)


def exact_pair(policy: str | PolicySpec | PolicyTable, opponent: str | PolicySpec | PolicyTable,
               *, rules: str | FarkleRules | None = None, target: int | None = None,
               ending: str | None = None, use_cache: bool = True,
               progress: Callable[[float], None] | None = None) -> ExactPair:
    """``policy`` against ``opponent`` in a two-seat Farkle game, exactly (both seats).

    Evaluations are cached on disk (key: both policies, the rules' content, the target):
    a built-in policy by its name, a user's policy or a PolicyTable by its name and a
    digest of its turns' endings as the game reads them (code that may change under the
    same name). ``progress(fraction)``: through the solves of exact policies, each its
    half (an evaluation from the cache needs none).

    >>> p = exact_pair("threshold-300", "threshold-300", target=1000)
    >>> p.verdict, round(p.first.score + p.second.score, 12)
    ('tie', 1.0)
    """
    rules = load_rules(rules, ending)
    target = check_target(target)
    a, b = fixed.name_of(policy), fixed.name_of(opponent)
    t0 = time.perf_counter()
    policies, tags = (policy, opponent), [a, b]

    def half(k: int) -> Callable[[float], None] | None:
        return None if progress is None else (lambda f: progress((k + f) / 2))

    resolved: list[fixed.FixedPolicy] = []
    got: dict[int, fixed.Side] = {}

    def side(k: int) -> fixed.Side:
        """Seat ``k``'s turn endings, once (both policies resolved first: the leads)."""
        if not resolved:
            resolved.extend(resolve(p, rules, target, half(i)) for i, p in enumerate(policies))
        if k not in got:
            got[k] = fixed.side_of(resolved[k], rules, target,
                                   fixed.lead_rows(resolved, rules, target))
        return got[k]

    if use_cache:  # a user's policy or a table by its turns' endings, not its name alone
        tags = [t if builtin.named(p) else f"{t}:{cache.digest(*side(k))[:16]}"
                for k, (t, p) in enumerate(zip(tags, policies, strict=True))]
    key = cache.entry_key("farkle-exact-pair", rules.name, rules.digest(), t=target,
                          a=text_digest(tags)[:12]) if use_cache else None

    def build() -> dict[str, np.ndarray]:
        first, second, bound = solve.pair_outcomes(side(0), side(1), rules, target)
        return {"outcomes": np.array([first.win, first.tie, second.win, second.tie, bound])}

    arrays, from_cache = cache.cached(key, f"{PAIR_FORMAT_VERSION}:{a}:{b}", build,
                                      rules.cache_about()) \
        if key else (build(), False)
    win, tie, second_win, second_tie, bound = (float(x) for x in arrays["outcomes"])
    first, second = Outcome(win, tie), Outcome(second_win, second_tie)
    return ExactPair("farkle", a, b, rules.name, first, second, time.perf_counter() - t0,
                     from_cache, ending=rules.ending, target=target,
                     tolerance=bound)


def solve_policy(policy: str | PolicySpec, rules: str | FarkleRules | None = None,
                 target: int | None = None, ending: str | None = None,
                 progress=None, floor: int | None = None
                 ) -> ThresholdSolution | MaxEvSolution | FastestSolution | OptimalWinSolution:
    """What ``dicelab solve farkle`` computes: the exact answer for a Farkle policy.

    ``threshold-T``: :class:`ThresholdSolution`; ``max-ev``:
    :class:`~dicelab.farkle.solitaire.MaxEvSolution`; ``fastest``:
    :class:`~dicelab.farkle.solitaire.FastestSolution` (cached); ``optimal-win``:
    :class:`~dicelab.farkle.solve.OptimalWinSolution` (cached; ``progress(fraction)`` is
    called as it solves). ``floor``: under a farkle penalty, how far below zero (points)
    the totals of ``fastest`` and ``optimal-win`` may fall (default
    :meth:`FarkleRules.penalty_floor`).

    >>> solve_policy("threshold-300").expected_turns_to_target > 20
    True
    """
    spec = policy if isinstance(policy, PolicySpec) else parse_policy(policy, "farkle")
    family = builtin.family_of(spec)
    family.check_solve(spec, target, ending)
    rules, target = load_rules(rules, ending), check_target(target)
    with family.floor(spec, rules, floor):
        return family.solve(spec, rules, target, progress)


__all__ = ["ThresholdSolution", "exact_pair", "policy_table",
           "resolve", "solve_best_response", "solve_optimal_win", "solve_policy"]
