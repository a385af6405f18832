//! Reports while the jobs run: every `--status-interval` and whenever SIGUSR1 arrives, the
//! main process asks every running clone for a snapshot of its statistics (through the
//! board), waits briefly for the answers, and hands the whole run as it stands to the
//! reporter that `report::run::Reporter` registered: finished clones with their final
//! statistics, running ones with their snapshot, clones not started yet with nothing done
//! (as fio lists them).

use crate::stats::{board, snapshot, JobStats, RunOutcome};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Prints one interim report of the run as it stands.
pub type Reporter = Box<dyn FnMut(&RunOutcome) + Send>;

/// Takes every snapshot of the run as it stands (`--live`, `--metrics`): the outcome and
/// true for the last call, made with the final statistics when the run ends.
pub type Consumer = Box<dyn FnMut(&RunOutcome, bool) + Send>;

/// How long the main process waits for the clones' snapshots before it reports with the
/// last ones it has (a clone deep in a long sleep or a slow I/O answers later).
const ANSWER_WAIT: Duration = Duration::from_millis(300);

/// One clone, in the order the final report lists them.
struct Clone {
    thread_number: u64,
    /// The clone's latest known statistics: its job's blank ones (shared) at first, then
    /// its latest snapshot, then its final statistics.
    stats: Stats,
    done: bool,
}

/// A clone's statistics: the blank ones its job's clones share until it has its own.
enum Stats {
    Blank(std::sync::Arc<JobStats>),
    Own(Box<JobStats>),
}

impl Stats {
    fn get(&self) -> &JobStats {
        match self {
            Stats::Blank(s) => s,
            Stats::Own(s) => s,
        }
    }
}

struct Live {
    clones: Vec<Clone>,
    every: Option<Duration>,
    next: Instant,
    /// True when the interval's snapshots are also printed as reports
    /// (`--status-interval`); with only `--live` or `--metrics` they are not.
    print: bool,
}

static LIVE: Mutex<Option<Live>> = Mutex::new(None);
static REPORTER: Mutex<Option<Reporter>> = Mutex::new(None);
static CONSUMERS: Mutex<Vec<Consumer>> = Mutex::new(Vec::new());

/// Adds a consumer of every snapshot for the next run (cleared by [`finish`]).
pub fn add_consumer(c: Consumer) {
    if let Ok(mut g) = CONSUMERS.lock() {
        g.push(c);
    }
}

/// Hands the final statistics to the consumers and drops them (the run is over).
pub fn finish(outcome: &RunOutcome) {
    let taken = match CONSUMERS.lock() {
        Ok(mut g) => std::mem::take(&mut *g),
        Err(_) => return,
    };
    for mut c in taken {
        c(outcome, true);
    }
}

/// Registers the function that prints interim reports. Without one, none are printed.
pub fn set_reporter(r: Reporter) {
    if let Ok(mut g) = REPORTER.lock() {
        *g = Some(r);
    }
}

/// Sets up interim reports for a run of `clones` (thread number, empty statistics), in
/// report order; `every_ms` is how often snapshots are taken, and `print` whether they
/// are printed as reports too (`--status-interval`).
pub(crate) fn start(
    clones: Vec<(u64, std::sync::Arc<JobStats>)>,
    every_ms: Option<u64>,
    print: bool,
) {
    let every = every_ms.filter(|&ms| ms > 0).map(Duration::from_millis);
    let live = Live {
        clones: clones
            .into_iter()
            .map(|(thread_number, stats)| Clone {
                thread_number,
                stats: Stats::Blank(stats),
                done: false,
            })
            .collect(),
        every,
        next: Instant::now() + every.unwrap_or_default(),
        print,
    };
    if let Ok(mut g) = LIVE.lock() {
        *g = Some(live);
    }
}

/// Records a clone's final statistics as soon as the collector has them.
pub(crate) fn finished(thread_number: u64, stats: Option<&JobStats>) {
    let Ok(mut g) = LIVE.lock() else { return };
    let Some(l) = g.as_mut() else { return };
    if let Some(c) = l
        .clones
        .iter_mut()
        .find(|c| c.thread_number == thread_number)
    {
        if let Some(s) = stats {
            let mut own = s.clone();
            own.logs = None;
            c.stats = Stats::Own(Box::new(own));
        }
        c.done = true;
    }
}

/// Prints an interim report when one is due (the interval passed, or SIGUSR1 came).
/// Called from the collector's loop, in the main process only.
pub(crate) fn tick() {
    let usr1 = super::signals::take_usr1();
    let (due, print) = {
        let Ok(mut g) = LIVE.lock() else { return };
        let Some(l) = g.as_mut() else { return };
        let now = Instant::now();
        let timer = match l.every {
            Some(every) if now >= l.next => {
                // Keep the cadence; skip beats lost to a long wait rather than bunching.
                while l.next <= now {
                    l.next += every;
                }
                true
            }
            _ => false,
        };
        (timer || usr1, usr1 || (timer && l.print))
    };
    if due {
        report(print);
    }
}

/// Stops interim reports (the run is over; the final report follows).
pub(crate) fn end() {
    if let Ok(mut g) = LIVE.lock() {
        *g = None;
    }
}

/// Gathers snapshots, hands them to the consumers and, with `print`, prints the run as
/// it stands.
fn report(print: bool) {
    let Ok(mut g) = LIVE.lock() else { return };
    let Some(l) = g.as_mut() else { return };
    if let Some(gen) = board::request() {
        let deadline = Instant::now() + ANSWER_WAIT;
        let waiting = |l: &Live| {
            l.clones.iter().any(|c| {
                !c.done && board::answer_state(c.thread_number as usize - 1, gen) == Some(false)
            })
        };
        while waiting(l) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        for c in l.clones.iter_mut().filter(|c| !c.done) {
            if let Some(mut s) = snapshot::read(c.thread_number as usize - 1) {
                // Never step back: a late or stale snapshot older than what we hold is
                // dropped, so the numbers of successive reports only grow.
                if s.total_bytes() >= c.stats.get().total_bytes() {
                    s.job_index = c.stats.get().job_index;
                    c.stats = Stats::Own(Box::new(s));
                }
            }
        }
    }
    let outcome = RunOutcome {
        results: l.clones.iter().map(|c| c.stats.get().clone()).collect(),
        signal: None,
    };
    drop(g);
    if let Ok(mut cs) = CONSUMERS.lock() {
        for c in cs.iter_mut() {
            c(&outcome, false);
        }
    }
    if !print {
        return;
    }
    if let Ok(mut r) = REPORTER.lock() {
        if let Some(f) = r.as_mut() {
            f(&outcome);
        }
    }
}
