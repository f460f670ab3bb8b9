//! The docs, checked against the tree: every test a document cites exists,
//! and docs/README.md's map names every module and every package.

use std::fs;
use std::path::Path;

use regex::Regex;

use super::{files_with, modules_of, repo};

/// Every test a document names (`all/file.rs::test_name`, `cli/file.rs::test_name`, `serve/file.rs::test_name`,
/// optionally under `tests/`) exists, so a claim never cites a test that is gone.
#[test]
fn the_docs_name_only_tests_that_exist() {
    let cite = Regex::new(r"(?:tests/)?((?:all|cli|serve)/[a-z_]+\.rs)::([a-z0-9_]+)").unwrap();
    let mut docs = Vec::new();
    files_with(&repo().join("docs"), "md", &mut docs);
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

/// The backticked names of a markdown table cell: `` `hooks/` ``, `` `folder/slug.rs` ``.
fn names_in(cell: &str) -> Vec<String> {
    Regex::new(r"`([^`]+)`")
        .unwrap()
        .captures_iter(cell)
        .map(|c| c[1].to_owned())
        .collect()
}

/// The rows of docs/README.md's table headed `header` (it must be there).
fn table_rows(text: &str, header: &str) -> Vec<Vec<String>> {
    let rows = crate::markdown::table_after(text, header);
    assert!(
        !rows.is_empty(),
        "docs/README.md has no table headed {header:?}"
    );
    rows
}

/// A module file's name in the map: its path under its layer's folder, a
/// folder module as `folder/`.
fn map_name(rel: &Path) -> String {
    let text = rel.to_string_lossy().into_owned();
    match text.strip_suffix("/mod.rs") {
        Some(folder) => format!("{folder}/"),
        None => text,
    }
}

/// docs/README.md's map names every module of the library in its layer's row,
/// every package with each of its modules, and lib.rs's map names every
/// layer: a module or package added without a place in the map fails here.
#[test]
fn the_docs_map_names_every_module_and_every_package() {
    let map = fs::read_to_string(repo().join("docs/README.md")).unwrap();
    let mut missing = Vec::new();

    // The library's layers.
    let layers = table_rows(
        &map,
        "| layer | folder | what lives there | glossary words |",
    );
    let src = repo().join("runtime/core/src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let lib_map: Vec<String> = lib
        .lines()
        .filter(|l| l.starts_with("//! |"))
        .flat_map(names_in)
        .collect();
    for m in modules_of(&src).iter().filter(|m| !m.container) {
        let rel = m.file.strip_prefix(&src).unwrap();
        let mut parts = rel.iter();
        let first = parts.next().unwrap().to_string_lossy().into_owned();
        let (layer, name) = if rel.components().count() == 1 {
            (first.clone(), first)
        } else {
            let layer = format!("{first}/");
            (layer, map_name(parts.as_path()))
        };
        if !lib_map.contains(&layer) {
            missing.push(format!("lib.rs's map has no `{layer}`"));
        }
        let row = layers.iter().find(|r| {
            r.get(1)
                .is_some_and(|folder| names_in(folder).contains(&layer))
        });
        match row {
            None => missing.push(format!("docs/README.md's layers have no row for `{layer}`")),
            Some(row) if !row.iter().any(|cell| names_in(cell).contains(&name)) => {
                missing.push(format!(
                    "the `{layer}` row does not name `{name}` ({})",
                    m.name
                ));
            }
            Some(_) => {}
        }
    }

    // The packages: every workspace member and the path dependencies inside it.
    let packages = table_rows(&map, "| package | folder | modules |");
    let root = fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let members = Regex::new(r"(?m)^members\s*=\s*\[([^\]]*)\]").unwrap();
    let mut folders: Vec<String> = names_of_list(&members.captures(&root).expect("members")[1]);
    let path_dep = Regex::new(r#"path\s*=\s*"([^"]+)""#).unwrap();
    for folder in folders.clone() {
        let manifest = fs::read_to_string(repo().join(&folder).join("Cargo.toml")).unwrap();
        for c in path_dep.captures_iter(&manifest) {
            let dir = repo().join(&folder).join(&c[1]);
            if let Ok(dir) = dir.canonicalize()
                && let Ok(rel) = dir.strip_prefix(repo().canonicalize().unwrap())
                && dir.join("Cargo.toml").exists()
            {
                let rel = rel.to_string_lossy().into_owned();
                if !folders.contains(&rel) {
                    folders.push(rel);
                }
            }
        }
    }
    assert!(folders.len() >= 7, "the workspace's packages: {folders:?}");
    for folder in &folders {
        let Some(row) = packages
            .iter()
            .find(|r| r.get(1).is_some_and(|f| names_in(f).contains(folder)))
        else {
            missing.push(format!(
                "docs/README.md's packages have no row for `{folder}`"
            ));
            continue;
        };
        if folder == "runtime/core" || folder == "tests" {
            continue;
        }
        let src = repo().join(folder).join("src");
        let named = names_in(row.get(2).map_or("", String::as_str));
        for m in modules_of(&src).iter().filter(|m| !m.container) {
            let name = map_name(m.file.strip_prefix(&src).unwrap());
            if !named.contains(&name) {
                missing.push(format!("the `{folder}` row does not name `{name}`"));
            }
        }
        if src.join("lib.rs").exists()
            && modules_of(&src).is_empty()
            && !named.contains(&"lib.rs".to_owned())
        {
            missing.push(format!("the `{folder}` row does not name `lib.rs`"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/README.md's map (or lib.rs's) misses part of the tree:\n- {}",
        missing.join("\n- ")
    );
}

/// The strings of a TOML list's text: `"a", "b"`.
fn names_of_list(list: &str) -> Vec<String> {
    Regex::new(r#""([^"]+)""#)
        .unwrap()
        .captures_iter(list)
        .map(|c| c[1].to_owned())
        .collect()
}
