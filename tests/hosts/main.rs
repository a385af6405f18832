//! fio's client/server with fio 3.33 peers, and cluster refusals.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod cluster_refuse;
mod fio_client_server;
mod server_safety;
