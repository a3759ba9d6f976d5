"""Errors a user can cause. The CLI turns each into one line on stderr and exit code 2."""


class UserError(ValueError):
    """Bad input from the user (unknown policy, bad option value, malformed file, ...).

    The message is a single line that says what is wrong and, where possible, what
    would be accepted instead.
    """
