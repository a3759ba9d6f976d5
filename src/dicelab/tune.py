"""Tuning a policy family: find the member of its integer parameters that scores best
against a field of policies (layer 2).

``tune("ai", ["optimal-win"], params=["base", "two-dice", "one-die"], trials=60, seed=1)``.
A member's score is its mean ``P(win) + P(tie)/2`` over the field, both seatings:

* **exact** (two-seat Farkle, the default): :mod:`dicelab.farkle.solve` evaluates every
  candidate exactly, the field's turn outcomes computed once; no noise, so no winner's
  curse: the re-evaluation is the same number;
* **Monte Carlo** (``monte_carlo=True``): ``budget`` games per opponent and seating, every
  candidate on the *same* dice (a stream per turn with one seed: common random numbers
  across candidates, so their differences are not luck); each candidate's score carries
  its standard error, from the independent chunks of games (each chunk pairs the two
  seatings' games on the same dice; 8,192 games a chunk, or a budget of fewer than 16
  such chunks in 16 smaller ones: :func:`dicelab.seeding.unit_chunk_games`). The winner
  is re-played on fresh seeds, and both numbers are reported, so the winner's curse is
  visible. The best is the highest score; the members it cannot be told apart from are
  listed as tied with it: each member's difference from the best, chunk by chunk on the
  same dice (paired), is tested against zero, with Holm's correction over the members
  compared (:func:`dicelab.stats.holm`, family-wise :data:`dicelab.stats.ALPHA`). The
  field's score and these differences are measured over the field's units (each chunk's
  games against every opponent together), so an opponent beaten in every game leaves
  them measurable; a difference the same in every unit (no spread) is judged by the sign
  test, and no difference at all (members that play alike) is a tie. A budget of one
  chunk (under 20 games: one chunk of 16 and a short one) gives no standard error: then
  no member is measured better than another, and all are reported tied.

How the space is covered:

* a space of at most ``max(trials, config.TUNE_ENUMERATE_MEMBERS)`` members is
  **enumerated**: every member is evaluated, so the exact winner is the proven best of
  the family (members tied with it are listed);
* a larger space is **searched** with :mod:`optuna`'s CMA-ES sampler (a few correlated
  integer parameters and a noise-free objective suit it: it adapts its step sizes and the
  correlations between the parameters, and a seed makes it deterministic; TPE for a
  single parameter) for ``trials`` trials. The result says how many members it evaluated
  out of how many, and its best is the best found, not proven best.

A family's parameters and their ranges are its family's
(:meth:`dicelab.families.Family.space`: ``ai``'s and ``threshold``'s are data in
:mod:`dicelab.farkle.builtin`; a user's policy's are its ``space``: :func:`family_space`).
``ranges`` narrows them (``{"base": (200, 600, 50)}``).

**Penta.** A user's Penta policy with number parameters and a ``space``
(``FILE.py:NAME``, :func:`dicelab.penta.policy.penta_policy`) is tuned the same way, by
Monte Carlo (``monte_carlo=True``: its members decide move by move, so there is no exact
evaluation): a member's score is its ``P(win) + P(tie)/2`` against each policy of the
field in two-seat games (the seats of a Penta game are alike: one seating), every
candidate on the same dice.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dicelab import config, user_policy
from dicelab.errors import UserError
from dicelab.farkle.builtin import family_named
from dicelab.penta import builtin as penta_builtin
from dicelab.registry import check_distinct, parse_policy
from dicelab.seeding import chunk_bounds, group_seed, unit_chunk_games
from dicelab.stats import (
    ALPHA,
    TIE_TOLERANCE,
    Estimate,
    holm,
    merge_short_tail,
    unit_p,
    unit_ratio,
)
from dicelab.text import counted, parse_int


def member(family: str, values: dict[str, int]) -> str:
    """The policy name of a family member (a user's family: ``FILE.py:NAME`` with the
    parameters after it).

    >>> member("ai", {"base": 350, "one-die": 50}), member("threshold", {"threshold": 400})
    ('ai:base=350,one-die=50', 'threshold-400')
    """
    return _family(family)[0].member(family, values)


def family_space(family: str) -> dict[str, tuple[int, int, int]]:
    """A family's parameters and their ranges (low, high, step): a built-in family's,
    or a user's policy's ``space`` (its values as ranges, or ``(low, high, step)``)."""
    fam, start = _family(family)
    return fam.space(start)


def _family(ref: str):
    """The family ``ref`` names and the member it starts from: a Farkle family
    (:func:`dicelab.farkle.builtin.family_named`) or a user's Penta policy with a space."""
    if not isinstance(ref, str):  # a family has a name: a policy object has none to tune
        raise UserError(f"tune takes the name of a family (e.g. 'threshold', 'ai', or "
                        f"FILE.py:NAME), not a {type(ref).__name__} object")
    if user_policy.looks_like_reference(ref):
        spec = parse_policy(ref)
        if spec.game == "penta":
            fam = penta_builtin.family_of(spec)
            if not fam.space(spec):
                raise UserError(f"policy '{ref}' has no parameter space to tune: give it "
                                "number parameters and a space, e.g. keep_high.space = "
                                "{'high': range(3, 7)}")
            return fam, spec
    return family_named(ref)


#: How the space was covered: every member, or a search by optuna's sampler.
ENUMERATED, CMA_ES, TPE = "enumerated", "cma-es", "tpe"


@dataclass(frozen=True)
class TuneResult:
    """The candidates evaluated and the winner.

    ``candidates``: one row per distinct member evaluated, in the order evaluated
    (parameters, ``policy``, ``score``, ``score_se``: 0 when exact); ``members``: the
    size of the space; ``search``: :data:`ENUMERATED`, :data:`CMA_ES` or :data:`TPE`
    (``trials``: the search's trials, None when enumerated); ``best_score``,
    ``best_score_se``: the winner's score in the search; ``rechecked_score``,
    ``rechecked_score_se``: re-evaluated (exact: the same; Monte Carlo: on fresh dice);
    ``per_opponent``: the winner's re-evaluated score against each policy of the field,
    with its SE; ``kernels``: the game kernels that played (Monte Carlo; none when
    exact); ``tied_members``: other members whose score equals the best's (exact:
    within :data:`dicelab.stats.TIE_TOLERANCE`); Monte Carlo: the members the games cannot
    tell apart from the best (Holm-corrected paired tests at family-wise
    :data:`dicelab.stats.ALPHA`; ``candidates`` has each one's ``diff_se``, ``p_value``,
    ``p_holm`` and ``vs_best``),
    every other member when the scores have no standard error (:attr:`measured`). When
    every other member is tied (:attr:`all_tied`), ``best`` is only the highest score,
    not a best the games support.
    """

    family: str
    field: list[str]
    params: list[str]
    ranges: dict[str, tuple[int, int, int]]
    method: str  # "exact" or "monte-carlo"
    seed: int | None  # None: exact, every member evaluated (nothing drawn)
    target: int | None  # Penta: None
    rules: Any
    candidates: pd.DataFrame
    members: int
    search: str
    trials: int | None
    best: str
    best_score: float
    best_score_se: float
    rechecked_score: float
    rechecked_score_se: float
    per_opponent: dict[str, Estimate]
    tied_members: list[str]
    elapsed_s: float
    game: str = "farkle"
    budget: int | None = None  # Monte Carlo: games per opponent and seating
    chunk_games: int | None = None  # ... in chunks of this many (seeding.unit_chunk_games)
    #: Monte Carlo: the game kernels that played its games (the manifest's ``kernel``);
    #: exact: none
    kernels: tuple[str, ...] = ()

    @property
    def units(self) -> int | None:
        """Monte Carlo: the units of each score's standard error per opponent (its chunks
        of games, a short last one joined to the one before)."""
        if self.budget is None:
            return None
        sizes = np.diff(chunk_bounds(self.budget, chunk_games=self.chunk_games))
        return len(merge_short_tail(sizes, sizes))

    @property
    def evaluated(self) -> int:
        """Distinct members evaluated."""
        return len(self.candidates)

    @property
    def measured(self) -> bool:
        """Whether the members can be told apart: exact, or Monte Carlo over two units of
        games or more (a budget of 20 games or more). From one unit (one chunk of games
        per seating) no member is better than another. A score without spread (every
        unit alike: the field beaten in every game) has no standard error of its own,
        but a member's paired difference from it is still tested."""
        return self.method == "exact" or (self.units or 0) > 1

    @property
    def all_tied(self) -> bool:
        """Monte Carlo: whether every other member evaluated is tied with the best (none
        is measured worse), so the games name no best."""
        return (self.method != "exact" and self.evaluated > 1
                and len(self.tied_members) == self.evaluated - 1)

    @property
    def proven_best(self) -> bool:
        """Whether the winner is the best member of the space: every member evaluated,
        exactly."""
        return self.search == ENUMERATED and self.method == "exact"

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "family": self.family, "field": self.field,
                "params": self.params, "ranges": {k: list(v) for k, v in self.ranges.items()},
                "method": self.method, "budget": self.budget,
                "chunk_games": self.chunk_games, "seed": self.seed, "target": self.target,
                "rules": self.rules.name, "ending": getattr(self.rules, "ending", None),
                "search": self.search, "members": self.members,
                "evaluated": self.evaluated, "trials": self.trials,
                "proven_best": self.proven_best, "best": self.best,
                "best_score": self.best_score, "best_score_se": self.best_score_se,
                "tied_members": self.tied_members, "all_tied": self.all_tied,
                "alpha": ALPHA if self.method != "exact" else None,
                "rechecked_score": self.rechecked_score,
                "rechecked_score_se": self.rechecked_score_se,
                "per_opponent": {k: {"score": e.mean, "score_se": e.se}
                                 for k, e in self.per_opponent.items()},
                "candidates": [{"params": {k: row.pop(k) for k in self.params}, **row}
                               for row in self.candidates.to_dict(orient="records")],
                "elapsed_s": self.elapsed_s}

    def to_frame(self) -> pd.DataFrame:
        return self.candidates

    def manifest(self) -> dict[str, Any]:
        return {**self.to_dict(), "experiment": "tune", "rules": self.rules.to_dict()}


def space_size(space: dict[str, tuple[int, int, int]]) -> int:
    """Members of a space of parameter ranges (low, high, step).

    >>> space_size({"base": (100, 1000, 50), "chase": (0, 1, 1)})
    38
    """
    return math.prod((hi - lo) // step + 1 for lo, hi, step in space.values())


def _ranges(family: str, params: list[str] | None,
            ranges: dict[str, tuple[int, int, int]] | None) -> dict[str, tuple[int, int, int]]:
    known = family_space(family)
    chosen = params if params else list(known)
    for p in chosen:
        if p not in known:
            raise UserError(f"{family} has no parameter '{p}'; its parameters: "
                            f"{', '.join(known)}")
    if len(set(chosen)) != len(chosen):
        raise UserError(f"a parameter is named twice: {', '.join(chosen)}")
    out = {p: known[p] for p in chosen}
    for p, (lo, hi, step) in (ranges or {}).items():
        if p not in out:
            raise UserError(f"--range {p}: not a tuned parameter ({', '.join(out)})")
        if step <= 0 or hi < lo or (hi - lo) % step:
            raise UserError(f"--range {p}={lo}:{hi}:{step}: want low:high:step with step > 0 "
                            "and high - low a multiple of step")
        lo0, hi0, step0 = known[p]
        if lo < lo0 or hi > hi0 or step % step0:
            raise UserError(f"--range {p}: within {lo0}..{hi0} in steps of a multiple of "
                            f"{step0}")
        out[p] = (lo, hi, step)
    return out


def parse_range(text: str) -> tuple[str, tuple[int, int, int]]:
    """``base=200:600:50`` -> ``("base", (200, 600, 50))``."""
    name, sep, spec = text.partition("=")
    parts = spec.split(":")
    try:
        lo, hi, step = (parse_int(x.strip()) for x in parts) if len(parts) == 3 \
            else (None, None, None)
    except ValueError:
        lo = None
    if not sep or lo is None:
        raise UserError(f"--range '{text}': write NAME=LOW:HIGH:STEP, e.g. base=200:600:50")
    return name.strip(), (lo, hi, step)


def parse_ranges(texts: list[str]) -> dict[str, tuple[int, int, int]]:
    """Several ``--range`` options, each parameter at most once."""
    out: dict[str, tuple[int, int, int]] = {}
    for text in texts:
        name, rng = parse_range(text)
        if name in out:
            raise UserError(f"--range {name}: given twice ({name}={':'.join(map(str, out[name]))}"
                            f" and {text.strip()}); give each parameter one range")
        out[name] = rng
    return out


#: Games per opponent and seating of a Monte Carlo tune without a ``budget``.
DEFAULT_BUDGET = 100_000
#: Trials of the search of a large space (``--trials``).
DEFAULT_TRIALS = 60


def tune(family: str, field: list[str], *, params: list[str] | None = None,
         ranges: dict[str, tuple[int, int, int]] | None = None, trials: int | None = None,
         monte_carlo: bool = False, budget: int | None = None, seed: int | None = None,
         target: int | None = None, rules: str | None = None, ending: str | None = None,
         progress=None) -> TuneResult:
    """Find the member of ``family`` of best mean score against ``field`` (two seats,
    both seatings): every member of a small space, else ``trials`` trials of a search
    (None: :data:`DEFAULT_TRIALS`); see the module docstring. ``trials`` given where the
    space is evaluated whole whatever it says (at most
    :data:`~dicelab.config.TUNE_ENUMERATE_MEMBERS` members), and ``seed`` given to an exact
    evaluation of every member (which draws nothing: the result's seed is then None), are
    refused.

    >>> r = tune("threshold", ["threshold-300"], target=1000)
    >>> r.search, r.evaluated, r.members, r.proven_best, r.best_score >= 0.5
    ('enumerated', 40, 40, True, True)
    """
    from dicelab.farkle.rules import check_target, load_rules
    from dicelab.seeding import check_games, check_seed

    fam, start = _family(family)
    space = _ranges(family, params, ranges)
    if not field:
        raise UserError("tune needs a field to play against: --against POLICY")
    opponents = [parse_policy(p, fam.game) for p in field]
    check_distinct(field, opponents, "--against: ")  # (a score is kept by its name)
    if trials is not None and not 1 <= trials <= 10_000:
        raise UserError(f"--trials must be 1 to 10,000, not {trials}")
    members = space_size(space)
    if trials is not None and members <= config.TUNE_ENUMERATE_MEMBERS:
        raise UserError(f"--trials is for the search of a space of more than "
                        f"{config.TUNE_ENUMERATE_MEMBERS} members; this one has "
                        f"{counted(members, 'member')}, every one evaluated: leave out "
                        "--trials")
    trials = DEFAULT_TRIALS if trials is None else trials
    enumerate_all = members <= max(trials, config.TUNE_ENUMERATE_MEMBERS)
    if budget is not None and not monte_carlo and fam.game == "farkle":  # Penta: below
        raise UserError("--budget applies to --monte-carlo only: the exact evaluation plays "
                        "no games")
    budget = check_games(DEFAULT_BUDGET if budget is None else budget, "--budget")
    kernels: list[str] = []  # of the games played (Monte Carlo), in order
    if fam.game == "penta":
        from dicelab.penta.rules import get_rules, refuse_farkle_options

        refuse_farkle_options(("--target", target), ("--ending", ending))
        if not monte_carlo:
            raise UserError(f"{family} decides move by move: a Penta family is tuned by "
                            "simulation; add --monte-carlo (and a --budget of games)")
        table = get_rules(rules)
        mc = _monte_carlo_penta(opponents, table, budget, kernels)
    else:
        table = load_rules(rules, ending)
        target = check_target(target)
        mc = _monte_carlo(opponents, table, target, budget, kernels)
    drawn = monte_carlo or not enumerate_all  # dice, or a search's samples
    if seed is not None and not drawn:
        raise UserError(f"--seed is for --monte-carlo and the search of a large space; the "
                        f"exact evaluation of every member ({counted(members, 'member')}) "
                        "draws nothing: leave out --seed")
    seed = check_seed(seed) if drawn else None
    started = time.perf_counter()
    score_of = (mc(seed) if monte_carlo
                else _exact(opponents, table, target,
                            fam.member(family, {**start.params, **_widest(space)})))
    rows: list[dict[str, Any]] = []
    seen: dict[str, float] = {}
    units: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}  # Monte Carlo
    calls = [0]

    def evaluate(values: dict[str, int], total: int) -> float:
        name = fam.member(family, values)
        if name not in seen:
            per = score_of(name)
            if monte_carlo:
                units[name] = per
            e = unit_ratio(*_pooled(per)) if monte_carlo else _field_mean(per)
            seen[name] = e.mean
            rows.append({**values, "policy": name, "score": e.mean, "score_se": e.se})
        calls[0] += 1
        if progress is not None:
            progress(calls[0], total)
        return seen[name]

    if enumerate_all:
        search, n_trials = ENUMERATED, None
        axes = [range(lo, hi + 1, step) for lo, hi, step in space.values()]
        for combo in itertools.product(*axes):
            evaluate(dict(zip(space, combo, strict=True)), members)
    else:
        search, n_trials = (CMA_ES if len(space) > 1 else TPE), trials
        _search(space, trials, seed, search, evaluate)
    frame = pd.DataFrame(rows)
    best_row = frame.loc[frame["score"].idxmax()]
    best = str(best_row["policy"])
    if monte_carlo:
        frame, ties = _ties_by_test(frame, units, best)
    else:
        ties = [str(p) for p, v in zip(frame["policy"], frame["score"], strict=True)
                if p != best and abs(v - best_row["score"]) <= TIE_TOLERANCE]
    # Monte Carlo: fresh dice for the winner (the search's value is optimistic)
    if monte_carlo:
        fresh = mc(seed ^ 0x5EED)(best)
        per_opp, recheck = _estimates(fresh), unit_ratio(*_pooled(fresh))
    else:
        per_opp = score_of(best)
        recheck = _field_mean(per_opp)
    return TuneResult(family, [o.name for o in opponents], list(space), space,
                      "monte-carlo" if monte_carlo else "exact", seed, target, table, frame,
                      members, search, n_trials, best, float(best_row["score"]),
                      float(best_row["score_se"]), recheck.mean, recheck.se, per_opp, ties,
                      time.perf_counter() - started, fam.game,
                      *((budget, unit_chunk_games(budget)) if monte_carlo else (None, None)),
                      tuple(dict.fromkeys(kernels)))


def _search(space: dict[str, tuple[int, int, int]], trials: int, seed: int, sampler: str,
            evaluate: Callable[[dict[str, int], int], float]) -> None:
    """``trials`` trials of optuna's ``sampler`` (:data:`CMA_ES` or :data:`TPE`),
    maximizing ``evaluate``."""
    import optuna

    def objective(trial: optuna.Trial) -> float:
        return evaluate({p: trial.suggest_int(p, lo, hi, step=step)
                         for p, (lo, hi, step) in space.items()}, trials)

    # ERROR: a trial stopped by Ctrl-C (or any error, which propagates) is not also logged
    # by optuna as a failed trial, with its traceback: the command says it in one line
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    chosen = (optuna.samplers.CmaEsSampler(seed=seed % 2**32) if sampler == CMA_ES
              else optuna.samplers.TPESampler(seed=seed % 2**32))
    study = optuna.create_study(direction="maximize", sampler=chosen)
    study.optimize(objective, n_trials=trials)


def _estimates(units: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, Estimate]:
    """A Monte Carlo score against each opponent from its units (numerator, games)."""
    return {o: unit_ratio(num, den) for o, (num, den) in units.items()}


def _pooled(units: dict[str, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The field's units: each chunk's numerator and games summed over the opponents.
    Every opponent is played in the same chunks, on its own dice, so the field's score
    (the mean of the opponents' scores: they play equal games) is one ratio over these
    units, and their spread measures its error even where one opponent's chunks all
    score alike (a policy beaten in every game)."""
    nums, dens = zip(*units.values(), strict=True)
    return np.sum(nums, axis=0), np.sum(dens, axis=0)


def _ties_by_test(frame: pd.DataFrame, units: dict, best: str) -> tuple[pd.DataFrame, list]:
    """The candidates with each one's difference from ``best`` (``diff_se``: its SE, from
    the field's units both played on the same dice, paired: :func:`_pooled`;
    ``p_value``: the two-sided p-value of no difference (:func:`dicelab.stats.unit_p`:
    the sign test where every unit differs alike), ``p_holm``
    Holm-corrected over the candidates compared; NaN for no test; ``vs_best``: ``best``
    (``highest`` when every other member ties with it), ``tie`` or ``worse``), and the
    members tied with ``best``: Holm does not reject no
    difference at :data:`ALPHA`, or there is no test."""
    num_best, den = _pooled(units[best])
    diffs = {name: unit_ratio(num_best - _pooled(units[name])[0], den)
             for name in frame["policy"] if name != best}
    names = list(diffs)
    raw = {n: unit_p(diffs[n], den.size) for n in names}
    adjusted = dict(zip(names, holm(list(raw.values())), strict=True))
    frame = frame.assign(
        diff_se=[diffs[n].se if n in diffs else math.nan for n in frame["policy"]],
        p_value=[raw.get(n, math.nan) for n in frame["policy"]],
        p_holm=[adjusted.get(n, math.nan) for n in frame["policy"]])
    ties = [n for n in names if not adjusted[n] < ALPHA]
    # when every other member ties with it, the highest score is not a best
    top = "highest" if names and len(ties) == len(names) else "best"
    frame["vs_best"] = [top if n == best else "tie" if n in ties else "worse"
                        for n in frame["policy"]]
    return frame, ties


def _field_mean(per: dict[str, Estimate]) -> Estimate:
    """The mean score over the field (the opponents' runs are independent)."""
    k = len(per)
    mean = float(np.mean([e.mean for e in per.values()]))
    se = math.sqrt(sum(e.se ** 2 for e in per.values())) / k
    dfs = [e.df for e in per.values() if e.df is not None]
    return Estimate(mean, se, sum(e.n for e in per.values()), df=min(dfs) if dfs else None)


def _widest(space: dict[str, tuple[int, int, int]]) -> dict[str, int]:
    """Each parameter at the top of its range (the member whose turns run longest)."""
    return {p: hi for p, (_lo, hi, _s) in space.items()}


def _exact(opponents, rules, target, widest: str):
    """Exact score against each opponent (SE 0), the opponents' sides built once, over
    the last-round leads the ``widest`` member needs."""
    from dicelab.farkle import fixed, solve
    from dicelab.farkle.exact import resolve

    resolved = [resolve(o, rules, target) for o in opponents]
    probe = resolve(widest, rules, target)
    d_max = fixed.lead_rows([*resolved, probe], rules, target)
    sides = [fixed.side_of(o, rules, target, d_max) for o in resolved]

    def score(name: str) -> dict[str, Estimate]:
        mine = fixed.side_of(resolve(name, rules, target), rules, target, d_max)
        out = {}
        for o, side in zip(opponents, sides, strict=True):
            first, second, _ = solve.pair_outcomes(mine, side, rules, target)
            out[o.name] = Estimate(0.5 * (first.score + second.score), 0.0, 0)
        return out

    return score


def _monte_carlo(opponents, rules, target, budget, kernels: list[str]):
    """For a seed, the score of a Farkle member as units: over both seatings against
    each opponent, ``budget`` games each, every candidate on the same dice (a stream per
    turn, one seed per opponent), per chunk of games its numerator and games (a chunk of
    one seating and the same chunk of the other share their dice: they are one unit;
    :func:`_estimates` makes them scores with SEs). The kernel of each simulation is
    added to ``kernels``."""
    from dicelab.farkle import kernels as K
    from dicelab.farkle.simulate import simulate_farkle

    chunk = unit_chunk_games(budget)
    games = np.diff(chunk_bounds(budget, chunk_games=chunk)).astype(float)

    def at(seed: int) -> Callable[[str], dict[str, tuple[np.ndarray, np.ndarray]]]:
        def score(name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
            me = parse_policy(name, "farkle")
            out = {}
            for i, o in enumerate(opponents):
                s = group_seed(seed, 2000 + i)
                runs = [simulate_farkle(seats, games=budget, seed=s, target=target,
                                        rules=rules, streams=K.STREAM_PER_TURN,
                                        per_chunk=True, chunk_games=chunk)
                        for seats in ([me, o], [o, me])]
                kernels.extend(r.kernel for r in runs)
                ab, ba = (r.chunk_stats for r in runs)
                num = (ab[:, 0, K.ST_WINS] + 0.5 * ab[:, 0, K.ST_TIES]
                       + ba[:, 1, K.ST_WINS] + 0.5 * ba[:, 1, K.ST_TIES])
                out[o.name] = (merge_short_tail(num.astype(float), games),
                               merge_short_tail(2 * games, games))
            return out

        return score

    return at


def _monte_carlo_penta(opponents, rules, budget, kernels: list[str]):
    """For a seed, the score of a Penta member against each opponent: ``budget``
    two-seat games each (the seats of a Penta game are alike), every candidate on the
    same dice (a stream per turn, one seed per opponent), as units: per chunk of games
    its numerator and games. The kernel of each simulation is added to ``kernels``."""
    from dicelab.penta.simulate import simulate_penta
    from dicelab.rng import STREAM_PER_TURN

    chunk = unit_chunk_games(budget)
    games = np.diff(chunk_bounds(budget, chunk_games=chunk)).astype(float)

    def at(seed: int) -> Callable[[str], dict[str, tuple[np.ndarray, np.ndarray]]]:
        def score(name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
            me = parse_policy(name, "penta")
            out = {}
            for i, o in enumerate(opponents):
                run = simulate_penta([me, o], games=budget, seed=group_seed(seed, 2000 + i),
                                     rules=rules.name, streams=STREAM_PER_TURN,
                                     per_chunk=True, chunk_games=chunk)
                kernels.append(run.kernel)
                t = run.chunk_tallies
                num = t["wins"][:, 0] + 0.5 * t["tied"][:, 0]
                out[o.name] = (merge_short_tail(num.astype(float), games),
                               merge_short_tail(games, games))
            return out

        return score

    return at
