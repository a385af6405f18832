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

    // The regression gate against one baseline run is refused (exit 1), and the output
    // says the two differ in their options.
    assert!(history(&db, &["baseline", "set", &fast.to_string()])
        .status
        .success());
    assert!(stdout(&history(&db, &["baseline", "show"])).contains(&format!("run {fast}")));
    let gate = history(
        &db,
        &[
            "compare",
            "--baseline",
            &slow.to_string(),
            "--fail-if-slower=5%",
        ],
    );
    // One run a side: compare's rule, no gate without noise to judge by (issue 27).
    let err = String::from_utf8_lossy(&gate.stderr);
    assert_eq!(gate.status.code(), Some(1), "{}", stdout(&gate));
    assert!(err.contains("needs 2 or more runs a side"), "{err}");
    let text = stdout(&gate);
    assert!(text.contains("differ in options hash"), "{text}");
    // Without an ID the baseline meets the latest run like it: the same options.
    let like = history(&db, &["compare", "--baseline"]);
    assert!(
        stdout(&like).contains(&format!("runs {fast} and {again}: same options hash")),
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
