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

# piped or captured output has no terminal width: use a wide page rather than rich's 80
# columns, so tables of several seats stay one line per statistic
console = Console(width=None if sys.stdout.isatty() else 120)
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


def comparison(result) -> None:
    """Print a :class:`dicelab.compare.Comparison`: one row per pair, then a ranking."""
    from rich.table import Table

    where = f", target {result.target:,}" if result.target else ""
    t = Table(title=f"{result.game.capitalize()} head to head: rules {result.rules}{where}, "
                    f"{result.games_per_pair:,} games per pair, seed {result.seed}",
              caption="score = P(win) + P(tie)/2 of the policy; tie = its 95% CI contains 0.5")
    t.add_column("policy", no_wrap=True)
    t.add_column("vs", no_wrap=True)
    for col in ("score", "95% CI", "wins", "ties"):
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    for p in result.pairs:
        lo, hi = p.score_ci
        t.add_row(p.policy, p.opponent, f"{p.score:.4f}", f"{lo:.4f}-{hi:.4f}",
                  f"{p.wins / p.games:.2%}", f"{p.ties / p.games:.2%}", p.verdict)
    console.print(t)
    ranking = sorted(result.mean_scores().items(), key=lambda kv: -kv[1])
    console.print("mean score over its pairings: "
                  + ", ".join(f"{name} {score:.4f}" for name, score in ranking))
