//! `zonemode=zbd` on a regular file (or a block device without zones): fio 3.33's
//! emulation of a zoned block device. The file is split into `zonesize` zones, each
//! sequential-write-required with its write pointer in memory, all empty when the run
//! starts. Writes go to a zone's write pointer (a random write picks the zone its random
//! offset falls in, or one of the open zones when `max_open_zones` are open already); a
//! full zone is reset (its write pointer goes back to its start: nothing touches the file)
//! before it is written again; reads stay below the write pointer unless `read_beyond_wp`.
//!
//! The zones of one file are shared by every job of the run that names the file, as fio
//! shares them: a [`ZoneTable`] lives in an anonymous shared mapping made in the main
//! process before the workers fork ([`attach`]), and one lock per table keeps a clone's
//! pick of a zone and its move of the write pointer together, as fio's zone mutexes do.
//!
//! The generator calls in here only when the job has `zonemode=zbd` (an `Option` it
//! tests once per I/O); other jobs never reach this module.
//!
//! Differences from fio, by design: the write pointer moves and a zone that becomes full
//! closes when the generator hands the write out, where fio closes it when the write
//! completes and waits for its in-flight writes before it needs the zone (its
//! `io_u_quiesce`): the result is the same once those writes are done.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use super::{FileExtent, FileState, Generator};
use crate::defs::{Ddir, Pattern};
use crate::error::JobError;
use crate::job::workload::ZbdOptions;
use crate::job::Job;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// fio's limit on open zones (`ZBD_MAX_OPEN_ZONES`), also the bound of `max_open_zones`.
pub const MAX_OPEN_ZONES: usize = 4096;

/// The part of a table every worker shares: counters and the list of open zones.
#[repr(C)]
struct SharedHeader {
    /// 0 free, 1 held (see [`ZoneTable::lock`]).
    lock: AtomicU32,
    /// How many entries of `open_zones` are in use.
    num_open: AtomicU32,
    /// Writes left until `zone_reset_frequency` resets a zone (fio's `write_cnt`).
    write_cnt: AtomicU32,
    _pad: u32,
    /// Bytes below the write pointers (fio's `wp_sectors_with_data`, in bytes).
    with_data: AtomicU64,
    /// The open zones' numbers, oldest first.
    open_zones: [AtomicU32; MAX_OPEN_ZONES],
}

/// One zone's changing state.
#[repr(C)]
struct SharedZone {
    wp: AtomicU64,
    /// 1 while the zone is in `open_zones`.
    open: AtomicU32,
    /// 1 when `zone_reset_frequency` asked for a reset before the next write.
    reset: AtomicU32,
}

/// The zones of one file, in memory shared by every worker of the run.
pub struct ZoneTable {
    path: String,
    header: *const SharedHeader,
    /// `nr_zones + 1` zones: the last one is fio's sentinel (start at the end, never
    /// written, write pointer 0).
    zones: *const SharedZone,
    map_len: usize,
    nr_zones: u32,
    zone_size: u64,
    capacity: u64,
    max_open_zones: u32,
}

// SAFETY: every field the workers change is an atomic in the shared mapping; the others
// are set once before the table is shared. The mapping lives as long as the table.
unsafe impl Send for ZoneTable {}
// SAFETY: as above; all shared access goes through atomics.
unsafe impl Sync for ZoneTable {}

impl std::fmt::Debug for ZoneTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZoneTable")
            .field("path", &self.path)
            .field("nr_zones", &self.nr_zones)
            .field("zone_size", &self.zone_size)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl Drop for ZoneTable {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `create` with this length and nothing refers
        // to it once the last handle is gone.
        unsafe {
            libc::munmap(self.header as *mut libc::c_void, self.map_len);
        }
    }
}

impl ZoneTable {
    /// The zones of `path`, `real_size` bytes long, all empty. Refused as fio refuses it:
    /// a file smaller than one zone.
    pub fn create(path: &str, real_size: u64, o: &ZbdOptions) -> Result<Arc<ZoneTable>, String> {
        if real_size < o.zone_size {
            return Err(format!(
                "{path}: file/device size {real_size} is smaller than zone size {} \
                 (zonemode=zbd needs at least one zone)",
                o.zone_size
            ));
        }
        let nr = real_size.div_ceil(o.zone_size);
        let nr_zones = u32::try_from(nr)
            .map_err(|_| format!("{path}: {nr} zones of {} bytes are too many", o.zone_size))?;
        let header_len = std::mem::size_of::<SharedHeader>();
        let zones_len = (nr_zones as usize + 1) * std::mem::size_of::<SharedZone>();
        let map_len = header_len + zones_len;
        // Zeroed, which is a valid value of every atomic in it; forked workers inherit it
        // shared. Alignment: the header's size is a multiple of 8 and the mapping is
        // page-aligned.
        let base = crate::shm::anonymous(map_len, crate::shm::Sharing::Shared, false)
            .map_err(|e| format!("{path}: zone table of {map_len} bytes: {e}"))?;
        let header = base as *const SharedHeader;
        // SAFETY: the zones start right after the header, inside the mapping.
        let zones = unsafe { (base as *const u8).add(header_len) } as *const SharedZone;
        let t = ZoneTable {
            path: path.to_string(),
            header,
            zones,
            map_len,
            nr_zones,
            zone_size: o.zone_size,
            capacity: o.zone_capacity,
            max_open_zones: o.max_open_zones,
        };
        for z in 0..nr_zones {
            t.zone(z).wp.store(t.start(z), Ordering::Relaxed);
        }
        Ok(Arc::new(t))
    }

    fn head(&self) -> &SharedHeader {
        // SAFETY: `header` points at the live mapping (see `create`).
        unsafe { &*self.header }
    }

    fn zone(&self, z: u32) -> &SharedZone {
        debug_assert!(z <= self.nr_zones);
        // SAFETY: `z` is at most `nr_zones`, and the mapping holds `nr_zones + 1` zones.
        unsafe { &*self.zones.add(z as usize) }
    }

    /// Takes the table's lock: held while a clone picks a zone for an I/O and moves its
    /// write pointer. Held for a few hundred nanoseconds, never across a system call, so a
    /// spin (yielding after a while) is enough.
    fn lock(&self) -> Locked<'_> {
        let lock = &self.head().lock;
        let mut spins = 0u32;
        while lock
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Locked(self)
    }

    /// fio's `zbd_offset_to_zone_idx`: the zone of `offset` (the sentinel past the end).
    fn zone_of(&self, offset: u64) -> u32 {
        // The quotient is at most nr_zones here, a u32.
        u32::try_from(offset / self.zone_size).map_or(self.nr_zones, |z| z.min(self.nr_zones))
    }

    fn start(&self, z: u32) -> u64 {
        z as u64 * self.zone_size
    }

    /// Where zone `z` ends (the next zone's start).
    fn end(&self, z: u32) -> u64 {
        self.start(z + 1)
    }

    /// Where the writable part of zone `z` ends (the sentinel has none).
    fn capacity_end(&self, z: u32) -> u64 {
        if z < self.nr_zones {
            self.start(z) + self.capacity
        } else {
            self.start(z)
        }
    }

    fn wp(&self, z: u32) -> u64 {
        self.zone(z).wp.load(Ordering::Relaxed)
    }
}

/// A held table lock; released when dropped.
struct Locked<'a>(&'a ZoneTable);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.0.head().lock.store(0, Ordering::Release);
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = ZoneTable;
    fn deref(&self) -> &ZoneTable {
        self.0
    }
}

impl Locked<'_> {
    fn num_open(&self) -> u32 {
        self.head().num_open.load(Ordering::Relaxed)
    }

    fn open_zone_at(&self, i: u32) -> u32 {
        self.head().open_zones[i as usize].load(Ordering::Relaxed)
    }

    fn is_open(&self, z: u32) -> bool {
        self.zone(z).open.load(Ordering::Relaxed) != 0
    }

    /// fio's `zbd_zone_full`: fewer than `required` bytes left below the capacity.
    fn full(&self, z: u32, required: u64) -> bool {
        self.wp(z) + required > self.capacity_end(z)
    }

    fn with_data(&self) -> u64 {
        self.head().with_data.load(Ordering::Relaxed)
    }

    fn set_with_data(&self, v: u64) {
        self.head().with_data.store(v, Ordering::Relaxed);
    }

    /// fio's `_zbd_reset_write_cnt`: one reset every 1/frequency writes.
    fn reset_write_cnt(&self, frequency: f64) {
        let n = if frequency != 0.0 {
            // Truncated as fio converts it; at most u32::MAX.
            #[allow(clippy::cast_possible_truncation)]
            {
                (1.0 / frequency).min(u32::MAX as f64) as u32
            }
        } else {
            u32::MAX
        };
        self.head().write_cnt.store(n, Ordering::Relaxed);
    }

    /// fio's `zbd_dec_and_reset_write_cnt`: true when this write is the one to reset.
    fn write_cnt_due(&self, frequency: f64) -> bool {
        let c = &self.head().write_cnt;
        let left = match c.load(Ordering::Relaxed) {
            0 => 0,
            n => n - 1,
        };
        c.store(left, Ordering::Relaxed);
        if left == 0 {
            self.reset_write_cnt(frequency);
        }
        left == 0
    }
}

/// One clone's zone state: its options, each file's table and zone range, and the zones
/// it has open (fio's per-thread `num_open_zones`).
#[derive(Debug, Clone)]
pub(super) struct ZbdState {
    opts: ZbdOptions,
    /// The job writes (fio's `td_write`): only then does a file reset count the data.
    writes: bool,
    files: Vec<ZbdFile>,
    /// Zones this clone opened and has not closed (fio's `td->num_open_zones`).
    td_open: u32,
    report: Arc<ZbdReport>,
}

/// One file's table and the zones of this clone's region in it.
#[derive(Debug, Clone)]
struct ZbdFile {
    table: Arc<ZoneTable>,
    min_zone: u32,
    max_zone: u32,
}

/// What a clone's zone handling reports to the runner after the run: the zone resets
/// (fio's `; N zone resets` on the write line) and an error that ended the job.
#[derive(Debug, Default)]
pub struct ZbdReport {
    resets: AtomicU64,
    error: Mutex<Option<(i32, String)>>,
}

impl ZbdReport {
    /// Zones this clone reset.
    pub fn resets(&self) -> u64 {
        self.resets.load(Ordering::Relaxed)
    }

    /// The errno and text of the zone error that ended the clone's I/O, if one did.
    pub fn error(&self) -> Option<(i32, String)> {
        self.error.lock().ok().and_then(|e| e.clone())
    }

    fn fail(&self, errno: i32, text: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert((errno, text));
        }
    }
}

/// The zone tables of the run, one per file name, made in the main process before the
/// workers fork (see [`attach`]).
static TABLES: Mutex<Vec<Arc<ZoneTable>>> = Mutex::new(Vec::new());

/// Forgets the tables of an earlier run in this process (a sweep's points): each run's
/// files start with empty zones, as each fio run's do.
pub fn clear_tables() {
    if let Ok(mut t) = TABLES.lock() {
        t.clear();
    }
}

/// Makes (or finds, when an earlier job of the run named the same file) the zone table of
/// each of a `zonemode=zbd` job's files, `(path, size)`, and returns them in file order.
/// Refused as fio refuses it when it sets the files up: a file smaller than a zone, jobs
/// sharing a file with another `zonesize` or `max_open_zones`, `job_max_open_zones`
/// without a limit for the whole file. Call in the main process, before the clone forks.
pub fn attach(job: &Job, files: &[(&str, u64)]) -> Result<Vec<Arc<ZoneTable>>, String> {
    let Some(o) = &job.workload.zbd else {
        return Ok(Vec::new());
    };
    let mut tables = TABLES
        .lock()
        .map_err(|_| "zone tables: lock poisoned".to_string())?;
    let mut out = Vec::with_capacity(files.len());
    for &(path, size) in files {
        let t = match tables.iter().find(|t| t.path == path) {
            Some(t) => t.clone(),
            None => {
                let t = ZoneTable::create(path, size, o)?;
                tables.push(t.clone());
                t
            }
        };
        check_shared(&t, o)?;
        out.push(t);
    }
    Ok(out)
}

/// The zone table [`attach`] made for `path` in this run, if any.
pub fn table_of(path: &str) -> Option<Arc<ZoneTable>> {
    TABLES.lock().ok()?.iter().find(|t| t.path == path).cloned()
}

/// fio's checks of a job's options against the zones of a file it shares.
fn check_shared(t: &ZoneTable, o: &ZbdOptions) -> Result<(), String> {
    if o.zone_size != t.zone_size {
        return Err(format!(
            "{}: zonesize {} does not match the zone size {} an earlier job set for this file",
            t.path, o.zone_size, t.zone_size
        ));
    }
    if o.max_open_zones > 0 && o.max_open_zones != t.max_open_zones {
        return Err(format!(
            "{}: max_open_zones={} differs from the {} an earlier job set for this file \
             (fio: different 'max_open_zones' values)",
            t.path, o.max_open_zones, t.max_open_zones
        ));
    }
    if o.job_max_open_zones > 0 && t.max_open_zones == 0 {
        return Err(format!(
            "{}: job_max_open_zones needs max_open_zones (a limit for the whole file) too",
            t.path
        ));
    }
    Ok(())
}

impl ZbdState {
    /// The zone state of a clone over `files`, with fio's alignment of each write job's
    /// region to whole zones (`zbd_zone_align_file_sizes`): the start rounds up to a zone,
    /// the end down. Returns the notes fio prints about it. A file without a table from
    /// [`attach`] (a generator built outside a run) gets a table of its own.
    pub(super) fn setup(
        job: &Job,
        o: &ZbdOptions,
        extents: &[FileExtent],
        files: &mut [FileState],
    ) -> Result<(ZbdState, Vec<String>), JobError> {
        let invalid = |message: String| JobError::Invalid {
            job: job.name.clone(),
            message,
        };
        let mut zfiles = Vec::with_capacity(files.len());
        let mut notes = Vec::new();
        // fio leaves a sequential read job's region as it is (`td_ddir == TD_DDIR_READ`).
        let align = job.workload.pattern != Pattern::Read;
        for (i, (e, f)) in extents.iter().zip(files.iter_mut()).enumerate() {
            let table = match &e.zones {
                Some(t) => t.clone(),
                None => ZoneTable::create(&format!("file {i}"), f.real_size, o).map_err(invalid)?,
            };
            check_shared(&table, o).map_err(invalid)?;
            let name = table.path.clone();
            if f.file_offset < f.real_size && f.io_size != 0 && align {
                let z = table.zone_of(f.file_offset);
                if f.file_offset != table.start(z) {
                    let new_offset = table.end(z);
                    if new_offset >= f.file_offset + f.io_size {
                        return Err(invalid(format!(
                            "{name}: io_size must be at least one zone"
                        )));
                    }
                    notes.push(format!(
                        "{name}: rounded up offset from {} to {new_offset}\n",
                        f.file_offset
                    ));
                    f.io_size -= new_offset - f.file_offset;
                    f.file_offset = new_offset;
                    f.last_pos = [new_offset; 3];
                }
                let new_end = table.start(table.zone_of(f.file_offset + f.io_size));
                if f.file_offset + f.io_size != new_end {
                    if new_end <= f.file_offset {
                        return Err(invalid(format!(
                            "{name}: io_size must be at least one zone"
                        )));
                    }
                    notes.push(format!(
                        "{name}: rounded down io_size from {} to {}\n",
                        f.io_size,
                        new_end - f.file_offset
                    ));
                    f.io_size = new_end - f.file_offset;
                }
            }
            zfiles.push(ZbdFile {
                min_zone: table.zone_of(f.file_offset),
                max_zone: table.zone_of(f.file_offset + f.io_size),
                table,
            });
        }
        Ok((
            ZbdState {
                opts: *o,
                writes: job.workload.pattern.writes(),
                files: zfiles,
                td_open: 0,
                report: Arc::new(ZbdReport::default()),
            },
            notes,
        ))
    }

    /// The handle the runner reads the clone's resets and zone error from after the run.
    pub(super) fn report(&self) -> Arc<ZbdReport> {
        self.report.clone()
    }

    /// Ends the clone's I/O with a zone error, as fio's `td_verror` does.
    fn fail(&self, errno: i32, text: String) {
        crate::dprint!(crate::debug::Cat::Zbd, "{text}");
        self.report.fail(errno, text);
    }

    /// fio's `zbd_open_zone`: true when zone `z` is open or could be opened within the
    /// limits (no limit: always, and nothing is tracked).
    fn open_zone(&mut self, t: &Locked<'_>, z: u32) -> bool {
        if t.max_open_zones == 0 {
            return true;
        }
        if t.is_open(z) {
            // A zone its writes have filled counts as full, not open.
            return t.wp(z) < t.capacity_end(z);
        }
        let job_max = self.opts.job_max_open_zones;
        if job_max > 0 && self.td_open >= job_max {
            return false;
        }
        let n = t.num_open();
        if n >= t.max_open_zones {
            return false;
        }
        crate::dprint!(crate::debug::Cat::Zbd, "{}: opening zone {z}", t.path);
        t.head().open_zones[n as usize].store(z, Ordering::Relaxed);
        t.head().num_open.store(n + 1, Ordering::Relaxed);
        self.td_open += 1;
        t.zone(z).open.store(1, Ordering::Relaxed);
        true
    }

    /// fio's `zbd_close_zone`: takes zone `z` off the open list (fio moves the rest of
    /// the list down and counts the close against the clone that closes it).
    fn close_zone(&mut self, t: &Locked<'_>, z: u32) {
        if !t.is_open(z) {
            return;
        }
        let n = t.num_open();
        let list = &t.head().open_zones;
        let Some(at) = (0..n).find(|&i| t.open_zone_at(i) == z) else {
            return;
        };
        crate::dprint!(crate::debug::Cat::Zbd, "{}: closing zone {z}", t.path);
        // Entries past the limit were never written (they stay 0), so moving the list up
        // to the limit moves all that fio's whole-array move changes.
        let top = (t.max_open_zones as usize + 1).min(MAX_OPEN_ZONES);
        for i in at as usize..top - 1 {
            list[i].store(list[i + 1].load(Ordering::Relaxed), Ordering::Relaxed);
        }
        t.head().num_open.store(n - 1, Ordering::Relaxed);
        self.td_open = self.td_open.wrapping_sub(1);
        t.zone(z).open.store(0, Ordering::Relaxed);
    }

    /// fio's `zbd_reset_zone`: an emulated zone's write pointer goes back to its start
    /// (nothing is sent to the file); counted as a zone reset when it held data.
    fn reset_zone(&self, t: &Locked<'_>, z: u32) {
        let data = t.wp(z) - t.start(z);
        if data == 0 {
            return;
        }
        crate::dprint!(
            crate::debug::Cat::Zbd,
            "{}: resetting wp of zone {z}.",
            t.path
        );
        t.set_with_data(t.with_data().saturating_sub(data));
        t.zone(z).wp.store(t.start(z), Ordering::Relaxed);
        self.report.resets.fetch_add(1, Ordering::Relaxed);
    }

    /// fio's `zbd_find_zone`: the next zone after `zb` with `min_bytes` written (and for
    /// a random job also the nearest before it), within the clone's zones.
    fn find_zone(
        &self,
        t: &Locked<'_>,
        fi: usize,
        min_bytes: u64,
        zb: u32,
        random: bool,
    ) -> Option<u32> {
        let zf = &self.files[fi];
        let (first, last) = (zf.min_zone, zf.max_zone);
        let readable = |z: u32| t.start(z) + min_bytes <= t.wp(z);
        let (mut z1, mut z2) = (zb + 1, zb.checked_sub(1));
        loop {
            let below = z2.filter(|&z| z >= first);
            if z1 >= last && below.is_none() {
                break;
            }
            if z1 < last {
                if readable(z1) {
                    return Some(z1);
                }
            } else if !random {
                break;
            }
            if let Some(z) = below.filter(|_| random) {
                if readable(z) {
                    return Some(z);
                }
            }
            z1 += 1;
            z2 = z2.and_then(|z| z.checked_sub(1));
        }
        crate::dprint!(
            crate::debug::Cat::Zbd,
            "{}: no zone has {min_bytes} bytes of readable data",
            t.path
        );
        None
    }
}

impl Generator {
    fn zbd(&self) -> &ZbdState {
        self.zbd.as_deref().expect("zonemode=zbd state")
    }

    fn zbd_mut(&mut self) -> &mut ZbdState {
        self.zbd.as_deref_mut().expect("zonemode=zbd state")
    }

    /// fio's `zbd_adjust_ddir`: a mixed job writes first while its zones hold no data
    /// (reads would find nothing), unless it may read past the write pointers.
    pub(super) fn zbd_adjust_ddir(&self, fi: usize, ddir: Ddir) -> Ddir {
        let z = self.zbd();
        if ddir != Ddir::Read || !(self.cfg.read && self.cfg.write) {
            return ddir;
        }
        let t = &z.files[fi].table;
        if t.head().with_data.load(Ordering::Relaxed) != 0 || z.opts.read_beyond_wp {
            Ddir::Read
        } else {
            Ddir::Write
        }
    }

    /// fio's `setup_zbd_zone_mode`, before the offset is picked: a sequential write that
    /// reached a zone's capacity moves on to the zone's end; with `zoneskip`, a
    /// sequential job skips ahead once a zone is done (for reads: once at its write
    /// pointer, unless `read_beyond_wp`).
    pub(super) fn zbd_zone_mode(&mut self, fi: usize, ddir: Ddir) {
        let d = ddir as usize;
        let random = self.cfg.random;
        let z = self.zbd.as_deref().expect("zonemode=zbd state");
        let (skip, read_beyond_wp) = (z.opts.zone_skip, z.opts.read_beyond_wp);
        let t = &z.files[fi].table;
        let f = &mut self.files[fi];
        let zi = t.zone_of(f.last_pos[d]);
        if t.capacity < t.zone_size
            && !random
            && ddir == Ddir::Write
            && zi < t.nr_zones
            && f.last_pos[d] >= t.capacity_end(zi)
        {
            f.last_pos[d] = t.end(zi);
        }
        if random || skip == 0 {
            return;
        }
        let past_wp = ddir == Ddir::Read && !read_beyond_wp && f.last_pos[d] >= t.wp(zi);
        if self.zone_bytes >= t.zone_size || f.last_pos[d] >= t.end(zi) || past_wp {
            self.zone_bytes = 0;
            f.file_offset += t.zone_size + skip;
            if f.file_offset >= f.real_size {
                f.file_offset = f.loop_start;
            }
            f.last_pos[d] = f.file_offset;
        }
    }

    /// fio's `zbd_file_reset` (part of its file reset, which also runs when a file is
    /// opened): a writing job counts the data in its zones again and restarts the count
    /// to the next frequency reset.
    #[inline(never)]
    pub(super) fn zbd_file_reset(&mut self, fi: usize) {
        let z = self.zbd();
        if !z.writes {
            return;
        }
        let zf = &z.files[fi];
        let t = zf.table.lock();
        let data: u64 = (zf.min_zone..zf.max_zone)
            .map(|i| t.wp(i) - t.start(i))
            .sum();
        t.set_with_data(data);
        t.reset_write_cnt(z.opts.reset_frequency);
    }

    /// fio's `fill_io_u` for a zoned job: the direction (a mixed job writes first while
    /// nothing is written), the zone steps before the offset, the offset and length as
    /// for any job, then `zbd_adjust_block` moves the I/O into a zone (writes to a write
    /// pointer), the I/O must fit the file, the random map is marked at the offset first
    /// picked, and a write moves its zone's write pointer (fio's `zbd_queue_io`). `None`
    /// when the file has no more I/O for this pass (or a zone error ended the job). Kept
    /// out of line: other jobs' `fill_io` only tests that the job is not zoned.
    #[inline(never)]
    pub(super) fn zbd_fill_io(&mut self, fi: usize) -> Option<super::NextIo> {
        let ddir = self.set_rw_ddir(fi);
        let ddir = self.zbd_adjust_ddir(fi, ddir);
        self.zbd_zone_mode(fi, ddir);
        let (picked, is_random, busy_ok) = self.next_offset(fi, ddir)?;
        self.last_tried_offset = picked;
        let len = self.next_buflen(fi, ddir, picked, is_random);
        if len == 0 {
            return None;
        }
        let mark_map = self.cfg.random && !busy_ok;
        let table = self.zbd().files[fi].table.clone();
        let t = table.lock();
        let (mut offset, mut len) = (picked, len);
        if !self.zbd_adjust_block(&t, fi, ddir, &mut offset, &mut len) {
            return None;
        }
        if offset + len > self.files[fi].real_size {
            return None;
        }
        if mark_map {
            len = self.mark_random_map(fi, ddir, picked, len);
        }
        if ddir == Ddir::Write {
            let z = t.zone_of(offset);
            let zone_end = (offset + len).min(t.capacity_end(z));
            let wp = t.wp(z);
            if wp <= zone_end {
                t.set_with_data(t.with_data() + (zone_end - wp));
            }
            t.zone(z).wp.store(zone_end, Ordering::Relaxed);
            // fio's `zbd_end_zone_io`: a write that fills the zone closes it.
            if offset + len >= t.capacity_end(z) {
                self.zbd_mut().close_zone(&t, z);
            }
        }
        drop(t);
        self.zone_bytes += len;
        Some(super::NextIo {
            ddir,
            file: fi,
            offset,
            len,
        })
    }

    /// fio's `zbd_adjust_block`: false when the I/O cannot be done (fio's `io_u_eof`).
    fn zbd_adjust_block(
        &mut self,
        t: &Locked<'_>,
        fi: usize,
        ddir: Ddir,
        offset: &mut u64,
        len: &mut u64,
    ) -> bool {
        let min_bs = self.cfg.min_bs[ddir as usize];
        let random = self.cfg.random;
        let (file_offset, io_size) = (self.files[fi].file_offset, self.files[fi].io_size);
        let z = self.zbd.as_deref_mut().expect("zonemode=zbd state");
        let orig = t.zone_of(*offset);
        match ddir {
            Ddir::Read => {
                if z.opts.read_beyond_wp {
                    return true;
                }
                let mut zb = orig;
                let mut range = t.wp(zb).saturating_sub(t.start(zb));
                if range < min_bs || (!random && *offset + min_bs > t.wp(zb)) {
                    let Some(found) = z.find_zone(t, fi, min_bs, zb, random) else {
                        return false;
                    };
                    zb = found;
                    range = t.wp(zb) - t.start(zb);
                    if !random {
                        *offset = t.start(zb);
                    }
                }
                if range <= *len {
                    *offset = t.start(zb);
                } else if random {
                    let within = (*offset - t.start(orig)) % (range - *len);
                    *offset = t.start(zb) + within / min_bs * min_bs;
                }
                let new_len = (*len).min(t.wp(zb) - *offset) / min_bs * min_bs;
                if new_len < *len {
                    *len = new_len;
                }
                true
            }
            Ddir::Write => {
                let mut zb = orig;
                if !z.open_zone(t, zb) {
                    match z.convert_to_open_zone(t, fi, *offset, min_bs, file_offset, io_size) {
                        Some(found) => {
                            zb = found;
                            *offset = t.start(zb);
                        }
                        None => return false,
                    }
                }
                let o = z.opts;
                if o.reset_frequency != 0.0
                    && t.with_data() as f64 >= io_size as f64 * o.reset_threshold
                    && t.write_cnt_due(o.reset_frequency)
                {
                    t.zone(zb).reset.store(1, Ordering::Relaxed);
                }
                if t.zone(zb).reset.load(Ordering::Relaxed) != 0 || t.full(zb, min_bs) {
                    t.zone(zb).reset.store(0, Ordering::Relaxed);
                    z.reset_zone(t, zb);
                    if t.capacity < min_bs {
                        z.fail(
                            libc::EINVAL,
                            format!(
                                "zone capacity {} smaller than minimum block size {min_bs}",
                                t.capacity
                            ),
                        );
                        return false;
                    }
                }
                *offset = t.wp(zb);
                if (*offset).wrapping_sub(file_offset) >= io_size {
                    z.fail(libc::EINVAL, "invalid WP value".into());
                    return false;
                }
                let new_len = (*len).min(t.capacity_end(zb) - *offset) / min_bs * min_bs;
                if new_len == *len {
                    return true;
                }
                if new_len >= min_bs {
                    *len = new_len;
                    return true;
                }
                z.fail(
                    libc::EIO,
                    format!(
                        "zone remainder {} smaller than min block size {min_bs}",
                        t.capacity_end(zb) - *offset
                    ),
                );
                false
            }
            Ddir::Trim => true,
        }
    }
}

impl ZbdState {
    /// fio's `zbd_convert_to_open_zone`: a zone that may take a write when the one the
    /// offset fell in may not be opened: one of the open zones (picked from the offset),
    /// else the next zone that can be opened, else any open zone with room. `None` when
    /// none can take it.
    fn convert_to_open_zone(
        &mut self,
        t: &Locked<'_>,
        fi: usize,
        offset: u64,
        min_bs: u64,
        file_offset: u64,
        io_size: u64,
    ) -> Option<u32> {
        let (min_zone, max_zone) = (self.files[fi].min_zone, self.files[fi].max_zone);
        let limited = t.max_open_zones != 0 || self.opts.job_max_open_zones != 0;
        // fio's `pick_random_zone_idx`: a place in the open list, from the offset.
        let pick = |n: u32| -> u32 {
            let v = offset
                .wrapping_sub(file_offset)
                .wrapping_mul(n as u64)
                .checked_div(io_size)
                .unwrap_or(0);
            u32::try_from(v).unwrap_or(u32::MAX)
        };
        let mut zone_idx = if limited {
            let i = pick(t.num_open()) as usize;
            t.head().open_zones[i.min(MAX_OPEN_ZONES - 1)].load(Ordering::Relaxed)
        } else {
            t.zone_of(offset)
        };
        zone_idx = zone_idx.clamp(min_zone, max_zone.saturating_sub(1).max(min_zone));
        let valid = |z: u32| t.start(z).wrapping_sub(file_offset) < io_size;
        let examine = 'search: loop {
            if !limited {
                break 'search true;
            }
            let n = t.num_open();
            if n == 0 {
                break 'search false;
            }
            let mut tmp = pick(n);
            let mut found = None;
            for _ in 0..n {
                if tmp >= n {
                    tmp = 0;
                }
                let tz = t.open_zone_at(tmp);
                if min_zone <= tz && tz < max_zone {
                    found = Some(tz);
                    break;
                }
                tmp += 1;
            }
            let new = found?;
            if new == zone_idx {
                break 'search true;
            }
            zone_idx = new;
        };
        if examine && t.wp(zone_idx) + min_bs <= t.capacity_end(zone_idx) {
            return Some(zone_idx);
        }
        // The zone is full: open another one, looking on from it (wrapping around).
        let mut z = zone_idx;
        for _ in 0..io_size / t.zone_size {
            z += 1;
            if !valid(z) {
                z = min_zone;
            }
            if t.is_open(z) {
                continue;
            }
            if self.open_zone(t, z) {
                return Some(z);
            }
        }
        // Else any open zone of this clone's region with room for a block.
        for i in 0..t.num_open() {
            let oz = t.open_zone_at(i);
            if oz < min_zone || oz >= max_zone {
                continue;
            }
            if t.wp(oz) + min_bs <= t.capacity_end(oz) {
                return Some(oz);
            }
        }
        crate::dprint!(
            crate::debug::Cat::Zbd,
            "{}: did not open another zone",
            t.path
        );
        None
    }
}
