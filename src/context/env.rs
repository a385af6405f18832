//! The `iobench_env` object: iobench's version and command line, the jobs' options and a
//! SHA-256 of them, the machine (hostname, kernel, CPU, memory, clock source) and, for
//! each target, its block device and filesystem. `--env` adds it to a run's JSON report;
//! `iobench quick` and the study commands record it with their results.
//!
//! Every field comes from `/proc`, `/sys` or `uname(2)`; a field that cannot be found is
//! `null` here (and left out of fio-layout JSON, whose printer has no null).

use super::sysfs;
use crate::job::Job;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The version of `iobench_env`'s layout (docs/schema/iobench-env.schema.json): raised
/// when a key changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// Collects the whole context of a run of `jobs` started by `command_line` (argv,
/// program name first).
pub fn collect(command_line: &[String], jobs: &[Job]) -> Value {
    let mut o = Map::new();
    o.insert("schema_version".into(), json!(SCHEMA_VERSION));
    o.insert("iobench_version".into(), json!(env!("CARGO_PKG_VERSION")));
    o.insert(
        "command_line".into(),
        json!(crate::options::redact::argv(command_line)
            .iter()
            .map(|a| clean(a))
            .collect::<Vec<_>>()),
    );
    o.insert("jobs".into(), jobs_value(jobs));
    o.insert("options_sha256".into(), json!(options_sha256(jobs)));
    o.extend(machine());
    let mut paths: Vec<String> = Vec::new();
    for j in jobs {
        if j.exec.engine.flags().no_local_disk() {
            continue;
        }
        for p in j.files.all_paths(&j.name, j.exec.numjobs) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    o.insert(
        "targets".into(),
        Value::Array(paths.iter().map(|p| target(Path::new(p))).collect()),
    );
    Value::Object(o)
}

/// The machine-wide part: hostname, OS, kernel, CPU, memory, clock sources.
pub fn machine() -> Map<String, Value> {
    let mut o = Map::new();
    let u = uname();
    o.insert("hostname".into(), json!(u.as_ref().map(|u| u[1].clone())));
    o.insert("os".into(), json!(os_release().map(|s| clean(&s))));
    o.insert(
        "kernel".into(),
        match &u {
            Some(u) => json!({
                "sysname": u[0],
                "release": u[2],
                "version": u[3],
                "machine": u[4],
            }),
            None => Value::Null,
        },
    );
    o.insert(
        "cpu".into(),
        json!({
            "model": cpu_model(),
            "count": sysconf(libc::_SC_NPROCESSORS_ONLN),
            "allowed": allowed_cpus(),
        }),
    );
    o.insert(
        "memory".into(),
        json!({
            "total_bytes": meminfo_bytes("MemTotal"),
            "available_bytes": meminfo_bytes("MemAvailable"),
        }),
    );
    let clock = match crate::clock::selected() {
        crate::clock::ClockSource::Cpu => "cpu",
        crate::clock::ClockSource::ClockGettime => "clock_gettime",
        crate::clock::ClockSource::Gettimeofday => "gettimeofday",
    };
    o.insert(
        "clocksource".into(),
        json!({
            "kernel": sysfs::read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            "iobench": clock,
        }),
    );
    o
}

/// One target: its path, what it is, its block device and its filesystem. A target that
/// does not exist yet is described by the directory it will be created in.
pub fn target(path: &Path) -> Value {
    let md = std::fs::metadata(path).ok();
    let kind = match &md {
        None => "missing",
        Some(m) => {
            use std::os::unix::fs::FileTypeExt;
            let t = m.file_type();
            if t.is_block_device() {
                "block"
            } else if t.is_char_device() {
                "char"
            } else if t.is_dir() {
                "directory"
            } else if t.is_file() {
                "file"
            } else {
                "other"
            }
        }
    };
    let base = sysfs::existing_ancestor(path);
    let device = base
        .as_deref()
        .and_then(sysfs::device_number)
        .and_then(|(maj, min)| sysfs::block_device(maj, min));
    // A block device node's filesystem is devtmpfs: what matters is where it is mounted,
    // if anywhere, which the device's own major:minor finds.
    let fs = if kind == "block" {
        sysfs::device_number(path).and_then(|d| {
            let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let m = info
                .lines()
                .filter_map(sysfs::parse_mountinfo_line)
                .find(|m| m.dev == d)?;
            Some(json!({
                "mount_point": m.mount_point,
                "type": m.fstype,
                "source": m.source,
                "options": m.options(),
                "vfs_options": m.vfs_options,
                "fs_options": m.fs_options,
            }))
        })
    } else {
        base.as_deref().and_then(sysfs::filesystem)
    };
    json!({
        "path": clean(&path.to_string_lossy()),
        "type": kind,
        "device": device,
        "filesystem": fs,
    })
}

/// Each job's options as they apply (globals first, then its own; the last setting of an
/// option wins), by canonical name; a bare flag's value is the empty string.
fn job_options(job: &Job) -> Map<String, Value> {
    let mut m = Map::new();
    for opt in &job.raw.opts {
        if opt.def.name == "name" {
            continue;
        }
        m.shift_remove(opt.def.name);
        m.insert(
            opt.def.name.to_string(),
            json!(clean(opt.def.shown(opt.value.as_deref().unwrap_or("")))),
        );
    }
    m
}

fn jobs_value(jobs: &[Job]) -> Value {
    Value::Array(
        jobs.iter()
            .map(|j| json!({ "name": clean(&j.name), "options": Value::Object(job_options(j)) }))
            .collect(),
    )
}

/// The text the options hash is taken over: for each job in order, `[name]` on a line,
/// then one `option=value` line per option (globals first, the last setting winning) in
/// byte order of the names, so that the same job given in another order hashes the same.
pub fn options_text(jobs: &[Job]) -> String {
    let mut out = String::new();
    for j in jobs {
        out.push('[');
        out.push_str(&j.name);
        out.push_str("]\n");
        let m = job_options(j);
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort();
        for k in keys {
            out.push_str(k);
            out.push('=');
            out.push_str(m[k].as_str().unwrap_or(""));
            out.push('\n');
        }
    }
    out
}

/// SHA-256 of [`options_text`], in lower-case hex.
pub fn options_sha256(jobs: &[Job]) -> String {
    let d = Sha256::digest(options_text(jobs).as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Control characters would break fio's JSON printer (it escapes only `"` and `\`): they
/// are shown as `?` in the context's strings.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// uname(2): sysname, nodename, release, version, machine.
fn uname() -> Option<[String; 5]> {
    // SAFETY: utsname is plain old data; uname fills it before we read it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a utsname for the call.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        clean(&String::from_utf8_lossy(&bytes))
    };
    Some([
        field(&u.sysname),
        field(&u.nodename),
        field(&u.release),
        field(&u.version),
        field(&u.machine),
    ])
}

fn sysconf(name: libc::c_int) -> Option<u64> {
    // SAFETY: sysconf only reads its argument.
    let v = unsafe { libc::sysconf(name) };
    (v > 0).then_some(v as u64)
}

/// The CPUs this process may run on (what `nproc` prints).
fn allowed_cpus() -> Option<u64> {
    // SAFETY: cpu_set_t is plain old data, filled by sched_getaffinity.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer and its size for the call.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return None;
    }
    // SAFETY: set was filled above.
    Some(unsafe { libc::CPU_COUNT(&set) } as u64)
}

/// The CPU's model as `/proc/cpuinfo` names it (`model name` on x86, else the first of
/// the fields other architectures use).
fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    for key in ["model name", "Model", "cpu model", "Hardware", "cpu"] {
        for line in info.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return Some(clean(v.trim()));
                }
            }
        }
    }
    None
}

fn meminfo_bytes(key: &str) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k != key {
            return None;
        }
        let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

/// `PRETTY_NAME` of /etc/os-release.
fn os_release() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .ok()?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("PRETTY_NAME=")?;
        Some(v.trim_matches('"').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(args: &[&str]) -> Vec<Job> {
        let inv = crate::cli::parse_args(args).unwrap();
        inv.jobs
            .iter()
            .map(|r| crate::job::resolve(r).unwrap())
            .collect()
    }

    #[test]
    fn the_hash_ignores_option_order_and_sees_values() {
        let a = jobs(&["--name=j", "--bs=4k", "--rw=read", "--size=1m"]);
        let b = jobs(&["--name=j", "--rw=read", "--size=1m", "--bs=4k"]);
        let c = jobs(&["--name=j", "--rw=read", "--size=1m", "--bs=8k"]);
        assert_eq!(options_sha256(&a), options_sha256(&b));
        assert_ne!(options_sha256(&a), options_sha256(&c));
        assert_eq!(options_text(&a), "[j]\nbs=4k\nrw=read\nsize=1m\n");
    }

    #[test]
    fn globals_apply_and_the_last_setting_wins() {
        let j = jobs(&["--bs=8k", "--name=j", "--bs=4k", "--group_reporting"]);
        assert_eq!(options_text(&j), "[j]\nbs=4k\ngroup_reporting=\n");
    }
}
