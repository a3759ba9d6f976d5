"""The Farkle referee: one game of Farkle as a plain-Python state machine (layer 2).

The referee holds a table -- the seats' totals, their runs of lost turns, the turn in
progress, the target and the rules -- and applies the rules to what the seats decide:
the bank floor and hot dice (:attr:`~dicelab.farkle.rules.FarkleRules.bank_floor`), a
lost turn and the farkle penalty at the :data:`~dicelab.farkle.rules.PENALTY_STREAK`-th
in a row, and both endings (``last-round``: the first to bank the target gives every
other seat one more turn; ``first-to-bank``: it wins at once). It rolls for the seat
whose turn it is, and after every roll that scores it waits for one decision: the dice
to set aside, then bank or roll on. Seats decide by a :class:`~dicelab.farkle.policy.
Policy` (:meth:`Referee.ask`, :func:`play_game`) or move by move (:meth:`Referee.set_aside`,
:meth:`Referee.bank`, :meth:`Referee.roll_on`, as a human at the terminal does).

It plays as the simulation kernel does (:mod:`dicelab.farkle.kernels`): the same order
of seats, the same best opponent (the highest other total, the lowest-numbered seat
among equals), the same caps (a turn stops after ``MAX_TURN_ROLLS`` rolls, a game after
``MAX_ROUNDS`` rounds: the game is *capped*), and a roll of ``n`` dice takes the next
``n`` faces of its dice source. So a policy object and the kernel's tables of the same
policy play the same games on the same faces (the tests check it for every built-in).

Dice come from any object with ``roll(n) -> faces`` (:class:`GeneratorDice`: a seeded
numpy generator; ``dicelab.play.ScriptedDice``: faces in order); one with a
``begin_turn(place, turn)`` method is told as each turn starts (the seat's place in the
turn order from the first seat, and its turns so far: a stream per turn). What happens is kept
for game logs: :attr:`Referee.turns` holds each finished turn as ``{"seat", "rolls",
"keeps", "end"}`` (``end``: ``"bank"`` or ``"bust"``), and with ``record=True``
:attr:`Referee.events` holds ``(kind, seat, data)`` tuples (kinds ``turn``, ``roll``,
``bust``, ``penalty``, ``set-aside``, ``hot-dice``, ``bank``, ``last-round``,
``game-over``).

>>> from dicelab.farkle.rules import PRESETS
>>> from dicelab.farkle.builtin import as_policy
>>> ref = Referee(2, rules=PRESETS["default"], target=1000,
...               dice=GeneratorDice(np.random.default_rng(1)))
>>> p = as_policy("threshold-300", PRESETS["default"], 1000)
>>> play_game(ref, [p, p]).phase, max(ref.totals) >= 1000
('over', True)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dicelab.config import MAX_ROUNDS, MAX_TURN_ROLLS
from dicelab.errors import UserError, user_code_error
from dicelab.farkle.policy import Move, SetAside, State, options
from dicelab.farkle.rules import FIRST_TO_BANK, HOT_DICE, FarkleRules

#: How many faces :class:`GeneratorDice` draws at a time.
DICE_BLOCK = 4096


class GeneratorDice:
    """Dice from a numpy ``Generator``: faces drawn a block at a time, a roll of ``n``
    dice the next ``n`` of them (so the faces a game sees depend only on the generator,
    not on how the rolls fall)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._faces: list[int] = []
        self._pos = 0

    def roll(self, n: int) -> list[int]:
        if self._pos + n > len(self._faces):
            rest = self._faces[self._pos:]
            self._faces = rest + self.rng.integers(1, 7, size=DICE_BLOCK,
                                                   dtype=np.int8).tolist()
            self._pos = 0
        out = self._faces[self._pos:self._pos + n]
        self._pos += n
        return out


@functools.lru_cache(maxsize=16)
def roll_book(rules: FarkleRules) -> dict:
    """A per-rule-set memo: sorted roll -> (its options, the option of each keep)."""
    return {}


def _lookup(book: dict, rules: FarkleRules, roll: tuple[int, ...]):
    found = book.get(roll)
    if found is None:
        opts = options(rules, roll)
        found = book[roll] = (opts, {o.keep: o for o in opts})
    return found


class Referee:
    """One Farkle game (see the module docstring): ``n_seats`` seats (1 to 7) from
    ``first_seat``, to ``target`` points under ``rules`` (its ending included), on
    ``dice``. :meth:`start` deals the first roll; then :attr:`phase` is ``"decide"``
    (a scoring roll waits for a :class:`~dicelab.farkle.policy.Move`, or for
    :meth:`set_aside`), ``"bank-or-roll"`` (after :meth:`set_aside`) or ``"over"``.
    With ``hold=True`` a turn's first roll waits for :meth:`begin_turn` (phase
    ``"turn"``): a log's reader knows the dice only when it reads the turn."""

    def __init__(self, n_seats: int, *, rules: FarkleRules, target: int, dice,
                 first_seat: int = 0, record: bool = False, hold: bool = False) -> None:
        self.rules, self.target, self.dice, self.n = rules, target, dice, n_seats
        self.first_seat = first_seat
        self.record = record
        self.hold = hold
        self._book = roll_book(rules)
        self._turn_hook = getattr(dice, "begin_turn", None)  # a stream per turn
        self._floor = rules.bank_floor
        self._first_to_bank = rules.ending_code == FIRST_TO_BANK
        self.totals = [0] * n_seats
        self.lost = [0] * n_seats  # lost turns in a row
        self.seat = first_seat
        self.trigger: int | None = None
        self.capped = False
        self.phase = "new"
        self.roll: list[int] = []  # the roll as dealt
        self.sorted_roll: tuple[int, ...] = ()
        self.turn_points = 0
        self.dice_left = HOT_DICE
        self.turn_rolls = 0
        self.turns: list[dict] = []
        self.events: list[tuple[str, int | None, dict]] = []
        # per seat, as the kernel's statistics count them
        self.n_turns = [0] * n_seats
        self.n_rolls = [0] * n_seats
        self.n_busts = [0] * n_seats
        self.n_hot = [0] * n_seats
        self.rolls_by_dice = [[0] * 7 for _ in range(n_seats)]
        self.busts_by_dice = [[0] * 7 for _ in range(n_seats)]
        self._turns_played = 0
        self._record: dict = {}
        self._view: tuple = ((), (), False)
        self._options: tuple[tuple[SetAside, ...], dict] = ((), {})
        self._checked: SetAside | None = None  # the option of the move check() passed

    # -- what the referee knows

    @property
    def last_round(self) -> bool:
        """Some seat has banked the target (``last-round`` ending): every turn from here
        is its seat's last."""
        return self.trigger is not None

    def state(self) -> State:
        """The decision the current seat faces (phase ``"decide"``)."""
        totals, lost, last_round = self._view  # fixed through a turn
        return State(self.sorted_roll, self.turn_points, self.seat, totals, lost, last_round,
                     self.target, self.rules)

    def options(self) -> tuple[SetAside, ...]:
        """Every legal set-aside of the roll (phase ``"decide"``), most points first."""
        return self._options[0]

    def can_bank(self) -> bool:
        """Whether the turn may bank now (phase ``"bank-or-roll"``)."""
        return self.turn_points >= self._floor[self.dice_left]

    @property
    def turn_record(self) -> dict:
        """The turn in progress in the game-log form: its seat, rolls and keeps so far
        (no ending yet); empty before and after the game."""
        return {} if self.phase in ("new", "turn", "over") else self._record

    def winners(self) -> list[int]:
        """The seats with the highest total (after the game)."""
        top = max(self.totals)
        return [s for s, t in enumerate(self.totals) if t == top]

    # -- decisions

    def start(self) -> Referee:
        """Deal the first turn's roll."""
        if self.phase != "new":
            raise RuntimeError("the game has started")
        self._begin_turn()
        self._advance()
        return self

    def begin_turn(self) -> None:
        """Deal the next turn's first roll (phase ``"turn"``, with ``hold=True``)."""
        self._expect("turn")
        self._begin_turn()

    def ask(self, policy) -> Move:
        """The current seat's ``policy`` decides the current state: its move, checked
        (a :class:`~dicelab.errors.UserError` naming the state and the move if the rules
        do not allow it, or with the policy's own traceback if it raises)."""
        totals, lost, last_round = self._view
        state = State(self.sorted_roll, self.turn_points, self.seat, totals, lost, last_round,
                      self.target, self.rules)
        try:
            move = policy.decide(state)
        except (Exception, SystemExit) as exc:  # the policy's code: its frames, the state
            raise user_code_error(exc, f"policy {_name(policy)} at {describe(state)}"
                                  ) from None
        return self.check(move, state, policy)

    def check(self, move, state: State | None = None, policy=None) -> Move:
        """``move`` as a :class:`~dicelab.farkle.policy.Move` if the rules allow it now,
        else a :class:`~dicelab.errors.UserError` naming the state and the move."""
        by_keep = self._options[1]
        if type(move) is Move and type(move.keep) is tuple \
                and (move.bank is True or move.bank is False) \
                and all(type(f) is int for f in move.keep):  # the common case, fast
            option = by_keep.get(move.keep)
            if option is not None and (not move.bank or self.turn_points + option.points
                                       >= self._floor[option.dice_left]):
                self._checked = option
                return move
        try:
            keep, bank = move
            faces = list(keep)
        except (TypeError, ValueError):
            faces, bank = None, None
        whole = faces is not None and all(isinstance(f, int | np.integer)
                                          and not isinstance(f, bool) for f in faces)
        key = tuple(sorted(int(f) for f in faces)) if whole else None
        option = by_keep.get(key) if whole else None
        why = None
        if faces is None or not (bank is True or bank is False or isinstance(bank, np.bool_)):
            why = "a move is Move(keep=dice to set aside, bank=True or False)"
        elif not whole:  # (1.9 is no die, nor is True)
            why = "the dice to set aside are faces of the roll (whole numbers 1 to 6)"
        elif option is None:
            why = f"{list(key)} is not a legal set-aside of this roll"
        elif bank and self.turn_points + option.points < self._floor[option.dice_left]:
            why = "the rules do not allow banking here" + (
                " (hot dice must roll)" if option.dice_left == HOT_DICE else
                f" (at least {self._floor[option.dice_left]} turn points to bank)")
        if why:
            state = state or self.state()
            raise UserError(f"policy {_name(policy)} answered {move!r} at {describe(state)}: "
                            f"{why}")
        self._checked = option
        return Move(key, bool(bank))

    def move(self, move: Move) -> None:
        """Play a checked move: set its dice aside, then bank or roll on."""
        self.set_aside(move.keep)
        if move.bank:
            self.bank()
        else:
            self.roll_on()

    def set_aside(self, keep) -> SetAside:
        """Set these dice of the roll aside (``UserError`` if they are no legal
        set-aside)."""
        self._expect("decide")
        by_keep = self._options[1]
        option = by_keep.get(keep) if type(keep) is tuple else None
        if option is None:
            key = tuple(sorted(int(f) for f in keep))
            option = by_keep.get(key)
            if option is None:
                raise UserError(f"{list(key)} is not a legal set-aside of the roll "
                                f"{self.roll}")
        self._set_aside(option, keep)
        return option

    def _set_aside(self, option: SetAside, keep) -> None:
        seat = self.seat
        self.turn_points += option.points
        self.dice_left = option.dice_left
        self._record["keeps"].append(list(keep))
        hot = option.dice_left == HOT_DICE  # every die of the roll set aside
        self.n_hot[seat] += hot
        if self.record:
            self._emit("set-aside", dice=list(keep), points=option.points,
                       turn_points=self.turn_points, dice_left=self.dice_left)
            if hot:
                self._emit("hot-dice")
        self.phase = "bank-or-roll"

    def bank(self) -> None:
        """Bank the turn points (``UserError`` where the rules do not allow it)."""
        self._expect("bank-or-roll")
        if not self.can_bank():
            raise UserError(f"the rules do not allow banking {self.turn_points} turn points "
                            f"with {self.dice_left} dice to roll")
        self._bank()

    def _bank(self) -> None:
        seat = self.seat
        self.totals[seat] += self.turn_points
        self.lost[seat] = 0
        if self.record:
            self._emit("bank", points=self.turn_points, total=self.totals[seat])
        self._record["end"] = "bank"
        self._end_turn()
        self._advance()

    def roll_on(self) -> None:
        """Roll the dice left."""
        self._expect("bank-or-roll")
        self._roll_on()

    def _roll_on(self) -> None:
        if self.turn_rolls >= MAX_TURN_ROLLS:  # the kernel's cap on a turn
            self.capped = True
            self._record["end"] = "capped"
            self.turns.append(self._record)
            return self._game_over()
        self._roll()
        self._advance()

    # -- the rules

    def _expect(self, phase: str) -> None:
        if self.phase != phase:
            raise RuntimeError(f"the game waits for {self.phase!r}, not {phase!r}")

    def _emit(self, kind: str, **data: Any) -> None:
        self.events.append((kind, self.seat, data))

    def _begin_turn(self) -> None:
        self.turn_points = 0
        self.dice_left = HOT_DICE
        self.turn_rolls = 0
        self._view = (tuple(self.totals), tuple(self.lost), self.trigger is not None)
        if self._turn_hook is not None:  # (place in the turn order, the seat's turns so far)
            self._turn_hook((self.seat - self.first_seat) % self.n, self.n_turns[self.seat])
        self.n_turns[self.seat] += 1
        self._record = {"seat": self.seat, "rolls": [], "keeps": []}
        if self.record:
            self._emit("turn", totals=list(self.totals), last_round=self.trigger is not None)
        self._roll()

    def _roll(self) -> None:
        seat, n = self.seat, self.dice_left
        faces = self.dice.roll(n)
        if type(faces) is not list:
            faces = [int(f) for f in faces]
        self.roll = faces
        self.sorted_roll = roll = tuple(sorted(faces))
        self.turn_rolls += 1
        self.n_rolls[seat] += 1
        self.rolls_by_dice[seat][n] += 1
        self._record["rolls"].append(faces)
        if self.record:
            self._emit("roll", dice=list(faces), turn_points=self.turn_points)
        found = self._options = self._book.get(roll) or _lookup(self._book, self.rules, roll)
        if found[0]:
            self.phase = "decide"
            return
        # a roll that scores nothing: the turn is lost
        self.n_busts[seat] += 1
        self.busts_by_dice[seat][n] += 1
        if self.record:
            self._emit("bust", lost=self.turn_points)
        self.turn_points = 0
        penalty, self.lost[seat] = self.rules.after_lost_turn(self.lost[seat])
        if penalty:
            self.totals[seat] -= penalty
            if self.record:
                self._emit("penalty", points=penalty, total=self.totals[seat])
        self._record["end"] = "bust"
        self._end_turn()

    def _end_turn(self) -> None:
        self.turns.append(self._record)
        seat = self.seat
        if self.trigger is None and self.totals[seat] >= self.target:
            self.trigger = seat
            if self._first_to_bank:
                return self._game_over()
            if self.n > 1 and self.record:
                self._emit("last-round")
        self.seat = seat = (seat + 1) % self.n
        if seat == self.trigger:
            return self._game_over()
        self._turns_played += 1
        if self._turns_played >= MAX_ROUNDS * self.n:  # the kernel's cap on a game
            self.capped = True
            return self._game_over()
        self.phase = "turn"  # the next seat's turn: _advance deals it (unless held)

    def _advance(self) -> None:
        """Deal turns until one waits for a decision or the game ends (a loop, not a
        recursion: turns lost on their first roll can follow each other for long)."""
        while self.phase == "turn" and not self.hold:
            self._begin_turn()

    def _game_over(self) -> None:
        self.phase = "over"
        self.roll, self.sorted_roll, self._options = [], (), ((), {})
        if self.record:
            self.events.append(("game-over", None, {"totals": list(self.totals),
                                                     "winners": self.winners()}))


def play_game(referee: Referee, policies) -> Referee:
    """Play ``referee``'s game to its end, seat ``s`` deciding by ``policies[s]`` (each
    move checked: :meth:`Referee.ask`); returns the referee."""
    if referee.phase == "new":
        referee.start()
    while referee.phase == "decide":
        move = referee.ask(policies[referee.seat])
        # as Referee.move, without checking again what ask checked
        referee._set_aside(referee._checked, move.keep)
        if move.bank:
            referee._bank()
        else:
            referee._roll_on()
    return referee


def describe(state: State) -> str:
    """A decision state in words, for error messages."""
    return (f"seat {state.seat}: roll {list(state.roll)}, turn points {state.turn_points}, "
            f"totals {list(state.totals)}, lost turns in a row {list(state.lost)}, "
            f"{'last round, ' if state.last_round else ''}target {state.target}")


def _name(policy) -> str:
    return str(getattr(policy, "name", None) or type(policy).__name__)


__all__ = ["DICE_BLOCK", "GeneratorDice", "Referee", "describe", "play_game", "roll_book"]
