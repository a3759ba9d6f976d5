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
from datetime import timedelta
from typing import Any

import numpy as np
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from dicelab.cli import formats as F
from dicelab.cli.console import CliConsole
from dicelab.penta.rules import BOX_NAMES
from dicelab.stats import ALPHA
from dicelab.text import counted

# piped or captured output has no terminal width: use a wide page rather than rich's 80
# columns, so tables of several seats stay one line per statistic
console = CliConsole(width=None if sys.stdout.isatty() else 120)
err_console = CliConsole(stderr=True)


@contextlib.contextmanager
def progress_bar(enabled: bool, total: int, description: str = "games"
                 ) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr (only on a terminal); yields a ``(done, total)``
    callback, which also takes the ``description`` of a stage of other work (the next
    call without one goes back to ``description``). While kernels compile (a first run)
    the bar says so (:data:`COMPILING`), then goes back to what it said."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from dicelab.jit import compiling

    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  MofNCompleteColumn(), WallClockColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        said = [description]  # what the bar says when no kernel compiles

        def advance(done: int, total_: int, stage: str | None = None) -> None:
            said[0] = description if stage is None else stage
            bar.update(task, completed=done, total=total_, description=said[0])

        with compiling(lambda on: bar.update(task, description=COMPILING if on
                                             else said[0])):
            yield advance


#: What a progress bar says while numba compiles kernels (a first run of this version).
COMPILING = "compiling (first run only)"


class WallClockColumn(TimeElapsedColumn):
    """The time since the bar began, still running once the count is complete: the work
    after the last step (a first solve's compile of its table kernel, writing results)
    goes on while the bar stands at its total, and rich's own column stops there."""

    def render(self, task) -> Text:
        elapsed = task.elapsed
        if elapsed is None:
            return Text("-:--:--", style="progress.elapsed")
        return Text(str(timedelta(seconds=max(0, int(elapsed)))), style="progress.elapsed")


def show(result: Any) -> None:
    """Print ``result`` with its type's renderer (see :data:`RENDERERS`)."""
    kind = type(result)
    render = RENDERERS.get(f"{kind.__module__}.{kind.__qualname__}")
    if render is None:
        raise TypeError(f"no terminal view of a {kind.__qualname__}")
    render(result)


# --- formatting (one format per kind of number: dicelab.cli.formats) -------------------

_pct, _num, _ci = F.percent, F.number, F.interval


def _how(from_cache: bool) -> str:
    return "loaded from cache, solved originally in" if from_cache else "solved in"


def _where(d: dict) -> str:
    return (f"a Dask cluster of {d['workers']} worker(s)" if d["executor"] == "dask"
            else f"{d['threads']} thread(s)")


# --- Farkle -------------------------------------------------------------------------------


def farkle_simulation(result) -> None:
    """A :class:`dicelab.farkle.simulate.FarkleResult` as rich tables."""
    d = result.to_dict()
    seats = [result.seat(s) for s in range(len(result.seats))]
    multi = len(seats) > 1
    head = Table(title="Farkle simulation", show_header=False, box=None)
    head.add_row("games", F.count(d["games"]))
    head.add_row("seed", str(d["seed"]))
    head.add_row("rules", d["rules"])
    head.add_row("target", F.count(d["target"]))
    if multi:
        head.add_row("ending", d["ending"])
        head.add_row("first seat", "rotates" if d["first_seat"] is None
                     else str(d["first_seat"]))
    head.add_row("elapsed", f"{F.seconds(d['elapsed_s'])} on {_where(d)}")
    head.add_row("games/s", F.count(round(d["games_per_s"])))
    head.add_row("kernel", d["kernel"])
    console.print(head)

    t = Table(title="per seat (95% CI)")
    t.add_column("statistic")
    for s in seats:
        t.add_column(f"seat {s.seat}: {s.policy}", justify="right")

    def row(label, cell):
        t.add_row(label, *[cell(s) for s in seats])

    def est(e, digits, fmt=_num):
        return F.estimate(e.p if hasattr(e, "p") else e.mean, e.ci95, fmt, digits)

    if multi:
        row("win rate", lambda s: est(s.win_rate, 2, _pct))
        row("tie rate", lambda s: est(s.tie_rate, 2, _pct))
        row("mean place", lambda s: est(s.mean_place, 3))
        row("mean final score", lambda s: est(s.mean_final_score, 1))
    row("mean turns", lambda s: est(s.mean_turns, 3))
    row("points per turn", lambda s: est(s.points_per_turn, 1))
    row("bust rate per roll", lambda s: est(s.bust_rate_per_roll, 2, _pct))
    row("bust rate per turn", lambda s: est(s.bust_rate_per_turn, 2, _pct))
    for n in range(1, 7):
        row(f"bust rate, {counted(n, 'die', 'dice')}",
            lambda s, n=n: est(s.bust_by_dice[n], 2, _pct))
    for q in (1, 5, 25, 50, 75, 95, 99):
        row(f"final score p{q}", lambda s, q=q: ("≥" if s.percentiles[q] >= s.histogram_top
                                                 else "") + F.count(s.percentiles[q]))
    console.print(t)
    if result.capped_games:
        n = result.capped_games
        err_console.print(f"[bold yellow]warning:[/] {counted(n, 'game')} hit the safety cap "
                          f"of rounds and {'was' if n == 1 else 'were'} cut short (a policy "
                          "that almost never banks?)")


def bust_risk(result) -> None:
    """A :class:`dicelab.farkle.simulate.BustRiskResult`."""
    d = result.to_dict()
    t = Table(title=f"Farkle bust risk, rules '{d['rules']}' "
                    f"({F.count(d['rolls_per_dice_count'])} simulated rolls per row, "
                    f"seed {d['seed']})",
              caption="P(bust): exact; bust rate: simulated, with its 95% CI")
    for col in ("dice", "P(bust)", "bust rate"):
        t.add_column(col, justify="right")
    for r in d["bust_risk"]:
        t.add_row(F.count(r["dice"]), _pct(r["p_bust"], 3),
                  F.estimate(r["bust_rate"], r["bust_rate_ci95"], _pct, 3))
    console.print(t)


def _thresholds(th: dict) -> str:
    return "  ".join(f"{n}:{'never' if t is None else t}" for n, t in th.items())


def _turn_lines(d: dict) -> None:
    console.print(f"  {'expected turn score':<22}{_num(d['expected_turn_score'], 6)} points "
                  f"(SD {_num(d['turn_score_sd'])}), exact")
    console.print(f"  {'P(bust)':<22}{_pct(d['p_bust'], 4)}")
    for x, p in d["p_at_least"].items():
        console.print(f"  {f'P(bank >= {int(x):>5,})':<22}{_pct(p, 4)}")


def threshold_solution(sol) -> None:
    """A :class:`dicelab.farkle.solitaire.ThresholdSolution`."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy {d['policy']}")
    _turn_lines(d)
    console.print(f"  expected turns to target ({F.count(d['target'])}, solitaire): "
                  f"{_num(d['expected_turns_to_target'], 6)}")
    if "floor_points" in d:
        console.print(f"  farkle penalty: the race's totals down to -{d['floor_points']:,}")


def max_ev_solution(sol) -> None:
    """A :class:`dicelab.farkle.solitaire.MaxEvSolution`."""
    d = sol.to_dict()
    if "farkle_penalty" in d:
        penalty_max_ev_solution(d)
        return
    console.print(f"Farkle, rules '{d['rules']}', policy max-ev")
    _turn_lines(d)
    console.print("  banks from turn points, by dice left: "
                  + _thresholds(d["bank_thresholds"]))
    if not d["threshold_policy"]:
        console.print("  (not a pure threshold per n: see dicelab policy farkle max-ev)")
    console.print(f"  turn points capped at {F.count(d['cap'])} (banking proven at least as "
                  f"good above); solved in {F.seconds(d['solve_s'])}")


def penalty_max_ev_solution(d: dict) -> None:
    """The report of a :class:`dicelab.farkle.solitaire.MaxEvSolution` under a farkle
    penalty: one policy per run of lost turns."""
    console.print(f"Farkle, rules '{d['rules']}', policy max-ev, farkle penalty "
                  f"{d['farkle_penalty']} (third lost turn in a row)")
    console.print(f"  long-run points per turn {_num(d['points_per_turn'], 6)}, exact "
                  f"(the penalty counted)")
    table = Table(title="one banking rule per run of lost turns")
    for col in ("lost in a row", "share of turns", "P(bust)", "expected banked", "bias",
                "banks from turn points, by dice left"):
        table.add_column(col, justify="left" if col.startswith("banks") else "right")
    for s, th in enumerate(d["bank_thresholds_by_lost_turns"].values()):
        table.add_row(F.count(s), _pct(d["stationary"][s], 4),
                      _pct(d["p_bust_by_lost_turns"][s], 4),
                      _num(d["expected_banked"][s]), _num(d["bias"][s], 3),
                      _thresholds(th))
    console.print(table)
    console.print(f"  average-reward equations solved in {d['iterations']} iterations, "
                  f"{F.seconds(d['solve_s'])}")


def fastest_solution(sol) -> None:
    """A :class:`dicelab.farkle.solitaire.FastestSolution`."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy fastest")
    console.print(f"  expected turns to target ({F.count(d['target'])}, from 0): "
                  f"{_num(d['expected_turns_to_target'], 6)}")
    console.print("  banks from turn points, by dice left, at own total:")
    for total, th in d["bank_thresholds"].items():
        console.print(f"    {int(total):>6}: " + _thresholds(th))
    if "farkle_penalty" in d:
        console.print(f"  farkle penalty {d['farkle_penalty']}: totals down to "
                      f"-{d['floor_points']:,}; at 0, by lost turns in a row:")
        for k, th in d["bank_thresholds_by_lost_turns"].items():
            console.print(f"    {k:>6}: " + _thresholds(th))
        low, high = d["expected_turns_to_target"], d["policy_turns_no_floor"]
        deep = f"totals down to -{d['no_floor_points']:,}"
        console.print(
            f"  with no floor to totals: the same to 1e-9 (its policy's race, {deep})"
            if abs(high - low) <= 1e-9 * high else
            f"  with no floor to totals this policy takes {_num(high, 6)} turns ({deep});\n"
            f"  the best play there takes from {_num(low, 6)} to {_num(high, 6)}")
        console.print(f"  {counted(d['sweeps'], 'sweep')}")
    console.print(f"  {_how(d['from_cache'])} {F.seconds(d['solve_s'])}")


def optimal_win_solution(sol) -> None:
    """A :class:`dicelab.farkle.solve.OptimalWinSolution`."""
    d = sol.to_dict()
    console.print(f"Farkle, rules '{d['rules']}', policy {d['policy']}, ending {d['ending']}")
    if sol.opponent is None:
        console.print(f"  target {F.count(d['target'])}, optimal play by both players, "
                      "first player:")
    else:
        console.print(f"  target {F.count(d['target'])}, the best response to "
                      f"{sol.opponent}, moving first:")
    console.print(f"  P(win) {_pct(d['p_win'], 4)}  P(tie) {_pct(d['p_tie'], 4)}  "
                  f"P(loss) {_pct(d['p_loss'], 4)}")
    if sol.opponent is not None:
        console.print(f"  moving second: P(win) {_pct(d['second_p_win'], 4)}  P(tie) "
                      f"{_pct(d['second_p_tie'], 4)}  P(loss) {_pct(d['second_p_loss'], 4)}")
    console.print(f"  fairest head start for the second player: "
                  f"{F.count(d['fair_head_start'])} points (first player's P(win) + "
                  f"½P(tie) = {_pct(d['fair_head_start_value'], 4)})")
    if "farkle_penalty" in d:
        console.print(f"  farkle penalty {d['farkle_penalty']}: totals down to "
                      f"-{d['floor_points']:,}, lost turns in a row; "
                      f"{counted(d['sweeps'], 'policy improvement sweep')}")
        error = f"value error about {d['tolerance']:.1e} (from the sweeps' contraction)"
    else:
        error = f"value error <= {d['tolerance']:.1e}"
    console.print(f"  {counted(d['states'], 'state')}, {error}, "
                  f"{F.size(d['memory_bytes'])}; {_how(d['from_cache'])} "
                  f"{F.seconds(d['solve_s'])}")


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
    where = f", target {F.count(result.target)}" if result.target else ""
    where += f", ending {result.ending}" if result.ending else ""
    t = _pairs_table(f"{result.game.capitalize()} head to head: rules {result.rules}{where}, "
                     f"{counted(result.games_per_table, 'game')} per table (one table per "
                     f"pair), seed {result.seed}",
                     "score = P(win) + ½P(tie) of the policy; tie = the score's CI contains "
                     "50%; 95% CIs in brackets",
                     ("score", "win rate", "tie rate"))
    for p in result.pairs:
        d = p.to_dict()
        t.add_row(p.policy, p.opponent, F.estimate(d["score"], d["score_ci95"], _pct),
                  F.estimate(d["win_rate"], d["win_rate_ci95"], _pct),
                  F.estimate(d["tie_rate"], d["tie_rate_ci95"], _pct), p.verdict)
    print_whole(t)
    _ranking(result, 2)


def exact_comparison(result) -> None:
    """An exact :class:`dicelab.compare.Comparison` (Farkle): every pair's exact outcome in
    both seats; the score to 1e-9, ties within 1e-9 of one half."""
    if result.game == "penta":
        return penta_exact_comparison(result)
    ending = result.pairs[0].ending if result.pairs else ""
    t = _pairs_table(f"Farkle head to head, exact: rules {result.rules}, ending {ending}, "
                     f"target {F.count(result.target)}",
                     "score = P(win) + ½P(tie) of the policy, the mean of its two seats; "
                     "1st / 2nd: the policy moves first / second; exact, no sampling"
                     + _iteration_note(result.pairs),
                     ("score", "1st win rate", "1st tie rate", "2nd win rate", "2nd tie rate"))
    for p in result.pairs:
        t.add_row(p.policy, p.opponent, _pct(p.score, 7),
                  *(_pct(x, 4) for x in (p.first.win, p.first.tie, p.second.win,
                                         p.second.tie)),
                  p.verdict)
    print_whole(t)
    _ranking(result, 7)


def _iteration_note(pairs) -> str:
    """Under the farkle penalty the evaluation iterates: its largest error bound."""
    tol = max((getattr(p, "tolerance", 0.0) for p in pairs), default=0.0)
    return f"; iterated (the farkle penalty) to within {tol:.0e}" if tol > 0.0 else ""


def _ranking(result, digits: int) -> None:
    ranking = sorted(result.mean_scores().items(), key=lambda kv: -kv[1])
    cis = result.mean_score_ci95() or {}

    def shown(name: str, score: float) -> str:
        ci = cis.get(name)
        return _pct(score, digits) + ("" if ci is None else
                                      f" [{_pct(ci[0], digits)}, {_pct(ci[1], digits)}]")

    console.print("mean score over its pairings: "
                  + ", ".join(f"{name} {shown(name, score)}" for name, score in ranking)
                  + f"  ({F.seconds(result.elapsed_s)})")


def penta_exact_comparison(result) -> None:
    """An exact Penta :class:`dicelab.compare.Comparison`: each pair's P(win), P(tie),
    P(loss) from the two exact score distributions (the order of play does not matter)."""
    t = _pairs_table(f"Penta head to head, exact: rules {result.rules}",
                     "score = P(win) + ½P(tie) of the policy; tie = a shared final score; "
                     "exact (from the two score distributions), no sampling",
                     ("score", "win rate", "tie rate", "loss rate"))
    for p in result.pairs:
        t.add_row(p.policy, p.opponent, _pct(p.score, 7),
                  *(_pct(x, 4) for x in (p.win_rate, p.tie_rate, p.loss_rate)), p.verdict)
    print_whole(t)
    _ranking(result, 7)


def _played_under(rules, target) -> str:
    """``, rules R, target T, ending E`` of a run (Penta's rules have no target or
    ending)."""
    ending = getattr(rules, "ending", None)
    return (f", rules {rules.name}" + ("" if target is None else f", target {F.count(target)}")
            + (f", ending {ending}" if ending else ""))


def tournament(result) -> None:
    """A :class:`dicelab.tournament.Tournament`: standings (ranked by win rate), then every
    pair's verdict."""
    t = Table(title=f"{result.game.capitalize()} tournament: {len(result.policies)} policies, "
                    f"{result.seats_per_table} seats, {counted(len(result.tables), 'table')} "
                    f"of {counted(result.games_per_table, 'game')}"
                    f"{_played_under(result.rules, result.target)}, seed {result.seed}"
                    + (", common random numbers" if result.crn else ""),
              caption="ranked by win rate (tables won alone); tie rate: tables where it "
                      "shared the top; mean place: 1 = first; rating: how often it finishes "
                      "ahead of another policy (Bradley-Terry on every pairwise finish, Elo "
                      "scale, jackknife CI), which at 3 or more seats can order the policies "
                      "differently from the win rate; 95% CIs in brackets")
    for col in ("rank", "policy", "win rate", "tie rate", "mean place", "rating"):
        t.add_column(col, justify="left" if col == "policy" else "right", no_wrap=True)
    for s in result.standings():
        t.add_row(F.count(s.rank), s.policy, F.estimate(s.win_rate.mean, s.win_rate.ci95, _pct),
                  F.estimate(s.tie_rate.mean, s.tie_rate.ci95, _pct),
                  F.estimate(s.mean_place.mean, s.mean_place.ci95,
                                                    _num, 3),
                  F.estimate(s.rating, s.rating_ci95, _num, 1))
    print_whole(t)
    p = Table(title="pairs: the first policy's share of finishing ahead (level = half)",
              caption="score with its 95% CI; verdict: Holm-corrected two-sided test of an "
                      "even score at 5% (the sign test where every chunk scores alike); "
                      "effective games per game: the variance with independent dice over "
                      "the variance with the common dice")
    for col in ("policy", "vs", "score", "p (Holm)", "verdict", "eff. games/game"):
        p.add_column(col, justify="right" if col not in ("policy", "vs", "verdict")
                     else "left", no_wrap=col != "eff. games/game")
    for v in result.pairs():
        p.add_row(v.policy, v.opponent, F.estimate(v.score.mean, v.score.ci95, _pct),
                  F.p_value(v.p_holm), v.verdict, _num(v.effective_games_per_game))
    print_whole(p)


def sprt_run(result) -> None:
    """A :class:`dicelab.sprt.SprtRun`: every pair's sequential decision, beside the games
    the test needs on average and those of a fixed-size test."""
    from dicelab.sprt import FIRST_LOOK_GAMES

    s = result.spec
    t = Table(title=f"{result.game.capitalize()} SPRT: H0 elo {s.elo0:g} vs H1 elo "
                    f"{s.elo1:g}, alpha {s.alpha:g}, beta {s.beta:g} (LLR bounds "
                    f"{_ci(s.bounds)}){_played_under(result.rules, result.target)}, seed "
                    f"{result.seed}"
                    + (", common random numbers" if result.crn else ""),
              caption="H1: the policy is the stronger by elo1; H0: by elo0; games: played "
                      "until the decision; score with its 95% CI; expected if H0 / if H1: "
                      "the test's average games "
                      "when that hypothesis holds (Wald); fixed test: the games of a "
                      "fixed-size test with the same error rates; both from this pair's "
                      "measured variance"
                      + ("; LLR n/a: every unit was level, no variance to test "
                         "with, so no decision" if any(math.isnan(p.llr) and p.looked
                                                       for p in result.pairs) else "")
                      + (f"; LLR n/a: --games ended the test before its first look, at "
                         f"{F.count(FIRST_LOOK_GAMES)} games, so no decision"
                         if not all(p.looked for p in result.pairs) else ""))
    for col in ("policy", "vs", "decision", "games", "score", "LLR", "expected if H0",
                "expected if H1", "fixed test"):
        t.add_column(col, justify="left" if col in ("policy", "vs", "decision") else "right",
                     no_wrap=True)
    for p in result.pairs:
        h0, h1 = p.expected_games
        t.add_row(p.policy, p.opponent, p.decision, F.count(p.games),
                  F.estimate(p.score.mean, p.score.ci95, _pct), _num(p.llr), F.count(_round(h0)),
                  F.count(_round(h1)), F.count(_round(p.fixed_games)))
    print_whole(t)


def _round(x: float) -> float:
    return x if math.isnan(x) else round(x)


def tune_result(result) -> None:
    """A :class:`dicelab.tune.TuneResult`: how the space was covered, the winner, then
    the best candidates."""
    mc = result.method != "exact"
    seed = "" if result.seed is None else f", seed {result.seed}"  # None: nothing drawn
    console.print(f"tuned {result.family} ({', '.join(result.params)}) against "
                  f"{', '.join(result.field)}: {result.method}"
                  f"{_played_under(result.rules, result.target)}{seed}")
    if result.search == "enumerated":
        console.print(f"  every member evaluated: {F.count(result.evaluated)} of "
                      f"{F.count(result.members)}")
    else:
        console.print(f"  searched ({result.search}, {counted(result.trials, 'trial')}): "
                      f"{F.count(result.evaluated)} of {counted(result.members, 'member')} "
                      "evaluated; the best found is not proven best")
    se = f" (SE {_pct(result.best_score_se, 4)})" if mc else ""
    if not result.measured:
        console.print("  no standard error (one unit of games per seating)"
                      + (f", so no best: all {F.count(result.evaluated)} members evaluated "
                         "tie" if result.evaluated > 1 else "")
                      + "; a larger --budget gives one")
    elif mc and not result.best_score_se > 0:
        console.print(f"  its score has no standard error (all {F.count(result.units)} "
                      "chunks of games scored alike against the field); the other members "
                      "are told apart from it by their paired differences")
    label = ("best" if result.proven_best
             else "best found" if result.measured and not result.all_tied
             else "highest score")
    console.print(f"  {label}: {result.best}, score {_pct(result.best_score, 4)}{se}"
                  + (f", the best of the {F.count(result.members)} members of the "
                     f"space ({_space(result.ranges)})" if result.proven_best else "")
                  + (f" in the search; on fresh dice {_pct(result.rechecked_score, 4)} "
                     f"(SE {_pct(result.rechecked_score_se, 4)})" if mc else ""))
    others = result.evaluated - 1
    confidence = f"{1 - ALPHA:.0%} confidence, Holm over {counted(others, 'comparison')}"
    if mc and result.measured and result.all_tied:
        console.print(f"  no best: every member evaluated is tied with the highest score "
                      f"(none differs from it at {confidence})")
    elif result.tied_members and result.measured:
        why = (f" (not told apart at {confidence})" if mc else "")
        console.print(f"  tied with it{why}: {', '.join(result.tied_members)}")
    for name, e in result.per_opponent.items():
        console.print(f"    against {name}: {_pct(e.mean, 4)}"
                      + (f" (SE {_pct(e.se, 4)})" if mc else ""))
    t = Table(title="the best candidates" if result.measured and not result.all_tied
              else "the candidates of highest score (all tie: no standard error)"
              if not result.measured else "the candidates of highest score (all tie)")
    for col in (*result.params, "score", *(("SE", "vs best") if mc else ())):
        t.add_column(col, justify="right")
    top = result.candidates.nlargest(8, "score")
    vs_best = top["vs_best"] if mc else top["policy"]
    for values, score, score_se, vs in zip(top[result.params].to_numpy(), top["score"],
                                           top["score_se"], vs_best, strict=True):
        t.add_row(*(F.count(v) for v in values), _pct(score, 4),
                  *((_pct(score_se, 4), vs) if mc else ()))
    console.print(t)
    seatings = "both seatings" if result.game == "farkle" else "two-seat games"
    units = result.units
    chunks = ("chunks of games" if units is None else "one chunk of games per opponent"
              if units == 1 else f"{F.count(units)} chunks of games per opponent")
    rough = ("; from so few chunks the SE is itself rough" if units is not None
             and 1 < units < 10 else "")
    console.print(f"score: mean P(win) + ½P(tie) over the field, {seatings}"
                  + (f"; SE: its standard error over {chunks} (n/a with one chunk, "
                     f"and with one and a short one){rough}; vs best: tie when its "
                     "difference from the best, paired on the same dice, is not "
                     f"significant at {1 - ALPHA:.0%} (Holm over the members compared; "
                     "the sign test where it is the same in every chunk) or is zero"
                     if mc else ", exact"))


def advice_table(title: str, value_name: str, rows, ties: int, fmt: Callable[..., str],
                 digits: int, tie_order: str, note: str | None = None) -> None:
    """The options of one decision, best first: ``rows`` of (option, value, loss,
    tied with the best), the value and the loss in ``fmt`` with ``digits`` decimals, or
    scientific notation where those would hide them (:func:`~dicelab.cli.formats.ranked`);
    ``ties`` how many options are worth the best; ``note`` ends the caption."""
    t = Table(title=title, caption="#1 is the best" + (
        f"; {ties} options tie for the best (equal up to rounding; {tie_order})"
        if ties > 1 else "") + (f"; {note}" if note else ""))
    t.add_column("#", justify="right")
    t.add_column("option")
    t.add_column(value_name, justify="right")
    t.add_column("loss", justify="right")
    for i, (what, value, loss, tie) in enumerate(rows, 1):
        t.add_row(F.count(i), what, F.ranked(value, digits, fmt),
                  "tie" if tie and ties > 1 else F.ranked(loss, digits, fmt))
    console.print(t)


def farkle_advice(advice) -> None:
    """A :class:`dicelab.farkle.advise.FarkleAdvice`."""
    a = advice
    two = a.me is not None
    where = (f"solitaire{a.runs_words}" if not two else
             f"me {F.count(a.me)}, opponent {F.count(a.opp)}, target {F.count(a.target)}, "
             f"{a.ending}{a.runs_words}" + ("" if a.floor_points is None
                                            else f", totals down to -{F.count(a.floor_points)}"))
    title = (f"Farkle ({a.rules}, {where}): roll {F.dice(a.roll)} with "
             f"{F.count(a.turn_points)} turn points; {a.policy} play after")
    value_name = "P(win) + ½P(tie)" if two else "expected turn score"
    fmt, digits = (_pct, 4) if two else (_num, 2)
    exact = _exact_to(a.tolerance, "" if two else " points")
    if a.turn_lost:  # no choice: the one row is the lost turn
        t = Table(title=title, caption=f"{_lost_turn_words(a)}; {exact}")
        t.add_column("option")
        t.add_column(value_name, justify="right")
        t.add_row("none: nothing scores, the turn is lost",
                  F.ranked(a.lost_turn_value, digits, fmt))
        console.print(t)
        return
    rows = [(f"set aside {F.dice(o.keep)} ({F.count(o.points)}), "
             + ("bank" if o.action == "bank" else f"roll {o.dice}"), o.value, o.loss,
             o.tie_with_best)
            for o in a.options]
    advice_table(title, value_name, rows, a.ties, fmt, digits,
                 tie_order="more points first, then bank before roll", note=f"values {exact}")


def _exact_to(tolerance: float, unit: str = "") -> str:
    """``exact to ±4e-14`` (the bound rounded up to one significant digit, so it never
    shows less than it is), or ``exact up to rounding`` for a bound of 0."""
    if not tolerance > 0:
        return "exact up to rounding"
    e = math.floor(math.log10(tolerance))
    m = math.ceil(round(tolerance / 10.0**e, 9))
    if m >= 10:
        m, e = 1, e + 1
    return f"exact to ±{m}e{e}{unit}"


def _lost_turn_words(a) -> str:
    """What a roll that scores nothing costs (:class:`dicelab.farkle.advise.
    FarkleAdvice` with ``turn_lost``), and what its value is."""
    words = "no choice: the roll scores nothing and the turn is lost"
    if a.turn_points:
        words += f", with the {F.count(a.turn_points)} turn points set aside"
    if a.runs_words and a.my_farkles_after == 0:  # under a penalty: the streak's end
        words += "; the third lost turn in a row costs the farkle penalty, " + (
            f"{F.count(a.penalty_points)} points" if a.penalty_points
            else "nothing at the floor")
    elif a.runs_words:  # the run goes on
        words += f"; {counted(a.my_farkles_after, 'lost turn')} in a row now"
    if a.mode == "last-round":
        return words + "; the opponent keeps the lead and wins"
    if a.mode == "two-player":
        return words + "; its value: the position it leaves, the opponent to move"
    return words + ("; its value: max-ev's long-run cost of a lost turn" if a.runs_words
                    else "; the turn scores 0")


def penta_simulation(result) -> None:
    """Rich tables of a :class:`PentaResult`: one column per seat."""
    seats = [result.seat(s) for s in range(len(result.seats))]
    title = (f"Penta, rules '{result.rules}': {counted(result.games, 'game')}, "
             f"seed {result.seed}, {F.count(round(result.games_per_s))} games/s"
             + (f" on a Dask cluster of {counted(result.workers, 'worker')}"
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
        row(f"mean {name}", lambda s, n=name: F.estimate(s.mean_box_scores[n].mean,
                                                           s.mean_box_scores[n].ci95,
                                                           F.number, 3))
    console.print(t)
    if len(seats) > 1:
        tie = result.tie_rate
        console.print(f"tie rate (the highest final score shared): "
                      f"{F.estimate(tie.p, tie.ci95, F.percent)}, {counted(tie.count, 'game')}")


def penta_distribution(dist) -> None:
    """A rich table of a :class:`~dicelab.penta.distribution.ScoreDistribution`."""
    from dicelab.penta.distribution import AT_LEAST

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
    for target in AT_LEAST:
        t.add_row(f"P(final score >= {target})", F.percent(dist.p_at_least(target), 4))
    t.add_row("P(upper bonus)", F.percent(dist.p_upper_bonus, 4))
    t.add_row("P(Penta box = 50)", F.percent(dist.p_penta_fifty, 4))
    t.add_row("expected Penta bonuses", F.number(dist.mean_penta_bonuses, 6))
    for name, m in zip(BOX_NAMES, dist.box_means, strict=True):
        t.add_row(f"expected {name}", F.number(m, 4))
    console.print(t)


#: Decimals of a Penta objective's value on a terminal: a probability (``at-least``, a win
#: share of ``beat``) in percent, to 1e-10 as a fraction; ``utility``'s points.
OBJECTIVE_DIGITS = {True: 8, False: 6}
#: A gain over optimal smaller than this (in the objective's unit) is the rounding of the
#: exact sums (about 1e-15; ``at-least:0``'s is 3e-15): it prints as zero.
OBJECTIVE_ROUNDING = 1e-12


def objective_cells(value: float, optimal_value: float, probability: bool
                    ) -> tuple[str, str, str, str]:
    """A Penta objective's value, optimal's value, the gain over optimal and optimal's own
    gain (zero) as the table prints them: a ``probability`` in percent (JSON keeps the
    fraction), else a number; to :data:`OBJECTIVE_DIGITS` decimals, or as many more (up to
    four) as show the gain with two significant digits, so that a tiny gain is never
    printed as none; a gain the decimals still cannot show goes to scientific notation
    (:func:`~dicelab.cli.formats.ranked`); one within :data:`OBJECTIVE_ROUNDING` is zero.

    >>> objective_cells(0.9100188005444859, 0.8623477824324051, True)
    ('91.00188005%', '86.23477824%', '4.76710181%', '0.00000000%')
    >>> objective_cells(0.5 + 3e-11, 0.5, True)
    ('50.0000000030%', '50.0000000000%', '0.0000000030%', '0.0000000000%')
    >>> objective_cells(1.0, 0.9999999999999966, True)[2]
    '0.00000000%'
    """
    fmt = F.percent if probability else F.number
    digits = OBJECTIVE_DIGITS[probability]
    gain = value - optimal_value
    if abs(gain) < OBJECTIVE_ROUNDING:
        gain = 0.0
    else:  # the decimals of its two significant digits
        shown = abs(gain) * (100 if probability else 1)
        digits = min(max(digits, 1 - math.floor(math.log10(shown))), digits + 4)
    return (fmt(value, digits), fmt(optimal_value, digits), F.ranked(gain, digits, fmt),
            fmt(0.0, digits))


def penta_objective(report) -> None:
    """A :class:`dicelab.penta.objective_play.ObjectiveReport`: the objective's policy
    beside ``optimal`` (``mean``'s policy is ``optimal``: one column)."""
    from dicelab.penta.distribution import AT_LEAST

    sol, dist, base = report.solution, report.policy, report.optimal
    obj = report.objective
    t = Table(title=f"Penta, rules '{sol.rules.name}': objective {obj.name} ({obj.unit})",
              caption=("loaded from the disk cache; the solve took " if sol.from_cache
                       else "solved in ") + F.seconds(sol.solve_s) + "; the distribution "
                      + ("loaded" if dist.from_cache else "computed")
                      + f" ({F.seconds(dist.compute_s)})")
    dists = [dist] if obj.kind == "mean" else [dist, base]
    t.add_column("quantity")
    for d in dists:
        t.add_column(f"policy {d.policy}", justify="right")

    def row(label, cell) -> None:
        t.add_row(label, *(cell(d) for d in dists))

    if obj.kind != "mean":  # mean's value is the expected final score row below
        value, optimal, gain, zero = objective_cells(
            sol.value, report.optimal_value, obj.kind in ("at-least", "beat"))
        t.add_row(obj.unit, value, optimal)
        t.add_row("gain over optimal", gain, zero)
        if obj.kind == "utility":
            t.add_row("expected utility", f"{sol.raw_value:.6e}", "")
        t.add_row("decisions per game differing from optimal",
                  F.number(dist.differ_from_optimal, 4), "0")
    row("expected final score", lambda d: F.number(d.mean, 6))
    row("final score SD", lambda d: F.number(d.sd, 4))
    for q in dist.percentiles:
        row(f"final score p{q}", lambda d, q=q: F.count(d.percentiles[q]))
    for target in AT_LEAST:
        if obj.kind != "at-least" or target != obj.target:  # that one is the first row
            row(f"P(final score >= {target})",
                lambda d, x=target: F.percent(d.p_at_least(x), 4))
    row("P(upper bonus)", lambda d: F.percent(d.p_upper_bonus, 4))
    row("P(Penta box = 50)", lambda d: F.percent(d.p_penta_fifty, 4))
    row("expected Penta bonuses", lambda d: F.number(d.mean_penta_bonuses, 6))
    for k, name in enumerate(BOX_NAMES):
        row(f"expected {name}", lambda d, k=k: F.number(d.box_means[k], 4))
    console.print(t)


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
    from dicelab.analyse import (
        CLASS_NAMES,
        has_opponents,
        in_probability,
        loss_bounds,
        unit_of,
    )
    from dicelab.penta.objective_play import WIN_SHARE

    dec = result.decisions
    several = len(set(result.logs)) > 1  # each counts its games from 0: a row names its log
    for kind, measure in result.sections():
        mixed = len(result.sections()) > len(result.measure)
        d = dec[(dec["game_kind"] == kind) & (dec["measure"] == measure) & (dec["loss"] > 0)]
        d = d.sort_values("loss", ascending=False).head(15)
        pct = in_probability(measure)
        scale, digits = (100.0, 2) if pct else (1.0, 2)
        unit = "%" if pct else "points"
        t = Table(title=f"{kind}: the costliest decisions (loss in {unit_of(measure)}"
                        f"{', as %' if pct else ''})")
        for col in ("log", "game", "seat", "turn", "roll", "chosen", "best", "value chosen",
                    "value best", "loss", "class")[0 if several else 1:]:
            number = col in ("game", "seat", "turn", "loss") or col.startswith("value")
            t.add_column(col, justify="right" if number else "left", no_wrap=number)
        for _, r in d.iterrows():
            t.add_row(*([Text(r["log"])] if several else []),  # as given, not markup
                      str(r["game"]), str(r["seat"]), str(r["turn"]), r["roll"], r["chosen"],
                      r["best"], *(f"{scale * r[k]:,.{digits}f}" for k in ("value_chosen",
                                                                          "value_best",
                                                                          "loss")),
                      r["class"])
        if len(d):
            print_whole(t)
        bounds = ", ".join(f"{n} >= {scale * b:g}" for n, b in
                           zip(CLASS_NAMES, loss_bounds(measure), strict=True))
        n = result.games_of(kind)
        as_pct = " (as %)" if pct else ""
        rows = [r for r in result.summary() if r["game"] == kind and r["measure"] == measure]
        if not rows:
            console.print(f"{kind}: no finished turn to review")
            continue
        games = (counted(n, "game") if not mixed
                 else f"players judged by {measure}")
        losses = Table(title=f"{kind}: {games}, losses in {unit_of(measure)}{as_pct}",
                       caption=f"classes ({unit}): {bounds}")
        others = has_opponents(measure)
        split = Table(title=f"{kind}: luck and skill, in {unit_of(measure)}{as_pct}",
                      caption="outcome - initial = luck + skill"
                              + (" + opponents" if others else "")
                              + ("; opponents: the change between its turns"
                                 if measure == WIN_SHARE else "")
                              + ("; outcome of a game stopped early: the value of its last "
                                 "position, an estimate"
                                 if any(row.get("outcome_estimated") for row in rows) else ""))
        for t, cols in ((losses, ("games", "decisions", "total loss", "mean loss",
                                  *CLASS_NAMES)),
                        (split, ("initial", "outcome", "luck", "skill",
                                 *(("opponents",) if others else ())))):
            t.add_column("player", no_wrap=True)
            t.add_column("policy", no_wrap=True)
            for col in cols:  # names and numbers are never cut: their columns do not shrink
                t.add_column(col, justify="right", no_wrap=True)
        for row in rows:
            losses.add_row(row["player"], row["policy"], f"{row['games']:,}",
                           f"{row['decisions']:,}", f"{scale * row['total_loss']:,.2f}",
                           f"{scale * row['mean_loss']:,.3f}",
                           *(f"{row[c]:,}" for c in CLASS_NAMES))
            split.add_row(row["player"], row["policy"],  # + 0.0: rounding shows no -0.00
                          *(f"{round(scale * row[k], 2) + 0.0:,.2f}"
                            for k in ("initial", "outcome", "luck", "skill", "opponents")
                            if k != "opponents" or others))
        print_whole(losses)
        print_whole(split)


def _space(ranges) -> str:
    """A tune's space as its ranges: ``threshold 300..400 step 50``."""
    return ", ".join(f"{p} {lo:,}..{hi:,} step {step:,}" for p, (lo, hi, step) in ranges.items())


def farkle_evaluation(e) -> None:
    d = e.to_dict()
    console.print(f"[bold]{e.policy}[/bold]: Farkle report card, exact: rules {e.rules.name}, "
                  f"ending {e.rules.ending}, target {e.target:,}")
    t = Table(show_header=True)
    for col in ("against", "score", "moving first", "moving second"):
        t.add_column(col, justify="left" if col == "against" else "right")
    for who, pair in (("optimal-win", e.vs_optimal_win), ("ai", e.vs_ai)):
        t.add_row(who, _pct(pair.score), _pct(pair.first.score), _pct(pair.second.score))
    console.print(t)
    console.print(f"exploitability {_pct(e.exploitability)}: the best response to it scores "
                  f"{_pct(e.best_response_score)} against it (seats averaged); optimal-win "
                  f"takes {_pct(e.optimal_win_take)}")
    console.print(f"points per turn from the start {e.points_per_turn:,.1f}; turns to "
                  f"{e.target:,} alone {e.turns_to_target:,.2f}")
    b = Table(title="banks from (turn points) at 0 : 0, by dice left", show_header=True)
    b.add_column("policy")
    for n in range(1, 7):
        b.add_column(str(n), justify="right")
    for who, row in ((e.policy, d["bank_thresholds"]),
                     ("optimal-win", d["optimal_bank_thresholds"])):
        b.add_row(who, *("never" if row[n] is None else f"{row[n]:,}" for n in range(1, 7)))
    console.print(b)
    w = Table(title="its costliest decisions (each valued under optimal play after it)",
              show_header=True)
    for col in ("my total", "opponent", "turn points", "dice left", "it", "loss"):
        w.add_column(col, justify="right")
    for dec in e.worst:
        w.add_row(f"{dec.my:,}", f"{dec.opp:,}", f"{dec.turn_points:,}", str(dec.dice),
                  "banks" if dec.banks else "rolls", _pct(dec.loss))
    console.print(w if e.worst else "no decision examined loses win probability")
    console.print(f"score = P(win) + ½P(tie); evaluated in {e.elapsed_s:,.1f} s")


def penta_evaluation(e) -> None:
    """A :class:`~dicelab.penta.evaluate.PentaEvaluation` (a Penta report card)."""
    how = "exact" if e.exact else f"{counted(e.games, 'game')} simulated, seed {e.seed}"
    console.print(f"[bold]{e.policy}[/bold]: Penta report card, rules {e.rules} ({how})")
    m = e.mean_final_score
    lo, hi = m.ci95  # the optimum is exact: the gap's interval is the mean's, reflected
    console.print("mean final score " + (F.number(m.mean, 4) if e.exact else
                                         F.estimate(m.mean, m.ci95, F.number, 2))
                  + f", SD {F.number(e.final_score_sd, 2)}; optimal "
                  f"{F.number(e.optimum, 4)}: "
                  + (F.number(e.gap, 2) if e.exact else
                     F.estimate(e.gap, (e.optimum - hi, e.optimum - lo), F.number, 2))
                  + " below it")
    t = Table(title=f"what it loses against optimal, by decision "
                    f"({counted(e.analysed_games, 'game')} played move by move, seed "
                    f"{e.seed})", show_header=True)
    for col in ("decision class", "decisions", "loss per decision", "loss per game"):
        t.add_column(col, justify="left" if col == "decision class" else "right")
    for cls, loss in e.losses.items():
        if not loss.decisions:  # nothing made, nothing lost: no estimate, no interval
            t.add_row(cls, "0", "none made", "0 (none made)")
            continue
        t.add_row(cls, F.count(loss.decisions),
                  F.estimate(loss.per_decision.mean, loss.per_decision.ci95, F.number, 3),
                  F.estimate(loss.per_game.mean, loss.per_game.ci95, F.number, 2))
    tl, td = e.total_loss, e.loss_per_decision
    t.add_row("all", F.count(e.decisions), F.estimate(td.mean, td.ci95, F.number, 3),
              F.estimate(tl.mean, tl.ci95, F.number, 2))
    console.print(t)
    console.print("loss: the expected final score a decision gives up against the best "
                  "option, with optimal play after it; 95% intervals in brackets; "
                  f"evaluated in {e.elapsed_s:,.1f} s")


#: Result type (module.qualname) -> renderer. Adding a result type = one entry here.
RENDERERS: dict[str, Callable[[Any], None]] = {
    "dicelab.farkle.simulate.FarkleResult": farkle_simulation,
    "dicelab.farkle.simulate.BustRiskResult": bust_risk,
    "dicelab.farkle.solitaire.ThresholdSolution": threshold_solution,
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
    "dicelab.evaluate.FarkleEvaluation": farkle_evaluation,
    "dicelab.penta.evaluate.PentaEvaluation": penta_evaluation,
}
