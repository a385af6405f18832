//! nbd: I/O straight to a Network Block Device server (nbdkit, qemu-nbd, a storage
//! team's own), as fio's nbd engine does through libnbd: `ioengine=nbd` with
//! `uri=nbd://host:port/export` or `uri=nbd+unix:///export?socket=PATH`. No kernel client
//! and no root are needed, so a server can be measured on its own.
//!
//! Each worker holds one connection. Requests of a batch go out in one `writev`; replies
//! are read in large chunks and matched to their I/O by the cookie, which is the I/O's
//! slot (unique while it is in flight). Read data is copied once, from the socket buffer
//! into the I/O's buffer.

pub mod wire;

use super::{Completion, Engine, IoUnit, Op, Queued, Setup};
use crate::defs::rows::IO_TIMEOUT;
use crate::defs::Ddir;
use std::io::{self, Read};
use std::sync::Arc;
use wire::Stream;

/// Bytes of socket data read at once.
const READ_CHUNK: usize = 256 << 10;
/// The most iovecs one writev takes on Linux.
const IOV_MAX: usize = 1024;

#[derive(Debug, Clone, Copy)]
struct InFlight {
    buf: *mut u8,
    len: usize,
    read: bool,
    busy: bool,
}

/// The engine's options: the server (`uri`) and the connection's timeouts (from
/// `io_timeout` when the job sets it).
#[derive(Debug, Clone)]
pub struct NbdOpts {
    uri: Arc<str>,
    timeouts: wire::Timeouts,
}

/// One worker's connection and its requests in flight.
pub struct Nbd {
    uri: Arc<str>,
    timeouts: wire::Timeouts,
    stream: Option<Stream>,
    hdrs: Vec<[u8; 28]>,
    inflight: Vec<InFlight>,
    iov: Vec<libc::iovec>,
    staged: usize,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    events: Vec<Completion>,
    nevents: usize,
    /// Set once the connection failed (reset, closed, timed out, garbled): the errno
    /// every I/O in flight and every later one completes with, so the job ends with what
    /// completed before the fault instead of losing its results.
    dead: Option<i32>,
}

// SAFETY: the raw pointers are the worker's own I/O buffers and header slots, used only
// by the thread that owns the engine; the engine moves to that thread before any I/O.
unsafe impl Send for Nbd {}

impl Nbd {
    pub fn new(uri: Arc<str>, timeouts: wire::Timeouts) -> Self {
        Nbd {
            uri,
            timeouts,
            stream: None,
            hdrs: Vec::new(),
            inflight: Vec::new(),
            iov: Vec::new(),
            staged: 0,
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            events: Vec::new(),
            nevents: 0,
            dead: None,
        }
    }

    fn stream(&mut self) -> io::Result<&mut Stream> {
        self.stream
            .as_mut()
            .ok_or_else(|| io::Error::other("nbd: not connected"))
    }

    /// Reads more socket data into the buffer; with `wait` false, only what is there.
    fn fill(&mut self, wait: bool) -> io::Result<bool> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
        let fd = self.stream()?.raw_fd();
        let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
        loop {
            let room = &mut self.rbuf[self.rend..];
            // SAFETY: receives into our own buffer, within its length.
            let n = unsafe { libc::recv(fd, room.as_mut_ptr().cast(), room.len(), flags) };
            if n > 0 {
                self.rend += n as usize;
                return Ok(true);
            }
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "nbd: the server closed the connection",
                ));
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                // A stop (a signal, the watchdog's timeout) ends a wait on a hung server.
                io::ErrorKind::Interrupted if wait && crate::stop::terminating() => {
                    return Ok(false)
                }
                io::ErrorKind::Interrupted => continue,
                // A blocking wait that ends this way ran into the socket's reply
                // timeout (wire::Timeouts): the server is hung.
                io::ErrorKind::WouldBlock if wait => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "nbd: no reply from the server in {:.1} s",
                            self.timeouts.reply.as_secs_f64()
                        ),
                    ))
                }
                io::ErrorKind::WouldBlock => return Ok(false),
                _ => return Err(e),
            }
        }
    }

    /// Takes one whole reply from the buffer, if there is one, as an event.
    fn take_reply(&mut self) -> io::Result<bool> {
        if self.rend - self.rstart < 16 {
            return Ok(false);
        }
        let h = &self.rbuf[self.rstart..self.rstart + 16];
        let magic = u32::from_be_bytes(h[0..4].try_into().expect("4 bytes"));
        let error = u32::from_be_bytes(h[4..8].try_into().expect("4 bytes"));
        let cookie = u64::from_be_bytes(h[8..16].try_into().expect("8 bytes"));
        if magic != wire::SIMPLE_REPLY_MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("nbd: unexpected reply magic {magic:#x} from the server"),
            ));
        }
        let slot = cookie as usize;
        let f = match self.inflight.get(slot) {
            Some(f) if f.busy => *f,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("nbd: the server answered request {cookie}, which is not in flight"),
                ))
            }
        };
        self.rstart += 16;
        if f.read && error == 0 {
            let have = (self.rend - self.rstart).min(f.len);
            // SAFETY: `f.buf` is the I/O's buffer of `f.len` bytes, in flight and so not
            // touched by the worker until this completion; `have <= f.len`.
            let dst = unsafe { std::slice::from_raw_parts_mut(f.buf, f.len) };
            dst[..have].copy_from_slice(&self.rbuf[self.rstart..self.rstart + have]);
            self.rstart += have;
            if have < f.len {
                self.stream()?.read_exact(&mut dst[have..]).map_err(|e| {
                    if e.kind() == io::ErrorKind::UnexpectedEof {
                        // The same fault as a close between replies, said the same way.
                        io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "nbd: the server closed the connection in the middle of a reply",
                        )
                    } else {
                        e
                    }
                })?;
            }
        }
        self.inflight[slot].busy = false;
        let result = if error == 0 {
            f.len as i64
        } else {
            -(wire::errno_of(error) as i64)
        };
        self.events[self.nevents] = Completion {
            slot: slot as u32,
            result,
        };
        self.nevents += 1;
        Ok(true)
    }

    /// Takes replies until `min` events are in (or, with `min` 0, what has arrived).
    fn reap(&mut self, min: usize, max: usize) -> io::Result<()> {
        loop {
            while self.nevents < max && self.take_reply()? {}
            if self.nevents >= max || (self.nevents >= min && self.nevents > 0) {
                return Ok(());
            }
            if !self.fill(min > self.nevents)? {
                return Ok(());
            }
        }
    }

    /// Marks the connection failed with `e`'s errno (ECONNRESET for a closed connection,
    /// ETIMEDOUT when no reply came in time, EIO for a garbled reply) and says so once.
    fn fail(&mut self, e: &io::Error) {
        // A request sent just as the server went away fails with EPIPE (or ECONNRESET):
        // the same fault as a close seen while reading, reported the same way.
        let lost = matches!(e.raw_os_error(), Some(libc::EPIPE) | Some(libc::ECONNRESET));
        let errno = match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => libc::ETIMEDOUT,
            io::ErrorKind::UnexpectedEof => libc::ECONNRESET,
            io::ErrorKind::InvalidData => libc::EIO,
            _ if lost => libc::ECONNRESET,
            _ => e.raw_os_error().unwrap_or(libc::EIO),
        };
        if lost {
            eprintln!(
                "iobench: nbd {}: the server closed the connection ({e})",
                self.uri
            );
        } else {
            eprintln!("iobench: nbd {}: {e}", self.uri);
        }
        self.dead = Some(errno);
    }

    /// Sends the staged requests (and write data) in as few writev calls as it takes.
    fn send_staged(&mut self) -> io::Result<()> {
        let fd = self.stream()?.raw_fd();
        let mut first = 0;
        while first < self.iov.len() {
            let rest = &self.iov[first..];
            // SAFETY: every iovec points at a live header slot or in-flight buffer.
            let n = unsafe { libc::writev(fd, rest.as_ptr(), rest.len().min(IOV_MAX) as i32) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            let mut n = n as usize;
            while n > 0 {
                let v = &mut self.iov[first];
                if n >= v.iov_len {
                    n -= v.iov_len;
                    first += 1;
                } else {
                    // SAFETY: moves the base within the same buffer, by less than its length.
                    v.iov_base = unsafe { v.iov_base.cast::<u8>().add(n).cast() };
                    v.iov_len -= n;
                    n = 0;
                }
            }
        }
        self.iov.clear();
        Ok(())
    }
}

impl Engine for Nbd {
    fn setup(&mut self, s: &Setup<'_>) -> io::Result<()> {
        let addr = wire::parse_uri(&self.uri).map_err(io::Error::other)?;
        let (stream, export) = wire::connect(&addr, self.timeouts)?;
        if export.flags & wire::FLAG_READ_ONLY != 0 && s.files.iter().any(|f| f.writable) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("nbd: export of {} is read-only", self.uri),
            ));
        }
        self.stream = Some(stream);
        let depth = s.depth.max(1) as usize;
        self.hdrs = vec![[0u8; 28]; depth];
        self.inflight = vec![
            InFlight {
                buf: std::ptr::null_mut(),
                len: 0,
                read: false,
                busy: false,
            };
            depth
        ];
        self.iov = Vec::with_capacity(2 * depth);
        self.rbuf = vec![0u8; READ_CHUNK];
        self.events = vec![Completion { slot: 0, result: 0 }; depth];
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let slot = io.slot as usize;
        if slot >= self.hdrs.len() || self.inflight[slot].busy {
            return Ok(Queued::Busy);
        }
        if self.dead.is_none() && self.iov.len() + 2 > self.iov.capacity() {
            if let Err(e) = self.send_staged() {
                self.fail(&e);
            }
            self.iov.clear();
        }
        let (cmd, offset, len) = match io.op {
            Op::Rw(Ddir::Read) => (wire::CMD_READ, io.offset, io.len),
            Op::Rw(Ddir::Write) => (wire::CMD_WRITE, io.offset, io.len),
            Op::Rw(Ddir::Trim) => (wire::CMD_TRIM, io.offset, io.len),
            Op::Sync { .. } => (wire::CMD_FLUSH, 0, 0),
        };
        self.hdrs[slot] = wire::request(cmd, slot as u64, offset, len as u32);
        self.iov.push(libc::iovec {
            iov_base: self.hdrs[slot].as_mut_ptr().cast(),
            iov_len: 28,
        });
        if cmd == wire::CMD_WRITE && len > 0 {
            self.iov.push(libc::iovec {
                iov_base: io.buf.cast(),
                iov_len: len,
            });
        }
        // A completed I/O's result is the bytes it asked for (reads get them copied in).
        self.inflight[slot] = InFlight {
            buf: io.buf,
            len,
            read: cmd == wire::CMD_READ,
            busy: true,
        };
        self.staged += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = self.staged;
        if n > 0 {
            if self.dead.is_none() {
                if let Err(e) = self.send_staged() {
                    self.fail(&e);
                }
            }
            self.iov.clear();
            self.staged = 0;
        }
        Ok(n)
    }

    fn getevents(&mut self, min: usize, max: usize) -> io::Result<usize> {
        self.nevents = 0;
        let max = max.min(self.events.len());
        if self.dead.is_none() {
            if let Err(e) = self.reap(min, max) {
                self.fail(&e);
            }
        }
        if let Some(errno) = self.dead {
            // Every request still in flight completes with the connection's error.
            for slot in 0..self.inflight.len() {
                if self.nevents >= max {
                    break;
                }
                if self.inflight[slot].busy {
                    self.inflight[slot].busy = false;
                    self.events[self.nevents] = Completion {
                        slot: slot as u32,
                        result: -(errno as i64),
                    };
                    self.nevents += 1;
                }
            }
        }
        Ok(self.nevents)
    }

    #[inline]
    fn event(&self, i: usize) -> Completion {
        self.events[i]
    }
}

impl Drop for Nbd {
    fn drop(&mut self) {
        if let Some(s) = self.stream.as_mut() {
            // Best effort: a polite disconnect lets the server flush and log cleanly.
            let _ = std::io::Write::write_all(s, &wire::request(wire::CMD_DISC, 0, 0, 0));
        }
    }
}

pub const URI: crate::defs::OptDef =
    crate::defs::opt("uri", crate::defs::Kind::Str, "The NBD server address")
        .cat(crate::defs::Category::Engine)
        .engines(&["nbd"]);

impl super::spec::Declared for Nbd {
    /// The server and export (`uri`), and the timeouts `io_timeout` sets.
    type Opts = NbdOpts;
    const SPECS: &'static [super::spec::Spec] = &[super::spec::Spec::new(
        "nbd",
        "a Network Block Device server, over the NBD protocol",
        super::spec::Flags {
            opens_own_files: true,
            sized_by_engine: true,
            ..super::spec::Flags::ASYNC
        },
    )
    .options(&[URI])];
    fn configure(
        _: &'static super::spec::Spec,
        r: &crate::defs::reader::Reader,
        _: &super::spec::JobFacts,
    ) -> Result<NbdOpts, crate::error::JobError> {
        let Some(u) = r.text(&URI) else {
            return Err(r.invalid_engine(
                "ioengine=nbd needs uri= (nbd://host[:port]/export or \
                 nbd+unix:///export?socket=PATH)",
            ));
        };
        wire::parse_uri(&u).map_err(|e| r.invalid(&URI, e))?;
        Ok(NbdOpts {
            uri: u.into(),
            timeouts: wire::Timeouts::with_io_timeout(r.time_us(&IO_TIMEOUT)?),
        })
    }
    fn build(o: &NbdOpts) -> Self {
        Nbd::new(o.uri.clone(), o.timeouts)
    }
    fn target_size(o: &NbdOpts) -> io::Result<u64> {
        let uri = &o.uri;
        match wire::export_size(uri, o.timeouts) {
            Ok(0) => Err(io::Error::other(format!(
                "nbd server {uri}: the export is empty"
            ))),
            Ok(n) => Ok(n),
            // The errno stays readable (the report's `error`), under the message.
            Err(e) => Err(crate::error::with_path(&format!("nbd server {uri}"), e)),
        }
    }
}
