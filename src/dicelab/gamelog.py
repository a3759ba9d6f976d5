"""Game logs: a versioned JSON Lines record of Penta and Farkle games (layer 2).

A log file holds one or more games. Each game is a header line, one line per turn, and
an optional result line (docs/game-log.md is the user's description)::

    {"dicelab_log": 1, "game": "farkle", "rules": "default", "target": 10000,
     "ending": "last-round", "seats": [{"name": "alice", "policy": "human"},
     {"name": "computer", "policy": "ai"}], "first_seat": 0, "seed": 42}
    {"seat": 0, "rolls": [[1, 1, 5, 2, 3, 4], [2, 5, 6, 3]], "keeps": [[1, 1], [5]], "end": "bank"}
    {"seat": 1, "rolls": [[2, 3, 4, 6, 6, 2]], "keeps": [], "end": "bust"}

:func:`read_games` parses and *replays* every game against its rules: every die set
aside scores within its roll, the dice rolled follow from the dice kept (``[1, 1]`` set
aside from six dice leaves four to roll), a Penta box
is open and allowed, the seats move in turn, no turn comes after the game's end, a
result line agrees with the replayed totals, and no object gives a key twice (``json``
would keep the last value). Any fault is one
:class:`~dicelab.errors.UserError` naming the file, the line and the field. Penta games
whose turn lines are in the writers' form are read and replayed in bulk by compiled code
(:mod:`dicelab.gamelog_penta`, with the same checks); every other game, and any game
the bulk reader does not accept, by the Python replay, whose messages the errors are
(docs/design/analysis-speed.md).
:func:`write_games` checks the same and writes atomically (a temporary file, renamed),
adding the result line of every finished game.

>>> h = new_game_header("penta", "seed", [{"name": "ann", "policy": "human"}])
>>> h["game"], h["rules"], h["dicelab_log"]
('penta', 'seed', 1)
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dicelab import dice
from dicelab.errors import UserError
from dicelab.text import counted

#: The format version a header's ``dicelab_log`` holds; readers refuse other versions.
FORMAT_VERSION = 1
GAMES = ("farkle", "penta")
FARKLE_ENDS = ("bank", "bust")
#: The largest log file :func:`read_games` reads (bytes): 100,000 Penta games are about
#: 130 MB.
MAX_LOG_BYTES = 2 * 1024**3
#: The longest line a log may have (characters): a turn's line holds its rolls, and
#: ``simulate --log`` stops a turn at 10,000 rolls (about 400 kB).
MAX_LINE_CHARS = 4 * 1024**2
_HEADER_KEYS = {"dicelab_log", "game", "rules", "target", "ending", "seats", "first_seat",
                "seed"}
_FARKLE_TURN_KEYS = {"seat", "rolls", "keeps", "end"}
_PENTA_TURN_KEYS = {"seat", "rolls", "keeps", "box"}


# --- records ------------------------------------------------------------------------------


class FarkleTurn(NamedTuple):
    """One Farkle turn as replayed: ``rolls[k]`` (the dice rolled, as logged), ``keeps[k]``
    (set aside from ``rolls[k]``), ``end`` ("bank" or "bust"); ``points``: what the turn
    banked (0 for a bust); ``totals``: every seat's total after the turn (a farkle
    penalty included); ``line``: the line number in the file."""

    seat: int
    rolls: tuple[tuple[int, ...], ...]
    keeps: tuple[tuple[int, ...], ...]
    end: str
    points: int
    totals: tuple[int, ...]
    line: int


class PentaTurn(NamedTuple):
    """One Penta turn as replayed: ``rolls[k]`` (the five dice after roll k), ``keeps[k]``
    (kept from ``rolls[k]`` for the next roll), ``box`` (box number, see
    :data:`dicelab.penta.rules.BOX_NAMES`); ``roll_ids`` / ``keep_ranks``: the same as
    :mod:`dicelab.penta.tables` roll indices and :mod:`dicelab.dice` ranks; ``mask``,
    ``up``, ``fifty``, ``total``: the seat's card before the turn; ``points``: what the
    turn added to its TOTAL (bonuses included)."""

    seat: int
    rolls: list[list[int]]  # as logged
    keeps: list[list[int]]
    box: int
    roll_ids: tuple[int, ...]
    keep_ranks: tuple[int, ...]
    mask: int
    up: int
    fifty: int
    total: int
    points: int
    line: int


@dataclass
class GameRecord:
    """One game of a log, read and replayed.

    ``rules`` is the rules object (:class:`~dicelab.farkle.rules.FarkleRules` or
    :class:`~dicelab.penta.rules.RuleSet`), ``rules_name`` its name; ``target`` and
    ``ending`` are Farkle's (None for Penta). ``totals`` are each seat's totals after the
    last turn, ``finished`` says whether the game reached its end, ``winners`` the seats
    with the highest total (only when finished). ``index`` counts games in the file from
    0, ``line`` is the header's line number. ``turns``: a list of :class:`FarkleTurn`,
    or a sequence of :class:`PentaTurn` (a :class:`PentaTurns` view when read in bulk).
    ``in_progress``: the turn that was being played when the game stopped (its line has
    no ``end`` / ``box``), as logged (``seat``, ``rolls``, ``keeps``), checked; None if
    the log has none. It is not one of ``turns``: it changed no total.
    """

    path: str
    index: int
    line: int
    game: str
    rules: Any
    rules_name: str
    target: int | None
    ending: str | None
    seats: list[dict]
    first_seat: int
    seed: int | None
    turns: Sequence = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    finished: bool = False
    winners: list[int] = field(default_factory=list)
    header: dict = field(default_factory=dict)
    in_progress: dict | None = None

    @property
    def n_seats(self) -> int:
        return len(self.seats)

    def result(self) -> dict:
        """The result line's content: ``{"totals": [...], "winners": [...]}``."""
        return {"totals": list(self.totals), "winners": list(self.winners)}


# --- headers -------------------------------------------------------------------------------


def _farkle_rules(rules, ending=None):
    from dicelab.farkle.rules import FarkleRules, load_rules

    if isinstance(rules, dict):
        return _farkle_rules_from_dict(rules, "rules").with_ending(ending)
    if isinstance(rules, FarkleRules):
        return rules.with_ending(ending)
    return load_rules(rules, ending)


def _penta_rules(rules):
    from dicelab.penta.rules import RuleSet, get_rules

    return rules if isinstance(rules, RuleSet) else get_rules(rules)


def rules_record(game: str, rules) -> str | dict:
    """What a header's ``rules`` holds: the preset's name when the rules are a preset
    (whatever their ending, which the header gives apart), else the rules' ``to_dict()``.

    >>> rules_record("farkle", None), rules_record("penta", "hasbro")
    ('default', 'hasbro')
    """
    if game == "penta":
        return _penta_rules(rules).name
    from dicelab.farkle.rules import PRESETS

    table = _farkle_rules(rules)
    preset = PRESETS.get(table.name)
    if preset is not None and preset.with_ending(table.ending).digest() == table.digest():
        return table.name
    d = table.to_dict()
    d.pop("source", None)
    return d


def _farkle_rules_from_dict(d: dict, where: str):
    """FarkleRules from a header's ``to_dict()`` form (``where`` names it in errors)."""
    from dicelab.farkle.rules import (
        MAX_ENTRY_POINTS,
        FarkleRules,
        check_points,
        check_scoring,
    )

    names = {f for f in FarkleRules.__dataclass_fields__ if f != "source"}
    unknown = sorted(set(d) - names)
    if unknown:
        raise UserError(f"{where}: unknown key '{unknown[0]}' (keys: {', '.join(sorted(names))})")
    if not isinstance(d.get("name"), str):
        raise UserError(f"{where}: 'name' (a string) is missing")
    kw = dict(d)

    def points(key: str, v) -> int:  # an entry's points, as a rules file's are checked
        return check_points(key, v, 0, MAX_ENTRY_POINTS)

    try:
        for key in ("singles", "three_of_a_kind"):
            if key in kw:
                faces = [0] * 7
                for f, v in kw[key].items():
                    if f not in ("1", "2", "3", "4", "5", "6"):
                        raise ValueError(f"{key}: {f!r} is not a face 1..6")
                    faces[int(f)] = points(f"{key}.{f}", v)
                kw[key] = tuple(faces)
        if "n_of_a_kind" in kw:
            if set(kw["n_of_a_kind"]) != {"4", "5", "6"}:
                raise ValueError("n_of_a_kind: points of 4, 5 and 6 of a kind")
            kw["n_of_a_kind"] = tuple(points(f"n_of_a_kind.{k}", kw["n_of_a_kind"][str(k)])
                                      for k in (4, 5, 6))
        for key in ("straight", "three_pairs", "two_triplets"):
            if key in kw:
                points(key, kw[key])
        if not isinstance(kw.get("four_and_pair_as_three_pairs", True), bool) \
                or not isinstance(kw.get("description", ""), str):
            raise TypeError("four_and_pair_as_three_pairs is true or false, description text")
        return check_scoring(FarkleRules(**kw), "rules")  # as a rules file is refused
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
        raise UserError(f"{where}: not a Farkle rules table ({exc})") from None


def new_game_header(game: str, rules, seats: list[dict], *, target: int | None = None,
                    ending: str | None = None, seed: int | None = None,
                    first_seat: int = 0) -> dict:
    """The header line of a game: ``game`` ("farkle" or "penta"), its rules (a name, a
    rules object or None for the default), ``seats`` (one dict per seat with at least a
    ``name`` and a ``policy``), and for Farkle the target and ending (None: the rules'
    default, 10,000 and the rules' ending).

    >>> h = new_game_header("farkle", "default", [{"name": "a", "policy": "human"},
    ...                     {"name": "c", "policy": "ai"}], seed=42)
    >>> h["target"], h["ending"], h["first_seat"], h["seed"]
    (10000, 'last-round', 0, 42)
    """
    if game not in GAMES:
        raise UserError(f"game must be one of {', '.join(GAMES)}, not {game!r}")
    header: dict[str, Any] = {"dicelab_log": FORMAT_VERSION, "game": game}
    if game == "farkle":
        from dicelab.farkle.rules import check_target

        table = _farkle_rules(rules, ending)
        header["rules"] = rules_record("farkle", table)
        header["target"] = check_target(target)
        header["ending"] = table.ending
    else:
        if target is not None or ending is not None:
            raise UserError("Penta has no target and no ending rule")
        header["rules"] = rules_record("penta", rules)
    header["seats"] = [dict(s) for s in seats]
    header["first_seat"] = first_seat
    if seed is not None:
        header["seed"] = seed
    _check_header(header, "<header>", 0)
    return header


# --- reading --------------------------------------------------------------------------------


class _Where:
    """Formats ``FILE:LINE: field 'F': message``."""

    def __init__(self, path: str, line: int):
        self.path, self.line = path, line

    def error(self, fld: str | None, msg: str) -> UserError:
        place = f"{self.path}:{self.line}" if self.line else self.path
        text = f"{place}: field '{fld}': {msg}" if fld else f"{place}: {msg}"
        if not text.isprintable():  # a key or value of the log with a line break in it:
            # escaped as JSON escapes it, so the error stays one line
            text = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text)
        return UserError(text)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_header(h: dict, path: str, line: int) -> tuple:
    """(game, rules object, rules name, target, ending, seats, first_seat, seed)."""
    w = _Where(path, line)
    version = h.get("dicelab_log")
    if not _is_int(version):
        raise w.error("dicelab_log", "a header's format version (1) is missing")
    if version != FORMAT_VERSION:
        raise w.error("dicelab_log", f"format version {version} is not one this dicelab "
                                     f"reads (it reads {FORMAT_VERSION})")
    unknown = sorted(set(h) - _HEADER_KEYS)
    if unknown:
        raise w.error(unknown[0], f"not a header field (fields: {', '.join(sorted(_HEADER_KEYS))})")
    game = h.get("game")
    if game not in GAMES:
        raise w.error("game", f"must be one of {', '.join(GAMES)}, not {game!r}")
    seats = h.get("seats")
    if not isinstance(seats, list) or not seats:
        raise w.error("seats", "a list of one or more seats, e.g. "
                               '[{"name": "alice", "policy": "human"}]')
    for i, s in enumerate(seats):
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) \
                or not isinstance(s.get("policy"), str):
            raise w.error(f"seats[{i}]", 'a seat is {"name": ..., "policy": ...} (strings)')
    first = h.get("first_seat", 0)
    if not _is_int(first) or not 0 <= first < len(seats):
        raise w.error("first_seat", f"a seat number 0..{len(seats) - 1}, not {first!r}")
    seed = h.get("seed")
    if seed is not None and (not _is_int(seed) or seed < 0):
        raise w.error("seed", f"a non-negative integer, not {seed!r}")
    raw_rules = h.get("rules")
    if game == "farkle":
        from dicelab.farkle.rules import ENDINGS, check_seats, check_target

        try:
            check_seats(len(seats))
        except UserError as exc:
            raise w.error("seats", str(exc)) from None
        ending = h.get("ending")
        if ending is not None and ending not in ENDINGS:
            raise w.error("ending", f"one of {', '.join(ENDINGS)}, not {ending!r}")
        if isinstance(raw_rules, dict):
            try:
                table = _farkle_rules_from_dict(raw_rules, "rules").with_ending(ending)
            except UserError as exc:
                raise w.error("rules", str(exc).removeprefix("rules: ")) from None
        elif isinstance(raw_rules, str):
            from dicelab.farkle.rules import PRESETS

            if raw_rules not in PRESETS:  # a log names presets only, never files
                raise w.error("rules", f"unknown Farkle rules {raw_rules!r}; a log names a "
                                       f"preset ({', '.join(PRESETS)}) or holds the table")
            table = PRESETS[raw_rules].with_ending(ending)
        else:
            raise w.error("rules", "a preset name or a rules table (an object)")
        target = h.get("target")
        if not _is_int(target):
            raise w.error("target", f"a Farkle game's target (e.g. 10000), not {target!r}")
        try:
            target = check_target(target)
        except UserError as exc:
            raise w.error("target", str(exc)) from None
        return game, table, table.name, target, table.ending, seats, first, seed
    for key in ("target", "ending"):
        if key in h:
            raise w.error(key, "Penta has no target and no ending rule")
    from dicelab.penta.rules import RULE_SETS

    if not isinstance(raw_rules, str) or raw_rules not in RULE_SETS:
        raise w.error("rules", f"a Penta rule set: {', '.join(RULE_SETS)}; not {raw_rules!r}")
    return game, RULE_SETS[raw_rules], raw_rules, None, None, seats, first, seed


def _dice_list(v, w: _Where, fld: str, n: int | None = None) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(_is_int(f) and 1 <= f <= 6 for f in v):
        raise w.error(fld, f"a list of dice 1..6, not {json.dumps(v)}")
    if n is not None and len(v) != n:
        raise w.error(fld, f"{n} dice were rolled, not {len(v)} ({json.dumps(v)})")
    return tuple(v)


def _contains(big: Iterable[int], small: Iterable[int]) -> bool:
    left = list(big)
    for f in small:
        if f in left:
            left.remove(f)
        else:
            return False
    return True


class _LogDice:
    """The dice of a log: each roll as the log has it, handed to the referee in turn."""

    def __init__(self) -> None:
        self.next: list[int] = []

    def roll(self, n: int) -> list[int]:
        return self.next


class _FarkleGame:
    """Replays one Farkle game turn by turn: the log's form checked here, its rules
    applied by the referee (:class:`dicelab.farkle.referee.Referee`)."""

    def __init__(self, rec: GameRecord):
        from dicelab.farkle.referee import Referee

        self.rec = rec
        self.n = rec.n_seats
        self.dice = _LogDice()
        self.ref = Referee(self.n, rules=rec.rules, target=rec.target, dice=self.dice,
                           first_seat=rec.first_seat, hold=True)

    @property
    def totals(self) -> list[int]:
        return self.ref.totals

    @property
    def over(self) -> bool:
        return self.ref.phase == "over"

    def turn(self, t: dict, w: _Where) -> FarkleTurn | None:
        """The turn of line ``t``; None for a turn in progress (no ``end``: the game
        stopped during it), which is checked and kept in ``rec.in_progress``."""
        from dicelab.farkle.advise import legal_setasides
        from dicelab.farkle.rules import dice_after, setaside_points

        rules, ref = self.rec.rules, self.ref
        unknown = sorted(set(t) - _FARKLE_TURN_KEYS)
        if unknown:
            raise w.error(unknown[0], "not a Farkle turn field (seat, rolls, keeps, end)")
        seat = t.get("seat")
        if not _is_int(seat) or not 0 <= seat < self.n:
            raise w.error("seat", f"a seat number 0..{self.n - 1}, not {seat!r}")
        if self.over:
            raise w.error("seat", "the game is over: no turn comes after its end (a new "
                                  "game starts with a header line)")
        if seat != ref.seat:
            raise w.error("seat", f"it is seat {ref.seat}'s turn, not seat {seat}'s")
        end = t.get("end")
        stopped = "end" not in t  # the turn in progress when the game stopped
        if not stopped and end not in FARKLE_ENDS:
            raise w.error("end", f"'bank' or 'bust', not {end!r}")
        rolls, keeps = t.get("rolls"), t.get("keeps")
        if not isinstance(rolls, list) or not rolls:
            raise w.error("rolls", "a list of one or more rolls")
        if not isinstance(keeps, list):
            raise w.error("keeps", "a list of set-asides, one per scoring roll")
        if stopped:
            if len(keeps) not in (len(rolls) - 1, len(rolls)):
                raise w.error("keeps", f"a turn in progress with {counted(len(rolls), 'roll')}"
                                       f" has {len(rolls) - 1} or "
                                       f"{counted(len(rolls), 'set-aside')}, not {len(keeps)}")
        else:
            want = len(rolls) if end == "bank" else len(rolls) - 1
            if len(keeps) != want:
                raise w.error("keeps", f"a turn that ends in a {end} with "
                                       f"{counted(len(rolls), 'roll')} has "
                                       f"{counted(want, 'set-aside')}, not {len(keeps)}")
        n_dice, tp = dice.MAX_DICE, 0
        out_rolls, out_keeps = [], []
        for k, raw in enumerate(rolls):
            roll = _dice_list(raw, w, f"rolls[{k}]", n_dice)
            out_rolls.append(roll)
            if k < len(keeps):
                keep = _dice_list(keeps[k], w, f"keeps[{k}]")
                if not keep:
                    raise w.error(f"keeps[{k}]", "a scoring roll sets aside at least one die")
                if not _contains(roll, keep):
                    raise w.error(f"keeps[{k}]", f"{list(keep)} is not among the dice rolled "
                                                 f"{list(roll)}")
                pts = setaside_points(rules, keep)
                if pts is None:
                    raise w.error(f"keeps[{k}]", f"{list(keep)} cannot all score within the "
                                                 f"roll {list(roll)}: every die set aside "
                                                 "must be part of a scoring combination")
                out_keeps.append(keep)
                tp += pts
                n_dice = dice_after(len(roll), len(keep))
            else:  # the bust roll, or the roll of a turn in progress
                scores = bool(legal_setasides(rules, sorted(roll)))
                if stopped and not scores:
                    raise w.error(f"rolls[{k}]", f"{list(roll)} scores nothing, so the turn "
                                                 "ended in a bust: \"end\": \"bust\"")
                if not stopped and scores:
                    raise w.error(f"rolls[{k}]", f"{list(roll)} scores, so the turn is not "
                                                 "a bust: set something aside")
        if stopped:
            self.rec.in_progress = {"seat": seat, "rolls": [list(r) for r in out_rolls],
                                    "keeps": [list(k) for k in out_keeps]}
            return None
        if end == "bank" and not rules.can_bank(tp, n_dice):
            why = ("hot dice must be rolled" if rules.hot_dice == "must-roll" and n_dice == 6
                   and tp >= max(rules.min_bank, 50) else
                   f"the rules' minimum to bank is {rules.min_bank}")
            raise w.error("end", f"cannot bank {tp} turn points here: {why}")
        # the turn, checked: the referee plays it
        for k, roll in enumerate(out_rolls):
            self.dice.next = list(roll)
            if k > 0:
                ref.roll_on()
            elif ref.phase == "new":
                ref.start()
            else:
                ref.begin_turn()
            if k < len(out_keeps):
                ref.set_aside(out_keeps[k])
        if end == "bank":
            ref.bank()
        return FarkleTurn(seat, tuple(out_rolls), tuple(out_keeps), end,
                          tp if end == "bank" else 0, tuple(ref.totals), w.line)


def _penta_tables():
    """Plain-Python lookups of the Penta tables (fast in the reader's loop)."""
    global _PENTA
    if _PENTA is None:
        from dicelab.penta import rules as c
        from dicelab.penta.scoring import ORDINARY, PENTA_FACE
        from dicelab.penta.tables import N_ROLLS, ROLL_BASE, SUBSETS

        rank = {}
        for k in range(ROLL_BASE + N_ROLLS):
            faces = tuple(dice.dice_of_rank(k))
            if all(type(f) is int for f in faces):
                rank[faces] = k
        subsets = [frozenset(int(x) for x in SUBSETS[r] if x >= 0) for r in range(N_ROLLS)]
        consts = _PentaConsts(c.BOX_NAMES, {n: i for i, n in enumerate(c.BOX_NAMES)},
                              c.N_BOXES, c.N_DICE, c.PENTA_BOX, c.PENTA_POINTS, c.REROLLS,
                              c.UPPER_BONUS, c.UPPER_BOXES, c.UPPER_TARGET)
        _PENTA = (rank, subsets, ORDINARY.T.tolist(), PENTA_FACE.tolist(), ROLL_BASE, consts)
    return _PENTA


_PENTA = None


class _PentaConsts(NamedTuple):
    BOX_NAMES: tuple
    BOX_INDEX: dict
    N_BOXES: int
    N_DICE: int
    PENTA_BOX: int
    PENTA_POINTS: int
    REROLLS: int
    UPPER_BONUS: int
    UPPER_BOXES: int
    UPPER_TARGET: int


class _PentaGame:
    """Replays one Penta game (every seat its own card)."""

    def __init__(self, rec: GameRecord):
        from dicelab.penta.rules import N_BOXES

        self.rec = rec
        self.n = rec.n_seats
        self.mask = [0] * self.n
        self.upper = [0] * self.n
        self.score = [[None] * N_BOXES for _ in range(self.n)]
        self.bonuses = [0] * self.n
        self.totals = [0] * self.n
        self.turns = [0] * self.n
        self.next_seat = rec.first_seat
        self.over = False

    def turn(self, t: dict, w: _Where) -> PentaTurn | None:
        """The turn of line ``t``; None for a turn in progress (no ``box``: the game
        stopped during it), which is checked and kept in ``rec.in_progress``."""
        rank, subsets, ordinary, penta_face, base, c = _penta_tables()
        stopped = "box" not in t
        if len(t) != 4 - stopped or set(t) != _PENTA_TURN_KEYS - ({"box"} if stopped
                                                                    else set()):
            unknown = sorted(set(t) - _PENTA_TURN_KEYS)
            if unknown:
                raise w.error(unknown[0], "not a Penta turn field (seat, rolls, keeps, box)")
            missing = sorted(_PENTA_TURN_KEYS - set(t))[0]
            raise w.error(missing, "missing (a Penta turn has seat, rolls, keeps, box)")
        seat = t["seat"]
        if type(seat) is not int or not 0 <= seat < self.n:
            raise w.error("seat", f"a seat number 0..{self.n - 1}, not {seat!r}")
        if self.over:
            raise w.error("seat", f"the game is over: every card has its {c.N_BOXES} boxes "
                                  "(a new game starts with a header line)")
        if seat != self.next_seat:
            raise w.error("seat", f"it is seat {self.next_seat}'s turn, not seat {seat}'s")
        rolls, keeps = t["rolls"], t["keeps"]
        if type(rolls) is not list or not 1 <= len(rolls) <= c.REROLLS + 1:
            raise w.error("rolls", f"a list of 1 to {c.REROLLS + 1} rolls of {c.N_DICE} dice")
        if type(keeps) is not list or len(keeps) != len(rolls) - 1:
            raise w.error("keeps", f"one keep per reroll: {counted(len(rolls) - 1, 'keep')} "
                                   f"for {counted(len(rolls), 'roll')}, not "
                                   f"{len(keeps) if isinstance(keeps, list) else keeps!r}")
        roll_ids, keep_ranks = [], []
        prev_keep = None
        for k, raw in enumerate(rolls):
            rr = _rank_of(raw, rank)
            if rr is None or rr < base:
                _dice_list(raw, w, f"rolls[{k}]", c.N_DICE)  # says what is wrong
                raise w.error(f"rolls[{k}]", f"a roll of {c.N_DICE} dice 1..6, not {raw}")
            r = rr - base
            if prev_keep is not None and prev_keep not in subsets[r]:
                raise w.error(f"rolls[{k}]", f"{raw} does not show the dice kept "
                                             f"{keeps[k - 1]}")
            roll_ids.append(r)
            if k < len(keeps):
                kr = _rank_of(keeps[k], rank)
                if kr is None:
                    _dice_list(keeps[k], w, f"keeps[{k}]")
                if kr is None or kr not in subsets[r]:
                    raise w.error(f"keeps[{k}]", f"{keeps[k]} is not among the dice "
                                                 f"showing {raw}")
                keep_ranks.append(kr)
                prev_keep = kr
        if stopped:
            self.rec.in_progress = {"seat": seat, "rolls": rolls, "keeps": keeps}
            return None
        name = t["box"]
        b = c.BOX_INDEX.get(name)
        if b is None:
            key = name.strip().lower().replace("_", "-").replace(" ", "-") \
                if isinstance(name, str) else None
            if key not in c.BOX_NAMES:
                raise w.error("box", f"a box name ({', '.join(c.BOX_NAMES)}), not {name!r}")
            b = c.BOX_NAMES.index(key)
        key = c.BOX_NAMES[b]
        mask, card = self.mask[seat], self.score[seat]
        if mask >> b & 1:
            raise w.error("box", f"box {key} is already filled (with {card[b]}) on seat "
                                 f"{seat}'s card")
        r = roll_ids[-1]
        fifty = int(card[c.PENTA_BOX] == c.PENTA_POINTS)
        if penta_face[r] and mask >> c.PENTA_BOX & 1:  # a further Penta: joker rules
            from dicelab.penta.scoring import box_scores

            scores, bonus = box_scores(self.rec.rules, mask, fifty, r)
            sc = int(scores[b])
            if sc < 0:
                allowed = [c.BOX_NAMES[i] for i in range(c.N_BOXES) if scores[i] >= 0]
                raise w.error("box", f"the joker rule of rule set {self.rec.rules_name} "
                                     f"does not allow {key} for {rolls[-1]} "
                                     f"here; allowed: {', '.join(allowed)}")
        else:
            sc, bonus = ordinary[r][b], 0
        points = sc + bonus
        upper = self.upper[seat]
        up_before = upper if upper < c.UPPER_TARGET else c.UPPER_TARGET
        if b < c.UPPER_BOXES:
            if upper < c.UPPER_TARGET <= upper + sc:
                points += c.UPPER_BONUS
            self.upper[seat] = upper + sc
        total = self.totals[seat]
        rec = PentaTurn(seat, rolls, keeps, b, tuple(roll_ids), tuple(keep_ranks), mask,
                        up_before, fifty, total, points, w.line)
        card[b] = sc
        self.mask[seat] = mask | (1 << b)
        if bonus:
            self.bonuses[seat] += 1
        self.totals[seat] = total + points
        turns = self.turns
        turns[seat] += 1
        self.next_seat = seat + 1 if seat + 1 < self.n else 0
        if turns[seat] == c.N_BOXES and all(x == c.N_BOXES for x in turns):
            self.over = True
        return rec


def _rank_of(v, rank) -> int | None:
    """The dice rank of a list of faces 1..6 (at most 5), or None."""
    if type(v) is not list or not all(type(f) is int for f in v):
        return None  # true or 4.0 would pass for the die 1 or 4
    try:
        return rank.get(tuple(sorted(v)))
    except TypeError:  # not all numbers
        return None


def _finish(rec: GameRecord, totals, over: bool, result: dict | None,
            w: _Where | None) -> None:
    """Set the game's totals, end and winners; check its result line (if any)."""
    rec.totals = list(totals)
    rec.finished = bool(over)
    if rec.finished:
        best = max(rec.totals)
        rec.winners = [i for i, x in enumerate(rec.totals) if x == best]
    if result is None:
        return
    assert w is not None
    if not isinstance(result, dict) or set(result) - {"totals", "winners"}:
        raise w.error("result", 'an object {"totals": [...], "winners": [...]}')
    if not rec.finished:
        raise w.error("result", "the game has not ended: a result line comes after its "
                                "last turn")
    if "totals" in result and result["totals"] != rec.totals:
        raise w.error("result.totals", f"{json.dumps(result['totals'])} disagrees with the "
                                       f"turns, which give {json.dumps(rec.totals)}")
    if "winners" in result and result["winners"] != rec.winners:
        top = (f"seat {rec.winners[0]} has the highest total" if len(rec.winners) == 1 else
               f"seats {', '.join(map(str, rec.winners))} share the highest total")
        raise w.error("result.winners", f"{json.dumps(result['winners'])} disagrees with the "
                                        f"totals, which give {json.dumps(rec.winners)}: {top}")


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for a block that builds millions of small acyclic
    objects (decoded JSON, turn records): each collection it would start walks every
    object built so far, which made reading a large log about three times slower."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_lines(lines: Iterable[str], path: str = "<log>", *, game: str | None = None,
                rules=None) -> list[GameRecord]:
    """Parse and replay the lines of a log (see :func:`read_games`); each item is one line
    (a final newline is left out)."""
    text = "\n".join(x[:-1] if x.endswith("\n") else x for x in lines)
    return _parse(text.encode("utf-8"), path, game, rules)


#: Logs of fewer lines are read by the Python replay alone (under about 25 ms), which
#: spares a short log, such as one game played in the terminal, the loading (about
#: 60 ms) or the first compiling (seconds) of the bulk reader.
_BULK_MIN_LINES = 1500


def _parse(data: bytes, path: str, game: str | None, rules, *, bulk: bool | None = None
           ) -> list[GameRecord]:
    """The games of a log's bytes (UTF-8, lines split at ``\\n``). ``bulk``: read Penta
    games through the compiled reader (:class:`_BulkReader`); ``None``: when the log
    has :data:`_BULK_MIN_LINES` lines or more. Otherwise, or with no Penta game in the
    log, every line goes through ``json`` and the Python replay."""
    wanted = _wanted(game, rules)
    if bulk is None:
        bulk = data.count(b"\n") + 1 >= _BULK_MIN_LINES
    with paused_gc():
        if bulk and b'"penta"' in data:
            games = _BulkReader(data, path, wanted).games()
        else:
            text = data.decode("utf-8")
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            _check_line_lengths(np.fromiter(map(len, lines), np.int64, len(lines)), path)
            games = []
            _replay(_decoded(lines, path), path, wanted, games)
    if not games:
        raise UserError(f"{path}: no game in the log (a log starts with a header line)")
    return games


def _check_line_lengths(lengths: np.ndarray, path: str) -> None:
    """Refuse a log with a line longer than :data:`MAX_LINE_CHARS`, naming the first."""
    over = np.flatnonzero(lengths > MAX_LINE_CHARS)
    if len(over):
        raise _Where(path, int(over[0]) + 1).error(
            None, f"a line of {int(lengths[over[0]]):,} characters is longer than a log line "
                  f"may be ({MAX_LINE_CHARS:,})")


def _check_wanted(w: _Where, g: str, table, rname: str, wanted: tuple) -> None:
    want_game, want_digest, want_name = wanted
    if want_game is not None and g != want_game:
        raise w.error("game", f"this is a log of {g}, not of {want_game}")
    if want_digest is not None:
        digest = table.digest() if g == "farkle" else table.digest
        if digest != want_digest:
            raise w.error("rules", f"this game was played under the rules "
                                   f"'{rname}', not '{want_name}' as asked")


def _replay(items, path: str, wanted: tuple, games: list[GameRecord]) -> None:
    """Replay decoded lines ``(line number, value)`` in Python, appending their games to
    ``games``: the reference reader, which names the line and the field of any fault."""
    rec: GameRecord | None = None
    play: Any = None
    closed = False  # the game's last line was read: its result, or its turn in progress
    for lineno, obj in items:
        w = _Where(path, lineno)
        if not isinstance(obj, dict):
            raise w.error(None, "each line is a JSON object (a header, a turn or a result)")
        if "dicelab_log" in obj:
            if rec is not None and not closed:
                _finish(rec, play.totals, play.over, None, None)
            g, table, rname, target, ending, seats, first, seed = _check_header(obj, path,
                                                                                lineno)
            _check_wanted(w, g, table, rname, wanted)
            rec = GameRecord(path, len(games), lineno, g, table, rname, target, ending,
                             seats, first, seed, header=obj)
            games.append(rec)
            play = _FarkleGame(rec) if g == "farkle" else _PentaGame(rec)
            closed = False
            continue
        if rec is None:
            raise w.error("dicelab_log", "a log starts with a header line "
                                         '({"dicelab_log": 1, "game": ...})')
        if closed:
            what = ("a turn in progress" if rec.in_progress is not None
                    else "a game's result line")
            raise w.error(None, f"{what} is the game's last line: a new game starts with a "
                                "header line")
        if "result" in obj:
            if len(obj) != 1:
                raise w.error(sorted(set(obj) - {"result"})[0], "a result line holds only "
                                                                "'result'")
            _finish(rec, play.totals, play.over, obj["result"], w)
            closed = True
            continue
        turn = play.turn(obj, w)
        if turn is None:  # the turn in progress: the game stopped there
            _finish(rec, play.totals, False, None, None)
            closed = True
            continue
        rec.turns.append(turn)
    if rec is not None and not closed:
        _finish(rec, play.totals, play.over, None, None)


class PentaTurns(Sequence):
    """The turns of one Penta game read in bulk: rows ``lo:hi`` of the columns ``cols`` of
    its whole log (:func:`dicelab.gamelog_penta.scan_lines` and ``replay_games``), seen as
    a sequence of :class:`PentaTurn`."""

    __slots__ = ("cols", "hi", "lo")

    def __init__(self, cols: dict, lo: int, hi: int):
        self.cols, self.lo, self.hi = cols, lo, hi

    def __len__(self) -> int:
        return self.hi - self.lo

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        k = i + len(self) if i < 0 else i
        if not 0 <= k < len(self):
            raise IndexError("turn index out of range")
        c, t = self.cols, self.lo + k
        nr = int(c["n_rolls"][t])
        dice, keep_dice, keep_len = c["dice"][t], c["keep_dice"][t], c["keep_len"][t]
        return PentaTurn(int(c["seat"][t]), dice[:nr].tolist(),
                         [keep_dice[j, :keep_len[j]].tolist() for j in range(nr - 1)],
                         int(c["box"][t]), tuple(c["roll_id"][t, :nr].tolist()),
                         tuple(c["keep_rank"][t, :nr - 1].tolist()), int(c["mask"][t]),
                         int(c["up"][t]), int(c["fifty"][t]), int(c["total"][t]),
                         int(c["points"][t]), int(c["line"][t]) + 1)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                        strict=True))

    __hash__ = None  # type: ignore[assignment]


#: The columns :func:`penta_columns` gives (besides ``game``).
_PENTA_COLUMNS = ("seat", "n_rolls", "roll_id", "keep_rank", "box", "mask", "up", "fifty",
                  "total")


def penta_columns(games: list[GameRecord]) -> dict[str, np.ndarray]:
    """Every turn of the Penta ``games``, in order, as columns: ``seat``, ``n_rolls``,
    ``roll_id`` (n, 3) and ``keep_rank`` (n, 2) (0 where there is no roll or keep),
    ``box``, the card before the turn (``mask``, ``up``, ``fifty``, ``total``), and
    ``game`` (the index in ``games``)."""
    parts: list[dict] = []
    run: list = []  # games read in bulk from one log, next to each other: one gather

    def flush():
        if run:
            cols = run[0][1].cols
            lo = np.array([t.lo for _, t in run], np.int64)
            n = np.array([len(t) for _, t in run], np.int64)
            start = np.cumsum(n) - n
            idx = np.arange(int(n.sum()), dtype=np.int64) + np.repeat(lo - start, n)
            part = {k: cols[k][idx] for k in _PENTA_COLUMNS}
            part["game"] = np.repeat(np.array([gi for gi, _ in run], np.int64), n)
            parts.append(part)
            run.clear()

    for gi, g in enumerate(games):
        turns = g.turns
        if isinstance(turns, PentaTurns):
            if run and run[0][1].cols is not turns.cols:
                flush()
            run.append((gi, turns))
            continue
        flush()
        n = len(turns)
        pad = (0, 0, 0)
        flat = np.array([(t.seat, len(t.roll_ids), *(t.roll_ids + pad)[:3],
                          *(t.keep_ranks + pad)[:2], t.box, t.mask, t.up, t.fifty, t.total)
                         for t in turns], dtype=np.int64).reshape(n, 12)
        parts.append({"seat": flat[:, 0], "n_rolls": flat[:, 1], "roll_id": flat[:, 2:5],
                      "keep_rank": flat[:, 5:7], "box": flat[:, 7], "mask": flat[:, 8],
                      "up": flat[:, 9], "fifty": flat[:, 10], "total": flat[:, 11],
                      "game": np.full(n, gi, np.int64)})
    flush()
    if not parts:
        return {k: np.zeros((0, 3) if k == "roll_id" else (0, 2) if k == "keep_rank" else 0,
                            np.int64) for k in (*_PENTA_COLUMNS, "game")}
    return {k: np.ascontiguousarray(np.concatenate([p[k] for p in parts]))
            for k in parts[0]}


_BAD = object()  # a line that is not valid JSON (or gives a key twice)


class _DuplicateKey(ValueError):
    """A key given twice in one object of a line (``json`` would keep the last value)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict:
    """``json``'s object of ``pairs``, refusing a key given twice (:class:`_DuplicateKey`)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _loads(text: str):
    """``json.loads`` of a log's text; a key given twice in an object is refused."""
    return json.loads(text, object_pairs_hook=_object)


class _BulkReader:
    """Reads a log whose Penta games are mostly in the writers' form: the compiled
    scanner (:mod:`dicelab.gamelog_penta`) reads every turn line it can, ``json`` the
    rest (headers, results, anything else), and the compiled replay checks and scores the
    games. A game is read this way only when all its turn lines were scanned, its header
    passes, and the replay accepts every turn; any other game, and every Farkle game, is
    replayed by :func:`_replay` from its decoded lines, in file order, so an error is the
    reference reader's, at the first faulty line."""

    def __init__(self, data: bytes, path: str, wanted: tuple):
        from dicelab import gamelog_penta as gp

        self.data, self.path, self.wanted = data, path, wanted
        buf = np.frombuffer(data, dtype=np.uint8)
        starts, ends = gp.line_bounds(buf)
        _check_line_lengths(ends - starts, path)  # bytes: at least the characters
        self.starts, self.ends = starts.tolist(), ends.tolist()
        kind, self.cols = gp.scan_lines(buf, starts, ends)
        self.n_lines = len(self.starts)
        self.other = np.flatnonzero(kind == gp.OTHER).tolist()
        self.turn_line = self.cols["line"]
        self.gp = gp

    def _text(self, ln: int) -> str:
        return self.data[self.starts[ln]:self.ends[ln]].decode("utf-8")

    def _values(self) -> list[tuple[int, str, Any]]:
        """(line index, text, value or _BAD) of every other non-blank line."""
        rows = [(ln, self._text(ln)) for ln in self.other]
        rows = [(ln, t) for ln, t in rows if t.strip()]
        try:
            values = _loads("[" + ",".join(t for _, t in rows) + "]")
        except (ValueError, RecursionError):  # ValueError: JSON, a number too long, a key twice
            values = None
        if values is None or len(values) != len(rows):
            values = []
            for _, t in rows:
                try:
                    values.append(_loads(t))
                except (ValueError, RecursionError):  # as above: its game is replayed slowly
                    values.append(_BAD)
        return [(ln, t, v) for (ln, t), v in zip(rows, values, strict=True)]

    def _slow(self, lo: int, hi: int, games: list[GameRecord]) -> None:
        """Lines ``lo:hi`` (0-based) replayed by :func:`_replay`."""
        lines = [self._text(ln) for ln in range(lo, hi)]
        _replay(_decoded(lines, self.path, lo + 1), self.path, self.wanted, games)

    def games(self) -> list[GameRecord]:
        gp, path = self.gp, self.path
        # split the log at its headers: [header line, header text, value, slow, result]
        segs: list[list] = []
        first_content = int(self.turn_line[0]) if self.turn_line.size else self.n_lines
        for ln, text, v in self._values():
            if type(v) is dict and "dicelab_log" in v:
                segs.append([ln, text, v, False, None])
                continue
            first_content = min(first_content, ln)
            if not segs:
                continue
            seg = segs[-1]
            if seg[4] is None and type(v) is dict and "result" in v and len(v) == 1:
                seg[4] = (ln, v)
            else:  # a turn not in the writers' form, or a line after the result
                seg[3] = True
        bounds = [s[0] for s in segs] + [self.n_lines]
        turn_at = np.searchsorted(self.turn_line, bounds).tolist()
        result_at = np.searchsorted(self.turn_line, [-1 if s[4] is None else s[4][0]
                                                     for s in segs]).tolist()
        games: list[GameRecord] = []
        if first_content < bounds[0]:  # something before the first header: refused there
            self._slow(0, bounds[0], games)
        # headers of games that can be read in bulk, and their replay, by rule set
        checked: dict[str, tuple] = {}
        by_rules: dict[str, list[int]] = {}
        for k, seg in enumerate(segs):
            ln, text, v, slow, result = seg
            if result is not None and turn_at[k + 1] > result_at[k]:
                slow = seg[3] = True  # turns after the result line
            if slow or v.get("game") != "penta":
                seg[3] = True
                continue
            if text not in checked:
                try:
                    checked[text] = _check_header(v, path, ln + 1)
                except UserError:
                    seg[3] = True
                    continue
            by_rules.setdefault(checked[text][2], []).append(k)
        replayed: dict[int, tuple] = {}
        for ks in by_rules.values():
            heads = [checked[segs[k][1]] for k in ks]
            bad, finished, totals, off = gp.replay_games(
                heads[0][1].params, self.cols, [turn_at[k] for k in ks],
                [turn_at[k + 1] for k in ks], [len(segs[k][2]["seats"]) for k in ks],
                [h[6] for h in heads])
            totals = totals.tolist()
            for q, k in enumerate(ks):
                if bad[q] < 0:
                    replayed[k] = (bool(finished[q]), totals[off[q]:off[q + 1]])
        for k, seg in enumerate(segs):
            if k not in replayed:
                self._slow(bounds[k], bounds[k + 1], games)
                continue
            ln, text, v, _, result = seg
            g, table, rname, _, _, _, first, seed = checked[text]
            _check_wanted(_Where(path, ln + 1), g, table, rname, self.wanted)
            rec = GameRecord(path, len(games), ln + 1, g, table, rname, None, None,
                             v["seats"], first, seed,
                             PentaTurns(self.cols, turn_at[k], turn_at[k + 1]), header=v)
            games.append(rec)
            over, tot = replayed[k]
            if result is None:
                _finish(rec, tot, over, None, None)
            else:
                _finish(rec, tot, over, result[1]["result"], _Where(path, result[0] + 1))
        return games


#: Lines decoded by one ``json.loads`` call (a block that fails is decoded line by line,
#: to name the line at fault).
_DECODE_BLOCK = 4096


def _decoded(lines: Iterable[str], path: str, first: int = 1):
    """(line number, decoded value) of every non-blank line, in order; ``lines`` starts at
    line ``first``."""
    loads = _loads
    block: list[str] = []
    numbers: list[int] = []

    def one_by_one():
        for n, text in zip(numbers, block, strict=True):
            try:
                yield n, loads(text)
            except json.JSONDecodeError as exc:
                raise _Where(path, n).error(None, f"not valid JSON ({exc.msg}, column "
                                                  f"{exc.colno})") from None
            except _DuplicateKey as exc:
                raise _Where(path, n).error(exc.key, "given twice in one object (a key is "
                                                     "given once)") from None
            except RecursionError:
                raise _Where(path, n).error(None, "not valid JSON for a log (nested too "
                                                  "deeply)") from None
            except ValueError:  # an integer of more digits than Python converts
                raise _Where(path, n).error(None, "not valid JSON for a log (a number "
                                                  "too long)") from None

    def flush():
        try:
            values = loads("[" + ",".join(block) + "]")
        except (ValueError, RecursionError):  # ValueError: JSON, a number too long, a key twice
            values = None
        if values is None or len(values) != len(block):
            yield from one_by_one()
        else:
            yield from zip(numbers, values, strict=True)

    for lineno, text in enumerate(lines, first):
        if not text.strip():
            continue
        block.append(text)
        numbers.append(lineno)
        if len(block) == _DECODE_BLOCK:
            yield from flush()
            block, numbers = [], []
    if block:
        yield from flush()


def _wanted(game, rules) -> tuple[str | None, str | None, str | None]:
    if game is not None and game not in GAMES:
        raise UserError(f"--game must be one of {', '.join(GAMES)}, not {game!r}")
    if rules is None:
        return game, None, None
    if game is None:
        raise UserError("--rules needs --game (the rules' names differ between the games)")
    if game == "farkle":
        table = _farkle_rules(rules)
        return game, table.digest(), table.name
    rs = _penta_rules(rules)
    return game, rs.digest, rs.name


def read_games(path, *, game: str | None = None, rules=None) -> list[GameRecord]:
    """Every game of the log at ``path``, replayed and checked.

    ``game`` / ``rules``: refuse a log of another game, or played under other rules
    (compared by content; a Farkle table's ending is the header's). Raises ``UserError``
    naming the file, the line and the field for anything malformed or illegal, and for
    a file that cannot be read.
    """
    from dicelab.files import read_input
    from dicelab.resources import check_memory

    p = Path(path)
    with suppress(OSError):  # the reader names what is wrong with the file
        size = p.stat().st_size
        if size > MAX_LOG_BYTES:
            raise UserError(f"{p}: {size:,} bytes is larger than a log may be "
                            f"({MAX_LOG_BYTES:,})")
        check_memory(f"reading the log {p}", 20 * size)
    # a regular file only (not /dev/zero, a FIFO or a directory), and never more bytes
    # than a log may have, whatever its size said
    data = read_input(p, str(p), MAX_LOG_BYTES)
    try:
        data.decode("utf-8")  # a text file, or UnicodeDecodeError
    except UnicodeDecodeError:
        raise UserError(f"{p}: not a text file (a log is UTF-8 JSON Lines)") from None
    if b"\r" in data:  # the line ends a file read as text would see
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return _parse(data, str(p), game, rules)


# --- writing --------------------------------------------------------------------------------


def _dumps(obj) -> str:
    def default(o):
        import numpy as np

        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.ndarray):
            return o.tolist()
        raise TypeError(f"{type(o).__name__} is not JSON data")

    text = json.dumps(obj, separators=(", ", ": "), default=default, allow_nan=False)
    return text


def format_games(games: list[tuple[dict, list[dict]]]) -> str:
    """The log text of ``games`` (each ``(header, turn events)``), checked by replaying it;
    a finished game gets its result line (a result event given is checked instead)."""
    lines: list[str] = []
    for header, events in games:
        block = [_dumps(header)] + [_dumps(e) for e in events]
        recs = parse_lines(block, "<game being written>")
        rec = recs[-1]
        if rec.finished and not any("result" in e for e in events):
            block.append(_dumps({"result": rec.result()}))
        lines.extend(block)
    return "\n".join(lines) + "\n"


def write_games(path, games: list[tuple[dict, list[dict]]]) -> None:
    """Write ``games`` (each a header from :func:`new_game_header` and its turn events) to
    ``path`` as one log with :func:`dicelab.files.write_output`: a regular file through a
    temporary file in the same directory, renamed into place, so a reader never sees half
    a log; a character device or a pipe (``/dev/stdout``) in place. Every game is replayed
    first; an illegal one is a ``UserError`` and nothing is written. A finished game gets
    its result line."""
    from dicelab.files import check_output, write_output

    text = format_games(games)
    write_output(check_output(path, "--log"), text.encode("utf-8"), "--log")


__all__ = ["FORMAT_VERSION", "FarkleTurn", "GameRecord", "PentaTurn", "PentaTurns",
           "format_games", "new_game_header", "parse_lines", "paused_gc", "penta_columns",
           "read_games", "rules_record", "write_games"]
