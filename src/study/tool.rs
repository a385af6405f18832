//! `compare --tool`: another fio-compatible binary (fio itself, or one given by path) runs
//! a side of a comparison, so that fio and iobench take turns on the same device with the
//! same job. The binary must answer `--version` with a fio version, and the side it runs
//! may use only fio's own options: an iobench extension would be an error in fio, or worse,
//! a different job.

use crate::cli::Invocation;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long `--version` may take before the binary is judged not fio-compatible.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of `--version`'s stdout and stderr is read (its first line is the answer).
const VERSION_BYTES: u64 = 64 << 10;

/// A checked tool: the program to run and the version it reported.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The name (looked up in PATH) or path given to `--tool`.
    pub program: PathBuf,
    /// The first line of its `--version` (`fio-3.33`).
    pub version: String,
}

impl Tool {
    /// Checks `spec` (`fio`, or a path to a binary): it must exist, run, and report a fio
    /// version on `--version`.
    pub fn find(spec: &str) -> Result<Tool, String> {
        let program = PathBuf::from(spec);
        if spec.contains('/') {
            match std::fs::metadata(&program) {
                Err(e) => return Err(format!("--tool {spec}: {e}")),
                Ok(m) if m.is_dir() => {
                    return Err(format!(
                        "--tool {spec}: a directory, expected fio or the path of a fio-compatible binary"
                    ))
                }
                Ok(_) => {}
            }
        }
        // Bounded as a run is: its own process group, what it prints read as it comes
        // (the first VERSION_BYTES kept, the rest left unread), the group killed once it
        // has answered or at the limit, so a child it left holding its stdout (`yes &`)
        // neither hangs compare nor fills its memory.
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(&program)
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "--tool {spec}: not found in PATH (install fio, or give the path of a fio-compatible binary)"
                ),
                _ => format!("--tool {spec}: cannot run it: {e}"),
            })?;
        let pid = child.id() as libc::pid_t;
        let read = |r: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || -> Vec<u8> {
                use std::io::Read;
                let mut v = Vec::new();
                if let Some(r) = r {
                    let _ = r.take(VERSION_BYTES).read_to_end(&mut v);
                }
                v
            })
        };
        let so = read(child.stdout.take().map(|r| Box::new(r) as _));
        let se = read(child.stderr.take().map(|r| Box::new(r) as _));
        let start = Instant::now();
        let mut ended: Option<Instant> = None;
        let answered = loop {
            if exited(pid) {
                // Its last lines may still be in the pipes: the readers say.
                let at = *ended.get_or_insert_with(Instant::now);
                if so.is_finished() && se.is_finished() || at.elapsed() > Duration::from_millis(300)
                {
                    break true;
                }
            } else if start.elapsed() >= VERSION_TIMEOUT {
                break false;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // Not reaped yet, so the group's id is still this tool's: what it left goes.
        kill_group(pid, libc::SIGKILL);
        let status = child.wait().map_err(|e| format!("--tool {spec}: {e}"))?;
        let out = std::process::Output {
            status,
            stdout: so.join().unwrap_or_default(),
            stderr: se.join().unwrap_or_default(),
        };
        if !answered {
            return Err(format!(
                "--tool {spec}: not fio-compatible: '{spec} --version' did not answer within {}s",
                VERSION_TIMEOUT.as_secs()
            ));
        }
        let first = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let version = first(&out.stdout);
        if !status.success() {
            let why = first(&out.stderr);
            return Err(format!(
                "--tool {spec}: not fio-compatible: '{spec} --version' failed ({status}){}",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                }
            ));
        }
        if !version.contains("fio-") {
            return Err(format!(
                "--tool {spec}: not fio-compatible: '{spec} --version' says '{version}', expected a fio version such as fio-3.33"
            ));
        }
        Ok(Tool { program, version })
    }

    /// The side's label: `fio 3.33` for `fio-3.33` (the first word, its first dash a space).
    pub fn label(&self) -> String {
        let word = self.version.split_whitespace().next().unwrap_or("");
        word.replacen('-', " ", 1)
    }

    /// Runs `args` once with the tool, its JSON+ output written to `out`. Returns the exit
    /// status's code (-1 when killed by a signal) and the last lines of its stderr.
    ///
    /// Bounded: the tool leads its own process group; what it prints (stdout and stderr
    /// together) is read as it comes, its last lines kept, and past [`MAX_TOOL_OUTPUT`]
    /// the group is killed and the run is an error; past `limit` (None: none) too. When
    /// the tool ends, whatever it left in its group is killed before it is reaped.
    pub fn run(
        &self,
        args: &[String],
        out: &Path,
        limit: Option<Duration>,
    ) -> Result<(i32, String), String> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(&self.program)
            .args(without_output(args))
            .arg("--output-format=json+")
            .arg(format!("--output={}", out.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("{}: {e}", self.program.display()))?;
        let pid = child.id() as libc::pid_t;
        let printed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let drain = |r: Option<Box<dyn std::io::Read + Send>>, keep: bool| {
            let printed = printed.clone();
            std::thread::spawn(move || -> Vec<u8> {
                let Some(mut r) = r else { return Vec::new() };
                let mut tail = Vec::new();
                let mut buf = vec![0u8; 64 << 10];
                loop {
                    match r.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let total = printed
                                .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed)
                                + n as u64;
                            if keep {
                                tail.extend_from_slice(&buf[..n]);
                                if tail.len() > TAIL_BYTES {
                                    tail.drain(..tail.len() - TAIL_BYTES);
                                }
                            }
                            if total > MAX_TOOL_OUTPUT {
                                break;
                            }
                        }
                    }
                }
                tail
            })
        };
        let so = drain(child.stdout.take().map(|r| Box::new(r) as _), false);
        let se = drain(child.stderr.take().map(|r| Box::new(r) as _), true);
        let start = Instant::now();
        let mut forwarded = false;
        let mut ended: Option<Instant> = None;
        let failure = loop {
            // The cap first: a tool past it may already have died of SIGPIPE.
            if printed.load(std::sync::atomic::Ordering::Relaxed) > MAX_TOOL_OUTPUT {
                break Some(format!(
                    "{}: printed more than {} MiB on its stdout and stderr: stopped (its results go                      to its --output file; a tool that prints that much is not running the job)",
                    self.program.display(),
                    MAX_TOOL_OUTPUT >> 20
                ));
            }
            if exited(pid) {
                // Its last output may still be in the pipes: the readers say (a child it
                // left holding them is killed below).
                let at = *ended.get_or_insert_with(Instant::now);
                if so.is_finished() && se.is_finished() || at.elapsed() > Duration::from_millis(300)
                {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            if let Some(l) = limit.filter(|l| start.elapsed() > *l) {
                break Some(format!(
                    "{}: still running after {} s: stopped (the limit is the job's time plus slack;                      --tool-timeout=SECS changes it, 0 for none)",
                    self.program.display(),
                    l.as_secs()
                ));
            }
            if !forwarded && crate::run::signals::signalled().is_some() {
                // The tool is in its own group: the terminal's signal did not reach it.
                kill_group(pid, libc::SIGTERM);
                forwarded = true;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if failure.is_some() {
            kill_group(pid, libc::SIGTERM);
            let t = Instant::now();
            while !exited(pid) && t.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // Not reaped yet, so the group's id is still this tool's: what it left goes.
        kill_group(pid, libc::SIGKILL);
        let status = child
            .wait()
            .map_err(|e| format!("{}: {e}", self.program.display()))?;
        let _ = so.join();
        let err = se.join().unwrap_or_default();
        if let Some(f) = failure {
            return Err(f);
        }
        let err = String::from_utf8_lossy(&err);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Ok((status.code().unwrap_or(-1), tail.join("\n")))
    }
}

/// The most a `--tool` run may print on stdout and stderr together (its results go to
/// a file): 64 MiB.
pub const MAX_TOOL_OUTPUT: u64 = 64 << 20;

/// The end of a tool's stderr kept for its error lines.
const TAIL_BYTES: usize = 64 << 10;

/// The time a `--tool` run of a job bound by time (`estimate` seconds) may take: one and
/// a half times that plus a minute; a job bound by size: an hour.
pub fn time_limit(estimate: Option<f64>) -> Duration {
    match estimate {
        Some(s) if s.is_finite() && s >= 0.0 => {
            Duration::from_secs_f64((s * 1.5 + 60.0).min(365.0 * 86400.0))
        }
        _ => Duration::from_secs(3600),
    }
}

/// True once the process `pid` (our child) has ended; it is left unreaped (WNOWAIT), so
/// its process group's id cannot be taken by another process meanwhile.
fn exited(pid: libc::pid_t) -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid only writes it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on our own child with a valid siginfo pointer.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid is set by waitid (0 while the child runs).
    r != 0 || unsafe { info.si_pid() } != 0
}

/// Sends `sig` to the process group `pgid` (our child's own).
fn kill_group(pgid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals that group only; errors are ignored
    // (ESRCH: the group is gone).
    unsafe { libc::kill(-pgid, sig) };
}

/// The side's arguments without the output options compare sets itself (`--output`,
/// `--output-format`, in either `--flag=value` or `--flag value` form).
fn without_output(args: &[String]) -> Vec<String> {
    let mut v = Vec::new();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        let body = a.trim_start_matches('-');
        if !a.starts_with('-') || a.len() - body.len() > 2 {
            v.push(a.clone());
            continue;
        }
        match body.split_once('=') {
            Some(("output" | "output-format", _)) => {}
            None if body == "output" || body == "output-format" => skip = true,
            _ => v.push(a.clone()),
        }
    }
    v
}

/// Refuses a side for another tool that uses an iobench extension (its flags `--env`,
/// `--live`, `--metrics`, or a job option fio 3.33 does not have), naming it.
pub fn check_fio_only(label: &str, inv: &Invocation) -> Result<(), String> {
    let own = [
        ("--env", inv.config.env),
        ("--live", inv.config.live.is_some()),
        ("--metrics", inv.config.metrics.is_some()),
        ("--metrics-linger", inv.config.metrics_linger_ms.is_some()),
    ];
    for (flag, used) in own {
        if used {
            return Err(format!(
                "{label}: {flag} is an iobench option, not fio's: the side --tool runs may use only fio's own options"
            ));
        }
    }
    for job in &inv.jobs {
        if let Some(o) = job.opts.iter().find(|o| o.def.iobench_only) {
            return Err(format!(
                "{label}: job '{}' uses {}, an iobench option fio does not have: the side --tool runs may use only fio's own options",
                job.name, o.def.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn output_options_are_left_to_compare() {
        let got = without_output(&s(&[
            "--name=a",
            "--output=x.json",
            "--output-format",
            "normal",
            "--output",
            "y",
            "-output-format=terse",
            "--rw=read",
            "job.fio",
        ]));
        assert_eq!(got, s(&["--name=a", "--rw=read", "job.fio"]));
    }

    #[test]
    fn labels_from_versions() {
        let t = |v: &str| Tool {
            program: "x".into(),
            version: v.into(),
        };
        assert_eq!(t("fio-3.33").label(), "fio 3.33");
        assert_eq!(
            t("iobench-0.1.0 (fio-3.33 compatible)").label(),
            "iobench 0.1.0"
        );
    }

    #[test]
    fn iobench_only_options_are_refused() {
        let inv =
            crate::cli::parse_args(&["--name=a", "--ioengine=null", "--io_timeout=5s"]).unwrap();
        let e = check_fio_only("fio", &inv).unwrap_err();
        assert!(e.contains("io_timeout"), "{e}");
        let inv = crate::cli::parse_args(&["--env", "--name=a", "--ioengine=null"]).unwrap();
        assert!(check_fio_only("fio", &inv).unwrap_err().contains("--env"));
        let inv = crate::cli::parse_args(&["--name=a", "--ioengine=null", "--size=1m"]).unwrap();
        assert!(check_fio_only("fio", &inv).is_ok());
    }

    #[test]
    fn missing_and_incompatible_tools() {
        let e = Tool::find("/nonexistent/fio").unwrap_err();
        assert!(e.contains("/nonexistent/fio"), "{e}");
        let e = Tool::find("no-such-tool-iobench").unwrap_err();
        assert!(e.contains("not found"), "{e}");
        // `false --version` fails; `true --version` succeeds but says nothing of fio.
        let e = Tool::find("false").unwrap_err();
        assert!(e.contains("not fio-compatible"), "{e}");
        let e = Tool::find("true").unwrap_err();
        assert!(e.contains("not fio-compatible"), "{e}");
    }
}
