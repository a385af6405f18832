//! Disk statistics name the devices a job's files are on, as the run names the files
//! (`filename_format`, `nrfiles`, every clone): a job run from a directory on one disk
//! whose `filename_format` puts its files on another (an ext4 file system on a loop
//! device) reports that other disk, as fio does, and not the disk of its directory.

use crate::common;

use common::{fio, iobench, scratch};
use std::process::Command;

/// An ext4 file system on a fresh loop device, mounted (None when not root).
fn mounted_loop(name: &str) -> Option<common::loopdev::Loop> {
    let mut l = common::loopdev::Loop::new(name, "64M")?;
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&l.dev)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfs.ext4 failed");
    let mnt = l.img.parent().unwrap().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let ok = Command::new("mount")
        .arg(&l.dev)
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipping {name}: mount failed");
        return None;
    }
    l.mnt = Some(mnt);
    Some(l)
}

/// The device names of a JSON report's `disk_util`.
fn disk_names(out: &std::process::Output) -> Vec<String> {
    let v = common::json_report(out);
    let mut names: Vec<String> = v["disk_util"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn filename_format_and_nrfiles_name_the_disk() {
    let Some(l) = mounted_loop("disk_targets_loop") else {
        return;
    };
    let mnt = l.mnt.clone().unwrap();
    let loop_name = l.dev.trim_start_matches("/dev/").to_string();
    // The run's own directory is on another disk than the files.
    let cwd = scratch("disk_targets_cwd");
    let job = format!(
        "[t]\nrw=write\nbs=64k\nsize=2m\nnumjobs=2\nnrfiles=2\ndirect=1\n\
         filename_format={}/$jobname.$jobnum.$filenum\n",
        mnt.display()
    );
    std::fs::write(cwd.join("t.fio"), &job).unwrap();
    let args = ["--output-format=json", "t.fio"];
    let o = iobench().args(args).current_dir(&cwd).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = disk_names(&o);
    assert_eq!(ours, vec![loop_name.clone()], "iobench's disks");
    for f in std::fs::read_dir(&mnt).unwrap().flatten() {
        let _ = std::fs::remove_file(f.path());
    }
    if let Some(mut f) = fio() {
        let o = f.args(args).current_dir(&cwd).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(disk_names(&o), ours, "fio's disks");
    }
    let _ = std::fs::remove_dir_all(&cwd);
}
