//! Engines by name: `ioengine=` text → [`EngineKind`], and [`EngineKind::visit`], which
//! builds the engine and hands it to generic code (the worker), so each engine gets its
//! own monomorphised worker loop.

use super::fileops::{FileOp, FileOps, StatType};
use super::libaio::{Libaio, LibaioOpts};
use super::mmap::Mmap;
use super::nbd::Nbd;
use super::null::Null;
use super::posixaio::PosixAio;
use super::psync::{PosMode, Psync, RWF_HIPRI, RWF_NOWAIT, RWF_UNCACHED};
use super::sync::SyncRw;
use super::uring::{Uring, UringOpts};
use super::Engine;

/// Every engine iobench implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Sync,
    Psync,
    Vsync,
    Pvsync,
    Pvsync2,
    Null,
    Libaio,
    IoUring,
    PosixAio,
    Mmap,
    FileCreate,
    FileStat,
    FileDelete,
    Nbd,
}

/// Per-engine options, resolved from the job (see `job::exec`).
#[derive(Debug, Clone, Default)]
pub struct EngineOpts {
    /// nbd's `uri`: the server and export.
    pub nbd_uri: Option<std::sync::Arc<str>>,
    pub libaio: LibaioOpts,
    pub uring: UringOpts,
    pub hipri: bool,
    /// pvsync2's `hipri_percentage`: the share of I/Os that carry RWF_HIPRI (100: all).
    pub hipri_percentage: u32,
    pub nowait: bool,
    pub uncached: bool,
    /// direct=1 (mmap writes back and drops each I/O's pages).
    pub direct: bool,
    /// madvise hint for mmap (from fadvise_hint and the pattern), if any.
    pub mmap_advice: Option<i32>,
    /// mmap's `thp`: private mappings advised to use transparent huge pages.
    pub thp: bool,
    /// filestat's `stat_type`.
    pub stat_type: StatType,
}

impl EngineKind {
    /// Reads an `ioengine=` value; the error says what is and is not available.
    pub fn parse(name: &str) -> Result<Self, String> {
        // fio accepts "external:path" and a path; neither is supported here.
        Ok(match name {
            "sync" => EngineKind::Sync,
            "psync" => EngineKind::Psync,
            "vsync" => EngineKind::Vsync,
            "pvsync" => EngineKind::Pvsync,
            "pvsync2" => EngineKind::Pvsync2,
            "null" => EngineKind::Null,
            "libaio" => EngineKind::Libaio,
            "io_uring" => EngineKind::IoUring,
            "posixaio" => EngineKind::PosixAio,
            "mmap" => EngineKind::Mmap,
            "filecreate" => EngineKind::FileCreate,
            "filestat" => EngineKind::FileStat,
            "filedelete" => EngineKind::FileDelete,
            "nbd" => EngineKind::Nbd,
            other => {
                return Err(format!(
                    "unknown engine '{other}' (available: {})",
                    Self::NAMES.join(", ")
                ))
            }
        })
    }

    /// The names iobench implements.
    pub const NAMES: &'static [&'static str] = &[
        "sync",
        "psync",
        "vsync",
        "pvsync",
        "pvsync2",
        "null",
        "libaio",
        "io_uring",
        "posixaio",
        "mmap",
        "filecreate",
        "filestat",
        "filedelete",
        "nbd",
    ];

    /// fio's name for the engine, as printed in the job header.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Psync => "psync",
            EngineKind::Vsync => "vsync",
            EngineKind::Pvsync => "pvsync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Null => "null",
            EngineKind::Libaio => "libaio",
            EngineKind::IoUring => "io_uring",
            EngineKind::PosixAio => "posixaio",
            EngineKind::Mmap => "mmap",
            EngineKind::FileCreate => "filecreate",
            EngineKind::FileStat => "filestat",
            EngineKind::FileDelete => "filedelete",
            EngineKind::Nbd => "nbd",
        }
    }

    /// True for engines that complete each I/O inside queue() (depth is 1 whatever
    /// iodepth says).
    pub fn is_sync(self) -> bool {
        !matches!(
            self,
            EngineKind::Libaio
                | EngineKind::IoUring
                | EngineKind::Null
                | EngineKind::PosixAio
                | EngineKind::Nbd
        )
    }

    /// True for engines that touch no file data, so files are neither laid out nor sized
    /// from disk (fio's "diskless" engines: null, filecreate).
    pub fn is_diskless(self) -> bool {
        matches!(self, EngineKind::Null | EngineKind::FileCreate)
    }

    /// True when fio's engine of this kind completes each I/O inside its queue call
    /// (fio's synchronous engines, and null at depth 1). fio counts a loop's bytes
    /// against `size` only for I/O that was queued, so a loop of such an engine ends
    /// only when its files are done, not after `size` bytes.
    pub fn completes_in_queue(self, iodepth: u32) -> bool {
        match self {
            // vsync queues (to merge neighbours into one readv/writev), so fio counts it.
            EngineKind::Sync
            | EngineKind::Psync
            | EngineKind::Pvsync
            | EngineKind::Pvsync2
            | EngineKind::Mmap
            | EngineKind::FileCreate
            | EngineKind::FileStat
            | EngineKind::FileDelete => true,
            EngineKind::Null => iodepth <= 1,
            EngineKind::Vsync
            | EngineKind::Libaio
            | EngineKind::IoUring
            | EngineKind::PosixAio
            | EngineKind::Nbd => false,
        }
    }

    /// True when the runner opens the job's files before the run; false for null and for
    /// the file engines, whose timed operation takes the place of the open.
    pub fn runner_opens_files(self) -> bool {
        !matches!(
            self,
            EngineKind::Null
                | EngineKind::FileCreate
                | EngineKind::FileStat
                | EngineKind::FileDelete
                | EngineKind::Nbd
        )
    }

    /// Builds the engine and passes it to `v`, monomorphising `v` per engine.
    pub fn visit<V: EngineVisitor>(self, o: &EngineOpts, v: V) -> V::Out {
        match self {
            EngineKind::Sync => v.visit(SyncRw::new(false)),
            EngineKind::Vsync => v.visit(SyncRw::new(true)),
            EngineKind::Psync => v.visit(Psync::new(PosMode::Plain)),
            EngineKind::Pvsync => v.visit(Psync::new(PosMode::Vector)),
            EngineKind::Pvsync2 => {
                let mut f = 0;
                if o.hipri {
                    f |= RWF_HIPRI;
                }
                if o.nowait {
                    f |= RWF_NOWAIT;
                }
                if o.uncached {
                    f |= RWF_UNCACHED;
                }
                v.visit(Psync::new(PosMode::Vector2(f)).with_hipri_percentage(o.hipri_percentage))
            }
            EngineKind::Null => v.visit(Null::default()),
            EngineKind::Libaio => v.visit(Libaio::new(o.libaio)),
            EngineKind::IoUring => v.visit(Uring::new(o.uring)),
            EngineKind::PosixAio => v.visit(PosixAio::new()),
            EngineKind::Mmap => v.visit(Mmap::new(o.direct, o.mmap_advice).with_thp(o.thp)),
            EngineKind::FileCreate => v.visit(FileOps::new(FileOp::Create)),
            EngineKind::FileStat => v.visit(FileOps::new(FileOp::Stat(o.stat_type))),
            EngineKind::FileDelete => v.visit(FileOps::new(FileOp::Delete)),
            EngineKind::Nbd => v.visit(Nbd::new(o.nbd_uri.clone().unwrap_or_else(|| "".into()))),
        }
    }
}

struct Boxer;

impl EngineVisitor for Boxer {
    type Out = Box<dyn Engine>;
    fn visit<E: Engine + 'static>(self, engine: E) -> Box<dyn Engine> {
        Box::new(engine)
    }
}

impl EngineKind {
    /// The engine behind a pointer, for code that drives several of them (the offload
    /// submitters), where one indirect call per I/O does not matter.
    pub fn boxed(self, o: &EngineOpts) -> Box<dyn Engine> {
        self.visit(o, Boxer)
    }
}

/// Generic code that runs with a concrete engine type.
pub trait EngineVisitor {
    type Out;
    fn visit<E: Engine + 'static>(self, engine: E) -> Self::Out;
}
