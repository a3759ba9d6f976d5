"""dicelab's own Penta policies and a user's, as the registry's families (layer 2).

The registry (:mod:`dicelab.registry`) parses a Penta policy name into a
:class:`~dicelab.registry.PolicySpec` (its family and parameters). Everything a tool asks
of a Penta policy it asks the spec's :class:`Family` (:func:`family_of`): one object per
family in :data:`FAMILIES` (``optimal``, ``greedy``, ``objective`` for
``optimal:OBJECTIVE``, ``penta-win``) and :data:`USER` for a policy a user wrote. No other
module branches on a Penta family's name. A family gives

* how the simulation kernel plays it: the decision-table block it reads (:meth:`Family.block`,
  :data:`dicelab.penta.policies.POLICIES`), or its own turn-by-turn seat
  (:meth:`Family.kernel_seat`, ``online``); a user's policy is played by the Python
  referee instead (``by_referee``);
* its refusals at a table (:meth:`Family.check`: ``penta-win``'s seats) and under a
  rule set (:meth:`Family.check_rules`: a user's values), before any game;
* the policy object the referee asks move by move (:meth:`Family.policy`; for game logs,
  :meth:`Family.logged`, which needs no 270 MB tables);
* the values its options are ranked by (:meth:`Family.values`: ``advise``, ``play``) and
  what ``analyse`` judges its decisions by (:meth:`Family.judged_by`);
* its exact score distribution when it has one of its own (:meth:`Family.distribution`,
  :meth:`Family.has_distribution`: a decision block's, or an objective's forward pass;
  ``compare --exact``, ``evaluate``) and its exact mean when known without one
  (:meth:`Family.expected_score`);
* its tuning space (:meth:`dicelab.families.Family.space`: a user's declared ``space``).

>>> family_of(parse_policy("optimal:at-least:300")).online
True
>>> family_of(parse_policy("greedy")).block(parse_policy("greedy"))
'greedy'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dicelab import families
from dicelab.errors import UserError, user_code_error
from dicelab.penta import objective_play
from dicelab.penta.distribution import ScoreDistribution, score_distribution, values_distribution
from dicelab.penta.objective_play import (
    WIN_MAX_SEATS,
    OnlinePolicy,
    OnlineSeat,
    objective_distribution,
    online_seat,
    table_seat,
)
from dicelab.penta.objectives import parse_objective, solve_objective
from dicelab.penta.policies import all_states, checked_values, policy_values
from dicelab.penta.policy import BUILT_IN, WidgetPolicy
from dicelab.penta.rules import RuleSet
from dicelab.penta.solver import solve
from dicelab.penta.tables import N_ROLLS
from dicelab.registry import PolicySpec, parse_policy
from dicelab.resources import check_memory

#: ``stage(what, done, total)``: progress through a stage of work, ``what`` naming what
#: ``done`` and ``total`` count (:meth:`Family.distribution`).
Stage = Callable[[str, int, int], None]


class Family(families.Family):
    """A Penta policy family of the registry, as every tool asks for it (the module
    docstring). Subclasses answer for one family."""

    game = "penta"
    #: it decides turn by turn inside the simulation kernel (not from a decision table)
    online = False
    #: the Python referee plays it (a user's policy): no kernel, no decision table
    by_referee = False

    def block(self, spec: PolicySpec) -> str | None:
        """The decision-table block the simulation kernel plays it from, if any."""
        return None

    def check(self, spec: PolicySpec, seats: Sequence[PolicySpec]) -> None:
        """What it refuses at a table of ``seats`` (itself among them), before any work."""

    def check_rules(self, spec: PolicySpec, rules: RuleSet) -> None:
        """What it refuses to play under ``rules``, before any game (a policy given as
        values: values it would read that are not finite)."""

    def kernel_seat(self, spec: PolicySpec, seat: int, n_seats: int,
                    rules: RuleSet) -> OnlineSeat:
        """Its seat as the simulation kernel plays it (a table seat: from its block)."""
        return table_seat()

    def policy(self, spec: PolicySpec, seat: int = 0, n_seats: int = 2):
        """The policy object (:class:`dicelab.penta.policy.Policy`) the referee asks at
        ``seat`` of ``n_seats``: it plays that seat as the simulation kernel does."""
        raise NotImplementedError

    def logged(self, spec: PolicySpec, seat: int = 0, n_seats: int = 2):
        """The policy object asked move by move outside the simulation kernel, by a game
        log's games and by ``play`` (the same decisions as the kernel's seat)."""
        return self.policy(spec, seat, n_seats)

    def objective(self, spec: PolicySpec) -> str | None:
        """The objective on the final TOTAL its play maximises, if one (``analyse`` judges
        its decisions by it), else None."""
        return None

    def judged_by(self, spec: PolicySpec) -> str | None:
        """What ``analyse`` judges its decisions by: its :meth:`objective`, or
        :data:`~dicelab.penta.objective_play.WIN_SHARE` (penta-win), or None (points)."""
        return self.objective(spec)

    def values(self, spec: PolicySpec, rules: RuleSet) -> np.ndarray | None:
        """The per-state values its options are ranked by (:func:`dicelab.penta.policies.
        rank_options`), or None: it has no ranking of its own."""
        return None

    def check_exact(self, spec: PolicySpec, rules: RuleSet) -> None:
        """``UserError`` (before any work) unless :meth:`distribution` can answer."""
        raise UserError(f"policy '{spec.name}' has no exact score distribution; simulate "
                        "it (leave out --exact)")

    def distribution(self, spec: PolicySpec, rules: RuleSet, stage: Stage | None = None
                     ) -> ScoreDistribution:
        """Its exact distribution of the final TOTAL (refused by :meth:`check_exact`
        when its decisions cannot be tabulated). ``stage(what, done, total)`` follows the
        work of one that takes minutes the first time (an objective's solve, then its
        forward pass), ``what`` saying what is counted."""
        self.check_exact(spec, rules)
        raise NotImplementedError

    def expected_score(self, spec: PolicySpec, rules: RuleSet) -> float | None:
        """Its exact expected final TOTAL when known without a distribution (a solve's)."""
        return None

    def tabulated(self, spec: PolicySpec) -> bool:
        """Whether its decisions are one decision block, its exact distribution a forward
        pass over it (no solve of its own)."""
        return self.block(spec) is not None

    def has_distribution(self, spec: PolicySpec) -> bool:
        """Whether it has an exact distribution of its own final TOTAL
        (:meth:`distribution`, memory permitting), so that a report card gives its mean
        and SD exactly: a decision block's (:meth:`tabulated`), or an objective's."""
        return self.tabulated(spec)


class Tabled(Family):
    """A family that plays from a block of the decision tables (its name's)."""

    def block(self, spec):
        return self.name

    def policy(self, spec, seat=0, n_seats=2):
        return BUILT_IN[self.name]

    def logged(self, spec, seat=0, n_seats=2):
        return WidgetPolicy(self.name)

    def values(self, spec, rules):
        return policy_values(self.name, rules)

    def check_exact(self, spec, rules):
        pass

    def distribution(self, spec, rules, stage=None):
        return score_distribution(self.name, rules)


class Optimal(Tabled):
    name = "optimal"

    def expected_score(self, spec, rules):
        return float(solve(rules).expected_score)


class Greedy(Tabled):
    name = "greedy"


class Online(Family):
    """A family that decides turn by turn (no decision table): the kernel plays its seat,
    and outside the kernel (play, game logs) an :class:`OnlinePolicy` makes the same
    decisions, shown the table's cards before each turn."""

    online = True
    #: it values its TOTAL against the table's other cards (shown them before each turn)
    watches = False

    def policy(self, spec, seat=0, n_seats=2):
        return OnlinePolicy(spec.name, lambda rules, s, n: self.kernel_seat(spec, s, n, rules),
                            watches=self.watches, seat=seat, seats=n_seats)


class Objective(Online):
    """``optimal:OBJECTIVE``: the best play for an objective on the final TOTAL."""

    name = "objective"

    def kernel_seat(self, spec, seat, n_seats, rules):
        return online_seat(solve_objective(spec.params["objective"], rules))

    def objective(self, spec):
        return spec.params["objective"]

    def has_distribution(self, spec):
        # a forward pass over (state, TOTAL so far) that decides as the kernel's seat does
        return True

    def check_exact(self, spec, rules):
        pass

    def expected_score(self, spec, rules):
        # known once its exact distribution was computed (a forward pass of minutes: not
        # run for this), or for ``mean``, optimal's own play
        objective = spec.params["objective"]
        if parse_objective(objective).kind == "mean":
            return float(solve(rules).expected_score)
        known = objective_play.known_distribution(objective, rules)
        return None if known is None else float(known.mean)

    def distribution(self, spec, rules, stage=None):
        def follow(what: str):
            return None if stage is None else lambda done, total: stage(what, done, total)

        objective = spec.params["objective"]
        return objective_distribution(
            objective, rules, progress=follow(f"solving {objective} (rows)"),
            forward_progress=follow("its score distribution ((card, score) pairs)"))


class PentaWin(Online):
    """``penta-win``: play to have the highest TOTAL at the table."""

    name = "penta-win"
    watches = True

    @staticmethod
    def _check_seats(n_seats: int) -> None:
        if not 2 <= n_seats <= WIN_MAX_SEATS:
            raise UserError(f"penta-win plays at tables of 2 to {WIN_MAX_SEATS} seats, not "
                            f"{n_seats}")

    def policy(self, spec, seat=0, n_seats=2):
        self._check_seats(n_seats)
        return super().policy(spec, seat, n_seats)

    def check(self, spec, seats):
        self._check_seats(len(seats))
        if sum(family_of(s) is self for s in seats) > 1:
            raise UserError("penta-win plays against seats that are not penta-win: one "
                            "penta-win seat per table")

    def kernel_seat(self, spec, seat, n_seats, rules):
        return objective_play.win_seat(rules, seat, n_seats)

    def judged_by(self, spec):
        return objective_play.WIN_SHARE

    def check_exact(self, spec, rules):
        raise UserError(f"{spec.name} plays against the other seats' cards: it has no score "
                        "distribution of its own; simulate it (leave out --exact)")


class User(Family):
    """A user's policy (:mod:`dicelab.user_policy`): the spec holds its object."""

    name = "user"
    named = False
    by_referee = True
    #: the values :meth:`given_values` gave last: (policy, rules, values)
    _given: tuple | None = None

    def policy(self, spec, seat=0, n_seats=2):
        return spec.policy

    def space(self, spec=None):
        return families.user_space(spec)

    def tabulated(self, spec):
        # the widget under its own values (dicelab.penta.policy.ValuesPolicy): one block
        return callable(getattr(spec.policy, "values", None))

    def check_exact(self, spec, rules):
        states, _ = all_states()
        if not self.tabulated(spec):
            raise UserError(
                f"policy '{spec.name}' decides move by move: an exact answer needs its "
                f"decision at every state and roll, {states.size * N_ROLLS * 3:,} calls of "
                "its code, which dicelab does not make; exact answers are for policies "
                "given as values (dicelab.penta.policy.ValuesPolicy); simulate it (leave "
                "out --exact)")
        check_memory(f"the decision block of {spec.name}", states.size * N_ROLLS * 2)
        self.given_values(spec, rules)  # bad values refused before any work

    def check_rules(self, spec, rules):
        if isinstance(spec.policy, WidgetPolicy):  # it decides by values(rules)
            self.given_values(spec, rules)

    def given_values(self, spec: PolicySpec, rules: RuleSet) -> np.ndarray:
        """The values a policy given as values decides by under ``rules``, checked
        (:func:`dicelab.penta.policies.checked_values`). The last ones asked are kept:
        the check before any work and the distribution after it run the user's code once."""
        last = self._given
        if last is not None and last[0] is spec.policy and last[1] == rules:
            return last[2]
        try:
            values = spec.policy.values(rules)
        except UserError as exc:  # a ValuesPolicy's own check, under the object's name
            raise UserError(f"{spec.name}: {exc}") from None
        except (Exception, SystemExit) as exc:  # the user's code: its own frames
            raise user_code_error(exc, f"policy {spec.name}: its values") from None
        values = checked_values(values, spec.name)
        self._given = (spec.policy, rules, values)
        return values

    def distribution(self, spec, rules, stage=None):
        self.check_exact(spec, rules)
        return values_distribution(self.given_values(spec, rules), rules, spec.name)


#: The registry's Penta families by name, and a user's policies (``"user"``).
FAMILIES: dict[str, Family] = {f.name: f for f in (Optimal(), Greedy(), Objective(),
                                                   PentaWin(), User())}
USER = FAMILIES["user"]


def family_of(spec: PolicySpec) -> Family:
    """The :class:`Family` of a parsed Penta policy (another game's is refused)."""
    return families.lookup(spec, "penta", FAMILIES)


def check_table(seats: Sequence[PolicySpec]) -> None:
    """Every seat's refusals at this table (``UserError``)."""
    for spec in seats:
        family_of(spec).check(spec, seats)


def as_spec(policy) -> PolicySpec:
    """A Penta policy as a spec: a name, a spec, or a policy object (``game = "penta"``
    and ``decide(state)``, a user's)."""
    if isinstance(policy, str):
        return parse_policy(policy, "penta")
    if isinstance(policy, PolicySpec):
        family_of(policy)
        return policy
    if getattr(policy, "game", None) == "penta" and callable(getattr(policy, "decide", None)):
        name = str(getattr(policy, "name", "policy"))
        return PolicySpec("penta", "user", name, dict(getattr(policy, "params", {})),
                          policy=policy)
    raise UserError(f"{policy!r} is not a Penta policy (a name, or an object with "
                    "game = 'penta' and decide(state))")


__all__ = ["FAMILIES", "USER", "Family", "Stage", "as_spec", "check_table", "family_of"]
