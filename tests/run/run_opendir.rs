//! opendir: every regular file below a directory (recursively, in directory order) is one
//! of the job's files; compared with fio through both tools' write_iolog.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The iolog's (file, action, offset, length) entries, timestamps dropped.
fn iolog_of(mut tool: Command, dir: &Path) -> Vec<String> {
    let log = dir.join("o.iolog");
    let _ = std::fs::remove_file(&log);
    tool.current_dir(dir)
        .args(["--name=o", "--opendir=tree", "--rw=read", "--bs=16k"])
        .arg(format!("--write_iolog={}", log.display()))
        .stdout(std::process::Stdio::null());
    common::run_ok(tool);
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn opendir_uses_every_file_below_the_directory_like_fio() {
    let dir = common::scratch("opendir");
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub/deeper")).unwrap();
    std::fs::create_dir_all(tree.join("empty")).unwrap();
    std::fs::write(tree.join("a"), vec![1u8; 32 << 10]).unwrap();
    std::fs::write(tree.join("sub/b"), vec![2u8; 64 << 10]).unwrap();
    std::fs::write(tree.join("sub/deeper/c"), vec![3u8; 16 << 10]).unwrap();
    let ours = iolog_of(common::iobench(), &dir);
    let reads = |name: &str| {
        ours.iter()
            .filter(|l| l.starts_with(name) && l.contains(" read "))
            .count()
    };
    assert_eq!(
        (
            reads("tree/a "),
            reads("tree/sub/b "),
            reads("tree/sub/deeper/c ")
        ),
        (2, 4, 1),
        "{ours:?}"
    );
    if let Some(fio) = common::fio() {
        // fio closes each file as soon as it is done with it, iobench all at the end: the
        // same closes, at other places in the log.
        let split = |log: Vec<String>| -> (Vec<String>, Vec<String>) {
            let (mut closes, rest): (Vec<String>, Vec<String>) =
                log.into_iter().partition(|l| l.ends_with(" close"));
            closes.sort();
            (rest, closes)
        };
        assert_eq!(split(ours), split(iolog_of(fio, &dir)));
    }
    let mut c = common::iobench();
    c.args(["--name=o", "--opendir=/nonexistent/dir", "--rw=read"]);
    let out = common::run(c);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("opendir /nonexistent/dir"));
}
