//! uid and gid: the worker takes the given identity before it opens its files (the
//! layout is done before, by the invoking user), as fio does. A clone that then may not
//! open its file is reported with its errno, not dropped from the report.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The set-id calls and the opens of `file` the run makes, in order, from strace.
fn id_then_open(tool: Command, file: &Path, args: &[&str]) -> Vec<String> {
    let log = file.with_extension("strace");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=setuid,setgid,openat", "-o"])
        .arg(&log)
        .arg(tool.get_program())
        .args(tool.get_args())
        .args(["--name=u", "--size=64k", "--minimal"])
        .arg(format!("--filename={}", file.display()))
        .args(args);
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).expect("strace log");
    let name = file.to_string_lossy().to_string();
    text.lines()
        .filter_map(|l| {
            if l.contains("setgid(") {
                Some("setgid".to_string())
            } else if l.contains("setuid(") {
                Some("setuid".to_string())
            } else if l.contains(&name) && l.contains("O_RDONLY") {
                Some("open read".to_string())
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn the_worker_drops_to_uid_and_gid_before_opening_its_files() {
    if !is_root() {
        eprintln!("not root: skipping");
        return;
    }
    let dir = common::scratch("uid_order");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let file = dir.join("data");
    let args = ["--rw=read", "--uid=65534", "--gid=65534"];
    let ours = id_then_open(common::iobench(), &file, &args);
    assert_eq!(ours, ["setgid", "setuid", "open read"], "{ours:?}");
    if let Some(fio) = common::fio() {
        std::fs::remove_file(&file).ok();
        assert_eq!(id_then_open(fio, &file, &args), ours);
    }
}

#[test]
fn a_clone_that_may_not_open_its_file_is_reported_with_its_errno() {
    if !is_root() {
        eprintln!("not root: skipping");
        return;
    }
    let dir = common::scratch("uid_denied");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let mut tools = vec![("iobench", common::iobench())];
    if let Some(f) = common::fio() {
        tools.push(("fio", f));
    }
    for (name, mut tool) in tools {
        // Laid out by root with mode 0644, then opened for writing as nobody.
        let file = dir.join(format!("{name}.dat"));
        std::fs::remove_file(&file).ok();
        tool.args([
            "--name=w",
            "--rw=write",
            "--size=64k",
            "--uid=65534",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", file.display()));
        let out = common::run(tool);
        assert!(!out.status.success(), "{name} must fail");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        // fio prints its error line on stdout ahead of the JSON; iobench keeps stdout pure.
        let json = if name == "fio" {
            &text[text.find("\n{").map_or(0, |i| i + 1)..]
        } else {
            &text[..]
        };
        let v: serde_json::Value =
            serde_json::from_str(json).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
        assert_eq!(v["jobs"][0]["jobname"], "w", "{name}");
        assert_eq!(v["jobs"][0]["error"], libc::EACCES, "{name}");
        assert_eq!(v["jobs"][0]["write"]["io_bytes"], 0, "{name}");
    }
}
