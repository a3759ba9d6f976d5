"""The table cache (dicelab.cache): integrity of loads, listing and clearing; ``dicelab cache``."""

from __future__ import annotations

import hashlib
import io
import json
import os

import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab import cache
from dicelab.errors import UserError


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(d))
    return d


def old_digest(a: np.ndarray) -> str:
    # the checksum formula of the files already on users' disks (it must not change)
    a = np.ascontiguousarray(a)
    h = hashlib.sha256()
    h.update(str(a.dtype).encode())
    h.update(str(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()


ARRAYS = {
    "u16": np.arange(3 * 5 * 7, dtype=np.uint16).reshape(3, 5, 7),
    "f64": np.linspace(-1, 1, 11),
    "i8": np.array([-128, 0, 127], dtype=np.int8),
    "empty": np.zeros((0, 4), dtype=np.int64),
    "scalar": np.array(3.5),
}


def test_digest_is_the_stored_formula():
    for a in ARRAYS.values():
        assert cache.digest(a) == old_digest(a)
    view = np.arange(20, dtype=np.int32)[::2]  # not contiguous
    assert cache.digest(view) == old_digest(view)


def test_round_trip_of_every_shape_and_dtype(cache_dir):
    path = cache.store("unit-shapes", "v1:x", ARRAYS)
    assert path == cache.cache_path("unit-shapes") and path.is_file()
    got = cache.load("unit-shapes", "v1:x")
    assert set(got) == set(ARRAYS)
    for name, a in ARRAYS.items():
        assert got[name].dtype == a.dtype and got[name].shape == a.shape
        np.testing.assert_array_equal(got[name], a)
    # np.load reads our files too (a plain .npz)
    with np.load(path) as npz:
        np.testing.assert_array_equal(npz["u16"], ARRAYS["u16"])
    assert cache.load("unit-shapes", "v2:x") is None  # stale version
    assert cache.load("unit-shapes", 1) is None
    assert cache.load("no-such-key", "v1:x") is None


def test_load_into_a_caller_buffer(cache_dir):
    cache.store("unit-out", 3, {"a": ARRAYS["u16"], "b": ARRAYS["f64"]})
    buf = np.zeros((2, 3, 5, 7), dtype=np.uint16)
    got = cache.load("unit-out", 3, out={"a": buf[1]})
    assert np.shares_memory(got["a"], buf)  # read in place, no copy
    np.testing.assert_array_equal(buf[1], ARRAYS["u16"])
    assert not buf[0].any()
    np.testing.assert_array_equal(got["b"], ARRAYS["f64"])
    # a buffer of another shape or dtype means: not this entry
    assert cache.load("unit-out", 3, out={"a": np.zeros((3, 5, 6), np.uint16)}) is None
    assert cache.load("unit-out", 3, out={"a": np.zeros((3, 5, 7), np.int16)}) is None


def test_fortran_order_and_compressed_members_take_numpys_reader(cache_dir):
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    cache.store("unit-fortran", 1, {"f": f})
    np.testing.assert_array_equal(cache.load("unit-fortran", 1)["f"], f)
    buf = np.zeros((3, 4))
    assert cache.load("unit-fortran", 1, out={"f": buf})["f"] is buf
    np.testing.assert_array_equal(buf, f)
    assert cache.load("unit-fortran", 1, out={"f": np.zeros((4, 3))}) is None
    # an entry written compressed (by hand: store never compresses)
    header = {"key": "unit-zip", "version": 1, "digests": {"a": cache.digest(f)}}
    np.savez_compressed(cache.cache_path("unit-zip"), a=f, __header__=np.frombuffer(
        json.dumps(header).encode(), dtype=np.uint8))
    np.testing.assert_array_equal(cache.load("unit-zip", 1)["a"], f)
    header["digests"]["a"] = cache.digest(f + 1)
    np.savez_compressed(cache.cache_path("unit-zip"), a=f, __header__=np.frombuffer(
        json.dumps(header).encode(), dtype=np.uint8))
    assert cache.load("unit-zip", 1) is None


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "renamed"])
def test_damaged_entries_are_not_trusted(cache_dir, damage):
    big = np.arange(300_000, dtype=np.uint16)  # several read chunks
    path = cache.store("unit-damage", 1, {"big": big})
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01  # inside the array's bytes
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "garbage":
        path.write_bytes(b"PK\x03\x04" + bytes(100))
    else:  # another key's file under this name
        cache.store("unit-other", 1, {"big": big}).replace(path)
    buf = np.zeros_like(big)
    assert cache.load("unit-damage", 1) is None
    assert cache.load("unit-damage", 1, out={"big": buf}) is None
    _, hit = cache.cached("unit-damage", 1, lambda: {"big": big})
    assert not hit
    assert cache.load("unit-damage", 1) is not None


def make_mixed_dir(d):
    """Two entries, one unfinished write, and four things that are not dicelab's."""
    d.mkdir(parents=True, exist_ok=True)
    cache.store("penta-values-unit", 1, {"v": np.arange(1000.0)})
    cache.store("farkle-unit", "2:x", {"t": np.ones((50, 50), dtype=np.uint16)})
    (d / ".penta-values-unit.k2j4_x9a.tmp").write_bytes(b"x" * 1234)
    (d / "notes.txt").write_text("mine")
    np.savez(d / "foreign.npz", a=np.arange(3))  # an .npz without our header
    (d / "renamed.npz").write_bytes(cache.cache_path("farkle-unit").read_bytes())
    (d / "sub").mkdir()
    return {"penta-values-unit", "farkle-unit"}


def test_scan_and_clear_touch_only_dicelab_files(cache_dir):
    keys = make_mixed_dir(cache_dir)
    found = cache.scan()
    assert found.directory == cache_dir
    assert [e.key for e in found.entries] == sorted(keys)
    for e in found.entries:
        assert e.size == e.path.stat().st_size > 0 and e.path == cache.cache_path(e.key)
    assert [t.path.name for t in found.temporary] == [".penta-values-unit.k2j4_x9a.tmp"]
    assert sorted(p.name for p in found.other) == ["foreign.npz", "notes.txt", "renamed.npz",
                                                    "sub"]
    assert found.total_bytes == sum(f.size for f in found.entries + found.temporary)
    deleted, freed, failed = cache.clear()
    assert freed == found.total_bytes and len(deleted) == 3 and not failed
    assert sorted(p.name for p in cache_dir.iterdir()) == ["foreign.npz", "notes.txt",
                                                            "renamed.npz", "sub"]
    assert cache.clear() == ([], 0, [])


def test_scan_of_a_missing_dir_is_empty_and_of_a_file_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "nope"))
    assert cache.scan().entries == [] and cache.clear() == ([], 0, [])
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "file"))
    with pytest.raises(UserError, match="cache directory"):
        cache.scan()


# --- the CLI --------------------------------------------------------------------------------


def test_cli_list_shows_directory_entries_sizes_and_total(capsys, cache_dir):
    make_mixed_dir(cache_dir)
    found = cache.scan()
    for argv in (["cache"], ["cache", "list"]):
        code, out, err = run_cli(capsys, argv)
        assert code == 0 and not err
        assert out.splitlines()[0] == f"cache directory: {cache_dir}"
        for e in found.entries:
            assert e.key in out and f"{e.size / 1e6:,.1f} MB" in out
        assert "unfinished write" in out
        assert f"total: 3 file(s), {found.total_bytes / 1e6:,.1f} MB" in out
        assert "4 other file(s)" in out


def test_cli_list_json(capsys, cache_dir):
    make_mixed_dir(cache_dir)
    for argv in (["cache", "list", "--json"], ["cache", "--json"]):
        code, out, _ = run_cli(capsys, argv)
        d = json.loads(out)
        assert code == 0 and d["directory"] == str(cache_dir)
        assert [e["key"] for e in d["entries"]] == ["farkle-unit", "penta-values-unit"]
        for e in d["entries"]:
            assert e["bytes"] == (cache_dir / e["file"]).stat().st_size
            assert e["modified"].endswith("+00:00")
        assert d["total_bytes"] == sum(e["bytes"] for e in d["entries"] + d["temporary"])
        assert sorted(d["other"]) == ["foreign.npz", "notes.txt", "renamed.npz", "sub"]


def test_cli_list_empty(capsys, cache_dir):
    code, out, _ = run_cli(capsys, ["cache"])
    assert code == 0 and "no cache entries" in out


def test_cli_clear_yes_removes_only_dicelab_files(capsys, cache_dir):
    make_mixed_dir(cache_dir)
    total = cache.scan().total_bytes
    code, out, _ = run_cli(capsys, ["cache", "clear", "--yes"])
    assert code == 0 and f"freed {total / 1e6:,.1f} MB: deleted 3 file(s)" in out
    assert sorted(p.name for p in cache_dir.iterdir()) == ["foreign.npz", "notes.txt",
                                                            "renamed.npz", "sub"]
    code, out, _ = run_cli(capsys, ["cache", "clear", "--yes"])
    assert code == 0 and "nothing to clear" in out


@pytest.mark.parametrize("answer, deleted", [("n\n", False), ("y\n", True), ("\n", False)])
def test_cli_clear_asks_first(capsys, cache_dir, monkeypatch, answer, deleted):
    make_mixed_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO(answer))
    code, out, _ = run_cli(capsys, ["cache", "clear"])
    assert code == 0 and "delete 3 file(s)" in out
    assert cache_path_exists("farkle-unit") is not deleted
    assert ("nothing deleted" in out) is not deleted


def cache_path_exists(key: str) -> bool:
    return cache.cache_path(key).exists()


@pytest.mark.parametrize("argv, needle", [
    (["cache", "clear"], "--yes"),  # stdin closed: no answer
    (["cache", "bogus"], "bogus"),
    (["cache", "--json", "clear"], "after the subcommand"),
    (["cache", "list", "--nope"], "--nope"),
])
def test_cli_bad_input_exits_2_with_one_line(capsys, cache_dir, monkeypatch, argv, needle):
    make_mixed_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, _out, err = run_cli(capsys, argv)
    assert code == 2 and err.startswith("error:") and needle in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert cache_path_exists("farkle-unit")


def test_cli_cache_dir_is_a_file(capsys, tmp_path, monkeypatch):
    (tmp_path / "f").write_text("x")
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "f"))
    for argv in (["cache"], ["cache", "clear", "--yes"]):
        code, _out, err = run_cli(capsys, argv)
        assert code == 2 and err.startswith("error: cannot read the cache directory")
        assert err.count("\n") == 1
    assert os.path.isfile(tmp_path / "f")
