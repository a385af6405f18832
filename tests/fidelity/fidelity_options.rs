//! Options of fio 3.33 that iobench once refused (issue 14's remainder), each compared with
//! the installed fio: write_barrier, log_entries, atomic, gtod_cpu, block_error_percentiles.
use crate::common;

use common::{iobench, json_report, run, run_ok, scratch};
use std::process::Command;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Both tools, fio first, each as a Command ready for arguments (None without fio).
fn both() -> Option<[(&'static str, Command); 2]> {
    let fio = common::fio()?;
    Some([("fio", fio), ("iobench", iobench())])
}

/// `write_barrier` and `log_entries` are accepted and change what fio changes: nothing an
/// engine here can show (only fio's libpmem engine issues barriers; log_entries sizes
/// fio's first log allocation), so the issued counts and the log lines are fio's. A value
/// fio refuses (log_entries below 1024) is refused too.
#[test]
fn write_barrier_and_log_entries_run_as_in_fio() {
    let Some(tools) = both() else { return };
    let dir = scratch("fo-barrier");
    let mut seen = Vec::new();
    for (tool, mut c) in tools {
        let file = dir.join(format!("{tool}.dat"));
        let log = dir.join(tool);
        c.args([
            "--name=b",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
            "--write_barrier=4",
            "--log_entries=4096",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--write_lat_log={}", log.display()));
        let out = run_ok(c);
        let j = json_report(&out);
        let lat = std::fs::read_to_string(dir.join(format!("{tool}_lat.1.log"))).unwrap();
        seen.push((
            j["jobs"][0]["write"]["total_ios"].clone(),
            lat.lines().count(),
        ));
    }
    assert_eq!(seen[0], seen[1], "fio vs iobench (issued, log lines)");
    assert_eq!(seen[1].0, 64);
    for mut c in [common::fio().unwrap(), iobench()] {
        c.args(["--name=b", "--size=64k", "--log_entries=10", "--parse-only"]);
        let out = run(c);
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(
            !out.status.success() || all.contains("log_entries"),
            "log_entries=10 accepted: {all}"
        );
    }
}

/// `atomic=1` opens the file as fio 3.33 does on Linux: O_DIRECT plus fio's O_ATOMIC bit
/// (0x800000, which the kernel ignores), so the writes bypass the page cache.
#[test]
fn atomic_opens_with_o_direct_and_fios_flag() {
    let Some(tools) = both() else { return };
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace not installed: skipping");
        return;
    }
    // O_DIRECT needs a file system that takes it: the target dir, not a tmpfs.
    let dir = scratch("fo-atomic");
    let mut seen = Vec::new();
    for (tool, c) in tools {
        let file = dir.join(format!("{tool}.dat"));
        let trace = dir.join(format!("{tool}.trace"));
        let mut s = Command::new("strace");
        // fio 3.33's `atomic` (the dialect iobench speaks for it; fio ignores the variable).
        s.env("IOBENCH_FIO_COMPAT", crate::common::HOST_DIALECT)
            .args(["-f", "-e", "trace=openat", "-o"])
            .arg(&trace)
            .arg(c.get_program())
            .args([
                "--name=a",
                "--rw=write",
                "--bs=4k",
                "--size=64k",
                "--atomic=1",
                "--output-format=terse",
            ])
            .arg(format!("--filename={}", file.display()));
        run_ok(s);
        let t = std::fs::read_to_string(&trace).unwrap();
        let name = file.display().to_string();
        let opens: Vec<String> = t
            .lines()
            .filter(|l| l.contains(&name) && l.contains("O_RDWR"))
            .map(|l| {
                let flags = l.split(", ").nth(2).unwrap_or("").to_string();
                let mut f: Vec<&str> = flags
                    .split('|')
                    .filter(|f| *f != "O_CLOEXEC" && *f != "O_CREAT")
                    .collect();
                f.sort_unstable();
                f.join("|")
            })
            .collect();
        assert!(
            !opens.is_empty(),
            "{tool}: no read-write open of {name}:\n{t}"
        );
        seen.push(opens[opens.len() - 1].clone());
    }
    assert_eq!(seen[0], seen[1], "fio vs iobench open flags");
    assert!(seen[1].contains("O_DIRECT") && seen[1].contains("0x800000"));
}

/// `gtod_cpu` makes both tools read the time a pinned thread keeps with gettimeofday:
/// every latency is then a whole number of microseconds (without it, the default TSC
/// clock gives nanoseconds).
#[test]
fn gtod_cpu_times_in_whole_microseconds_as_fio() {
    let Some(_) = both() else { return };
    let dir = scratch("fo-gtod");
    for tool in ["fio", "iobench"] {
        let file = dir.join(format!("{tool}.dat"));
        let job = || {
            let mut c = if tool == "fio" {
                common::fio().unwrap()
            } else {
                iobench()
            };
            c.args([
                "--name=g",
                "--rw=randwrite",
                "--bs=4k",
                "--size=256k",
                "--gtod_cpu=0",
                "--output-format=json",
            ])
            .arg(format!("--filename={}", file.display()));
            c
        };
        // fio 3.33's gtod thread sometimes crashes it (SIGSEGV seen in CI): fio gets
        // three tries; iobench one.
        let mut out = common::run(job());
        for _ in 0..2 {
            if tool != "fio" || out.status.code().is_some() {
                break;
            }
            out = common::run(job());
        }
        assert!(
            out.status.success(),
            "{tool}: {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let j = json_report(&out);
        let w = &j["jobs"][0]["write"];
        assert_eq!(w["total_ios"], 64, "{tool}");
        for k in ["clat_ns", "lat_ns"] {
            for m in ["min", "max"] {
                let v = w[k][m].as_u64().unwrap();
                assert_eq!(v % 1000, 0, "{tool}: {k}.{m}={v} is not whole microseconds");
            }
        }
    }
}

/// `block_error_percentiles` on a job that trims nothing prints fio's two lines (fio
/// shows zero counts then) and leaves `block` out of the JSON; more than one file, or a
/// file of more than 8192 trim blocks, is refused as fio refuses it.
#[test]
fn block_error_percentiles_report_as_fio() {
    let Some(tools) = both() else { return };
    let dir = scratch("fo-block");
    let mut lines = Vec::new();
    for (tool, c) in tools {
        let file = dir.join(format!("{tool}.dat"));
        let args = |c: &mut Command, fmt: &str| {
            c.args([
                "--name=b",
                "--rw=write",
                "--bs=4k",
                "--size=64k",
                "--block_error_percentiles=1",
            ])
            .arg(format!("--output-format={fmt}"))
            .arg(format!("--filename={}", file.display()));
        };
        let mut n = Command::new(c.get_program());
        args(&mut n, "normal");
        let out = text(&run_ok(n).stdout);
        let at = out.find("  block lifetime").expect("block lines");
        lines.push(out[at..].lines().take(2).collect::<Vec<_>>().join("\n"));
        let mut j = Command::new(c.get_program());
        args(&mut j, "json");
        let j = json_report(&run_ok(j));
        assert!(j["jobs"][0].get("block").is_none(), "{tool}: {j}");
    }
    assert_eq!(lines[0], lines[1]);
    // Too many trim blocks: fio fails the job at start, iobench refuses it.
    for mut c in [common::fio().unwrap(), iobench()] {
        c.args([
            "--name=b",
            "--rw=write",
            "--bs=4k",
            "--size=64m",
            "--block_error_percentiles=1",
        ])
        .arg(format!("--filename={}", dir.join("big.dat").display()));
        let out = run(c);
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(all.contains("8192"), "{all}");
    }
}

/// Trims counted per block on a loop device. fio 3.33 aborts its report here (it sorts
/// the table with the wrong element size), so the numbers are checked against what a
/// sequential trim job must give: three loops over 16 blocks trim each block 3 times.
#[test]
fn block_error_percentiles_count_trims_per_block() {
    let Some(lo) = common::loopdev::Loop::new("fo-block-trim", "1M") else {
        return;
    };
    let mut c = iobench();
    c.args([
        "--name=b",
        "--rw=trim",
        "--bs=4k",
        "--size=64k",
        "--loops=3",
        "--block_error_percentiles=1",
        "--percentile_list=50:99",
        "--output-format=json",
    ])
    .arg(format!("--filename={}", lo.dev));
    let j = json_report(&run_ok(c));
    let b = &j["jobs"][0]["block"];
    assert_eq!(b["percentiles"]["50.000000"], 3, "{b}");
    assert_eq!(b["percentiles"]["99.000000"], 3, "{b}");
    assert_eq!(b["states"]["trimmed"], 16, "{b}");
    assert_eq!(b["states"]["unwritten"], 0, "{b}");
}

/// The cgroup file system fio 3.33 uses: the first v1 `blkio` or v2 mount listed.
fn cgroup_mount() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let blkio = f.get(2) == Some(&"cgroup") && f[3].split(',').any(|o| o == "blkio");
        (blkio || f.get(2) == Some(&"cgroup2")).then(|| f[1].into())
    })
}

/// `cgroup=NAME`: while the job runs its worker is in the group (one task in it), the
/// group is removed after the run unless `cgroup_nodelete=1`; `cgroup_weight` fails the
/// job with fio's errno where the kernel offers no blkio weight. Same in both tools.
#[test]
fn cgroup_membership_and_cleanup_as_fio() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: cgroups need root");
        return;
    }
    let Some(mnt) = cgroup_mount() else {
        eprintln!("skipping: no cgroup file system");
        return;
    };
    let Some(tools) = both() else { return };
    let dir = scratch("fo-cgroup");
    let file = dir.join("c.dat");
    std::fs::write(&file, vec![0u8; 65536]).unwrap();
    for (tool, c) in tools {
        for nodelete in [false, true] {
            let name = format!("iobench-test-{tool}-{nodelete}");
            let group = mnt.join(&name);
            let _ = std::fs::remove_dir(&group);
            let mut cmd = Command::new(c.get_program());
            cmd.args([
                "--name=c",
                "--rw=read",
                "--size=64k",
                "--time_based",
                "--runtime=2s",
                "--output-format=terse",
            ])
            .arg(format!("--filename={}", file.display()))
            .arg(format!("--cgroup={name}"))
            .arg(format!("--cgroup_nodelete={}", nodelete as u8));
            let mut child = cmd
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn");
            // The most tasks seen in the group while the job runs (polled: start-up
            // takes longer on a loaded machine).
            let mut tasks = 0;
            while child.try_wait().unwrap().is_none() {
                let now = ["tasks", "cgroup.procs"]
                    .iter()
                    .find_map(|f| std::fs::read_to_string(group.join(f)).ok())
                    .map_or(0, |t| t.lines().count());
                tasks = tasks.max(now);
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let out = common::wait_for(child, 30);
            assert!(out.status.success(), "{tool}");
            assert_eq!(tasks, 1, "{tool}: tasks in {name}");
            assert_eq!(group.exists(), nodelete, "{tool}: {name} after the run");
            let _ = std::fs::remove_dir(&group);
        }
    }
    let mut errs = Vec::new();
    for mut c in [common::fio().unwrap(), iobench()] {
        c.args([
            "--name=c",
            "--rw=read",
            "--size=64k",
            "--cgroup=iobench-test-weight",
            "--cgroup_weight=500",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", file.display()));
        errs.push(json_report(&run(c))["jobs"][0]["error"].clone());
    }
    let _ = std::fs::remove_dir(mnt.join("iobench-test-weight"));
    assert_eq!(
        errs[0], errs[1],
        "job error with cgroup_weight, fio vs iobench"
    );
}

/// `numa_cpu_nodes=0` and each `numa_mem_policy` make the worker's calls fio makes
/// through libnuma (node 0 is all this machine has): the affinity mask of the node's CPUs,
/// then the memory policy's mode and node mask (none for `default`). Malformed values
/// are refused by both.
#[test]
fn numa_options_make_fios_system_calls() {
    let Some(tools) = both() else { return };
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace not installed: skipping");
        return;
    }
    let dir = scratch("fo-numa");
    let file = dir.join("n.dat");
    std::fs::write(&file, vec![0u8; 65536]).unwrap();
    let progs: Vec<_> = tools
        .iter()
        .map(|(t, c)| (*t, c.get_program().to_owned()))
        .collect();
    for pol in [
        "bind:0",
        "prefer:0",
        "interleave",
        "interleave:0",
        "local",
        "default",
    ] {
        let mut seen = Vec::new();
        for (tool, prog) in &progs {
            let trace = dir.join(format!("{tool}.trace"));
            let mut s = Command::new("strace");
            s.args(["-f", "-e", "trace=set_mempolicy,sched_setaffinity", "-o"])
                .arg(&trace)
                .arg(prog)
                .args(["--name=n", "--rw=read", "--size=64k", "--numa_cpu_nodes=0"])
                .arg(format!("--numa_mem_policy={pol}"))
                .arg(format!("--filename={}", file.display()))
                .arg("--output-format=terse");
            run_ok(s);
            let t = std::fs::read_to_string(&trace).unwrap();
            let calls: Vec<&str> = t.lines().filter(|l| l.contains('(')).collect();
            let last_aff = calls
                .iter()
                .rposition(|l| l.contains("sched_setaffinity("))
                .expect("an affinity call");
            let aff = calls[last_aff];
            let mask = aff[aff.find('[').unwrap()..=aff.find(']').unwrap()].to_string();
            let policies: Vec<String> = calls[last_aff..]
                .iter()
                .filter(|l| l.contains("set_mempolicy("))
                .map(|l| {
                    let args = l.split_once("set_mempolicy(").unwrap().1;
                    let mode = args.split(',').next().unwrap().to_string();
                    let node0 = args.contains("[0x00000000000001");
                    format!("{mode} node0={node0}")
                })
                .collect();
            seen.push((mask, policies));
        }
        assert_eq!(seen[0], seen[1], "numa_mem_policy={pol}: fio vs iobench");
    }
    for bad in [
        "--numa_mem_policy=bind",
        "--numa_mem_policy=prefer:0-1",
        "--numa_cpu_nodes=77",
    ] {
        for (tool, prog) in &progs {
            let mut c = Command::new(prog);
            c.args(["--name=n", "--rw=read", "--size=64k", bad])
                .arg(format!("--filename={}", file.display()));
            let out = run(c);
            assert!(!out.status.success(), "{tool} accepted {bad}");
        }
    }
}

/// The JSON document after anything printed before it (act's table).
fn json_after_text(out: &std::process::Output) -> serde_json::Value {
    let s = text(&out.stdout);
    let at = s.find("{\n").unwrap_or_else(|| panic!("no JSON: {s}"));
    serde_json::from_str(&s[at..]).expect("JSON report")
}

/// (name, job options, issued reads, issued writes, group) of every job reported.
fn jobs_of(j: &serde_json::Value) -> Vec<(String, String, u64, u64, u64)> {
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["jobname"].as_str().unwrap().to_string(),
                x["job options"].to_string(),
                x["read"]["total_ios"].as_u64().unwrap(),
                x["write"]["total_ios"].as_u64().unwrap(),
                x["groupid"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `--profile=tiobench` runs fio's four jobs (sequential and random writes, then reads,
/// each a stonewall, over four files of 4 KiB per MiB of memory in the current
/// directory) with the same options and issued counts. Its own options are accepted
/// and, as in fio 3.33, change nothing.
#[test]
fn profile_tiobench_expands_as_fio() {
    let Some(tools) = both() else { return };
    let mut seen = Vec::new();
    for (tool, c) in tools {
        let dir = scratch(&format!("fo-tiobench-{tool}"));
        let mut cmd = Command::new(c.get_program());
        cmd.current_dir(&dir).args([
            "--profile=tiobench",
            "--size=4",
            "--threads=2",
            "--output-format=json",
        ]);
        let j = json_after_text(&run_ok(cmd));
        seen.push((jobs_of(&j), j["global options"]["size"].clone()));
        let files = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(files, 4, "{tool}: .fio.tio.1-4");
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert_eq!(seen[0], seen[1], "fio vs iobench");
    assert_eq!(seen[1].0.len(), 4);
}

/// `--profile=act` with one device: fio's read job (8 threads of 1536-byte reads at
/// 250 IOPS each) and write job (131072-byte writes at 12 IOPS), direct, time based, in
/// one reporting group; the latency table then the report. Issued counts are paced, so
/// they are compared within 15%. `--prep` gives fio's two preparation jobs.
#[test]
fn profile_act_expands_as_fio() {
    let Some(tools) = both() else { return };
    // fio 3.33 keeps a job name in 32 bytes and aborts on a longer one
    // ("act-prep-zeroes-" and the path): a short path.
    let dev = std::path::PathBuf::from(format!("/tmp/ioba{}.img", std::process::id() % 100));
    let _gone = common::Gone(dev.clone());
    std::fs::File::create(&dev)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let mut seen = Vec::new();
    let mut prep = Vec::new();
    for (tool, c) in tools {
        let mut cmd = Command::new(c.get_program());
        cmd.args(["--profile=act", "--test-duration=2", "--output-format=json"])
            .arg(format!("--device-names={}", dev.display()));
        let out = run_ok(cmd);
        let s = text(&out.stdout);
        assert!(
            s.starts_with("        trans                   device\n"),
            "{tool}: {s}"
        );
        assert!(s.contains("act: test complete, device(s): "), "{tool}");
        let j = json_after_text(&out);
        seen.push((jobs_of(&j), j["global options"]["runtime"].clone()));
        let mut cmd = Command::new(c.get_program());
        cmd.args([
            "--profile=act",
            "--prep",
            // fio prints a row per hour of the test duration, even for --prep: 24
            // million rows with the default 24h (written in microseconds, see
            // src/options/profile.rs), so a short one.
            "--test-duration=2",
            "--output-format=json",
            "--size=2m",
        ])
        .arg(format!("--device-names={}", dev.display()));
        let j = json_after_text(&run_ok(cmd));
        prep.push(jobs_of(&j));
    }
    let (f, i) = (&seen[0], &seen[1]);
    assert_eq!(f.1, i.1, "runtime");
    assert_eq!(f.0.len(), 1, "one reporting group: {f:?}");
    assert_eq!(
        (&f.0[0].0, &f.0[0].1),
        (&i.0[0].0, &i.0[0].1),
        "name, options"
    );
    // Paced counts: within 15% (a tool starved of CPU by the other tests falls behind).
    let near = |a: u64, b: u64| a.abs_diff(b) * 100 <= a.max(b) * 15;
    assert!(near(f.0[0].2, i.0[0].2), "reads: {f:?} vs {i:?}");
    assert!(near(f.0[0].3, i.0[0].3), "writes: {f:?} vs {i:?}");
    assert_eq!(prep[0], prep[1], "act --prep: fio vs iobench");
}

/// A blktrace record (version 7, this machine's byte order) with an optional payload.
fn bt_record(time: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(48 + pdu.len());
    b.extend_from_slice(&0x6561_7407u32.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(&time.to_ne_bytes());
    b.extend_from_slice(&sector.to_ne_bytes());
    b.extend_from_slice(&bytes.to_ne_bytes());
    b.extend_from_slice(&action.to_ne_bytes());
    b.extend_from_slice(&4321u32.to_ne_bytes());
    b.extend_from_slice(&(7u32 << 20).to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(&0u16.to_ne_bytes());
    b.extend_from_slice(&(pdu.len() as u16).to_ne_bytes());
    b.extend_from_slice(pdu);
    b
}

const QUEUE: u32 = 1;
const TC_READ: u32 = 1 << 16;
const TC_WRITE: u32 = 2 << 16;
const TC_FLUSH: u32 = 4 << 16;
const TC_QUEUE: u32 = 16 << 16;
const TC_NOTIFY: u32 = 1024 << 16;

/// A small trace: a process notice (with payload), queued writes, a completion, a read,
/// a flush, a back merge and a zero-byte read (both ignored), a larger write.
fn small_trace() -> Vec<u8> {
    let w = QUEUE | TC_QUEUE | TC_WRITE;
    [
        bt_record(0, 0, 0, TC_NOTIFY, b"fio\0"),
        bt_record(1000, 0, 4096, w, b""),
        bt_record(2000, 8, 4096, w, b""),
        bt_record(2500, 8, 4096, 7 | (128 << 16) | TC_WRITE, b""),
        bt_record(3000, 100, 8192, QUEUE | TC_QUEUE | TC_READ, b""),
        bt_record(4000, 0, 0, QUEUE | TC_QUEUE | TC_FLUSH, b""),
        bt_record(5000, 16, 4096, 2 | TC_QUEUE | TC_WRITE, b""),
        bt_record(6000, 64, 16384, w, b""),
        bt_record(7000, 200, 0, QUEUE | TC_QUEUE | TC_READ, b""),
    ]
    .concat()
}

/// The reads, writes and syncs a run made on `dev`, as strace shows them, in order.
fn traced_io(trace: &str) -> Vec<String> {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let call = l.split_once(' ').map_or(l, |(_, r)| r.trim_start());
            let name = call.split('(').next()?;
            match name {
                "pread64" | "pwrite64" => {
                    let args: Vec<&str> = call.rsplitn(3, ", ").collect();
                    // args: "OFFSET) = N", "LEN", rest
                    let off = args[0].split(')').next()?;
                    Some(format!("{name} {} {off}", args[1]))
                }
                "fsync" | "fdatasync" => Some(name.to_string()),
                _ => None,
            }
        })
        .collect()
}

/// `read_iolog` of a blktrace binary trace: the same I/O as fio's replay, in order
/// (writes at sector*512, the read, the flush as an fsync, the zero-byte and non-queue
/// records left out), on a loop device named by replay_redirect.
#[test]
fn blktrace_replay_issues_fios_io() {
    let Some(lo) = common::loopdev::Loop::new("fo-blktrace", "4M") else {
        return;
    };
    let Some(tools) = both() else { return };
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace not installed: skipping");
        return;
    }
    let dir = scratch("fo-blktrace-run");
    let bin = dir.join("t.bin");
    std::fs::write(&bin, small_trace()).unwrap();
    let mut seen = Vec::new();
    for (tool, c) in tools {
        let trace = dir.join(format!("{tool}.strace"));
        let mut s = Command::new("strace");
        s.args(["-f", "-e", "trace=pread64,pwrite64,fsync,fdatasync", "-o"])
            .arg(&trace)
            .arg(c.get_program())
            .args(["--name=bt", "--output-format=terse"])
            .arg(format!("--read_iolog={}", bin.display()))
            .arg(format!("--replay_redirect={}", lo.dev));
        run_ok(s);
        // fio reads its own shared memory with pread: keep the device's I/O only.
        let io: Vec<String> = traced_io(&trace.display().to_string())
            .into_iter()
            .filter(|l| !l.ends_with(" 784 64"))
            .collect();
        seen.push(io);
    }
    assert_eq!(seen[0], seen[1], "fio vs iobench");
    assert_eq!(
        seen[1],
        vec![
            "pwrite64 4096 0",
            "pwrite64 4096 4096",
            "pread64 8192 51200",
            "fsync",
            "pwrite64 16384 32768"
        ]
    );
}

/// `merge_blktrace_file` interleaves traces by time, `merge_blktrace_iters` repeats one,
/// and the merged trace is replayed; `--merge-blktrace-only` writes it and runs nothing.
/// (fio 3.33's merge fails with "iolog short read" and leaves the file empty, so the
/// counts are checked against the traces themselves.)
#[test]
fn blktrace_merge_interleaves_and_repeats() {
    let Some(lo) = common::loopdev::Loop::new("fo-blktrace-merge", "4M") else {
        return;
    };
    let dir = scratch("fo-blktrace-merge-run");
    let (a, b) = (dir.join("a.bin"), dir.join("b.bin"));
    std::fs::write(&a, small_trace()).unwrap();
    std::fs::write(
        &b,
        [
            bt_record(500, 300, 4096, QUEUE | TC_QUEUE | TC_READ, b""),
            bt_record(1500, 400, 4096, QUEUE | TC_QUEUE | TC_WRITE, b""),
        ]
        .concat(),
    )
    .unwrap();
    let merged = dir.join("m.bin");
    let mut c = iobench();
    c.args([
        "--name=bt",
        "--merge-blktrace-only",
        "--merge_blktrace_iters=1:2",
    ])
    .arg(format!("--read_iolog={}:{}", a.display(), b.display()))
    .arg(format!("--merge_blktrace_file={}", merged.display()))
    .arg(format!("--replay_redirect={}", lo.dev));
    let out = run_ok(c);
    assert!(text(&out.stdout).is_empty(), "ran something");
    // a's 5 queue records with a direction (its flush has none) and b's 2, twice.
    assert_eq!(std::fs::metadata(&merged).unwrap().len(), 9 * 48);
    let mut c = iobench();
    c.args([
        "--name=bt",
        "--merge_blktrace_iters=1:2",
        "--output-format=json",
    ])
    .arg(format!("--read_iolog={}:{}", a.display(), b.display()))
    .arg(format!("--merge_blktrace_file={}", merged.display()))
    .arg(format!("--replay_redirect={}", lo.dev));
    let j = json_report(&run_ok(c));
    let job = &j["jobs"][0];
    assert_eq!(job["read"]["total_ios"], 3, "{job}");
    assert_eq!(job["write"]["total_ios"], 5, "{job}");
    let mut c = iobench();
    c.args(["--name=bt", "--merge_blktrace_iters=1:2:3", "--parse-only"])
        .arg(format!("--read_iolog={}:{}", a.display(), b.display()))
        .arg(format!("--merge_blktrace_file={}", merged.display()));
    let out = run(c);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("merge_blktrace_iters"));
}
