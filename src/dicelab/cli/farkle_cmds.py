"""Farkle commands: ``bust-risk``, ``solve farkle`` and ``policy farkle``.

Thin shells: the numbers come from :func:`dicelab.farkle.simulate.simulate_bust_frequencies`,
:func:`dicelab.farkle.exact.solve_policy` and :func:`dicelab.farkle.policies.bank_table`;
the pictures from :mod:`dicelab.plots`, the text from :mod:`dicelab.cli.render`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from dicelab import config
from dicelab.config import DEFAULT_GAMES
from dicelab.errors import UserError
from dicelab.farkle.rules import DEFAULT_TARGET, PRESETS

RulesOpt = Annotated[str | None, typer.Option(
    help=f"Scoring preset ({', '.join(PRESETS)}) or TOML file.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
FloorOpt = Annotated[int | None, typer.Option(
    help="Under a farkle penalty: how far below zero totals may fall (fastest, "
         "optimal-win; points, at least two penalties). [default: "
         f"{config.PENALTY_FLOOR_POINTS:,}]")]
#: The highest top of a policy picture's turn-points axis (points).
MAX_PICTURE_POINTS = 100_000


@contextmanager
def solving(enabled: bool) -> Iterator[Callable[[float], None] | None]:
    """A progress bar for an exact solve (on a terminal, when ``enabled``): yields the
    solver's ``progress(fraction)`` callback, or None."""
    from dicelab.cli import render

    with render.progress_bar(enabled=enabled, total=1000, description="solving") as advance:
        yield None if advance is None else (lambda f: advance(int(1000 * f), 1000))


def register(app, solve_app, policy_app) -> None:
    """Add ``bust-risk``, ``solve farkle`` and ``policy farkle``."""

    @app.command("bust-risk")
    def bust_risk(
        rules: RulesOpt = None,
        games: Annotated[int, typer.Option(
            "--games", "-n", help="Simulated rolls per number of dice.")] = DEFAULT_GAMES,
        seed: Annotated[int | None, typer.Option(
            help="Seed (default: a fresh seed, reported).")] = None,
        json_out: JsonOpt = False,
        out: Annotated[str | None, typer.Option(
            metavar="DIR", help="Save summary.parquet and manifest.json in this directory.")
                       ] = None,
    ) -> None:
        """Exact bust probability for 1..6 dice beside a simulated estimate."""
        from dicelab.cli import render
        from dicelab.cli.invocation import finish_uninterrupted, reproducing_command
        from dicelab.farkle.simulate import simulate_bust_frequencies
        from dicelab.results import check_out_dir, echo_json, save_run

        where = None if out is None else check_out_dir(out)
        result = simulate_bust_frequencies(rules, rolls=games, seed=seed)
        if where is not None:
            finish_uninterrupted()  # its files all, or none
            save_run(where, result, command=reproducing_command(result.seed))
        if json_out:
            echo_json(result.to_dict())
        else:
            render.show(result)

    @solve_app.command("farkle")
    def solve_farkle(
        policy: Annotated[str, typer.Option(
            "--policy", "-p", help="threshold-T, max-ev, fastest or optimal-win.")],
        target: Annotated[int | None, typer.Option(
            help="Target score (fastest, optimal-win; threshold-T: expected turns to it). "
                 f"[default: {DEFAULT_TARGET}]")] = None,
        rules: RulesOpt = None,
        ending: Annotated[str | None, typer.Option(
            help="Ending rule (optimal-win): last-round (the default) or first-to-bank; "
                 "replaces the rules'.")] = None,
        floor: FloorOpt = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Exact Farkle answers: turn score distributions, max-ev, fastest, optimal-win."""
        from dicelab.cli import render
        from dicelab.farkle.exact import solve_policy
        from dicelab.results import echo_json

        with solving(not json_out) as progress:
            sol = solve_policy(policy, rules, target, ending, progress=progress, floor=floor)
        if json_out:
            echo_json(sol.to_dict())
        else:
            render.show(sol)

    @policy_app.command("farkle")
    def policy_farkle(
        name: Annotated[str, typer.Argument(
            help="A Farkle policy, e.g. max-ev, fastest, or your own bank rule "
                 "FILE.py:NAME.")],
        plot: Annotated[str | None, typer.Option(
            help="Write a heat map of bank/roll to this PNG file.")] = None,
        target: Annotated[int | None, typer.Option(
            help=f"Target (fastest, optimal-win, a bank rule). [default: {DEFAULT_TARGET}]"
        )] = None,
        me: Annotated[int | None, typer.Option(
            "--me", help="Own total (fastest, optimal-win, ai, a bank rule); under a "
                         "farkle penalty down to the floor below zero. [default: 0]")] = None,
        opp: Annotated[int | None, typer.Option(
            "--opp", help="Opponent total (optimal-win, ai, a bank rule), as --me. "
                          "[default: 0]")] = None,
        my_farkles: Annotated[int, typer.Option(
            "--my-farkles", help="Own turns lost in a row (0-2; max-ev, fastest, "
                                 "optimal-win); they count under a farkle penalty and "
                                 "change nothing under other rules.")] = 0,
        opp_farkles: Annotated[int, typer.Option(
            "--opp-farkles", help="The opponent's turns lost in a row (0-2; optimal-win), "
                                  "as --my-farkles.")] = 0,
        rules: RulesOpt = None,
        ending: Annotated[str | None, typer.Option(
            help="Ending rule (optimal-win): last-round (the default) or first-to-bank; "
                 "replaces the rules'.")] = None,
        floor: FloorOpt = None,
        max_points: Annotated[int | None, typer.Option(
            "--max-points", help="Top of the picture's turn-points axis (--plot), 100 to "
                                 "100,000. [default: from the policy's own thresholds]")
        ] = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Show a Farkle policy's bank/roll decisions by turn points and dice left."""
        from dicelab.farkle.builtin import family_of
        from dicelab.farkle.policies import bank_table
        from dicelab.farkle.rules import check_target, load_rules, lost_turn_runs
        from dicelab.registry import parse_policy

        if plot is not None:
            from dicelab.results import check_png_path

            check_png_path(plot, json_out=json_out)
        if max_points is not None:
            if plot is None:
                raise UserError("--max-points sets the top of the picture: it needs --plot")
            if not 100 <= max_points <= MAX_PICTURE_POINTS:
                raise UserError(f"--max-points must be 100 to {MAX_PICTURE_POINTS:,}, not "
                                f"{max_points}")
        spec = parse_policy(name, "farkle")
        family_of(spec).check_picture(spec, target, me, opp, ending)
        table = load_rules(rules, ending)
        my_farkles, opp_farkles, note = lost_turn_runs(table, my_farkles, opp_farkles,
                                                       "these decisions")
        # an exact policy is solved (or loaded) first, with progress
        with solving(not json_out and family_of(spec).solved) as progress:
            bank, title = bank_table(spec, table, target, me, opp, progress, my_farkles,
                                     opp_farkles, floor)
        if note:
            typer.echo(f"note: {note}", err=True)
        if plot is not None:
            from dicelab.plots import policy_heatmap_figure, save_png

            save_png(policy_heatmap_figure(bank, title=title, max_points=max_points), plot)
        if json_out:
            from dicelab.farkle.solitaire import bank_runs
            from dicelab.results import echo_json

            family = family_of(spec)
            reads_target = "target" in family.picture_reads
            echo_json({"game": "farkle", "policy": name, "title": title, "rules": table.name,
                       "target": check_target(target) if reads_target else None,
                       "me": me or 0, "opp": opp or 0,
                       "my_farkles": my_farkles, "opp_farkles": opp_farkles,
                       "ending": table.ending if "ending" in family.picture_reads else None,
                       "floor_points": family.floor_points(table, floor),
                       **bank_runs(bank), "plot": plot})
        elif plot is not None:
            typer.echo(f"wrote {plot}")
        else:
            from dicelab.cli.render import decision_text

            typer.echo(title)
            typer.echo(decision_text(bank))
