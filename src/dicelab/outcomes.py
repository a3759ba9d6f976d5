"""Exact outcomes of two policies head to head, one type for both games.

A pair's outcome is P(win), P(tie) and P(loss) of ``policy`` in each seat: moving first
(``first``) and moving second (``second``). In Penta the seats do not matter (each player
fills their own card), so both are the same; in Farkle moving first is an advantage.
``score`` averages P(win) + P(tie)/2 over the two seats, and ``verdict`` calls the pair
(a tie within :data:`dicelab.stats.TIE_TOLERANCE` of one half).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dicelab.stats import exact_verdict


@dataclass(frozen=True)
class Outcome:
    """P(win), P(tie), P(loss) of one policy from the start of a game."""

    win: float
    tie: float

    @property
    def loss(self) -> float:
        return 1.0 - self.win - self.tie

    @property
    def score(self) -> float:
        """P(win) + P(tie)/2."""
        return self.win + 0.5 * self.tie

    def to_dict(self) -> dict[str, float]:
        return {"win_rate": self.win, "tie_rate": self.tie, "loss_rate": self.loss,
                "score": self.score}


@dataclass(frozen=True)
class ExactPair:
    """Two policies head to head, exactly: ``first`` is ``policy``'s outcome when it moves
    first, ``second`` when ``opponent`` does; ``score`` averages the two seats;
    ``tolerance`` bounds the error of each probability (0: float rounding)."""

    game: str
    policy: str
    opponent: str
    rules: str
    first: Outcome
    second: Outcome
    elapsed_s: float
    from_cache: bool
    ending: str | None = None  # Farkle
    target: int | None = None  # Farkle
    tolerance: float = 0.0
    method: str = "exact"

    @property
    def score(self) -> float:
        return 0.5 * (self.first.score + self.second.score)

    @property
    def win_rate(self) -> float:
        return 0.5 * (self.first.win + self.second.win)

    @property
    def tie_rate(self) -> float:
        return 0.5 * (self.first.tie + self.second.tie)

    @property
    def loss_rate(self) -> float:
        return 1.0 - self.win_rate - self.tie_rate

    @property
    def verdict(self) -> str:
        """``better``, ``worse`` or ``tie`` (the score within the tie tolerance of 1/2)."""
        return exact_verdict(self.score)

    def to_dict(self) -> dict[str, Any]:
        out = {"game": self.game, "policy": self.policy, "opponent": self.opponent,
               "method": self.method, "rules": self.rules}
        if self.target is not None:
            out.update({"ending": self.ending, "target": self.target})
        return {**out, "first": self.first.to_dict(), "second": self.second.to_dict(),
                "win_rate": self.win_rate, "tie_rate": self.tie_rate,
                "loss_rate": self.loss_rate, "score": self.score, "verdict": self.verdict,
                "tolerance": self.tolerance, "elapsed_s": self.elapsed_s,
                "from_cache": self.from_cache}


__all__ = ["ExactPair", "Outcome"]
