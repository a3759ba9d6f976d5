"""The glossary's checks, shared by the tests: docs/glossary.md lists every reported field,
and a report follows it when every key of its JSON is a field of the glossary (or data:
the keys of a ``map`` field, such as dice counts or policy names), and every column of
every table (every row, in a table whose first column is ``statistic`` or that has no
header) carries a label of the glossary and prints every cell in that label's format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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
    "scientific": r"-?\d\.\d+e[-+]\d+%?",
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


def capture_tables(monkeypatch) -> list[Table]:
    """The list the rich tables the commands print go to, in order, from now on."""
    tables: list[Table] = []
    original = render.console.print

    def capture(*objects, **kwargs):
        tables.extend(o for o in objects if isinstance(o, Table))
        return original(*objects, **kwargs)

    monkeypatch.setattr(render.console, "print", capture)
    return tables


def run_both(capsys, printed: list[Table], argv: list[str]) -> dict:
    """Run ``dicelab ARGV`` with ``--json`` and then printing its tables (into ``printed``,
    from :func:`capture_tables`); check both against the glossary; return the JSON."""
    where = " ".join(argv)
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, f"{where}: {err}"
    report = json.loads(out)
    check_keys(report, where)
    printed.clear()
    code, out, err = run_cli(capsys, argv)
    assert code == 0, f"{where}: {err}"
    if printed:
        check_tables(list(printed), where)
    return report
