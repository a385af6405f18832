//! `iobench --client`: drives fio servers of any release from 3.33 (or iobench's) over
//! fio's protocol, in each server's protocol version (see `handshake`), as fio's own client
//! does: connect to every server, PROBE it, send its job files (JOB, or
//! LOAD_FILE for `--remote-config`) and the output flags (JOBLINE), start them all (RUN),
//! then print what they send: their text lines as they come (`<host> …`), each server's
//! report when it is done, and the "All clients" total at the end ([`output`]).
//!
//! While the servers run, their statuses are asked for and drawn as one status line
//! ([`eta`]), as fio's client draws it. `--trigger-file`/`--trigger-timeout` stop them and
//! bring their verify states back ([`trigger`]).
//!
//! Unlike fio's client, a server that disconnects mid-run does not take the others down:
//! the rest are reported and the exit status says that one failed.

pub mod args;
pub mod eta;
pub mod output;
pub mod trigger;

use crate::fioproto::addr::Endpoint;
use crate::fioproto::pdu::{self, ClientProbe, JobOpt, Message, Stop, PROBE_FLAG_ZLIB};
use crate::fioproto::stream::Stream;
use crate::fioproto::{op, read_cmd, send_as, Cmd, Proto, ProtoError};
use args::ClientArgs;
use output::{HostReport, Printer};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One server being driven.
struct Client {
    host: HostReport,
    stream: Option<Stream>,
    /// The protocol version the server speaks (from its first reply).
    proto: u16,
    /// fio's `skip_newline`: the last text line ended without a newline.
    skip_newline: bool,
    /// Text received but not yet printed: the part after its last newline.
    pending: String,
    /// Reports announced in START (fio's `nr_stat`).
    nr_stat: u32,
    stop: Option<Stop>,
    done: bool,
    /// Why the connection ended early, when it did.
    lost: Option<String>,
    /// Its PROBE reply came (`sync`: it is an iobench server that waits for the go).
    probed: bool,
    sync: bool,
    /// Its files are laid out and its jobs wait for the go.
    ready: bool,
    /// START answers still due before RUN is sent.
    starts_pending: usize,
    /// RUN was sent.
    running: bool,
    /// Its jobs run (SERVER_START came, STOP not yet): it is asked for its status.
    jobs_running: bool,
    /// The tag of the status request it has not answered yet.
    eta_tag: Option<u64>,
    /// Its answer to the current status request.
    eta: Option<pdu::JobsEta>,
    /// Its name in the verify state files it asks for or sends back (fio's
    /// `server_name`: the address reached, or `sock`).
    me: String,
    /// Its verify states came back after a trigger: it may go away now without failing
    /// the run.
    states_saved: bool,
    /// The "still there?" request it has not answered, and when the last one went.
    alive_asked: Option<Instant>,
    alive_sent: Option<Instant>,
    /// When it last sent anything (or was connected): a server that accepts and says
    /// nothing must not hang the client ([`check_silent`]).
    heard: Instant,
}

/// SIGINT/SIGTERM seen: at the first the servers are asked to stop (QUIT) and their
/// results printed; at the second the client stops waiting for them.
static INTERRUPTED: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.fetch_add(1, Ordering::Relaxed);
}

/// Ctrl-C stops the servers' runs instead of the client, as fio's client does.
fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

enum Event {
    Cmd(usize, Cmd),
    End(usize, ProtoError),
}

/// The client's entry: `args` is the whole command line.
pub fn main(argv: &[String]) -> ExitCode {
    let a = match args::parse(argv) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{}", args::SPEC.help());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("iobench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Connects, sends the jobs and starts every server; then handles their messages until all
/// are done. `Ok(false)`: some server failed or was lost.
fn run(a: &ClientArgs) -> Result<bool, String> {
    let started = Instant::now();
    let mut printer = Printer::new(a)?;
    let mut clients: Vec<Client> = Vec::new();
    // The version tried first: the dialect's; each server's first reply says its own.
    let first_try = Proto::of_release(a.release()).number();
    let mut ok = true;
    for h in &a.hosts {
        let host = HostReport::new(&h.given, h.endpoint.port());
        let mut c = Client {
            host,
            stream: None,
            proto: first_try,
            skip_newline: false,
            pending: String::new(),
            nr_stat: 0,
            stop: None,
            done: false,
            lost: None,
            probed: false,
            sync: false,
            ready: false,
            starts_pending: 0,
            running: false,
            jobs_running: false,
            eta_tag: None,
            eta: None,
            me: String::new(),
            states_saved: false,
            alive_asked: None,
            alive_sent: None,
            heard: Instant::now(),
        };
        match Stream::connect(&h.endpoint) {
            Ok(s) => {
                c.stream = Some(s);
                c.heard = Instant::now();
            }
            Err(e) => {
                eprintln!("iobench: client <{}>: {e}", h.given);
                ok = false;
                c.done = true;
            }
        }
        clients.push(c);
    }
    let (tx, rx) = mpsc::channel::<Event>();
    for (i, (c, h)) in clients.iter_mut().zip(&a.hosts).enumerate() {
        let Some(s) = c.stream.take() else { continue };
        c.me = server_name(&s, h);
        let (s, first) = match handshake(s, &h.endpoint, c.proto, &c.me) {
            Ok(x) => x,
            Err(e) => {
                // Said now, and reported with the servers lost on the way
                // (`disconnected (…)`).
                eprintln!("iobench: client <{}>: {e}", h.given);
                c.lost = Some(e);
                c.done = true;
                continue;
            }
        };
        c.proto = first.version;
        // The reply is the first message the loop below handles.
        let _ = tx.send(Event::Cmd(i, first));
        let s = c.stream.insert(s);
        match start_client(s, c.proto, h, a) {
            Ok(n) => c.starts_pending = n,
            Err(e) => {
                eprintln!("iobench: client <{}>: {e}", h.given);
                ok = false;
                c.done = true;
                continue;
            }
        }
        let mut reader = match s.try_clone() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("iobench: client <{}>: {e}", h.given);
                c.done = true;
                ok = false;
                continue;
            }
        };
        let tx = tx.clone();
        std::thread::spawn(move || loop {
            match read_cmd(&mut reader) {
                Ok(cmd) => {
                    if tx.send(Event::Cmd(i, cmd)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Event::End(i, e));
                    return;
                }
            }
        });
    }
    drop(tx);
    let mut go_sent = false;
    let mut quit_sent = false;
    let mut status = eta::target(a, crate::stats::status::stdout_is_tty()).map(|t| StatusRounds {
        target: t,
        line: eta::StatusLine::new(a.eta_newline_ms),
        every: Duration::from_millis(a.eta_interval_ms),
        t0: Instant::now(),
        next: Instant::now(),
        asked_at: None,
        tag: 0,
    });
    let mut trig = trigger::Trigger::new(a, started);
    let states_dir = trigger::state_dir(a);
    catch_signals();
    while clients.iter().any(|c| !c.done) {
        let signals = INTERRUPTED.load(Ordering::Relaxed);
        if signals > 1 {
            for c in clients.iter_mut().filter(|c| !c.done) {
                c.lost = Some("interrupted".into());
                c.done = true;
            }
            break;
        }
        if signals > 0 && !quit_sent {
            quit_sent = true;
            for c in clients.iter_mut().filter(|c| !c.done) {
                if let Some(s) = c.stream.as_mut() {
                    let _ = send_as(s, c.proto, op::QUIT, 0, &[]);
                }
            }
        }
        if let Some(st) = status.as_mut() {
            st.tick(&mut clients);
        }
        if let Some(t) = trig.as_mut() {
            if t.due() {
                send_trigger(&mut clients, &t.remote);
            }
        }
        check_alive(&mut clients);
        check_silent(&mut clients);
        let ev = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(ev) => ev,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match ev {
            Event::Cmd(i, cmd) => {
                let c = &mut clients[i];
                c.alive_asked = None;
                c.heard = Instant::now();
                match pdu::decode(&cmd, true) {
                    Ok(Message::VtriggerState(states)) => {
                        if !states_back(c, &states, trig.as_ref(), &states_dir, &mut printer)? {
                            ok = false;
                        }
                    }
                    Ok(msg) => handle(c, &cmd, msg, &states_dir, &mut printer)?,
                    Err(e) => {
                        c.lost = Some(e.to_string());
                        c.done = true;
                    }
                }
            }
            Event::End(i, e) => {
                let c = &mut clients[i];
                if !c.done {
                    c.lost = Some(e.to_string());
                    c.done = true;
                }
            }
        }
        if !go_sent {
            go_sent = maybe_go(&mut clients);
        }
    }
    for c in &mut clients {
        if !c.pending.is_empty() {
            printer.text(&format!("{}\n", std::mem::take(&mut c.pending)))?;
        }
        if c.lost.is_none() && !c.running && c.stream.is_some() {
            // It quit without running (its jobs did not parse): its text said why.
            ok = false;
        }
        if c.lost.is_none() && c.running && c.stop.is_none() && c.stream.is_some() {
            // It quit after RUN without ending a run (fio's server does so when a job
            // cannot load its verify state): fio's client says nothing and exits 0.
            printer.text(&format!(
                "client <{}>: the server ended the run without results\n",
                c.host.hostname
            ))?;
            ok = false;
        }
        if let Some(why) = &c.lost {
            if c.states_saved {
                // Its states are here: the trigger's command may well have taken it down.
                printer.text(&format!(
                    "client: host={} disconnected after the trigger ({why}); its verify \
                     state was saved\n",
                    c.host.hostname
                ))?;
            } else {
                printer.text(&format!(
                    "client: host={} disconnected ({why})\n",
                    c.host.hostname
                ))?;
                ok = false;
            }
        }
        if let Some(st) = c.stop {
            if st.error != 0 {
                ok = false;
            }
        }
        if let Some(s) = &c.stream {
            s.shutdown();
        }
    }
    let reports: u32 = clients.iter().map(|c| c.nr_stat).sum();
    printer.finish(reports)?;
    Ok(ok)
}

/// How long a status request may go unanswered before its round is dropped (fio's client
/// gives up on a SEND_ETA after 5 s too, and keeps going).
const ETA_TIMEOUT: Duration = Duration::from_secs(5);

/// The status line's requests: one round per `--eta-interval`, to every server whose jobs
/// run; the line is drawn once all of them answered.
struct StatusRounds {
    target: eta::Target,
    line: eta::StatusLine,
    every: Duration,
    t0: Instant,
    next: Instant,
    /// When the round in flight was asked.
    asked_at: Option<Instant>,
    /// The last round's tag (the servers echo it).
    tag: u64,
}

impl StatusRounds {
    fn tick(&mut self, clients: &mut [Client]) {
        if let Some(at) = self.asked_at {
            let waiting = clients.iter().any(|c| !c.done && c.eta_tag.is_some());
            if waiting && at.elapsed() < ETA_TIMEOUT {
                return;
            }
            self.asked_at = None;
            let answers: Vec<pdu::JobsEta> =
                clients.iter_mut().filter_map(|c| c.eta.take()).collect();
            for c in clients.iter_mut() {
                c.eta_tag = None;
            }
            if !waiting && !answers.is_empty() {
                let now_ms = self.t0.elapsed().as_millis() as u64;
                let text = self.line.render(&eta::sum(&answers), now_ms);
                eta::draw(self.target, &text);
            }
        }
        if Instant::now() < self.next {
            return;
        }
        self.next = Instant::now() + self.every;
        self.tag += 1;
        for c in clients.iter_mut().filter(|c| !c.done && c.jobs_running) {
            if let Some(s) = c.stream.as_mut() {
                if send_as(s, c.proto, op::SEND_ETA, self.tag, &[]).is_ok() {
                    c.eta_tag = Some(self.tag);
                    self.asked_at = Some(Instant::now());
                }
            }
        }
    }
}

/// The synchronised start: once every live server answered PROBE and every iobench server
/// among them has its files laid out, all of those are told to go at once. fio servers
/// cannot wait: they start as soon as they get RUN. `true` once the go is sent.
fn maybe_go(clients: &mut [Client]) -> bool {
    let live = || clients.iter().filter(|c| !c.done);
    if live().any(|c| !c.probed || (c.sync && !c.ready)) {
        return false;
    }
    for c in clients.iter_mut().filter(|c| !c.done && c.sync) {
        if let Some(s) = c.stream.as_mut() {
            if let Err(e) = send_as(s, c.proto, op::IOB_GO, 0, &[]) {
                c.lost = Some(format!("go: {e}"));
                c.done = true;
            }
        }
    }
    true
}

/// PROBE, then the output flags (JOBLINE) and the job files (JOB or LOAD_FILE). Returns
/// how many START answers to wait for before RUN: a server that cannot parse a job answers
/// with its error and QUIT instead, and closes; a RUN sent to it then would arrive after
/// it closed and reset the connection, losing its last messages.
fn start_client(s: &mut Stream, v: u16, h: &args::Host, a: &ClientArgs) -> Result<usize, String> {
    let mut starts = 0;
    let e = |e: std::io::Error| e.to_string();
    let send =
        |s: &mut Stream, opcode: u16, tag: u64, payload: &[u8]| send_as(s, v, opcode, tag, payload);
    if !a.forward.is_empty() {
        let mut line = vec!["fio".to_string()];
        line.extend(a.forward.iter().cloned());
        send(s, op::JOBLINE, 0, &pdu::encode_jobline(&line, 1)).map_err(e)?;
        starts += 1;
    }
    let files: Vec<(String, bool)> = if h.files.is_empty() {
        a.shared_files.iter().map(|f| (f.clone(), false)).collect()
    } else {
        h.files.clone()
    };
    if files.is_empty() {
        return Err(
            "no job file for this server (job files right after a --client go to \
                    that server only; a host-list file sends the same jobs to every host)"
                .into(),
        );
    }
    for (f, remote) in files {
        starts += 1;
        if remote {
            send(s, op::LOAD_FILE, 0, &pdu::encode_load_file(&f, 1)).map_err(e)?;
        } else {
            let text =
                std::fs::read_to_string(&f).map_err(|err| format!("job file <{f}> open: {err}"))?;
            send(s, op::JOB, 0, &pdu::encode_job(&text, pdu::CLIENT_TYPE_CLI)).map_err(e)?;
        }
    }
    Ok(starts)
}

/// Says PROBE in version `v` and reads the answer. A fio server of another version
/// answers in its own (with an error text) and closes: the client connects again and
/// speaks that version. One that closes without a word, asked in another version than
/// fio 3.33's, is asked again in 3.33's (an iobench server older than its protocol
/// versions). Returns the connection and the server's first reply in the version kept.
fn handshake(mut s: Stream, ep: &Endpoint, v: u16, me: &str) -> Result<(Stream, Cmd), String> {
    let probe = ClientProbe {
        flags: PROBE_FLAG_ZLIB | pdu::PROBE_FLAG_SYNC_START,
        server: me.to_string(),
    };
    let mut v = v;
    let mut tried: Vec<u16> = Vec::new();
    loop {
        tried.push(v);
        send_as(&mut s, v, op::PROBE, 0, &probe.encode()).map_err(|e| e.to_string())?;
        set_read_timeout(&s, Some(PROBE_TIMEOUT));
        let got = read_cmd(&mut s);
        set_read_timeout(&s, None);
        let next = match got {
            Ok(cmd) if cmd.version == v => return Ok((s, cmd)),
            Ok(cmd) => cmd.version,
            Err(ProtoError::Closed) if v != crate::fioproto::VERSION => crate::fioproto::VERSION,
            Err(ProtoError::Version { got }) => {
                return Err(format!(
                    "protocol version mismatch: the server speaks version {got}, iobench \
                     speaks versions {} (fio 3.33) to {} (fio master)",
                    crate::fioproto::OLDEST_VERSION,
                    crate::fioproto::NEWEST_VERSION
                ))
            }
            Err(ProtoError::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!(
                    "timeout on cmd PROBE: the server accepted the connection but sent \
                     nothing for {} s",
                    PROBE_TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(e.to_string()),
        };
        if tried.contains(&next) {
            return Err(format!(
                "PROBE: no protocol version agreed (tried {tried:?})"
            ));
        }
        s.shutdown();
        s = Stream::connect(ep)?;
        v = next;
    }
}

fn set_read_timeout(s: &Stream, t: Option<Duration>) {
    let _ = match s {
        Stream::Tcp(t2) => t2.set_read_timeout(t),
        Stream::Unix(u) => u.set_read_timeout(t),
    };
}

/// As fio's client names a server to it (PROBE): the address it reached, as text
/// (`127.0.0.1`, `::1`), or `sock`. A fio server names the verify state files it asks for
/// (SENDFILE) after it, and the client names the states a trigger brings back so.
fn server_name(s: &Stream, h: &args::Host) -> String {
    match (&h.endpoint, s) {
        (Endpoint::Unix(_), _) => "sock".to_string(),
        (_, Stream::Tcp(t)) => t
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_default(),
        (Endpoint::Tcp { host, .. }, _) => host.clone().unwrap_or_else(|| "localhost".into()),
    }
}

/// The trigger fired: every server still there is told, with the command it is to run.
fn send_trigger(clients: &mut [Client], remote: &str) {
    let payload = crate::fioproto::vstate::encode_command(remote);
    for c in clients.iter_mut().filter(|c| !c.done) {
        if let Some(s) = c.stream.as_mut() {
            if let Err(e) = send_as(s, c.proto, op::VTRIGGER, 0, &payload) {
                c.lost = Some(format!("VTRIGGER: {e}"));
                c.done = true;
            }
        }
    }
}

/// A server's verify states after the trigger: saved, then `--trigger` runs. `Ok(false)`:
/// they could not be saved (the run then fails: a later verify would have nothing to go
/// by).
fn states_back(
    c: &mut Client,
    states: &[crate::fioproto::vstate::ThreadState],
    trig: Option<&trigger::Trigger>,
    dir: &std::path::Path,
    printer: &mut Printer,
) -> Result<bool, String> {
    c.states_saved = true;
    let saved = trigger::save_states(dir, &c.me, states);
    if let Err(e) = &saved {
        printer.text(&format!("client <{}>: {e}\n", c.host.hostname))?;
    }
    if let Some(cmd) = trig.and_then(|t| t.local.as_deref()) {
        crate::fioflags::run_command(cmd, "client");
    }
    Ok(saved.is_ok())
}

/// Servers whose states came back are asked now and then whether they are still there;
/// one silent for [`trigger::SILENCE`] is let go (see [`trigger`]).
fn check_alive(clients: &mut [Client]) {
    for c in clients.iter_mut().filter(|c| c.states_saved && !c.done) {
        if c.alive_asked
            .is_some_and(|t| t.elapsed() >= trigger::SILENCE)
        {
            c.lost = Some(format!("no answer for {} s", trigger::SILENCE.as_secs()));
            c.done = true;
            continue;
        }
        if c.alive_asked.is_some()
            || c.alive_sent
                .is_some_and(|t| t.elapsed() < trigger::ALIVE_EVERY)
        {
            continue;
        }
        if let Some(s) = c.stream.as_mut() {
            if send_as(s, c.proto, op::SEND_ETA, trigger::ALIVE_TAG, &[]).is_ok() {
                let now = Instant::now();
                c.alive_asked = Some(now);
                c.alive_sent = Some(now);
            }
        }
    }
}

/// How long a server may leave PROBE unanswered (fio's client gives up on any command
/// after 5 s too: "timeout on cmd PROBE").
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a server whose run was started may say nothing at all: it is asked for its
/// status every [`trigger::ALIVE_EVERY`] of silence and answers at once while its jobs
/// run, so this is many missed answers (fio's client gives up after six SEND_ETA
/// timeouts of 5 s).
const RUN_SILENCE: Duration = Duration::from_secs(30);

/// [`RUN_SILENCE`], or `IOBENCH_CLIENT_SILENCE_MS` when set (a test's way to see the
/// timeout without waiting 30 s; not a user setting).
fn run_silence() -> Duration {
    static SILENCE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *SILENCE.get_or_init(|| {
        std::env::var("IOBENCH_CLIENT_SILENCE_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(RUN_SILENCE, Duration::from_millis)
    })
}

/// A timeout as the messages say it: whole seconds, else milliseconds.
fn said(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Lets go of a server that accepted the connection and never answered PROBE, or that
/// went silent after its run started, naming it on stderr.
fn check_silent(clients: &mut [Client]) {
    for c in clients
        .iter_mut()
        .filter(|c| !c.done && !c.states_saved && c.stream.is_some())
    {
        let quiet = c.heard.elapsed();
        let why = if !c.probed && quiet >= PROBE_TIMEOUT {
            format!(
                "timeout on cmd PROBE: the server accepted the connection but sent \
                 nothing for {} s",
                PROBE_TIMEOUT.as_secs()
            )
        } else if c.probed && c.running && quiet >= run_silence() {
            format!(
                "timeout: the server sent nothing for {}, not even an answer to a \
                 status request",
                said(run_silence())
            )
        } else {
            if c.probed
                && c.running
                && quiet >= trigger::ALIVE_EVERY
                && c.alive_sent
                    .is_none_or(|t| t.elapsed() >= trigger::ALIVE_EVERY)
            {
                if let Some(s) = c.stream.as_mut() {
                    if send_as(s, c.proto, op::SEND_ETA, trigger::ALIVE_TAG, &[]).is_ok() {
                        c.alive_sent = Some(Instant::now());
                    }
                }
            }
            continue;
        };
        eprintln!("iobench: client <{}>: {why}", c.host.hostname);
        c.lost = Some(why);
        c.done = true;
    }
}

/// One message from a server.
fn handle(
    c: &mut Client,
    cmd: &Cmd,
    msg: Message,
    states_dir: &std::path::Path,
    printer: &mut Printer,
) -> Result<(), String> {
    match msg {
        Message::ProbeReply(p) => {
            printer.probe(&p)?;
            c.host.name = Some(p.hostname.clone());
            c.host.version = p.fio_version.clone();
            c.probed = true;
            c.sync = p.flags & pdu::PROBE_FLAG_SYNC_START != 0;
        }
        Message::Text(t) => {
            let name = c.host.display_name().to_string();
            // fio leaves the `<host>` prefix out of terse output only.
            if !c.skip_newline && !printer.terse() {
                c.pending.push_str(&format!("<{name}> "));
            }
            c.pending.push_str(&t.text);
            c.skip_newline = !t.text.contains('\n');
            // fio's client prints every level where the report goes, as it comes; here
            // only whole lines, so that two servers' lines never mix within a line
            // (fio#673).
            if let Some(end) = c.pending.rfind('\n') {
                let whole: String = c.pending.drain(..=end).collect();
                printer.text(&whole)?;
            }
        }
        Message::Start(s) => {
            c.nr_stat += s.stat_outputs;
            c.starts_pending = c.starts_pending.saturating_sub(1);
            if c.starts_pending == 0 && !c.running {
                c.running = true;
                if let Some(st) = c.stream.as_mut() {
                    if let Err(e) = send_as(st, c.proto, op::RUN, 0, &[]) {
                        c.lost = Some(format!("RUN: {e}"));
                        c.done = true;
                    }
                }
            }
        }
        Message::JobOpt(o) => add_job_opt(c, o, printer),
        Message::Ts(ts) => {
            printer.thread(&mut c.host, *ts);
        }
        Message::Gs(g) => printer.group(&mut c.host, g.0),
        Message::Du(d) => printer.disk(&mut c.host, d.0),
        Message::Stop(st) => {
            c.stop = Some(st);
            c.jobs_running = false;
            if st.error != 0 {
                printer.text(&format!(
                    "client <{}>: exited with error {}\n",
                    c.host.hostname, st.error
                ))?;
            }
        }
        Message::Quit => {
            c.done = true;
            if !c.pending.is_empty() {
                printer.text(&std::mem::take(&mut c.pending))?;
            }
            printer.host_done(&c.host)?;
        }
        Message::Iolog(log) => {
            let path = format!("{}.{}", log.name, c.host.hostname);
            let bytes = if log.compressed == crate::fioproto::iolog::STORE_COMPRESSED {
                log.raw.clone()
            } else {
                log.text().into_bytes()
            };
            // A log shared by the jobs (`per_job_logs=0`, told from version 102 on) is
            // appended to, as fio's client does; else written anew.
            let written = if log.per_job_logs {
                std::fs::write(&path, bytes)
            } else {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .and_then(|mut f| f.write_all(&bytes))
            };
            if let Err(e) = written {
                eprintln!("iobench: client: log {path}: {e}");
            }
        }
        Message::IobReady => c.ready = true,
        Message::ServerStart => c.jobs_running = true,
        Message::Eta(e) => {
            if c.eta_tag == Some(cmd.tag) {
                c.eta_tag = None;
                c.eta = Some(e);
            }
        }
        Message::SendFile(path) => {
            let reply = send_file(&c.host.hostname, states_dir, &path);
            if let Some(s) = c.stream.as_mut() {
                if let Err(e) = send_as(s, c.proto, op::SENDFILE, cmd.tag, &reply.encode()) {
                    c.lost = Some(format!("SENDFILE: {e}"));
                    c.done = true;
                }
            }
        }
        Message::AddJob => {}
        other => {
            eprintln!(
                "iobench: client <{}>: unexpected {} message ({other:?})",
                c.host.hostname,
                cmd.name()
            );
        }
    }
    Ok(())
}

/// A server's request for a file from the client's directory (`--aux-path`, or here).
/// fio 3.33's servers ask for the verify state of a `verify_state_load` job, and fio's
/// client sends whatever path it is asked for (from its current directory); this one
/// sends verify state files only (a plain name ending in `-verify.state`), so that a
/// server cannot read the client's other files.
fn send_file(host: &str, dir: &std::path::Path, path: &str) -> pdu::SendFileReply {
    let fail = |error: i32| pdu::SendFileReply {
        error: error as u32,
        data: Vec::new(),
    };
    if path.contains('/') || !path.ends_with("-verify.state") {
        eprintln!(
            "iobench: client <{host}>: refused the server's request for file <{path}> \
             (only verify state files, ADDRESS-JOB-N-verify.state, are sent)"
        );
        return fail(libc::EACCES);
    }
    match std::fs::read(dir.join(path)) {
        Ok(data) if data.len() > crate::fioproto::MAX_PAYLOAD - pdu::SendFileReply::HDR => {
            fail(libc::EFBIG)
        }
        Ok(data) => pdu::SendFileReply { error: 0, data },
        Err(e) => fail(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

fn add_job_opt(c: &mut Client, mut o: JobOpt, printer: &mut Printer) {
    // A credential the server sends back stays out of the client's reports.
    if crate::options::redact::is_secret(&o.name) {
        o.value = crate::defs::REDACTED.to_string();
    }
    if o.global {
        printer.global_option(&mut c.host, &o.name, &o.value);
    } else {
        let i = o.groupid as usize;
        if i < 4096 {
            if c.host.opt_lists.len() <= i {
                c.host.opt_lists.resize(i + 1, Vec::new());
            }
            c.host.opt_lists[i].push((o.name, o.value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_verify_state_files_are_sent() {
        for asked in [
            "/etc/passwd",
            "../x-verify.state",
            "notes.txt",
            "a/b-verify.state",
        ] {
            let r = send_file("h", std::path::Path::new("."), asked);
            assert_eq!(r.error, libc::EACCES as u32, "{asked}");
            assert!(r.data.is_empty());
        }
        let r = send_file("h", std::path::Path::new("."), "no-such-job-0-verify.state");
        assert_eq!(r.error, libc::ENOENT as u32);
    }
}
