//! dircreate, dirstat, dirdelete against fio 3.41 (the reference root, through chroot):
//! the same job under both tools must leave the same directories behind (names and
//! modes), count the same bytes and I/Os and report one clat sample per directory per pass.
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// fio 3.41's root (a debootstrapped Debian sid with its fio).
const ROOT: &str = "/var/cache/iobench-ref/sid";

/// True when fio 3.41's root is here; with `IOBENCH_REQUIRE_FIO=1` a missing root fails.
fn have_ref() -> bool {
    if Path::new(ROOT).join("usr/bin/fio").exists() {
        return true;
    }
    if std::env::var("IOBENCH_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("fio 3.41's root {ROOT} is missing but IOBENCH_REQUIRE_FIO=1");
    }
    eprintln!("{ROOT} missing: skipping differential test");
    false
}

/// A directory inside the reference root (so fio in the chroot sees it), removed on drop.
struct InRoot(PathBuf);

impl InRoot {
    fn new(name: &str) -> Self {
        let p = Path::new(ROOT)
            .join("tmp")
            .join(format!("iobench-dirops-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        InRoot(p)
    }
    /// The same directory as fio inside the chroot sees it.
    fn inside(&self) -> String {
        format!("/{}", self.0.strip_prefix(ROOT).unwrap().display())
    }
    fn clear(&self) {
        for e in std::fs::read_dir(&self.0).unwrap() {
            let _ = std::fs::remove_dir(e.unwrap().path());
        }
    }
}

impl Drop for InRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a run left behind and reported.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    /// (name, is a directory, mode) of each entry, sorted.
    entries: Vec<(String, bool, u32)>,
    /// Per direction: io bytes, I/Os, clat samples.
    dirs: Vec<(u64, u64, u64)>,
    error: i64,
}

fn seen(dir: &Path, stdout: &[u8]) -> Seen {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                md.is_dir(),
                md.permissions().mode() & 0o7777,
            )
        })
        .collect();
    entries.sort();
    let text = String::from_utf8_lossy(stdout);
    let start = text
        .find('{')
        .unwrap_or_else(|| panic!("no json in {text}"));
    let v: Value = serde_json::from_str(&text[start..]).expect("json");
    let j = &v["jobs"][0];
    let dirs = ["read", "write"]
        .iter()
        .map(|d| {
            (
                j[*d]["io_bytes"].as_u64().unwrap(),
                j[*d]["total_ios"].as_u64().unwrap(),
                j[*d]["clat_ns"]["N"].as_u64().unwrap(),
            )
        })
        .collect();
    Seen {
        entries,
        dirs,
        error: j["error"].as_i64().unwrap(),
    }
}

/// Runs the job `args` under fio 3.41 and then iobench in the same (emptied) directory,
/// after `prepare` makes its starting state each time; returns both observations.
fn both(name: &str, args: &[&str], prepare: &dyn Fn(&Path)) -> (Seen, Seen) {
    let dir = InRoot::new(name);
    prepare(&dir.0);
    let fio = Command::new("chroot")
        .arg(ROOT)
        .arg("fio")
        .args(["--name=t", "--output-format=json"])
        .arg(format!("--directory={}", dir.inside()))
        .args(args)
        .output()
        .expect("chroot fio");
    let f = seen(&dir.0, &fio.stdout);
    dir.clear();
    prepare(&dir.0);
    let ours = crate::common::iobench()
        .args(["--name=t", "--output-format=json"])
        .arg(format!("--directory={}", dir.0.display()))
        .args(args)
        .output()
        .expect("iobench");
    let o = seen(&dir.0, &ours.stdout);
    assert_eq!(
        fio.status.success(),
        ours.status.success(),
        "exit status: fio {:?}, iobench {:?}: {}",
        fio.status,
        ours.status,
        String::from_utf8_lossy(&ours.stderr)
    );
    (f, o)
}

fn nothing(_: &Path) {}

#[test]
fn dircreate_makes_mode_0000_directories_as_fio() {
    if !have_ref() {
        return;
    }
    let args = [
        "--ioengine=dircreate",
        "--rw=write",
        "--nrfiles=3",
        "--filesize=4k",
    ];
    let (f, o) = both("create", &args, &nothing);
    assert_eq!(f.entries.len(), 3, "{f:?}");
    assert!(f.entries.iter().all(|e| e.1 && e.2 == 0), "{f:?}");
    assert_eq!(f.dirs[1], (12288, 3, 3), "{f:?}");
    assert_eq!(f, o);
}

#[test]
fn dirstat_makes_missing_directories_and_stats_each_per_pass_as_fio() {
    if !have_ref() {
        return;
    }
    for t in ["stat", "lstat", "statx"] {
        let st = format!("--stat_type={t}");
        let args = [
            "--ioengine=dirstat",
            st.as_str(),
            "--nrfiles=2",
            "--filesize=4k",
            "--loops=2",
        ];
        let (f, o) = both("stat", &args, &nothing);
        assert_eq!(f.entries.len(), 2, "{f:?}");
        assert!(f.entries.iter().all(|e| e.1 && e.2 == 0o700), "{f:?}");
        assert_eq!(f.dirs[0], (16384, 4, 4), "{t}: {f:?}");
        assert_eq!(f, o, "{t}");
    }
    // Sized by `size` alone: one sample per directory, the bytes still counted.
    let (f, o) = both(
        "stat-size",
        &["--ioengine=dirstat", "--nrfiles=2", "--size=16k"],
        &nothing,
    );
    assert_eq!(f.dirs[0], (16384, 4, 2), "{f:?}");
    assert_eq!(f, o);
}

#[test]
fn dirdelete_removes_the_directories_as_fio() {
    if !have_ref() {
        return;
    }
    let args = ["--ioengine=dirdelete", "--nrfiles=3", "--filesize=4k"];
    // Missing directories are made first, then removed as the timed call.
    let (f, o) = both("delete", &args, &nothing);
    assert!(f.entries.is_empty(), "{f:?}");
    assert_eq!(f.dirs[0], (12288, 3, 3), "{f:?}");
    assert_eq!(f, o);
    // Existing directories (with a mode of their own) go the same way.
    let (f, o) = both("delete-existing", &args, &|d| {
        for i in 0..3 {
            std::fs::create_dir(d.join(format!("t.0.{i}"))).unwrap();
        }
    });
    assert!(f.entries.is_empty(), "{f:?}");
    assert_eq!(f, o);
}

#[test]
fn dircreate_on_an_existing_directory_fails_with_eexist_as_fio() {
    if !have_ref() {
        return;
    }
    let args = [
        "--ioengine=dircreate",
        "--rw=write",
        "--nrfiles=1",
        "--filesize=4k",
    ];
    let (f, o) = both("exists", &args, &|d| {
        std::fs::create_dir(d.join("t.0.0")).unwrap();
    });
    assert_eq!(f.error, 17, "{f:?}");
    assert_eq!(f, o);
}
