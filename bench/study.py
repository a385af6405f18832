#!/usr/bin/env python3
"""The cost of a study's point: `iobench sweep` against the same runs made one process at a
time, as a shell loop makes them.

    python3 bench/study.py [--points 20] [--binary target/release/iobench]

Prints, per point: the wall time of a sweep point, of a plain process run of the same job,
and of a sweep point of a 1 s time-based job less its 1 s (the sweep's own overhead per
point, which issue 16 wants at 50 ms or less).
"""

import argparse
import os
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/iobench"))
    a = ap.parse_args()
    n = a.points
    scratch = tempfile.mkdtemp(prefix="iobench-study-")
    try:
        job = ["--name=p", "--ioengine=null", "--rw=randread", "--size=4m"]
        values = ",".join(str(4096 * (i + 1)) for i in range(n))
        sweep = wall([a.binary, "sweep", "--axis", f"bs={values}", "-o",
                      os.path.join(scratch, "s1"), "--"] + job)
        plain = sum(wall([a.binary, "--output-format=json+", f"--bs={4096 * (i + 1)}"] + job)
                    for i in range(n))
        timed = ["--name=t", "--ioengine=null", "--rw=randread", "--size=4m",
                 "--time_based", "--runtime=1"]
        k = 5
        tsweep = wall([a.binary, "sweep", "--axis", "iodepth=" + ",".join(str(i + 1) for i in range(k)),
                       "-o", os.path.join(scratch, "s2"), "--"] + timed)
        print(f"points: {n}")
        print(f"sweep point (size-bound null job): {sweep / n * 1000:.1f} ms")
        print(f"plain process run of the same job:  {plain / n * 1000:.1f} ms")
        print(f"sweep cheaper than a shell loop by: {(plain - sweep) / n * 1000:.1f} ms per point")
        print(f"overhead of a 1 s time-based sweep point beyond its 1 s: "
              f"{(tsweep / k - 1.0) * 1000:.1f} ms")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
