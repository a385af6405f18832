# lab: a scsi-hd on virtio-scsi (/dev/sg0 and /dev/sda): fio's and iobench's sg engines side by side (reads, writes, FUA, write_and_verify, write_same, UNMAP trims, hipri, READ CAPACITY sizing); I/O counts, the SCSI device's command counter and the data written, read back
host_setup() {
    truncate -s 64M "$RUN/scsi.img"
    qemu_args=(-device virtio-scsi-pci,id=scsi
        -drive "file=$RUN/scsi.img,if=none,id=sd0,format=raw,cache=none,aio=threads,discard=unmap"
        -device scsi-hd,bus=scsi.0,drive=sd0,serial=labsg)
}

# The SCSI commands the device has taken (the midlayer's counter): passthrough commands
# never reach /sys/block/sda/stat, this counts them all.
scsi_cmds() { printf '%d\n' "$(cat "$scsi_dev/iorequest_cnt")"; }
# The first MiB count of the disk, read back through the block device.
disk_hash() { dd if=/dev/sda bs=1M count="$1" iflag=direct 2>/dev/null | sha256sum | cut -c1-16; }
zero_disk() { dd if=/dev/zero of=/dev/sda bs=1M count="$1" oflag=direct conv=fsync 2>/dev/null; }

# One job file, each job in its own region of the disk (fio starts slowly under TCG: one
# start for all of them), run by each tool on the same starting disk: zeros, and random
# data where the trims go. Judged: each job's I/O (check.py, on the host), the SCSI
# commands each tool sent, and the disk's first 8 MiB afterwards.
guest() {
    modprobe virtio_scsi
    modprobe sd_mod
    modprobe sg
    local i
    for i in $(seq 50); do [ -c /dev/sg0 ] && [ -b /dev/sda ] && break; sleep 0.1; done
    [ -c /dev/sg0 ] && [ -b /dev/sda ] && ok "scsi-hd: /dev/sg0 and /dev/sda ($(tr -s ' ' </sys/class/scsi_generic/sg0/device/model))" ||
        { fail "no /dev/sg0 or /dev/sda"; finish; }
    scsi_dev=$(readlink -f /sys/class/scsi_generic/sg0/device)
    cat >"$RUN/sg.fio" <<'JOB'
[global]
ioengine=sg
buffer_pattern=0x5aa5c33c
stonewall
; reads over the whole disk, sized by READ CAPACITY (no size=): 256 of 4 KiB
[rcap-randread]
filename=/dev/sg0
rw=randread
bs=4k
io_size=1m
[write]
filename=/dev/sg0
rw=write
bs=16k
size=2m
; FUA both ways, through the block device (SG_IO on /dev/sda)
[fua-randrw]
filename=/dev/sda
rw=randrw
bs=8k
offset=2m
size=2m
readfua=1
writefua=1
[write-verify]
filename=/dev/sg0
rw=write
bs=64k
offset=4m
size=1m
sg_write_mode=write_and_verify
; one block of data repeated over each I/O's blocks
[write-same]
filename=/dev/sg0
rw=write
bs=64k
offset=5m
size=1m
sg_write_mode=write_same
[hipri-read]
filename=/dev/sg0
rw=read
bs=4k
offset=2m
size=512k
hipri
; UNMAP over random data (discard=unmap: the image's blocks are freed, read as zeros)
[trim]
filename=/dev/sg0
rw=trim
bs=64k
offset=7m
size=1m
JOB
    head -c 1M /dev/urandom >/tmp/random.1m
    local tool c0 c1 before
    local -A cmds hash
    for tool in fio iob; do
        dd if=/dev/zero of=/dev/sda bs=1M count=7 oflag=direct conv=fsync 2>/dev/null
        dd if=/tmp/random.1m of=/dev/sda bs=1M seek=7 oflag=direct conv=fsync 2>/dev/null
        before=$(disk_hash 8)
        c0=$(scsi_cmds)
        if [ $tool = fio ]; then run_tool sg-fio sda "$FIO" "$RUN/sg.fio" || finish
        else run_tool sg-iob sda "$IOBENCH" "$RUN/sg.fio" || finish; fi
        c1=$(scsi_cmds)
        cmds[$tool]=$((c1 - c0))
        hash[$tool]=$(disk_hash 8)
    done
    judge sg --fio sg-fio --iob sg-iob
    no_block_io sg-fio sg-iob
    # READ CAPACITY (fio sends it up to four times a file, iobench twice) may differ; the
    # rest is one command per I/O.
    local d=$((cmds[iob] - cmds[fio]))
    if [ "${d#-}" -le 14 ]; then ok "sg: SCSI commands iobench ${cmds[iob]}, fio ${cmds[fio]}"
    else fail "sg: SCSI commands iobench ${cmds[iob]}, fio ${cmds[fio]}"; fi
    if [ "${hash[iob]}" = "${hash[fio]}" ] && [ "${hash[fio]}" != "$before" ]; then
        ok "sg: the disk reads back alike after both (${hash[fio]}; before: $before)"
    else fail "sg: the disk reads back ${hash[iob]} after iobench, ${hash[fio]} after fio (before: $before)"; fi
    # Bad input: a regular file is no SCSI device.
    local out
    if out=$("$IOBENCH" --name=bad --ioengine=sg --filename=/tmp/x --size=1m 2>&1); then
        fail "iobench's sg ran on a regular file"
    else
        case "$out" in *"only works on block devices"*) ok "iobench refuses a regular file: $(echo "$out" | grep -m1 'only works')" ;;
            *) fail "iobench's sg error on a regular file: $out" ;; esac
    fi
    finish
}
