"""The benchmark scripts (benchmarks/): each imports, and a bad option is one ``error: ...``
line on stderr and exit code 2 before any work. Their figures are measured by running them
(docs/benchmarks.md), not here."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
SRC = BENCH.parent / "src"
SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "benchopts")


@pytest.fixture
def bench_path(monkeypatch):
    """The benchmarks folder first on the path, as when a script is run from it."""
    monkeypatch.syspath_prepend(str(BENCH))


def _load(name: str):
    return importlib.import_module(name)


def _top_imports(name: str) -> list[ast.ImportFrom]:
    tree = ast.parse((BENCH / f"{name}.py").read_text())
    return [node for node in tree.body if isinstance(node, ast.ImportFrom)]


def _defines(module: str, name: str) -> bool:
    """Whether dicelab's ``module`` binds ``name`` at its top level (read, not imported)."""
    path = SRC.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    if (path.parent / name).is_dir() or (path.parent / f"{name}.py").exists():
        return True  # a submodule of a package
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
    return False


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_scripts_import_public_names_that_exist(name):
    """Each name a script imports from dicelab at its top level is public and defined
    there (a private one goes when its module changes, and the script with it)."""
    for node in _top_imports(name):
        if not (node.module or "").startswith("dicelab"):
            continue
        for alias in node.names:
            assert not alias.name.startswith("_"), f"{name}: {node.module}.{alias.name}"
            assert _defines(node.module, alias.name), f"{name}: {node.module}.{alias.name}"


def test_the_import_check_sees_a_missing_name():
    assert _defines("dicelab.penta.policies", "policy_values")
    assert _defines("dicelab.penta.policies", "POLICIES")
    assert _defines("dicelab.farkle", "kernels")
    assert not _defines("dicelab.penta.policies", "_policy_values")


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_benchmark_script_imports(bench_path, name):
    assert callable(_load(name).main)


#: (script, its options): each a user error the script must refuse before any work.
BAD = [
    ("analyse_speed", ["--games", "0"]),
    ("analyse_speed", ["--distinct", "-1"]),
    ("analyse_speed", ["--repeats", "0"]),
    ("bench_engine", ["--only", "nope"]),
    ("bench_engine", ["--checkout", "/"]),
    ("bench_farkle", ["--games", "0"]),
    ("bench_farkle", ["--repeat", "0"]),
    ("bench_farkle", ["--threads", "0"]),
    ("bench_farkle", ["--threads", "4096"]),
    ("bench_farkle_solve", ["--rules", "nope"]),
    ("bench_first_run", ["--repeat", "0"]),
    ("bench_first_run", ["--only", "no such command"]),
    ("bench_house_rules", ["--target", "0"]),
    ("bench_house_rules", ["--repeat", "0"]),
    ("bench_house_rules", ["--facebook-response", "threshold-300"]),
    ("bench_house_rules", ["--facebook-only", "--facebook-response", "nope"]),
    ("bench_house_rules", ["--facebook-only", "--head-to-head"]),
    ("bench_house_rules", ["--facebook-only", "--default-only"]),
    ("bench_penta", ["--games", "0"]),
    ("bench_penta", ["--rules", "seed,nope"]),
    ("bench_penta", ["--rules", "seed,seed"]),
    ("bench_penta_distribution", ["--rules", "nope"]),
    ("bench_penta_distribution", ["--policies", "optimal,nope"]),
    ("bench_penta_objectives", ["--target", "-1"]),
    ("bench_penta_objectives", ["--target", "100000"]),
    ("bench_penta_objectives", ["--win-games", "0"]),
    ("bench_penta_objectives", ["--win-only"]),
    ("bench_penta_objectives", ["--win-only", "--win-games", "10", "--table"]),
    ("bench_referee", ["--games", "0"]),
    ("bench_referee", ["--games", "x"]),
    ("bench_rl", ["--games", "0"]),
    ("bench_rl", ["--seconds", "0"]),
    ("bench_rl", ["--seconds", "nan"]),
    ("bench_sprt", ["--seeds", "0"]),
    ("bench_tournament", ["--games", "1"]),
    ("bench_tournament", ["--penta-games", "0"]),
    ("bench_two_player", ["--targets", "0"]),
    ("bench_two_player", ["--rules", "nope"]),
    ("bench_two_player", ["--ending", "nope"]),
    ("bench_two_player", ["--threads", "4096"]),
    ("bench_user_policy", ["--games", "0"]),
    ("bench_user_policy", ["--python-games", "-5"]),
    ("compare_yatzy_solver", ["--games", "0"]),
    ("compare_yatzy_solver", ["--our-games", "0"]),
    ("penta_tie_gaps", ["--rules", "nope"]),
    ("penta_tie_gaps", ["--policies", "nope"]),
    ("run_all", ["--only", "nope.py"]),
    ("run_all", ["--shared"]),
    ("run_all", ["--out", "/no/such/dir/benchmarks.md"]),
    ("run_all", ["--out", "/"]),
    ("solver_lines", ["--old", "/"]),
    ("sprt_error_rates", ["--seeds", "0"]),
    ("sprt_error_rates", ["--quick", "--seeds", "3"]),
]


@pytest.mark.parametrize(("name", "argv"), BAD, ids=[f"{n} {' '.join(a)}" for n, a in BAD])
def test_a_bad_option_is_one_error_line(bench_path, monkeypatch, capsys, name, argv):
    main = _load(name).main
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err


def test_run_all_only_needs_a_table_to_replace_rows_of(bench_path, monkeypatch, capsys,
                                                       tmp_path):
    main = _load("run_all").main
    monkeypatch.setattr(sys, "argv", ["run_all.py", "--only", "bench_referee.py", "--out",
                                      str(tmp_path / "new.md")])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    assert "no" in capsys.readouterr().err
    assert not (tmp_path / "new.md").exists()


def test_a_script_with_a_bad_option_exits_2_with_one_line(tmp_path):
    """The same as a process: no traceback, exit code 2; a folder that is a checkout is
    taken."""
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src")}
    bad = subprocess.run([sys.executable, str(BENCH / "solver_lines.py"), "--old",
                          str(tmp_path)], capture_output=True, text=True, env=env)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.startswith("error: --old ") and bad.stderr.count("\n") == 1
    (tmp_path / "src" / "dicelab" / "farkle").mkdir(parents=True)
    good = subprocess.run([sys.executable, str(BENCH / "solver_lines.py"), "--old",
                           str(tmp_path)], capture_output=True, text=True, env=env)
    assert good.returncode == 0, good.stderr
    assert "before the engine" in good.stdout


@pytest.mark.parametrize("text", ["1", "7", "300"])
def test_counts_take_whole_numbers_from_their_least(bench_path, text):
    benchopts = _load("benchopts")
    assert benchopts.count(1)(text) == int(text)
    assert benchopts.count(0)("0") == 0


def test_names_take_a_list_of_known_names(bench_path):
    benchopts = _load("benchopts")
    parse = benchopts.names(["seed", "hasbro"])
    assert parse("hasbro,seed") == ["hasbro", "seed"]
    for bad in ("", "seed,", "nope", "seed,seed"):
        with pytest.raises(Exception, match=r"not one of|twice"):
            parse(bad)


def test_bench_farkle_solve_times_only_warm_solvers(bench_path, monkeypatch, capsys):
    """Every solver it times has run once before (numba's compile or cache load is not
    in the figure): the threshold sweep has kernels of its own."""
    from types import SimpleNamespace

    bench = _load("bench_farkle_solve")
    ran = []

    def fake(name, **result):
        def solver(*args):
            ran.append(name)
            return SimpleNamespace(**result)
        return solver

    monkeypatch.setattr(bench.solitaire, "solve_max_ev", fake("max-ev", expected_score=1.0))
    monkeypatch.setattr(bench.solitaire, "solve_fastest",
                        fake("fastest", expected_turns_to_target=1.0))
    monkeypatch.setattr(bench.solitaire, "threshold_sweep", fake("sweep", best_threshold=50))
    timed = []
    real = bench.timed

    def checked(fn, *args, **kw):
        before = set(ran)
        out = real(fn, *args, **kw)
        timed.append((ran[-1], ran[-1] in before))
        return out

    monkeypatch.setattr(bench, "timed", checked)
    monkeypatch.setattr(sys, "argv", ["bench_farkle_solve.py", "--json"])
    bench.main()
    assert [t for t, _ in timed] == ["max-ev", "fastest", "fastest", "fastest", "sweep"]
    assert all(warm for _, warm in timed), timed
    assert "threshold sweep" in capsys.readouterr().out


def test_bench_user_policy_solves_in_a_cache_of_its_own(bench_path, monkeypatch, capsys,
                                                        tmp_path):
    """The user's cache may hold the best response and the exact pair the timed commands
    solve: the run uses an empty cache of its own, with optimal-win solved into it first."""
    bench = _load("bench_user_policy")
    user = tmp_path / "user-cache"
    user.mkdir()
    (user / "farkle-best-response-cautious.npz").write_bytes(b"")
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(user))
    seen = []

    def run(argv, **kw):
        where = os.environ["DICELAB_CACHE_DIR"]
        seen.append((argv[1], where, sorted(os.listdir(where))))
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(bench.subprocess, "run", run)
    monkeypatch.setattr(bench, "simulation_rates", lambda games: ((2.0, 2.0), (1.0, 1.0)))
    monkeypatch.setattr(bench, "python_rate", lambda games: (1.0, 1.0))
    monkeypatch.setattr(sys, "argv", ["bench_user_policy.py", "--json"])
    bench.main()
    assert [cmd for cmd, _, _ in seen] == ["solve", "compare", "evaluate"]
    assert {where for _, where, _ in seen} != {str(user)}
    assert len({where for _, where, _ in seen}) == 1
    assert seen[0][2] == []
    assert "budget" in capsys.readouterr().out


@pytest.mark.parametrize("shared", [False, True])
def test_run_all_only_rows_name_their_machine(bench_path, shared):
    """A row replaced by --only names the machine it was measured on: the table's header
    names the machine of the whole run, which may be another."""
    import datetime as dt

    run_all = _load("run_all")
    note = run_all.only_note(dt.date(2026, 12, 6), "Some CPU, 2 cores, Python 3.11.7", 1.25,
                             2.0, shared)
    assert note.startswith(" (measured 2026-12-06 on Some CPU, 2 cores, Python 3.11.7, "
                           "load average 1.2 to 2.0")
    assert note.endswith("; the machine shared with other work)" if shared else "2.0)")
