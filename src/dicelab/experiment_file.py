"""Experiments described in a TOML file, run resumably (layer 3).

``dicelab experiment run FILE.toml`` reads a file like::

    name = "thresholds-vs-ai"      # results/<name>/ (default: the file's stem)
    kind = "tournament"            # or "compare" (every pair, two seats)
    policies = ["ai", "max-ev", "threshold-T"]   # one game's: Farkle here, or Penta's
    seats = 2
    games = 200000                 # per table (tournament) or pair (compare)
    seed = 1                       # optional: drawn once and kept if absent
    rules = "default"              # Farkle's preset or TOML file, or a Penta rule set
    target = 10000                 # Farkle only
    ending = "last-round"          # Farkle only
    crn = true                     # tournament: common random numbers
    exact = false                  # compare: exact evaluation instead of games

    [sweep]                        # T in every policy name: threshold-100 .. threshold-1000
    T = { from = 100, to = 1000, step = 50 }

Every field is checked before anything runs, and a bad one is one error naming it. A
refusal found while running (a sweep too large for the memory limit) names the file too.

**Resumable.** A tournament's tables (a compare's pairs) are its *cells*. Each finished
cell is written at once, atomically, to ``results/.partial/<name>-<digest>/``, keyed by the
file's content (and the seed drawn for it, kept there too); when the same file runs
again, finished cells are read back instead of played, and the final files are those of
an uninterrupted run. The result files appear only when everything is done (each written
atomically, the manifest last), and the partial directory is then removed.

**What is left behind.** A run that stops (an error, Ctrl-C) keeps its partial
directory only if it holds a finished cell, something to continue from
(:func:`unfinished_run` counts them); one without is removed, with the ``results/``
directories the run made for it. A partial directory left by a killed process is what
a stop leaves: the same file continues from it (a cell cut off mid-write is played
again). A finished run also removes the partial directories of the other versions of
the same experiment (``<name>-<other digest>``: the file edited after a stop): they
would write the results just replaced. When the last unfinished run is gone, so is
``results/.partial``, and ``results/`` too if a run made it for its cells (a note in
``results/.partial`` says so, :data:`MADE_RESULTS`, for the run that finishes later)
and nothing else went in it: a run stopped and finished with ``--out`` elsewhere
leaves no empty ``results/`` behind.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dicelab.errors import UserError, worded_for

_KINDS = ("tournament", "compare")
#: A note in ``results/.partial``: the unfinished runs kept there made ``results/`` for
#: their cells, so the last of them to finish removes it if it is left empty.
MADE_RESULTS = "made-results"
_KEYS = {"name", "kind", "policies", "seats", "games", "seed", "rules", "target", "ending",
         "crn", "exact", "sweep", "description"}


@dataclass(frozen=True)
class ExperimentSpec:
    """A checked experiment file."""

    name: str
    kind: str
    policies: tuple[str, ...]
    seats: int = 2
    games: int = 1_000_000
    seed: int | None = None
    rules: str | None = None
    target: int | None = None
    ending: str | None = None
    crn: bool = True
    exact: bool = False
    description: str = ""
    source: str = field(default="", compare=False)

    def digest(self) -> str:
        """The file's content, and the code of the users' policies it names (a policy
        file edited after a stop is another experiment: its cells are played again)."""
        from dicelab.digest import text_digest
        from dicelab.user_policy import source_digest

        d = {k: v for k, v in self.__dict__.items() if k not in ("source", "description")}
        code = [source_digest(p) for p in self.policies]
        if any(code):
            d["code"] = code
        return text_digest(d)


def _typed(source: str, key: str, value, kind, what: str):
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise UserError(f"{source}: {key} must be {what}, not {_toml_value(value)}")
    return value


def _toml_value(value) -> str:
    """A value as the file spells it (``true``, not Python's ``True``)."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def parse_experiment(text: str, source: str = "<toml>") -> ExperimentSpec:
    """Check every field of an experiment file; ``UserError`` naming the first bad one."""
    from dicelab.files import parse_toml
    from dicelab.registry import parse_policy

    data = parse_toml(text, source)
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise UserError(f"{source}: unknown field{'s' * (len(unknown) > 1)} "
                        f"{', '.join(unknown)}; known: "
                        f"{', '.join(sorted(_KEYS))}")
    kind = data.get("kind", "tournament")
    if kind not in _KINDS:
        raise UserError(f"{source}: kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    if "policies" not in data:
        raise UserError(f"{source}: policies is missing (a list of policy names)")
    policies = data["policies"]
    if not isinstance(policies, list) or not all(isinstance(p, str) for p in policies):
        raise UserError(f"{source}: policies must be a list of policy names")
    if not policies:
        raise UserError(f"{source}: policies is empty: a {kind} needs at least two policies")
    names = _expand(source, policies, data.get("sweep"))
    for p in names:
        try:
            parse_policy(p)
        except UserError as exc:
            raise UserError(f"{source}: policies: {exc}") from None
    name = _typed(source, "name", data.get("name", Path(source).stem), str, "a string")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,80}", name):
        raise UserError(f"{source}: name must be letters, digits, '.', '_' or '-' (it names "
                        f"the results directory), not {name!r}")
    kw: dict[str, Any] = {"name": name, "kind": kind, "policies": tuple(names),
                          "source": source,
                          "description": _typed(source, "description",
                                                data.get("description", ""), str, "a string")}
    for key, kind_, what in (("seats", int, "an integer"), ("games", int, "an integer"),
                             ("seed", int, "a non-negative integer"),
                             ("target", int, "an integer"), ("rules", str, "a string"),
                             ("ending", str, "a string"), ("crn", bool, "true or false"),
                             ("exact", bool, "true or false")):
        if key in data:
            kw[key] = _typed(source, key, data[key], kind_, what)
    if kw.get("exact") and kind == "compare":  # as compare --exact refuses --games, --seed
        for key in ("games", "seed"):
            if key in data:
                raise UserError(f"{source}: {key}: an exact compare plays no games; leave "
                                f"{key} out")
    spec = ExperimentSpec(**kw)
    _check_values(spec)
    return spec


def _expand(source: str, policies: list[str], sweep) -> list[str]:
    if sweep is None:
        return list(policies)
    if not isinstance(sweep, dict):
        raise UserError(f"{source}: sweep must be a table like {{T = {{from = 100, to = 1000, "
                        "step = 50}}")
    if not sweep:
        raise UserError(f"{source}: sweep is empty; give it a variable (T = {{from = 100, "
                        "to = 1000, step = 50}) or leave it out")
    names = list(policies)
    for var, rng in sweep.items():
        if not re.fullmatch(r"[A-Z]", var):
            raise UserError(f"{source}: sweep.{var}: a sweep variable is one capital letter")
        if not isinstance(rng, dict) or set(rng) != {"from", "to", "step"} or not all(
                isinstance(rng[k], int) and not isinstance(rng[k], bool) for k in rng):
            raise UserError(f"{source}: sweep.{var} must be {{from = A, to = B, step = C}} "
                            "with integers")
        lo, hi, step = rng["from"], rng["to"], rng["step"]
        if step <= 0 or hi < lo or (hi - lo) // step >= 1000 or (hi - lo) % step:
            raise UserError(f"{source}: sweep.{var}: want from <= to, step > 0, to - from a "
                            "multiple of step (to is swept too), at most 1,000 values")
        out = []
        for p in names:
            if re.search(rf"\b{var}\b", p):
                out += [re.sub(rf"\b{var}\b", str(v), p) for v in range(lo, hi + 1, step)]
            else:
                out.append(p)
        if out == names:
            raise UserError(f"{source}: sweep.{var}: no policy name has {var} in it")
        names = out
    return names


def _check_values(spec: ExperimentSpec) -> None:
    """The values, with the library's own checks (each error names its field); rules,
    ending and target are checked as the policies' game takes them."""
    from dicelab.seeding import check_games, check_seed
    from dicelab.tournament import TABLE_GAMES, check_policies

    src = spec.source
    # a field the kind does not use is refused, not silently ignored
    if spec.kind == "tournament" and spec.exact:
        raise UserError(f"{src}: exact: applies to kind = \"compare\" only (a tournament "
                        "plays games)")
    if spec.kind == "compare" and spec.seats != 2:
        raise UserError(f"{src}: seats: a compare plays two-seat games; seats = "
                        f"{spec.seats} needs kind = \"tournament\"")
    if spec.kind == "compare" and not spec.crn:
        raise UserError(f"{src}: crn: applies to kind = \"tournament\" only")

    def named(key: str, check):
        with worded_for(key, f"{src}: "):  # "seats must be ...", not "--seats must be ..."
            return check()

    specs = named("policies", lambda: check_policies(list(spec.policies), 2, None,
                                                     spec.kind))
    tables = TABLE_GAMES[specs[0].game]
    named("seats", lambda: tables.check(specs, spec.seats))  # the seats the game plays
    named("games", lambda: check_games(spec.games, "games"))
    if spec.seed is not None:
        named("seed", lambda: check_seed(spec.seed))
    if spec.ending is not None:
        named("ending", lambda: tables.make(None, spec.ending, None))
    named("rules", lambda: tables.make(spec.rules, spec.ending, None))
    named("target", lambda: tables.make(None, None, spec.target))


def read_experiment(path: Path | str) -> ExperimentSpec:
    """An experiment file, read with a size limit and checked."""
    from dicelab.farkle.rules import read_rules_file

    path = Path(path)
    return parse_experiment(read_rules_file(path, "experiment file"), source=str(path))


class CellStore:
    """Finished cells of one experiment run, one ``.npz`` per cell, written atomically."""

    def __init__(self, directory: Path):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        f = self.directory / f"{key}.npz"
        if not f.is_file():
            return None
        try:
            with np.load(f, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except Exception:  # a damaged cell is played again
            return None

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        import io

        from dicelab.files import write_output

        buf = io.BytesIO()
        np.savez(buf, **arrays)
        write_output(self.directory / f"{key}.npz", buf.getvalue(), "experiment cell",
                     in_place=False)


def run_experiment_file(path: Path | str, *, out: Path | None = None, base: Path | None = None,
                        seed: int | None = None, progress=None, before_write=None
                        ) -> tuple[Any, Path, dict[str, Path]]:
    """Run (or finish) an experiment file; returns (result, directory, files written).

    ``seed`` replaces the file's. The manifest's command names the file, and the seed when
    it is not the file's (the one drawn, or ``seed``), so it reproduces the files. What a
    run that stops leaves behind: see the module docstring. ``before_write()``, if given, is
    called once the games are played, before the first file is written (the command line
    stops Ctrl-C there, so that the files are written all or none)."""
    from dicelab.results import RUN_FILES, check_out_dir, prepare_out_dir, save_run
    from dicelab.seeding import fresh_seed
    from dicelab.tournament import FIGURE_FILES

    spec = _with_seed(read_experiment(path), seed)
    base = Path.cwd() if base is None else Path(base)
    figures = FIGURE_FILES if spec.kind == "tournament" else ()
    where = check_out_dir(out if out is not None else base / "results" / spec.name,
                          (*RUN_FILES, *figures),
                          option="--out" if out is not None else "the results directory")
    partial = _partial_dir(spec, base)
    check_out_dir(partial, ("state.json",), option="the unfinished runs' directory")
    made = [d for d in (partial.parent.parent, partial.parent) if not d.exists()]
    try:
        store = CellStore(partial)
        if partial.parent.parent in made:  # for a later run, should this one stop
            from dicelab.results import atomic_write_text

            atomic_write_text(partial.parent / MADE_RESULTS,
                              "results/ was made for the unfinished runs kept here\n",
                              "the unfinished runs' directory")
        state = partial / "state.json"
        if spec.exact:  # no games, no seed
            seed = None
        elif spec.seed is not None:
            seed = spec.seed
        elif state.exists():
            seed = _saved_seed(state)
        else:
            from dicelab.results import atomic_write_text

            seed = fresh_seed()
            atomic_write_text(state, json.dumps({"seed": seed}))
        try:
            result = _run(spec, seed, store, progress)
        except UserError as exc:  # a refusal while running (the memory limit): of this file
            raise UserError(f"{spec.source}: {exc}") from None
    except BaseException:  # an error or Ctrl-C: keep only what a new run continues from
        if not _cells(partial):
            _remove(partial, made)
        raise
    if before_write is not None:
        before_write()
    prepare_out_dir(where)
    command = ["dicelab", "experiment", "run", str(path)] + (
        ["--out", str(out)] if out is not None else []) + (
        ["--seed", str(seed)] if seed is not None and read_experiment(path).seed != seed
        else [])
    figures = {}
    if hasattr(result, "figures"):
        from dicelab.plots import save_png

        for name, fig in result.figures().items():
            figures[name] = save_png(fig, where / name)
    # the manifest last: its presence says the other files are complete
    files = {**save_run(where, result, command=command, figures=tuple(figures)), **figures}
    # the unfinished runs of other versions of this experiment would write these results
    for other in _other_versions(spec, base):
        shutil.rmtree(other, ignore_errors=True)
    _remove(partial, made)
    return result, where, files


#: An unfinished run's directory: ``<name>-<12 hex digits of the file's digest>``.
_PARTIAL_NAME = re.compile(r".+-[0-9a-f]{12}")


def _with_seed(spec: ExperimentSpec, seed: int | None) -> ExperimentSpec:
    import dataclasses

    from dicelab.seeding import check_seed

    if seed is not None and spec.exact:
        raise UserError(f"--seed: {spec.source} is an exact compare, which plays no games; "
                        "leave out --seed")
    return spec if seed is None else dataclasses.replace(spec, seed=check_seed(seed))


def _partial_dir(spec: ExperimentSpec, base: Path) -> Path:
    return base / "results" / ".partial" / f"{spec.name}-{spec.digest()[:12]}"


def _cells(directory: Path) -> int:
    """Finished cells in an unfinished run's directory (0 if there is none)."""
    try:
        return sum(1 for f in directory.glob("*.npz") if f.is_file())
    except OSError:
        return 0


def unfinished_run(path: Path | str, *, base: Path | None = None, seed: int | None = None
                   ) -> tuple[Path, int]:
    """Where the finished cells of an unfinished run of the experiment file at ``path``
    (with ``seed`` in place of the file's) are kept, and how many there are (0: none, or
    no such run): what :func:`run_experiment_file` continues from."""
    spec = _with_seed(read_experiment(path), seed)
    partial = _partial_dir(spec, Path.cwd() if base is None else Path(base))
    return partial, _cells(partial)


def _other_versions(spec: ExperimentSpec, base: Path) -> list[Path]:
    """The unfinished runs' directories of this experiment's other versions (the file, a
    policy file of it or the seed changed since they stopped)."""
    partial = _partial_dir(spec, base)
    if not partial.parent.is_dir():
        return []
    return sorted(d for d in partial.parent.iterdir()
                  if d != partial and _PARTIAL_NAME.fullmatch(d.name)
                  and d.name.rpartition("-")[0] == spec.name and d.is_dir())


def earlier_versions(path: Path | str, *, base: Path | None = None, seed: int | None = None
                     ) -> list[tuple[Path, int]]:
    """The unfinished runs of other versions of the experiment file at ``path`` (with
    ``seed`` in place of the file's), each with its finished cells: a run of this version
    does not continue from them, and its finished run deletes them."""
    spec = _with_seed(read_experiment(path), seed)
    found = _other_versions(spec, Path.cwd() if base is None else Path(base))
    return [(d, n) for d in found if (n := _cells(d))]


def _remove(partial: Path, made: list[Path]) -> None:
    """Remove an unfinished run's directory; if no other run is unfinished,
    ``results/.partial`` too, and ``results/`` when it was made for the partial cells (by
    this run, in ``made``, or by an earlier one that stopped: :data:`MADE_RESULTS`) and is
    left empty."""
    shutil.rmtree(partial, ignore_errors=True)
    results = partial.parent.parent
    note = partial.parent / MADE_RESULTS
    try:
        others = [p for p in partial.parent.iterdir() if p.name != MADE_RESULTS]
    except OSError:  # no results/.partial
        others = []
    if others:  # another run is unfinished: its cells need both
        return
    if note.is_file() and results not in made:
        made = [results, *made]
    with contextlib.suppress(OSError):
        note.unlink()
    for d in (partial.parent, *(d for d in reversed(made) if d != partial.parent)):
        with contextlib.suppress(OSError):
            d.rmdir()  # only if left empty


def _saved_seed(state: Path) -> int:
    """The seed an unfinished run drew (its cells were played with it)."""
    from dicelab.files import read_input

    try:
        seed = json.loads(read_input(state, f"the unfinished run's {state}", 4096))["seed"]
        if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
            return seed
    except (ValueError, TypeError, KeyError):
        pass
    raise UserError(f"{state}: the unfinished run's seed is unreadable; delete "
                    f"{state.parent} to start the run again")


def _run(spec: ExperimentSpec, seed: int, store: CellStore, progress):
    if spec.kind == "tournament":
        from dicelab.tournament import tournament

        return tournament(list(spec.policies), seats=spec.seats, games=spec.games, seed=seed,
                          target=spec.target, rules=spec.rules, ending=spec.ending,
                          crn=spec.crn, progress=progress, store=store)
    from dicelab.compare import compare

    return compare(list(spec.policies), games=spec.games, seed=seed, target=spec.target,
                   rules=spec.rules, ending=spec.ending, exact=spec.exact, progress=progress,
                   store=store)
