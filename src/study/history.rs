//! `iobench history`: the results history that `--save` fills (`crate::history`), read
//! back. `list` and `show` find runs, `tag` and `baseline` name them (a baseline is a set
//! of runs, so that a gate knows its noise), `compare` judges two sides of runs (or a
//! baseline and the newest runs like it, picked by `crate::history::sides`) with
//! `iobench compare`'s statistics and gate, `trend` follows a metric of one job on one target over time, `export` and
//! `import` move runs out (JSON Lines, CSV) and in (fio's JSON files), `gc` forgets old
//! ones. Runs are matched by what makes them comparable: the options hash, the target's
//! device model and filesystem, and the kernel, all read from `iobench_env`.

use crate::flags::{self, Flag, Spec, Takes};
use crate::history::sides;
use crate::history::store::{self, Filter, Identity, Record, Store};
use crate::present::results::{self, Metric, ResultFile};
use crate::study::table::Table;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The version of the objects `export` and `trend --format json` write (see
/// docs/schema/history-export.schema.json).
pub const EXPORT_VERSION: u32 = 1;

/// The baseline `baseline` and `compare --baseline` use without `--name`.
const DEFAULT_BASELINE: &str = "default";

pub const SPEC: Spec<Args> = Spec {
    command: "history",
    usage: "\
usage: iobench history list [--job-hash H] [--target T] [--host H] [--tag NAME]
                            [--since DATE] [--until DATE] [--study S]
       iobench history show ID [--format json]
       iobench history tag ID NAME
       iobench history baseline set RUNS | --study S | --last N [list's filters]
                            [--name NAME]
       iobench history baseline show [--name NAME] | baseline unset [--name NAME]
       iobench history compare RUNS RUNS
       iobench history compare --baseline [RUNS | --study S | --last N] [--name NAME]
                            [--metric M] [--fail-if-slower P%] [--markdown] [--rerun]
       iobench history trend --job-hash H [--target T] [--metric M] [--format table|json]
       iobench history export [--format jsonl|csv] [--output FILE] [list's filters]
       iobench history import FILE.json...
       iobench history gc [--keep-last N] [--older-than AGE|DATE]

The runs that `iobench ... --save` stored (SQLite, in $XDG_DATA_HOME/iobench/history.sqlite
unless --history says where). Runs compare when their options hash, target device model,
filesystem and kernel agree; compare says which of these differ. RUNS: run IDs
(12), ranges (3-7) or lists (3,5,9); a side of several runs is judged by its noise, and
--fail-if-slower needs 2 or more a side. DATE: 2026-11-27, 2026-11-27T18:00:00 (UTC) or
seconds since the epoch.",
    flags: &[
        Flag {
            names: &["--history"],
            takes: Takes::Value,
            form: "PATH",
            help: "the history's SQLite file",
            apply: |a, v| {
                a.history = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--job-hash"],
            takes: Takes::Value,
            form: "H",
            help: "list, trend, export: runs whose options hash starts with H",
            apply: |a, v| {
                a.filter.job_hash = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--target"],
            takes: Takes::Value,
            form: "T",
            help: "list, trend, export: runs on this target path or device model",
            apply: |a, v| {
                a.filter.target = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--host"],
            takes: Takes::Value,
            form: "HOST",
            help: "list, export: runs made on this host",
            apply: |a, v| {
                a.filter.host = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--tag"],
            takes: Takes::Value,
            form: "NAME",
            help: "list, export: runs tagged NAME",
            apply: |a, v| {
                a.filter.tag = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--since"],
            takes: Takes::Value,
            form: "DATE",
            help: "list, trend, export: runs started at DATE or later",
            apply: |a, v| {
                a.filter.since = Some(time_flag(v.flag, v.text())?);
                Ok(())
            },
        },
        Flag {
            names: &["--until"],
            takes: Takes::Value,
            form: "DATE",
            help: "list, trend, export: runs started at DATE or earlier",
            apply: |a, v| {
                a.filter.until = Some(time_flag(v.flag, v.text())?);
                Ok(())
            },
        },
        Flag {
            names: &["--study"],
            takes: Takes::Value,
            form: "S",
            help: "list, export: the runs of study S; baseline set: they are the\n\
                   baseline; compare --baseline: its runs like the baseline",
            apply: |a, v| {
                let n = v.number("a study number from history list (kind #S)")?;
                a.filter.study = Some(n);
                a.study = Some(n);
                Ok(())
            },
        },
        Flag {
            names: &["--last"],
            takes: Takes::Value,
            form: "N",
            help: "baseline set: the newest N runs list's filters take;\n\
                   compare --baseline: the newest N runs like the baseline saved\n\
                   since it was set (default: as many as the baseline holds)",
            apply: |a, v| {
                let expected = "a whole number of runs, 1 or more";
                a.last = Some(
                    v.number(expected)
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or_else(|| v.bad(expected))?,
                );
                Ok(())
            },
        },
        Flag {
            names: &["--name", "-n"],
            takes: Takes::Value,
            form: "NAME",
            help: "baseline, compare --baseline, trend (marked in its JSON): the\n\
                   baseline's name (default: default)",
            apply: |a, v| {
                a.name = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--baseline"],
            takes: Takes::Nothing,
            form: "",
            help: "compare: the baseline against RUNS, or against the newest runs like it",
            apply: |a, _| {
                a.baseline = true;
                Ok(())
            },
        },
        Flag {
            names: &["--metric", "-m"],
            takes: Takes::Value,
            form: "M[,M...]",
            help: "compare, trend: iops, bw, lat, p50, p99, p99.9 (trend: the first)",
            apply: |a, v| {
                let first = v.text().split(',').next().unwrap_or("");
                a.metric = Some(Metric::parse(first.trim()).ok_or_else(|| {
                    flags::bad_value(v.flag, first, "iops, bw, lat, p50, p99 or p99.9")
                })?);
                pass_on(a, v)
            },
        },
        Flag {
            names: &["--fail-if-slower"],
            takes: Takes::Value,
            form: "P%",
            help: "compare: exit 2 when the second side is slower by more than P%\n\
                   beyond its noise (2 or more runs a side, of the same job)",
            apply: pass_on,
        },
        Flag {
            names: &["--markdown"],
            takes: Takes::Nothing,
            form: "",
            help: "compare: the same as --format=markdown",
            apply: |a, v| {
                a.format = Some(v.with("markdown").string());
                Ok(())
            },
        },
        Flag {
            names: &["--margin"],
            takes: Takes::Value,
            form: "P%",
            help: "compare: the equivalence margin (default 5%), as compare's",
            apply: pass_on,
        },
        Flag {
            names: &["--rerun"],
            takes: Takes::Nothing,
            form: "",
            help: "compare: run both sides' jobs again now, in turn (A B A B), as\n\
                   many times as the larger side has runs, and judge those runs\n\
                   (the jobs are rebuilt from the history; their targets must be\n\
                   on this host)",
            apply: |a, _| {
                a.rerun = true;
                Ok(())
            },
        },
        Flag {
            names: &["--export-json"],
            takes: Takes::Value,
            form: "FILE",
            help: "compare: also write the comparison there as JSON",
            apply: pass_on,
        },
        Flag {
            names: &["--export-csv"],
            takes: Takes::Value,
            form: "FILE",
            help: "compare: also write the comparison there as CSV",
            apply: pass_on,
        },
        Flag {
            names: &["--format", "--output-format"],
            takes: Takes::Value,
            form: "F",
            help: "show: json (the stored document); trend: table or json;\n\
                   export: jsonl (default) or csv; compare: normal, markdown or json\n\
                   (compare's --output-format)",
            apply: |a, v| {
                // Each action takes some of these (checked when it runs); anything else
                // is no action's.
                const ANY: [&str; 6] = ["normal", "markdown", "json", "table", "jsonl", "csv"];
                if !ANY.contains(&v.text()) {
                    return Err(v.bad("normal, markdown, json, table, jsonl or csv"));
                }
                a.format = Some(v.string());
                Ok(())
            },
        },
        Flag {
            names: &["--json"],
            takes: Takes::Nothing,
            form: "",
            help: "show, trend, compare: the same as --format=json",
            apply: |a, v| {
                a.format = Some(v.with("json").string());
                Ok(())
            },
        },
        Flag {
            names: &["--output", "-o"],
            takes: Takes::Value,
            form: "FILE",
            help: "export: write there instead of stdout",
            apply: |a, v| {
                a.output = Some(v.path());
                Ok(())
            },
        },
        Flag {
            names: &["--keep-last"],
            takes: Takes::Value,
            form: "N",
            help: "gc: keep the N newest runs of each job hash and target",
            apply: |a, v| {
                a.keep_last = Some(v.number("a whole number")?);
                Ok(())
            },
        },
        Flag {
            names: &["--older-than"],
            takes: Takes::Value,
            form: "AGE|DATE",
            help: "gc: forget runs older than AGE (30d, 12h) or DATE; baselines stay",
            apply: |a, v| {
                // An age (30d, 12h) back from now, or a date.
                let age = crate::defs::value::parse_time_us(v.text(), crate::defs::TimeUnit::Sec);
                a.older_than = Some(match age {
                    Ok(us) if !v.text().contains('-') => {
                        crate::history::now() - (us / 1_000_000) as i64
                    }
                    _ => store::parse_time(v.text())
                        .map_err(|_| v.bad("an age such as 30d or 12h, or a date"))?,
                });
                Ok(())
            },
        },
    ],
    pass_unknown: false,
    attached: false,
    single_dash: false,
};

/// The parsed arguments.
#[derive(Debug, Default, Clone)]
pub struct Args {
    action: String,
    words: Vec<String>,
    history: Option<String>,
    filter: Filter,
    name: Option<String>,
    baseline: bool,
    /// `compare --rerun`: run the sides' jobs again, alternated.
    rerun: bool,
    /// The flags handed to `compare` as they were given.
    compare_flags: Vec<String>,
    metric: Option<Metric>,
    format: Option<String>,
    output: Option<PathBuf>,
    keep_last: Option<usize>,
    older_than: Option<i64>,
    /// `--last N`, `--study S`: a side picked by count or by study.
    last: Option<usize>,
    study: Option<i64>,
    /// Every flag given, to refuse those the action does not take.
    given: Vec<&'static str>,
}

/// Runs `iobench history ARGS`; returns the exit status.
pub fn main(args: &[String]) -> u8 {
    match history(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iobench history: {e}");
            1
        }
    }
}

fn time_flag(flag: &str, v: &str) -> Result<i64, String> {
    store::parse_time(v).map_err(|_| {
        flags::bad_value(
            flag,
            v,
            "a date (2026-11-27, 2026-11-27T18:00:00) or seconds since the epoch",
        )
    })
}

/// A flag `compare` reads: handed on as given.
fn pass_on(a: &mut Args, v: flags::Value<'_>) -> Result<(), String> {
    a.compare_flags.push(format!("{}={}", v.flag, v.text()));
    Ok(())
}

fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let m = SPEC.parse(args)?;
    if m.help || m.positional.is_empty() {
        return if m.help {
            Ok(None)
        } else {
            Err("what to do? list, show, tag, baseline, compare, trend, export, import or gc (see iobench history --help)".into())
        };
    }
    let mut a = Args {
        action: m.positional[0].clone(),
        words: m.positional[1..].to_vec(),
        ..Default::default()
    };
    if let Some(rest) = &m.rest {
        a.words.extend(rest.iter().cloned());
    }
    SPEC.apply(&m, &mut a)?;
    a.given = m.flags.iter().map(|(flag, _)| *flag).collect();
    // list's filters, which export and baseline set --last take too.
    const FILTERS: [&str; 7] = [
        "--job-hash",
        "--target",
        "--host",
        "--tag",
        "--since",
        "--until",
        "--study",
    ];
    let with_filters = |more: &[&'static str]| -> Vec<&'static str> {
        FILTERS.iter().chain(more).copied().collect()
    };
    let takes: Vec<&str> = match a.action.as_str() {
        "list" => with_filters(&[]),
        "show" => vec!["--format", "--json"],
        "tag" | "import" => vec![],
        "baseline" => with_filters(&["--name", "--last"]),
        "compare" => vec![
            "--format",
            "--json",
            "--baseline",
            "--name",
            "--study",
            "--last",
            "--metric",
            "--fail-if-slower",
            "--markdown",
            "--margin",
            "--rerun",
            "--export-json",
            "--export-csv",
        ],
        "trend" => vec![
            "--job-hash",
            "--target",
            "--since",
            "--until",
            "--metric",
            "--format",
            "--json",
            "--name",
        ],
        "export" => with_filters(&["--format", "--output"]),
        "gc" => vec!["--keep-last", "--older-than"],
        other => {
            return Err(format!(
                "unknown action '{other}': expected list, show, tag, baseline, compare, trend, export, import or gc"
            ))
        }
    };
    if let Some(f) = a
        .given
        .iter()
        .find(|f| **f != "--history" && !takes.contains(f))
    {
        return Err(format!("history {} does not take {f}", a.action));
    }
    Ok(Some(a))
}

fn history(args: &[String]) -> Result<u8, String> {
    let Some(a) = parse_args(args)? else {
        print!("{}", SPEC.help());
        return Ok(0);
    };
    let path = crate::history::destination(a.history.as_deref())?;
    // Reading a history that is not there is an error, not a new empty file.
    if a.action != "import" && !path.exists() {
        return Err(format!(
            "{}: no history yet (runs are saved with --save)",
            path.display()
        ));
    }
    let mut db = Store::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    match a.action.as_str() {
        "list" => list(&db, &a),
        "show" => show(&db, &a),
        "tag" => {
            let [id, name] = words::<2>(&a, "tag ID NAME")?;
            let id = run_id(&id)?;
            db.tag(id, &name)?;
            println!("run {id} tagged {name}");
            Ok(0)
        }
        "baseline" => baseline(&mut db, &a),
        "compare" => compare(&db, &a),
        "trend" => trend(&db, &a),
        "export" => {
            if let Some(out) = &a.output {
                if same_file(out, &path) {
                    return Err(format!(
                        "--output {}: that is the history itself (export writes a new file \
                         beside it)",
                        out.display()
                    ));
                }
            }
            export(&db, &a)
        }
        "import" => import(&mut db, &a),
        _ => gc(&mut db, &a),
    }
}

/// Exactly `N` words after the action, named by `form` in the error.
fn words<const N: usize>(a: &Args, form: &str) -> Result<[String; N], String> {
    a.words
        .clone()
        .try_into()
        .map_err(|_| format!("expected: history {form}"))
}

fn run_id(word: &str) -> Result<i64, String> {
    word.parse()
        .ok()
        .filter(|&n: &i64| n > 0)
        .ok_or_else(|| format!("'{word}' is not a run ID: expected a number from history list"))
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

fn short_hash(v: &Option<String>) -> String {
    v.as_deref()
        .map(|h| h.chars().take(12).collect())
        .unwrap_or_else(|| "-".into())
}

fn list(db: &Store, a: &Args) -> Result<u8, String> {
    let rows = db.list(&a.filter)?;
    let t = Table {
        header: [
            "id", "started", "kind", "point", "job hash", "host", "kernel", "target", "device",
            "fs", "tags",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.id.to_string(),
                    store::time_text(r.started),
                    match r.study_id {
                        Some(s) => format!("{} #{s}", r.kind),
                        None => r.kind.clone(),
                    },
                    opt(&r.point),
                    short_hash(&r.ident.job_hash),
                    opt(&r.ident.host),
                    opt(&r.ident.kernel),
                    opt(&r.ident.target),
                    opt(&r.ident.device_model),
                    opt(&r.ident.filesystem),
                    r.tags.join(","),
                ]
            })
            .collect(),
    };
    print!("{}", crate::osstr::printable_lines(&t.text()));
    Ok(0)
}

/// The totals of a stored document, per direction that did I/O.
fn totals(doc: &Value) -> Result<Vec<results::DirResult>, String> {
    Ok(results::totals(&results::from_value(doc.clone())?))
}

fn show(db: &Store, a: &Args) -> Result<u8, String> {
    let [id] = words::<1>(a, "show ID")?;
    let (r, doc) = db.get(run_id(&id)?)?;
    match a.format.as_deref() {
        Some("json") => {
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            return Ok(0);
        }
        None | Some("table") => {}
        Some(f) => return Err(flags::bad_value("--format", f, "json or table")),
    }
    println!(
        "run {} ({}), started {}",
        r.id,
        r.kind,
        store::time_text(r.started)
    );
    if let Some(s) = r.study_id {
        let head = db.study(s)?;
        println!(
            "study #{s}: {}, point {}",
            crate::osstr::printable(&head.map(|h| h.command_line).unwrap_or_default()),
            crate::osstr::printable(&opt(&r.point))
        );
    }
    println!("exit status {}", r.exit_code);
    println!("options hash {}", opt(&r.ident.job_hash));
    let line = format!(
        "host {}, kernel {}, target {} ({}, {})",
        opt(&r.ident.host),
        opt(&r.ident.kernel),
        opt(&r.ident.target),
        opt(&r.ident.device_model),
        opt(&r.ident.filesystem)
    );
    println!("{}", crate::osstr::printable(&line));
    if !r.tags.is_empty() {
        println!("tags {}", crate::osstr::printable(&r.tags.join(", ")));
    }
    let t = Table {
        header: ["dir", "IOPS", "bw (MiB/s)", "lat mean (us)", "p99 (us)"]
            .map(String::from)
            .to_vec(),
        rows: totals(&doc)?
            .iter()
            .map(|d| {
                vec![
                    d.dir.clone(),
                    format!("{:.1}", d.iops),
                    format!("{:.2}", d.bw_bytes / 1048576.0),
                    format!("{:.2}", d.lat_mean_ns / 1000.0),
                    format!("{:.2}", d.p99_ns / 1000.0),
                ]
            })
            .collect(),
    };
    print!("{}", crate::osstr::printable_lines(&t.text()));
    Ok(0)
}

/// True when any of list's filters was given (they pick runs for `--last`).
fn filtered(a: &Args) -> bool {
    let f = &a.filter;
    f.job_hash.is_some()
        || f.target.is_some()
        || f.host.is_some()
        || f.tag.is_some()
        || f.since.is_some()
        || f.until.is_some()
}

fn baseline(db: &mut Store, a: &Args) -> Result<u8, String> {
    let name = a.name.as_deref().unwrap_or(DEFAULT_BASELINE);
    let form = "expected: history baseline set RUNS | --study S | --last N [--name NAME], \
                baseline show or baseline unset";
    match a.words.first().map(String::as_str) {
        Some("set") => {
            let ids = &a.words[1..];
            let (runs, source) = match (ids.is_empty(), a.study, a.last) {
                (false, None, None) if !filtered(a) => {
                    let r = sides::by_ids(db, &sides::parse_ids(ids)?)?;
                    let d = r.describe();
                    (r, d)
                }
                (true, Some(st), None) if !filtered(a) => {
                    (sides::study(db, st)?, format!("study {st}"))
                }
                (true, _, Some(n)) => {
                    let r = sides::last(db, &a.filter, n)?;
                    (r, format!("the last {n} runs"))
                }
                _ => {
                    return Err(format!(
                        "baseline set takes its runs one way: run IDs, --study S, or --last N \
                         (list's filters go with --last); {form}"
                    ))
                }
            };
            sides::alike(&runs, &format!("baseline '{name}'"))?;
            let ids = runs.ids();
            db.set_baseline(name, &ids, &source, crate::history::now())?;
            println!(
                "baseline {name}: {} (options hash {}{})",
                runs.describe(),
                runs.ident().text("options hash"),
                if ids.len() < 2 {
                    "; --fail-if-slower needs 2 or more runs a side"
                } else {
                    ""
                }
            );
        }
        Some("show")
            if a.words.len() == 1 && !filtered(a) && a.last.is_none() && a.study.is_none() =>
        {
            let all = db.baselines()?;
            if all.is_empty() {
                println!("no baseline (set one: iobench history baseline set ID [ID...])");
            }
            for b in all
                .iter()
                .filter(|b| a.name.is_none() || Some(b.name.as_str()) == a.name.as_deref())
            {
                println!(
                    "{}: {} {} (set {}, from {})",
                    crate::osstr::printable(&b.name),
                    if b.runs.len() == 1 { "run" } else { "runs" },
                    sides::ranges(&b.runs),
                    store::time_text(b.set_at),
                    crate::osstr::printable(&b.source)
                );
            }
        }
        Some("unset")
            if a.words.len() == 1 && !filtered(a) && a.last.is_none() && a.study.is_none() =>
        {
            if !db.remove_baseline(name)? {
                return Err(format!("no baseline named '{name}'"));
            }
            println!("baseline {name} unset (its runs stay in the history)");
        }
        _ => return Err(form.into()),
    }
    Ok(0)
}

/// Says in which of the matching fields the two sides differ (through `say`: stdout, or
/// stderr when stdout is the JSON's).
fn note_differences(x: (&str, &Identity), y: (&str, &Identity), say: &dyn Fn(&str)) {
    let diff = x.1.differences_text(y.1);
    if diff.is_empty() {
        say(&format!(
            "{} and {}: same options hash, device model, filesystem and kernel\n\n",
            x.0, y.0
        ));
    } else {
        let line = format!("NOTE: {} and {} differ in {}", x.0, y.0, diff.join(", "));
        say(&format!("{}\n\n", crate::osstr::printable(&line)));
    }
}

/// What a reader must know when two sides' runs were not alternated (A A A, then B B B):
/// the host's drift between them shows as a difference. None when their start times
/// interleave. Times are seconds since the epoch.
fn alternation_note(first: &[i64], second: &[i64]) -> Option<String> {
    let span = |v: &[i64]| Some((*v.iter().min()?, *v.iter().max()?));
    let ((f0, f1), (s0, s1)) = (span(first)?, span(second)?);
    let (gap, order) = if f1 <= s0 {
        (s0 - f1, "the first side's runs all ran before the second's")
    } else if s1 <= f0 {
        (f0 - s1, "the second side's runs all ran before the first's")
    } else {
        return None;
    };
    let whole = f1.max(s1) - f0.min(s0);
    Some(format!(
        "the runs were not alternated: {order}, {} apart ({} from first to last run); \
         a drift of the host in that time shows as a difference, so a verdict here is \
         weaker than one from alternated runs (iobench compare -- JOB -- JOB runs the \
         sides in turn)",
        crate::study::progress::duration_text(gap as f64),
        crate::study::progress::duration_text(whole as f64)
    ))
}

fn compare(db: &Store, a: &Args) -> Result<u8, String> {
    // `--output-format`/`--json` are compare's: stdout is then the comparison's alone.
    let mut a = a.clone();
    if let Some(f) = a.format.take() {
        a.compare_flags.push(format!("--output-format={f}"));
    }
    let a = &a;
    let to_stderr = a.compare_flags.iter().any(|f| f == "--output-format=json");
    let say = |text: &str| crate::study::table::emit(to_stderr, text);
    let (first, second, first_label) = if a.baseline {
        let name = a.name.as_deref().unwrap_or(DEFAULT_BASELINE);
        let b = db.baseline(name)?;
        let base = sides::by_ids(db, &b.runs)?;
        let other =
            match (a.words.is_empty(), a.study, a.last) {
                (false, None, None) => sides::by_ids(db, &sides::parse_ids(&a.words)?)?,
                // By default as many as the baseline holds; a study's, all of them.
                (true, st, n) => {
                    let all = if st.is_some() {
                        usize::MAX
                    } else {
                        base.rows.len()
                    };
                    sides::like_baseline(db, &base, n.unwrap_or(all), st)?
                }
                _ => return Err(
                    "compare --baseline takes the other side one way: RUNS, --study S or --last N"
                        .into(),
                ),
            };
        let label = format!("baseline {name} ({})", base.describe());
        (base, other, label)
    } else {
        if a.study.is_some() || a.last.is_some() {
            return Err(
                "--study and --last pick the side set against a baseline: add --baseline".into(),
            );
        }
        let [x, y] = words::<2>(a, "compare RUNS RUNS (or compare --baseline [RUNS])")?;
        let x = sides::by_ids(db, &sides::parse_ids(&[x])?)?;
        let label = x.describe();
        (x, sides::by_ids(db, &sides::parse_ids(&[y])?)?, label)
    };
    let second_label = second.describe();
    if let Some(r) = second
        .rows
        .iter()
        .find(|r| first.rows.iter().any(|x| x.id == r.id))
    {
        return Err(format!(
            "run {} is on both sides ({first_label}; {second_label})",
            r.id
        ));
    }
    sides::alike(&first, &first_label)?;
    sides::alike(&second, &second_label)?;
    let (fi, si) = (first.ident(), second.ident());
    note_differences((&first_label, &fi), (&second_label, &si), &say);
    let when = |r: &sides::Runs| r.rows.iter().map(|r| r.started).collect::<Vec<_>>();
    let not_alternated = alternation_note(&when(&first), &when(&second));
    if a.rerun {
        return rerun(
            db,
            a,
            [(&first, first_label), (&second, second_label)],
            &say,
        );
    }
    if let Some(note) = not_alternated {
        say(&format!(
            "NOTE: {note}\n(history compare --rerun runs both jobs again in turn)\n\n"
        ));
    }
    if a.compare_flags
        .iter()
        .any(|f| f.starts_with("--fail-if-slower"))
        && fi.job_hash != si.job_hash
    {
        return Err(format!(
            "cannot judge --fail-if-slower: {first_label} and {second_label} ran different jobs \
             (options hash {} vs {}); the gate judges one job on a changed system (kernel, \
             device, settings), so both sides must run the same job (compare them without \
             the gate to see the difference)",
            fi.text("options hash"),
            si.text("options hash")
        ));
    }
    let side = |runs: &sides::Runs, label: String| -> Result<(String, Vec<ResultFile>), String> {
        let files = runs
            .rows
            .iter()
            .map(|r| {
                let (_, doc) = db.get(r.id)?;
                results::from_value(doc).map_err(|e| format!("run {}: {e}", r.id))
            })
            .collect::<Result<_, _>>()?;
        Ok((label, files))
    };
    let sides = vec![side(&first, first_label)?, side(&second, second_label)?];
    crate::study::compare::judge_results(sides, &a.compare_flags)
}

/// The arguments of a plain run of a stored run's job (`--name=J --opt=value ...` per
/// job, from its `iobench_env`), checked to be that job: the options hash of the jobs
/// they make is the stored one. Err: why the job cannot be run again here.
fn job_again(db: &Store, runs: &sides::Runs, label: &str) -> Result<Vec<String>, String> {
    let row = runs.rows.first().ok_or(format!("{label}: no run"))?;
    let (_, doc) = db.get(row.id)?;
    let env = &doc["iobench_env"];
    let jobs = env["jobs"]
        .as_array()
        .filter(|j| !j.is_empty())
        .ok_or_else(|| format!("{label}: run {} keeps no job (an imported result?)", row.id))?;
    let mut args = Vec::new();
    for j in jobs {
        args.push(format!("--name={}", j["name"].as_str().unwrap_or("")));
        for (k, v) in j["options"].as_object().into_iter().flatten() {
            let v = v.as_str().unwrap_or("");
            if v == crate::defs::optdef::REDACTED {
                return Err(format!(
                    "{label}: run {}'s option '{k}' is kept redacted (a secret), so its job \
                     cannot be run again from the history",
                    row.id
                ));
            }
            args.push(if v.is_empty() {
                format!("--{k}")
            } else {
                format!("--{k}={v}")
            });
        }
    }
    let inv = crate::cli::parse_args(&args).map_err(|e| format!("{label}: its job: {e}"))?;
    let jobs = crate::session::prepare(&inv)
        .map_err(|e| format!("{label}: its job: {e}"))?
        .jobs;
    let now = Identity::of(&json!({ "iobench_env": crate::context::env::collect(&[], &jobs) }));
    let then = runs.ident();
    if now.job_hash != then.job_hash {
        return Err(format!(
            "{label}: the job rebuilt from run {} hashes {}, not {}: it would not be the same \
             job",
            row.id,
            now.text("options hash"),
            then.text("options hash")
        ));
    }
    if now.host != then.host {
        return Err(format!(
            "{label}: its runs ran on host {}, this is {}: --rerun runs a job where its \
             target is",
            then.text("host"),
            now.text("host")
        ));
    }
    for j in &jobs {
        if j.exec.engine.flags().no_local_disk() {
            continue;
        }
        for path in j.files.all_paths(&j.name, j.exec.numjobs) {
            let p = Path::new(&path);
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            if !p.exists() && !parent.is_none_or(Path::exists) {
                return Err(format!(
                    "{label}: its target {path} is not here (nor its directory)"
                ));
            }
        }
    }
    Ok(args)
}

/// `compare --rerun`: both sides' jobs run again now, in turn, and judged on those runs
/// (alternated, so that the host's drift falls on both sides alike).
fn rerun(
    db: &Store,
    a: &Args,
    sides: [(&sides::Runs, String); 2],
    say: &dyn Fn(&str),
) -> Result<u8, String> {
    let jobs = [
        job_again(db, sides[0].0, &sides[0].1)?,
        job_again(db, sides[1].0, &sides[1].1)?,
    ];
    let n = sides[0].0.rows.len().max(sides[1].0.rows.len()).max(2);
    if sides[0].0.ident().job_hash == sides[1].0.ident().job_hash {
        say(
            "NOTE: both sides ran the same job: run again here they are one system twice \
             (an A/A check: a difference now is the host's noise or drift, not a change \
             between the sides)\n\n",
        );
    }
    say(&format!(
        "rerun: {} and {} run again, in turn, {n} times each\n\n",
        sides[0].1, sides[1].1
    ));
    let mut args: Vec<String> = vec!["--repeat".into(), n.to_string()];
    for (_, label) in &sides {
        args.extend(["--name".to_string(), format!("{label}, rerun")]);
    }
    args.extend(a.compare_flags.iter().cloned());
    for j in jobs {
        args.push("--".into());
        args.extend(j);
    }
    crate::study::compare::compare(&args)
}

fn trend(db: &Store, a: &Args) -> Result<u8, String> {
    if a.filter.job_hash.is_none() {
        return Err("trend follows one job: give --job-hash H (see history list)".into());
    }
    let metric = a.metric.unwrap_or(Metric::Iops);
    let rows = db.list(&a.filter)?;
    let mut places: Vec<(Option<String>, Option<String>)> = rows
        .iter()
        .map(|r| (r.ident.target.clone(), r.ident.device_model.clone()))
        .collect();
    places.dedup();
    places.sort();
    places.dedup();
    if places.len() > 1 {
        return Err(format!(
            "the job ran on {} targets ({}): pick one with --target",
            places.len(),
            places
                .iter()
                .map(|(t, d)| format!("{} ({})", opt(t), opt(d)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut points = Vec::new();
    for r in &rows {
        let (_, doc) = db.get(r.id)?;
        let mut values = serde_json::Map::new();
        for d in totals(&doc)? {
            values.insert(d.dir.clone(), json!(metric.of(&d)));
        }
        points.push(json!({
            "id": r.id,
            "started": r.started,
            "kernel": r.ident.kernel,
            "values": values,
        }));
    }
    match a.format.as_deref() {
        Some("json") => {
            let doc = json!({
                "schema_version": EXPORT_VERSION,
                "job_hash": rows.first().and_then(|r| r.ident.job_hash.clone()),
                "target": rows.first().and_then(|r| r.ident.target.clone()),
                "device_model": rows.first().and_then(|r| r.ident.device_model.clone()),
                "metric": metric.name(),
                "points": points,
            });
            let mut doc = doc;
            // The baseline (--name, else the default one) when its runs are among these,
            // so that a chart of the trend can mark it: `id` its first such run, `ids` all.
            let name = a.name.as_deref().unwrap_or(DEFAULT_BASELINE);
            if let Some(b) = db.baselines()?.into_iter().find(|b| b.name == name) {
                let ids: Vec<i64> = b
                    .runs
                    .iter()
                    .copied()
                    .filter(|id| rows.iter().any(|r| r.id == *id))
                    .collect();
                if let Some(first) = ids.first() {
                    doc["baseline"] = json!({ "name": b.name, "id": first, "ids": ids });
                }
            }
            println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        None | Some("table") => {
            let dirs: Vec<&str> = results::DIRECTIONS
                .iter()
                .copied()
                .filter(|d| points.iter().any(|p| p["values"].get(*d).is_some()))
                .collect();
            let mut header = vec!["id".to_string(), "started".into(), "kernel".into()];
            header.extend(dirs.iter().map(|d| format!("{d} {}", metric.name())));
            let t = Table {
                header,
                rows: points
                    .iter()
                    .map(|p| {
                        let mut row = vec![
                            p["id"].to_string(),
                            store::time_text(p["started"].as_i64().unwrap_or(0)),
                            p["kernel"].as_str().unwrap_or("-").to_string(),
                        ];
                        row.extend(dirs.iter().map(|d| match p["values"][*d].as_f64() {
                            Some(v) => format!("{v:.2}"),
                            None => "-".into(),
                        }));
                        row
                    })
                    .collect(),
            };
            print!("{}", crate::osstr::printable_lines(&t.text()));
        }
        Some(f) => return Err(flags::bad_value("--format", f, "table or json")),
    }
    Ok(0)
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// True when `a` names the file `b` is, or one of its `-wal`/`-shm` companions (by
/// device and inode, so another spelling or a link is caught too).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(x) = std::fs::metadata(a) else {
        return false;
    };
    ["", "-wal", "-shm"].iter().any(|side| {
        let mut p = b.as_os_str().to_owned();
        p.push(side);
        std::fs::metadata(&p).is_ok_and(|y| x.dev() == y.dev() && x.ino() == y.ino())
    })
}

fn export(db: &Store, a: &Args) -> Result<u8, String> {
    let rows = db.list(&a.filter)?;
    let mut out = String::new();
    match a.format.as_deref().unwrap_or("jsonl") {
        "jsonl" => {
            for r in &rows {
                let (_, doc) = db.get(r.id)?;
                let line = json!({
                    "schema_version": EXPORT_VERSION,
                    "id": r.id,
                    "study_id": r.study_id,
                    "point": r.point,
                    "kind": r.kind,
                    "started": r.started,
                    "exit_code": r.exit_code,
                    "tags": r.tags,
                    "job_hash": r.ident.job_hash,
                    "host": r.ident.host,
                    "kernel": r.ident.kernel,
                    "target": r.ident.target,
                    "device_model": r.ident.device_model,
                    "filesystem": r.ident.filesystem,
                    "result": doc,
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
        "csv" => {
            out.push_str(
                "schema_version,id,study_id,point,kind,started,exit_code,tags,job_hash,\
                 host,kernel,target,device_model,filesystem,dir,iops,bw_bytes,lat_mean_ns,\
                 p50_ns,p99_ns,p99_9_ns\n",
            );
            for r in &rows {
                let (_, doc) = db.get(r.id)?;
                for d in totals(&doc)? {
                    let cells = [
                        EXPORT_VERSION.to_string(),
                        r.id.to_string(),
                        r.study_id.map(|s| s.to_string()).unwrap_or_default(),
                        r.point.clone().unwrap_or_default(),
                        r.kind.clone(),
                        r.started.to_string(),
                        r.exit_code.to_string(),
                        r.tags.join(";"),
                        r.ident.job_hash.clone().unwrap_or_default(),
                        r.ident.host.clone().unwrap_or_default(),
                        r.ident.kernel.clone().unwrap_or_default(),
                        r.ident.target.clone().unwrap_or_default(),
                        r.ident.device_model.clone().unwrap_or_default(),
                        r.ident.filesystem.clone().unwrap_or_default(),
                        d.dir.clone(),
                        d.iops.to_string(),
                        d.bw_bytes.to_string(),
                        d.lat_mean_ns.to_string(),
                        d.p50_ns.to_string(),
                        d.p99_ns.to_string(),
                        d.p99_9_ns.to_string(),
                    ];
                    out.push_str(&cells.iter().map(|c| csv(c)).collect::<Vec<_>>().join(","));
                    out.push('\n');
                }
            }
        }
        f => return Err(flags::bad_value("--format", f, "jsonl or csv")),
    }
    match &a.output {
        Some(p) => std::fs::write(p, out).map_err(|e| format!("--output {}: {e}", p.display()))?,
        None => print!("{out}"),
    }
    Ok(0)
}

fn import(db: &mut Store, a: &Args) -> Result<u8, String> {
    if a.words.is_empty() {
        return Err(
            "expected: history import FILE.json... (fio's or iobench's JSON output)".into(),
        );
    }
    let mut recs = Vec::new();
    for f in &a.words {
        let p = Path::new(f);
        let file = results::read(p).map_err(|e| format!("{f}: {e}"))?;
        let modified = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs() as i64)
            .unwrap_or_else(crate::history::now);
        // fio writes when the run started as "timestamp" (seconds since the epoch).
        let started = file.doc["timestamp"].as_i64().unwrap_or(modified);
        recs.push(Record {
            kind: "import".into(),
            point: Some(f.clone()),
            started,
            exit_code: 0,
            doc: file.doc,
        });
    }
    let ids = db.save(None, &recs)?;
    for (f, id) in a.words.iter().zip(&ids) {
        println!("{f}: run {id}");
    }
    Ok(0)
}

fn gc(db: &mut Store, a: &Args) -> Result<u8, String> {
    if a.keep_last.is_none() && a.older_than.is_none() {
        return Err(
            "gc needs --keep-last N or --older-than AGE (nothing is forgotten by default)".into(),
        );
    }
    let rows = db.list(&Filter::default())?;
    let mut doomed: Vec<i64> = Vec::new();
    if let Some(t) = a.older_than {
        doomed.extend(rows.iter().filter(|r| r.started < t).map(|r| r.id));
    }
    if let Some(n) = a.keep_last {
        // Newest first within each job hash and target.
        let mut seen: std::collections::HashMap<(Option<String>, Option<String>), usize> =
            Default::default();
        for r in rows.iter().rev() {
            let k = seen
                .entry((r.ident.job_hash.clone(), r.ident.target.clone()))
                .or_default();
            *k += 1;
            if *k > n {
                doomed.push(r.id);
            }
        }
    }
    doomed.sort_unstable();
    doomed.dedup();
    let n = db.delete(&doomed)?;
    println!(
        "gc: {n} run(s) forgotten, {} kept{}",
        rows.len() - n,
        if n < doomed.len() {
            " (baselines' runs stay)"
        } else {
            ""
        }
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_not_alternated_are_named_with_their_distance_in_time() {
        // Issue 39: a baseline saved a minute before the runs set against it.
        let n = alternation_note(&[1000, 1010, 1020], &[1080, 1090]).unwrap();
        assert!(n.contains("not alternated"), "{n}");
        assert!(n.contains("first side's runs all ran before"), "{n}");
        assert!(n.contains("1m00s apart"), "{n}");
        assert!(n.contains("(1m30s from first to last run)"), "{n}");
        let n = alternation_note(&[5000], &[1000]).unwrap();
        assert!(n.contains("second side's runs all ran before"), "{n}");
        // A B A B: alternated, nothing to say.
        assert_eq!(alternation_note(&[1000, 1020], &[1010, 1030]), None);
        assert_eq!(alternation_note(&[], &[1]), None);
    }
}
