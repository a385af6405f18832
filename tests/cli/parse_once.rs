//! Each option is parsed once, when the job is resolved, into the typed field the run
//! reads. So `--parse-only` refuses every value the run would refuse. The code reads each
//! option through its row (a named constant), so a misspelt option does not compile; what
//! is left to check is that every named row is in the table.

use crate::common;

use common::iobench;
use std::path::Path;

/// Runs `iobench --parse-only --name=x ARGS` and returns (success, stderr).
fn parse_only(args: &[&str]) -> (bool, String) {
    let out = iobench()
        .args(["--parse-only", "--name=x", "--filename=/dev/null"])
        .args(args)
        .output()
        .expect("run iobench");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn parse_only_refuses_what_the_run_would_refuse() {
    // Each of these passed --parse-only and failed (or, for the percentile, was taken as
    // is) only when a worker started.
    for (args, option, shows) in [
        (
            &["--sync_file_range=write:abc"][..],
            "sync_file_range",
            "abc",
        ),
        (
            &["--latency_target=1ms", "--latency_percentile=150"][..],
            "latency_percentile",
            "150",
        ),
    ] {
        let (ok, err) = parse_only(args);
        assert!(!ok, "{args:?} was accepted");
        assert!(
            err.contains(option) && err.contains(shows),
            "{args:?}: {err}"
        );
    }
    // fio refuses the percentile too: "value out of range: 150.000000".
    if let Some(mut fio) = common::fio() {
        let st = fio
            .args(["--parse-only", "--name=x", "--latency_target=1ms"])
            .arg("--latency_percentile=150")
            .output()
            .expect("run fio");
        assert!(!st.status.success());
    }
}

#[test]
fn parse_only_accepts_the_same_options_well_formed() {
    let (ok, err) = parse_only(&[
        "--sync_file_range=write,wait_after:4",
        "--latency_target=1ms",
        "--latency_percentile=99.5",
        "--thinktime=10",
        "--thinktime_blocks=4",
        "--max_latency=10ms,20ms",
        "--flow=2",
        "--flow_id=1",
    ]);
    assert!(ok, "{err}");
}

#[test]
fn the_typed_fields_hold_the_values() {
    let inv = iobench::api::cli::parse_args(&[
        "--name=x".to_string(),
        "--sync_file_range=write,wait_after:4".to_string(),
        "--latency_target=2ms".to_string(),
        "--latency_percentile=99.5".to_string(),
        "--thinktime=10".to_string(),
        "--thinktime_blocks=4".to_string(),
        "--max_latency=10ms,20ms".to_string(),
        "--flow=2".to_string(),
        "--flow_id=7".to_string(),
    ])
    .expect("arguments parse");
    let job = iobench::api::job::resolve(&inv.jobs[0]).expect("job resolves");
    let x = &job.exec;
    assert_eq!(x.sync.range_blocks, 4);
    assert_eq!(
        x.sync.range_flags,
        libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER
    );
    let lat = x.latency_target.expect("a latency target");
    assert_eq!((lat.target_us, lat.percentile), (2000, 99.5));
    assert_eq!(
        (x.think.us, x.think.blocks, x.think.blocks_set),
        (10, 4, true)
    );
    // Per direction: trim takes the write value, as fio spreads two parts.
    assert_eq!(x.max_latency_us, [10_000, 20_000, 20_000]);
    assert_eq!((x.flow.weight, x.flow.id), (2, 7));
}

/// Every named option row (`pub const BS: OptDef = opt("bs", …)`, in the table file, in
/// `defs/rows.rs` and in the engines' files) is reachable in the one table, once: the
/// readers take these constants, so a row left out of the table would be readable by the
/// code but refused (or unknown) on every command line.
#[test]
fn every_named_row_is_in_the_table() {
    fn scan(dir: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                scan(&p, out);
                continue;
            }
            if p.extension().and_then(|x| x.to_str()) != Some("rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("read source");
            let mut rest = text.as_str();
            while let Some(i) = rest.find("OptDef =") {
                rest = &rest[i + "OptDef =".len()..];
                let Some(body) = rest.trim_start().strip_prefix("opt(") else {
                    continue;
                };
                let name: String = body
                    .trim_start()
                    .trim_start_matches('"')
                    .chars()
                    .take_while(|&c| c != '"')
                    .collect();
                out.push((p.display().to_string(), name));
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut rows = Vec::new();
    scan(&src, &mut rows);
    assert!(rows.len() > 300, "the scan found only {} rows", rows.len());
    let mut names: Vec<&str> = rows.iter().map(|(_, n)| n.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "two rows share a name");
    let missing: Vec<String> = rows
        .iter()
        .filter(|(_, n)| iobench::api::options::lookup(n).map(|d| d.name) != Some(n.as_str()))
        .map(|(f, n)| format!("{f}: {n}"))
        .collect();
    assert!(
        missing.is_empty(),
        "rows not in the table:\n{}",
        missing.join("\n")
    );
}
