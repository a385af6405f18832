//! MPI runs on one machine (built and run only with `--features mpi`): Open MPI's mpirun
//! with `--oversubscribe` starts 2 to 4 ranks of the iobench binary, and the merged report
//! is checked against the ranks' own reports.
//!
//! A missing mpirun skips these tests, or fails them when IOBENCH_REQUIRE_FIO=1 (CI
//! installs openmpi-bin).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn mpirun() -> Option<&'static str> {
    let ok = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some("mpirun");
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)");
    }
    eprintln!("skipped: mpirun is not installed");
    None
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("iobench-mpi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// mpirun's environment for a run in `dir`: as root if need be, no single-copy mechanism
/// (a container may forbid it), and a temporary directory of the run's own, where Open MPI
/// makes its session directory: two mpiruns starting together in the shared /tmp once
/// raced to create the same `/tmp/ompi.<host>.0` and one failed ("File exists").
fn mpi_env(dir: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    let tmp = dir.join(".mpi-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    vec![
        ("OMPI_ALLOW_RUN_AS_ROOT", "1".into()),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1".into()),
        ("OMPI_MCA_btl_vader_single_copy_mechanism", "none".into()),
        ("TMPDIR", tmp.into_os_string()),
    ]
}

/// `mpirun -np N [wrap…] iobench args…` in `dir`, as root if need be; (status, stdout,
/// stderr).
fn run(np: u32, wrap: &[&str], dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = Command::new(mpirun().unwrap());
    c.args(["--oversubscribe", "-np", &np.to_string()])
        .args(wrap)
        .arg(env!("CARGO_BIN_EXE_iobench"))
        .args(args)
        .current_dir(dir)
        .envs(mpi_env(dir));
    let o = c.output().expect("mpirun runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json_of(out: &str) -> Value {
    let start = out.find('{').expect("JSON in the output");
    serde_json::from_str(&out[start..]).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Sums a `bins` object into `acc`.
fn add_bins(acc: &mut BTreeMap<u64, u64>, bins: &Value) {
    for (k, v) in bins.as_object().expect("bins") {
        *acc.entry(k.parse().unwrap()).or_default() += v.as_u64().unwrap();
    }
}

#[test]
fn merged_report_is_the_exact_sum_of_the_ranks() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("sum");
    std::fs::write(
        d.join("j.fio"),
        "[mix]\nrw=randrw\nsize=1m\nbs=4k\nioengine=psync\nfilename=data\nnumjobs=2\n",
    )
    .unwrap();
    let (code, out, err) = run(3, &[], &d, &["--output-format=json+", "j.fio"]);
    assert_eq!(code, 0, "{err}\n{out}");
    let v = json_of(&out);
    let cs = v["client_stats"].as_array().unwrap();
    // 3 ranks × 2 clones, then one All clients object.
    assert_eq!(cs.len(), 7, "{out}");
    let all = &cs[6];
    assert_eq!(all["jobname"], "All clients");
    assert_eq!(
        all["job_runtime"],
        cs[..6]
            .iter()
            .map(|c| c["job_runtime"].as_u64().unwrap())
            .sum::<u64>()
    );
    let mut ranks: Vec<u64> = cs[..6]
        .iter()
        .map(|c| c["rank"].as_u64().unwrap())
        .collect();
    ranks.dedup();
    assert_eq!(ranks, vec![0, 1, 2]);
    for dir in ["read", "write"] {
        let per = &cs[..6];
        let sum = |k: &str| per.iter().map(|c| c[dir][k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(
            all[dir]["io_bytes"].as_u64().unwrap(),
            sum("io_bytes"),
            "{dir}"
        );
        assert_eq!(
            all[dir]["total_ios"].as_u64().unwrap(),
            sum("total_ios"),
            "{dir}"
        );
        let max_rt = per
            .iter()
            .map(|c| c[dir]["runtime"].as_u64().unwrap())
            .max();
        assert_eq!(all[dir]["runtime"].as_u64(), max_rt, "{dir}");
        let mut want = BTreeMap::new();
        for c in per {
            add_bins(&mut want, &c[dir]["clat_ns"]["bins"]);
        }
        let mut got = BTreeMap::new();
        add_bins(&mut got, &all[dir]["clat_ns"]["bins"]);
        assert_eq!(got, want, "{dir}: merged histogram = sum of the ranks'");
        assert_eq!(got.values().sum::<u64>(), sum("total_ios"));
    }
    // 6 clones × 1 MiB of files, each rank's own.
    assert_eq!(
        all["read"]["io_bytes"].as_u64().unwrap() + all["write"]["io_bytes"].as_u64().unwrap(),
        6 << 20
    );
    for r in 0..3 {
        assert!(d.join(format!("data.r{r}")).exists(), "rank {r}'s file");
    }
    assert!(!d.join("data").exists());
    assert_eq!(v["mpi"]["ranks"], 3);
    assert_eq!(v["mpi"]["gather_bytes"].as_array().unwrap().len(), 3);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn phases_start_together_and_the_skew_is_reported() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("skew");
    std::fs::write(
        d.join("j.fio"),
        "[global]\nsize=256k\nbs=4k\nioengine=psync\nfilename=f\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n",
    )
    .unwrap();
    let (code, out, err) = run(4, &[], &d, &["--output-format=json,normal", "j.fio"]);
    assert_eq!(code, 0, "{err}\n{out}");
    let v = json_of(&out[..out.find("\nhostname=").unwrap_or(out.len())]);
    let skew = v["mpi"]["start_skew_ns"].as_array().unwrap();
    assert_eq!(skew.len(), 2, "one start per phase");
    for s in skew {
        // Generous for a loaded 2-core CI machine running 4 ranks.
        assert!(s.as_u64().unwrap() < 200_000_000, "skew {s}");
    }
    assert!(
        out.contains("MPI: 4 ranks on 1 host, each phase started at the barrier's exit"),
        "{out}"
    );
    assert!(out.contains("phase 1: start skew="), "{out}");
    assert!(out.contains("merge: gathered "), "{out}");
    assert!(out.contains("All clients: (groupid=1, jobs=4)"), "{out}");
    assert!(out.contains("All clients group 0 (4 clients):"), "{out}");
    assert!(out.contains("first-done bw="), "{out}");
    // Each host's report is there, named.
    for r in 0..4 {
        assert!(out.contains(&format!(", rank {r}\n")), "{out}");
    }
    assert_eq!(v["mpi"]["sync_start"], "barrier");
    // With an agreed clock time instead.
    let (code, out, err) = run(
        2,
        &[],
        &d,
        &["--output-format=json", "--sync-start=clock", "j.fio"],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    let v = json_of(&out);
    assert_eq!(v["mpi"]["sync_start"], "clock");
    assert_eq!(v["mpi"]["start_skew_ns"].as_array().unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn rotate_ranks_reads_another_ranks_data() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("rotate");
    // Rank 0's file holds 1 MiB and rank 1's 2 MiB: a reader with no size reads it all.
    std::fs::write(d.join("x.r0"), vec![1u8; 1 << 20]).unwrap();
    std::fs::write(d.join("x.r1"), vec![2u8; 2 << 20]).unwrap();
    std::fs::write(d.join("j.fio"), "[r]\nrw=read\nbs=64k\nfilename=x\n").unwrap();
    let bytes = |args: &[&str]| {
        let (code, out, err) = run(2, &[], &d, args);
        assert_eq!(code, 0, "{err}\n{out}");
        let v = json_of(&out);
        let cs = v["client_stats"].as_array().unwrap().clone();
        (0..2)
            .map(|i| cs[i]["read"]["io_bytes"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bytes(&["--output-format=json", "j.fio"]),
        vec![1 << 20, 2 << 20]
    );
    assert_eq!(
        bytes(&["--output-format=json", "--rotate-ranks", "j.fio"]),
        vec![2 << 20, 1 << 20]
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ranks_in_their_own_uts_namespaces_are_separate_hosts() {
    if mpirun().is_none() {
        return;
    }
    let probe = Command::new("unshare")
        .args(["-u", "hostname", "probe"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: unshare -u is not permitted here");
        return;
    }
    let d = scratch("uts");
    std::fs::write(
        d.join("j.fio"),
        "[w]\nrw=write\nsize=256k\nbs=4k\nfilename=f\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_iobench");
    let script = format!(
        "exec unshare -u sh -c 'hostname mpihost$OMPI_COMM_WORLD_RANK && exec {bin} \"$@\"' sh \"$@\""
    );
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", "2", "sh", "-c", &script, "sh"])
        .args(["--output-format=json", "j.fio"])
        .current_dir(&d)
        .envs(mpi_env(&d));
    let o = c.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json_of(&out);
    let cs = v["client_stats"].as_array().unwrap();
    assert_eq!(cs[0]["hostname"], "mpihost0");
    assert_eq!(cs[1]["hostname"], "mpihost1");
    assert_eq!(v["mpi"]["hosts"], 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_bad_job_fails_every_rank_with_one_error() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("bad");
    std::fs::write(d.join("j.fio"), "[w]\nrw=sideways\nsize=1m\n").unwrap();
    let (code, _out, err) = run(2, &[], &d, &["j.fio"]);
    assert_ne!(code, 0);
    assert!(err.contains("rw"), "{err}");
    assert_eq!(
        err.matches("sideways").count(),
        2,
        "one rank says it: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let (code, _out, err) = run(2, &[], &d, &["--sync-start=soon", "j.fio"]);
    assert_ne!(code, 0);
    assert!(err.contains("bad value 'soon' for --sync-start"), "{err}");
    assert_eq!(
        err.matches("bad value").count(),
        1,
        "one rank says it: {err}"
    );
    std::fs::write(d.join("ok.fio"), "[w]\nrw=write\nsize=64k\nfilename=f\n").unwrap();
    let (code, out, err) = run(2, &[], &d, &["--minimal", "ok.fio"]);
    assert_ne!(code, 0);
    assert!(err.contains("no terse form"), "{err}");
    assert!(out.is_empty(), "{out}");
    let (code, _out, err) = run(2, &[], &d, &["--status-interval=1", "ok.fio"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("--status-interval: an MPI run reports once"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_straggler_shows_and_first_done_is_measured() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("straggler");
    // Each rank expands its own rank into its rate: 10, 11 and 12 MiB/s.
    std::fs::write(
        d.join("j.fio"),
        "[w]\nrw=write\nbs=64k\nsize=4m\nrate=1${OMPI_COMM_WORLD_RANK}m\nfilename=s\n",
    )
    .unwrap();
    let (code, out, err) = run(3, &[], &d, &["--output-format=json", "j.fio"]);
    assert_eq!(code, 0, "{err}\n{out}");
    let v = json_of(&out);
    let s = &v["client_spread"][0];
    assert_eq!(s["ddir"], "write");
    assert_eq!(s["first_done_measured"], 1, "{s}");
    assert_eq!(s["slowest"]["rank"], 0, "{s}");
    assert_eq!(s["fastest"]["rank"], 2, "{s}");
    let first = s["first_done_bw_bytes"].as_f64().unwrap();
    let last = s["last_done_bw_bytes"].as_f64().unwrap();
    assert!(
        s["first_done_ms"].as_u64() < s["last_done_ms"].as_u64(),
        "{s}"
    );
    // Until the fastest finished all three were writing: more than the average over the
    // whole run, and about the sum of the three rates.
    let rates: f64 = s["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["bw_bytes"].as_f64().unwrap())
        .sum();
    assert!(first > last, "{s}");
    assert!(first > 0.7 * rates && first < 1.1 * rates, "{s}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Every key path of a JSON object, with `bins` and `job options` left closed (their keys
/// are data) and percentile keys folded (iobench's All clients has them, fio's does not).
fn key_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Some(o) = v.as_object() {
        for (k, val) in o {
            if prefix.ends_with("percentile.") {
                continue;
            }
            let p = format!("{prefix}{k}");
            out.push(p.clone());
            if k != "bins" && k != "job options" {
                key_paths(val, &format!("{p}."), out);
            }
        }
    }
}

#[test]
fn client_json_has_fios_client_stats_keys() {
    if mpirun().is_none() {
        return;
    }
    let fio_ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !fio_ok {
        if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("fio is not installed");
        }
        eprintln!("skipped: fio is not installed");
        return;
    }
    let d = scratch("fioclient");
    std::fs::write(
        d.join("j.fio"),
        format!(
            "[mix]\nrw=randrw\nsize=256k\nbs=4k\nfilename={}/f\n",
            d.display()
        ),
    )
    .unwrap();
    // fio's own client/server on loopback: the reference layout.
    let port = 20000 + std::process::id() % 20000;
    let addr = format!("ip:127.0.0.1,{port}");
    let mut server = Command::new("fio")
        .arg(format!("--server={addr}"))
        .current_dir(&d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut fio_out = None;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Two clients (the same server by two names): fio adds "All clients" only then.
        let o = Command::new("fio")
            .arg("--output-format=json")
            .arg(format!("--client={addr}"))
            .arg(d.join("j.fio"))
            .arg(format!("--client=ip:localhost,{port}"))
            .arg(d.join("j.fio"))
            .output()
            .unwrap();
        if o.status.success() {
            fio_out = Some(String::from_utf8_lossy(&o.stdout).into_owned());
            break;
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    let fio = json_of(&fio_out.expect("fio --client ran"));
    // The reference is the host's fio 3.33: the ranks speak its dialect.
    let (code, out, err) = run(
        2,
        &[],
        &d,
        &["--fio-compat=3.33", "--output-format=json", "j.fio"],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    let ours = json_of(&out);
    let top = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let mut want_top = top(&fio);
    want_top.extend(["client_spread".to_string(), "mpi".to_string()]);
    let mut got_top = top(&ours);
    if fio.get("disk_util").is_none() {
        got_top.retain(|k| k != "disk_util");
    }
    assert_eq!(got_top, want_top);
    // A host's job, and the All clients object: fio's keys in fio's order, with `rank`
    // where fio's clients have `port`.
    let fc = fio["client_stats"].as_array().unwrap();
    let oc = ours["client_stats"].as_array().unwrap();
    for (f, o) in [(&fc[0], &oc[0]), (fc.last().unwrap(), oc.last().unwrap())] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        key_paths(f, "", &mut a);
        key_paths(o, "", &mut b);
        let a: Vec<String> = a.into_iter().map(|k| k.replace("port", "rank")).collect();
        b.retain(|k| !k.ends_with(".percentile") || a.contains(k));
        assert_eq!(b, a, "jobname {}", o["jobname"]);
    }
    assert_eq!(oc.last().unwrap()["jobname"], "All clients");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ranks_without_the_job_file_get_it_from_rank_0() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("bcast");
    let empty = d.join("elsewhere");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(
        d.join("only-here.fio"),
        format!(
            "[w]\nrw=write\nsize=128k\nbs=4k\nfilename={}/f\n",
            d.display()
        ),
    )
    .unwrap();
    // Every rank but 0 starts in a directory without the job file.
    let bin = env!("CARGO_BIN_EXE_iobench");
    let script = format!(
        "[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] || cd {}; exec {bin} \"$@\"",
        empty.display()
    );
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", "3", "sh", "-c", &script, "sh"])
        .args(["--output-format=json", "only-here.fio"])
        .current_dir(&d)
        .envs(mpi_env(&d));
    let o = c.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json_of(&out);
    let cs = v["client_stats"].as_array().unwrap();
    for (r, c) in cs.iter().take(3).enumerate() {
        assert_eq!(c["rank"], r as u64);
        assert_eq!(c["write"]["io_bytes"], 128 << 10);
        assert!(d.join(format!("f.r{r}")).exists());
    }
    // The copies the other ranks parsed are gone, with their private directories: the
    // ranks' temporary directory (see `mpi_env`) holds nothing of iobench's.
    let left: Vec<_> = std::fs::read_dir(d.join(".mpi-tmp"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("iobench-") || n.ends_with("-only-here.fio"))
        .collect();
    assert!(left.is_empty(), "left in the ranks' TMPDIR: {left:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// An MPI rank refuses what a plain run refuses, with the same words and before any I/O:
/// too many clones, a terse version fio does not know, a job that fails the preflight.
#[test]
fn ranks_refuse_what_a_plain_run_refuses() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("refuse");
    let ds = d.display();
    let cases = [
        (
            vec![],
            format!(
                "[many]\nthread\nioengine=null\nsize=4k\nnumjobs=5000\n\
                 exec_prerun=touch {ds}/ran-many\n"
            ),
            "maximum number of jobs reached: 5000 jobs",
        ),
        (
            vec!["--terse-version=9"],
            format!("[ok]\nfilename={ds}/ok.dat\nsize=4k\nexec_prerun=touch {ds}/ran-ok\n"),
            "bad terse version 9: expected 2, 3, 4 or 5 (--terse-version)",
        ),
        (
            vec![],
            format!(
                "[a]\nfilename={ds}/a.dat\nsize=4k\nss=iops:10%\nss_dur=5s\n\
                 exec_prerun=touch {ds}/ran-a\n\
                 [b]\nfilename={ds}/b.dat\nsize=4k\nss=bw:5%\nss_dur=5s\n\
                 exec_prerun=touch {ds}/ran-b\n"
            ),
            "steadystate options must be the same for every job of a group",
        ),
    ];
    for (flags, body, words) in cases {
        std::fs::write(d.join("j.fio"), body).unwrap();
        let mut args = flags.clone();
        args.push("j.fio");
        let (code, out, err) = run(2, &[], &d, &args);
        assert_ne!(code, 0, "{words}: {out}{err}");
        assert!(err.contains(words), "{words}: {err}");
        assert_eq!(err.matches(words).count(), 1, "one rank says it: {err}");
        // And a plain run says the same.
        let o = Command::new(env!("CARGO_BIN_EXE_iobench"))
            .args(&args)
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&o.stderr).contains(words));
        let started: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("ran-") || n.ends_with(".dat") || n.contains(".dat."))
            .collect();
        assert!(started.is_empty(), "{words}: I/O started: {started:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Ranks that would run different jobs are refused before the first barrier, with a
/// message naming the rank: phases taken from the rank's environment (which deadlocked
/// at the barriers) and different command lines (which were replaced by rank 0's).
#[test]
fn ranks_that_disagree_are_refused_naming_the_rank() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("disagree");
    std::fs::write(
        d.join("s.fio"),
        "[w]\nrw=write\nsize=64k\nfilename=f\n\
         [r]\nrw=read\nsize=64k\nfilename=f\nstonewall=${OMPI_COMM_WORLD_RANK}\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let (code, _out, err) = run(2, &["timeout", "60"], &d, &["s.fio"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("the MPI ranks disagree: rank 1 would run other phases than rank 0"),
        "{err}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(50),
        "a deadlock"
    );
    // Two command lines (mpirun's MPMD form): each rank its own job file.
    std::fs::write(d.join("a.fio"), "[w]\nrw=write\nsize=64k\nfilename=f\n").unwrap();
    std::fs::write(d.join("b.fio"), "[w]\nrw=read\nsize=64k\nfilename=f\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_iobench");
    let o = Command::new(mpirun().unwrap())
        .args([
            "--oversubscribe",
            "-np",
            "1",
            bin,
            "a.fio",
            ":",
            "-np",
            "1",
            bin,
            "b.fio",
        ])
        .current_dir(&d)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("rank 1 was started with other arguments"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A rank killed mid-run (mpirun then stops the others) still leaves rank 0's results in
/// its `--output`, with an error that says the report is rank 0's alone.
#[test]
fn a_dead_rank_still_leaves_rank_0s_report() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("dead");
    std::fs::write(
        d.join("t.fio"),
        "[w]\nrw=write\nsize=1m\nfilename=f\ntime_based\nruntime=20s\nioengine=psync\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_iobench");
    let child = Command::new(mpirun().unwrap())
        .args(["--oversubscribe", "-np", "2", bin])
        .args(["--output=out.json", "--output-format=json", "t.fio"])
        .current_dir(&d)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mpirun_pid = child.id();
    // The ranks are mpirun's children; rank 1 is the one with OMPI_COMM_WORLD_RANK=1.
    let rank1 = || -> Option<i32> {
        let kids =
            std::fs::read_to_string(format!("/proc/{mpirun_pid}/task/{mpirun_pid}/children"))
                .ok()?;
        kids.split_whitespace().find_map(|p| {
            let env = std::fs::read(format!("/proc/{p}/environ")).ok()?;
            env.split(|&b| b == 0)
                .any(|v| v == b"OMPI_COMM_WORLD_RANK=1")
                .then(|| p.parse().ok())?
        })
    };
    let t0 = std::time::Instant::now();
    let pid = loop {
        if let Some(p) = rank1() {
            break p;
        }
        assert!(t0.elapsed().as_secs() < 20, "rank 1 never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: kills a process of this test's mpirun.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o = match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            // SAFETY: our own child.
            unsafe { libc::kill(mpirun_pid as i32, libc::SIGKILL) };
            panic!("mpirun hung after a rank died");
        }
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("the report holds rank 0's results only"),
        "{err}"
    );
    let text = std::fs::read_to_string(d.join("out.json")).unwrap();
    let v = json_of(&text);
    assert_eq!(v["client_stats"][0]["jobname"], "w", "{text}");
    assert!(v["client_stats"][0]["write"]["io_bytes"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&d);
}

/// The pid of rank `rank` among `mpirun_pid`'s children (by OMPI_COMM_WORLD_RANK).
fn rank_pid(mpirun_pid: u32, rank: u32) -> Option<i32> {
    let kids =
        std::fs::read_to_string(format!("/proc/{mpirun_pid}/task/{mpirun_pid}/children")).ok()?;
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    kids.split_whitespace().find_map(|p| {
        let env = std::fs::read(format!("/proc/{p}/environ")).ok()?;
        env.split(|&b| b == 0)
            .any(|v| v == want.as_bytes())
            .then(|| p.parse().ok())?
    })
}

/// An interrupted run whose ranks reach the end at different times (here rank 1 is
/// stopped 1.5 s after rank 0): rank 0 waits for every rank that comes before the
/// launcher would kill it (Open MPI's `odls_base_sigkill_timeout`, 10 s here), so the
/// report holds both ranks, not rank 0's alone (it waited 0.5 s).
#[test]
fn an_interrupted_run_waits_for_slow_ranks() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("interrupted");
    std::fs::write(
        d.join("t.fio"),
        "[w]\nrw=write\nsize=1m\nfilename=f\ntime_based\nruntime=30s\nioengine=psync\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_iobench");
    let child = Command::new(mpirun().unwrap())
        .args(["--oversubscribe", "-np", "2", bin])
        .args(["--output=out.json", "--output-format=json", "t.fio"])
        .current_dir(&d)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("OMPI_MCA_odls_base_sigkill_timeout", "10")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mpirun_pid = child.id();
    let t0 = std::time::Instant::now();
    let (r0, r1) = loop {
        if let (Some(a), Some(b)) = (rank_pid(mpirun_pid, 0), rank_pid(mpirun_pid, 1)) {
            break (a, b);
        }
        assert!(t0.elapsed().as_secs() < 20, "the ranks never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_secs(2));
    // SAFETY: signals processes of this test's mpirun.
    unsafe { libc::kill(r0, libc::SIGINT) };
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: as above.
    unsafe { libc::kill(r1, libc::SIGINT) };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o = match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            // SAFETY: our own child.
            unsafe { libc::kill(mpirun_pid as i32, libc::SIGKILL) };
            panic!("mpirun hung after the interruption");
        }
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("results only"), "{err}");
    let text = std::fs::read_to_string(d.join("out.json")).unwrap();
    let v = json_of(&text);
    let clients = v["client_stats"].as_array().expect("client_stats");
    let ranks: Vec<u64> = clients
        .iter()
        .filter(|c| c["jobname"] == "w")
        .map(|c| {
            assert!(c["write"]["io_bytes"].as_u64().unwrap() > 0, "{text}");
            c["rank"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(ranks, vec![0, 1], "both ranks are in the report: {text}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--output=DIR/` on an MPI run: rank 0 writes the merged report one file per format,
/// as a plain run does (report.json the merged JSON with its `mpi` section and nothing
/// else, report.txt the normal report with its MPI lines and no JSON), and nothing of it
/// on stdout.
#[test]
fn merged_report_to_a_directory_is_one_file_per_format() {
    if mpirun().is_none() {
        return;
    }
    let d = scratch("per_format");
    let (code, out, err) = run(
        2,
        &[],
        &d,
        &[
            "--name=p",
            "--ioengine=null",
            "--size=1m",
            "--output-format=json,normal",
            "--output=reports/",
        ],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(!out.contains("groupid") && !out.contains('{'), "{out}");
    let text = std::fs::read_to_string(d.join("reports/report.txt")).unwrap();
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("reports/report.json")).unwrap())
            .expect("report.json is one JSON document and nothing else");
    assert_eq!(v["mpi"]["ranks"], 2, "{v}");
    let cs = v["client_stats"].as_array().unwrap();
    assert_eq!(cs.last().unwrap()["jobname"], "All clients");
    assert!(text.contains("MPI: 2 ranks on 1 host"), "{text}");
    assert!(text.contains("All clients"), "{text}");
    assert!(!text.contains('{'), "no JSON in the normal report: {text}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Removes a scratch tree when the test ends, passed or failed.
struct Gone(PathBuf);

impl Drop for Gone {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An MPI rank without the job file writes rank 0's copy in a private directory
/// (mkdtemp, 0700; the file `O_EXCL|O_NOFOLLOW`, 0600). Another user (`nobody`, through
/// `setpriv`) plants, in the ranks' `$TMPDIR` (sticky and world-writable, as /tmp is),
/// every name the old scheme (`$TMPDIR/iobench-mpi-<pid>-<arg>-<name>`, written with
/// `fs::write`) gives the next thousands of processes: links to a root-only file, and
/// files of the attacker's own holding another job; and, beside the private directory,
/// links named as mkdtemp's names are to a root-only directory. Root's run must follow
/// none and overwrite none (the old scheme wrote root's job through the links into the
/// root-only file and into the attacker's files), run the job it was given, and leave
/// nothing of its own in `$TMPDIR`.
#[test]
fn another_user_cannot_plant_a_ranks_job_file() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if mpirun().is_none() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("another_user_cannot_plant_a_ranks_job_file needs root (setpriv)");
        }
        eprintln!("skipped: needs root");
        return;
    }
    let d = scratch("planted");
    let _gone = Gone(d.clone());
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    mode(&d, 0o755).unwrap();
    let sticky = d.join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    mode(&sticky, 0o1777).unwrap();
    let root = d.join("root");
    std::fs::create_dir(&root).unwrap();
    let victim = root.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    mode(&victim, 0o600).unwrap();
    let victim_dir = root.join("dir");
    std::fs::create_dir(&victim_dir).unwrap();
    mode(&root, 0o711).unwrap();
    let here = d.join("here");
    let empty = d.join("elsewhere");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(
        here.join("only-here.fio"),
        format!(
            "[w]\nrw=write\nsize=64k\nbs=4k\nfilename={}/f\n",
            here.display()
        ),
    )
    .unwrap();
    // The attacker's job, should a rank run it: it would write into root's directory.
    let theirs = format!(
        "[pwned]\nrw=write\nsize=4k\nfilename={}/pwned\n",
        victim_dir.display()
    );
    // Every old name for the next 6000 processes (pids wrap at pid_max), arguments 0 to
    // 2; even pids a link to the victim, odd ones a file of the attacker's; and links at
    // mkdtemp-like names beside the private directory.
    let last: u64 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let perl = format!(
        "my ($S, $V, $D, $J) = @ARGV; \
         for my $k (1..6000) {{ my $p = ({last} + $k) % {max}; next if $p < 2; \
           for my $i (0..2) {{ my $n = \"$S/iobench-mpi-$p-$i-only-here.fio\"; \
             if ($p % 2) {{ open(my $f, '>', $n) or die; print $f $J; close $f; chmod 0666, $n; }} \
             else {{ symlink($V, $n) or die }} }} }} \
         my @c = ('a'..'z', 'A'..'Z', 0..9); \
         for (1..2000) {{ my $x = join('', map {{ $c[rand @c] }} 1..6); \
           symlink($D, \"$S/iobench-mpi-$x\"); }} \
         symlink($D, \"$S/iobench-mpi-XXXXXX\") or die; 1"
    );
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "perl",
            "-e",
        ])
        .arg(&perl)
        .arg(&sticky)
        .arg(&victim)
        .arg(&victim_dir)
        .arg(&theirs)
        .output()
        .expect("setpriv");
    assert!(
        out.status.success(),
        "the attacker's perl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let planted = |p: &Path| {
        let mut v: Vec<(PathBuf, u32, String)> = std::fs::read_dir(p)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.metadata().is_ok_and(|m| m.uid() == 65534))
            .map(|e| {
                let p = e.path();
                let md = std::fs::symlink_metadata(&p).unwrap();
                let what = if md.file_type().is_symlink() {
                    format!("-> {}", std::fs::read_link(&p).unwrap().display())
                } else {
                    std::fs::read_to_string(&p).unwrap()
                };
                (p, md.uid(), what)
            })
            .collect();
        v.sort();
        v
    };
    let before = planted(&sticky);
    assert!(before.len() > 18_000, "{} planted", before.len());
    // Ranks 1 and 2 start where the job file is not; their TMPDIR is the sticky one.
    let bin = env!("CARGO_BIN_EXE_iobench");
    let script = format!(
        "[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] || cd {}; exec {bin} \"$@\"",
        empty.display()
    );
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", "3", "sh", "-c", &script, "sh"])
        .args(["--output-format=json", "only-here.fio"])
        .current_dir(&here)
        .envs(mpi_env(&d))
        .env("TMPDIR", &sticky);
    let o = c.output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Root's job ran on every rank, the attacker's on none.
    let v = json_of(&text);
    let cs = v["client_stats"].as_array().unwrap();
    for (r, c) in cs.iter().take(3).enumerate() {
        assert_eq!(c["write"]["io_bytes"], 64 << 10, "rank {r}");
        assert_eq!(c["jobname"], "w", "rank {r}");
    }
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "precious\n",
        "root's file was written through a planted link"
    );
    let n = std::fs::read_dir(&victim_dir).unwrap().count();
    assert_eq!(n, 0, "files were written into root's directory");
    assert!(
        planted(&sticky) == before,
        "the attacker's files or links were changed"
    );
    // Nothing of the ranks' is left: their private directories are gone.
    let left: Vec<_> = std::fs::read_dir(&sticky)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == 0))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("iobench-"))
        .collect();
    assert!(left.is_empty(), "left in the ranks' TMPDIR: {left:?}");
}
