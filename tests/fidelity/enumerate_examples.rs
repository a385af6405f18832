//! Every job file of fio's examples (Debian's fio-examples package) that fio runs on this
//! machine also runs in iobench: each is copied with small sizes and short runtimes (paths
//! moved into a scratch folder; jobs on block devices left out), run by both tools, and
//! the issued I/O counts compared where the job is deterministic (not time-based and done
//! before its runtime). The tally line counts examples iobench runs of those fio runs.
use crate::common;
use crate::enum_util;

use enum_util::{run_limited, scratch, tally};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The recorded floors (see README's tally).
const RUNS_FLOOR: usize = 27;
const EQUAL_FLOOR: usize = 8;

fn examples() -> Option<PathBuf> {
    let dir = std::env::var_os("FIO_EXAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/doc/fio/examples"));
    if dir.join("fio-seq-read.fio").exists() {
        return Some(dir);
    }
    assert!(
        std::env::var("IOBENCH_REQUIRE_FIO").as_deref() != Ok("1"),
        "fio's examples are missing (apt-get install fio-examples)"
    );
    None
}

/// Reads a size as fio would, roughly (enough to tell big from small).
fn bytes(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().ok()?;
    let mult = match v[digits.len()..].chars().next() {
        None | Some('b') => 1,
        Some('k') => 1 << 10,
        Some('m') => 1 << 20,
        Some('g') => 1 << 30,
        Some('t') => 1 << 40,
        _ => return None,
    };
    Some(n * mult)
}

/// The example made small and short, with its paths in `dir`; `None` for a job on a
/// device (never touched from a test).
fn shrink(text: &str, dir: &Path) -> Option<String> {
    let d = dir.display().to_string();
    let mut out = String::from("[global]\nruntime=300ms\n\n");
    // A network example's startdelay orders its writer after its readers' set-up (fio
    // itself may hang without it, its readers missing the writer's UDP open): kept.
    let net = text.contains("ioengine=net");
    for line in text.lines() {
        let t = line.trim();
        let Some((k, v)) = t.split_once('=') else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        let new = match k {
            "filename" | "directory" | "opendir" => {
                if v.contains("/dev/") && v != "/dev/null" {
                    return None;
                }
                let parts: Vec<String> = v
                    .split(':')
                    .map(|p| match p.rsplit('/').next() {
                        Some(base) if p.starts_with('/') && k == "filename" => {
                            format!("{d}/{base}")
                        }
                        _ if p.starts_with('/') => d.clone(),
                        _ => p.to_string(),
                    })
                    .collect();
                Some(parts.join(":"))
            }
            "size" | "filesize" | "io_size" | "io_limit" => match bytes(v) {
                Some(b) if b > 1 << 20 => Some("1m".into()),
                _ => None,
            },
            "runtime" | "timeout" => Some("300ms".into()),
            "startdelay" if net => None,
            "ramp_time" | "startdelay" | "ss_ramp" | "steadystate_ramp_time" => Some("0".into()),
            "ss_dur" | "steadystate_duration" => Some("300ms".into()),
            "numjobs" => v.parse::<u64>().ok().filter(|&n| n > 2).map(|_| "2".into()),
            "nrfiles" => v.parse::<u64>().ok().filter(|&n| n > 4).map(|_| "4".into()),
            "loops" => v.parse::<u64>().ok().filter(|&n| n > 2).map(|_| "2".into()),
            _ => None,
        };
        match new {
            Some(n) => out.push_str(&format!("{k}={n}\n")),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Some(out)
}

fn json_of(stdout: &str) -> Option<serde_json::Value> {
    let at = stdout.find("\n{").map_or(0, |i| i + 1);
    let at = if stdout.starts_with('{') { 0 } else { at };
    serde_json::from_str(&stdout[at..]).ok()
}

/// (job name, read ios, write ios) of every job, and whether each finished before its
/// runtime (so its counts do not depend on speed).
fn counts(v: &serde_json::Value) -> Vec<(String, u64, u64, bool)> {
    v["jobs"]
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .map(|j| {
                    (
                        j["jobname"].as_str().unwrap_or("").to_string(),
                        j["read"]["total_ios"].as_u64().unwrap_or(0),
                        j["write"]["total_ios"].as_u64().unwrap_or(0),
                        j["job_runtime"].as_u64().unwrap_or(u64::MAX) < 250,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What one example came to: fio does not run it here, iobench fails it, or both run it
/// (with the issued counts compared when the job is deterministic).
enum Outcome {
    NotRun,
    Fails(String),
    Runs(Option<Result<(), String>>),
}

fn one_example(f: &Path, root: &Path) -> (String, Outcome) {
    let name = f.file_stem().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(f).unwrap_or_default();
    let run = |tool: Command, tag: &str| {
        let dir = root.join(format!("{name}.{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        let small = shrink(&text, &dir);
        let r = small.map(|small| {
            let job = dir.join("job.fio");
            std::fs::write(&job, small).unwrap();
            let mut c = tool;
            c.current_dir(&dir).arg("--output-format=json").arg(&job);
            run_limited(c, 20)
        });
        let _ = std::fs::remove_dir_all(&dir);
        r
    };
    let Some(fio) = run(Command::new("fio"), "fio") else {
        return (name, Outcome::NotRun);
    };
    if fio.code != Some(0) {
        return (name, Outcome::NotRun);
    }
    let mut ib = Command::new(env!("CARGO_BIN_EXE_iobench"));
    ib.env("IOBENCH_FIO_COMPAT", crate::common::HOST_DIALECT);
    let ib = run(ib, "iobench").unwrap();
    if ib.code != Some(0) {
        let why = ib
            .stderr
            .lines()
            .next()
            .unwrap_or("killed at the time limit")
            .to_string();
        return (name, Outcome::Fails(why));
    }
    // A time-based job's counts depend on speed; a network reader's on how the stream
    // arrives (fio counts each partial receive as an issued I/O, 259 for 256 blocks in one
    // run of netio.fio): neither is compared.
    if text.contains("time_based") || text.contains("ioengine=net") {
        return (name, Outcome::Runs(None));
    }
    let (Some(a), Some(b)) = (json_of(&fio.stdout), json_of(&ib.stdout)) else {
        return (name, Outcome::Runs(None));
    };
    let (a, b) = (counts(&a), counts(&b));
    if a.is_empty() || !a.iter().all(|j| j.3) {
        return (name, Outcome::Runs(None));
    }
    let strip = |v: &[(String, u64, u64, bool)]| -> Vec<(String, u64, u64)> {
        v.iter().map(|j| (j.0.clone(), j.1, j.2)).collect()
    };
    let cmp = if strip(&a) == strip(&b) {
        Ok(())
    } else {
        Err(format!("fio {:?} iobench {:?}", strip(&a), strip(&b)))
    };
    (name, Outcome::Runs(Some(cmp)))
}

#[test]
fn every_example_fio_runs_runs_in_iobench() {
    if common::fio().is_none() {
        return;
    }
    let Some(src) = examples() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    let root = scratch("enum-examples");
    // Two examples at a time (fio takes a third of a second just to start).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(f) = files.get(i) else { break };
                let r = one_example(f, &root);
                results.lock().unwrap().push(r);
            });
        }
    });
    let (mut fio_runs, mut ok, mut compared, mut equal) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    let mut differ = Vec::new();
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, outcome) in results {
        match outcome {
            Outcome::NotRun => {}
            Outcome::Fails(why) => {
                fio_runs += 1;
                misses.push(format!("{name} ({why})"));
            }
            Outcome::Runs(cmp) => {
                fio_runs += 1;
                ok += 1;
                match cmp {
                    Some(Ok(())) => {
                        compared += 1;
                        equal += 1;
                    }
                    Some(Err(d)) => {
                        compared += 1;
                        differ.push(format!("{name} {d}"));
                    }
                    None => {}
                }
            }
        }
    }
    println!("TALLY examples compared: {equal} of {compared} with equal issued counts");
    for d in &differ {
        println!("  differs: {d}");
    }
    tally("examples", ok, fio_runs, RUNS_FLOOR, &misses);
    // Every deterministic example issues what fio issues; how many count as deterministic
    // depends on both tools finishing within 250 ms, so only a low floor is kept for that.
    assert!(
        differ.is_empty(),
        "issued counts differ from fio's: {differ:?}"
    );
    assert!(
        compared >= EQUAL_FLOOR,
        "only {compared} examples were compared (floor {EQUAL_FLOOR})"
    );
}
