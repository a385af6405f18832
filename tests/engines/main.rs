//! Each engine, its buffers, and what the device sees against fio.
//! One test binary for the area (the crate links once, not once per file).

#[path = "../common/mod.rs"]
mod common;

mod buffers;
mod buffers_dedupe_global;
mod device_disk_diff;
mod device_fio_diff;
mod engine_basics;
mod engine_cmdprio;
mod engine_cpuio;
mod engine_data;
mod engine_dirops;
mod engine_e4defrag;
mod engine_enumeration;
mod engine_exec;
mod engine_fileops;
mod engine_fileresize;
mod engine_fio_diff;
mod engine_hipri;
mod engine_http;
mod engine_http_beyond;
mod engine_http_hostile;
mod engine_mmap_thp;
mod engine_mtd;
mod engine_nbd;
mod engine_net;
mod engine_null_depth;
mod engine_splice;
mod engine_sync_routing;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod engine_uring_probe;
