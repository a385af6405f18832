//! The blktrace binary format: the kernel's `struct blk_io_trace` records (48 bytes, magic
//! 0x65617400 with version 7 in the low byte, either byte order), each followed by
//! `pdu_len` bytes of payload; and `merge_blktrace_file`, which interleaves several traces
//! by time into one when the job is read (each trace's times first repeated
//! `merge_blktrace_iters` times, each repetition after the trace's length, then scaled to
//! `merge_blktrace_scalars` per cent; only queue records are kept, without payload). fio
//! 3.33 documents the merge but reads 8 bytes where it means a record ("fio: iolog short
//! read") and writes an empty file; iobench writes the merged trace. Replaying a trace is
//! `iolog::blktrace`'s.

use std::io::Read;

pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 0x07;
pub const RECORD: usize = 48;
pub const TA_QUEUE: u32 = 1;
pub const TC_SHIFT: u32 = 16;
pub const TC_READ: u32 = 1 << TC_SHIFT;
pub const TC_WRITE: u32 = 2 << TC_SHIFT;
pub const TC_FLUSH: u32 = 4 << TC_SHIFT;
pub const TC_NOTIFY: u32 = (1 << 10) << TC_SHIFT;
pub const TC_DISCARD: u32 = (1 << 13) << TC_SHIFT;

/// One record's fields (host byte order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub magic: u32,
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

impl Record {
    pub fn parse(b: &[u8; RECORD], swap: bool) -> Record {
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
    pub fn to_bytes(self) -> [u8; RECORD] {
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

    pub fn is_queue(&self) -> bool {
        self.action & 0xffff == TA_QUEUE
    }

    /// The data direction (read, write, discard), as fio's merge filter reads it.
    pub fn has_ddir(&self) -> bool {
        self.action & (TC_READ | TC_WRITE | TC_DISCARD) != 0
    }
}

/// Whether `data` starts with a blktrace record, and if so whether its byte order is
/// the other one.
pub fn magic_of(data: &[u8]) -> Option<bool> {
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
pub fn records(path: &str) -> Result<Vec<Record>, String> {
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
