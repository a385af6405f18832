//! `--showcmd`: a job file turned into one command line, printed exactly as fio prints it
//! (each option under its canonical name, sorted by the table's priority within a section,
//! engine options after general ones, values as written after `${VAR}` and keyword
//! substitution, `description` in double quotes, a space after every option).

use crate::defs::raw::RawOpt;
use crate::defs::OptDef;

/// One option as `--showcmd` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub name: &'static str,
    /// The text after `=` as written (leading blanks kept, as fio keeps them); `None` for a
    /// bare flag.
    pub value: Option<String>,
    prio: i8,
    engine: bool,
    /// A credential: printed as `<redacted>`.
    secret: bool,
}

/// The options of one section, in the order they were written.
pub type ShowList = Vec<Shown>;

impl Shown {
    /// An option as written in a job file.
    pub fn new(def: &'static OptDef, value: Option<String>) -> Shown {
        Shown {
            name: def.name,
            value,
            prio: def.prio,
            engine: def.is_engine_option(),
            secret: def.secret,
        }
    }

    /// An option given on the command line.
    pub fn from_raw(opt: &RawOpt) -> Shown {
        Shown::new(opt.def, opt.value.clone())
    }
}

/// A section's options in fio's order: general options before engine options (fio reads
/// engine options in a second pass), each part by descending priority, stable otherwise.
pub fn sorted(mut list: ShowList) -> ShowList {
    list.sort_by_key(|s| (s.engine, std::cmp::Reverse(s.prio)));
    list
}

/// Appends `--name=value ` (or `--name ` for a flag) for each option.
pub fn render(out: &mut String, list: &[Shown]) {
    for s in list {
        out.push_str("--");
        out.push_str(s.name);
        match &s.value {
            None => out.push(' '),
            Some(v) => {
                let v = if s.secret { crate::defs::REDACTED } else { v };
                let quote = if s.name == "description" { "\"" } else { "" };
                out.push('=');
                out.push_str(quote);
                out.push_str(v);
                out.push_str(quote);
                out.push(' ');
            }
        }
    }
}
