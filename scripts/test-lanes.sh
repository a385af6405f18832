#!/usr/bin/env bash
# Runs the suite's test binaries, already built in the `suite` profile, in two lanes at
# once, each binary with two test threads, and ends with one summary line per binary.
#
# Why: the suite waits far more than it computes (17 min of wall time for 8 min of CPU on
# 2 cores, measured 2026-12-02: fio runs with runtimes, servers' timeouts, guests), so two
# binaries at a time take about half the wall time without saturating the cores. The
# lanes are balanced by the binaries' measured times; the block-level differentials
# (engines, fidelity, seeds) share lane A, so at most one of them measures a device at a
# time. A binary's output is printed whole when its lane is done, so no two interleave.
#
# Usage: scripts/test-lanes.sh [CARGO_ARGS...] (the features the suite was built with).
set -uo pipefail
cd "$(dirname "$0")/.."
lane_a=(fidelity engines seeds cluster_mpi)
lane_b=(studies cli hosts run stats lib bin)
logs="target/suite-lanes"
rm -rf "$logs"
mkdir -p "$logs"
# The executables of this build, by binary: `cargo test --no-run` names them in its JSON
# messages (the library's and the binary's unit tests as `lib` and `bin`).
cargo test --profile suite --no-run --message-format=json "$@" 2>/dev/null \
    | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if not m.get("profile", {}).get("test"):
        continue
    kind = m["target"]["kind"][0]
    name = m["target"]["name"] if kind == "test" else kind
    print(name, m["executable"])
' > "$logs/executables"
known=" ${lane_a[*]} ${lane_b[*]} "
while read -r name _; do
    case "$known" in
        *" $name "*) ;;
        *) echo "scripts/test-lanes.sh: test binary '$name' is in no lane (add it)" >&2; exit 1 ;;
    esac
done < "$logs/executables"

run_lane() {
    local name exe
    for name in "$@"; do
        exe=$(awk -v n="$name" '$1 == n { print $2 }' "$logs/executables")
        if [ -z "$exe" ]; then
            echo "no test binary '$name' was built" > "$logs/$name.log"
            echo 1 > "$logs/$name.rc"
            continue
        fi
        local start=$SECONDS
        # As cargo runs them: from the package's root.
        "$exe" --test-threads=2 > "$logs/$name.log" 2>&1
        echo $? > "$logs/$name.rc"
        echo $((SECONDS - start)) > "$logs/$name.secs"
    done
}

start=$SECONDS
run_lane "${lane_a[@]}" &
a=$!
run_lane "${lane_b[@]}" &
b=$!
wait "$a" "$b"

failed=()
for name in "${lane_a[@]}" "${lane_b[@]}"; do
    [ -f "$logs/$name.log" ] || continue
    echo "     Running $name"
    cat "$logs/$name.log"
done
# Doc tests (none run today, but a broken example must still fail).
cargo test --profile suite --doc "$@" -q > "$logs/doc.log" 2>&1
echo $? > "$logs/doc.rc"
cat "$logs/doc.log"
echo
echo "suite: $((SECONDS - start)) s in two lanes"
for name in "${lane_a[@]}" "${lane_b[@]}" doc; do
    [ -f "$logs/$name.rc" ] || continue
    rc=$(cat "$logs/$name.rc")
    secs=$(cat "$logs/$name.secs" 2>/dev/null || echo "-")
    summary=$(grep -E '^test result:' "$logs/$name.log" | tail -n1)
    printf '  %-12s %5s s  %s\n' "$name" "$secs" "${summary:-exit $rc}"
    [ "$rc" = 0 ] || failed+=("$name")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "error: ${#failed[@]} target(s) failed: ${failed[*]}"
    exit 1
fi
