"""Penta simulation: agreement with the exact optimum, reproducibility, CLI behaviour."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import run_cli
from numba_threads import with_threads

from dicelab.cli.main import main
from dicelab.errors import UserError
from dicelab.penta.simulate import MAX_TOTAL, simulate_penta
from dicelab.penta.solver import solve
from dicelab.simulate import simulate


def _identities(r, s):
    """TOTAL = boxes + 35 x upper bonuses + 100 x Penta bonuses, exactly, in integers."""
    totals = int((r.hist[s] * np.arange(MAX_TOTAL + 1)).sum())
    assert r.hist[s].sum() == r.games
    assert totals == int(r.box_sum[s].sum()) + 35 * int(r.upper_bonus[s]) \
        + 100 * int(r.bonus_sum[s])


def test_optimal_mean_agrees_with_exact_value():
    r = simulate_penta(["optimal"], games=300_000, seed=12345, rules="seed")
    e = r.score(0)
    exact = solve("seed").expected_score
    assert abs(e.mean - exact) < 4 * e.se
    assert 0.05 < e.se < 0.2
    assert 55 < r.sd(0) < 65
    _identities(r, 0)
    d = r.to_dict()["seats"][0]
    assert d["exact_mean"] == exact
    assert 0.6 < d["p_upper_bonus"]["p"] < 0.75
    assert 0.25 < d["p_penta_fifty"]["p"] < 0.45


@pytest.mark.slow
def test_hasbro_optimal_agrees_and_never_breaks_the_joker_rules():
    # the kernel raises if a table ever picks a box the rules forbid
    r = simulate_penta(["optimal"], games=150_000, seed=99, rules="hasbro")
    e = r.score(0)
    assert abs(e.mean - solve("hasbro").expected_score) < 4 * e.se
    _identities(r, 0)


def test_same_seed_same_result_with_one_or_two_threads():
    def run():
        return simulate_penta(["optimal", "greedy"], games=40_000, seed=7)

    one = with_threads(1, run)
    two = with_threads(2, run)
    for name in ("hist", "box_sum", "box_sq", "upper_bonus", "fifty", "bonus_sum", "wins",
                 "tied"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.ties == two.ties
    other = simulate_penta(["optimal", "greedy"], games=40_000, seed=8)
    assert not np.array_equal(one.hist, other.hist)


def test_seats_win_rates_and_ties_add_up():
    r = simulate_penta(["optimal", "greedy"], games=40_000, seed=7)
    assert int(r.wins.sum()) + r.ties == r.games
    assert (r.tied == r.ties).all()  # with two seats every tie involves both
    assert r.wins[0] > r.wins[1]
    for s in range(2):
        _identities(r, s)
    # seats have independent dice: greedy's results are not optimal's
    assert not np.array_equal(r.hist[0], r.hist[1])


def test_progress_is_reported_up_to_the_total():
    seen = []
    simulate_penta(["greedy"], games=200_000, seed=3, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (200_000, 200_000)
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
    assert [s["strategy"] for s in d["seats"]] == ["optimal", "greedy"]
    assert set(d["seats"][0]["final_score_percentiles"]) == {"1", "5", "25", "50", "75", "95",
                                                            "99"}
    seat = d["seats"][0]
    lo, hi = seat["win_rate_ci"]
    assert lo <= seat["win_rate"] <= hi and "ties" in d
    assert seat["wins"] + seat["ties"] + seat["losses"] == 20000
    # the keys shared with Farkle's report
    assert {"elapsed_s", "games_per_s", "rules", "seed", "games"} <= set(d)
    assert {"mean_final_score", "mean_final_score_ci", "tie_rate_ci"} <= set(seat)


@pytest.mark.slow
def test_cli_simulate_table_and_out(capsys, tmp_path):
    main(["simulate", "-s", "greedy", "--games", "10000", "--seed", "1", "--rules",
          "no-bonus", "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert "mean TOTAL" in out and "P(upper bonus)" in out and "set-up" in out
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["rules"] == "no-bonus"
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
    assert d["expected_score"] == pytest.approx(245.87077, abs=1e-5)
    assert d["states"] == 536_448 and d["seconds"] > 0
    cache.cache_path(solver.cache_key(get_rules("no-bonus"))).write_bytes(b"garbage")
    solver._MEMO.clear()
    main(["solve", "penta", "--rules", "no-bonus", "--json"])
    d2 = json.loads(capsys.readouterr().out)
    assert d2["expected_score"] == d["expected_score"] and d2["cached"] is False


def test_cli_policy_penta(capsys):
    main(["policy", "penta", "--roll", "6,6,6,2,1", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["options"][0]["keep"] == [6, 6, 6] and d["options"][0]["loss"] == 0.0
