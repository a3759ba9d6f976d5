"""``dicelab`` console script: the Typer app and its error handling.

Every user error (:class:`dicelab.errors.UserError`, bad option values) becomes one
line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from typing import Annotated

import typer

try:  # typer >= 0.29 vendors its own copy of click
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - older typer on top of click
    from click import exceptions as _cx

import dicelab
from dicelab.cli.invocation import (
    ARGV,
    INTERRUPTED,
    ctrl_c_between_compiles,
    finish_uninterrupted,
    interrupted_line,
    reproducing_command,
)
from dicelab.config import DEFAULT_GAMES, TUNE_ENUMERATE_MEMBERS
from dicelab.errors import ReaderGone, UserError
from dicelab.farkle.rules import DEFAULT_TARGET, POINT_UNIT
from dicelab.results import json_stdout

app = typer.Typer(
    name="dicelab",
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Monte Carlo simulation and exact strategy research for Penta and Farkle.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
solve_app = typer.Typer(help="Solve a game exactly (dynamic programming).",
                        no_args_is_help=True,
                        context_settings={"help_option_names": ["-h", "--help"]})
policy_app = typer.Typer(help="Inspect a policy: its decisions, as a table or a picture.",
                         no_args_is_help=True,
                         context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(solve_app, name="solve")
app.add_typer(policy_app, name="policy")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dicelab {dicelab.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Monte Carlo simulation and exact strategy research for Penta and Farkle."""


# Options shared by the commands that run games (one definition each).
GameOpt = Annotated[str | None, typer.Option(
    help="farkle or penta; only needed when a policy name exists in both.")]
SeedOpt = Annotated[int | None, typer.Option(
    help="Seed; same seed, same results, whatever the thread or worker count. "
         "Default: a fresh seed, reported.")]
TargetOpt = Annotated[int | None, typer.Option(
    help=f"Farkle target score (a positive multiple of {POINT_UNIT}). "
         f"[default: {DEFAULT_TARGET}]")]
RulesOpt = Annotated[str | None, typer.Option(
    help="Farkle scoring preset or TOML file; Penta rule set. [default: default/seed]")]
EndingOpt = Annotated[str | None, typer.Option(
    help="Farkle ending rule: last-round (the default) or first-to-bank; replaces the "
         "rules'.")]
ThreadsOpt = Annotated[int | None, typer.Option(
    help="Worker threads, at most the cores (more is capped, with a notice). "
         "[default: all cores]")]
DaskOpt = Annotated[str | None, typer.Option(
    "--dask", metavar="ADDRESS",
    help="Run the chunks on a Dask cluster: a scheduler address (tcp://host:8786), "
         "'local' or 'local:N' (a local cluster of N worker processes). Same results.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
OutOpt = Annotated[str | None, typer.Option(
    metavar="DIR", help="Save summary.parquet, manifest.json and the command's figures (a "
                        "tournament's win-matrix.png and ratings.png) in this directory, "
                        "made if missing (its parent must exist).")]

#: What a bare ``--sprt`` stands for (:class:`dicelab.sprt.SprtSpec`'s defaults).
SPRT_DEFAULTS = "elo0=0,elo1=10,alpha=0.05,beta=0.05"


def _fill_bare_sprt(argv: list[str]) -> list[str]:
    """``--sprt`` with no spec after it (the last word, or followed by an option or a
    policy name: a spec has an ``=`` and no ``:``) gets :data:`SPRT_DEFAULTS`.

    >>> _fill_bare_sprt(["tournament", "ai", "max-ev", "--sprt"])[-1]
    'elo0=0,elo1=10,alpha=0.05,beta=0.05'
    >>> _fill_bare_sprt(["tournament", "--sprt", "ai:base=300", "ai"])[2]
    'elo0=0,elo1=10,alpha=0.05,beta=0.05'
    >>> _fill_bare_sprt(["tournament", "ai", "max-ev", "--sprt", "elo1=5"])[-1]
    'elo1=5'
    """
    out: list[str] = []
    for i, word in enumerate(argv):
        out.append(word)
        if word == "--sprt":
            after = argv[i + 1] if i + 1 < len(argv) else None
            if after is None or after.startswith("-") or "=" not in after or ":" in after:
                out.append(SPRT_DEFAULTS)
        if word == "--":
            out += argv[i + 1:]
            break
    return out


def _stage(advance):
    """A ``stage(what, done, total)`` callback that shows a stage of other work on the
    progress bar of :func:`_run_games` (``advance``; none without a bar)."""
    return None if advance is None else lambda what, done, total: advance(done, total, what)


def _run_games(run, *, total: int, json_out: bool, out: str | None, dask: str | None,
               threads: int | None, check_names, unit: str = "games",
               figures: tuple[str, ...] = ()) -> None:
    """Shared shell of the commands that play games: check, run (locally or on Dask) with a
    progress bar, then save (``--out``) and print (``--json`` or tables).

    ``run(progress, client)`` does the work; ``check_names()`` parses the policy names so a
    bad one fails before a cluster starts.
    """
    from dicelab.cli import render
    from dicelab.results import RUN_FILES, check_out_dir, echo_json, prepare_out_dir, save_run

    # check --out and its files before the (long) run; they are written after it succeeded
    out = None if out is None else check_out_dir(out, (*RUN_FILES, *figures))
    if threads is not None:
        from dicelab.parallel import set_threads

        set_threads(threads)
    with contextlib.ExitStack() as stack:
        client = None
        if dask is not None:
            from dicelab.runner import dask_client

            check_names()
            client = stack.enter_context(dask_client(dask))
        with render.progress_bar(enabled=not json_out, total=total,
                                 description=unit) as advance:
            result = run(advance, client)
    saved: list = []
    if out is not None:
        finish_uninterrupted()  # the files all, or none
        prepare_out_dir(out)
        if hasattr(result, "figures"):
            from dicelab.plots import save_png

            for name, fig in result.figures().items():
                saved.append(save_png(fig, out / name))
        # the manifest last: its presence says the other files are complete
        saved[:0] = save_run(out, result, command=reproducing_command(result.seed),
                             figures=tuple(p.name for p in saved)).values()
    if json_out:
        echo_json(result.to_dict())
    else:
        render.show(result)
        if saved:
            typer.echo(f"saved {', '.join(p.name for p in saved)} in {out}", err=True)


@app.command()
def simulate(
    strategy: Annotated[str, typer.Option("--strategy", "-s",
                                          help="Policy of seat 0, e.g. threshold-300, ai, "
                                               "optimal, or your own: FILE.py:NAME.")],
    vs: Annotated[list[str] | None, typer.Option(
        "--vs", help="Add a seat with this policy (repeatable).")] = None,
    game: GameOpt = None,
    games: Annotated[int, typer.Option("--games", "-n", help="Number of games.")] = DEFAULT_GAMES,
    seed: SeedOpt = None,
    target: TargetOpt = None,
    rules: RulesOpt = None,
    ending: Annotated[str | None, typer.Option(
        help="Farkle ending rule (two or more seats): last-round (the default) or "
             "first-to-bank; replaces the rules'.")] = None,
    first: Annotated[int | None, typer.Option(
        "--first", help="Farkle: seat that starts every game (two or more seats; default: "
                        "rotates).")] = None,
    threads: ThreadsOpt = None,
    dask: DaskOpt = None,
    json_out: JsonOpt = False,
    out: OutOpt = None,
    log: Annotated[str | None, typer.Option(
        "--log", metavar="FILE", help="Also write --log-games games as a game log, played "
                                      "move by move from the same seed (docs/game-log.md).")
    ] = None,
    log_games: Annotated[int | None, typer.Option(
        "--log-games", help="Games in the --log file. [default: 100]")] = None,
) -> None:
    """Simulate many games and report the statistics of each seat."""
    from dicelab.logplay import DEFAULT_LOG_GAMES, check_log_path
    from dicelab.registry import parse_seats
    from dicelab.simulate import simulate as run

    if log is None and log_games is not None:
        raise UserError("--log-games needs --log FILE (the games are written there)")
    if log is not None:
        from dicelab.results import RUN_FILES

        log_games = DEFAULT_LOG_GAMES if log_games is None else log_games
        check_log_path(log, log_games, taken={} if out is None else
                       {"--out": [os.path.join(out, name) for name in RUN_FILES]},
                       json_out=json_out, creates=out)

    def go(progress, client):
        result = run(strategy, vs, game=game, games=games, seed=seed, target=target,
                     rules=rules, ending=ending, first_seat=first, progress=progress,
                     client=client)
        if log is not None:
            from dicelab.gamelog import write_games
            from dicelab.logplay import simulation_games
            from dicelab.results import prepare_out_dir_of

            played = simulation_games(strategy, vs, games=log_games, seed=result.seed,
                                      game=game, target=target, rules=rules, ending=ending,
                                      first_seat=first)
            finish_uninterrupted()  # the log and the --out files all, or none
            prepare_out_dir_of(log, out)
            write_games(log, played)
        return result

    _run_games(
        go,
        total=games, json_out=json_out, out=out, dask=dask, threads=threads,
        check_names=lambda: parse_seats(strategy, vs, game))
    if log is not None:
        from dicelab.text import counted

        typer.echo(f"game log written to {log} ({counted(log_games, 'game')})", err=True)


@app.command()
def compare(
    policies: Annotated[list[str], typer.Argument(
        help="Two or more policies of one game, e.g. ai max-ev threshold-250.")],
    game: GameOpt = None,
    games: Annotated[int | None, typer.Option(
        "--games", "-n", help=f"Games per pair (one two-seat table each). "
                              f"[default: {DEFAULT_GAMES}]")] = None,
    seed: SeedOpt = None,
    target: TargetOpt = None,
    rules: RulesOpt = None,
    ending: EndingOpt = None,
    exact: Annotated[bool, typer.Option(
        "--exact", help="Evaluate every pair exactly (no sampling, no --games): Farkle by "
                        "policy evaluation, Penta from the exact score distributions.")
    ] = False,
    threads: ThreadsOpt = None,
    dask: DaskOpt = None,
    json_out: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """Head to head: every pair of policies plays two-seat games; scores with 95% intervals
    (or, with --exact, exact win, tie and loss probabilities: Farkle in both seats)."""
    from dicelab.compare import compare as run
    from dicelab.registry import parse_policy

    n_pairs = len(policies) * (len(policies) - 1) // 2
    if exact:
        given = [f for f, v in (("--games", games), ("--seed", seed), ("--dask", dask),
                                ("--threads", threads)) if v is not None]
        if given:
            raise UserError(f"--exact plays no games; leave out {', '.join(given)}")
    games = DEFAULT_GAMES if games is None else games
    _run_games(
        lambda progress, client: run(policies, games=games, seed=seed, game=game,
                                     target=target, rules=rules, ending=ending, exact=exact,
                                     progress=progress, client=client,
                                     stage=_stage(progress)),
        total=max(n_pairs, 1) * (1 if exact else games), json_out=json_out, out=out,
        dask=dask, threads=threads, unit="evaluating" if exact else "games",
        check_names=lambda: [parse_policy(p, game) for p in policies])


@app.command()
def evaluate(
    policy: Annotated[str, typer.Argument(
        help="A policy: a built-in name or your own, e.g. my_policies.py:cautious.")],
    game: GameOpt = None,
    target: TargetOpt = None,
    rules: RulesOpt = None,
    ending: EndingOpt = None,
    games: Annotated[int | None, typer.Option(
        "--games", "-n", help="Penta: games simulated, and games played move by move to "
                              "find its losses. [default: 2000]")] = None,
    seed: SeedOpt = None,
    plot: Annotated[str | None, typer.Option(
        metavar="FILE.png", help="Farkle: draw where it banks beside optimal-win.")] = None,
    json_out: JsonOpt = False,
    out: Annotated[str | None, typer.Option(
        metavar="DIR", help="Save summary.parquet, manifest.json (and Farkle's banks.png) in "
                            "this directory.")] = None,
) -> None:
    """A policy's report card. Farkle, exactly: its score against optimal-win and ai in each
    seat, what the best response takes from it, points per turn, turns to the target,
    where it banks, and its costliest decisions. Penta: the mean and SD of its final score
    (exact for optimal, greedy, optimal:OBJECTIVE and a policy given as values, else
    simulated) and what it loses against optimal at each kind of decision."""
    from dicelab.registry import parse_policy

    spec = parse_policy(policy, game)
    if spec.game == "penta":
        _evaluate_penta(spec, rules=rules, games=games, seed=seed, json_out=json_out, out=out,
                        farkle_only={"--target": target, "--ending": ending, "--plot": plot})
        return
    given = [f for f, v in (("--games", games), ("--seed", seed)) if v is not None]
    if given:
        raise UserError(f"a Farkle report card is exact: leave out {', '.join(given)}")

    from dicelab.evaluate import evaluate_farkle
    from dicelab.farkle.rules import load_rules
    from dicelab.results import check_png_path, prepare_out_dir_of

    table = load_rules(rules, ending)
    plot_path = None if plot is None else check_png_path(plot, json_out=json_out,
                                                         creates=out)

    def run(progress, client):
        result = evaluate_farkle(spec, rules=table, target=target, progress=progress)
        if plot_path is not None:
            from dicelab.plots import save_png

            finish_uninterrupted()  # the evaluation is done: its files all, or none
            prepare_out_dir_of(plot_path, out)
            save_png(result.figures()["banks.png"], plot_path)
        return result

    _run_games(run, total=6, json_out=json_out, out=out, dask=None, threads=None,
               unit="evaluating", check_names=lambda: spec, figures=("banks.png",))


def _evaluate_penta(spec, *, rules, games, seed, json_out, out, farkle_only) -> None:
    """``dicelab evaluate`` of a Penta policy (:func:`dicelab.penta.evaluate.evaluate_penta`)."""
    from dicelab.penta.evaluate import DEFAULT_EVALUATE_GAMES, evaluate_penta, exact_mean
    from dicelab.penta.rules import get_rules

    given = [f for f, v in farkle_only.items() if v is not None]
    if given:
        raise UserError(f"{', '.join(given)}: Farkle only; {spec.name} is a Penta policy")
    rs = get_rules(rules)
    games = DEFAULT_EVALUATE_GAMES if games is None else games
    _run_games(lambda progress, client: evaluate_penta(spec, games, seed, progress,
                                                       rules=rs.name, stage=_stage(progress)),
               total=games if exact_mean(spec, rs) else 2 * games, json_out=json_out,
               out=out, dask=None, threads=None, check_names=lambda: spec)


@app.command()
def tournament(
    policies: Annotated[list[str], typer.Argument(
        help="Two or more policies of one game, e.g. ai max-ev threshold-300, or optimal "
             "greedy.")],
    game: GameOpt = None,
    seats: Annotated[int, typer.Option(
        help="Seats per table: 2 to 7 (Farkle), 2 or more (Penta).")] = 2,
    games: Annotated[int, typer.Option("--games", "-n", help="Games per table.")
                     ] = DEFAULT_GAMES,
    seed: SeedOpt = None,
    target: TargetOpt = None,
    rules: RulesOpt = None,
    ending: EndingOpt = None,
    crn: Annotated[bool, typer.Option(
        "--crn/--no-crn", help="Common random numbers: the tables of a group play the same "
                               "dice with the seats rotated.")] = True,
    sprt: Annotated[str | None, typer.Option(
        "--sprt", metavar="[SPEC]",
        help="Sequential test of every pair instead of a fixed number of games, e.g. "
             "elo1=5,alpha=0.01; what is left out, or a bare --sprt, takes the defaults "
             f"{SPRT_DEFAULTS}; --games is then the most per pair.")
    ] = None,
    threads: ThreadsOpt = None,
    dask: DaskOpt = None,
    json_out: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """Every seat assignment of the policies, balanced: win rates, finishing places,
    pairwise verdicts (Holm) and ratings, each with its 95% interval."""
    from dicelab.registry import parse_policy
    from dicelab.tournament import FIGURE_FILES, count_tables
    from dicelab.tournament import tournament as run

    if sprt is not None:
        from dicelab.sprt import SprtSpec, sprt_pairs

        spec = SprtSpec.parse(sprt)
        if seats != 2:
            raise UserError("--sprt tests pairs: use --seats 2")
        if dask is not None:
            raise UserError("--sprt plays in this process, not on Dask; leave out --dask")
        n_pairs = len(policies) * (len(policies) - 1) // 2
        _run_games(
            lambda progress, client: sprt_pairs(policies, spec, max_games=games, seed=seed,
                                                game=game, target=target, rules=rules,
                                                ending=ending, crn=crn, progress=progress),
            total=max(n_pairs, 1), json_out=json_out, out=out, dask=None, threads=threads,
            check_names=lambda: None)
        return
    _run_games(
        lambda progress, client: run(policies, seats=seats, games=games, seed=seed,
                                     game=game, target=target, rules=rules, ending=ending,
                                     crn=crn, progress=progress, client=client),
        total=count_tables(len(policies), max(seats, 1)) * max(games, 1),
        json_out=json_out, out=out, dask=dask, threads=threads, figures=FIGURE_FILES,
        check_names=lambda: [parse_policy(p, game) for p in policies])


@app.command()
def tune(
    family: Annotated[str, typer.Argument(
        help="The family to search: ai, threshold, or your own policy with a space "
             "(FILE.py:NAME): a Farkle bank rule, or a Penta policy (with --monte-carlo).")],
    against: Annotated[list[str], typer.Option(
        "--against", help="A policy of the field (repeatable); the score is the mean over "
                          "the field, both seatings (Penta: two-seat games).")],
    params: Annotated[str | None, typer.Option(
        help="The parameters to search, e.g. base,two-dice,one-die (default: all).")] = None,
    range_: Annotated[list[str] | None, typer.Option(
        "--range", metavar="NAME=LOW:HIGH:STEP",
        help="Narrow a parameter's range, e.g. base=200:600:50 (repeatable).")] = None,
    trials: Annotated[int | None, typer.Option(
        help="Trials of the search of a large space. A space of at most max(trials, "
             f"{TUNE_ENUMERATE_MEMBERS}) members is evaluated whole (every member); of at "
             f"most {TUNE_ENUMERATE_MEMBERS} it takes no --trials. [default: 60]")] = None,
    monte_carlo: Annotated[bool, typer.Option(
        "--monte-carlo", help="Simulate instead of the exact evaluation (common dice across "
                              "candidates; the winner re-played on fresh seeds).")] = False,
    budget: Annotated[int | None, typer.Option(
        help="--monte-carlo: games per opponent and seating. [default: 100000]")] = None,
    seed: Annotated[int | None, typer.Option(
        help="Seed of --monte-carlo and of the search of a large space (an exact "
             "evaluation of every member draws nothing). Default: a fresh seed, "
             "reported.")] = None,
    target: TargetOpt = None,
    rules: RulesOpt = None,
    ending: EndingOpt = None,
    json_out: JsonOpt = False,
    out: OutOpt = None,
) -> None:
    """Find the member of a policy family with the best score against a field: every
    member of a small space, a search of a large one."""
    from dicelab.tune import parse_ranges
    from dicelab.tune import tune as run

    ranges = parse_ranges(range_ or [])
    names = None
    if params is not None:
        names = [p.strip() for p in params.split(",")]
        if not all(names):
            raise UserError(f"--params {params!r}: name the parameters to search, e.g. "
                            "base,two-dice (leave --params out to search them all)")
    _run_games(
        lambda progress, client: run(family, against, params=names, ranges=ranges,
                                     trials=trials, monte_carlo=monte_carlo, budget=budget,
                                     seed=seed, target=target, rules=rules, ending=ending,
                                     progress=progress),
        total=max(trials or 1, 1), json_out=json_out, out=out, dask=None, threads=None,
        check_names=lambda: None)


def _register_game_commands() -> None:
    # each module adds its commands to app / solve_app / policy_app
    from dicelab.cli import (
        advise_cmds,
        analyse_cmds,
        cache_cmds,
        experiment_cmds,
        farkle_cmds,
        penta_cmds,
        play_cmds,
    )

    farkle_cmds.register(app, solve_app, policy_app)
    penta_cmds.register(app, solve_app, policy_app)
    advise_cmds.register(app, policy_app)
    analyse_cmds.register(app)
    play_cmds.register(app)
    cache_cmds.register(app)
    experiment_cmds.register(app)


_register_game_commands()


class _Notices(logging.Handler):
    """The library's notices on stderr (the current one), one line each: ``dicelab: ...``."""

    def emit(self, record: logging.LogRecord) -> None:
        typer.echo(f"dicelab: {record.getMessage()}", err=True)


def _show_notices() -> None:
    """Show ``logging`` INFO and up from ``dicelab.*`` on stderr (stdout stays clean for
    ``--json``); once per process."""
    logger = logging.getLogger("dicelab")
    if not any(isinstance(h, _Notices) for h in logger.handlers):
        logger.addHandler(_Notices(logging.INFO))
    logger.setLevel(logging.INFO)


#: The exit code of an interrupted command (128 + SIGINT), as shells report Ctrl-C.
_INTERRUPTED = 130


def _takes_an_integer(param) -> bool:
    """Whether a command's option or argument is an integer."""
    descriptor = getattr(param, "type_descriptor", None)  # typer >= 0.29
    if descriptor is not None:
        return descriptor.annotation is int
    return getattr(param.type, "name", "").startswith("integer")  # pragma: no cover


def _integer_value(param, process, ctx, value):
    """An integer option's text read by :func:`dicelab.text.parse_int` (Typer's own
    conversion, Pydantic's or click's ``int()``, also takes ``2_000``, ``+5``, ``-0``
    and spaces), then checked as Typer checks it (``min``)."""
    from dicelab.text import parse_int

    if isinstance(value, str):
        try:
            value = parse_int(value)
        except ValueError as exc:
            raise _cx.BadParameter(str(exc), ctx=ctx, param=param) from None
    return process(ctx, value)


def _read_integers(cmd) -> None:
    """Every integer option of ``cmd`` reads its value by :func:`_integer_value`."""
    for param in cmd.params:
        if _takes_an_integer(param):
            param.process_value = functools.partial(_integer_value, param,
                                                    param.process_value)


def _guard_pipes(cmd) -> None:
    """``cmd`` turns a write to a reader that left (``BrokenPipeError``) into
    :class:`~dicelab.errors.ReaderGone`, which :func:`main` ends with exit code 0 (click
    would end an ``OSError`` with exit code 1 on its way)."""
    if cmd.callback is not None:
        callback = cmd.callback

        @functools.wraps(callback)
        def guarded(*args, **kwargs):
            try:
                return callback(*args, **kwargs)
            except BrokenPipeError:
                raise ReaderGone from None

        cmd.callback = guarded


def _every_command(cmd):
    """``cmd`` and every command under it."""
    yield cmd
    for sub in getattr(cmd, "commands", {}).values():
        yield from _every_command(sub)


@functools.cache
def command():
    """The app as one click command, built once per process: Typer builds it again at
    every call of the app (about 30 ms: every command's signature read), which a process
    that runs many commands (a test session) paid each time. The app is complete when
    this module and the ones it imports are. Its integer options read their values by
    :func:`_integer_value`; its commands end quietly where the reader left
    (:func:`_guard_pipes`)."""
    cmd = typer.main.get_command(app)
    for each in _every_command(cmd):
        _read_integers(each)
        _guard_pipes(each)
    return cmd


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, turning user errors into one line + exit 2
    (a command group with nothing after it, such as ``dicelab solve``: its help on stderr,
    exit 2)."""
    _show_notices()
    ARGV[:] = _fill_bare_sprt(sys.argv[1:] if argv is None else list(argv))
    INTERRUPTED.clear()
    with _ctrl_c_restored():
        _run_command()


@contextlib.contextmanager
def _ctrl_c_restored():
    """Ctrl-C's handler as it was before the command (which may have set it aside while
    writing its results: :func:`~dicelab.cli.invocation.finish_uninterrupted`)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        with ctrl_c_between_compiles():
            yield
    finally:
        if previous is not None:  # (None: a handler not set from Python)
            signal.signal(signal.SIGINT, previous)


def _run_command() -> None:
    try:
        # without standalone mode, Typer turns Ctrl-C into a returned exit code of 130
        with json_stdout("--json" in ARGV):  # its JSON alone on standard output
            code = command()(args=list(ARGV), prog_name="dicelab", standalone_mode=False)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            if code == _INTERRUPTED:
                typer.echo(interrupted_line(), err=True)
            sys.exit(code)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except _cx.NoArgsIsHelpError as exc:  # a group with nothing after it: its help,
        typer.echo(exc.format_message(), err=True)  # as the usage error it is
        sys.exit(2)
    except _cx.UsageError as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo(interrupted_line(), err=True)
        sys.exit(_INTERRUPTED)
    except ReaderGone:  # the reader stopped reading (| head): the work is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (the last flush)
        sys.exit(0)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except _cx.ClickException as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
