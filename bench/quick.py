#!/usr/bin/env python3
"""What `iobench quick` adds to the runs it is made of.

quick runs each measurement in its own process-less step (the same in-process path a
plain run takes, see src/session.rs). This script measures, for one preset:

  quick    the wall time of `iobench quick ... --output-format=json` (one process), and
           inside it: the layout's and each run's own wall time (JSON `layout_ms`,
           `run_ms`), so quick's own work per measurement = (elapsed - layout - runs) / N;
  plain    the same N measurements (and the layout) as N+1 plain `iobench` processes with
           the command lines `quick --dry-run` prints, their wall times summed.

It prints per measurement: quick's own overhead in-process, and quick's wall time minus
the plain runs' (negative: quick is cheaper than starting the plain runs one by one).
The target is 50 ms or less per measurement.

    python3 bench/quick.py                        # default preset, 3 loops, 4 MiB file, 5 rounds
    python3 bench/quick.py --preset nvme --loops 5 --rounds 3 --dir /mnt/x

Page-cache drops are off (they cost the same in both and need root); --mode and sizes keep
each run short so that overheads are not lost in the I/O time.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def quick_args(a, target):
    return ["quick", "--preset", a.preset, "--loops", str(a.loops), "--size", a.size,
            "--duration", a.duration, "--no-drop-caches", target]


def run_quick(a, target):
    t = time.perf_counter()
    out = subprocess.run([a.iobench] + quick_args(a, target) + ["--output-format=json"],
                         check=True, capture_output=True, text=True).stdout
    wall = (time.perf_counter() - t) * 1e3
    doc = json.loads(out)
    q = doc["iobench_quick"]
    runs = [l["run_ms"] for r in doc["results"] for l in r["loops"]]
    return wall, q["elapsed_ms"], q["layout_ms"], runs


def run_plain(a, target):
    """The dry run's commands, each as a plain iobench process (the test file made and
    removed by this script, as quick does it)."""
    lines = subprocess.run([a.iobench] + quick_args(a, target) + ["--dry-run"], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    cmds = [shlex.split(l)[1:] for l in lines if l.startswith("fio ")]
    fname = next(x.split("=", 1)[1] for x in cmds[0] if x.startswith("--filename="))
    open(fname, "x").close()
    t = time.perf_counter()
    try:
        n = 0
        for i, c in enumerate(cmds):
            times = 1 if i == 0 else a.loops
            for _ in range(times):
                subprocess.run([a.iobench] + c, check=True, capture_output=True)
                n += 1
        wall = (time.perf_counter() - t) * 1e3
    finally:
        os.unlink(fname)
    return wall, n - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iobench", default=os.path.join(ROOT, "target/release/iobench"))
    ap.add_argument("--preset", default="default")
    ap.add_argument("--loops", type=int, default=3)
    ap.add_argument("--size", default="4m")
    ap.add_argument("--duration", default="2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where the test files go (default: a "
                    "temporary directory under the repository's target/)")
    a = ap.parse_args()
    base = a.dir or os.path.join(ROOT, "target")
    os.makedirs(base, exist_ok=True)
    target = tempfile.mkdtemp(prefix="study-", dir=base)
    own, diff, qwalls, pwalls = [], [], [], []
    try:
        for _ in range(a.rounds):
            # A B A B: quick, then the same runs as plain processes.
            wall, elapsed, layout, runs = run_quick(a, target)
            pwall, n = run_plain(a, target)
            assert n == len(runs), (n, len(runs))
            own.append((elapsed - layout - sum(runs)) / len(runs))
            diff.append((wall - pwall) / len(runs))
            qwalls.append(wall)
            pwalls.append(pwall)
    finally:
        os.rmdir(target)
    med = statistics.median
    print(f"preset {a.preset}: {len(runs)} measurements x {a.rounds} rounds, file {a.size}, "
          f"at most {a.duration} s each, in {target}")
    print(f"quick wall (one process):        {med(qwalls):9.1f} ms  (median)")
    print(f"plain runs wall (N+1 processes): {med(pwalls):9.1f} ms  (median)")
    print(f"quick's own work per measurement, in-process: {med(own):7.2f} ms  "
          f"(max {max(own):.2f}; target <= 50)")
    print(f"quick minus plain runs, per measurement:      {med(diff):7.2f} ms  "
          f"(max {max(diff):.2f}; negative: quick is cheaper)")


if __name__ == "__main__":
    main()
