"""The benchmark scripts' options: a bad one is one ``error: ...`` line on stderr and exit
code 2, before any work, as on dicelab's command line.

Plain argparse and the standard library only: the scripts also run another checkout's
code (``PYTHONPATH=OTHER/src``), which need not have any given part of dicelab.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one ``error: ...`` line (argparse's own
    adds its usage lines) and exit code 2."""

    def error(self, message: str):
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def count(least: int = 1) -> Callable[[str], int]:
    """An option's type: a whole number of at least ``least``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if n < least:
            raise argparse.ArgumentTypeError(f"at least {least:,}, not {n:,}")
        return n

    return parse


def seconds(text: str) -> float:
    """An option's type: a number of seconds above zero."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, not {text}")
    return x


def names(valid: Iterable[str]) -> Callable[[str], list[str]]:
    """An option's type: a comma-separated list of names among ``valid``, each once."""
    valid = list(valid)

    def parse(text: str) -> list[str]:
        got = text.split(",")
        for name in got:
            if name not in valid:
                raise argparse.ArgumentTypeError(f"{name!r} is not one of {', '.join(valid)}")
        if len(set(got)) != len(got):
            raise argparse.ArgumentTypeError(f"a name given twice in {text!r}")
        return got

    return parse


__all__ = ["Parser", "count", "names", "seconds"]
