//! Block devices claimed before work that destroys their data. `pts` and `quick` purge,
//! discard and overwrite a whole device: they open it `O_EXCL` first (the kernel then
//! refuses a device that is mounted, held by device-mapper, md or swap, or opened
//! exclusively by another program, and a whole disk one of whose partitions is), keep
//! that claim for the whole run (so nothing can mount it meanwhile), and look at what is
//! on it (mounts, holders, swap, partitions, a file system or partition-table signature)
//! before the first write. A plain write job keeps fio's behaviour: only a mounted device
//! is refused, and the exclusive open is a probe that catches a mount this process
//! cannot see (another mount namespace).

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What the kernel says about a block device and its partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The kernel's name (`loop3`, `loop3p1`).
    pub name: String,
    /// The device's partitions (none for a partition itself).
    pub partitions: Vec<String>,
    /// `(device, mount point)`: the device or a partition of it mounted.
    pub mounts: Vec<(String, String)>,
    /// `(holder, held)`: a device-mapper, md or bcache device built on it or a partition.
    pub holders: Vec<(String, String)>,
    /// The device or a partition of it in use as swap (/proc/swaps).
    pub swaps: Vec<String>,
}

impl Facts {
    /// Why the device must not be written to by a tool that destroys it: mounted, held
    /// or swap. `None` when it is none of those.
    pub fn in_use(&self) -> Option<String> {
        if let Some((dev, at)) = self.mounts.first() {
            return Some(format!("{dev} is mounted on {at}"));
        }
        if let Some((holder, held)) = self.holders.first() {
            return Some(format!(
                "{held} is held by {holder} (a device-mapper, md or similar device on it)"
            ));
        }
        if let Some(s) = self.swaps.first() {
            return Some(format!("{s} is in use as swap"));
        }
        None
    }
}

/// The sysfs directory of block device number `rdev`.
fn sys_dir(rdev: u64) -> String {
    format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// The names under a sysfs directory (empty when it cannot be read).
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The block device numbers of a device and of its partitions, with their names.
fn family(rdev: u64) -> (String, Vec<(String, u64)>) {
    let sys = sys_dir(rdev);
    let real = std::fs::canonicalize(&sys).unwrap_or_else(|_| sys.clone().into());
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = vec![(name.clone(), rdev)];
    // A whole disk's partitions are the subdirectories that have a `partition` file.
    if !Path::new(&sys).join("partition").exists() {
        for n in names_in(&real) {
            let p = real.join(&n);
            if !p.join("partition").exists() {
                continue;
            }
            if let Some(d) = std::fs::read_to_string(p.join("dev"))
                .ok()
                .and_then(|t| parse_devno(t.trim()))
            {
                out.push((n, d));
            }
        }
    }
    (name, out)
}

/// `MAJOR:MINOR` as a device number.
fn parse_devno(s: &str) -> Option<u64> {
    let (a, b) = s.split_once(':')?;
    Some(libc::makedev(a.parse().ok()?, b.parse().ok()?))
}

/// What the kernel says about block device `path`; `None` when it is not one.
pub fn facts(path: &str) -> Option<Facts> {
    let md = std::fs::metadata(path).ok()?;
    if !md.file_type().is_block_device() {
        return None;
    }
    let (name, fam) = family(md.rdev());
    let mut f = Facts {
        name,
        ..Facts::default()
    };
    f.partitions = fam.iter().skip(1).map(|(n, _)| n.clone()).collect();
    let find = |d: u64| fam.iter().find(|(_, r)| *r == d).map(|(n, _)| n.clone());
    // mountinfo names the device number of each mount; the source path is stat'ed too,
    // for file systems (btrfs) whose mounts carry an anonymous device number.
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let (Some(devno), Some(dir)) = (fields.get(2), fields.get(4)) else {
            continue;
        };
        let source = fields
            .iter()
            .position(|x| *x == "-")
            .and_then(|i| fields.get(i + 2));
        let by_no = parse_devno(devno).and_then(find);
        let by_src = source
            .filter(|s| s.starts_with('/'))
            .and_then(|s| std::fs::metadata(crate::osstr::unescape_octal(s)).ok())
            .filter(|m| m.file_type().is_block_device())
            .and_then(|m| find(m.rdev()));
        if let Some(dev) = by_no.or(by_src) {
            f.mounts.push((dev, crate::osstr::unescape_octal(dir)));
        }
    }
    for (n, d) in &fam {
        for h in names_in(&Path::new(&sys_dir(*d)).join("holders")) {
            f.holders.push((h, n.clone()));
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for line in swaps.lines().skip(1) {
        let Some(p) = line.split_whitespace().next() else {
            continue;
        };
        if let Some(n) = std::fs::metadata(crate::osstr::unescape_octal(p))
            .ok()
            .filter(|m| m.file_type().is_block_device())
            .and_then(|m| find(m.rdev()))
        {
            f.swaps.push(n);
        }
    }
    Some(f)
}

/// Opens block device `path` exclusively (`O_EXCL`): EBUSY when it, or a partition of
/// it, is mounted, held or claimed by another exclusive opener.
pub fn open_exclusive(path: &str, write: bool) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
}

/// The file system, volume or partition-table signature at the start of `f`, by name,
/// if one of the common ones is there (what `wipefs` would list first).
pub fn signature(f: &File) -> io::Result<Option<&'static str>> {
    let mut buf = vec![0u8; 68 << 10];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(signature_in(&buf[..got]))
}

/// [`signature`] over the device's first bytes.
pub fn signature_in(b: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| b.get(off..off + magic.len()) == Some(magic);
    let table: &[(usize, &[u8], &str)] = &[
        (1080, &[0x53, 0xef], "an ext2/ext3/ext4 file system"),
        (0, b"XFSB", "an XFS file system"),
        (65600, b"_BHRfS_M", "a btrfs file system"),
        (1024, &[0x10, 0x20, 0xf5, 0xf2], "an F2FS file system"),
        (0, b"hsqs", "a squashfs image"),
        (32769, b"CD001", "an ISO 9660 image"),
        (0, b"LUKS\xba\xbe", "a LUKS volume"),
        (512, b"LABELONE", "an LVM physical volume"),
        (4086, b"SWAPSPACE2", "a swap area"),
        (4086, b"SWAP-SPACE", "a swap area"),
        (0, &[0xfc, 0x4e, 0x2b, 0xa9], "an md RAID member"),
        (4096, &[0xfc, 0x4e, 0x2b, 0xa9], "an md RAID member"),
        (512, b"EFI PART", "a GPT partition table"),
        (4096, b"EFI PART", "a GPT partition table"),
        (3, b"NTFS    ", "an NTFS file system"),
        (510, &[0x55, 0xaa], "a partition table or boot sector (MBR)"),
    ];
    table
        .iter()
        .find(|(off, magic, _)| at(*off, magic))
        .map(|(_, _, what)| *what)
}

/// The devices this process holds claimed (their numbers): a plain job this process
/// runs on its own claimed device (pts's and quick's jobs) is not refused by the probe.
static HELD: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<u64>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// A block device claimed for destruction: held `O_EXCL` until this drops.
#[derive(Debug)]
pub struct Claim {
    pub path: String,
    pub file: File,
    pub size: u64,
    pub facts: Facts,
    rdev: u64,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut h = held();
        if let Some(i) = h.iter().position(|d| *d == self.rdev) {
            h.remove(i);
        }
    }
}

impl Claim {
    /// What on the device says it holds data (partitions, a file system or partition
    /// table signature), for a refusal without `--force`; `None` when nothing does.
    pub fn data(&self, tool: &str) -> Result<Option<String>, String> {
        let path = &self.path;
        if !self.facts.partitions.is_empty() {
            return Ok(Some(format!(
                "{path} has partitions ({}): {tool} would destroy them; give --force to \
                 use it anyway",
                self.facts.partitions.join(", ")
            )));
        }
        let sig = signature(&self.file).map_err(|e| format!("{path}: read: {e}"))?;
        Ok(sig.map(|what| {
            format!("{path} holds {what}: {tool} would destroy it; give --force to use it anyway")
        }))
    }
}

/// Claims block device `path` for work that destroys its data (`tool` names the
/// command in messages): refused when it is mounted, held, swap or claimed by another
/// program. Whether it holds data is the caller's next look ([`Claim::data`]). Nothing
/// is written.
pub fn claim_unused(path: &str, tool: &str) -> Result<Claim, String> {
    let facts = facts(path).ok_or_else(|| format!("{path}: not a block device"))?;
    if let Some(why) = facts.in_use() {
        return Err(format!(
            "{path}: {why}: {tool} would destroy it; refusing (unmount it or stop what uses it)"
        ));
    }
    let file = open_exclusive(path, true).map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            format!(
                "{path}: in use (the kernel refused an exclusive open: it or a partition of \
                 it is mounted, perhaps in another mount namespace, or another program holds \
                 it): {tool} would destroy it; refusing"
            )
        } else {
            format!("{path}: {e}")
        }
    })?;
    // Claimed: from here nothing can mount or hold it. Look again, for a mount that
    // raced with the claim's look.
    let facts = self::facts(path).unwrap_or(facts);
    if let Some(why) = facts.in_use() {
        return Err(format!("{path}: {why}: {tool} would destroy it; refusing"));
    }
    let size = crate::run::files::block_size(&file).map_err(|e| format!("{path}: size: {e}"))?;
    let rdev = file.metadata().map(|m| m.rdev()).unwrap_or(0);
    held().push(rdev);
    Ok(Claim {
        path: path.to_string(),
        file,
        size,
        facts,
        rdev,
    })
}

/// For a plain write job on block device `path`: why it must be refused as mounted
/// (fio's rule, `allow_mounted_write`), from a visible mount or an exclusive open the
/// kernel refuses for no reason this process can see (a mount in another namespace,
/// another program's exclusive claim). A device held by device-mapper, md or swap is
/// written to, as fio does. `None`: not refused (or not a block device).
pub fn mounted_for_write(path: &str) -> Option<String> {
    let f = facts(path)?;
    if let Some((dev, at)) = f.mounts.first() {
        return Some(if *dev == f.name {
            format!("on {at}")
        } else {
            format!("{dev} on {at}")
        });
    }
    if !f.holders.is_empty() || !f.swaps.is_empty() {
        return None;
    }
    let rdev = std::fs::metadata(path).ok()?.rdev();
    if held().contains(&rdev) {
        return None;
    }
    // The probe itself is exclusive for a moment: another run's probe of the same device
    // at the same time gets EBUSY too, so a refusal is retried before it counts.
    for attempt in 0..5 {
        match open_exclusive(path, false) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                if attempt == 4 {
                    return Some(
                        "in use: the kernel refused an exclusive open, as for a mount in \
                         another namespace"
                            .into(),
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_found_where_they_live() {
        let mut b = vec![0u8; 68 << 10];
        assert_eq!(signature_in(&b), None);
        b[1080] = 0x53;
        b[1081] = 0xef;
        assert!(signature_in(&b).unwrap().contains("ext"));
        let mut b = vec![0u8; 68 << 10];
        b[..4].copy_from_slice(b"XFSB");
        assert!(signature_in(&b).unwrap().contains("XFS"));
        let mut b = vec![0u8; 4096];
        b[510] = 0x55;
        b[511] = 0xaa;
        assert!(signature_in(&b).unwrap().contains("partition table"));
        b[512..520].copy_from_slice(b"EFI PART");
        assert!(signature_in(&b).unwrap().contains("GPT"));
        // A short read (a tiny device) is not out of bounds.
        assert_eq!(signature_in(&[0u8; 10]), None);
    }

    #[test]
    fn mount_table_escapes_are_undone() {
        assert_eq!(crate::osstr::unescape_octal("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(crate::osstr::unescape_octal("/x\\"), "/x\\");
        assert_eq!(crate::osstr::unescape_octal("/x\\04"), "/x\\04");
    }

    #[test]
    fn a_regular_file_is_not_a_device() {
        assert_eq!(facts("/proc/self/status"), None);
        assert!(claim_unused("/proc/self/status", "pts")
            .unwrap_err()
            .contains("not a block device"));
    }
}
