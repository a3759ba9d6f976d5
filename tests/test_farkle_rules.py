"""The Farkle model (dicelab.farkle.rules): the set-aside encoding for every roll of 1..6
dice against the plain-Python enumeration of every subset (tests/naive_farkle), the
rules' own checks, and the TOML rules files."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections import Counter, defaultdict
from fractions import Fraction

import naive_farkle as nf
import numpy as np
import pytest

from dicelab import dice
from dicelab.errors import UserError
from dicelab.farkle import kernels as K
from dicelab.farkle.rules import (
    PRESETS,
    FarkleRules,
    bust_probabilities,
    check_lost_turns,
    check_points,
    check_seats,
    check_target,
    dice_after,
    dice_kept,
    load_rules,
    parse_rules_toml,
    set_asides,
    setaside_points,
)

#: A table of one's own: a third single, a custom triple, doubling n of a kind, three pairs
#: worth less than the default, four of a kind + a pair not three pairs, no two triplets.
HOUSE = parse_rules_toml(
    """
    name = "house"
    base = "default"
    singles = {1 = 100, 5 = 50, 6 = 50}
    three-of-a-kind = {2 = 250}
    n-of-a-kind-mode = "double"
    three-pairs = 1000
    four-and-pair-as-three-pairs = false
    two-triplets = 0
    """, source="house.toml")

TABLES = [*PRESETS.values(), HOUSE]
ROLLS = range(int(dice.SIZE_OFFSET[1]), int(dice.SIZE_OFFSET[7]))  # every roll of 1..6 dice


# ----------------------------------------------------------------------- the encoding


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_options_of_every_roll_are_the_distinct_legal_set_asides(table):
    """Every roll of 1..6 dice: the options are exactly the distinct (points, dice left)
    of every legal subset, sorted by points then dice left (both descending), and the
    "all scoring dice" option is the most dice kept, then the most points."""
    sa = set_asides(table)
    for r in ROLLS:
        roll = tuple(dice.dice_of_rank(r))
        want = nf.setaside_options(table, roll)
        got = sa.options(r)
        assert got == want, roll
        c = int(sa.roll_class[r])
        if not want:
            assert c == -1 and sa.roll_keep_all[r] == -1, roll
            continue
        assert sa.class_start[len(roll)] <= c < sa.class_start[len(roll) + 1], roll
        kept, points = nf.all_scoring(table, roll)
        j = int(sa.keep_all[c])
        assert sa.option_start[c] <= j < sa.option_start[c + 1]
        assert (int(sa.points[j]) * 50, int(sa.dice[j])) == (points, nf.dice_left(len(roll),
                                                                                   kept)), roll
        assert sa.roll_keep_all[r] == j


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_classes_are_the_rolls_with_one_option_list_and_carry_their_probability(table):
    sa = set_asides(table)
    members: dict[int, list[int]] = defaultdict(list)
    for r in ROLLS:
        if sa.roll_class[r] >= 0:
            members[int(sa.roll_class[r])].append(r)
    assert sorted(members) == list(range(sa.n_classes))  # no empty class
    for n in range(1, 7):
        lo, hi = int(sa.class_start[n]), int(sa.class_start[n + 1])
        seen = set()
        for c in range(lo, hi):
            lists = {tuple(sa.options(r)) for r in members[c]}
            assert len(lists) == 1  # one option list per class ...
            seen |= lists
            assert all(dice.SIZE[r] == n for r in members[c])
            assert sa.class_prob[c] == pytest.approx(sum(dice.PROB[r] for r in members[c]),
                                                     abs=1e-15)
        assert len(seen) == hi - lo  # ... and a different one for every class
        # with the bust, the classes of n dice are every roll of n dice
        assert sa.class_prob[lo:hi].sum() + sa.bust[n] == pytest.approx(1.0, abs=1e-14)
    assert sa.bust[0] == 0.0 and sa.class_start[0] == sa.class_start[1] == 0
    assert sa.option_start[-1] == sa.points.size == sa.dice.size
    assert (sa.points > 0).all() and ((sa.dice >= 1) & (sa.dice <= 6)).all()
    assert sa.max_points * 50 == max(p for r in ROLLS for p, _ in nf.setaside_options(table,
                                                                   dice.dice_of_rank(r)))


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_setaside_points_is_the_best_partition_of_every_multiset(table):
    for r in ROLLS:
        faces = tuple(dice.dice_of_rank(r))
        # the best partition, or zilch's six dice that score nothing (all six, hot dice)
        assert setaside_points(table, faces) == nf.legal_setasides(table, faces).get(faces), \
            faces


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_exact_bust_probability_by_full_enumeration(table):
    b = bust_probabilities(table)
    for n in range(1, 7):
        assert b[n] == pytest.approx(nf.bust_probability(table, n), abs=1e-15)
        assert set_asides(table).bust[n] == b[n]


def test_published_bust_risks():
    # the seed's risks, as printed there; exact: 4/6, 16/36, 60/216, 204/1296, 600/7776,
    # 1080/46656 (docs/rules.md); basic differs only with six dice (no three pairs)
    for name in ("default", "ones-300"):
        b = bust_probabilities(PRESETS[name])
        assert [round(100 * b[n], 2) for n in range(1, 7)] == [66.67, 44.44, 27.78, 15.74,
                                                              7.72, 2.31]
        assert b[1] == pytest.approx(2 / 3, abs=1e-15)
        assert b[6] == pytest.approx(5 / 216, abs=1e-15)
    basic = bust_probabilities(PRESETS["basic"])
    assert basic[6] == pytest.approx(5 / 162, abs=1e-15)
    assert [basic[n] for n in range(1, 6)] == [bust_probabilities(PRESETS["default"])[n]
                                               for n in range(1, 6)]


def test_rule_sets_that_score_alike_share_their_roll_classes():
    """The set-asides are compiled once per scoring: a rule set that differs in banking
    shares the classes and keeps its own bank floor and digest."""
    base = PRESETS["default"]
    other = dataclasses.replace(base, name="floor-300", min_bank=300, farkle_penalty=500)
    a, b = set_asides(base), set_asides(other)
    assert a.class_prob is b.class_prob and a.roll_class is b.roll_class
    assert a.bank_floor[1] < b.bank_floor[1] == 300 and a.rules_digest != b.rules_digest
    zilch = set_asides(PRESETS["zilch"])
    assert zilch.class_prob is not a.class_prob and zilch.bust[6] == 0.0 < a.bust[6]


def test_rule_examples():
    d = set_asides(PRESETS["default"])
    # RULES.md: with 1 2 3 4 6 6 only the 1 may be set aside
    assert d.options(dice.rank_of_dice([1, 2, 3, 4, 6, 6])) == [(100, 5)]
    # three 1s + a 1 beats four of a kind
    assert setaside_points(PRESETS["default"], [1, 1, 1, 1]) == 1100
    # four of a kind + a pair is three pairs (1500, hot dice), and beats 1000 + 100
    assert d.options(dice.rank_of_dice([2, 2, 2, 2, 3, 3]))[0] == (1500, 6)
    # 5 5 and nothing else: both 5s or one of them
    assert d.options(dice.rank_of_dice([5, 5, 2, 3, 4, 6])) == [(100, 4), (50, 5)]
    straight = d.options(dice.rank_of_dice([1, 2, 3, 4, 5, 6]))
    assert straight == [(1500, 6), (150, 4), (100, 5), (50, 5)]
    # options with equal points and different dice left are different options
    assert d.options(dice.rank_of_dice([1, 1, 1, 1, 5, 5]))[:4] == [(1500, 6), (1150, 1),
                                                                    (1100, 2), (1100, 1)]
    # docs/rules.md: basic sets aside only three of four 2s; six 2s are two triples
    basic = PRESETS["basic"]
    assert setaside_points(basic, [2, 2, 2, 2]) is None
    assert set_asides(basic).options(dice.rank_of_dice([2, 2, 2, 2]))[0] == (200, 1)
    assert setaside_points(basic, [2] * 6) == 400
    # ones-300: four 4s score 800, six 1s 2400
    assert setaside_points(PRESETS["ones-300"], [4] * 4) == 800
    assert setaside_points(PRESETS["ones-300"], [1] * 6) == 2400


#: docs/rules.md's table of the presets, written out from the page alone (not from the
#: FarkleRules fields): (three 1s, n of a kind ("fixed" 1000/2000/3000, or the multiples
#: of the triple for four, five, six), straight, three pairs, four of a kind + a pair as
#: three pairs, two triplets, six dice that score nothing).
DOC_TABLE = {
    "default": (1000, "fixed", 1500, 1500, True, 2500, 0),
    "basic": (1000, None, 0, 0, False, 0, 0),
    "ones-300": (300, (2, 4, 8), 1500, 750, False, 0, 0),
    "facebook": (1000, (2, 3, 4), 1500, 750, False, 0, 0),
    "zilch": (1000, (2, 4, 8), 1500, 1500, True, 0, 500),
}
#: The page's exact bust risks, 1..6 dice (the same for every preset but at six dice).
DOC_BUST = [Fraction(2, 3), Fraction(4, 9), Fraction(5, 18), Fraction(17, 108),
            Fraction(25, 324)]
DOC_BUST_SIX = {"default": Fraction(5, 216), "ones-300": Fraction(5, 216),
                "facebook": Fraction(5, 216), "basic": Fraction(5, 162), "zilch": 0}


@functools.cache
def _doc_combinations(name: str) -> tuple[tuple[Counter, int], ...]:
    ones, kinds, straight, pairs, four_pair, triplets, _ = DOC_TABLE[name]
    out = [(Counter({1: 1}), 100), (Counter({5: 1}), 50)]
    for f in range(1, 7):
        triple = ones if f == 1 else 100 * f
        out.append((Counter({f: 3}), triple))
        for k in (4, 5, 6):
            if kinds == "fixed":
                out.append((Counter({f: k}), 1000 * (k - 3)))
            elif kinds:
                out.append((Counter({f: k}), triple * kinds[k - 4]))
    if straight:
        out.append((Counter(range(1, 7)), straight))
    for a, b, c in itertools.combinations(range(1, 7), 3) if pairs else ():
        out.append((Counter({a: 2, b: 2, c: 2}), pairs))
    for a, b in itertools.permutations(range(1, 7), 2) if four_pair else ():
        out.append((Counter({a: 4, b: 2}), pairs))
    for a, b in itertools.combinations(range(1, 7), 2) if triplets else ():
        out.append((Counter({a: 3, b: 3}), triplets))
    return tuple(out)


@functools.cache
def _doc_best(name: str, counts: tuple[int, ...]) -> int | None:
    """The best split of the dice (``counts[f - 1]`` dice show ``f``) into the page's
    combinations; None if some die belongs to none."""
    if not any(counts):
        return 0
    have = Counter({f: k for f, k in zip(range(1, 7), counts, strict=True) if k})
    top = None
    for combo, pts in _doc_combinations(name):
        if combo <= have:
            rest = _doc_best(name, tuple((have - combo)[f] for f in range(1, 7)))
            if rest is not None and (top is None or pts + rest > top):
                top = pts + rest
    return top


def _doc_points(name: str, faces: tuple[int, ...]) -> int | None:
    """The page's points of setting aside exactly ``faces``; six dice that hold no
    combination at all score the table's six-dice entry (zilch); None: not a legal
    set-aside."""
    def best(dice_):
        return _doc_best(name, tuple(dice_.count(f) for f in range(1, 7)))

    got = best(faces)
    six = DOC_TABLE[name][-1]
    if got is None and six and len(faces) == 6 and not any(
            best(sub) for k in range(1, 7) for sub in itertools.combinations(faces, k)):
        return six
    return got


@pytest.mark.parametrize("name", list(DOC_TABLE))
def test_every_preset_scores_as_the_rules_page_says(name):
    """Every set-aside of 1..6 dice under each preset scores what docs/rules.md's table
    says (its best split into the listed combinations), and each preset's exact bust
    risks are the page's."""
    assert set(PRESETS) == set(DOC_TABLE)  # the page lists every preset
    rules = PRESETS[name]
    risk = {}
    for n in range(1, 7):
        risk[n] = Fraction(0)
        for faces in itertools.combinations_with_replacement(range(1, 7), n):
            want = _doc_points(name, faces)
            assert setaside_points(rules, faces) == want, (name, faces)
            legal = any(_doc_points(name, sub) for k in range(1, n + 1)
                        for sub in set(itertools.combinations(faces, k)))
            if not legal:  # the roll scores nothing: its chance, rolled in any order
                ways = math.factorial(n)
                for c in Counter(faces).values():
                    ways //= math.factorial(c)
                risk[n] += Fraction(ways, 6 ** n)
    assert [risk[n] for n in range(1, 6)] == DOC_BUST
    assert risk[6] == DOC_BUST_SIX[name]
    assert list(bust_probabilities(rules).values()) == pytest.approx(
        [float(risk[n]) for n in range(1, 7)], abs=1e-15)


def test_the_encoding_is_read_only_and_memoised():
    sa = set_asides(PRESETS["default"])
    assert set_asides(PRESETS["default"]) is sa
    for a in (sa.points, sa.dice, sa.class_prob, sa.roll_class, sa.keep_all, sa.bust):
        with pytest.raises(ValueError):
            a[0] = a[0]
    arrays = sa.arrays()
    assert arrays.roll_keep_all.tolist() == sa.roll_keep_all.tolist()
    assert all(a.flags.c_contiguous for a in arrays)


def test_dice_after_and_dice_kept_are_inverse():
    for rolled in range(1, 7):
        lefts = set()
        for kept in range(1, rolled + 1):
            left = dice_after(rolled, kept)
            assert 1 <= left <= 6 and dice_kept(rolled, left) == kept
            lefts.add(left)
        assert len(lefts) == rolled  # dice left tell how many were kept
    assert dice_after(6, 6) == 6 and dice_after(3, 3) == 6 and dice_after(3, 1) == 2


# ----------------------------------------------------------------------- the kernels' dice


def test_scripted_roll_maps_faces_to_the_multiset_rank():
    for n in range(1, 5):
        for seq in itertools.product(range(1, 7), repeat=n):
            cursor = np.zeros(2, dtype=np.int64)
            r = K._scripted_roll(np.array(seq, dtype=np.int64), cursor, n)
            assert r == dice.rank_of_dice(seq)
            assert cursor[0] == n and cursor[1] == 0
    cursor = np.zeros(2, dtype=np.int64)
    K._scripted_roll(np.array([1, 2], dtype=np.int64), cursor, 3)
    assert cursor[1] == 1  # exhausted script is flagged, not read past its end


def test_bust_counting_kernel_agrees_with_the_exact_risks():
    """The jitted bust counter rolls with the real roll and reads the encoding's classes."""
    from dicelab.seeding import chunk_bounds, chunk_states

    rolls = 200_000
    bounds = chunk_bounds(rolls)
    states = chunk_states(7, 0, len(bounds) - 1)
    out = np.zeros((len(bounds) - 1, 7), dtype=np.int64)
    sa = set_asides(PRESETS["basic"])
    K.bust_counts(states, bounds, sa.roll_class, out)
    busts = out.sum(axis=0)
    assert busts[0] == 0
    for n in range(1, 7):
        p = sa.bust[n]
        assert abs(busts[n] / rolls - p) < 4 * np.sqrt(p * (1 - p) / rolls)


# ----------------------------------------------------------------------- rules as data


def test_digest_follows_the_content_not_the_name():
    same_name = FarkleRules(name="default", straight=1000)
    assert same_name.digest() != PRESETS["default"].digest()
    renamed = FarkleRules(name="mine", description="a copy")
    assert renamed.digest() == PRESETS["default"].digest()
    assert load_rules("default", "first-to-bank").digest() != PRESETS["default"].digest()


def test_load_rules_and_the_ending():
    assert load_rules(None) is PRESETS["default"]
    assert load_rules("basic").ending == "last-round"
    ftb = load_rules("basic", "first-to-bank")
    assert ftb.ending == "first-to-bank" and ftb.ending_code == 1
    assert ftb.with_ending(None) is ftb and load_rules(ftb, "last-round").ending_code == 0
    # the ending changes nothing of the scoring
    assert set_asides(ftb).options(dice.rank_of_dice([1, 5, 5])) == \
        set_asides(PRESETS["basic"]).options(dice.rank_of_dice([1, 5, 5]))
    with pytest.raises(UserError, match="--ending must be one of last-round, first-to-bank"):
        load_rules("default", "sudden")
    with pytest.raises(UserError, match="ending must be one of"):
        FarkleRules(name="x", ending="sudden")


def test_rules_file(tmp_path):
    f = tmp_path / "fast-game.toml"
    f.write_text('base = "ones-300"\nending = "first-to-bank"\nstraight = 0\n')
    rules = load_rules(str(f))
    assert rules.name == "fast-game" and rules.ending == "first-to-bank"
    assert rules.straight == 0 and rules.three_of_a_kind[1] == 300
    assert rules.source == str(f)
    assert load_rules(str(f), "last-round").ending == "last-round"  # --ending wins
    # n-of-a-kind given: fixed unless a mode is given
    r = parse_rules_toml('base = "basic"\nn-of-a-kind = {4 = 800}\n', "x.toml")
    assert r.n_of_a_kind_mode == "fixed" and r.n_of_a_kind == (800, 0, 0)
    assert setaside_points(r, [3, 3, 3, 3]) == 800


@pytest.mark.parametrize(("text", "message"), [
    ("name = [unclosed", "malformed TOML"),
    ("colour = 1", "unknown key(s) colour"),
    ('base = "fancy"', "base 'fancy' is not a preset"),
    ("straight = 1234", "multiple of 50"),
    ("straight = -50", "multiple of 50"),
    ("straight = 1.5", "must be an integer"),
    ("straight = true", "must be an integer"),
    ("straight = 1000050", "at most 1,000,000"),
    ("singles = {7 = 50}", "not one of"),
    ("singles = {x = 50}", "not a face"),
    ("singles = 100", "expected a table"),
    ('n-of-a-kind-mode = "triple"', "n-of-a-kind-mode must be one of fixed, double, linear, none"),
    ('ending = "sudden"', "ending must be one of last-round, first-to-bank"),
    ("four-and-pair-as-three-pairs = 1", "true or false"),
    ('name = ""', "name must be a non-empty string"),
    ('base = "basic"\nsingles = {}\nthree-of-a-kind = {1 = 0, 2 = 0, 3 = 0, 4 = 0, 5 = 0, '
     '6 = 0}', "no roll of six dice scores"),
])
def test_bad_rules_files_are_one_line_user_errors(text, message):
    with pytest.raises(UserError) as exc:
        parse_rules_toml(text, source="bad.toml")
    assert message in str(exc.value) and "\n" not in str(exc.value)
    assert str(exc.value).startswith("bad.toml")


def test_load_rules_refusals(tmp_path):
    with pytest.raises(UserError, match="unknown Farkle rules 'nope'"):
        load_rules("nope")
    with pytest.raises(UserError, match="not found"):
        load_rules(str(tmp_path / "missing.toml"))


@pytest.mark.parametrize("name", ["", " ", "   "])
def test_an_empty_rules_name_is_no_rules_not_the_current_directory(name):
    """'' is not a path ('.', a directory): it is named as given, like any unknown name."""
    with pytest.raises(UserError) as exc:
        load_rules(name)
    assert str(exc.value).startswith(f"unknown Farkle rules {name!r}; valid: default")


def test_a_directory_named_as_rules_is_still_refused_as_a_file(tmp_path):
    with pytest.raises(UserError, match="is a directory"):
        load_rules(str(tmp_path))


@pytest.mark.parametrize("bad", [0, -50, 125, 10.0, "10000", True])
def test_check_target(bad):
    assert check_target(None) == 10_000 and check_target(np.int64(5000)) == 5000
    with pytest.raises(UserError, match="--target must be a positive multiple of 50"):
        check_target(bad)


def test_check_seats_and_points():
    assert check_seats(1) == 1 and check_seats(7) == 7
    for n in (0, 8):
        with pytest.raises(UserError, match="1 to 7 seats"):
            check_seats(n)
    assert check_points("cap", 100) == 100 and check_points("x", 0, minimum=0) == 0
    for v in (25, 0, -50, 1.0, False):
        with pytest.raises(UserError, match="multiple of 50"):
            check_points("cap", v)
    # with a maximum: both ends are in, their neighbours out
    assert check_points("total", -100, -100, 950) == -100
    assert check_points("total", np.int64(950), -100, 950) == 950
    for v in (-150, 1000, 975):
        with pytest.raises(UserError, match=r"total must be a multiple of 50 in -100\.\.950"):
            check_points("total", v, -100, 950)


def test_check_lost_turns():
    assert check_lost_turns("n", 0) == 0 and check_lost_turns("n", np.int64(2)) == 2
    assert check_lost_turns("n", 0, streak=1) == 0
    for v, streak in ((3, 3), (-1, 3), (1, 1), (True, 3), (1.0, 3)):
        with pytest.raises(UserError, match=r"n \(turns lost in a row\) must be in 0\.\."):
            check_lost_turns("n", v, streak)


def test_a_rule_set_pickled_in_one_process_keys_memos_in_another(tmp_path):
    """A rule set's hash is kept once computed, but not pickled: strings hash differently
    in another process, where the unpickled rules must still find the equal preset."""
    import pickle
    import subprocess
    import sys

    rules = PRESETS["facebook"]
    hash(rules)  # computed and kept
    path = tmp_path / "rules.pkl"
    path.write_bytes(pickle.dumps(rules))
    code = ("import pickle, sys\nfrom dicelab.farkle.rules import PRESETS\n"
            f"r = pickle.loads(open({str(path)!r}, 'rb').read())\n"
            "assert {PRESETS['facebook']: 1}.get(r) == 1 and r.bank_floor == "
            "PRESETS['facebook'].bank_floor\n")
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ,
                                                                  "PYTHONHASHSEED": seed},
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
