//! `iobench pts`: the SNIA Solid State Storage Performance Test Specification.
pub mod steady;
