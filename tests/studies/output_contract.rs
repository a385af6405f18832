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

/// One vocabulary of flags (issue 39): each subcommand's `--output-format=json` (or
/// `--json`) prints the document it also writes to a file, alone on stdout, with the
/// text a reader gets on stderr; `--markdown` prints its tables as markdown.
#[test]
fn each_subcommands_json_on_stdout_is_its_own_document() {
    let dir = scratch("output_vocabulary");
    let doc = |out: &std::process::Output, what: &str| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{what}: stdout is not one JSON document ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    };
    let file = |p: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    };
    // sweep: the index.
    let mut s = iobench();
    s.args(["sweep", "--json", "--axis", "bs=4k,8k", "-r", "2", "-o"])
        .arg(dir.join("sweep"))
        .args(["--name=s", "--ioengine=null", "--size=1m"]);
    let o = run_ok(s);
    let index = doc(&o, "sweep --json");
    assert_eq!(index, file(dir.join("sweep/index.json")));
    assert_eq!(index["points"].as_array().unwrap().len(), 2);
    assert_eq!(index["points"][0]["repeats"], 2, "-r is --repeat");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bs"),
        "the table goes to stderr"
    );
    let mut s = iobench();
    s.args(["sweep", "--markdown", "--axis", "bs=4k,8k", "--fresh", "-o"])
        .arg(dir.join("sweep"))
        .args(["--name=s", "--ioengine=null", "--size=1m"]);
    let md = String::from_utf8_lossy(&run_ok(s).stdout).into_owned();
    assert!(md.lines().any(|l| l.starts_with("| bs")), "{md}");
    // compare: what --export-json writes.
    let runs: Vec<PathBuf> = (0..2)
        .map(|k| {
            let f = dir.join(format!("r{k}.json"));
            let mut c = iobench();
            c.args(job(&dir))
                .arg("--output-format=json")
                .arg(format!("--output={}", f.display()));
            run_ok(c);
            f
        })
        .collect();
    let mut c = iobench();
    c.args(["compare", "--output-format=json", "--export-json"])
        .arg(dir.join("cmp.json"))
        .args(&runs);
    let o = run_ok(c);
    assert_eq!(doc(&o, "compare --json"), file(dir.join("cmp.json")));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("IOPS"),
        "tables on stderr"
    );
    // history compare: compare's document, its notes on stderr.
    let db = dir.join("h.sqlite");
    for f in &runs {
        let mut i = iobench();
        i.args(["history", "import"])
            .arg(f)
            .arg(format!("--history={}", db.display()));
        run_ok(i);
    }
    let mut h = iobench();
    h.args(["history", "compare", "1", "2", "--json"])
        .arg(format!("--history={}", db.display()));
    let o = run_ok(h);
    let cmp = doc(&o, "history compare --json");
    assert_eq!(cmp["sides"].as_array().map(Vec::len), Some(2), "{cmp}");
    assert!(cmp["results"].is_array(), "{cmp}");
    let notes = String::from_utf8_lossy(&o.stderr);
    assert!(
        notes.contains("same options hash"),
        "its notes on stderr: {notes}"
    );
    let mut h = iobench();
    h.args(["history", "compare", "1", "2", "--output-format=markdown"])
        .arg(format!("--history={}", db.display()));
    let md = String::from_utf8_lossy(&run_ok(h).stdout).into_owned();
    assert!(md.contains("| ") && md.contains("---"), "{md}");
    // pts: summary.json.
    let target = dir.join("pts-target");
    std::fs::write(&target, b"").unwrap();
    let mut p = iobench();
    p.args([
        "pts",
        "throughput",
        "--json",
        "--capacity=4m",
        "--round-time=20ms",
        "--max-rounds=5",
        "-o",
    ])
    .arg(dir.join("pts"))
    .arg(&target);
    let o = run_ok(p);
    assert_eq!(doc(&o, "pts --json"), file(dir.join("pts/summary.json")));
    assert!(!o.stderr.is_empty(), "the report goes to stderr");
    // A format a subcommand does not print is refused by name.
    let mut p = iobench();
    p.args(["pts", "throughput", "--markdown", "-o", "d", "f"]);
    let o = run(p);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown option '--markdown'"), "{err}");
    let mut l = iobench();
    l.args(["slo", "--output-format=markdown", "--p99=1ms", "--", "x"]);
    let o = run(l);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("'markdown' for --output-format: expected normal or json"),
        "{err}"
    );
}
