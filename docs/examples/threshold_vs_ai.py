"""Which fixed threshold does best against the app's computer (`ai`), exactly?

    .venv/bin/python docs/examples/threshold_vs_ai.py [--target 5000] [--rules default]

Every pair is evaluated exactly (no sampling) in a two-seat game, with the score being
P(win) + ½P(tie) averaged over both seats, as `dicelab compare --exact` reports it.
The best response to `ai` (`optimal-win:vs=ai`) is the ceiling: no policy scores more
against `ai`. With the defaults (under a minute; evaluations are cached) it prints:

    score against ai, rules default, target 5,000
      threshold-200  43.0171%  worse
      threshold-250  45.3381%  worse
      threshold-300  45.1185%  worse
      threshold-350  42.2879%  worse
      threshold-400  38.6418%  worse
      threshold-450  37.3761%  worse
      threshold-500  39.1018%  worse
      threshold-550  40.5864%  worse
      threshold-600  41.0650%  worse
      threshold-650  40.2548%  worse
    best fixed threshold: threshold-250 (45.3381%)
    best response, optimal-win:vs=ai: 66.2428%
"""

from __future__ import annotations

import argparse

from dicelab.farkle.exact import exact_pair


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=int, default=5000)
    ap.add_argument("--rules", default="default")
    args = ap.parse_args()
    print(f"score against ai, rules {args.rules}, target {args.target:,}")
    best = None
    for t in range(200, 651, 50):
        p = exact_pair(f"threshold-{t}", "ai", rules=args.rules, target=args.target)
        print(f"  threshold-{t:<4} {p.score:.4%}  {p.verdict}")
        if best is None or p.score > best.score:
            best = p
    print(f"best fixed threshold: {best.policy} ({best.score:.4%})")
    ceiling = exact_pair("optimal-win:vs=ai", "ai", rules=args.rules, target=args.target)
    print(f"best response, {ceiling.policy}: {ceiling.score:.4%}")


if __name__ == "__main__":
    main()
