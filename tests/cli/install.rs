//! `hookrt install` keeps what it finds: the settings file's mode and owner
//! (0600 for a new one), no link followed under the project or the home
//! folder, the lock written into the hook's line, a warning when the agent
//! could edit its own hooks; and a FIFO planted where hookrt reads a file
//! fails at once, naming it, instead of hanging the command.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{claude_fixture, repo, with_stdin};
use crate::{hookrt, text};

/// Longer than any of these commands takes, far shorter than a hang.
const PROMPT: Duration = Duration::from_secs(30);

/// Runs `command` with no stdin, killed (and the test failed) if it has not
/// ended within [`PROMPT`]: a regression that hangs fails instead.
pub(crate) fn prompt(mut command: Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hookrt starts");
    let start = Instant::now();
    while child.try_wait().expect("hookrt can be waited on").is_none() {
        if start.elapsed() > PROMPT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "hookrt still ran after {PROMPT:?} (killed): {}",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `hookrt ARGS` run in `cwd`, promptly.
pub(crate) fn install_in(cwd: &Path, args: &[&str]) -> Output {
    let mut c = hookrt(args);
    c.current_dir(cwd);
    prompt(c)
}

/// An agent folder with an empty `hooks/`: enough for install, which
/// writes the agent's settings (of no event unless `--all-events`).
pub(crate) fn bare_agent(under: &Path) -> std::path::PathBuf {
    let agent = under.join("agent");
    fs::create_dir_all(agent.join("hooks")).unwrap();
    agent
}

/// Gives `agent` a hook that votes on tool calls (`allow_all`): the only
/// kind it takes, `actions.requested`.
pub(crate) fn votes_on_tool_calls(agent: &Path) {
    fs::copy(
        crate::common::example("testing/hooks/allow_all.rs"),
        agent.join("hooks/allow_all.rs"),
    )
    .unwrap();
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

pub(crate) fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn install_keeps_a_settings_files_mode_and_owner_and_makes_a_new_one_private() {
    let outside = tempfile::tempdir().unwrap();
    let agent = bare_agent(outside.path());
    let agent = agent.to_str().unwrap();
    let root = unsafe { libc::geteuid() } == 0;

    // The user's own file holding a key, 0600 (and, as root can set it up,
    // someone else's): it stays so.
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".claude/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, r#"{"env": {"ANTHROPIC_API_KEY": "sk-ant-secret"}}"#).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    if root {
        std::os::unix::fs::chown(&file, Some(4242), Some(4343)).unwrap();
    }
    let owner = |p: &Path| {
        let m = fs::metadata(p).unwrap();
        (m.uid(), m.gid())
    };
    let before = owner(&file);
    let out = install_in(
        project.path(),
        &["install", "--agent", "claude-code", agent, "--all-events"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["env"]["ANTHROPIC_API_KEY"], "sk-ant-secret");
    assert!(v["hooks"]["PreToolUse"].is_array(), "{v}");
    assert_eq!(mode(&file), 0o600, "a 0600 file stays 0600");
    assert_eq!(owner(&file), before, "its owner and group are kept");
    if root {
        assert_eq!(before, (4242, 4343));
    }
    assert_eq!(
        fs::read_dir(file.parent().unwrap()).unwrap().count(),
        1,
        "no temp file is left beside it"
    );

    // Another mode is kept as it is, not forced to 0600.
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".cursor/hooks.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, r#"{"version": 1}"#).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    let out = install_in(project.path(), &["install", "--agent", "cursor", agent]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&file), 0o640);

    // A new file is 0600, whatever the umask would have given.
    let project = tempfile::tempdir().unwrap();
    let out = install_in(
        project.path(),
        &["install", "--agent", "claude-code", agent],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&project.path().join(".claude/settings.json")), 0o600);
}

#[test]
fn install_refuses_a_link_on_the_way_to_the_settings_and_writes_nothing_where_it_leads() {
    let outside = tempfile::tempdir().unwrap();
    let agent = bare_agent(outside.path());
    let agent = agent.to_str().unwrap();
    let nothing_in = |dir: &Path| {
        let left: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "written where the link leads: {left:?}");
    };

    // The project's `.claude` is a link.
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let link = project.path().join(".claude");
    std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
    for extra in [&[][..], &["--dry-run"]] {
        let mut args = vec!["install", "--agent", "claude-code", agent];
        args.extend_from_slice(extra);
        let out = install_in(project.path(), &args);
        assert!(
            !out.status.success(),
            "{args:?}: a linked .claude is refused"
        );
        let e = text(&out.stderr);
        assert!(
            e.contains(&format!("{} is a symbolic link (to ", link.display()))
                && e.contains("nothing was written")
                && e.contains(&format!(
                    "--settings {}",
                    fs::canonicalize(elsewhere.path())
                        .unwrap()
                        .join("settings.json")
                        .display()
                )),
            "{e}"
        );
        nothing_in(elsewhere.path());
    }

    // A link deeper down: `.github/hooks` (Copilot's folder), and `.github`
    // itself above a real `hooks/`.
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    fs::create_dir_all(project.path().join(".github")).unwrap();
    let link = project.path().join(".github/hooks");
    std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
    let out = install_in(project.path(), &["install", "--agent", "copilot", agent]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("{} is a symbolic link", link.display())),
        "{}",
        text(&out.stderr)
    );
    nothing_in(elsewhere.path());
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    fs::create_dir_all(elsewhere.path().join("hooks")).unwrap();
    let link = project.path().join(".github");
    std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
    let out = install_in(project.path(), &["install", "--agent", "copilot", agent]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("{} is a symbolic link", link.display())),
        "{}",
        text(&out.stderr)
    );
    nothing_in(&elsewhere.path().join("hooks"));

    // The user's `~/.claude` is a link (a dotfiles folder): refused, the
    // file there unchanged.
    let home = tempfile::tempdir().unwrap();
    let dotfiles = tempfile::tempdir().unwrap();
    let theirs = dotfiles.path().join("settings.json");
    fs::write(&theirs, "{\"theme\": \"dark\"}\n").unwrap();
    let link = home.path().join(".claude");
    std::os::unix::fs::symlink(dotfiles.path(), &link).unwrap();
    let mut c = hookrt(&["install", "--agent", "claude-code", agent, "--user"]);
    c.env("HOME", home.path()).current_dir(home.path());
    let out = prompt(c);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("{} is a symbolic link", link.display())),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(&theirs).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
}

#[test]
fn install_writes_the_lock_into_the_hooks_line_and_the_hook_it_writes_is_checked_against_it() {
    let agent = repo().join("example-hooks/agent");
    let agent_dir = agent.to_str().unwrap();
    let built = prompt(hookrt(&["build", agent_dir]));
    assert!(built.status.success(), "{}", text(&built.stderr));
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("reviewed.lock");
    let lock_path = lock.to_str().unwrap();
    let settings = dir.path().join("settings.json");
    let settings_path = settings.to_str().unwrap();

    // No lock there yet: refused, nothing written.
    let out = install_in(
        dir.path(),
        &[
            "claude",
            "install",
            agent_dir,
            "--settings",
            settings_path,
            "--lock",
            lock_path,
            "--require-lock",
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("the lock {lock_path} does not exist")),
        "{}",
        text(&out.stderr)
    );
    assert!(!settings.exists());

    let locked = prompt(hookrt(&["--lock", lock_path, "lock", agent_dir]));
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    let out = install_in(
        dir.path(),
        &[
            "claude",
            "install",
            agent_dir,
            "--settings",
            settings_path,
            "--lock",
            lock_path,
            "--require-lock",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lock_real = fs::canonicalize(&lock).unwrap();
    let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
    let entry = &v["hooks"]["PreToolUse"][0]["hooks"][0];
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let tail = ["--lock", lock_real.to_str().unwrap(), "--require-lock"];
    assert!(args.ends_with(&tail), "{args:?}");

    // The entry, run as Claude Code runs it, loads against the lock and denies.
    let run_entry = || {
        let mut input: Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
        input["tool_input"]["command"] = "rm -rf build/".into();
        let mut command = Command::new(entry["command"].as_str().unwrap());
        command
            .args(&args)
            .envs(hookrt(&[]).get_envs().filter_map(|(k, v)| Some((k, v?))));
        with_stdin(command, &input.to_string())
    };
    let out = run_entry();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    // Without the lock it requires, the same entry refuses to load the
    // folder and blocks the call (Claude Code's exit 2).
    fs::remove_file(&lock).unwrap();
    let out = run_entry();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "{}: there is no lock, and --require-lock asks for one",
            lock_real.display()
        )),
        "{}",
        text(&out.stderr)
    );

    // A command line (Codex) carries them too, quoted for the shell.
    let locked = prompt(hookrt(&["--lock", lock_path, "lock", agent_dir]));
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    let out = install_in(
        dir.path(),
        &[
            "install",
            "--agent",
            "codex",
            agent_dir,
            "--dry-run",
            "--lock",
            lock_path,
            "--require-lock",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!(
            "--deadline-ms 10000 --lock {} --require-lock",
            lock_real.display()
        )),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn install_warns_when_the_agent_folder_lies_inside_the_project_the_agent_edits() {
    let project = tempfile::tempdir().unwrap();
    let inside = bare_agent(project.path());
    let out = install_in(
        project.path(),
        &[
            "install",
            "--agent",
            "claude-code",
            inside.to_str().unwrap(),
            "--dry-run",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(
        e.contains(&format!(
            "warning: the agent folder {} lies inside {}, the working tree Claude Code edits: the agent could change its own hooks",
            fs::canonicalize(&inside).unwrap().display(),
            fs::canonicalize(project.path()).unwrap().display()
        )),
        "{e}"
    );
    // Inside a git work tree, from a folder below its top: the same.
    fs::create_dir_all(project.path().join(".git")).unwrap();
    let below = project.path().join("src");
    fs::create_dir_all(&below).unwrap();
    let out = install_in(
        &below,
        &[
            "install",
            "--agent",
            "codex",
            inside.to_str().unwrap(),
            "--dry-run",
        ],
    );
    assert!(
        text(&out.stderr).contains("lies inside") && text(&out.stderr).contains("Codex"),
        "{}",
        text(&out.stderr)
    );
    // An agent folder outside the project: no warning.
    let outside = tempfile::tempdir().unwrap();
    let agent = bare_agent(outside.path());
    let out = install_in(
        project.path(),
        &[
            "install",
            "--agent",
            "claude-code",
            agent.to_str().unwrap(),
            "--dry-run",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_fifo_planted_where_hookrt_reads_a_file_fails_at_once_naming_it() {
    // `hookrt.toml`, `hookrt.lock`, a hook and a crate hook's file, each a
    // FIFO no one writes to.
    for (planted, extra) in [
        ("hookrt.toml", &[][..]),
        ("hookrt.lock", &["--require-lock"][..]),
        ("hooks/audit.wasm", &[][..]),
        // A file of a crate hook, read by its digest before cargo runs.
        ("hooks/policy/src/lib.rs", &[][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let agent = bare_agent(dir.path());
        let fifo = agent.join(planted);
        fs::create_dir_all(fifo.parent().unwrap()).unwrap();
        if planted.starts_with("hooks/policy/") {
            fs::write(
                agent.join("hooks/policy/Cargo.toml"),
                "[package]\nname = \"policy\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
            )
            .unwrap();
        }
        mkfifo(&fifo);
        let mut args = extra.to_vec();
        args.extend(["check", agent.to_str().unwrap()]);
        let out = prompt(hookrt(&args));
        assert!(!out.status.success(), "{planted}");
        let e = text(&out.stderr);
        assert!(
            e.contains(&fifo.display().to_string()) && e.contains("FIFO"),
            "{planted}: {e}"
        );
    }
    // The agent's settings file, for install.
    let project = tempfile::tempdir().unwrap();
    let agent = bare_agent(project.path());
    let file = project.path().join(".claude/settings.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    mkfifo(&file);
    let out = install_in(
        project.path(),
        &["install", "--agent", "claude-code", agent.to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!(
            "{} is a FIFO (named pipe), not a regular file",
            file.display()
        )),
        "{}",
        text(&out.stderr)
    );
}

/// Install makes hookrt the hook of the events the folder's hooks take, so
/// the agent starts no process for the others; `--all-events` of every
/// one; a second install after the hooks changed drops what is not taken
/// any more.
#[test]
fn install_hooks_only_the_events_the_folders_hooks_take() {
    let dir = tempfile::tempdir().unwrap();
    let agent = bare_agent(dir.path());
    votes_on_tool_calls(&agent);
    let settings = dir.path().join("settings.json");
    let (a, s) = (agent.to_str().unwrap(), settings.to_str().unwrap());
    let events = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["install", "--agent", "claude-code", a, "--settings", s];
        args.extend(extra);
        let out = install_in(dir.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&fs::read(&settings).unwrap()).unwrap();
        v["hooks"].as_object().unwrap().keys().cloned().collect()
    };
    // allow_all votes on `actions.requested`: Claude Code's two tool gates.
    assert_eq!(events(&[]), ["PreSkillShellCommand", "PreToolUse"]);
    // Every event of the pinned Claude Code but `WorktreeCreate`.
    let claude = hookrt::front::bridge::Bridge::named("claude-code").unwrap();
    assert_eq!(events(&["--all-events"]).len(), claude.events().len() - 1);
    assert_eq!(events(&[]), ["PreSkillShellCommand", "PreToolUse"]);
    // A folder that does not load cannot say: refused, naming the way out.
    fs::write(agent.join("hooks/broken.rs"), "fn main( {").unwrap();
    let out = install_in(
        dir.path(),
        &["install", "--agent", "claude-code", a, "--settings", s],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--all-events"),
        "{}",
        text(&out.stderr)
    );
}
