"""Hundreds of bad or odd command lines: every one is one ``error:`` line on stderr, exit
code 2, no traceback, and nothing written (not in the working directory, not at
``--out``)."""

from __future__ import annotations

import itertools
import os

import pytest
from cli_helpers import run_cli

BAD_FARKLE_POLICIES = [
    "threshold-0", "threshold-25", "threshold--50", "threshold-abc", "threshold-300x",
    "ai:base=0", "ai:base=25", "ai:chase=2", "ai:chase=-1", "ai:base=350,base=400",
    "ai:foo=1", "ai:per=0", "ai:max-steps=-1", "ai:step=x", "ai:two-dice=-50", "ai:base",
    "optimal-win:vs=", "optimal-win:vs=bogus", "optimal-win:x=ai", "optimal-win:vs=optimal",
    "bogus", "", " ", "max_ev", "THRESHOLD-300",
]
BAD_GAMES = ["0", "-1", "abc", "1e3", "100000000001", "99999999999999999999", "3.5", ""]
BAD_TARGETS = ["0", "25", "-50", "x", "10001", "1000000000000"]
BAD_SEEDS = ["-1", "x", "1.5"]
BAD_DASK = ["", "local:0", "local:x", "local:-2", "local:99999"]
BAD_THREADS = ["0", "-2", "x"]
BAD_ENDINGS = ["bogus", "", "last_round", "FIRST-TO-BANK"]

TOML_FILES = {
    "malformed.toml": "name = \n",
    "unknown-key.toml": "name = \"x\"\nbogus = 1\n",
    "negative.toml": "straight = -50\n",
    "odd-points.toml": "straight = 25\n",
    "huge.toml": "straight = 5000000\n",
    "ending.toml": "ending = \"sudden\"\n",
    "base.toml": "base = \"nope\"\n",
    "name.toml": "name = \"\"\n",
    "singles.toml": "singles = 100\n",
    "mode.toml": "n-of-a-kind-mode = \"triple\"\n",
    "face.toml": "singles = { 7 = 100 }\n",
    "flag.toml": "four-and-pair-as-three-pairs = 1\n",
    "nothing-scores.toml": "base = \"basic\"\nsingles = {}\nthree-of-a-kind = { 1 = 0, 2 = 0, "
                           "3 = 0, 4 = 0, 5 = 0, 6 = 0 }\n",
    "latin1.toml": b"name = \"caf\xe9\"\n",
}


def _cases(tmp_rules) -> list[list[str]]:
    cases: list[list[str]] = []
    for p in BAD_FARKLE_POLICIES:
        cases += [["simulate", "-s", p, "-n", "100"], ["simulate", "-s", "ai", "--vs", p],
                  ["compare", "ai", p, "-n", "100"], ["compare", p, "ai", "--exact"],
                  ["solve", "farkle", "-p", p], ["policy", "farkle", p]]
    for g in BAD_GAMES:
        cases += [["simulate", "-s", "threshold-300", "-n", g],
                  ["compare", "ai", "max-ev", "-n", g],
                  ["bust-risk", "-n", g], ["simulate", "-s", "optimal", "-n", g]]
    for t in BAD_TARGETS:
        if t != BAD_TARGETS[-1]:  # max-ev takes no target, any valid one is fine
            cases += [["solve", "farkle", "-p", "max-ev", "--target", t]]
        cases += [["simulate", "-s", "threshold-300", "--target", t, "-n", "100"],
                  ["solve", "farkle", "-p", "fastest", "--target", t],
                  ["compare", "ai", "threshold-300", "--exact", "--target", t],
                  ["policy", "farkle", "fastest", "--target", t]]
    for s in BAD_SEEDS:
        cases += [["simulate", "-s", "ai", "--seed", s], ["compare", "ai", "max-ev", "--seed", s],
                  ["bust-risk", "--seed", s]]
    for d in BAD_DASK:
        cases += [["simulate", "-s", "ai", "-n", "100", "--dask", d]]
    for th in BAD_THREADS:
        cases += [["simulate", "-s", "ai", "-n", "100", "--threads", th]]
    for e in BAD_ENDINGS:
        cases += [["simulate", "-s", "ai", "--vs", "ai", "-n", "100", "--ending", e],
                  ["solve", "farkle", "-p", "optimal-win", "--target", "500", "--ending", e],
                  ["compare", "ai", "max-ev", "--exact", "--ending", e]]
    for name in TOML_FILES:
        f = str(tmp_rules / name)
        cases += [["simulate", "-s", "threshold-300", "-n", "100", "--rules", f],
                  ["solve", "farkle", "-p", "max-ev", "--rules", f], ["bust-risk", "--rules", f]]
    for r in ["bogus", "missing.toml", "/dev/zero", str(tmp_rules)]:
        cases += [["simulate", "-s", "threshold-300", "--rules", r],
                  ["solve", "penta", "--rules", r], ["simulate", "-s", "optimal", "--rules", r]]
    cases += [
        # seats and games
        ["simulate", "-s", "ai", *itertools.chain.from_iterable(["--vs", "ai"] * 7)],
        ["simulate", "-s", "optimal", "--vs", "ai"], ["simulate", "-s", "ai", "--vs", "greedy"],
        ["simulate", "-s", "threshold-300", "--vs", "ai", "--first", "2"],
        ["simulate", "-s", "threshold-300", "--first", "-1"],
        ["simulate", "-s", "optimal", "--target", "5000"],
        ["simulate", "-s", "optimal", "--first", "0"],
        ["simulate", "-s", "greedy", "--ending", "first-to-bank"],
        ["simulate", "-s", "optimal-win", "-n", "100", "--target", "500"],
        ["simulate", "-s", "optimal-win", "--vs", "ai", "--vs", "ai", "--target", "500"],
        ["compare", "ai"], ["compare", "ai", "ai"], ["compare", "ai", "optimal"],
        ["compare", "optimal", "greedy", "--exact", "--target", "1000"], ["compare"],
        ["simulate"], ["simulate", "-s"], ["simulate", "--bogus"], ["bogus-command"],
        # solvers and policies
        ["solve", "farkle", "-p", "ai"], ["solve", "farkle", "-p", "optimal"],
        ["solve", "farkle"], ["solve", "farkle", "-p", "fastest", "--target", "100000000"],
        ["solve", "farkle", "-p", "optimal-win", "--target", "10000000"],
        ["solve", "farkle", "-p", "threshold-300", "--target", "1000000000000"],
        ["policy", "farkle", "ai", "--me", "25"], ["policy", "farkle", "ai", "--me", "-50"],
        ["policy", "farkle", "fastest", "--me", "10000"],
        ["policy", "farkle", "max-ev", "--plot", "x.txt"],
        ["policy", "farkle", "max-ev", "--plot", "/nonexistent/x.png"],
        ["policy", "farkle", "max-ev", "--plot", "x.png", "--max-points", "10"],
        ["policy", "farkle", "optimal"],
        ["solve", "penta", "--distribution", "--policy", "ai"],
        ["solve", "penta", "--plot", "x.png"], ["solve", "penta", "--out", "x"],
        ["solve", "penta", "--distribution", "--plot", "x.txt"],
        ["solve", "penta", "--distribution", "--out", "/proc/x"],
        ["policy", "penta", "--roll", "1,2,3"], ["policy", "penta", "--roll", "1,2,3,4,7"],
        ["policy", "penta", "--roll", "a,b,c,d,e"], ["policy", "penta", "--roll", ""],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--rolls-left", "3"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--rolls-left", "-1"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "fours=13"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "bogus=1"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "fours"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "penta=40"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "bonuses=1"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "bonuses=5,penta=50"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--card", "fours=12,fours=8"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--strategy", "ai"],
        ["policy", "penta", "--roll", "1,2,3,4,5", "--rules", "bogus"],
        # cache and experiments
        ["cache", "prune", "--max-size", "2G"], ["cache", "prune", "--max-size", "-5MB"],
        ["cache", "prune", "--max-size", "lots"], ["cache", "prune"],
        ["cache", "--json", "list"], ["cache", "bogus"],
        ["experiment", "run", "bogus"], ["experiment", "run", "threshold-sweep", "--bogus", "1"],
        ["experiment", "run", "threshold-sweep", "--target", "25"],
        ["experiment", "run", "head-to-head", "--games", "0"],
        ["experiment", "run", "head-to-head", "--rules", "bogus"],
        ["experiment", "run", "threshold-sweep", "--out", "/proc/x"],
        # output directories
        ["simulate", "-s", "ai", "-n", "100", "--out", ""],
        ["simulate", "-s", "ai", "-n", "100", "--out", "/proc/x"],
        ["simulate", "-s", "ai", "-n", "100", "--out", "x" * 300],
        ["compare", "ai", "max-ev", "-n", "100", "--out", "/proc/x"],
        ["bust-risk", "-n", "100", "--out", "/proc/x"],
    ]
    return cases


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad-rules")
    for name, text in TOML_FILES.items():
        (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return d


def test_there_are_at_least_300_cases(rules_dir):
    assert len(_cases(rules_dir)) >= 300


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    d = tmp_path / "cwd"
    d.mkdir()
    monkeypatch.chdir(d)
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "16GB")  # the same refusals on any machine
    return d


def _check_all(capsys, cases, workdir):
    bad = []
    for argv in cases:
        code, _, err = run_cli(capsys, argv)
        lines = err.splitlines()
        ok = (code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
              and "Traceback" not in err and os.listdir(workdir) == [])
        if not ok:
            bad.append((argv, code, err[-300:], os.listdir(workdir)))
            for f in os.listdir(workdir):
                os.remove(workdir / f)
    assert not bad, "\n".join(map(str, bad[:20]))


@pytest.mark.parametrize("part", range(4))
def test_every_bad_input_is_one_error_line_and_exit_2(capsys, rules_dir, workdir, part):
    cases = _cases(rules_dir)
    _check_all(capsys, cases[part::4], workdir)


def test_help_options(capsys):
    for argv in (["-h"], ["simulate", "-h"], ["solve", "farkle", "-h"], ["policy", "-h"],
                 ["compare", "--help"]):
        code, out, err = run_cli(capsys, argv)
        assert code == 0 and "Usage" in out and not err
