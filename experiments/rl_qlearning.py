"""How close does tabular Q-learning get to the exact optimum of Farkle? Trains the agent
of :mod:`dicelab.rl.tabular` on the batched environment and saves its learning curve,
each point the greedy policy's exact measure beside the optimum's.

    .venv/bin/python experiments/rl_qlearning.py [--kind turn|solo] [--rules default]
        [--target 1000] [--games 1024] [--steps 20000] [--seed 2026] [--alpha-min 0.05]
        [--evaluations 20] [--duel 20000] [--opponent optimal-win] [--out DIR] [--json]

``--kind turn`` (the default): one turn, the expected turn score against ``max-ev``.
``--kind solo``: the solitaire game to ``--target`` (default 1,000; the agent's table
grows with it), the expected turns against ``fastest``. The trained agent then plays
``--duel`` games (default 20,000; 0: none) in each seat against ``--opponent`` (default
``optimal-win``) on common dice: its P(win) + P(tie)/2 with a 95% interval, beside
``fastest``'s exact value against the same opponent.

Without ``--out`` this writes the checkout's ``results/rl_qlearning_<kind>/<rules>``
(``<rules>-t<target>`` for solo): ``summary.parquet`` (the curve: batch steps,
transitions, episodes, the exact measure, the gap to the optimum, the probability a
turn is still rolling past the rows evaluated) and ``manifest.json`` (the command, the
rules, the agent's settings, versions, the final exact gap). A bad option is one
``error:`` line and exit code 2, nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dicelab.errors import UserError
from dicelab.registry import parse_policy
from dicelab.results import ScriptParser, run_script, to_json
from dicelab.rl.tabular import duel, train_solo, train_turn

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("turn", "solo"), default="turn")
    ap.add_argument("--rules", default="default")
    ap.add_argument("--target", type=int, default=1000)
    ap.add_argument("--games", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--alpha-min", type=float, default=0.05)
    ap.add_argument("--evaluations", type=int, default=20)
    ap.add_argument("--duel", type=int, default=20_000)
    ap.add_argument("--opponent", default="optimal-win")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    variant = Path(args.rules).stem + (f"-t{args.target}" if args.kind == "solo" else "")
    command = ["python", "experiments/rl_qlearning.py", "--kind", args.kind, "--rules",
               args.rules, *(["--target", str(args.target)] if args.kind == "solo" else []),
               "--games", str(args.games), "--steps", str(args.steps), "--seed",
               str(args.seed), "--alpha-min", str(args.alpha_min), "--evaluations",
               str(args.evaluations),
               *(["--duel", str(args.duel), "--opponent", args.opponent]
                 if args.kind == "solo" else [])]
    def compute():
        if args.duel < 0:
            raise UserError(f"--duel is a number of games per seat (0: none), not {args.duel}")
        if args.kind == "solo" and args.duel:
            parse_policy(args.opponent, "farkle")  # a bad name refused before training
        common = {"games": args.games, "steps": args.steps, "seed": args.seed,
                  "alpha_min": args.alpha_min, "evaluations": args.evaluations}
        run = (train_turn(args.rules, **common) if args.kind == "turn"
               else train_solo(args.rules, target=args.target, **common))
        if args.kind == "solo" and args.duel:
            run.duel = duel(run, opponent=args.opponent, games=args.duel, seed=args.seed)
        return run

    done = run_script(args.out or ROOT / "results" / f"rl_qlearning_{args.kind}" / variant,
                      compute, command)
    if isinstance(done, int):
        return done
    run, out = done
    d = run.to_dict()
    if args.json:
        print(to_json(d))
    else:
        print(f"{d['optimal_policy']}: {d['optimum']:.4f} ({d['measure']}); Q-learning after "
              f"{d['transitions']:,} transitions: {d['final_exact']:.4f} (exact), a gap of "
              f"{d['final_gap']:.4f}")
        if run.duel is not None:
            v = run.duel.seats_averaged
            lo, hi = v.ci95
            print(f"against {run.duel.opponent}, seats averaged ({run.duel.games:,} games "
                  f"each): P(win) + P(tie)/2 = {v.mean:.4f} [{lo:.4f}, {hi:.4f}]; "
                  f"{run.duel.reference} (exact): {run.duel.reference_averaged:.4f}")
        print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
