# lab: nbdkit's memory export attached as /dev/nbd0 by nbd-client (both in the guest); seed 003's job on /dev/nbd0 with fio and iobench, and fio's and iobench's nbd engines on the same export
host_setup() {
    qemu_args=()
}
guest() {
    command -v nbd-client >/dev/null || { fail "no nbd-client on the host (apt-get install nbd-client)"; finish; }
    modprobe nbd nbds_max=2
    local sock=/tmp/nbd.sock
    nbdkit -U "$sock" -P /tmp/nbdkit.pid memory size=256M
    for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
    [ -S "$sock" ] && ok "nbdkit: memory export on $sock" || { fail "nbdkit did not start"; finish; }
    if nbd-client -u "$sock" /dev/nbd0 >"$RUN/nbd-client.log" 2>&1 && [ "$(cat /sys/block/nbd0/size)" -gt 0 ]; then
        ok "nbd-client: /dev/nbd0 of $(($(cat /sys/block/nbd0/size) / 2048)) MiB"
    else
        fail "nbd-client: $(tail -2 "$RUN/nbd-client.log" | tr '\n' ' ')"
        kill "$(cat /tmp/nbdkit.pid)"
        finish
    fi
    # Seed 003's job, 1 MiB a job (of 16) instead of 20 s, so that both do the same I/O.
    local job=(-group_reporting -numjobs=16 -iodepth=1 -direct=1 -ioengine=libaio -rw=randrw
        -bsrange=4k-512k -size=1m -name=Fio -eta-newline=1)
    run_tool fio1 nbd0 "$FIO" "${job[@]}" -filename=/dev/nbd0
    run_tool fio2 nbd0 "$FIO" "${job[@]}" -filename=/dev/nbd0
    run_tool iob1 nbd0 "$IOBENCH" "${job[@]}" -filename=/dev/nbd0
    judge "nbd0 libaio" --fio fio1 fio2 --iob iob1
    nbd-client -d /dev/nbd0 >/dev/null 2>&1
    # The same job through each tool's own NBD client (the nbd engine) on the same export.
    local uri="nbd+unix:///?socket=$sock"
    local nbdjob=(-group_reporting -numjobs=16 -iodepth=1 -ioengine=nbd "-uri=$uri" -rw=randrw
        -bsrange=4k-512k -size=1m -name=Fio)
    run_tool fio-nbd nbd0 "$FIO" "${nbdjob[@]}"
    run_tool iob-nbd nbd0 "$IOBENCH" "${nbdjob[@]}"
    judge "nbd engine" --fio fio-nbd --iob iob-nbd
    kill "$(cat /tmp/nbdkit.pid)"
    finish
}
