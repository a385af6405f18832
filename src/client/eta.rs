//! The client's live status line. As fio's client does, every `--eta-interval` the client
//! asks each running server for its status (SEND_ETA); once all of them answered (ETA), it
//! draws one `Jobs: …` line from their sum: job counts, open files, rates and rate limits
//! added up, the longest ETA.
//!
//! Where fio 3.33's sum is wrong, this one is not: fio adds the servers' elapsed times
//! (so two servers 5 s into a 10 s run show 66.7% done), keeps only the job map of the
//! server that answered last, and leaves the unit settings zero (so `r=34.4M` for
//! 34.4 MiB/s). Here elapsed is the longest, the map lists every server's jobs in the
//! order the servers were given, and the rates carry the servers' units (`r=34.4MiB/s`).
//! With one server only those units differ from fio's client line.
//!
//! When it is drawn follows iobench's own status line (`stats::status`): `--eta=never` never,
//! `--eta=always` always (on stderr when stdout carries JSON or terse, so they stay
//! parseable), and by default only when stdout is a terminal showing the normal report.

use super::args::ClientArgs;
use crate::fioproto::pdu::JobsEta;
use crate::num::Unit;
use crate::stats::board::RateLimits;
use crate::stats::status::{condense, eta_to_str, write_limits, write_rates};
use std::fmt::Write as _;
use std::io::Write as _;

/// fio's "unknown" ETA (`INT_MAX`): the line then shows the job count only.
const ETA_UNKNOWN: u64 = i32::MAX as u64;

/// Where the line goes, if anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Stdout,
    Stderr,
}

/// Whether and where to draw, from the command line and whether stdout is a terminal.
pub fn target(a: &ClientArgs, stdout_is_tty: bool) -> Option<Target> {
    let normal_on_stdout = a.formats.normal && a.output.is_none();
    match a.eta.as_deref() {
        Some("never") => None,
        Some("always") if a.formats.normal => Some(Target::Stdout),
        Some("always") => Some(Target::Stderr),
        _ if normal_on_stdout && stdout_is_tty => Some(Target::Stdout),
        _ => None,
    }
}

/// The most job letters kept from one server's map: far beyond any real job count
/// (fio allows 4096 jobs), and a bound on what a hostile server can make the client build.
const MAX_MAP: usize = 1 << 16;

/// `R(2),_(1)` → `RR_`: a server's condensed job map, one letter per job. Anything that
/// is not a map (a server that sends letters plainly) is kept as it is.
fn expand(run_str: &str) -> String {
    let mut out = String::new();
    let mut rest = run_str;
    while !rest.is_empty() && out.len() < MAX_MAP {
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        let after = chars.as_str();
        let count = after
            .strip_prefix('(')
            .and_then(|r| r.split_once(')'))
            .and_then(|(n, tail)| Some((n.parse::<usize>().ok()?, tail)));
        match count {
            Some((n, tail)) => {
                out.extend(std::iter::repeat_n(c, n.min(MAX_MAP - out.len())));
                rest = tail.strip_prefix(',').unwrap_or(tail);
            }
            _ => {
                out.push(c);
                rest = after;
            }
        }
    }
    out
}

/// The servers' statuses as one, in the order given (see the module text for how this
/// differs from fio's sum).
pub fn sum<'a>(parts: impl IntoIterator<Item = &'a JobsEta>) -> JobsEta {
    let mut t = JobsEta::default();
    let mut map = String::new();
    for (i, e) in parts.into_iter().enumerate() {
        if i == 0 {
            t.is_pow2 = e.is_pow2;
            t.unit_base = e.unit_base;
            t.sig_figs = e.sig_figs;
        }
        // Saturating: the figures come off the wire.
        t.nr_running = t.nr_running.saturating_add(e.nr_running);
        t.nr_ramp = t.nr_ramp.saturating_add(e.nr_ramp);
        t.nr_pending = t.nr_pending.saturating_add(e.nr_pending);
        t.nr_setting_up = t.nr_setting_up.saturating_add(e.nr_setting_up);
        t.files_open = t.files_open.saturating_add(e.files_open);
        t.nr_threads = t.nr_threads.saturating_add(e.nr_threads);
        for d in 0..3 {
            t.m_rate[d] = t.m_rate[d].saturating_add(e.m_rate[d]);
            t.t_rate[d] = t.t_rate[d].saturating_add(e.t_rate[d]);
            t.rate[d] = t.rate[d].saturating_add(e.rate[d]);
            t.m_iops[d] = t.m_iops[d].saturating_add(e.m_iops[d]);
            t.t_iops[d] = t.t_iops[d].saturating_add(e.t_iops[d]);
            t.iops[d] = t.iops[d].saturating_add(e.iops[d]);
        }
        t.elapsed_sec = t.elapsed_sec.max(e.elapsed_sec);
        t.eta_sec = t.eta_sec.max(e.eta_sec);
        map.push_str(&expand(&e.run_str));
    }
    t.run_str = condense(&map);
    t
}

/// The drawing state kept between lines (fio keeps the same in statics).
#[derive(Debug, Default)]
pub struct StatusLine {
    frame: crate::stats::status::LineFrame,
    eta_good: bool,
}

impl StatusLine {
    pub fn new(newline_ms: u64) -> StatusLine {
        StatusLine {
            frame: crate::stats::status::LineFrame::new(newline_ms),
            eta_good: false,
        }
    }

    /// The line for status `je` at `now_ms` since the client started, ending in `\r`
    /// (with `--eta-newline`, a `\n` starts a fresh line now and then).
    pub fn render(&mut self, je: &JobsEta, now_ms: u64) -> String {
        let known = je.eta_sec != ETA_UNKNOWN && je.eta_sec != u64::MAX;
        let (mut out, start) = self.frame.begin();
        let _ = write!(out, "Jobs: {} (f={})", je.nr_running, je.files_open);
        let sf = je.sig_figs.clamp(1, 10) as usize;
        let pow2 = je.is_pow2 != 0;
        let limits = RateLimits {
            min_bps: je.m_rate.iter().fold(0u64, |a, &b| a.saturating_add(b)),
            max_bps: je.t_rate.iter().fold(0u64, |a, &b| a.saturating_add(b)),
            min_iops: je.m_iops.iter().map(|&v| v as u64).sum::<u64>(),
            max_iops: je.t_iops.iter().map(|&v| v as u64).sum::<u64>(),
        };
        write_limits(&mut out, &limits, sf, pow2);
        if known && je.nr_running > 0 {
            let perc_str = if (je.eta_sec == 0 && !self.eta_good) || je.nr_ramp == je.nr_running {
                "-.-%".to_string()
            } else {
                self.eta_good = true;
                let mut mult = 100.0;
                if je.nr_setting_up > 0 {
                    mult *= 1.0 - je.nr_setting_up as f64 / je.nr_running as f64;
                }
                let perc = if je.elapsed_sec > 0 {
                    je.elapsed_sec as f64 / (je.elapsed_sec as f64 + je.eta_sec as f64)
                } else {
                    0.0
                };
                format!("{:3.1}%", perc * mult)
            };
            let _ = write!(out, ": [{}][{}]", je.run_str, perc_str);
            let unit = if je.unit_base == Unit::BitPerSec as u32 {
                Unit::BitPerSec
            } else {
                Unit::BytePerSec
            };
            write_rates(&mut out, je.rate, je.iops.map(u64::from), pow2, unit);
            let _ = write!(out, "[eta {}]", eta_to_str(Some(je.eta_sec)));
            self.frame.pad(&mut out, start);
        }
        self.frame.end(&mut out, now_ms);
        out
    }
}

/// Writes a line where it goes, at once.
pub fn draw(target: Target, line: &str) {
    match target {
        Target::Stdout => {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(line.as_bytes()).and_then(|_| o.flush());
        }
        Target::Stderr => {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(running: u32, map: &str, elapsed: u64, eta: u64, read_kib: u64) -> JobsEta {
        JobsEta {
            nr_running: running,
            files_open: running,
            nr_threads: running,
            run_str: map.into(),
            elapsed_sec: elapsed,
            eta_sec: eta,
            rate: [read_kib, 0, 0],
            iops: [(read_kib / 4) as u32, 0, 0],
            is_pow2: 1,
            unit_base: Unit::BytePerSec as u32,
            sig_figs: 4,
            ..Default::default()
        }
    }

    #[test]
    fn maps_expand_and_merge_in_server_order() {
        assert_eq!(expand("r(1),W(2)"), "rWW");
        assert_eq!(expand("RW_"), "RW_");
        assert_eq!(expand("R(x)"), "R(x)");
        assert_eq!(expand("R(99999999999),W(3)").len(), MAX_MAP);
        let t = sum([
            &server(2, "R(2)", 5, 5, 1024),
            &server(1, "w(1)", 4, 7, 2048),
        ]);
        assert_eq!(t.run_str, "R(2),w(1)");
        assert_eq!((t.nr_running, t.files_open, t.nr_threads), (3, 3, 3));
        assert_eq!((t.elapsed_sec, t.eta_sec), (5, 7));
        assert_eq!((t.rate[0], t.iops[0]), (3072, 768));
        // Units of the first server, not fio's zeroes.
        assert_eq!((t.is_pow2, t.unit_base, t.sig_figs), (1, 4, 4));
    }

    #[test]
    fn line_is_fios_layout() {
        let mut l = StatusLine::new(0);
        let starting = server(2, "R(2)", 1, ETA_UNKNOWN, 0);
        assert_eq!(l.render(&starting, 0), "Jobs: 2 (f=2)\r");
        let t = sum([
            &server(1, "r(1)", 5, 5, 35_200),
            &server(1, "W(1)", 5, 3, 0),
        ]);
        assert_eq!(
            l.render(&t, 1000),
            "Jobs: 2 (f=2): [r(1),W(1)][50.0%][r=34.4MiB/s][r=8800 IOPS][eta 00m:05s]\r"
        );
        // A shorter line blanks what the longer one left.
        let end = server(1, "_(1)", 9, 0, 0);
        let s = l.render(&end, 2000);
        assert!(
            s.starts_with("Jobs: 1 (f=1): [_(1)][100.0%][eta 00m:00s]    "),
            "{s:?}"
        );
        let mut limited = server(1, "R(1)", 1, ETA_UNKNOWN, 0);
        limited.t_iops = [2000, 0, 0];
        assert_eq!(l.render(&limited, 3000), "Jobs: 1 (f=1), 0-2000 IOPS\r");
    }

    #[test]
    fn eta_newline_starts_fresh_lines() {
        let mut l = StatusLine::new(1500);
        let s = server(1, "R(1)", 1, ETA_UNKNOWN, 0);
        assert_eq!(l.render(&s, 0), "Jobs: 1 (f=1)\r");
        assert_eq!(l.render(&s, 1000), "Jobs: 1 (f=1)\r");
        assert_eq!(l.render(&s, 2000), "Jobs: 1 (f=1)\r");
        assert_eq!(l.render(&s, 3000), "\nJobs: 1 (f=1)\r");
    }

    #[test]
    fn where_the_line_goes() {
        let mut a = ClientArgs::default();
        a.formats.normal = true;
        assert_eq!(target(&a, true), Some(Target::Stdout));
        assert_eq!(target(&a, false), None);
        a.eta = Some("always".into());
        assert_eq!(target(&a, false), Some(Target::Stdout));
        a.formats.normal = false;
        a.formats.json = true;
        assert_eq!(target(&a, false), Some(Target::Stderr));
        a.eta = None;
        assert_eq!(target(&a, true), None);
        a.eta = Some("never".into());
        a.formats.normal = true;
        assert_eq!(target(&a, true), None);
    }
}
