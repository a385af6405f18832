//! Shared helpers for the generator tests: build a job from fio-style arguments (options
//! the table does not list yet become plain text options, so the generator can be tested
//! before the table grows), run iobench's generator, and run the real fio with
//! `--ioengine=null --write_iolog` to read the I/O it issues.
#![allow(dead_code)]

use iobench::api::gen::{plan, FileExtent, Generator, NextIo};
use iobench::api::job::{Ddir, Job};
use iobench::api::options::{lookup, FioRelease, Kind, OptDef, Origin, RawJob, RawOpt};
use std::process::Command;

/// One I/O as both tools log it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Io {
    pub ddir: &'static str,
    pub file: String,
    pub offset: u64,
    pub len: u64,
}

fn def_for(name: &str) -> &'static OptDef {
    lookup(name).unwrap_or_else(|| {
        let name: &'static str = Box::leak(name.to_string().into_boxed_str());
        Box::leak(Box::new(iobench::api::options::table::opt(
            name,
            Kind::Str,
            "test-only",
        )))
    })
}

/// The job that `--name=x <args>` describes, in the dialect of the host's fio (3.33),
/// which [`fio_ios`] runs.
pub fn job(args: &[&str]) -> Job {
    job_as(FioRelease::V3_33, args)
}

/// The job that `--name=x <args>` describes, speaking `release`.
pub fn job_as(release: FioRelease, args: &[&str]) -> Job {
    let mut raw = RawJob {
        name: "x".into(),
        release,
        ..Default::default()
    };
    for a in args {
        let a = a.trim_start_matches("--");
        let (n, v) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a, None),
        };
        let def = def_for(n);
        raw.opts.push(RawOpt {
            def,
            spelled: RawOpt::spelling(def, n),
            value: v,
            origin: Origin::command_line(),
        });
    }
    iobench::api::job::resolve(&raw).expect("job resolves")
}

fn ddir_name(d: Ddir) -> &'static str {
    match d {
        Ddir::Read => "read",
        Ddir::Write => "write",
        Ddir::Trim => "trim",
    }
}

/// Every I/O of clone `clone` (thread number `clone + 1`) of the job, on files laid out as
/// fio's null engine lays them out.
pub fn iobench_ios(args: &[&str], clone: u32) -> Vec<Io> {
    let mut all = vec!["--ioengine=null"];
    all.extend_from_slice(args);
    let j = job(&all);
    let nr: usize = j
        .raw
        .value(&iobench::api::options::table::NRFILES)
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let sizes = plan::layout_size(&j, clone, &vec![0; nr]);
    let names: Vec<String> = (0..nr).map(|i| format!("x.{clone}.{i}")).collect();
    let files: Vec<FileExtent> = sizes
        .iter()
        .zip(&names)
        .map(|(&s, n)| FileExtent::new(n, s).laid_out_from(0))
        .collect();
    let mut g = Generator::new(&j, clone, &files).expect("generator");
    let mut out = Vec::new();
    while let Some(NextIo {
        ddir,
        file,
        offset,
        len,
    }) = g.next_io()
    {
        out.push(Io {
            ddir: ddir_name(ddir),
            file: names[file].clone(),
            offset,
            len,
        });
        assert!(out.len() < 2_000_000, "runaway generator");
    }
    out
}

/// Parses the I/O lines of a version 3 log, one list per header (each clone appends its
/// own log to the file).
pub fn parse_log(text: &str) -> Vec<Vec<Io>> {
    let mut out: Vec<Vec<Io>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("fio version") {
            out.push(Vec::new());
            continue;
        }
        let p: Vec<&str> = line.split_whitespace().collect();
        if p.len() == 5 {
            let ddir = match p[2] {
                "read" => "read",
                "write" => "write",
                "trim" => "trim",
                _ => continue,
            };
            if let Some(cur) = out.last_mut() {
                cur.push(Io {
                    ddir,
                    file: p[1].to_string(),
                    offset: p[3].parse().unwrap(),
                    len: p[4].parse().unwrap(),
                });
            }
        }
    }
    out
}

/// The I/O fio issues for `--name=x <args>` with the null engine, per clone; `None`
/// when fio is not installed.
pub fn fio_ios(tag: &str, args: &[&str]) -> Option<Vec<Vec<Io>>> {
    let found = Command::new("fio")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("fio is not installed but IOBENCH_REQUIRE_FIO=1");
        }
        eprintln!("fio not installed: skipping differential test");
        return None;
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gen");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(format!("{tag}.iolog"));
    let _ = std::fs::remove_file(&log);
    let out = Command::new("fio")
        .arg("--name=x")
        .args(args)
        .arg("--ioengine=null")
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output-format=terse")
        .current_dir(&dir)
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).expect("fio wrote its iolog");
    // Clones finish in any order; put each log at its clone's index (files are x.N.M).
    let mut logs = parse_log(&text);
    let clone_of = |l: &Vec<Io>| -> usize {
        l.first()
            .and_then(|io| io.file.split('.').nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    logs.sort_by_key(clone_of);
    Some(logs)
}

/// Asserts that iobench issues exactly fio's I/O for `args`, clone by clone.
pub fn assert_same_as_fio(tag: &str, args: &[&str]) {
    let Some(fio) = fio_ios(tag, args) else {
        return;
    };
    assert!(!fio.is_empty(), "fio logged nothing");
    for (clone, want) in fio.iter().enumerate() {
        let got = iobench_ios(args, clone as u32);
        let first_diff = got.iter().zip(want).position(|(a, b)| a != b);
        assert!(
            got == *want,
            "{tag} clone {clone}: iobench issued {} I/Os, fio {}; first difference at {:?}: \
             iobench {:?} fio {:?}",
            got.len(),
            want.len(),
            first_diff,
            first_diff.map(|i| &got[i]),
            first_diff.map(|i| &want[i]),
        );
    }
}
