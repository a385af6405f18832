//! Differential tests of the report formats against the real fio: the same job run by both,
//! then the JSON key sets and value types, the normal layout's line labels, and the terse
//! field counts compared. Numbers differ between runs; structure must not.

use crate::common;

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
    // fio prints notes on stdout before its JSON: skip to the document.
    let text = text.find("\n{").map_or(text, |i| &text[i + 1..]);
    let text = if text.starts_with('{') {
        text
    } else {
        text.trim_start()
    };
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
    let s = s.split(['=', ':']).next().unwrap_or("").to_string();
    // The unit follows the measured values (nsec/usec/msec): fold it too.
    s.replace("(nsec)", "(unit)")
        .replace("(usec)", "(unit)")
        .replace("(msec)", "(unit)")
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

/// Both tools' JSON shapes and normal layouts for one job on `engine` doing `rw`.
fn compare_engine(engine: &str, rw: &str, extra: &[&str]) {
    let name = format!("eng_{engine}_{rw}_{}", extra.len());
    let e = format!("--ioengine={engine}");
    let r = format!("--rw={rw}");
    let mut ex: Vec<&str> = vec![&e, &r, "--iodepth=8"];
    ex.extend_from_slice(extra);
    let mut j = ex.clone();
    j.push("--output-format=json");
    compare_json(&j, &name);
    compare_normal(&ex, &name);
}

#[test]
fn engines_null_psync_libaio_io_uring_match_fio() {
    for engine in ["null", "psync", "libaio", "io_uring"] {
        compare_engine(engine, "randrw", &[]);
    }
}

#[test]
fn libaio_read_write_and_direct_match_fio() {
    compare_engine("libaio", "read", &["--direct=1"]);
    compare_engine("io_uring", "write", &["--direct=1"]);
    compare_engine("libaio", "randrw", &["--numjobs=2", "--group_reporting"]);
    compare_engine("io_uring", "randrw", &["--numjobs=2"]);
}

#[test]
fn json_plus_on_async_engines_has_fios_bins() {
    compare_json(
        &[
            "--ioengine=libaio",
            "--rw=randrw",
            "--iodepth=4",
            "--output-format=json+",
        ],
        "jp_libaio",
    );
}

/// With json, stdout is one JSON document even when the job earns a note (fio would put
/// the note on stdout; iobench sends it to stderr).
#[test]
fn json_stdout_is_only_json_even_with_notes() {
    let dir = common::scratch("json_clean");
    let a = args(
        &dir,
        &[
            "--rw=read",
            "--ioengine=psync",
            "--iodepth=8",
            "--output-format=json",
        ],
    );
    let out = common::iobench().args(&a).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Result<Value, _> = serde_json::from_str(&text);
    assert!(v.is_ok(), "stdout is not pure JSON:\n{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("queue depth will be capped at 1"), "{err}");
}

/// The last --output-format wins, as in fio.
#[test]
fn last_output_format_wins() {
    let dir = common::scratch("fmt_last");
    let a = args(
        &dir,
        &["--rw=read", "--output-format=json+", "--output-format=json"],
    );
    let text = stdout_of(common::iobench(), &a);
    assert!(!text.contains("\"bins\""), "{text}");
}

/// fio's own json+ consumer reads iobench's json+ (run from fio's source tree, if present).
#[test]
fn fio_jsonplus_clat2csv_accepts_our_json_plus() {
    let tool = Path::new("/tmp/fio-src/tools/fio_jsonplus_clat2csv");
    let py = Command::new("python3").arg("--version").output();
    if !tool.exists() || !py.map(|o| o.status.success()).unwrap_or(false) {
        eprintln!("fio_jsonplus_clat2csv or python3 missing: skipping");
        return;
    }
    let dir = common::scratch("clat2csv");
    let a = args(
        &dir,
        &[
            "--rw=randrw",
            "--ioengine=libaio",
            "--iodepth=4",
            "--output-format=json+",
        ],
    );
    let json = stdout_of(common::iobench(), &a);
    let src = dir.join("out.json");
    std::fs::write(&src, json).unwrap();
    let dst = dir.join("out.csv");
    // First convert, then let the tool check its CSV against our bins.
    for pass in [None, Some("--validate")] {
        let st = Command::new("python3")
            .arg(tool)
            .args(pass)
            .arg(&src)
            .arg(&dst)
            .current_dir("/tmp/fio-src/tools")
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{pass:?}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
    let csv = std::fs::read_to_string(dir.join("out_job0.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("nsec, read_slat_ns_count"));
    assert!(lines.count() > 1, "{csv}");
}

/// Regression: the IO depths distribution counted I/Os issued during ramp_time and at reap
/// time, summing past 100% (`>=64=131.5%` on a libaio QD64 job). It must sum like fio's.
#[test]
fn io_depths_sum_to_at_most_100_percent_with_ramp_and_batches() {
    let dir = common::scratch("depth_sum");
    let a = args(
        &dir,
        &[
            "--rw=randread",
            "--ioengine=libaio",
            "--iodepth=64",
            "--iodepth_batch_submit=16",
            "--iodepth_batch_complete_min=8",
            "--iodepth_batch_complete_max=32",
            "--ramp_time=200ms",
            "--runtime=300ms",
            "--time_based",
        ],
    );
    let text = stdout_of(common::iobench(), &a);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("IO depths"))
        .expect("IO depths line");
    let sum: f64 = line
        .split(',')
        .filter_map(|p| p.rsplit('=').next())
        .map(|v| v.trim_end_matches('%').parse::<f64>().unwrap())
        .sum();
    assert!(sum <= 100.2 && sum > 90.0, "{line}");
}
