//! The generator variant for `read_iolog`: it hands out the log's I/O in order.

use super::{Config, Generator, NextIo, Rngs};
use crate::error::JobError;
use crate::iolog::{IoLog, LogEntry};
use crate::job::Job;

/// A log being replayed.
#[derive(Debug, Clone)]
pub(super) struct Replay {
    entries: Vec<LogEntry>,
    next: usize,
    delay: u64,
}

impl Replay {
    pub(super) fn next(&mut self) -> Option<NextIo> {
        let e = self.entries.get(self.next)?;
        self.next += 1;
        self.delay = e.delay_us;
        Some(NextIo {
            ddir: e.ddir,
            file: e.file,
            offset: e.offset,
            len: e.len,
        })
    }

    pub(super) fn restart(&mut self) {
        self.next = 0;
        self.delay = 0;
    }

    pub(super) fn delay_us(&self) -> u64 {
        self.delay
    }
}

/// The files a replayed log does I/O on, in the order of the generator's file indices:
/// the runner opens these (instead of the job's own files) for a `read_iolog` job.
pub fn replay_files(job: &Job, clone_index: u32) -> Result<Vec<String>, String> {
    let w = &job.workload;
    let Some(path) = &w.replay.read_iolog else {
        return Ok(Vec::new());
    };
    Ok(crate::iolog::read_iolog(path, clone_index, &w.replay)?.files)
}

/// The files a replayed log does I/O on, each with the size its I/O needs (the end of its
/// furthest I/O): the runner creates or extends them to that size, as fio does.
pub fn replay_extents(job: &Job, clone_index: u32) -> Result<Vec<(String, u64)>, String> {
    let w = &job.workload;
    let Some(path) = &w.replay.read_iolog else {
        return Ok(Vec::new());
    };
    let log = crate::iolog::read_iolog(path, clone_index, &w.replay)?;
    let mut out: Vec<(String, u64)> = log.files.into_iter().map(|f| (f, 0)).collect();
    for e in &log.entries {
        if let Some(f) = out.get_mut(e.file) {
            f.1 = f.1.max(e.offset + e.len);
        }
    }
    Ok(out)
}

/// True when a replayed log (any clone's) writes or trims, so its files must be opened for
/// writing whatever `rw` says.
pub fn replay_writes(job: &Job) -> bool {
    let w = &job.workload;
    let Some(list) = &w.replay.read_iolog else {
        return false;
    };
    let n = list.split(':').filter(|s| !s.is_empty()).count() as u32;
    (0..n).any(|c| {
        crate::iolog::read_iolog(list, c, &w.replay)
            .is_ok_and(|log| log.entries.iter().any(|e| e.ddir != crate::job::Ddir::Read))
    })
}

impl Generator {
    /// The longest I/O a replayed log asks for (None when not replaying): the worker's
    /// buffers must hold it, whatever the job's `bs` says (fio sizes them from the log).
    pub fn replay_max_len(&self) -> Option<u64> {
        let r = self.replay.as_ref()?;
        Some(r.entries.iter().map(|e| e.len).max().unwrap_or(0))
    }

    pub(super) fn replaying(
        job: &Job,
        log: IoLog,
        files: &[super::FileExtent],
    ) -> Result<Self, JobError> {
        if files.len() < log.files.len() {
            return Err(JobError::Invalid {
                job: job.name.clone(),
                message: format!(
                    "read_iolog: the log names {} files but {} were opened (see gen::replay_files)",
                    log.files.len(),
                    files.len()
                ),
            });
        }
        // The configuration is unused while replaying; build a minimal one.
        let extents = [super::FileExtent {
            real_size: 0,
            name_hash: 0,
            setup_size: 0,
            device: false,
            planned: 0,
        }];
        let cfg = Config::resolve(job, 0, 1, &extents)?;
        let rng = Rngs::seeded(&cfg, 1);
        Ok(Generator {
            rng,
            files: Vec::new(),
            io_issues: [0; 3],
            issue_bytes: [0; 3],
            pass_bytes: 0,
            pass_ios: 0,
            passes_left: 0,
            in_pass: false,
            started: false,
            passes_begun: 0,
            number_ios: 0,
            rwmix_ddir: crate::job::Ddir::Read,
            rwmix_issues: 0,
            seq_nr_left: 1,
            zone_bytes: 0,
            next_file: 0,
            service_file: None,
            service_left: 0,
            nr_done_files: 0,
            nr_open: 0,
            file_events: Default::default(),
            sync_at_new_loop: false,
            loop_sync_file: None,
            loop_no: 0,
            replay: Some(Replay {
                entries: log.entries,
                next: 0,
                delay: 0,
            }),
            cfg,
        })
    }
}
