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
