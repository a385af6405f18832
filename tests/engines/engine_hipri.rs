//! pvsync2's hipri_percentage: about that share of preadv2 calls carry RWF_HIPRI (counted
//! with strace), as with fio.

use crate::common;

use std::path::Path;
use std::process::Command;

/// (calls with RWF_HIPRI, all preadv2 calls) of a 200-read pvsync2 job.
fn hipri_calls(tool: Command, dir: &Path, pct: u32) -> (usize, usize) {
    let log = dir.join("strace.log");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=preadv2", "-o"])
        .arg(&log)
        .arg(tool.get_program())
        .args([
            "--name=h",
            "--size=800k",
            "--rw=randread",
            "--ioengine=pvsync2",
            "--hipri",
            "--minimal",
        ])
        .arg(format!("--filename={}", dir.join("f").display()))
        .arg(format!("--hipri_percentage={pct}"));
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).unwrap();
    let calls = text.lines().filter(|l| l.contains("preadv2(")).count();
    let hipri = text.lines().filter(|l| l.contains("RWF_HIPRI")).count();
    (hipri, calls)
}

#[test]
fn hipri_percentage_flags_that_share_of_ios() {
    let have_strace = Command::new("strace").arg("-V").output().is_ok();
    if !have_strace {
        assert_ne!(
            std::env::var("IOBENCH_REQUIRE_FIO").as_deref(),
            Ok("1"),
            "strace is needed (apt-get install -y strace)"
        );
        eprintln!("strace not installed: skipping");
        return;
    }
    let dir = common::scratch("hipri_percentage");
    assert_eq!(hipri_calls(common::iobench(), &dir, 100), (200, 200));
    assert_eq!(hipri_calls(common::iobench(), &dir, 0), (0, 200));
    let (half, all) = hipri_calls(common::iobench(), &dir, 50);
    assert_eq!(all, 200);
    assert!((70..=130).contains(&half), "{half} of 200 with 50%");
    if let Some(fio) = common::fio() {
        let (f, _) = hipri_calls(fio, &dir, 50);
        assert!((70..=130).contains(&f), "fio: {f} of 200 with 50%");
    }
}
