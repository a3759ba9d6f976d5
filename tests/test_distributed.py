"""One chunk runner for both games: 1 thread, 2 threads and a Dask cluster agree exactly."""

from __future__ import annotations

import json
import pickle
import sys

import numpy as np
import pytest
from cli_helpers import run_cli
from numba_threads import with_threads

from dicelab import config, runner, seeding
from dicelab.cli.main import main
from dicelab.errors import UserError
from dicelab.farkle import simulate as fsim
from dicelab.farkle.rules import load_rules
from dicelab.penta import simulate as psim
from dicelab.registry import parse_policy
from dicelab.simulate import simulate

distributed = pytest.importorskip("distributed")

#: Keys of ``to_dict()`` / ``manifest()`` that say how (and how fast) a run went.
RUN_FIELDS = ("elapsed_s", "games_per_s", "setup_s", "threads", "executor", "workers")


def strip(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in RUN_FIELDS}


@pytest.fixture(scope="module")
def client():
    """Two in-process workers (threads): fast to start, exercise scatter/map/as_completed."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def assert_same_farkle(a, b):
    np.testing.assert_array_equal(a.stats, b.stats)
    np.testing.assert_array_equal(a.hist, b.hist)
    np.testing.assert_array_equal(a.counters, b.counters)
    assert strip(a.to_dict()) == strip(b.to_dict())
    assert strip(a.manifest()) == strip(b.manifest())


# ---------------------------------------------------------------------------- the executor


def test_run_plan_sums_exactly_what_the_chunks_give_one_by_one(monkeypatch):
    # independent reference: every chunk on its own, summed by hand
    plan = fsim.FarklePlan(tuple(map(parse_policy, ("ai", "threshold-300"))),
                           load_rules(None), 5000, seed=11,
                           games=3 * seeding.CHUNK_GAMES + 5, batch_chunks=2)
    ref = plan.empty()
    for i in range(seeding.n_chunks(plan.games)):
        for k, v in plan.run_range(i, i + 1).items():
            ref[k] += v
    ticks = []
    got = runner.run_plan(plan, progress=lambda d, t: ticks.append((d, t)))
    for k in ref:
        np.testing.assert_array_equal(ref[k], got[k])
    assert int(got["counters"][0]) == plan.games
    assert runner.batch_ranges(plan) == [(0, 2), (2, 4)]
    assert ticks == [(2 * seeding.CHUNK_GAMES, plan.games), (plan.games, plan.games)]


def test_a_plan_travels_without_its_tables():
    plan = fsim.FarklePlan((parse_policy("max-ev"),), load_rules(None), 10000, 1, 100)
    plan.prepare()  # builds the max-ev table and the set-aside arrays in this process
    b = plan.built()
    built = sum(a.nbytes for a in (*b.seats, *b.rolls))
    blob = pickle.dumps(plan)
    assert built > 10 * len(blob)
    again = pickle.loads(blob)
    assert "_lazy_arrays" not in again.__dict__
    assert again.token() == plan.token()
    for k, v in again.run_range(0, 1).items():
        np.testing.assert_array_equal(v, plan.run_range(0, 1)[k])
    other = fsim.FarklePlan((parse_policy("max-ev"),), load_rules(None), 10000, 2, 100)
    assert other.token() != plan.token()


# ------------------------------------------------------------- same seed, same results


@pytest.mark.parametrize("ending", ["last-round", "first-to-bank"])
def test_farkle_two_seats_identical_with_one_two_threads_and_dask(client, ending):
    seats = [parse_policy("ai"), parse_policy("threshold-300")]
    games = 5 * seeding.CHUNK_GAMES + 123

    def run(**kw):
        return fsim.simulate_farkle(seats, games=games, seed=2024, target=5000, ending=ending,
                                    **kw)

    one = with_threads(1, run)
    two = with_threads(2, run)
    dask = run(client=client)
    assert_same_farkle(one, two)
    assert_same_farkle(one, dask)
    assert one.to_dict()["executor"] == "local" and one.to_dict()["workers"] is None
    assert dask.to_dict()["executor"] == "dask" and dask.to_dict()["workers"] == 2
    assert dask.manifest()["executor"] == "dask" and dask.to_dict()["ending"] == ending
    # three tasks of two chunks; progress reaches the total whatever order they finish in
    plan = fsim.FarklePlan(tuple(seats), load_rules(None, ending), 5000, 2024, games,
                           batch_chunks=2)
    ticks = []
    acc = runner.run_plan(plan, client=client, progress=lambda d, t: ticks.append((d, t)))
    for key in ("stats", "hist", "counters"):
        np.testing.assert_array_equal(acc[key], getattr(one, key))
    assert len(ticks) == 3 and ticks[-1] == (games, games)
    assert [d for d, _ in ticks] == sorted(d for d, _ in ticks)
    other = fsim.simulate_farkle(seats, games=games, seed=2025, target=5000, client=client,
                                 ending=ending)
    assert not np.array_equal(other.stats, dask.stats)


def test_farkle_exact_policy_identical_locally_and_on_dask(client):
    seats = [parse_policy("max-ev"), parse_policy("ai")]
    games = 2 * seeding.CHUNK_GAMES + 7
    local = with_threads(1, lambda: fsim.simulate_farkle(seats, games=games, seed=5))
    dask = fsim.simulate_farkle(seats, games=games, seed=5, client=client)
    assert_same_farkle(local, dask)


def test_penta_identical_with_one_two_threads_and_dask(client, monkeypatch):
    monkeypatch.setattr(config, "BATCH_CHUNKS", 1)
    games = 2 * seeding.CHUNK_GAMES + 5  # three tasks of a chunk, the last one short

    def run(**kw):
        return psim.simulate_penta(["optimal", "greedy"], games=games, seed=77, **kw)

    one = with_threads(1, run)
    two = with_threads(2, run)
    dask = run(client=client)
    for r in (two, dask):
        for name in ("hist", "box_sum", "box_sq", "upper_bonus", "fifty", "bonus_sum",
                     "bonus_sq", "wins", "tied"):
            np.testing.assert_array_equal(getattr(one, name), getattr(r, name))
        assert one.ties == r.ties
        assert strip(one.to_dict()) == strip(r.to_dict())
        assert strip(one.manifest()) == strip(r.manifest())
    assert dask.to_dict()["executor"] == "dask" and dask.to_dict()["workers"] == 2
    assert one.to_dict()["table_bytes"] == dask.to_dict()["table_bytes"] > 0


def test_penta_tournament_identical_locally_and_on_dask(client, monkeypatch):
    """A stream per turn and the per-chunk finishes travel as well (in-process workers
    share this process's decision tables)."""
    from dicelab.tournament import tournament

    monkeypatch.setattr(config, "BATCH_CHUNKS", 1)

    def run(**kw):
        return tournament(["optimal", "greedy"], seats=3, games=2 * seeding.CHUNK_GAMES + 5,
                          seed=78, **kw)

    local, dask = run(), run(client=client)
    assert strip(local.to_dict()) == strip(dask.to_dict())
    assert dask.executor == "dask"


@pytest.fixture
def kept_environ():
    """The process's environment put back after the test: a LocalCluster of worker
    processes started by the test itself sets its workers' variables (OMP_NUM_THREADS=1,
    ...) here, where later tests' subprocesses would inherit them."""
    import os

    environ = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(environ)


@pytest.mark.slow
def test_worker_processes_give_the_same_results(kept_environ):
    # real worker processes: each unpickles the plan and builds its own arrays
    seats = [parse_policy("ai"), parse_policy("threshold-300")]
    games = 3 * seeding.CHUNK_GAMES + 1
    local = fsim.simulate_farkle(seats, games=games, seed=9)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        remote = simulate("ai", ["threshold-300"], games=games, seed=9, client=c)
    assert_same_farkle(local, remote)
    assert remote.workers == 2


def test_user_error_on_a_worker_reaches_the_caller(client):
    # optimal-win is checked when the worker builds its table
    with pytest.raises(UserError, match="two-seat"):
        fsim.simulate_farkle([parse_policy("optimal-win")] * 3, games=10, seed=1,
                             client=client)


def test_a_run_whose_work_the_cluster_loses_is_one_user_error(client, monkeypatch):
    """A worker lost with the run's work (here: its plan forgotten, as when the only
    worker holding it dies) ends the run with a UserError, one line on the command line,
    not distributed's traceback. (The plan now goes to every worker, so one lost worker
    among several no longer loses it.)"""
    import threading

    scatter = client.scatter

    def forgotten_soon(*args, **kwargs):
        future = scatter(*args, **kwargs)
        assert kwargs.get("broadcast") is True
        threading.Timer(0.5, client.cancel, [future]).start()
        return future

    monkeypatch.setattr(client, "scatter", forgotten_soon)
    with pytest.raises(UserError, match="the Dask cluster lost the run's work"):
        fsim.simulate_farkle(["ai", "threshold-300"], games=200_000_000, seed=1,
                             client=client)


# ------------------------------------------------------------------------------ the CLI


def test_cli_dask_address_gives_the_local_json(client, capsys):
    args = ["simulate", "-s", "ai", "--vs", "threshold-300", "-n", "20000", "--seed", "3",
            "--json"]
    main(args)
    local = json.loads(capsys.readouterr().out)
    main([*args, "--dask", client.scheduler.address])
    remote = json.loads(capsys.readouterr().out)
    assert strip(local) == strip(remote)
    assert (local["executor"], remote["executor"], remote["workers"]) == ("local", "dask", 2)


@pytest.mark.parametrize(("spec", "message"), [
    ("local:0", "local:N"),
    ("local:two", "local:N"),
    ("local:100000", "at most"),
    ("", "scheduler address"),
    ("no-port-here", "cannot reach a Dask scheduler"),
    ("http://127.0.0.1:1", "unknown address scheme"),
    ("tls://127.0.0.1:1", "TLS"),  # no TLS settings in Dask's configuration
    ("ucx://127.0.0.1:1", "cannot reach a Dask scheduler"),  # UCX not installed
])
def test_cli_bad_dask_spec_is_one_line_exit_2(capsys, spec, message):
    code, out, err = run_cli(capsys, ["simulate", "-s", "ai", "-n", "100", "--dask", spec])
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.fixture
def server():
    """``serve(reply)``: the address of a TCP server on this machine that is not Dask's. It
    accepts every connection and sends ``reply`` (b"": nothing, as a web server waiting
    for its request); connections stay open until the test ends."""
    import socket
    import threading

    sockets = []

    def serve(reply: bytes) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        sockets.append(listener)

        def accept():
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:  # closed: the test is over
                    return
                sockets.append(conn)
                conn.sendall(reply)

        threading.Thread(target=accept, daemon=True).start()
        return f"tcp://127.0.0.1:{listener.getsockname()[1]}"

    yield serve
    for sock in sockets:
        sock.close()


@pytest.mark.parametrize(("reply", "message"), [
    (b"", "cannot reach a Dask scheduler there (no answer within 0.5 s)"),
    (b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(range(64)), "does not answer as a Dask scheduler"),
], ids=["silent", "another-protocol"])
def test_cli_dask_address_of_another_server_is_one_line_exit_2(capsys, monkeypatch, server,
                                                               reply, message):
    """A server that is not a scheduler: one that says nothing made the command wait for
    ever, one that says something else made it fail with a MemoryError traceback."""
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 0.5)
    code, out, err = run_cli(capsys, ["simulate", "-s", "ai", "-n", "100", "--dask",
                                      server(reply)])
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_dask_client_of_an_address_where_an_event_loop_runs(client):
    """As in a notebook (run_experiment(..., dask=ADDRESS) under a running event loop): the
    check that a scheduler answers runs its own loop, in a thread."""
    import asyncio

    async def in_a_notebook():
        with runner.dask_client(client.scheduler.address) as c:
            return len(c.nthreads())

    assert asyncio.run(in_a_notebook()) == 2


def test_cli_dask_scheduler_without_workers_is_one_line_exit_2(capsys, monkeypatch):
    """A scheduler no worker has joined (yet): the run's first task waited, then failed
    with a TimeoutError traceback ("No valid workers found")."""
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 0.5)
    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address=":0") as cluster:
        address = cluster.scheduler.address
        code, out, err = run_cli(capsys, ["simulate", "-s", "ai", "-n", "100", "--dask",
                                          address])
    assert code == 2 and out == ""
    assert err == (f"error: --dask {address}: the scheduler there has no workers (none "
                   f"joined within 0.5 s): start them with 'dask worker {address}'\n")


def test_cli_sprt_refuses_dask_before_a_cluster_starts(capsys, monkeypatch):
    """A sequential test plays in this process: --dask was silently ignored."""
    def no_cluster(spec):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(runner, "dask_client", no_cluster)
    args = ["tournament", "ai", "threshold-300", "--sprt", "--seed", "1", "--target", "1000"]
    code, out, err = run_cli(capsys, [*args, "--dask", "local:1"])
    assert (code, out) == (2, "")
    assert err == "error: --sprt plays in this process, not on Dask; leave out --dask\n"
    code, out, err = run_cli(capsys, [*args, "--json"])  # without --dask it plays
    assert code == 0 and json.loads(out)["pairs"][0]["decision"] in ("H0", "H1")


def test_cli_without_dask_installed_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # the import fails
    code, _, err = run_cli(capsys, ["simulate", "-s", "ai", "-n", "100", "--dask", "local:1"])
    assert code == 2 and "pip install 'dicelab[dask]'" in err


def test_cli_bad_policy_fails_before_a_cluster_starts(capsys, monkeypatch):
    def no_cluster(spec):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(runner, "dask_client", no_cluster)
    code, _, err = run_cli(capsys, ["simulate", "-s", "bogus", "--dask", "local:1"])
    assert code == 2 and "unknown policy 'bogus'" in err


# ------------------------------------------------- the README's cluster, command by command


@pytest.mark.slow
def test_readme_scheduler_and_worker_commands(tmp_path):
    """``dask scheduler``, ``dask worker ADDRESS --nthreads 1`` and ``dicelab simulate
    --dask ADDRESS`` as separate processes over TCP, each worker with its own empty cache
    directory (as on another machine; each builds the max-ev table itself): the JSON
    equals a local run's."""
    import os
    import subprocess
    import time
    from pathlib import Path

    bindir = Path(sys.executable).parent
    env = {**os.environ, "DICELAB_CACHE_DIR": str(tmp_path / "client-cache")}
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen(
        [str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        for w in range(2):
            procs.append(subprocess.Popen(
                [str(bindir / "dask"), "worker", address, "--nthreads", "1",
                 "--dashboard-address", ":0", "--local-directory", str(tmp_path / f"w{w}")],
                env={**env, "DICELAB_CACHE_DIR": str(tmp_path / f"cache-{w}")},
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=120)
        args = [str(bindir / "dicelab"), "simulate", "-s", "max-ev", "--vs", "threshold-300",
                "-n", str(2 * seeding.CHUNK_GAMES + 7), "--seed", "5", "--json"]
        local = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
        remote = subprocess.run([*args, "--dask", address], env=env, capture_output=True,
                                text=True, check=True)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert strip(a) == strip(b)
    assert (b["executor"], b["workers"]) == ("dask", 2)


PENTA_EXAMPLES = "docs/examples/policies/penta_rules.py"


def test_a_users_penta_policy_plays_identically_locally_and_on_dask(client):
    """The referee's plan: a user's policy travels by its name and is loaded again."""
    seats = [parse_policy(f"{PENTA_EXAMPLES}:keep_high:high=4", "penta"),
             parse_policy(f"{PENTA_EXAMPLES}:most_points", "penta")]
    games = seeding.CHUNK_GAMES // 64 + 3
    plan = psim.RefereePlan(tuple(seats), "seed", 3, games, chunk_games=64)
    again = pickle.loads(pickle.dumps(plan))
    assert [s.name for s in again.seats] == [s.name for s in seats]
    assert again.seats[0].policy.params == {"high": 4} and again.token() == plan.token()
    local = psim.simulate_penta(seats, games=games, seed=3, per_chunk=True)
    dask = psim.simulate_penta(seats, games=games, seed=3, client=client, per_chunk=True)
    for name in ("hist", "box_sum", "box_sq", "upper_bonus", "fifty", "bonus_sum",
                 "bonus_sq", "wins", "tied", "beat"):
        np.testing.assert_array_equal(getattr(local, name), getattr(dask, name))
    for name, value in local.chunk_tallies.items():
        np.testing.assert_array_equal(value, dask.chunk_tallies[name])
    # as JSON: a statistic with no spread to measure is NaN in both, and NaN != NaN
    assert json.dumps(strip(local.to_dict()), sort_keys=True) == json.dumps(
        strip(dask.to_dict()), sort_keys=True)
    assert dask.executor == "dask" and local.executor == "local"


def test_compare_takes_a_users_penta_policy_on_dask(capsys):
    """... and a local cluster leaves the caller's environment as it found it (Dask's
    nanny sets its workers' OMP_NUM_THREADS=1 and the like in the starting process: a
    game started later from the same process would run its kernels on one thread)."""
    import os

    before = dict(os.environ)
    code, out, err = run_cli(capsys, ["compare", f"{PENTA_EXAMPLES}:chase_penta",
                                      f"{PENTA_EXAMPLES}:most_points", "-n", "300",
                                      "--seed", "1", "--dask", "local:1", "--json"])
    assert code == 0, err
    result = json.loads(out)
    assert result["executor"] == "dask" and result["pairs"][0]["games"] == 300
    assert dict(os.environ) == before


FARKLE_RULES_FILE = """
from dicelab.farkle.policy import bank_rule


def plain(my, opp, turn_points, dice_left, base=400):
    return turn_points >= base


def _bank(my, opp, turn_points, dice_left, *, base=300):
    return turn_points >= base


alias = bank_rule(_bank)
"""


def test_a_users_farkle_rule_travels_by_its_name(tmp_path):
    """A plain function (or a rule made of one) is code in a module only this process
    has imported: the plan carries its name, and the worker loads it again."""
    (tmp_path / "rules.py").write_text(FARKLE_RULES_FILE)
    seats = (parse_policy(f"{tmp_path}/rules.py:plain"),
             parse_policy(f"{tmp_path}/rules.py:alias:base=350"), parse_policy("ai"))
    plan = fsim.FarklePlan(seats, load_rules(None), 1000, 7, 100)
    blob = pickle.dumps(plan)
    assert b"dicelab_user" not in blob
    again = pickle.loads(blob)
    assert [s.name for s in again.seats] == [s.name for s in seats]
    assert again.seats[1].policy.params == {"base": 350}
    for k, v in again.run_range(0, 1).items():
        np.testing.assert_array_equal(v, plan.run_range(0, 1)[k])


@pytest.mark.slow
def test_simulate_takes_a_users_plain_farkle_function_on_dask(tmp_path, capsys):
    (tmp_path / "rules.py").write_text(FARKLE_RULES_FILE)
    argv = ["simulate", "-s", f"{tmp_path}/rules.py:plain", "--vs", "ai", "-n", "300",
            "--seed", "1", "--target", "1000", "--json"]
    code, out, err = run_cli(capsys, [*argv, "--dask", "local:1"])
    assert code == 0, err
    code, here, err = run_cli(capsys, argv)
    assert code == 0, err
    dask, local = json.loads(out), json.loads(here)
    assert dask["executor"] == "dask" and strip(dask) == strip(local)


def test_local_cluster_workers_start_with_ctrl_c_ignored(monkeypatch):
    """Ctrl-C at a terminal reaches the whole process group: the local cluster's worker
    processes must leave it to the command (each used to print a KeyboardInterrupt
    traceback). Processes started with the cluster inherit an ignored SIGINT; the
    command's own handler is back once the cluster is up."""
    import signal
    import subprocess

    seen = {}
    probe = "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"

    class FakeCluster:
        def __init__(self, **kwargs):
            seen["worker"] = subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                            text=True, check=True).stdout.strip()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class FakeClient:
        def __init__(self, cluster):
            pass

        def __enter__(self):
            seen["during run"] = signal.getsignal(signal.SIGINT)
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(distributed, "LocalCluster", FakeCluster)
    monkeypatch.setattr(distributed, "Client", FakeClient)
    # the command's own handler, also where the suite runs with Ctrl-C ignored (nohup)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        before = signal.getsignal(signal.SIGINT)
        with runner.dask_client("local:1"):
            pass
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen["worker"] == "True"
    assert seen["during run"] is before and before is not signal.SIG_IGN
    assert after is before


# A process whose distributed is a stand-in: a Ctrl-C at the terminal (SIGINT to the
# process group) while its LocalCluster starts, or none.
CTRL_C_AT_START = """
import os, signal, sys, types
events = []
class LocalCluster:
    def __init__(self, **kwargs):
        if PRESS:
            os.killpg(0, signal.SIGINT)
        events.append("started")
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        events.append("closed")
        return False
class Client:
    def __init__(self, cluster):
        pass
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
sys.modules["distributed"] = types.SimpleNamespace(LocalCluster=LocalCluster, Client=Client)
from dicelab import runner
try:
    with runner.dask_client("local:1"):
        events.append("ran")
except KeyboardInterrupt:
    events.append("interrupted")
print(" ".join(events), signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


@pytest.mark.parametrize(("press", "events"), [
    (True, "started closed interrupted"),  # the run never starts; the cluster is closed
    (False, "started ran closed"),
])
def test_ctrl_c_while_a_local_cluster_starts_interrupts(press, events):
    """The command ignores SIGINT while the cluster starts (its workers inherit that); a
    Ctrl-C pressed meanwhile still interrupts it once the cluster is up (it was lost, and
    the run went on as if never interrupted)."""
    import os
    import subprocess

    from cli_helpers import as_from_a_shell

    def own_group():
        as_from_a_shell()
        os.setpgrp()

    done = subprocess.run([sys.executable, "-c", f"PRESS = {press}\n{CTRL_C_AT_START}"],
                          capture_output=True, text=True, timeout=60, preexec_fn=own_group)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [*events.split(), "True"]


@pytest.mark.slow
def test_ctrl_c_with_a_local_cluster_is_130_without_tracebacks(tmp_path):
    """A real Ctrl-C (SIGINT to the process group) while a --dask local run plays."""
    import os
    import signal
    import subprocess
    import time
    from pathlib import Path

    from cli_helpers import as_from_a_shell

    def own_group():
        as_from_a_shell()
        os.setpgrp()

    out = tmp_path / "never"
    proc = subprocess.Popen([sys.executable, "-m", "dicelab", "simulate", "-s", "ai", "-n",
                             "2000000000", "--seed", "1", "--dask", "local:1", "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=own_group)
    try:
        def children() -> list[str]:  # of any thread: the cluster starts its own
            return [c for f in Path(f"/proc/{proc.pid}/task").glob("*/children")
                    for c in f.read_text().split()]

        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and not children():
            time.sleep(0.1)
        time.sleep(8)  # the worker starts and plays
        assert proc.poll() is None, "finished before the interrupt"
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr.decode()
    assert stdout == b"" and "Traceback" not in stderr.decode(), stderr.decode()
    assert stderr.decode().strip().splitlines()[-1] == "interrupted"
    assert not out.exists()
