//! The reference fios a differential test runs against: Debian 12's fio 3.33 at
//! /usr/bin/fio, and fio 3.39 (Debian 13) and 3.41 (sid) in the debootstrapped roots .ci/run
//! makes under `$IOBENCH_REF_ROOTS` (default /var/cache/iobench-ref), run with `chroot`
//! (in a private mount namespace with /sys and /proc, made by `unshare`). Each
//! comes with the iobench that speaks its dialect (`IOBENCH_FIO_COMPAT=<its version>`), so a
//! test compares like with like. Under `IOBENCH_REQUIRE_FIO=1` (CI) a missing reference is a
//! failure, never a silent skip.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The reference fios CI requires: the host's 3.33 and the roots' 3.39 and 3.41.
pub const REQUIRED: [(&str, Option<&str>); 3] = [
    ("3.33", None),
    ("3.39", Some("trixie")),
    ("3.41", Some("sid")),
];

/// One reference fio: its release and, for a chrooted one, its root.
#[derive(Debug, Clone)]
pub struct RefFio {
    /// The release, as `fio --version` names it without `fio-` (`3.39`).
    pub version: String,
    /// The root it runs in, `None` for the host's fio.
    pub root: Option<PathBuf>,
}

impl RefFio {
    /// `fio` ready to take arguments: the host's, or `chroot ROOT fio`. Paths given to a
    /// chrooted fio are inside its root: use [`RefFio::scratch`].
    pub fn command(&self) -> Command {
        match &self.root {
            None => {
                let mut c = Command::new("fio");
                c.current_dir(super::scratch_cwd());
                c
            }
            // In a mount namespace of its own, with the host's /sys and a /proc in the
            // root (fio reads its disk statistics there); the mounts go when fio exits.
            Some(root) => {
                let mut c = Command::new("unshare");
                c.args(["--mount", "--propagation", "private", "sh", "-c"])
                    .arg(
                        "mount --rbind /sys \"$0/sys\" && mount -t proc proc \"$0/proc\" \
                         && exec chroot \"$0\" fio \"$@\"",
                    )
                    .arg(root);
                c
            }
        }
    }

    /// The iobench that speaks this fio's dialect.
    pub fn iobench(&self) -> Command {
        let mut c = super::iobench();
        c.env("IOBENCH_FIO_COMPAT", &self.version);
        c
    }

    /// A fresh scratch directory this fio can reach: `(path on the host, path the fio
    /// sees)`. Under a root it is `ROOT/tmp/iobench-tests/NAME`; remove it with [`super::Gone`].
    pub fn scratch(&self, name: &str) -> (PathBuf, PathBuf) {
        match &self.root {
            None => {
                let d = super::scratch(name);
                (d.clone(), d)
            }
            Some(root) => {
                let inside = Path::new("/tmp/iobench-tests").join(name);
                let host = root.join(inside.strip_prefix("/").unwrap());
                let _ = std::fs::remove_dir_all(&host);
                std::fs::create_dir_all(&host).expect("create scratch dir in the root");
                (host, inside)
            }
        }
    }

    /// A short name for messages: `fio 3.39 (trixie)`.
    pub fn label(&self) -> String {
        match &self.root {
            None => format!("fio {}", self.version),
            Some(r) => format!(
                "fio {} ({})",
                self.version,
                r.file_name().unwrap_or_default().to_string_lossy()
            ),
        }
    }
}

fn required() -> bool {
    std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1")
}

/// Where .ci/run keeps the roots.
pub fn roots_dir() -> PathBuf {
    std::env::var_os("IOBENCH_REF_ROOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/iobench-ref"))
}

/// `fio --version` of a command, without `fio-`, when it runs.
fn version_of(mut c: Command) -> Option<String> {
    let out = c.arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some(v.strip_prefix("fio-").unwrap_or(&v).to_string())
}

/// Every reference fio present, host first, each with the version it reports. Under
/// `IOBENCH_REQUIRE_FIO=1` a missing required one (or one reporting another version than
/// expected) panics with what to do; otherwise it is named on stderr and left out.
pub fn reference_fios() -> Vec<RefFio> {
    static FOUND: std::sync::OnceLock<Vec<RefFio>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let mut found = Vec::new();
            for (want, suite) in REQUIRED {
                let root = suite.map(|s| roots_dir().join(s));
                let probe = RefFio {
                    version: want.to_string(),
                    root: root.clone(),
                };
                let usable = root.as_ref().is_none_or(|r| r.join("usr/bin/fio").exists());
                let got = if usable {
                    version_of(probe.command())
                } else {
                    None
                };
                match got {
                    Some(v) if v == want => found.push(probe),
                    other => {
                        let what = match &other {
                            Some(v) => format!("reports fio-{v}"),
                            None => "is missing".to_string(),
                        };
                        let fix = match suite {
                            None => "apt-get install -y fio".to_string(),
                            Some(s) => format!(
                                "debootstrap --variant=minbase --include=fio,libaio1t64 {s} {}",
                                roots_dir().join(s).display()
                            ),
                        };
                        assert!(
                            !required(),
                            "reference {} {what} but IOBENCH_REQUIRE_FIO=1: {fix}",
                            probe.label()
                        );
                        eprintln!("reference {} {what}: leaving it out ({fix})", probe.label());
                        // A host fio of another release is still a reference, in its dialect.
                        if let (None, Some(v)) = (suite, other) {
                            if v.starts_with("3.") {
                                found.push(RefFio {
                                    version: v,
                                    root: None,
                                });
                            }
                        }
                    }
                }
            }
            found
        })
        .clone()
}

/// The reference fio of one release, if present (panics under `IOBENCH_REQUIRE_FIO=1` as
/// [`reference_fios`] does).
pub fn reference_fio(version: &str) -> Option<RefFio> {
    reference_fios().into_iter().find(|f| f.version == version)
}
