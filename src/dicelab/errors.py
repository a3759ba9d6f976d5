"""Errors a user can cause. The CLI turns each into one line on stderr and exit code 2."""

from collections.abc import Iterator
from contextlib import contextmanager


class UserError(ValueError):
    """Bad input from the user (unknown policy, bad option value, malformed file, ...).

    The message is a single line that says what is wrong and, where possible, what
    would be accepted instead.
    """


@contextmanager
def worded_for(name: str, prefix: str = "") -> Iterator[None]:
    """Within it, a :class:`UserError` of the checks shared with the command line, worded
    for its option (``--seats must be ...``), is worded for the argument or field ``name``
    (``seats must be ...``), after ``prefix`` (a file's name, say); another refusal is
    said after ``name:``.

    >>> from dicelab.farkle.rules import check_target
    >>> with worded_for("target"):
    ...     check_target(77)
    Traceback (most recent call last):
    dicelab.errors.UserError: target must be a positive multiple of 50 (e.g. ...), not 77
    """
    try:
        yield
    except UserError as exc:
        text = str(exc)
        for said in (f"--{name} ", f"{name} "):
            if text.startswith(said):
                raise UserError(f"{prefix}{name} {text[len(said):]}") from None
        raise UserError(f"{prefix}{name}: {text}") from None


class ReaderGone(Exception):
    """Standard output's reader stopped reading (``dicelab ... | head``): the command ends
    quietly, with exit code 0 (:func:`dicelab.cli.main.main`). Not an ``OSError``, which
    the command line's framework (click) would turn into exit code 1 on its way."""


def user_code_error(exc: BaseException, what: str) -> UserError:
    """A :class:`UserError` for an exception raised by a user's own code (a policy file):
    ``what`` (the decision it was asked), then the exception and the frames of the
    user's code only, not dicelab's or the libraries' (a policy's own traceback)."""
    import traceback
    from pathlib import Path

    ours = str(Path(__file__).resolve().parent)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(ours) and "site-packages" not in f.filename
              and not f.filename.startswith("<")]
    # a UserError says what went wrong in its own words (a bank rule's, asked by a policy)
    lines = [f"{what}: {exc}" if isinstance(exc, UserError)
             else f"{what}: {type(exc).__name__}: {exc}"]
    shown = [f"  {f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}"
             for f in frames]
    for i, line in enumerate(shown):  # a recursion: the line once, then its count
        if i and line == shown[i - 1]:
            continue
        repeats = next((k for k in range(i + 1, len(shown)) if shown[k] != line),
                       len(shown)) - i - 1
        lines.append(line)
        if repeats:
            lines.append(f"  [the line above {repeats} more time{'s' * (repeats > 1)}]")
    return UserError("\n".join(lines))
