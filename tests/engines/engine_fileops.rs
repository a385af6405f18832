//! filecreate, filestat, filedelete against fio: the same job under both tools must leave
//! the same files behind (names, sizes, modes), count the same bytes and I/Os, and report
//! one clat sample per file per pass (the timed call) and no other latency.
use crate::common;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What a run left behind and reported.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    /// (name, size, mode) of each file in the directory, sorted.
    files: Vec<(String, u64, u32)>,
    /// Per direction: io bytes, I/Os, clat samples, lat samples, slat samples.
    dirs: Vec<(u64, u64, u64, u64, u64)>,
    error: i64,
}

fn listing(dir: &Path) -> Vec<(String, u64, u32)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let md = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                md.len(),
                md.permissions().mode() & 0o777,
            )
        })
        .collect();
    v.sort();
    v
}

/// Runs `tool` with `args` in a fresh directory `name` (files go in its `d/`).
fn run(mut tool: std::process::Command, name: &str, args: &[&str]) -> (Seen, String) {
    let dir = common::scratch(name);
    std::fs::create_dir(dir.join("d")).unwrap();
    tool.current_dir(&dir)
        .args(["--name=t", "--directory=d"])
        .args(args)
        .arg("--output-format=json");
    let out = common::run(tool);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = text.find('{').expect("json in output");
    let v: Value = serde_json::from_str(&text[start..]).expect("json");
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k]["N"].as_u64().unwrap();
    let dirs = ["read", "write"]
        .iter()
        .map(|d| {
            (
                j[*d]["io_bytes"].as_u64().unwrap(),
                j[*d]["total_ios"].as_u64().unwrap(),
                n(d, "clat_ns"),
                n(d, "lat_ns"),
                n(d, "slat_ns"),
            )
        })
        .collect();
    let seen = Seen {
        files: listing(&dir.join("d")),
        dirs,
        error: j["error"].as_i64().unwrap(),
    };
    let all = format!("{text}{}", String::from_utf8_lossy(&out.stderr));
    (seen, all)
}

/// Runs both tools; asserts they agree and returns iobench's view.
fn same(label: &str, args: &[&str]) -> Option<(Seen, String)> {
    let fio = common::fio()?;
    let (theirs, _) = run(fio, &format!("fileops_{label}_fio"), args);
    let (ours, text) = run(common::iobench(), &format!("fileops_{label}_iob"), args);
    assert_eq!(ours, theirs, "{label}: iobench vs fio\n{text}");
    Some((ours, text))
}

#[test]
fn filecreate_creates_each_file_once_per_pass() {
    let Some((s, _)) = same(
        "create",
        &[
            "--ioengine=filecreate",
            "--nrfiles=6",
            "--filesize=16k",
            "--rw=write",
            "--loops=2",
        ],
    ) else {
        return;
    };
    // Six empty files, mode 0600; 2 passes x 6 files timed; 4 I/Os per file per pass.
    assert_eq!(s.files.len(), 6);
    assert!(s.files.iter().all(|f| f.1 == 0 && f.2 == 0o600), "{s:?}");
    assert_eq!(s.dirs[1], (2 * 6 * 16384, 2 * 6 * 4, 12, 0, 0));
}

#[test]
fn filecreate_mixed_times_in_read_direction() {
    let Some((s, _)) = same(
        "create_rw",
        &[
            "--ioengine=filecreate",
            "--nrfiles=5",
            "--size=40k",
            "--rw=randrw",
            "--unlink=1",
        ],
    ) else {
        return;
    };
    assert!(s.files.is_empty(), "unlink=1 removes the created files");
    assert_eq!(s.dirs[0].2, 5, "the creates are read-direction samples");
    assert_eq!(s.dirs[1].2, 0);
    assert_eq!(s.dirs[0].0 + s.dirs[1].0, 40 * 1024);
}

#[test]
fn filestat_each_stat_type() {
    for ty in ["stat", "lstat", "statx"] {
        let ty_arg = format!("--stat_type={ty}");
        let Some((s, _)) = same(
            &format!("stat_{ty}"),
            &[
                "--ioengine=filestat",
                "--nrfiles=5",
                "--filesize=8k",
                &ty_arg,
                "--loops=3",
            ],
        ) else {
            return;
        };
        // Laid out at setup (8 KiB each, as fio does), then stat'ed once per file per pass.
        assert!(s.files.iter().all(|f| f.1 == 8192), "{s:?}");
        assert_eq!(s.dirs[0], (3 * 5 * 8192, 3 * 5 * 2, 15, 0, 0), "{ty}");
    }
}

#[test]
fn filedelete_deletes_and_a_second_pass_fails() {
    let Some((s, _)) = same(
        "delete",
        &["--ioengine=filedelete", "--nrfiles=4", "--filesize=4k"],
    ) else {
        return;
    };
    assert!(s.files.is_empty());
    assert_eq!(s.dirs[0].2, 4);
    // The second pass finds the first file gone: ENOENT, named with the call and file.
    let Some((s, text)) = same(
        "delete_twice",
        &[
            "--ioengine=filedelete",
            "--nrfiles=4",
            "--filesize=4k",
            "--loops=2",
        ],
    ) else {
        return;
    };
    assert_eq!(s.error, libc::ENOENT as i64);
    assert!(text.contains("delete(d/t.0.0)"), "{text}");
}

#[test]
fn stat_type_rejects_unknown_words() {
    let out = common::run({
        let mut c = common::iobench();
        c.args([
            "--name=t",
            "--ioengine=filestat",
            "--filename=/nonexistent",
            "--stat_type=fstat",
        ]);
        c
    });
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stat_type"), "{err}");
}
