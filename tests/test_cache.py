"""The table cache (dicelab.cache): integrity of loads, listing and clearing; ``dicelab cache``."""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab import cache, config
from dicelab.cli.formats import size
from dicelab.errors import UserError
from dicelab.text import human_bytes


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


def test_without_the_variable_tables_and_kernels_share_the_user_cache_directory(
        tmp_path, monkeypatch):
    """On Linux: $XDG_CACHE_HOME/dicelab, else ~/.cache/dicelab; the kernels in its numba/."""
    import dicelab

    monkeypatch.delenv("DICELAB_CACHE_DIR", raising=False)
    monkeypatch.delenv(dicelab.JIT_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "dicelab"
    assert Path(dicelab._jit_cache_root()) == tmp_path / "xdg" / "dicelab" / "numba"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "dicelab"


# --- the CLI --------------------------------------------------------------------------------


def test_cli_list_shows_directory_entries_sizes_and_total(capsys, cache_dir):
    make_mixed_dir(cache_dir)
    found = cache.scan()
    for argv in (["cache"], ["cache", "list"]):
        code, out, err = run_cli(capsys, argv)
        assert code == 0 and not err
        assert out.splitlines()[0] == f"cache directory: {cache_dir}"
        for e in found.entries:
            assert e.key in out and size(e.size) in out
        assert "unfinished write" in out
        assert f"total: 3 file(s), {size(found.total_bytes)}" in out
        assert "4 other file(s)" in out
        assert "0.0 MB" not in out


def _in_units(n: int) -> str:
    """``n`` bytes as the cache's commands should print them (powers of 1000)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"


def test_cli_sizes_are_in_the_unit_that_fits(capsys, cache_dir):
    """Entries of a few hundred bytes, tens of kB and megabytes: each in its own unit,
    never ``0.0 MB``; the total and a prune's figures too."""
    cache.store("tiny-unit", 1, {"a": np.arange(3, dtype=np.uint8)})
    cache.store("small-unit", 1, {"a": np.arange(5_000, dtype=np.int64)})
    cache.store("large-unit", 1, {"a": np.arange(400_000, dtype=np.int64)})
    found = cache.scan()
    sizes = {e.key: e.size for e in found.entries}
    assert sizes["tiny-unit"] < 1000 and 1000 <= sizes["small-unit"] < 10**6 \
        and sizes["large-unit"] >= 10**6
    code, out, err = run_cli(capsys, ["cache", "list"])
    assert code == 0 and not err
    for key, n in sizes.items():
        row = next(line for line in out.splitlines() if key in line)
        assert f" {_in_units(n)} " in row, row
    assert f"total: 3 file(s), {_in_units(found.total_bytes)}" in out
    assert "0.0 MB" not in out
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", "10MB", "--dry-run"])
    assert code == 0 and f"total {_in_units(found.total_bytes)}" in out \
        and "(limit 10.0 MB)" in out


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1, "1 B"), (999, "999 B"), (1000, "1.0 kB"),
                                     (49_999, "50.0 kB"), (999_949, "999.9 kB"),
                                     (999_950, "1.0 MB"), (12_345_678, "12.3 MB"),
                                     (2 * 10**9, "2.0 GB")])
def test_one_size_format(n, text):
    assert size(n) == text == human_bytes(n)


def table_keys(out: str) -> list[str]:
    """The key column of a printed cache table, a key folded over lines joined again."""
    keys: list[str] = []
    for line in out.splitlines():
        cells = line.split("│")
        if len(cells) < 4 or "key" in cells[1]:
            continue
        if cells[2].strip():  # a row's first line has its size
            keys.append(cells[1].strip())
        else:
            keys[-1] += cells[1].strip()
    return keys


def test_cli_list_and_prune_show_whole_keys(capsys, cache_dir, monkeypatch):
    """Long keys that differ only at their end stay apart (they were cut to one '...')."""
    monkeypatch.setenv("COLUMNS", "80")
    stem = "farkle-optimal-win-default-9fa1bf046eba76d4-t1000-tol1e-10-floor0-sweep_tol1e-11"
    keys = [stem, stem + "-policy-table"]
    for k in keys:
        cache.store(k, 1, {"v": np.arange(10.0)})
    code, out, err = run_cli(capsys, ["cache", "list"])
    assert code == 0 and not err
    assert table_keys(out) == sorted(keys)
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", "0", "--dry-run"])
    assert code == 0 and not err
    assert sorted(table_keys(out)) == sorted(keys)


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


def table_endings(out: str) -> dict[str, str]:
    """Key -> the ending column of a printed cache table (a folded key joined again)."""
    rows: dict[str, str] = {}
    key = None
    for line in out.splitlines():
        cells = line.split("│")
        if len(cells) < 7 or "key" in cells[1]:
            continue
        if cells[2].strip():  # a row's first line has its size and its ending
            key = cells[1].strip()
            rows[key] = cells[5].strip()
        else:
            rows[key + cells[1].strip()] = rows.pop(key)
            key += cells[1].strip()
    return rows


def test_cli_list_names_the_ending_of_each_farkle_solve(capsys, cache_dir):
    """Two optimal-win solves to 500, under last-round and under first-to-bank, were two
    entries told apart only by a digest in their keys: the list names each one's ending
    (said by the solve that wrote it); a rules file's entry too; ``unknown`` for a Farkle
    entry that does not say it and whose rules its key cannot tell (one written before
    entries said it), none for a Penta entry; in the table, in --json and in prune's
    list."""
    from dicelab.farkle.rules import PRESETS

    for ending in ("last-round", "first-to-bank"):
        code, _, err = run_cli(capsys, ["solve", "farkle", "-p", "optimal-win", "--target",
                                        "500", "--ending", ending, "--json"])
        assert code == 0, err
    want = {k: e for k, e in ((next(k for k in entry_keys()
                                    if PRESETS["default"].with_ending(e).digest() in k), e)
                              for e in ("last-round", "first-to-bank"))}
    assert len(want) == 2 and all("-t500-" in k for k in want)
    house = cache_dir.parent / "house.toml"
    house.write_text('base = "default"\nmin-bank = 350\nending = "first-to-bank"\n')
    code, _, err = run_cli(capsys, ["solve", "farkle", "-p", "optimal-win", "--target", "500",
                                    "--rules", str(house), "--json"])
    assert code == 0, err
    want |= {k: "first-to-bank" for k in entry_keys()
             if k.startswith("farkle-optimal-win-house-")}
    assert len(want) == 3
    mine = "farkle-optimal-win-mine-0123456789abcdef-t500-tol1e-10"
    cache.store(mine, 1, {"v": np.arange(10.0)})
    cache.store("penta-values-unit", 1, {"v": np.arange(10.0)})
    code, out, err = run_cli(capsys, ["cache", "list", "--json"])
    assert code == 0, err
    endings = {e["key"]: e["ending"] for e in json.loads(out)["entries"]}
    assert endings == {**want, mine: "unknown", "penta-values-unit": None}
    code, out, err = run_cli(capsys, ["cache", "list"])
    assert code == 0 and not err
    assert table_endings(out) == {**want, mine: "unknown", "penta-values-unit": ""}
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", "0", "--dry-run",
                                      "--json"])
    assert code == 0, err
    assert {f["key"]: f["ending"] for f in json.loads(out)["deleted"]} == endings
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", "0", "--dry-run"])
    assert code == 0 and table_endings(out) == table_endings(run_cli(
        capsys, ["cache", "list"])[1])


def test_cli_list_empty(capsys, cache_dir):
    code, out, _ = run_cli(capsys, ["cache"])
    assert code == 0 and "no cache entries" in out


def test_cli_clear_yes_removes_only_dicelab_files(capsys, cache_dir):
    make_mixed_dir(cache_dir)
    total = cache.scan().total_bytes
    code, out, _ = run_cli(capsys, ["cache", "clear", "--yes"])
    assert code == 0 and f"freed {size(total)}: deleted 3 file(s)" in out
    assert sorted(p.name for p in cache_dir.iterdir()) == ["foreign.npz", "notes.txt",
                                                            "renamed.npz", "sub"]
    code, out, _ = run_cli(capsys, ["cache", "clear", "--yes"])
    assert code == 0 and "nothing to clear" in out


@pytest.mark.parametrize("answer, deleted", [("n\n", False), ("y\n", True), ("\n", False),
                                             ("", None), ("maybe\ny\n", True)])
def test_cli_clear_asks_first_on_stderr(capsys, cache_dir, monkeypatch, answer, deleted):
    """The question goes to stderr: stdout may be a file, where a question is never seen
    (it was on stdout). No answer at all (end of input) is an error, the question's line
    ended first."""
    make_mixed_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO(answer))
    code, out, err = run_cli(capsys, ["cache", "clear"])
    assert err.startswith("delete 3 file(s), ") and "? [y/N]: " in err
    assert "[y/N]" not in out and not out.startswith(" ")  # (click's prompt wrote a space)
    assert cache_path_exists("farkle-unit") is not bool(deleted)
    if deleted is None:
        assert (code, out) == (2, "") and err.count("\n") == 2
        assert err.splitlines()[1].startswith("error: no answer to the confirmation")
        return
    # the answer typed ends the line; another answer is asked for again
    assert code == 0 and err.count("\n") == ("maybe" in answer)
    assert err.count("[y/N]") == 1 + ("maybe" in answer)
    assert out == "nothing deleted\n" if not deleted else out.startswith("freed ")


def cache_path_exists(key: str) -> bool:
    return cache.cache_path(key).exists()


@pytest.mark.parametrize("argv, needle", [
    (["cache", "clear"], "--yes"),  # stdin closed: no answer
    (["cache", "bogus"], "bogus"),
    (["cache", "--json", "clear"], "cache clear prints no JSON"),  # it has no --json
    (["cache", "list", "--nope"], "--nope"),
])
def test_cli_bad_input_exits_2_with_one_line(capsys, cache_dir, monkeypatch, argv, needle):
    make_mixed_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = run_cli(capsys, argv)
    # the unanswered question is on stderr, on a line of its own
    asked = argv == ["cache", "clear"]
    assert code == 2 and out == "" and err.splitlines()[-1].startswith("error:")
    assert needle in err.splitlines()[-1] and err.count("error:") == 1
    assert err.count("\n") == 1 + asked and "Traceback" not in err
    assert cache_path_exists("farkle-unit")


def test_cli_cache_dir_is_a_file(capsys, tmp_path, monkeypatch):
    (tmp_path / "f").write_text("x")
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "f"))
    for argv in (["cache"], ["cache", "clear", "--yes"]):
        code, _out, err = run_cli(capsys, argv)
        assert code == 2 and err.startswith("error: cannot read the cache directory")
        assert err.count("\n") == 1
    assert os.path.isfile(tmp_path / "f")


@pytest.mark.parametrize("where", ["under-a-file", "read-only-file-system"])
def test_a_cache_that_cannot_be_written_only_costs_speed(capsys, tmp_path, monkeypatch, where):
    """A solve whose cache directory cannot be made (a path through a regular file, or on
    a read-only file system, which stops root too) reports what a writable cache gives,
    and one line on stderr says the table is not kept; nothing is written."""
    if where == "read-only-file-system":
        bad = Path("/proc/self/dicelab-cache")
        if not bad.parent.is_dir():
            pytest.skip("no /proc file system here")
    else:
        (tmp_path / "f").write_text("x")
        bad = tmp_path / "f" / "cache"
    argv = ["solve", "farkle", "-p", "optimal-win", "--target", "300", "--json"]
    timing = {"solve_s", "elapsed_s", "from_cache"}
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "writable"))
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    want = {k: v for k, v in json.loads(out).items() if k not in timing}
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(bad))
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    assert {k: v for k, v in json.loads(out).items() if k not in timing} == want
    assert err.count("\n") == 1 and f"cache: {bad} cannot be written" in err, err
    assert "solved tables are not kept" in err and "Traceback" not in err
    assert not bad.exists()
    assert where != "under-a-file" or (tmp_path / "f").read_text() == "x"


# --- size control: last use, prune, the automatic limit ------------------------------------

DAY = 86400.0


def set_last_use(key: str, days_ago: float, modified_days_ago: float = 30.0) -> None:
    """Give an entry a known last use (its atime) and an older modification time."""
    now = time.time()
    os.utime(cache.cache_path(key), (now - days_ago * DAY, now - modified_days_ago * DAY))


def store_sized(key: str, nbytes: int) -> int:
    """Store an entry of about ``nbytes``; returns its size on disk."""
    return cache.store(key, 1, {"a": np.zeros(nbytes, np.uint8)}).stat().st_size


def entry_keys() -> list[str]:
    return [e.key for e in cache.scan().entries]


@pytest.mark.parametrize("text, nbytes", [
    ("0", 0), ("1234", 1234), ("2GB", 2 * 10**9), ("500MB", 500 * 10**6),
    ("1.5GiB", 3 * 2**29), ("1.5 GiB", 3 * 2**29), ("2gb", 2 * 10**9), ("10kB", 10_000),
    ("10KiB", 10_240), ("3TB", 3 * 10**12), ("1TiB", 2**40), ("7B", 7), (" 5 mb ", 5 * 10**6),
    ("0.5", 0), (".5KiB", 512), ("1.0000001GB", 1_000_000_100),
])
def test_parse_size_accepts(text, nbytes):
    assert cache.parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["", "GB", "2G", "2 M", "-1GB", "1e9", "2GBs", "1,5GB",
                                  "nan", "inf", "1.2.3MB", "2 GB extra", "0x10"])
def test_parse_size_refuses_with_one_line_naming_the_input(text):
    with pytest.raises(UserError) as exc:
        cache.parse_size(text, "--max-size")
    msg = str(exc.value)
    assert msg.startswith(f"--max-size: {text!r} is not a size") and "1.5GiB" in msg
    assert "\n" not in msg


def test_max_size_from_the_environment_else_the_default(monkeypatch):
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    assert config.CACHE_MAX_SIZE == "10GB"
    assert cache.size_limit() == (10 * 10**9, "default") and cache.max_size() == 10**10
    monkeypatch.setattr(config, "CACHE_MAX_SIZE", "5kB")  # read when asked, not on import
    assert cache.size_limit() == (5000, "default")
    monkeypatch.setenv(cache.MAX_SIZE_ENV, " ")  # empty: as if unset
    assert cache.size_limit() == (5000, "default")
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "1.5GiB")
    assert cache.size_limit() == (3 * 2**29, "$DICELAB_CACHE_MAX_SIZE")
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "0")  # a limit of nothing is a limit
    assert cache.size_limit() == (0, "$DICELAB_CACHE_MAX_SIZE")
    for off in ("none", "NONE", " None "):
        monkeypatch.setenv(cache.MAX_SIZE_ENV, off)
        assert cache.size_limit() == (None, "$DICELAB_CACHE_MAX_SIZE")
        assert cache.max_size() is None


@pytest.mark.parametrize("value", ["lots", "nothing", "none0", "no", "unlimited", "-1GB",
                                   "2G", "99999999999TB"])
def test_a_malformed_max_size_is_one_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(cache.MAX_SIZE_ENV, value)
    with pytest.raises(UserError) as exc:
        cache.size_limit()
    msg = str(exc.value)
    assert msg.startswith(f"$DICELAB_CACHE_MAX_SIZE: {value!r} is ") and "\n" not in msg
    if "not a size" in msg:
        assert msg.endswith("e.g. 2GB or 1.5GiB, or none for no limit")
    else:
        assert "larger than the largest size" in msg and value == "99999999999TB"


def test_a_successful_load_records_last_use_and_nothing_else_does(cache_dir):
    cache.store("unit-lru", 1, {"a": np.arange(10)})
    set_last_use("unit-lru", days_ago=5, modified_days_ago=6)
    path = cache.cache_path("unit-lru")
    before = path.stat()
    assert cache.scan().entries[0].last_used == pytest.approx(time.time() - 5 * DAY, abs=5)
    # a failed load (stale version) and a scan read the file but are not uses
    assert cache.load("unit-lru", 2) is None
    cache.scan()
    assert path.stat().st_atime_ns == before.st_atime_ns
    t0 = time.time()
    assert cache.load("unit-lru", 1) is not None
    after = path.stat()
    assert after.st_mtime_ns == before.st_mtime_ns  # the modification time is kept
    assert t0 - 1 <= after.st_atime <= time.time() + 1
    (e,) = cache.scan().entries
    assert e.last_used == after.st_atime and e.modified == before.st_mtime
    assert e.to_dict()["last_used"] == e.last_used_iso and e.last_used_iso.endswith("+00:00")
    # a write is a use too: a fresh entry's last use is its creation
    set_last_use("unit-lru", days_ago=9, modified_days_ago=9)
    cache.store("unit-lru", 1, {"a": np.arange(10)})
    assert cache.scan().entries[0].last_used >= t0 - 1


@pytest.mark.parametrize("noatime", [True, False])
def test_scan_leaves_access_times_alone(cache_dir, monkeypatch, noatime):
    # the usual relatime mount stamps a file read when its atime is <= its mtime; a scan
    # that let that happen would mark every entry as just used
    if not noatime:  # the path of platforms without O_NOATIME: put the atime back
        monkeypatch.setattr(cache, "_O_NOATIME", 0)
    for key in ("unit-a", "unit-b"):
        cache.store(key, 1, {"a": np.arange(100)})
        set_last_use(key, days_ago=3, modified_days_ago=3)
    paths = [cache.cache_path(k) for k in ("unit-a", "unit-b")]
    before = [p.stat().st_atime_ns for p in paths]
    for _ in range(2):
        assert [e.key for e in cache.scan().entries] == ["unit-a", "unit-b"]
        assert [p.stat().st_atime_ns for p in paths] == before


def make_lru_dir(d):
    """Five entries with last uses in an order unlike their keys and modification times,
    a stale and a fresh unfinished write, and foreign files; returns {key: size}."""
    sizes = {}
    for key, nbytes in [("e1", 3000), ("e2", 1000), ("e3", 2000), ("e4", 4000), ("e5", 500)]:
        sizes[key] = store_sized(key, nbytes)
    for key, days, mdays in [("e1", 2, 40), ("e2", 9, 10), ("e3", 1, 50), ("e4", 10, 6),
                             ("e5", 4, 30)]:
        # LRU order: e2, e4 (written after its last load), e5, e1, e3
        set_last_use(key, days, mdays)
    old = d / ".e9.abcd_123.tmp"
    old.write_bytes(b"x" * 700)
    os.utime(old, (time.time() - 2 * 3600,) * 2)
    (d / ".e8.zzzz_999.tmp").write_bytes(b"y" * 300)  # a write in progress
    (d / "notes.txt").write_text("mine")
    np.savez(d / "foreign.npz", a=np.arange(3))
    os.utime(d / "foreign.npz", (0, 0))  # the oldest file of all, and not ours
    return sizes


FOREIGN = ["foreign.npz", "notes.txt"]


def test_prune_deletes_least_recently_used_first(cache_dir):
    sizes = make_lru_dir(cache_dir)
    young = 300
    keep = sizes["e1"] + sizes["e3"] + young  # the two most recent + the write in progress
    plan = cache.prune(keep, dry_run=True)
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted(
        [f"{k}.npz" for k in sizes] + [".e9.abcd_123.tmp", ".e8.zzzz_999.tmp"] + FOREIGN)
    assert [f.key for f in plan.deleted] == [None, "e2", "e4", "e5"]
    assert plan.deleted[0].path.name == ".e9.abcd_123.tmp" and plan.dry_run
    assert plan.total_before == sum(sizes.values()) + 700 + young
    assert plan.total_after == keep == plan.total_before - plan.freed
    done = cache.prune(keep)
    assert [f.path for f in done.deleted] == [f.path for f in plan.deleted]
    assert (done.total_after, done.failed, done.dry_run) == (keep, [], False)
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted(
        ["e1.npz", "e3.npz", ".e8.zzzz_999.tmp", *FOREIGN])
    assert cache.scan().total_bytes == keep
    # one byte less: the next least recently used goes; the write in progress never does
    assert [f.key for f in cache.prune(keep - 1).deleted] == ["e1"]
    assert [f.key for f in cache.prune(0).deleted] == ["e3"]
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted([".e8.zzzz_999.tmp", *FOREIGN])
    assert cache.prune(0).total_after == young


def test_prune_within_the_limit_only_removes_stale_writes(cache_dir):
    sizes = make_lru_dir(cache_dir)
    r = cache.prune(10**9)
    assert [f.path.name for f in r.deleted] == [".e9.abcd_123.tmp"]
    assert entry_keys() == sorted(sizes)
    assert cache.prune(10**9).deleted == []
    assert cache.prune(cache.scan().total_bytes).deleted == []  # a total == limit fits


def test_prune_keeps_an_entry_rewritten_or_vanished_since_its_scan(cache_dir, monkeypatch):
    sizes = make_lru_dir(cache_dir)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "none")  # the store below prunes nothing itself
    stale = cache.scan()
    cache.store("e2", 1, {"a": np.zeros(1000, np.uint8)})  # rewritten: the newest now
    cache.cache_path("e4").unlink()  # deleted by someone else
    assert cache.cache_path("e2").stat().st_size == sizes["e2"]
    with monkeypatch.context() as m:
        m.setattr(cache, "scan", lambda directory=None: stale)
        r = cache.prune(sizes["e2"] + sizes["e3"] + 300)
    assert [f.key for f in r.deleted] == [None, "e5", "e1"] and not r.failed
    assert entry_keys() == ["e2", "e3"]
    assert r.total_after == sizes["e2"] + sizes["e3"] + 300 == cache.scan().total_bytes


def test_prune_refuses_a_negative_limit(cache_dir):
    with pytest.raises(ValueError):
        cache.prune(-1)


def test_store_keeps_the_cache_within_the_automatic_limit(cache_dir, monkeypatch):
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    sizes = {k: store_sized(k, 2000) for k in ("a", "b", "c")}
    for i, k in enumerate(("a", "b", "c")):
        set_last_use(k, days_ago=3 - i)
    cache.load("a", 1)  # now a is the most recently used; b the least
    n = sizes["a"]
    monkeypatch.setenv(cache.MAX_SIZE_ENV, str(3 * n + 10))
    store_sized("d", 2000)
    assert entry_keys() == ["a", "c", "d"]
    # the foreign file is not touched by the automatic prune either
    (cache_dir / "notes.txt").write_text("mine")
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "5kB")
    store_sized("f", 100)
    assert entry_keys() == ["d", "f"] and (cache_dir / "notes.txt").exists()
    # no limit: nothing pruned
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "None")
    store_sized("g", 9000)
    assert entry_keys() == ["d", "f", "g"]


def test_a_store_within_the_limit_opens_no_other_entry(cache_dir, monkeypatch):
    """Every store checks the limit: within it, the directory's file sizes say so without
    a scan (which opens every entry: 0.3 s for 2,000 of them); beyond it, prune scans."""
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    n = store_sized("a", 2000)
    scans = []
    real_scan = cache.scan
    monkeypatch.setattr(cache, "scan", lambda d=None: scans.append(d) or real_scan(d))
    monkeypatch.setattr(config, "CACHE_MAX_SIZE", str(2 * n))  # a total == limit fits
    store_sized("b", 2000)
    assert scans == [] and entry_keys() == ["a", "b"]
    scans.clear()
    (cache_dir / "notes.txt").write_text("x")  # a foreign byte: at least as much to count
    store_sized("b", 2000)
    assert scans == [cache_dir] and entry_keys() == ["a", "b"]  # scanned, nothing to prune
    scans.clear()
    store_sized("c", 2000)
    assert scans == [cache_dir] and entry_keys() == ["b", "c"]


def test_the_default_limit_applies_when_the_variable_is_unset(cache_dir, monkeypatch):
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    monkeypatch.setattr(config, "CACHE_MAX_SIZE", "1MB")  # the 10 GB default, scaled down
    n = store_sized("a", 2000)
    store_sized("b", 2000)
    monkeypatch.setattr(config, "CACHE_MAX_SIZE", str(2 * n + 10))
    set_last_use("a", days_ago=2)
    set_last_use("b", days_ago=1)
    store_sized("c", 2000)
    assert entry_keys() == ["b", "c"]
    # the variable overrides the default, either way
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "1MB")
    store_sized("d", 2000)
    assert entry_keys() == ["b", "c", "d"]
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "none")
    store_sized("e", 2000)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "")  # empty: the default again
    store_sized("f", 2000)
    assert entry_keys() == ["e", "f"]


@pytest.mark.parametrize("nbytes", [8000, 4990])  # the arrays alone; only with the headers
def test_an_entry_larger_than_the_limit_by_itself_is_not_kept(cache_dir, monkeypatch, caplog,
                                                              nbytes):
    """Neither kept nor a reason to prune the others: the cache stays within its limit."""
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    sizes = {k: store_sized(k, 1000) for k in ("a", "b")}
    monkeypatch.setattr(config, "CACHE_MAX_SIZE", "5kB")
    with caplog.at_level("INFO", logger="dicelab.cache"):
        assert cache.store("big", 1, {"a": np.zeros(nbytes, np.uint8)}) is None
    assert entry_keys() == ["a", "b"] and cache.scan().total_bytes == sum(sizes.values())
    assert sorted(p.name for p in cache_dir.iterdir()) == ["a.npz", "b.npz"]  # no leftovers
    (msg,) = [r.getMessage() for r in caplog.records if r.name == "dicelab.cache"]
    assert msg.startswith("cache: big (") and "is by itself larger than the cache's limit " \
        "of 5.0 kB (the default; $DICELAB_CACHE_MAX_SIZE sets another, none for no limit)" \
        "; not kept" in msg
    # the neighbours: one that fits the limit is kept (and prunes); with no limit, too
    assert cache.store("fits", 1, {"a": np.zeros(2000, np.uint8)}) is not None
    assert entry_keys() == ["b", "fits"]
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "none")
    assert cache.store("big", 1, {"a": np.zeros(nbytes, np.uint8)}) is not None
    assert entry_keys() == ["b", "big", "fits"]


def test_an_entry_too_large_to_keep_takes_the_older_file_of_its_key_with_it(cache_dir,
                                                                            monkeypatch):
    """A key's older entry (another format version, or one stored under a larger limit) is
    not left behind when its new table is refused for its size; a symlink at the key's
    path is left alone."""
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "none")
    store_sized("old", 1000)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "5kB")
    for nbytes in (8000, 4990):  # refused before writing; only once written, with headers
        cache.store("old", 1, {"a": np.zeros(1000, np.uint8)})
        assert cache.store("old", 2, {"a": np.zeros(nbytes, np.uint8)}) is None
        assert entry_keys() == [] and not cache.cache_path("old").exists()
    target = cache_dir / "elsewhere.bin"
    target.write_bytes(b"x")
    cache.cache_path("link").symlink_to(target)
    assert cache.store("link", 1, {"a": np.zeros(8000, np.uint8)}) is None
    assert cache.cache_path("link").is_symlink() and target.read_bytes() == b"x"


def test_a_table_larger_than_the_limit_is_built_and_used_but_not_cached(cache_dir,
                                                                          monkeypatch):
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "1kB")
    built = []

    def build():
        built.append(1)
        return {"a": np.arange(500, dtype=np.int64)}

    for _ in range(2):
        arrays, was_cached = cache.cached("unit-big", 1, build)
        assert not was_cached and np.array_equal(arrays["a"], np.arange(500))
    assert built == [1, 1] and entry_keys() == []
    cache.store_in_background("unit-big", 1, build())
    cache.wait_stores()
    assert entry_keys() == []


def test_a_malformed_automatic_limit_fails_before_writing_or_building(cache_dir,
                                                                      monkeypatch):
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "2 gigs")
    with pytest.raises(UserError, match=r"\$DICELAB_CACHE_MAX_SIZE"):
        cache.store("unit-bad", 1, {"a": np.arange(3)})
    assert not cache_dir.exists() or not any(cache_dir.iterdir())
    built = []
    with pytest.raises(UserError, match=r"\$DICELAB_CACHE_MAX_SIZE"):
        cache.cached("unit-bad", 1, lambda: built.append(1) or {"a": np.arange(3)})
    assert built == []


# --- the prune CLI ------------------------------------------------------------------------


def test_cli_prune_dry_run_then_yes(capsys, cache_dir):
    sizes = make_lru_dir(cache_dir)
    keep = sizes["e1"] + sizes["e3"] + 300
    files = sorted(p.name for p in cache_dir.iterdir())
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", str(keep), "--dry-run"])
    assert code == 0 and not err and "would delete (least recently used first):" in out
    assert sorted(p.name for p in cache_dir.iterdir()) == files
    total = sum(sizes.values()) + 1000
    assert f"would free {size(total - keep)}" in out
    for name in ("e2", "e4", "e5", "(unfinished write) .e9.abcd_123.tmp"):
        assert name in out
    assert "e1 " not in out and "e3 " not in out
    code, out, _ = run_cli(capsys, ["cache", "prune", "--max-size", str(keep), "--yes"])
    assert code == 0 and "deleted (least recently used first):" in out
    assert f"total {size(total)} -> {size(keep)}" in out
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted(
        ["e1.npz", "e3.npz", ".e8.zzzz_999.tmp", *FOREIGN])
    code, out, _ = run_cli(capsys, ["cache", "prune", "--max-size", "1GB"])
    assert code == 0 and "nothing to prune" in out
    code, out, _ = run_cli(capsys, ["cache", "prune", "--max-size", "0", "-y"])
    assert code == 0 and "still above the limit" in out and entry_keys() == []


def test_cli_prune_json(capsys, cache_dir):
    sizes = make_lru_dir(cache_dir)
    keep = sizes["e1"] + sizes["e3"] + 300
    for dry in (True, False):
        argv = ["cache", "prune", "--max-size", str(keep), "--json"]
        code, out, _ = run_cli(capsys, argv + (["--dry-run"] if dry else ["--yes"]))
        d = json.loads(out)
        assert code == 0 and d["dry_run"] is dry and d["max_bytes"] == keep
        assert [f["key"] for f in d["deleted"]] == [None, "e2", "e4", "e5"]
        assert d["total_bytes"] == keep and d["failed"] == []
        assert d["freed_bytes"] == d["total_bytes_before"] - keep
        assert all(f["last_used"].endswith("+00:00") for f in d["deleted"])
    assert entry_keys() == ["e1", "e3"]


@pytest.mark.parametrize("answer, deleted", [("n\n", False), ("y\n", True), ("\n", False)])
def test_cli_prune_asks_first(capsys, cache_dir, monkeypatch, answer, deleted):
    sizes = make_lru_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO(answer))
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", str(sizes["e3"] + 300)])
    assert code == 0 and err.startswith("delete 5 file(s)") and "delete 5" not in out
    assert entry_keys() == (["e3"] if deleted else sorted(sizes))
    assert ("nothing deleted" in out) is not deleted


def test_cli_prune_json_asks_on_stderr(capsys, cache_dir, monkeypatch):
    sizes = make_lru_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, out, err = run_cli(capsys, ["cache", "prune", "--max-size", "0", "--json"])
    d = json.loads(out)
    assert out.startswith("{")  # nothing of the question on stdout
    assert code == 0 and "delete 6 file(s)" in err
    assert d["deleted"] == [] and d["total_bytes"] == d["total_bytes_before"]
    assert entry_keys() == sorted(sizes)


@pytest.mark.parametrize("argv, needle", [
    (["cache", "prune", "--max-size", "2G"], "--max-size: '2G' is not a size"),
    (["cache", "prune", "--max-size", "-5MB", "--dry-run"], "is not a size"),
    (["cache", "prune", "--max-size", "lots", "--yes"], "e.g. 2GB or 1.5GiB"),
    (["cache", "prune"], "--max-size"),
    (["cache", "prune", "--max-size", "0"], "--yes"),  # stdin closed: no answer
    (["cache", "prune", "--max-size", "0", "--json"], "--yes"),
    # a dry run asks nothing: a --yes to its question was accepted and ignored
    (["cache", "prune", "--max-size", "10MB", "--dry-run", "--yes"],
     "--dry-run deletes nothing"),
    (["cache", "prune", "--max-size", "1GB", "-y", "--dry-run", "--json"], "asks nothing"),
])
def test_cli_prune_bad_input_exits_2_with_one_line(capsys, cache_dir, monkeypatch, argv,
                                                   needle):
    sizes = make_lru_dir(cache_dir)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = run_cli(capsys, argv)
    # the unanswered question is on stderr, on a line of its own
    assert code == 2 and err.splitlines()[-1].startswith("error:")
    assert needle in err.splitlines()[-1] and err.endswith("\n")
    assert err.count("\n") == (2 if "0" in argv else 1)
    assert err.count("error:") == 1 and "Traceback" not in err and "{" not in out
    assert entry_keys() == sorted(sizes)


@pytest.mark.parametrize(("argv", "needle"), [
    (["cache", "--json", "clear", "--yes"], "cache clear prints no JSON: leave out --json"),
    (["cache", "--json", "prune", "--max-size", "0"], "dicelab cache prune --json"),
])
def test_json_before_a_subcommand_says_where_it_goes(capsys, cache_dir, argv, needle):
    """cache clear has no --json: the refusal sent there (cache clear --json), to a second
    error; prune takes it after its name."""
    sizes = make_lru_dir(cache_dir)
    code, out, err = run_cli(capsys, argv)
    assert (code, out) == (2, "") and err == f"error: {err[7:]}" and err.count("\n") == 1
    assert needle in err and entry_keys() == sorted(sizes)


def test_cli_list_shows_last_use_and_the_automatic_limit(capsys, cache_dir, monkeypatch):
    make_lru_dir(cache_dir)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "1.5GiB")
    code, out, _ = run_cli(capsys, ["cache"])
    assert code == 0 and "last used" in out
    assert f"automatic limit: {size(3 * 2**29)} ($DICELAB_CACHE_MAX_SIZE)" in out
    code, out, _ = run_cli(capsys, ["cache", "list", "--json"])
    d = json.loads(out)
    assert d["max_bytes"] == 3 * 2**29 and d["max_bytes_source"] == "$DICELAB_CACHE_MAX_SIZE"
    by_key = {e["key"]: e for e in d["entries"]}
    assert by_key["e2"]["last_used"] < by_key["e4"]["last_used"] < by_key["e3"]["last_used"]
    # unset: the default, and how to change it
    monkeypatch.delenv(cache.MAX_SIZE_ENV)
    code, out, _ = run_cli(capsys, ["cache", "list"])
    assert code == 0 and ("automatic limit: 10.0 GB (the default; $DICELAB_CACHE_MAX_SIZE "
                          "sets another, none for no limit)") in out
    code, out, _ = run_cli(capsys, ["cache", "list", "--json"])
    d = json.loads(out)
    assert d["max_bytes"] == 10**10 and d["max_bytes_source"] == "default"
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "none")
    code, out, _ = run_cli(capsys, ["cache"])
    assert code == 0 and "automatic limit: none ($DICELAB_CACHE_MAX_SIZE)" in out
    code, out, _ = run_cli(capsys, ["cache", "list", "--json"])
    d = json.loads(out)
    assert d["max_bytes"] is None and d["max_bytes_source"] == "$DICELAB_CACHE_MAX_SIZE"
    # an empty directory shows the limit too
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(cache_dir / "empty"))
    code, out, _ = run_cli(capsys, ["cache", "list"])
    assert code == 0 and "no cache entries" in out and "automatic limit: none" in out


@pytest.mark.parametrize("argv", [["cache"], ["cache", "list"], ["cache", "list", "--json"],
                                  ["solve", "farkle", "--policy", "fastest", "--target", "1000"]])
@pytest.mark.parametrize("value", ["big", "unlimited", "nan", "5 G"])
def test_a_malformed_limit_is_one_error_line_before_any_work(capsys, cache_dir, monkeypatch,
                                                             argv, value):
    monkeypatch.setenv(cache.MAX_SIZE_ENV, value)
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: $DICELAB_CACHE_MAX_SIZE: {value!r} is not a size")
    assert err.endswith("or none for no limit\n")
    assert not cache_dir.exists() or not any(cache_dir.iterdir())  # nothing built or stored


def test_the_automatic_prune_says_what_it_removed(cache_dir, monkeypatch, capsys, caplog):
    # a library user sees it through logging; the CLI prints it as one line on stderr
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    n = store_sized("a", 2000)
    store_sized("b", 2000)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, str(2 * n + 10))
    with caplog.at_level("INFO", logger="dicelab.cache"):
        store_sized("c", 2000)
    assert entry_keys() == ["b", "c"]
    (msg,) = [r.getMessage() for r in caplog.records if r.name == "dicelab.cache"]
    assert "removed 1 least recently used file(s)" in msg and cache.MAX_SIZE_ENV in msg
    # within the limit: nothing removed, nothing said
    caplog.clear()
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "1GB")
    with caplog.at_level("INFO", logger="dicelab.cache"):
        store_sized("d", 2000)
    assert not [r for r in caplog.records if r.name == "dicelab.cache"]
    # through the CLI: a command that stores, with a limit that forces a removal
    capsys.readouterr()  # (once the CLI has run in a process, the lines above print too)
    # (the new table, 104.7 kB, fits; the three others of 2.6 kB each go)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "106kB")
    code, out, err = run_cli(capsys, ["solve", "farkle", "--policy", "fastest", "--target", "1000",
                                      "--json"])
    assert code == 0 and json.loads(out)
    assert err.startswith("dicelab: cache: removed 3 least recently used file(s)")
    assert len(err.strip().splitlines()) == 1


def test_a_limit_of_zero_keeps_nothing(cache_dir, monkeypatch, capsys, caplog):
    """$DICELAB_CACHE_MAX_SIZE=0: the new table is not kept and every older entry goes
    (the older ones stayed: a table too large for the limit pruned nothing); foreign
    files and a write in progress stay, as in any prune."""
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    sizes = make_lru_dir(cache_dir)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "0")
    with caplog.at_level("INFO", logger="dicelab.cache"):
        assert cache.store("new", 1, {"a": np.arange(10)}) is None
    assert entry_keys() == []
    assert sorted(p.name for p in cache_dir.iterdir()) == [".e8.zzzz_999.tmp", *FOREIGN]
    msgs = [r.getMessage() for r in caplog.records if r.name == "dicelab.cache"]
    assert len(msgs) == 2 and "not kept" in msgs[0]
    assert msgs[1].startswith(f"cache: removed {len(sizes) + 1} least recently used file(s)")
    # a store on an empty cache (or none yet) says only that the table is not kept
    caplog.clear()
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(cache_dir / "none-yet"))
    with caplog.at_level("INFO", logger="dicelab.cache"):
        assert cache.store("new", 1, {"a": np.arange(10)}) is None
    assert [r.getMessage() for r in caplog.records if "removed" in r.getMessage()] == []
    assert not (cache_dir / "none-yet").exists()


@pytest.mark.parametrize("limit, kept", [("1", []), ("3kB", ["e3"]), ("none", None)])
def test_a_table_too_large_for_the_limit_still_prunes_the_others_to_it(cache_dir,
                                                                      monkeypatch, limit,
                                                                      kept):
    """Neighbours of 0: a limit below every entry keeps none; a limit that a too-large
    table does not fit still prunes the others to it (none to make room for it); no
    limit keeps all and stores the table."""
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    sizes = make_lru_dir(cache_dir)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, limit)
    stored = cache.store("big", 1, {"a": np.zeros(5000, np.uint8)})
    if kept is None:
        assert stored is not None and entry_keys() == sorted([*sizes, "big"])
    else:
        assert stored is None and entry_keys() == kept


def test_the_cli_with_a_limit_of_zero_leaves_no_table(capsys, cache_dir, monkeypatch):
    monkeypatch.delenv(cache.MAX_SIZE_ENV, raising=False)
    store_sized("older", 2000)
    monkeypatch.setenv(cache.MAX_SIZE_ENV, "0")
    code, out, err = run_cli(capsys, ["solve", "farkle", "--policy", "fastest", "--target",
                                      "1000", "--json"])
    assert code == 0 and json.loads(out)["expected_turns_to_target"] > 1
    assert entry_keys() == []
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("dicelab: cache: ") for line in lines)
    assert "not kept" in lines[0] and "removed 1 least recently used file(s)" in lines[1]


def test_a_store_in_the_background_is_written_before_anyone_reads_the_cache(tmp_path,
                                                                           monkeypatch):
    """A background store resolves its path when it is made (a later change of the cache
    directory does not move it), and every look at the cache waits for it."""
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "a"))
    arr = np.arange(1_000_000, dtype=np.int64)
    cache.store_in_background("k", "v1", {"x": arr})
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "b"))
    assert cache.load("k", "v1") is None  # waited; the entry is in a, not b
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(tmp_path / "a"))
    got = cache.load("k", "v1")
    assert got is not None and np.array_equal(got["x"], arr)
    assert not list((tmp_path / "a").glob(".*.tmp"))
    monkeypatch.setenv("DICELAB_CACHE_MAX_SIZE", "lots")
    with pytest.raises(UserError):  # a malformed limit fails before the thread starts
        cache.store_in_background("k2", "v1", {"x": arr})


@pytest.mark.parametrize("argv", [["cache", "clear"], ["cache", "prune", "--max-size", "0"],
                                  ["cache", "prune", "--max-size", "0", "--json"]])
@pytest.mark.parametrize("raised, code, last", [
    (KeyboardInterrupt, 130, "interrupted"),
    (EOFError, 2, "error: no answer to the confirmation"),
])
def test_cli_ctrl_c_at_the_question_is_an_interrupt(capsys, cache_dir, monkeypatch, argv,
                                                    raised, code, last):
    """Ctrl-C at 'delete ...? [y/N]' exits 130 (it was the 'no answer' error, exit 2);
    no answer at all (end of input) stays that error. Nothing is deleted either way."""
    make_mixed_dir(cache_dir)
    before = sorted(p.name for p in cache_dir.iterdir())

    class Keyboard(io.StringIO):
        def readline(self, *args):  # what input() reads the answer with
            raise raised

    monkeypatch.setattr("sys.stdin", Keyboard())
    got, _out, err = run_cli(capsys, argv)
    assert got == code, err
    assert err.strip().splitlines()[-1].startswith(last) and "Traceback" not in err
    assert sorted(p.name for p in cache_dir.iterdir()) == before
