//! Reports: pure functions from results to bytes, one module per format, and the glue that
//! picks the formats (`--output-format`, `--minimal`) and the destination (`--output`).

pub mod clients;
pub mod json;
pub mod normal;
pub mod run;
pub mod terse;

use crate::cli::{CliConfig, OutputFormat};
use crate::job::Job;
use crate::stats::group::RunSummary;
use std::time::SystemTime;

/// The version string of the fio 3.33 dialect, printed where fio prints `fio-3.33` (the
/// version line, JSON's `fio version`, terse field 2, `--version`). iobench names itself
/// and the fio release it follows, because the tools that wrap fio (bench-fio, KDiskMark)
/// look for `fio-3` in it before they run anything; the layout stays fio's.
pub const VERSION: &str = concat!(
    "iobench-",
    env!("CARGO_PKG_VERSION"),
    " (fio-3.33 compatible)"
);

/// The version string of a dialect. 3.33 keeps [`VERSION`] as it always was; from 3.34 on
/// the line starts with fio's own `fio-3.NN`, so a script matching `^fio-3` or reading
/// the release from the front (`fio-(\d+)\.(\d+)`) gets the release iobench speaks, and
/// iobench names itself after a space: `fio-3.42 (iobench-0.1.0)`.
pub fn version_line(rel: crate::defs::release::FioRelease) -> String {
    if rel == crate::defs::release::FioRelease::V3_33 {
        VERSION.to_string()
    } else {
        format!("fio-{rel} (iobench-{})", env!("CARGO_PKG_VERSION"))
    }
}

/// fio's note for a synchronous engine asked for a deeper queue, once per job clone
/// (empty when it does not apply).
pub fn sync_depth_notes(jobs: &[Job]) -> String {
    let mut out = String::new();
    for j in jobs {
        if j.exec.depth_capped() {
            for _ in 0..j.exec.numjobs.max(1) {
                out.push_str(
                    "note: both iodepth >= 1 and synchronous I/O engine are selected, \
                     queue depth will be capped at 1\n",
                );
            }
        }
    }
    out
}

/// fio's notes on a job's verify options, as it prints them while it reads the job (before
/// its header line): "multiple writers" once for a job whose clones write one file set,
/// and "read phase will never start" for each of its writing clones (`parent` is the
/// first, `false` the others) when the time runs out before a verify pass can.
pub fn verify_notes(job: &Job, parent: bool) -> String {
    // fio's option fix-ups print these for every clone, before the verify notes.
    let mut out: String = job.workload.notes.concat();
    let v = &job.verify;
    let p = job.workload.pattern;
    if v.method == crate::defs::verify_method::Method::None || !p.writes() || !v.do_verify {
        return out;
    }
    let f = &job.files;
    let unique_names = f.unique_filename
        && ["$jobname", "$jobnum", "$filenum"]
            .iter()
            .all(|k| f.filename_format.contains(k));
    if parent && job.exec.numjobs > 1 && (f.filename.is_some() || !unique_names) {
        out.push_str(
            "fio: multiple writers may overwrite blocks that belong to other jobs. \
             This can cause verification failures.\n",
        );
    }
    let ex = &job.exec;
    if ex.runtime_us > 0 && ex.time_based && !p.reads() && v.backlog == 0 {
        out.push_str(
            "fio: verification read phase will never start because write phase uses all \
             of runtime\n",
        );
    }
    out
}

/// Every job's [`verify_notes`], for the formats that print no header lines.
pub fn all_verify_notes(jobs: &[Job]) -> String {
    let mut out = String::new();
    for j in jobs {
        out.push_str(&verify_notes(j, true));
        for _ in 1..j.exec.numjobs.max(1) {
            out.push_str(&verify_notes(j, false));
        }
    }
    out
}

/// `Sun Nov 22 15:28:13 2026\n`, in local time, as C's ctime prints it.
pub fn ctime(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or(0);
    // SAFETY: tm is plain old data, filled by localtime_r before we read it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is thread safe.
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    if !ok {
        return "Thu Jan  1 00:00:00 1970\n".to_string();
    }
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}\n",
        DAYS[tm.tm_wday.rem_euclid(7) as usize],
        MONTHS[tm.tm_mon.rem_euclid(12) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

/// The C library's text for an errno.
pub fn strerror(errno: i32) -> String {
    std::io::Error::from_raw_os_error(errno)
        .to_string()
        .split(" (os error")
        .next()
        .unwrap_or("")
        .to_string()
}

/// The end-of-run report in every format asked for, in fio's order: terse, json, normal.
/// With `--status-interval` its JSON is one line, like the periodic reports before it, so
/// that the whole output is one JSON Lines stream; without, fio's multi-line layout.
/// With `--env`, the JSON gains the run's context as `iobench_env`, after fio's keys.
pub fn final_report(cfg: &CliConfig, jobs: &[Job], sum: &RunSummary) -> String {
    if cfg.env {
        let argv: Vec<String> = std::env::args().collect();
        let env = crate::context::env::collect(&argv, jobs);
        return report_text_env(cfg, jobs, sum, cfg.status_interval.is_some(), Some(&env));
    }
    report_text(cfg, jobs, sum, cfg.status_interval.is_some())
}

/// A report printed while the run goes (`--status-interval`, SIGUSR1): the final
/// report's layout, with its JSON always on one line.
pub fn interim_report(cfg: &CliConfig, jobs: &[Job], sum: &RunSummary) -> String {
    report_text(cfg, jobs, sum, true)
}

/// The report in every format asked for; `json_line`: JSON on one line.
fn report_text(cfg: &CliConfig, jobs: &[Job], sum: &RunSummary, json_line: bool) -> String {
    report_text_env(cfg, jobs, sum, json_line, None)
}

/// [`report_text`], with `env` (when given) added to the JSON document as `iobench_env`.
fn report_text_env(
    cfg: &CliConfig,
    jobs: &[Job],
    sum: &RunSummary,
    json_line: bool,
    env: Option<&serde_json::Value>,
) -> String {
    Formats::of(cfg).render(&LocalRun { jobs, sum, env }, json_line)
}

/// The formats a report is made in, picked once from `--output-format` (`--minimal`) and
/// `--terse-version`: the one picker of the local run's, the client's, the server's and
/// the MPI runner's reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Formats {
    pub normal: bool,
    pub json: bool,
    /// JSON+ (with histogram bins) rather than plain JSON; only with `json`.
    pub plus: bool,
    /// Terse lines, of this version.
    pub terse: Option<u32>,
}

impl Formats {
    /// The formats of a list as the flags give it (none: normal) and a terse version
    /// (none: 3).
    pub fn from_list(list: &[OutputFormat], terse_version: Option<u32>) -> Formats {
        let has = |f: OutputFormat| list.contains(&f);
        let plus = has(OutputFormat::JsonPlus);
        Formats {
            normal: list.is_empty() || has(OutputFormat::Normal),
            json: plus || has(OutputFormat::Json),
            plus,
            terse: has(OutputFormat::Terse).then(|| terse_version.unwrap_or(3)),
        }
    }

    /// The formats a run's flags ask for.
    pub fn of(cfg: &CliConfig) -> Formats {
        Formats::from_list(&cfg.formats, cfg.terse_version)
    }

    /// `r` in every format asked for, in fio's order: terse, JSON, normal. `json_line`:
    /// the JSON document on one line (JSON Lines), else fio's indented layout.
    pub fn render(&self, r: &dyn Render, json_line: bool) -> String {
        let mut out = String::new();
        if let Some(v) = self.terse {
            out.push_str(&r.terse(v));
        }
        if self.json {
            let doc = r.json(self.plus);
            if json_line {
                json::print_line(&mut out, &doc);
            } else {
                json::print(&mut out, &doc, 0);
            }
            out.push('\n');
        }
        if self.normal {
            out.push_str(&r.normal());
        }
        out
    }
}

/// Results that can be reported, one method per format; [`Formats::render`] picks which.
pub trait Render {
    /// Terse lines of `version` (2 to 5).
    fn terse(&self, version: u32) -> String;
    /// fio's JSON document (`plus`: JSON+).
    fn json(&self, plus: bool) -> json::Value;
    /// The normal, human-readable text.
    fn normal(&self) -> String;
}

/// A run made in this process: its jobs and summary, and for `--env` the run's context.
struct LocalRun<'a> {
    jobs: &'a [Job],
    sum: &'a RunSummary,
    env: Option<&'a serde_json::Value>,
}

impl Render for LocalRun<'_> {
    fn terse(&self, version: u32) -> String {
        terse::render(self.sum, version)
    }

    fn json(&self, plus: bool) -> json::Value {
        let mut doc = json::document(self.jobs, self.sum, plus);
        if let (Some(env), json::Value::Obj(pairs)) = (self.env, &mut doc) {
            pairs.push(("iobench_env".to_string(), json::Value::from_serde(env)));
        }
        doc
    }

    fn normal(&self) -> String {
        normal::render(self.sum)
    }
}

/// The terse version given, checked: fio knows 2, 3, 4 and 5.
pub fn check_terse_version(cfg: &CliConfig) -> Result<(), String> {
    cfg.terse_version
        .map_or(Ok(()), |v| terse_version(v).map(|_| ()))
}

/// `v` when fio knows it as a terse version, else the refusal every entry point prints
/// (the plain run's flags and the client's).
pub fn terse_version(v: u32) -> Result<u32, String> {
    match v {
        2..=5 => Ok(v),
        _ => Err(format!(
            "bad terse version {v}: expected 2, 3, 4 or 5 (--terse-version)"
        )),
    }
}

/// How long an output that is a FIFO may wait for its reader to open it.
const FIFO_READER_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Creates (or truncates) an output file, `--output` or `--live`. A FIFO is opened
/// without blocking: a reader that comes within [`FIFO_READER_WAIT`] is waited for, and
/// none is an error (ENXIO) rather than a run that hangs before it starts.
pub fn create_output(path: &str) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let is_fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    if !is_fifo {
        return std::fs::File::create(path);
    }
    let deadline = std::time::Instant::now() + FIFO_READER_WAIT;
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(f) => {
                use std::os::fd::AsRawFd;
                // SAFETY: fcntl on a descriptor we own; only O_NONBLOCK is cleared, so
                // that writes wait for a slow reader as they would on a file.
                unsafe {
                    let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
                }
                return Ok(f);
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if std::time::Instant::now() >= deadline {
                    return Err(crate::error::with_path(
                        &format!(
                            "{path}: a FIFO with no reader (none opened it within {} s)",
                            FIFO_READER_WAIT.as_secs()
                        ),
                        e,
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Where reports go: stdout, the `--output` file (created, truncated), or, when
/// `--output` ends with `/` (a directory, which fio refuses), one file per format in it
/// ([`PER_FORMAT_FILES`]).
pub struct Sink {
    file: Option<std::fs::File>,
    /// No `--output`, and `--live=-` has stdout: the reports go to stderr.
    stderr: bool,
    /// `--output=DIR/`: each format's file, in fio's order (terse, JSON, normal).
    per_format: Vec<(OutputFormat, std::fs::File)>,
}

/// The files `--output=DIR/` writes, by format: JSON and JSON+ share one.
pub const PER_FORMAT_FILES: [(OutputFormat, &str); 3] = [
    (OutputFormat::Terse, "report.terse"),
    (OutputFormat::Json, "report.json"),
    (OutputFormat::Normal, "report.txt"),
];

/// Whether `--output` names a directory for one file per format: it ends with `/`.
pub fn is_per_format(output: &str) -> bool {
    output.ends_with('/')
}

/// `--output=DIR/`: the directory (made if missing) and, in fio's order, a file in it for
/// each format of `f` ([`PER_FORMAT_FILES`]); a plain run's [`Sink`] and the client's
/// report open them alike.
pub fn per_format_files(
    dir: &str,
    f: Formats,
) -> std::io::Result<Vec<(OutputFormat, std::fs::File)>> {
    std::fs::create_dir_all(dir).map_err(|e| crate::error::with_path(dir, e))?;
    let mut files = Vec::new();
    for (format, name) in PER_FORMAT_FILES {
        let wanted = match format {
            OutputFormat::Terse => f.terse.is_some(),
            OutputFormat::Json => f.json,
            _ => f.normal,
        };
        if wanted {
            files.push((format, create_output(&format!("{dir}{name}"))?));
        }
    }
    Ok(files)
}

impl Sink {
    /// Opens `--output` if given: the file, or the directory (made if missing) and a file
    /// in it for each format asked for. Without it the reports go to stdout, or to
    /// stderr when `--live=-` writes its JSON Lines there.
    pub fn open(cfg: &CliConfig) -> std::io::Result<Sink> {
        let mut sink = Sink {
            file: None,
            stderr: cfg.live_on_stdout(),
            per_format: Vec::new(),
        };
        match &cfg.output {
            Some(dir) if is_per_format(dir) => {
                sink.per_format = per_format_files(dir, Formats::of(cfg))?;
            }
            Some(p) => sink.file = Some(create_output(p)?),
            None if sink.stderr => {}
            None => stdout_is_open()?,
        }
        Ok(sink)
    }

    /// A second handle on the same destination (a file shares its offset with this one),
    /// for reports printed while the run goes.
    pub fn try_clone(&self) -> std::io::Result<Sink> {
        Ok(Sink {
            file: match &self.file {
                Some(f) => Some(f.try_clone()?),
                None => None,
            },
            stderr: self.stderr,
            per_format: self
                .per_format
                .iter()
                .map(|(k, f)| Ok((*k, f.try_clone()?)))
                .collect::<std::io::Result<_>>()?,
        })
    }

    /// Writes a report made by `render` from the run's flags: as one text, or with
    /// `--output=DIR/` each format rendered alone into its own file.
    pub fn write_report(
        &mut self,
        cfg: &CliConfig,
        render: impl Fn(&CliConfig) -> String,
    ) -> std::io::Result<()> {
        if self.per_format.is_empty() {
            return self.write(&render(cfg));
        }
        let plus = Formats::of(cfg).plus;
        for (format, file) in &mut self.per_format {
            let mut one = cfg.clone();
            one.formats = vec![match format {
                OutputFormat::Json if plus => OutputFormat::JsonPlus,
                other => *other,
            }];
            one.append_terse = false;
            write_bytes(Some(file), false, &render(&one))?;
        }
        Ok(())
    }

    /// Writes `text` (the normal format's headers and notes) and flushes it: with
    /// `--output=DIR/`, into the normal format's file.
    pub fn write(&mut self, text: &str) -> std::io::Result<()> {
        if !self.per_format.is_empty() {
            let normal = self
                .per_format
                .iter_mut()
                .find(|(k, _)| *k == OutputFormat::Normal)
                .map(|(_, f)| f);
            return match normal {
                Some(f) => write_bytes(Some(f), false, text),
                None => Ok(()),
            };
        }
        write_bytes(self.file.as_mut(), self.stderr, text)
    }
}

/// Writes `text` to `file` (stdout when `None`, or stderr when `stderr`) and flushes it.
/// Names given as bytes that are not UTF-8 are written as those bytes again (see osstr), as fio prints them.
fn write_bytes(file: Option<&mut std::fs::File>, stderr: bool, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let raw;
    let bytes = if text.is_ascii() {
        text.as_bytes()
    } else {
        raw = crate::osstr::to_bytes(text);
        &raw[..]
    };
    match file {
        Some(f) => {
            f.write_all(bytes)?;
            f.flush()
        }
        None if stderr => {
            let mut o = std::io::stderr().lock();
            o.write_all(bytes)?;
            o.flush()
        }
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(bytes)?;
            o.flush()
        }
    }
}

/// Whether standard output was closed when iobench started (see [`note_stdout_closed`]).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records that descriptor 1 was closed when the process started (`iobench … >&-`). Only
/// the binary's entry point can see it: it looks before anything opens a file, then puts
/// /dev/null there as Rust's start-up code would (`src/main.rs`).
pub fn note_stdout_closed() {
    STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// True when standard output was closed at start: a report written there would be lost.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The error of a report bound for a standard output that was closed at start, where fio
/// loses the report and exits 0.
pub fn stdout_is_open() -> std::io::Result<()> {
    if stdout_closed() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "standard output is closed: the report has nowhere to go (use --output=FILE)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(args: &[&str]) -> Vec<Job> {
        let mut all = vec!["--name=x"];
        all.extend_from_slice(args);
        let inv = crate::cli::parse_args(&all).expect("arguments parse");
        vec![crate::job::resolve(&inv.jobs[0]).expect("job resolves")]
    }

    /// The note follows where `job::exec` capped the depth (the one place that does):
    /// a synchronous engine asked for more than 1, once per clone; never null or libaio.
    #[test]
    fn the_depth_note_reads_the_capped_depth() {
        let note = "queue depth will be capped at 1";
        let j = jobs(&["--ioengine=psync", "--iodepth=8", "--numjobs=2"]);
        assert_eq!(j[0].exec.iodepth, 1);
        assert_eq!(sync_depth_notes(&j).matches(note).count(), 2);
        for args in [
            &["--ioengine=psync", "--iodepth=1"][..],
            &["--ioengine=null", "--iodepth=8"],
            &["--ioengine=libaio", "--iodepth=8"],
        ] {
            let j = jobs(args);
            assert!(!j[0].exec.depth_capped(), "{args:?}");
            assert_eq!(sync_depth_notes(&j), "", "{args:?}");
        }
    }
}
