//! One client connection: reads its commands (PROBE, JOBLINE, JOB, LOAD_FILE, RUN,
//! SEND_ETA, VTRIGGER, UPDATE_JOB, QUIT, EXIT), starts the run as a child process and sends
//! back, one whole message at a time under one lock, the run's text lines, its results and
//! the end (STOP, then QUIT), as fio's server does.

use super::job::{self, CHILD_ARG, RESULTS};
use super::vtrigger;
use crate::fioproto::pdu::{self, ClientProbe, JobsEta, ProbeReply, Start, Stop, Text};
use crate::fioproto::stream::Stream;
use crate::fioproto::{op, read_cmd, send, Cmd, ProtoError};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

static EXITING: AtomicBool = AtomicBool::new(false);
static CONN_SEQ: AtomicU32 = AtomicU32::new(0);

/// True once a client asked the server to exit.
pub fn exiting() -> bool {
    EXITING.load(Ordering::Relaxed)
}

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
type Writer = Arc<Mutex<Stream>>;

fn send_msg(w: &Writer, opcode: u16, tag: u64, payload: &[u8]) -> bool {
    match w.lock() {
        Ok(mut s) => send(&mut *s, opcode, tag, payload).is_ok(),
        Err(_) => false,
    }
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
    dir: PathBuf,
    args: Vec<String>,
    files: Vec<String>,
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
}

/// The verify state a `verify_state_load` run needs from the client, as fio's server
/// asks for it: by SENDFILE, one file per job thread, before the job starts.
struct Fetch {
    /// Tag of each request → (the name asked for, where the run will load it).
    pending: Vec<(u64, String, PathBuf)>,
    threads: u32,
}

/// Serves one connection until the client closes it.
pub fn handle(stream: Stream, peer: &str, host: &str) {
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
    let seq = CONN_SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("iobench-server-{}-{seq}", std::process::id()));
    let mut c = Conn {
        w: Arc::new(Mutex::new(stream)),
        host: host.to_string(),
        peer: peer.to_string(),
        dir,
        args: Vec::new(),
        files: Vec::new(),
        run: None,
        sync: false,
        local,
        zlib: false,
        refused: false,
        me: String::new(),
        fetch: None,
    };
    let mut reader = reader;
    loop {
        let cmd = match read_cmd(&mut reader) {
            Ok(c) => c,
            Err(ProtoError::Closed) => break,
            Err(e) => {
                eprintln!("iobench: server: {}: {e}", c.peer);
                break;
            }
        };
        match c.command(cmd) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                eprintln!("iobench: server: {}: {e}", c.peer);
                break;
            }
        }
    }
    // A client gone mid-run: stop the run; its results have nowhere to go.
    if let Some(r) = &c.run {
        if !r.done.load(Ordering::Relaxed) {
            // SAFETY: signals our own child process by its pid.
            unsafe { libc::kill(r.pid as i32, libc::SIGTERM) };
        }
    }
    if let Ok(s) = c.w.lock() {
        s.shutdown();
    }
    let _ = std::fs::remove_dir_all(&c.dir);
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
                self.parsed()
            }
            pdu::Message::Job(text) => {
                std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
                let path = self.dir.join(format!("job{}.fio", self.files.len()));
                std::fs::write(&path, includes_from_cwd(&text)).map_err(|e| e.to_string())?;
                self.files.push(path.display().to_string());
                self.parsed()
            }
            pdu::Message::LoadFile(path) => {
                self.files.push(path);
                self.parsed()
            }
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
                        // SAFETY: signals our own child process by its pid.
                        unsafe { libc::kill(r.pid as i32, libc::SIGTERM) };
                    }
                }
                Ok(true)
            }
            pdu::Message::Exit => {
                EXITING.store(true, Ordering::Relaxed);
                if let Some(r) = &self.run {
                    // SAFETY: signals our own child process by its pid.
                    unsafe { libc::kill(r.pid as i32, libc::SIGTERM) };
                }
                let _ = std::fs::remove_dir_all(&self.dir);
                std::process::exit(0);
            }
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
                if slot.asked.is_empty() {
                    let flag = self.dir.join(vtrigger::TRIGGER_FILE);
                    if let Err(e) = std::fs::write(&flag, b"") {
                        eprintln!("iobench: server: {}: {e}", flag.display());
                    }
                }
                slot.asked.push(command);
                return;
            }
        }
        let states = job::load(&self.full_args())
            .map(|(_, jobs)| vtrigger::idle_states(&jobs))
            .unwrap_or_default();
        let list = crate::fioproto::vstate::encode_list(&states);
        send_msg(&self.w, op::VTRIGGER, 0, &list);
        if self.fetch.take().is_some() {
            send_msg(&self.w, op::STOP, 0, &Stop::default().encode());
            send_msg(&self.w, op::QUIT, 0, &[]);
        }
        crate::fioflags::run_command(&command, "server");
    }

    /// UPDATE_JOB, gfio's option editor (fio's command-line client never sends it): an
    /// unknown thread gets ENODEV as from fio's server; a known one keeps its options,
    /// which iobench cannot take in fio's packed form, and the answer says so
    /// (EOPNOTSUPP, with a line of text for gfio's log).
    fn update_job(&mut self, tag: u64, u: pdu::UpdateJob) {
        let threads = job::load(&self.full_args())
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
            fio_version: probe_version(),
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

    /// The whole command line the run will get.
    fn full_args(&self) -> Vec<String> {
        let mut a = self.args.clone();
        a.extend(self.files.iter().cloned());
        a
    }

    /// After JOBLINE, JOB or LOAD_FILE: checks what was sent so far and answers START
    /// with the counts, or an error text and QUIT, as fio does when parsing fails.
    fn parsed(&mut self) -> Result<bool, String> {
        match job::load(&self.full_args()) {
            Ok((_, jobs)) => {
                let (threads, reports) = job::counts(&jobs);
                let s = Start {
                    jobs: threads,
                    stat_outputs: reports,
                };
                Ok(send_msg(&self.w, op::START, 0, &s.encode()))
            }
            Err(e) => {
                send_text(&self.w, Text::ERR, &format!("iobench: {e}\n"));
                send_msg(&self.w, op::QUIT, 0, &[]);
                self.refused = true;
                Ok(true)
            }
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
        let (_, jobs) = match job::load(&self.full_args()) {
            Ok(x) => x,
            Err(e) => {
                send_text(&self.w, Text::ERR, &format!("iobench: {e}\n"));
                send_msg(&self.w, op::QUIT, 0, &[]);
                return Ok(true);
            }
        };
        let (threads, _) = job::counts(&jobs);
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let wanted = state_files(&jobs, &self.me, &self.dir);
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
        std::fs::write(&local, &r.data)
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
        let mut cmd = Command::new(exe);
        cmd.arg(CHILD_ARG).arg(&self.dir);
        if states_here {
            cmd.arg(format!("--aux-path={}", self.dir.display()));
        }
        cmd.args(self.full_args())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(a) = &self.local {
            cmd.env(job::ADDR_ENV, a);
        }
        if self.zlib {
            cmd.env(job::ZLIB_ENV, "1");
        }
        if self.sync {
            cmd.env(job::SYNC_ENV, "1").stdin(Stdio::piped());
        } else {
            cmd.stdin(Stdio::null());
        }
        let mut child: Child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the run: {e}"))?;
        for _ in 0..threads.max(1) {
            send_msg(&self.w, op::SERVER_START, 0, &[]);
        }
        let done = Arc::new(AtomicBool::new(false));
        let quit = Arc::new(AtomicBool::new(false));
        let trigger = Arc::new(Mutex::new(TriggerSlot::default()));
        self.run = Some(Running {
            trigger: trigger.clone(),
            quit: quit.clone(),
            go: child.stdin.take(),
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
        let (w, dir) = (self.w.clone(), self.dir.clone());
        std::thread::spawn(move || {
            for h in [out, err].into_iter().flatten() {
                let _ = h.join();
            }
            let status = child.wait();
            done.store(true, Ordering::Relaxed);
            answer_triggers(&w, &dir, &trigger);
            let results = dir.join(RESULTS);
            if let Ok(bytes) = std::fs::read(&results) {
                let _ = std::fs::remove_file(&results);
                if let Ok(mut s) = w.lock() {
                    use std::io::Write;
                    let _ = s.write_all(&bytes).and_then(|_| s.flush());
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
            if !r.done.load(Ordering::Relaxed) {
                if let Ok(b) = std::fs::read(self.dir.join(super::eta::ETA_FILE)) {
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
fn answer_triggers(w: &Writer, dir: &std::path::Path, trigger: &Mutex<TriggerSlot>) {
    let asked = {
        let mut slot = trigger.lock().unwrap_or_else(|e| e.into_inner());
        slot.over = true;
        std::mem::take(&mut slot.asked)
    };
    if asked.is_empty() {
        return;
    }
    let states = dir.join(vtrigger::STATES_FILE);
    let list = std::fs::read(&states).unwrap_or_else(|_| 0u64.to_le_bytes().to_vec());
    let _ = std::fs::remove_file(states);
    let _ = std::fs::remove_file(dir.join(vtrigger::TRIGGER_FILE));
    for command in asked {
        send_msg(w, op::VTRIGGER, 0, &list);
        crate::fioflags::run_command(&command, "server");
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
fn probe_version() -> String {
    format!("iobench-{} (fio-3.33)", env!("CARGO_PKG_VERSION"))
}

/// A job sent as text has no directory of its own: as fio's server does, its relative
/// `include`s name files in the server's working directory. The text is kept in a
/// scratch directory, so they are made absolute.
fn includes_from_cwd(text: &str) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        match t
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            Some(rest) if !rest.trim().starts_with('/') && !rest.trim().is_empty() => {
                let name = rest.trim();
                out.push_str(&format!("include {}\n", cwd.join(name).display()));
            }
            _ => out.push_str(line),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_includes_name_the_servers_directory() {
        let cwd = std::env::current_dir().unwrap();
        let out = includes_from_cwd("[a]\ninclude common.fio\n  include /abs.fio\nrw=read\n");
        assert_eq!(
            out,
            format!(
                "[a]\ninclude {}\n  include /abs.fio\nrw=read\n",
                cwd.join("common.fio").display()
            )
        );
    }
}
