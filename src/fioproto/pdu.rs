//! The small payloads of fio 3.33's protocol, each as fio's C struct lays it out (server.h,
//! stat.h), with an encoder and a bounds-checked decoder.

use super::{op, Fields, Image, ProtoError};

/// `FIO_PROBE_FLAG_ZLIB`: the peer can inflate compressed logs.
pub const PROBE_FLAG_ZLIB: u64 = 1;
/// iobench's extension flag: a client that sets it in PROBE can start the servers
/// together; an iobench server echoes it. fio looks at the zlib bit only, so a fio peer
/// neither sees nor echoes it.
pub const PROBE_FLAG_SYNC_START: u64 = 1 << 40;
/// fio's `FIO_CLIENT_TYPE_CLI`.
pub const CLIENT_TYPE_CLI: u32 = 1;
/// fio's OS and architecture codes for Linux and x86-64 (os/os.h, arch/arch.h).
pub const OS_LINUX: u8 = 1;
pub const ARCH_X86_64: u8 = 1;

/// The client's PROBE: what it supports and the server address it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientProbe {
    pub flags: u64,
    pub server: String,
}

impl ClientProbe {
    pub const LEN: usize = 136;
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::LEN);
        i.u64(0, self.flags);
        i.cstr(8, 128, &self.server);
        i.0
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "PROBE", Self::LEN)?;
        Ok(ClientProbe {
            flags: f.u64(0)?,
            server: f.cstr(8, 128)?,
        })
    }
}

/// The server's answer to PROBE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReply {
    pub hostname: String,
    pub bigendian: u8,
    pub fio_version: String,
    pub os: u8,
    pub arch: u8,
    /// Bytes per pointer (8 on 64-bit hosts).
    pub bpp: u8,
    pub cpus: u32,
    pub flags: u64,
}

impl ProbeReply {
    pub const LEN: usize = 112;
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::LEN);
        i.cstr(0, 64, &self.hostname);
        i.u8(64, self.bigendian);
        i.cstr(65, 32, &self.fio_version);
        i.u8(97, self.os);
        i.u8(98, self.arch);
        i.u8(99, self.bpp);
        i.u32(100, self.cpus);
        i.u64(104, self.flags);
        i.0
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "PROBE reply", Self::LEN)?;
        Ok(ProbeReply {
            hostname: f.cstr(0, 64)?,
            bigendian: f.u8(64)?,
            fio_version: f.cstr(65, 32)?,
            os: f.u8(97)?,
            arch: f.u8(98)?,
            bpp: f.u8(99)?,
            cpus: f.u32(100)?,
            flags: f.u64(104)?,
        })
    }

    /// The line fio's client prints on a probe reply.
    pub fn line(&self) -> String {
        let os = match self.os {
            OS_LINUX => "Linux",
            _ => "unknown",
        };
        let arch = match self.arch {
            ARCH_X86_64 => "x86-64",
            _ => "unknown",
        };
        format!(
            "hostname={}, be={}, {}-bit, os={}, arch={}, fio={}, flags={:x}\n",
            self.hostname,
            self.bigendian,
            self.bpp as u32 * 8,
            os,
            arch,
            self.fio_version,
            self.flags
        )
    }
}

/// TEXT: a line of the server's log (informational or error), to be printed by the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// fio's log level: 1 debug, 2 info, 3 error.
    pub level: u32,
    pub log_sec: u64,
    pub log_usec: u64,
    pub text: String,
}

impl Text {
    pub const HDR: usize = 24;
    pub const INFO: u32 = 2;
    pub const ERR: u32 = 3;
    pub fn info(text: &str) -> Text {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Text {
            level: Self::INFO,
            log_sec: now.as_secs(),
            log_usec: now.subsec_micros() as u64,
            text: text.to_string(),
        }
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::HDR);
        i.u32(0, self.level);
        i.u32(4, self.text.len() as u32);
        i.u64(8, self.log_sec);
        i.u64(16, self.log_usec);
        let mut v = i.0;
        v.extend_from_slice(self.text.as_bytes());
        v
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "TEXT", Self::HDR)?;
        let len = f.u32(4)? as usize;
        let body = &b[Self::HDR..];
        let body = &body[..len.min(body.len())];
        let end = body.iter().position(|&c| c == 0).unwrap_or(body.len());
        Ok(Text {
            level: f.u32(0)?,
            log_sec: f.u64(8)?,
            log_usec: f.u64(16)?,
            text: String::from_utf8_lossy(&body[..end]).into_owned(),
        })
    }
}

/// START: the server parsed the jobs: how many job threads, how many reports it will send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub jobs: u32,
    pub stat_outputs: u32,
}

impl Start {
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(8);
        i.u32(0, self.jobs);
        i.u32(4, self.stat_outputs);
        i.0
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "START", 8)?;
        Ok(Start {
            jobs: f.u32(0)?,
            stat_outputs: f.u32(4)?,
        })
    }
}

/// STOP: the server's run ended, with its exit status (and the signal that ended it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stop {
    pub error: u32,
    pub signal: u32,
}

impl Stop {
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(8);
        i.u32(0, self.error);
        i.u32(4, self.signal);
        i.0
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "STOP", 8)?;
        Ok(Stop {
            error: f.u32(0)?,
            signal: f.u32(4)?,
        })
    }
}

/// JOB: a job file's text, sent by the client. fio sends the file, a NUL, and spare room
/// (it reserves space for variable expansion): the text ends at the first NUL.
pub fn encode_job(text: &str, client_type: u32) -> Vec<u8> {
    let mut i = Image::new(8);
    i.u32(0, text.len() as u32 + 1);
    i.u32(4, client_type);
    let mut v = i.0;
    v.extend_from_slice(text.as_bytes());
    v.push(0);
    v
}

/// The text of a JOB payload.
pub fn decode_job(b: &[u8]) -> Result<String, ProtoError> {
    let f = Fields::new(b, "JOB", 8)?;
    let len = f.u32(0)? as usize;
    let body = &b[8..];
    let body = &body[..len.min(body.len())];
    let end = body.iter().position(|&c| c == 0).unwrap_or(body.len());
    std::str::from_utf8(&body[..end])
        .map(str::to_string)
        .map_err(|_| ProtoError::Malformed {
            op: "JOB",
            why: "the job file is not UTF-8 text".into(),
        })
}

/// JOBLINE: the client's command-line arguments for this server (`argv[0]` first).
pub fn encode_jobline(args: &[String], client_type: u16) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&(args.len() as u16).to_le_bytes());
    v.extend_from_slice(&client_type.to_le_bytes());
    for a in args {
        v.extend_from_slice(&(a.len() as u16 + 1).to_le_bytes());
        v.extend_from_slice(a.as_bytes());
        v.push(0);
    }
    v
}

/// The arguments of a JOBLINE payload.
pub fn decode_jobline(b: &[u8]) -> Result<Vec<String>, ProtoError> {
    let f = Fields::new(b, "JOBLINE", 4)?;
    let lines = f.u16(0)? as usize;
    let mut off = 4;
    let mut out = Vec::with_capacity(lines.min(256));
    for _ in 0..lines {
        let len = f.u16(off)? as usize;
        let text = b
            .get(off + 2..off + 2 + len)
            .ok_or_else(|| ProtoError::Malformed {
                op: "JOBLINE",
                why: format!("argument {} runs past the payload", out.len()),
            })?;
        let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        out.push(String::from_utf8_lossy(&text[..end]).into_owned());
        off += 2 + len;
    }
    Ok(out)
}

/// LOAD_FILE (`--remote-config`): the path of a job file on the server.
pub fn encode_load_file(path: &str, client_type: u16) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&(path.len() as u16).to_le_bytes());
    v.extend_from_slice(&client_type.to_le_bytes());
    v.extend_from_slice(path.as_bytes());
    v.push(0);
    v
}

/// The path of a LOAD_FILE payload.
pub fn decode_load_file(b: &[u8]) -> Result<String, ProtoError> {
    let f = Fields::new(b, "LOAD_FILE", 4)?;
    let body = &b[4..];
    let end = body.iter().position(|&c| c == 0).unwrap_or(body.len());
    let _ = f.u16(0)?;
    Ok(String::from_utf8_lossy(&body[..end]).into_owned())
}

/// JOB_OPT: one option of the `global options` (global) or of job `groupid`'s `job options`
/// (fio puts the reported job's index there, not its group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOpt {
    pub global: bool,
    pub truncated: bool,
    pub groupid: u32,
    pub name: String,
    pub value: String,
}

impl JobOpt {
    pub const LEN: usize = 200;
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::LEN);
        i.u16(0, self.global as u16);
        let trunc = self.truncated || self.name.len() >= 64 || self.value.len() >= 128;
        i.u16(2, trunc as u16);
        i.u32(4, if self.global { 0 } else { self.groupid });
        i.cstr(8, 64, &self.name);
        i.cstr(72, 128, &self.value);
        i.0
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "JOB_OPT", Self::LEN)?;
        Ok(JobOpt {
            global: f.u16(0)? != 0,
            truncated: f.u16(2)? != 0,
            groupid: f.u32(4)?,
            name: f.cstr(8, 64)?,
            value: f.cstr(72, 128)?,
        })
    }
}

/// The live status a server sends in answer to SEND_ETA (fio's `jobs_eta`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobsEta {
    pub nr_running: u32,
    pub nr_ramp: u32,
    pub nr_pending: u32,
    pub nr_setting_up: u32,
    pub m_rate: [u64; 3],
    pub t_rate: [u64; 3],
    pub rate: [u64; 3],
    pub m_iops: [u32; 3],
    pub t_iops: [u32; 3],
    pub iops: [u32; 3],
    pub elapsed_sec: u64,
    pub eta_sec: u64,
    pub is_pow2: u32,
    pub unit_base: u32,
    pub sig_figs: u32,
    pub files_open: u32,
    pub nr_threads: u32,
    /// One state letter per job thread (`R`, `W`, `_`, …).
    pub run_str: String,
}

impl JobsEta {
    pub const HDR: usize = 168;
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::HDR);
        i.u32(0, self.nr_running);
        i.u32(4, self.nr_ramp);
        i.u32(8, self.nr_pending);
        i.u32(12, self.nr_setting_up);
        for d in 0..3 {
            i.u64(16 + 8 * d, self.m_rate[d]);
            i.u64(40 + 8 * d, self.t_rate[d]);
            i.u64(64 + 8 * d, self.rate[d]);
            i.u32(88 + 4 * d, self.m_iops[d]);
            i.u32(100 + 4 * d, self.t_iops[d]);
            i.u32(112 + 4 * d, self.iops[d]);
        }
        i.u64(128, self.elapsed_sec);
        i.u64(136, self.eta_sec);
        i.u32(144, self.is_pow2);
        i.u32(148, self.unit_base);
        i.u32(152, self.sig_figs);
        i.u32(156, self.files_open);
        i.u32(160, self.nr_threads);
        let mut v = i.0;
        // fio copies run_str with strcpy: always send its terminating NUL, padded to 8.
        v.extend_from_slice(self.run_str.as_bytes());
        v.push(0);
        while v.len() % 8 != 0 {
            v.push(0);
        }
        v
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "ETA", Self::HDR)?;
        let mut e = JobsEta {
            nr_running: f.u32(0)?,
            nr_ramp: f.u32(4)?,
            nr_pending: f.u32(8)?,
            nr_setting_up: f.u32(12)?,
            elapsed_sec: f.u64(128)?,
            eta_sec: f.u64(136)?,
            is_pow2: f.u32(144)?,
            unit_base: f.u32(148)?,
            sig_figs: f.u32(152)?,
            files_open: f.u32(156)?,
            nr_threads: f.u32(160)?,
            ..Default::default()
        };
        for d in 0..3 {
            e.m_rate[d] = f.u64(16 + 8 * d)?;
            e.t_rate[d] = f.u64(40 + 8 * d)?;
            e.rate[d] = f.u64(64 + 8 * d)?;
            e.m_iops[d] = f.u32(88 + 4 * d)?;
            e.t_iops[d] = f.u32(100 + 4 * d)?;
            e.iops[d] = f.u32(112 + 4 * d)?;
        }
        let rs = &b[Self::HDR..];
        let end = rs.iter().position(|&c| c == 0).unwrap_or(rs.len());
        e.run_str = String::from_utf8_lossy(&rs[..end]).into_owned();
        Ok(e)
    }
}

/// SENDFILE from a server: it asks the client for a file by name. fio 3.33's server asks
/// for the verify state a `verify_state_load` job loads
/// (`<client's address>-<job>-<thread index>-verify.state`, from the client's directory).
pub const SENDFILE_PATH_LEN: usize = 256;

/// The path a SENDFILE request names.
pub fn encode_sendfile(path: &str) -> Vec<u8> {
    let mut i = Image::new(SENDFILE_PATH_LEN);
    i.cstr(0, SENDFILE_PATH_LEN, path);
    i.0
}

pub fn decode_sendfile(b: &[u8]) -> Result<String, ProtoError> {
    Fields::new(b, "SENDFILE", SENDFILE_PATH_LEN)?.cstr(0, SENDFILE_PATH_LEN)
}

/// SENDFILE from the client: the file's bytes, or the `errno` of why there are none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFileReply {
    pub error: u32,
    pub data: Vec<u8>,
}

impl SendFileReply {
    pub const HDR: usize = 8;
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::HDR);
        i.u32(0, self.data.len() as u32);
        i.u32(4, self.error);
        let mut v = i.0;
        v.extend_from_slice(&self.data);
        v
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "SENDFILE reply", Self::HDR)?;
        let size = f.u32(0)? as usize;
        let error = f.u32(4)?;
        let body = &b[Self::HDR..];
        if error == 0 && body.len() < size {
            return Err(ProtoError::Malformed {
                op: "SENDFILE reply",
                why: format!("{size} bytes announced, {} sent", body.len()),
            });
        }
        Ok(SendFileReply {
            error,
            data: if error == 0 {
                body[..size].to_vec()
            } else {
                Vec::new()
            },
        })
    }
}

/// UPDATE_JOB from a client: new options for job thread `thread_number` (fio's
/// `cmd_add_job_pdu`: the thread number, its group, then fio's packed `thread_options`,
/// which only gfio sends and iobench does not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateJob {
    pub thread_number: u32,
    pub groupid: u32,
}

impl UpdateJob {
    pub const HDR: usize = 8;
    pub fn encode(&self) -> Vec<u8> {
        let mut i = Image::new(Self::HDR);
        i.u32(0, self.thread_number);
        i.u32(4, self.groupid);
        i.0
    }
    pub fn decode(b: &[u8]) -> Result<Self, ProtoError> {
        let f = Fields::new(b, "UPDATE_JOB", Self::HDR)?;
        Ok(UpdateJob {
            thread_number: f.u32(0)?,
            groupid: f.u32(4)?,
        })
    }
}

/// A server's UPDATE_JOB answer: 0, or the `errno` of why the options were not taken.
pub fn encode_update_reply(error: u32) -> Vec<u8> {
    error.to_le_bytes().to_vec()
}

pub fn decode_update_reply(b: &[u8]) -> Result<u32, ProtoError> {
    Fields::new(b, "UPDATE_JOB reply", 4)?.u32(0)
}

/// Every message a peer may send, decoded (for the fuzz target and for tracing).
#[derive(Debug, Clone)]
pub enum Message {
    Quit,
    Exit,
    Job(String),
    JobLine(Vec<String>),
    Text(Text),
    Ts(Box<super::ts::WireTs>),
    Gs(super::ts::WireGs),
    SendEta,
    Eta(JobsEta),
    Probe(ClientProbe),
    ProbeReply(ProbeReply),
    Start(Start),
    Stop(Stop),
    Du(super::ts::WireDu),
    ServerStart,
    AddJob,
    Run,
    Iolog(super::iolog::WireLog),
    LoadFile(String),
    JobOpt(JobOpt),
    /// A server asks for a file (its path); the client answers with the file.
    SendFile(String),
    SendFileReply(SendFileReply),
    /// iobench extensions (synchronised start).
    IobReady,
    IobGo,
    /// gfio's option update, and a server's answer to it (an `errno`, 0 when taken).
    UpdateJob(UpdateJob),
    UpdateJobReply(u32),
    /// The client's trigger: the command the server runs once its jobs are stopped.
    Vtrigger(String),
    /// A server's answer to the trigger: every job thread's verify state.
    VtriggerState(Vec<super::vstate::ThreadState>),
    /// Opcode 0, below fio's count but used by no message: carried, not read.
    Other(u16),
}

/// Decodes a message's payload by its opcode. `from_server`: PROBE is then a reply.
pub fn decode(cmd: &super::Cmd, from_server: bool) -> Result<Message, ProtoError> {
    let p = &cmd.payload[..];
    // The layouts of the version the message came in (read_cmd accepts only those).
    let v = super::Proto::new(cmd.version).unwrap_or_default();
    Ok(match cmd.opcode {
        op::QUIT => Message::Quit,
        op::EXIT => Message::Exit,
        op::JOB => Message::Job(decode_job(p)?),
        op::JOBLINE => Message::JobLine(decode_jobline(p)?),
        op::TEXT => Message::Text(Text::decode(p)?),
        op::TS => Message::Ts(Box::new(super::ts::WireTs::decode_as(v, p)?)),
        op::GS => Message::Gs(super::ts::WireGs::decode(p)?),
        op::SEND_ETA => Message::SendEta,
        op::ETA => Message::Eta(JobsEta::decode(p)?),
        op::PROBE if from_server => Message::ProbeReply(ProbeReply::decode(p)?),
        op::PROBE => Message::Probe(ClientProbe::decode(p)?),
        op::START => Message::Start(Start::decode(p)?),
        op::STOP => Message::Stop(Stop::decode(p)?),
        op::DU => Message::Du(super::ts::WireDu::decode(p)?),
        op::SERVER_START => Message::ServerStart,
        op::ADD_JOB => Message::AddJob,
        op::RUN => Message::Run,
        op::IOLOG => Message::Iolog(super::iolog::WireLog::decode_as(v, p)?),
        op::LOAD_FILE => Message::LoadFile(decode_load_file(p)?),
        op::JOB_OPT => Message::JobOpt(JobOpt::decode(p)?),
        op::SENDFILE if from_server => Message::SendFile(decode_sendfile(p)?),
        op::SENDFILE => Message::SendFileReply(SendFileReply::decode(p)?),
        op::IOB_READY => Message::IobReady,
        op::IOB_GO => Message::IobGo,
        op::UPDATE_JOB if from_server => Message::UpdateJobReply(decode_update_reply(p)?),
        op::UPDATE_JOB => Message::UpdateJob(UpdateJob::decode(p)?),
        op::VTRIGGER
            if from_server && cmd.version >= super::vstate::NEWER_LAYOUT_FROM && p.len() > 8 =>
        {
            return Err(ProtoError::Malformed {
                op: "VTRIGGER",
                why: format!(
                    "verify states of protocol version {} (fio 3.38 or later) are not \
                     supported yet: iobench reads fio 3.33's layout only",
                    cmd.version
                ),
            });
        }
        op::VTRIGGER if from_server => Message::VtriggerState(super::vstate::decode_list(p)?),
        op::VTRIGGER => Message::Vtrigger(super::vstate::decode_command(p)?),
        other if other < op::NR => Message::Other(other),
        other => {
            return Err(ProtoError::Malformed {
                op: "command",
                why: format!("unknown opcode {other}"),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_pdus_round_trip() {
        let p = ProbeReply {
            hostname: "h".into(),
            bigendian: 0,
            fio_version: "fio-3.33".into(),
            os: OS_LINUX,
            arch: ARCH_X86_64,
            bpp: 8,
            cpus: 2,
            flags: 1,
        };
        assert_eq!(ProbeReply::decode(&p.encode()).unwrap(), p);
        assert_eq!(
            p.line(),
            "hostname=h, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1\n"
        );
        let args = vec!["fio".to_string(), "--output-format=json".to_string()];
        let b = encode_jobline(&args, 1);
        assert_eq!(b.len(), 33, "as fio sends it");
        assert_eq!(decode_jobline(&b).unwrap(), args);
        assert_eq!(
            decode_job(&encode_job("[a]\nrw=read\n", 1)).unwrap(),
            "[a]\nrw=read\n"
        );
        let t = Text::info("Starting 1 process\n");
        assert_eq!(Text::decode(&t.encode()).unwrap(), t);
        let e = JobsEta {
            nr_running: 2,
            run_str: "RW".into(),
            ..Default::default()
        };
        assert_eq!(JobsEta::decode(&e.encode()).unwrap(), e);
        let o = JobOpt {
            global: false,
            truncated: false,
            groupid: 1,
            name: "rw".into(),
            value: "read".into(),
        };
        assert_eq!(JobOpt::decode(&o.encode()).unwrap(), o);
        let b = encode_sendfile("127.0.0.1-vs-0-verify.state");
        assert_eq!(b.len(), 256, "as fio's cmd_sendfile");
        assert_eq!(decode_sendfile(&b).unwrap(), "127.0.0.1-vs-0-verify.state");
        let r = SendFileReply {
            error: 0,
            data: vec![1, 2, 3],
        };
        assert_eq!(SendFileReply::decode(&r.encode()).unwrap(), r);
        let mut short = r.encode();
        short.pop();
        assert!(SendFileReply::decode(&short).is_err());
    }

    /// A cheap stand-in for the fuzz target that runs in every test run: valid messages of
    /// every kind, mutated (bytes flipped, cut, grown) with their checksums fixed up so the
    /// payload decoders see the damage, must decode or fail, never panic.
    #[test]
    fn mutated_messages_never_panic() {
        use crate::fioproto::{crc16, decode_all, encode, HDR_LEN};
        let ts = crate::fioproto::ts::WireTs::encode(
            &crate::stats::JobStats::new("j", 0, Default::default()),
            1,
            &crate::fioproto::ts::WireGs::decode(&[0; 164]).unwrap().0,
        );
        let seeds: Vec<(u16, Vec<u8>)> = vec![
            (
                op::PROBE,
                ClientProbe {
                    flags: 1,
                    server: "h".into(),
                }
                .encode(),
            ),
            (
                op::JOBLINE,
                encode_jobline(&["fio".into(), "--x".into()], 1),
            ),
            (op::JOB, encode_job("[a]\n", 1)),
            (op::TEXT, Text::info("hi\n").encode()),
            (op::ETA, JobsEta::default().encode()),
            (
                op::JOB_OPT,
                JobOpt {
                    global: true,
                    truncated: false,
                    groupid: 0,
                    name: "a".into(),
                    value: "b".into(),
                }
                .encode(),
            ),
            (
                op::START,
                Start {
                    jobs: 1,
                    stat_outputs: 1,
                }
                .encode(),
            ),
            (op::LOAD_FILE, encode_load_file("/x", 1)),
            (op::SENDFILE, encode_sendfile("a-b-0-verify.state")),
            (
                op::SENDFILE,
                SendFileReply {
                    error: 0,
                    data: vec![7; 40],
                }
                .encode(),
            ),
            (op::IOLOG, vec![0; 300]),
            (
                op::UPDATE_JOB,
                UpdateJob {
                    thread_number: 1,
                    groupid: 0,
                }
                .encode(),
            ),
            (
                op::VTRIGGER,
                crate::fioproto::vstate::encode_command("touch x"),
            ),
            (
                op::VTRIGGER,
                crate::fioproto::vstate::encode_list(&[crate::fioproto::vstate::ThreadState::new(
                    &crate::fioproto::vstate::StateFields {
                        name: "j".into(),
                        depth: 2,
                        nofiles: 2,
                        comps: vec![(0, 4096), (1, 0)],
                        ..Default::default()
                    },
                )]),
            ),
            (op::DU, vec![0; 256]),
            (op::GS, vec![0; 164]),
            (op::TS, ts),
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..1200 {
            let (opc, base) = &seeds[round % seeds.len()];
            let mut p = base.clone();
            match rnd() % 4 {
                0 if !p.is_empty() => {
                    let i = rnd() as usize % p.len();
                    p[i] = rnd() as u8;
                }
                1 => p.truncate(rnd() as usize % (p.len() + 1)),
                2 => p.extend((0..rnd() % 64).map(|_| rnd() as u8)),
                _ => {
                    for _ in 0..8 {
                        if !p.is_empty() {
                            let i = rnd() as usize % p.len().min(400);
                            p[i] = 0xff;
                        }
                    }
                }
            }
            let cmd = crate::fioproto::Cmd::new(*opc, 0, p.clone());
            let _ = decode(&cmd, round % 2 == 0);
            // The same payload through the framing, with a damaged header now and then.
            let mut wire = encode(*opc, 0, &p);
            if round % 5 == 0 && wire.len() >= HDR_LEN {
                let i = rnd() as usize % 20;
                wire[i] ^= 1 << (rnd() % 8);
                let c = crc16(&wire[..20]);
                wire[20..22].copy_from_slice(&c.to_le_bytes());
            }
            for c in decode_all(&wire).0 {
                let _ = decode(&c, true);
            }
        }
    }

    #[test]
    fn short_payloads_are_errors() {
        assert!(ProbeReply::decode(&[0; 50]).is_err());
        assert!(decode_jobline(&[5, 0, 0, 0, 200, 0]).is_err());
        assert!(JobsEta::decode(&[0; 10]).is_err());
    }
}
