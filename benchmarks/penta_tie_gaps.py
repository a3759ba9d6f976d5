"""Penta: do ties and genuine differences between options stay apart from ``TIE_EPS``?

    .venv/bin/python benchmarks/penta_tie_gaps.py [--rules seed,hasbro,...]
        [--policies optimal,greedy]

Decisions treat options within ``config.PENTA_TIE_EPS`` points of the best as ties
(settled by a fixed order, never by rounding). That is only right if every gap between an
option and the best option of its decision is either rounding noise (far below the
tolerance) or genuine (far above). This scans every option of every reachable state: every box for
every final roll, and every keep of every roll with one and with two rerolls left. It
prints, per rule set and policy, the number of options, the histogram of their gaps to
the best (log10 bins), the largest gap below ``TIE_EPS`` and the smallest one above it.
It exits 1 if a gap lies within a factor of 10 of ``TIE_EPS`` on either side. Run it
after adding a rule set or changing scoring. About 2-3 minutes per rule set and policy.
"""

from __future__ import annotations

import math
import sys
import time

import benchopts
import numpy as np
from numba import njit

from dicelab import config
from dicelab.penta.policies import POLICIES, policy_values
from dicelab.penta.rules import N_BOXES, RULE_SETS, get_rules, state_fifty, state_mask, state_up
from dicelab.penta.scoring import TABLES, roll_box_scores
from dicelab.penta.solver import layer_states
from dicelab.penta.tables import N_ROLLS, N_SUBSETS, SUBSETS
from dicelab.penta.widget import best_box, new_turn_scratch, state_value

TIE_EPS = config.PENTA_TIE_EPS

#: Histogram bins: bin 0 counts bit-exact ties, bin i >= 1 gaps in [10**(i+LO-1), 10**(i+LO)).
LO = -17
N_BINS = 21


@njit(inline="always")
def _add(hist, extremes, gap, eps):
    if gap == 0.0:
        hist[0] += 1
        return
    e = math.floor(math.log10(gap)) - LO + 1
    hist[min(max(e, 1), N_BINS - 1)] += 1
    if gap < eps:
        extremes[0] = max(extremes[0], gap)
    else:
        extremes[1] = min(extremes[1], gap)


@njit(cache=True)
def _scan(V, rp, T, states, eps, h_box, x_box, h_keep, x_keep):
    """Add the gaps of every option of ``states`` to the histograms; ``x_*``: (largest gap
    below eps, smallest gap at or above eps). The best option itself is not counted."""
    W = new_turn_scratch()
    scores = np.empty(N_BOXES, np.int64)
    one = np.empty(N_BOXES, np.int64)
    vals = np.empty(N_BOXES)
    for s in states:
        mask, up, fifty = state_mask(s), state_up(s), state_fifty(s)
        for r in range(N_ROLLS):
            bonus = roll_box_scores(rp, T, mask, fifty, r, scores)
            m = 0
            for b in range(N_BOXES):
                if scores[b] < 0:
                    continue
                one[:] = -1
                one[b] = scores[b]
                vals[m] = best_box(V, mask, up, fifty, one, bonus, eps)[0]
                m += 1
            best = vals[:m].max()
            skipped = False
            for i in range(m):
                if vals[i] == best and not skipped:
                    skipped = True
                    continue
                _add(h_box, x_box, best - vals[i], eps)
        state_value(V, rp, T, mask, up, fifty, W, False, eps)
        for E in (W.E1, W.E2):  # keep values with one, then two rerolls left
            for r in range(N_ROLLS):
                best = -np.inf
                for j in range(N_SUBSETS[r]):
                    best = max(best, E[SUBSETS[r, j]])
                skipped = False
                for j in range(N_SUBSETS[r]):
                    gap = best - E[SUBSETS[r, j]]
                    if gap == 0.0 and not skipped:
                        skipped = True
                        continue
                    _add(h_keep, x_keep, gap, eps)


def scan(rules: str, policy: str) -> bool:
    """Print the gap report of one rule set and policy; True if the gaps stay clear."""
    rs = get_rules(rules)
    V = np.ascontiguousarray(policy_values(policy, rs))
    t0 = time.perf_counter()
    hists = {k: np.zeros(N_BINS, np.int64) for k in ("box", "keep")}
    ext = {k: np.array([0.0, np.inf]) for k in ("box", "keep")}
    for layer in layer_states()[:N_BOXES]:
        _scan(V, rs.params, TABLES, layer, TIE_EPS, hists["box"], ext["box"], hists["keep"],
              ext["keep"])
    print(f"{rules} {policy} ({time.perf_counter() - t0:.0f} s), TIE_EPS = {TIE_EPS:g}")
    clear = True
    for kind in ("box", "keep"):
        h, (noise, genuine) = hists[kind], ext[kind]
        print(f"  {kind}: {h.sum():,} options other than the best, {h[0]:,} bit-exact ties")
        for i in range(1, N_BINS):
            if h[i]:
                print(f"    gap in [1e{i + LO - 1}, 1e{i + LO}): {h[i]:,}")
        print(f"    largest gap below TIE_EPS: {noise:.3g}; smallest at or above: {genuine:.3g}")
        if noise > TIE_EPS / 10 or genuine < 10 * TIE_EPS:
            print("    WARNING: a gap lies within a factor of 10 of TIE_EPS")
            clear = False
    return clear


def main() -> int:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=benchopts.names(RULE_SETS), default=list(RULE_SETS))
    ap.add_argument("--policies", type=benchopts.names(POLICIES), default=list(POLICIES))
    args = ap.parse_args()
    ok = [scan(r, p) for r in args.rules for p in args.policies]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
