"""Matplotlib figures (Agg backend, no pyplot state): policy pictures, bust risks,
tournament matrices and ratings, score distributions.

Every function returns a :class:`matplotlib.figure.Figure` built without ``pyplot``,
so nothing leaks between calls; :func:`save_png` writes one (temporary file and rename).
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from dicelab.files import write_output

ROLL_COLOR = "#4c72b0"
BANK_COLOR = "#f2b447"


def policy_heatmap_figure(bank: np.ndarray, *, title: str, point_unit: int = 50,
                          max_points: int | None = None) -> Figure:
    """Bank/roll decisions of a Farkle turn policy: turn points (y) by dice left (x).

    ``bank``: (P, 7) array, nonzero = bank at turn points ``p * point_unit`` with ``n``
    dice to roll (column 0 and row 0, the start of the turn, are not drawn; rows past
    the last are like the last). Row ``p`` is drawn from ``p * point_unit`` to the next
    step, so a policy that banks from 300 switches colour at 300. ``max_points``: top of
    the y axis; by default twice the fourth-smallest of the per-dice bank thresholds
    (where the decisions that matter are), at least 1,000; a column that still rolls at
    the top says from where it banks.

    >>> import numpy as np
    >>> b = np.zeros((8, 7), np.uint8); b[6:] = 1
    >>> policy_heatmap_figure(b, title="threshold-300").axes[0].get_xlabel()
    'dice left to roll'
    """
    fig = Figure(figsize=(5.5, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    _draw_banks(fig.add_subplot(), bank, title, point_unit, max_points)
    return fig


def banks_side_by_side_figure(banks: list[np.ndarray], titles: list[str], *,
                              point_unit: int = 50) -> Figure:
    """Several policies' bank/roll decisions in one turn state, side by side on one
    turn-points scale (each panel as :func:`policy_heatmap_figure` draws it)."""
    top = max(_top_row(np.asarray(b), point_unit) for b in banks)
    fig = Figure(figsize=(4.2 * len(banks), 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    for i, (bank, title) in enumerate(zip(banks, titles, strict=True)):
        _draw_banks(fig.add_subplot(1, len(banks), i + 1), bank, title, point_unit,
                    top * point_unit)
    return fig


def _first_banks(bank: np.ndarray) -> list[int | None]:
    return [int(np.argmax(bank[1:, n] != 0)) + 1 if (bank[1:, n] != 0).any() else None
            for n in range(1, 7)]


def _top_row(bank: np.ndarray, point_unit: int) -> int:
    known = sorted(f for f in _first_banks(bank) if f is not None) or [bank.shape[0]]
    return max(2 * known[min(3, len(known) - 1)], 1000 // point_unit)


def _draw_banks(ax, bank, title: str, point_unit: int, max_points: int | None) -> None:
    bank = np.asarray(bank)
    if bank.ndim != 2 or bank.shape[1] != 7 or bank.shape[0] < 2:
        raise ValueError("bank must have shape (P, 7), P >= 2")
    first = _first_banks(bank)
    top = _top_row(bank, point_unit) if max_points is None \
        else max(int(max_points) // point_unit, 2)
    rows = np.minimum(np.arange(1, top + 1), bank.shape[0] - 1)
    grid = (bank[rows, 1:] != 0).astype(float)
    ax.imshow(grid, origin="lower", aspect="auto", interpolation="nearest",
              cmap=ListedColormap([ROLL_COLOR, BANK_COLOR]), vmin=0, vmax=1,
              extent=(0.5, 6.5, point_unit, (top + 1) * point_unit))
    for n, f in enumerate(first, start=1):
        if f is None or f > top:
            where = "never banks" if f is None else f"banks from\n{f * point_unit:,}"
            ax.text(n, (top + 0.5) * point_unit, where, ha="center", va="top", fontsize=7,
                    color="white")
    ax.set_xticks(range(1, 7))
    ax.set_xlabel("dice left to roll")
    ax.set_ylabel("turn points")
    # a policy's or an ending rule's name stays whole (optimal-win, first-to-bank)
    ax.set_title("\n".join(textwrap.wrap(title, 48, break_on_hyphens=False)), fontsize=10)
    ax.legend(handles=[Patch(color=ROLL_COLOR, label="roll"),
                       Patch(color=BANK_COLOR, label="bank")],
              loc="upper left", framealpha=0.9)


def bust_risk_figure(exact: dict[int, float], simulated: dict | None = None) -> Figure:
    """Bar chart of the probability of busting by dice rolled.

    ``exact``: {n: probability}; ``simulated``: optional {n: value}, where a value is a
    probability, a ``(p, lo, hi)`` triple (95% interval) or an object with ``mean`` and
    ``ci95`` (:class:`dicelab.stats.Estimate`); drawn as points with error bars.

    >>> from dicelab.farkle.rules import PRESETS, bust_probabilities
    >>> len(bust_risk_figure(bust_probabilities(PRESETS["default"])).axes)
    1
    """
    ns = sorted(exact)
    fig = Figure(figsize=(6, 4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    heights = [100 * exact[n] for n in ns]
    bars = ax.bar(ns, heights, color=ROLL_COLOR, label="exact")
    ax.bar_label(bars, labels=[f"{h:.2f}%" for h in heights], padding=2, fontsize=8)
    if simulated:
        xs, ys, lo, hi = [], [], [], []
        for n in sorted(simulated):
            v = simulated[n]
            if hasattr(v, "mean") and hasattr(v, "ci95"):
                p, (a, b) = v.mean, v.ci95
            elif isinstance(v, tuple | list):
                p, a, b = v
            else:
                p = a = b = float(v)
            xs.append(n)
            ys.append(100 * p)
            lo.append(100 * (p - a))
            hi.append(100 * (b - p))
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", color="black", capsize=3,
                    label="simulated (95% CI)")
    ax.set_xticks(ns)
    ax.set_xlabel("dice rolled")
    ax.set_ylabel("probability of busting (%)")
    ax.set_ylim(0, max(heights) * 1.15 if heights else 1)
    ax.legend()
    return fig


def _label_inches(labels: list[str]) -> float:
    """About the inches the longest of these tick labels takes at the figures' font."""
    return 0.08 * max(len(x) for x in labels)


def win_matrix_figure(policies: list[str], score: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                      *, title: str) -> Figure:
    """Heat map of a tournament's pairwise scores: cell (i, j) is policy i's share of
    finishing ahead of policy j (level finishes half), with its 95% interval written in
    the cell (``[n/a]`` without one, as in the printed table); NaN where the two never met.

    >>> import numpy as np
    >>> s = np.array([[np.nan, 0.6], [0.4, np.nan]])
    >>> win_matrix_figure(["a", "b"], s, s - 0.01, s + 0.01, title="t").axes[0].get_title()
    't'
    """
    k = len(policies)
    names = _label_inches(policies)
    fig = Figure(figsize=(1.4 * k + 2.5 + names, 1.1 * k + 2 + names / 2),
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    im = ax.imshow(score, cmap="RdBu", vmin=0, vmax=1)
    for i in range(k):
        for j in range(k):
            if np.isnan(score[i, j]):
                continue
            dark = abs(score[i, j] - 0.5) > 0.3
            ci = ("[n/a]" if np.isnan(lo[i, j]) or np.isnan(hi[i, j])  # as the table says
                  else f"[{lo[i, j]:.3f}, {hi[i, j]:.3f}]")
            ax.text(j, i, f"{score[i, j]:.3f}\n{ci}", ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")
    ax.set_xticks(range(k), policies, rotation=30, ha="right")
    ax.set_yticks(range(k), policies)
    ax.set_xlabel("opponent")
    ax.set_title("\n".join(textwrap.wrap(title, 60)), fontsize=10)
    fig.colorbar(im, ax=ax, label="score of the row's policy (95% interval)")
    return fig


def ratings_figure(policies: list[str], rating: np.ndarray, ci: np.ndarray, *, title: str
                   ) -> Figure:
    """Ratings (Elo scale) with their 95% intervals, best on top. A rating measures how
    often a policy finishes ahead of another (not how often it wins a table).

    >>> import numpy as np
    >>> ratings_figure(["a", "b"], np.array([10.0, -10.0]),
    ...                np.array([[5.0, 15.0], [-15.0, -5.0]]), title="t").axes[0].get_xlabel()
    'rating: finishing ahead of another policy (Elo scale, mean 0; 95% CI)'
    """
    order = np.argsort(rating)
    names = _label_inches(policies)
    fig = Figure(figsize=(6 + names, 0.45 * len(policies) + 1.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    y = np.arange(len(order))
    r = rating[order]
    ax.errorbar(r, y, xerr=[r - ci[order, 0], ci[order, 1] - r], fmt="o", color=ROLL_COLOR,
                capsize=3)
    ax.set_yticks(y, [policies[i] for i in order])
    ax.axvline(0, color="grey", lw=0.8)
    missing = ("; no point: no finite rating, a policy finished ahead in every game it "
               "played" if np.isnan(rating).all()
               else "; no bar: no interval, too few units" if np.isnan(ci[order]).any()
               else "")
    ax.set_xlabel("\n".join(textwrap.wrap("rating: finishing ahead of another policy (Elo "
                                         f"scale, mean 0; 95% CI{missing})", 72)),
                  loc="right")  # from the axes' right end: long names push the axes right
    ax.set_title("\n".join(textwrap.wrap(title, 60)), fontsize=10, loc="right")
    return fig


def score_distribution_figure(scores: np.ndarray, probability: np.ndarray, *, title: str,
                              mean: float | None = None,
                              percentiles: dict[int, float] | None = None,
                              target: int | None = None) -> Figure:
    """Bar chart of an exact score distribution: P(TOTAL = s) per score (in %), the mean
    as a line, the given percentiles as marks and a ``target`` T (an ``at-least:T``
    objective) as a line with P(TOTAL >= T). The x axis spans the central 99.98% of the
    probability (long thin tails, of bonuses above all, would squash the rest), and
    reaches the target.

    >>> import numpy as np
    >>> score_distribution_figure(np.arange(3), np.array([0.2, 0.5, 0.3]), title="t",
    ...                           mean=1.1).axes[0].get_xlabel()
    'final score (TOTAL)'
    """
    scores = np.asarray(scores)
    probability = np.asarray(probability, dtype=np.float64)
    cum = np.cumsum(probability)
    lo, top = (int(scores[min(int(np.searchsorted(cum, q * cum[-1])), scores.size - 1)])
               for q in (1e-4, 1 - 1e-4))
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.bar(scores, 100 * probability, width=1.0, color=ROLL_COLOR, linewidth=0)
    if mean is not None:
        ax.axvline(mean, color=BANK_COLOR, lw=1.5, label=f"mean {mean:.2f}")
    if target is not None:
        reach = float(probability[scores >= target].sum())
        ax.axvline(target, color="black", lw=1.2, ls="--",
                   label=f"target {target}: P(TOTAL >= {target}) = {reach:.6f}")
        lo, top = min(lo, target), max(top, target)
    for q, v in (percentiles or {}).items():
        ax.axvline(v, color="grey", lw=0.6, ls=":")
        ax.text(v, ax.get_ylim()[1], f"p{q}", fontsize=6, ha="center", va="bottom",
                color="grey")
    ax.set_xlim(lo - 2, top + 2)
    ax.set_xlabel("final score (TOTAL)")
    ax.set_ylabel("probability (%)")
    ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=10)
    if mean is not None or target is not None:
        ax.legend(loc="upper right")
    return fig


def save_png(fig: Figure, path: Path | str, dpi: int = 120, option: str = "--plot") -> Path:
    """Write ``fig`` as PNG to ``path`` (:func:`dicelab.files.write_output`: a regular file
    through a temporary file and a rename)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return write_output(Path(path), buf.getvalue(), option)
