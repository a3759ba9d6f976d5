"""Every kind of manifest records a command that reproduces its files exactly (a run
without ``--seed`` included), and an interrupted run exits 130 leaving nothing behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from cli_helpers import as_from_a_shell, run_cli
from numba_threads import with_threads

from dicelab.farkle.rules import load_rules

#: Manifest entries that may differ between two runs of one command: time, versions, and
#: whether the seed was drawn or given (the rerun is given the drawn one).
_VOLATILE = {"elapsed_s", "setup_s", "games_per_s", "threads", "versions", "from_cache",
             "seed_given"}


def _stable(obj):
    if isinstance(obj, dict):
        return {k: _stable(v) for k, v in obj.items() if k not in _VOLATILE}
    if isinstance(obj, list):
        return [_stable(v) for v in obj]
    return obj


def _files(d):
    return sorted(p.name for p in d.iterdir())


_slow = pytest.mark.slow
KINDS = [
    ["simulate", "-s", "ai", "--vs", "threshold-300", "-n", "20000"],
    ["simulate", "-s", "threshold-350", "-n", "20000", "--target", "5000"],
    pytest.param(["simulate", "-s", "greedy", "--vs", "greedy", "-n", "3000"], marks=_slow),
    pytest.param(["compare", "ai", "threshold-300", "max-ev", "-n", "5000", "--target", "2000"],
                 marks=_slow),
    pytest.param(["compare", "ai", "threshold-300", "--exact", "--target", "2000"],
                 marks=_slow),
    ["bust-risk", "-n", "20000"],
    pytest.param(["experiment", "run", "threshold-sweep", "--target", "2000"], marks=_slow),
    pytest.param(["experiment", "run", "head-to-head", "--target", "1000", "-n", "2000"],
                 marks=_slow),
]


@pytest.mark.parametrize("argv", KINDS, ids=lambda a: " ".join(a[:4]))
def test_the_manifest_command_reproduces_the_files(capsys, tmp_path, argv):
    out = tmp_path / "run"
    code, _, err = run_cli(capsys, [*argv, "--out", str(out)])
    assert code == 0, err
    first = tmp_path / "first"
    shutil.copytree(out, first)
    manifest = json.loads((out / "manifest.json").read_text())
    command = manifest["command"]
    assert command[0] == "dicelab" and "--out" in command
    if argv[0] in ("simulate", "compare", "bust-risk") and "--exact" not in argv:
        assert "--seed" in command  # drawn, and spelled out
    shutil.rmtree(out)
    code, _, err = run_cli(capsys, command[1:])
    assert code == 0, err
    assert _files(out) == _files(first)
    for name in _files(first):
        if name.endswith(".parquet"):
            pd.testing.assert_frame_equal(pd.read_parquet(out / name),
                                          pd.read_parquet(first / name), check_exact=True)
        elif name.endswith(".json"):
            assert _stable(json.loads((out / name).read_text())) == \
                _stable(json.loads((first / name).read_text()))
        else:
            assert (out / name).read_bytes() == (first / name).read_bytes()


def test_a_manifest_is_strict_json_with_null_for_a_missing_value(capsys, tmp_path):
    """A tournament too short for an error estimate has missing values: the manifest holds
    ``null`` for them, as ``--json`` does, never the bare ``NaN`` strict readers refuse."""
    def refuse(word):
        raise ValueError(f"{word} in the manifest")

    out = tmp_path / "t"
    code, _, err = run_cli(capsys, ["tournament", "threshold-300", "threshold-500", "-n", "10",
                                    "--seed", "1", "--target", "1000", "--out", str(out)])
    assert code == 0, err
    text = (out / "manifest.json").read_text()
    manifest = json.loads(text, parse_constant=refuse)
    assert "null" in text and manifest["summary"]["policies"] == ["threshold-300",
                                                                  "threshold-500"]


def test_result_files_honour_the_umask(capsys, tmp_path):
    old = os.umask(0o022)
    try:
        code, _, err = run_cli(capsys, ["bust-risk", "-n", "1000", "--out", str(tmp_path / "x")])
    finally:
        os.umask(old)
    assert code == 0, err
    for f in (tmp_path / "x").iterdir():
        assert f.stat().st_mode & 0o777 == 0o644


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_ctrl_c_is_exit_130_one_line_and_nothing_written(tmp_path, extra):
    """A real SIGINT to a real process (with the default handler, as a terminal's Ctrl-C)."""
    out = tmp_path / "never"
    cmd = [sys.executable, "-m", "dicelab", "simulate", "-s", "ai", "-n", "2000000000",
           "--seed", "1", "--out", str(out), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=as_from_a_shell)
    try:
        _interrupt_and_check(proc, out)
    finally:
        if proc.poll() is None:  # a failed check leaves no 2e9-game run behind
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path, extra):
    """``dicelab ... | head``: a reader that closed the pipe before anything was printed
    (rich's console, or the JSON line) ends the command with exit code 0 and nothing on
    stderr, as when the output fitted in the pipe before the reader left; what the
    command saves is complete."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "dicelab", "simulate", "-s", "threshold-300", "-n", "2000",
           "--seed", "1", "--out", str(out), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the command can print
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and err == ""
    assert (out / "manifest.json").is_file()


def test_what_runs_before_the_console_scripts_ctrl_c_guard_stays_light():
    """``import dicelab`` runs before the guard of dicelab.cli.entry: it loads no numerical
    library and does not read the package metadata (which ``--version`` still reports)."""
    probe = ("import dicelab, sys; heavy = {'numpy', 'numba', 'importlib.metadata'}; "
             "print(sorted(heavy & set(sys.modules))); print(dicelab.__version__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "[]"
    assert out[1] == __import__("importlib.metadata").metadata.version("dicelab")


def test_the_kernel_cache_is_chosen_when_numba_is_first_imported(tmp_path):
    """``import dicelab`` neither hashes the kernel sources nor imports platformdirs (so the
    console script's guard starts at once); the first ``import numba`` after it finds the
    cache directory chosen, as when numba came first."""
    probe = ("import os, sys, dicelab; print(int('platformdirs' in sys.modules), "
             "int('NUMBA_CACHE_DIR' in os.environ), dicelab._JIT_CACHE_DIR); import numba; "
             "print(numba.config.CACHE_DIR == os.environ['NUMBA_CACHE_DIR'] "
             "== dicelab._JIT_CACHE_DIR, dicelab._JIT_CACHE_DIR)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "DICELAB_CHOSEN_NUMBA_CACHE_DIR")}
    env["DICELAB_JIT_CACHE_DIR"] = str(tmp_path)
    lines = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True, env=env).stdout.splitlines()
    assert lines[0] == "0 0 None"
    same, chosen = lines[1].split()
    assert same == "True" and Path(chosen).parent == tmp_path


def _interrupt_and_check(proc: subprocess.Popen, out: Path) -> None:
    # Python's own start-up (before any dicelab code runs) cannot turn an interrupt into
    # exit 130: wait until the command line is importing its libraries (then inside the
    # guard of dicelab.cli.entry), however loaded the machine is
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + 60
    while maps.exists() and "numpy" not in maps.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2)  # (an interrupt while it starts must end the same way)
    assert proc.poll() is None, "finished before the interrupt"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert stdout == b""
    assert stderr.decode().strip().splitlines()[-1] == "interrupted"
    assert not out.exists()


@pytest.mark.parametrize("argv, figures", [
    (["simulate", "-s", "ai", "--vs", "threshold-300"], []),
    (["tournament", "ai", "threshold-300"], ["win-matrix.png", "ratings.png"]),
])
def test_out_names_every_file_written_and_the_manifest_comes_last(capsys, tmp_path, argv,
                                                                  figures):
    """A tournament's figures are named with the tables (the message named only those),
    and written before the manifest, whose presence says the rest is complete."""
    out = tmp_path / "o"
    code, _out, err = run_cli(capsys, [*argv, "--target", "1000", "-n", "500", "--seed", "1",
                                       "--out", str(out)])
    assert code == 0, err
    names = ["summary.parquet", "manifest.json", *figures]
    assert f"saved {', '.join(names)} in {out}" in err
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    written = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert written["manifest.json"] == max(written.values())


#: Penta policies of the docs' examples, one with a parameter: played by the referee,
#: they need no decision tables (a test of seconds, not of a 270 MB table's build).
PENTA = "docs/examples/policies/penta_rules.py"
_FARKLE = ["--target", "1000"]
_P = pytest.param


@pytest.mark.parametrize("argv, kernel, params", [
    _P(["tournament", "ai:base=400", "threshold-300", "-n", "200", *_FARKLE], "general",
       {"ai:base=400": {"family": "ai", "base": 400}}, id="tournament-farkle"),
    _P(["tournament", "threshold-300", "ai:base=400", "--sprt", "-n", "4000", *_FARKLE],
       "general", {"ai:base=400": {"family": "ai", "base": 400}}, id="tournament-sprt"),
    _P(["tournament", f"{PENTA}:most_points", f"{PENTA}:keep_high:high=6", "-n", "20"],
       "referee", {f"{PENTA}:keep_high:high=6": {"family": "user", "high": 6}},
       id="tournament-penta"),
    # two kernels: the threshold pair plays on the lanes kernel, the others on the general
    _P(["compare", "ai:base=400", "threshold-300", "threshold-400", "-n", "200", *_FARKLE],
       ["general", "lanes-16"], {"threshold-400": {"family": "threshold", "threshold": 400}},
       id="compare-farkle"),
    _P(["compare", "ai:base=400", "threshold-300", "--exact", *_FARKLE], None,
       {"ai:base=400": {"family": "ai", "base": 400}}, id="compare-farkle-exact"),
    _P(["compare", f"{PENTA}:most_points", f"{PENTA}:keep_high:high=6", "-n", "20"],
       "referee", {f"{PENTA}:keep_high:high=6": {"family": "user", "high": 6}},
       id="compare-penta"),
    _P(["simulate", "-s", f"{PENTA}:keep_high:high=6", "-n", "20"], "referee",
       {f"{PENTA}:keep_high:high=6": {"family": "user", "high": 6}}, id="simulate-penta"),
    _P(["tournament", f"{PENTA}:most_points", f"{PENTA}:keep_high:high=6", "--sprt",
        "-n", "160"], "referee",
       {f"{PENTA}:keep_high:high=6": {"family": "user", "high": 6}}, id="tournament-sprt-penta"),
])
def test_every_manifest_names_the_policies_parameters_kernel_and_threads(capsys, tmp_path,
                                                                          argv, kernel,
                                                                          params):
    """What the README promises every --out manifest of a run holds: the policies with
    their parameters, the full rules table, the chunk size and the kernel (none for an
    exact compare: no game is played), the threads and the executor (tournament and
    compare had neither kernel nor threads, and named the policies only; compare and
    --sprt had no chunk size; Penta's named only the rule set)."""
    import numba

    out = tmp_path / "o"
    # on two threads where numba has them: a run played by the referee used one
    code, _, err = with_threads(2, lambda: run_cli(
        capsys, [*argv, "--seed", "1", "--out", str(out)] if "--exact" not in argv
        else [*argv, "--out", str(out)]))
    assert code == 0, err
    m = json.loads((out / "manifest.json").read_text())
    assert m["kernel"] == kernel
    # the threads that played: numba's of this process, one where only the Python referee
    # played (a tournament's, a compare's and --sprt's said numba's)
    assert m["threads"] == (1 if kernel == "referee"
                            else min(2, numba.config.NUMBA_NUM_THREADS))
    assert (m["executor"], m["workers"]) == ("local", None)
    assert (m["chunk_games"] is None) == ("--exact" in argv)  # the games' units, if any
    if argv[0] == "simulate":  # a seat each
        by_name = {p["name"]: p["params"] for p in m["policies"]}
    else:
        by_name = m["policy_params"]
        assert list(by_name) == m["policies"] == m["summary"]["policies"]
    for name, given in params.items():
        assert by_name[name] == {**by_name[name], **given}, by_name[name]
    if argv[0] == "tournament" and "--sprt" not in argv:  # and each table's
        assert {t["kernel"] for t in m["tables"]} == {kernel}
    if argv[0] == "compare" and "--exact" not in argv:  # and each pair's, beside its seed
        assert list(m["pair_kernels"]) == list(m["pair_seeds"])
        assert sorted(set(m["pair_kernels"].values())) == sorted(
            [kernel] if isinstance(kernel, str) else kernel)
    # the rules table (the glossary's `rules`: the name in the summary, as in --json)
    if any(PENTA in a for a in argv):
        _check_penta_rules(m, "seed")
    else:
        assert m["rules"] == json.loads(json.dumps(load_rules("default").to_dict()))
        assert m["summary"]["rules"] == "default"


def _check_penta_rules(m: dict, name: str) -> None:
    """``m`` records Penta rule set ``name`` as its table, parameters in words; its
    summary (what ``--json`` prints) names it."""
    from dicelab.penta.rules import get_rules

    assert m["rules"] == get_rules(name).to_dict()
    assert m["summary"]["rules"] == name


def test_the_penta_rules_table_says_its_parameters_in_words():
    """The table manifests record: the name, the description, the joker's when and order
    as words and the bonus in points, for every rule set (JSON as it is)."""
    from dicelab.penta.rules import RULE_SETS, get_rules

    words = {"seed": ("if-fifty", "forced", 100), "hasbro": ("if-filled", "forced", 100),
             "free-joker": ("if-filled", "free", 100), "no-bonus": ("never", "forced", 0)}
    assert set(words) == set(RULE_SETS)
    for name, (when, order, bonus) in words.items():
        table = get_rules(name).to_dict()
        assert table == {"name": name, "description": get_rules(name).description,
                         "joker_when": when, "joker_order": order, "penta_bonus": bonus}
        assert json.loads(json.dumps(table)) == table


def test_an_exact_penta_compare_records_the_rules_table(capsys, tmp_path, monkeypatch):
    """``compare --exact`` of Penta policies: the manifest holds the rule set's table (it
    held the name). The distributions are stand-ins (a real one is a solve of minutes)."""
    import numpy as np

    import dicelab.penta.builtin as builtin
    from dicelab.penta.distribution import ScoreDistribution
    from dicelab.penta.rules import BOX_NAMES
    from dicelab.penta.scoring import MAX_TOTAL

    def stand_in(policy, rules):
        p = np.zeros(MAX_TOTAL + 1)
        p[200 if policy == "optimal" else 150] = 1.0
        return ScoreDistribution(policy, rules, p, np.zeros(len(BOX_NAMES)), 0.0, 0.0,
                                 0.0, 0.0, True, 0.0, 0)

    monkeypatch.setattr(builtin, "score_distribution", stand_in)
    out = tmp_path / "o"
    code, _, err = run_cli(capsys, ["compare", "optimal", "greedy", "--game", "penta",
                                    "--exact", "--rules", "hasbro", "--out", str(out)])
    assert code == 0, err
    m = json.loads((out / "manifest.json").read_text())
    assert m["method"] == "exact"
    _check_penta_rules(m, "hasbro")


def test_a_penta_report_card_records_the_rules_table():
    """``evaluate --game penta --out``: the manifest holds the rule set's table, the
    summary (``--json``) its name."""
    from dicelab.penta.evaluate import PentaEvaluation
    from dicelab.penta.rules import get_rules
    from dicelab.stats import Estimate

    e = PentaEvaluation("greedy", "free-joker", True, None, 1, True, Estimate(220.0, 0.0, 0),
                        50.0, 254.6, 10, {}, Estimate(1.0, 0.1, 10),
                        Estimate(0.03, 0.01, 300), 0.0)
    assert e.manifest()["rules"] == get_rules("free-joker").to_dict()
    assert e.to_dict()["rules"] == "free-joker"


# ------------------------------------------ every manifest: kernel, threads, executor

#: A Farkle policy that decides move by move (no table): the Python referee plays it.
MOVE_BY_MOVE = """
from dicelab.farkle.policy import Move, all_scoring


def steady(state):
    o = all_scoring(state)
    return Move(o.keep, state.turn_points + o.points >= 300 and state.can_bank(o))
"""


def _provenance(m: dict) -> dict:
    return {k: m[k] for k in ("kernel", "threads", "executor", "workers")}


@pytest.mark.parametrize("argv, kernel", [
    _P(["bust-risk", "-n", "2000", "--seed", "1"], "bust-counts", id="bust-risk"),
    _P(["tune", "threshold", "--against", "threshold-300", "--target", "200",
        "--range", "threshold=100:200:50"], None, id="tune-exact"),
    _P(["tune", "threshold", "--against", "threshold-300", "--target", "200",
        "--range", "threshold=100:200:50", "--monte-carlo", "--budget", "40", "--seed", "1"],
       "general", id="tune-monte-carlo"),
    _P(["tune", f"{PENTA}:keep_high", "--against", f"{PENTA}:most_points",
        "--range", "high=5:6:1", "--monte-carlo", "--budget", "20", "--seed", "1"],
       "referee", id="tune-penta-referee"),
    _P(["evaluate", "threshold-300", "--target", "200"], None, id="evaluate-farkle",
       marks=_slow),
])
def test_every_manifest_records_the_kernel_threads_and_executor(capsys, tmp_path, argv,
                                                                kernel):
    """evaluate, tune and bust-risk wrote manifests without the kernel, the threads or the
    executor that simulate's hold: every manifest written by results.save_run has them now
    (the kernel None where no game was played: an exact evaluation; bust-risk rolls
    dice in its own kernel)."""
    out = tmp_path / "o"
    code, _, err = with_threads(2, lambda: run_cli(capsys, [*argv, "--out", str(out)]))
    assert code == 0, err
    m = json.loads((out / "manifest.json").read_text())
    import numba

    threads = 1 if kernel == "referee" else min(2, numba.config.NUMBA_NUM_THREADS)
    assert _provenance(m) == {"kernel": kernel, "threads": threads, "executor": "local",
                              "workers": None}


def test_a_move_by_move_policy_records_the_one_thread_that_played_it(capsys, tmp_path):
    """A user's Farkle policy that decides move by move is played by the referee in
    Python, on one thread whatever --threads says: simulate, compare and a tournament
    record that (a compare and a tournament recorded numba's threads); a tournament that
    plays some tables on a compiled kernel records numba's, and each kernel."""
    import numba

    policy = tmp_path / "mine.py"
    policy.write_text(MOVE_BY_MOVE)
    mine = f"{policy}:steady"
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    common = ["-n", "20", "--target", "500", "--seed", "1", "--threads", "2"]
    runs = {"simulate": (["simulate", "-s", mine, "--vs", "threshold-300"], "referee", 1),
            "compare": (["compare", mine, "threshold-300"], "referee", 1),
            "tournament": (["tournament", mine, "threshold-300"], "referee", 1),
            "mixed": (["tournament", mine, "threshold-300", "ai", "--seats", "2"],
                      ["referee", "general"], threads)}
    for name, (argv, kernel, used) in runs.items():
        out = tmp_path / name
        code, _, err = with_threads(1, lambda a=argv, o=out: run_cli(
            capsys, [*a, *common, "--out", str(o)]))
        assert code == 0, err
        m = json.loads((out / "manifest.json").read_text())
        assert _provenance(m) == {"kernel": kernel, "threads": used, "executor": "local",
                                  "workers": None}, name
        if name == "simulate":  # as --json says
            assert (m["summary"]["kernel"], m["summary"]["threads"]) == (kernel, used)


class _Bare:
    """A result of a command that plays no game and says nothing of how it ran."""

    game = "farkle"

    def manifest(self):
        return {"game": "farkle", "what": "measured"}

    def to_dict(self):
        return {"what": "measured"}

    def to_frame(self):
        return pd.DataFrame([{"what": 1}])


def test_save_run_gives_every_manifest_the_same_provenance_fields(tmp_path):
    """The one place: results.save_run records the kernel, the threads, the executor and
    the workers of any result, from its manifest where it has them (a run of policies),
    else from the result (``kernels``, ``kernel``, ``threads``), else none played, this
    process's threads, locally."""
    import numba

    from dicelab.parallel import threads
    from dicelab.results import PROVENANCE, save_run

    class Played(_Bare):
        kernels = ("referee", "referee")

    class Mixed(_Bare):
        kernels = ("referee", "general", "general")

    class Dask(_Bare):
        kernel, threads, executor, workers = "general", 3, "dask", 4

    def saved(result) -> dict:
        out = tmp_path / type(result).__name__
        save_run(out, result, command=["dicelab", "x"])
        return json.loads((out / "manifest.json").read_text())

    expected = {
        _Bare: {"kernel": None, "threads": threads(), "executor": "local", "workers": None},
        Played: {"kernel": "referee", "threads": 1, "executor": "local", "workers": None},
        Mixed: {"kernel": ["referee", "general"], "threads": threads(),
                "executor": "local", "workers": None},
        Dask: {"kernel": "general", "threads": 3, "executor": "dask", "workers": 4},
    }
    for cls, fields in expected.items():
        m = saved(cls())
        assert tuple(k for k in m if k in PROVENANCE) == PROVENANCE
        assert _provenance(m) == fields, cls.__name__
        assert m["what"] == "measured" and m["command"] == ["dicelab", "x"]
    assert numba.get_num_threads() == threads()


@pytest.mark.parametrize("argv, files", [
    (["tournament", "threshold-300", "threshold-500", "-n", "200", "--seed", "1",
      "--target", "500"], ["manifest.json", "ratings.png", "summary.parquet",
                           "win-matrix.png"]),
    (["bust-risk", "-n", "1000", "--seed", "1"], ["manifest.json", "summary.parquet"]),
    (["simulate", "-s", "ai", "-n", "200", "--seed", "1", "--target", "500", "--log",
      "{tmp}/o/games.jsonl", "--log-games", "3"],
     ["games.jsonl", "manifest.json", "summary.parquet"]),
    (["experiment", "run", "threshold-sweep", "--target", "500"],
     ["manifest.json", "sweep.csv", "sweep.parquet"]),
    (["experiment", "run", "{tmp}/ex.toml"],
     ["manifest.json", "ratings.png", "summary.parquet", "win-matrix.png"]),
])
def test_ctrl_c_while_the_results_are_written_lets_them_all_be_written(
        capsys, tmp_path, monkeypatch, argv, files):
    """A real SIGINT (as a terminal's Ctrl-C) that arrives while a command writes its files
    left some of them (a tournament's figures without its summary) and exited 130: once
    the writing has begun the command finishes it, prints and exits 0; Ctrl-C then works
    again in this process (the handler given back)."""
    import signal

    from dicelab import gamelog, plots, results

    sent = []

    def interrupting(save):
        def wrapped(*args, **kwargs):
            if not sent:  # the first file of the run: Ctrl-C now
                sent.append(os.kill(os.getpid(), signal.SIGINT))
            return save(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(plots, "save_png", interrupting(plots.save_png))
    monkeypatch.setattr(results, "atomic_write_parquet",
                        interrupting(results.atomic_write_parquet))
    monkeypatch.setattr(gamelog, "write_games", interrupting(gamelog.write_games))
    (tmp_path / "ex.toml").write_text('name = "ex"\nkind = "tournament"\npolicies = '
                                      '["threshold-300", "threshold-500"]\ngames = 200\n'
                                      'seed = 1\ntarget = 500\n')
    monkeypatch.chdir(tmp_path)
    before = signal.getsignal(signal.SIGINT)
    out = tmp_path / "o"
    argv = [a.format(tmp=tmp_path) for a in argv]
    code, _, err = run_cli(capsys, [*argv, "--out", str(out)])
    assert sent and code == 0 and "interrupted" not in err, err
    assert sorted(p.name for p in out.iterdir()) == files
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_while_a_finished_command_shuts_down_changes_nothing():
    """Ctrl-C after a command printed its results, while the interpreter waited for a
    thread (one storing a table in the cache), printed a traceback from that wait, and a
    little later ended the process by the signal: the command's exit code and nothing
    more, in the console script's process."""
    child = textwrap.dedent("""\
        import sys, threading, time
        import dicelab.cli.main
        from dicelab.cli import entry

        def linger():  # says when the interpreter shuts down, and makes it wait
            while threading.main_thread().is_alive():
                time.sleep(0.01)
            print("shutting down", flush=True)
            time.sleep(1.5)

        def command():  # a finished command that leaves a thread to wait for
            threading.Thread(target=linger).start()

        dicelab.cli.main.main = command
        entry.main()
        """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_shell)
    assert proc.stdout.readline() == "shutting down\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (0, "", "")


def test_ctrl_c_while_numba_compiles_stops_the_command_once_the_compile_is_done():
    """A first run's Ctrl-C reached numba's compiler, which called back into Python: the
    interrupt was printed as ignored and the command went on (exit 0), or it left the
    compile half done (a traceback). The command line's guard waits for the compile.
    (Without it, this function's compile is left undone: not run here, as an interrupted
    compile could leave numba's state in this process amiss for the next tests.)"""
    from numba import njit
    from numba.core import event

    from dicelab.cli.invocation import ctrl_c_between_compiles

    @njit
    def fresh(x):  # new in this process: compiles at its first call
        return x * 3 + 1

    class Press(event.Listener):
        def on_start(self, ev):
            os.kill(os.getpid(), signal.SIGINT)

        def on_end(self, ev):
            pass

    press = Press()
    event.register("numba:compile", press)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    raised = None
    try:
        with ctrl_c_between_compiles():
            fresh(1)
            time.sleep(0.1)  # (where an undelivered interrupt would be delivered)
    except KeyboardInterrupt as exc:
        raised = exc
    finally:
        event.unregister("numba:compile", press)
        signal.signal(signal.SIGINT, previous)
    assert isinstance(raised, KeyboardInterrupt) and fresh.overloads


def test_ctrl_c_set_aside_before_a_command_stays_set_aside():
    """A job a shell starts in the background ignores Ctrl-C; the guard keeps it so."""
    from dicelab.cli.invocation import ctrl_c_between_compiles

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with ctrl_c_between_compiles():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_a_librarys_pyrun_string_is_still_exit_130_under_python_m(tmp_path):
    """An interrupt raised in code a library ran through CPython's PyRun_String (during an
    import, in a first moment of ``python -m dicelab``) left CPython's mark of an unhandled
    KeyboardInterrupt set: the guard printed ``interrupted``, then the interpreter ended
    itself by SIGINT (exit -2, not 130)."""
    (tmp_path / "probe_main.py").write_text(textwrap.dedent("""
        import ctypes
        import dicelab.cli.main

        def interrupted_inside_pyrun_string():
            run = ctypes.pythonapi.PyRun_String
            run.restype = ctypes.py_object
            run.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
            run(b"raise KeyboardInterrupt", 257, {}, {})  # 257: Py_file_input

        dicelab.cli.main.main = interrupted_inside_pyrun_string
        from dicelab.cli.entry import main

        main()
        """))
    proc = subprocess.run([sys.executable, "-m", "probe_main"], cwd=tmp_path,
                          capture_output=True, text=True, preexec_fn=as_from_a_shell)
    assert (proc.returncode, proc.stderr) == (130, "interrupted\n")
