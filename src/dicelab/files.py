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
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISLNK, "a symbolic link")):
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
                 json_out: bool = False, creates: Path | str | None = None,
                 directory: bool = False, files: tuple[str, ...] = (),
                 parents: bool | None = None) -> Path:
    """The one check of every output path, before any work: refuse a path that
    :func:`write_output` could not write, or a directory (``directory``) that could not be
    made or written. Returns the path.

    **Where new outputs may go** (the same rule for ``--out``, ``--plot``, ``--log``):
    the directory a new file or a new ``--out`` directory goes in must exist and be a
    directory. dicelab makes one directory: the ``--out`` directory itself, never a
    missing directory above it or above any file, so a mistyped path is one error
    instead of a tree made somewhere unexpected (create the parents first:
    ``mkdir -p``). ``parents``, for a directory only (default: when ``option`` is not an
    option's name but a description, for a directory dicelab chose itself such as "the
    results directory" ``results/<experiment>/...``): its missing parents are made too.

    A file (``directory`` false) is refused when it is a directory, a block device or a
    socket, a file or device that is not writable, in a directory where no file can be
    created; with ``suffix`` (e.g. ``".png"``), when its name does not end in it; with
    ``json_out`` (a ``--json`` command, whose JSON is the only thing on standard output),
    when it is standard output. ``creates``: the ``--out`` directory the command makes
    before it writes ``path``: a path directly in it is taken while that directory is not
    there yet (its own check is the ``--out``'s).

    A directory (``directory`` true) is refused when it exists and is not one (through a
    symbolic link: a link to a directory is written through), is not writable, or one of
    ``files``, the files the run writes in it, is refused as above; when it does not
    exist, when it cannot be made (the check makes it and removes it again).

    Nothing is ever replaced: a symbolic link or a device at ``path`` stays what it is; a
    symbolic link to nothing is refused (writing through it would make its target)."""
    path = check_name(path, option)
    if parents is None:
        parents = not option.startswith("-")
    if suffix is not None and path.suffix.lower() != suffix:
        raise UserError(f"{option} {path}: the file name must end in {suffix}")
    if json_out and is_standard_output(path):
        raise UserError(f"{option} {path}: --json prints its JSON alone on standard output; "
                        "write to a file, or leave out --json")
    if directory:
        return _check_directory(path, option, files, parents)
    st = _stat_new(path, option)
    if st is None:
        check_not_dangling(path, option)
        if (creates is not None and not os.path.lexists(path.parent)
                and same_directory(path.parent, creates)):
            return path
        _probe(_parent_of_new(path, option, parents=False), option, path)
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


def _stat_new(path: Path, option: str) -> os.stat_result | None:
    """:func:`_stat`, with a path below a file (``ENOTDIR``) taken as not there yet: its
    directory is then refused by :func:`_parent_of_new`, which names the file."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # ELOOP, EACCES, ENAMETOOLONG
        raise UserError(f"{option} {path}: {_why(exc)}") from None


def _parent_of_new(path: Path, option: str, *, parents: bool) -> Path:
    """The directory a new ``path`` goes in, refused unless it exists and is a directory
    (``parents``: the nearest directory above ``path`` that exists, the missing ones below
    it to be made). Returns that directory."""
    parent = path.parent
    nearest = parent
    while not os.path.lexists(nearest) and nearest != nearest.parent:
        nearest = nearest.parent
    st = _stat_new(nearest, option)
    if st is None:  # a symbolic link to nothing
        raise UserError(f"{option} {path}: {nearest} is a symbolic link to "
                        f"{os.readlink(nearest)}, which does not exist")
    if not stat.S_ISDIR(st.st_mode):
        raise UserError(f"{option} {path}: {nearest} is not a directory (it is "
                        f"{_kind(st.st_mode)})")
    if nearest != parent and not parents:
        raise UserError(f"{option} {path}: the directory {parent} does not exist; dicelab "
                        "makes no missing directory above an output (create it first)")
    return nearest


def _check_directory(out: Path, option: str, files: tuple[str, ...], parents: bool) -> Path:
    """:func:`check_output` of a directory (``directory=True``)."""
    check_not_dangling(out, option)
    st = _stat_new(out, option)
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise UserError(f"{option} {out}: exists and is not a directory (it is "
                            f"{_kind(st.st_mode)})")
        if not os.access(out, os.W_OK | os.X_OK):
            raise UserError(f"{option} {out}: directory is not writable")
        for name in files or (".dicelab-check",):
            check_output(out / name, option)
        return out
    nearest = _parent_of_new(out, option, parents=parents)
    # make the missing directories once to see that it can be done, then remove them
    try:
        out.mkdir(parents=True)
    except OSError as exc:
        raise UserError(f"{option} {out}: cannot create directory ({_why(exc)})") from None
    made = out
    while made != nearest and made != made.parent:
        with contextlib.suppress(OSError):
            made.rmdir()
        made = made.parent
    return out


def make_output_dir(out: Path | str, option: str = "--out") -> Path:
    """Make the output directory ``out`` (checked by :func:`check_output` before the run,
    ``directory=True``) and any parent a check allowed to be made; an existing one is
    kept (a symbolic link to a directory included)."""
    out = check_name(out, option)
    check_not_dangling(out, option)
    st = _stat_new(out, option)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise UserError(f"{option} {out}: exists and is not a directory (it is "
                        f"{_kind(st.st_mode)})")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{option} {out}: cannot create directory ({_why(exc)})") from None
    if not os.access(out, os.W_OK):
        raise UserError(f"{option} {out}: directory is not writable")
    return out


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
           "is_standard_output", "make_output_dir", "parse_toml", "read_input",
           "write_output"]
