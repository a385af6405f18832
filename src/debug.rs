//! `--debug=CATS`: fio's debug categories, printed in fio 3.33's line format
//! (`random   PID  off rand N`: the category left-aligned in 8 columns, the thread id in 5,
//! then the message), on stdout as fio prints them, because scripts grep these lines.
//!
//! The mask is one atomic word read with a relaxed load, so a disabled category costs one
//! load and a branch on the paths that check it; nothing is formatted unless it is on.
//! Every category fio knows is accepted; the ones a user reads (process, file, io, random,
//! parse, verify) print fio's lines for the main events (process and verify: every line
//! fio prints for ordinary jobs, a job's state changes included); rate and steadystate
//! print what fio 3.33 prints on this platform for ordinary jobs (nothing); the others are
//! accepted and print fewer lines than fio.

use std::sync::atomic::{AtomicI32, AtomicI64, AtomicPtr, AtomicU32, Ordering};

/// fio's categories, in its order (`--debug=?` lists them so).
pub const CATEGORIES: [&str; 19] = [
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
];

/// One category; the value is its bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Cat {
    Process = 0,
    File = 1,
    Io = 2,
    Verify = 5,
    Random = 6,
    Parse = 7,
    Zbd = 18,
}

static MASK: AtomicU32 = AtomicU32::new(0);

/// What `--debug=SPEC` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `--debug=?`: list the categories and exit.
    List,
    /// Categories to turn on; the text fio prints for each ("set debug option …").
    Enable(Vec<String>),
}

/// Reads a `--debug` value as fio does: comma-separated categories, `all`, or `?` (also
/// `help`). A word is taken for the first category it begins with (fio compares prefixes);
/// an unknown one is reported (as fio, "debug mask X not found") and skipped, never fatal.
pub fn parse(spec: &str) -> Request {
    if asks_for_list(spec) {
        return Request::List;
    }
    let (mask, lines) = read_mask(spec);
    MASK.fetch_or(mask, Ordering::Relaxed);
    prepare_filter();
    Request::Enable(lines)
}

/// True when a `--debug` value asks for the list of categories (`?` or `help`).
pub fn asks_for_list(spec: &str) -> bool {
    matches!(spec.trim(), "?" | "help")
}

/// The mask `spec` names and fio's "set debug option" line for each category.
fn read_mask(spec: &str) -> (u32, Vec<String>) {
    let mut lines = Vec::new();
    let mut mask = 0u32;
    for word in spec.split(',').map(str::trim) {
        if word.starts_with("all") {
            mask = u32::MAX;
            lines.push("fio: set all debug options".to_string());
            continue;
        }
        match CATEGORIES.iter().position(|c| word.starts_with(c)) {
            // `job:N` picks the job whose lines are shown (fio's jobno, read as atoi
            // reads it; see [`forked`]).
            Some(bit) if CATEGORIES[bit] == "job" => match word.split_once(':') {
                Some((_, n)) => {
                    let n = atoi(n);
                    JOBNO.store(n, Ordering::Relaxed);
                    lines.push(format!("fio: set debug jobno {}", n as u32 as i32));
                }
                None => eprintln!("fio: missing job number"),
            },
            Some(bit) => {
                mask |= 1 << bit;
                lines.push(format!("fio: set debug option {word}"));
            }
            None => eprintln!("fio: debug mask {word} not found"),
        }
    }
    (mask, lines)
}

/// C's `atoi`: leading blanks, a sign, then digits; 0 when there are none, and wrapped to
/// 32 bits as fio's `unsigned int` keeps it (so `-1` means no job, as fio's default).
fn atoi(text: &str) -> i64 {
    let t = text.trim_start();
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in rest.bytes().take_while(u8::is_ascii_digit) {
        v = v.wrapping_mul(10).wrapping_add((c - b'0') as i64);
    }
    let v = if neg { v.wrapping_neg() } else { v };
    (v as u32) as i64
}

/// `--debug=job:N`: fio's job index (0-based over every clone of the run, in thread
/// number order) whose lines alone are shown once it is forked; `u32::MAX` for none.
static JOBNO: AtomicI64 = AtomicI64::new(u32::MAX as i64);

/// The id of the process whose debug lines alone are printed, in memory shared with every
/// forked worker (fio's `fio_debug_jobp`): set by the main process when it forks job
/// `JOBNO`, from then on it silences every other process, the main one included, and
/// workers forked earlier too. Null until a job filter is asked for.
static FILTER: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// What the main process and its forked workers share for `--debug`.
struct Shared {
    /// fio's `fio_debug_jobp`: the only process printing, or -1.
    only: AtomicI32,
    /// Workers that printed their start lines (the main process waits for each before it
    /// forks the next, as fio's waits for each new job to be initialized).
    started: AtomicU32,
}

/// Maps the shared words of [`FILTER`] (once, in the main process before any fork).
fn shared() -> Option<&'static Shared> {
    let p = FILTER.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: a non-null FILTER points into a shared mapping that is never unmapped
        // and holds a `Shared` at its start (see below).
        return Some(unsafe { &*p });
    }
    let m = crate::shm::shared_page().ok()?;
    let word = m.cast::<Shared>();
    // SAFETY: the page is writable, page-aligned and ours; a `Shared` fits in it.
    unsafe {
        word.write(Shared {
            only: AtomicI32::new(-1),
            started: AtomicU32::new(0),
        })
    };
    match FILTER.compare_exchange(
        std::ptr::null_mut(),
        word,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        // SAFETY: as above; the mapping lives to the end of the process.
        Ok(_) => Some(unsafe { &*word }),
        Err(other) => {
            // SAFETY: our mapping lost the race and was never shared: unmap it.
            unsafe { libc::munmap(m.cast(), 4096) };
            // SAFETY: `other` is the winner's mapping, set up as above.
            Some(unsafe { &*other })
        }
    }
}

/// The main process forked clone `thread_number` as `pid` (when [`started_count`] was
/// `before`): when that clone is the job `--debug=job:N` names, only its lines are printed
/// from now on (fio sets this for forked jobs only; threads are never filtered). With
/// `--debug=process`, it then waits (at most a second) for the worker's start lines, as
/// fio waits for each job to be initialized before it forks the next.
pub fn forked(thread_number: u64, pid: i32, before: u32) {
    let Some(sh) = (if FILTER.load(Ordering::Acquire).is_null() {
        None
    } else {
        shared()
    }) else {
        return;
    };
    if JOBNO.load(Ordering::Relaxed) == thread_number as i64 - 1 {
        sh.only.store(pid, Ordering::Release);
    }
    if on(Cat::Process) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while sh.started.load(Ordering::Acquire) <= before && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

/// In a newly forked worker of clone `thread_number`, before it prints anything: when it
/// is the job `--debug=job:N` names, it silences the others itself, since the main
/// process may only get to (see [`forked`]) after this worker and the others printed.
pub fn forked_child(thread_number: u64) {
    if JOBNO.load(Ordering::Relaxed) != thread_number as i64 - 1
        || FILTER.load(Ordering::Acquire).is_null()
    {
        return;
    }
    if let Some(sh) = shared() {
        sh.only.store(tid(), Ordering::Release);
    }
}

/// How many workers printed their start lines so far (see [`forked`]).
pub fn started_count() -> u32 {
    let p = FILTER.load(Ordering::Acquire);
    if p.is_null() {
        return 0;
    }
    // SAFETY: see `shared`.
    unsafe { &*p }.started.load(Ordering::Acquire)
}

/// Makes the shared words before any worker is forked, when `--debug` prints process
/// lines or filters by job (a worker forked before they exist would never see them).
pub fn prepare_filter() {
    if JOBNO.load(Ordering::Relaxed) != u32::MAX as i64 || on(Cat::Process) {
        let _ = shared();
    }
}

/// True when the job filter silences this thread's lines.
fn filtered_out(tid: i32) -> bool {
    let p = FILTER.load(Ordering::Acquire);
    if p.is_null() {
        return false;
    }
    // SAFETY: see `shared`.
    let only = unsafe { &*p }.only.load(Ordering::Acquire);
    only != -1 && only != tid
}

/// fio's wait lines (a stonewall wait, a job fenced by the one it waits for), which its
/// main loop prints again on each turn, every 100 ms, while the phase before runs.
static WAITS: std::sync::Mutex<Option<Waits>> = std::sync::Mutex::new(None);

/// The wait lines kept while a phase runs.
struct Waits {
    lines: Vec<String>,
    last: std::time::Instant,
    /// Printed once more as the phase ends (a stonewall: see [`end_waits`]).
    at_end: bool,
}

/// The main loop's turn: fio sleeps 100 ms between turns.
const MAIN_LOOP_TURN: std::time::Duration = std::time::Duration::from_millis(100);

/// Prints `first` now and keeps `again` to be printed on every later turn of the main
/// loop (see [`repeat_waits`]) until [`end_waits`], and then once more when `at_end`.
pub fn start_waits(first: &[String], again: Vec<String>, at_end: bool) {
    if !on(Cat::Process) {
        return;
    }
    for l in first {
        print(Cat::Process, format_args!("{l}"));
    }
    if let Ok(mut w) = WAITS.lock() {
        *w = Some(Waits {
            lines: again,
            last: std::time::Instant::now(),
            at_end,
        });
    }
}

/// Called by the collector as it polls: prints the kept wait lines once per turn.
pub fn repeat_waits() {
    if !on(Cat::Process) {
        return;
    }
    let Ok(mut w) = WAITS.lock() else { return };
    if let Some(w) = w.as_mut() {
        if w.last.elapsed() >= MAIN_LOOP_TURN {
            w.last = std::time::Instant::now();
            for l in &w.lines {
                print(Cat::Process, format_args!("{l}"));
            }
        }
    }
}

/// The phase the wait lines were about is over. fio notices a job's end only on its next
/// turn: a job behind a stonewall still waits on that turn (the ended job is reaped after
/// it), so its line is printed once more; a `wait_for` job sees its job exited and runs.
pub fn end_waits() {
    let Ok(mut w) = WAITS.lock() else { return };
    if let Some(w) = w.take().filter(|w| w.at_end) {
        for l in &w.lines {
            print(Cat::Process, format_args!("{l}"));
        }
    }
}

/// The list `--debug=?` prints.
pub fn list_text() -> String {
    format!("fio: dumping debug options:{},all\n", CATEGORIES.join(","))
}

/// True when category `c` is on.
#[inline]
pub fn on(c: Cat) -> bool {
    MASK.load(Ordering::Relaxed) & (1 << c as u32) != 0
}

/// Prints one debug line of category `c`, in fio's layout.
pub fn print(c: Cat, msg: std::fmt::Arguments) {
    use std::io::Write;
    // SAFETY: gettid has no preconditions and cannot fail.
    let tid = unsafe { libc::gettid() };
    if filtered_out(tid) {
        return;
    }
    let line = format!("{:<8} {:<5} {msg}\n", CATEGORIES[c as usize], tid);
    let _ = std::io::stdout().lock().write_all(line.as_bytes());
}

/// `dprint!(Cat::Io, "queue: …", …)`: prints when the category is on, formats nothing
/// otherwise.
#[macro_export]
macro_rules! dprint {
    ($cat:expr, $($arg:tt)*) => {
        if $crate::debug::on($cat) {
            $crate::debug::print($cat, format_args!($($arg)*));
        }
    };
}

/// `--debug=io`'s line for an I/O unit at `stage` (fill, prep, queue, complete), as fio
/// prints it: the unit's address (here its buffer's), offset and length in hex, the
/// direction's number (0 read, 1 write, 2 trim) and the file name.
pub fn io_unit(stage: &str, unit: *const u8, off: u64, len: usize, ddir: usize, file: &str) {
    print(
        Cat::Io,
        format_args!("{stage}: io_u {unit:p}: off={off:#x},len={len:#x},ddir={ddir},file={file}"),
    );
}

/// fio's job states, in fio's order; `--debug=process` shows every change of one
/// (`pid=N: runstate RUNNING -> VERIFYING`), which is how a script follows a job's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    NotCreated,
    Created,
    Initialized,
    Ramp,
    SettingUp,
    Running,
    Verifying,
    Fsyncing,
    Finishing,
    Exited,
    Reaped,
}

impl RunState {
    /// The name fio prints.
    pub fn name(self) -> &'static str {
        match self {
            RunState::NotCreated => "NOT_CREATED",
            RunState::Created => "CREATED",
            RunState::Initialized => "INITIALIZED",
            RunState::Ramp => "RAMP",
            RunState::SettingUp => "SETTING_UP",
            RunState::Running => "RUNNING",
            RunState::Verifying => "VERIFYING",
            RunState::Fsyncing => "FSYNCING",
            RunState::Finishing => "FINISHING",
            RunState::Exited => "EXITED",
            RunState::Reaped => "REAPED",
        }
    }
}

thread_local! {
    /// The state of the job this thread runs (a forked worker's main thread, or a
    /// `thread=1` worker), so that each change is printed with the state it leaves.
    static JOB_STATE: std::cell::Cell<RunState> = const { std::cell::Cell::new(RunState::Created) };
}

/// This thread's id: fio's `pid` of a job (a forked worker's pid is its main thread's id).
fn tid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// Prints the state change of job `pid` as seen from the main process (which made it, or
/// reaped it): `pid=N: runstate FROM -> TO`.
pub fn runstate_of(pid: i32, from: RunState, to: RunState) {
    if on(Cat::Process) {
        print(
            Cat::Process,
            format_args!("pid={pid}: runstate {} -> {}", from.name(), to.name()),
        );
    }
}

/// The job running on this thread enters `to` (printed only when it changes, as fio
/// prints it). Costs one relaxed load when `--debug=process` is off.
#[inline]
pub fn enter(to: RunState) {
    if !on(Cat::Process) {
        return;
    }
    let from = JOB_STATE.with(|s| s.replace(to));
    if from != to {
        runstate_of(tid(), from, to);
    }
}

/// Runs `f`, an engine's own preparation, in fio's SETTING_UP state (cpuio and exec
/// as they start, a listening net job while it waits for its peer), then returns to the
/// state the job was in.
pub fn setting_up<T>(f: impl FnOnce() -> T) -> T {
    if !on(Cat::Process) {
        return f();
    }
    let before = JOB_STATE.with(|s| s.get());
    enter(RunState::SettingUp);
    let out = f();
    enter(before);
    out
}

/// `--debug=process`'s lines as a job's process or thread begins: it says it started and
/// is initialized; the main process then lets it run (see [`let_run`]), in its ramp
/// period first when it has one (`ramp`).
pub fn started(ramp: bool) {
    JOB_STATE.with(|s| s.set(RunState::Created));
    if on(Cat::Process) {
        let pid = tid();
        print(Cat::Process, format_args!("jobs pid={pid} started"));
        enter(RunState::Initialized);
        let p = FILTER.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: see `shared`.
            unsafe { &*p }.started.fetch_add(1, Ordering::AcqRel);
        }
        // The main process prints INITIALIZED -> RUNNING (or RAMP), as fio's does.
        JOB_STATE.with(|s| s.set(running_state(ramp)));
    }
}

/// The main process's record of the run's clones (fio thread number, job name, pid), for
/// the lines that name them when they are reaped and when the run ends.
static CLONES: std::sync::Mutex<Vec<(u64, String, i32)>> = std::sync::Mutex::new(Vec::new());

fn running_state(ramp: bool) -> RunState {
    if ramp {
        RunState::Ramp
    } else {
        RunState::Running
    }
}

/// The main process started clone `thread_number` of job `name` as `pid` and lets it run
/// (into its ramp period first when it has one).
pub fn let_run(thread_number: u64, name: &str, pid: i32, ramp: bool) {
    if !on(Cat::Process) {
        return;
    }
    if let Ok(mut c) = CLONES.lock() {
        c.push((thread_number, name.to_string(), pid));
    }
    runstate_of(pid, RunState::Initialized, running_state(ramp));
}

/// The main process reaped clone `thread_number` (its process was waited for, its thread
/// joined).
pub fn reaped(thread_number: u64) {
    if !on(Cat::Process) {
        return;
    }
    let pid = CLONES
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|e| e.0 == thread_number).map(|e| e.2));
    if let Some(pid) = pid {
        runstate_of(pid, RunState::Exited, RunState::Reaped);
    }
}

/// The lines fio prints as a run ends: every job is told to terminate once the last one
/// that does I/O is reaped (`any_io`: not every job is cpuio), then each job's logs are
/// written out (a brief FINISHING after REAPED).
pub fn run_ended(any_io: bool) {
    if !on(Cat::Process) {
        return;
    }
    let clones = CLONES
        .lock()
        .map(|mut c| std::mem::take(&mut *c))
        .unwrap_or_default();
    if clones.is_empty() {
        return;
    }
    if any_io {
        print(Cat::Process, format_args!("terminate group_id=-1"));
        for (_, name, pid) in &clones {
            print(
                Cat::Process,
                format_args!("setting terminate on {name}/{pid}"),
            );
        }
    }
    for (_, _, pid) in &clones {
        runstate_of(*pid, RunState::Reaped, RunState::Finishing);
        runstate_of(*pid, RunState::Finishing, RunState::Reaped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_and_list() {
        assert_eq!(parse("?"), Request::List);
        assert_eq!(parse("help"), Request::List);
        // fio compares prefixes: a longer word still names its category.
        assert_eq!(read_mask("processes").0, 1 << Cat::Process as u32);
        assert_eq!(read_mask("job:2").1, ["fio: set debug jobno 2"]);
        assert_eq!(atoi(" 12x"), 12);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi("-1"), u32::MAX as i64);
        assert_eq!(read_mask("job:-1").1, ["fio: set debug jobno -1"]);
        JOBNO.store(u32::MAX as i64, Ordering::Relaxed);
        assert_eq!(read_mask("job").0, 0);
        assert!(list_text().contains("random,parse,diskutil"));
        // (read_mask, not parse: turning categories on would print from other tests.)
        let (mask, lines) = read_mask("parse,nosuch,random");
        assert_eq!(lines.len(), 2);
        assert_eq!(mask, 1 << Cat::Parse as u32 | 1 << Cat::Random as u32);
        assert_eq!(read_mask("all").0, u32::MAX);
    }
}
