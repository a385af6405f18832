//! Snapshots of a running clone's statistics, for the reports printed while jobs run
//! (`--status-interval`, SIGUSR1). The main process asks through the board
//! (`board::request`); each clone notices between two I/Os (`Slot::wanted`, one relaxed
//! load) and answers here with its statistics as they stand, serialized into its slot's
//! shared buffer. Processes and threads answer alike, since the board is shared memory.

use super::{cpu, JobStats};

/// Publishes `stats` as they stand after `run_ns` of measured time (0 while ramping),
/// with run times and CPU use up to now, as the answer to the main process's request.
/// Cold: runs once per request, never per I/O.
#[cold]
pub fn answer(stats: &mut JobStats, run_ns: u64) {
    let Some(slot) = stats.live else { return };
    let saved_run = stats.total_run_ms;
    let saved_dir = [
        stats.dir[0].runtime_ms,
        stats.dir[1].runtime_ms,
        stats.dir[2].runtime_ms,
    ];
    let saved_cpu = cpu::CpuUsage {
        usr_ms: stats.usr_ms,
        sys_ms: stats.sys_ms,
        ctx: stats.ctx,
        majf: stats.majf,
        minf: stats.minf,
    };
    let ms = run_ns / 1_000_000;
    stats.total_run_ms = ms;
    for d in &mut stats.dir {
        if d.ios > 0 {
            d.runtime_ms = ms.max(1);
        }
    }
    if let Some(start) = &stats.cpu_start {
        stats.set_cpu(cpu::Rusage::take(cpu::Who::Thread).since(start));
    }
    let bytes = serde_json::to_vec(&*stats).unwrap_or_default();
    stats.total_run_ms = saved_run;
    for (d, ms) in stats.dir.iter_mut().zip(saved_dir) {
        d.runtime_ms = ms;
    }
    stats.set_cpu(saved_cpu);
    super::board::publish(slot, &bytes);
}

/// Reads clone `i`'s (0-based) latest snapshot back into statistics.
pub fn read(i: usize) -> Option<JobStats> {
    let bytes = super::board::read_snapshot(i)?;
    serde_json::from_slice(&bytes).ok()
}
