"""How numbers print on a terminal: one format per kind of number, as docs/glossary.md
lists them. Every table and line of the CLI formats through these.

* **count**: an integer with thousands separators, ``1,234`` (games, states, points of a
  total or a target);
* **number**: a decimal with thousands separators, ``10,234.57`` (means, scores in
  points, turns, ratings);
* **percent**: a probability, a rate or a score P(win) + ½P(tie), ``53.79%`` (JSON keeps
  the fraction, 0.5379);
* **interval**: a 95% confidence interval, ``[53.58%, 54.01%]``, each end in the format of
  its value; **estimate**: a value and its interval in one cell, ``53.79% [53.58%, 54.01%]``;
* **p-value**: two significant digits, ``0.00047``, ``7.3e-05``;
* **scientific**: a value or loss of an exact ranking (``advise``) too small for its
  decimals, ``1.7424584e-10``, ``1.200e-07%``;
* **seconds** ``1.23 s``, **size** ``12.3 MB``, ``4.5 kB``, ``512 B`` (powers of 1000);
* **dice**: faces separated by spaces, ``1 1 5 2 3 4``, for both games;
* a number that is not there (NaN, None) is ``n/a``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from dicelab.text import human_bytes

#: What a missing number prints as.
MISSING = "n/a"


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def count(n, digits: int = 0) -> str:
    """``1,234`` (``digits`` is ignored: a count has none, so that every format takes the
    same arguments).

    >>> count(1234), count(None)
    ('1,234', 'n/a')
    """
    return MISSING if _missing(n) else f"{int(n):,}"


def number(x, digits: int = 2) -> str:
    """``1,234.57``.

    >>> number(1234.567), number(-0.5, 3), number(-1e-17)
    ('1,234.57', '-0.500', '0.00')
    """
    return MISSING if _missing(x) else f"{x:z,.{digits}f}"


def percent(x, digits: int = 2) -> str:
    """A fraction as a percent: ``53.79%``.

    >>> percent(0.53794), percent(0.446043205, 4), percent(-5.6e-17)
    ('53.79%', '44.6043%', '0.00%')
    """
    return MISSING if _missing(x) else f"{100 * x:z.{digits}f}%"


def ranked(x, digits: int = 2, fmt: Callable[..., str] = number) -> str:
    """A value or a loss of an exact ranking (``advise``, the coach) in ``fmt`` (:func:`number` or
    :func:`percent`) with ``digits`` decimals; a nonzero one those decimals would show
    with fewer than two significant digits gets up to :data:`MORE_DECIMALS` more, and past
    them scientific notation with ``digits`` significant digits: the tiny values and
    losses of a long shot stay apart, and only a tie's loss is zero.

    >>> ranked(0.17601877, 8), ranked(1.7424584069685088e-10, 8), ranked(0.0, 8)
    ('0.17601877', '1.7424584e-10', '0.00000000')
    >>> ranked(0.029, 2), ranked(0.004, 2), ranked(0.0004, 2), ranked(-0.25, 2)
    ('0.029', '0.0040', '4.0e-04', '-0.25')
    >>> ranked(1.2e-9, 4, percent), ranked(2.9e-4, 2, percent)
    ('1.200e-07%', '0.029%')
    """
    if _missing(x) or x == 0:
        return fmt(x, digits)
    shown, sign = (100 * x, "%") if fmt is percent else (x, "")
    for d in range(digits, digits + MORE_DECIMALS + 1):
        if abs(shown) >= 10.0 ** (1 - d):
            return fmt(x, d)
    return f"{shown:.{max(digits - 1, 1)}e}{sign}"


#: Decimals :func:`ranked` adds to show two significant digits before scientific notation.
MORE_DECIMALS = 2


def interval(lo_hi: Iterable[float], fmt: Callable[..., str] = number, digits: int = 2
             ) -> str:
    """``[lo, hi]``, both in ``fmt``; ``[n/a]`` where there is none, escaped for rich's
    markup, which takes a bare ``[n/a]`` for a tag and drops it.

    >>> interval((0.5358, 0.5401), percent), interval((float("nan"), float("nan")))
    ('[53.58%, 54.01%]', '\\\\[n/a]')
    """
    lo, hi = lo_hi
    if _missing(lo) or _missing(hi):
        return f"\\[{MISSING}]"
    return f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"


def estimate(value: float, lo_hi: Iterable[float], fmt: Callable[..., str] = number,
             digits: int = 2) -> str:
    """A value and its 95% interval: ``53.79% [53.58%, 54.01%]``; a missing value is
    ``n/a`` alone (no interval of nothing).

    >>> estimate(10234.5, (10230.0, 10239.0), number, 1), estimate(None, (None, None))
    ('10,234.5 [10,230.0, 10,239.0]', 'n/a')
    """
    if _missing(value):
        return MISSING
    return f"{fmt(value, digits)} {interval(lo_hi, fmt, digits)}"


def p_value(p: float) -> str:
    """A p-value, to two significant digits: ``0.00047``, ``7.3e-05``.

    >>> p_value(0.000473), p_value(7.3e-05), p_value(1.0)
    ('0.00047', '7.3e-05', '1')
    """
    return MISSING if _missing(p) else f"{p:.2g}"


def seconds(s: float) -> str:
    """``1.23 s``.

    >>> seconds(1.234)
    '1.23 s'
    """
    return MISSING if _missing(s) else f"{s:,.2f} s"


def size(n: int) -> str:
    """Bytes in B, kB, MB, GB ... (powers of 1000; :func:`dicelab.text.human_bytes`):
    ``12.3 MB``, ``4.5 kB``, ``512 B``.

    >>> size(12_345_678), size(4_500), size(512)
    ('12.3 MB', '4.5 kB', '512 B')
    """
    return MISSING if _missing(n) else human_bytes(n)


def dice(faces: Iterable[int]) -> str:
    """Faces separated by spaces, the same for Farkle and Penta.

    >>> dice([6, 6, 6, 2, 1])
    '6 6 6 2 1'
    """
    return " ".join(str(int(f)) for f in faces)
