//! `exec_prerun` and `exec_postrun`: shell commands a job runs before its I/O starts and
//! after it ends (to set a device up, drop caches, collect counters), each one's output
//! kept in `<job>.prerun.txt` / `<job>.postrun.txt` in the current directory, as fio names
//! them. Unlike fio, the file gets the output of the whole command, not only of its last
//! part, and a failing prerun is an error of the job rather than a silently skipped job.

use crate::error::RunError;
use crate::job::Job;
use std::process::{Command, Stdio};

/// Which of the two commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Prerun,
    Postrun,
}

impl Hook {
    fn word(self) -> &'static str {
        match self {
            Hook::Prerun => "prerun",
            Hook::Postrun => "postrun",
        }
    }
}

/// Runs the job's command for `hook`, if it has one, with `sh -c`. A prerun that cannot
/// start or exits non-zero stops the job before any I/O; a postrun's failure is reported
/// and the job's results stand.
pub fn run(job: &Job, hook: Hook) -> Result<(), RunError> {
    let cmd = match hook {
        Hook::Prerun => job.exec.exec_prerun.as_deref(),
        Hook::Postrun => job.exec.exec_postrun.as_deref(),
    };
    let Some(cmd) = cmd else {
        return Ok(());
    };
    let file = format!("{}.{}.txt", job.name, hook.word());
    super::info(&format!(
        "{} : Saving output of {} in {file}\n",
        job.name,
        hook.word()
    ));
    let outcome = exec(cmd, &file);
    match (outcome, hook) {
        (Ok(()), _) => Ok(()),
        (Err(message), Hook::Prerun) => Err(RunError::Setup {
            job: job.name.clone(),
            message: format!("exec_prerun '{cmd}' {message}"),
        }),
        (Err(message), Hook::Postrun) => {
            eprintln!(
                "iobench: job '{}': exec_postrun '{cmd}' {message}",
                job.name
            );
            Ok(())
        }
    }
}

fn exec(cmd: &str, file: &str) -> Result<(), String> {
    let out = std::fs::File::create(file).map_err(|e| format!("cannot write {file}: {e}"))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("cannot write {file}: {e}"))?;
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("could not be started: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("failed ({status}); its output is in {file}"))
    }
}
