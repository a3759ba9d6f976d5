"""Plain-Python reference for Penta objectives beyond the mean, written from RULES.md §1 and
the definitions alone: ``max E[u(final TOTAL)]`` by recursion over (filled boxes, TOTAL so
far, Penta bonuses), one turn by brute force over every ordered roll and keep (no dicelab
tables or kernels). Only small games are feasible: a card with two or three boxes open.

The scorer (boxes, joker, bonuses) is :mod:`naive_penta`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from naive_penta import BOXES, allowed_scores, immediate_points, keeps, rerolls_after


def objective_value(rules: str, filled: dict[str, int], total: int,
                    u: Callable[[int], float]) -> float:
    """``max E[u(final TOTAL)]`` from the start of a turn with ``filled`` boxes and ``total``
    points so far (upper bonus and Penta bonuses included), by recursion to the full card."""

    @cache
    def value(key: tuple[tuple[str, int], ...], x: int) -> float:
        card = dict(key)
        if len(card) == len(BOXES):
            return u(x)
        return turn(key, x)

    @cache
    def turn(key: tuple[tuple[str, int], ...], x: int) -> float:
        card = dict(key)

        @cache
        def final(roll: tuple[int, ...]) -> float:
            scores, bonus = allowed_scores(rules, card, roll)
            best = float("-inf")
            for b, sc in scores.items():
                after = dict(card)
                after[b] = sc
                gain = immediate_points(card, b, sc, bonus)
                best = max(best, value(tuple(sorted(after.items())), x + gain))
            return best

        @cache
        def roll_value(roll: tuple[int, ...], rerolls: int) -> float:
            if rerolls == 0:
                return final(roll)
            return max(keep_value(kept, rerolls) for kept in keeps(roll))

        @cache
        def keep_value(kept: tuple[int, ...], rerolls: int) -> float:
            outcomes = rerolls_after(kept)
            return sum(roll_value(r, rerolls - 1) for r in outcomes) / len(outcomes)

        rolls = rerolls_after(())
        return sum(roll_value(r, 2) for r in rolls) / len(rolls)

    return value(tuple(sorted(filled.items())), total)

