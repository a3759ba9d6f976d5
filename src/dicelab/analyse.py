"""Game analysis: every decision of a logged game beside the best one, and the luck/skill
split (layer 2).

For each decision the value of the option chosen and of the best option are exact values
of the solvers:

* Penta: the expected final TOTAL with optimal (solitaire) play from then on, from the
  solved value table (:mod:`dicelab.penta.solver`) through the one-turn widget, the
  same numbers :func:`dicelab.penta.policies.rank_options` ranks;
* Penta, a player of ``optimal:OBJECTIVE``: the objective's value; of ``penta-win``: its
  win share against the other seats' cards at that turn, as penta-win values it
  (:func:`dicelab.penta.objective_play.judge_win_turns`);
* Farkle ``turn``: the expected final turn score under ``max-ev`` play from then on;
  Farkle ``win`` (two seats): P(win) + P(tie)/2 under ``optimal-win`` play by both
  seats from then on; both from :func:`dicelab.farkle.advise.advise`.

``loss`` = best - chosen (0 for options tied with the best). A game is a chain of
values: before a chance event (a roll) the value is the expectation over its outcomes,
after it the value of the best option at the next decision. So for each player

    outcome - initial = luck + skill (+ opponents, two-seat Farkle ``win`` only)

where ``luck`` sums the changes at the chance events, ``skill`` (<= 0) the changes at the
player's own decisions (minus the losses), and ``opponents`` (>= 0) the other seat's
losses, which move this player's win chance (a ``penta-win`` player: the changes of its
value between its turns). The sums are of the same float values the
chain passes through, and tests check the identity to 1e-9 on every analysed game.

Penta's decisions are evaluated by one jitted kernel over all turns of all games at
once, so thousands of games take seconds once the tables are loaded.
"""

from __future__ import annotations

import functools
import os
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, prange

from dicelab.errors import UserError
from dicelab.gamelog import GameRecord, paused_gc, penta_columns, read_games
from dicelab.penta.objective_play import WIN_SHARE
from dicelab.penta.rules import N_BOXES, N_DICE, state_index
from dicelab.penta.scoring import apply_box, roll_box_scores
from dicelab.penta.tables import KEEP_SIZE, ROLL_BASE
from dicelab.penta.widget import new_turn_scratch, state_value
from dicelab.text import counted

MEASURES = ("turn", "win")
#: Loss classes: a loss at or above the first bound is "doubtful", the second an "error",
#: the third a "blunder"; by unit (Penta points, Farkle turn points, win probability).
LOSS_CLASSES: dict[str, tuple[float, float, float]] = {
    "score": (1.0, 4.0, 10.0),
    "turn": (10.0, 40.0, 100.0),
    "win": (0.005, 0.02, 0.05),
}
CLASS_NAMES = ("doubtful", "error", "blunder")
#: The most per-game rows and decisions :meth:`AnalysisResult.to_dict` lists (``--json``,
#: the manifest); more are only in the Parquet files.
JSON_ROWS = 10_000
UNITS = {"score": "expected final score (points)",
         "turn": "expected turn score (points)",
         "win": "P(win) + P(tie)/2",
         WIN_SHARE: "win share: P(alone on top) + P(top shared by k)/k"}
#: What a player's value trace (:meth:`AnalysisResult.figures`) shows, by measure: under
#: ``turn`` the points banked so far plus the expected score of the turn in play (none
#: between turns), ending at the points banked in all less the penalties paid.
TRACE_LABELS = {"score": "expected final score (points)",
                "turn": "banked + expected turn score (points)",
                "win": "P(win) + P(tie)/2"}
_DECISION_COLUMNS = ["log", "game", "game_kind", "rules", "measure", "seat", "player",
                     "policy", "turn", "step", "roll", "rolls_left", "turn_points", "me",
                     "opp", "chosen", "best", "value_before", "value_best",
                     "value_chosen", "luck", "loss", "class"]


def unit_of(measure: str) -> str:
    """What a measure's values are: :data:`UNITS`, or a Penta objective's unit (a Penta
    player of ``optimal:OBJECTIVE``, or any under ``--objective``, is judged by it).

    >>> unit_of("at-least:300")
    'P(final score >= 300)'
    """
    if measure in UNITS:
        return UNITS[measure]
    from dicelab.penta.objectives import parse_objective

    obj = parse_objective(measure)
    return "certainty equivalent of the final score (points)" if obj.kind == "utility" \
        else obj.unit


def loss_bounds(measure: str) -> tuple[float, float, float]:
    """The loss classes' bounds of a measure: a Penta objective in probability (``at-least``,
    ``beat``) as ``win``, one in points (``utility``'s certainty equivalent) as ``score``."""
    if measure in LOSS_CLASSES:
        return LOSS_CLASSES[measure]
    return LOSS_CLASSES["score" if measure.startswith("utility") else "win"]


def has_opponents(measure: str) -> bool:
    """Whether a measure's chain has an ``opponents`` part: two-seat Farkle ``win`` (the
    other seat's losses) and penta-win's ``win-share`` (the change of its value between its
    turns: the other seats' turns, and the step from its estimate after a box to its
    value at the next turn's start)."""
    return measure in ("win", WIN_SHARE)


def in_probability(measure: str) -> bool:
    """Whether a measure's values are probabilities (shown as %)."""
    return loss_bounds(measure) == LOSS_CLASSES["win"]


def loss_class(loss: float, measure: str) -> str:
    """The size class of a loss ("" below the smallest bound).

    >>> loss_class(5.0, "score"), loss_class(0.001, "win"), loss_class(120.0, "turn")
    ('error', '', 'blunder')
    """
    bounds = loss_bounds(measure)
    name = ""
    for b, n in zip(bounds, CLASS_NAMES, strict=True):
        if loss >= b:
            name = n
    return name


@dataclass
class AnalysisResult:
    """What :func:`analyse_logs` found.

    ``decisions``: one row per decision (pandas DataFrame, columns
    :data:`_DECISION_COLUMNS`: where, the roll, the option chosen and the best, their
    values, ``luck`` = the change at the chance event just before, ``loss``, ``class``).
    ``players``: one row per player and game: decisions, total and mean loss, counts by
    class, ``initial``, ``outcome``, ``outcome_estimated``, ``luck``, ``skill``,
    ``opponents`` and ``residual`` (outcome - initial - luck - skill - opponents, rounding
    only). ``outcome`` is the final result in the measure's unit, except in a game that
    stopped before its end (``finished`` false), which has none: there it is the value of
    the player's last position, an estimate, and ``outcome_estimated`` is true (not under
    Farkle ``turn``, whose outcome, the points banked less the farkle penalties paid, is
    known). ``traces[(log, game,
    seat)]``: the value after each step of that player's chain (for figures), in the
    order of the games given.
    """

    logs: list[str]
    measure: dict[str, str]  # game -> measure used
    decisions: Any
    players: Any
    traces: dict = field(default_factory=dict, repr=False)
    n_games: int = 0
    seed = None

    def to_frame(self):
        return self.players

    def summary(self) -> list[dict]:
        """Per player name and policy over all games: games, decisions, losses, classes,
        luck and skill sums."""
        p = self.players
        if p.empty:
            return []
        g = p.groupby(["game_kind", "measure", "player", "policy"], sort=False)
        out = []
        for (kind, measure, player, policy), d in g:
            n = int(d["decisions"].sum())
            out.append({"game": kind, "measure": measure, "player": player, "policy": policy,
                        "games": len(d), "decisions": n,
                        "total_loss": float(d["total_loss"].sum()),
                        "mean_loss": float(d["total_loss"].sum() / n) if n else 0.0,
                        **{c: int(d[c].sum()) for c in CLASS_NAMES},
                        "initial": float(d["initial"].sum()),
                        "outcome": float(d["outcome"].sum()),
                        "outcome_estimated": int(d["outcome_estimated"].sum()),
                        "luck": float(d["luck"].sum()), "skill": float(d["skill"].sum()),
                        "opponents": float(d["opponents"].sum())})
        return out

    def to_dict(self) -> dict:
        return {"logs": self.logs, "games": self.n_games, "measure": self.measure,
                "units": {k if len(ms) == 1 else f"{k} {m}": unit_of(m)
                          for k, ms in self._measures().items() for m in ms},
                "thresholds": {m: dict(zip(CLASS_NAMES, loss_bounds(m), strict=True))
                               for ms in self._measures().values() for m in ms},
                "players": self.summary(),
                "per_game": self.players.to_dict(orient="records")
                if len(self.players) <= JSON_ROWS else
                f"{len(self.players)} player rows: see summary.parquet (--out)",
                "decisions": self.decisions.to_dict(orient="records")
                if len(self.decisions) <= JSON_ROWS else
                f"{counted(len(self.decisions), 'decision')}: see decisions.parquet (--out)"}

    def manifest(self) -> dict:
        return {"analysis": "dicelab analyse", "logs": self.logs, "games": self.n_games,
                "measure": self.measure,
                "thresholds": {m: list(loss_bounds(m)) for ms in self._measures().values()
                               for m in ms},
                "files_extra": {"decisions": "decisions.parquet"}}

    def _measures(self) -> dict[str, list[str]]:
        """Each game kind's measures (several when Penta players are judged by different
        objectives: :attr:`measure` joins them with ", ")."""
        return {k: v.split(", ") for k, v in self.measure.items()}

    def sections(self) -> list[tuple[str, str]]:
        """(game kind, measure) of each group of players judged alike."""
        return [(k, m) for k, ms in self._measures().items() for m in ms]

    def figures(self) -> dict:
        """``value.png``: each player's value through the first game given (the first
        log's first game; the first with a finished turn)."""
        if not self.traces:
            return {}
        first = next(iter(self.traces))
        log, game = first[0], first[1]
        series, units = {}, {}
        for (lg, gm, seat), tr in self.traces.items():
            if (lg, gm) == (log, game):
                row = self.players[(self.players["log"] == lg) & (self.players["game"] == gm)
                                   & (self.players["seat"] == seat)].iloc[0]
                label = player_label(row["player"], row["policy"])
                name = label if row["player"] == f"seat {seat}" else f"seat {seat}: {label}"
                series[name] = tr
                units[name] = TRACE_LABELS.get(row["measure"], unit_of(row["measure"]))
        return {"value.png": value_trace_figure(series, ylabel=units,
                                                title=f"{log}, game {game}")}

    def estimated_games(self) -> int:
        """How many games stopped before their end with an estimate for an outcome (see
        ``outcome_estimated``)."""
        p = self.players
        if p.empty:
            return 0
        return len(p[p["outcome_estimated"]][["log", "game"]].drop_duplicates())

    def games_of(self, kind: str) -> int:
        """How many games of ``kind`` (farkle or penta) were analysed."""
        p = self.players
        if p.empty:
            return 0
        return len(p[p["game_kind"] == kind][["log", "game"]].drop_duplicates())


def player_label(name: str, policy: str) -> str:
    """A player's name with its policy, once: ``"seat 1 (greedy)"``, ``"Computer (ai)"``
    (a name the game already gave with its policy), ``"You"`` (a human).

    >>> player_label("seat 1", "greedy"), player_label("Computer (ai)", "ai")
    ('seat 1 (greedy)', 'Computer (ai)')
    """
    if policy == "human" or name.endswith(f"({policy})"):
        return name
    return f"{name} ({policy})"


def value_trace_figure(series: dict[str, list[float]], *, ylabel: str | dict[str, str],
                       title: str):
    """Each player's value after every step of the game (chance events and decisions).
    ``ylabel``: the values' unit, or each series' unit; series in different units are
    drawn in panels of their own, one a unit, on a shared step axis.

    >>> value_trace_figure({"a": [1.0, 2.0]}, ylabel="v", title="t").axes[0].get_ylabel()
    'v'
    >>> [a.get_ylabel() for a in value_trace_figure({"a": [1.0], "b": [2.0]}, title="t",
    ...                                             ylabel={"a": "v", "b": "w"}).axes]
    ['v', 'w']
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    units = {name: ylabel for name in series} if isinstance(ylabel, str) else ylabel
    panels = list(dict.fromkeys(units[name] for name in series))
    fig = Figure(figsize=(7, 1 + 2.5 * len(panels)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    colours = iter(f"C{i}" for i in range(len(series)))
    for ax, unit in zip(axes, panels, strict=True):
        for name, values in series.items():
            if units[name] == unit:
                ax.plot(np.arange(len(values)), values, drawstyle="steps-post", label=name,
                        color=next(colours))
        ax.set_ylabel("\n".join(textwrap.wrap(unit, 40)))  # a long unit fits the panel
        ax.legend(fontsize=8)
    axes[-1].set_xlabel("step (each roll and each decision)")
    axes[0].set_title(title, fontsize=10)
    return fig


# --- Penta ----------------------------------------------------------------------------------


#: Turns per block of the analysis kernel (blocks run in parallel; within a block, turns
#: of the same state, which sort next to each other, share one widget run).
_PENTA_BLOCK = 4096


@njit(cache=True)
def _penta_block(V, rp, T, mask, up, fifty, total, n_rolls, rolls, keeps, box, order, lo, hi,
                 eps, out_start, out_best, out_chosen, out_best_code):
    """Turns ``order[lo:hi]`` of :func:`_penta_kernel`, one after the other."""
    W = new_turn_scratch()
    pm, pu, pf = -1, -1, -1
    v = 0.0
    for q in range(lo, hi):
        t = order[q]
        m, u, f, base = mask[t], up[t], fifty[t], float(total[t])
        if m != pm or u != pu or f != pf:
            v = state_value(V, rp, T, m, u, f, W, True, eps)
            pm, pu, pf = m, u, f
        out_start[t] = base + v
        nr = n_rolls[t]
        for j in range(nr):
            r = rolls[t, j]
            left = 2 - j
            if left == 2:
                best = W.r1[r]
                k = W.arg2[ROLL_BASE + r]
            elif left == 1:
                best = W.r2[r]
                k = W.arg1[ROLL_BASE + r]
            else:
                best = W.e3[r]
                k = ROLL_BASE + r
            out_best[t, j] = base + best
            out_best_code[t, j] = k if KEEP_SIZE[k] < N_DICE else -1 - W.box[r]
            if j < nr - 1:
                kk = keeps[t, j]
                out_chosen[t, j] = base + (W.E2[kk] if left == 2 else W.E1[kk])
            else:
                bonus = roll_box_scores(rp, T, m, f, r, W.scores)
                b = box[t]
                pts, nu, nf = apply_box(u, f, b, W.scores[b])
                out_chosen[t, j] = base + (pts + bonus) + V[state_index(m | (1 << b), nu, nf)]


@njit(cache=True, parallel=True)
def _penta_kernel(V, rp, T, mask, up, fifty, total, n_rolls, rolls, keeps, box, order, eps,
                  out_start, out_best, out_chosen, out_best_code):
    """Per turn t: ``out_start[t]`` the value at the turn's start; per decision j (roll j,
    2 - j rerolls left): ``out_best[t, j]`` the best option's value, ``out_chosen[t, j]``
    the chosen one's (keep ``keeps[t, j]`` if a roll follows, else box ``box[t]``), and
    ``out_best_code[t, j]`` the best option (a keep's rank, or -1 - box). Values are
    expected final TOTALs (``total[t]`` included). Turns are visited in ``order`` (sorted
    by state, so turns of one state share a widget run), fixed blocks of it in parallel;
    each turn's values depend only on its own state, so the results do not depend on the
    number of threads."""
    n = order.size
    n_blocks = (n + _PENTA_BLOCK - 1) // _PENTA_BLOCK
    for blk in prange(n_blocks):
        _penta_block(V, rp, T, mask, up, fifty, total, n_rolls, rolls, keeps, box, order,
                     blk * _PENTA_BLOCK, min(n, (blk + 1) * _PENTA_BLOCK), eps, out_start,
                     out_best, out_chosen, out_best_code)


@functools.cache
def _penta_labels():
    """Categorical dtypes of option labels (keep ranks, then ``box NAME`` per box) and of
    roll labels (by roll index)."""
    import pandas as pd

    from dicelab import dice
    from dicelab.penta.rules import BOX_NAMES
    from dicelab.penta.tables import N_KEEPS, N_ROLLS, roll_dice_of

    keeps = ["keep " + (" ".join(map(str, dice.dice_of_rank(k))) or "nothing")
             for k in range(N_KEEPS)]
    return (pd.CategoricalDtype(keeps + [f"box {b}" for b in BOX_NAMES]),
            pd.CategoricalDtype([" ".join(map(str, roll_dice_of(r))) for r in range(N_ROLLS)]))


@functools.cache
def _class_dtype():
    import pandas as pd

    return pd.CategoricalDtype(["", *CLASS_NAMES])


def _categorical(values: list[str]):
    """``pd.Categorical(values)`` (its categories sorted), from the codes of the few
    distinct values and a dtype made once per set of categories (faster than pandas'
    own factorizing of a list of strings)."""
    import pandas as pd

    cats = tuple(sorted(set(values)))
    code = {v: i for i, v in enumerate(cats)}
    return pd.Categorical.from_codes(np.fromiter((code[v] for v in values), np.int64,
                                                 len(values)), dtype=_categories(cats))


@functools.lru_cache(maxsize=256)
def _categories(cats: tuple[str, ...]):
    import pandas as pd

    return pd.CategoricalDtype(list(cats))


def _logged_objective(policy: str) -> str:
    """What a logged Penta policy is judged by: the objective it plays
    (``optimal:OBJECTIVE``), penta-win's win share, else "score" (a user's policy: its
    file, named by the log, is not run)."""
    from dicelab.penta.builtin import family_of
    from dicelab.registry import parse_policy

    try:
        spec = parse_policy(policy, "penta", users=False)
    except UserError:
        return "score"
    return family_of(spec).judged_by(spec) or "score"


@njit(cache=True)
def _table_cards(rp, T, game, seat, mask, up, fifty, total, n_rolls, rolls, box, out_state,
                 out_total):
    """``out_state[t, q]``, ``out_total[t, q]``: seat ``q``'s card (state index, TOTAL)
    before turn ``t``, the turns of a game next to each other and in order (a seat that
    has not played yet: the empty card)."""
    scores = np.empty(N_BOXES, np.int64)
    n_seats = out_state.shape[1]
    cur_s = np.empty(n_seats, np.int64)
    cur_x = np.empty(n_seats, np.int64)
    g = -1
    for t in range(game.size):
        if game[t] != g:
            g = game[t]
            cur_s[:] = state_index(0, 0, 0)
            cur_x[:] = 0
        out_state[t] = cur_s
        out_total[t] = cur_x
        m, u, f, b = mask[t], up[t], fifty[t], box[t]
        bonus = roll_box_scores(rp, T, m, f, rolls[t, n_rolls[t] - 1], scores)
        pts, nu, nf = apply_box(u, f, b, scores[b])
        cur_s[seat[t]] = state_index(m | (1 << b), nu, nf)
        cur_x[seat[t]] = total[t] + pts + bonus


def _opponents(games: list[GameRecord], c: dict, rules) -> tuple[np.ndarray, ...]:
    """Per turn of ``games`` (columns ``c`` of :func:`~dicelab.gamelog.penta_columns`) the
    other seats' cards at that moment, as penta-win sees them: (states, TOTALs) of the
    first ``counts[t]`` columns, and ``counts``."""
    from dicelab.penta.scoring import TABLES

    n_seats = np.array([g.n_seats for g in games], np.int64)[c["game"]]
    width = int(n_seats.max(initial=1))
    states = np.empty((len(n_seats), width), np.int64)
    totals = np.empty((len(n_seats), width), np.int64)
    _table_cards(rules.params, TABLES, c["game"], c["seat"], c["mask"], c["up"], c["fifty"],
                 c["total"], c["n_rolls"], c["roll_id"], c["box"], states, totals)
    q = np.arange(max(width - 1, 1))[None, :]
    q = q + (q >= c["seat"][:, None])  # the other seats, in seat order
    q = np.minimum(q, width - 1)
    rows = np.arange(len(n_seats))[:, None]
    return states[rows, q], totals[rows, q], n_seats - 1


def _check_win_tables(players_meta, measures) -> None:
    """Refuse a player judged by penta-win's win share at a table penta-win does not
    play (``UserError`` at the game's header)."""
    from dicelab.penta.objective_play import WIN_MAX_SEATS

    for (g, _), m in zip(players_meta, measures, strict=True):
        if m == WIN_SHARE and not 2 <= g.n_seats <= WIN_MAX_SEATS:
            raise UserError(f"{g.path}:{g.line}: field 'seats': penta-win is judged against "
                            f"the other seats, at tables of 2 to {WIN_MAX_SEATS}, not "
                            f"{g.n_seats}")


def _penta_games(games: list[GameRecord], objective: str | None = None):
    """(decisions frames, players frames, traces of each rule set's first game, the
    measures used) of Penta games, a frame per rule set; every step after the kernels is
    a whole-array operation. A player is judged by ``objective`` if given, else by the
    objective its policy plays (``optimal:OBJECTIVE``), else in expected points
    ("score")."""
    import pandas as pd

    from dicelab import config
    from dicelab.penta.objective_play import judge_turns, judge_win_turns
    from dicelab.penta.rules import BOX_NAMES
    from dicelab.penta.scoring import TABLES
    from dicelab.penta.solver import solve
    from dicelab.resources import check_memory

    eps = config.PENTA_TIE_EPS
    option_label, roll_label = _penta_labels()
    dec_frames, player_frames = [], []
    traces: dict = {}
    used: dict[str, None] = {}
    by_rules: dict[str, list[GameRecord]] = {}
    for g in games:
        by_rules.setdefault(g.rules_name, []).append(g)
    for name, group in by_rules.items():
        n = sum(len(g.turns) for g in group)
        if not n:  # games stopped in their first turn: nothing to value
            continue
        rules = group[0].rules
        V = solve(rules).values
        check_memory(f"analysing {n:,} Penta turns", n * 600)
        c = penta_columns(group)
        mask, up, fifty, total, n_rolls = (c[k] for k in ("mask", "up", "fifty", "total",
                                                          "n_rolls"))
        rolls, keeps, box = c["roll_id"], c["keep_rank"], c["box"]
        # players: (game, seat) in that order; a player's turns counted in order
        n_seat_keys = int(c["seat"].max(initial=0)) + 1
        player_keys, player_of_turn = np.unique(c["game"] * n_seat_keys + c["seat"],
                                                return_inverse=True)
        by_player = np.argsort(player_of_turn, kind="stable")
        first_of = np.searchsorted(player_of_turn[by_player], np.arange(player_keys.size))
        turn_no = np.empty(n, np.int64)
        turn_no[by_player] = np.arange(n) - first_of[player_of_turn[by_player]] + 1
        players_meta = [(group[k // n_seat_keys], k % n_seat_keys)
                        for k in player_keys.tolist()]
        start = np.empty(n)
        best = np.full((n, 3), np.nan)
        chosen = np.full((n, 3), np.nan)
        code = np.zeros((n, 3), np.int64)
        order = np.lexsort((fifty, up, mask)).astype(np.int64)
        args = (V, rules.params, TABLES, mask, up, fifty, total, n_rolls, rolls, keeps, box,
                order)
        if n <= _PENTA_BLOCK:  # one block: no thread start-up
            _penta_block(*args, 0, n, eps, start, best, chosen, code)
        else:
            _penta_kernel(*args, eps, start, best, chosen, code)
        # players judged by an objective: their turns' values in its unit
        measures = [objective or _logged_objective(g.seats[s]["policy"])
                    for g, s in players_meta]
        measures = [m if m != "mean" else "score" for m in measures]
        tied = best - eps <= chosen
        outcome_of = {}
        for m in dict.fromkeys(measures):
            if m == "score":
                continue
            sel = np.flatnonzero((np.array(measures) == m)[player_of_turn])
            cols = [a[sel] for a in (mask, up, fifty, total, n_rolls, rolls, keeps, box)]
            if m == WIN_SHARE:
                _check_win_tables(players_meta, measures)
                jd = judge_win_turns(rules, *cols, *(a[sel] for a in _opponents(group, c,
                                                                                rules)))
            else:
                jd = judge_turns(m, rules, *cols)
            start[sel], best[sel], chosen[sel], code[sel] = (jd.start, jd.best, jd.chosen,
                                                             jd.code)
            tied[sel] = jd.tied
            outcome_of[m] = jd.outcome
        measure_cat = _categorical(measures)
        used.update(dict.fromkeys(measures))
        valid = np.arange(3)[None, :] < n_rolls[:, None]
        ti, j = np.nonzero(valid)
        vb, vc = best[ti, j], chosen[ti, j]
        prev = np.where(j > 0, chosen[ti, np.maximum(j - 1, 0)], start[ti])
        luck = vb - prev
        loss = np.where(tied[ti, j], 0.0, vb - vc)
        last = j == n_rolls[ti] - 1
        n_keeps = len(option_label.categories) - len(BOX_NAMES)
        chosen_code = np.where(last, n_keeps + box[ti], keeps[ti, np.minimum(j, 1)])
        c = code[ti, j]
        best_code = np.where(c < 0, n_keeps - 1 - c, c)
        best_code = np.where(loss == 0.0, chosen_code, best_code)
        bounds = np.array([loss_bounds(m) for m in measure_cat.categories]).reshape(-1, 3)[
            measure_cat.codes[player_of_turn[ti]]]
        cls_code = np.select([loss >= bounds[:, 2], loss >= bounds[:, 1],
                              loss >= bounds[:, 0]], [3, 2, 1], 0)
        cls = pd.Categorical.from_codes(cls_code, dtype=_class_dtype())
        pid = player_of_turn[ti]
        meta_game = [m[0] for m in players_meta]
        n_p = len(players_meta)
        logs = _categorical([m.path for m in meta_game])
        gidx = np.array([m.index for m in meta_game], dtype=np.int64)
        seat = np.array([m[1] for m in players_meta], dtype=np.int64)
        pname = _categorical([m.seats[s]["name"] for m, s in players_meta])
        ppol = _categorical([m.seats[s]["policy"] for m, s in players_meta])

        def per_decision(cat, pid=pid):
            return pd.Categorical.from_codes(cat.codes[pid], dtype=cat.dtype)

        dec_frames.append(pd.DataFrame({
            "log": per_decision(logs), "game": gidx[pid], "game_kind": "penta",
            "rules": name, "measure": per_decision(measure_cat), "seat": seat[pid],
            "player": per_decision(pname), "policy": per_decision(ppol),
            "turn": turn_no[ti], "step": j + 1,
            "roll": pd.Categorical.from_codes(rolls[ti, j], dtype=roll_label),
            "rolls_left": 2 - j, "turn_points": None, "me": total[ti], "opp": None,
            "chosen": pd.Categorical.from_codes(chosen_code, dtype=option_label),
            "best": pd.Categorical.from_codes(best_code, dtype=option_label),
            "value_before": prev, "value_best": vb, "value_chosen": vc, "luck": luck,
            "loss": loss, "class": cls}, copy=False))
        first_turn = np.full(n_p, n, np.int64)
        np.minimum.at(first_turn, player_of_turn, np.arange(n))
        last_turn = np.zeros(n_p, np.int64)
        np.maximum.at(last_turn, player_of_turn, np.arange(n))
        end_value = chosen[last_turn, n_rolls[last_turn] - 1]
        finished = np.array([m.finished for m in meta_game], dtype=bool)
        final_total = np.array([m.totals[s] for m, s in players_meta], dtype=float)
        for m, u in outcome_of.items():  # an objective's outcome: its u(final TOTAL)
            of_m = np.array(measures) == m
            if u is None:  # the win share: of the seats' final TOTALs
                u_won = [1.0 / len(g.winners) if s in g.winners else 0.0
                         for g, s in players_meta]
                final_total = np.where(of_m, u_won, final_total)
            else:
                final_total = np.where(of_m, u[final_total.astype(np.int64)], final_total)
        outcome = np.where(finished, final_total, end_value)  # unfinished: an estimate
        initial = start[first_turn]
        opponents_p = _between_turns(np.array(measures) == WIN_SHARE, player_of_turn,
                                     by_player, start, chosen[np.arange(n), n_rolls - 1],
                                     outcome)
        luck_p = np.bincount(pid, weights=luck, minlength=n_p)
        skill_p = np.bincount(pid, weights=vc - vb, minlength=n_p)
        loss_p = np.bincount(pid, weights=loss, minlength=n_p)
        n_dec = np.bincount(pid, minlength=n_p)
        frame = {"log": logs, "game": gidx, "game_kind": "penta", "rules": name,
                 "measure": measure_cat, "seat": seat, "player": pname, "policy": ppol,
                 "finished": finished,
                 "turns": np.bincount(player_of_turn, minlength=n_p),
                 "decisions": n_dec, "total_loss": loss_p,
                 "mean_loss": np.where(n_dec > 0, loss_p / np.maximum(n_dec, 1), 0.0)}
        for k, cname in enumerate(CLASS_NAMES, 1):
            frame[cname] = np.bincount(pid, weights=(cls_code == k), minlength=n_p
                                       ).astype(np.int64)
        frame.update({"initial": initial, "outcome": outcome,
                      "outcome_estimated": ~finished, "luck": luck_p,
                      "skill": skill_p, "opponents": opponents_p,
                      "residual": outcome - initial - luck_p - skill_p - opponents_p})
        player_frames.append(pd.DataFrame(frame, copy=False))
        # the chains of the rule set's first game with a finished turn, for the figure
        # (of the first game given, which may be of any rule set)
        g0 = players_meta[0][0]
        for p_i, (g, s) in enumerate(players_meta):
            if g is not g0:
                break
            steps = np.nonzero(pid == p_i)[0]
            tr = [float(initial[p_i])]
            for q in steps:
                tr.extend((float(vb[q]), float(vc[q])))
            traces[(g.path, g.index, s)] = tr
    if not used:  # no finished turn: the measure the players would have been judged by
        used[objective if objective not in (None, "mean") else "score"] = None
    return dec_frames, player_frames, traces, list(used)


def _between_turns(of_player, player_of_turn, by_player, start, after_box, outcome):
    """Per player flagged in ``of_player`` (penta-win's, judged by its win share) the sum
    of the changes of its value between its turns: from its value after each box
    (``after_box[t]``) to its next turn's start, or to its ``outcome`` after its last
    turn. The other seats' turns move it (and so does the step from the continuation's
    estimate to the next turn's own value); for every other player 0."""
    n = player_of_turn.size
    nxt = np.full(n, -1, np.int64)
    same = player_of_turn[by_player[1:]] == player_of_turn[by_player[:-1]]
    nxt[by_player[:-1][same]] = by_player[1:][same]
    following = np.where(nxt >= 0, start[np.maximum(nxt, 0)], outcome[player_of_turn])
    jump = np.where(of_player[player_of_turn], following - after_box, 0.0)
    return np.bincount(player_of_turn, weights=jump, minlength=of_player.size)


def _player_row(g: GameRecord, s: int, kind: str, measure: str, acc: dict, outcome: float,
                opponents: float, estimated: bool) -> dict:
    seat = g.seats[s]
    residual = outcome - acc["initial"] - acc["luck"] - acc["skill"] - opponents
    return {"log": g.path, "game": g.index, "game_kind": kind, "rules": g.rules_name,
            "measure": measure, "seat": s, "player": seat["name"], "policy": seat["policy"],
            "finished": g.finished, "turns": acc["turns"], "decisions": acc["decisions"],
            "total_loss": acc["loss"],
            "mean_loss": acc["loss"] / acc["decisions"] if acc["decisions"] else 0.0,
            **{c: acc["classes"][k] for k, c in enumerate(CLASS_NAMES)},
            "initial": acc["initial"], "outcome": outcome, "outcome_estimated": estimated,
            "luck": acc["luck"],
            "skill": acc["skill"], "opponents": opponents, "residual": residual}


# --- Farkle ---------------------------------------------------------------------------------


def _farkle_option(adv, keep: tuple[int, ...], action: str):
    for o in adv.options:
        if o.keep == keep and o.action == action:
            return o
    raise AssertionError(f"{keep} {action} is not an option of {adv.roll}")  # validated


def _farkle_games(games: list[GameRecord], measure: str | None
                  ) -> tuple[list[dict], list[dict], dict, dict]:
    from dicelab.farkle.advise import advise, optimal_win_solution
    from dicelab.farkle.rules import PENALTY_STREAK
    from dicelab.farkle.solitaire import max_ev_capped

    rows: list[dict] = []
    players: list[dict] = []
    traces: dict = {}
    used: dict[str, str] = {}
    for g in games:
        m = measure or ("win" if g.n_seats == 2 else "turn")
        if m == "win" and g.n_seats != 2:
            raise UserError(f"{g.path}:{g.line}: field 'seats': --measure win needs a "
                            f"two-seat game, not {counted(g.n_seats, 'seat')}")
        used[m] = m
        if not g.turns:  # stopped in its first turn: nothing to value, nothing to solve
            continue
        try:
            if m == "turn":
                roll_value = max_ev_capped(g.rules).roll_value  # [lost in a row, 0, 6]
                start_value = [float(roll_value[min(k, roll_value.shape[0] - 1), 0, 6])
                               for k in range(PENALTY_STREAK)]
                sol = None
            else:
                sol = optimal_win_solution(g.rules, g.target)
        except UserError as exc:  # the win measure solves the game to its target too
            fields = "field 'rules'" if m == "turn" else "fields 'rules' and 'target'"
            raise UserError(f"{g.path}:{g.line}: {fields}: {exc}") from None
        p, tr = _farkle_game(g, m, sol, start_value if m == "turn" else None, advise,
                             rows)
        players += p
        traces.update(tr)
    return rows, players, traces, used


def _new_acc() -> dict:
    return {"initial": None, "luck": 0.0, "skill": 0.0, "loss": 0.0, "decisions": 0,
            "turns": 0, "classes": [0, 0, 0], "trace": []}


def _farkle_game(g: GameRecord, m: str, sol, start_value: list[float] | None, advise,
                 rows: list):
    """One game's decisions (appended to ``rows``) and its player rows and traces.

    ``win``: the chain holds seat 0's value (seat 1's is 1 minus it). At each turn start
    the value comes from the solver, after each roll from ``advise`` (the best option),
    after each decision from ``advise`` (the option chosen); a bust is a chance event that
    ends at the next turn's start (or the game's outcome). Nothing joins two values of
    different sources except a chance event, so a disagreement between them would show
    as a residual (tested to be rounding). Under a farkle penalty the values are those of
    each seat's run of lost turns (as the referee counts it), the penalty in the totals.
    """
    from dicelab.farkle.rules import FIRST_TO_BANK, POINT_UNIT

    n = g.n_seats
    rules, target = g.rules, g.target
    low = -rules.penalty_floor() * POINT_UNIT
    accs = [_new_acc() for _ in range(n)]
    opponents = [0.0] * n
    totals = [0] * n
    lost = [0] * n  # turns lost in a row (they change values only under a penalty)
    banked = [0.0] * n
    trigger = None
    for t in g.turns:
        s = t.seat
        me, opp = totals[s], (totals[1 - s] if n == 2 else 0)
        # under a penalty the solvers' totals stop at their floor: lower ones are read there
        vme, vopp = max(me, low), max(opp, low)
        mine, theirs = (lost[s], lost[1 - s] if n == 2 else 0) if rules.farkle_penalty \
            else (0, 0)
        acc = accs[s]
        acc["turns"] += 1
        if m == "win":
            start = sol.last_round_value(vopp - vme) if opp >= target else \
                sol.win_value(vme, vopp, mine, theirs)
            if accs[0]["initial"] is None:
                for k in range(2):
                    accs[k]["initial"] = start if k == s else 1.0 - start
                    accs[k]["trace"].append(accs[k]["initial"])
        else:
            start = start_value[mine]
            acc["initial"] = (acc["initial"] or 0.0) + start
            if not acc["trace"]:
                acc["trace"].append(start)
        before = start  # seat s's value before the coming chance event
        # if this turn is lost: the points it takes off the total (the penalty at the last
        # of a run, else 0) and the run of lost turns it leaves
        penalty, run_after = rules.after_lost_turn(lost[s])
        paid = penalty if t.end == "bust" else 0
        tp = 0
        for k, roll in enumerate(t.rolls):
            if k == len(t.keeps):  # the bust roll: the turn ends with nothing (less a penalty)
                streak = run_after if rules.farkle_penalty else 0
                after = float(-paid) if m == "turn" else _after_turn(
                    sol, s, vopp, max(t.totals[s], low), trigger, rules, target, streak,
                    theirs)
                _add(accs, s, "luck", after - before, m)
                before = after
                break
            keep = tuple(sorted(t.keeps[k]))
            bank = k == len(t.keeps) - 1 and t.end == "bank"
            try:
                adv = (advise(sorted(roll), turn_points=tp, rules=rules, my_farkles=mine)
                       if m == "turn"
                       else advise(sorted(roll), turn_points=tp, me=vme, opp=vopp,
                                   target=target, rules=rules, my_farkles=mine,
                                   opp_farkles=theirs))
            except UserError as exc:
                raise UserError(f"{g.path}:{t.line}: field 'rolls[{k}]': {exc}") from None
            best_opt = adv.options[0]
            opt = _farkle_option(adv, keep, "bank" if bank else "roll")
            vb, vc, loss = best_opt.value, opt.value, opt.loss
            luck = vb - before
            _add(accs, s, "luck", luck, m)
            acc["skill"] += vc - vb
            if m == "win":
                opponents[1 - s] -= vc - vb
            acc["loss"] += loss
            acc["decisions"] += 1
            cls = loss_class(loss, m)
            if cls:
                acc["classes"][CLASS_NAMES.index(cls)] += 1
            chosen_label = _farkle_label(opt)
            rows.append({"log": g.path, "game": g.index, "game_kind": "farkle",
                         "rules": g.rules_name, "measure": m, "seat": s,
                         "player": g.seats[s]["name"], "policy": g.seats[s]["policy"],
                         "turn": acc["turns"], "step": k + 1,
                         "roll": " ".join(map(str, roll)), "rolls_left": None,
                         "turn_points": tp, "me": me, "opp": opp if n == 2 else None,
                         "chosen": chosen_label,
                         "best": chosen_label if loss == 0.0 else _farkle_label(best_opt),
                         "value_before": before, "value_best": vb, "value_chosen": vc,
                         "luck": luck, "loss": loss, "class": cls})
            tp += opt.points
            before = vc
            _trace(accs, s, before, banked[s], m)
        if m == "turn":  # the turn is over: its points are banked (or lost), none in play
            banked[s] += t.points - paid
            _trace(accs, s, 0.0, banked[s], m)
        else:
            _trace(accs, s, before, 0.0, m)
        totals = list(t.totals)
        lost[s] = 0 if t.end == "bank" else run_after
        if trigger is None and t.end == "bank" and totals[s] >= target \
                and rules.ending_code != FIRST_TO_BANK:
            trigger = s
        if m == "win":
            accs[s]["_end"] = before
            accs[1 - s]["_end"] = 1.0 - before
    out, traces = [], {}
    for s in range(n):
        acc = accs[s]
        if acc["initial"] is None:
            continue
        if m == "win":
            outcome = _outcome(g, s) if g.finished else acc["_end"]
        else:
            outcome = float(banked[s])
        # turn: the points banked are known; win: an unfinished game's value is an estimate
        out.append(_player_row(g, s, "farkle", m, acc, outcome,
                               opponents[s] if m == "win" else 0.0,
                               m == "win" and not g.finished))
        traces[(g.path, g.index, s)] = acc["trace"]
    return out, traces


def _trace(accs, s, mine, banked, m):
    """Append seat ``s``'s value (and, ``win``, the other seat's): ``turn`` traces the
    points banked so far plus the current turn's expected score."""
    if m == "win":
        accs[s]["trace"].append(mine)
        accs[1 - s]["trace"].append(1.0 - mine)
    else:
        accs[s]["trace"].append(banked + mine)


def _add(accs, s, key, d, m):
    accs[s][key] += d
    if m == "win":
        accs[1 - s][key] -= d


def _outcome(g: GameRecord, s: int) -> float:
    if s not in g.winners:
        return 0.0
    return 1.0 if len(g.winners) == 1 else 0.5


def _after_turn(sol, s, opp, my_new, trigger, rules, target, my_lost=0, opp_lost=0
                ) -> float:
    """Seat ``s``'s value once its turn ended with total ``my_new`` and ``my_lost`` turns
    lost in a row: the other seat's turn start (its value taken from 1), or the game's
    outcome when it is over."""
    from dicelab.farkle.rules import FIRST_TO_BANK

    if opp >= target or (trigger is not None and trigger != s):
        # the last turn of the game: the outcome
        return 1.0 if my_new > opp else (0.5 if my_new == opp else 0.0)
    if my_new >= target:
        if rules.ending_code == FIRST_TO_BANK:
            return 1.0
        return 1.0 - sol.last_round_value(my_new - opp)
    return 1.0 - sol.win_value(opp, my_new, opp_lost, my_lost)


def _farkle_label(o) -> str:
    keep = " ".join(map(str, o.keep))
    return f"{keep}, bank" if o.action == "bank" else f"{keep}, roll {o.dice}"


# --- entry point ----------------------------------------------------------------------------


def _judge_by(objective: str) -> str:
    """The measure ``--objective`` names: an objective (its canonical name) or
    ``win-share`` (``UserError`` for anything else)."""
    if objective == WIN_SHARE:
        return WIN_SHARE
    from dicelab.penta.objectives import parse_objective

    try:
        return parse_objective(objective).name
    except UserError as exc:
        if str(exc).startswith("unknown objective"):
            raise UserError(f"{exc}, or {WIN_SHARE}") from None
        raise


def analyse_games(games: list[GameRecord], *, measure: str | None = None,
                  logs: list[str] | None = None, objective: str | None = None
                  ) -> AnalysisResult:
    """Analyse games already read (see :func:`analyse_logs`)."""
    import pandas as pd

    if measure is not None and measure not in MEASURES:
        raise UserError(f"--measure must be one of {', '.join(MEASURES)}, not {measure!r}")
    if objective is not None:
        objective = _judge_by(objective)
        if any(g.game != "penta" for g in games):
            g = next(g for g in games if g.game != "penta")
            raise UserError(f"{g.path}:{g.line}: field 'game': --objective is for Penta "
                            "games; Farkle decisions are valued by --measure")
    penta = [g for g in games if g.game == "penta"]
    farkle = [g for g in games if g.game == "farkle"]
    if penta and measure is not None:
        raise UserError(f"{penta[0].path}:{penta[0].line}: field 'game': --measure is for "
                        "Farkle; judge Penta decisions with --objective (mean, at-least:T, "
                        f"utility:theta=X, beat:N, {WIN_SHARE})")
    dec_frames, player_frames, traces = [], [], {}
    used: dict[str, str] = {}
    if penta:
        with paused_gc():
            d, p, tr, ms = _penta_games(penta, objective)
        dec_frames += d
        player_frames += p
        traces.update(tr)
        used["penta"] = ", ".join(ms)
    if farkle:
        r, p, tr, ms = _farkle_games(farkle, measure)
        dec_frames.append(pd.DataFrame(r, columns=_DECISION_COLUMNS))
        player_frames.append(pd.DataFrame(p))
        traces.update(tr)
        if len(ms) > 1:
            raise UserError("these logs mix two-seat Farkle games (valued in P(win)) with "
                            "games of one seat or of three or more (valued in turn points): "
                            "give --measure turn to value them all in turn points")
        used["farkle"] = next(iter(ms))
    if len(dec_frames) == 1 and list(dec_frames[0].columns) == _DECISION_COLUMNS:
        dec = dec_frames[0]  # one game kind and rule set: the frame as built
    else:
        dec = (pd.concat(dec_frames, ignore_index=True) if dec_frames
               else pd.DataFrame(columns=_DECISION_COLUMNS))[_DECISION_COLUMNS]
    pl = pd.concat(player_frames, ignore_index=True) if player_frames else pd.DataFrame()
    # the frames come by game kind and rule set: the games in the order given (the first
    # log's first game first) in every table, file and figure
    position: dict[tuple[str, int], int] = {}
    for g in games:
        position.setdefault((g.path, g.index), len(position))
    if len(dec_frames) > 1:
        dec = _in_game_order(dec, position)
    if len(player_frames) > 1:
        pl = _in_game_order(pl, position)
    kinds = dict.fromkeys(g.game for g in games)
    used = {k: used[k] for k in kinds if k in used}
    traces = dict(sorted(traces.items(), key=lambda kv: position[kv[0][0], kv[0][1]]))
    return AnalysisResult(list(dict.fromkeys(g.path for g in games)) if logs is None
                          else logs, used, dec, pl, traces, len(games))


def _in_game_order(frame, position: dict[tuple[str, int], int]):
    """The rows of ``frame`` (a game's rows next to each other) with the games in their
    ``position`` order, each game's rows as they were."""
    import pandas as pd

    n = len(frame)
    if not n:
        return frame
    log = frame["log"]
    codes = (log.cat.codes.to_numpy() if isinstance(log.dtype, pd.CategoricalDtype)
             else pd.factorize(log)[0])
    game = frame["game"].to_numpy()
    start = np.flatnonzero(np.r_[True, (codes[1:] != codes[:-1]) | (game[1:] != game[:-1])])
    pos = np.array([position[lg, int(gm)] for lg, gm in zip(log.iloc[start], game[start],
                                                             strict=True)], np.int64)
    if np.all(pos[1:] >= pos[:-1]):
        return frame
    key = np.repeat(pos, np.diff(np.r_[start, n]))
    return frame.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)


def _check_once(paths: list[str]) -> None:
    """``UserError`` where two of ``paths`` are one file (the same name twice, or a link to
    it): its games would count twice. A path that cannot be read is left to
    :func:`~dicelab.gamelog.read_games` to refuse."""
    seen: dict[tuple[int, int], str] = {}
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            raise UserError(f"{p} is the same log as {seen[st.st_dev, st.st_ino]}: give each "
                            "log once")
        seen[st.st_dev, st.st_ino] = p


def analyse_logs(paths, *, game: str | None = None, rules=None,
                 measure: str | None = None, objective: str | None = None) -> AnalysisResult:
    """Read, replay and analyse every game of the logs at ``paths``.

    ``game`` / ``rules`` refuse logs of another game or rule set; ``measure`` (Farkle):
    ``turn`` (expected turn score, max-ev) or ``win`` (two seats: P(win) + P(tie)/2,
    optimal-win); the default is ``win`` for two-seat games and ``turn`` otherwise.
    Penta: each player is judged in expected final score, or by the objective its policy
    plays (``optimal:OBJECTIVE``: e.g. the loss in P(final >= T)), a ``penta-win`` player
    by its win share against the other seats' cards at each turn (``win-share``), or by
    ``objective`` (``mean``, ``at-least:T``, ``utility:theta=X``, ``beat:N``,
    ``win-share``) for every player.

    >>> import tempfile, pathlib
    >>> from dicelab.gamelog import new_game_header, write_games
    >>> h = new_game_header("farkle", "default", [{"name": "me", "policy": "human"}],
    ...                     target=500)
    >>> turn = {"seat": 0, "rolls": [[1, 1, 1, 5, 2, 3]], "keeps": [[1, 1, 1]], "end": "bank"}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "game.jsonl"
    >>> write_games(path, [(h, [turn])])
    >>> a = analyse_logs([path])
    >>> a.decisions.loc[0, "chosen"], a.decisions.loc[0, "best"]
    ('1 1 1, bank', '1 1 1 5, bank')
    >>> float(a.decisions.loc[0, "loss"])
    50.0
    """
    paths = [str(p) for p in ([paths] if isinstance(paths, str) else paths)]
    if not paths:
        raise UserError("give one or more log files")
    if objective is not None:  # a bad objective is refused before the logs are read
        _judge_by(objective)
    _check_once(paths)
    games: list[GameRecord] = []
    for p in paths:
        games.extend(read_games(p, game=game, rules=rules))
    return analyse_games(games, measure=measure, logs=paths, objective=objective)


__all__ = ["CLASS_NAMES", "LOSS_CLASSES", "MEASURES", "AnalysisResult", "analyse_games",
           "analyse_logs", "in_probability", "loss_bounds", "loss_class", "unit_of"]
