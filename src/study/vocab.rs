//! The flags the subcommands share, spelt once: how the result prints on stdout
//! (`--output-format`, with `--json` and `--markdown` for its values), so that the same
//! word means the same thing in `sweep`, `compare`, `quick`, `pts`, `slo` and `history`.
//! A subcommand's table takes these rows from here; `command`'s tests hold every table to
//! the rest of the vocabulary (`-o`/`--output`, `-r`/`--repeat`, `-n`/`--name`).

use crate::flags::{Flag, Takes, Value};

/// How a subcommand prints its result on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Text for a reader: aligned tables, verdicts.
    #[default]
    Normal,
    /// The same tables as GitHub-flavoured markdown.
    Markdown,
    /// The subcommand's result document (what it also writes to a file), alone on stdout;
    /// the text goes to stderr, as a plain run's `--output-format=json` keeps stdout for
    /// the JSON.
    Json,
}

impl Format {
    /// The value as `--output-format` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Normal => "normal",
            Format::Markdown => "markdown",
            Format::Json => "json",
        }
    }
}

/// The arguments of a subcommand that prints in one of several [`Format`]s.
pub trait Formats {
    /// The formats it prints, `Normal` first, in the order its help lists them.
    const ACCEPTS: &'static [Format];
    /// The same, as the help's value form: `normal|markdown|json`.
    const FORM: &'static str;
    /// Where the format asked for is kept.
    fn format_mut(&mut self) -> &mut Format;
}

/// Sets the format a flag's value names, or says which the subcommand takes.
fn set<A: Formats>(a: &mut A, v: Value<'_>) -> Result<(), String> {
    match A::ACCEPTS.iter().find(|f| f.name() == v.text()) {
        Some(f) => {
            *a.format_mut() = *f;
            Ok(())
        }
        None => {
            let names: Vec<&str> = A::ACCEPTS.iter().map(|f| f.name()).collect();
            let expected = match names.split_last() {
                Some((last, [])) => last.to_string(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            Err(v.bad(&expected))
        }
    }
}

fn set_json<A: Formats>(a: &mut A, v: Value<'_>) -> Result<(), String> {
    set(a, v.with("json"))
}

fn set_markdown<A: Formats>(a: &mut A, v: Value<'_>) -> Result<(), String> {
    set(a, v.with("markdown"))
}

/// `--output-format=F`; `help` says what each format prints in this subcommand.
pub const fn output_format<A: Formats>(help: &'static str) -> Flag<A> {
    Flag {
        names: &["--output-format"],
        takes: Takes::Value,
        form: A::FORM,
        help,
        apply: set::<A>,
    }
}

/// `--json`: `--output-format=json`.
pub const fn json<A: Formats>() -> Flag<A> {
    Flag {
        names: &["--json"],
        takes: Takes::Nothing,
        form: "",
        help: "the same as --output-format=json",
        apply: set_json::<A>,
    }
}

/// `--markdown`: `--output-format=markdown`.
pub const fn markdown<A: Formats>() -> Flag<A> {
    Flag {
        names: &["--markdown"],
        takes: Takes::Nothing,
        form: "",
        help: "the same as --output-format=markdown",
        apply: set_markdown::<A>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Two(Format);

    impl Formats for Two {
        const ACCEPTS: &'static [Format] = &[Format::Normal, Format::Json];
        const FORM: &'static str = "normal|json";
        fn format_mut(&mut self) -> &mut Format {
            &mut self.0
        }
    }

    fn given(flag: &'static str, value: Option<&str>) -> Result<Format, String> {
        let mut a = Two::default();
        let row = [output_format::<Two>(""), json(), markdown()]
            .into_iter()
            .find(|r| r.names[0] == flag)
            .unwrap();
        (row.apply)(&mut a, Value { flag, value })?;
        Ok(a.0)
    }

    #[test]
    fn values_and_switches_set_the_same_format() {
        assert_eq!(given("--output-format", Some("json")), Ok(Format::Json));
        assert_eq!(given("--json", None), Ok(Format::Json));
        assert_eq!(given("--output-format", Some("normal")), Ok(Format::Normal));
        let e = given("--output-format", Some("markdown")).unwrap_err();
        assert!(
            e.contains("--output-format")
                && e.contains("'markdown'")
                && e.contains("normal or json"),
            "{e}"
        );
        // A switch for a format the subcommand does not print names the switch.
        let e = given("--markdown", None).unwrap_err();
        assert!(
            e.contains("--markdown") && e.contains("normal or json"),
            "{e}"
        );
    }
}
