//! `verify_state_save` / `verify_state_load`: fio's verify state file. A writing job with
//! verify leaves `local-<job>-<n>-verify.state` behind (how many writes it issued and the
//! offsets of its last `iodepth` completed writes per file), so that after a crash or a
//! power cut a `verify_only` run with `verify_state_load=1` checks only what is known to
//! have reached the device. Same layout as fio 3.33 (version 3), so either program can read
//! the other's file.

use super::checksum::crc32c_fio;
use std::io;
use std::path::{Path, PathBuf};

/// fio 3.33's format version.
const VERSION: u64 = 3;
/// fio 3.39's format version: a field for the completions kept per file (twice the depth
/// on an asynchronous engine), so the record's head grows by 8 bytes (the field and
/// alignment padding).
const VERSION_4: u64 = 4;
/// Bytes of the per-thread record before its completions, in version 3.
const LIST_HEAD: usize = 8 + 4 + 4 + 8 + 8 + 8 + 48 + 64;

/// The state file version fio `release` writes and reads, when iobench writes it: 3 up
/// to fio 3.38, 4 in 3.39 and 3.40. fio 3.41's version 5 (the write numbers in flight
/// instead of the completed offsets) is not done: iobench keeps version 4 there.
pub fn version_of(release: crate::defs::FioRelease) -> u64 {
    if release >= crate::defs::FioRelease::V3_39 {
        VERSION_4
    } else {
        VERSION
    }
}

/// Bytes of the record head in `version`.
fn list_head(version: u64) -> usize {
    if version == VERSION_4 {
        LIST_HEAD + 8
    } else {
        LIST_HEAD
    }
}

/// The file fio uses in `dir`: `local-<name with '/' as '.'>-<index>-verify.state`.
pub fn file_name(dir: &Path, job: &str, index: u64) -> PathBuf {
    dir.join(format!(
        "local-{}-{index}-verify.state",
        job.replace('/', ".")
    ))
}

/// The last `depth` completed write offsets of each file, kept while the job writes.
pub struct Completions {
    /// Entries kept per file (fio 3.39: twice `iodepth` on an asynchronous engine).
    depth: usize,
    /// The job's iodepth as the state records it.
    iodepth: usize,
    version: u64,
    /// `files * depth` offsets, a ring per file.
    ring: Vec<u64>,
    next: Vec<usize>,
    completed: u64,
}

impl Completions {
    /// Rings for `files` files of `depth` entries, allocated once before any I/O, saved
    /// as state file `version`; from version 4 an asynchronous engine's rings keep twice
    /// as many (fio commit 9abce429).
    pub fn new(files: usize, depth: usize, version: u64, sync_engine: bool) -> Completions {
        let iodepth = depth.max(1);
        let depth = if version >= VERSION_4 && !sync_engine {
            2 * iodepth
        } else {
            iodepth
        };
        Completions {
            depth,
            iodepth,
            version,
            ring: vec![0; files.max(1) * depth],
            next: vec![0; files.max(1)],
            completed: 0,
        }
    }

    /// Notes one completed write (no allocation).
    #[inline]
    pub fn record(&mut self, file: usize, offset: u64) {
        if let Some(n) = self.next.get_mut(file) {
            self.ring[file * self.depth + *n] = offset;
            *n = (*n + 1) % self.depth;
            self.completed += 1;
        }
    }

    /// Writes the state file in `dir` for job `name`, thread `index` (0-based), which
    /// issued `issued` writes.
    pub fn save(&self, dir: &Path, name: &str, index: u64, issued: u64) -> io::Result<()> {
        let files = self.next.len();
        let per_file = self.completed.min(self.depth as u64) as usize;
        let mut body = Vec::with_capacity(list_head(self.version) + files * self.depth * 16);
        body.extend_from_slice(&((per_file * files) as u64).to_le_bytes());
        body.extend_from_slice(&(self.iodepth as u32).to_le_bytes());
        if self.version >= VERSION_4 {
            body.extend_from_slice(&(self.depth as u32).to_le_bytes());
        }
        body.extend_from_slice(&(files as u32).to_le_bytes());
        if self.version >= VERSION_4 {
            body.extend_from_slice(&[0u8; 4]);
        }
        body.extend_from_slice(&issued.to_le_bytes());
        body.extend_from_slice(&index.to_le_bytes());
        // fio's random state (informational; nothing reads it back): left empty.
        body.extend_from_slice(&[0u8; 8 + 48]);
        let mut jname = [0u8; 64];
        let n = name.len().min(63);
        jname[..n].copy_from_slice(&name.as_bytes()[..n]);
        body.extend_from_slice(&jname);
        let mut comps = vec![0u8; files * self.depth * 16];
        let mut at = 0;
        for f in 0..files {
            // Newest first, as fio lists them.
            let mut j = self.next[f];
            for _ in 0..per_file {
                j = if j == 0 { self.depth - 1 } else { j - 1 };
                comps[at..at + 8].copy_from_slice(&(f as u64).to_le_bytes());
                comps[at + 8..at + 16]
                    .copy_from_slice(&self.ring[f * self.depth + j].to_le_bytes());
                at += 16;
            }
        }
        body.extend_from_slice(&comps);
        let mut out = Vec::with_capacity(24 + body.len());
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&(crc32c_fio(&body) as u64).to_le_bytes());
        out.extend_from_slice(&body);
        let path = file_name(dir, name, index);
        std::fs::write(&path, out)
            .map_err(|e| io::Error::new(e.kind(), format!("state file {}: {e}", path.display())))
    }
}

/// A loaded state: where the saved run's writes stopped being certain.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub numberio: u64,
    pub depth: u64,
    /// (file index, offset) of the writes seen complete at the end.
    pub comps: Vec<(u64, u64)>,
}

impl Loaded {
    /// Reads the state file (of `version`) in `dir` of job `name`, thread `index`.
    pub fn load(dir: &Path, name: &str, index: u64, version: u64) -> io::Result<Loaded> {
        let path = file_name(dir, name, index);
        let bad = |m: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("verify state file {}: {m}", path.display()),
            )
        };
        let data = std::fs::read(&path).map_err(|e| bad(e.to_string()))?;
        Self::parse_version(&data, version).map_err(bad)
    }

    /// Parses a state file's bytes, of fio 3.33's version.
    #[cfg(test)]
    pub fn parse(data: &[u8]) -> Result<Loaded, String> {
        Self::parse_version(data, VERSION)
    }

    /// Parses a state file's bytes, which must be of `want`'s version.
    pub fn parse_version(data: &[u8], want: u64) -> Result<Loaded, String> {
        let u64_at = |b: &[u8], at: usize| -> Result<u64, String> {
            b.get(at..at + 8)
                .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
                .ok_or_else(|| "too short".to_string())
        };
        let u32_at = |b: &[u8], at: usize| -> Result<u32, String> {
            b.get(at..at + 4)
                .map(|s| u32::from_le_bytes(s.try_into().unwrap_or([0; 4])))
                .ok_or_else(|| "too short".to_string())
        };
        let version = u64_at(data, 0)?;
        if version != want {
            return Err(format!("unsupported version {version} (expected {want})"));
        }
        let size = u64_at(data, 8)? as usize;
        let crc = u64_at(data, 16)?;
        let body = data
            .get(24..24usize.saturating_add(size))
            .ok_or("shorter than its header says")?;
        if crc32c_fio(body) as u64 != crc {
            return Err("the state is corrupt (checksum mismatch)".into());
        }
        let no_comps = u64_at(body, 0)? as usize;
        let depth = u32_at(body, 8)? as u64;
        let grown = if want >= VERSION_4 { 8 } else { 0 };
        let numberio = u64_at(body, 16 + grown)?;
        let mut comps = Vec::with_capacity(no_comps.min(body.len() / 16));
        for i in 0..no_comps {
            let at = list_head(want) + i * 16;
            comps.push((u64_at(body, at)?, u64_at(body, at + 8)?));
        }
        Ok(Loaded {
            numberio,
            depth,
            comps,
        })
    }

    /// fio's rule for a job that only reads and verifies (`rw=read verify=md5
    /// verify_state_load=1`): before a read is issued, with `reads_done` reads completed,
    /// true when it falls in the last-`depth` window of the saved writes and is not one of
    /// the writes seen complete, so the job stops there.
    pub fn read_stops(&self, reads_done: u64, file: u64, offset: u64) -> bool {
        let outside = (reads_done < self.depth
            || self.numberio.wrapping_sub(reads_done) > self.depth)
            && self.numberio > self.depth;
        !outside && !self.comps.contains(&(file, offset))
    }

    /// The write sequence number (0-based, in issue order) at which fio would stop
    /// verifying: the first write in the last-`depth` window not seen complete. Blocks
    /// from there on are not checked. `pieces` yields (sequence, file, offset).
    pub fn stop_at(&self, pieces: impl Iterator<Item = (u64, u64, u64)>) -> u64 {
        let mut stop = u64::MAX;
        for (seq, file, offset) in pieces {
            let outside = (seq < self.depth || self.numberio.wrapping_sub(seq) > self.depth)
                && self.numberio > self.depth;
            if outside || self.comps.contains(&(file, offset)) {
                continue;
            }
            stop = stop.min(seq);
        }
        stop
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_state_reads_back() {
        let dir = std::env::temp_dir().join(format!("iobench-vstate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = Completions::new(1, 4, VERSION, true);
        for off in [0u64, 4096, 8192, 12288, 16384, 20480] {
            c.record(0, off);
        }
        c.save(&dir, "a/j", 7, 6).unwrap();
        assert!(dir.join("local-a.j-7-verify.state").exists());
        let l = Loaded::load(&dir, "a/j", 7, VERSION).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(l.numberio, 6);
        assert_eq!(l.depth, 4);
        assert_eq!(l.comps, vec![(0, 20480), (0, 16384), (0, 12288), (0, 8192)]);
    }

    /// A state file fio 3.33 wrote (job "vs", randwrite 64 KiB in 4 KiB blocks, iodepth 4).
    #[test]
    fn reads_a_file_fio_wrote() {
        let mut f = vec![0u8; 240];
        let put =
            |f: &mut Vec<u8>, at: usize, v: u64| f[at..at + 8].copy_from_slice(&v.to_le_bytes());
        put(&mut f, 0, 3);
        put(&mut f, 8, 216);
        put(&mut f, 0x18, 4);
        f[0x20] = 4;
        f[0x24] = 1;
        put(&mut f, 0x28, 16);
        f[0x40..0x4c].copy_from_slice(&[
            0x3d, 0xad, 0xb9, 0xcc, 0xf8, 0x27, 0xa3, 0x05, 0xc8, 0x67, 0x7e, 0x13,
        ]);
        f[0x70..0x72].copy_from_slice(b"vs");
        for (i, off) in [0xc000u64, 0x9000, 0x4000, 0x3000].iter().enumerate() {
            put(&mut f, 0xb8 + i * 16, *off);
        }
        put(&mut f, 16, 0xfaf8_6334);
        let l = Loaded::parse(&f).unwrap();
        assert_eq!(l.numberio, 16);
        assert_eq!(l.comps[0], (0, 0xc000));
        assert_eq!(l.comps[3], (0, 0x3000));
    }

    #[test]
    fn stop_rule_follows_the_window() {
        let l = Loaded {
            numberio: 10,
            depth: 2,
            comps: vec![(0, 9 * 4096), (0, 7 * 4096)],
        };
        // Writes 0..10 at offsets seq*4096: seq 8 (in the window, not seen) stops it.
        let stop = l.stop_at((0..10).map(|s| (s, 0, s * 4096)));
        assert_eq!(stop, 8);
    }
}
