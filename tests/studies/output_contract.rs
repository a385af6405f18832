//! The published output contract (docs/schema/): every kind of JSON iobench writes
//! validates against its schema, and so does fio 3.33's own JSON and JSON+ against the
//! fio schema (so that schema is fio's, not a guess from iobench's output). A broken
//! document fails, so the check is not vacuous. And `--output=DIR/` writes one file per
//! format.

use crate::common;
use common::{fio, iobench, run, run_ok, scratch};
use std::path::{Path, PathBuf};
use std::process::Command;

/// True when python3-jsonschema is there to validate with (`stderr`: the validator's);
/// a missing one fails under IOBENCH_REQUIRE_FIO=1, as CI installs it (.ci/run).
pub(crate) fn have_validator(stderr: &str) -> bool {
    if !stderr.contains("python3-jsonschema is needed") {
        return true;
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("python3-jsonschema is missing but IOBENCH_REQUIRE_FIO=1 (apt-get install python3-jsonschema)");
    }
    eprintln!("python3-jsonschema not installed: skipping schema validation");
    false
}

/// Validates each group's files against its schema, in one python process; the exit
/// status and the errors.
pub(crate) fn validate(groups: &[(&str, Vec<PathBuf>)]) -> (i32, String) {
    let mut c = Command::new("python3");
    c.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/validate-schema.py"
    ));
    for (k, (name, files)) in groups.iter().enumerate() {
        if k > 0 {
            c.arg("--");
        }
        c.arg(name).args(files);
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn job(dir: &Path) -> Vec<String> {
    [
        "--name=c".to_string(),
        format!("--filename={}", dir.join("data").display()),
        "--size=1m".into(),
        "--bs=4k".into(),
        "--rw=randrw".into(),
    ]
    .to_vec()
}

#[test]
fn every_output_kind_validates_against_its_schema() {
    let dir = scratch("output_contract");
    let mut checks: Vec<(&str, Vec<PathBuf>)> = Vec::new();
    // iobench's JSON and JSON+ with --env and --live.
    for (fmt, name) in [("json", "io.json"), ("json+", "io_plus.json")] {
        let mut c = iobench();
        c.args(job(&dir))
            .arg(format!("--output-format={fmt}"))
            .arg("--env")
            .arg(format!("--output={}", dir.join(name).display()))
            .arg(format!("--live={}", dir.join("live.jsonl").display()));
        run_ok(c);
    }
    checks.push((
        "fio-json",
        vec![dir.join("io.json"), dir.join("io_plus.json")],
    ));
    checks.push(("live-line", vec![dir.join("live.jsonl")]));
    // fio 3.33's own output against the same schema.
    if let Some(mut f) = fio() {
        f.args(job(&dir))
            .args(["--output-format=json,json+"])
            .arg(format!("--output={}", dir.join("fio_plus.json").display()));
        run_ok(f);
        let mut f = fio().unwrap();
        f.args(job(&dir))
            .args(["--output-format=json", "--rw=randwrite", "--numjobs=2"])
            .arg("--group_reporting")
            .arg(format!("--output={}", dir.join("fio.json").display()));
        run_ok(f);
        checks.push((
            "fio-json",
            vec![dir.join("fio.json"), dir.join("fio_plus.json")],
        ));
    }
    // A sweep's index.json.
    let mut s = iobench();
    s.args(["sweep", "--axis", "bs=4k,8k", "-o"])
        .arg(dir.join("sweep"))
        .args(["--name=s", "--ioengine=null", "--size=1m"]);
    run_ok(s);
    checks.push(("sweep-index", vec![dir.join("sweep/index.json")]));
    // A comparison's export.
    let mut c = iobench();
    c.args(["compare", "--export-json"])
        .arg(dir.join("cmp.json"))
        .arg(dir.join("io.json"))
        .arg(dir.join("io_plus.json"));
    run_ok(c);
    checks.push(("compare-export", vec![dir.join("cmp.json")]));
    // The history's export and trend.
    let db = dir.join("h.sqlite");
    for _ in 0..2 {
        let mut r = iobench();
        r.args(job(&dir))
            .args(["--save", "--output-format=json"])
            .arg(format!("--history={}", db.display()));
        run_ok(r);
    }
    let mut e = iobench();
    e.args(["history", "export", "-o"])
        .arg(dir.join("export.jsonl"))
        .arg(format!("--history={}", db.display()));
    run_ok(e);
    checks.push(("history-export", vec![dir.join("export.jsonl")]));
    let line: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(dir.join("export.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    // A baseline of both runs: the trend names it (`baseline.ids`).
    let mut b = iobench();
    b.args(["history", "baseline", "set", "1-2"])
        .arg(format!("--history={}", db.display()));
    run_ok(b);
    let mut t = iobench();
    t.args(["history", "trend", "--format=json"])
        .arg(format!("--job-hash={}", line["job_hash"].as_str().unwrap()))
        .arg(format!("--history={}", db.display()));
    let o = run_ok(t);
    let trend: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        trend["baseline"]["ids"],
        serde_json::json!([1, 2]),
        "{trend}"
    );
    std::fs::write(dir.join("trend.json"), &o.stdout).unwrap();
    checks.push(("history-trend", vec![dir.join("trend.json")]));
    // iobench_env alone, as the history keeps it (nulls included).
    std::fs::write(
        dir.join("env.json"),
        line["result"]["iobench_env"].to_string(),
    )
    .unwrap();
    checks.push(("iobench-env", vec![dir.join("env.json")]));

    for (_, files) in &checks {
        for f in files {
            assert!(f.exists(), "{} was not written", f.display());
        }
    }
    let (code, err) = validate(&checks);
    if !have_validator(&err) {
        return;
    }
    assert_eq!(code, 0, "{err}");
    // Broken documents fail: fio's without its jobs, a live line of a future version.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("io.json")).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("jobs");
    std::fs::write(dir.join("broken.json"), doc.to_string()).unwrap();
    let broken = [("fio-json", vec![dir.join("broken.json")])];
    let live = std::fs::read_to_string(dir.join("live.jsonl")).unwrap();
    std::fs::write(
        dir.join("future.jsonl"),
        live.replace("\"schema_version\":1", "\"schema_version\":2"),
    )
    .unwrap();
    // Deep in a document, through a reference to another schema: a stored result
    // without its jobs.
    let mut stored = line.clone();
    stored["result"].as_object_mut().unwrap().remove("jobs");
    std::fs::write(dir.join("broken.jsonl"), stored.to_string() + "\n").unwrap();
    let (code, err) = validate(&[
        broken[0].clone(),
        ("live-line", vec![dir.join("future.jsonl")]),
        ("history-export", vec![dir.join("broken.jsonl")]),
    ]);
    assert!(
        err.contains("broken.jsonl[0] /result: 'jobs' is a required property"),
        "{err}"
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("'jobs' is a required property"), "{err}");
    assert!(
        err.contains("live-line: ") && err.contains("schema_version"),
        "{err}"
    );
}

#[test]
fn output_to_a_directory_writes_one_file_per_format() {
    let dir = scratch("output_per_format");
    let out = dir.join("reports");
    let mut c = iobench();
    c.args(["--name=p", "--ioengine=null", "--size=1m"])
        .arg("--output-format=json+,normal,terse")
        .arg(format!("--output={}/", out.display()));
    let o = run_ok(c);
    assert!(
        o.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
            .expect("report.json is one JSON document and nothing else");
    assert!(
        json["jobs"][0]["read"]["clat_ns"]["bins"].is_object(),
        "JSON+"
    );
    let text = std::fs::read_to_string(out.join("report.txt")).unwrap();
    assert!(text.starts_with("p: (g=0)"), "{text}");
    assert!(text.contains("Run status group 0"));
    assert!(!text.contains('{'), "no JSON in the normal report");
    let terse = std::fs::read_to_string(out.join("report.terse")).unwrap();
    assert!(terse.starts_with("3;"), "{terse}");
    // Without the slash, fio's one file with every format in it.
    let one = dir.join("one.txt");
    let mut c = iobench();
    c.args(["--name=p", "--ioengine=null", "--size=1m"])
        .arg("--output-format=json,normal")
        .arg(format!("--output={}", one.display()));
    run_ok(c);
    let mixed = std::fs::read_to_string(&one).unwrap();
    assert!(mixed.contains("\"jobs\"") && mixed.contains("Run status group 0"));
    // fio 3.33 itself refuses a directory as --output: the slash form takes nothing
    // from it.
    if let Some(mut f) = fio() {
        f.args([
            "--name=p",
            "--ioengine=null",
            "--size=1m",
            "--output-format=json,normal",
        ])
        .arg(format!("--output={}/", out.display()));
        let o = run(f);
        assert!(!o.status.success());
    }
}
