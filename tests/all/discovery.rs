//! Discovery: slugs from paths, and every rejected layout named with its fix.

use std::fs;

use hookrt::hooks::{SourceKind, discover};

use crate::common::TempAgent;

#[test]
fn files_crates_and_components_get_path_slugs() {
    let agent = TempAgent::new()
        .file("hooks/audit.rs", "")
        .file("hooks/observability/metrics.rs", "")
        .file("hooks/policy/Cargo.toml", "[package]\nname = \"policy\"\n")
        .file("hooks/policy/src/lib.rs", "")
        .file("hooks/policy/src/helper.rs", "")
        .file("hooks/alerts.wasm", "")
        .file("hooks/timer.ts", "")
        .file("hooks/js/legacy.js", "")
        .file("hooks/README.md", "notes");
    let d = discover(agent.path()).expect("valid layout");
    let found: Vec<(&str, SourceKind)> =
        d.hooks.iter().map(|h| (h.slug.as_str(), h.kind)).collect();
    assert_eq!(
        found,
        [
            ("alerts", SourceKind::Component),
            ("audit", SourceKind::SingleFile),
            ("js/legacy", SourceKind::TypeScript),
            ("observability/metrics", SourceKind::SingleFile),
            ("policy", SourceKind::Crate),
            ("timer", SourceKind::TypeScript),
        ]
    );
    assert_eq!(d.ignored, [agent.path().join("hooks/README.md")]);
}

#[test]
fn every_unsafe_layout_is_reported_at_once_with_path_and_fix() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("evil.rs"), "").unwrap();
    let agent = TempAgent::new()
        .file("hooks/ok.rs", "")
        .file("hooks/audit.rs", "")
        .file("hooks/audit.wasm", "")
        .file("hooks/..sneaky.rs", "")
        .file("hooks/.hidden.rs", "")
        .file("hooks/Upper.rs", "")
        .file(&format!("hooks/{}.rs", "x".repeat(65)), "")
        .file("hooks/a/b/c/d/e/f/g/h/i.rs", "")
        .file("hooks/channels/slack.rs", "")
        .file("channels/web.rs", "");
    std::os::unix::fs::symlink(
        outside.path().join("evil.rs"),
        agent.path().join("hooks/escape.rs"),
    )
    .unwrap();

    let problems = discover(agent.path()).expect_err("layout is unsafe").0;
    let rel = |p: &std::path::Path| p.strip_prefix(agent.path()).unwrap().display().to_string();
    let mut got: Vec<(String, String)> = problems
        .iter()
        .map(|p| (rel(&p.path), p.message.clone()))
        .collect();
    got.sort();
    let expect = [
        ("channels", "a `channels/` folder is not supported"),
        (
            "hooks/..sneaky.rs",
            "unsafe slug `..sneaky`: segment `..sneaky` is a relative-path component",
        ),
        (
            "hooks/.hidden.rs",
            "unsafe slug `.hidden`: segment `.hidden` is hidden",
        ),
        (
            "hooks/Upper.rs",
            "unsafe slug `Upper`: segment `Upper` has `U`",
        ),
        (
            "hooks/a/b/c/d/e/f/g/h/i.rs",
            "unsafe slug `a/b/c/d/e/f/g/h/i`: slug nests deeper than 8 folders",
        ),
        ("hooks/audit.wasm", "duplicate slug `audit`"),
        ("hooks/channels", "a `channels/` folder is not supported"),
        ("hooks/escape.rs", "symlink leaves the hooks folder"),
    ];
    assert_eq!(
        got.len(),
        expect.len() + 1,
        "one problem per bad entry: {got:#?}"
    );
    for (path, msg) in expect {
        assert!(
            got.iter().any(|(p, m)| p == path && m.starts_with(msg)),
            "missing `{path}: {msg}` in {got:#?}"
        );
    }
    assert!(
        got.iter()
            .any(|(p, m)| p.starts_with("hooks/xxxx") && m.contains("longer than 64")),
        "{got:#?}"
    );
    assert!(
        problems.iter().all(|p| !p.fix.is_empty()),
        "every problem says how to fix it"
    );
}

#[test]
fn symlinked_hook_inside_the_folder_is_accepted() {
    let agent = TempAgent::new().file("hooks/shared/impl.rs", "");
    std::os::unix::fs::symlink(
        agent.path().join("hooks/shared/impl.rs"),
        agent.path().join("hooks/alias.rs"),
    )
    .unwrap();
    let d = discover(agent.path()).expect("link stays inside hooks/");
    let slugs: Vec<&str> = d.hooks.iter().map(|h| h.slug.as_str()).collect();
    assert_eq!(slugs, ["alias", "shared/impl"]);
}

#[test]
fn missing_hooks_folder_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let problems = discover(dir.path()).expect_err("no hooks/").0;
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].message, "no hooks folder");
}

/// The problems of a layout that must not be accepted, as `(path, message)`.
fn problems_of(agent: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let problems = discover(agent).expect_err("the layout is refused");
    problems
        .0
        .into_iter()
        .map(|p| (p.path, p.message))
        .collect()
}

#[test]
fn a_primary_hook_spelling_a_subagent_hooks_id_is_refused_with_both_paths() {
    let agent = TempAgent::new()
        .file("hooks/subagents/researcher/policy.rs", "")
        .file("subagents/researcher/hooks/policy.rs", "");
    let primary = agent.path().join("hooks/subagents/researcher/policy.rs");
    let sub = agent.path().join("subagents/researcher/hooks/policy.rs");
    assert_eq!(
        problems_of(agent.path()),
        [(
            sub,
            format!(
                "hook id `subagents/researcher/policy` is also the id of {}: lookups by id could not tell them apart",
                primary.display()
            )
        )]
    );
}

#[test]
fn a_symlinked_hooks_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("evil.rs"), "").unwrap();
    let agent = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), agent.path().join("hooks")).unwrap();
    assert_eq!(
        problems_of(agent.path()),
        [(
            agent.path().join("hooks"),
            "is a symlink: hook folders must be real folders inside the agent folder".to_owned()
        )]
    );
}

#[test]
fn symlinked_subagent_folders_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(outside.path().join("hooks")).unwrap();
    fs::write(outside.path().join("hooks/evil.rs"), "").unwrap();
    let agent = TempAgent::new()
        .file("hooks/ok.rs", "")
        .file("subagents/writer/x.txt", "");
    std::os::unix::fs::symlink(outside.path(), agent.path().join("subagents/researcher")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("hooks"),
        agent.path().join("subagents/writer/hooks"),
    )
    .unwrap();
    let why = "is a symlink: hook folders must be real folders inside the agent folder";
    assert_eq!(
        problems_of(agent.path()),
        [
            (agent.path().join("subagents/researcher"), why.to_owned()),
            (agent.path().join("subagents/writer/hooks"), why.to_owned()),
        ]
    );
}

#[test]
fn a_symlink_leaving_a_crate_hooks_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "host secret").unwrap();
    let agent = TempAgent::new()
        .file("hooks/policy/Cargo.toml", "[package]\nname = \"policy\"\n")
        .file("hooks/policy/src/lib.rs", "")
        .file("hooks/policy/src/inner.txt", "");
    let src = agent.path().join("hooks/policy/src");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), src.join("secret.txt")).unwrap();
    // A link that stays inside the crate is fine.
    std::os::unix::fs::symlink(src.join("inner.txt"), src.join("alias.txt")).unwrap();
    assert_eq!(
        problems_of(agent.path()),
        [(
            src.join("secret.txt"),
            "symlink leaves the crate hook's folder (or is broken)".to_owned()
        )]
    );
}

#[test]
fn code_hookrt_cannot_run_under_hooks_is_refused_not_skipped() {
    let agent = TempAgent::new()
        .hook("agent/hooks/audit.rs", "audit.rs")
        .file("hooks/alerts.sh", "echo alert")
        .file("hooks/notes/README.md", "# notes");
    let problems = hookrt::hooks::discover(agent.path()).expect_err("a .sh hook is refused");
    assert_eq!(problems.0.len(), 1);
    let p = &problems.0[0];
    assert_eq!(p.kind, hookrt::ProblemKind::Layout);
    assert_eq!(p.path, agent.path().join("hooks/alerts.sh"));
    assert_eq!(
        p.message,
        "`.sh` is not a kind of hook hookrt runs: hooks are WebAssembly components"
    );
    assert!(
        p.fix.starts_with(
            "write the hook in Rust (a .rs file or a crate with hookrt-sdk), TypeScript"
        )
    );
}

/// A `.py` file is a Python hook, and so is a folder with `__init__.py`
/// (one hook, not gone into: its modules are the hook's own).
#[test]
fn a_py_file_and_a_package_folder_are_python_hooks() {
    let agent = TempAgent::new()
        .file("hooks/alerts.py", "import hookrt")
        .file("hooks/team/guard/__init__.py", "from . import rules")
        .file("hooks/team/guard/rules.py", "RULES = []");
    let found = hookrt::hooks::discover(agent.path()).unwrap();
    let hooks: Vec<(String, hookrt::hooks::SourceKind)> = found
        .hooks
        .iter()
        .map(|h| (h.slug.to_string(), h.kind))
        .collect();
    assert_eq!(
        hooks,
        [
            ("alerts".to_owned(), hookrt::hooks::SourceKind::Python),
            ("team/guard".to_owned(), hookrt::hooks::SourceKind::Python),
        ]
    );
}

#[test]
fn ten_thousand_hook_files_are_refused_at_discovery_before_anything_is_built() {
    let agent = TempAgent::new();
    for i in 0..10_000 {
        fs::write(agent.path().join(format!("hooks/h{i:05}.rs")), "").unwrap();
    }
    assert_eq!(hookrt::hooks::MAX_HOOKS, 1024);
    assert_eq!(
        problems_of(agent.path()),
        [(
            agent.path().to_path_buf(),
            "more than 1024 hooks; discovery stopped there and nothing was built".to_owned()
        )]
    );
}

#[test]
fn a_tree_a_thousand_folders_deep_is_read_to_the_slug_depth_only() {
    let agent = TempAgent::new().file("hooks/ok.rs", "");
    let mut deep = agent.path().join("hooks");
    for _ in 0..1000 {
        deep.push("d");
    }
    fs::create_dir_all(&deep).unwrap();
    fs::write(deep.join("bottom.rs"), "").unwrap();
    let ninth: std::path::PathBuf = ["hooks", "d", "d", "d", "d", "d", "d", "d", "d", "d"]
        .iter()
        .collect();
    assert_eq!(
        problems_of(agent.path()),
        [(
            agent.path().join(ninth),
            "folder nests deeper than 8 folders: no hook can be inside it, so it was not read"
                .to_owned()
        )]
    );
}

#[test]
fn a_planted_tree_of_many_files_is_read_to_the_entry_cap_only() {
    let agent = TempAgent::new().file("hooks/ok.rs", "");
    let notes = agent.path().join("hooks/notes");
    fs::create_dir(&notes).unwrap();
    for i in 0..hookrt::hooks::MAX_ENTRIES {
        fs::write(notes.join(format!("n{i}.txt")), "").unwrap();
    }
    assert_eq!(
        problems_of(agent.path()),
        [(
            agent.path().join("hooks"),
            "holds more than 100000 files and folders; discovery stopped there".to_owned()
        )]
    );
}

#[test]
fn control_characters_look_alikes_and_bytes_that_are_not_utf8_in_names_are_refused() {
    use std::os::unix::ffi::OsStrExt;
    let agent = TempAgent::new()
        .file("hooks/\u{0430}udit.rs", "") // Cyrillic а, looks like `audit`
        .file("hooks/tab\there.rs", "")
        .file("hooks/new\nline.rs", "")
        .file("hooks/zero\u{200b}width.rs", "")
        .file("hooks/audit.rs", "");
    let raw = agent
        .path()
        .join("hooks")
        .join(std::ffi::OsStr::from_bytes(b"bad\xffname.rs"));
    fs::write(&raw, "").unwrap();
    let mut got = problems_of(agent.path());
    got.sort();
    let hooks = agent.path().join("hooks");
    let mut want = vec![
        (
            hooks.join("\u{0430}udit.rs"),
            "unsafe slug `\u{0430}udit`: segment `\u{0430}udit` has `\u{0430}`; only lowercase letters, digits, `_` and `-` are allowed".to_owned(),
        ),
        (raw, "path is not valid UTF-8".to_owned()),
        (
            hooks.join("new\nline.rs"),
            "unsafe slug `new\\nline`: segment `new\\nline` has `\\n`; only lowercase letters, digits, `_` and `-` are allowed".to_owned(),
        ),
        (
            hooks.join("tab\there.rs"),
            "unsafe slug `tab\\there`: segment `tab\\there` has `\\t`; only lowercase letters, digits, `_` and `-` are allowed".to_owned(),
        ),
        (
            hooks.join("zero\u{200b}width.rs"),
            "unsafe slug `zero\\u{200b}width`: segment `zero\\u{200b}width` has `\\u{200b}`; only lowercase letters, digits, `_` and `-` are allowed".to_owned(),
        ),
    ];
    want.sort();
    assert_eq!(got, want);
}
