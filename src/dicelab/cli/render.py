"""How results look on a terminal: the one place that maps a result type to its renderer.

:func:`show` prints any result a command returns (simulations of both games,
comparisons, bust risks, exact solutions, experiment runs) by its type's entry in
:data:`RENDERERS`. Renderers read results by attribute or through ``to_dict()``; no
computation happens here. This module imports no command module (commands import it).
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

# piped or captured output has no terminal width: use a wide page rather than rich's 80
# columns, so tables of several seats stay one line per statistic
console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(enabled: bool, total: int, description: str = "games"
                 ) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr (only on a terminal); yields a ``(done, total)`` callback."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(done: int, total_: int) -> None:
            bar.update(task, completed=done, total=total_)

        yield advance


def show(result: Any) -> None:
    """Print ``result`` with its type's renderer (see :data:`RENDERERS`)."""
    kind = type(result)
    render = RENDERERS.get(f"{kind.__module__}.{kind.__qualname__}")
    if render is None:
        raise TypeError(f"no terminal view of a {kind.__qualname__}")
    render(result)


# --- formatting ---------------------------------------------------------------------------


def _pct(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.{digits}f}%"


def _num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:,.{digits}f}"


def _ci(lo_hi, fmt=_num, digits: int = 2) -> str:
    lo, hi = lo_hi
    return f"[{fmt(lo, digits)}, {fmt(hi, digits)}]"


def _how(from_cache: bool) -> str:
    return "loaded from cache, solved originally in" if from_cache else "solved in"


# --- Farkle -------------------------------------------------------------------------------


def farkle_simulation(result) -> None:
    """A :class:`dicelab.farkle.simulate.FarkleResult` as rich tables."""
    d = result.to_dict()
    seats = [result.seat(s) for s in range(len(result.seats))]
    multi = len(seats) > 1
    head = Table(title="Farkle simulation", show_header=False, box=None)
    head.add_row("games", f"{d['games']:,}")
    head.add_row("seed", str(d["seed"]))
    head.add_row("rules", d["rules"])
    head.add_row("target", f"{d['target']:,}")
    if multi:
        head.add_row("ending", d["ending"])
        head.add_row("first seat", "rotates" if d["first_seat"] is None
                     else str(d["first_seat"]))
    where = (f"a Dask cluster of {d['workers']} worker(s)" if d["executor"] == "dask"
             else f"{d['threads']} thread(s)")
    head.add_row("elapsed", f"{d['elapsed_s']:.2f} s on {where}")
    head.add_row("games/s", f"{d['games_per_s']:,.0f}")
    head.add_row("kernel", d["kernel"])
    console.print(head)

    t = Table(title="per seat (95% intervals)")
    t.add_column("statistic")
    for s in seats:
        t.add_column(f"seat {s.seat}: {s.strategy}", justify="right")

    def row(label, cell):
        t.add_row(label, *[cell(s) for s in seats])

    def est(e, digits, fmt=_num):
        return f"{fmt(e.mean, digits)} {_ci(e.ci95, fmt, digits)}"

    if multi:
        row("win rate", lambda s: f"{_pct(s.win_rate.p)} {_ci(s.win_rate.ci95, _pct)}")
        row("ties", lambda s: f"{s.ties:,} ({_pct(s.tie_rate.p)})")
        row("mean final score", lambda s: est(s.final_score, 1))
    row("mean turns" + ("" if multi else " to target"), lambda s: est(s.turns, 3))
    row("points per turn", lambda s: est(s.points_per_turn, 1))
    row("bust rate per roll", lambda s: est(s.bust_rate_per_roll, 2, _pct))
    row("bust rate per turn", lambda s: est(s.bust_rate_per_turn, 2, _pct))
    for n in range(1, 7):
        row(f"  bust rate, {n} {'die' if n == 1 else 'dice'}",
            lambda s, n=n: f"{_pct(s.bust_by_dice[n].p)} {_ci(s.bust_by_dice[n].ci95, _pct)}")
    for q in (1, 5, 25, 50, 75, 95, 99):
        row(f"final score p{q}", lambda s, q=q: ("≥" if s.percentiles[q] >= s.histogram_top
                                                 else "") + f"{s.percentiles[q]:,.0f}")
    console.print(t)
    if result.capped_games:
        err_console.print(f"[bold yellow]warning:[/] {result.capped_games:,} games hit the "
                          "safety cap of rounds and were cut short (a policy that almost "
                          "never banks?)")


def bust_risk(result) -> None:
    """A :class:`dicelab.farkle.simulate.BustRiskResult`."""
    d = result.to_dict()
    t = Table(title=f"Farkle bust risk, rules '{d['rules']}' "
                    f"({d['rolls_per_dice_count']:,} simulated rolls per row, seed {d['seed']})")
    for col in ("dice", "exact", "simulated", "95% interval"):
        t.add_column(col, justify="right")
    for r in d["bust_risk"]:
        t.add_row(str(r["dice"]), _pct(r["exact"]), _pct(r["simulated"], 3),
                  _ci(r["ci95"], _pct, 3))
    console.print(t)


def _thresholds(th: dict) -> str:
    return "  ".join(f"{n}:{'never' if t is None else t}" for n, t in th.items())


def _turn_lines(d: dict) -> None:
    console.print(f"  expected turn score   {d['expected_turn_score']:.6f} points "
                  f"(SD {d['sd']:.2f}), exact")
    console.print(f"  P(bust)               {d['p_bust']:.6%}")
    for x, p in d["p_at_least"].items():
        console.print(f"  P(bank >= {x:>5})      {p:.6%}")


def threshold_solution(sol) -> None:
    """A :class:`dicelab.farkle.exact.ThresholdSolution`."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy {d['policy']}")
    _turn_lines(d)
    console.print(f"  expected turns to reach {d['target']} solitaire: "
                  f"{d['expected_turns_to_target']:.6f}")


def max_ev_solution(sol) -> None:
    """A :class:`dicelab.farkle.solitaire.MaxEvSolution`."""
    if len(sol.streak) > 1:
        penalty_max_ev_solution(sol)
        return
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy max-ev")
    _turn_lines(d)
    console.print("  banks from turn points, by dice left: "
                  + _thresholds(sol.bank_thresholds()))
    if not d["threshold_policy"]:
        console.print("  (not a pure threshold per n: see dicelab policy farkle max-ev)")
    console.print(f"  turn points capped at {d['cap']} (banking proven at least as good "
                  f"above); solved in {d['solve_s']:.3f} s")


def penalty_max_ev_solution(sol) -> None:
    """A :class:`dicelab.farkle.solitaire.MaxEvSolution` under a farkle penalty: one
    policy per run of lost turns."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy max-ev, farkle penalty "
                  f"{d['farkle_penalty']} (third lost turn in a row)")
    console.print(f"  long-run points per turn {d['points_per_turn']:.6f}, exact "
                  f"(the penalty counted)")
    table = Table(title="one banking rule per run of lost turns")
    for col in ("lost in a row", "share of turns", "P(bust)", "E(banked)", "bias",
                "banks from turn points, by dice left"):
        table.add_column(col, justify="left" if col.startswith("banks") else "right")
    for s in range(len(sol.streak)):
        th = sol.bank_thresholds(s)
        table.add_row(str(s), f"{d['stationary'][s]:.4%}", f"{d['p_bust_by_lost_turns'][s]:.4%}",
                      f"{d['expected_banked'][s]:.2f}", f"{d['bias'][s]:.3f}",
                      _thresholds(th))
    console.print(table)
    console.print(f"  average-reward equations solved in {d['iterations']} iterations, "
                  f"{d['solve_s']:.2f} s")


def fastest_solution(sol) -> None:
    """A :class:`dicelab.farkle.solitaire.FastestSolution`."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy fastest")
    console.print(f"  expected turns to reach {d['target']} from 0: {d['expected_turns']:.6f}")
    console.print("  banks from turn points, by dice left, at own total:")
    for total, th in d["bank_thresholds"].items():
        console.print(f"    {int(total):>6}: " + _thresholds(th))
    if "farkle_penalty" in d:
        console.print(f"  farkle penalty {d['farkle_penalty']}: totals down to "
                      f"-{d['floor_points']:,}; at 0, by lost turns in a row:")
        for k, th in d["bank_thresholds_by_lost_turns"].items():
            console.print(f"    {k:>6}: " + _thresholds(th))
        console.print(f"  {d['sweeps']} sweeps")
    console.print(f"  {_how(d['from_cache'])} {d['solve_s']:.2f} s")


def optimal_win_solution(sol) -> None:
    """A :class:`dicelab.farkle.solve.OptimalWinSolution`."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy {d['policy']}, ending {d['ending']}")
    if sol.opponent is None:
        console.print(f"  target {d['target']}, optimal play by both players, first player:")
    else:
        console.print(f"  target {d['target']}, the best response to {sol.opponent}, "
                      "moving first:")
    console.print(f"  P(win) {d['p_win']:.6f} ({d['p_win']:.3%})  P(tie) {d['p_tie']:.6f}  "
                  f"P(loss) {d['p_loss']:.6f}")
    if sol.opponent is not None:
        console.print(f"  moving second: P(win) {d['second_p_win']:.6f}  P(tie) "
                      f"{d['second_p_tie']:.6f}  P(loss) {d['second_p_loss']:.6f}")
    console.print(f"  fairest head start for the second player: {d['fair_head_start']} "
                  f"points (first player's P(win) + P(tie)/2 = "
                  f"{d['fair_head_start_value']:.6f})")
    if "farkle_penalty" in d:
        console.print(f"  farkle penalty {d['farkle_penalty']}: totals down to "
                      f"-{d['floor_points']:,}, lost turns in a row; {d['sweeps']} policy "
                      "improvement sweeps")
        error = f"value error about {d['tolerance']:.1e} (from the sweeps' contraction)"
    else:
        error = f"value error <= {d['tolerance']:.1e}"
    console.print(f"  {d['states']:,} states, {error}, "
                  f"{d['memory_bytes'] / 2**20:.1f} MiB; {_how(d['from_cache'])} "
                  f"{d['solve_s']:.1f} s")


def decision_text(bank: np.ndarray) -> str:
    """A Farkle bank table (P, 7) as text: runs of turn points with the same decisions
    (R = roll, B = bank, by dice left), up to the last row where the policy rolls."""
    from dicelab.farkle.solitaire import bank_runs

    runs = bank_runs(bank)["runs"]
    spans = [f"{r['lo']}+" if r["hi"] is None else
             (f"{r['lo']}" if r["lo"] == r["hi"] else f"{r['lo']}-{r['hi']}") for r in runs]
    width = max([len("turn points"), *map(len, spans)]) + 2
    lines = [f"{'turn points':<{width}}" + " ".join(str(n) for n in range(1, 7))
             + "   <- dice left"]
    for span, r in zip(spans, runs, strict=True):
        lines.append(f"{span:<{width}}" + " ".join("B" if x else "R" for x in r["bank"]))
    lines.append("(R = roll, B = bank)")
    return "\n".join(lines)


# --- both games ---------------------------------------------------------------------------


def _pairs_table(title: str, caption: str, columns: tuple[str, ...]) -> Table:
    """The table of a comparison: policy, vs, the numeric ``columns``, verdict."""
    t = Table(title=title, caption=caption)
    t.add_column("policy", no_wrap=True)
    t.add_column("vs", no_wrap=True)
    for col in columns:
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    return t


def comparison(result) -> None:
    """A :class:`dicelab.compare.Comparison`: one row per pair, then a ranking."""
    if result.method == "exact":
        return exact_comparison(result)
    where = f", target {result.target:,}" if result.target else ""
    where += f", ending {result.ending}" if result.ending else ""
    t = _pairs_table(f"{result.game.capitalize()} head to head: rules {result.rules}{where}, "
                     f"{result.games_per_pair:,} games per pair, seed {result.seed}",
                     "score = P(win) + P(tie)/2 of the policy; tie = its 95% CI contains 0.5",
                     ("score", "95% CI", "wins", "ties"))
    for p in result.pairs:
        lo, hi = p.score_ci
        t.add_row(p.policy, p.opponent, f"{p.score:.4f}", f"{lo:.4f}-{hi:.4f}",
                  f"{p.wins / p.games:.2%}", f"{p.ties / p.games:.2%}", p.verdict)
    console.print(t)
    ranking = sorted(result.mean_scores().items(), key=lambda kv: -kv[1])
    console.print("mean score over its pairings: "
                  + ", ".join(f"{name} {score:.4f}" for name, score in ranking))


def exact_comparison(result) -> None:
    """An exact :class:`dicelab.compare.Comparison` (Farkle): every pair's exact outcome in
    both seats; the score to 1e-9, ties within 1e-9 of one half."""
    if result.game == "penta":
        return penta_exact_comparison(result)
    ending = result.pairs[0].ending if result.pairs else ""
    t = _pairs_table(f"Farkle head to head, exact: rules {result.rules}, ending {ending}, "
                     f"target {result.target:,}",
                     "score = P(win) + P(tie)/2 of the policy, the mean of its two seats; "
                     "1st / 2nd: the policy moves first / second; exact, no sampling"
                     + _iteration_note(result.pairs),
                     ("score", "1st win", "1st tie", "2nd win", "2nd tie"))
    for p in result.pairs:
        t.add_row(p.policy, p.opponent, f"{p.score:.9f}",
                  *(f"{x:.6f}" for x in (p.first.win, p.first.tie, p.second.win,
                                         p.second.tie)),
                  p.verdict)
    console.print(t)
    _exact_ranking(result)


def _iteration_note(pairs) -> str:
    """Under the farkle penalty the evaluation iterates: its largest error bound."""
    tol = max((getattr(p, "tolerance", 0.0) for p in pairs), default=0.0)
    return f"; iterated (the farkle penalty) to within {tol:.0e}" if tol > 0.0 else ""


def _exact_ranking(result) -> None:
    ranking = sorted(result.mean_scores().items(), key=lambda kv: -kv[1])
    console.print("mean score over its pairings: "
                  + ", ".join(f"{name} {score:.6f}" for name, score in ranking)
                  + f"  ({result.elapsed_s:.1f} s)")


def penta_exact_comparison(result) -> None:
    """An exact Penta :class:`dicelab.compare.Comparison`: each pair's P(win), P(tie),
    P(loss) from the two exact score distributions (the order of play does not matter)."""
    t = _pairs_table(f"Penta head to head, exact: rules {result.rules}",
                     "score = P(win) + P(tie)/2 of the policy; tie = a shared TOTAL; exact "
                     "(from the two score distributions), no sampling",
                     ("score", "win", "tie", "loss"))
    for p in result.pairs:
        t.add_row(p.policy, p.opponent, f"{p.score:.9f}",
                  *(f"{x:.6f}" for x in (p.win_rate, p.tie_rate, p.loss_rate)), p.verdict)
    console.print(t)
    _exact_ranking(result)


def tournament(result) -> None:
    """A :class:`dicelab.tournament.Tournament`: standings, then every pair's verdict."""
    t = Table(title=f"{result.game.capitalize()} tournament: {len(result.policies)} policies, "
                    f"{result.seats} seats, {len(result.tables)} tables of "
                    f"{result.games_per_table:,} games, seed {result.seed}"
                    + (", common random numbers" if result.crn else ""),
              caption="rating: Bradley-Terry on every pairwise finish, Elo scale, bootstrap "
                      "95% interval; place: mean finishing place (1 = first)")
    for col in ("rank", "policy", "rating", "95% CI", "win rate", "95% CI", "place", "95% CI"):
        t.add_column(col, justify="left" if col == "policy" else "right", no_wrap=True)
    for s in result.standings():
        t.add_row(str(s.rank), s.policy, f"{s.rating:.1f}",
                  f"{s.rating_ci[0]:.1f}..{s.rating_ci[1]:.1f}", _pct(s.win_rate.mean),
                  _ci(s.win_rate.ci95, _pct), f"{s.place.mean:.3f}",
                  _ci(s.place.ci95, _num, 3))
    console.print(t)
    p = Table(title="pairs: the first policy's share of finishing ahead (level = half)",
              caption="verdict: Holm-corrected two-sided test of an even score at 5%; "
                      "effective games per game: the variance with independent dice over "
                      "the variance with the common dice")
    for col in ("policy", "vs", "score", "95% CI", "p (Holm)", "verdict", "eff. games/game"):
        p.add_column(col, justify="right" if col not in ("policy", "vs", "verdict")
                     else "left", no_wrap=True)
    for v in result.pairs():
        p.add_row(v.policy, v.opponent, f"{v.score.mean:.4f}",
                  f"{v.score.ci95[0]:.4f}-{v.score.ci95[1]:.4f}", f"{v.p_holm:.2g}",
                  v.verdict, f"{v.effective_games_per_game:.2f}")
    console.print(p)


def sprt_run(result) -> None:
    """A :class:`dicelab.sprt.SprtRun`: every pair's sequential decision."""
    s = result.spec
    t = Table(title=f"{result.game.capitalize()} SPRT: H0 elo {s.elo0:g} vs H1 elo "
                    f"{s.elo1:g}, alpha {s.alpha:g}, beta {s.beta:g}, seed {result.seed}"
                    + (", common random numbers" if result.crn else ""),
              caption="H1: the policy is the stronger by elo1; H0: by elo0; games: played "
                      "until the decision")
    for col in ("policy", "vs", "decision", "games", "score", "LLR"):
        t.add_column(col, justify="left" if col in ("policy", "vs", "decision") else "right",
                     no_wrap=True)
    lo, hi = s.bounds
    for p in result.pairs:
        t.add_row(p.policy, p.opponent, p.decision, f"{p.games:,}", f"{p.score.mean:.4f}",
                  f"{p.llr:.2f} [{lo:.2f}, {hi:.2f}]")
    console.print(t)


def tune_result(result) -> None:
    """A :class:`dicelab.tune.TuneResult`: the winner, then the best trials."""
    console.print(f"tuned {result.family} ({', '.join(result.params)}) against "
                  f"{', '.join(result.field)}: {len(result.trials)} trials, {result.method}, "
                  f"target {result.target:,}, seed {result.seed}")
    console.print(f"  best: {result.best}, score {result.best_score:.6f}"
                  + ("" if result.method == "exact" else
                     f" in the search; on fresh dice {result.rechecked_score:.6f} "
                     f"(SE {result.rechecked_se:.6f})"))
    for name, score in result.per_opponent.items():
        console.print(f"    against {name}: {score:.6f}")
    t = Table(title="the best distinct candidates")
    for col in (*result.params, "score"):
        t.add_column(col, justify="right")
    top = result.trials.drop_duplicates("policy").nlargest(8, "score")
    for values, score in zip(top[result.params].to_numpy(), top["score"], strict=True):
        t.add_row(*(str(int(v)) for v in values), f"{score:.6f}")
    console.print(t)


def advice_table(title: str, value_name: str, rows, ties: int, digits: int,
                 tie_order: str) -> None:
    """The options of one decision, best first: ``rows`` of (option, value, loss,
    tied with the best); ``ties`` how many options are worth the best."""
    t = Table(title=title, caption="#1 is the best" + (
        f"; {ties} options tie with the best (equal up to rounding; {tie_order})"
        if ties > 1 else ""))
    t.add_column("#", justify="right")
    t.add_column("option")
    t.add_column(value_name, justify="right")
    t.add_column("loss", justify="right")
    for i, (what, value, loss, tie) in enumerate(rows, 1):
        t.add_row(str(i), what, f"{value:.{digits}f}",
                  "tie" if tie and ties > 1 else f"{loss:.{digits}f}")
    console.print(t)


def farkle_advice(advice) -> None:
    """A :class:`dicelab.farkle.advise.FarkleAdvice`."""
    a = advice
    where = ("solitaire" if a.me is None else
             f"me {a.me:,}, opponent {a.opp:,}, target {a.target:,}, {a.ending}")
    rows = [(f"set aside {' '.join(map(str, o.keep))} ({o.points}), "
             + ("bank" if o.action == "bank" else f"roll {o.dice}"),
             100 * o.value if a.me is not None else o.value,
             100 * o.loss if a.me is not None else o.loss, o.tie_with_best)
            for o in a.options]
    advice_table(f"Farkle ({a.rules}, {where}): roll {' '.join(map(str, a.roll))} with "
                 f"{a.turn_points} turn points; {a.policy} play after",
                 "P(win) + ½P(tie), %" if a.me is not None else "expected turn score", rows,
                 a.ties,
                 digits=4 if a.me is not None else 2,
                 tie_order="more points first, then bank before roll")


def penta_simulation(result) -> None:
    """A :class:`dicelab.penta.simulate.PentaResult`."""
    from dicelab.cli.penta_cmds import render_simulation

    render_simulation(result, console)


def penta_distribution(result) -> None:
    """A :class:`dicelab.penta.distribution.ScoreDistribution`."""
    from dicelab.cli.penta_cmds import render_distribution

    render_distribution(result, console)


def penta_objective(result) -> None:
    """A :class:`dicelab.penta.objective_play.ObjectiveReport`."""
    from dicelab.cli.penta_cmds import render_objective

    render_objective(result, console)


def print_whole(table: Table) -> None:
    """Print ``table`` at the console's width, or wider if its numbers need it: the cells
    of its ``no_wrap`` columns are never cut (other columns may wrap down to 10 cells; a
    terminal narrower than that wraps the lines instead)."""
    from rich.cells import cell_len

    need = 1
    for col in table.columns:
        widest = max(cell_len(str(c)) for c in [col.header, *col.cells])
        need += 3 + (widest if col.no_wrap else min(widest, 10))
    if need <= console.width:
        console.print(table)
        return
    from rich.segment import Segments

    wide = console.options.update(width=need, max_width=need)
    console.print(Segments(console.render(table, wide)), crop=False)


def game_analysis(result) -> None:
    """A :class:`dicelab.analyse.AnalysisResult`: the costliest decisions, then one line
    per player (losses by class, luck and skill)."""
    from dicelab.analyse import CLASS_NAMES, LOSS_CLASSES, UNITS

    dec = result.decisions
    for kind, measure in result.measure.items():
        d = dec[(dec["game_kind"] == kind) & (dec["loss"] > 0)]
        d = d.sort_values("loss", ascending=False).head(15)
        scale, digits = (100.0, 2) if measure == "win" else (1.0, 2)
        unit = "%" if measure == "win" else "points"
        t = Table(title=f"{kind}: the costliest decisions (loss in {UNITS[measure]}"
                        f"{', as %' if measure == 'win' else ''})")
        for col in ("game", "seat", "turn", "roll", "chosen", "best", "loss", "class"):
            number = col in ("game", "seat", "turn", "loss")
            t.add_column(col, justify="right" if number else "left", no_wrap=number)
        for _, r in d.iterrows():
            t.add_row(str(r["game"]), str(r["seat"]), str(r["turn"]), r["roll"], r["chosen"],
                      r["best"], f"{scale * r['loss']:.{digits}f}", r["class"])
        if len(d):
            print_whole(t)
        bounds = ", ".join(f"{n} >= {scale * b:g}" for n, b in
                           zip(CLASS_NAMES, LOSS_CLASSES[measure], strict=True))
        n = result.games_of(kind)
        as_pct = " (as %)" if measure == "win" else ""
        rows = [r for r in result.summary() if r["game"] == kind]
        if not rows:
            console.print(f"{kind}: no finished turn to review")
            continue
        losses = Table(title=f"{kind}: {n:,} game{'' if n == 1 else 's'}, losses in "
                             f"{UNITS[measure]}{as_pct}",
                       caption=f"classes ({unit}): {bounds}")
        split = Table(title=f"{kind}: luck and skill, in {UNITS[measure]}{as_pct}",
                      caption="outcome - initial = luck + skill"
                              + (" + opponents" if measure == "win" else ""))
        for t, cols in ((losses, ("games", "decisions", "total loss", "mean loss",
                                  *CLASS_NAMES)),
                        (split, ("initial", "outcome", "luck", "skill",
                                 *(("opponents",) if measure == "win" else ())))):
            t.add_column("player", no_wrap=True)
            t.add_column("policy", no_wrap=True)
            for col in cols:  # names and numbers are never cut: their columns do not shrink
                t.add_column(col, justify="right", no_wrap=True)
        for row in rows:
            losses.add_row(row["player"], row["policy"], f"{row['games']:,}",
                           f"{row['decisions']:,}", f"{scale * row['total_loss']:,.2f}",
                           f"{scale * row['mean_loss']:,.3f}",
                           *(f"{row[c]:,}" for c in CLASS_NAMES))
            split.add_row(row["player"], row["policy"],
                          *(f"{scale * row[k]:,.2f}" for k in ("initial", "outcome", "luck",
                                                               "skill", "opponents")
                            if k != "opponents" or measure == "win"))
        print_whole(losses)
        print_whole(split)


#: Result type (module.qualname) -> renderer. Adding a result type = one entry here.
RENDERERS: dict[str, Callable[[Any], None]] = {
    "dicelab.farkle.simulate.FarkleResult": farkle_simulation,
    "dicelab.farkle.simulate.BustRiskResult": bust_risk,
    "dicelab.farkle.exact.ThresholdSolution": threshold_solution,
    "dicelab.farkle.solitaire.MaxEvSolution": max_ev_solution,
    "dicelab.farkle.solitaire.FastestSolution": fastest_solution,
    "dicelab.farkle.solve.OptimalWinSolution": optimal_win_solution,
    "dicelab.compare.Comparison": comparison,
    "dicelab.tournament.Tournament": tournament,
    "dicelab.sprt.SprtRun": sprt_run,
    "dicelab.tune.TuneResult": tune_result,
    "dicelab.penta.simulate.PentaResult": penta_simulation,
    "dicelab.penta.distribution.ScoreDistribution": penta_distribution,
    "dicelab.penta.objective_play.ObjectiveReport": penta_objective,
    "dicelab.farkle.advise.FarkleAdvice": farkle_advice,
    "dicelab.analyse.AnalysisResult": game_analysis,
}
