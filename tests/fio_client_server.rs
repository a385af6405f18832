//! fio's client/server protocol, both directions, against the installed fio 3.33 on
//! loopback ports: `fio --client` against `iobench --server` must print what it prints
//! against `fio --server` (normal and JSON, `client_stats`, "All clients"), and
//! `iobench --client` against `fio --server` must give fio's client report.

mod common;

use common::netproc::{free_port, mask, Server};
use common::{fio, iobench, scratch};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

/// A small job whose I/O counts are fixed: two psync jobs on files in `dir`.
fn job_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("two.fio");
    std::fs::write(
        &p,
        format!(
            "[global]\nioengine=psync\nsize=1m\nbs=4k\ndirectory={}\n\n[r1]\nrw=randread\n\n[w1]\nrw=write\n",
            dir.display()
        ),
    )
    .unwrap();
    p
}

fn fio_server(port: u16) -> Server {
    let mut c = fio().expect("fio");
    c.arg(format!("--server=,{port}"));
    Server::start(c, port)
}

fn iobench_server(port: u16, cwd: &Path) -> Server {
    let mut c = iobench();
    c.arg(format!("--server=,{port}")).current_dir(cwd);
    Server::start(c, port)
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The lines that carry no timing: they must be equal to the letter.
fn exact_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| {
            l.contains("(g=0): rw=")
                || l.contains("Starting ")
                || l.contains("issued rwts")
                || l.contains("IO depths")
                || l.contains("latency   :")
                || l.contains("Run status group")
                || l.contains("Laying out")
        })
        .map(str::to_string)
        .collect()
}

/// Each line's shape, without the latency bucket lines (which buckets appear depends on
/// the timings) and with the version in the probe line masked.
fn shape(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| !l.trim_start().starts_with("lat (") || l.contains("min="))
        .filter(|l| !l.trim_start().starts_with("Disk stats") && !l.contains(": ios="))
        .map(|l| {
            let l = match l.find("fio=") {
                Some(p) => format!("{}fio=V{}", &l[..p], &l[p..].find(',').map_or("", |c| &l[p + c..])),
                None => l.to_string(),
            };
            mask(&l)
        })
        .collect()
}

fn keys(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}/{k}");
                out.insert(p.clone());
                keys(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                keys(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn json_of(o: &Output) -> Value {
    let t = text(o);
    let start = t.find('{').unwrap_or_else(|| panic!("no JSON in: {t}"));
    serde_json::from_str(&t[start..]).unwrap_or_else(|e| panic!("bad JSON ({e}): {t}"))
}

fn fio_client(args: &[String], cwd: &Path) -> Output {
    let mut c: Command = fio().expect("fio");
    c.args(args).current_dir(cwd);
    c.output().expect("run fio --client")
}

#[test]
fn fio_client_prints_the_same_against_iobench_server() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_normal");
    let job = job_file(&dir);
    let (pf, pi) = (free_port(), free_port());
    let _fs = fio_server(pf);
    let _is = iobench_server(pi, &dir);
    let run = |port: u16| {
        let o = fio_client(
            &[format!("--client=localhost,{port}"), job.display().to_string()],
            &dir,
        );
        assert!(o.status.success(), "fio --client failed: {}", String::from_utf8_lossy(&o.stderr));
        text(&o)
    };
    let a = run(pf);
    let b = run(pi);
    assert_eq!(exact_lines(&a), exact_lines(&b), "fio server:\n{a}\niobench server:\n{b}");
    assert_eq!(shape(&a), shape(&b), "fio server:\n{a}\niobench server:\n{b}");
    // fio's client sums the two jobs: "All clients" with both jobs' I/O.
    assert!(b.contains("All clients: (groupid=0, jobs=2)"), "{b}");
    assert!(b.contains("issued rwts: total=256,256,0,0"), "{b}");
    assert!(b.contains("<") && b.contains("> Starting 2 processes"), "{b}");
}

#[test]
fn fio_client_json_is_the_same_against_iobench_server() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_json");
    let job = job_file(&dir);
    let (pf, pi) = (free_port(), free_port());
    let _fs = fio_server(pf);
    let _is = iobench_server(pi, &dir);
    let run = |port: u16| {
        let o = fio_client(
            &[
                format!("--client=localhost,{port}"),
                "--output-format=json".into(),
                job.display().to_string(),
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json_of(&o)
    };
    let a = run(pf);
    let b = run(pi);
    let (mut ka, mut kb) = (BTreeSet::new(), BTreeSet::new());
    keys(&a, "", &mut ka);
    keys(&b, "", &mut kb);
    assert_eq!(ka, kb, "JSON key sets differ");
    assert_eq!(a["global options"], b["global options"]);
    let cs = b["client_stats"].as_array().expect("client_stats");
    let names: Vec<&str> = cs.iter().map(|c| c["jobname"].as_str().unwrap()).collect();
    assert_eq!(names, ["r1", "w1", "All clients"]);
    for (x, y) in a["client_stats"].as_array().unwrap().iter().zip(cs) {
        assert_eq!(x["job options"], y["job options"]);
        assert_eq!(x["read"]["total_ios"], y["read"]["total_ios"]);
        assert_eq!(x["write"]["io_bytes"], y["write"]["io_bytes"]);
        assert_eq!(y["hostname"], "localhost");
        assert_eq!(y["port"], pi);
    }
    assert_eq!(cs[2]["read"]["total_ios"], 256);
    assert_eq!(cs[2]["write"]["total_ios"], 256);
}

#[test]
fn fio_client_drives_several_iobench_servers() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_multi");
    let job = dir.join("one.fio");
    std::fs::write(
        &job,
        format!("[r]\nioengine=psync\nrw=read\nsize=512k\nbs=4k\ndirectory={}\n", dir.display()),
    )
    .unwrap();
    let (p1, p2) = (free_port(), free_port());
    let _s1 = iobench_server(p1, &dir);
    let _s2 = iobench_server(p2, &dir);
    let o = fio_client(
        &[
            format!("--client=localhost,{p1}"),
            job.display().to_string(),
            format!("--client=localhost,{p2}"),
            job.display().to_string(),
            "--output-format=json".into(),
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json_of(&o);
    let cs = j["client_stats"].as_array().unwrap();
    assert_eq!(cs.len(), 3, "two jobs and All clients: {j}");
    let ports: BTreeSet<u64> = cs[..2].iter().map(|c| c["port"].as_u64().unwrap()).collect();
    assert_eq!(ports, [p1 as u64, p2 as u64].into_iter().collect());
    assert_eq!(cs[2]["jobname"], "All clients");
    assert_eq!(cs[2]["read"]["total_ios"], 256, "128 reads from each server");
}

#[test]
fn bad_job_gets_an_error_text_not_a_hang() {
    if fio().is_none() {
        return;
    }
    let dir = scratch("cs_badjob");
    let job = dir.join("bad.fio");
    std::fs::write(&job, "[x]\nrw=sideways\n").unwrap();
    let p = free_port();
    let _s = iobench_server(p, &dir);
    let o = fio_client(&[format!("--client=localhost,{p}"), job.display().to_string()], &dir);
    let out = text(&o) + &String::from_utf8_lossy(&o.stderr);
    assert!(out.contains("sideways"), "the error names the bad value: {out}");
}
