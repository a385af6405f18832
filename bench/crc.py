#!/usr/bin/env python3
"""Checksum throughput of iobench against fio: both programs' `--crctest` for the same hashes.

Each tool hashes 256 MiB (128 KiB at a time) per algorithm and prints MiB/s; this runs the
two in turn (A B A B ...) for several rounds and prints, per hash, the median of each and
the ratio iobench/fio (above 1 means iobench checks data faster). The verify methods are
what a verify job spends its CPU on, so this is the cost of `verify=` per byte.

    python3 bench/crc.py                              # all of fio's hashes, 3 rounds
    python3 bench/crc.py --hashes crc32c,md5,sha256 --rounds 5
    python3 bench/crc.py --markdown                   # the table for the README

Timing lives here, never in the test suite.
"""

import argparse
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# fio 3.33's --crctest names; murmur3, jhash and fnv are fio's internal hashes (not verify
# methods) and are included for completeness.
HASHES = ["md5", "crc64", "crc32", "crc32c", "crc16", "crc7", "sha1", "sha256", "sha512",
          "xxhash", "murmur3", "jhash", "fnv", "sha3-224", "sha3-256", "sha3-384",
          "sha3-512"]


def crctest(binary, hashes):
    """Runs `binary --crctest=hashes`; returns {name: MiB/s}."""
    out = subprocess.run([binary, f"--crctest={hashes}"], check=True,
                         capture_output=True, text=True).stdout
    speeds = {}
    for line in out.splitlines():
        name, _, rest = line.partition(":")
        rest = rest.strip()
        if rest.endswith("MiB/sec"):
            value = rest[: -len("MiB/sec")].strip()
            speeds[name] = float("inf") if value == "inf" else float(value)
    return speeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iobench", default=os.path.join(ROOT, "target/release/iobench"))
    ap.add_argument("--fio", default=shutil.which("fio") or "fio")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hashes", default=",".join(HASHES))
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()

    tools = {"iobench": args.iobench, "fio": args.fio}
    results = {t: {} for t in tools}
    for _ in range(args.rounds):
        for tool, binary in tools.items():
            for name, v in crctest(binary, args.hashes).items():
                results[tool].setdefault(name, []).append(v)

    names = [h for h in args.hashes.split(",") if h in results["iobench"]]
    rows = []
    for h in names:
        ib = statistics.median(results["iobench"][h])
        fi = statistics.median(results["fio"].get(h, [float("nan")]))
        rows.append((h, ib, fi, ib / fi if fi else float("nan")))

    if args.markdown:
        print("| hash | iobench MiB/s | fio MiB/s | iobench/fio |")
        print("|---|---:|---:|---:|")
        for h, ib, fi, r in rows:
            print(f"| {h} | {ib:.0f} | {fi:.0f} | {r:.2f} |")
    else:
        print(f"{'hash':<10} {'iobench MiB/s':>14} {'fio MiB/s':>10} {'ratio':>6}")
        for h, ib, fi, r in rows:
            print(f"{h:<10} {ib:>14.1f} {fi:>10.1f} {r:>6.2f}")


if __name__ == "__main__":
    main()
