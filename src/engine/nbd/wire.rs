//! The NBD protocol's client side, written from the protocol's public specification: the
//! NBD URI (`nbd://host[:port]/export`, `nbd+unix:///export?socket=PATH`), the fixed
//! newstyle handshake (NBD_OPT_GO, falling back to NBD_OPT_EXPORT_NAME), and the
//! transmission phase's request and simple-reply headers. iobench speaks it directly, so
//! the nbd engine needs no C library.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

/// Where an NBD server listens and which export to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub endpoint: Endpoint,
    pub export: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Unix { socket: String },
}

/// The port NBD servers listen on unless told otherwise.
pub const DEFAULT_PORT: u16 = 10809;

/// Reads an NBD URI as libnbd (and so fio's nbd engine) writes them.
pub fn parse_uri(uri: &str) -> Result<Address, String> {
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| format!("'{uri}' is not an NBD URI (nbd://host[:port]/export or nbd+unix:///export?socket=PATH)"))?;
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let export = percent_decode(path)?;
    let mut socket = None;
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        match pair.split_once('=') {
            Some(("socket", v)) => socket = Some(percent_decode(v)?),
            _ => {
                return Err(format!(
                    "'{uri}': query '{pair}' is not supported (only socket=)"
                ))
            }
        }
    }
    let endpoint = match scheme {
        "nbd" => {
            if authority.is_empty() {
                return Err(format!("'{uri}' names no host"));
            }
            let (host, port) = split_host_port(authority)
                .ok_or_else(|| format!("'{uri}': bad port in '{authority}'"))?;
            Endpoint::Tcp { host, port }
        }
        "nbd+unix" => Endpoint::Unix {
            socket: socket.ok_or_else(|| format!("'{uri}' needs ?socket=PATH"))?,
        },
        "nbds" | "nbds+unix" => {
            return Err(format!("'{uri}': NBD over TLS is not supported"));
        }
        other => {
            return Err(format!(
                "'{uri}': '{other}' is not an NBD URI scheme (nbd://host[:port]/export or nbd+unix:///export?socket=PATH)"
            ))
        }
    };
    Ok(Address { endpoint, export })
}

fn split_host_port(a: &str) -> Option<(String, u16)> {
    // [v6::addr]:port, host:port, or a bare host.
    if let Some(rest) = a.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => DEFAULT_PORT,
            None => return None,
        };
        return Some((host.to_string(), port));
    }
    match a.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((a.to_string(), DEFAULT_PORT)),
    }
}

fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad %-escape in '{s}'"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("'{s}' is not UTF-8 once decoded"))
}

/// A connected stream, TCP or Unix.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn raw_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What the server said of its export.
#[derive(Debug, Clone, Copy)]
pub struct Export {
    pub size: u64,
    pub flags: u16,
}

/// Transmission flags of an export.
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;

/// Commands of the transmission phase.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;

const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const OLDSTYLE: u64 = 0x0000_4202_8186_1253;
const REPLY_MAGIC_OPT: u64 = 0x0003_e889_0455_65a9;
const REQUEST_MAGIC: u32 = 0x2560_9513;
/// The magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
const OPT_EXPORT_NAME: u32 = 1;
const OPT_GO: u32 = 7;
const REP_ACK: u32 = 1;
const REP_INFO: u32 = 3;
const REP_ERR_UNSUP: u32 = (1 << 31) | 1;
const INFO_EXPORT: u16 = 0;
const HS_FIXED_NEWSTYLE: u16 = 1;
const HS_NO_ZEROES: u16 = 2;

/// How long connecting and the handshake may take before the job fails (ETIMEDOUT).
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a worker waits for any reply while it has requests in flight before it
/// fails them with ETIMEDOUT: a hung server must not hang the run forever.
pub const REPLY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
/// What a reply timeout taken from `io_timeout` adds to it, so the watchdog (which names
/// the hung I/O) normally acts first and the socket's timeout is the backstop.
const REPLY_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// A connection's timeouts: CONNECT_TIMEOUT and REPLY_TIMEOUT, or the job's `io_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: std::time::Duration,
    pub reply: std::time::Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: CONNECT_TIMEOUT,
            reply: REPLY_TIMEOUT,
        }
    }
}

impl Timeouts {
    /// The timeouts of a job with `io_timeout` (µs; 0 = the defaults): connecting and the
    /// handshake get `io_timeout`, replies `io_timeout` and a grace second.
    pub fn with_io_timeout(io_timeout_us: u64) -> Self {
        if io_timeout_us == 0 {
            return Timeouts::default();
        }
        let t = std::time::Duration::from_micros(io_timeout_us);
        Timeouts {
            connect: t,
            reply: t + REPLY_GRACE,
        }
    }
}

/// The errno an NBD error reply stands for, as the protocol defines them (the values are
/// Linux's); any other value is EINVAL, as the protocol asks of unknown errors.
pub fn errno_of(nbd_error: u32) -> i32 {
    match nbd_error {
        1 => libc::EPERM,
        5 => libc::EIO,
        12 => libc::ENOMEM,
        22 => libc::EINVAL,
        28 => libc::ENOSPC,
        75 => libc::EOVERFLOW,
        95 => libc::EOPNOTSUPP,
        108 => libc::ESHUTDOWN,
        _ => libc::EINVAL,
    }
}

/// Connects to `addr` and negotiates its export, ready for transmission. Connecting and
/// the handshake time out (`limits.connect`); replies then time out after `limits.reply`.
pub fn connect(addr: &Address, limits: Timeouts) -> io::Result<(Stream, Export)> {
    let timed_out_in = |stage: &str, e: io::Error| {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            crate::error::with_path(
                &format!(
                    "{stage} within {:.1} s (io_timeout sets the limit)",
                    limits.connect.as_secs_f64()
                ),
                io::Error::from_raw_os_error(libc::ETIMEDOUT),
            )
        } else {
            e
        }
    };
    let timed_out = |e| timed_out_in("no connection to the NBD server", e);
    let mut s = match &addr.endpoint {
        Endpoint::Tcp { host, port } => {
            use std::net::ToSocketAddrs;
            let mut last = io::Error::new(io::ErrorKind::NotFound, "no address for the host");
            let mut found = None;
            for a in (host.as_str(), *port).to_socket_addrs()? {
                match TcpStream::connect_timeout(&a, limits.connect) {
                    Ok(t) => {
                        found = Some(t);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            let t = found.ok_or_else(|| timed_out(last))?;
            t.set_nodelay(true)?;
            t.set_read_timeout(Some(limits.connect))?;
            t.set_write_timeout(Some(limits.connect))?;
            Stream::Tcp(t)
        }
        Endpoint::Unix { socket } => {
            let u = UnixStream::connect(socket)?;
            u.set_read_timeout(Some(limits.connect))?;
            u.set_write_timeout(Some(limits.connect))?;
            Stream::Unix(u)
        }
    };
    let export = handshake(&mut s, &addr.export).map_err(|e| {
        timed_out_in(
            "the NBD server accepted the connection but did not complete its handshake",
            e,
        )
    })?;
    if export.size > i64::MAX as u64 {
        return Err(proto_err(format!(
            "the NBD server advertises an export of {} bytes, more than 2^63",
            export.size
        )));
    }
    match &s {
        Stream::Tcp(t) => {
            t.set_read_timeout(Some(limits.reply))?;
            t.set_write_timeout(Some(limits.reply))?;
        }
        Stream::Unix(u) => {
            u.set_read_timeout(Some(limits.reply))?;
            u.set_write_timeout(Some(limits.reply))?;
        }
    }
    Ok((s, export))
}

fn proto_err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn read_u16(s: &mut impl Read) -> io::Result<u16> {
    let mut b = [0u8; 2];
    s.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}

fn read_u32(s: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64(s: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    s.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn send_option(s: &mut impl Write, opt: u32, data: &[u8]) -> io::Result<()> {
    let mut msg = Vec::with_capacity(16 + data.len());
    msg.extend_from_slice(&IHAVEOPT.to_be_bytes());
    msg.extend_from_slice(&opt.to_be_bytes());
    msg.extend_from_slice(&(data.len() as u32).to_be_bytes());
    msg.extend_from_slice(data);
    s.write_all(&msg)
}

/// The newstyle handshake; returns the export's size and flags. Public for the
/// `nbd_reply` fuzz target, which feeds it arbitrary server bytes.
pub fn handshake<S: Read + Write>(s: &mut S, export: &str) -> io::Result<Export> {
    if read_u64(s)? != NBDMAGIC {
        return Err(proto_err("not an NBD server (bad greeting)"));
    }
    match read_u64(s)? {
        IHAVEOPT => {}
        OLDSTYLE => return Err(proto_err("oldstyle NBD servers are not supported")),
        _ => return Err(proto_err("not an NBD server (bad greeting)")),
    }
    let hs = read_u16(s)?;
    let client = (hs & (HS_FIXED_NEWSTYLE | HS_NO_ZEROES)) as u32;
    s.write_all(&client.to_be_bytes())?;
    let no_zeroes = hs & HS_NO_ZEROES != 0;
    if hs & HS_FIXED_NEWSTYLE != 0 {
        let mut data = Vec::with_capacity(6 + export.len());
        data.extend_from_slice(&(export.len() as u32).to_be_bytes());
        data.extend_from_slice(export.as_bytes());
        data.extend_from_slice(&0u16.to_be_bytes());
        send_option(s, OPT_GO, &data)?;
        let mut found: Option<Export> = None;
        loop {
            if read_u64(s)? != REPLY_MAGIC_OPT {
                return Err(proto_err("bad option reply from the NBD server"));
            }
            let _opt = read_u32(s)?;
            let kind = read_u32(s)?;
            let len = read_u32(s)? as usize;
            if len > 1 << 20 {
                return Err(proto_err("oversized option reply from the NBD server"));
            }
            let mut body = vec![0u8; len];
            s.read_exact(&mut body)?;
            match kind {
                REP_ACK => {
                    return found.ok_or_else(|| proto_err("the NBD server sent no export size"));
                }
                REP_INFO
                    if body.len() >= 12
                        && u16::from_be_bytes([body[0], body[1]]) == INFO_EXPORT =>
                {
                    let size = u64::from_be_bytes(body[2..10].try_into().expect("8 bytes"));
                    let flags = u16::from_be_bytes([body[10], body[11]]);
                    found = Some(Export { size, flags });
                }
                REP_INFO => {}
                REP_ERR_UNSUP => break,
                k if k & (1 << 31) != 0 => {
                    let text = String::from_utf8_lossy(&body);
                    return Err(io::Error::other(format!(
                        "the NBD server refused export '{export}' (error {:#x}{}{text})",
                        k,
                        if text.is_empty() { "" } else { ": " }
                    )));
                }
                _ => {}
            }
        }
    }
    // A server without NBD_OPT_GO: the older option, which ends the handshake at once.
    send_option(s, OPT_EXPORT_NAME, export.as_bytes())?;
    let size = read_u64(s)?;
    let flags = read_u16(s)?;
    if !no_zeroes {
        let mut zeroes = [0u8; 124];
        s.read_exact(&mut zeroes)?;
    }
    Ok(Export { size, flags })
}

/// A request header of the transmission phase.
#[inline]
pub fn request(cmd: u16, cookie: u64, offset: u64, len: u32) -> [u8; 28] {
    let mut h = [0u8; 28];
    h[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    h[6..8].copy_from_slice(&cmd.to_be_bytes());
    h[8..16].copy_from_slice(&cookie.to_be_bytes());
    h[16..24].copy_from_slice(&offset.to_be_bytes());
    h[24..28].copy_from_slice(&len.to_be_bytes());
    h
}

/// Asks for the export's size without keeping the connection (the job's size is known
/// before its workers start, as fio's nbd engine does).
pub fn export_size(uri: &str, limits: Timeouts) -> io::Result<u64> {
    let addr = parse_uri(uri).map_err(io::Error::other)?;
    let (mut s, e) = connect(&addr, limits)?;
    let _ = s.write_all(&request(CMD_DISC, 0, 0, 0));
    Ok(e.size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_as_libnbd_writes_them() {
        let a = parse_uri("nbd://localhost").unwrap();
        assert_eq!(
            a.endpoint,
            Endpoint::Tcp {
                host: "localhost".into(),
                port: DEFAULT_PORT
            }
        );
        assert_eq!(a.export, "");
        let a = parse_uri("nbd://10.0.0.2:7788/disk%201").unwrap();
        assert_eq!(
            a.endpoint,
            Endpoint::Tcp {
                host: "10.0.0.2".into(),
                port: 7788
            }
        );
        assert_eq!(a.export, "disk 1");
        let a = parse_uri("nbd://[::1]:10810/x").unwrap();
        assert_eq!(
            a.endpoint,
            Endpoint::Tcp {
                host: "::1".into(),
                port: 10810
            }
        );
        let a = parse_uri("nbd+unix:///?socket=/tmp/s").unwrap();
        assert_eq!(
            a.endpoint,
            Endpoint::Unix {
                socket: "/tmp/s".into()
            }
        );
        for bad in [
            "localhost",
            "nbd://",
            "nbd://h:port",
            "nbd+unix:///x",
            "nbds://h/x",
            "http://h/x",
            "nbd://h/x?tls=1",
        ] {
            assert!(parse_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn request_header_layout() {
        let h = request(CMD_WRITE, 7, 4096, 512);
        assert_eq!(&h[0..4], &[0x25, 0x60, 0x95, 0x13]);
        assert_eq!(&h[4..8], &[0, 0, 0, 1]);
        assert_eq!(u64::from_be_bytes(h[8..16].try_into().unwrap()), 7);
        assert_eq!(u64::from_be_bytes(h[16..24].try_into().unwrap()), 4096);
        assert_eq!(u32::from_be_bytes(h[24..28].try_into().unwrap()), 512);
    }
}
