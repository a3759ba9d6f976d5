"""Gymnasium environments of Farkle: one turn, and a solitaire game to a target (layer 3).

**Actions.** A roll of ``n`` dice allows the options of its class in the rules model
(:func:`dicelab.farkle.rules.set_asides`): every distinct legal set-aside as (points,
dice left to roll), most points first, then most dice left (distinct subsets of the
dice with the same points and dice left are one option: they lead to the same game).
Action ``2 k + b`` sets aside option ``k`` of the roll, then banks (``b = 1``) or rolls
the dice left (``b = 0``; six after hot dice). :data:`FarkleActions.n_actions` is twice
the most options any roll has (30 under the presets). The mask allows exactly the legal
ones: ``k`` below the roll's option count, and a bank only where the rules allow it (a
minimum to bank, hot dice that must roll on). ``info["options"]`` lists the roll's
options as (points, dice left).

**Observation** (int64): the roll's face counts (faces 1..6), the dice rolled, the turn
points set aside before this roll; :class:`FarkleSoloEnv` adds the banked total and the
turns lost in a row.

**The yardstick** (``yardstick=True``): ``info["yardstick"]["values"][a]`` is the exact
expected return from this decision on (the sum of the rewards still to come, this step's
included) if action ``a`` is taken and the game is then played optimally (-inf for
an illegal action): ``max-ev``'s expected turn points for a turn, minus ``fastest``'s
expected turns still to play (this one included) for the solitaire game. After a step,
``info["loss"]`` is the best value minus the value of the action taken.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dicelab import dice
from dicelab.config import MAX_ROUNDS, MAX_TURN_ROLLS
from dicelab.errors import UserError, worded_for
from dicelab.farkle.policy import State
from dicelab.farkle.referee import GeneratorDice, Referee
from dicelab.farkle.rules import (
    HOT_DICE,
    POINT_UNIT,
    FarkleRules,
    load_rules,
    set_asides,
)
from dicelab.rl.common import (
    NOT_STARTED,
    CurrentMask,
    check_action,
    check_flag,
    check_target_argument,
    game_over_text,
    loss_of,
    masked_discrete,
    masked_space,
    require_gymnasium,
    reset_needed,
    yardstick_info,
)
from dicelab.text import counted

gym = require_gymnasium()

#: Observation entries of a turn: face counts 1..6, dice rolled, turn points.
TURN_OBS = 8


class FarkleActions:
    """The action encoding of a rule set (see the module docstring)."""

    def __init__(self, rules: FarkleRules):
        self.rules = rules
        self.sa = set_asides(rules)
        self.max_options = int(np.diff(self.sa.option_start).max())
        self.n_actions = 2 * self.max_options

    def roll(self, rng: np.random.Generator, n: int) -> int:
        """A roll of ``n`` dice from ``rng``: its global multiset rank."""
        return dice.rank_of_dice(sorted(rng.integers(1, dice.FACES + 1, size=n).tolist()))

    def options(self, rank: int) -> range:
        """The model's option indices of roll ``rank`` (empty for a roll that scores nothing)."""
        c = int(self.sa.roll_class[rank])
        if c < 0:
            return range(0)
        return range(int(self.sa.option_start[c]), int(self.sa.option_start[c + 1]))

    def option_list(self, rank: int) -> list[tuple[int, int]]:
        """(points, dice left) of every option of roll ``rank``, in action order."""
        return [(int(self.sa.points[j]) * POINT_UNIT, int(self.sa.dice[j]))
                for j in self.options(rank)]

    def mask(self, rank: int, turn_points: int) -> np.ndarray:
        """The legal actions (int8) after roll ``rank`` with ``turn_points`` set aside."""
        m = np.zeros(self.n_actions, dtype=np.int8)
        for k, j in enumerate(self.options(rank)):
            m[2 * k] = 1
            left = int(self.sa.dice[j])
            m[2 * k + 1] = self.rules.can_bank(turn_points + int(self.sa.points[j]) * POINT_UNIT,
                                               left)
        return m

    def decode(self, rank: int, action: int) -> tuple[int, int, bool]:
        """(points added, dice left, bank?) of a legal ``action`` after roll ``rank``."""
        j = self.options(rank)[action // 2]
        return int(self.sa.points[j]) * POINT_UNIT, int(self.sa.dice[j]), bool(action % 2)

    def values(self, rank: int, turn_points: int, mask: np.ndarray, value) -> np.ndarray:
        """Each legal action's value from ``value(tp) -> (bank value, roll values by
        dice)`` at the turn points after its set-aside; -inf where illegal."""
        out = np.full(self.n_actions, -np.inf)
        for k, j in enumerate(self.options(rank)):
            tp = turn_points + int(self.sa.points[j]) * POINT_UNIT
            bank, roll = value(tp)
            out[2 * k] = roll[int(self.sa.dice[j])]
            if mask[2 * k + 1]:
                out[2 * k + 1] = bank
        return out

    def observation(self, rank: int, turn_points: int, extra=()) -> np.ndarray:
        counts = dice.COUNTS[rank]
        return np.array([*counts[1:], int(counts.sum()), turn_points, *extra], dtype=np.int64)


def check_rules(rules, ending) -> FarkleRules:
    """Farkle rules as on the command line: a preset name, a TOML file, or rules; an
    ending name overrides the table's."""
    if rules is not None and not isinstance(rules, str | FarkleRules):
        raise UserError(f"rules must be a preset name, a .toml path or FarkleRules, not "
                        f"{rules!r}")
    table = load_rules(rules)
    with worded_for("ending"):  # "ending must be ...", as the constructors name it
        return table.with_ending(ending)


#: FarkleTurn's referee plays one turn of a game no total can end.
_NO_TARGET = 2**62


def new_referee(rules: FarkleRules, seats: int, target: int, rng: np.random.Generator,
                hold: bool = False) -> Referee:
    """A started :class:`~dicelab.farkle.referee.Referee` rolling from ``rng``: the game
    the environments play (``hold``: a finished turn waits for ``begin_turn``)."""
    return Referee(seats, rules=rules, target=target, dice=GeneratorDice(rng),
                   hold=hold).start()


def roll_rank(ref: Referee) -> int:
    """The global multiset rank of the referee's current roll."""
    return dice.rank_of_dice(ref.sorted_roll)


def capped_reason(ref: Referee) -> str:
    """Which of the simulation's caps stopped the referee's capped game."""
    if ref.turns and ref.turns[-1].get("end") == "capped":
        return f"a turn reached the cap of {MAX_TURN_ROLLS:,} rolls"
    return f"the game reached the cap of {MAX_ROUNDS:,} rounds"


def play_action(actions: FarkleActions, ref: Referee, action: int) -> None:
    """Play a legal ``action`` on the referee: set aside its option of the roll (the first
    set-aside with its points and dice left: they lead to the same game), then bank or
    roll on."""
    points, left, bank = actions.decode(roll_rank(ref), action)
    option = next(o for o in ref.options() if (o.points, o.dice_left) == (points, left))
    ref.set_aside(option.keep)
    if bank:
        ref.bank()
    else:
        ref.roll_on()


class _FarkleEnv(CurrentMask, gym.Env):
    """A single-seat Farkle game on the referee, a decision at a time: the roll, the turn
    points, the mask (shared)."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, rules, ending, yardstick, render_mode, n_extra: int, low: int = 0):
        self.rules = check_rules(rules, ending)
        self.yardstick = check_flag("yardstick", yardstick)
        if render_mode not in (None, "ansi"):
            raise UserError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.actions = FarkleActions(self.rules)
        self.action_space = masked_discrete(self.actions.n_actions, self.action_masks)
        self.observation_space = masked_space(TURN_OBS + n_extra, self.actions.n_actions, low)
        self._ref: Referee | None = None
        self._rank = -1
        self._tp = 0
        self._done = True
        self._mask = np.zeros(self.actions.n_actions, dtype=np.int8)
        self._stick: dict | None = None

    # -- subclasses: the extra observation, the exact values, what a step is worth
    def _extra(self) -> tuple:
        return ()

    def _extra_words(self) -> str:
        """What :meth:`render` says of the observation's extra entries (:meth:`_extra`)."""
        return ""

    def _value(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _outcome(self) -> tuple[float, bool, bool]:  # pragma: no cover - abstract
        """(reward, terminated, truncated) of the step just played on the referee."""
        raise NotImplementedError

    def _game_over(self) -> str:  # pragma: no cover - abstract
        """What ``render()`` shows once the episode has ended."""
        raise NotImplementedError

    def decision_state(self) -> State:
        """The decision the agent faces, as a dicelab policy sees it
        (:class:`~dicelab.farkle.policy.State`)."""
        if self._ref is None:
            raise reset_needed()
        return self._ref.state()

    # -- the shared decision
    def _read(self) -> None:
        """The referee's roll and turn points, when a decision waits."""
        if self._ref.phase == "decide":
            self._rank = roll_rank(self._ref)
            self._tp = self._ref.turn_points

    def _obs(self) -> dict:
        self._mask = np.zeros(self.actions.n_actions, dtype=np.int8) if self._done \
            else self.actions.mask(self._rank, self._tp)
        return {"observation": self.actions.observation(self._rank, self._tp, self._extra()),
                "action_mask": self._mask.copy()}

    def _info(self, **more) -> dict:
        info = {"action_mask": self._mask.copy(),
                "options": [] if self._done else self.actions.option_list(self._rank), **more}
        self._stick = None
        if self.yardstick and not self._done:
            self._stick = yardstick_info(
                self.actions.values(self._rank, self._tp, self._mask, self._value()),
                self._unit)
            info["yardstick"] = self._stick
        return info

    def step(self, action):
        if self._ref is None:
            raise reset_needed()
        if self._done:
            raise reset_needed(over=True)
        a = check_action(action, self._mask)
        loss = loss_of(self._stick, a)
        play_action(self.actions, self._ref, a)
        reward, terminated, truncated = self._outcome()
        self._done = terminated or truncated
        self._read()
        obs = self._obs()
        more = {} if loss is None else {"loss": loss}
        return obs, reward, terminated, truncated, self._info(**more)

    def render(self):
        if self.render_mode != "ansi":
            return None
        if self._ref is None:
            return NOT_STARTED
        if self._done:
            return self._game_over()
        faces = dice.dice_of_rank(self._rank)
        return f"roll {faces} turn points {self._tp}{self._extra_words()}"


class FarkleTurnEnv(_FarkleEnv):
    """One Farkle turn; the reward is the turn's banked points (0 if the turn is lost).

    A turn whose first roll scores nothing has no decision, so ``reset`` plays it as lost
    and rolls a new turn; ``info["skipped_turns"]`` counts such turns (the mean turn score
    is the sum of the returns over the episodes plus the skipped turns). With
    ``yardstick=True`` the values are ``max-ev``'s expected final turn points (rules with a
    farkle penalty are refused: a turn alone cannot count the penalty).
    """

    _unit = "expected turn points (max-ev)"

    def __init__(self, rules: str | FarkleRules | None = None, ending: str | None = None,
                 yardstick: bool = False, render_mode: str | None = None):
        super().__init__(rules, ending, yardstick, render_mode, 0)
        if self.yardstick:
            if self.rules.farkle_penalty:
                raise UserError(f"rules '{self.rules.name}' have a farkle-penalty, which one "
                                "turn cannot count: the FarkleTurn yardstick refuses them "
                                "(FarkleSolo's counts it)")
            from dicelab.farkle.solitaire import max_ev_capped

            self._solution = max_ev_capped(self.rules)

    def _value(self):
        return lambda tp: self._solution.turn_values(tp, 0)

    def _outcome(self):
        ref = self._ref
        if ref.phase == "over":  # capped: the turn rolled MAX_TURN_ROLLS times
            return 0.0, False, True
        if ref.phase != "turn":
            return 0.0, False, False
        banked = ref.turns[-1]["end"] == "bank"
        return (float(ref.totals[0] - self._before) if banked else 0.0), True, False

    def _game_over(self):
        ref = self._ref
        if ref.capped:
            return game_over_text([ref.turn_points], truncated=capped_reason(ref),
                                  what="turn", label="turn points")
        banked = ref.turns[-1]["end"] == "bank"
        return game_over_text([ref.totals[0] - self._before if banked else 0],
                              ["(banked)" if banked else "(lost: a roll scored nothing)"],
                              what="turn", label="turn score")

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._ref = ref = new_referee(self.rules, 1, _NO_TARGET, self.np_random, hold=True)
        skipped = 0
        while ref.phase == "turn":  # the first roll scored nothing
            skipped += 1
            ref.begin_turn()
        self._before = ref.totals[0]  # a skipped turn may have cost a farkle penalty
        self._done = False
        self._read()
        obs = self._obs()
        return obs, self._info(skipped_turns=skipped)


class FarkleSoloEnv(_FarkleEnv):
    """A solitaire Farkle game: turns until the banked total reaches ``target``; the
    reward is -1 at the end of every turn (banked or lost), so the return is minus the
    number of turns. A roll of six dice that scores nothing at a turn's start is a lost
    turn (-1) and the next turn's roll follows at once. Under a farkle penalty the
    :data:`~dicelab.farkle.rules.PENALTY_STREAK`-th lost turn in a row costs the penalty
    (the total may go below zero, as in the simulation); the turns lost in a row count
    from 0 to ``PENALTY_STREAK - 1``, as the referee keeps them. A game the simulation
    would cap (:data:`~dicelab.config.MAX_ROUNDS` turns, or a turn of
    :data:`~dicelab.config.MAX_TURN_ROLLS` rolls) is truncated. With ``yardstick=True``
    the values are minus ``fastest``'s expected turns still to play, this one included
    (totals below the solver's floor are read at the floor).
    """

    _unit = "minus the expected turns still to play (fastest)"

    def __init__(self, rules: str | FarkleRules | None = None, target: int | None = None,
                 ending: str | None = None, yardstick: bool = False,
                 render_mode: str | None = None):
        super().__init__(rules, ending, yardstick, render_mode, 2, low=-2**40)
        self.target = check_target_argument(target)
        self.turns = 0
        if self.yardstick:
            from dicelab.farkle.solitaire import fastest_solution

            self._solution = fastest_solution(self.rules, self.target)

    def _extra(self):
        ref = self._ref
        return (0, 0) if ref is None else (ref.totals[0], ref.lost[0])

    def _extra_words(self):
        total, lost = self._extra()
        return f", total {total}, lost turns in a row {lost}"

    def _outcome(self):
        ref = self._ref
        finished = len(ref.turns) - self.turns
        self.turns = len(ref.turns)
        over = ref.phase == "over"
        # -finished as an int first: -float(0) would be a reward of -0.0
        return float(-finished), over and not ref.capped, over and ref.capped

    def _game_over(self):
        ref = self._ref
        return game_over_text(
            [ref.totals[0]], [f"after {counted(self.turns, 'turn')} (target {self.target})"],
            truncated=capped_reason(ref) if ref.capped else None)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._ref = ref = new_referee(self.rules, 1, self.target, self.np_random)
        self.turns = len(ref.turns)  # turns lost on their first roll
        self._done = False
        self._read()
        obs = self._obs()
        return obs, self._info(lost_turns_at_start=self.turns)

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        info["turns"] = self.turns
        return obs, reward, terminated, truncated, info

    def _value(self):
        ref = self._ref
        return fastest_values(self._solution, self.rules, ref.totals[0], ref.lost[0])


def fastest_values(sol, rules: FarkleRules, total: int, lost_in_a_row: int):
    """``tp -> (bank value, roll values by dice)`` of a ``fastest`` turn started at
    ``total`` after ``lost_in_a_row`` lost turns: minus the expected turns still to play,
    this turn included, from the solution's value table (each roll's options read at the
    rows they reach, the best taken, a lost turn leading where the game goes)."""
    from dicelab.farkle.engine.model import model

    m = model(rules)
    floor = sol.floor_points // POINT_UNIT
    big = sol.target // POINT_UNIT + floor
    u = min(max(total // POINT_UNIT + floor, 0), big - 1)
    k = sol.turns.shape[0]
    s = min(lost_in_a_row, k - 1)
    turns = sol.turns
    if k == 1:
        lost = float(turns[0, u])
    elif s < k - 1:
        lost = float(turns[s + 1, u])
    else:
        lost = float(turns[0, max(u - m.penalty, 0)])
    v = sol.value[s, u]
    rows = v.shape[0]
    starts = m.option_start[:-1]
    memo: dict[int, tuple[float, np.ndarray]] = {}

    def value(tp: int) -> tuple[float, np.ndarray]:
        if tp in memo:
            return memo[tp]
        p = tp // POINT_UNIT
        bank = -(1.0 + (float(turns[0, u + p]) if u + p < big else 0.0))
        after = v[np.minimum(p + m.points, rows - 1), m.dice]  # each option's turns to come
        best = np.minimum.reduceat(after, starts)  # the best option of each roll class
        roll = np.zeros(7)
        for n in range(1, HOT_DICE + 1):
            lo, hi = int(m.class_start[n]), int(m.class_start[n + 1])
            roll[n] = -(1.0 + float(m.bust[n]) * lost
                        + float(np.dot(m.class_prob[lo:hi], best[lo:hi])))
        memo[tp] = (bank, roll)
        return memo[tp]

    return value
