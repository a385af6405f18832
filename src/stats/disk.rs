//! Disk utilisation for the `Disk stats (read/write):` section: the block devices under a
//! job's files (file → filesystem → device; a partition counts as its whole disk; md/dm
//! devices bring their member devices along), with their /sys/block counters read before and
//! after the run.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One reading of a device's `stat` file (the fields fio uses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawDiskStat {
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

impl RawDiskStat {
    /// Parses a /sys/block/X/stat line.
    pub fn parse(line: &str) -> Option<RawDiskStat> {
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|t| t.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        if v.len() < 11 {
            return None;
        }
        Some(RawDiskStat {
            ios: [v[0], v[4]],
            merges: [v[1], v[5]],
            sectors: [v[2], v[6]],
            ticks: [v[3], v[7]],
            io_ticks: v[9],
            time_in_queue: v[10],
        })
    }

    fn read(dir: &Path) -> Option<RawDiskStat> {
        let text = std::fs::read_to_string(dir.join("stat")).ok()?;
        RawDiskStat::parse(text.lines().next()?)
    }

    fn minus(&self, b: &RawDiskStat) -> RawDiskStat {
        let s = |x: u64, y: u64| x.wrapping_sub(y);
        RawDiskStat {
            ios: [s(self.ios[0], b.ios[0]), s(self.ios[1], b.ios[1])],
            merges: [
                s(self.merges[0], b.merges[0]),
                s(self.merges[1], b.merges[1]),
            ],
            sectors: [
                s(self.sectors[0], b.sectors[0]),
                s(self.sectors[1], b.sectors[1]),
            ],
            ticks: [s(self.ticks[0], b.ticks[0]), s(self.ticks[1], b.ticks[1])],
            io_ticks: s(self.io_ticks, b.io_ticks),
            time_in_queue: s(self.time_in_queue, b.time_in_queue),
        }
    }
}

/// Averages over an md/dm device's members (the `aggr*` fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    pub ios: [u64; 2],
    /// Sectors read and written (fio 3.36's `aggr_read_sectors`, `aggr_write_sectors`).
    #[serde(default)]
    pub sectors: [u64; 2],
    pub merges: [u64; 2],
    pub ticks: [u64; 2],
    pub in_queue: u64,
    /// The busiest member's utilisation, in percent.
    pub max_util: f64,
}

/// One device's activity over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    pub name: String,
    pub stat: RawDiskStat,
    /// Busy time over elapsed time, in percent (at most 100).
    pub util: f64,
    pub aggr: Option<Aggregate>,
}

#[derive(Debug, Clone)]
struct Dev {
    name: String,
    dir: PathBuf,
    slaves: Vec<usize>,
}

/// The devices under a set of files and their counters at one moment.
#[derive(Debug, Clone)]
pub struct DiskSnapshot {
    devs: Vec<Dev>,
    before: Vec<RawDiskStat>,
    at: Instant,
}

fn dev_numbers(path: &Path) -> Option<(u64, u64)> {
    let dev = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_block_device() => m.rdev(),
        Ok(m) if m.file_type().is_char_device() || m.file_type().is_fifo() => return None,
        Ok(m) => m.dev(),
        Err(_) => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            std::fs::metadata(parent).ok()?.dev()
        }
    };
    Some((libc::major(dev) as u64, libc::minor(dev) as u64))
}

fn read_dev_entry(p: &Path) -> Option<(u64, u64)> {
    let t = std::fs::read_to_string(p).ok()?;
    let (a, b) = t.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Finds the sysfs directory of device `maj:min` under /sys/block (disks and partitions).
/// The kernel links `/sys/dev/block/MAJ:MIN` to the device's own directory, which answers
/// at once; where that link is missing, every disk and partition is looked through (a
/// study's runs each ask, and the walk was most of a short run's own CPU time).
fn find_block_dir(maj: u64, min: u64) -> Option<PathBuf> {
    linked_block_dir(Path::new("/sys"), maj, min).or_else(|| walk_block_dir(maj, min))
}

/// `/sys/block/<disk>` for `maj:min` through `SYS/dev/block/MAJ:MIN`: the device's directory,
/// or its disk's where the device is a partition (it has a `partition` file).
fn linked_block_dir(sys: &Path, maj: u64, min: u64) -> Option<PathBuf> {
    let real = std::fs::canonicalize(sys.join(format!("dev/block/{maj}:{min}"))).ok()?;
    let disk = if real.join("partition").exists() {
        real.parent()?
    } else {
        &real
    };
    let dir = sys.join("block").join(disk.file_name()?);
    dir.join("stat").exists().then_some(dir)
}

/// [`find_block_dir`] by looking through every disk under /sys/block and its partitions.
fn walk_block_dir(maj: u64, min: u64) -> Option<PathBuf> {
    for e in std::fs::read_dir("/sys/block").ok()?.flatten() {
        let disk = e.path();
        if read_dev_entry(&disk.join("dev")) == Some((maj, min)) {
            return Some(disk);
        }
        // Partitions are subdirectories with their own `dev`; they count as the disk.
        for p in std::fs::read_dir(&disk).into_iter().flatten().flatten() {
            let sub = p.path();
            if sub.join("partition").exists()
                && read_dev_entry(&sub.join("dev")) == Some((maj, min))
            {
                return Some(disk);
            }
        }
    }
    None
}

/// The sysfs directory (`/sys/block/<disk>`) of the disk holding `path`: the device itself
/// for a block device, else the device of its filesystem; a partition maps to its disk.
pub fn disk_dir_of(path: &Path) -> Option<PathBuf> {
    let (maj, min) = dev_numbers(path)?;
    find_block_dir(maj, min)
}

impl DiskSnapshot {
    /// Finds the devices under `paths` (files need not exist yet: their directory is used)
    /// and reads their counters now.
    pub fn take<P: AsRef<Path>>(paths: &[P]) -> DiskSnapshot {
        let mut devs: Vec<Dev> = Vec::new();
        for p in paths {
            let Some((maj, min)) = dev_numbers(p.as_ref()) else {
                continue;
            };
            let Some(dir) = find_block_dir(maj, min) else {
                continue;
            };
            add_dev(&mut devs, dir);
        }
        let before = devs
            .iter()
            .map(|d| RawDiskStat::read(&d.dir).unwrap_or_default())
            .collect();
        DiskSnapshot {
            devs,
            before,
            at: Instant::now(),
        }
    }

    /// Reads the counters again and returns each device's activity since the snapshot, in
    /// the order fio lists them (a device, then any members it brought).
    pub fn delta(&self) -> Vec<DiskUtil> {
        let msec = self.at.elapsed().as_millis() as u64;
        let util_of = |s: &RawDiskStat| {
            if msec == 0 {
                0.0
            } else {
                (100.0 * s.io_ticks as f64 / msec as f64).min(100.0)
            }
        };
        let deltas: Vec<RawDiskStat> = self
            .devs
            .iter()
            .zip(&self.before)
            .map(|(d, b)| RawDiskStat::read(&d.dir).unwrap_or(*b).minus(b))
            .collect();
        self.devs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let aggr = if d.slaves.is_empty() {
                    None
                } else {
                    let mut a = Aggregate::default();
                    for &s in &d.slaves {
                        let st = &deltas[s];
                        for k in 0..2 {
                            a.ios[k] += st.ios[k];
                            a.merges[k] += st.merges[k];
                            a.sectors[k] += st.sectors[k];
                            a.ticks[k] += st.ticks[k];
                        }
                        a.in_queue += st.time_in_queue;
                        a.max_util = a.max_util.max(util_of(st));
                    }
                    let n = d.slaves.len() as u64;
                    for k in 0..2 {
                        a.ios[k] /= n;
                        a.merges[k] /= n;
                        a.sectors[k] /= n;
                        a.ticks[k] /= n;
                    }
                    a.in_queue /= n;
                    Some(a)
                };
                DiskUtil {
                    name: d.name.clone(),
                    stat: deltas[i],
                    util: util_of(&deltas[i]),
                    aggr,
                }
            })
            .collect()
    }
}

/// Adds the device at sysfs `dir` (and its members) unless already listed; its index.
fn add_dev(devs: &mut Vec<Dev>, dir: PathBuf) -> usize {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(i) = devs.iter().position(|d| d.name == name) {
        return i;
    }
    devs.push(Dev {
        name,
        dir: dir.clone(),
        slaves: Vec::new(),
    });
    let me = devs.len() - 1;
    let mut slaves = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("slaves")) {
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            if let Ok(real) = std::fs::canonicalize(&e) {
                // A member that is a partition counts as its disk, as for files.
                let real = if real.join("partition").exists() {
                    real.parent().map(Path::to_path_buf).unwrap_or(real)
                } else {
                    real
                };
                slaves.push(add_dev(devs, real));
            }
        }
    }
    devs[me].slaves = slaves;
    me
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_link_finds_the_disk_the_walk_finds() {
        // Every disk and partition of this machine: the /sys/dev/block link gives the
        // directory the walk through /sys/block gives.
        let mut seen = 0;
        for e in std::fs::read_dir("/sys/block")
            .into_iter()
            .flatten()
            .flatten()
        {
            let disk = e.path();
            let subs = std::fs::read_dir(&disk).into_iter().flatten().flatten();
            let parts = subs
                .map(|p| p.path())
                .filter(|p| p.join("partition").exists());
            for dev in std::iter::once(disk.clone()).chain(parts) {
                let Some((maj, min)) = read_dev_entry(&dev.join("dev")) else {
                    continue;
                };
                let linked = linked_block_dir(Path::new("/sys"), maj, min);
                assert_eq!(linked, walk_block_dir(maj, min), "{}", dev.display());
                assert_eq!(linked.as_deref(), Some(disk.as_path()), "{}", dev.display());
                seen += 1;
            }
        }
        // A fake sysfs where sda1 is a partition of sda, as the kernel lays them out.
        let root = std::env::temp_dir().join(format!("iobench-devlink-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let sda = root.join("devices/pci0/sda");
        std::fs::create_dir_all(sda.join("sda1")).unwrap();
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        std::fs::create_dir_all(root.join("block")).unwrap();
        std::fs::write(sda.join("stat"), "0").unwrap();
        std::fs::write(sda.join("sda1/partition"), "1").unwrap();
        std::os::unix::fs::symlink(&sda, root.join("block/sda")).unwrap();
        std::os::unix::fs::symlink(&sda, root.join("dev/block/8:0")).unwrap();
        std::os::unix::fs::symlink(sda.join("sda1"), root.join("dev/block/8:1")).unwrap();
        for min in [0, 1] {
            assert_eq!(
                linked_block_dir(&root, 8, min),
                Some(root.join("block/sda"))
            );
        }
        assert_eq!(linked_block_dir(&root, 8, 2), None);
        let _ = std::fs::remove_dir_all(&root);
        assert!(seen > 0 || !Path::new("/sys/block").exists());
    }

    #[test]
    fn parses_a_stat_line() {
        let s = RawDiskStat::parse("  1234  5  6789  10  200  3  4000  50  0  70  80  0 0 0 0 0 0")
            .unwrap();
        assert_eq!(s.ios, [1234, 200]);
        assert_eq!(s.merges, [5, 3]);
        assert_eq!(s.ticks, [10, 50]);
        assert_eq!((s.io_ticks, s.time_in_queue), (70, 80));
        assert!(RawDiskStat::parse("1 2 3").is_none());
    }

    /// A /sys/block/X/stat line with the given reads, merges, ticks, busy time, queue time.
    fn stat_line(ios: u64, merges: u64, ticks: u64, io_ticks: u64, queue: u64) -> String {
        format!("{ios} {merges} 8 {ticks} {ios} {merges} 8 {ticks} 0 {io_ticks} {queue} 0 0 0 0\n")
    }

    #[test]
    fn a_md_device_brings_its_members_and_their_averages() {
        // A fake sysfs: md9 with members fa and fb (links under md9/slaves, as the kernel
        // lays them out), since md and dm need root and a kernel that has them.
        let root = std::env::temp_dir().join(format!("iobench-aggr-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["md9/slaves", "fa", "fb"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for m in ["fa", "fb"] {
            std::os::unix::fs::symlink(root.join(m), root.join("md9/slaves").join(m)).unwrap();
        }
        let write =
            |d: &str, line: String| std::fs::write(root.join(d).join("stat"), line).unwrap();
        write("md9", stat_line(0, 0, 0, 0, 0));
        write("fa", stat_line(0, 0, 0, 0, 0));
        write("fb", stat_line(0, 0, 0, 0, 0));
        let mut devs = Vec::new();
        add_dev(&mut devs, root.join("md9"));
        let before = devs
            .iter()
            .map(|d| RawDiskStat::read(&d.dir).unwrap_or_default())
            .collect();
        let snap = DiskSnapshot {
            devs,
            before,
            at: Instant::now() - std::time::Duration::from_secs(1000),
        };
        write("md9", stat_line(300, 0, 0, 0, 0));
        write("fa", stat_line(100, 10, 40, 100_000, 50));
        write("fb", stat_line(201, 21, 61, 500_000, 71));
        let d = snap.delta();
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["md9", "fa", "fb"], "the device, then its members");
        let a = d[0].aggr.expect("md9 has aggr fields");
        // Sums over the members divided by their count (integer division, as fio prints).
        assert_eq!(a.ios, [150, 150]);
        assert_eq!(a.merges, [15, 15]);
        assert_eq!(a.ticks, [50, 50]);
        assert_eq!(a.in_queue, 60);
        // The busiest member's utilisation (fb: 500 s busy of ~1000 s).
        assert!((a.max_util - 50.0).abs() < 1.0, "{}", a.max_util);
        assert!(d[1].aggr.is_none() && d[2].aggr.is_none());
        assert_eq!(d[0].stat.ios, [300, 300]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn finds_the_disk_under_a_directory() {
        // Works wherever /tmp sits on a block device; on tmpfs there is nothing to find.
        let snap = DiskSnapshot::take(&["/tmp/iobench-no-such-file"]);
        for d in snap.delta() {
            assert!(!d.name.is_empty());
            assert!(d.util <= 100.0);
        }
    }
}
