# lab: an emulated NVMe namespace's character device (/dev/ng0n1): fio's and iobench's io_uring_cmd engines side by side (Identify sizing, vectored and plain commands, fixedbufs, registerfiles, force_async, sqthread_poll, hipri on a poll queue); I/O counts, the namespace's stat and the data written, read back; iobench's Dataset Management trims (fio 3.35+ dialect)
host_setup() {
    truncate -s 64M "$RUN/nvme.img"
    qemu_args=(-drive "file=$RUN/nvme.img,if=none,id=nv0,format=raw,cache=none,aio=threads,discard=unmap"
        -device "nvme,serial=labcmd,drive=nv0")
}
disk_hash() { dd if=/dev/nvme0n1 bs=1M count="$1" iflag=direct 2>/dev/null | sha256sum | cut -c1-16; }
guest() {
    # One poll queue, for hipri's polled ring.
    modprobe nvme poll_queues=1
    local i
    for i in $(seq 50); do [ -c /dev/ng0n1 ] && [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
    [ -c /dev/ng0n1 ] && ok "nvme: /dev/ng0n1" || { fail "no /dev/ng0n1"; finish; }
    # One job file (fio starts slowly under TCG), each job in its own region.
    cat >"$RUN/cmd.fio" <<'JOB'
[global]
ioengine=io_uring_cmd
cmd_type=nvme
filename=/dev/ng0n1
buffer_pattern=0x3cc3a55a
stonewall
; sized by Identify Namespace (no size=)
[ident-randread]
rw=randread
bs=4k
iodepth=8
io_size=1m
[vectored-write]
rw=write
bs=16k
iodepth=4
size=2m
nonvectored=0
[fixedbufs-randrw]
rw=randrw
bs=8k
iodepth=8
offset=2m
size=2m
fixedbufs
[regfiles-async-write]
rw=write
bs=4k
iodepth=4
offset=4m
size=1m
registerfiles
force_async=2
[sqpoll-read]
rw=read
bs=4k
iodepth=4
size=512k
sqthread_poll
[hipri-read]
rw=randread
bs=4k
iodepth=2
offset=2m
size=512k
hipri
JOB
    local tool before
    local -A hash
    for tool in fio iob; do
        dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=6 oflag=direct conv=fsync 2>/dev/null
        before=$(disk_hash 6)
        if [ $tool = fio ]; then run_tool cmd-fio nvme0n1 "$FIO" "$RUN/cmd.fio" || finish
        else run_tool cmd-iob nvme0n1 "$IOBENCH" "$RUN/cmd.fio" || finish; fi
        hash[$tool]=$(disk_hash 6)
    done
    judge cmd --fio cmd-fio --iob cmd-iob
    no_block_io cmd-fio cmd-iob
    if [ "${hash[iob]}" = "${hash[fio]}" ] && [ "${hash[fio]}" != "$before" ]; then
        ok "io_uring_cmd: the namespace reads back alike after both (${hash[fio]}; zeroed: $before)"
    else fail "io_uring_cmd: the namespace reads back ${hash[iob]} after iobench, ${hash[fio]} after fio (zeroed: $before)"; fi
    # Trims: fio 3.35 on sends Dataset Management (deallocate); fio 3.33 here has none
    # (its BLKDISCARD fails on a character device), so iobench's are judged by the data.
    dd if=/dev/urandom of=/dev/nvme0n1 bs=1M count=1 oflag=direct conv=fsync 2>/dev/null
    before=$(disk_hash 1)
    if IOBENCH_FIO_COMPAT=3.42 "$IOBENCH" --name=dsm --ioengine=io_uring_cmd --filename=/dev/ng0n1 \
        --rw=trim --bs=64k --size=1m --iodepth=4 --output-format=json --output="$RUN/dsm.json" 2>"$RUN/dsm.err"; then
        local zero
        zero=$(head -c 1M /dev/zero | sha256sum | cut -c1-16)
        if [ "$(disk_hash 1)" = "$zero" ]; then ok "dsm trim (3.42 dialect): 1 MiB of random data reads back as zeros ($(grep -o '"total_ios" : [0-9]*' "$RUN/dsm.json" | sed -n 3p))"
        else fail "dsm trim: the namespace reads $(disk_hash 1) after the trims (random before: $before)"; fi
    else fail "dsm trim: iobench exited $?: $(tail -2 "$RUN/dsm.err")"; fi
    # Bad input: a block device is not a namespace's generic device.
    local out
    if out=$("$IOBENCH" --name=bad --ioengine=io_uring_cmd --filename=/dev/nvme0n1 --size=1m 2>&1); then
        fail "iobench's io_uring_cmd ran on a block device"
    else
        case "$out" in *"/dev/ngXnY"*) ok "iobench refuses a block device: $(echo "$out" | grep -m1 'ngXnY')" ;;
            *) fail "iobench's io_uring_cmd error on a block device: $out" ;; esac
    fi
    finish
}
