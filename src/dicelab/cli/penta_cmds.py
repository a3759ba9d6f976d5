"""``dicelab solve penta``, ``dicelab policy penta`` and the Penta simulation tables.

Thin shells over :mod:`dicelab.penta.solver`, :mod:`dicelab.penta.distribution`,
:mod:`dicelab.penta.policies` and :class:`dicelab.penta.simulate.PentaResult`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dicelab.cli import formats as F
from dicelab.errors import UserError
from dicelab.penta.rules import BOX_NAMES


def render_simulation(result, console: Console) -> None:
    """Rich tables of a :class:`PentaResult`: one column per seat."""
    seats = [result.seat(s) for s in range(len(result.seats))]
    title = (f"Penta, rules '{result.rules}': {F.count(result.games)} games, "
             f"seed {result.seed}, {F.count(round(result.games_per_s))} games/s"
             + (f" on a Dask cluster of {result.workers} worker(s)"
                if result.executor == "dask" else ""))
    t = Table(title=title, caption=(
        f"95% CI in brackets; simulation {F.seconds(result.elapsed_s)}; set-up "
        f"{F.seconds(result.setup_s)} (solve or load the values, build or load the decision "
        "tables: see `dicelab cache`)"))
    t.add_column("statistic")
    for s in seats:
        t.add_column(f"seat {s.seat}: {s.policy}", justify="right")

    def row(label, f):
        t.add_row(label, *[f(s) for s in seats])

    if len(seats) > 1:
        row("win rate", lambda s: F.estimate(s.win_rate.p, s.win_rate.ci95, F.percent))
        row("tie rate", lambda s: F.estimate(s.tie_rate.p, s.tie_rate.ci95, F.percent))
    row("mean final score", lambda s: F.estimate(s.mean_final_score.mean,
                                                 s.mean_final_score.ci95, F.number, 3))
    if any(s.expected_final_score is not None for s in seats):
        row("expected final score (exact)",
            lambda s: F.number(s.expected_final_score, 4))
    row("final score SD", lambda s: F.number(s.final_score_sd))
    for q in (1, 5, 25, 50, 75, 95, 99):
        row(f"final score p{q}", lambda s, q=q: F.count(s.percentiles[q]))
    row("P(upper bonus)", lambda s: F.estimate(s.p_upper_bonus.p, s.p_upper_bonus.ci95,
                                               F.percent))
    row("P(Penta box = 50)", lambda s: F.estimate(s.p_penta_fifty.p, s.p_penta_fifty.ci95,
                                                  F.percent))
    row("mean Penta bonuses", lambda s: F.estimate(s.mean_penta_bonuses.mean,
                                                   s.mean_penta_bonuses.ci95, F.number, 4))
    for name in seats[0].mean_box_scores:
        row(f"mean {name}", lambda s, n=name: F.number(s.mean_box_scores[n].mean, 3))
    console.print(t)
    if len(seats) > 1:
        tie = result.tie_rate
        console.print(f"tie rate (the highest final score shared): "
                      f"{F.estimate(tie.p, tie.ci95, F.percent)}, {F.count(tie.count)} games")


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
        plot: Annotated[Path | None, typer.Option(
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


def _distribution(rs, policy: str | None, plot: Path | None, json_out: bool,
                  out: str | None) -> None:
    """``solve penta --distribution``: every input checked before the pass, files written
    (temp file + rename) only after it."""
    from dicelab.cli import render
    from dicelab.cli.main import reproducing_command
    from dicelab.penta.distribution import score_distribution
    from dicelab.penta.policies import POLICIES
    from dicelab.results import check_out_dir, check_png_path, save_run, to_json

    policy = "optimal" if policy is None else policy.strip().lower()
    if policy not in POLICIES:
        raise UserError(f"unknown Penta policy '{policy}'; valid: {', '.join(POLICIES)}")
    where = None if out is None else check_out_dir(out)
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
        try:
            save_png(fig, plot)
        except OSError as exc:
            raise UserError(f"--plot {plot}: cannot write ({exc.strerror})") from None
    if json_out:
        typer.echo(to_json(dist.to_dict()))
        return
    render.show(dist)
    if where is not None:
        typer.echo(f"saved {where / 'distribution.parquet'} and {where / 'manifest.json'}",
                   err=True)
    if plot is not None:
        typer.echo(f"wrote {plot}", err=True)


def render_distribution(dist, console: Console) -> None:
    """A rich table of a :class:`~dicelab.penta.distribution.ScoreDistribution`."""
    t = Table(title=f"Penta, rules '{dist.rules.name}', policy {dist.policy}: exact "
                    "distribution of the final score",
              caption=("loaded from the disk cache; the pass took " if dist.from_cache
                       else "computed in ") + f"{F.seconds(dist.compute_s)} (see `dicelab "
                                              "cache`)")
    t.add_column("statistic")
    t.add_column("exact", justify="right")
    t.add_row("expected final score", F.number(dist.mean, 6))
    t.add_row("final score SD", F.number(dist.sd, 4))
    for q, v in dist.percentiles.items():
        t.add_row(f"final score p{q}", F.count(v))
    t.add_row("final score range", F.interval(dist.support, F.count))
    t.add_row("P(upper bonus)", F.percent(dist.p_upper_bonus, 4))
    t.add_row("P(Penta box = 50)", F.percent(dist.p_penta_fifty, 4))
    t.add_row("expected Penta bonuses", F.number(dist.mean_penta_bonuses, 6))
    for name, m in zip(BOX_NAMES, dist.box_means, strict=True):
        t.add_row(f"expected {name}", F.number(m, 4))
    console.print(t)
