"""On-disk cache for solved tables (Penta optimal values, Farkle DP solutions).

A cache entry is one ``.npz`` file named from a human-readable key. It stores the
arrays plus a header (format version, key, SHA-256 of every array). On load the
header must match the expected key and version and every checksum must agree;
anything else (truncated file, stale format, edited file) is treated as missing
and the table is rebuilt, never trusted. Writes go to a temporary file and are
renamed into place.

The directory is ``$DICELAB_CACHE_DIR`` if set, else the platform's user cache
directory (``$XDG_CACHE_HOME/dicelab`` or ``~/.cache/dicelab`` on Linux).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np


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


def _digest(arr: np.ndarray) -> str:
    a = np.ascontiguousarray(arr)
    h = hashlib.sha256()
    h.update(str(a.dtype).encode())
    h.update(str(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()


def cache_path(key: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in key)
    return cache_dir() / f"{safe}.npz"


def load(key: str, version: int) -> dict[str, np.ndarray] | None:
    """The cached arrays for ``key`` if present and intact, else ``None``."""
    path = cache_path(key)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            header = json.loads(bytes(npz["__header__"]).decode("utf-8"))
            if header.get("key") != key or header.get("version") != version:
                return None
            arrays = {name: npz[name] for name in header["digests"]}
        for name, digest in header["digests"].items():
            if _digest(arrays[name]) != digest:
                return None
        return arrays
    except Exception:  # any damage at all means: rebuild
        return None


def store(key: str, version: int, arrays: dict[str, np.ndarray]) -> Path | None:
    """Write arrays atomically; returns the path, or None if the cache is not writable."""
    path = cache_path(key)
    header = {"key": key, "version": version,
              "digests": {name: _digest(a) for name, a in arrays.items()}}
    payload = dict(arrays)
    payload["__header__"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
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


def cached(key: str, version: int, build: Callable[[], dict[str, np.ndarray]]
           ) -> tuple[dict[str, np.ndarray], bool]:
    """Load ``key`` from the cache or build and store it; returns (arrays, was_cached)."""
    arrays = load(key, version)
    if arrays is not None:
        return arrays, True
    arrays = build()
    store(key, version, arrays)
    return arrays, False
