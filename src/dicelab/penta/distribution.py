"""The exact distribution of a Penta policy's final TOTAL, computed, not sampled (layer 2).

``score_distribution("optimal", "free-joker")`` gives P(TOTAL = s) for every ``s``, the
mean, SD and percentiles, P(upper bonus), P(Penta box = 50), the expected number of +100
bonuses and each box's mean score, for the decisions the simulator plays
(:func:`dicelab.penta.policies.decision_tables`): the distribution of exactly the games
``simulate`` samples.

Method: a forward pass over the 13 layers (number of filled boxes) of the probability
of each (turn-start state, TOTAL so far). Per layer:

1. each reached state's *turn outcome*: the probability of each (box, box score, Penta
   bonus) under the policy's decisions. The 252 first rolls' mass is moved to the keeps
   the decisions choose, and a keep's mass to the keeps with one die more (1/6 each, in
   increasing size) until every keep is a roll again: the multinomial of the rerolled
   dice, one die at a time, as the widget's ``E[K] = mean_f E[K + f]`` backwards;
   twice, then each final roll goes to the box the decisions name, scored as the
   simulator scores it (:func:`dicelab.penta.scoring.roll_box_scores`);
2. every next state reached, with the range [lo, hi] of TOTAL it can have; a state's
   TOTAL-so-far vector is stored only over that range (one flat float64 array per layer);
3. each next state's vector as the sum of its predecessors' vectors, shifted by the
   points of the outcome and weighted by its probability (``prange`` over next states,
   each summing its own contributions in a fixed order: the result does not depend on
   the number of threads).

The event statistics (box means, bonuses) come from the same pass: the probability of
each state times its outcomes. On the final layer the vectors add up to the distribution.
The result of a policy from the empty card is cached on disk (:mod:`dicelab.cache`; key
the rule set's digest and the policy, version the decisions' own).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numba import njit, prange

from dicelab import cache as disk_cache
from dicelab.errors import UserError
from dicelab.penta.policies import (
    POLICIES,
    Scorecard,
    all_states,
    build_decision_block,
    checked_values,
    decision_tables,
    decisions_version,
)
from dicelab.penta.rules import (
    BOX_NAMES,
    FACES,
    FULL_CARD,
    N_BOXES,
    PENTA_BOX,
    REROLLS,
    UPPER_TARGET,
    RuleSet,
    get_rules,
    state_fifty,
    state_index,
    state_mask,
    state_up,
)
from dicelab.penta.scoring import MAX_TOTAL, TABLES, apply_box, roll_box_scores
from dicelab.penta.tables import (
    BOX_SHIFT,
    KEEP1_SHIFT,
    KEEP_BITS,
    KEEP_SIZE,
    N_KEEPS,
    N_ROLLS,
    ROLL_BASE,
)
from dicelab.resources import check_memory
from dicelab.stats import percentiles_from_histogram

#: Bump when the computation or the cached arrays change.
FORMAT_VERSION = 1
#: The percentiles reported.
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
#: The final scores T whose P(final score >= T) is reported.
AT_LEAST = (200, 250, 300, 350, 400)
#: Outcome codes: ``box << 7 | score << 1 | bonus`` (a box score is at most 50).
_SCORE_SHIFT = 1
_BOX_SHIFT = 7
N_CODES = N_BOXES << _BOX_SHIFT
#: Distinct (box, score, bonus) outcomes of one turn at most: 6 x 6 upper scores, 27 of
#: three / four of a kind, 26 of chance, 2 each of the other four boxes; +6 Pentas with a
#: bonus.
MAX_OUTCOMES = 6 * 6 + 27 + 27 + 26 + 4 * 2 + FACES
#: Events booked per state: each box's score, the upper bonus, the 50, the Penta bonus.
N_EVENTS = N_BOXES + 3
_SIXTH = 1.0 / FACES
#: No decision row to compare with (:func:`turn_outcomes`).
_NO_ROW = np.zeros(0, dtype=np.uint16)
assert all(KEEP_SIZE[k] <= KEEP_SIZE[k + 1] for k in range(N_KEEPS - 1)), \
    "keeps must be ranked by size (the forward pass pushes mass upwards in rank order)"


# --- kernels -----------------------------------------------------------------------------


@njit(cache=True)
def turn_outcomes(dec_row, ref_row, rp, T, mask, fifty, mass, Q, dense, scores):
    """Add the probability of each outcome code of one turn (decisions ``dec_row``, one
    uint16 per roll) to ``dense``. Returns (the number of final rolls whose box the rules
    forbid: 0 unless a table is wrong; the expected number of the turn's decisions that
    differ from ``ref_row``'s, 0.0 if ``ref_row`` is empty)."""
    compare = ref_row.shape[0] > 0
    differ = 0.0
    for r in range(N_ROLLS):
        mass[r] = T.roll_prob[r]
    for stage in range(REROLLS):
        shift = 0 if stage == 0 else KEEP1_SHIFT
        for k in range(N_KEEPS):
            Q[k] = 0.0
        for r in range(N_ROLLS):
            pos = (dec_row[r] >> shift) & KEEP_BITS
            Q[T.subsets[r, pos]] += mass[r]
            if compare and pos != (ref_row[r] >> shift) & KEEP_BITS:
                differ += mass[r]
        for k in range(ROLL_BASE):  # by size: a keep's mass is complete when it is moved
            q = Q[k]
            if q != 0.0:
                q *= _SIXTH
                for f in range(1, FACES + 1):
                    Q[T.add[k, f]] += q
        for r in range(N_ROLLS):
            mass[r] = Q[ROLL_BASE + r]
    illegal = 0
    for r in range(N_ROLLS):
        if mass[r] == 0.0:
            continue
        b = np.int64(dec_row[r] >> BOX_SHIFT)
        if compare and b != ref_row[r] >> BOX_SHIFT:
            differ += mass[r]
        # scored as the simulator scores it (simulate._play_seat)
        if T.penta_face[r] != 0 and (mask >> PENTA_BOX) & 1:
            bonus = roll_box_scores(rp, T, mask, fifty, r, scores)
            sc = scores[b]
        else:
            bonus = 0
            sc = -1 if (mask >> b) & 1 else T.ordinary[b, r]
        if sc < 0:
            illegal += 1
            continue
        dense[(b << _BOX_SHIFT) | (sc << _SCORE_SHIFT) | (1 if bonus > 0 else 0)] += mass[r]
    return illegal, differ


@njit(cache=True, parallel=True)
def _outcomes(states, slot, decisions, rp, T, out_code, out_p, out_n, illegal):
    """Turn outcomes of ``states[i]``: ``out_n[i]`` codes ``out_code[i, :]`` (increasing)
    with probabilities ``out_p[i, :]``; ``illegal[i]``: forbidden boxes played."""
    block = 64
    n = states.shape[0]
    for bi in prange((n + block - 1) // block):
        mass = np.empty(N_ROLLS)
        Q = np.empty(N_KEEPS)
        dense = np.zeros(N_CODES)
        scores = np.empty(N_BOXES, dtype=np.int64)
        for i in range(bi * block, min(n, (bi + 1) * block)):
            s = states[i]
            illegal[i] = turn_outcomes(decisions[slot[s]], _NO_ROW, rp, T, state_mask(s),
                                       state_fifty(s), mass, Q, dense, scores)[0]
            m = 0
            for c in range(N_CODES):
                if dense[c] != 0.0:
                    if m < out_code.shape[1]:
                        out_code[i, m] = c
                        out_p[i, m] = dense[c]
                    m += 1
                    dense[c] = 0.0
            out_n[i] = m


@njit(inline="always")
def outcome_step(rp, s, code):
    """(next state, TOTAL gained, points written, upper bonus earned, 50 written, bonus)
    of outcome ``code`` in state ``s``."""
    b = code >> _BOX_SHIFT
    sc = (code >> _SCORE_SHIFT) & ((1 << (_BOX_SHIFT - _SCORE_SHIFT)) - 1)
    has_bonus = code & 1
    up = state_up(s)
    f = state_fifty(s)
    pts, nu, nf = apply_box(up, f, b, sc)
    j = state_index(state_mask(s) | (1 << b), nu, nf)
    return j, pts + has_bonus * rp.penta_bonus, b, sc, pts > sc, nf > f, has_bonus


@njit(cache=True)
def _next_states(states, F, off, width, rp, out_code, out_p, out_n, mark, events):
    """Mark the next states reached (``mark[j] = 1``) and add the layer's events: ``events[b]`` the
    expected score of box ``b``, then P(upper bonus), P(50), the expected Penta bonuses."""
    for i in range(states.shape[0]):
        w = 0.0
        for x in range(width[i]):
            w += F[off[i] + x]
        for o in range(out_n[i]):
            j, _, b, sc, upper, fifty, bonus = outcome_step(rp, states[i], out_code[i, o])
            mark[j] = 1
            p = w * out_p[i, o]
            events[b] += p * sc
            events[N_BOXES] += p * upper
            events[N_BOXES + 1] += p * fifty
            events[N_BOXES + 2] += p * bonus


@njit(cache=True)
def _ranges(states, lo, width, rp, out_code, out_n, tpos, t_lo, t_hi, t_count):
    """For each next state ``t`` (``tpos[j]``): the TOTAL range [t_lo, t_hi] it can have
    and the number of contributions it receives."""
    for i in range(states.shape[0]):
        for o in range(out_n[i]):
            j, gain, _, _, _, _, _ = outcome_step(rp, states[i], out_code[i, o])
            t = tpos[j]
            t_lo[t] = min(t_lo[t], lo[i] + gain)
            t_hi[t] = max(t_hi[t], lo[i] + width[i] - 1 + gain)
            t_count[t] += 1


@njit(cache=True)
def _contributions(states, lo, rp, out_code, out_p, out_n, tpos, t_lo, seg_ptr, seg_src,
                   seg_shift, seg_p):
    """The contributions to each next state ``t`` in ``seg_*[seg_ptr[t]:seg_ptr[t + 1]]``,
    in the order of (state, outcome): source row, where its vector starts in ``t``'s,
    probability."""
    fill = seg_ptr[:-1].copy()
    for i in range(states.shape[0]):
        for o in range(out_n[i]):
            j, gain, _, _, _, _, _ = outcome_step(rp, states[i], out_code[i, o])
            t = tpos[j]
            q = fill[t]
            seg_src[q] = i
            seg_shift[q] = lo[i] + gain - t_lo[t]
            seg_p[q] = out_p[i, o]
            fill[t] = q + 1


@njit(cache=True, parallel=True)
def _pull(F, off, width, seg_ptr, seg_src, seg_shift, seg_p, t_off, F_next):
    """``F_next`` (zeroed): each next state's vector, the sum of its contributions."""
    for t in prange(seg_ptr.shape[0] - 1):
        base = t_off[t]
        for q in range(seg_ptr[t], seg_ptr[t + 1]):
            i = seg_src[q]
            p = seg_p[q]
            d = base + seg_shift[q]
            o = off[i]
            for x in range(width[i]):
                F_next[d + x] += p * F[o + x]


@njit(cache=True)
def _final(F, off, lo, width, out):
    for t in range(off.shape[0]):
        for x in range(width[t]):
            out[lo[t] + x] += F[off[t] + x]


# --- the pass ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layer:
    """The reached states of one layer and their TOTAL-so-far vectors (flat ``F``: state
    ``i`` holds TOTAL ``lo[i] .. lo[i] + width[i] - 1`` at ``F[off[i]:off[i] + width[i]]``)."""

    states: np.ndarray
    lo: np.ndarray
    width: np.ndarray
    off: np.ndarray
    F: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.states.nbytes * 4 + self.F.nbytes)


def _start_layer(card: Scorecard) -> _Layer:
    one = np.ones(1, dtype=np.int64)
    return _Layer(np.array([card.state], dtype=np.int64), np.array([card.total]), one,
                  np.zeros(1, dtype=np.int64), np.ones(1))


def propagate(slot: np.ndarray, decisions: np.ndarray, rules: RuleSet,
              card: Scorecard | None = None) -> dict[str, np.ndarray]:
    """The forward pass for one policy's decision block (``decisions[slot[state], roll]``,
    the layout of :class:`~dicelab.penta.policies.DecisionTables`) from ``card`` (default:
    empty). Returns ``probability`` (P(TOTAL = s), s = 0..MAX_TOTAL), ``events`` (each
    box's expected score, P(upper bonus), P(50), expected Penta bonuses: of the turns
    still to play), ``peak_bytes`` (the most the pass held at once, besides the tables)."""
    card = Scorecard() if card is None else card
    rp = rules.params
    layer = _start_layer(card)
    events = np.zeros(N_EVENTS)
    mark = np.zeros(slot.shape[0], dtype=np.uint8)
    tpos = np.full(slot.shape[0], -1, dtype=np.int64)
    peak = 0
    for _n in range(bin(card.mask).count("1"), N_BOXES):
        k = layer.states.size
        out_bytes = k * MAX_OUTCOMES * (2 + 8)
        check_memory("the exact Penta score distribution (turn outcomes of a layer)",
                     layer.nbytes + out_bytes)
        out_code = np.zeros((k, MAX_OUTCOMES), dtype=np.int16)
        out_p = np.zeros((k, MAX_OUTCOMES))
        out_n = np.zeros(k, dtype=np.int64)
        illegal = np.zeros(k, dtype=np.int64)
        _outcomes(layer.states, slot, decisions, rp, TABLES, out_code, out_p, out_n, illegal)
        if illegal.any():
            raise RuntimeError("a Penta policy table chose a box the rules forbid: a bug")
        if out_n.max() > MAX_OUTCOMES:
            raise RuntimeError(f"a turn has {out_n.max()} outcomes, more than MAX_OUTCOMES")
        _next_states(layer.states, layer.F, layer.off, layer.width, rp, out_code, out_p, out_n,
                     mark, events)
        targets = np.flatnonzero(mark).astype(np.int64)
        mark[targets] = 0
        tpos[targets] = np.arange(targets.size)
        t_lo = np.full(targets.size, np.iinfo(np.int64).max)
        t_hi = np.full(targets.size, -1, dtype=np.int64)
        t_count = np.zeros(targets.size, dtype=np.int64)
        _ranges(layer.states, layer.lo, layer.width, rp, out_code, out_n, tpos, t_lo, t_hi,
                t_count)
        t_width = t_hi - t_lo + 1
        t_off = np.zeros(targets.size, dtype=np.int64)
        np.cumsum(t_width[:-1], out=t_off[1:])
        n_pairs = int(t_count.sum())
        held = layer.nbytes + out_bytes + n_pairs * 16 + int(t_width.sum()) * 8 \
            + targets.nbytes * 5
        check_memory("the exact Penta score distribution (two layers of it)", held)
        peak = max(peak, held)
        seg_ptr = np.zeros(targets.size + 1, dtype=np.int64)
        np.cumsum(t_count, out=seg_ptr[1:])
        seg_src = np.empty(n_pairs, dtype=np.int32)
        seg_shift = np.empty(n_pairs, dtype=np.int32)
        seg_p = np.empty(n_pairs)
        _contributions(layer.states, layer.lo, rp, out_code, out_p, out_n, tpos, t_lo, seg_ptr,
                       seg_src, seg_shift, seg_p)
        del out_code, out_p
        F_next = np.zeros(int(t_width.sum()))
        _pull(layer.F, layer.off, layer.width, seg_ptr, seg_src, seg_shift, seg_p, t_off,
              F_next)
        tpos[targets] = -1
        layer = _Layer(targets, t_lo, t_width, t_off, F_next)
    probability = np.zeros(MAX_TOTAL + 1)
    _final(layer.F, layer.off, layer.lo, layer.width, probability)
    return {"probability": probability, "events": events, "peak_bytes": np.array(peak)}


# --- the result --------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreDistribution:
    """The exact distribution of one policy's final TOTAL under one rule set.

    ``probability[s]``: P(TOTAL = s), s = 0..MAX_TOTAL; ``box_means[b]``: mean score of box
    ``b`` (``BOX_NAMES`` order); ``p_upper_bonus``, ``p_penta_fifty``: P(the upper bonus),
    P(50 in the Penta box); ``mean_penta_bonuses``: expected number of +100 bonuses.
    ``card``: the scorecard the games start from (empty by default). ``compute_s``: how
    long the pass took (also when loaded: the cache keeps it); ``elapsed_s``: this call;
    ``peak_bytes``: the most the pass held at once besides the decision tables.
    """

    policy: str
    rules: RuleSet
    probability: np.ndarray
    box_means: np.ndarray
    p_upper_bonus: float
    p_penta_fifty: float
    mean_penta_bonuses: float
    elapsed_s: float
    from_cache: bool
    compute_s: float
    peak_bytes: int
    card: Scorecard = field(default_factory=Scorecard)
    game: str = "penta"
    seed: None = None  # what the commands' manifests read: nothing is random here
    #: an objective's policy: the expected number of its decisions per game (a keep with
    #: two or one rerolls left, a box) that differ from ``optimal``'s
    differ_from_optimal: float | None = None

    @property
    def scores(self) -> np.ndarray:
        return np.arange(self.probability.size)

    @property
    def mean(self) -> float:
        return float(self.probability @ self.scores)

    @property
    def sd(self) -> float:
        dev = self.scores - self.mean
        return math.sqrt(float(self.probability @ (dev * dev)))

    @property
    def support(self) -> tuple[int, int]:
        """The lowest and highest TOTAL with a probability above 0."""
        nz = np.flatnonzero(self.probability > 0)
        return int(nz[0]), int(nz[-1])

    @property
    def percentiles(self) -> dict[int, float]:
        """The lower quantiles (as the simulator's report: the smallest TOTAL whose
        cumulative probability reaches q%)."""
        return percentiles_from_histogram(self.probability, self.scores, PERCENTILES)

    def cdf(self) -> np.ndarray:
        """P(TOTAL <= s) for s = 0..MAX_TOTAL."""
        return np.cumsum(self.probability)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.support
        return {"game": "penta", "method": "exact", "policy": self.policy,
                "rules": self.rules.name, "card": _card_text(self.card),
                "expected_final_score": self.mean, "final_score_sd": self.sd,
                "final_score_percentiles": {str(q): v for q, v in self.percentiles.items()},
                "p_at_least": {str(t): self.p_at_least(t) for t in AT_LEAST},
                "p_upper_bonus": self.p_upper_bonus, "p_penta_fifty": self.p_penta_fifty,
                "expected_penta_bonuses": self.mean_penta_bonuses,
                "expected_box_scores": {n: float(m) for n, m in zip(BOX_NAMES, self.box_means,
                                                                     strict=True)},
                "support": [lo, hi], "probability": self.probability[lo:hi + 1].tolist(),
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache,
                "compute_s": self.compute_s, "peak_bytes": self.peak_bytes,
                **({} if self.differ_from_optimal is None
                   else {"decisions_differing_from_optimal": self.differ_from_optimal})}

    def p_at_least(self, target: int) -> float:
        """P(TOTAL >= ``target``)."""
        return float(self.probability[max(0, target):].sum())

    def to_frame(self) -> pd.DataFrame:
        """(final_score, probability) for every TOTAL from the lowest to the highest
        possible."""
        lo, hi = self.support
        return pd.DataFrame({"final_score": np.arange(lo, hi + 1, dtype=np.int64),
                             "probability": self.probability[lo:hi + 1]})

    def manifest(self) -> dict[str, Any]:
        return {"game": "penta", "experiment": "score-distribution", "method": "exact",
                "policy": self.policy, "rules": self.rules.name,
                "rule_params": self.rules.params._asdict(), "card": _card_text(self.card),
                "elapsed_s": self.elapsed_s, "from_cache": self.from_cache,
                "compute_s": self.compute_s}


def _card_text(card: Scorecard) -> str:
    items = [f"{n}={s}" for n, s in zip(BOX_NAMES, card.scores, strict=True) if s is not None]
    if card.penta_bonuses:
        items.append(f"bonuses={card.penta_bonuses}")
    return ",".join(items)


def _entry(policy: str, rs: RuleSet, card: Scorecard) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    tables = decision_tables(policy, rs)
    arrays = propagate(tables.slot, tables.decisions[POLICIES.index(policy)], rs, card)
    arrays["compute_s"] = np.array(time.perf_counter() - t0)
    return arrays


def _intact(arrays: dict[str, np.ndarray]) -> bool:
    p, ev = arrays.get("probability"), arrays.get("events")
    return (p is not None and p.shape == (MAX_TOTAL + 1,) and ev is not None
            and ev.shape == (N_EVENTS,) and abs(float(p.sum()) - 1.0) < 1e-9
            and "compute_s" in arrays and "peak_bytes" in arrays)


def cache_key(policy: str, rules: RuleSet) -> str:
    """Disk-cache key of ``policy``'s distribution under ``rules`` (by their content)."""
    return disk_cache.entry_key(f"penta-distribution-{policy}", rules.name, rules.digest)


def score_distribution(policy: str = "optimal", rules: str | RuleSet | None = None,
                       card: Scorecard | str | None = None,
                       use_cache: bool = True) -> ScoreDistribution:
    """The exact distribution of ``policy``'s (``optimal`` or ``greedy``) final TOTAL
    under ``rules`` (default ``seed``), games starting from ``card`` (a
    :class:`~dicelab.penta.policies.Scorecard` or its text, e.g. ``"fours=12,penta=50"``;
    default: an empty card, whose result is cached on disk).

    Needs the policy's decision table (270 MB; built or loaded as for a simulation); the
    pass itself takes seconds. The example is not run as a doctest for that reason.

    >>> d = score_distribution("optimal", "free-joker")  # doctest: +SKIP
    >>> round(d.mean, 4), round(d.sd, 2)  # doctest: +SKIP
    (254.5896, 59.61)
    """
    if policy not in POLICIES:
        raise UserError(f"unknown Penta policy '{policy}'; valid: {', '.join(POLICIES)}")
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    if not isinstance(card, Scorecard):
        card = Scorecard.parse(card)
    card.check_rules(rs)
    if card.mask == FULL_CARD:
        raise UserError("the scorecard is full: nothing left to play")
    t0 = time.perf_counter()
    if use_cache and card.mask == 0:
        key = cache_key(policy, rs)
        version = f"{FORMAT_VERSION}:{decisions_version(policy, rs)}"
        arrays, from_cache = disk_cache.cached(key, version, lambda: _entry(policy, rs, card))
        if not _intact(arrays):
            arrays = _entry(policy, rs, card)
            disk_cache.store(key, version, arrays)
            from_cache = False
    else:
        arrays, from_cache = _entry(policy, rs, card), False
    return distribution_from(policy, rs, arrays, from_cache, t0, card)


def values_distribution(values: np.ndarray, rules: str | RuleSet | None = None,
                        name: str = "values") -> ScoreDistribution:
    """The exact distribution of the final TOTAL of the policy that plays the one-turn
    widget under ``values`` (float64, one per state index: the points still to come, as
    estimated by whoever made them), i.e. decides as ``optimal`` does with other values.
    Its decision block (270 MB) is built for the call and dropped; nothing is cached.
    ``values`` are checked first (:func:`~dicelab.penta.policies.checked_values`)."""
    rs = rules if isinstance(rules, RuleSet) else get_rules(rules)
    values = checked_values(values, name)  # a NaN would be read as a decision
    t0 = time.perf_counter()
    states, slot = all_states()
    check_memory("the decision block of a Penta policy's values", states.size * N_ROLLS * 2)
    block = np.empty((states.size, N_ROLLS), dtype=np.uint16)
    build_decision_block(np.ascontiguousarray(values), rs, slot, block)
    arrays = propagate(slot, block, rs)
    arrays["compute_s"] = np.array(time.perf_counter() - t0)
    return distribution_from(name, rs, arrays, False, t0)


def distribution_from(policy: str, rs: RuleSet, arrays: dict[str, np.ndarray],
                      from_cache: bool, t0: float, card: Scorecard | None = None
                      ) -> ScoreDistribution:
    """A :class:`ScoreDistribution` from the arrays of a forward pass (those of
    :func:`propagate`, and optionally ``differ``: the expected decisions per game that
    differ from ``optimal``'s); ``t0``: when the call began."""
    card = Scorecard() if card is None else card
    ev = arrays["events"]
    filled = np.array([0 if s is None else s for s in card.scores], dtype=np.float64)
    differ = arrays.get("differ")
    return ScoreDistribution(
        policy=policy, rules=rs, probability=arrays["probability"],
        box_means=filled + ev[:N_BOXES],
        p_upper_bonus=float(ev[N_BOXES]) + (card.upper_sum >= UPPER_TARGET),
        p_penta_fifty=float(ev[N_BOXES + 1]) + card.fifty,
        mean_penta_bonuses=float(ev[N_BOXES + 2]) + card.penta_bonuses,
        elapsed_s=time.perf_counter() - t0, from_cache=from_cache,
        compute_s=float(arrays["compute_s"]), peak_bytes=int(arrays["peak_bytes"]),
        card=card, differ_from_optimal=None if differ is None else float(differ))


__all__ = ["MAX_OUTCOMES", "N_CODES", "N_EVENTS", "PERCENTILES", "ScoreDistribution",
           "cache_key", "distribution_from", "outcome_step", "propagate", "score_distribution",
           "turn_outcomes"]
