"""The Farkle model: every rule of the game written once (RULES.md §2, docs/rules.md).

Everything else in dicelab -- the game kernels, the turn DP, the two-player solver, the
plain-Python tests' expectations -- reads the game from here:

* **Units and limits.** Every score, target and threshold is a multiple of
  :data:`POINT_UNIT`; :func:`check_target` and :func:`check_seats` are the only checks of
  a game's target and seat count (defaults :data:`DEFAULT_TARGET`, 1 to
  :data:`MAX_SEATS`).
* **Rules as data.** :class:`FarkleRules` is a scoring table (which combinations score
  and how much) plus the ending rule (:data:`ENDINGS`); :data:`PRESETS` names the
  built-in tables and :func:`load_rules` reads a user's TOML file.
* **What a roll lets you do.** :func:`set_asides` compiles a rule set into the one
  encoding of "what a roll of n dice lets you set aside" (:class:`SetAsides`): for every
  roll, the distinct legal set-asides as (points, dice left to roll), sorted, with
  offsets, in the spirit of QuantEcon's ``DiscreteDP``. Rolls with the same options are
  one *class*. A set-aside is legal only if every die in it belongs to a combination
  formed within the roll, and it scores the best partition of its dice into
  combinations; the dice left follow from :func:`dice_after` (hot dice: all six back).

The order among set-asides of equal value is part of the model: **more points first,
then more dice left**. Options are stored in that order, so "the first strict maximum"
is the tie-break every solver and kernel uses.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dicelab import config, dice
from dicelab.digest import text_digest
from dicelab.errors import UserError
from dicelab.text import counted, is_whole

#: Every score, target and threshold is a multiple of this many points.
POINT_UNIT = 50
#: The game's target when none is chosen (the app offers 5,000, 10,000 and 15,000).
DEFAULT_TARGET = 10_000
#: Seats at one table: the app's 1 to 6 humans plus one computer opponent.
MAX_SEATS = 7
#: Dice at the start of a turn, and back in play after hot dice.
HOT_DICE = dice.MAX_DICE
#: The most one entry of a user's table may be worth. A roll then scores at most a few
#: million points (six dice: eight times an entry under the doubling n-of-a-kind mode),
#: far inside what the kernels' packed outcome codes hold (about 150 million).
MAX_ENTRY_POINTS = 1_000_000

#: Ending rules, by name, with the code the kernels read. ``last-round``: the first seat to
#: reach the target by banking triggers the last round (every other seat plays one more
#: turn). ``first-to-bank``: the first seat to bank at least the target wins at once.
ENDINGS = {"last-round": 0, "first-to-bank": 1}
LAST_ROUND = ENDINGS["last-round"]
FIRST_TO_BANK = ENDINGS["first-to-bank"]
N_OF_A_KIND_MODES = ("fixed", "double", "linear", "none")
#: After hot dice the player may bank or roll (``may-bank``) or must roll on (``must-roll``).
HOT_DICE_RULES = ("may-bank", "must-roll")
#: Consecutive lost turns that cost a rule set's ``farkle_penalty`` (then the count restarts).
PENALTY_STREAK = 3
#: A bank floor that no turn reaches: banking is not allowed there.
NO_BANK = 2**62
#: The penalty floor (points) of an enclosing :func:`solver_floor`, in this thread only.
_FLOOR_POINTS: ContextVar[int | None] = ContextVar("solver_floor", default=None)


@contextlib.contextmanager
def solver_floor(points: int | None):
    """Within the block, and in this thread (context) only, the solvers let totals fall
    ``points`` below zero under the farkle penalty instead of ``config.
    PENALTY_FLOOR_POINTS`` (:meth:`FarkleRules.penalty_floor`): a solved game rebuilds its
    engine at the floor it was solved with, whatever another thread's solve uses. ``None``
    leaves the floor as it is."""
    if points is None:
        yield
        return
    token = _FLOOR_POINTS.set(points)
    try:
        yield
    finally:
        _FLOOR_POINTS.reset(token)


def check_target(target: int | None) -> int:
    """The game target in points: a positive multiple of 50 (``None``: the default)."""
    if target is None:
        return DEFAULT_TARGET
    if not is_whole(target) or target <= 0 \
            or target % POINT_UNIT:
        raise UserError(f"--target must be a positive multiple of {POINT_UNIT} (e.g. 5000, "
                        f"10000, 15000), not {target!r}")
    return int(target)


def check_seats(n_seats: int) -> int:
    """A Farkle table's seat count, 1 to :data:`MAX_SEATS`."""
    if not 1 <= n_seats <= MAX_SEATS:
        raise UserError(f"Farkle takes 1 to {MAX_SEATS} seats, not {n_seats}")
    return int(n_seats)


def check_points(name: str, value, minimum: int = POINT_UNIT, maximum: int | None = None
                 ) -> int:
    """A number of points that must be a multiple of 50, at least ``minimum`` and (if
    given) at most ``maximum``."""
    if not is_whole(value):
        raise UserError(f"{name} must be an integer multiple of {POINT_UNIT}, not {value!r}")
    value = int(value)
    if value < minimum or value % POINT_UNIT or (maximum is not None and value > maximum):
        span = f"of at least {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise UserError(f"{name} must be a multiple of {POINT_UNIT} {span}, not {value}")
    return value


def check_floor(rules: FarkleRules, points: int | None) -> int | None:
    """``--floor``: how far below zero (points) the solvers let totals fall under the
    rules' farkle penalty: a multiple of 50 from two penalties to
    ``config.DEEPEST_FLOOR_POINTS`` (``None``: the default, :meth:`FarkleRules.
    penalty_floor`)."""
    if points is None:
        return None
    if not rules.farkle_penalty:
        raise UserError(f"--floor: rules '{rules.name}' have no farkle penalty, so totals "
                        "never fall below zero")
    return check_points("--floor", points, 2 * rules.farkle_penalty,
                        config.DEEPEST_FLOOR_POINTS)


def check_lost_turns(name: str, value, streak: int = PENALTY_STREAK) -> int:
    """A count of turns lost in a row, ``0 .. streak - 1`` (the count restarts at the
    penalty's streak)."""
    if not is_whole(value) or not 0 <= value < streak:
        raise UserError(f"{name} (turns lost in a row) must be in 0..{streak - 1}, not "
                        f"{value!r}: {PENALTY_STREAK} lost turns in a row restart the count")
    return int(value)


def dice_after(rolled: int, kept: int) -> int:
    """Dice to roll next after setting aside ``kept`` of ``rolled`` dice: the rest, or all
    six again after hot dice (every die set aside)."""
    return HOT_DICE if kept == rolled else rolled - kept


def dice_kept(rolled: int, left: int) -> int:
    """The inverse of :func:`dice_after`: dice set aside when ``left`` are to roll next."""
    return rolled if left == HOT_DICE else rolled - left


# ---------------------------------------------------------------------------------
# Rules as data


@dataclass(frozen=True)
class FarkleRules:
    """A Farkle rule set: points for each combination (0 = not a combination) and the
    ending rule.

    ``n_of_a_kind_mode``: 4, 5, 6 of a kind score fixed points (``"fixed"``: the
    ``n_of_a_kind`` triple), double the three-of-a-kind value per extra die
    (``"double"``), add the three-of-a-kind value again per extra die (``"linear"``: four
    2s = 400, five 2s = 600), or are no combination (``"none"``: extra dice score only as
    singles and triples).

    House rules of banking and losing: ``min_bank`` (a turn may bank only with at least
    this many turn points; 0 = any), ``hot_dice`` (:data:`HOT_DICE_RULES`), and
    ``farkle_penalty`` (points taken from the banked total at the
    :data:`PENALTY_STREAK`-th lost turn in a row; totals may then go below zero).
    ``six_dice_nothing``: points for a roll of six dice in which nothing scores; all six
    then count as scoring dice (hot dice). 0: such a roll loses the turn.
    """

    name: str
    description: str = ""
    singles: tuple[int, ...] = (0, 100, 0, 0, 0, 50, 0)  # index = face, 0 unused
    three_of_a_kind: tuple[int, ...] = (0, 1000, 200, 300, 400, 500, 600)
    n_of_a_kind_mode: str = "fixed"
    n_of_a_kind: tuple[int, int, int] = (1000, 2000, 3000)  # 4, 5, 6 of a kind if fixed
    straight: int = 1500
    three_pairs: int = 1500
    four_and_pair_as_three_pairs: bool = True
    two_triplets: int = 2500
    ending: str = "last-round"
    min_bank: int = 0
    hot_dice: str = "may-bank"
    farkle_penalty: int = 0
    six_dice_nothing: int = 0
    source: str = field(default="preset", compare=False)

    def __hash__(self) -> int:
        """The fields' hash, computed once per object: a rule set keys many memos (the
        referee asks them at every decision)."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)
                           if f.compare))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        """Pickled without its hash (a string's hash differs from process to process)."""
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __post_init__(self) -> None:
        if self.ending not in ENDINGS:
            raise UserError(f"rules '{self.name}': ending must be one of "
                            f"{', '.join(ENDINGS)}, not {self.ending!r}")
        if self.n_of_a_kind_mode not in N_OF_A_KIND_MODES:
            raise UserError(f"rules '{self.name}': n-of-a-kind-mode must be one of "
                            f"{', '.join(N_OF_A_KIND_MODES)}, not {self.n_of_a_kind_mode!r}")
        if self.hot_dice not in HOT_DICE_RULES:
            raise UserError(f"rules '{self.name}': hot-dice must be one of "
                            f"{', '.join(HOT_DICE_RULES)}, not {self.hot_dice!r}")
        for key, v in (("min-bank", self.min_bank), ("farkle-penalty", self.farkle_penalty),
                       ("six-dice-nothing", self.six_dice_nothing)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v % POINT_UNIT \
                    or v > MAX_ENTRY_POINTS:
                raise UserError(f"rules '{self.name}': {key} must be a multiple of "
                                f"{POINT_UNIT} from 0 to {MAX_ENTRY_POINTS:,}, not {v!r}")

    @functools.cached_property
    def bank_floor(self) -> tuple[int, ...]:
        """The fewest turn points a turn may bank with, by dice left to roll ``n`` (index
        0 unused; :data:`NO_BANK` where banking is not allowed): ``min_bank`` (at least 50),
        and with ``hot_dice = "must-roll"`` no bank with 6 dice to roll (only after hot
        dice). The one place these two rules become a decision."""
        floor = max(self.min_bank, POINT_UNIT)
        six = NO_BANK if self.hot_dice == "must-roll" else floor
        return (floor,) * HOT_DICE + (six,)

    @property
    def standard_banking(self) -> bool:
        """No house rule on banking or losing (every solver handles these rules)."""
        return self.min_bank == 0 and self.hot_dice == "may-bank" and not self.farkle_penalty

    def can_bank(self, turn_points: int, dice_left: int) -> bool:
        """Whether a turn with ``turn_points`` (points) and ``dice_left`` dice to roll may
        bank."""
        return turn_points >= self.bank_floor[dice_left]

    def after_lost_turn(self, run: int) -> tuple[int, int]:
        """A lost turn after ``run`` lost turns in a row: (points off the total, the run
        it leaves). The :data:`PENALTY_STREAK`-th in a row costs the farkle penalty (none
        without one) and starts the run again.

        >>> [PRESETS["facebook"].after_lost_turn(r) for r in range(3)]
        [(0, 1), (0, 2), (500, 0)]
        """
        run += 1
        return (self.farkle_penalty, 0) if run == PENALTY_STREAK else (0, run)

    def penalty_floor(self, floor_points: int | None = None) -> int:
        """Units of 50 below zero that the exact solvers and evaluations let totals reach
        under the farkle penalty (a penalty that would go lower stops there): at least
        ``config.PENALTY_FLOOR_POINTS`` (or ``floor_points``, or the floor of an enclosing
        :func:`solver_floor`) and two penalties; 0 without the penalty."""
        if not self.farkle_penalty:
            return 0
        pts = next(p for p in (floor_points, _FLOOR_POINTS.get(), config.PENALTY_FLOOR_POINTS)
                   if p is not None)
        return max(pts, 2 * self.farkle_penalty) // POINT_UNIT

    def require_solvable(self, what: str, *, min_bank: bool = True, must_roll: bool = False,
                         penalty: bool = False) -> None:
        """Refuse a solver (``what``) that does not model some house rule of these rules;
        each flag says whether the solver models that rule: ``min_bank``, hot dice
        ``must-roll`` (``must_roll``), the farkle penalty (``penalty``)."""
        missing = [name for name, used in (
            ("min-bank", not min_bank and self.min_bank > 0),
            ("hot-dice = must-roll", not must_roll and self.hot_dice == "must-roll"),
            ("farkle-penalty", not penalty and self.farkle_penalty > 0)) if used]
        if missing:
            raise UserError(f"{what} does not model the house rule(s) {', '.join(missing)} of "
                            f"rules '{self.name}' yet; simulate them instead")

    @property
    def ending_code(self) -> int:
        """The ending rule as the kernels read it (:data:`LAST_ROUND`, :data:`FIRST_TO_BANK`)."""
        return ENDINGS[self.ending]

    def with_ending(self, ending: str | None) -> FarkleRules:
        """The same table with another ending rule (``None``: unchanged)."""
        if ending is None or ending == self.ending:
            return self
        if ending not in ENDINGS:
            raise UserError(f"--ending must be one of {', '.join(ENDINGS)}, not {ending!r}")
        return dataclasses.replace(self, ending=ending)

    def points_of_kind(self, face: int, k: int) -> int:
        """Points of ``k`` (3..6) equal dice of ``face`` as one combination (0 = none)."""
        base = self.three_of_a_kind[face]
        if k == 3:
            return base
        if self.n_of_a_kind_mode == "fixed":
            return self.n_of_a_kind[k - 4]
        if self.n_of_a_kind_mode == "double":
            return base * 2 ** (k - 3)
        if self.n_of_a_kind_mode == "linear":
            return base * (k - 2)
        return 0

    def combinations(self) -> list[tuple[tuple[int, ...], int]]:
        """Every scoring combination as (count vector indexed by face, points > 0): the one
        place the table's entries become combinations of dice."""
        combos: list[tuple[tuple[int, ...], int]] = []

        def add(pairs, points: int) -> None:
            if points > 0:
                v = [0] * (dice.FACES + 1)
                for f, k in pairs:
                    v[f] += k
                combos.append((tuple(v), points))

        faces = range(1, dice.FACES + 1)
        for f in faces:
            add([(f, 1)], self.singles[f])
            for k in range(3, dice.MAX_DICE + 1):
                add([(f, k)], self.points_of_kind(f, k))
        add([(f, 1) for f in faces], self.straight)
        for a in faces:
            for b in range(a + 1, dice.FACES + 1):
                add([(a, 3), (b, 3)], self.two_triplets)
                for c in range(b + 1, dice.FACES + 1):
                    add([(a, 2), (b, 2), (c, 2)], self.three_pairs)
        if self.four_and_pair_as_three_pairs:
            for a in faces:
                for b in faces:
                    if a != b:
                        add([(a, 4), (b, 2)], self.three_pairs)
        return combos

    def to_dict(self) -> dict:
        """The rules as JSON-able data (manifests record this)."""
        d = asdict(self)
        d["singles"] = {str(f): self.singles[f] for f in range(1, 7) if self.singles[f]}
        d["three_of_a_kind"] = {str(f): self.three_of_a_kind[f] for f in range(1, 7)}
        d["n_of_a_kind"] = {str(k): v for k, v in zip((4, 5, 6), self.n_of_a_kind, strict=True)}
        for k, v in _HOUSE_DEFAULTS.items():  # house rules at their defaults go unsaid, so
            if d[k] == v:                     # the standard rules keep their records and
                del d[k]                      # cache keys
        return d

    def digest(self) -> str:
        """A digest of the rules' content (not their name, description or source): what
        cached tables are keyed by."""
        d = self.to_dict()
        for k in ("name", "description", "source"):
            d.pop(k, None)

        return text_digest(d)

    def cache_about(self) -> dict[str, str]:
        """What ``dicelab cache list`` shows beside the key of a table solved under these
        rules (:func:`dicelab.cache.store`'s ``about``): the ending rule, which the key
        holds only inside the digest."""
        return {"ending": self.ending}


_HOUSE_DEFAULTS = {"min_bank": 0, "hot_dice": "may-bank", "farkle_penalty": 0,
                   "six_dice_nothing": 0}

PRESETS: dict[str, FarkleRules] = {
    "default": FarkleRules(
        name="default",
        description="RULES.md §2: singles, n of a kind, straight, three pairs, two triplets"),
    "basic": FarkleRules(
        name="basic",
        description="singles 1/5 and three of a kind only",
        n_of_a_kind_mode="none", n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
        four_and_pair_as_three_pairs=False, two_triplets=0),
    "ones-300": FarkleRules(
        name="ones-300",
        description="three 1s = 300, extra dice double three of a kind, three pairs 750",
        three_of_a_kind=(0, 300, 200, 300, 400, 500, 600), n_of_a_kind_mode="double",
        n_of_a_kind=(0, 0, 0), straight=1500, three_pairs=750,
        four_and_pair_as_three_pairs=False, two_triplets=0),
    "facebook": FarkleRules(
        name="facebook",
        description="Facebook Farkle (M. Busche's analysis): n of a kind 2, 3, 4 times the "
                    "triple, three pairs 750, 300 to bank, three farkles in a row -500, "
                    "first to bank 10,000 wins",
        n_of_a_kind_mode="linear", n_of_a_kind=(0, 0, 0), straight=1500, three_pairs=750,
        four_and_pair_as_three_pairs=False, two_triplets=0, ending="first-to-bank",
        min_bank=300, hot_dice="may-bank", farkle_penalty=500),
    "zilch": FarkleRules(
        name="zilch",
        description="Zilch (the online game, M. Busche's analysis): n of a kind doubles the "
                    "triple per extra die, straight and three pairs 1500, six dice that "
                    "score nothing 500 (hot dice), 300 to bank, three zilches in a row -500",
        n_of_a_kind_mode="double", n_of_a_kind=(0, 0, 0), straight=1500, three_pairs=1500,
        four_and_pair_as_three_pairs=True, two_triplets=0, min_bank=300,
        farkle_penalty=500, six_dice_nothing=500),
}

_TOML_KEYS = {"name", "description", "base", "singles", "three-of-a-kind", "n-of-a-kind",
              "n-of-a-kind-mode", "straight", "three-pairs", "four-and-pair-as-three-pairs",
              "two-triplets", "ending", "min-bank", "hot-dice", "farkle-penalty",
              "six-dice-nothing"}


def _points(where: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{where}: points must be an integer, not {value!r}")
    if value < 0 or value % POINT_UNIT:
        raise UserError(f"{where}: points must be a non-negative multiple of {POINT_UNIT}, "
                        f"not {value}")
    if value > MAX_ENTRY_POINTS:
        raise UserError(f"{where}: points must be at most {MAX_ENTRY_POINTS:,}, not {value:,}")
    return value


def _face_map(where: str, value, current: tuple[int, ...], faces=range(1, 7)) -> tuple[int, ...]:
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected a table like {{1 = 100, 5 = 50}}")
    out = list(current)
    for key, pts in value.items():
        try:
            f = int(key)
        except ValueError:
            raise UserError(f"{where}: key '{key}' is not a face 1..6") from None
        if f not in faces:
            raise UserError(f"{where}: key '{key}' is not one of {list(faces)}")
        out[f if len(current) == 7 else f - 4] = _points(f"{where}.{key}", pts)
    return tuple(out)


def _choice(where: str, value, allowed) -> str:
    if value not in allowed:
        raise UserError(f"{where} must be one of {', '.join(allowed)}, not {value!r}")
    return value


#: The largest rules file read (a rules table is a few hundred bytes).
MAX_RULES_FILE_BYTES = 64 * 1024


def read_rules_file(path: Path, kind: str = "rules file") -> str:
    """A rules file's text (UTF-8, a byte-order mark allowed), read with a size limit
    (:func:`dicelab.files.read_input`: a regular file); ``kind`` names it in errors."""
    from dicelab.files import read_input

    data = read_input(path, f"{kind} '{path}'", MAX_RULES_FILE_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{kind} '{path}': not UTF-8 text ({exc.reason} at byte "
                        f"{exc.start})") from None


def parse_rules_toml(text: str, source: str = "<toml>") -> FarkleRules:
    """Parse a user's rules file; raises :class:`UserError` naming the bad field."""
    from dicelab.files import parse_toml

    data = parse_toml(text, source)
    unknown = set(data) - _TOML_KEYS
    if unknown:
        raise UserError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}; "
                        f"known keys: {', '.join(sorted(_TOML_KEYS))}")
    base_name = data.get("base", "default")
    if base_name not in PRESETS:
        raise UserError(f"{source}: base '{base_name}' is not a preset "
                        f"({', '.join(PRESETS)})")
    base = PRESETS[base_name]
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise UserError(f"{source}: name must be a non-empty string")
    kw = {"name": name, "description": str(data.get("description", f"based on {base_name}")),
          "source": source}
    if "singles" in data:
        kw["singles"] = _face_map(f"{source}: singles", data["singles"], (0,) * 7)
    if "three-of-a-kind" in data:
        kw["three_of_a_kind"] = _face_map(f"{source}: three-of-a-kind",
                                          data["three-of-a-kind"], base.three_of_a_kind)
    if "n-of-a-kind-mode" in data:
        kw["n_of_a_kind_mode"] = _choice(f"{source}: n-of-a-kind-mode",
                                         data["n-of-a-kind-mode"], N_OF_A_KIND_MODES)
    if "n-of-a-kind" in data:
        kw["n_of_a_kind"] = _face_map(f"{source}: n-of-a-kind", data["n-of-a-kind"],
                                      base.n_of_a_kind, faces=range(4, 7))
        kw.setdefault("n_of_a_kind_mode", "fixed")
    for key in ("straight", "three-pairs", "two-triplets"):
        if key in data:
            kw[key.replace("-", "_")] = _points(f"{source}: {key}", data[key])
    if "four-and-pair-as-three-pairs" in data:
        flag = data["four-and-pair-as-three-pairs"]
        if not isinstance(flag, bool):
            raise UserError(f"{source}: four-and-pair-as-three-pairs must be true or false")
        kw["four_and_pair_as_three_pairs"] = flag
    if "ending" in data:
        kw["ending"] = _choice(f"{source}: ending", data["ending"], tuple(ENDINGS))
    if "hot-dice" in data:
        kw["hot_dice"] = _choice(f"{source}: hot-dice", data["hot-dice"], HOT_DICE_RULES)
    for key in ("min-bank", "farkle-penalty", "six-dice-nothing"):
        if key in data:
            kw[key.replace("-", "_")] = _points(f"{source}: {key}", data[key])
    fields = {k: v for k, v in asdict(base).items() if k not in kw}
    return check_scoring(FarkleRules(**{**fields, **kw}), source)


def check_scoring(rules: FarkleRules, where: str) -> FarkleRules:
    """``rules``, refused (naming ``where``) if no roll of six dice scores: a table whose
    turns can never score is no game."""
    six = set_asides(rules).class_start
    if six[dice.MAX_DICE + 1] == six[dice.MAX_DICE]:
        raise UserError(f"{where}: no roll of six dice scores anything under this table")
    return rules


def lost_turn_runs(rules: FarkleRules, my_farkles: int, opp_farkles: int, what: str
                   ) -> tuple[int, int, str | None]:
    """(my run, the opponent's, note): the turns each player has lost in a row (0 to 2,
    checked as ``--my-farkles`` and ``--opp-farkles``). They count under a farkle penalty;
    under rules without one they are accepted as 0, and the note says that they do not
    change ``what`` (else None)."""
    my_farkles = check_lost_turns("--my-farkles", my_farkles)
    opp_farkles = check_lost_turns("--opp-farkles", opp_farkles)
    if (my_farkles or opp_farkles) and not rules.farkle_penalty:
        return 0, 0, (f"rules '{rules.name}' have no farkle penalty: turns lost in a row do "
                      f"not change {what}")
    return my_farkles, opp_farkles, None


def runs_title(rules: FarkleRules, my_farkles: int, opp_farkles: int | None = None) -> str:
    """A title's words for the runs of lost turns (:func:`lost_turn_runs`) under a farkle
    penalty, else nothing: one player's (``opp_farkles`` None), or both players'.

    >>> fb = PRESETS["facebook"]
    >>> runs_title(fb, 2), runs_title(fb, 2, 1), runs_title(PRESETS["default"], 0, 0)
    (' after 2 lost turns in a row', ', lost turns in a row 2 vs 1', '')
    """
    if not rules.farkle_penalty:
        return ""
    if opp_farkles is None:
        return f" after {counted(my_farkles, 'lost turn')} in a row"
    return f", lost turns in a row {my_farkles} vs {opp_farkles}"


def load_rules(name_or_path: str | FarkleRules | None, ending: str | None = None
               ) -> FarkleRules:
    """A preset by name (``None`` = ``default``), a TOML file path, or rules as they are;
    ``ending`` (a name of :data:`ENDINGS`) replaces the table's ending rule."""
    if isinstance(name_or_path, FarkleRules):
        return name_or_path.with_ending(ending)
    if name_or_path is None:
        return PRESETS["default"].with_ending(ending)
    if name_or_path in PRESETS:
        return PRESETS[name_or_path].with_ending(ending)
    path = Path(name_or_path)
    # an empty name is no file ('' would be the current directory, '.')
    if name_or_path.strip() and (path.suffix.lower() == ".toml" or path.exists()):
        return parse_rules_toml(read_rules_file(path), source=str(path)).with_ending(ending)
    raise UserError(f"unknown Farkle rules '{name_or_path}'; valid: {', '.join(PRESETS)} "
                    "or a .toml file")


# ---------------------------------------------------------------------------------
# What a roll lets you set aside


class SetAsideArrays(NamedTuple):
    """The arrays of :class:`SetAsides`, as the kernels take them (shapes there)."""

    class_start: np.ndarray
    class_prob: np.ndarray
    option_start: np.ndarray
    points: np.ndarray
    dice: np.ndarray
    keep_all: np.ndarray
    roll_class: np.ndarray
    roll_keep_all: np.ndarray
    bust: np.ndarray
    bank_floor: np.ndarray


@dataclass(frozen=True, eq=False)
class SetAsides:
    """The one encoding of "what a roll of n dice lets you set aside" under a rule set.

    Rolls are global multiset ranks (:mod:`dicelab.dice`). A roll that scores belongs to
    one *class*: the rolls of its size with the same options. Classes of ``n`` dice are
    ``class_start[n] .. class_start[n + 1] - 1``; class ``c`` has probability
    ``class_prob[c]`` (of its rolls together, rolling ``n`` dice) and options
    ``option_start[c] .. option_start[c + 1] - 1``. Option ``j`` adds ``points[j]``
    (units of 50) and leaves ``dice[j]`` dice to roll (6 after hot dice); it stands for
    every set-aside of the roll with that pair (distinct subsets with the same points and
    dice left are one option). Options are sorted by points, then dice, both descending,
    so the first strict maximum of any value is the model's tie-break.

    * ``keep_all[c]``: the option "set aside all scoring dice" (the most dice set aside,
      the most points among those): what ``threshold-T`` and ``ai`` play;
    * ``roll_class[r]``: the class of roll ``r``, -1 if it scores nothing (a bust);
      ``roll_keep_all[r]`` = ``keep_all[roll_class[r]]`` (-1 for a bust);
    * ``bust[n]``: the exact probability that ``n`` dice score nothing (``bust[0] = 0``);
    * ``bank_floor[n]``: :attr:`FarkleRules.bank_floor` in points, as an array.
    """

    rules_digest: str
    class_start: np.ndarray  # int64 (8,)
    class_prob: np.ndarray  # float64 (C,)
    option_start: np.ndarray  # int64 (C + 1,)
    points: np.ndarray  # int64 (J,)
    dice: np.ndarray  # int64 (J,)
    keep_all: np.ndarray  # int64 (C,)
    roll_class: np.ndarray  # int64 (924,)
    bust: np.ndarray  # float64 (7,)
    bank_floor: np.ndarray  # int64 (7,)

    @property
    def roll_keep_all(self) -> np.ndarray:
        out = np.where(self.roll_class >= 0, self.keep_all[self.roll_class], -1)
        return out.astype(np.int64)

    @property
    def max_points(self) -> int:
        """The most points one roll can add, in units of 50."""
        return int(self.points.max())

    @property
    def n_classes(self) -> int:
        return int(self.class_prob.size)

    def arrays(self) -> SetAsideArrays:
        """The kernels' view (contiguous arrays, named)."""
        return SetAsideArrays(self.class_start, self.class_prob, self.option_start,
                              self.points, self.dice, self.keep_all, self.roll_class,
                              np.ascontiguousarray(self.roll_keep_all), self.bust,
                              self.bank_floor)

    def options(self, rank: int) -> list[tuple[int, int]]:
        """``(points, dice left)`` of every option of roll ``rank``, points in points."""
        c = int(self.roll_class[rank])
        if c < 0:
            return []
        js = range(int(self.option_start[c]), int(self.option_start[c + 1]))
        return [(int(self.points[j]) * POINT_UNIT, int(self.dice[j])) for j in js]


@functools.lru_cache(maxsize=64)
def scoring(rules: FarkleRules) -> tuple:
    """What of ``rules`` decides the set-asides (every combination, and six dice that
    score nothing): rule sets that differ only in banking or the game share their
    compiled set-asides."""
    return tuple(rules.combinations()), rules.six_dice_nothing


@functools.lru_cache(maxsize=16)
def _best_partitions(key: tuple) -> np.ndarray:
    """Best-partition points of every multiset of 0..6 dice as a set-aside, -1 where some
    die belongs to no combination; the empty multiset scores 0 (the recursion's base).
    Under ``six_dice_nothing``, six dice none of which belongs to a combination are that
    many points as one set-aside (the rule applies to the whole roll of six). ``key``:
    :func:`scoring`."""
    combos, six_dice_nothing = key
    counts = dice.COUNTS
    vs = np.array([v for v, _ in combos], dtype=np.int64).reshape(-1, counts.shape[1])
    pts = np.array([p for _, p in combos], dtype=np.int64)
    # rests[r, j]: the rank of multiset r less combination j, -1 where j is not in r
    rest = counts[:, None, :] - vs[None, :, :]
    fits = (rest >= 0).all(axis=2)
    base = dice.MAX_DICE + 1
    code_rank = dict(zip((counts @ base ** np.arange(counts.shape[1])).tolist(),
                         range(dice.N_MULTISETS), strict=True))
    codes = np.where(fits, rest @ base ** np.arange(counts.shape[1]), -1)
    rests = np.array([code_rank.get(c, -1) for c in codes.ravel().tolist()],
                     dtype=np.int64).reshape(codes.shape)
    best = np.full(dice.N_MULTISETS, -1, dtype=np.int64)
    best[0] = 0
    # ranks are ordered by size, so every proper sub-multiset is done before its multiset
    for r in range(1, dice.N_MULTISETS):
        j = rests[r] >= 0
        sub = best[rests[r][j]]
        ok = sub >= 0
        best[r] = (pts[j][ok] + sub[ok]).max(initial=-1)
    best = best.tolist()
    if six_dice_nothing:
        for r in range(int(dice.SIZE_OFFSET[dice.MAX_DICE]), dice.N_MULTISETS):
            if all(best[s] <= 0 for s in dice.sub_multisets(r)):
                best[r] = six_dice_nothing
    out = np.array(best, dtype=np.int64)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=16)
def _classes(key: tuple) -> tuple[np.ndarray, ...]:
    """The roll classes of a scoring (:func:`scoring`): :class:`SetAsides`'s arrays from
    ``class_start`` to ``bust``, read-only."""
    best = _best_partitions(key)
    class_start = [0, 0]
    probs: list[float] = []
    keep_all: list[int] = []
    option_start = [0]
    points: list[int] = []
    left: list[int] = []
    roll_class = np.full(dice.N_MULTISETS, -1, dtype=np.int64)
    bust = np.zeros(dice.MAX_DICE + 1)
    for n in range(1, dice.MAX_DICE + 1):
        classes: dict[tuple[tuple[int, int], ...], int] = {}
        for r in range(int(dice.SIZE_OFFSET[n]), int(dice.SIZE_OFFSET[n + 1])):
            opts = tuple(sorted({(int(best[s]) // POINT_UNIT, dice_after(n, int(dice.SIZE[s])))
                                 for s in dice.sub_multisets(r) if best[s] > 0},
                                reverse=True))
            if not opts:
                bust[n] += float(dice.PROB[r])
                continue
            c = classes.get(opts)
            if c is None:
                c = classes[opts] = len(probs)
                probs.append(0.0)
                # all scoring dice: the most dice kept, then the most points (opts order)
                kept = [dice_kept(n, d) for _, d in opts]
                keep_all.append(len(points) + kept.index(max(kept)))
                for p, d in opts:
                    points.append(p)
                    left.append(d)
                option_start.append(len(points))
            probs[c] += float(dice.PROB[r])
            roll_class[r] = c
        class_start.append(len(probs))
    i64 = functools.partial(np.array, dtype=np.int64)
    out = (i64(class_start), np.array(probs), i64(option_start), i64(points), i64(left),
           i64(keep_all), roll_class, bust)
    for a in out:
        a.setflags(write=False)
    return out


@functools.lru_cache(maxsize=64)
def set_asides(rules: FarkleRules) -> SetAsides:
    """Compile ``rules`` into the :class:`SetAsides` encoding (memoised per rule set, and
    its roll classes per scoring).

    >>> sa = set_asides(PRESETS["default"])
    >>> sa.options(dice.rank_of_dice([1, 1, 1, 1, 5, 5]))[:4]
    [(1500, 6), (1150, 1), (1100, 2), (1100, 1)]
    >>> round(float(sa.bust[6]), 4)
    0.0231
    """
    key = scoring(rules)
    best = _best_partitions(key)
    if (best[best > 0] % POINT_UNIT).any():
        raise UserError(f"rules '{rules.name}': every score must be a multiple of "
                        f"{POINT_UNIT}")
    floor = np.array(rules.bank_floor, dtype=np.int64)
    floor.setflags(write=False)
    return SetAsides(rules.digest(), *_classes(key), floor)


def setaside_points(rules: FarkleRules, faces) -> int | None:
    """Points of setting aside exactly these dice (best partition), or None if some die
    in them belongs to no combination (not a legal set-aside).

    >>> setaside_points(PRESETS["default"], [1, 1, 1, 1]), setaside_points(PRESETS["default"], [2])
    (1100, None)
    """
    faces = list(faces)
    if not 1 <= len(faces) <= dice.MAX_DICE:
        raise UserError(f"a set-aside is 1 to {dice.MAX_DICE} dice, not {len(faces)}")
    p = int(_best_partitions(scoring(rules))[dice.rank_of_dice(faces)])
    return p if p > 0 else None


def bust_probabilities(rules: FarkleRules) -> dict[int, float]:
    """Exact probability that a roll of ``n`` dice scores nothing, n = 1..6.

    >>> {n: round(p, 4) for n, p in bust_probabilities(PRESETS["default"]).items()}[1]
    0.6667
    """
    b = set_asides(rules).bust
    return {n: float(b[n]) for n in range(1, dice.MAX_DICE + 1)}
