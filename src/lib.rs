//! iobench: a storage I/O benchmark that reads fio's command lines and job files and
//! prints fio's outputs, built so that the generator is never the bottleneck.
//!
//! The data path, stage by stage (see the README's architecture section):
//! command line + job files → [`options::RawJob`] → [`job::Job`] → [`run`] workers driving an
//! [`engine::Engine`] → [`stats::JobStats`] → [`report`] renderers.

pub(crate) mod affinity;
pub(crate) mod buffer;
pub mod cli;
pub mod client;
pub(crate) mod clock;
pub mod cluster;
pub(crate) mod context;
pub mod debug;
pub mod engine;
pub(crate) mod error;
pub mod fioflags;
pub mod fioproto;
pub mod gen;
pub mod iolog;
pub mod job;
pub mod num;
pub mod options;
pub mod osstr;
pub mod peak;
pub mod present;
pub mod report;
pub mod run;
pub mod server;
pub mod session;
pub mod stats;
pub(crate) mod stop;
pub mod study;
pub mod verify;
