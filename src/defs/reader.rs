//! Typed reads of a raw job's values, each falling back to the option table's default, with
//! errors that name the job and option.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use super::raw::RawJob;
use super::rows::{KB_BASE, OFFSET, ZONESIZE};
use super::value::{self, KbBase, SizeSpec};
use super::{Kind, OptDef, TimeUnit};
use crate::error::JobError;

/// Reads one raw job's options as typed values. Every read takes the option's row (a named
/// constant: `r.size(&ZONESIZE)`), never its name, so the default, the time unit and the
/// value's form come from the row, and an option the table lacks cannot be read at all.
pub struct Reader<'a> {
    /// The job's options as given.
    pub raw: &'a RawJob,
    kb: KbBase,
}

impl<'a> Reader<'a> {
    /// A reader of `raw`, with sizes under its `kb_base`.
    pub fn new(raw: &'a RawJob) -> Self {
        let kb = match raw.value(&KB_BASE) {
            Some("1000") => KbBase::Decimal,
            _ => KbBase::Binary,
        };
        Reader { raw, kb }
    }

    /// The job's `kb_base` (what `k` means in sizes).
    pub fn kb_base(&self) -> KbBase {
        self.kb
    }

    /// An error about option `def` of this job.
    pub fn invalid(&self, def: &OptDef, message: impl std::fmt::Display) -> JobError {
        JobError::Invalid {
            job: self.raw.name.clone(),
            message: format!("{}: {message}", def.name),
        }
    }

    /// An error about the job's `ioengine` from an engine's own checks. (That row is the
    /// catalog's, its choices being the engines' declarations, so the engines cannot name it.)
    pub fn invalid_engine(&self, message: impl std::fmt::Display) -> JobError {
        JobError::Invalid {
            job: self.raw.name.clone(),
            message: format!("ioengine: {message}"),
        }
    }

    /// True when the user set `def` (as opposed to it taking its default).
    pub fn is_set(&self, def: &OptDef) -> bool {
        self.raw.get(def).is_some()
    }

    /// The value text, or the row's default.
    pub fn text(&self, def: &OptDef) -> Option<String> {
        self.raw.value(def).or(def.default).map(str::to_string)
    }

    /// The word of a choice option (or its default), without the `:`/`,` suffix fio
    /// ignores when it matches a word (`rw_sequencer=identical:3` is `identical`).
    pub fn choice(&self, def: &OptDef) -> Option<String> {
        self.text(def).map(|v| value::choice_word(&v).to_string())
    }

    /// A boolean option (false when unset with no default).
    pub fn bool(&self, def: &OptDef) -> Result<bool, JobError> {
        match self.text(def) {
            None => Ok(false),
            Some(v) => value::parse_bool(&v).map_err(|e| self.invalid(def, e)),
        }
    }

    /// An integer option, `None` when unset with no default.
    pub fn int(&self, def: &OptDef) -> Result<Option<i64>, JobError> {
        self.text(def)
            .map(|v| value::parse_int(&v).map_err(|e| self.invalid(def, e)))
            .transpose()
    }

    /// An integer option, or its row's default, or 0 for an unset option without one (fio
    /// zeroes the options it gives no default).
    pub fn num(&self, def: &OptDef) -> Result<i64, JobError> {
        Ok(self.int(def)?.unwrap_or(0))
    }

    /// [`Reader::num`] converted to the type of its field, as [`Reader::int_as`] does.
    pub fn num_as<T: IntField>(&self, def: &OptDef) -> Result<T, JobError> {
        let v = self.num(def)?;
        T::try_from(v).map_err(|_| {
            self.invalid(
                def,
                format!("{v} is out of range (expected {} to {})", T::MIN, T::MAX),
            )
        })
    }

    /// A size option in bytes, or its row's default, or 0 for an unset option without one.
    pub fn bytes(&self, def: &OptDef) -> Result<u64, JobError> {
        Ok(self.size(def)?.unwrap_or(0))
    }

    /// The value text, or the row's default, or empty for an unset option without one.
    pub fn string(&self, def: &OptDef) -> String {
        self.text(def).unwrap_or_default()
    }

    /// The word of a choice option, or of its row's default, or empty (see [`Reader::choice`]).
    pub fn word(&self, def: &OptDef) -> String {
        self.choice(def).unwrap_or_default()
    }

    /// `v` (a part of option `def`'s value) as an integer.
    pub fn int_of(&self, v: &str, def: &OptDef) -> Result<i64, JobError> {
        value::parse_int(v).map_err(|e| self.invalid(def, e))
    }

    /// The unit a bare number of time option `def` is in (its row's `Kind::Time`); a row of
    /// another kind is read in microseconds, as fio reads a time without a unit of its own.
    fn unit(def: &OptDef) -> TimeUnit {
        match def.kind {
            Kind::Time(unit) => unit,
            _ => TimeUnit::Usec,
        }
    }

    /// `v` (a part of option `def`'s value) as a time in µs, bare numbers in the row's unit.
    pub fn time_of(&self, v: &str, def: &OptDef) -> Result<u64, JobError> {
        value::parse_time_us(v, Self::unit(def)).map_err(|e| self.invalid(def, e))
    }

    /// A per-direction option `r,w,t` read with `parse`, spread by fio's one rule
    /// ([`value::per_dir`]); unset or empty parts are 0.
    pub fn per_dir(
        &self,
        def: &OptDef,
        parse: impl Fn(&str) -> Result<u64, JobError>,
    ) -> Result<[u64; 3], JobError> {
        let mut out = [0u64; 3];
        if let Some(text) = self.text(def) {
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
    pub fn int_as<T: IntField>(&self, def: &OptDef) -> Result<Option<T>, JobError> {
        match self.int(def)? {
            None => Ok(None),
            Some(v) => T::try_from(v).map(Some).map_err(|_| {
                self.invalid(
                    def,
                    format!("{v} is out of range (expected {} to {})", T::MIN, T::MAX),
                )
            }),
        }
    }

    /// `v` (a part of option `def`'s value) as a size in bytes under `kb_base`.
    pub fn size_of(&self, v: &str, def: &OptDef) -> Result<u64, JobError> {
        value::parse_size(v, self.kb).map_err(|e| self.invalid(def, e))
    }

    /// A size option in bytes, `None` when unset with no default.
    pub fn size(&self, def: &OptDef) -> Result<Option<u64>, JobError> {
        self.text(def).map(|v| self.size_of(&v, def)).transpose()
    }

    /// A size or a percentage (`20%`) option; a count of zones (`10z`) too.
    pub fn size_spec(&self, def: &OptDef) -> Result<Option<SizeSpec>, JobError> {
        match self.text(def) {
            None => Ok(None),
            Some(v) => match v.trim().strip_suffix('%') {
                Some(p) => p
                    .trim()
                    .parse::<f64>()
                    .map(|p| Some(SizeSpec::Percent(p)))
                    .map_err(|_| self.invalid(def, format!("bad percentage '{v}'"))),
                None => match self.zones_of(&v, def)? {
                    // fio leaves an option of 0 zones unset (`size` then is the file's).
                    Some(0) if def.name != OFFSET.name => Ok(None),
                    Some(bytes) => Ok(Some(SizeSpec::Bytes(bytes))),
                    None => Ok(Some(SizeSpec::Bytes(self.size_of(&v, def)?))),
                },
            },
        }
    }

    /// A size option that may be a count of zones (`zoneskip`), in bytes.
    pub fn size_or_zones(&self, def: &OptDef) -> Result<Option<u64>, JobError> {
        match self.text(def) {
            None => Ok(None),
            Some(v) => match self.zones_of(&v, def)? {
                Some(bytes) => Ok(Some(bytes)),
                None => self.size_of(&v, def).map(Some),
            },
        }
    }

    /// `v` as fio's `Nz` (N zones) in bytes: N times `zonesize`, as fio converts it once
    /// zones are known (with `zonemode=strided` or `zbd`); 0 without a zone size, where
    /// fio leaves it unconverted. `None` when `v` is no zone count.
    fn zones_of(&self, v: &str, def: &OptDef) -> Result<Option<u64>, JobError> {
        if !v.trim().ends_with('z') {
            return Ok(None);
        }
        match value::parse_size_or_percent(v, self.kb).map_err(|e| self.invalid(def, e))? {
            value::SizeOrPercent::Zones(n) => {
                let zone = self.bytes(&ZONESIZE)?;
                n.checked_mul(zone).map(Some).ok_or_else(|| {
                    self.invalid(def, format!("'{v}' zones of {zone} bytes overflow"))
                })
            }
            _ => Ok(None),
        }
    }

    /// A time option in µs (bare numbers in the row's unit), 0 when unset with no default.
    pub fn time_us(&self, def: &OptDef) -> Result<u64, JobError> {
        match self.text(def) {
            None => Ok(0),
            Some(v) => self.time_of(&v, def),
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
