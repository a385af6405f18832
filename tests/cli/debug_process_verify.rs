//! `--debug=process` and `--debug=verify` print fio 3.33's lines at the same points: a
//! job's states (`pid=N: runstate RUNNING -> VERIFYING`), forks, thread starts, reaping,
//! stonewall and wait_for waits, engines setting up, the end of the run; each buffer
//! filled and each block handed out and checked by a verify pass. Small deterministic jobs
//! run in both tools and their lines are compared with numbers and addresses masked: the
//! set of process lines (fio's main loop repeats some of them as it polls), and each
//! verify line's count.
//! Also `--debug=?`/`help` and fio's way of reading the category words.
use crate::common;

use common::{iobench, run, scratch};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// A debug line's shape: its category and message, the thread id column dropped and
/// every number (decimal or hex) masked.
fn shape(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let cat = words.next()?;
    if cat != "process" && cat != "verify" {
        return None;
    }
    words.next()?.parse::<u32>().ok()?;
    let msg: Vec<&str> = words.collect();
    let mut out = format!("{cat} ");
    let mut in_number = false;
    let text = msg.join(" ");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '0' && chars.peek() == Some(&'x') {
            chars.next();
            while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                chars.next();
            }
            out.push('N');
            in_number = true;
        } else if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    Some(out)
}

/// Runs `tool --debug=process,verify ARGS` in a fresh directory and counts each shape.
fn shapes(tool: Command, dir: &Path, args: &[&str]) -> BTreeMap<String, usize> {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let _ = std::fs::remove_file(e.path());
    }
    let mut c = tool;
    c.current_dir(dir).arg("--debug=process,verify").args(args);
    let out = run(c);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut counts = BTreeMap::new();
    for s in stdout.lines().filter_map(shape) {
        *counts.entry(s).or_insert(0) += 1;
    }
    counts
}

/// The small jobs compared: each a command line after `--debug=…`.
const JOBS: &[&[&str]] = &[
    // A write job verified after its writes, in a forked process.
    &[
        "--name=v",
        "--filename=f",
        "--size=16k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--ioengine=psync",
    ],
    // Random writes in a thread, four headers per block (verify_interval).
    &[
        "--name=t",
        "--filename=f",
        "--size=32k",
        "--bs=4k",
        "--rw=randwrite",
        "--verify=md5",
        "--verify_interval=1k",
        "--thread",
        "--ioengine=psync",
    ],
    // Two clones, then a stonewalled job reading and verifying what they wrote.
    &[
        "--name=a",
        "--filename=f",
        "--size=32k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
        "--numjobs=2",
        "--ioengine=psync",
        "--name=b",
        "--stonewall",
        "--filename=f",
        "--size=32k",
        "--bs=4k",
        "--rw=read",
        "--verify=crc32c",
        "--ioengine=psync",
    ],
    // Verifying among the writes (verify_backlog) with a verify_pattern in the buffers.
    &[
        "--name=b",
        "--filename=f",
        "--size=32k",
        "--bs=4k",
        "--rw=write",
        "--verify=sha256",
        "--verify_backlog=2",
        "--verify_pattern=0xabcd",
        "--ioengine=psync",
    ],
    // A job that waits for another by name, and one laying its file out itself.
    &[
        "--name=w1",
        "--filename=f",
        "--size=16k",
        "--bs=4k",
        "--rw=write",
        "--ioengine=psync",
        "--name=w2",
        "--wait_for=w1",
        "--filename=g",
        "--size=16k",
        "--bs=4k",
        "--rw=write",
        "--create_serialize=0",
        "--ioengine=psync",
    ],
    // Engines that report setting up while they prepare; a run of cpuio jobs only ends
    // without telling the jobs to terminate.
    &[
        "--name=c",
        "--ioengine=cpuio",
        "--cpuload=10",
        "--runtime=200ms",
        "--time_based",
    ],
    &[
        "--name=e",
        "--ioengine=exec",
        "--program=true",
        "--runtime=200ms",
        "--time_based",
    ],
];

#[test]
fn process_and_verify_lines_match_fio() {
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("debug-process-verify");
    for args in JOBS {
        let fio = shapes(Command::new("fio"), &dir, args);
        let ours = shapes(iobench(), &dir, args);
        assert!(
            fio.keys().any(|k| k.contains("runstate")),
            "fio printed no process lines for {args:?}: {fio:#?}"
        );
        let set = |m: &BTreeMap<String, usize>, cat: &str| -> BTreeSet<String> {
            m.keys().filter(|k| k.starts_with(cat)).cloned().collect()
        };
        assert_eq!(
            set(&fio, "process"),
            set(&ours, "process"),
            "process lines of {args:?}"
        );
        let verify = |m: &BTreeMap<String, usize>| -> Vec<(String, usize)> {
            m.iter()
                .filter(|(k, _)| k.starts_with("verify"))
                .map(|(k, n)| (k.clone(), *n))
                .collect()
        };
        assert_eq!(verify(&fio), verify(&ours), "verify lines of {args:?}");
    }
}

/// A job with a ramp period goes through fio's RAMP state.
#[test]
fn ramp_state_as_fio() {
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("debug-process-ramp");
    let args = [
        "--name=r",
        "--filename=f",
        "--size=16k",
        "--bs=4k",
        "--rw=write",
        "--ioengine=psync",
        "--time_based",
        "--runtime=400ms",
        "--ramp_time=200ms",
    ];
    let fio: BTreeSet<String> = shapes(Command::new("fio"), &dir, &args)
        .into_keys()
        .collect();
    let ours: BTreeSet<String> = shapes(iobench(), &dir, &args).into_keys().collect();
    assert!(
        fio.contains("process pid=N: runstate RAMP -> RUNNING"),
        "{fio:#?}"
    );
    assert_eq!(fio, ours);
}

/// `--debug=?` and `--debug=help` list the categories as fio does; category words are
/// read as fio reads them (a prefix names its category, `job` wants `:N`, an unknown or
/// empty word is reported and skipped).
#[test]
fn debug_words_as_fio() {
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("debug-words");
    let lines = |mut c: Command, spec: &str| -> (Vec<String>, Option<i32>) {
        c.current_dir(&dir).arg(format!("--debug={spec}")).args([
            "--parse-only",
            "--name=x",
            "--size=1m",
        ]);
        let out = run(c);
        let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
            .filter(|l| l.starts_with("fio: "))
            .map(str::to_string)
            .collect();
        v.sort();
        (v, out.status.code())
    };
    for spec in ["?", "help", "job", "job:1", "processes", "verify,", "allx"] {
        let fio = lines(Command::new("fio"), spec);
        assert!(!fio.0.is_empty(), "fio printed nothing for {spec}");
        assert_eq!(fio, lines(iobench(), spec), "--debug={spec}");
    }
}

/// Runs `tool` with `debug` on the job file `job` in `dir`; stdout's lines.
fn debug_lines(tool: Command, dir: &Path, debug: &str, job: &str) -> Vec<String> {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let mut c = tool;
    c.current_dir(dir)
        .arg(format!("--debug={debug}"))
        .args(["--output-format=terse", "job.fio"]);
    let out = common::run_ok(c);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// fio's main loop prints a waiting job's line on each 100 ms turn while the phase before
/// runs (and a stonewall's once more on the turn that reaps it): as many lines, for a
/// short and a longer phase, behind a stonewall and behind `wait_for`.
#[test]
fn wait_lines_repeat_every_turn_as_fio() {
    let dir = scratch("debug-process-waits");
    for runtime in ["50ms", "450ms"] {
        for (how, waiting) in [
            ("stonewall", "b: stonewall wait"),
            ("wait_for=a", "b: waiting for a"),
        ] {
            let job = format!(
                "[global]\nioengine=null\nrw=read\nsize=1m\n[a]\nsize=1g\ntime_based\n\
                 runtime={runtime}\n[b]\n{how}\n"
            );
            let count = |lines: Vec<String>| {
                lines
                    .iter()
                    .filter(|l| l.starts_with("process") && l.ends_with(waiting))
                    .count()
            };
            let ours = count(debug_lines(iobench(), &dir, "process", &job));
            // One line per 100 ms turn from the start.
            let least = if runtime == "50ms" { 1 } else { 4 };
            assert!(ours >= least, "{runtime} {how}: {ours} lines");
            if let Some(fio) = common::fio() {
                let theirs = count(debug_lines(fio, &dir, "process", &job));
                assert!(
                    ours.abs_diff(theirs) <= 1,
                    "{runtime} {how}: iobench {ours} lines, fio {theirs}"
                );
            }
        }
    }
}

/// `--debug=process,job:1`: every line until the job of index 1 (0-based over every
/// clone) is forked, then only that process's lines, fio's `fio_debug_jobp`; the other
/// workers and the main process fall silent.
#[test]
fn job_filter_keeps_only_that_jobs_lines_as_fio() {
    let dir = scratch("debug-process-jobno");
    // Each job runs a while, so none ends before the last is forked (fio lets none run
    // before then; iobench does not wait).
    let job = "[global]\nioengine=null\nsize=1m\nrw=read\ntime_based\nruntime=300ms\n\
               [a]\n[b]\nnumjobs=2\n[c]\n";
    let masked = |lines: Vec<String>| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.starts_with("process") || l.starts_with("fio:"))
            .map(|l| {
                // A number of any width (process ids differ in digits from run to run)
                // as one '#', and the padding after it as one space.
                let mut out = String::new();
                for c in l.chars() {
                    let c = if c.is_ascii_digit() { '#' } else { c };
                    if !((c == '#' || c == ' ') && out.ends_with(c)) {
                        out.push(c);
                    }
                }
                out
            })
            .collect()
    };
    let lines = debug_lines(iobench(), &dir, "process,job:1", job);
    // After the second fork, one thread id only, the one whose job started then.
    let second = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.ends_with("will fork"))
        .nth(1)
        .map(|(i, _)| i)
        .expect("two forks");
    let ids: BTreeSet<&str> = lines[second + 1..]
        .iter()
        .filter(|l| l.starts_with("process"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(ids.len(), 1, "{lines:#?}");
    assert!(lines.iter().any(|l| l == "fio: set debug jobno 1"));
    if let Some(fio) = common::fio() {
        let theirs = debug_lines(fio, &dir, "process,job:1", job);
        assert_eq!(masked(lines), masked(theirs));
    }
}
