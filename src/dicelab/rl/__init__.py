"""Reinforcement-learning environments of Farkle and Penta with an exact yardstick
(layer 3; needs the ``rl`` extra: ``pip install 'dicelab[rl]'``).

Importing this package registers the Gymnasium ids (``gymnasium.make("dicelab/FarkleSolo-v0",
target=5000)``; ``gymnasium.make("dicelab.rl:dicelab/FarkleSolo-v0")`` imports it first):

* ``dicelab/FarkleTurn-v0``: one Farkle turn, reward the turn's points
  (:class:`~dicelab.rl.farkle.FarkleTurnEnv`);
* ``dicelab/FarkleSolo-v0``: a solitaire Farkle game, -1 per turn
  (:class:`~dicelab.rl.farkle.FarkleSoloEnv`);
* ``dicelab/PentaSolo-v0``: a Penta solitaire game, reward the points scored
  (:class:`~dicelab.rl.penta.PentaSoloEnv`).

PettingZoo AEC environments: :func:`dicelab.rl.aec.farkle_env` (2 to 7 seats) and
:func:`dicelab.rl.aec.penta_env` (2 or more seats). Many games at once, in compiled code:
:class:`dicelab.rl.batch.FarkleBatch` and :class:`dicelab.rl.batch.PentaBatch`. See docs/rl.md.
"""

from __future__ import annotations

from dicelab.rl.common import IllegalActionError, require_gymnasium

#: Registered Gymnasium ids and their entry points.
ENV_IDS = {
    "dicelab/FarkleTurn-v0": "dicelab.rl.farkle:FarkleTurnEnv",
    "dicelab/FarkleSolo-v0": "dicelab.rl.farkle:FarkleSoloEnv",
    "dicelab/PentaSolo-v0": "dicelab.rl.penta:PentaSoloEnv",
}


def register_envs() -> None:
    """Register :data:`ENV_IDS` with Gymnasium (done on import; idempotent).

    Without Gymnasium's ``OrderEnforcing`` wrapper (``order_enforce=False``), which
    ``gym.make`` would add and which refuses ``render()`` before the first ``reset()``:
    each environment keeps the order itself (``step`` before ``reset`` raises
    ``ResetNeeded``) and renders :data:`~dicelab.rl.common.NOT_STARTED` until then."""
    gym = require_gymnasium()
    for env_id, entry in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry, order_enforce=False)


register_envs()

__all__ = ["ENV_IDS", "IllegalActionError", "register_envs"]
