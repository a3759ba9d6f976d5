"""``dicelab experiment list|run``: the named experiments of :mod:`dicelab.experiments`.

``run`` has one subcommand per experiment, generated from its options, so that
``dicelab experiment run head-to-head --help`` shows that experiment's options and an
option it does not have is a one-line error. Thin shells over
:func:`dicelab.experiments.run_experiment`.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

try:  # typer >= 0.29 vendors its own copy of click
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - older typer on top of click
    from click import exceptions as _cx

from dicelab.errors import UserError
from dicelab.experiments import EXPERIMENTS, Experiment, get_experiment

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


class _ExperimentGroup(TyperGroup):
    """``run``'s group: an unknown experiment is one line naming the valid ones."""

    def resolve_command(self, ctx, args):
        if args and args[0].lower().endswith(".toml"):  # an experiment file
            return super().resolve_command(ctx, [_FILE_COMMAND, *args])
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            if os.path.lexists(args[0]):  # a file meant as an experiment file
                raise UserError(f"experiment file '{args[0]}': its name must end in .toml "
                                f"(or name an experiment: {', '.join(EXPERIMENTS)})")
            get_experiment(args[0])  # raises the UserError
        return super().resolve_command(ctx, args)


#: The (hidden) command that runs an experiment file: ``dicelab experiment run FILE.toml``.
_FILE_COMMAND = "from-file"


class _ExperimentCommand(TyperCommand):
    """One experiment's command: an unknown option is one line naming the valid ones."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except _cx.NoSuchOption as exc:
            valid = [f for p in self.params for f in p.opts if f.startswith("--")]
            raise UserError(f"experiment {self.name} has no option {exc.option_name}; "
                            f"valid: {', '.join(valid)}") from None


def list_experiments(json_out: bool) -> None:
    """Every experiment: name, description, options with defaults."""
    from rich.table import Table

    from dicelab.cli.render import console
    from dicelab.results import echo_json

    if json_out:
        echo_json({"experiments": [e.to_dict() for e in EXPERIMENTS.values()]})
        return
    t = Table(title="experiments: dicelab experiment run NAME --option value ...",
              show_lines=True)
    t.add_column("name", no_wrap=True)
    t.add_column("description")
    t.add_column("options (default)")
    for e in EXPERIMENTS.values():
        opts = "\n".join(f"{'/'.join(o.flags)} ({'none' if o.default is None else o.default})"
                          for o in e.options)
        t.add_row(e.name, e.description,
                  f"{opts}\n--out DIR ({e.results_help})\n--json")
    console.print(t)


def _render_sweep(run) -> None:
    from rich.table import Table

    from dicelab.cli import formats as F
    from dicelab.cli.render import console

    s = run.output.summary
    target = run.options["target"]
    t = Table(title=f"Farkle threshold-T, rules {s['rules']}: exact, per turn and to reach "
                    f"{F.count(target)}")
    for col in ("threshold", "expected turn score", "P(bust)", "gap to max-ev",
                "expected turns to target", "best"):
        t.add_column(col, justify="left" if col == "best" else "right", no_wrap=True)
    for row in run.output.table.itertuples(index=False):
        best = [what for what, key in (("by turn score", "best_threshold"),
                                       ("by turns", "best_threshold_by_turns"))
                if int(row.threshold) == s[key]]
        t.add_row(F.count(row.threshold), F.number(row.expected_turn_score, 4),
                  F.percent(row.p_bust, 4), F.number(row.gap_to_max_ev, 4),
                  F.number(row.expected_turns_to_target, 4), ", ".join(best))
    console.print(t)
    console.print(f"best threshold {s['best_threshold']} "
                  f"({F.number(s['best_expected_turn_score'], 4)} points per turn), max-ev "
                  f"{F.number(s['max_ev_expected_turn_score'], 4)} (gap "
                  f"{F.number(s['gap_of_best_to_max_ev'], 4)}); to reach {F.count(target)}: "
                  f"best threshold {s['best_threshold_by_turns']}, fastest "
                  f"{F.number(s['fastest_expected_turns_to_target'], 4)} turns")


def _render_comparison(run) -> None:
    from dicelab.cli import render

    render.comparison(run.output.result)


def _render_generic(run) -> None:
    from rich.table import Table

    from dicelab.cli.render import console

    t = Table(title=run.experiment)
    for col in run.output.table.columns:
        t.add_column(str(col))
    for row in run.output.table.itertuples(index=False):
        t.add_row(*(str(v) for v in row))
    console.print(t)


#: How a run is shown on a terminal (an experiment without an entry: its table as is).
RENDERERS = {"threshold-sweep": _render_sweep, "head-to-head": _render_comparison}


def run_command(experiment: Experiment, given: dict[str, Any], out: str | None,
                json_out: bool) -> None:
    """Check the options, run with a progress bar, print tables or one JSON object."""
    from dicelab.cli import render
    from dicelab.cli.invocation import finish_uninterrupted
    from dicelab.experiments import resolve_options, run_experiment
    from dicelab.results import check_out_dir, echo_json

    # checked (and the seed drawn) before the progress bar starts
    options = resolve_options(experiment, given)
    out = None if out is None else check_out_dir(out, experiment.out_files)
    with render.progress_bar(enabled=not json_out, total=experiment.progress_total(options),
                             description=experiment.progress_unit) as advance:
        run = run_experiment(experiment.name, options, out=out, progress=advance,
                             before_write=finish_uninterrupted)
    if json_out:
        echo_json(run.to_dict())
        return
    RENDERERS.get(experiment.name, _render_generic)(run)
    typer.echo(f"saved {', '.join(p.name for p in run.files.values())} in {run.out}", err=True)
    typer.echo(f"reproduce: {' '.join(run.command)}", err=True)


def _command_for(experiment: Experiment):
    """A Typer command whose options are the experiment's, plus ``--out`` and ``--json``."""

    def command(**kwargs: Any) -> None:
        out = kwargs.pop("out")
        json_out = kwargs.pop("json_out")
        run_command(experiment, kwargs, out, json_out)

    params = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default,
                                annotation=Annotated[o.kind | None,
                                                     typer.Option(*o.flags, help=o.help)])
              for o in experiment.options]
    params += [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Annotated[str | None, typer.Option(
                                     "--out", help=f"Output directory. [default: "
                                                   f"{experiment.results_help} under the "
                                                   "current directory]")]),
               inspect.Parameter("json_out", inspect.Parameter.KEYWORD_ONLY, default=False,
                                 annotation=JsonOpt)]
    command.__signature__ = inspect.Signature(params)
    command.__name__ = experiment.name.replace("-", "_")
    command.__doc__ = experiment.description
    return command


def register(app: typer.Typer) -> None:
    """Add ``dicelab experiment list`` and ``dicelab experiment run NAME``."""
    experiment_app = typer.Typer(help="Named experiments: list them, run one (saved with a "
                                      "manifest that reproduces it).", no_args_is_help=True)
    app.add_typer(experiment_app, name="experiment")
    run_app = typer.Typer(cls=_ExperimentGroup, no_args_is_help=True,
                          help="Run an experiment: dicelab experiment run NAME [options]; "
                               "results go to results/<experiment>/<variant> unless --out "
                               "(dicelab experiment list shows where). Or run your own "
                               "tournament or compare, described in a TOML file, resumably: "
                               "dicelab experiment run FILE.toml [--out DIR] [--seed S] "
                               "[--json]; results go to results/<name> unless --out.")
    experiment_app.add_typer(run_app, name="run")

    @experiment_app.command("list")
    def experiment_list(json_out: JsonOpt = False) -> None:
        """Every experiment: name, description, options with their defaults."""
        list_experiments(json_out)

    for experiment in EXPERIMENTS.values():
        run_app.command(experiment.name, cls=_ExperimentCommand,
                        help=experiment.description)(_command_for(experiment))

    @run_app.command(_FILE_COMMAND, hidden=True)
    def run_file(
        path: Annotated[str, typer.Argument(help="An experiment file (TOML).")],
        out: Annotated[str | None, typer.Option(
            "--out", help="Output directory. [default: results/<name>]")] = None,
        seed: Annotated[int | None, typer.Option(
            "--seed", help="Replaces the file's seed.")] = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Run an experiment file (docs: dicelab.experiment_file); an interrupted run
        continues where it stopped when run again."""
        from dicelab.cli import render
        from dicelab.cli.invocation import INTERRUPTED, finish_uninterrupted
        from dicelab.experiment_file import (
            earlier_versions,
            read_experiment,
            run_experiment_file,
            unfinished_run,
        )
        from dicelab.results import check_out_dir, echo_json

        spec = read_experiment(path)  # checked before the progress bar starts
        where = None if out is None else check_out_dir(out)
        cells = "table(s)" if spec.kind == "tournament" else "pair(s)"
        partial, done = unfinished_run(path, seed=seed)
        if done:
            typer.echo(f"continuing an unfinished run from {partial}: {done} finished "
                       f"{cells} found", err=True)
        for old, n in earlier_versions(path, seed=seed):
            typer.echo(f"not continuing the unfinished run in {old} ({n} finished {cells}): "
                       "the file, a policy file it names or the seed has changed since; "
                       "it is deleted when this run finishes", err=True)
        try:
            with render.progress_bar(enabled=not json_out, total=max(len(spec.policies), 1),
                                     description="playing") as advance:
                result, where, files = run_experiment_file(
                    path, out=where, seed=seed, progress=advance,
                    before_write=finish_uninterrupted)
        except KeyboardInterrupt:
            partial, kept = unfinished_run(path, seed=seed)
            if kept:  # said on the one line of the interruption
                again = "" if seed is None else f" with --seed {seed}"
                INTERRUPTED[:] = [f"{kept} finished {cells} kept in {partial}; run the same "
                                  f"file again{again} to continue from them, or delete that "
                                  "directory"]
            raise
        if json_out:
            command = json.loads(files["manifest"].read_text())["command"]  # as saved
            echo_json({**result.to_dict(), "command": command, "out": str(where),
                       "files": {k: str(v) for k, v in files.items()}})
            return
        render.show(result)
        typer.echo(f"saved {', '.join(p.name for p in files.values())} in {where}", err=True)
