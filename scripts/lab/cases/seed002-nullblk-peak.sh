# lab: null_blk with poll queues and an NVMe drive: iobench peak with seed 002's t/io_uring flags (-p0 and -p1), fio's and iobench's io_uring (hipri) on /dev/nullb0
host_setup() {
    truncate -s 256M "$RUN/nvme.img"
    qemu_args=(-drive "file=$RUN/nvme.img,if=none,id=nv0,format=raw,cache=none,aio=threads"
        -device "nvme,serial=lab002,drive=nv0")
}
guest() {
    modprobe null_blk nr_devices=1 queue_mode=2 gb=1 bs=512 submit_queues=2 poll_queues=2
    modprobe nvme poll_queues=1
    for i in $(seq 50); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
    [ -b /dev/nullb0 ] && ok "null_blk: /dev/nullb0 with $(cat /sys/block/nullb0/queue/io_poll) io_poll" || fail "no /dev/nullb0"
    [ -b /dev/nvme0n1 ] && ok "nvme: /dev/nvme0n1" || fail "no /dev/nvme0n1"
    # The seed's queue-depth loop (2 s a depth here), IRQ-driven (-p0) and polled (-p1).
    # Four points of the loop (each run costs seconds of TCG): QD 1 and 32 on null_blk,
    # QD 32 IRQ-driven and polled on NVMe.
    local dev qd b p point
    for point in nullb0:0:1 nullb0:1:32 nvme0n1:0:32 nvme0n1:1:32; do
        IFS=: read -r dev p qd <<<"$point"
        b=1; [ "$qd" -ge 8 ] && b=$((qd / 4))
        run_tool "peak-$dev-p$p-d$qd" "$dev" "$IOBENCH" peak -d$qd -b512 -s$b -c$b -p$p \
            -F1 -B1 -n1 -D0 -R1 -X1 -t1 -r2 "/dev/$dev" &&
            check_peak "peak $dev p$p d$qd" --latency "peak-$dev-p$p-d$qd"
    done
    cat "$RUN/peak-nullb0-p1-d32/out.txt"
    # fio's io_uring against iobench's on the same job: 512 B polled random reads at QD 8.
    local job=(--name=peak --filename=/dev/nullb0 --ioengine=io_uring --hipri=1 --fixedbufs=1
        --registerfiles=1 --direct=1 --rw=randread --bs=512 --size=1m --iodepth=8
        --iodepth_batch_submit=2 --iodepth_batch_complete_min=2)
    run_tool fio1 nullb0 "$FIO" "${job[@]}"
    run_tool fio2 nullb0 "$FIO" "${job[@]}"
    run_tool iob1 nullb0 "$IOBENCH" "${job[@]}"
    judge io_uring-hipri --fio fio1 fio2 --iob iob1
    finish
}
