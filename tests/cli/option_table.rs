//! The option table against the installed fio 3.33: every option and alias fio prints is
//! known, defaults, aliases, value kinds, ranges and choice words agree, `--cmdhelp` and
//! `--enghelp` have fio's layout, unsupported options are refused, and docs/options.md is
//! what the table renders.
use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use iobench::api::options::help;
use iobench::api::options::table::{lookup, Kind, OptDef, Support, OPTIONS};

/// Runs fio once per argument list, four at a time, and returns each run's stdout.
fn fio_many(runs: &[Vec<String>]) -> Vec<String> {
    let mut outs = vec![String::new(); runs.len()];
    std::thread::scope(|s| {
        for (chunk_runs, chunk_outs) in runs
            .chunks(runs.len().div_ceil(4).max(1))
            .zip(outs.chunks_mut(runs.len().div_ceil(4).max(1)))
        {
            s.spawn(move || {
                for (args, out) in chunk_runs.iter().zip(chunk_outs.iter_mut()) {
                    let o = Command::new("fio").args(args).output().expect("run fio");
                    *out = String::from_utf8_lossy(&o.stdout).into_owned();
                }
            });
        }
    });
    outs
}

/// Whether to ask fio about every option (`IOBENCH_FIO_FULL=1`, about 5-15 s) rather than a
/// sample (every option with an alias or fixed words, the common ones, and every 4th other).
fn full() -> bool {
    std::env::var("IOBENCH_FIO_FULL").as_deref() == Ok("1")
}

/// Options always checked in detail, sample or not.
const KEY_OPTIONS: &[&str] = &[
    "bs",
    "rw",
    "size",
    "runtime",
    "ramp_time",
    "startdelay",
    "thinktime",
    "iodepth",
    "ioengine",
    "direct",
    "time_based",
    "percentile_list",
    "verify",
    "filesize",
    "bsrange",
    "offset",
    "latency_target",
    "max_latency",
    "rate",
    "rate_iops",
    "numjobs",
    "kb_base",
    "hipri",
    "sqthread_poll",
    "fixedbufs",
    "cmdprio_percentage",
    "nowait",
    "userspace_reap",
];

/// Picks which options (in order) get a detailed fio run.
fn sample(names: &[String]) -> Vec<String> {
    names
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            full()
                || i % 4 == 0
                || KEY_OPTIONS.contains(&n.as_str())
                || lookup(n)
                    .is_some_and(|o| !o.aliases.is_empty() || matches!(o.kind, Kind::Choice(_)))
        })
        .map(|(_, n)| n.clone())
        .collect()
}

/// The option names of a `--cmdhelp=all` / `--enghelp=ENGINE` overview, with indentation.
fn tree_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim_end().to_string()))
        .filter(|n| !n.trim().is_empty())
        .collect()
}

/// One `--cmdhelp=NAME` block: the label of each line (the 20-column field) and the values.
#[derive(Debug, Default)]
struct Block {
    labels: Vec<String>,
    fields: BTreeMap<String, String>,
    values: Vec<String>,
}

fn parse_block(text: &str) -> Block {
    let mut b = Block::default();
    for (i, line) in text.lines().enumerate() {
        let Some((label, rest)) = line.split_once(": ") else {
            b.labels.push(line.trim().to_string());
            continue;
        };
        let label = label.trim().to_string();
        let rest = rest.trim().to_string();
        if i == 0 {
            b.labels.push("<name>".into());
            continue;
        }
        if label == "valid values" || (label.is_empty() && !b.values.is_empty()) {
            b.values
                .push(rest.split_whitespace().next().unwrap_or("").to_string());
        } else {
            b.fields.insert(label.clone(), rest);
        }
        b.labels.push(label);
    }
    b
}

/// The kinds of ours that fio's type line allows.
fn kind_agrees(fio_type: &str, kind: &Kind, has_values: bool) -> bool {
    match fio_type {
        "boolean value (opt=1)" | "empty or boolean value ([0|1])" => *kind == Kind::Bool,
        "string with time postfix (opt=10s)" => matches!(kind, Kind::Time(_)),
        "integer value (opt=100)" => matches!(
            kind,
            Kind::Int { .. } | Kind::IntList { .. } | Kind::SizeList | Kind::Time(_)
        ),
        "one to three ranges (opt=1k-4k[,4k-8k[,1k-8k]])" => *kind == Kind::RangeList,
        "list of floating point values separated by ':' (opt=5.9:7.8)" => *kind == Kind::FloatList,
        // fio has no type text for its zone-aware sizes.
        "(null)" => *kind == Kind::SizeOrPercent,
        "string with possible k/m/g postfix (opt=4k)" => matches!(kind, Kind::Choice(_)),
        "string (opt=bla)" if has_values => matches!(kind, Kind::Choice(_)),
        "string (opt=bla)" => matches!(
            kind,
            Kind::Str | Kind::Special | Kind::Size | Kind::RangeList
        ),
        other => panic!("fio type text not mapped: {other}"),
    }
}

/// Checks one option's fio block against our table entry and our own rendering.
fn check_block(name: &str, fio_text: &str, ours: &OptDef, our_text: &str, errs: &mut Vec<String>) {
    let f = parse_block(fio_text);
    let o = parse_block(our_text);
    if f.labels != o.labels {
        errs.push(format!(
            "{name}: labels {:?} vs ours {:?}",
            f.labels, o.labels
        ));
    }
    if ours.name != name {
        errs.push(format!("{name}: our canonical name is {}", ours.name));
    }
    if let Some(alias) = f.fields.get("alias") {
        if !ours.aliases.contains(&alias.as_str()) {
            errs.push(format!("{name}: alias {alias} missing"));
        }
        if lookup(alias).is_none() {
            errs.push(format!("{name}: alias {alias} not found by lookup"));
        }
    }
    let fio_default = f.fields.get("default").map(String::as_str);
    let fio_default = fio_default.filter(|d| *d != "no default");
    if fio_default != ours.default {
        errs.push(format!(
            "{name}: default {fio_default:?} vs ours {:?}",
            ours.default
        ));
    }
    let fio_type = f.fields.get("type").map(String::as_str).unwrap_or("");
    if !kind_agrees(fio_type, &ours.kind, !f.values.is_empty()) {
        errs.push(format!(
            "{name}: fio type '{fio_type}' vs our {:?}",
            ours.kind
        ));
    }
    if let Kind::Choice(choices) = ours.kind {
        // Values fio added after the installed fio's release are not in its list.
        let oldest = iobench::api::options::table::FioRelease::OLDEST;
        let mut words: Vec<String> = choices
            .iter()
            .filter(|(w, _)| ours.added_in(ours.name, Some(*w)) <= oldest.max(ours.since))
            .map(|(w, _)| w.to_string())
            .collect();
        let mut theirs = f.values.clone();
        // `ioengine`'s words come from the engines' declarations, grouped by engine type
        // (implemented ones first): the same set as fio's, in another order.
        if name == "ioengine" {
            words.sort_unstable();
            theirs.sort_unstable();
        }
        if words != theirs {
            errs.push(format!("{name}: choices {:?} vs ours {words:?}", f.values));
        }
    }
    if let Some(r) = f.fields.get("range") {
        let min = r.split(',').next().unwrap_or("");
        let ours_min = o
            .fields
            .get("range")
            .map(|r| r.split(',').next().unwrap_or(""));
        if Some(min) != ours_min {
            errs.push(format!("{name}: range {r} vs ours {ours_min:?}"));
        }
        if let (Some(max), Kind::Int { max: our_max, .. }) = (r.split("max=").nth(1), ours.kind) {
            let want = if max == "-1" {
                i64::MAX
            } else {
                max.parse().unwrap()
            };
            if want != our_max {
                errs.push(format!("{name}: max {max} vs ours {our_max}"));
            }
        }
    }
}

#[test]
fn every_general_option_agrees_with_fio() {
    if common::fio().is_none() {
        return;
    }
    let all = String::from_utf8_lossy(
        &Command::new("fio")
            .arg("--cmdhelp=all")
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    let mut names: BTreeSet<String> = tree_names(&all)
        .iter()
        .map(|n| n.trim().to_string())
        .collect();
    // fio's overview leaves out children it cannot place; ask about our other options too
    // (those of the installed fio's release: rows fio added later are checked by the
    // dialect tests).
    for o in OPTIONS.iter().filter(|o| {
        !o.is_engine_option()
            && o.kind != Kind::Deprecated
            && !o.iobench_only
            && o.since == iobench::api::options::table::FioRelease::OLDEST
    }) {
        names.insert(o.name.to_string());
    }
    let names: Vec<String> = names.into_iter().collect();
    let all_count = names.len();
    let names = sample(&names);
    let runs: Vec<Vec<String>> = names
        .iter()
        .map(|n| vec![format!("--cmdhelp={n}")])
        .collect();
    let outs = fio_many(&runs);
    let mut errs = Vec::new();
    for (name, fio_text) in names.iter().zip(&outs) {
        if !fio_text.starts_with(&format!("{name:>20}: ")) {
            errs.push(format!("{name}: fio does not know it (we do)"));
            continue;
        }
        let Some(ours) = lookup(name) else {
            errs.push(format!("{name}: unknown to iobench"));
            continue;
        };
        check_block(name, fio_text, ours, &help::cmdhelp(name).stdout, &mut errs);
    }
    assert!(
        errs.is_empty(),
        "{} disagreements:\n{}",
        errs.len(),
        errs.join("\n")
    );
    assert!(all_count > 200, "only {all_count} options");
    // Every name fio's overview prints is known, sampled or not.
    for n in tree_names(&all) {
        assert!(lookup(n.trim()).is_some(), "{n} unknown to iobench");
    }
}

#[test]
fn every_engine_option_agrees_with_fio() {
    if common::fio().is_none() {
        return;
    }
    let list = String::from_utf8_lossy(
        &Command::new("fio")
            .arg("--enghelp")
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    let engines: Vec<String> = list.lines().skip(1).map(|l| l.trim().to_string()).collect();
    assert!(engines.len() > 20, "{list}");
    let outs = fio_many(
        &engines
            .iter()
            .map(|e| vec![format!("--enghelp={e}")])
            .collect::<Vec<_>>(),
    );
    let mut errs = Vec::new();
    let mut runs = Vec::new();
    for (engine, text) in engines.iter().zip(&outs) {
        if iobench::api::options::table::engine(engine).is_none() {
            errs.push(format!("engine {engine} missing from ENGINES"));
        }
        let ours = help::enghelp(engine).stdout;
        if text.contains("has no options") {
            if !ours.contains("has no options") {
                errs.push(format!("{engine}: fio has no options, we list:\n{ours}"));
            }
            continue;
        }
        // Same names, same order, same nesting.
        if tree_names(text) != tree_names(&ours) {
            errs.push(format!(
                "{engine}: options {:?} vs ours {:?}",
                tree_names(text),
                tree_names(&ours)
            ));
        }
        for n in tree_names(text) {
            runs.push((engine.clone(), n.trim().to_string()));
        }
    }
    let args: Vec<Vec<String>> = runs
        .iter()
        .map(|(e, n)| vec![format!("--enghelp={e},{n}")])
        .collect();
    let details = fio_many(&args);
    for ((engine, name), fio_text) in runs.iter().zip(&details) {
        let Some(ours) = lookup(name) else {
            errs.push(format!("{engine}/{name}: unknown to iobench"));
            continue;
        };
        if !ours.engines.contains(&engine.as_str()) {
            errs.push(format!(
                "{engine}/{name}: engine not listed in {:?}",
                ours.engines
            ));
        }
        let mine = help::enghelp(&format!("{engine},{name}")).stdout;
        check_block(name, fio_text, ours, &mine, &mut errs);
    }
    assert!(
        errs.is_empty(),
        "{} disagreements:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

#[test]
fn cmdhelp_all_nests_like_fio() {
    let Some(mut fio) = common::fio() else { return };
    let theirs = String::from_utf8_lossy(
        &common::run({
            fio.arg("--cmdhelp=all");
            fio
        })
        .stdout,
    )
    .into_owned();
    for arg in ["--cmdhelp=all", "--cmdhelp"] {
        let out = common::run({
            let mut c = common::iobench();
            c.arg(arg);
            c
        });
        assert!(out.status.success());
        let ours = String::from_utf8_lossy(&out.stdout);
        assert_eq!(tree_names(&ours), tree_names(&theirs), "{arg}");
    }
}

#[test]
fn cmdhelp_bs_has_fios_lines() {
    let Some(mut fio) = common::fio() else { return };
    let theirs = common::run({
        fio.arg("--cmdhelp=bs");
        fio
    });
    let ours = common::run({
        let mut c = common::iobench();
        c.arg("--cmdhelp=bs");
        c
    });
    assert!(ours.status.success());
    let (t, o) = (
        parse_block(&String::from_utf8_lossy(&theirs.stdout)),
        parse_block(&String::from_utf8_lossy(&ours.stdout)),
    );
    assert_eq!(t.labels, o.labels);
    assert_eq!(
        t.labels,
        ["<name>", "alias", "type", "default", "range", ""]
    );
    assert_eq!(t.fields["alias"], o.fields["alias"]);
    assert_eq!(t.fields["default"], o.fields["default"]);
}

#[test]
fn enghelp_io_uring_lists_fios_options() {
    let Some(mut fio) = common::fio() else { return };
    let theirs = common::run({
        fio.arg("--enghelp=io_uring");
        fio
    });
    let ours = common::run({
        let mut c = common::iobench();
        c.arg("--enghelp=io_uring");
        c
    });
    assert!(ours.status.success());
    let names = tree_names(&String::from_utf8_lossy(&ours.stdout));
    assert_eq!(tree_names(&String::from_utf8_lossy(&theirs.stdout)), names);
    assert!(names.iter().any(|n| n == "sqthread_poll"), "{names:?}");
}

#[test]
fn unknown_cmdhelp_name_suggests_the_closest() {
    let out = common::run({
        let mut c = common::iobench();
        c.arg("--cmdhelp=bsx");
        c
    });
    assert!(String::from_utf8_lossy(&out.stderr).contains("No such command: bsx"));
    assert!(
        !out.status.success(),
        "an unknown name fails (fio 3.33 exits 0)"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with(" - showing closest match\n"), "{text}");
    assert!(text.contains("                  bs: "), "{text}");
}

#[test]
fn enghelp_lists_engines_and_refuses_unknown_ones() {
    let out = common::run({
        let mut c = common::iobench();
        c.arg("--enghelp");
        c
    });
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Available IO engines:\n"), "{text}");
    assert!(text.contains("\tpsync\n"), "{text}");
    let bad = common::run({
        let mut c = common::iobench();
        c.arg("--enghelp=io_urin");
        c
    });
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("did you mean 'io_uring'"));
}

/// Every option still marked not-yet is refused on the command line with the standard
/// message, so none can be silently ignored.
#[test]
fn not_yet_options_are_refused() {
    let not_yet: Vec<&OptDef> = OPTIONS
        .iter()
        .filter(|o| o.support == Support::NotYet)
        .collect();
    assert!(!not_yet.is_empty());
    for o in not_yet {
        let out = common::run({
            let mut c = common::iobench();
            c.args(["--parse-only", "--name=x", "--size=1m"])
                .arg(format!("--{}=1", o.name));
            c
        });
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{} accepted", o.name);
        assert!(
            err.contains(&format!("option '{}' is not supported yet", o.name)),
            "{}: {err}",
            o.name
        );
    }
}

#[test]
fn names_and_aliases_are_unique() {
    let mut seen = BTreeMap::new();
    for o in OPTIONS {
        for n in std::iter::once(&o.name).chain(o.aliases) {
            // fio itself gives `proto` to two engines' options (net's protocol, rdma's verb).
            if *n == "proto" {
                continue;
            }
            assert!(seen.insert(*n, o.name).is_none(), "{n} defined twice");
        }
    }
}

/// docs/options.md is the table rendered; `IOBENCH_BLESS=1` rewrites it.
#[test]
fn options_doc_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/options.md");
    let want = help::markdown();
    if std::env::var("IOBENCH_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/options.md is out of date with the option table; run \
         `IOBENCH_BLESS=1 cargo test --test cli option_table::` to regenerate it"
    );
}

/// A supported option with a not-yet value is refused, naming the value, not ignored.
#[test]
fn not_yet_values_are_refused() {
    for (arg, shown) in [
        ("--ioengine=rbd", "ioengine=rbd"),
        ("--ioengine=external:/x.so", "ioengine=external:/x.so"),
    ] {
        let out = common::run({
            let mut c = common::iobench();
            c.args(["--parse-only", "--name=x", "--size=1m", arg]);
            c
        });
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{arg} accepted");
        assert!(
            err.contains(&format!("option '{shown}' is not supported yet")),
            "{arg}: {err}"
        );
    }
    let ok = common::run({
        let mut c = common::iobench();
        c.args(["--parse-only", "--name=x", "--size=1m", "--verify=0"]);
        c.arg("--ioengine=psync");
        c
    });
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// Real-world value forms of options (supported or not) pass the value check, so options
/// become usable as soon as their `.not_yet()` goes.
#[test]
fn real_value_forms_validate() {
    use iobench::api::options::value::validate;
    let cases = [
        ("rw", "randread:8"),
        ("rw", "randrw"),
        ("random_distribution", "zipf:1.2"),
        ("random_distribution", "zoned:60/10:30/20:10/70"),
        ("file_service_type", "random:4"),
        ("sync_file_range", "wait_before,write:8"),
        ("bssplit", "4k/10:64k/50:32k/40"),
        ("cpus_allowed", "0-3,6"),
        ("verify_pattern", "0xff00ff"),
        ("steadystate", "iops_slope:0.1%"),
        ("mem", "mmaphuge:/hugepages/file"),
        ("startdelay", "1-5"),
        ("max_latency", "10ms,20ms"),
        ("rate", "1m,500k"),
        ("rate_iops", "500,200"),
        ("percentage_random", "50,20"),
        ("cmdprio_percentage", "30,10"),
        ("bs", "4k,,8k"),
        ("bsrange", "1k-4k,2k-8k"),
        ("filesize", "1k-4k"),
        ("size", "20%"),
        ("runtime", "2m"),
        ("thinktime", "500"),
        ("percentile_list", "99:99.9:99.99"),
        ("time_based", "1"),
        ("unified_rw_reporting", "both"),
        ("kb_base", "1000"),
        ("ioengine", "io_uring"),
        ("nice", "-5"),
    ];
    for (name, v) in cases {
        let def = lookup(name).unwrap_or_else(|| panic!("{name} unknown"));
        validate(def, Some(v)).unwrap_or_else(|e| panic!("{name}={v}: {e}"));
    }
    assert!(validate(lookup("time_based").unwrap(), None).is_ok());
}
