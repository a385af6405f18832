//! `iobench quick`: its presets' commands against the fio jobs KDiskMark runs (written out
//! here from KDiskMark's helper, option for option), real fio parsing each of them, a real
//! small run (every test reported, numbers consistent, loops combined by the preset's rule,
//! the test file removed), and its refusals.

use crate::common;

use common::{iobench, run, run_ok, scratch};
use serde_json::Value;
use std::path::Path;

/// KDiskMark's tests per preset: (sequential, block size KiB, queues, threads).
fn kdiskmark_tests(preset: &str) -> Vec<(bool, u32, u32, u32)> {
    match preset {
        "default" => vec![
            (true, 1024, 8, 1),
            (true, 1024, 1, 1),
            (false, 4, 32, 1),
            (false, 4, 1, 1),
        ],
        "nvme" => vec![
            (true, 1024, 8, 1),
            (true, 128, 32, 1),
            (false, 4, 32, 16),
            (false, 4, 1, 1),
        ],
        "peak" => vec![(true, 1024, 8, 1), (false, 4, 32, 1)],
        "peak-nvme" => vec![(true, 1024, 8, 1), (false, 4, 32, 16)],
        "real-world" => vec![(true, 1024, 1, 1), (false, 4, 1, 1)],
        "demo" => vec![(true, 1024, 8, 1)],
        _ => unreachable!(),
    }
}

/// The fio command KDiskMark's helper starts for one test: its options in its order, with
/// KDiskMark's defaults (random data, no continuous generation, O_DIRECT, 70 % reads).
fn kdiskmark_command(
    file: &str,
    size_mib: u32,
    secs: u32,
    t: (bool, u32, u32, u32),
    write: bool,
) -> String {
    let (seq, bs, q, th) = t;
    let rw = match (seq, write) {
        (true, false) => "read",
        (true, true) => "write",
        (false, false) => "randread",
        (false, true) => "randwrite",
    };
    format!(
        "fio --output-format=json --ioengine=libaio --randrepeat=0 --refill_buffers=0 \
         --end_fsync=1 --direct=1 --rwmixread=70 --filename={file} --name={rw} \
         --size={size_mib}m --zero_buffers=0 --bs={bs}k --runtime={secs} --rw={rw} \
         --iodepth={q} --numjobs={th} --group_reporting"
    )
}

fn dry_run(preset: &str, dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut cmd = iobench();
    cmd.args(["quick", "--dry-run", "--preset", preset, "--loops", "5"])
        .args(["--size", "1g", "--duration", "5", "--interval", "5"])
        .args(extra)
        .arg(dir);
    let out = run_ok(cmd);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("fio "))
        .map(str::to_string)
        .collect()
}

fn file_of(cmd: &str) -> String {
    cmd.split(' ')
        .find_map(|a| a.strip_prefix("--filename="))
        .expect("a --filename")
        .to_string()
}

#[test]
fn each_presets_commands_are_kdiskmarks_jobs() {
    let dir = scratch("quick_presets");
    for preset in ["default", "nvme", "peak", "peak-nvme", "real-world", "demo"] {
        let lines = dry_run(preset, &dir, &[]);
        let file = file_of(&lines[0]);
        assert!(
            file.starts_with(&dir.display().to_string()) && file.ends_with(".tmp"),
            "{file}"
        );
        let mut want = vec![format!(
            "fio --output-format=json --create_only=1 --filename={file} --size=1024m \
             --zero_buffers=0 --name=prepare"
        )];
        for write in [false, true] {
            for t in kdiskmark_tests(preset) {
                want.push(kdiskmark_command(&file, 1024, 5, t, write));
            }
        }
        assert_eq!(lines, want, "preset {preset}");
    }
    // A dry run creates nothing.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn mix_and_mode_select_kdiskmarks_other_jobs() {
    let dir = scratch("quick_mix");
    let lines = dry_run("peak", &dir, &["--mix=60", "--mode", "write"]);
    let rws: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(' ').find_map(|a| a.strip_prefix("--rw=")).unwrap())
        .collect();
    assert_eq!(rws, ["write", "randwrite", "rw", "randrw"]);
    assert!(lines[3].contains("--rwmixread=60"), "{}", lines[3]);
}

#[test]
fn fio_parses_every_command() {
    let Some(_) = common::fio() else { return };
    // One test file path for every dry run, so that the presets' shared commands are
    // parsed once.
    let file = scratch("quick_fio_parse").join("t.tmp");
    let mut all = Vec::new();
    for preset in ["default", "nvme", "peak", "peak-nvme", "real-world", "demo"] {
        all.extend(dry_run(preset, &file, &[]));
    }
    all.extend(dry_run("default", &file, &["--mix"]));
    all.extend(dry_run(
        "demo",
        &file,
        &["--zero-buffers", "--refill-buffers"],
    ));
    all.sort();
    all.dedup();
    // fio spends a tenth of a second of CPU starting: all at once.
    let children: Vec<_> = all
        .iter()
        .map(|line| {
            let args: Vec<&str> = line.split(' ').skip(1).collect();
            // (common::fio() checked above that fio is there.)
            let mut cmd = std::process::Command::new("fio");
            cmd.arg("--parse-only")
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            (line, cmd.spawn().expect("spawn fio"))
        })
        .collect();
    assert!(children.len() >= 18, "{}", children.len());
    for (line, child) in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "fio refused {line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn quick_json(dir: &Path, args: &[&str]) -> Value {
    let mut cmd = iobench();
    cmd.arg("quick")
        .args(args)
        .args(["--no-drop-caches", "--output-format=json"])
        .arg(dir);
    let out = run_ok(cmd);
    serde_json::from_slice(&out.stdout).expect("quick's JSON parses")
}

#[test]
fn a_real_run_reports_every_test_and_removes_its_file() {
    let dir = scratch("quick_real");
    let doc = quick_json(
        &dir,
        &[
            "--preset",
            "real-world",
            "--size",
            "8m",
            "--loops",
            "2",
            "--duration",
            "300ms",
        ],
    );
    let q = &doc["iobench_quick"];
    assert_eq!(q["aggregate"], "best");
    assert_eq!(q["file_created"], true);
    let file = q["file"].as_str().unwrap();
    assert!(file.starts_with(&dir.display().to_string()), "{file}");
    // The file is gone, and nothing else was left behind.
    assert!(!Path::new(file).exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let results = doc["results"].as_array().unwrap();
    let tests: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r["test"].as_str().unwrap(), r["rw"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tests,
        [
            ("SEQ1M Q1T1", "read"),
            ("RND4K Q1T1", "randread"),
            ("SEQ1M Q1T1", "write"),
            ("RND4K Q1T1", "randwrite")
        ]
    );
    for r in results {
        let loops = r["loops"].as_array().unwrap();
        assert_eq!(loops.len(), 2);
        let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
        let bs = r["bs"].as_f64().unwrap();
        for l in loops {
            assert!(f(l, "iops") > 0.0 && f(l, "lat_us") > 0.0, "{l}");
            // MB/s is bytes/s over 10^6: IOPS × block size, to fio's rounding.
            let mb = f(l, "iops") * bs / 1e6;
            assert!((f(l, "mb_s") - mb).abs() <= mb * 0.01 + 0.01, "{l} bs {bs}");
        }
        // Real World keeps the best loop: highest MB/s and IOPS, lowest latency.
        let best = |k: &str, hi: bool| {
            loops
                .iter()
                .map(|l| f(l, k))
                .fold(if hi { f64::MIN } else { f64::MAX }, |a, b| {
                    if hi {
                        a.max(b)
                    } else {
                        a.min(b)
                    }
                })
        };
        assert_eq!(f(r, "mb_s"), best("mb_s", true));
        assert_eq!(f(r, "iops"), best("iops", true));
        assert_eq!(f(r, "lat_us"), best("lat_us", false));
        assert!(r["fio_command"]
            .as_str()
            .unwrap()
            .starts_with("fio --output-format=json"));
    }
    // The context: the target is the test file, described while it existed.
    let env = &doc["iobench_env"];
    assert_eq!(env["targets"][0]["path"], file);
    assert_eq!(env["targets"][0]["type"], "file");
    assert_eq!(env["jobs"].as_array().unwrap().len(), 4);
    assert_eq!(env["options_sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn the_default_preset_averages_and_prints_kdiskmarks_lines() {
    let dir = scratch("quick_text");
    let mut cmd = iobench();
    cmd.args([
        "quick",
        "--size",
        "4m",
        "--loops",
        "1",
        "--duration",
        "200ms",
    ])
    .args(["--no-drop-caches", "--mode", "read"])
    .arg(&dir);
    let out = run_ok(cmd);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(" MB/s [")).collect();
    assert_eq!(lines.len(), 4, "{text}");
    let titles = [
        "Sequential 1 MiB (Q= 8, T= 1):",
        "Sequential 1 MiB (Q= 1, T= 1):",
        "Random 4 KiB (Q= 32, T= 1):",
        "Random 4 KiB (Q= 1, T= 1):",
    ];
    for (l, title) in lines.iter().zip(titles) {
        // Right-aligned in 80 columns; a slow run's wider numbers push past them, as in
        // KDiskMark, with no padding left.
        assert!(
            l.len() == 80 || (l.len() > 80 && !l.starts_with(' ')),
            "{l:?}"
        );
        let words: Vec<&str> = l.split_whitespace().collect();
        let joined = words.join(" ");
        assert!(joined.starts_with(title), "{joined}");
        // `NNN.NNN MB/s [ NNN.N IOPS] < NNN.NN us>`: 3, 1 and 2 decimals.
        let n = words.len();
        assert_eq!(
            [
                words[n - 7],
                words[n - 6],
                words[n - 4],
                words[n - 3],
                words[n - 1]
            ],
            ["MB/s", "[", "IOPS]", "<", "us>"],
            "{joined}"
        );
        for (w, decimals) in [(words[n - 8], 3), (words[n - 5], 1), (words[n - 2], 2)] {
            let frac = w.split_once('.').map(|(_, f)| f.len());
            assert_eq!(frac, Some(decimals), "{w} in {joined}");
        }
    }
    assert!(
        text.contains("[Read]") && !text.contains("[Write]"),
        "{text}"
    );
    assert!(
        text.contains("Profile: Default") && text.contains("average"),
        "{text}"
    );
    assert!(text.contains(" Target: "), "{text}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    // Averaging, in JSON: each of the Default preset's results is the mean of its loops.
    let doc = quick_json(
        &dir,
        &[
            "--mode",
            "read",
            "--size",
            "4m",
            "--loops",
            "2",
            "--duration",
            "200ms",
        ],
    );
    assert_eq!(doc["iobench_quick"]["aggregate"], "average");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        let loops = r["loops"].as_array().unwrap();
        assert_eq!(loops.len(), 2);
        for k in ["mb_s", "iops", "lat_us"] {
            let mean = loops.iter().map(|l| l[k].as_f64().unwrap()).sum::<f64>() / 2.0;
            let got = r[k].as_f64().unwrap();
            assert!(
                (got - mean).abs() <= mean * 1e-9,
                "{k}: {got} vs mean {mean}"
            );
        }
    }
}

#[test]
fn an_existing_file_with_data_is_refused_without_force() {
    let dir = scratch("quick_refuse_file");
    let f = dir.join("data.bin");
    std::fs::write(&f, b"precious").unwrap();
    let mut cmd = iobench();
    cmd.args([
        "quick",
        "--size",
        "1m",
        "--loops",
        "1",
        "--duration",
        "100ms",
        "--no-drop-caches",
    ])
    .arg(&f);
    let out = run(cmd);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("existing file with data") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"precious");
    // A path that does not exist yet is created, used and removed.
    let new = dir.join("new.bin");
    let mut cmd = iobench();
    cmd.args(["quick", "--preset", "demo", "--size", "2m", "--loops", "1"])
        .args(["--duration", "100ms", "--no-drop-caches"])
        .arg(&new);
    run_ok(cmd);
    assert!(!new.exists());
    // With --force the file is used, and kept (quick did not create it).
    let mut cmd = iobench();
    cmd.args(["quick", "--preset", "demo", "--size", "2m", "--loops", "1"])
        .args(["--duration", "100ms", "--no-drop-caches", "--force"])
        .arg(&f);
    run_ok(cmd);
    assert!(f.exists());
}

#[test]
fn a_device_is_refused_without_force() {
    // A character device: refused, nothing run.
    let out = run({
        let mut c = iobench();
        c.args(["quick", "/dev/null"]);
        c
    });
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a device") && err.contains("--force"),
        "{err}"
    );
    // A block device (a loop device over a sparse image): refused, the image untouched;
    // with --force it is tested in place and left there.
    let Some(lo) = common::loopdev::Loop::new("quick_loop", "16M") else {
        return;
    };
    let out = run({
        let mut c = iobench();
        c.args([
            "quick",
            "--size",
            "4m",
            "--loops",
            "1",
            "--duration",
            "100ms",
            "--no-drop-caches",
        ])
        .arg(&lo.dev);
        c
    });
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    let img = std::fs::read(&lo.img).unwrap();
    assert!(
        img.iter().all(|&b| b == 0),
        "the refused device was written to"
    );
    let mut c = iobench();
    c.args(["quick", "--preset", "demo", "--size", "4m", "--loops", "1"])
        .args([
            "--duration",
            "100ms",
            "--no-drop-caches",
            "--force",
            "--output-format=json",
        ])
        .arg(&lo.dev);
    let out = run_ok(c);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["iobench_quick"]["file_created"], false);
    assert_eq!(doc["iobench_env"]["targets"][0]["type"], "block");
    assert!(Path::new(&lo.dev).exists());
    assert!(std::fs::read(&lo.img).unwrap().iter().any(|&b| b != 0));
}

#[test]
fn bad_options_name_the_option_and_the_expected_form() {
    for (args, want) in [
        (&["--loops", "x"][..], "--loops"),
        (&["--preset", "turbo"][..], "--preset"),
        (&["--duration=abc"][..], "--duration"),
        (&["--bogus"][..], "--bogus"),
        (&["--output-format=xml"][..], "--output-format"),
    ] {
        let out = run({
            let mut c = iobench();
            c.arg("quick").args(args).arg("--dry-run");
            c
        });
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Every key path of a JSON document (arrays by index), for comparing layouts.
fn key_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{prefix}/{k}");
                out.push(p.clone());
                key_paths(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                key_paths(x, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn a_session_run_reports_as_a_plain_run_of_the_same_job() {
    // quick's measurements go through iobench::api::session: its report of a job is the plain
    // run's, key for key, with the same I/O counted.
    let dir = scratch("quick_session");
    let args: Vec<String> = vec![
        "--output-format=json".into(),
        "--name=s".into(),
        format!("--filename={}", dir.join("s.dat").display()),
        "--size=2m".into(),
        "--bs=16k".into(),
        "--rw=randwrite".into(),
        "--randrepeat=0".into(),
        "--group_reporting".into(),
    ];
    let f = iobench::api::session::run_args(&args).expect("session run");
    assert_eq!(f.code, 0);
    let ours: Value = serde_json::from_str(&f.report()).unwrap();
    // The session runs in this process's dialect (the default), so the plain run does too.
    let plain: Value = serde_json::from_slice(
        &run_ok({
            let mut c = common::iobench_default();
            c.args(&args);
            c
        })
        .stdout,
    )
    .unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    key_paths(&ours, "", &mut a);
    key_paths(&plain, "", &mut b);
    assert_eq!(a, b);
    for k in ["total_ios", "io_bytes", "short_ios", "drop_ios"] {
        assert_eq!(
            ours["jobs"][0]["write"][k], plain["jobs"][0]["write"][k],
            "{k}"
        );
    }
    assert_eq!(ours["jobs"][0]["write"]["total_ios"], 128);
    assert_eq!(
        ours["jobs"][0]["job options"],
        plain["jobs"][0]["job options"]
    );
}

/// A hang-up (the terminal closed) stops the run and still removes the test file, as
/// SIGINT and SIGTERM do.
#[test]
fn a_hangup_still_removes_the_test_file() {
    let dir = scratch("quick_hup");
    let mut cmd = iobench();
    cmd.arg("quick")
        .args(["--preset", "demo", "--size", "8m", "--duration", "30s"])
        .args(["--no-drop-caches", "--output-format=json"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Wait for the test file, then for the run to be under way.
    let t0 = std::time::Instant::now();
    while std::fs::read_dir(&dir).unwrap().count() == 0 {
        assert!(t0.elapsed().as_secs() < 20, "no test file appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: the child is ours and not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let _ = common::wait_for(child, 20);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A test whose file is done long before its measure time (1 MiB in a 2 s test) is
/// warned about, with the numbers, on stderr and in the report; progress says which run
/// of how many, one line each off a terminal.
#[test]
fn a_test_far_shorter_than_its_measure_time_is_warned_about() {
    let dir = scratch("quick_short");
    let f = dir.join("short.bin");
    let mut cmd = iobench();
    cmd.args(["quick", "--preset", "demo", "--size", "1m", "--loops", "2"])
        .args(["--duration", "2s", "--no-drop-caches"])
        .arg(&f);
    let out = run_ok(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    for d in ["read", "write"] {
        let w = format!("quick: warning: SEQ1M Q8T1 {d} ran ");
        let line = err
            .lines()
            .find(|l| l.starts_with(&w))
            .unwrap_or_else(|| panic!("no warning for {d}: {err}"));
        assert!(
            line.contains("of its 2 sec measure time") && line.contains("1 MiB file"),
            "{line}"
        );
        let ms: f64 = line[w.len()..].split(' ').next().unwrap().parse().unwrap();
        assert!(ms < 500.0, "{line}");
        assert!(
            text.contains(&format!("Note: SEQ1M Q8T1 {d} ran ")),
            "{text}"
        );
    }
    assert!(
        err.contains("quick: run 1/4 SEQ1M Q8T1 read loop 1/2 (elapsed "),
        "{err}"
    );
    assert!(
        err.contains("quick: run 4/4 SEQ1M Q8T1 write loop 2/2"),
        "{err}"
    );
}
