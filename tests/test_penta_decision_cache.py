"""Penta decision blocks on disk: loaded = built bit for bit, damage rebuilt, keys per rules.

Jitted code. Building a block costs seconds, so this module shares the session's blocks
(tests/conftest.py: ``SHARES_DECISION_BLOCKS``); it damages files only by replacing them,
never in place (a shared block is a hard link).
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from dicelab import cache, config
from dicelab.penta import policies, solver
from dicelab.penta.policies import POLICIES, decision_tables, decisions_cache_key
from dicelab.penta.rules import get_rules


def fresh(policy: str, rules: str):
    """Tables made by this call, from the disk cache or built (the memo forgotten first),
    a built block written to the cache (it is written on its own thread)."""
    policies.release_decision_tables()
    tables = decision_tables(policy, rules)
    cache.wait_stores()
    return tables


def block_file(policy: str, rules: str):
    return cache.cache_path(decisions_cache_key(policy, get_rules(rules)))


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    # np.testing.assert_array_equal takes seconds on 135 M cells; this is the same check
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want), f"{int((got != want).sum())} cells differ"


def replace_file(path, data: bytes) -> None:
    """Give ``path`` new contents as a new file (a hard-linked original stays intact)."""
    tmp = path.with_name("damaged.bin")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@pytest.mark.slow
def test_loaded_optimal_block_is_bit_identical_to_a_fresh_build():
    # hasbro: a block test_penta_simulate needs too, which then loads it instead of building
    p = POLICIES.index("optimal")
    block_file("optimal", "hasbro").unlink(missing_ok=True)
    built = fresh("optimal", "hasbro")
    assert built.from_cache == {"optimal": False} and built.elapsed_s["optimal"] > 0
    expected = built.decisions[p].copy()
    assert block_file("optimal", "hasbro").stat().st_size > expected.nbytes
    loaded = fresh("optimal", "hasbro")
    assert loaded is not built and loaded.from_cache == {"optimal": True}
    assert_same(loaded.decisions[p], expected)
    assert not loaded.built[POLICIES.index("greedy")]  # only what was asked for
    policies.release_decision_tables()


@pytest.mark.slow
def test_an_optimal_block_built_by_the_solve_equals_one_built_from_the_values(monkeypatch):
    # values neither memoised nor cached: one sweep of the solver gives them and the block
    rs = get_rules("no-bonus")
    p = POLICIES.index("optimal")
    solver._MEMO.pop(solver.cache_key(rs), None)
    block_file("optimal", "no-bonus").unlink(missing_ok=True)
    cache.cache_path(solver.cache_key(rs)).unlink(missing_ok=True)  # a shared file, linked
    with monkeypatch.context() as m:
        m.setattr(policies, "build_decision_block", None)  # not the separate build
        swept = fresh("optimal", "no-bonus")
    assert swept.from_cache == {"optimal": False} and not solver.solve(rs).from_cache
    values = solver.solve(rs).values
    np.testing.assert_array_equal(values.view(np.int64), solver.solve_values(rs).view(np.int64))
    built = np.empty_like(swept.decisions[p])
    policies.build_decision_block(values, rs, swept.slot, built)
    assert_same(swept.decisions[p], built)
    # and the block was stored: it loads
    assert fresh("optimal", "no-bonus").from_cache == {"optimal": True}
    policies.release_decision_tables()


@pytest.mark.slow
def test_damaged_blocks_are_rebuilt():
    p = POLICIES.index("greedy")
    expected = fresh("greedy", "seed").decisions[p].copy()
    path = block_file("greedy", "seed")
    rs = get_rules("seed")
    key = decisions_cache_key("greedy", rs)
    version = policies._decisions_version(policies.policy_values("greedy", rs),
                                          config.PENTA_TIE_EPS)
    assert cache.load(key, version) is not None
    data = bytearray(path.read_bytes())
    # one flipped bit in the middle of the block: refused after a full read (checksum)
    data[len(data) // 2] ^= 0x04
    replace_file(path, bytes(data))
    assert cache.load(key, version) is None
    # decision_tables read it into the table, refused it and rebuilt over it
    rebuilt = fresh("greedy", "seed")
    assert rebuilt.from_cache == {"greedy": False}
    assert_same(rebuilt.decisions[p], expected)
    # the rebuild replaced the file: it loads again
    assert path.stat().st_size == len(data) and not list(path.parent.glob(".*.tmp"))
    assert fresh("greedy", "seed").from_cache == {"greedy": True}
    # truncated: refused too (what decision_tables then does is the same as above)
    replace_file(path, bytes(data[: len(data) // 3]))
    assert cache.load(key, version) is None
    path.unlink()  # not into the session's shared blocks
    policies.release_decision_tables()


@pytest.mark.slow
def test_rule_sets_do_not_collide():
    p = POLICIES.index("greedy")
    seed = fresh("greedy", "seed").decisions[p].copy()
    no_bonus = fresh("greedy", "no-bonus").decisions[p].copy()
    assert (no_bonus != seed).any()  # the +100 bonus changes greedy's choices
    assert block_file("greedy", "seed") != block_file("greedy", "no-bonus")
    keys = {e.key for e in cache.scan().entries}
    assert {decisions_cache_key("greedy", get_rules(r)) for r in ("seed", "no-bonus")} <= keys
    for rules, want in (("seed", seed), ("no-bonus", no_bonus)):
        tables = fresh("greedy", rules)
        assert tables.from_cache == {"greedy": True}
        assert_same(tables.decisions[p], want)
    policies.release_decision_tables()


def test_the_entry_covers_rules_format_tolerance_and_values(monkeypatch):
    rs = get_rules("seed")
    # same name, other parameters (an edited rule set): another entry, never loaded
    edited = dataclasses.replace(rs, penta_bonus=0)
    assert decisions_cache_key("optimal", edited) != decisions_cache_key("optimal", rs)
    assert decisions_cache_key("greedy", rs) != decisions_cache_key("optimal", rs)
    assert decisions_cache_key("optimal", dataclasses.replace(rs, name="mine")).endswith(
        rs.digest)
    values = np.zeros(8)
    base = policies._decisions_version(values, 1e-10)
    assert policies._decisions_version(values + 1, 1e-10) != base
    assert policies._decisions_version(values, 1e-9) != base
    monkeypatch.setattr(policies, "DECISIONS_FORMAT_VERSION",
                        policies.DECISIONS_FORMAT_VERSION + 1)
    assert policies._decisions_version(values, 1e-10) != base
