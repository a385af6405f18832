//! fio's I/O logs: `write_iolog` records every issued I/O in the version 3 text format,
//! `read_iolog` reads version 2 or 3 logs back for replay. The formats are fio's, so a
//! log written by either tool replays in the other.
//!
//! Version 3 lines are `<usec> <file> <action> [<offset> <length>]`; version 2 lines lack
//! the time. Actions: add/open/close for files; read/write/trim/sync/datasync for I/O;
//! `wait` (version 2 only) pauses. `read_iolog` also replays blktrace binary traces
//! (see [`blktrace`]).

pub mod blktrace;
mod read;
mod write;

pub use read::{read_iolog, summarize_iolog, Action, IoLog, LogEntry, LogReader};
pub use write::IologWriter;

/// The first line of a version 2 log.
pub const VERSION2: &str = "fio version 2 iolog";
/// The first line of a version 3 log.
pub const VERSION3: &str = "fio version 3 iolog";
