"""Penta objectives beyond the mean, solved exactly: every objective against the plain-Python
recursion of tests/naive_penta_objectives.py on late cards (the same solver kernels on the
last layers only), the forward pass of an objective's policy, parsing and bad input."""

from __future__ import annotations

import functools
import itertools
import json
import math

import late_penta
import numpy as np
import pytest
from cli_helpers import run_cli
from glossary_checks import capture_tables, check_tables, run_both
from late_penta import FIRST_LAYER, late_rows
from naive_penta import BOXES
from naive_penta_objectives import objective_value

from dicelab.errors import UserError
from dicelab.penta.distribution import score_distribution
from dicelab.penta.objective_play import (
    SEAT_ROWS,
    forward,
    frozen_seat,
    new_win_scratch,
    objective_distribution,
    online_seat,
    rank_objective_options,
    win_share,
)
from dicelab.penta.objectives import (
    at_least_rows,
    opponent_share,
    parse_objective,
    row_lookup,
    score_bounds,
    solve_objective,
    start_values,
    utility_rows,
)
from dicelab.penta.policies import Scorecard
from dicelab.penta.policy import BUILT_IN
from dicelab.penta.rules import N_BOXES, N_STATES, get_rules, state_index
from dicelab.penta.scoring import MAX_TOTAL
from dicelab.penta.simulate import simulate_penta
from dicelab.penta.solver import layer_states, solve, solve_state_objective
from dicelab.registry import PolicySpec
from dicelab.rng import STREAM_PER_TURN


@pytest.fixture(scope="module")
def every_target():
    """P(points to come >= d) for every late state and need (the table of every target)."""
    return late_rows(at_least_rows(score_bounds("seed"), None))


def _filled(open_boxes, **scores):
    filled = {b: 0 for b in BOXES if b not in open_boxes}
    filled.update({k.replace("_", "-"): v for k, v in scores.items()})
    return filled


def _state(filled: dict[str, int]) -> int:
    mask = sum(1 << BOXES.index(b) for b in filled)
    up = min(63, sum(v for b, v in filled.items() if b in BOXES[:6]))
    return int(state_index(mask, up, int(filled.get("penta") == 50)))


def _card(filled: dict[str, int], bonuses: int = 0) -> Scorecard:
    return Scorecard(tuple(filled.get(b) for b in BOXES), bonuses)


@functools.cache
def _plain_at_least(filled: tuple[tuple[str, int], ...], need: int) -> float:
    """The plain recursion's P(points to come >= ``need``) from ``filled`` (its items):
    P(final >= T) from a TOTAL of x is this with need T - x, whatever x. Kept for the
    module: several tests check the same card and need."""
    return objective_value("seed", dict(filled), 0, lambda t: float(t >= need))


@functools.cache
def _plain_utility(filled: tuple[tuple[str, int], ...], theta: float) -> float:
    """The plain recursion's E[sign(theta) exp(theta x points to come)] from ``filled``
    (its items), kept for the module like :func:`_plain_at_least`."""
    return objective_value("seed", dict(filled), 0,
                           lambda t: math.copysign(1.0, theta) * math.exp(theta * t))


#: Two boxes open: the Penta box filled with 50 (jokers, bonuses), the upper bonus in reach.
TWO_OPEN = _filled(("fours", "chance"), penta=50, sixes=24, fives=20)
#: Two boxes open: a straight and an upper box, the Penta box scratched.
TWO_OPEN_B = _filled(("threes", "large-straight"), penta=0, sixes=30, fives=20, fours=8,
                     chance=12)


@pytest.mark.parametrize("filled, x, target", [
    (TWO_OPEN, 150, 150),
    pytest.param(TWO_OPEN, 150, 170, marks=pytest.mark.slow),
    pytest.param(TWO_OPEN, 150, 180, marks=pytest.mark.slow),
    # 0.45 s each (the plain recursion); fast twin: the same card at target 150
    pytest.param(TWO_OPEN, 150, 200, marks=pytest.mark.slow),
    pytest.param(TWO_OPEN, 150, 260, marks=pytest.mark.slow),
    (TWO_OPEN_B, 93, 140), (TWO_OPEN_B, 93, 160),
])
def test_at_least_matches_the_recursion(every_target, filled, x, target):
    want = _plain_at_least(tuple(filled.items()), target - x)
    assert row_lookup(every_target, _state(filled), target - x) == pytest.approx(want, abs=1e-9)


@pytest.mark.slow
def test_at_least_matches_the_recursion_three_turns_out():
    filled = _filled(("fours", "chance", "full-house"), penta=50, sixes=24, fives=20)
    want = objective_value("seed", filled, 150, lambda t: float(t >= 220))
    R = late_rows(at_least_rows(score_bounds("seed"), None), FIRST_LAYER - 1)
    assert row_lookup(R, _state(filled), 70) == pytest.approx(want, abs=1e-9)


def test_at_least_of_one_target_is_the_table_of_every_target(every_target):
    """The rows of one T hold the same numbers as the table of every target, over the
    needs the TOTALs so far leave (the rows of one T solved for the states a game from the
    card reaches only: the same rows of the card's state, 3 s less)."""
    s = _state(TWO_OPEN)
    R = late_rows(at_least_rows(score_bounds("seed"), 250), cards=[s])
    for x in range(120, 200, 7):
        assert row_lookup(R, s, 250 - x) == row_lookup(every_target, s, 250 - x)


def test_at_least_zero_is_one():
    sol = solve_objective("at-least:0", "seed")
    assert sol.value == 1.0
    assert sol.n_values == 0  # every need is met from the start: no row to solve


def test_mean_is_the_solver():
    V = np.full(N_STATES, np.nan)
    V[layer_states()[N_BOXES]] = 0.0
    solve_state_objective(V, get_rules("seed"), np.zeros(0))
    want = solve("seed").values
    reach = np.isfinite(want)
    np.testing.assert_allclose(V[reach], want[reach], rtol=0, atol=1e-9)
    assert solve_objective("mean", "seed").value == pytest.approx(254.48484588168, abs=1e-8)


@pytest.mark.parametrize("theta", [
    0.02, pytest.param(-0.03, marks=pytest.mark.slow)])  # 3.6 s; fast twin: theta 0.02
def test_utility_matches_the_recursion(theta):
    sol = solve_objective(f"utility:theta={theta}", "seed")
    for filled in (TWO_OPEN, TWO_OPEN_B):
        want = _plain_utility(tuple(filled.items()), theta)
        assert sol.values[_state(filled)] == pytest.approx(want, rel=1e-12)
    # risk-seeking play's certainty equivalent lies above the mean, risk-averse below
    assert (sol.value > 254.48) == (theta > 0)


@functools.cache
def _beat_rows():
    """The win share against two players whose TOTAL is spread over 160..239, its
    saturation TOTAL and its late rows (built once for the module), for the states a game
    from the tests' two cards reaches only (the same rows of the cards' states, 5 s less)."""
    pmf = np.zeros(MAX_TOTAL + 1)
    pmf[160:240] = np.linspace(1, 3, 80)
    pmf /= pmf.sum()
    u = opponent_share(pmf, 2)
    spec, x_sat = utility_rows(score_bounds("seed"), u)
    return u, x_sat, late_rows(spec, cards=[_state(TWO_OPEN), _state(TWO_OPEN_B)])


@pytest.mark.parametrize("filled, x", [
    # 5 s each; the fast twin is the other card's
    pytest.param(TWO_OPEN, 150, marks=pytest.mark.slow),
    pytest.param(TWO_OPEN, 130, marks=pytest.mark.slow), (TWO_OPEN_B, 93)])
def test_beat_rows_match_the_recursion(filled, x):
    """A win share against players whose TOTAL is spread over 160..239 (the rows of
    ``beat:N`` from any distribution)."""
    u, x_sat, R = _beat_rows()
    assert x_sat == 240
    want = objective_value("seed", filled, x, lambda t: float(u[min(t, MAX_TOTAL)]))
    assert row_lookup(R, _state(filled), x_sat - x) == pytest.approx(want, abs=1e-9)


def test_opponent_share_counts_ties_by_the_players_sharing_the_top():
    pmf = np.array([0.2, 0.3, 0.5])
    u = opponent_share(pmf, 2)
    # TOTAL 1 against two players: both below (0.04), one level (2 x 0.2 x 0.3 / 2), both
    # level (0.09 / 3)
    assert u[1] == pytest.approx(0.04 + 0.06 + 0.03, abs=1e-15)
    assert float(pmf @ opponent_share(pmf, 1)) == pytest.approx(0.5, abs=1e-15)


@pytest.mark.slow  # 5 s; fast twin: the utility policy's, through the same forward pass
def test_forward_pass_of_an_at_least_policy(every_target):
    """From a late card the policy's exact distribution gives P(final >= T) = the optimum,
    and the policy plays differently from optimal."""
    for filled, need in ((TWO_OPEN, 50), (TWO_OPEN_B, 47)):
        card = _card(filled)
        x = card.total
        target = x + need
        seat = frozen_seat(SEAT_ROWS, R=every_target, start=target, H=every_target)
        calls = []
        out = forward(seat, get_rules("seed"), card,
                      progress=lambda d, t, c=calls: c.append((d, t)))
        p = out["probability"]
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        done = [d for d, _ in calls]
        assert done == sorted(done) and calls[-1][0] == calls[-1][1] > 0
        want = row_lookup(every_target, _state(filled), target - x)
        assert p[target:].sum() == pytest.approx(want, abs=1e-12)
        plain = _plain_at_least(tuple(filled.items()), need)
        assert p[target:].sum() == pytest.approx(plain, abs=1e-9)
        assert out["differ"] > 0.0


def test_forward_pass_of_a_utility_policy():
    theta = 0.02
    sol = solve_objective(f"utility:theta={theta}", "seed")
    card = _card(TWO_OPEN)
    out = forward(online_seat(sol), get_rules("seed"), card)
    p = out["probability"]
    gain = np.arange(MAX_TOTAL + 1) - card.total
    got = float((p * np.exp(theta * gain))[p > 0].sum())
    assert got == pytest.approx(sol.values[_state(TWO_OPEN)], rel=1e-12)
    plain = _plain_utility(tuple(TWO_OPEN.items()), theta)  # theta > 0: E[exp(theta x)]
    assert got == pytest.approx(plain, rel=1e-9)


def test_forward_refuses_a_card_no_game_reaches(every_target):
    seat = frozen_seat(SEAT_ROWS, R=every_target, start=200, H=every_target)
    with pytest.raises(ValueError, match="no game reaches"):
        forward(seat, get_rules("seed"), _card(_filled(("fours", "chance")), bonuses=5))


@pytest.mark.parametrize("text, name", [
    ("mean", "mean"), (" At-Least:300 ", "at-least:300"), ("at-least:0", "at-least:0"),
    (f"at-least:{MAX_TOTAL}", f"at-least:{MAX_TOTAL}"), ("utility:theta=0.01",
                                                         "utility:theta=0.01"),
    ("utility:theta=-0.4", "utility:theta=-0.4"), ("utility:theta=1e-6", "utility:theta=1e-06"),
    ("utility:theta=-0.000001", "utility:theta=-1e-06"), ("beat:1", "beat:1"),
    ("beat:100", "beat:100"),
])
def test_objectives_parse(text, name):
    assert parse_objective(text).name == name


@pytest.mark.parametrize("text, message", [
    ("median", "unknown objective"), ("mean:1", "unknown objective"), ("", "unknown"),
    ("at-least", "unknown objective"), ("at-least:", "integer"), ("at-least:x", "integer"),
    ("at-least:-1", "possible final score"), (f"at-least:{MAX_TOTAL + 1}", "possible final"),
    ("at-least:3.5", "integer"), ("utility:theta=0", "use mean"), ("utility:0.1", "theta=X"),
    ("utility:theta=0.41", "at most"), ("utility:theta=nan", "number"),
    ("utility:theta=1e-20", "at least"), ("utility:theta=-9e-7", "at least"),
    ("utility:theta=", "number"), ("beat:0", "1 to"), ("beat:101", "1 to"), ("beat:x", "integer"),
])
def test_bad_objectives_are_user_errors(text, message):
    with pytest.raises(UserError, match=message):
        parse_objective(text)


# --- the command ---------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "needle"), [
    (["solve", "penta", "--objective", "median"], "unknown objective 'median'"),
    (["solve", "penta", "--objective", "at-least:1576"], "possible final score"),
    (["solve", "penta", "--objective", "at-least:-5"], "possible final score"),
    (["solve", "penta", "--objective", "beat:0"], "1 to 100"),
    (["solve", "penta", "--objective", "utility:theta=2"], "at most"),
    (["solve", "penta", "--objective", "mean", "--distribution"], "not with --distribution"),
    (["solve", "penta", "--objective", "mean", "--policy", "greedy"], "not with"),
    (["solve", "penta", "--objective", "mean", "--out", "{tmp}/file"], "not a directory"),
    (["solve", "penta", "--objective", "mean", "--plot", "{tmp}/x.jpg"], "must end in .png"),
    (["solve", "penta", "--table", "--objective", "mean"], "--table: not with --objective"),
    (["solve", "penta", "--table", "--distribution"], "--table: not with --distribution"),
    (["solve", "penta", "--objective", "at-least:300", "--rules", "bogus"], "unknown Penta rule"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(capsys, tmp_path, argv, needle):
    (tmp_path / "file").write_text("")
    before = sorted(tmp_path.rglob("*"))
    code, _, err = run_cli(capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err
    assert sorted(tmp_path.rglob("*")) == before


def _fake_report(text: str, value: float, optimal_value: float):
    """An objective's report with the numbers given and made-up distributions: what the
    command prints of it, without the minutes of a solve and a forward pass."""
    from dicelab.penta.distribution import ScoreDistribution
    from dicelab.penta.objective_play import ObjectiveReport
    from dicelab.penta.objectives import ObjectiveSolution

    rs = get_rules("seed")

    def dist(policy: str, top: int, differ: float | None) -> ScoreDistribution:
        p = np.zeros(MAX_TOTAL + 1)
        p[[180, 220, top]] = 0.25, 0.5, 0.25
        return ScoreDistribution(policy, rs, p, np.full(N_BOXES, 10.0), 0.6, 0.3, 0.05,
                                 0.0, False, 1.0, 0, differ_from_optimal=differ)

    obj = parse_objective(text)
    sol = ObjectiveSolution(obj, rs, value, 0.0, 1.0, False, table="one target")
    return ObjectiveReport(sol, dist(f"optimal:{text}", 310, 2.5), dist("optimal", 300, None),
                           optimal_value)


def _row(tables, label: str) -> list[str]:
    """The cells of the row ``label`` of the printed tables (its label first)."""
    for t in tables:
        cells = [[str(c) for c in col.cells] for col in t.columns]
        for i, first in enumerate(cells[0]):
            if first == label:
                return [col[i] for col in cells]
    raise AssertionError(f"no row {label!r}")


def _percent(cell: str) -> float:
    assert cell.endswith("%"), cell
    return float(cell[:-1]) / 100


@pytest.mark.parametrize(("objective", "label", "value", "optimal"), [
    ("at-least:200", "P(final score >= 200)", 0.9100188005444859, 0.8623477824324051),
    ("beat:1", "win share against 1 optimal player", 0.5 + 3e-11, 0.5),  # a tiny gain
    ("beat:3", "win share against 3 optimal players", 0.25 + 4.2e-7, 0.25),
    ("at-least:0", "P(final score >= 0)", 1.0, 0.9999999999999966),  # rounding: no gain
])
def test_a_probability_objective_prints_in_percent_and_shows_its_gain(
        capsys, monkeypatch, objective, label, value, optimal):
    """``at-least`` and ``beat`` printed their value as a plain 10-digit number (0.9100188005)
    where the glossary has probabilities in percent: percent now, beside optimal's, with a
    row of the gain over optimal, with as many decimals as a tiny gain needs to show (never
    0 when it is not zero, up to rounding); --json keeps the fractions."""
    import dicelab.penta.objective_play as objective_play

    monkeypatch.setattr(objective_play, "objective_report",
                        lambda *a, **k: _fake_report(objective, value, optimal))
    argv = ["solve", "penta", "--objective", objective]
    printed = capture_tables(monkeypatch)
    d = run_both(capsys, printed, argv)  # both checked against the glossary
    assert d["value"] == pytest.approx(value, abs=1e-15) and d["value"] <= 1
    assert d["value_of_optimal"] == pytest.approx(optimal, abs=1e-15)
    assert d["gain_over_optimal"] == pytest.approx(value - optimal, abs=1e-15)
    _, mine, theirs = _row(printed, label)
    decimals = len(mine[:-1].partition(".")[2])
    assert decimals >= 8
    assert _percent(mine) == pytest.approx(value, abs=10 ** -decimals / 100)
    assert _percent(theirs) == pytest.approx(optimal, abs=10 ** -decimals / 100)
    _, gain, zero = _row(printed, "gain over optimal")
    assert _percent(zero) == 0
    if value - optimal > 1e-12:
        assert mine != theirs  # the gain shows in the values themselves
        assert _percent(gain) == pytest.approx(value - optimal, rel=0.05)
    else:
        assert _percent(gain) == 0 and mine == theirs
    # the other probabilities of the table are percents too
    assert all(c.endswith("%") for c in _row(printed, "P(final score >= 300)")[1:])


def test_the_table_of_every_target_prints_its_probabilities_in_percent(capsys, monkeypatch):
    """``solve penta --table`` printed the most P(final >= T) as 0.9100188005: in percent
    now, to 8 decimals, as the glossary has it (the table itself faked: it is 2.3 GB)."""
    import types

    import dicelab.penta.objectives as objectives

    best = np.linspace(1.0, 0.0, MAX_TOTAL + 1)
    fake = types.SimpleNamespace(best=best, n_values=10, nbytes=80, from_cache=True,
                                 solve_s=1.0, to_dict=lambda: {"best": best.tolist()})
    monkeypatch.setattr(objectives, "at_least_table", lambda *a, **k: fake)
    printed = capture_tables(monkeypatch)
    code, out, err = run_cli(capsys, ["solve", "penta", "--table"])
    assert code == 0, err
    check_tables(printed, "solve penta --table")
    _, cell = _row(printed, "1,000")
    assert _percent(cell) == pytest.approx(best[1000], abs=1e-10)
    assert cell == f"{100 * best[1000]:.8f}%"
    code, out, err = run_cli(capsys, ["solve", "penta", "--table", "--json"])
    assert code == 0 and json.loads(out)["best"][200] == pytest.approx(best[200], abs=1e-15)


@pytest.mark.parametrize("argv, what", [
    (["solve", "penta", "--objective", "at-least:300"], "at-least:300 table"),
    (["solve", "penta", "--objective", "beat:2"], "beat:2 table"),
    (["solve", "penta", "--table"], "every target"),
])
def test_a_table_too_large_is_refused_before_allocating(capsys, monkeypatch, tmp_path, argv,
                                                        what):
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "20MB")
    if "beat:2" in argv:  # beat:N reads optimal's distribution first: give it a small one
        import dicelab.penta.objectives as objectives

        monkeypatch.setattr(objectives, "beat_share",
                            lambda rules, n: opponent_share(np.full(MAX_TOTAL + 1,
                                                                    1 / (MAX_TOTAL + 1)), n))
    code, _, err = run_cli(capsys, [*argv, "--out", str(tmp_path / "o")]
                           if "--table" not in argv else argv)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert what in err and "more than the limit of 20.0 MB" in err, err
    assert not (tmp_path / "o").exists()
    from dicelab.cache import cache_dir
    assert not list(cache_dir().glob("penta-at-least*")) and not list(
        cache_dir().glob("penta-beat*"))


@pytest.mark.slow
def test_solve_objective_command_reports_the_policy_beside_optimal(capsys, tmp_path,
                                                                   monkeypatch):
    """``solve penta --objective utility``: the policy's distribution beside optimal's, in
    JSON and text, both following the glossary; its games, simulated, agree with that
    distribution (one solve for all: it takes most of a minute; the objective of
    test_penta_user_policy's exact report card, so the session computes its distribution
    once: tests/conftest.py DECISION_FILES)."""
    theta = 0.01
    argv = ["solve", "penta", "--objective", f"utility:theta={theta}"]
    printed = capture_tables(monkeypatch)
    run_both(capsys, printed, argv)
    assert printed  # its tables, checked against the glossary
    code, stdout, err = run_cli(capsys, [*argv, "--json", "--out", str(tmp_path / "o")])
    assert code == 0, err
    d = json.loads(stdout)
    assert d["objective"] == f"utility:theta={theta}"
    dist = d["distribution"]
    lo, hi = dist["support"]
    p = np.zeros(MAX_TOTAL + 1)
    p[lo:hi + 1] = dist["probability"]
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    # the policy's distribution has the optimum's certainty equivalent, above optimal's
    ce = math.log(float(p @ np.exp(theta * np.arange(MAX_TOTAL + 1)))) / theta
    assert ce == pytest.approx(d["value"], abs=1e-9)
    assert d["value"] > d["value_of_optimal"] and d["decisions_differing_from_optimal"] > 0
    assert d["optimal_distribution"]["expected_final_score"] == pytest.approx(254.48484588168,
                                                                              abs=1e-8)
    assert (tmp_path / "o" / "distribution.parquet").exists()
    # the manifest holds what the command reported, not only the policy's distribution
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["summary"] == json.loads(stdout)
    assert manifest["files"] == {"summary": "distribution.parquet"}
    code, stdout, err = run_cli(capsys, argv)
    assert code == 0, err
    assert "certainty equivalent" in stdout and "differing from optimal" in stdout

    # its games, simulated (the table from the solve above): the exact distribution
    dist = objective_distribution(f"utility:theta={theta}", "seed")
    res = simulate_penta([f"optimal:utility:theta={theta}"], games=10_000, seed=5)
    seat = res.seat(0)
    assert abs(seat.mean_final_score.mean - dist.mean) < 4 * seat.mean_final_score.se
    # its exact mean is shown beside the estimate once its distribution was computed,
    # as optimal's is (it showed n/a)
    assert seat.expected_final_score == pytest.approx(dist.mean, rel=1e-12)
    n = res.games
    for target in (250, 300, 400):
        p = dist.p_at_least(target)
        got = res.hist[0, target:].sum() / n
        assert abs(got - p) < 4 * math.sqrt(p * (1 - p) / n), target
    # decisions differ from optimal: the policy is not optimal's
    assert dist.differ_from_optimal > 0.5


# --- penta-win's parts ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def late_points():
    return late_penta.late_points()


@pytest.mark.parametrize("filled", [TWO_OPEN, TWO_OPEN_B, pytest.param(
    _filled(("fours", "chance", "full-house"), penta=50, sixes=24, fives=20),
    marks=pytest.mark.slow, id="three-open")])
def test_points_to_come_is_optimal_exact_distribution(late_points, filled):
    card = _card(filled)
    want = score_distribution("optimal", "seed", card=card).probability[card.total:]
    if len(filled) < FIRST_LAYER:  # three boxes open: a layer more
        late_points = late_penta.late_points(len(filled))
    s = _state(filled)
    got = start_values(late_points, s)[1:-1]
    assert got.size == score_bounds("seed").most[s] + 1
    np.testing.assert_allclose(got, want[:got.size], rtol=0, atol=1e-12)
    assert want[got.size:].sum() == 0.0


def test_win_share_is_the_share_against_the_opponents_exact_scores(late_points):
    """The win share penta-win values a final TOTAL by, against two opponents on late
    cards: the tie-aware share of dicelab.penta.objectives.opponent_share."""
    cards = [_card(TWO_OPEN), _card(TWO_OPEN_B)]
    states = np.array([c.state for c in cards], dtype=np.int64)
    totals = np.array([c.total for c in cards], dtype=np.int64)
    S = new_win_scratch(2)
    win_share(late_points, states, totals, 2, S)
    pmfs = [score_distribution("optimal", "seed", card=c).probability for c in cards]
    # two independent opponents with different distributions: the share by enumeration
    m = np.arange(MAX_TOTAL + 1)
    want = np.zeros(MAX_TOTAL + 1)
    for a in np.flatnonzero(pmfs[0]):
        for b in np.flatnonzero(pmfs[1]):
            top = max(a, b)
            share = np.where(m > top, 1.0, 0.0) + np.where(m == top, 1.0 / (1 + (a == b) + 1),
                                                           0.0)
            want += pmfs[0][a] * pmfs[1][b] * share
    np.testing.assert_allclose(S.u[:MAX_TOTAL + 1], want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.cumsum(S.du)[:MAX_TOTAL + 1], S.u[:MAX_TOTAL + 1],
                               atol=1e-12)


def test_penta_win_reads_optimal_keep_values_only_for_tied_keeps(every_target, late_points):
    """penta-win's turn on a late card against a late opponent: a keep decision reads
    optimal's widget of the state only where keep_tied finds options tied under the
    objective (the simulator computes that widget only then), and a box decision never:
    with the widget's values garbage every other decision is the same."""
    from dicelab.config import PENTA_TIE_EPS
    from dicelab.penta.objective_play import SEAT_WIN, TIE_REL, seat_turn
    from dicelab.penta.scoring import TABLES
    from dicelab.penta.widget import (
        decide_roll,
        keep_tied,
        new_cand_scratch,
        new_turn_scratch,
        state_value,
    )

    rs = get_rules("seed")
    seat = frozen_seat(SEAT_WIN, R=every_target, H=late_points, opponents=np.array([1]))
    me, opp = _card(TWO_OPEN), _card(TWO_OPEN_B)
    X = new_cand_scratch()
    seat_turn(seat, rs.params, TABLES, me.mask, me.up, me.fifty, me.total,
              np.array([opp.state]), np.array([opp.total]), X, new_win_scratch(1))
    V = solve(rs).values
    real, junk = new_turn_scratch(), new_turn_scratch()
    state_value(V, rs.params, TABLES, me.mask, me.up, me.fifty, real, False, 0.0)
    rng = np.random.default_rng(3)
    for a in junk:
        a[...] = rng.integers(-9, 9, a.shape) if a.dtype.kind == "i" else rng.normal(size=a.shape)
    untied = 0
    for r in range(252):
        for left in (0, 1, 2):
            got = [decide_roll(rs.params, TABLES, V, me.mask, me.up, me.fifty, X, 0, Mw,
                               TIE_REL, PENTA_TIE_EPS, r, left) for Mw in (real, junk)]
            if left == 0 or not keep_tied(TABLES, X, 0, TIE_REL, r, left):
                assert got[0] == got[1], (r, left)
                untied += left > 0
    assert untied > 100


# --- advice ---------------------------------------------------------------------------------


def test_advice_under_an_objective_values_each_box_by_the_recursion():
    theta = 0.02
    card = _card(TWO_OPEN)
    opts = rank_objective_options(card, [4, 4, 4, 4, 1], 0, f"utility:theta={theta}", "seed")
    assert {o.box for o in opts} == {"fours", "chance"} and opts[0].played
    for o in opts:
        after = dict(TWO_OPEN)
        after[o.box] = 16 if o.box == "fours" else 17
        rest = objective_value("seed", after, 0, lambda t: math.exp(theta * t))
        want = card.total + o.points + math.log(rest) / theta
        assert o.expected_final_score == pytest.approx(want, abs=1e-9)
    assert opts[0].expected_final_score == max(o.expected_final_score for o in opts)
    best, second = opts[0].expected_final_score, opts[1].expected_final_score
    assert opts[1].loss == pytest.approx(best - second)


def test_advice_command_under_an_objective(capsys):
    code, stdout, err = run_cli(capsys, ["advise", "penta", "--roll", "6,6,6,2,1",
                                         "--objective", "utility:theta=-0.01", "--json",
                                         "--top", "0"])
    assert code == 0, err
    d = json.loads(stdout)
    assert d["policy"] == "optimal:utility:theta=-0.01"
    assert d["unit"].startswith("certainty equivalent")
    values = [o["value"] for o in d["options"]]
    assert d["options"][0]["played"] and values[0] == max(values)


@pytest.mark.parametrize(("argv", "needle"), [
    (["--objective", "utility:theta=0.01", "-s", "greedy"], "leave out --strategy"),
    (["--objective", "mode"], "unknown objective"),
    (["-s", "penta-win"], "by the other seats' cards, which advise does not take"),
    (["-s", "optimal:at-least:300"], "use --objective at-least:300\n"),
    (["-s", "optimal:utility:theta=-0.01"], "use --objective utility:theta=-0.01\n"),
    (["-s", "docs/examples/policies/penta_rules.py:most_points"], "is your own policy"),
    (["-s", "docs/examples/policies/penta_rules.py:this_turn"], "is your own policy"),
])
def test_advice_bad_input(capsys, argv, needle):
    code, _, err = run_cli(capsys, ["advise", "penta", "--roll", "6,6,6,2,1", *argv])
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err


# --- objective policies in the simulator --------------------------------------------------


# 6.6 s; fast twin of an objective's policy played online: test_play_terminal's
# test_a_penta_game_against_an_objective_policy_judged_by_its_objective
@pytest.mark.slow
def test_a_settled_objective_plays_optimal_game_for_game():
    """at-least:0 is met from the start: every option is tied, so the policy plays as
    optimal does (ties go to optimal's values, then the fixed order) -- the same games on
    the same dice, decision for decision, through the simulator's online seats."""
    crn = {"games": 1000, "seed": 11, "streams": STREAM_PER_TURN}
    online = simulate_penta(["optimal:at-least:0", "greedy"], **crn)
    table = simulate_penta(["optimal", "greedy"], **crn)
    np.testing.assert_array_equal(online.hist, table.hist)
    np.testing.assert_array_equal(online.box_sum, table.box_sum)
    assert online.seats[0] == "optimal:at-least:0"
    # exact means where known without more work: optimal's (the solver's), not greedy's
    assert table.seat(0).expected_final_score == pytest.approx(
        solve(get_rules("seed")).expected_score, rel=1e-12)
    assert table.seat(1).expected_final_score is None
    # the JSON names the kernel that played, as Farkle's does
    assert table.to_dict()["kernel"] == table.kernel and online.to_dict()["kernel"]


@pytest.mark.parametrize(("seats", "needle"), [
    (["penta-win"], "2 to 8 seats"),
    (["penta-win"] + ["optimal"] * 8, "2 to 8 seats"),
    (["penta-win", "penta-win"], "one penta-win seat per table"),
    (["optimal:at-least:2000"], "possible final score"),
])
def test_bad_seats_are_user_errors(seats, needle):
    with pytest.raises(UserError, match=needle):
        simulate_penta(seats, games=10, seed=1)


def test_a_cached_table_is_memory_mapped_and_checked():
    """Row tables are stored as cache entries and memory-mapped back, read-only, after
    their checksum is verified; a damaged entry is not trusted."""
    from dicelab import cache

    F = np.linspace(0.0, 1.0, 100_003)
    cache.store("penta-test-rows", "1", {"F": F, "lo": np.arange(5)})
    got = cache.load_mapped("penta-test-rows", "1", {"F"})
    assert isinstance(got["F"], np.memmap) and not got["F"].flags.writeable
    np.testing.assert_array_equal(got["F"], F)
    np.testing.assert_array_equal(got["lo"], np.arange(5))
    assert cache.load_mapped("penta-test-rows", "2", {"F"}) is None
    path = cache.cache_path("penta-test-rows")
    raw = bytearray(path.read_bytes())
    at = raw.find(F[50_000].tobytes())
    raw[at] ^= 1
    del got
    path.write_bytes(bytes(raw))
    assert cache.load_mapped("penta-test-rows", "1", {"F"}) is None


def test_penta_win_measurement_pairs_each_seat_with_optimal_on_the_same_dice(monkeypatch):
    """measure_penta_win's plan and arithmetic, on stand-in simulations: penta-win at every
    seat, every table on one seed with a stream per turn, the gain as the paired
    difference per chunk with its interval over the chunks."""
    import dicelab.penta.simulate as sim
    from dicelab import seeding
    from dicelab.penta.penta_win import measure_penta_win

    games = 3 * seeding.CHUNK_GAMES
    chunk = seeding.unit_chunk_games(games)  # 16 chunks of 1,536: a tournament's units
    n = np.diff(seeding.chunk_bounds(games, chunk_games=chunk))
    calls = []
    rng = np.random.default_rng(0)

    class Fake:
        def __init__(self, names):
            self.games, self.elapsed_s, self.chunk_games = games, 2.0, chunk
            wins = rng.integers(0, n[:, None] // 2, size=(n.size, len(names)))
            tied = rng.integers(0, 50, size=(n.size, len(names)))
            self.chunk_tallies = {"wins": wins, "tied": tied}

    def fake(names, games, seed, rules, per_chunk, streams, chunk_games, progress=None):
        assert per_chunk and streams == STREAM_PER_TURN and seed == 7
        assert chunk_games == chunk == 1536
        calls.append(list(names))
        return Fake(names)

    monkeypatch.setattr(sim, "simulate_penta", fake)
    m = measure_penta_win(seats=2, games=games, seed=7, ceiling=False)
    assert calls == [["optimal", "optimal"], ["penta-win", "optimal"],
                     ["optimal", "penta-win"]]
    assert m.ceiling is None and m.share_of_gap is None
    assert m.games_per_s == pytest.approx(2 * games / 4.0)
    # equal chunk weights but the last: the mean paired difference is the difference of
    # the seats' mean scores, averaged over the seats
    assert m.gain == pytest.approx(np.mean(m.win_scores) - np.mean(m.optimal_scores),
                                   abs=1e-12)
    lo, hi = m.gain_ci95
    assert lo < m.gain < hi and m.gain_se > 0


@pytest.mark.parametrize("sizes", [(200, 200), (200, 200, 25), (200, 200, 1),
                                   (300, 300, 300, 300)])
def test_the_paired_gains_interval_covers_the_true_gain_95_percent_of_the_time(sizes):
    """paired_gain's 95% interval, over many runs of per-game differences drawn from a
    known distribution (most games equal, as with common dice) and cut into chunks of
    ``sizes`` games, covers the true mean 95% of the time (a 4-SE band of the count); a
    last chunk of one game merged into the one before it keeps the coverage. With equal
    chunks the SE is the textbook one of the chunks' means."""
    from scipy.stats import t

    from dicelab.penta.penta_win import paired_gain

    rng = np.random.default_rng(5)
    values = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    p = np.array([0.1, 0.02, 0.7, 0.03, 0.15])
    runs = 4000
    per_game = rng.choice(values, size=(runs, sum(sizes)), p=p)
    edges = np.cumsum((0, *sizes))
    means = np.stack([per_game[:, a:b].mean(axis=1) for a, b in itertools.pairwise(edges)],
                     axis=1)
    covered = 0
    units = len(sizes) - (sizes[-1] < sizes[0] / 8)
    q = t.ppf(0.975, units - 1)
    for d in means:
        gain, se, c = paired_gain(d, np.array(sizes))
        assert c == units
        assert gain == pytest.approx(float(d @ np.array(sizes)) / sum(sizes), abs=1e-12)
        covered += abs(gain - values @ p) <= q * se
        if len(set(sizes)) == 1:
            assert se == pytest.approx(np.std(d, ddof=1) / math.sqrt(len(d)), rel=1e-12)
    assert abs(covered / runs - 0.95) < 4 * math.sqrt(0.95 * 0.05 / runs)


@pytest.mark.parametrize("seats", [2.0, "2", True, 1, 9, None])
def test_the_penta_win_measurement_refuses_a_bad_table_size_before_any_game(monkeypatch,
                                                                           seats):
    import dicelab.penta.simulate as sim
    from dicelab.penta.penta_win import measure_penta_win

    def refuse(*args, **kwargs):
        raise AssertionError("no game is played")

    monkeypatch.setattr(sim, "simulate_penta", refuse)
    with pytest.raises(UserError, match="penta-win plays at tables of 2 to 8 seats"):
        measure_penta_win(seats=seats, games=64, seed=1, ceiling=False)


@pytest.mark.parametrize("games, chunks", [(32, 2), (33, 2), (34, 3), (20_000, 16),
                                           (2 * 8192 * 8, 16)])
def test_the_penta_win_measurement_at_its_smallest_sizes(monkeypatch, games, chunks):
    """measure_penta_win refuses a run of fewer than two whole chunks of 16 games before
    any game is played; from there its units are a tournament's chunks (16 for a run
    under 131,072 games, 8,192 games each from there), a last chunk under an eighth of
    the first merged into the one before (33 games: 16, 16 and 1, two units; 34: three),
    and the interval over them is finite."""
    import dicelab.penta.simulate as sim
    from dicelab import seeding
    from dicelab.penta.penta_win import MIN_GAMES, measure_penta_win

    assert MIN_GAMES == 32

    def refuse(*args, **kwargs):
        raise AssertionError("no game is played")

    monkeypatch.setattr(sim, "simulate_penta", refuse)
    with pytest.raises(UserError, match="two chunks of 16 games on: games must be at "
                                        "least 32, not 31"):
        measure_penta_win(seats=2, games=MIN_GAMES - 1, seed=1, ceiling=False)
    size = seeding.unit_chunk_games(games)
    n = np.diff(seeding.chunk_bounds(games, chunk_games=size))
    rng = np.random.default_rng(games)

    class Fake:
        def __init__(self, names, **kw):
            assert kw["chunk_games"] == size  # the games the units are made of
            self.games, self.elapsed_s, self.chunk_games = games, 1.0, size
            self.chunk_tallies = {
                "wins": rng.integers(0, n[:, None] // 2 + 1, size=(n.size, len(names))),
                "tied": np.zeros((n.size, len(names)), dtype=np.int64)}

    monkeypatch.setattr(sim, "simulate_penta", Fake)
    m = measure_penta_win(seats=2, games=games, seed=1, ceiling=False)
    lo, hi = m.gain_ci95
    assert m.chunks == chunks and m.gain_se > 0 and lo < m.gain < hi
    assert math.isfinite(lo) and math.isfinite(hi)


def test_an_objective_seat_beside_a_users_policy_plays_the_kernels_games_bit_for_bit():
    """A user's policy at the table sends every seat to the Python referee; the
    objective's seat is then its OnlinePolicy, and plays and scores as the kernel's."""
    user = PolicySpec("penta", "user", "optimal-object", policy=BUILT_IN["optimal"])
    objective = "optimal:utility:theta=0.02"
    mine = simulate_penta([user, objective], games=60, seed=5, per_chunk=True)
    kernel = simulate_penta(["optimal", objective], games=60, seed=5, per_chunk=True)
    for name in ("hist", "box_sum", "box_sq", "upper_bonus", "fifty", "wins", "tied", "beat"):
        assert np.array_equal(getattr(mine, name), getattr(kernel, name)), name
    assert mine.ties == kernel.ties
    assert mine.seat(1).mean_final_score != kernel.seat(0).mean_final_score


# --- penta-win and optimal:OBJECTIVE as policy objects (play, the referee, game logs) -------


def test_a_game_of_play_against_penta_win_to_the_end(every_target, late_points, monkeypatch):
    """A human against penta-win in play's engine, from two late cards (two turns each) to
    the end: before each of its decisions penta-win is shown the table's cards (the
    human's turn of the round played), and every decision it makes is the kernel's for
    those cards (seat_turn, then decide_roll)."""
    from dicelab.config import PENTA_TIE_EPS
    from dicelab.dice import dice_of_rank
    from dicelab.penta import objective_play as op
    from dicelab.penta.scoring import TABLES
    from dicelab.penta.tables import SUBSETS, roll_index
    from dicelab.penta.widget import decide_roll, new_cand_scratch, new_turn_scratch
    from dicelab.play import Player, SeededDice
    from dicelab.play.penta import PentaGame
    from dicelab.registry import parse_policy

    rs = get_rules("seed")

    def late_seat(rules, seat, seats):
        others = np.array([q for q in range(seats) if q != seat])
        return op.frozen_seat(op.SEAT_WIN, R=every_target, H=late_points, opponents=others)

    monkeypatch.setattr(op, "win_seat", late_seat)
    seen, decisions = [], []
    observe, decide = op.OnlinePolicy.observe, op.OnlinePolicy.decide

    def spy_observe(self, cards, seat):
        seen.append((list(cards), seat))
        observe(self, cards, seat)

    def spy_decide(self, state):
        answer = decide(self, state)
        decisions.append((state, list(self._cards), answer))
        return answer

    monkeypatch.setattr(op.OnlinePolicy, "observe", spy_observe)
    monkeypatch.setattr(op.OnlinePolicy, "decide", spy_decide)
    g = PentaGame([Player("you"), Player("c", parse_policy("penta-win", "penta"))],
                  dice=SeededDice(11))
    g.cards = [_card(TWO_OPEN_B), _card(TWO_OPEN)]
    g.start()
    g.round = N_BOXES - 1
    while g.phase != "over":
        if g.phase == "computer":
            g.step()
        else:
            g.stop() if g.phase == "keep" else None
            g.score(g.default_box())
    assert [t["seat"] for t in g.turns] == [0, 1, 0, 1]
    assert all(None not in c.scores for c in g.cards)
    assert seen and all(seat == 1 for _, seat in seen)
    # the human's card as penta-win saw it on its two turns: the human's turn of the
    # round played (one box open, then none)
    assert sorted({c[0].scores.count(None) for c, _ in seen}) == [0, 1]
    V = solve(rs).values
    for state, cards, answer in decisions:
        me, opp = state.card, cards[0]
        X, Mw = new_cand_scratch(), new_turn_scratch()
        op._prepare_turn(late_seat(rs, 1, 2), V, rs.params, TABLES, me.mask, me.up, me.fifty,
                         me.total, np.array([opp.state]), np.array([opp.total]), X, Mw)
        r = roll_index(state.roll)
        d = decide_roll(rs.params, TABLES, V, me.mask, me.up, me.fifty, X, 0, Mw,
                        op.TIE_REL, PENTA_TIE_EPS, r, state.rolls_left)
        want = (BOXES[d] if state.rolls_left == 0
                else tuple(int(f) for f in dice_of_rank(int(SUBSETS[r, d]))))
        assert answer == want
    assert len(decisions) >= 2


@pytest.mark.parametrize("name, seats, message", [
    ("penta-win", 9, "2 to 8 seats"),
    ("penta-win", 1, "2 to 8 seats"),
    ("optimal:at-least:99999", 2, "T"),
])
def test_online_policy_refuses(name, seats, message):
    from dicelab.penta.builtin import family_of
    from dicelab.registry import parse_policy

    with pytest.raises(UserError, match=message):
        spec = parse_policy(name, "penta")
        family_of(spec).logged(spec, 0, seats)


def test_a_watching_policy_refuses_another_table_size():
    from dicelab.penta.builtin import family_of
    from dicelab.registry import parse_policy

    spec = parse_policy("penta-win", "penta")
    policy = family_of(spec).logged(spec, 1, 3)
    assert policy.watches and (policy.seat, policy.seats) == (1, 3)
    with pytest.raises(UserError, match="seated at a table of 3, not 2"):
        policy.observe([Scorecard(), Scorecard()], 1)
    objective = parse_policy("optimal:at-least:300", "penta")
    assert not family_of(objective).logged(objective, 0, 2).watches


def test_clairvoyant_bounds_by_enumeration(monkeypatch):
    """The bounds on the clairvoyant's share at a table of three, on a small stand-in
    distribution and table of every target: enumerate the two others' TOTALs."""
    import dicelab.penta.penta_win as pw

    p = np.array([0.1, 0.2, 0.3, 0.4])
    A = np.array([1.0, 0.95, 0.7, 0.5, 0.2])  # the most P(final >= T), T = 0..4

    class Dist:
        probability = p

    class Table:
        best = A

    monkeypatch.setattr(pw, "score_distribution", lambda name, rs: Dist)
    monkeypatch.setattr(pw, "at_least_table", lambda rs: Table)
    lo = hi = 0.0
    for a in range(4):
        for b in range(4):
            top, k = max(a, b), (a == max(a, b)) + (b == max(a, b))
            w = p[a] * p[b]
            lo += w * A[top + 1]
            hi += w * (k * A[top + 1] + A[top]) / (k + 1)
    got = pw.clairvoyant_bounds(3, "seed")
    assert got == pytest.approx((lo, hi), abs=1e-15)
    assert got[0] < got[1]
    assert pw.clairvoyant_bounds(np.int64(3), "seed") == got
    assert pw.clairvoyant_bounds(101, "seed")[0] >= 0  # beat:100's table is the largest


@pytest.mark.parametrize("seats", [1, 0, 102, 2000, 2.0, "2", True, None])
def test_clairvoyant_bounds_refuse_a_table_they_do_not_bound(monkeypatch, seats):
    """One seat has no one to beat (the bounds said 0), and 2,000 seats overflowed a
    float: both, and seat counts that are not integers, are one UserError, before any
    table is read."""
    import dicelab.penta.penta_win as pw

    class Dist:
        probability = np.full(1576, 1 / 1576)

    class Table:
        best = np.linspace(1.0, 0.0, 1577)

    monkeypatch.setattr(pw, "score_distribution", lambda name, rs: Dist)
    monkeypatch.setattr(pw, "at_least_table", lambda rs: Table)
    with pytest.raises(UserError, match="tables of 2 to 101 seats"):
        pw.clairvoyant_bounds(seats)


@pytest.mark.parametrize("argv, message", [
    (["--seats", "1"], "2 to 8 seats"),
    (["--seats", "9"], "2 to 8 seats"),
    (["--games", "0"], "games"),
    (["--games", "20"], "games must be at least 32, not 20"),
    (["--games", "31"], "games must be at least 32, not 31"),
])
def test_the_penta_win_experiment_refuses(tmp_path, capsys, argv, message):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "penta_win.py"
    spec = importlib.util.spec_from_file_location("penta_win_experiment", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "run"
    assert mod.main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]
    assert not out.exists()


# --- analyse: decisions judged by the objective -----------------------------------------------


def test_logged_turns_are_judged_by_the_recursion_under_at_least(every_target, monkeypatch):
    """judge_turns under at-least:T values a logged turn from a late card as the plain
    recursion does: the turn's start, the box chosen at its last roll (P(final >= T)), and a
    worse box's loss in probability."""
    from types import SimpleNamespace

    from dicelab.penta import objective_play as op
    from dicelab.penta.tables import roll_index

    target = 180
    late = SimpleNamespace(rows=every_target, start=target)  # the late table's solution
    monkeypatch.setattr(op, "solve_objective", lambda obj, rules: late)
    card = _card(TWO_OPEN)
    x = card.total
    roll = [4, 4, 4, 2, 1]
    r = roll_index(roll)
    cols = {"mask": [card.mask] * 2, "up": [card.up] * 2, "fifty": [card.fifty] * 2,
            "total": [x] * 2, "n_rolls": [1, 1], "rolls": [[r, 0, 0]] * 2,
            "keeps": [[0, 0]] * 2, "box": [BOXES.index("fours"), BOXES.index("chance")]}
    jd = op.judge_turns(f"at-least:{target}", get_rules("seed"), *(np.array(v) for v in
                                                                   cols.values()))
    u = lambda t: float(t >= target)  # noqa: E731
    assert jd.start[0] == pytest.approx(objective_value("seed", TWO_OPEN, x, u), abs=1e-9)
    for i, (box, points) in enumerate((("fours", 12), ("chance", 15))):
        after = dict(TWO_OPEN)
        after[box] = points
        want = objective_value("seed", after, x + points, u)
        assert jd.chosen[i, 0] == pytest.approx(want, abs=1e-9)
    # scoring at once, with two rerolls left: rerolling is better, a loss in probability
    assert jd.best[0, 0] == jd.best[1, 0] > max(jd.chosen[:, 0])
    assert not jd.tied[:, 0].any()
    assert jd.code[0, 0] == jd.code[1, 0] >= 0  # a keep's rank
    assert jd.outcome[target] == 1.0 and jd.outcome[target - 1] == 0.0


def _logged_session(capsys, tmp_path, policy: str, games: int = 3):
    log = tmp_path / "games.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", policy, "--vs", "optimal", "-n", "50",
                                    "--seed", "4", "--log", str(log), "--log-games",
                                    str(games)])
    assert code == 0, err
    return log


def test_analyse_judges_an_objective_policy_by_its_objective(capsys, tmp_path):
    """A whole session: games of optimal:utility:theta=0.02 against optimal logged by
    simulate, then analysed. The objective's seat is judged in its certainty equivalent (it
    loses nothing: it plays its own best), optimal's in expected points; under --objective
    every decision of optimal is judged by the objective: its best and chosen values are the
    advice's (rank_objective_options) for that card, and luck + skill adds up."""
    theta = 0.02
    obj = f"utility:theta={theta}"
    log = _logged_session(capsys, tmp_path, f"optimal:{obj}")
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["measure"] == {"penta": f"{obj}, score"}
    by_policy = {p["policy"]: p for p in data["players"]}
    assert by_policy[f"optimal:{obj}"]["measure"] == obj
    assert by_policy[f"optimal:{obj}"]["total_loss"] == 0.0
    assert by_policy["optimal"]["measure"] == "score"
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json", "--objective", obj])
    assert code == 0, err
    data = json.loads(out)
    assert data["measure"] == {"penta": obj}
    decisions = [d for d in data["decisions"] if d["policy"] == "optimal"]
    assert decisions and all(d["measure"] == obj for d in decisions)
    from dicelab.gamelog import read_games

    games = read_games(str(log))
    checked = 0
    for d in decisions[:40]:
        g = games[d["game"]]
        card = _replayed_card(g, d["seat"], d["turn"])
        roll = [int(f) for f in d["roll"].split()]
        opts = rank_objective_options(card, roll, d["rolls_left"], obj, "seed")
        assert d["value_best"] == pytest.approx(opts[0].expected_final_score, abs=1e-9)
        chosen = next(o for o in opts if _label(o) == d["chosen"]) if d["loss"] > 0 else opts[0]
        assert d["value_chosen"] == pytest.approx(chosen.expected_final_score, abs=1e-9)
        assert d["loss"] == pytest.approx(chosen.loss, abs=1e-9)
        checked += 1
    assert checked
    for p in data["per_game"]:
        assert abs(p["residual"]) < 1e-9
    # optimal does not play for the certainty equivalent: it loses some of it
    assert sum(p["total_loss"] for p in data["per_game"] if p["policy"] == "optimal") > 0


def _label(o) -> str:
    return f"box {o.box}" if o.kind == "box" else "keep " + (" ".join(map(str, o.keep))
                                                             or "nothing")


def _replayed_card(g, seat: int, turn: int) -> Scorecard:
    """Seat ``seat``'s card at the start of its ``turn``-th turn of logged game ``g``
    (``turn`` 14: its final card)."""
    from dicelab.penta.scoring import TABLES, roll_box_scores

    scores: list[int | None] = [None] * N_BOXES
    bonuses = 0
    for t in [t for t in g.turns if t.seat == seat][:turn - 1]:
        got = np.empty(N_BOXES, dtype=np.int64)
        bonus = roll_box_scores(g.rules.params, TABLES, t.mask, t.fifty, t.roll_ids[-1], got)
        scores[t.box] = int(got[t.box])
        bonuses += bonus > 0
    card = Scorecard(tuple(scores), bonuses)
    if turn <= N_BOXES:
        t = [t for t in g.turns if t.seat == seat][turn - 1]
        assert (card.mask, card.up, card.fifty, card.total) == (t.mask, t.up, t.fifty,
                                                                t.total)
    return card


def test_analyse_objective_bad_input(capsys, tmp_path):
    from dicelab.gamelog import new_game_header, write_games

    log = tmp_path / "none.jsonl"
    farkle = tmp_path / "farkle.jsonl"
    header = new_game_header("farkle", "default", [{"name": "me", "policy": "human"}],
                             target=500)
    write_games(farkle, [(header, [{"seat": 0, "rolls": [[1, 1, 1, 5, 2, 3]],
                                    "keeps": [[1, 1, 1]], "end": "bank"}])])
    alone = tmp_path / "alone.jsonl"
    write_games(alone, [(new_game_header("penta", "seed", [{"name": "me",
                                                             "policy": "penta-win"}]),
                         [{"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [],
                           "box": "chance"}])])
    for path, argv, needle in (
            (alone, [], "penta-win is judged against the other seats, at tables of 2 to 8, "
                        "not 1"),
            (log, ["--objective", "at-most:3"], "unknown objective"),
            (log, ["--objective", "win-shares"], "or win-share"),
            (log, ["--objective", "at-least:5000"], "possible final score"),
            (farkle, ["--objective", "at-least:300"], "--objective is for Penta")):
        code, out, err = run_cli(capsys, ["analyse", str(path), *argv])
        assert code == 2 and not out
        assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err


def test_analyse_says_which_table_it_solves_before_a_long_solve(capsys, tmp_path,
                                                                monkeypatch):
    """Judging by an objective whose table is not in the cache starts a solve of minutes:
    the command says which table, once it is sure to solve it (after the log is read and
    the memory checked), not before an error found earlier. The solve itself is replaced by
    one that stops at once, so the notice is seen to come before it."""
    from dicelab.gamelog import new_game_header, write_games
    from dicelab.penta import objectives

    log = tmp_path / "one.jsonl"
    write_games(log, [(new_game_header("penta", "seed", [{"name": "me", "policy": "optimal"}]),
                       [{"seat": 0, "rolls": [[1, 2, 3, 4, 6]], "keeps": [],
                         "box": "chance"}])])

    def stop(*args, **kwargs):
        raise UserError("solve stopped")

    objectives.release_tables()
    monkeypatch.setattr(objectives, "solve_rows", stop)
    notice = ("dicelab: solving the Penta at-least:123 table (rules 'seed'): this can take "
              "minutes\n")
    code, out, err = run_cli(capsys, ["analyse", str(log), "--objective", "at-least:123"])
    assert (code, out, err) == (2, "", notice + "error: solve stopped\n")
    for argv in (["--objective", "at-least:5000"], ["--objective", "at-least:123", "--game",
                                                     "farkle"]):
        code, out, err = run_cli(capsys, ["analyse", str(log), *argv])
        assert code == 2 and not out and "solving" not in err
        assert err.startswith("error: ") and err.count("\n") == 1, err


# --- analyse: penta-win's decisions judged by its win share --------------------------------


def _hand_turn(filled: dict[str, int], entry):
    """One turn from the card ``filled``, by hand over the multisets of dice (plain Python,
    no dicelab tables): ``entry(box, score, points)`` values writing ``score`` into a box,
    which adds ``points`` to TOTAL (a number, or an array of numbers maximised
    elementwise). Returns (the turn's start value, ``best(roll, left)`` the best
    option's value at a sorted roll with ``left`` rerolls, ``keep(kept, left)`` a keep's,
    ``box(roll, b)`` a box's)."""
    from collections import Counter

    from naive_penta import allowed_scores, immediate_points

    @functools.cache
    def outcomes(n: int):
        out = []
        for o in itertools.combinations_with_replacement(range(1, 7), n):
            ways = math.factorial(n)
            for c in Counter(o).values():
                ways //= math.factorial(c)
            out.append((o, ways / 6 ** n))
        return out

    @functools.cache
    def box(roll, b):
        scores, bonus = allowed_scores("seed", filled, roll)
        return entry(b, scores[b], immediate_points(filled, b, scores[b], bonus))

    @functools.cache
    def best(roll, left):
        if left == 0:
            scores, _ = allowed_scores("seed", filled, roll)
            return _most([box(roll, b) for b in scores])
        kept = {tuple(sorted(k)) for n in range(6) for k in itertools.combinations(roll, n)}
        return _most([keep(k, left) for k in kept])

    @functools.cache
    def keep(kept, left):
        return sum(p * best(tuple(sorted(kept + o)), left - 1)
                   for o, p in outcomes(5 - len(kept)))

    return keep((), 3), best, keep, box


def _most(values):
    return values[0] if len(values) == 1 else np.maximum.reduce(values) \
        if isinstance(values[0], np.ndarray) else max(values)


def _share_by_hand(pmfs) -> np.ndarray:
    """The win share of each final TOTAL against opponents whose final TOTALs have the
    probabilities ``pmfs``, by enumerating their TOTALs (a top shared by k + 1 counts
    1 / (k + 1))."""

    m = np.arange(MAX_TOTAL + 1)
    want = np.zeros(MAX_TOTAL + 1)
    for combo in itertools.product(*(np.flatnonzero(p) for p in pmfs)):
        w = math.prod(p[o] for p, o in zip(pmfs, combo, strict=True))
        top = max(combo)
        k = combo.count(top)
        want += w * (np.where(m > top, 1.0, 0.0) + np.where(m == top, 1.0 / (k + 1), 0.0))
    return want


def _late_win_seat(every_target, late_points):
    """A stand-in for objective_play.win_seat: penta-win's seat on the late tables, its
    arrays read-only as the simulation kernel takes them."""
    from dicelab.penta import objective_play as op

    return lambda rules, seat, seats: op.frozen_seat(
        op.SEAT_WIN, R=every_target, H=late_points,
        opponents=np.array([q for q in range(seats) if q != seat], dtype=np.int64))


def _hand_win_turn(card: Scorecard, opponents: list[Scorecard]):
    """penta-win's turn from ``card`` (one or two boxes open) against ``opponents``, by hand
    (:func:`_hand_turn`): a box entry reaching TOTAL y is worth u(y) plus, with a box
    still open after it, the sum over d of du(y + d) times the most P(points of the last
    turn >= d) (maximised for every d over the multisets of dice); u the win share against
    the opponents' exact final TOTALs, enumerated."""
    filled = {BOXES[i]: sc for i, sc in enumerate(card.scores) if sc is not None}
    u = _share_by_hand([np.eye(MAX_TOTAL + 1)[c.total] if None not in c.scores
                        else score_distribution("optimal", "seed", card=c).probability
                        for c in opponents])
    du = np.diff(u, prepend=0.0)
    D = 200  # beyond every last turn's points
    d = np.arange(1, D + 1)

    @functools.cache
    def G(b, score):  # the most P(points of the last turn >= d) after the entry, d = 1..D
        g = _hand_turn(dict(filled, **{b: score}), lambda box, sc, pts: (pts >= d) * 1.0)[0]
        assert g[-1] == 0.0
        return g

    def entry(b, score, pts):
        y = card.total + pts
        if len(filled) == N_BOXES - 1:  # the last box: the final TOTAL
            return u[y]
        return u[y] + float(du[y + 1:y + D + 1] @ G(b, score))

    return _hand_turn(filled, entry)


def test_logged_penta_win_turns_are_judged_by_the_win_share_by_hand(every_target, late_points,
                                                                     monkeypatch):
    """judge_win_turns on a turn from a late card (two boxes open) against a late
    opponent: the turn's start, the best option at the first roll and each box written at
    once are the win shares penta-win values them by, computed by hand."""
    from dicelab.penta import objective_play as op
    from dicelab.penta.tables import roll_index

    monkeypatch.setattr(op, "win_seat", _late_win_seat(every_target, late_points))
    me, opp = _card(TWO_OPEN), _card(TWO_OPEN_B)
    start, best, _, box = _hand_win_turn(me, [opp])
    roll = (1, 2, 4, 4, 4)
    r = roll_index(list(roll))
    cols = {"mask": [me.mask] * 2, "up": [me.up] * 2, "fifty": [me.fifty] * 2,
            "total": [me.total] * 2, "n_rolls": [1, 1], "rolls": [[r, 0, 0]] * 2,
            "keeps": [[0, 0]] * 2, "box": [BOXES.index("fours"), BOXES.index("chance")]}
    jd = op.judge_win_turns(get_rules("seed"), *(np.array(v) for v in cols.values()),
                            np.array([[opp.state]] * 2), np.array([[opp.total]] * 2),
                            np.array([1, 1]))
    assert jd.objective is None and jd.outcome is None
    assert jd.start[0] == jd.start[1] == pytest.approx(start, abs=1e-9)
    assert jd.best[0, 0] == pytest.approx(best(roll, 2), abs=1e-9)
    for i, b in enumerate(("fours", "chance")):
        assert jd.chosen[i, 0] == pytest.approx(box(roll, b), abs=1e-9)
    # writing a box at once, with two rerolls left, loses win share
    assert not jd.tied[:, 0].any() and jd.best[0, 0] > max(jd.chosen[:, 0])
    assert 0.0 < jd.chosen[0, 0] < 1.0


def _swap_last_boxes(log, out) -> None:
    """Write ``log`` to ``out`` with seat 0's boxes of its last two turns swapped in every
    game (and no result lines: the totals change)."""
    lines, turns = [], 0
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        if "dicelab_log" in rec:
            turns = 0
        if "seat" in rec:
            turns += 1
        if "result" not in rec:
            lines.append(rec)
        if turns == 2 * N_BOXES - 1 and "seat" in rec:
            a, b = lines[-3], lines[-1]
            a["box"], b["box"] = b["box"], a["box"]
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))


def _checked_by_hand(data: dict, games, seat: int) -> int:
    """Check every decision of ``seat`` (of two; seat 0 plays first) on its last two turns
    of the analysed ``games`` (``data``: ``analyse --json``) against the win shares by hand
    (its best and chosen option and the loss), against the other seat's card at that
    moment; the number of decisions checked."""
    checked = 0
    for game, g in enumerate(games):
        for turn in (N_BOXES - 1, N_BOXES):
            me = _replayed_card(g, seat, turn)
            opp = _replayed_card(g, 1 - seat, turn + seat)  # seat 0 has played its turn
            _, best, keep, box = _hand_win_turn(me, [opp])
            for dd in data["decisions"]:
                if (dd["game"], dd["seat"], dd["turn"]) != (game, seat, turn):
                    continue
                roll = tuple(int(f) for f in dd["roll"].split())
                assert dd["value_best"] == pytest.approx(best(roll, dd["rolls_left"]),
                                                         abs=1e-9)
                kind, _, what = dd["chosen"].partition(" ")
                want = (box(roll, what) if kind == "box" else
                        keep(tuple(int(f) for f in what.split() if f != "nothing"),
                             dd["rolls_left"]))
                assert dd["value_chosen"] == pytest.approx(want, abs=1e-9)
                assert dd["loss"] == pytest.approx(dd["value_best"] - want, abs=1e-9)
                checked += 1
    return checked


@pytest.mark.slow  # 5 s; fast twin: the win share judged by hand, through judge_win_turns
def test_analyse_judges_penta_win_by_its_win_share(every_target, late_points, monkeypatch,
                                                   capsys, tmp_path):
    """A whole session on the small variant (penta-win's tables hold the last two layers
    only: before its last two turns every option is worth 0 to it, so it plays optimal's
    choice): games of penta-win against optimal logged by simulate, then analysed through
    the CLI. penta-win is judged by its win share against the other seat's card at each
    turn (optimal in points): on its last two turns every decision's best and chosen
    values are the win shares computed by hand; it loses nothing, its outcome is its share
    of each game, and outcome - initial = luck + skill + opponents. The same games with
    its last two boxes swapped lose what the hand computation says."""
    from dicelab.gamelog import read_games
    from dicelab.penta import objective_play as op

    monkeypatch.setattr(op, "win_seat", _late_win_seat(every_target, late_points))
    log = _logged_session(capsys, tmp_path, "penta-win", games=2)
    swapped = tmp_path / "swapped.jsonl"
    _swap_last_boxes(log, swapped)
    lost = []
    for path in (log, swapped):
        code, out, err = run_cli(capsys, ["analyse", str(path), "--json"])
        assert code == 0, err
        data = json.loads(out)
        assert data["measure"] == {"penta": "win-share, score"}
        assert data["units"]["penta win-share"].startswith("win share")
        by_policy = {p["policy"]: p for p in data["players"]}
        assert by_policy["penta-win"]["measure"] == "win-share"
        assert by_policy["optimal"]["measure"] == "score"
        games = read_games(str(path))
        for p in data["per_game"]:
            assert abs(p["residual"]) < 1e-9
            if p["policy"] == "penta-win":
                g = games[p["game"]]
                top = max(g.totals)
                assert p["outcome"] == (1.0 / g.totals.count(top) if g.totals[0] == top
                                        else 0.0)
        assert _checked_by_hand(data, games, 0) >= 4
        total = sum(dd["loss"] for dd in data["decisions"] if dd["policy"] == "penta-win")
        assert by_policy["penta-win"]["total_loss"] == pytest.approx(total, abs=1e-12)
        lost.append(by_policy["penta-win"]["total_loss"])
    assert lost[0] == 0.0 < lost[1]  # penta-win plays its best; the swapped boxes lose
    # --objective win-share: optimal (seat 1) judged by the win share too, against seat 0's
    # card after its turn of the round
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json", "--objective",
                                      "win-share"])
    assert code == 0, err
    data = json.loads(out)
    assert data["measure"] == {"penta": "win-share"}
    assert _checked_by_hand(data, read_games(str(log)), 1) >= 4
    for p in data["per_game"]:
        assert abs(p["residual"]) < 1e-9
    code, out, err = run_cli(capsys, ["analyse", str(swapped)])
    assert code == 0, err
    text = " ".join(out.split())
    assert "penta: the costliest decisions (loss in win share" in text
    assert "players judged by win-share, losses in win share" in text
    assert "outcome - initial = luck + skill + opponents; opponents: the change between its " \
           "turns" in text


# --- the objective's table -------------------------------------------------------------------


class _FakeDistribution:
    """What the table reads of a score distribution, each number telling its column."""

    def __init__(self, policy: str, base: float):
        self.policy, self.mean, self.sd = policy, base + 0.25, base + 0.5
        self.percentiles = {q: int(base) + q for q in (1, 50, 99)}
        self.p_upper_bonus, self.p_penta_fifty, self.mean_penta_bonuses = 0.5, 0.25, base
        self.box_means = [base + k for k in range(N_BOXES)]
        self.from_cache, self.compute_s, self.differ_from_optimal = True, 1.0, 1.5

    def p_at_least(self, target: int) -> float:
        return target / 1000


def _table_rows(stdout: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in stdout.splitlines()
            if line.startswith("│")]


@pytest.mark.parametrize("text", ["mean", "at-least:250", "at-least:260",
                                  "utility:theta=0.01", "beat:2"])
def test_objective_table_has_each_row_once_and_optimal_once(capsys, text):
    from types import SimpleNamespace

    from dicelab.cli import render

    obj = parse_objective(text)
    mean = obj.kind == "mean"
    policy = "optimal" if mean else f"optimal:{obj.name}"
    sol = SimpleNamespace(rules=get_rules("seed"), from_cache=True, solve_s=2.0, value=7.0,
                          raw_value=3.0)
    report = SimpleNamespace(solution=sol, objective=obj, optimal_value=7.0 if mean else 6.0,
                             policy=_FakeDistribution(policy, 100.0),
                             optimal=_FakeDistribution("optimal", 100.0 if mean else 200.0))
    render.penta_objective(report)
    out = capsys.readouterr().out
    rows = _table_rows(out)
    labels = [r[0] for r in rows]
    assert len(labels) == len(set(labels)), labels
    assert out.count("policy optimal") == 1 + (not mean)  # optimal's column once
    assert all(len(r) == (2 if mean else 3) for r in rows)
    assert "expected final score" in labels and "P(final score >= 300)" in labels
    assert ("decisions per game differing from optimal" in labels) is not mean
    assert rows[0][0] == obj.unit
    if obj.kind == "at-least":  # its own target is the first row, at full precision
        assert rows[0] == [obj.unit, "700.00000000%", "600.00000000%"]  # a probability
    if not mean:  # then the gain, optimal's own 0
        zero = "0.00000000%" if obj.kind != "utility" else "0.000000"
        assert rows[1] == ["gain over optimal",
                           "100.00000000%" if obj.kind != "utility" else "1.000000", zero]


@pytest.mark.slow
def test_solve_objective_mean_prints_optimal_once(capsys):
    code, stdout, err = run_cli(capsys, ["solve", "penta", "--objective", "mean"])
    assert code == 0, err
    rows = _table_rows(stdout)
    labels = [r[0] for r in rows]
    assert len(labels) == len(set(labels)) and all(len(r) == 2 for r in rows), rows
    assert stdout.count("policy optimal") == 1
    assert rows[0][0] == "expected final score" and float(rows[0][1]) == pytest.approx(
        score_distribution("optimal", "seed").mean, abs=1e-6)
