"""Games played move by move: the engines behind ``dicelab play`` (layer 2, no I/O).

:mod:`dicelab.play.farkle` and :mod:`dicelab.play.penta` are state machines: the caller
(a terminal, a test) reads what the game waits for, hands in one decision at a time and
reads back the game's events. The dice come from a :class:`Dice` source: seeded
(:class:`SeededDice`: the same seed and the same decisions give the same game) or
scripted (:class:`ScriptedDice`, for tests and for replaying a known game).

An illegal decision raises :class:`IllegalMove` with a one-line reason; the game is
unchanged and waits for the same decision again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dicelab.errors import UserError
from dicelab.seeding import check_seed
from dicelab.text import is_whole

#: Human players at one table (the app's "1 to 6 human players ... plus 1 computer").
MAX_HUMANS = 6
#: The name of the only human at a table (several humans are "Player 1", "Player 2", ...):
#: the games' messages address this player as "you" and name every other seat.
YOU = "You"


@dataclass(frozen=True)
class Player:
    """A seat: a human (``policy`` None) or the computer playing ``policy``."""

    name: str
    policy: Any = None  # a dicelab.registry.PolicySpec

    @property
    def human(self) -> bool:
        return self.policy is None


def table_players(game: str, humans: int, ai: str | None, names: list[str] | None = None
                  ) -> list[Player]:
    """``humans`` human seats (1 to 6) then one computer seat playing ``ai`` (a policy
    name of ``game``; ``None`` or ``"none"``: no computer)."""
    from dicelab.registry import parse_policy

    if not 1 <= humans <= MAX_HUMANS:
        raise UserError(f"--humans must be 1 to {MAX_HUMANS}, not {humans}")
    names = names or [f"Player {i + 1}" if humans > 1 else YOU for i in range(humans)]
    players = [Player(n) for n in names[:humans]]
    if ai is not None and ai.strip().lower() != "none":
        spec = parse_policy(ai, game)
        players.append(Player(f"Computer ({spec.name})", spec))
    return players


class IllegalMove(Exception):
    """A decision the rules do not allow now; the message is the reason, one line."""


class TurnGame:
    """What both engines share: the phase the game waits in (``phase``, ``"new"`` before
    ``start()``), the seat to move (``seat``) and the events since the last
    :meth:`take_events`."""

    phase: str
    seat: int
    events: list
    turns: list  # finished turns, in the game-log form
    _record: dict  # the turn being played, in the game-log form without its ending

    def log_turns(self) -> list[dict]:
        """The turns for the game log: the finished ones, then the turn in progress if the
        game stopped during one (its line has no ending: docs/game-log.md)."""
        if self.phase == "over" or not getattr(self, "_record", None) \
                or not self._record.get("rolls"):
            return list(self.turns)
        return [*self.turns, {k: v for k, v in self._record.items() if k in
                              ("seat", "rolls", "keeps")}]

    def _expect(self, phase: str) -> None:
        if self.phase == "new":
            raise IllegalMove("the game has not started: call start()")
        if self.phase != phase:
            raise IllegalMove(f"the game waits for {self.phase}, not {phase}")

    def _emit(self, kind: str, **data) -> None:
        self.events.append(Event(kind, self.seat, data))

    def take_events(self) -> list:
        """The events since the last call."""
        out, self.events = self.events, []
        return out


class Dice:
    """A source of dice: ``roll(n)`` returns ``n`` faces 1..6."""

    def roll(self, n: int) -> list[int]:
        raise NotImplementedError


class SeededDice(Dice):
    """Dice from a numpy generator seeded with ``seed`` (``None``: a fresh seed, kept in
    ``seed``). Only rolls draw from it, so advice or refused input never changes the
    dice that follow.

    >>> SeededDice(7).roll(6) == SeededDice(7).roll(6)
    True
    """

    def __init__(self, seed: int | None = None) -> None:
        self.seed = check_seed(seed)
        self._rng = np.random.default_rng(np.random.SeedSequence(self.seed))

    def roll(self, n: int) -> list[int]:
        return [int(f) for f in self._rng.integers(1, 7, size=n)]


class ScriptedDice(Dice):
    """Dice read in order from a list of faces (a roll of ``n`` dice takes the next ``n``).

    >>> d = ScriptedDice([1, 2, 3, 4, 5, 6, 5])
    >>> d.roll(6), d.roll(1)
    ([1, 2, 3, 4, 5, 6], [5])
    """

    def __init__(self, faces) -> None:
        self.faces = [int(f) for f in faces]
        if not all(1 <= f <= 6 for f in self.faces):
            raise UserError("scripted dice are faces 1..6")
        self.pos = 0

    def roll(self, n: int) -> list[int]:
        if self.pos + n > len(self.faces):
            raise UserError(f"the scripted dice ran out after {self.pos} faces")
        out = self.faces[self.pos:self.pos + n]
        self.pos += n
        return out


@dataclass(frozen=True)
class Event:
    """Something that happened in a game, for the front end to show: ``kind`` (each
    engine documents its kinds), the ``seat`` it concerns (None: the table) and data."""

    kind: str
    seat: int | None = None
    data: dict[str, Any] = field(default_factory=dict)


def parse_faces(text: str) -> list[int]:
    """Dice typed by a player: digits 1..6, with or without spaces or commas
    (``"115"``, ``"1 1 5"``, ``"1,1,5"``); ``IllegalMove`` for anything else.

    >>> parse_faces("1 15"), parse_faces("6,6")
    ([1, 1, 5], [6, 6])
    """
    body = text.replace(",", " ").split()
    faces: list[int] = []
    for part in body:
        if not part.isdigit():
            raise IllegalMove(f"'{part}' is not dice: type the faces, e.g. 1 1 5")
        for ch in part:
            if ch not in "123456":
                raise IllegalMove(f"'{ch}' is not a die face: faces are 1 to 6")
            faces.append(int(ch))
    return faces


def check_faces(faces) -> list[int]:
    """Dice given to a game's decision from Python: a sequence of integer faces (no
    bool, no float); ``IllegalMove`` for anything else, before the game changes."""
    try:
        items = list(faces)
    except TypeError:
        raise IllegalMove(f"dice are a list of faces 1 to 6, not {faces!r}") from None
    for f in items:
        if not is_whole(f):
            raise IllegalMove(f"dice are faces 1 to 6, not {f!r}")
    return [int(f) for f in items]


def take_from(roll: list[int], faces: list[int]) -> list[int] | None:
    """The dice of ``roll`` left after taking ``faces`` out, or None if ``faces`` are not
    all there."""
    rest = list(roll)
    for f in faces:
        if f not in rest:
            return None
        rest.remove(f)
    return rest


def missing_reason(roll: list[int], faces: list[int]) -> str:
    """Why ``faces`` cannot be taken from ``roll`` (they are not all showing)."""
    for f in sorted(set(faces)):
        want, have = faces.count(f), roll.count(f)
        if want > have:
            shown = " ".join(map(str, roll))
            if have == 0:
                return f"there is no {f} among the dice ({shown})"
            return f"there {'is' if have == 1 else 'are'} only {have} x {f} among the dice " \
                   f"({shown})"
    return "those dice are not all showing"


def winners(totals: list[int]) -> list[int]:
    """The seats with the highest total (several: a shared win, a tie)."""
    top = max(totals)
    return [s for s, t in enumerate(totals) if t == top]
