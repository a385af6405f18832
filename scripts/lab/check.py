#!/usr/bin/env python3
"""The lab's judge: compares iobench's runs with fio's inside a guest.

It runs on the host once the guest is off (python's start-up costs tens of seconds under
TCG), over the per-run scratch directory the guest wrote. A run is a directory made by
guest-lib.sh's `run_tool`: out.json (the tool's JSON output) or out.txt, and before.json
and after.json (each watched block device's /sys/block/DEV/stat: read and write requests
and sectors). `check.py judge --fio RUN... --iob RUN... [--timed]` prints
one `ok`/`FAIL` line per check and exits 1 when any fails:

- the job names and each direction's JSON keys are fio's, key for key;
- a job of fixed size did the same I/O count and bytes as fio, per job and direction;
- the device saw request counts (fixed size) or requests per I/O and sectors per request
  (time-based, where the I/O count follows speed) within fio's own range over its runs,
  widened by a tolerance (--tol, default 3%) for the few requests a run's neighbours add;
  on a filesystem (--meta N), the requests of a direction no job does are the
  filesystem's own, and up to N more than fio's maximum are allowed.
"""
import argparse
import json
import os
import re
import sys

DIRS = ("read", "write", "trim")


def load(run):
    with open(os.path.join(run, "out.json")) as f:
        text = f.read()
    # fio prints notes before the JSON on some paths; the JSON is the first '{' on.
    out = json.loads(text[text.index("{"):])
    return out, stat_delta(run)


def stat_delta(run):
    with open(os.path.join(run, "before.json")) as f:
        before = json.load(f)
    with open(os.path.join(run, "after.json")) as f:
        after = json.load(f)
    return {dev: {k: after[dev][k] - before[dev][k] for k in after[dev]} for dev in after}


def jobs(out):
    return [j for j in out.get("jobs", [])]


class Judge:
    def __init__(self):
        self.failed = 0

    def check(self, cond, what):
        print(("ok " if cond else "FAIL ") + what)
        if not cond:
            self.failed += 1


def in_range(value, refs, tol, slack=0.0):
    lo, hi = min(refs), max(refs)
    return lo * (1 - tol) - slack <= value <= hi * (1 + tol) + slack


def judge(args):
    j = Judge()
    fio = [load(r) for r in args.fio]
    iob = [load(r) for r in args.iob]
    label = args.label
    f0 = fio[0][0]
    for k, (out, _) in enumerate(iob):
        fn = [x["jobname"] for x in jobs(f0)]
        inn = [x["jobname"] for x in jobs(out)]
        j.check(fn == inn, f"{label}: iobench's jobs {inn} are fio's {fn}")
        for fj, ij in zip(jobs(f0), jobs(out)):
            for d in DIRS:
                if d in fj:
                    fk, ik = set(fj[d]), set(ij.get(d, {}))
                    j.check(fk == ik, f"{label}: {fj['jobname']} {d}: JSON keys as fio's"
                            + ("" if fk == ik else f" (only fio: {sorted(fk - ik)}, only iobench: {sorted(ik - fk)})"))
            if not args.timed:
                for d in DIRS:
                    fv = [(jobs(o)[jobs(f0).index(fj)][d]["total_ios"],
                           jobs(o)[jobs(f0).index(fj)][d]["io_bytes"]) for o, _ in fio]
                    iv = (ij[d]["total_ios"], ij[d]["io_bytes"])
                    if fv[0] == (0, 0) and iv == (0, 0):
                        continue
                    j.check(iv in fv, f"{label}: {fj['jobname']} {d}: iobench's I/O "
                            f"{iv[0]} ios, {iv[1]} bytes; fio's {sorted(set(fv))}")
    devs = sorted(fio[0][1])
    for out, stat in iob:
        for dev in devs:
            for d, ios_key, sect_key in (("read", "rios", "rsect"), ("write", "wios", "wsect")):
                fr = [s[dev][ios_key] for _, s in fio]
                fs = [s[dev][sect_key] for _, s in fio]
                ir, isect = stat[dev][ios_key], stat[dev][sect_key]
                if max(fr) == 0 and ir == 0:
                    continue
                if args.meta and all(tool_ios(o, d) == 0 for o, _ in fio + iob):
                    # No job does this direction: the requests are the filesystem's own
                    # (metadata re-read after drop_caches), counted, not the tools' work.
                    j.check(ir <= max(fr) + args.meta,
                            f"{label}: {dev} {d} requests {ir} (the filesystem's; fio's {fr}, "
                            f"up to {args.meta} more allowed)")
                    continue
                if not args.timed:
                    j.check(in_range(ir, fr, args.tol, 4),
                            f"{label}: {dev} {d} requests {ir}, fio's {fr}")
                    j.check(in_range(isect, fs, args.tol, 64),
                            f"{label}: {dev} {d} sectors {isect}, fio's {fs}")
                else:
                    fper = [r / max(1, tool_ios(o, d)) for (o, _), r in zip(fio, fr)]
                    iper = ir / max(1, tool_ios(out, d))
                    j.check(in_range(iper, fper, args.tol, 0.02),
                            f"{label}: {dev} {d} requests per I/O {iper:.3f}, fio's "
                            + ", ".join(f"{x:.3f}" for x in fper))
                    fsz = [s / max(1, r) for s, r in zip(fs, fr)]
                    isz = isect / max(1, ir)
                    j.check(in_range(isz, fsz, args.tol, 0.5),
                            f"{label}: {dev} {d} sectors per request {isz:.1f}, fio's "
                            + ", ".join(f"{x:.1f}" for x in fsz))
    return 1 if j.failed else 0


def num(x):
    """t/io_uring's figures: 1496, 49.08K, 1.20M."""
    return float(x[:-1]) * {"K": 1e3, "M": 1e6}[x[-1]] if x[-1] in "KM" else float(x)


def peak(args):
    """An `iobench peak` run: its per-second IOPS lines, its maximum and its latency
    percentiles (-t1), against the device's counters: the device saw at least the I/O
    the whole seconds counted, each request of the block size (-b, in sectors)."""
    j = Judge()
    with open(os.path.join(args.run, "out.txt")) as f:
        text = f.read()
    stat = stat_delta(args.run)
    dev = sorted(stat)[0]
    reqs, sect = stat[dev]["rios"], stat[dev]["rsect"]
    m = re.search(r"^Maximum IOPS=([0-9.]+[KM]?)", text, re.M)
    lines = [num(x) for x in re.findall(r"^IOPS=([0-9.]+[KM]?),", text, re.M)]
    # A second can show 0 under TCG (a polled reap spinning while the host is busy), so
    # only the consistency of the report is asserted, and that the device did reads.
    j.check(m is not None and bool(lines) and num(m.group(1)) == max(lines) and reqs > 0,
            f"{args.label}: Maximum IOPS={m.group(1) if m else None} is the top of the "
            f"per-second lines {lines}")
    j.check(reqs >= 0.97 * sum(lines),
            f"{args.label}: {dev} saw {reqs} reads, the whole seconds counted {sum(lines):.0f}")
    j.check(sect == reqs * args.sectors,
            f"{args.label}: {dev} read {sect} sectors in {reqs} requests "
            f"({args.sectors} a request expected)")
    if args.latency:
        j.check("Latency percentiles" in text, f"{args.label}: latency percentiles (-t1)")
    return 1 if j.failed else 0


def tool_ios(out, d):
    return sum(x[d]["total_ios"] for x in jobs(out) if d in x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    jp = sub.add_parser("judge")
    jp.add_argument("--fio", nargs="+", required=True)
    jp.add_argument("--iob", nargs="+", required=True)
    jp.add_argument("--timed", action="store_true")
    jp.add_argument("--tol", type=float, default=0.03)
    jp.add_argument("--label", default="run")
    jp.add_argument("--meta", type=int, default=0,
                    help="on a filesystem: requests allowed beyond fio's in a direction no job does")
    pp = sub.add_parser("peak")
    pp.add_argument("--label", default="peak")
    pp.add_argument("--sectors", type=int, default=1)
    pp.add_argument("--latency", action="store_true")
    pp.add_argument("run")
    args = p.parse_args()
    try:
        sys.exit(judge(args) if args.cmd == "judge" else peak(args))
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"FAIL {args.label}: cannot judge: {e!r}")
        sys.exit(1)


if __name__ == "__main__":
    main()
