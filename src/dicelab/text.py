"""Numbers as a user types them: ASCII digits.

Python's ``int()`` and ``float()`` also read other scripts' digits (``"３００"``, full
width), and ``re``'s ``\\d`` matches every script's digits; no option takes those. An
integer is its digits alone, with a minus sign before a negative one (:func:`parse_int`,
which every integer option of the command line reads its value by): not ``2_000``,
``+5``, ``-0`` or a number with spaces around it, all of which ``int()`` reads.

Parameters as a user types them after a policy's name: :func:`key_values`.

Sizes as a user reads them: :func:`human_bytes`, the one format of a number of bytes
(the CLI's ``size``, error messages, logs).

Integers as a library caller passes them: :func:`is_whole`.

Counts in words: :func:`counted`, the one way to put a noun after a count (``1 game``,
``2 games``).
"""

from __future__ import annotations

import math
import re

import numpy as np

#: The most digits read (Python refuses to convert more than 4,300; no option needs 30).
MAX_DIGITS = 30
_INT = re.compile(r"[0-9]+|-0*[1-9][0-9]*")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def parse_int(text: str) -> int:
    """An integer in the ASCII digits 0-9 (at most :data:`MAX_DIGITS`), a minus sign
    before a negative one; ``ValueError`` saying what is wrong otherwise (a sign on
    zero or a plus sign, ``_``, spaces, other scripts' digits).

    >>> parse_int("-300"), parse_int("0"), parse_int("0050")
    (-300, 0, 50)
    >>> for text in ("1_000", "+5", "-0", " 5", "３００"):
    ...     try:
    ...         parse_int(text)
    ...     except ValueError as exc:
    ...         print(str(exc).partition(" (")[0])
    '1_000' is not an integer in the digits 0-9
    '+5' is not an integer in the digits 0-9
    '-0' is not an integer in the digits 0-9
    ' 5' is not an integer in the digits 0-9
    '３００' is not an integer in the digits 0-9
    """
    if not _INT.fullmatch(text):
        shown = repr(text) if len(text) <= 2 * MAX_DIGITS else "the value"
        raise ValueError(f"{shown} is not an integer in the digits 0-9 (a minus sign before "
                         "a negative one; no '+', '_' or spaces)")
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer has at most {MAX_DIGITS} digits, not "
                         f"{len(text.lstrip('-')):,}")
    return int(text)


def parse_decimal(text: str) -> float:
    """A finite decimal number in ASCII (``1.5``, ``-2e3``); ``ValueError`` otherwise
    (``nan``, ``inf``, other scripts' digits).

    >>> parse_decimal("0.05"), parse_decimal("1e1")
    (0.05, 10.0)
    """
    body = text.strip()
    if not _DECIMAL.fullmatch(body) or len(body) > 2 * MAX_DIGITS:
        raise ValueError(f"not a decimal number in ASCII digits: {text!r}")
    return float(body)


def as_number_like(default: int | float, value) -> int | float:
    """``value`` (a number, or its text) as a number of ``default``'s type: an integer for
    an ``int`` default, a finite number for a ``float`` one; ``ValueError`` otherwise.

    >>> as_number_like(300, "350"), as_number_like(0.5, "1e-1"), as_number_like(2.0, 3)
    (350, 0.1, 3.0)
    """
    kind = float if isinstance(default, float) else int
    wrong = ValueError(f"{value!r} is not {'an integer' if kind is int else 'a number'}")
    if isinstance(value, str):
        try:
            value = parse_decimal(value) if kind is float else parse_int(value)
        except ValueError:
            raise wrong from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or (kind is int and not float(value).is_integer()):
        raise wrong
    return kind(value)


def comma_items(text: str, what: str = "item") -> list[str]:
    """The items of a comma-separated list, stripped (none for empty text);
    ``ValueError`` for an empty one (``what``: the word for an item), which ``str.split``
    would give.

    >>> comma_items(" fours=12, penta=50 "), comma_items("")
    (['fours=12', 'penta=50'], [])
    """
    items = [item.strip() for item in text.split(",")]
    if items == [""]:
        return []
    if "" in items:
        raise ValueError(f"an empty {what} (two commas, or one at an end)")
    return items


def key_values(body: str) -> list[tuple[str, str]]:
    """``key=value,...`` as typed after a policy's name, in order, keys and values
    stripped; ``ValueError`` saying what is wrong: nothing given, an empty item (two
    commas, or one at an end), an item without ``=``, a key or a value, a key given
    twice.

    >>> key_values("base=300, step=50")
    [('base', '300'), ('step', '50')]
    >>> key_values("base=300,")
    Traceback (most recent call last):
    ...
    ValueError: an empty parameter (two commas, or one at an end)
    """
    items = comma_items(body, "parameter")
    if not items:
        raise ValueError("nothing after the ':'")
    out: list[tuple[str, str]] = []
    for item in items:
        key, sep, value = (x.strip() for x in item.partition("="))
        if not (sep and key and value):
            raise ValueError(f"parameters are key=value, not '{item}'")
        if key in dict(out):
            raise ValueError(f"{key} is given twice")
        out.append((key, value))
    return out


def is_whole(value) -> bool:
    """Whether a library argument is an integer: Python's or NumPy's (``np.int64(4)``, as
    ``argmax`` gives), never a bool.

    >>> is_whole(4), is_whole(np.int64(4)), is_whole(True), is_whole(4.0)
    (True, True, False, False)
    """
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one (``plural``: where it is not ``noun`` +
    ``s``), the count with thousands separators.

    >>> counted(1, "game"), counted(0, "turn"), counted(10_000, "state")
    ('1 game', '0 turns', '10,000 states')
    >>> counted(1, "die", "dice"), counted(3, "die", "dice")
    ('1 die', '3 dice')
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


__all__ = ["MAX_DIGITS", "as_number_like", "counted", "is_whole", "key_values",
           "parse_decimal", "parse_int"]


def human_bytes(n: float) -> str:
    """Bytes in the largest unit that keeps the number below 1,000 (powers of 1000): ``B``
    (whole), then ``kB``, ``MB``, ``GB``, ``TB``, ``PB``, ``EB`` to one decimal; past
    the exabytes, a power of ten.

    >>> human_bytes(0), human_bytes(999), human_bytes(1000), human_bytes(49_999)
    ('0 B', '999 B', '1.0 kB', '50.0 kB')
    >>> human_bytes(999_949), human_bytes(999_950), human_bytes(1.5e9), human_bytes(2.0**80)
    ('999.9 kB', '1.0 MB', '1.5 GB', '1.2e+24 B')
    """
    if abs(n) >= 1e21:
        return f"{n:.1e} B"
    if abs(round(n)) < 1000:
        return f"{n:,.0f} B"
    for unit in ("kB", "MB", "GB", "TB", "PB"):
        n /= 1000
        if abs(round(n, 1)) < 1000:
            return f"{n:,.1f} {unit}"
    return f"{n / 1000:,.1f} EB"
