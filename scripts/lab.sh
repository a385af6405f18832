#!/usr/bin/env bash
# The lab (issue 38): each case boots a qemu guest (TCG) of Debian's own kernel with the
# emulated devices it needs, runs this machine's fio and iobench side by side in a chroot
# of this machine's root (shared read-only over 9p), and checks their outputs and the
# guest's block-layer counters. See docs/lab.md.
#
#   scripts/lab.sh --list          the cases, one a line, with what each does
#   scripts/lab.sh --setup         fetch and unpack the guest kernel, build the initramfs
#   scripts/lab.sh [CASE...]       run the cases (all without arguments)
#
# Environment: IOBENCH (the iobench binary; default target/release/iobench, else
# target/suite/iobench), FIO (default /usr/bin/fio), IOBENCH_LAB_CACHE (kernel and
# initramfs; default /var/cache/iobench-lab), IOBENCH_LAB_KERNEL (a linux-image package
# name instead of the one linux-image-amd64 depends on), IOBENCH_LAB_TIMEOUT (seconds a
# guest may run; default 600), IOBENCH_LAB_BOOT_TIMEOUT (seconds for the guest's init to
# come up before it is booted once more; default 120), IOBENCH_LAB_MEM (MiB; default 1536).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
lab=$repo/scripts/lab
cache=${IOBENCH_LAB_CACHE:-/var/cache/iobench-lab}
runs=$repo/target/lab
timeout_s=${IOBENCH_LAB_TIMEOUT:-600}
boot_s=${IOBENCH_LAB_BOOT_TIMEOUT:-120}
mem=${IOBENCH_LAB_MEM:-1536}
fio=${FIO:-/usr/bin/fio}
if [ -n "${IOBENCH:-}" ]; then
    iobench=$IOBENCH
elif [ -x "$repo/target/release/iobench" ]; then
    iobench=$repo/target/release/iobench
else
    iobench=$repo/target/suite/iobench
fi
# The guest runs it from its own working directory: an absolute path, whatever was given.
iobench=$(realpath -m "$iobench")

# The modules the initramfs loads itself: what it takes to mount the 9p share. Every other
# module is loaded in the guest by the host's modprobe from the unpacked kernel's tree.
boot_modules=(virtio_pci 9pnet_virtio 9p)

cases() { for f in "$lab"/cases/*.sh; do basename "$f" .sh; done; }

# The guest kernel in $cache (unpacked, with modules.dep), reused when already there; the
# initramfs rebuilt when scripts/lab/init is newer than it.
setup() {
    [ -f "$cache/ready" ] || setup_kernel || return 1
    [ "$cache/initramfs.gz" -nt "$lab/init" ] || build_initramfs || return 1
}

setup_kernel() {
    local pkg tmp kver
    pkg=${IOBENCH_LAB_KERNEL:-$(apt-cache depends linux-image-amd64 2>/dev/null |
        awk '/Depends: linux-image-/ { print $2; exit }')}
    if [ -z "$pkg" ]; then
        echo "lab: no linux-image package (run apt-get update, or set IOBENCH_LAB_KERNEL)" >&2
        return 1
    fi
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/setup.XXXXXX")
    # apt-get download writes where it runs; as root it warns that _apt cannot write here.
    (cd "$tmp" && apt-get download -qq "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    # (setup runs under `if`, where set -e does not stop it: each step says so itself)
    if ! ls "$tmp"/"$pkg"_*.deb >/dev/null 2>&1; then
        echo "lab: apt-get download $pkg got nothing" >&2
        rm -rf "$tmp"
        return 1
    fi
    dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/k" && rm -f "$tmp"/"$pkg"_*.deb &&
        kver=$(ls "$tmp/k/lib/modules") && [ -n "$kver" ] && depmod -b "$tmp/k" "$kver" &&
        cp "$tmp/k/boot/vmlinuz-$kver" "$tmp/vmlinuz" || {
        echo "lab: unpacking $pkg failed" >&2
        rm -rf "$tmp"
        return 1
    }
    echo "$kver" >"$tmp/kver"
    rm -rf "$cache/k" "$cache/vmlinuz" "$cache/initramfs.gz" "$cache/kver"
    mv "$tmp/k" "$tmp/vmlinuz" "$tmp/kver" "$cache/" || return 1
    rmdir "$tmp"
    echo "$pkg" >"$cache/ready"
    echo "lab: guest kernel $kver ($pkg) in $cache"
}

# initramfs: static busybox, the 9p modules in load order (from modules.dep), /init.
build_initramfs() {
    local kver root m line dep
    kver=$(cat "$cache/kver")
    root=$(mktemp -d "$cache/initramfs.XXXXXX")
    mkdir -p "$root"/{bin,dev,proc,sys,lib/modules}
    cp "$(command -v busybox)" "$root/bin/busybox"
    ! ldd "$root/bin/busybox" >/dev/null 2>&1 || {
        echo "lab: busybox is not static (install busybox-static)" >&2
        rm -rf "$root"
        return 1
    }
    local -a order=()
    local moddir=$cache/k/lib/modules/$kver
    for m in "${boot_modules[@]}"; do
        line=$(grep -E "/${m//_/[-_]}\.ko:" "$moddir/modules.dep") || {
            echo "lab: module $m not in the kernel $kver" >&2
            rm -rf "$root"
            return 1
        }
        # modules.dep lists a module's dependencies so that the last loads first.
        for dep in $(echo "${line#*:}" | tr ' ' '\n' | tac) "${line%%:*}"; do
            case " ${order[*]} " in *" $dep "*) ;; *) order+=("$dep") ;; esac
        done
    done
    for m in "${order[@]}"; do
        mkdir -p "$root/lib/modules/$(dirname "$m")"
        cp "$moddir/$m" "$root/lib/modules/$m"
    done
    printf '%s\n' "${order[@]}" >"$root/modules.list"
    cp "$lab/init" "$root/init"
    chmod 755 "$root/init"
    (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$cache/initramfs.gz.tmp"
    mv "$cache/initramfs.gz.tmp" "$cache/initramfs.gz"
    rm -rf "$root"
}

# Run one case: a scratch dir shared writable at the same path in the guest, the case's
# devices, a guest script that sources the case, the guest's exit code as the verdict.
run_case() {
    local compat
    compat=$("$fio" --version | sed -n 's/^fio-\([0-9]*\.[0-9]*\).*/\1/p')
    [ -n "$compat" ] || { echo "lab: $fio --version names no fio release"; return 1; }
    local case=$1 run=$runs/$1 file=$lab/cases/$1.sh
    rm -rf "$run"
    mkdir -p "$run"
    # Device images and host-side helpers the case sets up; each sets qemu_args.
    local -a qemu_args=()
    (
        set -euo pipefail
        # shellcheck source=/dev/null
        . "$file"
        RUN=$run
        host_setup
        [ ${#qemu_args[@]} -eq 0 ] || printf '%s\n' "${qemu_args[@]}" >"$run/qemu.args"
        touch "$run/qemu.args"
    ) >"$run/host.log" 2>&1 || { echo "lab: $case: host setup failed"; cat "$run/host.log"; return 1; }
    mapfile -t qemu_args <"$run/qemu.args"
    cat >"$run/guest.sh" <<EOF
set -euo pipefail
export IOBENCH='$iobench' FIO='$fio' REPO='$repo' RUN='$run' LAB='$lab' CASE='$case' MODROOT='$cache/k'
# iobench speaks the dialect of the fio it is compared with (its seeds, keys, version line).
export IOBENCH_FIO_COMPAT='$compat'
cd "\$RUN"
. "\$LAB/guest-lib.sh"
. "\$LAB/cases/\$CASE.sh"
guest
EOF
    local start rc attempt
    start=$(date +%s)
    # A TCG guest on a busy host can stall in early boot (RCU stalls, a lost timer): one
    # whose init has not come up within boot_s is killed and booted once more.
    for attempt in 1 2; do
        rm -f "$run/console.log"
        timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 -M q35 -accel tcg -cpu max -smp 2 -m "$mem" \
            -nodefaults -display none -no-reboot -serial "file:$run/console.log" \
            -kernel "$cache/vmlinuz" -initrd "$cache/initramfs.gz" \
            -append "console=ttyS0 quiet panic=-1 lab.scratch=$run lab.repo=$repo" \
            -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on \
            -virtfs "local,path=$run,mount_tag=scratch,security_model=none" \
            "${qemu_args[@]}" >"$run/qemu.log" 2>&1 &
        local qpid=$! waited=0 up=0
        while kill -0 "$qpid" 2>/dev/null; do
            if [ "$up" = 0 ] && grep -q '^lab init: up' "$run/console.log" 2>/dev/null; then up=1; fi
            if [ "$up" = 0 ] && [ "$waited" -ge "$boot_s" ]; then
                echo "lab: $case: the guest's init did not come up in ${boot_s}s (attempt $attempt)"
                kill "$qpid" 2>/dev/null || true
                break
            fi
            sleep 1
            waited=$((waited + 1))
        done
        rc=0
        wait "$qpid" || rc=$?
        [ "$up" = 0 ] && ! grep -q '^lab init: up' "$run/console.log" 2>/dev/null || break
    done
    local took=$(($(date +%s) - start))
    if [ "$rc" -ne 0 ]; then
        echo "lab: $case: qemu exited $rc after ${took}s (124: timed out)"
        tail -5 "$run/qemu.log" "$run/console.log" 2>/dev/null || true
        return 1
    fi
    if [ ! -f "$run/rc" ]; then
        echo "lab: $case: the guest did not run its script (${took}s)"
        tail -20 "$run/console.log" || true
        return 1
    fi
    rc=$(cat "$run/rc")
    # The guest's checks, then the host's over what the guest left (check.py).
    local line jrc=0
    : >"$run/judge.log"
    if [ -f "$run/judge.list" ]; then
        while IFS= read -r line; do
            eval "set -- $line"
            (cd "$run" && python3 "$lab/check.py" "$@") >>"$run/judge.log" 2>&1 || jrc=1
        done <"$run/judge.list"
    fi
    grep -E '^(ok|FAIL|note) ' "$run/guest.log" "$run/judge.log" | sed "s/^[^:]*:/  $case: /" || true
    if [ "$jrc" -ne 0 ] && [ "$rc" = 0 ]; then rc=judged; fi
    if [ "$rc" != 0 ]; then
        echo "lab: $case: failed (guest rc=$rc, ${took}s); the last other lines of $run/guest.log:"
        grep -vE '^(ok|FAIL|note) ' "$run/guest.log" | tail -15
        return 1
    fi
    echo "lab: $case: passed in ${took}s"
}

main() {
    case "${1:-}" in
        --list)
            for c in $(cases); do
                printf '%-22s %s\n' "$c" "$(sed -n 's/^# lab: //p' "$lab/cases/$c.sh" | head -1)"
            done
            return 0
            ;;
        --setup)
            setup
            return
            ;;
        -h | --help)
            sed -n '2,18p' "$0"
            return 0
            ;;
    esac
    local -a todo
    if [ $# -eq 0 ]; then mapfile -t todo < <(cases); else todo=("$@"); fi
    local passed=0 failed=0 c
    local -a failures=()
    if ! setup; then
        echo "lab: no guest kernel: every case fails"
        echo "0 passed, ${#todo[@]} failed"
        return 1
    fi
    for c in "${todo[@]}"; do
        if [ ! -f "$lab/cases/$c.sh" ]; then
            echo "lab: no case $c (scripts/lab.sh --list)"
            failed=$((failed + 1)); failures+=("$c")
        elif run_case "$c"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1)); failures+=("$c")
        fi
    done
    [ "$failed" -eq 0 ] || echo "lab: failed: ${failures[*]}"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

main "$@"
