# Helpers for the lab's guest scripts (sourced in the guest, in the chroot of the host's
# root): verdict lines, the block layer's counters, fio's and iobench's runs side by side.
failures=0
ok() { echo "ok $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
note() { echo "note $*"; }
# Exit with the verdict: any FAIL line fails the case.
finish() { [ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }; }
# The guest kernel's modules are in the unpacked package's tree, not in the host's /lib.
modprobe() { command modprobe -d "$MODROOT" "$@"; }

# stat_json DEV...: each device's read/write requests and sectors from /sys/block/DEV/stat.
stat_json() {
    local dev sep=
    printf '{'
    for dev in "$@"; do
        # fields: read ios, merges, sectors, ticks, write ios, merges, sectors, ...
        read -r r _ rs _ w _ ws _ </sys/block/"$dev"/stat
        printf '%s"%s": {"rios": %s, "rsect": %s, "wios": %s, "wsect": %s}' "$sep" "$dev" "$r" "$rs" "$w" "$ws"
        sep=', '
    done
    printf '}\n'
}

# run_tool NAME "DEV..." TOOL ARG...: run TOOL with its JSON output into $RUN/NAME/out.json
# and the watched devices' counters before and after into $RUN/NAME/{before,after}.json
# (check.py takes the deltas; dropping the page
# cache first, so buffered jobs start alike). A tool's failure is a FAIL line.
run_tool() {
    local name=$1 devs=$2 tool=$3 d=$RUN/$1
    shift 3
    mkdir -p "$d"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    # shellcheck disable=SC2086
    stat_json $devs >"$d/before.json"
    local rc=0 t0 t1
    t0=$(date +%s.%N)
    case "${1:-}" in
        # a subcommand writes its own outputs (-o); its report is kept as out.txt
        sweep | compare | peak) "$tool" "$@" >"$d/out.txt" 2>"$d/stderr" || rc=$? ;;
        *) "$tool" --output-format=json --output="$d/out.json" "$@" 2>"$d/stderr" || rc=$? ;;
    esac
    t1=$(date +%s.%N)
    # Buffered writes reach the device at writeback: count them in the run that made them.
    sync
    # shellcheck disable=SC2086
    stat_json $devs >"$d/after.json"
    if [ "$rc" -ne 0 ]; then
        fail "$name: $(basename "$tool") exited $rc: $(tail -3 "$d/stderr" | tr '\n' ' ')"
        return 1
    fi
    note "$name: $(basename "$tool") ran in $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s"
}

# judge LABEL [--timed] [--tol F] --fio RUN... --iob RUN...: check.py's verdicts, given by
# the host once the guest is off (python's start-up costs tens of seconds under TCG).
judge() { later judge --label "$@"; }
# check_peak LABEL RUN: an `iobench peak` run's report against its device's counters.
check_peak() { later peak --label "$@"; }
later() {
    printf '%q ' "$@" >>"$RUN/judge.list"
    echo >>"$RUN/judge.list"
}

# no_block_io RUN...: each run left the watched devices' /sys/block counters as they were
# (passthrough commands, sg's and io_uring_cmd's, bypass the block layer's accounting):
# a tool that did its I/O through the block device instead would show there.
no_block_io() {
    local r
    for r in "$@"; do
        if cmp -s "$RUN/$r/before.json" "$RUN/$r/after.json"; then ok "$r: no block-layer requests ($(cat "$RUN/$r/after.json"))"
        else fail "$r: the block layer counted requests: $(cat "$RUN/$r/before.json") -> $(cat "$RUN/$r/after.json")"; fi
    done
}
