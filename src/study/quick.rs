//! `iobench quick [TARGET]`: a one-screen standard test in CrystalDiskMark's manner, with
//! KDiskMark's presets and the fio jobs KDiskMark runs for them.
//!
//! KDiskMark lays out a test file with a `create_only` fio job, then runs one fio job per
//! test and loop (libaio, direct=1, end_fsync=1, refill_buffers, randrepeat=0,
//! group_reporting, JSON output), dropping the page cache before each loop, and removes
//! the file at the end. Its Default profile averages the loops; Peak and Real World keep
//! the best of them. Here each of those jobs is the same argument list handed to
//! [`crate::session`], so every measurement is exactly a plain run of that job, in this
//! process; `--dry-run` prints the argument lists as fio command lines.
//!
//! Safety: quick writes only to a file it creates itself (`iobench-quick-XXXXXX.tmp` in a
//! target directory, or a target path that does not exist yet) and removes it afterwards.
//! An existing file with data, or a device, is written to only with `--force`.

use super::progress::Progress;
use crate::defs::value::{parse_size, parse_time_us, KbBase};
use crate::defs::TimeUnit;
use crate::flags::{self, Flag, Spec, Takes};
use crate::report::json::Value as FioValue;
use crate::study::vocab::{self, Format};
use serde_json::{json, Value};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `iobench quick`'s flags and the usage its `--help` prints.
pub const SPEC: Spec<QuickOptions> = Spec {
    command: "quick",
    usage: "\
usage: iobench quick [options] [TARGET]

A one-screen standard test in CrystalDiskMark's manner, with KDiskMark's presets and fio
jobs: sequential and random reads, then writes, each repeated over a number of loops.
TARGET is a directory (default: the current one), in which a test file is created and
removed afterwards, or a file path that does not exist yet. An existing file with data or
a device is written to only with --force (its data is destroyed).",
    flags: &[
        Flag {
            names: &["--preset"],
            takes: Takes::Value,
            form: "NAME",
            help: "default (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1),\n\
                   nvme (SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1),\n\
                   peak (SEQ1M Q8T1, RND4K Q32T1), peak-nvme (SEQ1M Q8T1,\n\
                   RND4K Q32T16), real-world (SEQ1M Q1T1, RND4K Q1T1),\n\
                   demo (SEQ1M Q8T1). default averages the loops; the others\n\
                   keep the best loop, as KDiskMark does.",
            apply: |o, v| {
                o.preset = Preset::parse(v.text()).ok_or_else(|| {
                    bad(
                        v.flag,
                        v.text(),
                        "default, nvme, peak, peak-nvme, real-world or demo",
                    )
                })?;
                Ok(())
            },
        },
        Flag {
            names: &["--loops", "--repeat", "-r"],
            takes: Takes::Value,
            form: "N",
            help: "runs of each test (default 3; KDiskMark: 5)",
            apply: |o, v| {
                o.loops = v
                    .text()
                    .parse()
                    .ok()
                    .filter(|&n| (1..=1000).contains(&n))
                    .ok_or_else(|| bad(v.flag, v.text(), "a whole number from 1 to 1000"))?;
                Ok(())
            },
        },
        Flag {
            names: &["--size"],
            takes: Takes::Value,
            form: "SIZE",
            help: "test file size (default 1g; KDiskMark: 1 GiB)",
            apply: |o, v| {
                o.size = parse_size(v.text(), KbBase::Binary)
                    .ok()
                    .filter(|&s| s >= 1 << 20)
                    .ok_or_else(|| {
                        bad(
                            v.flag,
                            v.text(),
                            "a size of at least 1m, such as 256m or 1g",
                        )
                    })?;
                Ok(())
            },
        },
        Flag {
            names: &["--duration"],
            takes: Takes::Value,
            form: "TIME",
            help: "longest time of one run (default 2s; KDiskMark: 5s)",
            apply: |o, v| {
                o.duration_us = parse_time_us(v.text(), TimeUnit::Sec)
                    .ok()
                    .filter(|&us| us >= 1000)
                    .ok_or_else(|| {
                        bad(
                            v.flag,
                            v.text(),
                            "a time of at least 1ms, such as 2, 500ms or 5s",
                        )
                    })?;
                Ok(())
            },
        },
        Flag {
            names: &["--interval"],
            takes: Takes::Value,
            form: "TIME",
            help: "pause between tests (default 0; KDiskMark: 5s)",
            apply: |o, v| {
                o.interval_us = parse_time_us(v.text(), TimeUnit::Sec)
                    .map_err(|_| bad(v.flag, v.text(), "a time such as 0, 1 or 500ms"))?;
                Ok(())
            },
        },
        Flag {
            names: &["--mode"],
            takes: Takes::Value,
            form: "all|read|write",
            help: "which directions to run (default all)",
            apply: |o, v| {
                (o.read, o.write) = match v.text() {
                    "all" => (true, true),
                    "read" => (true, false),
                    "write" => (false, true),
                    _ => return Err(bad(v.flag, v.text(), "all, read or write")),
                };
                Ok(())
            },
        },
        Flag {
            names: &["--mix"],
            takes: Takes::MaybeValue,
            form: "PCT",
            help: "also the mixed tests, PCT % reads (default 70)",
            apply: |o, v| {
                let pct = match v.value {
                    None => 70,
                    Some(t) => t
                        .parse()
                        .ok()
                        .filter(|&p| (0..=100).contains(&p))
                        .ok_or_else(|| bad(v.flag, t, "a read percentage from 0 to 100"))?,
                };
                o.mix = Some(pct);
                Ok(())
            },
        },
        Flag {
            names: &["--zero-buffers"],
            takes: Takes::Nothing,
            form: "",
            help: "write zeros instead of random data",
            apply: |a, _| {
                a.zero_buffers = true;
                Ok(())
            },
        },
        Flag {
            names: &["--refill-buffers"],
            takes: Takes::Nothing,
            form: "",
            help: "new random data for every write (KDiskMark's\n\
                   \"continuous generation\"; default off, as there)",
            apply: |a, _| {
                a.refill_buffers = true;
                Ok(())
            },
        },
        Flag {
            names: &["--no-drop-caches"],
            takes: Takes::Nothing,
            form: "",
            help: "do not drop the page cache before each loop",
            apply: |a, _| {
                a.drop_caches = false;
                Ok(())
            },
        },
        Flag {
            names: &["--force"],
            takes: Takes::Nothing,
            form: "",
            help: "allow writing to a device or an existing file with data",
            apply: |a, _| {
                a.force = true;
                Ok(())
            },
        },
        Flag {
            names: &["--dry-run"],
            takes: Takes::Nothing,
            form: "",
            help: "print the fio command line of each run and the time estimate",
            apply: |a, _| {
                a.dry_run = true;
                Ok(())
            },
        },
        vocab::output_format("the report as text (default) or JSON"),
        vocab::json(),
        crate::history::save_flag(),
        crate::history::history_flag(),
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// A KDiskMark profile with its preset of tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Default,
    Nvme,
    Peak,
    PeakNvme,
    RealWorld,
    Demo,
}

impl Preset {
    pub fn parse(s: &str) -> Option<Preset> {
        Some(match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "default" | "standard" => Preset::Default,
            "nvme" => Preset::Nvme,
            "peak" => Preset::Peak,
            "peak-nvme" => Preset::PeakNvme,
            "real-world" | "realworld" | "real" => Preset::RealWorld,
            "demo" => Preset::Demo,
            _ => return None,
        })
    }

    /// The name `--preset` takes.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::Nvme => "nvme",
            Preset::Peak => "peak",
            Preset::PeakNvme => "peak-nvme",
            Preset::RealWorld => "real-world",
            Preset::Demo => "demo",
        }
    }

    /// KDiskMark's name of the profile.
    pub fn profile(self) -> &'static str {
        match self {
            Preset::Default | Preset::Nvme => "Default",
            Preset::Peak | Preset::PeakNvme => "Peak Performance",
            Preset::RealWorld => "Real World Performance",
            Preset::Demo => "Demo",
        }
    }

    /// True when the best loop counts (Peak, Real World, Demo); false when loops are
    /// averaged (Default).
    pub fn keeps_best(self) -> bool {
        !matches!(self, Preset::Default | Preset::Nvme)
    }

    /// The tests, in KDiskMark's order.
    pub fn tests(self) -> Vec<Test> {
        let t = |seq, bs_kib, qd, threads| Test {
            seq,
            bs_kib,
            qd,
            threads,
        };
        match self {
            Preset::Default => vec![
                t(true, 1024, 8, 1),
                t(true, 1024, 1, 1),
                t(false, 4, 32, 1),
                t(false, 4, 1, 1),
            ],
            Preset::Nvme => vec![
                t(true, 1024, 8, 1),
                t(true, 128, 32, 1),
                t(false, 4, 32, 16),
                t(false, 4, 1, 1),
            ],
            Preset::Peak => vec![t(true, 1024, 8, 1), t(false, 4, 32, 1)],
            Preset::PeakNvme => vec![t(true, 1024, 8, 1), t(false, 4, 32, 16)],
            Preset::RealWorld => vec![t(true, 1024, 1, 1), t(false, 4, 1, 1)],
            Preset::Demo => vec![t(true, 1024, 8, 1)],
        }
    }
}

/// One test: pattern, block size, queue depth and threads (fio's numjobs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Test {
    pub seq: bool,
    pub bs_kib: u32,
    pub qd: u32,
    pub threads: u32,
}

impl Test {
    /// `SEQ1M Q8T1`, as KDiskMark's buttons name it.
    pub fn label(&self) -> String {
        let (n, unit) = size_unit(self.bs_kib);
        format!(
            "{}{}{} Q{}T{}",
            if self.seq { "SEQ" } else { "RND" },
            n,
            &unit[..1],
            self.qd,
            self.threads
        )
    }

    /// `Sequential   1 MiB (Q=  8, T= 1)`, as KDiskMark's text report names it.
    pub fn title(&self) -> String {
        let (n, unit) = size_unit(self.bs_kib);
        format!(
            "{} {:>3} {} (Q={:>3}, T={:>2})",
            if self.seq { "Sequential" } else { "Random" },
            n,
            unit,
            self.qd,
            self.threads
        )
    }

    /// fio's `rw` for a direction.
    pub fn rw(&self, dir: Dir) -> &'static str {
        match (self.seq, dir) {
            (true, Dir::Read) => "read",
            (true, Dir::Write) => "write",
            (true, Dir::Mix) => "rw",
            (false, Dir::Read) => "randread",
            (false, Dir::Write) => "randwrite",
            (false, Dir::Mix) => "randrw",
        }
    }
}

fn size_unit(kib: u32) -> (u32, &'static str) {
    if kib >= 1024 {
        (kib / 1024, "MiB")
    } else {
        (kib, "KiB")
    }
}

/// The direction of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    Mix,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Mix => "mix",
        }
    }
}

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct QuickOptions {
    pub target: String,
    pub preset: Preset,
    pub loops: u32,
    pub size: u64,
    pub duration_us: u64,
    pub interval_us: u64,
    pub read: bool,
    pub write: bool,
    /// `--mix`: the read percentage of the mixed tests.
    pub mix: Option<u32>,
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub drop_caches: bool,
    pub force: bool,
    pub dry_run: bool,
    pub format: Format,
    pub help: bool,
    /// `--save` and `--history`: the tests' runs go to the results history.
    pub save: bool,
    pub history: Option<String>,
}

impl Default for QuickOptions {
    fn default() -> Self {
        QuickOptions {
            target: ".".into(),
            preset: Preset::Default,
            loops: 3,
            size: 1 << 30,
            duration_us: 2_000_000,
            interval_us: 0,
            read: true,
            write: true,
            mix: None,
            zero_buffers: false,
            refill_buffers: false,
            drop_caches: true,
            force: false,
            dry_run: false,
            format: Format::Normal,
            help: false,
            save: false,
            history: None,
        }
    }
}

impl crate::history::Saves for QuickOptions {
    fn save(&mut self) {
        self.save = true;
    }
    fn history(&mut self, path: String) {
        self.history = Some(path);
    }
}

impl vocab::Formats for QuickOptions {
    const ACCEPTS: &'static [Format] = &[Format::Normal, Format::Json];
    const FORM: &'static str = "normal|json";
    fn format_mut(&mut self) -> &mut Format {
        &mut self.format
    }
}

fn bad(option: &str, value: &str, expected: &str) -> String {
    format!("quick: {}", flags::bad_value(option, value, expected))
}

/// Parses `iobench quick`'s arguments.
pub fn parse_args<S: AsRef<str>>(args: &[S]) -> Result<QuickOptions, String> {
    let mut o = QuickOptions::default();
    let m = SPEC.parse(args).map_err(|e| format!("quick: {e}"))?;
    o.help = m.help;
    let mut targets = m.positional.iter().chain(m.rest.iter().flatten()).cloned();
    if let Some(t) = targets.next() {
        o.target = t;
    }
    if let Some(more) = targets.next() {
        return Err(format!(
            "quick: more than one target given ('{more}'): expected one directory, file or device"
        ));
    }
    SPEC.apply(&m, &mut o)?;
    if o.history.is_some() && !o.save {
        return Err("quick: --history=PATH says where --save stores the runs: add --save".into());
    }
    Ok(o)
}

/// A size as KDiskMark passes it (`1024m`), or in bytes when not whole MiB.
fn size_arg(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{}m", bytes >> 20)
    } else {
        bytes.to_string()
    }
}

/// A time as fio's `runtime` takes it: whole seconds bare, as KDiskMark passes them.
fn time_arg(us: u64) -> String {
    if us % 1_000_000 == 0 {
        (us / 1_000_000).to_string()
    } else if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// KDiskMark's preparation job: lays the test file out and does no I/O.
pub fn prepare_args(o: &QuickOptions, file: &str) -> Vec<String> {
    vec![
        "--output-format=json".into(),
        "--create_only=1".into(),
        format!("--filename={}", crate::job::files::escape_name(file)),
        format!("--size={}", size_arg(o.size)),
        format!("--zero_buffers={}", o.zero_buffers as u8),
        "--name=prepare".into(),
    ]
}

/// KDiskMark's job for one test in one direction, option for option and in its order.
pub fn test_args(o: &QuickOptions, t: &Test, dir: Dir, file: &str, size: u64) -> Vec<String> {
    let rw = t.rw(dir);
    vec![
        "--output-format=json".into(),
        "--ioengine=libaio".into(),
        "--randrepeat=0".into(),
        format!("--refill_buffers={}", o.refill_buffers as u8),
        "--end_fsync=1".into(),
        "--direct=1".into(),
        format!("--rwmixread={}", o.mix.unwrap_or(70)),
        format!("--filename={}", crate::job::files::escape_name(file)),
        format!("--name={rw}"),
        format!("--size={}", size_arg(size)),
        format!("--zero_buffers={}", o.zero_buffers as u8),
        format!("--bs={}k", t.bs_kib),
        format!("--runtime={}", time_arg(o.duration_us)),
        format!("--rw={rw}"),
        format!("--iodepth={}", t.qd),
        format!("--numjobs={}", t.threads),
        "--group_reporting".into(),
    ]
}

/// The tests of a run in KDiskMark's order: every read, then every write, then the mixes.
pub fn plan(o: &QuickOptions) -> Vec<(Test, Dir)> {
    let tests = o.preset.tests();
    let mut v = Vec::new();
    for (on, dir) in [
        (o.read, Dir::Read),
        (o.write, Dir::Write),
        (o.mix.is_some(), Dir::Mix),
    ] {
        if on {
            v.extend(tests.iter().map(|t| (*t, dir)));
        }
    }
    v
}

/// A command line for a shell: each argument quoted when it needs to be.
pub fn shell_line(program: &str, args: &[String]) -> String {
    let mut s = String::from(program);
    for a in args {
        s.push(' ');
        let safe = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+%@".contains(c));
        if safe {
            s.push_str(a);
        } else {
            s.push('\'');
            s.push_str(&a.replace('\'', "'\\''"));
            s.push('\'');
        }
    }
    s
}

/// One measurement's numbers for one direction: MB/s (10^6 bytes), IOPS and the mean
/// completion latency in µs, as KDiskMark reads them from fio's JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Perf {
    pub mb_s: f64,
    pub iops: f64,
    pub lat_us: f64,
}

impl Perf {
    /// Reads a direction (`read`, `write`) of the first job of fio's JSON document.
    pub fn from_fio(doc: &FioValue, dir: &str) -> Option<Perf> {
        let job = match doc.get("jobs")? {
            FioValue::Arr(a) => a.first()?,
            _ => return None,
        };
        let d = job.get(dir)?;
        Some(Perf {
            mb_s: d.get("bw_bytes")?.as_f64()? / 1e6,
            iops: d.get("iops")?.as_f64()?,
            lat_us: d.get("clat_ns")?.get("mean")?.as_f64()? / 1000.0,
        })
    }

    fn json(&self) -> Value {
        json!({ "mb_s": self.mb_s, "iops": self.iops, "lat_us": self.lat_us })
    }
}

/// Combines the loops of a test: their mean (Default), or the best of each number
/// (highest MB/s and IOPS, lowest non-zero latency) as KDiskMark's Peak and Real World do.
pub fn aggregate(loops: &[Perf], best: bool) -> Perf {
    if loops.is_empty() {
        return Perf::default();
    }
    if best {
        let mut p = Perf::default();
        for l in loops {
            p.mb_s = p.mb_s.max(l.mb_s);
            p.iops = p.iops.max(l.iops);
            if p.lat_us == 0.0 || (l.lat_us > 0.0 && l.lat_us < p.lat_us) {
                p.lat_us = l.lat_us;
            }
        }
        p
    } else {
        let n = loops.len() as f64;
        Perf {
            mb_s: loops.iter().map(|l| l.mb_s).sum::<f64>() / n,
            iops: loops.iter().map(|l| l.iops).sum::<f64>() / n,
            lat_us: loops.iter().map(|l| l.lat_us).sum::<f64>() / n,
        }
    }
}

/// A mixed test's figure: reads and writes weighted by the read percentage, as KDiskMark
/// shows it.
pub fn mix_of(read: Perf, write: Perf, read_pct: u32) -> Perf {
    let p = read_pct as f64;
    let w = |r: f64, wr: f64| (r * p + wr * (100.0 - p)) / 100.0;
    Perf {
        mb_s: w(read.mb_s, write.mb_s),
        iops: w(read.iops, write.iops),
        lat_us: w(read.lat_us, write.lat_us),
    }
}

/// A result line as KDiskMark's text report prints it, right-aligned in 80 columns:
/// `Sequential   1 MiB (Q=  8, T= 1):   508.897 MB/s [    497.0 IOPS] < 13840.05 us>`.
pub fn result_line(t: &Test, p: &Perf) -> String {
    let line = format!(
        "{}: {:>9.3} MB/s [ {:>8.1} IOPS] < {:>8.2} us>",
        t.title(),
        p.mb_s,
        p.iops,
        p.lat_us
    );
    format!("{line:>80}")
}

/// Where the test's I/O goes, and whether quick made it (and so removes it).
#[derive(Debug)]
pub struct TestFile {
    pub path: PathBuf,
    pub created: bool,
    pub is_device: bool,
    /// The device's size, for a device target.
    pub device_size: Option<u64>,
    /// A block device target claimed (`O_EXCL`) for the run: nothing mounts it meanwhile.
    pub claim: Option<crate::run::claim::Claim>,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
        // The device is released once quick is done with it.
        drop(self.claim.take());
    }
}

/// A fresh name `iobench-quick-XXXXXX.tmp` in `dir`.
fn temp_name(dir: &Path) -> PathBuf {
    let mut buf = [0u8; 8];
    // SAFETY: buf is valid for its length; getrandom fills at most that many bytes.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    let mut x = u64::from_ne_bytes(buf);
    if n != buf.len() as isize {
        x = std::process::id() as u64 ^ crate::clock::mono_ns();
    }
    const CH: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let suffix: String = (0..6)
        .map(|i| CH[((x >> (i * 10)) % CH.len() as u64) as usize] as char)
        .collect();
    dir.join(format!("iobench-quick-{suffix}.tmp"))
}

/// Decides where the I/O goes, refusing what quick must not write to; with `create`, makes
/// the file (exclusively: an existing file is never taken over by accident).
pub fn resolve_target(o: &QuickOptions, create: bool) -> Result<TestFile, String> {
    let target = Path::new(&o.target);
    let md = std::fs::metadata(target);
    let new_file = |path: PathBuf| -> Result<TestFile, String> {
        if create {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| format!("quick: cannot create {}: {e}", path.display()))?;
        }
        Ok(TestFile {
            path,
            created: create,
            is_device: false,
            device_size: None,
            claim: None,
        })
    };
    match md {
        Ok(m) if m.is_dir() => {
            for _ in 0..16 {
                let p = temp_name(target);
                if !p.exists() {
                    match new_file(p) {
                        Err(e) if e.contains("exists") => continue,
                        r => return r,
                    }
                }
            }
            Err(format!(
                "quick: could not find a free test file name in {}",
                target.display()
            ))
        }
        Ok(m) if m.file_type().is_block_device() || m.file_type().is_char_device() => {
            if !o.force {
                return Err(format!(
                    "quick: {} is a device: the write tests would destroy its data; \
                     give --force to test it anyway, or a directory on it",
                    target.display()
                ));
            }
            // A block device is claimed before anything is written (a dry run writes
            // nothing and only looks): mounted, held or swap is refused even with --force.
            let claim = if create && m.file_type().is_block_device() {
                Some(crate::run::claim::claim_unused(&o.target, "quick")?)
            } else {
                None
            };
            let size = claim
                .as_ref()
                .map(|c| c.size)
                .or_else(|| device_size(target));
            Ok(TestFile {
                path: target.to_path_buf(),
                created: false,
                is_device: true,
                device_size: size,
                claim,
            })
        }
        Ok(m) if m.is_file() => {
            if m.len() > 0 && !o.force {
                return Err(format!(
                    "quick: {} is an existing file with data ({} bytes): the write tests \
                     would overwrite it; give --force to use it anyway, or a directory",
                    target.display(),
                    m.len()
                ));
            }
            Ok(TestFile {
                path: target.to_path_buf(),
                created: false,
                is_device: false,
                device_size: None,
                claim: None,
            })
        }
        Ok(_) => Err(format!(
            "quick: {} is neither a directory, a regular file nor a device",
            target.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = match target.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !parent.is_dir() {
                return Err(format!(
                    "quick: {} does not exist and neither does its directory",
                    target.display()
                ));
            }
            new_file(target.to_path_buf())
        }
        Err(e) => Err(format!("quick: {}: {e}", target.display())),
    }
}

/// A block device's size in bytes (BLKGETSIZE64).
fn device_size(path: &Path) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).ok()?;
    let mut size: u64 = 0;
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size) };
    (r == 0).then_some(size)
}

/// Drops the page cache as KDiskMark does before each loop (`1` into
/// /proc/sys/vm/drop_caches); fails without the right to.
fn drop_caches() -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/sys/vm/drop_caches")?
        .write_all(b"1")
}

/// One test's outcome.
#[derive(Debug, Clone)]
pub struct TestResult {
    pub test: Test,
    pub dir: Dir,
    pub args: Vec<String>,
    /// Per loop, the read and the write numbers.
    pub loops: Vec<(Perf, Perf)>,
    /// Per loop, the wall time of the run itself (from its jobs' start to their end), ms.
    pub run_ms: Vec<f64>,
    pub result: Perf,
    /// Why the numbers rest on less than the measure time: the test ended (its file read
    /// or written through) before [`SHORT_FRACTION`] of it.
    pub short: Option<String>,
}

/// The part of the measure time below which a test is said to have run far shorter than
/// asked (a quarter: a 2 s test that measured under 0.5 s).
pub const SHORT_FRACTION: f64 = 0.25;

/// What a run measured: the longest direction's runtime (ms) and the I/Os of both.
fn measured(doc: &FioValue) -> (f64, f64) {
    let Some(FioValue::Arr(jobs)) = doc.get("jobs") else {
        return (0.0, 0.0);
    };
    let mut runtime: f64 = 0.0;
    let mut ios = 0.0;
    for j in jobs {
        for d in ["read", "write"] {
            if let Some(v) = j.get(d) {
                runtime = runtime.max(v.get("runtime").and_then(FioValue::as_f64).unwrap_or(0.0));
                ios += v.get("total_ios").and_then(FioValue::as_f64).unwrap_or(0.0);
            }
        }
    }
    (runtime, ios)
}

/// The warning for a test whose loops measured less than [`SHORT_FRACTION`] of the
/// measure time `duration_us`: `loops` are (runtime ms, I/Os) per loop.
fn short_warning(label: &str, size: u64, duration_us: u64, loops: &[(f64, f64)]) -> Option<String> {
    if loops.is_empty() || duration_us == 0 {
        return None;
    }
    let n = loops.len() as f64;
    let ms = loops.iter().map(|l| l.0).sum::<f64>() / n;
    let ios = loops.iter().map(|l| l.1).sum::<f64>() / n;
    let want_ms = duration_us as f64 / 1e3;
    (ms < SHORT_FRACTION * want_ms).then(|| {
        format!(
            "{label} ran {ms:.0} ms of its {} measure time ({:.0}%, {ios:.0} I/O{} a loop): \
             the {} file was done before the time was up, so its numbers rest on few I/Os; \
             a larger --size lets the test run its measure time",
            human_time(duration_us),
            ms / want_ms * 100.0,
            if ios == 1.0 { "" } else { "s" },
            human_size(size)
        )
    })
}

/// The whole run's state for reporting.
struct Run {
    results: Vec<TestResult>,
    cache: &'static str,
    cache_error: Option<String>,
    size: u64,
    env: Value,
    interrupted: bool,
    /// Wall time of the file's layout, and of the whole command until the report, ms.
    layout_ms: f64,
    elapsed_ms: f64,
}

/// `iobench quick`: returns the exit status.
pub fn main(args: &[String]) -> u8 {
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("iobench: {e}");
            return 1;
        }
    };
    if o.help {
        print!("{}", SPEC.help());
        return 0;
    }
    let study = crate::history::Study::begin("quick");
    match run(&o) {
        Ok(code) => study.finish(code),
        Err(e) => {
            eprintln!("iobench: {e}");
            1
        }
    }
}

fn run(o: &QuickOptions) -> Result<u8, String> {
    let t0 = std::time::Instant::now();
    let file = resolve_target(o, !o.dry_run)?;
    let fname = file.path.to_string_lossy().into_owned();
    let size = match file.device_size {
        Some(d) => o.size.min(d),
        None => o.size,
    };
    if size < 1 << 20 {
        return Err(format!(
            "quick: the target holds only {size} bytes: at least 1 MiB is needed"
        ));
    }
    let plan = plan(o);
    if o.dry_run {
        print!("{}", dry_run_text(o, &file, size, &plan));
        return Ok(0);
    }
    // A signal from here on stops the run, and the test file is still removed.
    crate::run::signals::install_main();
    crate::run::signals::stop_on_hangup();
    let mut cache = if o.drop_caches { "dropped" } else { "off" };
    let mut cache_error = None;
    let mut layout_ms = 0.0;
    if !file.is_device {
        let f = crate::session::run_args(&prepare_args(o, &fname))?;
        layout_ms = f.wall.as_secs_f64() * 1e3;
        if f.code != 0 {
            return Err(format!(
                "quick: laying out {fname} failed (exit status {})",
                f.code
            ));
        }
    }
    let mut progress = Progress::new("quick", "run", plan.len() * o.loops as usize);
    let mut step = 0;
    let mut results = Vec::new();
    let mut all_jobs = Vec::new();
    let mut interrupted = false;
    'tests: for (k, (t, dir)) in plan.iter().enumerate() {
        if k > 0 && o.interval_us > 0 {
            sleep_unless_signalled(Duration::from_micros(o.interval_us));
        }
        let args = test_args(o, t, *dir, &fname, size);
        let mut loops = Vec::new();
        let mut run_ms = Vec::new();
        let mut measures = Vec::new();
        for l in 0..o.loops {
            if crate::run::signals::signalled().is_some() {
                interrupted = true;
                break 'tests;
            }
            step += 1;
            // The runs left are bound by the measure time at most: no estimate from it.
            progress.step(
                step,
                &format!("{} {} loop {}/{}", t.label(), dir.name(), l + 1, o.loops),
                None,
            );
            if cache == "dropped" {
                if let Err(e) = drop_caches() {
                    cache = "not permitted";
                    cache_error = Some(e.to_string());
                }
            }
            let mut p = crate::session::prepare_args(&args)?;
            p.config.save = o.save;
            p.config.history = o.history.clone();
            crate::history::Study::label_next(&format!("{} {} {}", t.label(), dir.name(), l + 1));
            if l == 0 {
                all_jobs.extend(p.jobs.iter().cloned());
            }
            let f = crate::session::run_quiet(&p);
            if f.interrupted() {
                interrupted = true;
                break 'tests;
            }
            let doc = f.document(false);
            let (Some(r), Some(w)) = (Perf::from_fio(&doc, "read"), Perf::from_fio(&doc, "write"))
            else {
                return Err(format!("quick: {} {}: no results", t.label(), dir.name()));
            };
            if f.code != 0 {
                return Err(format!(
                    "quick: {} {} failed (exit status {}); see the messages above",
                    t.label(),
                    dir.name(),
                    f.code
                ));
            }
            loops.push((r, w));
            run_ms.push(f.wall.as_secs_f64() * 1e3);
            measures.push(measured(&doc));
            progress.done();
        }
        let best = o.preset.keeps_best();
        let rs: Vec<Perf> = loops.iter().map(|l| l.0).collect();
        let ws: Vec<Perf> = loops.iter().map(|l| l.1).collect();
        let result = match dir {
            Dir::Read => aggregate(&rs, best),
            Dir::Write => aggregate(&ws, best),
            Dir::Mix => mix_of(
                aggregate(&rs, best),
                aggregate(&ws, best),
                o.mix.unwrap_or(70),
            ),
        };
        let label = format!("{} {}", t.label(), dir.name());
        let short = short_warning(&label, size, o.duration_us, &measures);
        if let Some(w) = &short {
            progress.note(&format!("quick: warning: {w}"));
        }
        results.push(TestResult {
            test: *t,
            dir: *dir,
            args,
            loops,
            run_ms,
            result,
            short,
        });
    }
    progress.finish();
    let mut argv: Vec<String> = std::env::args().collect();
    if argv.is_empty() {
        argv.push("iobench".into());
    }
    // Collected while the test file still exists, so the target is described as it was.
    let env = crate::context::env::collect(&argv, &all_jobs);
    let r = Run {
        results,
        cache,
        cache_error,
        size,
        env,
        interrupted,
        layout_ms,
        elapsed_ms: 0.0,
    };
    let mut r = r;
    r.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    let text = if o.format == Format::Json {
        let mut s = serde_json::to_string_pretty(&json_report(o, &file, &r)).unwrap_or_default();
        s.push('\n');
        s
    } else {
        text_report(o, &file, &r)
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    drop(file);
    Ok(if interrupted {
        crate::run::signals::SIGNAL_EXIT
    } else {
        0
    })
}

fn sleep_unless_signalled(d: Duration) {
    let end = std::time::Instant::now() + d;
    while crate::run::signals::signalled().is_none() {
        let now = std::time::Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

fn human_size(bytes: u64) -> String {
    if bytes % (1 << 30) == 0 {
        format!("{} GiB", bytes >> 30)
    } else if bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn human_time(us: u64) -> String {
    if us % 1_000_000 == 0 {
        format!("{} sec", us / 1_000_000)
    } else {
        format!("{} ms", us / 1000)
    }
}

/// `--dry-run`: the fio command lines, as a shell script would run them, and the time.
fn dry_run_text(o: &QuickOptions, file: &TestFile, size: u64, plan: &[(Test, Dir)]) -> String {
    let fname = file.path.to_string_lossy();
    let mut s = format!(
        "# iobench quick --preset {}: {} tests x {} loops, {} file {}\n",
        o.preset.name(),
        plan.len(),
        o.loops,
        human_size(size),
        fname
    );
    if !file.is_device {
        s.push_str("# lay out the test file\n");
        s.push_str(&shell_line("fio", &prepare_args(o, &fname)));
        s.push('\n');
    }
    for (t, dir) in plan {
        s.push_str(&format!(
            "# {} {}, {} loop{}{}\n",
            t.label(),
            dir.name(),
            o.loops,
            if o.loops == 1 { "" } else { "s" },
            if o.drop_caches {
                ", each after `echo 1 > /proc/sys/vm/drop_caches`"
            } else {
                ""
            }
        ));
        s.push_str(&shell_line("fio", &test_args(o, t, *dir, &fname, size)));
        s.push('\n');
    }
    if file.created || !file.path.exists() && !file.is_device {
        s.push_str(&format!(
            "rm -f {}\n",
            shell_line("", &[fname.to_string()]).trim()
        ));
    }
    let most = plan.len() as u64 * o.loops as u64 * o.duration_us
        + plan.len().saturating_sub(1) as u64 * o.interval_us;
    s.push_str(&format!(
        "# at most {:.0} s of measurement, plus laying out the file\n",
        most as f64 / 1e6
    ));
    s
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    cur.as_str()
}

fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    cur.as_u64()
}

/// The text report: KDiskMark's layout (results by direction, then the settings, the
/// machine and the target).
fn text_report(o: &QuickOptions, file: &TestFile, r: &Run) -> String {
    let mut out = String::new();
    let head = format!(
        "iobench quick ({}): KDiskMark's tests, fio's jobs",
        crate::report::VERSION
    );
    out.push_str(&format!("{head:>80}\n"));
    out.push_str(&"-".repeat(80));
    out.push('\n');
    out.push_str("* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]\n");
    out.push_str("* KB = 1000 bytes, KiB = 1024 bytes\n");
    for dir in [Dir::Read, Dir::Write, Dir::Mix] {
        let rows: Vec<&TestResult> = r.results.iter().filter(|t| t.dir == dir).collect();
        if rows.is_empty() {
            continue;
        }
        out.push('\n');
        match dir {
            Dir::Read => out.push_str("[Read]\n"),
            Dir::Write => out.push_str("[Write]\n"),
            Dir::Mix => {
                let p = o.mix.unwrap_or(70);
                out.push_str(&format!("[Mix] Read {p}%/Write {}%\n", 100 - p))
            }
        }
        for t in rows {
            out.push_str(&result_line(&t.test, &t.result));
            out.push('\n');
        }
    }
    if r.interrupted {
        out.push_str("\n(interrupted: the tests after the last line did not run)\n");
    }
    let shorts: Vec<&String> = r.results.iter().filter_map(|t| t.short.as_ref()).collect();
    if !shorts.is_empty() {
        out.push('\n');
        for w in shorts {
            out.push_str(&format!("Note: {w}\n"));
        }
    }
    out.push('\n');
    out.push_str(&format!(
        "Profile: {} ({}, {} of the loops)\n",
        o.preset.profile(),
        o.preset.name(),
        if o.preset.keeps_best() {
            "best"
        } else {
            "average"
        }
    ));
    out.push_str(&format!(
        "   Test: {} (x{}) [Measure: {} / Interval: {}]{}\n",
        human_size(r.size),
        o.loops,
        human_time(o.duration_us),
        human_time(o.interval_us),
        match (r.cache, &r.cache_error) {
            ("off", _) => " page cache kept".to_string(),
            ("dropped", _) => String::new(),
            (_, Some(e)) => format!(" page cache not dropped: {e}"),
            _ => String::new(),
        }
    ));
    out.push_str(&format!("   Date: {}\n", local_time()));
    let env = &r.env;
    out.push_str(&format!(
        "     OS: {} [{} {}]\n",
        str_at(env, &["os"]).unwrap_or("?"),
        str_at(env, &["kernel", "sysname"]).unwrap_or("?"),
        str_at(env, &["kernel", "release"]).unwrap_or("?"),
    ));
    out.push_str(&format!(
        "    CPU: {} x {}, {:.1} GiB memory, clock {} ({})\n",
        u64_at(env, &["cpu", "count"]).unwrap_or(0),
        str_at(env, &["cpu", "model"]).unwrap_or("?"),
        u64_at(env, &["memory", "total_bytes"]).unwrap_or(0) as f64 / (1u64 << 30) as f64,
        str_at(env, &["clocksource", "iobench"]).unwrap_or("?"),
        str_at(env, &["clocksource", "kernel"]).unwrap_or("?"),
    ));
    out.push_str(&format!(
        " Target: {}{}\n",
        o.target,
        if file.created {
            format!(" ({}, removed)", file.path.display())
        } else {
            String::new()
        }
    ));
    let t = env.get("targets").and_then(|t| t.get(0));
    if let Some(t) = t {
        if let Some(d) = t.get("device").filter(|d| !d.is_null()) {
            let mut parts = vec![str_at(d, &["path"]).unwrap_or("?").to_string()];
            if let Some(m) = str_at(d, &["model"]) {
                parts.push(m.to_string());
            }
            if let Some(s) = u64_at(d, &["size_bytes"]) {
                parts.push(format!("{:.1} GiB", s as f64 / (1u64 << 30) as f64));
            }
            match u64_at(d, &["rotational"]) {
                Some(1) => parts.push("rotational".into()),
                Some(0) => parts.push("non-rotational".into()),
                _ => {}
            }
            if let Some(s) = str_at(d, &["scheduler"]) {
                parts.push(format!("scheduler {s}"));
            }
            if let Some(s) = str_at(d, &["write_cache"]) {
                parts.push(format!("cache {s}"));
            }
            out.push_str(&format!(" Device: {}\n", parts.join(", ")));
        }
        if let Some(fs) = t.get("filesystem").filter(|d| !d.is_null()) {
            out.push_str(&format!(
                "     FS: {} on {} ({})\n",
                str_at(fs, &["type"]).unwrap_or("?"),
                str_at(fs, &["mount_point"]).unwrap_or("?"),
                str_at(fs, &["options"]).unwrap_or("?"),
            ));
        }
    }
    out
}

/// `YYYY-MM-DD hh:mm:ss` in local time.
fn local_time() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or(0);
    // SAFETY: tm is plain old data, filled by localtime_r before it is read.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is thread safe.
    if unsafe { libc::localtime_r(&secs, &mut tm).is_null() } {
        return "?".into();
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// `--output-format=json`: the settings, every test with its loops and its fio command,
/// and the run's context (`iobench_env`).
fn json_report(o: &QuickOptions, file: &TestFile, r: &Run) -> Value {
    let results: Vec<Value> = r
        .results
        .iter()
        .map(|t| {
            let loops: Vec<Value> = t
                .loops
                .iter()
                .zip(&t.run_ms)
                .map(|((rd, wr), ms)| {
                    let mut v = match t.dir {
                        Dir::Read => rd.json(),
                        Dir::Write => wr.json(),
                        Dir::Mix => json!({ "read": rd.json(), "write": wr.json() }),
                    };
                    v["run_ms"] = json!(ms);
                    v
                })
                .collect();
            json!({
                "test": t.test.label(),
                "title": t.test.title(),
                "direction": t.dir.name(),
                "rw": t.test.rw(t.dir),
                "bs": t.test.bs_kib as u64 * 1024,
                "iodepth": t.test.qd,
                "numjobs": t.test.threads,
                "mb_s": t.result.mb_s,
                "iops": t.result.iops,
                "lat_us": t.result.lat_us,
                "short": t.short,
                "loops": loops,
                "fio_command": shell_line("fio", &t.args),
            })
        })
        .collect();
    json!({
        "iobench_quick": {
            "version": crate::report::VERSION,
            "preset": o.preset.name(),
            "profile": o.preset.profile(),
            "aggregate": if o.preset.keeps_best() { "best" } else { "average" },
            "target": o.target,
            "file": file.path.to_string_lossy(),
            "file_created": file.created,
            "size_bytes": r.size,
            "loops": o.loops,
            "duration_us": o.duration_us,
            "interval_us": o.interval_us,
            "mix_read_percent": o.mix,
            "page_cache": r.cache,
            "page_cache_error": r.cache_error,
            "interrupted": r.interrupted,
            "layout_ms": r.layout_ms,
            "elapsed_ms": r.elapsed_ms,
            "units": "mb_s: 10^6 bytes/s; lat_us: mean completion latency (fio's clat) in us",
        },
        "results": results,
        "iobench_env": r.env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_titles_are_kdiskmarks() {
        let t = Preset::Default.tests();
        assert_eq!(t[0].label(), "SEQ1M Q8T1");
        assert_eq!(t[2].label(), "RND4K Q32T1");
        assert_eq!(t[0].title(), "Sequential   1 MiB (Q=  8, T= 1)");
        assert_eq!(Preset::Nvme.tests()[1].label(), "SEQ128K Q32T1");
        let line = result_line(
            &t[0],
            &Perf {
                mb_s: 508.897,
                iops: 497.0,
                lat_us: 13840.05,
            },
        );
        assert_eq!(line.len(), 80);
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>().join(" "),
            "Sequential 1 MiB (Q= 8, T= 1): 508.897 MB/s [ 497.0 IOPS] < 13840.05 us>"
        );
    }

    #[test]
    fn short_tests_are_told_by_a_quarter_of_the_measure_time() {
        let w = short_warning(
            "SEQ1M Q8T1 read",
            1 << 20,
            2_000_000,
            &[(25.0, 1.0), (35.0, 1.0)],
        )
        .expect("30 ms of 2 s");
        assert!(
            w.starts_with("SEQ1M Q8T1 read ran 30 ms of its 2 sec measure time (2%, 1 I/O a loop)"),
            "{w}"
        );
        assert!(short_warning("x", 1 << 20, 2_000_000, &[(500.0, 64.0)]).is_none());
        assert!(short_warning("x", 1 << 20, 2_000_000, &[(499.0, 64.0)]).is_some());
        assert!(short_warning("x", 1 << 20, 2_000_000, &[]).is_none());
    }

    #[test]
    fn loops_average_or_keep_the_best() {
        let a = Perf {
            mb_s: 100.0,
            iops: 10.0,
            lat_us: 5.0,
        };
        let b = Perf {
            mb_s: 200.0,
            iops: 30.0,
            lat_us: 3.0,
        };
        assert_eq!(
            aggregate(&[a, b], false),
            Perf {
                mb_s: 150.0,
                iops: 20.0,
                lat_us: 4.0
            }
        );
        assert_eq!(
            aggregate(&[a, b], true),
            Perf {
                mb_s: 200.0,
                iops: 30.0,
                lat_us: 3.0
            }
        );
        assert_eq!(mix_of(a, b, 70).mb_s, 130.0);
    }

    #[test]
    fn bad_values_name_the_option_and_the_form() {
        let e = parse_args(&["--loops", "0"]).unwrap_err();
        assert!(e.contains("--loops") && e.contains("whole number"), "{e}");
        let e = parse_args(&["--preset=fast"]).unwrap_err();
        assert!(e.contains("--preset") && e.contains("peak-nvme"), "{e}");
        let e = parse_args(&["--size=1k"]).unwrap_err();
        assert!(e.contains("--size"), "{e}");
        assert!(parse_args(&["a", "b"]).is_err());
        let o = parse_args(&["--mix=60", "--duration", "500ms", "/tmp"]).unwrap();
        assert_eq!(
            (o.mix, o.duration_us, o.target.as_str()),
            (Some(60), 500_000, "/tmp")
        );
    }
}
