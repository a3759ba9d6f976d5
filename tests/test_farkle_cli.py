"""Farkle CLI: `dicelab simulate` (Farkle policies), `dicelab bust-risk`, bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from dicelab.cli.main import app, main

runner = CliRunner()


def run_ok(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res


def run_fail(args, capsys):
    """Run through main() (which owns the error handling); returns (code, stderr lines)."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    return exc.value.code, err.strip().splitlines()


def test_simulate_json_solitaire():
    res = run_ok(["simulate", "--strategy", "threshold-300", "--games", "20000", "--seed", "1",
                  "--json"])
    d = json.loads(res.stdout)
    for key in ("games", "seed", "rules", "target", "elapsed_s", "games_per_s", "seats"):
        assert key in d
    assert d["games"] == 20000 and d["seed"] == 1 and d["target"] == 10000
    assert d["rules"] == "default"
    (s,) = d["seats"]
    for key in ("policy", "wins", "ties", "win_rate", "win_rate_ci95", "mean_final_score",
                "mean_turns", "points_per_turn", "bust_rate_per_turn"):
        assert key in s
    assert 400 < s["points_per_turn"] < 600 and s["mean_turns_ci95"][0] < s["mean_turns"]


def test_simulate_json_is_reproducible_and_multi_seat():
    args = ["simulate", "-s", "threshold-300", "--vs", "ai", "--vs", "threshold-500", "-n",
            "9000", "--seed", "77", "--target", "5000", "--rules", "ones-300", "--json"]
    a = json.loads(run_ok(args).stdout)
    b = json.loads(run_ok([*args, "--threads", "1"]).stdout)
    assert [s["policy"] for s in a["seats"]] == ["threshold-300", "ai", "threshold-500"]
    strip = ("elapsed_s", "games_per_s", "setup_s", "threads")
    assert {k: v for k, v in a.items() if k not in strip} == \
        {k: v for k, v in b.items() if k not in strip}
    wins = sum(s["wins"] for s in a["seats"])
    ties = sum(s["ties"] for s in a["seats"])
    assert wins + ties >= a["games"] and wins <= a["games"]
    assert a["rules"] == "ones-300" and a["target"] == 5000


def test_simulate_table_report():
    res = run_ok(["simulate", "-s", "threshold-300", "--vs", "ai", "-n", "10000", "--seed", "3"])
    out = res.stdout
    for text in ("games/s", "win rate", "tie rate", "mean final score", "points per turn",
                 "bust rate per roll", "bust rate per turn", "final score p50", "seed"):
        assert text in out, text
    assert "general" in out  # the kernel that played an ai seat
    solo = run_ok(["simulate", "-s", "threshold-300", "-n", "5000", "--seed", "3"]).stdout
    assert "mean turns" in solo and "win rate" not in solo
    assert "lanes-32" in solo


def test_simulate_out_dir(tmp_path):
    out = tmp_path / "run"
    res = run_ok(["simulate", "-s", "ai", "--vs", "threshold-300", "-n", "5000", "--seed", "4",
                  "--out", str(out), "--json"])
    d = json.loads(res.stdout)
    frame = pd.read_parquet(out / "summary.parquet")
    assert frame["policy"].tolist() == ["ai", "threshold-300"]
    assert frame["wins"].tolist() == [s["wins"] for s in d["seats"]]
    m = json.loads((out / "manifest.json").read_text())
    assert m["seed"] == 4 and m["games"] == 5000 and m["target"] == 10000
    assert m["rules"]["name"] == "default" and m["rules"]["straight"] == 1500
    assert [p["name"] for p in m["policies"]] == ["ai", "threshold-300"]
    assert m["command"][0] == "dicelab"
    for key in ("dicelab", "numba", "numpy"):
        assert key in m["versions"]
    assert m["elapsed_s"] > 0


def test_default_simulate_is_a_million_solitaire_games_to_10000(capsys):
    main(["simulate", "--strategy", "threshold-300", "--json"])  # returns on success
    d = json.loads(capsys.readouterr().out)
    assert d["games"] == 1_000_000 and d["target"] == 10_000 and d["rules"] == "default"
    assert len(d["seats"]) == 1 and isinstance(d["seed"], int)


def test_bust_risk_table_and_json():
    out = run_ok(["bust-risk", "--seed", "1", "-n", "50000"]).stdout
    for pct in ("66.667%", "44.444%", "27.778%", "15.741%", "7.716%", "2.315%"):
        assert pct in out
    d = json.loads(run_ok(["bust-risk", "--rules", "basic", "--games", "20000", "--seed", "2",
                           "--json"]).stdout)
    assert d["rules"] == "basic" and d["seed"] == 2 and len(d["bust_risk"]) == 6
    assert d["bust_risk"][0]["p_bust"] == pytest.approx(2 / 3)
    assert d["bust_risk"][0]["rolls"] == 20000


def test_rules_from_toml_file(tmp_path):
    f = tmp_path / "house.toml"
    f.write_text('name = "house"\nbase = "default"\nthree-pairs = 750\n')
    d = json.loads(run_ok(["simulate", "-s", "threshold-300", "-n", "3000", "--seed", "1",
                           "--rules", str(f), "--json"]).stdout)
    assert d["rules"] == "house" and d["ending"] == "last-round"


def test_first_to_bank_from_the_option_and_from_a_rules_file(tmp_path, capsys):
    args = ["simulate", "-s", "ai", "--vs", "threshold-300", "-n", "20000", "--seed", "6",
            "--target", "3000", "--json"]
    main([*args, "--ending", "first-to-bank"])
    d = json.loads(capsys.readouterr().out)
    assert d["ending"] == "first-to-bank" and d["kernel"] == "general"
    assert [s["ties"] for s in d["seats"]] == [0, 0]
    assert sum(s["wins"] for s in d["seats"]) == d["games"] == 20000
    assert [s["wins"] for s in d["seats"]] == [s["triggered_last_round"] for s in d["seats"]]
    # the same rule from a rules file; --ending replaces the file's
    f = tmp_path / "fast.toml"
    f.write_text('name = "fast"\nending = "first-to-bank"\n')
    main([*args, "--rules", str(f)])
    e = json.loads(capsys.readouterr().out)
    assert e["rules"] == "fast" and e["ending"] == "first-to-bank"
    assert e["seats"] == d["seats"]  # the same games: same table, same ending, same seed
    main([*args, "--rules", str(f), "--ending", "last-round"])
    g = json.loads(capsys.readouterr().out)
    assert g["ending"] == "last-round" and sum(s["ties"] for s in g["seats"]) > 0
    # the manifest records the ending with the rules
    out = tmp_path / "run"
    main([*args, "--rules", str(f), "--out", str(out)])
    capsys.readouterr()
    m = json.loads((out / "manifest.json").read_text())
    assert m["rules"]["ending"] == "first-to-bank" and m["rules"]["name"] == "fast"
    # the table report names the ending of a game of several seats
    main(["simulate", "-s", "ai", "--vs", "threshold-300", "-n", "2000", "--seed", "6",
          "--ending", "first-to-bank"])
    assert "first-to-bank" in capsys.readouterr().out


def test_capped_games_are_reported_on_stderr(capsys):
    main(["simulate", "-s", "threshold-1000000", "-n", "2", "--seed", "1", "--target", "50"])
    out = capsys.readouterr()
    assert "warning" not in out.out and "mean turns" in out.out
    assert "warning:" in out.err and "2 games hit the safety cap" in out.err
    main(["simulate", "-s", "threshold-1000000", "-n", "2", "--seed", "1", "--target", "50",
          "--json"])
    out = capsys.readouterr()
    assert json.loads(out.out)["capped_games"] == 2


@pytest.mark.parametrize(("args", "message"), [
    (["simulate", "-s", "nonsense"], "unknown policy"),
    (["simulate", "-s", "threshold-125"], "positive multiple of 50"),
    (["simulate", "-s", "threshold-0"], "positive multiple of 50"),
    (["simulate", "-s", "threshold-300", "--vs", "threshold-30"], "positive multiple of 50"),
    (["simulate", "-s", "threshold-300", "--games", "0"], "positive number of games"),
    (["simulate", "-s", "threshold-300", "--games", "-5"], "positive number of games"),
    (["simulate", "-s", "threshold-300", "--games", "many"], "--games"),
    (["simulate", "-s", "threshold-300", "--target", "9999"], "multiple of 50"),
    (["simulate", "-s", "threshold-300", "--rules", "nope"], "unknown Farkle rules"),
    (["simulate", "-s", "threshold-300", "--rules", "BAD_TOML"], "malformed TOML"),
    (["simulate", "-s", "threshold-300", "--rules", "missing.toml"], "not found"),
    (["simulate", "-s", "threshold-300", *(["--vs", "ai"] * 7)], "1 to 7 seats"),
    (["simulate", "-s", "threshold-300", "--vs", "optimal"], "penta policy"),
    (["simulate", "-s", "ai:base=333"], "multiple of 50"),
    (["bust-risk", "--games", "0"], "positive number"),
    (["bust-risk", "--rules", "nope"], "unknown Farkle rules"),
    (["bust-risk", "--rules", "BAD_TOML"], "malformed TOML"),
    (["simulate", "-s", "threshold-300", "--rules", "HUGE_TOML"], "at most 1,000,000"),
    (["simulate", "-s", "threshold-300", "--rules", "SUDDEN_TOML"],
     "ending must be one of last-round, first-to-bank, not 'sudden'"),
    (["simulate", "-s", "threshold-300", "--ending", "sudden"],
     "--ending must be one of last-round, first-to-bank"),
    (["simulate", "-s", "optimal", "--ending", "first-to-bank"], "Farkle only"),
    (["simulate", "-s", "ai:base=300,base=350"], "given twice"),
    (["simulate", "-s", "ai:chase=2"], "chase is 0 or 1"),
    (["simulate", "-s", "ai:two-dice=-50"], "non-negative multiple of 50"),
    (["simulate", "-s", f"threshold-{10**23}"], "at most 1,000,000,000,000,000,000 points"),
    (["simulate", "-s", "threshold-300", "--vs", f"ai:base={10**20}"],
     "must each be at most 1,000,000,000,000,000,000"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(args, message, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed\n")
    huge = tmp_path / "huge.toml"  # well-formed, but a single 1 worth 300 million
    huge.write_text('name = "huge"\nsingles = {1 = 300000000, 5 = 50}\n')
    sudden = tmp_path / "sudden.toml"
    sudden.write_text('name = "sudden"\nending = "sudden"\n')
    files = {"BAD_TOML": bad, "HUGE_TOML": huge, "SUDDEN_TOML": sudden}
    args = [str(files[a]) if a in files else a for a in args]
    out = tmp_path / "out"
    if args[0] == "simulate":
        args = [*args, "--out", str(out)]
    code, lines = run_fail(args, capsys)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert "Traceback" not in lines[0]
    assert not out.exists()


@pytest.mark.parametrize(("args", "rows"), [
    (["policy", "farkle", "threshold-1562450"], 31_250),
    (["policy", "farkle", "threshold-1562500"], 31_251),
    (["solve", "farkle", "-p", "threshold-1562500", "--target", "1000"], 31_251),
    (["policy", "farkle", "ai:base=1562400,step=0"], 31_250),
    (["policy", "farkle", "ai:base=1562450,step=0"], 31_251),
    (["policy", "farkle", f"threshold-{10**18}"], 2 * 10**16 + 1),
])
def test_a_bank_table_over_the_memory_limit_is_refused_before_it_is_built(
        args, rows, capsys, monkeypatch):
    """A bank table has a row per 50 turn points up to the policy's highest threshold:
    one over the memory limit (32 bytes a row) is one error line, not numpy's
    MemoryError (or a table of petabytes); one within it is drawn."""
    from cli_helpers import run_cli

    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "1MB")
    code, out, err = run_cli(capsys, args)
    if rows * 32 <= 1_000_000:
        assert code == 0 and "turn points" in out, err
        return
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and not out, err
    assert lines[0].startswith("error: the bank table of ") and f"({rows:,} rows" in lines[0]
    assert "more than the limit of 1.0 MB" in lines[0]


@pytest.mark.parametrize("args", [
    ["policy", "farkle", "threshold-300"],
    ["evaluate", "threshold-300", "--target", "1000"],
])
def test_a_picture_on_standard_output_beside_json_is_refused(args, tmp_path, capfd):
    """--json's JSON is the only thing on standard output: a --plot that goes there (a
    .png link to /dev/stdout) is refused before any work; without --json it is drawn
    there, and a file beside --json is written."""
    from cli_helpers import run_cli

    link = tmp_path / "out.png"
    link.symlink_to("/dev/stdout")
    code, out, err = run_cli(capfd, [*args, "--plot", str(link), "--json"])
    assert code == 2 and not out
    assert err == (f"error: --plot {link}: --json prints its JSON alone on standard output; "
                   "write to a file, or leave out --json\n")
    if args[0] == "evaluate":  # the same check; its report card takes long to compute
        return
    code, out, err = run_cli(capfd, [*args, "--plot", str(link)])
    assert code == 0 and "PNG" in out[:8], err
    code, out, err = run_cli(capfd, [*args, "--plot", str(tmp_path / "f.png"), "--json"])
    assert code == 0 and json.loads(out)["plot"] == str(tmp_path / "f.png"), err
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("extra", "refused"), [
    (["--ending", "first-to-bank"], "--ending is for two or more seats"),
    (["--ending", "last-round"], "--ending is for two or more seats"),  # the default, given
    (["--first", "0"], "--first picks the seat that starts a game of two or more seats"),
    (["--ending", "sudden"], "--ending must be one of"),  # a bad value: that first
    ([], None),
    (["--vs", "threshold-500", "--ending", "first-to-bank", "--first", "1"], None),
])
def test_solitaire_simulation_refuses_an_ending_and_a_first_seat(extra, refused, tmp_path,
                                                                 capsys):
    """A game of one seat ends when it reaches the target under either ending rule, and
    its one player starts every game: --ending and --first were accepted and changed
    nothing (the same games, the JSON reporting them)."""
    log = tmp_path / "games.jsonl"
    args = ["simulate", "-s", "threshold-300", "-n", "100", "--seed", "1", "--target",
            "500", *extra, "--log", str(log), "--log-games", "1", "--json"]
    if refused is None:
        d = json.loads(run_ok(args).stdout)
        assert len(d["seats"]) == 1 + ("--vs" in extra) and log.exists()
        assert d["first_seat"] == (1 if "--first" in extra else None)
        return
    code, lines = run_fail(args, capsys)
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {refused}")
    assert not log.exists()


def test_simulate_farkle_refuses_them_for_one_seat_as_the_command_does():
    from dicelab.errors import UserError
    from dicelab.farkle.simulate import simulate_farkle
    from dicelab.registry import parse_policy

    one = [parse_policy("threshold-300")]
    with pytest.raises(UserError, match="--ending is for two or more seats"):
        simulate_farkle(one, games=10, seed=1, target=1000, ending="first-to-bank")
    with pytest.raises(UserError, match="--first picks the seat"):
        simulate_farkle(one, games=10, seed=1, target=1000, first_seat=0)
    # the rules' own ending is no option: a solitaire game takes it as it is
    r = simulate_farkle(one, games=10, seed=1, target=1000, rules="facebook")
    assert r.rules.ending == "first-to-bank"
