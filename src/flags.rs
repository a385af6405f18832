//! The flag parser of iobench's subcommands (`sweep`, `compare`, `quick`, `report`,
//! `peak`, ...) and of the `--client` command line: each declares its flags once, in a
//! table of rows ([`Flag`]: names, value form, description, and the `apply` that sets
//! what the flag sets, as ripgrep's `Flag::update`), and the same table both reads the
//! arguments and prints `--help`, so the help cannot drift from what is accepted and no
//! flag is handled by a `match` on its name elsewhere. (A plain run keeps fio's own
//! rules: `cli`.)
//!
//! Accepted forms: `--flag=value`, `--flag value`, `-f value`, `-f=value`, `-f32` (only in a
//! table that asks for it, as t/io_uring does), `-flag=value` and `-flag value` (only in a
//! table that asks for it, as fio's `getopt_long_only` reads `--client`'s line), switches,
//! repeated flags (kept in order, and in order with the positional arguments: see
//! [`Matches::in_order`]), and `--`, after which every argument is handed back untouched.

#![warn(missing_docs)]

use std::fmt::Write;

/// What a flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A switch: `--dry-run`. A value given to it (`--dry-run=1`) is an error.
    Nothing,
    /// A value, after `=` or in the next argument.
    Value,
    /// An optional value, only after `=`: `--mix` or `--mix=60`.
    MaybeValue,
}

/// A flag's value as its row's [`Flag::apply`] is handed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value<'a> {
    /// The flag as it was given (one of its row's names: `--loops` or `--repeat`), so an
    /// error names what the user wrote.
    pub flag: &'static str,
    /// The value given (`None` for a switch, or an optional value left out).
    pub value: Option<&'a str>,
}

impl Value<'_> {
    /// The same flag given `value`: a switch that stands for a value of another flag
    /// (`--json` for `--output-format=json`) applies that flag's row with it.
    pub fn with(self, value: &str) -> Value<'_> {
        Value {
            flag: self.flag,
            value: Some(value),
        }
    }

    /// The value's text (empty for a switch).
    pub fn text(&self) -> &str {
        self.value.unwrap_or("")
    }

    /// The value as an owned string.
    pub fn string(&self) -> String {
        self.text().to_string()
    }

    /// The value as a path.
    pub fn path(&self) -> std::path::PathBuf {
        self.text().into()
    }

    /// The error for this value: names the flag, the value and `expected`.
    pub fn bad(&self, expected: &str) -> String {
        bad_value(self.flag, self.text(), expected)
    }

    /// The value as a number of type `T`, or the error naming `expected`.
    pub fn number<T: std::str::FromStr>(&self, expected: &str) -> Result<T, String> {
        number(self.flag, self.text(), expected)
    }
}

/// What a flag does to the arguments `A` it is read into.
pub type Apply<A> = fn(&mut A, Value<'_>) -> Result<(), String>;

/// One flag of a subcommand: how it is written, and what it sets (`apply`), so a row is
/// the whole of a flag.
pub struct Flag<A: 'static> {
    /// Its spellings, the first the one the parser hands back: `&["--output", "-o"]`.
    pub names: &'static [&'static str],
    /// Whether it takes a value.
    pub takes: Takes,
    /// The value's form, as help shows it and errors name it (`DIR`, `N`); empty for a
    /// switch.
    pub form: &'static str,
    /// What it does; a `\n` starts a continuation line, aligned under the first.
    pub help: &'static str,
    /// Sets what the flag sets in the arguments being read, or says why the value is bad.
    pub apply: Apply<A>,
}

impl<A> Clone for Flag<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Flag<A> {}

impl<A> std::fmt::Debug for Flag<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flag")
            .field("names", &self.names)
            .field("takes", &self.takes)
            .field("form", &self.form)
            .finish_non_exhaustive()
    }
}

/// An [`Apply`] for a table whose caller reads the flags itself, in order with the
/// positional arguments ([`Matches::in_order`], `--client`'s line): nothing is set here.
pub fn read_in_order<A>(_: &mut A, _: Value<'_>) -> Result<(), String> {
    Ok(())
}

/// A subcommand's flags and how its arguments read.
#[derive(Debug)]
pub struct Spec<A: 'static> {
    /// The subcommand, as errors name it: `sweep`.
    pub command: &'static str,
    /// The usage lines and any text before the flag list.
    pub usage: &'static str,
    /// The flags (`-h`/`--help` are always there and need no row).
    pub flags: &'static [Flag<A>],
    /// Arguments that look like flags but are none of these are handed back as
    /// positional (a sweep's job options) instead of refused.
    pub pass_unknown: bool,
    /// A one-letter flag may have its value attached: `-d32` (t/io_uring's way).
    pub attached: bool,
    /// A long flag may be written with one dash, `-client=h` or `-output f`, as fio's
    /// `getopt_long_only` reads it.
    pub single_dash: bool,
}

/// The arguments as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    /// `-h`/`--help` was given: print [`Spec::help`] and exit 0.
    pub help: bool,
    /// Each flag given, in order, by its first name, with its value (`None` for a switch
    /// or an optional value left out).
    pub flags: Vec<(&'static str, Option<String>)>,
    /// The other arguments, in order.
    pub positional: Vec<String>,
    /// For each positional argument, how many flags came before it: where it stood among
    /// them (a job file after `--client=h` belongs to `h`).
    pub positional_after: Vec<usize>,
    /// The arguments after the first `--`, when there was one.
    pub rest: Option<Vec<String>>,
    /// For each of `flags`, its row in the table and the name it was given by.
    rows: Vec<(usize, &'static str)>,
}

impl<A> Spec<A> {
    /// Reads `args` (the arguments after the subcommand's name).
    pub fn parse<S: AsRef<str>>(&self, args: &[S]) -> Result<Matches, String> {
        let mut m = Matches::default();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_ref();
            i += 1;
            if arg == "--" {
                m.rest = Some(args[i..].iter().map(|a| a.as_ref().to_string()).collect());
                break;
            }
            if matches!(arg, "-h" | "--help") || (self.attached && arg == "-?") {
                m.help = true;
                continue;
            }
            if !arg.starts_with('-') || arg == "-" {
                m.push_positional(arg);
                continue;
            }
            let Some((row, spelt, inline)) = self.find(arg) else {
                if self.pass_unknown {
                    m.push_positional(arg);
                    continue;
                }
                return Err(format!(
                    "unknown option '{arg}' (see iobench {} --help)",
                    self.command
                ));
            };
            let flag = &self.flags[row];
            let name = flag.names[0];
            let value = match (flag.takes, inline) {
                (Takes::Nothing, Some(v)) => {
                    return Err(format!(
                        "option '{name}' takes no value (given '{v}'): expected {name} alone"
                    ))
                }
                (Takes::Nothing, None) | (Takes::MaybeValue, None) => None,
                (_, Some(v)) => Some(v),
                (Takes::Value, None) => {
                    let v = args.get(i).ok_or_else(|| {
                        format!(
                            "option '{name}' needs a value: expected {name} {}",
                            flag.form
                        )
                    })?;
                    i += 1;
                    Some(v.as_ref().to_string())
                }
            };
            m.flags.push((name, value));
            m.rows.push((row, spelt));
        }
        Ok(m)
    }

    /// Applies the flags `m` holds to `a`, in the order given, each through its own row.
    pub fn apply(&self, m: &Matches, a: &mut A) -> Result<(), String> {
        for ((_, value), &(row, flag)) in m.flags.iter().zip(&m.rows) {
            let value = Value {
                flag,
                value: value.as_deref(),
            };
            (self.flags[row].apply)(a, value)?;
        }
        Ok(())
    }

    /// The row of the flag an argument names, and the value written into it (`--dir=x`,
    /// `-o=x`, and with `attached`, `-d32`).
    fn find(&self, arg: &str) -> Option<(usize, &'static str, Option<String>)> {
        let (given, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg, None),
        };
        let row = |name: &str| {
            self.flags.iter().enumerate().find_map(|(r, f)| {
                let n = f.names.iter().find(|n| **n == name)?;
                Some((r, *n))
            })
        };
        if let Some((r, n)) = row(given) {
            return Some((r, n, inline));
        }
        if self.single_dash && !arg.starts_with("--") {
            if let Some((r, n)) = row(&format!("-{given}")) {
                return Some((r, n, inline));
            }
        }
        if !self.attached || arg.starts_with("--") {
            return None;
        }
        // `-d32`: a one-letter flag with its value after the letter.
        let (r, n) = row(arg.get(..2)?)?;
        (self.flags[r].takes == Takes::Value).then(|| (r, n, Some(arg[2..].to_string())))
    }

    /// The `--help` text: the usage, then every flag with its form and description in
    /// aligned columns.
    pub fn help(&self) -> String {
        self.help_with(|_| None)
    }

    /// [`Spec::help`] with a note after some flags' descriptions (their defaults).
    pub fn help_with(&self, note: impl Fn(&Flag<A>) -> Option<String>) -> String {
        let mut out = self.usage.to_string();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("\noptions:\n");
        let mut rows: Vec<(String, String)> = self
            .flags
            .iter()
            .map(|f| {
                let help = match note(f) {
                    Some(n) => format!("{}{n}", f.help),
                    None => f.help.to_string(),
                };
                (Self::left(f), help)
            })
            .collect();
        rows.push(("-h, --help".into(), "print this help and exit".into()));
        out.push_str(&columns(&rows));
        out
    }

    /// A flag's left column: its names, short ones first, and its value's form.
    fn left(f: &Flag<A>) -> String {
        let mut names: Vec<&str> = f.names.to_vec();
        names.sort_by_key(|n| n.starts_with("--"));
        let mut s = names.join(", ");
        match f.takes {
            Takes::Nothing => {}
            Takes::Value if names.iter().all(|n| !n.starts_with("--")) => {
                let _ = write!(s, " {}", f.form);
            }
            Takes::Value => {
                let _ = write!(s, "={}", f.form);
            }
            Takes::MaybeValue => {
                let _ = write!(s, "[={}]", f.form);
            }
        }
        s
    }
}

/// A flag table seen without the type its flags are read into: what the command table
/// (`command::SUBCOMMANDS`), `--help` and the tests read.
pub trait Table {
    /// The subcommand, as errors and the command table name it.
    fn command(&self) -> &'static str;
    /// The `--help` text.
    fn help(&self) -> String;
    /// Each row's names and what it takes, in the table's order.
    fn rows(&self) -> Vec<(&'static [&'static str], Takes)>;
    /// What the rows `given` (each a row's index and its value) do, in order, to the
    /// arguments as they start (their `Default`): the arguments' `Debug` text after each
    /// row's `apply`, or the first error. Two rows that set the same thing show the same
    /// text; `effect(&[])` is the start.
    fn effect(&self, given: &[(usize, Option<&str>)]) -> Result<String, String>;
}

impl<A: Default + std::fmt::Debug> Table for Spec<A> {
    fn command(&self) -> &'static str {
        self.command
    }

    fn help(&self) -> String {
        Spec::help(self)
    }

    fn rows(&self) -> Vec<(&'static [&'static str], Takes)> {
        self.flags.iter().map(|f| (f.names, f.takes)).collect()
    }

    fn effect(&self, given: &[(usize, Option<&str>)]) -> Result<String, String> {
        let mut a = A::default();
        for &(row, value) in given {
            let f = &self.flags[row];
            let flag = f.names[0];
            (f.apply)(&mut a, Value { flag, value })?;
        }
        Ok(format!("{a:?}"))
    }
}

/// One argument as [`Matches::in_order`] hands it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given<'a> {
    /// A flag by its first name, with its value.
    Flag(&'static str, Option<&'a str>),
    /// A positional argument.
    Positional(&'a str),
}

impl Matches {
    fn push_positional(&mut self, arg: &str) {
        self.positional.push(arg.to_string());
        self.positional_after.push(self.flags.len());
    }

    /// The flags and positional arguments as they were given, interleaved (the arguments
    /// after `--` are not among them: see [`Matches::rest`]).
    pub fn in_order(&self) -> Vec<Given<'_>> {
        let mut out = Vec::with_capacity(self.flags.len() + self.positional.len());
        let mut p = 0;
        for (i, (name, value)) in self.flags.iter().enumerate() {
            while p < self.positional.len() && self.positional_after[p] <= i {
                out.push(Given::Positional(&self.positional[p]));
                p += 1;
            }
            out.push(Given::Flag(name, value.as_deref()));
        }
        out.extend(self.positional[p..].iter().map(|a| Given::Positional(a)));
        out
    }
}

/// Rows of (left, description) as two aligned columns, two spaces in, the descriptions
/// starting together (a left side too long for the column gets its own line); a
/// description's `\n` continues under its first line.
pub fn columns<L: AsRef<str>, H: AsRef<str>>(rows: &[(L, H)]) -> String {
    const MAX_LEFT: usize = 28;
    let width = rows
        .iter()
        .map(|(l, _)| l.as_ref().chars().count())
        .filter(|&w| w <= MAX_LEFT)
        .max()
        .unwrap_or(0);
    columns_in(rows, width)
}

/// [`columns`] with the left column `width` wide, so that several lists line up.
pub fn columns_in<L: AsRef<str>, H: AsRef<str>>(rows: &[(L, H)], width: usize) -> String {
    let pad = 2 + width + 2;
    let mut out = String::new();
    for (left, help) in rows {
        let (left, help) = (left.as_ref(), help.as_ref());
        let w = left.chars().count();
        out.push_str("  ");
        out.push_str(left);
        if w > width {
            out.push('\n');
            out.push_str(&" ".repeat(pad));
        } else {
            out.push_str(&" ".repeat(width - w + 2));
        }
        for (k, line) in help.split('\n').enumerate() {
            if k > 0 {
                out.push('\n');
                out.push_str(&" ".repeat(pad));
            }
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The error for a value a flag cannot take: names the flag, the value and the form.
pub fn bad_value(flag: &str, value: &str, expected: &str) -> String {
    format!("bad value '{value}' for {flag}: expected {expected}")
}

/// Reads a flag's value as a number of type `T`, or says what was expected.
pub fn number<T: std::str::FromStr>(flag: &str, value: &str, expected: &str) -> Result<T, String> {
    value
        .trim()
        .parse()
        .map_err(|_| bad_value(flag, value, expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the test table's flags set.
    #[derive(Debug, Default, PartialEq)]
    struct Got {
        dir: Option<String>,
        dry_run: bool,
        mix: Vec<Option<String>>,
    }

    const FLAGS: &[Flag<Got>] = &[
        Flag {
            names: &["--dir", "-o"],
            takes: Takes::Value,
            form: "DIR",
            help: "where to write",
            apply: |a, v| {
                a.dir = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--dry-run"],
            takes: Takes::Nothing,
            form: "",
            help: "run nothing",
            apply: |a, _| {
                a.dry_run = true;
                Ok(())
            },
        },
        Flag {
            names: &["--mix"],
            takes: Takes::MaybeValue,
            form: "PCT",
            help: "mixed tests\nsecond line",
            apply: |a, v| {
                a.mix.push(v.value.map(String::from));
                Ok(())
            },
        },
        Flag {
            names: &["-d"],
            takes: Takes::Value,
            form: "<int>",
            help: "depth",
            apply: |_, v| Err(v.bad("no depth at all")),
        },
    ];

    fn spec(pass_unknown: bool, attached: bool) -> Spec<Got> {
        Spec {
            command: "test",
            usage: "usage: iobench test",
            flags: FLAGS,
            pass_unknown,
            attached,
            single_dash: false,
        }
    }

    /// fio's `getopt_long_only` forms, and the order of flags and positionals kept.
    #[test]
    fn single_dash_long_flags_and_the_order() {
        let one = Spec {
            single_dash: true,
            ..spec(false, false)
        };
        let m = one
            .parse(&["a", "-dir=x", "b", "-dir", "y", "--mix", "c", "-o", "z"])
            .unwrap();
        assert_eq!(
            m.in_order(),
            [
                Given::Positional("a"),
                Given::Flag("--dir", Some("x")),
                Given::Positional("b"),
                Given::Flag("--dir", Some("y")),
                Given::Flag("--mix", None),
                Given::Positional("c"),
                Given::Flag("--dir", Some("z")),
            ]
        );
        // Without `single_dash`, `-dir=x` is no flag of the table.
        let e = spec(false, false).parse(&["-dir=x"]).unwrap_err();
        assert!(e.contains("'-dir=x'"), "{e}");
        let e = one.parse(&["-bogus=1"]).unwrap_err();
        assert!(e.contains("'-bogus=1'"), "{e}");
    }

    /// Each flag is applied by its own row, in the order given; a row's error names the
    /// flag and its value.
    #[test]
    fn each_row_applies_itself() {
        let s = spec(false, false);
        let m = s
            .parse(&["--mix=1", "-o", "x", "--dry-run", "--mix"])
            .unwrap();
        let mut got = Got::default();
        s.apply(&m, &mut got).unwrap();
        assert_eq!(
            got,
            Got {
                dir: Some("x".into()),
                dry_run: true,
                mix: vec![Some("1".into()), None],
            }
        );
        let m = s.parse(&["-d", "3"]).unwrap();
        let e = s.apply(&m, &mut got).unwrap_err();
        assert_eq!(e, "bad value '3' for -d: expected no depth at all");
        let t: &dyn Table = &s;
        let dry = Got {
            dry_run: true,
            ..Got::default()
        };
        assert_eq!(t.effect(&[(1, None)]).unwrap(), format!("{dry:?}"));
        assert_eq!(t.effect(&[]).unwrap(), format!("{:?}", Got::default()));
    }

    #[test]
    fn every_form_reads_the_same() {
        for args in [&["--dir=x"][..], &["--dir", "x"], &["-o", "x"], &["-o=x"]] {
            let m = spec(false, false).parse(args).unwrap();
            assert_eq!(m.flags, vec![("--dir", Some("x".to_string()))], "{args:?}");
        }
        let m = spec(false, true).parse(&["-d32", "-d", "4", "f"]).unwrap();
        assert_eq!(
            m.flags,
            vec![("-d", Some("32".into())), ("-d", Some("4".into()))]
        );
        assert_eq!(m.positional, ["f"]);
        let m = spec(false, false)
            .parse(&["--mix", "--mix=60", "--dry-run", "--", "-a", "--"])
            .unwrap();
        assert_eq!(
            m.flags,
            vec![
                ("--mix", None),
                ("--mix", Some("60".into())),
                ("--dry-run", None)
            ]
        );
        assert_eq!(m.rest, Some(vec!["-a".to_string(), "--".to_string()]));
    }

    #[test]
    fn errors_name_the_flag_and_the_form() {
        let e = spec(false, false).parse(&["--dir"]).unwrap_err();
        assert!(e.contains("'--dir'") && e.contains("--dir DIR"), "{e}");
        let e = spec(false, false).parse(&["--dry-run=1"]).unwrap_err();
        assert!(e.contains("'--dry-run'") && e.contains("'1'"), "{e}");
        let e = spec(false, false).parse(&["--axis=x"]).unwrap_err();
        assert!(
            e.contains("'--axis=x'") && e.contains("iobench test --help"),
            "{e}"
        );
        // Without `attached`, `-d32` is not `-d`; passed on when unknown flags are.
        let m = spec(true, false).parse(&["-d32", "--rw=read"]).unwrap();
        assert_eq!(m.positional, ["-d32", "--rw=read"]);
        let e = bad_value("--repeat", "x", "a whole number");
        assert_eq!(e, "bad value 'x' for --repeat: expected a whole number");
    }

    #[test]
    fn help_lists_every_flag_aligned() {
        let h = spec(false, false).help();
        assert!(h.starts_with("usage: iobench test\n"), "{h}");
        let lines: Vec<&str> = h.lines().collect();
        let at = |needle: &str| {
            let l = lines.iter().find(|l| l.contains(needle)).unwrap();
            l.find(needle).unwrap()
        };
        assert!(h.contains("  -o, --dir=DIR"), "{h}");
        assert!(h.contains("  --mix[=PCT]"), "{h}");
        assert!(h.contains("  -d <int>"), "{h}");
        assert!(h.contains("  -h, --help"), "{h}");
        let col = at("where to write");
        assert_eq!(at("run nothing"), col);
        assert_eq!(at("second line"), col);
        assert_eq!(at("print this help"), col);
    }
}
