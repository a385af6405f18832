//! e4defrag: ext4 online defragmentation (EXT4_IOC_MOVE_EXT) as the job's I/O.

use crate::options::table::{opt, Category as C, Kind as K, OptDef};

pub const DONORNAME: OptDef = opt(
    "donorname",
    K::Str,
    "File that donates blocks for defragmentation",
)
.cat(C::Engine)
.engines(&["e4defrag"])
.not_yet();

pub const INPLACE: OptDef = opt(
    "inplace",
    K::Int { min: 0, max: 1 },
    "Allocate and free the donor space at each step",
)
.cat(C::Engine)
.engines(&["e4defrag"])
.range(0, 1)
.not_yet();
