# lab: a scsi-hd on virtio-scsi (/dev/sg*): fio's sg engine runs; iobench's sg engine is still refused (not implemented), so this case checks fio's run and iobench's refusal
host_setup() {
    truncate -s 64M "$RUN/scsi.img"
    qemu_args=(-device virtio-scsi-pci,id=scsi
        -drive "file=$RUN/scsi.img,if=none,id=sd0,format=raw,cache=none,aio=threads"
        -device scsi-hd,bus=scsi.0,drive=sd0,serial=labsg)
}
guest() {
    modprobe virtio_scsi
    modprobe sd_mod
    modprobe sg
    local i
    for i in $(seq 50); do [ -c /dev/sg0 ] && break; sleep 0.1; done
    [ -c /dev/sg0 ] && ok "scsi-hd: /dev/sg0 ($(cat /sys/class/scsi_generic/sg0/device/model 2>/dev/null | tr -s ' '))" || { fail "no /dev/sg0"; finish; }
    local job=(--name=sg --filename=/dev/sg0 --ioengine=sg --rw=randread --bs=4k --size=4m)
    run_tool fio-sg sda "$FIO" "${job[@]}" &&
        ok "fio's sg engine: $(grep -o '"total_ios" : [0-9]*' "$RUN/fio-sg/out.json" | head -1)"
    local out
    if out=$("$IOBENCH" "${job[@]}" 2>&1); then
        fail "iobench ran ioengine=sg: the case must judge it against fio now"
    else
        case "$out" in
            *"ioengine=sg"*"not supported yet"*) ok "iobench refuses sg: $out" ;;
            *) fail "iobench's sg error is not the refusal: $out" ;;
        esac
    fi
    finish
}
