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

The computer plays as the simulation kernels do: ``threshold-T`` and ``ai`` set aside all
scoring dice and bank by :func:`dicelab.farkle.kernels.ai_thresholds` (RULES.md §3);
``max-ev`` and ``fastest`` play their decision tables
(:func:`dicelab.farkle.exact.policy_table`); ``optimal-win`` and ``optimal-win:vs=P``
play their exact turn values (:meth:`OptimalWinSolution.turn_values`; the last round:
:func:`dicelab.farkle.advise.advise`). With ``coach=True`` every human decision is
judged by :func:`~dicelab.farkle.advise.advise`: with two seats in P(win) + P(tie)/2
(optimal-win values), otherwise in expected turn points (max-ev values).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dicelab import dice as dice_ranks
from dicelab.errors import UserError
from dicelab.farkle.advise import TIE, FarkleAdvice, advise, legal_setasides
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    HOT_DICE,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    check_seats,
    check_target,
    dice_after,
    dice_kept,
    load_rules,
    set_asides,
    setaside_points,
)
from dicelab.play import (
    Dice,
    Event,
    IllegalMove,
    Player,
    TurnGame,
    missing_reason,
    take_from,
    winners,
)
from dicelab.play import table_players as _table_players
from dicelab.registry import PolicySpec

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
    ``loss`` against the best legal option."""

    keep: tuple[int, ...]
    points: int
    action: str
    dice: int
    value: float
    loss: float


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


class _Computer:
    """A computer seat's decisions: ``decide(game)`` -> (dice to set aside, bank?)."""

    def __init__(self, spec: PolicySpec, rules: FarkleRules, target: int, n_seats: int):
        self.spec, self.rules, self.target, self.n_seats = spec, rules, target, n_seats
        if spec.family == "optimal-win" and n_seats != 2:
            raise UserError(f"{spec.name} plays two-seat games only (this game has "
                            f"{n_seats} seats): play with one human, or choose another --ai")
        self._table = None
        self._solution = None

    def prepare(self) -> None:
        """Solve or load what the policy needs (exact policies), before the game."""
        fam = self.spec.family
        # under the farkle penalty optimal-win plays its policy table (by runs of lost
        # turns), as the simulator does: its turn values by state are not available
        if fam in ("max-ev", "fastest") or (fam == "optimal-win" and self.rules.farkle_penalty):
            from dicelab.farkle.exact import policy_table

            self._table = policy_table(self.spec, self.rules, self.target, self.n_seats)
        elif fam == "optimal-win":
            from dicelab.farkle.exact import optimal_win_solution

            self._solution = optimal_win_solution(self.spec, self.rules, self.target)

    def decide(self, game: FarkleGame) -> tuple[tuple[int, ...], bool]:
        if self.spec.family in ("threshold", "ai"):
            return self._by_threshold(game)
        if self._table is None and self._solution is None:
            self.prepare()
        if self._table is not None:
            return self._by_table(game)
        return self._by_win_values(game)

    def _by_threshold(self, game: FarkleGame) -> tuple[tuple[int, ...], bool]:
        from dicelab.farkle.fixed import ai_params
        from dicelab.farkle.kernels import ai_thresholds

        # all scoring dice: the most dice, then the most points
        keep, pts = max(legal_setasides(self.rules, game.roll),
                        key=lambda kp: (len(kp[0]), kp[1]))
        thr = np.zeros(7, dtype=np.int64)
        me, best = game.totals[game.seat], game.best_opponent_total()
        if self.spec.family == "ai":
            floor = 0
            if game.last_round and self.spec.params["chase"]:
                floor = best - me + 1  # a banked total must beat the leader
            ai_thresholds(ai_params(self.spec), max(best - me, 0), floor, thr)
        else:
            thr[:] = self.spec.params["threshold"]
        tp = game.turn_points + pts
        left = dice_after(len(game.roll), len(keep))
        return keep, bool(tp >= thr[left] and self.rules.can_bank(tp, left))

    def _by_table(self, game: FarkleGame) -> tuple[tuple[int, ...], bool]:
        # as the kernel plays a PolicyTable (dicelab.farkle.policy_table)
        pt, n = self._table, len(game.roll)
        me, best = game.totals[game.seat], game.best_opponent_total()
        p_dim = pt.dims[3]
        if game.last_round and pt.last_value is not None:
            d = min(max((best - me) // POINT_UNIT, 0), pt.last_value.shape[0] - 1)
            value, bank = pt.last_value[d], pt.last_bank[d]
        else:  # the lost-turn counts of 6-D tables: this seat's, the best opponent's
            opp = game.best_opponent_seat()
            value, bank = pt.normal(game.streaks[game.seat],
                                    0 if opp is None else game.streaks[opp], me, best)
        sa = set_asides(self.rules)
        best_v, choice = -np.inf, None
        for pts, left in sa.options(dice_ranks.rank_of_dice(game.roll)):  # model order
            tp = game.turn_points + pts
            p = min(tp // POINT_UNIT, p_dim - 1)
            v = float(value[p, left])
            if v > best_v:
                best_v, choice = v, (pts, left, tp, bool(bank[p, left]))
        pts, left, tp, banks = choice
        kept = dice_kept(n, left)
        keep = next(k for k, p in legal_setasides(self.rules, game.roll)
                    if p == pts and len(k) == kept)
        return keep, banks and self.rules.can_bank(tp, left)

    def _by_win_values(self, game: FarkleGame) -> tuple[tuple[int, ...], bool]:
        me, opp = game.totals[game.seat], game.best_opponent_total()
        if game.last_round or self.spec.name == "optimal-win":
            options = _legal_options(game, advise(
                game.roll, turn_points=game.turn_points, me=me, opp=opp, target=self.target,
                rules=self.rules))
        else:
            options = []
            for keep, pts in legal_setasides(self.rules, game.roll):
                tp = game.turn_points + pts
                left = dice_after(len(game.roll), len(keep))
                bank_v, roll_v = self._solution.turn_values(me, opp, tp)
                if self.rules.can_bank(tp, left):
                    options.append((float(bank_v), pts, left, 1, keep, "bank"))
                options.append((float(roll_v[left]), pts, left, 0, keep, "roll"))
            options.sort(key=lambda o: (-o[0], -o[1], -o[2], -o[3]))
            options = [Choice(o[4], o[1], o[5], o[2], o[0], 0.0) for o in options]
        top = options[0]
        return top.keep, top.action == "bank"


def _legal_options(game: FarkleGame, adv: FarkleAdvice) -> list[Choice]:
    """``advise``'s options that the rules allow now (its bank options ignore the house
    rules on banking), best first, losses against the best of them."""
    opts = [o for o in adv.options
            if o.action == "roll" or game.rules.can_bank(game.turn_points + o.points,
                                                         dice_after(len(game.roll),
                                                                    len(o.keep)))]
    best = opts[0].value
    return [Choice(o.keep, o.points, o.action, o.dice, o.value,
                   0.0 if best - o.value <= TIE else best - o.value) for o in opts]


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
        self.target = check_target(target)
        if not 0 <= first_seat < n:
            raise UserError(f"the first seat must be 0 to {n - 1}, not {first_seat}")
        self.first_seat = first_seat
        self.dice = dice
        self.computers = {s: _Computer(p.policy, self.rules, self.target, n)
                          for s, p in enumerate(self.players) if not p.human}
        self.totals = [0] * n
        self.streaks = [0] * n
        self.losses = [0.0] * n  # the coach's sum of losses per seat
        self.events: list[Event] = []
        self.turns: list[dict] = []
        self.seat = first_seat
        self.trigger: int | None = None
        self.phase = "new"
        self.roll: list[int] = []
        self.turn_points = 0
        self._dice_left = HOT_DICE
        self.coach_unit: str | None = None
        self.coach_note: str | None = None
        self._coach = coach
        self._advice: Advice | None = None
        self._kept: tuple[int, ...] = ()
        self._record: dict = {}

    # -- set-up

    def start(self) -> None:
        """Solve or load the tables the computer and the coach need (exact policies can
        take seconds the first time), check that the coach can judge under these rules,
        then deal the first roll."""
        for c in self.computers.values():
            c.prepare()
        if self._coach:
            self._prepare_coach()
        self._begin_turn()

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
        return self._dice_left

    @property
    def last_round(self) -> bool:
        """True in the last round (some seat banked the target, ``last-round`` ending)."""
        return self.trigger is not None

    @property
    def winners(self) -> list[int]:
        return winners(self.totals) if self.phase == "over" else []

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
        return self.phase == "bank-or-roll" and self.rules.can_bank(self.turn_points,
                                                                    self._dice_left)

    def bank_refusal(self) -> str | None:
        """Why banking is not allowed now (None: it is)."""
        if self.rules.can_bank(self.turn_points, self._dice_left):
            return None
        if self._dice_left == HOT_DICE and self.rules.hot_dice == "must-roll":
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
            try:
                ranked = self._coach_advice(self.coach_unit, self.roll, self.turn_points, me,
                                            opp, self.streaks[self.seat],
                                            0 if other is None else self.streaks[other])
            except UserError as exc:  # a position the solvers do not take: no more advice
                self.coach_unit, self.coach_note = None, str(exc)
                return None
            self._advice = Advice(self.coach_unit, _legal_options(self, ranked))
        if self.phase == "set-aside":
            return self._advice
        mine = [o for o in self._advice.options if o.keep == tuple(sorted(self._kept))]
        best = self._advice.options[0].value
        return Advice(self.coach_unit, [Choice(o.keep, o.points, o.action, o.dice, o.value,
                                               0.0 if best - o.value <= TIE
                                               else best - o.value) for o in mine])

    # -- decisions

    def set_aside(self, faces) -> None:
        """Set aside these dice of the roll (a human's decision); ``IllegalMove`` with the
        reason if the rules do not allow it."""
        self._expect("set-aside")
        faces = [int(f) for f in faces]
        reason = self.setaside_refusal(faces)
        if reason:
            raise IllegalMove(reason)
        if self._coach:
            self.advice()  # judged against the position before the dice go aside
        self._apply_setaside(tuple(faces))
        self.phase = "bank-or-roll"

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
        self._bank()

    def roll_on(self) -> None:
        """Roll the dice left (a human's decision)."""
        self._expect("bank-or-roll")
        self._judge("roll")
        self._roll()

    def step(self) -> None:
        """Play the computer's next decision (set-aside, then bank or roll)."""
        self._expect("computer")
        keep, banks = self.computers[self.seat].decide(self)
        self._apply_setaside(keep)
        if banks:
            self._bank()
        else:
            self._roll()

    # -- the rules

    def _begin_turn(self) -> None:
        self.turn_points = 0
        self._dice_left = HOT_DICE
        self._record = {"seat": self.seat, "rolls": [], "keeps": []}
        self._emit("turn", totals=list(self.totals), last_round=self.last_round)
        self._roll()

    def _roll(self) -> None:
        self.roll = self.dice.roll(self._dice_left)
        self._advice = None
        self._record["rolls"].append(list(self.roll))
        self._emit("roll", dice=list(self.roll), turn_points=self.turn_points)
        if not self.legal_setasides():
            self._emit("bust", message=TURN_LOST, lost=self.turn_points)
            self.turn_points = 0
            self.streaks[self.seat] += 1
            if self.streaks[self.seat] == PENALTY_STREAK:
                self.streaks[self.seat] = 0
                if self.rules.farkle_penalty:
                    self.totals[self.seat] -= self.rules.farkle_penalty
                    self._emit("penalty", points=self.rules.farkle_penalty,
                               total=self.totals[self.seat])
            self._record["end"] = "bust"
            self._end_turn()
            return
        self.phase = "set-aside" if self.player.human else "computer"

    def _apply_setaside(self, keep: tuple[int, ...]) -> None:
        pts = setaside_points(self.rules, keep)
        rolled = len(self.roll)
        self._kept = keep
        self.turn_points += pts
        self._dice_left = dice_after(rolled, len(keep))
        self._record["keeps"].append(list(keep))
        self._emit("set-aside", dice=list(keep), points=pts, turn_points=self.turn_points,
                   dice_left=self._dice_left)
        if len(keep) == rolled:
            self._emit("hot-dice", message=HOT_DICE_MESSAGE)

    def _judge(self, action: str) -> None:
        adv = self.advice()
        if adv is None:
            return
        mine = adv.find(self._kept, action)
        if mine is None:  # cannot happen: every legal decision is an option
            raise AssertionError(f"no option {self._kept} {action}")
        best = self._advice.options[0]  # the best of the whole decision
        self.losses[self.seat] += mine.loss
        self._emit("cost", unit=adv.unit, loss=mine.loss, value=mine.value,
                   best=(best.keep, best.action, best.dice), best_value=best.value)

    def _bank(self) -> None:
        self.totals[self.seat] += self.turn_points
        self.streaks[self.seat] = 0
        self._emit("bank", points=self.turn_points, total=self.totals[self.seat])
        self._record["end"] = "bank"
        self._end_turn()

    def _end_turn(self) -> None:
        self.turns.append(self._record)
        self._record = {}
        self._advice = None
        n = len(self.players)
        if self.trigger is None and self.totals[self.seat] >= self.target:
            self.trigger = self.seat
            if self.rules.ending_code == FIRST_TO_BANK:
                return self._game_over()
            if n > 1:
                self._emit("last-round", message=LAST_ROUND_MESSAGE)
        self.seat = (self.seat + 1) % n
        if self.seat == self.trigger:
            return self._game_over()
        self._begin_turn()

    def _game_over(self) -> None:
        self.phase = "over"
        self.roll = []
        self.events.append(Event("game-over", None, {"totals": list(self.totals),
                                                     "winners": winners(self.totals)}))
