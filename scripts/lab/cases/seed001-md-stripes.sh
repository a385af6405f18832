# lab: 14 emulated NVMe drives, md RAID0 over 2, 4 and 8 with XFS on each; seed 001's 16-job 64k randwrite through iobench sweep --axis directory=..., beside fio on each stripe
host_setup() {
    local i
    qemu_args=()
    for i in $(seq 0 13); do
        truncate -s 160M "$RUN/nvme$i.img"
        qemu_args+=(-drive "file=$RUN/nvme$i.img,if=none,id=nv$i,format=raw,cache=none,aio=threads"
            -device "nvme,serial=lab001n$i,drive=nv$i")
    done
}
guest() {
    command -v mdadm >/dev/null || { fail "no mdadm on the host (apt-get install mdadm)"; finish; }
    modprobe nvme
    modprobe raid0
    modprobe xfs
    local i n
    for i in $(seq 100); do [ "$(ls /dev/nvme*n1 2>/dev/null | wc -l)" -ge 14 ] && break; sleep 0.2; done
    local -a drives
    mapfile -t drives < <(ls /dev/nvme*n1 | sort -V)
    [ ${#drives[@]} -eq 14 ] && ok "14 NVMe namespaces" || { fail "${#drives[@]} NVMe namespaces, not 14"; finish; }
    local first=0 dirs=
    for n in 2 4 8; do
        mdadm --create "/dev/md$n" --run --level=0 --raid-devices=$n "${drives[@]:$first:$n}" >"$RUN/mdadm-$n.log" 2>&1 ||
            { fail "mdadm --create md$n: $(tail -2 "$RUN/mdadm-$n.log" | tr '\n' ' ')"; continue; }
        first=$((first + n))
        mkfs.xfs -q -f "/dev/md$n"
        mkdir -p "/mnt/md$n"
        mount "/dev/md$n" "/mnt/md$n"
        ok "md$n: RAID0 over $n drives, $(cat /sys/block/md$n/md/chunk_size) B chunks, XFS on /mnt/md$n"
        dirs=${dirs:+$dirs,}/mnt/md$n
    done
    # Seed 001's job: 16 jobs of psync 64k random writes, norandommap; 2 MiB a job here
    # instead of 60 s, so that every run does the same writes.
    local job=(--name fio_test_file --direct=1 --rw=randwrite --bs=64k --size=2M --numjobs=16
        --group_reporting --norandommap)
    for n in 2 4 8; do
        rm -f /mnt/md$n/fio_test_file*
        run_tool "fio1-md$n" "md$n" "$FIO" "${job[@]}" --directory=/mnt/md$n
    done
    rm -f /mnt/md*/fio_test_file*
    run_tool sweep "md2 md4 md8" "$IOBENCH" sweep --axis "directory=$dirs" -o "$RUN/sweep-out" -- "${job[@]}" ||
        tail -5 "$RUN/sweep/stderr"
    cat "$RUN/sweep/out.txt"
    for n in 2 4 8; do
        rm -f /mnt/md$n/fio_test_file*
        run_tool "fio2-md$n" "md$n" "$FIO" "${job[@]}" --directory=/mnt/md$n
        # The sweep's point on this stripe, with this stripe's counters, as a run of its own.
        mkdir -p "$RUN/iob-md$n"
        cp "$RUN/sweep-out/directory=%2Fmnt%2Fmd$n.json" "$RUN/iob-md$n/out.json" ||
            { fail "sweep: no point for /mnt/md$n ($(ls "$RUN/sweep-out" | tr '\n' ' '))"; continue; }
        cp "$RUN/sweep/before.json" "$RUN/sweep/after.json" "$RUN/iob-md$n/"
        judge "md$n" --tol 0.05 --meta 16 --fio "fio1-md$n" "fio2-md$n" --iob "iob-md$n"
    done
    for n in 2 4 8; do umount "/mnt/md$n"; mdadm --stop "/dev/md$n" >/dev/null 2>&1; done
    finish
}
