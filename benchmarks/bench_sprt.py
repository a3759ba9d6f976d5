"""Games a sequential test needs to decide a 1-point difference, against a fixed test; how
far past its bound it stops; what one look costs.

    .venv/bin/python benchmarks/bench_sprt.py [--seeds 20] [--json]

The question: is ``ai`` better than ``ai:two-dice=0`` by a 1-point score difference
(H0: even, H1: 0.51; alpha = beta = 0.05)? The exact score is 0.512 (``dicelab compare
ai ai:two-dice=0 --exact``), and ``ai:max-steps=3`` against ``ai`` is even (0.500): one
pair where H1 holds, one where H0 does. A fixed-size test with independent games needs
``((z_0.95 + z_0.95) * sd / 0.01)^2`` games, ``sd`` the per-game standard deviation of
the score; the sequential test's average games are measured over ``--seeds`` runs, with
common random numbers and without, beside the LLR at the decision over the bound (1 =
stopped exactly at it). Target, for the pair whose units often differ (``ai`` against
``ai:two-dice=0``): at most a third of the fixed test's games, and an LLR within a few
tenths of the bound. The pair that rarely differs on common dice (``ai:max-steps=3``
against ``ai``: most units level) has no such target: the test waits for
``MIN_SPREAD`` units that differ before it trusts their variance, which takes about a
fixed test's games (docs/design/sprt.md); on independent dice most units differ.

A look is one unit (``UNIT_GAMES`` games with each seating): seeding its two chunks,
playing them, and judging. Each part is timed on its own (the best of 5 repeats).
"""

from __future__ import annotations

import json
import math
import time

import benchopts
import numpy as np
from scipy.stats import norm

from dicelab.registry import parse_policy
from dicelab.seeding import chunk_states
from dicelab.sprt import UNIT_GAMES, Judge, SprtSpec, sprt
from dicelab.tournament import FarkleTables

COMMAND = "python benchmarks/bench_sprt.py"


def _best(f, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def look_cost() -> dict[str, float]:
    """Microseconds per unit: judging one unit, seeding its two chunks, playing them."""
    units = 20_000
    xs = np.random.default_rng(1).normal(0.5, 0.05, units)

    def judge():
        j = Judge(SprtSpec(0.0, 1e-9))  # never decides: every unit is judged
        for x in xs:
            j.add(float(x))

    tables = FarkleTables.make(None, None, None)
    seats = [parse_policy("ai"), parse_policy("ai:two-dice=0")]
    plans = [tables.plan(s, games=units * UNIT_GAMES, seed=1, crn=True,
                         chunk_games=UNIT_GAMES) for s in (seats, seats[::-1])]
    n = 2_000
    for p in plans:
        p.run_range(0, 1)  # compile and build the tables first
    play_and_seed = _best(lambda: [p.run_range(0, n) for p in plans]) / n
    seed = _best(lambda: [chunk_states(1, 0, n) for _ in plans]) / n
    return {"judge": _best(judge) / units * 1e6, "seed": seed * 1e6,
            "play": (play_and_seed - seed) * 1e6}


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=benchopts.count(), default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    spec = SprtSpec(0.0, 400 * math.log10(0.51 / 0.49), 0.05, 0.05)
    z = norm.ppf(0.95)
    fixed = math.ceil(((z + z) * 0.5 / 0.01) ** 2)  # sd <= 0.5 per game
    rows = []
    for a, b, truth in (("ai", "ai:two-dice=0", "H1"), ("ai:max-steps=3", "ai", "H0")):
        for crn in (True, False):
            res = [sprt(a, b, spec, seed=s, crn=crn) for s in range(args.seeds)]
            games = np.mean([r.games for r in res])
            right = sum(r.decision == truth for r in res)
            finite = [abs(r.llr) / spec.bounds[1] for r in res if math.isfinite(r.llr)]
            rows.append({
                "what": f"SPRT {a} vs {b} ({truth} true), 1-point difference, "
                        f"{'common' if crn else 'independent'} dice",
                "figure": f"{games:,.0f} games on average ({games / fixed:.0%} of a fixed "
                          f"test's {fixed:,}); {right} of {args.seeds} decisions right; "
                          + (f"LLR at the decision {np.mean(finite):.2f}x the bound"
                             if finite else "every unit even (no variance): undecided at "
                             "the most games")
                          + ("" if len(finite) in (0, len(res)) else
                             f" ({len(res) - len(finite)} runs with every unit even: "
                             "undecided)"),
                "command": COMMAND})
    cost = look_cost()
    rows.append({
        "what": f"SPRT, one look (a unit of {UNIT_GAMES} games with each seating, ai vs "
                "ai:two-dice=0, common dice)",
        "figure": f"judging {cost['judge']:.1f} us, seeding its two chunks "
                  f"{cost['seed']:.1f} us, playing its {2 * UNIT_GAMES} games "
                  f"{cost['play']:.1f} us",
        "command": COMMAND})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['what']}: {row['figure']}")


if __name__ == "__main__":
    main()
