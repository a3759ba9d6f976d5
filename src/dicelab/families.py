"""Policy families, the part both games share (layer 2).

The registry (:mod:`dicelab.registry`) parses a policy name into a
:class:`~dicelab.registry.PolicySpec`: its game, its family and its parameters. What a
family *does* is one :class:`Family` object per family and game, and tools ask it
instead of branching on the family's name: Farkle's in :mod:`dicelab.farkle.builtin`,
Penta's in :mod:`dicelab.penta.builtin`. This module holds what is the same in both:

* the base :class:`Family` (its name, whether its name identifies it, its tuning space
  and the names of its members);
* :func:`user_space`, the tuning space a user's policy declares (``space``: ranges or
  ``(low, high, step)`` of its keyword parameters);
* :func:`lookup`, a spec's family in one game's table of families.

>>> user_space(None)
{}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicelab.errors import UserError
from dicelab.registry import PolicySpec, parse_policy

#: A parameter's range for ``tune``: (low, high, step), integers.
Range = tuple[int, int, int]


class Family:
    """A policy family of the registry as every tool asks for it. Subclasses answer for
    one family of one game (``game``)."""

    #: the registry's family name
    name = ""
    #: the game it plays
    game = ""
    #: its name identifies it (evaluations cached under it); a user's code may change
    named = True

    def space(self, spec: PolicySpec | None = None) -> dict[str, Range]:
        """Its parameters and their ranges (low, high, step) for ``tune``; none: not a
        family to tune."""
        return {}

    def default(self, ref: str) -> PolicySpec:
        """The member ``tune`` starts from (``ref``: the family as typed)."""
        return parse_policy(ref, self.game)

    def member(self, ref: str, values: dict[str, int]) -> str:
        """The policy name of the member with these parameters."""
        params = ",".join(f"{k}={v}" for k, v in values.items())
        return f"{ref}:{params}" if params else ref


def user_space(spec: PolicySpec | None) -> dict[str, Range]:
    """The tuning space a user's policy declares: its ``space`` attribute maps some of
    its parameters to a ``range`` or ``(low, high, step)``; checked against its
    parameters."""
    if spec is None:
        return {}
    out: dict[str, Range] = {}
    for name, values in (getattr(spec.policy, "space", None) or {}).items():
        if isinstance(values, range) and len(values) and values.step > 0:
            out[name] = (values.start, values[-1], values.step)
        elif isinstance(values, tuple) and len(values) == 3 \
                and all(isinstance(v, int) for v in values) and values[2] > 0 \
                and values[1] >= values[0] and (values[1] - values[0]) % values[2] == 0:
            out[name] = values
        else:
            raise UserError(f"policy '{spec.name}': the space of {name!r} must be a "
                            "non-empty range or (low, high, step) of integers, step > 0 "
                            f"and high - low a multiple of it, not {values!r}")
        if name not in spec.params:
            raise UserError(f"policy '{spec.name}': its space names {name!r}, which is "
                            f"not one of its parameters ({', '.join(spec.params) or 'none'})")
    return out


def lookup(spec: PolicySpec, game: str, families: Mapping[str, Any]) -> Any:
    """The family of a parsed policy of ``game`` in ``families`` (another game's policy
    is refused)."""
    if spec.game != game:
        raise UserError(f"policy '{spec.name}' is a {spec.game} policy, not {game}")
    try:
        return families[spec.family]
    except KeyError:
        raise UserError(f"policy '{spec.name}' cannot play {game.capitalize()}") from None


__all__ = ["Family", "Range", "lookup", "user_space"]
