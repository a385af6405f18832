# lab: seed 004's seven job files (tests/cases/seed004, sizes / 4) on XFS on an emulated NVMe namespace, fio and iobench
host_setup() {
    truncate -s 1G "$RUN/nvme.img"
    qemu_args=(-drive "file=$RUN/nvme.img,if=none,id=nv0,format=raw,cache=none,aio=threads"
        -device "nvme,serial=lab004,drive=nv0")
}
guest() {
    modprobe nvme
    modprobe xfs
    for i in $(seq 50); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
    [ -b /dev/nvme0n1 ] || { fail "no /dev/nvme0n1"; finish; }
    mkfs.xfs -q -f /dev/nvme0n1
    mkdir -p /mnt/q
    mount /dev/nvme0n1 /mnt/q
    export DIR=/mnt/q
    # Every run starts after a file was removed (the tools' runs each remove the last
    # one's), the first too: otherwise only the second tool re-reads XFS's free-space
    # headers after drop_caches (8 reads of 67 sectors for q3 when first seen).
    head -c 16M /dev/zero >/mnt/q/warm.dat
    sync
    rm /mnt/q/warm.dat
    # The seed's sizes / 4 (seconds under TCG), q6's 64m / 2 (a 32m block), q7's / 8; 8m blocks become 1m so that QD128's
    # buffers fit the guest's memory (128 x 1m).
    local f name tool
    mkdir -p "$RUN/jobs"
    for f in "$REPO"/tests/cases/seed004/q*.fio; do
        name=$(basename "$f" .fio)
        awk '/^(size|filesize)=[0-9]+m$/ { split($0, a, "="); n = a[2] + 0; $0 = a[1] "=" (FILENAME ~ /q6/ && n == 64 ? 32 : n / 4) "m" }
             /^bs=8m$/ && FILENAME ~ /q7/ { $0 = "bs=1m" } /^size=64m$/ && FILENAME ~ /q7/ { $0 = "size=32m" } { print }' "$f" >"$RUN/jobs/$name.fio"
    done
    for f in "$RUN"/jobs/q*.fio; do
        name=$(basename "$f" .fio)
        # fio runs before and after iobench: how many requests a 1 MiB O_DIRECT transfer
        # becomes depends on how contiguous the pages the kernel gave its buffer are (an
        # NVMe queue's max_segments is below 256 pages), which changes from run to run for
        # fio too; its two runs give the range iobench's must fall in (a CI run once saw
        # fio's 156 read requests for q5 against iobench's 128 with one fio run).
        for tool in fio iob fio2; do
            rm -f /mnt/q/*.dat
            case $tool in
                fio) run_tool "$name-fio" nvme0n1 "$FIO" "$f" || continue ;;
                fio2) run_tool "$name-fio2" nvme0n1 "$FIO" "$f" || continue ;;
                iob) run_tool "$name-iob" nvme0n1 "$IOBENCH" "$f" || continue ;;
            esac
        done
        judge "$name" --tol 0.05 --meta 16 --fio "$name-fio" "$name-fio2" --iob "$name-iob"
    done
    umount /mnt/q
    finish
}
