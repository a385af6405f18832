#!/usr/bin/env python3
"""How physically contiguous are a tool's I/O buffers, and what requests does the disk see?

Runs one O_DIRECT job on a file of this machine's root filesystem with fio and iobench in
turn (fio, iobench, fio, ... for --runs rounds). During each run it reads the worker's
buffer pages from /proc/PID/pagemap (root only) and counts, per I/O unit, the physically
contiguous runs of pages (the segments a request made from that buffer needs; a queue
with `max_segments` N splits a transfer of more than N runs). Around each run it reads
/sys/block/DEV/stat and the `block_rq_issue` tracepoint (a tracefs instance of its own,
filtered by device), keeping only the requests that fall inside the job's file, so other
work on the shared disk does not count.

    python3 bench/contiguity.py --runs 6                       # io_uring QD8 1 MiB reads
    python3 bench/contiguity.py --engine libaio --bs 1m --qd 8 --runs 6 -o table.md

The scratch file (1 GiB by default) is left for the next run unless --clean is given.
"""

import argparse
import collections
import datetime
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PAGE = 4096
TRACEFS = "/sys/kernel/tracing"


def parse_size(s):
    m = re.fullmatch(r"(\d+)([kmg]?)", s.lower())
    if not m:
        raise SystemExit(f"bad size {s!r}: expected a number with k, m or g")
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2)]


def file_extents(path):
    """The file's physical extents on its device, in 512-byte sectors: [(start, end)]."""
    out = subprocess.run(["filefrag", "-v", "-b4096", path], capture_output=True,
                         text=True, check=True).stdout
    ext = []
    for line in out.splitlines():
        m = re.match(r"\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):", line)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            ext.append((a * 8, (b + 1) * 8))
    return ext


def disk_of(path):
    """The block device (sysfs name, major, minor) holding `path` (a whole disk or partition)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    link = os.path.realpath(f"/sys/dev/block/{major}:{minor}")
    return os.path.basename(link), major, minor, link


def read_stat(sysdir):
    with open(os.path.join(sysdir, "stat")) as f:
        v = [int(x) for x in f.read().split()]
    return v


class Trace:
    """A tracefs instance recording block_rq_issue for one device."""

    def __init__(self, major, minor):
        if not os.path.isdir(os.path.join(TRACEFS, "instances")):
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=False)
        self.dir = os.path.join(TRACEFS, "instances", f"iobench_contig_{os.getpid()}")
        os.mkdir(self.dir)
        ev = os.path.join(self.dir, "events/block/block_rq_issue")
        with open(os.path.join(self.dir, "buffer_size_kb"), "w") as f:
            f.write("16384")
        with open(os.path.join(ev, "filter"), "w") as f:
            f.write(f"dev == {(major << 20) | minor}")
        with open(os.path.join(ev, "enable"), "w") as f:
            f.write("1")

    def clear(self):
        with open(os.path.join(self.dir, "trace"), "w") as f:
            f.write("")

    def requests(self, extents):
        """(direction, sectors) of each request issued inside `extents` since clear()."""
        out = []
        with open(os.path.join(self.dir, "trace")) as f:
            for line in f:
                m = re.search(r"block_rq_issue: \d+,\d+ (\S+) \d+ \(.*?\) (\d+) \+ (\d+)", line)
                if not m:
                    continue
                rwbs, sector, n = m.group(1), int(m.group(2)), int(m.group(3))
                if not any(a <= sector < b for a, b in extents):
                    continue
                d = "R" if "R" in rwbs else "W" if "W" in rwbs else None
                if d:
                    out.append((d, n))
        return out

    def close(self):
        try:
            with open(os.path.join(self.dir, "events/block/block_rq_issue/enable"), "w") as f:
                f.write("0")
        finally:
            os.rmdir(self.dir)


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for t in os.listdir(f"/proc/{p}/task") if os.path.isdir(f"/proc/{p}/task") else []:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(x) for x in f.read().split()]
            except OSError:
                pass
    return out


def anon_regions(pid, lo, hi):
    """Anonymous private rw mappings of `pid` between lo and hi bytes long."""
    regs = []
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 5 or parts[1] != "rw-p":
                    continue
                a, b = (int(x, 16) for x in parts[0].split("-"))
                if lo <= b - a <= hi:
                    regs.append((a, b))
    except OSError:
        pass
    return regs


def pfns(pid, start, end):
    """The page frame of each page in [start, end) (None where not present)."""
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(start // PAGE * 8)
        raw = f.read((end - start) // PAGE * 8)
    out = []
    for (e,) in struct.iter_unpack("<Q", raw):
        out.append(e & ((1 << 55) - 1) if e >> 63 else None)
    return out


def snapshot(root_pid, qd, bs):
    """Per I/O unit: the physically contiguous runs in its buffer (None: not found)."""
    total = qd * bs
    best = None
    for pid in descendants(root_pid):
        for a, b in anon_regions(pid, total, total + (4 << 20)):
            try:
                pf = pfns(pid, a, b)
            except OSError:
                continue
            present = sum(p is not None for p in pf)
            if best is None or present > best[0]:
                best = (present, a, pf)
    if best is None or best[0] < total // PAGE:
        return None
    _, a, pf = best
    # Both tools put the first buffer at the first page boundary past malloc's header.
    first = 1
    units, down, up = [], 0, 0
    for i in range(qd):
        s = pf[first + i * bs // PAGE: first + (i + 1) * bs // PAGE]
        if any(p is None for p in s):
            return None
        runs = 1
        for x, y in zip(s, s[1:]):
            if y != x + 1:
                runs += 1
            if y == x - 1:
                down += 1
            if y == x + 1:
                up += 1
        units.append(runs)
    return units, up, down


def job_args(a, data, tool):
    args = [f"--name=contig", f"--filename={data}", f"--size={a.size}", "--direct=1",
            f"--rw={a.rw}", f"--bs={a.bs}", f"--iodepth={a.qd}", f"--ioengine={a.engine}",
            f"--runtime={a.runtime}", "--time_based", "--output-format=json"]
    return [tool] + args


def one_run(a, tool, data, trace, extents, sysdir):
    trace.clear()
    before = read_stat(sysdir)
    p = subprocess.Popen(job_args(a, data, tool), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    snap = None
    deadline = time.time() + a.runtime + 5
    time.sleep(0.3)
    while p.poll() is None and time.time() < deadline and snap is None:
        snap = snapshot(p.pid, a.qd, parse_size(a.bs))
        if snap is None:
            time.sleep(0.1)
    _, err = p.communicate()
    after = read_stat(sysdir)
    if p.returncode != 0:
        raise SystemExit(f"{tool} failed ({p.returncode}): {err.decode(errors='replace')}")
    reqs = trace.requests(extents)
    d = "R" if "read" in a.rw else "W"
    sizes = [n for dd, n in reqs if dd == d]
    # /sys/block/DEV/stat: reads completed, merged, sectors; writes completed, merged, sectors
    idx = (0, 2) if d == "R" else (4, 6)
    stat_reqs = after[idx[0]] - before[idx[0]]
    stat_sect = after[idx[1]] - before[idx[1]]
    return dict(snap=snap, sizes=sizes, stat_reqs=stat_reqs, stat_sect=stat_sect)


def hist(sizes, bs_sect):
    """Request sizes in buckets of the I/O size."""
    edges = [(0, bs_sect // 4), (bs_sect // 4, bs_sect // 2), (bs_sect // 2, bs_sect // 2 + 1),
             (bs_sect // 2 + 1, bs_sect), (bs_sect, bs_sect + 1), (bs_sect + 1, 1 << 40)]
    c = [0] * len(edges)
    for n in sizes:
        for i, (lo, hi) in enumerate(edges):
            if lo <= n < hi:
                c[i] += 1
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fio", default="/usr/bin/fio")
    ap.add_argument("--iobench", default=os.path.join(ROOT, "target/release/iobench"))
    ap.add_argument("--dir", default=os.path.join(ROOT, "target/tmp/contiguity"))
    ap.add_argument("--engine", default="io_uring")
    ap.add_argument("--rw", default="read")
    ap.add_argument("--bs", default="1m")
    ap.add_argument("--qd", type=int, default=8)
    ap.add_argument("--size", default="1g")
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--between", help="a shell command run before every run (e.g. one that"
                    " touches and frees memory, to see what the previous process leaves)")
    ap.add_argument("--clean", action="store_true")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root: /proc/PID/pagemap's frame numbers and tracefs")
    os.makedirs(a.dir, exist_ok=True)
    data = os.path.join(a.dir, "data")
    size = parse_size(a.size)
    if not os.path.exists(data) or os.path.getsize(data) != size:
        with open(data, "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(size >> 20):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
    name, major, minor, sysdir = disk_of(data)
    if not os.path.exists(os.path.join(sysdir, "stat")):
        sysdir = os.path.dirname(sysdir)
    extents = file_extents(data)
    bs_sect = parse_size(a.bs) // 512
    trace = Trace(major, minor)
    rows = []
    try:
        for r in range(a.runs):
            for tname, tool in (("fio", a.fio), ("iobench", a.iobench)):
                if a.between:
                    subprocess.run(a.between, shell=True, check=True)
                res = one_run(a, tool, data, trace, extents, sysdir)
                sizes = res["sizes"]
                snap = res["snap"]
                units = snap[0] if snap else []
                row = dict(
                    tool=tname, run=r + 1, n=len(sizes),
                    avg_kib=(sum(sizes) / len(sizes) / 2) if sizes else 0,
                    hist=hist(sizes, bs_sect),
                    stat_kib=(res["stat_sect"] / res["stat_reqs"] / 2) if res["stat_reqs"] else 0,
                    runs=units, up=snap[1] if snap else 0, down=snap[2] if snap else 0)
                rows.append(row)
                print(f"{tname:8} run {r + 1}: {row['n']:5} requests, avg {row['avg_kib']:6.0f} KiB"
                      f" (stat {row['stat_kib']:6.0f}), sizes {row['hist']},"
                      f" buffer runs/unit {units}, adjacent up {row['up']} down {row['down']}",
                      flush=True)
    finally:
        trace.close()
        if a.clean:
            shutil.rmtree(a.dir, ignore_errors=True)
    lim = f"{name}: max_segments {open(os.path.join(sysdir, 'queue/max_segments')).read().strip()}"
    b = a.bs
    lines = [
        f"{a.engine} QD{a.qd} {a.rw} {a.bs} O_DIRECT, {a.runtime} s, on {name} ({lim}),"
        f" {datetime.date.today()}, {a.runs} alternating runs each",
        "",
        f"| tool | run | requests | mean KiB | < {b}/4 | {b}/4..{b}/2 | = {b}/2 | {b}/2..{b} | = {b}"
        f" | > {b} (merged) | buffer runs per unit (pagemap) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        h = row["hist"]
        lines.append(f"| {row['tool']} | {row['run']} | {row['n']} | {row['avg_kib']:.0f} | "
                     + " | ".join(str(x) for x in h)
                     + f" | {' '.join(str(x) for x in row['runs'])} |")
    for t in ("fio", "iobench"):
        rs = [r for r in rows if r["tool"] == t]
        tot = sum(r["n"] for r in rs)
        full = sum(r["hist"][4] for r in rs)
        lines.append(f"\n{t}: mean request {sum(r['avg_kib'] for r in rs) / len(rs):.0f} KiB"
                     f" (runs {min(r['avg_kib'] for r in rs):.0f}..{max(r['avg_kib'] for r in rs):.0f}),"
                     f" whole {b} requests {100 * full / tot if tot else 0:.0f} %")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    sys.exit(main())
