//! The contracts of docs/contributing.md, checked so they hold without a
//! reviewer: no public `Result<_, String>` (errors are typed), SQL only in
//! the journal's folder, no measured figure in a code comment (figures go to
//! docs/performance.md and docs/reliability.md), module docs of at most 20
//! lines, files of at most 600 lines. Functions of at most 80 lines are
//! clippy's to check (Cargo.toml's `[workspace.lints]`, run by scripts/test).
//!
//! Each rule's exceptions are listed below with one line of reason each; an
//! exception that no longer breaks its rule, or whose file is gone, fails
//! too, so the lists only shrink. Each rule has a self-test that plants a
//! violation and sees it found.

use std::fs;
use std::path::Path;

use regex::Regex;

use super::rust_files;

/// Library and binary code: every crate's `src/`.
const SOURCES: &[&str] = &[
    "runtime/core/src",
    "runtime/cli/src",
    "runtime/serve/src",
    "runtime/worker/src",
    "runtime/otel/src",
    "runtime/packs/src",
    "runtime/packs/rules/src",
    "runtime/packs/guest",
    "guest-sdk/src",
    "guest-sdk/macros/src",
];

/// All Rust code of the workspace: the sources, tests and benches.
const ALL_CODE: &[&str] = &["runtime", "guest-sdk", "tests", "example-hooks"];

/// The one folder that speaks SQL to the journal.
const JOURNAL: &str = "runtime/core/src/service/journal/";

/// Files that may pass 600 lines, each as `path: why`.
const LONG_FILES: &[&str] = &[
    "tests/cli/commands.rs: to split into one file per command, as runtime/cli/src/commands/ is (to do)",
    "tests/serve/agents.rs: every agent's binary run against hookrt, one scenario table (to split per agent: to do)",
    "tests/serve/jetstream.rs: the fleet's end-to-end scenarios, each on one server",
    "guest-sdk/src/eve.rs: Eve's typed events, one struct per kind (held to event/kind.rs by tests/all/vocabulary.rs)",
    "guest-sdk/src/hook.rs: the Hook trait, one method per kind, each with its rustdoc (held to event/kind.rs by tests/all/vocabulary.rs)",
    "runtime/core/src/event/envelope.rs: issue 45: clock and hashing are out; validation to split (to do)",
    "runtime/core/src/hooks/build/component.rs: issue 45: to split by concept (to do)",
    "runtime/core/src/service/journal/mod.rs: issue 45: to split by concept (to do)",
];

/// Files whose public functions may return `Result<_, String>`, each as `path: why`.
const STRING_ERRORS: &[&str] = &[
    "guest-sdk/src/state.rs: the WIT's `result<_, string>`: a hook reads the host's words",
    "guest-sdk/src/define_hook.rs: the WIT's `result<_, string>`: the guest's exports",
];

/// Files outside the journal's folder that may hold SQL, each as `path: why`.
const SQL_ELSEWHERE: &[&str] = &[
    "runtime/core/src/sandbox/state.rs: the state grant's own SQLite file, not the journal",
    "runtime/core/src/hooks/cache/incremental.rs: Cranelift's cache in the cache dir, not the journal",
];

/// Files whose comments may carry a measured figure, each as `path: why`.
const FIGURES: &[&str] = &[];

/// Files whose module doc may pass 20 lines, each as `path: why`.
const LONG_DOCS: &[&str] = &[
    "guest-sdk/src/lib.rs: the SDK's front page: its reference in rustdoc (issue 45, item 8)",
    "runtime/core/src/lib.rs: the library's front page: the map of its layers",
    "guest-sdk/src/context.rs: the SDK's reference is its rustdoc (item 8): how context reaches each agent's model",
    "guest-sdk/src/hook.rs: the Hook trait's reference and examples, doctested (rustdoc is the SDK's reference)",
    "guest-sdk/src/response.rs: the SDK's reference is its rustdoc (item 8): each answer per class",
];

#[test]
fn no_file_passes_600_lines() {
    let root = super::repo();
    assert_none(&long_files(&root, ALL_CODE, LONG_FILES));
}

#[test]
fn no_public_function_returns_a_string_error() {
    let root = super::repo();
    assert_none(&string_errors(&root, SOURCES, STRING_ERRORS));
}

#[test]
fn sql_is_spoken_only_in_the_journal() {
    let root = super::repo();
    assert_none(&sql_elsewhere(&root, SOURCES, JOURNAL, SQL_ELSEWHERE));
}

#[test]
fn no_code_comment_carries_a_measured_figure() {
    let root = super::repo();
    assert_none(&figures(&root, SOURCES, FIGURES));
}

#[test]
fn no_module_doc_passes_20_lines() {
    let root = super::repo();
    assert_none(&long_docs(&root, ALL_CODE, LONG_DOCS));
}

fn assert_none(found: &[String]) {
    assert!(
        found.is_empty(),
        "the contracts (docs/contributing.md; exceptions in tests/architecture/contracts.rs):\n- {}",
        found.join("\n- ")
    );
}

/// One Rust file: its path from the root and its text.
struct Source {
    rel: String,
    text: String,
}

fn sources(root: &Path, dirs: &[&str]) -> Vec<Source> {
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|file| Source {
            rel: file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            text: fs::read_to_string(&file).unwrap(),
        })
        .collect()
}

/// The files breaking a rule (`breaks` says how, or `None`), less the allowed
/// ones; an allowed file that keeps the rule is named too.
fn judge(
    files: &[Source],
    allowed: &[&str],
    breaks: impl Fn(&Source) -> Option<String>,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut excused = Vec::new();
    let allowed: Vec<(&str, &str)> = allowed
        .iter()
        .map(|a| a.split_once(": ").expect("`path: why`"))
        .collect();
    for file in files {
        match (breaks(file), allowed.iter().find(|(p, _)| *p == file.rel)) {
            (Some(_), Some((path, _))) => excused.push(*path),
            (Some(how), None) => found.push(format!("{}: {how}", file.rel)),
            (None, _) => {}
        }
    }
    for (path, reason) in &allowed {
        if !files.iter().any(|f| f.rel == *path) {
            found.push(format!(
                "{path} is on the list but is gone: take it off ({reason})"
            ));
        } else if !excused.contains(path) {
            found.push(format!(
                "{path} keeps the rule now: take it off the list ({reason})"
            ));
        }
    }
    found
}

fn long_files(root: &Path, dirs: &[&str], allowed: &[&str]) -> Vec<String> {
    judge(&sources(root, dirs), allowed, |f| {
        let n = f.text.lines().count();
        (n > 600).then(|| format!("{n} lines: split it by concept (at most 600)"))
    })
}

fn long_docs(root: &Path, dirs: &[&str], allowed: &[&str]) -> Vec<String> {
    judge(&sources(root, dirs), allowed, |f| {
        let n = f
            .text
            .lines()
            .filter(|l| l.trim_start().starts_with("//!"))
            .count();
        (n > 20).then(|| {
            format!("a module doc of {n} lines: at most 20 (history goes to an ADR or git log)")
        })
    })
}

/// Source without comments and from its unit-test module on.
fn code(text: &str) -> String {
    let no_comments = Regex::new(r"//[^\n]*").unwrap().replace_all(text, "");
    let tests = Regex::new(r"#\[cfg\(test\)\]\s*mod\s").unwrap();
    match tests.find(&no_comments) {
        Some(m) => no_comments[..m.start()].to_owned(),
        None => no_comments.into_owned(),
    }
}

fn string_errors(root: &Path, dirs: &[&str], allowed: &[&str]) -> Vec<String> {
    let signature = Regex::new(
        r"(?s)\bpub\s+(?:(?:const|async|unsafe)\s+)*fn\s+([A-Za-z0-9_]+)[^{;]*?->([^{;]*?)(?:\bwhere\b|\{|;)",
    )
    .unwrap();
    let alias = Regex::new(r"(?s)\bpub\s+type\s+([A-Za-z0-9_]+)[^=;]*=([^;]*);").unwrap();
    judge(&sources(root, dirs), allowed, |f| {
        let text = code(&f.text);
        let names: Vec<String> = signature
            .captures_iter(&text)
            .chain(alias.captures_iter(&text))
            .filter(|c| has_string_error(&c[2]))
            .map(|c| format!("`{}`", &c[1]))
            .collect();
        (!names.is_empty()).then(|| {
            format!(
                "{} public with a `Result<_, String>`: give it a typed error (thiserror)",
                names.join(", ")
            )
        })
    })
}

/// Whether a type's text holds a `Result<…, String>`.
fn has_string_error(ty: &str) -> bool {
    ty.match_indices("Result<").any(|(at, m)| {
        let start = at + m.len();
        let (mut depth, mut arg) = (0, start);
        let mut args = Vec::new();
        for (i, ch) in ty[start..].char_indices().map(|(i, c)| (start + i, c)) {
            match ch {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth > 0 => depth -= 1,
                ',' | '>' if depth == 0 => {
                    args.push(ty[arg..i].trim());
                    arg = i + 1;
                    if ch == '>' {
                        break;
                    }
                }
                _ => {}
            }
        }
        // A trailing comma leaves an empty last argument.
        args.retain(|a| !a.is_empty());
        args.len() == 2 && matches!(args[1], "String" | "std::string::String")
    })
}

fn sql_elsewhere(root: &Path, dirs: &[&str], journal: &str, allowed: &[&str]) -> Vec<String> {
    let sql = Regex::new(
        r"\b(?:SELECT\s+[A-Za-z*(]|INSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b|DELETE\s+FROM\b|CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\b|UPDATE\s+[a-z_]+\s+SET\b|PRAGMA\s+[a-z_]+|rusqlite\b)",
    )
    .unwrap();
    let files: Vec<Source> = sources(root, dirs)
        .into_iter()
        .filter(|f| !f.rel.starts_with(journal))
        .collect();
    judge(&files, allowed, |f| {
        let text = code(&f.text);
        sql.find(&text).map(|m| {
            format!(
                "`{}`: SQL lives in {journal}; read through the journal's API",
                m.as_str().trim()
            )
        })
    })
}

/// A figure someone measured: a number with a unit of time, size, ratio or
/// share, told as approximate (`~`, about, some), with decimals, as a range,
/// or as a percentage or a multiple. A setting's plain value (`a 200 ms
/// deadline`, `16 MiB`) is not one.
fn measured() -> Regex {
    let unit = r"(?:[µu]s|ns|ms|s|[KMG]i?B|kB)\b";
    Regex::new(&format!(
        r"(?:~|≈|\b(?:about|around|some|roughly|nearly|almost)\s)\s*\d[\d,.]*\s*{unit}|\b\d+\.\d+\s*{unit}|\b\d+(?:\.\d+)?\s*[–-]\s*\d+(?:\.\d+)?\s*{unit}|\b\d+(?:\.\d+)?\s*(?:%|×|x\b)"
    ))
    .unwrap()
}

fn figures(root: &Path, dirs: &[&str], allowed: &[&str]) -> Vec<String> {
    let figure = measured();
    let comment = Regex::new(r"(?m)(?:^|\s)//[/!]?(.*)$").unwrap();
    judge(&sources(root, dirs), allowed, |f| {
        let hits: Vec<String> = f
            .text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let c = comment.captures(line)?;
                let m = figure.find(&c[1])?;
                Some(format!("line {} `{}`", i + 1, m.as_str().trim()))
            })
            .collect();
        (!hits.is_empty()).then(|| {
            format!(
                "{}: a measured figure goes to docs/performance.md or docs/reliability.md",
                hits.join(", ")
            )
        })
    })
}

/// A crate in a temp dir: `files` written under it, paths from the root.
fn planted(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let file = dir.path().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
    dir
}

#[test]
fn the_checker_sees_a_file_over_600_lines_and_a_stale_or_gone_exception() {
    let long = "fn f() {}\n".repeat(601);
    let fits = "fn f() {}\n".repeat(600);
    let dir = planted(&[("src/long.rs", &long), ("src/fits.rs", &fits)]);
    assert_eq!(
        long_files(dir.path(), &["src"], &[]),
        ["src/long.rs: 601 lines: split it by concept (at most 600)"]
    );
    assert!(long_files(dir.path(), &["src"], &["src/long.rs: planted"]).is_empty());
    assert_eq!(
        long_files(
            dir.path(),
            &["src"],
            &["src/long.rs: planted", "src/fits.rs: why"]
        ),
        ["src/fits.rs keeps the rule now: take it off the list (why)"]
    );
    assert_eq!(
        long_files(
            dir.path(),
            &["src"],
            &["src/long.rs: planted", "src/gone.rs: moved"]
        ),
        ["src/gone.rs is on the list but is gone: take it off (moved)"]
    );
}

#[test]
fn the_checker_sees_a_public_string_error_over_several_lines() {
    let dir = planted(&[(
        "src/lib.rs",
        "pub(crate) fn inner() -> Result<(), String> { Ok(()) }\n\
         fn private() -> Result<(), String> { Ok(()) }\n\
         pub fn typed() -> Result<Vec<(u8, String)>, Error> { todo!() }\n\
         pub fn read(\n    path: &Path,\n) -> Result<\n    HashMap<String, u8>,\n    String,\n> {\n    todo!()\n}\n\
         pub type Parsed<T> = std::result::Result<T, String>;\n\
         #[cfg(test)]\nfn only_in_tests() {}\n\
         pub fn after() -> Result<u8, String> { Ok(1) }\n\
         #[cfg(test)]\nmod tests { pub fn helper() -> Result<(), String> { Ok(()) } }\n",
    )]);
    assert_eq!(
        string_errors(dir.path(), &["src"], &[]),
        [
            "src/lib.rs: `read`, `after`, `Parsed` public with a `Result<_, String>`: give it a typed error (thiserror)"
        ]
    );
}

#[test]
fn the_checker_sees_sql_outside_the_journal() {
    let query = "pub fn n(db: &Db) -> u64 {\n    db.query(\"SELECT count(*) FROM events\")\n}\n";
    let dir = planted(&[
        ("src/journal/read.rs", query),
        ("src/report.rs", query),
        (
            "src/words.rs",
            "// SELECT is a word in comments\nconst S: &str = \"Select a hook\";\n",
        ),
    ]);
    assert_eq!(
        sql_elsewhere(dir.path(), &["src"], "src/journal/", &[]),
        ["src/report.rs: `SELECT c`: SQL lives in src/journal/; read through the journal's API"]
    );
}

#[test]
fn the_checker_sees_a_measured_figure_in_a_comment() {
    let dir = planted(&[
        (
            "src/slow.rs",
            "/// Parsing took ~12 ms on a laptop.\nfn a() {}\nfn b() {} // 0.27 ms each\n// 3× faster\n",
        ),
        (
            "src/settings.rs",
            "/// Deliveries get a 200 ms deadline; reads stop at 16 MiB.\nconst X: u32 = 2; // two threads\n",
        ),
    ]);
    assert_eq!(
        figures(dir.path(), &["src"], &[]),
        [
            "src/slow.rs: line 1 `~12 ms`, line 3 `0.27 ms`, line 4 `3×`: a measured figure goes to docs/performance.md or docs/reliability.md"
        ]
    );
}

#[test]
fn the_checker_sees_a_module_doc_over_20_lines() {
    let long = "//! A line.\n".repeat(21) + "fn f() {}\n";
    let fits = "//! A line.\n".repeat(20) + "fn f() {}\n";
    let dir = planted(&[("src/diary.rs", &long), ("src/doc.rs", &fits)]);
    assert_eq!(
        long_docs(dir.path(), &["src"], &[]),
        ["src/diary.rs: a module doc of 21 lines: at most 20 (history goes to an ADR or git log)"]
    );
}
