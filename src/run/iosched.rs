//! `ioscheduler`: switches the I/O scheduler of the disk under each of the job's files
//! before the job starts, through `/sys/block/<disk>/queue/scheduler`, and checks that the
//! kernel took it (writing an unknown name to a device without schedulers is not an error
//! there, so the read-back is what tells). The setting is left in place after the run, as
//! fio leaves it.

use super::files::{Kind, Target};
use std::path::Path;

/// Sets `scheduler` on the disk of every regular file and block device in `targets`.
/// Disks that offer no scheduler choice are reported and skipped, as fio does.
pub fn switch(scheduler: &str, targets: &[Target]) -> Result<(), String> {
    let mut done: Vec<std::path::PathBuf> = Vec::new();
    for t in targets.iter().filter(|t| t.kind != Kind::Char) {
        let Some(disk) = crate::stats::disk::disk_dir_of(Path::new(&t.path)) else {
            continue;
        };
        if done.contains(&disk) {
            continue;
        }
        set(&disk.join("queue/scheduler"), scheduler)?;
        done.push(disk);
    }
    Ok(())
}

fn set(file: &Path, scheduler: &str) -> Result<(), String> {
    if !file.exists() {
        eprintln!(
            "iobench: the kernel offers no I/O scheduler switching ({} is missing)",
            file.display()
        );
        return Ok(());
    }
    let wrote = std::fs::write(file, scheduler);
    let now = std::fs::read_to_string(file)
        .map_err(|e| format!("ioscheduler: reading {}: {e}", file.display()))?;
    let now = now.lines().next().unwrap_or("").trim();
    if now == "none" {
        eprintln!(
            "iobench: the I/O scheduler of {} is not tunable",
            file.display()
        );
        return Ok(());
    }
    if now
        .split_whitespace()
        .any(|s| s == format!("[{scheduler}]"))
    {
        return Ok(());
    }
    let why = match wrote {
        Err(e) => e.to_string(),
        Ok(()) => "the kernel kept its scheduler".into(),
    };
    Err(format!(
        "ioscheduler: cannot set '{scheduler}' in {} ({why}); it offers: {now}",
        file.display()
    ))
}
