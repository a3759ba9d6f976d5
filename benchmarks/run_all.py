"""Run the benchmarks and write the one table of measured speeds (``make bench``).

    .venv/bin/python benchmarks/run_all.py [--out docs/benchmarks.md] [--only SCRIPT ...]

Runs every script of :data:`SCRIPTS` with ``--json`` (each prints one JSON list of rows
``{"what", "figure"}``) and writes them as a Markdown table, each row with the command
that produced it, the machine, the date and the load average before and after, to
``--out`` (atomically): every row comes from this one run. The README links that file;
every other doc that states a measured speed links to it. The machine should be
otherwise idle: the figures are wall-clock rates.

``--only bench_sprt.py`` (repeatable) runs only those scripts and replaces their rows in
the existing table; each such row says when and on what machine it was measured and the
load average around its run (``--shared``: and that the machine was shared with other
work), since it does not come from the run the header describes. The other rows stay as
they were.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import benchopts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: (script, extra arguments), in the order of the table.
SCRIPTS = [
    ("bench_farkle.py", []),
    ("bench_farkle_solve.py", []),
    ("bench_two_player.py", ["--targets", "10000"]),
    ("bench_house_rules.py", ["--head-to-head", "--repeat", "1"]),
    ("bench_house_rules.py", ["--facebook-only"]),
    ("bench_house_rules.py", ["--facebook-only", "--facebook-response", "threshold-300"]),
    ("bench_penta.py", []),
    ("bench_penta_distribution.py", []),
    ("bench_penta_objectives.py", []),
    ("bench_sprt.py", []),
    ("bench_tournament.py", []),
    ("analyse_speed.py", []),
    ("bench_first_run.py", []),
    ("bench_engine.py", []),
    ("bench_user_policy.py", []),
    ("bench_rl.py", []),
    ("bench_referee.py", []),
]


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def only_note(day: dt.date, machine: str, load_before: float, load_after: float,
              shared: bool) -> str:
    """What a row measured by ``--only`` says of its run: the day, the machine (the
    table's header names the machine of the whole run, maybe another) and the load."""
    return (f" (measured {day.isoformat()} on {machine}, load average {load_before:.1f} to "
            f"{load_after:.1f}" + ("; the machine shared with other work)" if shared else ")"))


def _replace_rows(text: str, scripts: list[str], new: list[str]) -> str:
    """The table ``text`` with the rows of ``scripts`` replaced by ``new`` (where the first
    of them stood; at the end if there were none)."""
    lines = text.rstrip("\n").split("\n")

    def of(line: str) -> bool:
        return any(f"`python benchmarks/{s}" in line for s in scripts)

    at = next((i for i, line in enumerate(lines) if of(line)), len(lines))
    kept = [line for line in lines if not of(line)]
    return "\n".join(kept[:at] + new + kept[at:]) + "\n"


def main() -> int:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    ap.add_argument("--only", action="append", metavar="SCRIPT",
                    help="run only this script (repeatable) and replace its rows")
    ap.add_argument("--shared", action="store_true",
                    help="with --only: say that the machine was shared with other work")
    args = ap.parse_args()
    known = [script for script, _ in SCRIPTS]
    for script in args.only or []:
        if script not in known:
            ap.error(f"--only {script}: not one of {', '.join(known)}")
    if args.shared and not args.only:
        ap.error("--shared says how the rows of --only were measured: give --only SCRIPT")
    from dicelab.errors import UserError
    from dicelab.files import check_output

    try:
        check_output(args.out, "--out")
    except UserError as exc:
        ap.error(str(exc))
    if args.only and not args.out.is_file():
        ap.error(f"--out {args.out}: --only replaces rows of an existing table, and there "
                 "is none")
    rows, failed = [], []
    load_before = os.getloadavg()[0]
    scratch = tempfile.mkdtemp(prefix="dicelab-bench-")
    env = {**os.environ, "DICELAB_CACHE_DIR": scratch}
    for script, extra in SCRIPTS:
        if args.only and script not in args.only:
            continue
        print(f"=== {script}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, str(HERE / script), *extra, "--json"],
                              env=env, capture_output=True, text=True)
        if done.returncode != 0:
            failed.append(script)
            print(done.stderr, file=sys.stderr)
            continue
        command = " ".join(["python", f"benchmarks/{script}", *extra])
        rows += [{**r, "command": command}
                 for r in json.loads(done.stdout.strip().splitlines()[-1])]
    shutil.rmtree(scratch, ignore_errors=True)
    load_after = os.getloadavg()[0]
    if args.only:  # rows of their own run, which say so; a script that failed keeps its own
        note = only_note(dt.date.today(), _machine(), load_before, load_after, args.shared)
        text = _replace_rows(args.out.read_text(), [s for s in args.only if s not in failed],
                             [f"| {r['what']} | {r['figure']} | `{r['command']}`{note} |"
                              for r in rows])
    else:
        lines = ["# Measured speed", "",
                 f"Generated by `make bench` (`benchmarks/run_all.py`) on "
                 f"{dt.date.today().isoformat()}: {_machine()}. Wall-clock figures of one "
                 "run (each script reports the best of a few repeats); a shared machine "
                 f"reads slower (load average {load_before:.1f} at the start, "
                 f"{load_after:.1f} at the end).",
                 "", "| what | figure | command |", "|---|---|---|"]
        lines += [f"| {r['what']} | {r['figure']} | `{r['command']}` |" for r in rows]
        text = "\n".join(lines) + "\n"
    from dicelab.files import write_output

    write_output(args.out, text.encode("utf-8"), "--out")
    print(text)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
