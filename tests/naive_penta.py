"""Independent plain-Python Penta reference: a scorer written from RULES.md §1 and a tiny
brute-force evaluator of one turn (no dicelab tables or kernels are used here).
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

BOXES = ["ones", "twos", "threes", "fours", "fives", "sixes", "three-of-a-kind",
         "four-of-a-kind", "full-house", "small-straight", "large-straight", "chance", "penta"]
LOWER = BOXES[6:12]  # the lower boxes a joker may take (Penta box is filled by then)


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
        best = float("-inf")
        seen = set()
        for pick in itertools.product((0, 1), repeat=5):
            kept = tuple(sorted(d for d, p in zip(roll, pick, strict=True) if p))
            if kept not in seen:
                seen.add(kept)
                best = max(best, keep_value(kept, rerolls))
        return best

    @cache
    def keep_value(kept: tuple[int, ...], rerolls: int) -> float:
        n = 5 - len(kept)
        outcomes = list(itertools.product(range(1, 7), repeat=n))
        return sum(value(tuple(sorted(kept + o)), rerolls - 1) for o in outcomes) / len(outcomes)

    rolls = list(itertools.product(range(1, 7), repeat=5))
    return sum(value(tuple(sorted(r)), 2) for r in rolls) / len(rolls)
