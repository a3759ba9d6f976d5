"""The Gymnasium environment of Penta solitaire (layer 3).

**Actions** (45): ``0..31`` keep the dice of the sorted roll whose positions are the set
bits of the action and reroll the rest (legal with a reroll left; the same multiset kept
is one action: among equal faces the leftmost are kept; keeping all five is scoring
now, so it is no keep); ``32 + b`` writes the roll into box ``b``
(:data:`dicelab.penta.rules.BOX_NAMES` order), legal where the rules allow it (an open
box; a joker's forced order).

**Observation** (int64, 21): the 13 boxes' scores (-1 open), the Penta bonuses earned,
the roll's five faces sorted, the rerolls left (2, 1, 0) and the card's total.

**Reward**: the points the card's total gains when a box is filled (the box, the upper
bonus when it completes the upper section, a Penta bonus), so the return is the final
score.

**The yardstick** (``yardstick=True``): ``info["yardstick"]["values"][a]`` is the exact
expected return still to come after action ``a`` with optimal play from then on (the
``optimal`` solver's table; add the card's total for the expected final score, as
``dicelab advise penta`` reports it); -inf where illegal.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dicelab.errors import UserError
from dicelab.penta.policies import Scorecard, rank_options
from dicelab.penta.referee import fill
from dicelab.penta.rules import BOX_NAMES, FULL_CARD, N_BOXES, N_DICE, REROLLS, RuleSet, get_rules
from dicelab.penta.scoring import box_scores
from dicelab.penta.tables import roll_index
from dicelab.rl.common import (
    NOT_STARTED,
    CurrentMask,
    check_action,
    check_flag,
    game_over_text,
    loss_of,
    masked_discrete,
    masked_space,
    require_gymnasium,
    reset_needed,
    yardstick_info,
)
from dicelab.rl.kernels import P_BOXES, P_KEEPS, canonical_keep

gym = require_gymnasium()

#: Keep actions (position masks of the sorted roll), then one action per box.
N_KEEPS = P_KEEPS
N_ACTIONS = N_KEEPS + N_BOXES
assert N_KEEPS == 1 << N_DICE and P_BOXES == N_BOXES
ALL_KEPT = N_KEEPS - 1
#: Observation entries.
N_OBS = N_BOXES + 1 + N_DICE + 2
#: Where the roll's faces start in an observation (the rerolls left follow them).
ROLL_AT = N_BOXES + 1


def check_penta_rules(rules) -> RuleSet:
    if isinstance(rules, RuleSet):
        return rules
    if rules is not None and not isinstance(rules, str):
        raise UserError(f"Penta rules must be a rule set name, not {rules!r}")
    return get_rules(rules)


def keep_action(faces: list[int], kept: tuple[int, ...]) -> int:
    """The keep action of the multiset ``kept`` from the sorted ``faces``."""
    need = list(kept)
    a = 0
    for i, f in enumerate(faces):
        if f in need:
            need.remove(f)
            a |= 1 << i
    if need:
        raise ValueError(f"{kept} is not part of the roll {faces}")
    return a


class PentaCard:
    """One seat's game of Penta: card, roll, rerolls left; the mask, the moves, the
    yardstick (shared by the Gymnasium and PettingZoo environments)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.scores: list[int | None] = [None] * N_BOXES
        self.bonuses = 0
        self.faces = [1] * N_DICE
        self.rolls_left = REROLLS

    @property
    def card(self) -> Scorecard:
        return Scorecard(tuple(self.scores), self.bonuses)

    @property
    def full(self) -> bool:
        return self.card.mask == FULL_CARD

    def new_turn(self, rng: np.random.Generator) -> None:
        self.faces = sorted(rng.integers(1, 7, size=N_DICE).tolist())
        self.rolls_left = REROLLS

    def box_scores(self) -> tuple[np.ndarray, int]:
        card = self.card
        return box_scores(self.rules, card.mask, card.fifty, roll_index(self.faces))

    def mask(self) -> np.ndarray:
        m = np.zeros(N_ACTIONS, dtype=np.int8)
        if self.full:
            return m
        if self.rolls_left > 0:
            for k in range(ALL_KEPT):
                m[k] = canonical_keep(self.faces, k)
        m[N_KEEPS:] = self.box_scores()[0] >= 0
        return m

    def observation(self) -> np.ndarray:
        return np.array([*(-1 if s is None else s for s in self.scores), self.bonuses,
                         *self.faces, self.rolls_left, self.card.total], dtype=np.int64)

    def play(self, action: int, rng: np.random.Generator) -> int:
        """Play a legal ``action``; returns the points the total gained."""
        if action < N_KEEPS:
            kept = [f for i, f in enumerate(self.faces) if (action >> i) & 1]
            fresh = rng.integers(1, 7, size=N_DICE - len(kept)).tolist()
            self.faces = sorted(kept + fresh)
            self.rolls_left -= 1
            return 0
        before = self.card
        after = fill(before, BOX_NAMES[action - N_KEEPS], self.faces, self.rules)
        self.scores, self.bonuses = list(after.scores), after.penta_bonuses
        return after.total - before.total

    def values(self, mask: np.ndarray) -> np.ndarray:
        """The exact expected return still to come of every legal action (``optimal``)."""
        out = np.full(N_ACTIONS, -np.inf)
        card = self.card
        for o in rank_options(card, self.faces, self.rolls_left, self.rules, "optimal"):
            a = (N_KEEPS + BOX_NAMES.index(o.box) if o.kind == "box"
                 else keep_action(self.faces, o.keep))
            out[a] = o.expected_final_score - card.total
        if (np.isfinite(out) != mask.astype(bool)).any():  # the two encodings must agree
            raise AssertionError("the yardstick's options differ from the action mask")
        return out

    def describe(self) -> str:
        return (f"roll {self.faces} rerolls left {self.rolls_left} total {self.card.total} "
                f"card {self.card.scores}")

    def describe_card(self) -> str:
        """The card, once the game is over: its boxes' scores and the Penta bonuses."""
        return f"card {self.card.scores} penta bonuses {self.bonuses}"


class PentaSoloEnv(CurrentMask, gym.Env):
    """Penta solitaire: 13 turns, one box each (see the module docstring)."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"], "render_fps": 1}
    _unit = "expected points still to come (optimal)"

    def __init__(self, rules: str | RuleSet | None = None, yardstick: bool = False,
                 render_mode: str | None = None):
        self.rules = check_penta_rules(rules)
        self.yardstick = check_flag("yardstick", yardstick)
        if render_mode not in (None, "ansi"):
            raise UserError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.action_space = masked_discrete(N_ACTIONS, self.action_masks)
        self.observation_space = masked_space(N_OBS, N_ACTIONS, low=-1)
        self._game = PentaCard(self.rules)
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)
        self._done = True
        self._started = False
        self._stick: dict | None = None

    def _obs(self) -> dict:
        self._mask = self._game.mask()
        return {"observation": self._game.observation(), "action_mask": self._mask.copy()}

    def _info(self, **more) -> dict:
        info = {"action_mask": self._mask.copy(), **more}
        self._stick = None
        if self.yardstick and not self._done:
            self._stick = yardstick_info(self._game.values(self._mask), self._unit)
            info["yardstick"] = self._stick
        return info

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._game = PentaCard(self.rules)
        self._game.new_turn(self.np_random)
        self._done = False
        self._started = True
        return self._obs(), self._info()

    def step(self, action):
        if not self._started:
            raise reset_needed()
        if self._done:
            raise reset_needed(over=True)
        a = check_action(action, self._mask)
        loss = loss_of(self._stick, a)
        reward = float(self._game.play(a, self.np_random))
        if a >= N_KEEPS:
            if self._game.full:
                self._done = True
            else:
                self._game.new_turn(self.np_random)
        obs = self._obs()
        more = {} if loss is None else {"loss": loss}
        return obs, reward, self._done, False, self._info(**more)

    def render(self):
        if self.render_mode != "ansi":
            return None
        if not self._started:
            return NOT_STARTED
        if self._done:
            return game_over_text([self._game.card.total], [self._game.describe_card()])
        return self._game.describe()
