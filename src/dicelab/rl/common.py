"""What every dicelab environment shares: the error of an illegal action, the masked
observation, constructor checks and the yardstick's record (layer 3).
"""

from __future__ import annotations

import functools

import numpy as np

from dicelab.errors import UserError, worded_for

#: The most an observation entry may be (totals and turn points in points): far above any
#: game the kernels can play, so every reachable observation lies inside its space.
OBS_HIGH = 2**40

#: What ``render()`` shows (``render_mode="ansi"``) before the first ``reset()``.
NOT_STARTED = "no game yet: call reset() first"


def top_seats(totals) -> list[int]:
    """The seats with the highest total: the winner, or the seats tied at the top."""
    best = max(totals)
    return [i for i, t in enumerate(totals) if t == best]


def game_over_text(totals, details=None, *, truncated: str | None = None,
                   what: str = "game", label: str = "final total") -> str:
    """What ``render()`` shows once an episode has ended (every environment's).

    One seat: one line, ``game over: final total 650 after 7 turns``. Several seats: a
    first line naming the winner (the one highest total) or the seats tied at the top,
    then a line per seat, ``seat i: final total T DETAILS`` (seat ``i`` is
    ``player_i``). ``details`` holds each seat's text after its total (a Penta card, the
    turns taken); ``truncated`` the cap that stopped the episode (then no winner).

    >>> print(game_over_text([250, 300], ["card (1,)", "card (2,)"]))
    game over: seat 1 wins
    seat 0: final total 250 card (1,)
    seat 1: final total 300 card (2,)
    >>> game_over_text([650], ["after 7 turns"])
    'game over: final total 650 after 7 turns'
    """
    head = f"{what} over" + (f" (truncated: {truncated})" if truncated else "")
    rows = [f"{label} {t}" + (f" {details[i]}" if details and details[i] else "")
            for i, t in enumerate(totals)]
    if len(rows) == 1:
        return f"{head}: {rows[0]}"
    if truncated:
        head += ": no winner"
    else:
        top = top_seats(totals)
        names = [str(i) for i in top]
        head += (f": seat {top[0]} wins" if len(top) == 1 else
                 f": a tie between seats {', '.join(names[:-1])} and {names[-1]}")
    return "\n".join([head, *(f"seat {i}: {row}" for i, row in enumerate(rows))])


class IllegalActionError(ValueError):
    """An action the mask forbids (or no action from the space): never repaired."""


def require_gymnasium():
    """The gymnasium module, or one clear error naming the extra that installs it."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - the rl extra is installed by make setup
        raise UserError("dicelab.rl needs gymnasium: pip install 'dicelab[rl]'") from None
    return gymnasium


def reset_needed(over: bool = False):
    """Gymnasium's ``ResetNeeded`` error of a game asked for before its first ``reset()``,
    or (``over``) stepped after its end."""
    return require_gymnasium().error.ResetNeeded(
        "the episode is over: call reset() first" if over else "no game yet: call reset() first")


def masked_space(n_obs: int, n_actions: int, low: int = -OBS_HIGH):
    """The observation space ``{"observation": int64[n_obs], "action_mask": int8[n]}``
    (PettingZoo's convention for masked actions)."""
    spaces = require_gymnasium().spaces
    return spaces.Dict({
        "observation": spaces.Box(low=low, high=OBS_HIGH, shape=(n_obs,), dtype=np.int64),
        "action_mask": spaces.Box(low=0, high=1, shape=(n_actions,), dtype=np.int8)})


class CurrentMask:
    """A single-game environment's ``action_masks()``, read from its ``_mask`` (the
    current decision's)."""

    _mask: np.ndarray

    def action_masks(self) -> np.ndarray:
        """The current decision's mask (1: a legal action), as ``info["action_mask"]``;
        what ``action_space.sample()`` draws from, under the name sb3-contrib's
        ``MaskablePPO`` asks an environment for."""
        return self._mask.copy()


def masked_discrete(n: int, mask_of, *args):
    """``Discrete(n)`` whose ``sample()`` without a mask draws a legal action of the
    current decision (``mask_of(*args)``, the environment's mask): a random agent, and
    Gymnasium's checker, then play legal moves. ``contains`` is Discrete's: any action in
    range belongs to the space, and ``step`` refuses an illegal one.

    ``mask_of`` is a method of the environment, not a closure: a copy of the environment
    (``copy.deepcopy``) then samples from its own decision, and the environment pickles."""
    return _masked_discrete_class()(n, mask_of, args)


@functools.cache
def _masked_discrete_class():
    """The class of :func:`masked_discrete`'s spaces (made on first use: gymnasium is the
    optional extra; ``MaskedDiscrete``, the module's attribute pickle finds, is this)."""
    spaces = require_gymnasium().spaces

    class MaskedDiscrete(spaces.Discrete):
        def __init__(self, n: int, mask_of, args: tuple = ()) -> None:
            super().__init__(n)
            self.mask_of, self.mask_args = mask_of, args

        def sample(self, mask=None, probability=None):
            if mask is None and probability is None:
                mask = self.mask_of(*self.mask_args)
            return super().sample(mask=mask, probability=probability)

    MaskedDiscrete.__module__, MaskedDiscrete.__qualname__ = __name__, "MaskedDiscrete"
    return MaskedDiscrete


def __getattr__(name: str):
    if name == "MaskedDiscrete":
        return _masked_discrete_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_action(action, mask: np.ndarray) -> int:
    """``action`` as an int if the mask allows it; :class:`IllegalActionError` otherwise."""
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        action = action[()]  # a 0-d integer array, as some agents return
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise IllegalActionError(f"an action is an integer, not {action!r}")
    a = int(action)
    if not 0 <= a < mask.size:
        raise IllegalActionError(f"action {a} is not in 0..{mask.size - 1}")
    if not mask[a]:
        legal = np.flatnonzero(mask).tolist()
        raise IllegalActionError(f"action {a} is illegal here; legal actions: {legal}")
    return a


def check_target_argument(target) -> int:
    """A Farkle target given to a constructor (:func:`dicelab.farkle.rules.check_target`,
    its refusal worded for the argument)."""
    from dicelab.farkle.rules import check_target

    with worded_for("target"):
        return check_target(target)


def check_flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise UserError(f"{name} must be True or False, not {value!r}")
    return value


def yardstick_info(values: np.ndarray, unit: str) -> dict:
    """The yardstick of one decision: ``values[a]`` the exact value of action ``a`` (-inf
    where illegal), the best value, and the unit."""
    return {"values": values, "best": float(values.max()), "unit": unit}


def loss_of(yardstick: dict | None, action: int) -> float | None:
    """The loss of ``action`` against the best (0 for a best action; ties within 1e-12)."""
    if yardstick is None:
        return None
    loss = yardstick["best"] - float(yardstick["values"][action])
    return 0.0 if loss <= 1e-12 else loss
