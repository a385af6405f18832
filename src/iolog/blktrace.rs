//! blktrace binary traces as `read_iolog` input (the format and the merge are `crate::blktrace`).
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
use crate::engine::SyncKind;
use crate::job::workload::Replay;

use crate::blktrace::{records, TC_DISCARD, TC_FLUSH, TC_NOTIFY, TC_WRITE};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blktrace::{merge, Record, MAGIC, TA_QUEUE, TC_READ, TC_SHIFT, VERSION};

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
