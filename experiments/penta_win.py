"""penta-win against optimal, with common random numbers, beside the clairvoyant ceiling.

    .venv/bin/python experiments/penta_win.py [--seats N] [--games N] [--seed S]
        [--rules R] [--out DIR] [--json]

Seats penta-win at every position of a table of ``optimal`` players and plays each table
beside an all-``optimal`` table on the same dice (:func:`dicelab.penta.penta_win.
measure_penta_win`); prints penta-win's score per seat, ``optimal``'s in the same seat,
the gain with its 95% interval (over chunks of 8,192 games: ``--games`` at least 16,384,
two whole chunks), exact bounds on the clairvoyant ceiling and the share of
the gap to it the gain takes; for two seats the exact ceiling too when the clairvoyant's
table is cached (``--build-ceiling`` builds it). The first run builds the table of every
target and ``optimal``'s distribution of the points to come (about 2.3 GB each, cached:
``DICELAB_CACHE_DIR``).

Without ``--out`` this writes the checkout's ``results/penta_win/seats-<N>``:
``summary.parquet`` (one row per seat position) and ``manifest.json`` (the command,
versions and the whole measurement). A bad option is one ``error:`` line and exit code 2,
nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dicelab.penta.penta_win import MIN_GAMES, measure_penta_win
from dicelab.results import ScriptParser, run_script, to_json

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = ScriptParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--games", type=int, default=1_000_000,
                    help=f"games per seat position, at least {MIN_GAMES:,} (two chunks: "
                         "the units of the interval)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--rules", default="seed")
    ap.add_argument("--build-ceiling", action="store_true",
                    help="build the clairvoyant's table if it is not cached (2.3 GB)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    command = ["python", "experiments/penta_win.py", "--seats", str(args.seats), "--games",
               str(args.games), "--seed", str(args.seed), "--rules", args.rules]
    done = run_script(args.out or ROOT / "results" / "penta_win" / f"seats-{args.seats}",
                      lambda: measure_penta_win(args.seats, args.games, args.seed, args.rules,
                                                build_ceiling=args.build_ceiling), command)
    if isinstance(done, int):
        return done
    m, out = done
    d = m.to_dict()
    if args.json:
        print(to_json(d))
        return 0
    print(f"penta-win against {args.seats - 1} optimal player(s), rules {d['rules']}, "
          f"{m.games:,} games per seat position, seed {m.seed}, common random numbers")
    for p, (w, o) in enumerate(zip(m.win_scores, m.optimal_scores, strict=True)):
        print(f"  seat {p}: penta-win {w:.5f}   optimal in that seat {o:.5f}")
    lo, hi = m.gain_ci95
    print(f"fair share {1 / m.seats:.5f}; penta-win {1 / m.seats + m.gain:.5f}; gain "
          f"{m.gain:+.5f} (95% interval {lo:+.5f} .. {hi:+.5f})")
    if m.ceiling is not None:
        print(f"clairvoyant ceiling (exact) {m.ceiling:.6f}; share of the gap taken "
              f"{100 * m.share_of_gap:.1f}%")
    if m.ceiling_bounds is not None:
        (c_lo, c_hi), (s_lo, s_hi) = m.ceiling_bounds, m.share_of_gap_bounds
        print(f"clairvoyant ceiling between {c_lo:.6f} and {c_hi:.6f} (exact bounds); share "
              f"of the gap taken {100 * s_lo:.1f}% to {100 * s_hi:.1f}%")
    print(f"penta-win: {m.games_per_s:,.0f} games/s ({m.elapsed_s:.0f} s)")
    print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
