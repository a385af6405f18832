//! Disk stats of a device-mapper device against fio: a dm-linear device over a loop device,
//! written with direct I/O by both tools; the dm entry must carry fio's `aggr_*` keys (JSON)
//! and `aggr…=` fields (normal output), followed by its member's own line.
//! Root only; skipped (with the reason) when the kernel has no device-mapper driver.

mod common;

use common::loopdev::Loop;
use serde_json::Value;
use std::process::Command;

/// A dm-linear device over a loop device, removed on drop (before the loop, which is
/// declared first and so dropped last).
struct Dm {
    name: String,
}

impl Dm {
    fn new(lo: &Loop, sectors: u64) -> Option<Dm> {
        let name = format!("iobench-dm-{}", std::process::id());
        let table = format!("0 {sectors} linear {} 0", lo.dev);
        let out = match Command::new("dmsetup")
            .args(["create", &name, "--table", &table])
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                assert!(
                    std::env::var("IOBENCH_REQUIRE_FIO").as_deref() != Ok("1"),
                    "dmsetup is missing ({e}); .ci/run installs it"
                );
                eprintln!("skipping: dmsetup is not installed");
                return None;
            }
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            // Some containers' kernels have no device-mapper at all: nothing to test there.
            eprintln!("skipping: dmsetup create failed: {err}");
            let _ = Command::new("dmsetup").args(["remove", &name]).status();
            return None;
        }
        Some(Dm { name })
    }

    fn path(&self) -> String {
        format!("/dev/mapper/{}", self.name)
    }
}

impl Drop for Dm {
    fn drop(&mut self) {
        let _ = Command::new("dmsetup")
            .args(["remove", "--retry", &self.name])
            .status();
    }
}

fn job(dev: &str) -> Vec<String> {
    [
        "--name=dm",
        "--rw=write",
        "--bs=4k",
        "--size=4m",
        "--direct=1",
        "--ioengine=psync",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--filename={dev}")])
    .collect()
}

fn run(mut cmd: Command, dev: &str, format: &str) -> String {
    cmd.args(job(dev)).arg(format!("--output-format={format}"));
    let out = common::run_ok(cmd);
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// A value's shape: objects as their ordered keys with shapes, numbers as int or float.
fn shape(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", shape(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(shape).collect::<Vec<_>>().join(",")),
        Value::Number(n) if n.is_f64() => "float".into(),
        Value::Number(_) => "int".into(),
        Value::String(_) => "str".into(),
        Value::Bool(_) => "bool".into(),
        Value::Null => "null".into(),
    }
}

/// The `Disk stats` lines with digits blanked: labels, indent and order only.
fn disk_lines(text: &str) -> Vec<String> {
    let start = text
        .find("Disk stats (read/write):")
        .expect("a Disk stats section");
    text[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            l.chars()
                .map(|c| if c.is_ascii_digit() { '9' } else { c })
                .collect::<String>()
                .split(['9', '.'])
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("#")
        })
        .collect()
}

#[test]
fn dm_device_reports_its_member_aggregate_like_fio() {
    let Some(fio) = common::fio() else { return };
    let Some(lo) = Loop::new("stats_disk_dm", "64M") else {
        return;
    };
    let Some(dm) = Dm::new(&lo, 131072) else {
        return;
    };
    let dev = dm.path();

    let theirs: Value = serde_json::from_str(&run(fio, &dev, "json")).expect("fio's JSON");
    let ours: Value =
        serde_json::from_str(&run(common::iobench(), &dev, "json")).expect("iobench's JSON");
    let (t, o) = (&theirs["disk_util"], &ours["disk_util"]);
    assert_eq!(
        shape(o),
        shape(t),
        "disk_util shapes differ:\nours {o}\nfio's {t}"
    );
    let dm_entry = o
        .as_array()
        .and_then(|a| a.iter().find(|d| d.get("aggr_write_ios").is_some()))
        .unwrap_or_else(|| panic!("no dm entry with aggr_* keys: {o}"));
    assert!(dm_entry["name"].as_str().unwrap_or("").starts_with("dm-"));
    assert!(
        dm_entry["write_ios"].as_u64().unwrap_or(0) > 0,
        "{dm_entry}"
    );
    assert!(
        dm_entry["aggr_write_ios"].as_u64().unwrap_or(0) > 0,
        "{dm_entry}"
    );

    let fio2 = common::fio().expect("fio was found above");
    let theirs = disk_lines(&run(fio2, &dev, "normal"));
    let ours = disk_lines(&run(common::iobench(), &dev, "normal"));
    assert_eq!(ours, theirs, "Disk stats lines differ in labels or order");
    assert_eq!(ours.len(), 2, "the dm line and its one member: {ours:?}");
    assert!(ours[0].contains("aggrios="), "{ours:?}");
}
