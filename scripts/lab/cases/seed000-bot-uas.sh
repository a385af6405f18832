# lab: one USB disk image behind usb-storage (BOT) and usb-uas on xhci; seed 000's read_iops job with fio and iobench on both; iobench compare BOT vs UAS
host_setup() {
    # Written once with a pattern so reads return data, then attached read-only twice.
    dd if=/dev/urandom of="$RUN/usb.img" bs=1M count=64 status=none
    qemu_args=(-device qemu-xhci,id=xhci
        -drive "file=$RUN/usb.img,if=none,id=bot,format=raw,readonly=on,cache=none,aio=threads"
        -device usb-storage,bus=xhci.0,drive=bot,serial=labbot
        -drive "file=$RUN/usb.img,if=none,id=uasd,format=raw,readonly=on,cache=none,aio=threads"
        -device usb-uas,id=uas,bus=xhci.0
        -device scsi-hd,bus=uas.0,scsi-id=0,lun=0,drive=uasd,serial=labuas)
}
# The USB interface's driver (usb-storage or uas) behind a disk: the scsi host's parent.
driver_of() {
    local p
    p=$(readlink -f "/sys/block/$1/device")
    p=${p%%/host*}
    p=$(readlink "$p/driver")
    echo "${p##*/}"
}
guest() {
    echo "seed000: loading xhci_pci" >/dev/console
    modprobe xhci_pci
    echo "seed000: loading uas, sd_mod" >/dev/console
    modprobe uas
    modprobe sd_mod
    echo "seed000: waiting for disks" >/dev/console
    local bot= uas= d i
    for i in $(seq 60); do
        for d in /sys/block/sd*; do
            [ -e "$d" ] || continue
            d=$(basename "$d")
            case "$(driver_of "$d")" in usb-storage) bot=$d ;; uas) uas=$d ;; esac
        done
        [ -n "$bot" ] && [ -n "$uas" ] && break
        sleep 0.5
    done
    [ -n "$bot" ] && ok "BOT disk: /dev/$bot (usb-storage)" || fail "no usb-storage disk"
    [ -n "$uas" ] && ok "UAS disk: /dev/$uas (uas)" || fail "no uas disk"
    [ -n "$bot" ] && [ -n "$uas" ] || { note "usb: $(cat /sys/bus/usb/devices/*/product 2>/dev/null | tr '\n' ' '); block: $(ls /sys/block | tr '\n' ' ')"; finish; }
    # The seed's read_iops (a directory on the disk there; the raw disk here), 4 MiB of
    # 4 KiB random reads instead of 60 s, so that both tools do the same work.
    local job=(--name=read_iops --size=4m --ioengine=libaio --direct=1 --verify=0 --bs=4K
        --iodepth=256 --rw=randread --group_reporting=1 --iodepth_batch_submit=256
        --iodepth_batch_complete_max=256)
    for d in "$bot" "$uas"; do
        run_tool "fio1-$d" "$d" "$FIO" "${job[@]}" --filename=/dev/$d
        run_tool "fio2-$d" "$d" "$FIO" "${job[@]}" --filename=/dev/$d
        run_tool "iob-$d" "$d" "$IOBENCH" "${job[@]}" --filename=/dev/$d
        judge "read_iops $(driver_of "$d")" --fio "fio1-$d" "fio2-$d" --iob "iob-$d"
    done
    # compare: the BOT side against the UAS side, two runs each.
    local out=$RUN/compare.txt rc=0
    "$IOBENCH" compare --repeat 2 --name BOT --name UAS -- "${job[@]}" --filename=/dev/$bot \
        -- "${job[@]}" --filename=/dev/$uas >"$out" 2>"$RUN/compare.err" || rc=$?
    cat "$out"
    if [ $rc -eq 0 ] && grep -q "UAS is .* BOT's IOPS" "$out"; then
        ok "compare: $(grep -m1 "UAS is" "$out")"
    else
        fail "compare BOT UAS exited $rc: $(tail -3 "$RUN/compare.err" "$out" | tr '\n' ' ')"
    fi
    finish
}
