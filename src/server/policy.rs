//! What a remote client may ask of `--server`, and the server's limits (docs/security.md):
//! the operator's flags (`--server-root`, `--allow-exec`, `--server-max-conns`,
//! `--server-idle-timeout`), the checks a sent command line and sent jobs pass before
//! anything runs, and the reading of `--remote-config` files. Kept apart from the
//! connection handling so the rules live in one place.

use crate::options::jobfile::{self, Includes};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The operator's choices for this server.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `--server-root=DIR` (canonical): where `include` and `--remote-config` may read.
    pub root: Option<PathBuf>,
    /// `--allow-exec`: jobs may run commands (exec_prerun/postrun, ioengine=exec, the
    /// client's `--trigger-remote`).
    pub allow_exec: bool,
    /// `--server-max-conns=N`: connections served at once; one more is told why and closed.
    pub max_conns: usize,
    /// `--server-idle-timeout=SECS`: a connection with no run going that sends nothing for
    /// this long is closed.
    pub idle: Duration,
    /// Once a message has begun, the rest of it must come within this time.
    pub read: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            root: None,
            allow_exec: false,
            max_conns: DEFAULT_MAX_CONNS,
            idle: Duration::from_secs(DEFAULT_IDLE_SECS),
            read: Duration::from_secs(READ_SECS),
        }
    }
}

/// Connections served at once unless `--server-max-conns` says otherwise.
pub const DEFAULT_MAX_CONNS: usize = 16;
/// Idle seconds before a connection without a run is closed, unless
/// `--server-idle-timeout` says otherwise.
pub const DEFAULT_IDLE_SECS: u64 = 300;
/// Seconds the rest of a begun message may take.
pub const READ_SECS: u64 = 30;

static POLICY: OnceLock<Policy> = OnceLock::new();

/// The server's policy (the defaults until [`set`]).
pub fn get() -> &'static Policy {
    POLICY.get_or_init(Policy::default)
}

/// Fixes the policy for this process (once, before the first connection).
pub fn set(p: Policy) {
    let _ = POLICY.set(p);
}

/// The server's flags, each `--name=VALUE` (or bare for `--allow-exec`): `Some` when
/// `arg` is one of them, with the policy updated or the error to print.
pub fn flag(p: &mut Policy, arg: &str) -> Option<Result<(), String>> {
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    let need = |form: &str| -> Result<&str, String> {
        value
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("option '--{name}' requires a value (expected --{name}={form})"))
    };
    let number = |form: &str, min: u64| -> Result<u64, String> {
        let v = need(form)?;
        match v.parse::<u64>() {
            Ok(n) if n >= min => Ok(n),
            _ => Err(format!(
                "option '--{name}': bad value '{v}' (expected --{name}={form}, at least {min})"
            )),
        }
    };
    let r = match name {
        "allow-exec" => match value {
            None => {
                p.allow_exec = true;
                Ok(())
            }
            Some(v) => Err(format!(
                "option '--allow-exec' takes no value (got '{v}')"
            )),
        },
        "server-root" => need("DIR").and_then(|v| {
            let canon = std::fs::canonicalize(v).map_err(|e| {
                format!("option '--server-root': bad value '{v}': {e} (expected an existing directory)")
            })?;
            if !canon.is_dir() {
                return Err(format!(
                    "option '--server-root': bad value '{v}': not a directory (expected an existing directory)"
                ));
            }
            p.root = Some(canon);
            Ok(())
        }),
        "server-max-conns" => number("N", 1).map(|n| p.max_conns = n as usize),
        "server-idle-timeout" => {
            number("SECS", 1).map(|n| p.idle = Duration::from_secs(n))
        }
        _ => return None,
    };
    Some(r)
}

impl Policy {
    /// What `include` lines in sent jobs may read.
    pub fn includes(&self) -> Includes {
        match &self.root {
            Some(r) => Includes::Under(r.clone()),
            None => Includes::Refused,
        }
    }

    /// The text of a `--remote-config` file (LOAD_FILE): only under the server root.
    pub fn remote_config(&self, name: &str) -> Result<String, String> {
        let Some(root) = &self.root else {
            return Err(format!(
                "--remote-config={name}: the server reads no files of its own for a client \
                 (its operator allows it under a directory with --server-root=DIR)"
            ));
        };
        let path = jobfile::path_under(root, name).map_err(|e| format!("--remote-config={e}"))?;
        let bytes = read_no_follow(&path).map_err(|e| format!("--remote-config={name}: {e}"))?;
        Ok(crate::osstr::decode_bytes(&bytes))
    }
}

/// Reads a regular file of at most [`crate::fioproto::SERVER_MAX_PAYLOAD`] bytes,
/// refusing a symbolic link in its last component.
fn read_no_follow(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let max = crate::fioproto::SERVER_MAX_PAYLOAD as u64;
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {} MiB", max >> 20),
        ));
    }
    Ok(bytes)
}

/// The flags fio's client sends on (its `FIO_CLIENT_FLAG` options) that iobench's server
/// honours in the run; `output` is the client's business and is dropped before this.
const JOBLINE_FLAGS: &[&str] = &[
    "output-format",
    "minimal",
    "terse-version",
    "append-terse",
    "eta",
    "eta-newline",
    "eta-interval",
    "status-interval",
    "section",
    "parse-only",
    "readonly",
    "max-jobs",
    "warnings-fatal",
    "debug",
    "bandwidth-log",
    "latency-log",
    "alloc-size",
    "profile",
];

/// Checks a client's command line (JOBLINE, without the program name and `--output`):
/// job options and the flags in [`JOBLINE_FLAGS`] pass; any other flag (one that prints
/// help, runs a command, opens a port or names a server-side path) is refused by name
/// rather than dropped, so the client never believes it took effect.
pub fn check_jobline(args: &[String]) -> Result<(), String> {
    for a in args {
        let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
            continue;
        };
        let name = body.split_once('=').map_or(body, |(n, _)| n);
        if name.is_empty()
            || JOBLINE_FLAGS.contains(&name)
            || crate::options::lookup(name).is_some()
        {
            continue;
        }
        return Err(format!(
            "server: option '--{name}' is not taken from a client's command line (the server \
             honours job options and {}; see docs/security.md)",
            JOBLINE_FLAGS
                .iter()
                .map(|f| format!("--{f}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

/// Checks sent jobs against the policy: without `--allow-exec`, no job runs a command.
pub fn check_jobs(p: &Policy, jobs: &[crate::job::Job]) -> Result<(), String> {
    if p.allow_exec {
        return Ok(());
    }
    for j in jobs {
        let what = if j.exec.exec_prerun.is_some() {
            "exec_prerun"
        } else if j.exec.exec_postrun.is_some() {
            "exec_postrun"
        } else if j.exec.engine.name() == "exec" {
            "ioengine=exec"
        } else {
            continue;
        };
        return Err(format!(
            "server: job '{}': {what} runs a command on the server, which a client may not \
             ask for (the server's operator allows it with --allow-exec)",
            j.name
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_flags_parse_and_name_themselves() {
        let mut p = Policy::default();
        assert!(flag(&mut p, "--allow-exec").unwrap().is_ok());
        assert!(p.allow_exec);
        assert!(flag(&mut p, "--server-max-conns=3").unwrap().is_ok());
        assert_eq!(p.max_conns, 3);
        let e = flag(&mut p, "--server-idle-timeout=0")
            .unwrap()
            .unwrap_err();
        assert!(
            e.contains("--server-idle-timeout") && e.contains("'0'"),
            "{e}"
        );
        let e = flag(&mut p, "--server-root=/nonexistent/x")
            .unwrap()
            .unwrap_err();
        assert!(
            e.contains("--server-root") && e.contains("/nonexistent/x"),
            "{e}"
        );
        assert!(flag(&mut p, "--name=x").is_none());
    }

    #[test]
    fn jobline_flags_are_checked() {
        let ok: Vec<String> = [
            "--name=x",
            "--rw=read",
            "--parse-only",
            "--output-format=json",
        ]
        .map(String::from)
        .to_vec();
        assert!(check_jobline(&ok).is_ok());
        for bad in [
            "--showcmd",
            "--metrics=0.0.0.0:1",
            "--trigger=rm x",
            "--aux-path=/",
        ] {
            let e = check_jobline(&[bad.to_string()]).unwrap_err();
            let name = bad.split('=').next().unwrap();
            assert!(e.contains(&format!("'{name}'")), "{e}");
        }
    }
}
