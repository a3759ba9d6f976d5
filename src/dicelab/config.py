"""Every constant that tunes how dicelab computes, in one place.

Game facts (points, bonuses, dice, targets) live in the rules modules
(:mod:`dicelab.farkle.rules`, :mod:`dicelab.penta.rules`); this module holds the
choices that are not rules: chunk sizes, caps, tolerances, lane counts. Kernels read
them as compile-time globals, and tests read their tolerances from here.

Some of them are part of what a seed means (changing them changes which games a seed
gives, not their distribution): :data:`CHUNK_GAMES`, :data:`FARKLE_LANES`,
:data:`FARKLE_SOLO_LANES`. Results record them.
"""

from __future__ import annotations

# --- simulation: chunks and batches -----------------------------------------------------

#: Games per chunk: one random stream per chunk (``SeedSequence(seed, spawn_key=(chunk,))``).
#: Part of the reproducibility contract: changing it changes results.
CHUNK_GAMES = 8192
#: A comparison whose chunks of games are the units of its error estimate (tournaments,
#: tune's Monte Carlo) plays a run of fewer than this many standard chunks in this many
#: smaller ones (:func:`dicelab.seeding.unit_chunk_games`), so that a short run still
#: measures its error; part of what a seed means there.
MIN_UNITS = 16
#: ... each of at least this many games.
MIN_UNIT_GAMES = 16
#: Chunks per kernel call (one progress tick, one Dask task per batch).
BATCH_CHUNKS = 16
#: Games simulated when the user gives no ``--games``.
DEFAULT_GAMES = 1_000_000
#: The most games (or rolls) one run plays: about an hour and a half at 20 million games
#: per second; more is several runs with different seeds.
MAX_GAMES = 10**11

# --- Farkle simulation ------------------------------------------------------------------

#: Safety cap: a Farkle game stops after this many rounds (a policy that practically never
#: banks would otherwise never finish). Capped games are counted and reported.
MAX_ROUNDS = 5000
#: Safety cap on the rolls of one turn (under a table where no roll of 6 dice busts, a
#: policy that never banks would roll forever); such a game ends as a capped game.
MAX_TURN_ROLLS = 1 << 20
#: Games in flight per chunk in the threshold ("lanes") kernel: solitaire, and with
#: several seats. Part of the definition of a run (which draws each game gets).
FARKLE_SOLO_LANES = 32
FARKLE_LANES = 16
#: The final-score histogram reaches this far above the target (points); higher totals
#: go to the last bin, and percentiles landing there are reported as "at least".
HIST_HEADROOM = 20_000

# --- exact solvers ------------------------------------------------------------------------

#: Two-player Farkle: the turn-points cap tolerance (banking from the cap on costs at most
#: this much win probability); the achieved bound is reported with every solution.
OPTIMAL_WIN_TOL = 1e-10
#: Two-player Farkle: policy-iteration (Newton) steps per score pair before the fallback
#: of plain fixed-point steps, and the most fixed-point steps.
OPTIMAL_WIN_NEWTON_STEPS = 50
OPTIMAL_WIN_FIXED_POINT_STEPS = 5000
#: Two-player Farkle with the farkle penalty: totals may fall this far below zero (points;
#: at least two penalties), Gauss-Seidel sweeps stop when no value moves by more than
#: the sweep tolerance, and give up after the most sweeps.
PENALTY_FLOOR_POINTS = 2_000
#: The deepest floor (points below zero) a solve goes to: ``solve farkle --floor`` at most.
DEEPEST_FLOOR_POINTS = 1_000_000
#: The deepest floor (points below zero) a solitaire race is solved down to before one
#: whose expected turns still move is refused. Deeper than the solves' own: a race
#: whose totals drift up slowly settles only there (``threshold-2000`` under ``facebook``
#: moves by 4e-6 of its 373.2 turns between 512,000 and 1,024,000 below zero, and not at
#: all a doubling later).
DEEPEST_RACE_FLOOR_POINTS = 2_000_000
PENALTY_SWEEP_TOL = 1e-11
PENALTY_MAX_SWEEPS = 200
#: Solitaire Farkle ``fastest``: relative change at which the Newton steps per total stop.
FASTEST_TOL = 1e-14
#: Penta: options whose values differ by at most this many points are ties, settled by a
#: fixed order (measured: exact ties differ by at most 8.5e-14 points of rounding, the
#: smallest genuine gap is 4.4e-9; see docs/design/penta-solver.md).
PENTA_TIE_EPS = 1e-10
#: Penta solver: states solved side by side in vector lanes, and groups per parallel block
#: (fixed, so results never depend on the thread count).
PENTA_SOLVER_LANES = 8
PENTA_SOLVER_BLOCK = 16

# --- tuning -------------------------------------------------------------------------------

#: ``dicelab tune`` evaluates every member of a space of at most this many members (or of
#: at most ``--trials``), whatever ``--trials`` says: every one-parameter range fits (the
#: widest, ``threshold``, has 40 members), and 40 exact evaluations at a target of 3,000
#: take about 2 s. Larger spaces are searched, and the best found is not proven best.
TUNE_ENUMERATE_MEMBERS = 50

# --- reproducibility ---------------------------------------------------------------------

#: Floats of the exact solvers on another machine agree with this machine's within this
#: relative tolerance (of the quantity's scale): the kernels are compiled for the host
#: CPU, whose vector width and fused multiply-add change the rounding of sums. On one
#: machine they are bit for bit; integers (Monte Carlo sums) are bit for bit everywhere.
CROSS_MACHINE_RTOL = 1e-12

# --- the table cache ----------------------------------------------------------------------

#: The on-disk table cache's size limit when ``$DICELAB_CACHE_MAX_SIZE`` is unset or empty
#: (a size as :func:`dicelab.cache.parse_size` reads it): each newly stored table prunes the
#: least recently used others until the cache fits (:func:`dicelab.cache.store`).
CACHE_MAX_SIZE = "10GB"

# --- execution ---------------------------------------------------------------------------

#: ``--dask local:N`` refuses more worker processes than this many per core.
MAX_LOCAL_WORKERS_PER_CORE = 4
