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
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                            ] = False,
        out: Annotated[str | None, typer.Option(
            metavar="DIR", help="With --distribution: save distribution.parquet (score, "
                                "probability) and manifest.json in this directory.")] = None,
    ) -> None:
        """Optimal expected final score of Penta solitaire (exact, cached on disk); with
        --distribution the exact distribution of a policy's final score."""
        from dicelab.cli.render import console
        from dicelab.penta.rules import get_rules
        from dicelab.results import to_json

        rs = get_rules(rules)
        if distribution:
            _distribution(rs, policy, plot, json_out, out)
            return
        given = [f for f, v in (("--policy", policy), ("--plot", plot), ("--out", out))
                 if v is not None]
        if given:
            raise UserError(f"{', '.join(given)}: only with --distribution")
        from dicelab.penta.solver import solve

        sol = solve(rs)
        d = sol.to_dict()
        if json_out:
            typer.echo(to_json(d))
            return
        t = Table(title=f"Penta optimal solitaire, rules '{d['rules']}'")
        t.add_column("statistic")
        t.add_column("exact", justify="right")
        t.add_row("expected final score", F.number(d["expected_final_score"], 8))
        if d["published_optimum"] is not None:
            t.add_row("published optimum", F.number(d["published_optimum"], 8))
        t.add_row("states (reachable turn starts)", F.count(d["states"]))
        t.add_row("elapsed", F.seconds(sol.elapsed_s) + (
            f" (from cache; the solve took {F.seconds(sol.solve_s)})" if sol.from_cache
            else ""))
        console.print(t)


def _distribution(rs, policy: str | None, plot: str | None, json_out: bool,
                  out: str | None) -> None:
    """``solve penta --distribution``: every input checked before the pass, files written
    (temp file + rename) only after it."""
    from dicelab.cli import render
    from dicelab.cli.invocation import reproducing_command
    from dicelab.penta.distribution import score_distribution
    from dicelab.penta.policies import POLICIES
    from dicelab.results import check_out_dir, check_png_path, save_run, to_json

    policy = "optimal" if policy is None else policy.strip().lower()
    if policy not in POLICIES:
        raise UserError(f"unknown Penta policy '{policy}'; valid: {', '.join(POLICIES)}")
    where = None if out is None else check_out_dir(out, ("distribution.parquet",
                                                         "manifest.json"))
    if plot is not None:
        check_png_path(plot)
    dist = score_distribution(policy, rs)
    if where is not None:
        save_run(where, dist, command=reproducing_command(None), name="distribution")
    if plot is not None:
        from dicelab.plots import save_png, score_distribution_figure

        title = (f"Penta, rules '{rs.name}', policy {policy}: exact distribution of the "
                 f"final score (mean {dist.mean:.4f}, SD {dist.sd:.4f})")
        fig = score_distribution_figure(dist.scores, dist.probability, title=title,
                                        mean=dist.mean,
                                        percentiles={q: dist.percentiles[q] for q in (5, 50, 95)})
        save_png(fig, plot)
    if json_out:
        typer.echo(to_json(dist.to_dict()))
        return
    render.show(dist)
    if where is not None:
        typer.echo(f"saved {where / 'distribution.parquet'} and {where / 'manifest.json'}",
                   err=True)
    if plot is not None:
        typer.echo(f"wrote {plot}", err=True)
