"""``dicelab solve penta``, ``dicelab policy penta`` and the Penta simulation tables.

Thin shells over :mod:`dicelab.penta.solver`, :mod:`dicelab.penta.policies` and
:class:`dicelab.penta.simulate.PentaResult`.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table


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
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                            ] = False,
    ) -> None:
        """Optimal expected final score of Penta solitaire (exact, cached on disk)."""
        from dicelab.cli.render import console
        from dicelab.penta.rules import get_rules
        from dicelab.penta.solver import solve
        from dicelab.results import to_json

        sol = solve(get_rules(rules))
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
