//! Loop devices for tests that need a real block device (root only).

use std::process::Command;

/// A loop device over a sparse image, detached on drop.
pub struct Loop {
    pub dev: String,
    pub img: std::path::PathBuf,
    pub mnt: Option<std::path::PathBuf>,
}

impl Loop {
    /// A `size` (truncate's syntax) loop device, or None (with the reason printed) when
    /// this is not root or losetup fails.
    pub fn new(name: &str, size: &str) -> Option<Loop> {
        Loop::with_args(name, size, &[])
    }

    /// As [`Loop::new`], with extra `losetup` arguments (e.g. `--direct-io=on`).
    pub fn with_args(name: &str, size: &str, losetup_args: &[&str]) -> Option<Loop> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipping {name}: needs root for a loop device");
            return None;
        }
        let dir = super::scratch(name);
        let img = dir.join("img");
        let ok = Command::new("truncate")
            .args(["-s", size])
            .arg(&img)
            .status();
        if !ok.map(|s| s.success()).unwrap_or(false) {
            eprintln!("skipping {name}: truncate failed");
            return None;
        }
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .args(losetup_args)
            .arg(&img)
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "skipping {name}: losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if dev.is_empty() {
            eprintln!("skipping {name}: losetup named no device");
            return None;
        }
        Some(Loop {
            dev,
            img,
            mnt: None,
        })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
    }
}
