"""``dicelab analyse LOG...``: every decision of logged games beside the best one, per
player losses by size class, and the luck/skill split.

A thin shell over :func:`dicelab.analyse.analyse_logs`; the tables come from
:mod:`dicelab.cli.render`, the files from :mod:`dicelab.results`.
"""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("analyse")
    def analyse(
        logs: Annotated[list[str], typer.Argument(help="Game log files (JSON Lines).")],
        game: Annotated[str | None, typer.Option(
            help="Refuse logs of another game: farkle or penta.")] = None,
        rules: Annotated[str | None, typer.Option(
            help="Refuse logs played under other rules (needs --game).")] = None,
        measure: Annotated[str | None, typer.Option(
            help="Farkle: turn (expected turn score, max-ev) or win (two seats: P(win) + "
                 "P(tie)/2, optimal-win). [default: win with two seats, else turn]")] = None,
        objective: Annotated[str | None, typer.Option(
            help="Penta: judge every player by this objective (mean, at-least:T, "
                 "utility:theta=X, beat:N) or by penta-win's win-share. [default: the "
                 "objective each player's policy plays (optimal:OBJECTIVE; penta-win: "
                 "win-share), else the expected final score]")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                            ] = False,
        out: Annotated[str | None, typer.Option(
            metavar="DIR", help="Save summary.parquet (players), decisions.parquet and "
                                "manifest.json in this directory.")] = None,
        plot: Annotated[str | None, typer.Option(
            metavar="FILE.png", help="Draw each player's value through the first game given.")
        ] = None,
    ) -> None:
        """Review logged games move by move: the option chosen, the best option and the
        loss at every decision; per player the losses and the luck/skill split."""
        from dicelab.analyse import analyse_logs
        from dicelab.cli.invocation import finish_uninterrupted, reproducing_command
        from dicelab.cli.render import show
        from dicelab.results import (
            RUN_FILES,
            atomic_write_parquet,
            check_out_dir,
            check_png_path,
            echo_json,
            prepare_out_dir,
            save_run,
        )
        from dicelab.text import counted

        # every output checked before the logs are read
        out_dir = None if out is None else check_out_dir(out, ("decisions.parquet",
                                                               *RUN_FILES))
        plot_path = None if plot is None else check_png_path(plot, json_out=json_out,
                                                             creates=out_dir)
        result = analyse_logs(logs, game=game, rules=rules, measure=measure,
                              objective=objective)
        if out_dir is not None or plot_path is not None:
            finish_uninterrupted()  # the analysis is done: its files all, or none
        if out_dir is not None:
            prepare_out_dir(out_dir)
            atomic_write_parquet(out_dir / "decisions.parquet", result.decisions)
            save_run(out_dir, result, command=reproducing_command(None))
        if plot_path is not None:
            from dicelab.plots import save_png

            figs = result.figures()
            if figs:
                save_png(next(iter(figs.values())), plot_path)
            else:  # no finished turn: no value to draw, and no file
                plot_path = None
                typer.echo(f"note: nothing to plot (no finished turn): {plot} not written",
                           err=True)
        if json_out:
            echo_json(result.to_dict())
            return
        show(result)
        estimated = result.estimated_games()
        if estimated:  # an unfinished game has no final result: its outcome is not one
            its = "its" if estimated == 1 else "their"
            typer.echo(f"note: {counted(estimated, 'game')} stopped before {its} end: the "
                       f"outcome of {its} players is the value of their last position, an "
                       "estimate, not a final result (outcome_estimated in --json and "
                       "summary.parquet)", err=True)
        if out_dir is not None:
            typer.echo(f"saved {out_dir / 'summary.parquet'}, {out_dir / 'decisions.parquet'}"
                       f" and {out_dir / 'manifest.json'}", err=True)
        if plot_path is not None:
            typer.echo(f"saved {plot_path}", err=True)
