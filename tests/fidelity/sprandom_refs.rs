//! `sprandom` (fio 3.41; `spr_cs` 3.42) against fio 3.41: the same writes in the same
//! order for the same seed (write_iolog), the same notes when it sets the generator and
//! the map, the same refusals; and refused by name in the dialects before 3.41.

use crate::common::{self, reffio};
use crate::dialect_refs::logged;

/// Jobs over the options' range: regions, ratios, block sizes, seeds, a region start,
/// `io_size`, loops, time_based, mixed reads (which draw on the same LFSR) and queue depth.
const SPR_JOBS: &[&[&str]] = &[
    &[
        "--rw=randwrite",
        "--size=1m",
        "--sprandom=1",
        "--spr_num_regions=4",
    ],
    &["--rw=randwrite", "--size=16m", "--sprandom=1"],
    &[
        "--rw=randwrite",
        "--size=16m",
        "--sprandom=1",
        "--randseed=1234",
    ],
    &[
        "--rw=randwrite",
        "--size=8m",
        "--bs=8k",
        "--sprandom=1",
        "--spr_op=0.3",
        "--spr_num_regions=10",
    ],
    &[
        "--rw=randrw",
        "--size=4m",
        "--sprandom=1",
        "--spr_num_regions=8",
    ],
    &[
        "--rw=randwrite",
        "--size=4m",
        "--sprandom=1",
        "--spr_num_regions=1",
    ],
    &["--rw=randwrite", "--size=4m", "--sprandom=1", "--loops=2"],
    &["--rw=randwrite", "--size=4m", "--offset=1m", "--sprandom=1"],
    &[
        "--rw=randwrite",
        "--size=4m",
        "--io_size=2m",
        "--sprandom=1",
    ],
    &["--rw=randtrimwrite", "--size=4m", "--sprandom=1"],
    &["--rw=randwrite", "--size=4m", "--iodepth=8", "--sprandom=1"],
    &[
        "--rw=randwrite",
        "--size=4m",
        "--sprandom=1",
        "--random_generator=lfsr",
        "--norandommap=1",
        "--randrepeat=0",
        "--randseed=99",
    ],
];

fn fio_3_41() -> Option<reffio::RefFio> {
    let r = reffio::reference_fio("3.41");
    if r.is_none() {
        eprintln!("fio 3.41 is not present: sprandom not compared");
    }
    r
}

#[test]
fn sprandom_writes_what_fio_3_41_writes_in_its_order() {
    let Some(r) = fio_3_41() else { return };
    let theirs = r.scratch("sprandom-fio");
    let _g1 = common::Gone(theirs.0.clone());
    let mine = common::scratch("sprandom-iobench");
    let _g2 = common::Gone(mine.clone());
    let mine = (mine.clone(), mine);
    for args in SPR_JOBS {
        let want = logged(r.command(), &theirs, args);
        // In fio 3.41's dialect and in the default (3.42) one alike.
        for tool in [r.iobench(), common::iobench_default()] {
            let got = logged(tool, &mine, args);
            let writes = want.iter().filter(|l| l.contains(" write ")).count();
            assert!(writes > 200, "{args:?}: fio logged {} writes", writes);
            let first = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                got == want,
                "{args:?}: {} lines against fio's {}; first difference at {first:?}: \
                 iobench {:?}, fio {:?}",
                got.len(),
                want.len(),
                first.map(|i| &got[i]),
                first.map(|i| &want[i]),
            );
        }
    }
}

#[test]
fn sprandom_rewrites_blocks_and_writes_the_physical_size() {
    // Without sprandom the same job writes each block once; with it fio's writes come to
    // the physical size's regions: 1 MiB + 15 % = 295 blocks in 4 regions of 73, plus the
    // rewrites of the last one, 286 writes (fio 3.41's count for this job).
    let dir = common::scratch("sprandom-count");
    let _g = common::Gone(dir.clone());
    let dirs = (dir.clone(), dir);
    let lines = logged(common::iobench_default(), &dirs, SPR_JOBS[0]);
    let writes: Vec<&String> = lines.iter().filter(|l| l.contains(" write ")).collect();
    assert_eq!(writes.len(), 286);
    let distinct: std::collections::BTreeSet<&String> = writes.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        256,
        "every 4 KiB block of the 1 MiB once at least"
    );
}

#[test]
fn sprandom_prints_fios_notes_and_refuses_what_fio_refuses() {
    let notes = "fio: sprandom sets random_generator=lfsr\nfio: sprandom sets norandommap=1\n";
    let base = ["--name=s", "--ioengine=null", "--size=1m", "--sprandom=1"];
    let mut c = common::iobench_default();
    c.args(base).arg("--rw=randwrite");
    let out = common::run_ok(c);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with(notes), "{text}");
    let fio = fio_3_41();
    if let Some(r) = &fio {
        let mut c = r.command();
        c.args(base).arg("--rw=randwrite");
        let theirs = String::from_utf8_lossy(&common::run_ok(c).stdout).to_string();
        assert!(theirs.starts_with(notes), "{theirs}");
    }
    // (extra options, what iobench's error names)
    let refused: &[(&[&str], &str)] = &[
        (&["--rw=randread"], "requires random write"),
        (
            &["--rw=randwrite", "--random_generator=tausworthe"],
            "sprandom requires random_generator=lfsr",
        ),
        (
            &["--rw=randwrite", "--norandommap=0"],
            "sprandom requires norandommap=1",
        ),
        (
            &["--rw=randwrite", "--nrfiles=2"],
            "SPRandom supports only one file",
        ),
        (&["--rw=randwrite", "--bs=12k"], "should be power of 2"),
        (
            &["--rw=randwrite", "--spr_num_regions=0"],
            "spr_num_regions",
        ),
        (
            &["--rw=randwrite", "--spr_cs=1m"],
            "spr_cs [1048576] must be smaller",
        ),
    ];
    for (extra, says) in refused {
        let mut c = common::iobench_default();
        c.args(base).args(*extra);
        let out = common::run(c);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} ran");
        assert!(err.contains(says), "{extra:?}: {err}");
        // fio 3.41 refuses the same jobs (spr_cs is 3.42's).
        if let (Some(r), false) = (&fio, extra.iter().any(|a| a.starts_with("--spr_cs"))) {
            let mut c = r.command();
            c.args(base).args(*extra);
            assert!(!common::run(c).status.success(), "fio 3.41 ran {extra:?}");
        }
    }
    // fio aborts on an assertion for a ratio above 5/3; iobench takes (0, 1) as fio's
    // HOWTO says and refuses the rest by name.
    let mut c = common::iobench_default();
    c.args(base).args(["--rw=randwrite", "--spr_op=2"]);
    let out = common::run(c);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("spr_op"));
}

#[test]
fn sprandom_is_refused_by_name_before_fio_3_41_and_spr_cs_before_3_42() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "3.40",
            "--sprandom=1",
            "option 'sprandom' was added in fio 3.41",
        ),
        (
            "3.39",
            "--spr_op=0.2",
            "option 'spr_op' was added in fio 3.41",
        ),
        (
            "3.33",
            "--spr_num_regions=4",
            "option 'spr_num_regions' was added in fio 3.41",
        ),
        (
            "3.41",
            "--spr_cs=4k",
            "option 'spr_cs' was added in fio 3.42",
        ),
    ];
    for (dialect, opt, says) in cases {
        let mut c = common::iobench_default();
        c.arg(format!("--fio-compat={dialect}")).args([
            *opt,
            "--name=s",
            "--ioengine=null",
            "--size=1m",
            "--rw=randwrite",
            "--sprandom=1",
        ]);
        let out = common::run(c);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{dialect} {opt}: {err}"
        );
    }
}
