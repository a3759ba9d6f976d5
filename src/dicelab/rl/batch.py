"""Many games stepped at once in compiled code: arrays in, arrays out (layer 3).

:class:`FarkleBatch` is a Gymnasium vector environment (``gymnasium.vector.VectorEnv``,
autoreset in the same step) of ``games`` copies of :class:`~dicelab.rl.farkle.
FarkleSoloEnv` (``mode="solo"``) or :class:`~dicelab.rl.farkle.FarkleTurnEnv`
(``mode="turn"``), with the same actions, masks, observations and rewards, stepped by
one numba kernel (:mod:`dicelab.rl.kernels`)::

    batch = FarkleBatch(1024, target=5000, seed=1)
    obs, info = batch.reset()              # obs["observation"] (1024, 10) int64,
                                           # obs["action_mask"] (1024, 30) int8
    obs, reward, terminated, truncated, info = batch.step(actions)   # actions (1024,)

A game that ends in a step starts again in that same step: ``obs`` is the new game's
first decision, ``info["final_obs"]`` (rows where ``terminated`` or ``truncated``) the
finished game's last observation (its roll entries zero). A solitaire game still short
of the target after :data:`~dicelab.config.MAX_ROUNDS` turns (a policy that never
banks) is truncated, as :class:`~dicelab.rl.farkle.FarkleSoloEnv` truncates it.
``info["lost_turns_at_start"]`` counts, per game,
the turns lost to rolls of six dice that scored nothing before a new game's (``solo``:
each is -1, not in the rewards, as :class:`FarkleSoloEnv`'s ``reset`` reports them) or a
new turn's first decision (``turn``: ``skipped_turns``). An illegal action in any game
raises :class:`~dicelab.rl.common.IllegalActionError` before any game moves.

Every game has its own xoshiro256** generator from ``SeedSequence(seed)``: the same seed
gives the same games. The generators differ from the single-game environments' (NumPy's),
so a game here and there with the same seed are different games of the same law.

:class:`PentaBatch` does the same for :class:`~dicelab.rl.penta.PentaSoloEnv`.
"""

from __future__ import annotations

import numpy as np

from dicelab import dice
from dicelab.config import MAX_ROUNDS
from dicelab.errors import UserError
from dicelab.farkle.rules import PENALTY_STREAK, check_points
from dicelab.penta.rules import N_BOXES
from dicelab.penta.scoring import TABLES
from dicelab.rl import kernels
from dicelab.rl.common import (
    OBS_HIGH,
    IllegalActionError,
    check_target_argument,
    masked_space,
    require_gymnasium,
)
from dicelab.rl.farkle import TURN_OBS, FarkleActions, check_rules
from dicelab.text import is_whole

gym = require_gymnasium()

MODES = ("solo", "turn")
#: The most games one batch holds (its arrays are about 300 bytes a game).
MAX_GAMES = 10_000_000
#: The largest target or bank threshold of a batch (a multiple of 50 below ``OBS_HIGH``:
#: the kernels count points in 64-bit integers).
MAX_POINTS = 10**12
assert MAX_POINTS < OBS_HIGH


def _check_games(games) -> int:
    if not is_whole(games) or not 1 <= games <= MAX_GAMES:
        raise UserError(f"games must be an integer from 1 to {MAX_GAMES:,}, not {games!r}")
    return int(games)


class _Batch(gym.vector.VectorEnv):
    """What both batches share: spaces, output buffers, seeding, the checks of a step.
    A subclass runs its kernels in ``_reset_games()`` and ``_step_games(actions) -> bad
    game or -1``, and adds its own entries to the infos (``_infos()``)."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}  # noqa: RUF012

    def _buffers(self, games: int, n_obs: int, n_actions: int, low: int, seed) -> None:
        self.num_envs = games
        self.single_observation_space = masked_space(n_obs, n_actions, low=low)
        self.single_action_space = gym.spaces.Discrete(n_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              games)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, games)
        self._reward = np.zeros(games)
        self._done = np.zeros(games, dtype=np.bool_)
        self._truncated = np.zeros(games, dtype=np.bool_)
        self._obs = np.zeros((games, n_obs), dtype=np.int64)
        self._final = np.zeros((games, n_obs), dtype=np.int64)
        self._mask = np.zeros((games, n_actions), dtype=np.int8)
        self._rng = kernels.new_rng_states(seed, games)
        self._started = False

    def _infos(self) -> dict:
        return {}

    def _out(self) -> dict:
        return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}

    def reset(self, *, seed=None, options=None):
        """Start every game; a ``seed`` replaces the generators (``SeedSequence(seed)``)."""
        if seed is not None:
            self._rng = kernels.new_rng_states(seed, self.num_envs)
        self._reset_games()
        self._started = True
        return self._out(), {**self._infos(), "action_mask": self._mask.copy()}

    def step(self, actions):
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise IllegalActionError(f"actions must be {self.num_envs} integers, not an array "
                                     f"of shape {acts.shape} and type {acts.dtype}")
        acts = np.ascontiguousarray(acts, dtype=np.int64)
        bad = self._step_games(acts)
        if bad >= 0:
            legal = np.flatnonzero(self._mask[bad]).tolist()
            raise IllegalActionError(f"game {bad}: action {int(acts[bad])} is illegal; legal "
                                     f"actions: {legal}")
        ended = self._done | self._truncated
        info = {"final_obs": self._final.copy(), "_final_obs": ended,
                **self._infos(), "action_mask": self._mask.copy()}
        return (self._out(), self._reward.copy(), self._done.copy(),
                self._truncated.copy(), info)


class FarkleBatch(_Batch):
    """``games`` Farkle games stepped together (see the module docstring)."""

    def __init__(self, games: int, rules=None, target: int | None = None,
                 ending: str | None = None, mode: str = "solo", seed=None):
        games = _check_games(games)
        if mode not in MODES:
            raise UserError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.rules = check_rules(rules, ending)
        self.target = check_target_argument(target)
        if self.target > MAX_POINTS:
            raise UserError(f"target must be at most {MAX_POINTS:,} in a batch, not "
                            f"{self.target:,}")
        self.mode = mode
        self.actions = FarkleActions(self.rules)
        sa = self.actions.sa
        self._model = (np.ascontiguousarray(sa.roll_class), np.ascontiguousarray(sa.option_start),
                       np.ascontiguousarray(sa.points), np.ascontiguousarray(sa.dice),
                       np.ascontiguousarray(sa.bank_floor))
        self._keep_all = np.ascontiguousarray(sa.keep_all)
        self._solo = mode == "solo"
        self._buffers(games, TURN_OBS + (2 if self._solo else 0), self.actions.n_actions,
                      -2**40 if self._solo else 0, seed)
        z = np.zeros(games, dtype=np.int64)
        self._rank, self._tp, self._total, self._lost, self._turns = (z.copy() for _ in range(5))
        self._start_lost = z.copy()
        self._penalty = int(self.rules.farkle_penalty)

    def _infos(self) -> dict:
        return {"lost_turns_at_start": self._start_lost.copy()}

    def _reset_games(self) -> None:
        kernels.reset_games(self._solo, self._rank, self._tp, self._total, self._lost,
                            self._turns, self._rng, self._start_lost, dice.COUNTS,
                            *self._model, self._penalty, PENALTY_STREAK, self._obs, self._mask)

    def _step_games(self, acts: np.ndarray) -> int:
        return kernels.step_games(acts, self._solo, self.target, self._rank, self._tp,
                                  self._total, self._lost, self._turns, self._rng, dice.COUNTS,
                                  *self._model, self._penalty, PENALTY_STREAK, MAX_ROUNDS,
                                  self._reward, self._done, self._truncated, self._start_lost,
                                  self._final, self._obs, self._mask)

    def threshold_actions(self, threshold: int) -> np.ndarray:
        """Each game's action under ``threshold-T``: set aside every scoring die, bank
        once the turn points reach ``threshold`` (a baseline, and what ``simulate`` plays
        as ``threshold-T``)."""
        threshold = check_points("threshold", threshold, maximum=MAX_POINTS)
        out = np.zeros(self.num_envs, dtype=np.int64)
        roll_class, option_start, points, dice_left, bank_floor = self._model
        kernels.keep_all_actions(self._rank, self._tp, roll_class, option_start,
                                 self._keep_all, points, dice_left, bank_floor,
                                 int(threshold), out)
        return out


class PentaBatch(_Batch):
    """``games`` Penta solitaire games stepped together: :class:`~dicelab.rl.penta.
    PentaSoloEnv`'s actions, masks, observations and rewards, one numba kernel, a finished
    game started again in the same step (``info["final_obs"]``); an illegal action in any
    game raises :class:`~dicelab.rl.common.IllegalActionError` before any game moves."""

    def __init__(self, games: int, rules=None, seed=None):
        from dicelab.rl.penta import N_ACTIONS, N_OBS, check_penta_rules

        games = _check_games(games)
        self.rules = check_penta_rules(rules)
        self._buffers(games, N_OBS, N_ACTIONS, -1, seed)
        z = np.zeros(games, dtype=np.int64)
        (self._r, self._left, self._card, self._up, self._fifty, self._bonuses,
         self._total) = (z.copy() for _ in range(7))
        self._scores = np.full((games, N_BOXES), -1, dtype=np.int64)
        self._boxsc = np.full((games, N_BOXES), -1, dtype=np.int64)
        self._bonus = z.copy()
        self._tables = (self.rules.params, TABLES, *kernels.penta_roll_tables())

    def _state(self) -> tuple:
        return (*self._tables, self._rng, self._r, self._left, self._card, self._up,
                self._fifty, self._bonuses, self._total, self._scores, self._boxsc,
                self._bonus)

    def _reset_games(self) -> None:
        kernels.penta_reset(*self._state(), self._obs, self._mask)

    def _step_games(self, acts: np.ndarray) -> int:
        return kernels.penta_step(acts, *self._state(), self._reward, self._done, self._final,
                                  self._obs, self._mask)
