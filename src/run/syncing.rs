//! Syncing written data as fio 3.33 does: `fsync=N`, `fdatasync=N` and
//! `sync_file_range=flags:N` after every N writes, `end_fsync` when the job is done,
//! `fsync_on_close` when a file is closed. (`sync=` and `direct`/`buffered` are open flags,
//! applied by the runner when it opens files.)
//!
//! fio decides before picking each next I/O whether a sync is due: the job writes, its
//! write count is a nonzero multiple of N, and the last operation was not already a sync.
//! [`Syncer::due`] answers that with integer arithmetic; the sync itself goes through the
//! engine once the queue drains (an `Op::Sync` unit, see `Engine::sync`), as fio's libaio
//! and psync engines do it, so nbd sends NBD_CMD_FLUSH and io_uring its fsync opcode.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use crate::defs::Ddir;
use crate::engine::{Engine, IoUnit, Op, SyncKind};
use crate::job::Job;
use std::io;
use std::os::fd::RawFd;

/// A job clone's sync state.
#[derive(Debug, Clone)]
pub struct Syncer {
    writes_job: bool,
    fsync_nr: u64,
    fdatasync_nr: u64,
    range_nr: u64,
    range_flags: u32,
    writes: u64,
    last_was_sync: bool,
    /// The file of the last write (fio logs a sync at it).
    pub last_file: usize,
    /// The offset of the last write.
    pub last_offset: u64,
    /// The offset of the last I/O of any direction: fio logs a periodic sync there (its
    /// sync reuses that I/O's unit, offset and all).
    pub last_io_offset: u64,
    first_write: u64,
    last_write_end: u64,
    /// fsync every written file when the job ends.
    pub end_fsync: bool,
    /// fsync each file as it is closed.
    pub fsync_on_close: bool,
    /// syncfs the written files' file systems when the job ends (instead of fsyncs).
    pub end_syncfs: bool,
    /// The loop whose end was seen last (see [`Syncer::loop_ended`]).
    loop_seen: u32,
    /// A loop ended and its end fsync waits for the queue to drain.
    end_sync_due: bool,
}

impl Syncer {
    /// The sync state of a clone of `job`, from its typed sync options.
    pub fn new(job: &Job) -> Self {
        let s = &job.exec.sync;
        Syncer {
            writes_job: job.workload.pattern.writes(),
            fsync_nr: s.fsync_blocks,
            fdatasync_nr: s.fdatasync_blocks,
            range_nr: s.range_blocks,
            range_flags: s.range_flags,
            writes: 0,
            last_was_sync: false,
            last_file: 0,
            last_offset: 0,
            last_io_offset: 0,
            first_write: u64::MAX,
            last_write_end: 0,
            end_fsync: s.end_fsync,
            fsync_on_close: s.fsync_on_close,
            end_syncfs: s.end_syncfs,
            loop_seen: 0,
            end_sync_due: false,
        }
    }

    /// Told the generator's loop number as a fresh I/O is made: when a new loop begins,
    /// the last one gets its end fsync (fio's do_io ends every loop with it, before the
    /// loop's verify pass) if the job writes with `end_fsync` or `fsync_on_close` and its
    /// last operation was not a sync. True when that sync is now due.
    pub fn loop_ended(&mut self, loop_no: u32) -> bool {
        if loop_no != self.loop_seen {
            self.loop_seen = loop_no;
            self.end_sync_due = (self.end_fsync || self.end_syncfs || self.fsync_on_close)
                && self.writes_job
                && !self.last_was_sync;
        }
        self.end_sync_due
    }

    /// True while a loop's end fsync waits (no I/O is issued before it).
    #[inline]
    pub fn end_sync_waits(&self) -> bool {
        self.end_sync_due
    }

    /// Takes the waiting end-of-loop fsync, if any.
    pub fn take_end_sync(&mut self) -> bool {
        std::mem::take(&mut self.end_sync_due)
    }

    /// True when the last operation was a sync (fio then skips the end-of-job sync).
    pub fn last_was_sync(&self) -> bool {
        self.last_was_sync
    }

    /// True when any periodic sync is asked for.
    pub fn periodic(&self) -> bool {
        self.fsync_nr + self.fdatasync_nr + self.range_nr > 0
    }

    /// Accounts one issued I/O. (That the last operation is no longer a sync is learnt
    /// at its completion, see [`Syncer::io_completed`].)
    #[inline]
    pub fn issued(&mut self, ddir: Ddir, file: usize, offset: u64, len: u64) {
        self.last_io_offset = offset;
        if ddir == Ddir::Write {
            self.writes += 1;
            self.last_file = file;
            self.last_offset = offset;
            self.first_write = self.first_write.min(offset);
            self.last_write_end = self.last_write_end.max(offset + len);
        }
    }

    /// An I/O that is not a sync completed: the last operation is no longer a sync. fio
    /// notes this at completion, not at issue, so on an asynchronous engine a sync stays
    /// due (and is queued again at each free slot) until one of them completes, and a
    /// write that completes after it makes it due again while the write count is still a
    /// multiple of N.
    #[inline]
    pub fn io_completed(&mut self) {
        self.last_was_sync = false;
    }

    /// A periodic sync was queued beside I/Os in flight (an engine that takes syncs
    /// asynchronously): the range the next sync_file_range covers starts afresh. Whether
    /// it is the last operation is learnt at its completion ([`Syncer::sync_completed`]).
    pub fn sync_queued(&mut self) {
        self.first_write = u64::MAX;
        self.last_write_end = 0;
    }

    /// A queued periodic sync completed: no sync is due until another I/O completes.
    pub fn sync_completed(&mut self) {
        self.last_was_sync = true;
    }

    /// The sync due before the next I/O, if any (fio's check in get_rw_ddir).
    #[inline]
    pub fn due(&self) -> Option<SyncKind> {
        self.due_after(self.last_was_sync)
    }

    #[inline]
    fn due_after(&self, last_was_sync: bool) -> Option<SyncKind> {
        if last_was_sync || !self.writes_job || self.writes == 0 {
            return None;
        }
        let hit = |n: u64| n > 0 && self.writes % n == 0;
        if hit(self.fsync_nr) {
            Some(SyncKind::Fsync)
        } else if hit(self.fdatasync_nr) {
            Some(SyncKind::Fdatasync)
        } else if hit(self.range_nr) {
            Some(SyncKind::Range(self.range_flags))
        } else {
            None
        }
    }

    /// The sync due when a new loop starts: fio forgets there that the last operation
    /// was a sync, so one is due whenever the write count is a multiple of N.
    #[inline]
    pub fn due_at_new_loop(&self) -> Option<SyncKind> {
        self.due_after(false)
    }

    /// A new loop started: the last operation no longer counts as a sync.
    pub fn new_loop(&mut self) {
        self.last_was_sync = false;
    }

    /// Performs the sync through the engine (as fio issues a sync I/O unit), on file
    /// `file` (descriptor `fd`, -1 when the engine opens its own), carried by `unit`;
    /// returns 0 or a negative errno. Nothing else may be in flight.
    pub fn sync<E: Engine>(
        &mut self,
        engine: &mut E,
        unit: &mut IoUnit,
        file: usize,
        fd: RawFd,
        kind: SyncKind,
    ) -> io::Result<i64> {
        if kind == SyncKind::OnClose {
            if self.last_was_sync {
                return Ok(0);
            }
            return issue(engine, unit, file, fd, SyncKind::Fsync, 0, 0);
        }
        self.last_was_sync = true;
        let (first, end) = (self.first_write, self.last_write_end);
        self.first_write = u64::MAX;
        self.last_write_end = 0;
        match kind {
            SyncKind::Fsync | SyncKind::OnClose => {
                issue(engine, unit, file, fd, SyncKind::Fsync, 0, 0)
            }
            SyncKind::Fdatasync => issue(engine, unit, file, fd, SyncKind::Fdatasync, 0, 0),
            SyncKind::Range(_) if first >= end => Ok(0),
            SyncKind::Range(flags) => issue(
                engine,
                unit,
                file,
                fd,
                SyncKind::Range(flags),
                first,
                usize::try_from(end - first).unwrap_or(usize::MAX),
            ),
        }
    }
}

/// Hands one sync to the engine in `unit` and waits for it (see `Engine::sync`): 0 or a
/// negative errno; an error when the engine itself failed.
pub fn issue<E: Engine>(
    engine: &mut E,
    unit: &mut IoUnit,
    file: usize,
    fd: RawFd,
    op: SyncKind,
    offset: u64,
    len: usize,
) -> io::Result<i64> {
    unit.op = Op::Sync { kind: op };
    unit.file = u32::try_from(file).expect("file index fits the unit's u32");
    unit.fd = fd;
    unit.offset = offset;
    unit.len = len;
    unit.result = 0;
    engine.sync(unit)
}

/// Records a sync's latency as fio does: every periodic or replayed kind adds to the sync
/// latencies, only fsync counts in the sync `total_ios`; a sync at close adds nothing.
pub fn account(stats: &mut crate::stats::JobStats, kind: SyncKind, lat_ns: u64) {
    if kind == SyncKind::OnClose {
        return;
    }
    let before = stats.sync_ios;
    stats.record_sync(lat_ns);
    // fio 3.33 counts an fdatasync or a sync_file_range one slot past its per-direction
    // issue counts, which lands in the short counts that follow them in memory: reads'
    // for fdatasync, writes' for sync_file_range. Its "short=" and `short_ios` show
    // them, so iobench's do too.
    match kind {
        SyncKind::Fsync | SyncKind::OnClose => {}
        SyncKind::Fdatasync => {
            stats.sync_ios = before;
            stats.dir[crate::defs::Ddir::Read as usize].short += 1;
        }
        SyncKind::Range(_) => {
            stats.sync_ios = before;
            stats.dir[crate::defs::Ddir::Write as usize].short += 1;
        }
    }
}

fn neg_errno(r: i64) -> i64 {
    if r < 0 {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    } else {
        r
    }
}

/// fsync (or fdatasync) `fd`; 0 or a negative errno. Descriptors below 0 (no file, as with
/// the null engine) succeed at once.
pub fn sync_fd(fd: RawFd, data_only: bool) -> i64 {
    if fd < 0 {
        return 0;
    }
    // SAFETY: plain system calls on a descriptor the caller keeps open.
    let r = unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    };
    neg_errno(r as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syncer(args: &[(&str, &str)]) -> Syncer {
        let raw = crate::defs::raw::RawJob::from_pairs("s", args).expect("known options");
        Syncer::new(&crate::job::resolve(&raw).expect("job"))
    }

    #[test]
    fn fsync_every_n_writes_once() {
        let mut s = syncer(&[("rw", "write"), ("fsync", "2")]);
        assert_eq!(s.due(), None);
        s.issued(Ddir::Write, 0, 0, 4096);
        s.io_completed();
        assert_eq!(s.due(), None);
        s.issued(Ddir::Write, 0, 4096, 4096);
        s.io_completed();
        assert_eq!(s.due(), Some(SyncKind::Fsync));
        let mut null = crate::engine::null::Null::default();
        let mut unit = IoUnit::new(0, std::ptr::null_mut());
        let r = s.sync(&mut null, &mut unit, 0, -1, SyncKind::Fsync);
        assert_eq!(r.expect("null syncs"), 0);
        assert_eq!(
            unit.op,
            Op::Sync {
                kind: SyncKind::Fsync
            }
        );
        assert_eq!(s.due(), None);
        assert_eq!(s.last_offset, 4096);
    }

    #[test]
    fn reads_do_not_sync_and_range_flags_parse() {
        let s = syncer(&[("rw", "read"), ("fsync", "1")]);
        assert!(s.periodic());
        assert_eq!(s.due(), None);
        let mut s = syncer(&[("rw", "write"), ("sync_file_range", "write:4")]);
        for i in 0..4 {
            s.issued(Ddir::Write, 0, i * 4096, 4096);
        }
        assert_eq!(s.due(), Some(SyncKind::Range(libc::SYNC_FILE_RANGE_WRITE)));
        let s = syncer(&[("rw", "write"), ("fdatasync", "1")]);
        assert_eq!(s.due(), None);
    }
}
