//! Differential tests: iobench's generator issues exactly the I/O fio 3.33 issues (same
//! directions, files, offsets and lengths, in the same order) for sequential and
//! deterministic jobs, read from fio's own `--write_iolog`.

use crate::gen_util;
use gen_util::assert_same_as_fio;

#[test]
fn sequential_patterns() {
    for rw in ["read", "write", "trim", "rw", "trimwrite"] {
        assert_same_as_fio(&format!("seq_{rw}"), &[&format!("--rw={rw}"), "--size=64k"]);
    }
}

#[test]
fn holes_forward_and_backward() {
    assert_same_as_fio("hole_fwd", &["--rw=write:8k", "--size=128k"]);
    assert_same_as_fio("hole_back", &["--rw=write:-8k", "--size=64k"]);
    assert_same_as_fio(
        "hole_back_off",
        &["--rw=read:-8k", "--offset=32k", "--size=32k"],
    );
    assert_same_as_fio("hole_rw", &["--rw=rw:4k", "--size=64k", "--bs=2k"]);
}

#[test]
fn offsets_and_sizes() {
    assert_same_as_fio("off_bytes", &["--rw=read", "--offset=12k", "--size=40k"]);
    assert_same_as_fio("off_pct", &["--rw=write", "--offset=50%", "--size=64k"]);
    assert_same_as_fio(
        "off_align",
        &[
            "--rw=write",
            "--offset=30%",
            "--offset_align=16k",
            "--size=256k",
        ],
    );
    assert_same_as_fio("bs_unaligned_size", &["--rw=read", "--size=10k"]);
}

#[test]
fn offset_increment_with_numjobs() {
    assert_same_as_fio(
        "incr",
        &[
            "--rw=write",
            "--size=16k",
            "--numjobs=3",
            "--offset_increment=16k",
        ],
    );
}

#[test]
fn loops_io_size_number_ios() {
    assert_same_as_fio("loops", &["--rw=read", "--size=16k", "--loops=3"]);
    assert_same_as_fio("io_size", &["--rw=write", "--size=16k", "--io_size=40k"]);
    assert_same_as_fio("number_ios", &["--rw=read", "--size=64k", "--number_ios=5"]);
}

#[test]
fn block_sizes_per_direction() {
    assert_same_as_fio("bs_dir", &["--rw=rw", "--bs=4k,8k", "--size=64k"]);
    assert_same_as_fio(
        "bsrange",
        &["--rw=write", "--bsrange=1k-16k", "--size=256k"],
    );
    assert_same_as_fio(
        "bssplit",
        &["--rw=write", "--bssplit=4k/20:8k/50:64k/30", "--size=1m"],
    );
    assert_same_as_fio(
        "bs_unaligned",
        &[
            "--rw=read",
            "--bsrange=1000-9000",
            "--blocksize_unaligned=1",
            "--size=256k",
        ],
    );
}

#[test]
fn strided_zones() {
    assert_same_as_fio(
        "zones",
        &[
            "--rw=read",
            "--size=256k",
            "--zonemode=strided",
            "--zonesize=16k",
            "--zoneskip=32k",
        ],
    );
    assert_same_as_fio(
        "zones_range",
        &[
            "--rw=read",
            "--size=256k",
            "--zonemode=strided",
            "--zonesize=8k",
            "--zonerange=32k",
        ],
    );
    assert_same_as_fio(
        "zones_rand",
        &[
            "--rw=randread",
            "--size=256k",
            "--zonemode=strided",
            "--zonesize=32k",
            "--zonerange=64k",
            "--zoneskip=16k",
        ],
    );
}

#[test]
fn several_files() {
    assert_same_as_fio("nrfiles_rr", &["--rw=write", "--size=64k", "--nrfiles=4"]);
    assert_same_as_fio(
        "nrfiles_seq",
        &[
            "--rw=read",
            "--size=64k",
            "--nrfiles=3",
            "--file_service_type=sequential",
        ],
    );
    assert_same_as_fio(
        "nrfiles_rr2",
        &[
            "--rw=read",
            "--size=64k",
            "--nrfiles=2",
            "--file_service_type=roundrobin:3",
        ],
    );
}
