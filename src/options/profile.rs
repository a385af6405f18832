//! fio's built-in profiles (`--profile=tiobench`, `--profile=act`): a profile reads its own
//! command-line options and adds a fixed set of jobs, written as fio's `name=value`
//! strings, after the jobs of the command line. The options before the first `--name`
//! are the profile jobs' defaults; the profile's own global options override them.
//!
//! Two of fio 3.33's quirks are kept so that the same command line runs the same jobs:
//! tiobench's options (size, block, numruns, dir, threads) are accepted but never reach
//! its jobs (fio stores them where its job builder does not look), and act's
//! `large-block-op-kbytes` is used as bytes, and a `test-duration` with a unit is read in
//! microseconds (a bare number is seconds), as fio reads them.

use super::keywords::{replace_keywords, Machine};

/// A built-in profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Tiobench,
    Act,
}

/// Each profile's own options, as `fio --profile=NAME --cmdhelp` lists them.
const TIOBENCH_OPTIONS: [&str; 5] = ["size", "block", "numruns", "dir", "threads"];
const ACT_OPTIONS: [&str; 7] = [
    "device-names",
    "load",
    "test-duration",
    "threads-per-queue",
    "read-req-num-512-blocks",
    "large-block-op-kbytes",
    "prep",
];

/// ACT's read and write load at 1x (I/Os per second per device).
const ACT_READ_LOAD: u64 = 2000;
const ACT_WRITE_LOAD: u64 = 1000;
/// ACT checks its latency criteria once an hour: one slice of its table per hour.
pub const ACT_SLICE_SECS: u64 = 3600;

impl Profile {
    /// Reads a `--profile` value.
    pub fn parse(name: &str) -> Result<Profile, String> {
        match name {
            "tiobench" => Ok(Profile::Tiobench),
            "act" => Ok(Profile::Act),
            other => Err(format!(
                "profile '{other}' not found (the profiles are tiobench, act)"
            )),
        }
    }

    /// The profile's own option names.
    pub fn options(self) -> &'static [&'static str] {
        match self {
            Profile::Tiobench => &TIOBENCH_OPTIONS,
            Profile::Act => &ACT_OPTIONS,
        }
    }

    /// The `--cmdhelp` lines fio prints for the profile's options.
    pub fn cmdhelp(self) -> &'static str {
        match self {
            Profile::Tiobench => {
                "size                    : Size in MiB\n\
                 block                   : Block size in bytes\n\
                 numruns                 : Number of runs\n\
                 dir                     : Test directory\n\
                 threads                 : Number of Threads\n"
            }
            Profile::Act => {
                "device-names            : Devices to use\n\
                 load                    : ACT load multipler (default 1x)\n\
                 test-duration           : How long the entire test takes to run\n\
                 threads-per-queue       : Number of read IO threads per device\n\
                 read-req-num-512-blocks : Number of 512B blocks to read at the time\n\
                 large-block-op-kbytes   : Size of large block ops in KiB (writes)\n\
                 prep                    : Set to run ACT prep phase\n"
            }
        }
    }
}

/// Options as fio's profiles write them: name and value (none for a bare flag).
pub type Opts = Vec<(String, Option<String>)>;

/// The jobs a profile adds: its global options, then each job's name and options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    pub globals: Opts,
    pub jobs: Vec<(String, Opts)>,
    /// For act: how many hourly slices its latency table has.
    pub act_slices: Option<u64>,
}

fn kv(k: &str, v: impl ToString) -> (String, Option<String>) {
    (k.to_string(), Some(v.to_string()))
}

fn flag(k: &str) -> (String, Option<String>) {
    (k.to_string(), None)
}

/// The value of profile option `name` among `given` (the last one wins), or `default`.
fn given<'a>(given: &'a [(String, Option<String>)], name: &str) -> Option<&'a str> {
    given
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_deref().unwrap_or("1"))
}

fn whole(name: &str, v: &str) -> Result<u64, String> {
    crate::defs::value::parse_int(v)
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| format!("{name}: '{v}' is not a whole number"))
}

/// Expands `profile` with its options `opts` (name, value) as fio 3.33 does.
pub fn expand(profile: Profile, opts: &[(String, Option<String>)]) -> Result<Expansion, String> {
    match profile {
        Profile::Tiobench => Ok(tiobench()),
        Profile::Act => act(opts),
    }
}

fn tiobench() -> Expansion {
    // fio 3.33 builds these from its defaults whatever the profile's options say.
    let size =
        replace_keywords("4*1024*$mb_memory", &Machine::current()).unwrap_or_else(|_| "4g".into());
    let globals = vec![
        kv("buffered", 0),
        kv("size", size),
        kv("bs", 4096),
        kv("loops", 1),
        kv("directory", "./"),
        kv("numjobs", 1),
        kv("timeout", 600),
        flag("group_reporting"),
        flag("thread"),
        kv("overwrite", 1),
        kv("filename", ".fio.tio.1:.fio.tio.2:.fio.tio.3:.fio.tio.4"),
        kv("ioengine", "sync"),
    ];
    let jobs = vec![
        (
            "seqwrite".into(),
            vec![kv("rw", "write"), kv("end_fsync", 1)],
        ),
        (
            "randwrite".into(),
            vec![flag("stonewall"), kv("rw", "randwrite"), kv("end_fsync", 1)],
        ),
        ("seqread".into(), vec![flag("stonewall"), kv("rw", "read")]),
        (
            "randread".into(),
            vec![flag("stonewall"), kv("rw", "randread")],
        ),
    ];
    Expansion {
        globals,
        jobs,
        act_slices: None,
    }
}

fn act(opts: &[(String, Option<String>)]) -> Result<Expansion, String> {
    let Some(devices) = given(opts, "device-names") else {
        return Err("act: you need to set IO target(s) with the device-names option".into());
    };
    let num = |name: &str, default: &str| whole(name, given(opts, name).unwrap_or(default));
    let load = num("load", "1")?;
    let per_queue = num("threads-per-queue", "8")?;
    let read_blocks = num("read-req-num-512-blocks", "3")?;
    let write_size = num("large-block-op-kbytes", "131072")?;
    let prep = given(opts, "prep").is_some_and(|v| v != "0");
    let duration_text = given(opts, "test-duration").unwrap_or("24h");
    let duration = crate::defs::value::parse_time_us(duration_text, crate::defs::TimeUnit::Usec)
        .map_err(|e| format!("test-duration: {e}"))?;
    if per_queue == 0 {
        return Err("act: threads-per-queue must be at least 1".into());
    }
    let read_size = read_blocks * 512;
    let per_write = write_size.checked_div(read_size).unwrap_or(0);
    if per_write == 0 {
        return Err(format!(
            "act: large-block-op-kbytes ({write_size}) must be at least \
             read-req-num-512-blocks * 512 ({read_size})"
        ));
    }
    let mut globals = vec![
        kv("direct", 1),
        kv("ioengine", "sync"),
        kv("random_generator", "lfsr"),
        kv("group_reporting", 1),
        flag("thread"),
    ];
    let mut jobs = Vec::new();
    for dev in devices.split(',').filter(|d| !d.is_empty()) {
        if prep {
            jobs.push((
                format!("act-prep-zeroes-{dev}"),
                vec![
                    kv("filename", dev),
                    kv("bs", 1_048_576),
                    flag("zero_buffers"),
                    kv("rw", "write"),
                ],
            ));
            jobs.push((
                format!("act-prep-salt-{dev}"),
                vec![
                    flag("stonewall"),
                    kv("filename", dev),
                    kv("bs", 4096),
                    kv("ioengine", "libaio"),
                    kv("iodepth", 64),
                    kv("rw", "randwrite"),
                ],
            ));
            continue;
        }
        // fio writes these before each device's first job: the first device's land in
        // the global options, later ones repeat them on the job before.
        let timing = [kv("runtime", format!("{duration}s")), kv("time_based", 1)];
        match jobs.last_mut() {
            None => globals.extend(timing),
            Some((_, o)) => o.extend(timing),
        }
        jobs.push((
            format!("act-read-{dev}"),
            vec![
                kv("filename", dev),
                kv("rw", "randread"),
                kv("numjobs", per_queue),
                kv("rate_iops", load * ACT_READ_LOAD / per_queue),
                kv("bs", read_size),
            ],
        ));
        jobs.push((
            format!("act-write-{dev}"),
            vec![
                kv("filename", dev),
                kv("rw", "randwrite"),
                kv("rate_iops", (load * ACT_WRITE_LOAD).div_ceil(per_write)),
                kv("bs", write_size),
            ],
        ));
    }
    Ok(Expansion {
        globals,
        jobs,
        act_slices: Some(duration.div_ceil(ACT_SLICE_SECS).max(1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(pairs: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect()
    }

    #[test]
    fn act_expands_to_fios_jobs() {
        let e = expand(
            Profile::Act,
            &o(&[("device-names", "/dev/a,/dev/b"), ("test-duration", "2")]),
        )
        .unwrap();
        assert_eq!(e.jobs.len(), 4);
        assert_eq!(e.jobs[0].0, "act-read-/dev/a");
        assert!(e.globals.contains(&kv("runtime", "2s")));
        assert!(e.jobs[0].1.contains(&kv("rate_iops", 250)));
        assert!(e.jobs[1].1.contains(&kv("rate_iops", 12)));
        assert!(e.jobs[1].1.contains(&kv("runtime", "2s")));
        assert_eq!(e.act_slices, Some(1));
        assert!(expand(Profile::Act, &[]).is_err());
    }

    #[test]
    fn a_duration_with_a_unit_is_microseconds_as_in_fio() {
        let e = expand(
            Profile::Act,
            &o(&[("device-names", "d"), ("test-duration", "1m")]),
        )
        .unwrap();
        assert!(e.globals.contains(&kv("runtime", "60000000s")));
    }
}
