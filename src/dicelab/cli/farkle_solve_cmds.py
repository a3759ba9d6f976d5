"""``dicelab solve farkle`` and ``dicelab policy farkle``: exact Farkle answers.

Thin shells: the numbers come from :mod:`dicelab.farkle.turn_dp`,
:mod:`dicelab.farkle.exact` and :mod:`dicelab.farkle.two_player`; the pictures from
:mod:`dicelab.plots`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from dicelab.errors import UserError
from dicelab.farkle.scoring import POINT_UNIT

DEFAULT_TARGET = 10_000
_TAIL_POINTS = (300, 500, 1000, 2000, 3000)


def _target(target: int | None) -> int:
    t = DEFAULT_TARGET if target is None else target
    if t <= 0 or t % POINT_UNIT:
        raise UserError(f"--target must be a positive multiple of {POINT_UNIT}, not {t}")
    return t


def _total(name: str, value: int, target: int) -> int:
    if value < 0 or value >= target or value % POINT_UNIT:
        raise UserError(f"{name} must be a multiple of {POINT_UNIT} in 0..{target - 50} "
                        f"(a score in a running game to {target}), not {value}")
    return value


def _spec(policy: str):
    from dicelab.registry import parse_policy

    spec = parse_policy(policy, "farkle")
    if spec.family == "ai":
        raise UserError("ai has no exact turn analysis: its threshold depends on the game "
                        "state (its deficit); simulate it, e.g. dicelab simulate -s ai --vs "
                        "threshold-300")
    return spec


def _fmt_thresholds(th: dict[int, int | None]) -> str:
    return "  ".join(f"{n}:{'never' if t is None else t}" for n, t in th.items())


# -- solve --------------------------------------------------------------------------


def solve_farkle_result(policy: str, target: int | None = None, rules: str | None = None,
                        progress=None) -> dict:
    """The data ``dicelab solve farkle`` prints, as a JSON-able dict (usable from Python)."""
    from dicelab.farkle import exact, turn_dp
    from dicelab.farkle.scoring import load_scoring

    spec = _spec(policy)
    scoring = load_scoring(rules)
    if spec.family == "threshold":
        t = _target(target)
        dist = turn_dp.threshold_distribution(scoring, spec.params["threshold"])
        race = turn_dp.evaluate_race(scoring, t, turn_dp.threshold_bank_table(
            spec.params["threshold"]))
        out = dist.to_dict()
        out["p_at_least"] = {str(x): dist.p_at_least(x) for x in _TAIL_POINTS}
        out["target"] = t
        out["expected_turns_to_target"] = float(race[0])
        return out
    if spec.family == "max-ev":
        sol = turn_dp.solve_max_ev(scoring)
        dist = turn_dp.evaluate_turn_policy(scoring, sol.bank, sol.value, name="max-ev")
        out = sol.to_dict()
        out.update(p_bust=dist.p_bust, sd=dist.sd,
                   p_at_least={str(x): dist.p_at_least(x) for x in _TAIL_POINTS})
        return out
    if spec.family == "fastest":
        return exact.fastest_solution(scoring, _target(target)).to_dict()
    from dicelab.farkle.two_player import solve_optimal_win

    return solve_optimal_win(scoring, _target(target), progress=progress).to_dict()


def _print_solve(res: dict) -> None:
    echo = typer.echo
    pol = res["policy"]
    echo(f"Farkle, rules '{res['rules']}', policy {pol}")
    if pol.startswith("threshold"):
        echo(f"  expected turn score   {res['expected_turn_score']:.6f} points "
             f"(SD {res['sd']:.2f}), exact")
        echo(f"  P(bust)               {res['p_bust']:.6%}")
        for x, p in res["p_at_least"].items():
            echo(f"  P(bank >= {x:>5})      {p:.6%}")
        echo(f"  expected turns to reach {res['target']} solitaire: "
             f"{res['expected_turns_to_target']:.6f}")
    elif pol == "max-ev":
        echo(f"  expected turn score   {res['expected_turn_score']:.6f} points "
             f"(SD {res['sd']:.2f}), exact")
        echo(f"  P(bust)               {res['p_bust']:.6%}")
        for x, p in res["p_at_least"].items():
            echo(f"  P(bank >= {x:>5})      {p:.6%}")
        echo("  banks from turn points, by dice left: "
             + _fmt_thresholds({int(k): v for k, v in res["bank_thresholds"].items()}))
        if not res["threshold_policy"]:
            echo("  (not a pure threshold per n: see dicelab policy farkle max-ev)")
        echo(f"  turn points capped at {res['cap']} (banking proven at least as good above); "
             f"solved in {res['solve_seconds']:.3f} s")
    elif pol == "fastest":
        echo(f"  expected turns to reach {res['target']} from 0: {res['expected_turns']:.6f}")
        echo("  banks from turn points, by dice left, at own total:")
        for total, th in res["bank_thresholds"].items():
            echo(f"    {int(total):>6}: " + _fmt_thresholds({int(k): v for k, v in th.items()}))
        how = "loaded from cache, solved originally in" if res["from_cache"] else "solved in"
        echo(f"  {how} {res['solve_seconds']:.2f} s")
    else:
        echo(f"  target {res['target']}, optimal play by both players, first player:")
        echo(f"  P(win) {res['p_win']:.6f}  P(tie) {res['p_tie']:.6f}  "
             f"P(loss) {res['p_loss']:.6f}")
        echo(f"  fairest head start for the second player: {res['fair_head_start']} points "
             f"(first player's P(win) + P(tie)/2 = {res['fair_head_start_value']:.6f})")
        how = "loaded from cache, solved originally in" if res["from_cache"] else "solved in"
        echo(f"  {res['states']:,} states, value error <= {res['tolerance']:.1e}, "
             f"{res['memory_bytes'] / 2**20:.1f} MiB; {how} {res['solve_seconds']:.1f} s")


# -- policy -------------------------------------------------------------------------


def policy_bank_table(policy: str, target: int | None = None, me: int = 0, opp: int = 0,
                      rules: str | None = None) -> tuple[np.ndarray, str]:
    """(bank table (P, 7), title) of a Farkle policy at the given game scores."""
    from dicelab.farkle import exact, turn_dp
    from dicelab.farkle.scoring import load_scoring
    from dicelab.registry import parse_policy

    spec = parse_policy(policy, "farkle")
    scoring = load_scoring(rules)
    t = _target(target)
    me, opp = _total("--me", me, t), _total("--opp", opp, t)
    tag = f"rules {scoring.name}"
    if spec.family == "threshold":
        return turn_dp.threshold_bank_table(spec.params["threshold"]), f"{spec.name} ({tag})"
    if spec.family == "ai":
        par = spec.params
        steps = min(par["max-steps"], max(opp - me, 0) // par["per"])
        base = par["base"] + par["step"] * steps
        rows = base // POINT_UNIT + 1
        bank = np.zeros((rows + 1, 7), dtype=np.uint8)
        for n in range(1, 7):
            thr = base - (par["two-dice"] if n == 2 else 0) - (par["one-die"] if n == 1 else 0)
            bank[max(thr, POINT_UNIT) // POINT_UNIT:, n] = 1
        return bank, f"{spec.name} at {me} vs {opp} ({tag}; last-round chase not shown)"
    if spec.family == "max-ev":
        return turn_dp.solve_max_ev(scoring).bank, f"max-ev ({tag})"
    if spec.family == "fastest":
        sol = exact.fastest_solution(scoring, t)
        return sol.bank[me // POINT_UNIT], f"fastest to {t} at own total {me} ({tag})"
    if spec.family == "optimal-win":
        from dicelab.farkle.two_player import solve_optimal_win

        sol = solve_optimal_win(scoring, t)
        return (sol.bank_decisions(me, opp),
                f"optimal-win to {t} at {me} vs {opp} ({tag})")
    raise UserError(f"policy '{policy}' cannot be drawn")


def decision_text(bank: np.ndarray, max_rows: int | None = None) -> str:
    """The bank table as text: runs of turn points with the same decisions (R/B by n)."""
    rolls = np.nonzero((bank[1:, 1:] == 0).any(axis=1))[0]
    top = int(rolls[-1]) + 2 if rolls.size else 1
    top = min(top, bank.shape[0] - 1) if max_rows is None else min(max_rows, bank.shape[0] - 1)
    lines = ["turn points     dice left: 1 2 3 4 5 6"]
    start = 1
    for p in range(1, top + 2):
        if p <= top and np.array_equal(bank[p, 1:], bank[start, 1:]):
            continue
        lo, hi = start * POINT_UNIT, (p - 1) * POINT_UNIT
        span = f"{lo}+" if p > top else (f"{lo}" if lo == hi else f"{lo}-{hi}")
        row = " ".join("B" if bank[start, n] else "R" for n in range(1, 7))
        lines.append(f"{span:<26}{row}")
        start = p
    lines.append("(R = roll, B = bank)")
    return "\n".join(lines)


def register(app, solve_app, policy_app) -> None:
    """Add ``solve farkle`` and ``policy farkle``."""

    @solve_app.command("farkle")
    def solve_farkle(
        policy: Annotated[str, typer.Option(
            "--policy", "-p", help="threshold-T, max-ev, fastest or optimal-win.")],
        target: Annotated[int | None, typer.Option(
            help="Target score (fastest, optimal-win; threshold-T: expected turns to it). "
                 "[default: 10000]")] = None,
        rules: Annotated[str | None, typer.Option(
            help="Scoring preset (default, basic, ones-300) or TOML file.")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")
                            ] = False,
    ) -> None:
        """Exact Farkle answers: turn score distributions, max-ev, fastest, optimal-win."""
        from dicelab.cli import render
        from dicelab.results import to_json

        with render.progress_bar(enabled=not json_out, total=1000,
                                 description="solving") as advance:
            def progress(fraction: float) -> None:
                if advance is not None:
                    advance(int(1000 * fraction), 1000)

            res = solve_farkle_result(policy, target, rules, progress=progress)
        if json_out:
            typer.echo(to_json(res))
        else:
            _print_solve(res)

    @policy_app.command("farkle")
    def policy_farkle(
        name: Annotated[str, typer.Argument(help="A Farkle policy, e.g. max-ev, fastest.")],
        plot: Annotated[Path | None, typer.Option(
            help="Write a heat map of bank/roll to this PNG file.")] = None,
        target: Annotated[int | None, typer.Option(
            help="Target (fastest, optimal-win). [default: 10000]")] = None,
        me: Annotated[int, typer.Option("--me", help="Own total (fastest, optimal-win, ai).")
                      ] = 0,
        opp: Annotated[int, typer.Option("--opp", help="Opponent total (optimal-win, ai).")
                       ] = 0,
        rules: Annotated[str | None, typer.Option(
            help="Scoring preset (default, basic, ones-300) or TOML file.")] = None,
    ) -> None:
        """Show a Farkle policy's bank/roll decisions by turn points and dice left."""
        if plot is not None:
            if plot.suffix.lower() != ".png":
                raise UserError(f"--plot {plot}: the file name must end in .png")
            if not plot.parent.is_dir():
                raise UserError(f"--plot {plot}: directory {plot.parent} does not exist")
        bank, title = policy_bank_table(name, target, me, opp, rules)
        if plot is None:
            typer.echo(title)
            typer.echo(decision_text(bank))
            return
        from dicelab.plots import policy_heatmap_figure, save_png

        try:
            save_png(policy_heatmap_figure(bank, title=title), plot)
        except OSError as exc:
            raise UserError(f"--plot {plot}: cannot write ({exc.strerror})") from None
        typer.echo(f"wrote {plot}")
