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
        let mut pipes = Pipes::new(&mut child, Keep::Head(VERSION_BYTES as usize));
        let start = Instant::now();
        let mut ended: Option<Instant> = None;
        let answered = loop {
            let drained = pipes.pump(Duration::from_millis(5));
            if exited(pid) {
                // Its last lines may still be in the pipes: read them for a moment.
                let at = *ended.get_or_insert_with(Instant::now);
                if drained || at.elapsed() > Duration::from_millis(300) {
                    break true;
                }
            } else if start.elapsed() >= VERSION_TIMEOUT {
                break false;
            }
        };
        // Not reaped yet, so the group's id is still this tool's: what it left goes.
        kill_group(pid, libc::SIGKILL);
        let status = child.wait().map_err(|e| format!("--tool {spec}: {e}"))?;
        // What is read is kept; the pipes close here, whoever still holds their other
        // end (a child that left the group with setsid).
        let (stdout, stderr) = pipes.into_kept();
        let out = std::process::Output {
            status,
            stdout,
            stderr,
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
        let mut pipes = Pipes::new(&mut child, Keep::Tail(TAIL_BYTES));
        let start = Instant::now();
        let mut forwarded = false;
        let mut ended: Option<Instant> = None;
        let failure = loop {
            let drained = pipes.pump(Duration::from_millis(20));
            // The cap first: a tool past it may already have died of SIGPIPE.
            if pipes.total() > MAX_TOOL_OUTPUT {
                break Some(format!(
                    "{}: printed more than {} MiB on its stdout and stderr: stopped (its results go                      to its --output file; a tool that prints that much is not running the job)",
                    self.program.display(),
                    MAX_TOOL_OUTPUT >> 20
                ));
            }
            if exited(pid) {
                // Its last output may still be in the pipes: read for a moment (a child
                // it left holding them is killed below, or, out of its group, cut off).
                let at = *ended.get_or_insert_with(Instant::now);
                if drained || at.elapsed() > Duration::from_millis(300) {
                    break None;
                }
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
        // Whoever still holds the pipes' other ends, they close here.
        let (_, err) = pipes.into_kept();
        if let Some(f) = failure {
            return Err(f);
        }
        let err = String::from_utf8_lossy(&err);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Ok((status.code().unwrap_or(-1), tail.join("\n")))
    }
}

/// What [`Pipes`] keeps of a child's stdout and stderr.
#[derive(Debug, Clone, Copy)]
enum Keep {
    /// The first N bytes of each; a pipe is no longer read once it has them.
    Head(usize),
    /// Stderr's last N bytes; stdout is counted and dropped.
    Tail(usize),
}

/// One of a child's pipes in [`Pipes`].
struct End {
    /// The read end, open until the [`Pipes`] drop.
    file: Option<std::fs::File>,
    /// What is kept of it.
    kept: Vec<u8>,
    /// At its end of file, failed, or holding all it keeps: no longer read.
    done: bool,
}

/// A child's stdout and stderr, read in the caller's thread with `poll(2)` and
/// non-blocking reads, so that reading never outlasts the caller's deadline: a
/// descendant that left the child's process group (`setsid`) and holds the pipes open
/// cannot keep compare waiting for an end of file; they are closed when this drops.
struct Pipes {
    /// Stdout then stderr.
    ends: [End; 2],
    keep: Keep,
    /// Bytes read from both, kept or not.
    total: u64,
}

impl Pipes {
    /// Takes `child`'s piped stdout and stderr (either may be absent).
    fn new(child: &mut std::process::Child, keep: Keep) -> Pipes {
        use std::os::fd::{AsRawFd, OwnedFd};
        let nonblocking = |fd: OwnedFd| {
            // SAFETY: fcntl on a descriptor this function owns, flags only.
            unsafe {
                let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
            }
            std::fs::File::from(fd)
        };
        let out = child.stdout.take().map(|p| nonblocking(OwnedFd::from(p)));
        let err = child.stderr.take().map(|p| nonblocking(OwnedFd::from(p)));
        let end = |file: Option<std::fs::File>| End {
            done: file.is_none(),
            file,
            kept: Vec::new(),
        };
        Pipes {
            ends: [end(out), end(err)],
            keep,
            total: 0,
        }
    }

    /// Waits at most `wait` for output and reads what there is (a bounded amount per
    /// call, so the caller's loop keeps its pace). True once both are done: at their end
    /// of file, or (`Keep::Head`) holding all they keep. With both done it only sleeps.
    fn pump(&mut self, wait: Duration) -> bool {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        let keep = self.keep;
        let mut fds: Vec<libc::pollfd> = Vec::new();
        let mut which = Vec::new();
        for (i, e) in self.ends.iter().enumerate() {
            if let Some(f) = e.file.as_ref().filter(|_| !e.done) {
                fds.push(libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
                which.push(i);
            }
        }
        let ms = wait.as_millis().min(1000) as libc::c_int;
        if fds.is_empty() {
            std::thread::sleep(wait);
            return true;
        }
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd entries for the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n <= 0 {
            return false;
        }
        let mut buf = vec![0u8; 64 << 10];
        for (p, &i) in fds.iter().zip(&which) {
            if p.revents == 0 {
                continue;
            }
            let End { file, kept, done } = &mut self.ends[i];
            let Some(f) = file.as_mut() else { continue };
            // At most 1 MiB a call from each, then back to the caller's checks.
            for _ in 0..16 {
                match f.read(&mut buf) {
                    Ok(0) => *done = true,
                    Ok(n) => {
                        self.total += n as u64;
                        match keep {
                            Keep::Head(cap) => {
                                let room = cap.saturating_sub(kept.len());
                                kept.extend_from_slice(&buf[..n.min(room)]);
                                // Enough: the rest is left unread (the pipe kept open,
                                // so a child that prints on blocks until it is killed).
                                *done |= kept.len() >= cap;
                            }
                            Keep::Tail(cap) if i == 1 => {
                                kept.extend_from_slice(&buf[..n]);
                                if kept.len() > cap {
                                    kept.drain(..kept.len() - cap);
                                }
                            }
                            Keep::Tail(_) => {}
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => *done = true,
                }
                if *done {
                    break;
                }
            }
        }
        self.ends.iter().all(|e| e.done)
    }

    /// Bytes read so far from both.
    fn total(&self) -> u64 {
        self.total
    }

    /// What was kept of stdout and of stderr; the pipes close.
    fn into_kept(self) -> (Vec<u8>, Vec<u8>) {
        let [out, err] = self.ends;
        (out.kept, err.kept)
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
