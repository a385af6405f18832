//! SIGINT/SIGTERM handling. In the main process the first signal prints fio's
//! "terminating on signal N" line and asks every worker to stop (the results of the time
//! that ran are still printed); a second one exits at once (not in a server's run child:
//! [`repeats_are_one`]). Worker processes only stop.
//! SIGUSR1 asks for a report of the run as it stands (see `run::interim`); the run goes on.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

static SIGNALLED: AtomicI32 = AtomicI32::new(0);
static COUNT: AtomicU32 = AtomicU32::new(0);
static IS_WORKER: AtomicBool = AtomicBool::new(false);
/// Set by SIGUSR1, taken by the collector's loop.
static USR1: AtomicBool = AtomicBool::new(false);
/// Set by SIGHUP once [`stop_on_hangup`] made it a stop signal.
static HUNG_UP: AtomicBool = AtomicBool::new(false);
/// Where the "terminating" line goes: stdout with the normal report (as fio prints it),
/// stderr when stdout carries JSON or terse, so machine output stays parseable.
static NOTICE_FD: AtomicI32 = AtomicI32::new(1);

/// Sends the "terminating on signal N" line to stdout (`true`) or stderr.
pub fn notice_on_stdout(stdout: bool) {
    NOTICE_FD.store(if stdout { 1 } else { 2 }, Ordering::Relaxed);
}

/// The exit status fio uses after it was stopped by a signal.
pub const SIGNAL_EXIT: u8 = 128;

/// The signal that stopped the run, if one did.
pub fn signalled() -> Option<i32> {
    match SIGNALLED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Set in a server's run child: a repeated stop signal is the first request again.
static REPEATS_ARE_ONE: AtomicBool = AtomicBool::new(false);

/// Makes later stop signals repeat the first request instead of exiting at once. A
/// server's run child asks this: it has no terminal (no user presses Ctrl-C twice), and
/// when its server is killed the kernel sends the child's parent-death signal once for
/// each server thread it is handed to as they exit; the run must still end in order
/// and remove its private directory. A run that will not stop is ended with SIGKILL.
pub fn repeats_are_one() {
    REPEATS_ARE_ONE.store(true, Ordering::Relaxed);
}

extern "C" fn on_signal(sig: libc::c_int) {
    super::request_stop();
    if sig == libc::SIGHUP {
        HUNG_UP.store(true, Ordering::Relaxed);
    }
    if IS_WORKER.load(Ordering::Relaxed) {
        return;
    }
    let first = SIGNALLED.swap(sig, Ordering::Relaxed) == 0;
    if !first && REPEATS_ARE_ONE.load(Ordering::Relaxed) {
        return;
    }
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    if n >= 1 {
        // SAFETY: _exit is async-signal-safe; workers die with us (PR_SET_PDEATHSIG).
        unsafe { libc::_exit(SIGNAL_EXIT as i32) };
    }
    // Format "\niobench: terminating on signal N\n" without allocating.
    let mut buf = [0u8; 64];
    let head = b"\niobench: terminating on signal ";
    buf[..head.len()].copy_from_slice(head);
    let mut len = head.len();
    let mut digits = [0u8; 10];
    let mut v = sig as u32;
    let mut nd = 0;
    loop {
        digits[nd] = b'0' + (v % 10) as u8;
        nd += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in (0..nd).rev() {
        buf[len] = digits[i];
        len += 1;
    }
    buf[len] = b'\n';
    len += 1;
    // SAFETY: write(2) is async-signal-safe; buf outlives the call.
    unsafe { libc::write(NOTICE_FD.load(Ordering::Relaxed), buf.as_ptr().cast(), len) };
}

/// Installs [`on_signal`] for `sigs`.
fn install_stop(sigs: &[libc::c_int]) {
    for &sig in sigs {
        // SAFETY: a zeroed sigaction with a handler and an empty mask is valid; no
        // SA_RESTART so blocking calls in the main process return EINTR and see the stop.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_usr1(_sig: libc::c_int) {
    USR1.store(true, Ordering::Relaxed);
}

/// Installs the main process's handlers.
pub fn install_main() {
    install_stop(&[libc::SIGINT, libc::SIGTERM]);
    // SAFETY: as in `install_stop`; SA_RESTART, since a report request must not cut short a
    // blocking call anywhere in the process.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr1 as extern "C" fn(libc::c_int) as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    }
}

/// Makes SIGHUP stop the run as SIGINT does (`iobench quick`, whose test file must be
/// removed when its terminal goes away). Plain runs keep SIGHUP's default, as fio does.
pub fn stop_on_hangup() {
    install_stop(&[libc::SIGHUP]);
}

/// True once a SIGHUP stopped the run (after [`stop_on_hangup`]): a server's run child
/// gets it when its server goes (its parent-death signal), so it knows its results have
/// no reader.
pub fn hung_up() -> bool {
    HUNG_UP.load(Ordering::Relaxed)
}

/// True once per SIGUSR1 received since the last call.
pub fn take_usr1() -> bool {
    USR1.swap(false, Ordering::Relaxed)
}

/// In a worker thread: SIGUSR1 is left to the main thread, so that it never lands in the
/// middle of the thread's I/O calls.
pub fn block_usr1_here() {
    // SAFETY: a zeroed sigset filled by sigemptyset/sigaddset; pthread_sigmask changes
    // only the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// In a forked worker: signals only stop the worker, and the worker dies with its parent.
pub fn become_worker() {
    IS_WORKER.store(true, Ordering::Relaxed);
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number and changes only this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
}
