"""CLI commands of this part of dicelab (work in progress: registers nothing yet)."""

from __future__ import annotations


def register(app, solve_app, policy_app) -> None:
    """Add this module's commands to the root app and the solve/policy sub-apps."""
