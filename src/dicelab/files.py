"""Reading the files a user names, and writing every file dicelab produces.

One writer, :func:`write_output`, is used for every output (results, manifests, game logs,
figures, cache entries, experiment cells). What it does depends on what is at the path:

* nothing, or a regular file: the data goes to a temporary file in the same directory,
  which is then renamed into place, so a reader never sees half a file and an interrupted
  write leaves the old file as it was. A replaced file keeps its permission bits; a new
  one gets the user's umask. The rename only ever replaces a regular file.
* a symbolic link to one of these: the same, at the file the link points to; the link
  stays. A dangling link (to nothing) is refused: its target would be created silently.
* a character device or a pipe (``/dev/stdout``, ``/dev/null``, a FIFO): written in place,
  never replaced. A path that is this process's standard output or error is written
  through that stream, after what was printed so far.
* a directory, a block device or a socket: refused.

Every failure to write (a full disk, ``/dev/full``, a directory that cannot be written) is
a :class:`~dicelab.errors.UserError` naming the option and the path, and nothing is left
behind. :func:`check_output` asks the same questions before any work, so that a long run
never ends in a file it cannot write.

:func:`read_input` reads a file the user names: regular files only (``/dev/zero``, a
directory or a FIFO is refused before reading), never more than a stated size.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from dicelab.errors import UserError

#: The longest file name the file systems dicelab runs on allow (bytes).
MAX_NAME_BYTES = 255

Writer = Callable[[BinaryIO], None]


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _stat(path: Path, option: str) -> os.stat_result | None:
    """``os.stat`` (through symbolic links); None if nothing is there (a dangling link
    included)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP, ENOTDIR, EACCES, ENAMETOOLONG
        raise UserError(f"{option} {path}: {_why(exc)}") from None


def check_not_dangling(path: Path, option: str) -> None:
    """Refuse ``path`` if it is a symbolic link to nothing (an output through it would
    create the link's target silently, wherever it points)."""
    if os.path.islink(path) and not os.path.exists(path):
        raise UserError(f"{option} {path}: is a symbolic link to {os.readlink(path)}, which "
                        "does not exist; dicelab writes through a link only to an existing "
                        "file")


def _std_fd(st: os.stat_result | None) -> int | None:
    """1 or 2 if ``st`` is this process's standard output or error, else None."""
    if st is None:
        return None
    for fd in (1, 2):
        try:
            other = os.fstat(fd)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return fd
    return None


def is_standard_output(path: Path | str) -> bool:
    """Whether ``path`` is this process's standard output (``/dev/stdout``, ``/dev/fd/1``,
    the file or pipe standard output goes to), where :func:`write_output` writes through
    the stream."""
    try:
        return _std_fd(os.stat(path)) == 1
    except OSError:
        return False


def _final(path: Path) -> Path:
    """The path a rename must replace: a symbolic link's target, else the path itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _probe(directory: Path, option: str, path: Path) -> None:
    """Create and remove a temporary file in ``directory``: the rename will work."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".dicelab-check.", dir=directory)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot create a file in {directory} "
                        f"({_why(exc)})") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_name(path: Path | str, option: str) -> Path:
    """``path`` as a ``Path``, refused if empty or with a name longer than a file system
    allows."""
    if str(path).strip() == "":
        raise UserError(f"{option} needs a file name")
    path = Path(path)
    for part in path.parts:
        if len(os.fsencode(part)) > MAX_NAME_BYTES:
            raise UserError(f"{option} {str(path)[:60]}...: a name in it is longer than the "
                            f"file system allows ({MAX_NAME_BYTES} bytes)")
    return path


def same_directory(a: Path | str, b: Path | str) -> bool:
    """Whether two paths, made absolute, are one directory's name as written (neither
    need exist yet, so no link or ``..`` is resolved)."""
    return Path(a).absolute() == Path(b).absolute()


def check_output(path: Path | str, option: str, *, suffix: str | None = None,
                 json_out: bool = False, creates: Path | str | None = None) -> Path:
    """Refuse, before any work, a path that :func:`write_output` could not write: a
    directory, a block device or a socket, a file or device that is not writable, a
    missing directory, a directory where no file can be created; with ``suffix`` (e.g.
    ``".png"``), a name that does not end in it; with ``json_out`` (a ``--json`` command,
    whose JSON is the only thing on standard output), standard output. ``creates``: a
    directory the command creates before it writes ``path`` (its ``--out``, which
    :func:`dicelab.results.check_out_dir` checks): a path directly in it is taken while
    nothing is there yet. Returns the path."""
    path = check_name(path, option)
    if suffix is not None and path.suffix.lower() != suffix:
        raise UserError(f"{option} {path}: the file name must end in {suffix}")
    if json_out and is_standard_output(path):
        raise UserError(f"{option} {path}: --json prints its JSON alone on standard output; "
                        "write to a file, or leave out --json")
    st = _stat(path, option)
    if st is None:
        check_not_dangling(path, option)
        final = _final(path)
        if (creates is not None and not os.path.lexists(final.parent)
                and same_directory(final.parent, creates)):
            return path
        if not final.parent.is_dir():
            raise UserError(f"{option} {path}: the directory {final.parent} does not exist")
        _probe(final.parent, option, path)
    elif stat.S_ISREG(st.st_mode):
        if _std_fd(st) is None:
            if not os.access(path, os.W_OK):
                raise UserError(f"{option} {path}: the file is not writable")
            _probe(_final(path).parent, option, path)
    elif stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        if not os.access(path, os.W_OK):
            raise UserError(f"{option} {path}: {_kind(st.st_mode)} that is not writable")
    else:
        raise UserError(f"{option} {path}: is {_kind(st.st_mode)}; dicelab writes regular "
                        "files, character devices and pipes")
    return path


def write_output(path: Path | str, data: bytes | Writer, option: str = "output", *,
                 in_place: bool = True) -> Path:
    """Write ``data`` (bytes, or a function that writes to a binary file) to ``path`` as
    the module docstring says. ``in_place=False`` refuses character devices and pipes too
    (a cache entry). Returns the path."""
    path = Path(path)
    st = _stat(path, option)
    fd = _std_fd(st)
    if fd is not None:
        _write_fd(fd, data, option, path)
    elif st is None or stat.S_ISREG(st.st_mode):
        if st is None:
            check_not_dangling(path, option)
        _write_renamed(path, st, data, option)
    elif in_place and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        _write_in_place(path, data, option)
    else:
        raise UserError(f"{option} {path}: is {_kind(st.st_mode)}; dicelab writes "
                        + ("regular files, character devices and pipes" if in_place
                           else "regular files here"))
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_renamed(path: Path, st: os.stat_result | None, data: bytes | Writer,
                   option: str) -> None:
    final = _final(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name[:200]}.", suffix=".tmp",
                                   dir=final.parent)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write ({_why(exc)})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data)
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, final)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write ({_why(exc)})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _bytes_of(data: bytes | Writer) -> bytes:
    if not callable(data):
        return data
    import io

    buf = io.BytesIO()
    data(buf)
    return buf.getvalue()


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _write_fd(fd: int, data: bytes | Writer, option: str, path: Path) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        _write_all(fd, _bytes_of(data))
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write ({_why(exc)})") from None


def _write_in_place(path: Path, data: bytes | Writer, option: str) -> None:
    payload = _bytes_of(data)
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write ({_why(exc)})") from None
    try:
        _write_all(fd, payload)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write ({_why(exc)})") from None
    finally:
        os.close(fd)


def read_input(path: Path | str, what: str, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them. ``what``
    names the file in the messages (``"rules file 'x.toml'"``, a path): one that is missing, a
    directory, not a regular file (``/dev/zero``, a FIFO: refused before any byte is read),
    unreadable or longer than ``limit`` is a ``UserError``."""
    path = Path(path)
    try:
        # non-blocking: opening a FIFO must not wait for a writer (it is refused below)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise UserError(f"{what}: not found") from None
    except IsADirectoryError:
        raise UserError(f"{what}: is a directory") from None
    except OSError as exc:
        raise UserError(f"{what}: cannot read ({_why(exc)})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UserError(f"{what}: is a directory")
        if not stat.S_ISREG(mode):
            raise UserError(f"{what}: is {_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise UserError(f"{what}: cannot read ({_why(exc)})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UserError(f"{what}: longer than {limit:,} bytes")
    return data


def parse_toml(text: str, source: str) -> dict:
    """A TOML document as a dict; malformed or too deeply nested text is a ``UserError``
    naming ``source``."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: malformed TOML ({exc})") from None
    except RecursionError:
        raise UserError(f"{source}: malformed TOML (nested too deeply)") from None


__all__ = ["MAX_NAME_BYTES", "check_name", "check_not_dangling", "check_output",
           "is_standard_output", "parse_toml", "read_input", "write_output"]
