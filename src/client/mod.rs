//! `iobench --client`: drives fio 3.33 servers (or iobench's) over fio's protocol.

use std::process::ExitCode;

/// The client's entry (placeholder until the client lands).
pub fn main(_args: &[String]) -> ExitCode {
    eprintln!("iobench: --client is not implemented yet");
    ExitCode::FAILURE
}
