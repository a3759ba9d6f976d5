"""A first run compiles only the kernels its command needs, each in one type specialisation.

Each command runs in a fresh interpreter with empty kernel and table caches, numba's
compile events counted per jitted function. The budgets of a first run (seconds) are
measured by benchmarks/bench_first_run.py, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: Run in the child: the command, then every dicelab function numba compiled in its
#: process (a compile stopped at its start, :func:`dicelab.jit.loads`, is none) and how often.
COUNT = """\
import json, os, sys
from numba.core import event

compiled, pid = {}, os.getpid()

class Count(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data["dispatcher"]
        f = getattr(d, "py_func", None)
        if (f is not None and f.__module__.startswith("dicelab") and os.getpid() == pid
                and tuple(ev.data["args"]) in d.overloads):  # compiled, not stopped
            name = f"{f.__module__}.{f.__qualname__}"
            compiled[name] = compiled.get(name, 0) + 1

event.register("numba:compile", Count())
from dicelab.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(compiled))
"""


def _compiled(tmp_path, *argv: str, threads: int = 2) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "DICELAB_CHOSEN_NUMBA_CACHE_DIR")}
    env.update(DICELAB_JIT_CACHE_DIR=str(tmp_path / "jit"),
               DICELAB_CACHE_DIR=str(tmp_path / "tables"), NUMBA_NUM_THREADS=str(threads))
    done = subprocess.run([sys.executable, "-c", COUNT, *argv], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "modules", "absent"), [
    (("simulate", "-s", "threshold-300", "-n", "20000", "--seed", "1"),
     {"dicelab.farkle.lanes", "dicelab.rng"}, set()),
    (("solve", "penta"),
     {"dicelab.penta.solver", "dicelab.penta.widget", "dicelab.penta.scoring"},
     {"dicelab.penta.solver._decisions_blocks"}),
    # the values come from the decision build's sweep: the values kernel is not compiled;
    # a table of seats that play from decision tables does not compile the turn of the
    # seats that decide turn by turn (objectives', penta-win)
    (("simulate", "-s", "optimal", "-n", "20000", "--seed", "1"),
     {"dicelab.penta.solver", "dicelab.penta.widget", "dicelab.penta.scoring",
      "dicelab.penta.simulate", "dicelab.rng"},
     {"dicelab.penta.solver._values_blocks", "dicelab.penta.simulate._play_seat_online",
      "dicelab.penta.simulate._play_chunk_online"}),
])
def test_a_first_run_compiles_what_it_needs_once(tmp_path, argv, modules, absent):
    compiled = _compiled(tmp_path, *argv)
    assert compiled, "nothing compiled: the caches were not empty"
    assert {name.rpartition(".")[0] for name in compiled} <= modules, compiled
    assert not absent & compiled.keys()
    assert {name: n for name, n in compiled.items() if n != 1} == {}


#: What the solver's kernels compile in a child process on two cores
#: (:func:`dicelab.penta.solver._compile_split`).
ASIDE = {"dicelab.penta.widget.visit_box_lanes", "dicelab.penta.widget.best_box",
         "dicelab.penta.widget.reroll_stage_lanes"}
#: ... and the Farkle threshold lanes' (:func:`dicelab.farkle.lanes._compile_split`)
LANES_ASIDE = {"dicelab.farkle.lanes._vec"}


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                    reason="compiles in a child process only where it forks, on 2+ cores")
@pytest.mark.parametrize(("argv", "kernel", "aside"), [
    (("solve", "penta"), "dicelab.penta.solver._values_blocks", ASIDE),
    (("simulate", "-s", "optimal", "-n", "20000", "--seed", "1"),
     "dicelab.penta.solver._decisions_blocks", ASIDE),
    (("simulate", "-s", "threshold-300", "-n", "20000", "--seed", "1"),
     "dicelab.farkle.lanes._chunk", LANES_ASIDE),
    (("simulate", "-s", "threshold-300", "--vs", "threshold-500", "--vs", "threshold-350",
      "-n", "20000", "--seed", "1"), "dicelab.farkle.lanes._chunk", LANES_ASIDE),
])
def test_a_kernel_compiles_part_of_itself_in_a_child_process(tmp_path, argv, kernel, aside):
    """The child stores what it compiled and the command's process loads it: the command's
    process compiles none of it (the argument types of the plan are the kernel's; the
    lanes' seat count is a compile-time constant, so one seat and three), and the rest
    once."""
    compiled = _compiled(tmp_path, *argv)
    assert kernel in compiled
    assert not aside & compiled.keys(), compiled
    assert {name: n for name, n in compiled.items() if n != 1} == {}


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "aside"), [
    (("solve", "penta"), ASIDE),
    (("simulate", "-s", "threshold-300", "-n", "2000", "--seed", "1"), LANES_ASIDE)])
def test_on_one_thread_a_kernel_compiles_all_of_itself(tmp_path, argv, aside):
    compiled = _compiled(tmp_path, *argv, threads=1)
    assert compiled.keys() >= aside, compiled
    assert {name: n for name, n in compiled.items() if n != 1} == {}


@pytest.mark.slow
def test_two_first_runs_at_once_agree(tmp_path):
    """Two first runs race on the same empty caches (each compiling, each with its child
    process): both finish with the same optimum, and a third run loads what they stored."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "DICELAB_CHOSEN_NUMBA_CACHE_DIR")}
    env.update(DICELAB_JIT_CACHE_DIR=str(tmp_path / "jit"), NUMBA_NUM_THREADS="2")
    argv = [sys.executable, "-m", "dicelab", "solve", "penta", "--json"]
    runs = [subprocess.Popen(argv, env={**env, "DICELAB_CACHE_DIR": str(tmp_path / f"t{i}")},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(2)]
    outs = [r.communicate() for r in runs]
    assert [r.returncode for r in runs] == [0, 0], outs
    scores = {json.loads(out)["expected_final_score"] for out, _ in outs}
    assert len(scores) == 1  # bit for bit
    assert scores.pop() == pytest.approx(254.48484588168247, rel=1e-12)
    assert _compiled(tmp_path, "solve", "penta") == {}  # a new table cache: loads the kernels


def test_kernel_arguments_made_fresh_or_shared_are_one_type(tmp_path):
    """numba compiles a kernel again for a read-only array where it had a writable one: the
    arrays the engine, the simulation kernels and the Penta seats take are of one type
    whether made fresh, shared read-only or memory-mapped from the cache."""
    import numpy as np
    from numba import typeof

    from dicelab import cache
    from dicelab.farkle.engine.model import model
    from dicelab.farkle.policies import seat_arrays
    from dicelab.farkle.policy_table import PolicyTable
    from dicelab.farkle.rules import PRESETS
    from dicelab.farkle.solve import last_round, optimal_seat
    from dicelab.penta.objective_play import SEAT_ROWS, frozen_seat
    from dicelab.penta.widget import RowTable

    rules = PRESETS["default"]
    last = last_round(rules, 4, 1e-10)
    # one total (a broadcast of one lead's row is contiguous: it was passed read-only)
    seats = [optimal_seat(model(rules), u, last) for u in (1, 4)]
    assert len({typeof(s) for s in seats}) == 1

    def table(bank: np.ndarray) -> PolicyTable:
        return PolicyTable("t", np.zeros(bank.shape, np.float32), bank)

    bank = np.zeros((1, 1, 1, 1, 8, 7), np.uint8)
    bank[..., -1, 1:] = 1
    shared = bank.copy()
    shared.setflags(write=False)
    made = [seat_arrays([table(b)], rules, 1000) for b in (bank, shared)]
    assert len({typeof(s) for s in made}) == 1

    cache.store("first-run-rows", "1", {"F": np.linspace(0.0, 1.0, 10)})
    mapped = cache.load_mapped("first-run-rows", "1", {"F"})["F"]
    z = np.zeros(3, np.int64)
    rows = [frozen_seat(SEAT_ROWS, R=RowTable(F, z, z, z)) for F in (mapped, np.zeros(10))]
    assert len({typeof(s) for s in rows}) == 1
