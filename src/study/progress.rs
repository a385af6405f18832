//! A study's progress on stderr: step i of n, the time elapsed and the time left, guessed
//! from the steps done (or from the steps' own estimates when every step left is bound by
//! time). On a terminal it is one line redrawn in place; otherwise (a log, a pipe) one line
//! per step, so a CI log shows where a long study is.

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// The progress of one study: `sweep`, `compare` or `quick`.
pub struct Progress {
    what: &'static str,
    /// What a step is called: `point`, `run`, `test`.
    unit: &'static str,
    total: usize,
    started: Instant,
    /// Seconds spent in the steps that ran (not those skipped), and how many there were.
    ran_s: f64,
    ran_n: usize,
    step_start: Option<Instant>,
    /// True when stderr is a terminal: the line is redrawn instead of repeated.
    redraw: bool,
    /// The line now drawn (on a terminal), to redraw after a note.
    shown: String,
}

impl Progress {
    /// Progress over `total` steps called `unit`, for the study named `what`.
    pub fn new(what: &'static str, unit: &'static str, total: usize) -> Progress {
        Progress {
            what,
            unit,
            total,
            started: Instant::now(),
            ran_s: 0.0,
            ran_n: 0,
            step_start: None,
            redraw: std::io::stderr().is_terminal(),
            shown: String::new(),
        }
    }

    /// The time left after step `i` (1-based) starts: `estimates` are the seconds of the
    /// steps left (this one included) when known; else the mean of the steps run so far.
    fn eta(&self, left: usize, estimates: Option<f64>) -> Option<f64> {
        match estimates {
            Some(s) => Some(s),
            None if self.ran_n > 0 => Some(self.ran_s / self.ran_n as f64 * left as f64),
            None => None,
        }
    }

    /// Step `i` (1-based) of the total starts: `label` says what it is, `estimates` as for
    /// [`Progress::eta`].
    pub fn step(&mut self, i: usize, label: &str, estimates: Option<f64>) {
        let left = self.total + 1 - i.min(self.total);
        let eta = self
            .eta(left, estimates)
            .map_or("ETA unknown until a step ends".to_string(), |s| {
                format!("ETA {}", duration_text(s))
            });
        let line = format!(
            "{}: {} {i}/{} {label} (elapsed {}, {eta})",
            self.what,
            self.unit,
            self.total,
            duration_text(self.started.elapsed().as_secs_f64())
        );
        self.step_start = Some(Instant::now());
        self.show(line);
    }

    /// The step started last has ended (a step that was skipped calls nothing).
    pub fn done(&mut self) {
        if let Some(t) = self.step_start.take() {
            self.ran_s += t.elapsed().as_secs_f64();
            self.ran_n += 1;
        }
    }

    /// A line of its own (a result, a warning), above the progress line.
    pub fn note(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.redraw && !self.shown.is_empty() {
            let _ = write!(err, "\r\x1b[K{text}\n{}", self.shown);
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    fn show(&mut self, line: String) {
        let mut err = std::io::stderr().lock();
        if self.redraw {
            let _ = write!(err, "\r\x1b[K{line}");
            self.shown = line;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// The study has ended: the redrawn line is cleared away.
    pub fn finish(&mut self) {
        if self.redraw && !self.shown.is_empty() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.shown.clear();
        }
    }

    /// The seconds since the study started.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// `90` → `1m30s`.
pub fn duration_text(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration_text(59.4), "59s");
        assert_eq!(duration_text(90.0), "1m30s");
        assert_eq!(duration_text(3700.0), "1h01m");
    }

    #[test]
    fn eta_from_estimates_else_from_the_steps_done() {
        let mut p = Progress::new("t", "step", 4);
        assert_eq!(p.eta(4, None), None);
        assert_eq!(p.eta(4, Some(8.0)), Some(8.0));
        p.ran_s = 6.0;
        p.ran_n = 2;
        assert_eq!(p.eta(2, None), Some(6.0));
    }
}
