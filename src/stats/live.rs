//! Live counters shared between the job clones and the main process, for the status line
//! (`--eta`), periodic reports (`--status-interval`) and SIGUSR1 reports.
//!
//! The board is one anonymous shared mapping made before any clone is forked, so forked
//! processes and threads see it alike. Each clone owns a slot: its state letter, when its
//! I/O began, bytes and I/Os per direction (plain atomic stores per completion: no lock, no
//! syscall), and a buffer where it publishes a full snapshot of its statistics when the main
//! process asks for one (a generation counter it checks per completion) and when it ends.
//! The buffer is guarded by a sequence counter, so a reader never sees a half-written one.
//!
//! The main process registers a hook with [`set_hook`]; the runner's waiting loop calls
//! [`tick`], which runs it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Bytes of serialized statistics a slot can hold (pages are only touched when used).
pub const SNAP_CAP: usize = 1 << 20;
/// Bytes before a slot's snapshot buffer.
const HEAD: usize = 4096;
const STRIDE: usize = HEAD + SNAP_CAP;

/// The fixed part of a slot.
#[repr(C)]
pub struct SlotHead {
    /// The status map letter (`P`, `I`, `R`, `_`, …) as a `char` code; 0 is `P`.
    pub state: AtomicU32,
    /// Files the clone has open.
    pub files: AtomicU32,
    /// CLOCK_MONOTONIC ns when the clone began its I/O (0: not yet).
    pub start_ns: AtomicU64,
    /// Bytes the clone is expected to move (0: unknown).
    pub total_bytes: AtomicU64,
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    /// The snapshot generation the main process asked for.
    pub want: AtomicU64,
    /// The generation the buffer answers.
    pub answered: AtomicU64,
    /// Odd while the buffer is being written.
    pub seq: AtomicU64,
    /// Bytes of snapshot in the buffer (0: none yet).
    pub len: AtomicU64,
}

/// All the slots of a run.
pub struct Board {
    base: *mut u8,
    n: usize,
}

// SAFETY: the mapping is never unmapped; the heads are atomics and the buffers are only
// touched under the sequence protocol (one writer per slot, readers retry on change).
unsafe impl Sync for Board {}
// SAFETY: as above; the pointer stays valid in every thread.
unsafe impl Send for Board {}

static BOARD: OnceLock<Board> = OnceLock::new();
type Hook = Box<dyn FnMut() + Send>;
static HOOK: Mutex<Option<Hook>> = Mutex::new(None);

impl Board {
    fn new(n: usize) -> Option<Board> {
        let n = n.max(1);
        // SAFETY: an anonymous shared mapping with no address hint; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n * STRIDE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Board { base: p.cast(), n })
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the board has no slots (never: it has at least one).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The head of slot `i` (0-based; fio thread number - 1).
    pub fn head(&self, i: usize) -> Option<&SlotHead> {
        // SAFETY: i < n, so the head lies inside the mapping, which is zeroed (a valid
        // bit pattern for atomics) and lives as long as the process.
        (i < self.n).then(|| unsafe { &*(self.base.add(i * STRIDE) as *const SlotHead) })
    }

    fn buf(&self, i: usize) -> *mut u8 {
        // SAFETY: i < n was checked by the caller; the buffer follows the head.
        unsafe { self.base.add(i * STRIDE + HEAD) }
    }

    /// Asks every slot for a snapshot; returns the generation to wait for.
    pub fn request(&self) -> u64 {
        let mut g = 0;
        for i in 0..self.n {
            if let Some(h) = self.head(i) {
                g = g.max(h.want.load(Ordering::Relaxed) + 1);
            }
        }
        for i in 0..self.n {
            if let Some(h) = self.head(i) {
                h.want.store(g, Ordering::Release);
            }
        }
        g
    }

    /// The latest snapshot of slot `i`, if it published one.
    pub fn snapshot(&self, i: usize) -> Option<Vec<u8>> {
        let h = self.head(i)?;
        for _ in 0..100 {
            let s1 = h.seq.load(Ordering::Acquire);
            if s1 % 2 == 1 {
                std::thread::sleep(std::time::Duration::from_micros(200));
                continue;
            }
            let len = (h.len.load(Ordering::Acquire) as usize).min(SNAP_CAP);
            if len == 0 {
                return None;
            }
            let mut v = vec![0u8; len];
            // SAFETY: the buffer holds SNAP_CAP bytes; a concurrent write is detected by
            // the sequence check below and the copy is then thrown away.
            unsafe { std::ptr::copy_nonoverlapping(self.buf(i), v.as_mut_ptr(), len) };
            std::sync::atomic::fence(Ordering::Acquire);
            if h.seq.load(Ordering::Relaxed) == s1 {
                return Some(v);
            }
        }
        None
    }
}

/// Makes the board for `clones` clones, once per process (before any clone starts).
pub fn init(clones: usize) {
    if BOARD.get().is_none() {
        if let Some(b) = Board::new(clones) {
            let _ = BOARD.set(b);
        }
    }
}

/// The board, once [`init`] made it.
pub fn board() -> Option<&'static Board> {
    BOARD.get()
}

/// Registers the function [`tick`] runs (the live reporter).
pub fn set_hook(f: Hook) {
    if let Ok(mut h) = HOOK.lock() {
        *h = Some(f);
    }
}

/// Removes the hook.
pub fn clear_hook() {
    if let Ok(mut h) = HOOK.lock() {
        *h = None;
    }
}

/// Runs the hook, if any: the runner calls this while it waits for clones.
pub fn tick() {
    if let Ok(mut h) = HOOK.try_lock() {
        if let Some(f) = h.as_mut() {
            f();
        }
    }
}

/// The main process's view of a clone's life: about to start, and done.
pub fn set_state(thread_number: u64, letter: char) {
    if let Some(h) = board().and_then(|b| b.head(thread_number as usize - 1)) {
        h.state.store(letter as u32, Ordering::Relaxed);
    }
}

/// Before a clone starts: what it will move and how many files it has.
pub fn prepared(thread_number: u64, total_bytes: u64, files: u32) {
    if let Some(h) = board().and_then(|b| b.head(thread_number.max(1) as usize - 1)) {
        h.total_bytes.store(total_bytes, Ordering::Relaxed);
        h.files.store(files, Ordering::Relaxed);
        h.state.store('I' as u32, Ordering::Relaxed);
    }
}

/// A clone's handle on its slot, kept in its statistics.
#[derive(Clone, Copy)]
pub struct LiveSlot {
    index: usize,
    seen: u64,
    running: u32,
    /// The clone's CPU use when it started (for snapshots' cpu line).
    pub cpu_start: Option<super::cpu::Rusage>,
}

impl std::fmt::Debug for LiveSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LiveSlot({})", self.index)
    }
}

impl LiveSlot {
    /// The slot of clone `thread_number`, which does `letter` I/O (`/` while ramping).
    pub fn attach(thread_number: u64, letter: char, ramping: bool) -> Option<LiveSlot> {
        let b = board()?;
        let index = thread_number.checked_sub(1)? as usize;
        let h = b.head(index)?;
        h.start_ns
            .store(crate::run::worker::now_ns(), Ordering::Relaxed);
        h.state
            .store(if ramping { '/' } else { letter } as u32, Ordering::Relaxed);
        Some(LiveSlot {
            index,
            seen: h.want.load(Ordering::Relaxed),
            running: letter as u32,
            cpu_start: Some(super::cpu::Rusage::take(super::cpu::Who::Thread)),
        })
    }

    fn head(&self) -> &'static SlotHead {
        board()
            .and_then(|b| b.head(self.index))
            .expect("attached slots exist")
    }

    /// One completion: the direction's running totals. True when a snapshot is wanted.
    #[inline]
    pub fn count(&mut self, d: usize, bytes: u64, ios: u64) -> bool {
        let h = self.head();
        h.bytes[d].store(bytes, Ordering::Relaxed);
        h.ios[d].store(ios, Ordering::Relaxed);
        if h.state.load(Ordering::Relaxed) == '/' as u32 {
            h.state.store(self.running, Ordering::Relaxed);
        }
        h.want.load(Ordering::Relaxed) != self.seen
    }

    /// Publishes `bytes` (serialized statistics) as the answer to the latest request.
    pub fn publish(&mut self, bytes: &[u8]) {
        let h = self.head();
        let want = h.want.load(Ordering::Acquire);
        self.seen = want;
        let Some(b) = board() else { return };
        if bytes.len() <= SNAP_CAP {
            let s = h.seq.fetch_add(1, Ordering::AcqRel);
            std::sync::atomic::fence(Ordering::Release);
            // SAFETY: this clone is the slot's only writer; the length fits the buffer;
            // readers detect the odd sequence and retry.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.buf(self.index), bytes.len())
            };
            h.len.store(bytes.len() as u64, Ordering::Release);
            h.seq.store(s + 2, Ordering::Release);
        }
        h.answered.store(want, Ordering::Release);
    }

    /// The clone ended (`error`: with an error): its status letter.
    pub fn done(&self, error: bool) {
        let h = self.head();
        h.state
            .store(if error { 'X' } else { '_' } as u32, Ordering::Relaxed);
    }
}
