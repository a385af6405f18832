# lab: an emulated NVMe namespace's character device (/dev/ng0n1): fio's io_uring_cmd engine runs; iobench's is still refused (not implemented), so this case checks fio's run and iobench's refusal
host_setup() {
    truncate -s 64M "$RUN/nvme.img"
    qemu_args=(-drive "file=$RUN/nvme.img,if=none,id=nv0,format=raw,cache=none,aio=threads"
        -device "nvme,serial=labcmd,drive=nv0")
}
guest() {
    modprobe nvme
    local i
    for i in $(seq 50); do [ -c /dev/ng0n1 ] && break; sleep 0.1; done
    [ -c /dev/ng0n1 ] && ok "nvme: /dev/ng0n1" || { fail "no /dev/ng0n1"; finish; }
    local job=(--name=cmd --filename=/dev/ng0n1 --ioengine=io_uring_cmd --cmd_type=nvme
        --rw=randread --bs=4k --size=4m --iodepth=8)
    run_tool fio-cmd nvme0n1 "$FIO" "${job[@]}" &&
        ok "fio's io_uring_cmd engine: $(grep -o '"total_ios" : [0-9]*' "$RUN/fio-cmd/out.json" | head -1)"
    local out
    if out=$("$IOBENCH" "${job[@]}" 2>&1); then
        fail "iobench ran ioengine=io_uring_cmd: the case must judge it against fio now"
    else
        case "$out" in
            *"ioengine=io_uring_cmd"*"not supported yet"*) ok "iobench refuses io_uring_cmd: $out" ;;
            *) fail "iobench's io_uring_cmd error is not the refusal: $out" ;;
        esac
    fi
    finish
}
