//! write_hint: the lifetime hint lands on the file's inode, read back with F_GET_RW_HINT
//! after the run (fio sets it the same way for buffered I/O). Direct I/O gets it too:
//! kernels since 5.17 only keep the inode's hint.

use crate::common;

use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;

const F_GET_RW_HINT: libc::c_int = 1024 + 11;

fn hint_of(path: &Path) -> u64 {
    let f = std::fs::File::open(path).unwrap();
    let mut v: u64 = 0;
    // SAFETY: the fcntl writes one u64 into `v`, which lives across the call.
    let rc = unsafe { libc::fcntl(f.as_raw_fd(), F_GET_RW_HINT, &mut v as *mut u64) };
    assert_eq!(rc, 0, "F_GET_RW_HINT: {}", std::io::Error::last_os_error());
    v
}

fn write_with_hint(mut tool: Command, file: &Path, hint: &str, direct: &str) -> bool {
    tool.args(["--name=w", "--size=64k", "--rw=write", "--minimal"])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--write_hint={hint}"))
        .arg(format!("--direct={direct}"));
    common::run(tool).status.success()
}

#[test]
fn write_hint_sets_the_inode_hint() {
    let dir = common::scratch("write_hint");
    let file = dir.join("f");
    if let Some(fio) = common::fio() {
        assert!(write_with_hint(fio, &file, "medium", "0"));
        assert_eq!(
            hint_of(&file),
            3,
            "fio's hint, read the way this test reads it"
        );
    }
    for (hint, want) in [("short", 2), ("long", 4), ("extreme", 5), ("none", 1)] {
        assert!(write_with_hint(common::iobench(), &file, hint, "0"));
        assert_eq!(hint_of(&file), want, "write_hint={hint}");
    }
    assert!(write_with_hint(common::iobench(), &file, "long", "1"));
    assert_eq!(hint_of(&file), 4, "write_hint=long with direct=1");
}
