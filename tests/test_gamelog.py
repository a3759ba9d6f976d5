"""Game logs (dicelab.gamelog): the format written and read back, the replaying validator
(every refusal names the file, the line and the field), the atomic writer, and
``simulate --log``."""

from __future__ import annotations

import json

import naive_penta as npn
import pytest
from cli_helpers import run_cli

from dicelab.errors import UserError
from dicelab.farkle.rules import PRESETS, FarkleRules
from dicelab.gamelog import (
    FORMAT_VERSION,
    format_games,
    new_game_header,
    parse_lines,
    read_games,
    rules_record,
    write_games,
)
from dicelab.logplay import play_games

TWO = [{"name": "alice", "policy": "human"}, {"name": "computer", "policy": "ai"}]
ONE = [{"name": "ann", "policy": "human"}]
#: A header's rules table under which no die scores (as a rules file, it is refused).
NOTHING_SCORES = {"name": "none", "singles": {}, "n_of_a_kind_mode": "none", "straight": 0,
                  "three_of_a_kind": {str(f): 0 for f in range(1, 7)}, "three_pairs": 0,
                  "two_triplets": 0}


def _farkle(target=1000, **kw):
    return new_game_header("farkle", "default", TWO, target=target, seed=42, **kw)


def _lines(header, events):
    return [json.dumps(header)] + [json.dumps(e) for e in events]


def _refused(lines, *words, path="g.jsonl", **kw):
    with pytest.raises(UserError) as exc:
        parse_lines(lines, path, **kw)
    msg = str(exc.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    return msg


def test_a_farkle_game_is_replayed_to_its_result():
    events = [
        {"seat": 0, "rolls": [[1, 1, 5, 2, 3, 4], [2, 5, 6, 3]], "keeps": [[1, 1], [5]],
         "end": "bank"},
        {"seat": 1, "rolls": [[2, 3, 4, 6, 6, 2]], "keeps": [], "end": "bust"},
        {"seat": 0, "rolls": [[1, 1, 1, 2, 3, 4]], "keeps": [[1, 1, 1]], "end": "bank"},
        {"seat": 1, "rolls": [[5, 2, 3, 4, 6, 6]], "keeps": [[5]], "end": "bank"},
    ]
    text = format_games([(_farkle(), events)])
    lines = text.splitlines()
    assert json.loads(lines[-1]) == {"result": {"totals": [1250, 50], "winners": [0]}}
    (g,) = parse_lines(lines, "x")
    assert g.finished and g.totals == [1250, 50] and g.winners == [0]
    assert [t.points for t in g.turns] == [250, 0, 1000, 50]
    assert g.turns[2].totals == (1250, 0)
    assert json.loads(lines[0])["dicelab_log"] == FORMAT_VERSION


def test_a_penta_game_of_two_seats_scores_as_the_plain_python_reference():
    games = play_games("penta", ["greedy", "greedy"], games=2, seed=11)
    text = format_games(games)
    recs = parse_lines(text.splitlines(), "p")
    assert len(recs) == 2
    for rec, (_, events) in zip(recs, games, strict=True):
        assert rec.finished and len(rec.turns) == 26
        for seat in range(2):
            filled: dict[str, int] = {}
            bonuses = 0
            for e in events:
                if e["seat"] != seat:
                    continue
                scores, bonus = npn.allowed_scores("seed", filled, e["rolls"][-1])
                filled[e["box"]] = scores[e["box"]]
                bonuses += bonus > 0
            assert rec.totals[seat] == npn.card_total(filled, bonuses)


def test_write_then_read_many_games(tmp_path):
    games = play_games("farkle", ["threshold-300", "ai"], games=3, seed=2, target=1000)
    path = tmp_path / "log.jsonl"
    write_games(path, games)
    recs = read_games(path)
    assert [r.index for r in recs] == [0, 1, 2]
    assert [r.first_seat for r in recs] == [0, 1, 0]  # rotates with the game index
    assert all(r.finished for r in recs)
    assert not [p for p in tmp_path.iterdir() if p.name != "log.jsonl"]  # no temp file left
    assert read_games(path, game="farkle", rules="default")[0].rules_name == "default"


def test_rules_tables_go_in_the_header_and_compare_by_content():
    own = FarkleRules(name="mine", straight=1000)
    rec = rules_record("farkle", own)
    assert isinstance(rec, dict) and rec["straight"] == 1000
    h = new_game_header("farkle", own, ONE, target=500)
    events = [{"seat": 0, "rolls": [[1, 2, 3, 4, 5, 6]], "keeps": [[1, 2, 3, 4, 5, 6]],
               "end": "bank"}]
    (g,) = parse_lines(_lines(h, events), "x")
    assert g.totals == [1000] and g.finished
    _refused(_lines(h, events), "g.jsonl:1", "field 'rules'", "'mine'", game="farkle",
             rules="default")
    assert rules_record("farkle", PRESETS["default"].with_ending("first-to-bank")) == "default"


def test_a_penta_turn_from_the_format_description():
    h = new_game_header("penta", "seed", ONE)
    t = {"seat": 0, "rolls": [[6, 6, 2, 3, 1], [6, 6, 6, 4, 5], [6, 6, 6, 6, 1]],
         "keeps": [[6, 6], [6, 6, 6]], "box": "chance"}
    (g,) = parse_lines(_lines(h, [t]), "x")
    assert g.totals == [25] and not g.finished and g.turns[0].box == 11


@pytest.mark.parametrize(("event", "words"), [
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1, 6]], "end": "bank"},
     ["g.jsonl:2", "field 'keeps[0]'", "cannot all score"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[5]], "end": "bank"},
     ["field 'keeps[0]'", "not among the dice rolled"]),
    ({"seat": 0, "rolls": [[1, 1, 5, 2, 3, 4], [2, 5, 6]], "keeps": [[1, 1], [5]],
      "end": "bank"}, ["field 'rolls[1]'", "4 dice were rolled, not 3"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [], "end": "bust"},
     ["field 'rolls[0]'", "not a bust"]),
    ({"seat": 1, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1]], "end": "bank"},
     ["field 'seat'", "seat 0's turn"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1]], "end": "stop"},
     ["field 'end'"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 7]], "keeps": [[1]], "end": "bank"},
     ["field 'rolls[0]'", "dice 1..6"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1]], "end": "bank", "x": 1},
     ["field 'x'"]),
    ({"seat": 0, "rolls": [[True, 2, 3, 4, 6, 6]], "keeps": [[1]], "end": "bank"},
     ["field 'rolls[0]'", "dice 1..6, not [true,"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1.0]], "end": "bank"},
     ["field 'keeps[0]'", "dice 1..6, not [1.0]"]),
])
def test_illegal_farkle_turns_are_refused_with_their_place(event, words):
    _refused(_lines(_farkle(), [event]), *words)


def test_a_turn_after_the_end_and_a_wrong_result_are_refused():
    h = new_game_header("farkle", "default", ONE, target=500)
    win = {"seat": 0, "rolls": [[1, 1, 1, 2, 3, 4]], "keeps": [[1, 1, 1]], "end": "bank"}
    _refused(_lines(h, [win, win]), "g.jsonl:3", "field 'seat'", "game is over")
    _refused(_lines(h, [win, {"result": {"totals": [900], "winners": [0]}}]), "g.jsonl:3",
             "field 'result.totals'", "[1000]")
    _refused(_lines(h, [{"result": {"totals": [0], "winners": [0]}}]), "field 'result'",
             "not ended")


def test_house_rules_minimum_to_bank():
    h = new_game_header("farkle", "facebook", ONE, target=5000)
    small = {"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1]], "end": "bank"}
    _refused(_lines(h, [small]), "field 'end'", "minimum to bank is 300")


def _penta_card(n_turns):
    """Turns that fill boxes ones, twos, ... with one roll each."""
    return [{"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [], "box": npn.BOXES[b]}
            for b in range(n_turns)]


@pytest.mark.parametrize(("event", "words"), [
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [], "box": "ones"},
     ["g.jsonl:4", "field 'box'", "already filled"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [], "box": "yahtzee"},
     ["field 'box'", "a box name"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6], [1, 1, 1, 1, 1]], "keeps": [[6]],
      "box": "chance"}, ["field 'rolls[1]'", "does not show the dice kept"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6], [1, 1, 1, 1, 1]], "keeps": [[5]],
      "box": "chance"}, ["field 'keeps[0]'", "not among the dice"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6], [1, 2, 3, 4, 6]], "keeps": [],
      "box": "chance"}, ["field 'keeps'", "one keep per reroll"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4]], "keeps": [], "box": "chance"},
     ["field 'rolls[0]'", "5 dice"]),
    # a die is an integer: true and 4.0 are not the dice 1 and 4
    ({"seat": 0, "rolls": [[True, 2, 3, 4, 6]], "keeps": [], "box": "chance"},
     ["field 'rolls[0]'", "dice 1..6, not [true,"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4.0, 6]], "keeps": [], "box": "chance"},
     ["field 'rolls[0]'", "dice 1..6, not [1, 2, 3, 4.0, 6]"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6], [1, 1, 1, 1, 6]], "keeps": [[6.0]],
      "box": "chance"}, ["field 'keeps[0]'", "dice 1..6, not [6.0]"]),
    ({"seat": 0, "rolls": [[1, 2, 3, 4, 6], [1, 1, 1, 1, 1]], "keeps": [[True]],
      "box": "chance"}, ["field 'keeps[0]'", "dice 1..6, not [true]"]),
])
def test_illegal_penta_turns_are_refused_with_their_place(event, words):
    h = new_game_header("penta", "seed", ONE)
    _refused(_lines(h, [*_penta_card(2), event]), *words)


def test_the_forced_joker_is_enforced():
    h = new_game_header("penta", "seed", ONE)
    turns = [{"seat": 0, "rolls": [[2, 2, 2, 2, 2]], "keeps": [], "box": "penta"},
             {"seat": 0, "rolls": [[4, 4, 4, 4, 4]], "keeps": [], "box": "chance"}]
    _refused(_lines(h, turns), "g.jsonl:3", "field 'box'", "joker", "fours")
    turns[1]["box"] = "fours"
    (g,) = parse_lines(_lines(h, turns), "x")
    assert g.totals == [50 + 20 + 100]


@pytest.mark.parametrize(("header", "words"), [
    ({"dicelab_log": 2, "game": "penta", "rules": "seed", "seats": ONE},
     ["g.jsonl:1", "field 'dicelab_log'", "version 2"]),
    ({"dicelab_log": 1, "game": "chess", "rules": "seed", "seats": ONE}, ["field 'game'"]),
    ({"dicelab_log": 1, "game": "penta", "rules": "nope", "seats": ONE}, ["field 'rules'"]),
    ({"dicelab_log": 1, "game": "penta", "rules": "seed", "seats": []}, ["field 'seats'"]),
    ({"dicelab_log": 1, "game": "farkle", "rules": "default", "seats": ONE,
      "target": 1234}, ["field 'target'", "multiple of 50"]),
    ({"dicelab_log": 1, "game": "penta", "rules": "seed", "seats": ONE, "first_seat": 3},
     ["field 'first_seat'"]),
    ({"dicelab_log": 1, "game": "farkle", "rules": NOTHING_SCORES, "seats": ONE,
      "target": 1000}, ["field 'rules'", "no roll of six dice scores anything"]),
    ({"dicelab_log": 1, "game": "farkle", "rules": {**NOTHING_SCORES, "singles": {"1": 70}},
      "seats": ONE, "target": 1000}, ["field 'rules'", "multiple of 50"]),
    *(({"dicelab_log": 1, "game": "farkle", "rules": {"name": "x", **table}, "seats": ONE,
        "target": 1000}, ["field 'rules'", *words]) for table, words in [
        ({"singles": {"-1": 100}}, ["'-1' is not a face"]),
        ({"three_of_a_kind": {"0": 100}}, ["'0' is not a face"]),
        ({"straight": 2**70}, ["straight must be a multiple of 50 in 0..1000000"]),
        ({"straight": 1_000_050}, ["straight must be a multiple of 50 in 0..1000000"]),
        ({"three_pairs": -50}, ["three_pairs must be"]),
        ({"singles": {"1": "100"}}, ["singles.1 must be an integer"]),
        ({"n_of_a_kind": {"4": 1000, "5": 2000}}, ["4, 5 and 6 of a kind"]),
        ({"four_and_pair_as_three_pairs": "yes"}, ["true or false"])]),
])
def test_bad_headers(header, words):
    _refused([json.dumps(header)], *words)


def test_a_table_under_which_only_a_single_1_scores_is_read():
    header = {"dicelab_log": 1, "game": "farkle", "rules": {**NOTHING_SCORES,
              "singles": {"1": 100}}, "seats": ONE, "target": 1000}
    turn = {"seat": 0, "rolls": [[1, 2, 3, 4, 5, 6]], "keeps": [[1]], "end": "bank"}
    (g,) = parse_lines(_lines(header, [turn]), "x")
    assert g.totals == [100]
    header["rules"]["straight"] = 1_000_000  # the largest entry
    turn["keeps"] = [[1, 2, 3, 4, 5, 6]]
    (g,) = parse_lines(_lines(header, [turn]), "x")
    assert g.totals == [1_000_000]


def test_malformed_json_another_game_another_rule_set(tmp_path):
    h = new_game_header("penta", "seed", ONE)
    _refused([json.dumps(h), '{"seat": 0, "rolls": [[1, 2'], "g.jsonl:2", "not valid JSON")
    _refused([json.dumps(h)], "g.jsonl:1", "field 'game'", "of penta, not of farkle",
             game="farkle")
    _refused([json.dumps(h)], "g.jsonl:1", "field 'rules'", "'seed', not 'hasbro'",
             game="penta", rules="hasbro")
    _refused(['{"seat": 0}'], "g.jsonl:1", "header")
    with pytest.raises(UserError, match="no game"):
        parse_lines([], "e.jsonl")
    with pytest.raises(UserError, match=r"missing\.jsonl: not found"):
        read_games(tmp_path / "missing.jsonl")
    with pytest.raises(UserError, match="directory"):
        read_games(tmp_path)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match=r"b\.jsonl"):
        read_games(binary)


def test_write_games_refuses_an_illegal_game_and_writes_nothing(tmp_path):
    h = new_game_header("penta", "seed", ONE)
    path = tmp_path / "out.jsonl"
    with pytest.raises(UserError, match="already filled"):
        write_games(path, [(h, _penta_card(1) * 2)])
    assert list(tmp_path.iterdir()) == []


def test_a_turn_in_progress_is_a_stopped_games_last_line():
    bank = {"seat": 0, "rolls": [[1, 1, 5, 2, 3, 4]], "keeps": [[1, 1]], "end": "bank"}
    for stopped in ({"seat": 1, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": []},
                    {"seat": 1, "rolls": [[1, 2, 3, 4, 6, 6], [5, 5, 2, 3, 4]],
                     "keeps": [[1], [5, 5]]}):
        (g,) = parse_lines(_lines(_farkle(), [bank, stopped]), "x")
        assert g.in_progress == stopped and len(g.turns) == 1
        assert g.totals == [200, 0] and not g.finished and g.winners == []
        # nothing of that game after it: no turn, no result line
        _refused(_lines(_farkle(), [bank, stopped, bank]), "g.jsonl:4",
                 "a turn in progress is the game's last line")
        _refused([*_lines(_farkle(), [bank, stopped]), json.dumps({"result": {}})],
                 "g.jsonl:4", "a turn in progress is the game's last line")
        # a new game may follow
        two = parse_lines(_lines(_farkle(), [bank, stopped]) + _lines(_farkle(), [bank]), "x")
        assert two[0].in_progress == stopped and two[1].in_progress is None
    _refused(_lines(_farkle(), [{"seat": 0, "rolls": [[2, 3, 4, 6, 6, 2]], "keeps": []}]),
             "field 'rolls[0]'", "scores nothing", "bust")
    _refused(_lines(_farkle(), [{"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]],
                                 "keeps": [[1], [1]]}]),
             "field 'keeps'", "a turn in progress with 1 roll has 0 or 1 set-aside, not 2")
    h = new_game_header("penta", "seed", ONE)
    t = {"seat": 0, "rolls": [[6, 6, 2, 3, 1], [6, 6, 6, 4, 5]], "keeps": [[6, 6]]}
    (g,) = parse_lines(_lines(h, [t]), "x")
    assert g.in_progress == t and g.turns == [] and g.totals == [0]
    _refused(_lines(h, [{**t, "keeps": []}]), "field 'keeps'", "one keep per reroll")
    _refused(_lines(h, [t, {**t, "box": "chance"}]), "g.jsonl:3", "a turn in progress")


def test_the_bulk_reader_reads_a_turn_in_progress_as_the_python_replay():
    played = play_games("penta", ["greedy", "greedy"], games=6, seed=2)
    header, events = played[-1]
    stopped = {k: events[-1][k] for k in ("seat", "rolls", "keeps")}
    played[-1] = (header, [*events[:-1], stopped])
    recs = _read_both(format_games(played).splitlines())  # both readers, forced
    assert recs[-1][-1] == stopped and not recs[-1][4]
    assert all(r[-1] is None for r in recs[:-1])


def test_simulate_log_is_reproduced_by_the_seed(tmp_path, capsys):
    args = ["simulate", "-s", "threshold-300", "--vs", "ai", "--target", "1000", "-n", "200",
            "--seed", "5", "--log-games", "4", "--json", "--log"]
    for name in ("a.jsonl", "b.jsonl"):
        code, _, err = run_cli(capsys, [*args, str(tmp_path / name)])
        assert code == 0, err
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    recs = read_games(tmp_path / "a.jsonl")
    assert len(recs) == 4 and all(r.seed == 5 for r in recs)
    assert [s["policy"] for s in recs[0].seats] == ["threshold-300", "ai"]
    code, _, err = run_cli(capsys, [*args[:-1], "--log-games", "0", "--log",
                                    str(tmp_path / "c.jsonl")])
    assert code == 2 and err.startswith("error: --log-games") and err.count("\n") == 1
    assert not (tmp_path / "c.jsonl").exists()
    code, _, err = run_cli(capsys, args[:-2])  # --log-games without --log
    assert code == 2 and err == "error: --log-games needs --log FILE (the games are " \
                                "written there)\n"
    code, _, err = run_cli(capsys, [*args[:9], "--log", str(tmp_path / "d.jsonl")])
    assert code == 0 and err == f"game log written to {tmp_path / 'd.jsonl'} (100 games)\n"


@pytest.mark.parametrize("log", ["out/summary.parquet", "out/manifest.json",
                                 "out/../out/manifest.json", "link.jsonl"])
def test_simulate_log_is_refused_where_out_writes(tmp_path, capsys, log):
    """A --log that is (or links to) a file --out writes would be overwritten by it after
    "game log written": refused before the run, nothing written; beside them it is
    written."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "manifest.json").write_text("{}")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "out" / "manifest.json")
    args = ["simulate", "-s", "threshold-300", "--target", "1000", "-n", "50", "--seed", "5",
            "--log-games", "2", "--out", str(tmp_path / "out")]
    code, out, err = run_cli(capsys, [*args, "--log", str(tmp_path / log)])
    assert code == 2 and not out and err.count("\n") == 1
    assert err.startswith(f"error: --log {tmp_path / log}: --out writes ")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json"]
    assert (tmp_path / "out" / "manifest.json").read_text() == "{}"
    code, _, err = run_cli(capsys, [*args, "--log", str(tmp_path / "out" / "games.jsonl")])
    assert code == 0, err
    assert len(read_games(tmp_path / "out" / "games.jsonl")) == 2
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "games.jsonl", "manifest.json", "summary.parquet"]


def test_simulate_log_goes_in_the_folder_out_creates(tmp_path, capsys):
    """``--out s --log s/games.jsonl``: --out makes s, so the log may go there (a folder
    no output makes is still refused, before the run)."""
    out = tmp_path / "s"
    args = ["simulate", "-s", "threshold-300", "--target", "1000", "-n", "50", "--seed", "5",
            "--log-games", "2", "--out", str(out)]
    code, _, err = run_cli(capsys, [*args, "--log", str(tmp_path / "t" / "g.jsonl")])
    assert code == 2 and err.count("\n") == 1 and "does not exist" in err, err
    assert not out.exists() and not (tmp_path / "t").exists()
    code, _, err = run_cli(capsys, [*args, "--log", str(out / "games.jsonl")])
    assert code == 0, err
    assert len(read_games(out / "games.jsonl")) == 2
    assert sorted(p.name for p in out.iterdir()) == [
        "games.jsonl", "manifest.json", "summary.parquet"]


@pytest.mark.parametrize("log", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_simulate_json_and_a_log_on_standard_output_are_refused(capfd, log):
    """--json keeps its JSON alone on standard output: a log there too would mix into it
    (``--json | jq`` breaks). Refused before the run; the log alone goes there, and beside
    --json it may go to standard error."""
    args = ["simulate", "-s", "threshold-300", "--target", "1000", "-n", "20", "--seed", "3",
            "--log-games", "1", "--log", log]
    code, out, err = run_cli(capfd, [*args, "--json"])
    assert code == 2 and not out
    assert err == (f"error: --log {log}: --json prints its JSON alone on standard output; "
                   "write to a file, or leave out --json\n")
    code, out, err = run_cli(capfd, args)
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["dicelab_log"] == 1
    code, out, err = run_cli(capfd, [*args[:-1], "/dev/stderr", "--json"])
    assert code == 0, err
    assert json.loads(out)["games"] == 20
    assert '"dicelab_log": 1' in err


# --- the bulk reader of Penta games agrees with the Python replay -----------------------------


def _read_both(lines, **kw):
    """What the bulk reader and the Python replay make of ``lines``: the same games (every
    turn record, totals, end, winners) or the same error message."""
    from dicelab import gamelog

    data = "\n".join(lines).encode()
    out = []
    for bulk in (True, False):
        try:
            recs = gamelog._parse(data, "g.jsonl", kw.get("game"), kw.get("rules"),
                                  bulk=bulk)
            out.append([(r.index, r.line, r.rules_name, r.totals, r.finished, r.winners,
                         r.seats, r.header, list(r.turns), r.in_progress) for r in recs])
        except UserError as exc:
            out.append(str(exc))
    assert out[0] == out[1]
    return out[0]


@pytest.mark.parametrize("game", ["penta", "farkle"])
def test_a_number_too_long_for_python_is_refused_with_its_line(game):
    """An integer of more digits than Python converts (4,300) is one error naming its line,
    in a turn or a header, by both readers (it was a ValueError traceback); one of 4,300
    digits is read, and refused by its field's check."""
    if game == "penta":
        lines = _lines(new_game_header("penta", "seed", ONE), _penta_card(2))
        turn = '{"seat": 0, "rolls": [[1, 2, 3, 4, %s]], "keeps": [], "box": "chance"}'
    else:
        lines = _lines(_farkle(), [{"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]],
                                    "keeps": [[1]], "end": "bank"}])
        turn = '{"seat": 1, "rolls": [[1, 2, 3, 4, 6, %s]], "keeps": [[1]], "end": "bank"}'
    n = len(lines) + 1
    for digits, too_long in ((5000, True), (4300, False)):
        big = "6" * digits
        msg = _read_both([*lines, turn % big])
        assert isinstance(msg, str) and msg.startswith(f"g.jsonl:{n}:"), msg
        assert ("a number too long" in msg) == too_long, msg
        assert ("field 'rolls[0]'" in msg) != too_long, msg
        header = json.dumps({**json.loads(lines[0]), "first_seat": 0}).replace(
            '"first_seat": 0', f'"first_seat": {big}')
        msg = _read_both([header, *lines[1:]])
        assert isinstance(msg, str) and msg.startswith("g.jsonl:1:"), msg
        assert ("a number too long" in msg) == too_long, msg
        assert ("field 'first_seat'" in msg) != too_long, msg


def _random_penta_game(rng, rules, n_seats):
    """A game of random keeps and random open boxes on dice biased to Pentas and full
    houses (so the joker rules are met often); a box the joker refuses makes the game
    illegal, which both readers must say alike."""
    header = new_game_header("penta", rules, [{"name": f"s{i}", "policy": "random"}
                                              for i in range(n_seats)])
    open_boxes = [list(npn.BOXES) for _ in range(n_seats)]
    events = []
    for _ in range(13):
        for seat in range(n_seats):
            faces = [5, 6] if rng.random() < 0.7 else list(range(1, 7))
            roll = [int(rng.choice(faces)) for _ in range(5)]
            rolls, keeps = [roll], []
            for _ in range(int(rng.integers(0, 3))):
                keep = [d for d in roll if rng.random() < 0.5]
                keeps.append(keep)
                roll = keep + [int(rng.choice(faces)) for _ in range(5 - len(keep))]
                rolls.append(roll)
            box = open_boxes[seat].pop(int(rng.integers(len(open_boxes[seat]))))
            events.append({"seat": seat, "rolls": rolls, "keeps": keeps, "box": box})
    return header, events


@pytest.mark.parametrize("rules", ["seed", "hasbro", "free-joker", "no-bonus"])
@pytest.mark.slow
def test_the_bulk_reader_scores_penta_games_as_the_python_replay(rules):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    lines, refused = [], 0
    for g in range(60):
        header, events = _random_penta_game(rng, rules, 1 + g % 3)
        one = _read_both(_lines(header, events))
        if isinstance(one, str):  # a box the joker rule refuses
            assert "field 'box'" in one and "joker" in one, one
            refused += 1
            continue
        lines += _lines(header, events)
        if g % 2:  # some games with their result line
            lines.append(json.dumps({"result": {"totals": one[0][3], "winners": one[0][5]}}))
    recs = _read_both(lines)
    assert len(recs) + refused == 60 and all(r[4] for r in recs)


def test_the_bulk_reader_refuses_what_the_python_replay_refuses():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    played = play_games("penta", ["optimal", "greedy"], games=2, seed=9)
    lines = format_games(played).splitlines()
    assert isinstance(_read_both(lines), list)

    def mutations(text):
        t = json.loads(text)
        yield text.replace(", ", ",").replace(": ", ":")  # compact separators: read by json
        yield "  " + text.replace("[", "[ ") + " \t"
        yield json.dumps(dict(reversed(list(t.items()))))
        if "seat" not in t:
            yield text.replace("0", "1", 1)
            return
        yield text.replace('"seat": ', '"seat": 0')  # a leading zero is not JSON
        yield text.replace("1", "1.0", 1)
        yield text.replace(f'"{t["box"]}"', '"Full House"')
        yield text.replace(f'"{t["box"]}"', f'"{npn.BOXES[int(rng.integers(13))]}"')
        yield text.replace(str(t["seat"]), str(1 - t["seat"]), 1)
        yield json.dumps({**t, "rolls": t["rolls"] + [t["rolls"][-1]]})
        yield json.dumps({**t, "keeps": t["keeps"][:-1]})
        yield json.dumps({**t, "keeps": [[6, 6, 6, 6, 6]] * len(t["keeps"])})
        yield json.dumps({**t, "rolls": [[int(rng.integers(1, 7)) for _ in range(5)]
                                         for _ in t["rolls"]]})
        yield json.dumps({**t, "extra": 1})
        yield text[:-1]
        yield ""

    tried = 0
    for i in list(range(len(lines))):
        for new in mutations(lines[i]):
            _read_both([*lines[:i], new, *lines[i + 1:]])
            tried += 1
    for i in (0, 5, 14, 15, 40):  # a line moved elsewhere
        moved = [x for k, x in enumerate(lines) if k != i]
        _read_both([*moved[:3], lines[i], *moved[3:]])
    _read_both([*lines[:20], lines[3], *lines[20:]])  # a turn after the game's result
    _read_both(lines, game="farkle")
    _read_both(lines, game="penta", rules="hasbro")
    assert tried > 500


def test_the_bulk_reader_with_farkle_games_and_carriage_returns(tmp_path):
    farkle = format_games(play_games("farkle", ["threshold-300", "ai"], games=2, seed=2,
                                     target=1000)).splitlines()
    penta = format_games(play_games("penta", ["greedy"], games=2, seed=1)).splitlines()
    mixed = penta[:15] + farkle + penta[15:]
    recs = _read_both(mixed)
    assert [r[2] for r in recs] == ["seed", "default", "default", "seed"]
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(("\r\n".join(mixed) + "\r\n").encode())
    from_file = read_games(path)
    assert [r.totals for r in from_file] == [r[3] for r in recs]
    assert [list(r.turns) for r in from_file] == [r[8] for r in recs]


def test_counts_in_the_refusals_are_singular_or_plural_never_s_in_brackets():
    """Each count with its noun as the count says ("1 roll", "0 set-asides"), in every
    refusal that counts rolls, keeps, set-asides or seats (they read "1 roll(s)")."""
    bust = {"seat": 0, "rolls": [[2, 3, 4, 6, 6, 2]], "keeps": [[2]], "end": "bust"}
    bank = {"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6], [2, 3, 4, 6, 5]], "keeps": [[1]],
            "end": "bank"}
    stopped = {"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6], [2, 3, 4, 6, 5]], "keeps": []}
    h = new_game_header("penta", "seed", ONE)
    penta = {"seat": 0, "rolls": [[6, 6, 2, 3, 1]], "keeps": [[6, 6]], "box": "chance"}
    win = {"seat": 0, "rolls": [[1, 1, 1, 2, 3, 4]], "keeps": [[1, 1, 1]], "end": "bank"}
    one = new_game_header("farkle", "default", ONE, target=500)
    messages = [
        _refused(_lines(_farkle(), [bust]), "field 'keeps'",
                 "a turn that ends in a bust with 1 roll has 0 set-asides, not 1"),
        _refused(_lines(_farkle(), [bank]), "field 'keeps'",
                 "a turn that ends in a bank with 2 rolls has 2 set-asides, not 1"),
        _refused(_lines(_farkle(), [stopped]), "field 'keeps'",
                 "a turn in progress with 2 rolls has 1 or 2 set-asides, not 0"),
        _refused(_lines(h, [penta]), "field 'keeps'",
                 "one keep per reroll: 0 keeps for 1 roll, not 1"),
        _refused(_lines(h, [{**penta, "rolls": penta["rolls"] * 2, "keeps": []}]),
                 "one keep per reroll: 1 keep for 2 rolls, not 0"),
        _refused(_lines(one, [win, {"result": {"winners": [1]}}]), "field 'result.winners'",
                 "[1] disagrees with the totals, which give [0]: seat 0 has the highest "
                 "total"),
    ]
    assert not [m for m in messages if "(s)" in m]


def test_a_key_given_twice_is_refused_with_its_line_by_both_readers():
    """JSON keeps the last value of a key given twice, so a line could say two things and
    be read as the second: both readers refuse it, naming the file, the line and the key,
    wherever the object is (a turn, a header, a seat, a result) and whatever its form."""
    played = play_games("penta", ["greedy", "greedy"], games=1, seed=2)
    lines = format_games(played).splitlines()
    assert isinstance(_read_both(lines), list)
    turn = lines[2]  # seat 1's first turn (line 3), in the writers' form
    assert json.loads(turn)["seat"] == 1
    box = turn[turn.index('"box"'):-1]
    cases = [  # (line index, the line, the key given twice)
        (2, turn.replace('"seat": 1', '"seat": 0, "seat": 1'), "seat"),  # the last is right
        (2, turn[:-1] + ", " + box + "}", "box"),  # the writers' form, then the box again
        (2, turn.replace('"seat": 1', '"seat": 1, "x": 1, "x": 1'), "x"),
        (0, lines[0][:-1] + ', "rules": "seed"}', "rules"),
        (0, lines[0].replace('"name": "seat 0"', '"name": "x", "name": "seat 0"'), "name"),
        (len(lines) - 1, lines[-1].replace('{"totals"', '{"winners": [0], "totals"'),
         "winners"),
    ]
    for i, text, key in cases:
        assert text.count(f'"{key}"') >= 2 and text != lines[i], text
        msg = _read_both([*lines[:i], text, *lines[i + 1:]])
        assert msg == f"g.jsonl:{i + 1}: field '{key}': given twice in one object (a key is " \
                      "given once)", msg
    farkle = _lines(_farkle(), [{"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1]],
                                 "end": "bank"}])
    farkle[1] = farkle[1].replace('"end"', '"end": "bust", "end"')
    _refused(farkle, "g.jsonl:2: field 'end': given twice")
    # a key with a line break in it: the error stays one line
    bad = turn[:-1] + ', "a\\nb": 1, "a\\nb": 2}'
    msg = _read_both([*lines[:2], bad, *lines[3:]])
    assert msg == "g.jsonl:3: field 'a\\nb': given twice in one object (a key is given once)"
