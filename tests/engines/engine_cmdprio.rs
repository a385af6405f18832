//! cmdprio_percentage, cmdprio_class, cmdprio and cmdprio_bssplit with libaio and io_uring,
//! side by side with fio 3.33: each priority's completion latency is reported apart, in
//! fio's normal-output lines (`clat prio 1/0 (usec): …`, `clat prio 1/0 (30.00% of IOs)
//! percentiles`) and its JSON `prios` array (fio 3.33's form of the older
//! `high_prio`/`low_prio` keys), with the asked share of I/Os at the asked priority.

use crate::common;

use std::process::Command;

fn job(mut tool: Command, file: &std::path::Path, engine: &str, args: &[&str]) -> Command {
    tool.args([
        "--name=p",
        "--rw=randread",
        "--size=4m",
        "--iodepth=4",
        "--direct=1",
    ])
    .arg(format!("--ioengine={engine}"))
    .arg(format!("--filename={}", file.display()))
    .args(args);
    tool
}

/// Each priority's (class, level, samples) and the read total from a JSON report.
fn prios(out: &std::process::Output) -> (Vec<(u64, u64, u64)>, u64, Vec<String>) {
    let v = common::json_report(out);
    let r = &v["jobs"][0]["read"];
    let total = r["clat_ns"]["N"].as_u64().unwrap();
    let arr = r["prios"].as_array().cloned().unwrap_or_default();
    let keys = arr
        .first()
        .and_then(|o| o.as_object())
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let list = arr
        .iter()
        .map(|p| {
            (
                p["prioclass"].as_u64().unwrap(),
                p["prio"].as_u64().unwrap(),
                p["clat_ns"]["N"].as_u64().unwrap(),
            )
        })
        .collect();
    (list, total, keys)
}

fn data_file(name: &str) -> std::path::PathBuf {
    let f = common::scratch(name).join("f");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    f
}

#[test]
fn percentage_splits_latency_by_priority_like_fio() {
    let f = data_file("cmdprio_pct");
    for engine in ["libaio", "io_uring"] {
        let args = ["--bs=4k", "--cmdprio_percentage=30", "--output-format=json"];
        let out = common::run_ok(job(common::iobench(), &f, engine, &args));
        let (list, total, keys) = prios(&out);
        assert_eq!(list.len(), 2, "{engine}: {list:?}");
        assert_eq!((list[0].0, list[0].1), (0, 0), "default priority first");
        assert_eq!(
            (list[1].0, list[1].1),
            (1, 0),
            "cmdprio_class defaults to RT"
        );
        assert_eq!(list[0].2 + list[1].2, total);
        let share = list[1].2 as f64 / total as f64;
        assert!((0.24..0.36).contains(&share), "{engine}: {share}");
        if let Some(fio) = common::fio() {
            let theirs = prios(&common::run_ok(job(fio, &f, engine, &args)));
            assert_eq!(keys, theirs.2, "{engine}: same keys in each prios entry");
            let pairs = |l: &[(u64, u64, u64)]| l.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
            assert_eq!(pairs(&list), pairs(&theirs.0), "{engine}");
        }
    }
}

/// The lines of a normal report that name priorities, with numbers dropped.
fn prio_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" prio "))
        .map(|l| {
            let cut = l.find(": min=").or_else(|| l.find(" (")).unwrap_or(l.len());
            let head = &l[..cut];
            let tail = if l.contains("% of IOs") {
                " percentiles"
            } else {
                ""
            };
            format!("{head}{tail}")
        })
        .collect()
}

#[test]
fn normal_output_has_fios_prio_lines() {
    let f = data_file("cmdprio_normal");
    let args = [
        "--bs=4k",
        "--cmdprio_percentage=40",
        "--cmdprio_class=2",
        "--cmdprio=3",
    ];
    let out = common::run_ok(job(common::iobench(), &f, "libaio", &args));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let ours = prio_lines(&text);
    assert_eq!(
        ours,
        [
            "    clat prio 0/0 (usec)",
            "    clat prio 2/3 (usec)",
            "    clat prio 0/0 percentiles",
            "    clat prio 2/3 percentiles",
        ],
        "{text}"
    );
    if let Some(fio) = common::fio() {
        let theirs = common::run_ok(job(fio, &f, "libaio", &args));
        let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
        assert_eq!(ours, prio_lines(&theirs), "{theirs}");
    }
}

#[test]
fn bssplit_gives_each_block_size_its_priority() {
    let f = data_file("cmdprio_bssplit");
    let args = [
        "--bssplit=4k/50:8k/50",
        "--cmdprio_bssplit=4k/100/1/5:8k/0",
        "--output-format=json",
    ];
    let out = common::run_ok(job(common::iobench(), &f, "io_uring", &args));
    let (list, total, _) = prios(&out);
    let pairs: Vec<(u64, u64)> = list.iter().map(|p| (p.0, p.1)).collect();
    assert_eq!(pairs, [(0, 0), (1, 5)], "{list:?}");
    // Every 4 KiB read is at 1/5, every 8 KiB one at the default: about half and half
    // of the I/Os by count.
    let share = list[1].2 as f64 / total as f64;
    assert!((0.4..0.8).contains(&share), "{share}");
    if let Some(fio) = common::fio() {
        let theirs = prios(&common::run_ok(job(fio, &f, "io_uring", &args)));
        let tp: Vec<(u64, u64)> = theirs.0.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(pairs, tp);
    }
}

#[test]
fn group_reporting_merges_priorities() {
    let f = data_file("cmdprio_group");
    let args = [
        "--bs=4k",
        "--cmdprio_percentage=50",
        "--numjobs=2",
        "--group_reporting",
        "--output-format=json",
    ];
    let (list, total, _) = prios(&common::run_ok(job(common::iobench(), &f, "libaio", &args)));
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].2 + list[1].2, total);
    assert_eq!(total, 2 * 1024);
}

#[test]
fn bad_cmdprio_values_are_refused() {
    let f = data_file("cmdprio_bad");
    for (args, why) in [
        (
            &["--cmdprio_bssplit=4k/50", "--cmdprio_percentage=10"][..],
            "cannot be used together",
        ),
        (&["--cmdprio_bssplit=4k/50/1"], "bs/percent"),
        (&["--cmdprio_bssplit=4k/150"], "bs/percent"),
    ] {
        let out = common::run(job(common::iobench(), &f, "libaio", args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(why),
            "{args:?}: {err}"
        );
    }
}
