"""Shared test fixtures (generic: used by every part of the suite)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache_dir(tmp_path_factory, monkeypatch):
    """Point dicelab's table cache at a fresh temporary directory for every test."""
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path_factory.mktemp("dicelab-cache")))


@pytest.fixture(autouse=True, scope="module")
def _release_penta_tables():
    """Drop Penta's decision tables (hundreds of MB) after each test module that built them."""
    yield
    import sys

    policies = sys.modules.get("dicelab.penta.policies")
    if policies is not None:
        policies.release_decision_tables()
