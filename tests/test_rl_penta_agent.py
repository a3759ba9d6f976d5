"""The Penta learning agent: its features, its play (the same games as the referee plays
for its policy object), its training, and its exact judge."""

from __future__ import annotations

import numpy as np
import pytest

from dicelab.errors import UserError
from dicelab.penta.policies import Scorecard
from dicelab.penta.referee import fill
from dicelab.penta.referee import play_game as referee_game
from dicelab.penta.rules import FULL_CARD, MASK_SHIFT, N_BOXES, N_STATES, get_rules
from dicelab.rl.penta_agent import (
    N_FEATURES,
    features,
    judge,
    play_game,
    train_penta,
    values_of,
)


def test_values_are_the_features_times_the_weights_and_zero_on_a_full_card():
    rng = np.random.default_rng(1)
    w = rng.normal(size=N_FEATURES)
    v = values_of(w)
    s = rng.integers(0, N_STATES, 2000)
    x = features(s)
    # every row: the open boxes, then one cell in each one-hot block
    assert (x[:, N_BOXES:].sum(axis=1) == 2).all()
    assert (x[:, :N_BOXES].sum(axis=1) == N_BOXES - np.array([bin(m).count("1") for m in
                                                              s >> MASK_SHIFT])).all()
    full = (s >> MASK_SHIFT) == FULL_CARD
    assert v[s[~full]] == pytest.approx(x[~full] @ w, rel=1e-12, abs=1e-12)
    assert (v[(np.arange(N_STATES) >> MASK_SHIFT) == FULL_CARD] == 0).all()


def test_the_agents_games_are_its_policy_objects_games_on_the_referee_turn_by_turn():
    rs = get_rules("seed")
    t = train_penta(rs, games=12, iterations=2, seed=4)
    policy = t.policy()
    for seed in range(3):
        states, to_come = play_game(t.values, rs, np.random.default_rng(seed))
        events = referee_game([policy], rs, np.random.default_rng(seed))
        assert len(events) == len(states) == N_BOXES
        assert states[0] == 0 and (np.diff(to_come) <= 0).all() and to_come[-1] >= 0
        # the referee's game, replayed box by box, scores the same total
        card = Scorecard()
        for e in events:
            card = fill(card, e["box"], e["rolls"][-1], rs)
        assert card.total == to_come[0]


def test_a_tiny_training_run_is_reproducible_and_checks_its_arguments():
    a = train_penta("seed", games=10, iterations=2, seed=3)
    b = train_penta("seed", games=10, iterations=2, seed=3)
    assert (a.weights == b.weights).all()
    assert list(a.curve.iteration) == [0, 1] and (a.curve.games == 10).all()
    assert a.final_gap is None and a.to_dict()["final_exact"] is None
    for kw, message in (({"games": 0}, "games"), ({"iterations": 1.5}, "iterations"),
                        ({"ridge": 0.0}, "ridge"), ({"rules": "nope"}, "nope")):
        with pytest.raises(UserError, match=message):
            train_penta(**{"games": 5, **kw})


def test_the_training_script_refuses_a_bad_option_and_writes_nothing(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "experiments" / "rl_penta.py"
    spec = importlib.util.spec_from_file_location("rl_penta", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for argv, message in ((["--rules", "nope"], "nope"), (["--games", "0"], "games"),
                          (["--ridge", "-1"], "ridge")):
        bad = tmp_path / "bad"
        assert script.main([*argv, "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
        assert not bad.exists()


@pytest.mark.slow
def test_the_exact_judge_is_the_solvers_for_optimals_values_and_the_agents_games_for_its():
    """The judge's decisions under ``optimal``'s values are the solver's own decision
    block (built by another sweep), so it reproduces optimal's exact distribution; a
    trained agent's simulated games agree with its judged mean within 4 SE."""
    from dicelab.penta.distribution import score_distribution, values_distribution
    from dicelab.penta.solver import solve

    rs = get_rules("seed")
    mine = values_distribution(solve(rs).values, rs, "optimal-values")
    ref = score_distribution("optimal", rs)
    assert np.abs(mine.probability - ref.probability).max() < 1e-12
    assert mine.mean == pytest.approx(ref.mean, rel=1e-12)

    t = judge(train_penta(rs, games=60, iterations=2, seed=5))
    assert t.optimum == pytest.approx(ref.mean, rel=1e-12)
    assert t.final_gap == pytest.approx(t.optimum - t.exact.mean)
    assert t.final_gap > 0
    rng = np.random.default_rng(6)
    finals = np.array([play_game(t.values, rs, rng)[1][0] for _ in range(400)], float)
    se = finals.std(ddof=1) / np.sqrt(finals.size)
    assert abs(finals.mean() - t.exact.mean) < 4 * se
