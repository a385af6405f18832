//! Outputs never clobber inputs: `report -o` onto its input, `compare --export-*` onto an
//! input result file or a kept run onto one, and `sweep -o DIR` onto a user's own
//! `index.json`/`index.csv` are refused, with the input left as it was.

use crate::common;
use common::{iobench, run, run_ok, scratch};
use std::path::Path;

/// An iobench result of a short null-engine job, written to `path`.
fn result(path: &Path) {
    let mut cmd = iobench();
    cmd.args([
        "--name=r",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=4m",
        "--output-format=json",
    ])
    .arg(format!("--output={}", path.display()));
    run_ok(cmd);
}

/// Runs `cmd`, which must fail naming `want`, and checks `input` still holds `before`.
fn refused(mut cmd: std::process::Command, want: &str, input: &Path, before: &str) {
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(want), "want {want} in {err}");
    assert_eq!(
        std::fs::read_to_string(input).unwrap(),
        before,
        "{} was overwritten",
        input.display()
    );
}

#[test]
fn report_does_not_overwrite_its_input() {
    let dir = scratch("clobber_report");
    let r = dir.join("r.json");
    result(&r);
    let before = std::fs::read_to_string(&r).unwrap();
    let mut cmd = iobench();
    cmd.arg("report").arg(&r).arg("-o").arg(&r);
    refused(cmd, "is the input", &r, &before);
    // The same file by another name (a symlink).
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&r, &link).unwrap();
    let mut cmd = iobench();
    cmd.arg("report")
        .arg(&r)
        .arg(format!("--output={}", link.display()));
    refused(cmd, "is the input", &r, &before);
    // Another output is fine.
    let mut cmd = iobench();
    cmd.arg("report").arg(&r).arg("-o").arg(dir.join("r.html"));
    run_ok(cmd);
}

#[test]
fn compare_does_not_overwrite_its_inputs() {
    let dir = scratch("clobber_compare");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    result(&a);
    result(&b);
    let before = std::fs::read_to_string(&a).unwrap();
    for flag in ["--export-json", "--export-csv", "--export-markdown"] {
        let mut cmd = iobench();
        cmd.args(["compare", flag]).arg(&a).arg(&a).arg(&b);
        refused(cmd, flag, &a, &before);
    }
    // A kept run of the job side (B, the second side: B-run1.json) onto an input file.
    let kept = dir.join("B-run1.json");
    std::fs::copy(&a, &kept).unwrap();
    let mut cmd = iobench();
    cmd.args(["compare", "--repeat", "1", "-o"])
        .arg(&dir)
        .arg("--")
        .arg(&kept)
        .arg("--")
        .args(["--name=r", "--ioengine=null", "--size=4m"]);
    refused(cmd, "B-run1.json", &kept, &before);
}

#[test]
fn sweep_leaves_a_users_own_index_alone() {
    let dir = scratch("clobber_sweep");
    let out = dir.join("mine");
    std::fs::create_dir_all(&out).unwrap();
    let job = ["--name=s", "--ioengine=null", "--size=4m"];
    for name in ["index.json", "index.csv"] {
        let mine = out.join(name);
        std::fs::write(&mine, "my own notes\n").unwrap();
        for fresh in [false, true] {
            let mut cmd = iobench();
            cmd.args(["sweep", "--axis", "bs=4k,8k", "-o"]).arg(&out);
            if fresh {
                cmd.arg("--fresh");
            }
            cmd.arg("--").args(job);
            refused(cmd, name, &mine, "my own notes\n");
        }
        std::fs::remove_file(&mine).unwrap();
    }
    // A sweep's own index, the next time round, is its own to rewrite.
    for _ in 0..2 {
        let mut cmd = iobench();
        cmd.args(["sweep", "--axis", "bs=4k,8k", "-o"])
            .arg(&out)
            .arg("--")
            .args(job);
        run_ok(cmd);
    }
    assert!(out.join("bs=4k.json").exists());
    let o = run({
        let mut c = iobench();
        c.arg("report")
            .arg(&out)
            .arg("-o")
            .arg(out.join("index.json"));
        c
    });
    assert_eq!(o.status.code(), Some(1), "report onto a sweep's index");
}
