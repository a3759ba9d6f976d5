"""Farkle CLI: the ``bust-risk`` command and the terminal report of ``simulate``.

Thin shells over :mod:`dicelab.farkle.simulate`; errors are :class:`UserError`.
"""

from __future__ import annotations

import math
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table


def _pct(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.{digits}f}%"


def _num(x: float, digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:,.{digits}f}"


def _ci(lo_hi, fmt=_num, digits: int = 2) -> str:
    lo, hi = lo_hi
    return f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"


def render_simulation(result, console: Console) -> None:
    """Print a :class:`dicelab.farkle.simulate.FarkleResult` as rich tables."""
    d = result.to_dict()
    seats = d["seats"]
    multi = len(seats) > 1
    head = Table(title="Farkle simulation", show_header=False, box=None)
    head.add_row("games", f"{d['games']:,}")
    head.add_row("seed", str(d["seed"]))
    head.add_row("rules", d["rules"])
    head.add_row("target", f"{d['target']:,}")
    head.add_row("first seat", "rotates" if d["first_seat"] is None else str(d["first_seat"]))
    where = (f"a Dask cluster of {d['workers']} worker(s)" if d.get("executor") == "dask"
             else f"{d['threads']} thread(s)")
    head.add_row("elapsed", f"{d['elapsed_s']:.2f} s on {where}")
    head.add_row("games/s", f"{d['games_per_s']:,.0f}")
    head.add_row("kernel", d["kernel"])
    console.print(head)

    t = Table(title="per seat (95% intervals)")
    t.add_column("statistic")
    for s in seats:
        t.add_column(f"seat {s['seat']}: {s['strategy']}", justify="right")

    def row(label, cells):
        t.add_row(label, *cells)

    if multi:
        row("win rate", [f"{_pct(s['win_rate'])} {_ci(s['win_rate_ci'], _pct)}" for s in seats])
        row("ties", [f"{s['ties']:,} ({_pct(s['tie_rate'])})" for s in seats])
        row("mean final score", [f"{_num(s['mean_final_score'], 1)} "
                                 f"{_ci(s['mean_final_score_ci'], _num, 1)}" for s in seats])
    row("mean turns" + ("" if multi else " to target"),
        [f"{_num(s['mean_turns'], 3)} {_ci(s['mean_turns_ci'], _num, 3)}" for s in seats])
    row("points per turn", [f"{_num(s['points_per_turn'], 1)} "
                            f"{_ci(s['points_per_turn_ci'], _num, 1)}" for s in seats])
    row("bust rate per roll", [f"{_pct(s['bust_rate_per_roll'])} "
                               f"{_ci(s['bust_rate_per_roll_ci'], _pct)}" for s in seats])
    row("bust rate per turn", [f"{_pct(s['bust_rate_per_turn'])} "
                               f"{_ci(s['bust_rate_per_turn_ci'], _pct)}" for s in seats])
    for n in range(1, 7):
        row(f"  bust rate, {n} {'die' if n == 1 else 'dice'}",
            [f"{_pct(s['bust_rate_by_dice'][str(n)]['rate'])} "
             f"{_ci(s['bust_rate_by_dice'][str(n)]['ci95'], _pct)}" for s in seats])
    for q in ("1", "5", "25", "50", "75", "95", "99"):
        cells = []
        for s in seats:
            v = s["final_score_percentiles"][q]
            at_least = "≥" if v >= s["final_score_histogram_top"] else ""
            cells.append(f"{at_least}{v:,.0f}")
        row(f"final score p{q}", cells)
    console.print(t)
    if d["capped_games"]:
        console.print(f"[bold yellow]warning:[/] {d['capped_games']:,} games hit the safety "
                      "cap of rounds and were cut short (a policy that almost never banks?)")


def render_bust_risk(d: dict, console: Console) -> None:
    t = Table(title=f"Farkle bust risk, rules '{d['rules']}' "
                    f"({d['rolls_per_dice_count']:,} simulated rolls per row, seed {d['seed']})")
    t.add_column("dice", justify="right")
    t.add_column("exact", justify="right")
    t.add_column("simulated", justify="right")
    t.add_column("95% interval", justify="right")
    for r in d["bust_risk"]:
        t.add_row(str(r["dice"]), _pct(r["exact"]), _pct(r["simulated"], 3),
                  _ci(r["ci95"], _pct, 3))
    console.print(t)


def register(app, solve_app, policy_app) -> None:
    """Add ``dicelab bust-risk`` to the root app."""

    @app.command("bust-risk")
    def bust_risk(
        rules: Annotated[str | None, typer.Option(
            help="Farkle scoring preset (default, basic, ones-300) or TOML file.")] = None,
        games: Annotated[int, typer.Option(
            "--games", "-n", help="Simulated rolls per number of dice.")] = 1_000_000,
        seed: Annotated[int | None, typer.Option(
            help="Seed (default: a fresh seed, reported).")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                            ] = False,
    ) -> None:
        """Exact bust probability for 1..6 dice beside a simulated estimate."""
        from dicelab.cli.render import console
        from dicelab.farkle.simulate import simulate_bust_frequencies
        from dicelab.results import to_json

        d = simulate_bust_frequencies(rules, rolls=games, seed=seed).to_dict()
        if json_out:
            typer.echo(to_json(d))
        else:
            render_bust_risk(d, console)
