//! The texts fio gives a failed I/O: the `io_u error on file …` line it prints, and the
//! `file:…, func=…, error=…` string it keeps as the job's error (JSON `error`, the
//! `err=` of the job line). Kept in one place so every path words them the same.

use crate::defs::Ddir;
use crate::engine::Op;

/// fio's line for a failed I/O: file, error text, direction, offset and length.
pub fn io_error_line(file: &str, errno: i32, op: Op, offset: u64, len: usize) -> String {
    let what = match op {
        Op::Rw(Ddir::Read) => "read",
        Op::Rw(Ddir::Write) => "write",
        Op::Rw(Ddir::Trim) => "trim",
        Op::Sync { .. } => "sync",
    };
    let on = if file.is_empty() {
        String::new()
    } else {
        format!(" on file {file}")
    };
    format!(
        "io_u error{on}: {}: {what} offset={offset}, buflen={len}",
        crate::job::errors::strerror(errno)
    )
}

/// The job's error text for an I/O error, in fio's `file:…, func=…, error=…` form.
pub fn io_verror(errno: i32) -> String {
    format!(
        "file:io_u.c:1876, func=io_u error, error={}",
        crate::job::errors::strerror(errno)
    )
}

/// The job's error text for a trim that failed in the engine's queue call (fio's
/// `td_io_queue` form).
pub fn queue_verror(errno: i32) -> String {
    format!(
        "file:ioengines.c:399, func=td_io_queue, error={}",
        crate::job::errors::strerror(errno)
    )
}

/// The job's error text for an I/O that moved no bytes (fio's "full resid").
pub fn full_resid_verror() -> String {
    format!(
        "file:backend.c:471, func=full resid, error={}",
        crate::job::errors::strerror(libc::EIO)
    )
}
