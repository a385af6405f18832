//! The command table (`api::command::SUBCOMMANDS`): a subcommand is one entry (its flag
//! table, its line in `iobench --help`, its `main`), and a flag one row of that table,
//! which sets what it sets through its own `apply`. So every row is reachable, sets
//! something of its own (no row falls through to another's field, as the match arms with a
//! catch-all did), and a new entry is found, listed and run with nothing else written.

use iobench::api::command::{help_text_in, Command, Subcommand, SUBCOMMANDS};
use iobench::api::flags::{Flag, Spec, Table, Takes, Value};

/// Values tried for a row that takes one, until one is accepted and changes something.
const VALUES: &[&str] = &[
    "1", "10", "64m", "20%", "2ms", "bs=4k,8k", "json", "iops", "read", "nvme", "client", "fixed",
    "markdown", "x", "0",
];

/// What row `row` does on its own, or after one other row (`--zip` needs an `--axis`):
/// the first value accepted that changes the arguments from their start.
fn effect_of(
    t: &dyn Table,
    row: usize,
    chosen: &[Option<(usize, Option<&'static str>)>],
) -> Option<String> {
    let rows = t.rows();
    let start = t.effect(&[]).expect("the start");
    let values: Vec<Option<&'static str>> = match rows[row].1 {
        Takes::Nothing => vec![None],
        Takes::MaybeValue => std::iter::once(None)
            .chain(VALUES.iter().map(|v| Some(*v)))
            .collect(),
        Takes::Value => VALUES.iter().map(|v| Some(*v)).collect(),
    };
    let before = std::iter::once(None).chain(chosen.iter().flatten().map(|c| Some(*c)));
    for pre in before {
        let base = match pre {
            Some(p) => t.effect(&[p]).expect("a chosen value applies"),
            None => start.clone(),
        };
        for v in &values {
            let given: Vec<(usize, Option<&str>)> = pre.into_iter().chain([(row, *v)]).collect();
            if let Ok(e) = t.effect(&given) {
                if e != base {
                    return Some(format!(
                        "{}{e}",
                        pre.map_or(String::new(), |p| format!("{p:?} "))
                    ));
                }
            }
        }
    }
    None
}

/// The rows accepted and doing nothing, on purpose: `peak -D`, which t/io_uring dropped in
/// fio 3.37 (`-D0` is taken for old scripts) when the dialect is one of those.
fn no_effect_allowed(sub: &str, names: &[&str]) -> bool {
    sub == "peak" && names == ["-D"]
}

/// Switches that are a value of another flag by design (`--json` is
/// `--output-format=json`): the one pair of rows allowed to set the same.
const SHORTHANDS: &[(&str, &str)] = &[
    ("--json", "--output-format"),
    ("--markdown", "--output-format"),
];

fn shorthand(a: &[&str], b: &[&str]) -> bool {
    SHORTHANDS
        .iter()
        .any(|(x, y)| (a.contains(x) && b.contains(y)) || (a.contains(y) && b.contains(x)))
}

#[test]
fn every_row_of_every_subcommand_sets_a_thing_of_its_own() {
    for sub in SUBCOMMANDS {
        let t = sub.flags;
        let rows = t.rows();
        let mut chosen: Vec<Option<(usize, Option<&'static str>)>> = vec![None; rows.len()];
        // A row's own value first, so that a row that needs another (--zip) can follow it.
        for (i, (_, takes)) in rows.iter().enumerate() {
            let values: &[Option<&'static str>] = match takes {
                Takes::Value => &[],
                _ => &[None],
            };
            let start = t.effect(&[]).unwrap();
            chosen[i] = values
                .iter()
                .copied()
                .chain(VALUES.iter().map(|v| Some(*v)))
                .find(|v| t.effect(&[(i, *v)]).is_ok_and(|e| e != start))
                .map(|v| (i, v));
        }
        let mut seen: Vec<(String, &[&str])> = Vec::new();
        for (i, (names, _)) in rows.iter().enumerate() {
            let Some(e) = effect_of(t, i, &chosen) else {
                assert!(
                    no_effect_allowed(sub.name(), names),
                    "iobench {} {names:?}: no value tried is accepted and sets anything",
                    sub.name()
                );
                continue;
            };
            if let Some((_, other)) = seen.iter().find(|(x, o)| *x == e && !shorthand(names, o)) {
                panic!(
                    "iobench {}: {names:?} sets the same as {other:?} ({e})",
                    sub.name()
                );
            }
            seen.push((e, names));
        }
    }
}

#[test]
fn no_spelling_is_in_two_rows_and_help_lists_every_one() {
    for sub in SUBCOMMANDS {
        let help = sub.flags.help();
        let mut all: Vec<&str> = Vec::new();
        for (names, _) in sub.flags.rows() {
            for n in names {
                assert!(
                    !all.contains(n),
                    "iobench {}: {n} is in two rows",
                    sub.name()
                );
                all.push(n);
                assert!(
                    help.lines().any(|l| l.trim_start().starts_with('-')
                        && l.split([',', ' ', '=', '[']).any(|w| w == *n)),
                    "iobench {} --help lacks {n}:\n{help}",
                    sub.name()
                );
            }
        }
        assert!(
            help.starts_with(&format!("usage: iobench {}", sub.name())),
            "{help}"
        );
    }
}

/// A subcommand only the test knows: its arguments, its table and its `main`.
#[derive(Debug, Default)]
struct Echo {
    status: u8,
    loud: bool,
}

const ECHO: Spec<Echo> = Spec {
    command: "echo",
    usage: "usage: iobench echo [--status N] [--loud]",
    flags: &[
        Flag {
            names: &["--status", "-s"],
            takes: Takes::Value,
            form: "N",
            help: "the exit status",
            apply: |a, v: Value<'_>| {
                a.status = v.number("a whole number from 0 to 255")?;
                Ok(())
            },
        },
        Flag {
            names: &["--loud"],
            takes: Takes::Nothing,
            form: "",
            help: "say so",
            apply: |a, _| {
                a.loud = true;
                Ok(())
            },
        },
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

fn echo_main(args: &[String]) -> u8 {
    let mut a = Echo::default();
    match ECHO.parse(args).and_then(|m| ECHO.apply(&m, &mut a)) {
        Ok(()) => a.status + u8::from(a.loud),
        Err(_) => 255,
    }
}

const TABLE: &[Subcommand] = &[Subcommand {
    flags: &ECHO,
    summary: "a subcommand of the test's own",
    main: echo_main,
}];

/// Adding a subcommand is one table entry: found by its name, its slips caught, listed in
/// `--help`, its flags read by their rows, nothing else written.
#[test]
fn a_subcommand_is_one_table_entry() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match Command::parse_in(TABLE, args(&["echo", "-s", "3", "--loud"])) {
        Ok(Command::Sub(s, a)) => {
            assert_eq!(s.name(), "echo");
            assert_eq!((s.main)(&a), 4);
        }
        other => panic!("echo not found: {other:?}"),
    }
    let e = Command::parse_in(TABLE, args(&["ecoh"])).unwrap_err();
    assert!(e.contains("did you mean 'echo'"), "{e}");
    // The real table's subcommands are not in this one: `sweep` is a slip of nothing and
    // reads as a job file's name.
    assert!(!matches!(
        Command::parse_in(TABLE, args(&["sweep", "--axis", "bs=4k"])),
        Ok(Command::Sub(..))
    ));
    let help = help_text_in(TABLE);
    assert!(
        help.contains("\n  echo  ") && help.contains("a subcommand of the test's own"),
        "{help}"
    );
    let h = TABLE[0].flags.help();
    assert!(h.contains("-s, --status=N") && h.contains("--loud"), "{h}");
    assert_eq!(
        TABLE[0].flags.effect(&[(0, Some("7"))]).unwrap(),
        "Echo { status: 7, loud: false }"
    );
}

/// One vocabulary over the subcommands (docs/guide/flags.md): each word, the spellings a
/// row with it also has, and the older spellings kept in its row.
const WORDS: &[(&str, &[&str], &[&str])] = &[
    ("--output", &["-o"], &["--dir", "--results"]),
    ("--output-format", &[], &["--format"]),
    ("--repeat", &["-r"], &["--loops"]),
    ("--name", &["-n"], &[]),
];

/// The subcommands that write something and so take `-o/--output`, and those that print
/// in more than one format and so take `--output-format`.
const WRITERS: &[&str] = &["sweep", "compare", "pts", "report", "slo", "history"];
const FORMATS: &[&str] = &["sweep", "compare", "quick", "slo", "pts", "history"];

trait Of {
    fn of(name: &str) -> &'static Subcommand;
}

impl Of for Subcommand {
    fn of(name: &str) -> &'static Subcommand {
        SUBCOMMANDS
            .iter()
            .find(|s| s.name() == name)
            .expect("a subcommand")
    }
}

fn row_of(sub: &Subcommand, name: &str) -> Option<(usize, &'static [&'static str])> {
    let rows = sub.flags.rows();
    rows.iter()
        .position(|(names, _)| names.contains(&name))
        .map(|i| (i, rows[i].0))
}

#[test]
fn every_subcommand_spells_the_same_thing_the_same_way() {
    for sub in SUBCOMMANDS.iter().filter(|s| s.name() != "peak") {
        let n = sub.name();
        for (word, with, older) in WORDS {
            for (names, _) in sub.flags.rows() {
                if older.iter().any(|o| names.contains(o)) || names.contains(word) {
                    assert!(names.contains(word), "iobench {n} {names:?}: lacks {word}");
                    for w in *with {
                        assert!(names.contains(w), "iobench {n} {names:?}: lacks {w}");
                    }
                }
            }
        }
        assert_eq!(
            row_of(sub, "--output").is_some(),
            WRITERS.contains(&n),
            "iobench {n} --output"
        );
        assert_eq!(
            row_of(sub, "--output-format").is_some(),
            FORMATS.contains(&n),
            "iobench {n} --output-format"
        );
        // `--json` and `--markdown` are values of `--output-format`, set by its row; each
        // subcommand with formats prints JSON, and has a switch for each value it takes.
        for (switch, value) in [("--json", "json"), ("--markdown", "markdown")] {
            let Some((s, _)) = row_of(sub, switch) else {
                if let Some((f, _)) = row_of(sub, "--output-format") {
                    assert!(
                        sub.flags.effect(&[(f, Some(value))]).is_err(),
                        "iobench {n} takes --output-format={value} but has no {switch}"
                    );
                }
                continue;
            };
            let (f, _) = row_of(sub, "--output-format")
                .unwrap_or_else(|| panic!("iobench {n} has {switch} but no --output-format"));
            let by_switch = sub.flags.effect(&[(s, None)]).unwrap();
            let by_format = sub.flags.effect(&[(f, Some(value))]).unwrap();
            assert_eq!(
                by_switch, by_format,
                "iobench {n}: {switch} vs --output-format={value}"
            );
            assert_ne!(
                by_switch,
                sub.flags.effect(&[]).unwrap(),
                "iobench {n} {switch}"
            );
        }
    }
    for n in FORMATS {
        let sub = Subcommand::of(n);
        let (f, _) = row_of(sub, "--output-format").unwrap();
        let json = sub.flags.effect(&[(f, Some("json"))]);
        assert!(json.is_ok(), "iobench {n} --output-format=json: {json:?}");
        assert!(
            sub.flags.effect(&[(f, Some("xml"))]).is_err(),
            "iobench {n}: xml"
        );
        assert!(row_of(sub, "--json").is_some(), "iobench {n} lacks --json");
    }
    // The words the guide lists where it lists them.
    let has = |sub: &str, flag: &str| row_of(Subcommand::of(sub), flag).is_some();
    for (sub, flag) in [
        ("sweep", "--repeat"),
        ("compare", "--repeat"),
        ("quick", "--repeat"),
        ("compare", "--name"),
        ("history", "--name"),
        ("quick", "--json"),
        ("sweep", "--json"),
        ("compare", "--json"),
        ("pts", "--json"),
        ("sweep", "-r"),
        ("quick", "-r"),
        ("slo", "--json"),
        ("history", "--json"),
        ("sweep", "--markdown"),
        ("compare", "--markdown"),
    ] {
        assert!(has(sub, flag), "iobench {sub} lacks {flag}");
    }
}
