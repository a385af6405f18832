//! The PTS tests as data: which workloads make one round of a test, in the order the
//! specification runs them, which one is the tracking variable, and the job each
//! workload is run as (a plain job's options, so a round's JSON is a plain run's).

use serde::{Deserialize, Serialize};

/// KiB.
const K: u64 = 1024;

/// The tests `iobench pts` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// IOPS: 7 read/write mixes × 8 block sizes.
    Iops,
    /// Throughput: 128 KiB and 1024 KiB sequential read and write.
    Throughput,
    /// Latency: 0.5/4/8 KiB × 100/0, 65/35, 0/100 at one thread, depth one.
    Latency,
    /// Write saturation: 4 KiB random writes from the purged state.
    Wsat,
    /// Host idle recovery: 4 KiB random writes to steady state, then bursts of them
    /// separated by host idle periods of growing length, each followed by a return to
    /// the baseline (bursts without idle).
    Hir,
    /// Demand intensity / response-time histogram: 8 KiB random 65/35 at every thread
    /// count × queue depth, IOPS and response time against outstanding I/O.
    Dirth,
}

impl Test {
    /// Reads the TEST argument.
    pub fn parse(s: &str) -> Option<Test> {
        Some(match s {
            "iops" => Test::Iops,
            "throughput" | "tp" => Test::Throughput,
            "latency" | "lat" => Test::Latency,
            "wsat" | "write-saturation" => Test::Wsat,
            "hir" | "host-idle-recovery" => Test::Hir,
            "dirth" | "demand-intensity" => Test::Dirth,
            _ => return None,
        })
    }

    /// The test's name, as the command line and the output spell it.
    pub fn name(self) -> &'static str {
        match self {
            Test::Iops => "iops",
            Test::Throughput => "throughput",
            Test::Latency => "latency",
            Test::Wsat => "wsat",
            Test::Hir => "hir",
            Test::Dirth => "dirth",
        }
    }
}

/// The specification's two profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    Enterprise,
    Client,
}

impl Profile {
    /// Reads `--profile`.
    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "enterprise" | "e" => Some(Profile::Enterprise),
            "client" | "c" => Some(Profile::Client),
            _ => None,
        }
    }

    /// The share of the capacity the tests address (the active range), in percent.
    pub fn active_range_pct(self) -> u64 {
        match self {
            Profile::Enterprise => 100,
            Profile::Client => 75,
        }
    }

    /// The write cache the profile asks for: enterprise drives are tested with it
    /// disabled, client drives with it enabled (as sysfs names the two settings).
    pub fn write_cache(self) -> &'static str {
        match self {
            Profile::Enterprise => "write through",
            Profile::Client => "write back",
        }
    }
}

/// How a test is run: the user's choices and the scaled-run settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub test: Test,
    pub profile: Profile,
    pub threads: u32,
    pub qd: u32,
    pub engine: String,
    /// The bytes the test addresses from the start of the target (its capacity).
    pub capacity: u64,
    /// The length of one workload's run in a round, in milliseconds (60000 conforms).
    pub round_ms: u64,
    /// Rounds at most (25 conforms).
    pub max_rounds: usize,
    /// Write saturation's time limit, in seconds.
    pub wsat_limit_s: u64,
    /// False with `--no-purge`.
    pub purge: bool,
    /// Host idle recovery: the length of one write burst, in milliseconds (5000 conforms).
    #[serde(default = "default_hir_burst_ms")]
    pub hir_burst_ms: u64,
    /// Host idle recovery: bursts in each wait-state segment and each return to the
    /// baseline (360 conforms).
    #[serde(default = "default_hir_bursts")]
    pub hir_bursts: usize,
}

/// The specification's burst length for host idle recovery: 5 s.
pub const HIR_BURST_MS: u64 = 5_000;
/// The specification's bursts per host idle recovery segment: 360 (30 minutes of writes).
pub const HIR_BURSTS: usize = 360;

fn default_hir_burst_ms() -> u64 {
    HIR_BURST_MS
}

fn default_hir_bursts() -> usize {
    HIR_BURSTS
}

impl Settings {
    /// The active range in bytes: the profile's share of the capacity, whole 4 KiB
    /// blocks.
    pub fn active_bytes(&self) -> u64 {
        self.capacity * self.profile.active_range_pct() / 100 / (4 * K) * (4 * K)
    }
}

/// What a round measures of its tracking workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// I/O per second, read and write together.
    Iops,
    /// Bytes per second, read and write together.
    Bandwidth,
    /// Mean response time (fio's `lat`), nanoseconds.
    MeanLatency,
}

impl Measure {
    /// The unit the report prints the measure in.
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Iops => "IOPS",
            Measure::Bandwidth => "MB/s",
            Measure::MeanLatency => "ms",
        }
    }
}

/// One workload of a round: one plain job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// `rw65-bs4k`: the mix's read share and the block size; unique within a section.
    pub name: String,
    pub read_pct: u32,
    pub bs: u64,
    pub random: bool,
    pub threads: u32,
    pub qd: u32,
}

/// Part of a test run from a purge: its own preconditioning and rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// `iops`, `tp-128k`, `latency`, `wsat`.
    pub name: String,
    /// Workload-independent preconditioning (128 KiB sequential writes of twice the
    /// capacity) before the rounds.
    pub precondition: bool,
    pub workloads: Vec<Workload>,
    /// The workload whose measure is the tracking variable.
    pub tracking: String,
    /// Further tracking variables (PTS 2.0's IOPS test): workloads whose measure must be
    /// steady over the same window too before the rounds stop.
    pub also_tracked: Vec<String>,
    pub measure: Measure,
    /// Rounds judged for steady state (write saturation runs to its data or time limit).
    pub judged: bool,
}

/// `4k`, `512`, `1m` as a name part.
fn bs_name(bs: u64) -> String {
    match bs {
        b if b % (K * K) == 0 => format!("{}m", b / (K * K)),
        b if b % K == 0 => format!("{}k", b / K),
        b => b.to_string(),
    }
}

fn workload(read_pct: u32, bs: u64, random: bool, threads: u32, qd: u32) -> Workload {
    Workload {
        name: format!(
            "{}rw{read_pct}-bs{}",
            if random { "" } else { "seq-" },
            bs_name(bs)
        ),
        read_pct,
        bs,
        random,
        threads,
        qd,
    }
}

/// IOPS's read shares, in the specification's order.
pub const IOPS_MIXES: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];
/// IOPS's block sizes, in the specification's order (largest first).
pub const IOPS_SIZES: [u64; 8] = [1024 * K, 128 * K, 64 * K, 32 * K, 16 * K, 8 * K, 4 * K, 512];
/// The IOPS test's further tracking variables (PTS 2.0): 64 KiB random 65/35 and
/// 1024 KiB random read IOPS, judged over the same window as 4 KiB random write.
pub const IOPS_ALSO_TRACKED: [&str; 2] = ["rw65-bs64k", "rw100-bs1m"];
/// Latency's read shares and block sizes.
pub const LAT_MIXES: [u32; 3] = [100, 65, 0];
pub const LAT_SIZES: [u64; 3] = [8 * K, 4 * K, 512];
/// Throughput's block sizes.
pub const TP_SIZES: [u64; 2] = [1024 * K, 128 * K];

/// Host idle recovery's wait states, as multiples of the burst: with the specification's
/// 5 s bursts, 5, 10, 15, 25 and 50 s of host idle after each burst.
pub const HIR_WAIT_STATES: [u64; 5] = [1, 2, 3, 5, 10];

/// One segment of host idle recovery's bursts: a wait state (bursts each followed by
/// `wait_ms` of host idle) or the return to the baseline after it (`wait_ms` 0: the
/// bursts follow one another, continuous writes).
#[derive(Debug, Clone, PartialEq)]
pub struct HirSegment {
    /// `ws1`, `ws1-baseline`, `ws2`, …: the run files' prefix.
    pub name: String,
    /// The wait state's number (its idle as a multiple of the burst).
    pub wait_state: u64,
    pub wait_ms: u64,
}

/// Host idle recovery's segments, in order: each wait state, then its return to the
/// baseline.
pub fn hir_segments(s: &Settings) -> Vec<HirSegment> {
    HIR_WAIT_STATES
        .iter()
        .flat_map(|&w| {
            [
                HirSegment {
                    name: format!("ws{w}"),
                    wait_state: w,
                    wait_ms: w * s.hir_burst_ms,
                },
                HirSegment {
                    name: format!("ws{w}-baseline"),
                    wait_state: w,
                    wait_ms: 0,
                },
            ]
        })
        .collect()
}

/// The job of one host idle recovery burst: the section's 4 KiB random writes for the
/// burst's length.
pub fn burst_job(s: &Settings, w: &Workload, target: &str, output: &str) -> Vec<String> {
    let burst = Settings {
        round_ms: s.hir_burst_ms,
        ..s.clone()
    };
    round_job(&burst, w, target, output)
}

/// Demand intensity's access pattern: random, 65 % read, 8 KiB.
pub const DIRTH_READ_PCT: u32 = 65;
pub const DIRTH_BS: u64 = 8 * K;

/// 1, 2, 4, … up to `max` (and `max` itself when it is not a power of two), largest
/// first: demand intensity's thread counts and queue depths.
pub fn doublings(max: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::iter::successors(Some(1u32), |&n| n.checked_mul(2))
        .take_while(|&n| n < max)
        .collect();
    v.push(max);
    v.reverse();
    v
}

/// The sections of a test, in order.
pub fn sections(s: &Settings) -> Vec<Section> {
    let (t, q) = (s.threads, s.qd);
    match s.test {
        Test::Iops => vec![Section {
            name: "iops".into(),
            precondition: true,
            workloads: IOPS_MIXES
                .iter()
                .flat_map(|&m| {
                    IOPS_SIZES
                        .iter()
                        .map(move |&bs| workload(m, bs, true, t, q))
                })
                .collect(),
            tracking: "rw0-bs4k".into(),
            also_tracked: IOPS_ALSO_TRACKED.map(String::from).to_vec(),
            measure: Measure::Iops,
            judged: true,
        }],
        // Each round reads, then writes (the R/W mixes 100/0 and 0/100, in the order the
        // IOPS test runs its mixes); the writes are tracked.
        Test::Throughput => TP_SIZES
            .iter()
            .map(|&bs| {
                let w = workload(0, bs, false, t, q);
                Section {
                    name: format!("tp-{}", bs_name(bs)),
                    precondition: true,
                    tracking: w.name.clone(),
                    workloads: vec![workload(100, bs, false, t, q), w],
                    also_tracked: vec![],
                    measure: Measure::Bandwidth,
                    judged: true,
                }
            })
            .collect(),
        Test::Latency => vec![Section {
            name: "latency".into(),
            precondition: true,
            workloads: LAT_MIXES
                .iter()
                .flat_map(|&m| LAT_SIZES.iter().map(move |&bs| workload(m, bs, true, 1, 1)))
                .collect(),
            tracking: "rw0-bs4k".into(),
            also_tracked: vec![],
            measure: Measure::MeanLatency,
            judged: true,
        }],
        Test::Wsat => vec![Section {
            name: "wsat".into(),
            precondition: false,
            workloads: vec![workload(0, 4 * K, true, t, q)],
            tracking: "rw0-bs4k".into(),
            also_tracked: vec![],
            measure: Measure::Iops,
            judged: false,
        }],
        // Preconditioned as write saturation is run (4 KiB random writes from the purged
        // state, no sequential fill), but in rounds judged for steady state; the bursts
        // follow (`hir_segments`).
        Test::Hir => vec![Section {
            name: "hir".into(),
            precondition: false,
            workloads: vec![workload(0, 4 * K, true, t, q)],
            tracking: "rw0-bs4k".into(),
            also_tracked: vec![],
            measure: Measure::Iops,
            judged: true,
        }],
        // Every thread count × queue depth from the most outstanding I/O down, as the
        // specification orders them; the tracking variable is the most demanding point,
        // where the drive reaches its maximum IOPS.
        Test::Dirth => {
            let workloads: Vec<Workload> = doublings(t)
                .into_iter()
                .flat_map(|tc| {
                    doublings(q).into_iter().map(move |qd| {
                        let mut w = workload(DIRTH_READ_PCT, DIRTH_BS, true, tc, qd);
                        w.name = format!("{}-t{tc}-qd{qd}", w.name);
                        w
                    })
                })
                .collect();
            vec![Section {
                name: "dirth".into(),
                precondition: true,
                tracking: workloads[0].name.clone(),
                workloads,
                also_tracked: vec![],
                measure: Measure::Iops,
                judged: true,
            }]
        }
    }
}

/// The options shared by every job of a test: the target, the engine, direct I/O.
fn common(s: &Settings, target: &str, name: &str, output: &str) -> Vec<String> {
    vec![
        format!("--name={name}"),
        format!("--filename={}", crate::job::files::escape_name(target)),
        format!("--ioengine={}", s.engine),
        "--direct=1".into(),
        "--output-format=json+".into(),
        format!("--output={output}"),
    ]
}

/// The job of one workload in one round: time-bound over the active range.
pub fn round_job(s: &Settings, w: &Workload, target: &str, output: &str) -> Vec<String> {
    // A pure read or write job reports one direction only.
    let rw = match (w.read_pct, w.random) {
        (100, true) => "randread",
        (100, false) => "read",
        (0, true) => "randwrite",
        (0, false) => "write",
        (_, true) => "randrw",
        (_, false) => "rw",
    };
    let mut a = common(s, target, &w.name, output);
    a.extend([
        format!("--rw={rw}"),
        format!("--rwmixread={}", w.read_pct),
        format!("--bs={}", w.bs),
        format!("--size={}", s.active_bytes()),
        format!("--iodepth={}", w.qd),
        format!("--numjobs={}", w.threads),
        "--group_reporting".into(),
        "--time_based".into(),
        format!("--runtime={}ms", s.round_ms),
        // Every round draws new offsets over the whole range, as a drive in use sees.
        "--randrepeat=0".into(),
        "--norandommap".into(),
        // Response time is the whole latency (fio's `lat`): its percentiles and bins.
        "--lat_percentiles=1".into(),
    ]);
    a
}

/// Workload-independent preconditioning: 128 KiB sequential writes of twice the
/// capacity, one job at the user's depth.
pub fn precondition_job(s: &Settings, target: &str, output: &str) -> Vec<String> {
    let mut a = common(s, target, "wipc", output);
    a.extend([
        "--rw=write".into(),
        format!("--bs={}", 128 * K),
        format!("--size={}", s.capacity / (128 * K) * (128 * K)),
        "--loops=2".into(),
        format!("--iodepth={}", s.qd),
    ]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(test: Test) -> Settings {
        Settings {
            test,
            profile: Profile::Enterprise,
            threads: 2,
            qd: 16,
            engine: "libaio".into(),
            capacity: 10 << 20,
            round_ms: 60_000,
            max_rounds: 25,
            wsat_limit_s: 86_400,
            purge: true,
            hir_burst_ms: HIR_BURST_MS,
            hir_bursts: HIR_BURSTS,
        }
    }

    #[test]
    fn demand_intensity_runs_the_thread_by_depth_matrix_from_the_top() {
        assert_eq!(doublings(32), [32, 16, 8, 4, 2, 1]);
        assert_eq!(doublings(6), [6, 4, 2, 1]);
        assert_eq!(doublings(1), [1]);
        let mut st = settings(Test::Dirth);
        st.threads = 4;
        st.qd = 2;
        let sec = &sections(&st)[0];
        let names: Vec<&str> = sec.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "rw65-bs8k-t4-qd2",
                "rw65-bs8k-t4-qd1",
                "rw65-bs8k-t2-qd2",
                "rw65-bs8k-t2-qd1",
                "rw65-bs8k-t1-qd2",
                "rw65-bs8k-t1-qd1"
            ]
        );
        assert_eq!(sec.tracking, "rw65-bs8k-t4-qd2");
        let a = round_job(&st, &sec.workloads[1], "/dev/x", "o");
        assert!(a.contains(&"--numjobs=4".to_string()) && a.contains(&"--iodepth=1".to_string()));
    }

    #[test]
    fn host_idle_recovery_alternates_wait_states_and_baselines() {
        let st = settings(Test::Hir);
        let segs = hir_segments(&st);
        let waits: Vec<u64> = segs.iter().map(|s| s.wait_ms / 1000).collect();
        assert_eq!(waits, [5, 0, 10, 0, 15, 0, 25, 0, 50, 0]);
        assert_eq!(segs[3].name, "ws2-baseline");
        let sec = &sections(&st)[0];
        assert!(sec.judged && !sec.precondition);
        let a = burst_job(&st, &sec.workloads[0], "/dev/x", "o");
        assert!(a.contains(&"--runtime=5000ms".to_string()), "{a:?}");
        assert!(a.contains(&"--rw=randwrite".to_string()));
    }

    #[test]
    fn the_iops_round_is_the_specification_s_matrix_in_order() {
        let s = sections(&settings(Test::Iops));
        assert_eq!(s.len(), 1);
        let w = &s[0].workloads;
        assert_eq!(w.len(), 56);
        assert_eq!(w[0].name, "rw100-bs1m");
        assert_eq!(w[7].name, "rw100-bs512");
        assert_eq!(w[55].name, "rw0-bs512");
        assert!(w.iter().any(|w| w.name == s[0].tracking));
        assert!(s[0]
            .also_tracked
            .iter()
            .all(|t| w.iter().any(|w| &w.name == t)));
    }

    #[test]
    fn latency_runs_at_one_thread_depth_one_and_throughput_per_size() {
        let s = sections(&settings(Test::Latency));
        assert_eq!(s[0].workloads.len(), 9);
        assert!(s[0].workloads.iter().all(|w| w.threads == 1 && w.qd == 1));
        let s = sections(&settings(Test::Throughput));
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["tp-1m", "tp-128k"]);
        assert_eq!(s[1].tracking, "seq-rw0-bs128k");
        let order: Vec<&str> = s[0].workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(
            order,
            ["seq-rw100-bs1m", "seq-rw0-bs1m"],
            "read, then write"
        );
    }

    #[test]
    fn jobs_are_plain_jobs_over_the_active_range() {
        let mut st = settings(Test::Iops);
        st.profile = Profile::Client;
        let w = &sections(&st)[0].workloads[2];
        let a = round_job(&st, w, "/dev/x", "o.json");
        assert!(a.contains(&"--rw=randread".to_string()), "{a:?}");
        assert!(a.contains(&format!("--size={}", (10u64 << 20) * 3 / 4)));
        assert!(a.contains(&"--runtime=60000ms".to_string()));
        let w = &sections(&st)[0].workloads[20];
        assert!(round_job(&st, w, "/dev/x", "o").contains(&"--rwmixread=65".to_string()));
        let p = precondition_job(&st, "/dev/x", "o");
        assert!(p.contains(&"--loops=2".to_string()) && p.contains(&"--size=10485760".to_string()));
    }
}
