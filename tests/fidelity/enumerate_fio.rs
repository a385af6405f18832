//! fio's surface, walked mechanically instead of sampled: every flag `fio --help` prints,
//! every option `fio --cmdhelp=all` lists with every value `fio --cmdhelp=OPT` lists (and
//! values fio rejects), and every engine `fio --enghelp` names. Each is given to both tools;
//! "not supported yet" counts as a miss. Each test prints a tally and fails when it drops
//! below the floor recorded here (raise the floors as the surface grows; README and
//! docs/options.md quote the tallies).
use crate::common;
use crate::enum_util;

use enum_util::{run_limited, scratch, tally, Ran};
use std::path::Path;
use std::process::Command;

/// The recorded floors (what this branch supports; see README's tally).
const FLAGS_FLOOR: usize = 33;
const OPTIONS_FLOOR: usize = 213;
const VALUES_FLOOR: usize = 117;
const REJECTS_FLOOR: usize = 83;
const ENGINES_FLOOR: usize = 25;

fn fio_text(args: &[&str]) -> String {
    let out = Command::new("fio").args(args).output().expect("run fio");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn iobench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iobench"));
    c.env("IOBENCH_FIO_COMPAT", crate::common::HOST_DIALECT);
    c
}

/// An argument for each of fio's own flags that makes it do something harmless here.
fn flag_arg(flag: &str, dir: &Path) -> String {
    let d = dir.display();
    match flag {
        "debug" => "--debug=parse".into(),
        "output" => format!("--output={d}/out.txt"),
        "output-format" => "--output-format=json".into(),
        "terse-version" => "--terse-version=3".into(),
        "crctest" => "--crctest=md5".into(),
        "cmdhelp" => "--cmdhelp=bs".into(),
        "enghelp" => "--enghelp=null".into(),
        "eta" => "--eta=never".into(),
        "eta-newline" => "--eta-newline=1".into(),
        "status-interval" => "--status-interval=1".into(),
        "section" => "--section=x".into(),
        "alloc-size" => "--alloc-size=16384".into(),
        "max-jobs" => "--max-jobs=4".into(),
        "server" => "--server=localhost,18765".into(),
        "daemonize" => format!("--daemonize={d}/pid"),
        "client" => "--client=localhost,18766".into(),
        "remote-config" => format!("--remote-config={d}/job.fio"),
        "idle-prof" => "--idle-prof=calibrate".into(),
        "inflate-log" => format!("--inflate-log={d}/empty.fz"),
        "trigger-file" => format!("--trigger-file={d}/trigger"),
        "trigger-timeout" => "--trigger-timeout=10".into(),
        "trigger" => "--trigger=true".into(),
        "trigger-remote" => "--trigger-remote=true".into(),
        "aux-path" => format!("--aux-path={d}"),
        other => format!("--{other}"),
    }
}

/// Every flag of `fio --help` does in iobench what it does in fio: the same exit status
/// for the same command line, and never "unknown option".
#[test]
fn every_fio_flag_is_accepted() {
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("enum-flags");
    std::fs::write(dir.join("empty.fz"), b"").unwrap();
    let help = fio_text(&["--help"]);
    let mut flags: Vec<String> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| {
            l.split(|c: char| c == '=' || c.is_whitespace())
                .next()
                .unwrap_or("")
                .to_string()
        })
        .filter(|f| !f.is_empty())
        .collect();
    flags.dedup();
    assert!(flags.len() > 30, "fio --help listed {} flags", flags.len());
    let mut ok = 0;
    let mut misses = Vec::new();
    for flag in &flags {
        let arg = flag_arg(flag, &dir);
        let job = [
            "--name=x",
            &format!("--filename={}/f", dir.display()),
            "--size=64k",
            "--ioengine=null",
        ];
        let run = |mut c: Command| -> Ran {
            c.current_dir(&dir).arg(&arg).args(job);
            run_limited(c, 10)
        };
        let fio = run(Command::new("fio"));
        let ib = run(iobench());
        // The clock test's verdict is the machine's (fio's own fails under heavy load).
        let same = ib.code == fio.code
            || flag == "cpuclock-test" && matches!((ib.code, fio.code), (Some(0 | 1), Some(0 | 1)));
        if same && !ib.refused_as_unknown() {
            ok += 1;
        } else {
            misses.push(format!(
                "--{flag} (fio {:?}, iobench {:?}: {})",
                fio.code,
                ib.code,
                ib.stderr.lines().next().unwrap_or("")
            ));
        }
    }
    tally("flags", ok, flags.len(), FLAGS_FLOOR, &misses);
}

/// One option's facts from `fio --cmdhelp=OPT`.
#[derive(Default, Debug)]
struct Help {
    kind: String,
    default: Option<String>,
    range: Option<(i64, i64)>,
    values: Vec<String>,
}

fn cmdhelp(opt: &str) -> Help {
    let text = fio_text(&[&format!("--cmdhelp={opt}")]);
    let mut h = Help::default();
    let mut mine = false;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let rest = rest.trim();
        match key {
            k if k == opt => mine = true,
            "type" if mine => h.kind = rest.to_string(),
            "default" if mine && rest != "no default" => h.default = Some(rest.to_string()),
            "range" if mine => {
                let num = |p: &str| -> Option<i64> {
                    rest.split(p).nth(1)?.split(',').next()?.trim().parse().ok()
                };
                if let (Some(a), Some(b)) = (num("min="), num("max=")) {
                    h.range = Some((a, b));
                }
            }
            "valid values" | "" if mine => {
                if let Some(w) = rest.split_whitespace().next() {
                    h.values.push(w.to_string());
                }
            }
            "alias" => {}
            _ if mine && !key.is_empty() && !key.contains(' ') && key != "type" => {
                // The next option's block (cmdhelp prints several for some names).
                if h.kind.is_empty() {
                    continue;
                }
                mine = false;
            }
            _ => {}
        }
    }
    h
}

/// A value of `opt` that should parse: its first listed value, its default, or one that
/// fits its type.
fn sample(opt: &str, h: &Help, dir: &Path) -> String {
    let d = dir.display();
    let special = match opt {
        "name" | "description" => Some("x".to_string()),
        "filename" => Some(format!("{d}/f")),
        "directory" | "opendir" => Some(format!("{d}")),
        "cpus_allowed" | "numa_cpu_nodes" | "log_compression_cpus" => Some("0".into()),
        "bssplit" => Some("4k/50:8k/50".into()),
        "buffer_pattern" | "verify_pattern" => Some("0xdeadbeef".into()),
        "write_iolog" | "write_bw_log" | "write_lat_log" | "write_iops_log" | "write_hist_log" => {
            Some(format!("{d}/log"))
        }
        "exec_prerun" | "exec_postrun" => Some("true".into()),
        "ioscheduler" => Some("none".into()),
        "steadystate" => Some("iops:10%".into()),
        "numa_mem_policy" => Some("local".into()),
        _ => None,
    };
    if let Some(s) = special {
        return s;
    }
    if let Some(v) = h.values.first() {
        return v.clone();
    }
    if let Some(v) = &h.default {
        return v.clone();
    }
    let k = h.kind.as_str();
    if k.contains("boolean") {
        "1".into()
    } else if k.contains("integer") {
        match h.range {
            Some((lo, _)) if lo > 1 => lo.to_string(),
            _ => "1".into(),
        }
    } else if k.contains("floating") {
        "1".into()
    } else if k.contains("ranges") {
        "4k-8k".into()
    } else if k.contains("time") {
        "1s".into()
    } else if k.contains("k/m/g") {
        "4k".into()
    } else {
        "x".into()
    }
}

/// Runs one job file of sections in `tool` with --parse-only.
fn parse_file(tool: Command, dir: &Path, tag: &str, entries: &[(String, String)]) -> Ran {
    let mut text = String::new();
    for (i, (o, v)) in entries.iter().enumerate() {
        text.push_str(&format!("[o{i}]\n{o}={v}\n"));
    }
    let path = dir.join(format!("{tag}.fio"));
    std::fs::write(&path, text).unwrap();
    let mut c = tool;
    c.current_dir(dir).arg("--parse-only").arg(&path);
    run_limited(c, 30)
}

/// fio's verdict on each entry: the whole batch at once, halves when it fails (fio takes
/// a third of a second to start, so entries are not run one by one).
fn fio_verdicts(dir: &Path, entries: &[(String, String)], out: &mut Vec<bool>) {
    let r = parse_file(Command::new("fio"), dir, "batch", entries);
    if r.code == Some(0) {
        out.extend(std::iter::repeat_n(true, entries.len()));
    } else if entries.len() == 1 {
        out.push(false);
    } else {
        let (a, b) = entries.split_at(entries.len() / 2);
        fio_verdicts(dir, a, out);
        fio_verdicts(dir, b, out);
    }
}

/// Every option of `fio --cmdhelp=all` and every value its `--cmdhelp` lists parses in
/// both tools alike; values fio rejects (an unknown word, a number past the range) are
/// rejected by iobench too.
#[test]
fn every_fio_option_and_value_parses_alike() {
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("enum-options");
    let all = fio_text(&["--cmdhelp=all"]);
    let names: Vec<String> = all
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, _)| n.trim().to_string())
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect();
    assert!(names.len() > 200, "fio listed {} options", names.len());
    // (option, value, kind): 0 the option's sample, 1 a listed value, 2 a value fio
    // should reject.
    let mut entries: Vec<(String, String, u8)> = Vec::new();
    for n in &names {
        let h = cmdhelp(n);
        // A listed first value is the option's sample and one of its values too.
        let kind0 = if h.values.is_empty() { 0 } else { 3 };
        entries.push((n.clone(), sample(n, &h, &dir), kind0));
        for v in h.values.iter().skip(1) {
            entries.push((n.clone(), v.clone(), 1));
        }
        if !h.values.is_empty() {
            entries.push((n.clone(), "nosuchword".into(), 2));
        }
        if let Some((lo, hi)) = h.range {
            if hi > lo && hi < i64::from(i32::MAX) && hi > 0 {
                entries.push((n.clone(), (hi + 1).to_string(), 2));
            }
        }
    }
    let valid: Vec<(String, String)> = entries
        .iter()
        .filter(|e| e.2 != 2)
        .map(|e| (e.0.clone(), e.1.clone()))
        .collect();
    let mut fio_ok = Vec::new();
    fio_verdicts(&dir, &valid, &mut fio_ok);
    let mut fio_iter = fio_ok.into_iter();
    let (mut opt_ok, mut val_ok, mut val_n, mut rej_ok, mut rej_n) = (0, 0, 0, 0, 0);
    let mut misses = Vec::new();
    for (o, v, kind) in &entries {
        let pair = [(o.clone(), v.clone())];
        let ib = parse_file(iobench(), &dir, "one", &pair);
        let ib_ok = ib.code == Some(0);
        let fio_ok = if *kind == 2 {
            parse_file(Command::new("fio"), &dir, "one-fio", &pair).code == Some(0)
        } else {
            fio_iter.next().unwrap_or(false)
        };
        let same = ib_ok == fio_ok && !ib.refused_as_unknown();
        match kind {
            0 => opt_ok += usize::from(same),
            3 => {
                opt_ok += usize::from(same);
                val_n += 1;
                val_ok += usize::from(same);
            }
            1 => {
                val_n += 1;
                val_ok += usize::from(same);
            }
            _ => {
                rej_n += 1;
                rej_ok += usize::from(same);
            }
        }
        if !same {
            misses.push(format!(
                "{o}={v}(fio {}, iobench {})",
                if fio_ok { "ok" } else { "refuses" },
                if ib_ok { "ok" } else { "refuses" }
            ));
        }
    }
    println!("TALLY rejected values: {rej_ok} of {rej_n} refused by both");
    println!("TALLY values: {val_ok} of {val_n} supported");
    tally("options", opt_ok, names.len(), OPTIONS_FLOOR, &misses);
    tally("values", val_ok, val_n, VALUES_FLOOR, &[]);
    assert!(
        rej_ok >= REJECTS_FLOOR,
        "rejected values: {rej_ok} of {rej_n}"
    );
}

/// Every engine of `fio --enghelp` is implemented, or refused with a reason that names it.
#[test]
fn every_fio_engine_runs_or_is_refused_with_a_reason() {
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("enum-engines");
    let list = fio_text(&["--enghelp"]);
    let engines: Vec<&str> = list
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert!(engines.len() > 20, "fio listed {} engines", engines.len());
    let mut ok = 0;
    let mut misses = Vec::new();
    for e in &engines {
        let mut c = iobench();
        c.current_dir(&dir).args([
            "--parse-only",
            "--name=x",
            &format!("--ioengine={e}"),
            &format!("--filename={}/f", dir.display()),
            "--size=64k",
        ]);
        // Engines that need an option of their own get it, as a user would give it
        // (parse-only connects to nothing and runs nothing).
        match *e {
            "nbd" => {
                c.arg("--uri=nbd://localhost/x");
            }
            "cpuio" => {
                c.arg("--cpuload=10");
            }
            "net" | "netsplice" => {
                c.args(["--hostname=localhost", "--port=8765"]);
            }
            "exec" => {
                c.arg("--program=/bin/true");
            }
            "e4defrag" => {
                c.arg(format!("--donorname={}/donor", dir.display()));
            }
            _ => {}
        }
        let r = run_limited(c, 10);
        if r.code == Some(0) {
            ok += 1;
            continue;
        }
        let first = r.stderr.lines().next().unwrap_or("").to_string();
        assert!(
            first.contains(e) && first.len() > e.len() + 20,
            "engine {e} is refused without a reason: {first:?}"
        );
        misses.push(format!("{e} ({first})"));
    }
    tally("engines", ok, engines.len(), ENGINES_FLOOR, &misses);
}
