//! iolog replay against fio 3.33, watched with strace: a log fio wrote with fsync=N or
//! fdatasync=N replays with the same writes and syncs in the same order and the same
//! sync statistics; trims in a log are dropped as fio drops them; `replay_skip` is
//! accepted (and, as in fio, leaves a text iolog's replay unchanged); `read_iolog_chunked`
//! gives the same I/O while reading the log as the replay goes; I/O on a file the log has
//! closed is refused.

use crate::common;

use std::path::Path;
use std::process::Command;

/// Writes a log with fio (or iobench when fio is missing) of `args` on files in `dir`.
fn make_log(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let log = dir.join(name);
    let _ = std::fs::remove_file(&log);
    let mut t = common::fio().unwrap_or_else(common::iobench);
    t.current_dir(dir)
        .arg("--name=w")
        .arg(format!("--directory={}", dir.display()))
        .args(args)
        .arg(format!("--write_iolog={}", log.display()))
        .arg("--output-format=json");
    common::run_ok(t);
    log
}

/// The operations a log asks for, as strace shows them: `pwrite64 <file> <off> <len>`,
/// `pread64 <file> <off> <len>`, `fsync <file>`, `fdatasync <file>` (trims are not
/// replayed), with the file's name without its directory.
fn ops_of_log(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).expect("log");
    // Version 3 lines start with a time.
    let skip = usize::from(text.starts_with("fio version 3"));
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().skip(skip).collect();
            let f = base(w.first()?);
            match w.get(1).copied()? {
                "write" => Some(format!("pwrite64 {f} {} {}", w[2], w[3])),
                "read" => Some(format!("pread64 {f} {} {}", w[2], w[3])),
                "sync" => Some(format!("fsync {f}")),
                "datasync" => Some(format!("fdatasync {f}")),
                _ => None,
            }
        })
        .collect()
}

/// How many fsyncs a log asks for.
fn syncs_of(log: &Path) -> u64 {
    ops_of_log(log)
        .iter()
        .filter(|o| o.starts_with("fsync "))
        .count() as u64
}

/// A path's last component.
fn base(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// True when strace can trace here.
fn have_strace() -> bool {
    Command::new("strace")
        .args(["-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// What a replay did: the data-file operations strace saw (in the form of
/// [`ops_of_log`]), the log's own reads after the first data operation, and the JSON.
struct Replayed {
    ops: Vec<String>,
    log_reads_after_io: usize,
    json: serde_json::Value,
}

/// Replays `log` with `tool` under strace (when present) and `extra` options.
fn replay(tool: Command, dir: &Path, tag: &str, log: &Path, extra: &[&str]) -> Replayed {
    // The data files exist at the log's full sizes: fio does not lay out a replayed file
    // (iobench would, with a sync of its own), so both replay on the same files.
    let mut ends = std::collections::BTreeMap::<String, u64>::new();
    for o in ops_of_log(log) {
        let w: Vec<&str> = o.split(' ').collect();
        let e = ends.entry(w[1].to_string()).or_default();
        if let [_, _, off, len] = w[..] {
            *e = (*e).max(off.parse::<u64>().unwrap() + len.parse::<u64>().unwrap());
        }
    }
    for (f, end) in ends {
        let _ = std::fs::remove_file(dir.join(&f));
        std::fs::File::create(dir.join(f))
            .and_then(|f| f.set_len(end))
            .expect("data file");
    }
    let trace = dir.join(format!("{tag}.strace"));
    let strace = have_strace();
    let mut cmd = if strace {
        let mut c = Command::new("strace");
        c.args(["-f", "-qq", "-y", "-e"])
            .arg("trace=pwrite64,pread64,fsync,fdatasync,read")
            .arg("-o")
            .arg(&trace)
            .arg(tool.get_program());
        c
    } else {
        Command::new(tool.get_program())
    };
    cmd.current_dir(dir)
        .arg("--name=r")
        .arg(format!("--read_iolog={}", log.display()))
        .arg("--replay_no_stall=1")
        .args(extra)
        .arg("--output-format=json");
    let out = common::run_ok(cmd);
    let json = serde_json::from_slice(&out.stdout).expect("json");
    let mut ops = Vec::new();
    let mut log_reads_after_io = 0;
    if strace {
        let logname = format!("<{}>", log.display());
        let inside = format!("<{}/", dir.display());
        // With threads, strace splits a call that another thread interrupts into
        // `pid call(args <unfinished ...>` and `pid <... call resumed>rest`: rejoin them.
        let mut partial = std::collections::HashMap::<String, String>::new();
        for raw in std::fs::read_to_string(&trace).expect("trace").lines() {
            let (pid, l) = raw.split_once(' ').unwrap_or(("", raw));
            let l = l.trim_start();
            let joined;
            let l = if let Some(head) = l.strip_suffix(" <unfinished ...>") {
                partial.insert(pid.to_string(), head.to_string());
                continue;
            } else if let Some(rest) = l.strip_prefix("<... ") {
                let rest = rest.split_once("resumed>").map_or("", |(_, r)| r);
                joined = format!("{}{rest}", partial.remove(pid).unwrap_or_default());
                joined.as_str()
            } else {
                l
            };
            let call = l.split('(').next().unwrap_or("");
            if l.contains(&logname) && call == "read" && !ops.is_empty() {
                log_reads_after_io += 1;
            }
            // Only the data files: `call(fd</dir/name>, ...`.
            let Some(path) = l
                .split_once('<')
                .and_then(|(_, r)| r.split_once('>'))
                .map(|(p, _)| p)
                .filter(|p| l.contains(&inside) && !p.ends_with(".log"))
            else {
                continue;
            };
            let f = base(path);
            match call {
                "fsync" | "fdatasync" => ops.push(format!("{call} {f}")),
                "pwrite64" | "pread64" => {
                    // pwrite64(7</p>, "..."..., LEN, OFF) = N
                    let args = l.rsplit_once(')').map_or("", |(a, _)| a);
                    let mut nums = args.rsplit(", ");
                    let off = nums.next().unwrap_or("").trim();
                    let len = nums.next().unwrap_or("").trim();
                    ops.push(format!("{call} {f} {off} {len}"));
                }
                _ => {}
            }
        }
    } else {
        eprintln!("strace not usable: comparing JSON only");
    }
    Replayed {
        ops,
        log_reads_after_io,
        json,
    }
}

/// (sync total_ios, sync latency samples, reads, writes, trims) from the JSON.
fn counts(j: &serde_json::Value) -> [u64; 5] {
    let j = &j["jobs"][0];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    [
        n(&j["sync"]["total_ios"]),
        n(&j["sync"]["lat_ns"]["N"]),
        n(&j["read"]["total_ios"]),
        n(&j["write"]["total_ios"]),
        n(&j["trim"]["total_ios"]),
    ]
}

/// Replays `log` in iobench (and fio when present) and checks both against the log (only
/// the syncs with libaio, whose I/O strace does not show as pread/pwrite).
fn check_replay(dir: &Path, log: &Path, extra: &[&str]) -> [u64; 5] {
    let aio = extra.iter().any(|e| e.contains("libaio"));
    let keep = |ops: Vec<String>| -> Vec<String> {
        ops.into_iter()
            .filter(|o| !aio || o.contains("sync "))
            .collect()
    };
    let want = keep(ops_of_log(log));
    let mut ours = replay(common::iobench(), dir, "iobench", log, extra);
    ours.ops = keep(ours.ops);
    let traced = have_strace();
    if traced {
        assert_eq!(ours.ops, want, "iobench's replay of {log:?} {extra:?}");
    }
    let c = counts(&ours.json);
    if let Some(fio) = common::fio() {
        let mut theirs = replay(fio, dir, "fio", log, extra);
        theirs.ops = keep(theirs.ops);
        if traced {
            assert_eq!(theirs.ops, want, "fio's replay of {log:?} {extra:?}");
        }
        assert_eq!(
            c,
            counts(&theirs.json),
            "sync/io counts of {log:?} {extra:?}"
        );
    }
    c
}

#[test]
fn replayed_syncs_are_issued_and_counted_as_fio() {
    let dir = common::scratch("iolog_more_sync");
    // fsync: every sync counts in total_ios.
    let log = make_log(
        &dir,
        "fsync.log",
        &["--rw=randwrite", "--bs=4k", "--size=64k", "--fsync=3"],
    );
    let syncs = syncs_of(&log);
    assert!(syncs >= 4, "the log has syncs");
    let c = check_replay(&dir, &log, &[]);
    assert_eq!(c[..2], [syncs, syncs]);
    assert_eq!(c[3], 16);
    // fdatasync plus end_fsync's closing sync: only the fsync counts in total_ios, every
    // sync has a latency; with a queue, the writes before each sync are reaped first.
    let log = make_log(
        &dir,
        "fdatasync.log",
        &[
            "--rw=write",
            "--bs=4k",
            "--size=48k",
            "--fdatasync=3",
            "--end_fsync=1",
        ],
    );
    let want = ops_of_log(&log);
    let n = |k: &str| want.iter().filter(|o| o.starts_with(k)).count() as u64;
    assert!(n("fdatasync ") >= 3 && n("fsync ") == 1, "{want:?}");
    let c = check_replay(&dir, &log, &[]);
    assert_eq!(c[..2], [1, n("fdatasync ") + 1]);
    let c = check_replay(&dir, &log, &["--ioengine=libaio", "--iodepth=8"]);
    assert_eq!(c[..2], [1, n("fdatasync ") + 1]);
    // Two files: each sync goes to the file the log names.
    let log = make_log(
        &dir,
        "two.log",
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--size=64k",
            "--nrfiles=2",
            "--fsync=3",
        ],
    );
    assert_eq!(check_replay(&dir, &log, &[])[3], 16);
    // fio takes the job's direction from the log: end_fsync syncs each file at the end,
    // and fsync_on_close also at each `close` of the log unless a sync came just before
    // (neither in the statistics); here fio adds 2 and 3 fsyncs.
    let plain = ops_of_log(&log).len();
    for (opt, extra) in [("--end_fsync=1", 2), ("--fsync_on_close=1", 3)] {
        let ours = replay(common::iobench(), &dir, "iobench", &log, &[opt]);
        assert_eq!(counts(&ours.json)[..2], [syncs_of(&log), syncs_of(&log)]);
        if have_strace() {
            assert_eq!(ours.ops.len(), plain + extra, "{opt}: {:?}", ours.ops);
        }
        if let Some(fio) = common::fio() {
            let theirs = replay(fio, &dir, "fio", &log, &[opt]);
            assert_eq!(ours.ops, theirs.ops, "{opt}");
            assert_eq!(counts(&ours.json), counts(&theirs.json), "{opt}");
        }
    }
    // The normal output shows the sync latency block.
    let mut t = common::iobench();
    t.current_dir(&dir)
        .args(["--name=r", "--replay_no_stall=1"])
        .arg(format!("--read_iolog={}", log.display()));
    let text = String::from_utf8(common::run_ok(t).stdout).unwrap();
    assert!(
        text.contains("  fsync/fdatasync/sync_file_range:\n    sync ("),
        "{text}"
    );
}

#[test]
fn trims_are_dropped_and_closed_files_refused() {
    let dir = common::scratch("iolog_more_trim");
    let d = dir.join("data");
    let d = d.display();
    let log = dir.join("t.log");
    std::fs::write(
        &log,
        format!(
            "fio version 2 iolog\n{d} add\n{d} open\n{d} write 0 8192\n{d} trim 0 4096\n\
             {d} sync 0 0\n{d} read 4096 4096\n{d} datasync 0 0\n{d} close\n"
        ),
    )
    .unwrap();
    // fio 3.33 refuses the trim line ("bad ddir") and replays the rest.
    let c = check_replay(&dir, &log, &[]);
    assert_eq!(c, [1, 2, 1, 1, 0]);
    // A closed file takes no I/O (fio aborts on it; iobench refuses the log).
    let bad = dir.join("closed.log");
    std::fs::write(
        &bad,
        format!("fio version 2 iolog\n{d} add\n{d} open\n{d} write 0 4096\n{d} close\n{d} write 4096 4096\n"),
    )
    .unwrap();
    let mut t = common::iobench();
    t.current_dir(&dir)
        .arg("--name=r")
        .arg(format!("--read_iolog={}", bad.display()));
    let out = common::run(t);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:6: write on file", bad.display())),
        "{err}"
    );
    // Closed and opened again: both writes are replayed, in both tools.
    let ok = dir.join("reopened.log");
    std::fs::write(
        &ok,
        format!("fio version 2 iolog\n{d} add\n{d} open\n{d} write 0 4096\n{d} close\n{d} open\n{d} write 4096 4096\n{d} close\n"),
    )
    .unwrap();
    assert_eq!(check_replay(&dir, &ok, &[])[3], 2);
}

#[test]
fn replay_skip_is_checked_and_leaves_iologs_whole_as_fio() {
    let dir = common::scratch("iolog_more_skip");
    let log = make_log(
        &dir,
        "mixed.log",
        &["--rw=randrw", "--bs=4k", "--size=64k", "--fsync=2"],
    );
    let all = check_replay(&dir, &log, &[]);
    assert!(all[0] > 0 && all[2] > 0 && all[3] > 0, "{all:?}");
    // fio 3.33 applies replay_skip to blktrace replays only: a text iolog replays whole.
    for kind in ["read", "write", "trim", "sync", "read,write,trim,sync"] {
        let skip = format!("--replay_skip={kind}");
        assert_eq!(check_replay(&dir, &log, &[&skip]), all, "{skip}");
    }
    for bad in ["flush", "read,", "read,,write"] {
        let mut t = common::iobench();
        t.current_dir(&dir)
            .arg("--name=r")
            .arg(format!("--read_iolog={}", log.display()))
            .arg(format!("--replay_skip={bad}"));
        let out = common::run(t);
        assert!(!out.status.success(), "{bad} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("replay_skip") && err.contains(bad),
            "{bad}: {err}"
        );
        if let Some(mut f) = common::fio() {
            f.current_dir(&dir)
                .arg("--name=r")
                .arg(format!("--read_iolog={}", log.display()))
                .arg(format!("--replay_skip={bad}"));
            assert!(!common::run(f).status.success(), "fio accepted {bad}");
        }
    }
}

#[test]
fn chunked_replay_streams_the_same_io() {
    let dir = common::scratch("iolog_more_chunked");
    // About 3000 entries (over 100 KiB of log, more than one read buffer).
    let log = make_log(
        &dir,
        "big.log",
        &[
            "--rw=randrw",
            "--bs=4k",
            "--size=10m",
            "--fsync=16",
            "--ioengine=null",
        ],
    );
    assert!(std::fs::metadata(&log).unwrap().len() > 100 * 1024);
    let whole = check_replay(&dir, &log, &[]);
    let chunked = check_replay(&dir, &log, &["--read_iolog_chunked=1"]);
    assert_eq!(whole, chunked);
    assert!(whole[0] > 100, "{whole:?}");
    if have_strace() {
        // Streamed: the log is still being read once the I/O has started; loaded whole,
        // it is not.
        let r = replay(
            common::iobench(),
            &dir,
            "c",
            &log,
            &["--read_iolog_chunked=1"],
        );
        assert!(
            r.log_reads_after_io > 0,
            "the chunked log was read up front"
        );
        let r = replay(common::iobench(), &dir, "w", &log, &[]);
        assert_eq!(r.log_reads_after_io, 0);
    }
}
