"""Checks shared by the tournament tests of both games."""

from __future__ import annotations


def check_places(t, seats: int) -> None:
    """The mean finishing place over every seat-game: level seats share the better
    place, so it is at most the middle place (seats + 1) / 2 and not far below it."""
    total = sum(s.mean_place.mean * s.games for s in t.standings()) / \
        sum(s.games for s in t.standings())
    middle = (seats + 1) / 2
    assert middle - 0.1 < total <= middle, total
