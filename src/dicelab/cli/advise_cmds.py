"""``dicelab advise farkle`` and ``dicelab advise penta``: every option of one decision,
ranked by its exact value, with its loss against the best (same shape for both games).

``dicelab policy penta`` is the earlier spelling of ``advise penta`` and stays.
Thin shells over :func:`dicelab.farkle.advise.advise` and
:func:`dicelab.penta.policies.rank_options`; the tables come from
:mod:`dicelab.cli.render`.
"""

from __future__ import annotations

import re
from typing import Annotated

import typer

from dicelab.cli.farkle_cmds import FloorOpt, JsonOpt
from dicelab.errors import UserError
from dicelab.farkle.rules import PRESETS
from dicelab.text import counted

TopOpt = Annotated[int, typer.Option(min=0, help="Show this many options (0 = all); "
                                             "--json holds every option.")]
RollHelp = "The dice just rolled, e.g. {}."


def parse_dice(text: str, what: str, sizes: range, example: str) -> list[int]:
    """Faces 1..6 separated by commas or spaces (a comma may have spaces around it), as
    many as ``sizes`` allows; an empty item (two commas, or one at an end) is refused.

    >>> parse_dice(" 1, 1,5 2 ", "--roll", range(1, 7), "1,5")
    [1, 1, 5, 2]
    """
    from dicelab.text import parse_int

    items = re.split(r"\s*,\s*|\s+", text.strip())
    try:
        faces = [parse_int(x) for x in items]
    except ValueError:
        faces = []
    if len(faces) not in sizes or not all(1 <= f <= 6 for f in faces):
        words = dict(enumerate(("zero", "one", "two", "three", "four", "five", "six")))
        count = (words[sizes.start] if len(sizes) == 1
                 else f"{words[sizes.start]} to {words[sizes.stop - 1]}")
        empty = ("an empty item (two commas, or one at an end); " if "" in items
                 and text.strip() else "")
        raise UserError(f"{what} {text!r}: {empty}give {count} dice 1..6, e.g. {what} "
                        f"{example}")
    return faces


def penta_advice(roll: str, card: str, rolls_left: int, strategy: str, rules: str | None,
                 top: int, json_out: bool, objective: str | None = None) -> None:
    """Rank every Penta option (keep dice or fill a box) by its expected final score, or
    by ``objective``'s value."""
    from dicelab.cli import formats as F
    from dicelab.cli.render import advice_table
    from dicelab.penta.builtin import family_of
    from dicelab.penta.objectives import parse_objective
    from dicelab.penta.policies import Scorecard, rank_options
    from dicelab.penta.rules import get_rules
    from dicelab.registry import parse_policy
    from dicelab.results import echo_json

    try:
        spec = parse_policy(strategy, "penta")
    except UserError:
        if ":" in strategy:  # a file's policy or an objective: its own refusal
            raise
        raise UserError(f"--strategy is optimal or greedy, not {strategy!r}") from None
    obj = None if objective is None else parse_objective(objective)
    if obj is not None and spec.name != "optimal":
        raise UserError("--objective ranks by that objective's best play: leave out "
                        "--strategy")
    ranking = family_of(spec).block(spec)  # the decision-table policy it ranks by
    if ranking is None and spec.policy is not None:  # a user's own policy
        raise UserError(f"advise penta: {spec.name} is your own policy; the options are "
                        "ranked by optimal's or greedy's values (--strategy) or an "
                        "objective's (--objective): judge yours with dicelab analyse")
    if ranking is None and spec.name.startswith("optimal:"):
        raise UserError(f"advise penta: --strategy is optimal or greedy; for "
                        f"{spec.name} use --objective {spec.name.partition(':')[2]}")
    if ranking is None:  # penta-win: its values need the other seats' cards
        raise UserError(f"advise penta: --strategy is optimal or greedy; {spec.name} values "
                        "an option by the other seats' cards, which advise does not take: "
                        "judge its games with dicelab analyse")
    rs = get_rules(rules)
    sc = Scorecard.parse(card)
    faces = parse_dice(roll, "--roll", range(5, 6), "1,3,3,4,6")
    if obj is None or obj.kind == "mean":
        opts = rank_options(sc, faces, rolls_left, rs, ranking)
        unit = "expected final score" if spec.name == "optimal" else \
            "card total + this turn's expected points"  # greedy's own value
        name, digits = spec.name, 4
    else:
        from dicelab.penta.objective_play import rank_objective_options

        opts = rank_objective_options(sc, faces, rolls_left, obj, rs)
        unit, name = obj.unit, f"optimal:{obj.name}"
        digits = 4 if obj.kind == "utility" else 8
    ties = sum(o.tie_with_best for o in opts)
    shown = opts if top <= 0 else opts[:top]
    if json_out:  # every option, each one's value in ``unit``
        options = []
        for o in opts:
            d = o.to_dict()
            d["value"] = d.pop("expected_final_score")
            options.append(d)
        echo_json({"game": "penta", "rules": rs.name, "policy": name,
                   "unit": unit, "card_total": sc.total,
                   "roll": faces, "rolls_left": rolls_left,
                   "tied_with_best": ties, "options": options})
        return
    rows = [(f"keep {F.dice(o.keep) or 'nothing'}" if o.kind == "keep"
             else f"score {o.box} ({o.points})", o.expected_final_score, o.loss,
             o.tie_with_best)
            for o in shown]
    advice_table(f"Penta {name} ({rs.name}): roll {F.dice(faces)}, "
                 f"{counted(rolls_left, 'reroll')} left, card total {F.count(sc.total)}",
                 unit, rows, ties, F.number, digits,
                 tie_order="ties go to optimal's choice, then the lowest box, then the "
                           "largest keep" if obj is not None and obj.kind != "mean"
                 else "ties go to the lowest box, then the largest keep")


def register(app, policy_app) -> None:
    """Add ``advise farkle`` and ``advise penta`` (also ``policy penta``, its older spelling)."""
    advise_app = typer.Typer(
        help="Every option of a decision, ranked by its exact value, with its loss.",
        no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})
    app.add_typer(advise_app, name="advise")

    @advise_app.command("farkle")
    def advise_farkle(
        roll: Annotated[str, typer.Option(help=RollHelp.format("1,1,5,2,3,4"))],
        turn_points: Annotated[int, typer.Option(
            "--turn-points", help="Points set aside this turn before this roll.")] = 0,
        me: Annotated[int | None, typer.Option(
            "--me", help="Your banked total (with --opp: two-player advice).")] = None,
        opp: Annotated[int | None, typer.Option(
            "--opp", help="The opponent's banked total.")] = None,
        target: Annotated[int | None, typer.Option(
            help="Target score (two players). [default: 10000]")] = None,
        rules: Annotated[str | None, typer.Option(
            help=f"Scoring preset ({', '.join(PRESETS)}) or TOML file.")] = None,
        ending: Annotated[str | None, typer.Option(
            help="Ending rule (two players): last-round (the default) or "
                 "first-to-bank.")] = None,
        my_farkles: Annotated[int, typer.Option(
            "--my-farkles", help="Your turns lost in a row (0-2); they count under a "
                                 "farkle penalty and change nothing under other rules.")] = 0,
        opp_farkles: Annotated[int, typer.Option(
            "--opp-farkles", help="The opponent's turns lost in a row (0-2; with --me and "
                                  "--opp), as --my-farkles.")] = 0,
        floor: FloorOpt = None,
        top: TopOpt = 12,
        json_out: JsonOpt = False,
    ) -> None:
        """Every legal set-aside of the roll, then bank or roll: its expected turn score
        (solitaire, max-ev play after) or its exact P(win) + ½P(tie) (with --me and --opp,
        optimal-win play after), and its loss against the best; the caption and --json
        give the values' error bound (tolerance). A roll that scores nothing leaves no
        choice: the turn is lost, and the advice gives what that leaves."""
        from dicelab.cli.farkle_cmds import solving
        from dicelab.cli.render import show
        from dicelab.farkle.advise import advise
        from dicelab.results import echo_json

        faces = parse_dice(roll, "--roll", range(1, 7), "1,1,5,2,3,4")
        with solving(not json_out) as progress:  # two players: optimal-win, the first time
            result = advise(faces, turn_points=turn_points, me=me, opp=opp, target=target,
                            rules=rules, ending=ending, my_farkles=my_farkles,
                            opp_farkles=opp_farkles, floor=floor, progress=progress)
        if result.note:
            typer.echo(f"note: {result.note}", err=True)
        if json_out:  # every option
            echo_json(result.to_dict())
            return
        show(result.top(top) if top > 0 else result)

    @policy_app.command("penta")  # the older spelling, the same command
    @advise_app.command("penta")
    def advise_penta(
        roll: Annotated[str, typer.Option(help="The five dice, e.g. 1,3,3,4,6.")],
        card: Annotated[str, typer.Option(
            help="Filled boxes as box=points, e.g. ones=3,fours=12,penta=50[,bonuses=1]; "
                 "empty = new game.")] = "",
        rolls_left: Annotated[int, typer.Option(
            "--rolls-left", help="Rerolls still allowed this turn: 2, 1 or 0.")] = 2,
        strategy: Annotated[str, typer.Option(
            "--strategy", "-s", help="optimal or greedy.")] = "optimal",
        rules: Annotated[str | None, typer.Option(
            help="Rule set: seed, hasbro, free-joker, no-bonus. [default: seed]")] = None,
        objective: Annotated[str | None, typer.Option(
            help="Rank by an objective's best play instead: mean, at-least:T, "
                 "utility:theta=X, beat:N (as solve penta --objective).")] = None,
        top: TopOpt = 10,
        json_out: JsonOpt = False,
    ) -> None:
        """Every option (keep dice or fill a box) with its expected final score (or its
        value under --objective) and its loss against the best. (advise penta and policy
        penta are one command.)"""
        penta_advice(roll, card, rolls_left, strategy, rules, top, json_out, objective)
