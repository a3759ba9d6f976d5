"""``dicelab cache [list|clear|prune]``: what the on-disk table cache holds, and freeing it.

Thin shells over :func:`dicelab.cache.scan`, :func:`dicelab.cache.clear` and
:func:`dicelab.cache.prune`. An entry's Farkle ending rule is the one its writer recorded,
or read from its key (:func:`entry_ending`).
"""

from __future__ import annotations

import functools
import sys
from datetime import datetime
from typing import Annotated

import typer

from dicelab.errors import UserError

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _size(n: int) -> str:
    from dicelab.cli.formats import size

    return size(n)


def _local_time(ts: float | None) -> str:
    return "n/a" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _confirm(question: str) -> bool | None:
    """The user's yes/no to ``question [y/N]:``, asked on stderr (stdout may go to a file,
    where a question is never seen; click's ``confirm`` writes a space to stdout), or None
    when there is no answer (end of input, no input), the question's line then ended.
    Ctrl-C at the question is an interrupt (exit 130), not a missing answer."""
    while True:
        typer.echo(f"{question} [y/N]: ", nl=False, err=True)
        try:
            line = sys.stdin.readline()
        except KeyboardInterrupt:
            typer.echo("", err=True)  # end the question's line
            raise
        except (EOFError, OSError, ValueError, AttributeError):  # no input, or closed
            line = ""
        if not line:
            typer.echo("", err=True)
            return None
        answer = line.strip().lower()
        if answer in ("y", "yes", "n", "no", ""):
            return answer in ("y", "yes")
        typer.echo("answer y or n", err=True)


#: What :func:`entry_ending` says of a Farkle entry whose ending rule it cannot read.
UNKNOWN_ENDING = "unknown"


@functools.cache
def _endings_by_digest() -> dict[str, str]:
    """The content digest of every built-in Farkle rule table under each ending rule ->
    that ending (the digest covers the ending: two endings, two digests)."""
    from dicelab.farkle.rules import ENDINGS, PRESETS

    return {rules.with_ending(e).digest(): e for rules in PRESETS.values() for e in ENDINGS}


def entry_ending(f) -> str | None:
    """The Farkle ending rule a cache entry (:class:`dicelab.cache.CacheFile`) was solved
    under. Its writer says it (``about``, :meth:`FarkleRules.cache_about
    <dicelab.farkle.rules.FarkleRules.cache_about>`); an entry written before entries said
    it is read from its key: a Farkle entry's key (``farkle-...``,
    :func:`dicelab.cache.entry_key`) holds the digest of its rules' content, the ending
    included, and no ending by name. A digest of a built-in table under one ending names
    that ending; any other digest (a rules file's) is :data:`UNKNOWN_ENDING`, never a
    guess. ``None`` for an entry the ending does not apply to (Penta's) or no key.

    >>> from pathlib import Path
    >>> from dicelab.cache import CacheFile
    >>> from dicelab.farkle.rules import PRESETS
    >>> rules = PRESETS["default"].with_ending("first-to-bank")
    >>> def ending(key, about=None):
    ...     return entry_ending(CacheFile(Path("x.npz"), key, 0, 0.0, None, about or {}))
    >>> ending(f"farkle-optimal-win-default-{rules.digest()}-t500-tol1e-10")
    'first-to-bank'
    >>> ending("farkle-optimal-win-mine-0123456789abcdef-t500"), ending(
    ...     "farkle-optimal-win-mine-0123456789abcdef-t500", {"ending": "first-to-bank"})
    ('unknown', 'first-to-bank')
    >>> ending("penta-values-seed-e09c00517801dedd")  # None: not Farkle
    """
    key = f.key
    if key is None or not key.startswith("farkle-"):
        return None
    if f.about.get("ending"):
        return f.about["ending"]
    endings = _endings_by_digest()
    found = {endings[part] for part in key.split("-") if part in endings}
    return found.pop() if len(found) == 1 else UNKNOWN_ENDING


def _file_dict(f) -> dict:
    """A cache file as JSON: :meth:`dicelab.cache.CacheFile.to_dict` and its ``ending``."""
    return {**f.to_dict(), "ending": entry_ending(f)}


def _file_table(files):
    """A rich table of cache files: key (or the unfinished write's name), size, last used,
    modified, and a Farkle entry's ending rule (blank where it does not apply)."""
    from rich.table import Table

    t = Table()
    t.add_column("key", overflow="fold")  # whole: keys often differ only at their end
    t.add_column("size", justify="right")
    t.add_column("last used")
    t.add_column("modified")
    t.add_column("ending")
    for f in files:
        name = f.key if f.key is not None else f"(unfinished write) {f.path.name}"
        t.add_row(name, _size(f.size), _local_time(f.last_used), _local_time(f.modified),
                  entry_ending(f) or "")
    return t


def list_cache(json_out: bool) -> None:
    """Print the cache directory, each entry (key, size, last used, modified, a Farkle
    entry's ending rule), the total and the automatic limit in force (or none) with where
    it comes from."""
    from dicelab import cache
    from dicelab.cli.render import console
    from dicelab.results import echo_json

    limit, source = cache.size_limit()
    found = cache.scan()
    if json_out:
        echo_json({**found.to_dict(), "entries": [_file_dict(f) for f in found.entries],
                   "temporary": [_file_dict(f) for f in found.temporary],
                   "max_bytes": limit, "max_bytes_source": source})
        return
    typer.echo(f"cache directory: {found.directory}")
    files = found.entries + found.temporary
    if not files:
        typer.echo("no cache entries")
    else:
        console.print(_file_table(files))
        typer.echo(f"total: {len(files)} file(s), {_size(found.total_bytes)}")
    typer.echo(f"automatic limit: {cache.limit_words(limit, source)}")
    if found.other:
        typer.echo(f"{len(found.other)} other file(s) in the directory are not dicelab "
                   "entries; 'dicelab cache clear' and 'prune' leave them alone")


def prune_cache(max_size: str, dry_run: bool, json_out: bool, yes: bool) -> None:
    """Delete least recently used entries until the cache fits ``max_size`` (asking
    first unless ``yes``; ``dry_run`` deletes nothing, asks nothing and refuses ``yes``);
    print what was or would be deleted and the new total."""
    import dataclasses

    from dicelab import cache
    from dicelab.cli.render import console
    from dicelab.results import echo_json

    limit = cache.parse_size(max_size, "--max-size")
    if dry_run and yes:
        raise UserError("--yes answers the question before deleting: --dry-run deletes "
                        "nothing and asks nothing")
    result = plan = cache.prune(limit, dry_run=True)
    if plan.deleted and not dry_run:
        if not yes:
            question = (f"delete {len(plan.deleted)} file(s), {_size(plan.freed)}, least "
                        f"recently used first, in {plan.directory}?")
            ok = _confirm(question)
            if ok is None:
                raise UserError("no answer to the confirmation; add --yes to prune without "
                                "asking (or --dry-run to only see what would go)")
            if not ok:
                if json_out:
                    echo_json(_prune_dict(dataclasses.replace(
                        plan, dry_run=False, deleted=[], total_after=plan.total_before)))
                else:
                    typer.echo("nothing deleted")
                return
        # planned again at deletion time: the cache may have changed while we asked
        result = cache.prune(limit, plan.directory)
    if json_out:
        echo_json(_prune_dict(result))
    else:
        typer.echo(f"cache directory: {result.directory}")
        if result.deleted:
            what, freed = ("would delete", "would free") if result.dry_run else (
                "deleted", "freed")
            typer.echo(f"{what} (least recently used first):")
            console.print(_file_table(result.deleted))
            typer.echo(f"{freed} {_size(result.freed)}: total {_size(result.total_before)} -> "
                       f"{_size(result.total_after)} (limit {_size(limit)})")
        else:
            typer.echo(f"nothing to prune: total {_size(result.total_after)} "
                       f"(limit {_size(limit)})")
        if result.total_after > limit and not result.failed:
            typer.echo("still above the limit: the rest are unfinished writes younger than "
                       f"{cache.TMP_GRACE_SECONDS / 3600:g} h (maybe in progress), left alone")
    if result.failed:
        path, why = result.failed[0]
        raise UserError(f"could not delete {len(result.failed)} file(s), e.g. {path}: {why}")


def _prune_dict(result) -> dict:
    """A :class:`dicelab.cache.PruneResult` as JSON, each file deleted with its ``ending``."""
    return {**result.to_dict(), "deleted": [_file_dict(f) for f in result.deleted]}


def register(app: typer.Typer) -> None:
    """Add the ``cache`` command group (``dicelab cache`` alone = ``dicelab cache list``)."""
    cache_app = typer.Typer(
        help="The on-disk cache of solved tables: list, clear or prune it.")
    app.add_typer(cache_app, name="cache")

    @cache_app.callback(invoke_without_command=True)
    def cache_main(ctx: typer.Context, json_out: JsonOpt = False) -> None:
        """The on-disk cache of solved tables (Penta values and decisions, Farkle DPs).

        Without a subcommand: the same as 'dicelab cache list'.
        """
        if ctx.invoked_subcommand is None:
            list_cache(json_out)
        elif json_out and ctx.invoked_subcommand == "clear":
            raise UserError("cache clear prints no JSON: leave out --json")
        elif json_out:
            raise UserError(f"put --json after the subcommand: dicelab cache "
                            f"{ctx.invoked_subcommand} --json")

    @cache_app.command("list")
    def cache_list(json_out: JsonOpt = False) -> None:
        """The cache directory, then each entry (key, size, last used, modified, and a
        Farkle entry's ending rule, or unknown), the total and the automatic limit: 10 GB,
        or $DICELAB_CACHE_MAX_SIZE if set."""
        list_cache(json_out)

    @cache_app.command("clear")
    def cache_clear(yes: YesOpt = False) -> None:
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
            question = (f"delete {len(files)} file(s), {_size(found.total_bytes)}, "
                        f"in {found.directory}?")
            ok = _confirm(question)
            if ok is None:
                raise UserError("no answer to the confirmation; add --yes to clear without "
                                "asking")
            if not ok:
                typer.echo("nothing deleted")
                return
        deleted, freed, failed = cache.clear(found.directory)
        typer.echo(f"freed {_size(freed)}: deleted {len(deleted)} file(s) in {found.directory}")
        if failed:
            path, why = failed[0]
            raise UserError(f"could not delete {len(failed)} file(s), e.g. {path}: {why}")

    @cache_app.command("prune")
    def cache_prune(
        max_size: Annotated[str, typer.Option(
            "--max-size", metavar="SIZE",
            help="Keep at most this much: bytes, or e.g. 500MB, 2GB (powers of 1000), "
                 "1.5GiB (powers of 1024).")],
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Only show what would be deleted (nothing is asked: not with "
                              "--yes).")] = False,
        json_out: JsonOpt = False,
        yes: YesOpt = False,
    ) -> None:
        """Delete dicelab's entries, least recently used first, until the cache fits SIZE.

        Unfinished writes older than an hour go too; nothing else is touched. Last use =
        the last time a command loaded the table (or stored it). Each newly stored table
        prunes the cache automatically to 10 GB, or to $DICELAB_CACHE_MAX_SIZE (same SIZE
        syntax; none for no limit).
        """
        prune_cache(max_size, dry_run, json_out, yes)
