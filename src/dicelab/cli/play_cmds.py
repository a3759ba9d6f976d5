"""``dicelab play farkle`` and ``dicelab play penta``: a game at the terminal.

The games are :class:`dicelab.play.farkle.FarkleGame` and
:class:`dicelab.play.penta.PentaGame`; this module only prompts, reads lines and prints
the games' events. A refused line (an illegal set-aside, an unknown box, a typo) prints
the reason and asks again; it never ends the game. End of input (or ``q``) stops the
game with a message (exit 0; with ``--log`` the turns played so far are written); a
computer policy of the user's that fails mid-game stops it with its ``error:`` line
(exit 2), the log written the same way; Ctrl-C exits 130 with one line and writes
nothing.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dicelab.cli import formats as F
from dicelab.cli.console import CliConsole
from dicelab.errors import UserError
from dicelab.farkle.rules import PRESETS
from dicelab.play import YOU, IllegalMove, SeededDice, parse_faces
from dicelab.text import counted

console = CliConsole(highlight=False, width=None if sys.stdout.isatty() else 100)

HumansOpt = Annotated[int, typer.Option(help="Human players at this terminal, 1 to 6.")]
SeedOpt = Annotated[int | None, typer.Option(
    help="Seed of the dice: the same seed and the same answers replay the same game. "
         "Default: a fresh seed, printed.")]
CoachOpt = Annotated[bool, typer.Option(
    "--coach", help="Advice on request ('?') and the cost of every decision.")]
LogOpt = Annotated[str | None, typer.Option(
    "--log", metavar="FILE",
    help="Write the game to this game-log file: when it ends, and also when it stops "
         "early (q, end of input, a computer policy's error), with the turns played so far.")]


class _EndOfInput(Exception):
    """The player's input ended (Ctrl-D, or a closed pipe)."""


#: The longest answer read (characters); a longer line is refused like a typo, and input
#: with no line end within :data:`MAX_SKIP` characters (``< /dev/zero``) ends the game.
MAX_ANSWER = 1000
MAX_SKIP = 1 << 20


def _wait_for_the_terminal() -> None:
    """Wait until the terminal has a line to read, waking every 0.1 s.

    A read blocked in the kernel is not woken by a Ctrl-C that arrives just before it
    starts, or that the kernel hands to another thread (the solvers' workers): Python
    only notes the signal, and the game would go on waiting for Enter. Between waits the
    interpreter runs, so the interrupt is raised within 0.1 s. A terminal (canonical
    mode) hands over one line per read, so nothing waits in Python's buffer meanwhile.
    """
    import select

    if sys.platform == "win32":  # select takes sockets only there: a plain read
        return
    fd = sys.stdin.fileno()
    while not select.select([fd], [], [], 0.1)[0]:
        pass


def _ask(prompt: str) -> str:
    try:
        console.print(f"[bold]{prompt}[/]> ", end="")
        if sys.stdin.isatty():  # a terminal's line is short, and editable
            _wait_for_the_terminal()
            line = sys.stdin.readline()
            if not line:
                raise _EndOfInput
            return line.strip()
        line = sys.stdin.readline(MAX_ANSWER + 1)
        if not line:
            raise _EndOfInput
        if len(line) <= MAX_ANSWER or line.endswith("\n"):
            return line.strip()
        skipped = 0  # the rest of a too long line, read in bounded pieces
        while not line.endswith("\n"):
            line = sys.stdin.readline(MAX_ANSWER)
            skipped += len(line)
            if not line or skipped > MAX_SKIP:
                raise _EndOfInput
        return f"{line[:20]}... (a line of more than {MAX_ANSWER:,} characters)"
    except EOFError:
        raise _EndOfInput from None
    except UnicodeDecodeError:  # bytes that are not text: refused like any other typo
        return "\ufffd"


def _refuse(reason: str) -> None:
    # the reason may quote what the player typed: never read it as markup
    console.print(f"  [red]✗ {escape(reason)}[/]")


def _verb(who: str, verb: str) -> str:
    """``who`` and the verb in the right person: "You bank", "Player 2 banks"."""
    return f"{who} {verb}" if who == YOU else f"{who} {verb}s"


def _dice(faces) -> str:
    return F.dice(faces)


def _check_log(path: str | None):
    """The game-log writer and the path, checked before the game starts."""
    if path is None:
        return None
    from dicelab import gamelog
    from dicelab.files import check_output

    check_output(path, "--log")
    return gamelog


def _write_log(gamelog, path: str | None, header: dict | None, game) -> None:
    """Write the game (finished or not) to the log file, if one was asked for."""
    if gamelog is None or header is None:
        return
    turns = game.log_turns()
    gamelog.write_games(path, [(header, turns)])
    stopped = len(turns) > len(game.turns)
    how = "" if game.phase == "over" else (
        f" (unfinished: {counted(len(game.turns), 'turn')}"
        f"{' and the turn in progress' if stopped else ''})")
    console.print(f"game log written to {escape(str(path))}{how}")


def _seats(players) -> list[dict]:
    """The log header's seats: each player's name and policy ("human" for a person)."""
    return [{"name": p.name, "policy": p.policy.name if p.policy else "human"}
            for p in players]


def _run(play, write_log) -> None:
    """Run a game loop, then ``write_log()``: end of input stops cleanly; an error in the
    game (a computer policy of the user's that fails) writes the log of the game so far,
    then exits 2 with its line; Ctrl-C exits 130 (one line) and writes nothing."""
    try:
        play()
    except _EndOfInput:
        console.print()
        console.print("end of input: the game stops here, unfinished")
    except UserError:
        console.print()
        try:  # the log of the game so far, as when the player stops it
            write_log()
        except UserError as exc:  # the game's error stays the error line
            console.print(f"the game log was not written: {escape(str(exc))}")
        raise
    except KeyboardInterrupt:
        console.print()
        raise
    write_log()


# --- Farkle ------------------------------------------------------------------------------


#: What the coach says of a bank that ends the game with the banker's win (not a cost).
WINS = "wins the game"
#: The coach's line at the start when it judges in expected turn points.
POINTS_COACH = ("coach: judges by the turn's expected points (max-ev), which leave out the "
                "target: a bank that wins the game costs nothing, and the game's last turn "
                "is judged by the chance to beat the highest total")


def _farkle_value(unit: str, v: float) -> str:
    return f"{F.percent(v)} P(win) + ½P(tie)" if unit == "win" else f"{F.number(v, 1)} points"


def _farkle_cost(unit: str, loss: float) -> str:
    return (f"{F.ranked(100 * loss)} percentage points of P(win) + ½P(tie)" if unit == "win"
            else f"{F.ranked(loss, 1)} expected points")


def _farkle_choice(keep, action: str, dice: int) -> str:
    then = "bank" if action == "bank" else f"roll {dice} dice" if dice > 1 else "roll 1 die"
    return f"set aside {_dice(keep)}, {then}"


def _farkle_advice_table(game, advice, top: int = 8) -> None:
    unit = advice.unit
    what = ("P(win) + ½P(tie), optimal-win play after" if unit == "win"
            else "expected turn score, max-ev play after")
    if unit != game.coach_unit:  # the last turn of a game judged in turn points
        what = (f"this turn ends the game: P(win) + ½P(tie) of beating "
                f"{game.best_opponent_total():,}")
    console.print(f"  coach: {what}")
    table = Table()
    table.add_column("option")
    table.add_column("P(win) + ½P(tie)" if unit == "win" else "expected turn score",
                     justify="right")
    table.add_column("loss", justify="right")
    for o in advice.options[:top]:
        loss = WINS if o.wins else "best" if o.loss == 0 else (
            F.ranked(o.loss, fmt=F.percent) if unit == "win" else F.ranked(o.loss, 1))
        table.add_row(_farkle_choice(o.keep, o.action, o.dice),
                      F.percent(o.value) if unit == "win" else F.number(o.value, 1), loss)
    console.print(table)
    if len(advice.options) > top:
        console.print(f"  ({len(advice.options) - top} more options)")
    first = advice.options[0] if advice.options else None
    if first is not None and first.loss > 0:  # after a set-aside that was not the best
        best = first.value + first.loss
        console.print(f"  (losses count from the best option of this roll, "
                      f"{_farkle_value(unit, best)})")


def _show_farkle_events(game) -> None:
    for ev in game.take_events():
        who = game.players[ev.seat].name if ev.seat is not None else ""
        d = ev.data
        if ev.kind == "turn":
            others = " · ".join(f"{p.name} {t:,}" for p, t in zip(game.players, d["totals"],
                                                                  strict=True))
            console.print()
            last = " · [magenta]last round[/]" if d["last_round"] else ""
            console.print(f"[bold cyan]── {who} to play[/] · {others}{last}")
        elif ev.kind == "roll":
            console.print(f"  Roll: [bold]{_dice(d['dice'])}[/]")
        elif ev.kind == "bust":
            lost = f" ({d['lost']:,} turn points lost)" if d["lost"] else ""
            console.print(f"  [bold red]{d['message']}[/]{lost}")
        elif ev.kind == "penalty":
            console.print(f"  [red]Third lost turn in a row: -{d['points']:,} "
                          f"(house rule) · total {d['total']:,}[/]")
        elif ev.kind == "set-aside":
            left = d["dice_left"]
            console.print(f"  {who} set aside {_dice(d['dice'])}: {d['points']:,} · turn points "
                          f"{d['turn_points']:,} · {counted(left, 'die', 'dice')} to roll")
        elif ev.kind == "hot-dice":
            console.print(f"  [bold yellow]{d['message']}[/] All six dice come back.")
        elif ev.kind == "bank":
            console.print(f"  {_verb(who, 'bank')} {d['points']:,} · total [bold]{d['total']:,}[/]")
        elif ev.kind == "last-round":
            console.print(f"  [bold magenta]{d['message']}[/] {who} reached "
                          f"{game.target:,}: every other player has one more turn.")
        elif ev.kind == "cost":
            if d["won"]:
                console.print(f"  [green]coach: that bank {WINS}[/]")
                continue
            if d["missed_win"]:  # whatever the measure says of the choice
                console.print("  [yellow]coach: banking now would have won the game[/]")
            if d["loss"] == 0 and not d["missed_win"]:
                console.print("  [green]coach: a best move[/]")
            elif d["loss"] != 0:
                best = _farkle_choice(*d["best"])
                console.print(f"  [yellow]coach: that cost {_farkle_cost(d['unit'], d['loss'])}"
                              f" (best: {best}, {_farkle_value(d['unit'], d['best_value'])})[/]")
        elif ev.kind == "game-over":
            _farkle_result(game, d)


def _farkle_result(game, d) -> None:
    console.print()
    console.print("[bold]Game over[/]")
    for p, t in zip(game.players, d["totals"], strict=True):
        console.print(f"  {p.name}: {t:,}")
    w = d["winners"]
    if len(w) == 1:
        console.print(f"[bold green]{game.players[w[0]].name} won[/] with {d['totals'][w[0]]:,}.")
    else:
        console.print(f"[bold green]A tie[/] at {d['totals'][w[0]]:,}: "
                      f"{' and '.join(game.players[s].name for s in w)} share the win.")
    if game.coach_unit is not None:
        for s, p in enumerate(game.players):
            if p.human:
                cost = _farkle_cost(game.coach_unit, game.losses[s])
                last = game.last_turn_losses[s]
                console.print(f"  coach: {p.name} lost {cost} in all" + (
                    "" if last is None else
                    f", and {_farkle_cost('win', last)} on the last turn"))


FARKLE_HELP = ("Set aside: type the dice, e.g. 1 5 5 (or 155). Then b banks, r rolls the dice "
               "left. ? asks the coach (--coach), t shows the totals, q quits.")


def _farkle_loop(game) -> None:
    while True:
        _show_farkle_events(game)
        if game.phase == "over":
            return
        if game.phase == "computer":
            game.step()
            continue
        line = _ask("Set aside" if game.phase == "set-aside" else "Bank or roll (b/r)")
        key = line.lower()
        if key in ("h", "help"):
            console.print(f"  {FARKLE_HELP}")
            continue
        if key == "?":
            advice = game.advice()  # None: no coach, or it turned itself off (the note)
            if advice is None:
                _refuse(f"the coach is off: {game.coach_note}" if game.coach_note
                        else "the coach is off: start the game with --coach")
            else:
                _farkle_advice_table(game, advice)
            continue
        if key == "t":
            console.print("  " + " · ".join(f"{p.name} {t:,}" for p, t in
                                            zip(game.players, game.totals, strict=True))
                          + f" · target {game.target:,}")
            continue
        if key == "q":
            console.print("you quit: the game stops here, unfinished")
            return
        try:
            if game.phase == "set-aside":
                if key in ("b", "r", "bank", "roll"):
                    raise IllegalMove("first set aside at least one scoring die: type the "
                                      "dice, e.g. 1 5")
                game.set_aside(parse_faces(line))
            elif key in ("b", "bank"):
                game.bank()
            elif key in ("r", "roll"):
                game.roll_on()
            else:
                raise IllegalMove(f"'{line}': type b to bank or r to roll (h for help)")
        except IllegalMove as exc:
            _refuse(str(exc))


def play_farkle(humans: int, ai: str, target: int | None, rules: str | None,
                ending: str | None, seed: int | None, coach: bool, log: str | None) -> None:
    """Set up a Farkle game, play it at the terminal, write its log."""
    from dicelab.farkle.builtin import family_of
    from dicelab.play.farkle import FarkleGame, table_players

    gamelog = _check_log(log)
    dice = SeededDice(seed)
    players = table_players(humans, ai)
    game = FarkleGame(players, rules=rules, ending=ending, target=target, dice=dice,
                      coach=coach)
    r = game.rules
    house = []
    if r.min_bank:
        house.append(f"{r.min_bank:,} to bank")
    if r.hot_dice == "must-roll":
        house.append("hot dice must roll")
    if r.farkle_penalty:
        house.append(f"third lost turn in a row -{r.farkle_penalty:,}")
    console.print(f"[bold]Farkle[/] · target {game.target:,} · rules {escape(r.name)} ({r.ending}"
                  f"{', ' + ', '.join(house) if house else ''}) · seed {dice.seed}",
                  soft_wrap=True)  # the seed stays on the first line
    console.print("Players: " + ", ".join(p.name for p in players))
    if coach or any(family_of(p.policy).solved for p in players if not p.human):
        console.print("(loading or solving the exact tables: the first time takes a while)")
    header = None if gamelog is None else gamelog.new_game_header(
        "farkle", r, _seats(players), target=game.target, ending=r.ending, seed=dice.seed,
        first_seat=game.first_seat)
    game.start()
    if game.coach_note:
        console.print(f"[yellow]coach: {escape(game.coach_note)}[/]")
    if game.coach_unit == "points":
        console.print(POINTS_COACH)
    console.print(FARKLE_HELP)
    _run(lambda: _farkle_loop(game), lambda: _write_log(gamelog, log, header, game))


# --- Penta -------------------------------------------------------------------------------


def _upper_bonus(card) -> str:
    """The card's upper bonus cell: its points once earned (or once the upper boxes are
    all filled short of the target: 0), the upper boxes' sum toward the target before."""
    from dicelab.penta.rules import UPPER_BONUS, UPPER_BOXES, UPPER_TARGET

    if card.upper_sum >= UPPER_TARGET:
        return str(UPPER_BONUS)
    if all(s is not None for s in card.scores[:UPPER_BOXES]):
        return "0"
    return f"{card.upper_sum}/{UPPER_TARGET}"


#: The card's columns are never narrower than an upper bonus in progress ("62/63"), so
#: the card keeps its width through the game.
CARD_CELL = 5


def _penta_card(game) -> None:
    """The scorecards: every box, the upper bonus and the Penta bonuses in points (their
    sum is TOTAL)."""
    from dicelab.penta.rules import BOX_NAMES, PENTA_BONUS, UPPER_TARGET
    from dicelab.play.penta import box_title

    table = Table(title="scorecards", title_justify="left")
    table.add_column("box")
    for p in game.players:
        table.add_column(p.name, justify="right", min_width=CARD_CELL)
    for b in range(len(BOX_NAMES)):
        table.add_row(f"{b + 1:>2} {box_title(b)}",
                      *("" if c.scores[b] is None else str(c.scores[b]) for c in game.cards))
    table.add_row(f"Upper bonus at {UPPER_TARGET}", *(_upper_bonus(c) for c in game.cards))
    table.add_row("Penta bonuses", *(str(PENTA_BONUS * c.penta_bonuses) for c in game.cards))
    table.add_row("[bold]TOTAL[/]", *(f"[bold]{c.total}[/]" for c in game.cards))
    console.print(table)


def _penta_option(o) -> str:
    from dicelab.play.penta import box_title

    if o.kind == "keep":
        return f"keep {_dice(o.keep)}" if o.keep else "reroll all"
    return f"score {box_title(o.box)} ({o.points})"


def _penta_advice_table(options, top: int = 8) -> None:
    console.print("  coach: expected final score, optimal play after")
    table = Table()
    table.add_column("option")
    table.add_column("expected final score", justify="right")
    table.add_column("loss", justify="right")
    for o in options[:top]:
        table.add_row(_penta_option(o), F.number(o.expected_final_score),
                      "best" if o.loss == 0 else F.ranked(o.loss))
    console.print(table)
    if options and options[0].loss > 0:  # the boxes only, and a keep is better
        best = options[0].expected_final_score + options[0].loss
        console.print(f"  (a keep is better: {F.number(best)}; b goes back to keeping dice, "
                      "? there ranks the keeps)")


def _penta_boxes(game) -> None:
    from dicelab.play.penta import box_title

    allowed, bonus = game.box_scores()
    default = game.default_box()
    parts = [f"{b + 1} {box_title(b)} {pts}{'*' if b == default else ''}"
             for b, pts in sorted(allowed.items())]
    console.print("  Boxes: " + " · ".join(parts) + "   (* the computer's choice)")
    if bonus:
        console.print(f"  [bold yellow]Penta bonus +{bonus} in any of them[/]")


def _show_penta_events(game) -> None:
    from dicelab.play.penta import box_title

    for ev in game.take_events():
        who = game.players[ev.seat].name if ev.seat is not None else ""
        d = ev.data
        if ev.kind == "turn":
            console.print()
            console.print(f"[bold cyan]── Round {d['round']}/13 · {who}[/] · total {d['total']}")
        elif ev.kind == "roll":
            left = d["rolls_left"]
            console.print(f"  Roll {3 - left}: [bold]{_dice(d['dice'])}[/]   "
                          f"({counted(left, 'reroll')} left)")
        elif ev.kind == "keep":
            console.print(f"  {_verb(who, 'keep')} {_dice(d['dice']) or 'nothing'}")
        elif ev.kind == "sacrifice":
            console.print(f"  [bold red]{escape(d['message'])}[/]")
        elif ev.kind == "score":
            extra = []
            if d["bonus"]:
                extra.append(f"Penta bonus +{d['bonus']}")
            if d["upper_bonus"]:
                extra.append("upper bonus +35")
            console.print(f"  {_verb(who, 'score')} {box_title(d['box'])}: {d['points']}"
                          f"{' · ' + ', '.join(extra) if extra else ''} · total "
                          f"[bold]{d['total']}[/]")
        elif ev.kind == "cost":
            if d["loss"] == 0:
                console.print("  [green]coach: a best move[/]")
            else:
                kind, what = d["best"]
                best = (f"keep {_dice(what) or 'nothing'}" if kind == "keep"
                        else f"score {box_title(what)}")
                console.print(f"  [yellow]coach: that cost {F.ranked(d['loss'])} expected points "
                              f"(best: {best}, {d['best_value']:.2f})[/]")
        elif ev.kind == "game-over":
            console.print()
            _penta_card(game)
            w = d["winners"]
            if len(game.players) == 1:
                console.print(f"[bold green]Game over[/]: {d['totals'][0]} points.")
            elif len(w) == 1:
                console.print(f"[bold green]{game.players[w[0]].name} won[/] with "
                              f"{d['totals'][w[0]]}.")
            else:
                console.print(f"[bold green]A tie[/] at {d['totals'][w[0]]}: "
                              f"{' and '.join(game.players[s].name for s in w)} share the win.")
            if game.coach:
                for s, p in enumerate(game.players):
                    if p.human:
                        console.print(f"  coach: {p.name} lost {F.ranked(game.losses[s])} expected "
                                      "points in all")


PENTA_HELP = ("Keep: type the dice to keep, e.g. 6 6 (0 rerolls all five); Enter or s stops "
              "to choose a box; a box name scores there at once. Box: its name, its number "
              "1-13 or a short name (3k 4k fh ss ls); Enter takes the computer's choice (*); "
              "b goes back while rerolls are left. c shows the cards, ? asks the coach "
              "(--coach), q quits.")


def _penta_loop(game) -> None:
    from dicelab.play.penta import box_title

    shown_boxes = None
    while True:
        _show_penta_events(game)
        if game.phase == "over":
            return
        if game.phase == "computer":
            game.step()
            continue
        if game.phase == "box" and shown_boxes != (game.seat, game.round, tuple(game.roll)):
            _penta_boxes(game)
            shown_boxes = (game.seat, game.round, tuple(game.roll))
        if game.phase == "keep":
            line = _ask("Keep")
        else:
            line = _ask(f"Box [{box_title(game.default_box())}]")
        key = line.lower()
        if key in ("h", "help"):
            console.print(f"  {PENTA_HELP}")
            continue
        if key == "?" and not game.coach:
            _refuse("the coach is off: start the game with --coach")
            continue
        if key == "?":
            _penta_advice_table(game.advice())
            continue
        if key == "c":
            _penta_card(game)
            continue
        if key == "q":
            console.print("you quit: the game stops here, unfinished")
            return
        try:
            if game.phase == "keep":
                compact = key.replace(" ", "").replace(",", "")
                if key in ("", "s"):
                    game.stop()
                elif compact == "0" or key in ("none", "-"):
                    game.keep([])
                elif compact.isdigit():
                    game.keep(parse_faces(line))
                else:
                    game.score(line)
            else:
                if key == "":
                    game.score(game.default_box())
                elif key in ("b", "back"):
                    game.back()
                else:
                    game.score(line)
        except IllegalMove as exc:
            _refuse(str(exc))


def play_penta(humans: int, ai: str, rules: str | None, seed: int | None, coach: bool,
               log: str | None) -> None:
    """Set up a Penta game, play it at the terminal, write its log."""
    from dicelab.play.penta import PentaGame, table_players

    gamelog = _check_log(log)
    dice = SeededDice(seed)
    players = table_players(humans, ai)
    game = PentaGame(players, rules=rules, dice=dice, coach=coach)
    console.print(f"[bold]Penta[/] · rules {game.rules.name} · seed {dice.seed}")
    console.print("Players: " + ", ".join(p.name for p in players))
    if coach or game.choice_policy == "optimal":
        console.print("(loading or solving the exact tables: the first time takes a while)")
    header = None if gamelog is None else gamelog.new_game_header(
        "penta", game.rules.name, _seats(players), seed=dice.seed, first_seat=game.first_seat)
    game.start()
    console.print(PENTA_HELP)
    _run(lambda: _penta_loop(game), lambda: _write_log(gamelog, log, header, game))


def register(app) -> None:
    """Add ``play farkle`` and ``play penta``."""
    play_app = typer.Typer(
        help="Play a game at the terminal: humans against the computer, with a coach.",
        no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})
    app.add_typer(play_app, name="play")

    @play_app.command("farkle")
    def farkle_command(
        humans: HumansOpt = 1,
        ai: Annotated[str, typer.Option(
            help="The computer's Farkle policy (ai, threshold-300, max-ev, fastest, "
                 "optimal-win, ..., or your own: FILE.py:NAME); none: no computer.")] = "ai",
        target: Annotated[int | None, typer.Option(
            help="Target score: 5000, 10000 or 15000 as in the app (any positive multiple "
                 "of 50). [default: 10000]")] = None,
        rules: Annotated[str | None, typer.Option(
            help=f"Scoring preset ({', '.join(PRESETS)}) or TOML file.")] = None,
        ending: Annotated[str | None, typer.Option(
            help="last-round (the default) or first-to-bank (two or more players); "
                 "replaces the rules'.")] = None,
        seed: SeedOpt = None,
        coach: CoachOpt = False,
        log: LogOpt = None,
    ) -> None:
        """Farkle: 1 to 6 humans and one computer at this terminal."""
        play_farkle(humans, ai, target, rules, ending, seed, coach, log)

    @play_app.command("penta")
    def penta_command(
        humans: HumansOpt = 1,
        ai: Annotated[str, typer.Option(
            help="The computer's Penta policy (optimal, greedy, optimal:OBJECTIVE, "
                 "penta-win, or your own: FILE.py:NAME); none: no computer.")
        ] = "optimal",
        rules: Annotated[str | None, typer.Option(
            help="Rule set: seed, hasbro, free-joker, no-bonus. [default: seed]")] = None,
        seed: SeedOpt = None,
        coach: CoachOpt = False,
        log: LogOpt = None,
    ) -> None:
        """Penta: 1 to 6 humans and one computer at this terminal, 13 turns each."""
        play_penta(humans, ai, rules, seed, coach, log)
