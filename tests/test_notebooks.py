"""The notebooks are committed without outputs: ``make test`` executes them (nbmake) and
``make notebooks`` renders them with today's numbers, so no stale output is ever shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs_and_tells_its_question(path):
    cells = json.loads(path.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)
    first = "".join(cells[0]["source"])
    assert cells[0]["cell_type"] == "markdown" and "**Question.**" in first
    assert any("Conclusion" in "".join(c["source"]) for c in cells)
