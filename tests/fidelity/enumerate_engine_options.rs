//! Every engine's own options, walked mechanically: for each engine `fio --enghelp` lists,
//! every option `fio --enghelp=ENGINE` prints must be listed by `iobench --enghelp=ENGINE`
//! under the same name, and must parse (or be refused) as in fio for a job using that
//! engine. The values tried are found from fio itself: a word fio does not know (fio then
//! lists the valid words of a choice option, each of which is tried too), a small number,
//! and for bounded numbers the bound and one past it (fio names the bound when refusing a
//! huge number). "Not supported yet" counts as a miss, so options of engines that need
//! absent hardware are misses, refused with their reason. Prints the tally and fails when
//! it drops below the floor recorded here (README and docs/options.md quote it).
use crate::common;
use crate::enum_util;

use enum_util::{run_limited, scratch, tally, Ran};
use std::path::Path;
use std::process::Command;

/// The recorded floor: the options of fio's engines that parse alike today.
const ENGINE_OPTIONS_FLOOR: usize = 74;

/// A word no option takes as a value.
const UNKNOWN_WORD: &str = "nosuchword";

/// A number past the bound of every bounded engine option (a port is at most 65535), so
/// fio names the bound when refusing it. It fits 32 bits: fio truncates larger numbers
/// silently where iobench refuses them (issue 14, defect 11), which is no test of parsing.
const PAST_BOUNDS: &str = "1000000";

fn stdout_of(mut c: Command) -> String {
    let out = c.output().expect("run tool");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The option names of an `--enghelp=ENGINE` listing (nested options are indented).
fn listed_options(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.trim().to_string())
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect()
}

/// What a job using `engine` needs besides the option under test, so that iobench (which
/// checks a job's completeness at parse time, where fio waits for the engine's set-up) and
/// fio judge only the option. Options under test come after these and override them.
fn engine_needs(engine: &str, option: &str, value: &str) -> &'static [&'static str] {
    match engine {
        // A unix socket is named by hostname=, and takes no port (fio refuses one when the
        // engine sets up, iobench as it parses).
        "net" | "netsplice" if option == "protocol" && value == "unix" => &["--hostname=sock"],
        "cpuio" => &["--cpuload=50"],
        "net" | "netsplice" => &["--hostname=localhost", "--port=8765"],
        "exec" => &["--program=true"],
        "e4defrag" => &["--donorname=donor"],
        "nbd" => &["--uri=nbd://localhost/x"],
        _ => &[],
    }
}

/// `tool --parse-only` of a one-job command line using `engine` with `option=value`.
fn parse(tool: Command, dir: &Path, engine: &str, option: &str, value: &str) -> Ran {
    let mut c = tool;
    c.current_dir(dir)
        .args(["--parse-only", "--name=x", "--size=1m"])
        .arg(format!("--filename={}/f", dir.display()))
        .arg(format!("--ioengine={engine}"))
        .args(engine_needs(engine, option, value))
        .arg(format!("--{option}={value}"));
    run_limited(c, 20)
}

/// The valid words fio lists when refusing a value of a choice option.
fn listed_values(stderr: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut in_list = false;
    for line in stderr.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("valid values:") {
            in_list = true;
            values.extend(rest.split_whitespace().next().map(str::to_string));
        } else if in_list {
            match t.strip_prefix(':') {
                Some(rest) => values.extend(rest.split_whitespace().next().map(str::to_string)),
                None => in_list = false,
            }
        }
    }
    values
}

/// The bound fio names when refusing a number past it ("… out of range: V (MAX max)").
fn named_max(stderr: &str) -> Option<u64> {
    let line = stderr
        .lines()
        .find(|l| l.contains("max value out of range"))?;
    let inner = line.rsplit_once('(')?.1;
    inner.split_whitespace().next()?.parse().ok()
}

/// A value of the form a free-string option is meant to hold. fio checks these strings
/// only when the engine sets up (after `--parse-only` has exited), while iobench checks a
/// job's values as it parses it, so a nonsense word is no sample for them; any string
/// option not named here gets the unknown word, which fio and iobench must both take.
fn string_sample(option: &str, dir: &Path) -> String {
    match option {
        "uri" => "nbd://localhost/export".into(),
        "cmdprio_bssplit" => "4k/50:8k/25".into(),
        "hostname" | "bindname" => "localhost".into(),
        "donorname" => format!("{}/donor", dir.display()),
        "program" => "true".into(),
        _ => UNKNOWN_WORD.into(),
    }
}

/// The values to try for one option, found by asking fio: for a choice option the
/// unknown word and every word fio lists; for a free string a sample of its form; for a
/// number 0, 1 and, when fio names a bound, the bound and one past it. Each comes with
/// fio's verdict when asking already gave it.
fn samples(dir: &Path, engine: &str, option: &str) -> Vec<(String, Option<bool>)> {
    let word = parse(Command::new("fio"), dir, engine, option, UNKNOWN_WORD);
    let word_ok = Some(word.code == Some(0));
    // fio prints the valid words on stdout, the failure on stderr.
    let words = listed_values(&word.stdout);
    if !words.is_empty() {
        let mut out = vec![(UNKNOWN_WORD.to_string(), word_ok)];
        out.extend(words.into_iter().map(|w| (w, None)));
        return out;
    }
    if word.code == Some(0) {
        return vec![(string_sample(option, dir), None)];
    }
    let mut out = vec![
        (UNKNOWN_WORD.to_string(), word_ok),
        ("0".into(), None),
        ("1".into(), None),
    ];
    let past = parse(Command::new("fio"), dir, engine, option, PAST_BOUNDS);
    if let Some(max) = named_max(&past.stderr) {
        out.push((max.to_string(), None));
        out.push(((max + 1).to_string(), None));
    }
    out
}

/// fio's verdict on each of `values`, a job file of one job per value at once, halves
/// when it fails (fio is slow to start; most values parse, so few runs are needed).
fn fio_verdicts(dir: &Path, engine: &str, option: &str, values: &[String]) -> Vec<bool> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut text = String::new();
    for (i, v) in values.iter().enumerate() {
        text.push_str(&format!(
            "[s{i}]\nsize=1m\nfilename={}/f\nioengine={engine}\n",
            dir.display()
        ));
        for need in engine_needs(engine, option, v) {
            text.push_str(need.trim_start_matches('-'));
            text.push('\n');
        }
        text.push_str(&format!("{option}={v}\n"));
    }
    let path = dir.join("batch.fio");
    std::fs::write(&path, text).expect("write job file");
    let mut c = Command::new("fio");
    c.current_dir(dir).arg("--parse-only").arg(&path);
    if run_limited(c, 20).code == Some(0) {
        return vec![true; values.len()];
    }
    if values.len() == 1 {
        return vec![false];
    }
    let (a, b) = values.split_at(values.len() / 2);
    let mut out = fio_verdicts(dir, engine, option, a);
    out.extend(fio_verdicts(dir, engine, option, b));
    out
}

/// iobench's reason for refusing `engine`, when it refuses the engine itself.
fn unsupported_engine(dir: &Path, engine: &str) -> Option<String> {
    let ib = parse(common::iobench(), dir, engine, "name", "x");
    let first = ib.stderr.lines().next().unwrap_or("");
    first
        .contains(&format!("'ioengine={engine}' is not supported yet"))
        .then(|| {
            let why = first
                .split_once("not supported yet: ")
                .map_or(first, |(_, w)| w);
            why.to_string()
        })
}

#[test]
fn every_engine_option_is_listed_and_parses_alike() {
    let _log = common::fio_gfapi_log();
    if common::fio().is_none() {
        return;
    }
    let dir = scratch("enum-engine-options");
    let engines: Vec<String> = stdout_of({
        let mut c = Command::new("fio");
        c.arg("--enghelp");
        c
    })
    .lines()
    .skip(1)
    .map(|l| l.trim().to_string())
    .filter(|l| !l.is_empty())
    .collect();
    assert!(engines.len() > 20, "fio listed {} engines", engines.len());
    let (mut total, mut ok) = (0, 0);
    let mut misses = Vec::new();
    for engine in &engines {
        let help = format!("--enghelp={engine}");
        let fio_opts = listed_options(&stdout_of({
            let mut c = Command::new("fio");
            c.arg(&help);
            c
        }));
        let ib_opts = listed_options(&stdout_of({
            let mut c = common::iobench();
            c.arg(&help);
            c
        }));
        // An engine iobench refuses (for want of hardware) makes all its options misses;
        // their names must still be listed, and the refusal must say what is missing.
        let refused = unsupported_engine(&dir, engine);
        let mut refused_options = Vec::new();
        for option in &fio_opts {
            total += 1;
            if !ib_opts.contains(option) {
                misses.push(format!("\n  {engine}/{option}: not in iobench {help}"));
                continue;
            }
            if refused.is_some() {
                refused_options.push(option.as_str());
                continue;
            }
            let tried = samples(&dir, engine, option);
            let unjudged: Vec<String> = tried
                .iter()
                .filter(|t| t.1.is_none())
                .map(|t| t.0.clone())
                .collect();
            let mut judged = fio_verdicts(&dir, engine, option, &unjudged).into_iter();
            let mut differ = Vec::new();
            for (value, known) in tried {
                let fio_ok = known.unwrap_or_else(|| judged.next().unwrap_or(false));
                let ib = parse(common::iobench(), &dir, engine, option, &value);
                let ib_ok = ib.code == Some(0);
                if fio_ok != ib_ok || ib.refused_as_unknown() {
                    let why = ib.stderr.lines().next().unwrap_or("").to_string();
                    differ.push(format!(
                        "{value}: fio {}, iobench {} {why}",
                        if fio_ok { "ok" } else { "refuses" },
                        if ib_ok { "ok" } else { "refuses" },
                    ));
                }
            }
            if differ.is_empty() {
                ok += 1;
            } else {
                misses.push(format!("\n  {engine}/{option}: {}", differ.join("; ")));
            }
        }
        if let (Some(why), false) = (&refused, refused_options.is_empty()) {
            assert!(
                why.len() > 20,
                "{engine} is refused without a reason: {why:?}"
            );
            misses.push(format!(
                "\n  {engine}/{{{}}}: the engine is refused: {why}",
                refused_options.join(",")
            ));
        }
    }
    tally("engine options", ok, total, ENGINE_OPTIONS_FLOOR, &misses);
}
