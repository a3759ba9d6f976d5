"""Simulations of policies that decide move by move (dicelab.farkle.pysim,
simulate_python): the referee's games are tallied as the kernel tallies them, bit for bit
on the same faces; runs are reproducible; win rates agree with the exact values;
simulate_farkle and the CLI send such seats to the referee."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest
from cli_helpers import run_cli
from test_farkle_sim import run_script

from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.builtin import as_policy
from dicelab.farkle.exact import exact_pair
from dicelab.farkle.policy import Move, all_scoring
from dicelab.farkle.pysim import tally_game
from dicelab.farkle.referee import Referee, play_game
from dicelab.farkle.rules import PRESETS
from dicelab.farkle.simulate import simulate_farkle, simulate_python
from dicelab.play import ScriptedDice
from dicelab.registry import parse_policy

DEFAULT = PRESETS["default"]


class AiByHand:
    """``ai`` written as a user would, move by move (no table)."""

    name = "ai-by-hand"

    def decide(self, state):
        o = all_scoring(state)
        deficit = max(state.opp_total - state.my_total, 0)
        thr = 300 + 100 * min(5, deficit // 1000)
        thr -= 50 if o.dice_left == 2 else 100 if o.dice_left == 1 else 0
        tp = state.turn_points + o.points
        bank = tp >= thr and not (state.last_round and state.my_total + tp <= state.opp_total)
        return Move(o.keep, bank and state.can_bank(o))


@pytest.mark.parametrize(("names", "rules"), [(["ai", "threshold-300"], "default"),
                                              (["ai", "max-ev", "threshold-250"], "facebook")])
def test_referee_games_are_tallied_as_the_kernel_tallies_them(names, rules):
    table = PRESETS[rules]
    target, n_games = 1500, 12
    faces = [random.Random(rules).randint(1, 6) for _ in range(60_000)]
    specs = [parse_policy(p) for p in names]
    kernel = run_script(specs, faces, target, n_games=n_games, first_seat=-1, table=table,
                        ending=table.ending)
    assert kernel["counters"][K.C_SCRIPT_ERRORS] == 0
    n = len(specs)
    mine = K.Tally(np.zeros_like(kernel["stats"]), np.zeros_like(kernel["hist"]),
                   np.zeros_like(kernel["counters"]))
    dice = ScriptedDice(faces)
    policies = [as_policy(s, table, target, n) for s in specs]
    for i in range(n_games):  # the first seat rotates with the game
        ref = play_game(Referee(n, rules=table, target=target, dice=dice, first_seat=i % n),
                        policies)
        tally_game(ref, mine.stats, mine.hist, mine.counters)
    assert dice.pos == kernel["used"]
    assert mine.stats.tolist() == kernel["stats"].tolist()
    assert mine.hist.tolist() == kernel["hist"].tolist()
    assert mine.counters.tolist() == kernel["counters"].tolist()


def test_a_seed_gives_the_same_run_and_chunks_sum_to_it():
    ticks = []
    a = simulate_python([AiByHand(), "threshold-300"], games=1200, seed=5, target=1000,
                        per_chunk=True, progress=lambda d, t: ticks.append((d, t)))
    b = simulate_python([AiByHand(), "threshold-300"], games=1200, seed=5, target=1000)
    c = simulate_python([AiByHand(), "threshold-300"], games=1200, seed=6, target=1000)
    assert a.stats.tolist() == b.stats.tolist() and a.hist.tolist() == b.hist.tolist()
    assert a.stats.tolist() != c.stats.tolist()
    assert a.chunk_stats.sum(axis=0).tolist() == a.stats.tolist()
    assert ticks[-1] == (1200, 1200) and ticks[0] == (500, 1200)
    assert a.kernel == "referee" and a.games == 1200 and a.counters[K.C_GAMES] == 1200
    per_turn = [simulate_python([AiByHand(), "ai"], games=300, seed=5, target=1000,
                                streams=K.STREAM_PER_TURN).stats.tolist() for _ in range(2)]
    assert per_turn[0] == per_turn[1]


def test_the_copy_of_ai_scores_as_the_exact_pair():
    games, target = 4000, 1000
    r = simulate_farkle([AiByHand(), parse_policy("threshold-300")], games=games, seed=11,
                        target=target)
    assert r.kernel == "referee"
    exact = exact_pair("ai", "threshold-300", target=target)
    s = r.seat(0)
    mean = (s.wins + 0.5 * s.ties) / games
    se = (mean * (1 - mean) / games) ** 0.5
    assert abs(mean - exact.score) < 4 * se, (mean, exact.score, se)


def test_simulate_farkle_keeps_tables_on_the_kernels_and_refuses_dask_for_the_referee():
    from dicelab.farkle.policy import bank_rule

    @bank_rule
    def rule(my, opp, tp, n):
        return tp >= 300

    assert simulate_farkle([rule], games=100, seed=1, target=1000).kernel != "referee"
    with pytest.raises(UserError, match="this process only"):
        simulate_farkle([AiByHand()], games=100, seed=1, target=1000, client=object())


def test_simulate_farkle_takes_policy_names_as_it_takes_parsed_ones():
    names = ["ai", "threshold-300"]
    by_name = simulate_farkle(names, games=200, seed=1, target=1000)
    parsed = simulate_farkle([parse_policy(n) for n in names], games=200, seed=1, target=1000)
    assert by_name.seats == parsed.seats == names
    assert by_name.kernel == parsed.kernel != "referee"
    assert [by_name.seat(i).wins for i in (0, 1)] == [parsed.seat(i).wins for i in (0, 1)]
    mixed = simulate_farkle(["ai", AiByHand()], games=20, seed=1, target=1000)
    assert mixed.kernel == "referee" and mixed.seats == ["ai", "ai-by-hand"]


def test_dask_refusal_names_the_policy_that_decides_move_by_move():
    mover = AiByHand()
    for seats in ([mover], ["ai", mover], [parse_policy("threshold-300"), mover]):
        with pytest.raises(UserError, match="--dask: policy 'ai-by-hand' decides move by move"):
            simulate_farkle(seats, games=100, seed=1, target=1000, client=object())
    with pytest.raises(UserError, match="--first"):
        simulate_python([AiByHand()], games=10, seed=1, first_seat=1)


def test_cli_simulates_a_policy_file_that_decides_move_by_move(tmp_path, capsys):
    f = tmp_path / "mine.py"
    f.write_text(textwrap.dedent("""
        from dicelab.farkle.policy import Move, all_scoring

        def steady(state):
            o = all_scoring(state)
            return Move(o.keep, state.turn_points + o.points >= 350 and state.can_bank(o))

        class Stubborn:
            name = "stubborn"
            def decide(self, state):
                return Move((6,), True)

        def broken(state):
            return 1 / 0
    """))
    code, out, err = run_cli(capsys, ["simulate", "-s", f"{f}:steady", "--vs", "ai", "-n",
                                      "300", "--seed", "1", "--target", "1000", "--json"])
    assert code == 0, err
    assert '"kernel": "referee"' in out and "mine.py:steady" in out
    code, out, err = run_cli(capsys, ["simulate", "-s", f"{f}:Stubborn", "-n", "10",
                                      "--target", "1000"])
    assert code == 2 and out == "" and err.startswith("error: policy stubborn answered")
    code, out, err = run_cli(capsys, ["simulate", "-s", f"{f}:broken", "-n", "10",
                                      "--target", "1000"])
    assert code == 2 and "ZeroDivisionError" in err and "mine.py" in err and \
        "in broken" in err


def test_a_plan_of_referee_seats_runs_as_simulate_python_and_in_a_sequential_test(capsys,
                                                                                 tmp_path):
    from dicelab.farkle.simulate import FarklePlan
    from dicelab.runner import PER_CHUNK, run_plan

    seats = (AiByHand(), parse_policy("threshold-300"))
    plan = FarklePlan(seats, DEFAULT, 1000, 9, 1100, per_chunk=True,
                      streams=K.STREAM_PER_TURN, chunk_games=512)
    acc = run_plan(plan)
    alone = simulate_python(list(seats), games=1100, seed=9, target=1000,
                            streams=K.STREAM_PER_TURN, per_chunk=True)
    assert plan.kernel == "referee" and acc["stats"].tolist() == alone.stats.tolist()
    assert acc[PER_CHUNK + "stats"].shape[0] == 3  # chunks of 512 games, the last one short
    f = tmp_path / "mine.py"
    f.write_text("from dicelab.farkle.policy import Move, all_scoring\n"
                 "def greedy(state):\n"
                 "    o = all_scoring(state)\n"
                 "    return Move(o.keep, state.turn_points + o.points >= 1000 and "
                 "state.can_bank(o))\n")
    code, out, err = run_cli(capsys, ["tournament", f"{f}:greedy", "ai", "--sprt", "-n",
                                      "4096", "--seed", "1", "--target", "1000", "--json"])
    assert code == 0, err
    assert "mine.py:greedy" in out
