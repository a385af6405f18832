//! What write buffers hold: random data (fio's default), zeroes, a pattern, data that
//! compresses by a chosen share, or blocks that repeat earlier ones (dedupe). The bytes
//! decide what a compressing or deduplicating device does, so they must be what was asked.

pub mod fill;
pub mod mem;
