//! The legacy-AIO submitter of `iobench peak` (-a1): the same loop as t/io_uring's aio mode,
//! built on iobench's own libaio engine so that the peak tool measures the code the benchmark
//! runs.

use super::args::PeakArgs;
use super::clock::Clock;
use super::target::{OffsetPicker, Target};
use super::uring::Buffers;
use super::{Counters, LatencyLog};
use crate::defs::Ddir;
use crate::engine::libaio::{Libaio, LibaioOpts};
use crate::engine::{Engine, EngineFile, IoUnit, Op, Queued, Setup};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs one kernel-AIO submitter until `stop` is set or an I/O fails.
pub fn run(
    a: &PeakArgs,
    target: &Target,
    counters: &Counters,
    stop: &AtomicBool,
    clock: &Clock,
    lat: &mut LatencyLog,
    seed: u64,
) -> io::Result<()> {
    // Like t/io_uring: warn about what legacy AIO cannot do and carry on without it.
    let first = counters.first();
    if first && a.polled {
        eprintln!("aio does not support polled IO");
    }
    if first && (a.fixedbufs || a.register_files) {
        eprintln!("aio does not support registered files or buffers");
    }
    let depth = a.depth as usize;
    let bufs = Buffers::new(depth, a.bs as usize)?;
    let mut engine = Libaio::new(LibaioOpts::default());
    let files = [EngineFile {
        fd: target.fd,
        size: target.size,
        writable: false,
    }];
    let stride = (a.bs as usize).next_multiple_of(4096);
    engine
        .setup(&Setup {
            depth: a.depth,
            files: &files,
            names: &[],
            buf_base: bufs.at(0),
            slot_len: stride,
        })
        .map_err(|e| io::Error::new(e.kind(), format!("queue setup failed: {e}")))?;
    if first {
        say!(
            "polled=0, fixedbufs=0{}, register_files=0, buffered={}, QD={}",
            a.dma_suffix(),
            (!a.direct) as u8,
            a.depth
        );
        say!("Engine=aio");
    }

    let mut picker = OffsetPicker::new(target.size, a.bs as u64, a.random, seed);
    let mut units: Vec<IoUnit> = (0..depth as u32)
        .map(|s| IoUnit::new(s, bufs.at(s as usize)))
        .collect();
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut inflight = 0usize;
    let (mut submitted, mut calls, mut reaped_total) = (0u64, 0u64, 0u64);
    let batch_submit = a.batch_submit as usize;
    let batch_complete = a.batch_complete as usize;
    let track = a.track_latency;

    while !stop.load(Ordering::Relaxed) {
        let mut prepped = 0usize;
        while prepped < batch_submit && inflight + prepped < depth {
            let Some(slot) = free.pop() else { break };
            let u = &mut units[slot as usize];
            u.op = Op::Rw(Ddir::Read);
            u.fd = target.fd;
            u.offset = picker.next_offset();
            u.len = a.bs as usize;
            u.start_ns = if track { clock.ticks() } else { 0 };
            // SAFETY: `u` is a free slot (popped from `free`, so not in flight) whose
            // buffer is its own `bs`-byte region of `bufs`, which outlives the loop; the
            // loop reaps every unit before it returns.
            match unsafe { engine.queue(u) }? {
                Queued::Queued => prepped += 1,
                Queued::Completed | Queued::Busy => {
                    free.push(slot);
                    break;
                }
            }
        }
        if prepped > 0 {
            let n = engine.commit()?;
            calls += 1;
            submitted += n as u64;
            inflight += n;
        }
        // Like t/io_uring: wait only when no new batch could be added.
        let to_wait = if prepped > 0 && inflight < depth {
            0
        } else {
            inflight.min(batch_complete)
        };
        if to_wait == 0 {
            continue;
        }
        let got = engine.getevents(to_wait, to_wait)?;
        calls += 1;
        let now = if track { clock.ticks() } else { 0 };
        for i in 0..got {
            let c = engine.event(i);
            if c.result < 0 {
                let err = io::Error::from_raw_os_error((-c.result) as i32);
                return Err(io::Error::new(err.kind(), format!("I/O failed: {err}")));
            }
            if track {
                let started = units[c.slot as usize].start_ns;
                lat.add(clock.ticks_to_ns(now.saturating_sub(started)));
            }
            free.push(c.slot);
        }
        inflight -= got;
        reaped_total += got as u64;
        counters.publish(submitted, calls, reaped_total);
    }
    Ok(())
}
