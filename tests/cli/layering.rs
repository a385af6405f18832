//! The stages of the data path depend downwards only: a module may use its own tier and
//! the tiers below it, never one above. The compiler does not keep this inside one crate,
//! so this test does: it reads every source file under `src/`, finds the `crate::…` paths
//! it names (outside comments and its `#[cfg(test)]` module) and fails on any that reaches
//! up, and on any cycle between top-level modules (inside a tier as well). A new
//! top-level module must be given a tier here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The tiers, lowest first. Within a tier modules may use each other, but never in a
/// cycle (see `no_cycle_between_top_level_modules`): the tiers say which way a use may go,
/// the cycle check that the modules of one tier still point one way.
const TIERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "affinity", "blktrace", "clock", "debug", "error", "flags", "num", "osstr", "safefs",
            "shm", "stop",
        ],
    ),
    // Option definitions and value syntax, Ddir, the typed Reader.
    ("defs", &["defs"]),
    // One file per engine: flags, its own option rows, typed options, constructor.
    ("engines", &["engine"]),
    // The assembled option table, help, job files, make_opt; the command line.
    ("catalog", &["options", "cli"]),
    // Job and every *Opts type.
    ("job", &["job"]),
    // Read Job, never run or report.
    (
        "core",
        &["stats", "buffer", "iolog", "gen", "verify", "fioproto"],
    ),
    ("run", &["run", "fioflags"]),
    ("report", &["report", "context", "history"]),
    (
        "front",
        &[
            "session", "study", "present", "server", "client", "cluster", "peak", "command", "api",
        ],
    ),
];

/// Uses that reach up and are known, each with why it stays for now. Keep this short
/// (empty now: the status line the collector draws moved down to `stats::status`, and the
/// number formatting it shares with the reports to the base tier, `num`).
const KNOWN: &[(&str, &str, &str)] = &[];

fn tier_of(module: &str) -> Option<usize> {
    TIERS.iter().position(|(_, mods)| mods.contains(&module))
}

/// The top-level module a source file belongs to (`src/gen/rand.rs` → `gen`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its trailing `#[cfg(test)]` module
/// (tests may build jobs from a command line, which is not a dependency of the code).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every top-level module a piece of code names through `crate::`: `crate::run::x`, and
/// each root of a group `crate::{run::x, report}`.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            // Roots of a group: each name at brace depth 0 that starts an item.
            let mut depth = 0;
            let mut start = true;
            let mut word = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_alphanumeric() || c == '_' => {
                        if start {
                            word.push(c);
                        }
                        continue;
                    }
                    _ => {}
                }
                if !word.is_empty() {
                    out.insert(std::mem::take(&mut word));
                    start = false;
                }
            }
        } else {
            let word: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(word);
        }
        rest = after;
    }
    out
}

/// The uses that reach up, as `file: module -> named`.
fn upward_uses(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in &files {
        let module = module_of(src, f);
        if module == "lib" || module == "main" {
            continue;
        }
        let from = tier_of(&module)
            .unwrap_or_else(|| panic!("module `{module}` has no tier in tests/cli/layering.rs"));
        let code = code_of(&std::fs::read_to_string(f).expect("read source"));
        for named in named_modules(&code) {
            let Some(to) = tier_of(&named) else { continue };
            let known = KNOWN.iter().any(|(a, b, _)| *a == module && *b == named);
            if to > from && !known {
                bad.push(format!("{}: {module} -> {named}", f.display()));
            }
        }
    }
    bad
}

/// The graph of top-level modules: each module and the modules it names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let module = module_of(src, f);
        if module == "lib" || module == "main" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).expect("read source"));
        let uses = graph.entry(module.clone()).or_default();
        for named in named_modules(&code) {
            // `crate::dprint!` is a macro at the crate root, not a module.
            if named != module && named != "dprint" {
                uses.insert(named);
            }
        }
    }
    graph
}

/// The cycles of `graph`, each as the path that closes it (`a -> b -> a`), one per
/// strongly connected group of modules.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    // A depth-first search from each module; a use that reaches a module still on the
    // path closes a cycle. Each module's group is reported once.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        found: &mut Vec<Vec<&'a str>>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            found.push(path[i..].iter().copied().chain([m]).collect());
            return;
        }
        if done.contains(m) {
            return;
        }
        path.push(m);
        for next in graph.get(m).into_iter().flatten() {
            visit(next, graph, path, done, found);
        }
        path.pop();
        done.insert(m);
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, graph, &mut Vec::new(), &mut done, &mut found);
    }
    let mut seen: BTreeSet<BTreeSet<&str>> = BTreeSet::new();
    found
        .into_iter()
        .filter(|c| seen.insert(c.iter().copied().collect()))
        .map(|c| c.join(" -> "))
        .collect()
}

#[test]
fn no_cycle_between_top_level_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = cycles(&module_graph(&src));
    assert!(
        found.is_empty(),
        "top-level modules use each other in a cycle (move the shared piece down):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_cycle_is_reported() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a", "d"][..]),
        ("d", &[][..]),
    ]
    .iter()
    .map(|(m, uses)| (m.to_string(), uses.iter().map(|u| u.to_string()).collect()))
    .collect();
    assert_eq!(cycles(&graph), ["a -> b -> c -> a"]);
    let mut acyclic = graph.clone();
    acyclic.get_mut("c").unwrap().remove("a");
    assert!(cycles(&acyclic).is_empty());
}

#[test]
fn no_module_uses_a_higher_stage() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = upward_uses(&src);
    assert!(
        bad.is_empty(),
        "lower stages use higher ones (move the shared type down):\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_module_has_a_tier() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read lib.rs");
    for line in lib.lines() {
        let line = line.trim();
        let decl = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "));
        if let Some(name) = decl {
            let name = name.trim_end_matches(';');
            assert!(tier_of(name).is_some(), "`{name}` has no tier");
        }
    }
}

#[test]
fn the_known_exceptions_are_still_needed() {
    // An exception that no longer happens must leave the list, so the rule tightens.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for (from, to, why) in KNOWN {
        let used = files.iter().any(|f| {
            module_of(&src, f) == *from
                && named_modules(&code_of(&std::fs::read_to_string(f).unwrap())).contains(*to)
        });
        assert!(
            used,
            "{from} -> {to} ({why}) no longer happens: drop it from KNOWN"
        );
    }
}

#[test]
fn the_scanner_sees_paths_groups_and_skips_comments_and_tests() {
    let code = code_of(
        "use crate::{job::Job, run::{a, b}};\n\
         // crate::report::x in a comment\n\
         fn f() { crate::stats::board::slot(1); }\n\
         #[cfg(test)]\nmod tests { use crate::session; }\n",
    );
    let got: Vec<String> = named_modules(&code).into_iter().collect();
    assert_eq!(got, ["job", "run", "stats"]);
}

#[test]
fn a_use_that_reaches_up_is_reported() {
    let dir = std::env::temp_dir().join(format!("iobench-layering-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("gen")).unwrap();
    std::fs::write(
        src.join("gen/mod.rs"),
        "use crate::run::syncing::SyncKind;\n",
    )
    .unwrap();
    std::fs::write(src.join("run.rs"), "use crate::gen::Generator;\n").unwrap();
    let bad = upward_uses(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].ends_with("gen -> run"), "{bad:?}");
}

#[test]
fn only_the_api_is_public() {
    // Every module is the crate's own; `api` is the one public surface (see src/api.rs),
    // so that rustc's dead-code lint sees everything else. A test that needs an internal
    // item adds it to `api` on purpose.
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("read lib.rs");
    let public: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .collect();
    assert_eq!(public, ["api;"], "public modules besides api");
}
