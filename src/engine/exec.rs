//! exec: runs a program for the job's duration.

use crate::options::table::{opt, Category as C, Kind as K, OptDef};

pub const PROGRAM: OptDef = opt("program", K::Str, "The program to run")
    .cat(C::Engine)
    .engines(&["exec"])
    .not_yet();

pub const ARGUMENTS: OptDef = opt("arguments", K::Str, "Arguments to pass to the program")
    .cat(C::Engine)
    .engines(&["exec"])
    .not_yet();

pub const GRACE_TIME: OptDef = opt(
    "grace_time",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Seconds to wait before killing the program",
)
.def("1")
.cat(C::Engine)
.engines(&["exec"])
.not_yet();

pub const STD_REDIRECT: OptDef = opt(
    "std_redirect",
    K::Bool,
    "Send the program's output to files",
)
.def("1")
.cat(C::Engine)
.engines(&["exec"])
.not_yet();
