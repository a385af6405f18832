#!/usr/bin/env python3
"""Side-by-side performance of iobench and the real fio on the same jobs.

Runs each job with both tools in turn (A B A B ...), for several rounds, and prints per job:
IOPS (median), CPU time per I/O in ns (median, user + system of the whole process tree),
peak RSS (max), start-up time, and the ratio iobench/fio for each.

    python3 bench/run.py                   # all jobs, 3 rounds, 3 s each
    python3 bench/run.py --rounds 5 --runtime 5 --only null
    python3 bench/run.py --markdown        # the table for the README
    python3 bench/run.py --t-io-uring /path/to/fio/t/io_uring   # peak: pairs with t/io_uring
    python3 bench/run.py --scaling-only    # IOPS and CPU/IO against numjobs, iodepth, nrfiles

Timing lives here, never in the test suite: ratios measured in one run on one machine are
comparable; absolute timings in tests are flaky.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def jobs(scratch, runtime, nbd_socket=None):
    """The benchmark jobs: (name, options). Each runs time-based for `runtime` seconds.
    With an NBD server's socket, the nbd engine's job too."""
    t = ["--time_based", f"--runtime={runtime}", "--group_reporting"]
    page_cached = os.path.join(scratch, "cached.dat")
    direct_file = os.path.join(scratch, "direct.dat")
    seq_file = os.path.join(scratch, "seq.dat")
    return [
        ("null 4k randread QD1",
         ["--name=n1", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g",
          "--iodepth=1"] + t),
        ("null 4k randread QD32",
         ["--name=n32", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g",
          "--iodepth=32"] + t),
        ("null 4k randread 16 jobs",
         ["--name=n16", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g",
          "--numjobs=16"] + t),
        ("psync 4k randread page cache",
         ["--name=pc", f"--filename={page_cached}", "--ioengine=psync", "--rw=randread",
          "--bs=4k", "--size=256m", "--invalidate=0"] + t),
        ("io_uring 4k randread direct QD32",
         ["--name=ur", f"--filename={direct_file}", "--ioengine=io_uring", "--rw=randread",
          "--bs=4k", "--size=256m", "--direct=1", "--iodepth=32"] + t),
        ("libaio 4k randread direct QD32",
         ["--name=aio", f"--filename={direct_file}", "--ioengine=libaio", "--rw=randread",
          "--bs=4k", "--size=256m", "--direct=1", "--iodepth=32"] + t),
        ("libaio 1M write direct QD8",
         ["--name=sw", f"--filename={seq_file}", "--ioengine=libaio", "--rw=write",
          "--bs=1m", "--size=256m", "--direct=1", "--iodepth=8"] + t),
        ("null 4k 64 jobs group_reporting",
         ["--name=n64", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=64m",
          "--numjobs=64"] + t),
        ("null 4k randread write_lat_log",
         ["--name=lat", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g",
          f"--write_lat_log={os.path.join(scratch, 'latlog')}"] + t),
        ("null 4k randread write_bw_log",
         ["--name=bwl", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g",
          f"--write_bw_log={os.path.join(scratch, 'bwlog')}"] + t),
        ("null 4k randread write_hist_log",
         ["--name=hl", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g",
          f"--write_hist_log={os.path.join(scratch, 'histlog')}"] + t),
    ] + ([
        ("nbd 4k randread QD32 (nbdkit memory)",
         ["--name=nbd", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={nbd_socket}",
          "--rw=randread", "--bs=4k", "--iodepth=32"] + t),
    ] if nbd_socket else [])


def start_nbdkit(scratch):
    """An nbdkit RAM disk on a Unix socket for the nbd job: (process, socket), or
    (None, None) when nbdkit is not installed."""
    if not shutil.which("nbdkit"):
        return None, None
    sock = os.path.join(scratch, "nbd.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    proc = subprocess.Popen(["nbdkit", "-f", "-U", sock, "memory", "size=256M"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not os.path.exists(sock) and time.time() < deadline:
        time.sleep(0.02)
    return proc, sock


def tree_pids(pid):
    """The process and all its descendants, from /proc/<pid>/task/<tid>/children."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return pids


def rss_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kib(pid):
    """Proportional set size: each page shared by n processes counts 1/n in each, so the sum
    over a tree counts a page its forked children share with the parent once."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


PEAK_PSS = {}


def run_once(cmd, cwd):
    """Runs one command; returns (wall seconds, cpu seconds, peak rss KiB, stdout).
    The peak of the tree's summed PSS is left in PEAK_PSS["last"].

    Peak RSS is sampled from /proc while the tool runs: the largest sum of resident memory
    over its process tree (workers included), and at least the main process's own high-water
    mark. (wait4's ru_maxrss would count this Python process's memory too: a forked child
    keeps its pre-exec high-water mark.)"""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks = {"out": b"", "err": b""}

    def drain(name, pipe):
        chunks[name] = pipe.read()

    readers = [threading.Thread(target=drain, args=("out", proc.stdout)),
               threading.Thread(target=drain, args=("err", proc.stderr))]
    for r in readers:
        r.start()
    peak = 0
    pss = 0
    n = 0
    while True:
        pids = tree_pids(proc.pid)
        peak = max(peak, sum(rss_kib(p, "VmRSS") for p in pids), rss_kib(proc.pid, "VmHWM"))
        if n % 5 == 0:  # smaps_rollup walks page tables: sampled less often
            pss = max(pss, sum(pss_kib(p) for p in pids))
        n += 1
        # Stop sampling once the main process has exited (a zombie has no memory left).
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.02)
    for r in readers:
        r.join()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    out, err = chunks["out"], chunks["err"]
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.decode(errors='replace')[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    PEAK_PSS["last"] = pss
    return wall, cpu, peak, out


def wall_once(cmd, cwd):
    """Wall seconds of one run, with nothing sampled alongside (for start-up timings)."""
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.decode(errors='replace')}")
    return time.monotonic() - start


def total_ios(doc):
    """Sum of completed I/Os over all jobs and directions in fio's JSON."""
    n = 0
    for job in doc.get("jobs", []):
        for d in ("read", "write", "trim"):
            n += job.get(d, {}).get("total_ios", 0)
    return n


def total_iops(doc):
    return sum(job.get(d, {}).get("iops", 0.0)
               for job in doc.get("jobs", []) for d in ("read", "write", "trim"))


def parse_json(out):
    text = out.decode(errors="replace")
    start = text.find("{")
    return json.loads(text[start:])


def prepare_files(scratch):
    for name, size_mb in (("cached.dat", 256), ("direct.dat", 256), ("seq.dat", 256)):
        path = os.path.join(scratch, name)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                block = os.urandom(1 << 20)
                for _ in range(size_mb):
                    f.write(block)
    # Warm the page cache for the cached job.
    with open(os.path.join(scratch, "cached.dat"), "rb") as f:
        while f.read(1 << 24):
            pass


def startup_time(binary, scratch, rounds):
    """Median wall time of a job that does almost nothing: the fixed cost of a run."""
    cmd = [binary, "--name=s", "--ioengine=null", "--size=4k", "--output-format=json"]
    return statistics.median(wall_once(cmd, scratch) for _ in range(rounds))


def parse_only_time(binary, scratch, rounds):
    """Median wall time of --parse-only on a 64-job file."""
    path = os.path.join(scratch, "many.fio")
    with open(path, "w") as f:
        f.write("[global]\nioengine=null\nsize=1m\nrw=randread\n")
        for i in range(64):
            f.write(f"[job{i}]\nbs={4 << (i % 4)}k\n")
    return statistics.median(wall_once([binary, "--parse-only", path], scratch)
                             for _ in range(rounds))


def max_iops_line(text):
    """The `Maximum IOPS=` value t/io_uring and `iobench peak` print, in IOPS."""
    for line in text.splitlines():
        if line.startswith("Maximum IOPS="):
            v = line.split("=", 1)[1].strip()
            scale = {"M": 1e6, "K": 1e3}.get(v[-1], 1)
            return float(v.rstrip("MK")) * scale
    return None


def peak_compare(args, scratch):
    """`iobench peak` against fio's io_uring engine at the same settings, and against
    t/io_uring when a binary built by the user is given: no-op requests (-N1) and 512-byte
    random O_DIRECT reads, QD32, batch 8, in alternating pairs (A B A B), medians."""
    path = os.path.join(scratch, "direct.dat")
    secs = args.runtime
    rounds = max(args.rounds, 5) if args.t_io_uring else args.rounds
    flags = {
        "no-op (-N1)": ["-N1", "-d32", "-s8", "-c8", f"-r{secs + 1}"],
        "512 B random O_DIRECT reads": ["-d32", "-b512", "-s8", "-c8", "-p0", "-F1", "-B1",
                                        "-n1", "-D0", "-R1", "-X1", f"-r{secs + 1}", path],
    }
    print(f"\npeak IOPS, QD32, batch 8 (median of {rounds} alternating runs):")
    for what, f in flags.items():
        cmds = {"iobench peak": [args.iobench, "peak"] + f}
        if args.t_io_uring:
            cmds["t/io_uring"] = [args.t_io_uring] + f
        if not f[0] == "-N1":
            cmds["fio io_uring"] = [
                args.fio, "--name=peak", f"--filename={path}", "--ioengine=io_uring",
                "--rw=randread", "--bs=512", "--iodepth=32", "--iodepth_batch_submit=8",
                "--iodepth_batch_complete_min=8", "--registerfiles=1", "--fixedbufs=1",
                "--direct=1", "--time_based", f"--runtime={secs}", "--output-format=json"]
        got = {name: [] for name in cmds}
        for _ in range(rounds):
            for name, cmd in cmds.items():  # alternating: drift hits each alike
                try:
                    _, _, _, out = run_once(cmd, scratch)
                except RuntimeError as e:
                    print(f"  {what}: {name} failed: {e}")
                    continue
                v = (total_iops(parse_json(out)) if name.startswith("fio")
                     else max_iops_line(out.decode(errors="replace")))
                if v:
                    got[name].append(v)
        med = {n: statistics.median(v) for n, v in got.items() if v}
        line = ", ".join(f"{n} {v / 1e6:.2f}M" for n, v in med.items())
        if "t/io_uring" in med and "iobench peak" in med:
            pairs = [a / b for a, b in zip(got["iobench peak"], got["t/io_uring"])]
            line += (f"; iobench/t/io_uring {ratio(med['iobench peak'], med['t/io_uring']):.2f}"
                     f" (pairs {min(pairs):.2f}-{max(pairs):.2f})")
        print(f"  {what}: {line}")


def scaling_points(scratch, runtime):
    """The scaling sweeps: (table, x, options). Null engine for numjobs and iodepth; for the
    file count, psync 4k random reads over page-cached 4 KiB files picked at random."""
    t = ["--time_based", f"--runtime={runtime}", "--group_reporting"]
    null = ["--ioengine=null", "--rw=randread", "--bs=4k", "--size=64m"]
    pts = []
    for n in (1, 2, 4, 8, 16, 32, 64):
        pts.append(("numjobs (null, QD1)", n, ["--name=sj"] + null + [f"--numjobs={n}"] + t))
    for d in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        pts.append(("iodepth (null)", d, ["--name=sd"] + null + [f"--iodepth={d}"] + t))
    for n in (1, 10, 100, 1000, 10000):
        d = os.path.join(scratch, f"nr{n}")
        os.makedirs(d, exist_ok=True)
        pts.append(("nrfiles (psync, page cache, file_service_type=random)", n,
                    ["--name=sf", f"--directory={d}", "--ioengine=psync", "--rw=randread",
                     "--bs=4k", f"--nrfiles={n}", "--filesize=4k", f"--size={4 * n}k",
                     "--file_service_type=random", "--invalidate=0"] + t))
    return pts


def scaling(args, scratch, tools):
    """Runs every scaling point with both tools (alternating) and prints, per sweep, IOPS
    and CPU ns per I/O of each tool and their ratios."""
    runtime = min(args.runtime, 2)
    table = None
    for name, x, opts in scaling_points(scratch, runtime):
        if "nrfiles" in name:
            # Lay the files out once, untimed, so each run measures the I/O only.
            subprocess.run([args.iobench] + [o for o in opts if not o.startswith(
                ("--time_based", "--runtime"))] + ["--create_only=1"],
                cwd=scratch, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        got = {t: {"iops": [], "cpu": []} for t in tools}
        for _ in range(args.rounds):
            for tool, binary in tools.items():
                try:
                    _, cpu, _, out = run_once([binary] + opts + ["--output-format=json"],
                                              scratch)
                    doc = parse_json(out)
                except (RuntimeError, ValueError) as e:
                    print(f"# {name} {x}: {tool} failed: {e}", file=sys.stderr)
                    continue
                ios = total_ios(doc)
                got[tool]["iops"].append(total_iops(doc))
                got[tool]["cpu"].append(cpu * 1e9 / ios if ios else float("nan"))
        if name != table:
            table = name
            print(f"\n{name}:\n")
            print("| x | IOPS iobench | IOPS fio | ratio | CPU ns/IO iobench | CPU ns/IO fio "
                  "| ratio |")
            print("|---:|---:|---:|---:|---:|---:|---:|")
        m = {t: {k: statistics.median(v) if v else float("nan") for k, v in d.items()}
             for t, d in got.items()}
        i, f = m["iobench"], m["fio"]
        print(f"| {x} | {i['iops']:.0f} | {f['iops']:.0f} | {ratio(i['iops'], f['iops']):.2f} "
              f"| {i['cpu']:.0f} | {f['cpu']:.0f} | {ratio(i['cpu'], f['cpu']):.2f} |")
        sys.stdout.flush()


def ratio(a, b):
    return a / b if b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iobench", default=os.path.join(ROOT, "target/release/iobench"))
    ap.add_argument("--fio", default=shutil.which("fio") or "fio")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--only", default="", help="run only jobs whose name contains this")
    ap.add_argument("--scratch", default="")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-peak", action="store_true", help="skip the peak-IOPS comparison")
    ap.add_argument("--scaling", action="store_true",
                    help="also the scaling tables (numjobs, iodepth, nrfiles)")
    ap.add_argument("--scaling-only", action="store_true", help="only the scaling tables")
    ap.add_argument("--t-io-uring", default="",
                    help="path to a t/io_uring binary you built yourself, to compare too")
    args = ap.parse_args()

    # A scratch directory of our own (about 2 GiB of test files) goes when the run ends,
    # however it ends; one given with --scratch is the user's and stays.
    scratch = args.scratch or tempfile.mkdtemp(prefix="iobench-bench.")
    try:
        bench(args, scratch)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def bench(args, scratch):
    """Every table of the run, in scratch."""
    os.makedirs(scratch, exist_ok=True)
    prepare_files(scratch)
    tools = {"iobench": args.iobench, "fio": args.fio}

    if args.scaling_only:
        scaling(args, scratch, tools)
        return
    nbdkit, nbd_socket = start_nbdkit(scratch)
    rows = []
    for name, opts in jobs(scratch, args.runtime, nbd_socket):
        if args.only and args.only not in name:
            continue
        samples = {t: {"iops": [], "cpu_ns": [], "rss": [], "pss": []} for t in tools}
        for _ in range(args.rounds):
            for tool, binary in tools.items():  # A B A B: drift hits both alike
                cmd = [binary] + opts + ["--output-format=json"]
                try:
                    _, cpu, rss, out = run_once(cmd, scratch)
                    doc = parse_json(out)
                except (RuntimeError, ValueError) as e:
                    print(f"# {name}: {tool} failed: {e}", file=sys.stderr)
                    continue
                ios = total_ios(doc)
                samples[tool]["iops"].append(total_iops(doc))
                samples[tool]["cpu_ns"].append(cpu * 1e9 / ios if ios else float("nan"))
                samples[tool]["rss"].append(rss)
                samples[tool]["pss"].append(PEAK_PSS.get("last", 0))
        row = {"job": name}
        for tool in tools:
            s = samples[tool]
            row[tool] = {
                "iops": statistics.median(s["iops"]) if s["iops"] else float("nan"),
                "cpu_ns": statistics.median(s["cpu_ns"]) if s["cpu_ns"] else float("nan"),
                "rss": max(s["rss"]) if s["rss"] else float("nan"),
                "pss": max(s["pss"]) if s["pss"] else float("nan"),
            }
        rows.append(row)
        print_row(row, args.markdown)

    if nbdkit:
        nbdkit.terminate()
        nbdkit.wait()

    if not args.no_peak:
        peak_compare(args, scratch)
    if args.scaling:
        scaling(args, scratch, tools)

    fixed = {t: (startup_time(b, scratch, args.rounds), parse_only_time(b, scratch, args.rounds))
             for t, b in tools.items()}
    print()
    print(f"start-up (null job, 4 KiB): iobench {fixed['iobench'][0]*1e3:.1f} ms, "
          f"fio {fixed['fio'][0]*1e3:.1f} ms, ratio {ratio(fixed['iobench'][0], fixed['fio'][0]):.2f}")
    print(f"--parse-only of a 64-job file: iobench {fixed['iobench'][1]*1e3:.1f} ms, "
          f"fio {fixed['fio'][1]*1e3:.1f} ms, ratio {ratio(fixed['iobench'][1], fixed['fio'][1]):.2f}")
    print(f"\n{datetime.date.today()} on {platform.node()}: {os.cpu_count()} cores, "
          f"{platform.machine()}, kernel {platform.release()}, {args.rounds} rounds x {args.runtime} s")


HEADER_DONE = False


def print_row(row, markdown):
    global HEADER_DONE
    i, f = row["iobench"], row["fio"]
    if markdown:
        if not HEADER_DONE:
            print("| job | IOPS iobench | IOPS fio | ratio | CPU ns/IO iobench | CPU ns/IO fio "
                  "| ratio | peak RSS KiB iobench | fio | ratio | peak PSS KiB iobench | fio "
                  "| ratio |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        print(f"| {row['job']} | {i['iops']:.0f} | {f['iops']:.0f} | {ratio(i['iops'], f['iops']):.2f} "
              f"| {i['cpu_ns']:.0f} | {f['cpu_ns']:.0f} | {ratio(i['cpu_ns'], f['cpu_ns']):.2f} "
              f"| {i['rss']:.0f} | {f['rss']:.0f} | {ratio(i['rss'], f['rss']):.2f} "
              f"| {i['pss']:.0f} | {f['pss']:.0f} | {ratio(i['pss'], f['pss']):.2f} |")
    else:
        if not HEADER_DONE:
            print(f"{'job':36} {'IOPS ib':>10} {'IOPS fio':>10} {'x':>5}  {'ns/IO ib':>9} "
                  f"{'ns/IO fio':>9} {'x':>5}  {'RSS ib':>8} {'RSS fio':>8} {'x':>5}  "
                  f"{'PSS ib':>8} {'PSS fio':>8} {'x':>5}")
        print(f"{row['job']:36} {i['iops']:10.0f} {f['iops']:10.0f} {ratio(i['iops'], f['iops']):5.2f}  "
              f"{i['cpu_ns']:9.0f} {f['cpu_ns']:9.0f} {ratio(i['cpu_ns'], f['cpu_ns']):5.2f}  "
              f"{i['rss']:8.0f} {f['rss']:8.0f} {ratio(i['rss'], f['rss']):5.2f}  "
              f"{i['pss']:8.0f} {f['pss']:8.0f} {ratio(i['pss'], f['pss']):5.2f}")
    HEADER_DONE = True
    sys.stdout.flush()


if __name__ == "__main__":
    main()
