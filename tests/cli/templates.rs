//! `hookrt new --template`: each template in Rust, TypeScript and Python is
//! made, its program set in the `hookrt.toml` entry `new` wrote, the folder
//! locked, and run on a recorded event with its effect: `format-on-edit`
//! formats the file a Claude Code `Write` named (the toolchain's rustfmt);
//! `tests-at-stop` keeps the turn going while a small project's tests fail,
//! the loop governor capping it, and lets it stop once they pass. The
//! TypeScript and Python ones are those SDKs' `exec` run end to end: a real
//! program, under the grant and the kernel sandbox.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{hookrt_in as hookrt, rustfmt, text};

/// A temp agent folder and project; `hookrt new AGENT/hooks/SLUG --template
/// TEMPLATE --lang LANG` run there, its entry's lines `edits` replaced
/// (`(from, to)`), and the folder locked.
struct Made {
    _dir: tempfile::TempDir,
    agent: PathBuf,
    project: PathBuf,
}

impl Made {
    fn new(template: &str, lang: &str, edits: &[(&str, String)]) -> Made {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (agent, project) = (root.join("agent"), root.join("project"));
        fs::create_dir(&project).unwrap();
        let path = agent.join("hooks/keep-tidy");
        let out = hookrt(
            &project,
            &[
                "new",
                path.to_str().unwrap(),
                "--template",
                template,
                "--lang",
                lang,
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(
            said.contains(&format!("  hookrt lock {}", agent.display())),
            "the next steps lock the folder: {said}"
        );
        let toml = agent.join("hookrt.toml");
        let mut entry = fs::read_to_string(&toml).unwrap();
        assert!(
            entry.starts_with("[hooks.\"keep-tidy\"]\n")
                && entry.contains("[hooks.\"keep-tidy\".grants.exec]"),
            "{entry}"
        );
        for (from, to) in edits {
            assert!(entry.contains(from), "{from}: {entry}");
            entry = entry.replace(from, to);
        }
        fs::write(&toml, entry).unwrap();
        let out = hookrt(&project, &["lock", agent.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        Made {
            _dir: dir,
            agent,
            project,
        }
    }

    /// `hookrt run AGENT --events EVENTS --logs` in the project: its JSON lines.
    fn run(&self, events: &[Value]) -> Vec<Value> {
        let file = self.project.join("events.jsonl");
        let lines: Vec<String> = events.iter().map(Value::to_string).collect();
        fs::write(&file, lines.join("\n") + "\n").unwrap();
        let out = hookrt(
            &self.project,
            &[
                "run",
                self.agent.to_str().unwrap(),
                "--events",
                file.to_str().unwrap(),
                "--logs",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn envelope(id: &str, sequence: u64, kind: &str, data: Value) -> Value {
    json!({
        "schema_version": 1, "id": id, "kind": kind, "timestamp": "2026-12-06T10:00:00Z",
        "coordinates": {"agent": "claude-code", "session": "s1", "turn": "t1", "step": null,
                        "sequence": sequence, "subagent": null},
        "data": data
    })
}

/// The `[hookrt] exec PROGRAM` record of the hook's delivery of `event_id`.
fn exec_record<'a>(lines: &'a [Value], event_id: &str, program: &str) -> &'a Value {
    let delivery = lines
        .iter()
        .find(|l| l["hook"] == "keep-tidy" && l["event_id"] == event_id)
        .unwrap_or_else(|| panic!("a delivery of {event_id}: {lines:?}"));
    assert_eq!(delivery["outcome"], "ok", "{delivery}");
    delivery["logs"]
        .as_array()
        .and_then(|logs| {
            logs.iter()
                .find(|l| l["message"] == format!("[hookrt] exec {program}"))
        })
        .unwrap_or_else(|| panic!("the use is recorded: {delivery}"))
}

fn field(record: &Value, key: &str) -> Option<String> {
    record["fields"]
        .as_array()?
        .iter()
        .find(|pair| pair[0] == key)
        .and_then(|pair| pair[1].as_str().map(str::to_owned))
}

fn format_on_edit_formats_the_edited_file(lang: &str) {
    let Some(rustfmt) = rustfmt() else {
        eprintln!("skipped: no rustfmt in the toolchain");
        return;
    };
    let made = Made::new(
        "format-on-edit",
        lang,
        &[
            (
                "path = \"prettier\"",
                format!("path = \"{}\"", rustfmt.display()),
            ),
            (
                "args = [\"--write\", \"{file}\"]",
                "args = [\"--edition\", \"2021\", \"{file}\"]".to_owned(),
            ),
        ],
    );
    let file = made.project.join("a.rs");
    fs::write(&file, "fn  main( ){ let x=1; }\n").unwrap();
    let read = made.project.join("b.rs");
    fs::write(&read, "fn  b( ){}\n").unwrap();
    // A Claude Code `Write` of a.rs as its bridge maps `PostToolUse`, and a
    // `Read` of b.rs, which edits nothing.
    let wrote = json!({"call_id": "c1", "tool": "Write", "status": "ok",
                       "output": {"filePath": file, "success": true}});
    let looked = json!({"call_id": "c2", "tool": "Read", "status": "ok",
                        "output": {"filePath": read}});
    let lines = made.run(&[
        envelope("evt_w", 1, "action.result", wrote),
        envelope("evt_r", 2, "action.result", looked),
    ]);
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        "fn main() {\n    let x = 1;\n}\n"
    );
    assert_eq!(fs::read_to_string(&read).unwrap(), "fn  b( ){}\n");
    let used = exec_record(&lines, "evt_w", "format");
    assert_eq!(field(used, "status").as_deref(), Some("0"), "{used}");
    assert_eq!(
        field(used, "arg.file"),
        Some(file.display().to_string()),
        "{used}"
    );
    let text = serde_json::to_string(&lines).unwrap();
    assert_eq!(text.matches("[hookrt] exec format").count(), 1, "{text}");
}

#[test]
fn format_on_edit_in_rust_formats_the_file_the_agent_wrote() {
    format_on_edit_formats_the_edited_file("rust");
}

#[test]
fn format_on_edit_in_typescript_formats_the_file_the_agent_wrote() {
    format_on_edit_formats_the_edited_file("ts");
}

#[test]
fn format_on_edit_in_python_formats_the_file_the_agent_wrote() {
    format_on_edit_formats_the_edited_file("py");
}

/// The gate's verdict of `event_id`: its answer, the text of a continue,
/// whether the governor capped it.
fn verdict(lines: &[Value], event_id: &str) -> (String, String, bool) {
    let r = lines
        .iter()
        .find(|l| l["event_id"] == event_id && l.get("resolution").is_some())
        .unwrap_or_else(|| panic!("a resolution of {event_id}: {lines:?}"));
    let gate = &r["resolution"]["gate"];
    let v = &gate["verdict"];
    (
        v["answer"].as_str().unwrap_or_default().to_owned(),
        v["reason"].as_str().unwrap_or_default().to_owned(),
        gate["capped"].as_bool().unwrap_or(false),
    )
}

fn tests_at_stop_keeps_the_turn_going_until_the_tests_pass(lang: &str) {
    let (make, python) = (Path::new("/usr/bin/make"), Path::new("/usr/bin/python3"));
    if !make.is_file() || !python.is_file() {
        eprintln!("skipped: no /usr/bin/make or /usr/bin/python3");
        return;
    }
    let made = Made::new(
        "tests-at-stop",
        lang,
        &[("path = \"make\"", format!("path = \"{}\"", make.display()))],
    );
    let toml = made.agent.join("hookrt.toml");
    let entry = fs::read_to_string(&toml).unwrap();
    fs::write(&toml, format!("[governor]\nmax_continues = 1\n\n{entry}")).unwrap();
    let out = hookrt(&made.project, &["lock", made.agent.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A small project whose one test fails until `add` adds.
    let p = &made.project;
    fs::write(
        p.join("Makefile"),
        "test:\n\t/usr/bin/python3 -m unittest -q\n",
    )
    .unwrap();
    fs::write(p.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    fs::write(
        p.join("test_calc.py"),
        "import unittest\nfrom calc import add\n\n\nclass Add(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(2, 2), 4)\n",
    )
    .unwrap();
    // Claude Code's `Stop`, then its second `Stop` after the turn went on.
    let stop = |id: &str, seq: u64, continued: bool| {
        envelope(id, seq, "turn.stopping", json!({"continued": continued}))
    };
    let lines = made.run(&[stop("evt_s1", 1, false), stop("evt_s2", 2, true)]);
    let (answer, said, capped) = verdict(&lines, "evt_s1");
    assert_eq!((answer.as_str(), capped), ("continue", false), "{lines:?}");
    assert!(
        said.starts_with("The project's tests fail. Fix them before you finish.")
            && said.contains("AssertionError: 0 != 4")
            && said.contains("FAILED (failures=1)"),
        "{said}"
    );
    let used = exec_record(&lines, "evt_s1", "tests");
    assert_eq!(
        field(used, "status").as_deref(),
        Some("2"),
        "make's status: {used}"
    );
    // The governor caps it: the second continue in a row lets the turn stop.
    let (answer, _, capped) = verdict(&lines, "evt_s2");
    assert_eq!((answer.as_str(), capped), ("pass", true), "{lines:?}");

    fs::write(p.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    let lines = made.run(&[stop("evt_s3", 3, false)]);
    let (answer, _, capped) = verdict(&lines, "evt_s3");
    assert_eq!((answer.as_str(), capped), ("pass", false), "{lines:?}");
    let used = exec_record(&lines, "evt_s3", "tests");
    assert_eq!(field(used, "status").as_deref(), Some("0"), "{used}");
}

#[test]
fn tests_at_stop_in_rust_keeps_the_turn_going_until_the_tests_pass() {
    tests_at_stop_keeps_the_turn_going_until_the_tests_pass("rust");
}

#[test]
fn tests_at_stop_in_typescript_keeps_the_turn_going_until_the_tests_pass() {
    tests_at_stop_keeps_the_turn_going_until_the_tests_pass("ts");
}

#[test]
fn tests_at_stop_in_python_keeps_the_turn_going_until_the_tests_pass() {
    tests_at_stop_keeps_the_turn_going_until_the_tests_pass("py");
}

#[test]
fn a_template_entry_the_folder_already_configures_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    fs::create_dir(&agent).unwrap();
    let toml = "[hooks.\"fmt\"]\ndeadline_ms = 500\n";
    fs::write(agent.join("hookrt.toml"), toml).unwrap();
    let path = agent.join("hooks/fmt");
    let out = hookrt(
        dir.path(),
        &[
            "new",
            path.to_str().unwrap(),
            "--template",
            "format-on-edit",
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot add [hooks.\"fmt\"] to")
            && text(&out.stderr).contains("remove that table, or pick another name"),
        "{}",
        text(&out.stderr)
    );
    assert!(!agent.join("hooks/fmt.rs").exists());
    assert_eq!(fs::read_to_string(agent.join("hookrt.toml")).unwrap(), toml);
    let out = hookrt(
        dir.path(),
        &[
            "new",
            path.to_str().unwrap(),
            "--template",
            "tests-at-stop",
            "--events",
            "*",
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}
