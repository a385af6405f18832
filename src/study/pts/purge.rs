//! The purge that starts every PTS test: the target is returned to a state as close to
//! fresh-out-of-box as it allows, so that a test measures the drive from a known state.
//! A regular file is removed and re-created at the test's capacity; a block device gets
//! BLKSECDISCARD, or BLKDISCARD where the secure form is not supported. NVMe format or
//! sanitize and ATA secure erase are not implemented: an NVMe or ATA device is purged
//! by discard, and the report names the method used.

use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// What a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
}

/// The target as the test sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub path: String,
    pub kind: TargetKind,
    /// The target's whole size in bytes (a file: its size, or `--capacity` when it does
    /// not exist yet).
    pub size: u64,
}

/// How a target was purged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// A file removed and re-created (sparse, at the test's capacity).
    Recreate,
    /// BLKSECDISCARD over the capacity.
    SecureDiscard,
    /// BLKDISCARD over the capacity (the device refused the secure form).
    Discard,
    /// Not purged: `--no-purge`.
    NotPurged,
}

impl Method {
    /// The method as the report says it.
    pub fn text(self) -> &'static str {
        match self {
            Method::Recreate => "file removed and re-created",
            Method::SecureDiscard => "BLKSECDISCARD (secure discard)",
            Method::Discard => "BLKDISCARD (discard; secure discard not supported)",
            Method::NotPurged => "not purged (--no-purge): results are not from a purged state",
        }
    }
}

/// Looks at `path`: a block device or a regular file (or none yet, when `capacity` says
/// how big to make it). A block device is claimed (`O_EXCL`, see `run::claim`): it is
/// refused when mounted, held or swap, and the claim, kept until the run ends, stops
/// anything from mounting it meanwhile. Nothing is written.
pub fn inspect(
    path: &str,
    capacity: Option<u64>,
) -> Result<(Target, Option<crate::run::claim::Claim>), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => {
            let claim = crate::run::claim::claim_unused(path, "pts")?;
            let t = Target {
                path: path.to_string(),
                kind: TargetKind::BlockDevice,
                size: claim.size,
            };
            Ok((t, Some(claim)))
        }
        _ => inspect_file(path, capacity).map(|t| (t, None)),
    }
}

/// Why the target must not be purged without `--force`: a device with partitions or a
/// file system or partition-table signature, a regular file with data in it (allocated
/// blocks: a sparse file pts made at the capacity has none). `None`: nothing to lose.
pub fn data_note(
    t: &Target,
    claim: Option<&crate::run::claim::Claim>,
) -> Result<Option<String>, String> {
    if let Some(c) = claim {
        return c.data("pts");
    }
    match std::fs::symlink_metadata(&t.path) {
        Ok(m) if m.is_file() && m.len() > 0 && m.blocks() > 0 => Ok(Some(format!(
            "{} is an existing file with data ({} bytes): pts would destroy it; give --force \
             to use it anyway",
            t.path,
            m.len()
        ))),
        _ => Ok(None),
    }
}

fn inspect_file(path: &str, capacity: Option<u64>) -> Result<Target, String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Target {
            path: path.to_string(),
            kind: TargetKind::File,
            size: m.len().max(capacity.unwrap_or(0)),
        }),
        Ok(_) => Err(format!(
            "{path}: not a regular file or a block device: pts runs on one of those"
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match capacity {
            Some(c)
                if Path::new(path)
                    .parent()
                    .is_some_and(|d| d.as_os_str().is_empty() || d.is_dir()) =>
            {
                Ok(Target {
                    path: path.to_string(),
                    kind: TargetKind::File,
                    size: c,
                })
            }
            Some(_) => Err(format!("{path}: its directory does not exist")),
            None => Err(format!(
                "{path}: no such file; give --capacity SIZE to have pts create it"
            )),
        },
        Err(e) => Err(format!("{path}: {e}")),
    }
}

/// A note on purge methods this target would want and iobench does not do.
pub fn unsupported_note(t: &Target) -> Option<String> {
    let name = Path::new(&t.path)
        .file_name()?
        .to_string_lossy()
        .to_string();
    if t.kind != TargetKind::BlockDevice {
        return None;
    }
    if name.starts_with("nvme") {
        Some("NVMe format/sanitize is not implemented: purged by discard instead".into())
    } else if name.starts_with("sd") {
        Some("ATA secure erase (SG_IO) is not implemented: purged by discard instead".into())
    } else {
        None
    }
}

/// `_IO(0x12, 125)`: securely discard a byte range of a block device.
const BLKSECDISCARD: libc::c_ulong = 0x127d;

/// Purges the first `capacity` bytes of the target. A block device that supports neither
/// discard is an error (the caller refuses the test unless `--no-purge`).
pub fn purge(t: &Target, capacity: u64) -> Result<Method, String> {
    match t.kind {
        TargetKind::File => {
            match std::fs::remove_file(&t.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: remove: {e}", t.path)),
            }
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&t.path)
                .map_err(|e| format!("{}: create: {e}", t.path))?;
            f.set_len(capacity)
                .map_err(|e| format!("{}: size {capacity}: {e}", t.path))?;
            Ok(Method::Recreate)
        }
        TargetKind::BlockDevice => {
            let f = OpenOptions::new()
                .write(true)
                .open(&t.path)
                .map_err(|e| format!("{}: {e}", t.path))?;
            let range: [u64; 2] = [0, capacity];
            // SAFETY: BLKSECDISCARD reads two u64s (start, length) from the pointer, which
            // points to a live local array of exactly that shape.
            let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKSECDISCARD as _, range.as_ptr()) };
            if r == 0 {
                return Ok(Method::SecureDiscard);
            }
            let secure = std::io::Error::last_os_error();
            let r = crate::engine::discard(f.as_raw_fd(), 0, capacity as usize);
            if r >= 0 {
                return Ok(Method::Discard);
            }
            Err(format!(
                "{}: cannot be purged: BLKSECDISCARD: {secure}; BLKDISCARD: {} \
                 (give --no-purge to run from its present state, which the report states)",
                t.path,
                std::io::Error::from_raw_os_error(-r as i32)
            ))
        }
    }
}

/// The device's write cache as sysfs reports it (`write back`, `write through`), for the
/// report; `None` for a file or when the kernel does not say.
pub fn write_cache(t: &Target) -> Option<String> {
    if t.kind != TargetKind::BlockDevice {
        return None;
    }
    let (maj, min) = crate::context::sysfs::device_number(Path::new(&t.path))?;
    crate::context::sysfs::read_trim(format!("/sys/dev/block/{maj}:{min}/queue/write_cache"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_recreated_empty_at_the_capacity() {
        let dir = std::env::temp_dir().join(format!("pts-purge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t").to_string_lossy().to_string();
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let (t, _) = inspect(&path, None).unwrap();
        assert!(data_note(&t, None).unwrap().unwrap().contains("--force"));
        assert_eq!((t.kind, t.size), (TargetKind::File, 8192));
        assert_eq!(purge(&t, 65536).unwrap(), Method::Recreate);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 65536);
        assert!(data.iter().all(|&b| b == 0));
        assert!(inspect(&dir.join("none").to_string_lossy(), None)
            .unwrap_err()
            .contains("--capacity"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_that_takes_no_discard_is_refused_and_told_about_no_purge() {
        // A regular file posing as a block device: both ioctls fail (ENOTTY), as they do
        // on a device without discard (EOPNOTSUPP).
        let dir = std::env::temp_dir().join(format!("pts-nodiscard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dev").to_string_lossy().to_string();
        std::fs::write(&path, vec![1u8; 4096]).unwrap();
        let t = Target {
            path: path.clone(),
            kind: TargetKind::BlockDevice,
            size: 4096,
        };
        let e = purge(&t, 4096).unwrap_err();
        assert!(
            e.contains("cannot be purged") && e.contains("BLKSECDISCARD"),
            "{e}"
        );
        assert!(e.contains("BLKDISCARD") && e.contains("--no-purge"), "{e}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            vec![1u8; 4096],
            "left untouched"
        );
        let nvme = Target {
            path: "/dev/nvme0n1".into(),
            kind: TargetKind::BlockDevice,
            size: 1,
        };
        assert!(unsupported_note(&nvme).unwrap().contains("not implemented"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
