//! `--env`: each field of `iobench_env` against what the system's own tools report
//! (uname, getconf, nproc, free, findmnt and lsblk from util-linux, sha256sum) or /proc and
//! /sys read here; and plain runs keep fio's JSON key set exactly.

use crate::common;

use common::{iobench, run_ok, scratch};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// A tool's stdout, trimmed; a missing tool fails under CI (IOBENCH_REQUIRE_FIO=1, which
/// installs util-linux), else skips the check.
fn tool(cmd: &str, args: &[&str]) -> Option<String> {
    match Command::new(cmd).args(args).output() {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        r => {
            if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
                panic!("{cmd} {args:?} failed: {r:?}");
            }
            eprintln!("{cmd} unavailable: skipping its check");
            None
        }
    }
}

fn env_run(dir: &Path, extra: &[&str]) -> (Value, Vec<String>) {
    let file = dir.join("f.dat");
    let mut args: Vec<String> = vec![
        "--env".into(),
        "--output-format=json".into(),
        "--name=envjob".into(),
        format!("--filename={}", file.display()),
        "--size=1m".into(),
        "--bs=64k".into(),
        "--rw=write".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut cmd = iobench();
    cmd.args(&args);
    let out = run_ok(cmd);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    (doc, args)
}

#[test]
fn machine_fields_match_the_systems_tools() {
    let dir = scratch("env_machine");
    let (doc, args) = env_run(&dir, &[]);
    let env = &doc["iobench_env"];
    assert_eq!(env["iobench_version"], env!("CARGO_PKG_VERSION"));
    // The whole command line, program first.
    let cl: Vec<&str> = env["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(cl[0], env!("CARGO_BIN_EXE_iobench"));
    assert_eq!(
        &cl[1..],
        args.iter().map(String::as_str).collect::<Vec<_>>()
    );
    if let Some(h) = tool("uname", &["-n"]) {
        assert_eq!(env["hostname"], h.as_str());
    }
    if let Some(r) = tool("uname", &["-r"]) {
        assert_eq!(env["kernel"]["release"], r.as_str());
    }
    if let Some(m) = tool("uname", &["-m"]) {
        assert_eq!(env["kernel"]["machine"], m.as_str());
    }
    if let Some(v) = tool("uname", &["-v"]) {
        assert_eq!(env["kernel"]["version"], v.as_str());
    }
    if let Some(sn) = tool("uname", &["-s"]) {
        assert_eq!(env["kernel"]["sysname"], sn.as_str());
    }
    if let Ok(osr) = std::fs::read_to_string("/etc/os-release") {
        if let Some(p) = osr.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")) {
            assert_eq!(env["os"], p.trim_matches('"'));
        }
    }
    if let Some(n) = tool("getconf", &["_NPROCESSORS_ONLN"]) {
        assert_eq!(env["cpu"]["count"].as_u64().unwrap().to_string(), n);
    }
    if let Some(n) = tool("nproc", &[]) {
        assert_eq!(env["cpu"]["allowed"].as_u64().unwrap().to_string(), n);
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    if let Some(model) = cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.trim().to_string())
    }) {
        assert_eq!(env["cpu"]["model"], model.as_str());
    }
    if let Some(free) = tool("free", &["-b"]) {
        let total: u64 = free
            .lines()
            .find(|l| l.starts_with("Mem:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap();
        assert_eq!(env["memory"]["total_bytes"].as_u64(), Some(total));
    }
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap();
    assert_eq!(env["clocksource"]["kernel"], cs.trim());
    let ours = env["clocksource"]["iobench"].as_str().unwrap();
    assert!(
        ["cpu", "clock_gettime", "gettimeofday"].contains(&ours),
        "{ours}"
    );
}

#[test]
fn job_options_and_their_hash() {
    let dir = scratch("env_hash");
    let (doc, _) = env_run(&dir, &["--direct=1"]);
    let env = &doc["iobench_env"];
    let job = &env["jobs"][0];
    assert_eq!(job["name"], "envjob");
    let file = dir.join("f.dat").display().to_string();
    let want = serde_json::json!({
        "filename": file, "size": "1m", "bs": "64k", "rw": "write", "direct": "1"
    });
    assert_eq!(job["options"], want);
    // SHA-256 over `[name]` and the options sorted by name, one `name=value` a line,
    // computed here by sha256sum.
    let text = format!("[envjob]\nbs=64k\ndirect=1\nfilename={file}\nrw=write\nsize=1m\n");
    let txt = dir.join("opts.txt");
    std::fs::write(&txt, &text).unwrap();
    if let Some(sum) = tool("sha256sum", &[txt.to_str().unwrap()]) {
        assert_eq!(
            env["options_sha256"],
            sum.split_whitespace().next().unwrap()
        );
    }
    // The same job with its options in another order hashes the same; another value not.
    let (same, _) = {
        let mut cmd = iobench();
        cmd.args([
            "--output-format=json",
            "--env",
            "--rw=write",
            "--name=envjob",
            "--direct=1",
        ])
        .arg(format!("--filename={file}"))
        .args(["--bs=64k", "--size=1m"]);
        let out = run_ok(cmd);
        (serde_json::from_slice::<Value>(&out.stdout).unwrap(), ())
    };
    assert_eq!(same["iobench_env"]["options_sha256"], env["options_sha256"]);
    let (other, _) = env_run(&dir, &["--direct=0"]);
    assert_ne!(
        other["iobench_env"]["options_sha256"],
        env["options_sha256"]
    );
}

/// `findmnt -T` and, for a real block device, `lsblk` and /sys against one target.
fn check_target(t: &Value, path: &Path) {
    let p = path.to_str().unwrap();
    let Some(fm) = tool(
        "findmnt",
        &[
            "-J",
            "-T",
            p,
            "-o",
            "TARGET,SOURCE,FSTYPE,OPTIONS,VFS-OPTIONS,FS-OPTIONS,MAJ:MIN",
        ],
    ) else {
        return;
    };
    let fm: Value = serde_json::from_str(&fm).unwrap();
    let m = &fm["filesystems"][0];
    let fs = &t["filesystem"];
    assert_eq!(fs["mount_point"], m["target"], "{t}");
    assert_eq!(fs["type"], m["fstype"], "{t}");
    assert_eq!(fs["source"], m["source"], "{t}");
    assert_eq!(fs["options"], m["options"], "{t}");
    assert_eq!(fs["vfs_options"], m["vfs-options"], "{t}");
    assert_eq!(fs["fs_options"], m["fs-options"], "{t}");
    let majmin = m["maj:min"].as_str().unwrap();
    if majmin.starts_with("0:") {
        // No block device under it (tmpfs, overlay): none reported.
        assert!(t.get("device").is_none() || t["device"].is_null(), "{t}");
        return;
    }
    check_device(&t["device"], majmin);
}

fn check_device(d: &Value, majmin: &str) {
    assert_eq!(d["dev"], majmin, "{d}");
    let sys = Path::new("/sys/dev/block")
        .join(majmin)
        .canonicalize()
        .unwrap();
    let name = sys.file_name().unwrap().to_str().unwrap();
    assert_eq!(d["name"], name);
    if !Path::new("/dev").join(name).exists() {
        // No device node here (a container): the size from /sys, read here.
        let sectors: u64 = std::fs::read_to_string(sys.join("size"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(d["size_bytes"].as_u64(), Some(sectors * 512), "{d}");
        return;
    }
    let Some(ls) = tool(
        "lsblk",
        &[
            "-J",
            "-b",
            "-d",
            "-o",
            "NAME,SIZE,ROTA,LOG-SEC,PHY-SEC,SCHED,RQ-SIZE,MODEL",
            &format!("/dev/{name}"),
        ],
    ) else {
        return;
    };
    let ls: Value = serde_json::from_str(&ls).unwrap();
    let b = &ls["blockdevices"][0];
    assert_eq!(d["size_bytes"], b["size"], "{d} vs {b}");
    assert_eq!(
        d["rotational"].as_u64() == Some(1),
        b["rota"].as_bool().unwrap(),
        "{d} vs {b}"
    );
    assert_eq!(d["logical_block_size"], b["log-sec"], "{d} vs {b}");
    assert_eq!(d["physical_block_size"], b["phy-sec"], "{d} vs {b}");
    if !b["sched"].is_null() {
        assert_eq!(d["scheduler"], b["sched"], "{d} vs {b}");
    }
    if !b["rq-size"].is_null() {
        assert_eq!(d["nr_requests"], b["rq-size"], "{d} vs {b}");
    }
    match b["model"].as_str() {
        Some(m) => assert_eq!(d["model"].as_str(), Some(m.trim()), "{d} vs {b}"),
        None => assert!(d.get("model").is_none() || d["model"].is_null(), "{d}"),
    }
    // The disk's write cache, read here from /sys (lsblk has no column for it).
    let disk = match d.get("disk").and_then(Value::as_str) {
        Some(disk) => disk.to_string(),
        None => name.to_string(),
    };
    let wc = std::fs::read_to_string(format!("/sys/block/{disk}/queue/write_cache"));
    if let Ok(wc) = wc {
        assert_eq!(d["write_cache"], wc.trim(), "{d}");
    }
}

#[test]
fn a_file_targets_device_and_filesystem_match_findmnt_and_lsblk() {
    let dir = scratch("env_target");
    let (doc, _) = env_run(&dir, &[]);
    let t = &doc["iobench_env"]["targets"][0];
    let file = dir.join("f.dat");
    assert_eq!(t["path"], file.to_str().unwrap());
    assert_eq!(t["type"], "file");
    check_target(t, &file);
}

#[test]
fn a_tmpfs_target_has_a_filesystem_and_no_device() {
    let shm = Path::new("/dev/shm");
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let is_tmpfs = mounts.lines().any(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        f.len() > 2 && f[1] == "/dev/shm" && f[2] == "tmpfs"
    });
    if !is_tmpfs {
        eprintln!("/dev/shm is not a tmpfs here: skipping");
        return;
    }
    let dir = shm.join(format!("iobench-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (doc, _) = env_run(&dir, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let t = &doc["iobench_env"]["targets"][0];
    assert_eq!(t["filesystem"]["type"], "tmpfs");
    assert!(t.get("device").is_none(), "{t}");
}

#[test]
fn a_block_device_target_is_described_by_sysfs() {
    let Some(lo) = common::loopdev::Loop::new("env_loop", "8M") else {
        return;
    };
    let mut cmd = iobench();
    cmd.args([
        "--env",
        "--output-format=json",
        "--name=dev",
        "--rw=read",
        "--size=1m",
    ])
    .arg(format!("--filename={}", lo.dev));
    let out = run_ok(cmd);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &doc["iobench_env"]["targets"][0];
    assert_eq!(t["type"], "block");
    let rdev = std::fs::metadata(&lo.dev).map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.rdev()
    });
    let rdev = rdev.unwrap();
    let majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    check_device(&t["device"], &majmin);
    assert_eq!(t["device"]["size_bytes"], 8 << 20);
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn plain_runs_keep_fios_key_set_and_env_only_adds_its_own() {
    let dir = scratch("env_keys");
    let job = |d: &str| {
        vec![
            "--output-format=json".to_string(),
            "--name=k".into(),
            format!("--filename={d}/k.dat"),
            "--size=1m".into(),
            "--bs=64k".into(),
            "--rw=randwrite".into(),
        ]
    };
    let d = dir.display().to_string();
    let plain: Value = serde_json::from_slice(
        &run_ok({
            let mut c = iobench();
            c.args(job(&d));
            c
        })
        .stdout,
    )
    .unwrap();
    assert!(plain.get("iobench_env").is_none());
    let with: Value = serde_json::from_slice(
        &run_ok({
            let mut c = iobench();
            c.arg("--env").args(job(&d));
            c
        })
        .stdout,
    )
    .unwrap();
    let mut want = keys(&plain);
    want.insert("iobench_env".into());
    assert_eq!(keys(&with), want);
    assert_eq!(keys(&with["jobs"][0]), keys(&plain["jobs"][0]));
    // And the plain run's keys are fio's, top level and per job.
    let Some(mut fio) = common::fio() else { return };
    let fdir = scratch("env_keys_fio").display().to_string();
    let out = run_ok({
        fio.args(job(&fdir));
        fio
    });
    let fio_doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(keys(&plain), keys(&fio_doc));
    assert_eq!(keys(&plain["jobs"][0]), keys(&fio_doc["jobs"][0]));
}
