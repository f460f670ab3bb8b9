//! The `transcript` and `write` grants through `hookrt claude-hook`, on
//! Claude Code's recorded hook inputs (`tests/fixtures/claude/`), with the
//! three hooks ported from the public list (`example-hooks/grants/hooks/`):
//! a Bash command log appended to one file, a transcript backed up before
//! compaction into one folder, and a Stop hook that keeps the turn going
//! until the transcript's last assistant message holds the promise. The
//! transcript is read only inside Claude Code's transcripts folder
//! (`$CLAUDE_CONFIG_DIR/projects`); a folder whose hooks hold `write` does
//! not load without a lock, and a changed write table is refused until it
//! is locked again.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{claude_fixture, repo, with_stdin};
use crate::{hookrt, text};

/// An agent folder holding one ported hook, the project hookrt runs in, and
/// Claude Code's own folder with one session's transcript.
struct Setup {
    _dirs: [tempfile::TempDir; 3],
    agent: PathBuf,
    project: PathBuf,
    claude: PathBuf,
    transcript: PathBuf,
}

const SESSION: &str = "00893aaf-19fa-41d2-8238-13269b9b3ca0";

fn setup(hook: &str, toml: &str) -> Setup {
    let dirs = [(); 3].map(|()| tempfile::tempdir().unwrap());
    let [agent, project, claude] = [0, 1, 2].map(|i| dirs[i].path().canonicalize().unwrap());
    fs::create_dir(agent.join("hooks")).unwrap();
    fs::copy(
        repo().join(format!("example-hooks/grants/hooks/{hook}.rs")),
        agent.join(format!("hooks/{hook}.rs")),
    )
    .unwrap();
    fs::write(agent.join("hookrt.toml"), toml).unwrap();
    let transcript = claude.join(format!("projects/-work-app/{SESSION}.jsonl"));
    fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    Setup {
        _dirs: dirs,
        agent,
        project,
        claude,
        transcript,
    }
}

impl Setup {
    /// `hookrt ARGS DIR` in the project folder.
    fn hookrt(&self, args: &[&str]) -> Output {
        hookrt(args)
            .arg(&self.agent)
            .current_dir(&self.project)
            .output()
            .expect("hookrt runs")
    }

    /// `hookrt claude-hook DIR` on Claude Code's `event`, its transcript path
    /// set to `transcript`, in the project folder.
    fn claude_hook(&self, event: &str, transcript: &Path) -> Output {
        self.claude_hook_with(event, transcript, |_| {})
    }

    /// As [`Setup::claude_hook`], the input changed by `change` first.
    fn claude_hook_with(
        &self,
        event: &str,
        transcript: &Path,
        change: impl Fn(&mut Value),
    ) -> Output {
        let mut input: Value = serde_json::from_str(&claude_fixture(event)).unwrap();
        input["transcript_path"] = transcript.to_str().unwrap().into();
        // Claude Code runs its hooks in the project it names (`write` acts
        // on the project: an event naming another folder is refused).
        input["cwd"] = self.project.to_str().unwrap().into();
        change(&mut input);
        let mut command = hookrt(&["claude-hook", self.agent.to_str().unwrap()]);
        command
            .current_dir(&self.project)
            .env("CLAUDE_CONFIG_DIR", &self.claude);
        with_stdin(command, &input.to_string())
    }

    fn locked(&self) {
        let out = self.hookrt(&["lock"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

fn log_table(max_write_bytes: u64) -> String {
    format!(
        "[hooks.\"bash_command_log\".grants]\nlog = {{}}\n\
         [hooks.\"bash_command_log\".grants.write]\nfile = \".claude/bash-command-log.txt\"\nmax_write_bytes = {max_write_bytes}\n"
    )
}

#[test]
fn bash_command_log_appends_each_bash_command_to_the_one_file_only_once_locked() {
    let s = setup("bash_command_log", &log_table(4096));
    let log = s.project.join(".claude/bash-command-log.txt");

    // No lock: the folder does not load (nothing is built), and the gate
    // fails closed.
    let out = s.claude_hook("PreToolUse", &s.transcript);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr)
            .contains("holds the `write` grant, whose table only a lock may vouch for"),
        "{}",
        text(&out.stderr)
    );
    assert!(!log.exists());

    s.locked();
    for _ in 0..2 {
        let out = s.claude_hook("PreToolUse", &s.transcript);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    // As the original's jq: "<command> - <description>", one line a call.
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        "npm test - Run test suite\nnpm test - Run test suite\n"
    );
    // An event naming another project folder is refused: nothing written.
    let out = s.claude_hook_with("PreToolUse", &s.transcript, |i| {
        i["cwd"] = "/elsewhere".into();
    });
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("`/elsewhere`"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 2);
    let audit = text(&s.hookrt(&["audit"]).stdout);
    assert!(
        audit.contains(&format!(
            "may write  appends to {}; at most 4096 bytes a write",
            log.display()
        )),
        "{audit}"
    );

    // A changed write table is refused until it is locked again.
    fs::write(s.agent.join("hookrt.toml"), log_table(10)).unwrap();
    let out = s.claude_hook("PreToolUse", &s.transcript);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("drifted"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 2);
}

const BACKUP_TABLE: &str = "[hooks.\"pre_compact_backup\".grants]\nlog = {}\n\
    [hooks.\"pre_compact_backup\".grants.transcript]\nmax_bytes = 8388608\n\
    [hooks.\"pre_compact_backup\".grants.write]\nfolder = \"logs/transcript_backups\"\n\
    max_write_bytes = 8388608\nmax_delivery_bytes = 8388608\nmax_file_bytes = 8388608\n";

/// The files of the backup folder, by name.
fn backups(project: &Path) -> Vec<(String, String)> {
    let Ok(dir) = fs::read_dir(project.join("logs/transcript_backups")) else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = dir
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn pre_compact_backup_copies_the_transcript_into_the_one_folder_and_reads_nothing_else() {
    let s = setup("pre_compact_backup", BACKUP_TABLE);
    // 100 KB: past the write grant's default cap of one write, within the table's.
    let session =
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n".repeat(1_700);
    fs::write(&s.transcript, &session).unwrap();
    s.locked();

    let out = s.claude_hook("PreCompact", &s.transcript);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let found = backups(&s.project);
    assert_eq!(found.len(), 1, "{found:?}");
    let (name, copy) = &found[0];
    assert!(
        name.starts_with(&format!("{SESSION}_pre_compact_manual_")) && name.ends_with(".jsonl"),
        "{name}"
    );
    assert_eq!(copy, &session);

    // A transcript path outside Claude Code's folder, or through a symlink
    // out of it: nothing is read, so nothing is backed up (and compaction
    // is not blocked: the hook only watches).
    let secret = s.project.join("secret.jsonl");
    fs::write(&secret, "PRIVATE\n").unwrap();
    let link = s.transcript.with_file_name("link.jsonl");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let sneaky = s.transcript.parent().unwrap().join("../../../secret.jsonl");
    for path in [&secret, &link, &sneaky] {
        let out = s.claude_hook("PreCompact", path);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    assert_eq!(backups(&s.project).len(), 1, "no backup of a file outside");
}

const RALPH_TABLE: &str = "[governor]\nmax_continues = 2\n[hooks.\"ralph_wiggum\"]\ngrants = [\"log\", \"state\", \"transcript\"]\n\
    [hooks.\"ralph_wiggum\".config]\nprompt = \"Fix the failing tests.\"\ncompletion_promise = \"ALL TESTS PASS\"\n";

fn assistant(text: &str) -> String {
    serde_json::json!({"type": "assistant", "message": {"role": "assistant",
        "content": [{"type": "text", "text": text}]}})
    .to_string()
        + "\n"
}

#[test]
fn ralph_wiggum_keeps_the_turn_going_until_the_transcript_holds_the_promise() {
    let s = setup("ralph_wiggum", RALPH_TABLE);
    let out = s.hookrt(&["build"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    fs::write(&s.transcript, assistant("Two tests still fail.")).unwrap();
    let out = s.claude_hook("Stop", &s.transcript);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(answer["reason"], "Fix the failing tests.", "{answer}");

    // The governor still caps the loop: two continues in a row, then the
    // turn stops (a session of its own, so no other test's count is read).
    let session = s.agent.file_name().unwrap().to_string_lossy().into_owned();
    let stop = |active: bool| {
        s.claude_hook_with("Stop", &s.transcript, |input| {
            input["session_id"] = session.clone().into();
            input["stop_hook_active"] = active.into();
        })
    };
    let said: Vec<String> = [false, true, true]
        .map(|active| text(&stop(active).stdout))
        .to_vec();
    assert!(
        said[0].contains("\"block\"") && said[1].contains("\"block\""),
        "{said:?}"
    );
    assert!(
        !said[2].contains("\"block\"") && said[2].contains("loop governor let this turn stop"),
        "capped by the governor: the turn stops: {said:?}"
    );

    let done = assistant("Tests fixed.") + &assistant("Done: <promise>ALL  TESTS\nPASS</promise>");
    fs::write(&s.transcript, done).unwrap();
    let out = s.claude_hook("Stop", &s.transcript);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "the turn stops");
}

/// The fields of the delivery record's `[hookrt] <what>` line of `hook`.
fn recorded(stdout: &str, hook: &str, what: &str) -> Vec<(String, String)> {
    let delivery: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["hook"] == hook)
        .unwrap_or_else(|| panic!("a delivery of {hook}: {stdout}"));
    let line = delivery["logs"]
        .as_array()
        .and_then(|logs| {
            logs.iter()
                .find(|l| l["message"] == format!("[hookrt] {what}"))
        })
        .unwrap_or_else(|| panic!("the use is recorded: {delivery}"));
    line["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair[0].as_str().unwrap().to_owned(),
                pair[1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn each_use_is_recorded_and_an_event_read_from_jsonl_names_no_transcript() {
    let toml = log_table(4096) + BACKUP_TABLE;
    let s = setup("bash_command_log", &toml);
    fs::copy(
        repo().join("example-hooks/grants/hooks/pre_compact_backup.rs"),
        s.agent.join("hooks/pre_compact_backup.rs"),
    )
    .unwrap();
    s.locked();
    let coordinates =
        serde_json::json!({"agent": "claude-code", "session": SESSION, "sequence": 1});
    let events = [
        serde_json::json!({"schema_version": 1, "id": "evt_1", "kind": "actions.requested",
            "timestamp": "2026-12-06T10:00:00Z", "coordinates": coordinates,
            "data": {"actions": [{"call_id": "c1", "tool": "Bash",
                "input": {"command": "ls", "description": "List files"}}]}}),
        // A forged path in the data is data, nothing more.
        serde_json::json!({"schema_version": 1, "id": "evt_2", "kind": "compaction.requested",
            "timestamp": "2026-12-06T10:00:01Z", "coordinates": coordinates,
            "data": {"trigger": "manual", "transcript_path": s.transcript}}),
    ];
    fs::write(&s.transcript, "{}\n").unwrap();
    let file = s.project.join("events.jsonl");
    fs::write(&file, events.map(|e| e.to_string() + "\n").concat()).unwrap();
    let out = s.hookrt(&["run", "--logs", "--events", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);

    let wrote = recorded(&stdout, "bash_command_log", "write append");
    assert_eq!(wrote[0], ("bytes".to_owned(), "16".to_owned()), "{wrote:?}");
    assert_eq!(
        wrote[1],
        ("outcome".to_owned(), "written".to_owned()),
        "{wrote:?}"
    );
    let read = recorded(&stdout, "pre_compact_backup", "transcript tail");
    assert!(
        read.contains(&(
            "outcome".to_owned(),
            "none: the event names no transcript".to_owned()
        )),
        "{read:?}"
    );
    assert!(backups(&s.project).is_empty());
}
