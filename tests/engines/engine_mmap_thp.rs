//! mmap's `thp=1`: fio maps the file privately and advises transparent huge pages on the
//! mapping; strace shows iobench doing the same calls as fio 3.33.

use crate::common;

use std::process::Command;

/// The mapping calls for the job's 4 MiB file: (mmap flags, whether MADV_HUGEPAGE came).
fn mapping_calls(program: &str, thp: bool) -> (String, bool) {
    let dir = common::scratch(&format!(
        "thp_{}_{thp}",
        program.rsplit('/').next().unwrap()
    ));
    let trace = dir.join("trace");
    let mut st = Command::new("strace");
    st.args(["-f", "-qq", "-e", "trace=mmap,madvise", "-o"])
        .arg(&trace)
        .arg(program)
        .args([
            "--name=j",
            "--ioengine=mmap",
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
        ])
        .arg(format!("--thp={}", thp as u8))
        .arg(format!("--directory={}", dir.display()));
    common::run_ok(st);
    let text = std::fs::read_to_string(&trace).unwrap();
    let map = text
        .lines()
        .find(|l| l.contains("mmap(NULL, 4194304, PROT_READ"))
        .and_then(|l| l.split(", ").nth(3).map(str::to_string))
        .unwrap_or_default();
    (map, text.contains("4194304, MADV_HUGEPAGE"))
}

#[test]
fn thp_maps_privately_with_huge_page_advice_as_fio() {
    let iob = env!("CARGO_BIN_EXE_iobench");
    assert_eq!(mapping_calls(iob, true), ("MAP_PRIVATE".to_string(), true));
    assert_eq!(mapping_calls(iob, false), ("MAP_SHARED".to_string(), false));
    if common::fio().is_some() {
        assert_eq!(mapping_calls("fio", true), mapping_calls(iob, true));
    }
}
