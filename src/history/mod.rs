//! The results history (`--save`, `iobench history`): every saved run's JSON+ with its
//! `iobench_env`, in a SQLite file ([`store`]). The one pipeline (`session::run`) hands
//! each finished run of a `--save` invocation to [`record`]; a study (`sweep`, `compare`,
//! `quick`) opens a [`Study`] first, so that its points are kept until it ends and stored
//! then as one study, in one transaction. [`sides`] picks the runs a comparison judges.

pub mod sides;
pub mod store;

use std::path::PathBuf;
use std::sync::Mutex;
use store::{Record, Store, StudyHead};

/// Where a run asked to be saved: `--history PATH`, else the default file.
pub fn destination(history: Option<&str>) -> Result<PathBuf, String> {
    match history {
        Some("") => {
            Err("option '--history' needs a path: expected --history=PATH (a SQLite file)".into())
        }
        Some(p) => Ok(PathBuf::from(p)),
        None => store::default_path(),
    }
}

/// The study being run in this process, collecting its points.
struct Open {
    head: StudyHead,
    /// Where the points go (the first point's destination) and the points.
    dest: Option<PathBuf>,
    points: Vec<Record>,
    /// The label the next point is stored under.
    next_label: Option<String>,
}

static OPEN: Mutex<Option<Open>> = Mutex::new(None);

fn open_study() -> std::sync::MutexGuard<'static, Option<Open>> {
    OPEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Seconds since the epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Stores one finished run at `dest`, or, while a study is open, keeps it as one of the
/// study's points. Returns the run's id when stored now.
pub fn record(dest: PathBuf, mut rec: Record) -> Result<Option<i64>, String> {
    let mut guard = open_study();
    if let Some(open) = guard.as_mut() {
        if open.dest.as_ref().is_some_and(|d| *d != dest) {
            return Err(format!(
                "one study saves to one history ({} already, not {})",
                open.dest
                    .as_ref()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
                dest.display()
            ));
        }
        open.dest = Some(dest);
        rec.kind = open.head.kind.clone();
        rec.point = open.next_label.take().or(rec.point);
        open.points.push(rec);
        return Ok(None);
    }
    drop(guard);
    let mut s = Store::open(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(s.save(None, &[rec])?.first().copied())
}

/// A study under way: its saved points are stored together by [`Study::finish`].
pub struct Study(());

impl Study {
    /// Opens the study `kind` (`sweep`, `compare`, `quick`) for this process.
    pub fn begin(kind: &str) -> Study {
        let argv: Vec<String> = std::env::args().collect();
        *open_study() = Some(Open {
            head: StudyHead {
                kind: kind.to_string(),
                created: now(),
                command_line: crate::options::redact::argv(&argv).join(" "),
            },
            dest: None,
            points: Vec::new(),
            next_label: None,
        });
        Study(())
    }

    /// Names the point the next saved run is.
    pub fn label_next(label: &str) {
        if let Some(open) = open_study().as_mut() {
            open.next_label = Some(label.to_string());
        }
    }

    /// Ends the study and stores its saved points (if any run was saved) in one
    /// transaction; `code` is the study's exit status, raised to 1 when the save fails.
    pub fn finish(self, code: u8) -> u8 {
        let Some(open) = open_study().take() else {
            return code;
        };
        let Some(dest) = open.dest else {
            return code;
        };
        let saved = Store::open(&dest).and_then(|mut s| s.save(Some(&open.head), &open.points));
        match saved {
            Ok(ids) => {
                eprintln!(
                    "iobench: history: {} {} saved as runs {}-{} in {}",
                    open.head.kind,
                    if ids.len() == 1 { "point" } else { "points" },
                    ids.first().unwrap_or(&0),
                    ids.last().unwrap_or(&0),
                    dest.display()
                );
                code
            }
            Err(e) => {
                eprintln!("iobench: history: {}: {e}", dest.display());
                code.max(1)
            }
        }
    }
}

/// The arguments of a study that takes `--save` and `--history`.
pub trait Saves {
    /// `--save`: store every run.
    fn save(&mut self);
    /// `--history=PATH`: where.
    fn history(&mut self, path: String);
}

/// The studies' `--save` flag (a plain run's is one of its own flags, `cli`).
pub const fn save_flag<A: Saves>() -> crate::flags::Flag<A> {
    crate::flags::Flag {
        names: &["--save"],
        takes: crate::flags::Takes::Nothing,
        form: "",
        help: "store every run in the results history, as one study\n\
               (see iobench history --help)",
        apply: |a, _| {
            a.save();
            Ok(())
        },
    }
}

/// The studies' `--history` flag.
pub const fn history_flag<A: Saves>() -> crate::flags::Flag<A> {
    crate::flags::Flag {
        names: &["--history"],
        takes: crate::flags::Takes::Value,
        form: "PATH",
        help: "with --save: the history's SQLite file\n\
               (default $XDG_DATA_HOME/iobench/history.sqlite)",
        apply: |a, v| {
            a.history(v.string());
            Ok(())
        },
    }
}
