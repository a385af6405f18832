//! net and netsplice: I/O as messages over TCP, UDP or a Unix socket, as fio's net
//! engines do, and speaking their protocol, so iobench and fio can be each other's peer.
//! A job that writes sends each block; a job that reads receives them. The listening
//! side (`listen` for TCP; the reader for UDP and Unix sockets) waits for its peer before
//! its clock starts. Each clone uses `port` plus its clone index. With `pingpong` every
//! block is answered before the next goes. The sender opens a UDP link with an 8-byte
//! "open" message and every sender ends with a "close" message, on which a UDP reader
//! stops; UDP datagrams carry fio's sequence trailer (when not verifying). netsplice
//! moves TCP data with splice through a pipe instead of send/recv.
//!
//! Unlike fio, a block is always received whole (fio counts a partial receive as a short
//! I/O and requeues the rest): the bytes and I/Os reported are the same, the `short`
//! counts stay 0.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::rows::{FILENAME, RW, SIZE, VERIFY};
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, ToSocketAddrs};

const PROTOCOL_CHOICES: &[(&str, &str)] = &[
    ("tcp", "TCP over IPv4"),
    ("tcpv6", "TCP over IPv6"),
    ("udp", "UDP over IPv4"),
    ("udpv6", "UDP over IPv6"),
    ("unix", "a Unix domain socket"),
    ("vsock", "a VM socket (AF_VSOCK)"),
];

pub const HOSTNAME: OptDef = opt("hostname", K::Str, "The host to connect to")
    .cat(C::Engine)
    .engines(&["net", "netsplice", "rdma"]);

pub const PORT: OptDef = opt(
    "port",
    K::Int { min: 1, max: 65535 },
    "The port to connect to or listen on",
)
.cat(C::Engine)
.engines(&["net", "netsplice", "rdma"])
.range(1, 65535);

pub const PROTOCOL: OptDef = opt(
    "protocol",
    K::Choice(PROTOCOL_CHOICES),
    "The network protocol to use",
)
.alias(&["proto"])
.def("tcp")
.cat(C::Engine)
.engines(&["net", "netsplice"])
.later(&[("vsock", crate::defs::FioRelease::V3_37)])
.only(&["tcp", "tcpv6", "udp", "udpv6", "unix"])
.others_because(
    "the net engine has no AF_VSOCK transport yet (and this host's kernel no vsock \
     loopback, vsock_loopback, to test one against fio)",
);

pub const NODELAY: OptDef = opt(
    "nodelay",
    K::Bool,
    "Turn off Nagle's algorithm on TCP sockets",
)
.cat(C::Engine)
.engines(&["net", "netsplice"]);

pub const LISTEN: OptDef = opt("listen", K::Bool, "Wait for the other side to connect")
    .cat(C::Engine)
    .engines(&["net", "netsplice"]);

pub const PINGPONG: OptDef = opt(
    "pingpong",
    K::Bool,
    "Answer each message before sending the next",
)
.cat(C::Engine)
.engines(&["net", "netsplice"]);

pub const INTERFACE: OptDef = opt(
    "interface",
    K::Str,
    "The network interface used for multicast",
)
.cat(C::Engine)
.engines(&["net", "netsplice"]);

pub const TTL: OptDef = opt(
    "ttl",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Time to live for multicast UDP packets",
)
.def("1")
.cat(C::Engine)
.engines(&["net", "netsplice"]);

pub const WINDOW_SIZE: OptDef = opt(
    "window_size",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Socket buffer size",
)
.cat(C::Engine)
.engines(&["net", "netsplice"]);

pub const MSS: OptDef = opt(
    "mss",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Largest TCP segment size",
)
.cat(C::Engine)
.engines(&["net", "netsplice"]);

/// The options net and netsplice share, in fio's order.
pub const OPTIONS: &[OptDef] = &[
    HOSTNAME,
    PORT,
    PROTOCOL,
    NODELAY,
    LISTEN,
    PINGPONG,
    INTERFACE,
    TTL,
    WINDOW_SIZE,
    MSS,
];

/// The transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Tcp,
    Tcp6,
    Udp,
    Udp6,
    Unix,
}

impl Proto {
    fn tcp(self) -> bool {
        matches!(self, Proto::Tcp | Proto::Tcp6)
    }
    fn udp(self) -> bool {
        matches!(self, Proto::Udp | Proto::Udp6)
    }
    fn v6(self) -> bool {
        matches!(self, Proto::Tcp6 | Proto::Udp6)
    }
}

/// net's options, read once (the port is the job's; each clone adds its index).
#[derive(Debug, Clone)]
pub struct NetOpts {
    proto: Proto,
    /// `hostname` (or `filename`): the peer to connect to, the multicast group to join,
    /// or the Unix socket's path.
    host: Option<String>,
    port: u16,
    listen: bool,
    pingpong: bool,
    nodelay: bool,
    window_size: u32,
    mss: u32,
    ttl: u32,
    interface: Option<String>,
    /// The job reads (receives); else it writes (sends).
    reads: bool,
    writes: bool,
    /// The job's size: a sender sets MSG_MORE while more is to come.
    size: u64,
    /// The job verifies: no sequence trailer in UDP datagrams.
    verify: bool,
    /// netsplice: TCP data through a pipe with splice.
    splice: bool,
}

/// fio's link messages: magic and command, 8 bytes, sent little-endian on close and
/// big-endian on open, as fio 3.33 does.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_CLOSE: u32 = 0x89;
const LINK_OPEN: u32 = 0x98;
/// The UDP sequence trailer's magic (fio's FIO_UDP_SEQ_MAGIC).
const SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;

/// A socket address of any family, as the kernel takes it.
#[derive(Clone, Copy)]
struct Addr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl Addr {
    fn empty() -> Addr {
        Addr {
            // SAFETY: an all-zero sockaddr_storage is a valid "unspecified" address.
            storage: unsafe { zeroed() },
            len: size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }

    fn ip(ip: IpAddr, port: u16) -> Addr {
        let mut a = Addr::empty();
        match ip {
            IpAddr::V4(v4) => {
                // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
                let sin = unsafe { &mut *(&mut a.storage as *mut _ as *mut libc::sockaddr_in) };
                sin.sin_family = libc::AF_INET as libc::sa_family_t;
                sin.sin_port = port.to_be();
                sin.sin_addr.s_addr = u32::from_ne_bytes(v4.octets());
                a.len = size_of::<libc::sockaddr_in>() as libc::socklen_t;
            }
            IpAddr::V6(v6) => {
                // SAFETY: as above, for sockaddr_in6.
                let sin6 = unsafe { &mut *(&mut a.storage as *mut _ as *mut libc::sockaddr_in6) };
                sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sin6.sin6_port = port.to_be();
                sin6.sin6_addr.s6_addr = v6.octets();
                a.len = size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            }
        }
        a
    }

    fn unix(path: &str) -> io::Result<Addr> {
        let mut a = Addr::empty();
        // SAFETY: as above, for sockaddr_un.
        let sun = unsafe { &mut *(&mut a.storage as *mut _ as *mut libc::sockaddr_un) };
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let b = path.as_bytes();
        if b.len() >= sun.sun_path.len() {
            return Err(io::Error::other(format!(
                "net: socket path too long: {path}"
            )));
        }
        for (d, s) in sun.sun_path.iter_mut().zip(b) {
            *d = *s as libc::c_char;
        }
        a.len = (size_of::<libc::sa_family_t>() + b.len() + 1) as libc::socklen_t;
        Ok(a)
    }

    fn ptr(&self) -> *const libc::sockaddr {
        &self.storage as *const _ as *const libc::sockaddr
    }
}

/// A system call's -1 as an error naming what failed.
fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("net: {what}: {e}")))
    } else {
        Ok(r)
    }
}

fn set_int(
    fd: libc::c_int,
    level: libc::c_int,
    name: libc::c_int,
    v: u32,
    what: &str,
) -> io::Result<()> {
    let v = v as libc::c_int;
    // SAFETY: setsockopt reads one int from a live local.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    check(r, what).map(|_| ())
}

/// One worker's connection.
pub struct Net {
    o: NetOpts,
    /// The listening (or bound UDP) socket, and the socket I/O goes through.
    listen_fd: libc::c_int,
    fd: libc::c_int,
    /// Where UDP datagrams go (the peer, or for a receiver the last sender).
    peer: Addr,
    pipe: [libc::c_int; 2],
    sent: u64,
    send_seq: u64,
    recv_seq: u64,
    seq_off: bool,
    /// Datagrams the sequence trailer says were lost.
    dropped: u64,
    done: bool,
}

// SAFETY: plain descriptors and values; one worker uses the engine at a time.
unsafe impl Send for Net {}

impl Net {
    fn socket(&self) -> io::Result<libc::c_int> {
        let (domain, ty) = match self.o.proto {
            Proto::Tcp => (libc::AF_INET, libc::SOCK_STREAM),
            Proto::Tcp6 => (libc::AF_INET6, libc::SOCK_STREAM),
            Proto::Udp => (libc::AF_INET, libc::SOCK_DGRAM),
            Proto::Udp6 => (libc::AF_INET6, libc::SOCK_DGRAM),
            Proto::Unix => (libc::AF_UNIX, libc::SOCK_STREAM),
        };
        // SAFETY: creates a socket; the descriptor is owned by this engine.
        check(
            unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, 0) },
            "socket",
        )
    }

    /// window_size and mss, as fio sets them on each socket it makes.
    fn tune(&self, fd: libc::c_int) -> io::Result<()> {
        if self.o.window_size > 0 {
            set_int(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                self.o.window_size,
                "rcvbuf window size",
            )?;
            set_int(
                fd,
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                self.o.window_size,
                "sndbuf window size",
            )?;
        }
        if self.o.mss > 0 && self.o.proto.tcp() {
            set_int(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                self.o.mss,
                "setsockopt TCP_MAXSEG",
            )?;
        }
        Ok(())
    }

    fn resolve(&self, host: &str) -> io::Result<IpAddr> {
        let found = (host, self.o.port)
            .to_socket_addrs()
            .map_err(|e| io::Error::new(e.kind(), format!("net: getaddrinfo {host}: {e}")))?
            .map(|a| a.ip())
            .find(|ip| ip.is_ipv6() == self.o.proto.v6());
        found.ok_or_else(|| io::Error::other(format!("net: no address for {host}")))
    }

    fn listen(&mut self) -> io::Result<()> {
        let fd = self.socket()?;
        self.listen_fd = fd;
        if self.o.proto == Proto::Unix {
            let path = self.o.host.clone().unwrap_or_default();
            let a = Addr::unix(&path)?;
            let _ = std::fs::remove_file(&path);
            // SAFETY: binds our socket to a local address that lives for the call.
            check(unsafe { libc::bind(fd, a.ptr(), a.len) }, "bind")?;
        } else {
            set_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "setsockopt")?;
            set_int(fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1, "setsockopt")?;
            self.tune(fd)?;
            let mut any: IpAddr = if self.o.proto.v6() {
                std::net::Ipv6Addr::UNSPECIFIED.into()
            } else {
                std::net::Ipv4Addr::UNSPECIFIED.into()
            };
            if let Some(group) = &self.o.host {
                // A UDP reader given a host joins that multicast group.
                let g: std::net::Ipv4Addr = group
                    .parse()
                    .ok()
                    .filter(|g: &std::net::Ipv4Addr| g.is_multicast() && self.o.proto == Proto::Udp)
                    .ok_or_else(|| {
                        io::Error::other(
                            "net: hostname not valid for non-multicast inbound network IO",
                        )
                    })?;
                let iface: std::net::Ipv4Addr = match &self.o.interface {
                    Some(i) => i
                        .parse()
                        .map_err(|_| io::Error::other("net: interface not valid interface IP"))?,
                    None => std::net::Ipv4Addr::UNSPECIFIED,
                };
                let mr = libc::ip_mreq {
                    imr_multiaddr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(g.octets()),
                    },
                    imr_interface: libc::in_addr {
                        s_addr: u32::from_ne_bytes(iface.octets()),
                    },
                };
                // SAFETY: reads the ip_mreq local.
                let r = unsafe {
                    libc::setsockopt(
                        fd,
                        libc::IPPROTO_IP,
                        libc::IP_ADD_MEMBERSHIP,
                        (&mr as *const libc::ip_mreq).cast(),
                        size_of::<libc::ip_mreq>() as libc::socklen_t,
                    )
                };
                check(r, "setsockopt IP_ADD_MEMBERSHIP")?;
                any = g.into();
            }
            let a = Addr::ip(any, self.o.port);
            // SAFETY: as above.
            check(unsafe { libc::bind(fd, a.ptr(), a.len) }, "bind")?;
        }
        if self.o.proto.udp() {
            // One socket for both roles: closed once, as `fd`.
            self.fd = fd;
            self.listen_fd = -1;
            return self.await_open();
        }
        // SAFETY: a plain system call on our socket.
        check(unsafe { libc::listen(fd, 10) }, "listen")?;
        println!("iobench: waiting for connection");
        use std::io::Write;
        let _ = io::stdout().flush();
        let mut peer = Addr::empty();
        // SAFETY: accept fills `peer` within its length.
        let c = check(
            unsafe {
                libc::accept4(
                    fd,
                    &mut peer.storage as *mut _ as *mut libc::sockaddr,
                    &mut peer.len,
                    libc::SOCK_CLOEXEC,
                )
            },
            "accept",
        )?;
        self.fd = c;
        if self.o.nodelay && self.o.proto.tcp() {
            set_int(c, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1, "TCP_NODELAY")?;
        }
        Ok(())
    }

    /// A UDP reader waits for the sender's "open" message (fio's byte order: big-endian).
    fn await_open(&mut self) -> io::Result<()> {
        let mut msg = [0u8; 8];
        let mut from = Addr::empty();
        // SAFETY: receives into the local buffer and address, within their lengths.
        let n = unsafe {
            libc::recvfrom(
                self.fd,
                msg.as_mut_ptr().cast(),
                8,
                libc::MSG_WAITALL,
                &mut from.storage as *mut _ as *mut libc::sockaddr,
                &mut from.len,
            )
        };
        if n < 0 {
            return Err(io::Error::other(format!(
                "net: recvfrom udp link open: {}",
                io::Error::last_os_error()
            )));
        }
        let magic = u32::from_be_bytes([msg[0], msg[1], msg[2], msg[3]]);
        let cmd = u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]);
        if n != 8 || magic != LINK_MAGIC || cmd != LINK_OPEN {
            return Err(io::Error::other(format!(
                "net: bad udp open magic {magic:x}/{cmd:x}"
            )));
        }
        self.peer = from;
        Ok(())
    }

    fn connect(&mut self) -> io::Result<()> {
        let fd = self.socket()?;
        self.fd = fd;
        let Some(host) = self.o.host.clone() else {
            return Err(io::Error::other(if self.o.reads {
                "net: connect with no host to connect to (did you forget to set 'listen'?)"
            } else {
                "net: connect with no host to connect to"
            }));
        };
        if self.o.nodelay && self.o.proto.tcp() {
            set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1, "TCP_NODELAY")?;
        }
        self.tune(fd)?;
        self.peer = if self.o.proto == Proto::Unix {
            Addr::unix(&host)?
        } else {
            Addr::ip(self.resolve(&host)?, self.o.port)
        };
        if self.o.proto.udp() {
            if let Ok(g) = host.parse::<std::net::Ipv4Addr>() {
                if g.is_multicast() {
                    if let Some(i) = &self.o.interface {
                        let ia: std::net::Ipv4Addr = i.parse().map_err(|_| {
                            io::Error::other("net: interface not valid interface IP")
                        })?;
                        let a = libc::in_addr {
                            s_addr: u32::from_ne_bytes(ia.octets()),
                        };
                        // SAFETY: reads the in_addr local.
                        let r = unsafe {
                            libc::setsockopt(
                                fd,
                                libc::IPPROTO_IP,
                                libc::IP_MULTICAST_IF,
                                (&a as *const libc::in_addr).cast(),
                                size_of::<libc::in_addr>() as libc::socklen_t,
                            )
                        };
                        check(r, "setsockopt IP_MULTICAST_IF")?;
                    }
                    set_int(
                        fd,
                        libc::IPPROTO_IP,
                        libc::IP_MULTICAST_TTL,
                        self.o.ttl,
                        "setsockopt IP_MULTICAST_TTL",
                    )?;
                }
            }
            let mut msg = [0u8; 8];
            msg[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
            msg[4..].copy_from_slice(&LINK_OPEN.to_be_bytes());
            self.send_to_peer(&msg, "sendto udp link open")?;
            return Ok(());
        }
        let p = self.peer;
        // SAFETY: connects our socket to an address that lives for the call.
        check(unsafe { libc::connect(fd, p.ptr(), p.len) }, "connect")?;
        Ok(())
    }

    fn send_to_peer(&self, msg: &[u8], what: &str) -> io::Result<()> {
        // SAFETY: sends from the local slice to a live address.
        let r = unsafe {
            libc::sendto(
                self.fd,
                msg.as_ptr().cast(),
                msg.len(),
                0,
                self.peer.ptr(),
                self.peer.len,
            )
        };
        check(r as libc::c_int, what).map(|_| ())
    }

    /// Sends the block; bytes sent or -errno.
    fn send(&mut self, io: &IoUnit) -> i64 {
        // SAFETY: the unit's buffer holds `len` bytes owned by the worker for the duration
        // of the call (`Engine::queue`'s contract); so do the slices below.
        let buf = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
        if self.o.proto.udp() {
            let n = buf.len();
            if !self.o.verify && n >= 24 {
                let t = n - 24;
                buf[t..t + 8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
                buf[t + 8..t + 16].copy_from_slice(&self.send_seq.to_le_bytes());
                buf[t + 16..].copy_from_slice(&(n as u64).to_le_bytes());
                self.send_seq += 1;
            }
            // SAFETY: as above.
            let r = unsafe {
                libc::sendto(
                    self.fd,
                    buf.as_ptr().cast(),
                    buf.len(),
                    0,
                    self.peer.ptr(),
                    self.peer.len,
                )
            };
            return super::neg_errno(r);
        }
        if self.o.splice && self.o.proto.tcp() {
            return self.splice_out(io);
        }
        let more = !self.o.pingpong && self.sent + (io.len as u64) < self.o.size;
        let flags = if more { libc::MSG_MORE } else { 0 } | libc::MSG_NOSIGNAL;
        let mut done = 0;
        while done < buf.len() {
            // SAFETY: as above.
            let r = unsafe {
                libc::send(
                    self.fd,
                    buf[done..].as_ptr().cast(),
                    buf.len() - done,
                    flags,
                )
            };
            if r < 0 {
                return super::neg_errno(r);
            }
            done += r as usize;
        }
        self.sent += done as u64;
        done as i64
    }

    /// Receives a whole block (or a UDP datagram); bytes received, 0 at the end of the
    /// stream or on the peer's close message, or -errno.
    fn recv(&mut self, io: &IoUnit) -> i64 {
        // SAFETY: as in `send`.
        let buf = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
        if self.o.proto.udp() {
            let mut from = Addr::empty();
            // SAFETY: receives into the unit's buffer and a local address.
            let r = unsafe {
                libc::recvfrom(
                    self.fd,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    &mut from.storage as *mut _ as *mut libc::sockaddr,
                    &mut from.len,
                )
            };
            if r < 0 {
                return super::neg_errno(r);
            }
            let n = r as usize;
            if is_close(&buf[..n]) {
                self.done = true;
                return 0;
            }
            if self.o.listen {
                self.peer = from;
            }
            if !self.o.verify {
                self.check_seq(&buf[..n]);
            }
            return n as i64;
        }
        if self.o.splice && self.o.proto.tcp() {
            return self.splice_in(io);
        }
        let mut done = 0;
        while done < buf.len() {
            let flags = if done == 0 { 0 } else { libc::MSG_WAITALL };
            // SAFETY: as above.
            let r = unsafe {
                libc::recv(
                    self.fd,
                    buf[done..].as_mut_ptr().cast(),
                    buf.len() - done,
                    flags,
                )
            };
            if r < 0 {
                return super::neg_errno(r);
            }
            if r == 0 {
                break;
            }
            done += r as usize;
            if done == 8 && is_close(&buf[..8]) {
                self.done = true;
                return 0;
            }
        }
        if done == 0 {
            self.done = true;
        }
        done as i64
    }

    /// fio's drop count from the UDP sequence trailer.
    fn check_seq(&mut self, d: &[u8]) {
        if d.len() < 24 || self.seq_off {
            return;
        }
        let t = d.len() - 24;
        let word = |i: usize| u64::from_le_bytes(d[i..i + 8].try_into().expect("8 bytes"));
        if word(t) != SEQ_MAGIC {
            return;
        }
        if word(t + 16) != d.len() as u64 {
            self.seq_off = true;
            return;
        }
        let seq = word(t + 8);
        if seq > self.recv_seq {
            self.dropped += seq - self.recv_seq;
        }
        self.recv_seq = seq + 1;
    }

    fn pipe(&mut self) -> io::Result<()> {
        if self.pipe[0] < 0 {
            let mut p = [-1; 2];
            check(
                // SAFETY: pipe2 fills the two-element array.
                unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) },
                "pipe",
            )?;
            self.pipe = p;
        }
        Ok(())
    }

    /// netsplice send: buffer → pipe (vmsplice) → socket (splice).
    fn splice_out(&mut self, io: &IoUnit) -> i64 {
        let mut done = 0;
        while done < io.len {
            let iov = libc::iovec {
                // SAFETY: within the unit's buffer.
                iov_base: unsafe { io.buf.add(done) }.cast(),
                iov_len: io.len - done,
            };
            // SAFETY: the buffer stays alive until the pipe is drained below.
            let n = unsafe { libc::vmsplice(self.pipe[1], &iov, 1, 0) };
            if n < 0 {
                return super::neg_errno(n);
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: splices from our pipe into our socket.
                let w = unsafe {
                    libc::splice(
                        self.pipe[0],
                        std::ptr::null_mut(),
                        self.fd,
                        std::ptr::null_mut(),
                        left,
                        libc::SPLICE_F_MORE,
                    )
                };
                if w <= 0 {
                    return if w < 0 {
                        super::neg_errno(w)
                    } else {
                        -(libc::EIO as i64)
                    };
                }
                left -= w as usize;
            }
            done += n as usize;
        }
        self.sent += done as u64;
        done as i64
    }

    /// netsplice receive: socket → pipe (splice) → buffer (read).
    fn splice_in(&mut self, io: &IoUnit) -> i64 {
        let mut done = 0;
        while done < io.len {
            // SAFETY: splices from our socket into our pipe.
            let n = unsafe {
                libc::splice(
                    self.fd,
                    std::ptr::null_mut(),
                    self.pipe[1],
                    std::ptr::null_mut(),
                    io.len - done,
                    libc::SPLICE_F_MOVE,
                )
            };
            if n < 0 {
                return super::neg_errno(n);
            }
            if n == 0 {
                break;
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: reads into the unit's buffer, within its length.
                let r = unsafe { libc::read(self.pipe[0], io.buf.add(done).cast(), left) };
                if r <= 0 {
                    return if r < 0 {
                        super::neg_errno(r)
                    } else {
                        -(libc::EIO as i64)
                    };
                }
                left -= r as usize;
                done += r as usize;
            }
        }
        if done == 0 {
            self.done = true;
        }
        done as i64
    }

    fn one(&mut self, io: &IoUnit, ddir: Ddir) -> i64 {
        match ddir {
            Ddir::Write => self.send(io),
            Ddir::Read => self.recv(io),
            Ddir::Trim => -(libc::EINVAL as i64),
        }
    }
}

/// True for fio's 8-byte "close" link message (little-endian).
fn is_close(d: &[u8]) -> bool {
    d.len() == 8
        && u32::from_le_bytes([d[0], d[1], d[2], d[3]]) == LINK_MAGIC
        && u32::from_le_bytes([d[4], d[5], d[6], d[7]]) == LINK_CLOSE
}

impl Drop for Net {
    fn drop(&mut self) {
        if self.fd >= 0 {
            // Tell the peer the link is done, as fio does when it closes the file.
            let mut msg = [0u8; 8];
            msg[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
            msg[4..].copy_from_slice(&LINK_CLOSE.to_le_bytes());
            // SAFETY: sends from a local array; the address (used by UDP only) is live.
            unsafe {
                libc::sendto(
                    self.fd,
                    msg.as_ptr().cast(),
                    8,
                    libc::MSG_NOSIGNAL,
                    self.peer.ptr(),
                    self.peer.len,
                )
            };
        }
        // (A UDP reader's one socket is `fd`; `listen_fd` was cleared for it in setup.)
        for fd in [self.fd, self.listen_fd, self.pipe[0], self.pipe[1]] {
            if fd >= 0 {
                // SAFETY: closes descriptors this engine made, each once.
                unsafe { libc::close(fd) };
            }
        }
    }
}

impl Engine for Net {
    fn setup(&mut self, _: &Setup<'_>) -> io::Result<()> {
        if self.o.splice {
            self.pipe()?;
        }
        if self.o.listen {
            // fio reports a listening job as setting up while it waits for its peer.
            crate::debug::setting_up(|| self.listen())
        } else {
            self.connect()
        }
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let ddir = match io.op {
            Op::Rw(d) => d,
            Op::Sync { .. } => {
                io.result = 0;
                return Ok(Queued::Completed);
            }
        };
        if self.done {
            return Ok(Queued::Busy);
        }
        let mut r = self.one(io, ddir);
        if r == 0 {
            // The peer is gone (end of stream, or its close message): the job is over.
            self.done = true;
            return Ok(Queued::Busy);
        }
        if r > 0 && self.o.pingpong {
            // Answer (or wait for the answer to) each block before the next.
            let back = if ddir == Ddir::Read && self.o.reads {
                Some(Ddir::Write)
            } else if ddir == Ddir::Write && self.o.writes {
                Some(Ddir::Read)
            } else {
                None
            };
            if let Some(d) = back {
                let r2 = self.one(io, d);
                if r2 == 0 {
                    // The peer ended the link in place of an answer: another reader of
                    // a multicast group may close to this writer before the pingpong
                    // reader answers its last block. As fio, the job is over and this
                    // block is not counted.
                    self.done = true;
                    return Ok(Queued::Busy);
                }
                if r2 < 0 {
                    r = r2;
                }
            }
        }
        io.result = r;
        Ok(Queued::Completed)
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.dropped)
    }
}

const NET_FLAGS: Flags = Flags {
    diskless: true,
    fake_files: true,
    opens_own_files: true,
    no_offload: true,
    bit_based: true,
    ..Flags::SYNC
};

impl super::spec::Declared for Net {
    type Opts = NetOpts;
    const SPECS: &'static [Spec] = &[
        Spec::new(
            "net",
            "sends or receives over TCP, UDP or a Unix socket",
            NET_FLAGS,
        )
        .options(OPTIONS),
        Spec::new(
            "netsplice",
            "like net, moving data with splice",
            Flags {
                bit_based: false,
                ..NET_FLAGS
            },
        )
        .options(OPTIONS),
    ];
    fn configure(spec: &'static Spec, r: &Reader, job: &JobFacts) -> Result<NetOpts, JobError> {
        let bad = |m: &str| r.invalid_engine(format!("{}: {m}", spec.name));
        let rw = r.word(&RW);
        if rw.starts_with("rand") {
            return Err(bad("network IO can't be random"));
        }
        let reads = matches!(rw.as_str(), "read" | "rw" | "readwrite");
        let writes = matches!(rw.as_str(), "write" | "rw" | "readwrite");
        let proto = match r.choice(&PROTOCOL).as_deref() {
            None | Some("tcp") => Proto::Tcp,
            Some("tcpv6") => Proto::Tcp6,
            Some("udp") => Proto::Udp,
            Some("udpv6") => Proto::Udp6,
            Some("unix") => Proto::Unix,
            Some(o) => {
                return Err(r.invalid(
                    &PROTOCOL,
                    format!("'{o}' is not one of tcp, tcpv6, udp, udpv6, unix"),
                ))
            }
        };
        let port = r.num(&PORT)?;
        if proto == Proto::Unix && port != 0 {
            return Err(bad("network IO port not valid with unix socket"));
        }
        if proto != Proto::Unix && port == 0 {
            return Err(bad("network IO requires port for tcp or udp"));
        }
        let host = r.text(&HOSTNAME).or_else(|| r.text(&FILENAME));
        let mut listen = r.bool(&LISTEN)?;
        if !proto.tcp() {
            if listen {
                return Err(bad("listen only valid for TCP proto IO"));
            }
            if reads && writes {
                return Err(bad("datagram network connections must be read OR write"));
            }
            if proto == Proto::Unix && host.is_none() {
                return Err(bad("UNIX sockets need host/filename"));
            }
            listen = reads;
        }
        let _ = job;
        Ok(NetOpts {
            proto,
            host,
            port: port as u16,
            listen,
            pingpong: r.bool(&PINGPONG)?,
            nodelay: r.bool(&NODELAY)?,
            window_size: r.num(&WINDOW_SIZE)?.max(0) as u32,
            mss: r.num(&MSS)?.max(0) as u32,
            ttl: r.num(&TTL)?.max(0) as u32,
            interface: r.text(&INTERFACE),
            reads,
            writes,
            size: r.bytes(&SIZE)?,
            verify: r.text(&VERIFY).is_some_and(|v| v != "0" && v != "null"),
            splice: spec.name == "netsplice",
        })
    }
    fn build(o: &NetOpts) -> Self {
        Net {
            o: o.clone(),
            listen_fd: -1,
            fd: -1,
            peer: Addr::empty(),
            pipe: [-1; 2],
            sent: 0,
            send_seq: 0,
            recv_seq: 0,
            seq_off: false,
            dropped: 0,
            done: false,
        }
    }
    fn for_clone(o: &mut NetOpts, clone: u32) {
        o.port = o.port.wrapping_add(clone as u16);
    }
}
