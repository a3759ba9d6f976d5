"""A game of Farkle played decision by decision (RULES.md §2; no I/O).

:class:`FarkleGame` holds the table: players (humans, and computers playing any Farkle
policy), totals, the turn in progress and the rules, house rules included (minimum to
bank, hot dice must roll, the penalty for the third lost turn in a row). It waits for one
thing at a time (:attr:`FarkleGame.phase`):

* ``"set-aside"``: a human chooses dice of the roll to set aside (:meth:`set_aside`);
* ``"bank-or-roll"``: a human banks (:meth:`bank`) or rolls the dice left (:meth:`roll_on`);
* ``"computer"``: the computer's next decision (:meth:`step`);
* ``"over"``: the game has ended (:attr:`winners`).

What happens is appended to :attr:`events` (kinds: ``turn``, ``roll``, ``bust``,
``set-aside``, ``hot-dice``, ``bank``, ``penalty``, ``last-round``, ``cost``,
``game-over``) and each finished turn to :attr:`turns`, in the game-log form
``{"seat", "rolls", "keeps", "end"}`` (``keeps`` has one entry per roll on a bank, one
fewer on a bust).

The rules are the referee's (:class:`dicelab.farkle.referee.Referee`: the game keeps no
sequencing of its own). The computer is any Farkle policy, a user's too
(``--ai my_policies.py:cautious``), as a :class:`~dicelab.farkle.policy.Policy`
(:func:`dicelab.farkle.builtin.as_policy`): it plays as the simulation kernels play the
same name, and its moves are checked as every policy's are. With ``coach=True`` every
human decision is judged by :func:`~dicelab.farkle.advise.advise`: with two seats in
P(win) + P(tie)/2 (optimal-win values), otherwise in expected turn points (max-ev
values), which leave the target out. Either way a bank that ends the game with the
banker's win is not charged: its ``cost`` event says ``won`` (the two-seat values give it
P(win) 1, the best; the expected turn points know nothing of it), and a decision that
passed up such a bank says ``missed_win``. The game's last turn (the last round's, by the
seat before the one that started it: :attr:`FarkleGame.final_turn`) decides the game
alone: a coach counting turn points judges it in P(win) + P(tie)/2 of beating the highest
total (the last-round advice of :func:`~dicelab.farkle.advise.advise`), and keeps its
losses apart (:attr:`FarkleGame.last_turn_losses`). A tie of three or more at the top
counts as half a win there, as between two.
"""

from __future__ import annotations

from dataclasses import dataclass

from dicelab.errors import UserError
from dicelab.farkle.advise import FarkleAdvice, advise, legal_setasides, tied
from dicelab.farkle.builtin import USER, as_policy, family_of
from dicelab.farkle.policies import seat_of
from dicelab.farkle.referee import Referee
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    HOT_DICE,
    POINT_UNIT,
    FarkleRules,
    check_seats,
    check_target,
    dice_after,
    load_rules,
    setaside_points,
)
from dicelab.play import (
    Dice,
    Event,
    IllegalMove,
    Player,
    TurnGame,
    check_faces,
    missing_reason,
    take_from,
    winners,
)
from dicelab.play import table_players as _table_players
from dicelab.registry import PolicySpec
from dicelab.text import counted

#: The game's messages (seed 001, RULES.md §2).
TURN_LOST = "Turn lost!"
HOT_DICE_MESSAGE = "Hot dice!"
LAST_ROUND_MESSAGE = "Last round!"


def table_players(humans: int, ai: str | None, names: list[str] | None = None
                  ) -> list[Player]:
    """:func:`dicelab.play.table_players` of Farkle."""
    return _table_players("farkle", humans, ai, names)


@dataclass(frozen=True)
class Choice:
    """One option of a decision: set aside ``keep`` (``points``), then ``action``
    (``"bank"`` or ``"roll"`` the ``dice`` left); ``value`` in the coach's unit and
    ``loss`` against the best legal option; ``wins``: a bank that ends the game with this
    player's win (the coach charges it nothing, whatever its ``loss``)."""

    keep: tuple[int, ...]
    points: int
    action: str
    dice: int
    value: float
    loss: float
    wins: bool = False


@dataclass(frozen=True)
class Advice:
    """The coach's ranking of one decision: legal options, best first."""

    unit: str  # "points" (expected turn score) or "win" (P(win) + P(tie)/2)
    options: list[Choice]

    def find(self, keep, action: str) -> Choice | None:
        keep = tuple(sorted(keep))
        for o in self.options:
            if o.keep == keep and o.action == action:
                return o
        return None


# --- the computer ----------------------------------------------------------------------


def check_computer(spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int
                   ) -> None:
    """What a computer seat refuses before the game, as a simulation of it would:
    ``optimal-win`` away from two seats, a solve the memory limit cannot hold (its
    family's check), a user's bank rule that fails at a state of the game (tabulated: it
    is asked at every one)."""
    family = family_of(spec)
    if family.two_seats and n_seats != 2:
        raise UserError(f"{spec.name} plays two-seat games only (this game has "
                        f"{counted(n_seats, 'seat')}): play with one human, or choose "
                        "another --ai")
    family.check(spec, rules, target, n_seats)
    if family is USER and family.tabulable(spec):
        seat_of(spec.policy, rules, target)


def _legal_options(game: FarkleGame, adv: FarkleAdvice) -> list[Choice]:
    """``advise``'s options that the rules allow now (its bank options ignore the house
    rules on banking), best first, losses against the best of them."""
    opts = [o for o in adv.options
            if o.action == "roll" or game.rules.can_bank(game.turn_points + o.points,
                                                         dice_after(len(game.roll),
                                                                    len(o.keep)))]
    best = opts[0].value
    return [Choice(o.keep, o.points, o.action, o.dice, o.value,
                   0.0 if tied(best, o.value) else best - o.value,
                   o.action == "bank" and game.bank_wins(game.turn_points + o.points))
            for o in opts]


# --- the game --------------------------------------------------------------------------


class FarkleGame(TurnGame):
    """One game of Farkle (see the module docstring).

    >>> from dicelab.play import ScriptedDice
    >>> g = FarkleGame([Player("You")], target=300, dice=ScriptedDice([1, 1, 1, 2, 3, 4]))
    >>> g.start(); g.phase, g.roll
    ('set-aside', [1, 1, 1, 2, 3, 4])
    >>> g.set_aside([1, 1, 1]); g.bank(); g.phase, g.totals
    ('over', [1000])
    """

    def __init__(self, players: list[Player], *, rules: str | FarkleRules | None = None,
                 ending: str | None = None, target: int | None = None, dice: Dice,
                 first_seat: int = 0, coach: bool = False) -> None:
        self.players = list(players)
        n = check_seats(len(self.players))
        self.rules = load_rules(rules, ending)
        if n == 1 and ending is not None:
            raise UserError("--ending is for two or more players: a game alone ends when its "
                            "player reaches the target, under either rule")
        self.target = check_target(target)
        if not 0 <= first_seat < n:
            raise UserError(f"the first seat must be 0 to {n - 1}, not {first_seat}")
        self.first_seat = first_seat
        self.dice = dice
        for p in self.players:
            if not p.human:
                check_computer(p.policy, self.rules, self.target, n)
        self.computers: dict = {}  # seat -> its Policy (start() makes them)
        self.referee = Referee(n, rules=self.rules, target=self.target, dice=dice,
                               first_seat=first_seat, record=True)
        self.losses = [0.0] * n  # the coach's sum of losses per seat, in coach_unit
        #: the coach's losses on the game's last turn when coach_unit is "points" (they are
        #: in P(win) + P(tie)/2: :attr:`final_turn`), per seat; None: not judged
        self.last_turn_losses: list[float | None] = [None] * n
        self.events: list[Event] = []
        self.phase = "new"
        self.coach_unit: str | None = None
        self.coach_note: str | None = None
        self._coach = coach
        self._advice: Advice | None = None
        self._kept: tuple[int, ...] = ()
        self._seen = 0  # the referee's events already passed on

    # -- the table, as the referee keeps it

    @property
    def seat(self) -> int:
        return self.referee.seat

    @property
    def totals(self) -> list[int]:
        return self.referee.totals

    @property
    def streaks(self) -> list[int]:
        """Lost turns in a row, by seat."""
        return self.referee.lost

    @property
    def trigger(self) -> int | None:
        return self.referee.trigger

    @property
    def roll(self) -> list[int]:
        return self.referee.roll

    @property
    def turn_points(self) -> int:
        return self.referee.turn_points

    @property
    def turns(self) -> list[dict]:
        return self.referee.turns

    @property
    def _record(self) -> dict:
        return self.referee.turn_record

    # -- set-up

    def start(self) -> None:
        """Solve or load the tables the computer and the coach need (exact policies can
        take seconds the first time), check that the coach can judge under these rules,
        then deal the first roll."""
        n = len(self.players)
        self.computers = {s: as_policy(p.policy, self.rules, self.target, n)
                          for s, p in enumerate(self.players) if not p.human}
        if self._coach:
            self._prepare_coach()
        self.referee.start()
        self._sync()

    def _prepare_coach(self) -> None:
        probe = [1, 2, 3, 4, 6, 6]  # any scoring roll forces the solve
        modes = ["win", "points"] if len(self.players) == 2 else ["points"]
        notes = []
        for unit in modes:
            try:
                self._coach_advice(unit, probe, 0, 0, 0)
            except UserError as exc:
                notes.append(str(exc))
                continue
            self.coach_unit = unit
            break
        if notes:
            self.coach_note = notes[0] if self.coach_unit is None else \
                f"the coach counts expected turn points ({notes[0]})"

    def _coach_advice(self, unit: str, roll, tp: int, me: int, opp: int, my_farkles: int = 0,
                      opp_farkles: int = 0) -> FarkleAdvice:
        if unit == "win":
            return advise(roll, turn_points=tp, me=me, opp=opp, target=self.target,
                          rules=self.rules, my_farkles=my_farkles, opp_farkles=opp_farkles)
        return advise(roll, turn_points=tp, rules=self.rules, my_farkles=my_farkles)

    # -- what the game knows

    @property
    def player(self) -> Player:
        return self.players[self.seat]

    @property
    def dice_left(self) -> int:
        """Dice the current turn would roll next (6 after hot dice)."""
        return self.referee.dice_left

    @property
    def last_round(self) -> bool:
        """True in the last round (some seat banked the target, ``last-round`` ending)."""
        return self.referee.last_round

    @property
    def winners(self) -> list[int]:
        return winners(self.totals) if self.phase == "over" else []

    @property
    def final_turn(self) -> bool:
        """Whether the turn in progress is the game's last: in the last round, the turn of
        the seat before the one that started it."""
        return self.trigger is not None and (self.seat + 1) % len(self.players) == self.trigger

    def best_opponent_total(self) -> int:
        """The highest total of the other seats (0 when alone)."""
        others = [t for s, t in enumerate(self.totals) if s != self.seat]
        return max(others) if others else 0

    def best_opponent_seat(self) -> int | None:
        """The other seat with the highest total, the lowest-numbered among equal totals,
        as the simulation kernel picks it (None when alone)."""
        others = [s for s in range(len(self.totals)) if s != self.seat]
        return max(others, key=lambda s: (self.totals[s], -s)) if others else None

    def legal_setasides(self) -> list[tuple[tuple[int, ...], int]]:
        """Every distinct legal set-aside of the roll with its points, most points first."""
        return legal_setasides(self.rules, self.roll)

    def can_bank(self) -> bool:
        return self.phase == "bank-or-roll" and self.referee.can_bank()

    def bank_refusal(self) -> str | None:
        """Why banking is not allowed now (None: it is)."""
        if self.referee.can_bank():
            return None
        if self.dice_left == HOT_DICE and self.rules.hot_dice == "must-roll":
            return "after hot dice you must roll on (house rule: hot dice must roll)"
        return (f"you need at least {max(self.rules.min_bank, POINT_UNIT):,} turn points to "
                f"bank (house rule), you have {self.turn_points:,}")

    def advice(self) -> Advice | None:
        """The coach's ranking of the decision the current human faces (None: no coach).
        At ``set-aside``: every legal set-aside, then bank or roll; at ``bank-or-roll``:
        bank and roll after the dice just set aside."""
        if self.coach_unit is None or not self.player.human or \
                self.phase not in ("set-aside", "bank-or-roll"):
            return None
        if self._advice is None:
            me, opp = self.totals[self.seat], self.best_opponent_total()
            other = self.best_opponent_seat()
            # the last turn decides the game: the chance to beat the highest total
            unit = "win" if self.final_turn else self.coach_unit
            try:
                ranked = self._coach_advice(unit, self.roll, self.turn_points, me, opp,
                                            self.streaks[self.seat],
                                            0 if other is None else self.streaks[other])
            except UserError as exc:  # a position the solvers do not take: no more advice
                self.coach_unit, self.coach_note = None, str(exc)
                return None
            self._advice = Advice(unit, _legal_options(self, ranked))
        if self.phase == "set-aside":
            return self._advice
        mine = [o for o in self._advice.options if o.keep == tuple(sorted(self._kept))]
        best = self._advice.options[0].value
        return Advice(self._advice.unit,
                      [Choice(o.keep, o.points, o.action, o.dice, o.value,
                              0.0 if tied(best, o.value) else best - o.value, o.wins)
                       for o in mine])

    def bank_wins(self, turn_points: int) -> bool:
        """Whether banking ``turn_points`` now would end the game with the current seat
        its only winner (RULES.md §2): alone, on reaching the target; under
        ``first-to-bank``, on banking the target first; in the last round, on the last
        turn, with the highest total."""
        n, seat = len(self.players), self.seat
        totals = list(self.totals)
        totals[seat] += turn_points
        if self.trigger is None:
            ends = totals[seat] >= self.target and (
                n == 1 or self.rules.ending_code == FIRST_TO_BANK)
        else:
            ends = self.final_turn
        return ends and winners(totals) == [seat]

    # -- decisions

    def set_aside(self, faces) -> None:
        """Set aside these dice of the roll (a human's decision); ``IllegalMove`` with the
        reason if the rules do not allow it."""
        self._expect("set-aside")
        faces = check_faces(faces)
        reason = self.setaside_refusal(faces)
        if reason:
            raise IllegalMove(reason)
        if self._coach:
            self.advice()  # judged against the position before the dice go aside
        self._kept = tuple(faces)
        self.referee.set_aside(faces)
        self._sync()

    def setaside_refusal(self, faces: list[int]) -> str | None:
        """Why these dice cannot be set aside from the roll (None: they can)."""
        if not faces:
            return "set aside at least one scoring die"
        if take_from(self.roll, faces) is None:
            return missing_reason(self.roll, faces)
        if setaside_points(self.rules, faces) is not None:
            return None
        legal = self.legal_setasides()
        can = {f for k, _ in legal for f in k}
        for f in faces:
            if f not in can:
                return (f"a {f} cannot score in this roll: every die set aside must be part "
                        "of a scoring combination formed within this roll")
        example = " ".join(map(str, max((k for k, _ in legal if set(k) & set(faces)),
                                        key=len)))
        return (f"{' '.join(map(str, faces))} does not score as a set-aside: every die must "
                f"belong to a combination formed within this roll (e.g. {example})")

    def bank(self) -> None:
        """Bank the turn points (a human's decision)."""
        self._expect("bank-or-roll")
        reason = self.bank_refusal()
        if reason:
            raise IllegalMove(reason)
        self._judge("bank")
        self.referee.bank()
        self._sync()

    def roll_on(self) -> None:
        """Roll the dice left (a human's decision)."""
        self._expect("bank-or-roll")
        self._judge("roll")
        self.referee.roll_on()
        self._sync()

    def step(self) -> None:
        """Play the computer's next decision (set-aside, then bank or roll)."""
        self._expect("computer")
        self.referee.move(self.referee.ask(self.computers[self.seat]))
        self._sync()

    # -- the referee's events

    def _sync(self) -> None:
        """Pass on what the referee did (its events, as :class:`~dicelab.play.Event`
        with the game's messages) and wait for the next decision."""
        ref = self.referee
        for kind, seat, data in ref.events[self._seen:]:
            if kind in _MESSAGES:
                data = {"message": _MESSAGES[kind], **data}
            if kind in ("roll", "turn", "game-over"):
                self._advice = None  # a new position
            self.events.append(Event(kind, seat, data))
        self._seen = len(ref.events)
        self.phase = {"decide": "set-aside" if self.player.human else "computer",
                      "bank-or-roll": "bank-or-roll"}.get(ref.phase, ref.phase)

    def _judge(self, action: str) -> None:
        adv = self.advice()
        if adv is None:
            return
        mine = adv.find(self._kept, action)
        if mine is None:  # cannot happen: every legal decision is an option
            raise AssertionError(f"no option {self._kept} {action}")
        best = self._advice.options[0]  # the best of the whole decision
        loss = 0.0 if mine.wins else mine.loss  # a bank that wins the game costs nothing
        if adv.unit == self.coach_unit:
            self.losses[self.seat] += loss
        else:  # the last turn, judged in P(win) by a coach of turn points
            self.last_turn_losses[self.seat] = (self.last_turn_losses[self.seat] or 0.0) + loss
        # a bank that would have won the game now, not taken (a measure of turn points
        # does not see it: it is said beside the loss)
        missed = not mine.wins and any(o.wins for o in adv.options)
        self._emit("cost", unit=adv.unit, loss=loss, value=mine.value,
                   best=(best.keep, best.action, best.dice), best_value=best.value,
                   won=mine.wins, missed_win=missed)


_MESSAGES = {"bust": TURN_LOST, "hot-dice": HOT_DICE_MESSAGE,
             "last-round": LAST_ROUND_MESSAGE}
