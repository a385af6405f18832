//! The protocol versions iobench speaks, 97 (fio 3.33) to 121 (fio's master), and what
//! each changed in the payloads iobench reads and writes. Most of fio's bumps changed only
//! the packed job options (`thread_options_pack`, in ADD_JOB and UPDATE_JOB), which
//! iobench neither sends nor reads; the ones that move bytes iobench handles are:
//!
//! | version | release | change |
//! |---|---|---|
//! | 101 | 3.36 | `thread_stat` gains `job_start` (u64) after `groupid`: every later field moves 8 bytes |
//! | 102 | 3.37 | the log header gains `per_job_logs`; a log sample carries two values (16 bytes) |
//! | 107 | 3.38 | the log header gains `log_issue_time`; a sample may carry the issue time after the offset |
//! | 114 | 3.42 | `nr_zone_resets` moves after `unit_base`, with a 16-bit `count_zone_resets` |
//! | 115 | 3.42 | a third steady-state ring (latency) follows the IOPS and bandwidth rings |
//!
//! The offsets were measured with `offsetof` on fio's own headers at the tags (and at the
//! commits of the versions between them); a number between two changes has the layout of
//! the one below it.

use crate::defs::release::FioRelease;

/// One protocol version iobench speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Proto(u16);

impl Proto {
    /// fio 3.33's version.
    pub const OLDEST: Proto = Proto(97);
    /// fio's master (after 3.42) at the time of writing.
    pub const NEWEST: Proto = Proto(121);

    /// The version `v`, if iobench speaks it.
    pub const fn new(v: u16) -> Option<Proto> {
        if v >= Self::OLDEST.0 && v <= Self::NEWEST.0 {
            Some(Proto(v))
        } else {
            None
        }
    }

    /// The version a release's fio speaks.
    pub const fn of_release(r: FioRelease) -> Proto {
        Proto(r.server_version())
    }

    /// The number in the command header.
    pub const fn number(self) -> u16 {
        self.0
    }

    /// The release a peer of this version most likely is.
    pub fn release(self) -> FioRelease {
        FioRelease::of_server_version(self.0).unwrap_or(FioRelease::OLDEST)
    }

    /// `thread_stat` carries `job_start` (3.36).
    pub const fn job_start(self) -> bool {
        self.0 >= 101
    }

    /// The log header carries `per_job_logs` and each sample two values (3.37).
    pub const fn wide_samples(self) -> bool {
        self.0 >= 102
    }

    /// The log header carries `log_issue_time` (3.38).
    pub const fn log_issue_time(self) -> bool {
        self.0 >= 107
    }

    /// `nr_zone_resets` sits after `unit_base`, with `count_zone_resets` (3.42).
    pub const fn zone_resets_at_end(self) -> bool {
        self.0 >= 114
    }

    /// A latency steady-state ring follows the IOPS and bandwidth rings (3.42).
    pub const fn ss_lat(self) -> bool {
        self.0 >= 115
    }
}

impl Default for Proto {
    fn default() -> Self {
        Proto::OLDEST
    }
}

impl std::fmt::Display for Proto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_iobench_speaks() {
        assert_eq!(Proto::new(96), None);
        assert_eq!(Proto::new(122), None);
        assert_eq!(Proto::new(97), Some(Proto::OLDEST));
        assert_eq!(Proto::of_release(FioRelease::V3_42).number(), 120);
        assert_eq!(Proto(109).release(), FioRelease::V3_39);
        assert!(!Proto(100).job_start() && Proto(101).job_start());
        assert!(!Proto(106).log_issue_time() && Proto(107).log_issue_time());
        assert!(!Proto(114).ss_lat() && Proto(115).ss_lat());
    }
}
