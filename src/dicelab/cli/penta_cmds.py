"""``dicelab solve penta``, ``dicelab policy penta`` and the Penta simulation tables.

Thin shells over :mod:`dicelab.penta.solver`, :mod:`dicelab.penta.distribution`,
:mod:`dicelab.penta.policies` and :class:`dicelab.penta.simulate.PentaResult`.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dicelab.errors import UserError
from dicelab.penta.rules import BOX_NAMES


def _ci(pair, fmt) -> str:
    return f"{fmt(pair[0])} .. {fmt(pair[1])}"


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def render_simulation(result, console: Console) -> None:
    """Rich tables of a :class:`PentaResult`: one column per seat."""
    seats = [result.seat(s) for s in range(len(result.seats))]
    title = (f"Penta, rules '{result.rules}': {result.games:,} games per seat, "
             f"seed {result.seed}, {result.games_per_s:,.0f} games/s"
             + (f" on a Dask cluster of {result.workers} worker(s)"
                if result.executor == "dask" else ""))
    t = Table(title=title, caption=(
        f"simulation {result.elapsed_s:.2f} s; set-up {result.setup_s:.2f} s (solve or load "
        "the values, build or load the decision tables: see `dicelab cache`)"))
    t.add_column("statistic")
    for s in seats:
        t.add_column(f"seat {s.seat}: {s.strategy}", justify="right")

    def row(label, f):
        t.add_row(label, *[f(s) for s in seats])

    row("mean TOTAL", lambda s: f"{s.final_score.mean:.3f}")
    row("95% interval", lambda s: _ci(s.final_score.ci95, lambda x: f"{x:.3f}"))
    if any(s.exact_mean is not None for s in seats):
        row("exact (solver)",
            lambda s: f"{s.exact_mean:.4f}" if s.exact_mean is not None else "")
    row("standard deviation", lambda s: f"{s.sd:.2f}")
    for q in (1, 5, 25, 50, 75, 95, 99):
        row(f"percentile {q}", lambda s, q=q: f"{s.percentiles[q]:.0f}")
    row("P(upper bonus)", lambda s: _pct(s.p_upper_bonus.p))
    row("P(Penta box = 50)", lambda s: _pct(s.p_penta_fifty.p))
    row("mean Penta bonuses", lambda s: f"{s.penta_bonuses.mean:.4f}")
    for name in seats[0].boxes:
        row(f"mean {name}", lambda s, n=name: f"{s.boxes[n].mean:.3f}")
    if len(seats) > 1:
        row("wins (alone)", lambda s: _pct(s.win_rate.p))
        row("wins 95% interval", lambda s: _ci(s.win_rate.ci95, _pct))
        row("shared top (tie)", lambda s: _pct(s.tie_rate.p))
    console.print(t)
    if len(seats) > 1:
        tie = result.p_tie
        console.print(f"ties (highest TOTAL shared): {_pct(tie.p)} "
                      f"({_ci(tie.ci95, _pct)}), {tie.count:,} games")


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
        from dicelab.results import to_json

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
        given = [f for f, v in (("--policy", policy), ("--plot", plot), ("--out", out))
                 if v is not None]
        if given:
            raise UserError(f"{', '.join(given)}: only with --distribution or --objective")
        from dicelab.penta.solver import solve

        sol = solve(rs)
        d = sol.to_dict()
        if json_out:
            typer.echo(to_json(d))
            return
        t = Table(title=f"Penta optimal solitaire, rules '{d['rules']}'")
        t.add_column("quantity")
        t.add_column("value", justify="right")
        t.add_row("optimal expected final score", f"{d['expected_score']:.8f}")
        if d["published_optimum"] is not None:
            t.add_row("published value", f"{d['published_optimum']}")
        t.add_row("states (reachable turn starts)", f"{d['states']:,}")
        t.add_row("time", f"{sol.elapsed_s:.3f} s" + (
            f" (from cache; the solve took {sol.solve_s:.3f} s)" if sol.from_cache else ""))
        console.print(t)


def _distribution(rs, policy: str | None, plot: str | None, json_out: bool,
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


def _progress(json_out: bool):
    """A one-line progress report on stderr for a long solve (none under --json)."""
    import sys

    if json_out or not sys.stderr.isatty():
        return None
    state = {"last": -1}

    def report(done: int, total: int) -> None:
        pct = int(100 * done / max(1, total))
        if pct != state["last"]:
            state["last"] = pct
            typer.echo(f"\rsolving: {pct}% of the rows", err=True, nl=pct == 100)
    return report


def _objective(rs, text: str, plot: str | None, json_out: bool, out: str | None) -> None:
    """``solve penta --objective``: the objective and every path checked before the solve."""
    from dicelab.cli import render
    from dicelab.cli.main import reproducing_command
    from dicelab.penta.objective_play import objective_report
    from dicelab.penta.objectives import parse_objective
    from dicelab.results import check_out_dir, check_png_path, save_run, to_json

    obj = parse_objective(text)
    where = None if out is None else check_out_dir(out, ("distribution.parquet",
                                                         "manifest.json"))
    if plot is not None:
        check_png_path(plot)
    report = objective_report(obj, rs, progress=_progress(json_out))
    dist = report.policy
    if where is not None:
        save_run(where, dist, command=reproducing_command(None), name="distribution")
    if plot is not None:
        from dicelab.plots import save_png, score_distribution_figure

        title = (f"Penta, rules '{rs.name}', policy {dist.policy}: exact distribution of "
                 f"the final score (mean {dist.mean:.4f}, SD {dist.sd:.4f})")
        fig = score_distribution_figure(dist.scores, dist.probability, title=title,
                                        mean=dist.mean,
                                        percentiles={q: dist.percentiles[q] for q in (5, 50, 95)})
        save_png(fig, plot)
    if json_out:
        typer.echo(to_json(report.to_dict()))
        return
    render.show(report)
    if where is not None:
        typer.echo(f"saved {where / 'distribution.parquet'} and {where / 'manifest.json'}",
                   err=True)
    if plot is not None:
        typer.echo(f"wrote {plot}", err=True)


def _table(rs, json_out: bool) -> None:
    """``solve penta --table``: the table of every target, built or loaded."""
    from dicelab.cli.render import console
    from dicelab.penta.objectives import at_least_table
    from dicelab.resources import human_bytes
    from dicelab.results import to_json

    table = at_least_table(rs, progress=_progress(json_out))
    d = table.to_dict()
    if json_out:
        typer.echo(to_json(d))
        return
    best = table.best
    t = Table(title=f"Penta, rules '{rs.name}': P(final >= T) under the best play for T, "
                    "every state and T")
    t.add_column("T")
    t.add_column("most P(final >= T)", justify="right")
    for target in (100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000):
        t.add_row(f"{target}", f"{best[target]:.10f}")
    console.print(t)
    console.print(f"{table.n_values:,} values, {human_bytes(table.nbytes)}; "
                  + ("memory-mapped from the cache, built originally in "
                     if table.from_cache else "built in ") + f"{table.solve_s:.1f} s")


def render_objective(report, console: Console) -> None:
    """Rich tables of an :class:`~dicelab.penta.objective_play.ObjectiveReport`."""
    sol, dist, base = report.solution, report.policy, report.optimal
    obj = report.objective
    t = Table(title=f"Penta, rules '{sol.rules.name}': objective {obj.name} ({obj.unit})",
              caption=("loaded from the disk cache; the solve took " if sol.from_cache
                       else "solved in ") + f"{sol.solve_s:.2f} s; the distribution "
                      + ("loaded" if dist.from_cache else "computed")
                      + f" ({dist.compute_s:.2f} s)")
    t.add_column("quantity")
    t.add_column(f"policy {dist.policy}", justify="right")
    t.add_column("policy optimal", justify="right")
    fmt = (lambda x: f"{x:.10f}") if obj.kind in ("at-least", "beat") else (lambda x: f"{x:.6f}")
    t.add_row(obj.unit, fmt(sol.value), fmt(report.optimal_value))
    if obj.kind == "utility":
        t.add_row("expected utility", f"{sol.raw_value:.6e}", "")
    t.add_row("decisions per game differing from optimal",
              f"{dist.differ_from_optimal:.4f}", "0")
    t.add_row("mean TOTAL", f"{dist.mean:.6f}", f"{base.mean:.6f}")
    t.add_row("standard deviation", f"{dist.sd:.4f}", f"{base.sd:.4f}")
    for q in dist.percentiles:
        t.add_row(f"percentile {q}", f"{dist.percentiles[q]:.0f}", f"{base.percentiles[q]:.0f}")
    for target in (200, 250, 300, 350, 400):
        t.add_row(f"P(TOTAL >= {target})", f"{dist.p_at_least(target):.6f}",
                  f"{base.p_at_least(target):.6f}")
    t.add_row("P(upper bonus)", f"{100 * dist.p_upper_bonus:.4f}%",
              f"{100 * base.p_upper_bonus:.4f}%")
    t.add_row("P(Penta box = 50)", f"{100 * dist.p_penta_fifty:.4f}%",
              f"{100 * base.p_penta_fifty:.4f}%")
    t.add_row("mean Penta bonuses", f"{dist.mean_penta_bonuses:.6f}",
              f"{base.mean_penta_bonuses:.6f}")
    for name, m, mb in zip(BOX_NAMES, dist.box_means, base.box_means, strict=True):
        t.add_row(f"mean {name}", f"{m:.4f}", f"{mb:.4f}")
    console.print(t)


def render_distribution(dist, console: Console) -> None:
    """A rich table of a :class:`~dicelab.penta.distribution.ScoreDistribution`."""
    lo, hi = dist.support
    t = Table(title=f"Penta, rules '{dist.rules.name}', policy {dist.policy}: exact "
                    "distribution of the final score",
              caption=("loaded from the disk cache; the pass took " if dist.from_cache
                       else "computed in ") + f"{dist.compute_s:.2f} s (see `dicelab cache`)")
    t.add_column("statistic")
    t.add_column("exact", justify="right")
    t.add_row("mean TOTAL", f"{dist.mean:.6f}")
    t.add_row("standard deviation", f"{dist.sd:.4f}")
    for q, v in dist.percentiles.items():
        t.add_row(f"percentile {q}", f"{v:.0f}")
    t.add_row("lowest / highest possible", f"{lo} / {hi}")
    t.add_row("P(upper bonus)", f"{100 * dist.p_upper_bonus:.4f}%")
    t.add_row("P(Penta box = 50)", f"{100 * dist.p_penta_fifty:.4f}%")
    t.add_row("mean Penta bonuses", f"{dist.mean_penta_bonuses:.6f}")
    for name, m in zip(BOX_NAMES, dist.box_means, strict=True):
        t.add_row(f"mean {name}", f"{m:.4f}")
    console.print(t)
