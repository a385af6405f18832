//! The command line of `iobench peak`, read the way fio's t/io_uring reads its own: single
//! letter options with the value attached (`-d32`) or in the next argument (`-d 32`), then
//! the files or devices.

use crate::flags::{Flag, Spec, Takes, Value};
use std::fmt;

/// Settings of one peak run, with t/io_uring's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakArgs {
    /// -d: requests kept in flight per thread.
    pub depth: u32,
    /// -s: requests prepared per submit call.
    pub batch_submit: u32,
    /// -c: completions reaped per call at the least.
    pub batch_complete: u32,
    /// -b: block size in bytes.
    pub bs: u32,
    /// -p: polled completions (IORING_SETUP_IOPOLL).
    pub polled: bool,
    /// -B: buffers registered with the ring.
    pub fixedbufs: bool,
    /// -D: DMA-mapped buffers (NVMe passthrough only; refused when set).
    pub dma_map: bool,
    /// -F: files registered with the ring.
    pub register_files: bool,
    /// -n: submitting threads.
    pub threads: u32,
    /// -O: O_DIRECT (on by default).
    pub direct: bool,
    /// -N: no-op requests, no file needed.
    pub nop: bool,
    /// -t: latency tracking, printed as percentiles at the end.
    pub track_latency: bool,
    /// -T: the TSC rate in Hz, instead of calibrating it.
    pub tsc_rate: Option<u64>,
    /// -r: seconds to run; 0 runs until interrupted.
    pub runtime: u32,
    /// -R: random offsets (sequential otherwise).
    pub random: bool,
    /// -a: the kernel's legacy AIO instead of io_uring.
    pub aio: bool,
    /// -S: synchronous preadv2 instead of io_uring.
    pub sync: bool,
    /// -X: the ring's own descriptor registered (IORING_REGISTER_RING_FDS).
    pub register_ring: bool,
    /// -P: placement on the device's NUMA node (refused when set).
    pub numa_placement: bool,
    /// -u: NVMe passthrough (refused when set).
    pub passthrough: bool,
    /// -V: vectored reads (IORING_OP_READV) where fixed buffers are not used (fio 3.42).
    pub vectored: bool,
    /// -e: the ring starts disabled, limited to the opcodes and registrations the run uses
    /// (IORING_REGISTER_RESTRICTIONS), then enabled (fio 3.42).
    pub restriction: bool,
    /// The t/io_uring release followed (`--fio-compat`): `-D` exists before 3.37 only.
    pub release: crate::defs::release::FioRelease,
    pub files: Vec<String>,
}

impl PeakArgs {
    /// t/io_uring's first set-up line: the options that shape the run.
    pub fn print_options_line(&self) {
        say!(
            "polled={}, fixedbufs={}{}, register_files={}, buffered={}, QD={}",
            self.polled as u8,
            self.fixedbufs as u8,
            self.dma_suffix(),
            self.register_files as u8,
            (!self.direct) as u8,
            self.depth
        );
    }

    /// `/D` after `fixedbufs=`: t/io_uring printed its `-D` setting there until 3.37.
    pub fn dma_suffix(&self) -> String {
        if self.has_dma_flag() {
            format!("/{}", self.dma_map as u8)
        } else {
            String::new()
        }
    }

    /// Whether the dialect's t/io_uring has `-D` (removed in fio 3.37).
    pub fn has_dma_flag(&self) -> bool {
        self.release < crate::defs::release::FioRelease::V3_37
    }
}

impl Default for PeakArgs {
    fn default() -> Self {
        PeakArgs {
            depth: 128,
            batch_submit: 32,
            batch_complete: 32,
            bs: 4096,
            polled: true,
            fixedbufs: true,
            dma_map: false,
            register_files: true,
            threads: 1,
            direct: true,
            nop: false,
            track_latency: false,
            tsc_rate: None,
            runtime: 0,
            random: true,
            aio: false,
            sync: false,
            register_ring: true,
            numa_placement: false,
            passthrough: false,
            vectored: false,
            restriction: false,
            release: crate::defs::release::FioRelease::DEFAULT,
            files: Vec::new(),
        }
    }
}

/// A command line `peak` cannot run, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `iobench peak`'s flags: t/io_uring's letters, each with a value (`-d32` or `-d 32`).
pub const SPEC: Spec<PeakArgs> = Spec {
    command: "peak",
    usage: "\
usage: iobench peak [options] [--] [files or devices]

The most IOPS (or bandwidth) the files or devices give, driven the way fio's t/io_uring
drives them. A <bool> is 0 or 1.",
    flags: &[
        Flag {
            names: &["-d"],
            takes: Takes::Value,
            form: "<int>",
            help: "requests in flight per thread",
            apply: |a, v| {
                a.depth = small(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-s"],
            takes: Takes::Value,
            form: "<int>",
            help: "requests per submit call",
            apply: |a, v| {
                a.batch_submit = small(v)?.max(1);
                Ok(())
            },
        },
        Flag {
            names: &["-c"],
            takes: Takes::Value,
            form: "<int>",
            help: "completions reaped per call",
            apply: |a, v| {
                a.batch_complete = small(v)?.max(1);
                Ok(())
            },
        },
        Flag {
            names: &["-b"],
            takes: Takes::Value,
            form: "<int>",
            help: "block size in bytes",
            apply: |a, v| {
                a.bs = small(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-p"],
            takes: Takes::Value,
            form: "<bool>",
            help: "polled completions",
            apply: |a, v| {
                a.polled = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-B"],
            takes: Takes::Value,
            form: "<bool>",
            help: "registered buffers",
            apply: |a, v| {
                a.fixedbufs = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-D"],
            takes: Takes::Value,
            form: "<bool>",
            help: "DMA-mapped buffers (NVMe passthrough)",
            apply: dma_map,
        },
        Flag {
            names: &["-F"],
            takes: Takes::Value,
            form: "<bool>",
            help: "registered files",
            apply: |a, v| {
                a.register_files = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-n"],
            takes: Takes::Value,
            form: "<int>",
            help: "submitting threads",
            apply: |a, v| {
                a.threads = small(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-O"],
            takes: Takes::Value,
            form: "<bool>",
            help: "O_DIRECT",
            apply: |a, v| {
                a.direct = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-N"],
            takes: Takes::Value,
            form: "<bool>",
            help: "no-op requests only",
            apply: |a, v| {
                a.nop = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-t"],
            takes: Takes::Value,
            form: "<bool>",
            help: "track latencies",
            apply: |a, v| {
                a.track_latency = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-T"],
            takes: Takes::Value,
            form: "<int>",
            help: "TSC rate in Hz",
            apply: |a, v| {
                a.tsc_rate = Some(number(v)?);
                Ok(())
            },
        },
        Flag {
            names: &["-r"],
            takes: Takes::Value,
            form: "<int>",
            help: "seconds to run, default unlimited",
            apply: |a, v| {
                a.runtime = small(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-R"],
            takes: Takes::Value,
            form: "<bool>",
            help: "random offsets",
            apply: |a, v| {
                a.random = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-a"],
            takes: Takes::Value,
            form: "<bool>",
            help: "legacy kernel AIO",
            apply: |a, v| {
                a.aio = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-S"],
            takes: Takes::Value,
            form: "<bool>",
            help: "synchronous preadv2",
            apply: |a, v| {
                a.sync = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-X"],
            takes: Takes::Value,
            form: "<bool>",
            help: "registered ring descriptor",
            apply: |a, v| {
                a.register_ring = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-P"],
            takes: Takes::Value,
            form: "<bool>",
            help: "place on the device's NUMA node",
            apply: |a, v| {
                a.numa_placement = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-V"],
            takes: Takes::Value,
            form: "<bool>",
            help: "vectored reads (READV) without fixed buffers",
            apply: |a, v| {
                a.vectored = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-e"],
            takes: Takes::Value,
            form: "<bool>",
            help: "restrict the ring to the run's opcodes",
            apply: |a, v| {
                a.restriction = switch(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["-u"],
            takes: Takes::Value,
            form: "<bool>",
            help: "NVMe passthrough",
            apply: |a, v| {
                a.passthrough = switch(v)?;
                Ok(())
            },
        },
    ],
    pass_unknown: false,
    attached: true,
    single_dash: false,
};

/// The usage text, with each option's default.
pub fn usage() -> String {
    let d = PeakArgs::default();
    SPEC.help_with(|f| {
        let default = match f.names[0] {
            "-d" => d.depth.to_string(),
            "-s" => d.batch_submit.to_string(),
            "-c" => d.batch_complete.to_string(),
            "-b" => d.bs.to_string(),
            "-p" => u8::from(d.polled).to_string(),
            "-B" => u8::from(d.fixedbufs).to_string(),
            "-D" => u8::from(d.dma_map).to_string(),
            "-F" => u8::from(d.register_files).to_string(),
            "-n" => d.threads.to_string(),
            "-O" => u8::from(d.direct).to_string(),
            "-N" => u8::from(d.nop).to_string(),
            "-t" => u8::from(d.track_latency).to_string(),
            "-R" => u8::from(d.random).to_string(),
            "-a" => u8::from(d.aio).to_string(),
            "-S" => u8::from(d.sync).to_string(),
            "-X" => u8::from(d.register_ring).to_string(),
            "-P" => u8::from(d.numa_placement).to_string(),
            "-u" => u8::from(d.passthrough).to_string(),
            "-V" => u8::from(d.vectored).to_string(),
            "-e" => u8::from(d.restriction).to_string(),
            _ => return None,
        };
        Some(format!(", default {default}"))
    })
}

/// What the command line asked for: a run, or the usage text.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Run(PeakArgs),
    Help,
}

fn number(v: Value<'_>) -> Result<u64, String> {
    v.number("a whole number")
}

/// A count that fits t/io_uring's `int`-sized fields.
fn small(v: Value<'_>) -> Result<u32, String> {
    let n = number(v)?;
    u32::try_from(n).map_err(|_| format!("option {}: {n} is too large", v.flag))
}

/// A `<bool>`: any number, non-zero for on.
fn switch(v: Value<'_>) -> Result<bool, String> {
    number(v).map(|n| n != 0)
}

/// `-D`: DMA-mapped buffers, in the releases that have them. 3.37's t/io_uring dropped
/// -D. `-D0` asks for what every later release does anyway (no DMA-mapped buffers), so
/// scripts written for older releases (seed 002's) still run, with a note; `-D1` asks for
/// what no later release has.
fn dma_map(a: &mut PeakArgs, v: Value<'_>) -> Result<(), String> {
    if a.has_dma_flag() {
        a.dma_map = switch(v)?;
        return Ok(());
    }
    if switch(v)? {
        return Err(format!(
            "option -D was removed in fio 3.37's t/io_uring (this is {}'s; \
             --fio-compat=3.36 or older has it)",
            a.release
        ));
    }
    eprintln!(
        "peak: note: -D0 is accepted and has no effect: t/io_uring dropped -D in \
         fio 3.37 (this is {}'s)",
        a.release
    );
    Ok(())
}

/// Parses the arguments after `peak`.
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Parsed, ArgError> {
    // `--fio-compat` (or IOBENCH_FIO_COMPAT) picks the t/io_uring release; it is not one
    // of t/io_uring's letters, so it is taken out before they are read.
    let release = crate::defs::release::FioRelease::from_args(args)
        .map_err(|e| ArgError(format!("peak: {e}")))?;
    let mut rest: Vec<&str> = Vec::new();
    let mut it = args.iter().map(|a| a.as_ref());
    while let Some(x) = it.next() {
        if x == "--fio-compat" {
            it.next();
        } else if !x.starts_with("--fio-compat=") {
            rest.push(x);
        }
    }
    let m = SPEC
        .parse(&rest)
        .map_err(|e| ArgError(format!("peak: {e}")))?;
    if m.help {
        return Ok(Parsed::Help);
    }
    let mut a = PeakArgs {
        files: m.positional.clone(),
        release,
        ..Default::default()
    };
    a.files.extend(m.rest.iter().flatten().cloned());
    SPEC.apply(&m, &mut a)
        .map_err(|e| ArgError(format!("peak: {e}")))?;
    check(&mut a)?;
    Ok(Parsed::Run(a))
}

/// The most submitting threads `peak` starts: far beyond any device's useful queueing,
/// and low enough that spawning them cannot outlast the runtime or exhaust memory.
pub const MAX_THREADS: u32 = 1024;

/// Rejects what cannot run and clamps the batches to the depth, as t/io_uring does.
fn check(a: &mut PeakArgs) -> Result<(), ArgError> {
    if a.depth == 0 {
        return Err(ArgError("peak: -d must be at least 1".into()));
    }
    if a.threads == 0 {
        return Err(ArgError("peak: -n must be at least 1 thread".into()));
    }
    if a.threads > MAX_THREADS {
        return Err(ArgError(format!(
            "peak: -n {} is more than {MAX_THREADS} threads",
            a.threads
        )));
    }
    if a.bs == 0 && !a.nop {
        return Err(ArgError("peak: -b must be at least 1 byte".into()));
    }
    if a.dma_map && a.fixedbufs {
        return Err(ArgError(
            "peak: -D1 (DMA-mapped buffers) needs NVMe passthrough, which iobench peak does not do"
                .into(),
        ));
    }
    a.dma_map = a.dma_map && a.fixedbufs;
    if a.numa_placement {
        return Err(ArgError(
            "peak: -P1 (NUMA placement) is not supported yet".into(),
        ));
    }
    if a.passthrough {
        return Err(ArgError(
            "peak: -u1 (NVMe passthrough) is not supported yet".into(),
        ));
    }
    if a.aio && a.sync {
        return Err(ArgError("peak: -a1 and -S1 cannot be combined".into()));
    }
    if (a.aio || a.sync) && a.nop {
        return Err(ArgError("peak: -N1 needs io_uring (drop -a1/-S1)".into()));
    }
    if !a.nop && a.files.is_empty() {
        return Err(ArgError("peak: no files given".into()));
    }
    a.batch_complete = a.batch_complete.min(a.depth);
    a.batch_submit = a.batch_submit.min(a.depth);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> PeakArgs {
        match parse(args).expect("parses") {
            Parsed::Run(a) => a,
            Parsed::Help => panic!("help"),
        }
    }

    #[test]
    fn fio_3_42s_flags_and_no_dash_d_after_3_36() {
        let a = run(&["--fio-compat=3.42", "-V1", "-e1", "f"]);
        assert!(a.vectored && a.restriction);
        assert_eq!(a.dma_suffix(), "");
        let e = parse(&["--fio-compat", "3.37", "-D1", "f"]).unwrap_err();
        assert!(e.0.contains("-D was removed in fio 3.37"), "{e:?}");
        // -D0 (what 3.37+ does anyway) is taken, so older scripts still run.
        assert_eq!(run(&["--fio-compat=3.42", "-D0", "f"]).dma_suffix(), "");
        let old = run(&["--fio-compat=3.36", "-D0", "f"]);
        assert_eq!(old.dma_suffix(), "/0");
    }

    #[test]
    fn seed_002_command_line_reads_as_t_io_uring_reads_it() {
        // Seed 002 was written for fio 3.33's t/io_uring, which still had -D.
        let a = run(&[
            "--fio-compat=3.33",
            "-d32",
            "-b512",
            "-s8",
            "-c8",
            "-p0",
            "-F1",
            "-B1",
            "-n1",
            "-D0",
            "-R0",
            "-X1",
            "-R1",
            "-t1",
            "-r5",
            "/dev/nvme0n1",
        ]);
        assert_eq!(a.depth, 32);
        assert_eq!(a.bs, 512);
        assert_eq!((a.batch_submit, a.batch_complete), (8, 8));
        assert!(!a.polled && a.register_files && a.fixedbufs && a.random);
        assert!(a.track_latency && a.register_ring);
        assert_eq!(a.runtime, 5);
        assert_eq!(a.files, vec!["/dev/nvme0n1".to_string()]);
    }

    #[test]
    fn separate_values_and_double_dash_work() {
        let a = run(&["-d", "4", "-N", "1", "--", "-odd-name"]);
        assert_eq!(a.depth, 4);
        assert!(a.nop);
        assert_eq!(a.files, vec!["-odd-name".to_string()]);
    }

    #[test]
    fn batches_are_clamped_to_the_depth() {
        let a = run(&["-d2", "-N1"]);
        assert_eq!((a.batch_submit, a.batch_complete), (2, 2));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for bad in [
            &["-dx", "f"][..],
            &["-q1", "f"],
            &["-d"],
            &["-n0", "f"],
            &["-d0", "f"],
            &["-u1", "f"],
            &["-a1", "-S1", "f"],
            &[],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
        assert_eq!(parse(&["-h"]).unwrap(), Parsed::Help);
    }
}
