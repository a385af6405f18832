//! fio 3.33's client/server wire format, written from its protocol description (server.h):
//! every message is a 24-byte little-endian command header followed by a payload (PDU) of at
//! most 1024 bytes; longer payloads travel as fragments flagged `MORE` and are joined by the
//! reader. The header's first 20 bytes and the payload each carry a CRC-16 (fio's, the ARC
//! polynomial). Each fio release speaks one protocol version (`FIO_SERVER_VER`: 97 for
//! fio 3.33 up to 121 for fio's master) and refuses every other; iobench reads and writes
//! them all ([`version`]): a connection speaks the version of its first message.
//!
//! This module is pure bytes: no sockets and no I/O beyond `Read`/`Write`, so the same code
//! serves the server, the client and the fuzz target. [`pdu`] holds the small payloads
//! (probe, text, start/stop, job, job line, job option, ETA), [`ts`] the large ones whose
//! layout follows fio's C structs (thread_stat, group_run_stats, disk_util) and their
//! conversion to and from iobench's statistics, [`iolog`] the (zlib-compressed) log samples,
//! [`vstate`] the verify states a trigger (VTRIGGER) brings back.

pub mod addr;
pub mod iolog;
pub mod pdu;
pub mod stream;
pub mod ts;
pub mod version;
pub mod vstate;

pub use version::Proto;

use crc::{Crc, Table};
use std::io::{Read, Write};

/// fio 3.33's protocol version (`FIO_SERVER_VER`), the one [`encode`] and [`send`] write.
pub const VERSION: u16 = 97;
/// The oldest protocol version iobench speaks (fio 3.33's).
pub const OLDEST_VERSION: u16 = version::Proto::OLDEST.number();
/// The newest protocol version iobench speaks (fio's master, after 3.42).
pub const NEWEST_VERSION: u16 = version::Proto::NEWEST.number();
/// fio's default server port.
pub const DEFAULT_PORT: u16 = 8765;
/// Largest payload of one fragment (`FIO_SERVER_MAX_FRAGMENT_PDU`).
pub const MAX_FRAGMENT: usize = 1024;
/// Largest joined payload iobench accepts. fio allows 2 GiB; the largest message fio 3.33
/// sends is a thread_stat with steady-state rings (about 200 KiB) or an iolog chunk, so 64
/// MiB is generous while keeping a hostile peer from making the reader allocate gigabytes.
pub const MAX_PAYLOAD: usize = 64 << 20;
/// Largest joined payload a server accepts from a client. fio's server takes up to 2 GiB
/// (`FIO_SERVER_MAX_CMD_MB`); what a client really sends is a job file, a command line, a
/// trigger command or a verify state file (a few KiB each), so 8 MiB leaves room for a
/// very large job file while keeping each connection's buffer small (see docs/security.md).
pub const SERVER_MAX_PAYLOAD: usize = 8 << 20;
/// Size of the command header.
pub const HDR_LEN: usize = 24;
/// Header flag: more fragments of this payload follow.
pub const F_MORE: u32 = 1;

/// Opcodes (`FIO_NET_CMD_*`).
pub mod op {
    pub const QUIT: u16 = 1;
    pub const EXIT: u16 = 2;
    pub const JOB: u16 = 3;
    pub const JOBLINE: u16 = 4;
    pub const TEXT: u16 = 5;
    pub const TS: u16 = 6;
    pub const GS: u16 = 7;
    pub const SEND_ETA: u16 = 8;
    pub const ETA: u16 = 9;
    pub const PROBE: u16 = 10;
    pub const START: u16 = 11;
    pub const STOP: u16 = 12;
    pub const DU: u16 = 13;
    pub const SERVER_START: u16 = 14;
    pub const ADD_JOB: u16 = 15;
    pub const RUN: u16 = 16;
    pub const IOLOG: u16 = 17;
    pub const UPDATE_JOB: u16 = 18;
    pub const LOAD_FILE: u16 = 19;
    pub const VTRIGGER: u16 = 20;
    pub const SENDFILE: u16 = 21;
    pub const JOB_OPT: u16 = 22;
    /// First opcode fio 3.33 does not know.
    pub const NR: u16 = 23;
    /// iobench extension, only between iobench peers that agreed on
    /// [`PROBE_FLAG_SYNC_START`](super::pdu::PROBE_FLAG_SYNC_START): the server's files are
    /// laid out and its jobs wait for the client's go.
    pub const IOB_READY: u16 = 200;
    /// iobench extension: the client's go, once every synchronised server is ready.
    pub const IOB_GO: u16 = 201;

    /// The opcode's name, as fio's debug output spells it.
    pub fn name(op: u16) -> &'static str {
        const NAMES: [&str; 23] = [
            "",
            "QUIT",
            "EXIT",
            "JOB",
            "JOBLINE",
            "TEXT",
            "TS",
            "GS",
            "SEND_ETA",
            "ETA",
            "PROBE",
            "START",
            "STOP",
            "DU",
            "SERVER_START",
            "ADD_JOB",
            "RUN",
            "IOLOG",
            "UPDATE_JOB",
            "LOAD_FILE",
            "VTRIGGER",
            "SENDFILE",
            "JOB_OPT",
        ];
        match op {
            IOB_READY => "IOB_READY",
            IOB_GO => "IOB_GO",
            _ => NAMES.get(op as usize).copied().unwrap_or("UNKNOWN"),
        }
    }
}

/// What can be wrong with a message on the wire.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("connection closed by the peer")]
    Closed,
    #[error("message truncated: the connection ended inside a {0}")]
    Truncated(&'static str),
    #[error("bad command header checksum (got {got:#06x}, computed {want:#06x})")]
    HeaderCrc { got: u16, want: u16 },
    #[error(
        "client/server protocol version mismatch: the peer speaks version {got}, iobench \
         speaks versions {OLDEST_VERSION} (fio 3.33) to {NEWEST_VERSION} (fio master)"
    )]
    Version { got: u16 },
    #[error("client/server protocol version changed mid-connection: version {first}, then {next}")]
    VersionChanged { first: u16, next: u16 },
    #[error("fragment payload too large: {0} bytes (at most {MAX_FRAGMENT})")]
    FragmentTooLarge(u32),
    #[error("message payload too large: more than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("bad payload checksum on {op} (got {got:#06x}, computed {want:#06x})")]
    PayloadCrc {
        op: &'static str,
        got: u16,
        want: u16,
    },
    #[error("fragment opcode mismatch ({first} then {next})")]
    FragmentOpcode { first: u16, next: u16 },
    #[error("{op} payload too short: {have} bytes, at least {need} expected")]
    Short {
        op: &'static str,
        have: usize,
        need: usize,
    },
    #[error("malformed {op} payload: {why}")]
    Malformed { op: &'static str, why: String },
}

/// One whole message (fragments joined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    /// The protocol version its header carried (`VERSION` for one made here).
    pub version: u16,
    pub opcode: u16,
    /// Flags other than `MORE` (fio defines none today).
    pub flags: u32,
    /// Echoed in replies (PROBE, SEND_ETA): the asker's cookie.
    pub tag: u64,
    pub payload: Vec<u8>,
}

impl Cmd {
    pub fn new(opcode: u16, tag: u64, payload: Vec<u8>) -> Cmd {
        Cmd {
            version: VERSION,
            opcode,
            flags: 0,
            tag,
            payload,
        }
    }

    /// The opcode's name, for messages.
    pub fn name(&self) -> &'static str {
        op::name(self.opcode)
    }
}

static CRC16: Crc<u16, Table<1>> = Crc::<u16, Table<1>>::new(&crc::CRC_16_ARC);

/// fio's CRC-16 (polynomial 0x8005 reflected, initial value 0).
pub fn crc16(data: &[u8]) -> u16 {
    CRC16.checksum(data)
}

/// The header of one fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub opcode: u16,
    pub flags: u32,
    pub tag: u64,
    pub pdu_len: u32,
    pub cmd_crc: u16,
    pub pdu_crc: u16,
}

impl Header {
    /// Reads and checks a header: its checksum, then the version (one iobench speaks),
    /// then the fragment size.
    pub fn parse(b: &[u8; HDR_LEN]) -> Result<Header, ProtoError> {
        let le16 = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let le32 = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let h = Header {
            version: le16(0),
            opcode: le16(2),
            flags: le32(4),
            tag: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
            pdu_len: le32(16),
            cmd_crc: le16(20),
            pdu_crc: le16(22),
        };
        let want = crc16(&b[..20]);
        if want != h.cmd_crc {
            return Err(ProtoError::HeaderCrc {
                got: h.cmd_crc,
                want,
            });
        }
        if Proto::new(h.version).is_none() {
            return Err(ProtoError::Version { got: h.version });
        }
        if h.pdu_len as usize > MAX_FRAGMENT {
            return Err(ProtoError::FragmentTooLarge(h.pdu_len));
        }
        Ok(h)
    }
}

/// Appends one fragment (header and payload) to `out`.
fn put_fragment(out: &mut Vec<u8>, version: u16, opcode: u16, flags: u32, tag: u64, pdu: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&opcode.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&(pdu.len() as u32).to_le_bytes());
    let cmd_crc = crc16(&out[start..start + 20]);
    out.extend_from_slice(&cmd_crc.to_le_bytes());
    out.extend_from_slice(&crc16(pdu).to_le_bytes());
    out.extend_from_slice(pdu);
}

/// The bytes of a message: its payload cut into fragments of at most 1024 bytes, all but the
/// last flagged `MORE`, as fio sends them. An empty payload is one bare header.
pub fn encode(opcode: u16, tag: u64, payload: &[u8]) -> Vec<u8> {
    encode_as(VERSION, opcode, tag, payload)
}

/// [`encode`] in protocol version `version`.
pub fn encode_as(version: u16, opcode: u16, tag: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + HDR_LEN * (payload.len() / MAX_FRAGMENT + 1));
    if payload.is_empty() {
        put_fragment(&mut out, version, opcode, 0, tag, &[]);
        return out;
    }
    let mut chunks = payload.chunks(MAX_FRAGMENT).peekable();
    while let Some(c) = chunks.next() {
        let flags = if chunks.peek().is_some() { F_MORE } else { 0 };
        put_fragment(&mut out, version, opcode, flags, tag, c);
    }
    out
}

/// Writes one message.
pub fn send<W: Write>(w: &mut W, opcode: u16, tag: u64, payload: &[u8]) -> std::io::Result<()> {
    send_as(w, VERSION, opcode, tag, payload)
}

/// [`send`] in protocol version `version`.
pub fn send_as<W: Write>(
    w: &mut W,
    version: u16,
    opcode: u16,
    tag: u64,
    payload: &[u8],
) -> std::io::Result<()> {
    w.write_all(&encode_as(version, opcode, tag, payload))?;
    w.flush()
}

/// Reads exactly `buf.len()` bytes; `what` names the part for a truncation error.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8], what: &'static str) -> Result<(), ProtoError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => return Err(ProtoError::Truncated(what)),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads one whole message, joining its fragments and checking every checksum. A connection
/// closed cleanly between messages is [`ProtoError::Closed`]; inside one, `Truncated`.
pub fn read_cmd<R: Read>(r: &mut R) -> Result<Cmd, ProtoError> {
    read_cmd_max(r, MAX_PAYLOAD)
}

/// [`read_cmd`] with a smaller limit on the joined payload (the server's, for what a
/// client sends): a message over `max` bytes is [`ProtoError::PayloadTooLarge`].
pub fn read_cmd_max<R: Read>(r: &mut R, max: usize) -> Result<Cmd, ProtoError> {
    let mut cmd: Option<Cmd> = None;
    loop {
        let mut hb = [0u8; HDR_LEN];
        if cmd.is_none() {
            // A clean end of stream is allowed only before a message's first byte.
            let mut first = [0u8; 1];
            loop {
                match r.read(&mut first) {
                    Ok(0) => return Err(ProtoError::Closed),
                    Ok(_) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
            hb[0] = first[0];
            read_full(r, &mut hb[1..], "command header")?;
        } else {
            read_full(r, &mut hb, "command header")?;
        }
        let h = Header::parse(&hb)?;
        let mut pdu = vec![0u8; h.pdu_len as usize];
        read_full(r, &mut pdu, "payload")?;
        let want = crc16(&pdu);
        if want != h.pdu_crc {
            return Err(ProtoError::PayloadCrc {
                op: op::name(h.opcode),
                got: h.pdu_crc,
                want,
            });
        }
        let c = match &mut cmd {
            None => cmd.insert(Cmd {
                version: h.version,
                opcode: h.opcode,
                flags: h.flags & !F_MORE,
                tag: h.tag,
                payload: Vec::new(),
            }),
            Some(c) => {
                if c.version != h.version {
                    return Err(ProtoError::VersionChanged {
                        first: c.version,
                        next: h.version,
                    });
                }
                if c.opcode != h.opcode {
                    return Err(ProtoError::FragmentOpcode {
                        first: c.opcode,
                        next: h.opcode,
                    });
                }
                c
            }
        };
        if c.payload.len() + pdu.len() > max {
            return Err(ProtoError::PayloadTooLarge(max));
        }
        c.payload.extend_from_slice(&pdu);
        if h.flags & F_MORE == 0 {
            return Ok(cmd.expect("set above"));
        }
    }
}

/// Splits a byte stream into messages (for tests and the fuzz target): every whole message,
/// then the error that ended the stream (`Closed` when it ended cleanly).
pub fn decode_all(mut bytes: &[u8]) -> (Vec<Cmd>, ProtoError) {
    let mut out = Vec::new();
    loop {
        match read_cmd(&mut bytes) {
            Ok(c) => out.push(c),
            Err(e) => return (out, e),
        }
    }
}

/// Little-endian field access at fixed offsets of a C struct image, bounds-checked: a short
/// payload reads as an error, never a panic.
pub(crate) struct Fields<'a> {
    pub buf: &'a [u8],
    pub op: &'static str,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8], op: &'static str, need: usize) -> Result<Self, ProtoError> {
        if buf.len() < need {
            return Err(ProtoError::Short {
                op,
                have: buf.len(),
                need,
            });
        }
        Ok(Fields { buf, op })
    }

    fn bytes<const N: usize>(&self, off: usize) -> Result<[u8; N], ProtoError> {
        self.buf
            .get(off..off + N)
            .map(|s| s.try_into().expect("N bytes"))
            .ok_or(ProtoError::Short {
                op: self.op,
                have: self.buf.len(),
                need: off + N,
            })
    }
    pub fn u8(&self, off: usize) -> Result<u8, ProtoError> {
        Ok(self.bytes::<1>(off)?[0])
    }
    pub fn u16(&self, off: usize) -> Result<u16, ProtoError> {
        Ok(u16::from_le_bytes(self.bytes(off)?))
    }
    pub fn u32(&self, off: usize) -> Result<u32, ProtoError> {
        Ok(u32::from_le_bytes(self.bytes(off)?))
    }
    pub fn u64(&self, off: usize) -> Result<u64, ProtoError> {
        Ok(u64::from_le_bytes(self.bytes(off)?))
    }
    /// A double sent as its IEEE 754 bit pattern (fio's `fio_fp64_t`).
    pub fn f64(&self, off: usize) -> Result<f64, ProtoError> {
        Ok(f64::from_bits(self.u64(off)?))
    }
    /// A NUL-terminated string in a fixed field of `len` bytes (lossy UTF-8).
    pub fn cstr(&self, off: usize, len: usize) -> Result<String, ProtoError> {
        let s = self.buf.get(off..off + len).ok_or(ProtoError::Short {
            op: self.op,
            have: self.buf.len(),
            need: off + len,
        })?;
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        Ok(String::from_utf8_lossy(&s[..end]).into_owned())
    }
}

/// Writing side of [`Fields`]: a zeroed struct image filled at fixed offsets.
pub(crate) struct Image(pub Vec<u8>);

impl Image {
    pub fn new(len: usize) -> Image {
        Image(vec![0; len])
    }
    pub fn u8(&mut self, off: usize, v: u8) {
        self.0[off] = v;
    }
    pub fn u16(&mut self, off: usize, v: u16) {
        self.0[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, off: usize, v: u32) {
        self.0[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, off: usize, v: u64) {
        self.0[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, off: usize, v: f64) {
        self.u64(off, v.to_bits());
    }
    /// A string in a fixed field of `len` bytes, cut to leave room for the NUL.
    pub fn cstr(&mut self, off: usize, len: usize, s: &str) {
        let b = s.as_bytes();
        let n = b.len().min(len.saturating_sub(1));
        self.0[off..off + n].copy_from_slice(&b[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_is_fios() {
        // fio's table has 0xc0c1 at index 1: the CRC of the single byte 1.
        assert_eq!(crc16(&[1]), 0xc0c1);
        assert_eq!(crc16(b"123456789"), 0xbb3d);
    }

    #[test]
    fn fragments_round_trip() {
        let payload: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let bytes = encode(op::TS, 7, &payload);
        assert_eq!(bytes.len(), 3000 + 3 * HDR_LEN);
        // The first two fragments say MORE, the last does not.
        assert_eq!(bytes[4], 1);
        assert_eq!(bytes[HDR_LEN + 1024 + 4], 1);
        assert_eq!(bytes[2 * (HDR_LEN + 1024) + 4], 0);
        let (cmds, end) = decode_all(&bytes);
        assert!(matches!(end, ProtoError::Closed));
        assert_eq!(cmds, vec![Cmd::new(op::TS, 7, payload)]);
    }

    #[test]
    fn damaged_messages_are_errors() {
        let good = encode(op::TEXT, 0, b"hello");
        let mut b = good.clone();
        b[0] = 96;
        // The version is under the header checksum: fix it up to see the version error.
        let crc = crc16(&b[..20]);
        b[20..22].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(decode_all(&b).1, ProtoError::Version { got: 96 }));
        let mut b = good.clone();
        b[3] ^= 1;
        assert!(matches!(decode_all(&b).1, ProtoError::HeaderCrc { .. }));
        let mut b = good.clone();
        b[HDR_LEN] ^= 1;
        assert!(matches!(decode_all(&b).1, ProtoError::PayloadCrc { .. }));
        assert!(matches!(
            decode_all(&good[..good.len() - 1]).1,
            ProtoError::Truncated("payload")
        ));
        assert!(matches!(
            decode_all(&good[..10]).1,
            ProtoError::Truncated("command header")
        ));
        let msg = ProtoError::Version { got: 96 }.to_string();
        assert!(msg.contains("96") && msg.contains("97"), "{msg}");
    }

    #[test]
    fn every_version_from_97_to_121_is_read_and_no_other() {
        for v in OLDEST_VERSION..=NEWEST_VERSION {
            let (cmds, end) = decode_all(&encode_as(v, op::TEXT, 3, &[1; 2000]));
            assert!(matches!(end, ProtoError::Closed), "version {v}");
            assert_eq!(cmds.len(), 1);
            assert_eq!(cmds[0].version, v);
        }
        for v in [96, 122, 0, 0xffff] {
            assert!(matches!(
                decode_all(&encode_as(v, op::TEXT, 0, b"x")).1,
                ProtoError::Version { got } if got == v
            ));
        }
        // A message's fragments all carry one version.
        let mut b = Vec::new();
        put_fragment(&mut b, 97, op::TS, F_MORE, 0, b"a");
        put_fragment(&mut b, 120, op::TS, 0, 0, b"b");
        assert!(matches!(
            decode_all(&b).1,
            ProtoError::VersionChanged {
                first: 97,
                next: 120
            }
        ));
        // The 3.33 encoding is unchanged.
        assert_eq!(
            encode(op::QUIT, 0, &[]),
            encode_as(VERSION, op::QUIT, 0, &[])
        );
        assert_eq!(&encode(op::QUIT, 0, &[])[..2], &[97, 0]);
    }

    #[test]
    fn fragments_must_share_an_opcode() {
        let mut b = Vec::new();
        put_fragment(&mut b, VERSION, op::TS, F_MORE, 0, b"a");
        put_fragment(&mut b, VERSION, op::GS, 0, 0, b"b");
        assert!(matches!(
            decode_all(&b).1,
            ProtoError::FragmentOpcode { first: 6, next: 7 }
        ));
    }
}
