"""Tuning a policy family: search its integer parameters for the member that scores best
against a field of policies (layer 2).

``tune("ai", ["optimal-win"], params=["base", "two-dice", "one-die"], trials=60, seed=1)``
searches with :mod:`optuna`'s CMA-ES sampler (a few correlated integer parameters and a
noise-free objective suit it: it adapts its step sizes and the correlations between the
parameters, and a seed makes it deterministic). The objective is a candidate's mean score
``P(win) + P(tie)/2`` over the field, both seatings:

* **exact** (two-seat Farkle, the default there): :mod:`dicelab.farkle.solve`
  evaluates every candidate exactly, the field's turn outcomes computed once; no noise,
  so no winner's curse: the re-evaluation is the same number;
* **Monte Carlo** (``monte_carlo=True``): ``budget`` games per opponent and seating, every
  candidate on the *same* dice (a stream per turn with one seed: common random numbers
  across candidates, so their differences are not luck); the winner is then re-played on
  fresh seeds, and both numbers are reported, so the winner's curse is visible.

Families and their parameter ranges are data (:data:`FAMILIES`); ``ranges`` narrows or
widens them (``{"base": (200, 600, 50)}``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dicelab.errors import UserError
from dicelab.registry import AI_DEFAULTS, parse_policy
from dicelab.text import parse_int

#: Family -> parameter -> (low, high, step). ``ai``: the app's computer (RULES.md §3);
#: ``threshold``: threshold-T.
FAMILIES: dict[str, dict[str, tuple[int, int, int]]] = {
    "ai": {"base": (100, 1000, 50), "step": (0, 500, 50), "per": (250, 5000, 250),
           "max-steps": (0, 10, 1), "two-dice": (0, 400, 50), "one-die": (0, 500, 50),
           "chase": (0, 1, 1)},
    "threshold": {"threshold": (50, 2000, 50)},
}


def member(family: str, values: dict[str, int]) -> str:
    """The policy name of a family member.

    >>> member("ai", {"base": 350, "one-die": 50}), member("threshold", {"threshold": 400})
    ('ai:base=350,one-die=50', 'threshold-400')
    """
    if family == "threshold":
        return f"threshold-{values['threshold']}"
    return parse_policy("ai:" + ",".join(f"{k}={v}" for k, v in values.items())).name


@dataclass(frozen=True)
class TuneResult:
    """The search's trials and its winner."""

    family: str
    field: list[str]
    params: list[str]
    ranges: dict[str, tuple[int, int, int]]
    method: str  # "exact" or "monte-carlo"
    seed: int
    target: int
    rules: Any
    trials: pd.DataFrame  # one row per trial: parameters, policy, score
    best: str
    best_score: float  # the search's value of the winner
    rechecked_score: float  # re-evaluated (exact: the same; Monte Carlo: fresh seeds)
    rechecked_se: float
    per_opponent: dict[str, float]
    elapsed_s: float
    game: str = "farkle"

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "family": self.family, "field": self.field,
                "params": self.params, "ranges": {k: list(v) for k, v in self.ranges.items()},
                "method": self.method, "seed": self.seed, "target": self.target,
                "rules": self.rules.name, "trials": len(self.trials), "best": self.best,
                "best_score": self.best_score, "rechecked_score": self.rechecked_score,
                "rechecked_se": self.rechecked_se, "per_opponent": self.per_opponent,
                "elapsed_s": self.elapsed_s}

    def to_frame(self) -> pd.DataFrame:
        return self.trials

    def manifest(self) -> dict[str, Any]:
        return {**self.to_dict(), "experiment": "tune", "rules": self.rules.to_dict()}


def _ranges(family: str, params: list[str] | None,
            ranges: dict[str, tuple[int, int, int]] | None) -> dict[str, tuple[int, int, int]]:
    if family not in FAMILIES:
        raise UserError(f"unknown family '{family}' to tune; valid: {', '.join(FAMILIES)}")
    known = FAMILIES[family]
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


def tune(family: str, field: list[str], *, params: list[str] | None = None,
         ranges: dict[str, tuple[int, int, int]] | None = None, trials: int = 60,
         monte_carlo: bool = False, budget: int = 100_000, seed: int | None = None,
         target: int | None = None, rules: str | None = None, ending: str | None = None,
         progress=None) -> TuneResult:
    """Search ``family`` for the member of best mean score against ``field`` (two seats,
    both seatings); see the module docstring.

    >>> r = tune("threshold", ["threshold-300"], trials=12, seed=1, target=1000)
    >>> r.method, r.best_score >= 0.5, r.best_score == r.rechecked_score
    ('exact', True, True)
    """
    import optuna

    from dicelab.farkle.rules import check_target, load_rules
    from dicelab.seeding import check_games, check_seed

    space = _ranges(family, params, ranges)
    if not field:
        raise UserError("tune needs a field to play against: --against POLICY")
    opponents = [parse_policy(p, "farkle") for p in field]
    if not 1 <= trials <= 10_000:
        raise UserError(f"--trials must be 1 to 10,000, not {trials}")
    budget = check_games(budget, "--budget")
    seed = check_seed(seed)
    table = load_rules(rules, ending)
    target = check_target(target)
    score_of = (_monte_carlo(opponents, table, target, budget, seed) if monte_carlo
                else _exact(opponents, table, target, family, space))
    started = time.perf_counter()
    seen: dict[str, float] = {}
    rows: list[dict[str, Any]] = []

    def objective(trial: optuna.Trial) -> float:
        values = {p: trial.suggest_int(p, lo, hi, step=step) for p, (lo, hi, step)
                  in space.items()}
        name = member(family, values)
        if name not in seen:
            seen[name] = float(np.mean(list(score_of(name).values())))
        rows.append({**values, "policy": name, "score": seen[name]})
        if progress is not None:
            progress(len(rows), trials)
        return seen[name]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = (optuna.samplers.CmaEsSampler(seed=seed % 2**32) if len(space) > 1
               else optuna.samplers.TPESampler(seed=seed % 2**32))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(objective, n_trials=trials)
    frame = pd.DataFrame(rows)
    best_row = frame.loc[frame["score"].idxmax()]
    best = str(best_row["policy"])
    if monte_carlo:  # fresh dice for the winner: the search's value is optimistic
        check = _monte_carlo(opponents, table, target, budget, seed ^ 0x5EED, with_se=True)
        per = check(best)
        re_score = float(np.mean([v[0] for v in per.values()]))
        re_se = float(math.sqrt(sum(v[1] ** 2 for v in per.values())) / len(per))
        per_opp = {k: v[0] for k, v in per.items()}
    else:
        per_opp = score_of(best)
        re_score, re_se = float(np.mean(list(per_opp.values()))), 0.0
    return TuneResult(family, [o.name for o in opponents], list(space), space,
                      "monte-carlo" if monte_carlo else "exact", seed, target, table, frame,
                      best, float(best_row["score"]), re_score, re_se, per_opp,
                      time.perf_counter() - started)


def _exact(opponents, rules, target, family, space):
    """Mean exact score against each opponent, the opponents' sides built once."""
    from dicelab.farkle import fixed, solve
    from dicelab.farkle.exact import resolve

    resolved = [resolve(o, rules, target) for o in opponents]
    widest = {p: hi for p, (_lo, hi, _s) in space.items()}
    probe = resolve(member(family, {**_defaults(family), **widest}), rules, target)
    d_max = fixed.lead_rows([*resolved, probe], rules, target)
    sides = [fixed.side_of(o, rules, target, d_max) for o in resolved]

    def score(name: str) -> dict[str, float]:
        mine = fixed.side_of(resolve(name, rules, target), rules, target, d_max)
        out = {}
        for o, side in zip(opponents, sides, strict=True):
            first, second = solve.outcomes_of(solve.play_sides(mine, side, rules, target))
            out[o.name] = 0.5 * (first.score + second.score)
        return out

    return score


def _defaults(family: str) -> dict[str, int]:
    return dict(AI_DEFAULTS) if family == "ai" else {"threshold": 300}


def _monte_carlo(opponents, rules, target, budget, seed, with_se: bool = False):
    """Mean score over both seatings against each opponent, ``budget`` games each, every
    candidate on the same dice (a stream per turn, one seed per opponent)."""
    from dicelab.farkle import kernels as K
    from dicelab.farkle.simulate import simulate_farkle
    from dicelab.tournament import _group_seed

    def score(name: str) -> dict[str, Any]:
        me = parse_policy(name, "farkle")
        out = {}
        for i, o in enumerate(opponents):
            s = _group_seed(seed, 2000 + i)
            ab = simulate_farkle([me, o], games=budget, seed=s, target=target, rules=rules,
                                 streams=K.STREAM_PER_TURN)
            ba = simulate_farkle([o, me], games=budget, seed=s, target=target, rules=rules,
                                 streams=K.STREAM_PER_TURN)
            mean = (ab.stats[0, K.ST_WINS] + ab.stats[0, K.ST_TIES] / 2
                    + ba.stats[1, K.ST_WINS] + ba.stats[1, K.ST_TIES] / 2) / (2 * budget)
            se = 0.5 / math.sqrt(2 * budget)  # at most: the dice are shared, not luck-free
            out[o.name] = (float(mean), se) if with_se else float(mean)
        return out

    return score
