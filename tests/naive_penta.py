"""Independent plain-Python Penta reference, written from RULES.md §1 alone (no dicelab
tables or kernels are used here): a scorer (boxes, joker, bonuses), a brute-force
evaluator of one turn, and a whole game played on given dice with the decisions asked of
a callback (:func:`play_game`), with totals and the winners of several seats.
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

BOXES = ["ones", "twos", "threes", "fours", "fives", "sixes", "three-of-a-kind",
         "four-of-a-kind", "full-house", "small-straight", "large-straight", "chance", "penta"]
UPPER = BOXES[:6]
LOWER = BOXES[6:12]  # the lower boxes a joker may take (Penta box is filled by then)
RULES = ("seed", "hasbro", "free-joker", "no-bonus")


def ordinary(box: str, dice) -> int:
    c = Counter(dice)
    total = sum(dice)
    faces = set(dice)
    if box in BOXES[:6]:
        f = BOXES.index(box) + 1
        return f * c[f]
    if box == "three-of-a-kind":
        return total if max(c.values()) >= 3 else 0
    if box == "four-of-a-kind":
        return total if max(c.values()) >= 4 else 0
    if box == "full-house":
        return 25 if sorted(c.values()) == [2, 3] else 0
    if box == "small-straight":
        return 30 if any(set(range(a, a + 4)) <= faces for a in (1, 2, 3)) else 0
    if box == "large-straight":
        return 40 if faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0
    if box == "chance":
        return total
    return 50 if len(faces) == 1 else 0


def joker_value(box: str, dice) -> int:
    return {"full-house": 25, "small-straight": 30, "large-straight": 40}.get(box, sum(dice))


def allowed_scores(rules: str, filled: dict[str, int], dice) -> tuple[dict[str, int], int]:
    """({open box allowed for this roll: its score}, Penta bonus earned) under ``rules``."""
    open_boxes = [b for b in BOXES if b not in filled]
    is_penta = len(set(dice)) == 1
    penta_box = filled.get("penta")  # None (open), 0 or 50
    bonus = 100 if is_penta and penta_box == 50 and rules != "no-bonus" else 0
    if rules == "seed":
        joker = is_penta and penta_box == 50
    elif rules in ("hasbro", "free-joker"):
        joker = is_penta and penta_box is not None
    else:
        joker = False
    if not joker:
        return {b: ordinary(b, dice) for b in open_boxes}, bonus
    face_box = BOXES[dice[0] - 1]
    if rules == "free-joker":
        out = {}
        for b in open_boxes:
            if b in ("full-house", "small-straight", "large-straight") and face_box in filled:
                out[b] = joker_value(b, dice)
            else:
                out[b] = ordinary(b, dice)
        return out, bonus
    if face_box not in filled:
        return {face_box: sum(dice)}, bonus
    lower_open = [b for b in LOWER if b not in filled]
    if lower_open:
        return {b: joker_value(b, dice) for b in lower_open}, bonus
    return {b: 0 for b in open_boxes}, bonus


def immediate_points(filled: dict[str, int], box: str, score: int, bonus: int) -> int:
    """Points a box entry adds to TOTAL now: score, Penta bonus, +35 if it completes 63."""
    pts = score + bonus
    if box in BOXES[:6]:
        before = sum(filled.get(b, 0) for b in BOXES[:6])
        if before < 63 <= before + score:
            pts += 35
    return pts


def turn_value(rules: str, filled: dict[str, int], future) -> float:
    """Expected points from now on, by brute force over one turn.

    ``future(filled_after)`` is the expected points of the rest of the game after the box
    entry (0 for the last turn). Rerolls enumerate all 6**n ordered outcomes.
    """
    key_filled = tuple(sorted(filled.items()))

    @cache
    def final(roll: tuple[int, ...]) -> float:
        scores, bonus = allowed_scores(rules, dict(key_filled), roll)
        best = float("-inf")
        for b, sc in scores.items():
            after = dict(key_filled)
            after[b] = sc
            best = max(best, immediate_points(dict(key_filled), b, sc, bonus) + future(after))
        return best

    @cache
    def value(roll: tuple[int, ...], rerolls: int) -> float:
        if rerolls == 0:
            return final(roll)
        return max(keep_value(kept, rerolls) for kept in keeps(roll))

    @cache
    def keep_value(kept: tuple[int, ...], rerolls: int) -> float:
        outcomes = rerolls_after(kept)
        return sum(value(r, rerolls - 1) for r in outcomes) / len(outcomes)

    rolls = rerolls_after(())
    return sum(value(r, 2) for r in rolls) / len(rolls)


@cache
def keeps(roll: tuple[int, ...]) -> frozenset[tuple[int, ...]]:
    """The dice ``roll`` can keep (sorted): every subset of its five dice, by position."""
    return frozenset(tuple(sorted(d for d, p in zip(roll, pick, strict=True) if p))
                     for pick in itertools.product((0, 1), repeat=5))


@cache
def rerolls_after(kept: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The roll (sorted) after ``kept`` and each ordered outcome of the other dice, in
    order (all ``6 ** (5 - len(kept))``): the same on every card, so worked out once."""
    return tuple(tuple(sorted(kept + o))
                 for o in itertools.product(range(1, 7), repeat=5 - len(kept)))


# --- a whole game ---------------------------------------------------------------------------


class ScriptExhausted(Exception):
    """The dice ran out before the game ended."""


class IllegalBox(Exception):
    """The callback chose a box the rules do not allow for the roll."""


def joker_case(rules: str, filled: dict[str, int], dice) -> str | None:
    """How a roll is scored: ``None`` for an ordinary roll, else which joker rule applies:
    ``"upper"`` (forced into its face's box), ``"lower"`` (forced into a lower box),
    ``"scratch"`` (lower section full: an upper box at 0), ``"free"`` (free-joker)."""
    if len(set(dice)) != 1 or "penta" not in filled or rules == "no-bonus":
        return None
    if rules == "seed" and filled["penta"] != 50:
        return None
    if rules == "free-joker":
        return "free"
    if BOXES[dice[0] - 1] not in filled:
        return "upper"
    return "lower" if any(b not in filled for b in LOWER) else "scratch"


def card_total(filled: dict[str, int], bonuses: int) -> int:
    """TOTAL = upper + upper bonus (35 from 63 on) + lower + 100 per Penta bonus."""
    upper = sum(filled.get(b, 0) for b in UPPER)
    lower = sum(filled.get(b, 0) for b in BOXES[6:])
    return upper + (35 if upper >= 63 else 0) + lower + 100 * bonuses


def play_game(rules: str, faces, decide) -> dict:
    """One game of 13 turns on the dice ``faces`` (an iterable of faces 1..6, read in order:
    five for the first roll of a turn, then as many as are rerolled).

    ``decide(filled, roll, rerolls_left)`` chooses: with rerolls left the dice to keep (a
    sub-multiset of ``roll``, all five = stop rolling), with none the box (a name).
    ``filled`` maps the filled boxes to their scores; ``roll`` is sorted.

    Returns the card (``filled``), ``bonuses`` (+100s earned), ``upper_bonus`` (earned?),
    ``total``, ``points`` (what each turn added, bonuses included: they sum to the total),
    ``jokers`` (the joker case of every turn that had one) and ``faces_used``.
    """
    it = iter(faces)
    used = 0

    def take(n: int) -> list[int]:
        nonlocal used
        out = []
        for _ in range(n):
            try:
                out.append(next(it))
            except StopIteration:
                raise ScriptExhausted from None
        used += n
        return out

    filled: dict[str, int] = {}
    bonuses = 0
    points = []
    jokers = []
    for _turn in range(13):
        roll = take(5)
        for rerolls_left in (2, 1):
            keep = list(decide(dict(filled), tuple(sorted(roll)), rerolls_left))
            rest = Counter(roll)
            rest.subtract(keep)
            if any(v < 0 for v in rest.values()):
                raise ValueError(f"keep {keep} is not within roll {roll}")
            roll = keep + take(5 - len(keep))
        roll = sorted(roll)
        box = decide(dict(filled), tuple(roll), 0)
        scores, bonus = allowed_scores(rules, filled, roll)
        if box not in scores:
            raise IllegalBox(f"{box} for {roll} with {filled} ({rules})")
        case = joker_case(rules, filled, roll)
        if case is not None:
            jokers.append(case)
        points.append(immediate_points(filled, box, scores[box], bonus))
        filled[box] = scores[box]
        bonuses += bonus > 0
    upper = sum(filled[b] for b in UPPER)
    total = card_total(filled, bonuses)
    assert total == sum(points)
    return {"filled": filled, "bonuses": bonuses, "upper_bonus": upper >= 63, "total": total,
            "points": points, "jokers": jokers, "faces_used": used}


def winners(totals: list[int]) -> list[int]:
    """Seats with the highest TOTAL (several: they share the win, a tie)."""
    best = max(totals)
    return [s for s, t in enumerate(totals) if t == best]
