"""Penta policies users write (dicelab.penta.policy, the referee, dicelab.user_policy): a
copy of a built-in policy plays the kernel's games bit for bit; every illegal answer and
every exception in a policy is one honest error; seeds reproduce; a log of a user's
games is analysed against optimal; the report card."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli

from dicelab.errors import UserError
from dicelab.penta.evaluate import DECISION_CLASSES, evaluate_penta
from dicelab.penta.policies import Scorecard
from dicelab.penta.policy import BUILT_IN, FunctionPolicy, State, ask, penta_policy, points_of
from dicelab.penta.rules import get_rules
from dicelab.penta.simulate import CHUNK_TALLIES, PentaPlan, RefereePlan, simulate_penta
from dicelab.penta.solver import solve
from dicelab.registry import PolicySpec, parse_policy
from dicelab.rng import STREAM_PER_CHUNK, STREAM_PER_TURN
from dicelab.runner import PER_CHUNK

EXAMPLES = "docs/examples/policies/penta_rules.py"
SEED = get_rules("seed")

#: A user's copy of the built-ins, written from the public widget: each turn's choices
#: of analyse_turn under the policy's values (greedy: zeros; optimal: the solved values),
#: worked out once per turn (its three decisions read the same analysis).
COPY = textwrap.dedent("""
    from functools import lru_cache

    from dicelab import dice
    from dicelab.penta.policies import analyse_turn, policy_values
    from dicelab.penta.rules import BOX_NAMES, get_rules
    from dicelab.penta.tables import ROLL_BASE, roll_index

    @lru_cache(maxsize=4)
    def _turn(values_of, mask, up, fifty):
        rules = get_rules("seed")
        return analyse_turn(policy_values(values_of, rules), rules, mask, up, fifty)

    def _decide(values_of, card, roll, rolls_left):
        t = _turn(values_of, card.mask, card.up, card.fifty)
        r = roll_index(roll)
        if rolls_left == 0:
            return BOX_NAMES[int(t.box[r])]
        keep = (t.play2 if rolls_left == 2 else t.play1)[ROLL_BASE + r]
        return dice.dice_of_rank(int(keep))

    def greedy_copy(card, roll, rolls_left):
        return _decide("greedy", card, roll, rolls_left)

    class Copy:
        game = "penta"

        def __init__(self, values_of):
            self.values_of, self.name = values_of, f"{values_of}-copy"

        def decide(self, state):
            return _decide(self.values_of, state.card, state.roll, state.rolls_left)

    optimal_copy = Copy("optimal")
    greedy_object = Copy("greedy")
""")


@pytest.fixture
def copies(tmp_path):
    path = tmp_path / "copies.py"
    path.write_text(COPY)
    return path


BOOKS = ("hist", "box_sum", "box_sq", "upper_bonus", "fifty", "bonus_sum", "bonus_sq", "wins",
         "tied", "beat")


@pytest.mark.parametrize("streams, second", [
    # 5.5 s, and optimal's block (7 s when no test built it yet); fast twin: per turn, with
    # greedy's copy as an object (the same referee and widget, the block the tier builds)
    pytest.param(STREAM_PER_CHUNK, "optimal", marks=pytest.mark.slow),
    (STREAM_PER_TURN, "greedy")])
def test_copies_of_the_built_ins_play_the_kernels_games_bit_for_bit(copies, streams, second):
    """A copy as a function (greedy's) and one as an object with ``decide``."""
    seats = [parse_policy(f"{copies}:greedy_copy", "penta"),
             parse_policy(f"{copies}:{'optimal_copy' if second == 'optimal' else 'greedy_object'}",
                          "penta")]
    assert [s.family for s in seats] == ["user", "user"]
    mine = simulate_penta(seats, games=60, seed=31, streams=streams, per_chunk=True)
    kernel = simulate_penta(["greedy", second], games=60, seed=31, streams=streams,
                            per_chunk=True)
    for name in BOOKS:
        assert np.array_equal(getattr(mine, name), getattr(kernel, name)), name
    assert mine.ties == kernel.ties
    assert mine.seat(0).mean_final_score == kernel.seat(0).mean_final_score
    for name, books in kernel.chunk_tallies.items():  # what tournaments read
        assert np.array_equal(mine.chunk_tallies[name], books), name
    # a sequential test's units, a range at a time: the referee's plan plays the kernel's
    built = [parse_policy("greedy", "penta"), parse_policy(second, "penta")]
    ref = RefereePlan(tuple(seats), "seed", 31, 40, streams=streams, chunk_games=8)
    ker = PentaPlan(tuple(built), "seed", 31, 40, per_chunk=True, streams=streams,
                    chunk_games=8)
    a, b = ref.run_range(1, 4), ker.run_range(1, 4)
    for name in CHUNK_TALLIES:
        assert a[PER_CHUNK + name].shape[0] == 3
        assert np.array_equal(a[PER_CHUNK + name], b[PER_CHUNK + name]), name


def test_the_built_in_policy_objects_read_the_kernels_tables():
    copy = PolicySpec("penta", "user", "greedy-object", policy=BUILT_IN["greedy"])
    a = simulate_penta([copy], games=200, seed=8)
    b = simulate_penta(["greedy"], games=200, seed=8)
    assert np.array_equal(a.hist, b.hist) and np.array_equal(a.box_sum, b.box_sum)


def test_seeds_reproduce_and_progress_reaches_the_total():
    spec = parse_policy(f"{EXAMPLES}:chase_penta", "penta")
    seen = []
    a = simulate_penta([spec, "greedy"], games=120, seed=5,
                       progress=lambda d, t: seen.append((d, t)))
    b = simulate_penta([spec, "greedy"], games=120, seed=5)
    c = simulate_penta([spec, "greedy"], games=120, seed=6)
    assert np.array_equal(a.hist, b.hist) and np.array_equal(a.beat, b.beat)
    assert not np.array_equal(a.hist, c.hist)
    assert seen[-1] == (120, 120) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert a.hist.sum() == 240 and a.wins.sum() + a.ties == 120


def test_the_examples_score_as_their_rules_say():
    # most_points never rerolls: every turn is one roll and one box
    r = simulate_penta([parse_policy(f"{EXAMPLES}:most_points", "penta")], games=300, seed=2)
    s = r.seat(0)
    assert 60 < s.mean_final_score.mean < 160, s.mean_final_score
    chase = simulate_penta([parse_policy(f"{EXAMPLES}:chase_penta", "penta")], games=300,
                           seed=2).seat(0)
    # chasing five of a kind fills the Penta box with 50 far more often than one roll
    assert chase.p_penta_fifty.p > 3 * s.p_penta_fifty.p


def test_ask_checks_every_answer():
    card = Scorecard.parse("sixes=18,chance=20")
    state = State(card, (1, 2, 2, 5, 6), 2, SEED)

    def answering(answer):
        return penta_policy(lambda card, roll, left: answer, name="p")

    assert ask(answering([2, 5, 2]), state) == (2, 2, 5)
    assert ask(answering(np.array([6])), state) == (6,)
    assert ask(answering("twos"), state._replace(rolls_left=0)) == "twos"
    for answer, rolls_left, says in [
        ([3], 2, "not all in the roll"),
        ([2, 2, 2], 1, "not all in the roll"),
        ("chance", 2, "with rolls left, answer the dice to keep"),
        (None, 2, "a sequence of faces"),
        ([2.5], 2, "a sequence of faces"),
        ([2, 2], 0, "with no roll left, answer the box"),
        ("sixes", 0, "sixes is filled"),
        ("yahtzee", 0, "no such box"),
    ]:
        with pytest.raises(UserError) as err:
            ask(answering(answer), state._replace(rolls_left=rolls_left))
        msg = str(err.value)
        assert says in msg and "policy p answered" in msg, msg
        assert "card 'sixes=18,chance=20'" in msg and "roll 1 2 2 5 6" in msg, msg


def test_a_joker_goes_only_where_the_rules_allow():
    # seed rules, Penta box 50, upper box of the face open: the joker must go there
    card = Scorecard.parse("penta=50")
    state = State(card, (4, 4, 4, 4, 4), 0, SEED)
    assert list(points_of(card, state.roll)) == ["fours"] and state.penta_bonus() == 100
    with pytest.raises(UserError, match="the rules put this roll in fours, not chance"):
        ask(penta_policy(lambda c, r, left: "chance", name="p"), state)


def test_what_loads_as_a_penta_policy(tmp_path):
    (tmp_path / "p.py").write_text(textwrap.dedent("""
        def three(card, roll, rolls_left):
            return roll if rolls_left else "chance"
        def four(my, opp, turn_points, dice_left):
            return turn_points >= 300
        def two(card, roll):
            return roll
        class Obj:
            game = "penta"
            name = "obj"
            def decide(self, state):
                return "chance"
        obj = Obj()
    """))
    three = parse_policy(f"{tmp_path}/p.py:three")
    assert (three.game, three.family) == ("penta", "user")
    assert isinstance(three.policy, FunctionPolicy)
    assert parse_policy(f"{tmp_path}/p.py:obj", "penta").policy.name == "obj"
    assert parse_policy(f"{tmp_path}/p.py:four").game == "farkle"
    with pytest.raises(UserError, match="is a farkle policy, not penta"):
        parse_policy(f"{tmp_path}/p.py:four", "penta")
    with pytest.raises(UserError, match=re.escape(f"'{tmp_path}/p.py:two' takes 2 positional "
                                                  "parameters")):
        parse_policy(f"{tmp_path}/p.py:two")


BAD = {
    "keeps_a_seven": ("def p(card, roll, rolls_left):\n    return [7] if rolls_left else "
                      "'chance'\n", "not all in the roll"),
    "filled_box": ("def p(card, roll, rolls_left):\n    return roll if rolls_left else "
                   "'chance'\n", "chance is filled"),
    "box_too_early": ("def p(card, roll, rolls_left):\n    return 'chance'\n",
                      "with rolls left, answer the dice to keep"),
    "raises": ("def p(card, roll, rolls_left):\n    return {}[roll]\n", "KeyError"),
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("command", ["simulate", "evaluate"])
def test_illegal_answers_and_raising_code_are_one_error_and_exit_2(tmp_path, capsys, name,
                                                                  command):
    text, says = BAD[name]
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    out = tmp_path / "out"
    argv = (["simulate", "-s", f"{path}:p", "--vs", "optimal"] if command == "simulate"
            else ["evaluate", f"{path}:p", "--seed", "1"])
    code, stdout, err = run_cli(capsys, [*argv, "--games", "20", "--json", "--out", str(out)])
    assert code == 2, err
    assert err.startswith("error: ") and says in err and "Traceback" not in err, err
    assert "policy p" in err and "roll " in err and "rolls left" in err, err
    assert not out.exists() and stdout == ""
    if name == "raises":  # the user's own frames, not dicelab's
        frames = err.split("\n", 1)[1]
        assert f"{path}:2 in p" in frames and "dicelab/" not in frames, err
    else:
        assert err.count("\n") == 1, err


def test_a_log_of_a_users_games_is_analysed_against_optimal(tmp_path, capsys):
    log = tmp_path / "games.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", f"{EXAMPLES}:chase_penta", "--vs",
                                    "optimal", "--games", "30", "--seed", "4", "--log",
                                    str(log), "--log-games", "5", "--json"])
    assert code == 0, err
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json"])
    assert code == 0, err
    players = {p["policy"]: p for p in json.loads(out)["players"]}
    assert players["optimal"]["total_loss"] == 0.0
    mine = players[f"{EXAMPLES}:chase_penta"]
    assert mine["decisions"] > 5 * 13 and mine["total_loss"] > 10


def test_analysing_a_log_does_not_run_the_policy_file_it_names(tmp_path, capsys):
    """The log only names the policy: a file changed since the games were played (here:
    one that would leave a mark) is not imported, and the games are judged by the
    expected final score."""
    log = tmp_path / "games.jsonl"
    code, _, err = run_cli(capsys, ["simulate", "-s", f"{EXAMPLES}:most_points", "--games",
                                    "2", "--seed", "1", "--log", str(log), "--json"])
    assert code == 0, err
    policy = tmp_path / "mine.py"  # never imported in this process
    log.write_text(log.read_text().replace(EXAMPLES, str(policy)))
    mark = tmp_path / "imported"
    policy.write_text(f"open({str(mark)!r}, 'w').close()\n{Path(EXAMPLES).read_text()}")
    code, out, err = run_cli(capsys, ["analyse", str(log), "--json"])
    assert code == 0 and not mark.exists(), err
    result = json.loads(out)
    assert result["measure"] == {"penta": "score"}
    assert [p["policy"] for p in result["players"]] == [f"{policy}:most_points"]


def test_the_report_card_of_optimal_loses_nothing():
    e = evaluate_penta("optimal", games=20, seed=3)
    assert e.exact and e.mean_final_score.mean == pytest.approx(solve(SEED).expected_score)
    assert set(e.losses) == set(DECISION_CLASSES)
    assert all(c.per_game.mean == 0.0 and c.decisions > 0 for c in e.losses.values())
    assert e.total_loss.mean == 0.0
    d = e.to_dict()
    assert d["mean_exact"] and d["loss_by_decision"]["box"]["decisions"] == 20 * 13


def test_the_report_cards_all_row_is_in_its_json(capsys):
    """The row ``all`` (every decision: their count and mean loss) of the printed report
    card is in ``--json`` too (it held only the classes' rows and the loss per game).
    (optimal, whose tables the test before loaded: it loses nothing, 0.000 per decision.)"""
    argv = ["evaluate", "optimal", "--game", "penta", "-n", "5", "--seed", "2"]
    code, text, err = run_cli(capsys, argv)
    assert code == 0, err
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    d = json.loads(out)
    n = sum(c["decisions"] for c in d["loss_by_decision"].values())
    assert d["total_decisions"] == n > 5 * 13
    assert d["total_loss_per_decision"] == pytest.approx(
        d["total_loss_per_game"] * 5 / n, rel=1e-12)
    row = next(line for line in text.splitlines() if "\u2502 all " in line).split("\u2502")
    # no loss at all measures no error: no interval
    assert [c.strip() for c in row[2:4]] == [str(n), f"{d['total_loss_per_decision']:.3f} [n/a]"]


@pytest.mark.slow  # solves the objective (10 s); fast twin: the next test
def test_the_report_card_of_an_objective_judges_it_in_expected_final_score(monkeypatch):
    """optimal:OBJECTIVE plays its own objective's best, not optimal's: the report card
    counts what its decisions give up in expected final score (what ``analyse
    --objective mean`` finds in the same games), not the nothing it loses by its own
    objective. (Its mean is simulated here: the losses do not depend on how the mean is
    found, and the exact one is the next slow test's.)"""
    from dicelab.analyse import analyse_games
    from dicelab.gamelog import format_games, parse_lines
    from dicelab.logplay import play_games
    from dicelab.penta.builtin import Objective
    from dicelab.penta.evaluate import class_losses

    monkeypatch.setattr(Objective, "has_distribution", lambda self, spec: False)
    policy = "optimal:utility:theta=0.02"
    e = evaluate_penta(policy, games=4, seed=5)
    assert not e.exact and e.total_loss.mean > 0
    played = play_games("penta", [policy], games=4, seed=5)
    records = parse_lines(format_games(played).splitlines(), "<games>", game="penta")
    losses, total, per_decision = class_losses(
        analyse_games(records, objective="mean").decisions, 4)
    assert e.losses == losses and e.total_loss == total
    assert e.loss_per_decision == per_decision


@pytest.mark.parametrize("name", ["optimal:at-least:300", "optimal:utility:theta=0.01",
                                  "optimal:beat:1"])
def test_the_report_card_of_an_objective_reads_its_exact_distribution(name, monkeypatch):
    """Every objective's policy has an exact score distribution (the one ``solve penta
    --objective`` and ``compare --exact`` read): the report card's mean and SD are that
    distribution's, and no game is simulated for them. (The distribution and the games
    played move by move are optimal's here, standing in for the objective's, whose solve
    and forward pass take minutes: the slow twin below.)"""
    import dataclasses

    from dicelab import logplay
    from dicelab.penta import simulate
    from dicelab.penta.builtin import Objective
    from dicelab.penta.distribution import score_distribution

    stand_in = dataclasses.replace(score_distribution("optimal", SEED), policy=name)
    monkeypatch.setattr(Objective, "distribution", lambda self, spec, rules, stage: stand_in)
    play = logplay.play_games
    monkeypatch.setattr(logplay, "play_games",
                        lambda game, specs, **kw: play(game, ["optimal"], **kw))

    def simulated(*args, **kwargs):
        raise AssertionError("an objective's report card simulated its final score")

    monkeypatch.setattr(simulate, "simulate_penta", simulated)
    e = evaluate_penta(name, games=2, seed=1)
    assert e.exact and e.games is None
    assert e.mean_final_score.mean == stand_in.mean and e.mean_final_score.se == 0.0
    assert e.final_score_sd == stand_in.sd


def test_the_report_card_follows_an_objectives_solve_and_forward_pass(monkeypatch):
    """The minutes an objective's distribution takes the first time are followed: its
    solve in rows, then its forward pass in (card, score) pairs, each named (what the
    progress bar of ``evaluate`` and ``compare --exact`` shows); then the games."""
    import dataclasses

    from dicelab import logplay
    from dicelab.penta import builtin
    from dicelab.penta.distribution import score_distribution

    def solved(objective, rules, progress=None, forward_progress=None):
        progress(1, 2)
        forward_progress(3, 4)
        return dataclasses.replace(score_distribution("optimal", SEED),
                                   policy=f"optimal:{objective}")

    monkeypatch.setattr(builtin, "objective_distribution", solved)
    play = logplay.play_games  # optimal's games stand in for the objective's (no solve)
    monkeypatch.setattr(logplay, "play_games",
                        lambda game, specs, **kw: play(game, ["optimal"], **kw))
    stages, games = [], []
    evaluate_penta("optimal:at-least:300", games=2, seed=1,
                   progress=lambda d, t: games.append((d, t)),
                   stage=lambda *a: stages.append(a))
    assert stages == [("solving at-least:300 (rows)", 1, 2),
                      ("its score distribution ((card, score) pairs)", 3, 4)]
    assert games[-1] == (2, 2)


@pytest.mark.slow  # the objective's solve and forward pass: about a minute on two cores
def test_the_report_card_of_a_utility_objective_is_exact(capsys):
    """``evaluate optimal:utility:theta=0.01`` gives the mean and SD of ``solve penta
    --objective utility:theta=0.01``, exactly, and says so."""
    from dicelab.penta.objective_play import objective_distribution

    argv = ["evaluate", "optimal:utility:theta=0.01", "-n", "3", "--seed", "1"]
    code, out, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0, err
    d = json.loads(out)
    dist = objective_distribution("utility:theta=0.01", SEED)
    assert d["mean_exact"] and d["games"] is None
    assert d["mean_final_score"] == pytest.approx(dist.mean, abs=1e-9)
    assert d["mean_final_score"] == pytest.approx(253.506251, abs=5e-7)
    assert d["final_score_sd"] == pytest.approx(61.7355, abs=5e-5)
    assert d["below_optimum"] == pytest.approx(0.98, abs=5e-3)
    code, text, err = run_cli(capsys, argv)
    assert code == 0, err
    assert "(exact)" in text and "253.5063" in text and "simulated" not in text


def test_the_report_card_judges_in_expected_final_score_whatever_it_is_judged_by_elsewhere(
        monkeypatch):
    """A policy that ``analyse`` would judge by an objective (as it judges
    optimal:OBJECTIVE) gets the report card it gets when judged in points: the card's
    losses are in expected final score (optimal's: none; by the objective, some)."""
    from dicelab.penta.builtin import Optimal

    plain = evaluate_penta("optimal", games=3, seed=2)
    monkeypatch.setattr(Optimal, "judged_by", lambda self, spec: "utility:theta=0.02")
    judged = evaluate_penta("optimal", games=3, seed=2)
    assert judged.total_loss.mean == 0.0
    assert json.dumps(judged.to_dict() | {"elapsed_s": 0}) == \
        json.dumps(plain.to_dict() | {"elapsed_s": 0})


@pytest.mark.parametrize("losses", [[0.0, 0.0, 0.0, 3.0], [0.0, 0.5, 0.0, 0.0, 4.0],
                                    [0.0, 0.0, 0.0]])
def test_a_loss_interval_never_goes_below_zero(losses):
    """A decision's loss is at least 0: so are the ends of its interval, per class and in
    all (a few games, one of them costly, would put a t interval's lower end below 0)."""
    import pandas as pd

    from dicelab.penta.evaluate import class_losses

    games = len(losses)
    rows = [{"game": g, "step": 3, "chosen": "box chance", "loss": x}
            for g, x in enumerate(losses)]
    rows += [{"game": g, "step": 1, "chosen": "keep 6 6", "loss": x / 2}
             for g, x in enumerate(losses)]
    by_class, total, per_decision = class_losses(pd.DataFrame(rows), games)
    for e in [total, per_decision, *(e for c in by_class.values()
                                     for e in (c.per_game, c.per_decision))]:
        lo, hi = e.ci95
        assert math.isnan(lo) or 0.0 <= lo <= e.mean <= hi
    assert total.mean == pytest.approx(1.5 * sum(losses) / games)
    # a ratio over the games: every game makes one decision of each class here
    assert per_decision.mean == pytest.approx(1.5 * sum(losses) / (2 * games))
    assert by_class["box"].per_decision.mean == pytest.approx(sum(losses) / games)


def test_a_users_report_card_adds_up(capsys, tmp_path):
    e = evaluate_penta(parse_policy(f"{EXAMPLES}:chase_penta", "penta"), games=150, seed=9)
    assert not e.exact and e.games == 150 and e.analysed_games == 150
    # a game's losses add up, on average, to what it scores below the optimum
    se = np.hypot(e.total_loss.se, e.mean_final_score.se)
    assert abs(e.total_loss.mean - e.gap) < 4 * se, (e.total_loss, e.gap)
    assert e.losses["box"].decisions == 150 * 13
    assert sum(c.per_game.mean for c in e.losses.values()) == pytest.approx(e.total_loss.mean)
    # the loss per decision: all the games' losses over all their decisions, with its SE
    per = e.loss_per_decision
    assert per.mean == pytest.approx(e.total_loss.mean * 150 / e.decisions, rel=1e-12)
    assert 0 < per.se < per.mean and per.ci95[0] < per.mean < per.ci95[1]
    d = e.to_dict()
    assert (d["total_loss_per_decision_se"], d["loss_by_decision"]["box"]["loss_per_decision_se"]
            ) == (per.se, e.losses["box"].per_decision.se)
    again = evaluate_penta(f"{EXAMPLES}:chase_penta", games=150, seed=9)
    assert again.to_dict() | {"elapsed_s": 0} == e.to_dict() | {"elapsed_s": 0}
    frame = e.to_frame()
    assert frame.set_index("measure").loc["optimum", "value"] == e.optimum
    assert e.manifest()["seed"] == 9


@pytest.mark.parametrize("games", [1, 5])
def test_the_printed_gap_to_the_optimum_carries_the_means_interval(capsys, games):
    from dicelab.cli import formats as F

    code, out, err = run_cli(capsys, ["evaluate", f"{EXAMPLES}:most_points", "-n", str(games),
                                      "--seed", "1"])
    assert code == 0, err
    e = evaluate_penta(f"{EXAMPLES}:most_points", games=games, seed=1)
    lo, hi = e.mean_final_score.ci95
    gap = F.estimate(e.gap, (e.optimum - hi, e.optimum - lo), F.number, 2).replace("\\[", "[")
    assert f": {gap} below it" in " ".join(out.split())
    assert ("[n/a]" in gap) == (games == 1)
    # most_points never rerolls: its reroll classes made no decision, so lost nothing,
    # which the table says (it printed "0.00 [n/a]" as if an interval were missing)
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:5]]
            for line in out.splitlines() if line.count("│") == 5}
    empty = [cls for cls, loss in e.losses.items() if loss.decisions == 0]
    assert empty and all(rows[cls] == ["0", "none made", "0 (none made)"] for cls in empty)
    assert "n/a" not in "".join("".join(rows[cls]) for cls in rows if cls not in empty
                                and games > 1)


@pytest.mark.slow  # fast twin: test_copies_of_the_built_ins_play_the_kernels_games_bit_for_bit
def test_a_users_copy_of_greedy_has_greedys_exact_mean_within_its_interval(copies):
    e = evaluate_penta(f"{copies}:greedy_copy", games=200, seed=12)
    exact = evaluate_penta("greedy", games=5, seed=12)
    assert abs(e.mean_final_score.mean - exact.mean_final_score.mean) < 4 * \
        e.mean_final_score.se
    assert e.total_loss.mean > 0 and exact.total_loss.mean > 0


def _play_to_the_end(computer) -> list[int]:
    from dicelab.play import Player, SeededDice
    from dicelab.play.penta import PentaGame

    g = PentaGame([Player("you"), Player("c", computer)], dice=SeededDice(3))
    g.start()
    while g.phase != "over":
        if g.phase == "computer":
            g.step()
        elif g.phase == "keep" and g.rolls_left == 2:
            g.keep(g.roll[:2])
        else:
            g.score(g.default_box())
    return g.totals


def test_play_takes_a_users_policy_as_the_computer(copies, tmp_path):
    copy = parse_policy(f"{copies}:greedy_copy", "penta")
    # the computer's total (the human's default boxes are optimal's beside a user's policy)
    assert _play_to_the_end(copy)[1] == _play_to_the_end(parse_policy("greedy"))[1]
    (tmp_path / "bad.py").write_text("def p(card, roll, rolls_left):\n    return [9]\n")
    with pytest.raises(UserError, match="not all in the roll"):
        _play_to_the_end(parse_policy(f"{tmp_path}/bad.py:p", "penta"))


@pytest.mark.parametrize("policy, why", [
    (f"{EXAMPLES}:chase_penta", "decides move by move: an exact answer needs its decision"),
    (f"{EXAMPLES}:keep_high:high=4", "decides move by move"),
    ("penta-win", "no score distribution of its own"),
])
def test_exact_head_to_head_of_a_policy_it_cannot_tabulate_is_refused_with_the_reason(
        capsys, tmp_path, policy, why):
    out = tmp_path / "h2h"
    code, text, err = run_cli(capsys, ["compare", policy, "greedy", "--exact", "--out",
                                       str(out)])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert why in err and "leave out --exact" in err and not text
    assert not out.exists()


@pytest.mark.slow
def test_a_users_policy_given_as_values_is_compared_and_evaluated_exactly(capsys, tmp_path):
    # this_turn is the widget under zero values: greedy's decisions, so greedy's numbers
    mine = f"{EXAMPLES}:this_turn"
    out = tmp_path / "h2h"
    code, text, err = run_cli(capsys, ["compare", "greedy", mine, "--exact", "--json",
                                       "--out", str(out)])
    assert code == 0, err
    pair = json.loads(text)["pairs"][0]
    assert pair["verdict"] == "tie" and pair["score"] == pytest.approx(0.5, abs=1e-12)
    assert (out / "manifest.json").exists()
    e = evaluate_penta(mine, games=10, seed=1)
    greedy = evaluate_penta("greedy", games=10, seed=1)
    assert e.exact and e.mean_final_score.mean == pytest.approx(
        greedy.mean_final_score.mean, abs=1e-9)
    assert e.final_score_sd == pytest.approx(greedy.final_score_sd, abs=1e-9)
    assert e.total_loss.mean == pytest.approx(greedy.total_loss.mean, abs=1e-9)


BAD_VALUES = textwrap.dedent("""
    import numpy as np
    from dicelab.penta.policy import ValuesPolicy
    from dicelab.penta.rules import N_STATES

    short = ValuesPolicy("short", np.zeros(10))
    renamed = ValuesPolicy("rl-penta", np.zeros(10))  # its own name is not the file's
    words = ValuesPolicy("words", "high")
    nans = ValuesPolicy("nans", np.full(N_STATES, np.nan))
    one_inf = ValuesPolicy("one_inf", np.where(np.arange(N_STATES) == 128, np.inf, 0.0))
    # optimal's own values hold NaN where no game goes (state index 7): never read
    off_the_game = ValuesPolicy("off_the_game", np.where(np.arange(N_STATES) == 7, np.nan,
                                                         0.0))

    class Raises:
        game = "penta"
        name = "raises"

        def values(self, rules):
            raise RuntimeError("no values")

        def decide(self, state):
            return list(state.roll) if state.rolls_left else "chance"

    class NanValues(Raises):
        name = "nan_values"

        def values(self, rules):
            return np.where(np.arange(N_STATES) == 0, np.nan, 0.0)

        def decide(self, state):
            return list(state.roll) if state.rolls_left else next(iter(state.points()))
""")


@pytest.mark.parametrize(("name", "says"), [
    ("short", "policy short: its values are one number per Penta state index "
              "(1,048,576, dicelab.penta.rules.state_index), not shape (10,)"),
    ("words", "policy words: its values are one number per Penta state index "
              "(1,048,576, dicelab.penta.rules.state_index), not str"),
    ("nans", "policy nans: its values are finite numbers at every state a game reaches, "
             "not nan (state index 0, and 536,319 more)"),
    ("one_inf", "policy one_inf: its values are finite numbers at every state a game "
                "reaches, not inf (state index 128, and 0 more)"),
    ("Raises", "its values: RuntimeError: no values"),
    ("renamed", "values.py:renamed: policy rl-penta: its values are one number per Penta"),
])
@pytest.mark.parametrize("command", ["compare", "simulate"])
def test_bad_values_are_one_error_before_any_game(tmp_path, capsys, name, says, command):
    """(NaN values crashed the exact head to head; values of another length played.)"""
    path = tmp_path / "values.py"
    path.write_text(BAD_VALUES)
    ref = f"{path}:{name}"
    argv = ["compare", ref, "greedy", "--exact"] if command == "compare" else \
        ["simulate", "-s", ref, "--games", "2", "--seed", "1"]
    out = tmp_path / "out"
    code, text, err = run_cli(capsys, [*argv, "--json", "--out", str(out)])
    if name == "Raises" and command == "simulate":  # decides move by move: not asked
        assert code == 2 and "chance is filled" in err, err
        return
    assert code == 2 and not text and not out.exists(), err
    assert err.startswith("error: ") and says in err and "Traceback" not in err, err
    if name == "Raises":
        assert len(err.splitlines()) == 2 and f"{path}:" in err.splitlines()[1], err


@pytest.mark.parametrize(("name", "says"), [
    ("nans", "policy nans: its values are finite numbers at every state a game reaches"),
    ("short", "policy short: its values are one number per Penta state index"),
    ("Raises", "its values: RuntimeError: no values"),
    ("NanValues", "values.py:NanValues: its values are finite numbers at every state a "
                  "game reaches, not nan (state index 0, and 0 more)"),
])
def test_bad_values_are_refused_before_the_other_policies_are_worked_on(
        tmp_path, capsys, monkeypatch, name, says):
    """compare greedy FILE.py:NAME --exact: the values of the policy named second are
    checked before greedy's distribution is begun (its tables take seconds to build)."""
    from dicelab.penta import builtin

    def begun(policy, rules):
        raise UserError(f"{policy}'s distribution was begun")

    monkeypatch.setattr(builtin, "score_distribution", begun)
    path = tmp_path / "values.py"
    path.write_text(BAD_VALUES)
    out = tmp_path / "out"
    code, text, err = run_cli(capsys, ["compare", "greedy", f"{path}:{name}", "--exact",
                                       "--out", str(out)])
    assert code == 2 and not text and not out.exists(), err
    assert err.startswith("error: ") and says in err and "begun" not in err, err


GOOD_VALUES = BAD_VALUES + textwrap.dedent("""
    class GoodValues(NanValues):
        def values(self, rules):
            return np.zeros(N_STATES)
""")


def test_a_report_card_refuses_bad_values(tmp_path, capsys, monkeypatch):
    """evaluate FILE.py:NAME of a policy whose values are bad (it decides by its own
    decide) is one error, not a simulated report card; its neighbour, good values over
    the memory limit, is refused as such, which a report card takes as its cue to simulate
    (slow twin below)."""
    from dicelab.penta.builtin import family_of
    from dicelab.resources import OverMemoryLimit

    path = tmp_path / "values.py"
    path.write_text(GOOD_VALUES)
    out = tmp_path / "out"
    code, text, err = run_cli(capsys, ["evaluate", f"{path}:NanValues", "-n", "4",
                                       "--seed", "1", "--out", str(out)])
    assert code == 2 and not text and not out.exists(), err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "NanValues: its values are finite numbers" in err, err
    rules = get_rules(None)
    bad, good = (parse_policy(f"{path}:{n}", "penta") for n in ("NanValues", "GoodValues"))
    with pytest.raises(UserError, match="finite numbers") as refused:
        family_of(bad).check_exact(bad, rules)
    assert not isinstance(refused.value, OverMemoryLimit)
    family_of(good).check_exact(good, rules)
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "100MB")
    with pytest.raises(OverMemoryLimit, match="decision block"):
        family_of(good).check_exact(good, rules)


@pytest.mark.slow
def test_a_report_card_simulates_good_values_over_the_memory_limit(tmp_path, monkeypatch):
    path = tmp_path / "values.py"
    path.write_text(GOOD_VALUES)
    monkeypatch.setenv("DICELAB_MEMORY_LIMIT", "100MB")
    e = evaluate_penta(parse_policy(f"{path}:GoodValues", "penta"), games=4, seed=1)
    assert not e.exact and e.games == 4
    assert e.mean_final_score.se > 0  # simulated: an estimate


@pytest.mark.parametrize("argv", [
    ["simulate", "-s", "greedy", "--vs", "{}", "-n", "64"],
    ["compare", "greedy", "{}", "-n", "64"],
    ["tournament", "greedy", "{}", "-n", "64"],
    ["tournament", "greedy", "{}", "--sprt"],
], ids=["simulate", "compare", "tournament", "sprt"])
@pytest.mark.parametrize(("name", "says"), [
    ("nans", "policy nans: its values are finite numbers at every state a game reaches"),
    ("one_inf", "policy one_inf: its values are finite numbers at every state a game "),
    ("short", "policy short: its values are one number per Penta state index"),
    ("NanValues", None),  # decides by its own decide: its values are not read, it plays
])
def test_bad_values_are_refused_before_any_game_whatever_the_seat(
        tmp_path, capsys, monkeypatch, argv, name, says):
    """A policy given as values, in the second seat: its values are checked before the
    referee plays a game (greedy's first decision builds its tables, seconds)."""
    from dicelab.penta import referee

    def began(*args, **kwargs):
        raise UserError("the games began")

    monkeypatch.setattr(referee, "play_chunks", began)
    path = tmp_path / "values.py"
    path.write_text(BAD_VALUES)
    argv = [a.format(f"{path}:{name}") for a in argv]
    code, text, err = run_cli(capsys, [*argv, "--seed", "1", "--json"])
    assert code == 2 and not text and err.startswith("error: ") and err.count("\n") == 1
    assert (says or "the games began") in err, err


def test_values_are_asked_once_for_the_check_and_the_distribution(tmp_path, monkeypatch):
    """The neighbour of bad values: good ones are checked before any work and read by the
    distribution after it, the user's values(rules) called once."""
    from dicelab.penta import builtin

    path = tmp_path / "counted.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from dicelab.penta.rules import N_STATES

        class Counted:
            game = "penta"
            name = "counted"
            calls = 0

            def values(self, rules):
                Counted.calls += 1
                return np.arange(N_STATES, dtype=np.float64)

            def decide(self, state):
                return list(state.roll) if state.rolls_left else "chance"
    """))
    monkeypatch.setattr(builtin, "values_distribution",
                        lambda values, rules, name: (values, name))
    spec = parse_policy(f"{path}:Counted", "penta")
    family, rules = builtin.family_of(spec), get_rules(None)
    family.check_exact(spec, rules)
    values, name = family.distribution(spec, rules)
    assert type(spec.policy).calls == 1 and name == spec.name
    assert np.array_equal(values, np.arange(values.size))


@pytest.mark.parametrize("command", [
    pytest.param("compare", marks=pytest.mark.slow),  # 17 s; fast twin: simulate's check
    "simulate"])
def test_values_not_finite_where_no_game_goes_are_never_read(tmp_path, capsys, command):
    """The neighbour of NaN values: NaN only at states no game reaches (as in optimal's
    own values) is a policy like any other."""
    path = tmp_path / "values.py"
    path.write_text(BAD_VALUES)
    ref = f"{path}:off_the_game"
    argv = ["compare", ref, "greedy", "--exact"] if command == "compare" else \
        ["simulate", "-s", ref, "--games", "2", "--seed", "1"]
    code, text, err = run_cli(capsys, [*argv, "--json"])
    assert code == 0 and json.loads(text), err


def test_a_users_penta_policy_plays_a_tournament_and_a_sequential_test(capsys, tmp_path):
    out = tmp_path / "t"
    code, _, err = run_cli(capsys, ["tournament", f"{EXAMPLES}:chase_penta", "greedy",
                                    "-n", "64", "--seed", "2", "--out", str(out)])
    assert code == 0, err
    assert (out / "manifest.json").exists()
    code, text, err = run_cli(capsys, ["tournament", f"{EXAMPLES}:chase_penta", "greedy",
                                       "--sprt", "elo1=400", "-n", "4096", "--seed", "2",
                                       "--json"])
    assert code == 0, err
    decision = json.loads(text)
    assert decision["pairs"][0]["decision"] == "H0"  # far weaker than greedy


def test_a_penta_policys_number_keywords_are_its_parameters():
    base = parse_policy(f"{EXAMPLES}:keep_high", "penta")
    four = parse_policy(f"{EXAMPLES}:keep_high:high=4", "penta")
    assert base.policy.params == {"high": 5} and four.policy.params == {"high": 4}
    assert four.name.endswith("keep_high:high=4") and base.name.endswith("keep_high")
    card, rules = Scorecard(), get_rules("seed")
    roll = (1, 4, 4, 5, 6)
    assert ask(base.policy, State(card, roll, 2, rules)) == (5, 6)
    assert ask(four.policy, State(card, roll, 2, rules)) == (4, 4, 5, 6)
    assert four.policy.with_params(high=6).params == {"high": 6}
    for text, message in ((":keep_high:high=x", "'x' is not an integer"),
                          (":keep_high:high=4.5", "is not an integer"),
                          (":keep_high:nope=1", "unknown parameter 'nope'"),
                          (":most_points:high=2", "parameters: none"),
                          (":keep_high:high", "key=value")):
        with pytest.raises(UserError, match=message) as refused:
            parse_policy(f"{EXAMPLES}{text}", "penta")
        assert str(refused.value).startswith(f"policy '{EXAMPLES}{text}': ")


@pytest.mark.parametrize(("name", "says"), [
    ("nans", "policy nans: its values are finite numbers at every state a game reaches"),
    ("short", "policy short: its values are one number per Penta state index"),
])
def test_play_refuses_bad_values_before_the_game_starts(tmp_path, capsys, monkeypatch, name,
                                                        says):
    """``play penta --ai FILE:NAME`` dealt the game and let the human play a turn; the
    values were refused at the computer's first turn."""
    import io

    path = tmp_path / "values.py"
    path.write_text(BAD_VALUES)
    log = tmp_path / "game.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("\nchance\nq\n"))
    code, out, err = run_cli(capsys, ["play", "penta", "--ai", f"{path}:{name}", "--seed", "1",
                                      "--log", str(log)])
    assert code == 2 and err.startswith("error: ") and says in err, err
    assert "Penta" not in out and "roll" not in out and not log.exists()
