"""The terminal consoles' class: rich's, with one difference (a reader that left)."""

from __future__ import annotations

from rich.console import Console

from dicelab.errors import ReaderGone


class CliConsole(Console):
    """rich's console, except where its reader stopped reading (``dicelab ... | head``):
    rich's own answer is exit code 1; this raises :class:`~dicelab.errors.ReaderGone` for
    :func:`dicelab.cli.main.main`, which ends the command quietly with exit code 0, as
    when the output fitted in the pipe before the reader left."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise ReaderGone
