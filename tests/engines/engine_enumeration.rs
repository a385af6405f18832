//! Every engine fio 3.33 lists (`fio --enghelp`) is either run by iobench or refused with
//! the reason (the hardware or cluster it needs); "not implemented yet" counts as a
//! failure. Prints the tally.

use crate::common;

use std::process::Command;

#[test]
fn every_fio_engine_runs_or_says_why_not() {
    let _log = common::fio_gfapi_log();
    let list = match common::fio() {
        Some(mut fio) => {
            let out = fio.arg("--enghelp").output().expect("fio runs");
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        // Without fio, iobench's own list (the same names) is checked.
        None => {
            let out = common::run_ok({
                let mut c = common::iobench();
                c.arg("--enghelp");
                c
            });
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    };
    let engines: Vec<String> = list
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    assert!(engines.len() > 30, "{list}");
    let (mut runs, mut refused, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for e in &engines {
        let out = Command::new(env!("CARGO_BIN_EXE_iobench"))
            .args(["--parse-only", "--name=x", "--size=1m"])
            .arg(format!("--ioengine={e}"))
            .output()
            .expect("iobench runs");
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            runs.push(e.clone());
        } else if err.contains(&format!("'ioengine={e}' is not supported yet: needs"))
            || err.contains(&format!("'ioengine={e}' is not supported yet: loads"))
        {
            refused.push(e.clone());
        } else if err.contains("not supported") || err.contains("unknown engine") {
            missing.push(format!("{e}: {err}"));
        } else {
            // Accepted as an engine, but this job lacks what it needs (cpuload=, program=, …).
            runs.push(e.clone());
        }
    }
    println!(
        "engines: {} of fio's {} run, {} refused for want of hardware ({})",
        runs.len(),
        engines.len(),
        refused.len(),
        refused.join(", ")
    );
    assert!(missing.is_empty(), "{missing:#?}");
    for e in [
        "cpuio",
        "net",
        "netsplice",
        "splice",
        "ftruncate",
        "falloc",
        "exec",
        "e4defrag",
        "sg",
        "io_uring_cmd",
        "mtd",
    ] {
        assert!(runs.iter().any(|r| r == e), "{e} is not run");
    }
}
