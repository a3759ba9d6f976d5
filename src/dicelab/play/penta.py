"""A game of Penta played decision by decision (RULES.md §1; no I/O).

:class:`PentaGame` holds the players (humans, and at most one computer playing a Penta
policy), their scorecards (:class:`dicelab.penta.policies.Scorecard`) and the turn in
progress. Every player fills their own card in 13 turns, in seat order. A turn has up to
three rolls; the game waits for one thing at a time (:attr:`PentaGame.phase`):

* ``"keep"``: a human with rerolls left keeps dice and rerolls the rest (:meth:`keep`),
  or stops to score (:meth:`stop`), or scores a box at once (:meth:`score`);
* ``"box"``: a human chooses the box for the roll (:meth:`score`; :meth:`back` returns
  to ``keep`` while rerolls are left). :meth:`default_box` is the computer's choice,
  what the app writes when the player picks nothing;
* ``"computer"``: the computer's next decision (:meth:`step`);
* ``"over"``: every card is full (:attr:`winners`).

Scoring is the Penta model's, never rewritten here: the points of each box, the forced
joker order and the bonuses come from :func:`dicelab.penta.scoring.box_scores` under
the rule set, the totals from :class:`~dicelab.penta.policies.Scorecard`; the computer's
decisions and the coach's values from :func:`dicelab.penta.policies.rank_options` (the first
option is what a policy plays; the coach judges with ``optimal``: expected final score);
a computer playing ``optimal:OBJECTIVE`` or ``penta-win`` decides as the simulation kernel
does (:class:`~dicelab.penta.objective_play.OnlinePolicy`, shown the table's cards).

Events (kinds): ``turn``, ``roll``, ``keep``, ``sacrifice``, ``score``, ``cost``,
``game-over``. Finished turns are in :attr:`turns` in the game-log form
``{"seat", "rolls", "keeps", "box"}``: each roll lists all five dice showing (the kept
dice first), ``keeps`` has one entry fewer than ``rolls``, ``box`` is the box's
canonical name (:data:`dicelab.penta.rules.BOX_NAMES`: ``large-straight``); the game
shows it by its title (:func:`box_title`).
"""

from __future__ import annotations

from dicelab.errors import UserError
from dicelab.penta.builtin import family_of
from dicelab.penta.policies import Option, Scorecard, rank_options
from dicelab.penta.rules import (
    BOX_NAMES,
    N_BOXES,
    N_DICE,
    PENTA_BOX,
    REROLLS,
    UPPER_BOXES,
    UPPER_TARGET,
    RuleSet,
    get_rules,
)
from dicelab.penta.scoring import box_scores
from dicelab.penta.tables import roll_index
from dicelab.play import (
    YOU,
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
from dicelab.text import is_whole

#: The game's message when no open box scores (RULES.md §1, seed 000), to the human
#: playing alone; any other seat is named (:func:`sacrifice_message`).
SACRIFICE_MESSAGE = "No open box scores: you must sacrifice one"
#: The policy of the computer's choice when no computer plays (RULES.md §1).
DEFAULT_CHOICE_POLICY = "optimal"
#: Short names a player may type for a box.
BOX_ALIASES = {"3k": 6, "4k": 7, "fh": 8, "ss": 9, "ls": 10}


def box_title(box: int | str) -> str:
    """A box's title as the card shows it: ``"Three of a kind"``, ``"Chance"``.

    >>> box_title("full-house"), box_title(0)
    ('Full house', 'Ones')
    """
    name = BOX_NAMES[box] if isinstance(box, int) else box
    return name.replace("-", " ").capitalize()


def parse_box(text: str) -> int:
    """The box a player typed: its number (1..13), name (``full-house``, ``full house``),
    a unique prefix (``ch``) or a short name (:data:`BOX_ALIASES`); ``IllegalMove`` else.

    >>> parse_box("13"), parse_box("Full house"), parse_box("ch"), parse_box("3k")
    (12, 8, 11, 6)
    """
    typed = text.strip().lower()
    key = " ".join(typed.replace("-", " ").split())  # "-" stands for a space in names only
    if not key:
        raise IllegalMove("type a box: its name or its number 1 to 13")
    if key.isascii() and key.isdigit():
        if typed == key and len(key) <= 2 and 1 <= int(key) <= N_BOXES:
            return int(key) - 1
        raise IllegalMove(f"box numbers are 1 to {N_BOXES}, not {text.strip()}")
    if key in BOX_ALIASES:
        return BOX_ALIASES[key]
    titles = [n.replace("-", " ") for n in BOX_NAMES]
    if key in titles:
        return titles.index(key)
    hits = [b for b, t in enumerate(titles) if t.startswith(key)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise IllegalMove(f"'{text.strip()}' could be {', '.join(box_title(b) for b in hits)}: "
                          "type more of the name, or the box's number")
    raise IllegalMove(f"there is no box '{text.strip()}': boxes are "
                      f"{', '.join(box_title(b) for b in range(N_BOXES))} (or 1 to 13)")


def sacrifice_message(name: str) -> str:
    """:data:`SACRIFICE_MESSAGE` on the turn of the player called ``name``: "you" for
    :data:`~dicelab.play.YOU`, the name for anyone else (a computer, one of several
    humans), as the game's other lines name them.

    >>> sacrifice_message("Computer (optimal)")
    'No open box scores: Computer (optimal) must sacrifice one'
    """
    return SACRIFICE_MESSAGE if name == YOU else \
        f"No open box scores: {name} must sacrifice one"


def table_players(humans: int, ai: str | None, names: list[str] | None = None
                  ) -> list[Player]:
    """:func:`dicelab.play.table_players` of Penta."""
    return _table_players("penta", humans, ai, names)


class PentaGame(TurnGame):
    """One game of Penta (see the module docstring).

    >>> from dicelab.play import ScriptedDice
    >>> g = PentaGame([Player("You")], dice=ScriptedDice([6, 6, 6, 6, 6] + [1] * 60))
    >>> g.start(); g.phase, g.roll, g.rolls_left
    ('keep', [6, 6, 6, 6, 6], 2)
    >>> g.score("penta"); g.cards[0].total, g.phase
    (50, 'keep')
    """

    def __init__(self, players: list[Player], *, rules: str | RuleSet | None = None,
                 dice: Dice, coach: bool = False, first_seat: int = 0) -> None:
        self.players = list(players)
        if not self.players:
            raise UserError("a Penta game needs at least one player")
        computers = [p for p in self.players if not p.human]
        self.rules = rules if isinstance(rules, RuleSet) else get_rules(rules)
        if not 0 <= first_seat < len(self.players):
            raise UserError(f"the first seat must be 0 to {len(self.players) - 1}")
        self.first_seat = first_seat
        #: each computer's policy: its decision-table ranking (``optimal``, ``greedy``),
        #: or the object asked move by move (a user's; ``optimal:OBJECTIVE`` and
        #: ``penta-win`` as the kernel decides them), from its family
        n = len(self.players)
        for p in computers:  # values that are not finite: refused before the game starts
            family_of(p.policy).check_rules(p.policy, self.rules)
        self._computer = {id(p): (family_of(p.policy).block(p.policy) or
                                  family_of(p.policy).logged(p.policy, i, n))
                          for i, p in enumerate(self.players) if not p.human}
        #: whose choice the default box is: the computer's policy's ranking, else optimal's
        first = self._computer[id(computers[0])] if computers else DEFAULT_CHOICE_POLICY
        self.choice_policy = first if isinstance(first, str) else DEFAULT_CHOICE_POLICY
        self.dice = dice
        self.cards = [Scorecard() for _ in self.players]
        self.losses = [0.0] * len(self.players)
        self.events: list[Event] = []
        self.turns: list[dict] = []
        self.seat = first_seat
        self.round = 0
        self.phase = "new"
        self.roll: list[int] = []
        self.rolls_left = REROLLS
        self.coach = coach
        self._record: dict = {}
        self._ranked: dict[tuple, list[Option]] = {}

    # -- set-up and what the game knows

    def start(self) -> None:
        """Solve or load the value tables the computer and the coach need (the first time
        a rule set is solved takes seconds), then deal the first roll."""
        self._options(self.choice_policy, Scorecard(), [1, 2, 3, 4, 6], REROLLS)
        if self.coach:
            self._options("optimal", Scorecard(), [1, 2, 3, 4, 6], REROLLS)
        self.round = 1
        self._begin_turn()

    @property
    def player(self) -> Player:
        return self.players[self.seat]

    @property
    def card(self) -> Scorecard:
        return self.cards[self.seat]

    @property
    def totals(self) -> list[int]:
        return [c.total for c in self.cards]

    @property
    def winners(self) -> list[int]:
        return winners(self.totals) if self.phase == "over" else []

    def box_scores(self) -> tuple[dict[int, int], int]:
        """({box: points} of every box the roll may go in now, the Penta bonus this roll
        earns in any of them): the rule set's scoring, forced joker order included."""
        card = self.card
        scores, bonus = box_scores(self.rules, card.mask, card.fifty, roll_index(self.roll))
        return {b: int(s) for b, s in enumerate(scores) if s >= 0}, bonus

    def must_sacrifice(self) -> bool:
        """No allowed box scores anything for this roll."""
        return all(v == 0 for v in self.box_scores()[0].values())

    def default_box(self) -> int:
        """The computer's choice of box for the roll (the app's default)."""
        return BOX_NAMES.index(self._options(self.choice_policy, self.card, self.roll, 0)[0].box)

    def advice(self) -> list[Option] | None:
        """The coach's ranking of the current human decision (``optimal``'s expected final
        score of every option, best first; at ``box``: the boxes only, losses still
        against the best option of the roll). None without the coach."""
        if not self.coach or not self.player.human or self.phase not in ("keep", "box"):
            return None
        opts = self._options("optimal", self.card, self.roll, self.rolls_left)
        return [o for o in opts if o.kind == "box"] if self.phase == "box" else opts

    def _options(self, policy: str, card: Scorecard, roll, rolls_left: int) -> list[Option]:
        key = (policy, card, tuple(sorted(roll)), rolls_left)
        if key not in self._ranked:
            self._ranked = {k: v for k, v in self._ranked.items() if k[1] == card}
            self._ranked[key] = rank_options(card, sorted(roll), rolls_left, self.rules,
                                             policy)
        return self._ranked[key]

    # -- decisions

    def keep(self, faces) -> None:
        """Keep these dice and reroll the others (all five kept: stop and score)."""
        self._expect("keep")
        faces = check_faces(faces)
        if take_from(self.roll, faces) is None:
            raise IllegalMove(missing_reason(self.roll, faces))
        if len(faces) == N_DICE:
            self.stop()
            return
        self._reroll(faces, self._judge("keep", tuple(sorted(faces))))

    def stop(self) -> None:
        """Stop rolling: choose a box for this roll."""
        self._expect("keep")
        self._enter_box()

    def back(self) -> None:
        """From the box choice back to keeping dice, while rerolls are left."""
        self._expect("box")
        if self.rolls_left == 0:
            raise IllegalMove("no rerolls left: choose a box")
        self.phase = "keep"

    def score(self, box: int | str) -> None:
        """Write the roll into ``box`` (number 0..12 or name/title as :func:`parse_box`)."""
        if self.phase not in ("keep", "box"):
            self._expect("box")
        if not (is_whole(box) or isinstance(box, str)):
            raise IllegalMove(f"a box is its number 0 to {N_BOXES - 1} or its name, not "
                              f"{box!r}")
        b = parse_box(box) if isinstance(box, str) else int(box)
        reason = self.box_refusal(b)
        if reason:
            raise IllegalMove(reason)
        self._score(b, self._judge("box", BOX_NAMES[b]))

    def box_refusal(self, b: int) -> str | None:
        """Why the roll cannot go in box ``b`` (None: it can)."""
        card = self.card
        if not 0 <= b < N_BOXES:
            return f"box numbers are 1 to {N_BOXES}"
        if card.scores[b] is not None:
            return f"{box_title(b)} is already filled ({card.scores[b]})"
        allowed, _ = self.box_scores()
        if b in allowed:
            return None
        face = self.roll[0]
        if face - 1 in allowed:
            where = f"{box_title(face - 1)}, the upper box of its face, while it is open"
        else:
            where = "an open lower box while there is one"
        return f"this Penta is a joker ({self.rules.name} rules): it must go in {where}"

    def step(self) -> None:
        """Play the computer's next decision (keep and reroll, or a box)."""
        self._expect("computer")
        plays = self._computer[id(self.player)]
        if not isinstance(plays, str):  # asked move by move
            if hasattr(plays, "observe"):  # it plays against the table's cards
                plays.observe(self.cards, self.seat)
            self._user_step(plays)
            return
        top = self._options(plays, self.card, self.roll, self.rolls_left)[0]
        if top.kind == "keep":
            self._reroll(list(top.keep))
        else:
            self._enter_box()
            self._score(BOX_NAMES.index(top.box))

    def _user_step(self, policy) -> None:
        """A policy object's decision (:func:`dicelab.penta.policy.ask` checks it):
        keeping all five dice ends the rolling and asks for the box."""
        from dicelab.penta.policy import State, ask

        roll = tuple(sorted(self.roll))
        answer = ask(policy, State(self.card, roll, self.rolls_left, self.rules)) \
            if self.rolls_left else None
        if isinstance(answer, tuple) and len(answer) < N_DICE:
            self._reroll(list(answer))
            return
        box = ask(policy, State(self.card, roll, 0, self.rules))
        self._enter_box()
        self._score(BOX_NAMES.index(box))

    # -- the rules

    def _begin_turn(self) -> None:
        self.rolls_left = REROLLS
        self._record = {"seat": self.seat, "rolls": [], "keeps": []}
        self._emit("turn", round=self.round, total=self.card.total)
        self.roll = self.dice.roll(N_DICE)
        self._after_roll()

    def _reroll(self, kept: list[int], cost: dict | None = None) -> None:
        self._record["keeps"].append(sorted(kept))
        self._emit("keep", dice=sorted(kept))
        if cost is not None:
            self._emit("cost", **cost)
        self.roll = sorted(kept) + self.dice.roll(N_DICE - len(kept))
        self.rolls_left -= 1
        self._after_roll()

    def _after_roll(self) -> None:
        self._record["rolls"].append(list(self.roll))
        self._emit("roll", dice=list(self.roll), rolls_left=self.rolls_left)
        if not self.player.human:
            self.phase = "computer"
        elif self.rolls_left > 0:
            self.phase = "keep"
        else:
            self._enter_box()

    def _enter_box(self) -> None:
        if self.player.human:
            self.phase = "box"
        if self.must_sacrifice():
            self._emit("sacrifice", message=sacrifice_message(self.player.name))

    def _judge(self, kind: str, what) -> dict | None:
        """The coach's verdict on a human decision (the ``cost`` event's data), counted in
        :attr:`losses`; None without the coach."""
        if not self.coach or not self.player.human:
            return None
        opts = self._options("optimal", self.card, self.roll, self.rolls_left)
        mine = next(o for o in opts if o.kind == kind
                    and (o.keep if kind == "keep" else o.box) == what)
        self.losses[self.seat] += mine.loss
        best = opts[0]
        return {"loss": mine.loss, "value": mine.expected_final_score,
                "best": (best.kind, best.keep if best.kind == "keep" else best.box),
                "best_value": best.expected_final_score}

    def _score(self, b: int, cost: dict | None = None) -> None:
        card = self.card
        allowed, bonus = self.box_scores()
        points = allowed[b]
        scores = list(card.scores)
        scores[b] = points
        new = Scorecard(tuple(scores), card.penta_bonuses + (1 if bonus else 0))
        upper_bonus = b < UPPER_BOXES and card.upper_sum < UPPER_TARGET <= new.upper_sum
        self.cards[self.seat] = new
        self._record["box"] = BOX_NAMES[b]
        self._emit("score", box=b, points=points, bonus=bonus, upper_bonus=upper_bonus,
                   total=new.total, penta=b == PENTA_BOX)
        if cost is not None:
            self._emit("cost", **cost)
        self.turns.append(self._record)
        self._record = {}
        self._next_turn()

    def _next_turn(self) -> None:
        n = len(self.players)
        self.seat = (self.seat + 1) % n
        if self.seat == self.first_seat:
            self.round += 1
        if self.round > N_BOXES:
            self.phase = "over"
            self.roll = []
            self.events.append(Event("game-over", None, {"totals": self.totals,
                                                         "winners": winners(self.totals)}))
            return
        self._begin_turn()
