"""One vocabulary: docs/glossary.md lists every reported field, and the reports follow it.

Every command that has ``--json`` runs here twice, once with ``--json`` and once printing
its tables, checked by :mod:`glossary_checks`. (The Penta objective's report is checked
where its values are: tests/test_penta_objectives.py.)
"""

from __future__ import annotations

import json
import re

import pytest
from cli_helpers import run_cli
from glossary_checks import (
    GLOSSARY,
    GLOSSARY_TERMS,
    capture_tables,
    check_keys,
    check_tables,
    run_both,
)
from rich.table import Table


@pytest.fixture
def printed(monkeypatch):
    """The rich tables the commands print, in order."""
    return capture_tables(monkeypatch)


def test_the_glossary_is_well_formed():
    """Every row parses, every format named exists, and no field is listed twice."""
    text = GLOSSARY.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) > 100
    names = [n for line in rows if line.count("|") == 6
             for n in re.findall(r"`([^`]+)`", line.strip("|").split("|")[0])]
    repeated = {n for n in names if names.count(n) > 1}
    assert not repeated, f"listed twice: {sorted(repeated)}"
    assert GLOSSARY_TERMS.formats_of("win rate")[0] == {"percent"}
    assert GLOSSARY_TERMS.formats_of("mean ones")[0] == {"number"}
    assert GLOSSARY_TERMS.formats_of("not a label") == (set(), set())


def test_the_checks_can_fail():
    with pytest.raises(AssertionError, match=r"not in docs/glossary\.md"):
        check_keys({"games": 1, "mean_turns_ci": [1, 2]}, "x")
    check_keys({"final_score_percentiles": {"50": 1}, "mean_turns_ci95": [1, 2]}, "x")
    t = Table("win rate")
    t.add_row("0.5379")  # a fraction where a percent belongs
    with pytest.raises(AssertionError, match="is not"):
        check_tables([t], "x")
    t = Table("win rate", "95% interval")
    t.add_row("53.79%", "0.53-0.54")
    with pytest.raises(AssertionError, match="not in the glossary"):
        check_tables([t], "x")


FARKLE_COMMANDS = [
    ["simulate", "-s", "threshold-300", "-n", "3000", "--seed", "1"],
    ["simulate", "-s", "ai", "--vs", "threshold-300", "-n", "3000", "--seed", "1",
     "--target", "2000"],
    ["compare", "ai", "threshold-300", "-n", "3000", "--seed", "1", "--target", "1000"],
    ["compare", "ai", "threshold-300", "--exact", "--target", "500"],
    ["compare", "ai", "threshold-300", "--exact", "--target", "500", "--rules", "facebook"],
    ["tournament", "ai", "max-ev", "threshold-300", "--seats", "3", "-n", "3000", "--seed",
     "1", "--target", "1000"],
    ["tournament", "ai", "threshold-300", "--sprt", "--seed", "1", "--target", "1000"],
    ["tune", "threshold", "--against", "ai", "--target", "500"],
    ["evaluate", "threshold-300", "--target", "500"],
    ["tune", "ai", "--params", "base,two-dice", "--against", "threshold-300", "--target",
     "1000", "--trials", "3", "--seed", "1", "--monte-carlo", "--budget", "3000"],
    ["bust-risk", "-n", "3000", "--seed", "1"],
    ["solve", "farkle", "-p", "threshold-300"],
    ["solve", "farkle", "-p", "max-ev"],
    ["solve", "farkle", "-p", "max-ev", "--rules", "facebook"],
    ["solve", "farkle", "-p", "fastest", "--target", "1000"],
    ["solve", "farkle", "-p", "fastest", "--target", "1000", "--rules", "facebook"],
    ["solve", "farkle", "-p", "optimal-win", "--target", "500"],
    ["solve", "farkle", "-p", "optimal-win:vs=threshold-300", "--target", "500"],
    ["solve", "farkle", "-p", "optimal-win", "--target", "500", "--rules", "facebook"],
    ["policy", "farkle", "max-ev"],
    ["advise", "farkle", "--roll", "1,1,5,2,3,4", "--top", "0"],
    ["advise", "farkle", "--roll", "1,1,5,2,3,4", "--me", "300", "--opp", "400", "--target",
     "500"],
    ["experiment", "list"],
]


def test_farkle_reports_follow_the_glossary(capsys, printed, tmp_path, monkeypatch):
    from dicelab import config

    # facebook's exact solves: totals down to two penalties below zero (the smallest floor)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    for argv in FARKLE_COMMANDS:
        run_both(capsys, printed, argv)
    for name, extra in (("threshold-sweep", ["--target", "1000"]),
                        ("head-to-head", ["--target", "500", "-n", "500", "--seed", "1"])):
        run_both(capsys, printed, ["experiment", "run", name, *extra, "--out",
                                    str(tmp_path / name)])
    toml = tmp_path / "e.toml"
    toml.write_text("name = 'e'\nkind = 'tournament'\npolicies = ['ai', 'threshold-T']\n"
                    "seats = 2\ngames = 500\nseed = 1\ntarget = 500\n"
                    "[sweep]\nT = { from = 200, to = 300, step = 100 }\n")
    run_both(capsys, printed, ["experiment", "run", str(toml), "--out", str(tmp_path / "e")])
    run_both(capsys, printed, ["cache", "list"])
    run_both(capsys, printed, ["cache", "prune", "--max-size", "1TB", "--dry-run"])
    log = tmp_path / "f.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", "ai", "--vs", "threshold-300", "-n",
                                    "10", "--seed", "1", "--target", "1000", "--log",
                                    str(log), "--log-games", "2"])
    assert code == 0, err
    for measure in ("turn", "win"):  # analyse's tables belong to the analysis itself
        code, out, err = run_cli(capsys, ["analyse", str(log), "--measure", measure,
                                          "--json"])
        assert code == 0, err
        check_keys(json.loads(out), f"analyse --measure {measure}")


@pytest.mark.slow
def test_penta_reports_follow_the_glossary(capsys, printed, tmp_path):
    for argv in (["solve", "penta"],
                 ["solve", "penta", "--distribution", "-p", "greedy"],
                 ["advise", "penta", "--roll", "6,6,6,2,1"],
                 ["simulate", "-s", "greedy", "-n", "3000", "--seed", "1"],
                 ["simulate", "-s", "greedy", "--vs", "greedy", "-n", "3000", "--seed", "1"],
                 ["compare", "optimal", "greedy", "-n", "3000", "--seed", "1"],
                 ["compare", "optimal", "greedy", "--exact"],
                 ["tournament", "optimal", "greedy", "--seats", "3", "-n", "3000",
                  "--seed", "1"],
                 ["tournament", "optimal", "greedy", "--sprt", "--seed", "1"],
                 ["evaluate", "greedy", "-n", "20", "--seed", "1"],
                 ["evaluate", "docs/examples/policies/penta_rules.py:most_points", "-n", "20",
                  "--seed", "1"]):
        run_both(capsys, printed, argv)
    log = tmp_path / "p.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", "greedy", "-n", "10", "--seed", "1",
                                    "--log", str(log), "--log-games", "1"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json"])
    assert code == 0, err
    check_keys(json.loads(out), "analyse (penta)")


def test_penta_objective_advice_follows_the_glossary(capsys, printed):
    run_both(capsys, printed, ["advise", "penta", "--roll", "6,6,6,2,1", "--objective",
                                "utility:theta=0.02"])
