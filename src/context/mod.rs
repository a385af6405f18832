//! The context of a run: what a reader of a result needs to know to trust or reproduce a
//! number (the machine, the kernel, the devices and filesystems under the targets, and the
//! exact job). It only reads `/proc` and `/sys`; it never touches the I/O path.

pub mod env;
pub mod sysfs;
