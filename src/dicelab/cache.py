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
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from dicelab.errors import UserError

#: A cache format version: an int, or a string when it combines several facts.
Version = int | str

_HEADER = "__header__"
#: Bytes per read while loading: small enough to hash while the chunk is in the CPU cache.
_CHUNK = 1 << 20
#: Names of the temporary files :func:`store` writes (``tempfile.mkstemp``: 8 random chars).
_TMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def cache_dir() -> Path:
    env = os.environ.get("DICELAB_CACHE_DIR")
    if env:
        return Path(env)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "dicelab"
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "dicelab" / "Cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dicelab"


def _hasher(dtype: np.dtype, shape: tuple[int, ...]):
    h = hashlib.sha256()
    h.update(str(dtype).encode())
    # as np.ascontiguousarray sees it (a 0-d array has shape (1,)): the files on disk say so
    h.update(str(tuple(shape) or (1,)).encode())
    return h


def _bytes_of(a: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, without copying them."""
    return memoryview(a.reshape(-1).view(np.uint8))


def digest(arr: np.ndarray) -> str:
    """SHA-256 (hex) of an array's dtype, shape and bytes: what entries are checked with."""
    a = np.ascontiguousarray(arr)
    h = _hasher(a.dtype, a.shape)
    h.update(_bytes_of(a))
    return h.hexdigest()


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


def load(key: str, version: Version, out: dict[str, np.ndarray] | None = None
         ) -> dict[str, np.ndarray] | None:
    """The cached arrays for ``key`` if present and intact, else ``None``.

    ``out`` maps array names to C-contiguous buffers to read those arrays into (their
    shape and dtype must be the stored ones, else the entry counts as missing); the
    returned dict then holds those very buffers. If ``None`` is returned, the buffers
    may have been partly overwritten.
    """
    path = cache_path(key)
    if not path.is_file():
        return None
    try:
        with zipfile.ZipFile(path) as zf:
            header = _read_header(zf)
            if header.get("key") != key or header.get("version") != version:
                return None
            arrays = {}
            for name, want in header["digests"].items():
                target = (out or {}).get(name)
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


def store(key: str, version: Version, arrays: dict[str, np.ndarray]) -> Path | None:
    """Write arrays atomically; returns the path, or None if the cache is not writable."""
    path = cache_path(key)
    header = {"key": key, "version": version,
              "digests": {name: digest(a) for name, a in arrays.items()}}
    payload = dict(arrays)
    payload[_HEADER] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **payload)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        return None  # a read-only cache only costs speed
    return path


def cached(key: str, version: Version, build: Callable[[], dict[str, np.ndarray]]
           ) -> tuple[dict[str, np.ndarray], bool]:
    """Load ``key`` from the cache or build and store it; returns (arrays, was_cached)."""
    arrays = load(key, version)
    if arrays is not None:
        return arrays, True
    arrays = build()
    store(key, version, arrays)
    return arrays, False


# --- what is in the cache -----------------------------------------------------------------


@dataclass(frozen=True)
class CacheFile:
    """One file of the cache directory: ``key`` (its entry's key; ``None`` for a
    temporary file), ``size`` in bytes, ``modified`` (POSIX seconds)."""

    path: Path
    key: str | None
    size: int
    modified: float

    @property
    def modified_iso(self) -> str:
        """Modification time, ISO 8601 in UTC (to the second)."""
        return datetime.fromtimestamp(self.modified, tz=UTC).isoformat(
            timespec="seconds")

    def to_dict(self) -> dict:
        return {"key": self.key, "file": self.path.name, "bytes": self.size,
                "modified": self.modified_iso}


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


def _entry_key(path: Path) -> str | None:
    """The key of a cache file this module wrote (its header names this very file)."""
    try:
        with zipfile.ZipFile(path) as zf:
            key = _read_header(zf).get("key")
    except Exception:
        return None
    return key if isinstance(key, str) and cache_path(key).name == path.name else None


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
        except OSError:  # vanished meanwhile
            continue
        if not path.is_file():
            result.other.append(path)
        elif path.suffix == ".npz" and (key := _entry_key(path)) is not None:
            result.entries.append(CacheFile(path, key, st.st_size, st.st_mtime))
        elif _TMP_NAME.match(path.name):
            result.temporary.append(CacheFile(path, None, st.st_size, st.st_mtime))
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
