//! `zonemode=zbd` on regular files, compared with fio 3.33. This kernel has no zoned block
//! devices, so, as fio does on a regular file, both tools split the file into
//! `zonesize` zones that start empty and keep each zone's write pointer in memory.
//!
//! With a synchronous engine (psync, or null at iodepth 1) fio's zone choices follow from
//! its random offsets alone, and those iobench draws from the same generators: the tests
//! compare the write_iolog offset for offset, and the `; N zone resets` count. With an
//! asynchronous engine at depth, fio closes a full zone when its last write completes, so
//! its choices depend on completion timing: there the tests check what fio guarantees
//! (issued counts, writes only at write pointers, never more open zones than allowed) on
//! both tools' logs.
use crate::common;

use common::{iobench, run};
use std::path::Path;
use std::process::{Command, Output};

/// One tool's run of a zoned job: its output and its iolog as `(action, offset, length)`.
struct Zoned {
    out: Output,
    log: Vec<(String, u64, u64)>,
}

impl Zoned {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    fn all_text(&self) -> String {
        self.stdout() + &String::from_utf8_lossy(&self.out.stderr)
    }

    /// The writes and reads of the log, in order.
    fn io(&self) -> Vec<(String, u64, u64)> {
        self.log
            .iter()
            .filter(|e| e.0 == "read" || e.0 == "write")
            .cloned()
            .collect()
    }

    /// The counts of every `; N zone resets` on the write lines of the normal report.
    fn zone_resets(&self) -> Vec<u64> {
        self.stdout()
            .lines()
            .filter_map(|l| l.split("; ").nth(1)?.strip_suffix(" zone resets"))
            .map(|n| n.trim().parse().unwrap())
            .collect()
    }
}

/// Runs `tool` with `args` in `dir` (normal output), with `file` (created `file_size`
/// bytes long first when not 0) as every job's file and an iolog beside it.
fn zoned(mut tool: Command, dir: &Path, file_size: u64, args: &[&str]) -> Zoned {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("zoned.dat");
    if file_size != 0 {
        let f = std::fs::File::create(&file).unwrap();
        f.set_len(file_size).unwrap();
    }
    let log = dir.join("io.log");
    // The file and the log go in front: each job of the command line inherits them.
    tool.arg(format!("--filename={}", file.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .args(args);
    let out = run(tool);
    let log = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // fio 3.33's v3 lines: time, file, action[, offset, length].
            let action = f.get(2)?.to_string();
            let num = |i: usize| f.get(i).and_then(|v| v.parse().ok()).unwrap_or(0);
            Some((action, num(3), num(4)))
        })
        .collect();
    Zoned { out, log }
}

/// Both tools' runs of the same job (`None` without fio).
fn both(name: &str, file_size: u64, args: &[&str]) -> Option<[Zoned; 2]> {
    let fio = common::fio()?;
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    Some([
        zoned(fio, &base.join("fio"), file_size, args),
        zoned(iobench(), &base.join("iobench"), file_size, args),
    ])
}

/// Both tools ran the job, and iobench issued fio's I/Os, offset for offset.
fn assert_same_io(runs: &[Zoned; 2]) {
    for r in runs {
        assert!(r.out.status.success(), "failed: {}", r.all_text());
    }
    let (f, i) = (runs[0].io(), runs[1].io());
    assert!(!f.is_empty(), "fio issued nothing: {}", runs[0].all_text());
    if let Some(at) = (0..f.len().max(i.len())).find(|&k| f.get(k) != i.get(k)) {
        panic!(
            "iolog differs at I/O {at} of {} (fio) / {} (iobench): fio {:?}, iobench {:?}",
            f.len(),
            i.len(),
            f.get(at),
            i.get(at)
        );
    }
}

/// Zone resets as fio counts them, equal in both tools; returns iobench's.
fn same_resets(runs: &[Zoned; 2]) -> Vec<u64> {
    let (f, i) = (runs[0].zone_resets(), runs[1].zone_resets());
    assert_eq!(f, i, "zone resets (fio, iobench)");
    i
}

const NULL: &[&str] = &["--ioengine=null", "--iodepth=1"];

fn args<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// A sequential write over several zones of a regular file: the same writes, and the
/// region fitted to whole zones as fio fits it (`size=6M` over 4 MiB zones writes one
/// zone, with fio's "rounded down io_size" line).
#[test]
fn sequential_write_over_zones_matches_fio() {
    let Some(runs) = both(
        "zbd-seq",
        16 << 20,
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--bs=64k",
            "--size=6M",
            "--zonemode=zbd",
            "--zonesize=4M",
        ],
    ) else {
        return;
    };
    assert_same_io(&runs);
    let writes = runs[1].io();
    assert_eq!(writes.len(), 64, "one 4 MiB zone of 64 KiB writes");
    assert_eq!(writes.last().unwrap().1, (4 << 20) - (64 << 10));
    for r in &runs {
        assert!(
            r.stdout()
                .contains("zoned.dat: rounded down io_size from 6291456 to 4194304"),
            "no rounding line: {}",
            r.stdout()
        );
    }
    assert_eq!(same_resets(&runs), vec![0]);

    // The whole file: every zone written from its start to its end, in order.
    let Some(runs) = both(
        "zbd-seq-all",
        16 << 20,
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--bs=64k",
            "--zonemode=zbd",
            "--zonesize=4M",
        ],
    ) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(runs[1].io().len(), 256);
}

/// `zonecapacity` below `zonesize`: a sequential writer stops at each zone's capacity and
/// goes on at the next zone's start; a random writer resets zones once they reach it.
#[test]
fn zone_capacity_below_zone_size_matches_fio() {
    let Some(runs) = both(
        "zbd-cap-seq",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=write",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--zonecapacity=768k",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    let writes = runs[1].io();
    assert_eq!(writes.len(), 8 * 192, "768 KiB of each of the 8 zones");
    assert!(writes.iter().all(|w| w.1 % (1 << 20) < 768 << 10));

    let Some(runs) = both(
        "zbd-cap-rand",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--zonecapacity=768k",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(same_resets(&runs), vec![8]);
}

/// Checks a log against what fio guarantees of zoned writes: every write starts at its
/// zone's write pointer (or at the zone's start after a reset), and at no point are more
/// than `max_open` zones partly written. Returns the most zones open at once.
fn check_zoned_writes(
    log: &[(String, u64, u64)],
    zone: u64,
    capacity: u64,
    max_open: usize,
) -> usize {
    let mut wp: std::collections::HashMap<u64, u64> = Default::default();
    let mut most = 0;
    for (i, (_, off, len)) in log.iter().filter(|e| e.0 == "write").enumerate() {
        let z = off / zone;
        let start = z * zone;
        let at = wp.entry(z).or_insert(start);
        assert!(
            *off == *at || *off == start,
            "write {i} at {off} is neither at zone {z}'s write pointer {at} nor its start"
        );
        *at = off + len;
        assert!(
            *at <= start + capacity,
            "write {i} passes zone {z}'s capacity"
        );
        let open = wp
            .iter()
            .filter(|(&z, &w)| w > z * zone && w < z * zone + capacity)
            .count();
        most = most.max(open);
        assert!(
            open <= max_open,
            "write {i}: {open} zones open, more than {max_open}"
        );
    }
    most
}

/// Random writes with `max_open_zones=2`: writes land at the write pointers of two zones
/// at a time, as fio's do, with fio's offsets and zone resets (synchronous engine); with
/// libaio at depth 8, where fio's zone choices depend on completion timing, both tools
/// keep to two open zones and issue the same I/O count.
#[test]
fn random_write_with_two_open_zones_matches_fio() {
    let Some(runs) = both(
        "zbd-open2",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--max_open_zones=2",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(same_resets(&runs), vec![3]);
    for r in &runs {
        assert_eq!(check_zoned_writes(&r.log, 1 << 20, 1 << 20, 2), 2);
    }

    // Without the limit the writes spread over every zone (the check above fails).
    let Some(free) = both(
        "zbd-open-any",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&free);
    assert_eq!(check_zoned_writes(&free[1].log, 1 << 20, 1 << 20, 8), 8);

    // A limit per job under the limit of the file.
    let Some(runs) = both(
        "zbd-job-open",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--max_open_zones=3",
                "--job_max_open_zones=2",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    for r in &runs {
        check_zoned_writes(&r.log, 1 << 20, 1 << 20, 2);
    }

    // An asynchronous engine at depth on a real file: fio's guarantees, in both tools.
    let Some(runs) = both(
        "zbd-open2-aio",
        16 << 20,
        &[
            "--name=w",
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
            "--rw=randwrite",
            "--bs=16k",
            "--zonemode=zbd",
            "--zonesize=1M",
            "--max_open_zones=2",
        ],
    ) else {
        return;
    };
    let counts: Vec<usize> = runs.iter().map(|r| r.io().len()).collect();
    assert_eq!(counts[0], counts[1], "writes issued (fio, iobench)");
    assert_eq!(counts[1], 1024);
    for r in &runs {
        assert!(r.out.status.success(), "{}", r.all_text());
        check_zoned_writes(&r.log, 1 << 20, 1 << 20, 2);
    }
}

/// A read job after a write job of the same run sees the write pointers the writer left
/// (fio shares a file's zones between its jobs): without `read_beyond_wp` it reads only
/// below them, with it the whole file. A read job of a run of its own finds every zone
/// empty and reads nothing, in both tools.
#[test]
fn reads_after_writes_stay_below_the_write_pointer_as_in_fio() {
    let job = |rbwp: &'static str, rw: &'static str| {
        vec![
            "--ioengine=psync",
            "--bs=64k",
            "--zonemode=zbd",
            "--zonesize=4M",
            "--name=w",
            "--rw=randwrite",
            "--size=10M",
            "--name=r",
            "--stonewall",
            rw,
            rbwp,
        ]
    };
    let mut read_counts = Vec::new();
    for (rbwp, rw) in [
        ("--read_beyond_wp=0", "--rw=read"),
        ("--read_beyond_wp=1", "--rw=read"),
        ("--read_beyond_wp=0", "--rw=randread"),
    ] {
        let Some(runs) = both("zbd-read", 16 << 20, &job(rbwp, rw)) else {
            return;
        };
        assert_same_io(&runs);
        let reads = runs[1].io().iter().filter(|e| e.0 == "read").count();
        read_counts.push(reads);
        if rbwp.ends_with('0') {
            // Every read lies below the write pointer of its zone (8 MiB were written:
            // the region rounded down to two zones).
            assert!(runs[1]
                .io()
                .iter()
                .filter(|e| e.0 == "read")
                .all(|e| e.1 + e.2 <= 8 << 20));
        }
    }
    assert_eq!(read_counts[0], 128, "read stops at the write pointers");
    assert_eq!(read_counts[1], 256, "read_beyond_wp reads the whole file");

    let Some(runs) = both(
        "zbd-read-empty",
        16 << 20,
        &[
            "--name=r",
            "--ioengine=psync",
            "--rw=read",
            "--bs=64k",
            "--zonemode=zbd",
            "--zonesize=4M",
        ],
    ) else {
        return;
    };
    for r in &runs {
        assert!(r.out.status.success(), "{}", r.all_text());
        assert!(r.io().is_empty(), "read of empty zones issued I/O");
    }
}

/// A mixed job writes first while its zones hold nothing to read (fio's
/// `zbd_adjust_ddir`), then reads what it wrote: the same I/O in both tools.
#[test]
fn mixed_job_matches_fio() {
    let Some(runs) = both(
        "zbd-randrw",
        0,
        &args(
            NULL,
            &[
                "--name=m",
                "--rw=randrw",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--max_open_zones=4",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(runs[1].io()[0].0, "write", "the first I/O writes");
}

/// `zone_reset_threshold` and `zone_reset_frequency`: once the written share passes the
/// threshold, one write in 1/frequency resets its zone first; also resets of full zones
/// over several loops. The counts on the write line and the offsets are fio's.
#[test]
fn zone_resets_match_fio() {
    let Some(runs) = both(
        "zbd-reset-freq",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--zone_reset_threshold=0.2",
                "--zone_reset_frequency=0.3",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    let with_frequency = same_resets(&runs)[0];

    let Some(runs) = both(
        "zbd-reset-none",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--zonemode=zbd",
                "--zonesize=1M",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    let without = same_resets(&runs)[0];
    assert!(
        with_frequency > without + 10,
        "the frequency adds resets: {with_frequency} vs {without}"
    );

    let Some(runs) = both(
        "zbd-reset-loops",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=randwrite",
                "--bs=4k",
                "--size=8M",
                "--loops=3",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--max_open_zones=2",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(same_resets(&runs), vec![17]);

    // A zone size that is not a multiple of the block: fio resets a zone whose rest is
    // too small for a block instead of writing it.
    let Some(runs) = both(
        "zbd-reset-odd",
        0,
        &args(
            NULL,
            &[
                "--name=w",
                "--rw=write",
                "--bs=64k",
                "--size=16M",
                "--zonemode=zbd",
                "--zonesize=1000k",
            ],
        ),
    ) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(same_resets(&runs), vec![17]);
}

/// What fio refuses, iobench refuses: both exit non-zero, and iobench's message names
/// the option (or the file) and what is expected. The zone options without
/// `zonemode=zbd` are accepted and change nothing, in both.
#[test]
fn zoned_errors_as_in_fio() {
    let Some(_) = common::fio() else { return };
    let base = ["--name=e", "--ioengine=psync", "--rw=write", "--bs=64k"];
    let cases: &[(&[&str], &str)] = &[
        (&["--zonemode=zbd", "--size=8M"], "zonesize"),
        (&["--zonemode=zbd", "--zonesize=256"], "512"),
        (
            &["--zonemode=zbd", "--zonesize=4M", "--zonecapacity=5M"],
            "zonecapacity",
        ),
        (
            &["--zonemode=zbd", "--zonesize=32M"],
            "smaller than zone size",
        ),
        (
            &["--zonemode=zbd", "--zonesize=4M", "--create_serialize=0"],
            "create_serialize",
        ),
        (
            &["--zonemode=zbd", "--zonesize=4M", "--job_max_open_zones=2"],
            "max_open_zones",
        ),
        (
            &["--zonemode=zbd", "--zonesize=1M", "--zoneskip=1500k"],
            "zoneskip",
        ),
        (
            &[
                "--zonemode=zbd",
                "--zonesize=1M",
                "--zone_reset_threshold=2",
            ],
            "zone_reset_threshold",
        ),
        (
            &["--zonemode=zbd", "--zonesize=1M", "--max_open_zones=5000"],
            "max_open_zones",
        ),
        (
            &["--zonemode=zbd", "--zonesize=1M", "--zonecapacity=32k"],
            "zone capacity",
        ),
        (&["--zonemode=zbd", "--zonesize=32k"], "zonesize"),
        (
            &[
                "--zonemode=zbd",
                "--zonesize=4M",
                "--size=6M",
                "--offset=1M",
            ],
            "at least one zone",
        ),
        (&["--zonesize=1M", "--size=1M"], "zonemode"),
    ];
    for (i, (extra, expect)) in cases.iter().enumerate() {
        let all = args(&base, extra);
        let Some(runs) = both(&format!("zbd-err-{i}"), 16 << 20, &all) else {
            return;
        };
        for (tool, r) in ["fio", "iobench"].iter().zip(&runs) {
            assert!(
                !r.out.status.success(),
                "{tool} accepted {extra:?}: {}",
                r.all_text()
            );
        }
        let text = runs[1].all_text();
        assert!(
            text.contains(expect),
            "{extra:?}: message lacks '{expect}': {text}"
        );
        assert!(!text.contains("panicked"), "{text}");
    }
    // The zone options of a job without zonemode=zbd: accepted, ignored.
    let extra = [
        "--size=1M",
        "--max_open_zones=2",
        "--read_beyond_wp=1",
        "--zone_reset_threshold=0.5",
        "--zone_reset_frequency=0.5",
        "--zonecapacity=1M",
        "--ignore_zone_limits=1",
        "--job_max_open_zones=1",
    ];
    let Some(runs) = both("zbd-ignored", 16 << 20, &args(&base, &extra)) else {
        return;
    };
    assert_same_io(&runs);
    assert_eq!(runs[1].io().len(), 16);
}

/// Sizes in zones (`size=3z`, `offset=2z`, `io_size=5z`, `zoneskip=1z`): fio converts
/// them with the zone size once zones are known (zbd or strided), and leaves them unset
/// (0) without one. The same I/Os as fio, offset for offset, in each case.
#[test]
fn sizes_in_zones_convert_as_in_fio() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "zbd",
            &[
                "--zonemode=zbd",
                "--zonesize=1m",
                "--size=3z",
                "--offset=2z",
            ],
        ),
        (
            "zbd-io-size",
            &[
                "--zonemode=zbd",
                "--zonesize=1m",
                "--size=2z",
                "--io_size=5z",
                "--offset=1z",
            ],
        ),
        (
            "zbd-zero",
            &["--zonemode=zbd", "--zonesize=1m", "--size=0z"],
        ),
        (
            "strided",
            &[
                "--zonemode=strided",
                "--zonesize=512k",
                "--zoneskip=1z",
                "--size=3z",
            ],
        ),
        ("no-zones", &["--size=3z"]),
    ];
    for (name, zone_args) in cases {
        let job = args(
            &["--name=w", "--ioengine=psync", "--rw=write", "--bs=256k"],
            zone_args,
        );
        let Some(runs) = both(&format!("zbd-nz-{name}"), 16 << 20, &job) else {
            return;
        };
        assert_same_io(&runs);
    }
}
