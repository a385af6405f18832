//! fio's command-line flags that are not about jobs: `--cpuclock-test`, `--idle-prof`,
//! `--trigger*`, `--bandwidth-log`. Each does here what fio 3.33 does on Linux; where fio's
//! behaviour is odd but scripts may rely on it (the exit status of `--cpuclock-test`, the
//! empty aggregate logs of `--bandwidth-log` outside client mode), it is kept and said so.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `--cpuclock-test`: checks that the clock iobench times with (the TSC when invariant,
/// as fio) never goes backwards when read in turn from every CPU. Each CPU's thread reads
/// the clock under one lock, so the readings form one sequence that must not decrease.
/// Returns the exit status, as fio's: 0 when the test passes, 1 when it fails.
pub fn cpuclock_test() -> u8 {
    crate::clock::select_default();
    let tsc = crate::clock::selected() == crate::clock::ClockSource::Cpu;
    println!("cs: reliable_tsc: {}", if tsc { "yes" } else { "no" });
    let cpus = allowed_cpus();
    println!("cs: Testing {} CPUs", cpus.len());
    const READS: usize = 100_000;
    let last = Mutex::new(0u64);
    let failed = AtomicBool::new(false);
    let results: Vec<(usize, u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (last, failed) = (&last, &failed);
                s.spawn(move || {
                    pin(cpu);
                    let (mut seen, mut first) = (0u64, 0u64);
                    for _ in 0..READS {
                        let Ok(mut l) = last.lock() else { break };
                        let t = crate::clock::now_ns();
                        if t < *l {
                            failed.store(true, Ordering::Relaxed);
                        }
                        *l = t;
                        if seen == 0 {
                            first = t;
                        }
                        seen += 1;
                    }
                    (cpu, seen, first)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (cpu, seen, first) in results.iter().rev() {
        println!("cs: cpu {cpu:>2}: {seen} clocks seen, first {first}");
    }
    if failed.load(Ordering::Relaxed) {
        println!("cs: Failed: the clock went backwards between CPUs");
        1
    } else {
        println!("cs: Pass!");
        0
    }
}

fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size passed is the set's own.
    let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !ok {
        return (0..n).collect();
    }
    // SAFETY: CPU_ISSET only reads the set.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above; sched_setaffinity reads the set for the calling thread.
    unsafe {
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
    }
}

/// `--idle-prof=system|percpu|calibrate`: the CPUs' idleness over the run, from the
/// kernel's idle and iowait time in `/proc/stat` (fio measures it with idle-priority
/// threads doing calibrated units of work; the kernel's account needs no threads stealing
/// nothing from the benchmark). `unit work` is the time of iobench's own calibrated unit.
pub struct IdleProf {
    mode: String,
    start: Vec<(u64, u64)>,
}

/// (idle, total) jiffies per CPU, the whole system first.
fn cpu_times() -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("cpu"))
        .map(|l| {
            let v: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            (idle, v.iter().take(8).sum())
        })
        .collect()
}

/// Times a fixed piece of CPU work a few times: (mean, standard deviation) in µs.
fn unit_work() -> (f64, f64) {
    let mut samples = Vec::with_capacity(50);
    for _ in 0..50 {
        let t = Instant::now();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..20_000u64 {
            x = std::hint::black_box(x.rotate_left(7) ^ i);
        }
        std::hint::black_box(x);
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

impl IdleProf {
    /// Checks the mode as fio does (an unknown one is reported and ignored) and takes the
    /// first reading.
    pub fn start(mode: &str) -> Option<IdleProf> {
        if !matches!(mode, "system" | "percpu" | "calibrate") {
            eprintln!("fio: incorrect idle-prof option: {mode}");
            return None;
        }
        Some(IdleProf {
            mode: mode.to_string(),
            start: cpu_times(),
        })
    }

    /// True for `calibrate`: fio then only calibrates and runs no job.
    pub fn calibrate_only(&self) -> bool {
        self.mode == "calibrate"
    }

    /// The `CPU idleness:` block fio prints after the run.
    pub fn report(&self) -> String {
        let end = cpu_times();
        let share = |i: usize| -> f64 {
            let (a, b) = (self.start.get(i), end.get(i));
            match (a, b) {
                (Some(a), Some(b)) if b.1 > a.1 => {
                    100.0 * (b.0.saturating_sub(a.0)) as f64 / (b.1 - a.1) as f64
                }
                _ => 100.0,
            }
        };
        let mut out = String::from("\nCPU idleness:\n");
        if !self.calibrate_only() {
            out.push_str(&format!("  system: {:.2}%\n", share(0)));
            if self.mode == "percpu" {
                let per: Vec<String> = (1..end.len())
                    .map(|i| format!("{:.2}%", share(i)))
                    .collect();
                out.push_str(&format!("  percpu: {}\n", per.join(", ")));
            }
        }
        let (mean, sd) = unit_work();
        out.push_str(&format!("  unit work: mean={mean:.2}us, stddev={sd:.2}\n"));
        out
    }
}

/// `--trigger-file`, `--trigger-timeout`, `--trigger`: as fio, when the file appears (it
/// is then removed) or the time since start passes, every job is told to stop, as after
/// a signal, and the trigger command is run by the shell.
pub fn start_trigger(file: Option<String>, timeout_ms: Option<u64>, cmd: Option<String>) {
    if file.is_none() && timeout_ms.is_none() {
        return;
    }
    let born = Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(50));
        let by_file = file
            .as_deref()
            .is_some_and(|f| std::fs::remove_file(f).is_ok());
        let by_time = timeout_ms.is_some_and(|t| born.elapsed() >= Duration::from_millis(t));
        if by_file || by_time {
            crate::stop::request_stop_all();
            if let Some(c) = cmd.as_deref().filter(|c| !c.is_empty()) {
                let ok = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(c)
                    .status()
                    .is_ok();
                if !ok {
                    eprintln!("fio: failed executing {c} trigger");
                }
            }
            return;
        }
    });
}

/// `--bandwidth-log[=NAME]`: fio fills its aggregate bandwidth logs only when it runs as a
/// client of fio servers; run locally it leaves `NAME-read_bw.log`, `NAME-write_bw.log`
/// and `NAME-trim_bw.log` empty (NAME is `agg` unless fio 3.42's `=NAME` is given, and
/// may hold a directory), and iobench does the same.
pub fn write_bandwidth_logs(name: &str) -> std::io::Result<()> {
    for d in ["read", "write", "trim"] {
        let path = format!("{name}-{d}_bw.log");
        std::fs::File::create(&path)
            .and_then(|mut f| f.flush())
            .map_err(|e| std::io::Error::new(e.kind(), format!("{path}: {e}")))?;
    }
    Ok(())
}

/// Runs a trigger command in a shell, as fio's `system` does (the server's
/// `--trigger-remote`, the client's `--trigger`; `who` names the side in the error): its
/// output goes where this process's goes; an empty command runs nothing.
pub fn run_command(cmd: &str, who: &str) {
    if cmd.is_empty() {
        return;
    }
    if let Err(e) = std::process::Command::new("sh").arg("-c").arg(cmd).status() {
        eprintln!("iobench: {who}: failed executing {cmd} trigger: {e}");
    }
}
