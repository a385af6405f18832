//! The live status line fio redraws while jobs run:
//! `Jobs: 1 (f=1): [R(1)][45.5%][r=1024MiB/s][r=262k IOPS][eta 00m:06s]`.
//!
//! Pure pieces (state letters, the condensed job map, per-job ETA, the line itself) plus a
//! small stateful [`EtaLine`] that remembers what the previous redraw needs (line length
//! for blanking, rates since the last redraw, when to start a new line).

use super::board::{JobState, LiveJob, RateLimits};
use crate::cli::CliConfig;
use crate::num::{num2str, Unit};
use std::fmt::Write;

/// `RRRR__` → `R(4),_(2)`.
pub fn condense(states: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = states.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let mut n = 1;
        while i + n < chars.len() && chars[i + n] == c {
            n += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        let _ = write!(out, "{c}({n})");
        i += n;
    }
    out
}

/// `01h:02m:03s`, `00m:06s`, `01d:00h:00m:00s`; `--` when unknown.
pub fn eta_to_str(eta: Option<u64>) -> String {
    let Some(mut e) = eta else {
        return "--".to_string();
    };
    let s = e % 60;
    e /= 60;
    let m = e % 60;
    e /= 60;
    let h = e % 24;
    let d = e / 24;
    let mut out = String::new();
    if d > 0 {
        let _ = write!(out, "{d:02}d:");
    }
    if h > 0 || d > 0 {
        let _ = write!(out, "{h:02}h:");
    }
    let _ = write!(out, "{m:02}m:{s:02}s");
    out
}

/// A job's remaining seconds, fio's best guess: from its progress through its bytes,
/// capped by its runtime; a time-based job by its time alone.
pub fn job_eta(j: &LiveJob) -> u64 {
    match j.state {
        JobState::Running(_) => {
            let done: u64 = j.bytes.iter().sum();
            let mut perc = if j.bytes_total > 0 {
                (done as f64 / j.bytes_total as f64).min(1.0)
            } else {
                0.0
            };
            if j.time_based {
                perc = if j.runtime_s > 0 {
                    perc.min(j.elapsed_s as f64 / j.runtime_s as f64)
                } else {
                    0.0
                };
            }
            let mut eta = if perc == 0.0 {
                j.runtime_s
            } else {
                ((j.elapsed_s as f64 * (1.0 / perc)) as u64).saturating_sub(j.elapsed_s)
            };
            if j.runtime_s > 0 {
                eta = eta.min(j.runtime_s.saturating_sub(j.elapsed_s));
            }
            eta
        }
        JobState::Pending | JobState::SettingUp | JobState::Ramp if j.runtime_s > 0 => {
            j.runtime_s + j.ramp_s
        }
        _ => 0,
    }
}

/// Remembers the previous redraw; call [`EtaLine::render`] every `--eta-interval`.
#[derive(Debug, Default)]
pub struct EtaLine {
    prev_bytes: [u64; 3],
    prev_ios: [u64; 3],
    prev_ms: u64,
    frame: LineFrame,
    eta_good: bool,
    pub pow2: bool,
    pub bits: bool,
    pub sig_figs: u32,
    pub mixed: bool,
}

impl EtaLine {
    /// A line printer with the first job's unit settings.
    pub fn new(pow2: bool, bits: bool, sig_figs: u32, newline_ms: u64) -> Self {
        EtaLine {
            pow2,
            bits,
            sig_figs,
            frame: LineFrame::new(newline_ms),
            ..Default::default()
        }
    }

    /// The status text for `jobs` at `now_ms` since the run began (ending in `\r`; with
    /// `--eta-newline` a `\n` starts a fresh line now and then).
    pub fn render(&mut self, jobs: &[LiveJob], now_ms: u64) -> String {
        let elapsed = now_ms.div_ceil(1000);
        let mut nr_running = 0u32;
        let mut nr_ramp = 0u32;
        let mut nr_setting_up = 0u32;
        let mut files = 0u32;
        let mut bytes = [0u64; 3];
        let mut ios = [0u64; 3];
        let mut eta = 0u64;
        let mut eta_stone = 0u64;
        let mut states = String::new();
        let mut limits = RateLimits::default();
        for j in jobs {
            states.push(j.state.letter());
            if j.state.counts_running() {
                nr_running += 1;
                files += j.files_open;
                limits.add(&j.limits);
            }
            if j.state == JobState::Ramp {
                nr_ramp += 1;
            }
            if j.state == JobState::SettingUp {
                nr_setting_up += 1;
            }
            for d in 0..3 {
                let t = if self.mixed { 0 } else { d };
                bytes[t] += j.bytes[d];
                ios[t] += j.ios[d];
            }
            let e = if elapsed >= 3 {
                job_eta(j)
            } else {
                i32::MAX as u64
            };
            if j.state == JobState::Pending && j.stonewall {
                eta_stone += e;
            } else {
                eta = eta.max(e);
            }
        }
        let eta = eta.saturating_add(eta_stone);
        let known = eta < i32::MAX as u64;
        // A time_based job without a runtime runs until stopped: no ETA, no percentage.
        let endless = jobs
            .iter()
            .any(|j| j.state.counts_running() && j.time_based && j.runtime_s == 0);
        let span = now_ms.saturating_sub(self.prev_ms);
        let mut rate = [0u64; 3];
        let mut iops = [0u64; 3];
        for d in 0..3 {
            let db = bytes[d] - self.prev_bytes[d].min(bytes[d]);
            let di = ios[d] - self.prev_ios[d].min(ios[d]);
            rate[d] = (db * 1000).checked_div(span).unwrap_or(0) / 1024;
            iops[d] = (di * 1000).checked_div(span).unwrap_or(0);
        }
        self.prev_bytes = bytes;
        self.prev_ios = ios;
        self.prev_ms = now_ms;

        let (mut out, start) = self.frame.begin();
        let _ = write!(out, "Jobs: {nr_running} (f={files})");
        write_limits(&mut out, &limits, self.sig_figs as usize, self.pow2);
        if known && nr_running > 0 {
            let perc_str = if endless || (eta == 0 && !self.eta_good) || nr_ramp == nr_running {
                "-.-%".to_string()
            } else {
                self.eta_good = true;
                let mut mult = 100.0;
                if nr_setting_up > 0 {
                    mult *= 1.0 - nr_setting_up as f64 / nr_running as f64;
                }
                let perc = if elapsed > 0 {
                    elapsed as f64 / (elapsed + eta) as f64
                } else {
                    0.0
                };
                format!("{:3.1}%", perc * mult)
            };
            let _ = write!(out, ": [{}][{}]", condense(&states), perc_str);
            let unit = if self.bits {
                Unit::BitPerSec
            } else {
                Unit::BytePerSec
            };
            write_rates(&mut out, rate, iops, self.pow2, unit);
            let _ = write!(out, "[eta {}]", eta_to_str((!endless).then_some(eta)));
            let stalled: u64 = jobs.iter().map(|j| j.stalled as u64).sum();
            if stalled > 0 {
                let _ = write!(out, "[stalled={stalled}]");
            }
            self.frame.pad(&mut out, start);
        }
        self.frame.end(&mut out, now_ms);
        out
    }
}

/// The rate limits of the running jobs, summed: `, 200KiB/s-3072KiB/s` (bytes/s to
/// `sig_figs` digits) or `, 0-4000 IOPS`; nothing when none is set. Shared by the run's
/// line and the client's line over many servers.
pub fn write_limits(out: &mut String, limits: &RateLimits, sig_figs: usize, pow2: bool) {
    if limits.min_bps > 0 || limits.max_bps > 0 {
        let unit = Unit::BytePerSec;
        let _ = write!(
            out,
            ", {}-{}",
            num2str(limits.min_bps, sig_figs, 1, pow2, unit),
            num2str(limits.max_bps, sig_figs, 1, pow2, unit)
        );
    } else if limits.min_iops > 0 || limits.max_iops > 0 {
        let _ = write!(out, ", {}-{} IOPS", limits.min_iops, limits.max_iops);
    }
}

/// The rate and IOPS fields of the directions that moved: `[r=171MiB/s][r=43.7k IOPS]`,
/// or `[r=1MiB/s,w=2MiB/s][r=256,w=512 IOPS]`; `rate` in KiB/s, shown in `unit`.
pub fn write_rates(out: &mut String, rate: [u64; 3], iops: [u64; 3], pow2: bool, unit: Unit) {
    const NAMES: [char; 3] = ['r', 'w', 't'];
    let has = || (0..3).filter(|&d| rate[d] > 0 || iops[d] > 0);
    if has().next().is_none() {
        return;
    }
    let mut sep = '[';
    for d in has() {
        let _ = write!(
            out,
            "{sep}{}={}",
            NAMES[d],
            num2str(rate[d], 4, 1024, pow2, unit)
        );
        sep = ',';
    }
    sep = '[';
    out.push(']');
    for d in has() {
        let _ = write!(
            out,
            "{sep}{}={}",
            NAMES[d],
            num2str(iops[d], 4, 1, false, Unit::None)
        );
        sep = ',';
    }
    out.push_str(" IOPS]");
}

/// How a status line sits on the terminal from one redraw to the next, for the run's line
/// and the client's: each ends in `\r`, a shorter one is padded over a longer one, and
/// with `--eta-newline` a `\n` now and then keeps a line.
#[derive(Debug, Default)]
pub struct LineFrame {
    last_len: usize,
    newline_pending: bool,
    last_newline_ms: Option<u64>,
    /// `--eta-newline` in ms (0: never).
    newline_ms: u64,
}

impl LineFrame {
    pub fn new(newline_ms: u64) -> Self {
        LineFrame {
            newline_ms,
            ..Default::default()
        }
    }

    /// The start of a line: the text so far (a `\n` when one is due) and where the line
    /// itself begins in it.
    pub fn begin(&mut self) -> (String, usize) {
        let mut out = String::new();
        if self.newline_pending {
            self.newline_pending = false;
            self.last_len = 0;
            out.push('\n');
        }
        let start = out.len();
        (out, start)
    }

    /// Pads the line begun at `start` with blanks to the last line's length (so a
    /// shorter line covers a longer one after `\r`) and remembers this one's.
    pub fn pad(&mut self, out: &mut String, start: usize) {
        let len = out.len() - start;
        if len < self.last_len {
            out.push_str(&" ".repeat(self.last_len - len));
        }
        self.last_len = len;
    }

    /// Ends the line with `\r`, and asks for a fresh one next time when `--eta-newline`
    /// is due at `now_ms`.
    pub fn end(&mut self, out: &mut String, now_ms: u64) {
        out.push('\r');
        if newline_due(&mut self.last_newline_ms, self.newline_ms, now_ms) {
            self.newline_pending = true;
        }
    }
}

/// `--eta-newline`: true when `every_ms` have passed since the last fresh line (the first
/// call only starts the clock).
fn newline_due(last_ms: &mut Option<u64>, every_ms: u64, now_ms: u64) -> bool {
    match *last_ms {
        None => {
            *last_ms = Some(now_ms);
            false
        }
        Some(t) if every_ms > 0 && now_ms.saturating_sub(t) > every_ms => {
            *last_ms = Some(now_ms);
            true
        }
        _ => false,
    }
}

/// Whether to draw the status line: `--eta=always`, never with `--eta=never`, and by
/// default only when stdout is a terminal and carries the normal report.
pub fn enabled(cfg: &CliConfig, stdout_is_tty: bool) -> bool {
    let normal_on_stdout = cfg.wants_normal() && cfg.report_on_stdout();
    match cfg.eta.as_deref() {
        Some("never") => false,
        Some("always") => true,
        _ => normal_on_stdout && stdout_is_tty,
    }
}

/// True when stdout is a terminal.
pub fn stdout_is_tty() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(bytes: u64, total: u64, elapsed: u64) -> LiveJob {
        LiveJob {
            state: JobState::Running('R'),
            bytes: [bytes, 0, 0],
            ios: [bytes / 4096, 0, 0],
            bytes_total: total,
            elapsed_s: elapsed,
            runtime_s: 0,
            time_based: false,
            ramp_s: 0,
            files_open: 1,
            stonewall: false,
            limits: RateLimits::default(),
            stalled: 0,
        }
    }

    #[test]
    fn stalled_ios_show_only_when_some_are() {
        let mut l = EtaLine::new(true, false, 4, 0);
        let j = running(512 << 20, 1 << 30, 4);
        let plain = l.render(&[j], 4000);
        assert!(!plain.contains("stalled"), "{plain}");
        let mut stuck = j;
        stuck.stalled = 3;
        let line = l.render(&[stuck, j], 5000);
        assert!(line.trim_end().ends_with("][stalled=3]"), "{line}");
    }

    #[test]
    fn rate_limits_of_running_jobs_follow_the_job_count() {
        let mut l = EtaLine::new(true, false, 4, 0);
        let mut j = running(0, 1 << 30, 0);
        j.limits.max_iops = 2000;
        assert!(l
            .render(&[j, j], 1000)
            .starts_with("Jobs: 2 (f=2), 0-4000 IOPS"));
        j.limits = RateLimits {
            min_bps: 200 << 10,
            max_bps: 3 << 20,
            ..Default::default()
        };
        assert!(l
            .render(&[j], 2000)
            .starts_with("Jobs: 1 (f=1), 200KiB/s-3072KiB/s"));
        let mut done = j;
        done.state = JobState::Exited;
        assert!(l.render(&[done], 3000).starts_with("Jobs: 0 (f=0)\r"));
    }

    #[test]
    fn condensed_map_and_eta_text() {
        assert_eq!(condense("RRRR__m"), "R(4),_(2),m(1)");
        assert_eq!(condense(""), "");
        assert_eq!(eta_to_str(Some(6)), "00m:06s");
        assert_eq!(eta_to_str(Some(3723)), "01h:02m:03s");
        assert_eq!(eta_to_str(Some(86400)), "01d:00h:00m:00s");
        assert_eq!(eta_to_str(None), "--");
    }

    #[test]
    fn eta_from_progress_and_time() {
        assert_eq!(job_eta(&running(50, 100, 5)), 5);
        let mut tb = running(10, 100, 4);
        tb.time_based = true;
        tb.runtime_s = 10;
        // Time-based: progress is the elapsed share of the runtime, never the bytes.
        assert_eq!(job_eta(&tb), 6);
        let mut capped = running(1, 1000, 5);
        capped.runtime_s = 8;
        assert_eq!(job_eta(&capped), 3);
    }

    #[test]
    fn status_line_layout() {
        let mut l = EtaLine::new(true, false, 4, 0);
        let j = running(0, 1 << 30, 0);
        // Under 3 s the ETA is unknown: only the job count shows.
        assert_eq!(l.render(&[j], 1000), "Jobs: 1 (f=1)\r");
        let j = running(512 << 20, 1 << 30, 4);
        let line = l.render(&[j], 4000);
        assert_eq!(
            line,
            "Jobs: 1 (f=1): [R(1)][50.0%][r=171MiB/s][r=43.7k IOPS][eta 00m:04s]\r"
        );
    }
}
