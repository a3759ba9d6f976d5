"""Compiled kernels of the batched environments (layer 1: rules arrays in, game arrays
out). :mod:`dicelab.rl.batch` wraps them; the encodings of actions and observations are
:mod:`dicelab.rl.farkle`'s and :mod:`dicelab.rl.penta`'s.

Farkle game ``i``: ``rank[i]``, the roll in front of the player (a global multiset rank
that scores); ``tp[i]``, the turn points set aside before it; ``total[i]``, the banked
total; ``lost[i]``, the turns lost in a row; ``turns[i]``, the turns played. Points are
in points, the model's option points in units of 50. Every game of either kind has its
own xoshiro256** generator (``rng[i]``), so a game's dice do not depend on the others.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab.errors import UserError
from dicelab.penta.scoring import apply_box, roll_box_scores
from dicelab.penta.tables import N_ROLLS, ROLL_BASE, roll_dice_of
from dicelab.rng import roll_dice_at

UNIT = 50
SIX = 6
#: Observation entries of a turn, then the solitaire game's two (see dicelab.rl.farkle).
TURN_OBS = 8


@njit(cache=True)
def _lose_turn(i, total, lost, penalty, streak):
    """A lost turn, as the referee counts it: the ``streak``-th in a row costs the
    penalty (if any) and starts the count again."""
    lost[i] += 1
    if lost[i] == streak:
        total[i] -= penalty
        lost[i] = 0


@njit(cache=True)
def _start_turn(i, solo, rank, tp, total, lost, turns, rng, roll_class, penalty, streak):
    """Roll six dice until a roll scores; returns the turns lost on the way (each a lost
    turn of the solitaire game, or a skipped turn of the one-turn game)."""
    n_lost = 0
    tp[i] = 0
    while True:
        r = roll_dice_at(rng, i, SIX)
        if roll_class[r] >= 0:
            rank[i] = r
            return n_lost
        n_lost += 1
        if solo:
            turns[i] += 1
            _lose_turn(i, total, lost, penalty, streak)


@njit(cache=True)
def _observe(i, solo, rank, tp, total, lost, counts, roll_class, option_start, points,
             dice_left, bank_floor, obs, mask):
    r = rank[i]
    n = 0
    for f in range(1, 7):
        obs[i, f - 1] = counts[r, f]
        n += counts[r, f]
    obs[i, 6] = n
    obs[i, 7] = tp[i]
    if solo:
        obs[i, 8] = total[i]
        obs[i, 9] = lost[i]
    mask[i, :] = 0
    c = roll_class[r]
    for j in range(option_start[c], option_start[c + 1]):
        k = j - option_start[c]
        mask[i, 2 * k] = 1
        if tp[i] + points[j] * UNIT >= bank_floor[dice_left[j]]:
            mask[i, 2 * k + 1] = 1


@njit(cache=True)
def reset_games(solo, rank, tp, total, lost, turns, rng, start_lost, counts, roll_class,
                option_start, points, dice_left, bank_floor, penalty, streak, obs, mask):
    """Every game at its start (``start_lost``: turns lost before its first decision)."""
    for i in range(rank.size):
        total[i] = 0
        lost[i] = 0
        turns[i] = 0
        start_lost[i] = _start_turn(i, solo, rank, tp, total, lost, turns, rng, roll_class,
                                    penalty, streak)
        _observe(i, solo, rank, tp, total, lost, counts, roll_class, option_start, points,
                 dice_left, bank_floor, obs, mask)


@njit(cache=True)
def step_games(actions, solo, target, rank, tp, total, lost, turns, rng, counts,
               roll_class, option_start, points, dice_left, bank_floor, penalty, streak,
               max_turns, reward, done, truncated, start_lost, final_obs, obs, mask):
    """One action per game; a finished game starts again at once (its last observation
    in ``final_obs``): ``done`` where it reached the target (a one-turn game: where the
    turn ended), ``truncated`` where a solitaire game played ``max_turns`` turns without.
    Returns -1, or the first game whose action is illegal (then no game has moved)."""
    g = rank.size
    for i in range(g):
        a = actions[i]
        c = roll_class[rank[i]]
        if a < 0 or a // 2 >= option_start[c + 1] - option_start[c]:
            return i
        if a % 2 == 1:
            j = option_start[c] + a // 2
            if tp[i] + points[j] * UNIT < bank_floor[dice_left[j]]:
                return i
    for i in range(g):
        a = actions[i]
        j = option_start[roll_class[rank[i]]] + a // 2
        tp[i] += points[j] * UNIT
        reward[i] = 0.0
        done[i] = False
        truncated[i] = False
        start_lost[i] = 0
        banked = a % 2 == 1
        ended = banked
        if not banked:
            r = roll_dice_at(rng, i, dice_left[j])
            rank[i] = r
            ended = roll_class[r] < 0
        if ended:
            if solo:
                reward[i] = -1.0
                turns[i] += 1
                if banked:
                    total[i] += tp[i]
                    lost[i] = 0
                else:
                    _lose_turn(i, total, lost, penalty, streak)
                if banked and total[i] >= target:
                    done[i] = True
                else:
                    n_lost = _start_turn(i, solo, rank, tp, total, lost, turns, rng,
                                         roll_class, penalty, streak)
                    reward[i] -= n_lost
                    truncated[i] = turns[i] >= max_turns
            else:
                reward[i] = tp[i] if banked else 0.0
                done[i] = True
            if done[i] or truncated[i]:
                final_obs[i, :] = 0
                final_obs[i, 7] = tp[i]
                if solo:
                    final_obs[i, 8] = total[i]
                    final_obs[i, 9] = lost[i]
                    total[i] = 0
                    lost[i] = 0
                    turns[i] = 0
                start_lost[i] = _start_turn(i, solo, rank, tp, total, lost, turns, rng,
                                            roll_class, penalty, streak)
        _observe(i, solo, rank, tp, total, lost, counts, roll_class, option_start, points,
                 dice_left, bank_floor, obs, mask)
    return -1


@njit(cache=True)
def keep_all_actions(rank, tp, roll_class, option_start, keep_all, points, dice_left,
                     bank_floor, threshold, out):
    """A threshold policy's action per game: set aside every scoring die, bank once the
    turn points reach ``threshold`` (where the rules allow the bank)."""
    for i in range(rank.size):
        c = roll_class[rank[i]]
        j = keep_all[c]
        k = j - option_start[c]
        after = tp[i] + points[j] * UNIT
        out[i] = 2 * k + (1 if after >= threshold and after >= bank_floor[dice_left[j]]
                          else 0)


def new_rng_states(seed, games: int) -> np.ndarray:
    """One xoshiro256** state per game from ``SeedSequence(seed)`` (a child each)."""
    from dicelab.rng import state_from_seedsequence

    try:
        children = np.random.SeedSequence(seed).spawn(games)
    except (TypeError, ValueError):
        raise UserError(f"seed must be a non-negative integer, not {seed!r}") from None
    return np.array([state_from_seedsequence(c) for c in children], dtype=np.uint64)


# --- Penta ---------------------------------------------------------------------------------
# State of game i: ``r[i]`` the roll (a local roll index, dicelab.penta.tables),
# ``left[i]`` the rerolls left, ``card[i]`` the filled boxes (bits), ``up[i]`` the capped
# upper total, ``fifty[i]``, ``bonuses[i]``, ``total[i]``, ``scores[i, b]`` (-1 open), and
# what the roll in front of it scores: ``boxsc[i, b]`` in each box (-1: not allowed) and
# the Penta bonus ``bonus[i]``. Actions: 0..31 keep the sorted roll's dice at the set
# bits, 32 + b score box b. ``faces[r]``: roll r's sorted faces; ``keeps[r]``: the bits of
# its keep actions (one per multiset, all five excluded).

P_KEEPS = 32
P_BOXES = 13
P_FULL = (1 << P_BOXES) - 1
P_DICE = 5


def canonical_keep(faces: list[int], keep: int) -> bool:
    """Whether position mask ``keep`` of the sorted ``faces`` keeps the leftmost of equal
    faces (one action per multiset kept)."""
    return all(not (keep >> i) & 1 or (keep >> (i - 1)) & 1
               for i in range(1, P_DICE) if faces[i] == faces[i - 1])


def penta_roll_tables() -> tuple[np.ndarray, np.ndarray]:
    """(faces (252, 5), keeps (252,)) of every Penta roll (see above)."""
    faces = np.array([roll_dice_of(r) for r in range(N_ROLLS)], dtype=np.int64)
    keeps = np.array([sum(1 << k for k in range(P_KEEPS - 1) if canonical_keep(f.tolist(), k))
                      for f in faces], dtype=np.int64)
    return faces, keeps


@njit(cache=True)
def _penta_observe(i, rp, T, faces, keeps, r, left, card, fifty, bonuses, total, scores,
                   boxsc, bonus, obs, mask):
    """Observation and mask of game ``i`` (and what its roll scores in each box)."""
    ri = r[i]
    for b in range(P_BOXES):
        obs[i, b] = scores[i, b]
    obs[i, P_BOXES] = bonuses[i]
    for k in range(P_DICE):
        obs[i, P_BOXES + 1 + k] = faces[ri, k]
    obs[i, P_BOXES + 1 + P_DICE] = left[i]
    obs[i, P_BOXES + 2 + P_DICE] = total[i]
    bits = keeps[ri] if left[i] > 0 else 0
    for k in range(P_KEEPS):
        mask[i, k] = (bits >> k) & 1
    bonus[i] = roll_box_scores(rp, T, card[i], fifty[i], ri, boxsc[i])
    for b in range(P_BOXES):
        mask[i, P_KEEPS + b] = 1 if boxsc[i, b] >= 0 else 0


@njit(cache=True)
def _penta_new_game(i, rng, r, left, card, up, fifty, bonuses, total, scores):
    card[i] = 0
    up[i] = 0
    fifty[i] = 0
    bonuses[i] = 0
    total[i] = 0
    scores[i, :] = -1
    r[i] = roll_dice_at(rng, i, P_DICE) - ROLL_BASE
    left[i] = 2


@njit(cache=True)
def penta_reset(rp, T, faces, keeps, rng, r, left, card, up, fifty, bonuses, total, scores,
                boxsc, bonus, obs, mask):
    for i in range(r.size):
        _penta_new_game(i, rng, r, left, card, up, fifty, bonuses, total, scores)
        _penta_observe(i, rp, T, faces, keeps, r, left, card, fifty, bonuses, total, scores,
                       boxsc, bonus, obs, mask)


@njit(cache=True)
def penta_step(actions, rp, T, faces, keeps, rng, r, left, card, up, fifty, bonuses, total,
               scores, boxsc, bonus, reward, done, final_obs, obs, mask):
    """One action per game, a finished game started again at once; returns -1, or the
    first game whose action is illegal (then no game has moved)."""
    g = r.size
    for i in range(g):
        a = actions[i]
        if a < 0 or a >= P_KEEPS + P_BOXES or mask[i, a] == 0:
            return i
    for i in range(g):
        a = actions[i]
        reward[i] = 0.0
        done[i] = False
        if a < P_KEEPS:
            keep = 0
            n = 0
            for k in range(P_DICE):
                if (a >> k) & 1:
                    keep = T.add[keep, faces[r[i], k]]
                    n += 1
            rolled = roll_dice_at(rng, i, P_DICE - n)
            r[i] = T.union[keep, rolled]
            left[i] -= 1
        else:
            b = a - P_KEEPS
            pts, up[i], fifty[i] = apply_box(up[i], fifty[i], b, boxsc[i, b])
            scores[i, b] = boxsc[i, b]
            card[i] |= 1 << b
            if bonus[i] > 0:
                bonuses[i] += 1
            reward[i] = pts + bonus[i]
            total[i] += pts + bonus[i]
            if card[i] == P_FULL:
                done[i] = True
                _penta_observe(i, rp, T, faces, keeps, r, left, card, fifty, bonuses, total,
                               scores, boxsc, bonus, final_obs, mask)
                _penta_new_game(i, rng, r, left, card, up, fifty, bonuses, total, scores)
            else:
                r[i] = roll_dice_at(rng, i, P_DICE) - ROLL_BASE
                left[i] = 2
        _penta_observe(i, rp, T, faces, keeps, r, left, card, fifty, bonuses, total, scores,
                       boxsc, bonus, obs, mask)
    return -1


@njit(cache=True)
def turn_outcomes(choose, class_start, class_prob, option_start, points, dice_left, bust,
                  bank_floor, max_rows, bank, mass):
    """One turn under the policy ``choose[row, class]`` (rows past its last play the
    last), followed forwards over ``max_rows`` rows of turn points: ``bank[g]`` gets the
    probability to bank ``g`` rows, ``mass`` (max_rows + 1, 7) the probability to roll
    ``n`` dice at each row. Returns (P(lost), P(still rolling past max_rows), -1), or
    (0, 0, the class) where the policy's action is illegal."""
    last = choose.shape[0] - 1
    mass[:] = 0.0
    bank[:] = 0.0
    mass[0, SIX] = 1.0
    lost = 0.0
    for row in range(max_rows):
        for n in range(1, SIX + 1):
            m = mass[row, n]
            if m == 0.0:
                continue
            lost += m * bust[n]
            for c in range(class_start[n], class_start[n + 1]):
                a = choose[min(row, last), c]
                k = a // 2
                if a < 0 or k >= option_start[c + 1] - option_start[c]:
                    return 0.0, 0.0, c
                j = option_start[c] + k
                to = row + points[j]
                p = m * class_prob[c]
                if a % 2 == 1:
                    if to * UNIT < bank_floor[dice_left[j]]:
                        return 0.0, 0.0, c
                    bank[to] += p
                else:
                    mass[min(to, max_rows), dice_left[j]] += p
    unfinished = 0.0
    for n in range(SIX + 1):
        unfinished += mass[max_rows, n]
    return lost, unfinished, -1
