//! The layering rule, checked: in every crate of the workspace, a module
//! imports only modules listed before it, so there is no import circle and no
//! arrow climbs back up a layer. And the map, checked (`docs`): docs/README.md
//! names every module of the library in its layer and every package with its
//! modules, and lib.rs's map names every layer. And the contracts, checked
//! (`contracts`): typed errors, SQL in the journal, no figures in comments,
//! short module docs, short files.
//!
//! Each crate's order is in `architecture/layers.rs`, a nested module by its whole path
//! (`hooks::folder::slug`): a new module fails this test until it has a
//! place in its layer and in the map (a `mod.rs` that only declares and
//! re-exports needs none). References are `use crate::…`, `crate::…`,
//! `super::…` and `self::…` paths; a name re-exported by `lib.rs` or a
//! `mod.rs` is traced to its module, so a re-export cannot hide an arrow.
//! Unit-test modules (`#[cfg(test)] mod tests`) are not counted.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

#[path = "architecture/checker.rs"]
mod checker;
#[path = "architecture/contracts.rs"]
mod contracts;
#[path = "architecture/docs.rs"]
mod docs;
#[path = "architecture/layers.rs"]
mod layers;
#[path = "all/markdown.rs"]
mod markdown;
#[path = "architecture/packs.rs"]
mod packs;
#[path = "architecture/paths.rs"]
mod paths;

use layers::{CLI, CLIENT, MCP, OTEL, RUNTIME, SDK, SERVE, WORKER};
use paths::{resolve_path, target_of};

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
fn the_mcp_interceptor_server_imports_only_from_earlier_modules() {
    check(&repo().join("runtime/mcp/src"), MCP);
}

#[test]
fn the_thin_client_imports_only_from_earlier_modules() {
    check(&repo().join("runtime/client/src"), CLIENT);
}

#[test]
fn the_telemetry_export_imports_only_from_earlier_modules() {
    check(&repo().join("runtime/otel/src"), OTEL);
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

/// A module's name: its path under `src` joined by `::` (`hooks::folder::slug`);
/// a folder's `mod.rs` is named after the folder (`sandbox::wit`, `hooks`).
/// `lib.rs` has none.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [] => None,
        [one] if one == "lib" => None,
        _ => Some(parts.join("::")),
    }
}

/// A folder's `mod.rs` that only declares and re-exports its children: a
/// container, which needs no place in the order.
fn is_container(file: &Path, text: &str) -> bool {
    if file.file_name().is_none_or(|n| n != "mod.rs") {
        return false;
    }
    let items = Regex::new(
        r"(?s)#!?\[[^\]]*\]|(?:pub(?:\([a-z]+\))?\s+)?(?:mod\s+[A-Za-z0-9_]+|use\s+[^;]*);",
    )
    .unwrap();
    items.replace_all(text, "").trim().is_empty()
}

/// The `.rs` files under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with(dir, "rs", out);
}

/// The files under `dir` whose extension is `ext`, build outputs, fuzz
/// corpora and node packages left out.
fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != "corpus" && name != "node_modules" {
                files_with(&p, ext, out);
            }
        } else if p.extension().is_some_and(|x| x == ext) {
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

/// One module of a crate: its file, its name, and whether it only gathers
/// its children.
struct Module {
    file: PathBuf,
    name: String,
    is_folder: bool,
    container: bool,
}

fn modules_of(src: &Path) -> Vec<Module> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let name = module_of(src, &file)?;
            let text = code(&fs::read_to_string(&file).unwrap());
            Some(Module {
                container: is_container(&file, &text),
                is_folder: file.file_name().is_some_and(|n| n == "mod.rs"),
                file,
                name,
            })
        })
        .collect()
}

fn violations(src: &Path, order: &[&str]) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let modules = modules_of(src);
    let known: Vec<String> = modules.iter().map(|m| m.name.clone()).collect();
    let mut found = Vec::new();
    for m in &modules {
        if !m.container && !rank.contains_key(m.name.as_str()) {
            found.push(format!(
                "{} has no place in the order: add it to its layer",
                m.name
            ));
        }
    }

    // Names re-exported by lib.rs and folder mod.rs files, traced to their module.
    let reexport = Regex::new(
        r"pub(?:\([a-z]+\))?\s+use\s+([A-Za-z0-9_:]+?)(?:::\{([^}]*)\}|::([A-Za-z0-9_]+))\s*;",
    )
    .unwrap();
    let mut names: BTreeMap<(String, String), String> = BTreeMap::new();
    let top = PathBuf::from(src).join("lib.rs");
    let containers = modules
        .iter()
        .filter(|m| m.is_folder)
        .map(|m| (m.file.clone(), m.name.clone()))
        .chain(std::iter::once((top.clone(), String::new())))
        .filter(|(file, _)| file.exists());
    for (file, container) in containers {
        let text = code(&fs::read_to_string(&file).unwrap());
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
    for m in &modules {
        if m.container {
            continue;
        }
        let me = &m.name;
        let text = code(&fs::read_to_string(&m.file).unwrap());
        let own: Vec<String> = me.split("::").map(str::to_owned).collect();
        // A file's `self` and `super` are its folder; a mod.rs's `self` is
        // its folder and its `super` the folder above.
        let base = |kind: &str| -> Vec<String> {
            let up = match kind {
                "crate" => return Vec::new(),
                "self" if m.is_folder => 0,
                _ => 1,
            };
            own[..own.len().saturating_sub(up)].to_vec()
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
