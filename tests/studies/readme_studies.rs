//! The README's study examples (seeds 000, 001 and 004: compare, sweep, report), read
//! from the README and run as written by a shell, with only the sizes, times, ranges and
//! paths scaled to seconds in a scratch directory: a README whose commands stop working
//! fails here.

use crate::common::scratch;
use std::path::{Path, PathBuf};

/// The README's indented command blocks that start with `starts`, each joined across its
/// `\` continuations.
fn readme_commands(starts: &str) -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut out = Vec::new();
    let mut lines = readme.lines().map(str::trim).peekable();
    while let Some(l) = lines.next() {
        if !l.starts_with(starts) {
            continue;
        }
        let mut cmd = l.to_string();
        while cmd.ends_with('\\') {
            cmd.pop();
            cmd.push_str(lines.next().unwrap_or(""));
        }
        out.push(cmd);
    }
    out
}

/// `text` with each `(from, to)` replaced; every `from` must be there (a README edit that
/// drops one fails the test rather than running the unscaled command).
fn scaled(text: &str, subs: &[(&str, &str)]) -> String {
    let mut t = text.to_string();
    for (from, to) in subs {
        assert!(
            t.contains(from),
            "the README's command lost '{from}': {text}"
        );
        t = t.replace(from, to);
    }
    t
}

/// Runs `script` with bash in `dir`, the built iobench first on PATH.
fn shell(dir: &Path, script: &str) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_iobench")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{script}\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json(path: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Seed 000: five kept runs, then `compare` judging them against five new runs.
#[test]
fn the_driver_change_comparison_runs_as_written() {
    let dir = scratch("readme_seed000");
    // The seed's job (libaio, direct, 4K, QD256, randread, runtime=60s) on a small file.
    std::fs::write(
        dir.join("read_iops.fio"),
        "[read_iops]\nioengine=libaio\ndirect=1\nbs=4K\niodepth=256\nrw=randread\n\
         runtime=60s\nsize=2m\nfilename=read_iops.dat\n",
    )
    .unwrap();
    let loop_line = readme_commands("for i in 1 2 3 4 5; do iobench");
    let compare = readme_commands("iobench compare --repeat 5");
    assert_eq!(
        (loop_line.len(), compare.len()),
        (1, 1),
        "seed 000's two lines"
    );
    let o = shell(&dir, &format!("{}\n{}", loop_line[0], compare[0]));
    for i in 1..=5 {
        let doc = json(dir.join(format!("bot-{i}.json")));
        assert_eq!(doc["jobs"][0]["jobname"], "read_iops");
    }
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("BOT") && table.contains("UAS"),
        "sides named as asked: {table}"
    );
}

/// Seed 001: directories × engines in one sweep, one JSON+ per point and an index.
#[test]
fn the_stripes_sweep_runs_as_written() {
    let dir = scratch("readme_seed001");
    for md in ["md2", "md4", "md8"] {
        std::fs::create_dir_all(dir.join(md)).unwrap();
    }
    let sweeps = readme_commands("iobench sweep --axis directory=");
    assert_eq!(sweeps.len(), 1, "seed 001's sweep");
    let cmd = scaled(
        &sweeps[0],
        &[
            ("/mnt/", "./"),
            ("--size=1G", "--size=1m"),
            ("--numjobs=16", "--numjobs=2"),
            ("--runtime=60", "--runtime=300ms"),
        ],
    );
    shell(&dir, &cmd);
    let index = json(dir.join("stripes/index.json"));
    let points = index["points"].as_array().unwrap();
    assert_eq!(points.len(), 6, "3 directories × 2 engines");
    for p in points {
        assert_eq!(p["failed"], false, "{p}");
        assert!(p["write"]["iops"].as_f64().unwrap() > 0.0, "{p}");
    }
}

/// Seed 004: block size × queue depth, then the HTML report of the sweep.
#[test]
fn the_block_size_and_depth_study_runs_as_written() {
    let dir = scratch("readme_seed004");
    let sweeps = readme_commands("iobench sweep --axis bs=");
    let reports = readme_commands("iobench report bsqd");
    assert_eq!(
        (sweeps.len(), reports.len()),
        (1, 1),
        "seed 004's two lines"
    );
    let cmd = scaled(
        &sweeps[0],
        &[
            ("bs=1k..32m:x2", "bs=4k..16k:x2"),
            ("iodepth=1..128:x2", "iodepth=1..4:x2"),
            ("/data/q.dat", "q.dat"),
            ("--size=256m", "--size=1m"),
        ],
    );
    assert!(
        cmd.contains("--repeat 3"),
        "the README's sweep repeats: {cmd}"
    );
    shell(&dir, &format!("{cmd}\n{}", reports[0]));
    let index = json(dir.join("bsqd/index.json"));
    assert_eq!(
        index["points"].as_array().unwrap().len(),
        9,
        "3 sizes × 3 depths"
    );
    let html = std::fs::read_to_string(dir.join("bsqd.html")).unwrap();
    assert!(
        html.contains("27 run(s), 9 point(s)"),
        "every point and repeat reported"
    );
    assert!(
        html.contains("data-kind=\"heatmap\""),
        "the heat map of two numeric axes"
    );
}

/// The README's `--live=-` pipeline prints each interval's IOPS and no trailing 0 from the
/// final line (the remainder since the last interval, there to be summed).
#[test]
fn the_live_pipeline_prints_no_trailing_zero() {
    let dir = scratch("readme_live");
    let lines = readme_commands("iobench --live=-");
    assert_eq!(lines.len(), 1, "the README's live line");
    let line = lines[0].split("  #").next().unwrap().trim();
    let cmd = scaled(
        line,
        &[(
            "jobfile.fio",
            "--name=x --ioengine=null --rw=read --size=1g --runtime=2200ms --time_based --rate_iops=500",
        )],
    );
    let o = shell(&dir, &cmd);
    let vals: Vec<f64> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("{l:?} in {cmd}"))
        })
        .collect();
    assert!(vals.len() >= 2, "{vals:?}");
    assert!(
        vals.iter().all(|&v| v > 100.0),
        "a 0 or a stray value: {vals:?}"
    );
}
