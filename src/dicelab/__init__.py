"""dicelab: Monte Carlo simulation and exact strategy research for Penta and Farkle.

Compiled kernels. numba's on-disk cache (``cache=True``) checks only the source file of
the function it compiled, so a kernel that inlined a function (or froze a constant) from
another module would be loaded stale after that module changed. Importing dicelab, before
any kernel module, therefore arranges that numba's cache (``NUMBA_CACHE_DIR``) points,
from the moment numba is first imported (or at once, if it was imported before), at a
directory named by a hash of the *kernel sources* (:func:`kernel_sources`): every module that
imports numba at its top level (the modules that define kernels), and every dicelab
module those import, directly or through others (where the helpers and constants a
kernel compiles in come from). A changed kernel source compiles afresh and an earlier
one finds its kernels again; editing any other module (the command line, rendering,
experiments) keeps the compiled kernels. The directories live in
``$DICELAB_JIT_CACHE_DIR`` if set, else in ``numba/`` of dicelab's user cache directory
(``~/.cache/dicelab/numba`` on Linux); the :data:`_JIT_KEEP` most recently used are kept,
older ones deleted. A ``NUMBA_CACHE_DIR`` set by the user is left alone, and with it
numba's own (file by file) staleness check. What finding and hashing the kernel sources
costs per import is a row of docs/benchmarks.md (``benchmarks/bench_first_run.py``).
"""

import hashlib
import os
import re
import sys

__all__ = ["__version__", "user_cache_dir"]


def __getattr__(name: str):
    """``__version__``, read from the installed package's metadata when first asked for
    (importlib.metadata costs half of this module's import; the console script's Ctrl-C
    guard in :mod:`dicelab.cli.entry` starts only after this module ran)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("dicelab")
    except PackageNotFoundError:  # running from a source tree without installation
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found

#: Environment variable: the directory holding the per-kernel-source-hash kernel caches.
JIT_CACHE_ENV = "DICELAB_JIT_CACHE_DIR"
#: The ``NUMBA_CACHE_DIR`` dicelab chose, in the environment so a child process (a Dask
#: worker, a notebook kernel) tells it from a user's setting and keys it by its own source.
_JIT_CHOSEN_ENV = "DICELAB_CHOSEN_NUMBA_CACHE_DIR"
#: Kernel-source-hash directories kept (most recently used first): the current source, and a
#: couple of others for switching branches or checkouts. One holds ~10 MB of kernels.
_JIT_KEEP = 3
#: Seconds since its last use before a directory beyond those may go: a process still
#: running another source (another checkout's) saves its new kernels there, and numba
#: fails on a directory removed under it.
_JIT_GRACE_S = 24 * 3600
_HASH_CHARS = 16


def user_cache_dir() -> str:
    """dicelab's directory in the platform's user cache directory (``platformdirs``):
    ``$XDG_CACHE_HOME/dicelab`` or ``~/.cache/dicelab`` on Linux. The table cache lives
    there unless ``$DICELAB_CACHE_DIR`` names another (:func:`dicelab.cache.cache_dir`),
    and the compiled kernels in its ``numba/``."""
    import platformdirs

    return platformdirs.user_cache_dir("dicelab", appauthor=False)


def _jit_cache_root() -> str:
    """The directory of the per-kernel-source-hash kernel caches."""
    return os.environ.get(JIT_CACHE_ENV) or os.path.join(user_cache_dir(), "numba")


#: A module that defines kernels imports numba at its top level (its decorators run at
#: import): a line that starts so.
_NUMBA_IMPORT = re.compile(rb"\n(?:import|from)[ \t]+numba\b")
#: Imports of the package's own modules, anywhere in a file (a line of its own, after a
#: newline): ``import pkg.a.b`` (group 1), ``from pkg.a import x, y`` or
#: ``from .a import (x, y)`` (groups 2 and 3, the names across parentheses or backslash
#: continuations). ``{pkg}``: the package's name.
_IMPORT = (rb"\n[ \t]*(?:import[ \t]+({pkg}(?:\.\w+)*)"
           rb"|from[ \t]+({pkg}(?:\.\w+)*|\.+\w*(?:\.\w+)*)[ \t]+import[ \t]+"
           rb"(\([^)]*\)|(?:[^\n\\]|\\[\s\S])*))")


def _modules(package_dir: str) -> dict[str, bytes]:
    """Every ``.py`` file under ``package_dir`` by module name (``pkg.sub.mod``; a
    package's ``__init__.py`` as ``pkg.sub``), its contents."""
    pkg = os.path.basename(os.path.normpath(package_dir))
    skip = len(package_dir.rstrip(os.sep)) + 1
    out = {}
    for dirpath, dirnames, filenames in os.walk(package_dir):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                parts = [pkg, *path[skip:-3].split(os.sep)]
                if parts[-1] == "__init__":
                    parts.pop()
                with open(path, "rb") as f:
                    out[".".join(parts)] = b"\n" + f.read()  # every line after a newline
    return out


def _imported(module: str, source: bytes, modules: dict[str, bytes], packages: set[str]
              ) -> set[str]:
    """The modules of ``modules`` that ``source`` (of ``module``) imports, with their
    parent packages (which run first). ``packages``: the names that are packages."""
    pattern = _IMPORT.replace(b"{pkg}", re.escape(module.split(".")[0].encode()))
    found = set()
    for m in re.finditer(pattern, source):
        if m.group(1):
            found.add(m.group(1).decode())
            continue
        base = m.group(2).decode()
        if base.startswith("."):  # relative: from the module's own package up
            dots = len(base) - len(base.lstrip("."))
            anchor = module.split(".")
            anchor = anchor[:len(anchor) - dots + (module in packages)]
            base = ".".join(anchor + ([base[dots:]] if base[dots:] else []))
        found.add(base)
        for name in re.split(rb"[\s,()\\]+", m.group(3)):
            sub = f"{base}.{name.decode()}" if name and name != b"as" else ""
            if sub in modules:  # ``from pkg import submodule``
                found.add(sub)
    out = set()
    for name in found:
        parts = name.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out & modules.keys()


def kernel_sources(package_dir: str) -> dict[str, bytes]:
    """The modules the kernels are built from, by module name: every module under
    ``package_dir`` that imports numba at its top level, and every module of the package
    those import (at any depth, wherever the import statement is)."""
    modules = _modules(package_dir)
    packages = {m.rsplit(".", 1)[0] for m in modules if "." in m}
    todo = [m for m, src in modules.items() if b"numba" in src and _NUMBA_IMPORT.search(src)]
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(_imported(m, modules[m], modules, packages) - seen)
    return {m: modules[m] for m in sorted(seen)}


def _kernel_source_hash(package_dir: str) -> str:
    """Hash of :func:`kernel_sources`: module names and contents, in a fixed order."""
    h = hashlib.sha256()  # hardware-accelerated: 3x faster here than blake2b
    for name, data in kernel_sources(package_dir).items():
        rel = name.encode()
        h.update(len(rel).to_bytes(4, "little") + rel)
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:_HASH_CHARS]


def _is_hash_name(name: str) -> bool:
    return len(name) == _HASH_CHARS and all(c in "0123456789abcdef" for c in name)


def _prune_jit_dirs(root: str, keep: int = _JIT_KEEP, grace_s: float = _JIT_GRACE_S) -> None:
    """Delete the kernel-source-hash directories of ``root`` beyond the ``keep`` most recently
    used (directory mtime, set on every import) and unused for ``grace_s`` seconds: a
    process started within that time on another source may still save kernels in its own."""
    import time

    try:
        with os.scandir(root) as it:
            dirs = [e for e in it if _is_hash_name(e.name) and e.is_dir(follow_symlinks=False)]
        if len(dirs) <= keep:
            return
        used = {e.path: e.stat(follow_symlinks=False).st_mtime for e in dirs}
    except OSError:
        return
    import shutil

    dirs.sort(key=lambda e: used[e.path], reverse=True)
    for e in dirs[keep:]:
        if used[e.path] < time.time() - grace_s:
            shutil.rmtree(e.path, ignore_errors=True)


def _use_source_keyed_jit_cache() -> str | None:
    """Point numba's cache at the directory of these kernel sources; return it (``None``:
    left alone)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen and chosen != os.environ.get(_JIT_CHOSEN_ENV):
        return None  # the user's choice
    root = _jit_cache_root()
    try:
        directory = os.path.join(root, _kernel_source_hash(os.path.dirname(
            os.path.abspath(__file__))))
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


class _BeforeNumba:
    """A finder on ``sys.meta_path`` that finds nothing: asked for numba the first time,
    it points numba's cache at these kernel sources (:func:`_use_source_keyed_jit_cache`)
    before numba loads and reads its configuration. The hashing waits until a kernel is
    needed, so ``import dicelab`` stays light (the console script's Ctrl-C guard starts
    after it) and a command that compiles nothing never hashes."""

    done = False

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "numba" and not cls.done:
            cls.done = True  # (left on sys.meta_path: removing it mid-search skips a finder)
            global _JIT_CACHE_DIR
            _JIT_CACHE_DIR = _use_source_keyed_jit_cache()
        return None


#: The directory numba caches dicelab's compiled kernels in (``None``: numba's default,
#: or the user's ``NUMBA_CACHE_DIR``; until numba is imported, ``None`` too).
_JIT_CACHE_DIR: str | None = None
if "numba" in sys.modules:  # imported before dicelab
    _JIT_CACHE_DIR = _use_source_keyed_jit_cache()
else:
    sys.meta_path.insert(0, _BeforeNumba)
