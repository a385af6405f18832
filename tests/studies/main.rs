//! sweep, compare, quick, report, live, metrics, peak, and fio-plot's wrappers.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod destructive_claim;
mod history;
mod output_contract;
mod peak;
mod peers_wrappers;
mod planted_paths;
mod present_http;
mod present_live;
mod present_metrics;
mod present_report;
mod readme_studies;
mod study_clobber;
mod study_compare;
mod study_no_io;
mod study_pts;
mod study_quick;
mod study_slo;
mod study_sweep;
