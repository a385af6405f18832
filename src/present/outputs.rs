//! Outputs never clobber inputs: a study or report that writes a file checks first that
//! the file is not one it reads (the same file by device and inode, so a symlink, a hard
//! link or `./a.json` for `a.json` are caught too).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The (device, inode) of an existing file; None when it does not exist.
fn identity(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// True when `a` and `b` name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((identity(a), identity(b)), (Some(x), Some(y)) if x == y)
}

/// Refuses to write `out` (what `flag` names) when it is one of `inputs`.
pub fn refuse_clobber<'a>(
    flag: &str,
    out: &Path,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), String> {
    for input in inputs {
        if same_file(out, input) {
            return Err(format!(
                "{flag} {}: that is the input {}; writing it would destroy it: choose another file",
                out.display(),
                input.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_name() {
        let dir = std::env::temp_dir().join(format!("iobench-outputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.json");
        std::fs::write(&a, "{}").unwrap();
        let link = dir.join("link.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let dotted = dir.join(".").join("a.json");
        assert!(same_file(&a, &link) && same_file(&a, &dotted));
        assert!(
            !same_file(&a, &dir.join("new.json")),
            "a new file is no input"
        );
        let e = refuse_clobber("-o", &link, [a.as_path()]).unwrap_err();
        assert!(e.contains("-o") && e.contains("a.json"), "{e}");
        assert!(refuse_clobber("-o", &dir.join("b.json"), [a.as_path()]).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
