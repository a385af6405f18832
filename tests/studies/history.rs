//! The results history: `--save` from a plain run and from each study, `iobench history`'s
//! actions end to end, a process killed by SIGKILL in the middle of its save (the database
//! stays whole, the earlier runs are there), and two processes saving at once.

use crate::common;
use common::{fio, iobench, run, run_ok, scratch};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

fn null_job(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--name=h",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn history(db: &Path, args: &[&str]) -> std::process::Output {
    let mut c = iobench();
    c.arg("history")
        .args(args)
        .arg(format!("--history={}", db.display()));
    run(c)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn save_run(db: &Path, extra: &[&str]) -> i64 {
    let mut c = iobench();
    c.args([
        "--save",
        &format!("--history={}", db.display()),
        "--output-format=json",
    ])
    .args(null_job(extra));
    let o = run_ok(c);
    let err = String::from_utf8_lossy(&o.stderr);
    let id = err
        .lines()
        .find_map(|l| l.strip_prefix("iobench: history: saved as run "))
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no saved id: {err}"));
    // The report on stdout is the plain run's: fio's JSON, without iobench_env.
    let doc: Value = serde_json::from_slice(&o.stdout).expect("json on stdout");
    assert!(doc.get("iobench_env").is_none());
    id
}

fn count(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn saved_runs_studies_and_every_action() {
    let dir = scratch("history_actions");
    // Without --save nothing is written; with it, the default is under XDG_DATA_HOME.
    let xdg = dir.join("xdg");
    let mut plain = iobench();
    plain
        .env("XDG_DATA_HOME", &xdg)
        .args(null_job(&["--output-format=json"]));
    run_ok(plain);
    assert!(!xdg.exists(), "a plain run wrote a history");
    let mut saved = iobench();
    saved
        .env("XDG_DATA_HOME", &xdg)
        .arg("--save")
        .args(null_job(&["--output-format=json"]));
    run_ok(saved);
    assert_eq!(count(&xdg.join("iobench/history.sqlite")), 1);

    let db = dir.join("h.sqlite");
    let fast = save_run(&db, &[]);
    let again = save_run(&db, &[]);
    let slow = save_run(&db, &["--rate_iops=2000", "--size=1m"]);
    // A sweep is one study with its points, labelled.
    let mut sweep = iobench();
    sweep
        .args(["sweep", "--axis", "bs=8k,16k", "-o"])
        .arg(dir.join("sweep"))
        .args(["--save", &format!("--history={}", db.display())])
        .args(null_job(&[]));
    run_ok(sweep);
    let mut cmp = iobench();
    cmp.args([
        "compare",
        "--repeat=2",
        "--save",
        &format!("--history={}", db.display()),
    ])
    .arg("--")
    .args(null_job(&["--size=8m"]))
    .arg("--")
    .args(null_job(&["--size=16m"]));
    run_ok(cmp);
    let all = jsonl(&stdout(&history(&db, &["export"])));
    assert_eq!(all.len(), 3 + 2 + 4);
    let sweep_rows: Vec<&Value> = all.iter().filter(|r| r["kind"] == "sweep").collect();
    assert_eq!(sweep_rows.len(), 2);
    assert_eq!(sweep_rows[0]["study_id"], sweep_rows[1]["study_id"]);
    assert_eq!(sweep_rows[0]["point"], "bs=8k");
    let cmp_rows: Vec<&Value> = all.iter().filter(|r| r["kind"] == "compare").collect();
    assert_eq!(cmp_rows.len(), 4);
    assert_ne!(cmp_rows[0]["study_id"], sweep_rows[0]["study_id"]);
    // The sides are labelled by the option that differs between them.
    assert_eq!(cmp_rows[1]["point"], "size=16m run 1");
    // Each stored result is the run's JSON+ (bins) with its iobench_env.
    let first = &all[0];
    assert!(first["result"]["jobs"][0]["read"]["clat_ns"]["bins"].is_object());
    assert_eq!(
        first["result"]["iobench_env"]["options_sha256"],
        first["job_hash"]
    );

    // tag, list --tag, show.
    assert!(history(&db, &["tag", &again.to_string(), "nightly"])
        .status
        .success());
    let tagged = stdout(&history(&db, &["list", "--tag=nightly"]));
    assert_eq!(tagged.lines().count(), 2, "{tagged}");
    assert!(tagged
        .lines()
        .nth(1)
        .unwrap()
        .trim_start()
        .starts_with(&again.to_string()));
    let hash = first["job_hash"].as_str().unwrap();
    let by_hash = stdout(&history(
        &db,
        &["list", &format!("--job-hash={}", &hash[..10])],
    ));
    assert_eq!(by_hash.lines().count(), 3, "{by_hash}");
    let shown = stdout(&history(&db, &["show", &fast.to_string()]));
    assert!(shown.contains(hash), "{shown}");
    let doc: Value = serde_json::from_str(&stdout(&history(
        &db,
        &["show", &fast.to_string(), "--format=json"],
    )))
    .unwrap();
    assert!(doc["iobench_env"]["kernel"]["release"].is_string());

    // The regression gate against a side of another job is refused (exit 1): the output
    // says the two differ in their options, and the error why the gate cannot judge.
    assert!(history(&db, &["baseline", "set", &fast.to_string()])
        .status
        .success());
    assert!(stdout(&history(&db, &["baseline", "show"])).contains(&format!("run {fast} ")));
    let gate = history(
        &db,
        &[
            "compare",
            "--baseline",
            &slow.to_string(),
            "--fail-if-slower=5%",
        ],
    );
    let err = String::from_utf8_lossy(&gate.stderr);
    assert_eq!(gate.status.code(), Some(1), "{}", stdout(&gate));
    assert!(err.contains("ran different jobs"), "{err}");
    let text = stdout(&gate);
    assert!(text.contains("differ in options hash"), "{text}");
    // The same job, one run a side: compare's rule, no gate without noise to judge by.
    let one = history(&db, &["compare", "--baseline", "--fail-if-slower=5%"]);
    assert_eq!(one.status.code(), Some(1), "{}", stdout(&one));
    let err = String::from_utf8_lossy(&one.stderr);
    assert!(err.contains("needs 2 or more runs a side"), "{err}");
    // Without an ID the baseline meets the latest run like it: the same options.
    let like = history(&db, &["compare", "--baseline"]);
    assert!(
        stdout(&like).contains(&format!(
            "baseline default (run {fast}) and run {again}: same options hash"
        )),
        "{}",
        stdout(&like)
    );
    let two = history(
        &db,
        &[
            "compare",
            &fast.to_string(),
            &slow.to_string(),
            "--metric=iops",
        ],
    );
    assert_eq!(
        two.status.code(),
        Some(0),
        "no gate asked: {}",
        stdout(&two)
    );

    // trend: one job hash on one target, as JSON.
    let t: Value = serde_json::from_str(&stdout(&history(
        &db,
        &["trend", &format!("--job-hash={hash}"), "--format=json"],
    )))
    .unwrap();
    assert_eq!(t["points"].as_array().unwrap().len(), 2);
    assert!(t["points"][0]["values"]["read"].as_f64().unwrap() > 0.0);

    // CSV: a header and one row per run and direction.
    let csv = stdout(&history(&db, &["export", "--format=csv"]));
    assert!(csv.starts_with("schema_version,id,"));
    assert_eq!(csv.lines().count(), 1 + 9);

    // import: fio's own JSON joins the history.
    let fio_json = dir.join("fio.json");
    if let Some(mut f) = fio() {
        f.args(null_job(&["--output-format=json"]))
            .arg(format!("--output={}", fio_json.display()));
        run_ok(f);
        let imp = history(&db, &["import", fio_json.to_str().unwrap()]);
        assert!(
            imp.status.success(),
            "{}",
            String::from_utf8_lossy(&imp.stderr)
        );
        let rows = jsonl(&stdout(&history(&db, &["export"])));
        let last = rows.last().unwrap();
        assert_eq!(last["kind"], "import");
        assert_eq!(last["result"]["fio version"], "fio-3.33");
    }
    let bad = history(&db, &["import", db.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));

    // gc keeps the newest run of each job and target, and the baseline's.
    let before = count(&db);
    assert!(history(&db, &["gc", "--keep-last=1"]).status.success());
    let left = jsonl(&stdout(&history(&db, &["export"])));
    assert!(left.len() < before as usize);
    assert!(
        left.iter().any(|r| r["id"] == fast),
        "the baseline's run stays"
    );
    // Bad input names the flag and the form.
    let e = history(&db, &["list", "--since=yesterday-ish"]);
    assert_eq!(e.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&e.stderr).contains("--since"));
}

/// Opens the database as a reader and asks SQLite whether it is whole.
fn integrity(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

fn paused_save(db: &Path, pause_ms: u64) -> std::process::Child {
    iobench()
        .env("IOBENCH_TEST_SAVE_PAUSE_MS", pause_ms.to_string())
        .args([
            "--save",
            &format!("--history={}", db.display()),
            "--output-format=json",
        ])
        .args(null_job(&[]))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads the child's stderr until its save is under way (inside the transaction).
fn wait_saving(child: &mut std::process::Child) {
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines();
    loop {
        match lines.next() {
            Some(Ok(l)) if l.contains("history: saving") => break,
            Some(_) => {}
            None => panic!("the run ended before saving"),
        }
    }
    // Keep reading so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
}

#[test]
fn a_run_killed_mid_save_leaves_the_history_whole() {
    let dir = scratch("history_kill");
    let db = dir.join("h.sqlite");
    save_run(&db, &[]);
    save_run(&db, &[]);
    let mut child = paused_save(&db, 20_000);
    wait_saving(&mut child);
    // SAFETY: a plain kill(2) of our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    let status = child.wait().unwrap();
    assert!(status.code().is_none(), "killed by a signal");
    assert_eq!(integrity(&db), "ok");
    assert_eq!(
        count(&db),
        2,
        "the earlier runs are there, the killed one is not"
    );
    // The history goes on: the next save works and list reads every run.
    save_run(&db, &[]);
    let listed = stdout(&history(&db, &["list"]));
    assert_eq!(listed.lines().count(), 1 + 3, "{listed}");
}

#[test]
fn two_runs_save_at_once() {
    let dir = scratch("history_concurrent");
    let db = dir.join("h.sqlite");
    // The first holds the write lock for 1.5 s; the second waits for it (busy_timeout).
    let mut a = paused_save(&db, 1500);
    wait_saving(&mut a);
    let mut b = paused_save(&db, 10);
    let sa = a.wait().unwrap();
    let sb = b.wait().unwrap();
    assert!(sa.success() && sb.success(), "{sa:?} {sb:?}");
    assert_eq!(count(&db), 2);
    assert_eq!(integrity(&db), "ok");
}

#[test]
fn a_quick_test_is_one_study_and_history_needs_save() {
    let dir = scratch("history_quick");
    let db = dir.join("h.sqlite");
    let target = dir.join("q");
    std::fs::create_dir_all(&target).unwrap();
    let mut q = iobench();
    q.args(["quick", "--preset", "demo", "--size", "2m", "--loops", "1"])
        .args([
            "--duration",
            "100ms",
            "--no-drop-caches",
            "--mode",
            "read",
            "--save",
        ])
        .arg(format!("--history={}", db.display()))
        .arg(&target);
    run_ok(q);
    let rows = jsonl(&stdout(&history(&db, &["export"])));
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r["kind"] == "quick" && r["study_id"] == rows[0]["study_id"]));
    // The layout run that makes the test file is not a point.
    assert!(rows
        .iter()
        .all(|r| r["result"]["jobs"][0]["jobname"] != "prepare"));
    // --history alone saves nothing: it is refused, naming the flag.
    let mut c = iobench();
    c.arg(format!("--history={}", dir.join("other.sqlite").display()))
        .args(null_job(&[]));
    let o = run(c);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--history"));
    assert!(!dir.join("other.sqlite").exists());
}

/// A baseline of several runs: picked by IDs, by --last N and by study; a mix of jobs is
/// refused naming the run and the field; a version-1 style single run still works; the
/// other side picked from a compare study; unset forgets the name only.
#[test]
fn baselines_hold_several_runs() {
    let dir = scratch("history_baselines");
    let db = dir.join("h.sqlite");
    let a: Vec<i64> = (0..3).map(|_| save_run(&db, &[])).collect();
    let other = save_run(&db, &["--bs=8k"]);
    let ok = |args: &[&str]| {
        let o = history(&db, args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdout(&o)
    };
    let range = format!("{}-{}", a[0], a[2]);
    assert!(ok(&["baseline", "set", &range, "--name=three"]).contains(&format!("runs {range}")));
    // The newest three runs mix two jobs: refused, naming the run and the field.
    let mixed = history(&db, &["baseline", "set", "--last=3", "--name=mixed"]);
    assert_eq!(mixed.status.code(), Some(1));
    let err = String::from_utf8_lossy(&mixed.stderr);
    assert!(
        err.contains(&format!(
            "run {other} differs from run {} in options hash",
            a[1]
        )),
        "{err}"
    );
    // --last with a filter: the newest two of the first job.
    let hash: Value = serde_json::from_str(&stdout(&history(
        &db,
        &["show", &a[0].to_string(), "--format=json"],
    )))
    .unwrap();
    let hash = hash["iobench_env"]["options_sha256"].as_str().unwrap()[..12].to_string();
    ok(&[
        "baseline",
        "set",
        "--last=2",
        &format!("--job-hash={hash}"),
        "--name=two",
    ]);
    let shown = ok(&["baseline", "show"]);
    assert!(shown.contains(&format!("three: runs {range} ")), "{shown}");
    assert!(
        shown.contains(&format!("two: runs {}-{} ", a[1], a[2])),
        "{shown}"
    );
    // Runs on both sides, and a flag that does not go with plain compare, are refused.
    let both = history(
        &db,
        &["compare", "--baseline", "--name=three", &a[1].to_string()],
    );
    assert!(String::from_utf8_lossy(&both.stderr).contains("on both sides"));
    // A compare study of the same job against another: the baseline meets the study's
    // side that ran its job (2 runs), judged with compare's tables.
    let mut cmp = iobench();
    cmp.args([
        "compare",
        "--repeat=2",
        "--warmup=1",
        "--save",
        &format!("--history={}", db.display()),
    ])
    .arg("--")
    .args(null_job(&[]))
    .arg("--")
    .args(null_job(&["--bs=8k"]));
    run_ok(cmp);
    let rows = jsonl(&stdout(&history(&db, &["export"])));
    let study_id = rows.last().unwrap()["study_id"].as_i64().unwrap();
    let study = study_id.to_string();
    let mixed = history(&db, &["baseline", "set", "--study", &study]);
    assert!(
        String::from_utf8_lossy(&mixed.stderr).contains("in options hash"),
        "a compare study of two jobs is no baseline"
    );
    let text = ok(&["compare", "--baseline", "--name=three", "--study", &study]);
    assert!(text.contains("same options hash"), "{text}");
    let side_a: Vec<i64> = rows
        .iter()
        .filter(|r| r["study_id"] == study_id)
        .filter(|r| r["job_hash"].as_str().unwrap().starts_with(&hash))
        .filter(|r| !r["point"].as_str().unwrap().contains("warmup"))
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        side_a.len(),
        2,
        "the warm-up run is not a point of the side"
    );
    assert!(
        text.contains(&format!("runs {}, {}", side_a[0], side_a[1]))
            || text.contains(&format!("runs {}-{}", side_a[0], side_a[1])),
        "{text}"
    );
    // unset: the name goes, the runs stay.
    ok(&["baseline", "unset", "--name=three"]);
    assert!(!ok(&["baseline", "show"]).contains("three"));
    assert_eq!(jsonl(&stdout(&history(&db, &["export"]))).len(), rows.len());
}

/// The guide's CI-style regression check (docs/guide/history.md), read from the guide and
/// run by bash as written, with only the history's path moved into a scratch directory.
/// The job reads an NBD export whose bandwidth nbdkit caps (16 Mbit/s: 512 IOPS of 4 KiB):
/// the gate passes (0) for new runs against the same export, and fails (2, with a
/// SLOWER: line) once the export is capped at half that, the storage really slower.
#[test]
fn the_guides_ci_regression_check_gates_both_ways() {
    use common::nbdkit::Nbdkit;
    let dir = scratch("history_ci");
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guide/history.md"
    ))
    .unwrap();
    let section = guide
        .split("### A CI-style regression check")
        .nth(1)
        .and_then(|s| s.split("\n#").next())
        .expect("the guide's CI section");
    // The indented block: its first part (once) and its second (each pipeline run).
    let mut parts: Vec<Vec<String>> = Vec::new();
    for l in section.lines().filter(|l| l.starts_with("    ")) {
        let l = l.trim();
        if l.starts_with('#') {
            parts.push(Vec::new());
        } else if let Some(p) = parts.last_mut() {
            p.push(l.replace("/var/lib/ci/io.sqlite", "io.sqlite"));
        }
    }
    assert_eq!(parts.len(), 2, "{section}");
    assert!(parts[1]
        .last()
        .unwrap()
        .contains("history compare --baseline --name ci --fail-if-slower 5%"));
    let rate = |r: &str| {
        Nbdkit::start(
            &dir,
            &[
                "--filter=rate",
                "memory",
                "64M",
                &format!("rate={r}"),
                "burstiness=0.02",
            ],
        )
    };
    let server = rate("16M");
    std::fs::write(
        dir.join("job.fio"),
        format!(
            "[ci]\nioengine=nbd\nuri=nbd+unix:///?socket={}\nrw=randread\nbs=4k\n\
             iodepth=8\nruntime=400ms\ntime_based\n",
            server.socket.display()
        ),
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_iobench")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let bash = |lines: &[String]| {
        std::process::Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", &lines.join("\n")])
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let said = |o: &std::process::Output| {
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let once = bash(&parts[0]);
    assert!(once.status.success(), "{}", said(&once));
    // The same export: not slower.
    let same = bash(&parts[1]);
    assert_eq!(same.status.code(), Some(0), "{}", said(&same));
    assert!(said(&same).contains("same options hash"), "{}", said(&same));
    assert!(!said(&same).contains("SLOWER"), "{}", said(&same));
    // The export at half the bandwidth: the same job, really slower.
    drop(server);
    let _slow = rate("8M");
    let slow = bash(&parts[1]);
    assert_eq!(slow.status.code(), Some(2), "{}", said(&slow));
    assert!(
        String::from_utf8_lossy(&slow.stdout).contains("SLOWER: ci read IOPS"),
        "{}",
        said(&slow)
    );
}

/// `history compare --rerun`: the two sides' jobs, rebuilt from the history, run again
/// in turn (A B A B) and judged on those runs; stored runs that were not alternated are
/// named as such, with the hint; a job whose target is not on this host is refused.
#[test]
fn compare_rerun_runs_both_jobs_again_alternated() {
    let dir = scratch("history_rerun");
    let db = dir.join("h.sqlite");
    // Paced jobs: 256 I/Os at 2000 and at 1000 IOPS, whatever the host's load.
    let fast = ["--size=1m", "--rate_iops=2000"];
    let slow = ["--size=1m", "--rate_iops=1000"];
    let a: Vec<i64> = (0..2).map(|_| save_run(&db, &fast)).collect();
    let b: Vec<i64> = (0..2).map(|_| save_run(&db, &slow)).collect();
    let (ra, rb) = (format!("{}-{}", a[0], a[1]), format!("{}-{}", b[0], b[1]));
    // history compare takes --margin as compare does.
    let stored = history(&db, &["compare", &ra, &rb, "--margin=10%"]);
    let text = stdout(&stored);
    assert!(
        stored.status.success(),
        "{}",
        String::from_utf8_lossy(&stored.stderr)
    );
    assert!(
        text.contains("not alternated") && text.contains("history compare --rerun"),
        "{text}"
    );
    let before = count(&db);
    let o = history(&db, &["compare", &ra, &rb, "--rerun"]);
    let (text, err) = (stdout(&o), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "{text}{err}");
    assert!(
        text.contains(&format!(
            "rerun: runs {ra} and runs {rb} run again, in turn, 2 times"
        )),
        "{text}"
    );
    assert!(!text.contains("not alternated"), "{text}");
    // The steps ran A B A B.
    let steps: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("compare: step "))
        .map(|l| if l.contains(&ra) { "A" } else { "B" })
        .collect();
    assert_eq!(steps, ["A", "B", "A", "B"], "{err}");
    // Judged on the new runs: about 2000 against 1000 IOPS, different.
    assert!(text.contains("different"), "{text}");
    assert!(
        text.contains(" 1.00k ")
            && ["1.98k", "1.99k", "2.00k", "2.01k", "2.02k"]
                .iter()
                .any(|v| text.contains(&format!(" {v} "))),
        "{text}"
    );
    assert_eq!(
        count(&db),
        before,
        "the reruns are not saved without --save"
    );
    // A job whose file's directory is gone cannot run again here.
    let gone = dir.join("gone");
    std::fs::create_dir(&gone).unwrap();
    let f = format!("--filename={}", gone.join("f").display());
    let c = save_run(&db, &[&f, "--ioengine=psync", "--size=64k"]);
    let d = save_run(&db, &[&f, "--ioengine=psync", "--size=64k", "--bs=8k"]);
    std::fs::remove_dir_all(&gone).unwrap();
    let o = history(&db, &["compare", &c.to_string(), &d.to_string(), "--rerun"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("is not here"), "{err}");
}
