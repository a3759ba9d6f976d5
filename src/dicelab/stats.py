"""Estimates with their uncertainty, from integer accumulators.

Kernels accumulate exact integer sums (counts, sums, sums of squares, histograms) so
that merging chunks in any order gives identical numbers; these helpers turn them
into means, standard errors and 95% intervals.
"""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054
#: Exact head-to-head scores within this of one half are reported as a tie.
TIE_TOLERANCE = 1e-9
#: Family-wise error rate of a set of verdicts (Holm's correction): 95% confidence.
ALPHA = 0.05


def exact_verdict(score: float) -> str:
    """``better``, ``worse`` or ``tie`` for an exact score P(win) + P(tie)/2 (a tie: within
    :data:`TIE_TOLERANCE` of one half).

    >>> exact_verdict(0.5 + 1e-12), exact_verdict(0.51)
    ('tie', 'better')
    """
    if abs(score - 0.5) <= TIE_TOLERANCE:
        return "tie"
    return "better" if score > 0.5 else "worse"


def quantile95(df: int | None = None) -> float:
    """The two-sided 95% quantile: normal (``df`` None), else Student's t on ``df``
    degrees of freedom (infinite at 0: no spread can be measured).

    >>> round(quantile95(), 4), round(quantile95(9), 4), quantile95(0)
    (1.96, 2.2622, inf)
    """
    if df is None:
        return Z95
    from scipy.special import stdtrit  # scipy.special: a third of scipy.stats' import time

    return float(stdtrit(df, 0.975)) if df > 0 else math.inf


@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error and 95% interval: normal, or Student's t with
    ``df`` degrees of freedom when the SE comes from few independent units."""

    mean: float
    se: float
    n: int
    df: int | None = None
    #: the range the quantity cannot leave (a rate: (0, 1)); the interval is cut to it
    bounds: tuple[float, float] | None = None

    @property
    def ci95(self) -> tuple[float, float]:
        z = quantile95(self.df)
        lo, hi = self.mean - z * self.se, self.mean + z * self.se
        if self.bounds is not None and not math.isnan(self.se):
            lo, hi = max(lo, self.bounds[0]), min(hi, self.bounds[1])
        return (lo, hi)

    def to_dict(self) -> dict:
        lo, hi = self.ci95
        return {"mean": self.mean, "se": self.se, "ci95": [lo, hi], "n": self.n}


@dataclass(frozen=True)
class Proportion:
    """A count out of ``n`` with its binomial SE and 95% Wilson interval."""

    count: int
    n: int

    @property
    def p(self) -> float:
        return self.count / self.n if self.n > 0 else math.nan

    @property
    def se(self) -> float:
        p = self.p
        return math.sqrt(p * (1 - p) / self.n) if self.n > 0 else math.nan

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.count, self.n)

    def to_dict(self) -> dict:
        return {"p": self.p, "ci95": list(self.ci95), "count": self.count}


def fields(name: str, e: Estimate | Proportion) -> dict[str, Any]:
    """An estimate as the fields of a JSON summary, the same way everywhere: ``name`` (the
    mean or proportion), ``name_se`` and ``name_ci95`` (``[lo, hi]``; a Parquet row has
    ``name_ci95_lo`` and ``name_ci95_hi``, see :func:`dicelab.results.frame_row`).

    >>> sorted(fields("win_rate", Proportion(1, 2)))
    ['win_rate', 'win_rate_ci95', 'win_rate_se']
    """
    value = e.p if isinstance(e, Proportion) else e.mean
    return {name: value, f"{name}_se": e.se, f"{name}_ci95": list(e.ci95)}


def mean_estimate(total: float, total_sq: float, n: int,
                  bounds: tuple[float, float] | None = None) -> Estimate:
    """Sample mean and its standard error from ``sum x``, ``sum x**2`` and ``n``, with a t
    interval on ``n - 1`` degrees of freedom (the SE is estimated from the same ``n``
    values: from two games a normal interval would be six times too narrow) that keeps
    to ``bounds``, the range of the values (turns: at least 1). Values without spread
    measure no error: no SE, as from one value (n games alike do not make the mean
    certain).

    >>> e = mean_estimate(3.0, 5.0, 2)
    >>> e.mean, e.df, [round(x, 2) for x in e.ci95]
    (1.5, 1, [-4.85, 7.85])
    """
    if n <= 0:
        return Estimate(math.nan, math.nan, 0, bounds=bounds)
    mean = total / n
    if n == 1:
        return Estimate(mean, math.nan, 1, bounds=bounds)
    var = max((total_sq - n * mean * mean) / (n - 1), 0.0)
    if not var > 0:  # no spread measures no error (every game the same), as one game
        return Estimate(mean, math.nan, n, bounds=bounds)
    return Estimate(mean, math.sqrt(var / n), n, df=n - 1, bounds=bounds)


def sample_sd(total: float, total_sq: float, n: int) -> float:
    if n <= 1:
        return math.nan
    mean = total / n
    return math.sqrt(max((total_sq - n * mean * mean) / (n - 1), 0.0))


def ratio_estimate(num_sum: float, num_sq: float, den_sum: float, den_sq: float,
                   cross: float, n: int, bounds: tuple[float, float] | None = None) -> Estimate:
    """Ratio of means ``sum y / sum x`` over ``n`` independent units, delta-method SE;
    ``bounds``: the range of the ratio (a rate: ``(0, 1)``), which its interval keeps to.

    Used for per-turn rates estimated from whole games (turns within a game are not
    independent units, games are); a t interval on ``n - 1`` degrees of freedom. As for
    :func:`mean_estimate`: one unit, or units without spread (every game at the same
    ratio), give the ratio with no SE, never a zero-width interval.

    >>> e = ratio_estimate(2.0, 2.0, 12.0, 72.0, 12.0, 2)  # 1 of 6 in each of two games
    >>> e.mean, e.se
    (0.16666666666666666, nan)
    >>> ratio_estimate(3.0, 9.0, 6.0, 36.0, 18.0, 1).mean
    0.5
    """
    if n <= 0 or den_sum == 0:
        return Estimate(math.nan, math.nan, n, bounds=bounds)
    r = num_sum / den_sum
    if n == 1:
        return Estimate(r, math.nan, 1, bounds=bounds)
    xbar = den_sum / n
    # variance of residuals y_i - r x_i, divided by n xbar^2
    resid_sq = num_sq - 2 * r * cross + r * r * den_sq
    var = max(resid_sq / (n - 1), 0.0) / (n * xbar * xbar)
    if not var > 0:  # no spread measures no error (every game at the same ratio)
        return Estimate(r, math.nan, n, bounds=bounds)
    return Estimate(r, math.sqrt(var), n, df=n - 1, bounds=bounds)


def unit_ratio(num: np.ndarray, den: np.ndarray, strata: np.ndarray | None = None,
               bounds: tuple[float, float] | None = None) -> Estimate:
    """sum(num) / sum(den) over the independent units where ``den > 0`` (chunks of games,
    say), with its delta-method SE and a t interval on the units' degrees of freedom
    (``bounds``: the range of the ratio, a rate's ``(0, 1)``, which the interval keeps to).

    ``strata``: the group of each unit. When the groups are fixed by the design (every
    policy of a tournament meets every other), their differences are no uncertainty: the
    residuals are centred within each group (the stratified estimator's variance).

    No spread at all (every unit of a group at the same ratio, as two chunks of games can
    be by chance) measures no error: the SE is NaN, as with one unit a group, not 0 (an
    estimate of zero from a few units is not certainty).

    >>> e = unit_ratio(np.array([3.0, 5.0, 4.0]), np.array([8.0, 8.0, 8.0]))
    >>> e.mean, round(e.se, 4), e.df
    (0.5, 0.0722, 2)
    >>> unit_ratio(np.array([4.0, 4.0]), np.array([8.0, 8.0])).se
    nan
    """
    used = den > 0
    num, den = num[used], den[used]
    groups = np.zeros(num.size, dtype=np.int64) if strata is None else strata[used]
    d = float(den.sum())
    if d == 0:
        return Estimate(math.nan, math.nan, 0, bounds=bounds)
    r = float(num.sum()) / d
    resid = num - r * den
    var = 0.0
    df = 0
    for g in np.unique(groups):
        e = resid[groups == g]
        if e.size > 1:
            var += float(((e - e.mean()) ** 2).sum()) * e.size / (e.size - 1)
            df += e.size - 1
    if df == 0 or not var > 0:
        return Estimate(r, math.nan, int(d), bounds=bounds)
    return Estimate(r, math.sqrt(var) / d, int(d), df=df, bounds=bounds)


def two_sided_p(e: Estimate, null: float = 0.0) -> float:
    """The two-sided p-value of ``e.mean == null``: Student's t on ``e.df`` degrees of
    freedom (normal without); NaN without a standard error (no spread: no test).

    >>> round(two_sided_p(Estimate(0.6, 0.05, 100), 0.5), 4)
    0.0455
    >>> two_sided_p(Estimate(0.6, math.nan, 100), 0.5)
    nan
    """
    if not e.se > 0:
        return math.nan
    from scipy.special import ndtr, stdtr

    z = abs(e.mean - null) / e.se
    return float(2 * (stdtr(e.df, -z) if e.df else ndtr(-z)))


def unit_p(e: Estimate, units: int, null: float = 0.0) -> float:
    """The two-sided p-value of ``e.mean == null`` for an estimate over ``units``
    independent units: :func:`two_sided_p`; where every unit gave the same value, away
    from ``null`` (no spread, so no t), the sign test, which needs no spread: all
    ``units`` on one side, ``2 ** (1 - units)``, from the six units on which it can fall
    below :data:`ALPHA`. NaN otherwise (no test): at ``null`` itself, or from fewer units,
    where the sign test could only call a pair level that won every game.

    >>> unit_p(Estimate(1.0, math.nan, 64), 16, 0.5) == 2.0 ** -15
    True
    >>> unit_p(Estimate(0.5, math.nan, 64), 16, 0.5), unit_p(Estimate(1.0, math.nan, 4), 5, 0.5)
    (nan, nan)
    """
    p = two_sided_p(e, null)
    if (math.isnan(p) and 2.0 ** (1 - units) < ALPHA and e.mean != null
            and not math.isnan(e.mean)):
        from scipy.stats import binomtest

        p = float(binomtest(units, units).pvalue)
    return p


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values (:mod:`statsmodels`), in the same order; a NaN (no test)
    stays NaN and is not one of the tests corrected for.

    >>> [round(p, 2) for p in holm([0.01, 0.04, 0.3])]
    [0.03, 0.08, 0.3]
    >>> holm([0.01, math.nan])
    [0.01, nan]
    """
    out = [math.nan] * len(p_values)
    tested = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    if tested:
        from statsmodels.stats.multitest import multipletests

        # statsmodels' Holm runs a full garbage collection at every call: 0.1-0.2 s in a
        # process that holds compiled kernels. The objects alive now are frozen around it
        # (moved aside and back, without a pass over them), unless something else froze
        # objects already.
        freeze = gc.get_freeze_count() == 0
        if freeze:
            gc.freeze()
        try:
            adjusted = multipletests([p_values[i] for i in tested], alpha=ALPHA,
                                     method="holm")[1]
        finally:
            if freeze:
                gc.unfreeze()
        for i, p in zip(tested, adjusted, strict=True):
            out[i] = float(p)
    return out


def merge_short_tail(per_chunk: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per-chunk sums (first axis: the chunks of a run, of ``sizes`` games) as units for
    an error estimate: a last chunk of less than a quarter of the others is added to the
    one before it (a unit of a few games beside one of thousands would set the spread of
    the whole; two independent chunks together are still one independent unit).

    >>> merge_short_tail(np.array([5.0, 6.0, 1.0]), np.array([10, 10, 2])).tolist()
    [5.0, 7.0]
    """
    if sizes.size < 2 or 4 * sizes[-1] >= sizes[0]:
        return per_chunk
    out = per_chunk[:-1].copy()
    out[-1] += per_chunk[-1]
    return out


def proportion_estimate(successes: float, n: int) -> Estimate:
    """A proportion with its binomial standard error (use :func:`wilson_interval` for the CI)."""
    if n <= 0:
        return Estimate(math.nan, math.nan, 0)
    p = successes / n
    return Estimate(p, math.sqrt(p * (1 - p) / n), n)


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (good near 0 and 1)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return (lo, hi)


def percentiles_from_histogram(hist: np.ndarray, values: np.ndarray,
                               qs=(1, 5, 25, 50, 75, 95, 99)) -> dict[int, float]:
    """Exact percentiles of a discrete sample given as counts ``hist[i]`` of ``values[i]``
    (or of a distribution: float probabilities).

    Uses the lower empirical quantile: the smallest value whose cumulative share is at
    least ``q``% (what ``numpy.percentile(..., method="inverted_cdf")`` gives on the raw
    sample); a share within 1e-9 below ``q``% counts as reaching it.
    """
    hist = np.asarray(hist)
    if not np.issubdtype(hist.dtype, np.floating):
        hist = hist.astype(np.int64)
    total = hist.sum()
    out: dict[int, float] = {}
    if total == 0:
        return {q: math.nan for q in qs}
    cum = np.cumsum(hist)
    for q in qs:
        need = q / 100 * total
        idx = int(np.searchsorted(cum, need - 1e-9 * total, side="left"))
        idx = min(max(idx, 0), len(values) - 1)
        out[q] = float(values[idx])
    return out
