"""One vocabulary: docs/glossary.md lists every reported field, and the reports follow it.

Every command that has ``--json`` runs here twice, once with ``--json`` and once printing
its tables. Every key of the JSON must be a field of the glossary (or data: the keys of a
``map`` field, such as dice counts or policy names), and every column of every table
(every row, in a table whose first column is ``statistic`` or that has no header) must
carry a label of the glossary and print every cell in that label's format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import run_cli
from rich.table import Table
from rich.text import Text

from dicelab.cli import render
from dicelab.penta.rules import BOX_NAMES

GLOSSARY = Path(__file__).resolve().parent.parent / "docs" / "glossary.md"

_COUNT = r"-?\d{1,3}(?:,\d{3})*"
_NUMBER = rf"{_COUNT}(?:\.\d+)?"
_PERCENT = r"-?\d+(?:\.\d+)?%"


def _or_interval(value: str) -> str:
    return rf"{value}(?: \[{value}, {value}\]| \[n/a\])?"  # too few units: no interval


#: Each format of the glossary as a regular expression of a whole cell.
FORMATS = {
    "count": "≥?" + _or_interval(_COUNT),
    "number": _or_interval(_NUMBER),
    "percent": _or_interval(_PERCENT),
    "interval": rf"\[(?:{_NUMBER}|{_PERCENT}), (?:{_NUMBER}|{_PERCENT})\]",
    "p-value": r"\d(?:\.\d+)?(?:e-\d+)?|0\.\d+",
    "seconds": rf"{_NUMBER} s\b.*",
    "size": rf"{_NUMBER} (?:B|kB|MB|GB|TB|PB|EB)",
    "dice": r"[1-6](?: [1-6])*",
    "date": r"\d{4}-\d\d-\d\d \d\d:\d\d",
    "text": r"(?s).*",
    "boolean": r"true|false",
}
#: What a placeholder of a table label stands for.
PLACEHOLDERS = {"<n>": r"[\d,]+", "<box>": "(?:" + "|".join(BOX_NAMES) + ")",
                "<policy>": r".+"}
#: A number that is not there.
MISSING = "n/a"


class Glossary:
    """The fields, the map fields and the table labels of docs/glossary.md, with the
    formats of each label."""

    def __init__(self, text: str):
        self.fields: set[str] = set()
        self.maps: set[str] = set()
        self.labels: list[tuple[re.Pattern, set[str], set[str]]] = []
        for line in text.splitlines():
            if not line.startswith("| `"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 5:  # field | table label | unit | format | meaning
                names, labels, fmt = cells[0], cells[1], cells[3]
            elif len(cells) == 3:  # table-only label | format | meaning
                names, labels, fmt = "", cells[0], cells[1]
            else:
                raise AssertionError(f"glossary row of {len(cells)} cells: {line}")
            formats = {w for w in re.findall(r"[a-z-]+", re.sub(r"`[^`]*`", "", fmt))
                       if w in FORMATS}
            literals = set(re.findall(r"`([^`]+)`", fmt))
            found = re.findall(r"`([^`]+)`", names)
            self.fields.update(found)
            if fmt.startswith("map"):
                self.maps.update(found)
            for label in re.findall(r"`([^`]+)`", labels):
                pattern = re.escape(label)
                for holder, rx in PLACEHOLDERS.items():
                    pattern = pattern.replace(re.escape(holder), rx)
                self.labels.append((re.compile(pattern), formats, literals))

    def formats_of(self, label: str) -> tuple[set[str], set[str]]:
        """The formats and literal values a cell under this label may take (both empty:
        the label is not in the glossary)."""
        formats: set[str] = set()
        literals: set[str] = set()
        for pattern, f, lit in self.labels:
            if pattern.fullmatch(label):
                formats |= f
                literals |= lit
        return formats, literals

    def check_cell(self, label: str, cell: str, where: str) -> None:
        cell = Text.from_markup(cell).plain  # as printed
        formats, literals = self.formats_of(label)
        assert formats or literals, f"{where}: the label '{label}' is not in the glossary"
        ok = cell in literals or cell == MISSING or any(
            re.fullmatch(FORMATS[f], cell) for f in formats)
        assert ok, f"{where}: '{cell}' under '{label}' is not {sorted(formats)}"


GLOSSARY_TERMS = Glossary(GLOSSARY.read_text())


def _base(key: str) -> str:
    """The field a derived key belongs to: ``X_se``, ``X_ci95``, ``X_ci95_lo`` -> ``X``."""
    return re.sub(r"(_se|_ci95|_ci95_lo|_ci95_hi)$", "", key)


def check_keys(obj, where: str, in_map: bool = False) -> None:
    """Every key of a JSON value is a glossary field (or its ``_se``/``_ci95``), except
    the keys of a map and the numbers inside one (dice counts, totals)."""
    if isinstance(obj, list):
        for item in obj:
            check_keys(item, where, in_map)
        return
    if not isinstance(obj, dict):
        return
    for key, value in obj.items():
        data = in_map and (key.isdigit() or not _known(key))
        if not data:
            assert _known(key), f"{where}: the key '{key}' is not in docs/glossary.md"
        check_keys(value, f"{where}.{key}",
                   in_map=key in GLOSSARY_TERMS.maps or (in_map and data))


def _known(key: str) -> bool:
    return key in GLOSSARY_TERMS.fields or _base(key) in GLOSSARY_TERMS.fields


def check_tables(tables: list[Table], where: str) -> None:
    """Every column of every table under a glossary label, every cell in its format; in a
    table of rows (``statistic`` first, or no header), every row's label and cells."""
    assert tables, f"{where}: no table printed"
    for t in tables:
        columns = [c.header for c in t.columns]
        cells = [list(c.cells) for c in t.columns]
        by_rows = not t.show_header or columns[0] in ("statistic", "quantity")
        if by_rows:
            for i, label in enumerate(cells[0]):
                for col in cells[1:]:
                    GLOSSARY_TERMS.check_cell(str(label).strip(), str(col[i]),
                                              f"{where}: row '{label}'")
        else:
            for header, col in zip(columns, cells, strict=True):
                for cell in col:
                    GLOSSARY_TERMS.check_cell(str(header), str(cell), where)


@pytest.fixture
def printed(monkeypatch):
    """The rich tables the commands print, in order."""
    tables: list[Table] = []
    original = render.console.print

    def capture(*objects, **kwargs):
        tables.extend(o for o in objects if isinstance(o, Table))
        return original(*objects, **kwargs)

    monkeypatch.setattr(render.console, "print", capture)
    return tables


def _run_both(capsys, printed, argv: list[str]) -> None:
    where = " ".join(argv)
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, f"{where}: {err}"
    check_keys(json.loads(out), where)
    printed.clear()
    code, out, err = run_cli(capsys, argv)
    assert code == 0, f"{where}: {err}"
    if printed:
        check_tables(list(printed), where)


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
    ["compare", "ai", "threshold-300", "--exact", "--target", "1000"],
    ["compare", "ai", "threshold-300", "--exact", "--target", "500", "--rules", "facebook"],
    ["tournament", "ai", "max-ev", "threshold-300", "--seats", "3", "-n", "3000", "--seed",
     "1", "--target", "1000"],
    ["tournament", "ai", "threshold-300", "--sprt", "--seed", "1", "--target", "1000"],
    ["tune", "threshold", "--against", "ai", "--target", "1000", "--seed", "1"],
    ["evaluate", "threshold-300", "--target", "1000"],
    ["tune", "ai", "--params", "base,two-dice", "--against", "threshold-300", "--target",
     "1000", "--trials", "3", "--seed", "1", "--monte-carlo", "--budget", "3000"],
    ["bust-risk", "-n", "3000", "--seed", "1"],
    ["solve", "farkle", "-p", "threshold-300"],
    ["solve", "farkle", "-p", "max-ev"],
    ["solve", "farkle", "-p", "max-ev", "--rules", "facebook"],
    ["solve", "farkle", "-p", "fastest", "--target", "1000"],
    ["solve", "farkle", "-p", "fastest", "--target", "1000", "--rules", "facebook"],
    ["solve", "farkle", "-p", "optimal-win", "--target", "1000"],
    ["solve", "farkle", "-p", "optimal-win:vs=threshold-300", "--target", "1000"],
    ["solve", "farkle", "-p", "optimal-win", "--target", "500", "--rules", "facebook"],
    ["policy", "farkle", "max-ev"],
    ["advise", "farkle", "--roll", "1,1,5,2,3,4", "--top", "0"],
    ["advise", "farkle", "--roll", "1,1,5,2,3,4", "--me", "500", "--opp", "700", "--target",
     "1000"],
    ["experiment", "list"],
]


def test_farkle_reports_follow_the_glossary(capsys, printed, tmp_path, monkeypatch):
    from dicelab import config

    # facebook's exact solves: totals down to two penalties below zero (the smallest floor)
    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    for argv in FARKLE_COMMANDS:
        _run_both(capsys, printed, argv)
    for name, extra in (("threshold-sweep", ["--target", "1000"]),
                        ("head-to-head", ["--target", "500", "-n", "500", "--seed", "1"])):
        _run_both(capsys, printed, ["experiment", "run", name, *extra, "--out",
                                    str(tmp_path / name)])
    toml = tmp_path / "e.toml"
    toml.write_text("name = 'e'\nkind = 'tournament'\npolicies = ['ai', 'threshold-T']\n"
                    "seats = 2\ngames = 500\nseed = 1\ntarget = 500\n"
                    "[sweep]\nT = { from = 200, to = 300, step = 100 }\n")
    _run_both(capsys, printed, ["experiment", "run", str(toml), "--out", str(tmp_path / "e")])
    _run_both(capsys, printed, ["cache", "list"])
    _run_both(capsys, printed, ["cache", "prune", "--max-size", "1TB", "--dry-run"])
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
        _run_both(capsys, printed, argv)
    log = tmp_path / "p.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", "greedy", "-n", "10", "--seed", "1",
                                    "--log", str(log), "--log-games", "1"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json"])
    assert code == 0, err
    check_keys(json.loads(out), "analyse (penta)")


def test_penta_objective_advice_follows_the_glossary(capsys, printed):
    _run_both(capsys, printed, ["advise", "penta", "--roll", "6,6,6,2,1", "--objective",
                                "utility:theta=0.01"])


@pytest.mark.slow
def test_penta_objective_report_follows_the_glossary(capsys, printed):
    _run_both(capsys, printed, ["solve", "penta", "--objective", "utility:theta=0.02"])
