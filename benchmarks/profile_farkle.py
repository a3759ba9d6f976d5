"""Where the lanes kernel spends its time: perf samples mapped onto its machine code.

    .venv/bin/python benchmarks/profile_farkle.py [--seats 1] [--seconds 6] [--top 25]

Runs threshold-300 games to 10,000 on one thread under ``perf record -e cpu-clock``
(a software event: it works on virtual machines without hardware counters), dumps the
jitted chunk function's machine code from memory, disassembles it with ``objdump`` and
prints the share of samples per 256-byte block of code and the hottest instructions.
Read the blocks against the source: the draw loop is the scalar code with ``rorx`` (the
generator), the vector loop the run of ``zmm`` (or ``ymm``) instructions, the scalar step
what lies between. Samples land on the instruction that waits, so a load's cost shows
on the instruction after it. Needs ``perf`` and ``objdump``; for reading, not a target.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CODE_BYTES = 40_000  # more than the chunk function's machine code


def child(seats: int, seconds: float, dump: Path) -> None:
    """Compile, dump the chunk function's code, then play chunks for ``seconds``."""
    import numba
    import numpy as np

    from dicelab.farkle import kernels as K
    from dicelab.farkle import lanes
    from dicelab.farkle import simulate as fsim
    from dicelab.farkle.scoring import PRESETS, compile_table
    from dicelab.seeding import CHUNK_GAMES, chunk_states

    numba.set_num_threads(1)
    target = 10_000
    _, max_keep, all_score = fsim.scoring_arrays(compile_table(PRESETS["default"]))
    out = lanes.outcome_table(max_keep, all_score)
    thr = tuple([300 // 50] * seats)
    bins = (target + fsim.HIST_HEADROOM) // 50 + 1

    def play(state, games):
        lanes._chunk(state.copy(), 0, games, -1, target, thr, out, lanes.lanes_for(seats),
                     np.zeros((seats, K.N_STATS), np.int64), np.zeros((seats, bins), np.int64),
                     np.zeros(K.N_CHUNK_COUNTERS, np.int64))

    states = chunk_states(1, 0, 16)
    play(states[0], 100)  # compile
    cres = lanes._chunk.overloads[lanes._chunk.signatures[0]]
    addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    dump.write_bytes(ctypes.string_at(addr, CODE_BYTES))
    dump.with_suffix(".addr").write_text(hex(addr))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for s in states:
            play(s, CHUNK_GAMES)


def report(data: Path, dump: Path, top: int) -> None:
    addr = int(dump.with_suffix(".addr").read_text(), 16)
    ips = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip"], check=True,
                         capture_output=True, text=True).stdout.split()
    samples = collections.Counter(int(x, 16) - addr for x in ips)
    inside = {off: n for off, n in samples.items() if 0 <= off < CODE_BYTES}
    total = sum(inside.values())
    if not total:
        raise SystemExit("error: no samples in the chunk function")
    print(f"{total:,} of {sum(samples.values()):,} samples in the chunk function")
    dis = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64",
                          f"--adjust-vma={addr}", str(dump)], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    text = {}
    for line in dis:
        m = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)", line)
        if m:
            text[int(m.group(1), 16) - addr] = m.group(2).strip()
    blocks = collections.Counter()
    for off, n in inside.items():
        blocks[off // 256 * 256] += n
    print("share of samples per 256-byte block of code:")
    for off in sorted(blocks):
        if blocks[off] / total >= 0.002:
            print(f"  {off:6x}  {100 * blocks[off] / total:6.2f}%")
    print(f"hottest {top} instructions:")
    for off, n in sorted(inside.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {off:6x}  {100 * n / total:6.2f}%  {text.get(off, '?')}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--child", metavar="DUMP", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.seats, args.seconds, Path(args.child))
        return
    for tool in ("perf", "objdump"):
        if shutil.which(tool) is None:
            raise SystemExit(f"error: {tool} is not installed")
    with tempfile.TemporaryDirectory(prefix="dicelab-profile-") as tmp:
        data, dump = Path(tmp) / "perf.data", Path(tmp) / "chunk.bin"
        env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "20000", "-o",
                        str(data), sys.executable, __file__, "--seats", str(args.seats),
                        "--seconds", str(args.seconds), "--child", str(dump)],
                       env=env, check=True)
        report(data, dump, args.top)


if __name__ == "__main__":
    main()
