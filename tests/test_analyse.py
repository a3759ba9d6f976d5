"""Game analysis (dicelab.analyse, ``dicelab analyse``): an optimal player loses nothing,
scripted or random decisions lose exactly what the plain-Python references say
(tests/naive_penta, naive_farkle_dp, naive_two_player), and on every analysed game the
chain of values splits exactly: outcome - initial = luck + skill (+ opponents)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from functools import cache

import naive_farkle_dp as nfd
import naive_penta as npn
import naive_two_player as ntp
import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab.analyse import CLASS_NAMES, LOSS_CLASSES, analyse_games, analyse_logs, loss_class
from dicelab.farkle import solitaire
from dicelab.farkle.advise import advise, legal_setasides
from dicelab.farkle.rules import PRESETS, FarkleRules, dice_after
from dicelab.gamelog import new_game_header, parse_lines, write_games
from dicelab.logplay import play_games
from dicelab.penta.policies import Scorecard, rank_options

ONE = [{"name": "ann", "policy": "human"}]


def _games(played):
    """Replay (header, events) pairs as game records."""
    from dicelab.gamelog import format_games

    return parse_lines(format_games(played).splitlines(), "log.jsonl")


def _check_split(result):
    """The identity on every player of every game, and the signs of its parts."""
    p = result.players
    assert len(p)
    for r in p.itertuples():
        assert abs(r.outcome - r.initial - r.luck - r.skill - r.opponents) < 1e-9, r
        assert r.skill <= 1e-9 and r.opponents >= -1e-9
        assert r.total_loss == pytest.approx(-r.skill, abs=1e-9)
        assert r.doubtful + r.error + r.blunder <= r.decisions


# --- Penta ------------------------------------------------------------------------------------


def test_optimal_penta_loses_nothing_greedy_loses_what_rank_options_says():
    played = play_games("penta", ["optimal", "greedy"], games=2, seed=4)
    res = analyse_games(_games(played))
    _check_split(res)
    d = res.decisions
    assert (d[d["seat"] == 0]["loss"] == 0).all()
    assert (d[d["seat"] == 1]["loss"] > 0).sum() > 5
    assert res.players.iloc[0]["finished"]
    # the kernel's values are rank_options' (a sample of greedy's decisions)
    card = {}
    checked = 0
    for (_, events) in played[:1]:
        rows = d[(d["game"] == 0) & (d["seat"] == 1)].itertuples()
        for e in events:
            if e["seat"] != 1:
                continue
            sc = Scorecard(tuple(card.get(b) for b in npn.BOXES), card.get("_bonus", 0))
            for j, roll in enumerate(e["rolls"]):
                row = next(rows)
                left = 2 - j
                opts = rank_options(sc, roll, left, "seed", "optimal")
                assert row.value_best == pytest.approx(opts[0].expected_final_score, abs=1e-9)
                if j < len(e["keeps"]):
                    want = next(o for o in opts if o.kind == "keep"
                                and o.keep == tuple(sorted(e["keeps"][j])))
                else:
                    want = next(o for o in opts if o.kind == "box" and o.box == e["box"])
                assert row.value_chosen == pytest.approx(want.expected_final_score, abs=1e-9)
                assert row.loss == pytest.approx(want.loss, abs=1e-9)
                checked += 1
            scores, bonus = npn.allowed_scores("seed", card, e["rolls"][-1])
            card[e["box"]] = scores[e["box"]]
            card["_bonus"] = card.get("_bonus", 0) + (bonus > 0)
            card = {k: v for k, v in card.items()}
            if checked > 12:
                return


def _naive_turn(filled, future):
    """(value(roll, rerolls), keep_value(kept, rerolls), final(roll) -> {box: value}) of
    one turn by brute force, values = points from now on."""
    key = tuple(sorted(filled.items()))

    @cache
    def final(roll):
        scores, bonus = npn.allowed_scores("seed", dict(key), roll)
        out = {}
        for b, sc in scores.items():
            after = dict(key)
            after[b] = sc
            out[b] = npn.immediate_points(dict(key), b, sc, bonus) + future(after)
        return out

    @cache
    def value(roll, rerolls):
        if rerolls == 0:
            return max(final(roll).values())
        keeps = {tuple(sorted(d for d, p in zip(roll, pick, strict=True) if p))
                 for pick in itertools.product((0, 1), repeat=5)}
        return max(keep_value(k, rerolls) for k in keeps)

    @cache
    def keep_value(kept, rerolls):
        outs = list(itertools.product(range(1, 7), repeat=5 - len(kept)))
        return sum(value(tuple(sorted(kept + o)), rerolls - 1) for o in outs) / len(outs)

    return value, keep_value, final


def test_scripted_penta_decisions_on_a_nearly_full_card_lose_what_brute_force_says():
    first = [{"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [], "box": npn.BOXES[b]}
             for b in range(11)]
    turn12 = {"seat": 0, "rolls": [[6, 6, 6, 2, 1], [1, 3, 4, 5, 5], [5, 5, 2, 2, 6]],
              "keeps": [[1], [5, 5]], "box": "penta"}
    turn13 = {"seat": 0, "rolls": [[3, 3, 3, 3, 3]], "keeps": [], "box": "chance"}
    header = new_game_header("penta", "seed", ONE)
    res = analyse_games(_games([(header, [*first, turn12, turn13])]))
    _check_split(res)
    filled = {}
    for e in first:
        scores, _ = npn.allowed_scores("seed", filled, e["rolls"][0])
        filled[e["box"]] = scores[e["box"]]
    total = npn.card_total(filled, 0)

    @cache
    def last_turn(key):
        return npn.turn_value("seed", dict(key), lambda f: 0.0)

    value, keep_value, final = _naive_turn(filled, lambda a: last_turn(tuple(sorted(a.items()))))
    rows = res.decisions[res.decisions["turn"] == 12].reset_index()
    r1, r2, r3 = (tuple(sorted(r)) for r in turn12["rolls"])
    want = [(value(r1, 2), keep_value((1,), 2)), (value(r2, 1), keep_value((5, 5), 1)),
            (value(r3, 0), final(r3)["penta"])]
    for row, (best, chosen) in zip(rows.itertuples(), want, strict=True):
        assert row.value_best == pytest.approx(total + best, abs=1e-9)
        assert row.value_chosen == pytest.approx(total + chosen, abs=1e-9)
        assert row.loss == pytest.approx(best - chosen, abs=1e-9)
    assert rows.loc[0, "loss"] > 1  # keeping the 1 of 6 6 6 2 1
    assert res.players.iloc[0]["outcome"] == res.players.iloc[0]["initial"] + \
        res.players.iloc[0]["luck"] + res.players.iloc[0]["skill"] + \
        res.players.iloc[0]["residual"]


# --- Farkle -----------------------------------------------------------------------------------


def _random_farkle(rules, n_seats, target, seed, games=3, p_bank=0.4):
    """Games of seats that set aside a random legal set-aside and bank at random."""
    rng = np.random.default_rng(seed)
    out = []
    seats = [{"name": f"r{i}", "policy": "random"} for i in range(n_seats)]
    for g in range(games):
        header = new_game_header("farkle", rules, seats, target=target, first_seat=g % n_seats)
        totals, seat, trigger, events = [0] * n_seats, g % n_seats, None, []
        while True:
            n, tp, rolls, keeps, end = 6, 0, [], [], "bust"
            while True:
                roll = sorted(int(x) for x in rng.integers(1, 7, n))
                rolls.append(roll)
                opts = legal_setasides(rules, roll)
                if not opts:
                    break
                keep, pts = opts[int(rng.integers(len(opts)))]
                keeps.append(list(keep))
                tp += pts
                n = dice_after(n, len(keep))
                if rng.random() < p_bank or tp >= 2000:
                    end = "bank"
                    break
            events.append({"seat": seat, "rolls": rolls, "keeps": keeps, "end": end})
            if end == "bank":
                totals[seat] += tp
                if totals[seat] >= target and trigger is None:
                    if n_seats == 1 or rules.ending == "first-to-bank":
                        break
                    trigger = seat
            seat = (seat + 1) % n_seats
            if trigger is not None and seat == trigger:
                break
        out.append((header, events))
    return out


def test_max_ev_loses_nothing_and_random_play_loses_what_the_naive_recursion_says():
    rules = PRESETS["default"]
    res = analyse_games(_games(play_games("farkle", ["max-ev"], games=2, seed=3,
                                          target=1000)))
    _check_split(res)
    assert (res.decisions["loss"] == 0).all() and res.measure == {"farkle": "turn"}
    played = _random_farkle(rules, 1, 1000, seed=8)
    res = analyse_games(_games(played))
    _check_split(res)
    sol = solitaire.solve_max_ev(rules)
    states = nfd.max_ev_values("default", sol.cap, every=True)

    def roll_value(tp, n):
        return nfd.max_ev_roll_value("default", sol.cap, states, tp, n)

    rows = res.decisions.itertuples()
    checked = lost = 0
    for _, events in played:
        for e in events:
            tp = 0
            for k, keep in enumerate(e["keeps"]):
                row = next(rows)
                roll = e["rolls"][k]
                values = {}
                for kk, pts in legal_setasides(rules, roll):
                    left = dice_after(len(roll), len(kk))
                    values[(kk, "bank")] = tp + pts
                    values[(kk, "roll")] = roll_value(tp + pts, left)
                bank = k == len(e["keeps"]) - 1 and e["end"] == "bank"
                chosen = values[(tuple(sorted(keep)), "bank" if bank else "roll")]
                best = max(values.values())
                assert row.value_best == pytest.approx(best, rel=1e-12)
                assert row.value_chosen == pytest.approx(chosen, rel=1e-12)
                assert row.loss == pytest.approx(best - chosen, abs=1e-9)
                assert row.turn_points == tp and row.measure == "turn"
                tp += legal_setasides(rules, roll) and dict(legal_setasides(rules, roll))[
                    tuple(sorted(keep))]
                checked += 1
                lost += row.loss > 0
    assert checked > 10 and lost > 3


def _ones(ending="last-round"):
    """Only a single 1 scores (as in test_advise): the naive value iteration is quick."""
    return FarkleRules(name=f"ones-{ending}", singles=(0, 100, 0, 0, 0, 0, 0),
                       three_of_a_kind=(0,) * 7, n_of_a_kind_mode="none",
                       n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
                       four_and_pair_as_three_pairs=False, two_triplets=0, ending=ending)


@pytest.mark.parametrize(("ending", "cap"), [("last-round", 90), ("first-to-bank", None)])
def test_two_player_random_play_loses_what_the_value_iteration_says(ending, cap):
    table, target = _ones(ending), 400
    played = _random_farkle(table, 2, target, seed=21, games=4)
    res = analyse_games(_games(played))
    _check_split(res)
    assert res.measure == {"farkle": "win"}
    ref = ntp.solve(table, target, cap)

    def option(a, b, i, n, bank):
        v = ref.states[i * 7 + n, a, b, 0]
        margin = ref.bank_margin[i * 7 + n, a, b]
        if not np.isfinite(margin):
            return v
        return v + min(margin, 0.0) if bank else v - max(margin, 0.0)

    checked = lost = 0
    d = res.decisions
    for row in d.itertuples():
        if row.opp >= target:
            continue  # the last turn: checked in test_advise against naive LastRound
        roll = [int(x) for x in row.roll.split()]
        values = {}
        for kk, pts in legal_setasides(table, roll):
            i = (row.turn_points + pts) // 50
            left = dice_after(len(roll), len(kk))
            if row.me // 50 + i >= target // 50:
                continue  # banking reaches the target: the solver's last-round side
            values[(kk, "bank")] = option(row.me // 50, row.opp // 50, i, left, True)
            values[(kk, "roll")] = option(row.me // 50, row.opp // 50, i, left, False)
        if len(values) != 2 * len(legal_setasides(table, roll)):
            continue
        keep, _, action = row.chosen.partition(", ")
        chosen = values[(tuple(int(x) for x in keep.split()), action.split()[0])]
        best = max(values.values())
        assert row.value_best == pytest.approx(best, abs=1e-9)
        assert row.value_chosen == pytest.approx(chosen, abs=1e-9)
        assert row.loss == pytest.approx(best - chosen, abs=1e-9)
        checked += 1
        lost += row.loss > 0
    assert checked > 10 and lost > 3
    _self_play_loses_nothing(table, target, games=2)


def _self_play_loses_nothing(table, target: int, games: int) -> None:
    """optimal-win against itself: every decision is the best (loss 0), the split exact."""
    both = play_games("farkle", ["optimal-win", "optimal-win"], games=games, seed=2,
                      target=target, rules=table)
    res = analyse_games(_games(both))
    _check_split(res)
    assert (res.decisions["loss"] == 0).all()


def _ones_penalty():
    """:func:`_ones` with a penalty of 1,000 for three lost turns in a row (totals stop at
    the solvers' floor of -2,000)."""
    return dataclasses.replace(_ones(), name="ones-penalty", farkle_penalty=1000)


@pytest.mark.parametrize("measure", ["win", "turn"])
def test_under_a_farkle_penalty_the_values_follow_each_seats_lost_turns(measure):
    """Each decision is valued as advise values it with both runs of lost turns (the
    coach's values), the penalty's total after a third lost turn included; optimal-win
    self-play loses nothing and the split is exact. Under ``turn`` a player's outcome is
    the points banked less the penalties paid, the final total (it left the penalties
    out, and luck took them)."""
    table, target = _ones_penalty(), 400
    played = _random_farkle(table, 2, target, seed=21, games=3)
    games = _games(played)
    res = analyse_games(games, measure=measure)
    _check_split(res)
    if measure == "turn":
        finals = {(g.index, s): float(x) for g in games for s, x in enumerate(g.totals)}
        assert {(p.game, p.seat): p.outcome for p in res.players.itertuples()} == finals
        assert min(finals.values()) < 0  # a penalty was paid
    rows = res.decisions.itertuples()
    lost, streaks = [0, 0], 0
    for _, events in played:
        lost = [0, 0]
        for e in events:
            s = e["seat"]
            for k in range(len(e["keeps"])):
                row = next(rows)
                two = {"me": max(row.me, -2000), "opp": max(row.opp, -2000),
                       "target": target, "opp_farkles": lost[1 - s]} if measure == "win" \
                    else {}
                adv = advise(e["rolls"][k], turn_points=row.turn_points, rules=table,
                             my_farkles=lost[s], **two)
                assert row.value_best == pytest.approx(adv.options[0].value, abs=1e-12)
                streaks += lost[s] > 0
            lost[s] = 0 if e["end"] == "bank" else (lost[s] + 1) % 3
    assert next(rows, None) is None and streaks > 5
    assert (res.decisions["me"] < 0).any()  # a penalty was paid
    if measure == "win":
        _self_play_loses_nothing(table, target, games=3)


def test_totals_below_the_solvers_floor_are_read_at_the_floor():
    """Three penalties of 1,000 take both seats to -3,000, below the floor of -2,000: the
    game is analysed (valued at the floor), not refused."""
    table = _ones_penalty()
    bust = [[2, 2, 3, 4, 6, 6]]
    turns = [{"seat": s, "rolls": bust, "keeps": [], "end": "bust"} for _ in range(9)
             for s in (0, 1)]
    turns.append({"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": [[1]], "end": "bank"})
    header = new_game_header("farkle", table, [{"name": n, "policy": "human"} for n in "ab"],
                             target=400)
    (g,) = _games([(header, turns)])
    assert g.totals == [-2900, -3000]
    res = analyse_games([g])
    _check_split(res)
    (row,) = res.decisions.itertuples()
    assert (row.me, row.opp) == (-3000, -3000)
    at_floor = advise([1, 2, 3, 4, 6, 6], me=-2000, opp=-2000, target=400, rules=table)
    assert row.chosen == "1, bank" and row.loss > 0
    (bank,) = [o for o in at_floor.options if o.action == "bank"]
    assert row.value_chosen == pytest.approx(bank.value, abs=1e-12)


def test_optimal_win_self_play_to_1000_loses_nothing_and_the_app_ai_loses_some():
    played = play_games("farkle", ["optimal-win", "ai"], games=2, seed=6, target=1000)
    res = analyse_games(_games(played))
    _check_split(res)
    d = res.decisions
    assert (d[d["policy"] == "optimal-win"]["loss"] == 0).all()
    res_turn = analyse_games(_games(played), measure="turn")
    _check_split(res_turn)
    assert set(res_turn.players["opponents"]) == {0.0}


def test_loss_classes():
    for measure, bounds in LOSS_CLASSES.items():
        assert loss_class(0.0, measure) == ""
        for b, name in zip(bounds, CLASS_NAMES, strict=True):
            assert loss_class(b, measure) == name
            assert loss_class(b * 0.999, measure) != name


# --- the command ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    write_games(d / "penta.jsonl", play_games("penta", ["greedy"], games=2, seed=1))
    write_games(d / "farkle.jsonl", _random_farkle(PRESETS["default"], 1, 500, seed=1,
                                                   games=2))
    return d


def test_analyse_command_table_json_out_and_plot(logs, tmp_path, capsys):
    code, out, err = run_cli(capsys, ["analyse", str(logs / "penta.jsonl"),
                                      str(logs / "farkle.jsonl")])
    assert code == 0, err
    assert "penta" in out and "farkle" in out and "blunder" in out
    out_dir, png = tmp_path / "out", tmp_path / "v.png"
    code, out, err = run_cli(capsys, ["analyse", str(logs / "penta.jsonl"), "--json",
                                      "--out", str(out_dir), "--plot", str(png)])
    assert code == 0, err
    data = json.loads(out)
    assert data["games"] == 2 and data["measure"] == {"penta": "score"}
    assert data["players"][0]["policy"] == "greedy"
    import pandas as pd

    dec = pd.read_parquet(out_dir / "decisions.parquet")
    players = pd.read_parquet(out_dir / "summary.parquet")
    assert len(players) == 2 and len(dec) == players["decisions"].sum()
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["command"][:2] == ["dicelab", "analyse"]
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_analyse_plot_goes_in_the_folder_out_creates(logs, tmp_path, capsys):
    out_dir = tmp_path / "a"
    code, _, err = run_cli(capsys, ["analyse", str(logs / "penta.jsonl"), "--out",
                                    str(out_dir), "--plot", str(out_dir / "v.png")])
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "decisions.parquet", "manifest.json", "summary.parquet", "v.png"]


@pytest.mark.parametrize(("content", "args", "words"), [
    ('{"dicelab_log": 1, "game": "penta", "rules": "seed", "seats": [{"name": "a", '
     '"policy": "p"}]}\n{"seat": 0, "rolls": [[1, 2', [], [":2:", "not valid JSON"]),
    (None, ["--game", "farkle"], [":1:", "field 'game'", "not of farkle"]),
    (None, ["--game", "penta", "--rules", "hasbro"], [":1:", "field 'rules'"]),
    ('{"dicelab_log": 1, "game": "farkle", "rules": "default", "target": 500, "seats": '
     '[{"name": "a", "policy": "p"}]}\n{"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], '
     '"keeps": [[1, 6]], "end": "bank"}', [], [":2:", "field 'keeps[0]'", "cannot all score"]),
    ('{"dicelab_log": 1, "game": "penta", "rules": "seed", "seats": [{"name": "a", '
     '"policy": "p"}]}\n{"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [], "box": "ones"}'
     '\n{"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [], "box": "ones"}', [],
     [":3:", "field 'box'", "already filled"]),
    ("", ["--measure", "win"], ["--measure is for Farkle; judge Penta decisions with "
                                "--objective (mean, at-least:T, utility:theta=X, beat:N, "
                                "win-share)"]),
])
def test_bad_logs_exit_2_with_one_line_and_write_nothing(logs, tmp_path, capsys, content,
                                                          args, words):
    path = logs / "penta.jsonl"
    if content:
        path = tmp_path / "bad.jsonl"
        path.write_text(content)
    out_dir, png = tmp_path / "out", tmp_path / "v.png"
    code, out, err = run_cli(capsys, ["analyse", str(path), *args, "--out", str(out_dir),
                                      "--plot", str(png)])
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err
    assert not png.exists() and not list(out_dir.glob("*"))


STOPPED_AT_ONCE = {  # a game stopped during its first turn, as `dicelab play` logs it
    "penta": '{"dicelab_log": 1, "game": "penta", "rules": "seed", "seats": [{"name": "a", '
             '"policy": "human"}]}\n{"seat": 0, "rolls": [[3, 4, 5, 6, 1]], "keeps": []}\n',
    "farkle": '{"dicelab_log": 1, "game": "farkle", "rules": "default", "target": 500, '
              '"seats": [{"name": "a", "policy": "human"}]}\n'
              '{"seat": 0, "rolls": [[1, 2, 3, 4, 6, 6]], "keeps": []}\n'}


@pytest.mark.parametrize(("game", "args", "measure"), [
    ("penta", [], "score"), ("penta", ["--objective", "at-least:300"], "at-least:300"),
    ("penta", ["--objective", "mean"], "score"), ("farkle", [], "turn"),
    ("farkle-two-seats", [], "win")])
def test_a_log_without_a_finished_turn_has_nothing_to_review(tmp_path, capsys, game, args,
                                                             measure):
    """A Penta log of a game stopped in its first turn is reviewed as a Farkle one is:
    nothing to review, exit 0 (it was the error "unknown objective ''"). Nothing is solved
    for it: a two-seat Farkle game to a target no solve could reach is reviewed too (it
    was refused as the solve's memory)."""
    path = tmp_path / "stopped.jsonl"
    text = STOPPED_AT_ONCE[game.split("-")[0]]
    if game == "farkle-two-seats":
        text = text.replace('"target": 500', f'"target": {10 ** 30}').replace(
            '"policy": "human"}', '"policy": "human"}, {"name": "b", "policy": "ai"}')
        game = "farkle"
    path.write_text(text)
    code, out, err = run_cli(capsys, ["analyse", str(path), *args])
    assert code == 0 and err == "" and out == f"{game}: no finished turn to review\n"
    png = tmp_path / "value.png"  # nothing to draw: not said to be saved
    code, out, err = run_cli(capsys, ["analyse", str(path), *args, "--plot", str(png)])
    assert code == 0 and out == f"{game}: no finished turn to review\n"
    assert err == f"note: nothing to plot (no finished turn): {png} not written\n"
    assert not png.exists()
    code, out, err = run_cli(capsys, ["analyse", str(path), *args, "--json"])
    d = json.loads(out)
    assert code == 0 and d["measure"] == {game: measure} and d["decisions"] == []


def test_a_two_seat_game_too_large_to_solve_names_its_target(tmp_path, capsys):
    """A finished turn of a two-seat game to a target no solve can hold: one error line
    that names the header's target with its rules (the solve refused is the target's)."""
    path = tmp_path / "huge.jsonl"
    path.write_text(
        '{"dicelab_log": 1, "game": "farkle", "rules": "default", "target": 100000000, '
        '"seats": [{"name": "a", "policy": "human"}, {"name": "b", "policy": "ai"}]}\n'
        '{"seat": 0, "rolls": [[1, 1, 5, 2, 3, 4]], "keeps": [[1, 1]], "end": "bank"}\n')
    code, out, err = run_cli(capsys, ["analyse", str(path)])
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert err.startswith(f"error: {path}:1: fields 'rules' and 'target': ")
    code, out, err = run_cli(capsys, ["analyse", str(path), "--measure", "turn"])
    assert code == 0, err  # the turn measure solves no game: reviewed


def test_an_unreadable_log(tmp_path, capsys):
    for path in (tmp_path / "missing.jsonl", tmp_path):
        code, _, err = run_cli(capsys, ["analyse", str(path)])
        assert code == 2 and err.startswith(f"error: {path}") and err.count("\n") == 1


def test_a_log_given_twice_is_refused_before_any_is_read(logs, tmp_path, capsys):
    """The same file twice, or a link to it beside it, would count its games twice: one
    line, exit 2, nothing written; two copies of it are two logs."""
    log = logs / "farkle.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    out = tmp_path / "never"
    for twice in ([log, log], [log, link], [tmp_path / "missing.jsonl", link, log]):
        code, text, err = run_cli(capsys, ["analyse", *map(str, twice), "--out", str(out)])
        assert code == 2 and text == "" and not out.exists()
        assert err == f"error: {twice[-1]} is the same log as {twice[-2]}: give each log " \
                      "once\n"
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(log.read_bytes())
    assert analyse_logs([log, copy]).n_games == 2 * analyse_logs([log]).n_games


@pytest.mark.parametrize("other_seats", [1, 3])
def test_two_seat_games_and_others_valued_in_turn_points_are_one_measure_or_refused(
        tmp_path, capsys, other_seats):
    """Two-seat games are valued in P(win), the others (one seat, three or more) in turn
    points: a mix is refused, saying which is which, unless --measure turn values all."""
    two, other = tmp_path / "two.jsonl", tmp_path / "other.jsonl"
    write_games(two, _random_farkle(PRESETS["default"], 2, 500, seed=1, games=1))
    write_games(other, _random_farkle(PRESETS["default"], other_seats, 500, seed=2, games=1))
    code, out, err = run_cli(capsys, ["analyse", str(two), str(other)])
    assert (code, out) == (2, "") and err == (
        "error: these logs mix two-seat Farkle games (valued in P(win)) with games of one "
        "seat or of three or more (valued in turn points): give --measure turn to value "
        "them all in turn points\n")
    code, out, err = run_cli(capsys, ["analyse", str(two), str(other), "--measure", "turn"])
    assert code == 0, err


def test_analyse_logs_reads_files(logs):
    res = analyse_logs([logs / "penta.jsonl", logs / "farkle.jsonl"])
    assert res.n_games == 4 and set(res.measure) == {"penta", "farkle"}
    _check_split(res)


def test_one_file_of_both_games_names_each_games_count(logs, tmp_path, capsys):
    both = tmp_path / "both.jsonl"
    both.write_text((logs / "farkle.jsonl").read_text() + (logs / "penta.jsonl").read_text())
    code, out, err = run_cli(capsys, ["analyse", str(both)])
    assert code == 0, err
    assert "farkle: 2 games, losses in" in out and "penta: 2 games, losses in" in out
    assert "game(s)" not in out
    res = analyse_logs([both])
    assert (res.games_of("farkle"), res.games_of("penta"), res.n_games) == (2, 2, 4)


def test_the_costliest_decisions_of_several_logs_name_their_log(logs, tmp_path, capsys,
                                                                monkeypatch):
    """Each log counts its games from 0: with several logs a row of the table says whose
    game it is (the log as given, printed as it stands, brackets too), as the JSON's
    ``log``; with one log the table has no log column."""
    from glossary_checks import capture_tables

    from dicelab.cli import render

    other = tmp_path / "[b]other.jsonl"  # rich markup, were it read as such
    write_games(other, _random_farkle(PRESETS["default"], 1, 500, seed=2, games=2))
    first = str(logs / "farkle.jsonl")
    monkeypatch.setattr(render.console, "width", 400)  # every table printed as it is
    printed = capture_tables(monkeypatch)
    code, out, err = run_cli(capsys, ["analyse", first, str(other), "--measure", "turn"])
    assert code == 0, err
    table = printed[0]
    assert "costliest decisions" in str(table.title)
    assert [c.header for c in table.columns][:3] == ["log", "game", "seat"]
    rows = list(zip(*(map(str, c.cells) for c in table.columns[:2]), strict=True))
    assert {log for log, _ in rows} == {first, str(other)}  # both logs lose somewhere
    assert str(other) in out
    code, data, _ = run_cli(capsys, ["analyse", first, str(other), "--measure", "turn",
                                     "--json"])
    losing = [d for d in json.loads(data)["decisions"] if d["loss"] > 0]
    assert set(rows) <= {(d["log"], str(d["game"])) for d in losing}
    printed.clear()
    code, out, err = run_cli(capsys, ["analyse", first, "--measure", "turn"])
    assert code == 0, err
    assert [c.header for c in printed[0].columns][:2] == ["game", "seat"]


def test_a_sum_rounded_to_zero_is_shown_as_0_00_not_minus_0_00(logs, capsys, monkeypatch):
    """A skill of -1e-19 (a tie within rounding) reads 0.00 in the luck/skill table, as
    the zero loss beside it; a real -0.01 keeps its sign."""
    from dicelab.analyse import AnalysisResult
    from dicelab.cli import render

    res = analyse_logs([logs / "penta.jsonl"])
    rows = res.summary()
    assert len(rows) == 1
    tiny = [{**rows[0], "skill": -1e-19, "luck": -0.004, "opponents": 0.0,
             "outcome": -0.0}]
    monkeypatch.setattr(AnalysisResult, "summary", lambda self: tiny)
    render.game_analysis(res)
    out = capsys.readouterr().out
    assert "-0.00" not in out
    split = out[out.index("luck and skill"):]
    assert split.count("0.00") >= 3  # luck, skill and outcome
    tiny[0]["skill"] = -0.0051
    render.game_analysis(res)
    assert "-0.01" in capsys.readouterr().out


def test_no_number_or_name_is_cut_at_any_terminal_width(logs, capsys, monkeypatch):
    """Large totals under the turn measure, at 40 columns and at 200: every figure of the
    summary appears whole."""
    from dicelab.cli import render

    res = analyse_logs([logs / "farkle.jsonl"], measure="turn")
    figures = [f"{r[k]:,.2f}" for r in res.summary() for k in ("initial", "outcome",
                                                                 "luck", "skill")]
    assert any(abs(float(f.replace(",", ""))) >= 1000 for f in figures)
    for width in (40, 200):
        monkeypatch.setattr(render.console, "width", width)
        code, out, err = run_cli(capsys, ["analyse", str(logs / "farkle.jsonl"),
                                          "--measure", "turn"])
        assert code == 0, err
        assert "…" not in out
        for f in figures:
            assert f in out, (width, f)


def test_the_value_trace_under_the_turn_measure_ends_at_the_points_banked(tmp_path):
    from dicelab.analyse import TRACE_LABELS, player_label

    played = play_games("farkle", ["ai", "threshold-300"], games=1, seed=3, target=2000)
    res = analyse_games(_games(played), measure="turn")
    _check_split(res)
    for (_, _, seat), trace in res.traces.items():
        row = res.players[res.players["seat"] == seat].iloc[0]
        assert trace[-1] == pytest.approx(row["outcome"])  # banked, counted once
    (fig,) = res.figures().values()
    ax = fig.axes[0]
    assert ax.get_ylabel() == TRACE_LABELS["turn"] == "banked + expected turn score (points)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["seat 0 (ai)", "seat 1 (threshold-300)"]
    assert player_label("Computer (ai)", "ai") == "Computer (ai)"
    assert player_label("You", "human") == "You"


@pytest.mark.parametrize("measures", [("win-share", "score"), ("score", "score"),
                                      ("at-least:300", "score"), ("win", "win")])
def test_the_value_figure_draws_each_unit_on_its_own_axis(measures):
    """Seats judged by different measures (penta-win in win share, optimal in points) are
    not drawn on one axis, where the win share is a flat line at 0: one panel a unit, each
    labelled with its unit; seats judged alike share one panel."""
    import pandas as pd

    from dicelab.analyse import TRACE_LABELS, AnalysisResult, unit_of

    players = pd.DataFrame({"log": "g.jsonl", "game": 0, "seat": [0, 1],
                            "player": ["seat 0", "seat 1"], "policy": ["a", "b"],
                            "game_kind": "penta", "measure": list(measures)})
    traces = {("g.jsonl", 0, 0): [0.5, 0.6, 1.0], ("g.jsonl", 0, 1): [254.5, 240.0, 212.0]}
    result = AnalysisResult(["g.jsonl"], {"penta": ", ".join(dict.fromkeys(measures))}, None,
                            players, traces)
    axes = result.figures()["value.png"].axes
    units = list(dict.fromkeys(TRACE_LABELS.get(m, unit_of(m)) for m in measures))
    assert [" ".join(ax.get_ylabel().split()) for ax in axes] == units
    assert [[line.get_label() for line in ax.get_lines()] for ax in axes] == (
        [["seat 0 (a)", "seat 1 (b)"]] if len(units) == 1 else [["seat 0 (a)"], ["seat 1 (b)"]])


def _games_of(path) -> list[list[str]]:
    """The lines of each game of a log."""
    games: list[list[str]] = []
    for line in path.read_text().splitlines():
        if line.startswith('{"dicelab_log"'):
            games.append([])
        games[-1].append(line)
    return games


def test_the_games_keep_the_order_given_whatever_their_game(logs, tmp_path, capsys):
    """A Farkle log given before a Penta log comes first everywhere (it came after: the
    Penta games were analysed first): in --json, the files, the printed sections and
    the figure, whose game is the first log's first game; and games of both in one file
    keep the file's order."""
    import pandas as pd

    farkle, penta = str(logs / "farkle.jsonl"), str(logs / "penta.jsonl")
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, ["analyse", farkle, penta, "--json", "--out",
                                      str(out_dir)])
    assert code == 0, err
    d = json.loads(out)
    given = [(farkle, 0), (farkle, 1), (penta, 0), (penta, 1)]
    assert d["logs"] == [farkle, penta]
    assert list(d["measure"]) == list(d["units"]) == ["farkle", "penta"]
    assert [r["game"] for r in d["players"]] == ["farkle", "penta"]
    assert [(r["log"], r["game"]) for r in d["per_game"]] == given
    assert list(dict.fromkeys((r["log"], r["game"]) for r in d["decisions"])) == given
    players = pd.read_parquet(out_dir / "summary.parquet")
    assert list(zip(players["log"], players["game"], strict=True)) == given
    dec = pd.read_parquet(out_dir / "decisions.parquet")
    assert list(dict.fromkeys(zip(dec["log"], dec["game"], strict=True))) == given
    code, out, err = run_cli(capsys, ["analyse", farkle, penta])
    assert code == 0, err
    assert -1 < out.index("farkle: ") < out.index("penta: ")
    (fig,) = analyse_logs([farkle, penta]).figures().values()
    assert fig.axes[0].get_title() == f"{farkle}, game 0"
    (fig,) = analyse_logs([penta, farkle]).figures().values()
    assert fig.axes[0].get_title() == f"{penta}, game 0"
    # one file: Farkle, Penta, Farkle, Penta
    f_games, p_games = _games_of(logs / "farkle.jsonl"), _games_of(logs / "penta.jsonl")
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(f_games[0] + p_games[0] + f_games[1] + p_games[1]) + "\n")
    res = analyse_logs([both])
    assert list(res.players["game"]) == [0, 1, 2, 3]
    assert list(res.players["game_kind"]) == ["farkle", "penta", "farkle", "penta"]
    assert list(dict.fromkeys(res.decisions["game"])) == [0, 1, 2, 3]
    assert list(res.measure) == ["farkle", "penta"]
    _check_split(res)


def test_an_unfinished_games_outcome_is_marked_as_an_estimate(logs, tmp_path, capsys):
    """A game that stopped before its end has no final TOTAL or result: its players'
    outcome is the value of their last position, marked ``outcome_estimated`` (per game;
    a count per player) and said under the tables, which read it as a final TOTAL. Not
    so under Farkle ``turn``, whose points banked are known."""
    from glossary_checks import check_keys

    from dicelab.gamelog import read_games

    p_games = _games_of(logs / "penta.jsonl")
    stopped = tmp_path / "stopped.jsonl"  # game 0 stops after 5 turns, game 1 is whole
    stopped.write_text("\n".join(p_games[0][:6] + p_games[1]) + "\n")
    res = analyse_logs([stopped])
    _check_split(res)
    p = res.players
    assert list(p["finished"]) == [False, True]
    assert list(p["outcome_estimated"]) == [True, False]
    final = read_games(stopped)[1].totals[0]
    assert p["outcome"].iloc[1] == final
    assert p["outcome"].iloc[0] != int(p["outcome"].iloc[0])  # an expected TOTAL
    assert [r["outcome_estimated"] for r in res.summary()] == [1]
    two = _random_farkle(PRESETS["default"], 2, 500, seed=1, games=1)
    (header, events), = two
    farkle2 = tmp_path / "farkle2.jsonl"
    write_games(farkle2, [(header, events[:3])])
    one = _random_farkle(PRESETS["default"], 1, 500, seed=1, games=1)
    (header, events), = one
    farkle1 = tmp_path / "farkle1.jsonl"
    write_games(farkle1, [(header, events[:2])])
    res = analyse_logs([farkle2])
    assert list(res.players["outcome_estimated"]) == [True, True]
    assert not res.players["finished"].any()
    res = analyse_logs([farkle1], measure="turn")
    assert list(res.players["finished"]) == [False]
    assert list(res.players["outcome_estimated"]) == [False]
    note = ("note: {} stopped before {} end: the outcome of {} players is the value of "
            "their last position, an estimate, not a final result (outcome_estimated in "
            "--json and summary.parquet)\n")
    for argv, said in (([stopped], note.format("1 game", "its", "its")),
                       ([stopped, farkle2], note.format("2 games", "their", "their")),
                       ([logs / "penta.jsonl"], ""), ([farkle1, "--measure", "turn"], "")):
        code, out, err = run_cli(capsys, ["analyse", *map(str, argv)])
        assert (code, err) == (0, said), err
        # and under the luck-and-skill table
        assert ("outcome of a game stopped early: the value of its last position, an "
                "estimate" in " ".join(out.split())) == bool(said)
    code, out, err = run_cli(capsys, ["analyse", str(stopped), str(farkle2), "--json"])
    assert code == 0 and err == ""
    d = json.loads(out)
    check_keys(d, "analyse of unfinished games")
    assert [r["outcome_estimated"] for r in d["per_game"]] == [True, False, True, True]
    assert [r["outcome_estimated"] for r in d["players"]] == [1, 1, 1]
