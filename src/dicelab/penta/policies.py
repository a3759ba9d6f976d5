"""Penta policies: ``optimal`` and ``greedy`` decisions, and every option ranked.

Both policies are the one-turn widget of :mod:`dicelab.penta.widget` applied to a
value table: ``optimal`` uses the solved values ``V`` (maximum expected final score),
``greedy`` uses ``V = 0`` -- every reroll maximises the expected best *immediate*
points of this turn and the turn ends in the box with the most immediate points,
where immediate points are the box score plus any Penta bonus and the upper bonus if
this box completes it (RULES.md §3; ties go to the lowest box number).

* :func:`choose` -- the "computer choice" for any scorecard, roll and rolls left.
* :func:`rank_options` -- every option of a decision with its expected final score
  and its loss against the best.
* :func:`decision_tables` -- the per-state tables the simulation kernel plays from.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dicelab import cache as disk_cache
from dicelab import config, dice
from dicelab.errors import UserError
from dicelab.penta.rules import (
    BOX_NAMES,
    FULL_CARD,
    N_BOXES,
    N_DICE,
    N_STATES,
    PENTA_BONUS,
    PENTA_BOX,
    PENTA_POINTS,
    REROLLS,
    UPPER_BONUS,
    UPPER_BOXES,
    UPPER_TARGET,
    RuleSet,
    get_rules,
    state_index,
)
from dicelab.penta.scoring import BOX_VALUES, TABLES, apply_box, roll_box_scores
from dicelab.penta.solver import (
    DecisionSink,
    layer_groups,
    layer_states,
    solve,
    solve_layer,
    solve_with_decisions,
)
from dicelab.penta.tables import (
    BOX_SHIFT,
    KEEP1_SHIFT,
    KEEP_BITS,
    KEEP_SIZE,
    N_ROLLS,
    ROLL_BASE,
    SUBSETS,
    roll_index,
)
from dicelab.penta.widget import KEEP_PREFERENCE, best_box, new_turn_scratch, state_value
from dicelab.resources import check_memory
from dicelab.text import comma_items


@dataclass(frozen=True)
class TableValues:
    """A policy the decision tables hold a block of (the one-turn widget under these
    values, for every state and roll): its ``name``, the per-state ``values`` it plays by
    under a rule set, and whether the solver's own sweep builds its block while solving
    them (``solved``)."""

    name: str
    values: Callable[[RuleSet], np.ndarray]
    solved: bool = False


def solved_values(rules: RuleSet) -> np.ndarray:
    """``optimal``'s values: the solved expected future score of every state."""
    return solve(rules).values


def zero_values(rules: RuleSet) -> np.ndarray:
    """``greedy``'s values: nothing to come (every turn takes its most points); one
    read-only array for every rule set, made once (as ``optimal``'s, held per rule set)."""
    return _ZEROS


_ZEROS = np.zeros(N_STATES)
_ZEROS.flags.writeable = False


#: The decision tables' blocks, in their order (named data; which family plays from
#: which block is the family's: :mod:`dicelab.penta.builtin`).
TABLE_POLICIES = (TableValues("optimal", solved_values, solved=True),
                  TableValues("greedy", zero_values))
#: The names of the decision tables' blocks, in their order.
POLICIES = tuple(t.name for t in TABLE_POLICIES)
_TABLE_POLICY = {t.name: t for t in TABLE_POLICIES}


def table_policy(policy: str) -> TableValues:
    """The decision-table policy named ``policy`` (``UserError`` if none)."""
    try:
        return _TABLE_POLICY[policy]
    except KeyError:
        raise UserError(f"unknown Penta policy '{policy}'; valid: "
                        f"{', '.join(POLICIES)}") from None


# --- scorecards -------------------------------------------------------------------------


@dataclass(frozen=True)
class Scorecard:
    """A Penta scorecard: ``scores[b]`` for box ``b`` (None = open), and +100 bonuses earned.

    >>> card = Scorecard.parse("fours=12,penta=50")
    >>> card.mask, card.up, card.fifty, card.total
    (4104, 12, 1, 62)
    """

    scores: tuple[int | None, ...] = (None,) * N_BOXES
    penta_bonuses: int = 0

    @classmethod
    def parse(cls, text: str | None) -> Scorecard:
        """From ``"box=points,..."`` (box names as in ``BOX_NAMES`` or numbers 0..12),
        plus optionally ``bonuses=N``; empty text = an empty card, an empty item (two
        commas, or one at an end) is refused."""
        scores: list[int | None] = [None] * N_BOXES
        bonuses = 0
        seen: set[str] = set()
        try:
            items = comma_items(text or "")
        except ValueError as exc:
            raise UserError(f"scorecard {text!r}: {exc}; write box=points,..., e.g. "
                            "fours=12,penta=50") from None
        for item in items:
            key, sep, value = item.partition("=")
            key = key.strip().lower().replace("_", "-")
            if not sep or not re.fullmatch(r"[0-9]{1,9}", value.strip()):
                raise UserError(f"scorecard item '{item}': write box=points, e.g. fours=12")
            if key in seen:
                raise UserError(f"scorecard: '{key}' is given twice")
            seen.add(key)
            pts = int(value)
            if key == "bonuses":
                bonuses = pts
                continue
            if re.fullmatch(r"[0-9]+", key) and int(key) < N_BOXES:
                b = int(key)
            elif key in BOX_NAMES:
                b = BOX_NAMES.index(key)
            else:
                raise UserError(f"unknown box '{key}'; boxes are {', '.join(BOX_NAMES)}")
            scores[b] = pts
        card = cls(tuple(scores), bonuses)
        card.check()
        return card

    def check(self) -> None:
        """``UserError`` unless every filled box holds a score it can hold."""
        for b, s in enumerate(self.scores):
            if s is not None and s not in BOX_VALUES[b]:
                raise UserError(f"box {BOX_NAMES[b]} cannot hold {s}")
        if self.penta_bonuses and self.scores[PENTA_BOX] != PENTA_POINTS:
            raise UserError(f"Penta bonuses need {PENTA_POINTS} in the Penta box")
        # each bonus is a Penta written into another box, after the Penta box's 50
        others = sum(s is not None for b, s in enumerate(self.scores) if b != PENTA_BOX)
        if self.penta_bonuses > others:
            raise UserError(f"bonuses={self.penta_bonuses} needs as many boxes filled "
                            f"besides the Penta box, not {others}")

    def check_rules(self, rules: RuleSet) -> None:
        """``UserError`` if the card could not arise under ``rules`` (Penta bonuses under
        a rule set without them)."""
        if self.penta_bonuses and not rules.penta_bonus:
            raise UserError(f"rule set {rules.name} has no Penta bonuses: the card "
                            f"cannot hold bonuses={self.penta_bonuses}")

    @property
    def mask(self) -> int:
        return sum(1 << b for b, s in enumerate(self.scores) if s is not None)

    @property
    def upper_sum(self) -> int:
        return sum(s for s in self.scores[:UPPER_BOXES] if s is not None)

    @property
    def up(self) -> int:
        return min(UPPER_TARGET, self.upper_sum)

    @property
    def fifty(self) -> int:
        return int(self.scores[PENTA_BOX] == PENTA_POINTS)

    @property
    def state(self) -> int:
        return int(state_index(self.mask, self.up, self.fifty))

    @property
    def total(self) -> int:
        """TOTAL so far: boxes + upper bonus (if reached) + the Penta bonuses.

        The bonuses are counted at :data:`~dicelab.penta.rules.PENTA_BONUS` each; a card
        with bonuses can only come from a rule set that has them.
        """
        boxes = sum(s for s in self.scores if s is not None)
        upper_bonus = UPPER_BONUS if self.upper_sum >= UPPER_TARGET else 0
        return boxes + upper_bonus + PENTA_BONUS * self.penta_bonuses


# --- one turn, for one state --------------------------------------------------------------


@dataclass
class TurnAnalysis:
    """The widget of one state: values (points to come) of every decision of a turn.

    ``value``: the state's value (expected points to come); ``final[r]``: ending with
    roll ``r`` in the best box; ``box[r]`` the box played; ``keep1[K]`` / ``keep2[K]``:
    keeping ``K`` (global rank) with 1 / 2 rerolls left; ``play1[S]`` / ``play2[S]``: the
    keep played from multiset ``S`` with 1 / 2 rerolls left (the full roll means: score
    ``box[r]`` now). Ties (within ``config.PENTA_TIE_EPS``) are settled by the fixed order
    of :mod:`dicelab.penta.widget`; the decision tables hold the same choices.
    """

    value: float
    final: np.ndarray
    box: np.ndarray
    keep1: np.ndarray
    keep2: np.ndarray
    play1: np.ndarray
    play2: np.ndarray
    values: np.ndarray = field(repr=False)


def analyse_turn(values: np.ndarray, rules: RuleSet, mask: int, up: int, fifty: int
                 ) -> TurnAnalysis:
    """Run the one-turn widget for state (``mask``, ``up``, ``fifty``) under ``values``.

    Greedy play is the widget under zero values: a Penta of sixes on an empty card goes in
    the Penta box, and the first turn is worth its expected immediate points.

    >>> t = analyse_turn(np.zeros(N_STATES), get_rules("seed"), 0, 0, 0)
    >>> BOX_NAMES[t.box[roll_index([6] * 5)]], round(t.value, 4)
    ('penta', 28.4635)
    """
    W = new_turn_scratch()
    value = state_value(values, rules.params, TABLES, int(mask), int(up), int(fifty), W, True,
                        config.PENTA_TIE_EPS)
    return TurnAnalysis(float(value), W.e3, W.box, W.E1, W.E2, W.arg1, W.arg2, values)


def policy_values(policy: str, rules: RuleSet) -> np.ndarray:
    """The values a Penta policy plays by, per state: ``optimal``'s expected future score,
    or zeros for ``greedy`` (the most points this turn)."""
    return table_policy(policy).values(rules)


def check_turn(card: Scorecard, roll, rolls_left: int, rules: RuleSet | None = None) -> int:
    """The roll's index; ``UserError`` for a full card, a card ``rules`` cannot make (if
    given), a bad roll or rolls left."""
    if rules is not None:
        card.check_rules(rules)
    if card.mask == FULL_CARD:
        raise UserError("the scorecard is full: no decision left")
    if rolls_left not in range(REROLLS + 1):
        raise UserError(f"rolls left must be 0, 1 or 2, not {rolls_left}")
    try:
        return roll_index(roll)
    except (ValueError, KeyError) as exc:
        raise UserError(f"a roll is five dice 1..6, e.g. 1,3,3,4,6 ({exc})") from None


@dataclass(frozen=True)
class Option:
    """One option of a decision: keep some dice (reroll the rest) or score a box now.

    ``expected_final_score`` is the expected final TOTAL of the game (card so far included)
    under the policy's valuation; ``loss`` = best option's minus this one's, 0.0 for an
    option tied with the best. ``tie_with_best``: within ``config.PENTA_TIE_EPS`` points of
    the best
    (so equal up to rounding: see :mod:`dicelab.penta.widget`); the best option itself is
    one too. ``played``: the option the policy plays (the first of :func:`rank_options`).
    """

    kind: str  # "keep" or "box"
    keep: tuple[int, ...] | None
    box: str | None
    points: int | None
    expected_final_score: float
    loss: float
    tie_with_best: bool = False
    played: bool = False

    def to_dict(self) -> dict:
        return {"kind": self.kind, "keep": list(self.keep) if self.keep is not None else None,
                "box": self.box, "points": self.points,
                "expected_final_score": self.expected_final_score, "loss": self.loss,
                "tie_with_best": self.tie_with_best, "played": self.played}


def rank_options(card: Scorecard, roll, rolls_left: int, rules: str | RuleSet | None = None,
                 policy: str = "optimal") -> list[Option]:
    """Every option for ``roll`` (five faces) with ``rolls_left`` rerolls, best first.

    Options are each box the roll may go in now, and (with rerolls left) each proper
    sub-multiset of the roll to keep. ``expected_final_score`` is under ``policy``'s values
    (``optimal``: the exact expected final score with optimal play from then on;
    ``greedy``: the card total + this turn's expected immediate points).

    The first option is the one the policy plays (``played``; the decision tables hold
    the same). Then come the other options tied with the best (``tie_with_best``: within
    ``config.PENTA_TIE_EPS``) in the tie order -- boxes (= keeping all five) before keeps,
    lower box numbers first, larger keeps first -- then the rest by value.

    >>> opts = rank_options(Scorecard(), [6, 6, 6, 2, 1], 2, "seed", "greedy")
    >>> opts[0].keep, opts[0].played, round(opts[0].expected_final_score, 2)
    ((6, 6, 6), True, 28.12)
    """
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    r = check_turn(card, roll, rolls_left, rs)
    values = policy_values(policy, rs)
    base = card.total
    scores = np.empty(N_BOXES, dtype=np.int64)
    bonus = roll_box_scores(rs.params, TABLES, card.mask, card.fifty, r, scores)
    turn = analyse_turn(values, rs, card.mask, card.up, card.fifty)
    # (value, tie order, kind, keep or None, box name or None, points or None)
    raw: list[tuple[float, int, str, tuple[int, ...] | None, str | None, int | None]] = []
    for b in range(N_BOXES):
        if scores[b] < 0:
            continue
        one = scores.copy()
        one[:] = -1
        one[b] = scores[b]
        v, _ = best_box(values, card.mask, card.up, card.fifty, one, bonus,
                        config.PENTA_TIE_EPS)
        pts, _, _ = apply_box(card.up, card.fifty, b, int(scores[b]))
        raw.append((base + v, b - N_BOXES, "box", None, BOX_NAMES[b], int(pts) + bonus))
    played = ("box", BOX_NAMES[int(turn.box[r])])
    if rolls_left > 0:
        keep_values = turn.keep1 if rolls_left == 1 else turn.keep2
        for k in SUBSETS[r]:
            if k < 0 or KEEP_SIZE[k] == N_DICE:
                continue
            keep = tuple(dice.dice_of_rank(int(k)))
            raw.append((base + float(keep_values[k]), int(KEEP_PREFERENCE[k]), "keep", keep,
                        None, None))
        kept = int((turn.play1 if rolls_left == 1 else turn.play2)[ROLL_BASE + r])
        if KEEP_SIZE[kept] < N_DICE:  # keeping all five = scoring box[r] now
            played = ("keep", tuple(dice.dice_of_rank(kept)))
    best = max(t[0] for t in raw)

    def order(t):
        tied = t[0] >= best - config.PENTA_TIE_EPS
        is_played = (t[2], t[3] if t[2] == "keep" else t[4]) == played
        return (not is_played, not tied, t[1] if tied else -t[0])

    raw.sort(key=order)
    out = []
    for val, _, kind, keep, box, pts in raw:
        tied = val >= best - config.PENTA_TIE_EPS
        out.append(Option(kind, keep, box, pts, val, 0.0 if tied else best - val, tied,
                          not out))
    return out


def choose(policy: str, card: Scorecard, roll, rolls_left: int,
           rules: str | RuleSet | None = None) -> Option:
    """The policy's choice (the app's "computer choice"): the top of :func:`rank_options`.

    With rerolls left, keeping all five dice is worth the same as scoring now in the best
    box, so the choice is then that box.
    """
    return rank_options(card, roll, rolls_left, rules, policy)[0]


# --- decision tables for the simulation kernel ---------------------------------------------


@dataclass(frozen=True)
class DecisionTables:
    """Decisions of one or more policies for every reachable state and roll.

    Row ``i`` belongs to state ``states[i]`` (``slot[state] = i``, -1 if unreachable or
    final). For policy ``p`` (index into ``policies``, built if ``built[p]``),
    ``decisions[p, i, r]`` (uint16,
    shape (policies, 536320, 252): 270 MB per policy) packs three decisions for roll
    ``r``: bits 0-4 and 5-9 index ``SUBSETS[r]``, the dice to keep with 2 / 1 rerolls
    left (:meth:`keep2`, :meth:`keep1`); bits 10-13 the box for a final roll (:meth:`box`).

    ``elapsed_s[name]``: time to build or load policy ``name``'s block;
    ``from_cache[name]``: whether it was loaded from the disk cache (see
    :func:`decision_tables`).
    """

    policies: tuple[str, ...]
    rules: RuleSet
    states: np.ndarray
    slot: np.ndarray
    decisions: np.ndarray
    built: np.ndarray
    elapsed_s: dict[str, float] = field(default_factory=dict)
    from_cache: dict[str, bool] = field(default_factory=dict)

    def keep2(self, p: int, i: int, r: int) -> int:
        """Keep (global rank) of policy ``p`` in state row ``i`` for roll ``r``, 2 rerolls left."""
        return int(SUBSETS[r, self.decisions[p, i, r] & KEEP_BITS])

    def keep1(self, p: int, i: int, r: int) -> int:
        """Keep (global rank) with 1 reroll left."""
        return int(SUBSETS[r, (self.decisions[p, i, r] >> KEEP1_SHIFT) & KEEP_BITS])

    def box(self, p: int, i: int, r: int) -> int:
        """Box for final roll ``r``."""
        return int(self.decisions[p, i, r] >> BOX_SHIFT)

    @property
    def nbytes(self) -> int:
        """Bytes in use: the state maps and the blocks of the policies built so far."""
        return int(self.slot.nbytes + self.states.nbytes
                   + self.decisions[0].nbytes * int(self.built.sum()))


def all_states() -> tuple[np.ndarray, np.ndarray]:
    """(states, slot): every reachable non-final state and the inverse map (int32, -1)."""
    states = np.concatenate(layer_states()[:N_BOXES])
    slot = np.full(N_STATES, -1, dtype=np.int32)
    slot[states] = np.arange(states.size, dtype=np.int32)
    return states, slot


_TABLES_MEMO: dict[tuple[str, str], DecisionTables] = {}

#: Bump when the packed layout or the way decisions are derived changes: blocks cached
#: under another version are then rebuilt (and overwritten) instead of loaded.
DECISIONS_FORMAT_VERSION = 2


def decisions_cache_key(policy: str, rules: RuleSet) -> str:
    """Disk-cache key of ``policy``'s decision block under ``rules`` (by their content).

    >>> rs = get_rules("seed")
    >>> decisions_cache_key("optimal", rs) == f"penta-decisions-optimal-seed-{rs.digest}"
    True
    """
    return disk_cache.entry_key(f"penta-decisions-{policy}", rules.name, rules.digest)


def decision_block_stored(policy: str, rules: RuleSet) -> bool:
    """Whether the disk cache has a file for ``policy``'s decision block under ``rules``
    (a hint, read without loading it: :func:`decision_tables` still checks the entry)."""
    return disk_cache.cache_path(decisions_cache_key(policy, rules)).is_file()


def _decisions_version(values: np.ndarray, eps: float) -> str:
    # What a block depends on besides the code and the rules (which are in its key): the
    # format, the tie tolerance and the value table (so a re-solved or edited V never
    # meets old decisions).
    return (f"{DECISIONS_FORMAT_VERSION}:eps={float(eps)!r}"
            f":values={disk_cache.digest(values)[:16]}")


def decisions_version(policy: str, rules: RuleSet) -> str:
    """The version ``policy``'s decision block under ``rules`` is cached under: a table
    derived from the decisions (e.g. a score distribution) is valid for this version only."""
    return _decisions_version(policy_values(policy, rules), config.PENTA_TIE_EPS)


def release_decision_tables() -> None:
    """Forget the memoised decision tables (they hold hundreds of MB)."""
    _TABLES_MEMO.clear()


def build_decision_block(values: np.ndarray, rs: RuleSet, slot: np.ndarray, out: np.ndarray
                         ) -> None:
    """Write into ``out[slot[s], r]`` the decisions of the widget under ``values`` (any
    per-state estimate of the points to come: ``optimal``'s, zeros, a learned one) for
    every reachable state ``s`` and roll ``r`` (``values`` is read, not changed)."""
    sink = DecisionSink(slot, out)
    for layer in layer_groups()[:N_BOXES]:
        solve_layer(values, layer, rs, sink)


def decision_tables(policies: str | tuple[str, ...], rules: str | RuleSet | None = None
                    ) -> DecisionTables:
    """Decision tables with (at least) ``policies`` built (``optimal`` solves/loads ``V``).

    The table always has a row block per policy of ``POLICIES`` (``decisions[p]`` for
    ``POLICIES[p]``); blocks are made on demand and memoised for the last rule set used.
    An unmade block costs no memory (its pages are never touched). Each block is loaded
    from the disk cache (:mod:`dicelab.cache`, key :func:`decisions_cache_key`, 270 MB)
    when an intact entry for the same rules, tie tolerance and values is there, else built
    and stored; when ``optimal``'s values are not solved yet either, one sweep of the
    solver solves them and builds the block (:func:`~dicelab.penta.solver.
    solve_with_decisions`). docs/benchmarks.md has the times of both ways. Building and
    storing 270 MB per policy is why the example is not run as a doctest.

    >>> dt = decision_tables("optimal", "seed")  # doctest: +SKIP
    >>> dt.from_cache["optimal"], round(dt.elapsed_s["optimal"], 1)  # doctest: +SKIP
    (True, 0.8)
    """
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    pols = (policies,) if isinstance(policies, str) else tuple(policies)
    for p in pols:
        table_policy(p)
    memo_key = (rs.name, rs.digest)
    tables = _TABLES_MEMO.get(memo_key)
    if tables is None:
        _TABLES_MEMO.clear()
        states, slot = all_states()
        check_memory(f"the Penta decision tables of rules '{rs.name}'",
                     len(POLICIES) * states.size * N_ROLLS * 2)
        decisions = np.empty((len(POLICIES), states.size, N_ROLLS), dtype=np.uint16)
        tables = DecisionTables(POLICIES, rs, states, slot, decisions,
                                np.zeros(len(POLICIES), dtype=bool))
        _TABLES_MEMO[memo_key] = tables
    for name in pols:
        p = POLICIES.index(name)
        if tables.built[p]:
            continue
        t0 = time.perf_counter()
        block = tables.decisions[p]
        built = False
        if table_policy(name).solved:
            # values not solved yet: one sweep solves them and builds the block
            sol, built = solve_with_decisions(rs, DecisionSink(tables.slot, block))
            values = sol.values
        else:
            values = policy_values(name, rs)
        key = decisions_cache_key(name, rs)
        version = _decisions_version(values, config.PENTA_TIE_EPS)
        loaded = False
        if not built:
            # read straight into the block: no second 270 MB buffer, no copy
            loaded = disk_cache.load(key, version, out={"decisions": block}) is not None
            if not loaded:
                build_decision_block(values, rs, tables.slot, block)
        if not loaded:  # written while the caller plays from the block
            disk_cache.store_in_background(key, version, {"decisions": block})
        tables.built[p] = True
        tables.elapsed_s[name] = time.perf_counter() - t0
        tables.from_cache[name] = loaded
    return tables


def checked_values(values, name: str) -> np.ndarray:
    """A user's ``values`` as the widget reads them (float64), or a ``UserError`` naming
    the policy: one number per state index, finite at every state a game reaches (the
    rest are never read: ``optimal``'s own values hold NaN there)."""
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != (N_STATES,):
        what = f"shape {out.shape}" if out is not None else type(values).__name__
        raise UserError(f"policy {name}: its values are one number per Penta state index "
                        f"({N_STATES:,}, dicelab.penta.rules.state_index), not {what}")
    reached = all_states()[0]
    bad = reached[~np.isfinite(out[reached])]
    if bad.size:
        raise UserError(f"policy {name}: its values are finite numbers at every state a "
                        f"game reaches, not {out[bad[0]]} (state index {bad[0]}, and "
                        f"{bad.size - 1:,} more)")
    return out


__all__ = [
    "POLICIES",
    "TABLE_POLICIES",
    "DecisionTables",
    "Option",
    "Scorecard",
    "TableValues",
    "TurnAnalysis",
    "all_states",
    "analyse_turn",
    "build_decision_block",
    "check_turn",
    "checked_values",
    "choose",
    "decision_block_stored",
    "decision_tables",
    "decisions_cache_key",
    "decisions_version",
    "policy_values",
    "rank_options",
    "release_decision_tables",
    "solved_values",
    "table_policy",
    "zero_values",
]
