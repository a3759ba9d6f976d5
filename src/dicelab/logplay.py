"""Games played move by move in Python and recorded as game logs (layer 2).

The jitted simulation kernels keep only sums, not decisions, so a log of simulated games
comes from this driver: the same named policies, decided in Python from the same
tables and rules, on dice from their own stream of the run's seed
(``SeedSequence(seed, spawn_key=(LOG_STREAM,))``, game ``i`` its own child). So
``dicelab simulate ... --seed S --log F --log-games N`` writes the same N games on
every run with seed S; they are not the first N games of the kernels' statistics, which
play other dice.

Policies: Penta ``optimal`` and ``greedy`` (the widget's decisions, ties as the decision
tables settle them); Farkle ``threshold-T``, ``ai`` (with parameters), ``max-ev``
(solitaire values of :func:`dicelab.farkle.advise.advise`) and ``optimal-win`` (two
seats). ``fastest`` and best responses are not driven here.

Penta games, a user's policy's too, are played by the referee
(:func:`dicelab.penta.referee.play_game`).

>>> games = play_games("penta", ["greedy"], games=1, seed=3)
>>> len(games[0][1]), games[0][0]["seed"]
(13, 3)
"""

from __future__ import annotations

import numpy as np

from dicelab.errors import UserError
from dicelab.gamelog import new_game_header, write_games

#: The spawn key of the log's dice stream (the kernels' chunks use keys 0, 1, ...).
LOG_STREAM = 2**31 - 1
#: Most rolls in one Farkle turn (a policy that never banks under a table where every
#: roll scores is cut off: its turn is logged as far as it went and banks).
MAX_ROLLS = 10_000
#: Most games a log may hold.
MAX_LOG_GAMES = 1_000_000
#: Games ``simulate --log`` writes without ``--log-games``.
DEFAULT_LOG_GAMES = 100


def _rngs(seed: int, games: int):
    root = np.random.SeedSequence(seed, spawn_key=(LOG_STREAM,))
    return [np.random.default_rng(s) for s in root.spawn(games)]


# --- Farkle --------------------------------------------------------------------------------


class _FarkleSeat:
    """One seat's decisions: (keep, bank?) for a scoring roll."""

    def __init__(self, spec, rules, target: int, n_seats: int):
        self.spec, self.rules, self.target = spec, rules, target
        fam = spec.family
        if fam == "optimal-win" and (n_seats != 2 or spec.params.get("vs")):
            raise UserError(f"--log: {spec.name} is played in logs only as the two-seat "
                            "optimum (optimal-win, two seats)")
        if fam not in ("threshold", "ai", "max-ev", "optimal-win"):
            raise UserError(f"--log: {spec.name} is not played by the log driver (it plays "
                            "threshold-T, ai, max-ev, optimal-win, optimal, greedy)")

    def decide(self, roll, tp, me, others, last_round):
        from dicelab.farkle.advise import advise, legal_setasides
        from dicelab.farkle.rules import dice_after

        fam, rules = self.spec.family, self.rules
        if fam in ("max-ev", "optimal-win"):
            if fam == "max-ev":
                a = advise(roll, turn_points=tp, rules=rules)
            else:
                a = advise(roll, turn_points=tp, me=me, opp=others[0], target=self.target,
                           rules=rules)
            o = a.options[0]
            return list(o.keep), o.action == "bank"
        opts = legal_setasides(rules, roll)
        keep, pts = max(opts, key=lambda kp: (len(kp[0]), kp[1]))
        total_tp = tp + pts
        left = dice_after(len(roll), len(keep))
        if fam == "threshold":
            threshold = self.spec.params["threshold"] if "threshold" in self.spec.params \
                else int(self.spec.name.split("-")[1])
            bank = total_tp >= threshold
        else:
            p = self.spec.params
            best = max(others) if others else me
            deficit = max(0, best - me)
            threshold = p["base"] + p["step"] * min(p["max-steps"], deficit // p["per"])
            if left == 2:
                threshold -= p["two-dice"]
            elif left == 1:
                threshold -= p["one-die"]
            bank = total_tp >= threshold
            if bank and last_round and p["chase"] and others and me + total_tp <= best:
                bank = False
        return list(keep), bank and rules.can_bank(total_tp, left)


def _farkle_game(seats: list[_FarkleSeat], rules, target: int, first: int, rng) -> list[dict]:
    from dicelab.farkle.advise import legal_setasides
    from dicelab.farkle.rules import FIRST_TO_BANK, PENALTY_STREAK, dice_after, setaside_points

    n = len(seats)
    totals, streak = [0] * n, [0] * n
    seat, trigger = first, None
    events = []
    for _ in range(5_000 * n):  # the kernels' cap on rounds
        others = [totals[i] for i in range(n) if i != seat]
        n_dice, tp, rolls, keeps, end = 6, 0, [], [], "bust"
        for _ in range(MAX_ROLLS):
            roll = sorted(int(x) for x in rng.integers(1, 7, n_dice))
            rolls.append(roll)
            if not legal_setasides(rules, roll):
                break
            keep, bank = seats[seat].decide(roll, tp, totals[seat], others,
                                            trigger is not None)
            keeps.append(keep)
            tp += setaside_points(rules, keep)
            n_dice = dice_after(n_dice, len(keep))
            if bank:
                end = "bank"
                break
        else:
            raise UserError(f"--log: a turn of {seats[seat].spec.name} ran past {MAX_ROLLS} "
                            "rolls")
        events.append({"seat": seat, "rolls": rolls, "keeps": keeps, "end": end})
        if end == "bank":
            totals[seat] += tp
            streak[seat] = 0
        else:
            streak[seat] += 1
            if streak[seat] == PENALTY_STREAK:
                totals[seat] -= rules.farkle_penalty
                streak[seat] = 0
        if end == "bank" and totals[seat] >= target and trigger is None:
            if n == 1 or rules.ending_code == FIRST_TO_BANK:
                return events
            trigger = seat
        seat = (seat + 1) % n
        if trigger is not None and seat == trigger:
            return events
    return events


# --- entry points ----------------------------------------------------------------------------


def play_games(game: str, policies: list[str], *, games: int, seed: int,
               target: int | None = None, rules=None, ending: str | None = None,
               first_seat: int | None = None, progress=None) -> list[tuple[dict, list[dict]]]:
    """``games`` games of ``policies`` (one per seat: names or PolicySpecs) as (header,
    turn events) pairs, ready for :func:`dicelab.gamelog.write_games`. Farkle's starting
    seat rotates with the game index unless ``first_seat`` is given. Penta:
    ``progress(done, games)`` after each game."""
    from dicelab.registry import PolicySpec, parse_policy

    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_LOG_GAMES:
        raise UserError(f"--log-games must be 1 to {MAX_LOG_GAMES:,}, not {games}")
    specs = [p if isinstance(p, PolicySpec) else parse_policy(p, game) for p in policies]
    names = [{"name": f"seat {i}", "policy": s.name} for i, s in enumerate(specs)]
    out = []
    if game == "penta":
        from dicelab.penta.policy import WidgetPolicy
        from dicelab.penta.referee import play_game
        from dicelab.penta.rules import get_rules

        rs = get_rules(rules)
        policies = [s.policy if s.family == "user" else WidgetPolicy(s.family) for s in specs]
        for rng in _rngs(seed, games):
            header = new_game_header("penta", rs, names, seed=seed)
            header["first_seat"] = 0
            out.append((header, play_game(policies, rs, rng)))
            if progress is not None:
                progress(len(out), games)
        return out
    from dicelab.farkle.rules import check_target, load_rules

    table = load_rules(rules, ending)
    t = check_target(target)
    seats = [_FarkleSeat(s, table, t, len(specs)) for s in specs]
    n = len(specs)
    if first_seat is not None and not 0 <= first_seat < n:
        raise UserError(f"--first must be a seat 0..{n - 1}, not {first_seat}")
    for i, rng in enumerate(_rngs(seed, games)):
        first = first_seat if first_seat is not None else i % n
        header = new_game_header("farkle", table, names, target=t, seed=seed, first_seat=first)
        out.append((header, _farkle_game(seats, table, t, first, rng)))
    return out


def check_log_path(path, games: int) -> None:
    """``UserError`` before a run if ``path`` cannot take the log or ``games`` is out of
    range."""
    from dicelab.files import check_output

    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_LOG_GAMES:
        raise UserError(f"--log-games must be 1 to {MAX_LOG_GAMES:,}, not {games}")
    check_output(path, "--log")


def simulation_log(path, strategy: str, vs: list[str] | None, *, games: int, seed: int,
                   game: str | None = None, target: int | None = None, rules=None,
                   ending: str | None = None, first_seat: int | None = None) -> None:
    """Write the log of ``games`` games of a simulation's seats (``simulate --log``)."""
    from dicelab.registry import parse_seats

    g, specs = parse_seats(strategy, vs, game)
    played = play_games(g, [s.name for s in specs], games=games, seed=seed, target=target,
                        rules=rules, ending=ending, first_seat=first_seat)
    write_games(path, played)


__all__ = ["DEFAULT_LOG_GAMES", "LOG_STREAM", "MAX_LOG_GAMES", "check_log_path", "play_games",
           "simulation_log"]
