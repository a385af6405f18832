//! ioscheduler: the disk under the job's file gets the scheduler asked for, and a name the
//! kernel does not offer stops the job with an error that lists what it offers (fio fails
//! the job too). Diskless engines (null) leave the scheduler alone, as fio's do. Needs root for a loop device; skips with the reason printed otherwise.

use crate::common;

use common::loopdev::Loop;

fn scheduler_of(dev: &str) -> String {
    let name = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap_or_default()
}

fn job(dev: &str, sched: &str, engine: &str) -> std::process::Output {
    let mut c = common::iobench();
    c.args(["--name=s", "--size=64k", "--minimal"])
        .arg(format!("--ioengine={engine}"))
        .arg(format!("--filename={dev}"))
        .arg(format!("--ioscheduler={sched}"));
    common::run(c)
}

#[test]
fn ioscheduler_switches_the_disk_and_rejects_unknown_names() {
    let Some(lp) = Loop::new("ioscheduler", "4M") else {
        return;
    };
    let offered = scheduler_of(&lp.dev);
    let Some(other) = offered
        .split_whitespace()
        .find(|s| !s.starts_with('[') && *s != "none")
    else {
        eprintln!("skipping: {} offers no scheduler to switch to", lp.dev);
        return;
    };
    // A diskless engine does not touch the disk's scheduler.
    let out = job(&lp.dev, other, "null");
    assert!(out.status.success());
    assert_eq!(scheduler_of(&lp.dev), offered);

    let out = job(&lp.dev, other, "psync");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        scheduler_of(&lp.dev).contains(&format!("[{other}]")),
        "{}",
        scheduler_of(&lp.dev)
    );

    let out = job(&lp.dev, "no-such-scheduler", "psync");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ioscheduler: cannot set 'no-such-scheduler'") && err.contains(other),
        "{err}"
    );
    if let Some(mut fio) = common::fio() {
        fio.args(["--name=s", "--size=64k", "--minimal"])
            .arg(format!("--filename={}", lp.dev))
            .arg("--ioscheduler=no-such-scheduler");
        assert!(!common::run(fio).status.success());
    }
    let _ = job(&lp.dev, "none", "psync");
}
