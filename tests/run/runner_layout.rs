//! Laying files out, against the real fio: `create_only` (files made, no I/O),
//! `create_fsync` (a laid-out file is synced only when its data was written, and not
//! with `create_fsync=0`), `create_serialize=0` (each clone lays out its own files).

use crate::common;

use std::path::Path;
use std::process::Command;

fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                e.metadata().map(|m| m.len()).unwrap_or(0),
            )
        })
        .collect();
    v.sort();
    v
}

fn in_dir(mut c: Command, dir: &Path, args: &[&str]) -> std::process::Output {
    c.args(args).arg(format!("--directory={}", dir.display()));
    common::run(c)
}

#[test]
fn create_only_lays_out_and_does_no_io() {
    let args = [
        "--name=c",
        "--size=1m",
        "--rw=read",
        "--nrfiles=2",
        "--create_only=1",
        "--output-format=json",
    ];
    let dir = common::scratch("create_only_iobench");
    let out = in_dir(common::iobench(), &dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"].as_u64(), Some(0));
    assert_eq!(v["jobs"][0]["jobname"].as_str(), Some("c"));
    let ours = listing(&dir);
    assert_eq!(
        ours,
        vec![("c.0.0".to_string(), 524288), ("c.0.1".to_string(), 524288)]
    );
    if let Some(fio) = common::fio() {
        let fdir = common::scratch("create_only_fio");
        let out = in_dir(fio, &fdir, &args);
        assert!(out.status.success());
        assert_eq!(listing(&fdir), ours);
    }
}

/// How many fsync/fdatasync calls a run makes, counted with strace (None without it).
fn syncs(tool: Command, dir: &Path, args: &[&str]) -> Option<usize> {
    let have = Command::new("strace")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have {
        eprintln!("strace not installed: skipping sync count");
        return None;
    }
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let _ = std::fs::remove_file(e.path());
    }
    let log = dir.with_extension("strace");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(tool.get_program())
        .args(args)
        .arg(format!("--directory={}", dir.display()));
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    Some(
        text.lines()
            .filter(|l| l.contains("fsync(") || l.contains("fdatasync("))
            .count(),
    )
}

#[test]
fn create_fsync_syncs_what_fio_syncs() {
    let dir = common::scratch("create_fsync");
    for (rw, v, want) in [
        ("read", "1", 2),
        ("read", "0", 0),
        ("write", "1", 0),
        ("randrw", "1", 2),
    ] {
        let args = [
            "--name=c",
            "--size=1m",
            &format!("--rw={rw}"),
            "--nrfiles=2",
            &format!("--create_fsync={v}"),
            "--output-format=terse",
        ];
        let Some(n) = syncs(common::iobench(), &dir, &args) else {
            return;
        };
        assert_eq!(n, want, "rw={rw} create_fsync={v}");
        if let Some(fio) = common::fio() {
            assert_eq!(syncs(fio, &dir, &args), Some(n), "rw={rw} create_fsync={v}");
        }
    }
}

#[test]
fn create_serialize_off_lays_out_in_each_clone() {
    let dir = common::scratch("create_serialize");
    let out = in_dir(
        common::iobench(),
        &dir,
        &[
            "--name=s",
            "--size=256k",
            "--rw=read",
            "--numjobs=3",
            "--create_serialize=0",
            "--group_reporting",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.matches("s: Laying out IO file (1 file / 0MiB)")
            .count(),
        3,
        "{text}"
    );
    // Every line comes after the workers started.
    let start = text.find("Starting 3 processes").expect("starting line");
    assert!(text.find("Laying out").expect("layout") > start, "{text}");
    assert_eq!(
        listing(&dir),
        vec![
            ("s.0.0".to_string(), 262144),
            ("s.1.0".to_string(), 262144),
            ("s.2.0".to_string(), 262144)
        ]
    );
    assert!(text.contains("io=768KiB"), "{text}");
}

/// A small tmpfs, unmounted on drop (root only).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn new(name: &str, size: &str) -> Option<Tmpfs> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipping {name}: needs root to mount a tmpfs");
            return None;
        }
        let dir = common::scratch(name);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("skipping {name}: mount failed");
            return None;
        }
        Some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// What a fill_device run did: exit code, layout line, write bytes, issued writes,
/// err=, the stderr error lines (directory replaced), and the files left.
type FillSeen = (
    Option<i32>,
    String,
    u64,
    u64,
    i64,
    Vec<String>,
    Vec<(String, u64)>,
);

fn fill_run(tool: Command, prefix: &str, name: &str) -> Option<FillSeen> {
    let fs = Tmpfs::new(name, "8m")?;
    let out = in_dir(
        tool,
        &fs.0,
        &[
            "--name=f",
            "--rw=write",
            "--bs=64k",
            "--fill_device=1",
            "--output-format=json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let job = &v["jobs"][0];
    let err_lines: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(|l| l.replace(&fs.0.display().to_string(), "DIR"))
        .collect();
    let layout = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.contains("Laying out"))
        .unwrap_or("")
        .to_string();
    Some((
        out.status.code(),
        layout,
        job["write"]["io_bytes"].as_u64().unwrap_or(0),
        job["write"]["total_ios"].as_u64().unwrap_or(0),
        job["error"].as_i64().unwrap_or(-1),
        err_lines,
        listing(&fs.0),
    ))
}

#[test]
fn fill_device_writes_until_the_file_system_is_full() {
    let Some(ours) = fill_run(common::iobench(), "iobench: ", "fill_iobench") else {
        return;
    };
    assert_eq!(ours.0, Some(0), "{ours:?}");
    assert_eq!(ours.2, 8 << 20, "{ours:?}");
    assert_eq!(ours.4, 0, "{ours:?}");
    assert_eq!(ours.6, vec![("f.0.0".to_string(), 8 << 20)]);
    if let Some(fio) = common::fio() {
        let theirs = fill_run(fio, "fio: ", "fill_fio").expect("tmpfs");
        assert_eq!(ours, theirs);
    }
}

/// seed004's q5: one shared file (`filesize`, `size=20%`) read at five offsets (`offset=N%`),
/// each job its own group. fio sets each job's file up in turn: a job's percentage offset
/// comes from the file as the jobs before it left it, and it extends the file only to its
/// region's end (offset + 20 % of the file size), so the file grows job by job and each
/// job prints its own "Laying out IO file" line. The same lines, final size and offsets.
#[test]
fn percent_jobs_extend_a_shared_file_job_by_job_as_fio() {
    let mut job = String::from(
        "[global]\nfilename=q5.dat\nfilesize=64m\nsize=20%\nbs=1m\nioengine=psync\nrw=read\n",
    );
    for (i, pct) in [0, 20, 40, 60, 80].iter().enumerate() {
        job.push_str(&format!(
            "[job{n}]\noffset={pct}%\nstonewall\nwrite_iolog=j{n}.log\n",
            n = i + 1
        ));
    }
    let run = |tool: Command, tag: &str| {
        let dir = common::scratch(&format!("layout_percent_{tag}"));
        std::fs::write(dir.join("q5.fio"), &job).unwrap();
        let mut c = tool;
        c.current_dir(&dir).arg("q5.fio");
        let out = common::run_ok(c);
        let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains("Laying out"))
            .map(str::to_string)
            .collect();
        let size = std::fs::metadata(dir.join("q5.dat")).unwrap().len();
        // Each job's first read offset and its number of reads, from its iolog.
        let reads: Vec<(u64, usize)> = (1..=5)
            .map(|n| {
                let log = std::fs::read_to_string(dir.join(format!("j{n}.log"))).unwrap();
                let offs: Vec<u64> = log
                    .lines()
                    .filter_map(|l| {
                        let w: Vec<&str> = l.split_whitespace().collect();
                        let at = w.iter().position(|&x| x == "read")?;
                        w.get(at + 1)?.parse().ok()
                    })
                    .collect();
                (offs[0], offs.len())
            })
            .collect();
        (lines, size, reads)
    };
    let ours = run(common::iobench(), "iobench");
    // 64 MiB planned, 20 % of it (12 MiB in whole blocks) from offsets of 0 %, 20 %, ...
    // of the file as it stands: 0, 3, 6, 11, 19 MiB.
    let sizes: Vec<String> = [12, 15, 18, 23, 31]
        .iter()
        .enumerate()
        .map(|(i, m)| format!("job{}: Laying out IO file (1 file / {m}MiB)", i + 1))
        .collect();
    assert_eq!(ours.0, sizes);
    assert_eq!(ours.1, 31 << 20);
    let mib = 1u64 << 20;
    assert_eq!(
        ours.2,
        vec![
            (0, 12),
            (3 * mib, 12),
            (6 * mib, 12),
            (11 * mib, 12),
            (19 * mib, 12)
        ]
    );
    if let Some(fio) = common::fio() {
        assert_eq!(run(fio, "fio"), ours);
    }
}
