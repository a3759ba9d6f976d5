"""Penta simulation: scripted games against a plain-Python game, agreement with the exact
optimum, reproducibility, the result's shape, CLI behaviour."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_helpers import run_cli
from naive_penta import BOXES, RULES, ScriptExhausted, play_game, winners
from numba_threads import with_threads

from dicelab import config, dice, seeding
from dicelab.cli.main import main
from dicelab.errors import UserError
from dicelab.penta.policies import POLICIES, Scorecard, decision_tables
from dicelab.penta.rules import BOX_NAMES
from dicelab.penta.simulate import MAX_TOTAL, play_scripted, simulate_penta
from dicelab.penta.solver import solve
from dicelab.penta.tables import roll_index
from dicelab.simulate import simulate
from dicelab.stats import Estimate, Proportion

#: Faces a game can read: 13 turns of three rolls of five dice.
GAME_FACES = 13 * 15


def _identities(r, s):
    """TOTAL = boxes + 35 x upper bonuses + 100 x Penta bonuses, exactly, in integers."""
    totals = int((r.hist[s] * np.arange(MAX_TOTAL + 1)).sum())
    assert r.hist[s].sum() == r.games
    assert totals == int(r.box_sum[s].sum()) + 35 * int(r.upper_bonus[s]) \
        + 100 * int(r.bonus_sum[s])


# --- scripted dice: the kernel's games against the plain-Python game ----------------------


def _script(rng, sticky: bool) -> np.ndarray:
    """Faces for one game; ``sticky`` repeats the last face with probability 0.85, so most
    rolls are Pentas or near ones (the joker and the bonuses come up again and again)."""
    faces = rng.integers(1, 7, GAME_FACES)
    if sticky:
        for i in range(1, GAME_FACES):
            if rng.random() < 0.85:
                faces[i] = faces[i - 1]
    return faces


def _decider(tables, policy: str):
    """The reference's callback: the policy's decisions, read from the tables in Python."""
    p = tables.policies.index(policy)

    def decide(filled, roll, rerolls_left):
        card = Scorecard(tuple(filled.get(b) for b in BOX_NAMES))
        i, r = int(tables.slot[card.state]), roll_index(roll)
        if rerolls_left == 2:
            return dice.dice_of_rank(tables.keep2(p, i, r))
        if rerolls_left == 1:
            return dice.dice_of_rank(tables.keep1(p, i, r))
        return BOX_NAMES[tables.box(p, i, r)]
    return decide


def _reference_books(rules, seats, scripts):
    """What the kernel should book for these games, and each game, from the reference."""
    tables = decision_tables(tuple(dict.fromkeys(seats)), rules)
    S, G = len(seats), len(scripts[0])
    books = {"hist": np.zeros((S, MAX_TOTAL + 1), np.int64),
             "box_sum": np.zeros((S, 13), np.int64), "box_sq": np.zeros((S, 13), np.int64),
             **{k: np.zeros(S, np.int64) for k in ("upper_bonus", "fifty", "bonus_sum",
                                                  "bonus_sq", "illegal", "wins", "tied")},
             "ties": np.zeros(1, np.int64)}
    games = [[play_game(rules, scripts[s][g], _decider(tables, seats[s])) for g in range(G)]
             for s in range(S)]
    for s in range(S):
        for game in games[s]:
            books["hist"][s, game["total"]] += 1
            for b, name in enumerate(BOXES):
                books["box_sum"][s, b] += game["filled"][name]
                books["box_sq"][s, b] += game["filled"][name] ** 2
            books["upper_bonus"][s] += game["upper_bonus"]
            books["fifty"][s] += game["filled"]["penta"] == 50
            books["bonus_sum"][s] += game["bonuses"]
            books["bonus_sq"][s] += game["bonuses"] ** 2
    if S > 1:
        for g in range(G):
            top = winners([games[s][g]["total"] for s in range(S)])
            for s in top:
                books["wins" if len(top) == 1 else "tied"][s] += 1
            books["ties"][0] += len(top) > 1
    return books, games


@pytest.mark.parametrize("rules", [
    # free-joker and no-bonus build decision blocks no other test shares
    pytest.param(r, marks=pytest.mark.slow) if r in ("free-joker", "no-bonus") else r
    for r in RULES])
@pytest.mark.slow
def test_scripted_games_are_the_plain_python_games(rules):
    # optimal and greedy seats on random and on Penta-heavy dice; seats 1 and 2 (both
    # greedy) get the same dice in every third game: the same game, so a tie or a loss
    rng = np.random.default_rng(sum(map(ord, rules)))
    seats = ["optimal", "greedy", "greedy"]
    games = 90
    scripts = [[_script(rng, sticky=g % 2 == 1) for g in range(games)] for _ in seats]
    for g in range(0, games, 3):
        scripts[2][g] = scripts[1][g].copy()
    got = play_scripted(seats, scripts, rules)
    assert got.complete
    want, ref_games = _reference_books(rules, seats, scripts)
    for name, a in want.items():
        np.testing.assert_array_equal(got.tallies[name], a, err_msg=name)
    for s in range(len(seats)):
        assert got.totals[s].tolist() == [game["total"] for game in ref_games[s]]
        assert got.faces_used[s].tolist() == [game["faces_used"] for game in ref_games[s]]
    # the dice exercised what they were meant to
    jokers = {case for per_seat in ref_games for game in per_seat for case in game["jokers"]}
    if rules == "no-bonus":
        assert not jokers and not want["bonus_sum"].any()
    else:
        assert want["bonus_sum"].min() > 0
        assert jokers >= ({"free"} if rules == "free-joker" else {"upper", "lower"})
    assert (got.totals[1, ::3] == got.totals[2, ::3]).all() and want["ties"][0] > 0
    assert want["wins"].sum() + want["ties"][0] == games


@pytest.mark.parametrize(("rules", "policies"), [
    ("seed", POLICIES),
    # hasbro's joker rules in the kernel's booking: greedy's table; the optimal table's
    # booking is the same code, played under seed above. 8 s (a block no other fast test
    # builds); fast twins: seed above (the kernel's booking, jokers and bonuses) and
    # test_penta_rules' every box of every roll under hasbro (the kernel's scorer,
    # roll_box_scores, against the plain-Python rules)
    pytest.param("hasbro", ("greedy",), marks=pytest.mark.slow),
    pytest.param("hasbro", ("optimal",), marks=pytest.mark.slow)],
    ids=["seed", "hasbro-greedy", "hasbro-optimal"])
def test_one_scripted_game_books_its_card_box_by_box(rules, policies):
    rng = np.random.default_rng(4)
    tables = decision_tables(policies, rules)
    for policy in policies:
        for sticky in (False, True):
            faces = _script(rng, sticky)
            game = play_game(rules, faces, _decider(tables, policy))
            got = play_scripted([policy], [[faces]], rules).tallies
            assert got["box_sum"][0].tolist() == [game["filled"][b] for b in BOXES]
            assert got["bonus_sum"][0] == game["bonuses"]
            assert got["upper_bonus"][0] == game["upper_bonus"]
            assert got["hist"][0, game["total"]] == 1


def test_a_script_that_runs_out_is_reported_not_a_crash():
    rng = np.random.default_rng(8)
    full = _script(rng, sticky=False)
    got = play_scripted(["greedy"], [[full[:7], full, full[:0]]], "seed")
    assert got.exhausted.tolist() == [[True, False, True]] and not got.complete
    assert got.faces_used[0, 0] <= 7 and got.faces_used[0, 2] == 0
    tables = decision_tables("greedy", "seed")
    assert got.totals[0, 1] == play_game("seed", full, _decider(tables, "greedy"))["total"]
    with pytest.raises(ScriptExhausted):
        play_game("seed", full[:7], _decider(tables, "greedy"))


@pytest.mark.parametrize("seats, scripts, needle", [
    (["greedy"], [[[1, 2, 7]]], "faces"),
    (["greedy", "greedy"], [[[1] * 5]], "2 seats"),
    (["greedy", "greedy"], [[[1] * 5], []], "same positive number"),
    (["threshold-300"], [[[1] * 5]], "penta"),
])
def test_bad_scripts_are_user_errors(seats, scripts, needle):
    with pytest.raises(UserError, match=needle):
        play_scripted(seats, scripts, "seed")


# --- simulation -------------------------------------------------------------------------------


@pytest.mark.slow
def test_optimal_mean_agrees_with_exact_value():
    r = simulate_penta(["optimal"], games=300_000, seed=12345, rules="seed")
    seat = r.seat(0)
    e = seat.mean_final_score
    exact = solve("seed").expected_score
    assert abs(e.mean - exact) < 4 * e.se
    assert 0.05 < e.se < 0.2
    assert 55 < seat.final_score_sd < 65
    _identities(r, 0)
    assert seat.expected_final_score == exact == r.to_dict()["seats"][0]["expected_final_score"]
    assert 0.6 < seat.p_upper_bonus.p < 0.75
    assert 0.25 < seat.p_penta_fifty.p < 0.45
    # one seat: no duel statistics
    assert seat.wins is None and seat.win_rate is None and "wins" not in seat.to_dict()


@pytest.mark.slow
def test_hasbro_optimal_agrees_and_never_breaks_the_joker_rules():
    # the kernel raises if a table ever picks a box the rules forbid
    r = simulate_penta(["optimal"], games=150_000, seed=99, rules="hasbro")
    e = r.seat(0).mean_final_score
    assert abs(e.mean - solve("hasbro").expected_score) < 4 * e.se
    _identities(r, 0)


def test_same_seed_same_result_with_one_or_two_threads():
    def run():  # three chunks, the last one short: the threads share them unevenly
        return simulate_penta(["optimal", "greedy"], games=2 * config.CHUNK_GAMES + 5, seed=7)

    one = with_threads(1, run)
    two = with_threads(2, run)
    for name in ("hist", "box_sum", "box_sq", "upper_bonus", "fifty", "bonus_sum", "wins",
                 "tied"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.ties == two.ties
    other = simulate_penta(["optimal", "greedy"], games=2 * config.CHUNK_GAMES + 5, seed=8)
    assert not np.array_equal(one.hist, other.hist)


def test_seats_win_rates_and_ties_add_up():
    r = simulate_penta(["optimal", "greedy"], games=40_000, seed=7)
    assert int(r.wins.sum()) + r.ties == r.games
    assert (r.tied == r.ties).all()  # with two seats every tie involves both
    assert r.wins[0] > r.wins[1]
    for s in range(2):
        _identities(r, s)
        seat = r.seat(s)
        assert seat.wins + seat.ties + seat.losses == r.games
        assert seat.win_rate == Proportion(seat.wins, r.games)
        assert seat.tie_rate.count == seat.ties == r.ties
    # seats have independent dice: greedy's results are not optimal's
    assert not np.array_equal(r.hist[0], r.hist[1])


@pytest.mark.slow
def test_result_fields_dict_and_frame_agree():
    r = simulate_penta(["greedy", "greedy"], games=20_000, seed=11, rules="no-bonus")
    assert r.games_per_s == r.games / r.elapsed_s and r.threads >= 1 and r.setup_s >= 0
    seat = r.seat(1)
    assert isinstance(seat.mean_final_score, Estimate)
    assert isinstance(seat.p_upper_bonus, Proportion)
    assert sum(b.mean for b in seat.mean_box_scores.values()) + 35 * seat.p_upper_bonus.p \
        == pytest.approx(seat.mean_final_score.mean, abs=1e-9)  # no-bonus: no Penta bonuses
    assert seat.mean_penta_bonuses.mean == 0 and seat.percentiles[50] <= seat.percentiles[95]
    d = r.to_dict()
    assert json.dumps(d["seats"][1]) == json.dumps(seat.to_dict())  # (NaN: no SE)
    assert (d["ties"], d["tie_rate"], d["tie_rate_ci95"]) == \
        (r.tie_rate.count, r.tie_rate.p, list(r.tie_rate.ci95))
    assert (d["seats"][1]["p_upper_bonus"], d["seats"][1]["p_upper_bonus_ci95"]) == \
        (seat.p_upper_bonus.p, list(seat.p_upper_bonus.ci95))
    frame = r.to_frame()
    row = frame.iloc[1]
    assert list(frame["seat"]) == [0, 1] and row["policy"] == "greedy"
    assert row["mean_final_score"] == seat.mean_final_score.mean
    assert (row["mean_final_score_ci95_lo"], row["mean_final_score_ci95_hi"]) == \
        seat.mean_final_score.ci95
    assert (row["win_rate_ci95_lo"], row["win_rate_ci95_hi"]) == seat.win_rate.ci95
    assert row["p_upper_bonus"] == seat.p_upper_bonus.p
    assert row["mean_box_scores_chance"] == seat.mean_box_scores["chance"].mean
    assert row["final_score_percentiles_50"] == seat.percentiles[50]
    m = r.manifest()
    assert m["threads"] == r.threads and m["chunk_games"] > 0 and m["seed_given"] is True


def test_max_total_is_the_best_card_there_is():
    # every box at its most, the upper bonus, and a Penta bonus in each of the 12 turns
    # after the first Penta (sixes go to Sixes, the others to lower boxes and Chance)
    assert MAX_TOTAL == (5 + 10 + 15 + 20 + 25 + 30) + 35 + (30 + 30 + 25 + 30 + 40 + 30 + 50) \
        + 12 * 100


def test_progress_is_reported_up_to_the_total(monkeypatch):
    # a batch of one chunk: three batches, the last one short, in a few games
    monkeypatch.setattr(config, "BATCH_CHUNKS", 1)
    games = 2 * seeding.CHUNK_GAMES + 5
    seen = []
    simulate_penta(["greedy"], games=games, seed=3, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (games, games)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) >= 2


def test_bad_input_is_a_user_error():
    with pytest.raises(UserError):
        simulate_penta(["optimal"], games=0)
    with pytest.raises(UserError):
        simulate_penta(["optimal"], games=10, rules="bogus")
    with pytest.raises(UserError):
        simulate_penta(["threshold-300"], games=10)
    with pytest.raises(UserError):
        simulate("optimal", ["threshold-300"], games=10)


def test_cli_simulate_json_without_game(capsys):
    main(["simulate", "--strategy", "optimal", "--vs", "greedy", "--games", "20000",
          "--seed", "5", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["game"] == "penta" and d["games"] == 20000 and d["seed"] == 5
    assert [s["policy"] for s in d["seats"]] == ["optimal", "greedy"]
    assert set(d["seats"][0]["final_score_percentiles"]) == {"1", "5", "25", "50", "75", "95",
                                                            "99"}
    seat = d["seats"][0]
    lo, hi = seat["win_rate_ci95"]
    assert lo <= seat["win_rate"] <= hi and "ties" in d
    assert seat["wins"] + seat["ties"] + seat["losses"] == 20000
    # the keys shared with Farkle's report
    assert {"elapsed_s", "games_per_s", "rules", "seed", "games"} <= set(d)
    assert {"mean_final_score", "mean_final_score_ci95", "tie_rate_ci95"} <= set(seat)


@pytest.mark.slow
def test_cli_simulate_table_and_out(capsys, tmp_path):
    main(["simulate", "-s", "greedy", "--games", "10000", "--seed", "1", "--rules",
          "no-bonus", "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert "mean final score" in out and "P(upper bonus)" in out and "set-up" in out
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["rules"]["name"] == "no-bonus"
    assert [p["name"] for p in manifest["policies"]] == ["greedy"]
    assert (tmp_path / "run" / "summary.parquet").is_file()


@pytest.mark.parametrize("argv, needle", [
    (["simulate", "-s", "optimal", "--games", "0"], "--games"),
    (["simulate", "-s", "optimal", "--games", "10", "--rules", "bogus"], "rule set"),
    (["simulate", "-s", "optimal", "--game", "farkle", "--games", "10"], "penta policy"),
    (["solve", "penta", "--rules", "bogus"], "rule set"),
    (["policy", "penta", "--roll", "1,2,3"], "five dice"),
    (["policy", "penta", "--roll", "1,2,3,4,5", "--card", "ones=9"], "ones"),
])
def test_cli_user_errors_exit_2_with_one_line(capsys, argv, needle):
    code, _out, err = run_cli(capsys, argv)
    assert code == 2
    assert err.startswith("error:") and needle in err and err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.slow
def test_cli_solve_json_and_corrupt_cache_rebuilds(capsys, tmp_path):
    from dicelab import cache
    from dicelab.penta import solver
    from dicelab.penta.rules import get_rules

    solver._MEMO.clear()
    main(["solve", "penta", "--rules", "no-bonus", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["expected_final_score"] == pytest.approx(245.87077, abs=1e-5)
    assert d["states"] == 536_448 and d["elapsed_s"] > 0 and d["solve_s"] > 0
    values = cache.cache_path(solver.cache_key(get_rules("no-bonus")))
    values.unlink()  # damaged as a new file: the session shares the old one (a hard link)
    values.write_bytes(b"garbage")
    solver._MEMO.clear()
    main(["solve", "penta", "--rules", "no-bonus", "--json"])
    d2 = json.loads(capsys.readouterr().out)
    assert d2["expected_final_score"] == d["expected_final_score"] and d2["from_cache"] is False
    solver._MEMO.clear()
    main(["solve", "penta", "--rules", "no-bonus"])
    assert "from cache; the solve took" in capsys.readouterr().out


def test_cli_policy_penta(capsys):
    main(["policy", "penta", "--roll", "6,6,6,2,1", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["options"][0]["keep"] == [6, 6, 6] and d["options"][0]["loss"] == 0.0


def test_sizes_the_memory_cannot_hold_are_refused_before_allocating(monkeypatch, capsys):
    from dicelab.penta.policies import release_decision_tables

    release_decision_tables()  # tables another test built are not allocated again
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "100MB")
    code, _, err = run_cli(capsys, ["simulate", "-s", "greedy", "-n", "10", "--seed", "1"])
    assert code == 2 and "Penta decision tables" in err and err.count("\n") == 1
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "600MB")
    with pytest.raises(UserError, match="3,000 seats"):
        simulate_penta(["greedy"] * 3000, games=10, seed=1)


def test_every_mean_of_the_table_shows_its_interval(capsys):
    """Each box's mean prints with its 95% interval (from the SE the JSON carries), as the
    other means do; with one game there is none: ``[n/a]``."""
    for games, missing in ((200, False), (1, True)):
        argv = ["simulate", "-s", "docs/examples/policies/penta_rules.py:most_points", "-n",
                str(games), "--seed", "1"]
        code, out, err = run_cli(capsys, [*argv, "--json"])
        assert code == 0, err
        (seat,) = json.loads(out)["seats"]
        code, out, err = run_cli(capsys, argv)
        assert code == 0, err
        rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
                for line in out.splitlines() if line.startswith("│ mean ")}
        for name, mean in seat["mean_box_scores"].items():
            cell = rows[f"mean {name}"]
            assert cell.startswith(f"{mean:,.3f} ["), cell
            se = seat["mean_box_scores_se"][name]
            if missing or se is None:  # one game, or a box without spread (always 0)
                assert cell.endswith("[n/a]") and se is None, cell
            else:
                lo, hi = (float(x) for x in cell.split("[")[1].rstrip("]").split(", "))
                assert lo < mean < hi, cell
        assert missing or any(se is not None for se in seat["mean_box_scores_se"].values())


def test_a_few_games_keep_their_means_to_what_a_card_can_score():
    """From two games the t intervals are wide: they stop at 0 (a box, the bonuses) and at
    0..MAX_TOTAL (the final score); a box that scored the same twice measures no error."""
    seat = simulate_penta(["optimal"], games=2, seed=1).seat(0)
    means = [seat.mean_final_score, seat.mean_penta_bonuses, *seat.mean_box_scores.values()]
    assert all(e.ci95[0] >= 0.0 for e in means if not math.isnan(e.se))
    assert seat.mean_final_score.ci95[1] <= MAX_TOTAL
    clipped = [e for e in seat.mean_box_scores.values() if e.ci95[0] == 0.0 < e.mean]
    alike = [e for e in seat.mean_box_scores.values() if math.isnan(e.se)]
    assert clipped and alike  # (seed 1: both kinds occur)


def test_the_game_kernel_compiles_once_whatever_the_number_of_seats():
    """A table's seats reach the kernel as arrays and its distinct online seats: a table of
    nine seats plays the kernel compiled for two (one entry per seat in its type made a
    table of 100 seats a compile of minutes)."""
    from dicelab.penta import simulate as sim

    for kernel, few, many in (
            (sim._simulate_chunks, ["optimal", "greedy"], ["greedy"] * 4 + ["optimal"] * 5),
            # theta 0.02: the objective whose table test_penta_objectives solves (shared)
            (sim._simulate_chunks_online, ["optimal:utility:theta=0.02", "greedy"],
             ["optimal:utility:theta=0.02"] * 3 + ["greedy"])):
        simulate_penta(few, games=8, seed=3)
        compiled = len(kernel.signatures)
        simulate_penta(many, games=8, seed=3)
        assert len(kernel.signatures) == compiled
