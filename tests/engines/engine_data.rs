//! Every data-moving engine, driven directly through the `Engine` trait: reads return the
//! file's bytes at the right offsets, writes land where they were aimed, and engine options
//! have the effect they promise where it can be seen (registered files, fixed buffers, the
//! SQPOLL kernel thread and its CPU).
use crate::common;

use iobench::api::engine::registry::EngineVisitor;
use iobench::api::engine::uring::{Uring, UringOpts};
use iobench::api::engine::{Engine, EngineConfig, EngineFile, IoUnit, Op, Queued, Setup};
use iobench::api::job::Ddir;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;

const FILE_SIZE: usize = 1 << 20;
const BS: usize = 16 << 10;
const DEPTH: usize = 4;

/// A byte pattern that differs at every offset (so a wrong offset shows).
fn pattern(seed: u8) -> Vec<u8> {
    (0..FILE_SIZE)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed)
        .collect()
}

/// Page-aligned buffers for the pool, freed on drop.
struct Bufs(*mut u8, std::alloc::Layout);
impl Bufs {
    fn new() -> Self {
        let l = std::alloc::Layout::from_size_align(DEPTH * BS, 4096).unwrap();
        // SAFETY: non-zero layout, freed in Drop.
        Bufs(unsafe { std::alloc::alloc_zeroed(l) }, l)
    }
    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: i < DEPTH.
        unsafe { self.0.add(i * BS) }
    }
}
impl Drop for Bufs {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout; no I/O in flight.
        unsafe { std::alloc::dealloc(self.0, self.1) }
    }
}

/// Runs `offsets` as I/Os in direction `ddir` through engine `e` on `fd`, keeping up to
/// DEPTH in flight; calls `check(offset, buffer)` on each completed read and fills each
/// write's buffer from `src` first. Returns the number of completed I/Os.
fn drive<E: Engine>(
    mut e: E,
    fd: i32,
    unit_fd: i32,
    ddir: Ddir,
    offsets: &[u64],
    src: &[u8],
    check: &mut dyn FnMut(u64, &[u8]),
) -> Result<usize, String> {
    let bufs = Bufs::new();
    let files = [EngineFile {
        fd,
        size: FILE_SIZE as u64,
        writable: true,
    }];
    e.setup(&Setup {
        depth: DEPTH as u32,
        files: &files,
        names: &[],
        buf_base: bufs.0,
        slot_len: BS,
    })
    .map_err(|x| x.to_string())?;
    let mut pool: Vec<IoUnit> = (0..DEPTH)
        .map(|i| IoUnit::new(i as u32, bufs.slot(i)))
        .collect();
    let mut free: Vec<u32> = (0..DEPTH as u32).collect();
    let mut done = 0;
    let mut inflight = 0;
    let mut next = 0;
    let mut finish = |u: &IoUnit, res: i64| -> Result<(), String> {
        if res != BS as i64 {
            return Err(format!("I/O at {} returned {res}", u.offset));
        }
        if ddir == Ddir::Read {
            // SAFETY: the unit's buffer holds BS bytes.
            check(u.offset, unsafe { std::slice::from_raw_parts(u.buf, BS) });
        }
        Ok(())
    };
    while done < offsets.len() {
        while next < offsets.len() && !free.is_empty() {
            let s = free.pop().unwrap() as usize;
            let u = &mut pool[s];
            u.op = Op::Rw(ddir);
            u.file = 0;
            u.fd = unit_fd;
            u.offset = offsets[next];
            u.len = BS;
            if ddir == Ddir::Write {
                let o = u.offset as usize;
                // SAFETY: the unit's buffer holds BS bytes.
                unsafe { std::ptr::copy_nonoverlapping(src[o..o + BS].as_ptr(), u.buf, BS) };
            }
            // SAFETY: slot `s` came from `free` (not in flight) and its buffer is its own BS
            // bytes of the pool's memory, which outlives the engine's I/O.
            match unsafe { e.queue(u) }.map_err(|x| x.to_string())? {
                Queued::Completed => {
                    let u = pool[s];
                    finish(&u, u.result)?;
                    free.push(s as u32);
                    done += 1;
                }
                Queued::Queued => inflight += 1,
                Queued::Busy => {
                    free.push(s as u32);
                    break;
                }
            }
            next += 1;
        }
        e.commit().map_err(|x| x.to_string())?;
        if inflight > 0 {
            let n = e.getevents(1, inflight).map_err(|x| x.to_string())?;
            for i in 0..n {
                let c = e.event(i);
                let u = pool[c.slot as usize];
                finish(&u, c.result)?;
                free.push(c.slot);
            }
            inflight -= n;
            done += n;
        }
    }
    Ok(done)
}

/// A shuffled list of every block's offset.
fn offsets() -> Vec<u64> {
    let n = FILE_SIZE / BS;
    let mut v: Vec<u64> = (0..n as u64).map(|i| i * BS as u64).collect();
    let mut x = 0x9e37_79b9u32;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.swap(i, x as usize % (i + 1));
    }
    v
}

struct Reads<'a> {
    fd: i32,
    unit_fd: i32,
    ddir: Ddir,
    data: &'a [u8],
}
impl EngineVisitor for Reads<'_> {
    type Out = Result<usize, String>;
    fn visit<E: Engine>(self, e: E) -> Self::Out {
        let data = self.data;
        let mut bad = None;
        let r = drive(
            e,
            self.fd,
            self.unit_fd,
            self.ddir,
            &offsets(),
            data,
            &mut |off, buf| {
                let o = off as usize;
                if buf != &data[o..o + BS] && bad.is_none() {
                    bad = Some(off);
                }
            },
        );
        if let Some(off) = bad {
            return Err(format!(
                "read at {off} returned other bytes than the file's"
            ));
        }
        r
    }
}

/// Each engine reads a file written by the test, then writes a new pattern that the test
/// reads back from the file.
fn round_trip(config: EngineConfig, label: &str) {
    let dir = common::scratch(&format!("engine_data_{label}"));
    let path = dir.join("f");
    let first = pattern(0);
    std::fs::write(&path, &first).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let fd = f.as_raw_fd();
    let n = config
        .visit(Reads {
            fd,
            unit_fd: fd,
            ddir: Ddir::Read,
            data: &first,
        })
        .unwrap_or_else(|e| panic!("{label} read: {e}"));
    assert_eq!(n, FILE_SIZE / BS, "{label}: every read completed");
    let second = pattern(0x5a);
    config
        .visit(Reads {
            fd,
            unit_fd: fd,
            ddir: Ddir::Write,
            data: &second,
        })
        .unwrap_or_else(|e| panic!("{label} write: {e}"));
    drop(f);
    let back = std::fs::read(&path).unwrap();
    assert!(back == second, "{label}: the file holds what was written");
}

fn config(name: &str, options: &[(&str, &str)]) -> EngineConfig {
    EngineConfig::from_options(name, options).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_engine_reads_the_files_bytes_and_writes_where_aimed() {
    for name in [
        "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
    ] {
        round_trip(config(name, &[]), name);
    }
}

#[test]
fn engine_options_keep_the_data_right() {
    let cases: [(&str, &[(&str, &str)]); 6] = [
        ("uring_fixedbufs", &[("fixedbufs", "1")]),
        ("uring_registerfiles", &[("registerfiles", "1")]),
        ("uring_vectored", &[("nonvectored", "0")]),
        ("uring_force_async", &[("force_async", "2")]),
        (
            "uring_all",
            &[
                ("fixedbufs", "1"),
                ("registerfiles", "1"),
                ("sqthread_poll", "1"),
                ("nonvectored", "1"),
            ],
        ),
        ("uring_sqpoll", &[("sqthread_poll", "1")]),
    ];
    for (label, o) in cases {
        round_trip(config("io_uring", o), label);
    }
    round_trip(
        config("libaio", &[("userspace_reap", "1")]),
        "libaio_userspace_reap",
    );
    round_trip(config("mmap", &[("direct", "1")]), "mmap_direct");
}

#[test]
fn registerfiles_addresses_the_file_by_its_registered_index() {
    // With registerfiles the unit's descriptor is not used at all: a bogus one still works.
    let dir = common::scratch("engine_data_regfiles");
    let path = dir.join("f");
    let data = pattern(7);
    std::fs::write(&path, &data).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let n = config("io_uring", &[("registerfiles", "1")])
        .visit(Reads {
            fd: f.as_raw_fd(),
            unit_fd: -1,
            ddir: Ddir::Read,
            data: &data,
        })
        .expect("registered file used");
    assert_eq!(n, FILE_SIZE / BS);
    // Without it the engine registers the files anyway (it spares the kernel a descriptor
    // lookup per I/O), so the bogus descriptor still reads the file.
    let n = config("io_uring", &[])
        .visit(Reads {
            fd: f.as_raw_fd(),
            unit_fd: -1,
            ddir: Ddir::Read,
            data: &data,
        })
        .expect("files registered without registerfiles too");
    assert_eq!(n, FILE_SIZE / BS);
}

#[test]
fn fixedbufs_uses_the_registered_buffers() {
    // A fixed-buffer read must name memory inside the registered region: one outside it
    // is refused by the kernel (EFAULT), which shows the registered buffers are in use.
    let dir = common::scratch("engine_data_fixedbufs");
    let path = dir.join("f");
    std::fs::write(&path, pattern(1)).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let bufs = Bufs::new();
    let mut e = Uring::new(UringOpts {
        fixedbufs: true,
        ..UringOpts::default()
    });
    let files = [EngineFile {
        fd: f.as_raw_fd(),
        size: FILE_SIZE as u64,
        writable: false,
    }];
    e.setup(&Setup {
        depth: DEPTH as u32,
        files: &files,
        names: &[],
        buf_base: bufs.0,
        slot_len: BS,
    })
    .unwrap();
    let mut outside = vec![0u8; BS];
    let mut u = IoUnit::new(0, outside.as_mut_ptr());
    u.op = Op::Rw(Ddir::Read);
    u.fd = f.as_raw_fd();
    u.len = BS;
    // SAFETY: `outside` is BS writable bytes that live until the completion is reaped
    // below (the engine refuses it: it is not in its registered buffers).
    assert_eq!(unsafe { e.queue(&mut u) }.unwrap(), Queued::Queued);
    assert_eq!(e.commit().unwrap(), 1);
    assert_eq!(e.getevents(1, 1).unwrap(), 1);
    assert_eq!(e.event(0).result, -(libc::EFAULT as i64));
    let mut inside = IoUnit::new(1, bufs.slot(1));
    inside.op = Op::Rw(Ddir::Read);
    inside.fd = f.as_raw_fd();
    inside.len = BS;
    // SAFETY: slot 1's buffer is BS bytes of `bufs`, alive until it is reaped below.
    unsafe { e.queue(&mut inside) }.unwrap();
    e.commit().unwrap();
    assert_eq!(e.getevents(1, 1).unwrap(), 1);
    assert_eq!(e.event(0).result, BS as i64);
}

/// The kernel's SQPOLL threads of this process (name, allowed CPUs).
fn sqpoll_threads() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        let name = status
            .lines()
            .find_map(|l| l.strip_prefix("Name:"))
            .unwrap_or("")
            .trim()
            .to_string();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string();
        if name.starts_with("iou-sqp") {
            out.push((name, cpus));
        }
    }
    out
}

#[test]
fn sqthread_poll_starts_a_kernel_thread_on_the_asked_cpu() {
    let dir = common::scratch("engine_data_sqpoll");
    let path = dir.join("f");
    std::fs::write(&path, pattern(2)).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let bufs = Bufs::new();
    let files = [EngineFile {
        fd: f.as_raw_fd(),
        size: FILE_SIZE as u64,
        writable: false,
    }];
    let mut e = Uring::new(UringOpts {
        sqthread_poll: true,
        sqthread_poll_cpu: Some(0),
        ..UringOpts::default()
    });
    e.setup(&Setup {
        depth: DEPTH as u32,
        files: &files,
        names: &[],
        buf_base: bufs.0,
        slot_len: BS,
    })
    .unwrap();
    // The thread pins itself once it runs: give it a moment.
    let mut now = sqpoll_threads();
    for _ in 0..100 {
        if now.iter().any(|(_, cpus)| cpus == "0") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        now = sqpoll_threads();
    }
    // Other tests in this process may run SQPOLL rings of their own, unpinned.
    assert!(
        now.iter().any(|(_, cpus)| cpus == "0"),
        "an SQPOLL thread pinned to CPU 0: {now:?}"
    );
    drop(e);
}
