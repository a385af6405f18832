//! The seeds' workloads from ../shared/cases.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod cases_json;
mod cases_run;
