//! The generator variant for `read_iolog`: it hands out the log's I/O in order.

use super::{Config, Generator, NextIo, Rngs};
use crate::engine::SyncKind;
use crate::error::JobError;
use crate::iolog::{Action, IoLog, LogEntry, LogReader};
use crate::job::Job;

/// Where the entries come from: loaded up front, or streamed from the log file as the
/// replay goes (`read_iolog_chunked`).
#[derive(Debug, Clone)]
enum Source {
    Loaded { entries: Vec<LogEntry>, next: usize },
    Stream(Box<LogReader>),
}

/// A log being replayed.
#[derive(Debug, Clone)]
pub(super) struct Replay {
    source: Source,
    /// An entry read ahead by [`Generator::replay_sync_due`] that was not a sync.
    peeked: Option<LogEntry>,
    delay: u64,
    max_len: u64,
    /// The log writes (fio then counts the job as writing, whatever `rw` says).
    writes: bool,
    /// `fsync_on_close` and the log writes: its `close` entries fsync the file.
    sync_on_close: bool,
}

impl Replay {
    /// The next entry of any kind.
    fn pull(&mut self) -> Option<LogEntry> {
        if let Some(e) = self.peeked.take() {
            return Some(e);
        }
        match &mut self.source {
            Source::Loaded { entries, next } => {
                let e = entries.get(*next).copied()?;
                *next += 1;
                Some(e)
            }
            // The log was checked through before the run; an error now means it changed.
            Source::Stream(r) => r.next_entry().unwrap_or_else(|m| {
                eprintln!("iobench: read_iolog: {m}");
                None
            }),
        }
    }

    /// The next read, write or trim (a sync not taken by `sync_due` is passed over).
    pub(super) fn next(&mut self) -> Option<NextIo> {
        loop {
            let e = self.pull()?;
            if let Action::Io(ddir) = e.action {
                self.delay = e.delay_us;
                return Some(NextIo {
                    ddir,
                    file: e.file,
                    offset: e.offset,
                    len: e.len,
                });
            }
        }
    }

    /// The sync that comes next in the log, taken; None when an I/O (or nothing) does.
    /// A `close` is passed over, or is a sync at close with `fsync_on_close`.
    fn sync_due(&mut self) -> Option<(SyncKind, usize)> {
        loop {
            let e = self.pull()?;
            match e.action {
                Action::Sync(kind) => return Some((kind, e.file)),
                Action::Close if self.sync_on_close => return Some((SyncKind::OnClose, e.file)),
                Action::Close => {}
                Action::Io(_) => {
                    self.peeked = Some(e);
                    return None;
                }
            }
        }
    }

    pub(super) fn restart(&mut self) {
        match &mut self.source {
            Source::Loaded { next, .. } => *next = 0,
            Source::Stream(r) => r.rewind(),
        }
        self.peeked = None;
        self.delay = 0;
    }

    pub(super) fn delay_us(&self) -> u64 {
        self.delay
    }
}

/// The files a replayed log does I/O on, each with the size its I/O needs (the end of its
/// furthest I/O): the runner creates or extends them to that size, as fio does.
pub fn replay_extents(job: &Job, clone_index: u32) -> Result<Vec<(String, u64)>, String> {
    let w = &job.workload;
    let Some(path) = &w.replay.read_iolog else {
        return Ok(Vec::new());
    };
    let log = crate::iolog::summarize_iolog(path, clone_index, &w.replay)?;
    Ok(log.files.into_iter().zip(log.extents).collect())
}

/// True when a replayed log (any clone's) writes or trims, so its files must be opened for
/// writing whatever `rw` says.
pub fn replay_writes(job: &Job) -> bool {
    let w = &job.workload;
    let Some(list) = &w.replay.read_iolog else {
        return false;
    };
    let n = list.split(':').filter(|s| !s.is_empty()).count() as u32;
    (0..n).any(|c| crate::iolog::summarize_iolog(list, c, &w.replay).is_ok_and(|log| log.writes))
}

impl Generator {
    /// The longest I/O a replayed log asks for (None when not replaying): the worker's
    /// buffers must hold it, whatever the job's `bs` says (fio sizes them from the log).
    pub fn replay_max_len(&self) -> Option<u64> {
        Some(self.replay.as_ref()?.max_len)
    }

    /// For a replayed log: whether it writes (None when not replaying). fio takes the
    /// job's direction from the log, so this decides end_fsync and fsync_on_close.
    pub fn replay_writes(&self) -> Option<bool> {
        Some(self.replay.as_ref()?.writes)
    }

    /// For a replayed log: the sync (kind and file index) the log asks for before its next
    /// I/O, taken from the log, or None. The worker asks before fetching each fresh I/O
    /// and, on a sync, drains what is in flight and syncs that file, as fio does.
    pub fn replay_sync_due(&mut self) -> Option<(SyncKind, usize)> {
        self.replay.as_mut()?.sync_due()
    }

    pub(super) fn replaying(
        job: &Job,
        clone_index: u32,
        log: IoLog,
        files: &[super::FileExtent],
    ) -> Result<Self, JobError> {
        if files.len() < log.files.len() {
            return Err(JobError::Invalid {
                job: job.name.clone(),
                message: format!(
                    "read_iolog: the log names {} files but {} were opened (see gen::replay_extents)",
                    log.files.len(),
                    files.len()
                ),
            });
        }
        let r = &job.workload.replay;
        if log.trims_dropped > 0 {
            eprintln!(
                "iobench: {}: read_iolog: {} trim entries not replayed (fio 3.33 rejects trims in an iolog: \"bad ddir\")",
                job.name, log.trims_dropped
            );
        }
        let source = match &r.read_iolog {
            Some(list) if r.chunked => Source::Stream(Box::new(
                LogReader::open(list, clone_index, r).map_err(|e| JobError::Invalid {
                    job: job.name.clone(),
                    message: format!("read_iolog: {e}"),
                })?,
            )),
            _ => Source::Loaded {
                entries: log.entries,
                next: 0,
            },
        };
        // The configuration is unused while replaying; build a minimal one.
        let extents = [super::FileExtent {
            real_size: 0,
            name_hash: 0,
            setup_size: 0,
            device: false,
            planned: 0,
            zones: None,
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
            rwmix_ddir: crate::defs::Ddir::Read,
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
            last_tried_offset: 0,
            loop_no: 0,
            plain: None,
            replay: Some(Replay {
                source,
                peeked: None,
                delay: 0,
                max_len: log.max_len,
                writes: log.writes,
                sync_on_close: log.writes && job.exec.sync.fsync_on_close,
            }),
            zbd: None,
            zbd_notes: Vec::new(),
            spr_done: false,
            cfg,
        })
    }
}
