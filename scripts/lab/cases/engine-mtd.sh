# lab: raw flash without a device (mtdram: RAM as NOR-like flash; nandsim: NAND with bad blocks): fio's and iobench's mtd engines side by side (device-sized reads, writes, randwrites, trims as erases, verify after erase+write, skip_bad over bad blocks, misaligned trims, sub-page writes); I/O counts, errors, libmtd's messages and the flash's content afterwards
host_setup() {
    qemu_args=()
}

# The flash's first N KiB, read back through the character device.
flash_hash() { dd if="$1" bs=1k count="$2" 2>/dev/null | sha256sum | cut -c1-16; }
# A fresh device: the module loaded again (mtdram starts erased, nandsim erased with its
# bad blocks marked).
mtdram_fresh() {
    rmmod mtdram 2>/dev/null || true
    modprobe mtdram total_size=4096 erase_size=64
    wait_node /dev/mtd0
}
# 16 MiB of small-page NAND (ST 0x33: 512 B pages, 16 KiB erase blocks), blocks 3 and 5
# bad.
nandsim_fresh() {
    rmmod nandsim 2>/dev/null || true
    modprobe nandsim first_id_byte=0x20 second_id_byte=0x33 badblocks=3,5
    wait_node /dev/mtd0
}
wait_node() {
    local i
    for i in $(seq 100); do [ -c "$1" ] && return 0; sleep 0.1; done
    fail "no $1"
    finish
}
# A run's outcome as both tools print it in JSON: per job its name, error, and each
# direction's I/O count and bytes, and the total errors; and the exit status.
summary() {
    local rc=$1 json=$2
    printf 'rc=%s ' "$rc"
    sed -n '/^{/,$p' "$json" | jq -c '[.jobs[] | [.jobname, .error, .read.total_ios, .read.io_bytes, .write.total_ios, .write.io_bytes, .trim.total_ios, .trim.io_bytes, .total_err]]' 2>/dev/null || echo "no JSON"
}
# run_both LABEL NODE KIB FRESH JOBFILE: each tool on a fresh device; compares the
# summaries and the flash's first KIB KiB afterwards (a job expected to fail fails in both).
run_both() {
    local label=$1 node=$2 kib=$3 fresh=$4 job=$5 tool rc
    local -A sum hash
    for tool in fio iob; do
        $fresh
        mkdir -p "$RUN/$label-$tool"
        rc=0
        if [ $tool = fio ]; then "$FIO" --output-format=json --output="$RUN/$label-$tool/out.json" "$job" 2>"$RUN/$label-$tool/stderr" || rc=$?
        else "$IOBENCH" --output-format=json --output="$RUN/$label-$tool/out.json" "$job" 2>"$RUN/$label-$tool/stderr" || rc=$?; fi
        sum[$tool]=$(summary $rc "$RUN/$label-$tool/out.json")
        hash[$tool]=$(flash_hash "$node" "$kib")
    done
    if [ "${sum[iob]}" = "${sum[fio]}" ]; then ok "$label: iobench's jobs are fio's: ${sum[fio]}"
    else fail "$label: iobench ${sum[iob]}, fio ${sum[fio]} (stderr: $(head -c 300 "$RUN/$label-iob/stderr" | tr '\n' ' '))"; fi
    if [ "${hash[iob]}" = "${hash[fio]}" ]; then ok "$label: the flash reads back alike after both (${hash[fio]})"
    else fail "$label: the flash reads back ${hash[iob]} after iobench, ${hash[fio]} after fio"; fi
}
# same_errors LABEL FRESH JOBFILE: each tool's normal output on a fresh device: the jobs'
# `err=` texts (fio's names the engine's failing call) and libmtd's messages on stderr.
same_errors() {
    local label=$1 fresh=$2 job=$3 tool
    local -A errs msgs
    for tool in fio iob; do
        $fresh
        if [ $tool = fio ]; then "$FIO" "$job" >"$RUN/$label-$tool.txt" 2>"$RUN/$label-$tool.err" || true
        else "$IOBENCH" "$job" >"$RUN/$label-$tool.txt" 2>"$RUN/$label-$tool.err" || true; fi
        errs[$tool]=$(grep -oE 'jobs=[0-9]+\): err= *[0-9]+( \([^)]*\))?' "$RUN/$label-$tool.txt" | tr '\n' ';' || true)
        msgs[$tool]=$(grep -E '^(libmtd|  +error )' "$RUN/$label-$tool.err" | sort | uniq -c | tr -s ' ' | tr '\n' ';' || true)
    done
    if [ "${errs[iob]}" = "${errs[fio]}" ] && [ -n "${errs[fio]}" ]; then ok "$label: the job's error is fio's: ${errs[fio]}"
    else fail "$label: iobench's errors '${errs[iob]}', fio's '${errs[fio]}'"; fi
    if [ "${msgs[iob]}" = "${msgs[fio]}" ]; then ok "$label: libmtd's messages are fio's: ${msgs[fio]:-none}"
    else fail "$label: iobench's libmtd messages '${msgs[iob]}', fio's '${msgs[fio]}'"; fi
}

guest() {
    mtdram_fresh
    ok "mtdram: /dev/mtd0 ($(cat /sys/class/mtd/mtd0/type), $(cat /sys/class/mtd/mtd0/size) bytes, erase block $(cat /sys/class/mtd/mtd0/erasesize), write unit $(cat /sys/class/mtd/mtd0/writesize))"
    # mtdram: sized by the device (no size= on erase-all and read-all), erase blocks of
    # 64 KiB, a write unit of one byte. Each job in its own region.
    cat >"$RUN/ram.fio" <<'JOB'
[global]
ioengine=mtd
filename=/dev/mtd0
buffer_pattern=0x5aa5c33c
stonewall
; the whole device erased, one erase block an I/O (sized by the device: 64 of them)
[erase-all]
rw=trim
bs=64k
[write]
rw=write
bs=16k
size=1m
[randwrite]
rw=randwrite
bs=4k
offset=1m
size=1m
; 12 KiB reads straddle erase blocks: each is split at the boundary, as fio splits it
[read-all]
rw=read
bs=12k
[trim]
rw=trim
bs=128k
offset=2m
size=512k
JOB
    run_tool ram-fio "" "$FIO" "$RUN/ram.fio" || finish
    local ram_fio
    ram_fio=$(flash_hash /dev/mtd0 4096)
    mtdram_fresh
    run_tool ram-iob "" "$IOBENCH" "$RUN/ram.fio" || finish
    judge mtdram --fio ram-fio --iob ram-iob
    if [ "$(flash_hash /dev/mtd0 4096)" = "$ram_fio" ]; then ok "mtdram: the flash reads back alike after both ($ram_fio)"
    else fail "mtdram: the flash reads back $(flash_hash /dev/mtd0 4096) after iobench, $ram_fio after fio"; fi

    # Verify after erase and write.
    cat >"$RUN/ram-verify.fio" <<'JOB'
[global]
ioengine=mtd
filename=/dev/mtd0
[erase]
rw=trim
bs=64k
offset=3m
size=1m
[write-verify]
stonewall
rw=write
bs=32k
offset=3m
size=1m
verify=crc32c
do_verify=1
JOB
    run_both ram-verify /dev/mtd0 3072 mtdram_fresh "$RUN/ram-verify.fio"
    # A trim that is not a whole erase block fails with EINVAL, and fio erases the block
    # all the same.
    printf '[global]\nioengine=mtd\nfilename=/dev/mtd0\nbuffer_pattern=0x11\n[fill]\nrw=write\nbs=64k\nsize=128k\n[part-trim]\nstonewall\nrw=trim\nbs=16k\noffset=64k\nsize=64k\n' >"$RUN/ram-badtrim.fio"
    run_both ram-misaligned-trim /dev/mtd0 256 mtdram_fresh "$RUN/ram-badtrim.fio"
    same_errors ram-misaligned-trim-errors mtdram_fresh "$RUN/ram-badtrim.fio"
    rmmod mtdram

    nandsim_fresh
    ok "nandsim: /dev/mtd0 ($(cat /sys/class/mtd/mtd0/type), $(cat /sys/class/mtd/mtd0/size) bytes, erase block $(cat /sys/class/mtd/mtd0/erasesize), write unit $(cat /sys/class/mtd/mtd0/writesize), subpage $(cat /sys/class/mtd/mtd0/subpagesize), bad blocks $(cat /sys/class/mtd/mtd0/bad_blocks 2>/dev/null))"
    # skip_bad: erases and writes over blocks 0-7 go past bad blocks 3 and 5, which fail
    # their I/O with EIO (continue_on_error keeps the job going); reads likewise.
    cat >"$RUN/nand-skip.fio" <<'JOB'
[global]
ioengine=mtd
filename=/dev/mtd0
buffer_pattern=0x5aa5c33c
skip_bad=1
continue_on_error=all
stonewall
[erase]
rw=trim
bs=16k
size=128k
[write]
rw=write
bs=2k
size=128k
[read]
rw=read
bs=16k
size=128k
[randread]
rw=randread
bs=512
size=128k
io_size=64k
JOB
    run_both nand-skip_bad /dev/mtd0 128 nandsim_fresh "$RUN/nand-skip.fio"
    same_errors nand-skip_bad-errors nandsim_fresh "$RUN/nand-skip.fio"
    # Without skip_bad, the erase of bad block 3 fails with EIO (fio marks it bad again)
    # and ends the job.
    printf '[global]\nioengine=mtd\nfilename=/dev/mtd0\n[erase]\nrw=trim\nbs=16k\nsize=128k\n' >"$RUN/nand-noskip.fio"
    run_both nand-erase-bad /dev/mtd0 128 nandsim_fresh "$RUN/nand-noskip.fio"
    same_errors nand-erase-bad-errors nandsim_fresh "$RUN/nand-noskip.fio"
    # fio's own example (examples/mtd.fio: trim, write, then trimwrite 4 times, 512 B
    # writes, skip_bad), over its first 256 KiB (blocks 0-15, with the two bad ones), without
    # its block_error_percentiles (fio 3.33 aborts on its trimwrite: stat.c:792's
    # "block_state_category: Assertion `0' failed") and with a buffer_pattern, so that
    # the flash's content compares: the default random buffers are not fio's bytes (on a
    # plain file too), nor is the scramble that fio's gtod_reduce leaves timeless.
    sed -e 's/^\[global\]$/[global]\nsize=256k\nbuffer_pattern=0x5aa5c33c/' -e '/^block_error_percentiles/d' /usr/share/doc/fio/examples/mtd.fio >"$RUN/nand-example.fio"
    run_both nand-example /dev/mtd0 256 nandsim_fresh "$RUN/nand-example.fio"
    # Writes of a sub-page (256 B here) are whole write units; half of one (128 B) is
    # refused by libmtd's check, EINVAL, and the job ends.
    printf '[global]\nioengine=mtd\nfilename=/dev/mtd0\nbuffer_pattern=0x5aa5c33c\n[subpage-write]\nrw=write\nbs=256\nsize=4k\n' >"$RUN/nand-subpage.fio"
    run_both nand-subpage-write /dev/mtd0 16 nandsim_fresh "$RUN/nand-subpage.fio"
    printf '[global]\nioengine=mtd\nfilename=/dev/mtd0\nbuffer_pattern=0x5aa5c33c\n[small-write]\nrw=write\nbs=128\nsize=4k\n' >"$RUN/nand-small.fio"
    run_both nand-small-write /dev/mtd0 16 nandsim_fresh "$RUN/nand-small.fio"
    same_errors nand-small-write-errors nandsim_fresh "$RUN/nand-small.fio"
    rmmod nandsim

    # Bad input: a regular file and a character device that is no flash.
    local out f
    : >/tmp/x
    for f in /tmp/x /dev/null; do
        if out=$("$IOBENCH" --name=bad --ioengine=mtd --filename=$f --rw=read --size=1m 2>&1); then
            fail "iobench's mtd ran on $f"
        else
            case "$out" in *"needs an MTD character device"*) ok "iobench refuses $f: $(echo "$out" | grep -m1 'needs an MTD')" ;;
                *) fail "iobench's mtd error on $f: $out" ;; esac
        fi
    done
    finish
}
