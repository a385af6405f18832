//! Command line, option table, parsing and the source tree's shape.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod cli_basics;
mod cli_commands;
mod command_table;
mod context_env;
mod debug_parse_steady;
mod debug_process_verify;
mod hostile_input;
mod layering;
mod new_options;
mod option_table;
mod parse_cli;
mod parse_compat;
mod parse_once;
mod parse_robust;
mod parse_values;
mod pipeline_refusals;
