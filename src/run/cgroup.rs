//! `cgroup`, `cgroup_weight`, `cgroup_nodelete`: each worker of a job moves itself into a
//! control group (created if missing) for the length of its I/O, as fio 3.33 does.
//!
//! fio takes the first cgroup file system in /proc/mounts that is either a v1 hierarchy
//! with the `blkio` controller or the v2 one, so on a machine with both (the hybrid
//! layout) it is the one listed first; iobench takes the same one. A worker writes its
//! id to `tasks` (v1) or `cgroup.procs` (v2), and at its end writes it back to the root.
//! `cgroup_weight` writes `blkio.weight`, which only v1 has (fio refuses it on v2). A
//! group the run created is removed after the run unless `cgroup_nodelete` is set.

use std::path::{Path, PathBuf};

/// The cgroup file system fio would use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub path: PathBuf,
    pub v2: bool,
}

/// The first v1 `blkio` or v2 cgroup mount in /proc/mounts, as fio picks it.
pub fn find_mount() -> Result<Mount, String> {
    let mounts = std::fs::read_to_string("/proc/mounts")
        .map_err(|e| format!("cgroup: cannot read /proc/mounts: {e}"))?;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, dir, kind, opts, ..] = f[..] else {
            continue;
        };
        let v1_blkio = kind == "cgroup" && opts.split(',').any(|o| o == "blkio");
        if v1_blkio || kind == "cgroup2" {
            return Ok(Mount {
                path: PathBuf::from(unescape(dir)),
                v2: kind == "cgroup2",
            });
        }
    }
    Err("cgroup: no cgroup blkio (v1) or cgroup2 file system is mounted".into())
}

/// /proc/mounts writes spaces and tabs in paths as octal escapes.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t")
}

/// The directory of group `name` under the mount.
pub fn group_dir(m: &Mount, name: &str) -> PathBuf {
    m.path.join(name.trim_start_matches('/'))
}

/// A worker's membership: dropping it moves the worker back to the root group.
pub struct Member {
    root: PathBuf,
    v2: bool,
    id: u32,
}

fn write_id(dir: &Path, v2: bool, id: u32) -> std::io::Result<()> {
    let file = dir.join(if v2 { "cgroup.procs" } else { "tasks" });
    std::fs::write(&file, id.to_string())
        .map_err(|e| crate::error::with_path(&format!("cgroup: {}", file.display()), e))
}

/// Moves the calling worker (its thread id, which is the process id of a forked worker)
/// into group `name`, creating it, and sets its `weight` first when given. A failed
/// system call keeps its errno (the job's error), with the file it concerns.
pub fn enter(name: &str, weight: Option<u32>) -> std::io::Result<Member> {
    use crate::error::with_path;
    let m = find_mount().map_err(std::io::Error::other)?;
    let dir = group_dir(&m, name);
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(with_path(&format!("cgroup: {}", dir.display()), e)),
    }
    if let Some(w) = weight {
        if m.v2 {
            return Err(std::io::Error::other(format!(
                "cgroup_weight={w}: the cgroup file system at {} is v2, which has no \
                 blkio.weight (fio refuses it there too)",
                m.path.display()
            )));
        }
        let file = dir.join("blkio.weight");
        std::fs::write(&file, w.to_string()).map_err(|e| {
            with_path(
                &format!(
                    "cgroup_weight={w} (needs an I/O scheduler with blkio weights): {}",
                    file.display()
                ),
                e,
            )
        })?;
    }
    // SAFETY: gettid has no arguments and cannot fail.
    let id = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    write_id(&dir, m.v2, id)?;
    Ok(Member {
        root: m.path,
        v2: m.v2,
        id,
    })
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = write_id(&self.root, self.v2, self.id);
    }
}

/// The groups a run creates and removes after it; dropping it removes them.
pub struct Cleanup(Vec<PathBuf>);

impl Cleanup {
    /// The groups named by jobs without `cgroup_nodelete` (name, nodelete) that do not
    /// exist yet.
    pub fn plan(groups: &[(String, bool)]) -> Cleanup {
        Cleanup(to_remove(groups))
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        remove(&self.0);
    }
}

fn to_remove(groups: &[(String, bool)]) -> Vec<PathBuf> {
    if groups.is_empty() {
        return Vec::new();
    }
    let Ok(m) = find_mount() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for (name, nodelete) in groups {
        let dir = group_dir(&m, name);
        if !*nodelete && !dir.exists() && !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// Removes the groups the run created (empty by now: their workers left or ended).
fn remove(dirs: &[PathBuf]) {
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
}
