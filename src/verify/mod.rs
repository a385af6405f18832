//! Data verification as fio 3.33 does it: per-block headers and checksums written with the
//! data, checked when the data is read back, in fio's on-disk format so that either program
//! can check what the other wrote.

pub mod block;
pub mod checksum;
pub mod contents;
pub mod crctest;
pub mod header;
mod hist;
pub mod offload;
pub mod pass;
pub mod state;
pub mod trim;

pub use contents::Contents;
pub use pass::{ReadPass, Settled};
