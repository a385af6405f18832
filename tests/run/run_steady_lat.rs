//! fio 3.42's latency criteria, `steadystate=lat` and `lat_slope`, against what fio 3.42
//! printed (kept in `steady_lat_fio342/`, with the commands that made it in its
//! `COMMANDS` file, since CI has no fio 3.42): the same JSON section (label, keys in
//! fio's order, a window of each interval's mean completion latency in ns), values in the
//! same ranges and bound by the same formulas, the same `steadystate  :` line, the same
//! `--debug=parse` threshold lines; and in the dialects before 3.42, refused by name.

use crate::common;

use serde_json::Value;
use std::process::Command;

/// fio 3.42's outputs (see `steady_lat_fio342/COMMANDS` for each one's command).
const FIO_LAT_PCT: &str = include_str!("steady_lat_fio342/lat_pct.json");
const FIO_LAT_NEVER: &str = include_str!("steady_lat_fio342/lat_never_interval.json");
const FIO_LAT_GROUP: &str = include_str!("steady_lat_fio342/lat_slope_group.json");
const FIO_SLOPE_NORMAL: &str = include_str!("steady_lat_fio342/lat_slope_normal.txt");
const FIO_DIRECT_NORMAL: &str = include_str!("steady_lat_fio342/lat_direct_normal.txt");
const FIO_DEBUG_PARSE: &str = include_str!("steady_lat_fio342/debug_parse.txt");

/// The jobs of the references, as their commands ran them (without `--output-format`).
const LAT_PCT: &[&str] = &[
    "--name=ss",
    "--ioengine=null",
    "--rw=randread",
    "--size=1g",
    "--time_based",
    "--runtime=30",
    "--rate_iops=1000",
    "--steadystate=lat:50%",
    "--steadystate_duration=3",
];
const LAT_NEVER: &[&str] = &[
    "--name=ss",
    "--ioengine=null",
    "--rw=randwrite",
    "--size=1g",
    "--time_based",
    "--runtime=6",
    "--rate_iops=1000",
    "--steadystate=lat:0",
    "--ss_dur=4",
    "--ss_interval=2",
    "--ss_ramp=1",
];
const LAT_GROUP: &[&str] = &[
    "--name=g",
    "--ioengine=null",
    "--rw=randread",
    "--size=1g",
    "--time_based",
    "--runtime=30",
    "--rate_iops=500",
    "--numjobs=2",
    "--group_reporting",
    "--steadystate=lat_slope:5%",
    "--ss_dur=3",
];
const LAT_SLOPE: &[&str] = &[
    "--name=ss",
    "--ioengine=null",
    "--rw=randread",
    "--size=1g",
    "--time_based",
    "--runtime=30",
    "--rate_iops=1000",
    "--steadystate=lat_slope:2000",
    "--steadystate_duration=3",
];

/// iobench in its default dialect (fio 3.42) on `args`, as JSON text.
fn iobench_json(args: &[&str]) -> String {
    let mut c = common::iobench_default();
    c.args(args).arg("--output-format=json");
    String::from_utf8(common::run_ok(c).stdout).expect("UTF-8 JSON")
}

fn ints(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("integer sample"))
        .collect()
}

/// The keys of the last job's `steadystate` section and of its `data`, in the order the
/// text has them (serde_json's map does not keep it).
fn key_order(text: &str) -> (Vec<&'static str>, Vec<&'static str>) {
    let at = text
        .rfind("\"steadystate\"")
        .expect("a steadystate section");
    let ss = &text[at..];
    let data_at = ss.find("\"data\"").expect("a data object");
    let order = |body: &str, keys: &[&'static str]| {
        let mut found: Vec<(usize, &'static str)> = keys
            .iter()
            .filter_map(|k| body.find(&format!("\"{k}\" :")).map(|i| (i, *k)))
            .collect();
        found.sort();
        found.into_iter().map(|(_, k)| k).collect::<Vec<_>>()
    };
    let top = [
        "ss",
        "duration",
        "attained",
        "criterion",
        "max_deviation",
        "slope",
        "data",
    ];
    let data = ["bw_mean", "iops_mean", "lat_mean", "lat_ns", "iops", "bw"];
    (
        order(&ss[..data_at + "\"data\" :".len()], &top),
        order(&ss[data_at..], &data),
    )
}

/// What fio's formulas say of a reported window, checked on fio's output and ours alike:
/// the mean is the integer mean of the window, the deviation the largest distance from
/// the exact mean, a slope the least-squares one, and the criterion string either of them
/// (as a percentage of the mean: the exact one for a deviation, the integer one for a
/// slope), at fio's float precision.
fn check_formulas(who: &str, ss: &Value) {
    let label = ss["ss"].as_str().unwrap();
    let pct = label.ends_with('%');
    let slope = label.contains("_slope");
    let lat = ints(&ss["data"]["lat_ns"]);
    let n = lat.len() as u64;
    assert_eq!(
        n,
        ss["duration"].as_u64().unwrap() * 1000 / interval_ms(label),
        "{who}"
    );
    let sum: u64 = lat.iter().sum();
    assert_eq!(
        ss["data"]["lat_mean"].as_u64(),
        Some(sum / n),
        "{who}: {ss}"
    );
    if lat.contains(&0) {
        // A window not full (or an interval without completions): no verdict to check.
        return;
    }
    let mean = sum as f64 / n as f64;
    let want = if slope {
        let xs: Vec<f64> = (0..n).map(|x| x as f64).collect();
        let sx: f64 = xs.iter().sum();
        let sxx: f64 = xs.iter().map(|x| x * x).sum();
        let sxy: f64 = xs.iter().zip(&lat).map(|(x, &y)| x * y as f64).sum();
        let b = (sxy - sx * sum as f64 / n as f64) / (sxx - sx * sx / n as f64);
        let got = ss["slope"].as_f64().unwrap();
        assert!(
            (got - b).abs() < 1e-3,
            "{who}: slope {got}, formula {b}: {ss}"
        );
        if pct {
            100.0 * b / (sum / n) as f64
        } else {
            b
        }
    } else {
        let dev = lat
            .iter()
            .map(|&y| (y as f64 - mean).abs())
            .fold(0.0, f64::max);
        let got = ss["max_deviation"].as_f64().unwrap();
        assert!(
            (got - dev).abs() < 1e-3,
            "{who}: deviation {got}, formula {dev}: {ss}"
        );
        if pct {
            100.0 * dev / mean
        } else {
            dev
        }
    };
    assert_eq!(
        ss["criterion"].as_str().unwrap(),
        format!("{:.6}{}", want as f32, if pct { "%" } else { "" }),
        "{who}: {ss}"
    );
}

/// The check interval of a reference job (only `lat:0`'s ran at 2 s).
fn interval_ms(label: &str) -> u64 {
    if label == "lat:0.000000" {
        2000
    } else {
        1000
    }
}

/// What every latency window must show, fio's and ours: its label, the keys in fio's
/// order, the formulas, and latencies of a null engine's I/O (fio 3.42 measured 134 to
/// 956 ns on the machine the references come from; iobench's are of the same order).
fn check_section(who: &str, text: &str, label: &str) -> Value {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{who}: {e}"));
    let job = v["jobs"].as_array().unwrap().last().unwrap().clone();
    let ss = &job["steadystate"];
    assert_eq!(ss["ss"], label, "{who}: {ss}");
    let (top, data) = key_order(text);
    assert_eq!(
        top,
        [
            "ss",
            "duration",
            "attained",
            "criterion",
            "max_deviation",
            "slope",
            "data"
        ],
        "{who}"
    );
    assert_eq!(
        data,
        ["bw_mean", "iops_mean", "lat_mean", "lat_ns", "iops", "bw"],
        "{who}"
    );
    // The samples taken, then the zeros of a window not yet full.
    let lat = ints(&ss["data"]["lat_ns"]);
    let taken = lat.iter().take_while(|&&l| l > 0).count();
    assert!(
        taken >= 1 && lat[taken..].iter().all(|&l| l == 0),
        "{who}: {ss}"
    );
    for &l in &lat[..taken] {
        assert!((20..=200_000).contains(&l), "{who}: {ss}");
    }
    check_formulas(who, ss);
    job
}

#[test]
fn a_latency_deviation_stops_the_job_as_fio_342s_does() {
    let theirs = check_section("fio 3.42", FIO_LAT_PCT, "lat:50.000000%");
    let text = iobench_json(LAT_PCT);
    let ours = check_section("iobench", &text, "lat:50.000000%");
    for job in [&theirs, &ours] {
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 1, "{ss}");
        // Both stop after about the 3 s window, not at the 30 s runtime.
        let runtime = job["read"]["runtime"].as_u64().unwrap();
        assert!((2000..15_000).contains(&runtime), "ran {runtime} ms: {ss}");
        for v in ints(&ss["data"]["iops"]) {
            assert!((600..=1400).contains(&v), "{ss}");
        }
        // The window's mean latency is the job's: almost all its I/O is in the window.
        let clat = job["read"]["clat_ns"]["mean"].as_f64().unwrap();
        let lat = ss["data"]["lat_mean"].as_f64().unwrap();
        assert!(
            (lat - clat).abs() <= 0.5 * clat,
            "lat {lat}, clat {clat}: {ss}"
        );
    }
}

#[test]
fn a_window_never_met_at_a_two_second_interval_after_a_ramp() {
    // lat:0 is never met; the 4 s window holds two 2 s samples, taken from one interval
    // after the 1 s ramp: the job runs its 6 s and reports the last full window.
    let theirs = check_section("fio 3.42", FIO_LAT_NEVER, "lat:0.000000");
    let text = iobench_json(LAT_NEVER);
    let ours = check_section("iobench", &text, "lat:0.000000");
    let fio_lat = ints(&theirs["steadystate"]["data"]["lat_ns"]);
    assert!(fio_lat.iter().all(|&v| v > 0), "fio took both: {fio_lat:?}");
    for job in [&theirs, &ours] {
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 0, "{ss}");
        assert_eq!(ss["duration"], 4, "{ss}");
        let lat = ints(&ss["data"]["lat_ns"]);
        assert_eq!(lat.len(), 2, "{ss}");
        // fio took both samples (at 4 s and 6 s of a 6 s job), and so does iobench on a
        // quiet host; the last one races the job's end in both, so on a loaded host it
        // may be missing.
        assert!(lat[0] > 0, "{ss}");
        let runtime = job["write"]["runtime"].as_u64().unwrap();
        assert!(runtime >= 5500, "ran {runtime} ms: {ss}");
        // Per-second rates, though each sample spans two seconds.
        for v in ints(&ss["data"]["iops"]).into_iter().filter(|&v| v > 0) {
            assert!((700..=1300).contains(&v), "{ss}");
        }
    }
}

#[test]
fn a_groups_latency_is_the_mean_over_its_jobs_completions() {
    let theirs = check_section("fio 3.42", FIO_LAT_GROUP, "lat_slope:5.000000%");
    let text = iobench_json(LAT_GROUP);
    let ours = check_section("iobench", &text, "lat_slope:5.000000%");
    for job in [&theirs, &ours] {
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 1, "{ss}");
        // Two jobs at 500 IOPS: the group's samples are their sum.
        let iops = ints(&ss["data"]["iops"]);
        assert!(
            iops.iter().skip(1).all(|v| (700..=1300).contains(v)),
            "{ss}"
        );
        let clat = job["read"]["clat_ns"]["mean"].as_f64().unwrap();
        let lat = ss["data"]["lat_mean"].as_f64().unwrap();
        assert!(
            (lat - clat).abs() <= 0.5 * clat,
            "lat {lat}, clat {clat}: {ss}"
        );
    }
    for (who, t) in [("fio 3.42", FIO_LAT_GROUP), ("iobench", &text)] {
        let v: Value = serde_json::from_str(t).unwrap();
        assert_eq!(
            v["jobs"].as_array().unwrap().len(),
            1,
            "{who}: one group report"
        );
    }
}

/// The `steadystate  :` line of a normal report.
fn steady_line(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("  steadystate  :"))
        .unwrap_or_else(|| panic!("no steadystate line in:\n{text}"))
        .to_string()
}

/// A line with each number (its sign, digits and decimal point) made `9`.
fn blanked(line: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let sign = c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        if c.is_ascii_digit() || sign || (in_num && c == '.') {
            if !in_num {
                out.push('9');
            }
            in_num = true;
        } else {
            in_num = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn the_normal_line_shows_the_mean_latency_as_fio_342_does() {
    let theirs = steady_line(FIO_SLOPE_NORMAL);
    assert_eq!(
        blanked(&theirs),
        "  steadystate  : attained=yes, bw=9KiB/s (9kB/s), iops=9, lat=9nsec, lat slope=9"
    );
    // fio always writes nsec, with num2str's thousands (`133knsec`).
    let direct = steady_line(FIO_DIRECT_NORMAL);
    assert!(
        direct.contains(", lat=133knsec, lat mean dev=19.343%"),
        "{direct}"
    );
    let mut c = common::iobench_default();
    c.args(LAT_SLOPE);
    let out = String::from_utf8(common::run_ok(c).stdout).unwrap();
    let ours = steady_line(&out);
    assert_eq!(blanked(&ours), blanked(&theirs), "{ours}\n{theirs}");
    // 3.42's `latency   :` line, its times with units even without a target.
    let lat = |t: &str| {
        t.lines()
            .find(|l| l.contains("latency   :"))
            .map(str::to_string)
    };
    assert_eq!(
        lat(FIO_SLOPE_NORMAL).as_deref(),
        Some("     latency   : target=0.00ns, window=0.00ns, percentile=100.00%, depth=1")
    );
    assert_eq!(lat(&out), lat(FIO_SLOPE_NORMAL), "{out}");
}

#[test]
fn the_latency_threshold_parse_lines_are_fio_342s() {
    let values = [
        "lat:20000",
        "lat:20000ns",
        "lat:20us",
        "lat:1ms",
        "lat:2s",
        "lat_slope:0.5%",
    ];
    let theirs: Vec<&str> = FIO_DEBUG_PARSE.lines().collect();
    assert_eq!(theirs.len(), values.len());
    for (v, want) in values.iter().zip(theirs) {
        let mut c: Command = common::iobench_default();
        c.args(["--debug=parse", "--parse-only", "--name=x"])
            .arg(format!("--ss={v}"))
            .arg("--ss_dur=2");
        let out = common::run_ok(c);
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        let got: Vec<&str> = text
            .lines()
            .filter_map(|l| l.find("set steady state").map(|i| &l[i..]))
            .collect();
        assert_eq!(got, [want], "--ss={v}");
    }
}

#[test]
fn fio_341_and_older_refuse_the_latency_criteria_by_name() {
    for (dialect, v) in [("3.41", "lat:5%"), ("3.33", "lat_slope:1000")] {
        let mut c = common::iobench_default();
        c.args([
            &format!("--fio-compat={dialect}"),
            "--parse-only",
            "--name=x",
        ])
        .arg(format!("--ss={v}"))
        .arg("--ss_dur=2");
        let out = common::run(c);
        assert!(!out.status.success(), "{dialect} {v}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("'ss={v}' was added in fio 3.42"))
                && err.contains(&format!("it is not in fio {dialect}")),
            "{err}"
        );
    }
    // The older criteria stay: iops in 3.41.
    let mut c = common::iobench_default();
    c.args([
        "--fio-compat=3.41",
        "--parse-only",
        "--name=x",
        "--ss=iops:5%",
    ])
    .arg("--ss_dur=2");
    common::run_ok(c);
}
