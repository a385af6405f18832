//! Reports: pure functions from results to bytes, one module per format.

pub mod normal;
