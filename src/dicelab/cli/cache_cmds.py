"""``dicelab cache [list|clear]``: what the on-disk table cache holds, and freeing it.

Thin shells over :func:`dicelab.cache.scan` and :func:`dicelab.cache.clear`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from dicelab.errors import UserError

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _local_time(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def list_cache(json_out: bool) -> None:
    """Print the cache directory, each entry (key, size, modified) and the total."""
    from rich.table import Table

    from dicelab import cache
    from dicelab.cli.render import console
    from dicelab.results import to_json

    found = cache.scan()
    if json_out:
        typer.echo(to_json(found.to_dict()))
        return
    typer.echo(f"cache directory: {found.directory}")
    files = found.entries + found.temporary
    if not files:
        typer.echo("no cache entries")
    else:
        t = Table()
        t.add_column("key")
        t.add_column("size", justify="right")
        t.add_column("modified")
        for f in found.entries:
            t.add_row(f.key, _mb(f.size), _local_time(f.modified))
        for f in found.temporary:
            t.add_row(f"(unfinished write) {f.path.name}", _mb(f.size),
                      _local_time(f.modified))
        console.print(t)
        typer.echo(f"total: {len(files)} file(s), {_mb(found.total_bytes)}")
    if found.other:
        typer.echo(f"{len(found.other)} other file(s) in the directory are not dicelab "
                   "entries; 'dicelab cache clear' leaves them alone")


def register(app: typer.Typer) -> None:
    """Add the ``cache`` command group (``dicelab cache`` alone = ``dicelab cache list``)."""
    cache_app = typer.Typer(help="The on-disk cache of solved tables: list or clear it.")
    app.add_typer(cache_app, name="cache")

    @cache_app.callback(invoke_without_command=True)
    def cache_main(ctx: typer.Context, json_out: JsonOpt = False) -> None:
        """The on-disk cache of solved tables (Penta values and decisions, Farkle DPs).

        Without a subcommand: the same as 'dicelab cache list'.
        """
        if ctx.invoked_subcommand is None:
            list_cache(json_out)
        elif json_out:
            raise UserError(f"put --json after the subcommand: dicelab cache "
                            f"{ctx.invoked_subcommand} --json")

    @cache_app.command("list")
    def cache_list(json_out: JsonOpt = False) -> None:
        """The cache directory, then each entry (key, size, modified) and the total."""
        list_cache(json_out)

    @cache_app.command("clear")
    def cache_clear(
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
                       ] = False,
    ) -> None:
        """Delete dicelab's cache entries (and unfinished writes); nothing else is touched.

        Tables are rebuilt when next needed (the Penta decisions take a few seconds each).
        """
        from dicelab import cache

        found = cache.scan()
        files = found.entries + found.temporary
        if not files:
            typer.echo(f"nothing to clear in {found.directory}")
            return
        if not yes:
            question = (f"delete {len(files)} file(s), {_mb(found.total_bytes)}, "
                        f"in {found.directory}?")
            try:
                ok = typer.confirm(question, default=False)
            except (typer.Abort, EOFError, OSError):
                raise UserError("no answer to the confirmation; add --yes to clear without "
                                "asking") from None
            if not ok:
                typer.echo("nothing deleted")
                return
        deleted, freed, failed = cache.clear(found.directory)
        typer.echo(f"freed {_mb(freed)}: deleted {len(deleted)} file(s) in {found.directory}")
        if failed:
            path, why = failed[0]
            raise UserError(f"could not delete {len(failed)} file(s), e.g. {path}: {why}")
