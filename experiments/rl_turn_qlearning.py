"""How close does tabular Q-learning get to max-ev on a Farkle turn? Trains the agent of
:mod:`dicelab.rl.tabular` on the batched environment and saves its learning curve, each
point the greedy policy's exact expected turn score beside max-ev's.

    .venv/bin/python experiments/rl_turn_qlearning.py [--rules default] [--games 1024]
        [--steps 20000] [--seed 2026] [--alpha-min 0.05] [--evaluations 20] [--out DIR]
        [--json]

Without ``--out`` this writes the checkout's ``results/rl_turn_qlearning/<rules>``:
``summary.parquet`` (the curve: batch steps, transitions, turns, exact score, gap to
max-ev, the probability a policy's turn is still rolling past the rows evaluated) and
``manifest.json`` (the command, the rules, the agent's settings, versions, the final
exact gap). A bad option is one ``error:`` line and exit code 2, nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dicelab.errors import UserError
from dicelab.results import check_out_dir, save_run, to_json
from dicelab.rl.tabular import train_turn

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="default")
    ap.add_argument("--games", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--alpha-min", type=float, default=0.05)
    ap.add_argument("--evaluations", type=int, default=20)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        out = check_out_dir(args.out or ROOT / "results" / "rl_turn_qlearning"
                            / Path(args.rules).stem)
        run = train_turn(args.rules, games=args.games, steps=args.steps, seed=args.seed,
                         alpha_min=args.alpha_min, evaluations=args.evaluations)
        command = ["python", "experiments/rl_turn_qlearning.py", "--rules", args.rules,
                   "--games", str(args.games), "--steps", str(args.steps), "--seed",
                   str(args.seed), "--alpha-min", str(args.alpha_min), "--evaluations",
                   str(args.evaluations)]
        save_run(out, run, command)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if args.json:
        print(to_json(run.to_dict()))
    else:
        d = run.to_dict()
        print(f"max-ev {d['max_ev']:.4f} points per turn; Q-learning after "
              f"{d['transitions']:,} transitions {d['final_exact_score']:.4f} (exact): "
              f"{d['final_gap']:.4f} below")
        print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
