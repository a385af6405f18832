//! The history database: one SQLite file (WAL mode, so readers never block the one
//! writer and a killed writer leaves the last committed state), its schema versioned by
//! `PRAGMA user_version` and brought up to date by [`migrate`] on every open, and every
//! save made in one transaction (`BEGIN IMMEDIATE`, waited for up to [`BUSY_MS`] when
//! another process holds the write lock).

use rusqlite::{params, params_from_iter, Connection, OptionalExtension, TransactionBehavior};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The schema version this build writes; [`migrate`] brings older files up to it.
pub const SCHEMA_VERSION: i64 = 2;

/// How long a save waits for another process's write to finish before failing.
pub const BUSY_MS: u64 = 10_000;

/// Each migration step, in order: step `k` takes a file at version `k` to `k + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the first schema.
    "CREATE TABLE studies (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        created INTEGER NOT NULL,
        command_line TEXT NOT NULL
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        study_id INTEGER REFERENCES studies(id) ON DELETE CASCADE,
        point TEXT,
        kind TEXT NOT NULL,
        started INTEGER NOT NULL,
        exit_code INTEGER NOT NULL,
        job_hash TEXT,
        host TEXT,
        kernel TEXT,
        target TEXT,
        device_model TEXT,
        filesystem TEXT,
        result TEXT NOT NULL
    );
    CREATE INDEX runs_match ON runs(job_hash, device_model, started);
    CREATE TABLE tags (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE baselines (
        name TEXT PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        set_at INTEGER NOT NULL
    );",
    // 1 -> 2: a baseline holds several runs (a gate needs each side's noise). Each
    // single-run baseline of version 1 becomes a baseline of that one run; `source` says
    // how the runs were picked. The new tables replace `baselines`, whose column
    // `run_id` cannot be dropped (a foreign key holds it).
    "CREATE TABLE baseline_sets (
        name TEXT PRIMARY KEY,
        set_at INTEGER NOT NULL,
        source TEXT NOT NULL
    );
    CREATE TABLE baseline_runs (
        name TEXT NOT NULL REFERENCES baseline_sets(name) ON DELETE CASCADE,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        PRIMARY KEY (name, run_id)
    );
    INSERT INTO baseline_sets (name, set_at, source)
        SELECT name, set_at, 'run ' || run_id FROM baselines;
    INSERT INTO baseline_runs (name, run_id) SELECT name, run_id FROM baselines;
    DROP TABLE baselines;",
];

/// Where the history lives without `--history`: `$XDG_DATA_HOME/iobench/history.sqlite`,
/// `~/.local/share/iobench/history.sqlite` when XDG_DATA_HOME is unset or empty.
pub fn default_path() -> Result<PathBuf, String> {
    let base =
        match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
                Some(h) => PathBuf::from(h).join(".local/share"),
                None => return Err(
                    "neither XDG_DATA_HOME nor HOME is set: give the database with --history PATH"
                        .into(),
                ),
            },
        };
    Ok(base.join("iobench").join("history.sqlite"))
}

/// One run to store: its result document (fio's JSON+ with `iobench_env`) and where it
/// came from.
#[derive(Debug, Clone)]
pub struct Record {
    /// `run`, `sweep`, `compare`, `quick` or `import`.
    pub kind: String,
    /// The point's label within its study (`bs=4k`, `A run 2`), if any.
    pub point: Option<String>,
    /// When the run started, in seconds since the epoch.
    pub started: i64,
    /// The exit status a plain run of it had.
    pub exit_code: i64,
    /// The whole document.
    pub doc: Value,
}

/// A study the points of a save belong to.
#[derive(Debug, Clone)]
pub struct StudyHead {
    pub kind: String,
    pub created: i64,
    pub command_line: String,
}

/// What runs are matched by: the options hash, the target's device model and
/// filesystem, the kernel, and (to tell hosts apart) the host name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub job_hash: Option<String>,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub target: Option<String>,
    pub device_model: Option<String>,
    pub filesystem: Option<String>,
}

impl Identity {
    /// Reads the identity from a document's `iobench_env` (all `None` without one: an
    /// imported fio result).
    pub fn of(doc: &Value) -> Identity {
        let env = &doc["iobench_env"];
        let s = |v: &Value| v.as_str().map(str::to_string);
        let t = &env["targets"][0];
        let device = &t["device"];
        Identity {
            job_hash: s(&env["options_sha256"]),
            host: s(&env["hostname"]),
            kernel: s(&env["kernel"]["release"]),
            target: s(&t["path"]),
            device_model: s(&device["model"]).or_else(|| s(&device["name"])),
            filesystem: s(&t["filesystem"]["type"]),
        }
    }

    /// The fields in which two runs differ, by name (empty: comparable).
    pub fn differences(&self, other: &Identity) -> Vec<&'static str> {
        let mut d = Vec::new();
        if self.job_hash != other.job_hash {
            d.push("options hash");
        }
        if self.device_model != other.device_model {
            d.push("device model");
        }
        if self.filesystem != other.filesystem {
            d.push("filesystem");
        }
        if self.kernel != other.kernel {
            d.push("kernel");
        }
        if self.host != other.host {
            d.push("host");
        }
        d
    }

    /// A field named as [`Identity::differences`] names it, as the output shows it (the
    /// options hash shortened to 12 digits; `-` when unknown).
    pub fn text(&self, field: &str) -> String {
        let v = match field {
            "options hash" => {
                return self
                    .job_hash
                    .as_deref()
                    .map(|h| h.chars().take(12).collect())
                    .unwrap_or_else(|| "-".into())
            }
            "device model" => &self.device_model,
            "filesystem" => &self.filesystem,
            "kernel" => &self.kernel,
            _ => &self.host,
        };
        v.clone().unwrap_or_else(|| "-".into())
    }

    /// Each field in which two runs differ with both values: `kernel (6.1 vs 6.6)`.
    pub fn differences_text(&self, other: &Identity) -> Vec<String> {
        self.differences(other)
            .iter()
            .map(|f| format!("{f} ({} vs {})", self.text(f), other.text(f)))
            .collect()
    }
}

/// One stored run, without its document.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub id: i64,
    pub study_id: Option<i64>,
    pub point: Option<String>,
    pub kind: String,
    pub started: i64,
    pub exit_code: i64,
    pub ident: Identity,
    pub tags: Vec<String>,
}

/// Which runs `list`, `export` and `trend` take.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub job_hash: Option<String>,
    pub target: Option<String>,
    pub host: Option<String>,
    pub tag: Option<String>,
    /// Seconds since the epoch, inclusive.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Only this run.
    pub id: Option<i64>,
    /// Only the runs of this study.
    pub study: Option<i64>,
}

/// A named baseline: its runs (oldest first), when it was set and how they were picked.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub name: String,
    pub runs: Vec<i64>,
    pub set_at: i64,
    /// `runs 3-7`, `study 4`, `the last 5 runs (options hash 8e59…)`.
    pub source: String,
}

/// An open history.
pub struct Store {
    conn: Connection,
}

fn sql(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

/// Brings the schema up to [`SCHEMA_VERSION`], one step per transaction; a file written
/// by a newer iobench is refused rather than guessed at.
pub fn migrate(conn: &mut Connection) -> Result<(), String> {
    loop {
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql)?;
        if v == SCHEMA_VERSION {
            return Ok(());
        }
        if !(0..=SCHEMA_VERSION).contains(&v) {
            return Err(format!(
                "schema version {v} is newer than this iobench knows ({SCHEMA_VERSION})"
            ));
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        // Another process may have migrated while this one waited for the lock.
        let again: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql)?;
        if again == v {
            tx.execute_batch(MIGRATIONS[v as usize]).map_err(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))
                .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
    }
}

/// `--since`/`--until`'s value as seconds since the epoch: a date (`2026-11-27`), a
/// date and time (`2026-11-27T18:00:00`, UTC), or a number of seconds; SQLite's date
/// functions read it.
pub fn parse_time(value: &str) -> Result<i64, String> {
    let v = value.trim();
    if let Ok(n) = v.parse::<i64>() {
        return Ok(n);
    }
    let c = Connection::open_in_memory().map_err(sql)?;
    let t: Option<i64> = c
        .query_row("SELECT CAST(strftime('%s', ?1) AS INTEGER)", [v], |r| {
            r.get(0)
        })
        .map_err(sql)?;
    t.ok_or_else(|| "not a date".to_string())
}

/// Formats seconds since the epoch as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn time_text(t: i64) -> String {
    Connection::open_in_memory()
        .and_then(|c| c.query_row("SELECT datetime(?1, 'unixepoch')", [t], |r| r.get(0)))
        .unwrap_or_else(|_| t.to_string())
}

/// Makes sure the history file at `path` is readable by its owner only: a new one is
/// created 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm` files the
/// database's mode), an existing one of ours that others may read is narrowed to 0600
/// (files of older versions were created 0644).
fn private_file(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let shown = |e: std::io::Error| format!("{}: {e}", path.display());
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let md = std::fs::metadata(path).map_err(shown)?;
            // SAFETY: geteuid has no preconditions.
            let me = unsafe { libc::geteuid() };
            if md.is_file() && md.uid() == me && md.mode() & 0o077 != 0 {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                    .map_err(shown)?;
                for side in ["-wal", "-shm"] {
                    let mut p = path.as_os_str().to_owned();
                    p.push(side);
                    let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
                }
            }
            Ok(())
        }
        Err(e) => Err(shown(e)),
    }
}

impl Store {
    /// Opens (creating it and its folder when missing) the history at `path`.
    pub fn open(path: &Path) -> Result<Store, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        private_file(path)?;
        let mut conn = Connection::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_MS))
            .map_err(sql)?;
        // journal_mode answers with the mode set, so it is read as a query.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!(
                "{}: cannot use write-ahead logging ({mode})",
                path.display()
            ));
        }
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(sql)?;
        migrate(&mut conn)?;
        Ok(Store { conn })
    }

    /// Stores `runs` (with their study, if any) in one transaction: all of them or, if
    /// the process dies first, none. Returns the runs' ids.
    pub fn save(&mut self, study: Option<&StudyHead>, runs: &[Record]) -> Result<Vec<i64>, String> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let study_id = match study {
            Some(s) => {
                tx.execute(
                    "INSERT INTO studies (kind, created, command_line) VALUES (?1, ?2, ?3)",
                    params![
                        s.kind,
                        s.created,
                        crate::options::redact::text(&s.command_line)
                    ],
                )
                .map_err(sql)?;
                Some(tx.last_insert_rowid())
            }
            None => None,
        };
        let mut ids = Vec::new();
        for r in runs {
            let id = Identity::of(&r.doc);
            // Whatever the document's origin (an imported fio report), no credential is
            // kept.
            let mut doc = r.doc.clone();
            crate::options::redact::json(&mut doc);
            tx.execute(
                "INSERT INTO runs (study_id, point, kind, started, exit_code, job_hash, host,
                    kernel, target, device_model, filesystem, result)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    study_id,
                    r.point,
                    r.kind,
                    r.started,
                    r.exit_code,
                    id.job_hash,
                    id.host,
                    id.kernel,
                    id.target,
                    id.device_model,
                    id.filesystem,
                    doc.to_string(),
                ],
            )
            .map_err(sql)?;
            ids.push(tx.last_insert_rowid());
        }
        test_pause();
        tx.commit().map_err(sql)?;
        Ok(ids)
    }

    /// The runs `f` takes, oldest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunRow>, String> {
        let mut q = String::from(
            "SELECT id, study_id, point, kind, started, exit_code, job_hash, host, kernel,
                target, device_model, filesystem,
                (SELECT group_concat(name, ',') FROM tags WHERE run_id = runs.id)
             FROM runs WHERE 1",
        );
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let text = |q: &mut String,
                    args: &mut Vec<rusqlite::types::Value>,
                    cond: &str,
                    v: &Option<String>| {
            if let Some(v) = v {
                q.push_str(cond);
                args.push(v.clone().into());
            }
        };
        text(&mut q, &mut args, " AND job_hash LIKE ?||'%'", &f.job_hash);
        if let Some(t) = &f.target {
            q.push_str(" AND (target = ? OR device_model = ?)");
            args.push(t.clone().into());
            args.push(t.clone().into());
        }
        text(&mut q, &mut args, " AND host = ?", &f.host);
        text(
            &mut q,
            &mut args,
            " AND EXISTS (SELECT 1 FROM tags WHERE run_id = runs.id AND name = ?)",
            &f.tag,
        );
        if let Some(s) = f.since {
            q.push_str(" AND started >= ?");
            args.push(s.into());
        }
        if let Some(id) = f.id {
            q.push_str(" AND id = ?");
            args.push(id.into());
        }
        if let Some(st) = f.study {
            q.push_str(" AND study_id = ?");
            args.push(st.into());
        }
        if let Some(u) = f.until {
            q.push_str(" AND started <= ?");
            args.push(u.into());
        }
        q.push_str(" ORDER BY started, id");
        let mut st = self.conn.prepare(&q).map_err(sql)?;
        let rows = st
            .query_map(params_from_iter(args), |r| {
                let tags: Option<String> = r.get(12)?;
                Ok(RunRow {
                    id: r.get(0)?,
                    study_id: r.get(1)?,
                    point: r.get(2)?,
                    kind: r.get(3)?,
                    started: r.get(4)?,
                    exit_code: r.get(5)?,
                    ident: Identity {
                        job_hash: r.get(6)?,
                        host: r.get(7)?,
                        kernel: r.get(8)?,
                        target: r.get(9)?,
                        device_model: r.get(10)?,
                        filesystem: r.get(11)?,
                    },
                    tags: tags
                        .map(|t| t.split(',').map(str::to_string).collect())
                        .unwrap_or_default(),
                })
            })
            .map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }

    /// One run and its document.
    pub fn get(&self, id: i64) -> Result<(RunRow, Value), String> {
        let row = self
            .list(&Filter {
                id: Some(id),
                ..Default::default()
            })?
            .into_iter()
            .next()
            .ok_or_else(|| format!("no run {id} in the history"))?;
        let text: String = self
            .conn
            .query_row("SELECT result FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .map_err(sql)?;
        let doc = serde_json::from_str(&text).map_err(|e| format!("run {id}: {e}"))?;
        Ok((row, doc))
    }

    /// A study's kind and command line.
    pub fn study(&self, study: i64) -> Result<Option<StudyHead>, String> {
        self.conn
            .query_row(
                "SELECT kind, created, command_line FROM studies WHERE id = ?1",
                [study],
                |r| {
                    Ok(StudyHead {
                        kind: r.get(0)?,
                        created: r.get(1)?,
                        command_line: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(sql)
    }

    fn exists(&self, id: i64) -> Result<(), String> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .map_err(sql)?;
        if n == 0 {
            return Err(format!("no run {id} in the history"));
        }
        Ok(())
    }

    /// Tags run `id` with `name` (a tag given twice is kept once).
    pub fn tag(&mut self, id: i64, name: &str) -> Result<(), String> {
        self.exists(id)?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO tags (run_id, name) VALUES (?1, ?2)",
                params![id, name],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// Makes `runs` the baseline called `name` (replacing what it held), in one
    /// transaction; `source` says how they were picked.
    pub fn set_baseline(
        &mut self,
        name: &str,
        runs: &[i64],
        source: &str,
        now: i64,
    ) -> Result<(), String> {
        for id in runs {
            self.exists(*id)?;
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        tx.execute("DELETE FROM baseline_sets WHERE name = ?1", [name])
            .map_err(sql)?;
        tx.execute(
            "INSERT INTO baseline_sets (name, set_at, source) VALUES (?1, ?2, ?3)",
            params![name, now, source],
        )
        .map_err(sql)?;
        for id in runs {
            tx.execute(
                "INSERT OR IGNORE INTO baseline_runs (name, run_id) VALUES (?1, ?2)",
                params![name, id],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// Every baseline, by name.
    pub fn baselines(&self) -> Result<Vec<Baseline>, String> {
        let mut st = self
            .conn
            .prepare(
                "SELECT name, set_at, source,
                    (SELECT group_concat(run_id, ',') FROM
                        (SELECT run_id FROM baseline_runs r WHERE r.name = b.name ORDER BY run_id))
                 FROM baseline_sets b ORDER BY name",
            )
            .map_err(sql)?;
        let rows = st
            .query_map([], |r| {
                let runs: Option<String> = r.get(3)?;
                Ok(Baseline {
                    name: r.get(0)?,
                    set_at: r.get(1)?,
                    source: r.get(2)?,
                    runs: runs
                        .unwrap_or_default()
                        .split(',')
                        .filter_map(|n| n.parse().ok())
                        .collect(),
                })
            })
            .map_err(sql)?
            .collect::<Result<_, _>>()
            .map_err(sql);
        rows
    }

    /// The baseline called `name`; an error when there is none, or when none of its runs
    /// is left.
    pub fn baseline(&self, name: &str) -> Result<Baseline, String> {
        let b = self
            .baselines()?
            .into_iter()
            .find(|b| b.name == name)
            .ok_or_else(|| {
                format!("no baseline named '{name}' (set one: history baseline set ID [ID...])")
            })?;
        if b.runs.is_empty() {
            return Err(format!("baseline '{name}' has no runs left"));
        }
        Ok(b)
    }

    /// Forgets the baseline `name` (its runs stay); false when there was none.
    pub fn remove_baseline(&mut self, name: &str) -> Result<bool, String> {
        let n = self
            .conn
            .execute("DELETE FROM baseline_sets WHERE name = ?1", [name])
            .map_err(sql)?;
        Ok(n > 0)
    }

    /// Deletes runs (and then studies left empty) in one transaction; a baseline's run is
    /// kept. Returns how many runs went.
    pub fn delete(&mut self, ids: &[i64]) -> Result<usize, String> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let mut n = 0;
        for id in ids {
            n += tx
                .execute(
                    "DELETE FROM runs WHERE id = ?1
                       AND id NOT IN (SELECT run_id FROM baseline_runs)",
                    [id],
                )
                .map_err(sql)?;
        }
        tx.execute(
            "DELETE FROM studies WHERE id NOT IN (SELECT study_id FROM runs WHERE study_id IS NOT NULL)",
            [],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(n)
    }
}

/// A test hook: with `IOBENCH_TEST_SAVE_PAUSE_MS` set, a save says so on stderr and
/// waits that long inside its transaction, before the commit, so that the suite can kill
/// the process mid-save and hold two saves open at once. Unset, it does nothing.
fn test_pause() {
    if let Some(ms) = std::env::var("IOBENCH_TEST_SAVE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        eprintln!("iobench: history: saving (test pause {ms} ms)");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iobench-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn version(s: &Store) -> i64 {
        s.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    }

    /// A plain run started at `started` whose document is `doc`.
    fn rec(started: i64, doc: Value) -> Record {
        Record {
            kind: "run".into(),
            point: None,
            started,
            exit_code: 0,
            doc,
        }
    }

    /// The history is its owner's alone (it holds command lines and reports), and no
    /// credential reaches it, whatever document is saved (an imported fio report holds
    /// its secrets in the clear).
    #[test]
    fn the_history_is_private_and_keeps_no_credential() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("private");
        let path = dir.join("h.sqlite");
        let mut s = Store::open(&path).unwrap();
        let head = StudyHead {
            kind: "sweep".into(),
            created: 1,
            command_line: "iobench sweep --http_s3_key=SEKRIT1 j.fio".into(),
        };
        let doc = serde_json::json!({"jobs": [{"job options": {"http_s3_key": "SEKRIT2"}}],
            "global options": {"http_swift_auth_token": "SEKRIT3"}});
        s.save(Some(&head), &[rec(1, doc)]).unwrap();
        drop(s);
        for f in ["h.sqlite", "h.sqlite-wal", "h.sqlite-shm"] {
            let p = dir.join(f);
            if let Ok(md) = std::fs::metadata(&p) {
                assert_eq!(md.permissions().mode() & 0o777, 0o600, "{f}");
            }
        }
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let s = Store::open(&path).unwrap();
        let (_, doc) = s.get(1).unwrap();
        let text = doc.to_string() + &s.study(1).unwrap().unwrap().command_line;
        for secret in ["SEKRIT1", "SEKRIT2", "SEKRIT3"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("<redacted>"), "{text}");
        drop(s);
        // An older, world-readable file is narrowed on its next open.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(Store::open(&path).unwrap());
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_new_file_is_migrated_and_a_newer_one_refused() {
        let dir = scratch("migrate");
        let path = dir.join("h.sqlite");
        let mut s = Store::open(&path).unwrap();
        assert_eq!(version(&s), SCHEMA_VERSION);
        let doc = serde_json::json!({"jobs": [], "iobench_env": {"options_sha256": "ab"}});
        assert_eq!(s.save(None, &[rec(1, doc)]).unwrap(), vec![1]);
        drop(s);
        // Opening again keeps the runs: no step runs twice.
        let s = Store::open(&path).unwrap();
        assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
        s.conn.execute_batch("PRAGMA user_version = 99").unwrap();
        drop(s);
        let e = Store::open(&path).err().unwrap();
        assert!(e.contains("schema version 99 is newer"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_version_1_file_keeps_its_single_run_baselines() {
        let dir = scratch("migrate1");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("h.sqlite");
        // A history as iobench wrote it at version 1: two runs, a baseline of one.
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO runs (id, kind, started, exit_code, job_hash, result)
                VALUES (1, 'run', 10, 0, 'ab', '{}'), (2, 'run', 20, 0, 'ab', '{}');
             INSERT INTO baselines (name, run_id, set_at) VALUES ('nightly', 2, 30);",
        )
        .unwrap();
        drop(c);
        let mut s = Store::open(&path).unwrap();
        assert_eq!(version(&s), SCHEMA_VERSION);
        let b = s.baseline("nightly").unwrap();
        assert_eq!(
            (b.runs, b.set_at, b.source.as_str()),
            (vec![2], 30, "run 2")
        );
        // The baseline's run is still kept by gc; the other goes.
        assert_eq!(s.delete(&[1, 2]).unwrap(), 1);
        // A baseline of several runs replaces it.
        let doc = || serde_json::json!({"jobs": []});
        let ids = s.save(None, &[rec(40, doc()), rec(50, doc())]).unwrap();
        s.set_baseline("nightly", &ids, "runs", 60).unwrap();
        assert_eq!(s.baseline("nightly").unwrap().runs, ids);
        assert!(s
            .set_baseline("x", &[99], "", 0)
            .unwrap_err()
            .contains("no run 99"));
        assert!(s.remove_baseline("nightly").unwrap());
        assert!(s.baseline("nightly").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn dates_read_and_print_in_utc() {
        assert_eq!(parse_time("1970-01-02").unwrap(), 86400);
        assert_eq!(parse_time("1970-01-01T00:01:00").unwrap(), 60);
        assert_eq!(parse_time("42").unwrap(), 42);
        assert!(parse_time("yesterday").is_err());
        assert_eq!(time_text(86400), "1970-01-02 00:00:00");
    }
}
