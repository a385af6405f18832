//! Typed reads of a raw job's values, each falling back to the option table's default, with
//! errors that name the job and option.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use super::raw::RawJob;
use super::value::{self, KbBase, SizeSpec};
use super::{OptDef, TimeUnit};
use crate::error::JobError;

/// Reads one raw job's options as typed values.
pub struct Reader<'a> {
    /// The job's options as given.
    pub raw: &'a RawJob,
    kb: KbBase,
    /// The option table the defaults come from (the catalog's `lookup`).
    table: fn(&str) -> Option<&'static OptDef>,
}

impl<'a> Reader<'a> {
    /// A reader of `raw`, with sizes under its `kb_base` and defaults from `table`.
    pub fn new(raw: &'a RawJob, table: fn(&str) -> Option<&'static OptDef>) -> Self {
        let kb = match raw.value("kb_base") {
            Some("1000") => KbBase::Decimal,
            _ => KbBase::Binary,
        };
        Reader { raw, kb, table }
    }

    /// The job's `kb_base` (what `k` means in sizes).
    pub fn kb_base(&self) -> KbBase {
        self.kb
    }

    /// An error about option `name` of this job.
    pub fn invalid(&self, name: &str, message: impl std::fmt::Display) -> JobError {
        JobError::Invalid {
            job: self.raw.name.clone(),
            message: format!("{name}: {message}"),
        }
    }

    /// True when the user set `name` (as opposed to it taking its default).
    pub fn is_set(&self, name: &str) -> bool {
        self.raw.get(name).is_some()
    }

    /// The value text, or the table's default.
    pub fn text(&self, name: &str) -> Option<String> {
        // A key the table does not know would read as unset forever (tests/cli/parse_once.rs
        // checks the keys in the source; this catches computed ones in debug builds).
        debug_assert!(
            (self.table)(name).is_some(),
            "option '{name}' is not in the table"
        );
        self.raw
            .value(name)
            .map(str::to_string)
            .or_else(|| (self.table)(name).and_then(|d| d.default.map(str::to_string)))
    }

    /// The word of a choice option (or its default), without the `:`/`,` suffix fio
    /// ignores when it matches a word (`rw_sequencer=identical:3` is `identical`).
    pub fn choice(&self, name: &str) -> Option<String> {
        self.text(name).map(|v| value::choice_word(&v).to_string())
    }

    /// A boolean option (false when unset with no default).
    pub fn bool(&self, name: &str) -> Result<bool, JobError> {
        match self.text(name) {
            None => Ok(false),
            Some(v) => value::parse_bool(&v).map_err(|e| self.invalid(name, e)),
        }
    }

    /// An integer option, `None` when unset with no default.
    pub fn int(&self, name: &str) -> Result<Option<i64>, JobError> {
        self.text(name)
            .map(|v| value::parse_int(&v).map_err(|e| self.invalid(name, e)))
            .transpose()
    }

    /// `v` (a part of option `name`'s value) as an integer.
    pub fn int_of(&self, v: &str, name: &str) -> Result<i64, JobError> {
        value::parse_int(v).map_err(|e| self.invalid(name, e))
    }

    /// `v` (a part of option `name`'s value) as a time in µs, bare numbers in `unit`.
    pub fn time_of(&self, v: &str, name: &str, unit: TimeUnit) -> Result<u64, JobError> {
        value::parse_time_us(v, unit).map_err(|e| self.invalid(name, e))
    }

    /// A per-direction option `r,w,t` read with `parse`, spread by fio's one rule
    /// ([`value::per_dir`]); unset or empty parts are 0.
    pub fn per_dir(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<u64, JobError>,
    ) -> Result<[u64; 3], JobError> {
        let mut out = [0u64; 3];
        if let Some(text) = self.text(name) {
            for (slot, part) in out.iter_mut().zip(value::per_dir(&text)) {
                if let Some(p) = part {
                    *slot = parse(p)?;
                }
            }
        }
        Ok(out)
    }

    /// An integer option converted to the type of its field with `try_from`: a value that
    /// does not fit (a negative count, a depth past `u32`) is an error naming the option,
    /// never a silently wrapped number. The table's ranges refuse most such values at
    /// parse time already; this keeps the conversion honest for the rest.
    pub fn int_as<T: IntField>(&self, name: &str) -> Result<Option<T>, JobError> {
        match self.int(name)? {
            None => Ok(None),
            Some(v) => T::try_from(v).map(Some).map_err(|_| {
                self.invalid(
                    name,
                    format!("{v} is out of range (expected {} to {})", T::MIN, T::MAX),
                )
            }),
        }
    }

    /// `v` (a part of option `name`'s value) as a size in bytes under `kb_base`.
    pub fn size_of(&self, v: &str, name: &str) -> Result<u64, JobError> {
        value::parse_size(v, self.kb).map_err(|e| self.invalid(name, e))
    }

    /// A size option in bytes, `None` when unset with no default.
    pub fn size(&self, name: &str) -> Result<Option<u64>, JobError> {
        self.text(name).map(|v| self.size_of(&v, name)).transpose()
    }

    /// A size or a percentage (`20%`) option; a count of zones (`10z`) too.
    pub fn size_spec(&self, name: &str) -> Result<Option<SizeSpec>, JobError> {
        match self.text(name) {
            None => Ok(None),
            Some(v) => match v.trim().strip_suffix('%') {
                Some(p) => p
                    .trim()
                    .parse::<f64>()
                    .map(|p| Some(SizeSpec::Percent(p)))
                    .map_err(|_| self.invalid(name, format!("bad percentage '{v}'"))),
                None => match self.zones_of(&v, name)? {
                    // fio leaves an option of 0 zones unset (`size` then is the file's).
                    Some(0) if name != "offset" => Ok(None),
                    Some(bytes) => Ok(Some(SizeSpec::Bytes(bytes))),
                    None => Ok(Some(SizeSpec::Bytes(self.size_of(&v, name)?))),
                },
            },
        }
    }

    /// A size option that may be a count of zones (`zoneskip`), in bytes.
    pub fn size_or_zones(&self, name: &str) -> Result<Option<u64>, JobError> {
        match self.text(name) {
            None => Ok(None),
            Some(v) => match self.zones_of(&v, name)? {
                Some(bytes) => Ok(Some(bytes)),
                None => self.size_of(&v, name).map(Some),
            },
        }
    }

    /// `v` as fio's `Nz` (N zones) in bytes: N times `zonesize`, as fio converts it once
    /// zones are known (with `zonemode=strided` or `zbd`); 0 without a zone size, where
    /// fio leaves it unconverted. `None` when `v` is no zone count.
    fn zones_of(&self, v: &str, name: &str) -> Result<Option<u64>, JobError> {
        if !v.trim().ends_with('z') {
            return Ok(None);
        }
        match value::parse_size_or_percent(v, self.kb).map_err(|e| self.invalid(name, e))? {
            value::SizeOrPercent::Zones(n) => {
                let zone = self.size("zonesize")?.unwrap_or(0);
                n.checked_mul(zone).map(Some).ok_or_else(|| {
                    self.invalid(name, format!("'{v}' zones of {zone} bytes overflow"))
                })
            }
            _ => Ok(None),
        }
    }

    /// A time option in µs (bare numbers in `unit`), 0 when unset with no default.
    pub fn time_us(&self, name: &str, unit: TimeUnit) -> Result<u64, JobError> {
        match self.text(name) {
            None => Ok(0),
            Some(v) => value::parse_time_us(&v, unit).map_err(|e| self.invalid(name, e)),
        }
    }
}

/// An integer type a job field holds, with its bounds for error messages.
pub trait IntField: TryFrom<i64> {
    /// The smallest and largest value the field holds.
    const MIN: i128;
    /// See [`IntField::MIN`].
    const MAX: i128;
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl IntField for $t {
            const MIN: i128 = <$t>::MIN as i128;
            const MAX: i128 = <$t>::MAX as i128;
        }
    )*};
}
int_field!(u8, u16, u32, u64, i32);
