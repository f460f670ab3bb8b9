//! The `exec` grant through the `hookrt` binary: a hook ported from Claude
//! Code's format-on-edit example (`example-hooks/grants/hooks/format_on_edit.rs`)
//! runs the pinned toolchain's rustfmt on the file an edit names. The folder
//! does not load without a lock, a changed table is refused until locked
//! again, and `audit` lists what the hook may run.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::repo;
use crate::{hookrt_in as hookrt, rustfmt, text};

fn table(rustfmt: &Path, timeout_ms: u64) -> String {
    format!(
        "[hooks.\"format_on_edit\".grants]\nlog = {{}}\n\
         [hooks.\"format_on_edit\".grants.exec]\ntimeout_ms = {timeout_ms}\n\
         [hooks.\"format_on_edit\".grants.exec.programs.fmt]\npath = \"{}\"\n\
         args = [\"--edition\", \"2021\", \"{{file}}\"]\nplaceholders = {{ file = \"writable-path\" }}\n",
        rustfmt.display()
    )
}

/// A Claude Code `Write` of `a.rs`, as the bridge maps its `PostToolUse`.
fn edit_event(file: &Path) -> String {
    json!({
        "schema_version": 1, "id": "evt_fmt_1", "kind": "action.result",
        "timestamp": "2026-12-06T10:00:00Z",
        "coordinates": {"agent": "claude-code", "session": "s1", "turn": "t1", "step": "c1", "sequence": 1, "subagent": null},
        "data": {"call_id": "c1", "tool": "Write", "status": "ok", "output": {"filePath": file, "success": true}}
    })
    .to_string()
}

/// An agent folder with the format-on-edit hook and its exec table, and a
/// project holding a badly formatted `a.rs`; the file and the events naming it.
fn setup(agent: &Path, project: &Path, rustfmt: &Path) -> (PathBuf, PathBuf) {
    fs::create_dir(agent.join("hooks")).unwrap();
    fs::copy(
        repo().join("example-hooks/grants/hooks/format_on_edit.rs"),
        agent.join("hooks/format_on_edit.rs"),
    )
    .unwrap();
    fs::write(agent.join("hookrt.toml"), table(rustfmt, 60_000)).unwrap();
    let file = project.join("a.rs");
    fs::write(&file, "fn  main( ){ let x=1; }\n").unwrap();
    let events = project.join("events.jsonl");
    fs::write(&events, edit_event(&file) + "\n").unwrap();
    (file, events)
}

/// The delivery's `[hookrt] exec fmt` line: the file it was given, exit 0.
fn assert_the_use_is_recorded(stdout: &str, file: &Path) {
    let delivery: Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["hook"] == "format_on_edit")
        .expect("a delivery line");
    assert_eq!(delivery["outcome"], "ok", "{delivery}");
    let logs = delivery["logs"].as_array().expect("logs");
    let used = logs
        .iter()
        .find(|l| l["message"] == "[hookrt] exec fmt")
        .unwrap_or_else(|| panic!("the use is recorded: {delivery}"));
    let field = |key: &str| {
        used["fields"]
            .as_array()
            .and_then(|f| f.iter().find(|pair| pair[0] == key))
            .map(|pair| pair[1].clone())
    };
    assert_eq!(field("status"), Some(json!("0")), "{used}");
    assert_eq!(field("arg.file"), Some(json!(file)), "{used}");
}

#[test]
fn format_on_edit_runs_rustfmt_on_the_edited_file_only_once_locked() {
    let Some(rustfmt) = rustfmt() else {
        eprintln!("skipped: no rustfmt in the toolchain");
        return;
    };
    let (agent, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let project_dir = project.path().canonicalize().unwrap();
    let (file, events) = setup(agent.path(), &project_dir, &rustfmt);
    let dir = agent.path().to_str().unwrap();
    let run = |p: &Path| {
        hookrt(
            p,
            &["run", dir, "--events", events.to_str().unwrap(), "--logs"],
        )
    };

    // No lock: refused before anything runs.
    let out = run(&project_dir);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("hook `format_on_edit` holds the `exec` grant, whose table only a lock may vouch for, and there is no lock"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        "fn  main( ){ let x=1; }\n"
    );

    let out = hookrt(&project_dir, &["lock", dir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lock = fs::read_to_string(agent.path().join("hookrt.lock")).unwrap();
    // The program as resolved at load: its canonical path, after its digest.
    let resolved = rustfmt.canonicalize().unwrap();
    assert!(
        lock.contains(&format!(" {}\"", resolved.display())) && lock.contains("\"sha256:"),
        "{lock}"
    );

    let out = run(&project_dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        "fn main() {\n    let x = 1;\n}\n"
    );
    assert_the_use_is_recorded(&text(&out.stdout), &file);

    let audit = hookrt(&project_dir, &["audit", dir]);
    let audit = text(&audit.stdout);
    assert!(
        audit.contains(&format!(
            "may run    fmt: {} --edition 2021 {{file: writable-path}}",
            resolved.display()
        )),
        "{audit}"
    );

    // An edited table is refused until it is locked again.
    fs::write(agent.path().join("hookrt.toml"), table(&rustfmt, 30_000)).unwrap();
    let out = run(&project_dir);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("drifted"),
        "{}",
        text(&out.stderr)
    );
    // An author's `check` runs a drifted working copy, but never an exec
    // table the lock does not pin.
    let out = hookrt(&project_dir, &["check", dir]);
    let said = text(&out.stderr) + &text(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("holds the `exec` grant") && said.contains("runs only as locked"),
        "{said}"
    );
}
