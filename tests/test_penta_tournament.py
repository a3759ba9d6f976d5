"""Penta tournaments: a stream per turn and seat, balanced tables, agreement with compare,
identical policies, verdicts, places at full tables, reproducibility, CLI, experiment
files and bad input."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli
from numba_threads import dicts_by_threads
from tournament_checks import check_places

from dicelab.compare import compare
from dicelab.errors import UserError
from dicelab.experiment_file import parse_experiment, read_experiment, run_experiment_file
from dicelab.penta.simulate import simulate_penta
from dicelab.registry import PolicySpec
from dicelab.rng import STREAM_PER_CHUNK, STREAM_PER_TURN
from dicelab.sprt import MIN_UNITS, UNIT_GAMES, SprtSpec, sprt
from dicelab.tournament import tournament

#: ``optimal`` under a second name: the same decisions, so every comparison is even.
COPY = PolicySpec("penta", "optimal", "optimal-copy")


def test_a_seats_dice_do_not_depend_on_the_other_seats():
    """With a stream per turn, seat 0 plays the same games whoever sits in seat 1; with
    the stream per chunk it does not (seat 1's rolls come after seat 0's)."""
    def seat0(others, streams):
        r = simulate_penta(["optimal", *others], games=5_000, seed=3, streams=streams)
        return r.hist[0]

    assert (seat0(["greedy"], STREAM_PER_TURN) == seat0(["optimal"], STREAM_PER_TURN)).all()
    assert (seat0(["greedy"], STREAM_PER_TURN) == seat0(["greedy", "greedy"],
                                                        STREAM_PER_TURN)).all()
    assert not (seat0(["greedy"], STREAM_PER_CHUNK) == seat0(["greedy"], STREAM_PER_TURN)
                ).all()


def test_finishes_per_chunk_add_up():
    r = simulate_penta(["optimal", "greedy", "optimal"], games=20_000, seed=4,
                       per_chunk=True, streams=STREAM_PER_TURN)
    t = r.chunk_tallies
    assert (t["beat"].sum(axis=0) == r.beat).all() and (t["wins"].sum(axis=0) == r.wins).all()
    assert (np.diagonal(r.beat) == 0).all()
    # a seat won alone exactly when it beat every other seat
    assert r.wins[1] <= min(r.beat[1, 0], r.beat[1, 2])
    assert (r.beat + r.beat.T <= r.games).all()


@pytest.mark.parametrize("seats", [2, 3, 5])
def test_every_policy_sits_in_every_seat_equally_often(seats):
    t = tournament(["optimal", "greedy"], seats=seats, games=1024, seed=1)
    assert t.game == "penta" and t.target is None
    for s in range(seats):
        counts = Counter(table["policies"][s] for table in t.tables)
        assert set(counts) == {"optimal", "greedy"} and len(set(counts.values())) == 1
    games = {s.policy: s.games for s in t.standings()}
    assert games["optimal"] == games["greedy"]
    assert sum(games.values()) == len(t.tables) * 1024 * seats


def test_pair_score_agrees_with_compare_and_optimal_wins():
    # 50,000 and 60,000 games: the agreement is judged in the standard errors of these
    # sizes; optimal's lead is still decided with room to spare (p_holm about 1e-26)
    t = tournament(["optimal", "greedy"], games=50_000, seed=2)
    c = compare(["optimal", "greedy"], games=60_000, seed=12)
    p, q = t.pairs()[0], c.pairs[0]
    se_c = (q.score_ci95[1] - q.score_ci95[0]) / (2 * 1.96)
    assert abs(p.score.mean - q.score) <= 4 * math.hypot(p.score.se, se_c), (p, q)
    assert p.verdict == "better" and p.p_holm < 1e-6
    first = t.standings()[0]
    assert first.policy == "optimal" and first.rank == 1
    assert first.rating > 0 and first.rating_ci95[0] > 0
    # two seats: the place is 2 unless the policy won or shared the top
    for s in t.standings():
        assert s.mean_place.mean == pytest.approx(2 - s.win_rate.mean - s.tie_rate.mean)


@pytest.mark.slow  # fast twin: test_identical_policies_are_even_and_get_no_verdict
def test_common_dice_give_more_than_a_game_per_game():
    """Measured, not assumed: the variance with independent dice over the variance with
    the seat's dice shared by the rotations (about 1.2 for optimal against greedy; this
    seed's estimate from 74 units is 1.14)."""
    t = tournament(["optimal", "greedy"], games=600_000, seed=5)
    assert t.pairs()[0].effective_games_per_game > 1.0
    independent = tournament(["optimal", "greedy"], games=20_000, seed=5, crn=False)
    assert independent.pairs()[0].effective_games_per_game == pytest.approx(1.0)


def test_identical_policies_are_even_and_get_no_verdict():
    # with common dice the rotations mirror each other: exactly even (in any number of
    # games); optimal's lead over greedy is decided in far fewer (p about 1e-21)
    t = tournament(["optimal", COPY, "greedy"], games=10_000, seed=6)
    pairs = {(p.policy, p.opponent): p for p in t.pairs()}
    same = pairs[("optimal", "optimal-copy")]
    assert same.score.mean == 0.5 and same.verdict == "tie"
    assert pairs[("optimal", "greedy")].verdict == "better"
    assert pairs[("optimal-copy", "greedy")].verdict == "better"
    # with independent dice: about even, within the noise, and still no verdict
    t = tournament(["optimal", COPY], games=60_000, seed=7, crn=False)
    p = t.pairs()[0]
    assert abs(p.score.mean - 0.5) <= 4 * p.score.se and p.verdict == "tie"
    for s in t.standings():
        lo, hi = s.rating_ci95
        assert lo <= 0 <= hi, s


def test_full_tables_have_places():
    t = tournament(["optimal", "greedy", COPY], seats=3, games=20_000, seed=8)
    places = {s.policy: s.mean_place.mean for s in t.standings()}
    assert 1 < places["optimal"] < places["greedy"] < 3
    assert places["optimal"] == pytest.approx(places["optimal-copy"], abs=0.02)
    check_places(t, 3)


def test_same_seed_same_tournament_whatever_the_threads():
    one, two = dicts_by_threads(lambda: tournament(["optimal", "greedy"], seats=3,
                                                   games=20_000, seed=9))
    assert one == two


def test_cli_table_json_out_and_figures(capsys, tmp_path):
    out = tmp_path / "t"
    code, stdout, err = run_cli(capsys, ["tournament", "optimal", "greedy", "--game", "penta",
                                         "--seats", "3", "-n", "9000", "--seed", "1",
                                         "--json", "--out", str(out)])
    assert code == 0, err
    d = json.loads(stdout)
    assert d["game"] == "penta" and d["rules"] == "seed" and d["target"] is None
    assert [s["policy"] for s in d["standings"]] == ["optimal", "greedy"]
    assert {p.name for p in out.iterdir()} == {"summary.parquet", "manifest.json",
                                                "win-matrix.png", "ratings.png"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["game"] == "penta" and manifest["rules"]["name"] == "seed"
    code, stdout, err = run_cli(capsys, ["tournament", "optimal", "greedy", "-n", "9000",
                                         "--seed", "1", "--rules", "seed"])
    assert code == 0, err
    assert "Penta tournament" in stdout and "optimal" in stdout


def test_experiment_files_take_penta_tournaments(tmp_path):
    text = ("kind = 'tournament'\npolicies = ['optimal', 'greedy']\nseats = 3\n"
            "games = 9000\nseed = 2\nrules = 'seed'\n")
    spec = parse_experiment(text, "penta.toml")
    assert spec.policies == ("optimal", "greedy") and spec.seats == 3
    f = tmp_path / "penta.toml"
    f.write_text(text)
    result, where, files = run_experiment_file(f, base=tmp_path)
    assert result.game == "penta" and result.rules.name == "seed"
    assert files["summary"].is_file() and where.is_dir()
    example = read_experiment(Path(__file__).parents[1] / "docs" / "examples"
                              / "penta-tournament.toml")
    assert example.policies == ("optimal", "greedy") and example.rules == "hasbro"

    with pytest.raises(UserError, match=r"penta.toml: target applies to Farkle only"):
        parse_experiment(text + "target = 2000\n", "penta.toml")
    with pytest.raises(UserError, match="rules: unknown Penta rule set"):
        parse_experiment(text.replace("'seed'", "'default'"), "penta.toml")


def test_sequential_tests_of_penta_pairs(capsys):
    """optimal is far stronger than greedy (about 170 Elo): decided for H1 at the first
    judgement; a policy against itself with common dice: every unit even, no variance,
    so no decision (undecided at the most games); with independent dice, over 40 seeds:
    H1 (a false alarm) about as rarely as alpha says (expected 2 of 40: at most 5
    allowed, and at least 30 decided H0)."""
    spec = SprtSpec(0.0, 10.0, 0.05, 0.05)
    r = sprt("optimal", "greedy", spec, seed=1)
    assert r.decision == "H1" and r.game == "penta" and r.games == MIN_UNITS * 2 * UNIT_GAMES
    assert sprt("greedy", "optimal", spec, seed=1).decision == "H0"
    same = sprt("optimal", COPY, spec, seed=2, max_games=4 * MIN_UNITS * 2 * UNIT_GAMES)
    assert same.decision == "undecided" and same.score.mean == 0.5 and math.isnan(same.llr)
    assert same.games == 4 * MIN_UNITS * 2 * UNIT_GAMES
    decisions = Counter(sprt("optimal", COPY, spec, seed=s, crn=False,
                             max_games=400_000).decision for s in range(40))
    assert decisions["H1"] <= 5 and decisions["H0"] >= 30, decisions
    code, out, err = run_cli(capsys, ["tournament", "optimal", "greedy", "--sprt",
                                      "elo0=0,elo1=10", "--seed", "1", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["game"] == "penta" and d["rules"] == "seed" and d["target"] is None
    assert d["pairs"][0]["decision"] == "H1"


@pytest.mark.parametrize(("argv", "needle"), [
    (["tournament", "optimal", "optimist"], "unknown policy 'optimist'"),
    (["tournament", "optimal", "ai"], "one game"),
    (["tournament", "ai", "max-ev", "--game", "penta"], "is a farkle policy, not penta"),
    (["tournament", "optimal", "greedy", "--seats", "1"], "at least 2 for Penta"),
    (["tournament", "optimal", "greedy", "--target", "2000"], "Farkle only"),
    (["tournament", "optimal", "greedy", "--rules", "default"], "unknown Penta rule set"),
    (["tournament", "optimal", "greedy", "--sprt", "elo1=10", "--seats", "3"], "pairs"),
    (["tournament", "optimal", "optimal"], "named twice"),
])
def test_bad_input(capsys, tmp_path, argv, needle):
    code, _, err = run_cli(capsys, [*argv, "-n", "1000", "--out", str(tmp_path / "x")])
    assert code == 2 and err.startswith("error: ") and needle in err, err
    assert err.count("\n") == 1
    assert not (tmp_path / "x").exists()
