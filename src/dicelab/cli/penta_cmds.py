"""``dicelab solve penta`` and ``dicelab policy penta``.

Thin shells over :mod:`dicelab.penta.solver`, :mod:`dicelab.penta.distribution`,
:mod:`dicelab.penta.policies` and :class:`dicelab.penta.simulate.PentaResult`.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from dicelab.cli import formats as F
from dicelab.errors import UserError


def register(app, solve_app, policy_app) -> None:
    """Add ``dicelab solve penta`` and ``dicelab policy penta``."""

    @solve_app.command("penta")
    def solve_penta(
        rules: Annotated[str | None, typer.Option(
            help="Rule set: seed, hasbro, free-joker, no-bonus. [default: seed]")] = None,
        distribution: Annotated[bool, typer.Option(
            "--distribution", help="The exact distribution of --policy's final score "
                                   "(cached on disk).")] = False,
        policy: Annotated[str | None, typer.Option(
            "--policy", "-p", help="With --distribution: optimal or greedy. "
                                   "[default: optimal]")] = None,
        plot: Annotated[str | None, typer.Option(
            help="With --distribution: write a histogram to this PNG file.")] = None,
        objective: Annotated[str | None, typer.Option(
            help="Maximise E[u(final score)] instead: mean, at-least:T (P(score >= T)), "
                 "utility:theta=X (exponential utility), beat:N (the win share against N "
                 "optimal players). Reports the optimum, the exact distribution of the "
                 "score under that policy and how it differs from optimal.")] = None,
        table: Annotated[bool, typer.Option(
            "--table", help="Build (or load) the table of P(final >= T) for every state "
                            "and every T (about 2.3 GB on disk, memory-mapped); it then "
                            "answers every at-least objective and penta-win.")] = False,
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                            ] = False,
        out: Annotated[str | None, typer.Option(
            metavar="DIR", help="With --distribution or --objective: save "
                                "distribution.parquet (score, probability) and "
                                "manifest.json in this directory.")] = None,
    ) -> None:
        """Optimal expected final score of Penta solitaire (exact, cached on disk); with
        --distribution the exact distribution of a policy's final score; with --objective
        the best play for another goal, exactly."""
        from dicelab.cli.render import console
        from dicelab.penta.rules import get_rules
        from dicelab.results import echo_json

        rs = get_rules(rules)
        if table:
            given = [f for f, v in (("--objective", objective), ("--policy", policy),
                                    ("--plot", plot), ("--out", out)) if v is not None]
            if given or distribution:
                raise UserError(f"--table: not with {', '.join(given) or '--distribution'}")
            _table(rs, json_out)
            return
        if objective is not None:
            if distribution or policy is not None:
                raise UserError("--objective: not with --distribution or --policy (it "
                                "reports its policy's distribution)")
            _objective(rs, objective, plot, json_out, out)
            return
        if distribution:
            _distribution(rs, policy, plot, json_out, out)
            return
        if policy is not None:  # --objective refuses it too: it names its own policy
            raise UserError("--policy: only with --distribution")
        given = [f for f, v in (("--plot", plot), ("--out", out)) if v is not None]
        if given:
            raise UserError(f"{', '.join(given)}: only with --distribution or --objective")
        from dicelab.penta.solver import solve

        sol = solve(rs)
        d = sol.to_dict()
        if json_out:
            echo_json(d)
            return
        t = Table(title=f"Penta optimal solitaire, rules '{d['rules']}'")
        t.add_column("statistic")
        t.add_column("exact", justify="right")
        t.add_row("expected final score", F.number(d["expected_final_score"], 8))
        if d["published_optimum"] is not None:
            # the digits its source gives (Python's shortest repr), not padded to 8 decimals
            t.add_row("published optimum", f"{d['published_optimum']:,}")
        t.add_row("states (reachable turn starts)", F.count(d["states"]))
        t.add_row("elapsed", F.seconds(sol.elapsed_s) + (
            f" (from cache; the solve took {F.seconds(sol.solve_s)})" if sol.from_cache
            else ""))
        console.print(t)


def _check_outputs(plot: str | None, out: str | None):
    """The directory of ``--out`` (or None) and the ``--plot`` path, checked before work."""
    from dicelab.results import check_out_dir, check_png_path

    where = None if out is None else check_out_dir(out, ("distribution.parquet",
                                                         "manifest.json"))
    if plot is not None:
        check_png_path(plot, creates=where)
    return where


def _show_distribution(rs, dist, shown, where, plot: str | None, json_out: bool,
                       target: int | None = None) -> None:
    """Write ``dist`` (a ScoreDistribution) to ``where`` and ``plot`` (``target``: an
    at-least objective's T, marked), then print ``shown`` (its JSON, or its table)."""
    from dicelab.cli import render
    from dicelab.cli.invocation import finish_uninterrupted, reproducing_command
    from dicelab.results import echo_json, save_run

    if where is not None:  # the distribution's table; the manifest holds what is shown
        finish_uninterrupted()  # its files all, or none
        save_run(where, dist, command=reproducing_command(None), name="distribution",
                 summary=shown.to_dict())
    if plot is not None:
        from dicelab.plots import save_png, score_distribution_figure

        title = (f"Penta, rules '{rs.name}', policy {dist.policy}: exact distribution of "
                 f"the final score (mean {dist.mean:.4f}, SD {dist.sd:.4f})")
        fig = score_distribution_figure(dist.scores, dist.probability, title=title,
                                        mean=dist.mean,
                                        percentiles={q: dist.percentiles[q] for q in (5, 50, 95)},
                                        target=target)
        save_png(fig, plot)
    if json_out:
        echo_json(shown.to_dict())
        return
    render.show(shown)
    if where is not None:
        typer.echo(f"saved {where / 'distribution.parquet'} and {where / 'manifest.json'}",
                   err=True)
    if plot is not None:
        typer.echo(f"wrote {plot}", err=True)


def _distribution(rs, policy: str | None, plot: str | None, json_out: bool,
                  out: str | None) -> None:
    """``solve penta --distribution``: every input checked before the pass, files written
    (temp file + rename) only after it."""
    from dicelab.penta.distribution import score_distribution
    from dicelab.penta.policies import table_policy

    policy = "optimal" if policy is None else policy.strip().lower()
    table_policy(policy)  # refused before any output is checked
    where = _check_outputs(plot, out)
    dist = score_distribution(policy, rs)
    _show_distribution(rs, dist, dist, where, plot, json_out)


def _progress(json_out: bool, what: str = "solving: {pct}% of the rows"):
    """A one-line progress report on stderr for a long solve (none under --json)."""
    import sys

    if json_out or not sys.stderr.isatty():
        return None
    state = {"last": -1}

    def report(done: int, total: int) -> None:
        pct = int(100 * done / max(1, total))
        if pct != state["last"]:
            state["last"] = pct
            typer.echo("\r" + what.format(pct=pct), err=True, nl=pct == 100)
    return report


def _objective(rs, text: str, plot: str | None, json_out: bool, out: str | None) -> None:
    """``solve penta --objective``: the objective and every path checked before the solve."""
    from dicelab.penta.objective_play import objective_report
    from dicelab.penta.objectives import parse_objective

    obj = parse_objective(text)
    where = _check_outputs(plot, out)
    report = objective_report(obj, rs, progress=_progress(json_out), forward_progress=_progress(
        json_out, "the policy's exact score distribution: {pct}% of (card, score) pairs"))
    _show_distribution(rs, report.policy, report, where, plot, json_out,
                       obj.target if obj.kind == "at-least" else None)


def _table(rs, json_out: bool) -> None:
    """``solve penta --table``: the table of every target, built or loaded."""
    from dicelab.cli.render import OBJECTIVE_DIGITS, console
    from dicelab.penta.objectives import at_least_table
    from dicelab.results import echo_json

    table = at_least_table(rs, progress=_progress(json_out))
    d = table.to_dict()
    if json_out:
        echo_json(d)
        return
    best = table.best
    t = Table(title=f"Penta, rules '{rs.name}': P(final >= T) under the best play for T, "
                    "every state and T")
    t.add_column("T")
    t.add_column("most P(final >= T)", justify="right")
    for target in (100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000):
        t.add_row(F.count(target), F.percent(best[target], OBJECTIVE_DIGITS[True]))
    console.print(t)
    console.print(f"{table.n_values:,} values, {F.size(table.nbytes)}; "
                  + ("memory-mapped from the cache, built originally in "
                     if table.from_cache else "built in ") + f"{table.solve_s:.1f} s")
