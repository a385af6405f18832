//! The drop-in defects of issue 14, each compared with fio 3.33 on this machine:
//! fallocate=truncate, --debug's lines, bssplit's blank percentages, flow control,
//! compressed logs in both directions, experimental verify over loops, verify_state_load
//! on reading jobs, integer range checks and the version line wrappers look for.
use crate::common;
use crate::gen_util;

use common::{iobench, json_report, run, run_ok, scratch};
use std::path::Path;
use std::process::Command;

fn fio() -> Option<Command> {
    common::fio()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `fallocate=truncate` (listed by `fio --cmdhelp=fallocate`) sizes the file with one
/// ftruncate, as in fio, for a write job and a verify job alike.
#[test]
fn fallocate_truncate_runs_and_truncates_like_fio() {
    let Some(_) = fio() else { return };
    let dir = scratch("fallocate-truncate");
    let strace = Command::new("strace").arg("-V").output().is_ok();
    assert!(
        strace || std::env::var("IOBENCH_REQUIRE_FIO").as_deref() != Ok("1"),
        "strace is needed (apt-get install strace)"
    );
    let mut seen = Vec::new();
    for (tool, exe) in [("fio", "fio"), ("iobench", env!("CARGO_BIN_EXE_iobench"))] {
        let file = dir.join(format!("{tool}.dat"));
        let trace = dir.join(format!("{tool}.trace"));
        let mut c = if strace {
            let mut c = common::tool("strace");
            c.args(["-f", "-e", "trace=ftruncate", "-o"])
                .arg(&trace)
                .arg(exe);
            c
        } else {
            common::tool(exe)
        };
        // In the scratch directory: the verify job leaves its state file where it works.
        c.current_dir(&dir)
            .args([
                "--name=t",
                "--rw=write",
                "--bs=4k",
                "--size=64k",
                "--fallocate=truncate",
                "--verify=md5",
            ])
            .arg(format!("--filename={}", file.display()));
        run_ok(c);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 65536, "{tool}");
        if strace {
            let t = std::fs::read_to_string(&trace).unwrap();
            seen.push(
                t.lines()
                    .filter(|l| l.contains("ftruncate(") && l.contains("65536"))
                    .count(),
            );
        }
    }
    if strace {
        assert!(seen[0] >= 1, "fio did not ftruncate");
        assert_eq!(
            seen[0], seen[1],
            "ftruncate calls: fio {} iobench {}",
            seen[0], seen[1]
        );
    }
}

fn debug_lines(exe: Command, cat: &str, extra: &[&str], dir: &Path) -> Vec<String> {
    let mut c = exe;
    c.current_dir(dir)
        .arg(format!("--debug={cat}"))
        .args([
            "--name=x",
            "--filename=f",
            "--size=64k",
            "--bs=4k",
            "--randseed=11",
        ])
        .args(extra);
    let out = run_ok(c);
    text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(&format!("{cat:<8} ")))
        .map(|l| {
            // Drop the thread id column: the category and the message are compared.
            let mut w = l.splitn(3, char::is_whitespace).filter(|s| !s.is_empty());
            let c = w.next().unwrap_or("");
            let rest = l[c.len()..].trim_start();
            let msg = rest.split_once(' ').map_or("", |(_, m)| m.trim_start());
            format!("{c} {msg}")
        })
        .collect()
}

/// `--debug=random` prints fio's `off rand N` lines, the same numbers in the same order;
/// `--debug=parse` fio's handle_option lines; `--debug=?` fio's list; an unknown
/// category is reported but never fatal, as in fio.
#[test]
fn debug_lines_match_fio() {
    let Some(_) = fio() else { return };
    let dir = scratch("debug-lines");
    let rnd = ["--rw=randwrite", "--ioengine=null"];
    let a = debug_lines(Command::new("fio"), "random", &rnd, &dir);
    let b = debug_lines(iobench(), "random", &rnd, &dir);
    assert!(a.len() >= 16, "fio printed {a:?}");
    assert_eq!(a, b);
    let parse = ["--rw=randread", "--ioengine=null", "--parse-only"];
    let keep = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .filter(|l| l.contains("handle_option=") && !l.contains("__handle"))
            .collect()
    };
    let a = keep(debug_lines(Command::new("fio"), "parse", &parse, &dir));
    let b = keep(debug_lines(iobench(), "parse", &parse, &dir));
    assert!(a.len() >= 6, "fio printed {a:?}");
    assert_eq!(a, b);
    let io = debug_lines(iobench(), "io", &["--rw=read", "--ioengine=psync"], &dir);
    assert_eq!(
        io.iter().filter(|l| l.contains("complete: io_u")).count(),
        16
    );
    let list = |mut c: Command| {
        text(
            &run_ok({
                c.arg("--debug=?");
                c
            })
            .stdout,
        )
    };
    assert_eq!(list(Command::new("fio")), list(iobench()));
    let mut c = iobench();
    c.args([
        "--debug=nosuch,rate,steadystate",
        "--parse-only",
        "--name=x",
    ]);
    let out = run(c);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("debug mask nosuch not found"));
}

/// `bssplit=512/25:1k/:2k/:4k/`: the blank percentages share the rest evenly, as in fio,
/// I/O for I/O.
#[test]
fn bssplit_blank_percentages_as_fio() {
    gen_util::assert_same_as_fio(
        "bssplit-blank",
        &[
            "--rw=randwrite",
            "--bssplit=512/25:1k/:2k/:4k/",
            "--size=256k",
            "--randseed=5",
            "--norandommap",
        ],
    );
}

/// fio's flow.fio, shortened: flow=1 and flow=8 in one flow give about 1:8 in I/O counts
/// in both tools.
#[test]
fn flow_weights_hold_like_fio() {
    let Some(_) = fio() else { return };
    let dir = scratch("flow");
    let job = "[global]\nnorandommap\ntime_based\nruntime=1\nioengine=libaio\niodepth=16\n\
               size=8m\nbs=8k\nfilename=fl.dat\nflow_sleep=1000\n\
               [job2]\nrw=write\nflow=1\n[job1]\nrw=randread\nflow=8\n";
    std::fs::write(dir.join("flow.fio"), job).unwrap();
    for mut c in [Command::new("fio"), iobench()] {
        c.current_dir(&dir)
            .args(["--output-format=json", "flow.fio"]);
        let j = json_report(&run_ok(c));
        let ios = |i: usize| {
            let job = &j["jobs"][i];
            job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap()
        };
        let ratio = ios(1) as f64 / ios(0).max(1) as f64;
        assert!(
            (6.5..9.5).contains(&ratio),
            "ratio {ratio} ({} / {})",
            ios(1),
            ios(0)
        );
    }
}

/// `log_store_compressed`: the `.log.fz` files each tool writes inflate, with the other
/// tool's `--inflate-log`, to the same text as with its own.
#[test]
fn compressed_logs_interchange_with_fio() {
    let Some(_) = fio() else { return };
    let dir = scratch("logzip");
    for (tool, mut c) in [("fio", Command::new("fio")), ("iobench", iobench())] {
        c.current_dir(&dir).args([
            &format!("--name={tool}"),
            "--filename=f",
            "--size=256k",
            "--rw=randread",
            "--ioengine=null",
            &format!("--write_lat_log={tool}"),
            "--log_offset=1",
            "--log_compression=64k",
            "--log_store_compressed=1",
        ]);
        run_ok(c);
    }
    for tool in ["fio", "iobench"] {
        let path = dir.join(format!("{tool}_clat.1.log.fz"));
        let inflate = |mut c: Command| {
            c.arg(format!("--inflate-log={}", path.display()));
            text(&run_ok(c).stdout)
        };
        let by_fio = inflate(Command::new("fio"));
        let by_ib = inflate(iobench());
        assert_eq!(
            by_fio.lines().count(),
            64,
            "{tool}'s log as fio reads it: {by_fio}"
        );
        assert_eq!(by_fio, by_ib, "{tool}'s log");
    }
}

/// Issue 14's verify defects: experimental_verify over loops=8 then a time-based randrw
/// on the same file passes in both tools (iobench used to fail with "bad header
/// numberio"), and verify_state_load on rw=read and rw=randread runs, reading as many
/// blocks as fio.
#[test]
fn verify_defects_fixed_like_fio() {
    let Some(_) = fio() else { return };
    let dir = scratch("verify-defects");
    let job = "[global]\nfilename=d8.dat\nsize=256k\nbs=4k\nverify=md5\ndo_verify=1\n\
               experimental_verify=1\n[w]\nrw=randwrite\nloops=8\n\
               [rw]\nstonewall\nrw=randrw\ntime_based\nruntime=500ms\n";
    std::fs::write(dir.join("d8.fio"), job).unwrap();
    for mut c in [Command::new("fio"), iobench()] {
        c.current_dir(&dir).args(["--output-format=json", "d8.fio"]);
        let j = json_report(&run_ok(c));
        assert_eq!(j["jobs"][0]["error"], 0);
        assert_eq!(j["jobs"][0]["read"]["total_ios"], 64, "one loop read back");
        assert_eq!(j["jobs"][1]["error"], 0);
    }
    for rw in ["read", "randread"] {
        let mut reads = Vec::new();
        for tool in ["fio", env!("CARGO_BIN_EXE_iobench")] {
            let d = dir.join(format!("state-{rw}-{}", reads.len()));
            std::fs::create_dir_all(&d).unwrap();
            let base = [
                "--name=vs",
                "--filename=f",
                "--size=256k",
                "--bs=4k",
                "--verify=md5",
            ];
            let mut w = common::tool(tool);
            w.current_dir(&d).args(base).args([
                "--rw=randwrite",
                "--do_verify=0",
                "--verify_state_save=1",
                "--iodepth=4",
                "--ioengine=libaio",
            ]);
            run_ok(w);
            let mut r = common::tool(tool);
            r.current_dir(&d).args(base).args([
                &format!("--rw={rw}"),
                "--verify_state_load=1",
                "--output-format=json",
            ]);
            let j = json_report(&run_ok(r));
            reads.push(j["jobs"][0]["read"]["total_ios"].as_u64().unwrap());
        }
        assert_eq!(
            reads[0], reads[1],
            "rw={rw}: fio read {} blocks, iobench {}",
            reads[0], reads[1]
        );
    }
}

/// Integer options are range-checked, never truncated: fio 3.33 reads numjobs=4294967297
/// as 1 (it keeps the value in 32 bits); iobench refuses it and names the option.
#[test]
fn integers_past_32_bits_are_refused() {
    for (opt, bad) in [
        ("numjobs", "4294967297"),
        ("iodepth", "4294967296"),
        ("nrfiles", "8g"),
    ] {
        let mut c = iobench();
        c.args(["--parse-only", "--name=x", &format!("--{opt}={bad}")]);
        let out = run(c);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{opt}={bad} accepted");
        assert!(err.contains(opt) && err.contains("4294967295"), "{err}");
    }
    let mut c = iobench();
    c.args(["--parse-only", "--name=x", "--numjobs=4294967295"]);
    assert!(run(c).status.success());
    if let Some(mut f) = fio() {
        f.args(["--parse-only", "--name=x", "--numjobs=4294967297"]);
        assert!(run(f).status.success(), "fio 3.33 truncates silently");
    }
}

/// The version line names fio 3.33, which bench-fio and KDiskMark look for, wherever fio
/// prints its version (`--version`, the normal output, JSON, terse).
#[test]
fn version_names_fio_3_33() {
    let mut c = iobench();
    c.arg("--version");
    let v = text(&run_ok(c).stdout);
    assert_eq!(v.trim(), "iobench-0.1.0 (fio-3.33 compatible)");
    let dir = scratch("version");
    let mut c = iobench();
    c.current_dir(&dir).args([
        "--name=x",
        "--filename=f",
        "--size=16k",
        "--ioengine=null",
        "--output-format=json,terse,normal",
    ]);
    let out = text(&run_ok(c).stdout);
    assert!(out.contains("\"fio version\" : \"iobench-0.1.0 (fio-3.33 compatible)\""));
    assert!(out.contains(";iobench-0.1.0 (fio-3.33 compatible);x;"));
}

/// fio's run-time flags: `--trigger-timeout` with `--trigger` stops a 20 s job after about
/// a second and runs the command; `--aux-path` puts the verify state file there;
/// `--idle-prof=system` adds fio's `CPU idleness` block; `--bandwidth-log` leaves fio's
/// three (empty) aggregate logs. Each as fio does it here.
#[test]
fn run_flags_behave_like_fio() {
    let Some(_) = fio() else { return };
    for (tool, exe) in [("fio", "fio"), ("iobench", env!("CARGO_BIN_EXE_iobench"))] {
        let dir = scratch(&format!("run-flags-{tool}"));
        let aux = dir.join("aux");
        std::fs::create_dir_all(&aux).unwrap();
        let fired = dir.join("fired");
        let t = std::time::Instant::now();
        let mut c = common::tool(exe);
        c.current_dir(&dir)
            .args([
                "--trigger-timeout=1",
                &format!("--trigger=touch {}", fired.display()),
            ])
            .args(["--name=t", "--filename=f", "--size=1m", "--ioengine=null"])
            .args(["--time_based", "--runtime=20", "--output-format=terse"]);
        run_ok(c);
        let took = t.elapsed().as_secs_f64();
        assert!(
            took < 8.0,
            "{tool}: the trigger did not stop the run ({took:.1} s)"
        );
        assert!(fired.exists(), "{tool}: the trigger command did not run");
        let mut c = common::tool(exe);
        c.current_dir(&dir)
            .arg(format!("--aux-path={}", aux.display()))
            .args([
                "--name=vs",
                "--filename=f",
                "--size=64k",
                "--rw=write",
                "--verify=md5",
            ])
            .args([
                "--verify_state_save=1",
                "--idle-prof=system",
                "--bandwidth-log",
            ]);
        let out = text(&run_ok(c).stdout);
        assert!(
            aux.join("local-vs-0-verify.state").exists(),
            "{tool}: no state in aux-path"
        );
        assert!(out.contains("CPU idleness:\n  system: "), "{tool}: {out}");
        assert!(out.contains("  unit work: mean="), "{tool}: {out}");
        for d in ["read", "write", "trim"] {
            assert!(
                dir.join(format!("agg-{d}_bw.log")).exists(),
                "{tool}: agg-{d}_bw.log"
            );
        }
    }
}
