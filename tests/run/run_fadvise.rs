//! fadvise_hint: the access pattern each tool announces for its files, traced with strace
//! and compared with fio's on the same jobs. It decides the kernel's read-ahead on buffered
//! files, so a tool that left it out would measure something else than fio.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The posix_fadvise advice a run gives, in order, apart from DONTNEED (cache invalidation,
/// whose count depends on whether the file had to be laid out first).
fn advice(tool: Command, dir: &Path, args: &[&str]) -> Vec<String> {
    let log = dir.join("strace.log");
    let file = dir.join("file");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-e", "trace=fadvise64", "-o"])
        .arg(&log)
        .arg(tool.get_program())
        .args(tool.get_args())
        .args(["--name=f", "--size=1m", "--minimal"])
        .arg(format!("--filename={}", file.display()))
        .args(args);
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).expect("strace log");
    text.lines()
        .filter_map(|l| l.split("POSIX_FADV_").nth(1))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_uppercase())
                .collect::<String>()
        })
        .filter(|a| a != "DONTNEED")
        .collect()
}

fn have_strace() -> bool {
    let found = Command::new("strace")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found && std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("strace is not installed but IOBENCH_REQUIRE_FIO=1 (apt-get install -y strace)");
    }
    found
}

#[test]
fn fadvise_hint_announces_what_fio_announces() {
    if !have_strace() {
        eprintln!("strace not installed: skipping");
        return;
    }
    let dir = common::scratch("fadvise_hint");
    let cases: [(&[&str], &[&str]); 6] = [
        (&["--rw=randread"], &["RANDOM"]),
        (&["--rw=read"], &["SEQUENTIAL"]),
        (
            &["--rw=randrw", "--fadvise_hint=sequential"],
            &["SEQUENTIAL"],
        ),
        (&["--rw=read", "--fadvise_hint=random"], &["RANDOM"]),
        (&["--rw=read", "--fadvise_hint=0"], &[]),
        (&["--rw=randwrite", "--direct=1"], &["RANDOM"]),
    ];
    for (args, want) in cases {
        let ours = advice(common::iobench(), &dir, args);
        assert_eq!(ours, want, "iobench {args:?}");
        if let Some(fio) = common::fio() {
            assert_eq!(ours, advice(fio, &dir, args), "fio {args:?}");
        }
    }
}
