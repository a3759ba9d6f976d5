"""The one writer of every output and the reader of the files a user names
(:mod:`dicelab.files`): a rename only ever replaces a regular file, a symbolic link is
written through, devices and pipes are written in place or refused, and every failure is
one ``UserError``."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_helpers import run_cli

from dicelab.errors import UserError
from dicelab.files import check_output, make_output_dir, read_input, write_output


def _node(path) -> tuple:
    """What must not change about a file system node: its identity, kind, mode and link
    target."""
    st = os.lstat(path)
    link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    return st.st_dev, st.st_ino, st.st_mode, st.st_rdev, link


def test_a_new_file_and_a_replaced_one_keep_the_mode_and_leave_no_temporary(tmp_path):
    f = tmp_path / "out.txt"
    write_output(f, b"one", "--log")
    assert f.read_bytes() == b"one"
    os.chmod(f, 0o640)
    write_output(f, lambda fh: fh.write(b"two"), "--log")
    assert f.read_bytes() == b"two" and stat.S_IMODE(f.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_text("old")
    link = tmp_path / "link.jsonl"
    link.symlink_to("real.jsonl")
    chain = tmp_path / "chain.jsonl"
    chain.symlink_to(link)
    before = _node(link), _node(chain)
    write_output(chain, b"new", "--log")
    assert (_node(link), _node(chain)) == before and target.read_text() == "new"
    check_output(chain, "--log")
    to_null = tmp_path / "null"
    to_null.symlink_to("/dev/null")
    check_output(to_null, "--log")
    write_output(to_null, b"x", "--log")
    assert to_null.is_symlink()


def test_a_link_to_nothing_is_refused_and_its_target_never_made(tmp_path):
    """Written through, a dangling link would create its target silently, wherever it
    points: check and write refuse it, alone or at the end of a chain."""
    dangling = tmp_path / "dangling.png"
    dangling.symlink_to(tmp_path / "made.png")
    chain = tmp_path / "chain.png"
    chain.symlink_to("dangling.png")
    before = sorted(os.listdir(tmp_path)), _node(dangling), _node(chain)
    for path in (dangling, chain):
        for call in (lambda p=path: check_output(p, "--plot", suffix=".png"),
                     lambda p=path: write_output(p, b"png", "--plot"),
                     lambda p=path: write_output(p, lambda fh: fh.write(b"png"), "--plot")):
            with pytest.raises(UserError, match=r"^--plot .*: is a symbolic link to .*, "
                                                r"which does not exist"):
                call()
    assert (sorted(os.listdir(tmp_path)), _node(dangling), _node(chain)) == before
    from dicelab.results import check_out_dir

    out = tmp_path / "out"
    out.symlink_to(tmp_path / "made-dir")
    with pytest.raises(UserError, match=r"--out .*: is a symbolic link to .*, which does not"):
        check_out_dir(out)
    assert not (tmp_path / "made-dir").exists() and out.is_symlink()
    (tmp_path / "made-dir").mkdir()  # the link now points at a directory: written through
    assert check_out_dir(out) == out


def test_devices_are_written_in_place_and_never_replaced():
    for dev in ("/dev/null", "/dev/full"):
        if not os.path.exists(dev):
            pytest.skip(f"no {dev}")
    before = _node("/dev/null"), _node("/dev/full")
    check_output("/dev/null", "--log")
    write_output("/dev/null", b"x" * 100_000, "--log")
    check_output("/dev/full", "--log")  # writable; the write itself fails
    with pytest.raises(UserError, match=r"--log /dev/full: cannot write \(No space left"):
        write_output("/dev/full", b"x", "--log")
    with pytest.raises(UserError, match="No space left"):
        write_output("/dev/full", lambda fh: fh.write(b"x"), "--log")
    assert (_node("/dev/null"), _node("/dev/full")) == before


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = _node(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, b"through the pipe", "--log")
    reader.join(10)
    assert got == [b"through the pipe"] and _node(fifo) == before


def test_directories_sockets_and_missing_directories_are_refused(tmp_path):
    with pytest.raises(UserError, match="is a directory"):
        write_output(tmp_path, b"x", "--log")
    with pytest.raises(UserError, match="is a directory"):
        check_output(tmp_path, "--log")
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        before = _node(sock_path)
        for call in (lambda: check_output(sock_path, "--log"),
                     lambda: write_output(sock_path, b"x", "--log")):
            with pytest.raises(UserError, match="is a socket"):
                call()
        assert _node(sock_path) == before
    with pytest.raises(UserError, match="does not exist"):
        check_output(tmp_path / "no" / "x.png", "--plot")
    with pytest.raises(UserError, match=r"must end in \.png"):
        check_output(tmp_path / "x.jpg", "--plot", suffix=".png")
    with pytest.raises(UserError, match="needs a file name"):
        check_output("", "--log")
    with pytest.raises(UserError, match="longer than the file system allows"):
        check_output(tmp_path / ("x" * 300), "--log")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(UserError, match="symbolic links"):
        check_output(loop, "--log")


def test_a_path_in_the_out_directory_the_run_creates_is_taken(tmp_path, monkeypatch):
    """``--out DIR --plot DIR/p.png`` with DIR still to be made: the plot is checked
    against the directory --out creates (``creates``), and nothing is made by the check.
    A missing directory that is not --out's, or one below it, is still refused."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs" / "d1"
    for plot, creates in ((out / "p.png", out), (out / "p.png", f"{out}/"),
                          (Path("runs/d1/p.png"), out), (out / "p.png", "runs/d1")):
        assert check_output(plot, "--plot", suffix=".png", creates=creates) == plot
    assert not (tmp_path / "runs").exists()
    for plot in (tmp_path / "runs" / "d2" / "p.png", out / "sub" / "p.png",
                 tmp_path / "runs" / "x" / ".." / "d1" / "p.png"):
        with pytest.raises(UserError, match="does not exist"):
            check_output(plot, "--plot", creates=out)
    with pytest.raises(UserError, match=r"must end in \.png"):
        check_output(out / "p.jpg", "--plot", suffix=".png", creates=out)
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="file is not a directory"):  # no directory to be
        check_output(tmp_path / "file" / "p.png", "--plot", creates=tmp_path / "file")
    assert not (tmp_path / "runs").exists()


def test_a_cache_entry_is_never_written_into_a_device(tmp_path):
    fifo = tmp_path / "entry.npz"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="regular files here"):
        write_output(fifo, b"x", "cache entry", in_place=False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_file_or_directory_is_refused_before_any_work(tmp_path):
    f = tmp_path / "ro.jsonl"
    f.write_text("keep")
    f.chmod(0o444)
    with pytest.raises(UserError, match="not writable"):
        check_output(f, "--log")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        with pytest.raises(UserError, match="cannot create a file"):
            check_output(d / "x.png", "--plot")
    finally:
        d.chmod(0o755)


def test_proc_cannot_take_a_file_and_says_so_before_any_work():
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    with pytest.raises(UserError, match="cannot create a file in /proc"):
        check_output("/proc/x.png", "--plot")


def test_standard_output_is_written_after_what_was_printed(tmp_path):
    out = tmp_path / "out.txt"
    code = ("import sys; from dicelab.files import write_output; print('first', flush=True);"
            "write_output('/dev/stdout', b'second\\n', '--log'); print('third')")
    with open(out, "w") as fh:
        subprocess.run([sys.executable, "-c", code], stdout=fh, check=True)
    assert out.read_text() == "first\nsecond\nthird\n"


def test_read_input_takes_regular_files_only_and_at_most_the_limit(tmp_path):
    f = tmp_path / "rules.toml"
    f.write_bytes(b"x" * 10)
    assert read_input(f, "rules file", 10) == b"x" * 10
    with pytest.raises(UserError, match="rules file: longer than 9 bytes"):
        read_input(f, "rules file", 9)
    with pytest.raises(UserError, match="rules file: not found"):
        read_input(tmp_path / "missing", "rules file", 10)
    with pytest.raises(UserError, match="is a directory"):
        read_input(tmp_path, "rules file", 10)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: the open must not wait for one
    with pytest.raises(UserError, match=r"is a pipe \(FIFO\), not a regular file"):
        read_input(fifo, "rules file", 10)
    if os.path.exists("/dev/zero"):
        with pytest.raises(UserError, match="is a character device, not a regular file"):
            read_input(Path("/dev/zero"), "/dev/zero", 10)


# ------------------------------------------------- one rule for every output path

def _tree(root: Path) -> dict:
    """Every node under ``root`` (not following links), as :func:`_node` sees it."""
    return {str(p.relative_to(root)): _node(p) for p in sorted(root.rglob("*"))}


#: Commands with one output path each (``{}``: the path), refused at their checks, before
#: any work: each output option of the commands that write files.
OUTPUTS = {
    "simulate --out": ["simulate", "-s", "threshold-300", "-n", "50", "--out", "{}"],
    "simulate --log": ["simulate", "-s", "threshold-300", "-n", "50", "--log", "{}.jsonl"],
    "compare --out": ["compare", "threshold-300", "threshold-500", "-n", "50", "--out", "{}"],
    "tournament --out": ["tournament", "threshold-300", "threshold-500", "-n", "50",
                         "--out", "{}"],
    "evaluate --out": ["evaluate", "threshold-300", "--target", "200", "--out", "{}"],
    "evaluate --plot": ["evaluate", "threshold-300", "--target", "200", "--plot", "{}.png"],
    "tune --out": ["tune", "threshold", "--against", "threshold-300", "--target", "200",
                   "--out", "{}"],
    "bust-risk --out": ["bust-risk", "-n", "50", "--out", "{}"],
    "policy farkle --plot": ["policy", "farkle", "threshold-300", "--plot", "{}.png"],
    "solve penta --out": ["solve", "penta", "--distribution", "-p", "greedy", "--out", "{}"],
    "solve penta --plot": ["solve", "penta", "--distribution", "-p", "greedy", "--plot",
                           "{}.png"],
    "experiment run --out": ["experiment", "run", "threshold-sweep", "--out", "{}"],
}


def _argv(kind: str, path: Path | str) -> list[str]:
    return [a.format(path) for a in OUTPUTS[kind]]


def _refused(capsys, argv: list[str], *words: str) -> str:
    """``dicelab ARGV`` is one ``error:`` line holding ``words``, exit code 2."""
    code, out, err = run_cli(capsys, argv)
    assert code == 2 and out == "" and err.startswith("error: "), (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize("kind", OUTPUTS)
def test_every_output_path_refuses_a_missing_directory_before_any_work(capsys, tmp_path,
                                                                       kind):
    """One rule for --out, --plot and --log: the directory a new output goes in must exist.
    --out made its missing parents (``--out a/missing/dir`` went through) where --plot and
    --log refused them; now each is one error line, exit code 2, and nothing is made."""
    (tmp_path / "a").mkdir()
    before = _tree(tmp_path)
    _refused(capsys, _argv(kind, tmp_path / "a" / "missing" / "x"),
             f"the directory {tmp_path / 'a' / 'missing'} does not exist")
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("kind", OUTPUTS)
def test_every_output_path_refuses_a_file_as_its_directory(capsys, tmp_path, kind):
    (tmp_path / "file").write_text("keep")
    before = _tree(tmp_path)
    for below in (tmp_path / "file" / "x", tmp_path / "file" / "deeper" / "x"):
        _refused(capsys, _argv(kind, below), f"{tmp_path / 'file'} is not a directory")
    assert _tree(tmp_path) == before and (tmp_path / "file").read_text() == "keep"


@pytest.mark.parametrize("kind", [k for k in OUTPUTS if k.endswith("--out")])
def test_an_out_that_is_a_device_or_a_link_to_one_is_refused_and_kept(capsys, tmp_path,
                                                                       kind):
    """--out is a directory: a device, or a link to one, is refused and never replaced;
    so is a link to nothing (its target would be made)."""
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "made")
    before = _tree(tmp_path), _node("/dev/null")
    _refused(capsys, [a.format("/dev/null") for a in OUTPUTS[kind]],
             "exists and is not a directory (it is a character device)")
    _refused(capsys, _argv(kind, link), "exists and is not a directory")
    _refused(capsys, _argv(kind, dangling), "is a symbolic link to", "does not exist")
    assert (_tree(tmp_path), _node("/dev/null")) == before


@pytest.mark.parametrize("kind", [k for k in OUTPUTS if not k.endswith("--out")])
def test_a_file_output_that_is_a_directory_is_refused(capsys, tmp_path, kind):
    name = _argv(kind, "x")[-1]
    (tmp_path / name).mkdir()
    before = _tree(tmp_path)
    _refused(capsys, _argv(kind, tmp_path / "x"), "is a directory")
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("kind", ["simulate --out", "simulate --log", "evaluate --plot",
                                  "bust-risk --out"])
def test_an_output_where_nothing_can_be_made_is_refused_before_any_work(capsys, kind):
    """A directory where this process can make nothing (``/proc``, whoever runs it)."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    _refused(capsys, _argv(kind, "/proc/dicelab-x"), "/proc/dicelab-x", "cannot create")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
@pytest.mark.parametrize("kind", ["simulate --out", "simulate --log", "evaluate --plot",
                                  "bust-risk --out", "experiment run --out"])
def test_an_output_in_a_read_only_directory_is_refused_before_any_work(capsys, tmp_path,
                                                                        kind):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        _refused(capsys, _argv(kind, ro / "x"), "cannot create")
        if kind.endswith("--out"):
            _refused(capsys, _argv(kind, ro), "directory is not writable")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


def test_out_makes_its_own_directory_and_writes_through_a_link_to_one(capsys, tmp_path):
    """What may be made: the --out directory itself (its parent exists), once the run
    succeeded; an existing --out, or a link to a directory, is written in, the link kept.
    A --log through a link to a device is written there in place, the link kept."""
    code, _, err = run_cli(capsys, _argv("bust-risk --out", tmp_path / "new"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["manifest.json",
                                                                    "summary.parquet"]
    (tmp_path / "real").mkdir()
    link = tmp_path / "link"
    link.symlink_to("real")
    before = _node(link)
    code, _, err = run_cli(capsys, _argv("bust-risk --out", link))
    assert code == 0, err
    assert _node(link) == before
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["manifest.json",
                                                                     "summary.parquet"]
    if os.path.exists("/dev/null"):
        to_null = tmp_path / "log.jsonl"
        to_null.symlink_to("/dev/null")
        before = _node(to_null), _node("/dev/null")
        code, _, err = run_cli(capsys, ["simulate", "-s", "threshold-300", "-n", "20",
                                        "--target", "500", "--log", str(to_null),
                                        "--log-games", "2"])
        assert code == 0, err
        assert (_node(to_null), _node("/dev/null")) == before


def test_the_check_of_a_directory_makes_nothing_and_only_a_chosen_one_gets_parents(
        tmp_path):
    """:func:`check_output` of a directory: named by an option (``--out``), its parent
    must exist; one dicelab chose itself (named in words, "the results directory", or
    ``parents=True``) may be made with its parents. The check makes nothing; the
    directory is made by :func:`make_output_dir` after the run."""
    deep = tmp_path / "results" / "exp" / "v1"
    with pytest.raises(UserError, match=r"^--out .*: the directory .*exp does not exist"):
        check_output(deep, "--out", directory=True)
    assert check_output(deep, "the results directory", directory=True) == deep
    assert check_output(deep, "--out", directory=True, parents=True) == deep
    with pytest.raises(UserError, match="does not exist"):
        check_output(deep, "the results directory", directory=True, parents=False)
    assert list(tmp_path.iterdir()) == []
    assert check_output(tmp_path / "d", "--out", directory=True) == tmp_path / "d"
    assert list(tmp_path.iterdir()) == []
    assert make_output_dir(deep).is_dir()
    (tmp_path / "f").write_text("")
    with pytest.raises(UserError, match="exists and is not a directory"):
        make_output_dir(tmp_path / "f")
    with pytest.raises(UserError, match=r"f is not a directory \(it is a regular file\)"):
        check_output(tmp_path / "f" / "x" / "y", "the results directory", directory=True)
