//! Never a panic on any input: many generated job files, values and command lines go
//! through the parsers (and the job resolver after them), and every one must come back as
//! a value or an error. This is the stable-Rust companion of the cargo-fuzz targets in
//! `fuzz/`; crashes they find are kept in `regressions` below.

use iobench::api::options::{jobfile, keywords, value, OPTIONS};

/// A small deterministic generator (xorshift64*), so a failure can be replayed by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Pieces job files and values are made of: syntax, units, keywords, odd characters.
const PIECES: &[&str] = &[
    "[",
    "]",
    "[global]",
    "[job]",
    "global",
    "=",
    "\n",
    "\n",
    "\n",
    ";",
    "#",
    " ",
    "\t",
    "${",
    "}",
    "${HOME}",
    "$ncpus",
    "$pagesize",
    "$mb_memory",
    "*",
    "/",
    "-",
    "+",
    "(",
    ")",
    ":",
    ",",
    "%",
    "k",
    "K",
    "KiB",
    "m",
    "g",
    "t",
    "p",
    "ms",
    "us",
    "s",
    "h",
    "d",
    "z",
    "0x",
    "0",
    "1",
    "4",
    "9",
    "18446744073709551615",
    "99999999999999999999",
    "1.5",
    "-8k",
    "zipf",
    "zoned",
    "zoned_abs",
    "pareto",
    "normal",
    "random",
    "randread",
    "write",
    "rw",
    "include ",
    "include /dev/null",
    "é",
    "\u{0}",
    "\r",
    "\\",
    "\"",
    "'",
    "name",
    "filename",
    "stonewall",
    "wait_for",
    "new_group",
    "bssplit",
    "bs",
    "size",
    "offset",
];

fn option_names() -> Vec<&'static str> {
    OPTIONS.iter().map(|o| o.name).collect()
}

fn gen(rng: &mut Rng, names: &[&str], max: usize) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(max) + 1 {
        if rng.below(4) == 0 {
            s.push_str(rng.pick(names));
        } else {
            s.push_str(rng.pick(PIECES));
        }
    }
    s
}

/// A job file: sections with `option=value` lines, some of them broken.
fn gen_jobfile(rng: &mut Rng, names: &[&str]) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(6) {
        match rng.below(5) {
            0 => s.push_str(&format!("[{}]\n", gen(rng, names, 2))),
            1 => s.push_str(&format!("{}\n", gen(rng, names, 8))),
            _ => s.push_str(&format!("{}={}\n", rng.pick(names), gen(rng, names, 4))),
        }
    }
    s
}

/// Parses `text` as a job file and resolves every job it yields; errors are fine.
fn check_jobfile(text: &str) {
    let mut globals = Vec::new();
    if let Ok(jobs) = jobfile::parse_str(text, "generated.fio", &mut globals) {
        for job in &jobs {
            let _ = iobench::api::job::resolve(job);
        }
    }
}

fn check_value(v: &str) {
    for def in OPTIONS {
        let _ = value::validate(def, Some(v));
        let _ = def.value_supported(v);
    }
    for kb in [value::KbBase::Binary, value::KbBase::Decimal] {
        let _ = value::parse_size(v, kb);
        let _ = value::parse_int_kb(v, kb);
        let _ = value::parse_size_or_percent(v, kb);
        let _ = value::parse_size_list(v, kb);
        let _ = value::parse_range_list(v, kb);
        let _ = value::parse_bssplit(v, kb);
        let _ = value::parse_rw(v, kb);
        let _ = value::parse_distribution(v, kb);
        let _ = value::parse_signed_size(v, kb);
    }
    let _ = value::parse_percent(v);
    let _ = value::parse_bool(v);
    let _ = value::parse_flag(v);
    let _ = value::parse_float_list(v);
    let _ = iobench::api::stats::hist::PercentileList::parse(v);
    let _ = keywords::eval(v);
    let m = keywords::Machine::current();
    let _ = keywords::replace_keywords(v, &m);
    let _ = keywords::expand_env(v);
}

#[test]
fn generated_job_files_never_panic() {
    let names = option_names();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..3000 {
        check_jobfile(&gen_jobfile(&mut rng, &names));
    }
    for _ in 0..1000 {
        check_jobfile(&gen(&mut rng, &names, 40));
    }
}

#[test]
fn generated_values_never_panic() {
    let names = option_names();
    let mut rng = Rng(0x0ddb_a11c_afe0_0001);
    for _ in 0..400 {
        check_value(&gen(&mut rng, &names, 6));
    }
}

#[test]
fn generated_values_of_real_options_resolve_without_panic() {
    // A valid-looking option set, then the resolver: the value parsers of every stage.
    let names = option_names();
    let mut rng = Rng(0xfeed_face_0000_0042);
    let values = [
        "0",
        "1",
        "4k",
        "1m",
        "0x10",
        "20%",
        "-8k",
        "4k-64k",
        "4k,8k",
        "randread:8",
        "write:-8k",
        "zipf:1.2",
        "zoned:50/5:50/95",
        "1s",
        "99:99.9",
        "4k/50:8k/50",
        "18446744073709551615",
        "$ncpus*2",
        ",",
        ":",
        "",
        "1,2,3,4",
        "0-0",
    ];
    for _ in 0..2000 {
        let mut text = String::from("[job]\n");
        for _ in 0..rng.below(6) + 1 {
            text.push_str(&format!("{}={}\n", rng.pick(&names), rng.pick(&values)));
        }
        check_jobfile(&text);
    }
}

#[test]
fn generated_command_lines_never_panic() {
    let names = option_names();
    let mut rng = Rng(0xc0ff_ee00_1234_5678);
    let flags = [
        "--output",
        "--output-format=json",
        "--minimal",
        "--eta-newline",
        "--section",
        "--showcmd",
        "--cmdhelp",
        "--enghelp=",
        "--name",
        "--name=global",
        "-",
        "--",
        "---x",
        "--=",
        "-=",
        "--readonly",
        "--eta=always",
        "--status-interval=0",
    ];
    for _ in 0..3000 {
        let mut args: Vec<String> = Vec::new();
        for _ in 0..rng.below(8) {
            args.push(match rng.below(4) {
                0 => rng.pick(&flags).to_string(),
                1 => format!("--{}={}", rng.pick(&names), gen(&mut rng, &names, 3)),
                2 => format!("-{}", rng.pick(&names)),
                _ => gen(&mut rng, &names, 3)
                    .replace(['\n', '\0'], "")
                    // Positional arguments are job files; keep them from reading stdin.
                    .replace('-', "_"),
            });
        }
        if args.iter().any(|a| a == "-") {
            continue;
        }
        if let Ok(inv) = iobench::api::cli::parse_args(&args) {
            for job in &inv.jobs {
                let _ = iobench::api::job::resolve(job);
            }
        }
    }
}

/// Kept inputs: every crash the fuzzers or the tests above find goes here (none so far in
/// iobench's parsers), with hostile cases written by hand (deep nesting, overflow).
#[test]
fn regressions() {
    for text in REGRESSION_JOBFILES {
        check_jobfile(text);
    }
    for v in REGRESSION_VALUES {
        check_value(v);
    }
}

const REGRESSION_JOBFILES: &[&str] = &["[x]\nthinktime=(((((((((1"];
const REGRESSION_VALUES: &[&str] = &["${", "$ncpus^99999999999"];
