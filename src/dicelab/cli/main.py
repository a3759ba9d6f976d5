"""``dicelab`` console script: the Typer app and its error handling.

Every user error (:class:`dicelab.errors.UserError`, bad option values) becomes one
line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer

try:  # typer >= 0.29 vendors its own copy of click
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - older typer on top of click
    from click import exceptions as _cx

import dicelab
from dicelab.errors import UserError

app = typer.Typer(
    name="dicelab",
    help="Monte Carlo simulation and exact strategy research for Penta and Farkle.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
solve_app = typer.Typer(help="Solve a game exactly (dynamic programming).",
                        no_args_is_help=True)
policy_app = typer.Typer(help="Inspect a policy: its decisions, as a table or a picture.",
                         no_args_is_help=True)
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


@app.command()
def simulate(
    strategy: Annotated[str, typer.Option("--strategy", "-s",
                                          help="Policy of seat 0, e.g. threshold-300, ai, "
                                               "optimal.")],
    vs: Annotated[list[str] | None, typer.Option(
        "--vs", help="Add a seat with this policy (repeatable).")] = None,
    game: Annotated[str | None, typer.Option(
        help="farkle or penta; only needed when a policy name exists in both.")] = None,
    games: Annotated[int, typer.Option("--games", "-n", help="Number of games.")] = 1_000_000,
    seed: Annotated[int | None, typer.Option(
        help="Seed; same seed, same results, whatever the thread count. "
             "Default: a fresh seed, reported.")] = None,
    target: Annotated[int | None, typer.Option(
        help="Farkle target score (a positive multiple of 50). [default: 10000]")] = None,
    rules: Annotated[str | None, typer.Option(
        help="Farkle scoring preset or TOML file; Penta rule set. [default: default/seed]")
    ] = None,
    first: Annotated[int | None, typer.Option(
        "--first", help="Farkle: seat that starts every game (default: rotates).")] = None,
    threads: Annotated[int | None, typer.Option(help="Worker threads (default: all cores).")
    ] = None,
    dask: Annotated[str | None, typer.Option(
        "--dask", metavar="ADDRESS",
        help="Run the chunks on a Dask cluster: a scheduler address (tcp://host:8786), "
             "'local' or 'local:N' (a local cluster of N worker processes). Same results.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    out: Annotated[Path | None, typer.Option(
        help="Save summary.parquet and manifest.json in this directory.")] = None,
) -> None:
    """Simulate many games and report the statistics of each seat."""
    from dicelab.cli import render
    from dicelab.results import prepare_out_dir, save_run, to_json
    from dicelab.simulate import simulate as run

    # check --out before the (long) run; files are only written after it succeeded
    if out is not None and out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    with contextlib.ExitStack() as stack:
        client = None
        if dask is not None:
            from dicelab.registry import parse_seats
            from dicelab.runner import dask_client

            parse_seats(strategy, vs, game)  # a bad policy name fails before a cluster starts
            client = stack.enter_context(dask_client(dask))
        with render.progress_bar(enabled=not json_out, total=games) as advance:
            result = run(strategy, vs, game=game, games=games, seed=seed, target=target,
                         rules=rules, first_seat=first, threads=threads, progress=advance,
                         client=client)
    if out is not None:
        prepare_out_dir(out)
        save_run(out, result, command=["dicelab", *sys.argv[1:]])
    if json_out:
        typer.echo(to_json(result.to_dict()))
    else:
        render.simulation(result)
        if out is not None:
            typer.echo(f"saved {out / 'summary.parquet'} and {out / 'manifest.json'}", err=True)


@app.command()
def compare(
    policies: Annotated[list[str], typer.Argument(
        help="Two or more policies of one game, e.g. ai max-ev threshold-250.")],
    game: Annotated[str | None, typer.Option(
        help="farkle or penta; only needed when a policy name exists in both.")] = None,
    games: Annotated[int, typer.Option("--games", "-n", help="Games per pair.")] = 1_000_000,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the comparison (each pair's own seed is derived and reported).")
    ] = None,
    target: Annotated[int | None, typer.Option(
        help="Farkle target score (a positive multiple of 50). [default: 10000]")] = None,
    rules: Annotated[str | None, typer.Option(
        help="Farkle scoring preset or TOML file; Penta rule set.")] = None,
    threads: Annotated[int | None, typer.Option(help="Worker threads (default: all cores).")
    ] = None,
    dask: Annotated[str | None, typer.Option(
        "--dask", metavar="ADDRESS", help="Run on a Dask cluster (see simulate --help).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    out: Annotated[Path | None, typer.Option(
        help="Save summary.parquet (one row per pair) and manifest.json here.")] = None,
) -> None:
    """Head to head: every pair of policies plays two-seat games; scores with 95% intervals."""
    from dicelab.cli import render
    from dicelab.compare import compare as run
    from dicelab.registry import parse_policy
    from dicelab.results import prepare_out_dir, save_run, to_json

    if out is not None and out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    if threads is not None:
        if threads <= 0:
            raise UserError(f"--threads must be positive, not {threads}")
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    n_pairs = len(policies) * (len(policies) - 1) // 2
    with contextlib.ExitStack() as stack:
        client = None
        if dask is not None:
            from dicelab.runner import dask_client

            for p in policies:  # a bad policy name fails before a cluster starts
                parse_policy(p, game)
            client = stack.enter_context(dask_client(dask))
        with render.progress_bar(enabled=not json_out, total=max(n_pairs, 1) * games
                                 ) as advance:
            result = run(policies, games=games, seed=seed, game=game, target=target,
                         rules=rules, progress=advance, client=client)
    if out is not None:
        prepare_out_dir(out)
        save_run(out, result, command=["dicelab", *sys.argv[1:]])
    if json_out:
        typer.echo(to_json(result.to_dict()))
    else:
        render.comparison(result)
        if out is not None:
            typer.echo(f"saved {out / 'summary.parquet'} and {out / 'manifest.json'}", err=True)


def _register_game_commands() -> None:
    # each module adds its commands to app / solve_app / policy_app
    from dicelab.cli import farkle_cmds, farkle_solve_cmds, penta_cmds

    farkle_cmds.register(app, solve_app, policy_app)
    farkle_solve_cmds.register(app, solve_app, policy_app)
    penta_cmds.register(app, solve_app, policy_app)


_register_game_commands()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app, turning user errors into one line + exit 2."""
    try:
        app(args=argv, prog_name="dicelab", standalone_mode=False)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except _cx.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else "")
        sys.exit(0)
    except _cx.UsageError as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except _cx.ClickException as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
