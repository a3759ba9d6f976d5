"""Numbers as a user types them: ASCII digits only.

Python's ``int()`` and ``float()`` also read other scripts' digits (``"３００"``, full
width), underscores (``"1_000"``) and surrounding spaces, and ``re``'s ``\\d`` matches
every script's digits; the command line takes none of those, in any option.
"""

from __future__ import annotations

import re

#: The most digits read (Python refuses to convert more than 4,300; no option needs 30).
MAX_DIGITS = 30
_INT = re.compile(rf"[+-]?[0-9]{{1,{MAX_DIGITS}}}")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_int(text: str) -> int:
    """An integer written in ASCII digits (at most :data:`MAX_DIGITS`) with an optional
    sign; ``ValueError`` otherwise.

    >>> parse_int("-300"), parse_int("+5")
    (-300, 5)
    >>> parse_int("３００")
    Traceback (most recent call last):
    ...
    ValueError: not an integer in ASCII digits: '３００'
    """
    if not _INT.fullmatch(text):
        raise ValueError(f"not an integer in ASCII digits: {text!r}")
    return int(text)


def parse_decimal(text: str) -> float:
    """A finite decimal number in ASCII (``1.5``, ``-2e3``); ``ValueError`` otherwise
    (``nan``, ``inf``, other scripts' digits, underscores).

    >>> parse_decimal("0.05"), parse_decimal("1e1")
    (0.05, 10.0)
    """
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not a decimal number in ASCII digits: {text!r}")
    return float(text)


__all__ = ["parse_decimal", "parse_int"]
