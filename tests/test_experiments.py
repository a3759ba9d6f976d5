"""``dicelab experiment list|run`` and :mod:`dicelab.experiments`.

The experiments are shells over library functions, so their tables are checked against
those functions called directly (exact equality), and every run's manifest command is
run again to prove that it reproduces the files.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run_cli
from committed import assert_frame_reproduces, assert_record_reproduces

from dicelab.compare import compare
from dicelab.errors import UserError
from dicelab.experiments import EXPERIMENTS, get_experiment, resolve_options, run_experiment
from dicelab.farkle import solitaire
from dicelab.farkle.rules import PRESETS, load_rules

ROOT = Path(__file__).resolve().parents[1]
H2H_POLICIES = ["ai", "optimal-win", "max-ev", "threshold-250"]  # 250: best under default


def _run(capsys, *args) -> dict:
    code, out, err = run_cli(capsys, ["experiment", "run", *args, "--json"])
    assert code == 0, err
    return json.loads(out)


def _manifest(directory: Path) -> dict:
    return json.loads((directory / "manifest.json").read_text())


def test_list_shows_every_experiment_with_options(capsys):
    code, out, _ = run_cli(capsys, ["experiment", "list", "--json"])
    assert code == 0
    listed = {e["name"]: e for e in json.loads(out)["experiments"]}
    assert set(listed) == {"threshold-sweep", "head-to-head"} == set(EXPERIMENTS)
    h2h = {o["name"]: o for o in listed["head-to-head"]["options"]}
    assert h2h["games"]["flags"] == ["--games", "-n"] and h2h["games"]["default"] == 1_000_000
    assert h2h["seed"]["default"] is None and h2h["target"]["default"] == 10_000
    assert [o["name"] for o in listed["threshold-sweep"]["options"]] == ["rules", "target"]
    assert all(e["description"] for e in listed.values())
    code, out, _ = run_cli(capsys, ["experiment", "list"])
    assert code == 0 and "threshold-sweep" in out and "head-to-head" in out and "--games" in out


def test_threshold_sweep_matches_turn_dp_and_its_command_reproduces_it(capsys, tmp_path,
                                                                        monkeypatch):
    out = tmp_path / "sweep"
    printed = _run(capsys, "threshold-sweep", "--target", "1000", "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "sweep.csv",
                                                     "sweep.parquet"]
    frame = pd.read_parquet(out / "sweep.parquet")
    scoring = PRESETS["default"]
    expected = solitaire.threshold_sweep(scoring).to_frame()
    pd.testing.assert_frame_equal(frame[list(expected.columns)], expected, check_exact=True)
    turns = [solitaire.race(scoring, 1000, solitaire.threshold_bank_table(int(t)))[0, 0]
             for t in expected["threshold"]]
    assert frame["expected_turns_to_target"].tolist() == turns
    pd.testing.assert_frame_equal(pd.read_csv(out / "sweep.csv"), frame, check_exact=False,
                                  rtol=1e-15)
    manifest = _manifest(out)
    s = manifest["summary"]
    assert manifest["experiment"] == "threshold-sweep" and manifest["exact"] is True
    assert manifest["rules"]["name"] == "default" and manifest["target"] == 1000
    # solved, not played: no game kernel, but the same provenance fields as every run
    assert manifest["kernel"] is None and manifest["executor"] == "local"
    assert manifest["threads"] >= 1 and manifest["workers"] is None
    assert s["best_threshold"] == 250
    assert s["max_ev_expected_turn_score"] == pytest.approx(601.5586536614982)
    # fastest is the optimum over all solitaire policies, thresholds included
    assert s["fastest_expected_turns_to_target"] <= min(turns) + 1e-12
    assert s["best_threshold_by_turns"] == int(expected["threshold"][int(np.argmin(turns))])
    assert printed["summary"] == s and printed["out"] == str(out)
    assert len(printed["table"]) == len(frame)
    # the recorded command, run again (here without --out: the default directory)
    command = manifest["command"]
    assert command[:4] == ["dicelab", "experiment", "run", "threshold-sweep"]
    assert "--out" in command
    i = command.index("--out")
    again = command[1:i] + command[i + 2:]
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, again)
    assert code == 0, err
    default = tmp_path / "results" / "farkle_threshold_sweep" / "default-t1000"
    pd.testing.assert_frame_equal(pd.read_parquet(default / "sweep.parquet"), frame,
                                  check_exact=True)
    assert _manifest(default)["command"] == ["dicelab", *again]


def test_head_to_head_is_reproducible_and_equals_compare(capsys, tmp_path, monkeypatch):
    args = ["head-to-head", "--target", "500", "-n", "400", "--seed", "7"]
    first = _run(capsys, *args, "--out", str(tmp_path / "a"))
    _run(capsys, *args, "--out", str(tmp_path / "b"))
    a = pd.read_parquet(tmp_path / "a" / "pairs.parquet")
    b = pd.read_parquet(tmp_path / "b" / "pairs.parquet")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    direct = compare(H2H_POLICIES, games=400, seed=7, target=500, rules="default")
    pd.testing.assert_frame_equal(a, direct.to_frame(), check_exact=True)
    assert first["summary"]["pairs"] == direct.to_dict()["pairs"]
    manifest = _manifest(tmp_path / "a")
    assert manifest["experiment"] == "head-to-head" and manifest["seed"] == 7
    assert manifest["policies"] == H2H_POLICIES and manifest["games_per_table"] == 400
    assert manifest["pair_seeds"] == {f"{p.policy} vs {p.opponent}": p.seed
                                      for p in direct.pairs}
    assert manifest["executor"] == "local" and manifest["kernel"] == direct.manifest()["kernel"]
    assert manifest["threads"] >= 1
    assert manifest["files"] == {"table": "pairs.parquet", "csv": "pairs.csv"}
    assert "dask" not in manifest["options"]

    # no --seed: a fresh one is drawn and written into the command, which reproduces the run
    monkeypatch.chdir(tmp_path)
    fresh = _run(capsys, "head-to-head", "--target", "500", "-n", "300")
    command = fresh["command"]
    seed = int(command[command.index("--seed") + 1])
    assert fresh["summary"]["seed"] == seed and "--out" not in command
    where = tmp_path / "results" / "farkle_head_to_head" / "default-t500"
    assert Path(fresh["out"]) == where
    drawn = pd.read_parquet(where / "pairs.parquet")
    again = run_experiment("head-to-head", {"target": 500, "games": 300, "seed": seed},
                           out=tmp_path / "again")
    pd.testing.assert_frame_equal(drawn, pd.read_parquet(again.files["table"]),
                                  check_exact=True)
    assert again.command == [*command, "--out", str(tmp_path / "again")]


def test_run_help_names_experiment_files(capsys):
    code, out, err = run_cli(capsys, ["experiment", "run", "--help"])
    text = " ".join((out + err).split())
    assert code == 0 and "dicelab experiment run FILE.toml [--out DIR] [--seed S]" in text, text
    assert "threshold-sweep" in text and "head-to-head" in text


@pytest.mark.parametrize("args, message", [
    (["nope"], "unknown experiment 'nope'; valid: threshold-sweep, head-to-head"),
    (["a-file"], "experiment file 'a-file': its name must end in .toml (or name an "
                 "experiment: threshold-sweep, head-to-head)"),
    (["."], "experiment file '.': its name must end in .toml"),
    (["threshold-sweep", "--games", "5"], "experiment threshold-sweep has no option --games"),
    (["threshold-sweep", "--seed", "1"], "has no option --seed"),
    (["head-to-head", "--bogus"], "experiment head-to-head has no option --bogus"),
    (["head-to-head", "-n", "0", "--target", "500"], "--games must be a positive number"),
    (["head-to-head", "--target", "75"], "--target must be a positive multiple of 50"),
    (["threshold-sweep", "--target", "-50"], "--target must be a positive multiple of 50"),
    (["threshold-sweep", "--rules", "nope"], "unknown Farkle rules 'nope'"),
    (["head-to-head", "--seed", "-1"], "--seed must be a non-negative integer"),
    (["head-to-head", "--games", "many"], "Invalid value for '--games'"),
    (["head-to-head", "--dask", "local:0"], "--dask local:0"),
    (["threshold-sweep", "--out", "a-file"], "exists and is not a directory"),
    (["threshold-sweep", "--out", "a-file/below"], "is not a directory"),
    (["threshold-sweep", "surplus"], "unexpected extra argument"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, monkeypatch,
                                                         args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("x")
    code, out, err = run_cli(capsys, ["experiment", "run", *args])
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert "Traceback" not in err and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
@pytest.mark.parametrize("given", [False, True])
def test_a_blocked_output_directory_is_named_as_the_user_knows_it(capsys, tmp_path,
                                                                  monkeypatch, name, given):
    """results/ a file: the default directory is refused as the results directory (the
    user gave no --out); a --out through the same file is refused as --out."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").write_text("x")
    args = ["--out", "results/mine"] if given else []
    code, out, err = run_cli(capsys, ["experiment", "run", name, *args])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("error: --out results/mine: " if given
                          else "error: the results directory "), err
    assert "results is not a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
@pytest.mark.parametrize("blocked", [0, 1, 2])
def test_every_output_file_is_checked_before_the_run(capsys, tmp_path, monkeypatch, name,
                                                     blocked):
    """A directory where the table, its CSV or the manifest goes is refused before any
    work, and nothing is written (the run used to finish, then fail half-written)."""
    import dataclasses

    def no_work(*args):
        raise AssertionError("the run started")

    experiment = EXPERIMENTS[name]
    monkeypatch.setitem(EXPERIMENTS, name, dataclasses.replace(experiment, compute=no_work))
    out = tmp_path / "out"
    (out / experiment.out_files[blocked]).mkdir(parents=True)
    code, stdout, err = run_cli(capsys, ["experiment", "run", name, "--out", str(out)])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert f"{experiment.out_files[blocked]}: is a directory" in err and stdout == ""
    assert sorted(p.name for p in out.iterdir()) == [experiment.out_files[blocked]]
    with pytest.raises(UserError, match="is a directory"):
        run_experiment(name, {"seed": 1} if name == "head-to-head" else {}, out=out)
    assert sorted(p.name for p in out.iterdir()) == [experiment.out_files[blocked]]


def test_the_files_written_are_the_files_checked(tmp_path):
    run = run_experiment("threshold-sweep", {"target": 1000}, out=tmp_path)
    assert sorted(p.name for p in run.files.values()) == sorted(
        EXPERIMENTS["threshold-sweep"].out_files)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        EXPERIMENTS["threshold-sweep"].out_files)


def test_library_rejects_unknown_names_and_options():
    with pytest.raises(UserError, match="valid: threshold-sweep, head-to-head"):
        get_experiment("sweep")
    with pytest.raises(UserError, match="no option --games; valid: --rules, --target"):
        resolve_options(get_experiment("threshold-sweep"), {"games": 5})
    opts = resolve_options(get_experiment("head-to-head"), {"seed": None})
    assert isinstance(opts["seed"], int) and opts["target"] == 10_000


def _shim(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_script_shim_writes_what_the_command_writes(capsys, tmp_path):
    _shim("farkle_threshold_sweep").main(["--target", "1000", "--out", str(tmp_path / "s")])
    capsys.readouterr()
    run = run_experiment("threshold-sweep", {"target": 1000}, out=tmp_path / "c")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "s" / "sweep.parquet"),
                                  run.output.table, check_exact=True)


def test_committed_threshold_sweep_is_reproduced_by_its_command(tmp_path):
    committed = ROOT / "results" / "farkle_threshold_sweep" / "default"
    manifest = _manifest(committed)
    command = manifest["command"]
    assert command[:4] == ["dicelab", "experiment", "run", "threshold-sweep"]
    flags = dict(zip(command[4::2], command[5::2], strict=True))
    run = run_experiment("threshold-sweep", {"rules": flags["--rules"],
                                             "target": int(flags["--target"])},
                         out=tmp_path)
    # committed from another machine: integers bit for bit, floats within the stated
    # cross-machine tolerance (docs/design/reproducibility.md)
    assert_frame_reproduces(pd.read_parquet(committed / "sweep.parquet"), run.output.table)
    assert run.command == [*command, "--out", str(tmp_path)]
    assert_record_reproduces(manifest["summary"], run.manifest["summary"])


def test_head_to_head_shim_keeps_the_seed_of_the_committed_results(capsys, tmp_path):
    _shim("farkle_head_to_head").main(["--target", "500", "-n", "200", "--out",
                                       str(tmp_path), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed["options"]["seed"] == 2026 == _manifest(tmp_path)["seed"]
    assert printed["command"][printed["command"].index("--seed") + 1] == "2026"


def test_rules_file_names_the_default_directory(capsys, tmp_path, monkeypatch):
    rules = ROOT / "docs" / "examples" / "house-rules.toml"
    monkeypatch.chdir(tmp_path)
    printed = _run(capsys, "threshold-sweep", "--rules", str(rules), "--target", "1000")
    table = load_rules(str(rules))
    where = tmp_path / "results" / "farkle_threshold_sweep" / f"{table.name}-t1000"
    assert Path(printed["out"]) == where and (where / "manifest.json").exists()
    assert _manifest(where)["rules"] == json.loads(json.dumps(table.to_dict()))
    frame = pd.read_parquet(where / "sweep.parquet")
    expected = solitaire.threshold_sweep(table).to_frame()
    pd.testing.assert_frame_equal(frame[list(expected.columns)], expected, check_exact=True)


def test_head_to_head_on_a_dask_cluster_gives_the_local_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    options = {"target": 500, "games": 400, "seed": 7}
    local = run_experiment("head-to-head", options, out=tmp_path / "local")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        remote = run_experiment("head-to-head", options, out=tmp_path / "dask", client=client)
    pd.testing.assert_frame_equal(pd.read_parquet(local.files["table"]),
                                  pd.read_parquet(remote.files["table"]), check_exact=True)
    assert (remote.manifest["executor"], remote.manifest["workers"]) == ("dask", 2)
    # where it ran does not change what it means (only --out differs)
    assert remote.command[:-2] == local.command[:-2] and local.command[-2] == "--out"


def test_the_cross_machine_comparison_fails_beyond_its_tolerance():
    frame = pd.DataFrame({"threshold": np.array([50, 100], dtype=np.int64),
                          "score": [400.0, 0.0]})
    near = frame.assign(score=[400.0 * (1 + 1e-13), 1e-11])  # within 1e-12 of the scale
    assert_frame_reproduces(frame, near)
    for bad in (frame.assign(score=[400.0 * (1 + 1e-9), 0.0]),
                frame.assign(threshold=np.array([50, 150], dtype=np.int64))):
        with pytest.raises(AssertionError):
            assert_frame_reproduces(frame, bad)
    assert_record_reproduces({"a": 1, "b": [2.0]}, {"a": 1, "b": [2.0 + 1e-13]})
    with pytest.raises(AssertionError):
        assert_record_reproduces({"a": 1, "b": [2.0]}, {"a": 1, "b": [2.0 + 1e-9]})


def test_rules_option_names_every_preset():
    from dicelab.experiments import RULES
    from dicelab.farkle.rules import PRESETS

    assert all(name in RULES.help for name in PRESETS)


@pytest.mark.parametrize("script", ["penta_win", "penta_targets", "rl_penta", "rl_qlearning"])
@pytest.mark.parametrize("argv, needle", [
    (["--nonsense"], "unrecognized arguments: --nonsense"),
    (["--json=x"], "argument --json: ignored explicit argument 'x'"),
    (["--json", "--rules"], "argument --rules: expected one argument"),
])
def test_a_scripts_bad_option_is_one_error_line(capsys, tmp_path, script, argv, needle):
    """The experiment scripts answer a bad option as the command line does: one ``error:``
    line and exit code 2 (argparse's own adds its usage lines), nothing written."""
    spec = importlib.util.spec_from_file_location(script, ROOT / "experiments" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as stop:
        module.main(["--out", str(tmp_path / "o"), *argv])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == "" and err == f"error: {needle}\n"
    assert not (tmp_path / "o").exists()
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("usage: ")
