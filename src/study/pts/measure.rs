//! What a PTS report reads from one run's JSON (a plain run's JSON+ file): IOPS and
//! bandwidth over read and write together, response times, and the bytes written.

use super::plan::Measure;
use crate::present::results::{self, percentile_of_bins};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One run's numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub iops: f64,
    /// Bytes per second.
    pub bw: f64,
    /// Mean response time (total latency), nanoseconds, weighted by I/O count.
    pub lat_mean_ns: f64,
    pub lat_max_ns: f64,
    /// The 99.999th percentile of the response time, nanoseconds.
    pub lat_p99999_ns: f64,
    pub written: u64,
    pub runtime_ms: u64,
}

impl Metrics {
    /// The value of `m` in the unit the report shows it in (IOPS, MB/s, ms).
    pub fn value(&self, m: Measure) -> f64 {
        match m {
            Measure::Iops => self.iops,
            Measure::Bandwidth => self.bw / 1e6,
            Measure::MeanLatency => self.lat_mean_ns / 1e6,
        }
    }
}

/// The largest run file pts reads back: the limit of every result input (1 GiB).
const MAX_RUN_BYTES: u64 = results::MAX_INPUT_BYTES;

/// Run `rel`'s JSON+ under the output directory `dir`, as pts wrote it: a regular file
/// inside `dir` (not a link, a FIFO or a device), within the size and value limits of
/// every input. `Err`: such a file is there but may not be read (the run stops);
/// `Ok(None)`: none; `Ok(Some(Err))`: one that is no result (run again).
pub fn kept(dir: &Path, rel: &str) -> Result<Option<Result<Metrics, String>>, String> {
    let path = dir.join(rel);
    let text = crate::safefs::read_own(dir, Path::new(rel), MAX_RUN_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text.map(|t| {
        results::parse(&String::from_utf8_lossy(&t))
            .map_err(|e| format!("{}: {e}", path.display()))
            .and_then(|f| metrics(&path, &f))
    }))
}

/// The most entries `runs/` of an output directory may hold: more than any run writes
/// (host idle recovery's 10 segments × 100000 bursts, and their `.partial` files).
const MAX_RUN_ENTRIES: usize = 4_000_000;

/// Looks at every entry of `DIR/runs` (the runs a resumed pts reads back, and their
/// `.partial` outputs) before anything is purged or written: each a directory (one per
/// section) or a regular file within the size limit, never a link, a FIFO or a device.
/// A hostile entry stops the command at once, with the target untouched.
pub fn check_runs(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let mut todo = vec![(dir.join("runs"), 0usize)];
    let mut seen = 0usize;
    while let Some((p, depth)) = todo.pop() {
        let md = match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            r => r.map_err(|e| format!("{}: {e}", p.display()))?,
        };
        let ft = md.file_type();
        let what = if ft.is_symlink() {
            "a symbolic link"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_block_device() || ft.is_char_device() {
            "a device"
        } else if ft.is_dir() && depth < 2 {
            let list = std::fs::read_dir(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            for e in list {
                let e = e.map_err(|e| format!("{}: {e}", p.display()))?;
                seen += 1;
                if seen > MAX_RUN_ENTRIES {
                    return Err(format!(
                        "{}: more than {MAX_RUN_ENTRIES} entries, more than a pts run writes",
                        dir.join("runs").display()
                    ));
                }
                todo.push((e.path(), depth + 1));
            }
            continue;
        } else if ft.is_dir() {
            "a directory"
        } else if md.len() > MAX_RUN_BYTES {
            return Err(format!(
                "{}: {} bytes, more than the {MAX_RUN_BYTES} a run's result may have (not one \
                 pts wrote: remove it, or use another -o DIR)",
                p.display(),
                md.len()
            ));
        } else {
            continue;
        };
        return Err(format!(
            "{}: {what}, not a regular file: pts reads its runs back only as regular files in \
             its -o DIR, not through links (remove it, or use another -o DIR)",
            p.display()
        ));
    }
    Ok(())
}

/// Run `rel`'s result (see [`kept`]), which must be there.
pub fn read(dir: &Path, rel: &str) -> Result<Metrics, String> {
    file(dir, rel).and_then(|f| metrics(&dir.join(rel), &f))
}

/// Run `rel`'s parsed result, which must be there.
fn file(dir: &Path, rel: &str) -> Result<results::ResultFile, String> {
    let path = dir.join(rel);
    let text = crate::safefs::read_own(dir, Path::new(rel), MAX_RUN_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .ok_or_else(|| format!("{}: missing (the run's result)", path.display()))?;
    results::parse(&String::from_utf8_lossy(&text)).map_err(|e| format!("{}: {e}", path.display()))
}

/// One run's numbers. A run that did no I/O (a stalled device, or a scaled round too
/// short to start one) measured zero, which the determination sees.
fn metrics(path: &Path, file: &results::ResultFile) -> Result<Metrics, String> {
    if file.jobs.is_empty() {
        return Err(format!("{}: no job in the result", path.display()));
    }
    let dirs = results::totals(file);
    let ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let bins = merged_bins(&dirs);
    Ok(Metrics {
        iops: dirs.iter().map(|d| d.iops).sum(),
        bw: dirs.iter().map(|d| d.bw_bytes).sum(),
        lat_mean_ns: dirs
            .iter()
            .map(|d| d.lat_mean_ns * d.total_ios as f64)
            .sum::<f64>()
            / ios.max(1) as f64,
        lat_max_ns: dirs.iter().map(|d| d.lat_max_ns).fold(0.0, f64::max),
        lat_p99999_ns: percentile_of_bins(&bins, 99.999),
        written: dirs
            .iter()
            .filter(|d| d.dir == "write")
            .map(|d| d.io_bytes)
            .sum(),
        runtime_ms: dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0),
    })
}

/// The response-time bins (nanoseconds → I/Os) of read and write together.
fn merged_bins(dirs: &[results::DirResult]) -> Vec<(u64, u64)> {
    let mut bins: std::collections::BTreeMap<u64, u64> = Default::default();
    for d in dirs {
        for &(v, c) in &d.bins {
            *bins.entry(v).or_default() += c;
        }
    }
    bins.into_iter().collect()
}

/// One run's response-time histogram: its JSON+ latency bins, read and write merged.
pub fn bins(dir: &Path, rel: &str) -> Result<Vec<(u64, u64)>, String> {
    Ok(merged_bins(&results::totals(&file(dir, rel)?)))
}

/// Response-time bins summed into buckets whose upper edges run 1, 2, 5, 10, 20, 50 … µs
/// (a histogram that reads on a log axis); empty buckets at either end are left out.
/// Each bucket is (upper edge in nanoseconds, I/Os).
pub fn log_buckets(bins: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut edges = vec![];
    let mut decade = 1_000u64;
    while decade <= 1_000_000_000_000 {
        edges.extend([decade, 2 * decade, 5 * decade]);
        decade *= 10;
    }
    let mut out: Vec<(u64, u64)> = edges.iter().map(|&e| (e, 0)).collect();
    for &(v, c) in bins {
        let i = edges.partition_point(|&e| e < v).min(edges.len() - 1);
        out[i].1 += c;
    }
    let first = out.iter().position(|b| b.1 > 0).unwrap_or(0);
    let last = out.iter().rposition(|b| b.1 > 0).map_or(0, |i| i + 1);
    out[first..last.max(first)].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_buckets_sum_bins_up_to_each_edge() {
        // 900 ns and 1 µs fall in "≤ 1 µs"; 1.5 µs in "≤ 2 µs"; 3 ms in "≤ 5 ms".
        let b = log_buckets(&[(900, 2), (1_000, 1), (1_500, 4), (3_000_000, 7)]);
        assert_eq!(b.first(), Some(&(1_000, 3)));
        assert_eq!(b[1], (2_000, 4));
        assert_eq!(b.last(), Some(&(5_000_000, 7)));
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 14);
        assert!(log_buckets(&[]).is_empty());
    }
}
