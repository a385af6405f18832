//! fio's per-I/O priorities for libaio and io_uring (cmdprio_percentage, cmdprio_class,
//! cmdprio, cmdprio_bssplit): their options, shared by both engines.

use crate::options::table::{opt, Category as C, Kind as K, OptDef};

pub const CMDPRIO_PERCENTAGE: OptDef = opt(
    "cmdprio_percentage",
    K::IntList { min: 0, max: 100 },
    "Share of I/Os sent at the cmdprio priority, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(0, 100)
.not_yet();

pub const CMDPRIO_CLASS: OptDef = opt(
    "cmdprio_class",
    K::IntList { min: 1, max: 3 },
    "Priority class for prioritised I/Os, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(1, 3)
.not_yet();

pub const CMDPRIO: OptDef = opt(
    "cmdprio",
    K::IntList { min: 0, max: 7 },
    "Priority level for prioritised I/Os, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(0, 7)
.not_yet();

pub const CMDPRIO_BSSPLIT: OptDef = opt(
    "cmdprio_bssplit",
    K::Special,
    "Priorities by block size, e.g. 4k/50/1/7",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.not_yet();
