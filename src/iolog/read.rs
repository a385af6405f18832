//! Reading a version 2 or 3 iolog for replay, applying `replay_redirect`, `replay_scale`,
//! `replay_align` and `replay_time_scale`/`replay_no_stall` to the recorded entries.
//!
//! The log is read line by line through [`LogReader`], so it can be replayed without
//! holding it in memory (`read_iolog_chunked`); [`read_iolog`] reads it whole, keeping a
//! summary (files, furthest I/O per file, longest I/O) and, unless chunked, the entries.
//!
//! As in fio 3.33, `sync`/`datasync` lines are replayed as syncs of their file, `open` and
//! `close` lines track which files may take I/O (fio aborts on I/O to a file the log has
//! not opened or has closed; iobench refuses such a log before starting), and `wait` is
//! honoured in version 2 logs only.

use super::{VERSION2, VERSION3};
use crate::defs::Ddir;
use crate::engine::SyncKind;
use crate::job::workload::Replay;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};

/// What a replayed entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A read, write or trim of `len` bytes at `offset`.
    Io(Ddir),
    /// An fsync or fdatasync of the file, after the I/O before it has completed.
    Sync(SyncKind),
    /// The log closes the file (fio fsyncs it then with `fsync_on_close`).
    Close,
}

/// One operation to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    pub action: Action,
    /// Index into [`IoLog::files`].
    pub file: usize,
    pub offset: u64,
    pub len: u64,
    /// Microseconds to wait after the previous I/O was issued (0 without stalls).
    pub delay_us: u64,
}

/// A parsed log: the files it names (in order of their `add`), how far its I/O reaches in
/// each, and the operations (left empty with `read_iolog_chunked`, which streams them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IoLog {
    pub files: Vec<String>,
    /// Per file: the end of its furthest read, write or trim.
    pub extents: Vec<u64>,
    /// The longest I/O (the worker's buffers must hold it).
    pub max_len: u64,
    /// True when some entry writes (the files must open for writing).
    pub writes: bool,
    /// `trim` entries left out: fio 3.33 refuses them in an iolog ("bad ddir") and
    /// replays the rest.
    pub trims_dropped: u64,
    pub entries: Vec<LogEntry>,
}

/// The log file clone `clone_index` replays: a `:`-separated `read_iolog` list gives one
/// log per clone, cycling.
fn log_path(list: &str, clone_index: u32) -> Result<&str, String> {
    let names: Vec<&str> = list.split(':').filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        return Err("no log file named".into());
    }
    Ok(names[clone_index as usize % names.len()])
}

/// Reads the log for clone `clone_index` whole, checking every line; the entries are kept
/// unless `opts.chunked` (then [`LogReader::open`] streams them during the run).
pub fn read_iolog(list: &str, clone_index: u32, opts: &Replay) -> Result<IoLog, String> {
    read(list, clone_index, opts, !opts.chunked)
}

/// As [`read_iolog`] without keeping the entries: the files, their extents and whether
/// the log writes, for setting up the files.
pub fn summarize_iolog(list: &str, clone_index: u32, opts: &Replay) -> Result<IoLog, String> {
    read(list, clone_index, opts, false)
}

fn read(list: &str, clone_index: u32, opts: &Replay, keep: bool) -> Result<IoLog, String> {
    let mut r = LogReader::open(list, clone_index, opts)?;
    let mut log = IoLog::default();
    while let Some(e) = r.next_entry()? {
        if let Action::Io(d) = e.action {
            if log.extents.len() <= e.file {
                log.extents.resize(e.file + 1, 0);
            }
            log.extents[e.file] = log.extents[e.file].max(e.offset.saturating_add(e.len));
            log.max_len = log.max_len.max(e.len);
            log.writes |= d != Ddir::Read;
        }
        if keep {
            log.entries.push(e);
        }
    }
    log.extents.resize(r.parser.files.len(), 0);
    log.trims_dropped = r.parser.trims_dropped;
    log.files = std::mem::take(&mut r.parser.files);
    Ok(log)
}

/// Parses a whole log from `input` (for the unit tests); `path` names it in messages.
#[cfg(test)]
pub fn parse(input: impl BufRead, path: &str, opts: &Replay) -> Result<IoLog, String> {
    let mut input = input;
    let mut header = String::new();
    input
        .read_line(&mut header)
        .map_err(|e| format!("{path}: {e}"))?;
    let mut p = Parser::new(&header, path, opts)?;
    let mut log = IoLog::default();
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("{path}: {e}"))?;
        if let Some(e) = p.line(&line, i as u64 + 2)? {
            log.entries.push(e);
        }
    }
    log.files = p.files;
    Ok(log)
}

/// `path:line`, for messages.
fn loc(path: &str, no: u64) -> String {
    format!("{path}:{no}")
}

/// The parsing state carried from line to line.
#[derive(Debug, Clone)]
struct Parser {
    path: String,
    v3: bool,
    opts: Replay,
    files: Vec<String>,
    /// Per file: opened by the log and not closed since.
    open: Vec<bool>,
    last_ttime: u64,
    pending_delay: u64,
    last_wait_ms: u64,
    trims_dropped: u64,
}

impl Parser {
    fn new(header: &str, path: &str, opts: &Replay) -> Result<Self, String> {
        let v3 = if header.starts_with(VERSION3) {
            true
        } else if header.starts_with(VERSION2) {
            false
        } else if header.is_empty() {
            return Err(format!("{path}: empty log"));
        } else {
            return Err(format!(
                "{path}:1: not a fio version 2 or 3 iolog (version 1 logs are not supported)"
            ));
        };
        let mut p = Parser {
            path: path.to_string(),
            v3,
            opts: opts.clone(),
            files: Vec::new(),
            open: Vec::new(),
            last_ttime: 0,
            pending_delay: 0,
            last_wait_ms: 0,
            trims_dropped: 0,
        };
        if let Some(r) = &opts.redirect {
            p.files.push(r.clone());
            p.open.push(false);
        }
        Ok(p)
    }

    /// Back to the state after the header, for another pass over the log.
    fn rewind(&mut self) {
        self.open.iter_mut().for_each(|o| *o = false);
        self.last_ttime = 0;
        self.pending_delay = 0;
        self.last_wait_ms = 0;
        self.trims_dropped = 0;
    }

    /// The index of file `name`, added if new (no allocation once it is known).
    fn index(&mut self, name: &str) -> usize {
        let name = self.opts.redirect.as_deref().unwrap_or(name);
        match self.files.iter().position(|f| f == name) {
            Some(p) => p,
            None => {
                self.files.push(name.to_string());
                self.open.push(false);
                self.files.len() - 1
            }
        }
    }

    /// Parses line number `no`: an operation to replay, or None (file action, wait,
    /// blank line).
    fn line(&mut self, line: &str, no: u64) -> Result<Option<LogEntry>, String> {
        let mut t = [""; 6];
        let mut n = 0;
        for w in line.split_whitespace() {
            if n == t.len() {
                return Err(format!("{}: cannot read '{line}'", loc(&self.path, no)));
            }
            t[n] = w;
            n += 1;
        }
        let mut t = &t[..n];
        if t.is_empty() {
            return Ok(None);
        }
        let mut delay = 0;
        if self.v3 {
            let time = t[0];
            let time: u64 = time
                .parse()
                .map_err(|_| format!("{}: bad time '{time}'", loc(&self.path, no)))?;
            delay = if self.last_ttime == 0 || self.opts.no_stall || time < self.last_ttime {
                0
            } else if self.opts.time_scale == 100 {
                time - self.last_ttime
            } else {
                ((time - self.last_ttime) as f64 * (100.0 / self.opts.time_scale as f64)) as u64
            };
            self.last_ttime = time;
            t = &t[1..];
        }
        let (fname, act, nums) = match *t {
            [f, a] => (f, a, None),
            [f, a, o, l] => (f, a, Some((o, l))),
            _ => return Err(format!("{}: cannot read '{line}'", loc(&self.path, no))),
        };
        // A version 3 wait is ignored, its delay with it (as fio does); so is a trim,
        // which fio 3.33 parses and then drops ("bad ddir").
        if (self.v3 && act == "wait") || (act == "trim" && nums.is_some()) {
            self.trims_dropped += u64::from(act == "trim");
            return Ok(None);
        }
        self.pending_delay += delay;
        let Some((o, l)) = nums else {
            let i = self.index(fname);
            match act {
                "open" => self.open[i] = true,
                "close" if self.open[i] => {
                    self.open[i] = false;
                    return Ok(Some(LogEntry {
                        action: Action::Close,
                        file: i,
                        offset: 0,
                        len: 0,
                        delay_us: 0,
                    }));
                }
                "close" | "add" | "unlink" => {}
                _ => {
                    return Err(format!(
                        "{}: unknown file action '{act}'",
                        loc(&self.path, no)
                    ))
                }
            }
            return Ok(None);
        };
        let offset: u64 = o
            .parse()
            .map_err(|_| format!("{}: bad offset '{o}'", loc(&self.path, no)))?;
        let len: u64 = l
            .parse()
            .map_err(|_| format!("{}: bad length '{l}'", loc(&self.path, no)))?;
        if len > u32::MAX as u64 {
            // fio reads lengths as 32-bit and skips what does not fit; never truncate one.
            static WARNED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!(
                    "iobench: {}: length {len} is larger than 4 GiB; line ignored",
                    loc(&self.path, no)
                );
            }
            return Ok(None);
        }
        let action = match act {
            "read" => Action::Io(Ddir::Read),
            "write" => Action::Io(Ddir::Write),
            "sync" => Action::Sync(SyncKind::Fsync),
            "datasync" => Action::Sync(SyncKind::Fdatasync),
            "wait" => {
                // A version 2 wait holds until `offset` ms after the start.
                if !self.opts.no_stall {
                    self.pending_delay += offset.saturating_sub(self.last_wait_ms) * 1000;
                    self.last_wait_ms = self.last_wait_ms.max(offset);
                }
                return Ok(None);
            }
            _ => return Err(format!("{}: unknown action '{act}'", loc(&self.path, no))),
        };
        let file = self.index(fname);
        if !self.open[file] {
            return Err(format!(
                "{}: {act} on file '{}', which the log has not opened (or has closed)",
                loc(&self.path, no),
                self.files[file]
            ));
        }
        let mut offset = if self.opts.scale > 1 {
            offset / self.opts.scale
        } else {
            offset
        };
        if self.opts.align != 0 {
            offset &= !(self.opts.align - 1);
        }
        // A sync's delay carries over to the next I/O: syncs are issued once the queue
        // has drained, not on a schedule.
        let delay_us = match action {
            Action::Sync(_) | Action::Close => 0,
            Action::Io(_) if self.opts.no_stall => 0,
            Action::Io(_) => std::mem::take(&mut self.pending_delay),
        };
        Ok(Some(LogEntry {
            action,
            file,
            offset,
            len,
            delay_us,
        }))
    }
}

/// A log read a line at a time: one buffered reader and one line buffer, reused, so
/// streaming a log allocates nothing per entry once its files are known.
#[derive(Debug)]
pub struct LogReader {
    input: Option<BufReader<File>>,
    /// A blktrace, read whole into entries, and the index of the next one.
    trace: Option<(std::sync::Arc<Vec<LogEntry>>, usize)>,
    parser: Parser,
    line: String,
    /// Line number of the next line (for messages).
    no: u64,
    /// Byte offsets: where the entries start (after the header), and of the next line.
    data_start: u64,
    pos: u64,
}

impl LogReader {
    /// Opens the log for clone `clone_index` and reads its header.
    pub fn open(list: &str, clone_index: u32, opts: &Replay) -> Result<Self, String> {
        let path = log_path(list, clone_index)?;
        if crate::blktrace::is_blktrace(path) {
            let t = super::blktrace::read(path, opts)?;
            let mut parser = Parser::new(VERSION3, path, opts)?;
            parser.open = vec![true; t.files.len()];
            parser.files = t.files;
            return Ok(LogReader {
                input: None,
                trace: Some((std::sync::Arc::new(t.entries), 0)),
                parser,
                line: String::new(),
                no: 0,
                data_start: 0,
                pos: 0,
            });
        }
        let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let mut input = BufReader::with_capacity(64 * 1024, file);
        let mut line = String::with_capacity(256);
        let n = input
            .read_line(&mut line)
            .map_err(|e| format!("{path}: {e}"))?;
        let parser = Parser::new(&line, path, opts)?;
        Ok(LogReader {
            input: Some(input),
            trace: None,
            parser,
            line,
            no: 2,
            data_start: n as u64,
            pos: n as u64,
        })
    }

    /// The file names seen so far (all of them once the log was read through).
    pub fn files(&self) -> &[String] {
        &self.parser.files
    }

    /// The next operation, None at the end of the log.
    pub fn next_entry(&mut self) -> Result<Option<LogEntry>, String> {
        if let Some((entries, next)) = &mut self.trace {
            let e = entries.get(*next).copied();
            *next += 1;
            return Ok(e);
        }
        loop {
            let Some(input) = &mut self.input else {
                return Ok(None);
            };
            self.line.clear();
            let n = input
                .read_line(&mut self.line)
                .map_err(|e| format!("{}: {e}", self.parser.path))?;
            if n == 0 {
                return Ok(None);
            }
            self.pos += n as u64;
            let no = self.no;
            self.no += 1;
            if let Some(e) = self.parser.line(&self.line, no)? {
                return Ok(Some(e));
            }
        }
    }

    /// Starts over at the first entry (another loop over the log).
    pub fn rewind(&mut self) {
        if let Some((_, next)) = &mut self.trace {
            *next = 0;
            return;
        }
        self.parser.rewind();
        self.no = 2;
        self.pos = self.data_start;
        if let Some(i) = &mut self.input {
            if i.seek(SeekFrom::Start(self.data_start)).is_err() {
                self.input = None;
            }
        }
    }
}

impl Clone for LogReader {
    /// A reader at the same place: the file is opened again and positioned where this
    /// one is (a copy that cannot reopen it reads nothing).
    fn clone(&self) -> Self {
        let input = File::open(&self.parser.path).ok().and_then(|mut f| {
            f.seek(SeekFrom::Start(self.pos)).ok()?;
            Some(BufReader::with_capacity(64 * 1024, f))
        });
        LogReader {
            input: input.filter(|_| self.input.is_some()),
            trace: self.trace.clone(),
            parser: self.parser.clone(),
            line: String::with_capacity(self.line.capacity()),
            no: self.no,
            data_start: self.data_start,
            pos: self.pos,
        }
    }
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
        assert_eq!(log.entries.len(), 3);
        assert_eq!(log.entries[2].action, Action::Close);
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

    #[test]
    fn syncs_are_entries_and_carry_their_delay_on() {
        let text = "fio version 3 iolog\n1 f add\n2 f open\n10 f write 0 4096\n\
                    30 f datasync 0 0\n40 f sync 0 0\n100 f write 4096 4096\n";
        let log = parse(text.as_bytes(), "t", &opts()).unwrap();
        let acts: Vec<Action> = log.entries.iter().map(|e| e.action).collect();
        assert_eq!(
            acts,
            [
                Action::Io(Ddir::Write),
                Action::Sync(SyncKind::Fdatasync),
                Action::Sync(SyncKind::Fsync),
                Action::Io(Ddir::Write)
            ]
        );
        assert_eq!(log.entries[1].delay_us, 0);
        assert_eq!(log.entries[3].delay_us, 90);
    }

    #[test]
    fn io_outside_open_and_close_is_refused() {
        let closed = "fio version 2 iolog\nf add\nf open\nf write 0 512\nf close\nf write 0 512\n";
        let e = parse(closed.as_bytes(), "t", &opts()).unwrap_err();
        assert!(e.starts_with("t:6: write on file 'f'"), "{e}");
        let never = "fio version 2 iolog\nf add\nf sync 0 0\n";
        assert!(parse(never.as_bytes(), "t", &opts()).is_err());
        let reopened = "fio version 2 iolog\nf add\nf open\nf close\nf open\nf read 0 1\n";
        let acts: Vec<Action> = parse(reopened.as_bytes(), "t", &opts())
            .unwrap()
            .entries
            .iter()
            .map(|e| e.action)
            .collect();
        assert_eq!(acts, [Action::Close, Action::Io(Ddir::Read)]);
    }
}
