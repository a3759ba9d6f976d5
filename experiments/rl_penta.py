"""How close does a learning agent get to the exact optimum of Penta? Trains the agent of
:mod:`dicelab.rl.penta_agent` (linear values of the card, approximate policy iteration)
and judges its final policy exactly against ``optimal``.

    .venv/bin/python experiments/rl_penta.py [--rules seed] [--games 2000]
        [--iterations 8] [--seed 2026] [--ridge 1.0] [--out DIR] [--json]

Without ``--out`` this writes the checkout's ``results/rl_penta/<rules>``:
``summary.parquet`` (the curve: per iteration the games played and their mean final
score with its SE) and ``manifest.json`` (the command, the agent's settings, versions, the
exact mean and SD of the final policy's score and its gap to ``optimal``). The exact
judge builds a 270 MB decision block. A bad option is one ``error:`` line and exit code
2, nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dicelab.results import ScriptParser, run_script, to_json
from dicelab.rl.penta_agent import judge, train_penta

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="seed")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--iterations", type=int, default=8)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--ridge", type=float, default=1.0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    command = ["python", "experiments/rl_penta.py", "--rules", args.rules, "--games",
               str(args.games), "--iterations", str(args.iterations), "--seed",
               str(args.seed), "--ridge", str(args.ridge)]
    done = run_script(args.out or ROOT / "results" / "rl_penta" / Path(args.rules).stem,
                      lambda: judge(train_penta(args.rules, games=args.games,
                                                iterations=args.iterations, seed=args.seed,
                                                ridge=args.ridge)), command)
    if isinstance(done, int):
        return done
    run, out = done
    d = run.to_dict()
    if args.json:
        print(to_json(d))
    else:
        print(f"optimal: {d['optimum']:.4f} (mean final score); the agent after {d['games']:,} "
              f"games: {d['final_exact']:.4f} (exact), a gap of {d['final_gap']:.4f} points")
        print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
