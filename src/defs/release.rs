//! The fio releases iobench can speak as (its dialects): 3.33 to 3.42. A release is one
//! small value, consulted wherever fio changed behaviour between releases (seeds, JSON keys,
//! the server protocol, option names, the version line), so that "which fio am I" is never
//! a string compared in many places.

use std::fmt;

/// A fio release of the 3.x line, from 3.33 (Debian 12's) to 3.42 (the newest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FioRelease {
    minor: u8,
}

impl FioRelease {
    /// fio 3.33, of November 2022 (Debian 12).
    pub const V3_33: FioRelease = FioRelease { minor: 33 };
    /// fio 3.34.
    pub const V3_34: FioRelease = FioRelease { minor: 34 };
    /// fio 3.35: new default seeds; `randseed` overrides `randrepeat`.
    pub const V3_35: FioRelease = FioRelease { minor: 35 };
    /// fio 3.36: `job_start` in the JSON output.
    pub const V3_36: FioRelease = FioRelease { minor: 36 };
    /// fio 3.37.
    pub const V3_37: FioRelease = FioRelease { minor: 37 };
    /// fio 3.38: `atomic=1` as RWF_ATOMIC.
    pub const V3_38: FioRelease = FioRelease { minor: 38 };
    /// fio 3.39 (Debian 13).
    pub const V3_39: FioRelease = FioRelease { minor: 39 };
    /// fio 3.40: `uncached=1` as RWF_DONTCACHE.
    pub const V3_40: FioRelease = FioRelease { minor: 40 };
    /// fio 3.41.
    pub const V3_41: FioRelease = FioRelease { minor: 41 };
    /// fio 3.42, the newest release and iobench's default dialect.
    pub const V3_42: FioRelease = FioRelease { minor: 42 };

    /// The oldest release iobench speaks.
    pub const OLDEST: FioRelease = FioRelease::V3_33;
    /// The release iobench speaks unless told otherwise.
    pub const DEFAULT: FioRelease = FioRelease::V3_42;

    /// Every release iobench speaks, oldest first.
    pub fn all() -> impl Iterator<Item = FioRelease> {
        (Self::OLDEST.minor..=Self::DEFAULT.minor).map(|minor| FioRelease { minor })
    }

    /// The minor number (`39` for 3.39).
    pub const fn minor(self) -> u8 {
        self.minor
    }

    /// Reads `3.39`, `fio-3.39` or `3.39.0`; anything outside 3.33..=3.42 is an error
    /// that names the releases iobench speaks.
    pub fn parse(text: &str) -> Result<FioRelease, String> {
        let t = text.trim();
        let t = t.strip_prefix("fio-").unwrap_or(t);
        let bad = || {
            format!(
                "'{text}' is not a fio release iobench speaks (expected 3.{}..3.{}, e.g. 3.39)",
                Self::OLDEST.minor,
                Self::DEFAULT.minor
            )
        };
        let mut parts = t.split('.');
        let (Some("3"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(bad());
        };
        if parts.any(|p| p.parse::<u32>().is_err()) {
            return Err(bad());
        }
        let minor: u8 = minor.parse().map_err(|_| bad())?;
        if !(Self::OLDEST.minor..=Self::DEFAULT.minor).contains(&minor) {
            return Err(bad());
        }
        Ok(FioRelease { minor })
    }
}

impl Default for FioRelease {
    fn default() -> Self {
        FioRelease::DEFAULT
    }
}

/// The environment variable that selects a dialect, as `--fio-compat` does.
pub const ENV: &str = "IOBENCH_FIO_COMPAT";

impl FioRelease {
    /// The dialect `IOBENCH_FIO_COMPAT` selects, or the default when it is unset or empty;
    /// a value that is not a release iobench speaks is an error naming the variable.
    pub fn from_env() -> Result<FioRelease, String> {
        match std::env::var(ENV) {
            Ok(v) if !v.trim().is_empty() => {
                FioRelease::parse(&v).map_err(|e| format!("{ENV}={v}: {e}"))
            }
            _ => Ok(FioRelease::DEFAULT),
        }
    }

    /// The dialect a command line selects: `--fio-compat=V` (or `--fio-compat V`, the last
    /// one winning) over `IOBENCH_FIO_COMPAT` over the default. For the modes (client,
    /// server, peak) that read their arguments before the plain run's parser does.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<FioRelease, String> {
        let mut rel = FioRelease::from_env()?;
        let mut it = args.iter().map(|a| a.as_ref());
        while let Some(a) = it.next() {
            let v = match a.strip_prefix("--fio-compat") {
                Some(rest) if rest.starts_with('=') => rest[1..].to_string(),
                Some("") => it.next().unwrap_or("").to_string(),
                _ => continue,
            };
            rel = FioRelease::parse(&v).map_err(|e| format!("--fio-compat={v}: {e}"))?;
        }
        Ok(rel)
    }

    /// fio 3.35 made `randseed` override `randrepeat`, dropped the separate
    /// `allrandrepeat` seeding (it became an alias of `randrepeat`) and stopped pinning the
    /// block stream to the built-in seed (fio commit 95282650).
    pub fn randseed_overrides_randrepeat(self) -> bool {
        self >= FioRelease::V3_35
    }

    /// fio 3.36 reports each job's `job_start` (ms) in JSON.
    pub fn reports_job_start(self) -> bool {
        self >= FioRelease::V3_36
    }

    /// The client/server protocol version (`FIO_SERVER_VER`) this release's fio speaks,
    /// as its release tag sets it (see `SERVER_VERSIONS`). Distributions may patch it:
    /// Debian 13's fio 3.39 speaks 109, with two option fixes of 3.40 applied.
    pub const fn server_version(self) -> u16 {
        let mut k = 0;
        while k < SERVER_VERSIONS.len() {
            if SERVER_VERSIONS[k].0 == self.minor {
                return SERVER_VERSIONS[k].1;
            }
            k += 1;
        }
        SERVER_VERSIONS[SERVER_VERSIONS.len() - 1].1
    }

    /// The newest release whose protocol version is at most `version`: the fio a peer of
    /// that version most likely is (an untagged number between releases, such as 109 or
    /// 121, belongs to the release before it). `None` below fio 3.33's 97.
    pub fn of_server_version(version: u16) -> Option<FioRelease> {
        SERVER_VERSIONS
            .iter()
            .rev()
            .find(|&&(_, v)| v <= version)
            .map(|&(minor, _)| FioRelease { minor })
    }

    /// fio 3.39 made its client's JSON `global options` an array, one object per server
    /// (with its `hostname` and `port`) when it drives several, and prints percentiles in
    /// "All clients" (fio commits 6f771553 and 9e271031).
    pub fn client_global_options_per_server(self) -> bool {
        self >= FioRelease::V3_39
    }

    /// fio 3.42 reports `latency_target_ns` and `latency_window_us` per job in JSON.
    pub fn reports_latency_target(self) -> bool {
        self >= FioRelease::V3_42
    }

    /// fio 3.42's normal output: the sync latency block is headed
    /// `fsync/fdatasync/sync_file_range/syncfs`, and the `latency   :` line gives its
    /// target and window with units (`target=10.00ms, window=1000.00ms`), where older
    /// releases print the bare numbers (ns and µs).
    pub fn normal_output_3_42(self) -> bool {
        self >= FioRelease::V3_42
    }

    /// fio 3.35 lists a job's random seeds under `--debug=random`.
    pub fn prints_rand_seeds(self) -> bool {
        self >= FioRelease::V3_35
    }

    /// How many random streams a job seeds (`FIO_RAND_NR_OFFS`): 21 up to 3.35, FDP's
    /// stream from 3.36, sprandom's from 3.41.
    pub fn rand_streams(self) -> usize {
        if self >= FioRelease::V3_41 {
            23
        } else if self >= FioRelease::V3_36 {
            22
        } else {
            21
        }
    }

    /// The longest `buffer_pattern`/`verify_pattern`: 512 bytes up to 3.33; fio 3.34
    /// allocates the pattern to its length (commit 1dc47d6b), so a whole file can be one.
    /// iobench bounds it at 16 MiB there, so a pattern named after a huge file is an error
    /// rather than an unbounded read.
    pub fn longest_pattern(self) -> usize {
        if self >= FioRelease::V3_34 {
            16 << 20
        } else {
            512
        }
    }
}

/// Each release's protocol version (`FIO_SERVER_VER` in server.h at its tag): `(minor,
/// version)`. fio bumps the version with every change to what travels, most of them to
/// the packed job options: 98-99 (3.34: pattern buffers, FDP), 100 (3.35: seeds), 101
/// (3.36: priohint; `job_start` in thread_stat), 102-103 (3.37: per_job_logs in the log
/// header, two values per log sample; trim ranges), 104-107 (3.38: data placement,
/// log_issue_time), 108-111 (3.40: verify options), 112-113 (3.41: filetype, sprandom),
/// 114-120 (3.42: zone resets moved to the end of thread_stat, the latency steady-state
/// ring, ramp_size, comm, end_syncfs, write_zone_remainder), 121 (master: crash-aware
/// verify). docs/compatibility.md has the table.
pub const SERVER_VERSIONS: [(u8, u16); 10] = [
    (33, 97),
    (34, 99),
    (35, 100),
    (36, 101),
    (37, 103),
    (38, 107),
    (39, 107),
    (40, 111),
    (41, 113),
    (42, 120),
];

impl fmt::Display for FioRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "3.{}", self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::FioRelease;

    #[test]
    fn releases_parse_in_fios_spellings_and_nothing_else() {
        assert_eq!(FioRelease::parse("3.39"), Ok(FioRelease::V3_39));
        assert_eq!(FioRelease::parse("fio-3.33"), Ok(FioRelease::V3_33));
        assert_eq!(FioRelease::parse("3.42.0"), Ok(FioRelease::V3_42));
        for bad in ["3.32", "3.43", "2.39", "3", "3.x", "", "fio-3.39-rc1"] {
            let e = FioRelease::parse(bad).unwrap_err();
            assert!(e.contains("3.33..3.42"), "{bad}: {e}");
        }
        assert_eq!(FioRelease::all().count(), 10);
        assert!(FioRelease::V3_35 > FioRelease::V3_33);
        assert_eq!(FioRelease::DEFAULT.to_string(), "3.42");
    }

    #[test]
    fn every_release_has_its_protocol_version() {
        assert_eq!(FioRelease::V3_33.server_version(), 97);
        assert_eq!(FioRelease::V3_39.server_version(), 107);
        assert_eq!(FioRelease::V3_41.server_version(), 113);
        assert_eq!(FioRelease::V3_42.server_version(), 120);
        for r in FioRelease::all() {
            assert_eq!(
                FioRelease::of_server_version(r.server_version()).map(|x| x.server_version()),
                Some(r.server_version())
            );
        }
        assert_eq!(FioRelease::of_server_version(109), Some(FioRelease::V3_39));
        assert_eq!(FioRelease::of_server_version(121), Some(FioRelease::V3_42));
        assert_eq!(FioRelease::of_server_version(98), Some(FioRelease::V3_33));
        assert_eq!(FioRelease::of_server_version(96), None);
    }
}
