//! What a job does when an I/O fails: `continue_on_error` (which kinds of errors may be
//! passed over), `ignore_error` (which error numbers count as passable, per kind),
//! `error_dump` (print every error), and `exitall_on_error`/`exit_what` (which other jobs
//! stop when this one fails or ends). The rules are fio's: an error is passed over only
//! when its kind is in `continue_on_error` and its number is in that kind's list, which
//! is EIO and EILSEQ unless `ignore_error` names others.

use crate::defs::reader::Reader;
use crate::engine::http::HTTP_ERRORS;
use crate::error::JobError;
use crate::options::table::{
    CONTINUE_ON_ERROR, ERROR_DUMP, EXITALL_ON_ERROR, EXIT_WHAT, IGNORE_ERROR,
};

/// The kinds of error fio tells apart, as bits of `continue_on_error`.
pub const KIND_READ: u32 = 1;
pub const KIND_WRITE: u32 = 2;
pub const KIND_VERIFY: u32 = 4;
pub const KIND_ALL: u32 = 0xffff;

/// The error numbers passed over when `ignore_error` gives none for a kind.
const DEFAULT_NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// The symbolic names `ignore_error` accepts; each one's error number is its place
/// in this list plus one (Linux's numbering of the classic errors).
const NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// Which jobs `exitall` (or `exitall_on_error`) stops when this job ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// The running jobs of the same reporting group.
    Group,
    /// Every running job.
    Stonewall,
    /// Every job, also those that have not started yet.
    All,
}

/// The resolved error policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// `continue_on_error` as kind bits, with the kinds `ignore_error` lists added.
    pub continue_mask: u32,
    /// Per kind (read, write, verify): the error numbers that may be passed over.
    pub ignore: [Vec<i32>; 3],
    pub error_dump: bool,
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
}

impl Default for ErrorPolicy {
    fn default() -> Self {
        ErrorPolicy {
            continue_mask: 0,
            ignore: Default::default(),
            error_dump: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
        }
    }
}

/// The kind of an error on an I/O of direction `ddir` (0 read, 1 write, 2 trim): a data
/// mismatch (EILSEQ) is a verify error, any other is a read or a write error.
#[inline]
pub fn kind_index(ddir: usize, errno: i32) -> usize {
    if errno == libc::EILSEQ {
        2
    } else if ddir == 0 {
        0
    } else {
        1
    }
}

impl ErrorPolicy {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let mut continue_mask = match r.text(&CONTINUE_ON_ERROR).as_deref() {
            None | Some("none") | Some("0") => 0,
            Some("read") => KIND_READ,
            Some("write") => KIND_WRITE,
            Some("io") => KIND_READ | KIND_WRITE,
            Some("verify") => KIND_VERIFY,
            Some("all") | Some("1") => KIND_ALL,
            Some(o) => {
                return Err(r.invalid(
                    &CONTINUE_ON_ERROR,
                    format!("'{o}' is not one of none, read, write, io, verify, all, 0, 1"),
                ))
            }
        };
        // The http engine's `http_errors=keep_going`: its failed requests (EIO) are
        // passed over as `continue_on_error=io` passes them, and counted by the engine.
        if r.choice(&HTTP_ERRORS).as_deref() == Some("keep_going") {
            continue_mask |= KIND_READ | KIND_WRITE;
        }
        let mut ignore: [Vec<i32>; 3] = Default::default();
        if let Some(text) = r.text(&IGNORE_ERROR) {
            let parts: Vec<&str> = text.trim().split(',').collect();
            if parts.len() > 3 {
                return Err(r.invalid(
                    &IGNORE_ERROR,
                    "at most three lists (read,write,verify), each like EIO:ENOSPC or 5:28",
                ));
            }
            for (k, part) in parts.iter().enumerate() {
                for name in part.split(':') {
                    if name.is_empty() {
                        break;
                    }
                    let n = parse_errno(name).ok_or_else(|| {
                        r.invalid(&IGNORE_ERROR,
                            format!(
                                "unknown error '{name}' (use a number, or a name such as EIO or ENOSPC)"
                            ),
                        )
                    })?;
                    ignore[k].push(n);
                }
                if !ignore[k].is_empty() {
                    continue_mask |= 1 << k;
                }
            }
        }
        let exit_what = match r.text(&EXIT_WHAT).as_deref() {
            None | Some("group") => ExitWhat::Group,
            Some("stonewall") => ExitWhat::Stonewall,
            Some("all") => ExitWhat::All,
            Some(o) => {
                return Err(r.invalid(
                    &EXIT_WHAT,
                    format!("'{o}' is not one of group, stonewall, all"),
                ))
            }
        };
        Ok(ErrorPolicy {
            continue_mask,
            ignore,
            error_dump: r.bool(&ERROR_DUMP)?,
            exitall_on_error: r.bool(&EXITALL_ON_ERROR)?,
            exit_what,
        })
    }

    /// True when an error `errno` on an I/O of direction `ddir` is passed over, so the
    /// job carries on (and the error is only counted).
    #[inline]
    pub fn non_fatal(&self, ddir: usize, errno: i32) -> bool {
        let k = kind_index(ddir, errno);
        if self.continue_mask & (1 << k) == 0 {
            return false;
        }
        if self.ignore[k].is_empty() {
            DEFAULT_NON_FATAL.contains(&errno)
        } else {
            self.ignore[k].contains(&errno)
        }
    }

    /// Whether the report carries the `errors` line (fio shows it whenever any kind
    /// may be continued over).
    pub fn continues(&self) -> bool {
        self.continue_mask != 0
    }
}

/// An error given as a number (sign ignored) or one of the classic names.
fn parse_errno(s: &str) -> Option<i32> {
    if s.starts_with('E') {
        return NAMES.iter().position(|n| *n == s).map(|i| i as i32 + 1);
    }
    // Leading digits, as C's atoi reads them.
    let t = s.trim_start();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let digits: String = body.chars().take_while(|c| c.is_ascii_digit()).collect();
    let v: i64 = digits.parse().ok()?;
    let v = if neg { -v } else { v };
    let v = v.unsigned_abs().min(i32::MAX as u64) as i32;
    (v != 0).then_some(v)
}

/// The system's text for error number `errno`, without Rust's "(os error N)" suffix.
pub fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(parse_errno("EIO"), Some(libc::EIO));
        assert_eq!(parse_errno("ENOSPC"), Some(libc::ENOSPC));
        assert_eq!(parse_errno("ERANGE"), Some(libc::ERANGE));
        assert_eq!(parse_errno("-28"), Some(28));
        assert_eq!(parse_errno("EWHAT"), None);
        assert_eq!(parse_errno("x"), None);
        assert_eq!(strerror(libc::ENOSPC), "No space left on device");
    }

    #[test]
    fn default_list_is_eio_and_eilseq() {
        let p = ErrorPolicy {
            continue_mask: KIND_ALL,
            ..Default::default()
        };
        assert!(p.non_fatal(0, libc::EIO));
        assert!(p.non_fatal(1, libc::EILSEQ));
        assert!(!p.non_fatal(1, libc::ENOSPC));
        let p = ErrorPolicy {
            continue_mask: KIND_READ,
            ..Default::default()
        };
        assert!(!p.non_fatal(1, libc::EIO));
        assert!(p.non_fatal(0, libc::EIO));
    }
}
