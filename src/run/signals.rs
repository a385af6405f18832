//! SIGINT/SIGTERM handling. In the main process the first signal prints fio's
//! "terminating on signal N" line and asks every worker to stop (the results of the time
//! that ran are still printed); a second one exits at once. Worker processes only stop.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

static SIGNALLED: AtomicI32 = AtomicI32::new(0);
static COUNT: AtomicU32 = AtomicU32::new(0);
static IS_WORKER: AtomicBool = AtomicBool::new(false);
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

extern "C" fn on_signal(sig: libc::c_int) {
    super::request_stop();
    if IS_WORKER.load(Ordering::Relaxed) {
        return;
    }
    SIGNALLED.store(sig, Ordering::Relaxed);
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

fn install(handler: libc::sighandler_t) {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler and an empty mask is valid; no
        // SA_RESTART so blocking calls in the main process return EINTR and see the stop.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Installs the main process's handlers.
pub fn install_main() {
    install(on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
}

/// In a forked worker: signals only stop the worker, and the worker dies with its parent.
pub fn become_worker() {
    IS_WORKER.store(true, Ordering::Relaxed);
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number and changes only this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
}
