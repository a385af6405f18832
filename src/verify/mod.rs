//! Data verification as fio 3.33 does it: per-block headers and checksums written with the
//! data, checked when the data is read back.

pub mod checksum;
