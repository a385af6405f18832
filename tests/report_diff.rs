//! Differential tests of the report formats against the real fio: the same job run by both,
//! then the JSON key sets and value types, the normal layout's line labels, and the terse
//! field counts compared. Numbers differ between runs; structure must not.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Runs `cmd` with `args`, returning stdout, panicking with stderr on failure.
fn stdout_of(mut cmd: Command, args: &[String]) -> String {
    let out = cmd.args(args).output().expect("spawn");
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8 output")
}

fn args(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--name=t".to_string(),
        format!("--filename={}", dir.join("f").display()),
        "--size=1m".to_string(),
        "--bs=4k".to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// Paths to every key with its JSON type, recursively (array elements share a path).
fn shape(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    let ty = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.insert(format!("{path}: {ty}"));
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                // Percentile and bin keys are values, not names: keep their count only.
                let p = if path.ends_with("percentile") || path.ends_with("bins") {
                    format!("{path}.<key>")
                } else {
                    format!("{path}.{k}")
                };
                shape(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                shape(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

fn json_shape(text: &str) -> BTreeSet<String> {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}"));
    let mut s = BTreeSet::new();
    shape(&v, "", &mut s);
    s
}

fn compare_json(extra: &[&str], name: &str) {
    let Some(fio) = common::fio() else { return };
    let dir = common::scratch(name);
    let a = args(&dir, extra);
    let f = json_shape(&stdout_of(fio, &a));
    let i = json_shape(&stdout_of(common::iobench(), &a));
    let only_fio: Vec<_> = f.difference(&i).collect();
    let only_ours: Vec<_> = i.difference(&f).collect();
    assert!(
        only_fio.is_empty() && only_ours.is_empty(),
        "JSON shapes differ\nonly in fio: {only_fio:#?}\nonly in iobench: {only_ours:#?}"
    );
}

#[test]
fn json_read_has_fios_keys_and_types() {
    compare_json(&["--rw=read", "--output-format=json"], "rd_json");
}

#[test]
fn json_write_has_fios_keys_and_types() {
    compare_json(&["--rw=write", "--output-format=json"], "wr_json");
}

#[test]
fn json_plus_has_fios_keys_and_types() {
    compare_json(&["--rw=read", "--output-format=json+"], "rd_jsonplus");
}

#[test]
fn json_with_percentile_list_and_lat_percentiles() {
    compare_json(
        &[
            "--rw=read",
            "--output-format=json",
            "--percentile_list=50:99.9",
            "--lat_percentiles=1",
        ],
        "rd_plist",
    );
}

/// A line's label: digits folded away, then the text up to the first value.
fn label(line: &str) -> String {
    let mut s = String::new();
    let mut last_digit = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !last_digit {
                s.push('9');
            }
            last_digit = true;
        } else {
            last_digit = false;
            s.push(c);
        }
    }
    s.split(['=', ':']).next().unwrap_or("").to_string()
}

/// The normal report's line labels, leaving out lines whose presence depends on the
/// measured numbers (percentile rows, latency buckets, bw/iops samples).
fn layout(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            !l.starts_with("     |")
                && !l.starts_with("  lat (")
                && !l.starts_with("   bw (")
                && !l.starts_with("   iops")
                && !l.starts_with("fio-")
                && !l.starts_with("iobench-")
        })
        .map(label)
        .collect()
}

fn compare_normal(extra: &[&str], name: &str) {
    let Some(fio) = common::fio() else { return };
    let dir = common::scratch(name);
    let a = args(&dir, extra);
    // Lay the file out first so that fio's `Laying out IO file` line does not appear.
    std::fs::write(dir.join("f"), vec![0u8; 1 << 20]).unwrap();
    let f = stdout_of(fio, &a);
    let i = stdout_of(common::iobench(), &a);
    assert_eq!(layout(&f), layout(&i), "fio:\n{f}\niobench:\n{i}");
}

#[test]
fn normal_read_layout_matches_fio() {
    compare_normal(&["--rw=read"], "rd_normal");
}

#[test]
fn normal_write_layout_matches_fio() {
    compare_normal(&["--rw=write"], "wr_normal");
}

#[test]
fn terse_field_count_matches_fio() {
    let Some(fio) = common::fio() else { return };
    for ver in ["2", "3", "4", "5"] {
        let dir = common::scratch(&format!("terse{ver}"));
        let a = args(
            &dir,
            &["--rw=read", "--minimal", &format!("--terse-version={ver}")],
        );
        let f = stdout_of(fio_cmd(&fio), &a);
        let i = stdout_of(common::iobench(), &a);
        let count = |s: &str| s.trim_end().split(';').count();
        assert_eq!(
            count(&f),
            count(&i),
            "version {ver}\nfio: {f}\niobench: {i}"
        );
    }
}

fn fio_cmd(_probe: &Command) -> Command {
    Command::new("fio")
}

/// Two jobs on one file; `second` holds options for the second job.
fn two_jobs(dir: &Path, first: &[&str], second: &[&str], common_opts: &[&str]) -> Vec<String> {
    let f = format!("--filename={}", dir.join("f").display());
    let mut v: Vec<String> = common_opts.iter().map(|s| s.to_string()).collect();
    v.push("--name=a".into());
    v.push(f.clone());
    v.extend(first.iter().map(|s| s.to_string()));
    v.push("--name=b".into());
    v.push(f);
    v.extend(second.iter().map(|s| s.to_string()));
    v
}

fn compare_both(a: Vec<String>, dir: &Path) {
    let Some(_) = common::fio() else { return };
    std::fs::write(dir.join("f"), vec![0u8; 1 << 20]).unwrap();
    let f = stdout_of(Command::new("fio"), &a);
    let i = stdout_of(common::iobench(), &a);
    assert_eq!(layout(&f), layout(&i), "fio:\n{f}\niobench:\n{i}");
    // Before the jobs: fio prints a job's header when the next `--name` adds it, with the
    // output format known by then.
    let mut aj = vec!["--output-format=json".to_string()];
    aj.extend(a.iter().cloned());
    let f = json_shape(&stdout_of(Command::new("fio"), &aj));
    let i = json_shape(&stdout_of(common::iobench(), &aj));
    let only_fio: Vec<_> = f.difference(&i).collect();
    let only_ours: Vec<_> = i.difference(&f).collect();
    assert!(
        only_fio.is_empty() && only_ours.is_empty(),
        "JSON shapes differ\nonly in fio: {only_fio:#?}\nonly in iobench: {only_ours:#?}"
    );
}

#[test]
fn two_groups_with_stonewall() {
    let dir = common::scratch("two_groups");
    let a = two_jobs(
        &dir,
        &["--rw=read"],
        &["--rw=write", "--stonewall"],
        &["--size=1m", "--bs=4k"],
    );
    compare_both(a, &dir);
}

#[test]
fn group_reporting_merges_jobs_of_a_group() {
    let dir = common::scratch("group_rep");
    let a = two_jobs(
        &dir,
        &["--rw=read"],
        &["--rw=read"],
        &["--size=1m", "--bs=4k", "--group_reporting"],
    );
    compare_both(a, &dir);
}

#[test]
fn percentiles_options_and_description() {
    let dir = common::scratch("pct_desc");
    let a = two_jobs(
        &dir,
        &["--rw=read", "--description=first job"],
        &["--rw=write", "--percentile_list=50:99:99.9"],
        &["--size=1m", "--bs=4k", "--lat_percentiles=1"],
    );
    compare_both(a, &dir);
}

#[test]
fn unified_rw_reporting_mixed_and_both() {
    for mode in ["mixed", "both"] {
        let dir = common::scratch(&format!("unified_{mode}"));
        let u = format!("--unified_rw_reporting={mode}");
        let a = two_jobs(
            &dir,
            &["--rw=randrw"],
            &["--rw=write"],
            &["--size=1m", "--bs=4k", &u],
        );
        compare_both(a, &dir);
    }
}
