//! Targets: file names as fio makes them, layout messages, `--readonly`, `unlink` only
//! of files the run created, block devices sized by the kernel, and the refusal to write
//! to a mounted block device. Device tests need root and a loop device; they skip with a
//! printed reason otherwise.

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

fn layout_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("Laying out"))
        .map(str::to_string)
        .collect()
}

/// One tool's output and the files it left.
type Run = (std::process::Output, Vec<(String, u64)>);

/// Runs the same job with fio and iobench in two directories; returns both outputs.
fn both(name: &str, args: &[&str]) -> Option<[Run; 2]> {
    let fio = common::fio()?;
    let mut out = Vec::new();
    for (tool, mut cmd) in [("fio", fio), ("iobench", common::iobench())] {
        let dir = common::scratch(&format!("{name}_{tool}"));
        cmd.current_dir(&dir).args(args);
        let o = common::run(cmd);
        assert!(
            o.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        out.push((o, listing(&dir)));
    }
    let b = out.pop()?;
    let a = out.pop()?;
    Some([a, b])
}

#[test]
fn file_names_sizes_and_layout_lines_match_fio() {
    let cases: [(&str, &[&str]); 3] = [
        (
            "nrfiles",
            &[
                "--name=n",
                "--rw=randread",
                "--bs=4k",
                "--size=1M",
                "--nrfiles=3",
                "--numjobs=2",
            ],
        ),
        (
            "colon",
            &[
                "--name=c",
                "--rw=write",
                "--bs=4k",
                "--size=512k",
                "--filename=a:b",
            ],
        ),
        (
            "format",
            &[
                "--name=f",
                "--rw=read",
                "--bs=4k",
                "--filesize=256k",
                "--nrfiles=2",
                "--filename_format=x.$filenum.$jobnum.$jobname",
            ],
        ),
    ];
    for (name, args) in cases {
        let Some([(fo, fl), (io, il)]) = both(name, args) else {
            return;
        };
        assert_eq!(fl, il, "{name}: files differ");
        assert_eq!(layout_lines(&fo), layout_lines(&io), "{name}: layout lines");
        let bytes = |o: &std::process::Output| {
            let t = String::from_utf8_lossy(&o.stdout).to_string();
            t.lines()
                .filter(|l| l.contains("io="))
                .map(|l| {
                    l.split("io=")
                        .nth(1)
                        .unwrap_or("")
                        .split(' ')
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(bytes(&fo), bytes(&io), "{name}: io amounts");
    }
}

#[test]
fn readonly_refuses_write_jobs_before_any_io() {
    let dir = common::scratch("readonly");
    let out = common::run({
        let mut c = common::iobench();
        c.current_dir(&dir)
            .args(["--readonly", "--name=r", "--rw=randwrite", "--size=64k"]);
        c
    });
    assert!(!out.status.success());
    assert!(
        listing(&dir).is_empty(),
        "a file was created: {:?}",
        listing(&dir)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Starting"));
}

#[test]
fn unlink_removes_only_files_the_run_created() {
    let dir = common::scratch("unlink");
    std::fs::write(dir.join("keep"), vec![7u8; 65536]).expect("write");
    let out = common::run({
        let mut c = common::iobench();
        c.current_dir(&dir).args([
            "--name=u",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--unlink=1",
            "--name=k",
            "--filename=keep",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--unlink=1",
        ]);
        c
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(listing(&dir), vec![("keep".to_string(), 65536)]);
}

use common::loopdev::Loop;

#[test]
fn block_device_size_comes_from_the_device() {
    let Some(lp) = Loop::new("blockdev_size", "8M") else {
        return;
    };
    let out = common::run({
        let mut c = common::iobench();
        c.args([
            "--name=b",
            "--rw=read",
            "--bs=64k",
            "--direct=1",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", lp.dev));
        c
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"].as_u64(), Some(8 << 20));
}

#[test]
fn mounted_block_device_is_not_written() {
    let Some(mut lp) = Loop::new("mounted_dev", "64M") else {
        return;
    };
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", &lp.dev])
        .status();
    if !mkfs.map(|s| s.success()).unwrap_or(false) {
        eprintln!("skipping: mkfs.ext4 failed");
        return;
    }
    let mnt = common::scratch("mounted_dev_mnt");
    let m = Command::new("mount").arg(&lp.dev).arg(&mnt).status();
    if !m.map(|s| s.success()).unwrap_or(false) {
        eprintln!("skipping: mount failed");
        return;
    }
    lp.mnt = Some(mnt);
    let before = std::fs::read(&lp.img).expect("read image");
    let out = common::run({
        let mut c = common::iobench();
        c.args(["--name=w", "--rw=write", "--bs=64k", "--size=1M"])
            .arg(format!("--filename={}", lp.dev));
        c
    });
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("appears mounted") && err.contains("allow_mounted_write"),
        "{err}"
    );
    assert!(
        std::fs::read(&lp.img).expect("read image") == before,
        "device was written"
    );
    // Reading a mounted device is fine.
    let out = common::run({
        let mut c = common::iobench();
        c.args(["--name=r", "--rw=read", "--bs=64k", "--size=1M"])
            .arg(format!("--filename={}", lp.dev));
        c
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn seed003_runs_on_a_loop_device() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping seed003: needs root (losetup, mkfs, mount)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/seed003-nbd.sh");
    let bin = Path::new(env!("CARGO_BIN_EXE_iobench"));
    let out = Command::new("sh")
        .arg(&script)
        .env("FIO", bin)
        .output()
        .expect("run seed003");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("Starting 16 processes").count(), 2, "{text}");
    assert_eq!(text.matches("Run status group 0").count(), 2, "{text}");
    assert_eq!(text.matches("Laying out IO file").count(), 16, "{text}");
}

#[test]
fn filesize_ranges_give_the_sizes_fio_gives() {
    let Some(_) = common::fio() else {
        return;
    };
    let args = [
        "--name=x",
        "--nrfiles=4",
        "--filesize=1k-64k",
        "--bs=1k",
        "--rw=read",
        "--numjobs=2",
        "--output-format=json",
    ];
    let mut seen = Vec::new();
    for (tool, mut cmd) in [
        ("fio", common::fio().expect("fio")),
        ("iobench", common::iobench()),
    ] {
        let dir = common::scratch(&format!("filesize_range_{tool}"));
        let out = common::run({
            cmd.args(args).arg(format!("--directory={}", dir.display()));
            cmd
        });
        assert!(
            out.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let bytes: Vec<u64> = v["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|j| j["read"]["io_bytes"].as_u64().unwrap_or(0))
            .collect();
        seen.push((listing(&dir), bytes));
    }
    let sizes: Vec<u64> = seen[1].0.iter().map(|e| e.1).collect();
    assert!(
        sizes
            .iter()
            .all(|&s| (1024..=65536).contains(&s) && s % 1024 == 0),
        "{sizes:?}"
    );
    assert!(
        sizes.windows(2).any(|w| w[0] != w[1]),
        "sizes all equal: {sizes:?}"
    );
    assert_eq!(seen[1], seen[0]);
}
