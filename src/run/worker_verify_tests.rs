//! The worker's verify pass over a fault-injecting in-memory engine: which failures end
//! the pass and which are passed over. fio 3.33 continues past a verify mismatch under
//! `continue_on_error=verify`, but a read that fails or returns nothing still ends the
//! job, and a short read has its rest read again.

use super::{Worker, WorkerCtx};
use crate::defs::Ddir;
use crate::engine::{Engine, EngineFile, IoUnit, Op, Queued};
use crate::job::Job;
use crate::stats::JobStats;
use crate::verify::Contents;

/// How the engine spoils the read at `FAULT_AT`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    Eio,
    Nothing,
    Half,
}

const FAULT_AT: u64 = 8192;
const BS: usize = 4096;
const BLOCKS: u64 = 16;

/// A synchronous engine over a 64 KiB memory disk.
struct MemDisk {
    disk: Vec<u8>,
    fault: Fault,
    reads: usize,
}

impl Engine for MemDisk {
    unsafe fn queue(&mut self, io: &mut IoUnit) -> std::io::Result<Queued> {
        let at = io.offset as usize;
        match io.op {
            Op::Rw(Ddir::Write) => {
                // SAFETY: the unit's buffer holds `len` bytes.
                let b = unsafe { std::slice::from_raw_parts(io.buf, io.len) };
                self.disk[at..at + io.len].copy_from_slice(b);
                io.result = io.len as i64;
            }
            Op::Rw(Ddir::Read) => {
                self.reads += 1;
                let mut n = io.len;
                if io.offset == FAULT_AT {
                    match self.fault {
                        Fault::Eio => {
                            io.result = -(libc::EIO as i64);
                            return Ok(Queued::Completed);
                        }
                        Fault::Nothing => n = 0,
                        Fault::Half => n = io.len / 2,
                        Fault::None => {}
                    }
                }
                // SAFETY: the unit's buffer holds `len >= n` bytes.
                let b = unsafe { std::slice::from_raw_parts_mut(io.buf, n) };
                b.copy_from_slice(&self.disk[at..at + n]);
                io.result = n as i64;
            }
            _ => io.result = 0,
        }
        Ok(Queued::Completed)
    }
}

fn job(extra: &[&str]) -> Job {
    let mut all = vec![
        "--name=x",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--verify=crc32c",
    ];
    all.extend_from_slice(extra);
    let inv = crate::cli::parse_args(&all).expect("arguments parse");
    crate::job::resolve(&inv.jobs[0]).expect("job resolves")
}

/// Writes 16 blocks, corrupts the one at 4096, then runs the worker's verify pass with
/// `fault`. Returns the pass's result, the reads issued and the job's stats.
fn pass(j: &Job, fault: Fault) -> (Result<(), (i32, String)>, usize, JobStats) {
    let mut buf = vec![0u8; BS];
    let pool = vec![IoUnit::new(0, buf.as_mut_ptr())];
    let eng = MemDisk {
        disk: vec![0; BS * BLOCKS as usize],
        fault: Fault::None,
        reads: 0,
    };
    let size = BS as u64 * BLOCKS;
    let names = ["f".to_string()];
    let files = [EngineFile {
        fd: -1,
        size,
        writable: true,
    }];
    let targets = [crate::run::files::Target {
        path: "f".to_string(),
        kind: crate::run::files::Kind::Regular,
        size,
        setup_size: size,
        created: false,
        lay_out_to: 0,
        planned: 0,
        cache_range: None,
    }];
    let extents = [crate::gen::FileExtent::new("f", size)];
    let cx = WorkerCtx {
        job: j,
        fds: &[-1],
        files: &files,
        names: &names,
        targets: &targets,
        lazy: false,
        gen: crate::gen::Generator::with_thread_number(j, 0, 1, &extents).expect("generator"),
        stats: JobStats::new("x", 0, Default::default()),
    };
    let data = Contents::new(j, 0, 1);
    let mut w = Worker::new(eng, cx, data, pool, BS).expect("worker");
    for i in 0..BLOCKS {
        let u = &mut w.pool[0];
        u.op = Op::Rw(Ddir::Write);
        u.offset = i * BS as u64;
        u.len = BS;
        w.data.before_queue(u);
        // SAFETY: the one unit's buffer is `buf` (BS bytes, alive for the whole pass) and
        // the memory disk completes it in the call.
        unsafe { w.engine.queue(u) }.unwrap();
        w.data.on_complete(u, "f").unwrap();
    }
    w.engine.disk[4096 + 100] ^= 0xff;
    w.engine.fault = fault;
    let r = w.verify_reads().unwrap();
    assert_eq!(
        w.pool[0].buf,
        buf.as_mut_ptr(),
        "the unit keeps its own buffer"
    );
    assert_eq!(w.free, [0], "the slot is free again");
    (r, w.engine.reads, w.cx.stats)
}

#[test]
fn continue_on_error_verify_passes_mismatches_only() {
    let j = job(&["--continue_on_error=verify"]);
    // The mismatch at 4096 is counted and the pass reads on to the end.
    let (r, reads, st) = pass(&j, Fault::None);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!((reads, st.total_err_count), (16, 1));
    // A failed read ends the pass there, with the read's own error.
    let (r, reads, _) = pass(&j, Fault::Eio);
    assert_eq!(r.unwrap_err().0, libc::EIO);
    assert_eq!(reads, 3);
    // So does a read that returns nothing (fio's "full resid").
    let (r, reads, _) = pass(&j, Fault::Nothing);
    let (errno, text) = r.unwrap_err();
    assert_eq!((errno, reads), (libc::EIO, 3), "{text}");
}

#[test]
fn a_short_verify_read_is_completed_not_failed() {
    let j = job(&["--continue_on_error=verify"]);
    let (r, reads, st) = pass(&j, Fault::Half);
    assert!(r.is_ok(), "{r:?}");
    // The block at 8192 took two reads (half, then the rest) and checked clean.
    assert_eq!((reads, st.total_err_count), (17, 1));
    assert_eq!(st.dir[Ddir::Read as usize].short, 1);
}

#[test]
fn without_continue_on_error_the_first_mismatch_ends_the_pass() {
    let (r, reads, _) = pass(&job(&[]), Fault::None);
    assert_eq!(r.unwrap_err().0, libc::EILSEQ);
    assert_eq!(reads, 2);
}

#[test]
fn continue_on_error_read_passes_a_failed_read() {
    // A policy covering read errors lets the pass read on past the EIO, but the
    // mismatch is not covered.
    let (r, reads, _) = pass(&job(&["--continue_on_error=read"]), Fault::Eio);
    assert_eq!(r.unwrap_err().0, libc::EILSEQ);
    assert_eq!(reads, 2);
    let (r, reads, st) = pass(&job(&["--continue_on_error=all"]), Fault::Eio);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!((reads, st.total_err_count), (16, 2));
}
