//! Where a job does its I/O: file names, directories, devices and their sizes, and how the
//! runner prepares them (layout, fallocate, cache dropping, unlinking).

use crate::defs::reader::Reader;
use crate::error::JobError;
use crate::options::table::{
    ALLOW_FILE_CREATE, ALLOW_MOUNTED_WRITE, CREATE_FSYNC, CREATE_ONLY, CREATE_ON_OPEN,
    CREATE_SERIALIZE, DIRECTORY, FALLOCATE, FILENAME, FILENAME_FORMAT, FILESIZE, FILETYPE,
    FILE_APPEND, INVALIDATE, LOCKFILE, NRFILES, OPENDIR, OPENFILES, OVERWRITE, PRE_READ,
    UNIQUE_FILENAME, UNLINK, UNLINK_EACH_LOOP,
};

/// How file space is reserved when a file is laid out (`fallocate=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
    None,
    /// `posix_fallocate`.
    Posix,
    /// `fallocate(2)` with mode 0 (fio's default, "native").
    Native,
    /// `fallocate(2)` with FALLOC_FL_KEEP_SIZE.
    Keep,
    /// `ftruncate(2)` to the file's size: no blocks reserved, only the size set.
    Truncate,
}

/// What `filetype` (fio 3.41) says every file of the job is, so nothing looks (no stat):
/// the file is then sized and prepared as that kind, whatever it really is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclaredKind {
    File,
    Block,
    Char,
}

impl DeclaredKind {
    fn from_word(w: Option<&str>) -> Option<DeclaredKind> {
        match w?.trim().to_ascii_lowercase().as_str() {
            "file" => Some(DeclaredKind::File),
            "block" => Some(DeclaredKind::Block),
            "char" => Some(DeclaredKind::Char),
            _ => None,
        }
    }
}

/// The resolved file options.
#[derive(Debug, Clone)]
pub struct FileOpts {
    pub filename: Option<String>,
    /// `filetype` as it stood when the files were named: fio types a `filename` (or
    /// `opendir`) entry as it parses it, so a `filetype` after it does not apply to it;
    /// generated names are made after the whole job is read.
    pub filetype: Option<DeclaredKind>,
    pub directory: Option<String>,
    /// `opendir`: every regular file below this directory is one of the job's files.
    pub opendir: Option<String>,
    /// `filesize`, or the low end of a `filesize=low-high` range.
    pub filesize: Option<u64>,
    /// The high end of a `filesize` range (equal to `filesize` when it is one size).
    pub filesize_high: u64,
    /// Pattern for generated names: `$jobname`, `$jobnum`, `$filenum`.
    pub filename_format: String,
    /// `unique_filename` (on unless set off): a server or MPI rank makes the names its own.
    pub unique_filename: bool,
    pub nrfiles: u32,
    /// How many of the job's files may be open at once (`openfiles`; 0 = all of them).
    /// Fewer than the files makes the worker open and close them as it goes, as fio does.
    pub openfiles: u32,
    pub fallocate: Fallocate,
    /// Drop the files' cached pages before the I/O starts.
    pub invalidate: bool,
    /// Read the files once into the page cache before the I/O starts.
    pub pre_read: bool,
    /// Create files when the worker opens them instead of laying them out first.
    pub create_on_open: bool,
    /// Lay files out one job after another before the run (`create_serialize`, on by
    /// default); off, each clone lays out its own files when it starts.
    pub create_serialize: bool,
    /// fsync each file after laying it out (`create_fsync`, on by default).
    pub create_fsync: bool,
    /// Write a write job's files in full before it starts (`overwrite`), so its writes
    /// replace data instead of filling fresh blocks; reading jobs always get that.
    pub overwrite: bool,
    /// Start I/O at the end of each regular file (`file_append`), as `offset` = its size.
    pub file_append: bool,
    /// Only lay the files out; do no I/O (`create_only`).
    pub create_only: bool,
    /// Delete files this run created when the job ends.
    pub unlink: bool,
    /// Delete and recreate the files before every loop after the first
    /// (`unlink_each_loop`), so each loop writes to fresh files.
    pub unlink_each_loop: bool,
    pub allow_file_create: bool,
    pub allow_mounted_write: bool,
    /// `lockfile`: lock each file around each I/O (see `run::filelock`).
    pub lock: LockMode,
}

impl FileOpts {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let fallocate = match r.choice(&FALLOCATE).as_deref() {
            None | Some("native") | Some("1") => Fallocate::Native,
            Some("none") | Some("0") => Fallocate::None,
            Some("posix") => Fallocate::Posix,
            Some("keep") => Fallocate::Keep,
            Some("truncate") => Fallocate::Truncate,
            Some(other) => {
                return Err(r.invalid(
                    &FALLOCATE,
                    format!("'{other}' is not one of none, native, posix, keep, truncate, 0, 1"),
                ))
            }
        };
        let pre_read = r.bool(&PRE_READ)?;
        let (filesize, filesize_high) = match r.text(&FILESIZE) {
            None => (None, 0),
            Some(t) => {
                let t = t.trim();
                let cut = t
                    .char_indices()
                    .skip(1)
                    .find(|&(_, c)| c == '-' || c == ':')
                    .map(|(i, _)| i);
                let (a, b) = match cut {
                    Some(i) => (&t[..i], &t[i + 1..]),
                    None => (t, t),
                };
                let (a, b) = (r.size_of(a, &FILESIZE)?, r.size_of(b, &FILESIZE)?);
                let (lo, hi) = (a.min(b), a.max(b));
                if lo == 0 {
                    (None, 0)
                } else {
                    (Some(lo), hi)
                }
            }
        };
        let named_at = if r.is_set(&FILENAME) {
            &FILENAME
        } else {
            &OPENDIR
        };
        Ok(FileOpts {
            filetype: DeclaredKind::from_word(r.raw.value_at(&FILETYPE, named_at)),
            filename: r.text(&FILENAME).filter(|s| !s.is_empty()),
            directory: r.text(&DIRECTORY).filter(|s| !s.is_empty()),
            opendir: r.text(&OPENDIR).filter(|s| !s.is_empty()),
            filesize,
            filesize_high,
            filename_format: r.string(&FILENAME_FORMAT),
            unique_filename: !r.is_set(&UNIQUE_FILENAME) || r.bool(&UNIQUE_FILENAME)?,
            nrfiles: r.num(&NRFILES)?.max(1) as u32,
            openfiles: r.num(&OPENFILES)?.max(0) as u32,
            fallocate,
            invalidate: r.bool(&INVALIDATE)? && !pre_read,
            pre_read,
            create_on_open: r.bool(&CREATE_ON_OPEN)?,
            create_serialize: r.bool(&CREATE_SERIALIZE)?,
            create_fsync: r.bool(&CREATE_FSYNC)?,
            overwrite: r.bool(&OVERWRITE)?,
            file_append: r.bool(&FILE_APPEND)?,
            create_only: r.bool(&CREATE_ONLY)?,
            unlink: r.bool(&UNLINK)?,
            unlink_each_loop: r.bool(&UNLINK_EACH_LOOP)?,
            allow_file_create: r.bool(&ALLOW_FILE_CREATE)?,
            allow_mounted_write: r.bool(&ALLOW_MOUNTED_WRITE)?,
            lock: LockMode::from_word(r.choice(&LOCKFILE).as_deref()),
        })
    }

    /// The names of the files clone `clone` of job `job_name` works on, as fio makes
    /// them: the `filename` list (split at ':', put under `directory` when relative), or
    /// `nrfiles` names from `filename_format` under `directory`.
    pub fn paths(&self, job_name: &str, clone: u32) -> Vec<String> {
        let join = |f: &str| match &self.directory {
            Some(d) if !f.starts_with('/') => format!("{}/{f}", d.trim_end_matches('/')),
            _ => f.to_string(),
        };
        match &self.filename {
            Some(list) => split_names(list).iter().map(|n| join(n)).collect(),
            // The files `opendir` finds take the place of generated names.
            None if self.opendir.is_some() => Vec::new(),
            None => (0..self.nrfiles)
                .map(|n| {
                    let name = self
                        .filename_format
                        .replace("$jobname", job_name)
                        .replace("$jobnum", &clone.to_string())
                        .replace("$filenum", &n.to_string())
                        .replace("$clientuid", "0");
                    join(&name)
                })
                .collect(),
        }
    }

    /// Every target of a job with `numjobs` clones, each named once, in the order the
    /// clones name them: what the run opens, for finding the devices it works on (disk
    /// statistics). With `opendir`, the directory stands for the files it holds.
    pub fn all_paths(&self, job_name: &str, numjobs: u32) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut out: Vec<String> = Vec::new();
        for clone in 0..numjobs.max(1) {
            for p in self.paths(job_name, clone) {
                if seen.insert(p.clone()) {
                    out.push(p);
                }
            }
        }
        if let Some(dir) = self.opendir.as_ref().filter(|_| self.filename.is_none()) {
            out.push(dir.clone());
        }
        out
    }
}

/// The regular files below `dir`, depth first in directory order (fio's `opendir`).
pub fn files_under(dir: &str) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = format!(
            "{}/{}",
            dir.trim_end_matches('/'),
            entry.file_name().to_string_lossy()
        );
        let kind = match entry.file_type() {
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if kind.is_file() {
            out.push(path);
        } else if kind.is_dir() {
            out.extend(files_under(&path)?);
        }
    }
    Ok(out)
}

/// One file name as a `filename` value: its ':' escaped as '\:' so that the list rule
/// ([`split_names`]) keeps it one name, never two files.
pub fn escape_name(name: &str) -> String {
    name.replace(':', "\\:")
}

/// Splits a `filename` value at ':' (a '\:' stays a colon in the name, as in fio).
pub fn split_names(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The `lockfile` mode (the locking itself is `run::filelock`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    None,
    Exclusive,
    ReadWrite,
}

impl LockMode {
    /// The mode for a `lockfile` word (the table has checked it).
    pub fn from_word(w: Option<&str>) -> LockMode {
        match w {
            Some("exclusive") => LockMode::Exclusive,
            Some("readwrite") => LockMode::ReadWrite,
            _ => LockMode::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> FileOpts {
        FileOpts {
            filetype: None,
            filename: None,
            directory: None,
            opendir: None,
            filesize: None,
            filesize_high: 0,
            filename_format: "$jobname.$jobnum.$filenum".into(),
            unique_filename: true,
            nrfiles: 1,
            openfiles: 0,
            fallocate: Fallocate::Native,
            invalidate: true,
            pre_read: false,
            create_on_open: false,
            create_serialize: true,
            create_fsync: true,
            overwrite: false,
            file_append: false,
            create_only: false,
            unlink: false,
            unlink_each_loop: false,
            allow_file_create: true,
            allow_mounted_write: false,
            lock: LockMode::None,
        }
    }

    #[test]
    fn generated_names_follow_fio() {
        let mut o = opts();
        o.nrfiles = 2;
        o.directory = Some("/d/".into());
        assert_eq!(o.paths("j", 3), vec!["/d/j.3.0", "/d/j.3.1"]);
        o.filename = Some("a:/abs/b:c\\:d".into());
        assert_eq!(o.paths("j", 0), vec!["/d/a", "/abs/b", "/d/c:d"]);
    }

    #[test]
    fn an_escaped_name_is_one_file() {
        for name in ["/t/a:b", "/t/a\\:b", "x::y:", "plain"] {
            assert_eq!(split_names(&escape_name(name)), vec![name.to_string()]);
        }
    }
}
