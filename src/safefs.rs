//! Files and directories made so that another local user cannot decide what is written
//! where: temporary ones in a private directory (`mkdtemp`: a random name, created
//! exclusively, mode 0700), new files created `O_CREAT|O_EXCL|O_NOFOLLOW`, a file that is
//! replaced written beside its name and renamed over it (a planted link is replaced,
//! never followed), and an output directory checked before use: a real directory owned
//! by this user that no one else may write to, under directories no one else may
//! rename it in. docs/security.md lists every place iobench creates a file.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A private directory under `$TMPDIR`, removed with what is in it when this drops.
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Makes `$TMPDIR/PREFIXxxxxxx`: a fresh random name, created exclusively, mode 0700.
pub fn private_dir(prefix: &str) -> io::Result<PrivateDir> {
    let template = std::env::temp_dir().join(format!("{prefix}XXXXXX"));
    let mut bytes = template.as_os_str().as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: `bytes` is a writable NUL-terminated template ending in XXXXXX, which
    // mkdtemp rewrites in place and does not keep.
    let r = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if r.is_null() {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!(
                "cannot make a private directory in {}: {e}",
                std::env::temp_dir().display()
            ),
        ));
    }
    bytes.pop();
    Ok(PrivateDir {
        path: PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)),
    })
}

/// Creates `path` as a new file (never an existing one, never through a link), `mode`
/// before the umask.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// A random suffix of `n` letters and digits.
pub fn random_suffix(n: usize) -> String {
    let mut buf = [0u8; 16];
    // SAFETY: buf is valid for its length; getrandom fills at most that many bytes.
    let got = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if got != buf.len() as isize {
        let x = (std::process::id() as u128) << 64 | crate::clock::mono_ns() as u128;
        buf = x.to_ne_bytes();
    }
    const CH: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..n)
        .map(|i| CH[buf[i % buf.len()] as usize % CH.len()] as char)
        .collect()
}

/// Writes `data` as file `path`, replacing what is there by a rename: the bytes go to a
/// new file beside it (created exclusively, not through a link), which then takes the
/// name. A link planted at `path` is replaced, not followed; readers never see half a
/// file.
pub fn replace(path: &Path, data: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{}.tmp", random_suffix(8)));
        let mut f = match create_new(&tmp, 0o666) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            r => r?,
        };
        let wrote = f.write_all(data).and_then(|_| std::fs::rename(&tmp, path));
        if wrote.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        return wrote;
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free temporary name in {}", dir.display()),
    ))
}

/// Writes `data` to an output file the user named: a missing or regular file is
/// [`replace`]d (a hard link planted at the name is not written through); a link is
/// followed only when this user or root owns it (as the kernel's `protected_symlinks`
/// does in sticky directories), never one another user planted; a FIFO or device
/// (`/dev/stdout`, `/dev/null`) is written to as it is.
pub fn write_output(path: &Path, data: &[u8]) -> io::Result<()> {
    let md = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return replace(path, data),
        r => r?,
    };
    let ft = md.file_type();
    if ft.is_symlink() {
        no_foreign_link(path)?;
        let target = std::fs::canonicalize(path)?;
        return match std::fs::metadata(&target)? {
            m if m.is_file() => replace(&target, data),
            m if m.is_dir() => Err(io::Error::other("a directory")),
            _ => std::fs::OpenOptions::new()
                .write(true)
                .open(&target)?
                .write_all(data),
        };
    }
    if ft.is_file() {
        return replace(path, data);
    }
    if ft.is_dir() {
        return Err(io::Error::other("a directory"));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?
        .write_all(data)
}

/// Refuses `path` when it is a symbolic link another user owns (not this user, not
/// root): what the kernel's `protected_symlinks` refuses in sticky directories, for
/// outputs that are opened and written as they go (`--live`).
pub fn no_foreign_link(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_symlink() && md.uid() != euid() && md.uid() != 0 => {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "a symbolic link owned by uid {}, not by this user: not followed",
                    md.uid()
                ),
            ))
        }
        _ => Ok(()),
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Makes output directory `dir` if it is missing (and its parents), then checks it as
/// [`check_dir`] does. `flag` names the option in messages.
pub fn output_dir(flag: &str, dir: &Path) -> Result<(), String> {
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{flag} {}: cannot make the directory: {e}", dir.display()))?;
    }
    check_dir(dir).map_err(|e| format!("{flag} {}: {e}", dir.display()))
}

/// Whether another user could put files in `dir` or rename it away: it must be a
/// directory (a link to one is followed, its target checked) owned by this user (or
/// root) and not writable by everyone; every directory above it owned by this user or
/// root and, when everyone may write in it, sticky (as /tmp is). Group write is left to
/// the owner's choice of group. `Err` says why.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    let real = std::fs::canonicalize(dir).map_err(|e| e.to_string())?;
    let me = euid();
    let md = std::fs::metadata(&real).map_err(|e| e.to_string())?;
    if !md.is_dir() {
        return Err("not a directory".into());
    }
    if md.uid() != me && md.uid() != 0 {
        return Err(format!(
            "owned by uid {}, not by this user (uid {me}): another user could plant files in it",
            md.uid()
        ));
    }
    if md.permissions().mode() & 0o002 != 0 {
        return Err(format!(
            "writable by others (mode {:o}): another user could plant files in it",
            md.permissions().mode() & 0o7777
        ));
    }
    let mut up = real.parent();
    while let Some(p) = up {
        let m = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mode = m.permissions().mode();
        if m.uid() != me && m.uid() != 0 {
            return Err(format!(
                "{} is owned by uid {}: that user could rename it away",
                p.display(),
                m.uid()
            ));
        }
        if mode & 0o002 != 0 && mode & 0o1000 == 0 {
            return Err(format!(
                "{} is writable by others and not sticky (mode {:o})",
                p.display(),
                mode & 0o7777
            ));
        }
        up = p.parent();
    }
    Ok(())
}

/// Why [`read_own`] refused a file (its message names what the file is, not the path).
#[derive(Debug)]
pub enum OwnFile {
    /// A link, a FIFO, a socket, a device or a directory where a regular file was
    /// expected, or a name that leaves the directory.
    NotRegular(String),
    /// A regular file larger than the cap.
    TooBig(u64, u64),
    /// Another error from the system.
    Io(io::Error),
}

impl std::fmt::Display for OwnFile {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            OwnFile::NotRegular(what) => write!(
                f,
                "{what}, not a regular file: a file of this run's own directory is read only \
                 as a regular file, not through a link (remove it, or use another directory)"
            ),
            OwnFile::TooBig(len, cap) => write!(
                f,
                "{len} bytes, more than the {cap} bytes such a file may have (not one this run \
                 wrote: remove it, or use another directory)"
            ),
            OwnFile::Io(e) => write!(f, "{e}"),
        }
    }
}

/// What a file of mode `mode` (`st_mode`) is, in words.
fn kind_of(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFDIR => "a directory",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFBLK => "a block device",
        libc::S_IFCHR => "a character device",
        libc::S_IFREG => "a regular file",
        _ => "a file of an unknown type",
    }
}

/// `fstatat(at, name, AT_SYMLINK_NOFOLLOW)`: what `name` is itself, a link not followed.
fn lstat_at(at: &std::os::fd::OwnedFd, name: &std::ffi::CStr) -> io::Result<libc::stat> {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed stat is a valid out-parameter; fstatat only writes it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `at` is an open descriptor, `name` NUL-terminated, `st` writable.
    let r = unsafe {
        libc::fstatat(
            at.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `openat(at, name, flags | O_CLOEXEC)` (`at` None: the working directory).
fn open_at(
    at: Option<&std::os::fd::OwnedFd>,
    name: &std::ffi::CStr,
    flags: libc::c_int,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let base = at.map_or(libc::AT_FDCWD, |f| f.as_raw_fd());
    // SAFETY: `name` is NUL-terminated and outlives the call; `base` is AT_FDCWD or a
    // descriptor the caller holds open.
    let fd = unsafe { libc::openat(base, name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Reads `rel`, a relative name below `dir` (a resumed run's state, a point's or a
/// round's result), as a file this run wrote there: each directory on the way is taken
/// only when it is one (a link is not followed), the file itself only when it is a
/// regular file (a FIFO is never waited for, a link to `/dev/zero` or outside never
/// followed) of at most `cap` bytes, checked before a byte is read. `Ok(None)`: nothing
/// has that name.
pub fn read_own(dir: &Path, rel: &Path, cap: u64) -> Result<Option<Vec<u8>>, OwnFile> {
    use std::io::Read;
    use std::path::Component;
    let cstr = |n: &std::ffi::OsStr| {
        std::ffi::CString::new(n.as_bytes())
            .map_err(|_| OwnFile::NotRegular("a name with a NUL byte".into()))
    };
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(cstr(n)?),
            _ => {
                return Err(OwnFile::NotRegular(format!(
                    "a name that leaves its directory ({})",
                    rel.display()
                )))
            }
        }
    }
    let Some((last, dirs)) = names.split_last() else {
        return Err(OwnFile::NotRegular("an empty name".into()));
    };
    let gone = |e: &io::Error| e.kind() == io::ErrorKind::NotFound;
    // The directory itself was checked by the command that owns it (`check_dir`).
    let mut at = match open_at(
        None,
        &cstr(dir.as_os_str())?,
        libc::O_RDONLY | libc::O_DIRECTORY,
    ) {
        Err(e) if gone(&e) => return Ok(None),
        r => r.map_err(OwnFile::Io)?,
    };
    for d in dirs {
        let st = match lstat_at(&at, d) {
            Err(e) if gone(&e) => return Ok(None),
            r => r.map_err(OwnFile::Io)?,
        };
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Err(OwnFile::NotRegular(format!(
                "{} on its way ({})",
                kind_of(st.st_mode),
                d.to_string_lossy()
            )));
        }
        at = open_at(
            Some(&at),
            d,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        )
        .map_err(OwnFile::Io)?;
    }
    let st = match lstat_at(&at, last) {
        Err(e) if gone(&e) => return Ok(None),
        r => r.map_err(OwnFile::Io)?,
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(OwnFile::NotRegular(kind_of(st.st_mode).into()));
    }
    if st.st_size as u64 > cap {
        return Err(OwnFile::TooBig(st.st_size as u64, cap));
    }
    // Opened without waiting and without following, then looked at again: a name
    // swapped since the look is refused, not read.
    let fd = open_at(
        Some(&at),
        last,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    )
    .map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => OwnFile::NotRegular("a symbolic link".into()),
        _ => OwnFile::Io(e),
    })?;
    let f = File::from(fd);
    let md = f.metadata().map_err(OwnFile::Io)?;
    if !md.is_file() {
        return Err(OwnFile::NotRegular(
            kind_of(md.mode() as libc::mode_t).into(),
        ));
    }
    if md.len() > cap {
        return Err(OwnFile::TooBig(md.len(), cap));
    }
    let mut data = Vec::with_capacity(md.len() as usize);
    f.take(cap + 1)
        .read_to_end(&mut data)
        .map_err(OwnFile::Io)?;
    if data.len() as u64 > cap {
        return Err(OwnFile::TooBig(data.len() as u64, cap));
    }
    Ok(Some(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_dir_is_0700_and_goes_away() {
        let d = private_dir("iobench-safefs-").unwrap();
        let p = d.path().to_path_buf();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(p.file_name().unwrap().len() > "iobench-safefs-".len());
        drop(d);
        assert!(!p.exists());
    }

    #[test]
    fn replace_does_not_follow_a_planted_link() {
        let d = private_dir("iobench-safefs-").unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let link = d.path().join("chart.svg");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_new(&link, 0o600).is_err(), "O_EXCL|O_NOFOLLOW");
        replace(&link, b"<svg/>").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&link).unwrap(), b"<svg/>");
        // Nothing else is left beside it.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }

    #[test]
    fn read_own_takes_only_regular_files_inside() {
        let d = private_dir("iobench-safefs-").unwrap();
        let p = d.path();
        std::fs::create_dir(p.join("runs")).unwrap();
        std::fs::write(p.join("runs/a.json"), b"{}").unwrap();
        std::fs::write(p.join("outside"), b"secret").unwrap();
        std::os::unix::fs::symlink(p.join("outside"), p.join("link")).unwrap();
        std::os::unix::fs::symlink(p.join("runs"), p.join("runs2")).unwrap();
        let fifo = std::ffi::CString::new(p.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let read = |rel: &str, cap| read_own(p, Path::new(rel), cap);
        assert_eq!(read("runs/a.json", 2).unwrap().unwrap(), b"{}");
        assert!(read("missing", 2).unwrap().is_none());
        assert!(read("runs/missing", 2).unwrap().is_none());
        let e = |r: Result<Option<Vec<u8>>, OwnFile>| r.unwrap_err().to_string();
        assert!(e(read("link", 100)).starts_with("a symbolic link"));
        assert!(e(read("runs2/a.json", 100)).starts_with("a symbolic link on its way"));
        assert!(e(read("fifo", 100)).starts_with("a FIFO"));
        assert!(e(read("runs", 100)).starts_with("a directory"));
        assert!(e(read("../x", 100)).contains("leaves its directory"));
        assert!(e(read("runs/a.json", 1)).starts_with("2 bytes, more than the 1 bytes"));
    }

    #[test]
    fn a_directory_others_may_write_is_refused() {
        let d = private_dir("iobench-safefs-").unwrap();
        check_dir(d.path()).unwrap();
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_dir(&open).unwrap_err().contains("writable by others"));
        let sub = open.join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check_dir(&sub).unwrap_err().contains("not sticky"));
    }
}
