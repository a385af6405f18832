//! The options fio added from 3.34 to 3.42: each row knows the release that added it (the
//! dialect check refuses it, by name, in an older dialect), the ones iobench cannot run
//! are refused as "not supported yet" with the reason (never "unknown option"), and the
//! ones it runs do what fio does.

use crate::common;

// The newer options are the default dialect's (3.42): run iobench in it.
use common::iobench_default as iobench;
use iobench::api::options::table::{FioRelease, Support, OPTIONS};
use iobench::api::options::Origin;
use iobench::api::options::{check_dialect, lookup};

fn dialect(name: &str, value: Option<&str>, release: FioRelease) -> Result<(), String> {
    check_dialect(name, value, release, &Origin::command_line()).map_err(|e| e.to_string())
}

#[test]
fn an_option_newer_than_the_dialect_is_refused_with_its_release() {
    for (name, value, since) in [
        ("ss_interval", Some("2"), FioRelease::V3_35),
        ("steadystate_check_interval", Some("2"), FioRelease::V3_35),
        ("fdp_pli", Some("1"), FioRelease::V3_34),
        ("plids", Some("1"), FioRelease::V3_38),
        ("fdp_pli_select", Some("random"), FioRelease::V3_36),
        ("log_window_value", Some("max"), FioRelease::V3_37),
        ("comm", Some("x"), FioRelease::V3_42),
        ("sprandom", Some("1"), FioRelease::V3_41),
        ("fadvise_hint", Some("noreuse"), FioRelease::V3_35),
        ("verify", Some("pattern_hdr"), FioRelease::V3_40),
        ("steadystate", Some("lat:1%"), FioRelease::V3_42),
    ] {
        let older = FioRelease::all().filter(|r| *r < since).last().unwrap();
        let e = dialect(name, value, older).expect_err(name);
        assert!(
            e.contains(&format!("'{name}")) && e.contains(&format!("fio {since}")),
            "{name}: {e}"
        );
        assert!(!e.contains("unknown"), "{e}");
        dialect(name, value, since).unwrap_or_else(|e| panic!("{name} in {since}: {e}"));
    }
    // What fio 3.33 has passes in every dialect, values included.
    for r in FioRelease::all() {
        dialect("fadvise_hint", Some("random"), r).unwrap();
        dialect("log_max_value", Some("1"), r).unwrap();
        dialect("bs", Some("4k"), r).unwrap();
    }
    // A refused value names the option and the value.
    let e = dialect("fadvise_hint", Some("noreuse"), FioRelease::V3_33).unwrap_err();
    assert!(e.contains("'fadvise_hint=noreuse'"), "{e}");
}

#[test]
fn every_newer_row_passes_the_newest_dialect_and_is_refused_in_3_33() {
    let newer: Vec<_> = OPTIONS
        .iter()
        .filter(|o| o.since > FioRelease::OLDEST)
        .collect();
    // 25 general rows and 2 engine rows (cmdprio_hint, libaio_vectored).
    assert!(newer.len() >= 27, "only {} rows of 3.34-3.42", newer.len());
    for o in newer {
        assert!(
            dialect(o.name, None, FioRelease::OLDEST).is_err(),
            "{}",
            o.name
        );
        dialect(o.name, None, FioRelease::DEFAULT).unwrap();
        // A row iobench does not run says why.
        if o.support == Support::NotYet {
            assert!(
                o.why_not.is_some(),
                "{} is refused without a reason",
                o.name
            );
        }
    }
}

#[test]
fn options_iobench_cannot_run_are_refused_by_name_with_the_reason() {
    for o in OPTIONS
        .iter()
        .filter(|o| o.since > FioRelease::OLDEST && o.support == Support::NotYet)
    {
        let value = match o.default {
            Some(d) if !d.is_empty() => d,
            _ => "1",
        };
        let out = iobench()
            .args(["--parse-only", "--name=x", "--ioengine=null", "--size=1m"])
            .arg(format!("--{}={value}", o.name))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{} was accepted", o.name);
        assert!(
            err.contains(&format!("option '{}' is not supported yet: ", o.name)),
            "{}: {err}",
            o.name
        );
    }
}

/// The reference fio 3.39 (Debian 13's), in its debootstrapped root, when present.
fn fio_339() -> Option<std::process::Command> {
    let root = "/var/cache/iobench-ref/trixie";
    if std::path::Path::new(root).join("usr/bin/fio").exists() {
        let mut c = std::process::Command::new("chroot");
        c.args([root, "fio"]);
        return Some(c);
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("the fio 3.39 root {root} is missing but IOBENCH_REQUIRE_FIO=1");
    }
    eprintln!("no fio 3.39 root: skipping");
    None
}

#[test]
fn the_rows_of_3_34_to_3_39_are_options_fio_3_39_knows() {
    let Some(_) = fio_339() else { return };
    for o in OPTIONS
        .iter()
        .filter(|o| o.since > FioRelease::OLDEST && o.since <= FioRelease::V3_39)
    {
        for name in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
            // fio's --cmdhelp knows general options; an engine's are in its --enghelp.
            let ask = match o.engines.first() {
                Some(e) => format!("--enghelp={e}"),
                None => format!("--cmdhelp={name}"),
            };
            let out = fio_339().unwrap().arg(ask).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            // `NAME: help` (--cmdhelp right-aligns the name, --enghelp pads it after).
            assert!(
                text.lines()
                    .any(|l| l.split(':').next().map(str::trim) == Some(o.name)),
                "fio 3.39 does not know {name}: {text}"
            );
            assert_eq!(lookup(name).map(|d| d.name), Some(o.name));
        }
    }
}

#[test]
fn fadvise_hint_noreuse_advises_noreuse_as_fio_3_39_does() {
    let dir = common::scratch("fadvise-noreuse");
    let _gone = common::Gone(dir.clone());
    let file = dir.join("f");
    let trace = dir.join("trace");
    let st = std::process::Command::new("strace")
        .args(["-f", "-e", "trace=fadvise64", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iobench"))
        .args([
            "--name=x",
            "--size=64k",
            "--rw=read",
            "--fadvise_hint=noreuse",
        ])
        .arg(format!("--filename={}", file.display()))
        .output()
        .expect("strace is installed");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let t = std::fs::read_to_string(&trace).unwrap();
    assert!(t.contains("POSIX_FADV_NOREUSE"), "{t}");
    // fio 3.39 takes the same value (and fio 3.33 refuses it, as the 3.33 dialect will).
    if let Some(mut fio) = fio_339() {
        let out = fio
            .args([
                "--parse-only",
                "--name=x",
                "--size=64k",
                "--fadvise_hint=noreuse",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The mmap engine has no such advice: fio fails the mapping, iobench refuses the job.
    let out = iobench()
        .args(["--parse-only", "--name=x", "--size=64k", "--ioengine=mmap"])
        .arg("--fadvise_hint=noreuse")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("fadvise_hint"));
}

#[test]
fn comm_names_the_job_process() {
    let dir = common::scratch("comm");
    let _gone = common::Gone(dir.clone());
    let seen = dir.join("seen");
    let script = dir.join("show.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat /proc/$PPID/comm > {}\n", seen.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = iobench()
        .current_dir(&dir)
        .args(["--name=x", "--ioengine=exec", "--runtime=1", "--time_based"])
        .arg(format!("--program={}", script.display()))
        .arg("--comm=iob-comm-check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap().trim(),
        "iob-comm-check"
    );
}

#[test]
fn log_window_value_max_is_log_max_value() {
    let parse = |arg: &str| {
        let inv = iobench::api::cli::parse_args(&["--name=x".to_string(), arg.to_string()])
            .expect("arguments parse");
        iobench::api::job::resolve(&inv.jobs[0]).expect("job resolves")
    };
    let max = |arg: &str| parse(arg).report.logs.max_value;
    assert!(max("--log_window_value=max"));
    assert!(max("--log_window_value=1"));
    assert!(max("--log_max_value=1"));
    assert!(!max("--log_window_value=avg"));
    assert!(!max("--log_max_value=0"));
}

/// `log_window_value=both` (fio 3.37) puts each window's maximum after its mean, in every
/// log (a window's bw and iops are one sample each, so the two are equal), and a 0 there in
/// a log that is not averaged: the line shapes fio 3.42's own t/jobs/t0033.fio checks, and
/// the numbers fio 3.42 printed for the same jobs (`/tmp/fio-3.42/fio --name=j --rw=read
/// --size=8k --time_based --runtime=1 --ioengine=libaio --write_iops_log=a
/// --write_bw_log=a --write_lat_log=a --log_avg_msec=100 --log_window_value=both`:
/// `122, 12950, 12950, 0, 0, 0` in a_iops, `100, 670, 169672, 0, 0, 0` in a_clat).
#[test]
fn log_window_value_both_logs_the_mean_and_the_maximum() {
    let dir = common::scratch("log_window_both");
    let _gone = common::Gone(dir.clone());
    let run = |extra: &[&str]| {
        let out = iobench()
            .current_dir(&dir)
            .args([
                "--name=j",
                "--rw=read",
                "--filename=f",
                "--size=8k",
                "--ioengine=libaio",
            ])
            .args(["--time_based", "--runtime=1", "--log_window_value=both"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let lines = |name: &str| -> Vec<Vec<u64>> {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        text.lines()
            .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
            .collect()
    };
    run(&[
        "--write_iops_log=a",
        "--write_bw_log=a",
        "--write_lat_log=a",
        "--log_avg_msec=100",
    ]);
    let clat = lines("a_clat.1.log");
    assert!(clat.len() >= 5, "{clat:?}");
    for l in &clat {
        assert_eq!(l.len(), 6, "time, mean, max, ddir, bs, prio: {l:?}");
        assert!(l[2] >= l[1] && l[4] == 0, "{l:?}");
    }
    // Some window saw more than one latency: its maximum is above its mean.
    assert!(clat.iter().any(|l| l[2] > l[1]), "{clat:?}");
    for name in ["a_iops.1.log", "a_bw.1.log"] {
        for l in lines(name) {
            assert_eq!(l.len(), 6, "{name}: {l:?}");
            assert_eq!(l[1], l[2], "{name}: one sample per window");
        }
    }
    // Not averaged: the maximum column is there, and 0.
    run(&["--write_lat_log=c", "--runtime=100ms"]);
    for l in lines("c_clat.1.log").iter().take(50) {
        assert_eq!((l.len(), l[2]), (6, 0), "{l:?}");
    }
    // With offsets, the column order of t0033's log_iops.4.log: time, mean, max, ddir,
    // bs, offset, prio.
    run(&["--write_iops_log=d", "--log_avg_msec=100", "--log_offset=1"]);
    for l in lines("d_iops.1.log") {
        assert_eq!(l.len(), 7, "{l:?}");
    }
}

/// fio 3.34 dropped the 512-byte limit of `buffer_pattern`/`verify_pattern` (its
/// `t/jobs/t0027.fio` fills buffers from a 4 KiB pattern file): the default dialect takes a
/// long pattern file and writes it, 3.33's refuses it as 3.33 did.
#[test]
fn a_pattern_file_past_512_bytes_is_taken_from_fio_3_34() {
    let dir = common::scratch("long_pattern");
    let _gone = common::Gone(dir.clone());
    let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.join("pat"), &pattern).unwrap();
    let job = [
        "--name=w",
        "--filename=data",
        "--size=16k",
        "--bs=16k",
        "--rw=write",
        "--buffer_pattern='pat'",
    ];
    let out = iobench().current_dir(&dir).args(job).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read(dir.join("data")).unwrap();
    assert_eq!(data.len(), 16 << 10);
    for chunk in data.chunks(4096) {
        assert_eq!(
            chunk,
            &pattern[..],
            "the block is the pattern file repeated"
        );
    }
    // Read back and verified against the same file, as t0027 does.
    let out = iobench()
        .current_dir(&dir)
        .args([
            "--name=r",
            "--filename=data",
            "--size=16k",
            "--bs=16k",
            "--rw=read",
        ])
        .args(["--verify=pattern", "--verify_pattern='pat'"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::iobench()
        .current_dir(&dir)
        .args(job)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("longer than 512 bytes"),
        "{err}"
    );
}

#[test]
fn engines_fio_removed_are_refused_with_the_release_that_removed_them() {
    for (engine, removed, last) in [
        ("pmemblk", FioRelease::V3_34, "3.33"),
        ("librpma_apm_client", FioRelease::V3_38, "3.37"),
        ("librpma_gpspm_server", FioRelease::V3_38, "3.37"),
    ] {
        for r in FioRelease::all() {
            // Refused in every dialect: iobench does not run them either.
            let e = dialect("ioengine", Some(engine), r).expect_err(engine);
            if r >= removed {
                assert!(
                    e.contains(&format!("'ioengine={engine}'"))
                        && e.contains(&format!("fio {removed} removed this engine"))
                        && e.contains(&format!("not in fio {r}"))
                        && e.contains(&format!("--fio-compat={last}")),
                    "{engine} in {r}: {e}"
                );
            } else {
                assert!(
                    !e.contains("removed") && e.contains("not supported yet"),
                    "{engine} in {r}: {e}"
                );
            }
        }
    }
    // From a job file, with its line, in the default dialect; the reason under 3.33.
    let dir = common::scratch("removed-engines");
    let _g = common::Gone(dir.clone());
    let job = dir.join("j.fio");
    std::fs::write(&job, "[x]\nioengine=pmemblk\nsize=4k\n").unwrap();
    let out = common::run({
        let mut c = iobench();
        c.arg("--parse-only").arg(&job);
        c
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("j.fio:2: option 'ioengine=pmemblk': fio 3.34 removed this engine"),
        "{err}"
    );
    let out = common::run({
        let mut c = iobench();
        c.arg("--fio-compat=3.33").arg("--parse-only").arg(&job);
        c
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("persistent memory"),
        "{err}"
    );
}

#[test]
fn the_dialect_check_judges_the_name_a_job_gives_not_the_rows() {
    // `fdp_pli_select` (fio 3.36) is the older name of `plid_select` (3.38): a 3.37 job
    // file may use it, and not the new name. `--showcmd` lets the not-supported rows
    // through, so only the dialect check speaks.
    let dir = common::scratch("dialect-alias-name");
    let _g = common::Gone(dir.clone());
    let job = |opt: &str| {
        let f = dir.join(format!("{opt}.fio"));
        std::fs::write(&f, format!("[j]\nioengine=null\nsize=1m\n{opt}=random\n")).unwrap();
        let mut c = iobench();
        c.arg("--fio-compat=3.37").arg("--showcmd").arg(&f);
        common::run(c)
    };
    let old = job("fdp_pli_select");
    assert!(
        old.status.success(),
        "the old name in 3.37: {}",
        String::from_utf8_lossy(&old.stderr)
    );
    let new = job("plid_select");
    let err = String::from_utf8_lossy(&new.stderr);
    assert!(
        !new.status.success() && err.contains("option 'plid_select' was added in fio 3.38"),
        "{err}"
    );
}
