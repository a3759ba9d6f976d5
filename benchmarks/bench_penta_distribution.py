"""Penta exact score distribution: time and memory of one policy's pass (prints numbers).

Run: ``.venv/bin/python benchmarks/bench_penta_distribution.py [--rules seed,...]
[--policies optimal,greedy] [--ties] [--json]`` (``--json``: one JSON list of rows for
``benchmarks/run_all.py``)

* pass: wall time of :func:`dicelab.penta.distribution.propagate` per rule set and
  policy, JIT warm, decision table in memory (target <= 60 s), best of two; the bytes the
  pass held at once (the tables aside; target with them <= 2 GB);
* end to end: ``score_distribution`` with an empty disk cache (load or build the decision
  table, then the pass), and then from the disk cache;
* ``--ties``: the optimal policy's mean and SD with ties settled by the fixed order
  (tolerance ``config.PENTA_TIE_EPS``) against the plain float argmax (tolerance 0):
  how far tie-breaking moves the SD (two table builds and passes per rule set);
* memory: the process's peak resident set size (values, one or two 270 MB decision
  tables, the pass).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import resource
import shutil
import tempfile
import time

import benchopts
import numpy as np

from dicelab import config
from dicelab.penta.distribution import propagate, score_distribution
from dicelab.penta.policies import (
    POLICIES,
    all_states,
    decision_tables,
    release_decision_tables,
)
from dicelab.penta.rules import N_BOXES, RULE_SETS, get_rules
from dicelab.penta.solver import DecisionSink, layer_groups, solve, solve_layer
from dicelab.penta.tables import N_ROLLS


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _mean_sd(p: np.ndarray) -> tuple[float, float]:
    s = np.arange(p.size)
    m = float(p @ s)
    return m, math.sqrt(float(p @ (s - m) ** 2))


def tie_shift(rules: str) -> tuple[float, float, int]:
    """(mean shift, SD shift, decisions that differ) between the fixed tie order and the
    plain float argmax for ``rules``' optimal policy."""
    rs = get_rules(rules)
    values = solve(rs).values
    states, slot = all_states()
    out = []
    for eps in (config.PENTA_TIE_EPS, 0.0):
        block = np.empty((states.size, N_ROLLS), dtype=np.uint16)
        for layer in layer_groups()[:N_BOXES]:
            solve_layer(values, layer, rs, DecisionSink(slot, block), eps=eps)
        out.append((block, _mean_sd(propagate(slot, block, rs)["probability"])))
    (a, (m0, s0)), (b, (m1, s1)) = out
    return abs(m1 - m0), abs(s1 - s0), int((a != b).sum())


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=benchopts.names(RULE_SETS), default=["seed", "free-joker"])
    ap.add_argument("--policies", type=benchopts.names(POLICIES), default=list(POLICIES))
    ap.add_argument("--ties", action="store_true", help="also measure the tie-breaking shift")
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    args = ap.parse_args()
    if "DICELAB_CACHE_DIR" not in os.environ:
        scratch = tempfile.mkdtemp(prefix="dicelab-bench-")
        atexit.register(shutil.rmtree, scratch, True)
        os.environ["DICELAB_CACHE_DIR"] = scratch
    say = (lambda *_: None) if args.json else print
    cmd = "python benchmarks/bench_penta_distribution.py"
    rows = []
    for rules in args.rules:
        rs = get_rules(rules)
        for policy in args.policies:
            t0 = time.perf_counter()
            first = score_distribution(policy, rs)  # tables built or loaded, JIT warmed
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            cached = score_distribution(policy, rs)
            warm = time.perf_counter() - t0
            assert cached.from_cache
            tables = decision_tables(policy, rs)
            block = tables.decisions[POLICIES.index(policy)]
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                arrays = propagate(tables.slot, block, rs)
                times.append(time.perf_counter() - t0)
            held = int(arrays["peak_bytes"])
            say(f"{rules:10s} {policy:8s}: mean {first.mean:.8f}, SD {first.sd:.6f}; pass "
                f"best {min(times):.2f} s (runs {', '.join(f'{t:.2f}' for t in times)}), "
                f"held {held / 1e6:,.0f} MB besides the {block.nbytes / 1e6:,.0f} MB table; "
                f"first call {cold:.2f} s, from the disk cache {warm:.3f} s")
            rows.append({"what": f"Penta exact distribution, {policy} ({rules}): pass / first "
                                 "call / from cache",
                         "figure": f"{min(times):.2f} s / {cold:.2f} s / {warm:.3f} s; "
                                   f"{held / 1e6:,.0f} MB + {block.nbytes / 1e6:,.0f} MB "
                                   "table", "command": cmd})
        release_decision_tables()
        if args.ties:
            dm, ds, n = tie_shift(rules)
            say(f"{rules:10s} ties: {n:,} optimal decisions differ; mean moves {dm:.1e}, "
                f"SD {ds:.1e}")
            rows.append({"what": f"Penta exact distribution ({rules}): SD shift from "
                                 "tie-breaking", "figure": f"{ds:.1e} ({n:,} decisions)",
                         "command": f"{cmd} --ties"})
    say(f"peak RSS: {peak_rss_mb():,.0f} MiB")
    rows.append({"what": "Penta exact distribution: peak RSS of the benchmark",
                 "figure": f"{peak_rss_mb():,.0f} MiB", "command": cmd})
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
