//! iobench: a storage I/O benchmark that reads fio's command lines and job files and
//! prints fio's outputs, built so that the generator is never the bottleneck.
//!
//! The data path, stage by stage (docs/architecture.md draws it): command line +
//! job files → `options::RawJob` → `job::Job` → `run` workers driving an `engine::Engine`
//! → `stats::JobStats` → `report` renderers. Those modules are the crate's own
//! (`pub(crate)`); what the binary, the tests and the fuzz targets use is [`api`], the one
//! public surface, so that rustc's dead-code lint covers everything else.

pub(crate) mod affinity;
pub mod api;
pub(crate) mod blktrace;
pub(crate) mod buffer;
pub(crate) mod cli;
pub(crate) mod client;
pub(crate) mod clock;
pub(crate) mod cluster;
pub(crate) mod command;
pub(crate) mod context;
pub(crate) mod debug;
pub(crate) mod defs;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod fioflags;
pub(crate) mod fioproto;
pub(crate) mod flags;
pub(crate) mod gen;
pub(crate) mod history;
pub(crate) mod iolog;
pub(crate) mod job;
pub(crate) mod num;
pub(crate) mod options;
pub(crate) mod osstr;
pub(crate) mod peak;
pub(crate) mod present;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod safefs;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod shm;
pub(crate) mod stats;
pub(crate) mod stop;
pub(crate) mod study;
pub(crate) mod verify;
