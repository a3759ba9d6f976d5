"""``dicelab.jit.compile_split`` and ``loads`` on a toy kernel, in fresh interpreters.

A module of small cached functions (a kernel and the helpers it calls) is compiled with
three helpers aside, in a forked child; the parent's numba compile events show what it
compiled itself. The solver's own split is checked on a first run by test_first_run.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

TOY = """\
from numba import njit

from dicelab.jit import helper


@helper(cache=True)
def double(x):
    return 2 * x


@helper(cache=True)
def triple(x):
    return 3 * x


@helper(cache=True)
def square(x):
    return x * x


@helper(cache=True)
def plus_one(x):
    return x + 1


@njit(cache=True)
def kernel(x):
    return plus_one(double(x)) + triple(x) + square(x)
"""

#: In the child: whether the kernel loads, then (if not) the split, the kernel's value and
#: what this process compiled (compiles that finished, in this process).
RUN = """\
import json, os, sys
from numba import types
from numba.core import event
from dicelab import jit
import toy

compiled, pid = [], os.getpid()

class Count(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data["dispatcher"]
        if os.getpid() == pid and tuple(ev.data["args"]) in d.overloads:
            compiled.append(d.py_func.__name__)

event.register("numba:compile", Count())
loaded = jit.loads(toy.kernel, (3,))
if not loaded:
    i64 = (types.int64,)
    # the parent is done with its part long before the child with its three
    jit.compile_split([(toy.double, i64), (toy.triple, i64), (toy.square, i64)],
                      [(toy.plus_one, i64, 1)], int(sys.argv[1]))
print(json.dumps({"loaded": loaded, "value": int(toy.kernel(3)), "compiled": compiled}))
"""


def _run(tmp_path, threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DICELAB_CHOSEN_NUMBA_CACHE_DIR"}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "jit"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", RUN, str(threads)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "toy.py").write_text(TOY)
    return tmp_path


@pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
                    reason="compiles in a child process only where it forks, on 2+ cores")
def test_the_child_compiles_aside_and_the_kernel_loads_it(toy):
    first = _run(toy, threads=2)
    assert first["loaded"] is False and first["value"] == 7 + 9 + 9
    # plus_one here, the others in the child (loaded here from the cache), then the kernel
    assert first["compiled"] == ["plus_one", "kernel"]
    again = _run(toy, threads=2)
    assert again == {"loaded": True, "value": 25, "compiled": []}


def test_on_one_thread_the_kernel_compiles_everything_itself(toy):
    first = _run(toy, threads=1)
    assert first["loaded"] is False and first["value"] == 25
    assert sorted(first["compiled"]) == ["double", "kernel", "plus_one", "square", "triple"]


def test_a_progress_bar_says_while_kernels_compile(monkeypatch):
    """A first run's bar stood at its description while numba compiled for a minute (an
    optimal-win solve's kernels): it says it is compiling, then what it said before, and
    a kernel already compiled says nothing."""
    import io

    from numba import njit

    from dicelab.cli import render

    said = []

    class Bar:  # rich's Progress, as the bar drives it
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def add_task(self, description, total):
            said.append(description)

        def update(self, task, description=None, **kwargs):
            if description is not None and description != said[-1]:
                said.append(description)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    @njit
    def fresh(x):  # new in this process: compiles at its first call
        return x + 1

    monkeypatch.setattr(render, "Progress", Bar)
    monkeypatch.setattr(sys, "stderr", Terminal())
    with render.progress_bar(True, 10, "solving") as advance:
        advance(1, 10, "building")
        assert fresh(1) == 2
        advance(2, 10)
        assert fresh(2) == 3  # compiled: nothing to say
    assert said == ["solving", "building", render.COMPILING, "building", "solving"]


def test_a_progress_bars_clock_runs_on_once_its_count_is_complete():
    """A first solve stood at 1000/1000 while its table kernel compiled, and rich's clock
    stopped with the count: the bar's clock is the time since it began, complete or not."""
    from rich.progress import Progress

    from dicelab.cli import render

    now = [100.0]
    bar = Progress(get_time=lambda: now[0])
    task = bar.add_task("solving", total=10)
    bar.update(task, completed=10)  # complete at 0:00:00
    now[0] += 75
    clock = render.WallClockColumn().render(bar.tasks[task])
    assert clock.plain == "0:01:15"
