//! The ftruncate and falloc engines side by side with fio 3.33's: the same I/O counts and
//! bytes per direction, the same error, and the file left with the same size and the same
//! allocated blocks (truncated to the last write's offset, allocated, or punched).

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::process::Command;

/// (ios, bytes) per direction, the job's error, and the file's size and blocks after.
type Outcome = ([(u64, u64); 3], i64, u64, u64);

fn outcome(mut tool: Command, dir: &std::path::Path, engine: &str, rw: &str) -> Outcome {
    let f = dir.join("f");
    let _ = std::fs::remove_file(&f);
    tool.args(["--name=j", "--bs=4k", "--size=256k", "--output-format=json"])
        .arg(format!("--ioengine={engine}"))
        .arg(format!("--rw={rw}"))
        .arg(format!("--filename={}", f.display()));
    let out = common::run(tool);
    let v = common::json_report(&out);
    let j = &v["jobs"][0];
    let d = |k: &str| {
        (
            j[k]["total_ios"].as_u64().unwrap(),
            j[k]["io_bytes"].as_u64().unwrap(),
        )
    };
    let md = std::fs::metadata(&f).expect("the file exists");
    (
        [d("read"), d("write"), d("trim")],
        j["error"].as_i64().unwrap(),
        md.len(),
        md.blocks(),
    )
}

#[test]
fn ftruncate_and_falloc_match_fio() {
    let dir = common::scratch("engine_fileresize");
    let cases = [
        ("ftruncate", "write"),
        ("ftruncate", "randwrite"),
        ("ftruncate", "read"),
        ("falloc", "write"),
        ("falloc", "read"),
        ("falloc", "randtrim"),
        ("falloc", "randrw"),
    ];
    for (engine, rw) in cases {
        let ours = outcome(common::iobench(), &dir, engine, rw);
        // What each case must do, fio or not.
        match (engine, rw) {
            ("ftruncate", "write") => assert_eq!(ours.2, 256 * 1024 - 4096, "{ours:?}"),
            ("ftruncate", "read") => assert_eq!(ours.1, libc::EINVAL as i64, "{ours:?}"),
            ("falloc", "randtrim") => {
                assert_eq!(
                    (ours.0[2].0, ours.3),
                    (64, 0),
                    "every block punched: {ours:?}"
                )
            }
            ("falloc", "read") => assert_eq!(ours.0[0], (64, 256 * 1024), "{ours:?}"),
            _ => {}
        }
        if let Some(fio) = common::fio() {
            let theirs = outcome(fio, &dir, engine, rw);
            assert_eq!(ours, theirs, "{engine} {rw}: ours vs fio");
        }
    }
}

#[test]
fn falloc_reads_allocate_without_growing() {
    // A read job on a missing file: falloc opens it read-write and creates it, as fio's
    // engine does, and its reads allocate space within the laid-out size.
    let dir = common::scratch("engine_falloc_rw");
    let ours = outcome(common::iobench(), &dir, "falloc", "randread");
    assert_eq!(ours.1, 0, "{ours:?}");
    assert_eq!(ours.2, 256 * 1024);
}
