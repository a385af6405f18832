//! `--cmdhelp`, `--enghelp` and the option reference (docs/options.md), all rendered from
//! the option table so the three can never disagree with what the parser accepts.
//!
//! The layout follows fio's (right-aligned 20-column labels, the same nesting of child
//! options under their parents); the words are iobench's own.

use std::fmt::Write as _;

use super::table::OPTIONS;
use crate::defs::{Category, Kind, OptDef, Support, TimeUnit};
use crate::engine::registry::specs;

/// What a help request prints, and whether it counts as success (fio's exit status).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelpOutput {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
}

impl HelpOutput {
    /// Writes both streams; returns the success flag for the exit status.
    pub fn print(&self) -> bool {
        use std::io::Write;
        let _ = std::io::stdout().write_all(self.stdout.as_bytes());
        let _ = std::io::stderr().write_all(self.stderr.as_bytes());
        self.success
    }
}

/// `--cmdhelp[=OPT]`: prints it and returns whether to exit with success.
pub fn print_cmdhelp(arg: &str) -> bool {
    cmdhelp(arg).print()
}

/// `--enghelp[=ENGINE[,OPT]]`: prints it and returns whether to exit with success.
pub fn print_enghelp(arg: &str) -> bool {
    enghelp(arg).print()
}

/// The fio release whose overviews `--cmdhelp` and `--enghelp` print: options, aliases and
/// values fio added later are left out of them (`--cmdhelp=NAME` still shows an option).
/// fio 3.33's until the dialect (`--fio-compat`) is passed down to the help.
pub const HELP_RELEASE: crate::defs::FioRelease = crate::defs::FioRelease::OLDEST;

/// The general (non-engine) options of `--cmdhelp`'s overview. iobench's own extensions
/// are left out, so the overview stays fio's; `--cmdhelp=NAME` still shows them.
fn overview_options() -> Vec<&'static OptDef> {
    OPTIONS
        .iter()
        .filter(|o| !o.is_engine_option() && !o.iobench_only && o.since <= HELP_RELEASE)
        .collect()
}

/// The options of one engine, as the engine declares them (in fio's order).
fn engine_options(engine: &str) -> Vec<&'static OptDef> {
    crate::engine::registry::spec(engine)
        .map(|s| {
            s.options
                .iter()
                .filter(|o| o.since <= HELP_RELEASE)
                .collect()
        })
        .unwrap_or_default()
}

/// Renders `--cmdhelp` (`arg` empty or `all`: every option, nested; otherwise one option by
/// name or alias, with the closest name suggested when there is none).
pub fn cmdhelp(arg: &str) -> HelpOutput {
    if arg.is_empty() || arg == "all" {
        return HelpOutput {
            stdout: tree(&overview_options()),
            stderr: String::new(),
            success: true,
        };
    }
    // Engine options are found too, as a convenience fio does not offer.
    // An unknown name fails (fio 3.33 exits 0 after "No such command", so a script cannot
    // tell a typo from an answer).
    let all: Vec<&OptDef> = OPTIONS.iter().collect();
    one_option(&all, arg, false)
}

/// Renders `--enghelp` (`arg` empty: the engine list; `ENGINE`: its options; `ENGINE,OPT`:
/// one of its options in detail).
pub fn enghelp(arg: &str) -> HelpOutput {
    if arg.is_empty() {
        let mut out = String::from("Available IO engines:\n");
        for e in specs() {
            if e.refused.is_none() {
                let _ = writeln!(out, "\t{}", e.name);
            } else {
                let _ = writeln!(out, "\t{} (not supported)", e.name);
            }
        }
        return HelpOutput {
            stdout: out,
            stderr: String::new(),
            success: true,
        };
    }
    let (engine, opt) = match arg.split_once(',') {
        Some((e, o)) => (e, Some(o)),
        None => (arg, None),
    };
    if !specs().any(|e| e.name == engine) {
        let mut err = format!("iobench: IO engine '{engine}' is not known");
        let near = specs()
            .map(|e| (strsim::levenshtein(engine, e.name), e.name))
            .min_by_key(|(d, _)| *d)
            .filter(|(d, _)| *d < 3);
        if let Some((_, n)) = near {
            let _ = write!(err, "; did you mean '{n}'?");
        }
        err.push('\n');
        return HelpOutput {
            stdout: String::new(),
            stderr: err,
            success: false,
        };
    }
    let opts = engine_options(engine);
    if opts.is_empty() {
        return HelpOutput {
            stdout: format!("IO engine {engine} has no options\n"),
            stderr: String::new(),
            success: false,
        };
    }
    match opt {
        None => HelpOutput {
            stdout: tree(&opts),
            stderr: String::new(),
            success: true,
        },
        Some(name) => one_option(&opts, name, false),
    }
}

/// One `name: help` line of the overview, indented two spaces per nesting level.
fn tree_line(out: &mut String, o: &OptDef, level: usize) {
    let name = format!("{}{}", "  ".repeat(level), o.name);
    let _ = writeln!(out, "{name:<24}: {}", o.help);
}

/// The overview: each top-level option followed by its children. Like fio, after listing an
/// option's children it descends only into the last child listed, looking at the options
/// after it, so the nesting shown is exactly fio's.
fn tree(opts: &[&OptDef]) -> String {
    let mut out = String::new();
    let child_after = |from: usize, parent: &str| -> Option<usize> {
        (from + 1..opts.len()).find(|&i| opts[i].parent == Some(parent))
    };
    for (i, o) in opts.iter().enumerate() {
        if o.kind == Kind::Deprecated || o.parent.is_some() {
            continue;
        }
        tree_line(&mut out, o, 0);
        let (mut pos, mut parent, mut level) = (i, i, 0);
        loop {
            level += 1;
            let mut printed = false;
            while let Some(c) = child_after(pos, opts[parent].name) {
                tree_line(&mut out, opts[c], level);
                pos = c;
                printed = true;
            }
            parent = pos;
            if !printed {
                break;
            }
        }
    }
    out
}

/// The detailed view of one option found by name or alias among `opts`; otherwise an error
/// with the closest name's details (when one is close), as fio does.
fn one_option(opts: &[&OptDef], name: &str, unknown_ok: bool) -> HelpOutput {
    let live = || opts.iter().filter(|o| o.kind != Kind::Deprecated);
    let mut out = String::new();
    let mut found = false;
    for o in live().filter(|o| o.answers_to(name)) {
        let _ = writeln!(out, "{:>20}: {}", o.name, o.help);
        details(&mut out, o);
        found = true;
    }
    if found {
        return HelpOutput {
            stdout: out,
            stderr: String::new(),
            success: true,
        };
    }
    let closest = live()
        .map(|o| (strsim::levenshtein(name, o.name), *o))
        .min_by_key(|(d, _)| *d);
    match closest {
        Some((d, o)) if d < 3 => {
            out.push_str(" - showing closest match\n");
            let _ = writeln!(out, "{:>20}: {}", o.name, o.help);
            details(&mut out, o);
        }
        _ => out.push('\n'),
    }
    HelpOutput {
        stdout: out,
        stderr: format!("No such command: {name}"),
        success: unknown_ok,
    }
}

/// The alias, type, default, range and valid-values lines, then a blank line.
fn details(out: &mut String, o: &OptDef) {
    for a in o.aliases {
        let _ = writeln!(out, "{:>20}: {a}", "alias");
    }
    let _ = writeln!(out, "{:>20}: {}", "type", type_text(&o.kind));
    let _ = writeln!(
        out,
        "{:>20}: {}",
        "default",
        o.default.unwrap_or("no default")
    );
    if let Some(r) = range_text(o) {
        let _ = writeln!(out, "{:>20}: {r}", "range");
    }
    if let Kind::Choice(choices) = o.kind {
        let shown = choices
            .iter()
            .filter(|(w, _)| o.added_in(o.name, Some(w)) <= HELP_RELEASE.max(o.since));
        for (i, (word, help)) in shown.enumerate() {
            let label = if i == 0 { "valid values" } else { "" };
            let _ = writeln!(out, "{label:>20}: {word:<10} {help}");
        }
    }
    out.push('\n');
}

/// The bounds line's text, when the option has bounds to show.
fn range_text(o: &OptDef) -> Option<String> {
    let (min, max) = o.range?;
    Some(if o.kind == Kind::FloatList {
        format!("min={:.6}, max={:.6}", min as f64, max as f64)
    } else if max == i64::MAX {
        format!("min={min}")
    } else {
        format!("min={min}, max={max}")
    })
}

/// How a value of this kind is written, with an example.
pub fn type_text(kind: &Kind) -> String {
    match kind {
        Kind::Str => "text (opt=name)".into(),
        Kind::Choice(_) => "one word from the list below (opt=word)".into(),
        Kind::Int { .. } => "whole number (opt=100)".into(),
        Kind::IntList { .. } => "whole number per direction (opt=100[,100[,100]])".into(),
        Kind::Size => "size with optional k/m/g unit (opt=4k)".into(),
        Kind::SizeOrPercent => "size, or percentage of the file (opt=1g or opt=50%)".into(),
        Kind::SizeList => "size per direction, read,write,trim (opt=4k[,8k[,16k]])".into(),
        Kind::RangeList => "size range per direction (opt=1k-4k[,4k-8k[,1k-8k]])".into(),
        Kind::Time(unit) => format!(
            "time with optional unit, bare numbers in {} (opt=10s)",
            unit_name(*unit)
        ),
        Kind::Bool => "flag: bare, or 0/1 (opt=1)".into(),
        Kind::Float => "decimal number (opt=1.5)".into(),
        Kind::FloatList => "decimal numbers joined by ':' (opt=5.9:7.8)".into(),
        Kind::Special => "text in the option's own syntax (see docs/options.md)".into(),
        Kind::Deprecated => "obsolete: accepted and ignored".into(),
    }
}

fn unit_name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Usec => "microseconds",
        TimeUnit::Msec => "milliseconds",
        TimeUnit::Sec => "seconds",
    }
}

/// The docs' "supported" cell: yes, not yet, or which values are.
fn support_text(o: &OptDef) -> String {
    match (o.support, o.only) {
        (Support::NotYet, _) => match o.why_not {
            Some(why) => format!("not yet: {why}"),
            None => "not yet".into(),
        },
        (Support::Yes, _) if o.name == "ioengine" => "partly: the engines marked yes".into(),
        (Support::Yes, Some(words)) => {
            let w: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
            format!("partly: {}", w.join(", "))
        }
        (Support::Yes, None) if o.iobench_only => "yes (iobench only, not in fio)".into(),
        (Support::Yes, None) => "yes".into(),
    }
}

/// The docs' "what it does" cell: the help, and for an option, alias or value fio added after
/// 3.33, the release that added it.
fn since_note(o: &OptDef) -> String {
    let mut s = o.help.to_string();
    if o.since > crate::defs::FioRelease::OLDEST {
        s.push_str(&format!(" (fio {})", o.since));
    }
    for (what, r) in o.later.iter().filter(|(_, r)| *r > o.since) {
        s.push_str(&format!(" (`{what}`: fio {r})"));
    }
    s
}

/// Escapes text for a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The option reference as Markdown: one section per category, one row per option.
/// What the enumeration tests (`tests/fidelity/enumerate_fio.rs`, `tests/fidelity/enumerate_examples.rs`)
/// last counted of fio 3.33's surface; they fail when a count drops below its floor.
const SURFACE_TALLY: &str = "## fio's surface, enumerated\n\n\
The enumeration tests walk fio 3.33's surface on this machine and give every item to both \
tools; \"not supported yet\" counts as a miss. Last tally:\n\n\
| what | supported of fio's |\n|---|---|\n\
| flags of `fio --help` (same exit status as fio) | 33 of 34 (`--remote-config`: client/server) |\n\
| options of `fio --cmdhelp=all` (a sample value parses as in fio) | 213 of 217 |\n\
| values listed by `fio --cmdhelp=OPT` | 117 of 134 |\n\
| values fio refuses, refused too | 83 of 84 |\n\
| engines of `fio --enghelp` (each given the options it needs; the others refused with the reason) | 22 of 33 |\n\
| engine options of `fio --enghelp=ENGINE` (listed, and values parse as in fio; `tests/fidelity/enumerate_engine_options.rs`) | 56 of 98 (the 41 of engines refused for want of hardware are misses) |\n\
| fio's example jobs that fio runs here, run by iobench | 29 of 30 (equal issued counts in all 14 deterministic ones) |\n\n";

pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("# iobench options\n\n");
    out.push_str(
        "Generated from `src/options/table.rs` by `iobench::options::help::markdown()`; do not \
         edit by hand. After changing the table, run \
         `IOBENCH_BLESS=1 cargo test --test cli option_table::` to regenerate this file.\n\n",
    );
    let total = OPTIONS.len();
    let yes = OPTIONS.iter().filter(|o| o.support == Support::Yes).count();
    let _ = writeln!(
        out,
        "{total} options, {yes} of them supported. Using an option marked *not yet* is an \
         error (`option 'X' is not supported yet`), never silently ignored.\n"
    );
    out.push_str(SURFACE_TALLY);
    out.push_str("## Engines\n\n| engine | what it does | supported |\n|---|---|---|\n");
    for e in specs() {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            e.name,
            cell(e.help),
            match e.refused {
                None => "yes".to_string(),
                Some(why) => format!("no: {}", cell(why)),
            }
        );
    }
    out.push('\n');
    for cat in Category::ALL {
        let opts: Vec<&OptDef> = OPTIONS.iter().filter(|o| o.category == cat).collect();
        if opts.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {}\n", cat.title());
        out.push_str(
            "| option | aliases | value | default | engines | supported | what it does |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|\n");
        for o in opts {
            let aliases: Vec<String> = o.aliases.iter().map(|a| format!("`{a}`")).collect();
            let mut value = type_text(&o.kind);
            if let Kind::Choice(choices) = o.kind {
                let words: Vec<String> = choices.iter().map(|(w, _)| format!("`{w}`")).collect();
                let _ = write!(value, ": {}", words.join(", "));
            }
            if let Some(r) = range_text(o) {
                let _ = write!(value, "; {r}");
            }
            let engines: Vec<String> = o.engines.iter().map(|e| format!("`{e}`")).collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} | {} |",
                o.name,
                aliases.join(", "),
                cell(&value),
                o.default
                    .map(|d| format!("`{}`", cell(d)))
                    .unwrap_or_default(),
                engines.join(", "),
                support_text(o),
                cell(&since_note(o))
            );
        }
        out.push('\n');
    }
    out
}
