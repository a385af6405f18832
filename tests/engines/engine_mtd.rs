//! The mtd engine without a flash device (the lab's `engine-mtd` case runs it on mtdram
//! and nandsim): its option and `--enghelp=mtd` are fio's, and a target that is no MTD
//! device is refused before any I/O, as fio 3.33's libmtd refuses it, with the reason.

use crate::common;

/// Runs a one-job mtd read of `file` with `tool`; returns (success, stdout + stderr).
fn job(mut tool: std::process::Command, file: &str, extra: &[&str]) -> (bool, String) {
    tool.args([
        "--name=x",
        "--ioengine=mtd",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
    ])
    .arg(format!("--filename={file}"))
    .args(extra);
    let out = common::run(tool);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn enghelp_lists_skip_bad_as_fio_does() {
    let mut c = common::iobench();
    c.arg("--enghelp=mtd");
    let ours = String::from_utf8_lossy(&common::run_ok(c).stdout).into_owned();
    assert!(ours.contains("skip_bad"), "{ours}");
    if let Some(mut fio) = common::fio() {
        let theirs = fio.arg("--enghelp=mtd").output().expect("fio runs");
        assert_eq!(ours, String::from_utf8_lossy(&theirs.stdout));
    }
}

#[test]
fn skip_bad_takes_a_boolean() {
    let (ok, text) = job(common::iobench(), "/dev/null", &["--skip_bad=maybe"]);
    assert!(
        !ok && text.contains("skip_bad") && text.contains("maybe"),
        "{text}"
    );
    if let Some(fio) = common::fio() {
        let (fok, ftext) = job(fio, "/dev/null", &["--skip_bad=maybe"]);
        assert!(!fok, "fio took skip_bad=maybe: {ftext}");
    }
}

/// A character device that is no flash (/dev/null) and a regular file: both tools fail
/// the job and say why in libmtd's words.
#[test]
fn a_target_that_is_no_mtd_device_is_refused_as_fio_refuses_it() {
    let dir = common::scratch("mtd-refuse");
    let file = dir.join("f");
    std::fs::write(&file, vec![0u8; 64 << 10]).unwrap();
    let file = file.display().to_string();
    // Without /sys/class/mtd (this machine's kernel has no MTD), libmtd checks the major.
    let no_sysfs = !std::path::Path::new("/sys/class/mtd").exists();
    for (target, why) in [
        ("/dev/null", "MTD devices have major 90"),
        (file.as_str(), "is not a character device"),
    ] {
        let (ok, text) = job(common::iobench(), target, &[]);
        assert!(!ok, "iobench's mtd ran on {target}: {text}");
        assert!(
            text.contains("ioengine=mtd needs an MTD character device") && text.contains(target),
            "{text}"
        );
        if no_sysfs || target != "/dev/null" {
            assert!(text.contains(why), "{text}");
        }
        if let Some(fio) = common::fio() {
            let (fok, ftext) = job(fio, target, &[]);
            assert!(!fok, "fio's mtd ran on {target}: {ftext}");
            if no_sysfs || target != "/dev/null" {
                assert!(ftext.contains(why), "fio: {ftext}");
            }
        }
    }
    // Nothing was written to the regular file.
    assert_eq!(std::fs::read(&file).unwrap(), vec![0u8; 64 << 10]);
}
