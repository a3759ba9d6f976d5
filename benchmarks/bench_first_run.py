"""First run: three commands on a fresh install, every kernel and table cache empty.

    .venv/bin/python benchmarks/bench_first_run.py [--repeat R] [--breakdown] [--json]
                                                   [--only WORDS]

Each command runs as a user's first command does: a new ``dicelab`` process with a
temporary home directory and empty ``DICELAB_JIT_CACHE_DIR`` and ``DICELAB_CACHE_DIR``,
so it compiles every kernel it needs and builds every table; then once more with those
kernels compiled (the table cache empty again), for comparison. Each is reported beside
its budget:

* ``dicelab simulate -s threshold-300``: 4 s;
* ``dicelab simulate -s optimal``: 12 s;
* ``dicelab solve penta``: at most the time the Rust ``yatzy-solver`` (PyPI, NOT a dicelab
  dependency: ``pip install yatzy-solver``) takes to build its table of the American
  game, measured in the same run, in a fresh process of its own; without it installed
  that row says so and the budget is not judged.

Also measured: what finding and hashing the kernel sources costs a process that imports
numba (the key of the kernel cache, :mod:`dicelab`). Figures are wall-clock seconds and the CPU
seconds (user + system) of the process, best of ``--repeat`` runs by wall time; the
machine should be otherwise idle (on a busy one compare CPU seconds, which include the
process a first run forks to compile beside it: compiling on two cores shortens the wall
time, not the CPU time). ``--breakdown``
also prints, for each command's first run, numba's compile time per kernel in CPU seconds
(what dominates a first run), in the command's process and in that child (see
docs/design/first-run.md). ``--only 'solve penta'`` measures that command alone.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchopts

#: (command line after ``dicelab``, budget in seconds; None: yatzy-solver's build)
COMMANDS = [
    (["simulate", "-s", "threshold-300"], 4.0),
    (["simulate", "-s", "optimal"], 12.0),
    (["solve", "penta"], None),
]

YATZY_BUILD = """\
import time
import yatzy_solver as ys
variant = ys.Variant("american")
t0 = time.perf_counter()
ys.Solver.build(variant)
print(time.perf_counter() - t0)
"""

#: Run in the child for --breakdown: the command, with numba's compile events timed per
#: kernel in CPU seconds of the compiling thread, each without the kernels it compiled on
#: the way; one line per finished compile (process id, kernel, seconds) appended to the
#: file named by argv[1], also from a process the command forks to compile beside it.
BREAKDOWN = """\
import os, sys, threading, time
from numba.core import event

out, local = sys.argv[1], threading.local()

class Timer(event.Listener):
    def on_start(self, ev):
        stack = local.__dict__.setdefault("stack", [])
        f = getattr(ev.data["dispatcher"], "py_func", None)
        name = f"{f.__module__}.{f.__qualname__}" if f else "?"
        stack.append([name, time.thread_time(), 0.0])

    def on_end(self, ev):
        name, t0, inner = local.stack.pop()
        spent = time.thread_time() - t0
        if local.stack:
            local.stack[-1][2] += spent
        with open(out, "a") as f:
            f.write(f"{os.getpid()}\\t{name}\\t{spent - inner}\\n")

event.register("numba:compile", Timer())
from dicelab.cli.entry import main
sys.argv = ["dicelab", *sys.argv[2:]]
try:
    main()
except SystemExit:
    pass
print(os.getpid(), file=sys.stderr)
"""


def _dicelab() -> list[str]:
    """The console script of this environment (what a user runs), else ``python -m``."""
    script = Path(sys.executable).with_name("dicelab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dicelab"]


def _fresh_env(root: Path) -> dict[str, str]:
    """This environment with a new home and empty dicelab caches under ``root``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "DICELAB_CHOSEN_NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    (root / "home").mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(root / "home"), DICELAB_JIT_CACHE_DIR=str(root / "jit"),
               DICELAB_CACHE_DIR=str(root / "tables"))
    return env


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout) of one process; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def first_run(args: list[str], repeat: int) -> dict[str, float]:
    """Best (by wall) of ``repeat`` first runs of ``dicelab args``, each with empty caches,
    and of the same command with its kernels compiled and the table cache emptied."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        root = Path(tempfile.mkdtemp(prefix="dicelab-first-run-"))
        try:
            env = _fresh_env(root)
            wall, cpu, _ = _run([*_dicelab(), *args], env)
            shutil.rmtree(root / "tables", ignore_errors=True)
            warm_wall, warm_cpu, _ = _run([*_dicelab(), *args], env)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        if wall < best.get("wall", float("inf")):
            best.update(wall=wall, cpu=cpu)
        if warm_wall < best.get("warm_wall", float("inf")):
            best.update(warm_wall=warm_wall, warm_cpu=warm_cpu)
    return best


def yatzy_build(repeat: int) -> dict[str, float] | None:
    """Best of ``repeat`` builds of yatzy-solver's American table, each in a new process:
    the build's wall time and the process's CPU time; None if it is not installed."""
    try:
        import yatzy_solver  # noqa: F401 - only whether it is there
    except ImportError:
        return None
    best: dict[str, float] = {}
    for _ in range(repeat):
        _, cpu, out = _run([sys.executable, "-c", YATZY_BUILD], dict(os.environ))
        wall = float(out.strip().splitlines()[-1])
        if wall < best.get("wall", float("inf")):
            best.update(wall=wall, cpu=cpu)
    return best


def breakdown(args: list[str]) -> tuple[dict[str, float], dict[str, float]]:
    """CPU seconds of numba compiling per kernel in a first run of ``dicelab args``, each
    without the kernels compiled inside it (CPU time of the compiling thread: the same on a
    busy machine, and a compile beside running kernels does not read longer): in the
    command's process, and in the processes it forked to compile beside it."""
    root = Path(tempfile.mkdtemp(prefix="dicelab-first-run-"))
    log = root / "compiles.tsv"
    try:
        done = subprocess.run([sys.executable, "-c", BREAKDOWN, str(log), *args],
                              env=_fresh_env(root), capture_output=True, text=True, check=True)
        lines = log.read_text().splitlines() if log.exists() else []
    finally:
        shutil.rmtree(root, ignore_errors=True)
    main_pid = done.stderr.strip().splitlines()[-1]
    here: dict[str, float] = {}
    aside: dict[str, float] = {}
    for line in lines:
        pid, name, seconds = line.split("\t")
        into = here if pid == main_pid else aside
        into[name] = into.get(name, 0.0) + float(seconds)
    return here, aside


def key_cost(repeat: int = 20) -> tuple[float, int, int]:
    """Seconds per process of finding and hashing the kernel sources (best of ``repeat``),
    and how many of the package's modules they are."""
    import dicelab

    package = os.path.dirname(os.path.abspath(dicelab.__file__))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        dicelab._kernel_source_hash(package)
        best = min(best, time.perf_counter() - t0)
    return best, len(dicelab.kernel_sources(package)), len(dicelab._modules(package))


def _verdict(seconds: float, budget: float | None) -> str:
    if budget is None:
        return "budget not judged: yatzy-solver is not installed"
    return f"budget {budget:.1f} s: {'met' if seconds <= budget else 'over'}"


def main() -> int:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=benchopts.count(), default=2,
                    help="runs per figure (best is kept)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also the compile time per kernel of each first run")
    ap.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    ap.add_argument("--only", metavar="WORDS",
                    help="measure only the commands whose line contains WORDS "
                         "(e.g. 'solve penta'); yatzy-solver is measured all the same")
    args = ap.parse_args()
    lines = [" ".join(["dicelab", *argv]) for argv, _ in COMMANDS]
    if args.only is not None and not any(args.only in line for line in lines):
        ap.error(f"--only {args.only!r} is in no command measured: "
                 + "; ".join(f"'{line}'" for line in lines))
    say = (lambda *_: None) if args.json else print
    rows = []
    peer = yatzy_build(args.repeat)
    if peer is None:
        say("yatzy-solver is not installed here (pip install yatzy-solver): the budget of "
            "`dicelab solve penta` is not judged")
        rows.append({"what": "yatzy-solver table build, American (the budget of "
                             "`dicelab solve penta`)",
                     "figure": "not measured: yatzy-solver is not installed",
                     "command": "python benchmarks/bench_first_run.py"})
    else:
        say(f"yatzy-solver build   {peer['wall']:6.2f} s wall, {peer['cpu']:6.2f} s CPU")
        rows.append({"what": "yatzy-solver table build, American, new process (the budget of "
                             "`dicelab solve penta`)",
                     "figure": f"{peer['wall']:.2f} s, {peer['cpu']:.2f} s CPU",
                     "command": "python benchmarks/bench_first_run.py"})
    for argv, budget in COMMANDS:
        command = " ".join(["dicelab", *argv])
        if args.only and args.only not in command:
            continue
        if budget is None and peer is not None:
            budget = peer["wall"]
        r = first_run(argv, args.repeat)
        say(f"{command:34s} first run {r['wall']:6.2f} s wall, {r['cpu']:6.2f} s CPU "
            f"({_verdict(r['wall'], budget)}); kernels compiled {r['warm_wall']:.2f} s wall, "
            f"{r['warm_cpu']:.2f} s CPU")
        rows.append({"what": f"First run (empty kernel and table caches): `{command}`",
                     "figure": f"{r['wall']:.2f} s, {r['cpu']:.2f} s CPU "
                               f"({_verdict(r['wall'], budget)}); kernels compiled: "
                               f"{r['warm_wall']:.2f} s, {r['warm_cpu']:.2f} s CPU",
                     "command": "python benchmarks/bench_first_run.py"})
        if args.breakdown:
            here, aside = breakdown(argv)
            for title, spent in (("in the command's process", here),
                                 ("beside it, in a forked process", aside)):
                if spent:
                    say(f"    compiling {title}: {sum(spent.values()):.2f} s CPU")
                    for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1])[:10]:
                        say(f"      {seconds:6.2f} s  {name}")
    seconds, kernel_modules, modules = key_cost()
    say(f"kernel cache key     {seconds * 1000:.1f} ms per process "
        f"({kernel_modules} of {modules} modules)")
    rows.append({"what": "Kernel cache key: finding and hashing the kernel sources, once "
                         "per process, when numba is first imported",
                 "figure": f"{seconds * 1000:.1f} ms ({kernel_modules} of {modules} modules)",
                 "command": "python benchmarks/bench_first_run.py"})
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
