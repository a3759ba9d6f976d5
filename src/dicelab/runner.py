"""Run a simulation plan over its chunks of games, locally or on a Dask cluster (layer 2).

A *plan* is a small picklable value (a frozen dataclass in each game's runner) that
describes one run: policies by name, rules, target, seed, number of games. It knows how
to play the chunks ``first .. stop-1`` of the fixed chunk layout of
:mod:`dicelab.seeding` and return integer accumulators (:meth:`Plan.run_range`); it
builds its kernel arrays (policy tables, scoring arrays) lazily, once per process, so a
Dask worker builds its own tables from the names instead of receiving hundreds of MB.

:func:`run_plan` cuts the chunks into batches of ``plan.batch_chunks`` and sums the
batches' accumulators. Locally the batches run in order, with a progress tick after
each; with a ``distributed.Client`` every batch is one task and the sums are merged as
tasks finish. Integer sums do not depend on the order, and the chunk layout does not
depend on threads or workers, so both paths give identical results for a seed.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np

from dicelab import seeding
from dicelab.errors import UserError
from dicelab.text import counted, parse_int

Accumulators = dict[str, np.ndarray]

#: What ``--dask`` accepts besides a scheduler address.
LOCAL_CLUSTER = "local"
#: ``local:N`` refuses more worker processes than this many per core.
MAX_LOCAL_WORKERS_PER_CORE = 4

# A process may run several batches at once (a threaded Dask worker, or a notebook's
# threads); the kernels are already parallel inside, so one at a time costs nothing and
# keeps numba's thread pool from being entered concurrently.
_KERNEL_LOCK = threading.Lock()


class Plan(Protocol):
    """What :func:`run_plan` needs from a game's plan."""

    games: int
    seed: int
    batch_chunks: int

    def token(self) -> str:
        """A short string naming this run (Dask task keys); equal plans, equal tokens."""

    def prepare(self) -> None:
        """Build the kernel arrays and compile the kernels in this process (optional)."""

    def empty(self) -> Accumulators:
        """Zero accumulators of the shapes :meth:`run_range` returns."""

    def run_range(self, first: int, stop: int) -> Accumulators:
        """Integer accumulators of chunks ``first .. stop-1`` (summed over those chunks)."""


class LazyArrays:
    """Mixin for plans: ``self._lazy(build)`` builds once per plan object, never pickled.

    A Dask worker unpickles a scattered plan once and runs all its tasks on that object,
    so each worker process builds the kernel arrays once per run.
    """

    def _lazy(self, build: Callable[[], Any]) -> Any:
        memo = self.__dict__.get("_lazy_arrays")
        if memo is None:
            memo = build()
            object.__setattr__(self, "_lazy_arrays", memo)  # frozen dataclasses too
        return memo

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_lazy_arrays", None)
        return state


def plan_token(game: str, *parts: Any) -> str:
    """``game-<digest>`` of the parts that decide a run's results (their ``repr``)."""
    import hashlib

    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:16]
    return f"{game}-{digest}"


def batch_ranges(plan: Plan) -> list[tuple[int, int]]:
    """``(first, stop)`` chunk ranges of ``plan.batch_chunks`` chunks, in chunk order."""
    n = seeding.n_chunks(plan.games, _chunk_games(plan))
    step = plan.batch_chunks
    return [(lo, min(lo + step, n)) for lo in range(0, n, step)]


#: Accumulators whose name starts with this are kept chunk by chunk (a leading chunk
#: axis, concatenated in chunk order) instead of summed: what a tournament's uncertainty
#: and sequential tests are computed from.
PER_CHUNK = "by_chunk:"


def _add(total: Accumulators, part: Accumulators, first: int,
         chunks: dict[str, dict[int, np.ndarray]]) -> None:
    for name, value in part.items():
        if name.startswith(PER_CHUNK):
            chunks.setdefault(name, {})[first] = value
        else:
            total[name] += value


def _finish(total: Accumulators, chunks: dict[str, dict[int, np.ndarray]]) -> Accumulators:
    out = _narrow(total)
    for name, parts in chunks.items():
        out[name] = np.concatenate([parts[k] for k in sorted(parts)])
    return out


def _run_range(plan: Plan, first: int, stop: int) -> Accumulators:
    with _KERNEL_LOCK:
        return plan.run_range(first, stop)


def run_plan(plan: Plan, progress: Callable[[int, int], None] | None = None,
             client: Any = None) -> Accumulators:
    """Play every chunk of ``plan`` and return the summed integer accumulators.

    ``progress(done_games, total_games)`` is called after each batch (locally in chunk
    order, on Dask as batches finish). ``client``: a ``distributed.Client``, or None to
    run in this process.

    >>> from dicelab.farkle.rules import load_rules
    >>> from dicelab.farkle.simulate import FarklePlan
    >>> from dicelab.registry import parse_policy
    >>> plan = FarklePlan((parse_policy("threshold-300"),), load_rules("default"),
    ...                   target=10_000, seed=1, games=10_000)
    >>> acc = run_plan(plan)  # or run_plan(plan, client=distributed.Client(address))
    >>> int(acc["counters"][0]), acc["stats"].shape[0]
    (10000, 1)
    """
    # grand totals in Python integers: exact whatever the number of games (a batch's int64
    # sums cannot overflow; a long run's sums of squares could)
    total = {k: v.astype(object) for k, v in plan.empty().items()}
    chunks: dict[str, dict[int, np.ndarray]] = {}
    if client is None:
        for first, stop in batch_ranges(plan):
            _add(total, _run_range(plan, first, stop), first, chunks)
            if progress is not None:
                progress(_games_before(plan, stop), plan.games)
    else:
        _run_on_dask(plan, client, total, chunks, progress)
    return _finish(total, chunks)


def _games_before(plan: Plan, chunk: int) -> int:
    return min(chunk * _chunk_games(plan), plan.games)


def _chunk_games(plan: Plan) -> int:
    """Games per chunk of a plan (the standard :data:`~dicelab.config.CHUNK_GAMES` unless
    the plan sets its own)."""
    return getattr(plan, "chunk_games", seeding.CHUNK_GAMES)


def _narrow(total: Accumulators) -> Accumulators:
    """int64 arrays where every sum fits (always, but for astronomically long runs)."""
    out = {}
    for k, v in total.items():
        fits = v.size == 0 or (int(v.min()) >= -2**63 and int(v.max()) < 2**63)
        out[k] = v.astype(np.int64) if fits else v
    return out


def _run_on_dask(plan: Plan, client: Any, total: Accumulators,
                 chunks: dict[str, dict[int, np.ndarray]],
                 progress: Callable[[int, int], None] | None) -> None:
    from distributed import as_completed
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    lost = (FutureCancelledError, KilledWorker)  # a worker died with the run's work
    ranges = batch_ranges(plan)
    _WORKERS_AT_SUBMIT[id(client)] = len(client.nthreads())
    # the plan goes to the cluster once, to every worker (a worker lost takes no other
    # worker's plan with it); tasks refer to it
    plan_future = client.scatter(plan, hash=False, broadcast=True)
    token = plan.token()
    futures = client.map(_run_range, [plan_future] * len(ranges), [a for a, _ in ranges],
                         [b for _, b in ranges],
                         key=[f"dicelab-{token}-{a}-{b}" for a, b in ranges])
    batch_of = {f.key: (a, b) for f, (a, b) in zip(futures, ranges, strict=True)}
    done = 0
    try:
        for future in as_completed(futures):
            a, b = batch_of[future.key]
            _add(total, future.result(), a, chunks)
            done += _games_before(plan, b) - _games_before(plan, a)
            if progress is not None:
                progress(done, plan.games)
    except BaseException as exc:  # a failed task or Ctrl-C: stop the batches still queued
        client.cancel([*futures, plan_future])
        if isinstance(exc, lost):
            raise UserError(f"the Dask cluster lost the run's work ({type(exc).__name__}: "
                            f"{exc}); start it again") from None
        raise


#: Workers of the cluster when the client's last run was submitted (by ``id(client)``): what
#: a result records, as a worker may leave once its tasks are done.
_WORKERS_AT_SUBMIT: dict[int, int] = {}


def executor_info(client: Any = None) -> dict[str, Any]:
    """How a run was executed, for results and manifests: ``{"executor", "workers"}``.

    ``workers`` is None for a local run (then the thread count tells the parallelism); on
    Dask, the cluster's workers when the client's last run was submitted (now, if it has
    run nothing).
    """
    if client is None:
        return {"executor": "local", "workers": None}
    workers = _WORKERS_AT_SUBMIT.get(id(client))
    return {"executor": "dask",
            "workers": len(client.nthreads()) if workers is None else workers}


def _parse_local(spec: str) -> int | None:
    """``local`` -> None (one worker per core), ``local:N`` -> N; else UserError."""
    rest = spec[len(LOCAL_CLUSTER):]
    if not rest:
        return None
    try:
        n = parse_int(rest[1:]) if rest[0] == ":" else 0
    except ValueError:
        n = 0
    if n <= 0:
        raise UserError(f"--dask {spec}: use 'local', 'local:N' (N worker processes, N >= 1) "
                        "or a scheduler address like tcp://host:8786")
    limit = MAX_LOCAL_WORKERS_PER_CORE * (os.cpu_count() or 1)
    if n > limit:
        raise UserError(f"--dask {spec}: at most {limit} local worker processes on this "
                        f"machine ({counted(os.cpu_count() or 1, 'core')}); a bigger cluster "
                        "needs a scheduler "
                        "address")
    return n


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Processes started inside inherit an ignored SIGINT. Ctrl-C at a terminal reaches
    the whole process group: the local cluster's workers leave it to this process, which
    stops the run and closes them (else each prints a KeyboardInterrupt traceback).

    This process ignores it meanwhile too, so a watcher process started before, which
    keeps the default action, tells whether Ctrl-C was pressed: then KeyboardInterrupt is
    raised on the way out (else that Ctrl-C would be lost and the run would go on). The
    watcher reads its stdin to the end: it exits 0 when that is closed, unless Ctrl-C
    ended it first."""
    import signal
    import subprocess
    import sys

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    watcher = subprocess.Popen([sys.executable, "-S", "-c", "import sys; sys.stdin.read()"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        watcher.stdin.close()
        pressed = watcher.wait() != 0
    if pressed:
        raise KeyboardInterrupt


#: Seconds ``--dask ADDRESS`` waits for a scheduler to connect and answer.
SCHEDULER_TIMEOUT_S = 10


def _check_scheduler(spec: str) -> None:
    """UserError unless a Dask server at ``spec`` answers Dask's handshake within
    :data:`SCHEDULER_TIMEOUT_S`. ``distributed.Client`` bounds only the connection: it
    waits for ever on a server that accepts it and says nothing (a web server), and fails
    with a MemoryError on one that says something else first (an SSH server)."""
    import asyncio

    from distributed.comm import connect
    from distributed.security import Security

    async def handshake() -> None:
        args = Security().get_connection_args("client")
        comm = await asyncio.wait_for(connect(spec, timeout=SCHEDULER_TIMEOUT_S, **args),
                                      SCHEDULER_TIMEOUT_S)
        await comm.close()

    def in_a_thread() -> None:  # its own event loop, also where one runs (a notebook)
        try:
            asyncio.run(handshake())
        except BaseException as exc:  # raised below, in the caller's thread
            failed.append(exc)

    failed: list[BaseException] = []
    thread = threading.Thread(target=in_a_thread, daemon=True)
    thread.start()
    thread.join()
    try:
        if failed:
            raise failed[0]
    except TimeoutError as exc:
        reason = str(exc) or f"no answer within {SCHEDULER_TIMEOUT_S} s"
        raise UserError(f"--dask {spec}: cannot reach a Dask scheduler there ({reason})") \
            from None
    except (OSError, ValueError, TypeError) as exc:
        # TypeError: a scheme this Dask cannot use as configured (tls:// without Dask's TLS
        # settings, ucx:// without UCX)
        raise UserError(f"--dask {spec}: cannot reach a Dask scheduler there ({exc})") \
            from None
    except Exception:  # the reply, if any, was not Dask's
        raise UserError(f"--dask {spec}: the server there does not answer as a Dask "
                        "scheduler does") from None


@contextlib.contextmanager
def _environ_kept() -> Iterator[None]:
    """The process's environment as it was, on exit: Dask's nanny sets its workers'
    variables (``OMP_NUM_THREADS=1``, ``OPENBLAS_NUM_THREADS=1``, ...) in the environment
    of the process that starts them, which every later subprocess of the caller's (a
    notebook's, a game's) would otherwise inherit."""
    import os

    before = dict(os.environ)
    try:
        yield
    finally:
        for key in set(os.environ) - set(before):
            del os.environ[key]
        os.environ.update(before)


@contextlib.contextmanager
def dask_client(spec: str) -> Iterator[Any]:
    """A ``distributed.Client`` for ``--dask SPEC``, closed (with its cluster) on exit.

    ``SPEC``: a scheduler address (``tcp://host:8786``), ``local`` (a LocalCluster with
    one single-threaded worker process per core) or ``local:N`` (N worker processes).
    """
    spec = spec.strip()
    if not spec:
        raise UserError("--dask needs 'local', 'local:N' or a scheduler address "
                        "like tcp://host:8786")
    local = spec.split(":")[0] == LOCAL_CLUSTER
    n_workers = _parse_local(spec) if local else None
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UserError("--dask needs Dask's distributed scheduler: "
                        "pip install 'dicelab[dask]'") from None
    if local:
        import logging
        import os

        cores = os.cpu_count() or 1
        n = n_workers if n_workers is not None else cores
        # each worker's kernels are parallel too: share the cores instead of oversubscribing
        env = {"NUMBA_NUM_THREADS": str(max(1, cores // n))}
        # a failed task reaches the caller as its exception (a UserError is one line):
        # the workers' own log of it would only repeat it as a traceback
        with _environ_kept(), contextlib.ExitStack() as stack:
            # entered at once: a Ctrl-C pressed while it starts closes it on the way out
            with _workers_ignore_ctrl_c():
                cluster = stack.enter_context(LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True,
                    dashboard_address=":0", env=env, silence_logs=logging.CRITICAL))
            yield stack.enter_context(Client(cluster))
        return
    _check_scheduler(spec)
    try:
        client = Client(spec, timeout=f"{SCHEDULER_TIMEOUT_S}s")
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise UserError(f"--dask {spec}: cannot reach a Dask scheduler there ({exc})") from None
    try:
        try:  # else the first task waits, and fails with a traceback
            client.wait_for_workers(1, timeout=SCHEDULER_TIMEOUT_S)
        except TimeoutError:
            raise UserError(f"--dask {spec}: the scheduler there has no workers (none joined "
                            f"within {SCHEDULER_TIMEOUT_S} s): start them with "
                            f"'dask worker {spec}'") from None
        yield client
    finally:
        client.close()
