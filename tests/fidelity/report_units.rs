//! Renderer tests on hand-built statistics: exact lines for known latencies.

use iobench::api::job::Ddir;
use iobench::api::report::normal;
use iobench::api::stats::group::{summarize, GroupStats};
use iobench::api::stats::{JobStats, RunOutcome, StatsConfig};

fn job_with(lats: &[u64]) -> JobStats {
    let mut s = JobStats::new("j", 0, StatsConfig::default());
    for (i, &l) in lats.iter().enumerate() {
        s.record_depth(1, 1);
        s.record_submit(1);
        s.record_complete(1);
        s.record_io(Ddir::Read, 4096, 0, l, i as u64 * 1000);
    }
    s.set_runtime_ms(Ddir::Read, 1000);
    s.set_total_runtime_ms(1000);
    s
}

fn group_of(s: &JobStats) -> GroupStats {
    let out = RunOutcome {
        results: vec![s.clone()],
        signal: None,
    };
    summarize(&[], &out).groups.remove(0)
}

#[test]
fn latency_lines_and_percentiles_for_known_values() {
    let lats: Vec<u64> = (1..=100).map(|v| v * 10).collect();
    let s = job_with(&lats);
    let text = normal::render_thread(
        &s,
        &group_of(&s),
        "Thu Jan  1 00:00:00 1970\n",
        Default::default(),
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "  read: IOPS=100, BW=400KiB/s (410kB/s)(400KiB/1000msec)"
    );
    assert_eq!(
        lines[2],
        "    clat (nsec): min=10, max=1000, avg=505.00, stdev=290.11"
    );
    assert_eq!(lines[4], "    clat percentiles (nsec):");
    assert_eq!(
        lines[5],
        "     |  1.00th=[   10],  5.00th=[   50], 10.00th=[  100], 20.00th=[  201],"
    );
    // 10 ns falls in "20" (10-19), 20-40 in "50", 50-90 in "100", 100-240 in "250", …
    assert!(
        text.contains("  lat (nsec)   : 20=1.00%, 50=3.00%, 100=5.00%, 250=15.00%, 500=25.00%\n"),
        "{text}"
    );
    assert!(
        text.contains("  lat (nsec)   : 750=25.00%, 1000=25.00%\n"),
        "{text}"
    );
    assert!(text.contains("  lat (usec)   : 2=1.00%\n"));
    assert!(text.contains("     submit    : 0=0.0%, 4=100.0%, 8=0.0%"));
    assert!(text.contains("     issued rwts: total=100,0,0,0 short=0,0,0,0 dropped=0,0,0,0\n"));
}

#[test]
fn group_line_and_merge() {
    let a = job_with(&[1000; 10]);
    let mut b = job_with(&[3000; 10]);
    b.set_runtime_ms(Ddir::Read, 500);
    let mut m = a.clone();
    m += &b;
    assert_eq!(m.dir[0].ios, 20);
    assert_eq!(m.dir[0].runtime_ms, 1000);
    let s = m.dir[0].clat.summary().unwrap();
    assert_eq!((s.min, s.max), (1000, 3000));
    assert!((s.mean - 2000.0).abs() < 1e-9);

    let out = RunOutcome {
        results: vec![a, b],
        signal: None,
    };
    let sum = summarize(&[], &out);
    assert_eq!(
        sum.threads.len(),
        2,
        "no group_reporting: one block per clone"
    );
    let g = normal::render_group(&sum.groups[0]);
    assert_eq!(
        g,
        "\nRun status group 0 (all jobs):\n   READ: bw=80.0KiB/s (81.9kB/s), 40.0KiB/s-80.0KiB/s (41.0kB/s-81.9kB/s), io=80.0KiB (81.9kB), run=500-1000msec\n"
    );
}

#[test]
fn bandwidth_samples_are_cut_per_window() {
    let mut s = JobStats::new("j", 0, StatsConfig::default());
    // 4 KiB every ms for 2 s: 4000 KiB/s in each 500 ms window.
    for ms in 1..=2000u64 {
        s.record_io(Ddir::Read, 4096, 0, 1000, ms * 1_000_000);
    }
    let bw = s.dir[0].bw.summary().unwrap();
    assert_eq!(s.dir[0].bw.samples, 4);
    assert_eq!((bw.min, bw.max), (4000, 4000));
    assert_eq!(s.dir[0].iops.samples, 4);
    assert_eq!(s.dir[0].iops.summary().unwrap().min, 1000);
}
