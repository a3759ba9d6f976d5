"""Shared test fixtures (generic: used by every part of the suite)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

_STORE_KEY = pytest.StashKey[str]()

# Compiled kernels of test runs stay in the virtual environment, as under `make test`, not
# in the user's cache directory. Read when dicelab is imported, so set before any test module.
if sys.prefix != sys.base_prefix:
    os.environ.setdefault("DICELAB_JIT_CACHE_DIR", os.path.join(sys.prefix, "jit-cache"))


#: Environment variable: the directory of the Penta decision blocks built in this test
#: session, made by the process that runs the session (pytest-xdist's controller, whose
#: workers inherit it) and deleted when it ends.
DECISION_STORE_ENV = "DICELAB_TEST_DECISION_BLOCKS"


def pytest_configure(config):
    """Under pytest-xdist, each worker's numba kernels use its share of the cores (the
    workers already use them all): launching one parallel loop per anti-diagonal on more
    threads than cores is pathological (an optimal-win solve under the penalty at 1,000
    took 33 s on 2 threads against 5.5 s on 1 with another worker running). Tests that
    need a thread count ask for it (tests/numba_threads.py).

    The process that runs the session (not a worker) makes the session's store of
    decision blocks, so that every worker finds the blocks any of them built."""
    if not hasattr(config, "workerinput"):
        _remove_stores_of_ended_sessions()
        store = tempfile.mkdtemp(prefix=f"{STORE_PREFIX}{os.getpid()}-")
        config.stash[_STORE_KEY] = store
        os.environ[DECISION_STORE_ENV] = store
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and os.environ.get("PYTEST_XDIST_WORKER"):
        import numba

        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // workers))


#: The test files and notebooks that take longest in a `make test` from nothing (every
#: kernel compiled), longest first. pytest-xdist hands whole files to the workers in the
#: order of collection (the Makefile turns off its own order, by number of tests): these
#: go first, so that the run does not end with one worker on a long file while the other
#: idles. A file not named keeps its place after them.
LONGEST_FIRST = ("test_farkle_penalty_solver.py", "test_penta_objectives.py",
                 "test_play_terminal.py", "test_farkle_zilch.py", "test_penta_user_policy.py",
                 "test_first_run.py", "test_cache.py", "test_user_policy.py",
                 "test_farkle_penalty_pair.py", "test_two_player.py",
                 "test_penta_decision_cache.py", "farkle_tournament.ipynb",
                 "test_farkle_penalty_solver_slow.py", "test_rl.py", "test_advise.py",
                 "penta_optimal.ipynb", "test_penta_solver.py", "test_rl_penta_agent.py",
                 "test_farkle_penalty_response.py", "test_distributed.py", "game_review.ipynb")


def pytest_collection_modifyitems(config, items):
    """The files of :data:`LONGEST_FIRST` first, in its order (a stable sort: the tests
    of a file keep theirs)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0].rpartition("/")[2],
                                         len(rank)))


#: Name of a session's store of decision blocks: then the id of the process that made it.
STORE_PREFIX = "dicelab-test-decision-blocks-"


def _remove_stores_of_ended_sessions():
    """Delete the stores left by sessions that were killed (their process is gone)."""
    for d in Path(tempfile.gettempdir()).glob(f"{STORE_PREFIX}*-*"):
        pid = d.name[len(STORE_PREFIX):].partition("-")[0]
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (ValueError, OSError):  # not a store, or another user's live process
            pass


def pytest_unconfigure(config):
    store = config.stash.get(_STORE_KEY, None)
    if store is not None:
        shutil.rmtree(store, ignore_errors=True)


#: Disk-cache files the session shares: Penta decision blocks (270 MB each; see
#: dicelab.penta.policies), optimal's values (8 MB, 1.7 s a rule set: dicelab.penta.solver),
#: utility objectives' value tables (16 MB, most of a minute each to solve; see
#: dicelab.penta.objectives) and the empty card's score distributions (a few kB, 2.5 s
#: each for optimal's on one thread; see dicelab.penta.distribution; an objective's
#: policy's, about 40 s on one thread: dicelab.penta.objective_play).
DECISION_FILES = ("penta-decisions-*.npz", "penta-values-*.npz", "penta-utility-*.npz",
                  "penta-distribution-*.npz", "penta-objective-distribution-*.npz")


def _shared_files(directory: Path) -> list[Path]:
    """The files of ``directory`` that the session shares (:data:`DECISION_FILES`)."""
    return [f for pattern in DECISION_FILES for f in directory.glob(pattern)]

#: Test modules that use Penta's decision tables: their fresh cache directories start with
#: the blocks already built in this session. (A module that counts the files of its cache
#: directory, or edits a cache file in place, must not be listed.)
SHARES_DECISION_BLOCKS = {"test_analyse", "test_compare", "test_distributed", "test_gamelog",
                          "test_glossary", "test_penta_decision_cache",
                          "test_penta_objectives", "test_penta_distribution",
                          "test_penta_policies", "test_penta_simulate", "test_penta_ties",
                          "test_penta_tournament", "test_penta_user_policy",
                          "test_play_engine", "test_play_terminal", "test_referee", "test_rl",
                          "test_rl_batch", "test_rl_penta_agent", "test_tune"}


@pytest.fixture(scope="session")
def _decision_blocks():
    """The session's store of the Penta decision blocks the tests built, shared by the
    workers and deleted at the end (so the suite neither rebuilds a block per module or per
    worker nor leaves 270 MB files behind)."""
    return Path(os.environ[DECISION_STORE_ENV])


@pytest.fixture(autouse=True)
def _isolated_cache_dir(request, tmp_path_factory, monkeypatch, _decision_blocks):
    """Point dicelab's table cache at a fresh temporary directory for every test.

    In the modules of ``SHARES_DECISION_BLOCKS`` the directory starts with hard links to
    the session's decision blocks (still loaded only after the usual version and SHA-256
    checks). After every test, new blocks move to the session store and the rest of the
    blocks are removed, so pytest's kept temporary directories hold no 270 MB files.
    """
    d = tmp_path_factory.mktemp("dicelab-cache")
    if request.module.__name__.rpartition(".")[2] in SHARES_DECISION_BLOCKS:
        for block in _shared_files(_decision_blocks):
            try:
                os.link(block, d / block.name)
            except OSError:  # no hard links here: the test builds its own
                break
    monkeypatch.setenv("DICELAB_CACHE_DIR", str(d))
    yield d
    from dicelab import cache

    cache.wait_stores()  # blocks still being written on their own threads
    for block in _shared_files(d):
        kept = _decision_blocks / block.name
        if kept.exists() and os.path.samefile(block, kept):
            block.unlink()
        else:  # new, or rewritten by the test (then it is the newest)
            try:
                os.replace(block, kept)
            except OSError:  # another file system (--basetemp): copied, then renamed
                part = kept.with_name(f"{kept.name}.{os.getpid()}.part")
                shutil.copyfile(block, part)
                os.replace(part, kept)
                block.unlink()


@pytest.fixture(autouse=True, scope="module")
def _fresh_farkle_solutions():
    """Each test module starts with no Farkle solution held in the process: a held
    solution is keyed by its rules and target, not by the penalty's floor
    (``config.PENALTY_FLOOR_POINTS``), which some modules change, and a worker runs many
    modules one after the other."""
    yield
    import sys

    for module, names in (("dicelab.farkle.solve", ("least_policy_table_bytes",)),
                          ("dicelab.farkle.solitaire", ("max_ev_capped",))):
        loaded = sys.modules.get(module)
        for name in names if loaded is not None else ():
            getattr(loaded, name).cache_clear()
    advise = sys.modules.get("dicelab.farkle.advise")
    if advise is not None:
        advise.held_solutions_clear()


# Penta's decision tables stay in the worker from one test module to the next: loading them
# again took about a second per 270 MB block in each module that plays them, and dicelab
# keeps the tables of one rule set only (at most 540 MB: optimal's and greedy's blocks).
# A test that needs them gone says so (dicelab.penta.policies.release_decision_tables).
