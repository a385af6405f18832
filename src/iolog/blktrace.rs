//! blktrace binary traces as `read_iolog` input, and `merge_blktrace_file`.
//!
//! A trace is a sequence of the kernel's `struct blk_io_trace` records (48 bytes, magic
//! 0x65617400 with version 7 in the low byte, either byte order), each followed by
//! `pdu_len` bytes of payload. As fio does, only the "queue" records are replayed: a read
//! or write of `bytes` at `sector * 512`, a discard (trim) or a flush (sync), each after
//! the time since the previous queue record (nanoseconds in the trace, scaled by
//! `replay_time_scale`, none with `replay_no_stall`). The device is the one the record's
//! major:minor names under /dev, or `replay_redirect`. Records of zero bytes are
//! skipped, as are the kinds `replay_skip` names.
//!
//! Merging (`merge_blktrace_file`, `--merge-blktrace-only`) interleaves several traces by
//! time into one, each trace's times first repeated `merge_blktrace_iters` times (each
//! repetition after the trace's length) and then scaled to `merge_blktrace_scalars` per
//! cent; only queue records are kept, without payload. fio 3.33 documents this but its
//! merge reads 8 bytes where it means a record ("fio: iolog short read") and writes an
//! empty file; iobench writes the merged trace and replays it.

use super::read::{Action, LogEntry};
use crate::defs::Ddir;
use crate::gen::SyncKind;
use crate::job::workload::Replay;
use std::io::Read;

const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
const RECORD: usize = 48;
const TA_QUEUE: u32 = 1;
const TC_SHIFT: u32 = 16;
const TC_READ: u32 = 1 << TC_SHIFT;
const TC_WRITE: u32 = 2 << TC_SHIFT;
const TC_FLUSH: u32 = 4 << TC_SHIFT;
const TC_NOTIFY: u32 = (1 << 10) << TC_SHIFT;
const TC_DISCARD: u32 = (1 << 13) << TC_SHIFT;

/// One record's fields (host byte order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    magic: u32,
    sequence: u32,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    cpu: u32,
    error: u16,
    pdu_len: u16,
}

impl Record {
    fn parse(b: &[u8; RECORD], swap: bool) -> Record {
        let u32_at = |i: usize| {
            let v = [b[i], b[i + 1], b[i + 2], b[i + 3]];
            if swap {
                u32::from_be_bytes(v)
            } else {
                u32::from_le_bytes(v)
            }
        };
        let u64_at = |i: usize| {
            let mut v = [0u8; 8];
            v.copy_from_slice(&b[i..i + 8]);
            if swap {
                u64::from_be_bytes(v)
            } else {
                u64::from_le_bytes(v)
            }
        };
        let u16_at = |i: usize| {
            let v = [b[i], b[i + 1]];
            if swap {
                u16::from_be_bytes(v)
            } else {
                u16::from_le_bytes(v)
            }
        };
        Record {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    /// The record in this machine's byte order, without payload.
    fn to_bytes(self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_ne_bytes());
        b[8..16].copy_from_slice(&self.time.to_ne_bytes());
        b[16..24].copy_from_slice(&self.sector.to_ne_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_ne_bytes());
        b[28..32].copy_from_slice(&self.action.to_ne_bytes());
        b[32..36].copy_from_slice(&self.pid.to_ne_bytes());
        b[36..40].copy_from_slice(&self.device.to_ne_bytes());
        b[40..44].copy_from_slice(&self.cpu.to_ne_bytes());
        b[44..46].copy_from_slice(&self.error.to_ne_bytes());
        b[46..48].copy_from_slice(&0u16.to_ne_bytes());
        b
    }

    fn is_queue(&self) -> bool {
        self.action & 0xffff == TA_QUEUE
    }

    /// The data direction (read, write, discard), as fio's merge filter reads it.
    fn has_ddir(&self) -> bool {
        self.action & (TC_READ | TC_WRITE | TC_DISCARD) != 0
    }
}

/// Whether `data` starts with a blktrace record, and if so whether its byte order is
/// the other one.
fn magic_of(data: &[u8]) -> Option<bool> {
    let first: [u8; 4] = data.get(..4)?.try_into().ok()?;
    if data.len() < RECORD {
        return None;
    }
    if u32::from_le_bytes(first) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if u32::from_be_bytes(first) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// True when the file at `path` is a blktrace (its first record has the magic).
pub fn is_blktrace(path: &str) -> bool {
    let mut head = [0u8; RECORD];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && magic_of(&head).is_some()
}

/// Every record of a trace (payloads skipped), checked for magic and version.
fn records(path: &str) -> Result<Vec<Record>, String> {
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let swap = magic_of(&data).ok_or_else(|| format!("{path}: not a blktrace"))?;
    let mut out = Vec::new();
    let mut at = 0;
    while at + RECORD <= data.len() {
        let b: &[u8; RECORD] = data[at..at + RECORD].try_into().expect("48 bytes");
        let r = Record::parse(b, swap);
        if r.magic & 0xffff_ff00 != MAGIC {
            return Err(format!(
                "{path}: bad magic in blktrace data at byte {at}: {:x}",
                r.magic
            ));
        }
        if r.magic & 0xff != VERSION {
            return Err(format!(
                "{path}: blktrace version {} (only version 7 is known)",
                r.magic & 0xff
            ));
        }
        out.push(r);
        at += RECORD + r.pdu_len as usize;
    }
    if at != data.len() && at < data.len() {
        eprintln!("iobench: {path}: short record at the end of the trace, ignored");
    }
    Ok(out)
}

/// The block device node under `dir` with this major:minor (searched as fio does,
/// depth first, following no links).
fn find_device(dir: &std::path::Path, major: u32, minor: u32) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if md.is_dir() {
            if let Some(p) = find_device(&e.path(), major, minor) {
                return Some(p);
            }
        } else if md.file_type().is_block_device() {
            let rdev = md.rdev();
            if libc::major(rdev) == major && libc::minor(rdev) == minor {
                return Some(e.path().display().to_string());
            }
        }
    }
    None
}

/// A blktrace read for replay: the devices it names (in order of first use) and the
/// operations, with the sizes the job needs.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub files: Vec<String>,
    pub entries: Vec<LogEntry>,
}

/// Reads the trace at `path` as fio replays it (see the module text).
pub fn read(path: &str, opts: &Replay) -> Result<Trace, String> {
    let mut t = Trace::default();
    let mut devices: Vec<u32> = Vec::new();
    let mut last_time = 0u64;
    for r in records(path)? {
        if !r.is_queue() {
            continue;
        }
        if r.action & TC_NOTIFY != 0 {
            continue;
        }
        // Time since the previous queue record, in ns; none for the first.
        let delay_ns = if last_time == 0 || opts.no_stall || r.time < last_time {
            0
        } else if opts.time_scale == 100 {
            r.time - last_time
        } else {
            ((r.time - last_time) as f64 * (100.0 / opts.time_scale as f64)) as u64
        };
        last_time = r.time;
        let bytes = if opts.align != 0 {
            (r.bytes as u64).div_ceil(opts.align) * opts.align
        } else {
            r.bytes as u64
        };
        let (action, skip_bit) = if r.action & TC_DISCARD != 0 {
            (Action::Io(Ddir::Trim), 4)
        } else if r.action & TC_FLUSH != 0 {
            (Action::Sync(SyncKind::Fsync), 8)
        } else if r.action & TC_WRITE != 0 {
            (Action::Io(Ddir::Write), 2)
        } else {
            (Action::Io(Ddir::Read), 1)
        };
        if opts.skip & skip_bit != 0 {
            continue;
        }
        let file = match devices.iter().position(|&d| d == r.device) {
            Some(i) => i,
            None => {
                let name = match &opts.redirect {
                    Some(r) => r.clone(),
                    None => {
                        let (maj, min) = (r.device >> 20, r.device & 0xfffff);
                        find_device(std::path::Path::new("/dev"), maj, min).ok_or_else(|| {
                            format!(
                                "{path}: no block device {maj}:{min} under /dev for the \
                                     trace (replay_redirect names one)"
                            )
                        })?
                    }
                };
                // With replay_redirect every device is the one file.
                devices.push(r.device);
                match t.files.iter().position(|f| *f == name) {
                    Some(i) => i,
                    None => {
                        t.files.push(name);
                        t.files.len() - 1
                    }
                }
            }
        };
        if matches!(action, Action::Io(_)) && bytes == 0 {
            // Once per process, as fio warns once (the trace is read more than once).
            static WARNED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!(
                    "iobench: {path}: ignoring zero byte trace: action={:x}",
                    r.action
                );
            }
            continue;
        }
        let mut offset = r.sector.saturating_mul(512);
        if opts.scale > 1 {
            offset /= opts.scale;
        }
        if opts.align != 0 {
            offset &= !(opts.align - 1);
        }
        t.entries.push(LogEntry {
            action,
            file,
            offset,
            len: if matches!(action, Action::Sync(_)) {
                0
            } else {
                bytes
            },
            delay_us: delay_ns / 1000,
        });
    }
    if t.entries.is_empty() {
        return Err(format!("{path}: found no I/O in the blktrace data"));
    }
    Ok(t)
}

/// One input of a merge: its queue records in order, its repeat count and time scale.
struct Cursor {
    recs: Vec<Record>,
    next: usize,
    iter: u64,
    iters: u64,
    scalar: u64,
    length: u64,
}

impl Cursor {
    /// The time of the record at `next`, in this repetition and scaled; None when done.
    fn head(&self) -> Option<(u64, Record)> {
        let r = *self.recs.get(self.next)?;
        let t = (r.time + self.iter * self.length) * self.scalar / 100;
        Some((t, r))
    }

    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.recs.len() && self.iter + 1 < self.iters {
            self.iter += 1;
            self.next = 0;
        }
    }
}

/// Per input, a merge parameter: the given list (whole numbers, one per trace) or the
/// default for all; the error names the option when the counts differ.
fn per_trace(name: &str, list: &[f64], n: usize, default: u64) -> Result<Vec<u64>, String> {
    let list: Vec<f64> = list.iter().copied().take_while(|&v| v != 0.0).collect();
    if list.is_empty() {
        return Ok(vec![default; n]);
    }
    if list.len() != n {
        return Err(format!(
            "{name}: {} values for {n} traces (one per read_iolog trace is needed)",
            list.len()
        ));
    }
    Ok(list.iter().map(|&v| v as u64).collect())
}

/// Merges the traces of `inputs` into `out` (see the module text).
pub fn merge(inputs: &[&str], scalars: &[f64], iters: &[f64], out: &str) -> Result<(), String> {
    let scalars = per_trace("merge_blktrace_scalars", scalars, inputs.len(), 100)?;
    let iters = per_trace("merge_blktrace_iters", iters, inputs.len(), 1)?;
    let mut cursors = Vec::new();
    for (i, path) in inputs.iter().enumerate() {
        let all = records(path)?;
        // A trace's length (the time of its last record) spaces its repetitions.
        let length = all.last().map_or(0, |r| r.time);
        let recs: Vec<Record> = all
            .into_iter()
            .filter(|r| r.is_queue() && r.has_ddir())
            .collect();
        cursors.push(Cursor {
            next: 0,
            iter: 0,
            iters: iters[i].max(1),
            scalar: scalars[i],
            length,
            recs,
        });
    }
    let mut data = Vec::new();
    loop {
        // The earliest head; the first input wins a tie.
        let mut best: Option<(usize, u64, Record)> = None;
        for (i, c) in cursors.iter().enumerate() {
            if let Some((t, r)) = c.head() {
                if best.is_none_or(|(_, bt, _)| t < bt) {
                    best = Some((i, t, r));
                }
            }
        }
        let Some((i, t, mut r)) = best else {
            break;
        };
        r.time = t;
        r.magic = MAGIC | VERSION;
        data.extend_from_slice(&r.to_bytes());
        cursors[i].advance();
    }
    std::fs::write(out, data).map_err(|e| format!("merge_blktrace_file={out}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time: u64, sector: u64, bytes: u32, action: u32) -> Record {
        Record {
            magic: MAGIC | VERSION,
            sequence: 0,
            time,
            sector,
            bytes,
            action,
            pid: 1,
            device: 7 << 20,
            cpu: 0,
            error: 0,
            pdu_len: 0,
        }
    }

    fn write(path: &std::path::Path, recs: &[Record]) {
        let mut d = Vec::new();
        for r in recs {
            d.extend_from_slice(&r.to_bytes());
        }
        std::fs::write(path, d).unwrap();
    }

    fn replay(redirect: &str) -> Replay {
        Replay {
            read_iolog: None,
            write_iolog: None,
            no_stall: false,
            time_scale: 100,
            redirect: Some(redirect.into()),
            align: 0,
            scale: 1,
            chunked: false,
            skip: 0,
        }
    }

    #[test]
    fn queue_records_become_io_with_delays() {
        let dir = std::env::temp_dir().join(format!("iob-bt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.bin");
        let w = TA_QUEUE | TC_WRITE | (16 << TC_SHIFT);
        write(
            &p,
            &[
                rec(1000, 0, 4096, w),
                rec(5000, 8, 4096, w),
                rec(6000, 8, 4096, 7 | TC_WRITE),
                rec(9000, 100, 8192, TA_QUEUE | TC_READ),
                rec(10000, 0, 0, TA_QUEUE | TC_FLUSH),
            ],
        );
        let t = read(p.to_str().unwrap(), &replay("/dev/x")).unwrap();
        assert_eq!(t.files, vec!["/dev/x".to_string()]);
        let got: Vec<(Action, u64, u64, u64)> = t
            .entries
            .iter()
            .map(|e| (e.action, e.offset, e.len, e.delay_us))
            .collect();
        assert_eq!(
            got,
            vec![
                (Action::Io(Ddir::Write), 0, 4096, 0),
                (Action::Io(Ddir::Write), 4096, 4096, 4),
                (Action::Io(Ddir::Read), 51200, 8192, 4),
                (Action::Sync(SyncKind::Fsync), 0, 0, 1),
            ]
        );
        let q = dir.join("b.bin");
        write(&q, &[rec(500, 300, 4096, TA_QUEUE | TC_READ)]);
        let m = dir.join("m.bin");
        merge(
            &[p.to_str().unwrap(), q.to_str().unwrap()],
            &[],
            &[1.0, 2.0],
            m.to_str().unwrap(),
        )
        .unwrap();
        let times: Vec<u64> = records(m.to_str().unwrap())
            .unwrap()
            .iter()
            .map(|r| r.time)
            .collect();
        // b's second pass starts after its length (500 ns): 500, 1000.
        assert_eq!(times, vec![500, 1000, 1000, 5000, 9000]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
