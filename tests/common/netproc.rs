//! Servers started by client/server tests: each in its own process group, killed (group and
//! all) when the test ends, even when it fails; loopback ports picked free at run time.

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on now (the kernel's pick, released for the server to take),
/// never the same twice in one test binary: tests run in parallel, and a port released by
/// one could otherwise be handed to another before the first server binds it.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("bind an ephemeral port");
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// Makes `cmd`'s process die when the test's thread that starts it ends, even when the
/// test binary itself is killed and no `Drop` runs (a killed suite once left a
/// `fio --server` running).
pub fn dies_with_the_test(cmd: &mut Command) {
    // SAFETY: between fork and exec the closure calls only prctl, async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A started server; dropping it kills its whole process group.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Server {
    /// Starts `cmd` (a server command line) in a new process group and waits until it
    /// accepts connections on `port`.
    pub fn start(mut cmd: Command, port: u16) -> Server {
        dies_with_the_test(&mut cmd);
        // Its temporary files (an iobench server's run directories) in a directory of its
        // own, removed with it: a server killed with SIGKILL cannot remove them itself.
        if !cmd.get_envs().any(|(k, _)| k == "TMPDIR") {
            let tmp = server_tmp(port);
            let _ = std::fs::create_dir_all(&tmp);
            cmd.env("TMPDIR", tmp);
        }
        cmd.process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().expect("start server");
        let mut s = Server { child, port };
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "server on port {port} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Another process may hold the port (then this server could not bind it and ended).
        assert!(
            matches!(s.child.try_wait(), Ok(None)),
            "the server for port {port} exited: is the port taken?"
        );
        s
    }

    /// Kills the server's process group now.
    pub fn kill(&mut self) {
        let pgid = self.child.id() as i32;
        // SAFETY: signals the process group this test created.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(server_tmp(self.port));
    }
}

/// The `$TMPDIR` of the server [`Server::start`] starts on `port` (ports are never given
/// twice in a test binary: see [`free_port`]).
fn server_tmp(port: u16) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("server-tmp-{port}"))
}

/// Replaces every number (with its decimals and unit letters) by `N` and squeezes spaces:
/// the shape of a report line, whatever the timings were.
pub fn mask(line: &str) -> String {
    let mut out = String::new();
    let b: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                i += 1;
            }
            while i < b.len() && matches!(b[i], 'k' | 'K' | 'M' | 'G' | 'T' | 'P' | 'i' | 'B') {
                i += 1;
            }
            out.push('N');
            continue;
        }
        if b[i] == ' ' {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(b[i]);
        }
        i += 1;
    }
    out.replace("(nsec)", "(T)")
        .replace("(usec)", "(T)")
        .replace("(msec)", "(T)")
        .replace("N/s", "N")
        // fio pads numbers to a width ("avg= 6.76"): padding is timing too.
        .replace("= N", "=N")
        .replace("[ N", "[N")
}
