//! file_append: I/O starts where each regular file ends, compared with fio's write_iolog
//! on an existing file and on a new one.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The (offset, length) of every write the tool logs for a 128 KiB job with file_append,
/// on a file that holds `existing` bytes before the run; and the file's size after it.
fn appended(tool: Command, dir: &Path, existing: usize) -> (Vec<(u64, u64)>, u64) {
    let file = dir.join("f");
    let log = dir.join("f.iolog");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&log);
    if existing > 0 {
        std::fs::write(&file, vec![7u8; existing]).unwrap();
    }
    let mut c = tool;
    c.args([
        "--name=a",
        "--rw=write",
        "--size=128k",
        "--bs=64k",
        "--file_append=1",
    ])
    .arg(format!("--filename={}", file.display()))
    .arg(format!("--write_iolog={}", log.display()));
    common::run_ok(c);
    let text = std::fs::read_to_string(&log).expect("iolog");
    let writes = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "write")
                .then(|| (f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect();
    (writes, std::fs::metadata(&file).unwrap().len())
}

#[test]
fn file_append_writes_after_the_end_of_the_file_as_fio_does() {
    let dir = common::scratch("file_append");
    let (w, size) = appended(common::iobench(), &dir, 65536);
    assert_eq!(w, vec![(65536, 65536), (131072, 65536)]);
    assert_eq!(size, 196608);
    let (w, size) = appended(common::iobench(), &dir, 0);
    assert_eq!(w, vec![(0, 65536), (65536, 65536)]);
    assert_eq!(size, 131072);
    if let Some(_fio) = common::fio() {
        for existing in [0, 65536, 100_000] {
            assert_eq!(
                appended(common::iobench(), &dir, existing),
                appended(common::fio().unwrap(), &dir, existing),
                "existing {existing} bytes"
            );
        }
    }
}
