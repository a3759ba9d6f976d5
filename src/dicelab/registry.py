"""The one registry of policy names users type (RULES.md §3).

``parse_policy("threshold-300")`` returns a :class:`PolicySpec` naming the game, the
policy family and its parameters. Every name is unique across the two games today,
but the registry is written for names shared by both games: then ``game=`` decides
and, without it, the error says so.

Farkle: ``threshold-T`` (T a positive multiple of 50), ``ai`` (optionally with
parameters, ``ai:base=350,two-dice=0``), ``max-ev``, ``fastest``, ``optimal-win``. What
each Farkle family *does* (its policy object for the kernels, the engine and the
referee; its tuning space; its refusals) is its :class:`dicelab.farkle.builtin.Family`,
the one place a family's name is branched on.
Penta: ``optimal``, ``greedy``, ``optimal:OBJECTIVE``, ``penta-win``. A user's policy:
``FILE.py:NAME[:key=value,...]`` or ``package.module:NAME[...]`` (:mod:`dicelab.user_policy`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dicelab import user_policy
from dicelab.errors import UserError
from dicelab.farkle.rules import POINT_UNIT
from dicelab.text import key_values, parse_int

GAMES = ("farkle", "penta")

#: Documented defaults of the Farkle ``ai`` policy (RULES.md §3):
#: T = base + step * min(max_steps, floor(deficit / per)) - two_dice [2 dice left]
#:     - one_die [1 die left]; ``chase=1``: in the last round never bank a total that
#: would not beat the leader. The order is the kernels' parameter layout
#: (:mod:`dicelab.farkle.kernels` ``P_*``).
AI_DEFAULTS: dict[str, int] = {
    "base": 300,
    "step": 100,
    "per": 1000,
    "max-steps": 5,
    "two-dice": 50,
    "one-die": 100,
    "chase": 1,
}


@dataclass(frozen=True)
class PolicySpec:
    """A parsed policy name: ``game``, ``family`` and integer parameters."""

    game: str
    family: str
    name: str
    params: dict[str, int] = field(default_factory=dict, compare=False, hash=False)
    #: a user's policy object (family ``"user"``: :mod:`dicelab.user_policy`)
    policy: Any = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class _Family:
    game: str
    family: str
    syntax: str
    parse: Callable[[str], PolicySpec | None]


def _exact(game: str, family: str) -> Callable[[str], PolicySpec | None]:
    def parse(text: str) -> PolicySpec | None:
        return PolicySpec(game, family, family) if text == family else None

    return parse


_THRESHOLD = re.compile(r"threshold-(-?[0-9]+)")
#: The most points a policy's parameter may name (a threshold; ``ai``'s highest threshold,
#: base + step x max-steps): the kernels' 64-bit integers hold it with room to spare.
MAX_POLICY_POINTS = 10**18


def _parse_threshold(text: str) -> PolicySpec | None:
    m = _THRESHOLD.fullmatch(text)
    if not m:
        return None
    try:
        t = parse_int(m.group(1))
    except ValueError:  # more digits than any threshold has
        t = 0
    if t <= 0 or t % POINT_UNIT:
        raise UserError(f"policy '{text}': the threshold must be a positive multiple of "
                        f"{POINT_UNIT} (e.g. threshold-300)")
    if t > MAX_POLICY_POINTS:
        raise UserError(f"policy '{text}': the threshold must be at most "
                        f"{MAX_POLICY_POINTS:,} points")
    return PolicySpec("farkle", "threshold", f"threshold-{t}", {"threshold": t})


def _parse_ai(text: str) -> PolicySpec | None:
    if text != "ai" and not text.startswith("ai:"):
        return None
    params = dict(AI_DEFAULTS)
    if text.startswith("ai:"):
        known = f"ai parameters are {', '.join(f'{k}={v}' for k, v in AI_DEFAULTS.items())}"
        try:
            items = key_values(text[3:])
        except ValueError as exc:
            raise UserError(f"policy '{text}': {exc}; {known}") from None
        given: set[str] = set()
        for key, value in items:
            key = key.replace("_", "-")
            if key not in AI_DEFAULTS:
                raise UserError(f"policy '{text}': {known}")
            if key in given:
                raise UserError(f"policy '{text}': {key} is given twice")
            given.add(key)
            try:
                params[key] = parse_int(value)
            except ValueError:
                raise UserError(f"policy '{text}': {key} must be an integer") from None
        for key in ("base", "step", "two-dice", "one-die"):
            if params[key] % POINT_UNIT or params[key] < 0:
                raise UserError(f"policy '{text}': {key} must be a non-negative multiple of "
                                f"{POINT_UNIT}")
        if params["base"] <= 0 or params["per"] <= 0 or params["max-steps"] < 0:
            raise UserError(f"policy '{text}': base and per must be positive, "
                            "max-steps non-negative")
        if params["chase"] not in (0, 1):
            raise UserError(f"policy '{text}': chase is 0 or 1, not {params['chase']}")
        top = params["base"] + params["step"] * params["max-steps"]
        if max(top, params["per"], params["two-dice"], params["one-die"]) > MAX_POLICY_POINTS:
            raise UserError(f"policy '{text}': base + step x max-steps, per, two-dice and "
                            f"one-die must each be at most {MAX_POLICY_POINTS:,}")
    changed = [f"{k}={v}" for k, v in params.items() if v != AI_DEFAULTS[k]]
    name = "ai" if not changed else "ai:" + ",".join(changed)
    return PolicySpec("farkle", "ai", name, params)


def _parse_optimal_win(text: str) -> PolicySpec | None:
    """``optimal-win`` (optimal self-play) or ``optimal-win:vs=POLICY`` (the best response
    to a fixed Farkle policy, any name this registry parses)."""
    if text == "optimal-win":
        return PolicySpec("farkle", "optimal-win", "optimal-win")
    if not text.startswith("optimal-win:"):
        return None
    key, sep, rest = text[len("optimal-win:"):].partition("=")
    if key.strip() != "vs" or not sep or not rest.strip():
        raise UserError(f"policy '{text}': write optimal-win:vs=POLICY, e.g. optimal-win:vs=ai")
    try:
        opponent = parse_policy(rest, "farkle")
    except UserError as exc:
        raise UserError(f"policy '{text}': the opponent: {exc}") from None
    return PolicySpec("farkle", "optimal-win", f"optimal-win:vs={opponent.name}",
                      {"vs": opponent.name})


def _parse_penta_objective(text: str) -> PolicySpec | None:
    """``optimal:OBJECTIVE``: Penta's best play for an objective on the final score
    (:func:`dicelab.penta.objectives.parse_objective`); ``optimal:mean`` is ``optimal``."""
    if not text.lower().startswith("optimal:"):
        return None
    from dicelab.penta.objectives import parse_objective

    try:
        obj = parse_objective(text[len("optimal:"):])
    except UserError as exc:
        raise UserError(f"policy '{text}': {exc}") from None
    if obj.kind == "mean":
        return PolicySpec("penta", "optimal", "optimal")
    return PolicySpec("penta", "objective", f"optimal:{obj.name}", {"objective": obj.name})


_FAMILIES: list[_Family] = [
    _Family("farkle", "threshold", "threshold-T (T a positive multiple of 50)", _parse_threshold),
    _Family("farkle", "ai", "ai[:key=value,...]", _parse_ai),
    _Family("farkle", "max-ev", "max-ev", _exact("farkle", "max-ev")),
    _Family("farkle", "fastest", "fastest", _exact("farkle", "fastest")),
    _Family("farkle", "optimal-win", "optimal-win[:vs=POLICY]", _parse_optimal_win),
    _Family("penta", "optimal", "optimal", _exact("penta", "optimal")),
    _Family("penta", "greedy", "greedy", _exact("penta", "greedy")),
    _Family("penta", "objective", "optimal:OBJECTIVE (mean, at-least:T, utility:theta=X, "
                                  "beat:N)", _parse_penta_objective),
    _Family("penta", "penta-win", "penta-win", _exact("penta", "penta-win")),
]


def family_names(game: str) -> tuple[str, ...]:
    """The families this registry parses for one game (a user's policy, family
    ``"user"``, besides).

    >>> family_names("farkle")
    ('threshold', 'ai', 'max-ev', 'fastest', 'optimal-win')
    """
    return tuple(f.family for f in _FAMILIES if f.game == game)


def valid_names(game: str | None = None) -> str:
    """Human-readable list of accepted policy names, per game."""
    parts = []
    for g in GAMES:
        if game is not None and g != game:
            continue
        names = ", ".join(f.syntax for f in _FAMILIES if f.game == g)
        parts.append(f"{g}: {names}")
    return "; ".join(parts)


def parse_policy(text, game: str | None = None, *, users: bool = True) -> PolicySpec:
    """Parse a policy name; ``game`` (``"farkle"``/``"penta"``) restricts the search.
    ``users=False``: a user's policy is a ``UserError``, its file not run (a name read
    from a file, not typed). A spec is itself; a user's policy object (in Python) is its
    spec (:func:`dicelab.user_policy.of_object`).

    >>> parse_policy("threshold-300").params
    {'threshold': 300}
    """
    if game is not None and game not in GAMES:
        raise UserError(f"unknown game '{game}'; valid: {', '.join(GAMES)}")
    if isinstance(text, PolicySpec):
        if game is not None and text.game != game:
            raise UserError(f"policy '{text.name}' is a {text.game} policy, not {game}")
        return text
    if not isinstance(text, str):
        found = user_policy.of_object(text, game)
        return PolicySpec(found.game, "user", found.name, found.params, policy=found.policy)
    text = text.strip()
    matches = []
    for fam in _FAMILIES:
        try:
            spec = fam.parse(text)
        except UserError as exc:
            if not user_policy.looks_like_reference(text):
                raise
            module = text.partition(":")[0]  # ai:ai: the built-in ai, or a module ai?
            raise UserError(f"{exc}; '{module}' is a built-in policy, so '{text}' is read "
                            f"as its parameters: a policy of your own in {module}.py is "
                            f"named {module}.py:{text.partition(':')[2]}") from None
        if spec is not None:
            matches.append(spec)
    if not matches and user_policy.looks_like_reference(text):
        if not users:
            raise UserError(f"policy '{text}' is a user's policy, not loaded here")
        found = user_policy.load(text, game)
        return PolicySpec(found.game, "user", found.name, found.params, policy=found.policy)
    if not matches and text.endswith(":") and any(
            fam.parse(text[:-1].rstrip()) is not None for fam in _FAMILIES):
        raise UserError(f"policy '{text}': nothing after the ':' ({text[:-1].rstrip()} takes "
                        "no parameters)")
    # a file without a name in it, a path to a file that is not .py, a directory
    if not matches and (why := user_policy.misnamed(text)) is not None:
        raise UserError(f"unknown policy '{text}': {why}")
    if not matches:  # the game's own policies, when the game is known
        raise UserError(f"unknown policy '{text}'; valid policies are {valid_names(game)}")
    if game is not None:
        in_game = [m for m in matches if m.game == game]
        if not in_game:
            raise UserError(f"policy '{text}' is a {matches[0].game} policy, not {game}; "
                            f"valid are {valid_names(game)}")
        return in_game[0]
    if len({m.game for m in matches}) > 1:
        raise UserError(f"policy '{text}' exists in both games; say which with --game "
                        f"({' or '.join(sorted({m.game for m in matches}))})")
    return matches[0]


def check_distinct(given, specs: list[PolicySpec], where: str = "") -> None:
    """Refuse two of ``specs`` that are one policy, naming both as the user gave them
    (``given``: the texts or objects parsed; ``ai`` and ``ai:base=300`` are one)."""
    seen: dict[str, str] = {}
    for text, spec in zip(given, specs, strict=True):
        shown = text.strip() if isinstance(text, str) else spec.name
        if spec.name in seen:
            first = seen[spec.name]
            both = (f"{first} and {shown} are both {spec.name}" if first != shown
                    else f"{shown}")
            raise UserError(f"{where}a policy is named twice ({both})")
        seen[spec.name] = shown


def parse_seats(strategy: str, vs: list[str] | None, game: str | None = None
                ) -> tuple[str, list[PolicySpec]]:
    """Parse the seat policies of one simulation; all seats must play the same game."""
    first = parse_policy(strategy, game)
    seats = [first]
    for text in vs or []:
        spec = parse_policy(text, game or first.game)
        seats.append(spec)
    return first.game, seats
