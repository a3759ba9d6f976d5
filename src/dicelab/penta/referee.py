"""The Penta referee: any policy object's games, played in Python (layer 2).

A turn is :func:`turn`, a generator that asks the policy (through
:func:`dicelab.penta.policy.ask`, which checks every answer), yields how many dice it
wants rolled and is sent their faces; it returns the turn's rolls, keeps and box. Two
drivers feed it dice:

* :func:`play_chunks` -- a simulation: the chunks, generators and lockstep order of the
  simulation kernel (:mod:`dicelab.penta.simulate`). Within a chunk each seat plays all
  its games turn by turn, every game drawing its first roll, then its first reroll, then
  its second, in game order -- the order the kernel draws in, so a policy that decides
  as a built-in one does gets the kernel's very dice and TOTALs, bit for bit, at any
  seed. A policy that decides turn by turn (it has ``observe``: ``optimal:OBJECTIVE``,
  ``penta-win``) plays its games one after another, after the other seats, shown the
  table's cards before each turn, as the kernel plays it. The books are the kernel's
  (histogram of TOTAL, box sums, bonuses, who beat whom).
* :func:`play_game` -- one game on a numpy ``Generator`` (the game logs of
  :mod:`dicelab.logplay`).

>>> from dicelab.penta.policy import penta_policy
>>> from dicelab.penta.rules import get_rules
>>> chance = penta_policy(lambda card, roll, left: roll if left else
...                       next(b for b, s in zip(BOX_NAMES, card.scores) if s is None))
>>> events = play_game([chance], get_rules("seed"), np.random.default_rng(1))
>>> len(events), events[0]["box"], len(events[0]["rolls"])
(13, 'ones', 1)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from dicelab import dice, seeding
from dicelab.penta.policies import Scorecard
from dicelab.penta.policy import Policy, State, ask
from dicelab.penta.rules import BOX_NAMES, N_BOXES, N_DICE, REROLLS, UPPER_TARGET, RuleSet
from dicelab.penta.scoring import box_scores
from dicelab.penta.tables import roll_index
from dicelab.rng import STREAM_PER_TURN, keyed_state, roll_dice, roll_dice_at


class Turn(NamedTuple):
    """A turn as played: every roll (sorted faces), every keep rolled from, the box."""

    rolls: tuple[tuple[int, ...], ...]
    keeps: tuple[tuple[int, ...], ...]
    box: str


def turn(policy: Policy, card: Scorecard, rules: RuleSet
         ) -> Generator[int, Sequence[int], Turn]:
    """One turn of ``policy`` on ``card``: yields the number of dice to roll, is sent
    their faces, returns the :class:`Turn`."""
    roll = tuple(sorted((yield N_DICE)))
    rolls, keeps = [roll], []
    for left in range(REROLLS, 0, -1):
        keep = ask(policy, State(card, roll, left, rules))
        if len(keep) == N_DICE:
            break
        keeps.append(keep)
        roll = tuple(sorted(keep + tuple((yield N_DICE - len(keep)))))
        rolls.append(roll)
    box = ask(policy, State(card, roll, 0, rules))
    return Turn(tuple(rolls), tuple(keeps), box)


def fill(card: Scorecard, box: str, roll: Sequence[int], rules: RuleSet) -> Scorecard:
    """``card`` with ``roll`` written into ``box`` (a box :func:`ask` allowed), a Penta
    bonus counted when the roll earns one."""
    scores, bonus = box_scores(rules, card.mask, card.fifty, roll_index(roll))
    b = BOX_NAMES.index(box)
    new = list(card.scores)
    new[b] = int(scores[b])
    return Scorecard(tuple(new), card.penta_bonuses + (bonus > 0))


def _finish(gen: Generator, faces) -> tuple[int, Turn | None]:
    """Send ``faces`` (None to start): the next number of dice wanted, or 0 and the turn."""
    try:
        return gen.send(faces), None
    except StopIteration as stop:
        return 0, stop.value


# --- one game on a numpy Generator (game logs) ---------------------------------------------


def play_game(policies: Sequence[Policy], rules: RuleSet, rng: np.random.Generator
              ) -> list[dict]:
    """One game, a card per seat, seats taking turns; the events of a game log
    (:mod:`dicelab.gamelog`): ``{"seat", "rolls", "keeps", "box"}`` per turn. A policy
    with an ``observe(cards, seat)`` method (penta-win) is shown the table's cards before
    each of its turns."""
    cards = [Scorecard() for _ in policies]
    events = []
    for _ in range(N_BOXES):
        for seat, policy in enumerate(policies):
            observe = getattr(policy, "observe", None)  # a policy that watches the table
            if observe is not None:
                observe(cards, seat)
            gen = turn(policy, cards[seat], rules)
            want, done = _finish(gen, None)
            while done is None:
                want, done = _finish(gen, [int(x) for x in rng.integers(1, 7, want)])
            cards[seat] = fill(cards[seat], done.box, done.rolls[-1], rules)
            events.append({"seat": seat, "rolls": [list(r) for r in done.rolls],
                           "keeps": [list(k) for k in done.keeps], "box": done.box})
    return events


# --- simulation: the kernel's chunks and lockstep order -------------------------------------


@njit(cache=True)
def _draw(state, n):
    """Faces rank of ``n`` dice from the chunk's generator (as the kernel draws)."""
    return roll_dice(state, n)


@njit(cache=True)
def _draw_at(states, g, n):
    return roll_dice_at(states, g, n)


@njit(cache=True)
def _key_turn(keyed, k0, k1, s, t):
    """Each game's generator of seat ``s``'s turn ``t`` (a stream per turn)."""
    for g in range(keyed.shape[0]):
        keyed[g, 0], keyed[g, 1], keyed[g, 2], keyed[g, 3] = keyed_state(k0, k1, g, s, t)


def _play_seat(policy: Policy, rules: RuleSet, state: np.ndarray, n_games: int, s: int,
               streams: int, tick: Callable[[], None]) -> list[list[Scorecard]]:
    """Seat ``s``'s ``n_games`` games of one chunk in lockstep, on generator ``state``:
    its cards after each number of turns (``N_BOXES + 1`` lists of ``n_games``)."""
    cards = [Scorecard() for _ in range(n_games)]
    trace = [cards]
    keyed = np.empty((n_games, 4), dtype=np.uint64)
    per_turn = streams == STREAM_PER_TURN
    for t in range(N_BOXES):
        if per_turn:
            _key_turn(keyed, state[0], state[1], s, t)
        gens = [turn(policy, card, rules) for card in cards]
        want = [next(gen) for gen in gens]
        done: list[Turn | None] = [None] * n_games
        while any(want):
            for g in range(n_games):
                if want[g]:
                    rank = _draw_at(keyed, g, want[g]) if per_turn else _draw(state, want[g])
                    want[g], done[g] = _finish(gens[g], dice.dice_of_rank(int(rank)))
        cards = [fill(card, d.box, d.rolls[-1], rules) for card, d in zip(cards, done,
                                                                           strict=True)]
        trace.append(cards)
        tick()
    return trace


def _play_seat_online(policy: Policy, rules: RuleSet, state: np.ndarray, n_games: int,
                      s: int, streams: int, tick: Callable[[], None],
                      traces: dict[int, list[list[Scorecard]]], seats: int
                      ) -> list[list[Scorecard]]:
    """:func:`_play_seat` for a policy that decides turn by turn (it has ``observe``: an
    objective's or penta-win's), one game after another as the kernel plays such a seat.
    Before each turn it is shown the table's cards: a seat before it (in ``traces``) has
    played one more turn than it, a seat after it as many."""
    trace = [[Scorecard() for _ in range(n_games)] for _ in range(N_BOXES + 1)]
    keyed = np.empty((n_games, 4), dtype=np.uint64)
    per_turn = streams == STREAM_PER_TURN
    if per_turn:
        by_turn = []
        for t in range(N_BOXES):
            _key_turn(keyed, state[0], state[1], s, t)
            by_turn.append(keyed.copy())
    for g in range(n_games):
        card = trace[0][g]
        for t in range(N_BOXES):
            policy.observe([card if q == s else traces[q][t + (q < s)][g] if q in traces
                            else Scorecard() for q in range(seats)], s)
            gen = turn(policy, card, rules)
            want, done = next(gen), None
            while want:
                rank = _draw_at(by_turn[t], g, want) if per_turn else _draw(state, want)
                want, done = _finish(gen, dice.dice_of_rank(int(rank)))
            card = fill(card, done.box, done.rolls[-1], rules)
            trace[t + 1][g] = card
        for _ in range((g + 1) * N_BOXES // n_games - g * N_BOXES // n_games):
            tick()
    return trace


def _phase(policy: Policy) -> int:
    """When the kernel plays a seat in a chunk: from tables (and users' policies) first,
    then objectives' seats, then penta-win's, which watch the others' cards."""
    if getattr(policy, "observe", None) is None:
        return 0
    return 2 if getattr(policy, "watches", False) else 1


def play_chunks(policies: Sequence[Policy], rules: RuleSet, seed: int, games: int, *,
                max_total: int, streams: int,
                progress: Callable[[int, int], None] | None = None,
                per_chunk: bool = False, first: int = 0, stop: int | None = None,
                chunk_games: int = seeding.CHUNK_GAMES) -> dict[str, np.ndarray]:
    """Every seat's ``games`` games, chunk by chunk as the kernel plays them: the books
    the kernel keeps (the fields of :class:`dicelab.penta.simulate.Tallies` summed over
    chunks, ``ties`` an array of one), TOTALs over ``max_total`` in its last bin.
    ``progress(done, games)`` after every seat's turn of a chunk. ``per_chunk``: also
    ``chunk_wins``, ``chunk_tied`` (chunks, seats) and ``chunk_beat`` (chunks, seats,
    seats), each chunk's own, as the kernel's per-chunk books keep them. ``first``,
    ``stop``, ``chunk_games``: only chunks ``first .. stop - 1`` of that size (a sequential
    test's units): the games a plan's ``run_range`` plays."""
    S = len(policies)
    bounds = seeding.chunk_bounds(games, first, stop, chunk_games)
    chunks = bounds.size - 1 if per_chunk else 0
    chunk = {"wins": np.zeros((chunks, S), dtype=np.int64),
             "tied": np.zeros((chunks, S), dtype=np.int64),
             "beat": np.zeros((chunks, S, S), dtype=np.int64)}
    states = seeding.chunk_states(seed, first, first + bounds.size - 1)
    hist = np.zeros((S, max_total + 1), dtype=np.int64)
    box_sum = np.zeros((S, N_BOXES), dtype=np.int64)
    box_sq = np.zeros((S, N_BOXES), dtype=np.int64)
    per_seat = {k: np.zeros(S, dtype=np.int64) for k in
                ("upper_bonus", "fifty", "bonus_sum", "bonus_sq", "illegal", "wins", "tied")}
    beat = np.zeros((S, S), dtype=np.int64)
    ties = 0
    for j in range(bounds.size - 1):
        lo, G = int(bounds[j]), int(bounds[j + 1] - bounds[j])
        state = states[j].copy()
        def tick(lo=lo, G=G, steps=itertools.count(1)):
            done = next(steps)
            if progress is not None:
                progress(lo + G * done // (S * N_BOXES), games)

        totals = np.empty((S, G), dtype=np.int64)
        traces: dict[int, list[list[Scorecard]]] = {}
        for s in sorted(range(S), key=lambda s: _phase(policies[s])):
            policy = policies[s]
            traces[s] = (_play_seat(policy, rules, state, G, s, streams, tick)
                         if _phase(policy) == 0 else
                         _play_seat_online(policy, rules, state, G, s, streams, tick, traces,
                                           S))
            cards = traces[s][-1]
            totals[s] = [c.total for c in cards]
            sc = np.array([c.scores for c in cards], dtype=np.int64)
            np.add.at(hist[s], np.minimum(totals[s], max_total), 1)
            box_sum[s] += sc.sum(axis=0)
            box_sq[s] += (sc * sc).sum(axis=0)
            nb = np.array([c.penta_bonuses for c in cards], dtype=np.int64)
            per_seat["upper_bonus"][s] += sum(c.upper_sum >= UPPER_TARGET for c in cards)
            per_seat["fifty"][s] += sum(c.fifty for c in cards)
            per_seat["bonus_sum"][s] += nb.sum()
            per_seat["bonus_sq"][s] += (nb * nb).sum()
        if S > 1:
            best = totals.max(axis=0)
            top = totals == best
            shared = top.sum(axis=0) > 1
            won, tied = (top & ~shared).sum(axis=1), (top & shared).sum(axis=1)
            ahead = (totals[:, None, :] > totals[None, :, :]).sum(axis=2)
            per_seat["wins"] += won
            per_seat["tied"] += tied
            ties += int(shared.sum())
            beat += ahead
            if per_chunk:
                chunk["wins"][j], chunk["tied"][j], chunk["beat"][j] = won, tied, ahead
    out = {"hist": hist, "box_sum": box_sum, "box_sq": box_sq, **per_seat,
           "ties": np.array([ties], dtype=np.int64), "beat": beat}
    if per_chunk:
        out.update({f"chunk_{name}": a for name, a in chunk.items()})
    return out


__all__ = ["Turn", "fill", "play_chunks", "play_game", "turn"]
