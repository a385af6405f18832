//! overwrite and the layout of write jobs' files: a write-only job's file is only reserved
//! (per `fallocate`) and grows as its writes land, while `overwrite=1` writes it in full
//! first. Checked on the file's size and allocated blocks, against fio on the same jobs.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

/// (size, allocated bytes) of the file a 64 KiB write into a 1 MiB job leaves.
fn layout(tool: Command, dir: &Path, fallocate: &str, overwrite: &str) -> (u64, u64) {
    let file = dir.join("f");
    let _ = std::fs::remove_file(&file);
    let mut c = tool;
    c.args([
        "--name=w",
        "--rw=write",
        "--size=1m",
        "--io_size=64k",
        "--bs=64k",
        "--minimal",
    ])
    .arg(format!("--filename={}", file.display()))
    .arg(format!("--fallocate={fallocate}"))
    .arg(format!("--overwrite={overwrite}"));
    common::run_ok(c);
    let m = std::fs::metadata(&file).expect("file");
    (m.len(), m.blocks() * 512)
}

#[test]
fn overwrite_lays_write_files_out_in_full_as_fio_does() {
    let dir = common::scratch("overwrite");
    let ours = |fa, ow| layout(common::iobench(), &dir, fa, ow);
    // Without overwrite and without fallocate, only the written 64 KiB exist.
    assert_eq!(ours("none", "0"), (64 << 10, 64 << 10));
    // With overwrite, the whole 1 MiB is written before the job starts.
    assert_eq!(ours("none", "1"), (1 << 20, 1 << 20));
    for fa in ["none", "keep", "native"] {
        for ow in ["0", "1"] {
            if let Some(fio) = common::fio() {
                assert_eq!(
                    ours(fa, ow),
                    layout(fio, &dir, fa, ow),
                    "fallocate={fa} overwrite={ow}"
                );
            }
        }
    }
}
