//! The crate's public surface, and all of it: what the `iobench` binary, the integration
//! tests (tests/) and the fuzz targets (fuzz/) use. Every other module is `pub(crate)`,
//! so rustc's dead-code lint sees the whole crate: an item nothing here leads to and
//! nothing inside uses is reported, and goes.
//!
//! The paths mirror the internal modules (`api::job::resolve` is `job::resolve`), so a
//! reader finds the code behind each name. Something a test needs from the inside is added
//! here on purpose, with the rest of its kind, not by making a module public.

/// The command line: `parse_args` reads fio's arguments into an invocation.
pub mod cli {
    pub use crate::cli::{parse_args, usage, Invocation};
}

/// `--client`: the client, and the status line summed over servers.
pub mod client {
    pub use crate::client::main;
    /// The client's status line.
    pub mod eta {
        pub use crate::client::eta::{sum, StatusLine};
    }
}

/// MPI runs (`iobench` under mpirun).
pub mod cluster {
    pub use crate::cluster::main;
}

/// What an invocation is: the arguments read once into a [`command::Command`]; the
/// subcommands, each one entry of [`command::SUBCOMMANDS`] (its flag table, its line in
/// `--help`, its `main`).
pub mod command {
    pub use crate::command::{help_text, help_text_in, Command, Subcommand, SUBCOMMANDS};
}

/// The subcommands' flag tables: rows that read and apply themselves.
pub mod flags {
    pub use crate::flags::{Flag, Spec, Table, Takes, Value};
}

/// `--debug`: the category list.
pub mod debug {
    pub use crate::debug::{asks_for_list, list_text};
}

/// The engine contract, for engines written outside the crate and the engine tests.
pub mod engine {
    pub use crate::engine::{Engine, EngineConfig, EngineFile, IoUnit, Op, Queued, Setup};
    /// The http engine's reading of a server's answer (fuzz target).
    pub mod http {
        pub use crate::engine::http::read_response_text;
    }
    /// The NBD engine's wire protocol.
    pub mod nbd {
        pub use crate::engine::nbd::wire;
    }
    /// Running a generic function over the engine a job names.
    pub mod registry {
        pub use crate::engine::registry::EngineVisitor;
    }
    /// The io_uring engine, driven directly by its tests.
    pub mod uring {
        pub use crate::engine::uring::{Uring, UringOpts};
    }
}

/// fio's one-shot flags (`--cpuclock-test`, `--trigger`, `--idle-prof`, ...).
pub mod fioflags {
    pub use crate::fioflags::{cpuclock_test, start_trigger, write_bandwidth_logs, IdleProf};
}

/// fio 3.33's client/server wire format.
pub mod fioproto {
    pub use crate::fioproto::{
        crc16, decode_all, encode, op, pdu, read_cmd, send, Cmd, ProtoError,
    };
    /// Verify state files and their wire form.
    pub mod vstate {
        pub use crate::fioproto::vstate::{encode_list, StateFields, ThreadState};
    }
}

/// The I/O generator (fio's offsets, lengths and directions).
pub mod gen {
    pub use crate::gen::{plan, FileExtent, Generator, NextIo};
}

/// `read_iolog`/`write_iolog`.
pub mod iolog {
    pub use crate::iolog::{read_iolog, summarize_iolog, LogReader};
}

/// The resolved, typed job.
pub mod job {
    pub use crate::defs::{Ddir, Pattern};
    pub use crate::job::{resolve, Job};
    /// What the job does.
    pub mod workload {
        pub use crate::job::workload::Replay;
    }
}

/// The option table and the parsers of option values and job files.
pub mod options {
    pub use crate::defs::raw::{RawJob, RawOpt};
    pub use crate::defs::release::FioRelease;
    pub use crate::defs::{Kind, OptDef};
    pub use crate::error::Origin;
    pub use crate::options::{check_dialect, help, jobfile, keywords, lookup, make_opt, OPTIONS};
    /// Value syntax (`defs::value`) and the check each option's value passes.
    pub mod value {
        pub use crate::defs::value::*;
        pub use crate::options::check::validate;
    }
    /// The one option table, and its general rows as named constants (`table::BS`).
    pub mod table {
        pub use crate::defs::{opt, FioRelease, Kind, OptDef, Support, TimeUnit};
        pub use crate::options::table::*;
    }
}

/// Platform strings.
pub mod osstr {
    pub use crate::osstr::from_os;
}

/// The readers of runs.
pub mod present {
    /// `iobench report`'s reader of its inputs (for the fuzz target).
    pub mod report {
        pub use crate::present::html::render_text;
    }
    /// Result documents as report, compare and history import read them (fuzz targets).
    pub mod results {
        pub use crate::present::results::{check_doc_bounds, parse, totals};
    }
    /// `--metrics`: the endpoint's request parser (for the fuzz target).
    pub mod metrics {
        pub use crate::present::metrics::{head_end, parse_request};
    }
}

/// The results history: a document's identity as `history import` derives it (fuzz).
pub mod history {
    pub use crate::history::store::Identity;
}

/// fio's outputs.
pub mod report {
    pub use crate::report::{normal, note_stdout_closed, stdout_closed, version_line, VERSION};
}

/// The run.
pub mod run {
    /// The job's limits, checked before the run.
    pub mod limits {
        pub use crate::run::limits::check_jobs;
    }
}

/// `--server`.
pub mod server {
    pub use crate::server::{serve, take_client_bytes};
    /// The process a server starts for each job.
    pub mod job {
        pub use crate::server::job::child_main;
    }
}

/// One run of a set of jobs, as the binary does it.
pub mod session {
    pub use crate::session::{prepare, resolve, run_args, run_reported, Error, Prepared};
}

/// Statistics.
pub mod stats {
    pub use crate::job::reportopts::StatsConfig;
    pub use crate::stats::{JobStats, RunOutcome};
    /// Reporting groups.
    pub mod group {
        pub use crate::stats::group::{summarize, GroupStats};
    }
    /// Latency histograms and percentile lists.
    pub mod hist {
        pub use crate::defs::percentiles::PercentileList;
    }
    /// Compressed logs.
    pub mod logzip {
        pub use crate::stats::logzip::inflate_to_stdout;
    }
}

/// Data verification.
pub mod verify {
    /// `--crctest`.
    pub mod crctest {
        pub use crate::verify::crctest::run;
    }
}
