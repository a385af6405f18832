//! The bandwidth, IOPS and latency logs of a server's run go to the client, as fio's server
//! sends them: one IOLOG message per log file, which the client writes as
//! `<name>.<hostname>`. The run writes its logs as a plain run does; afterwards they are
//! read back, sent, and removed from the server (fio's server keeps none either).

use crate::fioproto::iolog::{Sample, WireLog};
use crate::fioproto::{encode, op};
use crate::job::Job;

const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;
/// fio's `ioprio` value of the real-time class, which a log without `log_prio` shows as 1.
const RT_CLASS: u16 = 1 << 13;

/// fio's log types by file kind.
fn log_type(kind: &str) -> u32 {
    match kind {
        "lat" => 1,
        "clat" => 2,
        "slat" => 3,
        "bw" => 4,
        _ => 5,
    }
}

/// Reads a log file's lines back into samples (`time, value, ddir, bs[, offset], prio`).
fn parse(text: &str, offset: bool, prio: bool) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let want = if offset { 6 } else { 5 };
        if f.len() < want {
            continue;
        }
        let num = |s: &str| s.parse::<u64>().ok();
        let (Some(t), Ok(v), Some(d), Some(bs)) =
            (num(f[0]), f[1].parse::<i64>(), num(f[2]), num(f[3]))
        else {
            continue;
        };
        let p = f[want - 1];
        let priority = if prio {
            u16::from_str_radix(p.trim_start_matches("0x"), 16).unwrap_or(0)
        } else if p == "1" {
            RT_CLASS
        } else {
            0
        };
        let mut ddir = d as u32;
        if offset {
            ddir |= OFFSET_BIT;
        }
        if prio {
            ddir |= PRIO_BIT;
        }
        out.push(Sample {
            time_ms: t,
            value: v as u64,
            ddir,
            priority,
            bs,
            offset: if offset { num(f[4]) } else { None },
        });
    }
    out
}

/// The IOLOG messages of every log the jobs wrote, in job and clone order, compressed when
/// the client can inflate them (`zlib`); each file sent is removed.
pub fn messages(jobs: &[Job], zlib: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut sent: Vec<String> = Vec::new();
    let mut first = 1u64;
    for job in jobs {
        let cfg = &job.report.logs;
        let n = job.exec.numjobs.max(1) as u64;
        for clone in 0..n {
            let tn = first + clone;
            let kinds: [(Option<&str>, &[&str]); 3] = [
                (cfg.bw.as_deref(), &["bw"]),
                (cfg.lat.as_deref(), &["lat", "slat", "clat"]),
                (cfg.iops.as_deref(), &["iops"]),
            ];
            for (prefix, names) in kinds {
                let Some(prefix) = prefix else { continue };
                for kind in names {
                    let name = if cfg.per_job {
                        format!("{prefix}_{kind}.{tn}.log")
                    } else {
                        format!("{prefix}_{kind}.log")
                    };
                    if sent.contains(&name) {
                        continue;
                    }
                    let Ok(text) = std::fs::read_to_string(&name) else {
                        continue;
                    };
                    let log = WireLog {
                        thread_number: tn as u32,
                        log_type: log_type(kind),
                        compressed: 0,
                        log_offset: cfg.offset,
                        log_prio: cfg.prio,
                        name: name.clone(),
                        samples: parse(&text, cfg.offset, cfg.prio),
                        raw: Vec::new(),
                    };
                    let payload = if zlib {
                        log.encode_compressed()
                    } else {
                        log.encode()
                    };
                    out.extend(encode(op::IOLOG, 0, &payload));
                    let _ = std::fs::remove_file(&name);
                    sent.push(name);
                }
            }
        }
        first += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_read_back_as_fio_writes_them() {
        let text = "0, 20240, 1, 4096, 0\n5, 3054, 0, 4096, 1\n";
        let s = parse(text, false, false);
        assert_eq!(s.len(), 2);
        let log = WireLog {
            thread_number: 1,
            log_type: 2,
            compressed: 0,
            log_offset: false,
            log_prio: false,
            name: "x".into(),
            samples: s,
            raw: Vec::new(),
        };
        assert_eq!(log.text(), text);
        let with_offset = "3, 7, 1, 4096, 8192, 0x0000\n";
        let log = WireLog {
            log_offset: true,
            log_prio: true,
            samples: parse(with_offset, true, true),
            ..log
        };
        assert_eq!(log.text(), with_offset);
    }
}
