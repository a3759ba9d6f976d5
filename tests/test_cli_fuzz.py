"""Hundreds of bad or odd command lines: every one is one ``error:`` line on stderr, exit
code 2, no traceback, and nothing written or changed: not in the working directory, not in
the table cache, not at an output path, and no existing file, symbolic link, pipe or
device of a sandbox (nor /dev/null, /dev/full, /dev/zero) touched.

The command lines run in-process through :func:`dicelab.cli.main.main` (the console
script's own code, minus the interpreter start); a sample also runs as real processes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

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
        cases += [["solve", "farkle", "-p", "max-ev", "--target", t],  # it reads none
                  ["simulate", "-s", "threshold-300", "--target", t, "-n", "100"],
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
        # an option the command would ignore there
        ["simulate", "-s", "threshold-300", "--first", "0"],
        ["simulate", "-s", "threshold-300", "--ending", "last-round"],
        ["policy", "farkle", "max-ev", "--target", "1000", "--me", "500", "--opp", "700"],
        ["policy", "farkle", "fastest", "--opp", "100"],
        ["policy", "farkle", "ai", "--ending", "first-to-bank"],
        ["tune", "threshold", "--against", "ai", "--seed", "1"],
        ["tune", "threshold", "--against", "ai", "--trials", "5"],
        ["cache", "prune", "--max-size", "1GB", "--dry-run", "--yes"],
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
        ["policy", "farkle", "max-ev", "--my-farkles", "3"],
        ["policy", "farkle", "optimal-win", "--rules", "facebook", "--opp-farkles", "-1"],
        ["policy", "farkle", "fastest", "--rules", "facebook", "--me", "-2050"],
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


#: Digits of other scripts that ``int()`` reads but no option takes.
ODD_DIGITS = ["\uff11", "\u0661", "\u0967", "\u00b9", "\U0001d7d9"]
HUGE = "9" * 5000
BIG = str(2**63)
#: Integers that ``int()`` (and Typer's own conversion) reads but no option takes:
#: grouped, with a plus sign or a signed zero, spaced; and their neighbours.
ODD_INTEGERS = ["2_000", "1_0", "+2000", "-0", "-00", " 2000", "2000 ", "2 000",
                "\t2000", "\uff12000", "0x10", "1e3", "2,000"]
#: Dice lists with an empty item (two commas, or one at an end) or an odd number.
BAD_ROLLS = ["{},", ",{}", ",{},", "1,,{}", "1, ,{}", "1 , , {}", ",", "+5,{}", "-0,{}",
             "1_1,{}", "\uff11,{}"]


def _bad_output_files(sb: Path, suffix: str) -> list[str]:
    """Output file paths that must be refused before any work."""
    return [f"/proc/x{suffix}", str(sb / "dir"), str(sb / "no" / "such" / f"x{suffix}"),
            str(sb / "loop"), "", "x" * 300 + suffix, str(sb / "sock"),
            str(sb / "existing.txt" / f"x{suffix}"), str(sb / "dangling-loop"),
            str(sb / f"dangling{suffix}")]


def _bad_out_dirs(sb: Path) -> list[str]:
    return ["/proc/x", str(sb / "existing.txt"), str(sb / "loop"), "", "x" * 300,
            str(sb / "fifo"), str(sb / "existing.txt" / "sub"), str(sb / "outdir"),
            "/proc", str(sb / "dangling-dir")]


def _more_cases(sb: Path) -> list[list[str]]:
    """Outputs that cannot be written, inputs that are not regular files, numbers in other
    digits or too large, options without their partner, and their neighbours."""
    good = str(sb / "good.jsonl")
    cases: list[list[str]] = []
    for f in _bad_output_files(sb, ".jsonl"):
        cases += [["simulate", "-s", "threshold-300", "-n", "100", "--log", f],
                  ["play", "farkle", "--log", f], ["play", "penta", "--log", f]]
    for f in _bad_output_files(sb, ".png"):
        cases += [["policy", "farkle", "max-ev", "--plot", f],
                  ["solve", "penta", "--distribution", "--plot", f],
                  ["analyse", good, "--plot", f]]
    for d in _bad_out_dirs(sb):
        cases += [["simulate", "-s", "threshold-300", "-n", "100", "--out", d],
                  ["analyse", good, "--out", d], ["bust-risk", "-n", "100", "--out", d],
                  ["solve", "penta", "--distribution", "--out", d],
                  ["tournament", "threshold-300", "threshold-500", "-n", "100", "--out", d],
                  ["experiment", "run", "threshold-sweep", "--out", d]]
    for f, d in ((str(sb / "dangling.png"), str(sb / "dangling-dir")),):  # every other one
        cases += [["evaluate", "threshold-300", "--target", "1000", "--plot", f],
                  ["evaluate", "threshold-300", "--target", "1000", "--out", d],
                  ["compare", "ai", "max-ev", "-n", "100", "--out", d],
                  ["tune", "ai", "--against", "threshold-300", "--out", d]]
    bad_inputs = ["/dev/zero", "/dev/null", str(sb / "fifo"), str(sb / "dir"),
                  str(sb / "loop"), str(sb / "sock"), str(sb / "missing.jsonl")]
    for f in [*bad_inputs, *(str(sb / n) for n in ("nested.jsonl", "nested-header.jsonl",
                                                    "long.jsonl", "binary.jsonl",
                                                    "empty.jsonl", "existing.txt"))]:
        cases += [["analyse", f], ["analyse", good, f]]
    for f in [*bad_inputs, str(sb / "nested.toml"), str(sb / "binary.jsonl")]:
        cases += [["simulate", "-s", "threshold-300", "-n", "100", "--rules", f],
                  ["advise", "farkle", "--roll", "1,5,2,3,4,6", "--rules", f]]
    for f in ("fifo.toml", "dir.toml", "nested.toml", "missing.toml", "loop.toml"):
        cases += [["experiment", "run", str(sb / f)]]
    for d in [*ODD_DIGITS, HUGE]:
        cases += [["advise", "farkle", "--roll", f"{d},5,2,3,4,6"],
                  ["advise", "penta", "--roll", f"{d},3,3,4,6"],
                  ["policy", "penta", "--roll", "1,3,3,4,6", "--card", f"fours={d}"],
                  ["simulate", "-s", f"threshold-{d}00", "-n", "100"],
                  ["simulate", "-s", f"ai:base={d}50", "-n", "100"],
                  ["cache", "prune", "--max-size", f"{d}GB", "--dry-run"],
                  ["tune", "ai", "--against", "threshold-300", "--range", f"base={d}:400:50"],
                  ["tournament", "ai", "max-ev", "--sprt", f"elo1={d}"],
                  ["simulate", "-s", "ai", "-n", d], ["simulate", "-s", "ai", "--seed", d],
                  ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--top", d]]
    for v in ODD_INTEGERS:
        cases += [["simulate", "-s", "ai", "--target", v, "-n", "100"],
                  ["simulate", "-s", "ai", "-n", v], ["simulate", "-s", "ai", "--seed", v],
                  ["simulate", "-s", "ai", "--vs", "ai", "-n", "100", "--first", v],
                  ["compare", "ai", "max-ev", "--exact", "--target", v],
                  ["policy", "farkle", "optimal-win", "--target", "300", "--me", v],
                  ["policy", "farkle", "max-ev", "--rules", "facebook", "--my-farkles", v],
                  ["advise", "farkle", "--roll", "1,5", "--turn-points", v],
                  ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--top", v],
                  ["advise", "penta", "--roll", "1,3,3,4,6", "--rolls-left", v],
                  ["tournament", "ai", "max-ev", "--seats", v, "-n", "100"],
                  ["tune", "ai", "--against", "threshold-300", "--trials", v],
                  ["experiment", "run", "threshold-sweep", "--target", v],
                  ["play", "farkle", "--target", v], ["play", "penta", "--seed", v],
                  ["simulate", "-s", "ai", "-n", "100", "--dask", f"local:{v}"],
                  ["tune", "ai", "--against", "threshold-300", "--range",
                   f"base=200:{v}:50"]]
        if v.strip() == v:  # a policy's parameters may have spaces around them
            cases += [["simulate", "-s", f"ai:base={v}", "-n", "100"],
                      ["advise", "penta", "--roll", "1,3,3,4,6", "--objective",
                       f"at-least:{v}"]]
    for roll in BAD_ROLLS:
        cases += [["advise", "farkle", "--roll", roll.format("1,5,2,3,4")],
                  ["advise", "farkle", "--roll", roll.format("5"), "--turn-points", "100"],
                  ["advise", "penta", "--roll", roll.format("3,3,4,6")],
                  ["policy", "penta", "--roll", roll.format("3,3,4,6")]]
    for card in (",fours=12", "fours=12,", "fours=12,,penta=50", ",", "fours=+12",
                 "fours=1_2"):
        cases += [["advise", "penta", "--roll", "1,3,3,4,6", "--card", card]]
    for spec in ("elo1=5,", ",elo1=5", "elo1=5,,alpha=0.1", ",", "elo1=5, ,alpha=0.1"):
        cases += [["tournament", "ai", "max-ev", "--sprt", spec]]
    for v in (BIG, f"-{BIG}", "1e400", "nan", "inf", "-inf", "1e18", "1001", "x"):
        cases += [["tournament", "ai", "max-ev", "--sprt", f"elo1={v}"],
                  ["tournament", "ai", "max-ev", "--sprt", f"elo0={v}"]]
    cases += [["tournament", "ai", "max-ev", "--sprt", "elo1=10,elo1=20"]]
    for seats in (BIG, "100000", "0", "-1", HUGE):
        cases += [["tournament", "ai", "max-ev", "--seats", seats, "-n", "100"],
                  ["tournament", "optimal", "greedy", "--seats", seats, "-n", "100"]]
    cases += [["tournament", "ai", "max-ev", "--seats", "8", "-n", "100"]]
    for top in ("-1", f"-{BIG}", "x"):
        cases += [["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--top", top],
                  ["advise", "penta", "--roll", "1,3,3,4,6", "--top", top]]
    for mp in (BIG, "99", "100001", "-5", HUGE):
        cases += [["policy", "farkle", "max-ev", "--plot", "x.png", "--max-points", mp]]
    for params in ("", ",", "base,,one-die", " ", "bogus"):
        cases += [["tune", "ai", "--against", "threshold-300", "--params", params]]
    for games in ("1", "5", "0", BIG):
        cases += [["simulate", "-s", "threshold-300", "-n", "100", "--log-games", games]]
    cases += [
        ["policy", "farkle", "max-ev", "--max-points", "500"],
        ["tournament", "threshold-300", "threshold-500", "-n", "100", "--out",
         str(sb / "outfig")],  # a figure's name is a directory there
        ["simulate", "-s", "threshold-1_000", "-n", "100"],  # a name has one spelling
        ["cache", "prune", "--max-size", "1_000MB", "--dry-run"],
        ["compare", "optimal-win", "max-ev", "--exact", "--target", "60000"],
        ["simulate", "-s", "optimal-win", "--vs", "ai", "--target", "60000", "-n", "100"],
        ["simulate", "-s", "threshold-300", "-n", "100", "--seed", "1", "--log", "/dev/full",
         "--log-games", "1"],
        ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--opp-farkles", "1"],
        ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--my-farkles", "3"],
        ["advise", "farkle", "--roll", "1,5", "--turn-points", "100", "--my-farkles", "-1"],
    ]
    return cases


#: Command groups with nothing after them: their help on stderr, exit 2 (a usage error).
BARE_GROUPS = [[], ["solve"], ["experiment"], ["experiment", "run"], ["play"], ["advise"],
               ["policy"]]


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad-rules")
    for name, text in TOML_FILES.items():
        (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return d


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """Existing files of every kind that a bad command line names, none of which it may
    change."""
    from dicelab.gamelog import write_games
    from dicelab.logplay import play_games

    sb = tmp_path_factory.mktemp("sandbox")
    (sb / "existing.txt").write_text("keep me\n")
    (sb / "dir").mkdir()
    (sb / "dir.toml").mkdir()
    (sb / "outdir").mkdir()
    (sb / "outdir" / "manifest.json").mkdir()  # --out where a file must go is a directory
    (sb / "outfig" / "ratings.png").mkdir(parents=True)
    (sb / "link.jsonl").symlink_to("existing.txt")
    (sb / "loop").symlink_to("loop")
    (sb / "loop.toml").symlink_to("loop.toml")
    (sb / "dangling-loop").symlink_to(sb / "loop" / "x")
    for name in ("dangling.jsonl", "dangling.png", "dangling-dir"):  # a link to nothing
        (sb / name).symlink_to(sb / ("made-" + name))
    os.mkfifo(sb / "fifo")
    os.mkfifo(sb / "fifo.toml")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sb / "sock"))
    (sb / "nested.jsonl").write_text("[" * 100_000 + "\n")
    (sb / "nested-header.jsonl").write_text('{"dicelab_log": 1, "x": ' + "[" * 100_000 + "\n")
    (sb / "nested.toml").write_text("a = " + "[" * 30_000 + "\n")
    (sb / "long.jsonl").write_text('{"dicelab_log": 1, "x": "' + "x" * (5 << 20) + '"}\n')
    (sb / "binary.jsonl").write_bytes(b"\xff\xfe\x00\x81" * 100)
    (sb / "empty.jsonl").write_bytes(b"")
    write_games(sb / "good.jsonl", play_games("farkle", ["threshold-300"], games=1, seed=1,
                                              target=500))
    return sb


SYSTEM_NODES = [Path(p) for p in ("/dev/null", "/dev/full", "/dev/zero") if os.path.exists(p)]


def _snapshot(sb: Path) -> dict:
    """What must not change: every entry of the sandbox (identity, kind, size, time and
    content of files, link targets), and the system's device nodes."""
    out = {}
    for p in [*sorted(sb.rglob("*")), *SYSTEM_NODES]:
        st = os.lstat(p)
        item = (st.st_ino, st.st_mode, st.st_rdev)
        if stat.S_ISREG(st.st_mode):
            item += (st.st_size, st.st_mtime_ns)
            if st.st_size < 1 << 16:  # a write in place shows in the time; small ones hashed
                item += (hashlib.sha256(p.read_bytes()).hexdigest(),)
        elif stat.S_ISLNK(st.st_mode):
            item += (os.readlink(p),)
        out[str(p)] = item
    return out


def test_there_are_at_least_500_cases(rules_dir, sandbox):
    assert len(_cases(rules_dir)) + len(_more_cases(sandbox)) >= 500


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    d = tmp_path / "cwd"
    d.mkdir()
    monkeypatch.chdir(d)
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "16GB")  # the same refusals on any machine
    return d


def _check_all(capsys, cases, workdir, sandbox=None, cache=None):
    bad = []
    before = None if sandbox is None else _snapshot(sandbox)
    for argv in cases:
        code, _, err = run_cli(capsys, argv)
        lines = err.splitlines()
        written = os.listdir(workdir) + ([] if cache is None or not cache.exists()
                                         else os.listdir(cache))
        changed = sandbox is not None and _snapshot(sandbox) != before
        ok = (code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
              and "Traceback" not in err and not written and not changed)
        if not ok:
            bad.append((argv[:8], code, err[-300:], written, changed))
            for f in os.listdir(workdir):
                os.remove(workdir / f)
            if changed:
                before = _snapshot(sandbox)
    assert not bad, "\n".join(map(str, bad[:20]))


#: The parts of the cases a test checks; the fast tier takes the first two (the same checks,
#: on half the inputs), the default suite all four.
PARTS = [0, 1, *(pytest.param(k, marks=pytest.mark.slow) for k in (2, 3))]


@pytest.mark.parametrize("part", PARTS)
def test_every_bad_input_is_one_error_line_and_exit_2(capsys, rules_dir, workdir, part):
    cases = _cases(rules_dir)
    _check_all(capsys, cases[part::4], workdir)


@pytest.mark.parametrize("part", PARTS)
def test_bad_outputs_inputs_and_numbers_change_nothing(capsys, sandbox, workdir,
                                                       _isolated_cache_dir, part):
    _check_all(capsys, _more_cases(sandbox)[part::4], workdir, sandbox, _isolated_cache_dir)


def test_a_game_whose_log_cannot_be_written_exits_2_and_leaves_the_device(
        capsys, monkeypatch, sandbox, workdir):
    import io

    before = _snapshot(sandbox)
    for game, ai in (("farkle", "ai"), ("penta", "greedy")):
        monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
        code, out, err = run_cli(capsys, ["play", game, "--ai", ai, "--seed", "1", "--log",
                                          "/dev/full"])
        assert code == 2 and "you quit" in out
        assert err == "error: --log /dev/full: cannot write (No space left on device)\n"
    assert _snapshot(sandbox) == before and os.listdir(workdir) == []


def test_an_optimal_win_table_too_large_for_memory_is_one_error_line(capsys, monkeypatch,
                                                                     workdir):
    """Refused by the solve's memory check before anything is built for it (the bound of
    its policy table first built last-round tables as large as the target)."""
    import io

    huge = "5000000000"
    for argv in (["compare", "ai", "optimal-win", "--exact", "--target", huge],
                 ["compare", "ai", "optimal-win:vs=ai", "--exact", "--target", huge],
                 ["play", "farkle", "--ai", "optimal-win", "--target", huge, "--seed", "1"]):
        monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
        assert err.startswith("error: optimal-win") and "states) would need" in err, err
        assert "Roll:" not in out
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))  # a target that fits: it plays
    code, out, err = run_cli(capsys, ["play", "farkle", "--ai", "optimal-win", "--target",
                                      "500", "--seed", "1"])
    assert code == 0 and err == "" and "Roll:" in out and os.listdir(workdir) == []


def test_a_command_group_alone_prints_its_help_on_stderr_and_exits_2(capsys):
    for argv in BARE_GROUPS:
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and out == "" and err.startswith("Usage: dicelab"), argv
        assert "Commands:" in err and "Traceback" not in err


def test_help_options(capsys):
    for argv in (["-h"], ["simulate", "-h"], ["solve", "farkle", "-h"], ["policy", "-h"],
                 ["compare", "--help"]):
        code, out, err = run_cli(capsys, argv)
        assert code == 0 and "Usage" in out and not err


def test_the_rules_option_of_farkle_commands_names_every_preset(capsys):
    from dicelab.farkle.rules import PRESETS

    for argv in (["play", "farkle", "-h"], ["advise", "farkle", "-h"],
                 ["solve", "farkle", "-h"]):
        code, out, _ = run_cli(capsys, argv)
        text = " ".join(out.split())
        listed = text[text.index("--rules"):].split(")")[0]
        assert code == 0 and all(name in listed for name in PRESETS), (argv, listed)


#: A sample of the cases run as real processes of the console script, all at once (the
#: rest run in-process: the same code after the interpreter's start).
PROCESS_SAMPLE = [
    ["analyse", "/dev/zero"], ["analyse", "{sb}/fifo"],
    ["simulate", "-s", "threshold-300", "-n", "100", "--log", "/dev/full", "--log-games", "1"],
    ["tournament", "optimal", "greedy", "--seats", BIG],
    ["solve", "penta", "--distribution", "--plot", "/proc/x.png"],
]


@pytest.mark.parametrize("sample", [
    pytest.param(PROCESS_SAMPLE[:2], id="two"),
    pytest.param(PROCESS_SAMPLE[2:], marks=pytest.mark.slow, id="the-rest"),  # fast twin: two
])
def test_a_sample_as_processes_of_the_console_script(sandbox, tmp_path, sample):
    exe = str(Path(sys.executable).with_name("dicelab"))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {**os.environ, "DICELAB_MEMORY_LIMIT": "16GB",
           "DICELAB_CACHE_DIR": str(tmp_path / "cache")}
    before = _snapshot(sandbox)
    procs = [subprocess.Popen([exe, *(a.format(sb=sandbox) for a in argv)], cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for argv in [*sample, ["experiment", "run"]]]
    results = [(p.args[1:], *p.communicate(timeout=300), p.returncode) for p in procs]
    for argv, out, err, code in results[:len(sample)]:
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert err.startswith("error: "), (argv, err)
    for argv, out, err, code in results[len(sample):]:
        assert code == 2 and out == "" and err.startswith("Usage: dicelab"), (argv, err)
    assert _snapshot(sandbox) == before
    assert os.listdir(cwd) == [] and not (tmp_path / "cache").exists()


def _integer_options():
    """(command words, parameter) of every integer option of every command."""
    from dicelab.cli.main import command

    found = []

    def walk(cmd, words):
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*words, name])
        found.extend((words, p) for p in cmd.params
                     if getattr(p, "type_descriptor", None) is not None
                     and p.type_descriptor.annotation is int)

    walk(command(), [])
    return found


def test_every_integer_option_takes_its_digits_alone():
    """Every integer option of every command (play's and the experiments' too) reads
    ASCII digits, a minus sign before a negative number, and refuses the rest of what
    int() reads, naming the option."""
    import typer

    from dicelab.cli.main import command

    options = _integer_options()
    names = {(" ".join(w), p.opts[0]) for w, p in options}
    assert len(options) >= 50
    assert {("play farkle", "--target"), ("advise farkle", "--me"), ("simulate", "--games"),
            ("experiment run head-to-head", "--seed")} <= names
    for words, param in options:
        ctx = typer.Context(command())
        assert param.process_value(ctx, "12") == 12, words
        assert param.process_value(ctx, "012") == 12, words
        for odd in [*ODD_INTEGERS, *ODD_DIGITS, "", "12 "]:
            with pytest.raises(Exception, match="not an integer in the digits 0-9") as exc:
                param.process_value(ctx, odd)
            assert type(exc.value).__name__ == "BadParameter", (words, odd)


def test_integers_and_lists_as_users_write_them_still_work(capsys):
    """The spellings next to the refused ones: digits, a minus sign for a negative total,
    leading zeros, dice separated by commas, spaces or both, spaces around a list's
    items."""
    from dicelab.cli.advise_cmds import parse_dice
    from dicelab.penta.policies import Scorecard
    from dicelab.sprt import SprtSpec

    def ok(*argv) -> dict:
        code, out, err = run_cli(capsys, [*argv, "--json"])
        assert code == 0, (argv, err)
        return json.loads(out)

    plain = ok("advise", "farkle", "--roll", "1,1,5,2,3,4", "--top", "2")
    for roll in ("1 1 5 2 3 4", " 1,1,5,2,3,4 ", "1, 1, 5, 2, 3, 4", "1 ,1 ,5 ,2 ,3 ,4",
                 "1,1 5,2 3,4"):
        assert ok("advise", "farkle", "--roll", roll, "--top", "02") == plain, roll
    assert parse_dice("1 3, 3 ,4,6", "--roll", range(5, 6), "1,3,3,4,6") == [1, 3, 3, 4, 6]
    assert Scorecard.parse(" fours=12 , penta=50 ") == Scorecard.parse("fours=12,penta=50")
    d = ok("policy", "farkle", "ai", "--rules", "facebook", "--me", "-1000", "--opp", "900")
    assert (d["me"], d["opp"]) == (-1000, 900)
    d = ok("simulate", "-s", "threshold-300", "-n", "0100", "--seed", "0", "--target", "500")
    assert (d["games"], d["seed"], d["target"]) == (100, 0, 500)
    assert Scorecard.parse("").total == Scorecard.parse("  ").total == 0
    assert SprtSpec.parse("elo1=5, alpha=0.1") == SprtSpec(elo1=5.0, alpha=0.1)
    assert SprtSpec.parse("") == SprtSpec()
