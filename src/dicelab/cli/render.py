"""Terminal output shared by commands: progress bars and dispatch of result tables."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console()
err_console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(enabled: bool, total: int, description: str = "games"
                 ) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr (only on a terminal); yields a ``(done, total)`` callback."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(done: int, total_: int) -> None:
            bar.update(task, completed=done, total=total_)

        yield advance


def simulation(result) -> None:
    """Print a simulation result as tables (each game renders its own)."""
    if result.game == "farkle":
        from dicelab.cli.farkle_cmds import render_simulation
    else:
        from dicelab.cli.penta_cmds import render_simulation
    render_simulation(result, console)
