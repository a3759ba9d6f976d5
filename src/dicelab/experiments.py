"""Named experiments: research runs that save a table and a manifest (layer 3).

An experiment is data (:class:`Experiment`): a name, a one-line description, its options
with their defaults, and a ``compute`` function over the library (no I/O) returning an
:class:`ExperimentOutput`. :func:`run_experiment` checks the options, computes, and only
then writes ``<table>.parquet``, ``<table>.csv`` and ``manifest.json`` (each file
atomically, the manifest last) to ``results/<folder>/<variant>`` under the current
directory, or to ``out``. The manifest's ``command`` is the ``dicelab experiment run``
command line that reproduces the files: every option that changes a number is spelled
out, the seed included when none was given. Adding an experiment = adding one entry to
:data:`EXPERIMENTS`; ``dicelab experiment list|run`` is a thin shell over this module.

Example (writes ``/tmp/sweep/sweep.parquet``, ``sweep.csv`` and ``manifest.json``)::

    run = run_experiment("threshold-sweep", {"target": 5000}, out=Path("/tmp/sweep"))
    run.output.summary["best_threshold"]          # 250 (default rules)
    run.command   # ['dicelab', 'experiment', 'run', 'threshold-sweep', '--rules', ...]
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dicelab.config import DEFAULT_GAMES
from dicelab.errors import UserError
from dicelab.farkle.rules import DEFAULT_TARGET, POINT_UNIT, PRESETS

if TYPE_CHECKING:
    import pandas as pd

#: ``progress(done, total)``, as for :func:`dicelab.simulate.simulate`.
Progress = Callable[[int, int], None] | None

#: The thresholds both Farkle experiments sweep (points).
SWEEP_THRESHOLDS = range(50, 2001, 50)


@dataclass(frozen=True)
class Option:
    """One option of an experiment: ``flags[0]`` is its long name on the command line.

    ``recorded``: whether the option changes the results, so that the reproducing
    command spells it out (``--dask`` only says where the same numbers are computed).
    """

    name: str
    flags: tuple[str, ...]
    kind: type
    default: Any
    help: str
    recorded: bool = True

    @property
    def flag(self) -> str:
        return self.flags[0]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "flags": list(self.flags), "type": self.kind.__name__,
                "default": self.default, "help": self.help}


RULES = Option("rules", ("--rules",), str, "default",
               f"Farkle scoring preset ({', '.join(PRESETS)}) or TOML file.")
TARGET = Option("target", ("--target",), int, DEFAULT_TARGET,
                f"Farkle target score, a positive multiple of {POINT_UNIT}.")
GAMES = Option("games", ("--games", "-n"), int, DEFAULT_GAMES,
               "Games per pair of policies (one two-seat table each).")
SEED = Option("seed", ("--seed",), int, None,
              "Seed; default: a fresh seed, recorded in the manifest's command.")
DASK = Option("dask", ("--dask",), str, None,
              "Play the games on a Dask cluster: a scheduler address, 'local' or 'local:N'. "
              "Same results.", recorded=False)


@dataclass(frozen=True)
class ExperimentOutput:
    """What an experiment computed, before anything is written.

    ``table`` is saved as ``<table_name>.parquet`` and ``.csv``; ``manifest`` holds the
    experiment's own manifest entries (rules, target, seed, ``summary``, ...); ``result``
    is the library object behind it, for rendering (e.g. a :class:`~dicelab.compare.
    Comparison`), or None.
    """

    table_name: str
    table: pd.DataFrame
    manifest: dict[str, Any]
    result: Any = None

    @property
    def summary(self) -> dict[str, Any]:
        return self.manifest.get("summary", {})


@dataclass(frozen=True)
class Experiment:
    """A named experiment.

    ``check(options)`` validates the options (``UserError``) and fills in what must be
    fixed before the run (the seed), cheaply; ``variant(options)`` names the default
    output directory ``results/<folder>/<variant>`` (``variant_help`` says it in words);
    ``compute(options, progress, client)`` does the work (no I/O; ``client``: a Dask
    client or None); ``progress_total(options)`` counts its ``progress_unit`` s.
    """

    name: str
    description: str
    options: tuple[Option, ...]
    folder: str
    variant: Callable[[dict[str, Any]], str]
    variant_help: str
    check: Callable[[dict[str, Any]], dict[str, Any]]
    compute: Callable[[dict[str, Any], Progress, Any], ExperimentOutput]
    progress_unit: str
    progress_total: Callable[[dict[str, Any]], int]
    table_name: str

    @property
    def out_files(self) -> tuple[str, ...]:
        """The files a run writes in its output directory (checked before it starts)."""
        return f"{self.table_name}.parquet", f"{self.table_name}.csv", "manifest.json"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "options": [o.to_dict() for o in self.options],
                "results": self.results_help}

    @property
    def results_help(self) -> str:
        """The default output directory, in words."""
        return f"results/{self.folder}/{self.variant_help}"


# --- the experiments -----------------------------------------------------------------------

def _check_farkle(options: dict[str, Any]) -> dict[str, Any]:
    from dicelab.farkle.rules import check_target, load_rules
    from dicelab.seeding import check_seed

    load_rules(options["rules"])
    options["target"] = check_target(options["target"])
    if "seed" in options:
        options["seed"] = check_seed(options["seed"])  # a fresh one when None
    return options


def _rules_name(options: dict[str, Any]) -> str:
    from dicelab.farkle.rules import load_rules

    return load_rules(options["rules"]).name


def _threshold_sweep(options: dict[str, Any], progress: Progress, client: Any
                     ) -> ExperimentOutput:
    """Exact expected turn score, P(bust) and expected turns to the target of every
    threshold-T, against max-ev and fastest (no simulation, no seed)."""
    from dicelab.farkle import solitaire
    from dicelab.farkle.rules import load_rules

    rules = load_rules(options["rules"])
    target = options["target"]
    sweep = solitaire.threshold_sweep(rules, SWEEP_THRESHOLDS)
    frame = sweep.to_frame()
    turns = []
    for t in sweep.thresholds:
        bank = solitaire.threshold_bank_table(int(t))
        turns.append(solitaire.race_turns(rules, target, bank)[0])
        if progress is not None:
            progress(len(turns), len(sweep.thresholds))
    frame["expected_turns_to_target"] = turns
    fastest = solitaire.solve_fastest(rules, target)
    best_by_turns = int(frame.loc[frame["expected_turns_to_target"].idxmin(), "threshold"])
    summary = {**sweep.to_dict(),
               "fastest_expected_turns_to_target": fastest.expected_turns_to_target,
               "best_threshold_by_turns": best_by_turns}
    return ExperimentOutput("sweep", frame, {"rules": rules.to_dict(), "target": target,
                                             "exact": True, "summary": summary}, sweep)


def _head_to_head(options: dict[str, Any], progress: Progress, client: Any
                  ) -> ExperimentOutput:
    """ai, optimal-win, max-ev and the best threshold-T (by exact expected turn score),
    every pair head to head (:func:`dicelab.compare.compare`)."""
    from dicelab.compare import compare
    from dicelab.farkle import solitaire
    from dicelab.farkle.rules import load_rules
    from dicelab.runner import executor_info

    best = solitaire.threshold_sweep(load_rules(options["rules"]), SWEEP_THRESHOLDS)
    policies = ["ai", "optimal-win", "max-ev", f"threshold-{best.best_threshold}"]
    result = compare(policies, games=options["games"], seed=options["seed"],
                     target=options["target"], rules=options["rules"], progress=progress,
                     client=client)
    manifest = {k: v for k, v in result.manifest().items() if k != "experiment"}
    manifest.update(executor_info(client))
    manifest["summary"] = result.to_dict()
    return ExperimentOutput("pairs", result.to_frame(), manifest, result)


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment(
        name="threshold-sweep",
        description="Farkle: exact expected turn score, P(bust) and expected turns to the "
                    "target of threshold-T, T = 50..2000, against max-ev and fastest.",
        options=(RULES, TARGET),
        folder="farkle_threshold_sweep",
        # the target only changes the last column: the committed default-target results
        # keep their name, and another target does not overwrite them
        variant=lambda options: _rules_name(options) + (
            "" if options["target"] == TARGET.default else f"-t{options['target']}"),
        variant_help=f"<rules>, or <rules>-t<target> for a target other than {DEFAULT_TARGET}",
        check=_check_farkle,
        compute=_threshold_sweep,
        progress_unit="thresholds",
        progress_total=lambda options: len(SWEEP_THRESHOLDS),
        table_name="sweep",
    ),
    Experiment(
        name="head-to-head",
        description="Farkle: ai, optimal-win, max-ev and the best threshold-T play every "
                    "pair head to head; score P(win) + P(tie)/2 with 95% intervals.",
        options=(RULES, TARGET, GAMES, SEED, DASK),
        folder="farkle_head_to_head",
        variant=lambda options: f"{_rules_name(options)}-t{options['target']}",
        variant_help="<rules>-t<target>",
        check=_check_farkle,
        compute=_head_to_head,
        progress_unit="games",
        progress_total=lambda options: 6 * options["games"],
        table_name="pairs",
    ),
)}


# --- running -------------------------------------------------------------------------------

def experiment_names() -> str:
    return ", ".join(EXPERIMENTS)


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; ``UserError`` listing the valid names otherwise."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise UserError(f"unknown experiment '{name}'; valid: {experiment_names()} "
                        "(dicelab experiment list)") from None


def resolve_options(experiment: Experiment, given: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    """The options of a run: defaults, overridden by ``given`` (None = default), checked.

    An option the experiment does not have is a ``UserError`` naming the valid ones.
    """
    given = dict(given or {})
    valid = {o.name for o in experiment.options}
    unknown = sorted(set(given) - valid)
    if unknown:
        flags = ", ".join(o.flag for o in experiment.options)
        raise UserError(f"experiment {experiment.name} has no option "
                        f"{', '.join('--' + u.replace('_', '-') for u in unknown)}; "
                        f"valid: {flags}")
    options = {o.name: o.default if given.get(o.name) is None else given[o.name]
               for o in experiment.options}
    return experiment.check(options)


def command_line(experiment: Experiment, options: Mapping[str, Any],
                 out: Path | None = None) -> list[str]:
    """``dicelab experiment run NAME --opt value ...`` reproducing a run's results.

    Every recorded option is spelled out (so a later change of a default does not change
    what the command means); ``--out`` only when the run was not written to the default
    directory.
    """
    argv = ["dicelab", "experiment", "run", experiment.name]
    for o in experiment.options:
        if o.recorded and options.get(o.name) is not None:
            argv += [o.flag, str(options[o.name])]
    if out is not None:
        argv += ["--out", str(out)]
    return argv


def default_out(experiment: Experiment, options: Mapping[str, Any],
                base: Path | None = None) -> Path:
    """``<base>/results/<folder>/<variant>``; ``base`` defaults to the current directory."""
    base = Path.cwd() if base is None else Path(base)
    return base / "results" / experiment.folder / experiment.variant(dict(options))


@dataclass
class ExperimentRun:
    """A finished run: where it wrote what, and what it computed."""

    experiment: str
    options: dict[str, Any]
    command: list[str]
    out: Path
    files: dict[str, Path]
    output: ExperimentOutput = field(repr=False)
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """What ``--json`` prints: the run, its summary and its table (one row per dict)."""
        return {"experiment": self.experiment, "options": self.options,
                "command": self.command, "out": str(self.out),
                "files": {k: str(v) for k, v in self.files.items()},
                "summary": self.output.summary,
                "table": self.output.table.to_dict(orient="records")}


def run_experiment(name: str, options: Mapping[str, Any] | None = None, *,
                   out: Path | None = None, base: Path | None = None,
                   progress: Progress = None, client: Any = None,
                   before_write: Callable[[], None] | None = None) -> ExperimentRun:
    """Run experiment ``name`` and save it; returns what was written.

    ``options``: by option name (``{"games": 10_000, "seed": 1}``), missing or None =
    default. ``out``: the output directory (default :func:`default_out` under ``base``).
    Nothing is written unless the run succeeds. ``options["dask"]`` (where the
    experiment has it) opens a Dask client for the run, unless ``client`` is given.
    ``before_write()``, if given, is called once the run has succeeded, before the first file
    is written (the command line stops Ctrl-C there: the files are written all or none).
    """
    from dicelab.results import check_out_dir, prepare_out_dir

    experiment = get_experiment(name)
    opts = resolve_options(experiment, options)
    where = Path(out) if out is not None else default_out(experiment, opts, base)
    check_out_dir(where, files=experiment.out_files,
                  option="--out" if out is not None else "the results directory")
    command = command_line(experiment, opts, None if out is None else Path(out))
    with contextlib.ExitStack() as stack:
        if client is None and opts.get("dask") is not None:
            from dicelab.runner import dask_client

            client = stack.enter_context(dask_client(opts["dask"]))
        output = experiment.compute(dict(opts), progress, client)
    if before_write is not None:
        before_write()
    where = prepare_out_dir(where)
    files, manifest = _write(where, experiment, opts, command, output)
    return ExperimentRun(experiment.name, opts, command, where, files, output, manifest)


def _write(out: Path, experiment: Experiment, options: dict[str, Any], command: list[str],
           output: ExperimentOutput) -> tuple[dict[str, Path], dict[str, Any]]:
    from dicelab.results import (
        atomic_write_parquet,
        atomic_write_text,
        policy_code,
        run_provenance,
        to_json,
        versions,
    )

    table, csv, _ = experiment.out_files
    manifest = {"command": command, "experiment": experiment.name,
                "options": {o.name: options[o.name] for o in experiment.options
                            if o.recorded},
                **output.manifest, **run_provenance(output.result, output.manifest),
                "files": {"table": table, "csv": csv},
                "versions": versions()}
    if code := policy_code(command, manifest):
        manifest["policy_code"] = code
    atomic_write_parquet(out / table, output.table)
    atomic_write_text(out / csv, output.table.to_csv(index=False))
    # the manifest goes last: its presence says the other files are complete
    atomic_write_text(out / "manifest.json",
                      json.dumps(json.loads(to_json(manifest)), indent=2) + "\n")
    return ({"table": out / table, "csv": out / csv, "manifest": out / "manifest.json"},
            manifest)
