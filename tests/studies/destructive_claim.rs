//! Destructive work is claimed and checked first (issue 36): pts and quick refuse a
//! device that is mounted (a partition of it, or in another mount namespace), held by
//! device-mapper, or holding a file system without --force, and a bad argument, before
//! anything is written: the file system still passes `fsck -n` with its data, and the
//! device's bytes are unchanged. A ':' in a target's path never makes a job write
//! another file. Root with loop devices.

use crate::common;

use common::loopdev::Loop;
use common::{iobench, run, scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn ok(c: &mut Command) {
    let out = c.output().expect("run a tool");
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The device's bytes (the loop's image, read through the device).
fn contents(dev: &str) -> Vec<u8> {
    std::fs::read(dev).expect("read the device")
}

/// Fills the device with a pattern no signature matches.
fn fill(dev: &str) {
    use std::os::unix::fs::FileExt;
    let size = contents(dev).len();
    let data: Vec<u8> = (0..size).map(|i| (i * 7) as u8 | 1).collect();
    let f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.write_all_at(&data, 0).unwrap();
    f.sync_all().unwrap();
}

/// `iobench pts latency`, scaled, on `target` with the output under `dir`.
fn pts(dir: &Path, target: &str, extra: &[&str]) -> std::process::Output {
    let mut c = iobench();
    c.args([
        "pts",
        "latency",
        "--capacity=8m",
        "--round-time=100ms",
        "--max-rounds=5",
    ])
    .args(extra)
    .arg("-o")
    .arg(dir.join("out"))
    .arg(target);
    run(c)
}

fn refused(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "wanted {needle:?} in: {err}");
}

/// A 64 MiB loop device with one partition (an MBR written by hand: sfdisk may be
/// missing) holding an ext4 file system.
fn partitioned(tag: &str) -> Option<(Loop, String)> {
    let lo = Loop::with_args(tag, "64M", &["-P"])?;
    let mut mbr = vec![0u8; 512];
    mbr[446 + 4] = 0x83;
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&(100_000u32).to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&lo.dev)
            .unwrap();
        f.write_all_at(&mbr, 0).unwrap();
        f.sync_all().unwrap();
    }
    // partx adds the partition (BLKPG) where a re-read left no node (seen on 6.18).
    let _ = Command::new("partx").args(["-a", &lo.dev]).output();
    let part = format!("{}p1", lo.dev);
    for _ in 0..100 {
        if Path::new(&part).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    ok(Command::new("mkfs.ext4").args(["-q", "-F", &part]));
    Some((lo, part))
}

fn mount(part: &str, at: &Path) {
    std::fs::create_dir_all(at).unwrap();
    ok(Command::new("mount").arg(part).arg(at));
}

fn umount(at: &Path) {
    ok(Command::new("umount").arg(at));
}

/// The file system on `part` passes `fsck -n` and still holds `keep` with `data`.
fn intact(part: &str, at: &Path, data: &[u8]) {
    let out = Command::new("fsck.ext4")
        .args(["-n", "-f", part])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fsck -n {part}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    mount(part, at);
    let got = std::fs::read(at.join("keep"));
    umount(at);
    assert_eq!(got.ok().as_deref(), Some(data), "the file's data");
}

#[test]
fn a_mounted_partition_is_refused_before_anything_is_written() {
    let Some((mut lo, part)) = partitioned("claim_mounted") else {
        return;
    };
    let dir = scratch("claim_mounted_out");
    let mnt = dir.join("mnt");
    mount(&part, &mnt);
    lo.mnt = Some(mnt.clone());
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(mnt.join("keep"), &data).unwrap();
    ok(&mut Command::new("sync"));
    // The whole disk, with and without --force, and the partition itself; the file
    // system is checked before the messages, so a run that destroyed it says so first.
    let outs = [
        pts(&dir, &lo.dev, &[]),
        pts(&dir, &lo.dev, &["--force"]),
        pts(&dir, &lo.dev, &["--force", "--no-purge"]),
        pts(&dir, &part, &["--force"]),
        run({
            let mut c = iobench();
            c.args(["quick", "--force", "--loops=1", "--duration=1"])
                .arg(&lo.dev);
            c
        }),
    ];
    umount(&mnt);
    lo.mnt = None;
    intact(&part, &mnt, &data);
    for o in &outs {
        refused(o, "mounted on");
    }
    assert!(!dir.join("out").exists(), "no run was started");
}

/// Whether the ext4 superblock's magic is still at its place on `dev`.
fn ext4_magic(dev: &str) -> bool {
    contents(dev).get(1080..1082) == Some(&[0x53, 0xef][..])
}

/// A process in a mount namespace of its own with `part` mounted there: this process's
/// mount table does not show it; only the kernel's exclusive open refuses.
struct OtherNamespace(std::process::Child);

impl Drop for OtherNamespace {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_device_mounted_in_another_namespace_is_refused() {
    let Some(lo) = Loop::new("claim_netns", "32M") else {
        return;
    };
    ok(Command::new("mkfs.ext4").args(["-q", "-F", &lo.dev]));
    let dir = scratch("claim_netns_out");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mut child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount "$1" "$2" && echo up && exec sleep 60"#)
        .args(["sh", &lo.dev])
        .arg(&mnt)
        .stdout(Stdio::piped())
        .spawn()
        .expect("unshare");
    let mut line = String::new();
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
        r.read_line(&mut line).unwrap();
    }
    let held = OtherNamespace(child);
    assert_eq!(line.trim(), "up", "the other namespace mounted it");
    let mine = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mine.contains(mnt.to_str().unwrap()), "not visible here");
    // --no-purge too: its preconditioning would write over the file system.
    let outs = [
        pts(&dir, &lo.dev, &[]),
        pts(&dir, &lo.dev, &["--no-purge"]),
        pts(&dir, &lo.dev, &["--force"]),
    ];
    assert!(
        ext4_magic(&lo.dev),
        "the mounted file system was overwritten"
    );
    for o in &outs {
        refused(o, "in use");
    }
    // A plain write job: refused as mounted, as fio refuses a mount it sees.
    let w = run({
        let mut c = iobench();
        c.args(["--name=w", "--rw=write", "--size=1m"])
            .arg(format!("--filename={}", lo.dev));
        c
    });
    let err = String::from_utf8_lossy(&w.stderr);
    assert!(
        err.contains("appears mounted") && err.contains("allow_mounted_write"),
        "{err}"
    );
    assert_ne!(w.status.code(), Some(0));
    drop(held);
    let out = Command::new("fsck.ext4")
        .args(["-n", "-f", &lo.dev])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A device-mapper device over the loop device, removed when this drops.
struct Mapped(String);

impl Drop for Mapped {
    fn drop(&mut self) {
        let _ = Command::new("dmsetup").args(["remove", &self.0]).status();
    }
}

/// A process holding `dev` open `O_EXCL` (as mkfs or blkdiscard does while it works),
/// killed when this drops.
struct Holder(std::process::Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn hold(dev: &str) -> Holder {
    let mut child = Command::new("perl")
        .args([
            "-MFcntl",
            "-e",
            "sysopen(my $f, $ARGV[0], O_RDONLY|O_EXCL) or die \"$!\"; $| = 1; print \"held\\n\"; sleep 60",
            dev,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("perl");
    let mut line = String::new();
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
        r.read_line(&mut line).unwrap();
    }
    assert_eq!(line.trim(), "held");
    Holder(child)
}

#[test]
fn a_held_device_is_refused() {
    let Some(lo) = Loop::new("claim_held", "16M") else {
        return;
    };
    fill(&lo.dev);
    let before = contents(&lo.dev);
    let dir = scratch("claim_held_out");
    let quick = || {
        run({
            let mut c = iobench();
            c.args(["quick", "--force", "--loops=1", "--duration=1"])
                .arg(&lo.dev);
            c
        })
    };
    // Another program's exclusive claim: only the kernel's EBUSY tells.
    {
        let _h = hold(&lo.dev);
        let outs = [
            pts(&dir, &lo.dev, &[]),
            pts(&dir, &lo.dev, &["--force"]),
            quick(),
        ];
        assert!(contents(&lo.dev) == before, "the device was written to");
        for o in &outs {
            refused(o, "another program holds it");
        }
    }
    // A holder in sysfs: a device-mapper device on it (where the kernel has dm).
    let dm = Command::new("dmsetup")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if dm {
        let name = format!("iobench-claim-{}", std::process::id());
        ok(Command::new("dmsetup")
            .args(["create", &name, "--table"])
            .arg(format!("0 32768 linear {} 0", lo.dev)));
        let _dm = Mapped(name);
        refused(&pts(&dir, &lo.dev, &["--force"]), "is held by dm-");
        refused(&quick(), "is held by dm-");
        assert!(contents(&lo.dev) == before, "the device was written to");
    } else {
        eprintln!("a_held_device_is_refused: no device-mapper in this kernel: the sysfs holder case is not run");
    }
    assert!(!dir.join("out").exists(), "no run was started");
}

#[test]
fn data_on_a_target_needs_force() {
    let Some(lo) = Loop::new("claim_data", "16M") else {
        return;
    };
    let dir = scratch("claim_data_out");
    // An unmounted ext4 device.
    ok(Command::new("mkfs.ext4").args(["-q", "-F", &lo.dev]));
    let before = contents(&lo.dev);
    let outs = [pts(&dir, &lo.dev, &[]), pts(&dir, &lo.dev, &["--no-purge"])];
    assert!(
        contents(&lo.dev) == before,
        "the file system was written to"
    );
    refused(&outs[0], "holds an ext2/ext3/ext4 file system");
    refused(&outs[1], "give --force");
    // A partition table.
    ok(Command::new("wipefs").args(["-q", "-a", &lo.dev]));
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&lo.dev)
            .unwrap();
        f.write_all_at(&[0x55, 0xaa], 510).unwrap();
    }
    let before = contents(&lo.dev);
    let out = pts(&dir, &lo.dev, &[]);
    assert!(
        contents(&lo.dev) == before,
        "the partition table was purged"
    );
    refused(&out, "partition table");
    // A regular file with data.
    let file = dir.join("data");
    std::fs::write(&file, vec![9u8; 1 << 20]).unwrap();
    let out = pts(&dir, file.to_str().unwrap(), &[]);
    assert!(
        std::fs::read(&file).unwrap() == vec![9u8; 1 << 20],
        "the file was purged"
    );
    refused(&out, "existing file with data");
    assert!(!dir.join("out").exists(), "no run was started");
}

#[test]
fn a_bad_argument_is_refused_before_the_purge() {
    let Some(lo) = Loop::new("claim_engine", "16M") else {
        return;
    };
    fill(&lo.dev);
    let before = contents(&lo.dev);
    let dir = scratch("claim_engine_out");
    let out = pts(&dir, &lo.dev, &["--engine=bogus"]);
    assert!(contents(&lo.dev) == before, "the device was purged");
    refused(&out, "bogus");
    let out = pts(&dir, &lo.dev, &["--engine=bogus", "--force"]);
    assert!(contents(&lo.dev) == before, "the device was purged");
    refused(&out, "bogus");
    // An empty file (no --force needed) is not re-created either.
    let file = dir.join("data");
    std::fs::write(&file, b"").unwrap();
    let ino = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before = ino(&file);
    let out = pts(&dir, file.to_str().unwrap(), &["--engine=bogus"]);
    assert_eq!(ino(&file), before, "the file was purged (re-created)");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0);
    refused(&out, "bogus");
}

#[test]
fn a_colon_in_the_target_never_writes_another_file() {
    let dir = scratch("claim_colon");
    let target: PathBuf = dir.join("t:x");
    let mut c = iobench();
    c.current_dir(&dir)
        .args(["pts", "wsat", "--capacity=2m", "--round-time=20ms", "-o"])
        .arg(dir.join("out"))
        .arg(&target);
    let out = run(c);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 2 << 20);
    // fio's list rule would have made `DIR/t` and `./x`.
    assert!(!dir.join("t").exists(), "wrote DIR/t");
    assert!(!dir.join("x").exists(), "wrote ./x");
    let _ = std::fs::remove_dir_all(&dir);
}
