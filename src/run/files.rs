//! A job clone's targets: what each file is (regular file, block or character device), how
//! large, laying files out before the run (fio's "Laying out IO file" step), fallocate,
//! opening for I/O, dropping or warming the page cache, and the safety checks that run
//! before any I/O (`--readonly`, mounted block devices).

use crate::defs::value::SizeSpec;
use crate::job::files::{DeclaredKind, Fallocate};
use crate::job::Job;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

/// What kind of thing a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    Regular,
    Block,
    Char,
}

/// One prepared target of a clone.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Target {
    pub path: String,
    pub kind: Kind,
    /// The size I/O may use (device size, or the file's size after layout).
    pub size: u64,
    /// The size before layout (0 when the file did not exist), for region planning.
    pub setup_size: u64,
    /// True when this run created the file (only such files are ever unlinked).
    pub created: bool,
    /// With `create_serialize=0`: the size the clone lays this file out to when it
    /// starts (0 when there is nothing left to lay out).
    #[serde(default)]
    pub lay_out_to: u64,
    /// With `filesize`: the size planned for the file (0 without).
    #[serde(default)]
    pub planned: u64,
    /// The clone's region of a regular file (offset, length), whose cached pages an open
    /// drops with `invalidate` (fio's file_offset and io_size); None: the whole file.
    #[serde(default)]
    pub cache_range: Option<(u64, u64)>,
}

/// What `prepare` found: the targets, and with `create_serialize=0` the "Laying out"
/// line the clone prints when it lays its files out itself.
pub struct Prepared {
    pub targets: Vec<Target>,
    pub deferred_note: Option<String>,
}

/// The zoned model (`host-managed`, `host-aware`) of the block device at `path`, from
/// sysfs; `None` for a device without zones (or when sysfs does not say).
pub fn zoned_model(path: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let model =
        std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/queue/zoned")).ok()?;
    let model = model.trim();
    (!model.is_empty() && model != "none").then(|| model.to_string())
}

/// `BLKGETSIZE64`: the size of a block device in bytes.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// The size of the block device open as `f`.
pub fn block_size(f: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `size`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Whether the job will write or trim (and so needs its files open for writing).
pub fn job_writes(job: &Job) -> bool {
    job.workload.pattern.writes()
        || matches!(
            job.workload.pattern,
            crate::defs::Pattern::Trim | crate::defs::Pattern::RandTrim
        )
        || crate::gen::replay_writes(job)
}

fn job_reads(job: &Job) -> bool {
    use crate::defs::Pattern::*;
    matches!(job.workload.pattern, Read | RandRead | ReadWrite | RandRw)
}

fn setup_err(job: &Job, message: String) -> crate::error::RunError {
    crate::error::RunError::Setup {
        job: job.name.clone(),
        message,
    }
}

/// Checks made before any job starts: `--readonly` against write jobs, and block devices
/// with a mounted file system against write jobs without `allow_mounted_write=1`.
pub fn preflight(readonly: bool, jobs: &[Job]) -> Result<(), String> {
    for job in jobs {
        if !job_writes(job) || job.exec.engine.flags().fake_files {
            continue;
        }
        if readonly {
            return Err(
                "trim and write operations are not allowed with the --readonly parameter.".into(),
            );
        }
        if job.files.allow_mounted_write {
            continue;
        }
        for path in job.files.paths(&job.name, 0) {
            if let Some(why) = crate::run::claim::mounted_for_write(&path) {
                return Err(format!(
                    "{path} appears mounted ({why}), and 'allow_mounted_write' isn't set. Aborting."
                ));
            }
        }
    }
    Ok(())
}

/// Prepares the targets of clone `clone`: finds each one's kind and size and lays out
/// regular files that are missing or too small. `info` receives fio's progress lines.
pub fn prepare(
    job: &Job,
    clone: u32,
    thread_number: u64,
    info: &mut dyn FnMut(&str),
) -> Result<Prepared, crate::error::RunError> {
    let done = |targets| Prepared {
        targets,
        deferred_note: None,
    };
    // A replayed log names its own files and how far its I/O reaches (see gen::replay).
    let replay = crate::gen::replay_extents(job, clone).map_err(|e| setup_err(job, e))?;
    let paths = if job.workload.replay.read_iolog.is_some() {
        replay.iter().map(|(p, _)| p.clone()).collect()
    } else if let Some(dir) = &job.files.opendir {
        let mut found = crate::job::files::files_under(dir)
            .map_err(|e| setup_err(job, format!("opendir {dir}: {e}")))?;
        if clone == 0 {
            info(&format!("iobench: opendir added {} files\n", found.len()));
        }
        found.extend(job.files.paths(&job.name, clone));
        found
    } else {
        job.files.paths(&job.name, clone)
    };
    if job.exec.engine.flags().sized_by_engine {
        let name = paths
            .first()
            .cloned()
            .unwrap_or_else(|| job.exec.engine.name().into());
        return engine_target(job, name).map(|t| done(vec![t]));
    }
    let no_io = job.exec.engine.flags().diskless;
    let mut targets = Vec::with_capacity(paths.len());
    let mut missing = Vec::with_capacity(paths.len());
    for path in paths {
        let os_path = crate::osstr::to_path(&path);
        let lmd = std::fs::symlink_metadata(&os_path);
        missing.push(lmd.is_err());
        if clone == 0 && job_writes(job) && lmd.is_ok_and(|m| m.file_type().is_symlink()) {
            // A deliberate difference from fio, which replaces the link with a new file:
            // iobench writes through it, so say where the data goes.
            let to = std::fs::canonicalize(&os_path)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "a missing target".into());
            eprintln!(
                "iobench: note: {path} is a symbolic link; job '{}' writes through it to {to} \
                 (fio would replace the link with a regular file)",
                job.name
            );
        }
        let io_err = |e: io::Error| crate::error::RunError::Io {
            job: job.name.clone(),
            source: crate::error::with_path(&path, e),
        };
        let block = || -> Result<(Kind, u64), crate::error::RunError> {
            let f = File::open(&os_path).map_err(io_err)?;
            Ok((Kind::Block, block_size(&f).map_err(io_err)?))
        };
        // An engine that asks the device its size (sg's READ CAPACITY) sizes it.
        let char_dev = || -> Result<(Kind, u64), crate::error::RunError> {
            match job.exec.engine.char_device_size(&path) {
                Some(Ok(s)) => Ok((Kind::Char, s)),
                Some(Err(e)) => Err(setup_err(job, format!("{path}: {e}"))),
                None => Ok((Kind::Char, 0)),
            }
        };
        // `filetype` (fio 3.41) says what the file is, and it is sized as that kind,
        // unlooked at: a regular file by its size, a device by asking it.
        let (kind, size) = match job.files.filetype {
            Some(DeclaredKind::Block) => block()?,
            Some(DeclaredKind::Char) => char_dev()?,
            Some(DeclaredKind::File) => match std::fs::metadata(&os_path) {
                // fio sizes a device taken for a regular file at 0 and, to lay the "file"
                // out, unlinks the device's node: refused here, before anything is done.
                Ok(md) if md.file_type().is_block_device() || md.file_type().is_char_device() => {
                    return Err(setup_err(
                        job,
                        format!(
                            "filetype=file, but {path} is a device: laying it out as a \
                             regular file would unlink its node (fio 3.41 tries to); give \
                             filetype=block or char, or leave filetype out"
                        ),
                    ));
                }
                Ok(md) => (Kind::Regular, md.len()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => (Kind::Regular, 0),
                Err(e) => return Err(io_err(e)),
            },
            None => match std::fs::metadata(&os_path) {
                Ok(md) if md.file_type().is_block_device() => block()?,
                Ok(md) if md.file_type().is_char_device() => char_dev()?,
                // A FIFO or socket has no size, and opening a FIFO to lay it out would block
                // forever waiting for a reader (fio: "failed to get file size"). A diskless
                // engine (net: the path is its Unix socket) neither sizes nor lays it out.
                Ok(md) if !no_io && (md.file_type().is_fifo() || md.file_type().is_socket()) => {
                    return Err(setup_err(
                        job,
                        format!(
                            "failed to get file size of {path}: it is a {}, not a regular \
                             file or device",
                            if md.file_type().is_fifo() {
                                "FIFO"
                            } else {
                                "socket"
                            }
                        ),
                    ));
                }
                // The directory engines' targets are directories: nothing to size or lay out.
                Ok(md) if md.is_dir() && job.exec.engine.flags().dir_ops => (Kind::Regular, 0),
                Ok(md) if md.is_dir() => {
                    return Err(setup_err(job, format!("{path} is a directory")));
                }
                Ok(md) => (Kind::Regular, md.len()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => (Kind::Regular, 0),
                Err(e) => return Err(io_err(e)),
            },
        };
        targets.push(Target {
            path,
            kind,
            size,
            setup_size: size,
            created: false,
            lay_out_to: 0,
            planned: 0,
            cache_range: None,
        });
    }
    if no_io && !replay.is_empty() {
        for (t, r) in targets.iter_mut().zip(&replay) {
            (t.size, t.setup_size) = (r.1, r.1);
        }
        return Ok(done(targets));
    }
    if no_io {
        let per = match job.workload.size {
            Some(SizeSpec::Bytes(b)) => b / targets.len().max(1) as u64,
            _ => job.files.filesize.unwrap_or(0),
        };
        let creates = job.exec.engine.flags().creates_files;
        for (t, &m) in targets.iter_mut().zip(&missing) {
            t.size = per;
            t.setup_size = per;
            // filecreate makes the files itself: they are this run's to unlink.
            t.created = creates && m && t.kind == Kind::Regular;
        }
        return Ok(done(targets));
    }
    // How large each regular file must be.
    let current: Vec<u64> = targets.iter().map(|t| t.size).collect();
    let planned = job
        .files
        .filesize
        .map(|_| planned_sizes(job, thread_number, &current));
    if let Some(p) = &planned {
        // With `filesize`, each file's region ends at its planned size.
        for (t, &p) in targets.iter_mut().zip(p) {
            if t.kind == Kind::Regular {
                t.planned = p;
            }
        }
    }
    // fill_device without a size: write until the file system is full, as fio does.
    let fill = job.workload.fill_device
        && job.workload.size.is_none()
        && job.files.filesize.is_none()
        && job.workload.io_size.is_none();
    if fill && !job_writes(job) {
        return Err(setup_err(
            job,
            "fill_device=1 for a job that only reads is not supported yet".into(),
        ));
    }
    let need: Vec<u64> = match &planned {
        _ if fill => targets
            .iter()
            .map(|t| match t.kind {
                Kind::Regular => FILL,
                _ => t.size,
            })
            .collect(),
        // A replayed log lays out only missing files: an existing file is never extended
        // (rewritten) because an entry points past its end; that entry fails with EIO, as
        // in fio.
        _ if !replay.is_empty() => current
            .iter()
            .zip(&replay)
            .map(|(&c, r)| if c > 0 { c } else { r.1 })
            .collect(),
        Some(p) => crate::gen::plan::layout_size_planned(job, clone, &current, p),
        None => crate::gen::plan::layout_size(job, clone, &current),
    };
    for (t, &n) in targets.iter().zip(&need) {
        match t.kind {
            Kind::Char
                if t.size == 0 && job.workload.size.is_none() && job.files.filesize.is_none() =>
            {
                return Err(setup_err(
                    job,
                    format!("{}: a character device needs size= to be given", t.path),
                ));
            }
            // Without a size, an existing file's data must not be rewritten because the
            // offset points past its end (fio: "you need to specify valid offset=").
            Kind::Regular
                if t.size > 0
                    && n > t.size
                    && replay.is_empty()
                    && job.workload.size.is_none()
                    && job.files.filesize.is_none()
                    && !fill =>
            {
                return Err(setup_err(
                    job,
                    format!(
                        "you need to specify valid offset=: the job starts past the end of \
                         {} ({} bytes) and no size= was given",
                        t.path, t.size
                    ),
                ));
            }
            Kind::Regular if n == 0 => {
                return Err(setup_err(
                    job,
                    "you need to specify size= (or a file that exists)".to_string(),
                ));
            }
            _ => {}
        }
    }
    // A character device is as large as the job's size, unless the engine asked the
    // device its real size (sg): then that is its size, and `size=` only the job's share.
    for t in targets
        .iter_mut()
        .filter(|t| t.kind == Kind::Char && t.size == 0)
    {
        t.size = job
            .files
            .filesize
            .or(match job.workload.size {
                Some(SizeSpec::Bytes(b)) => Some(b),
                _ => None,
            })
            .unwrap_or(0);
        t.setup_size = t.size;
    }
    let extend: Vec<usize> = targets
        .iter()
        .zip(&need)
        .enumerate()
        .filter(|(_, (t, &n))| t.kind == Kind::Regular && t.size < n)
        .map(|(i, _)| i)
        .collect();
    if extend.is_empty() || job.files.create_on_open {
        if job.files.create_on_open {
            for &i in &extend {
                targets[i].created = targets[i].size == 0;
                targets[i].size = need[i];
            }
        }
        return Ok(done(targets));
    }
    if !job.files.allow_file_create && extend.iter().any(|&i| targets[i].setup_size == 0) {
        return Err(setup_err(
            job,
            "file creation disallowed by allow_file_create=0".into(),
        ));
    }
    let total: u64 = extend.iter().fold(0u64, |a, &i| a.saturating_add(need[i]));
    let n = extend.len();
    let note = format!(
        "{}: Laying out IO file{} ({} file{} / {}{}MiB)\n",
        job.name,
        if n > 1 { "s" } else { "" },
        n,
        if n > 1 { "s" } else { "" },
        if n > 1 { "total " } else { "" },
        total >> 20
    );
    let serialize = job.files.create_serialize;
    if serialize {
        info(&note);
    }
    for &i in &extend {
        let t = &mut targets[i];
        t.created = std::fs::metadata(crate::osstr::to_path(&t.path)).is_err();
        if serialize {
            layout(job, &t.path, need[i]).map_err(|e| crate::error::RunError::Io {
                job: job.name.clone(),
                source: crate::error::with_path(&t.path, e),
            })?;
        } else {
            t.lay_out_to = need[i];
        }
        t.size = need[i];
        if need[i] == FILL {
            t.size = fill_extent(job, &t.path);
            t.setup_size = t.size;
        }
    }
    Ok(Prepared {
        targets,
        deferred_note: (!serialize).then_some(note),
    })
}

/// The size a `fill_device` file is "laid out" to (fio's unlimited size; its layout
/// line shows it in MiB).
const FILL: u64 = u64::MAX;

/// How far a `fill_device` job's I/O may range in `path`: far beyond any file system for
/// sequential I/O (it ends at ENOSPC), the file system's free space for random I/O (so
/// the random map stays small). Rounded down to the largest block size.
fn fill_extent(job: &Job, path: &str) -> u64 {
    let bs = job
        .workload
        .bs
        .iter()
        .map(|b| b.1)
        .max()
        .unwrap_or(4096)
        .max(1);
    let span = if job.workload.pattern.is_random() {
        let dir = std::path::Path::new(path)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap_or_default();
        // SAFETY: statvfs writes into the struct we own; c is a valid C string.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above: `c` is a C string, `st` is ours.
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0 {
            (st.f_bavail as u64).saturating_mul(st.f_frsize as u64)
        } else {
            1 << 40
        }
    } else {
        1 << 62
    };
    (span - span % bs).max(bs)
}

/// Lays out, in the clone itself, the files `prepare` left for it (`create_serialize=0`).
pub fn lay_out_deferred(job: &Job, targets: &[Target]) -> io::Result<()> {
    for t in targets.iter().filter(|t| t.lay_out_to > 0) {
        layout(job, &t.path, t.lay_out_to).map_err(|e| crate::error::with_path(&t.path, e))?;
    }
    Ok(())
}

/// The size fio gives each file under `filesize`: a file already within the range keeps
/// its size; any other gets the one size, or for a range a size drawn from the clone's
/// file-size random stream (rounded down to the smallest block size), file by file.
fn planned_sizes(job: &Job, thread_number: u64, current: &[u64]) -> Vec<u64> {
    use crate::gen::rand::{clone_seeds, FRand, Stream};
    let (lo, hi) = match job.files.filesize {
        Some(lo) => (lo, job.files.filesize_high.max(lo)),
        None => return current.to_vec(),
    };
    let w = &job.workload;
    let seeds = clone_seeds(w, thread_number);
    let use64 = w.random_generator == crate::job::workload::RandomGenerator::Tausworthe64;
    let mut rng = FRand::new(seeds[Stream::FileSize as usize], use64);
    let min_bs = w.bs.iter().map(|b| b.0).min().unwrap_or(4096).max(1);
    current
        .iter()
        .map(|&c| {
            if (lo..=hi).contains(&c) {
                c
            } else if lo == hi {
                lo
            } else {
                let v = lo + rng.scaled(hi - lo);
                v - v % min_bs
            }
        })
        .collect()
}

/// Creates or extends one file to `size` bytes: space reserved per `fallocate`, and the
/// data written in full when the job reads (so reads do not hit holes) or asks for
/// `overwrite`, as fio does.
fn layout(job: &Job, path: &str, size: u64) -> io::Result<()> {
    if job.files.fallocate == Fallocate::Truncate {
        crate::dprint!(crate::debug::Cat::File, "ftruncate file {path} size {size}");
    }
    if size == FILL {
        // fill_device: the file is only created; the job's writes fill it.
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(crate::osstr::to_path(path))?;
        return Ok(());
    }
    let reads = job_reads(job) || (job.files.overwrite && !job.files.file_append);
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(reads)
        .open(crate::osstr::to_path(path))?;
    let fd = f.as_raw_fd();
    let r = match job.files.fallocate {
        Fallocate::None => 0,
        // SAFETY: fd is an open file; the call only reserves blocks.
        Fallocate::Posix => unsafe { libc::posix_fallocate(fd, 0, size as libc::off_t) },
        // SAFETY: as above; mode 0 may also extend the size.
        Fallocate::Native => unsafe { libc::fallocate(fd, 0, 0, size as libc::off_t) },
        // SAFETY: as above; KEEP_SIZE leaves the size alone.
        Fallocate::Keep => unsafe {
            libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, size as libc::off_t)
        },
        // SAFETY: as above; sets the size without reserving blocks, as fio's "truncate".
        Fallocate::Truncate => unsafe { libc::ftruncate(fd, size as libc::off_t) },
    };
    let _ = r; // unsupported by the file system: a full layout still sizes the file below.
               // Like fio, only a full layout sets the size: a write job's file otherwise grows (or
               // was already extended by fallocate) as its writes land.
    if reads && f.metadata()?.len() < size {
        f.set_len(size)?;
    }
    if reads {
        use std::io::Write;
        let bs = job
            .workload
            .bs
            .iter()
            .map(|b| b.1)
            .max()
            .unwrap_or(4096)
            .clamp(4096, 1 << 20) as usize;
        let mut buf = vec![0u8; bs];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ size;
        for chunk in buf.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = x.to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
        let mut w = &f;
        let mut left = size;
        while left > 0 && !super::terminating() {
            let n = left.min(bs as u64) as usize;
            w.write_all(&buf[..n])?;
            left -= n as u64;
        }
    }
    // fio syncs a laid-out file only when it wrote its data (jobs that read).
    if reads && job.files.create_fsync {
        f.sync_all()?;
    }
    Ok(())
}

/// The clone's targets, each regular file with its region (fio's file_offset and io_size)
/// recorded as the range `invalidate` drops from the cache when it is opened.
pub fn with_cache_ranges(job: &Job, clone: u32, targets: &[Target]) -> Vec<Target> {
    let extents: Vec<crate::gen::FileExtent> = targets
        .iter()
        .map(|t| {
            crate::gen::FileExtent::new(&t.path, t.size)
                .laid_out_from(t.setup_size)
                .planned(t.planned)
                .on_device(t.kind != Kind::Regular)
        })
        .collect();
    let regions = crate::gen::plan::file_regions(job, clone, &extents);
    targets
        .iter()
        .zip(regions)
        .map(|(t, r)| Target {
            cache_range: (t.kind == Kind::Regular).then_some((r.start, r.io_size)),
            ..t.clone()
        })
        .collect()
}

/// Opens every target for I/O, in order (see [`open_one`]).
pub fn open_all(job: &Job, targets: &[Target]) -> io::Result<Vec<File>> {
    targets
        .iter()
        .enumerate()
        .map(|(i, t)| open_one(job, t).map_err(|e| too_many_hint(e, i, targets.len())))
        .collect()
}

/// Opens one target for I/O with the job's flags (O_DIRECT, O_SYNC, creating a missing
/// regular file when the job writes), then does what fio does on each open: drop or
/// warm its cached pages and pass on the access and write hints.
pub fn open_one(job: &Job, t: &Target) -> io::Result<File> {
    crate::dprint!(crate::debug::Cat::File, "fd open {}", t.path);
    let writes = job_writes(job) || job.exec.engine.flags().opens_rdwr;
    let mut flags = job.exec.sync.open_sync_flags;
    if job.exec.direct {
        flags |= libc::O_DIRECT;
    }
    let create = t.kind == Kind::Regular && job.files.allow_file_create;
    let f = OpenOptions::new()
        .read(true)
        .write(writes)
        .create(create && writes)
        .truncate(false)
        .custom_flags(flags)
        .open(crate::osstr::to_path(&t.path))
        .map_err(|e| crate::error::with_path(&t.path, e))?;
    if job.files.create_on_open && t.kind == Kind::Regular && f.metadata()?.len() < t.size {
        f.set_len(t.size)?;
    }
    if job.files.pre_read {
        pre_read(&t.path, t.size)?;
    } else if job.files.invalidate {
        invalidate(f.as_raw_fd(), t);
    }
    if let Some(hint) = job.exec.access_hint.filter(|_| t.kind != Kind::Char) {
        advise(&f, hint.fadvise());
    }
    if let Some(hint) = job.exec.write_hint.filter(|_| t.kind != Kind::Char) {
        set_write_hint(&f, hint, job.exec.direct)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: write_hint: {e}", t.path)))?;
    }
    Ok(f)
}

/// Drops the target's cached pages as fio does at each open with `invalidate=1` (and
/// before a job's verify pass, where fio reopens or syncs its files): a block
/// device is flushed with BLKFLSBUF (dirty pages written back and waited for, then every
/// cached page of the device dropped), a regular file only in the clone's region
/// (fadvise DONTNEED over file_offset and io_size), so the rest of its cache survives. A
/// refusal is not fatal, as with fio (only root may flush a block device).
pub fn invalidate(fd: RawFd, t: &Target) {
    let rc = match t.kind {
        Kind::Block => {
            // SAFETY: BLKFLSBUF takes no argument; it only writes back and drops the
            // device's page cache.
            let rc = unsafe { libc::ioctl(fd, BLKFLSBUF) };
            if rc < 0 {
                io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO)
            } else {
                0
            }
        }
        Kind::Regular => {
            let (off, len) = t.cache_range.unwrap_or((0, 0));
            // SAFETY: fadvise only drops clean cached pages of this open file.
            unsafe {
                libc::posix_fadvise(
                    fd,
                    off as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                )
            }
        }
        Kind::Char => 0,
    };
    if rc != 0 {
        eprintln!(
            "iobench: cache invalidation of {} failed: {}",
            t.path,
            io::Error::from_raw_os_error(rc)
        );
    }
}

/// The BLKFLSBUF ioctl (linux/fs.h: _IO(0x12, 97)).
const BLKFLSBUF: libc::c_ulong = 0x1261;

/// Out of descriptors: says which open failed and what helps, as fio does (the error
/// itself is passed on unchanged, so its errno still reaches the report).
pub fn too_many_hint(e: io::Error, opened: usize, total: usize) -> io::Error {
    if crate::error::os_errno(&e) == Some(libc::EMFILE) {
        eprintln!("iobench: try reducing/setting openfiles (failed at {opened} of {total})");
    }
    e
}

/// Announces the job's access pattern for an opened file (as fio does after opening it):
/// random access turns the kernel's read-ahead off, sequential access widens it. A refusal
/// is reported once and the run goes on, as with fio.
fn advise(f: &File, advice: i32) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    // SAFETY: posix_fadvise only changes the kernel's caching policy for this open file.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
    if rc != 0 && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "iobench: fadvise hint failed: {}",
            io::Error::from_raw_os_error(rc)
        );
    }
}

/// fcntl commands for write lifetime hints (linux/fcntl.h).
const F_SET_RW_HINT: libc::c_int = 1024 + 12;
const F_SET_FILE_RW_HINT: libc::c_int = 1024 + 14;

/// Sets the expected lifetime of the data written to `f` (`write_hint`). As fio does, an
/// O_DIRECT file gets the hint on its open file and a buffered one on its inode; kernels
/// since 5.17 keep only the inode's hint, which then serves direct I/O too, so iobench
/// falls back to it where fio would fail the job.
fn set_write_hint(f: &File, hint: u64, direct: bool) -> io::Result<()> {
    let set = |cmd| {
        // SAFETY: the fcntl reads one u64 from the pointer, which lives across the call.
        let rc = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &hint as *const u64) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    if direct && set(F_SET_FILE_RW_HINT).is_ok() {
        return Ok(());
    }
    set(F_SET_RW_HINT)
}

/// Reads `size` bytes of `path` through the page cache so the run starts warm.
fn pre_read(path: &str, size: u64) -> io::Result<()> {
    use std::io::Read;
    let mut f = File::open(crate::osstr::to_path(path))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 && !super::terminating() {
        let n = f.read(&mut buf[..left.min(1 << 20) as usize])?;
        if n == 0 {
            break;
        }
        left -= n as u64;
    }
    Ok(())
}

/// Removes the files this run created (`unlink=1`); others are left alone. fio deletes
/// them too; iobench never deletes data it did not make, and says so on stderr.
pub fn unlink_created(targets: &[Target]) {
    for t in targets
        .iter()
        .filter(|t| !t.created && t.kind == Kind::Regular)
    {
        eprintln!(
            "iobench: note: unlink=1 keeps {}: this run did not create it (fio would delete it)",
            t.path
        );
    }
    for t in targets
        .iter()
        .filter(|t| t.created && t.kind == Kind::Regular)
    {
        let path = crate::osstr::to_path(&t.path);
        // A directory engine's target (dircreate) is a directory; fio removes it too.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            let _ = std::fs::remove_dir(path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The one target of a job whose engine sizes it (nbd: the server's export, sized by
/// asking the server, as fio's nbd engine does before its workers start), under the job's
/// file name.
fn engine_target(job: &Job, path: String) -> Result<Target, crate::error::RunError> {
    let size = job
        .exec
        .engine
        .target_size()
        .map_err(|e| match crate::error::os_errno(&e) {
            // A system error (a timeout, a refused connection) keeps its errno.
            Some(_) => crate::error::RunError::Io {
                job: job.name.clone(),
                source: e,
            },
            None => setup_err(job, e.to_string()),
        })?;
    if size == 0 {
        return Err(setup_err(
            job,
            format!("{}: the target is empty", job.exec.engine.name()),
        ));
    }
    Ok(Target {
        path,
        kind: Kind::Block,
        size,
        setup_size: size,
        created: false,
        lay_out_to: 0,
        planned: 0,
        cache_range: None,
    })
}
