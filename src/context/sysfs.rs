//! Where a path lives: its block device (from `/sys/dev/block/MAJ:MIN`) and its mount
//! (from `/proc/self/mountinfo`), read the way `lsblk` and `findmnt -T` find them.

use serde_json::{json, Map, Value};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A file's text without its trailing newline, or `None` when it cannot be read.
pub fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim_end_matches('\n').trim().to_string())
}

fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    read_trim(path)?.parse().ok()
}

/// The scheduler in use, from a `queue/scheduler` line such as `none [mq-deadline] bfq`
/// (a device with a single choice prints it bare).
pub fn active_scheduler(line: &str) -> Option<String> {
    if let (Some(a), Some(b)) = (line.find('['), line.find(']')) {
        if a < b {
            return Some(line[a + 1..b].to_string());
        }
    }
    let t = line.trim();
    (!t.is_empty() && !t.contains(' ')).then(|| t.to_string())
}

/// The device a path's data lives on: the block device itself for a block device node,
/// else the device of the filesystem holding it (major 0: none, as on tmpfs).
pub fn device_number(path: &Path) -> Option<(u32, u32)> {
    let md = std::fs::metadata(path).ok()?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    (maj != 0).then_some((maj, min))
}

/// The nearest existing ancestor of `path` (the path itself when it exists), made
/// absolute, so that a target not created yet is described by the directory it goes in.
pub fn existing_ancestor(path: &Path) -> Option<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut p: &Path = &abs;
    loop {
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
        p = p.parent()?;
    }
}

/// The block device `maj:min` and the disk it belongs to, from sysfs: name, size, model,
/// queue settings. Queue settings are the disk's (a partition has no queue of its own).
pub fn block_device(maj: u32, min: u32) -> Option<Value> {
    let link = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let dir = link.canonicalize().ok()?;
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let is_part = dir.join("partition").exists();
    let disk_dir = if is_part {
        dir.parent()?.to_path_buf()
    } else {
        dir.clone()
    };
    let disk = disk_dir.file_name()?.to_string_lossy().into_owned();
    let q = disk_dir.join("queue");
    let mut o = Map::new();
    o.insert("name".into(), json!(name));
    o.insert("dev".into(), json!(format!("{maj}:{min}")));
    o.insert("path".into(), json!(format!("/dev/{name}")));
    if is_part {
        o.insert("disk".into(), json!(disk));
    }
    o.insert(
        "size_bytes".into(),
        json!(read_u64(dir.join("size")).map(|s| s * 512)),
    );
    o.insert(
        "model".into(),
        json!(read_trim(disk_dir.join("device/model")).filter(|s| !s.is_empty())),
    );
    o.insert(
        "vendor".into(),
        json!(read_trim(disk_dir.join("device/vendor")).filter(|s| !s.is_empty())),
    );
    o.insert("rotational".into(), json!(read_u64(q.join("rotational"))));
    o.insert(
        "logical_block_size".into(),
        json!(read_u64(q.join("logical_block_size"))),
    );
    o.insert(
        "physical_block_size".into(),
        json!(read_u64(q.join("physical_block_size"))),
    );
    o.insert(
        "scheduler".into(),
        json!(read_trim(q.join("scheduler")).and_then(|l| active_scheduler(&l))),
    );
    o.insert("nr_requests".into(), json!(read_u64(q.join("nr_requests"))));
    o.insert(
        "write_cache".into(),
        json!(read_trim(q.join("write_cache"))),
    );
    Some(Value::Object(o))
}

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dev: (u32, u32),
    pub mount_point: String,
    /// Per-mount options (`findmnt`'s VFS-OPTIONS).
    pub vfs_options: String,
    pub fstype: String,
    pub source: String,
    /// The filesystem's own options (`findmnt`'s FS-OPTIONS).
    pub fs_options: String,
}

impl Mount {
    /// Both option sets as `findmnt` shows them in OPTIONS: the per-mount ones, then the
    /// filesystem's without its `rw`/`ro`, which the per-mount set already says.
    pub fn options(&self) -> String {
        let mut v: Vec<&str> = self
            .vfs_options
            .split(',')
            .filter(|s| !s.is_empty())
            .collect();
        v.extend(
            self.fs_options
                .split(',')
                .filter(|s| !s.is_empty() && *s != "rw" && *s != "ro"),
        );
        v.join(",")
    }
}

/// Parses one mountinfo line.
pub fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (head, tail) = line.split_once(" - ")?;
    let f: Vec<&str> = head.split(' ').collect();
    if f.len() < 6 {
        return None;
    }
    let (maj, min) = f[2].split_once(':')?;
    let mut t = tail.split(' ');
    Some(Mount {
        dev: (maj.parse().ok()?, min.parse().ok()?),
        mount_point: crate::osstr::unescape_octal(f[4]),
        vfs_options: f[5].to_string(),
        fstype: t.next()?.to_string(),
        source: crate::osstr::unescape_octal(t.next().unwrap_or("")),
        fs_options: t.next().unwrap_or("").to_string(),
    })
}

/// The mount holding `path` (canonical): the last-mounted entry with the longest mount
/// point that contains it, as `findmnt -T` picks it.
pub fn mount_of(path: &Path, mountinfo: &str) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for m in mountinfo.lines().filter_map(parse_mountinfo_line) {
        let mp = Path::new(&m.mount_point);
        if !path.starts_with(mp) {
            continue;
        }
        let longer = match &best {
            Some(b) => m.mount_point.len() >= b.mount_point.len(),
            None => true,
        };
        if longer {
            best = Some(m);
        }
    }
    best
}

/// The `filesystem` object of a target: mount point, type, source and options.
pub fn filesystem(path: &Path) -> Option<Value> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let m = mount_of(path, &info)?;
    Some(json!({
        "mount_point": m.mount_point,
        "type": m.fstype,
        "source": m.source,
        "options": m.options(),
        "vfs_options": m.vfs_options,
        "fs_options": m.fs_options,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_is_the_bracketed_one() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler(""), None);
    }

    #[test]
    fn mountinfo_lines_parse_with_escapes_and_optional_fields() {
        let l = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext3 /dev/root rw,errors=continue";
        let m = parse_mountinfo_line(l).unwrap();
        assert_eq!(m.dev, (98, 0));
        assert_eq!(m.mount_point, "/mnt/my disk");
        assert_eq!(m.fstype, "ext3");
        assert_eq!(m.source, "/dev/root");
        assert_eq!(m.options(), "rw,noatime,errors=continue");
    }

    #[test]
    fn the_longest_mount_point_wins() {
        let info = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:5 / /mnt rw - tmpfs tmpfs rw\n";
        assert_eq!(mount_of(Path::new("/mnt/x"), info).unwrap().fstype, "tmpfs");
        assert_eq!(mount_of(Path::new("/mntx"), info).unwrap().fstype, "ext4");
    }
}
