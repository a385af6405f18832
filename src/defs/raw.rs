//! Options as given: each setting matched to its definition, with where it came from, and
//! the job sections that hold them. The catalog (`options`) builds these; the typed
//! [`Reader`](super::reader::Reader) reads them.

use super::OptDef;
use crate::error::Origin;

/// One option setting as given: `name[=value]`, already matched to its table entry and with
/// its value validated for the entry's kind.
#[derive(Debug, Clone)]
pub struct RawOpt {
    pub def: &'static OptDef,
    /// The name it was given by: the row's name or one of its aliases (the dialect check
    /// judges the name used, as an alias may be older or newer than the row's name).
    pub spelled: &'static str,
    /// The value text after `${VAR}` expansion; `None` for a bare flag (`--time_based`).
    pub value: Option<String>,
    pub origin: Origin,
}

/// One job section (or command-line `--name`), with the `[global]` options in force where it
/// was defined already folded in front of its own.
#[derive(Debug, Clone, Default)]
pub struct RawJob {
    pub name: String,
    /// Options in the order they apply: inherited globals first, then the section's own.
    pub opts: Vec<RawOpt>,
    pub origin: Origin,
    /// How many of `opts` (at the front) were inherited from `[global]` or from options
    /// before the first `--name`; JSON reports them as `global options`.
    pub globals: usize,
    /// The first job of a second or later job file: fio separates job files by a
    /// stonewall, so this job waits for all before it as if it said `stonewall`.
    pub file_stonewall: bool,
    /// A job of `--profile=act`: the number of hourly slices of ACT's latency table.
    pub act_slices: Option<u64>,
    /// The fio release the command line speaks as (`--fio-compat`, `IOBENCH_FIO_COMPAT`):
    /// set on every job when the command line is parsed, read where fio's releases differ.
    pub release: crate::defs::release::FioRelease,
}

impl RawOpt {
    /// The row's own spelling of `name` (its name, or the alias `name` is), for `spelled`.
    pub fn spelling(def: &'static OptDef, name: &str) -> &'static str {
        def.aliases
            .iter()
            .copied()
            .find(|a| *a == name)
            .unwrap_or(def.name)
    }
}

impl RawJob {
    /// The last setting of option `def` (under its name or any alias), which is the one
    /// that wins.
    pub fn get(&self, def: &OptDef) -> Option<&RawOpt> {
        self.opts.iter().rev().find(|o| o.def.answers_to(def.name))
    }

    /// The value text of option `def` as set (no default), with bare flags read as "1".
    pub fn value(&self, def: &OptDef) -> Option<&str> {
        self.get(def).map(|o| o.value.as_deref().unwrap_or("1"))
    }

    /// The value of `def` in force where the last setting of `at` was read: fio applies
    /// some options to a file as its name is parsed (`filetype` to the `filename`s after
    /// it), so what comes later does not reach it. With `at` not set, the last value.
    pub fn value_at(&self, def: &OptDef, at: &OptDef) -> Option<&str> {
        let end = self
            .opts
            .iter()
            .rposition(|o| o.def.answers_to(at.name))
            .unwrap_or(self.opts.len());
        self.opts[..end]
            .iter()
            .rev()
            .find(|o| o.def.answers_to(def.name))
            .map(|o| o.value.as_deref().unwrap_or("1"))
    }
}
