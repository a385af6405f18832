//! No predictable path (issue 36): another user (`nobody`, through `setpriv`) plants
//! symbolic links in a sticky, world-writable directory as /tmp is, where root's
//! iobench would write: compare's temporary directory, pts's `-o` directory, the
//! `--daemonize` pid file, report's `-o` and `--svg` charts. Each attack aims at a
//! root-only file; the test fails if that file changes or iobench writes through a link.
//! Root only (`setpriv` needs it); the kernel's `protected_symlinks` is switched off for
//! no test: each case stands on iobench's own checks.

use crate::common;

use common::{iobench, run, run_ok, scratch};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const NOBODY: u32 = 65534;

/// A scratch tree: `sticky/` (mode 1777, root's, as /tmp), `root/` (0700) holding
/// `victim`, a root-only file, and `root/dir`, a root-only directory.
struct Scene {
    base: PathBuf,
    sticky: PathBuf,
    victim: PathBuf,
    victim_dir: PathBuf,
}

impl Drop for Scene {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn scene(name: &str) -> Option<Scene> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("{name} needs root (setpriv to another user)");
        }
        eprintln!("skipping {name}: needs root");
        return None;
    }
    let base = scratch(name);
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sticky = base.join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let root = base.join("root");
    std::fs::create_dir(&root).unwrap();
    let victim = root.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let victim_dir = root.join("dir");
    std::fs::create_dir(&victim_dir).unwrap();
    // The attacker may name the victims (a link needs no access to its target).
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o711)).unwrap();
    Some(Scene {
        base,
        sticky,
        victim,
        victim_dir,
    })
}

impl Scene {
    /// Runs perl as `nobody` (the attacker): `$S` is the sticky directory, `$V` the
    /// victim file, `$D` the victim directory.
    fn attacker(&self, perl: &str) {
        let out = Command::new("setpriv")
            .args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
                "perl",
                "-e",
            ])
            .arg(format!("my ($S, $V, $D) = @ARGV; {perl}; 1 or die"))
            .arg(&self.sticky)
            .arg(&self.victim)
            .arg(&self.victim_dir)
            .output()
            .expect("setpriv");
        assert!(
            out.status.success(),
            "the attacker's perl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The victims are as they were: the file's text, nothing in the directory.
    fn untouched(&self) {
        assert_eq!(
            std::fs::read_to_string(&self.victim).unwrap(),
            "precious\n",
            "root's file was written through a planted link"
        );
        let n = std::fs::read_dir(&self.victim_dir).unwrap().count();
        assert_eq!(n, 0, "files were written into root's directory");
    }
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn compares_temporary_directory_cannot_be_planted() {
    let Some(s) = scene("planted_compare") else {
        return;
    };
    // Every name compare's pid could give it, for the next thousands of processes.
    let last: u64 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    s.attacker(&format!(
        "for my $p ({}..{}) {{ symlink($D, \"$S/iobench-compare-$p\") or die }}",
        last,
        last + 4000
    ));
    let job = ["--name=j", "--ioengine=null", "--size=1m"];
    let mut c = iobench();
    c.env("TMPDIR", &s.sticky)
        .args(["compare", "--repeat", "1", "--warmup", "0", "--"])
        .args(job)
        .arg("--")
        .args(job)
        .arg("--bs=8k");
    run_ok(c);
    s.untouched();
    // Nothing of compare's is left behind either.
    let left: Vec<_> = std::fs::read_dir(&s.sticky)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_type().unwrap().is_symlink())
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn pts_refuses_an_output_directory_another_user_made() {
    let Some(s) = scene("planted_pts") else {
        return;
    };
    s.attacker(
        "mkdir(\"$S/pts\") or die; chmod(0755, \"$S/pts\"); \
         for my $n (qw(state.json.tmp summary.json report.txt)) \
         { symlink($V, \"$S/pts/$n\") or die }",
    );
    let target = s.base.join("root/target");
    let mut c = iobench();
    c.args(["pts", "wsat", "--capacity=2m", "--round-time=20ms", "-o"])
        .arg(s.sticky.join("pts"))
        .arg(&target);
    let o = run(c);
    s.untouched();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("owned by uid 65534"), "{}", stderr(&o));
    assert!(!target.exists(), "refused before the target was made");
    // -o in the sticky directory itself: others may plant names there.
    let mut c = iobench();
    c.args(["pts", "wsat", "--capacity=2m", "--round-time=20ms", "-o"])
        .arg(&s.sticky)
        .arg(&target);
    let o = run(c);
    assert!(stderr(&o).contains("writable by others"), "{}", stderr(&o));
}

#[test]
fn daemonize_does_not_write_its_pid_through_a_link() {
    let Some(s) = scene("planted_pidfile") else {
        return;
    };
    s.attacker("symlink($V, \"$S/srv.pid\") or die");
    let sock = s.base.join("root/srv.sock");
    let o = iobench()
        .arg(format!("--server=sock:{}", sock.display()))
        .arg(format!(
            "--daemonize={}",
            s.sticky.join("srv.pid").display()
        ))
        .output()
        .unwrap();
    // Without the check the daemon starts and writes its pid into the victim: end it.
    std::thread::sleep(std::time::Duration::from_millis(300));
    if let Ok(pid) = std::fs::read_to_string(&s.victim)
        .unwrap_or_default()
        .trim()
        .parse::<i32>()
    {
        // SAFETY: ends the daemon this test started (it leads its own session).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    s.untouched();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

/// A result file for `iobench report` (a null-engine run).
fn result_file(dir: &Path) -> PathBuf {
    let p = dir.join("in.json");
    let mut c = iobench();
    c.args([
        "--name=j",
        "--ioengine=null",
        "--size=4m",
        "--output-format=json",
    ])
    .arg(format!("--output={}", p.display()));
    run_ok(c);
    p
}

#[test]
fn report_charts_and_page_do_not_follow_planted_links() {
    let Some(s) = scene("planted_report") else {
        return;
    };
    let input = result_file(&s.base.join("root"));
    // The names the charts of this input get.
    let names_dir = s.base.join("root/names");
    let mut c = iobench();
    c.arg("report")
        .arg(&input)
        .arg("-o")
        .arg(s.base.join("root/page.html"))
        .arg("--svg")
        .arg(&names_dir);
    run_ok(c);
    let names: Vec<String> = std::fs::read_dir(&names_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.is_empty());
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    // Links named like the charts, in a directory of the attacker's and in the sticky
    // directory itself, and one named like the page.
    s.attacker(&format!(
        "mkdir(\"$S/charts\") or die; chmod(0755, \"$S/charts\"); \
         for my $n ({list}) {{ symlink($V, \"$S/charts/$n\") or die; \
         symlink($V, \"$S/$n\") or die }} symlink($V, \"$S/page.html\") or die"
    ));
    for (flag, dir, needle) in [
        ("--svg", s.sticky.join("charts"), "owned by uid 65534"),
        ("--svg", s.sticky.clone(), "writable by others"),
    ] {
        let mut c = iobench();
        c.arg("report")
            .arg(&input)
            .arg("-o")
            .arg(s.base.join("root/page2.html"))
            .arg(flag)
            .arg(&dir);
        let o = run(c);
        s.untouched();
        assert!(!o.status.success(), "{flag} {}", dir.display());
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    }
    let mut c = iobench();
    c.arg("report")
        .arg(&input)
        .arg("-o")
        .arg(s.sticky.join("page.html"));
    let o = run(c);
    s.untouched();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("owned by uid 65534"), "{}", stderr(&o));
}

/// `slo -o`: the job's own target (by its name, a link to it or a hard link) is refused
/// before the search runs, and a FIFO, a device or a directory is refused at once (a
/// FIFO used to hang the write at the end).
#[test]
fn slo_output_is_not_the_target_nor_a_fifo_device_or_directory() {
    let dir = scratch("planted_slo_output");
    let target = dir.join("target");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    let link = dir.join("link");
    let hard = dir.join("hard");
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_file(&hard);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::fs::hard_link(&target, &hard).unwrap();
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let before = std::fs::read(&target).unwrap();
    let cases: [(&Path, &str); 6] = [
        (&target, "works on"),
        (&link, "works on"),
        (&hard, "works on"),
        (&fifo, "a FIFO"),
        (Path::new("/dev/null"), "a device"),
        (&dir, "a directory"),
    ];
    for (out, why) in cases {
        let mut c = iobench();
        c.args([
            "slo",
            "--p99",
            "100ms",
            "--max",
            "200",
            "--min-time",
            "100ms",
            "-o",
        ])
        .arg(out)
        .args([
            "--",
            "--name=x",
            "--ioengine=psync",
            "--rw=randread",
            "--size=1m",
        ])
        .arg(format!("--filename={}", target.display()));
        let o = run_within(c, 60);
        assert!(!o.status.success(), "{}: accepted", out.display());
        assert!(
            stderr(&o).contains(why),
            "{}: {}",
            out.display(),
            stderr(&o)
        );
        assert!(stderr(&o).contains("--output"), "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read(&target).unwrap(),
        before,
        "the target changed"
    );
    // The job file the jobs come from, and a file the job has not laid out yet (named
    // by `directory=`), are refused too: the first was replaced by the document, the
    // second written over at the end of the search.
    let job = dir.join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[x]\nioengine=psync\nrw=randread\nsize=1m\nfilename={}\n",
            target.display()
        ),
    )
    .unwrap();
    let laid = dir.join("later");
    std::fs::create_dir_all(&laid).unwrap();
    let later = laid.join("y.0.0");
    let _ = std::fs::remove_file(&later);
    let job_text = std::fs::read(&job).unwrap();
    for (out, job_args, why) in [
        (
            job.clone(),
            vec![job.display().to_string()],
            "that is the input",
        ),
        (
            later.clone(),
            vec![
                "--name=y".to_string(),
                "--ioengine=psync".into(),
                "--rw=randread".into(),
                "--size=1m".into(),
                format!("--directory={}", laid.display()),
            ],
            "works on",
        ),
    ] {
        let mut c = iobench();
        c.args([
            "slo",
            "--p99",
            "100ms",
            "--max",
            "200",
            "--min-time",
            "100ms",
            "-o",
        ])
        .arg(&out)
        .arg("--")
        .args(&job_args);
        let o = run_within(c, 60);
        assert!(!o.status.success(), "{}: accepted", out.display());
        assert!(
            stderr(&o).contains(why) && stderr(&o).contains("--output"),
            "{}: {}",
            out.display(),
            stderr(&o)
        );
    }
    assert_eq!(
        std::fs::read(&job).unwrap(),
        job_text,
        "the job file changed"
    );
    assert!(!later.exists(), "the search ran");
}

/// Runs `cmd`, killed (and the test failed) past `secs`: a hang is a failure.
fn run_within(mut cmd: Command, secs: u64) -> std::process::Output {
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(o) => o.expect("output"),
        Err(_) => {
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{cmd:?} still running after {secs} s (a hang)");
        }
    }
}
