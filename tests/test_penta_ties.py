"""Penta decisions at ties: a fixed tie order within config.PENTA_TIE_EPS, not rounding noise.

Jitted code throughout. The values are never touched by the tie handling (checked bit for
bit); decisions are the first option in the documented order among those within the
tolerance of the best, and stay the same when the values move by a few ulps.
"""

from __future__ import annotations

import numpy as np
import pytest

from dicelab import config, dice
from dicelab.config import CROSS_MACHINE_RTOL
from dicelab.penta import tables
from dicelab.penta.policies import Scorecard, analyse_turn, choose, rank_options
from dicelab.penta.rules import (
    BOX_NAMES,
    N_STATES,
    get_rules,
    state_fifty,
    state_index,
    state_mask,
    state_up,
)
from dicelab.penta.scoring import BOX_VALUES, TABLES
from dicelab.penta.solver import DecisionSink, Layer, layer_groups, solve, solve_layer
from dicelab.penta.widget import (
    KEEP_PREFERENCE,
    new_lane_scratch,
    new_turn_scratch,
    reroll_stage,
    reroll_stage_lanes,
)

LANES = config.PENTA_SOLVER_LANES
TIE_EPS = config.PENTA_TIE_EPS
# the last turn with only the Penta box open: only the largest group of equal dice matters,
# so keeping 1 1 or 2 2 (or 1 or 2 or 6) is worth exactly the same in real arithmetic. The
# other boxes hold their lowest scores (0; Chance at least 5).
PENTA_ONLY = ",".join(f"{b}={min(BOX_VALUES[i])}" for i, b in enumerate(BOX_NAMES)
                      if b != "penta")


def _decisions(V, rules, picks, eps):
    """Packed decisions (uint16[252] per state) of the state groups ``picks`` = [(layer,
    group index)], made by the decision kernel of the solver (``solve_layer``)."""
    groups = layer_groups()
    slot = np.full(N_STATES, -1, dtype=np.int32)
    states = []
    by_layer: dict[int, list[int]] = {}
    for n, g in picks:
        by_layer.setdefault(n, []).append(g)
    parts = []
    for n, gs in sorted(by_layer.items()):
        layer = groups[n]
        gs = np.array(sorted(gs))
        for g in gs:
            for la in range(int(layer.counts[g])):
                s = int(layer.heads[g] | state_index(0, layer.ups[g, la], 0))
                slot[s] = len(states)
                states.append(s)
        parts.append(Layer(layer.heads[gs].copy(), layer.ups[gs].copy(),
                           layer.counts[gs].copy()))
    out = np.zeros((len(states), tables.N_ROLLS), dtype=np.uint16)
    for part in parts:
        solve_layer(V, part, rules, DecisionSink(slot, out), eps)
    return np.array(states), out


def _group_of(card: Scorecard) -> int:
    """Index of ``card``'s state group in layer 12."""
    layer = layer_groups()[12]
    head = state_index(card.mask, 0, card.fifty)
    return int(np.nonzero((layer.heads == head) & (layer.ups[:, 0] == card.up))[0][0])


def _unpack(packed, r):
    keep2 = int(tables.SUBSETS[r, packed & tables.KEEP_BITS])
    keep1 = int(tables.SUBSETS[r, (packed >> tables.KEEP1_SHIFT) & tables.KEEP_BITS])
    return keep2, keep1, int(packed >> tables.BOX_SHIFT)


def _sample_groups(seed=7, per_layer=12):
    rng = np.random.default_rng(seed)
    picks = []
    for n, layer in enumerate(layer_groups()[:13]):
        k = min(per_layer, layer.heads.size)
        picks += [(n, int(g)) for g in rng.choice(layer.heads.size, k, replace=False)]
    return picks


def _perturbed(V, seed=11, ulps=4):
    rng = np.random.default_rng(seed)
    Vp = V.copy()
    ok = np.isfinite(V)
    Vp[ok] += rng.integers(-ulps, ulps + 1, int(ok.sum())) * np.spacing(np.abs(V[ok]))
    assert np.count_nonzero(Vp[ok] != V[ok]) > 0.8 * ok.sum()
    return Vp


# --- a genuine exact tie --------------------------------------------------------------------


def test_exact_keep_tie_is_played_in_the_documented_order_and_marked():
    card = Scorecard.parse(PENTA_ONLY)
    for rolls_left in (2, 1):
        opts = rank_options(card, [1, 1, 2, 2, 6], rolls_left, "seed")
        # 2 2 before 1 1: same size, and 2 2 has the lower dice rank (fewer 1s)
        assert [o.keep for o in opts[:2]] == [(2, 2), (1, 1)]
        assert opts[0].played and not opts[1].played
        assert opts[0].tie_with_best and opts[1].tie_with_best
        assert opts[0].loss == opts[1].loss == 0.0
        assert abs(opts[0].expected_final_score - opts[1].expected_final_score) <= TIE_EPS
        assert not any(o.tie_with_best for o in opts[2:]) and opts[2].loss > 0.1
        assert choose("optimal", card, [1, 1, 2, 2, 6], rolls_left, "seed").keep == (2, 2)
    assert KEEP_PREFERENCE[dice.rank_of_dice([2, 2])] < KEEP_PREFERENCE[dice.rank_of_dice([1, 1])]


def test_exact_keep_tie_in_the_decision_table_kernel():
    rs = get_rules("seed")
    V = solve(rs).values
    card = Scorecard.parse(PENTA_ONLY)
    g = _group_of(card)
    states, dec = _decisions(V, rs, [(12, g)], TIE_EPS)
    i = int(np.nonzero(states == card.state)[0][0])
    r = tables.roll_index([1, 1, 2, 2, 6])
    keep2, keep1, box = _unpack(dec[i, r], r)
    assert dice.dice_of_rank(keep2) == dice.dice_of_rank(keep1) == [2, 2]
    assert BOX_NAMES[box] == "penta"


def test_tie_decided_against_the_rounding_is_the_documented_one():
    # all different: keeping any one die or none is the same (rerolling five dice or four
    # around one kept die both just aim for five equal). The computed values differ in the
    # last bit -- keep 6 is not the largest float -- and keep 6 is played: the single die
    # with the lowest rank. The decision kernel agrees.
    card = Scorecard.parse(PENTA_ONLY)
    opts = rank_options(card, [1, 2, 3, 4, 6], 2, "seed")
    tied = [o.keep for o in opts if o.tie_with_best]
    assert tied == [(6,), (4,), (3,), (2,), (1,), ()]
    values = [o.expected_final_score for o in opts[:6]]
    assert max(values) - min(values) <= TIE_EPS and opts[0].played
    # the keeps' own values (without the card's total added, which rounds the noise away)
    rs = get_rules("seed")
    turn = analyse_turn(solve(rs).values, rs, card.mask, card.up, card.fifty)
    raw = [turn.keep2[dice.rank_of_dice(list(k))] for k in tied]
    assert max(raw) - min(raw) <= TIE_EPS and raw[0] < max(raw)  # noise says otherwise
    states, dec = _decisions(solve(rs).values, rs, [(12, _group_of(card))], TIE_EPS)
    r = tables.roll_index([1, 2, 3, 4, 6])
    keep2, keep1, _ = _unpack(dec[int(np.nonzero(states == card.state)[0][0]), r], r)
    assert dice.dice_of_rank(keep2) == dice.dice_of_rank(keep1) == [6]


def test_exact_box_tie_goes_to_the_lowest_box_and_is_marked():
    # greedy: ones and fours both score 0 for 2 2 3 5 6 (their values are exactly equal)
    card = Scorecard.parse("twos=4,threes=9,fives=10,sixes=18,three-of-a-kind=0,"
                           "four-of-a-kind=0,full-house=0,small-straight=0,"
                           "large-straight=0,chance=5,penta=0")
    opts = rank_options(card, [2, 2, 3, 5, 6], 0, "seed", "greedy")
    assert [(o.box, o.tie_with_best, o.played, o.loss) for o in opts] == [
        ("ones", True, True, 0.0), ("fours", True, False, 0.0)]


# --- values untouched ---------------------------------------------------------------------------


@pytest.mark.parametrize("rules, optimum", [("seed", 254.48484588168247),
                                            ("hasbro", 254.5877287344957)])
def test_optimum_is_the_golden_value_within_the_cross_machine_tolerance(rules, optimum):
    # the tie tolerance settles decisions only: the values are those of a solve without
    # it, to the rounding another CPU's kernels may differ by
    assert solve(rules).values[0] == pytest.approx(optimum, rel=CROSS_MACHINE_RTOL, abs=0)


def test_tracking_decisions_does_not_change_the_values(seed_values):
    from dicelab.penta.widget import final_values

    rs = get_rules("seed")
    for s in (0, Scorecard.parse("fours=12,penta=50,chance=20").state,
              Scorecard.parse(PENTA_ONLY).state):
        e3 = {}
        for track in (False, True):
            W = new_turn_scratch()
            final_values(seed_values, rs.params, TABLES, state_mask(s), state_up(s),
                         state_fifty(s), W, track, TIE_EPS)
            e3[track] = W.e3
        assert np.array_equal(e3[False], e3[True])
        vals = np.ascontiguousarray(np.repeat(e3[True][:, None], LANES, axis=1))
        # untracked: at run time (False), or not compiled at all (None, as the solver's)
        for untracked in (False, None):
            assert np.array_equal(_stage_lanes(vals, TIE_EPS)[3],
                                  _stage_lanes(vals, TIE_EPS, track=untracked)[3])


# --- robustness: a few ulps of noise in V change no decision ---------------------------------


@pytest.fixture(scope="module")
def seed_values():
    return solve("seed").values


def test_decisions_do_not_move_with_rounding_noise(seed_values):
    rs = get_rules("seed")
    picks = _sample_groups()
    Vp = _perturbed(seed_values)
    states, want = _decisions(seed_values, rs, picks, TIE_EPS)
    states_p, got = _decisions(Vp, rs, picks, TIE_EPS)
    assert np.array_equal(states, states_p) and states.size > 400
    assert np.array_equal(got, want), f"{int((got != want).sum())} decisions moved"
    # the same check has teeth: without the tolerance the noise does move decisions
    _, want0 = _decisions(seed_values, rs, picks, 0.0)
    _, got0 = _decisions(Vp, rs, picks, 0.0)
    assert (got0 != want0).sum() > 0


def test_lane_kernel_and_rank_options_make_the_same_choices(seed_values):
    # decision tables (lane kernel) and rank_options / choose (scalar widget) agree on
    # every roll, ties included
    rs = get_rules("seed")
    picks = [p for p in _sample_groups(seed=3, per_layer=1) if p[0] in (0, 4, 8, 11)]
    states, dec = _decisions(seed_values, rs, picks, TIE_EPS)
    for i, s in enumerate(states[::3]):
        s = int(s)
        turn = analyse_turn(seed_values, rs, state_mask(s), state_up(s), state_fifty(s))
        for r in range(tables.N_ROLLS):
            keep2, keep1, box = _unpack(dec[3 * i, r], r)
            assert keep2 == turn.play2[tables.ROLL_BASE + r]
            assert keep1 == turn.play1[tables.ROLL_BASE + r]
            assert box == turn.box[r]


def test_choose_plays_the_decision_of_the_kernel_for_tied_rolls():
    card = Scorecard.parse(PENTA_ONLY)
    rs = get_rules("seed")
    V = solve(rs).values
    turn = analyse_turn(V, rs, card.mask, card.up, card.fifty)
    for r in range(tables.N_ROLLS):
        opt = choose("optimal", card, tables.roll_dice_of(r), 2, "seed")
        k = int(turn.play2[tables.ROLL_BASE + r])
        if tables.KEEP_SIZE[k] == 5:
            assert opt.kind == "box" and opt.box == BOX_NAMES[turn.box[r]]
        else:
            assert opt.kind == "keep" and opt.keep == tuple(dice.dice_of_rank(k))


# --- the reroll stage against a plain-Python reference -----------------------------------------


def _naive_keeps(E, eps):
    """For each multiset S: the first keep in tie order among all sub-multisets K of S with
    E[K] >= max - eps, and that max. Plain Python."""
    arg = np.empty(tables.N_KEEPS, dtype=np.int64)
    best = np.empty(tables.N_KEEPS)
    for s in range(tables.N_KEEPS):
        subs = dice.sub_multisets(s)
        m = max(E[k] for k in subs)
        best[s] = m
        arg[s] = min((k for k in subs if E[k] >= m - eps), key=lambda k: KEEP_PREFERENCE[k])
    return arg, best


def _stage_scalar(vals, eps, track=True):
    W = new_turn_scratch()
    out = np.empty(tables.N_ROLLS)
    reroll_stage(vals, TABLES, W.E1, W.M1, W.arg1, W.A, track, out, eps)
    return W.E1, W.M1, W.arg1, out


def _stage_lanes(vals, eps, track=True):
    W = new_lane_scratch(True)
    out = np.empty((tables.N_ROLLS, LANES))
    reroll_stage_lanes(vals, TABLES, W, W.arg1, track, out, eps)
    return W.E, W.M, W.arg1, out


def test_reroll_stage_ties_match_a_plain_reference_and_values_are_untouched():
    rng = np.random.default_rng(5)
    # coarse values: many exact ties; then noise far below TIE_EPS on top
    vals = rng.integers(0, 4, (tables.N_ROLLS, LANES)).astype(float) * 3.0
    vals += rng.normal(0, 1e-13, vals.shape)
    E, M, arg, out = _stage_lanes(vals, TIE_EPS)
    for untracked in (False, None):
        _, M0, _, out0 = _stage_lanes(vals, TIE_EPS, track=untracked)
        assert np.array_equal(M, M0) and np.array_equal(out, out0)
    for la in range(LANES):
        Es, Ms, args, outs = _stage_scalar(vals[:, la].copy(), TIE_EPS)
        assert np.array_equal(Es, E[:, la]) and np.array_equal(Ms, M[:, la])
        assert np.array_equal(args, arg[:, la]) and np.array_equal(outs, out[:, la])
        want_arg, want_best = _naive_keeps(E[:, la], TIE_EPS)
        assert np.array_equal(M[:, la], want_best)
        assert np.array_equal(arg[:, la], want_arg)


def test_tracked_keep_is_within_eps_of_the_best_even_with_gaps_near_eps():
    # adversarial: values on a grid of 0.4 eps, so chains of near-ties exist at every depth
    rng = np.random.default_rng(9)
    eps = 1e-3
    vals = 10.0 + rng.integers(0, 8, (tables.N_ROLLS, LANES)) * 0.4 * eps
    E, M, arg, _ = _stage_lanes(vals, eps)
    worst = 0.0
    for la in range(LANES):
        for s in range(tables.N_KEEPS):
            k = arg[s, la]
            assert k in dice.sub_multisets(s)
            worst = max(worst, M[s, la] - E[k, la])
    assert 0 < worst <= eps


# --- the CLI shows ties as ties ------------------------------------------------------------------


def test_cli_policy_penta_shows_ties(capsys):
    import json

    from dicelab.cli.main import main

    args = ["policy", "penta", "--roll", "1,2,3,4,6", "--card", PENTA_ONLY, "--top", "8"]
    main([*args, "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["tied_with_best"] == 6  # --json holds every option, --top or not
    ties = [o["tie_with_best"] for o in d["options"]]
    assert ties[:8] == [True] * 6 + [False] * 2 and sum(ties) == 6 and len(ties) > 8
    assert [o["played"] for o in d["options"]] == [True] + [False] * (len(ties) - 1)
    assert d["options"][0]["keep"] == [6]
    main(args)
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("│") and "keep" in line]
    assert [("tie" in row) for row in rows] == [True] * 6 + [False] * 2, rows
    # no tie: the loss column shows numbers only
    main(["policy", "penta", "--roll", "6,6,6,2,1", "--top", "3"])
    assert " tie " not in capsys.readouterr().out


def test_tracked_box_is_within_eps_of_the_best_and_lanes_agree():
    # adversarial values on a grid of 0.4 eps: many boxes a fraction of eps apart
    from dicelab.penta.scoring import roll_box_scores
    from dicelab.penta.widget import best_box, final_values, final_values_lanes

    rng = np.random.default_rng(13)
    eps = 1e-3
    V = 100.0 + rng.integers(0, 6, N_STATES) * 0.4 * eps
    rs = get_rules("hasbro")
    ups = np.round(np.linspace(0, 63, LANES)).astype(np.int64)
    worst = 0.0
    for mask, fifty in ((0b1000000000000, 1), (0b0000011000000, 0), (0b0110000100100, 0)):
        WL = new_lane_scratch(True)
        final_values_lanes(V, rs.params, TABLES, mask, fifty, ups, WL, True, eps)
        for la, up in enumerate(ups):
            W = new_turn_scratch()
            final_values(V, rs.params, TABLES, mask, up, fifty, W, True, eps)
            e3, box = W.e3, W.box
            assert np.array_equal(e3, WL.e3[:, la]) and np.array_equal(box, WL.box[:, la])
            scores = np.empty(13, dtype=np.int64)
            for r in range(tables.N_ROLLS):
                bonus = roll_box_scores(rs.params, TABLES, mask, fifty, r, scores)
                assert scores[box[r]] >= 0
                one = np.full(13, -1)
                one[box[r]] = scores[box[r]]
                v, _ = best_box(V, mask, up, fifty, one, bonus, eps)
                assert v <= e3[r]
                worst = max(worst, e3[r] - v)
    assert 0 < worst <= eps
