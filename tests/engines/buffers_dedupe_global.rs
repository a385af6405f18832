//! dedupe_global: with dedupe_mode=working_set, jobs that set it draw their duplicate
//! blocks from one shared working set, so two jobs' files hold the same blocks; without
//! it each job repeats only its own. Checked against fio 3.33, which behaves the same.

use crate::common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

/// Makes the command of one of the tools compared.
type Tool = fn() -> Command;

/// Blocks (4 KiB) found in both jobs' files.
fn shared_blocks(tool: Command, dir: &Path, extra: &[&str]) -> usize {
    for n in 0..2 {
        let _ = std::fs::remove_file(dir.join(format!("d.{n}")));
    }
    let mut c = tool;
    c.current_dir(dir)
        .args([
            "--name=d",
            "--numjobs=2",
            "--size=2m",
            "--bs=4k",
            "--rw=write",
            "--dedupe_percentage=50",
            "--filename_format=d.$jobnum",
            "--output-format=terse",
        ])
        .args(extra);
    common::run_ok(c);
    let blocks = |n: u32| -> HashSet<Vec<u8>> {
        let data = std::fs::read(dir.join(format!("d.{n}"))).unwrap();
        assert_eq!(data.len(), 2 << 20);
        data.chunks(4096).map(|b| b.to_vec()).collect()
    };
    let (a, b) = (blocks(0), blocks(1));
    // Half the writes repeat working-set pages: each file has far fewer unique blocks.
    assert!(a.len() < 400 && b.len() < 400, "{} {}", a.len(), b.len());
    a.intersection(&b).count()
}

#[test]
fn dedupe_global_shares_duplicates_between_jobs() {
    let dir = common::scratch("dedupe_global");
    let ws = ["--dedupe_mode=working_set"];
    let global = ["--dedupe_mode=working_set", "--dedupe_global=1"];
    let mut tools: Vec<(&str, Tool)> = vec![("iobench", common::iobench)];
    if common::fio().is_some() {
        tools.push(("fio", || Command::new("fio")));
    }
    for (name, tool) in tools {
        // The working set is 5% of 512 blocks: about 25 pages, every one repeated in both.
        let shared = shared_blocks(tool(), &dir, &global);
        assert!(
            (20..=30).contains(&shared),
            "{name}: {shared} shared blocks"
        );
        assert_eq!(shared_blocks(tool(), &dir, &ws), 0, "{name}: per-job sets");
        // In repeat mode there is no working set to share.
        let repeat = ["--dedupe_global=1"];
        assert_eq!(shared_blocks(tool(), &dir, &repeat), 0, "{name}: repeat");
    }
}
