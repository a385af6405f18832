//! Statistics, logs and verification.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod stats_live;
mod stats_log_epoch;
mod stats_log_max;
mod stats_logs;
mod stats_minf;
mod verify;
mod verify_dialects;
mod verify_loops;
mod verify_more;
mod verify_only_counts;
mod verify_overwrite;
mod verify_trim;
