//! Every entry point refuses what a plain run refuses, with the same message and before
//! any I/O: too many job clones (numjobs=5000, over fio's limit of 4096), a terse version
//! fio does not know, and a job that fails the preflight (steady-state settings that
//! differ inside one reporting group). The entry points: a plain run, `sweep`, `compare`
//! running jobs, and a job sent by `iobench --client` to a local `iobench --server` on a
//! Unix socket. (`quick` takes no job options; an MPI rank's refusals are in
//! cluster_mpi.rs, which needs `--features mpi`.)
//!
//! No I/O started: every job has an `exec_prerun` that leaves a marker when a job process
//! starts, and files of its own that a started job would lay out; neither may appear.

use crate::common;

use common::netproc::Server;
use common::{iobench, scratch};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// The refusals, each as (extra flags, job file body, the words every entry point prints).
fn cases(d: &Path) -> Vec<(&'static str, Vec<String>, String, &'static str)> {
    let d = d.display();
    let ok = format!("[ok]\nfilename={d}/ok.dat\nsize=4k\nexec_prerun=touch {d}/ran-ok\n");
    vec![
        (
            "numjobs=5000",
            vec![],
            format!(
                "[many]\nthread\nfilename={d}/many.dat\nsize=4k\nnumjobs=5000\n\
                 exec_prerun=touch {d}/ran-many\n"
            ),
            "maximum number of jobs reached: 5000 jobs (numjobs included) exceed the limit of 4096",
        ),
        (
            "terse version 9",
            vec!["--terse-version=9".to_string()],
            ok,
            "bad terse version 9: expected 2, 3, 4 or 5 (--terse-version)",
        ),
        (
            "preflight",
            vec![],
            format!(
                "[a]\nfilename={d}/a.dat\nsize=4k\nss=iops:10%\nss_dur=5s\n\
                 exec_prerun=touch {d}/ran-a\n\
                 [b]\nfilename={d}/b.dat\nsize=4k\nss=bw:5%\nss_dur=5s\n\
                 exec_prerun=touch {d}/ran-b\n"
            ),
            "job 'b' rejected: steadystate options must be the same for every job of a group",
        ),
    ]
}

fn all_output(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// Nothing ran: no job process left its marker, no data file was laid out.
fn assert_no_io(d: &Path, what: &str) {
    let left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ran-") || n.ends_with(".dat"))
        .collect();
    assert!(left.is_empty(), "{what}: I/O started: {left:?}");
}

/// Writes the job file of a case and returns its path.
fn job_file(d: &Path, body: &str) -> PathBuf {
    let p = d.join("job.fio");
    std::fs::write(&p, body).unwrap();
    p
}

fn refused(o: &Output, words: &str, what: &str) {
    let out = all_output(o);
    assert!(!o.status.success(), "{what}: succeeded: {out}");
    assert!(
        out.contains(words),
        "{what}: not refused with '{words}': {out}"
    );
    assert!(!out.contains("panicked"), "{what}: {out}");
}

#[test]
fn plain_sweep_and_compare_refuse_alike() {
    let d = scratch("pipeline_refusals_local");
    for (name, flags, body, words) in cases(&d) {
        let job = job_file(&d, &body);
        let o = iobench()
            .args(&flags)
            .arg(&job)
            .current_dir(&d)
            .output()
            .unwrap();
        refused(&o, words, &format!("plain run, {name}"));
        assert_no_io(&d, &format!("plain run, {name}"));

        let sweep_dir = d.join("sweep");
        let o = iobench()
            .args(["sweep", "-o"])
            .arg(&sweep_dir)
            .args(["--axis", "bs=4k,8k", "--"])
            .args(&flags)
            .arg(&job)
            .current_dir(&d)
            .output()
            .unwrap();
        refused(&o, words, &format!("sweep, {name}"));
        assert_no_io(&d, &format!("sweep, {name}"));
        assert!(
            !sweep_dir.exists(),
            "sweep, {name}: made its result directory"
        );

        let ok = d.join("other.fio");
        std::fs::write(&ok, "[other]\nioengine=null\nsize=64k\n").unwrap();
        let cmp_dir = d.join("compare");
        let o = iobench()
            .args(["compare", "--repeat", "1", "-o"])
            .arg(&cmp_dir)
            .arg("--")
            .arg(&ok)
            .arg("--")
            .args(&flags)
            .arg(&job)
            .current_dir(&d)
            .output()
            .unwrap();
        refused(&o, words, &format!("compare, {name}"));
        assert_no_io(&d, &format!("compare, {name}"));
        assert!(!cmp_dir.exists(), "compare, {name}: ran the other side");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// An iobench server on a Unix socket in `d`, killed when dropped.
fn unix_server(d: &Path, sock: &Path) -> Server {
    let mut c = iobench();
    c.arg(format!("--server=sock:{}", sock.display()))
        .current_dir(d)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let s = Server {
        child: c.spawn().unwrap(),
        port: 0,
    };
    let t0 = Instant::now();
    while std::os::unix::net::UnixStream::connect(sock).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    s
}

#[test]
fn the_server_refuses_what_a_plain_run_refuses() {
    let d = scratch("pipeline_refusals_server");
    let sock = d.join("s.sock");
    let _server = unix_server(&d, &sock);
    for (name, flags, body, words) in cases(&d) {
        let job = job_file(&d, &body);
        let o = iobench()
            .arg(format!("--client=sock:{}", sock.display()))
            .args(&flags)
            .arg(&job)
            .current_dir(&d)
            .output()
            .unwrap();
        refused(&o, words, &format!("server, {name}"));
        assert_no_io(&d, &format!("server, {name}"));
    }
    // The server is still there for a job it can run.
    let job = job_file(&d, "[fine]\nioengine=null\nsize=64k\n");
    let o = iobench()
        .arg(format!("--client=sock:{}", sock.display()))
        .arg(&job)
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all_output(&o));
    let _ = std::fs::remove_dir_all(&d);
}
