#!/usr/bin/env python3
"""Does iobench measure what fio measures? Both tools, alternated, over the seeds' jobs and a matrix.

Each job runs with fio and with iobench in turn (fio, iobench, fio, ... for --repeat rounds;
alternated, because the disk and the host are shared and drift) in a scratch directory on
this machine's disk. Per job and metric (IOPS, p50 completion latency) it reports each
tool's mean ± σ, the difference, and a two one-sided test (TOST, Welch's t with
Welch-Satterthwaite degrees of freedom) against a margin of ±5 % of fio's mean:

- "equivalent": the 90 % confidence interval of the difference lies inside ±5 %
  (both one-sided tests reject at 0.05);
- "different": the interval lies wholly outside ±5 %;
- "cannot tell — n runs give ±X %": the interval straddles the margin; X is its half-width
  (what this many runs can resolve on this host).

The jobs: the seeds' (/work/shared/cases or tests/cases: seed000's and seed001's command
lines, seed004's job files; seed002's peak mode and seed003's devices are left out), and a
matrix of O_DIRECT reads and writes (psync, libaio, io_uring; 4k-8m; QD 1-32), the page
cache and the null engine. Python 3, no dependencies.

    cargo build --release
    python3 bench/equivalence.py                        # the default matrix and the seeds
    python3 bench/equivalence.py --only device --repeat 8
    python3 bench/equivalence.py --matrix full -o table.md
    python3 bench/equivalence.py --no-seeds --dir /mnt/ssd

The scratch directory is removed at the end, however the run ends.
"""

import argparse
import datetime
import glob
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARGIN = 0.05
ALPHA = 0.05


# --- Statistics: Student's t distribution from the regularized incomplete beta function.

def _betacf(a, b, x):
    """The continued fraction of I_x(a, b) (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-14:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lnfront = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
               + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return math.exp(lnfront) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lnfront) * _betacf(b, a, 1 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with `df` (real) degrees of freedom."""
    if math.isinf(df):
        return 0.5 * math.erfc(-t / math.sqrt(2))
    tail = 0.5 * betainc(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t > 0 else tail


def t_ppf(p, df):
    """The p-quantile of Student's t (bisection; p in (0, 1))."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def mean_sd(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def tost(fio, ours, margin=MARGIN, alpha=ALPHA):
    """Welch TOST of iobench's samples against fio's at ±margin of fio's mean.

    Returns (diff %, p of TOST, half-width % of the 1-2·alpha interval, verdict)."""
    (m1, s1), (m2, s2) = mean_sd(fio), mean_sd(ours)
    n1, n2 = len(fio), len(ours)
    if m1 == 0 or n1 < 2 or n2 < 2:
        return None, None, None, "cannot tell — too few runs"
    d = m2 - m1
    v1, v2 = s1 * s1 / n1, s2 * s2 / n2
    se = math.sqrt(v1 + v2)
    delta = margin * abs(m1)
    if se == 0:
        inside = abs(d) < delta
        return 100 * d / m1, 0.0 if inside else 1.0, 0.0, \
            "equivalent" if inside else "different"
    df = (v1 + v2) ** 2 / ((v1 * v1 / (n1 - 1) if n1 > 1 else 0)
                           + (v2 * v2 / (n2 - 1) if n2 > 1 else 0))
    p_low = 1 - t_cdf((d + delta) / se, df)   # H0: d <= -delta
    p_high = t_cdf((d - delta) / se, df)      # H0: d >= +delta
    p = max(p_low, p_high)
    half = t_ppf(1 - alpha, df) * se
    lo, hi = d - half, d + half
    if -delta < lo and hi < delta:
        verdict = "equivalent"
    elif lo >= delta or hi <= -delta:
        verdict = "different"
    else:
        verdict = f"cannot tell — {n2} runs give ±{100 * half / abs(m1):.1f} %"
    return 100 * d / m1, p, 100 * half / abs(m1), verdict


# --- The jobs.

def matrix(data, size, runtime, full):
    """(class, label, args) of the matrix. `data` is the shared data file."""
    common = [f"--size={size}", f"--runtime={runtime}", "--time_based"]
    on_file = [f"--filename={data}"] + common
    out = []
    if full:
        shapes = [(e, rw, bs, qd)
                  for e, qds in [("psync", [1]), ("libaio", [1, 4, 8, 16, 32]),
                                 ("io_uring", [1, 4, 8, 16, 32])]
                  for rw in ["read", "write"]
                  for bs in ["4k", "128k", "256k", "1m", "2m", "4m", "8m"]
                  for qd in qds]
    else:
        shapes = [(e, rw, bs, qd)
                  for e, qds in [("psync", [1]), ("libaio", [8, 32]), ("io_uring", [8, 32])]
                  for rw in ["read", "write"]
                  for bs in ["4k", "128k", "1m", "8m"]
                  for qd in qds
                  if qd != 32 or bs in ("4k", "1m")]
    for engine, rw, bs, qd in shapes:
        out.append(("device", f"{engine} {rw} {bs} QD{qd} direct",
                    [f"--ioengine={engine}", f"--rw={rw}", f"--bs={bs}",
                     f"--iodepth={qd}", "--direct=1"] + on_file))
    for engine in ["libaio", "io_uring"]:
        out.append(("qd1", f"{engine} randread 4k QD1 direct",
                    [f"--ioengine={engine}", "--rw=randread", "--bs=4k", "--iodepth=1",
                     "--direct=1"] + on_file))
    for engine, rw, bs in [("psync", "read", "4k"), ("psync", "read", "128k"),
                           ("io_uring", "read", "4k"), ("psync", "write", "4k")]:
        out.append(("cache", f"{engine} {rw} {bs} buffered",
                    [f"--ioengine={engine}", f"--rw={rw}", f"--bs={bs}", "--direct=0"]
                    + on_file))
    for bs in ["4k", "128k"]:
        out.append(("null", f"null randread {bs}",
                    ["--ioengine=null", "--rw=randread", f"--bs={bs}"] + common))
    return [(c, label, ["--name=eq"] + opts) for c, label, opts in out]


RECORDER = """#!/bin/sh
# Records one command line of a seed script instead of running it.
for a in "$@"; do printf '%s\\0' "$a"; done >> "$EQ_RECORD"
printf '\\n' >> "$EQ_RECORD"
"""


def seed_jobs(cases, scratch):
    """(class, label, args, env) of the seeds' jobs: the scripts' command lines as they
    would run them, and seed004's job files."""
    out = []
    rec = os.path.join(scratch, "record.sh")
    with open(rec, "w") as f:
        f.write(RECORDER)
    os.chmod(rec, 0o755)
    for script in sorted(glob.glob(os.path.join(cases, "seed00[01]-*.sh"))):
        name = os.path.basename(script).split("-")[0]
        log = os.path.join(scratch, f"{name}.rec")
        env = dict(os.environ, FIO=rec, DIR=scratch, EQ_RECORD=log)
        subprocess.run(["sh", script], env=env, cwd=scratch, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if not os.path.exists(log):
            continue
        with open(log, "rb") as f:
            lines = [ln for ln in f.read().split(b"\n") if ln]
        for i, ln in enumerate(lines, 1):
            args = [a.decode() for a in ln.split(b"\0") if a]
            rt = next((a.split("=", 1)[1] for a in args if a.startswith("--runtime=")), "0")
            secs = int(re.match(r"\d+", rt).group()) if re.match(r"\d+", rt) else 0
            if secs > 10:
                # seed001's last run is stopped by SIGINT after 2 s: not a steady job.
                continue
            out.append(("seed", f"{name} #{i}", args, {}))
    for jf in sorted(glob.glob(os.path.join(cases, "seed004", "*.fio"))):
        out.append(("seed", f"seed004 {os.path.basename(jf)}", [jf], {"DIR": scratch}))
    return out


# --- Running.

def metrics(report):
    """Per job name: total IOPS (all directions) and the p50 completion latency in µs of
    the direction that did most I/Os."""
    out = {}
    for j in report.get("jobs", []):
        dirs = [j[d] for d in ("read", "write", "trim") if d in j]
        iops = sum(d.get("iops", 0) for d in dirs)
        main = max(dirs, key=lambda d: d.get("total_ios", 0), default={})
        pct = main.get("clat_ns", {}).get("percentile", {})
        p50 = pct.get("50.000000")
        name = j.get("jobname", "?")
        out[name] = {"iops": iops, "p50": p50 / 1000 if p50 else None}
    return out


def run_tool(cmd, env, cwd):
    p = subprocess.run(cmd + ["--output-format=json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env),
                       cwd=cwd)
    text = p.stdout
    i = text.find("{")
    if p.returncode != 0 or i < 0:
        tail = "\n".join(p.stderr.strip().splitlines()[-3:])
        return None, f"exit {p.returncode}: {tail}"
    try:
        return metrics(json.loads(text[i:])), None
    except json.JSONDecodeError as e:
        return None, f"bad JSON: {e}"


def fmt(metric, v):
    if metric == "iops":
        return f"{v / 1000:.1f}k" if v >= 10000 else f"{v:.0f}"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.3f}"


def tool_version(cmd):
    try:
        return subprocess.run(cmd + ["--version"], stdout=subprocess.PIPE, text=True,
                              check=True).stdout.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iobench", default=os.path.join(ROOT, "target", "release", "iobench"))
    ap.add_argument("--fio", default="fio")
    ap.add_argument("--dir", default="/var/tmp", help="where the scratch directory goes")
    ap.add_argument("--repeat", type=int, default=5, help="alternations per job")
    ap.add_argument("--runtime", default="2", help="seconds per matrix run")
    ap.add_argument("--size", default="256m")
    ap.add_argument("--matrix", choices=["default", "full", "none"], default="default")
    ap.add_argument("--no-seeds", action="store_true")
    ap.add_argument("--cases", default=None, help="the seeds' cases (default "
                    "/work/shared/cases, else tests/cases)")
    ap.add_argument("--only", help="run only jobs whose label or class contains this")
    ap.add_argument("--note", default="", help="a sentence for the table's heading "
                    "(e.g. what else the host was doing)")
    ap.add_argument("-o", "--output", help="write the Markdown table here too")
    args = ap.parse_args()
    # The jobs run in the scratch directory: a relative path names a file from here.
    args.iobench = os.path.abspath(args.iobench)
    if os.sep in args.fio:
        args.fio = os.path.abspath(args.fio)

    if not os.access(args.iobench, os.X_OK):
        sys.exit(f"{args.iobench}: not found; run `cargo build --release` first")
    fio_version = tool_version([args.fio])
    if fio_version is None:
        sys.exit("fio is not installed (apt-get install -y fio)")
    free = shutil.disk_usage(args.dir).free
    if free < 3 << 30:
        sys.exit(f"{args.dir}: only {free >> 20} MiB free; 3 GiB wanted")
    cases = args.cases or next((d for d in ["/work/shared/cases",
                                            os.path.join(ROOT, "tests", "cases")]
                                if os.path.isdir(d)), None)

    # SIGTERM ends the run like Ctrl-C, so the scratch directory still goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("equivalence: terminated"))
    scratch = tempfile.mkdtemp(prefix="iobench-equiv-", dir=args.dir)
    start = time.monotonic()
    load0 = os.getloadavg()[0]
    rows, failed = [], []
    try:
        device = subprocess.run(["df", "--output=source", scratch], stdout=subprocess.PIPE,
                                text=True).stdout.split()[-1]
        data = os.path.join(scratch, "eq.dat")
        # Lay the file out once, so neither tool's first run does it.
        subprocess.run([args.fio, "--name=layout", f"--filename={data}",
                        f"--size={args.size}", "--rw=write", "--bs=1m", "--direct=1",
                        "--output=/dev/null"], check=True)
        jobs = []
        if args.matrix != "none":
            jobs += [(c, l, a, {}) for c, l, a in
                     matrix(data, args.size, args.runtime, args.matrix == "full")]
        if not args.no_seeds and cases:
            jobs += seed_jobs(cases, scratch)
        jobs = [j for j in jobs if not args.only or args.only in j[0] or args.only in j[1]]
        for n, (cls, label, job, env) in enumerate(jobs, 1):
            t0 = time.monotonic()
            samples = {"fio": [], "iobench": []}
            err = None
            for _ in range(args.repeat):
                for side, tool in (("fio", args.fio), ("iobench", args.iobench)):
                    m, err = run_tool([tool] + job, env, scratch)
                    if m is None:
                        break
                    samples[side].append(m)
                if err:
                    break
            if err:
                failed.append((label, err))
                print(f"[{n}/{len(jobs)}] {label}: FAILED {err}", file=sys.stderr)
                continue
            names = [k for k in samples["fio"][0] if all(k in s for s in samples["iobench"])]
            for jn in names:
                sub = label if len(names) == 1 else f"{label} {jn}"
                for metric, unit in (("iops", "IOPS"), ("p50", "p50 µs")):
                    a = [s[jn][metric] for s in samples["fio"] if s[jn][metric] is not None]
                    b = [s[jn][metric] for s in samples["iobench"]
                         if s[jn][metric] is not None]
                    if len(a) < 2 or len(b) < 2:
                        continue
                    diff, p, half, verdict = tost(a, b)
                    (ma, sa), (mb, sb) = mean_sd(a), mean_sd(b)
                    rows.append({
                        "class": cls, "job": sub, "metric": unit,
                        "fio": f"{fmt(metric, ma)} ± {fmt(metric, sa)}",
                        "iobench": f"{fmt(metric, mb)} ± {fmt(metric, sb)}",
                        "diff": "-" if diff is None else f"{diff:+.1f}%",
                        "p": "-" if p is None else f"{p:.3f}",
                        "verdict": verdict,
                    })
                    if metric == "iops":
                        print(f"[{n}/{len(jobs)}] {sub}: fio {rows[-1]['fio']} iobench "
                              f"{rows[-1]['iobench']} {rows[-1]['diff']} {verdict}",
                              file=sys.stderr, flush=True)
            print(f"[{n}/{len(jobs)}] {label}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.monotonic() - start
    load1 = os.getloadavg()[0]

    iobench_version = tool_version([args.iobench]) or "?"
    out = [
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on "
        f"{platform.node()} ({os.cpu_count()} CPUs, Linux {platform.release()}), {device}; "
        f"{fio_version} against {iobench_version}; {args.repeat} alternations per job "
        f"(matrix runs runtime={args.runtime}s on a {args.size} file); load average "
        f"{load0:.1f} at the start, {load1:.1f} at the end; `bench/equivalence.py` took "
        f"{elapsed / 60:.1f} min. {args.note}".rstrip(),
        "",
        f"TOST (Welch) at ±{MARGIN * 100:.0f} % of fio's mean, α = {ALPHA}: p is the larger "
        "of the two one-sided p-values.",
        "",
        "| job | metric | fio mean ± σ | iobench mean ± σ | diff | TOST p | verdict |",
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
        v = x["verdict"].split(" —")[0]
        summary[(x["class"], x["metric"], v)] = summary.get((x["class"], x["metric"], v), 0) + 1
    for (cls, metric, verdict), count in sorted(summary.items()):
        print(f"{cls} {metric}: {count} {verdict}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
