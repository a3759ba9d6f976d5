"""A trained agent as a dicelab Farkle policy (layer 3).

:func:`as_policy` wraps a function from an environment's observation
(``{"observation", "action_mask"}``) to an action into an object of dicelab's Farkle
:class:`~dicelab.farkle.policy.Policy` protocol: a ``name`` and ``decide(state) ->
Move``. At each decision it builds the observation the agent was trained on from the
:class:`~dicelab.farkle.policy.State`, in one of the environments' encodings:

* ``"turn"``: :class:`~dicelab.rl.farkle.FarkleTurnEnv`'s (the roll, the turn points);
* ``"solo"``: :class:`~dicelab.rl.farkle.FarkleSoloEnv`'s (and the seat's total and
  lost turns in a row);
* ``"table"``: the AEC environment's (:func:`dicelab.rl.aec.farkle_env`; and whether this
  is the last round, then the other seats' totals and lost turns in turn order after
  the seat), for a table of the agent's size.

The action it answers becomes the :class:`~dicelab.farkle.policy.Move`: the dice of the
chosen set-aside (the first of the roll's set-asides with its points and dice left:
they lead to the same game) and bank or roll. An action the mask forbids raises
:class:`~dicelab.rl.common.IllegalActionError`, as in the environments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle.policy import Move, State
from dicelab.farkle.rules import FarkleRules
from dicelab.rl.common import check_action
from dicelab.rl.farkle import FarkleActions

ENCODINGS = ("turn", "solo", "table")


@functools.lru_cache(maxsize=16)
def _actions(rules: FarkleRules) -> FarkleActions:
    return FarkleActions(rules)


def observation(state: State, encoding: str = "table") -> dict:
    """The environments' observation of ``state`` (see the module docstring)."""
    acts = _actions(state.rules)
    rank = dice.rank_of_dice(sorted(state.roll))
    if encoding == "turn":
        extra: tuple = ()
    elif encoding == "solo":
        extra = (state.my_total, state.my_lost)
    elif encoding == "table":
        n = len(state.totals)
        others = [(state.seat + k) % n for k in range(1, n)]
        extra = (state.my_total, state.my_lost, int(state.last_round),
                 *(state.totals[o] for o in others), *(state.lost[o] for o in others))
    else:
        raise UserError(f"encoding must be one of {', '.join(ENCODINGS)}, not {encoding!r}")
    return {"observation": acts.observation(rank, state.turn_points, extra),
            "action_mask": acts.mask(rank, state.turn_points)}


class AgentPolicy:
    """A Farkle policy that asks ``agent(observation) -> action`` (see :func:`as_policy`)."""

    def __init__(self, agent: Callable[[dict], int], name: str, encoding: str):
        if not callable(agent):
            raise UserError(f"an agent is a function of an observation, not {agent!r}")
        if encoding not in ENCODINGS:
            raise UserError(f"encoding must be one of {', '.join(ENCODINGS)}, not "
                            f"{encoding!r}")
        if not isinstance(name, str) or not name:
            raise UserError(f"a policy's name is a non-empty string, not {name!r}")
        self.agent = agent
        self.name = name
        self.encoding = encoding

    def __repr__(self) -> str:
        return f"AgentPolicy({self.name!r}, encoding={self.encoding!r})"

    def decide(self, state: State) -> Move:
        obs = observation(state, self.encoding)
        a = check_action(self.agent(obs), obs["action_mask"])
        acts = _actions(state.rules)
        points, left, bank = acts.decode(dice.rank_of_dice(sorted(state.roll)), a)
        option = next(o for o in state.options() if (o.points, o.dice_left) == (points, left))
        return Move(option.keep, bank)


def as_policy(agent: Callable[[dict], int], *, name: str = "rl-agent",
              encoding: str = "table") -> AgentPolicy:
    """``agent``, a function from an environment's observation to its action, as a dicelab
    Farkle policy (:class:`dicelab.farkle.policy.Policy`).

    >>> import numpy as np
    >>> from dicelab.farkle.policy import State
    >>> from dicelab.farkle.rules import PRESETS
    >>> first_bank = as_policy(lambda obs: int(np.flatnonzero(obs["action_mask"])[1]))
    >>> first_bank.decide(State((1, 5, 2, 3, 3, 4), 300, 0, (1200, 2000), (0, 0), False,
    ...                         10_000, PRESETS["default"]))
    Move(keep=(1, 5), bank=True)
    """
    return AgentPolicy(agent, name, encoding)


__all__ = ["ENCODINGS", "AgentPolicy", "as_policy", "observation"]
