//! The bandwidth, IOPS and latency logs of a server's run go to the client, as fio's server
//! sends them: one IOLOG message per log file, which the client writes as
//! `<name>.<hostname>`. The run writes its logs as a plain run does; afterwards they are
//! read back, sent, and removed from the server (fio's server keeps none either).

use crate::fioproto::iolog::{Sample, WireLog};
use crate::fioproto::{encode_as, op, Proto};
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

/// Reads a histogram log back (`time, ddir, bs, bin…`, bins already summed in strides of
/// 2^`coarseness`) as fio's wire form wants it: full bucket arrays. Each summed bin goes to
/// the first bucket of its stride, so the client, summing the same strides, writes the
/// very lines the run wrote.
fn parse_hist(text: &str, coarseness: u32) -> (Vec<Sample>, Vec<Vec<u64>>) {
    let stride = 1usize << coarseness.min(6);
    let (mut samples, mut hist) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let f: Vec<u64> = line
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() < 4 {
            continue;
        }
        let mut bins = vec![0u64; crate::stats::hist::PLAT_NR];
        for (k, v) in f[3..].iter().enumerate() {
            if let Some(b) = bins.get_mut(k * stride) {
                *b = *v;
            }
        }
        samples.push(Sample {
            time_ms: f[0],
            value: 0,
            ddir: f[1] as u32,
            priority: 0,
            bs: f[2],
            offset: None,
        });
        hist.push(bins);
    }
    (samples, hist)
}

/// The IOLOG messages of every log the jobs wrote, in job and clone order, compressed when
/// the client can inflate them (`zlib`); each file sent is removed.
pub fn messages(jobs: &[Job], zlib: bool, p: Proto) -> Vec<u8> {
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
            if let Some(prefix) = cfg.hist.as_deref() {
                let name = if cfg.per_job {
                    format!("{prefix}_clat_hist.{tn}.log")
                } else {
                    format!("{prefix}_clat_hist.log")
                };
                if !sent.contains(&name) {
                    if let Ok(text) = std::fs::read_to_string(&name) {
                        let (samples, hist) = parse_hist(&text, cfg.hist_coarse);
                        let log = WireLog {
                            thread_number: tn as u32,
                            log_type: crate::fioproto::iolog::LOG_TYPE_HIST,
                            compressed: 0,
                            log_offset: false,
                            log_prio: false,
                            name: name.clone(),
                            samples,
                            raw: Vec::new(),
                            hist,
                            hist_coarseness: cfg.hist_coarse.min(6),
                            per_job_logs: cfg.per_job,
                        };
                        let payload = if zlib {
                            log.encode_compressed_as(p)
                        } else {
                            log.encode_as(p)
                        };
                        out.extend(encode_as(p.number(), op::IOLOG, 0, &payload));
                        let _ = std::fs::remove_file(&name);
                        sent.push(name);
                    }
                }
            }
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
                        hist: Vec::new(),
                        hist_coarseness: 0,
                        per_job_logs: cfg.per_job,
                    };
                    let payload = if zlib {
                        log.encode_compressed_as(p)
                    } else {
                        log.encode_as(p)
                    };
                    out.extend(encode_as(p.number(), op::IOLOG, 0, &payload));
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
    fn histogram_lines_travel_unchanged() {
        // Coarseness 4: 1856 / 16 = 116 summed bins a line.
        let bins: Vec<String> = (0..116).map(|k| (k * 7 % 5).to_string()).collect();
        let text = format!("500, 0, 4096, {}\n", bins.join(", "));
        let (samples, hist) = parse_hist(&text, 4);
        let log = WireLog {
            thread_number: 1,
            log_type: crate::fioproto::iolog::LOG_TYPE_HIST,
            compressed: 0,
            log_offset: false,
            log_prio: false,
            name: "h_clat_hist.1.log".into(),
            samples,
            raw: Vec::new(),
            hist,
            hist_coarseness: 4,
            per_job_logs: true,
        };
        let back = WireLog::decode(&log.encode_compressed()).unwrap();
        assert_eq!(back.text(), text);
    }

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
            hist: Vec::new(),
            hist_coarseness: 0,
            per_job_logs: true,
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
