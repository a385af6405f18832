//! The e4defrag engine on ext4 (a loop device, as root), side by side with fio 3.33's:
//! a fragmented file comes out in fewer extents, with the same I/O counts, the donor
//! allocated as fio allocates it, and the same errors (reads, no filesize for a donor
//! allocated up front).

use crate::common;

use std::path::Path;
use std::process::Command;

/// An ext4 file system on a loop device, mounted; None (skip) without root.
fn ext4(name: &str) -> Option<common::loopdev::Loop> {
    let mut l = common::loopdev::Loop::new(name, "32M")?;
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&l.dev)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "mkfs.ext4 (e2fsprogs) failed");
    let mnt = l.img.parent().unwrap().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let ok = Command::new("mount")
        .arg(&l.dev)
        .arg(&mnt)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("skipping {name}: mount failed");
        return None;
    }
    l.mnt = Some(mnt);
    Some(l)
}

/// Fills the file system with 16 KiB files, deletes every other one, and writes `f` into
/// the holes, so that it lands in pieces; a region set aside first is freed after, so
/// the donor gets its blocks in one piece.
fn fragmented(dir: &Path) {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let reserve = std::fs::File::create(dir.join("reserve")).unwrap();
    // SAFETY: allocates blocks for a file this test owns.
    let r = unsafe { libc::fallocate(reserve.as_raw_fd(), 0, 0, 8 << 20) };
    assert_eq!(r, 0, "fallocate the reserve");
    drop(reserve);
    let holes = dir.join("holes");
    std::fs::create_dir_all(&holes).unwrap();
    let block = vec![0x5au8; 16 << 10];
    let mut n = 0;
    while std::fs::write(holes.join(n.to_string()), &block).is_ok() {
        n += 1;
    }
    sync();
    for i in (0..n).step_by(2) {
        std::fs::remove_file(holes.join(i.to_string())).unwrap();
    }
    sync();
    let mut f = std::fs::File::create(dir.join("f")).unwrap();
    for _ in 0..256 {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
    std::fs::remove_file(dir.join("reserve")).unwrap();
    sync();
}

fn sync() {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
}

/// `filefrag`'s extent count of `path`.
fn extents(path: &Path) -> u64 {
    let out = Command::new("filefrag")
        .arg(path)
        .output()
        .expect("filefrag");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split(": ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("filefrag said: {text}"))
}

/// (write I/Os, write bytes, read I/Os, error) and the donor's size afterwards.
fn defrag(tool: Command, dir: &Path, args: &[&str]) -> ((u64, u64, u64, i64), u64) {
    let mut c = tool;
    c.current_dir(dir)
        .args([
            "--name=d",
            "--ioengine=e4defrag",
            "--donorname=donor",
            "--bs=64k",
        ])
        .args(["--size=4m", "--filename=f", "--output-format=json"])
        .args(args);
    let _ = std::fs::remove_file(dir.join("donor"));
    let out = common::run(c);
    let v = common::json_report(&out);
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    let donor = std::fs::metadata(dir.join("donor")).map_or(0, |m| m.len());
    (
        (
            n("write", "total_ios"),
            n("write", "io_bytes"),
            n("read", "total_ios"),
            j["error"].as_i64().unwrap(),
        ),
        donor,
    )
}

#[test]
fn e4defrag_defragments_like_fio() {
    let cases: [(&[&str], _); 4] = [
        (&["--inplace=1", "--rw=write"], ((64, 4 << 20, 0, 0), 0)),
        (
            &["--rw=write", "--filesize=4m"],
            ((64, 4 << 20, 0, 0), 4 << 20),
        ),
        // No filesize: fio allocates a donor of 0 bytes up front, which fails (EINVAL).
        (&["--rw=write"], ((0, 0, 0, libc::EINVAL as i64), 0)),
        (
            &["--rw=read", "--inplace=1"],
            ((0, 0, 1, libc::EINVAL as i64), 0),
        ),
    ];
    for (i, (args, want)) in cases.into_iter().enumerate() {
        let tools = [Some(common::iobench()), common::fio()];
        let mut results = Vec::new();
        for (t, tool) in tools.into_iter().enumerate() {
            let Some(tool) = tool else { continue };
            // A fresh, small file system per run, filled so that `f` fragments.
            let Some(l) = ext4(&format!("e4defrag{i}_{t}")) else {
                return;
            };
            let dir = l.mnt.clone().unwrap();
            fragmented(&dir);
            let before = extents(&dir.join("f"));
            assert!(before > 32, "the file fragmented: {before} extents");
            let got = defrag(tool, &dir, args);
            if got.0 .0 > 0 {
                let after = extents(&dir.join("f"));
                assert!(
                    after < before / 4,
                    "{args:?} tool {t}: {before} -> {after} extents"
                );
            }
            results.push(got);
        }
        assert_eq!(results[0], want, "{args:?}");
        if results.len() == 2 {
            assert_eq!(results[0], results[1], "{args:?}: ours vs fio");
        }
    }
}
