# lab: null_blk with poll queues: iobench peak (t/io_uring's flags) and fio's io_uring on /dev/nullb0
host_setup() {
    qemu_args=()
}
guest() {
    modprobe null_blk
    ls -la /dev/nullb0
    "$FIO" --name=x --filename=/dev/nullb0 --rw=randread --size=64m --ioengine=io_uring
    "$IOBENCH" --name=x --filename=/dev/nullb0 --rw=randread --size=64m --ioengine=io_uring
    cat /sys/block/nullb0/stat
    finish
}
