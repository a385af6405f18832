//! fio's surface, its outputs and its I/O generator, compared with fio 3.33.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;
#[path = "../enum_util/mod.rs"]
mod enum_util;
#[path = "../gen_util/mod.rs"]
mod gen_util;

mod dialect_refs;
mod enumerate_engine_options;
mod enumerate_examples;
mod enumerate_fio;
mod fidelity_defects;
mod fidelity_options;
mod fidelity_zbd;
mod gen_fio_fuzz;
mod gen_fio_passes;
mod gen_fio_rand;
mod gen_fio_seq;
mod gen_stats;
mod iolog_replay_more;
mod pairwise;

mod ramp_sync_engines;
mod report_diff;
mod report_disk_targets;
mod report_eta_live;
mod report_notes;
mod report_ramp_counts;
mod report_units;
mod sprandom_refs;
mod verify_backlog_depth;
