"""Compiled kernels of the batched Farkle environment (layer 1: rules arrays in, game
arrays out). :mod:`dicelab.rl.batch` wraps them; the encoding of actions and
observations is :mod:`dicelab.rl.farkle`'s.

State of game ``i``: ``rank[i]`` the roll in front of the player (a global multiset rank
that scores), ``tp[i]`` the turn points set aside before it, ``total[i]`` the banked
total, ``lost[i]`` the turns lost in a row, ``turns[i]`` the turns played, and one
xoshiro256** generator per game (``rng[i]``), so a game's dice do not depend on the
others. Points are in points; the model's option points in units of 50.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dicelab.rng import roll_dice_at

UNIT = 50
SIX = 6
#: Observation entries of a turn, then the solitaire game's two (see dicelab.rl.farkle).
TURN_OBS = 8


@njit(cache=True)
def _lose_turn(i, total, lost, penalty, streak):
    lost[i] += 1
    if penalty > 0 and lost[i] == streak:
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
               reward, done, start_lost, final_obs, obs, mask):
    """One action per game; a finished game starts again at once (its last observation
    in ``final_obs``). Returns -1, or the first game whose action is illegal (then no game
    has moved)."""
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
            else:
                reward[i] = tp[i] if banked else 0.0
                done[i] = True
            if done[i]:
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

    children = np.random.SeedSequence(seed).spawn(games)
    return np.array([state_from_seedsequence(c) for c in children], dtype=np.uint64)
