//! The ported hooks that hold `exec` (`example-hooks/ported/<agent>`, their
//! tables in each folder's `hookrt.toml`), run by `hookrt hook --agent` on
//! their agent's own input in a small fixture project, with the pinned
//! prettier, tsc, ruff and vitest (`scripts/hook-tools`) and the system's
//! git and node: the file reformatted, the lint and type errors and the
//! failing test told to the model, the turn kept going until the types
//! check, the checkpoint stashed and the session's work committed.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::ported::{Folder, context, input};
use crate::text;

/// `git ARGS` in `dir`, which must succeed; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// A git repository holding `files` (path, text), committed, with a local
/// identity (the sandboxed git reads no `~/.gitconfig`).
fn repository(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "."]);
    git(p, &["config", "user.name", "Alice"]);
    git(p, &["config", "user.email", "alice@example.com"]);
    for (file, body) in files {
        let path = p.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "the fixture project"]);
    dir
}

/// A Claude Code `PostToolUse` of `tool` on `file`, in session `session`.
fn claude_post(project: &Path, session: &str, tool: &str, file: &Path) -> Value {
    input(
        "claude",
        "PostToolUse",
        project,
        &[
            ("/session_id", session.into()),
            ("/tool_name", tool.into()),
            (
                "/tool_input",
                json!({"file_path": file, "content": "(as written)"}),
            ),
            ("/tool_response", json!({"filePath": file, "success": true})),
        ],
    )
}

#[test]
fn the_ported_claude_code_exec_hooks_format_lint_typecheck_gate_the_stop_and_checkpoint() {
    let f = Folder::locked("claude-code");
    let project = repository(&[
        (
            "tsconfig.json",
            r#"{"compilerOptions": {"strict": true}, "include": ["src"]}"#,
        ),
        ("src/a.ts", "export const n = 1;\n"),
    ]);
    let p = project.path();
    let session = format!("exec-{}", std::process::id());
    // disler-ruff-validator: the lint errors reach the model.
    std::fs::write(p.join("tool.py"), "import os\n").unwrap();
    let (answer, _) = f.answer(
        "claude-code",
        None,
        &claude_post(p, &session, "Write", &p.join("tool.py")),
        p,
    );
    let said = context(&answer);
    assert!(
        said.starts_with("Lint check failed:\n") && said.contains("F401"),
        "{answer:?}"
    );
    // anthropic-docs-prettier and claudekit-typecheck-changed on one edit.
    let a = p.join("src/a.ts");
    std::fs::write(&a, "export const n:number=\"one\"\n").unwrap();
    let (answer, log) = f.answer(
        "claude-code",
        None,
        &claude_post(p, &session, "Edit", &a),
        p,
    );
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "export const n: number = \"one\";\n",
        "{log}"
    );
    let said = context(&answer);
    assert!(
        said.starts_with("████ Type Error ████") && said.contains("error TS2322"),
        "{answer:?}"
    );
    // At Stop: diet103-stop-build-check keeps the turn going with the
    // errors; claudekit-create-checkpoint stashes the work, worktree kept.
    let stop = input(
        "claude",
        "Stop",
        p,
        &[("/session_id", session.clone().into())],
    );
    let (answer, log) = f.answer("claude-code", None, &stop, p);
    let answer = answer.expect("the stop is blocked");
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.contains("tsconfig.json: 1 TypeScript error(s)") && reason.contains("TS2322"),
        "{reason}"
    );
    let stashes = git(p, &["stash", "list"]);
    assert!(
        stashes.contains("claude-checkpoint: Auto-save at"),
        "{stashes}{log}"
    );
    assert_eq!(
        git(p, &["diff", "--cached", "--name-only"]),
        "",
        "the index is reset"
    );
    assert!(git(p, &["status", "--porcelain"]).contains(" M src/a.ts"));
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "export const n: number = \"one\";\n"
    );
    // Fixed: the turn may stop.
    std::fs::write(&a, "export const n: number = 1;\n").unwrap();
    let (answer, log) = f.answer("claude-code", None, &stop, p);
    assert!(answer.is_none_or(|a| a.get("decision").is_none()), "{log}");
}

#[test]
fn the_ported_gemini_exec_hooks_run_the_edited_files_test_and_add_the_recent_commits() {
    let f = Folder::locked("gemini");
    let project = repository(&[
        (
            "math.ts",
            "export const add = (a: number, b: number) => a - b;\n",
        ),
        (
            "math.test.ts",
            "import { add } from \"./math\";\ntest(\"adds\", () => { expect(add(2, 3)).toBe(5); });\n",
        ),
        ("util.ts", "export const id = <T>(x: T) => x;\n"),
    ]);
    let p = project.path();
    let after = |file: &str| {
        let i = input(
            "gemini",
            "AfterTool",
            p,
            &[
                ("/tool_name", "replace".into()),
                (
                    "/tool_input",
                    json!({"file_path": p.join(file), "old_string": "-", "new_string": "+"}),
                ),
                (
                    "/tool_response",
                    json!({"llmContent": "Successfully modified file", "returnDisplay": "ok"}),
                ),
            ],
        );
        f.answer("gemini", None, &i, p)
    };
    // gemini-docs-auto-test: the failing test is told to the model.
    let (answer, _) = after("math.ts");
    let said = context(&answer);
    assert!(
        said.starts_with(&format!(
            "Tests failed: {}",
            p.join("math.test.ts").display()
        )),
        "{said}"
    );
    assert!(said.contains("expected -1 to be 5"), "{said}");
    std::fs::write(
        p.join("math.ts"),
        "export const add = (a: number, b: number) => a + b;\n",
    )
    .unwrap();
    let (answer, log) = after("math.ts");
    assert_eq!(context(&answer), "", "passing: nothing to say");
    assert!(log.contains("tests passed"), "{log}");
    let (answer, log) = after("util.ts");
    assert_eq!(context(&answer), "");
    assert!(log.contains("no test file"), "{log}");
    // gemini-docs-git-context
    let (answer, _) = f.answer("gemini", None, &input("gemini", "BeforeAgent", p, &[]), p);
    let head = git(p, &["log", "-1", "--format=%h"]);
    assert_eq!(
        context(&answer),
        format!("Recent commits:\n{} the fixture project", head.trim())
    );
}

#[test]
fn the_ported_copilot_auto_commit_commits_the_sessions_work_and_never_pushes() {
    let f = Folder::locked("copilot");
    let project = repository(&[("README.md", "# app\n")]);
    let p = project.path();
    std::fs::write(p.join("README.md"), "# app\n\nNow with docs.\n").unwrap();
    std::fs::write(p.join("new.txt"), "made in the session\n").unwrap();
    let end = input("copilot", "sessionEnd", p, &[]);
    let (answer, log) = f.answer("copilot", Some("sessionEnd"), &end, p);
    assert_eq!(answer, None);
    assert_eq!(git(p, &["status", "--porcelain"]), "", "{log}");
    let subject = git(p, &["log", "-1", "--format=%s"]);
    assert!(subject.starts_with("auto-commit: "), "{subject}");
    assert_eq!(
        git(p, &["show", "--name-only", "--format=", "HEAD"]),
        "README.md\nnew.txt\n"
    );
    let (_, log) = f.answer("copilot", Some("sessionEnd"), &end, p);
    assert!(log.contains("nothing to commit"), "{log}");
    // What it may run, as `audit` shows it: git in .git only, no network.
    let audit = text(&f.hookrt(&["audit"], p).stdout);
    assert!(
        audit
            .contains("each run may also make, change and remove files inside .git of the project")
            && audit.contains("no TCP")
            && !audit.contains(" push"),
        "{audit}"
    );
}
