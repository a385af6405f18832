//! The engines, derived from their own declarations: one line per engine type below (see
//! [`Declared`] in `spec.rs`), plus fio's engines iobench refuses (`refused.rs`). From that
//! come `ioengine=` lookup, [`EngineConfig`] (the typed options of the chosen engine), the
//! option table's engine rows, `ioengine`'s choices and `--enghelp`; and
//! [`EngineConfig::visit`], which builds the engine and hands it to generic code (the
//! worker), so each engine gets its own monomorphised worker loop.

use super::spec::{Declared, Flags, JobFacts, QueueCompletion, Spec};
use super::Engine;
use crate::defs::reader::Reader;
use crate::defs::OptDef;
use crate::error::JobError;

/// Declares the engine types: `Variant => Type`, one line each. Everything else about an
/// engine is in its own file.
macro_rules! registry {
    ($($variant:ident => $ty:ty,)*) => {
        /// The chosen engine's typed options.
        #[derive(Debug, Clone)]
        enum Configured {
            $($variant(<$ty as Declared>::Opts),)*
        }

        /// The specs of every engine type, in registry order.
        const IMPLEMENTED: &[&[Spec]] = &[$(<$ty as Declared>::SPECS,)*];

        /// Reads the options of the engine `spec` names, with the type that declared it.
        fn configure(
            spec: &'static Spec,
            r: &Reader,
            job: &JobFacts,
        ) -> Result<Configured, JobError> {
            $(
                if <$ty as Declared>::SPECS.iter().any(|s| s.name == spec.name) {
                    return Ok(Configured::$variant(<$ty as Declared>::configure(spec, r, job)?));
                }
            )*
            Err(r.invalid_engine(format!("'{}' is not supported", spec.name)))
        }

        impl EngineConfig {
            /// Builds the engine and passes it to `v`, monomorphising `v` per engine.
            pub fn visit<V: EngineVisitor>(&self, v: V) -> V::Out {
                match &self.opts {
                    $(Configured::$variant(o) => v.visit(<$ty as Declared>::build(o)),)*
                }
            }

            /// The same engine configured for clone `clone` (0-based) of the job.
            pub fn for_clone(&self, clone: u32) -> EngineConfig {
                let mut c = self.clone();
                match &mut c.opts {
                    $(Configured::$variant(o) => <$ty as Declared>::for_clone(o, clone),)*
                }
                c
            }

            /// The same engine configured for an offload submitter.
            pub fn for_offload(&self) -> EngineConfig {
                let mut c = self.clone();
                match &mut c.opts {
                    $(Configured::$variant(o) => <$ty as Declared>::for_offload(o),)*
                }
                c
            }

            /// The size of character device `path` as the engine finds it, if it sizes
            /// character devices itself.
            pub fn char_device_size(&self, path: &str) -> Option<std::io::Result<u64>> {
                match &self.opts {
                    $(Configured::$variant(o) => <$ty as Declared>::char_device_size(o, path),)*
                }
            }

            /// The target's size, for an engine that is `sized_by_engine`.
            pub fn target_size(&self) -> std::io::Result<u64> {
                match &self.opts {
                    $(Configured::$variant(o) => <$ty as Declared>::target_size(o),)*
                }
            }
        }
    };
}

registry! {
    Cpuio => super::cpuio::Cpuio,
    Mmap => super::mmap::Mmap,
    SyncRw => super::sync::SyncRw,
    Psync => super::psync::Psync,
    Null => super::null::Null,
    FileOps => super::fileops::FileOps,
    DirOps => super::dirops::DirOps,
    PosixAio => super::posixaio::PosixAio,
    Uring => super::uring::Uring,
    Nbd => super::nbd::Nbd,
    Libaio => super::libaio::Libaio,
    Ftruncate => super::ftruncate::Ftruncate,
    Falloc => super::falloc::Falloc,
    Exec => super::exec::Exec,
    Splice => super::splice::Splice,
    Net => super::net::Net,
    E4defrag => super::e4defrag::E4defrag,
    Http => super::http::Http,
    Sg => super::sg::Sg,
    UringCmd => super::uring_cmd::UringCmd,
    Mtd => super::mtd::Mtd,
}

/// Every engine fio 3.33 has, each once: iobench's first, then the refused ones.
pub fn specs() -> impl Iterator<Item = &'static Spec> {
    LISTS.iter().flat_map(|l| l.iter())
}

/// The engine named `name`, implemented or not.
pub fn spec(name: &str) -> Option<&'static Spec> {
    specs().find(|s| s.name == name)
}

/// Looks an `ioengine=` value up; the error says why a known engine is refused, or which
/// engines exist.
pub fn find(name: &str) -> Result<&'static Spec, String> {
    match spec(name) {
        Some(s) => match s.refused {
            None => Ok(s),
            Some(why) => Err(format!("ioengine={name} is not supported yet: {why}")),
        },
        None => Err(format!(
            "unknown engine '{name}' (available: {})",
            specs()
                .filter(|s| s.refused.is_none())
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The engine a job uses, with its options read: what the runner builds engines from.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    spec: &'static Spec,
    opts: Configured,
}

impl EngineConfig {
    /// Reads the options of engine `spec` from the job.
    pub fn new(spec: &'static Spec, r: &Reader, job: &JobFacts) -> Result<Self, JobError> {
        Ok(EngineConfig {
            spec,
            opts: configure(spec, r, job)?,
        })
    }

    /// fio's name for the engine, as printed in the job header.
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// What the engine declared it can do.
    pub fn flags(&self) -> &'static Flags {
        &self.spec.flags
    }

    /// True when fio's engine of this kind completes each I/O inside its queue call at
    /// this depth. fio counts a loop's bytes against `size` only for I/O that was queued,
    /// so a loop of such an engine ends only when its files are done, not after `size`.
    pub fn completes_in_queue(&self, iodepth: u32) -> bool {
        match self.spec.flags.completes_in_queue {
            QueueCompletion::Always => true,
            QueueCompletion::Never => false,
            QueueCompletion::AtDepthOne => iodepth <= 1,
        }
    }

    /// True when the runner opens the job's files before the run.
    pub fn runner_opens_files(&self) -> bool {
        !self.spec.flags.opens_own_files
    }

    /// The engine behind a pointer, for code that drives several of them (the offload
    /// submitters), where one indirect call per I/O does not matter.
    pub fn boxed(&self) -> Box<dyn Engine> {
        self.visit(Boxer)
    }
}

struct Boxer;

impl EngineVisitor for Boxer {
    type Out = Box<dyn Engine>;
    fn visit<E: Engine + 'static>(self, engine: E) -> Box<dyn Engine> {
        Box::new(engine)
    }
}

/// Generic code that runs with a concrete engine type.
pub trait EngineVisitor {
    type Out;
    fn visit<E: Engine + 'static>(self, engine: E) -> Self::Out;
}

// ---- The option table's engine rows and `ioengine`'s choices, computed at compile time.

/// True when two strings are equal (in a const context).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// True when option `name` appears in `general` or in a spec's options before position
/// (`li`, `si`, `oi`) of [`LISTS`] (const code walks the lists with plain loops).
const fn seen_before(general: &[OptDef], name: &str, li: usize, si: usize, oi: usize) -> bool {
    let mut g = 0;
    while g < general.len() {
        if same(general[g].name, name) {
            return true;
        }
        g += 1;
    }
    let lists = LISTS;
    let mut l = 0;
    while l < lists.len() {
        let mut s = 0;
        while s < lists[l].len() {
            let opts = lists[l][s].options;
            let mut o = 0;
            while o < opts.len() {
                if l == li && s == si && o == oi {
                    return false;
                }
                if same(opts[o].name, name) {
                    return true;
                }
                o += 1;
            }
            s += 1;
        }
        l += 1;
    }
    false
}

/// Every spec list, implemented first (the same order as [`specs`]).
const LISTS: &[&[Spec]] = &concat_lists();

const N_LISTS: usize = IMPLEMENTED.len() + 1;

const fn concat_lists() -> [&'static [Spec]; N_LISTS] {
    let mut out: [&'static [Spec]; N_LISTS] = [&[]; N_LISTS];
    let mut i = 0;
    while i < IMPLEMENTED.len() {
        out[i] = IMPLEMENTED[i];
        i += 1;
    }
    out[i] = super::refused::SPECS;
    out
}

/// How many options the table has: `general` plus each engine option once.
pub const fn option_count(general: &[OptDef]) -> usize {
    let mut n = general.len();
    let mut l = 0;
    while l < LISTS.len() {
        let mut s = 0;
        while s < LISTS[l].len() {
            let opts = LISTS[l][s].options;
            let mut o = 0;
            while o < opts.len() {
                if !seen_before(general, opts[o].name, l, s, o) {
                    n += 1;
                }
                o += 1;
            }
            s += 1;
        }
        l += 1;
    }
    n
}

/// `general` followed by every engine's options, each once (the first declaration wins:
/// options shared by engines, such as `hipri`, are declared once and listed by each).
pub const fn with_engine_options<const N: usize>(general: &[OptDef]) -> [OptDef; N] {
    let mut out = [general[0]; N];
    let mut n = 0;
    while n < general.len() {
        out[n] = general[n];
        n += 1;
    }
    let mut l = 0;
    while l < LISTS.len() {
        let mut s = 0;
        while s < LISTS[l].len() {
            let opts = LISTS[l][s].options;
            let mut o = 0;
            while o < opts.len() {
                if !seen_before(general, opts[o].name, l, s, o) {
                    out[n] = opts[o];
                    n += 1;
                }
                o += 1;
            }
            s += 1;
        }
        l += 1;
    }
    out
}

/// How many words `ioengine`'s choices have: the engines fio lists there.
pub const fn choice_count() -> usize {
    let mut n = 0;
    let mut l = 0;
    while l < LISTS.len() {
        let mut s = 0;
        while s < LISTS[l].len() {
            if LISTS[l][s].choice {
                n += 1;
            }
            s += 1;
        }
        l += 1;
    }
    n
}

/// `ioengine`'s choice words and help, from the specs fio lists as choices.
pub const fn choices<const N: usize>() -> [(&'static str, &'static str); N] {
    let mut out = [("", ""); N];
    let mut n = 0;
    let mut l = 0;
    while l < LISTS.len() {
        let mut s = 0;
        while s < LISTS[l].len() {
            let sp = &LISTS[l][s];
            if sp.choice {
                out[n] = (sp.name, sp.help);
                n += 1;
            }
            s += 1;
        }
        l += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One notion of "synchronous", read from the flags: each engine iobench runs
    /// completes its I/O in `queue` at any depth (sync engines), only at depth 1 (null),
    /// or never (asynchronous engines), and only the file engines are file-name calls.
    #[test]
    fn sync_and_file_ops_come_from_the_flags() {
        let sync = [
            "sync",
            "vsync",
            "psync",
            "pvsync",
            "pvsync2",
            "mmap",
            "splice",
            "falloc",
            "ftruncate",
            "e4defrag",
            "cpuio",
            "exec",
            "net",
            "netsplice",
            "filecreate",
            "filestat",
            "filedelete",
            "dircreate",
            "dirstat",
            "dirdelete",
        ];
        let never = ["libaio", "io_uring", "posixaio", "nbd"];
        for s in specs().filter(|s| s.refused.is_none()) {
            let (one, deep) = (s.flags.sync_at(1), s.flags.sync_at(8));
            if sync.contains(&s.name) {
                assert!(s.flags.sync && one && deep, "{}", s.name);
            } else if never.contains(&s.name) {
                assert!(!s.flags.sync && !one && !deep, "{}", s.name);
            } else if s.name == "null" {
                assert!(!s.flags.sync && one && !deep, "null");
            }
            let file_op = [
                "filecreate",
                "filestat",
                "filedelete",
                "dircreate",
                "dirstat",
                "dirdelete",
            ]
            .contains(&s.name);
            assert_eq!(s.flags.file_ops, file_op, "{}", s.name);
        }
        for name in sync.iter().chain(&never).chain(&["null"]) {
            assert!(spec(name).is_some_and(|s| s.refused.is_none()), "{name}");
        }
    }

    #[test]
    fn every_engine_name_is_declared_once() {
        let names: Vec<&str> = specs().map(|s| s.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
    }

    /// An option's `engines` (fio's facts) and the engines' declared option lists agree.
    #[test]
    fn option_owners_match_the_declarations() {
        for s in specs() {
            for o in s.options {
                assert!(o.engines.contains(&s.name), "{} lists {}", s.name, o.name);
            }
        }
        for o in crate::options::OPTIONS
            .iter()
            .filter(|o| o.is_engine_option())
        {
            for e in o.engines {
                let s = spec(e).unwrap_or_else(|| panic!("{}: no engine {e}", o.name));
                assert!(
                    s.options.iter().any(|d| d.name == o.name),
                    "{e} does not list {}",
                    o.name
                );
            }
        }
    }

    #[test]
    fn refused_engines_say_why() {
        let e = find("rdma").unwrap_err();
        assert!(e.contains("not supported") && e.contains("RDMA"), "{e}");
        assert!(find("sg").is_ok());
        assert!(find("nope").unwrap_err().contains("unknown engine"));
        assert!(find("psync").is_ok());
    }
}
