//! VTRIGGER's payloads (fio 3.33's `--trigger-remote` with `--client`). The client sends
//! the command its servers are to run (a 16-bit length, then the bytes, no NUL); each
//! server answers with the verify state of every job thread of its run, fio's
//! `all_io_list`: a 64-bit thread count, then one `thread_io_list` per thread. The client
//! writes each as a verify state file, `<server>-<job>-<index>-verify.state`, so that a
//! later `verify_state_load` run (after the server host was power-cycled, say) checks only
//! what is known to have landed.
//!
//! A thread's record is kept as the bytes of its C struct: the client writes them into the
//! file as they came (after fio's 24-byte header: format version, size, CRC32C), so a file
//! written here is the one fio's client writes for the same reply.

/// The first protocol version whose fio may lay the verify states out otherwise: fio 3.39
/// (`max_no_comps_per_file`, header version 4) kept 3.38's version, 107; 3.41 replaced
/// the completions with in-flight writes (header version 5). iobench reads and writes
/// fio 3.33's layout only, so states are not exchanged with peers from this version on.
pub const NEWER_LAYOUT_FROM: u16 = 107;

use super::{Fields, Image, ProtoError};

/// Bytes of `thread_io_list` before its completions: no_comps, depth, nofiles, numberio,
/// index, the random state (56 bytes) and the job's name (64).
pub const LIST_HEAD: usize = 152;
/// The state file's header: format version, record size, CRC32C of the record.
pub const FILE_HDR: usize = 24;
/// The state file format fio 3.33 writes and reads (`VSTATE_HDR_VERSION`).
pub const FILE_VERSION: u64 = 3;
/// Bytes of one completion: file number and offset.
const COMP: usize = 16;

/// One job thread's verify state, as the bytes of fio's `thread_io_list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadState {
    raw: Vec<u8>,
}

/// What a thread's state says, for building one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateFields {
    pub name: String,
    /// fio's thread index (its thread number minus one).
    pub index: u64,
    /// The job's `iodepth` and its file count: the record has room for
    /// `depth * nofiles` completions.
    pub depth: u32,
    pub nofiles: u32,
    /// Writes issued.
    pub numberio: u64,
    /// (file number, offset) of the writes seen complete, newest first per file.
    pub comps: Vec<(u64, u64)>,
}

/// The size of a record of `depth * nofiles` completions, or `None` when it overflows.
fn record_len(depth: u32, nofiles: u32) -> Option<usize> {
    (depth as usize)
        .checked_mul(nofiles as usize)?
        .checked_mul(COMP)?
        .checked_add(LIST_HEAD)
}

impl ThreadState {
    /// A record from its fields (the random state left zero: nothing reads it back). At
    /// most `depth * nofiles` completions fit; the rest of the room stays zero, as fio
    /// leaves it.
    pub fn new(f: &StateFields) -> ThreadState {
        let room = (f.depth as usize).saturating_mul(f.nofiles as usize);
        let comps = &f.comps[..f.comps.len().min(room)];
        let len = record_len(f.depth, f.nofiles).unwrap_or(LIST_HEAD);
        let mut i = Image::new(len.max(LIST_HEAD + comps.len() * COMP));
        i.u64(0, comps.len() as u64);
        i.u32(8, f.depth);
        i.u32(12, f.nofiles);
        i.u64(16, f.numberio);
        i.u64(24, f.index);
        i.cstr(88, 64, &f.name);
        for (k, (file, off)) in comps.iter().enumerate() {
            i.u64(LIST_HEAD + k * COMP, *file);
            i.u64(LIST_HEAD + k * COMP + 8, *off);
        }
        ThreadState { raw: i.0 }
    }

    /// The record inside a verify state file (header checked: version, size, checksum).
    pub fn from_state_file(b: &[u8]) -> Result<ThreadState, String> {
        let f = Fields::new(b, "verify state", FILE_HDR).map_err(|e| e.to_string())?;
        let (version, size, crc) = (
            f.u64(0).map_err(|e| e.to_string())?,
            f.u64(8).map_err(|e| e.to_string())?,
            f.u64(16).map_err(|e| e.to_string())?,
        );
        if version != FILE_VERSION {
            return Err(format!(
                "unsupported version {version} (expected {FILE_VERSION})"
            ));
        }
        let body = b
            .get(FILE_HDR..FILE_HDR.saturating_add(size as usize))
            .ok_or("shorter than its header says")?;
        if crate::verify::checksum::crc32c_fio(body) as u64 != crc {
            return Err("checksum mismatch".into());
        }
        let mut list = Vec::with_capacity(8 + body.len());
        list.extend_from_slice(&1u64.to_le_bytes());
        list.extend_from_slice(body);
        let mut one = decode_list(&list).map_err(|e| e.to_string())?;
        one.pop().ok_or_else(|| "no record".to_string())
    }

    fn field(&self) -> Fields<'_> {
        Fields {
            buf: &self.raw,
            op: "VTRIGGER",
        }
    }
    pub fn name(&self) -> String {
        self.field().cstr(88, 64).unwrap_or_default()
    }
    pub fn index(&self) -> u64 {
        self.field().u64(24).unwrap_or(0)
    }
    pub fn depth(&self) -> u32 {
        self.field().u32(8).unwrap_or(0)
    }
    pub fn nofiles(&self) -> u32 {
        self.field().u32(12).unwrap_or(0)
    }
    pub fn numberio(&self) -> u64 {
        self.field().u64(16).unwrap_or(0)
    }
    pub fn no_comps(&self) -> u64 {
        self.field().u64(0).unwrap_or(0)
    }

    /// The file fio's client writes for this record of server `prefix` (the address it
    /// reached, or `sock`): `<prefix>-<job, '/' as '.'>-<index>-verify.state`.
    pub fn file_name(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}-{}-verify.state",
            self.name().replace('/', "."),
            self.index()
        )
    }

    /// The whole state file: fio's header, then the record.
    pub fn state_file(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FILE_HDR + self.raw.len());
        out.extend_from_slice(&FILE_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.raw.len() as u64).to_le_bytes());
        let crc = crate::verify::checksum::crc32c_fio(&self.raw) as u64;
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&self.raw);
        out
    }
}

/// A server's VTRIGGER answer: the thread count, then every record.
pub fn encode_list(states: &[ThreadState]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + states.iter().map(|s| s.raw.len()).sum::<usize>());
    out.extend_from_slice(&(states.len() as u64).to_le_bytes());
    for s in states {
        out.extend_from_slice(&s.raw);
    }
    out
}

/// Splits a VTRIGGER answer into its records; each record's size follows from its own
/// depth and file count, so a count or size the payload cannot hold is an error.
pub fn decode_list(b: &[u8]) -> Result<Vec<ThreadState>, ProtoError> {
    let op = "VTRIGGER";
    let threads = Fields::new(b, op, 8)?.u64(0)?;
    let mut rest = &b[8..];
    if threads > (rest.len() / LIST_HEAD) as u64 {
        return Err(ProtoError::Malformed {
            op,
            why: format!(
                "{threads} thread states announced, {} bytes sent",
                rest.len()
            ),
        });
    }
    let mut out = Vec::with_capacity(threads as usize);
    for n in 0..threads {
        let f = Fields::new(rest, op, LIST_HEAD)?;
        let (depth, nofiles) = (f.u32(8)?, f.u32(12)?);
        let len = record_len(depth, nofiles)
            .filter(|&l| l <= rest.len())
            .ok_or_else(|| ProtoError::Malformed {
                op,
                why: format!(
                    "thread state {n}: room for {depth} x {nofiles} completions, {} bytes left",
                    rest.len()
                ),
            })?;
        if f.u64(0)? > (depth as u64) * (nofiles as u64) {
            return Err(ProtoError::Malformed {
                op,
                why: format!("thread state {n}: more completions than room"),
            });
        }
        out.push(ThreadState {
            raw: rest[..len].to_vec(),
        });
        rest = &rest[len..];
    }
    Ok(out)
}

/// The command a client's VTRIGGER asks the server to run (fio's `--trigger-remote`; empty
/// for none).
pub fn encode_command(cmd: &str) -> Vec<u8> {
    let b = &cmd.as_bytes()[..cmd.len().min(u16::MAX as usize)];
    let mut out = Vec::with_capacity(2 + b.len());
    out.extend_from_slice(&(b.len() as u16).to_le_bytes());
    out.extend_from_slice(b);
    out
}

pub fn decode_command(b: &[u8]) -> Result<String, ProtoError> {
    let len = Fields::new(b, "VTRIGGER", 2)?.u16(0)? as usize;
    let body = b.get(2..2 + len).ok_or(ProtoError::Short {
        op: "VTRIGGER",
        have: b.len(),
        need: 2 + len,
    })?;
    let end = body.iter().position(|&c| c == 0).unwrap_or(body.len());
    Ok(String::from_utf8_lossy(&body[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ThreadState {
        ThreadState::new(&StateFields {
            name: "a/vs".into(),
            index: 3,
            depth: 4,
            nofiles: 1,
            numberio: 16,
            comps: vec![(0, 0xc000), (0, 0x9000), (0, 0x4000), (0, 0x3000)],
        })
    }

    #[test]
    fn records_round_trip_through_the_list_and_the_file() {
        let s = sample();
        assert_eq!(s.raw.len(), 152 + 4 * 16, "fio's thread_io_list_sz");
        assert_eq!((s.depth(), s.nofiles(), s.numberio()), (4, 1, 16));
        assert_eq!((s.index(), s.no_comps(), s.name()), (3, 4, "a/vs".into()));
        assert_eq!(s.file_name("127.0.0.1"), "127.0.0.1-a.vs-3-verify.state");
        let plain = ThreadState::new(&StateFields {
            name: "plain".into(),
            depth: 1,
            nofiles: 2,
            ..Default::default()
        });
        let list = encode_list(&[s.clone(), plain.clone()]);
        assert_eq!(decode_list(&list).unwrap(), vec![s.clone(), plain]);
        let file = s.state_file();
        assert_eq!(ThreadState::from_state_file(&file).unwrap(), s);
        // The local verify state reader reads it as one of fio's files.
        let l = crate::verify::state::Loaded::parse(&file).unwrap();
        assert_eq!(l.numberio, 16);
        assert_eq!(l.comps[0], (0, 0xc000));
        let mut bad = file.clone();
        bad[FILE_HDR + 20] ^= 1;
        assert!(ThreadState::from_state_file(&bad).is_err());
    }

    #[test]
    fn hostile_lists_are_errors() {
        let s = sample().raw;
        let mut list = encode_list(&[sample()]);
        list[0] = 200;
        assert!(decode_list(&list).is_err(), "more threads than bytes");
        let mut huge = 1u64.to_le_bytes().to_vec();
        let mut r = s.clone();
        r[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        r[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&r);
        assert!(decode_list(&huge).is_err(), "room past the payload");
        let mut over = 1u64.to_le_bytes().to_vec();
        let mut r = s;
        r[0..8].copy_from_slice(&9u64.to_le_bytes());
        over.extend_from_slice(&r);
        assert!(decode_list(&over).is_err(), "completions past the room");
        assert!(
            decode_list(&[0; 8]).unwrap().is_empty(),
            "fio's empty answer"
        );
    }

    #[test]
    fn commands_round_trip() {
        let b = encode_command("touch /tmp/x");
        assert_eq!(b.len(), 2 + 12, "as fio sends it: no NUL");
        assert_eq!(decode_command(&b).unwrap(), "touch /tmp/x");
        assert_eq!(decode_command(&encode_command("")).unwrap(), "");
        assert!(decode_command(&[9, 0, b'a']).is_err());
    }
}
