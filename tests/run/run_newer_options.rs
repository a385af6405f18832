//! Options fio added from 3.34 to 3.42 that change how a job runs: `thinkcycles`,
//! `ramp_size`, `end_syncfs`, `steadystate_check_interval`, `log_issue_time`,
//! `job_start_clock_id`. Each is compared with the real fio where one has it: fio 3.41
//! (the reference root) when present, else what fio 3.42 (built by hand from fio's source,
//! `/tmp/fio-3.42/fio`) printed for the same command line, recorded here with it.

use crate::common;
use common::iobench_default as iobench;
use common::reffio;

fn job_json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::json_report(out)["jobs"][0].clone()
}

#[test]
fn thinkcycles_spins_between_ios_as_long_as_fio_does() {
    // 10 I/Os, 300000 spin-wait turns after each: fio 3.42 and 3.41 spend about 30 ms
    // here (on this machine's CPUs one PAUSE is about 100 ns).
    let args = [
        "--name=x",
        "--ioengine=null",
        "--bs=4k",
        "--size=40k",
        "--rw=read",
        "--thinkcycles=300000",
        "--output-format=json",
    ];
    let j = job_json(&iobench().args(args).output().unwrap());
    let ours = j["job_runtime"].as_u64().unwrap();
    assert_eq!(j["read"]["total_ios"], 10);
    // 3 million turns take at least 20 ms on any CPU that has a spin-wait hint (a
    // loaded host only makes it longer); without the spin the job takes about 1 ms.
    assert!(ours >= 20, "thinkcycles spun only {ours} ms");
    if let Some(fio) = reffio::reference_fio("3.41") {
        let fj = job_json(&fio.command().args(args).output().unwrap());
        let theirs = fj["job_runtime"].as_u64().unwrap();
        // The same spin on the same CPU: within a factor the host's load cannot reach.
        assert!(
            theirs <= ours * 6 && ours <= theirs.max(1) * 6,
            "{}: {theirs} ms, iobench {ours} ms",
            fio.label()
        );
    }
    // A spin count is a whole number.
    let out = iobench()
        .args(["--parse-only", "--name=x", "--thinkcycles=lots"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("thinkcycles"));
}

#[test]
fn ramp_size_ends_the_ramp_at_the_first_second_past_the_bytes() {
    // fio 3.42 judges the ramp once a second: at 100 IOPS the 8 KiB are moved within the
    // first second, so the ramp ends at 1 s and the 1 s runtime is measured after it.
    // /tmp/fio-3.42/fio --name=x --ioengine=null --bs=4k --rw=read --size=1m \
    //   --rate_iops=100 --ramp_size=8k --time_based --runtime=1 --output-format=json
    // gave read io_bytes 409600, total_ios 100, job_runtime 1004, elapsed 3.
    let out = iobench()
        .args(["--name=x", "--ioengine=null", "--bs=4k", "--rw=read"])
        .args(["--size=1m", "--rate_iops=100", "--ramp_size=8k"])
        .args(["--time_based", "--runtime=1", "--output-format=json"])
        .output()
        .unwrap();
    let j = job_json(&out);
    let ios = j["read"]["total_ios"].as_u64().unwrap();
    // The ramp's 100 I/Os are not counted; the measured second's are.
    assert!((80..=110).contains(&ios), "{ios} I/Os measured");
    assert!(j["elapsed"].as_u64().unwrap() >= 2, "no ramp: {j}");
    assert!(j["job_runtime"].as_u64().unwrap() >= 990);
    // A job done before the first check never leaves its ramp, and reports all of it:
    // the same command with --size=1m --ramp_size=256k (no rate, no time_based) gave
    // io_bytes 1048576 and total_ios 256 in fio 3.42.
    let out = iobench()
        .args(["--name=x", "--ioengine=null", "--bs=4k", "--rw=read"])
        .args(["--size=1m", "--ramp_size=256k", "--output-format=json"])
        .output()
        .unwrap();
    let j = job_json(&out);
    assert_eq!(j["read"]["io_bytes"], 1048576);
    assert_eq!(j["read"]["total_ios"], 256);
    // Both ramps at once are refused, as fio 3.42 rejects the job ("cannot specify both
    // ramp_time and ramp_size").
    let out = iobench()
        .args([
            "--parse-only",
            "--name=x",
            "--ramp_time=1",
            "--ramp_size=4k",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("ramp_size") && err.contains("ramp_time"),
        "{err}"
    );
}

#[test]
fn end_syncfs_syncs_the_file_system_once_as_fio_3_42_does() {
    let dir = common::scratch("end-syncfs");
    let _gone = common::Gone(dir.clone());
    let trace = dir.join("trace");
    let iolog = dir.join("iolog");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let st = common::tool("strace")
        .env_remove("IOBENCH_FIO_COMPAT")
        .args(["-f", "-e", "trace=fsync,syncfs,openat", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iobench"))
        .args([
            "--name=x",
            "--size=64k",
            "--bs=16k",
            "--rw=write",
            "--end_syncfs=1",
        ])
        .arg(format!("--directory={}", data.display()))
        .arg(format!("--write_iolog={}", iolog.display()))
        .output()
        .expect("strace is installed");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let t = std::fs::read_to_string(&trace).unwrap();
    // fio 3.42 (strace -f of the same job): the directory opened O_RDONLY|O_NONBLOCK|
    // O_CLOEXEC|O_DIRECTORY, one syncfs on it, and no fsync.
    let opened = format!(
        "openat(AT_FDCWD, \"{}\", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = ",
        data.display()
    );
    let fd: String = t
        .lines()
        .find_map(|l| l.split_once(&opened).map(|(_, r)| r.trim().to_string()))
        .unwrap_or_else(|| panic!("the directory was not opened: {t}"));
    assert_eq!(t.matches(&format!("syncfs({fd})")).count(), 1, "{t}");
    assert!(!t.contains("fsync("), "{t}");
    // fio 3.42's iolog names the directory, with the action "wait" (its action names
    // have none for a syncfs), at the last write's offset:
    //   ... /DIR/x.0.0 write 49152 16384
    //   ... /DIR wait 49152 0
    //   ... /DIR/x.0.0 close
    let log = std::fs::read_to_string(&iolog).unwrap();
    let acts: Vec<String> = log
        .lines()
        .skip(1)
        .map(|l| l.split_once(' ').unwrap().1.to_string())
        .collect();
    let d = data.display();
    assert_eq!(
        acts[acts.len() - 3..],
        [
            format!("{d}/x.0.0 write 49152 16384"),
            format!("{d} wait 49152 0"),
            format!("{d}/x.0.0 close"),
        ],
        "{log}"
    );
    // An engine without syncfs is refused, as fio refuses it ("I/O engine does not
    // support syncfs").
    let out = iobench()
        .args([
            "--parse-only",
            "--name=x",
            "--ioengine=null",
            "--end_syncfs=1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("end_syncfs") && err.contains("null"), "{err}");
}

/// `job_start` of each job of a JSON report (None where the key is absent).
fn job_starts(out: &std::process::Output) -> Vec<Option<u64>> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::json_report(out)["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.get("job_start").map(|v| v.as_u64().unwrap()))
        .collect()
}

fn clock_now_ms(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec owned here.
    assert_eq!(unsafe { libc::clock_gettime(id, &mut ts) }, 0);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

#[test]
fn job_start_reads_job_start_clock_id_and_appears_from_3_36_on() {
    let job = [
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=2",
        "--group_reporting",
        "--output-format=json",
    ];
    // Default clock: CLOCK_REALTIME, one job_start for the reported job.
    let before = clock_now_ms(libc::CLOCK_REALTIME);
    let s = job_starts(&iobench().args(job).output().unwrap());
    let after = clock_now_ms(libc::CLOCK_REALTIME);
    assert_eq!(s.len(), 1);
    let t = s[0].expect("job_start in the 3.42 dialect");
    assert!((before..=after).contains(&t), "{before} {t} {after}");
    // job_start_clock_id=1: CLOCK_MONOTONIC's time, as fio 3.41 gives it.
    let mono = |c: std::process::Command| {
        let mut c = c;
        let before = clock_now_ms(libc::CLOCK_MONOTONIC);
        let s = job_starts(&c.args(job).arg("--job_start_clock_id=1").output().unwrap());
        let after = clock_now_ms(libc::CLOCK_MONOTONIC);
        let t = s[0].expect("job_start");
        assert!((before..=after).contains(&t), "{before} {t} {after}");
    };
    mono(iobench());
    if let Some(fio) = reffio::reference_fio("3.41") {
        mono(fio.command());
    }
    // A clock the kernel has not: fio keeps the logs' epoch clock's reading (realtime).
    let before = clock_now_ms(libc::CLOCK_REALTIME);
    let s = job_starts(
        &iobench()
            .args(job)
            .arg("--job_start_clock_id=99")
            .output()
            .unwrap(),
    );
    assert!(s[0].unwrap() >= before);
    // The key is 3.36's: absent in the 3.33 and 3.35 dialects, present from 3.36, as in
    // the reference fios (3.33 has none, 3.39 and 3.41 one per job).
    for (dialect, has) in [
        ("3.33", false),
        ("3.35", false),
        ("3.36", true),
        ("3.41", true),
    ] {
        let s = job_starts(
            &iobench()
                .env("IOBENCH_FIO_COMPAT", dialect)
                .args(job)
                .output()
                .unwrap(),
        );
        assert_eq!(s.iter().all(Option::is_some), has, "{dialect}: {s:?}");
        assert_eq!(s.len(), 1);
    }
    for fio in reffio::reference_fios() {
        let has = fio.version.as_str() >= "3.36";
        let theirs = job_starts(&fio.command().args(job).output().unwrap());
        let ours = job_starts(&fio.iobench().args(job).output().unwrap());
        assert_eq!(theirs.len(), ours.len(), "{}", fio.label());
        assert_eq!(theirs.iter().all(Option::is_some), has, "{}", fio.label());
        assert_eq!(ours.iter().all(Option::is_some), has, "{}", fio.label());
    }
}

#[test]
fn steadystate_check_interval_samples_every_interval_as_fio_3_41_does() {
    let job = [
        "--name=x",
        "--ioengine=null",
        "--size=1m",
        "--ss=iops:50%",
        "--ss_dur=4",
        "--ss_interval=2",
        "--time_based",
        "--runtime=8",
        "--output-format=json",
    ];
    let window = |out: &std::process::Output| {
        let j = job_json(out);
        let ss = &j["steadystate"];
        (
            ss["duration"].as_u64().unwrap(),
            ss["data"]["iops"].as_array().unwrap().len(),
            ss["attained"].as_u64().unwrap(),
        )
    };
    // 4 s in samples 2 s apart: a window of two, steady at once on the null engine.
    assert_eq!(window(&iobench().args(job).output().unwrap()), (4, 2, 1));
    if let Some(fio) = reffio::reference_fio("3.41") {
        assert_eq!(
            window(&fio.command().args(job).output().unwrap()),
            (4, 2, 1)
        );
    }
    // Since 3.35 the duration must be more than one interval, and a multiple of it; an
    // interval under a second is refused; every job of a run samples at one interval.
    for bad in [
        &["--ss_dur=1"][..],
        &["--ss_dur=3", "--ss_interval=2"],
        &["--ss_dur=4", "--ss_interval=500ms"],
    ] {
        let out = iobench()
            .args(["--parse-only", "--name=x", "--ss=iops:5%"])
            .args(bad)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("steadystate_check_interval"), "{err}");
    }
    // Two jobs of one run at different intervals: refused before any I/O.
    let out = iobench()
        .args(["--ioengine=null", "--size=4k"])
        .args(["--name=a", "--ss=iops:5%", "--ss_dur=4"])
        .args(["--name=b", "--ss=iops:5%", "--ss_dur=4", "--ss_interval=2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("steadystate_check_interval"), "{err}");
    // fio 3.42's latency criterion: read in 3.42, refused by name with its release in
    // 3.41 (tests/run/run_steady_lat.rs runs it).
    let out = iobench()
        .args(["--parse-only", "--name=x", "--ss=lat:1%", "--ss_dur=2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = iobench()
        .args(["--fio-compat=3.41", "--parse-only", "--name=x"])
        .args(["--ss=lat_slope:1%", "--ss_dur=2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'ss=lat_slope:1%' was added in fio 3.42") && err.contains("fio 3.41"),
        "{err}"
    );
    // fio 3.33 had no interval: its dialect keeps a one-second window of one second.
    let out = iobench()
        .env("IOBENCH_FIO_COMPAT", "3.33")
        .args(["--parse-only", "--name=x", "--ss=iops:5%", "--ss_dur=1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The lines of every `PREFIX_*.1.log` in `dir`, by kind (`clat`, `lat`, ...).
fn logs_by_kind(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<Vec<u64>>> {
    let mut out = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let Some(kind) = name
            .strip_prefix("lg_")
            .and_then(|n| n.strip_suffix(".1.log"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        let rows = text
            .lines()
            .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
            .collect();
        out.insert(kind.to_string(), rows);
    }
    out
}

#[test]
fn log_issue_time_adds_the_issue_column_as_fio_3_41_does() {
    let run = |mut c: std::process::Command, at: &std::path::Path| {
        let out = c
            .args(["--name=x", "--ioengine=null", "--size=16k", "--bs=4k"])
            .args(["--rw=randrw", "--log_offset=1", "--log_issue_time=1"])
            .arg(format!("--write_lat_log={}/lg", at.display()))
            .arg(format!("--write_bw_log={}/lg", at.display()))
            .arg(format!("--write_iops_log={}/lg", at.display()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // For each log: its lines' column count, and whether the last column is nonzero.
    let shape = |logs: &std::collections::BTreeMap<String, Vec<Vec<u64>>>| {
        logs.iter()
            .map(|(k, rows)| {
                let cols: Vec<usize> = rows.iter().map(Vec::len).collect();
                let issued: Vec<bool> = rows.iter().map(|r| r[r.len() - 1] > 0).collect();
                (k.clone(), cols, issued)
            })
            .collect::<Vec<_>>()
    };
    let dir = common::scratch("log-issue-time");
    let _gone = common::Gone(dir.clone());
    run(iobench(), &dir);
    let ours = logs_by_kind(&dir);
    // fio's columns: time, value, ddir, bs, offset, prio, issue time (ns since the job's
    // start): the clat log carries it, lat, bw and iops logs a 0 (slat is empty here).
    let clat = &ours["clat"];
    assert_eq!(clat.len(), 4);
    let mut last = 0;
    for r in clat {
        assert_eq!(r.len(), 7, "{r:?}");
        assert!(r[6] >= last && r[6] > 0, "{clat:?}");
        // Issued before it completed: within the job's first second.
        assert!(r[6] < 1_000_000_000);
        last = r[6];
    }
    for k in ["lat", "bw", "iops"] {
        assert!(
            ours[k].iter().all(|r| r.len() == 7 && r[6] == 0),
            "{k}: {:?}",
            ours[k]
        );
    }
    if let Some(fio) = reffio::reference_fio("3.41") {
        let (host, inside) = fio.scratch("log-issue-time");
        let _gone = common::Gone(host.clone());
        run(fio.command(), &inside);
        assert_eq!(shape(&logs_by_kind(&host)), shape(&ours), "{}", fio.label());
    }
    // Without log_offset (or without a latency log) fio refuses the option.
    let out = iobench()
        .args([
            "--parse-only",
            "--name=x",
            "--write_lat_log=lg",
            "--log_issue_time=1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("log_issue_time"));
}

/// `strace -f -e trace=CALLS` of `tool` (a command whose program strace runs) with `args`;
/// the trace's text.
fn traced(tool: std::process::Command, calls: &str, args: &[String]) -> String {
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "newer-options-trace-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    let _gone = common::Gone(out.clone());
    let mut st = std::process::Command::new("strace");
    st.args(["-f", "-e", &format!("trace={calls}"), "-o"])
        .arg(&out)
        .arg(tool.get_program())
        .args(tool.get_args())
        .args(args);
    for (k, v) in tool.get_envs() {
        match v {
            Some(v) => st.env(k, v),
            None => st.env_remove(k),
        };
    }
    if let Some(d) = tool.get_current_dir() {
        st.current_dir(d);
    }
    let res = st.output().expect("strace is installed");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    assert!(
        !text.is_empty(),
        "no trace: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    text
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The RWF_* flags (the last argument) of the first traced call named `call`.
fn rwf_of(trace: &str, call: &str) -> Option<String> {
    let l = trace.lines().find(|l| l.contains(&format!("{call}(")))?;
    let args = l.split_once(&format!("{call}("))?.1;
    let last = args.rsplit_once(", ")?.1;
    Some(
        last.split(')')
            .next()?
            .split_whitespace()
            .next()?
            .to_string(),
    )
}

#[test]
fn atomic_and_uncached_send_the_flags_of_the_dialect() {
    let dir = common::scratch("rwf-flags");
    let _gone = common::Gone(dir.clone());
    let file = dir.join("f");
    std::fs::write(&file, vec![0u8; 16384]).unwrap();
    let job = |extra: &[&str], rw: &str| {
        let mut v: Vec<String> = ["--name=x", "--ioengine=pvsync2", "--size=16k", "--bs=4k"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.push(format!("--filename={}", file.display()));
        v.push(format!("--rw={rw}"));
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let with = |dialect: Option<&str>| {
        let mut c = iobench();
        if let Some(d) = dialect {
            c.env("IOBENCH_FIO_COMPAT", d);
        }
        c
    };
    // fio 3.40 and later: uncached=1 is RWF_DONTCACHE (0x80), on reads and writes.
    for rw in ["read", "write"] {
        let t = traced(with(None), "preadv2,pwritev2", &job(&["--uncached=1"], rw));
        let call = if rw == "read" { "preadv2" } else { "pwritev2" };
        assert_eq!(rwf_of(&t, call).as_deref(), Some("0x80"), "{t}");
    }
    // fio 3.33 sent 0x40, which this kernel reads as RWF_ATOMIC: the 3.33 dialect keeps it.
    let t = traced(
        with(Some("3.33")),
        "pwritev2",
        &job(&["--uncached=1"], "write"),
    );
    assert_eq!(rwf_of(&t, "pwritev2").as_deref(), Some("0x40"), "{t}");
    // fio 3.38 and later: atomic=1 puts RWF_ATOMIC (0x40) on writes, not on reads, and
    // opens without O_DIRECT.
    let t = traced(
        with(None),
        "openat,pwritev2",
        &job(&["--atomic=1"], "write"),
    );
    assert_eq!(rwf_of(&t, "pwritev2").as_deref(), Some("0x40"), "{t}");
    let name = file.display().to_string();
    let open = t
        .lines()
        .find(|l| l.contains(&name) && l.contains("O_RDWR"))
        .unwrap();
    assert!(!open.contains("O_DIRECT"), "{open}");
    let t = traced(with(None), "preadv2", &job(&["--atomic=1"], "read"));
    assert_eq!(rwf_of(&t, "preadv2").as_deref(), Some("0"), "{t}");
    // fio 3.33: O_DIRECT and its O_ATOMIC bit at open, plain writes.
    let t = traced(
        with(Some("3.33")),
        "openat,pwritev2",
        &job(&["--atomic=1"], "write"),
    );
    let open = t
        .lines()
        .find(|l| l.contains(&name) && l.contains("O_RDWR"))
        .unwrap();
    assert!(open.contains("O_DIRECT"), "{open}");
    // An engine without atomic writes is refused (fio: "engine does not support atomic
    // writes").
    let out = iobench()
        .args(["--parse-only", "--name=x", "--ioengine=psync", "--atomic=1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("atomic"));
    // The same calls as fio 3.41 (3.33 is compared by the older suite).
    if let Some(fio) = reffio::reference_fio("3.41") {
        let (host, inside) = fio.scratch("rwf-flags");
        let _gone = common::Gone(host.clone());
        std::fs::write(host.join("f"), vec![0u8; 16384]).unwrap();
        let fjob = |extra: &str, rw: &str| -> Vec<String> {
            vec![
                "--name=x".into(),
                "--ioengine=pvsync2".into(),
                "--size=16k".into(),
                "--bs=4k".into(),
                format!("--filename={}", inside.join("f").display()),
                format!("--rw={rw}"),
                extra.into(),
            ]
        };
        for (extra, rw, call) in [
            ("--uncached=1", "read", "preadv2"),
            ("--uncached=1", "write", "pwritev2"),
            ("--atomic=1", "write", "pwritev2"),
        ] {
            let theirs = rwf_of(&traced(fio.command(), call, &fjob(extra, rw)), call);
            let ours = rwf_of(&traced(fio.iobench(), call, &job(&[extra], rw)), call);
            assert_eq!(theirs, ours, "{extra} {rw}");
        }
    }
}

#[test]
fn libaio_vectored_and_priority_hints_reach_the_kernel_as_from_fio_3_41() {
    let dir = common::scratch("libaio-vec");
    let _gone = common::Gone(dir.clone());
    std::fs::write(dir.join("f"), vec![0u8; 8192]).unwrap();
    let job = |at: &std::path::Path, extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec![
            "--name=x".into(),
            "--ioengine=libaio".into(),
            "--size=8k".into(),
            "--bs=4k".into(),
            format!("--filename={}", at.join("f").display()),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let submitted = |t: &str, what: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("io_submit("))
            .filter_map(|l| {
                l.split(what)
                    .nth(1)
                    .map(|r| r.split([',', '}']).next().unwrap().to_string())
            })
            .collect()
    };
    let vec_job = ["--rw=write", "--libaio_vectored=1"];
    let prio_job = [
        "--rw=read",
        "--cmdprio_percentage=100",
        "--cmdprio_class=2",
        "--cmdprio=4",
        "--cmdprio_hint=3",
    ];
    let t = traced(iobench(), "io_submit", &job(&dir, &vec_job));
    let ops = submitted(&t, "aio_lio_opcode=");
    assert_eq!(ops, ["IOCB_CMD_PWRITEV", "IOCB_CMD_PWRITEV"], "{t}");
    assert!(t.contains("iov_len=4096"), "{t}");
    // cmdprio_hint: the hint in the ten bits above the level, (3 << 3) | 4.
    let t = traced(iobench(), "io_submit", &job(&dir, &prio_job));
    let prios = submitted(&t, "aio_reqprio=");
    assert_eq!(prios[0], "IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE", "{t}");
    assert!(t.contains("IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 28)"), "{t}");
    // priohint: the job's own ioprio_set, (2 << 3) | 3.
    let ph = [
        "--name=x",
        "--ioengine=null",
        "--size=8k",
        "--priohint=2",
        "--prio=3",
    ]
    .map(String::from);
    let t = traced(iobench(), "ioprio_set", &ph);
    assert!(t.contains("IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 19)"), "{t}");
    // A hint has ten bits: 1023 is the largest.
    let out = iobench()
        .args(["--parse-only", "--name=x", "--priohint=1024"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    if let Some(fio) = reffio::reference_fio("3.41") {
        let (host, inside) = fio.scratch("libaio-vec");
        let _gone = common::Gone(host.clone());
        std::fs::write(host.join("f"), vec![0u8; 8192]).unwrap();
        for (extra, what) in [
            (&vec_job[..], "aio_lio_opcode="),
            (&prio_job[..], "aio_reqprio="),
        ] {
            let theirs = traced(fio.command(), "io_submit", &job(&inside, extra));
            let ours = traced(fio.iobench(), "io_submit", &job(&dir, extra));
            assert_eq!(
                submitted(&theirs, what),
                submitted(&ours, what),
                "{extra:?}"
            );
        }
        let theirs = traced(fio.command(), "ioprio_set", &ph);
        assert!(
            theirs.contains("IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 19)"),
            "{theirs}"
        );
    }
}

#[test]
fn vsock_is_refused_with_the_reason() {
    let out = iobench()
        .args([
            "--parse-only",
            "--name=x",
            "--ioengine=net",
            "--protocol=vsock",
        ])
        .args(["--hostname=1", "--port=1000", "--size=4k"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("protocol=vsock' is not supported yet: ") && err.contains("AF_VSOCK"),
        "{err}"
    );
}

#[test]
fn bandwidth_log_takes_fio_3_42s_name() {
    let dir = common::scratch("bw-log-name");
    let _gone = common::Gone(dir.clone());
    let run = |c: &mut std::process::Command, flag: &str| {
        c.current_dir(&dir)
            .arg(flag)
            .args(["--name=x", "--ioengine=null", "--size=4k"])
            .output()
            .unwrap()
    };
    let listing = || {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    // /tmp/fio-3.42/fio --bandwidth-log=mine ... made mine-{read,trim,write}_bw.log, and
    // --bandwidth-log alone agg-*; fio 3.41 refuses the argument ("doesn't allow an
    // argument").
    assert!(run(&mut iobench(), "--bandwidth-log=mine").status.success());
    assert_eq!(
        listing(),
        ["mine-read_bw.log", "mine-trim_bw.log", "mine-write_bw.log"]
    );
    assert!(run(&mut iobench(), "--bandwidth-log").status.success());
    assert_eq!(listing().len(), 6);
    assert!(listing().contains(&"agg-write_bw.log".to_string()));
    let out = run(
        iobench().env("IOBENCH_FIO_COMPAT", "3.41"),
        "--bandwidth-log=other",
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bandwidth-log"));
    assert_eq!(listing().len(), 6);
    if let Some(fio) = reffio::reference_fio("3.41") {
        let out = fio
            .command()
            .args([
                "--bandwidth-log=other",
                "--name=x",
                "--ioengine=null",
                "--size=4k",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success());
    }
}

/// (error, reads) of a JSON report.
fn err_and_reads(out: &std::process::Output) -> (i64, u64) {
    let j = &common::json_report(out)["jobs"][0];
    (
        j["error"].as_i64().unwrap(),
        j["read"]["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn filetype_types_the_files_named_after_it_as_fio_3_41() {
    // fio 3.41's `filetype`: every file named after it is taken to be of that kind
    // without a stat, and sized as that kind; one named before it is looked at. On a
    // regular file of 1 MiB, 64 KiB read in 4k: block asks the file its device size
    // (BLKGETSIZE64: ENOTTY, error 25, no I/O), file and char read it (16 reads), char
    // without a size has none (error 22).
    let cases: [(&[&str], (i64, u64)); 6] = [
        (&["--filetype=none", "F"], (0, 16)),
        (&["--filetype=file", "F"], (0, 16)),
        (&["--filetype=block", "F"], (25, 0)),
        (&["--filetype=char", "F"], (0, 16)),
        (&["F", "--filetype=block"], (0, 16)),
        (&["--filetype=char", "F", "--size=0"], (22, 0)),
    ];
    let run = |mut c: std::process::Command, file: &std::path::Path, args: &[&str]| {
        c.args([
            "--name=j",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--output-format=json",
        ]);
        for a in args {
            if *a == "F" {
                c.arg(format!("--filename={}", file.display()));
            } else {
                c.arg(a);
            }
        }
        err_and_reads(&c.output().unwrap())
    };
    let dir = common::scratch("filetype");
    let f = dir.join("f");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    for (args, want) in &cases {
        assert_eq!(run(iobench(), &f, args), *want, "iobench {args:?}");
    }
    if let Some(fio) = reffio::reference_fio("3.41") {
        let (host, inside) = fio.scratch("filetype");
        std::fs::write(host.join("f"), vec![0u8; 1 << 20]).unwrap();
        for (args, want) in &cases {
            assert_eq!(
                run(fio.command(), &inside.join("f"), args),
                *want,
                "{} {args:?}",
                fio.label()
            );
        }
        let _ = std::fs::remove_dir_all(&host);
    }
    // In job files: a [global] filetype reaches the job's own filename; a [global]
    // filename was typed (looked at) before the job's filetype was read.
    let jobs = |path: &std::path::Path| {
        let p = path.display();
        [
            (
                format!("[global]\nfiletype=block\n[j]\nfilename={p}\nrw=read\nsize=64k\n"),
                (25, 0),
            ),
            (
                format!("[global]\nfilename={p}\n[j]\nfiletype=block\nrw=read\nsize=64k\n"),
                (0, 16),
            ),
        ]
    };
    let from_file = |mut c: std::process::Command, dir: &std::path::Path, k: usize, text: &str| {
        let job = dir.join(format!("j{k}.fio"));
        std::fs::write(&job, text).unwrap();
        c.arg("--output-format=json").arg(job);
        err_and_reads(&c.output().unwrap())
    };
    for (k, (text, want)) in jobs(&f).iter().enumerate() {
        assert_eq!(
            from_file(iobench(), &dir, k, text),
            *want,
            "iobench:\n{text}"
        );
    }
    if let Some(fio) = reffio::reference_fio("3.41") {
        let (host, inside) = fio.scratch("filetype_jobs");
        std::fs::write(host.join("f"), vec![0u8; 1 << 20]).unwrap();
        for (k, (text, want)) in jobs(&inside.join("f")).iter().enumerate() {
            let mut c = fio.command();
            let job = inside.join(format!("j{k}.fio"));
            std::fs::write(host.join(format!("j{k}.fio")), text).unwrap();
            c.arg("--output-format=json").arg(job);
            assert_eq!(
                err_and_reads(&c.output().unwrap()),
                *want,
                "{}:\n{text}",
                fio.label()
            );
        }
        let _ = std::fs::remove_dir_all(&host);
    }
    // fio 3.33 to 3.40 have no such option: refused by name in their dialects.
    let out = iobench()
        .env("IOBENCH_FIO_COMPAT", "3.40")
        .args(["--parse-only", "--name=x", "--filetype=block"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("filetype") && err.contains("3.41"), "{err}");
    // On a block device (root): block reads all of it, char reads what size= says, and
    // file is refused before anything is done, where fio 3.41 sizes the device at 0
    // (no size=: "you need to specify size=", error 22) or unlinks the device's node to
    // lay a regular file out (size=1m: error 16 here, the node being busy). Checked with
    // fio 3.41 on an 8 MiB loop device: 2048 reads, 256 reads, error 22, error 16.
    let Some(lo) = common::loopdev::Loop::new("filetype_loop", "8M") else {
        return;
    };
    let dev = std::path::Path::new(&lo.dev);
    let at = |args: &[&str]| {
        let mut c = iobench();
        c.args(["--name=j", "--rw=read", "--bs=4k", "--output-format=json"])
            .args(args)
            .arg(format!("--filename={}", lo.dev));
        c.output().unwrap()
    };
    assert_eq!(err_and_reads(&at(&["--filetype=block"])), (0, 2048));
    assert_eq!(
        err_and_reads(&at(&["--filetype=char", "--size=1m"])),
        (0, 256)
    );
    for size in ["--size=0", "--size=1m"] {
        let out = at(&["--filetype=file", size]);
        assert_eq!(err_and_reads(&out).1, 0);
        assert_ne!(err_and_reads(&out).0, 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("filetype=file") && err.contains("is a device"),
            "{err}"
        );
    }
    let md = std::fs::metadata(dev).expect("the device's node is still there");
    assert!(std::os::unix::fs::FileTypeExt::is_block_device(
        &md.file_type()
    ));
}
