//! Studies above single runs: each builds jobs and runs them through [`crate::session`],
//! the same in-process path a plain run takes.

pub mod quick;
