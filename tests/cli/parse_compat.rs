//! Differential checks of the parser against the real fio 3.33: fio's own example job files,
//! `--showcmd` on the seed004 job files and on job files that exercise fio's rules, and every
//! command line of the reference workloads in `../shared/cases`.
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// Whether a missing input (fio's examples, the shared cases) must fail the test: in CI
/// (`IOBENCH_REQUIRE_FIO=1`) nothing may be skipped silently.
fn required() -> bool {
    std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1")
}

/// fio's `examples/` folder: `$FIO_EXAMPLES`, Debian's `fio-examples` package, or a fio
/// source checkout in /tmp. Nothing of fio's is copied into this repository.
fn fio_examples() -> Option<PathBuf> {
    let candidates = std::env::var_os("FIO_EXAMPLES")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            PathBuf::from("/usr/share/doc/fio/examples"),
            PathBuf::from("/tmp/fio-src/examples"),
        ]);
    for dir in candidates {
        if dir.join("fio-seq-read.fio").exists() {
            return Some(dir);
        }
    }
    assert!(
        !required(),
        "fio's examples folder was not found (set FIO_EXAMPLES, or apt-get install fio-examples)"
    );
    eprintln!("fio's examples not found: skipping (apt-get install fio-examples)");
    None
}

/// The `shared` folder beside the repository (or beside the main work tree).
fn shared() -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = std::env::var_os("IOBENCH_SHARED")
        .map(PathBuf::from)
        .into_iter()
        .chain([manifest.join("../shared"), manifest.join("../../shared")]);
    for dir in candidates {
        if dir.join("cases").is_dir() {
            return Some(dir);
        }
    }
    assert!(
        std::env::var("IOBENCH_REQUIRE_SHARED").as_deref() != Ok("1"),
        "../shared/cases not found"
    );
    eprintln!("../shared/cases not found: skipping (set IOBENCH_SHARED)");
    None
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_in(dir: &Path, mut cmd: std::process::Command, args: &[&str]) -> Output {
    cmd.current_dir(dir)
        .args(args)
        .env("DIR", "/tmp/iobench-placeholder")
        .env("IOBENCH_TEST_FILE", "from_env")
        .env("JOBNAME", "envjob");
    common::run(cmd)
}

/// The option a "not supported yet" error names: `option 'X' is not supported yet` or
/// `option 'X=value' is not supported yet`, as the option's name.
fn not_supported_name(stderr: &str) -> Option<String> {
    let start = stderr.find("option '")? + "option '".len();
    let rest = &stderr[start..];
    let end = rest.find("' is not supported yet")?;
    let named = &rest[..end];
    Some(named.split('=').next().unwrap_or(named).to_string())
}

#[test]
fn fio_examples_parse_or_name_the_unsupported_option() {
    let Some(dir) = fio_examples() else { return };
    let Some(_) = common::fio() else { return };
    let scratch = common::scratch("fio_examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() > 50, "only {} examples in {dir:?}", files.len());
    // fio spends most of half a second per start waiting, so ask it about 8 files at once.
    let fio_ok: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(files.len().div_ceil(8))
            .map(|chunk| {
                let scratch = &scratch;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|f| {
                            let path = f.to_str().unwrap();
                            let fio = common::fio().unwrap();
                            run_in(scratch, fio, &["--parse-only", path])
                                .status
                                .success()
                        })
                        .collect::<Vec<bool>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let (mut accepted, mut unsupported, mut fio_rejected) = (0, 0, 0);
    let mut errs = Vec::new();
    for (f, fio_accepts) in files.iter().zip(fio_ok) {
        let path = f.to_str().unwrap();
        if !fio_accepts {
            fio_rejected += 1;
            continue;
        }
        let ours = run_in(&scratch, common::iobench(), &["--parse-only", path]);
        let err = text(&ours.stderr);
        if ours.status.success() {
            accepted += 1;
            continue;
        }
        let body = std::fs::read_to_string(f).unwrap();
        match not_supported_name(&err) {
            Some(name) => {
                let def = iobench::api::options::lookup(&name);
                let written = def.is_some_and(|d| {
                    std::iter::once(d.name)
                        .chain(d.aliases.iter().copied())
                        .any(|n| body.contains(n))
                });
                if written {
                    unsupported += 1;
                } else {
                    errs.push(format!("{path}: names '{name}', not in the file: {err}"));
                }
            }
            None => errs.push(format!("{path}: {err}")),
        }
    }
    eprintln!(
        "fio examples: {accepted} accepted, {unsupported} refused as not supported yet, \
         {fio_rejected} refused by fio itself"
    );
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    assert!(accepted >= 10, "only {accepted} examples accepted outright");
}

/// The lines `--showcmd` prints, each without its first word (the program name).
fn showcmd_lines(out: &Output) -> Vec<String> {
    text(&out.stdout)
        .lines()
        .map(|l| l.split_once(' ').map_or("", |(_, rest)| rest).to_string())
        .collect()
}

/// Runs `--showcmd` with `args` under both programs and compares.
fn same_showcmd(dir: &Path, args: &[&str]) {
    let Some(fio) = common::fio() else { return };
    let theirs = run_in(dir, fio, args);
    let ours = run_in(dir, common::iobench(), args);
    assert!(
        theirs.status.success(),
        "fio {args:?}: {}",
        text(&theirs.stderr)
    );
    assert!(
        ours.status.success(),
        "iobench {args:?}: {}",
        text(&ours.stderr)
    );
    assert_eq!(showcmd_lines(&ours), showcmd_lines(&theirs), "{args:?}");
    assert!(!showcmd_lines(&ours).is_empty());
}

#[test]
fn showcmd_matches_fio_on_seed004() {
    let Some(shared) = shared() else { return };
    let dir = shared.join("cases/seed004");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fio") {
            same_showcmd(&dir, &["--showcmd", p.to_str().unwrap()]);
            n += 1;
        }
    }
    assert!(n >= 7, "only {n} seed004 job files");
}

/// Job files that exercise fio's reading rules, compared through `--showcmd`.
const SHOWCMD_CASES: &[(&str, &str)] = &[
    (
        "two_globals.fio",
        "[global]\nbs = 4k\ndescription=two words\n[a]\nioengine=io_uring\nhipri\n\
         rw=randread   ; a comment after the value\ndirect=1\n[global2]\nsize=1m\n\
         [b]\nreadwrite=read\n",
    ),
    (
        "late_global.fio",
        "# leading comment\n[a]\nrw=read\n\n[global]\nbs=1k\n  ; indented comment\n[b]\nrw=write\n",
    ),
    (
        "keywords.fio",
        "[x]\nsize=$mb_memory\nnumjobs=$ncpus*2\nbs=$pagesize\nfilename=a-b\n\
         iodepth=$ncpus-1\nrate=$ncpus/2\nthinktime=(1+$ncpus)*3\n",
    ),
    (
        "sorted.fio",
        "[x]\nfilename=f\ndirectory=/tmp\nrw=write\nkb_base=1000\nsize=1m\nbs=4k\n\
         time_based\nruntime=10\nioengine=libaio\niodepth=4\n",
    ),
    (
        "include_main.fio",
        "[global]\ninclude sub/included.inc\n[a]\nrw=read\ninclude sub/included.inc\n",
    ),
    (
        "env.fio",
        "[${JOBNAME}]\nfilename=${IOBENCH_TEST_FILE}.dat\nrw=read\n",
    ),
];

#[test]
fn showcmd_matches_fio_on_fios_reading_rules() {
    let dir = common::scratch("showcmd_rules");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/included.inc"), "size=2m\n; comment\nbs=8k\n").unwrap();
    for (name, body) in SHOWCMD_CASES {
        std::fs::write(dir.join(name), body).unwrap();
    }
    for (name, _) in SHOWCMD_CASES {
        same_showcmd(&dir, &["--showcmd", name]);
        same_showcmd(&dir, &["--showcmd", "--bs=8k", "--direct=1", name]);
    }
    // Several files: one line each; --section picks sections of the first file only.
    same_showcmd(&dir, &["--showcmd", "two_globals.fio", "late_global.fio"]);
    same_showcmd(
        &dir,
        &[
            "--showcmd",
            "--section=b",
            "two_globals.fio",
            "late_global.fio",
        ],
    );
    same_showcmd(
        &dir,
        &["--showcmd", "--section=a", "--section=b", "late_global.fio"],
    );
}

/// One `$FIO …` command of a case script, as arguments, with its shell variables replaced.
/// `dir` stands in for `$DIR` and `$mnt` (fio checks that a directory exists while parsing
/// when `--parse-only` comes after `--directory`).
fn case_commands(script: &str, dir: &str) -> Vec<Vec<String>> {
    let joined = script.replace("\\\n", " ");
    let mut vars: Vec<(String, String)> = vec![
        ("DIR".into(), dir.into()),
        ("dev".into(), "/dev/iobench-placeholder".into()),
        ("mnt".into(), dir.into()),
        ("f".into(), format!("{dir}/peak.dat")),
    ];
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        // name="value" assignments the commands use (seed000's $common).
        if let Some((name, value)) = line.split_once('=') {
            if !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && value.starts_with('"')
                && value.ends_with('"')
            {
                vars.push((name.to_string(), value.trim_matches('"').to_string()));
                continue;
            }
        }
        let Some(rest) = line.strip_prefix("$FIO ") else {
            continue;
        };
        let rest = rest.trim_end_matches('&').trim();
        let mut expanded = rest.to_string();
        // Longest names first, so $dev is not read as $d + ev.
        let mut sorted = vars.clone();
        sorted.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
        for (n, v) in &sorted {
            expanded = expanded.replace(&format!("${{{n}}}"), v);
            expanded = expanded.replace(&format!("${n}"), v);
        }
        let args: Vec<String> = expanded
            .split_whitespace()
            .map(|w| w.replace('"', ""))
            .collect();
        out.push(args);
    }
    out
}

#[test]
fn every_case_command_line_parses() {
    let Some(shared) = shared() else { return };
    let mut n = 0;
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(shared.join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    scripts.sort();
    let scratch = common::scratch("case_lines");
    for script in &scripts {
        let body = std::fs::read_to_string(script).unwrap();
        for args in case_commands(&body, scratch.to_str().unwrap()) {
            // `iobench peak` is iobench's own tool (t/io_uring's options), not a job line.
            if args.first().map(String::as_str) == Some("peak") {
                continue;
            }
            let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
            all.push("--parse-only");
            let ours = run_in(&scratch, common::iobench(), &all);
            assert!(
                ours.status.success(),
                "{}: iobench {all:?}: {}",
                script.display(),
                text(&ours.stderr)
            );
            if let Some(fio) = common::fio() {
                let theirs = run_in(&scratch, fio, &all);
                assert!(theirs.status.success(), "fio {all:?}");
            }
            n += 1;
        }
    }
    assert!(n >= 11, "only {n} command lines found");
}
