//! Data directions and the access pattern `rw=` names: the words every stage indexes by.

/// A data direction, indexing per-direction arrays as fio does: read, write, trim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Ddir {
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];
}

/// The access pattern of `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl Pattern {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead
                | Pattern::RandWrite
                | Pattern::RandTrim
                | Pattern::RandRw
                | Pattern::RandTrimWrite
        )
    }
    /// True when the pattern reads (fio's td_read).
    pub fn reads(self) -> bool {
        matches!(
            self,
            Pattern::Read | Pattern::RandRead | Pattern::ReadWrite | Pattern::RandRw
        )
    }
    /// True when the pattern writes.
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Pattern::Read | Pattern::RandRead | Pattern::Trim | Pattern::RandTrim
        )
    }
    /// fio's name for the pattern, as printed in headers.
    pub fn fio_name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::Trim => "trim",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandTrim => "randtrim",
            Pattern::ReadWrite => "rw",
            Pattern::RandRw => "randrw",
            Pattern::TrimWrite => "trimwrite",
            Pattern::RandTrimWrite => "randtrimwrite",
        }
    }
}
