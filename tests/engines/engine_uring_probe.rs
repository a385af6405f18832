//! io_uring's start-up checks: a kernel without io_uring (simulated with a seccomp filter
//! that fails `io_uring_setup` as ENOSYS or EPERM), and a polling thread pinned to a CPU
//! that does not exist. The job must fail before any I/O, like fio's, with an error that
//! names the engine and what is missing.
use crate::common;

use std::os::unix::process::CommandExt;
use std::process::Command;

/// `io_uring_setup`'s number (the same on x86_64 and aarch64).
const SYS_IO_URING_SETUP: u32 = 425;

/// Makes `cmd` run with `io_uring_setup` failing with `errno`, as on a kernel without it.
fn deny_io_uring(cmd: &mut Command, errno: u32) {
    let filter = [
        // A = seccomp_data.nr
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if A == io_uring_setup: fall through to the ERRNO return, else skip it
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: SYS_IO_URING_SETUP,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | errno,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    // SAFETY: runs in the forked child before exec; it only makes two prctl calls on a
    // filter that lives on this closure's stack for the duration of the call.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Runs a small io_uring read job; returns (success, stdout + stderr).
fn uring_job(mut cmd: Command, dir: &std::path::Path, extra: &[&str]) -> (bool, String) {
    cmd.current_dir(dir).args([
        "--name=u",
        "--filename=data",
        "--size=256k",
        "--ioengine=io_uring",
        "--iodepth=4",
    ]);
    cmd.args(extra);
    let out = cmd.output().expect("spawn");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn kernel_without_io_uring_fails_clearly() {
    let dir = common::scratch("uring_probe_enosys");
    let mut cmd = common::iobench();
    deny_io_uring(&mut cmd, libc::ENOSYS as u32);
    let (ok, text) = uring_job(cmd, &dir, &[]);
    assert!(!ok, "must fail: {text}");
    assert!(
        text.contains("io_uring: this kernel has no io_uring support"),
        "{text}"
    );
    assert!(text.contains("job 'u'"), "names the job: {text}");
    // fio fails the same job too, with the same errno.
    if let Some(mut fio) = common::fio() {
        deny_io_uring(&mut fio, libc::ENOSYS as u32);
        let (fok, ftext) = uring_job(fio, &dir, &[]);
        assert!(!fok || ftext.contains("err=38"), "fio: {ftext}");
    }
}

#[test]
fn io_uring_not_permitted_fails_clearly() {
    let dir = common::scratch("uring_probe_eperm");
    let mut cmd = common::iobench();
    deny_io_uring(&mut cmd, libc::EPERM as u32);
    let (ok, text) = uring_job(cmd, &dir, &["--sqthread_poll=1"]);
    assert!(!ok, "must fail: {text}");
    assert!(text.contains("io_uring is not permitted"), "{text}");
    assert!(text.contains("sqthread_poll"), "{text}");
}

#[test]
fn other_engines_run_where_io_uring_is_missing() {
    // The filter denies only io_uring: psync under it works, so the failures above are
    // io_uring's own.
    let dir = common::scratch("uring_probe_control");
    let mut cmd = common::iobench();
    deny_io_uring(&mut cmd, libc::ENOSYS as u32);
    let (ok, text) = uring_job(cmd, &dir, &["--ioengine=psync"]);
    assert!(ok, "{text}");
}

#[test]
fn sqpoll_cpu_out_of_range_names_the_option() {
    let dir = common::scratch("uring_probe_cpu");
    let (ok, text) = uring_job(
        common::iobench(),
        &dir,
        &["--sqthread_poll=1", "--sqthread_poll_cpu=4095"],
    );
    assert!(!ok, "must fail: {text}");
    assert!(
        text.contains("io_uring: sqthread_poll_cpu=4095 is not an online CPU"),
        "{text}"
    );
}
