"""Farkle scoring tables as named data, and their compiled lookup arrays.

A :class:`ScoringTable` says which combinations score and how much. The presets are

* ``default``: the table of RULES.md §2 (singles 1/5, three 1s 1000, three n 100n,
  four/five/six of a kind 1000/2000/3000, straight 1500, three pairs 1500 with four
  of a kind + a pair counting as three pairs, two triplets 2500);
* ``basic``: singles and three of a kind only (four 2s are three 2s and a dead 2,
  six 2s are two triples);
* ``ones-300``: three 1s = 300, each die beyond three of a kind doubles it (four 4s
  800, five 1600, six 3200), straight 1500, three pairs 750, no two-triplets bonus.

A user's own table is a TOML file (see :func:`load_scoring` and the README), which may
start from a preset with ``base = "default"`` and override entries.

Scoring follows RULES.md: a set-aside is legal only if *every* die in it belongs to a
combination formed within the roll, and it scores the best partition of its dice
into combinations. :func:`compile_table` turns a table into arrays over the global
multiset ranks of :mod:`dicelab.dice`, which the kernels and solvers use.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from dicelab import dice
from dicelab.errors import UserError

POINT_UNIT = 50  # every score, target and threshold is a multiple of this


@dataclass(frozen=True)
class ScoringTable:
    """Points for each Farkle combination; 0 means "not a combination".

    ``n_of_a_kind``: points for 4, 5, 6 of a kind, either fixed (``mode="fixed"``),
    doubling the three-of-a-kind value for each extra die (``mode="double"``), or not a
    combination at all (``mode="none"``: extra dice only score as singles/triples).
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
    source: str = field(default="preset", compare=False)

    def points_of_kind(self, face: int, k: int) -> int:
        """Points of ``k`` (3..6) equal dice of ``face`` as one combination (0 = none)."""
        base = self.three_of_a_kind[face]
        if k == 3:
            return base
        if self.n_of_a_kind_mode == "fixed":
            return self.n_of_a_kind[k - 4]
        if self.n_of_a_kind_mode == "double":
            return base * 2 ** (k - 3)
        return 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["singles"] = {str(f): self.singles[f] for f in range(1, 7) if self.singles[f]}
        d["three_of_a_kind"] = {str(f): self.three_of_a_kind[f] for f in range(1, 7)}
        d["n_of_a_kind"] = {str(k): v for k, v in zip((4, 5, 6), self.n_of_a_kind, strict=True)}
        return d


PRESETS: dict[str, ScoringTable] = {
    "default": ScoringTable(
        name="default",
        description="RULES.md §2: singles, n of a kind, straight, three pairs, two triplets"),
    "basic": ScoringTable(
        name="basic",
        description="singles 1/5 and three of a kind only",
        n_of_a_kind_mode="none", n_of_a_kind=(0, 0, 0), straight=0, three_pairs=0,
        four_and_pair_as_three_pairs=False, two_triplets=0),
    "ones-300": ScoringTable(
        name="ones-300",
        description="three 1s = 300, extra dice double three of a kind, three pairs 750",
        three_of_a_kind=(0, 300, 200, 300, 400, 500, 600), n_of_a_kind_mode="double",
        n_of_a_kind=(0, 0, 0), straight=1500, three_pairs=750,
        four_and_pair_as_three_pairs=False, two_triplets=0),
}

_TOML_KEYS = {"name", "description", "base", "singles", "three-of-a-kind", "n-of-a-kind",
              "n-of-a-kind-mode", "straight", "three-pairs", "four-and-pair-as-three-pairs",
              "two-triplets"}


#: The most one entry of a user's table may be worth. A roll then scores at most a few
#: million points (six dice: eight times an entry under the doubling n-of-a-kind mode),
#: far inside what the kernels' packed outcome codes hold (about 150 million).
MAX_POINTS = 1_000_000


def _points(where: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{where}: points must be an integer, not {value!r}")
    if value < 0 or value % POINT_UNIT:
        raise UserError(f"{where}: points must be a non-negative multiple of {POINT_UNIT}, "
                        f"not {value}")
    if value > MAX_POINTS:
        raise UserError(f"{where}: points must be at most {MAX_POINTS:,}, not {value:,}")
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


def parse_scoring_toml(text: str, source: str = "<toml>") -> ScoringTable:
    """Parse a user scoring table; raises :class:`UserError` with a one-line reason."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: malformed TOML ({exc})") from None
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
        mode = data["n-of-a-kind-mode"]
        if mode not in ("fixed", "double", "none"):
            raise UserError(f"{source}: n-of-a-kind-mode must be fixed, double or none")
        kw["n_of_a_kind_mode"] = mode
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
    fields = {k: v for k, v in asdict(base).items() if k not in kw}
    table = ScoringTable(**{**fields, **kw})
    if not compile_table(table).keep_score[dice.SIZE_OFFSET[6]:dice.SIZE_OFFSET[7]].any():
        raise UserError(f"{source}: no roll of six dice scores anything under this table")
    return table


def load_scoring(name_or_path: str | None) -> ScoringTable:
    """A preset by name (``None`` = ``default``) or a TOML file path."""
    if name_or_path is None:
        return PRESETS["default"]
    if name_or_path in PRESETS:
        return PRESETS[name_or_path]
    path = Path(name_or_path)
    if path.suffix.lower() == ".toml" or path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"rules file '{name_or_path}' not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"rules file '{name_or_path}': cannot read ({exc})") from None
        return parse_scoring_toml(text, source=str(path))
    raise UserError(f"unknown Farkle rules '{name_or_path}'; valid: {', '.join(PRESETS)} "
                    "or a .toml file")


# ---------------------------------------------------------------------------------
# Compilation to lookup arrays


def _combinations(t: ScoringTable) -> list[tuple[np.ndarray, int]]:
    """Every combination as (count vector, points), points > 0."""
    combos = []

    def vec(pairs) -> np.ndarray:
        v = np.zeros(7, dtype=np.int64)
        for f, k in pairs:
            v[f] += k
        return v

    for f in range(1, 7):
        if t.singles[f] > 0:
            combos.append((vec([(f, 1)]), t.singles[f]))
        for k in range(3, 7):
            p = t.points_of_kind(f, k)
            if p > 0:
                combos.append((vec([(f, k)]), p))
    if t.straight > 0:
        combos.append((vec([(f, 1) for f in range(1, 7)]), t.straight))
    if t.three_pairs > 0:
        for a in range(1, 7):
            for b in range(a + 1, 7):
                for c in range(b + 1, 7):
                    combos.append((vec([(a, 2), (b, 2), (c, 2)]), t.three_pairs))
        if t.four_and_pair_as_three_pairs:
            for a in range(1, 7):
                for b in range(1, 7):
                    if a != b:
                        combos.append((vec([(a, 4), (b, 2)]), t.three_pairs))
    if t.two_triplets > 0:
        for a in range(1, 7):
            for b in range(a + 1, 7):
                combos.append((vec([(a, 3), (b, 3)]), t.two_triplets))
    return combos


@dataclass(frozen=True)
class CompiledScoring:
    """Lookup arrays of one scoring table, indexed by global multiset rank.

    * ``setaside_score[r]``: best-partition points of multiset ``r`` as a set-aside, or
      -1 if some die in it belongs to no combination (not a legal set-aside).
    * ``keep_score[r, k]``: for a roll ``r``, the most points of a legal set-aside of
      exactly ``k`` dice (0 if none), shape (924, 7).
    * ``keep_rank[r, k]``: the multiset achieving ``keep_score[r, k]`` (-1 if none).
    * ``max_keep[r]``: the largest legal set-aside size of roll ``r`` (0: the roll busts).
      Setting aside ``max_keep`` dice is "all scoring dice" of RULES.md §3.
    * ``bust[n]``: exact probability that a roll of ``n`` dice scores nothing (n = 0..6,
      ``bust[0]`` unused = 0).
    """

    table: ScoringTable
    setaside_score: np.ndarray
    keep_score: np.ndarray
    keep_rank: np.ndarray
    max_keep: np.ndarray
    bust: np.ndarray

    @property
    def max_roll_points(self) -> int:
        """The most points one roll can add to a turn."""
        return int(self.keep_score.max())


@functools.lru_cache(maxsize=32)
def compile_table(table: ScoringTable) -> CompiledScoring:
    combos = _combinations(table)
    n = dice.N_MULTISETS
    best = np.full(n, -1, dtype=np.int64)
    best[0] = 0  # the empty multiset, the base of the recursion
    # ranks are ordered by size, so every proper sub-multiset is already done
    for r in range(1, n):
        c = dice.COUNTS[r]
        top = -1
        for v, pts in combos:
            if np.all(v <= c):
                rest = best[dice.rank_of_counts(c - v)]
                if rest >= 0:
                    top = max(top, pts + rest)
        best[r] = top
    setaside = best.copy()
    setaside[0] = -1
    keep_score = np.zeros((n, 7), dtype=np.int64)
    keep_rank = np.full((n, 7), -1, dtype=np.int64)
    for r in range(1, n):
        for s in dice.sub_multisets(r):
            if setaside[s] > 0:
                k = int(dice.SIZE[s])
                if setaside[s] > keep_score[r, k]:
                    keep_score[r, k] = setaside[s]
                    keep_rank[r, k] = s
    max_keep = np.zeros(n, dtype=np.int64)
    for r in range(n):
        legal = np.nonzero(keep_rank[r] >= 0)[0]
        max_keep[r] = legal.max() if legal.size else 0
    bust = np.zeros(7, dtype=np.float64)
    for k in range(1, 7):
        lo, hi = dice.SIZE_OFFSET[k], dice.SIZE_OFFSET[k + 1]
        bust[k] = float(dice.PROB[lo:hi][max_keep[lo:hi] == 0].sum())
    for a in (setaside, keep_score, keep_rank, max_keep, bust):
        a.setflags(write=False)
    return CompiledScoring(table, setaside, keep_score, keep_rank, max_keep, bust)


def bust_probabilities(table: ScoringTable) -> dict[int, float]:
    """Exact probability that a roll of ``n`` dice scores nothing, n = 1..6."""
    b = compile_table(table).bust
    return {k: float(b[k]) for k in range(1, 7)}
