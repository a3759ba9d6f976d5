"""A Farkle rule set compiled into the arrays every kernel reads (layer 1).

:func:`model` turns :class:`~dicelab.farkle.rules.FarkleRules` into one :class:`Model`,
made once per rule set. Every solver, evaluation and advice reads the game from it, so
no solver asks which house rules are on: it reads what a roll allows, where a turn may
bank, how six dice behave past a banking region, and where a lost turn leads.

* **What a roll allows**: the set-aside encoding of :func:`~dicelab.farkle.rules.
  set_asides` (rolls by class, each class's distinct options (points, dice left) in the
  model's order), and each option's column offset ``oflat = points * 7 + dice`` in a
  turn table stored flat by row.
* **Banking**: ``bank_floor[n]`` (units of 50): the fewest turn points a turn may bank
  with when ``n`` dice are left to roll (:data:`NO_BANK` where it may not).
* **Six dice past a banking region.** A turn with fewer than six dice to roll is proven
  to bank from some row on (the solvers' caps). Six dice are different when they may
  not bank (hot dice must roll on) or cannot lose (a rule that scores every roll of six
  dice): then they roll on, and the turn climbs only by hot dice again, each time with
  at most the chance ``hot``. ``six_rows`` rows past a region hold every such climb but
  one of chance at most :data:`CLIMB_ERR`; 0 when six dice bank like the rest.
* **A lost turn**: ``streak`` lost turns in a row cost ``penalty`` units (then the count
  restarts); without a penalty the count never matters and ``streak`` is 1. Totals may
  fall to ``floor`` units below zero (a penalty stops there).
* **The end**: ``first_to_bank`` (banking the target wins at once) or the last round.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from dicelab.errors import UserError
from dicelab.farkle.rules import (
    FIRST_TO_BANK,
    HOT_DICE,
    NO_BANK,
    PENALTY_STREAK,
    POINT_UNIT,
    FarkleRules,
    set_asides,
)
from dicelab.text import counted

#: Six dice past a banking region: the most probability a turn may still be climbing past
#: the ``six_rows`` rows the solvers hold (see :class:`Model`).
CLIMB_ERR = 2.0**-56
#: The bank floor (units) where a turn may not bank.
NO_BANK_UNITS = NO_BANK // POINT_UNIT


class Model(NamedTuple):
    """The compiled rule set (shapes: ``C`` roll classes, ``J`` options)."""

    class_start: np.ndarray  # int64 (8,): classes of n dice are class_start[n]..[n+1]-1
    class_prob: np.ndarray  # float64 (C,)
    option_start: np.ndarray  # int64 (C + 1,)
    points: np.ndarray  # int64 (J,): units of 50
    dice: np.ndarray  # int64 (J,): dice left to roll (6 after hot dice)
    oflat: np.ndarray  # int64 (J,): points * 7 + dice
    keep_all: np.ndarray  # int64 (C,): the option "set aside all scoring dice"
    dom_start: np.ndarray  # int64 (C + 1,): class c's dominant options are dom[dom_start[c]:..]
    dom: np.ndarray  # int64: options no other of the class beats in points and dice left
    dom_of: np.ndarray  # int64: their oflat (one load fewer in the turn DP's hot loop)
    bust: np.ndarray  # float64 (7,): P(a roll of n dice scores nothing)
    bank_floor: np.ndarray  # int64 (7,): units; NO_BANK_UNITS where no bank
    max_points: int  # the most units one roll adds
    bust_min: float  # the smallest positive bust chance of 1..6 dice
    six_rows: int  # rows six dice may climb past a banking region (0: they bank)
    six_bank: float  # P(six dice score with a set-aside that leaves fewer dice)
    six_finish: float  # six dice rolling on until fewer dice bank: P(it ends by a bust)
    ahead6: float  # a last turn already ahead with six dice to roll: P(it wins)
    streak: int  # lost turns in a row that cost the penalty (1: no penalty)
    penalty: int  # units the streak costs
    floor: int  # units below zero totals may reach
    first_to_bank: bool  # the first to bank the target wins at once (else: the last round)


def classes(sa, n: int) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """The roll classes of ``n`` dice in a set-aside encoding: (chance, its options'
    points, their dice left)."""
    return [(float(sa.class_prob[c]), sa.points[sa.option_start[c]:sa.option_start[c + 1]],
             sa.dice[sa.option_start[c]:sa.option_start[c + 1]])
            for c in range(int(sa.class_start[n]), int(sa.class_start[n + 1]))]


def six_rows(rules: FarkleRules) -> int:
    """Rows (units) past a banking region that six dice rolling on need: 0 unless six dice
    roll on there, because they may not bank (hot dice must roll on) or a roll of six dice
    cannot lose. A turn enters the region by one roll (at most the most points of a roll
    past it); inside it only six dice roll on, and they climb only by hot dice, a roll
    whose six dice all score (one option per roll: all six, so its points are known).
    ``f[k]``, the chance that such rolls add up to ``k`` rows or more, taking every hot
    dice on offer (the most a policy can climb), is ``sum over those rolls of P(roll)
    f[k - points]`` with ``f[k <= 0] = 1``; the rows returned are the first ``k`` with
    ``f[k] <= CLIMB_ERR`` plus the entering roll."""
    sa = set_asides(rules)
    if rules.bank_floor[HOT_DICE] < NO_BANK and float(sa.bust[HOT_DICE]) != 0.0:
        return 0
    # (chances are multiples of 6**-6: a sum within half of one of 1 is 1, rounding apart)
    if sum(p for p, _, left in classes(sa, HOT_DICE)
           if (left == HOT_DICE).any()) >= 1.0 - 0.5 / 6 ** HOT_DICE:
        raise UserError(f"rules '{rules.name}': every roll of six dice lets all six be set "
                        "aside, so a turn can go on forever")
    hot = [(p, int(s)) for p, points, left in classes(sa, HOT_DICE)
           for s, n in zip(points, left, strict=True) if n == HOT_DICE]
    f = [1.0]
    while f[-1] > CLIMB_ERR:
        k = len(f)
        f.append(sum(p * (1.0 if k <= s else f[k - s]) for p, s in hot))
    return len(f) - 1 + sa.max_points


def _dominant(sa) -> dict[str, np.ndarray]:
    """Each class's options that no other option of the class matches or beats in both
    points and dice left (in the options' order): ``dom_start`` and ``dom``. Where a turn's
    values grow with the points and the dice left, the first strict maximum over a class
    is one of these (a better option comes first: more points, then more dice)."""
    start, dom = [0], []
    for c in range(sa.class_prob.size):
        js = range(int(sa.option_start[c]), int(sa.option_start[c + 1]))
        dom += [j for j in js if not any(k != j and sa.points[k] >= sa.points[j]
                                         and sa.dice[k] >= sa.dice[j] for k in js)]
        assert dom[start[-1]] == js[0]  # the first option has the most points
        start.append(len(dom))
    dom = np.array(dom, dtype=np.int64)
    return {"dom_start": np.array(start, dtype=np.int64), "dom": dom,
            "dom_of": np.ascontiguousarray((sa.points * 7 + sa.dice)[dom])}


def model(rules: FarkleRules) -> Model:
    """The compiled :class:`Model` of ``rules`` (made once per rule set and floor: the
    floor is a setting of the solvers, not a rule: :meth:`~dicelab.farkle.rules.FarkleRules.
    penalty_floor`).

    >>> from dicelab.farkle.rules import PRESETS
    >>> m = model(PRESETS["facebook"])
    >>> int(m.bank_floor[1]), m.streak, m.penalty, m.six_rows
    (6, 3, 10, 0)
    """
    return _model(rules, rules.penalty_floor())


@functools.lru_cache(maxsize=64)
def _model(rules: FarkleRules, floor: int) -> Model:
    sa = set_asides(rules)
    if (sa.bust[1:HOT_DICE] <= 0.0).any():
        n = int(np.nonzero(sa.bust[1:HOT_DICE] <= 0.0)[0][0]) + 1
        raise UserError(f"rules '{rules.name}': a roll of {counted(n, 'die', 'dice')} can "
                        "never lose, so a turn can go on forever")
    # six dice: P(some set-aside leaves fewer dice), P(every one leaves six)
    fewer = sum(p for p, _, left in classes(sa, HOT_DICE) if (left < HOT_DICE).any())
    only_hot = sum(p for p, _, left in classes(sa, HOT_DICE) if not (left < HOT_DICE).any())
    bust6 = float(sa.bust[HOT_DICE])
    may_bank6 = rules.bank_floor[HOT_DICE] < NO_BANK
    floor_units = np.array([NO_BANK_UNITS if f >= NO_BANK else f // POINT_UNIT
                            for f in rules.bank_floor], dtype=np.int64)
    penalty = rules.farkle_penalty // POINT_UNIT
    return Model(
        class_start=sa.class_start, class_prob=sa.class_prob, option_start=sa.option_start,
        points=sa.points, dice=sa.dice,
        oflat=np.ascontiguousarray(sa.points * 7 + sa.dice), keep_all=sa.keep_all,
        **_dominant(sa),
        bust=sa.bust, bank_floor=floor_units, max_points=int(sa.max_points),
        bust_min=float(sa.bust[1:][sa.bust[1:] > 0.0].min()), six_rows=six_rows(rules),
        six_bank=fewer, six_finish=bust6 / (1.0 - only_hot),
        ahead6=1.0 if may_bank6 else (1.0 - bust6 - only_hot) / (1.0 - only_hot),
        streak=PENALTY_STREAK if penalty else 1, penalty=penalty,
        floor=floor, first_to_bank=rules.ending_code == FIRST_TO_BANK)


def gain_bound(rules: FarkleRules) -> np.ndarray:
    """W[n] (n = 1..6, points): an upper bound on the expected points any continuation of
    a turn can still add when about to roll n dice.

    W(n) = sum over rolls of max over set-asides of (points + W(dice left)) ignores the
    loss of the turn points on a bust and the option to stop (both only lower the gain),
    so it bounds what any continuation adds. It is the value of a six-state decision
    process that ends at a bust, solved exactly by policy iteration (each policy a 6 x 6
    linear system), then raised by a relative 1e-9 against rounding.

    >>> from dicelab.farkle.rules import PRESETS
    >>> round(float(gain_bound(PRESETS["default"])[6]))
    895
    """
    sa = set_asides(rules)
    rolls = [(n, *c) for n in range(1, HOT_DICE + 1) for c in classes(sa, n)]
    choice = [0] * len(rolls)
    w = np.zeros(7)
    for _ in range(100):
        a = np.eye(6)
        r = np.zeros(6)
        for (n, p, points, left), j in zip(rolls, choice, strict=True):
            r[n - 1] += p * float(points[j])
            a[n - 1, int(left[j]) - 1] -= p
        try:
            w[1:] = np.linalg.solve(a, r)
        except np.linalg.LinAlgError:
            raise UserError(f"rules '{rules.name}': a turn can go on forever") from None
        stable = True
        for k, (_, _, points, left) in enumerate(rolls):
            gain = points + w[left]
            best = int(np.argmax(gain))
            if gain[best] > gain[choice[k]] * (1 + 1e-12) + 1e-12:
                choice[k] = best
                stable = False
        if stable:
            break
    if (w[1:] < 0).any() or not np.isfinite(w).all():
        raise UserError(f"rules '{rules.name}': a turn can go on forever")
    return w * (1.0 + 1e-9) * POINT_UNIT
