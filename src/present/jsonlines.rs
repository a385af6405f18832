//! `--live=FILE|-`: JSON Lines while the run goes, one object per snapshot interval
//! (`--status-interval`, or once a second), each with that interval's own numbers per
//! job and per group (IOPS, bandwidth, latency min/mean/max and p50/p90/p99/p99.9 per
//! direction, and per operation of the http engine under its iobench-only options) and
//! the totals so far; a last line (`"final": true`) carries what the
//! final report adds after the last interval, so the intervals add up to the final
//! report's totals. Each line is one valid JSON document, flushed as it is written.
//! Inside a study (sweep, compare) each line also says which run it belongs to
//! (`"iobench_study"`), and the study's runs share one destination ([`tag_next`]).

use super::window::{self, Windows};
use crate::stats::RunOutcome;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The version of a `--live` line's layout (docs/schema/live-line.schema.json): raised
/// when a key changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// Set when a live line could not be written (a full disk, a closed pipe): the run
/// goes on, and its exit status says so at the end ([`take_failure`]).
static FAILED: AtomicBool = AtomicBool::new(false);

/// True once after a live line could not be written since the last call.
pub fn take_failure() -> bool {
    FAILED.swap(false, Ordering::Relaxed)
}

/// What the next run's live lines belong to, set by a study before each of its runs:
/// the `iobench_study` object, and whether the destination already holds an earlier
/// run's lines (a file is then appended to, not truncated).
static NEXT_TAG: Mutex<Option<(Value, bool)>> = Mutex::new(None);

/// The next run opened by [`LiveLog::open`] is a study's: each of its lines carries
/// `study` as `"iobench_study"` (an iobench-only key, so a plain run's lines stay as
/// they were), and with `append` a file destination keeps the lines written before.
pub fn tag_next(study: Value, append: bool) {
    if let Ok(mut t) = NEXT_TAG.lock() {
        *t = Some((study, append));
    }
}

/// The writer of one run's live lines.
pub struct LiveLog {
    out: Box<dyn Write + Send>,
    /// The study run these lines belong to (see [`tag_next`]).
    study: Option<Value>,
    dest: String,
    prev: RunOutcome,
    started: Instant,
    last: Instant,
}

impl LiveLog {
    /// Opens `dest` (`-` is stdout; a file is created or truncated).
    pub fn open(dest: &str) -> Result<LiveLog, String> {
        let (study, append) = match NEXT_TAG.lock().ok().and_then(|mut t| t.take()) {
            Some((v, a)) => (Some(v), a),
            None => (None, false),
        };
        if dest != "-" {
            crate::safefs::no_foreign_link(std::path::Path::new(dest))
                .map_err(|e| format!("--live={dest}: {e}"))?;
        }
        let out: Box<dyn Write + Send> = if dest == "-" {
            Box::new(std::io::stdout())
        } else if append {
            Box::new(
                std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(dest)
                    .map_err(|e| format!("--live={dest}: cannot open it: {e}"))?,
            )
        } else {
            Box::new(
                crate::report::create_output(dest)
                    .map_err(|e| format!("--live={dest}: cannot create it: {e}"))?,
            )
        };
        let now = Instant::now();
        Ok(LiveLog {
            out,
            study,
            dest: dest.to_string(),
            prev: RunOutcome::default(),
            started: now,
            last: now,
        })
    }

    /// Writes the line of the interval that ends with `now`.
    pub fn record(&mut self, now: &RunOutcome, last: bool) {
        let t = Instant::now();
        let secs = t.duration_since(self.last).as_secs_f64();
        let (jobs, groups) = window::windows(&self.prev, now);
        let entry = |w: &Windows, name_key: &str| {
            let mut o = serde_json::Map::new();
            o.insert(name_key.into(), json!(w.name));
            o.insert("groupid".into(), json!(w.groupid));
            o.insert("clones".into(), json!(w.clones));
            for (d, name) in ["read", "write", "trim"].iter().enumerate() {
                if w.dirs[d].total_ios > 0 {
                    o.insert((*name).into(), w.dirs[d].value(secs, w.lat_key));
                }
            }
            // The http engine's classes, under its iobench-only options only: by group
            // (ops, sizes, endpoints, multipart), each with its time to first byte when
            // measured.
            if !w.http.is_empty() {
                let mut groups = serde_json::Map::new();
                for hw in &w.http {
                    let mut v = hw.lat.value(secs, "lat_ns");
                    if let Some(t) = &hw.ttfb {
                        let mut tv = t.value(secs, "lat_ns");
                        v["ttfb_ns"] = tv["lat_ns"].take();
                    }
                    let g = groups
                        .entry(hw.group.to_string())
                        .or_insert_with(|| Value::Object(Default::default()));
                    g[hw.name.as_str()] = v;
                }
                o.insert("iobench_http".into(), Value::Object(groups));
            }
            Value::Object(o)
        };
        let mut line = json!({
            "schema_version": SCHEMA_VERSION,
            "time_ms": t.duration_since(self.started).as_millis() as u64,
            "interval_ms": (secs * 1000.0).round() as u64,
            "final": last,
            "jobs": jobs.iter().map(|w| entry(w, "jobname")).collect::<Vec<_>>(),
            "groups": groups.iter().map(|w| entry(w, "name")).collect::<Vec<_>>(),
        });
        if let (Some(study), Value::Object(o)) = (&self.study, &mut line) {
            o.insert("iobench_study".into(), study.clone());
        }
        let mut text = line.to_string();
        text.push('\n');
        if let Err(e) = self
            .out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.flush())
        {
            if !FAILED.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "iobench: --live={}: {e}; the run goes on without its live lines and \
                     ends with a non-zero exit status",
                    self.dest
                );
            }
        }
        self.prev = RunOutcome {
            results: now.results.clone(),
            signal: None,
        };
        self.last = t;
    }
}
