"""Policies users write, named on the command line (layer 2).

A policy in a Python file or an importable module is named ``FILE.py:NAME`` or
``package.module:NAME``, with parameters after a second colon as for ``ai``:
``my_policies.py:cautious:big=800,base=300``. :func:`load` imports the file (a policy
file is code that runs, as a test file is) and takes ``NAME`` from it; the registry
(:func:`dicelab.registry.parse_policy`) makes it a ``PolicySpec`` of family ``"user"``
holding the policy object, so every tool that takes a policy name takes it.

What ``NAME`` may be, for Farkle:

* a :class:`dicelab.farkle.policy.BankRule` (a function decorated with
  :func:`~dicelab.farkle.policy.bank_rule`);
* a plain or numba-compiled function of ``(my, opp, turn_points, dice_left)`` and
  keyword parameters with number defaults: made a bank rule with the defaults of
  :func:`~dicelab.farkle.policy.bank_rule`;
* a :class:`dicelab.farkle.policy_table.PolicyTable`;
* a policy that decides move by move: an object with a ``name`` and ``decide(state) ->
  Move`` (:class:`dicelab.farkle.policy.Policy`), a class of such objects (made with no
  arguments), or a function of the decision state alone. The referee plays it
  (:mod:`dicelab.farkle.referee`): simulations run in Python, and the exact tools,
  which need a table, refuse it.

For Penta (:mod:`dicelab.penta.policy`):

* an object with ``game = "penta"``, a ``name`` and ``decide(state)``;
* a plain function of ``(card, roll, rolls_left)`` (three positional parameters).

Errors (a missing file or name, a function with the wrong signature, the user's module
raising as it is imported) are :class:`dicelab.errors.UserError`, the user's own
traceback frames included.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

from dicelab.errors import UserError, user_code_error
from dicelab.text import counted, key_values

#: ``SOURCE:NAME[:PARAMS]``: a ``.py`` file (any path) or a dotted module name.
#: (A Python name: a letter or ``_``, any script's, then letters, digits or ``_``.)
_MODULE = r"[^\W\d]\w*(?:\.[^\W\d]\w*)*"  # a dotted module name
_REFERENCE = re.compile(
    rf"^(?P<src>[^:]+\.py|{_MODULE}):(?P<obj>[^\W\d]\w*)(?::(?P<params>.*))?$")
#: What follows ``FILE.py:`` in a name: ``NAME[:PARAMS]``.
_AFTER_FILE = re.compile(r"(?P<obj>[^\W\d]\w*)(?::(?P<params>.*))?")


def _colon_paths(text: str):
    """Each way ``text`` splits as ``PATH.py:NAME[:PARAMS]`` with a ``:`` inside PATH,
    left to right: (PATH, the match of the rest)."""
    for at in re.finditer(r"\.py:", text):
        src = text[:at.end() - 1]
        if ":" in src and (rest := _AFTER_FILE.fullmatch(text, at.end())):
            yield src, rest


def _parts(text: str) -> tuple[str, str, str | None] | None:
    """``(source, NAME, parameters or None)`` of a user's policy name, or None. A path
    with ``:`` in it is split at the last ``.py:`` whose left side is an existing file
    (``C:/rules/my.py:rule``); any other name splits at its first ``:``."""
    text = text.strip()
    found = None
    for src, rest in _colon_paths(text):
        if _is("file", src):
            found = (src, rest["obj"], rest["params"])
    if found is None and (m := _REFERENCE.match(text)) is not None:
        found = (m["src"], m["obj"], m["params"])
    return found


def looks_like_reference(text: str) -> bool:
    """Whether ``text`` names a user's policy (``FILE.py:NAME`` or ``module:NAME``)."""
    return _parts(text) is not None


def misnamed(text: str) -> str | None:
    """Why ``text``, which names no policy (:func:`looks_like_reference` is false), reads
    as a try at a user's policy, in words; None if it does not."""
    text = text.strip()
    hint = "a policy in a file is named FILE.py:NAME (NAME a Python name defined in the file)"
    if text.endswith(":") and _looks_like_source(text.rstrip(":")):
        return f"a name is missing after the colon; {hint}"
    for src, _ in _colon_paths(text):  # a path with ':' in it, to no file
        return f"policy file {src} does not exist"
    src = text.partition(":")[0]
    if src != text.rstrip("/\\") and _is("dir", src):  # dir:NAME, dir/
        return f"{src} is a directory, not a .py file; {hint}"
    if re.search(r"\.py(?!\w)", text) or re.match(r"[^:]*[/\\]", text):
        return hint
    return None


def _is(kind: str, path: str) -> bool:
    """Whether ``path`` is an existing file (``kind`` ``"file"``) or directory; False for
    a name the system refuses (too long, a NUL in it)."""
    try:
        p = Path(path).expanduser()
        return p.is_file() if kind == "file" else p.is_dir()
    except (OSError, ValueError, RuntimeError):
        return False


def _looks_like_source(text: str) -> bool:
    """Whether ``text`` reads as the SOURCE of ``SOURCE:NAME``: a .py file, a path, or a
    dotted module name."""
    return bool(text) and (text.endswith(".py") or re.search(r"[/\\]", text) is not None
                           or re.fullmatch(_MODULE, text) is not None)


class Loaded(NamedTuple):
    """A user's policy, loaded: its game, the name it goes by, its parameters."""

    game: str
    name: str
    params: dict
    policy: Any


def load(text: str, game: str | None = None) -> Loaded:
    """The user's policy ``text`` names."""
    parts = _parts(text)
    if parts is None:
        raise UserError(f"'{text}' does not name a policy: write FILE.py:NAME or "
                        "package.module:NAME, then optionally :key=value,...")
    src, obj_name, params = parts
    module = _import(src)
    if not hasattr(module, obj_name):
        if getattr(module, "__file__", None) is None and hasattr(module, "__path__"):
            raise UserError(f"{src} is a directory (a namespace package), not a .py file "
                            "or a module: a policy in a file is named FILE.py:NAME")
        raise UserError(f"{src} has no '{obj_name}' ({_defines(vars(module), obj_name)})")
    policy = as_policy(getattr(module, obj_name), obj_name, f"{src}:{obj_name}")
    if params is not None:
        policy = _with_params(policy, params, text)
    policy_game = getattr(policy, "game", "farkle")
    if game is not None and game != policy_game:
        raise UserError(f"policy '{text}' is a {policy_game} policy, not {game}")
    # the name loads it again (a game log, a Dask worker): the name in the file, with the
    # parameters the policy's own name carries
    own = getattr(policy, "base_name", None)
    given = policy.name[len(own):] if own and policy.name.startswith(own) else ""
    name = f"{src}:{obj_name}{given}"
    return Loaded(policy_game, name, dict(getattr(policy, "params", {})), policy)


def of_object(obj, game: str | None = None) -> Loaded:
    """A user's policy given as an object in Python (a bank rule, a function, a class or
    an instance), as :func:`load` gives one named in a file; it goes by its ``name`` (a
    function's: its own)."""
    name = str(getattr(obj, "name", None) or getattr(obj, "__name__", None) or "policy")
    policy = as_policy(obj, name)
    policy_game = getattr(policy, "game", "farkle")
    if game is not None and game != policy_game:
        raise UserError(f"policy '{name}' is a {policy_game} policy, not {game}")
    return Loaded(policy_game, str(getattr(policy, "name", name)),
                  dict(getattr(policy, "params", {})), policy)


def references(text: str) -> list[str]:
    """The users' policies ``text`` names, each as given, without running anything:
    ``text`` itself when it is one (``FILE.py:NAME[:PARAMS]``), else each named as a
    parameter's value, after an ``=`` (``optimal-win:vs=my.py:rule``, at any depth).

    >>> references("optimal-win:vs=my.py:rule"), references("ai:base=350")
    (['my.py:rule'], [])
    """
    text = text.strip()
    if looks_like_reference(text):
        return [text]  # (its own parameters are numbers)
    found: list[str] = []
    start = 0
    while (eq := text.find("=", start)) >= 0:
        value = text[eq + 1:].strip()
        if looks_like_reference(value):
            found.append(value)  # the rest of the name is its own
            break
        start = eq + 1
    return found


def source_digest(text: str) -> str | None:
    """A digest of the code of the user's policy ``text`` names (which may change under
    the same name), without running it: the SHA-256 of its file, or of the file of the
    policy it names as a parameter's value (:func:`references`); None for a name that
    names no such file."""
    refs = references(text)
    if not refs:
        return None
    src = _parts(refs[0])[0]
    try:
        path = Path(src).expanduser() if src.endswith(".py") else Path(
            importlib.util.find_spec(src).origin)
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (AttributeError, ImportError, OSError, TypeError, ValueError):
        return None


def as_policy(obj, name: str = "policy", shown: str | None = None):
    """A user's object as a dicelab policy (see the module docstring), or the refusal
    that says what it should be (naming it ``shown``, by default ``name``)."""
    import inspect

    from dicelab.farkle.policy import BankRule, bank_rule
    from dicelab.farkle.policy_table import PolicyTable

    if isinstance(obj, BankRule | PolicyTable):
        return obj
    if isinstance(obj, type) and callable(getattr(obj, "decide", None)):
        try:  # a policy class: its instance with the defaults
            obj = obj()
        except (Exception, SystemExit) as exc:
            raise user_code_error(exc, f"making a {name} failed") from None
    if getattr(obj, "game", None) == "penta":
        if not callable(getattr(obj, "decide", None)) or not isinstance(
                getattr(obj, "name", None), str):
            raise UserError(f"'{shown or name}' says game = 'penta' but has no name and "
                            "decide(state)")
        return obj
    if callable(getattr(obj, "decide", None)):  # a Farkle policy that decides move by move
        if not isinstance(getattr(obj, "name", None), str):
            return DecideFunction(obj.decide, name)
        return obj
    if callable(obj) and _takes_one_argument(obj, inspect):
        return DecideFunction(obj, name)
    if callable(obj):
        try:
            return bank_rule(obj)
        except UserError:  # not a bank rule: a Penta function? (Penta imported only then)
            from dicelab.penta.policy import FunctionPolicy, positional_arity

            arity = positional_arity(obj)
            if arity == 3:
                return FunctionPolicy(obj, name)
            if arity in (4, None):
                raise
            raise UserError(f"'{shown or name}' takes {counted(arity, 'positional parameter')}"
                            ": a Farkle bank rule must take (my, opp, turn_points, "
                            "dice_left), a Penta policy (card, roll, rolls_left)") from None
    kind = type(obj).__name__
    article = "an" if kind[0] in "aeiouAEIOU" else "a"
    raise UserError(f"'{shown or name}' is {article} {kind}; a Farkle policy is a bank rule "
                    "(a function of my, opp, turn_points, dice_left, or one decorated with "
                    "dicelab.farkle.policy.bank_rule), a function of the decision state, "
                    "an object with decide(state), or a PolicyTable; a Penta policy a "
                    "function of (card, roll, rolls_left) or an object with game = 'penta' "
                    "and decide(state)")


class DecideFunction:
    """A function ``decide(state) -> Move`` as a policy named ``name`` (played move by
    move by the referee: :mod:`dicelab.farkle.referee`)."""

    def __init__(self, decide, name: str) -> None:
        self.decide = decide
        self.name = name

    def __repr__(self) -> str:
        return f"DecideFunction({self.name!r})"


def _takes_one_argument(function, inspect) -> bool:
    """Whether ``function`` takes exactly one argument (the decision state)."""
    try:
        ps = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(ps) == 1 and ps[0].kind in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD)


def _with_params(policy, text: str, whole: str):
    if not text.strip():
        raise UserError(f"policy '{whole}': nothing after the last ':' (parameters are "
                        ":key=value,...)")
    if not hasattr(policy, "with_params"):
        raise UserError(f"policy '{whole}' takes no parameters")
    try:
        given = dict(key_values(text))
    except ValueError as exc:
        raise UserError(f"policy '{whole}': {exc}") from None
    try:
        return policy.with_params(**given)
    except UserError as exc:  # which of the policies named
        raise UserError(f"policy '{whole}': {exc}") from None


#: Public names of a module listed when the one asked for is missing.
SHOWN_NAMES = 12


def _defines(names, missing: str) -> str:
    """What a module defines, for a missing name: the close matches first, then its first
    :data:`SHOWN_NAMES` public names, saying how many more there are.

    >>> _defines({"keep_six": 0, "bank": 0, "_x": 0}, "keep_sxi")
    "did you mean 'keep_six'? it defines: bank, keep_six"
    >>> _defines({f"p{i:02}": 0 for i in range(14)}, "q")
    'it defines: p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11 and 2 more'
    """
    found = sorted(n for n in names if not n.startswith("_"))
    close = difflib.get_close_matches(missing, found, n=3)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    more = f" and {len(found) - SHOWN_NAMES} more" if len(found) > SHOWN_NAMES else ""
    return f"{hint}it defines: {', '.join(found[:SHOWN_NAMES]) or 'nothing public'}{more}"


def _import(src: str):
    """The module ``src`` names: a file, loaded under a name of its own (its path's
    hash), or an importable module."""
    try:
        if src.endswith(".py"):
            path = Path(src).expanduser()
            if not path.is_file():
                raise UserError(f"policy file {src} does not exist" if not path.exists()
                                else f"policy file {src} is not a regular file")
            key = "dicelab_user_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
            if key in sys.modules:
                return sys.modules[key]
            spec = importlib.util.spec_from_file_location(key, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[key] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[key]
                raise
            return module
        return importlib.import_module(src)
    except UserError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and src.startswith(exc.name):
            if _is("dir", src):
                raise UserError(f"{src} is a directory, not a .py file or a module (a policy "
                                "in a file is named FILE.py:NAME)") from None
            raise UserError(f"no module named '{src}' (a policy in a file is named "
                            "FILE.py:NAME)") from None
        raise user_code_error(exc, f"importing {src} failed") from None
    except (Exception, SystemExit) as exc:  # the user's module: its own frames
        raise user_code_error(exc, f"importing {src} failed") from None


__all__ = ["DecideFunction", "Loaded", "as_policy", "load", "looks_like_reference",
           "misnamed", "references", "source_digest"]
