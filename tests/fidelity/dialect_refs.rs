//! The dialects against the reference fios: every reference present (3.33 on the host,
//! 3.39 and 3.41 in their roots) runs, reports its release, and iobench speaking that
//! release issues the same random I/O and prints the same JSON keys.

use crate::common::{self, reffio};

#[test]
fn each_reference_fio_runs_a_null_job_and_reports_its_release() {
    let refs = reffio::reference_fios();
    for r in &refs {
        let mut c = r.command();
        c.args([
            "--name=x",
            "--ioengine=null",
            "--size=64k",
            "--output-format=json",
        ]);
        let out = common::run_ok(c);
        let j = common::json_report(&out);
        assert_eq!(
            j["fio version"].as_str(),
            Some(format!("fio-{}", r.version).as_str()),
            "{}",
            r.label()
        );
    }
}

/// The I/O lines of an iolog (version 3), without its header, the time column or the
/// directory, sorted per file and kept in order within it (clones log into one file).
fn iolog_lines(text: &str, dir: &std::path::Path) -> Vec<String> {
    let prefix = format!("{}/", dir.display());
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with("fio version"))
        .map(|l| l.split_once(' ').map_or(l, |(_, r)| r).replace(&prefix, ""))
        .collect();
    // Clones write as they go: their lines interleave in any order, each clone's in its
    // own. A stable sort by file name keeps each file's order.
    lines.sort_by(|a, b| a.split(' ').next().cmp(&b.split(' ').next()));
    lines
}

/// The random jobs whose I/O the dialects must reproduce: fio 3.35 changed the default
/// seeds and made `randseed` override `randrepeat`.
const RANDOM_JOBS: &[&[&str]] = &[
    &["--rw=randread", "--size=1m"],
    &["--rw=randread", "--size=1m", "--randseed=1234"],
    &["--rw=randwrite", "--size=512k", "--bsrange=4k-32k"],
    &[
        "--rw=randwrite",
        "--size=512k",
        "--bsrange=4k-32k",
        "--randseed=77",
    ],
    &["--rw=randrw", "--rwmixread=70", "--size=1m"],
    &["--rw=randrw", "--size=1m", "--randseed=5", "--randrepeat=0"],
    &[
        "--rw=randrw",
        "--size=1m",
        "--allrandrepeat=1",
        "--bssplit=4k/50:16k/50",
    ],
    &[
        "--rw=randread",
        "--size=256k",
        "--norandommap",
        "--randseed=9",
    ],
    &["--rw=randtrim", "--size=256k"],
    &["--rw=randread", "--size=256k", "--numjobs=2"],
    &[
        "--rw=randread",
        "--size=256k",
        "--random_generator=tausworthe64",
    ],
];

/// Runs `tool` with `args` and the null engine in `(host dir, dir the tool sees)`,
/// returning the iolog's I/O lines.
pub(crate) fn logged(
    mut tool: std::process::Command,
    dirs: &(std::path::PathBuf, std::path::PathBuf),
    args: &[&str],
) -> Vec<String> {
    let (host, seen) = dirs;
    let log = "io.log";
    let _ = std::fs::remove_file(host.join(log));
    tool.args(["--name=j", "--ioengine=null", "--output-format=json"])
        .arg(format!("--directory={}", seen.display()))
        .arg(format!("--write_iolog={}/{log}", seen.display()))
        .args(args);
    common::run_ok(tool);
    let text = std::fs::read_to_string(host.join(log)).expect("an iolog");
    iolog_lines(&text, seen)
}

/// Asserts that iobench (`ours`) logs the same I/O as fio `r` for every random job.
fn same_iologs(r: &reffio::RefFio, ours: impl Fn() -> std::process::Command, tag: &str) {
    let theirs = r.scratch(&format!("dialect-iolog-{tag}-fio"));
    let _g1 = common::Gone(theirs.0.clone());
    let mine = common::scratch(&format!("dialect-iolog-{tag}-iobench"));
    let _g2 = common::Gone(mine.clone());
    let mine = (mine.clone(), mine);
    for args in RANDOM_JOBS {
        let want = logged(r.command(), &theirs, args);
        let got = logged(ours(), &mine, args);
        assert!(
            want.len() > 4,
            "{}: {args:?}: fio logged {want:?}",
            r.label()
        );
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        assert!(
            got == want,
            "{} vs iobench ({tag}), {args:?}: {} lines against {}; first difference at \
             {first:?}: iobench {:?}, fio {:?}",
            r.label(),
            got.len(),
            want.len(),
            first.map(|i| &got[i]),
            first.map(|i| &want[i]),
        );
    }
}

#[test]
fn default_dialect_logs_the_random_io_of_fio_3_39_and_3_41() {
    let mut ran = 0;
    for v in ["3.39", "3.41"] {
        let Some(r) = reffio::reference_fio(v) else {
            continue;
        };
        same_iologs(&r, common::iobench_default, "default");
        ran += 1;
    }
    eprintln!("compared with {ran} reference fios");
}

#[test]
fn each_dialect_logs_the_random_io_of_its_reference_fio() {
    for r in reffio::reference_fios() {
        let tag = r.version.replace('.', "_");
        same_iologs(&r, || r.iobench(), &tag);
    }
}

#[test]
fn the_old_and_new_seeds_differ_as_fio_3_33_and_3_39_do() {
    // Without this the tests above could pass with one table for every dialect.
    let dir = common::scratch("dialect-seeds-differ");
    let _g = common::Gone(dir.clone());
    let dirs = (dir.clone(), dir);
    let args: &[&str] = &["--rw=randread", "--size=1m", "--randseed=1234"];
    let mut old = common::iobench_default();
    old.env("IOBENCH_FIO_COMPAT", "3.33");
    let old = logged(old, &dirs, args);
    let new = logged(common::iobench_default(), &dirs, args);
    assert_ne!(old, new);
    let mut flag = common::iobench_default();
    flag.arg("--fio-compat=3.33");
    assert_eq!(
        logged(flag, &dirs, args),
        old,
        "--fio-compat as the variable"
    );
}

/// Every key path of a JSON document (`jobs[].read.clat_ns.mean`); JSON+'s bin keys,
/// which are latencies, become `#`.
fn key_paths(v: &serde_json::Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let k = if at.ends_with("bins") && k.parse::<u64>().is_ok() {
                    "#"
                } else {
                    k.as_str()
                };
                let p = format!("{at}.{k}");
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// The jobs whose JSON keys are compared: a plain one, one with a latency target (its
/// `latency_*` keys), and one on a file (disk_util, when the file is on a block device).
const KEY_JOBS: &[&[&str]] = &[
    &["--ioengine=null", "--rw=randread", "--size=1m"],
    &[
        "--ioengine=null",
        "--rw=randrw",
        "--size=4m",
        "--latency_target=10ms",
        "--latency_window=100ms",
        "--latency_percentile=99",
        "--iodepth=4",
    ],
    &["--ioengine=psync", "--rw=write", "--size=1m", "--bs=64k"],
];

/// The key paths `tool` prints for each of [`KEY_JOBS`] in `format` (json or json+).
fn job_keys(
    mk: &dyn Fn() -> std::process::Command,
    dirs: &(std::path::PathBuf, std::path::PathBuf),
    format: &str,
) -> Vec<std::collections::BTreeSet<String>> {
    KEY_JOBS
        .iter()
        .map(|args| {
            let mut c = mk();
            c.args(["--name=k", &format!("--output-format={format}")])
                .arg(format!("--directory={}", dirs.1.display()))
                .args(*args);
            let j = common::json_report(&common::run_ok(c));
            let mut keys = std::collections::BTreeSet::new();
            key_paths(&j, "", &mut keys);
            keys
        })
        .collect()
}

#[test]
fn json_key_sets_equal_each_reference_fios_in_its_dialect() {
    for r in reffio::reference_fios() {
        let tag = r.version.replace('.', "_");
        let theirs = r.scratch(&format!("dialect-keys-{tag}-fio"));
        let _g1 = common::Gone(theirs.0.clone());
        let mine = common::scratch(&format!("dialect-keys-{tag}-iobench"));
        let _g2 = common::Gone(mine.clone());
        let mine = (mine.clone(), mine);
        for format in ["json", "json+"] {
            let want = job_keys(&|| r.command(), &theirs, format);
            let got = job_keys(&|| r.iobench(), &mine, format);
            for ((w, g), args) in want.iter().zip(&got).zip(KEY_JOBS) {
                let missing: Vec<_> = w.difference(g).collect();
                let extra: Vec<_> = g.difference(w).collect();
                assert!(
                    missing.is_empty() && extra.is_empty(),
                    "{} {format} {args:?}: iobench lacks {missing:?} and adds {extra:?}",
                    r.label()
                );
            }
        }
    }
}

#[test]
fn the_default_dialect_adds_only_fio_3_42s_keys_to_fio_3_41s() {
    let Some(r) = reffio::reference_fio("3.41") else {
        return;
    };
    let theirs = r.scratch("dialect-keys-default-fio");
    let _g1 = common::Gone(theirs.0.clone());
    let mine = common::scratch("dialect-keys-default-iobench");
    let _g2 = common::Gone(mine.clone());
    let mine = (mine.clone(), mine);
    let want = job_keys(&|| r.command(), &theirs, "json");
    let got = job_keys(&common::iobench_default, &mine, "json");
    let added: Vec<Vec<&String>> = want
        .iter()
        .zip(&got)
        .map(|(w, g)| g.difference(w).collect())
        .collect();
    let missing: Vec<Vec<&String>> = want
        .iter()
        .zip(&got)
        .map(|(w, g)| w.difference(g).collect())
        .collect();
    assert!(missing.iter().all(Vec::is_empty), "{missing:?}");
    // fio prints the latency_* keys for every job (its latency depth is the job's
    // iodepth); 3.42 adds the two with units after them.
    for (a, args) in added.iter().zip(KEY_JOBS) {
        assert_eq!(
            a,
            &[".jobs[].latency_target_ns", ".jobs[].latency_window_us"],
            "{args:?}: 3.42's keys and no other"
        );
    }
}

/// The `rand_seeds[i]=…` lines of `--debug=random` (fio 3.35+), without the pid column.
fn seed_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| {
            l.starts_with("random")
                && (l.contains("rand_seeds[") || l.contains("FIO_RAND_NR_OFFS="))
        })
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

/// `--debug=random` lists a job's seeds from fio 3.35 on, and fio's own t/random_seed.py
/// reads them to check `randseed`, `randrepeat` and `allrandrepeat`: iobench speaking each
/// reference's dialect lists the same count and the same seeds for the deterministic
/// cases (the OS-random one, `randrepeat=0` alone, only by its count), and 3.33 lists none.
#[test]
fn debug_random_lists_the_seeds_each_reference_fio_lists() {
    let cases: [&[&str]; 4] = [
        &["--randseed=67890", "--randrepeat=0"],
        &["--randseed=12345"],
        &["--randrepeat=1"],
        &["--allrandrepeat=1", "--randseed=67890"],
    ];
    for r in reffio::reference_fios() {
        for extra in cases {
            let job = [
                "--debug=random",
                "--name=random_seed",
                "--ioengine=null",
                "--filesize=32k",
                "--rw=randread",
            ];
            let mut f = r.command();
            f.args(job).args(extra);
            let fio = seed_lines(&String::from_utf8_lossy(&common::run_ok(f).stdout));
            let mut i = r.iobench();
            i.args(job).args(extra);
            let iob = seed_lines(&String::from_utf8_lossy(&common::run_ok(i).stdout));
            assert_eq!(iob, fio, "{} {extra:?}", r.label());
            if r.version == "3.33" {
                assert!(fio.is_empty());
            } else {
                assert!(fio.len() > 20, "{} lists {} lines", r.label(), fio.len());
            }
        }
    }
}

/// The `latency   :` line and the sync block's heading of a job, as `tool` prints them.
fn normal_lines(mut c: std::process::Command, dir: &std::path::Path) -> (String, String, u64) {
    c.args([
        "--name=l",
        "--ioengine=psync",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
    ])
    .args(["--fsync=4", "--latency_target=10ms", "--latency_window=1s"])
    .arg(format!("--filename={}", dir.join("f").display()))
    .arg("--output-format=normal,json");
    let out = common::run_ok(c);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |pat: &str| {
        text.lines()
            .find(|l| l.contains(pat))
            .unwrap_or_else(|| panic!("no '{pat}' line in:\n{text}"))
            .trim()
            .to_string()
    };
    // The JSON document and the normal text, in either order: the first document.
    let at = if text.starts_with('{') {
        0
    } else {
        text.find("\n{").expect("the JSON") + 1
    };
    let json: serde_json::Value = serde_json::Deserializer::from_str(&text[at..])
        .into_iter()
        .next()
        .expect("a JSON document")
        .unwrap();
    let target = json["jobs"][0]["latency_target"].as_u64().unwrap();
    (line("latency   :"), line("fsync/fdatasync"), target)
}

#[test]
fn latency_target_and_sync_lines_read_as_each_fio_prints_them() {
    // fio keeps latency_target in ns and latency_window in µs (10ms: 10000000, 1s:
    // 1000000, in 3.33 and 3.41 alike); 3.42 prints them with units in the normal line
    // (`scale_down_ns`: s from 2 s, ms from 2 ms, us from 2 µs) and heads the sync block
    // with syncfs too (end_syncfs is 3.42's).
    for r in reffio::reference_fios() {
        let theirs = r.scratch(&format!("lat-line-{}", r.version));
        let _g = common::Gone(theirs.0.clone());
        let mine = common::scratch(&format!("lat-line-iobench-{}", r.version));
        let want = normal_lines(r.command(), &theirs.1);
        let got = normal_lines(r.iobench(), &mine);
        let depth = |l: &str| l.split("depth=").nth(1).map(str::to_string);
        assert_eq!(want.2, 10_000_000, "{} latency_target", r.label());
        assert_eq!(got.2, want.2, "{}: latency_target", r.label());
        assert_eq!(got.1, want.1, "{}", r.label());
        // The depth the target settled on is the run's own; the rest of the line is fio's.
        let cut = |l: &str| l.split(", depth=").next().unwrap().to_string();
        assert_eq!(cut(&got.0), cut(&want.0), "{}", r.label());
        assert!(depth(&got.0).is_some(), "{}", got.0);
        assert!(
            want.0
                .starts_with("latency   : target=10000000, window=1000000,"),
            "{}",
            want.0
        );
    }
    let dir = common::scratch("lat-line-iobench-3.42");
    let (line, sync, target) = normal_lines(common::iobench_default(), &dir);
    assert_eq!(target, 10_000_000);
    assert!(
        line.starts_with("latency   : target=10.00ms, window=1000.00ms, percentile=100.00%,"),
        "{line}"
    );
    assert_eq!(sync, "fsync/fdatasync/sync_file_range/syncfs:");
}
