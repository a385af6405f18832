//! Job files as fio reads them: `[sections]`, `[global]` (and any section whose name starts
//! with `global`, each applying to the sections after it), `;` and `#` comments (also after
//! a value), `include FILE`, `${VAR}` from the environment, fio's `$ncpus`-style keywords
//! with arithmetic, `-` for standard input, `--section` filtering, and the `--showcmd` line.

use super::keywords::{self, Machine};
use super::make_opt_with;
use super::showcmd::{ShowList, Shown};
use crate::defs::raw::{RawJob, RawOpt};
use crate::error::Origin;
use crate::error::ParseError;
use std::path::Path;
use std::sync::Arc;

pub use keywords::expand_env;

/// How deep `include` may nest (fio's limit); a file that includes itself, directly or
/// through others, is caught as a cycle before this.
const MAX_INCLUDE_DEPTH: usize = 200;

/// The longest section name fio accepts.
const MAX_SECTION_NAME: usize = 255;

/// How one job file is read, beyond its text.
#[derive(Debug, Clone, Default)]
pub struct FileOptions {
    /// `--section` names: when not empty, only these job sections are read (`[global]`
    /// sections always are).
    pub sections: Vec<String>,
    /// fio separates several job files by a stonewall: the first job of every file after
    /// the first waits for the jobs before it.
    pub stonewall_first: bool,
    /// Accept options iobench does not implement yet (for `--showcmd`, which only
    /// translates the file and runs nothing).
    pub allow_not_yet: bool,
    /// Where `include` may read from.
    pub includes: Includes,
}

/// Which files an `include` line may read. A job sent to `--server` by a client must not
/// make the server read its files (docs/security.md): there includes are refused, or read
/// only under the directory the operator named with `--server-root`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Includes {
    /// Anywhere (a local run: the user's own files).
    #[default]
    Any,
    /// Only files inside this directory (canonical); a relative name is taken from it.
    Under(std::path::PathBuf),
    /// None at all.
    Refused,
}

/// `name` inside `root` (canonical), or why not: a relative name is taken from `root`;
/// the file must exist, and once symbolic links and `..` are resolved it must still lie
/// inside `root`.
pub fn path_under(root: &Path, name: &str) -> Result<std::path::PathBuf, String> {
    let given = crate::osstr::to_path(name);
    let joined = root.join(&given);
    let canon = std::fs::canonicalize(&joined).map_err(|e| format!("'{name}': {e}"))?;
    if !canon.starts_with(root) {
        return Err(format!(
            "'{name}' is outside the server root {} (--server-root)",
            root.display()
        ));
    }
    Ok(canon)
}

/// One job file's jobs and its `--showcmd` rendering.
#[derive(Debug, Clone, Default)]
pub struct ParsedFile {
    pub jobs: Vec<RawJob>,
    /// The file as command-line options (`--directory=/x --name=a --rw=read `), or `None`
    /// when it has no section at all.
    pub showcmd: Option<String>,
}

/// Which kind of section the lines being read belong to.
enum Current {
    /// Before the first section header.
    None,
    /// A `[global…]` section, with the options it has set so far (for `--showcmd`).
    Global(ShowList),
    /// A job section: the index in `jobs`, and its options for `--showcmd`.
    Job(usize, ShowList),
    /// A job section left out by `--section`.
    Skipped,
}

/// The state of reading one top-level job file (and what it includes).
struct Reader<'a> {
    globals: &'a mut Vec<RawOpt>,
    opts: &'a FileOptions,
    machine: Machine,
    jobs: Vec<RawJob>,
    current: Current,
    /// Every global option set so far (command-line defaults first), as `--showcmd`
    /// prints them at the end of each `[global]` section.
    global_shown: ShowList,
    showcmd: Option<String>,
    stonewall_pending: bool,
    /// The files being read, outermost first (canonical paths), to catch include cycles.
    including: Vec<std::path::PathBuf>,
}

/// Parses job-file text. `globals` carries the options in force from before (options before
/// the first `--name`) and is updated as `[global]` sections are read.
pub fn parse_str(
    text: &str,
    path: &str,
    globals: &mut Vec<RawOpt>,
) -> Result<Vec<RawJob>, ParseError> {
    parse_text(text, path, globals, &FileOptions::default()).map(|p| p.jobs)
}

/// Parses job-file text with `--section` filtering and file-stonewall as `opts` says.
pub fn parse_text(
    text: &str,
    path: &str,
    globals: &mut Vec<RawOpt>,
    opts: &FileOptions,
) -> Result<ParsedFile, ParseError> {
    let global_shown = globals.iter().map(Shown::from_raw).collect();
    let mut r = Reader {
        globals,
        opts,
        machine: Machine::current(),
        jobs: Vec::new(),
        current: Current::None,
        global_shown,
        showcmd: None,
        stonewall_pending: opts.stonewall_first,
        including: Vec::new(),
    };
    r.read(text, path, 0)?;
    r.end_section();
    Ok(ParsedFile {
        jobs: r.jobs,
        showcmd: r.showcmd,
    })
}

/// Reads and parses a job file from disk (`-` is standard input).
pub fn parse_file(path: &str, globals: &mut Vec<RawOpt>) -> Result<Vec<RawJob>, ParseError> {
    parse_path(path, globals, &FileOptions::default()).map(|p| p.jobs)
}

/// Reads a job file from disk (`-` is standard input) and parses it as `opts` says.
pub fn parse_path(
    path: &str,
    globals: &mut Vec<RawOpt>,
    opts: &FileOptions,
) -> Result<ParsedFile, ParseError> {
    let text = read_source(path)?;
    parse_text(&text, path, globals, opts)
}

/// The text of a job file, or of standard input for `-`.
fn read_source(path: &str) -> Result<String, ParseError> {
    let io = |source| ParseError::Io {
        path: path.to_string(),
        source,
    };
    if path == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(io)?;
        return Ok(text);
    }
    // fio reads job files as bytes: a Latin-1 comment or file name is fine (see osstr).
    let bytes = read_bounded(&crate::osstr::to_path(path)).map_err(io)?;
    Ok(crate::osstr::decode_bytes(&bytes))
}

/// The most bytes a job file (or an included one) may have: far beyond any real one, and
/// small enough that `/dev/zero` or a runaway generator fails instead of eating memory.
const MAX_JOB_FILE: u64 = 64 << 20;

/// Reads a job file: a regular file or a pipe (`<(...)`), never a device, and at most
/// MAX_JOB_FILE bytes.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let f = std::fs::File::open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_char_device() || t.is_block_device() || t.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a job file (a device or directory)",
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_JOB_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {} MiB", MAX_JOB_FILE >> 20),
        ));
    }
    Ok(bytes)
}

/// Removes what fio removes from a line: leading blanks, everything from the first `;` or
/// `#` on (a comment, also after a value), and trailing blanks and control characters.
fn clean_line(raw: &str) -> &str {
    let line = raw.trim_start();
    let line = match line.find([';', '#']) {
        Some(at) => &line[..at],
        None => line,
    };
    line.trim_end_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// True for a section name fio treats as global: any that starts with `global`.
fn is_global_name(name: &str) -> bool {
    name.starts_with("global")
}

/// Where an `include`d file is: as given when it exists (fio looks there first), otherwise
/// beside the including file.
fn include_path(target: &str, including: &str) -> String {
    if Path::new(target).exists() || Path::new(target).is_absolute() {
        return target.to_string();
    }
    match including.rfind('/') {
        Some(slash) => format!("{}{}", &including[..=slash], target),
        None => target.to_string(),
    }
}

impl Reader<'_> {
    /// Reads the lines of one file; `depth` > 0 inside an `include`.
    fn read(&mut self, text: &str, path: &str, depth: usize) -> Result<(), ParseError> {
        let file: Arc<str> = Arc::from(path);
        for (idx, raw_line) in text.lines().enumerate() {
            let origin = Origin::at(&file, idx + 1);
            let line = clean_line(raw_line);
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                if depth > 0 {
                    return Err(syntax(
                        "an included file may not start a new section",
                        origin,
                    ));
                }
                self.start_section(line, origin)?;
                continue;
            }
            if matches!(self.current, Current::Skipped) {
                continue;
            }
            if let Some(target) = line
                .strip_prefix("include")
                .filter(|rest| rest.starts_with(char::is_whitespace))
            {
                self.include(target.trim(), path, depth, origin)?;
                continue;
            }
            self.option(line, origin)?;
        }
        Ok(())
    }

    fn include(
        &mut self,
        target: &str,
        including: &str,
        depth: usize,
        origin: Origin,
    ) -> Result<(), ParseError> {
        if matches!(self.current, Current::None) {
            return Err(syntax(
                &format!("'include {target}' comes before any [section]"),
                origin,
            ));
        }
        if target.is_empty() {
            return Err(syntax("'include' needs a file name", origin));
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(syntax(
                &format!("includes nest deeper than {MAX_INCLUDE_DEPTH} files"),
                origin,
            ));
        }
        let path = match &self.opts.includes {
            Includes::Any => include_path(target, including),
            Includes::Refused => {
                return Err(syntax(
                    &format!(
                        "'include {target}': a job sent to the server may not include files \
                         (the server's operator allows it under a directory with --server-root=DIR)"
                    ),
                    origin,
                ))
            }
            Includes::Under(root) => match path_under(root, target) {
                Ok(p) => p.display().to_string(),
                Err(e) => return Err(syntax(&format!("include {e}"), origin)),
            },
        };
        let os_path = crate::osstr::to_path(&path);
        if self.including.is_empty() {
            if let Ok(outer) = std::fs::canonicalize(crate::osstr::to_path(including)) {
                self.including.push(outer);
            }
        }
        let canon = std::fs::canonicalize(&os_path).unwrap_or_else(|_| os_path.clone());
        if self.including.contains(&canon) {
            return Err(syntax(
                &format!("'include {target}' includes a file that is already being read (an include cycle)"),
                origin,
            ));
        }
        let bytes = read_bounded(&os_path).map_err(|e| {
            syntax(
                &format!("cannot read included file '{path}': {e}"),
                origin.clone(),
            )
        })?;
        let text = crate::osstr::decode_bytes(&bytes);
        self.including.push(canon);
        let r = self.read(&text, &path, depth + 1);
        self.including.pop();
        r
    }

    fn start_section(&mut self, line: &str, origin: Origin) -> Result<(), ParseError> {
        let name = line
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or_else(|| {
                syntax(
                    &format!("section header '{line}' has no closing ']'"),
                    origin.clone(),
                )
            })?;
        if name.is_empty() {
            return Err(syntax("a section needs a name: '[]'", origin));
        }
        if name.len() > MAX_SECTION_NAME {
            return Err(syntax(
                &format!("a section name is longer than {MAX_SECTION_NAME} characters"),
                origin,
            ));
        }
        self.end_section();
        let global = is_global_name(name);
        if !global
            && !self.opts.sections.is_empty()
            && !self.opts.sections.iter().any(|s| s == name)
        {
            self.current = Current::Skipped;
            return Ok(());
        }
        let show = self.showcmd.get_or_insert_with(String::new);
        if global {
            self.current = Current::Global(ShowList::new());
            return Ok(());
        }
        show.push_str(&format!("--name={name} "));
        let mut job = RawJob {
            name: name.to_string(),
            opts: self.globals.clone(),
            origin,
            globals: self.globals.len(),
            ..Default::default()
        };
        job.file_stonewall = std::mem::take(&mut self.stonewall_pending);
        self.jobs.push(job);
        self.current = Current::Job(self.jobs.len() - 1, ShowList::new());
        Ok(())
    }

    /// Closes the section being read: its options go to the `--showcmd` line, in fio's
    /// order (by priority, general options before engine options).
    fn end_section(&mut self) {
        match std::mem::replace(&mut self.current, Current::None) {
            Current::Global(list) => {
                self.global_shown.extend(super::showcmd::sorted(list));
                let show = self.showcmd.get_or_insert_with(String::new);
                super::showcmd::render(show, &self.global_shown);
            }
            Current::Job(_, list) => {
                let show = self.showcmd.get_or_insert_with(String::new);
                super::showcmd::render(show, &super::showcmd::sorted(list));
            }
            Current::None | Current::Skipped => {}
        }
    }

    fn option(&mut self, line: &str, origin: Origin) -> Result<(), ParseError> {
        let line = keywords::expand_env(line);
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim_end(), Some(v)),
            None => (line.as_str(), None),
        };
        let value =
            match value {
                None => None,
                Some(v) => Some(keywords::replace_keywords(v, &self.machine).map_err(
                    |reason| ParseError::BadValue {
                        option: name.to_string(),
                        value: v.trim().to_string(),
                        reason,
                        expected: "whole-number arithmetic such as $ncpus*2",
                        origin: origin.clone(),
                    },
                )?),
            };
        let opt = make_opt_with(
            name,
            value.as_deref().map(str::trim),
            &origin,
            self.opts.allow_not_yet,
        )?;
        let shown = Shown::new(opt.def, value);
        match &mut self.current {
            Current::Global(list) => {
                list.push(shown);
                self.globals.push(opt);
            }
            Current::Job(idx, list) => {
                list.push(shown);
                self.jobs[*idx].opts.push(opt);
            }
            Current::None => {
                return Err(syntax(
                    &format!("option '{name}' comes before any [section]"),
                    origin,
                ))
            }
            Current::Skipped => {}
        }
        Ok(())
    }
}

fn syntax(message: &str, origin: Origin) -> ParseError {
    ParseError::Syntax {
        message: message.to_string(),
        origin,
    }
}
