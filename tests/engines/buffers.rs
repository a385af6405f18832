//! Buffer contents: what was written is what was asked. Compressible data compresses by
//! the asked share, dedupe writes the asked share of repeats, zero_buffers writes zeroes,
//! refill_buffers makes every write different, and buffer_pattern repeats the pattern.

use crate::common;

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// Writes `size` bytes sequentially with `bs` blocks and the extra options; returns the file.
fn write(dir: &Path, bs: &str, size: usize, extra: &[&str]) -> Vec<u8> {
    let f = dir.join("data");
    // Start from 0xff so that zeroes in the result were written, not left over.
    std::fs::write(&f, vec![0xffu8; size]).unwrap();
    let mut c = common::iobench();
    c.arg("--name=b")
        .arg(format!("--filename={}", f.display()))
        .args(["--rw=write", "--ioengine=psync", "--iodepth=1"])
        .arg(format!("--bs={bs}"))
        .arg(format!("--size={size}"))
        .args(extra)
        .current_dir(dir);
    let o = common::run(c);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(&f).unwrap()
}

fn gzip_ratio(data: &[u8], block: usize) -> f64 {
    let mut total = 0usize;
    for b in data.chunks(block) {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        total += e.finish().unwrap().len();
    }
    total as f64 / data.len() as f64
}

fn distinct_blocks(data: &[u8], block: usize) -> usize {
    data.chunks(block).collect::<HashSet<_>>().len()
}

#[test]
fn compress_percentage_50_compresses_to_about_half() {
    let dir = common::scratch("buf_compress");
    let d = write(&dir, "64k", 2 << 20, &["--buffer_compress_percentage=50"]);
    let r = gzip_ratio(&d, 65536);
    assert!((0.45..=0.55).contains(&r), "gzip ratio {r}");
    // The default random data (fio's cheap generator) hardly compresses: the measure
    // tells the two apart.
    let d = write(&dir, "64k", 2 << 20, &[]);
    let r = gzip_ratio(&d, 65536);
    assert!(r > 0.85, "random data gzip ratio {r}");
}

#[test]
fn compress_percentage_with_a_chunk_size_compresses_to_its_share() {
    let dir = common::scratch("buf_compress_chunk");
    let d = write(
        &dir,
        "64k",
        2 << 20,
        &[
            "--buffer_compress_percentage=25",
            "--buffer_compress_chunk=4k",
        ],
    );
    let r = gzip_ratio(&d, 65536);
    assert!((0.70..=0.80).contains(&r), "gzip ratio {r}");
}

#[test]
fn dedupe_percentage_50_repeats_about_half_the_blocks() {
    let dir = common::scratch("buf_dedupe");
    let d = write(&dir, "4k", 8 << 20, &["--dedupe_percentage=50"]);
    let blocks = d.len() / 4096;
    let dup = 1.0 - distinct_blocks(&d, 4096) as f64 / blocks as f64;
    assert!((0.45..=0.55).contains(&dup), "duplicate share {dup}");
    // Without dedupe every block is unique.
    let d = write(&dir, "4k", 8 << 20, &[]);
    assert_eq!(distinct_blocks(&d, 4096), blocks);
}

#[test]
fn dedupe_working_set_repeats_blocks_from_a_small_set() {
    let dir = common::scratch("buf_dedupe_ws");
    let d = write(
        &dir,
        "4k",
        8 << 20,
        &[
            "--dedupe_percentage=50",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=10",
        ],
    );
    let blocks = d.len() / 4096;
    // Half the writes repeat one of the working set's pages (10% of the file); each of
    // those pages is itself unique the first time, so about 40% of the blocks are repeats.
    let dup = 1.0 - distinct_blocks(&d, 4096) as f64 / blocks as f64;
    assert!((0.35..=0.45).contains(&dup), "duplicate share {dup}");
    let mut seen = std::collections::HashMap::new();
    for b in d.chunks(4096) {
        *seen.entry(b).or_insert(0u32) += 1;
    }
    let repeated = seen.values().filter(|&&n| n > 1).count();
    assert!(
        repeated <= blocks / 10 + 1,
        "{repeated} different blocks repeat"
    );
}

#[test]
fn zero_buffers_writes_zeroes() {
    let dir = common::scratch("buf_zero");
    let d = write(&dir, "4k", 1 << 20, &["--zero_buffers=1"]);
    assert!(d.iter().all(|&b| b == 0), "non-zero byte written");
    // buffer_compress_percentage=100 means zeroes too.
    let d = write(&dir, "4k", 1 << 20, &["--buffer_compress_percentage=100"]);
    assert!(d.iter().all(|&b| b == 0), "non-zero byte written");
}

#[test]
fn refill_buffers_gives_every_write_new_data() {
    let dir = common::scratch("buf_refill");
    let d = write(
        &dir,
        "4k",
        1 << 20,
        &["--refill_buffers=1", "--scramble_buffers=0"],
    );
    assert_eq!(distinct_blocks(&d, 4096), 256);
    // Without refill or scramble the one buffer is written again and again.
    let d = write(
        &dir,
        "4k",
        1 << 20,
        &["--refill_buffers=0", "--scramble_buffers=0"],
    );
    assert_eq!(distinct_blocks(&d, 4096), 1);
    // Scrambling (the default) makes each write differ a little.
    let d = write(&dir, "4k", 1 << 20, &[]);
    assert_eq!(distinct_blocks(&d, 4096), 256);
}

#[test]
fn buffer_pattern_is_repeated_through_the_block() {
    let dir = common::scratch("buf_pattern");
    let d = write(
        &dir,
        "4k",
        256 << 10,
        &["--buffer_pattern=0xdeadbeef", "--scramble_buffers=0"],
    );
    for w in d.chunks(4) {
        assert_eq!(w, [0xde, 0xad, 0xbe, 0xef]);
    }
    let d = write(
        &dir,
        "4k",
        256 << 10,
        &["--buffer_pattern=\"ab\"", "--scramble_buffers=0"],
    );
    for w in d.chunks(2) {
        assert_eq!(w, b"ab");
    }
}

/// Every iomem kind that needs no reserved huge pages carries data intact (a verified
/// write), with and without iomem_align, and a mapped file is made and removed.
#[test]
fn iomem_kinds_carry_verified_data() {
    let dir = common::scratch("buf_iomem");
    let map = dir.join("bufmap");
    let mapped = format!("--iomem=mmap:{}", map.display());
    for mem in [
        "--iomem=malloc",
        "--mem=shm",
        "--iomem=mmap",
        "--iomem=mmapshared",
        mapped.as_str(),
    ] {
        for align in ["--iomem_align=0", "--iomem_align=512"] {
            let d = write(
                &dir,
                "16k",
                256 << 10,
                &[mem, align, "--verify=crc32c", "--iodepth=4"],
            );
            assert_eq!(d.len(), 256 << 10, "{mem} {align}");
            assert!(!map.exists(), "{mem}: mapping file left behind");
        }
    }
}

/// Huge-page memory without reserved huge pages fails with a message, not silently.
#[test]
fn iomem_huge_without_huge_pages_is_an_error() {
    let reserved = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .map(|s| s.trim() != "0")
        .unwrap_or(true);
    if reserved {
        return;
    }
    let dir = common::scratch("buf_iomem_huge");
    for mem in ["shmhuge", "mmaphuge"] {
        let mut c = common::iobench();
        c.arg("--name=h")
            .arg(format!("--filename={}", dir.join("f").display()))
            .args(["--rw=write", "--bs=4k", "--size=64k"])
            .arg(format!("--iomem={mem}"));
        let o = common::run(c);
        let err =
            String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        assert!(!o.status.success(), "{mem}: {err}");
        assert!(err.contains("huge pages"), "{mem}: {err}");
    }
}

/// The I/O buffers are plain heap memory, as fio's `iomem=malloc`: never advised for
/// transparent huge pages (issue 24: with MADV_HUGEPAGE, 4 MiB O_DIRECT reads became
/// fewer, larger requests than fio's). strace shows every madvise the run makes.
#[test]
fn default_buffers_are_never_advised_for_huge_pages() {
    if Command::new("strace").arg("-V").output().is_err() {
        assert!(
            std::env::var("IOBENCH_REQUIRE_FIO").as_deref() != Ok("1"),
            "strace is needed"
        );
        eprintln!("strace not installed: skipped");
        return;
    }
    let dir = common::scratch("buf_no_thp");
    let log = dir.join("strace.log");
    let mut c = Command::new("strace");
    c.args(["-f", "-e", "trace=madvise", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_iobench"))
        .current_dir(&dir)
        .args([
            "--name=big",
            "--ioengine=psync",
            "--rw=write",
            "--bs=4m",
            "--size=8m",
            "--iodepth=1",
            "--filename=big.dat",
            "--output-format=terse",
        ]);
    let o = common::run(c);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let trace = std::fs::read_to_string(&log).unwrap();
    assert!(
        !trace.contains("MADV_HUGEPAGE"),
        "the buffers were advised for huge pages:\n{trace}"
    );
}
