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

#: Run in the child: the command, then every dicelab function numba compiled and how often.
COUNT = """\
import json, sys
from numba.core import event

compiled = {}

class Count(event.Listener):
    def on_start(self, ev):
        f = getattr(ev.data["dispatcher"], "py_func", None)
        if f is not None and f.__module__.startswith("dicelab"):
            name = f"{f.__module__}.{f.__qualname__}"
            compiled[name] = compiled.get(name, 0) + 1

    def on_end(self, ev):
        pass

event.register("numba:compile", Count())
from dicelab.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(compiled))
"""


def _compiled(tmp_path, *argv: str) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "DICELAB_CHOSEN_NUMBA_CACHE_DIR")}
    env.update(DICELAB_JIT_CACHE_DIR=str(tmp_path / "jit"),
               DICELAB_CACHE_DIR=str(tmp_path / "tables"))
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
