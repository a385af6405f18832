//! lockmem: the job holds that much memory locked while it runs (seen in VmLck of
//! /proc/<pid>/status), and releases it when it ends.

use crate::common;

use std::time::{Duration, Instant};

fn locked_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmLck:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn lockmem_pins_memory_while_the_job_runs() {
    let mut c = common::iobench();
    c.args([
        "--name=l",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=3",
        "--thread",
        "--lockmem=4m",
        "--minimal",
    ])
    .stdout(std::process::Stdio::null());
    let mut child = c.spawn().expect("spawn");
    let started = Instant::now();
    let mut most = 0;
    while started.elapsed() < Duration::from_secs(3) && child.try_wait().unwrap().is_none() {
        most = most.max(locked_kib(child.id()).unwrap_or(0));
        if most >= 4096 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(most >= 4096, "VmLck peaked at {most} kB");
}
