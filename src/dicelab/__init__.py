"""dicelab: Monte Carlo simulation and exact strategy research for Penta and Farkle.

Compiled kernels. numba's on-disk cache (``cache=True``) checks only the source file of
the function it compiled, so a kernel that inlined a function (or froze a constant) from
another module would be loaded stale after that module changed. Importing dicelab, before
any kernel module, therefore points numba's cache (``NUMBA_CACHE_DIR``) at a directory
named by a hash of the package's source -- every ``.py`` file under ``dicelab/`` -- so a
changed source compiles afresh and an earlier source finds its kernels again. The
directories live in ``$DICELAB_JIT_CACHE_DIR`` if set, else in ``numba/`` of dicelab's
user cache directory (``~/.cache/dicelab/numba`` on Linux); the :data:`_JIT_KEEP` most
recently used are kept, older ones deleted. A ``NUMBA_CACHE_DIR`` set by the user is
left alone, and with it numba's own (file by file) staleness check.
Cost per import: 1.5 ms (hashing 0.4 MB of source)."""

import hashlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dicelab")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]

#: Environment variable: the directory holding the per-source-hash kernel caches.
JIT_CACHE_ENV = "DICELAB_JIT_CACHE_DIR"
#: The ``NUMBA_CACHE_DIR`` dicelab chose, in the environment so a child process (a Dask
#: worker, a notebook kernel) tells it from a user's setting and keys it by its own source.
_JIT_CHOSEN_ENV = "DICELAB_CHOSEN_NUMBA_CACHE_DIR"
#: Source-hash directories kept (most recently used first): the current source, and a
#: couple of others for switching branches or checkouts. One holds ~10 MB of kernels.
_JIT_KEEP = 3
_HASH_CHARS = 16


def _user_cache_dir() -> str:
    """The platform's user cache directory for dicelab (the rules of
    :func:`dicelab.cache.cache_dir`, without its ``$DICELAB_CACHE_DIR``, which names the
    table cache and is often a temporary directory)."""
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "dicelab")
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "dicelab", "Cache")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(base, "dicelab")


def _jit_cache_root() -> str:
    """The directory of the per-source-hash kernel caches."""
    return os.environ.get(JIT_CACHE_ENV) or os.path.join(_user_cache_dir(), "numba")


def _source_hash(package_dir: str) -> str:
    """Hash of every ``.py`` file under ``package_dir``: relative paths and contents, in a
    fixed order."""
    h = hashlib.sha256()  # hardware-accelerated: 3x faster here than blake2b
    skip = len(package_dir) + 1
    for dirpath, dirnames, filenames in os.walk(package_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    data = f.read()
                rel = path[skip:].replace(os.sep, "/").encode()
                h.update(len(rel).to_bytes(4, "little") + rel)
                h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:_HASH_CHARS]


def _is_hash_name(name: str) -> bool:
    return len(name) == _HASH_CHARS and all(c in "0123456789abcdef" for c in name)


def _prune_jit_dirs(root: str, keep: int = _JIT_KEEP) -> None:
    """Delete the source-hash directories of ``root`` beyond the ``keep`` most recently
    used (directory mtime, set on every import). Another process still running an older
    source only loses its cached kernels: numba recreates the directory when it saves."""
    try:
        with os.scandir(root) as it:
            dirs = [e for e in it if _is_hash_name(e.name) and e.is_dir(follow_symlinks=False)]
        if len(dirs) <= keep:
            return
        dirs.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    except OSError:
        return
    import shutil

    for e in dirs[keep:]:
        shutil.rmtree(e.path, ignore_errors=True)


def _use_source_keyed_jit_cache() -> str | None:
    """Point numba's cache at this source's directory; return it (``None``: left alone)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen and chosen != os.environ.get(_JIT_CHOSEN_ENV):
        return None  # the user's choice
    root = _jit_cache_root()
    try:
        directory = os.path.join(root, _source_hash(os.path.dirname(os.path.abspath(__file__))))
        os.makedirs(directory, exist_ok=True)
        os.utime(directory)  # last use, for _prune_jit_dirs
    except OSError:  # unreadable source or unwritable cache: numba's default locations
        return None
    _prune_jit_dirs(root)
    os.environ["NUMBA_CACHE_DIR"] = os.environ[_JIT_CHOSEN_ENV] = directory
    numba = sys.modules.get("numba")
    if numba is not None:  # imported before dicelab: its config already read the environment
        numba.config.CACHE_DIR = directory
    return directory


#: The directory numba caches dicelab's compiled kernels in (``None``: numba's default,
#: or the user's ``NUMBA_CACHE_DIR``).
_JIT_CACHE_DIR = _use_source_keyed_jit_cache()
