"""Errors a user can cause. The CLI turns each into one line on stderr and exit code 2."""


class UserError(ValueError):
    """Bad input from the user (unknown policy, bad option value, malformed file, ...).

    The message is a single line that says what is wrong and, where possible, what
    would be accepted instead.
    """


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
    lines = [f"{what}: {type(exc).__name__}: {exc}"]
    lines += [f"  {f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}"
              for f in frames]
    return UserError("\n".join(lines))
