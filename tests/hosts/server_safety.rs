//! `--server` against hostile peers and other local users (docs/security.md): no scratch
//! file another user can swap, one connection cannot stop another's runs, a stale socket
//! is the only file `sock:` replaces, sent jobs read no server file, limits on message
//! size, connection count and idle time, and fio's flags in a sent command line honoured.

use crate::common;

use common::netproc::{free_port, Server};
use common::{fio, iobench, scratch};
use iobench::api::fioproto::{encode, op, pdu, read_cmd};
use std::io::Write;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// An iobench server on a free port with `extra` flags, working in `cwd`.
fn server(cwd: &Path, extra: &[&str]) -> Server {
    let port = free_port();
    let mut c = iobench();
    c.arg(format!("--server=,{port}"))
        .args(extra)
        .current_dir(cwd);
    Server::start(c, port)
}

/// A raw protocol connection, to play a client fio's own would never be.
struct Raw(TcpStream);

impl Raw {
    fn to(port: u16) -> Raw {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        Raw(s)
    }
    fn send(&mut self, opcode: u16, payload: &[u8]) {
        let _ = self.0.write_all(&encode(opcode, 0, payload));
    }
    fn probe(&mut self) {
        let p = pdu::ClientProbe {
            flags: 0,
            server: "127.0.0.1".into(),
        };
        self.send(op::PROBE, &p.encode());
    }
    fn job(&mut self, text: &str) {
        self.send(op::JOB, &pdu::encode_job(text, 0));
    }
    fn jobline(&mut self, args: &[&str]) {
        let a: Vec<String> = std::iter::once("fio")
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        self.send(op::JOBLINE, &pdu::encode_jobline(&a, 0));
    }
    /// Every message until QUIT or the end of the connection: (opcodes, the text of all
    /// payloads, lossy).
    fn until_quit(&mut self) -> (Vec<u16>, String) {
        let (mut ops, mut text) = (Vec::new(), String::new());
        while let Ok(c) = read_cmd(&mut self.0) {
            ops.push(c.opcode);
            text.push_str(&String::from_utf8_lossy(&c.payload));
            if c.opcode == op::QUIT {
                break;
            }
        }
        (ops, text)
    }
    /// The answer to a PROBE, within the read timeout.
    fn probe_answered(&mut self) -> bool {
        self.probe();
        matches!(read_cmd(&mut self.0), Ok(c) if c.opcode == op::PROBE)
    }
}

/// True when this test may play another local user (root, with setpriv).
fn can_be_nobody() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let setpriv = Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !root || !setpriv {
        eprintln!("not root or no setpriv: skipping the other-user test");
    }
    root && setpriv
}

/// `sh -c script` as user `nobody` (uid and gid 65534, no groups).
fn as_nobody(script: &str) -> Command {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "sh",
        "-c",
        script,
    ]);
    c
}

/// A process group led by the child, killed when dropped (also when the test fails).
struct Group(std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: signals the process group this test started.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// A directory every user may write in (sticky, as /tmp), removed when dropped.
struct SharedTmp(PathBuf);

impl SharedTmp {
    fn new(name: &str) -> SharedTmp {
        use std::os::unix::fs::PermissionsExt;
        let d = std::env::temp_dir().join(format!("iobench-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        SharedTmp(d)
    }
}

impl Drop for SharedTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn another_user_cannot_swap_the_servers_job_text() {
    // Defect 1: the server kept each connection's job text in $TMPDIR/iobench-server-
    // <pid>-<n>/job0.fio (an existing directory accepted, the file written through a
    // symlink) and its run read it back: `nobody` pre-made those paths with job0.fio a
    // link to a file it owns, and added exec_prerun to root's text before the run read it.
    if !can_be_nobody() {
        return;
    }
    let tmp = SharedTmp::new("race");
    let work = scratch("safety_race");
    let port = free_port();
    let mut c = iobench();
    c.arg(format!("--server=,{port}"))
        .env("TMPDIR", &tmp.0)
        .current_dir(&work);
    let s = Server::start(c, port);
    let pid = s.child.id();
    let bait = tmp.0.join("bait.fio");
    let pwned = tmp.0.join("pwned");
    // As nobody: the old paths for the next connections, each job file a link to the bait,
    // and a loop that adds a command to whatever text lands there.
    let script = format!(
        "touch {bait}; for n in 0 1 2 3 4 5 6 7; do d={tmp}/iobench-server-{pid}-$n; \
         mkdir -p $d && ln -sf {bait} $d/job0.fio; done; \
         end=$(($(date +%s) + 20)); while [ $(date +%s) -lt $end ]; do \
         if grep -q rw= {bait} 2>/dev/null && ! grep -q exec_prerun {bait}; then \
         printf 'exec_prerun=touch {pwned}\\n' >> {bait}; fi; done",
        bait = bait.display(),
        tmp = tmp.0.display(),
        pwned = pwned.display(),
    );
    let attacker = Group(as_nobody(&script).process_group(0).spawn().unwrap());
    // Let the attacker lay its paths.
    let t0 = Instant::now();
    while !bait.exists() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let data = work.join("data");
    let job = format!(
        "[victim]\nrw=write\nsize=64k\nfilename={}\n",
        data.display()
    );
    for _ in 0..3 {
        let mut r = Raw::to(s.port);
        r.probe();
        r.job(&job);
        r.send(op::RUN, &[]);
        let (_, text) = r.until_quit();
        assert!(!text.contains("exec_prerun"), "{text}");
    }
    drop(attacker);
    assert!(
        !pwned.exists(),
        "the other user's command ran as the server's user"
    );
    let bait_text = std::fs::read_to_string(&bait).unwrap_or_default();
    assert!(
        !bait_text.contains("victim"),
        "the server wrote its job text through the other user's link: {bait_text}"
    );
    // The private directory goes with the connection (once the server sees it closed).
    let leftover = || {
        std::fs::read_dir(&tmp.0)
            .unwrap()
            .flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("iobench-server-")
                    && !n.starts_with(&format!("iobench-server-{pid}-"))
            })
            .map(|e| e.path())
            .collect::<Vec<_>>()
    };
    let t0 = Instant::now();
    let mut left = leftover();
    while !left.is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
        left = leftover();
    }
    assert!(left.is_empty(), "private directories left: {left:?}");
}

/// The run directories (`iobench-server-*`) under `tmp`.
fn run_dirs(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("iobench-server-")
        })
        .map(|e| e.path())
        .collect()
}

/// Waits up to `secs` for `tmp` to hold no run directory; those left.
fn run_dirs_gone(tmp: &Path, secs: u64) -> Vec<PathBuf> {
    let t0 = Instant::now();
    loop {
        let left = run_dirs(tmp);
        if left.is_empty() || t0.elapsed() > Duration::from_secs(secs) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The processes whose parent is `pid` (from /proc).
fn children_of(pid: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let child: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`: the comm may hold spaces, so read after its ')'.
            let ppid: u32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            (ppid == pid).then_some(child)
        })
        .collect()
}

/// An iobench server working in `work` with `tmp` as its `$TMPDIR`.
fn server_in(tmp: &Path, work: &Path) -> Server {
    let port = free_port();
    let mut c = iobench();
    c.arg(format!("--server=,{port}"))
        .env("TMPDIR", tmp)
        .current_dir(work);
    Server::start(c, port)
}

/// Sends `s` a 30 s write of `work/b` and waits until it goes: its directory made in
/// `tmp`, its child started and writing (a child killed before it set up its signal
/// handling dies at once, and cannot clean up).
fn start_long(s: &Server, tmp: &Path, work: &Path) -> Raw {
    let mut r = Raw::to(s.port);
    r.probe();
    r.job(&format!(
        "[long]\nrw=write\nsize=1m\ntime_based=1\nruntime=30\nfilename={}\n",
        work.join("b").display()
    ));
    r.send(op::RUN, &[]);
    let t0 = Instant::now();
    let writing = || std::fs::metadata(work.join("b")).is_ok_and(|m| m.len() > 0);
    while run_dirs(tmp).is_empty() || children_of(s.child.id()).is_empty() || !writing() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    r
}

#[test]
fn run_directories_go_once_their_results_are_read() {
    // Issue 26: a SIGKILLed server left empty 0700 run directories under $TMPDIR: each
    // went only with its connection. Now a run's directory goes as soon as its results
    // are read: a kill -9 of the run leaves none either.
    let tmp = scratch("safety_rundirs_tmp");
    let work = scratch("safety_rundirs");
    let s = server_in(&tmp, &work);
    let port = s.port;
    let short = format!(
        "[short]\nrw=write\nsize=64k\nfilename={}\n",
        work.join("a").display()
    );
    // A run that ends: its directory is gone when the client hears the end, with the
    // connection still open.
    let mut r = Raw::to(port);
    r.probe();
    r.job(&short);
    r.send(op::RUN, &[]);
    let (ops, text) = r.until_quit();
    assert!(ops.contains(&op::TS), "the run reported: {text}");
    assert_eq!(run_dirs(&tmp), Vec::<PathBuf>::new(), "left after a run");
    drop(r);
    // The run child killed with SIGKILL: no results, and still no directory.
    let spid = s.child.id();
    let mut r = start_long(&s, &tmp, &work);
    for child in children_of(spid) {
        // SAFETY: signals a process this test's server started.
        unsafe { libc::kill(child, libc::SIGKILL) };
    }
    let _ = r.until_quit();
    assert_eq!(
        run_dirs_gone(&tmp, 5),
        Vec::<PathBuf>::new(),
        "left after kill -9 of the run"
    );
    drop(r);
    // The server killed with SIGKILL mid-run: its run child ends (PR_SET_PDEATHSIG) and
    // removes the directory on its way out (`server::job::RemoveIfOrphaned`). The kernel
    // sends that signal once per exiting server thread the child passes to; those
    // repeats are one request (`run::signals::repeats_are_one`), not the second
    // signal that ends a run at once, without the cleanup.
    let _r = start_long(&s, &tmp, &work);
    // SAFETY: signals the server this test started.
    unsafe { libc::kill(spid as i32, libc::SIGKILL) };
    assert_eq!(
        run_dirs_gone(&tmp, 10),
        Vec::<PathBuf>::new(),
        "left after kill -9 of the server"
    );
    drop(s);
}

#[test]
fn a_run_told_its_server_hung_up_removes_its_directory_itself() {
    // A run child stopped by its server's death ran to its end before the last server
    // thread had gone, saw the dying server still as its parent, and left its directory
    // (results and eta in it) under $TMPDIR. The hang-up (its parent-death signal) now
    // says the server is gone, whatever its parent is yet. Here the server is frozen
    // (SIGSTOP) so that only the child can have removed the directory.
    let tmp = scratch("safety_hangup_tmp");
    let work = scratch("safety_hangup");
    let mut s = server_in(&tmp, &work);
    let spid = s.child.id();
    let r = start_long(&s, &tmp, &work);
    let children = children_of(spid);
    // SAFETY: signals the server this test started and its run child.
    unsafe {
        libc::kill(spid as i32, libc::SIGSTOP);
        for &child in &children {
            libc::kill(child, libc::SIGHUP);
        }
    }
    let left = run_dirs_gone(&tmp, 10);
    // SAFETY: as above.
    unsafe { libc::kill(spid as i32, libc::SIGCONT) };
    assert_eq!(left, Vec::<PathBuf>::new(), "left by a hung-up run");
    drop(r);
    s.kill();
}

#[test]
fn a_run_child_whose_server_is_already_gone_runs_nothing_and_cleans_up() {
    // The hang-up is ignored from fork until the child handles it: a server that died in
    // that window sends none the child hears, so the child checks its parent itself.
    let tmp = scratch("safety_born_orphan");
    let child = |server_pid: u32| {
        let dir = tmp.join(format!("iobench-server-{server_pid}"));
        std::fs::create_dir_all(&dir).unwrap();
        let out = iobench()
            .arg("__fio-server-job")
            .arg(&dir)
            .args(["--name=x", "--ioengine=null", "--size=1m"])
            .env("IOBENCH_SERVER_PID", server_pid.to_string())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            dir.exists(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Started by this test (its parent, the "server"): it runs, and fails on no jobs; the
    // directory is its server's to remove.
    let (kept, why) = child(std::process::id());
    assert!(
        kept,
        "a child whose server lives leaves the directory to it: {why}"
    );
    // Started for a server that is not its parent (gone, the child reparented).
    let (kept, why) = child(1);
    assert!(!kept, "an orphaned child removes its directory: {why}");
    assert!(why.contains("server is gone"), "{why}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn one_clients_exit_does_not_stop_the_server_or_another_run() {
    // Defect 2: a bare EXIT from any connection ended the server; the first client's run
    // went on, orphaned, without results.
    let work = scratch("safety_exit");
    let s = server(&work, &[]);
    let job = format!(
        "[long]\nrw=write\nsize=4m\ntime_based=1\nruntime=3\nfilename={}\n",
        work.join("data").display()
    );
    let mut a = Raw::to(s.port);
    a.probe();
    a.job(&job);
    a.send(op::RUN, &[]);
    std::thread::sleep(Duration::from_millis(800));
    let mut b = Raw::to(s.port);
    b.send(op::EXIT, &[]);
    // The second connection ends; the server stays.
    let _ = b.until_quit();
    std::thread::sleep(Duration::from_millis(300));
    let mut c = Raw::to(s.port);
    assert!(
        c.probe_answered(),
        "the server still answers after another's EXIT"
    );
    let (ops, text) = a.until_quit();
    assert!(
        ops.contains(&op::TS) && ops.contains(&op::STOP),
        "the first run's results came: {ops:?} {text}"
    );
}

#[test]
fn an_exit_ends_that_connections_run() {
    // Each run's processes end with its connection.
    let work = scratch("safety_exit_own");
    let s = server(&work, &[]);
    let data = work.join("data");
    let job = format!(
        "[long]\nrw=write\nsize=1m\ntime_based=1\nruntime=30\nfilename={}\n",
        data.display()
    );
    let mut a = Raw::to(s.port);
    a.probe();
    a.job(&job);
    a.send(op::RUN, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    a.send(op::EXIT, &[]);
    let _ = a.until_quit();
    std::thread::sleep(Duration::from_millis(1500));
    // The run child (the server's only child) is gone.
    let children = Command::new("pgrep")
        .args(["-P", &s.child.id().to_string()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&children.stdout).trim().is_empty(),
        "the run outlived its connection: {:?}",
        String::from_utf8_lossy(&children.stdout)
    );
}

#[test]
fn a_unix_socket_path_holding_a_file_is_left_alone() {
    // Defect 3: `--server=sock:PATH` deleted a regular file at PATH.
    let dir = scratch("safety_sock");
    let file = dir.join("precious");
    std::fs::write(&file, "keep me\n").unwrap();
    let mut c = iobench();
    c.arg(format!("--server=sock:{}", file.display()))
        .stdin(Stdio::null());
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me\n");
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("Address already in use"), "{err}");
    // A stale socket (nothing answers) is still replaced, as fio does.
    let sock = dir.join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    let mut c = iobench();
    c.arg(format!("--server=sock:{}", sock.display()))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut s = Server {
        child: c.spawn().unwrap(),
        port: 0,
    };
    let t0 = Instant::now();
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no server on the stale socket"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    s.kill();
}

#[test]
fn a_sent_job_reads_no_server_file() {
    // Defect 4: `include /etc/shadow` in a sent job answered with the file's first line.
    let work = scratch("safety_include");
    let root = work.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let secret = work.join("secret");
    std::fs::write(&secret, "TOPSECRETLINE=1\n").unwrap();
    std::fs::write(root.join("common.fio"), "bs=8k\n").unwrap();
    let data = work.join("data");
    let job = |inc: &str| {
        format!(
            "[a]\nrw=write\nsize=64k\nfilename={}\ninclude {inc}\n",
            data.display()
        )
    };
    let s = server(&root, &[]);
    for inc in [secret.display().to_string(), "../secret".into()] {
        let mut r = Raw::to(s.port);
        r.probe();
        r.job(&job(&inc));
        let (_, text) = r.until_quit();
        assert!(!text.contains("TOPSECRET"), "{inc}: {text}");
        assert!(text.contains("--server-root"), "{inc}: {text}");
    }
    // Under --server-root, a file inside it is read; one outside is not.
    let s = server(&work, &[&format!("--server-root={}", root.display())]);
    for (inc, ok) in [
        ("common.fio".to_string(), true),
        (secret.display().to_string(), false),
        ("../secret".to_string(), false),
    ] {
        let mut r = Raw::to(s.port);
        r.probe();
        r.job(&job(&inc));
        let (ops, text) = r.until_quit();
        assert!(!text.contains("TOPSECRET"), "{inc}: {text}");
        assert_eq!(
            ops.first() == Some(&op::PROBE) && ops.get(1) == Some(&op::START),
            ok,
            "{inc}: {ops:?} {text}"
        );
    }
    // --remote-config: refused without a root, outside it, read inside it.
    let mut r = Raw::to(s.port);
    r.probe();
    r.send(
        op::LOAD_FILE,
        &pdu::encode_load_file(&secret.display().to_string(), 0),
    );
    let (_, text) = r.until_quit();
    assert!(
        !text.contains("TOPSECRET") && text.contains("outside the server root"),
        "{text}"
    );
}

#[test]
fn a_message_over_the_servers_limit_is_refused() {
    // Defect 5: every connection could make the server buffer 64 MiB.
    let work = scratch("safety_big");
    let s = server(&work, &[]);
    let mut r = Raw::to(s.port);
    r.probe();
    let big = "#".repeat(9 << 20);
    r.job(&big);
    let (_, text) = r.until_quit();
    assert!(
        text.contains("too large"),
        "{}",
        &text[..text.len().min(400)]
    );
    let mut c = Raw::to(s.port);
    assert!(c.probe_answered());
}

#[test]
fn idle_connections_cannot_starve_a_client() {
    // Defect 5: 80 idle connections under `ulimit -n 40` made a valid PROBE fail.
    let work = scratch("safety_idle");
    let port = free_port();
    let mut c = iobench();
    c.arg(format!("--server=,{port}"))
        .arg("--server-idle-timeout=2")
        .arg("--server-max-conns=8")
        .current_dir(&work);
    // SAFETY: setrlimit in the child before exec, no allocation.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 40,
                rlim_max: 40,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let s = Server::start(c, port);
    let idle: Vec<TcpStream> = (0..80)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", s.port)).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let mut answered = false;
    while t0.elapsed() < Duration::from_secs(20) {
        let Ok(st) = TcpStream::connect(("127.0.0.1", s.port)) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        st.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut r = Raw(st);
        if r.probe_answered() {
            answered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(idle);
    assert!(answered, "a valid PROBE got no answer within 20 s");
}

#[test]
fn parse_only_in_a_sent_command_line_runs_nothing() {
    // Defect 6: `--parse-only` in a client's command line was dropped and the job ran.
    let work = scratch("safety_parse_only");
    let victim = work.join("V");
    let s = server(&work, &[]);
    let mut r = Raw::to(s.port);
    r.probe();
    let fname = format!("--filename={}", victim.display());
    r.jobline(&[
        "--parse-only",
        "--name=x",
        &fname,
        "--rw=write",
        "--size=64k",
    ]);
    r.send(op::RUN, &[]);
    let (ops, text) = r.until_quit();
    assert!(ops.contains(&op::START), "{ops:?} {text}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!victim.exists(), "--parse-only was ignored: {text}");
    // A flag the server does not honour is refused by name, never dropped.
    let mut r = Raw::to(s.port);
    r.probe();
    r.jobline(&["--showcmd", "--name=x", &fname, "--rw=write"]);
    let (_, text) = r.until_quit();
    assert!(text.contains("'--showcmd'"), "{text}");
    // fio's own client, as the defect was found.
    if let Some(mut f) = fio() {
        let o = f
            .args([
                &format!("--client=localhost,{}", s.port),
                "--parse-only",
                "--name=x",
                &fname,
                "--rw=write",
                "--size=64k",
            ])
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(!victim.exists(), "{o:?}");
    }
}

#[test]
fn exec_needs_the_operators_allow_flag() {
    let work = scratch("safety_exec");
    let marker = work.join("ran");
    let job = format!(
        "[a]\nrw=write\nsize=64k\nfilename={}\nexec_prerun=touch {}\n",
        work.join("data").display(),
        marker.display()
    );
    let s = server(&work, &[]);
    let mut r = Raw::to(s.port);
    r.probe();
    r.job(&job);
    r.send(op::RUN, &[]);
    let (_, text) = r.until_quit();
    assert!(text.contains("--allow-exec"), "{text}");
    assert!(!marker.exists());
    let s = server(&work, &["--allow-exec"]);
    let mut r = Raw::to(s.port);
    r.probe();
    r.job(&job);
    r.send(op::RUN, &[]);
    let (ops, text) = r.until_quit();
    assert!(ops.contains(&op::TS), "{text}");
    assert!(marker.exists(), "{text}");
}

/// Silent connections cannot lock others out (issue 36: 16 of them filled the server's
/// slots for its 300 s idle timeout, while fio, forking per connection, answered a
/// probe at once): a probe after 16 (and after 40) silent connections from the same
/// peer is answered within seconds, and a connection with a run going keeps its slot.
#[test]
fn silent_connections_do_not_lock_a_new_client_out() {
    let work = scratch("server_lockout");
    let tmp = scratch("server_lockout_tmp");
    let s = server_in(&tmp, &work);
    let running = start_long(&s, &tmp, &work);
    let mut silent = Vec::new();
    for n in [16, 40] {
        while silent.len() < n {
            silent.push(TcpStream::connect(("127.0.0.1", s.port)).expect("connect"));
        }
        let t0 = Instant::now();
        let mut r = Raw::to(s.port);
        r.0.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert!(
            r.probe_answered(),
            "no answer to a probe after {n} silent connections"
        );
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
    // The run's connection was never taken: its run is still going.
    assert!(!children_of(s.child.id()).is_empty(), "the run was ended");
    drop(running);
    drop(silent);
}
