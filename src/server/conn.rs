//! One client connection: reads its commands (PROBE, JOBLINE, JOB, LOAD_FILE, RUN,
//! SEND_ETA, VTRIGGER, UPDATE_JOB, QUIT, EXIT), starts the run as a child process and sends
//! back, one whole message at a time under one lock, the run's text lines, its results and
//! the end (STOP, then QUIT), as fio's server does.

use super::job::{self, Sent, CHILD_ARG, RESULTS};
use super::policy::{self, Policy};
use super::vtrigger;
use crate::fioproto::pdu::{self, ClientProbe, JobsEta, ProbeReply, Start, Stop, Text};
use crate::fioproto::stream::Stream;
use crate::fioproto::vstate;
use crate::fioproto::{op, read_cmd_max, send_as, Cmd, Proto, ProtoError, SERVER_MAX_PAYLOAD};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// This host's name, as fio's PROBE reply carries it.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    n.max(1) as u32
}

/// The sending half, shared by the reader and the run's forwarders.
type Writer = Arc<Mutex<Peer>>;

/// The connection and the protocol version it speaks: the client's, from its first
/// message (fio 3.33's until one came).
struct Peer {
    s: Stream,
    proto: Proto,
}

impl Peer {
    fn writer(s: Stream) -> Writer {
        Arc::new(Mutex::new(Peer {
            s,
            proto: Proto::OLDEST,
        }))
    }
}

fn send_msg(w: &Writer, opcode: u16, tag: u64, payload: &[u8]) -> bool {
    match w.lock() {
        Ok(mut p) => {
            let v = p.proto.number();
            send_as(&mut p.s, v, opcode, tag, payload).is_ok()
        }
        Err(_) => false,
    }
}

/// The protocol version the connection speaks.
fn proto_of(w: &Writer) -> Proto {
    w.lock().map(|p| p.proto).unwrap_or_default()
}

fn send_text(w: &Writer, level: u32, text: &str) -> bool {
    let mut t = Text::info(text);
    t.level = level;
    send_msg(w, op::TEXT, 0, &t.encode())
}

/// A run in progress.
struct Running {
    /// The child's stdin when it waits for the go (synchronised start).
    go: Option<std::process::ChildStdin>,
    pid: u32,
    started: Instant,
    threads: u32,
    done: Arc<AtomicBool>,
    /// The client asked the run to stop (QUIT): the stop is not the run's failure.
    quit: Arc<AtomicBool>,
    trigger: Arc<Mutex<TriggerSlot>>,
}

/// The client's triggers during a run, handed from the reader to the thread that ends the
/// run: it answers them once the run's states are known.
#[derive(Default)]
struct TriggerSlot {
    /// The command of each trigger not answered yet.
    asked: Vec<String>,
    /// The run is over: a trigger now is answered by the reader.
    over: bool,
}

/// Per-connection state.
struct Conn {
    w: Writer,
    host: String,
    peer: String,
    /// The connection's private directory (mkdtemp, 0700), made for its run (one per
    /// connection): the run's results, live status and verify states; never the job
    /// text. Removed as soon as the run's results are read, and at the connection's end.
    dir: Option<PathBuf>,
    policy: &'static Policy,
    args: Vec<String>,
    /// The job files' texts (JOB, or `--remote-config` read for it), in memory.
    texts: Vec<(String, String)>,
    run: Option<Running>,
    /// The client asked for a synchronised start (an iobench client).
    sync: bool,
    /// This side's address of the connection (none on a Unix socket).
    local: Option<String>,
    /// The client inflates zlib: logs are sent compressed, as fio's server sends them.
    zlib: bool,
    /// The jobs did not parse: the client was told (text, QUIT) and a RUN is ignored.
    refused: bool,
    /// The client's name for this server, from its PROBE (fio's `me`: the address it
    /// reached, or `sock`): the verify state files asked of it are named after it.
    me: String,
    /// Verify state files asked of the client (SENDFILE) before the run can start.
    fetch: Option<Fetch>,
    /// A whole message came: the connection's protocol version is set.
    spoke: bool,
}

/// The verify state a `verify_state_load` run needs from the client, as fio's server
/// asks for it: by SENDFILE, one file per job thread, before the job starts.
struct Fetch {
    /// Tag of each request → (the name asked for, where the run will load it).
    pending: Vec<(u64, String, PathBuf)>,
    threads: u32,
}

/// How the name of every run's private directory starts.
pub const PRIVATE_PREFIX: &str = "iobench-server-";

/// Makes a directory only this user can enter, under `$TMPDIR`, with a fresh random name
/// (mkdtemp: created exclusively, mode 0700), so no other user can have made it first or
/// put anything in it.
fn private_dir() -> Result<PathBuf, String> {
    use std::os::unix::ffi::OsStrExt;
    let template = std::env::temp_dir().join(format!("{PRIVATE_PREFIX}XXXXXX"));
    let mut bytes = template.as_os_str().as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: `bytes` is a writable NUL-terminated template ending in XXXXXX, which
    // mkdtemp rewrites in place.
    let r = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if r.is_null() {
        return Err(format!(
            "cannot make a private directory in {}: {}",
            std::env::temp_dir().display(),
            std::io::Error::last_os_error()
        ));
    }
    bytes.pop();
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)))
}

/// Creates `path` for writing: a new file (O_EXCL), never through a symbolic link
/// (O_NOFOLLOW), readable by this user alone.
fn create_private(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(data)
}

/// How long a new connection may stay silent before its first message begins.
const FIRST_MESSAGE: Duration = Duration::from_secs(10);

/// Reads a client's messages, with the server's time limits: between messages, a
/// connection with no run going may stay silent for the idle time; once a message has
/// begun, the whole of it must come within the read time.
struct Timed {
    s: Stream,
    /// When the message being read must be whole.
    deadline: Option<Instant>,
}

impl Timed {
    /// Waits until a message begins: `Ok(false)` when the connection stayed silent for
    /// `idle` while `busy` said no run was going.
    fn wait(&mut self, idle: Duration, busy: impl Fn() -> bool) -> std::io::Result<bool> {
        let fd = match &self.s {
            Stream::Tcp(t) => t.as_raw_fd(),
            Stream::Unix(u) => u.as_raw_fd(),
        };
        let mut quiet_since = Instant::now();
        loop {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for an open descriptor; a 1 s timeout.
            let r = unsafe { libc::poll(&mut pfd, 1, 1000) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r > 0 {
                return Ok(true);
            }
            if busy() {
                quiet_since = Instant::now();
            } else if quiet_since.elapsed() >= idle {
                return Ok(false);
            }
        }
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = match self.deadline {
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => Duration::from_secs(3600),
        };
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "message not whole in time",
            ));
        }
        let set = match &self.s {
            Stream::Tcp(t) => t.set_read_timeout(Some(left)),
            Stream::Unix(u) => u.set_read_timeout(Some(left)),
        };
        set?;
        match self.s.read(buf) {
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock) => Err(
                std::io::Error::new(std::io::ErrorKind::TimedOut, "message not whole in time"),
            ),
            r => r,
        }
    }
}

/// Answers a connection over `--server-max-conns` with why it is not served, then closes
/// it (a client that is slow to read cannot hold the accepting thread: the write is
/// bounded by a short timeout).
pub fn turn_away(s: Stream, max: usize) {
    if let Stream::Tcp(t) = &s {
        let _ = t.set_write_timeout(Some(Duration::from_secs(1)));
    }
    if let Stream::Unix(u) = &s {
        let _ = u.set_write_timeout(Some(Duration::from_secs(1)));
    }
    let w: Writer = Peer::writer(s);
    send_text(
        &w,
        Text::ERR,
        &format!(
            "iobench: server: busy: {max} connections are being served already \
             (the server's --server-max-conns); try again later\n"
        ),
    );
    send_msg(&w, op::QUIT, 0, &[]);
    let guard = w.lock();
    if let Ok(p) = guard {
        p.s.shutdown();
    }
}

/// Serves one connection until the client closes it.
pub fn handle(stream: Stream, peer: &str, host: &str, ticket: &super::slots::Ticket) {
    let reader = match stream.try_clone() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("iobench: server: {peer}: {e}");
            return;
        }
    };
    // fio's server puts this side's address in the names of files it creates in a
    // `directory` (`unique_filename`).
    let local = match &stream {
        Stream::Tcp(t) => t.local_addr().ok().map(|a| a.ip().to_string()),
        Stream::Unix(_) => None,
    };
    let policy = policy::get();
    let mut c = Conn {
        w: Peer::writer(stream),
        host: host.to_string(),
        peer: peer.to_string(),
        dir: None,
        policy,
        args: Vec::new(),
        texts: Vec::new(),
        run: None,
        sync: false,
        local,
        zlib: false,
        refused: false,
        me: String::new(),
        fetch: None,
        spoke: false,
    };
    let mut reader = Timed {
        s: reader,
        deadline: None,
    };
    loop {
        let busy = || {
            c.run
                .as_ref()
                .is_some_and(|r| !r.done.load(Ordering::Relaxed))
        };
        ticket.state.running.store(busy(), Ordering::Relaxed);
        // A peer that has not sent one whole message yet gets a short wait: fio's
        // client speaks at once.
        let idle = if ticket.state.greeted.load(Ordering::Relaxed) {
            policy.idle
        } else {
            policy.idle.min(FIRST_MESSAGE)
        };
        let running = &ticket.state.running;
        let watched = || {
            let b = busy();
            running.store(b, Ordering::Relaxed);
            b
        };
        match reader.wait(idle, watched) {
            Ok(true) => {}
            Ok(false) => {
                let why = format!(
                    "iobench: server: closing the connection: idle for {} s \
                     (the server's --server-idle-timeout)\n",
                    idle.as_secs()
                );
                send_text(&c.w, Text::ERR, &why);
                send_msg(&c.w, op::QUIT, 0, &[]);
                break;
            }
            Err(e) => {
                eprintln!("iobench: server: {}: {e}", c.peer);
                break;
            }
        }
        reader.deadline = Some(Instant::now() + policy.read);
        let got = read_cmd_max(&mut reader, SERVER_MAX_PAYLOAD);
        reader.deadline = None;
        let cmd = match got {
            Ok(c) => c,
            Err(ProtoError::Closed) => break,
            Err(e) => {
                // A peer over the server's limits hears why; one that does not speak the
                // protocol (another version, garbage) is closed on without a word, as by
                // fio's server.
                let why = match &e {
                    ProtoError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                        Some(format!(
                            "iobench: server: closing the connection: a message did not arrive \
                         whole within {} s\n",
                            policy.read.as_secs()
                        ))
                    }
                    ProtoError::PayloadTooLarge(_) => {
                        Some(format!("iobench: server: closing the connection: {e}\n"))
                    }
                    _ => None,
                };
                if let Some(why) = why {
                    send_text(&c.w, Text::ERR, &why);
                    send_msg(&c.w, op::QUIT, 0, &[]);
                }
                eprintln!("iobench: server: {}: {e}", c.peer);
                break;
            }
        };
        ticket.heard();
        // The first message sets the version the connection speaks; fio's peers never
        // change it, and one that does is not served.
        if let Ok(mut p) = c.w.lock() {
            if !c.spoke {
                p.proto = Proto::new(cmd.version).unwrap_or_default();
            } else if p.proto.number() != cmd.version {
                let e = ProtoError::VersionChanged {
                    first: p.proto.number(),
                    next: cmd.version,
                };
                eprintln!("iobench: server: {}: {e}", c.peer);
                break;
            }
        }
        c.spoke = true;
        let outcome = c.command(cmd);
        ticket.state.running.store(
            c.run
                .as_ref()
                .is_some_and(|r| !r.done.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
        match outcome {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                eprintln!("iobench: server: {}: {e}", c.peer);
                break;
            }
        }
    }
    // A client gone mid-run (or that said EXIT): its run ends with it, every process of
    // it; its results have nowhere to go.
    if let Some(r) = &c.run {
        stop_run(r);
    }
    if let Ok(p) = c.w.lock() {
        p.s.shutdown();
    }
    if let Some(d) = &c.dir {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Stops a run going: its process group (the run child and whatever it started).
fn stop_run(r: &Running) {
    if !r.done.load(Ordering::Relaxed) {
        // SAFETY: signals the process group our run child leads (made in spawn_run).
        unsafe { libc::kill(-(r.pid as i32), libc::SIGTERM) };
    }
}

impl Conn {
    /// Handles one command; `Ok(false)` ends the connection.
    fn command(&mut self, cmd: Cmd) -> Result<bool, String> {
        let msg = pdu::decode(&cmd, false).map_err(|e| e.to_string())?;
        match msg {
            pdu::Message::Probe(p) => self.probe(&cmd, &p),
            pdu::Message::JobLine(args) => {
                // argv[0] is the client's program name; `--output` is the client's business.
                self.args = args
                    .into_iter()
                    .skip(1)
                    .filter(|a| {
                        let b = a.trim_start_matches('-');
                        !(b == "output" || b.starts_with("output="))
                    })
                    .collect();
                if let Err(e) = policy::check_jobline(&self.args) {
                    return Ok(self.refuse(&e));
                }
                self.parsed()
            }
            pdu::Message::Job(text) => {
                let name = format!("<job file {} from the client>", self.texts.len() + 1);
                self.texts.push((name, text));
                self.parsed()
            }
            pdu::Message::LoadFile(path) => match self.policy.remote_config(&path) {
                Ok(text) => {
                    self.texts.push((path, text));
                    self.parsed()
                }
                Err(e) => Ok(self.refuse(&format!("server: {e}"))),
            },
            pdu::Message::Run => match self.start_run() {
                Ok(go_on) => Ok(go_on),
                Err(e) => {
                    self.fail_run(&format!("iobench: server: {e}\n"));
                    Ok(true)
                }
            },
            pdu::Message::SendFileReply(r) => {
                if let Err(e) = self.fetched(cmd.tag, r) {
                    self.fetch = None;
                    self.fail_run(&e);
                }
                Ok(true)
            }
            pdu::Message::IobGo => {
                if let Some(mut go) = self.run.as_mut().and_then(|r| r.go.take()) {
                    use std::io::Write;
                    let _ = go.write_all(b"go\n");
                }
                Ok(true)
            }
            pdu::Message::SendEta => {
                let eta = self.eta();
                Ok(send_msg(&self.w, op::ETA, cmd.tag, &eta.encode()))
            }
            pdu::Message::Vtrigger(command) => {
                self.trigger(command);
                Ok(true)
            }
            pdu::Message::UpdateJob(u) => {
                self.update_job(cmd.tag, u);
                Ok(true)
            }
            pdu::Message::Quit => {
                if self.fetch.take().is_some() {
                    // Stopped before it started: nothing ran, nothing failed.
                    send_msg(&self.w, op::STOP, 0, &Stop::default().encode());
                    send_msg(&self.w, op::QUIT, 0, &[]);
                }
                if let Some(r) = &self.run {
                    if !r.done.load(Ordering::Relaxed) {
                        r.quit.store(true, Ordering::Relaxed);
                        // The run child stops its own workers (as a plain run on Ctrl-C).
                        // SAFETY: signals our own child process by its pid.
                        unsafe { libc::kill(r.pid as i32, libc::SIGTERM) };
                    }
                }
                Ok(true)
            }
            // EXIT ends this connection and its run, never the server: one client must
            // not stop another's runs (stopping the server is its operator's signal).
            pdu::Message::Exit => Ok(false),
            other => {
                let text = format!("iobench: server: unexpected {} command\n", cmd.name());
                let _ = other;
                send_text(&self.w, Text::ERR, &text);
                Ok(true)
            }
        }
    }

    /// VTRIGGER: a run going is stopped and answers when it is over (see [`vtrigger`]);
    /// otherwise no job runs, and the answer is their empty states, at once. A run still
    /// waiting for its verify states never starts.
    fn trigger(&mut self, command: String) {
        if let Some(r) = &self.run {
            let mut slot = r.trigger.lock().unwrap_or_else(|e| e.into_inner());
            if !slot.over {
                if let Some(flag) = self
                    .dir
                    .as_ref()
                    .filter(|_| slot.asked.is_empty())
                    .map(|d| d.join(vtrigger::TRIGGER_FILE))
                {
                    if let Err(e) = create_private(&flag, b"") {
                        eprintln!("iobench: server: {}: {e}", flag.display());
                    }
                }
                slot.asked.push(command);
                return;
            }
        }
        // Idle states are empty but for their names and depths: none in a layout iobench
        // does not write (see `answer_triggers`).
        let states = if proto_of(&self.w).number() >= vstate::NEWER_LAYOUT_FROM {
            Vec::new()
        } else {
            job::load_sent(&self.sent())
                .map(|(_, jobs)| vtrigger::idle_states(&jobs))
                .unwrap_or_default()
        };
        let list = crate::fioproto::vstate::encode_list(&states);
        send_msg(&self.w, op::VTRIGGER, 0, &list);
        if self.fetch.take().is_some() {
            send_msg(&self.w, op::STOP, 0, &Stop::default().encode());
            send_msg(&self.w, op::QUIT, 0, &[]);
        }
        trigger_command(&self.w, self.policy, &command);
    }

    /// UPDATE_JOB, gfio's option editor (fio's command-line client never sends it): an
    /// unknown thread gets ENODEV as from fio's server; a known one keeps its options,
    /// which iobench cannot take in fio's packed form, and the answer says so
    /// (EOPNOTSUPP, with a line of text for gfio's log).
    fn update_job(&mut self, tag: u64, u: pdu::UpdateJob) {
        let threads = job::load_sent(&self.sent())
            .map(|(_, jobs)| job::counts(&jobs).0)
            .unwrap_or(0);
        let error = if u.thread_number == 0 || u.thread_number > threads {
            libc::ENODEV
        } else {
            send_text(
                &self.w,
                Text::ERR,
                &format!(
                    "iobench: server: UPDATE_JOB (gfio's option editor) is not supported: \
                     job thread {} keeps its options\n",
                    u.thread_number
                ),
            );
            libc::EOPNOTSUPP
        };
        send_msg(
            &self.w,
            op::UPDATE_JOB,
            tag,
            &pdu::encode_update_reply(error as u32),
        );
    }

    fn probe(&mut self, cmd: &Cmd, p: &ClientProbe) -> Result<bool, String> {
        let reply = ProbeReply {
            hostname: self.host.clone(),
            bigendian: 0,
            fio_version: probe_version(proto_of(&self.w)),
            os: pdu::OS_LINUX,
            arch: pdu::ARCH_X86_64,
            bpp: std::mem::size_of::<usize>() as u8,
            cpus: cpus(),
            // Agreed as fio agrees it: logs then travel compressed.
            flags: p.flags & (pdu::PROBE_FLAG_ZLIB | pdu::PROBE_FLAG_SYNC_START),
        };
        self.sync = p.flags & pdu::PROBE_FLAG_SYNC_START != 0;
        self.me = p.server.clone();
        self.zlib = p.flags & pdu::PROBE_FLAG_ZLIB != 0;
        Ok(send_msg(&self.w, op::PROBE, cmd.tag, &reply.encode()))
    }

    /// What the run will get: the command line and the job texts.
    fn sent(&self) -> Sent {
        Sent {
            args: self.args.clone(),
            texts: self.texts.clone(),
            includes: self.policy.includes(),
        }
    }

    /// Refuses what was sent: the client hears why, then QUIT, as fio answers a job it
    /// cannot parse; a RUN after it is ignored.
    fn refuse(&mut self, why: &str) -> bool {
        send_text(&self.w, Text::ERR, &format!("iobench: {why}\n"));
        send_msg(&self.w, op::QUIT, 0, &[]);
        self.refused = true;
        true
    }

    /// Parses what was sent and checks it against the server's policy.
    fn load(&self) -> Result<(crate::cli::Invocation, Vec<crate::job::Job>), String> {
        let (inv, jobs) = job::load_sent(&self.sent())?;
        policy::check_jobs(self.policy, &jobs)?;
        Ok((inv, jobs))
    }

    /// After JOBLINE, JOB or LOAD_FILE: checks what was sent so far and answers START
    /// with the counts, or an error text and QUIT, as fio does when parsing fails.
    fn parsed(&mut self) -> Result<bool, String> {
        match self.load() {
            Ok((_, jobs)) => {
                let (threads, reports) = job::counts(&jobs);
                let s = Start {
                    jobs: threads,
                    stat_outputs: reports,
                };
                Ok(send_msg(&self.w, op::START, 0, &s.encode()))
            }
            Err(e) => Ok(self.refuse(&e)),
        }
    }

    fn start_run(&mut self) -> Result<bool, String> {
        if self.refused {
            // fio's client sends RUN without waiting: the refusal already went out.
            return Ok(true);
        }
        if self.run.is_some() || self.fetch.is_some() {
            send_text(
                &self.w,
                Text::ERR,
                "iobench: server: a run is going already\n",
            );
            return Ok(true);
        }
        let (inv, jobs) = match self.load() {
            Ok(x) => x,
            Err(e) => {
                send_text(&self.w, Text::ERR, &format!("iobench: {e}\n"));
                send_msg(&self.w, op::QUIT, 0, &[]);
                return Ok(true);
            }
        };
        if inv.actions.parse_only {
            // `--parse-only` from the client: the jobs were parsed (START said how many);
            // as fio's server, nothing runs.
            send_msg(&self.w, op::STOP, 0, &Stop::default().encode());
            send_msg(&self.w, op::QUIT, 0, &[]);
            return Ok(true);
        }
        let (threads, _) = job::counts(&jobs);
        let dir = match &self.dir {
            Some(d) => d.clone(),
            None => self.dir.insert(private_dir()?).clone(),
        };
        let wanted = state_files(&jobs, &self.me, &dir);
        if wanted.is_empty() {
            return self.spawn_run(threads, false);
        }
        let mut pending = Vec::with_capacity(wanted.len());
        for (i, (name, local)) in wanted.into_iter().enumerate() {
            let tag = i as u64 + 1;
            if !send_msg(&self.w, op::SENDFILE, tag, &pdu::encode_sendfile(&name)) {
                return Ok(false);
            }
            pending.push((tag, name, local));
        }
        self.fetch = Some(Fetch { pending, threads });
        Ok(true)
    }

    /// A SENDFILE answer: the file is kept where the run loads it; the run starts once
    /// every file came. `Err`: why the run cannot start.
    fn fetched(&mut self, tag: u64, r: pdu::SendFileReply) -> Result<(), String> {
        let Some(f) = self.fetch.as_mut() else {
            return Ok(());
        };
        let Some(at) = f.pending.iter().position(|p| p.0 == tag) else {
            return Ok(());
        };
        let (_, name, local) = f.pending.swap_remove(at);
        if r.error != 0 {
            // strerror's text, as fio prints it (without Rust's "(os error N)").
            let why = std::io::Error::from_raw_os_error(r.error as i32).to_string();
            let why = why.split(" (os error").next().unwrap_or_default();
            return Err(format!(
                "iobench: server: failure on receiving state file {name}: {why}\n"
            ));
        }
        create_private(&local, &r.data)
            .map_err(|e| format!("iobench: server: state file {}: {e}\n", local.display()))?;
        if f.pending.is_empty() {
            let threads = f.threads;
            self.fetch = None;
            self.spawn_run(threads, true)
                .map_err(|e| format!("iobench: server: {e}\n"))?;
        }
        Ok(())
    }

    /// The client hears why the run cannot go, and that it is over.
    fn fail_run(&self, why: &str) {
        send_text(&self.w, Text::ERR, why);
        let stop = Stop {
            error: 1,
            signal: 0,
        };
        send_msg(&self.w, op::STOP, 0, &stop.encode());
        send_msg(&self.w, op::QUIT, 0, &[]);
    }

    /// Starts the run's child. `states_here`: the verify states it loads were fetched
    /// into the connection's directory, which becomes its `--aux-path` (a state such a
    /// run saves stays there too, and goes with the connection).
    fn spawn_run(&mut self, threads: u32, states_here: bool) -> Result<bool, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find iobench: {e}"))?;
        let dir = self.dir.clone().ok_or("no private directory for the run")?;
        let mut cmd = Command::new(exe);
        cmd.arg(CHILD_ARG).arg(&dir);
        if states_here {
            cmd.arg(format!("--aux-path={}", dir.display()));
        }
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec the closure calls only async-signal-safe system
        // calls (setpgid, signal, prctl) and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                // Its own process group, so that the connection's end stops every process
                // of the run; and it ends if this thread (the connection's) goes, told by
                // a hang-up, not the SIGTERM of a stop, so that it knows its results have
                // no reader and removes its directory. The hang-up is ignored until the
                // child can handle it (an ignored signal stays ignored through exec).
                if libc::setpgid(0, 0) != 0
                    || libc::signal(libc::SIGHUP, libc::SIG_IGN) == libc::SIG_ERR
                    || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP as libc::c_ulong) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.env(job::SERVER_PID_ENV, std::process::id().to_string());
        if let Some(a) = &self.local {
            cmd.env(job::ADDR_ENV, a);
        }
        if self.zlib {
            cmd.env(job::ZLIB_ENV, "1");
        }
        cmd.env(job::PROTO_ENV, proto_of(&self.w).to_string());
        if self.sync {
            cmd.env(job::SYNC_ENV, "1");
        }
        let mut child: Child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the run: {e}"))?;
        // The job texts go through the pipe, never a file; a synchronised run then keeps
        // its stdin open for the go.
        let mut stdin = child.stdin.take();
        if let Some(i) = stdin.as_mut() {
            use std::io::Write;
            if let Err(e) = i.write_all(&self.sent().encode()).and_then(|_| i.flush()) {
                // SAFETY: signals the process group of the child just started.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                return Err(format!("cannot hand the jobs to the run: {e}"));
            }
        }
        if !self.sync {
            stdin = None;
        }
        for _ in 0..threads.max(1) {
            send_msg(&self.w, op::SERVER_START, 0, &[]);
        }
        let done = Arc::new(AtomicBool::new(false));
        let quit = Arc::new(AtomicBool::new(false));
        let trigger = Arc::new(Mutex::new(TriggerSlot::default()));
        self.run = Some(Running {
            trigger: trigger.clone(),
            quit: quit.clone(),
            go: stdin,
            pid: child.id(),
            started: Instant::now(),
            threads,
            done: done.clone(),
        });
        let out = child
            .stdout
            .take()
            .map(|s| forward(s, self.w.clone(), Text::INFO, quit.clone()));
        let err = child
            .stderr
            .take()
            .map(|s| forward(s, self.w.clone(), Text::ERR, quit.clone()));
        let (w, allow) = (self.w.clone(), self.policy);
        std::thread::spawn(move || {
            for h in [out, err].into_iter().flatten() {
                let _ = h.join();
            }
            let status = child.wait();
            done.store(true, Ordering::Relaxed);
            // Everything the run left is read, and its directory goes, before anything
            // else happens (not with the connection): a trigger command may take the
            // server down (`kill -9 $PPID`), and a server killed later leaves no
            // directory behind.
            let asked = {
                let mut slot = trigger.lock().unwrap_or_else(|e| e.into_inner());
                slot.over = true;
                std::mem::take(&mut slot.asked)
            };
            let states = std::fs::read(dir.join(vtrigger::STATES_FILE)).ok();
            let results = std::fs::read(dir.join(RESULTS));
            let _ = std::fs::remove_dir_all(&dir);
            answer_triggers(&w, asked, states, allow);
            if let Ok(bytes) = results {
                if let Ok(mut p) = w.lock() {
                    use std::io::Write;
                    let _ = p.s.write_all(&bytes).and_then(|_| p.s.flush());
                }
            }
            let (mut error, signal) = match status {
                Ok(st) => {
                    use std::os::unix::process::ExitStatusExt;
                    (
                        st.code().unwrap_or(1) as u32,
                        st.signal().unwrap_or(0) as u32,
                    )
                }
                Err(_) => (1, 0),
            };
            // Stopped because the client said QUIT: as fio's server, not an error.
            if quit.load(Ordering::Relaxed) && error == crate::run::signals::SIGNAL_EXIT as u32 {
                error = 0;
            }
            send_msg(&w, op::STOP, 0, &Stop { error, signal }.encode());
            send_msg(&w, op::QUIT, 0, &[]);
        });
        Ok(true)
    }

    /// The live status for SEND_ETA: which job threads run and for how long.
    fn eta(&self) -> JobsEta {
        let mut e = JobsEta {
            is_pow2: 1,
            unit_base: 4,
            sig_figs: 4,
            ..Default::default()
        };
        if let Some(r) = &self.run {
            // The run's own figures, while it goes.
            if let Some(dir) = self
                .dir
                .as_ref()
                .filter(|_| !r.done.load(Ordering::Relaxed))
            {
                if let Ok(b) = std::fs::read(dir.join(super::eta::ETA_FILE)) {
                    if let Ok(live) = JobsEta::decode(&b) {
                        return live;
                    }
                }
            }
            e.nr_threads = r.threads;
            e.elapsed_sec = r.started.elapsed().as_secs();
            if !r.done.load(Ordering::Relaxed) {
                // Before the run's first figures (its files are being laid out): as fio's
                // server in a run's first seconds, the ETA is unknown, so a client shows
                // the job count alone.
                e.nr_running = r.threads;
                e.eta_sec = i32::MAX as u64;
                e.run_str = crate::stats::status::condense(&"P".repeat(r.threads as usize));
            } else {
                e.run_str = crate::stats::status::condense(&"_".repeat(r.threads as usize));
            }
        }
        e
    }
}

/// A run is over: the triggers that came during it get the states it left, in the order
/// fio's server keeps (the states, then the command), before the run's results.
fn answer_triggers(w: &Writer, asked: Vec<String>, states: Option<Vec<u8>>, policy: &Policy) {
    if asked.is_empty() {
        return;
    }
    let empty = || 0u64.to_le_bytes().to_vec();
    // The verify states travel in fio 3.33's layout (`thread_io_list`, header version 3);
    // fio 3.39 changed it under the same protocol version as 3.38 (107), and 3.41 again,
    // so from 107 on none are sent rather than bytes the client would misread.
    let list = if proto_of(w).number() >= vstate::NEWER_LAYOUT_FROM {
        if states.is_some() {
            send_text(
                w,
                Text::ERR,
                &format!(
                    "iobench: server: verify states are sent in fio 3.33's layout only; this \
                     client speaks protocol version {} (fio 3.38 or later): none sent\n",
                    proto_of(w)
                ),
            );
        }
        empty()
    } else {
        states.unwrap_or_else(empty)
    };
    for command in asked {
        send_msg(w, op::VTRIGGER, 0, &list);
        trigger_command(w, policy, &command);
    }
}

/// Runs a client's trigger command (`--trigger-remote`) when the operator allows
/// commands (`--allow-exec`); otherwise the client hears it was not run.
fn trigger_command(w: &Writer, policy: &Policy, command: &str) {
    if command.is_empty() {
        return;
    }
    if policy.allow_exec {
        crate::fioflags::run_command(command, "server");
    } else {
        send_text(
            w,
            Text::ERR,
            &format!(
                "iobench: server: trigger command '{command}' not run: a client may not run \
                 commands on the server (its operator allows it with --allow-exec)\n"
            ),
        );
    }
}

/// The verify state files a run of `jobs` loads, as fio's server asks a client for them:
/// `<me>-<job, '/' as '.'>-<thread index>-verify.state` for every thread of a job with
/// `verify_state_load` (and a verify method), each with where the run will look for it.
fn state_files(
    jobs: &[crate::job::Job],
    me: &str,
    dir: &std::path::Path,
) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut first = 1u64;
    for job in jobs {
        let n = job.exec.numjobs.max(1);
        if job.verify.state_load && job.verify.method != crate::defs::verify_method::Method::None {
            for clone in 0..n {
                let index = crate::gen::fio_thread_number(first, job.exec.numjobs, clone) - 1;
                let name = format!("{me}-{}-{index}-verify.state", job.name.replace('/', "."));
                out.push((name, crate::verify::state::file_name(dir, &job.name, index)));
            }
        }
        first += n as u64;
    }
    out
}

/// The software the PROBE reply names: fio's field holds 31 characters, too few for
/// iobench's whole version string, so the short form (still naming the fio it follows).
/// The release named is the one the client's protocol version belongs to.
fn probe_version(p: Proto) -> String {
    format!(
        "iobench-{} (fio-{})",
        env!("CARGO_PKG_VERSION"),
        p.release()
    )
}

/// Sends what a child prints, line by line, as TEXT of `level`.
fn forward<R: Read + Send + 'static>(
    mut src: R,
    w: Writer,
    level: u32,
    quit: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut pending: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = match src.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            pending.extend_from_slice(&buf[..n]);
            while let Some(p) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=p).collect();
                if line == job::READY_LINE.as_bytes() {
                    send_msg(&w, op::IOB_READY, 0, &[]);
                } else if quit.load(Ordering::Relaxed)
                    && line.starts_with(b"iobench: terminating on signal")
                {
                    // The stop the client asked for: fio's server says nothing of it.
                } else {
                    send_text(&w, level, &String::from_utf8_lossy(&line));
                }
            }
        }
        if !pending.is_empty() {
            send_text(&w, level, &String::from_utf8_lossy(&pending));
        }
    })
}
