//! Reading a version 2 or 3 iolog for replay, applying `replay_redirect`, `replay_scale`,
//! `replay_align` and `replay_time_scale`/`replay_no_stall` to the recorded entries.

use super::{VERSION2, VERSION3};
use crate::job::workload::Replay;
use crate::job::Ddir;
use std::io::{BufRead, BufReader};

/// One I/O to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    pub ddir: Ddir,
    /// Index into [`IoLog::files`].
    pub file: usize,
    pub offset: u64,
    pub len: u64,
    /// Microseconds to wait after the previous I/O was issued (0 without stalls).
    pub delay_us: u64,
}

/// A parsed log: the files it names (in order of their `add`) and the I/O.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IoLog {
    pub files: Vec<String>,
    pub entries: Vec<LogEntry>,
    /// Entries dropped because iobench does not replay them (sync, datasync).
    pub skipped: usize,
}

/// Reads the log for clone `clone_index` (a `:`-separated `read_iolog` list gives one
/// log per clone, cycling).
pub fn read_iolog(list: &str, clone_index: u32, opts: &Replay) -> Result<IoLog, String> {
    let names: Vec<&str> = list.split(':').filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        return Err("no log file named".into());
    }
    let path = names[clone_index as usize % names.len()];
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    parse(BufReader::new(file), path, opts)
}

/// Parses a log from `input`; `path` names it in messages.
pub fn parse(input: impl BufRead, path: &str, opts: &Replay) -> Result<IoLog, String> {
    let mut lines = input.lines().enumerate();
    let header = match lines.next() {
        Some((_, Ok(l))) => l,
        Some((_, Err(e))) => return Err(format!("{path}: {e}")),
        None => return Err(format!("{path}: empty log")),
    };
    let v3 = if header.starts_with(VERSION3) {
        true
    } else if header.starts_with(VERSION2) {
        false
    } else {
        return Err(format!(
            "{path}:1: not a fio version 2 or 3 iolog (version 1 logs are not supported)"
        ));
    };
    let mut log = IoLog::default();
    if let Some(r) = &opts.redirect {
        log.files.push(r.clone());
    }
    let mut last_ttime = 0u64;
    let mut pending_delay = 0u64;
    let mut last_wait_ms = 0u64;
    for (i, line) in lines {
        let line = line.map_err(|e| format!("{path}: {e}"))?;
        let at = || format!("{path}:{}", i + 1);
        let mut parts = line.split_whitespace();
        if v3 {
            let Some(t) = parts.next() else { continue };
            let t: u64 = t.parse().map_err(|_| format!("{}: bad time '{t}'", at()))?;
            let delay = if last_ttime == 0 || opts.no_stall || t < last_ttime {
                0
            } else if opts.time_scale == 100 {
                t - last_ttime
            } else {
                ((t - last_ttime) as f64 * (100.0 / opts.time_scale as f64)) as u64
            };
            last_ttime = t;
            pending_delay += delay;
        }
        let rest: Vec<&str> = parts.collect();
        let (fname, act, nums) = match rest.as_slice() {
            [f, a] => (*f, *a, None),
            [f, a, o, l] => (*f, *a, Some((*o, *l))),
            [] => continue,
            _ => return Err(format!("{}: cannot read '{line}'", at())),
        };
        let fname = opts.redirect.as_deref().unwrap_or(fname);
        let index = |log: &mut IoLog| match log.files.iter().position(|f| f == fname) {
            Some(p) => p,
            None => {
                log.files.push(fname.to_string());
                log.files.len() - 1
            }
        };
        let Some((o, l)) = nums else {
            match act {
                "add" | "open" | "close" | "unlink" => {
                    index(&mut log);
                }
                _ => return Err(format!("{}: unknown file action '{act}'", at())),
            }
            continue;
        };
        let offset: u64 = o
            .parse()
            .map_err(|_| format!("{}: bad offset '{o}'", at()))?;
        let len: u64 = l
            .parse()
            .map_err(|_| format!("{}: bad length '{l}'", at()))?;
        let ddir = match act {
            "read" => Ddir::Read,
            "write" => Ddir::Write,
            "trim" => Ddir::Trim,
            "sync" | "datasync" => {
                log.skipped += 1;
                continue;
            }
            "wait" if !v3 => {
                // A version 2 wait holds until `offset` ms after the start.
                if !opts.no_stall {
                    pending_delay += offset.saturating_sub(last_wait_ms) * 1000;
                    last_wait_ms = last_wait_ms.max(offset);
                }
                continue;
            }
            _ => return Err(format!("{}: unknown action '{act}'", at())),
        };
        let mut offset = if opts.scale > 1 {
            offset / opts.scale
        } else {
            offset
        };
        if opts.align != 0 {
            offset &= !(opts.align - 1);
        }
        let file = index(&mut log);
        log.entries.push(LogEntry {
            ddir,
            file,
            offset,
            len,
            delay_us: if opts.no_stall { 0 } else { pending_delay },
        });
        pending_delay = 0;
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Replay {
        Replay {
            time_scale: 100,
            scale: 1,
            ..Default::default()
        }
    }

    #[test]
    fn reads_v3_with_delays_and_options() {
        let text = "fio version 3 iolog\n10 f add\n20 f open\n100 f read 8192 4096\n\
                    300 f write 12288 4096\n400 f close\n";
        let log = parse(text.as_bytes(), "t", &opts()).unwrap();
        assert_eq!(log.files, vec!["f".to_string()]);
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.entries[0].offset, 8192);
        assert_eq!(log.entries[0].delay_us, 90);
        assert_eq!(log.entries[1].delay_us, 200);
        let mut o = opts();
        o.time_scale = 200;
        o.scale = 2;
        o.align = 8192;
        o.redirect = Some("g".into());
        let log = parse(text.as_bytes(), "t", &o).unwrap();
        assert_eq!(log.files, vec!["g".to_string()]);
        assert_eq!(log.entries[1].offset, 0);
        assert_eq!(log.entries[1].delay_us, 100);
        o.no_stall = true;
        let log = parse(text.as_bytes(), "t", &o).unwrap();
        assert_eq!(log.entries[1].delay_us, 0);
    }

    #[test]
    fn reads_v2_and_rejects_v1() {
        let text = "fio version 2 iolog\nf add\nf open\nf write 0 512\nf close\n";
        let log = parse(text.as_bytes(), "t", &opts()).unwrap();
        assert_eq!(log.entries[0].len, 512);
        assert!(parse("0 1 2\n".as_bytes(), "t", &opts()).is_err());
    }
}
