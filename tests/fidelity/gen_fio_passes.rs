//! Where fio ends a file and a loop, compared through the iologs of fio 3.33 and iobench
//! on jobs a randomised comparison once found different:
//! - a block must fit the region fio computes from the file's laid-out size (its
//!   `get_start_offset` is recomputed each time), and a block past the file's end ends it;
//! - with a synchronous engine fio's per-loop byte count never grows (it counts only I/O
//!   it queued), so a loop ends when its files are done; an asynchronous engine's loop
//!   ends after `size` bytes;
//! - a file fio opens and finds nothing left in is logged open and closed at once;
//! - with `filesize`, a region starts at the offset planned from the size before layout;
//! - a choice value's `:suffix` is ignored, and strided zones are off with openfiles > 1.
//!
//! Both tools run in the same directory: the file names seed the distributions.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The iolog of `tool` for `args` in a fresh `dir` (see `common::run_logged`).
fn iolog(tool: Command, dir: &Path, args: &[&str]) -> Vec<String> {
    common::run_logged(tool, dir, args).0
}

fn same_as_fio(tag: &str, args: &[&str]) -> Vec<String> {
    let dir = common::scratch(&format!("passes_{tag}")).join("d");
    let ours = iolog(common::iobench(), &dir, args);
    if let Some(fio) = common::fio() {
        let theirs = iolog(fio, &dir, args);
        assert_eq!(ours, theirs, "{tag}: iologs differ for {args:?}");
    }
    ours
}

fn bytes(log: &[String]) -> u64 {
    log.iter()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            match p.as_slice() {
                [_, "read" | "write", _, n] => n.parse::<u64>().ok(),
                _ => None,
            }
        })
        .sum()
}

#[test]
fn a_block_fits_the_region_of_the_laid_out_file() {
    // offset=10% is 0 before layout, 26624 after: blocks may reach past the file's end
    // then, and the first that does ends the file early.
    let log = same_as_fio(
        "fits",
        &[
            "--ioengine=psync",
            "--nrfiles=2",
            "--rw=write",
            "--bsrange=512-8k",
            "--size=512k",
            "--offset=10%",
        ],
    );
    assert!(bytes(&log) < 512 * 1024, "{} bytes", bytes(&log));
}

#[test]
fn a_synchronous_engine_ends_a_loop_when_its_files_are_done() {
    // Mixed sequential I/O: reads and writes each walk the file, so a loop of psync runs
    // past `size` bytes until one direction reaches the end; the job still stops at
    // size x loops.
    let args = ["--rw=rw", "--bsrange=4k-16k", "--size=256k", "--loops=3"];
    let mut sync = vec!["--ioengine=psync"];
    sync.extend(args);
    let log = same_as_fio("sync_loops", &sync);
    assert_eq!(bytes(&log), 3 * 256 * 1024);
    let first_close = log.iter().position(|l| l.ends_with("close")).unwrap();
    assert!(
        bytes(&log[..first_close]) > 256 * 1024,
        "the first loop ran past size"
    );
    // libaio queues its I/O: fio counts it, and each loop stops at `size` bytes.
    let mut aio = vec!["--ioengine=libaio", "--iodepth=1"];
    aio.extend(args);
    let log = same_as_fio("async_loops", &aio);
    let first_close = log.iter().position(|l| l.ends_with("close")).unwrap();
    assert!(bytes(&log[..first_close]) <= 256 * 1024 + 16 * 1024);
    // Random I/O over several files, and a file service with its own random stream.
    same_as_fio(
        "random_files",
        &[
            "--ioengine=psync",
            "--nrfiles=4",
            "--rw=randrw",
            "--bs=4k",
            "--size=256k",
            "--file_service_type=random",
            "--rwmixread=70",
        ],
    );
    same_as_fio(
        "normal_service",
        &[
            "--ioengine=psync",
            "--nrfiles=4",
            "--rw=randrw:3",
            "--bs=4k",
            "--size=512k",
            "--loops=2",
            "--file_service_type=normal:30",
            "--io_size=1m",
        ],
    );
}

#[test]
fn a_file_with_nothing_left_is_opened_and_closed_at_once() {
    // In the second loop offset=25% starts past what j.0.1's region holds.
    let log = same_as_fio(
        "empty_open",
        &[
            "--ioengine=psync",
            "--nrfiles=3",
            "--rw=randwrite",
            "--bsrange=4k-16k",
            "--size=192k",
            "--loops=2",
            "--offset=25%",
        ],
    );
    assert!(
        log.windows(2)
            .any(|w| w[0].ends_with("open") && w[1].ends_with("close")),
        "{log:?}"
    );
}

#[test]
fn filesize_regions_start_from_the_size_before_layout() {
    // New files: offset=25% of nothing is 0, and the region runs to the planned size.
    let log = same_as_fio(
        "filesize_new",
        &[
            "--ioengine=psync",
            "--nrfiles=3",
            "--rw=randwrite",
            "--bs=8k",
            "--offset=25%",
            "--filesize=32k-128k",
        ],
    );
    assert!(log.iter().any(|l| l.ends_with("write 0 8192")), "{log:?}");
    // A data set smaller than one block is refused, as fio refuses it.
    let dir = common::scratch("passes_tiny");
    let mut cmd = common::iobench();
    cmd.args(["--name=j", "--rw=write", "--bs=8k", "--size=4k"])
        .arg(format!("--directory={}", dir.display()));
    let out = common::run(cmd);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("blocksize is larger than data set range")
    );
}

#[test]
fn choice_values_ignore_a_suffix_and_zones_need_one_open_file() {
    // fio matches `identical:3` as `identical` (the part before ':').
    same_as_fio(
        "sequencer_suffix",
        &[
            "--ioengine=psync",
            "--rw=randread:3",
            "--bs=8k",
            "--size=256k",
            "--rw_sequencer=identical:3",
        ],
    );
    // Strided zones with openfiles above one: fio turns the zones off.
    let log = same_as_fio(
        "zones_openfiles",
        &[
            "--ioengine=psync",
            "--nrfiles=2",
            "--openfiles=2",
            "--rw=write",
            "--bs=4k",
            "--size=128k",
            "--zonemode=strided",
            "--zonesize=16k",
            "--zoneskip=16k",
        ],
    );
    assert_eq!(bytes(&log), 128 * 1024);
}
