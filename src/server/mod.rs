//! `iobench --server`: answers fio 3.33's clients (and iobench's) over fio's protocol. One
//! thread per connection reads commands; each run is a child process ([`job`]) whose
//! informational lines become TEXT messages and whose results come back as fio's TS, GS and
//! DU messages. Also the command-line entry for `--server`, `--daemonize` and `--client`
//! ([`dispatch`]).

pub mod addr;
mod conn;
mod eta;
pub mod job;
mod logs;
pub mod vtrigger;

use addr::Endpoint;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::ExitCode;

/// A connection over TCP or a Unix socket.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn try_clone(&self) -> std::io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    /// Connects to `ep`, trying each of its addresses.
    pub fn connect(ep: &Endpoint) -> Result<Stream, String> {
        match ep {
            Endpoint::Unix(p) => UnixStream::connect(p)
                .map(Stream::Unix)
                .map_err(|e| format!("connect to {}: {e}", p.display())),
            Endpoint::Tcp { .. } => {
                let mut last = String::from("no address");
                for a in ep.resolve(false)? {
                    match TcpStream::connect(a) {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            return Ok(Stream::Tcp(s));
                        }
                        Err(e) => last = format!("connect to {a}: {e}"),
                    }
                }
                Err(last)
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

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
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(v) = flag(a, "server") {
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
        return Ok(Some(Mode::Serve {
            addr: arg.unwrap_or_default(),
            pidfile,
        }));
    }
    // `--daemonize` without `--server`: fio ignores it; the plain command line decides.
    Ok(client.then_some(Mode::Client))
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, std::path::PathBuf),
}

fn listen(ep: &Endpoint) -> Result<Listener, String> {
    match ep {
        Endpoint::Unix(p) => {
            // As fio: a stale socket file from an earlier server is replaced.
            let _ = std::fs::remove_file(p);
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
    std::fs::write(pidfile, format!("{}\n", std::process::id()))
        .map_err(|e| format!("pidfile {pidfile}: {e}"))
}

/// Runs the server until it is killed or a client sends EXIT.
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
                let host = host.clone();
                std::thread::spawn(move || conn::handle(s, &peer, &host));
            }
            Err(e) => {
                eprintln!("iobench: server: accept: {e}");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        if conn::exiting() {
            break;
        }
    }
    if let Listener::Unix(_, p) = &listener {
        let _ = std::fs::remove_file(p);
    }
    ExitCode::SUCCESS
}
