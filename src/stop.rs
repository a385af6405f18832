//! The process-wide request to stop: set by signals, `exitall` and `exit_what`, read by
//! every loop that moves data (the worker, the verify pass, file layout) so each ends
//! promptly. It sits below every stage so that those loops need not reach up into the
//! runner to ask.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use std::sync::atomic::{AtomicBool, Ordering};

static TERMINATE: AtomicBool = AtomicBool::new(false);
/// Set when no later group may start either (a signal, `exit_what=all`).
static STOP_ALL: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// A thread worker's own stop flag (`exitall` stopping only its group).
    static CLONE_STOP: std::cell::Cell<Option<&'static AtomicBool>> =
        const { std::cell::Cell::new(None) };
}

/// True once a stop was asked for (signal, `exitall`): workers end their loops promptly.
#[inline]
pub fn terminating() -> bool {
    TERMINATE.load(Ordering::Relaxed)
        || CLONE_STOP.with(|c| c.get().is_some_and(|f| f.load(Ordering::Relaxed)))
}

/// Asks every running worker to stop.
pub fn request_stop() {
    TERMINATE.store(true, Ordering::Relaxed);
}

/// Asks every running worker to stop, and no later group to start.
pub fn request_stop_all() {
    STOP_ALL.store(true, Ordering::Relaxed);
    TERMINATE.store(true, Ordering::Relaxed);
}

/// True once [`request_stop_all`] was called (since the last [`clear`]).
pub(crate) fn stop_all_requested() -> bool {
    STOP_ALL.load(Ordering::Relaxed)
}

/// Gives the calling thread worker its own stop flag.
pub(crate) fn set_clone_stop(flag: &'static AtomicBool) {
    CLONE_STOP.with(|c| c.set(Some(flag)));
}

/// Lets workers run again: after a group's `exitall` stop (`all` false: a stop-all stays),
/// or at the start of a new run in the same process (`all` true).
pub(crate) fn clear(all: bool) {
    if all {
        STOP_ALL.store(false, Ordering::Relaxed);
    }
    TERMINATE.store(false, Ordering::Relaxed);
}
