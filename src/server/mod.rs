//! `iobench --server`: answers fio's clients of any release from 3.33 (and iobench's) over
//! fio's protocol, each in its own protocol version. One
//! thread per connection reads commands; each run is a child process ([`job`]) whose
//! informational lines become TEXT messages and whose results come back as fio's TS, GS and
//! DU messages. Also the command-line entry for `--server`, `--daemonize` and `--client`
//! ([`dispatch`]).

mod conn;
mod eta;
pub mod job;
mod logs;
pub mod policy;
mod slots;
pub mod vtrigger;

use crate::fioproto::addr::{self, Endpoint};
use crate::fioproto::stream::Stream;
use std::net::TcpListener;
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::ExitCode;

/// What the flags that make iobench a server or a client ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// `--server[=ADDR]`: serve (`serve`), with `--daemonize=PIDFILE`'s pid file.
    Serve {
        /// The address as given (empty: fio's default).
        addr: String,
        /// Where to write the daemon's pid.
        pidfile: Option<String>,
    },
    /// `--client=HOST …`: drive servers (`client::main` with the whole command line).
    Client,
}

/// Reads the flags that make iobench a server or a client, before the plain command line
/// is parsed: `None` when none is given (a plain run); an error to print after
/// `iobench: `.
pub fn mode(args: &[String]) -> Result<Option<Mode>, String> {
    let flag = |a: &str, name: &str| -> Option<Option<String>> {
        let body = a.strip_prefix("--").or_else(|| a.strip_prefix('-'))?;
        if body == name {
            Some(None)
        } else {
            body.strip_prefix(name)
                .and_then(|r| r.strip_prefix('='))
                .map(|v| Some(v.to_string()))
        }
    };
    let mut server: Option<Option<String>> = None;
    let mut pidfile: Option<String> = None;
    let mut client = false;
    let mut pol = policy::Policy::default();
    let mut pol_flags: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(r) = policy::flag(&mut pol, a) {
            r?;
            pol_flags.push(a.clone());
        } else if let Some(v) = flag(a, "server") {
            server = Some(v);
        } else if let Some(v) = flag(a, "daemonize") {
            pidfile = match v {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    args.get(i).cloned()
                }
            };
            if pidfile.as_deref().is_none_or(str::is_empty) {
                return Err(
                    "option '--daemonize': a pid file is required (expected --daemonize=PIDFILE)"
                        .into(),
                );
            }
        } else if flag(a, "client").is_some() {
            client = true;
        }
        i += 1;
    }
    if server.is_some() && client {
        return Err("can't be both client and server (--server and --client)".into());
    }
    if let Some(arg) = server {
        // The operator's policy (docs/security.md) is fixed here, once, for `serve`.
        policy::set(pol);
        return Ok(Some(Mode::Serve {
            addr: arg.unwrap_or_default(),
            pidfile,
        }));
    }
    if let Some(f) = pol_flags.first() {
        return Err(format!(
            "option '{f}' is a server's option (it goes with --server)"
        ));
    }
    // `--daemonize` without `--server`: fio ignores it; the plain command line decides.
    Ok(client.then_some(Mode::Client))
}

/// What the server makes of a client's bytes before anything runs, with no socket: the
/// messages read under the server's size limit, each payload decoded, a command line
/// checked against the flags a client may send, and job texts parsed with includes
/// refused. Returns how many messages were read. For the fuzz target; never panics.
pub fn take_client_bytes(data: &[u8]) -> usize {
    let mut r = data;
    let mut n = 0;
    let mut sent = job::Sent {
        includes: crate::options::jobfile::Includes::Refused,
        ..Default::default()
    };
    while let Ok(cmd) = crate::fioproto::read_cmd_max(&mut r, crate::fioproto::SERVER_MAX_PAYLOAD) {
        n += 1;
        match crate::fioproto::pdu::decode(&cmd, false) {
            Ok(crate::fioproto::pdu::Message::JobLine(args)) => {
                sent.args = args.into_iter().skip(1).collect();
                if policy::check_jobline(&sent.args).is_err() {
                    sent.args.clear();
                }
            }
            Ok(crate::fioproto::pdu::Message::Job(text)) => {
                sent.texts = vec![("<fuzz>".into(), text)];
                let _ = crate::cli::parse_args_sent(&sent.args, &sent.texts, &sent.includes);
            }
            _ => {}
        }
    }
    n
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, std::path::PathBuf),
}

fn listen(ep: &Endpoint) -> Result<Listener, String> {
    match ep {
        Endpoint::Unix(p) => {
            clear_stale_socket(p)?;
            UnixListener::bind(p)
                .map(|l| Listener::Unix(l, p.clone()))
                .map_err(|e| format!("bind {}: {e}", p.display()))
        }
        Endpoint::Tcp { .. } => {
            let mut last = String::new();
            for a in ep.resolve(true)? {
                match TcpListener::bind(a) {
                    Ok(l) => return Ok(Listener::Tcp(l)),
                    Err(e) => last = format!("bind {a}: {e}"),
                }
            }
            Err(last)
        }
    }
}

/// Makes room for a Unix socket at `p`: a stale socket left by an earlier server (nothing
/// answers on it) is removed; anything else there (a file, a directory, a link, a live
/// server's socket) stays, and the address is in use, as fio says.
fn clear_stale_socket(p: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return Ok(());
    };
    let in_use = |why: &str| {
        Err(format!(
            "bind {}: Address already in use ({why}; it was left as it is)",
            p.display()
        ))
    };
    if !meta.file_type().is_socket() {
        return in_use("a file that is not a socket is there");
    }
    if UnixStream::connect(p).is_ok() {
        return in_use("a server answers on that socket");
    }
    std::fs::remove_file(p).map_err(|e| format!("remove stale socket {}: {e}", p.display()))
}

/// Checks the pid file as fio does (refuses to start when it names a live process),
/// forks into the background and writes the child's pid.
fn daemonize(pidfile: &str) -> Result<(), String> {
    if let Ok(text) = std::fs::read_to_string(pidfile) {
        if let Ok(pid) = text.trim().parse::<i32>() {
            // SAFETY: kill with signal 0 only checks that the process exists.
            if pid > 0 && unsafe { libc::kill(pid, 0) } == 0 {
                return Err(format!(
                    "pidfile {pidfile} exists and server appears alive (pid {pid})"
                ));
            }
        }
    }
    // The file is made here, before the fork, where an error can still be told: a new
    // file (O_EXCL), never through a link another user planted (O_NOFOLLOW). A stale
    // pid file (a regular file naming no live process) is replaced, as fio does.
    let path = std::path::Path::new(pidfile);
    if let Ok(md) = std::fs::symlink_metadata(path) {
        if !md.is_file() {
            return Err(format!(
                "pidfile {pidfile}: not a regular file (a link or another kind): not replaced"
            ));
        }
        std::fs::remove_file(path).map_err(|e| format!("pidfile {pidfile}: {e}"))?;
    }
    let mut file =
        crate::safefs::create_new(path, 0o644).map_err(|e| format!("pidfile {pidfile}: {e}"))?;
    // SAFETY: called before any thread is started, so the child is a complete copy.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid > 0 {
        std::process::exit(0);
    }
    // SAFETY: setsid in the new child, which leads no group yet.
    unsafe { libc::setsid() };
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        use std::os::fd::AsRawFd;
        for fd in 0..3 {
            // SAFETY: duplicates an open descriptor onto stdin/stdout/stderr.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    use std::io::Write;
    file.write_all(format!("{}\n", std::process::id()).as_bytes())
        .map_err(|e| format!("pidfile {pidfile}: {e}"))
}

/// Runs the server until it is stopped by a signal (a client's EXIT ends only its own
/// connection: docs/security.md).
pub fn serve(arg: &str, pidfile: Option<&str>) -> ExitCode {
    let ep = match addr::parse("server", arg) {
        Ok(ep) => ep,
        Err(e) => {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match listen(&ep) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("iobench: server: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("iobench: server listening on {ep}");
    if let Some(p) = pidfile {
        if let Err(e) = daemonize(p) {
            eprintln!("iobench: {e}");
            return ExitCode::FAILURE;
        }
    }
    let host = conn::hostname();
    let max = policy::get().max_conns;
    let slots = slots::Slots::new(max);
    loop {
        let stream = match &listener {
            Listener::Tcp(l) => l.accept().map(|(s, a)| {
                let _ = s.set_nodelay(true);
                (Stream::Tcp(s), a.to_string())
            }),
            Listener::Unix(l, p) => l
                .accept()
                .map(|(s, _)| (Stream::Unix(s), p.display().to_string())),
        };
        match stream {
            Ok((s, peer)) => {
                let ticket = match s.try_clone() {
                    Ok(second) => slots.admit(&peer, second),
                    Err(_) => None,
                };
                let Some(ticket) = ticket else {
                    conn::turn_away(s, max);
                    continue;
                };
                let host = host.clone();
                std::thread::spawn(move || {
                    conn::handle(s, &peer, &host, &ticket);
                });
            }
            Err(e) => {
                eprintln!("iobench: server: accept: {e}");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}
