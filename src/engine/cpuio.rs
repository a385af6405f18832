//! cpuio: burns CPU time instead of doing I/O (fio's CPU cycle burner engine).

use crate::options::table::{opt, Category as C, Kind as K, OptDef};

const CPUMODE_CHOICES: &[(&str, &str)] = &[("noop", "empty loop"), ("qsort", "sorting")];

pub const CPULOAD: OptDef = opt(
    "cpuload",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Busy the CPU this percentage of the time",
)
.cat(C::Engine)
.engines(&["cpuio"])
.not_yet();

pub const CPUCHUNKS: OptDef = opt(
    "cpuchunks",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Length in usec of each busy period",
)
.def("50000")
.cat(C::Engine)
.engines(&["cpuio"])
.parent("cpuload")
.not_yet();

pub const CPUMODE: OptDef = opt(
    "cpumode",
    K::Choice(CPUMODE_CHOICES),
    "What the CPU is kept busy with",
)
.def("noop")
.cat(C::Engine)
.engines(&["cpuio"])
.not_yet();

pub const EXIT_ON_IO_DONE: OptDef = opt(
    "exit_on_io_done",
    K::Bool,
    "Stop once the I/O jobs have finished",
)
.def("0")
.cat(C::Engine)
.engines(&["cpuio"])
.not_yet();
