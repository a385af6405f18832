//! I/O engines. Each engine is its own module; the worker is generic over [`Engine`] so its
//! hot loop is monomorphised. Engines say what they can do through [`Caps`] instead of
//! callers asking which engine they are.

pub mod psync;

use crate::job::Ddir;
use std::io;
use std::os::fd::RawFd;

/// What an engine can do, declared once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caps {
    /// Each queue() completes the I/O before returning (iodepth is effectively 1).
    pub sync: bool,
}

/// One I/O request.
#[derive(Debug, Clone, Copy)]
pub struct IoUnit {
    pub ddir: Ddir,
    pub fd: RawFd,
    pub offset: u64,
    pub len: usize,
    pub buf: *mut u8,
    /// Bytes transferred, or a negative errno, once completed.
    pub result: i64,
}

/// The outcome of queueing one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    Completed,
    Queued,
    Busy,
}

/// The interface every engine implements.
pub trait Engine: Send {
    fn caps(&self) -> Caps;
    fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued>;
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }
}
