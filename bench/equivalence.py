#!/usr/bin/env python3
"""Does iobench measure what fio measures? `iobench compare --tool fio` over a matrix of jobs.

Each job runs with fio and with iobench in turn (fio, iobench, fio, ... for --repeat rounds)
on this machine's disk, in a scratch directory, and compare's Welch's t-test says per metric
(IOPS, bandwidth, p50 and p99 completion latency) whether the two differ beyond the run-to-run
noise. Device-bound jobs (O_DIRECT) must be equal within noise; where the work is mostly the
tool's own (page cache, the null engine, QD1 latency) iobench's lower overhead may show.

    cargo build --release
    python3 bench/equivalence.py                       # the whole matrix, ~15 minutes
    python3 bench/equivalence.py --only null --repeat 3
    python3 bench/equivalence.py --dir /mnt/ssd -o table.md

The scratch directory (a 256 MiB file) is removed at the end, however the run ends.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
METRICS = [("iops", "IOPS"), ("bw", "MiB/s"), ("p50", "p50 µs"), ("p99", "p99 µs")]


def matrix(data, size, runtime):
    """The jobs: (class, label, options). `data` is the shared data file."""
    common = [f"--size={size}", f"--runtime={runtime}", "--time_based"]
    on_file = [f"--filename={data}"] + common
    out = []
    # Device-bound: O_DIRECT through each engine, block sizes, both directions.
    for engine, depths in [("psync", [1]), ("libaio", [8, 32]), ("io_uring", [8, 32])]:
        for bs in ["4k", "128k", "1m", "4m"]:
            for rw in ["read", "write"]:
                for qd in depths:
                    # The deepest queue only where it changes what the device sees.
                    if qd == 32 and bs != "4k":
                        continue
                    out.append((
                        "device",
                        f"{engine} {rw} {bs} QD{qd} direct",
                        [f"--ioengine={engine}", f"--rw={rw}", f"--bs={bs}",
                         f"--iodepth={qd}", "--direct=1"] + on_file,
                    ))
    # QD1 latency: one small I/O at a time, where per-I/O overhead is part of the latency.
    for engine in ["libaio", "io_uring"]:
        out.append((
            "qd1",
            f"{engine} randread 4k QD1 direct",
            [f"--ioengine={engine}", "--rw=randread", "--bs=4k", "--iodepth=1",
             "--direct=1"] + on_file,
        ))
    # Page cache: the file is cached after the first pass, so the tool's cost shows.
    for engine, rw, bs in [("psync", "read", "4k"), ("psync", "read", "128k"),
                           ("io_uring", "read", "4k"), ("psync", "write", "4k")]:
        out.append((
            "cache",
            f"{engine} {rw} {bs} buffered",
            [f"--ioengine={engine}", f"--rw={rw}", f"--bs={bs}", "--direct=0"] + on_file,
        ))
    # The null engine: no device at all, only the tool.
    for bs in ["4k", "128k"]:
        out.append((
            "null",
            f"null randread {bs}",
            ["--ioengine=null", "--rw=randread", f"--bs={bs}"] + common,
        ))
    return [(c, label, ["--name=eq"] + opts) for c, label, opts in out]


def fmt(metric, v):
    if metric == "iops":
        return f"{v / 1000:.1f}k" if v >= 10000 else f"{v:.0f}"
    if metric == "bw":
        return f"{v / 1048576:.1f}"
    return f"{v / 1000:.2f}" if v < 10000 else f"{v / 1000:.1f}"  # ns -> µs


def run_compare(iobench, job, repeat, export):
    cmd = [iobench, "compare", "--tool", "fio", "--repeat", str(repeat),
           "--export-json", export, "--"] + job
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or not os.path.exists(export):
        tail = "\n".join(p.stderr.strip().splitlines()[-4:])
        return None, f"exit {p.returncode}: {tail}"
    with open(export) as f:
        return json.load(f), None


def rows_of(doc, label):
    """One row per metric: fio's and iobench's mean ± sd, the difference, p, the verdict."""
    res = {(r["side"], r["metric"]): r for r in doc["results"]}
    rows = []
    for metric, unit in METRICS:
        rel = next((r for r in doc["relative"] if r["metric"] == metric), None)
        if rel is None:
            continue
        a, b = res[(rel["baseline"], metric)], res[(rel["side"], metric)]
        p = rel["p_value"]
        rows.append({
            "job": label,
            "metric": unit,
            "fio": f"{fmt(metric, a['mean'])} ± {fmt(metric, a['sd'])}",
            "iobench": f"{fmt(metric, b['mean'])} ± {fmt(metric, b['sd'])}",
            "diff": f"{rel['diff_pct']:+.1f}%",
            "p": "-" if p is None else f"{p:.3f}",
            "verdict": rel["verdict"],
        })
    return rows


def tool_version(cmd):
    try:
        return subprocess.run(cmd + ["--version"], stdout=subprocess.PIPE, text=True,
                              check=True).stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iobench", default=os.path.join(ROOT, "target", "release", "iobench"))
    ap.add_argument("--dir", default="/var/tmp", help="where the scratch directory goes")
    ap.add_argument("--repeat", type=int, default=5, help="alternations per job")
    ap.add_argument("--runtime", default="2", help="seconds per run")
    ap.add_argument("--size", default="256m")
    ap.add_argument("--only", help="run only jobs whose label or class contains this")
    ap.add_argument("-o", "--output", help="write the Markdown table here too")
    args = ap.parse_args()

    if not os.access(args.iobench, os.X_OK):
        sys.exit(f"{args.iobench}: not found; run `cargo build --release` first")
    fio_version = tool_version(["fio"])
    if fio_version is None:
        sys.exit("fio is not installed (apt-get install -y fio)")
    free = shutil.disk_usage(args.dir).free
    if free < 2 << 30:
        sys.exit(f"{args.dir}: only {free >> 20} MiB free; 2 GiB wanted")

    # SIGTERM ends the run like Ctrl-C, so the scratch directory still goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("equivalence: terminated"))
    scratch = tempfile.mkdtemp(prefix="iobench-equiv-", dir=args.dir)
    start = time.monotonic()
    rows, failed = [], []
    try:
        device = subprocess.run(["df", "--output=source", scratch], stdout=subprocess.PIPE,
                                text=True).stdout.split()[-1]
        data = os.path.join(scratch, "eq.dat")
        # Lay the file out once, so neither tool's first run does it.
        subprocess.run(["fio", "--name=layout", f"--filename={data}", f"--size={args.size}",
                        "--rw=write", "--bs=1m", "--direct=1", "--output=/dev/null"],
                       check=True)
        jobs = [j for j in matrix(data, args.size, args.runtime)
                if not args.only or args.only in j[0] or args.only in j[1]]
        for n, (cls, label, job) in enumerate(jobs, 1):
            t0 = time.monotonic()
            export = os.path.join(scratch, "cmp.json")
            doc, err = run_compare(args.iobench, job, args.repeat, export)
            if doc is None:
                failed.append((label, err))
                print(f"[{n}/{len(jobs)}] {label}: FAILED {err}", file=sys.stderr)
                continue
            r = rows_of(doc, label)
            for x in r:
                x["class"] = cls
            rows += r
            iops = next((x for x in r if x["metric"] == "IOPS"), None)
            print(f"[{n}/{len(jobs)}] {label}: {time.monotonic() - t0:.0f} s; IOPS fio "
                  f"{iops and iops['fio']} iobench {iops and iops['iobench']} "
                  f"({iops and iops['verdict']})", file=sys.stderr)
            os.remove(export)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.monotonic() - start

    iobench_version = tool_version([args.iobench]) or "?"
    out = [
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on "
        f"{platform.node()} ({os.cpu_count()} CPUs, Linux {platform.release()}), {device}; "
        f"{fio_version} against {iobench_version}; {args.repeat} alternations per job, "
        f"runtime={args.runtime} runs on a {args.size} file; `bench/equivalence.py` took "
        f"{elapsed / 60:.1f} min. Latencies are completion latencies (clat) in µs, "
        "bandwidth in MiB/s; verdict: Welch's t-test, p < 0.05 differs.",
        "",
        "| job | metric | fio mean ± sd | iobench mean ± sd | diff | p | verdict |",
        "|---|---|--:|--:|--:|--:|---|",
    ]
    for x in rows:
        out.append(f"| {x['job']} | {x['metric']} | {x['fio']} | {x['iobench']} | "
                   f"{x['diff']} | {x['p']} | {x['verdict']} |")
    for label, err in failed:
        out.append(f"| {label} | - | - | - | - | - | failed: {err.splitlines()[0]} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    summary = {}
    for x in rows:
        summary.setdefault((x["class"], x["verdict"]), 0)
        summary[(x["class"], x["verdict"])] += 1
    for (cls, verdict), count in sorted(summary.items()):
        print(f"{cls}: {count} rows {verdict}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
