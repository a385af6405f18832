//! The command table: `iobench --help` lists fio's flags, iobench's own and every
//! subcommand; each subcommand's `--help` lists its flags; a slip of a subcommand's name is
//! caught (unless a job file has that name); a bad value names the flag.
use crate::common;

use std::process::Output;

fn iobench(args: &[&str]) -> Output {
    let mut c = common::iobench();
    c.args(args);
    common::run(c)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each subcommand and the flags its `--help` must list.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "peak",
        &[
            "-d <int>",
            "-s <int>",
            "-c <int>",
            "-b <int>",
            "-p <bool>",
            "-B <bool>",
            "-D <bool>",
            "-F <bool>",
            "-n <int>",
            "-O <bool>",
            "-N <bool>",
            "-t <bool>",
            "-T <int>",
            "-r <int>",
            "-R <bool>",
            "-a <bool>",
            "-S <bool>",
            "-X <bool>",
            "-P <bool>",
            "-u <bool>",
        ],
    ),
    (
        "sweep",
        &[
            "--axis=",
            "--zip=",
            "-o, --dir, --results, --output=",
            "--dry-run",
            "--fresh",
            "-r, --repeat=",
            "--markdown",
            "--json",
            "--output-format=",
        ],
    ),
    (
        "compare",
        &[
            "-r, --repeat=",
            "-w, --warmup=",
            "-n, --name=",
            "-m, --metric=",
            "--fail-if-slower=",
            "-o, --dir, --output=",
            "--export-json=",
            "--export-csv=",
            "--export-markdown=",
            "--markdown",
            "--json",
            "--output-format=",
            "--save",
            "--history=",
        ],
    ),
    (
        "quick",
        &[
            "--preset=",
            "-r, --loops, --repeat=",
            "--size=",
            "--duration=",
            "--interval=",
            "--mode=",
            "--mix[=PCT]",
            "--zero-buffers",
            "--refill-buffers",
            "--no-drop-caches",
            "--force",
            "--dry-run",
            "--output-format=",
            "--json",
            "--save",
            "--history=",
        ],
    ),
    (
        "pts",
        &[
            "-o, --dir, --output=",
            "--profile=",
            "--threads=",
            "--qd=",
            "--engine=",
            "--capacity=",
            "--round-time=",
            "--max-rounds=",
            "--wsat-time=",
            "--no-purge",
            "--json",
            "--output-format=",
        ],
    ),
    ("report", &["-o, --output=", "--title="]),
    (
        "history",
        &[
            "--history=",
            "--job-hash=",
            "--target=",
            "--host=",
            "--tag=",
            "--since=",
            "--until=",
            "-n, --name=",
            "--baseline",
            "-m, --metric=",
            "--fail-if-slower=",
            "--markdown",
            "--export-json=",
            "--export-csv=",
            "--format, --output-format=",
            "--json",
            "-o, --output=",
            "--keep-last=",
            "--older-than=",
        ],
    ),
    (
        "slo",
        &[
            "--p50=",
            "--p90=",
            "--p95=",
            "--p99=",
            "--p99.9=",
            "--p99.99=",
            "--mean=",
            "--precision=",
            "--start=",
            "--max=",
            "--min-time=",
            "--max-time=",
            "--arrival=",
            "-o, --output=",
            "--output-format=",
            "--json",
        ],
    ),
];

/// Every flag line of a help text starts its description in one column.
fn assert_aligned(text: &str, what: &str) {
    let mut cols = std::collections::BTreeSet::new();
    for l in text.lines().filter(|l| l.starts_with("  -")) {
        let flag_end = l[2..].find("  ").map(|i| i + 2);
        if let Some(i) = flag_end {
            let col = i + l[i..].len() - l[i..].trim_start().len();
            cols.insert(col);
        }
    }
    assert!(
        cols.len() <= 1,
        "{what}: descriptions start at {cols:?}\n{text}"
    );
}

#[test]
fn every_subcommand_help_lists_its_flags_and_exits_zero() {
    for (sub, flags) in SUBCOMMANDS {
        for help in ["--help", "-h"] {
            let out = iobench(&[sub, help]);
            assert!(out.status.success(), "{sub} {help}: {}", stderr(&out));
            let text = stdout(&out);
            assert!(
                text.starts_with(&format!("usage: iobench {sub}")),
                "{sub}: {text}"
            );
            let lines: Vec<&str> = text.lines().collect();
            for f in *flags {
                let at = lines.iter().position(|l| l.trim_start().starts_with(f));
                let at = at.unwrap_or_else(|| panic!("{sub} --help lacks {f}:\n{text}"));
                let line = lines[at];
                // A description follows the flag on its line, or on the next when the
                // flag's names are too long for the column (then indented, not a flag).
                let on_line = line.trim().split("  ").filter(|s| !s.is_empty()).count() >= 2;
                let next = lines.get(at + 1).copied().unwrap_or("");
                let below = next.starts_with("    ") && !next.trim_start().starts_with('-');
                assert!(on_line || below, "{sub}: {f} has no description: {line}");
            }
            assert_aligned(&text, sub);
        }
    }
}

#[test]
fn top_help_lists_every_subcommand_and_iobench_flag() {
    let out = iobench(&["--help"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let subs = text
        .split("\nSubcommands")
        .nth(1)
        .unwrap_or_else(|| panic!("no Subcommands section:\n{text}"));
    for (sub, _) in SUBCOMMANDS {
        let line = subs.lines().find(|l| l.trim_start().starts_with(sub));
        let line = line.unwrap_or_else(|| panic!("--help lacks subcommand {sub}:\n{text}"));
        assert!(line.trim().len() > sub.len() + 10, "{sub}: no description");
    }
    let own = text
        .split("\niobench's own options")
        .nth(1)
        .unwrap_or_else(|| panic!("no own options section:\n{text}"));
    for flag in [
        "--env",
        "--save",
        "--history=",
        "--live=",
        "--metrics=",
        "--rotate-ranks",
        "--sync-start=",
    ] {
        assert!(
            own.lines().any(|l| l.trim_start().starts_with(flag)),
            "--help lacks {flag}:\n{text}"
        );
    }
    assert_aligned(&text, "iobench --help");
    assert!(
        !text.contains("=VALUE"),
        "a flag without a described value:\n{text}"
    );
}

/// The flag names of the "fio's options" part of `iobench --help`.
fn fio_part_flags(text: &str) -> Vec<String> {
    let part = text
        .split("\nfio's options:\n")
        .nth(1)
        .expect("a fio's options section")
        .split("\n\n")
        .next()
        .unwrap_or("");
    part.lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| {
            l.split(|c: char| c == '=' || c == '[' || c.is_whitespace())
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// fio's flags are listed as before the command table (same names, and no iobench-only
/// flag among them), and every flag `fio --help` lists is there.
#[test]
fn fio_part_of_help_is_fio_flags() {
    let text = stdout(&iobench(&["--help"]));
    let mut listed = fio_part_flags(&text);
    // What `iobench --help` listed before (its flag table less --env, --live, --metrics),
    // and the client/server flags its usage lines named.
    let mut before: Vec<&str> = vec![
        "output",
        "output-format",
        "minimal",
        "terse-version",
        "append-terse",
        "eta",
        "eta-newline",
        "eta-interval",
        "status-interval",
        "section",
        "parse-only",
        "showcmd",
        "cmdhelp",
        "enghelp",
        "crctest",
        "version",
        "readonly",
        "max-jobs",
        "warnings-fatal",
        "help",
        "debug",
        "merge-blktrace-only",
        "bandwidth-log",
        "alloc-size",
        "cpuclock-test",
        "idle-prof",
        "inflate-log",
        "trigger-file",
        "trigger-timeout",
        "trigger",
        "trigger-remote",
        "aux-path",
        "daemonize",
        "profile",
        "server",
        "client",
        "remote-config",
    ];
    listed.sort();
    before.sort();
    assert_eq!(listed, before, "{text}");
    let Some(mut fio) = common::fio() else {
        return;
    };
    let fio_help =
        String::from_utf8_lossy(&fio.arg("--help").output().unwrap().stdout).into_owned();
    for line in fio_help.lines() {
        let Some(rest) = line.trim_start().strip_prefix("--") else {
            continue;
        };
        let name = rest
            .split(|c: char| c == '=' || c.is_whitespace())
            .next()
            .unwrap_or("");
        assert!(
            listed.iter().any(|l| l == name),
            "fio --help lists --{name}, iobench --help does not:\n{text}"
        );
    }
}

#[test]
fn a_slip_of_a_subcommand_is_caught_but_a_job_file_of_that_name_runs() {
    let dir = common::scratch("cli_commands_slip");
    let mut c = common::iobench();
    c.current_dir(&dir).args(["swep", "--axis", "bs=4k"]);
    let out = common::run(c);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "iobench: unknown subcommand 'swep' (did you mean 'sweep'?)"
    );
    std::fs::write(
        dir.join("swep"),
        "[x]\nioengine=null\nsize=64k\nfilename=nothing\n",
    )
    .unwrap();
    let mut c = common::iobench();
    c.current_dir(&dir).args(["swep", "--output-format=json"]);
    let out = common::run(c);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"jobname\""), "{}", stdout(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_subcommand_value_names_the_flag_and_the_form() {
    for (args, needles) in [
        (
            &["compare", "--repeat=x", "a.json", "b.json"][..],
            &["--repeat", "'x'", "whole number"][..],
        ),
        (&["sweep", "--axis"], &["--axis", "NAME=VALUES"]),
        (
            &["sweep", "--dry-run=1", "--axis", "bs=4k"],
            &["--dry-run", "'1'"],
        ),
        (
            &["quick", "--loops=abc"],
            &["--loops", "'abc'", "whole number"],
        ),
        (&["quick", "--bogus"], &["--bogus", "iobench quick --help"]),
        (&["report", "--title"], &["--title", "TEXT"]),
        (
            &["pts", "iops", "-o", "d", "--max-rounds=4", "f"],
            &["--max-rounds", "'4'", "5 to 25"],
        ),
        (&["peak", "-dx", "f"], &["-d", "'x'", "whole number"]),
    ] {
        let out = iobench(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        for n in needles {
            assert!(err.contains(n), "{args:?}: no {n} in {err}");
        }
    }
}

#[test]
fn one_shot_flags_keep_fio_precedence() {
    let out = iobench(&["--help", "--version"]);
    assert!(out.status.success());
    assert!(stdout(&out).starts_with("iobench-"), "--version wins");
    let out = iobench(&["--showcmd", "--help"]);
    assert!(
        stdout(&out).starts_with("usage: iobench"),
        "--help before --showcmd"
    );
    let out = iobench(&["--debug=?"]);
    assert!(out.status.success() && stdout(&out).contains("process"));
    let out = iobench(&["--parse-only", "--name=x", "--ioengine=null", "--size=1m"]);
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}",
        stdout(&out)
    );
}
