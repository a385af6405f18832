//! The client's trigger, as fio 3.33's client does it: `--trigger-file=FILE` (when the
//! file appears; it is removed) or `--trigger-timeout=T` (once, T after the client
//! started) sends VTRIGGER with `--trigger-remote=CMD` to every server. Each server stops
//! its jobs and answers with the verify state of every job thread, which is saved here as
//! `<server>-<job>-<index>-verify.state` (the server's address, or `sock`), in
//! `--aux-path` or the current directory; then `--trigger=CMD` runs here, once per
//! answer. A later `verify_state_load` run on that server asks for exactly these files.
//!
//! The remote command is typically a power cut (`echo b > /proc/sysrq-trigger`): a server
//! whose states came back may then vanish without failing the run (fio's client ignores
//! such a server's time-out too). To notice one that is gone without a word, the client
//! asks it for its status every second once its states came; five seconds without an
//! answer and it is let go.

use crate::fioproto::vstate::ThreadState;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The tag of the "still there?" status requests, never one of the status line's.
pub const ALIVE_TAG: u64 = u64::MAX;
/// How often a triggered server is asked whether it is still there.
pub const ALIVE_EVERY: Duration = Duration::from_secs(1);
/// How long a triggered server may stay silent before it is let go (fio's client's
/// command time-out).
pub const SILENCE: Duration = Duration::from_secs(5);

/// When to trigger, and what to run.
pub struct Trigger {
    file: Option<PathBuf>,
    deadline: Option<Instant>,
    /// Sent to the servers (empty: they run nothing).
    pub remote: String,
    /// Run here after each server's states were saved.
    pub local: Option<String>,
}

impl Trigger {
    /// The trigger of a client started at `t0`; `None` when neither a file nor a time was
    /// given (fio then never triggers, whatever the commands).
    pub fn new(a: &super::args::ClientArgs, t0: Instant) -> Option<Trigger> {
        if a.trigger_file.is_none() && a.trigger_timeout_ms.is_none() {
            return None;
        }
        Some(Trigger {
            file: a.trigger_file.as_ref().map(PathBuf::from),
            deadline: a
                .trigger_timeout_ms
                .map(|ms| t0 + Duration::from_millis(ms)),
            remote: a.trigger_remote.clone().unwrap_or_default(),
            local: a.trigger.clone(),
        })
    }

    /// True when the trigger fires now: the file appeared (and is removed), or the time
    /// passed (once).
    pub fn due(&mut self) -> bool {
        let by_file = self
            .file
            .as_ref()
            .is_some_and(|f| std::fs::remove_file(f).is_ok());
        let by_time = self.deadline.is_some_and(|d| Instant::now() >= d);
        if by_time {
            self.deadline = None;
        }
        by_file || by_time
    }
}

/// Where the servers' verify states are saved and read from: `--aux-path`, or here.
pub fn state_dir(a: &super::args::ClientArgs) -> PathBuf {
    a.aux_path
        .as_ref()
        .map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// Saves a server's states as fio's client names them after `prefix` (the server's
/// address, or `sock`), each file synced before the next: the remote command may cut
/// the power next. Returns the files written, or why one could not be.
pub fn save_states(
    dir: &Path,
    prefix: &str,
    states: &[ThreadState],
) -> Result<Vec<PathBuf>, String> {
    use std::io::Write;
    let mut written = Vec::with_capacity(states.len());
    for s in states {
        let path = dir.join(s.file_name(prefix));
        std::fs::File::create(&path)
            .and_then(|mut f| {
                f.write_all(&s.state_file())?;
                f.sync_all()
            })
            .map_err(|e| format!("verify state file {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fioproto::vstate::StateFields;

    #[test]
    fn states_are_saved_under_fios_names() {
        let dir = std::env::temp_dir().join(format!("iobench-trig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = ThreadState::new(&StateFields {
            name: "vs".into(),
            index: 1,
            depth: 2,
            nofiles: 1,
            numberio: 9,
            comps: vec![(0, 8192), (0, 4096)],
        });
        let files = save_states(&dir, "127.0.0.1", &[s]).unwrap();
        assert_eq!(files, vec![dir.join("127.0.0.1-vs-1-verify.state")]);
        let l = crate::verify::state::Loaded::parse(&std::fs::read(&files[0]).unwrap()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((l.numberio, l.depth), (9, 2));
        assert_eq!(l.comps, vec![(0, 8192), (0, 4096)]);
    }

    #[test]
    fn a_timeout_fires_once_a_file_each_time_it_appears() {
        let dir = std::env::temp_dir().join(format!("iobench-trigf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let flag = dir.join("go");
        let a = super::super::args::ClientArgs {
            trigger_file: Some(flag.display().to_string()),
            trigger_timeout_ms: Some(0),
            ..Default::default()
        };
        let mut t = Trigger::new(&a, Instant::now()).unwrap();
        assert!(t.due(), "the time passed");
        assert!(!t.due(), "a time fires once");
        std::fs::write(&flag, b"").unwrap();
        assert!(t.due(), "the file appeared");
        assert!(!flag.exists(), "and was removed");
        assert!(!t.due());
        let _ = std::fs::remove_dir_all(&dir);
        assert!(Trigger::new(&Default::default(), Instant::now()).is_none());
    }
}
