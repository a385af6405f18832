//! Each option is parsed once, when the job is resolved, into the typed field the run
//! reads. So `--parse-only` refuses every value the run would refuse, and every option key
//! the code looks up is one the option table knows (a misspelt key would silently read as
//! unset).

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

/// The option keys the source passes to the job reader (`r.int("iodepth")`,
/// `r.raw.value("…")`, `r.is_set("…")`, …), from every file under `src/`.
fn looked_up_keys(dir: &Path, out: &mut Vec<(String, String)>) {
    const METHODS: &[&str] = &[
        "text",
        "int",
        "bool",
        "size",
        "size_spec",
        "time_us",
        "choice",
        "is_set",
        "value",
        "invalid",
        "per_dir",
    ];
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            looked_up_keys(&p, out);
            continue;
        }
        if p.extension().and_then(|x| x.to_str()) != Some("rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("read source");
        for recv in ["r.", "reader.", "raw.", "r.raw."] {
            for m in METHODS {
                let needle = format!("{recv}{m}(\"");
                let mut rest = text.as_str();
                while let Some(i) = rest.find(&needle) {
                    // Only a whole receiver name (`r.`, not `bar.`).
                    let before = rest[..i].chars().next_back();
                    rest = &rest[i + needle.len()..];
                    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    let key: String = rest.chars().take_while(|&c| c != '"').collect();
                    out.push((p.display().to_string(), key));
                }
            }
        }
    }
}

#[test]
fn every_key_the_code_reads_is_in_the_option_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut keys = Vec::new();
    looked_up_keys(&src, &mut keys);
    assert!(keys.len() > 150, "the scan found only {} keys", keys.len());
    let unknown: Vec<String> = keys
        .iter()
        .filter(|(_, k)| iobench::api::options::lookup(k).is_none())
        .map(|(f, k)| format!("{f}: \"{k}\""))
        .collect();
    assert!(
        unknown.is_empty(),
        "keys not in the table:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn the_key_scan_would_see_a_misspelt_key() {
    assert!(iobench::api::options::lookup("iodepht").is_none());
    let dir = std::env::temp_dir().join(format!("iobench-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("x.rs"),
        "let d = r.int(\"iodepht\")?; let n = bar.int(\"not_a_reader\");",
    )
    .unwrap();
    let mut keys = Vec::new();
    looked_up_keys(&dir, &mut keys);
    std::fs::remove_dir_all(&dir).unwrap();
    let keys: Vec<&str> = keys.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(keys, ["iodepht"]);
}
