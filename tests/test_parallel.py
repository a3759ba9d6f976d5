"""dicelab.parallel: blocks of work on numba's thread count, kernels compiled in the
background. The game and solver kernels that use it are tested on 1 and 2 threads in
their own modules (results independent of the thread count)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numba import njit
from numba_threads import with_threads

from dicelab import parallel


@njit(nogil=True)
def _fill(lo, hi, out, value):
    for i in range(lo, hi):
        out[i] += value


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
@pytest.mark.parametrize("threads", [1, 2])
def test_every_block_once_whatever_the_thread_count(n, threads):
    out = np.zeros(n, dtype=np.int64)
    with_threads(threads, lambda: parallel.run_blocks(_fill, n, out, 7))
    np.testing.assert_array_equal(out, np.full(n, 7))


def test_ranges_are_contiguous_equal_shares_in_order():
    for n in range(0, 40):
        for parts in range(1, 6):
            ranges = parallel.block_ranges(n, parts)
            assert [lo for lo, _ in ranges[1:]] == [hi for _, hi in ranges[:-1]]
            sizes = [hi - lo for lo, hi in ranges]
            assert sum(sizes) == n and len(ranges) == min(parts, n)
            assert all(s >= 1 for s in sizes) and max(sizes, default=0) - min(sizes, default=0) <= 1


def test_no_blocks_still_calls_the_kernel_once_to_warm_it_up():
    calls = []
    parallel.run_blocks(lambda lo, hi, tag: calls.append((lo, hi, tag)), 0, "x")
    assert calls == [(0, 0, "x")]


def test_a_failing_range_is_raised_after_every_range_ended():
    done = []

    def kernel(lo, hi):
        if hi == 4:
            raise ValueError("the last range")
        done.append((lo, hi))

    with pytest.raises(ValueError, match="the last range"):
        with_threads(2, lambda: parallel.run_blocks(kernel, 4))
    ranges = with_threads(2, lambda: parallel.block_ranges(4, parallel.threads()))
    assert done == ranges[:-1]  # every other range ended (one thread: there is no other)


def test_in_background_runs_beside_the_caller_and_join_raises_its_error():
    started, release = threading.Event(), threading.Event()

    def work():
        started.set()
        release.wait(10)

    join = parallel.in_background(work)
    assert started.wait(10)  # running while this thread goes on
    release.set()
    join()

    def fail():
        raise RuntimeError("compile failed")

    join = parallel.in_background(fail)
    with pytest.raises(RuntimeError, match="compile failed"):
        join()


@pytest.fixture
def _threads_restored():
    import numba

    before = numba.get_num_threads()
    yield int(numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(before)


def test_set_threads_caps_at_the_cores_and_says_so_once(_threads_restored, caplog):
    """More threads than numba can use were capped silently: the cap stays (results do
    not depend on the count), a notice says it; a count within the cores says nothing."""
    import numba

    from dicelab.errors import UserError

    cores = _threads_restored
    for n in (1, cores):
        with caplog.at_level("INFO", logger="dicelab.parallel"):
            assert parallel.set_threads(n) == n == numba.get_num_threads()
        assert not caplog.records
    with caplog.at_level("INFO", logger="dicelab.parallel"):
        assert parallel.set_threads(cores + 6) == cores == numba.get_num_threads()
    (msg,) = [r.getMessage() for r in caplog.records]
    core_s = "core" if cores == 1 else "cores"
    assert msg == f"--threads {cores + 6} is more than the {cores} {core_s} numba can use; " \
                  f"using {cores}"
    for bad in (0, -2):
        with pytest.raises(UserError, match=f"--threads must be positive, not {bad}"):
            parallel.set_threads(bad)


@pytest.mark.slow  # a simulation's kernels load (5 s); its fast twin: the test above
def test_the_cli_says_once_that_it_caps_the_threads(capsys, _threads_restored):
    import json

    from cli_helpers import run_cli

    cores = _threads_restored
    argv = ["simulate", "-s", "threshold-300", "-n", "200", "--seed", "5", "--target", "1000",
            "--json", "--threads"]
    code, out, err = run_cli(capsys, [*argv, str(cores + 1)])
    assert code == 0 and err.splitlines() == [
        f"dicelab: --threads {cores + 1} is more than the {cores} "
        f"{'core' if cores == 1 else 'cores'} numba can use; using {cores}"]
    capped = json.loads(out)
    code, out, err = run_cli(capsys, [*argv, str(cores)])
    assert code == 0 and err == ""
    strip = ("elapsed_s", "games_per_s", "setup_s")
    assert {k: v for k, v in capped.items() if k not in strip} == \
        {k: v for k, v in json.loads(out).items() if k not in strip}
