//! The `read` grant and the project folder through the `hookrt` binary:
//! the protect-secrets hook (`example-hooks/grants/hooks/protect_secrets.rs`)
//! as Claude Code's command hook, started in the project's folder as
//! Claude Code starts it; `audit` says what it may read; an input naming
//! another folder is refused, the gate failing closed.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::common::{claude_fixture, repo, with_stdin};
use crate::{hookrt, text};

/// An agent folder holding the protect-secrets hook with the `read` grant.
fn agent() -> tempfile::TempDir {
    let agent = tempfile::tempdir().unwrap();
    fs::create_dir(agent.path().join("hooks")).unwrap();
    fs::copy(
        repo().join("example-hooks/grants/hooks/protect_secrets.rs"),
        agent.path().join("hooks/protect_secrets.rs"),
    )
    .unwrap();
    fs::write(
        agent.path().join("hookrt.toml"),
        "[hooks.\"protect_secrets\".grants]\nlog = {}\n\n[hooks.\"protect_secrets\".grants.read]\ndeny = [\"*.sqlite\"]\n",
    )
    .unwrap();
    agent
}

/// `hookrt hook --agent claude-code AGENT` started in `cwd`, on Claude
/// Code's recorded `PreToolUse` reading `file` and naming `claimed` as its folder.
fn hook(agent: &Path, cwd: &Path, claimed: &Path, file: &Path) -> Output {
    let mut input: Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
    input["cwd"] = json!(claimed);
    input["tool_name"] = json!("Read");
    input["tool_input"] = json!({"file_path": file});
    let mut command = hookrt(&["hook", "--agent", "claude-code", agent.to_str().unwrap()]);
    command.current_dir(cwd);
    with_stdin(command, &input.to_string())
}

#[test]
fn a_forwarded_event_claiming_another_project_folder_is_refused_by_the_command_hook() {
    let agent = agent();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    fs::write(root.join(".env"), "TOKEN=1\n").unwrap();
    fs::write(root.join("README.md"), "# app\n").unwrap();
    let a = agent.path();
    let built = hookrt(&["build", a.to_str().unwrap()])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));

    // In its own project: `.env` is refused, README.md is not.
    let out = hook(a, &root, &root, &root.join(".env"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "protect-secrets: `.env` is off limits (`.env` matches the deny pattern `.env*`)"
    );
    let out = hook(a, &root, &root, &root.join("README.md"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("deny"), "{}", text(&out.stdout));

    // An input naming another folder: refused, the gate failing closed.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = elsewhere.path().canonicalize().unwrap();
    fs::write(other.join("README.md"), "# other\n").unwrap();
    let out = hook(a, &root, &other, &other.join("README.md"));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a gate fails closed: {err}");
    assert!(
        err.contains(&format!(
            "the event names `{}` as its folder (`cwd`), which is not the project folder {} nor inside it",
            other.display(),
            root.display()
        )),
        "{err}"
    );

    // The project is hookrt's, not the event's: `--project-dir` moves it.
    let out = {
        let mut input: Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
        input["cwd"] = json!(other);
        input["tool_name"] = json!("Read");
        input["tool_input"] = json!({"file_path": other.join("README.md")});
        let mut command = hookrt(&[
            "hook",
            "--agent",
            "claude-code",
            a.to_str().unwrap(),
            "--project-dir",
            other.to_str().unwrap(),
        ]);
        command.current_dir(&root);
        with_stdin(command, &input.to_string())
    };
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // `audit` says what it may read.
    let audit = hookrt(&["audit", a.to_str().unwrap()])
        .current_dir(&root)
        .output()
        .unwrap();
    let said = text(&audit.stdout);
    assert!(
        said.contains(&format!(
            "may read   {}, read-only: files up to 1048576 bytes, 8388608 bytes per delivery; no `..`, no absolute path, no symlink out",
            root.display()
        )) && said.contains("may read   never .env* *.pem")
            && said.contains(" .github/hooks/ *.sqlite\n"),
        "{said}"
    );
}
