"""`dicelab solve farkle` and `dicelab policy farkle` (exit codes, JSON, PNG)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab.farkle import solitaire
from dicelab.farkle.builtin import family_of
from dicelab.farkle.rules import PRESETS, load_rules, set_asides
from dicelab.plots import bust_risk_figure
from dicelab.registry import parse_policy
from dicelab.stats import Estimate


def run(capsys, *argv) -> tuple[int, str, str]:
    return run_cli(capsys, argv)


def test_solve_threshold_json_matches_library(capsys):
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "threshold-300", "--json",
                       "--target", "2000")
    assert code == 0
    res = json.loads(out)
    exact = solitaire.threshold_distribution(PRESETS["default"], 300)
    assert res["expected_turn_score"] == exact.expected_score
    assert res["p_bust"] == exact.p_bust
    assert sum(res["p_bank"].values()) + res["p_bust"] == pytest.approx(1.0, abs=1e-12)
    assert res["expected_turns_to_target"] > 1


def test_solve_max_ev_text_and_json(capsys):
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "max-ev", "--rules", "basic")
    assert code == 0 and "banks from turn points" in out
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "max-ev", "--json")
    res = json.loads(out)
    assert res["expected_turn_score"] == solitaire.solve_max_ev(PRESETS["default"]).expected_score
    assert set(res["bank_thresholds"]) == {"1", "2", "3", "4", "5", "6"}


def test_solve_fastest(capsys):
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "fastest", "--target", "1500",
                       "--json")
    assert code == 0
    res = json.loads(out)
    assert res["expected_turns_to_target"] == pytest.approx(
        solitaire.solve_fastest(PRESETS["default"], 1500).expected_turns_to_target, rel=1e-15)
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "fastest", "--target", "1500")
    assert code == 0 and "loaded from cache" in out


def test_solve_optimal_win_under_both_endings(capsys):
    from dicelab.farkle.solve import solve_optimal_win

    code, out, _ = run(capsys, "solve", "farkle", "--policy", "optimal-win", "--target", "500",
                       "--ending", "first-to-bank", "--json")
    assert code == 0
    res = json.loads(out)
    sol = solve_optimal_win(load_rules("default", "first-to-bank"), 500)
    assert res["ending"] == "first-to-bank" and res["p_tie"] == 0.0
    assert res["p_win"] == sol.first_outcome.win and sol.from_cache  # the CLI solved and cached it
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "optimal-win", "--target", "500")
    assert code == 0 and "ending last-round" in out and "P(tie)" in out
    code, out, _ = run(capsys, "solve", "farkle", "--policy", "optimal-win", "--target", "500",
                       "--ending", "first-to-bank")
    assert code == 0 and "ending first-to-bank" in out and "loaded from cache" in out


def test_policy_optimal_win_follows_the_ending(capsys):
    from dicelab.cli.render import decision_text
    from dicelab.farkle.solve import solve_optimal_win

    shown = set()
    for ending in ("last-round", "first-to-bank"):
        code, out, _ = run(capsys, "policy", "farkle", "optimal-win", "--target", "500",
                           "--me", "300", "--opp", "450", "--ending", ending)
        assert code == 0
        bank = solve_optimal_win(load_rules("default", ending), 500).bank_decisions(300, 450)
        assert decision_text(bank) in out
        assert out.startswith(f"optimal-win to 500 at 300 vs 450 (rules default, ending "
                              f"{ending})\n")
        shown.add(decision_text(bank))
    assert len(shown) == 2  # the endings' decisions differ here: the title tells them apart


@pytest.mark.parametrize(("argv", "ending"), [
    (["optimal-win", "--target", "300", "--me", "100", "--opp", "200"], "last-round"),
    (["optimal-win", "--target", "300", "--me", "100", "--opp", "200", "--ending",
      "first-to-bank"], "first-to-bank"),
    (["optimal-win", "--target", "300", "--rules", "facebook"], "first-to-bank"),
    (["optimal-win:vs=threshold-300", "--target", "300", "--ending", "first-to-bank"],
     "first-to-bank"),
    (["optimal-win:vs=threshold-300", "--target", "300", "--rules", "facebook", "--ending",
      "last-round"], "last-round"),
    (["max-ev"], None), (["fastest", "--target", "300"], None), (["threshold-300"], None),
    (["ai", "--rules", "facebook"], None),
])
def test_policy_view_names_the_ending_its_decisions_follow(capsys, monkeypatch, argv, ending):
    """optimal-win and its best responses decide by the ending rule (--ending, else the
    rules'): the title and the JSON name it; the other policies' decisions do not read
    it: their JSON's ending is null and their title names none."""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    d = _view(capsys, *argv)
    assert d["ending"] == ending
    if ending is None:
        assert "ending" not in d["title"]
    else:
        assert f", ending {ending})" in d["title"]


@pytest.mark.parametrize("argv,message", [
    (["--policy", "ai"], "simulate it"),
    (["--policy", "optimal-win", "--ending", "sudden"], "--ending must be one of"),
    (["--policy", "max-ev", "--rules", "nope"], "unknown Farkle rules"),
    (["--policy", "fastest", "--target", "1234"], "multiple of 50"),
    (["--policy", "threshold-30"], "positive multiple of 50"),
    (["--policy", "optimal"], "penta policy"),
])
def test_solve_bad_input_exits_2(capsys, argv, message):
    code, _, err = run(capsys, "solve", "farkle", *argv)
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(("argv", "refused"), [
    # max-ev maximises one turn's score: no target, no ending
    (["-p", "max-ev", "--target", "1000"], "--target is for fastest"),
    (["-p", "max-ev", "--target", "10000"], "--target is for fastest"),  # the default, given
    (["-p", "max-ev", "--ending", "last-round"], "--ending is for optimal-win"),
    (["-p", "max-ev"], None),
    (["-p", "max-ev", "--rules", "basic"], None),
    # the solitaire races read the target, not the ending rule
    (["-p", "threshold-300", "--target", "1000", "--ending", "first-to-bank"],
     "--ending is for optimal-win"),
    (["-p", "threshold-300", "--target", "1000"], None),
    (["-p", "fastest", "--target", "1000", "--ending", "last-round"],
     "--ending is for optimal-win"),
    (["-p", "fastest", "--target", "1000"], None),
    # two players read both
    (["-p", "optimal-win", "--target", "300", "--ending", "first-to-bank"], None),
    (["-p", "optimal-win:vs=threshold-300", "--target", "300", "--ending", "first-to-bank"],
     None),
])
def test_solve_refuses_an_option_its_policy_ignores(capsys, argv, refused):
    """An option the policy's solve does not read was accepted and silently ignored
    (max-ev --target, a solitaire race's --ending): one error line, before any work."""
    from dicelab import cache

    code, out, err = run(capsys, "solve", "farkle", *argv, "--json")
    if refused is None:
        assert code == 0 and json.loads(out)["policy"] == argv[1]
        return
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"error: {refused}") and argv[1] in err
    assert not cache.scan().entries  # nothing solved, nothing stored


def test_solve_policy_refuses_an_ignored_target_or_ending_as_the_command_does():
    from dicelab.errors import UserError
    from dicelab.farkle.exact import solve_policy

    with pytest.raises(UserError, match="--target is for fastest"):
        solve_policy("max-ev", target=1000)
    with pytest.raises(UserError, match="--ending is for optimal-win, not fastest"):
        solve_policy("fastest", target=1000, ending="first-to-bank")
    # the rules' own ending rule is no option: a solitaire solve takes it as it is
    table = load_rules("default", "first-to-bank")
    assert solve_policy("fastest", table, 1000).expected_turns_to_target > 1


@pytest.mark.parametrize(("argv", "refused"), [
    # max-ev and threshold-T decide by the turn alone: no target, no totals, no ending
    (["max-ev", "--target", "1000", "--me", "500", "--opp", "700"], "--target is for fastest"),
    (["max-ev", "--me", "0"], "--me is for fastest, optimal-win, ai and a bank rule"),
    (["max-ev", "--opp", "700"], "--opp is for optimal-win, ai and a bank rule"),
    (["max-ev", "--ending", "last-round"], "--ending is for optimal-win"),
    (["max-ev", "--my-farkles", "1", "--rules", "facebook"], None),
    (["threshold-300", "--target", "10000"], "--target is for fastest"),  # the default, given
    (["threshold-300", "--me", "500"], "--me is for"),
    (["threshold-300"], None),
    # ai reads the deficit, not the target; its last-round chase is not drawn
    (["ai", "--target", "1000", "--me", "500", "--opp", "3000"], "--target is for"),
    (["ai", "--me", "500", "--opp", "3000", "--ending", "first-to-bank"], "--ending is for"),
    (["ai", "--me", "500", "--opp", "3000"], None),
    # fastest races alone: its own total and the target, not the opponent's nor the ending
    (["fastest", "--target", "500", "--me", "100", "--opp", "200"], "--opp is for"),
    (["fastest", "--target", "500", "--ending", "first-to-bank"], "--ending is for"),
    (["fastest", "--target", "500", "--me", "100"], None),
    # two players read them all
    (["optimal-win", "--target", "300", "--me", "100", "--opp", "200", "--ending",
      "first-to-bank"], None),
])
def test_policy_refuses_an_option_its_decisions_ignore(capsys, tmp_path, argv, refused):
    """An option the policy's decisions do not read (max-ev --target --me --opp, fastest
    --opp, ai --target, --ending but for optimal-win) was accepted and silently ignored:
    one error line, before any work and before the picture is written."""
    from dicelab import cache

    png = tmp_path / "banks.png"
    code, out, err = run(capsys, "policy", "farkle", *argv, "--plot", str(png), "--json")
    if refused is None:
        d = json.loads(out)
        assert code == 0 and d["policy"] == argv[0] and png.exists()
        # the rules and the target it was drawn at (null: a target it does not read)
        rules = argv[argv.index("--rules") + 1] if "--rules" in argv else "default"
        assert d["game"] == "farkle" and d["rules"] == rules
        assert (d["target"] is None) == ("target" not in family_of(
            parse_policy(argv[0], "farkle")).picture_reads)
        return
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"error: {refused}") and f"not {argv[0]}:" in err
    assert not png.exists() and not cache.scan().entries  # nothing drawn, nothing solved


def test_policy_of_a_bank_rule_reads_target_and_totals_not_the_ending(capsys, tmp_path):
    """A bank rule's picture reads the target (it banks at the target) and both totals;
    the ending rule only in the last round, which it does not show."""
    (tmp_path / "mine.py").write_text(
        "from dicelab.farkle.policy import bank_rule\n\n\n@bank_rule\n"
        "def lead(my, opp, turn_points, dice_left):\n"
        "    return turn_points >= (300 if my >= opp else 600)\n\n\n"
        "@bank_rule\ndef never(my, opp, turn_points, dice_left):\n    return False\n")
    views = {}
    for name, argv in (("never", ["--target", "500"]), ("never", ["--target", "1000"]),
                       ("lead", ["--me", "0", "--opp", "0"]),
                       ("lead", ["--me", "0", "--opp", "500"])):
        d = _view(capsys, f"{tmp_path}/mine.py:{name}", *argv)
        views[(name, *argv)] = d["runs"]
    assert len({json.dumps(v) for v in views.values()}) == 4  # each option changes it
    code, out, err = run(capsys, "policy", "farkle", f"{tmp_path}/mine.py:lead", "--ending",
                         "first-to-bank")
    assert (code, out) == (2, "") and err.startswith("error: --ending is for optimal-win")


def test_bank_table_refuses_what_the_policy_does_not_read_as_the_command_does():
    from dicelab.errors import UserError
    from dicelab.farkle.policies import bank_table
    from dicelab.registry import parse_policy

    default = PRESETS["default"]
    with pytest.raises(UserError, match=r"--target is for fastest.* not max-ev"):
        bank_table(parse_policy("max-ev"), default, 1000)
    with pytest.raises(UserError, match=r"--me is for .* not threshold-300"):
        bank_table(parse_policy("threshold-300"), default, my_total=0)
    with pytest.raises(UserError, match=r"--opp is for .* not fastest"):
        bank_table(parse_policy("fastest"), default, 1000, 500, 300)
    # what each reads is taken
    assert bank_table(parse_policy("fastest"), default, 1000, 500)[1].startswith(
        "fastest to 1000 at own total 500")
    assert bank_table(parse_policy("ai"), default, None, 500, 3000)[1].startswith(
        "ai at 500 vs 3000")


def test_policy_text_table(capsys):
    code, out, _ = run(capsys, "policy", "farkle", "threshold-300")
    assert code == 0
    assert "50-250" in out and "300+" in out
    code, out, _ = run(capsys, "policy", "farkle", "fastest", "--target", "1000", "--me", "500")
    assert code == 0 and "fastest to 1000 at own total 500" in out


@pytest.mark.parametrize("rules", ["zilch", "default"])
def test_policy_max_ev_banks_where_solve_says(capsys, rules):
    """Under zilch six dice never lose, so max-ev never banks them: the policy view shows
    the solved decisions, not the table's edge past them."""
    code, out, _ = run(capsys, "solve", "farkle", "-p", "max-ev", "--rules", rules, "--json")
    assert code == 0
    solved = json.loads(out)["bank_thresholds"]
    code, out, _ = run(capsys, "policy", "farkle", "max-ev", "--rules", rules, "--json")
    assert code == 0 and json.loads(out)["bank_thresholds"] == solved
    assert (solved["6"] is None) == (rules == "zilch")


def test_solve_and_policy_name_the_banking_map_bank_thresholds(capsys):
    """``policy farkle`` called the map of dice left -> the turn points it banks from
    ``bank_from``, ``solve farkle`` ``bank_thresholds``: one name now, and no alias."""
    code, out, err = run(capsys, "solve", "farkle", "-p", "max-ev", "--json")
    assert code == 0, err
    solved = json.loads(out)
    code, out, err = run(capsys, "policy", "farkle", "max-ev", "--json")
    assert code == 0, err
    assert json.loads(out)["bank_thresholds"] == solved["bank_thresholds"]
    code, out, err = run(capsys, "policy", "farkle", "threshold-300", "--json")
    assert code == 0, err
    shown = json.loads(out)
    want = {str(n): 300 for n in range(1, 7)}
    assert shown["bank_thresholds"] == want
    for d in (solved, shown):
        assert not {k for k in d if "bank_from" in k}, sorted(d)


@pytest.mark.slow
def test_the_report_card_names_its_banking_maps_bank_thresholds(capsys, tmp_path):
    """``evaluate``'s maps were ``bank_from`` and ``optimal_bank_from``: now
    ``bank_thresholds`` and ``optimal_bank_thresholds``, in its JSON and its manifest."""
    code, out, err = run(capsys, "evaluate", "threshold-300", "--target", "200", "--json",
                         "--out", str(tmp_path / "o"))
    assert code == 0, err
    card = json.loads(out)
    want = {str(n): 300 for n in range(1, 7)}
    assert card["bank_thresholds"] == want
    assert set(card["optimal_bank_thresholds"]) == set(want)
    assert all(v is None or v % 50 == 0 for v in card["optimal_bank_thresholds"].values())
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["summary"]["bank_thresholds"] == want
    assert manifest["summary"]["optimal_bank_thresholds"] == card["optimal_bank_thresholds"]
    for d in (card, manifest["summary"]):
        assert not {k for k in d if "bank_from" in k}, sorted(d)


@pytest.mark.parametrize("target", [500, 1500, 2000, 5000])
def test_solve_fastest_lists_its_totals_in_order(capsys, target):
    code, out, _ = run(capsys, "solve", "farkle", "-p", "fastest", "--target", str(target),
                       "--json")
    assert code == 0
    totals = [int(t) for t in json.loads(out)["bank_thresholds"]]
    assert totals == sorted(set(totals)) and totals[0] == 0 and totals[-1] < target
    code, text, _ = run(capsys, "solve", "farkle", "-p", "fastest", "--target", str(target))
    rows = [int(line.split(":")[0]) for line in text.splitlines()
            if line.startswith("    ") and ":" in line]
    assert code == 0 and rows == totals


@pytest.mark.parametrize("threshold", [300, 10_000, 40_000])
def test_threshold_race_when_turns_rarely_bank(threshold):
    """Every bank reaches a target at or below the threshold, so the race takes 1 / P(bank)
    turns, also where P(bank) is far below the rounding of 1 - P(lost) (1e-20 at 40,000)."""
    d = solitaire.threshold_distribution(PRESETS["default"], threshold)
    turns = solitaire.race(PRESETS["default"], 300, solitaire.threshold_bank_table(threshold))
    assert turns[0, 0] == pytest.approx(1.0 / d.p_bank.sum(), rel=1e-12)


def test_threshold_race_that_never_banks_is_endless(capsys):
    code, out, _ = run(capsys, "solve", "farkle", "-p", "threshold-1000000", "--target",
                       "2000")
    assert code == 0 and "expected turns to target (2,000, solitaire): inf" in out


@pytest.mark.parametrize("command", [["solve", "farkle"], ["policy", "farkle"],
                                     ["advise", "farkle"], ["bust-risk"]])
def test_rules_help_names_every_preset(capsys, command):
    code, out, _ = run(capsys, *command, "--help")
    assert code == 0
    text = " ".join(out.split())
    assert f"Scoring preset ({', '.join(PRESETS)}) or TOML file." in text


def test_max_ev_refuses_a_table_too_large_for_memory(capsys, tmp_path, monkeypatch):
    """Only six 6s lose with six dice: banking is proven best only from 3.5 billion turn
    points, a table no machine holds. One error line, not a MemoryError."""
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "16GB")  # the same refusal on any machine
    path = tmp_path / "sixes.toml"
    path.write_text('singles = { 1 = 100, 2 = 50, 3 = 50, 4 = 50, 5 = 50 }\n'
                    'three-of-a-kind = { 6 = 0 }\nn-of-a-kind-mode = "none"\n')
    for argv in (["solve", "farkle", "-p", "max-ev"], ["policy", "farkle", "max-ev"],
                 ["advise", "farkle", "--roll", "1,2", "--turn-points", "300"]):
        code, out, err = run(capsys, *argv, "--rules", str(path))
        assert code == 2 and out == "" and err.startswith("error: max-ev under rules 'sixes'")
        assert "memory" in err and len(err.strip().splitlines()) == 1
    code, _, _ = run(capsys, "solve", "farkle", "-p", "max-ev", "--rules", "basic")
    assert code == 0


def test_policy_plot_writes_png(capsys, tmp_path):
    png = tmp_path / "maxev.png"
    code, out, _ = run(capsys, "policy", "farkle", "max-ev", "--plot", str(png))
    assert code == 0 and f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # with --json too: the picture is written and the JSON names it
    both = tmp_path / "both.png"
    code, out, _ = run(capsys, "policy", "farkle", "max-ev", "--plot", str(both), "--json")
    assert code == 0 and json.loads(out)["plot"] == str(both)
    assert both.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("argv,message", [
    (["max-ev", "--plot", "x.jpg"], ".png"),
    (["max-ev", "--plot", "/nonexistent/dir/x.png"], "does not exist"),
    (["fastest", "--target", "1000", "--me", "1000"], "--me"),
    (["fastest", "--me", "75"], "--me"),
])
def test_policy_bad_input_exits_2(capsys, argv, message):
    code, _, err = run(capsys, "policy", "farkle", *argv)
    assert code == 2 and message in err


def test_bust_risk_figure_draws_exact_and_simulated():
    exact = {n: float(set_asides(PRESETS["default"]).bust[n]) for n in range(1, 7)}
    sim = {1: Estimate(0.66, 0.01, 100), 2: (0.44, 0.43, 0.45), 3: 0.28}
    fig = bust_risk_figure(exact, sim)
    ax = fig.axes[0]
    heights = np.array([b.get_height() for b in ax.patches])
    np.testing.assert_allclose(heights, [100 * exact[n] for n in range(1, 7)])
    assert len(ax.get_legend().get_texts()) == 2


# --- `policy farkle` by runs of lost turns (--my-farkles, --opp-farkles) ------------------

FACEBOOK = PRESETS["facebook"]


def _view(capsys, *argv) -> dict:
    code, out, err = run(capsys, "policy", "farkle", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def _differs(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape != b.shape or not np.array_equal(a, b)


def test_policy_view_of_max_ev_and_fastest_by_runs_of_lost_turns(capsys, monkeypatch):
    """Under facebook the view at each run of lost turns is the solution's own decisions
    there (max-ev: one policy per run; fastest: per total and run, totals below zero), and
    a run changes the picture where the solution's decisions change."""
    from dicelab import config
    from dicelab.cli.render import decision_text
    from dicelab.farkle.policies import bank_table
    from dicelab.registry import parse_policy

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # the floor: two penalties
    mev = solitaire.solve_max_ev(FACEBOOK)
    views = [bank_table(parse_policy("max-ev"), FACEBOOK, my_farkles=s)[0] for s in range(3)]
    for s in range(3):
        np.testing.assert_array_equal(views[s], mev.bank[s, :mev.exact_rows])
    assert _differs(views[0], views[2]) and _differs(mev.bank[0], mev.bank[2])
    code, out, err = run(capsys, "policy", "farkle", "max-ev", "--rules", "facebook",
                         "--my-farkles", "2")
    assert code == 0 and err == ""
    assert out.startswith("max-ev after 2 lost turns in a row (rules facebook)\n")
    assert decision_text(views[2]) in out and decision_text(views[0]) not in out

    fast = solitaire.fastest_solution(FACEBOOK, 600)
    assert fast.floor_points == 1000
    changed = 0
    for total in (-1000, -500, 0, 550):
        for s in range(3):
            got, title = bank_table(parse_policy("fastest"), FACEBOOK, 600, total,
                                    my_farkles=s)
            np.testing.assert_array_equal(got, fast.bank_at(total, s))
            assert f"at own total {total} after {s} lost turn" in title
            changed += _differs(got, fast.bank_at(total, 0))
    assert changed  # some run of lost turns changes fastest's decisions (-500, 0: 1 and 2)
    d = _view(capsys, "fastest", "--rules", "facebook", "--target", "600", "--me", "-500",
              "--my-farkles", "1", "--opp-farkles", "2")
    assert (d["me"], d["my_farkles"], d["opp_farkles"]) == (-500, 1, 2)
    assert d["title"] == ("fastest to 600 at own total -500 after 1 lost turn in a row "
                          "(rules facebook; the opponent's lost turns do not change it); "
                          "totals down to -1,000")
    assert d["runs"] == solitaire.bank_runs(fast.bank_at(-500, 1))["runs"]
    assert d["runs"] != solitaire.bank_runs(fast.bank_at(-500, 0))["runs"]


def test_policy_view_of_optimal_win_by_both_runs_of_lost_turns(capsys, monkeypatch):
    """optimal-win under facebook to 600: the view at (me, opp, s, r) is the solution's
    bank_decisions there, each player's run changes it somewhere, and the command shows
    the same and names both runs."""
    from dicelab import config
    from dicelab.farkle.policies import bank_table
    from dicelab.farkle.solve import solve_optimal_win
    from dicelab.registry import parse_policy

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    sol = solve_optimal_win(FACEBOOK, 600)
    spec = parse_policy("optimal-win")
    mine = theirs = 0
    for me, opp in ((-500, 0), (-1000, 0), (0, -1000)):
        for s in range(3):
            for r in range(3):
                got, title = bank_table(spec, FACEBOOK, 600, me, opp, None, s, r)
                want = sol.bank_decisions(me, opp, s, r)
                np.testing.assert_array_equal(got, want)
                assert f"at {me} vs {opp}, lost turns in a row {s} vs {r}" in title
                mine += _differs(want, sol.bank_decisions(me, opp, 0, r))
                theirs += _differs(want, sol.bank_decisions(me, opp, s, 0))
    assert mine and theirs  # both runs change the decisions at these states
    d = _view(capsys, "optimal-win", "--rules", "facebook", "--target", "600", "--me", "-500",
              "--opp", "0", "--my-farkles", "2", "--opp-farkles", "1")
    assert (d["me"], d["opp"], d["my_farkles"], d["opp_farkles"]) == (-500, 0, 2, 1)
    assert d["title"] == ("optimal-win to 600 at -500 vs 0, lost turns in a row 2 vs 1 "
                          "(rules facebook, ending first-to-bank); totals down to -1,000")
    assert d["runs"] == solitaire.bank_runs(sol.bank_decisions(-500, 0, 2, 1))["runs"]
    assert d["runs"] != solitaire.bank_runs(sol.bank_decisions(-500, 0, 0, 0))["runs"]


def test_policy_view_of_a_best_response_by_runs_of_lost_turns(capsys, monkeypatch):
    """optimal-win:vs=P reads its own solution's decisions at each run of lost turns."""
    from dicelab import config
    from dicelab.farkle.builtin import best_response

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    br = best_response(FACEBOOK, 300, "threshold-300")
    argv = ["optimal-win:vs=threshold-300", "--rules", "facebook", "--target", "300",
            "--me", "-500", "--opp", "-1000"]
    plain = _view(capsys, *argv)
    for s in range(3):
        d = _view(capsys, *argv, "--my-farkles", str(s), "--opp-farkles", "1")
        want = br.bank_decisions(-500, -1000, s, 1)
        assert d["runs"] == solitaire.bank_runs(want)["runs"]
        assert f"lost turns in a row {s} vs 1" in d["title"]
        assert (d["runs"] != plain["runs"]) == _differs(want, br.bank_decisions(-500, -1000))
    assert d["runs"] != plain["runs"]  # two lost turns in a row change it here


def test_policy_view_of_policies_that_read_no_lost_turns(capsys, monkeypatch):
    """threshold-T, ai and a user's bank rule: the runs are accepted, the picture is the
    one at 0 and 0, and the title says the runs do not change it (not when none is given)."""
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    for name, totals in (("threshold-300", []), ("ai", ["--me", "-1000", "--opp", "900"]),
                         ("docs/examples/policies/farkle_rules.py:practical",
                          ["--me", "-1000", "--opp", "3000"])):
        plain = _view(capsys, name, "--rules", "facebook", *totals)
        assert "lost turns" not in plain["title"]
        for s, r in ((1, 0), (0, 2)):
            d = _view(capsys, name, "--rules", "facebook", *totals, "--my-farkles", str(s),
                      "--opp-farkles", str(r))
            assert d["runs"] == plain["runs"] and (d["my_farkles"], d["opp_farkles"]) == (s, r)
            assert "rules facebook; lost turns in a row do not change it" in d["title"]


def test_policy_view_runs_of_lost_turns_without_a_penalty_change_nothing(capsys):
    """As advise farkle: accepted, the decisions and the JSON those of 0, and a note."""
    argv = ["policy", "farkle", "optimal-win", "--target", "300", "--me", "100", "--opp",
            "200", "--json"]
    code, plain, err = run_cli(capsys, argv)
    assert code == 0 and err == ""
    for s, r in ((2, 0), (0, 1)):
        code, out, err = run_cli(capsys, [*argv, "--my-farkles", str(s), "--opp-farkles",
                                          str(r)])
        assert code == 0 and out == plain
        assert err == ("note: rules 'default' have no farkle penalty: turns lost in a row "
                       "do not change these decisions\n")


@pytest.mark.parametrize("argv,message", [
    (["max-ev", "--rules", "facebook", "--my-farkles", "3"], "--my-farkles"),
    (["max-ev", "--rules", "facebook", "--my-farkles", "-1"], "--my-farkles"),
    (["ai", "--rules", "facebook", "--opp-farkles", "3"], "--opp-farkles"),
    (["max-ev", "--my-farkles", "3"], "--my-farkles"),  # checked without a penalty too
    (["fastest", "--rules", "facebook", "--target", "600", "--me", "-1050"], "--me"),
    (["ai", "--rules", "facebook", "--opp", "-1050"], "--opp"),
    (["fastest", "--target", "600", "--me", "-50"], "--me"),  # no penalty: from 0
    (["fastest", "--rules", "facebook", "--target", "600", "--me", "-525"], "--me"),
])
def test_policy_view_refuses_runs_and_totals_out_of_range(capsys, monkeypatch, argv,
                                                          message):
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)  # facebook's floor: -1,000
    code, out, err = run(capsys, "policy", "farkle", *argv)
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize("argv", [
    ["max-ev", "--rules", "facebook", "--my-farkles", "2", "--opp-farkles", "2"],
    ["max-ev", "--rules", "facebook", "--my-farkles", "0"],
    ["fastest", "--rules", "facebook", "--target", "600", "--me", "-1000"],
    ["ai", "--rules", "facebook", "--opp", "-1000", "--me", "550"],
    ["fastest", "--target", "600", "--me", "0"],
])
def test_policy_view_takes_the_ends_of_the_ranges(capsys, monkeypatch, argv):
    from dicelab import config

    monkeypatch.setattr(config, "PENALTY_FLOOR_POINTS", 0)
    code, out, err = run(capsys, "policy", "farkle", *argv)
    assert code == 0 and err == "" and "(R = roll, B = bank)" in out


def test_solve_takes_the_floor_of_fastest_and_optimal_win(capsys, tmp_path):
    """``--floor`` sets how far below zero totals fall: the answers move by little under
    ``facebook`` and the floor is reported; a floor elsewhere is refused before any work."""
    base = ["solve", "farkle", "--target", "200", "--rules", "facebook", "--json"]
    for policy, key in (("fastest", "expected_turns_to_target"), ("optimal-win", "p_win")):
        code, out, err = run(capsys, *base, "-p", policy)
        assert code == 0, err
        default = json.loads(out)
        code, out, err = run(capsys, *base, "-p", policy, "--floor", "1500")
        assert code == 0, err
        d = json.loads(out)
        assert (default["floor_points"], d["floor_points"]) == (2000, 1500)
        assert d[key] != default[key] and d[key] == pytest.approx(default[key], rel=1e-4)
    no_penalty = tmp_path / "p.toml"
    no_penalty.write_text('base = "facebook"\nfarkle-penalty = 0\n')
    for argv, message in (
            (["-p", "max-ev"], "--floor is for fastest and optimal-win, not max-ev"),
            (["-p", "threshold-300", "--target", "200"], "not threshold-300"),
            (["-p", "ai", "--target", "200"], "not ai"),
            (["-p", "fastest", "--target", "200", "--rules", str(no_penalty)],
             "have no farkle penalty"),
    ):  # (max-ev reads no target: it is refused too)
        code, out, err = run(capsys, *base[:2], *base[4:], *argv, "--floor", "2000")
        assert (code, out) == (2, "") and err.startswith("error: ") and message in err, err
    for bad in ("950", "1025", "-50", "1000050"):  # under two penalties, off the grid, too deep
        code, out, err = run(capsys, *base, "-p", "fastest", "--floor", bad)
        assert (code, out) == (2, "") and "--floor must be a multiple of 50 in 1000..1000000" \
            in err and err.count("\n") == 1, err


def _fastest_at(rules):
    return solitaire.fastest_solution(rules, 200).bank_at(-1000, 1)


def _optimal_win_at(rules):
    from dicelab.farkle.solve import solve_optimal_win

    return solve_optimal_win(rules, 200).bank_decisions(-1000, 100, 1, 2)


@pytest.mark.parametrize("argv, bank_at", [
    (["fastest"], _fastest_at),
    # 5 s; its fast twin is fastest's view: the same --floor through Family.floor
    pytest.param(["optimal-win", "--opp", "100", "--opp-farkles", "2"], _optimal_win_at,
                 marks=pytest.mark.slow)])
def test_policy_view_takes_the_floor_of_fastest_and_optimal_win(capsys, tmp_path, argv,
                                                                bank_at):
    """``policy farkle --floor``: the decisions are those of the solve at that floor (where
    the floor changes them: a minimum of 500 to bank and a penalty of 500), the totals
    reach down to it and no further, and a floor elsewhere is refused."""
    from dicelab.farkle.rules import solver_floor

    path = tmp_path / "deep.toml"
    path.write_text('base = "facebook"\nmin-bank = 500\nfarkle-penalty = 500\n')
    rules = load_rules(str(path))
    base = ["policy", "farkle", "--target", "200", "--rules", str(path), "--json",
            "--me", "-1000", "--my-farkles", "1"]
    runs = []
    for floor in (1000, 1500):
        code, out, err = run(capsys, *base, *argv, "--floor", str(floor))
        assert code == 0, err
        d = json.loads(out)
        with solver_floor(floor):
            assert d["floor_points"] == floor and d["title"].endswith(f"down to -{floor:,}")
            assert d["runs"] == solitaire.bank_runs(bank_at(rules))["runs"]
        runs.append(d["runs"])
    assert runs[0] != runs[1]
    code, out, err = run(capsys, *base, *argv, "--floor", "1000", "--me", "-1050")
    assert (code, out) == (2, "") and "--me must be a multiple of 50 in -1000..150" in err
    solitaire_turn = ["policy", "farkle", "--rules", str(path), "--json"]  # no totals
    for given, more, message in (
            (solitaire_turn, ["max-ev"], "--floor is for fastest and optimal-win, not max-ev"),
            (base, ["fastest", "--rules", "default"], "have no farkle penalty"),
            (base, ["fastest", "--floor", "1025"], "--floor must be a multiple")):
        more = more if "--floor" in more else [*more, "--floor", "2000"]
        code, out, err = run(capsys, *given, *more)
        assert (code, out) == (2, "") and message in err and err.count("\n") == 1, err
