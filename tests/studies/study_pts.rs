//! `iobench pts`: every test end to end at small scale on a file (a few MiB, rounds of
//! milliseconds), a loop device purged by discard (root), a run stopped by Ctrl-C and
//! killed outright then resumed to the same structure and rounds as an uninterrupted
//! one, and its refusals.

use crate::common;

use common::{iobench, run, run_ok, scratch};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn pts(dir: &Path, args: &[&str]) -> Command {
    let mut c = iobench();
    c.arg("pts").args(args).arg("-o").arg(dir.join("out"));
    c.arg(dir.join("target"));
    c
}

fn summary(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("out/summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary is JSON")
}

/// The summary's shape: every key path, with numbers and strings replaced by their kind,
/// so two runs' summaries compare whatever they measured.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        Value::Number(_) => Value::String("number".into()),
        Value::String(_) => Value::String("string".into()),
        other => other.clone(),
    }
}

/// The rounds a section ran, and a check that the count is the one the determination
/// asks for: the first round whose window is steady, or the limit.
fn rounds_as_determined(sec: &Value, max_rounds: usize) -> usize {
    let rounds: Vec<f64> = sec["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tracking"].as_f64().unwrap())
        .collect();
    let n = rounds.len();
    let steady = sec["determination"]["steady"].as_bool().unwrap();
    assert!((5..=max_rounds).contains(&n), "{n} rounds");
    assert!(
        steady || n == max_rounds,
        "stopped at {n} without steady state"
    );
    // The window is the last five rounds, and its numbers are the rounds' own.
    let d = &sec["determination"];
    assert_eq!(d["first_round"], n - 4);
    assert_eq!(d["last_round"], n);
    let window = &rounds[n - 5..];
    let avg = window.iter().sum::<f64>() / 5.0;
    assert!((d["average"].as_f64().unwrap() - avg).abs() <= 1e-9 * avg.max(1.0));
    let range = window.iter().copied().fold(f64::MIN, f64::max)
        - window.iter().copied().fold(f64::MAX, f64::min);
    assert!((d["range"].as_f64().unwrap() - range).abs() <= 1e-9 * avg.max(1.0));
    assert_eq!(d["range_ok"].as_bool().unwrap(), range <= 0.2 * avg, "{d}");
    assert!(d["formula"].as_str().unwrap().starts_with("y = "));
    n
}

#[test]
fn iops_runs_the_whole_matrix_to_its_window() {
    let dir = scratch("pts_iops");
    let out = run_ok(pts(
        &dir,
        &[
            "iops",
            "--capacity=2m",
            "--round-time=10ms",
            "--max-rounds=5",
            "--qd=2",
        ],
    ));
    let report = String::from_utf8_lossy(&out.stdout);
    let s = summary(&dir);
    assert_eq!(s["test"], "iops");
    assert_eq!(s["conforming"], false);
    let why = s["not_conforming_because"].to_string();
    assert!(
        why.contains("--round-time 10 ms") && why.contains("a file"),
        "{why}"
    );
    let sec = &s["sections"][0];
    assert_eq!(sec["purge"], "file removed and re-created");
    assert_eq!(sec["preconditioning"]["bytes"], 4 << 20);
    assert_eq!(sec["tracking"]["workload"], "rw0-bs4k");
    let n = rounds_as_determined(sec, 5);
    // 7 mixes × 8 block sizes, each a plain run's JSON+ in every round.
    let results = sec["results"].as_array().unwrap();
    assert_eq!(results.len(), 56);
    assert!(results.iter().all(|r| r["iops"].as_f64().unwrap() >= 0.0));
    let runs = std::fs::read_dir(dir.join("out/runs/iops"))
        .unwrap()
        .count();
    assert_eq!(runs, 56 * n + 1, "56 runs a round and the preconditioning");
    let one: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/runs/iops/r01-rw65-bs8k.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(one["jobs"][0]["job options"]["rwmixread"], "65");
    assert!(
        one["jobs"][0]["read"]["lat_ns"]["bins"].is_object(),
        "JSON+"
    );
    // The preconditioning wrote twice the capacity, 128 KiB at a time.
    let wipc: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/runs/iops/wipc.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(wipc["jobs"][0]["write"]["io_bytes"], 4 << 20);
    assert_eq!(wipc["jobs"][0]["job options"]["bs"], "131072");
    // The tracking value is the round's 4 KiB random write IOPS.
    let r1: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/runs/iops/r01-rw0-bs4k.json")).unwrap(),
    )
    .unwrap();
    let iops = r1["jobs"][0]["write"]["iops"].as_f64().unwrap();
    assert!((sec["rounds"][0]["tracking"].as_f64().unwrap() - iops).abs() < 1e-6);
    // PTS 2.0's further tracking variables: 64 KiB 65/35 and 1024 KiB read IOPS, each
    // recorded every round and judged over the same window.
    assert_eq!(
        sec["tracking"]["also"],
        serde_json::json!(["rw65-bs64k", "rw100-bs1m"])
    );
    let r1: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/runs/iops/r01-rw100-bs1m.json")).unwrap(),
    )
    .unwrap();
    let iops = r1["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!((sec["rounds"][0]["also"]["rw100-bs1m"].as_f64().unwrap() - iops).abs() < 1e-6);
    let d = &sec["determination"];
    let also = d["also"].as_array().unwrap();
    assert_eq!(also.len(), 2);
    for a in also {
        let w = a["workload"].as_str().unwrap();
        let window: Vec<f64> = (n - 5..n)
            .map(|i| sec["rounds"][i]["also"][w].as_f64().unwrap())
            .collect();
        assert_eq!(a["values"], serde_json::json!(window), "{w}");
        let avg = window.iter().sum::<f64>() / 5.0;
        let range = window.iter().copied().fold(f64::MIN, f64::max)
            - window.iter().copied().fold(f64::MAX, f64::min);
        assert_eq!(a["range_ok"].as_bool().unwrap(), range <= 0.2 * avg, "{a}");
    }
    let all = d["steady"] == true && also.iter().all(|a| a["steady"] == true);
    assert_eq!(d["all_steady"], all);
    assert_eq!(
        d["verdict"]
            .as_str()
            .unwrap()
            .starts_with("steady state achieved"),
        all
    );
    for needle in [
        "IOPS over the measurement window",
        "100/0",
        "5/95",
        "1024 KiB",
        "0.5 KiB",
        "least-squares line: y = ",
        "also tracked: rw65-bs64k",
        "also tracked: rw100-bs1m",
    ] {
        assert!(report.contains(needle), "{needle}: {report}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("out/report.txt")).unwrap(),
        report
    );
    // The report page of the directory, as the specification lays it out.
    let html = page(&dir);
    for needle in [
        "<section class=\"pts\" data-test=\"iops\"",
        "<th class=\"l\">purge method</th><td>file removed and re-created</td>",
        "<th class=\"l\">threads and queue depth</th><td>threads: 1  queue depth: 2 (",
        "<th class=\"l\">active range</th><td>100 %",
        "Not conforming to the specification",
        "--round-time 10 ms",
        "Steady-state convergence: tracking variables per round",
        "average + 10 %",
        "average − 10 %",
        "least-squares line (x = round): y = ",
        "steady-state determination",
        "range (max − min)",
        "slope excursion",
        "IOPS matrix: block size × read/write mix",
        "also tracked",
    ] {
        assert!(html.contains(needle), "{needle}");
    }
    // The platform the run was made on, recorded in the summary.
    assert!(
        s["platform"]["kernel"]["release"].is_string(),
        "{}",
        s["platform"]
    );
    assert!(!html.contains("not recorded"));
    // The charts and their kinds: convergence and window (lines), the matrix (heat map),
    // IOPS against block size (lines); one convergence point per round, 56 matrix cells.
    let kinds: Vec<&str> = html
        .split("<figure class=\"chart\" id=\"")
        .skip(1)
        .map(|f| &f[..f.find('>').unwrap()])
        .collect();
    assert_eq!(
        kinds,
        [
            "pts0-0-convergence\" data-kind=\"xy\"",
            "pts0-0-window\" data-kind=\"xy\"",
            "pts0-0-matrix\" data-kind=\"heatmap\"",
            "pts0-0-iops-bs\" data-kind=\"xy\""
        ]
    );
    let figure = |id: &str| {
        let at = html.find(&format!("id=\"{id}\"")).unwrap();
        &html[at..at + html[at..].find("</figure>").unwrap()]
    };
    // A line per tracking variable: 4 KiB write and PTS 2.0's two more.
    assert_eq!(
        figure("pts0-0-convergence").matches("class=\"pt\"").count(),
        3 * n
    );
    assert_eq!(figure("pts0-0-matrix").matches("class=\"pt\"").count(), 56);
    // 5 window rounds, 2 ends each of the average, the band and the line.
    assert_eq!(
        figure("pts0-0-window").matches("class=\"pt\"").count(),
        5 + 4 * 2
    );
    // A real browser builds the page: every chart, every matrix cell.
    if let Some(dom) = crate::present_report::browse(&dir.join("pts.html"), None) {
        assert_eq!(dom.matches("<figure class=\"chart\"").count(), 4);
        let at = dom
            .find("id=\"pts0-0-matrix\"")
            .expect("the matrix in the DOM");
        let matrix = &dom[at..at + dom[at..].find("</figure>").unwrap()];
        assert_eq!(matrix.matches("class=\"pt\"").count(), 56);
    }
    // summary.json keeps its published schema, and so do the committed example's.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/pts");
    let mut files = vec![dir.join("out/summary.json")];
    for t in ["iops", "throughput", "latency", "wsat", "hir", "dirth"] {
        files.push(example.join(t).join("summary.json"));
    }
    schema_valid(&files);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `iobench report` of the run's output directory `dir/out`: the HTML.
fn page(dir: &Path) -> String {
    let mut c = iobench();
    c.arg("report")
        .arg(dir.join("out"))
        .arg("-o")
        .arg(dir.join("pts.html"));
    run_ok(c);
    std::fs::read_to_string(dir.join("pts.html")).unwrap()
}

/// Each file validates against docs/schema/pts-summary.schema.json.
fn schema_valid(files: &[std::path::PathBuf]) {
    let (code, err) = crate::output_contract::validate(&[("pts-summary", files.to_vec())]);
    if crate::output_contract::have_validator(&err) {
        assert_eq!(code, 0, "{err}");
    }
}

#[test]
fn throughput_and_write_saturation_end_to_end() {
    let dir = scratch("pts_tp");
    run_ok(pts(
        &dir,
        &[
            "throughput",
            "--capacity=4m",
            "--round-time=20ms",
            "--max-rounds=5",
        ],
    ));
    let s = summary(&dir);
    let names: Vec<&str> = s["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tp-1m", "tp-128k"]);
    for sec in s["sections"].as_array().unwrap() {
        rounds_as_determined(sec, 5);
        assert_eq!(sec["results"].as_array().unwrap().len(), 2);
        assert!(sec["results"][1]["mb_s"].as_f64().unwrap() > 0.0, "{sec}");
    }
    let tp_html = page(&dir);
    assert_eq!(
        tp_html.matches("data-kind=\"xy\"").count(),
        4,
        "two sections' plots"
    );
    assert!(tp_html.contains("<th>MB/s</th>"));
    let tp_summary = dir.join("out/summary.json");
    let dir = scratch("pts_wsat");
    let out = run_ok(pts(
        &dir,
        &["wsat", "--capacity=2m", "--round-time=50ms", "--qd=8"],
    ));
    let s = summary(&dir);
    let series = s["sections"][0]["series"].as_array().unwrap();
    let last = series.last().unwrap();
    // It stops at the first round that takes the data written to 4× the capacity.
    assert!(
        last["written_bytes"].as_u64().unwrap() >= 4 * (2 << 20),
        "{last}"
    );
    if series.len() > 1 {
        let before = &series[series.len() - 2];
        assert!(before["written_bytes"].as_u64().unwrap() < 4 * (2 << 20));
    }
    assert!(s["sections"][0]["determination"].is_null());
    assert!(String::from_utf8_lossy(&out.stdout).contains("× capacity"));
    let html = page(&dir);
    assert!(html.contains("Write saturation: IOPS against time"));
    assert!(html.contains("Write saturation: IOPS against data written"));
    schema_valid(&[tp_summary, dir.join("out/summary.json")]);
    // --no-purge: the target keeps its data, and the report says so (a file with data
    // is taken with --force only: the preconditioning overwrites it).
    let kept = scratch("pts_nopurge");
    std::fs::write(kept.join("target"), vec![0xa5u8; 2 << 20]).unwrap();
    let no_force = run(pts(
        &kept,
        &["wsat", "--round-time=20ms", "--wsat-time=1s", "--no-purge"],
    ));
    assert!(String::from_utf8_lossy(&no_force.stderr).contains("give --force"));
    let out = run_ok(pts(
        &kept,
        &[
            "wsat",
            "--round-time=20ms",
            "--wsat-time=1s",
            "--no-purge",
            "--force",
        ],
    ));
    let s = summary(&kept);
    assert!(s["sections"][0]["purge"]
        .as_str()
        .unwrap()
        .starts_with("not purged"));
    assert!(s["not_conforming_because"]
        .to_string()
        .contains("--no-purge"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not purged (--no-purge)"));
    let _ = std::fs::remove_dir_all(&kept);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap().join("pts_tp"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts a run and stops it with `signal` once its state file records `rounds` rounds.
fn stop_at(
    cmd: &mut Command,
    state: &Path,
    rounds: usize,
    signal: i32,
) -> std::process::ExitStatus {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let done = std::fs::read_to_string(state)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map_or(0, |v| {
                v["sections"][0]["rounds"].as_array().map_or(0, |a| a.len())
            });
        if done >= rounds {
            break;
        }
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the run ended ({st}) before round {rounds}");
        }
        assert!(Instant::now() < deadline, "no round {rounds} in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(child.id() as i32, signal) };
    child.wait().unwrap()
}

#[test]
fn a_stopped_and_a_killed_run_resume_to_an_uninterrupted_run_s_report() {
    let args = [
        "latency",
        "--capacity=4m",
        "--round-time=10ms",
        "--max-rounds=5",
    ];
    let whole = scratch("pts_lat_whole");
    run_ok(pts(&whole, &args));
    let dir = scratch("pts_lat_resumed");
    let state = dir.join("out/state.json");
    // Ctrl-C after the first round: the run stops as a plain run does, state saved.
    let st = stop_at(&mut pts(&dir, &args), &state, 1, libc::SIGINT);
    assert_eq!(st.code(), Some(130));
    let first = std::fs::read(dir.join("out/runs/latency/r01-rw0-bs4k.json")).unwrap();
    let wipc = std::fs::read(dir.join("out/runs/latency/wipc.json")).unwrap();
    // Killed outright (a crash) later on: the state file is whole, no round half-kept.
    let st = stop_at(&mut pts(&dir, &args), &state, 3, libc::SIGKILL);
    assert_eq!(st.code(), None);
    let out = run_ok(pts(&dir, &args));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("resuming the run"), "{err}");
    assert!(
        !err.contains("purge:") && !err.contains("preconditioning:"),
        "redone: {err}"
    );
    assert!(
        !err.contains("round 1:") && !err.contains("round 2:"),
        "redone: {err}"
    );
    // What ran before the stop is kept, not run again.
    assert_eq!(
        std::fs::read(dir.join("out/runs/latency/r01-rw0-bs4k.json")).unwrap(),
        first
    );
    assert_eq!(
        std::fs::read(dir.join("out/runs/latency/wipc.json")).unwrap(),
        wipc
    );
    let (a, b) = (summary(&whole), summary(&dir));
    assert_eq!(b["resumed"], 2);
    let strip = |v: &Value| {
        let mut v = shape(v);
        // The round count and the verdict are compared below, from the numbers.
        for sec in v["sections"].as_array_mut().unwrap() {
            sec["rounds"] = Value::Null;
            sec["determination"]["values"] = Value::Null;
            // Measured too: whether two runs' windows pass is up to the machine's load
            // (rounds_as_determined checks each against its own numbers).
            for k in ["range_ok", "excursion_ok", "steady"] {
                sec["determination"][k] = Value::Null;
            }
        }
        v
    };
    assert_eq!(strip(&a), strip(&b), "the summaries differ in structure");
    let na = rounds_as_determined(&a["sections"][0], 5);
    let nb = rounds_as_determined(&b["sections"][0], 5);
    eprintln!("rounds: uninterrupted {na}, resumed {nb}");
    let runs = std::fs::read_dir(dir.join("out/runs/latency"))
        .unwrap()
        .count();
    assert_eq!(runs, 9 * nb + 1, "no run lost or doubled by the stops");
    for d in [&whole, &dir] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_loop_device_is_purged_by_discard() {
    let Some(lo) = common::loopdev::Loop::new("pts_loop", "8M") else {
        return;
    };
    let dir = scratch("pts_loop_out");
    let out = run_ok({
        let mut c = iobench();
        c.args([
            "pts",
            "wsat",
            "--capacity=4m",
            "--round-time=50ms",
            "--qd=8",
            "-o",
        ])
        .arg(dir.join("out"))
        .arg(&lo.dev);
        c
    });
    let s = summary(&dir);
    assert_eq!(s["target"]["kind"], "block_device");
    assert_eq!(s["target"]["size"], 8 << 20);
    let purge = s["sections"][0]["purge"].as_str().unwrap();
    assert!(
        purge.starts_with("BLKSECDISCARD") || purge.starts_with("BLKDISCARD"),
        "{purge}"
    );
    let why = s["not_conforming_because"].to_string();
    assert!(
        why.contains("--capacity 4194304 of the target's 8388608"),
        "{why}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("purge: BLK"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_refused_before_any_io() {
    let dir = scratch("pts_bad");
    for (args, needle) in [
        (&["pts", "iops", "f"][..], "-o DIR"),
        (&["pts", "bogus", "-o", "d", "f"], "unknown test 'bogus'"),
        (&["pts", "iops", "-o", "d"], "TEST and TARGET"),
        (
            &["pts", "iops", "-o", "d", "--round-time=1ms", "f"],
            "--round-time",
        ),
        (
            &["pts", "iops", "-o", "d", "--capacity=1m", "f"],
            "at least 2MiB",
        ),
        (
            &["pts", "hir", "-o", "d", "--hir-burst=1ms", "f"],
            "bad value '1ms' for --hir-burst: expected a time of at least 10ms",
        ),
        (
            &["pts", "hir", "-o", "d", "--hir-bursts=0", "f"],
            "--hir-bursts",
        ),
        (
            &["pts", "iops", "-o", "d", "--profile=home", "f"],
            "enterprise or client",
        ),
        (&["pts", "iops", "-o", "d", "missing"], "give --capacity"),
        (
            &["pts", "iops", "-o", "d", "/dev/null"],
            "not a regular file or a block device",
        ),
    ] {
        let mut c = iobench();
        c.current_dir(&dir).args(args);
        let out = run(c);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.starts_with("iobench pts: "), "{err}");
    }
    // Nothing was written where it was refused.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // Another test's directory is not taken over.
    let other = scratch("pts_other");
    run_ok(pts(&other, &["wsat", "--capacity=2m", "--round-time=20ms"]));
    let out = run(pts(&other, &["wsat", "--capacity=2m", "--round-time=30ms"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other settings"));
    for d in [&dir, &other] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The figure `id` of a report page: its SVG up to `</figure>`.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no figure {id}"));
    &html[at..at + html[at..].find("</figure>").unwrap()]
}

#[test]
fn host_idle_recovery_alternates_idle_and_baseline_and_resumes() {
    let dir = scratch("pts_hir");
    let args = [
        "hir",
        "--capacity=4m",
        "--round-time=20ms",
        "--max-rounds=5",
        "--qd=4",
        "--hir-burst=50ms",
        "--hir-bursts=3",
    ];
    // Ctrl-C once the bursts have begun: the bursts run so far are kept.
    let state = dir.join("out/state.json");
    let mut child = pts(&dir, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let bursts = |state: &Path| {
        std::fs::read_to_string(state)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map_or(0, |v| {
                v["sections"][0]["bursts"].as_array().map_or(0, |a| a.len())
            })
    };
    while bursts(&state) < 4 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before its bursts"
        );
        assert!(Instant::now() < deadline, "no bursts in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let first = std::fs::read(dir.join("out/runs/hir/ws1-b001.json")).unwrap();
    let out = run_ok(pts(&dir, &args));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resuming the run") && !err.contains("round 1:"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.join("out/runs/hir/ws1-b001.json")).unwrap(),
        first
    );
    let s = summary(&dir);
    let sec = &s["sections"][0];
    assert!(sec["preconditioning"].is_null(), "no sequential fill");
    rounds_as_determined(sec, 5);
    let hir = &sec["hir"];
    assert_eq!(hir["done"], true);
    let segs = hir["segments"].as_array().unwrap();
    let names: Vec<&str> = segs.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "ws1",
            "ws1-baseline",
            "ws2",
            "ws2-baseline",
            "ws3",
            "ws3-baseline",
            "ws5",
            "ws5-baseline",
            "ws10",
            "ws10-baseline"
        ]
    );
    // Idle of 1, 2, 3, 5, 10 bursts after each burst of a wait state, none at baseline.
    let waits: Vec<f64> = segs.iter().map(|x| x["wait_s"].as_f64().unwrap()).collect();
    assert_eq!(waits, [0.05, 0.0, 0.1, 0.0, 0.15, 0.0, 0.25, 0.0, 0.5, 0.0]);
    let steady = hir["steady_state_iops"].as_f64().unwrap();
    assert_eq!(steady, sec["determination"]["average"].as_f64().unwrap());
    let mut times = vec![];
    for seg in segs {
        let b = seg["bursts"].as_array().unwrap();
        assert_eq!(b.len(), 3, "{seg}");
        let mean = b.iter().map(|x| x["iops"].as_f64().unwrap()).sum::<f64>() / 3.0;
        assert!((seg["mean_iops"].as_f64().unwrap() - mean).abs() < 1e-6);
        assert!((seg["vs_steady_state"].as_f64().unwrap() - mean / steady).abs() < 1e-9);
        assert!(b.iter().all(|x| x["written_bytes"].as_u64().unwrap() > 0));
        times.extend(b.iter().map(|x| x["time_s"].as_f64().unwrap()));
    }
    // A burst starts a burst and its segment's idle after the one before it (ws2: 0.15 s).
    assert!((times[7] - times[6] - 0.15).abs() < 1e-9, "{times:?}");
    assert!((times[4] - times[3] - 0.05).abs() < 1e-9, "{times:?}");
    // The idle really was taken: each run's JSON is stamped when it ends, and in a wait
    // state a burst ends at least its idle and its own 50 ms after the one before.
    let ended = |name: &str| {
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("out/runs/hir/{name}.json"))).unwrap(),
        )
        .unwrap();
        v["timestamp_ms"].as_u64().unwrap()
    };
    for (seg, idle_ms) in [("ws2", 100), ("ws5", 250), ("ws10", 500)] {
        for b in 2..=3 {
            let gap = ended(&format!("{seg}-b{b:03}")) - ended(&format!("{seg}-b{:03}", b - 1));
            assert!(
                gap >= idle_ms + 50,
                "{seg} burst {b}: {gap} ms after the last"
            );
        }
    }
    // Every burst is a plain run of 50 ms of 4 KiB random writes.
    let b: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/runs/hir/ws10-b003.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(b["jobs"][0]["job options"]["runtime"], "50ms");
    assert_eq!(b["jobs"][0]["job options"]["rw"], "randwrite");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("--hir-burst 50 ms") && report.contains("ws10-baseline"));
    let html = page(&dir);
    assert_eq!(
        figure(&html, "pts0-0-hir-time")
            .matches("class=\"pt\"")
            .count(),
        30
    );
    // The level the bursts are read against says whether the rounds settled.
    let unsettled = figure(&html, "pts0-0-hir-time").contains("(steady state not achieved)");
    assert_eq!(unsettled, sec["determination"]["steady"] == false);
    let bars = figure(&html, "pts0-0-hir-segments");
    assert!(bars.contains("data-kind=\"bars\""), "segments as bars");
    assert!(bars.contains("ws10-baseline"));
    assert_eq!(
        bars.matches("class=\"pt\"").count(),
        10,
        "a bar per segment"
    );
    schema_valid(&[dir.join("out/summary.json")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `iobench pts ARGS` on an 8 MiB loop device (root only: `None` without one), 4 MiB of
/// it tested: the run's summary.
fn on_loop(tag: &str, args: &[&str]) -> Option<Value> {
    let lo = common::loopdev::Loop::new(tag, "8M")?;
    let dir = scratch(&format!("{tag}_out"));
    let mut c = iobench();
    c.arg("pts")
        .args(args)
        .args(["--capacity=4m", "-o"])
        .arg(dir.join("out"))
        .arg(&lo.dev);
    run_ok(c);
    let s = summary(&dir);
    assert_eq!(s["target"]["kind"], "block_device");
    assert!(s["sections"][0]["purge"]
        .as_str()
        .unwrap()
        .starts_with("BLK"));
    let _ = std::fs::remove_dir_all(&dir);
    Some(s)
}

#[test]
fn host_idle_recovery_on_a_loop_device() {
    let args = [
        "hir",
        "--round-time=20ms",
        "--max-rounds=5",
        "--hir-burst=20ms",
        "--hir-bursts=2",
    ];
    let Some(s) = on_loop("pts_hir_loop", &args) else {
        return;
    };
    let segs = s["sections"][0]["hir"]["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 10);
    assert!(segs
        .iter()
        .all(|x| x["bursts"].as_array().unwrap().len() == 2
            && x["mean_iops"].as_f64().unwrap() > 0.0));
}

/// I/Os of one run's JSON+ file, read and write together, over its jobs.
fn run_ios(path: &Path) -> u64 {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|j| ["read", "write"].map(|d| j[d]["total_ios"].as_u64().unwrap_or(0)))
        .sum()
}

#[test]
fn demand_intensity_measures_every_thread_count_and_depth() {
    let dir = scratch("pts_dirth");
    let out = run_ok(pts(
        &dir,
        &[
            "dirth",
            "--capacity=4m",
            "--round-time=20ms",
            "--max-rounds=5",
            "--threads=2",
            "--qd=4",
        ],
    ));
    let s = summary(&dir);
    let sec = &s["sections"][0];
    assert_eq!(sec["preconditioning"]["bytes"], 8 << 20);
    // The most demanding point is the tracking variable.
    assert_eq!(sec["tracking"]["workload"], "rw65-bs8k-t2-qd4");
    let n = rounds_as_determined(sec, 5);
    let d = &sec["dirth"];
    let points = d["points"].as_array().unwrap();
    let tq: Vec<(u64, u64, u64)> = points
        .iter()
        .map(|p| {
            let (t, q) = (p["threads"].as_u64().unwrap(), p["qd"].as_u64().unwrap());
            assert_eq!(p["oio"].as_u64().unwrap(), t * q);
            (t, q, p["oio"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        tq,
        [
            (2, 4, 8),
            (2, 2, 4),
            (2, 1, 2),
            (1, 4, 4),
            (1, 2, 2),
            (1, 1, 1)
        ]
    );
    let iops = |p: &Value| p["iops"].as_f64().unwrap();
    let best = points.iter().map(iops).fold(0.0, f64::max);
    assert_eq!(iops(&d["max_iops"]), best);
    assert_eq!(
        (
            d["min_iops"]["threads"].as_u64(),
            d["min_iops"]["qd"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let middle = (best + iops(&d["min_iops"])) / 2.0;
    let mid = &d["mid_iops"];
    assert_ne!(mid["workload"], d["max_iops"]["workload"]);
    assert_ne!(mid["workload"], d["min_iops"]["workload"]);
    for p in points {
        if p["workload"] != d["max_iops"]["workload"] && p["workload"] != d["min_iops"]["workload"]
        {
            assert!((iops(mid) - middle).abs() <= (iops(p) - middle).abs() + 1e-9);
        }
    }
    // Each histogram holds every I/O of its point's window rounds.
    let hists = d["histograms"].as_array().unwrap();
    assert_eq!(hists.len(), 3);
    for h in hists {
        let name = h["workload"].as_str().unwrap();
        let ios: u64 = (n - 4..=n)
            .map(|r| run_ios(&dir.join(format!("out/runs/dirth/r{r:02}-{name}.json"))))
            .sum();
        let buckets = h["buckets"].as_array().unwrap();
        let counted: u64 = buckets.iter().map(|b| b["ios"].as_u64().unwrap()).sum();
        assert_eq!((h["ios"].as_u64().unwrap(), counted), (ios, ios), "{name}");
        let edges: Vec<f64> = buckets
            .iter()
            .map(|b| b["upper_ms"].as_f64().unwrap())
            .collect();
        assert!(edges.windows(2).all(|w| w[1] > w[0]), "{edges:?}");
    }
    // Every point is a plain run at its thread count and depth.
    let one: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/runs/dirth/r01-rw65-bs8k-t2-qd1.json")).unwrap(),
    )
    .unwrap();
    let o = &one["jobs"][0]["job options"];
    assert_eq!(
        (&o["numjobs"], &o["iodepth"], &o["rwmixread"], &o["bs"]),
        (&"2".into(), &"1".into(), &"65".into(), &"8192".into())
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("demand intensity over the measurement window"),
        "{report}"
    );
    assert!(report.contains("min_iops: T1 QD1"), "{report}");
    let html = page(&dir);
    for (id, pts) in [
        ("pts0-0-dirth-intensity", 6),
        ("pts0-0-dirth-oio", 6),
        ("pts0-0-dirth-rt", 18),
    ] {
        assert_eq!(
            figure(&html, id).matches("class=\"pt\"").count(),
            pts,
            "{id}"
        );
    }
    for h in hists {
        let f = figure(
            &html,
            &format!("pts0-0-dirth-hist-{}", h["point"].as_str().unwrap()),
        );
        assert!(f.contains("data-kind=\"bars\""));
        assert_eq!(
            f.matches("class=\"pt\"").count(),
            h["buckets"].as_array().unwrap().len()
        );
    }
    schema_valid(&[dir.join("out/summary.json")]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demand_intensity_on_a_loop_device() {
    let args = [
        "dirth",
        "--round-time=20ms",
        "--max-rounds=5",
        "--threads=2",
        "--qd=2",
    ];
    let Some(s) = on_loop("pts_dirth_loop", &args) else {
        return;
    };
    let d = &s["sections"][0]["dirth"];
    assert_eq!(d["points"].as_array().unwrap().len(), 4);
    assert!(d["histograms"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["ios"].as_u64().unwrap() > 0));
}
