//! A clone's file descriptors while it runs. Normally the runner opens every file before
//! the I/O starts and they stay open to the end. With `openfiles` below the number of
//! files, or with `unlink_each_loop`, the worker instead opens a file when the generator
//! first picks it and closes it when the generator is done with it, once its last I/O in
//! flight has completed, as fio does: that is what keeps the open descriptors within
//! `openfiles`, and what lets a loop start on freshly made files.

use super::files::{self, Kind, Target};
use crate::engine::{Engine, EngineFile};
use crate::job::Job;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// The descriptors of one clone's files, in the generator's file order.
pub struct OpenFiles<'a> {
    job: &'a Job,
    targets: &'a [Target],
    /// The descriptor each file has now (-1 while it is closed).
    fds: Vec<RawFd>,
    /// True when the worker opens and closes files as it goes (else `fds` are the
    /// runner's and never change).
    lazy: bool,
    /// Lazy mode: the files the worker opened, I/Os in flight per file, files whose close
    /// waits for those, and files opened only so a verify pass could read them.
    owned: Vec<Option<File>>,
    busy: Vec<u32>,
    closing: Vec<bool>,
    for_verify: Vec<bool>,
    writable: bool,
    warned_kept: bool,
}

/// A file that could not be opened: fio's job error for it.
pub struct OpenFailure {
    pub errno: i32,
    /// fio's `file:…, func=open(…), error=…` text.
    pub verror: String,
}

/// Whether clone files are opened as the worker goes: only when the job asks for fewer
/// open files than it has, or for fresh files each loop, and only where the runner opens
/// the files at all.
pub fn wants_lazy(job: &Job, nr_files: usize) -> bool {
    let of = job.files.openfiles as usize;
    job.exec.engine.runner_opens_files()
        && ((of > 0 && of < nr_files) || job.files.unlink_each_loop)
}

impl<'a> OpenFiles<'a> {
    /// Over descriptors `fds` the runner opened (all -1 in lazy mode).
    pub fn new(job: &'a Job, targets: &'a [Target], fds: &[RawFd], lazy: bool) -> Self {
        let n = fds.len();
        OpenFiles {
            job,
            targets,
            fds: fds.to_vec(),
            lazy,
            owned: (0..n).map(|_| None).collect(),
            busy: vec![0; n],
            closing: vec![false; n],
            for_verify: vec![false; n],
            writable: files::job_writes(job),
            warned_kept: false,
        }
    }

    /// Before the job's verify pass: drops the open files' cached pages (`invalidate`), so
    /// the pass reads what reached the storage, as fio's, whose verify pass reopens the
    /// files it closed when their writes were done (or syncs and invalidates open ones).
    pub fn invalidate_before_verify(&self) {
        if !self.job.files.invalidate || self.job.exec.engine.flags().diskless {
            return;
        }
        for (fd, t) in self.fds.iter().zip(self.targets) {
            if *fd >= 0 {
                files::invalidate(*fd, t);
            }
        }
    }

    /// Every file's descriptor now (-1 for a closed one).
    pub fn fds(&self) -> &[RawFd] {
        &self.fds
    }

    /// The descriptor of file `f` for its next I/O, opening it first in lazy mode.
    #[inline]
    pub fn for_io<E: Engine>(&mut self, f: usize, engine: &mut E) -> Result<RawFd, OpenFailure> {
        if !self.lazy {
            return Ok(self.fds.get(f).copied().unwrap_or(-1));
        }
        self.open(f, engine)?;
        self.busy[f] += 1;
        Ok(self.fds[f])
    }

    /// Opens file `f` now if the worker opens files as it goes and it is closed (the
    /// generator just picked it).
    pub fn open_now<E: Engine>(&mut self, f: usize, engine: &mut E) -> Result<(), OpenFailure> {
        if self.lazy {
            self.open(f, engine)
        } else {
            Ok(())
        }
    }

    /// An I/O of file `f` completed: a close waiting for it happens now.
    #[inline]
    pub fn io_done<E: Engine>(&mut self, f: usize, engine: &mut E) {
        if self.lazy {
            if let Some(b) = self.busy.get_mut(f) {
                *b = b.saturating_sub(1);
                if *b == 0 && self.closing[f] {
                    self.close_now(f, engine);
                }
            }
        }
    }

    /// The generator closed file `f`: close it once nothing of it is in flight.
    pub fn close<E: Engine>(&mut self, f: usize, engine: &mut E) {
        if !self.lazy || self.fds.get(f).is_none_or(|&fd| fd < 0) {
            return;
        }
        if self.busy[f] > 0 {
            self.closing[f] = true;
        } else {
            self.close_now(f, engine);
        }
    }

    /// Opens every closed file so a verify pass can read them all (lazy mode); they are
    /// closed again by [`OpenFiles::after_verify`].
    pub fn before_verify<E: Engine>(&mut self, engine: &mut E) -> Result<(), OpenFailure> {
        if !self.lazy {
            return Ok(());
        }
        for f in 0..self.fds.len() {
            if self.fds[f] < 0 {
                self.open(f, engine)?;
                self.for_verify[f] = true;
            }
        }
        Ok(())
    }

    /// Closes what [`OpenFiles::before_verify`] opened.
    pub fn after_verify<E: Engine>(&mut self, engine: &mut E) {
        for f in 0..self.fds.len() {
            if std::mem::take(&mut self.for_verify[f]) {
                self.close(f, engine);
            }
        }
    }

    /// `unlink_each_loop`, with nothing in flight: closes every file and deletes the
    /// regular files this run created, so the loop's I/O reopens (and makes) them afresh.
    /// A file the run did not create is kept, with a note once.
    pub fn unlink_all<E: Engine>(&mut self, engine: &mut E) -> io::Result<()> {
        for f in 0..self.fds.len() {
            if self.fds[f] >= 0 {
                self.close_now(f, engine);
            }
        }
        for t in self.targets.iter().filter(|t| t.kind == Kind::Regular) {
            if !t.created {
                if !std::mem::replace(&mut self.warned_kept, true) {
                    eprintln!(
                        "iobench: unlink_each_loop: keeping {}, which this run did not create",
                        t.path
                    );
                }
                continue;
            }
            match std::fs::remove_file(&t.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(crate::error::with_path(&t.path, e))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn open<E: Engine>(&mut self, f: usize, engine: &mut E) -> Result<(), OpenFailure> {
        if self.fds[f] >= 0 {
            // Reopening a file whose close waits for its I/O just calls the close off.
            self.closing[f] = false;
            return Ok(());
        }
        let t = &self.targets[f];
        let failure = |e: io::Error| {
            let errno = crate::error::os_errno(&e).unwrap_or(libc::EIO);
            OpenFailure {
                errno,
                verror: format!(
                    "file:filesetup.c:805, func=open({}), error={}",
                    t.path,
                    crate::job::errors::strerror(errno)
                ),
            }
        };
        let file = files::open_one(self.job, t).map_err(|e| {
            let open = self.fds.iter().filter(|&&fd| fd >= 0).count();
            failure(files::too_many_hint(e, open, self.fds.len()))
        })?;
        engine
            .file_opened(
                f,
                EngineFile {
                    fd: file.as_raw_fd(),
                    size: t.size,
                    writable: self.writable,
                },
            )
            .map_err(failure)?;
        self.fds[f] = file.as_raw_fd();
        self.owned[f] = Some(file);
        self.closing[f] = false;
        Ok(())
    }

    fn close_now<E: Engine>(&mut self, f: usize, engine: &mut E) {
        if self.writable && self.job.exec.sync.fsync_on_close {
            super::syncing::sync_fd(self.fds[f], false);
        }
        engine.file_closing(f);
        self.owned[f] = None;
        self.fds[f] = -1;
        self.closing[f] = false;
    }
}
