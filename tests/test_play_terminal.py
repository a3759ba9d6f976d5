"""``dicelab play`` as a user meets it: the real console script under a pseudo-terminal,
driven by scripted keystrokes (pexpect), bad keystrokes included.

Each of those tests starts an interpreter, so there are few of them: a whole Farkle game
against the computer with the coach and a game log, whole Penta games (against greedy,
an objective's policy and penta-win), Ctrl-C. The
rest runs the command in-process on scripted input: the same seed and keystrokes
replay the same game (to the end of the input), and bad options are one error line.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from cli_helpers import as_from_a_shell

from dicelab.farkle.advise import legal_setasides
from dicelab.farkle.rules import load_rules

pexpect = pytest.importorskip("pexpect")

DICELAB = str(Path(sys.executable).with_name("dicelab"))
SET_ASIDE, BANK_OR_ROLL = "Set aside> ", r"Bank or roll \(b/r\)> "
KEEP, BOX = "Keep> ", r"Box \[[^\]]+\]> "


def spawn(*args, **env):
    """``dicelab ARGS`` in a pseudo-terminal of 200 columns (TERM=dumb: plain text; ``env``:
    more variables). The timeout is generous: after a source change the first run compiles
    its kernels."""
    env = dict(os.environ, TERM="dumb", **env)
    child = pexpect.spawn(DICELAB, list(args), env=env, encoding="utf-8", timeout=300,
                          dimensions=(40, 200), preexec_fn=as_from_a_shell)
    # every send follows the prompt it answers (pexpect's default 50 ms pause before a
    # send guards programs that turn echo off after their prompt; dicelab does not)
    child.delaybeforesend = None
    return child


def play_penta_to_the_end(child) -> None:
    """Answer every Penta prompt with Enter (at a box prompt: the computer's choice) to the
    end of the game; check that the game ended after 13 boxes with a winner or a tie."""
    turns = 0
    while True:
        i = child.expect([KEEP, BOX, pexpect.EOF])
        if i == 2:
            break
        child.sendline("")
        turns += i == 1
    out = child.before
    child.close()
    assert child.exitstatus == 0 and turns == 13
    assert re.search(r"(won with \d+\.|A tie at \d+)", out)


def last_roll(text: str) -> list[int]:
    return [int(f) for f in re.findall(r"Roll(?: \d)?: ([\d ]+)", text)[-1].split()]


def test_a_farkle_game_against_the_computer_with_the_coach_and_a_log(tmp_path):
    log = tmp_path / "game.jsonl"
    child = spawn("play", "farkle", "--ai", "threshold-300", "--target", "1000", "--seed",
                  "5", "--coach", "--log", str(log))
    rules = load_rules("default")
    seen = ""
    bad_done = False
    while True:
        i = child.expect([SET_ASIDE, BANK_OR_ROLL, pexpect.EOF])
        seen += child.before
        if i == 2:
            break
        if i == 0:
            roll = sorted(last_roll(child.before))
            legal = legal_setasides(rules, roll)
            if not bad_done:  # bad keystrokes first: each refused, the game goes on
                for bad, why in (("7", "is not a die face"), ("b", "first set aside"),
                                 ("1 1 1 1 1 1 1", "among the dice")):
                    child.sendline(bad)
                    child.expect(why)
                    child.expect(SET_ASIDE)
                child.sendline("?")
                child.expect("coach: P\\(win\\)")
                child.expect(SET_ASIDE)
                bad_done = True
            child.sendline(" ".join(map(str, max(legal, key=lambda kp: (len(kp[0]), kp[1]))[0])))
        else:
            tp = [int(x.replace(",", "")) for x in re.findall(r"turn points ([\d,]+)",
                                                               child.before)]
            child.sendline("b" if tp and tp[-1] >= 300 else "r")
    child.close()
    assert child.exitstatus == 0
    assert "Game over" in seen and ("won with" in seen or "A tie" in seen)
    assert "coach: " in seen and "in all" in seen
    assert "game log written to" in seen
    from dicelab.gamelog import read_games

    (rec,) = read_games(log)
    assert rec.finished and rec.seed == 5 and rec.target == 1000
    assert [s["policy"] for s in rec.seats] == ["human", "threshold-300"]


#: A rules file with hot dice that must roll on (the one house rule no preset has).
MUST_ROLL = 'name = "must-roll"\nbase = "default"\nhot-dice = "must-roll"\n'
#: A seed whose game, played by the rule below against ai to 1,000, has at least two lost
#: turns on each side under every preset (asserted).
COACH_SEED = "224"


@pytest.mark.parametrize("rules", [
    pytest.param("default", marks=pytest.mark.slow),  # 3 s; fast twin: must-roll
    pytest.param("basic", marks=pytest.mark.slow),
    pytest.param("ones-300", marks=pytest.mark.slow),
    # 8 s; its fast twins: this session under must-roll, and test_advise's values under
    # the penalty (the coach's numbers are advise's)
    pytest.param("facebook", marks=pytest.mark.slow), "must-roll"])
def test_the_coach_judges_every_decision_of_a_whole_game_with_lost_turns(tmp_path, rules):
    """A whole game with the coach under each preset and a must-roll file: both players
    lose turns, and the coach still ranks every decision after them (the coach's runs of
    lost turns are counted under a penalty and change nothing without one)."""
    if rules == "must-roll":
        (tmp_path / "must-roll.toml").write_text(MUST_ROLL)
        rules = str(tmp_path / "must-roll.toml")
    child = spawn("play", "farkle", "--ai", "ai", "--target", "1000", "--seed", COACH_SEED,
                  "--coach", "--rules", rules)
    table = load_rules(rules)
    seen, decisions, asked, answer = "", 0, 0, None
    new_turn = True
    while True:
        i = child.expect([SET_ASIDE, BANK_OR_ROLL, pexpect.EOF])
        seen += child.before
        if answer is not None:  # the last bank or roll was taken, or refused ("✗")
            decisions += "✗" not in child.before
            answer = None
        if i == 2:
            break
        if "to play" in child.before:
            new_turn = True
        if i == 0:
            roll = sorted(last_roll(child.before))
            if new_turn:  # the coach's table at every turn of the human, busts or not
                child.sendline("?")
                child.expect(r"coach: P\(win\) \+ ½P\(tie\), optimal-win play after")
                child.expect(SET_ASIDE)
                seen += child.before
                asked += 1
                new_turn = False
            keep = max(legal_setasides(table, roll), key=lambda kp: (len(kp[0]), kp[1]))[0]
            child.sendline(" ".join(map(str, keep)))
        else:
            tp = int(re.findall(r"turn points ([\d,]+)", child.before)[-1].replace(",", ""))
            refused = "✗" in child.before
            answer = "r" if tp < 300 or refused else "b"  # a refused bank: roll on
            child.sendline(answer)
    child.close()
    assert child.exitstatus == 0 and "Game over" in seen
    assert "the coach is off" not in seen and "Traceback" not in seen
    turns = re.split(r"── ", seen)[1:]
    lost = {who: sum(t.startswith(who) and "Turn lost!" in t for t in turns)
            for who in ("You", "Computer")}
    assert lost["You"] >= 2 and lost["Computer"] >= 2, lost
    judged = len(re.findall(r"coach: (a best move|that cost|that bank wins the game)", seen))
    assert decisions > 0 and judged == decisions
    assert asked == sum(t.startswith("You") for t in turns)
    assert re.search(r"coach: You lost [\d.e+-]+ percentage points of P\(win\) \+ ½P\(tie\) "
                     r"in all", seen)


def test_a_penta_game_to_the_end_with_refused_keystrokes(tmp_path):
    child = spawn("play", "penta", "--ai", "greedy", "--seed", "3")
    child.expect(KEEP)
    roll = last_roll(child.before)
    missing = next(f for f in range(1, 7) if f not in roll)
    for bad, why in ((str(missing), f"there is no {missing} among the dice"),
                     ("foo", "there is no box 'foo'"), ("f", "could be"),
                     ("?", "the coach is off")):
        child.sendline(bad)
        child.expect(why)
        child.expect(KEEP)
    child.sendline("c")
    child.expect("TOTAL")
    child.expect(KEEP)
    child.sendline("")  # stop: the box prompt offers the computer's choice
    child.expect(BOX)
    assert "(* the computer's choice)" in child.before
    child.sendline("bogus")
    child.expect("there is no box")
    child.expect(BOX)
    child.sendline("b")  # back to keeping dice
    child.expect(KEEP)
    child.sendline("")
    play_penta_to_the_end(child)  # from here: always score the computer's choice at once


def test_ctrl_c_exits_130_with_one_line():
    child = spawn("play", "farkle", "--ai", "threshold-300", "--seed", "1")
    child.expect(SET_ASIDE)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert child.before.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in child.before


def send_intr_to_a_worker_thread(child) -> None:
    """SIGINT to a thread of the child other than the main one, as the kernel may hand a
    Ctrl-C to the solvers' workers: Python notes it, but the main thread's read of the
    terminal is not woken by it."""
    import ctypes
    import signal

    workers = [int(t) for t in os.listdir(f"/proc/{child.pid}/task") if int(t) != child.pid]
    assert workers, "the command runs worker threads at its prompt"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(child.pid, workers[0], signal.SIGINT) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads under /proc")
@pytest.mark.parametrize(("argv", "prompt"), [
    (["farkle", "--ai", "threshold-300"], SET_ASIDE), (["penta", "--ai", "greedy"], KEEP)])
def test_ctrl_c_at_a_prompt_is_not_held_until_enter(argv, prompt):
    """A Ctrl-C that does not interrupt the read itself still stops the game at once,
    without waiting for a line."""
    # OpenBLAS's worker threads, two whatever the machine or an earlier Dask run set
    child = spawn("play", *argv, "--seed", "1", OPENBLAS_NUM_THREADS="2")
    child.expect(prompt)
    send_intr_to_a_worker_thread(child)
    child.expect(pexpect.EOF, timeout=5)  # held until Enter: a timeout
    child.close()
    assert child.exitstatus == 130
    assert child.before.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in child.before


# --- in-process: the same command line and the same keystrokes replay the same game ---------


def run_with_input(capsys, monkeypatch, argv, lines):
    import io

    from cli_helpers import run_cli

    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in lines)))
    return run_cli(capsys, argv)


@pytest.mark.parametrize("game", ["farkle", "penta"])
def test_the_same_seed_and_keystrokes_replay_the_same_game(capsys, monkeypatch, tmp_path,
                                                           game):
    # keystrokes that fit some positions and are refused in others; when the input runs
    # out before the game ends, the log holds the turns played so far
    # (and text that would be markup to the terminal renderer, shown as typed)
    keys = (["1", "5", "x", "[/x]", "r", "b", "?", "t"] if game == "farkle"
            else ["6 6", "", "4", "chance", "q!", "[/]", ""]) * 25
    argv = ["play", game, "--ai", "ai" if game == "farkle" else "greedy", "--seed", "4"]
    logs = []
    for k in range(2):
        log = tmp_path / f"{k}.jsonl"
        code, out, err = run_with_input(capsys, monkeypatch, [*argv, "--log", str(log)], keys)
        assert code == 0 and err == "" and "✗" in out and "[/" in out
        assert "end of input: the game stops here, unfinished" in out or "won with" in out
        logs.append(log.read_text())
    assert logs[0] == logs[1] and logs[0].count("\n") > 3


def test_a_stopped_game_logs_its_turn_in_progress_and_penta_boxes_by_name(
        capsys, monkeypatch, tmp_path):
    from dicelab.gamelog import read_games
    from dicelab.penta.rules import BOX_NAMES

    log = tmp_path / "f.jsonl"
    code, out, _ = run_with_input(capsys, monkeypatch,
                                  ["play", "farkle", "--seed", "4", "--log", str(log)], ["q"])
    (rec,) = read_games(log)
    # without white space: a long temporary path wraps, or folds, at the page's width
    assert code == 0 and "(unfinished:0turnsandtheturninprogress)" in "".join(out.split()), out
    assert rec.turns == [] and rec.in_progress["seat"] == 0
    assert len(rec.in_progress["rolls"]) == 1 and rec.in_progress["keeps"] == []
    log = tmp_path / "p.jsonl"
    code, out, _ = run_with_input(capsys, monkeypatch, ["play", "penta", "--ai", "none",
                                                        "--seed", "4", "--log", str(log)],
                                  ["", "", "", "", "0", "q"])
    (rec,) = read_games(log)
    assert code == 0 and "(unfinished:2turnsandtheturninprogress)" in "".join(out.split()), out
    boxes = [json.loads(line).get("box") for line in log.read_text().splitlines()[1:]]
    assert boxes[:2] == [BOX_NAMES[t.box] for t in rec.turns] and boxes[2] is None
    assert rec.in_progress["keeps"] == [[]] and len(rec.in_progress["rolls"]) == 2


def penta_cards(out: str) -> list[list[list[str]]]:
    """Every scorecard printed, as its rows of cells (the header row first)."""
    cards = []
    for block in re.findall(r"┏.*?┛|┏.*?┘", out, flags=re.S):
        lines = block.splitlines()
        assert len({len(line) for line in lines}) == 1, block  # a rectangle
        cards.append([[c.strip() for c in line.strip("┃│").split("┃" if "┃" in line
                                                                   else "│")]
                      for line in lines if line[0] in "┃│"])
    return cards


def test_penta_cards_add_up_to_their_totals_and_a_sacrifice_names_the_player(
        capsys, monkeypatch):
    """A whole game against greedy, the card shown ('c') at every turn of the human, who
    stops at once and takes the computer's box: every card, mid-game and final, adds up
    to its TOTAL from the rows shown (the upper bonus shows the upper sum toward 63, then
    35, or 0 when the upper boxes are full short of it; the Penta bonuses their points),
    all at the same width. A forced sacrifice says "you" on the human's turn and names
    the computer on its own. (Seed 14: the computer earns the upper bonus and a Penta
    bonus, the human neither; both sacrifice a box: asserted.)"""
    code, out, err = run_with_input(capsys, monkeypatch,
                                    ["play", "penta", "--ai", "greedy", "--seed", "14"],
                                    ["c", "", ""] * 13)
    assert code == 0 and err == "" and "Computer (greedy) won with" in out
    cards = penta_cards(out)
    assert len(cards) == 14  # one per turn, and the final card
    widths = {len(line) for line in out.splitlines() if line.startswith(("┃", "│", "└"))}
    assert len(widths) == 1, widths  # the card keeps its width through the game
    progress = set()
    for card in cards:
        header, rows = card[0], {r[0]: r[1:] for r in card[1:]}
        assert header[1:] == ["You", "Computer (greedy)"]
        boxes = [r[1:] for r in card[1:14]]
        for col in range(2):
            filled = [int(r[col]) for r in boxes if r[col] != ""]
            upper = [r[col] for r in boxes[:6]]
            upper_sum = sum(int(x) for x in upper if x)
            bonus = rows["Upper bonus at 63"][col]
            if upper_sum >= 63:
                assert bonus == "35"
            elif all(upper):
                assert bonus == "0"
            else:
                assert bonus == f"{upper_sum}/63"
                progress.add(bonus)
            bonus_points = 0 if "/" in bonus else int(bonus)
            penta = int(rows["Penta bonuses"][col])
            assert penta % 100 == 0
            assert sum(filled) + bonus_points + penta == int(rows["TOTAL"][col])
    final = {r[0]: r[1:] for r in cards[-1][1:]}
    assert final["Upper bonus at 63"] == ["0", "35"] and final["Penta bonuses"] == ["0", "100"]
    assert len(progress) > 2  # the upper sum shown on its way
    turns = re.split(r"\n── Round \d+/13 · ", out)[1:]
    sacrifices = [(turn.split(" ·")[0], line.strip()) for turn in turns
                  for line in turn.splitlines() if "No open box scores" in line]
    assert {who for who, _ in sacrifices} == {"You", "Computer (greedy)"}
    for who, line in sacrifices:
        assert line.endswith("No open box scores: " + ("you" if who == "You" else who)
                             + " must sacrifice one")


def test_a_computer_policy_that_fails_mid_game_writes_the_log_of_the_game_so_far(
        capsys, monkeypatch, tmp_path):
    """Your own --ai policy raising at its first (Farkle) or second (Penta) turn: the
    game stops with its error line and exit 2, the log written as when the player stops
    (the turns played and the turn in progress), and it reads back."""
    from dicelab.gamelog import read_games

    monkeypatch.chdir(tmp_path)
    policies = tmp_path / "mine.py"
    policies.write_text(
        "def broken(state):\n    return 1 / 0\n\n\n"
        "def late(card, roll, rolls_left):\n"
        "    if card.total:\n        return 1 / 0\n"
        "    return roll if rolls_left else 'chance'\n")
    for game, ai, keys, played in (("farkle", "broken", ["5", "b"], 1),
                                   ("penta", "late", ["", ""] * 2, 3)):
        log = tmp_path / f"{game}.jsonl"
        code, out, err = run_with_input(
            capsys, monkeypatch, ["play", game, "--ai", f"mine.py:{ai}", "--seed", "3",
                                  "--log", str(log)], keys)
        assert code == 2 and err.startswith(f"error: policy {ai} ")
        assert "ZeroDivisionError" in err and err.count("error:") == 1
        assert f"(unfinished:{played}turn{'s' * (played > 1)}andtheturninprogress)" in \
            "".join(out.split()), out
        (rec,) = read_games(log)
        assert not rec.finished and len(rec.turns) == played
        assert rec.in_progress["seat"] == 1 and len(rec.in_progress["rolls"]) == 1


def test_the_help_of_the_play_commands_says_what_log_and_ai_take(capsys):
    """--log: the game is written also when it stops early; penta's --ai: every family of
    Penta policies the registry parses (as docs/play.md lists them)."""
    from cli_helpers import run_cli

    from dicelab.registry import valid_names

    for game in ("farkle", "penta"):
        code, out, _ = run_cli(capsys, ["play", game, "--help"])
        text = " ".join(out.split())
        assert code == 0 and "finished game" not in text
        assert "when it stops early (q, end of input, a computer policy's error)" in text
        if game == "penta":
            names = re.findall(r"([\w:-]+)(?: \([^)]*\))?(?:, |$)",
                               valid_names("penta").removeprefix("penta: "))
            assert names == ["optimal", "greedy", "optimal:OBJECTIVE", "penta-win"]
            assert all(re.search(rf"[(, ]{re.escape(n)}[,)]", text) for n in names), text


def test_the_coach_says_a_bank_wins_the_game_whatever_it_measures(capsys, monkeypatch):
    """Alone (expected turn points) and at two seats (P(win)), with a target that one bank
    reaches: the coach says once, at the start, that its expected points leave out the
    target (alone only), marks the bank "wins the game" in its table and charges it
    nothing."""
    line = ("coach: judges by the turn's expected points (max-ev), which leave out the "
            "target: a bank that wins the game costs nothing, and the game's last turn is "
            "judged by the chance to beat the highest total")
    for argv, measure in ((["--ai", "none"], "expected points"),
                          (["--humans", "2", "--ai", "none", "--ending", "first-to-bank"],
                           "percentage points of P(win) + ½P(tie)")):
        code, out, _ = run_with_input(capsys, monkeypatch,
                                      ["play", "farkle", *argv, "--target", "100", "--seed",
                                       "1", "--coach"], ["1", "?", "b"])
        flat = " ".join(out.split())
        first = "You" if "--humans" not in argv else "Player 1"
        assert code == 0 and f"{first} won with 100." in flat
        assert flat.count(line) == (measure == "expected points")
        assert line not in flat or flat.index(line) < flat.index("Roll:")
        assert re.search(r"│ set aside 1, bank +│ +[\d.%]+ │ wins the game │", out)
        assert "coach: that bank wins the game" in flat and "that cost" not in flat
        assert f"coach: {first} lost 0.0{'0' * ('P(win)' in measure)} {measure} in all" in flat
        assert "would have won" not in flat
        # rolling on instead: the coach says the bank would have won, whatever it measures
        code, out, _ = run_with_input(capsys, monkeypatch,
                                      ["play", "farkle", *argv, "--target", "100", "--seed",
                                       "1", "--coach"], ["1", "r", "q"])
        flat = " ".join(out.split())
        assert code == 0 and flat.count("coach: banking now would have won the game") == 1
        assert "a best move" not in flat and "bank wins the game" not in flat


def test_three_players_last_turn_is_judged_by_the_chance_to_win(capsys, monkeypatch):
    """A whole game of three players to 100 with the coach (expected turn points): the
    first banks 100 (the last round), the second banks 50 (judged in points: a turn
    follows), the third, on the game's last turn, asks the coach, which ranks by the
    chance to beat 100, then banks 50 behind it: that costs win probability, said apart
    from the points at the end."""
    keys = ["1", "b", "5", "b", "?", "5", "b"]
    code, out, _ = run_with_input(capsys, monkeypatch,
                                  ["play", "farkle", "--humans", "3", "--ai", "none",
                                   "--target", "100", "--seed", "0", "--coach"], keys)
    flat = " ".join(out.split())
    assert code == 0 and "Player 1 won with 100." in flat
    assert "coach: this turn ends the game: P(win) + ½P(tie) of beating 100" in flat
    costs = re.findall(r"coach: that cost ([\d.]+) (expected points|percentage points of "
                       r"P\(win\) \+ ½P\(tie\)) \(best: (.*?)\) Player \d banks", flat)
    assert [unit for _, unit, _ in costs] == ["expected points", "expected points",
                                              "percentage points of P(win) + ½P(tie)"]
    (first, _, _), (second, _, _), (last, _, best) = costs
    # four 4s and the 5, banked, win the game; banking 50 behind 100 loses it for sure
    assert best == "set aside 4 4 4 4 5, bank, 100.00% P(win) + ½P(tie)"
    assert float(last) == 100.0
    assert f"coach: Player 1 lost {first} expected points in all coach: Player 2" in flat
    assert f"coach: Player 2 lost {second} expected points in all coach: Player 3" in flat
    assert flat.endswith(f"coach: Player 3 lost 0.0 expected points in all, and {last} "
                         "percentage points of P(win) + ½P(tie) on the last turn")


def test_bank_or_roll_before_a_set_aside_asks_for_dice(capsys, monkeypatch):
    """b, r, bank and roll, typed before any die is set aside: each refused with what to
    do first, as b and r are at the bank-or-roll prompt."""
    keys = ["b", "r", "bank", "Roll", "t"]
    code, out, _ = run_with_input(capsys, monkeypatch, ["play", "farkle", "--seed", "4"],
                                  [*keys, "q"])
    refusals = [line for line in out.splitlines() if "✗" in line]
    assert code == 0 and len(refusals) == 4
    assert all("first set aside at least one scoring die" in r for r in refusals)


def test_the_penta_coach_at_a_box_with_rerolls_left_names_the_better_keep(capsys,
                                                                         monkeypatch):
    """Stopped early, the box table's losses count against the best keep: the coach says
    so, with the value the keep table then ranks first; with no reroll left, no note."""
    keys = ["", "?", "b", "?", "0", "0", "?", "q"]
    code, out, _ = run_with_input(capsys, monkeypatch, ["play", "penta", "--ai", "greedy",
                                                        "--seed", "7", "--coach"], keys)
    notes = re.findall(r"\(a keep is better: ([\d.,]+); b goes back", out)
    best_rows = re.findall(r"│ (\S[^│]*?) +│ +([\d.,]+) │ +best │", out)
    assert code == 0 and len(notes) == 1 and len(best_rows) == 2
    assert best_rows[0][0].startswith("keep ") and best_rows[0][1] == notes[0]
    assert best_rows[1][0].startswith("score ")  # no reroll left: a box is the best


@pytest.mark.parametrize(("keep", "noted"), [("5", True), ("1555", False)])
def test_the_farkle_coach_after_a_worse_set_aside_says_where_losses_count_from(
        capsys, monkeypatch, keep, noted):
    """After a set-aside that was not the best, the bank-or-roll table's losses count from
    the best option of the roll: the coach says so, with the value its cost line then
    names as the best; after the best set-aside it has nothing to add."""
    argv = ["play", "farkle", "--seed", "5", "--target", "1000", "--ai", "none", "--coach"]
    code, out, _ = run_with_input(capsys, monkeypatch, argv, [keep, "?", "b", "q"])
    notes = re.findall(r"\(losses count from the best option of this roll, ([\d.,]+) "
                       r"points\)", out)
    costs = re.findall(r"coach: that cost [\d.,e+-]+ expected points \(best: [^,]+, \w+, "
                       r"([\d.,]+) points\)", out)
    assert code == 0 and "coach: expected turn score" in out
    assert notes == (costs if noted else []) and len(costs) == noted


@pytest.mark.parametrize("rules", ["default", "zilch"])
def test_a_fresh_seed_is_printed_in_the_first_line_and_replays_the_game(
        capsys, monkeypatch, rules):
    """Also after the long description of a preset's house rules."""
    argv = ["play", "farkle", "--rules", rules, "--target", "15000", "--ending",
            "first-to-bank"]
    code, out, _ = run_with_input(capsys, monkeypatch, argv, ["q"])
    first, roll = out.splitlines()[0], last_roll(out)
    seed = re.fullmatch(r"Farkle · target 15,000 · rules .* · seed (\d+)", first).group(1)
    code2, out2, _ = run_with_input(capsys, monkeypatch, [*argv, "--seed", seed], ["q"])
    assert code == code2 == 0 and last_roll(out2) == roll and out2.splitlines()[0] == first


@pytest.mark.parametrize(("argv", "message"), [
    (["farkle", "--ai", "bogus"], "unknown policy 'bogus'"),
    (["farkle", "--ai", "optimal"], "is a penta policy, not farkle"),
    (["farkle", "--humans", "2", "--ai", "optimal-win"], "plays two-seat games only"),
    (["farkle", "--humans", "0"], "--humans must be 1 to 6"),
    (["farkle", "--target", "25"], "--target must be a positive multiple of 50"),
    (["farkle", "--rules", "bogus"], "unknown Farkle rules 'bogus'"),
    (["farkle", "--seed", "-1"], "--seed must be a non-negative integer"),
    # a game alone ends at the target under either rule
    (["farkle", "--ai", "none", "--ending", "first-to-bank"], "--ending is for two or more"),
    (["farkle", "--ai", "none", "--ending", "last-round"], "--ending is for two or more"),
    (["penta", "--ai", "max-ev"], "is a farkle policy, not penta"),
    (["penta", "--rules", "bogus"], "unknown Penta rule set 'bogus'"),
    (["penta", "--log", "no/such/dir/game.jsonl"], "does not exist"),
])
def test_bad_options_are_refused_before_the_game(capsys, argv, message):
    from cli_helpers import run_cli

    code, out, err = run_cli(capsys, ["play", *argv])
    assert code == 2 and out == "" and message in err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_a_computer_that_cannot_play_is_refused_before_the_banner(capsys, monkeypatch,
                                                                   tmp_path):
    """As a simulation of it would be, before a line of the game: a solve over the memory
    limit, and a bank rule of the user's that fails at some state of the game (asked at
    every one before the first roll, not at the computer's first turn)."""
    from cli_helpers import run_cli

    rule = tmp_path / "rule.py"
    rule.write_text("from dicelab.farkle.policy import bank_rule\n\n\n@bank_rule\n"
                    "def r(me, opp, tp, n):\n    return tp >= 300 if me != 1000 else {}['x']\n")
    log = tmp_path / "game.jsonl"
    code, out, err = run_cli(capsys, ["play", "farkle", "--ai", f"{rule}:r", "--target",
                                      "2000", "--log", str(log)])
    assert code == 2 and out == "" and not log.exists()
    assert err.startswith("error: bank rule r at (my, opp, turn_points, dice_left) = (1000, ")
    assert "KeyError: 'x'" in err and "UserError" not in err and err.count("\n") == 2
    for ai, target in (("fastest", "100000000000000"), ("optimal-win", "2000")):
        monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "10kB")
        code, out, err = run_cli(capsys, ["play", "farkle", "--ai", ai, "--target", target])
        assert code == 2 and out == "" and "of memory, more than the limit" in err
        assert err.startswith("error: ") and err.count("\n") == 1


def test_a_penta_game_against_an_objective_policy_judged_by_its_objective(capsys, tmp_path):
    """A whole game against optimal:utility:theta=0.02 (an objective's policy, deciding turn
    by turn) in the terminal, every box the computer's suggestion; the game log, analysed,
    judges the computer by its objective: it never loses any of it."""
    from dicelab.analyse import analyse_logs

    log = tmp_path / "game.jsonl"
    child = spawn("play", "penta", "--ai", "optimal:utility:theta=0.02", "--seed", "5",
                  "--log", str(log))
    play_penta_to_the_end(child)
    result = analyse_logs([str(log)])
    assert result.measure == {"penta": "score, utility:theta=0.02"}
    rows = {r["policy"]: r for r in result.summary()}
    ai = rows["optimal:utility:theta=0.02"]
    assert ai["measure"] == "utility:theta=0.02" and ai["decisions"] >= 13
    assert ai["total_loss"] == 0.0
    assert rows["human"]["measure"] == "score"
    assert (result.players["residual"].abs() < 1e-9).all()


@pytest.mark.slow  # about 13 s; the fast tier keeps the other whole terminal games
def test_a_whole_game_against_penta_win_on_the_small_variant(tmp_path):
    """A whole game against penta-win in the terminal on the small variant of
    tests/late_penta.py: the test's cache directory holds penta-win's tables of the last
    two layers only, which the command loads as its tables (before them penta-win plays
    optimal's choices; from them on it plays for the win). The human keeps the dice of its
    most frequent face and takes the computer's box. The log, analysed by the command,
    judges penta-win by its win share against the human's card at each of its turns (it
    loses none of it: the analysis values its decisions as it does), the human in
    points; penta-win's outcome is its share of the game."""
    import subprocess
    from collections import Counter

    from late_penta import late_points, late_rows, store_late_win_tables

    from dicelab.gamelog import read_games
    from dicelab.penta.objectives import at_least_rows, score_bounds

    store_late_win_tables(late_rows(at_least_rows(score_bounds("seed"), None)), late_points())
    log = tmp_path / "game.jsonl"
    child = spawn("play", "penta", "--ai", "penta-win", "--seed", "2", "--log", str(log))
    turns = 0
    while True:
        i = child.expect([KEEP, BOX, pexpect.EOF])
        if i == 2:
            break
        if i == 0:
            face, n = max(Counter(last_roll(child.before)).items(), key=lambda kv: kv[::-1])
            child.sendline(" ".join([str(face)] * n) if n < 5 else "")
        else:
            child.sendline("")
            turns += 1
    child.close()
    assert child.exitstatus == 0 and turns == 13
    done = subprocess.run([DICELAB, "analyse", str(log), "--json"], capture_output=True,
                          text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["measure"] == {"penta": "score, win-share"}
    rows = {r["policy"]: r for r in data["players"]}
    ai = rows["penta-win"]
    assert ai["measure"] == "win-share" and ai["decisions"] >= 13 and ai["total_loss"] == 0.0
    assert rows["human"]["measure"] == "score"
    (game,) = read_games(log)
    totals = game.totals
    assert game.finished
    for p in data["per_game"]:
        assert abs(p["residual"]) < 1e-9
        if p["policy"] == "penta-win":
            won = totals[1] == max(totals)
            assert p["outcome"] == (1.0 / totals.count(totals[1]) if won else 0.0)
    late = [d for d in data["decisions"] if d["policy"] == "penta-win" and d["turn"] >= 12]
    assert late and all(-1e-12 <= d["value_chosen"] <= 1.0 + 1e-12 for d in late)
    assert any(1e-9 < d["value_chosen"] < 1.0 - 1e-9 for d in late)
