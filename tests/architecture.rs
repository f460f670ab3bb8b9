//! The layering rule, checked: in every crate of the workspace, a module
//! imports only modules listed before it, so there is no import circle and no
//! arrow climbs back up a layer.
//!
//! Each crate's order is written below. A new module fails this test until it
//! is given a place in its layer: that is where a reader learns the design.
//! References are found in `use crate::…`, `crate::…` paths, `super::…` and
//! `self::…` in folder modules; names re-exported by `lib.rs` or a `mod.rs`
//! are traced to the module that defines them, so a re-export cannot hide an
//! arrow. Unit-test modules (`#[cfg(test)] mod tests`) are not counted.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// The library, bottom layer first (docs/README.md draws the same map).
const RUNTIME: &[&str] = &[
    // event/: the vocabulary and the records every layer speaks; no Wasmtime.
    "event::kind",
    "event::data",
    "event::envelope",
    "event::ordinal",
    "event::eve",
    "event::claude",
    "event::scope",
    "event::answer",
    // sandbox/: the one owner of Wasmtime and of everything a hook can import.
    "sandbox::wit",
    "sandbox::outcome",
    "sandbox::limits",
    "sandbox::redaction",
    "sandbox::capture",
    "sandbox::grants",
    "sandbox::http",
    "sandbox::egress",
    "sandbox::bounded",
    "sandbox::state",
    "sandbox::metrics",
    "sandbox::host",
    "sandbox::engine",
    // hooks/: from an agent folder to loaded, ordered hooks.
    "hooks::problem",
    "hooks::slug",
    "hooks::discovery",
    "hooks::settings",
    "hooks::config",
    "hooks::digest",
    "hooks::cache_dir",
    "hooks::stamp",
    "hooks::cargo",
    "hooks::typescript",
    "hooks::build",
    "hooks::cache",
    "hooks::start",
    "hooks::load",
    "hooks::lock",
    "hooks::call",
    "hooks::registry",
    // delivery/: one event through its hooks.
    "delivery::decision",
    "delivery::threads",
    "delivery::edit",
    "delivery::record",
    "delivery::cascade",
    "delivery::dispatch",
    "delivery::retry",
    // the facade.
    "runtime",
    "audit",
    "replay",
    // service/: the runtime in the background.
    "service::owner",
    "service::journal",
    "service::report",
    "service::work",
    "service::lanes",
    "service::dispatcher",
    "service::writer",
    "service::api",
    // front/: what every front end shares.
    "front::input",
    "front::line",
];

/// The guest SDK.
const SDK: &[&str] = &[
    "error",
    "agent_input",
    "events",
    "eve",
    "event",
    "response",
    "idempotency",
    "log",
    "metrics",
    "state",
    "define_hook",
    "hook",
];

/// The `hookrt` command.
const CLI: &[&str] = &[
    "args",
    "claude",
    "retention",
    "journal",
    "run",
    "serve",
    "worker",
    "export",
    "new",
    "new_ts",
    "replay",
    "main",
];

/// The HTTP server (`hookrt serve`).
const SERVE: &[&str] = &[
    "error",
    "auth",
    "metrics",
    "ingest",
    "fail_closed",
    "tally",
    "reload",
    "routes",
];

/// The JetStream worker (`hookrt worker`): subjects, the shared JetStream
/// objects, publishing, completion marks, leases, dead letters, then the
/// per-partition consumer that uses them all.
const WORKER: &[&str] = &[
    "subject",
    "fleet",
    "publish",
    "completion",
    "lease",
    "dead",
    "partition",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

#[test]
fn the_library_imports_only_from_earlier_layers() {
    check(&repo().join("runtime/core/src"), RUNTIME);
}

#[test]
fn the_guest_sdk_imports_only_from_earlier_modules() {
    check(&repo().join("guest-sdk/src"), SDK);
}

#[test]
fn the_cli_imports_only_from_earlier_modules() {
    check(&repo().join("runtime/cli/src"), CLI);
}

#[test]
fn the_http_server_imports_only_from_earlier_modules() {
    check(&repo().join("runtime/serve/src"), SERVE);
}

#[test]
fn the_jetstream_worker_imports_only_from_earlier_modules() {
    check(&repo().join("runtime/worker/src"), WORKER);
}

#[test]
fn the_checker_sees_a_circle_through_a_re_export() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    fs::write(src.join("lib.rs"), "mod a;\nmod b;\npub use a::Thing;\n").unwrap();
    fs::write(
        src.join("a.rs"),
        "pub struct Thing;\nuse crate::b::Other;\n",
    )
    .unwrap();
    fs::write(
        src.join("b.rs"),
        "pub struct Other;\nfn f(_: crate::Thing) {}\n",
    )
    .unwrap();
    let found = violations(src, &["a", "b"]);
    assert_eq!(found, vec!["a imports b, which comes after it".to_owned()]);
}

/// Fails with every violation in `src`, given the modules' order.
fn check(src: &Path, order: &[&str]) {
    let found = violations(src, order);
    assert!(
        found.is_empty(),
        "{} breaks the layering (tests/architecture.rs lists the order):\n- {}",
        src.display(),
        found.join("\n- ")
    );
}

/// A module's name: `layer::file` for a file in a folder module (files of a
/// deeper folder count as that folder), the file's stem at the top.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    match parts.as_slice() {
        [one] if one == "lib" => None,
        [one] => Some(one.clone()),
        [layer, file] if file == "mod" => Some(format!("{layer}::mod")),
        [layer, file, ..] => Some(format!("{layer}::{file}")),
        [] => None,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Source without comments and without the unit-test module.
fn code(text: &str) -> String {
    let no_comments = Regex::new(r"//[^\n]*").unwrap().replace_all(text, "");
    match no_comments.find("#[cfg(test)]") {
        Some(i) => no_comments[..i].to_owned(),
        None => no_comments.into_owned(),
    }
}

fn violations(src: &Path, order: &[&str]) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeMap<PathBuf, Option<String>> = files
        .iter()
        .map(|f| (f.clone(), module_of(src, f)))
        .collect();
    let known: Vec<String> = modules.values().flatten().cloned().collect();
    let mut found = Vec::new();
    for m in &known {
        if !m.ends_with("::mod") && !rank.contains_key(m.as_str()) {
            found.push(format!(
                "{m} has no place in the order: add it to its layer"
            ));
        }
    }

    // Names re-exported by lib.rs and folder mod.rs files, traced to their module.
    let reexport = Regex::new(
        r"pub(?:\([a-z]+\))?\s+use\s+([A-Za-z0-9_:]+?)(?:::\{([^}]*)\}|::([A-Za-z0-9_]+))\s*;",
    )
    .unwrap();
    let mut names: BTreeMap<(String, String), String> = BTreeMap::new();
    for (file, module) in &modules {
        let container = match module {
            None => String::new(),
            Some(m) if m.ends_with("::mod") => m.trim_end_matches("::mod").to_owned(),
            Some(_) => continue,
        };
        let text = code(&fs::read_to_string(file).unwrap());
        for c in reexport.captures_iter(&text) {
            let base = c[1]
                .trim_start_matches("crate::")
                .trim_start_matches("self::");
            let target = resolve_path(base, &container, &known);
            let Some(target) = target else { continue };
            let list = c.get(2).or(c.get(3)).map_or("", |m| m.as_str());
            for item in list.split(',') {
                let item = item.trim();
                let name = item.rsplit(" as ").next().unwrap_or(item).trim();
                if !name.is_empty() {
                    names.insert((container.clone(), name.to_owned()), target.clone());
                }
            }
        }
    }

    let path = Regex::new(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)").unwrap();
    let group =
        Regex::new(r"(?s)\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{(.*?)\};")
            .unwrap();
    for (file, module) in &modules {
        let Some(me) = module else { continue };
        if me.ends_with("::mod") {
            continue;
        }
        let text = code(&fs::read_to_string(file).unwrap());
        let folder = me.split_once("::").map(|(l, _)| l.to_owned());
        let base = |kind: &str| -> Vec<String> {
            match (kind, &folder) {
                ("crate", _) => Vec::new(),
                // `super` of `layer::file` is `layer`; `self` only matters in mod.rs.
                (_, Some(l)) => vec![l.clone()],
                (_, None) => Vec::new(),
            }
        };
        let mut refs: Vec<Vec<String>> = Vec::new();
        for c in path.captures_iter(&text) {
            let mut segs = base(&c[1]);
            segs.extend(
                c[2].split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
            refs.push(segs);
        }
        for c in group.captures_iter(&text) {
            let mut pre = base(&c[1]);
            pre.extend(
                c[2].split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
            for item in c[3].split(',') {
                let item = item.trim().split(" as ").next().unwrap_or("").trim();
                let item = item.trim_matches(|ch| ch == '{' || ch == '}' || ch == ' ');
                if item.is_empty() {
                    continue;
                }
                let mut segs = pre.clone();
                segs.extend(
                    item.split("::")
                        .filter(|s| !s.is_empty() && *s != "self")
                        .map(str::to_owned),
                );
                refs.push(segs);
            }
        }
        let mut seen = Vec::new();
        for segs in refs {
            let Some(target) = target_of(&segs, &known, &names) else {
                continue;
            };
            if &target == me || seen.contains(&target) {
                continue;
            }
            seen.push(target.clone());
            if let (Some(a), Some(b)) = (rank.get(me.as_str()), rank.get(target.as_str()))
                && b > a
            {
                found.push(format!("{me} imports {target}, which comes after it"));
            }
        }
    }
    found
}

/// The module a `::`-path starting at `container` names, if it is one of ours.
fn resolve_path(path: &str, container: &str, known: &[String]) -> Option<String> {
    let mut segs: Vec<String> = Vec::new();
    if !container.is_empty()
        && !known
            .iter()
            .any(|k| k == path || k.starts_with(&format!("{path}::")))
    {
        segs.push(container.to_owned());
    }
    segs.extend(
        path.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    module_named(&segs, known)
}

fn module_named(segs: &[String], known: &[String]) -> Option<String> {
    if segs.len() >= 2 {
        let two = format!("{}::{}", segs[0], segs[1]);
        if known.contains(&two) {
            return Some(two);
        }
    }
    segs.first().filter(|s| known.contains(s)).cloned()
}

/// The module a reference lands in: a file module directly, or through a
/// re-export of lib.rs or a folder's mod.rs.
fn target_of(
    segs: &[String],
    known: &[String],
    names: &BTreeMap<(String, String), String>,
) -> Option<String> {
    if let Some(m) = module_named(segs, known) {
        return Some(m);
    }
    match segs {
        [name, ..] if names.contains_key(&(String::new(), name.clone())) => {
            names.get(&(String::new(), name.clone())).cloned()
        }
        [layer, name, ..] => names.get(&(layer.clone(), name.clone())).cloned(),
        _ => None,
    }
}

/// Every test a document names (`all/file.rs::test_name`, `cli/file.rs::test_name`, `serve/file.rs::test_name`,
/// optionally under `tests/`) exists, so a claim never cites a test that is gone.
#[test]
fn the_docs_name_only_tests_that_exist() {
    let cite = Regex::new(r"(?:tests/)?((?:all|cli|serve)/[a-z_]+\.rs)::([a-z0-9_]+)").unwrap();
    let mut docs = Vec::new();
    rust_files_and_markdown(&repo().join("docs"), &mut docs);
    docs.push(repo().join("README.md"));
    let mut missing = Vec::new();
    let mut cited = 0;
    for doc in docs {
        let text = fs::read_to_string(&doc).unwrap();
        for c in cite.captures_iter(&text) {
            cited += 1;
            let file = repo().join("tests").join(&c[1]);
            let found = fs::read_to_string(&file).is_ok_and(|t| {
                Regex::new(&format!(r"fn {}\b", &c[2]))
                    .unwrap()
                    .is_match(&t)
            });
            if !found {
                missing.push(format!("{}: {}::{}", doc.display(), &c[1], &c[2]));
            }
        }
    }
    assert!(cited > 50, "the docs cite their tests ({cited} found)");
    assert!(
        missing.is_empty(),
        "cited tests that do not exist:\n{}",
        missing.join("\n")
    );
}

fn rust_files_and_markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files_and_markdown(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}
