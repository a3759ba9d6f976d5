"""Experiment files: every bad field named, sweeps expanded, and an interrupted run that
continues where it stopped and ends with the files of an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pandas as pd
import pytest
from cli_helpers import as_from_a_shell, run_cli

from dicelab.errors import UserError
from dicelab.experiment_file import (
    MADE_RESULTS,
    CellStore,
    parse_experiment,
    run_experiment_file,
    unfinished_run,
)

GOOD = """name = "demo"
kind = "tournament"
policies = ["ai", "threshold-T"]
games = 9000
seed = 4
target = 1500
[sweep]
T = { from = 200, to = 400, step = 100 }
"""


@pytest.mark.parametrize("text", [
    "policies = ['ai', 'max-ev']\nexact = false\ncrn = false\nseats = 3\n",
    "kind = 'compare'\npolicies = ['ai', 'max-ev']\nexact = true\nseats = 2\ncrn = true\n",
])
def test_fields_of_the_kind_are_taken(text):
    spec = parse_experiment(text, "exp.toml")
    assert spec.policies == ("ai", "max-ev")


def test_sweeps_expand_in_order():
    spec = parse_experiment(GOOD)
    assert spec.policies == ("ai", "threshold-200", "threshold-300", "threshold-400")


@pytest.mark.parametrize(("text", "field"), [
    ("policies = ['ai', 'max-ev']\nbogus = 1\n", "unknown field bogus;"),
    ("policies = ['ai', 'max-ev']\nbogus = 1\nmore = 2\n", "unknown fields bogus, more;"),
    ("policies = []\n[sweep]\nT = {from = 1, to = 2, step = 1}\n",
     "policies is empty: a tournament needs at least two policies"),
    ("kind = 'league'\npolicies = ['ai', 'max-ev']\n", "kind"),
    ("name = 'x'\n", "policies is missing"),
    ("policies = 'ai'\n", "policies must be a list"),
    ("policies = ['ai', 'bogus']\n", "policies: unknown policy 'bogus'"),
    ("policies = ['ai']\n", "policies: a tournament needs at least two"),
    ("kind = 'compare'\npolicies = ['ai']\n", "policies: a compare needs at least two"),
    ("policies = ['ai', 'max-ev']\nseats = 9\n", "exp.toml: seats must be 2 to 7"),
    ("policies = ['ai', 'max-ev']\nseats = 1\n", "exp.toml: seats must be 2 to 7"),
    ("policies = ['optimal', 'greedy']\nseats = 1\n", "exp.toml: seats must be at"),
    ("policies = ['optimal-win', 'ai']\nseats = 3\n", "exp.toml: seats: optimal-win plays"),
    ("policies = ['ai', 'bogus']\nseats = 1\n", "exp.toml: policies: unknown policy"),
    ("policies = ['ai', 'max-ev']\nseats = '2'\n", "seats must be an integer"),
    ("policies = ['ai', 'max-ev']\ngames = 0\n", "exp.toml: games must be a positive"),
    ("policies = ['ai', 'max-ev']\ngames = true\n", "games must be an integer"),
    ("policies = ['ai', 'max-ev']\nseed = -3\n", "exp.toml: seed must be a non-negative"),
    ("policies = ['ai', 'max-ev']\ntarget = 25\n", "exp.toml: target must be a positive"),
    ("policies = ['ai', 'max-ev']\nrules = 'nope'\n", "rules:"),
    ("policies = ['ai', 'max-ev']\nending = 'sudden'\n", "exp.toml: ending must be one of"),
    ("policies = ['optimal', 'greedy']\nending = 'last-round'\n",
     "exp.toml: ending applies to Farkle only"),
    ("policies = ['ai', 'max-ev']\nrules = 'nope'\nending = 'last-round'\n", "rules: unknown"),
    ("policies = ['ai', 'max-ev']\ncrn = 1\n", "crn must be true or false, not 1"),
    ("policies = ['ai', 'max-ev']\nseed = true\n", "seed must be a non-negative integer, not true"),
    ("policies = ['ai', 'max-ev']\ngames = false\n", "games must be an integer, not false"),
    ("policies = ['ai', 'max-ev']\nexact = 'yes'\n", "exact must be true or false, not 'yes'"),
    ("policies = ['ai', 'max-ev']\n[sweep]\n", "sweep is empty"),
    ("policies = ['ai', 'max-ev']\nsweep = [1]\n",
     "sweep must be a table like {T = {from = 100, to = 1000, step = 50}}"),
    ("policies = ['threshold-T', 'ai']\n[sweep]\nT = { from = 50, to = 50050, step = 50 }\n",
     "at most 1,000 values"),
    ("policies = ['ai', 'max-ev']\nname = '../x'\n", "name must be letters"),
    ("policies = ['threshold-T', 'ai']\n[sweep]\nT = { from = 1, to = 2 }\n", "sweep.T"),
    ("policies = ['threshold-T', 'ai']\n[sweep]\nt = { from = 1, to = 2, step = 1 }\n",
     "one capital letter"),
    ("policies = ['ai', 'max-ev']\n[sweep]\nT = { from = 100, to = 200, step = 50 }\n",
     "no policy name has T"),
    ("policies = ['threshold-T', 'ai']\n[sweep]\nT = { from = 200, to = 250, step = 100 }\n",
     "to - from a multiple of step"),
    ("policies = ['threshold-T', 'ai']\n[sweep]\nT = { from = 200, to = 300, step = 0 }\n",
     "sweep.T: want from <= to"),
    ("policies = [", "malformed TOML"),
    ("policies = ['ai', 'max-ev']\nexact = true\n", "exact: applies to kind = \"compare\""),
    ("policies = ['ai', 'max-ev']\nexact = true\ngames = 100\n",
     "exact: applies to kind = \"compare\""),  # (a tournament's own mistake first)
    ("kind = 'compare'\npolicies = ['ai', 'max-ev']\nseats = 3\n", "seats: a compare plays"),
    ("kind = 'compare'\npolicies = ['ai', 'max-ev']\ncrn = false\n", "crn: applies to"),
    ("kind = 'compare'\npolicies = ['ai', 'max-ev']\nexact = true\ngames = 300\n",
     "games: an exact compare plays no games"),
    ("kind = 'compare'\npolicies = ['ai', 'max-ev']\nexact = true\nseed = 1\n",
     "seed: an exact compare plays no games"),
])
def test_every_bad_field_is_named(text, field):
    with pytest.raises(UserError) as err:
        parse_experiment(text, "exp.toml")
    assert str(err.value).startswith("exp.toml: ") and field in str(err.value)


def test_a_sweep_message_closes_its_braces_once():
    with pytest.raises(UserError) as err:
        parse_experiment("policies = ['ai', 'max-ev']\nsweep = 3\n", "exp.toml")
    assert str(err.value).endswith("step = 50}}"), err.value


def test_a_sweep_of_a_thousand_values_is_taken():
    spec = parse_experiment("policies = ['threshold-T', 'ai']\n[sweep]\n"
                            "T = { from = 50, to = 50000, step = 50 }\n", "exp.toml")
    assert len(spec.policies) == 1001 and spec.policies[-2:] == ("threshold-50000", "ai")


@pytest.mark.parametrize("given", [False, True])
def test_a_blocked_output_directory_is_named_as_the_user_knows_it(capsys, tmp_path,
                                                                  monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD)
    (tmp_path / "results").write_text("x")
    args = ["--out", "results/mine"] if given else []
    code, out, err = run_cli(capsys, ["experiment", "run", "demo.toml", *args])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("error: --out results/mine: " if given
                          else "error: the results directory "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.toml", "results"]


class Stop(Exception):
    pass


def test_an_interrupted_run_continues_and_ends_with_the_same_files(tmp_path):
    f = tmp_path / "demo.toml"
    f.write_text(GOOD)
    calls = []

    def interrupt(done, total):
        calls.append(done)
        if len(calls) == 3:
            raise Stop

    with pytest.raises(Stop):
        run_experiment_file(f, base=tmp_path, progress=interrupt)
    assert not (tmp_path / "results" / "demo").exists()
    cells = list((tmp_path / "results" / ".partial").glob("*/table-*.npz"))
    assert 1 <= len(cells) < 12
    _, where, _ = run_experiment_file(f, base=tmp_path)
    assert not (tmp_path / "results" / ".partial").exists()
    resumed = pd.read_parquet(where / "summary.parquet")
    again = tmp_path / "again"
    again.mkdir()
    _, where2, _ = run_experiment_file(f, base=again)
    pd.testing.assert_frame_equal(resumed, pd.read_parquet(where2 / "summary.parquet"),
                                  check_exact=True)


def test_cli_runs_a_file_and_records_its_command(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD.replace("seed = 4\n", ""))
    code, out, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json"])
    assert code == 0, err
    manifest = json.loads((tmp_path / "results" / "demo" / "manifest.json").read_text())
    seed = json.loads(out)["seed"]
    assert manifest["command"] == ["dicelab", "experiment", "run", "demo.toml", "--seed",
                                   str(seed)]
    code, _, err = run_cli(capsys, ["experiment", "run", "missing.toml"])
    assert code == 2 and "not found" in err


def test_an_exact_compare_draws_no_seed_and_takes_none(capsys, tmp_path, monkeypatch):
    """An exact compare plays no games: no seed is drawn or recorded (the command it
    recorded, with a --seed, was refused as compare --exact refuses one), and --seed is
    refused before any work; the same file with games and a seed plays them."""
    monkeypatch.chdir(tmp_path)
    exact = "kind = 'compare'\npolicies = ['threshold-300', 'threshold-350']\ntarget = 300\n"
    (tmp_path / "ex.toml").write_text(exact + "exact = true\n")
    code, out, err = run_cli(capsys, ["experiment", "run", "ex.toml", "--json"])
    assert code == 0, err
    manifest = json.loads((tmp_path / "results" / "ex" / "manifest.json").read_text())
    assert manifest["command"] == ["dicelab", "experiment", "run", "ex.toml"]
    assert json.loads(out)["seed"] is None and manifest["seed"] is None
    assert json.loads(out)["command"] == manifest["command"]  # --json names it too
    code, out, err = run_cli(capsys, ["experiment", "run", "ex.toml", "--seed", "3",
                                      "--out", "other"])
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "--seed: ex.toml is an exact compare" in err and not (tmp_path / "other").exists()
    (tmp_path / "mc.toml").write_text(exact + "games = 300\n")  # the neighbour: games
    code, out, err = run_cli(capsys, ["experiment", "run", "mc.toml", "--seed", "3", "--json"])
    assert code == 0 and json.loads(out)["seed"] == 3, err


@pytest.mark.parametrize("given, recorded", [("9", ["--seed", "9"]), ("4", []), (None, [])])
def test_the_recorded_command_carries_a_seed_that_replaced_the_files(capsys, tmp_path,
                                                                       monkeypatch, given,
                                                                       recorded):
    """--seed replaces the file's seed = 4: the manifest's command says so, or it would
    reproduce the file's seed instead (the file's own seed needs no --seed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD.replace("games = 9000", "games = 300"))
    extra = [] if given is None else ["--seed", given]
    code, out, err = run_cli(capsys, ["experiment", "run", "demo.toml", *extra, "--json"])
    assert code == 0, err
    manifest = json.loads((tmp_path / "results" / "demo" / "manifest.json").read_text())
    assert manifest["command"] == ["dicelab", "experiment", "run", "demo.toml", *recorded]
    assert json.loads(out)["seed"] == int(given or 4) == manifest["seed"]


@pytest.mark.parametrize("had_results", [False, True])
def test_a_run_with_out_leaves_no_empty_results_directory(tmp_path, had_results):
    f = tmp_path / "demo.toml"
    f.write_text(GOOD)
    base = tmp_path / "cwd"
    base.mkdir()
    if had_results:
        (base / "results").mkdir()
    _, where, _ = run_experiment_file(f, out=tmp_path / "out", base=base)
    assert where == tmp_path / "out" and (where / "manifest.json").is_file()
    assert sorted(p.name for p in base.iterdir()) == (["results"] if had_results else [])
    if had_results:
        assert list((base / "results").iterdir()) == []


def test_an_unusable_partial_directory_is_named_as_such(capsys, tmp_path, monkeypatch):
    """results/.partial a file: one error naming that directory (it said --out, which the
    user had not given); nothing is run or written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / ".partial").write_text("")
    code, out, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--out", "o"])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("error: the unfinished runs' directory ") and "--out" not in err
    assert "results/.partial is not a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.toml", "results"]


def _tree(d) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.mark.parametrize("had_results", [False, True])
def test_a_run_refused_before_any_cell_leaves_nothing_behind(capsys, tmp_path, monkeypatch,
                                                             had_results):
    """A user error found while running (here the memory limit): one error line, and no
    unfinished run's directory (it held only the seed drawn) nor a results/ made for it;
    a results/ that was there stays."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD.replace("seed = 4\n", ""))
    if had_results:
        (tmp_path / "results").mkdir()
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "1kB")
    code, out, err = run_cli(capsys, ["experiment", "run", "demo.toml"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "of memory" in err, err
    assert err.startswith("error: demo.toml: a tournament of 12 tables of 2 seats would need ")
    assert _tree(tmp_path) == ["demo.toml", *(["results"] if had_results else [])]
    monkeypatch.delenv("DICELAB_MEMORY_LIMIT")  # the neighbour: the same run, allowed
    code, out, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json"])
    assert code == 0, err
    assert "results/demo/manifest.json" in _tree(tmp_path) and ".partial" not in out


SWEEP_OF_1000 = """policies = ["threshold-T"]
[sweep]
T = { from = 50, to = 50000, step = 50 }
"""


@pytest.mark.parametrize("kind, what", [
    ("tournament", "a tournament of 999,000 tables of 2 seats"),
    ("compare", "a compare of 499,500 pairs"),  # 511.5 MB: it was a MemoryError, or worse
])
def test_a_sweep_too_large_for_memory_is_refused_naming_the_file(capsys, tmp_path,
                                                                 monkeypatch, kind, what):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exps").mkdir()
    (tmp_path / "exps" / "big.toml").write_text(f"kind = '{kind}'\n{SWEEP_OF_1000}")
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "100MB")
    code, out, err = run_cli(capsys, ["experiment", "run", "exps/big.toml"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: exps/big.toml: {what} would need ")
    assert err.rstrip().endswith("more than the limit of 100.0 MB ($DICELAB_MEMORY_LIMIT)")
    assert _tree(tmp_path) == ["exps", "exps/big.toml"]  # nothing left behind
    # the library names the file too (its path as given)
    with pytest.raises(UserError, match=rf"^{tmp_path}/exps/big.toml: {what} would need "):
        run_experiment_file(tmp_path / "exps" / "big.toml", base=tmp_path)
    assert _tree(tmp_path) == ["exps", "exps/big.toml"]


def test_a_compare_refuses_more_pairs_than_fit_before_listing_them(monkeypatch):
    from dicelab.compare import PAIR_BYTES, check_size, compare

    names = [f"threshold-{50 * t}" for t in range(1, 1001)]
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", str(499_500 * PAIR_BYTES))
    check_size(1000)  # exactly at the limit: taken
    check_size(2)
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", str(499_500 * PAIR_BYTES - 1))
    with pytest.raises(UserError, match=r"^a compare of 499,500 pairs would need "):
        check_size(1000)
    with pytest.raises(UserError, match=r"^a compare of 499,500 pairs would need "):
        compare(names, games=100, seed=1)
    check_size(999)  # 498,501 pairs fit


@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError])
def test_a_run_stopped_before_any_cell_removes_its_directory(tmp_path, monkeypatch, stop):
    """Ctrl-C or a failure while the first cell is written: nothing to continue from, so
    the unfinished run's directory goes (with the results/ made for it)."""
    f = tmp_path / "demo.toml"
    f.write_text(GOOD.replace("seed = 4\n", ""))

    def fail(self, key, arrays):
        raise stop

    monkeypatch.setattr(CellStore, "put", fail)
    with pytest.raises(stop):
        run_experiment_file(f, base=tmp_path)
    assert _tree(tmp_path) == ["demo.toml"]


def stop_after(monkeypatch, tables: int) -> Callable[[], list[str]]:
    """Make the next experiment run stop as Ctrl-C does once ``tables`` tables are kept;
    returns what undoes it, which gives the keys of the tables kept."""
    put = CellStore.put
    kept: list[str] = []

    def stopping(self, key, arrays):
        if len(kept) == tables:
            raise KeyboardInterrupt
        kept.append(key)
        put(self, key, arrays)

    monkeypatch.setattr(CellStore, "put", stopping)

    def undo() -> list[str]:
        monkeypatch.setattr(CellStore, "put", put)
        return kept

    return undo


def test_a_stopped_run_keeps_its_cells_says_so_and_the_next_run_continues(capsys, tmp_path,
                                                                         monkeypatch):
    """Ctrl-C after two cells: exit 130, the cells kept and the user told where; a second
    run (after a killed one's leftovers: a write cut off, a damaged cell) says it continues,
    plays the rest and ends with an uninterrupted run's files and no unfinished run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD)
    undo = stop_after(monkeypatch, 2)
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml"])
    partial, kept = unfinished_run(tmp_path / "demo.toml")
    assert code == 130 and kept == 2 and partial.is_dir()
    assert err == (f"interrupted: 2 finished table(s) kept in {partial}; run the same file "
                   "again to continue from them, or delete that directory\n"), err
    calls = undo()
    (partial / f"{calls[0]}.npz").write_bytes(b"cut off")  # played again
    (partial / f".{calls[1]}.npz.abc123.tmp").write_bytes(b"half a write")
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json"])
    assert code == 0, err
    assert f"continuing an unfinished run from {partial}: 2 finished table(s) found" in err
    assert not (tmp_path / "results" / ".partial").exists()
    again = tmp_path / "again"
    again.mkdir()
    _, where, _ = run_experiment_file(tmp_path / "demo.toml", base=again)
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "results" / "demo" / "summary.parquet"),
        pd.read_parquet(where / "summary.parquet"), check_exact=True)


def test_an_interrupted_run_with_a_seed_says_to_give_it_again(capsys, tmp_path, monkeypatch):
    """Without the same --seed a new run would not continue: the interruption's line
    says to give it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD)
    stop_after(monkeypatch, 1)
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--seed", "7"])
    partial, kept = unfinished_run(tmp_path / "demo.toml", seed=7)
    assert code == 130 and kept == 1
    assert err == (f"interrupted: 1 finished table(s) kept in {partial}; run the same file "
                   "again with --seed 7 to continue from them, or delete that directory\n")


def test_a_finished_run_removes_the_unfinished_runs_of_its_earlier_versions(tmp_path):
    """Stopped, then the file edited: the first version's cells are never read again, and
    the edited file's finished run removes them; another experiment's stay."""
    f, other = tmp_path / "demo.toml", tmp_path / "other.toml"
    f.write_text(GOOD)
    other.write_text(GOOD.replace('name = "demo"', 'name = "demo-other"'))

    for path in (f, other):
        calls = []

        def stop(done, total, calls=calls):
            calls.append(done)
            if len(calls) == 3:
                raise Stop

        with pytest.raises(Stop):
            run_experiment_file(path, base=tmp_path, progress=stop)
    old, kept = unfinished_run(f, base=tmp_path)
    assert kept > 0 and unfinished_run(other, base=tmp_path)[1] > 0
    f.write_text(GOOD.replace("games = 9000", "games = 9001"))
    new, kept = unfinished_run(f, base=tmp_path)
    assert new != old and kept == 0
    run_experiment_file(f, base=tmp_path)
    assert not old.exists() and not new.exists()
    partial, kept = unfinished_run(other, base=tmp_path)
    assert kept > 0 and sorted(p.name for p in partial.parent.iterdir()) == sorted(
        [MADE_RESULTS, partial.name])


#: The files of a finished tournament's directory.
_FINISHED = ["manifest.json", "ratings.png", "summary.parquet", "win-matrix.png"]


def _finished_in(where: str) -> list[str]:
    """The tree a finished run leaves in its directory: ``where`` and its files, and the
    directories above it (``results/demo``: ``results`` too)."""
    parts = where.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)] + [
        f"{where}/{name}" for name in _FINISHED]


@pytest.mark.slow
def test_a_real_ctrl_c_is_one_line_and_the_next_run_ends_as_an_uninterrupted_one(tmp_path):
    """A SIGINT to a real process once a table is finished: exit 130, one line saying what
    was kept; the same file then continues and ends with an uninterrupted run's table and
    nothing else left behind: with --out, not the empty results/ that had been made for
    the kept tables, which used to stay (the fast twins: test_a_stopped_run_keeps_its_
    cells_says_so_and_the_next_run_continues, test_a_stopped_run_finished_elsewhere_
    leaves_no_empty_results)."""
    out = ["--out", "resumed"]  # stopped and finished with --out (the other ways: the twin)
    (tmp_path / "demo.toml").write_text(GOOD.replace("games = 9000", "games = 400000")
                                        .replace("target = 1500", "target = 10000"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def dicelab(*args, **kw):
        return subprocess.Popen([sys.executable, "-m", "dicelab", "experiment", "run",
                                 "demo.toml", *args], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)

    proc = dicelab(*out, preexec_fn=as_from_a_shell)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob("results/.partial/*/table-*.npz")):
            assert proc.poll() is None and time.monotonic() < deadline, "no table finished"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    partial, kept = unfinished_run(tmp_path / "demo.toml", base=tmp_path)
    assert proc.returncode == 130 and stdout == b"" and 0 < kept < 12, err
    assert err.decode() == (f"interrupted: {kept} finished table(s) kept in {partial}; run the "
                            "same file again to continue from them, or delete that "
                            "directory\n")
    done = dicelab(*out)  # the rest
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    resumed = out[1]
    assert _tree(tmp_path) == sorted(["demo.toml", *_finished_in(resumed)])
    whole = dicelab("--out", "whole")  # an uninterrupted run
    _, err = whole.communicate(timeout=300)
    assert whole.returncode == 0, err
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / resumed / "summary.parquet"),
                                  pd.read_parquet(tmp_path / "whole" / "summary.parquet"),
                                  check_exact=True)
    assert _tree(tmp_path) == sorted(["demo.toml", *_finished_in(resumed),
                                      *_finished_in("whole")])


@pytest.mark.parametrize("first, then", [
    # 1.1 s; fast twins: out-results (a stopped run with --out), results-out (then --out)
    pytest.param(["--out", "a"], ["--out", "c"], marks=pytest.mark.slow),
    ([], ["--out", "c"]), (["--out", "a"], [])],
    ids=["out-out", "results-out", "out-results"])  # neither: a stopped run keeps its cells
def test_a_stopped_run_finished_elsewhere_leaves_no_empty_results(capsys, tmp_path,
                                                                   monkeypatch, first, then):
    """The results/ a stopped run made for its kept cells goes with them when a later run
    finishes, unless that run's files went there (a stopped run knows nothing of the
    next one's --out); one the user had stays, empty."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(GOOD)
    undo = stop_after(monkeypatch, 1)
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", *first])
    assert code == 130 and unfinished_run(tmp_path / "demo.toml")[1] == 1, err
    undo()
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json", *then])
    assert code == 0, err
    where = then[1] if then else "results/demo"
    assert _tree(tmp_path) == sorted(["demo.toml", *_finished_in(where)])
    (tmp_path / "mine").mkdir()  # the user's own results/, empty: kept
    monkeypatch.chdir(tmp_path / "mine")
    (tmp_path / "mine" / "results").mkdir()
    (tmp_path / "mine" / "demo.toml").write_text(GOOD)
    undo = stop_after(monkeypatch, 1)
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", *first])
    assert code == 130, err
    undo()
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json", *then])
    assert code == 0, err
    assert _tree(tmp_path / "mine") == sorted({"demo.toml", "results",
                                               *_finished_in(where)})


@pytest.mark.parametrize("named", ["{}:rule", "optimal-win:vs={}:rule"],
                         ids=["itself", "as-a-parameter"])
def test_a_users_policy_file_edited_after_a_stop_is_another_experiment(tmp_path, named):
    """Its finished cells were played by the old code: the edited file's run plays
    them again (the TOML file itself unchanged), the policy named as it is or as the
    opponent of a best response."""
    policy = tmp_path / "mine.py"
    policy.write_text("def rule(my, opp, tp, n):\n    return tp >= 300\n")
    f = tmp_path / "demo.toml"
    f.write_text(f'policies = ["{named.format(policy)}", "ai"]\ngames = 900\nseed = 4\n'
                 "target = 1000\n")
    first = parse_experiment(f.read_text(), str(f)).digest()
    assert parse_experiment(f.read_text(), str(f)).digest() == first
    policy.write_text("def rule(my, opp, tp, n):\n    return tp >= 350\n")
    assert parse_experiment(f.read_text(), str(f)).digest() != first
    builtin = parse_experiment(GOOD, "demo.toml")  # no user's policy: no code in it
    assert builtin.digest() == parse_experiment(GOOD, "demo.toml").digest()


def test_a_run_says_it_does_not_continue_an_earlier_versions_unfinished_run(capsys, tmp_path,
                                                                            monkeypatch):
    """The file edited after a stop: the new run does not continue from the old cells, and
    says so (and that they go when it finishes); an empty folder of an earlier version and
    another experiment's cells are not mentioned; the same file's own cells are continued."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text('name = "demo"\npolicies = ["ai", "threshold-300"]\n'
                                        "games = 300\nseed = 4\ntarget = 1000\n")
    runs = tmp_path / "results" / ".partial"
    old, empty, other = runs / "demo-0123456789ab", runs / "demo-ba9876543210", \
        runs / "demo-x-0123456789ab"
    for d in (old, empty, other):
        d.mkdir(parents=True)
    for d in (old, other):
        for i in range(2):
            (d / f"table-{i}.npz").write_bytes(b"old")
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json"])
    assert code == 0, err
    said = [line for line in err.splitlines() if "not continuing" in line]
    assert said == [f"not continuing the unfinished run in {old} (2 finished table(s)): the "
                    "file, a policy file it names or the seed has changed since; it is "
                    "deleted when this run finishes"], err
    assert "continuing an unfinished run" not in err
    assert not old.exists() and not empty.exists() and other.is_dir()
    code, _, err = run_cli(capsys, ["experiment", "run", "demo.toml", "--json"])
    assert code == 0 and "not continuing" not in err, err
