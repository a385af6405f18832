//! Writing a version 3 iolog: buffered, so logging an I/O costs a formatted line in
//! memory and no system call until the buffer fills.

use super::VERSION3;
use crate::defs::Ddir;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::time::Instant;

/// Records one job clone's I/O. Make it once before the first I/O, call
/// [`IologWriter::log_io`] per issued I/O, and [`IologWriter::finish`] at the end.
#[derive(Debug)]
pub struct IologWriter {
    out: BufWriter<File>,
    start: Instant,
    names: Vec<String>,
    opened: Vec<bool>,
}

fn ddir_name(d: Ddir) -> &'static str {
    match d {
        Ddir::Read => "read",
        Ddir::Write => "write",
        Ddir::Trim => "trim",
    }
}

impl IologWriter {
    /// Opens `path` for appending (as fio does) and writes the header and one `add` line
    /// per file.
    pub fn create(path: &str, file_names: &[String]) -> io::Result<Self> {
        // The error names the option and the path, keeping its errno for the report.
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(crate::osstr::to_path(path))
            .map_err(|e| crate::error::with_path(&format!("write_iolog={path}"), e))?;
        let mut w = IologWriter {
            out: BufWriter::with_capacity(64 * 1024, file),
            start: Instant::now(),
            names: file_names.to_vec(),
            opened: vec![false; file_names.len()],
        };
        writeln!(w.out, "{VERSION3}")?;
        for i in 0..w.names.len() {
            w.file_action(i, "add")?;
        }
        Ok(w)
    }

    fn usec(&self) -> u128 {
        self.start.elapsed().as_micros()
    }

    fn file_action(&mut self, file: usize, act: &str) -> io::Result<()> {
        let t = self.usec();
        let name = self.names.get(file).map_or("?", String::as_str);
        writeln!(self.out, "{t} {name} {act}")
    }

    /// Records one issued I/O (and the file's `open` before its first one since it was
    /// last closed).
    pub fn log_io(&mut self, file: usize, ddir: Ddir, offset: u64, len: u64) -> io::Result<()> {
        self.log_op(file, ddir_name(ddir), offset, len)
    }

    /// Records that the job opened `file`, unless the log shows it open already.
    pub fn log_open(&mut self, file: usize) -> io::Result<()> {
        match self.opened.get_mut(file) {
            Some(o) if !*o => {
                *o = true;
                self.file_action(file, "open")
            }
            _ => Ok(()),
        }
    }

    /// Records that the job closed `file` (done with it for the pass, or at a new loop),
    /// if the log shows it open.
    pub fn log_close(&mut self, file: usize) -> io::Result<()> {
        match self.opened.get_mut(file) {
            Some(o) if *o => {
                *o = false;
                self.file_action(file, "close")
            }
            _ => Ok(()),
        }
    }

    /// Records that the job closed every file the log shows open (fio closes them all
    /// before its verify phase).
    pub fn close_all(&mut self) -> io::Result<()> {
        self.close_opened()
    }

    fn close_opened(&mut self) -> io::Result<()> {
        for i in 0..self.names.len() {
            self.log_close(i)?;
        }
        Ok(())
    }

    /// Records one operation `act` (read, write, trim, sync, datasync, ...) on `file`.
    pub fn log_op(&mut self, file: usize, act: &str, offset: u64, len: u64) -> io::Result<()> {
        if let Some(o) = self.opened.get_mut(file) {
            if !*o {
                *o = true;
                self.file_action(file, "open")?;
            }
        }
        let t = self.usec();
        let name = self.names.get(file).map_or("?", String::as_str);
        writeln!(self.out, "{t} {name} {act} {offset} {len}")
    }

    /// Records an action on a path that is none of the job's files (`end_syncfs`'s
    /// directory), which opens nothing in the log.
    pub fn log_path_op(&mut self, path: &str, act: &str, offset: u64, len: u64) -> io::Result<()> {
        let t = self.usec();
        writeln!(self.out, "{t} {path} {act} {offset} {len}")
    }

    /// Closes the opened files in the log and flushes it.
    pub fn finish(mut self) -> io::Result<()> {
        self.close_opened()?;
        self.out.flush()
    }
}
