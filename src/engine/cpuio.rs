//! cpuio: burns CPU time instead of doing I/O (fio's CPU cycle burner engine), to load
//! the machine alongside I/O jobs. Each "I/O" moves no data: it busies the CPU for
//! `cpuchunks` microseconds (an empty loop, or `cpumode=qsort`'s sorting), and the job then
//! thinks for as long as makes the busy share `cpuload` percent. Its latency samples are
//! the busy periods, its I/O counts the periods, and it reports no bytes, as fio's does.
//! `exit_on_io_done` ends it once every job that does I/O has finished.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::io;
use std::sync::OnceLock;

const CPUMODE_CHOICES: &[(&str, &str)] = &[("noop", "empty loop"), ("qsort", "sorting")];

pub const CPULOAD: OptDef = opt(
    "cpuload",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Busy the CPU this percentage of the time",
)
.cat(C::Engine)
.engines(&["cpuio"]);

pub const CPUCHUNKS: OptDef = opt(
    "cpuchunks",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Length in usec of each busy period",
)
.def("50000")
.cat(C::Engine)
.engines(&["cpuio"])
.parent("cpuload");

pub const CPUMODE: OptDef = opt(
    "cpumode",
    K::Choice(CPUMODE_CHOICES),
    "What the CPU is kept busy with",
)
.def("noop")
.cat(C::Engine)
.engines(&["cpuio"]);

pub const EXIT_ON_IO_DONE: OptDef = opt(
    "exit_on_io_done",
    K::Bool,
    "Stop once the I/O jobs have finished",
)
.def("0")
.cat(C::Engine)
.engines(&["cpuio"]);

/// How the CPU is kept busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuMode {
    /// An empty loop for `cpuchunks` microseconds.
    Noop,
    /// fio's sorting stress: four sorts of 256 Ki integers; the pause that follows is sized
    /// from how long they took.
    Qsort,
}

/// cpuio's options, read once.
#[derive(Debug, Clone)]
pub struct CpuioOpts {
    pub load: u32,
    pub chunk_us: u64,
    pub mode: CpuMode,
    pub exit_on_io_done: bool,
    /// The job's name, for the line fio prints when the engine starts.
    pub job: String,
}

/// Integers fio's qsort mode sorts (256 Ki of them).
const QSORT_LEN: usize = 256 << 10;

/// The CPU burner.
pub struct Cpuio {
    o: CpuioOpts,
    /// The data the qsort mode sorts (empty in noop mode).
    data: Vec<i32>,
    /// The pause after each busy period, in microseconds.
    think_us: u64,
    done: bool,
}

impl Cpuio {
    /// The pause that makes a busy period of `busy_us` the `load` share of the time.
    fn think_for(&self, busy_us: u64) -> u64 {
        busy_us * u64::from(100 - self.o.load) / u64::from(self.o.load)
    }

    /// fio's sorts: ascending, descending, by byte, descending again.
    fn sort_round(&mut self) {
        self.data.sort_unstable();
        self.data.sort_unstable_by(|a, b| b.cmp(a));
        // Reorder by the bytes' values, as fio's byte-wise pass does.
        let mut bytes: Vec<u8> = self.data.iter().flat_map(|v| v.to_ne_bytes()).collect();
        bytes.sort_unstable();
        for (v, c) in self.data.iter_mut().zip(bytes.chunks_exact(4)) {
            *v = i32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        }
        self.data.sort_unstable_by(|a, b| b.cmp(a));
    }
}

/// Whether a job that does I/O is pending or running, as the runner answers it (it
/// owns the status board); set before the workers start (forked workers inherit it).
static IO_JOBS_ACTIVE: OnceLock<fn() -> bool> = OnceLock::new();

/// Notes how to ask whether any I/O job is still pending or running.
pub fn note_io_probe(probe: fn() -> bool) {
    let _ = IO_JOBS_ACTIVE.set(probe);
}

/// True while a job that does I/O is pending or running (fio's
/// `fio_running_or_pending_io_threads`).
fn io_jobs_active() -> bool {
    IO_JOBS_ACTIVE.get().is_some_and(|probe| probe())
}

impl Engine for Cpuio {
    fn setup(&mut self, _: &Setup<'_>) -> io::Result<()> {
        // fio reports the engine as setting up while it prepares (qsort's data).
        crate::debug::setting_up(|| {
            let mode = match self.o.mode {
                CpuMode::Noop => "noop",
                CpuMode::Qsort => "qsort",
            };
            if self.o.mode == CpuMode::Qsort {
                // fio's multiply-with-carry stream, from its fixed seed.
                let (mut z, mut w) = (362_436_069u32, 521_288_629u32);
                self.data = (0..QSORT_LEN)
                    .map(|_| {
                        z = 36969u32.wrapping_mul(z & 0xffff).wrapping_add(z >> 16);
                        w = 18000u32.wrapping_mul(w & 0xffff).wrapping_add(w >> 16);
                        (z << 16).wrapping_add(w) as i32
                    })
                    .collect();
            }
            println!(
                "{} ({mode}): ioengine=cpuio, cpuload={}, cpucycle={}",
                self.o.job, self.o.load, self.o.chunk_us
            );
            Ok(())
        })
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if self.o.exit_on_io_done && !io_jobs_active() {
            self.done = true;
            return Ok(Queued::Busy);
        }
        // No data moves: the unit carries no bytes.
        io.len = 0;
        io.result = 0;
        match self.o.mode {
            CpuMode::Noop => {
                let t0 = crate::clock::now_ns();
                let until = t0 + self.o.chunk_us * 1000;
                while crate::clock::now_ns() < until {
                    std::hint::spin_loop();
                }
            }
            CpuMode::Qsort => {
                let t0 = crate::clock::now_ns();
                self.sort_round();
                let took_us = (crate::clock::now_ns() - t0) / 1000;
                self.think_us = self.think_for(took_us);
            }
        }
        Ok(Queued::Completed)
    }

    fn think_us(&self) -> Option<u64> {
        Some(self.think_us)
    }

    fn finished(&self) -> bool {
        self.done
    }
}

impl super::spec::Declared for Cpuio {
    type Opts = CpuioOpts;
    const SPECS: &'static [Spec] = &[Spec::new(
        "cpuio",
        "burns CPU time, does no I/O",
        Flags {
            diskless: true,
            fake_files: true,
            opens_own_files: true,
            no_offload: true,
            no_io: true,
            ..Flags::SYNC
        },
    )
    .options(&[CPULOAD, CPUCHUNKS, CPUMODE, EXIT_ON_IO_DONE])];
    fn configure(_: &'static Spec, r: &Reader, _: &JobFacts) -> Result<CpuioOpts, JobError> {
        let load = r.num(&CPULOAD)?;
        if load <= 0 {
            return Err(r.invalid(
                &CPULOAD,
                "ioengine=cpuio needs cpuload= (the percentage of CPU to use, 1-100)",
            ));
        }
        let chunk = r.num(&CPUCHUNKS)?;
        if chunk < 0 {
            return Err(r.invalid(
                &CPUCHUNKS,
                format!("{chunk} is not a number of microseconds"),
            ));
        }
        let mode = match r.choice(&CPUMODE).as_deref() {
            None | Some("noop") => CpuMode::Noop,
            Some("qsort") => CpuMode::Qsort,
            Some(o) => return Err(r.invalid(&CPUMODE, format!("'{o}' is not one of noop, qsort"))),
        };
        Ok(CpuioOpts {
            load: load.min(100) as u32,
            chunk_us: chunk as u64,
            mode,
            exit_on_io_done: r.bool(&EXIT_ON_IO_DONE)?,
            job: r.raw.name.clone(),
        })
    }
    fn build(o: &CpuioOpts) -> Self {
        let mut e = Cpuio {
            o: o.clone(),
            data: Vec::new(),
            think_us: 0,
            done: false,
        };
        e.think_us = e.think_for(o.chunk_us);
        e
    }
}
