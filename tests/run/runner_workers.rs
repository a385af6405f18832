//! Workers and groups: numjobs clones run at once (each on its own file), stonewall
//! groups run one after another, thread=1 runs threads, SIGINT stops a run with results.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn job(dir: &std::path::Path, extra: &[&str]) -> Command {
    let mut c = common::iobench();
    c.arg(format!("--directory={}", dir.display()));
    c.args(extra);
    c
}

fn json(out: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad json ({e}):\n{text}"))
}

#[test]
fn numjobs_run_concurrently_on_their_own_files() {
    let dir = common::scratch("numjobs_concurrent");
    let t = Instant::now();
    let out = common::run(job(
        &dir,
        &[
            "--name=c",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1M",
            "--numjobs=4",
            "--time_based",
            "--runtime=1",
            "--output-format=json",
        ],
    ));
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Four 1 s clones one after another would take 4 s.
    assert!(took < Duration::from_millis(2600), "took {took:?}");
    for c in 0..4 {
        let f = dir.join(format!("c.{c}.0"));
        assert_eq!(
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            Some(1 << 20),
            "{f:?}"
        );
    }
    let v = json(&out);
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 4);
    for j in jobs {
        let rt = j["job_runtime"].as_u64().unwrap_or(0);
        assert!((800..=1500).contains(&rt), "job_runtime {rt}");
        assert!(j["write"]["io_bytes"].as_u64().unwrap_or(0) > 0);
    }
}

#[test]
fn header_says_processes_or_threads() {
    let dir = common::scratch("workers_header");
    for (flag, want) in [
        ("--thread=0", "Starting 2 processes"),
        ("--thread", "Starting 2 threads"),
    ] {
        let out = common::run(job(
            &dir,
            &[
                "--name=h",
                "--rw=write",
                "--bs=4k",
                "--size=256k",
                "--numjobs=2",
                flag,
            ],
        ));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(want), "{flag}: {text}");
        assert!(text.contains("(groupid=0, jobs=1)"), "{text}");
    }
}

#[test]
fn stonewall_runs_groups_in_order_and_jobs_of_a_group_together() {
    let dir = common::scratch("groups_order");
    let base = [
        "--rw=write",
        "--bs=4k",
        "--size=256k",
        "--time_based",
        "--runtime=1",
    ];
    let run = |second: &[&str]| {
        let mut c = job(&dir, &["--name=a"]);
        c.args(base);
        c.arg("--name=b").args(base).args(second);
        let t = Instant::now();
        let out = common::run_ok(c);
        (
            t.elapsed(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (together, _) = run(&[]);
    assert!(
        together < Duration::from_millis(1800),
        "same group took {together:?}"
    );
    let (apart, text) = run(&["--stonewall"]);
    assert!(
        apart >= Duration::from_millis(1900),
        "stonewall took {apart:?}"
    );
    assert!(text.contains("Run status group 1"), "{text}");
}

#[test]
fn sigint_stops_the_run_and_prints_results() {
    let dir = common::scratch("sigint");
    let mut c = job(
        &dir,
        &[
            "--name=s",
            "--rw=randwrite",
            "--bs=64k",
            "--size=4M",
            "--numjobs=2",
            "--time_based",
            "--runtime=30",
            "--group_reporting",
        ],
    );
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: signals the child we just spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let out = child.wait_with_output().expect("wait");
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "did not stop promptly"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(128),
        "fio exits 128 after a signal\n{text}"
    );
    assert!(text.contains("iobench: terminating on signal 2"), "{text}");
    let run = text
        .split("run=")
        .nth(1)
        .and_then(|s| s.split('-').next())
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no run= in\n{text}"));
    assert!((1500..=2600).contains(&run), "run={run}msec\n{text}");
}

#[test]
fn a_worker_that_dies_is_reported_by_name() {
    let dir = common::scratch("worker_dies");
    // A job whose file cannot be opened fails in its worker; the run goes on and ends.
    let out = common::run(job(
        &dir,
        &[
            "--name=ok",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--name=bad",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--filename=/proc/self/nonexistent/file",
        ],
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("'bad'"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: (groupid=0"));
}

/// The `IO depths` line of a buffered libaio read (every I/O completes at once, so the
/// refill pattern alone decides the depths).
fn depths(mut c: Command, dir: &std::path::Path, low: &str) -> String {
    c.current_dir(dir).args([
        "--name=n",
        "--ioengine=libaio",
        "--filename=aio.dat",
        "--size=4m",
        "--bs=4k",
        "--iodepth=8",
        &format!("--iodepth_low={low}"),
        "--rw=read",
    ]);
    let out = common::run_ok(c);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.contains("IO depths"))
        .unwrap_or("")
        .to_string()
}

#[test]
fn iodepth_low_refills_the_queue_as_fio_does() {
    let dir = common::scratch("iodepth_low");
    // With low=1 the queue drains to 1 and refills: depths 2..8 in turn.
    let one = depths(common::iobench(), &dir, "1");
    assert!(one.contains("2=28.6%, 4=57.0%, 8=14.3%"), "{one}");
    for low in ["0", "1", "4"] {
        let ours = depths(common::iobench(), &dir, low);
        if let Some(fio) = common::fio() {
            assert_eq!(ours, depths(fio, &dir, low), "iodepth_low={low}");
        }
    }
}

#[test]
fn a_killed_worker_process_is_named_and_the_run_ends() {
    let dir = common::scratch("worker_killed");
    let child = job(
        &dir,
        &[
            "--name=victim",
            "--rw=read",
            "--size=1m",
            "--time_based",
            "--runtime=20",
            "--name=other",
            "--rw=read",
            "--size=1m",
            "--time_based",
            "--runtime=1",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn");
    // Find the first worker process (the 'victim' clone) and kill it outright.
    let parent = child.id().to_string();
    let start = Instant::now();
    let victim = loop {
        let out = Command::new("pgrep")
            .args(["-P", &parent])
            .output()
            .expect("pgrep");
        let pids: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if pids.len() >= 2 {
            break pids[0].clone();
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no workers");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(200));
    let _ = Command::new("kill").args(["-9", &victim]).status();
    let out = child.wait_with_output().expect("wait");
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!(
            "worker process {victim} for job 'victim' killed by signal 9"
        )),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("other: (groupid=0"));
}
