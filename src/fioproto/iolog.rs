//! IOLOG messages: a job's bandwidth, IOPS or latency log, which a fio server sends to the
//! client at the end instead of writing it. The payload is a 288-byte header
//! (`struct cmd_iolog_pdu`) then the samples (`struct io_sample`, 32 bytes, or 40 with the
//! offset), zlib-compressed when the header says `XMIT_COMPRESSED` (fio compresses when both
//! peers announced zlib in PROBE). The client writes the log as `<name>.<hostname>`.

use super::{Fields, Image, Proto, ProtoError};
use std::io::Read;

pub const HDR_LEN: usize = 288;
/// Samples travel compressed (the client inflates them).
pub const XMIT_COMPRESSED: u32 = 1;
/// Samples are stored compressed (the client writes them as they are).
pub const STORE_COMPRESSED: u32 = 2;
/// `IO_LOG_TYPE_HIST`: histogram logs, whose samples carry whole histograms.
pub const LOG_TYPE_HIST: u32 = 6;
const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;
/// Largest inflated log accepted (a compressed payload could otherwise claim any size).
const MAX_INFLATED: u64 = 256 << 20;

/// One sample of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub time_ms: u64,
    pub value: u64,
    /// Direction, with fio's offset/priority flag bits.
    pub ddir: u32,
    pub priority: u16,
    pub bs: u64,
    pub offset: Option<u64>,
}

/// A decoded IOLOG message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireLog {
    pub thread_number: u32,
    pub log_type: u32,
    pub compressed: u32,
    pub log_offset: bool,
    pub log_prio: bool,
    pub name: String,
    /// The samples; for a `STORE_COMPRESSED` log, none (see `raw`).
    pub samples: Vec<Sample>,
    /// A `STORE_COMPRESSED` log's bytes, to be written as they are.
    pub raw: Vec<u8>,
    /// A histogram log's bins, one array of fio's latency buckets per sample (the
    /// difference since the previous sample, as fio's server sends them).
    pub hist: Vec<Vec<u64>>,
    /// `log_hist_coarseness`: bins are summed in groups of 2^this when written.
    pub hist_coarseness: u32,
    /// `per_job_logs` (version 102 on; 1 before): the client writes the log anew, else it
    /// appends to it.
    pub per_job_logs: bool,
}

/// Where the header's fields and a sample's parts sit in one protocol version: fio 3.33's
/// 288-byte header and 32-byte sample; from 102 `per_job_logs` after the coarseness, the
/// samples at 296 and two values per sample (40 bytes); from 107 `log_issue_time` before
/// the coarseness, and a sample may carry its issue time after its offset.
#[derive(Debug, Clone, Copy)]
struct LogLayout {
    wide: bool,
    issue: bool,
}

impl LogLayout {
    fn of(p: Proto) -> LogLayout {
        LogLayout {
            wide: p.wide_samples(),
            issue: p.log_issue_time(),
        }
    }
    fn hdr_len(self) -> usize {
        if self.wide {
            296
        } else {
            HDR_LEN
        }
    }
    /// (log_issue_time, log_hist_coarseness, per_job_logs, name)
    fn fields(self) -> (Option<usize>, usize, Option<usize>, usize) {
        match (self.wide, self.issue) {
            (false, _) => (None, 28, None, 32),
            (true, false) => (None, 28, Some(32), 36),
            (true, true) => (Some(28), 32, Some(36), 40),
        }
    }
    /// Where a sample's direction, priority and block size sit.
    fn ddir(self) -> usize {
        if self.wide {
            24
        } else {
            16
        }
    }
    /// A sample's size without its histogram.
    fn entry_len(self, offset: bool, issue_time: bool) -> usize {
        let base = if self.wide { 40 } else { 32 };
        base + 8 * (offset as usize + (issue_time && self.issue) as usize)
    }
}

/// Bytes of fio's `struct io_u_plat_entry` that follows each histogram sample: a list
/// head (two pointers) and the bucket counts.
const PLAT_ENTRY: usize = 16 + 8 * crate::stats::hist::PLAT_NR;

impl WireLog {
    /// Reads an IOLOG payload of fio 3.33's layout.
    pub fn decode(b: &[u8]) -> Result<WireLog, ProtoError> {
        Self::decode_as(Proto::OLDEST, b)
    }

    /// Reads an IOLOG payload of protocol version `p`. A sample's issue time (fio 3.38's
    /// `log_issue_time`, which iobench does not log) is read past, not kept.
    pub fn decode_as(p: Proto, b: &[u8]) -> Result<WireLog, ProtoError> {
        let l = LogLayout::of(p);
        let hdr_len = l.hdr_len();
        let (issue_at, coarse_at, per_job_at, name_at) = l.fields();
        let f = Fields::new(b, "IOLOG", hdr_len)?;
        let nr = f.u64(0)?;
        let log_offset = f.u32(20)? != 0;
        let issue_time = match issue_at {
            Some(o) => f.u32(o)? != 0,
            None => false,
        };
        let mut log = WireLog {
            thread_number: f.u32(8)?,
            log_type: f.u32(12)?,
            compressed: f.u32(16)?,
            log_offset,
            log_prio: f.u32(24)? != 0,
            name: f.cstr(name_at, 256)?,
            samples: Vec::new(),
            raw: Vec::new(),
            hist: Vec::new(),
            hist_coarseness: f.u32(coarse_at)?.min(6),
            per_job_logs: match per_job_at {
                Some(o) => f.u32(o)? != 0,
                None => true,
            },
        };
        if log.name.contains('/') && log.name.split('/').any(|c| c == "..") {
            return Err(ProtoError::Malformed {
                op: "IOLOG",
                why: format!("log name {:?} climbs out of the directory", log.name),
            });
        }
        let body = &b[hdr_len..];
        if log.compressed == STORE_COMPRESSED {
            log.raw = body.to_vec();
            return Ok(log);
        }
        let hist = log.log_type == LOG_TYPE_HIST;
        let elen = l.entry_len(log_offset, issue_time);
        let esz = elen + if hist { PLAT_ENTRY } else { 0 };
        let want = nr.saturating_mul(esz as u64);
        if want > MAX_INFLATED {
            return Err(ProtoError::Malformed {
                op: "IOLOG",
                why: format!("{nr} samples is more than iobench accepts"),
            });
        }
        let data: Vec<u8> = if log.compressed == XMIT_COMPRESSED {
            let mut out = Vec::new();
            // fio may send several zlib streams back to back: inflate each in turn.
            let mut rest = body;
            while !rest.is_empty() && (out.len() as u64) < want {
                let mut z = flate2::bufread::ZlibDecoder::new(rest);
                let mut chunk = Vec::new();
                let read = (&mut z)
                    .take(want - out.len() as u64)
                    .read_to_end(&mut chunk);
                match read {
                    Ok(_) => {}
                    // fio 3.33's server finishes its stream into the last fragment after
                    // that fragment was queued, so the stream's tail (end mark, checksum,
                    // sometimes the last bits) can be missing; fio's client keeps what
                    // inflated, and so does iobench's.
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        out.extend_from_slice(&chunk);
                        break;
                    }
                    Err(e) => {
                        return Err(ProtoError::Malformed {
                            op: "IOLOG",
                            why: format!("bad compressed data: {e}"),
                        })
                    }
                }
                let used = z.total_in() as usize;
                out.extend_from_slice(&chunk);
                if used == 0 {
                    break;
                }
                rest = &rest[used.min(rest.len())..];
            }
            out
        } else {
            body.to_vec()
        };
        let n = (data.len() / esz).min(nr as usize);
        let s = Fields::new(&data, "IOLOG samples", n * esz)?;
        let dd = l.ddir();
        for k in 0..n {
            let o = k * esz;
            log.samples.push(Sample {
                time_ms: s.u64(o)?,
                value: s.u64(o + 8)?,
                ddir: s.u32(o + dd)?,
                priority: s.u16(o + dd + 4)?,
                bs: s.u64(o + dd + 8)?,
                offset: if log_offset {
                    Some(s.u64(o + dd + 16)?)
                } else {
                    None
                },
            });
            if hist {
                let at = o + elen + 16;
                let bins = (0..crate::stats::hist::PLAT_NR)
                    .map(|b| s.u64(at + 8 * b))
                    .collect::<Result<Vec<u64>, _>>()?;
                log.hist.push(bins);
            }
        }
        Ok(log)
    }

    /// An uncompressed IOLOG payload of fio 3.33's layout; a histogram log's samples each
    /// carry their bucket array (after an empty list head), as fio lays them out.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_as(Proto::OLDEST)
    }

    /// [`WireLog::encode`] in the layout of protocol version `p`.
    pub fn encode_as(&self, p: Proto) -> Vec<u8> {
        let l = LogLayout::of(p);
        let (_, coarse_at, per_job_at, name_at) = l.fields();
        let mut i = Image::new(l.hdr_len());
        i.u64(0, self.samples.len() as u64);
        i.u32(8, self.thread_number);
        i.u32(12, self.log_type);
        i.u32(16, 0);
        i.u32(20, self.log_offset as u32);
        i.u32(24, self.log_prio as u32);
        i.u32(coarse_at, self.hist_coarseness);
        if let Some(o) = per_job_at {
            i.u32(o, self.per_job_logs as u32);
        }
        i.cstr(name_at, 256, &self.name);
        let mut v = i.0;
        let dd = l.ddir();
        for (k, s) in self.samples.iter().enumerate() {
            let mut e = Image::new(l.entry_len(self.log_offset, false));
            e.u64(0, s.time_ms);
            e.u64(8, s.value);
            e.u32(dd, s.ddir);
            e.u16(dd + 4, s.priority);
            e.u64(dd + 8, s.bs);
            if let Some(off) = s.offset {
                e.u64(dd + 16, off);
            }
            v.extend_from_slice(&e.0);
            if self.log_type == LOG_TYPE_HIST {
                let bins = self.hist.get(k).map(Vec::as_slice).unwrap_or(&[]);
                v.extend_from_slice(&[0u8; 16]);
                for b in 0..crate::stats::hist::PLAT_NR {
                    v.extend_from_slice(&bins.get(b).copied().unwrap_or(0).to_le_bytes());
                }
            }
        }
        v
    }

    /// The IOLOG payload with its samples zlib-compressed (`XMIT_COMPRESSED`), as fio's
    /// server sends logs to a client that announced zlib in PROBE.
    pub fn encode_compressed(&self) -> Vec<u8> {
        self.encode_compressed_as(Proto::OLDEST)
    }

    /// [`WireLog::encode_compressed`] in the layout of protocol version `p`.
    pub fn encode_compressed_as(&self, p: Proto) -> Vec<u8> {
        use std::io::Write;
        let hdr = LogLayout::of(p).hdr_len();
        let plain = self.encode_as(p);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        if z.write_all(&plain[hdr..]).is_err() {
            return plain;
        }
        let Ok(body) = z.finish() else {
            return plain;
        };
        let mut out = plain[..hdr].to_vec();
        out[16..20].copy_from_slice(&XMIT_COMPRESSED.to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// The log's text, as fio's client writes it.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        if self.log_type == LOG_TYPE_HIST {
            // `time, ddir, bs, ` then the bins summed in strides of 2^coarseness.
            let stride = 1usize << self.hist_coarseness;
            for (s, bins) in self.samples.iter().zip(&self.hist) {
                let dir = s.ddir & !(OFFSET_BIT | PRIO_BIT);
                let _ = write!(out, "{}, {}, {}", s.time_ms, dir, s.bs);
                for chunk in bins.chunks(stride) {
                    let _ = write!(out, ", {}", chunk.iter().sum::<u64>());
                }
                out.push('\n');
            }
            return out;
        }
        for s in &self.samples {
            let prio = if s.ddir & PRIO_BIT != 0 {
                format!("0x{:04x}", s.priority)
            } else {
                // Without per-sample priorities fio prints whether the class is real-time.
                if (s.priority >> 13) == 1 { "1" } else { "0" }.to_string()
            };
            let dir = s.ddir & !(OFFSET_BIT | PRIO_BIT);
            let _ = match s.offset {
                Some(o) => writeln!(
                    out,
                    "{}, {}, {}, {}, {}, {}",
                    s.time_ms, s.value as i64, dir, s.bs, o, prio
                ),
                None => writeln!(
                    out,
                    "{}, {}, {}, {}, {}",
                    s.time_ms, s.value as i64, dir, s.bs, prio
                ),
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// fio 3.37's and 3.38's log header and sample layouts, at the offsets of fio's
    /// headers: the name at 36 then 40, samples at 296, 40-byte samples (48 with the
    /// offset).
    #[test]
    fn log_layout_follows_the_version() {
        let log = WireLog {
            thread_number: 2,
            log_type: 1,
            compressed: 0,
            log_offset: true,
            log_prio: false,
            name: "x_lat.2.log".into(),
            samples: vec![Sample {
                time_ms: 7,
                value: 99,
                ddir: 1 | OFFSET_BIT,
                priority: 0,
                bs: 4096,
                offset: Some(8192),
            }],
            raw: Vec::new(),
            hist: Vec::new(),
            hist_coarseness: 0,
            per_job_logs: false,
        };
        for (v, hdr, name_at, entry, ddir_at) in [
            (97u16, 288usize, 32usize, 40usize, 16usize),
            (103, 296, 36, 48, 24),
            (107, 296, 40, 48, 24),
            (121, 296, 40, 48, 24),
        ] {
            let p = Proto::new(v).unwrap();
            let b = log.encode_as(p);
            assert_eq!(b.len(), hdr + entry, "version {v}");
            assert_eq!(&b[name_at..name_at + 11], b"x_lat.2.log", "version {v}");
            let s = &b[hdr..];
            assert_eq!(
                u32::from_le_bytes(s[ddir_at..ddir_at + 4].try_into().unwrap()),
                1 | OFFSET_BIT
            );
            let back = WireLog::decode_as(p, &b).unwrap();
            assert_eq!(back.samples, log.samples, "version {v}");
            // Before 102 the header cannot say the log is shared: written anew.
            assert_eq!(back.per_job_logs, v < 102, "version {v}");
            let z = WireLog::decode_as(p, &log.encode_compressed_as(p)).unwrap();
            assert_eq!(z.samples, log.samples, "version {v}, compressed");
        }
        // fio 3.38's issue time after the offset is read past.
        let p = Proto::new(107).unwrap();
        let mut b = log.encode_as(p);
        b[28..32].copy_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&123u64.to_le_bytes());
        assert_eq!(WireLog::decode_as(p, &b).unwrap().samples, log.samples);
    }

    #[test]
    fn compressed_log_inflates() {
        let log = WireLog {
            thread_number: 1,
            log_type: 2,
            compressed: 0,
            log_offset: false,
            log_prio: false,
            name: "x_bw.1.log".into(),
            samples: vec![
                Sample {
                    time_ms: 500,
                    value: 1234,
                    ddir: 0,
                    priority: 0,
                    bs: 4096,
                    offset: None,
                };
                3
            ],
            raw: Vec::new(),
            hist: Vec::new(),
            hist_coarseness: 0,
            per_job_logs: true,
        };
        let plain = log.encode();
        assert_eq!(WireLog::decode(&plain).unwrap(), log);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&plain[HDR_LEN..]).unwrap();
        let mut packed = plain[..HDR_LEN].to_vec();
        packed[16] = XMIT_COMPRESSED as u8;
        packed.extend_from_slice(&z.finish().unwrap());
        let back = WireLog::decode(&packed).unwrap();
        assert_eq!(back.samples, log.samples);
        assert_eq!(
            WireLog::decode(&log.encode_compressed()).unwrap().samples,
            log.samples
        );
        assert_eq!(back.text(), "500, 1234, 0, 4096, 0\n".repeat(3));
        // Garbage instead of zlib data is an error, not a panic.
        let mut bad = plain[..HDR_LEN].to_vec();
        bad[16] = XMIT_COMPRESSED as u8;
        bad.extend_from_slice(&[1, 2, 3, 4]);
        assert!(WireLog::decode(&bad).is_err());
        // fio 3.33's server can leave the stream's tail out (it finishes the stream into a
        // fragment already queued): what was flushed before still decodes, as in fio's client.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&plain[HDR_LEN..]).unwrap();
        z.flush().unwrap();
        let mut cut = plain[..HDR_LEN].to_vec();
        cut[16] = XMIT_COMPRESSED as u8;
        cut.extend_from_slice(z.get_ref());
        assert_eq!(WireLog::decode(&cut).unwrap().samples, log.samples);
    }
}
