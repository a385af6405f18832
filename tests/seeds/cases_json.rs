//! The acceptance cases with `--output-format=json`: stdout holds nothing but JSON
//! documents (one per run), which `python3 -m json.tool` and serde_json both accept —
//! warnings, ETA lines, "Laying out" notes and signal messages included, none of them
//! may land between or inside the documents. Long: runs with IOBENCH_CASES=1 (CI).
//!
//! Each long script runs once in the suite, in one output format: seed 000's five
//! libaio jobs in cases_run (text), seed 001's here (JSON, its SIGINT being the hardest
//! case for a clean document), so CI does not lay out and run them twice.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

fn enabled(name: &str) -> bool {
    if std::env::var("IOBENCH_CASES").as_deref() != Ok("1") {
        eprintln!("skipping {name}: set IOBENCH_CASES=1 to run the acceptance scripts");
        return false;
    }
    true
}

/// The JSON documents of `stdout`, failing on anything that is not one.
fn documents(what: &str, stdout: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(stdout)
        .into_iter::<serde_json::Value>()
        .map(|d| d.unwrap_or_else(|e| panic!("{what}: stdout is not JSON ({e}):\n{stdout}")))
        .collect()
}

/// `python3 -m json.tool` accepts `doc` (skipped without python3 unless CI).
fn python_accepts(what: &str, doc: &str) {
    let child = Command::new("python3")
        .args(["-m", "json.tool"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        assert_ne!(
            std::env::var("IOBENCH_REQUIRE_FIO").as_deref(),
            Ok("1"),
            "python3 missing"
        );
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(doc.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: json.tool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs one script with FIO set to this build in JSON mode; returns (stdout, stderr).
fn run_script(name: &str, dir: &Path) -> (String, String) {
    let fio = format!("{} --output-format=json", env!("CARGO_BIN_EXE_iobench"));
    let out = Command::new("sh")
        .arg(cases().join(name))
        .env("FIO", fio)
        .env("DIR", dir)
        .output()
        .expect("run script");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Runs `name` in JSON mode and checks its `runs` documents; returns its stderr.
fn check_script(name: &str, runs: usize) -> String {
    if !enabled(name) {
        return String::new();
    }
    let scratch = common::big_scratch(&format!("cases_json_{name}"), common::case_bytes(name));
    let (text, stderr) = run_script(name, &scratch.dir);
    let docs = documents(name, &text);
    assert_eq!(docs.len(), runs, "{name}: {text}");
    for d in &docs {
        assert!(
            d["jobs"].as_array().is_some_and(|j| !j.is_empty()),
            "{name}: {d}"
        );
        python_accepts(name, &d.to_string());
    }
    stderr
}

/// Seed 001's four runs, the last stopped by SIGINT after 2 s: four clean documents, the
/// interrupted one with the results of the time it ran, and the signal named on stderr.
#[test]
fn seed001_json_is_clean_even_after_sigint() {
    let stderr = check_script("seed001-aws.sh", 4);
    if enabled("seed001-aws.sh") {
        assert!(stderr.contains("terminating on signal 2"), "{stderr}");
    }
}

#[test]
fn seed003_json_is_clean_with_eta_newline() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping seed003: needs root (losetup, mkfs, mount)");
        return;
    }
    check_script("seed003-nbd.sh", 2);
}

#[test]
fn seed004_job_files_give_one_clean_document_each() {
    if !enabled("seed004") {
        return;
    }
    let dir = common::scratch("cases_json_seed004");
    let mut files: Vec<PathBuf> = std::fs::read_dir(cases().join("seed004"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let mut c = common::iobench();
        c.current_dir(&dir)
            .env("DIR", &dir)
            .arg("--output-format=json")
            .arg(&f);
        let out = common::run(c);
        let what = f.display().to_string();
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(documents(&what, &text).len(), 1, "{what}");
        python_accepts(&what, &text);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
