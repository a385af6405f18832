//! `--debug=CATS`: fio's debug categories, printed in fio 3.33's line format
//! (`random   PID  off rand N`: the category left-aligned in 8 columns, the thread id in 5,
//! then the message), on stdout as fio prints them, because scripts grep these lines.
//!
//! The mask is one atomic word read with a relaxed load, so a disabled category costs one
//! load and a branch on the paths that check it; nothing is formatted unless it is on.
//! Every category fio knows is accepted; the ones a user reads (process, file, io, random,
//! parse, verify) print fio's lines for the main events (not every line fio prints); rate and steadystate
//! print what fio 3.33 prints on this platform for ordinary jobs (nothing); the others are
//! accepted and print fewer lines than fio.

use std::sync::atomic::{AtomicU32, Ordering};

/// fio's categories, in its order (`--debug=?` lists them so).
pub const CATEGORIES: [&str; 19] = [
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
];

/// One category; the value is its bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Cat {
    Process = 0,
    File = 1,
    Io = 2,
    Verify = 5,
    Random = 6,
    Parse = 7,
}

static MASK: AtomicU32 = AtomicU32::new(0);

/// What `--debug=SPEC` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `--debug=?`: list the categories and exit.
    List,
    /// Categories to turn on; the text fio prints for each ("set debug option …").
    Enable(Vec<String>),
}

/// Reads a `--debug` value as fio does: comma-separated categories, `all`, or `?`. An
/// unknown name is reported (as fio, "debug mask X not found") and skipped, never fatal.
pub fn parse(spec: &str) -> Request {
    if spec.trim() == "?" {
        return Request::List;
    }
    let (mask, lines) = read_mask(spec);
    MASK.fetch_or(mask, Ordering::Relaxed);
    Request::Enable(lines)
}

/// The mask `spec` names and fio's "set debug option" line for each category.
fn read_mask(spec: &str) -> (u32, Vec<String>) {
    let mut lines = Vec::new();
    let mut mask = 0u32;
    for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if word == "all" {
            mask = u32::MAX;
            lines.push("fio: set all debug options".to_string());
            continue;
        }
        match CATEGORIES.iter().position(|c| *c == word) {
            Some(bit) => {
                mask |= 1 << bit;
                lines.push(format!("fio: set debug option {word}"));
            }
            None => eprintln!("fio: debug mask {word} not found"),
        }
    }
    (mask, lines)
}

/// The list `--debug=?` prints.
pub fn list_text() -> String {
    format!("fio: dumping debug options:{},all\n", CATEGORIES.join(","))
}

/// True when category `c` is on.
#[inline]
pub fn on(c: Cat) -> bool {
    MASK.load(Ordering::Relaxed) & (1 << c as u32) != 0
}

/// Prints one debug line of category `c`, in fio's layout.
pub fn print(c: Cat, msg: std::fmt::Arguments) {
    use std::io::Write;
    // SAFETY: gettid has no preconditions and cannot fail.
    let tid = unsafe { libc::gettid() };
    let line = format!("{:<8} {:<5} {msg}\n", CATEGORIES[c as usize], tid);
    let _ = std::io::stdout().lock().write_all(line.as_bytes());
}

/// `dprint!(Cat::Io, "queue: …", …)`: prints when the category is on, formats nothing
/// otherwise.
#[macro_export]
macro_rules! dprint {
    ($cat:expr, $($arg:tt)*) => {
        if $crate::debug::on($cat) {
            $crate::debug::print($cat, format_args!($($arg)*));
        }
    };
}

/// `--debug=io`'s line for an I/O unit at `stage` (fill, prep, queue, complete), as fio
/// prints it: the unit's address (here its buffer's), offset and length in hex, the
/// direction's number (0 read, 1 write, 2 trim) and the file name.
pub fn io_unit(stage: &str, unit: *const u8, off: u64, len: usize, ddir: usize, file: &str) {
    print(
        Cat::Io,
        format_args!("{stage}: io_u {unit:p}: off={off:#x},len={len:#x},ddir={ddir},file={file}"),
    );
}

/// `--debug=process`'s line as a job's process or thread begins.
pub fn started() {
    if on(Cat::Process) {
        // SAFETY: gettid has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() };
        print(Cat::Process, format_args!("jobs pid={tid} started"));
    }
}

/// fio's name for how an option's value is read, as `--debug=parse` shows it.
pub fn parse_type(def: &crate::options::OptDef) -> &'static str {
    use crate::options::Kind;
    match def.kind {
        Kind::Str => "OPT_STR_STORE",
        Kind::Choice(_) | Kind::Special => "OPT_STR",
        Kind::Int { .. } | Kind::IntList { .. } => "OPT_INT",
        Kind::Size | Kind::SizeList | Kind::RangeList => "OPT_ULL",
        Kind::SizeOrPercent => "OPT_STR_VAL_ZONE",
        Kind::Time(_) => "OPT_STR_VAL_TIME",
        Kind::Bool => "OPT_BOOL",
        Kind::Float | Kind::FloatList => "OPT_FLOAT_LIST",
        Kind::Deprecated => "OPT_DEPRECATED",
    }
}

/// `--debug=parse`'s lines for one option as it is handled.
pub fn parse_option(def: &crate::options::OptDef, value: Option<&str>) {
    if !on(Cat::Parse) {
        return;
    }
    let v = value.unwrap_or("");
    print(
        Cat::Parse,
        format_args!("handle_option={}, ptr={v}", def.name),
    );
    print(
        Cat::Parse,
        format_args!(
            "__handle_option={}, type={}, ptr={v}",
            def.name,
            parse_type(def)
        ),
    );
    use crate::options::Kind;
    if matches!(def.kind, Kind::Size | Kind::SizeList | Kind::SizeOrPercent) {
        let kb = crate::options::value::KbBase::Binary;
        if let Ok(n) = crate::options::value::parse_size(v, kb) {
            print(Cat::Parse, format_args!("  ret=0, out={n}"));
        }
    } else if matches!(def.kind, Kind::Int { .. }) {
        if let Ok(n) = crate::options::value::parse_int(v) {
            print(Cat::Parse, format_args!("  ret=0, out={n}"));
        }
    } else if let Kind::Time(unit) = def.kind {
        if let Ok(n) = crate::options::value::parse_time_us(v, unit) {
            print(Cat::Parse, format_args!("  ret=0, out={n}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_list() {
        assert_eq!(parse("?"), Request::List);
        assert!(list_text().contains("random,parse,diskutil"));
        // (read_mask, not parse: turning categories on would print from other tests.)
        let (mask, lines) = read_mask("parse,nosuch,random");
        assert_eq!(lines.len(), 2);
        assert_eq!(mask, 1 << Cat::Parse as u32 | 1 << Cat::Random as u32);
        assert_eq!(read_mask("all").0, u32::MAX);
    }
}
