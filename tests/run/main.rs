//! The run: files, syncs, timing, hooks, faults and the worker.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod faults_nbd;
mod faults_run;
mod faults_watchdog;
mod flow_negative;
mod run_end_fsync;
mod run_fadvise;
mod run_file_append;
mod run_hooks;
mod run_iolog_diff;
mod run_ioscheduler;
mod run_lockfile;
mod run_lockmem;
mod run_newer_options;
mod run_offload;
mod run_opendir;
mod run_openfiles;
mod run_overwrite;
mod run_serialize_overlap;
mod run_steady;
mod run_steady_lat;
mod run_sync_diff;
mod run_thinktime_iotime;
mod run_timing;
mod run_uid;
mod run_write_hint;
mod runner_errors;
mod runner_layout;
mod runner_targets;
mod runner_workers;
