"""Peer comparison: dicelab's Penta solver and simulator against yatzy-solver (PyPI).

    .venv/bin/python benchmarks/compare_yatzy_solver.py [--games N]

yatzy-solver is NOT a dicelab dependency: install it into the same environment to run
this comparison (``pip install yatzy-solver``); without it the script says so and
exits 0. Both solve the same game, American rules with the forced joker (dicelab's
``hasbro`` rule set, optimum 254.5877), in the same process, one after the other, and
both simulate optimal games; the script prints wall-clock times, values and games/s.
"""

from __future__ import annotations

import sys
import time

import benchopts


def main(argv: list[str] | None = None) -> int:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=benchopts.count(), default=20_000, help="yatzy-solver games")
    ap.add_argument("--our-games", type=benchopts.count(), default=2_000_000, help="dicelab games")
    args = ap.parse_args(argv)
    try:
        import yatzy_solver
    except ImportError:
        print("yatzy-solver is not installed here (pip install yatzy-solver); nothing compared")
        return 0

    from dicelab.penta import solver as penta_solver
    from dicelab.penta.simulate import simulate_penta

    # dicelab: warm the JIT with one solve, then time a solve from scratch (no disk cache)
    penta_solver.solve("hasbro", use_cache=False)
    t0 = time.perf_counter()
    ours = penta_solver.solve("hasbro", use_cache=False)
    ours_s = time.perf_counter() - t0

    variant = yatzy_solver.Variant("american+forced-joker")
    t0 = time.perf_counter()
    peer = yatzy_solver.Solver.build(variant)
    peer_s = time.perf_counter() - t0
    peer_value = peer.state_value("upper 0 | filled -")

    print(f"solve  dicelab      {ours_s:7.2f} s  value {ours.expected_score:.8f}")
    print(f"solve  yatzy-solver {peer_s:7.2f} s  value {peer_value:.8f}")
    print(f"       ratio        {peer_s / ours_s:7.1f}x")

    simulate_penta(["optimal"], games=10_000, seed=1, rules="hasbro")  # tables + JIT
    r = simulate_penta(["optimal"], games=args.our_games, seed=1, rules="hasbro")
    ours_gps = r.games_per_s
    t0 = time.perf_counter()
    peer.simulate(args.games, seed=1)
    peer_gps = args.games / (time.perf_counter() - t0)
    mean = r.seat(0).mean_final_score.mean
    print(f"optimal games/s  dicelab      {ours_gps:12,.0f}  (mean {mean:.3f})")
    print(f"optimal games/s  yatzy-solver {peer_gps:12,.0f}")
    print(f"                 ratio        {ours_gps / peer_gps:12,.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
