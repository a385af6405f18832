//! fio's normal (human) text layout.

use crate::stats::JobStats;

/// Renders one job's result block.
pub fn render_job(s: &JobStats) -> String {
    let mut out = format!(
        "{}: (groupid={}, jobs={}): err={:2}: pid={}\n",
        s.name, s.groupid, s.jobs, s.error, s.pid
    );
    for (label, d) in [
        ("read", &s.dir[0]),
        ("write", &s.dir[1]),
        ("trim", &s.dir[2]),
    ] {
        if d.ios == 0 {
            continue;
        }
        let iops = d.ios as f64 * 1000.0 / d.runtime_ms as f64;
        let bw = d.bytes as f64 * 1000.0 / d.runtime_ms as f64;
        out.push_str(&format!(
            "  {label}: IOPS={:.0}, BW={:.0}KiB/s ({}B/{}msec)\n",
            iops,
            bw / 1024.0,
            d.bytes,
            d.runtime_ms
        ));
    }
    out
}
