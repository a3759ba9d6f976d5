"""Exact Penta head to head, from the policies' exact score distributions (layer 2).

Penta players do not interact: each fills their own card with their own dice, so the
seats' final TOTALs are independent and every seat's chance of the highest TOTAL follows
from the distributions of :func:`dicelab.penta.distribution.score_distribution` alone.
Equal highest TOTALs share the win (docs/rules.md): a seat *wins alone*, *shares the top*
(a tie) or loses; its *win share* counts a top shared by ``k`` seats as ``1/k`` of a win
(with two seats: P(win) + P(tie)/2, the score of ``compare``).

``exact_pair("optimal", "greedy")`` is one pair as ``compare --exact`` reports it;
``exact_seats(["optimal", "greedy", "greedy"])`` any number of seats.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dicelab.outcomes import ExactPair, Outcome
from dicelab.penta.distribution import ScoreDistribution, score_distribution
from dicelab.penta.rules import RuleSet, get_rules


def seat_outcomes(pmfs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For independent seats with TOTAL distributions ``pmfs[i]`` (P(TOTAL = s), one length):
    (P(seat i wins alone), P(it shares the highest TOTAL), its expected win share).

    For each TOTAL ``s`` of seat ``i``, the other seats are below ``s`` or at it: the
    coefficient of ``z**k`` in the product over them of ``(P(< s) + P(= s) z)`` is the
    probability that exactly ``k`` of them tie with it at the top.

    >>> a = np.array([0.5, 0.5]); b = np.array([0.0, 1.0])
    >>> [x.tolist() for x in seat_outcomes([a, b])]
    [[0.0, 0.5], [0.5, 0.5], [0.25, 0.75]]
    """
    p = np.asarray(pmfs, dtype=np.float64)
    below = np.cumsum(p, axis=1) - p  # P(TOTAL < s)
    n = p.shape[0]
    alone, shared, share = np.zeros(n), np.zeros(n), np.zeros(n)
    for i in range(n):
        poly = np.ones((1, p.shape[1]))  # poly[k, s]: k others tie at s, the rest below
        for j in range(n):
            if j == i:
                continue
            nxt = np.zeros((poly.shape[0] + 1, p.shape[1]))
            nxt[:-1] += poly * below[j]
            nxt[1:] += poly * p[j]
            poly = nxt
        alone[i] = p[i] @ poly[0]
        shared[i] = p[i] @ poly[1:].sum(axis=0)
        share[i] = p[i] @ (poly / np.arange(1, poly.shape[0] + 1)[:, None]).sum(axis=0)
    return alone, shared, share


def _distributions(policies: Sequence[str | ScoreDistribution], rs: RuleSet
                   ) -> dict[str, ScoreDistribution]:
    out: dict[str, ScoreDistribution] = {}
    for p in policies:
        name = p if isinstance(p, str) else p.policy
        if name not in out:
            out[name] = score_distribution(p, rs) if isinstance(p, str) else p
    return out


def exact_pair(policy: str | ScoreDistribution, opponent: str | ScoreDistribution,
               rules: str | RuleSet | None = None) -> ExactPair:
    """``policy`` against ``opponent`` (``optimal`` or ``greedy``, or any policy's exact
    distribution: :meth:`dicelab.penta.builtin.Family.distribution`) in a two-seat Penta
    game, exactly (both distributions are cached on disk). Who moves first does not
    matter in Penta: the pair's ``first`` and ``second`` outcomes are the same.

    >>> p = exact_pair("optimal", "greedy", "seed")  # doctest: +SKIP
    >>> p.verdict  # doctest: +SKIP
    'better'
    """
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    t0 = time.perf_counter()
    dists = _distributions([policy, opponent], rs)
    a, b = (p if isinstance(p, str) else p.policy for p in (policy, opponent))
    alone, shared, _ = seat_outcomes([dists[a].probability, dists[b].probability])
    outcome = Outcome(float(alone[0]), float(shared[0]))
    return ExactPair("penta", a, b, rs.name, outcome, outcome,
                     time.perf_counter() - t0, all(d.from_cache for d in dists.values()))


@dataclass(frozen=True)
class ExactSeats:
    """Every seat's exact outcome in a Penta game of ``len(policies)`` seats:
    ``win[i]`` (alone), ``tie[i]`` (shares the highest TOTAL), ``share[i]`` (expected win
    share: a top shared by k seats counts 1/k); ``tie_rate``: P(the top is shared)."""

    policies: tuple[str, ...]
    rules: str
    win: np.ndarray
    tie: np.ndarray
    share: np.ndarray

    @property
    def tie_rate(self) -> float:
        return float(1.0 - self.win.sum())

    def to_dict(self) -> dict[str, Any]:
        return {"game": "penta", "method": "exact", "rules": self.rules,
                "seats": [{"seat": i, "policy": p, "win_rate": float(self.win[i]),
                           "tie_rate": float(self.tie[i]), "win_share": float(self.share[i])}
                          for i, p in enumerate(self.policies)],
                "tie_rate": self.tie_rate}


def exact_seats(policies: Sequence[str], rules: str | RuleSet | None = None) -> ExactSeats:
    """Each seat's exact chance to win alone, to share the top and its win share, for any
    number of seats playing ``policies``."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    dists = _distributions(policies, rs)
    win, tie, share = seat_outcomes([dists[p].probability for p in policies])
    return ExactSeats(tuple(policies), rs.name, win, tie, share)


__all__ = [
    "ExactSeats",
    "exact_pair",
    "exact_seats",
    "seat_outcomes",
]
