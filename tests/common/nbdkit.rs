//! nbdkit on a Unix socket for the NBD fault and watchdog tests.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An nbdkit serving on `DIR/nbd.sock`, killed when dropped.
pub struct Nbdkit {
    pub child: Child,
    pub socket: PathBuf,
}

impl Nbdkit {
    /// Starts `nbdkit -f -U DIR/nbd.sock ARGS…` and waits for its socket.
    pub fn start(dir: &Path, args: &[&str]) -> Nbdkit {
        let socket = dir.join("nbd.sock");
        let _ = std::fs::remove_file(&socket);
        let child = Command::new("nbdkit")
            .args(["-f", "-U"])
            .arg(&socket)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            // CI installs nbdkit (.ci/run); a missing one is a failure, never a skip.
            Err(e) => panic!("nbdkit is needed for these tests (apt-get install -y nbdkit): {e}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "nbdkit did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nbdkit { child, socket }
    }

    /// The `--uri=` option that reaches it.
    pub fn uri(&self) -> String {
        format!("--uri=nbd+unix:///?socket={}", self.socket.display())
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
