"""PettingZoo AEC environments: Farkle at 2 to 7 seats, Penta at 2 or more (layer 3).

Agents are ``player_0`` .. ``player_{n-1}``, in turn order; ``player_0`` moves first.
Actions, masks and observations of the agent to move are those of the single-agent
environments (:mod:`dicelab.rl.farkle`, :mod:`dicelab.rl.penta`); an agent not to move
sees an all-zero mask. Each observation ends with the other seats' totals, in turn order
after the observer. The mask is also in ``infos[agent]["action_mask"]``.

**Rewards** come at the end of the game: +1 for the one seat with the highest total, -1
for the others; seats tied for the highest total get 0 (a tie is never broken).

**Farkle.** Turns and rolls as in :class:`~dicelab.rl.farkle.FarkleSoloEnv`; a roll
that scores nothing passes the turn at once. ``last-round``: the first seat to bank the
target triggers one last turn for every other seat; ``first-to-bank``: the first seat to
bank the target wins at once. With two seats, ``yardstick=True`` puts into
``infos[agent]["yardstick"]`` each legal action's exact expected reward, P(win) −
P(loss), with both seats playing ``optimal-win`` from then on (the values of
``dicelab advise farkle --me --opp``, as 2 (P(win) + P(tie)/2) − 1; totals below the
solver's floor under a farkle penalty are read at the floor). With ``opponent="POLICY"``
(any Farkle policy name, e.g. ``threshold-300`` or ``ai``) the values are the mover's
best response (``optimal-win:vs=POLICY``) with the other seat playing ``POLICY`` from
then on: the win probability against that policy.

**Penta.** Every seat plays its own card, one turn each in turn order, 13 rounds.
``yardstick=True``: the values of the seat's own card (expected points still to come
under ``optimal`` solitaire play), not a win probability.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle.policy import State
from dicelab.farkle.rules import (
    MAX_SEATS,
    POINT_UNIT,
    dice_after,
)
from dicelab.resources import check_memory
from dicelab.rl.common import (
    NOT_STARTED,
    OBS_HIGH,
    check_action,
    check_flag,
    check_target_argument,
    game_over_text,
    loss_of,
    masked_discrete,
    masked_space,
    require_gymnasium,
    reset_needed,
    top_seats,
    yardstick_info,
)
from dicelab.rl.farkle import (
    TURN_OBS,
    FarkleActions,
    capped_reason,
    check_rules,
    new_referee,
    play_action,
    roll_rank,
)
from dicelab.rl.penta import N_ACTIONS as PENTA_ACTIONS
from dicelab.rl.penta import N_DICE, N_KEEPS, N_OBS, ROLL_AT, PentaCard, check_penta_rules
from dicelab.text import counted, is_whole

gym = require_gymnasium()

try:
    from pettingzoo import AECEnv
except ImportError:  # pragma: no cover - the rl extra is installed by make setup
    raise UserError("dicelab.rl.aec needs pettingzoo: pip install 'dicelab[rl]'") from None


def _check_seats(seats, low: int, high: int | None) -> int:
    if not is_whole(seats) or seats < low \
            or (high is not None and seats > high):
        top = f"to {high}" if high is not None else "or more"
        raise UserError(f"seats must be an integer {low} {top}, not {seats!r}")
    return int(seats)


def outcome_rewards(totals) -> list[float]:
    """+1 for the one highest total, -1 for the rest; 0 for seats tied at the top."""
    top = top_seats(totals)
    return [(1.0 if len(top) == 1 else 0.0) if i in top else -1.0
            for i in range(len(totals))]


class _TurnTakingEnv(AECEnv):
    """The AEC bookkeeping both games share."""

    def __init__(self, seats: int, n_obs: int, n_actions: int, render_mode, low: int):
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise UserError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.seats = seats
        self.possible_agents = [f"player_{i}" for i in range(seats)]
        self.agents = self.possible_agents[:]
        self._n_actions = n_actions
        self.observation_spaces = {a: masked_space(n_obs, n_actions, low)
                                   for a in self.possible_agents}
        self.action_spaces = {a: masked_discrete(n_actions, self.action_mask, a)
                              for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._seat = 0
        self._stick: dict | None = None
        self._over = True
        self._started = False
        self.agent_selection = self.possible_agents[0]

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _start(self, seed) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._over = False
        self._started = True

    def action_mask(self, agent) -> np.ndarray:
        """``agent``'s mask now (all 0 unless it is to move): what its action space's
        ``sample()`` draws from."""
        return self.observe(agent)["action_mask"]

    def observe(self, agent):
        if not self._started:
            raise reset_needed()
        seat = self.possible_agents.index(agent)
        mask = self._mask_of(seat) if (seat == self._seat and not self._over) \
            else np.zeros(self._n_actions, dtype=np.int8)
        return {"observation": self._observation(seat), "action_mask": mask}

    def _publish(self, loss: float | None = None, actor: int | None = None) -> None:
        """Infos after a move: every agent's mask, the mover's yardstick, the loss."""
        for i, a in enumerate(self.agents):
            mask = self._mask_of(i) if (i == self._seat and not self._over) \
                else np.zeros(self._n_actions, dtype=np.int8)
            self.infos[a] = {"action_mask": mask}
        if loss is not None and actor is not None:
            self.infos[self.possible_agents[actor]]["loss"] = loss
        self._stick = None
        if self._yardstick_on() and not self._over:
            self._stick = yardstick_info(self._values(), self._unit)
            self.infos[self.agent_selection]["yardstick"] = self._stick

    def _yardstick_on(self) -> bool:
        return False

    def _clear_rewards(self) -> None:
        # PettingZoo's clears to the int 0 (after a dead step): keep every reward a float
        self.rewards = dict.fromkeys(self.rewards, 0.0)

    def _finish(self, totals) -> None:
        self._over = True
        for a, r in zip(self.agents, outcome_rewards(totals), strict=True):
            self.rewards[a] = r
        self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()

    def step(self, action):
        if not self._started or not self.agents:  # (every agent's last step taken: over)
            raise reset_needed(over=self._started)
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = check_action(action, self._mask_of(self._seat))
        self._cumulative_rewards[agent] = 0.0
        loss = loss_of(self._stick, a)
        actor = self._seat
        self._play(a)
        self.agent_selection = self.possible_agents[self._seat]
        self._publish(loss, actor)

    def last(self, observe: bool = True):
        if not self._started or not self.agents:
            raise reset_needed(over=self._started)
        return super().last(observe)

    def render(self):
        if self.render_mode != "ansi":
            return None
        if not self._started:
            return NOT_STARTED
        return self._game_over() if self._over else self._describe()

    def close(self):
        pass


def farkle_env(seats: int = 2, rules=None, target: int | None = None,
               ending: str | None = None, yardstick: bool = False,
               render_mode: str | None = None, opponent: str = "optimal-win") -> FarkleAECEnv:
    """A Farkle table of ``seats`` (2 to 7) as a PettingZoo AEC environment."""
    return FarkleAECEnv(seats, rules, target, ending, yardstick, render_mode, opponent)


def penta_env(seats: int = 2, rules=None, yardstick: bool = False,
              render_mode: str | None = None) -> PentaAECEnv:
    """A Penta table of ``seats`` (2 or more, as many as fit the memory limit: each seat
    sees every other TOTAL) as a PettingZoo AEC environment."""
    return PentaAECEnv(seats, rules, yardstick, render_mode)


class FarkleAECEnv(_TurnTakingEnv):
    """Farkle at 2 to 7 seats (see the module docstring)."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"], "name": "dicelab_farkle_v0",
                "is_parallelizable": False, "render_fps": 1}
    _unit = "expected reward: P(win) - P(loss) (optimal-win)"

    def __init__(self, seats=2, rules=None, target=None, ending=None, yardstick=False,
                 render_mode=None, opponent: str = "optimal-win"):
        seats = _check_seats(seats, 2, MAX_SEATS)
        self.rules = check_rules(rules, ending)
        self.target = check_target_argument(target)
        self.yardstick = check_flag("yardstick", yardstick)
        if self.yardstick and seats != 2:
            raise UserError(f"the Farkle yardstick (optimal-win) is for two seats, not {seats}")
        if not isinstance(opponent, str):
            raise UserError(f"opponent must be a Farkle policy name, not {opponent!r}")
        self.opponent = opponent
        self._unit = ("expected reward: P(win) - P(loss) ("
                      + ("optimal-win" if opponent == "optimal-win"
                         else f"optimal-win:vs={opponent}") + ")")
        self._response = None
        if opponent != "optimal-win":
            if not self.yardstick:
                raise UserError("opponent names whom the yardstick plays against: it needs "
                                "yardstick=True")
            from dicelab.farkle.exact import solve_best_response

            self._response = solve_best_response(self.rules, self.target, opponent)
        self.actions = FarkleActions(self.rules)
        super().__init__(seats, TURN_OBS + 3 + 2 * (seats - 1), self.actions.n_actions,
                         render_mode, low=-OBS_HIGH)
        self._ref = None

    @property
    def totals(self) -> list[int]:
        """The seats' banked totals (after ``reset``)."""
        if self._ref is None:
            raise reset_needed()
        return list(self._ref.totals)

    def decision_state(self) -> State:
        """The decision the seat to move faces, as a dicelab policy sees it
        (:class:`~dicelab.farkle.policy.State`)."""
        if self._ref is None:
            raise reset_needed()
        return self._ref.state()

    def _yardstick_on(self):
        return self.yardstick

    def _mask_of(self, seat):
        return self.actions.mask(roll_rank(self._ref), self._ref.turn_points)

    def _observation(self, seat):
        ref = self._ref
        mine = seat == self._seat and not self._over
        others = [(seat + k) % self.seats for k in range(1, self.seats)]
        turn = self.actions.observation(roll_rank(ref), ref.turn_points) if mine \
            else np.zeros(TURN_OBS, dtype=np.int64)
        return np.array([*turn, ref.totals[seat], ref.lost[seat], int(ref.last_round),
                         *(ref.totals[o] for o in others), *(ref.lost[o] for o in others)],
                        dtype=np.int64)

    def reset(self, seed=None, options=None):
        self._start(seed)
        self._ref = new_referee(self.rules, self.seats, self.target, self._rng)
        self._after_move()
        self._publish()

    def _after_move(self) -> None:
        """The seat to move next, or the game's end (a game the simulation would cap is
        truncated: no rewards)."""
        ref = self._ref
        if ref.phase == "over":
            if ref.capped:
                self._over = True
                self.truncations = dict.fromkeys(self.agents, True)
            else:
                self._finish(ref.totals)
        self._seat = ref.seat
        self.agent_selection = self.possible_agents[self._seat]

    def _play(self, a: int) -> None:
        play_action(self.actions, self._ref, a)
        self._after_move()

    def _values(self) -> np.ndarray:
        ref = self._ref
        s, o = self._seat, 1 - self._seat
        return self.action_values(roll_rank(ref), ref.turn_points, (ref.totals[s], ref.totals[o]),
                                  (ref.lost[s], ref.lost[o]))

    def action_values(self, rank: int, tp: int, totals: tuple[int, int],
                      lost: tuple[int, int]) -> np.ndarray:
        """The yardstick's value of each action (-inf: illegal) of the seat to move after
        roll ``rank`` with ``tp`` turn points, ``totals`` and ``lost`` (turns lost in a
        row) being (the mover's, the other's)."""
        low = -self.rules.penalty_floor() * POINT_UNIT
        penalty = bool(self.rules.farkle_penalty)
        me, opp = max(totals[0], low), max(totals[1], low)
        mine, theirs = lost if penalty else (0, 0)
        mask = self.actions.mask(rank, tp)
        if self._response is not None and opp < self.target:
            sol = self._response
            return 2.0 * self.actions.values(
                rank, tp, mask, lambda tp: sol.turn_values(me, opp, tp, mine, theirs)) - 1.0
        # self-play optimal-win, or a last turn (whoever the other seat was): advise's values
        from dicelab.farkle.advise import advise

        faces = dice.dice_of_rank(rank)
        adv = advise(faces, turn_points=tp, me=me, opp=opp, target=self.target,
                     rules=self.rules, my_farkles=mine, opp_farkles=theirs)
        index = {opt: k for k, opt in enumerate(self.actions.option_list(rank))}
        out = np.full(self.actions.n_actions, -np.inf)
        n = len(faces)
        for opt in adv.options:
            k = index[(opt.points, dice_after(n, len(opt.keep)))]
            out[2 * k + (opt.action == "bank")] = 2.0 * opt.value - 1.0
        return out

    def _describe(self):
        ref = self._ref
        return (f"seat {self._seat} roll {list(ref.sorted_roll)} turn points "
                f"{ref.turn_points} totals {ref.totals}")

    def _game_over(self):
        ref = self._ref
        return game_over_text(ref.totals, [f"after {counted(n, 'turn')}" for n in ref.n_turns],
                              truncated=capped_reason(ref) if ref.capped else None)


class PentaAECEnv(_TurnTakingEnv):
    """Penta at 2 or more seats (see the module docstring)."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"], "name": "dicelab_penta_v0",
                "is_parallelizable": False, "render_fps": 1}
    _unit = "expected points still to come on the own card (optimal)"

    def __init__(self, seats=2, rules=None, yardstick=False, render_mode=None):
        seats = _check_seats(seats, 2, None)
        # each seat's observation (and its space's bounds) holds every other seat's TOTAL
        check_memory(f"a Penta table of {seats:,} seats", 24 * seats * (N_OBS + seats))
        self.rules = check_penta_rules(rules)
        self.yardstick = check_flag("yardstick", yardstick)
        super().__init__(seats, N_OBS + seats - 1, PENTA_ACTIONS, render_mode, low=-1)
        self._cards = [PentaCard(self.rules) for _ in range(seats)]

    def _yardstick_on(self):
        return self.yardstick

    def _mask_of(self, seat):
        return self._cards[seat].mask()

    def _observation(self, seat):
        others = [(seat + k) % self.seats for k in range(1, self.seats)]
        own = self._cards[seat].observation()
        if seat != self._seat or self._over:  # no roll in front of this seat
            own[ROLL_AT:ROLL_AT + N_DICE + 1] = 0  # faces and rerolls left
        return np.array([*own, *(self._cards[o].card.total for o in others)], dtype=np.int64)

    def reset(self, seed=None, options=None):
        self._start(seed)
        self._cards = [PentaCard(self.rules) for _ in range(self.seats)]
        self._seat = 0
        self._cards[0].new_turn(self._rng)
        self.agent_selection = self.possible_agents[0]
        self._publish()

    def _play(self, a: int) -> None:
        card = self._cards[self._seat]
        card.play(a, self._rng)
        if a < N_KEEPS:
            return
        if all(c.full for c in self._cards):
            self._finish([c.card.total for c in self._cards])
            return
        self._seat = (self._seat + 1) % self.seats
        self._cards[self._seat].new_turn(self._rng)

    def _values(self) -> np.ndarray:
        card = self._cards[self._seat]
        return card.values(card.mask())

    def _describe(self):
        return f"seat {self._seat}: {self._cards[self._seat].describe()}"

    def _game_over(self):
        return game_over_text([c.card.total for c in self._cards],
                              [c.describe_card() for c in self._cards])
