//! `serialize_overlap`: an I/O that overlaps one in flight waits for a completion, so
//! random writes over two blocks at iodepth=16 never have more than two in flight. The
//! IO depths distribution shows it, compared with fio 3.33's for the same job.

use crate::common;

use std::process::Command;

fn depths(mut tool: Command, serialize: bool) -> serde_json::Value {
    let dir = common::scratch(&format!("serialize_overlap_{serialize}"));
    tool.args([
        "--name=j",
        "--ioengine=libaio",
        "--iodepth=16",
        "--rw=randwrite",
        "--norandommap",
        "--bs=4k",
        "--size=8k",
        "--io_size=4m",
        "--output-format=json",
    ])
    .arg(format!("--serialize_overlap={}", serialize as u8))
    .arg(format!("--directory={}", dir.display()));
    let out = common::run_ok(tool);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["jobs"][0]["iodepth_level"].clone()
}

#[test]
fn overlapping_io_waits_for_the_one_in_flight() {
    let on = depths(common::iobench(), true);
    for deep in ["4", "8", "16", ">=64"] {
        assert_eq!(on[deep], 0.0, "depth {deep} reached: {on}");
    }
    // Without it the queue fills.
    let off = depths(common::iobench(), false);
    assert!(off["16"].as_f64().unwrap() > 90.0, "{off}");
    if let Some(fio) = common::fio() {
        // The same depths are reached (their shares depend on completion timing).
        let theirs = depths(fio, true);
        let used = |v: &serde_json::Value| {
            let mut k: Vec<String> = v
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, p)| p.as_f64().unwrap_or(0.0) > 0.0)
                .map(|(k, _)| k.clone())
                .collect();
            k.sort();
            k
        };
        assert_eq!(used(&on), used(&theirs), "iobench {on}, fio {theirs}");
    }
}
