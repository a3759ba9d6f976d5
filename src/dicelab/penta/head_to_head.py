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

from dicelab.penta.distribution import score_distribution
from dicelab.penta.rules import RuleSet, get_rules
from dicelab.stats import exact_verdict


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


@dataclass(frozen=True)
class PentaExactPair:
    """Two Penta policies head to head, exactly: ``win``, ``tie`` of ``policy`` (who moves
    first does not matter in Penta); ``score`` = P(win) + P(tie)/2."""

    policy: str
    opponent: str
    rules: str
    win: float
    tie: float
    elapsed_s: float
    from_cache: bool
    method: str = "exact"

    @property
    def loss(self) -> float:
        return 1.0 - self.win - self.tie

    @property
    def score(self) -> float:
        return self.win + 0.5 * self.tie

    @property
    def verdict(self) -> str:
        """``better``, ``worse`` or ``tie`` (the score within 1e-9 of one half)."""
        return exact_verdict(self.score)

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "opponent": self.opponent, "method": self.method,
                "rules": self.rules, "win_rate": self.win, "tie_rate": self.tie,
                "loss_rate": self.loss, "score": self.score, "verdict": self.verdict,
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache}


def _distributions(policies: Sequence[str], rs: RuleSet):
    return {p: score_distribution(p, rs) for p in dict.fromkeys(policies)}


def exact_pair(policy: str, opponent: str, rules: str | RuleSet | None = None
               ) -> PentaExactPair:
    """``policy`` against ``opponent`` (``optimal`` or ``greedy``) in a two-seat Penta game,
    exactly (both distributions are cached on disk).

    >>> p = exact_pair("optimal", "greedy", "seed")  # doctest: +SKIP
    >>> p.verdict  # doctest: +SKIP
    'better'
    """
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    t0 = time.perf_counter()
    dists = _distributions([policy, opponent], rs)
    alone, shared, _ = seat_outcomes([dists[policy].probability, dists[opponent].probability])
    return PentaExactPair(policy, opponent, rs.name, float(alone[0]), float(shared[0]),
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
    "PentaExactPair",
    "exact_pair",
    "exact_seats",
    "seat_outcomes",
]
