//! `iobench pts TEST [options] TARGET`: the SNIA Solid State Storage Performance Test
//! Specification (Enterprise and Client, v2.0.x). Each test purges the target, writes it
//! sequentially twice over (workload-independent preconditioning), then runs its rounds
//! until the tracking variable is steady (`steady.rs`) or 25 rounds have run. Every
//! workload of a round is a plain job run in this process through `crate::session`, and
//! its JSON+ file is a plain run's. The output directory's state file (`state.rs`) makes
//! the run resumable; `report.rs` writes the summary and the text report.

pub mod measure;
pub mod plan;
pub mod purge;
pub mod report;
pub mod state;
pub mod steady;

use crate::defs::value::{parse_size, parse_time_us, KbBase};
use crate::defs::TimeUnit;
use crate::flags::{Flag, Spec, Takes, Value};
use crate::study::vocab::{self, Format};
use measure::Metrics;
use plan::{Profile, Section, Settings, Test};
use state::{Round, State};
use std::path::{Path, PathBuf};

/// `iobench pts`'s flags.
pub const SPEC: Spec<Given> = Spec {
    command: "pts",
    usage: "\
usage: iobench pts TEST -o DIR [options] TARGET

Runs a test of the SNIA Solid State Storage Performance Test Specification (PTS
Enterprise/Client v2.0.x) on TARGET, a block device or a file: purge, workload-independent
preconditioning (128 KiB sequential writes of twice the capacity), then rounds until the
tracking variable is steady (5-round window: range <= 20 % and slope excursion <= 10 % of
the average; at most 25 rounds). Every workload is a plain job; its JSON+ goes to DIR.
Run the same command again to resume an interrupted run.

TEST: iops (7 mixes x 8 block sizes), throughput (128 KiB and 1 MiB sequential),
      latency (0.5/4/8 KiB x 100/0, 65/35, 0/100 at QD1 T1), wsat (write saturation),
      hir (host idle recovery: 5 s write bursts with 5-50 s of host idle between),
      dirth (demand intensity: 8 KiB random 65/35 at T 1..--threads x QD 1..--qd).
THE TARGET'S DATA IS DESTROYED.",
    flags: &[
        Flag {
            names: &["--dir", "-o", "--output"],
            takes: Takes::Value,
            form: "DIR",
            help: "the output directory (required): each run's JSON+, state.json,\n\
                   summary.json, report.txt; the same DIR resumes",
            apply: |a, v| {
                a.dir = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--profile"],
            takes: Takes::Value,
            form: "enterprise|client",
            help: "active range 100 % or 75 %; expects the write cache off or on\n\
                   (read from sysfs, not changed); default enterprise",
            apply: |a, v| {
                a.settings.profile =
                    Profile::parse(v.text()).ok_or_else(|| v.bad("enterprise or client"))?;
                Ok(())
            },
        },
        Flag {
            names: &["--threads"],
            takes: Takes::Value,
            form: "N",
            help: "threads (jobs) per workload (default 1; latency runs T1);\n\
                   dirth: the largest thread count (default 32)",
            apply: |a, v| {
                a.settings.threads = positive(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--qd"],
            takes: Takes::Value,
            form: "N",
            help: "queue depth per thread (default 32; latency runs QD1);\n\
                   dirth: the largest depth",
            apply: |a, v| {
                a.settings.qd = positive(v)?;
                Ok(())
            },
        },
        Flag {
            names: &["--engine"],
            takes: Takes::Value,
            form: "ENGINE",
            help: "the I/O engine (default libaio), always with direct I/O",
            apply: |a, v| {
                if v.text().is_empty() {
                    return Err(v.bad("an engine name"));
                }
                a.settings.engine = v.string();
                Ok(())
            },
        },
        Flag {
            names: &["--capacity"],
            takes: Takes::Value,
            form: "SIZE",
            help: "test only the first SIZE bytes (a scaled run: not conforming);\n\
                   creates a file target that does not exist",
            apply: |a, v| match parse_size(v.text(), KbBase::Binary) {
                Ok(c) if c >= 2 << 20 => {
                    a.capacity = Some(c);
                    Ok(())
                }
                _ => Err(v.bad("a size of at least 2MiB, such as 64m or 10g")),
            },
        },
        Flag {
            names: &["--round-time"],
            takes: Takes::Value,
            form: "TIME",
            help: "each workload's time per round (default 60s; shorter: not conforming)",
            apply: |a, v| {
                a.settings.round_ms = time_ms(v, 10, "10ms, such as 60s or 500ms")?;
                Ok(())
            },
        },
        Flag {
            names: &["--max-rounds"],
            takes: Takes::Value,
            form: "N",
            help: "rounds at most, 5 to 25 (default 25; fewer: not conforming)",
            apply: |a, v| match v.number::<usize>("5 to 25") {
                Ok(n) if (steady::WINDOW..=steady::MAX_ROUNDS).contains(&n) => {
                    a.settings.max_rounds = n;
                    Ok(())
                }
                _ => Err(v.bad("a whole number from 5 to 25")),
            },
        },
        Flag {
            names: &["--wsat-time"],
            takes: Takes::Value,
            form: "TIME",
            help: "write saturation's time limit (default 24h; it also stops at 4x capacity)",
            apply: |a, v| {
                a.settings.wsat_limit_s = time_ms(v, 1000, "1s, such as 24h or 30m")? / 1000;
                Ok(())
            },
        },
        Flag {
            names: &["--hir-burst"],
            takes: Takes::Value,
            form: "TIME",
            help: "hir: one write burst's length (default 5s; the wait states are\n\
                   1, 2, 3, 5 and 10 times it; shorter: not conforming)",
            apply: |a, v| {
                a.settings.hir_burst_ms = time_ms(v, 10, "10ms, such as 5s or 200ms")?;
                Ok(())
            },
        },
        Flag {
            names: &["--hir-bursts"],
            takes: Takes::Value,
            form: "N",
            help: "hir: bursts per wait state and per return to the baseline\n\
                   (default 360; fewer: not conforming)",
            apply: |a, v| {
                let expected = "a whole number from 1 to 100000";
                a.settings.hir_bursts = match v.number::<usize>(expected) {
                    Ok(n) if (1..=100_000).contains(&n) => n,
                    _ => return Err(v.bad(expected)),
                };
                Ok(())
            },
        },
        Flag {
            names: &["--force"],
            takes: Takes::Nothing,
            form: "",
            help: "use a target that holds data: a device with partitions, a file system\n\
                   or partition-table signature, or a file with data in it",
            apply: |a, _| {
                a.force = true;
                Ok(())
            },
        },
        Flag {
            names: &["--no-purge"],
            takes: Takes::Nothing,
            form: "",
            help: "run on a target that cannot be purged (the report says so)",
            apply: |a, _| {
                a.settings.purge = false;
                Ok(())
            },
        },
        vocab::json(),
        vocab::output_format(
            "the report on stdout as text (default), or summary.json's document\n\
             (the text then goes to stderr); both are always written to DIR",
        ),
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// What `iobench pts` was asked to do.
struct Args {
    settings: Settings,
    target: String,
    dir: PathBuf,
    capacity: Option<u64>,
    force: bool,
    format: Format,
}

/// What the flags set, before the target's size is known.
#[derive(Debug)]
pub struct Given {
    settings: Settings,
    dir: Option<PathBuf>,
    capacity: Option<u64>,
    force: bool,
    /// `--output-format`: the report as text, or the summary document, on stdout.
    format: Format,
}

impl vocab::Formats for Given {
    const ACCEPTS: &'static [Format] = &[Format::Normal, Format::Json];
    const FORM: &'static str = "normal|json";
    fn format_mut(&mut self) -> &mut Format {
        &mut self.format
    }
}

impl Given {
    /// The settings of `test` before any flag: the specification's.
    fn of(test: Test) -> Given {
        Given {
            settings: Settings {
                test,
                profile: Profile::Enterprise,
                // Dirth's matrix: thread counts up to 32 (as depths).
                threads: if test == Test::Dirth { 32 } else { 1 },
                qd: 32,
                engine: "libaio".into(),
                capacity: 0,
                round_ms: 60_000,
                max_rounds: steady::MAX_ROUNDS,
                wsat_limit_s: 24 * 3600,
                purge: true,
                hir_burst_ms: plan::HIR_BURST_MS,
                hir_bursts: plan::HIR_BURSTS,
            },
            dir: None,
            capacity: None,
            force: false,
            format: Format::Normal,
        }
    }
}

impl Default for Given {
    fn default() -> Self {
        Given::of(Test::Iops)
    }
}

fn positive(v: Value<'_>) -> Result<u32, String> {
    match v.number::<u32>("a whole number from 1") {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(v.bad("a whole number from 1")),
    }
}

/// A time option in milliseconds (seconds without a unit), at least `min_ms`; `least`
/// names the least and an example for the error.
fn time_ms(v: Value<'_>, min_ms: u64, least: &str) -> Result<u64, String> {
    match parse_time_us(v.text(), TimeUnit::Sec) {
        Ok(us) if us >= min_ms * 1000 => Ok(us / 1000),
        _ => Err(v.bad(&format!("a time of at least {least}"))),
    }
}

/// Reads the arguments (the target's size is filled in later): `None` for `--help`.
fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let m = SPEC.parse(args)?;
    if m.help {
        return Ok(None);
    }
    let mut pos = m.positional.clone();
    pos.extend(m.rest.clone().unwrap_or_default());
    let [test, target] = <[String; 2]>::try_from(pos).map_err(|p| {
        format!(
            "expected TEST and TARGET, got {} argument(s) {p:?} (see iobench pts --help)",
            p.len()
        )
    })?;
    let test = Test::parse(&test).ok_or_else(|| {
        format!("unknown test '{test}': expected iops, throughput, latency, wsat, hir or dirth")
    })?;
    let mut given = Given::of(test);
    SPEC.apply(&m, &mut given)?;
    let Given {
        settings: s,
        dir,
        capacity,
        force,
        format,
    } = given;
    let dir = dir.ok_or("no output directory: give -o DIR (the same DIR resumes the run)")?;
    Ok(Some(Args {
        settings: s,
        target,
        dir,
        capacity,
        force,
        format,
    }))
}

/// Runs `iobench pts ARGS`; returns the exit status.
pub fn main(args: &[String]) -> u8 {
    match pts(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iobench pts: {e}");
            1
        }
    }
}

/// How a step ended.
enum Step<T> {
    Done(T),
    /// A signal stopped the run: the state is saved, the same command resumes.
    Interrupted(i32),
}

fn pts(args: &[String]) -> Result<u8, String> {
    let Some(mut a) = parse_args(args)? else {
        print!("{}", SPEC.help());
        return Ok(0);
    };
    // Nothing below writes to the target until every check has passed: the device is
    // claimed (O_EXCL, held to the end) and looked at, and every job of the plan is
    // parsed and checked as its run will be.
    let (target, claim) = purge::inspect(&a.target, a.capacity)?;
    a.settings.capacity = match a.capacity {
        Some(c) if c > target.size => {
            return Err(format!(
                "--capacity {c} is more than {}'s {} bytes",
                target.path, target.size
            ))
        }
        Some(c) => c,
        None => target.size,
    };
    if a.settings.active_bytes() < 1 << 20 {
        return Err(format!(
            "{}: {} bytes is too small a capacity for the tests' 1 MiB blocks",
            target.path, a.settings.capacity
        ));
    }
    let defs = plan::sections(&a.settings);
    check_jobs(&a.settings, &defs, &target.path, &a.dir)?;
    // An -o DIR already there is checked before its state is read.
    if std::fs::symlink_metadata(&a.dir).is_ok() {
        crate::safefs::check_dir(&a.dir).map_err(|e| format!("-o {}: {e}", a.dir.display()))?;
    }
    let names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
    let mut st = State::open(&a.dir, &a.settings, &target, &names)?;
    measure::check_runs(&a.dir)?;
    // A run that already purged the target resumes on pts's own data.
    let purged = st.sections.iter().any(|x| x.purge.is_some());
    if !a.force && !purged {
        if let Some(why) = purge::data_note(&target, claim.as_ref())? {
            return Err(why);
        }
    }
    // Made, or checked: no other user may plant links or swap run files in it.
    crate::safefs::output_dir("-o", &a.dir)?;
    if st.resumed > 0 {
        eprintln!("pts: resuming the run in {}", a.dir.display());
    }
    if let Some(note) = purge::unsupported_note(&target) {
        eprintln!("pts: {note}");
    }
    // The state is first saved once the first purge is done: a target refused there
    // leaves no run behind, and the same DIR takes `--no-purge`.
    for (k, def) in defs.iter().enumerate() {
        if let Step::Interrupted(sig) = run_section(&a.dir, &mut st, k, def)? {
            eprintln!(
                "pts: stopped by signal {sig}; run the same command again to resume from {}",
                a.dir.display()
            );
            return Ok(128u8.saturating_add(sig as u8));
        }
    }
    let (text, json) = report::write(&a.dir, &st)?;
    if a.format == Format::Json {
        eprint!("{text}");
        print!("{json}");
    } else {
        print!("{text}");
    }
    Ok(0)
}

/// Parses and checks every job the plan will run (the preconditioning, each round's
/// workloads, host idle recovery's bursts) as its run will, before anything is written:
/// a bad `--engine` or a size no job takes is refused while the target is untouched.
fn check_jobs(s: &Settings, defs: &[Section], target: &str, dir: &Path) -> Result<(), String> {
    let out = dir.join("check.json").to_string_lossy().into_owned();
    for def in defs {
        let mut jobs = vec![plan::precondition_job(s, target, &out)];
        for w in &def.workloads {
            jobs.push(plan::round_job(s, w, target, &out));
            if s.test == Test::Hir {
                jobs.push(plan::burst_job(s, w, target, &out));
            }
        }
        for args in jobs {
            crate::session::prepare_args(&args).map_err(|e| format!("{}: {e}", def.name))?;
        }
    }
    Ok(())
}

/// Runs one plain job (`job` names its output file `rel` + `.partial` under `dir`), and
/// keeps its JSON+ as `rel` when it succeeded.
fn run_job(
    dir: &Path,
    rel: &str,
    job: impl FnOnce(&str) -> Vec<String>,
) -> Result<Step<Metrics>, String> {
    let done = dir.join(rel);
    // A file there that is no result runs again (the rename replaces it); one that is
    // not a regular file, or too big, stops the run.
    if let Some(Ok(m)) = measure::kept(dir, rel)? {
        return Ok(Step::Done(m));
    }
    let partial = dir.join(format!("{rel}.partial"));
    if let Some(parent) = partial.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let args = job(&partial.to_string_lossy());
    let prepared = crate::session::prepare_args(&args).map_err(String::from)?;
    let ran = crate::session::run_reported(&prepared)?;
    if let Some(sig) = crate::run::signals::signalled() {
        let _ = std::fs::remove_file(&partial);
        return Ok(Step::Interrupted(sig));
    }
    if ran.code != 0 {
        return Err(format!(
            "{rel}: the job failed (exit status {}); its output is in {}",
            ran.code,
            partial.display()
        ));
    }
    std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))?;
    measure::read(dir, rel).map(Step::Done)
}

/// Runs what is left of section `k`: its purge, its preconditioning, its rounds.
fn run_section(dir: &Path, st: &mut State, k: usize, def: &Section) -> Result<Step<()>, String> {
    let s = st.settings.clone();
    let target = st.target.clone();
    if st.sections[k].purge.is_none() {
        let method = if s.purge {
            purge::purge(&target, s.capacity)?
        } else {
            purge::Method::NotPurged
        };
        eprintln!("pts: {}: purge: {}", def.name, method.text());
        st.sections[k].purge = Some(method);
        st.save(dir)?;
    }
    if def.precondition && !st.sections[k].preconditioned {
        eprintln!(
            "pts: {}: preconditioning: 128 KiB sequential writes of twice {} bytes",
            def.name, s.capacity
        );
        let rel = report::precondition_file(&def.name);
        if let Step::Interrupted(sig) = run_job(dir, &rel, |out| {
            plan::precondition_job(&s, &target.path, out)
        })? {
            return Ok(Step::Interrupted(sig));
        }
        st.sections[k].preconditioned = true;
        st.save(dir)?;
    }
    while !st.sections[k].finished {
        let number = st.sections[k].rounds.len() + 1;
        let mut round = Round {
            number,
            tracking: 0.0,
            also: vec![0.0; def.also_tracked.len()],
            runtime_s: 0.0,
            written: 0,
        };
        for w in &def.workloads {
            let rel = report::round_file(&def.name, number, &w.name);
            let m = match run_job(dir, &rel, |out| plan::round_job(&s, w, &target.path, out))? {
                Step::Done(m) => m,
                Step::Interrupted(sig) => return Ok(Step::Interrupted(sig)),
            };
            if w.name == def.tracking {
                round.tracking = m.value(def.measure);
            }
            if let Some(i) = def.also_tracked.iter().position(|t| *t == w.name) {
                round.also[i] = m.value(def.measure);
            }
            round.runtime_s += m.runtime_ms as f64 / 1000.0;
            round.written += m.written;
        }
        // A round counts at least its nominal time, so that write saturation's time limit
        // ends a run whose jobs did no I/O (and report no runtime) too.
        let nominal = s.round_ms as f64 / 1000.0 * def.workloads.len() as f64;
        round.runtime_s = round.runtime_s.max(nominal);
        eprintln!(
            "pts: {}: round {number}: {} {:.4} {}",
            def.name,
            def.tracking,
            round.tracking,
            def.measure.unit()
        );
        let sec = &mut st.sections[k];
        sec.rounds.push(round);
        sec.finished = if def.judged {
            steady::settled(&report::tracked_series(def, sec), s.max_rounds)
        } else {
            let written: u64 = sec.rounds.iter().map(|r| r.written).sum();
            let time: f64 = sec.rounds.iter().map(|r| r.runtime_s).sum();
            written >= 4 * s.capacity || time >= s.wsat_limit_s as f64
        };
        st.save(dir)?;
    }
    if s.test == Test::Hir {
        return run_bursts(dir, st, k, def);
    }
    Ok(Step::Done(()))
}

/// Sleeps `ms` of host idle, in short steps so that a signal stops the run at once.
fn idle(ms: u64) -> Step<()> {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    while let Some(left) = end.checked_duration_since(std::time::Instant::now()) {
        if let Some(sig) = crate::run::signals::signalled() {
            return Step::Interrupted(sig);
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
    }
    Step::Done(())
}

/// Host idle recovery after its rounds: every segment's bursts, each burst a plain run.
/// The idle after a wait state's burst is taken before the next burst, so a resumed run
/// idles again in full before it carries on.
fn run_bursts(dir: &Path, st: &mut State, k: usize, def: &Section) -> Result<Step<()>, String> {
    let s = st.settings.clone();
    let target = st.target.clone();
    let segs = plan::hir_segments(&s);
    let w = &def.workloads[0];
    loop {
        let done = st.sections[k].bursts.len();
        if done >= segs.len() * s.hir_bursts {
            return Ok(Step::Done(()));
        }
        let (seg, number) = (done / s.hir_bursts, done % s.hir_bursts + 1);
        if let Some(prev) = st.sections[k].bursts.last() {
            if let Step::Interrupted(sig) = idle(segs[prev.segment].wait_ms) {
                return Ok(Step::Interrupted(sig));
            }
        }
        let rel = report::burst_file(&def.name, &segs[seg].name, number);
        let m = match run_job(dir, &rel, |out| plan::burst_job(&s, w, &target.path, out))? {
            Step::Done(m) => m,
            Step::Interrupted(sig) => return Ok(Step::Interrupted(sig)),
        };
        if number == 1 {
            eprintln!(
                "pts: {}: {}: {} bursts of {} ms, {} ms idle after each",
                def.name, segs[seg].name, s.hir_bursts, s.hir_burst_ms, segs[seg].wait_ms
            );
        }
        st.sections[k].bursts.push(state::Burst {
            segment: seg,
            number,
            iops: m.iops,
            runtime_s: m.runtime_ms as f64 / 1000.0,
            written: m.written,
        });
        st.save(dir)?;
    }
}
