"""Steps per second of the batched environments against the single-game ones, in the same
run.

    .venv/bin/python benchmarks/bench_rl.py [--games 1024] [--seconds 3] [--json]

Both play the same policy, ``threshold-300`` (set aside every scoring die, bank from 300
turn points), in the solitaire game to 10,000: the single-game environment
(:class:`dicelab.rl.farkle.FarkleSoloEnv`, one ``step`` per decision, the policy read
from ``info["options"]`` as an agent in Python would) and
:class:`dicelab.rl.batch.FarkleBatch` of ``--games`` games (one ``step`` moves every
game; the policy is its compiled ``threshold_actions``). A step is
one decision of one game. Penta the same way: :class:`dicelab.rl.penta.PentaSoloEnv`
against :class:`dicelab.rl.batch.PentaBatch`, both rerolling all five dice while they may
and then scoring the first open box (one vectorised NumPy line for the batch). Each is
timed for about ``--seconds`` after a warm-up (the kernels compiled first); the best of 3
rounds is reported. Target: each batch at least 50 times faster.
"""

from __future__ import annotations

import json
import time

import benchopts
import numpy as np

from dicelab.rl.batch import FarkleBatch, PentaBatch
from dicelab.rl.farkle import FarkleSoloEnv
from dicelab.rl.penta import N_KEEPS, ROLL_AT, PentaSoloEnv

COMMAND = "python benchmarks/bench_rl.py"
THRESHOLD = 300


def single_rate(seconds: float) -> float:
    env = FarkleSoloEnv(target=10_000)
    obs, info = env.reset(seed=1)

    def action() -> int:
        rolled, tp = int(obs["observation"][6]), int(obs["observation"][7])
        kept = [(rolled if left == 6 else rolled - left, pts) for pts, left in info["options"]]
        k = kept.index(max(kept))  # every scoring die: the most dice, then the most points
        bank = obs["action_mask"][2 * k + 1] and tp + info["options"][k][0] >= THRESHOLD
        return 2 * k + int(bank)

    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(1000):
            obs, _, done, _, info = env.step(action())
            if done:
                obs, info = env.reset()
        steps += 1000
    return steps / (time.perf_counter() - t0)


def batch_rate(games: int, seconds: float) -> float:
    batch = FarkleBatch(games, target=10_000, seed=1)
    batch.reset()
    batch.step(batch.threshold_actions(THRESHOLD))  # compiled before the clock starts
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            batch.step(batch.threshold_actions(THRESHOLD))
        steps += 10 * games
    return steps / (time.perf_counter() - t0)


def _penta_policy(mask: np.ndarray, rolls_left) -> np.ndarray:
    """Reroll all five dice while a reroll is left, then score the first open box."""
    return np.where(np.asarray(rolls_left) > 0, 0,
                    N_KEEPS + np.argmax(mask[..., N_KEEPS:], axis=-1))


def penta_single_rate(seconds: float) -> float:
    env = PentaSoloEnv()
    obs, _ = env.reset(seed=1)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(1000):
            a = int(_penta_policy(obs["action_mask"], obs["observation"][ROLL_AT + 5]))
            obs, _, done, _, _ = env.step(a)
            if done:
                obs, _ = env.reset()
        steps += 1000
    return steps / (time.perf_counter() - t0)


def penta_batch_rate(games: int, seconds: float) -> float:
    batch = PentaBatch(games, seed=1)
    obs, _ = batch.reset()

    def step():
        nonlocal obs
        obs = batch.step(_penta_policy(obs["action_mask"],
                                       obs["observation"][:, ROLL_AT + 5]))[0]

    step()  # compiled before the clock starts
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            step()
        steps += 10 * games
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(), default=1024)
    ap.add_argument("--seconds", type=benchopts.seconds, default=3.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    single = max(single_rate(args.seconds) for _ in range(3))
    batch = max(batch_rate(args.games, args.seconds) for _ in range(3))
    p_single = max(penta_single_rate(args.seconds) for _ in range(3))
    p_batch = max(penta_batch_rate(args.games, args.seconds) for _ in range(3))
    rows = [
        {"what": "rl: FarkleSoloEnv, one game, threshold-300 (steps/s)",
         "figure": f"{single:,.0f}"},
        {"what": f"rl: FarkleBatch, {args.games:,} games, threshold-300 (steps/s)",
         "figure": f"{batch:,.0f}"},
        {"what": f"rl: FarkleBatch of {args.games:,} over the single-game env",
         "figure": f"{batch / single:,.0f}x"},
        {"what": "rl: PentaSoloEnv, one game, reroll all then first box (steps/s)",
         "figure": f"{p_single:,.0f}"},
        {"what": f"rl: PentaBatch, {args.games:,} games, the same policy (steps/s)",
         "figure": f"{p_batch:,.0f}"},
        {"what": f"rl: PentaBatch of {args.games:,} over the single-game env",
         "figure": f"{p_batch / p_single:,.0f}x"},
    ]
    if args.json:
        print(json.dumps([{**r, "command": COMMAND} for r in rows]))
    else:
        for r in rows:
            print(f"{r['what']}: {r['figure']}")


if __name__ == "__main__":
    main()
