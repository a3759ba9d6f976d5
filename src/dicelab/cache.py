"""On-disk cache for solved tables (Penta values and decisions, Farkle DP solutions).

A cache entry is one ``.npz`` file named from a human-readable key. It stores the
arrays plus a header (format version, key, SHA-256 of every array). On load the
header must match the expected key and version and every checksum must agree;
anything else (truncated file, stale format, edited file) is treated as missing
and the table is rebuilt, never trusted. Writes go to a temporary file
(``.<key>.XXXXXXXX.tmp``) and are renamed into place.

Arrays are read straight from their zip member into their final buffer -- optionally
one the caller owns (``load(..., out=)``) -- and hashed chunk by chunk while still in
the CPU cache, so a 270 MB table costs one read and one SHA-256 pass, not the several
copies of ``np.load``.

The directory is ``$DICELAB_CACHE_DIR`` if set, else the platform's user cache
directory (``$XDG_CACHE_HOME/dicelab`` or ``~/.cache/dicelab`` on Linux).
:func:`scan` lists what is there and :func:`clear` deletes dicelab's files (only those),
as ``dicelab cache list`` / ``dicelab cache clear`` do.

Size control. Every successful :func:`load` records the entry's last use as the file's
access time, set explicitly (``os.utime``), so it works on ``noatime`` mounts too. Reads
that are not uses -- :func:`scan` opening each entry to read its header -- open the file
with ``O_NOATIME`` (Linux, when we own the file) or else put the access time back, since
under the usual ``relatime`` the kernel would otherwise stamp every scanned entry as used.
:func:`prune` deletes entries least recently used first until the total fits a size
(``dicelab cache prune --max-size``). The cache has an automatic limit (:func:`size_limit`):
:data:`dicelab.config.CACHE_MAX_SIZE` (10 GB), or ``$DICELAB_CACHE_MAX_SIZE`` if set
(``none`` turns it off). After each write :func:`store` prunes the other entries so the
cache stays within it; an entry larger than the limit by itself is not kept at all (the
others are still pruned to the limit: a limit of 0 keeps no entry).

Concurrency: deleting an entry another process is reading is safe on POSIX (an open
file stays readable until closed); on Windows the delete fails and is reported. A
temporary file younger than :data:`TMP_GRACE_SECONDS` may be a write in progress and is
left alone by :func:`prune` (only :func:`clear` removes it).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import stat
import threading
import time
import zipfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import BinaryIO

import numpy as np

from dicelab import config, user_cache_dir
from dicelab.errors import UserError
from dicelab.files import write_output
from dicelab.text import human_bytes

#: A cache format version: an int, or a string when it combines several facts.
Version = int | str

_HEADER = "__header__"
#: Bytes per read while loading: small enough to hash while the chunk is in the CPU cache.
_CHUNK = 1 << 20
#: Names of the temporary files :func:`store` writes (:func:`dicelab.files.write_output`).
_TMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
#: Temporary files younger than this (seconds) may be writes in progress: prune keeps them.
TMP_GRACE_SECONDS = 3600.0
#: Notices (the automatic prune's deletions) go to this logger; the CLI prints them on
#: stderr, a library user sees them through :mod:`logging`.
log = logging.getLogger(__name__)

#: Environment variable with the automatic size limit (see :func:`size_limit`).
MAX_SIZE_ENV = "DICELAB_CACHE_MAX_SIZE"
#: The value of :data:`MAX_SIZE_ENV` that turns the automatic limit off (in any case).
NO_LIMIT = "none"
#: Where the limit in force comes from (:func:`size_limit`): dicelab's default.
DEFAULT_SOURCE = "default"
#: 0 where the platform has no O_NOATIME (anything but Linux).
_O_NOATIME = getattr(os, "O_NOATIME", 0)


def cache_dir() -> Path:
    wait_stores()  # whoever looks at the cache sees this process's entries written
    env = os.environ.get("DICELAB_CACHE_DIR")
    if env:
        return Path(env)
    return Path(user_cache_dir())


_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$", re.IGNORECASE | re.ASCII)
_SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


#: The largest size :func:`parse_size` accepts (bytes): 2**63 - 1, 9.2 EB.
MAX_SIZE_BYTES = 2**63 - 1


def parse_size(text: str, what: str = "SIZE", also: str = "") -> int:
    """Bytes in a size: plain bytes or a number with a unit, decimal (kB, MB, GB, TB)
    or binary (KiB, MiB, GiB, TiB); case and a space before the unit do not matter.
    A fraction of a byte is dropped. ``what`` names the input in the error message,
    ``also`` ends the message of what is not a size (another value the input takes).

    >>> parse_size("2GB"), parse_size("1.5GiB"), parse_size("500 MB"), parse_size("1024")
    (2000000000, 1610612736, 500000000, 1024)
    """
    m = _SIZE.match(text)
    unit = _SIZE_UNITS.get(m.group(2).lower()) if m else None
    if unit is None:
        # a bare G or M is refused rather than guessed (1000**3 or 1024**3?)
        raise UserError(f"{what}: {text!r} is not a size; give bytes (5000000) or a number "
                        "with a unit: kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB "
                        f"(powers of 1024), e.g. 2GB or 1.5GiB{also}")
    n = int(Decimal(m.group(1)) * unit)
    if n > MAX_SIZE_BYTES:
        raise UserError(f"{what}: {text[:40]!r} is larger than the largest size taken "
                        f"({MAX_SIZE_BYTES:,} bytes)")
    return n


def size_limit() -> tuple[int | None, str]:
    """(the automatic cache limit in bytes, where it comes from): ``$DICELAB_CACHE_MAX_SIZE``
    if set and not empty (same syntax as :func:`parse_size`; ``none``, in any case, is no
    limit: ``None``), else :data:`dicelab.config.CACHE_MAX_SIZE` (:data:`DEFAULT_SOURCE`).
    ``UserError`` naming the variable if malformed.

    >>> size_limit()  # doctest: +SKIP
    (10000000000, 'default')
    """
    raw = os.environ.get(MAX_SIZE_ENV, "").strip()
    if not raw:
        return parse_size(config.CACHE_MAX_SIZE, "dicelab.config.CACHE_MAX_SIZE"), \
            DEFAULT_SOURCE
    if raw.lower() == NO_LIMIT:
        return None, f"${MAX_SIZE_ENV}"
    return (parse_size(raw, f"${MAX_SIZE_ENV}", f", or {NO_LIMIT} for no limit"),
            f"${MAX_SIZE_ENV}")


def max_size() -> int | None:
    """The automatic cache limit in bytes, ``None`` if there is none (:func:`size_limit`)."""
    return size_limit()[0]


def limit_words(limit: int | None, source: str) -> str:
    """The limit in force, in words, for messages: its size (or none) and where it comes
    from, and how to change the default.

    >>> limit_words(10**10, DEFAULT_SOURCE)
    '10.0 GB (the default; $DICELAB_CACHE_MAX_SIZE sets another, none for no limit)'
    >>> limit_words(None, "$DICELAB_CACHE_MAX_SIZE")
    'none ($DICELAB_CACHE_MAX_SIZE)'
    """
    size = "none" if limit is None else human_bytes(limit)
    if source == DEFAULT_SOURCE:
        return f"{size} (the default; ${MAX_SIZE_ENV} sets another, {NO_LIMIT} for no limit)"
    return f"{size} ({source})"


def _open_unstamped(path: Path) -> tuple[BinaryIO, bool]:
    """``path`` opened for reading, without the kernel's access-time update where the
    platform allows it; returns (file, whether the access time is surely untouched)."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    if _O_NOATIME:
        try:
            return os.fdopen(os.open(path, flags | _O_NOATIME), "rb"), True
        except PermissionError:  # O_NOATIME is only allowed on one's own files
            pass
    return os.fdopen(os.open(path, flags), "rb"), False


def _set_times(fh: BinaryIO, path: Path, atime_ns: int, mtime_ns: int) -> None:
    """Set an open file's times (through its descriptor where possible, so a file that
    replaced ``path`` meanwhile is not touched); failure (not our file) is ignored."""
    with contextlib.suppress(OSError):
        os.utime(fh.fileno() if os.utime in os.supports_fd else path,
                 ns=(atime_ns, mtime_ns))


def _last_used(st: os.stat_result) -> float:
    # atime is set on each load; mtime covers a write after the last load (and a file
    # whose atime could not be set)
    return max(st.st_atime, st.st_mtime)


def _hasher(dtype: np.dtype, shape: tuple[int, ...], h=None):
    """A SHA-256 (``h``, or a new one) fed an array's dtype and shape, for its bytes next."""
    h = hashlib.sha256() if h is None else h
    h.update(str(dtype).encode())
    # as np.ascontiguousarray sees it (a 0-d array has shape (1,)): the files on disk say so
    h.update(str(tuple(shape) or (1,)).encode())
    return h


def _bytes_of(a: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, without copying them."""
    return memoryview(a.reshape(-1).view(np.uint8))


def digest(*arrays: np.ndarray) -> str:
    """SHA-256 (hex) of arrays' dtypes, shapes and bytes, in order: what entries are
    checked with (one array), and what names a table by its content (several).

    >>> digest(np.zeros(2)) == digest(np.zeros((1, 2)))
    False
    """
    h = hashlib.sha256()
    for arr in arrays:
        a = np.ascontiguousarray(arr)
        _hasher(a.dtype, a.shape, h).update(_bytes_of(a))
    return h.hexdigest()


def entry_key(kind: str, name: str, content_digest: str, **parts) -> str:
    """The one way to name a cache entry: ``<kind>-<name>-<digest>[-<k><v>...]``.

    ``name`` (a rule set's name) is only there to make the file recognisable; the entry is
    identified by ``content_digest``, a digest of the rules' content (so two rule sets
    with one name never share an entry); ``parts`` are the other inputs (target, ...).

    >>> entry_key("farkle-fastest", "my rules!", "0123abcd", t=10000)
    'farkle-fastest-my_rules_-0123abcd-t10000'
    """
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:40]
    return "-".join([kind, safe, content_digest, *(f"{k}{v}" for k, v in parts.items())])


def cache_path(key: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in key)
    return cache_dir() / f"{safe}.npz"


def _read_header(zf: zipfile.ZipFile) -> dict:
    raw = np.lib.format.read_array(io.BytesIO(zf.read(f"{_HEADER}.npy")), allow_pickle=False)
    header = json.loads(bytes(raw).decode("utf-8"))
    if not isinstance(header, dict) or not isinstance(header.get("digests"), dict):
        raise ValueError("not a dicelab cache header")
    return header


class _NotPlain(Exception):
    """A member the fast path does not read (Fortran order, objects, other npy format)."""


_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}


def _read_member(zf: zipfile.ZipFile, name: str, out: np.ndarray | None
                 ) -> tuple[np.ndarray, str]:
    """Array of one ``.npy`` member and its digest, read into ``out`` if given."""
    with zf.open(name) as member:  # zipfile also checks the member's CRC-32
        read_header = _HEADER_READERS.get(np.lib.format.read_magic(member))
        if read_header is None:
            raise _NotPlain
        shape, fortran, dtype = read_header(member)
        if fortran or dtype.hasobject:
            raise _NotPlain
        if out is None:
            arr = np.empty(shape, dtype)
        elif out.shape == tuple(shape) and out.dtype == dtype and out.flags.c_contiguous:
            arr = out
        else:
            raise ValueError("array does not fit the buffer given")
        h = _hasher(dtype, shape)
        buf = _bytes_of(arr)
        done = 0
        while done < buf.nbytes:
            n = member.readinto(buf[done:done + _CHUNK])
            if not n:
                raise ValueError("file ends inside an array")
            h.update(buf[done:done + n])
            done += n
        if member.read(1):
            raise ValueError("member longer than its array")
    return arr, h.hexdigest()


def load(key: str, version: Version, out: dict[str, np.ndarray] | None = None,
         mapped: Collection[str] = ()) -> dict[str, np.ndarray] | None:
    """The cached arrays for ``key`` if present and intact, else ``None``.

    ``out`` maps array names to C-contiguous buffers to read those arrays into (their
    shape and dtype must be the stored ones, else the entry counts as missing); the
    returned dict then holds those very buffers. If ``None`` is returned, the buffers
    may have been partly overwritten. The arrays named in ``mapped`` are memory-mapped
    from the file instead (read-only :class:`numpy.memmap`, their pages read when
    touched; their checksum is verified through the mapping, which leaves them in the
    page cache). A successful load records the entry's last use (its access time),
    which :func:`prune` goes by.
    """
    path = cache_path(key)
    if not path.is_file():
        return None
    try:
        fh, _ = _open_unstamped(path)
    except OSError:
        return None
    with fh:
        arrays = _read_entry(fh, path, key, version, out, mapped)
        if arrays is not None:
            _set_times(fh, path, time.time_ns(), os.fstat(fh.fileno()).st_mtime_ns)
    return arrays


def load_mapped(key: str, version: Version, mapped: Collection[str]
                ) -> dict[str, np.ndarray] | None:
    """:func:`load` with the arrays named in ``mapped`` memory-mapped; ``None`` also if a
    mapped member cannot be mapped (stored compressed, Fortran order)."""
    return load(key, version, mapped=mapped)


def _mapped_digest(arr: np.ndarray) -> str:
    """:func:`digest` of an array read through its mapping a chunk at a time."""
    h = _hasher(arr.dtype, arr.shape)
    flat = arr.reshape(-1)
    step = max(1, _CHUNK // max(1, arr.dtype.itemsize))
    for i in range(0, flat.size, step):
        h.update(_bytes_of(np.ascontiguousarray(flat[i:i + step])))
    return h.hexdigest()


def _map_member(zf: zipfile.ZipFile, fh: BinaryIO, path: Path, name: str) -> np.ndarray:
    """A stored (uncompressed) ``.npy`` member of an open ``.npz``, memory-mapped."""
    info = zf.getinfo(name)
    if info.compress_type != zipfile.ZIP_STORED:
        raise _NotPlain
    fh.seek(info.header_offset)
    local = fh.read(30)
    if local[:4] != b"PK\x03\x04":
        raise ValueError("not a zip member")
    start = (info.header_offset + 30 + int.from_bytes(local[26:28], "little")
             + int.from_bytes(local[28:30], "little"))
    fh.seek(start)
    read_header = _HEADER_READERS.get(np.lib.format.read_magic(fh))
    if read_header is None:
        raise _NotPlain
    shape, fortran, dtype = read_header(fh)
    if fortran or dtype.hasobject:
        raise _NotPlain
    offset = fh.tell()
    if offset - start + int(np.prod(shape)) * dtype.itemsize != info.file_size:
        raise ValueError("member size does not match its array")
    if int(np.prod(shape)) == 0:
        return np.zeros(shape, dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=tuple(shape))


def _read_entry(fh: BinaryIO, path: Path, key: str, version: Version,
                out: dict[str, np.ndarray] | None, mapped: Collection[str] = ()
                ) -> dict[str, np.ndarray] | None:
    try:
        with zipfile.ZipFile(fh) as zf:
            header = _read_header(zf)
            if header.get("key") != key or header.get("version") != version:
                return None
            arrays = {}
            for name, want in header["digests"].items():
                target = (out or {}).get(name)
                if name in mapped:
                    arr = _map_member(zf, fh, path, f"{name}.npy")
                    if _mapped_digest(arr) != want:
                        return None
                    arrays[name] = arr
                    continue
                try:
                    arr, got = _read_member(zf, f"{name}.npy", target)
                except _NotPlain:  # numpy's general reader, then a copy into the target
                    with zf.open(f"{name}.npy") as member:
                        arr = np.lib.format.read_array(member, allow_pickle=False)
                    if target is not None:
                        if target.shape != arr.shape or target.dtype != arr.dtype:
                            return None
                        target[...] = arr
                        arr = target
                    got = digest(arr)
                if got != want:
                    return None
                arrays[name] = arr
        return arrays
    except Exception:  # any damage at all means: rebuild
        return None


def store(key: str, version: Version, arrays: dict[str, np.ndarray],
          path: Path | None = None, about: dict[str, str] | None = None) -> Path | None:
    """Write arrays atomically; returns the path, or None if the cache is not writable
    or the entry is larger than the cache's limit. ``path``: where (default
    :func:`cache_path` of ``key``). ``about``: what ``dicelab cache list`` shows of the
    entry beside its key (:attr:`CacheFile.about`; Farkle's ending rule), kept in its
    header.

    Other entries are then pruned, least recently used first, until the cache fits its
    automatic limit (:func:`size_limit`); a malformed ``$DICELAB_CACHE_MAX_SIZE`` raises
    ``UserError`` before anything is written. An entry larger than the limit by itself is
    not kept: a notice says so, and the table is computed again when next needed; the
    others are then pruned to the limit as after any store (none to make room for it).
    A limit of 0 thus keeps nothing: each store removes every older entry. Both notices
    go to the ``dicelab.cache`` logger.
    """
    limit, source = size_limit()
    path = path or cache_path(key)
    # an .npz holds its arrays uncompressed: their bytes are a floor of the file's size
    n_bytes = sum(np.asarray(a).nbytes for a in arrays.values())
    if limit is not None and n_bytes > limit:
        _drop_regular(path)  # an older entry of the key (another version) goes too
        _too_big(key, n_bytes, limit, source)
        _fit(path.parent, limit, source)
        return None
    header = {"key": key, "version": version,
              "digests": {name: digest(a) for name, a in arrays.items()},
              **({"about": dict(about)} if about else {})}
    payload = dict(arrays)
    payload[_HEADER] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_output(path, lambda fh: np.savez(fh, **payload), "cache entry", in_place=False)
    except (OSError, UserError) as exc:
        _warn_unusable(path.parent, exc)
        return None  # a cache that cannot be written only costs speed
    if limit is not None:
        with contextlib.suppress(OSError):
            written = path.stat().st_size
            if written > limit:  # the arrays fit, but not with the file's headers
                _drop_regular(path)
                _too_big(key, written, limit, source)
                _fit(path.parent, limit, source)
                return None
        _fit(path.parent, limit, source, keep=(key,))
    return path


def _fit(directory: Path, limit: int, source: str, keep: Collection[str] = ()) -> None:
    """Prune the entries of ``directory`` but ``keep``, least recently used first, until
    the cache fits ``limit``, saying what went; a cache that cannot shrink only costs
    disk."""
    with contextlib.suppress(OSError, UserError):
        total = _files_bytes(directory)
        if total is not None and total <= limit:
            return  # it fits: no need to open every entry (a scan's cost)
        done = prune(limit, directory, keep=keep)
        if done.deleted:
            log.info("cache: removed %d least recently used file(s), %s, to keep %s "
                     "within its limit of %s", len(done.deleted),
                     human_bytes(done.freed), done.directory, limit_words(limit, source))


def _files_bytes(directory: Path) -> int | None:
    """Bytes of the regular files in ``directory``, at least what :func:`prune` counts,
    found without opening any; ``None`` if they cannot be listed."""
    try:
        with os.scandir(directory) as it:
            return sum(e.stat().st_size for e in it if e.is_file())
    except OSError:  # unreadable, or a file vanished meanwhile
        return None


def _drop_regular(path: Path) -> None:
    """Delete ``path`` if it is a regular file (never a symlink or a device)."""
    with contextlib.suppress(OSError):
        if stat.S_ISREG(path.lstat().st_mode):
            path.unlink()


def _too_big(key: str, n_bytes: int, limit: int, source: str) -> None:
    log.info("cache: %s (%s) is by itself larger than the cache's limit of %s; not kept "
             "(it is computed again when next needed)", key, human_bytes(n_bytes),
             limit_words(limit, source))


_WARNED: set[str] = set()


#: Stores still being written on their own threads (:func:`store_in_background`).
_PENDING: list[threading.Thread] = []


def store_in_background(key: str, version: Version, arrays: dict[str, np.ndarray]) -> None:
    """:func:`store` on a thread of its own, for a large table its caller goes on reading
    (never changing): the command's work overlaps the write (a first ``simulate -s
    optimal`` writes a 270 MB decision block while it plays; docs/design/first-run.md). The
    thread is not a daemon, so the interpreter waits for it before it exits, and the entry
    is written whole or not at all (:func:`store`); every reader of the cache in this
    process waits for it first (:func:`wait_stores`)."""
    max_size()  # a malformed limit fails here, not on the thread
    thread = threading.Thread(target=store, args=(key, version, arrays, cache_path(key)),
                              name=f"dicelab cache store {key}")
    _PENDING.append(thread)
    thread.start()


def wait_stores() -> None:
    """Wait until every :func:`store_in_background` of this process is written (a store's
    own thread does not wait)."""
    me = threading.current_thread()
    if me in _PENDING:
        return
    for thread in list(_PENDING):
        thread.join()
        with contextlib.suppress(ValueError):
            _PENDING.remove(thread)


def _warn_unusable(directory: Path, exc: OSError | UserError) -> None:
    """Say once per process and directory that the cache cannot be written."""
    if str(directory) not in _WARNED:
        _WARNED.add(str(directory))
        log.warning("cache: %s cannot be written (%s); solved tables are not kept (set "
                    "$DICELAB_CACHE_DIR to a writable directory)", directory,
                    getattr(exc, "strerror", None) or exc)


def cached(key: str, version: Version, build: Callable[[], dict[str, np.ndarray]],
           about: dict[str, str] | None = None) -> tuple[dict[str, np.ndarray], bool]:
    """Load ``key`` from the cache or build and store it (with ``about``: :func:`store`);
    returns (arrays, was_cached).

    An entry that is there but damaged or of another version is rebuilt, and a notice
    says so (the ``dicelab.cache`` logger; the CLI prints it on stderr)."""
    max_size()  # a malformed limit fails now, not after a long build
    existed = cache_path(key).is_file()
    arrays = load(key, version)
    if arrays is not None:
        return arrays, True
    arrays = build()
    store(key, version, arrays, about=about)
    if existed:
        log.info("cache: %s was damaged or out of date; rebuilt", key)
    return arrays, False


# --- what is in the cache -----------------------------------------------------------------


@dataclass(frozen=True)
class CacheFile:
    """One file of the cache directory: ``key`` (its entry's key; ``None`` for a
    temporary file), ``size`` in bytes, ``modified`` and ``last_used`` (POSIX seconds;
    the last successful load or write, whichever is later; ``None`` = unknown), and
    ``about``, what its writer said of it (:func:`store`; empty if nothing)."""

    path: Path
    key: str | None
    size: int
    modified: float
    last_used: float | None = None
    about: dict[str, str] = field(default_factory=dict)

    @property
    def modified_iso(self) -> str:
        """Modification time, ISO 8601 in UTC (to the second)."""
        return _iso(self.modified)

    @property
    def last_used_iso(self) -> str | None:
        """Last use, ISO 8601 in UTC (to the second)."""
        return None if self.last_used is None else _iso(self.last_used)

    def to_dict(self) -> dict:
        return {"key": self.key, "file": self.path.name, "bytes": self.size,
                "modified": self.modified_iso, "last_used": self.last_used_iso}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class CacheScan:
    """The cache directory's contents: ``entries`` (intact-looking dicelab entries, by key),
    ``temporary`` (left by interrupted writes), ``other`` (anything else; never deleted --
    including an ``.npz`` whose header cannot be read)."""

    directory: Path
    entries: list[CacheFile] = field(default_factory=list)
    temporary: list[CacheFile] = field(default_factory=list)
    other: list[Path] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.entries + self.temporary)

    def to_dict(self) -> dict:
        return {"directory": str(self.directory),
                "entries": [f.to_dict() for f in self.entries],
                "temporary": [f.to_dict() for f in self.temporary],
                "other": [p.name for p in self.other],
                "total_bytes": self.total_bytes}


def _entry_key(fh: BinaryIO, path: Path) -> tuple[str | None, dict[str, str]]:
    """The key of a cache file this module wrote (its header names this very file) and
    its header's ``about`` (:func:`store`; only its text fields); ``(None, {})`` else."""
    try:
        with zipfile.ZipFile(fh) as zf:
            header = _read_header(zf)
    except Exception:
        return None, {}
    key, about = header.get("key"), header.get("about")
    if not isinstance(key, str) or cache_path(key).name != path.name:
        return None, {}
    about = {k: v for k, v in about.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(about, dict) else {}
    return key, about


def _scan_npz(path: Path) -> tuple[str | None, dict[str, str], os.stat_result]:
    """(key or None, its ``about``, times and size before reading) of an ``.npz``;
    reading the header is not a use, so the access time is left as it was."""
    fh, unstamped = _open_unstamped(path)
    with fh:
        before = os.fstat(fh.fileno())
        key, about = _entry_key(fh, path)
        if not unstamped and os.fstat(fh.fileno()).st_atime_ns != before.st_atime_ns:
            _set_times(fh, path, before.st_atime_ns, before.st_mtime_ns)
    return key, about, before


def scan(directory: Path | None = None) -> CacheScan:
    """What is in the cache directory (default :func:`cache_dir`); empty if it does not
    exist, ``UserError`` if it is not a readable directory.

    >>> [e.key for e in scan().entries]  # doctest: +SKIP
    ['penta-decisions-seed-optimal', 'penta-values-seed']
    """
    d = cache_dir() if directory is None else directory
    result = CacheScan(d)
    if not d.exists():
        return result
    try:
        paths = sorted(d.iterdir())
    except OSError as exc:
        raise UserError(f"cannot read the cache directory {d}: {exc.strerror or exc} "
                        "(it is $DICELAB_CACHE_DIR if set)") from None
    for path in paths:
        try:
            st = path.stat()
            key, about = None, {}
            if path.is_file() and path.suffix == ".npz":
                key, about, st = _scan_npz(path)
        except OSError:  # vanished meanwhile, or unreadable: not ours to judge
            if path.exists():
                result.other.append(path)
            continue
        if not path.is_file():
            result.other.append(path)
        elif key is not None:
            result.entries.append(
                CacheFile(path, key, st.st_size, st.st_mtime, _last_used(st), about))
        elif _TMP_NAME.match(path.name):
            result.temporary.append(
                CacheFile(path, None, st.st_size, st.st_mtime, _last_used(st)))
        else:
            result.other.append(path)
    result.entries.sort(key=lambda f: f.key or "")
    return result


def clear(directory: Path | None = None
          ) -> tuple[list[CacheFile], int, list[tuple[Path, str]]]:
    """Delete dicelab's entries and temporary files in the cache directory, nothing else.

    Returns (files deleted, bytes freed, [(path, reason)] of files that could not be
    deleted). A file that vanished meanwhile is neither. Deleting an entry another
    process is reading is safe (it keeps its open file); one it is writing only loses
    that write (the writer carries on without caching).
    """
    deleted, freed, failed = [], 0, []
    found = scan(directory)
    for f in found.entries + found.temporary:
        try:
            f.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            failed.append((f.path, exc.strerror or str(exc)))
            continue
        deleted.append(f)
        freed += f.size
    return deleted, freed, failed


@dataclass(frozen=True)
class PruneResult:
    """What :func:`prune` did (or, with ``dry_run``, would do): ``deleted`` files in the
    order deleted (stale temporary files, then entries least recently used first),
    ``failed`` [(path, reason)], totals in bytes before and after, the limit."""

    directory: Path
    max_bytes: int
    dry_run: bool
    deleted: list[CacheFile]
    failed: list[tuple[Path, str]]
    total_before: int
    total_after: int

    @property
    def freed(self) -> int:
        return sum(f.size for f in self.deleted)

    def to_dict(self) -> dict:
        return {"directory": str(self.directory), "max_bytes": self.max_bytes,
                "dry_run": self.dry_run, "deleted": [f.to_dict() for f in self.deleted],
                "failed": [{"file": p.name, "reason": why} for p, why in self.failed],
                "freed_bytes": self.freed, "total_bytes_before": self.total_before,
                "total_bytes": self.total_after}


def prune(max_bytes: int, directory: Path | None = None, *, dry_run: bool = False,
          keep: Collection[str] = (), now: float | None = None) -> PruneResult:
    """Delete dicelab's entries, least recently used first, until the cache directory
    (default :func:`cache_dir`) holds at most ``max_bytes``; nothing else is touched.

    Temporary files older than :data:`TMP_GRACE_SECONDS` (before ``now``, POSIX seconds;
    default: the clock) are always deleted, younger ones never (writes in progress --
    they still count towards the total, which may therefore stay above the limit).
    Entries whose key is in ``keep`` stay. An entry rewritten since the scan is kept (it
    is the newest now); one that vanished meanwhile is neither deleted nor failed. An
    entry another process is reading can be deleted: on POSIX its open file stays
    readable. ``dry_run`` deletes nothing and reports what would go.

    >>> prune(2 * 10**9, dry_run=True).total_after <= 2 * 10**9  # doctest: +SKIP
    True
    """
    if max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    found = scan(directory)
    now = time.time() if now is None else now
    stale = [f for f in found.temporary if f.modified < now - TMP_GRACE_SECONDS]
    by_age = sorted((e for e in found.entries if e.key not in keep),
                    key=lambda e: (e.last_used, e.key))
    total = found.total_bytes
    deleted, failed = [], []
    for f in stale + by_age:
        if f.key is not None and total <= max_bytes:
            break
        if dry_run:
            deleted.append(f)
            total -= f.size
            continue
        try:
            st = f.path.stat()
            if (st.st_size, st.st_mtime) != (f.size, f.modified):  # rewritten: newest now
                total += st.st_size - f.size
                continue
            f.path.unlink()
        except FileNotFoundError:  # another process freed it
            total -= f.size
            continue
        except OSError as exc:
            failed.append((f.path, exc.strerror or str(exc)))
            continue
        deleted.append(f)
        total -= f.size
    return PruneResult(found.directory, max_bytes, dry_run, deleted, failed,
                       found.total_bytes, total)
