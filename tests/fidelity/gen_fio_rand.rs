//! Differential tests for random jobs: with fio's default `randrepeat`, or an explicit
//! `randseed`, iobench seeds the same Tausworthe streams as fio and issues the very same
//! I/O sequence — random map, mixes, block size draws and distributions included.

use crate::gen_util;
use gen_util::assert_same_as_fio;

#[test]
fn random_patterns_with_map() {
    for rw in [
        "randread",
        "randwrite",
        "randtrim",
        "randrw",
        "randtrimwrite",
    ] {
        assert_same_as_fio(
            &format!("rand_{rw}"),
            &[&format!("--rw={rw}"), "--size=256k"],
        );
    }
}

#[test]
fn mixes_and_sequencer() {
    assert_same_as_fio("mix70", &["--rw=randrw", "--rwmixread=70", "--size=1m"]);
    assert_same_as_fio("mixw20", &["--rw=rw", "--rwmixwrite=20", "--size=512k"]);
    assert_same_as_fio("randnr", &["--rw=randread:4", "--size=256k"]);
    assert_same_as_fio(
        "randnr_ident",
        &[
            "--rw=randwrite:3",
            "--rw_sequencer=identical",
            "--size=256k",
        ],
    );
    assert_same_as_fio(
        "perc_rand",
        &["--rw=randread", "--percentage_random=30", "--size=512k"],
    );
}

#[test]
fn seeds_and_generators() {
    assert_same_as_fio(
        "norandommap",
        &["--rw=randread", "--norandommap", "--size=512k"],
    );
    assert_same_as_fio(
        "randseed",
        &["--rw=randwrite", "--randseed=1234", "--size=256k"],
    );
    assert_same_as_fio(
        "allrand",
        &[
            "--rw=randrw",
            "--allrandrepeat=1",
            "--bsrange=4k-32k",
            "--size=1m",
        ],
    );
    assert_same_as_fio(
        "taus64",
        &[
            "--rw=randread",
            "--random_generator=tausworthe64",
            "--size=256k",
        ],
    );
    assert_same_as_fio(
        "lfsr",
        &["--rw=randread", "--random_generator=lfsr", "--size=256k"],
    );
    assert_same_as_fio(
        "numjobs_rand",
        &["--rw=randread", "--numjobs=3", "--size=64k"],
    );
    assert_same_as_fio("loops_rand", &["--rw=randread", "--loops=2", "--size=64k"]);
}

#[test]
fn block_size_draws() {
    assert_same_as_fio(
        "rand_bsrange",
        &["--rw=randwrite", "--bsrange=2k-64k", "--size=1m"],
    );
    assert_same_as_fio(
        "rand_bssplit",
        &["--rw=randrw", "--bssplit=4k/50:16k/30:64k,8k", "--size=2m"],
    );
    assert_same_as_fio(
        "blockalign",
        &["--rw=randread", "--bs=8k", "--blockalign=4k", "--size=256k"],
    );
    assert_same_as_fio(
        "seq_rand_bs",
        &[
            "--rw=randread",
            "--bs=4k,16k",
            "--bs_is_seq_rand=1",
            "--percentage_random=50",
            "--size=512k",
        ],
    );
}

#[test]
fn distributions() {
    for d in [
        "zipf:1.2",
        "pareto:0.3",
        "normal",
        "normal:20",
        "zipf:0.8:0.5",
        "zoned:60/10:30/20:10/70",
        "zoned_abs:50/64k:50/128k",
    ] {
        assert_same_as_fio(
            &format!("dist_{}", d.replace([':', '/'], "_")),
            &[
                "--rw=randread",
                &format!("--random_distribution={d}"),
                "--size=1m",
            ],
        );
    }
}

#[test]
fn file_services() {
    for fst in ["random", "random:4", "zipf", "pareto:0.4", "normal"] {
        assert_same_as_fio(
            &format!("fst_{}", fst.replace(':', "_")),
            &[
                "--rw=randread",
                "--nrfiles=4",
                &format!("--file_service_type={fst}"),
                "--size=256k",
            ],
        );
    }
}

#[test]
fn verify_other_than_none_seeds_write_sizes_like_reads() {
    // fio gives the write block-size stream the read one's seed whenever `verify` is not
    // `none`: `verify=null` and a `verify_pattern` alone count too.
    assert_same_as_fio(
        "verify_null_bsrange",
        &[
            "--rw=randrw",
            "--bsrange=1k-16k",
            "--verify=null",
            "--do_verify=0",
            "--size=256k",
        ],
    );
    assert_same_as_fio(
        "verify_pattern_bsrange",
        &[
            "--rw=randrw",
            "--bsrange=1k-16k",
            "--verify_pattern=0xaa",
            "--do_verify=0",
            "--size=256k",
        ],
    );
}
