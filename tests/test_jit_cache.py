"""numba's kernel cache is keyed by a hash of the kernel sources (dicelab/__init__.py).

numba checks only the source file of the function it compiled; a kernel that inlined a
changed function of another module would be loaded stale from its cache. The subprocess
tests import a copy of the package (its real ``__init__.py`` beside small modules: a
kernel, the helper it inlines and a module that defines no kernel) and edit them between
runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dicelab

HELPER = """\
from numba import njit


@njit
def bonus():
    return {value}
"""

KERNEL = """\
from numba import njit

from dicelab._probe_helper import bonus


@njit(cache=True)
def score():
    return 10 + bonus()
"""

#: Run in the child: the kernel's result, whether it came from numba's disk cache, and
#: where numba looked.
REPORT = textwrap.dedent("""\
    import json, numba, dicelab
    from dicelab._probe_kernel import score
    value = score()
    print(json.dumps({"value": value,
                      "cache_hits": sum(score.stats.cache_hits.values()),
                      "jit_dir": dicelab._JIT_CACHE_DIR,
                      "numba_cache_dir": numba.config.CACHE_DIR}))
""")


#: A module that defines no kernel (like the command line): it uses the kernel, and numba
#: only inside a function.
FRONT = """\
from dicelab._probe_kernel import score


def show():
    import numba

    return f"{{score()}} (numba {{numba.__version__}}){note}"
"""


@pytest.fixture
def package_copy(tmp_path):
    """A package ``dicelab`` of dicelab's ``__init__.py``, a helper, a kernel using it and
    a module using the kernel."""
    pkg = tmp_path / "src" / "dicelab"
    pkg.mkdir(parents=True)
    shutil.copy(Path(dicelab.__file__), pkg / "__init__.py")
    (pkg / "_probe_helper.py").write_text(HELPER.format(value=1))
    (pkg / "_probe_kernel.py").write_text(KERNEL)
    (pkg / "_probe_front.py").write_text(FRONT.format(note=""))
    return pkg


def _run(pkg: Path, **env_changes: str | None) -> dict:
    """REPORT in a fresh interpreter that imports the package copy first. The environment
    is this process's (where dicelab chose NUMBA_CACHE_DIR) with ``env_changes``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(pkg.parent)
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    out = subprocess.run([sys.executable, "-c", REPORT], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.slow
def test_a_changed_inlined_helper_is_recompiled_not_served_stale(package_copy, tmp_path):
    root = tmp_path / "jit"
    # a child inherits the NUMBA_CACHE_DIR dicelab chose here (unless it is the user's)
    inherited = {} if dicelab._JIT_CACHE_DIR else {"NUMBA_CACHE_DIR": None}
    first = _run(package_copy, DICELAB_JIT_CACHE_DIR=str(root), **inherited)
    # ... and chooses the directory of its own source
    assert first["jit_dir"] is not None and Path(first["jit_dir"]).parent == root
    assert first["numba_cache_dir"] == first["jit_dir"] != dicelab._JIT_CACHE_DIR
    assert (first["value"], first["cache_hits"]) == (11, 0)

    again = _run(package_copy, DICELAB_JIT_CACHE_DIR=str(root), **inherited)
    assert (again["value"], again["cache_hits"], again["jit_dir"]) == (11, 1, first["jit_dir"])

    (package_copy / "_probe_helper.py").write_text(HELPER.format(value=2))
    edited = _run(package_copy, DICELAB_JIT_CACHE_DIR=str(root), **inherited)
    assert (edited["value"], edited["cache_hits"]) == (12, 0)
    assert edited["jit_dir"] != first["jit_dir"]

    (package_copy / "_probe_helper.py").write_text(HELPER.format(value=1))
    back = _run(package_copy, DICELAB_JIT_CACHE_DIR=str(root), **inherited)
    assert (back["value"], back["cache_hits"], back["jit_dir"]) == (11, 1, first["jit_dir"])

    # a module that defines no kernel: editing it keeps the compiled kernels
    (package_copy / "_probe_front.py").write_text(FRONT.format(note=" edited"))
    front = _run(package_copy, DICELAB_JIT_CACHE_DIR=str(root), **inherited)
    assert (front["value"], front["cache_hits"], front["jit_dir"]) == (11, 1, first["jit_dir"])


@pytest.mark.slow
def test_a_numba_cache_dir_set_by_the_user_is_left_alone(package_copy, tmp_path):
    mine = tmp_path / "my-numba-cache"
    run = _run(package_copy, NUMBA_CACHE_DIR=str(mine), DICELAB_CHOSEN_NUMBA_CACHE_DIR=None,
               DICELAB_JIT_CACHE_DIR=str(tmp_path / "jit"))
    assert run["jit_dir"] is None and run["numba_cache_dir"] == str(mine)
    assert list(mine.rglob("_probe_kernel.score-*.nbi"))
    assert not (tmp_path / "jit").exists()


def test_kernels_of_this_process_are_cached_in_the_source_hash_directory(tmp_path,
                                                                         monkeypatch):
    if dicelab._JIT_CACHE_DIR is None:
        pytest.skip("NUMBA_CACHE_DIR set by the user")
    import numba

    assert numba.config.CACHE_DIR == os.environ["NUMBA_CACHE_DIR"] == dicelab._JIT_CACHE_DIR
    module = tmp_path / "jit_cache_probe_module.py"
    module.write_text("from numba import njit\n\n@njit(cache=True)\ndef f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from jit_cache_probe_module import f

    assert Path(f._cache._cache_path).parent == Path(dicelab._JIT_CACHE_DIR)


def _write(pkg: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(textwrap.dedent(text))


def test_the_kernel_sources_are_the_kernel_modules_and_what_they_import(tmp_path):
    pkg = tmp_path / "pkg"
    _write(pkg, {
        "__init__.py": "",
        "kern.py": """\
            import numpy as np
            from numba import njit

            from pkg.helpers import (
                double,
                half,
            )
            from pkg import consts, \\
                deep
            """,
        "helpers.py": "import pkg.tables\n\ndef double(x):\n    return 2 * x\n",
        "tables.py": "from .sub.base import B\n",
        "sub/__init__.py": "",
        "sub/base.py": "B = 1\n",
        "consts.py": "C = 1\n",
        "deep.py": "def f():\n    from pkg.lazy import L\n    return L\n",
        "lazy.py": "L = 1\n",
        "other_kernel.py": "import numba\n",
        "cli/__init__.py": "",
        "cli/render.py": ("from pkg.kern import double\n\n"
                          "def threads():\n    import numba\n    return numba.config\n"),
        "unused.py": "X = 1\n",
    })
    (pkg / "notes.txt").write_text("not source")
    (pkg / "sub" / "__pycache__").mkdir()
    (pkg / "sub" / "__pycache__" / "base.cpython-311.pyc").write_bytes(b"\0")
    assert list(dicelab.kernel_sources(str(pkg))) == [
        "pkg", "pkg.consts", "pkg.deep", "pkg.helpers", "pkg.kern", "pkg.lazy",
        "pkg.other_kernel", "pkg.sub", "pkg.sub.base", "pkg.tables"]
    before = dicelab._kernel_source_hash(str(pkg))
    assert dicelab._is_hash_name(before)
    for rel in ("cli/render.py", "unused.py", "notes.txt", "sub/__pycache__/x.pyc"):
        (pkg / rel).write_text("# edited\n")
        assert dicelab._kernel_source_hash(str(pkg)) == before, rel
    for rel in ("sub/base.py", "lazy.py", "kern.py", "__init__.py"):
        (pkg / rel).write_text((pkg / rel).read_text() + "# edited\n")
        after = dicelab._kernel_source_hash(str(pkg))
        assert after != before, rel
        before = after


def test_dicelab_kernels_are_keyed_on_every_kernel_module_and_not_on_the_command_line(
        tmp_path):
    src = Path(dicelab.__file__).parent
    pkg = tmp_path / "dicelab"
    shutil.copytree(src, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    sources = dicelab.kernel_sources(str(pkg))
    modules = {".".join(("dicelab", *p.relative_to(pkg).with_suffix("").parts))
               .removesuffix(".__init__"): p.read_text() for p in pkg.rglob("*.py")}
    kernels = {m for m, text in modules.items() if "@njit" in text or "njit(" in text}
    assert kernels and kernels <= sources.keys()
    # what the kernels read: the constants, the dice tables, the random numbers, the rules
    assert {"dicelab.config", "dicelab.dice", "dicelab.rng", "dicelab.penta.rules",
            "dicelab.farkle.rules"} <= sources.keys()
    assert not any(m.startswith("dicelab.cli") for m in sources)
    before = dicelab._kernel_source_hash(str(pkg))
    for rel in ("cli/render.py", "cli/main.py", "experiments.py", "plots.py"):
        (pkg / rel).write_text((pkg / rel).read_text() + '"""A docstring edited."""\n')
        assert dicelab._kernel_source_hash(str(pkg)) == before, rel
    (pkg / "config.py").write_text((pkg / "config.py").read_text() + "# edited\n")
    assert dicelab._kernel_source_hash(str(pkg)) != before


def test_only_the_most_recently_used_hash_directories_are_kept(tmp_path):
    names = [f"{i:016x}" for i in range(6)]
    for age, name in enumerate(names):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kernel.nbi").write_bytes(b"")
        os.utime(tmp_path / name, (1e9 - age * 3600, 1e9 - age * 3600))
    (tmp_path / "not-a-hash").mkdir()
    os.utime(tmp_path / "not-a-hash", (0, 0))
    dicelab._prune_jit_dirs(str(tmp_path), keep=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [*names[:3], "not-a-hash"]
    dicelab._prune_jit_dirs(str(tmp_path), keep=0)
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-hash"]


def test_a_directory_used_lately_is_kept_beyond_the_most_recent(tmp_path):
    """Another checkout's process started within the grace may still save its kernels in
    its directory: it stays, however many newer ones there are; older ones go."""
    import time

    now = time.time()
    ages = {f"{i:016x}": age for i, age in enumerate((0, 10, 20, 600, 7200, 90_000))}
    for name, age in ages.items():
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (now - age, now - age))
    dicelab._prune_jit_dirs(str(tmp_path), keep=2, grace_s=3600)
    assert sorted(p.name for p in tmp_path.iterdir()) == [n for n, a in ages.items()
                                                          if a < 3600]
    dicelab._prune_jit_dirs(str(tmp_path), keep=2)  # the default grace: a day
    assert len(list(tmp_path.iterdir())) == 4
