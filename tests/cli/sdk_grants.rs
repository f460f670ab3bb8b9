//! World 0.4.0's grants from the TypeScript and Python SDKs: a hook that uses
//! one of `read`, `transcript`, `secret`, `notify` or `write` builds, and
//! imports exactly that grant's interface, which `hookrt check` names when
//! it refuses the hook until `hookrt.toml` grants it; and a TypeScript and a
//! Python hook holding `read`, `transcript`, `secret` and `write` run under
//! Claude Code's `Stop` against the real host: the project read and `.env`
//! refused, the transcript's tail, the secret in the request the receiver
//! got and nowhere the hook could see it, one line appended. `exec` runs end
//! to end from both SDKs in `templates.rs`, `notify` in `notify_template.rs`.

use std::fs;

use serde_json::json;

use crate::common::with_stdin;
use crate::receiver::receiver;
use crate::{hookrt, run, text};

/// The five, each with a call of the TypeScript SDK and one of the Python SDK.
const USES: [(&str, &str, &str); 5] = [
    (
        "read",
        "read.readText(\"README.md\")",
        "read.read_text(\"README.md\")",
    ),
    (
        "transcript",
        "transcript.tailLines(4096)",
        "transcript.tail_lines(4096)",
    ),
    (
        "secret",
        "secret.send(\"ntfy\", { url: \"https://ntfy.sh/builds\", body: \"started\" })",
        "secret.send(\"ntfy\", \"POST\", \"https://ntfy.sh/builds\", body=\"started\")",
    ),
    (
        "notify",
        "notify.send(\"Session\", \"started\", \"low\")",
        "notify.send(\"Session\", \"started\", urgency=\"low\")",
    ),
    (
        "write",
        "write.append(\"started\\n\")",
        "write.append(\"started\\n\")",
    ),
];

const GRANTS: [&str; 6] = ["exec", "read", "transcript", "secret", "notify", "write"];

#[test]
fn a_script_hook_using_one_grant_builds_and_imports_that_grants_interface_only() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("hooks");
    fs::create_dir(&hooks).unwrap();
    for (grant, ts, py) in USES {
        fs::write(
            hooks.join(format!("ts_{grant}.ts")),
            format!(
                "import {{ defineHook, {grant} }} from \"hookrt\";\n\
                 export default defineHook({{ \"session.started\"() {{ {ts}; }} }});\n"
            ),
        )
        .unwrap();
        fs::write(
            hooks.join(format!("py_{grant}.py")),
            format!(
                "from hookrt import Hook, {grant}\n\n\nclass Uses(Hook):\n    \
                 def session_started(self, data, event, ctx):\n        {py}\n"
            ),
        )
        .unwrap();
    }
    let out = run(&["check", dir.path().to_str().unwrap()]);
    let said = text(&out.stderr);
    assert!(!out.status.success(), "{said}");
    // Every hook built: the refusals are the loader's, one per hook.
    assert!(said.contains("10 problems found"), "{said}");
    for (grant, _, _) in USES {
        for file in [format!("ts_{grant}.ts"), format!("py_{grant}.py")] {
            let lines: Vec<&str> = said
                .lines()
                .filter(|l| l.starts_with("- ") && l.contains(&format!("hooks/{file}: ")))
                .collect();
            let [line] = lines[..] else {
                panic!("{file}: one refusal, not {lines:?}\n{said}");
            };
            let import = format!("`hookrt:hook/{grant}@0.4.0`");
            assert!(
                line.contains(&format!("hooks/{file}: imports {import}")),
                "{line}"
            );
            for other in GRANTS.iter().filter(|g| **g != grant) {
                assert!(!line.contains(&format!("hookrt:hook/{other}@")), "{line}");
            }
        }
    }
}

/// The token the `secret` grant sends for both hooks.
const TOKEN: &str = "tk_sdk_e2e_7d1c59a0";

/// At `turn.stopping`: reads `README.md`, tries `.env`, counts the
/// transcript's last lines, sends a summary with the secret and appends it.
const TS_HOOK: &str = r#"import { defineHook, GrantError, read, secret, transcript, write } from "hookrt";

function refused(path: string): string {
  try {
    read.readText(path);
    return "read";
  } catch (e) {
    if (e instanceof GrantError) return e.kind;
    throw e;
  }
}

export default defineHook({
  "observe:turn.stopping"() {
    const line = `ts readme=${read.readText("README.md").length} env=${refused(".env")} lines=${transcript.tailLines(65536).length}`;
    const sent = secret.send("hub", { url: `${ORIGIN}/ts`, body: line });
    write.append(`${line} status=${sent.status} echo=${sent.text.includes("tk_") ? "leaked" : "masked"}\n`);
  },
});
"#;

const PY_HOOK: &str = r#"from hookrt import Hook, read, secret, transcript, write
from hookrt.grant import GrantError


def refused(path):
    try:
        read.read_text(path)
        return "read"
    except GrantError as e:
        return e.kind


class Stops(Hook):
    def turn_stopping_observed(self, data, event, ctx):
        line = f"py readme={len(read.read_text('README.md'))} env={refused('.env')} lines={len(transcript.tail_lines(65536))}"
        sent = secret.send("hub", "POST", f"{ORIGIN}/py", body=line)
        echo = "leaked" if "tk_" in sent.text else "masked"
        write.append(f"{line} status={sent.status} echo={echo}\n")
"#;

/// Answers 200 with the request's head echoed in the body (the token in it).
fn echo(head: &str) -> String {
    let body = head.replace("\r\n", " ");
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn typescript_and_python_hooks_read_tail_send_and_write_through_the_real_host() {
    let (origin, got) = receiver(echo);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (agent, project, claude) = (
        root.join("agent"),
        root.join("project"),
        root.join("claude"),
    );
    fs::create_dir_all(agent.join("hooks")).unwrap();
    fs::create_dir_all(&project).unwrap();
    fs::write(project.join("README.md"), "# fixture\n").unwrap();
    fs::write(project.join(".env"), format!("HUB_TOKEN={TOKEN}\n")).unwrap();
    let transcript = claude.join("projects/p/s1.jsonl");
    fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    fs::write(&transcript, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n").unwrap();
    let origin_const = format!("const ORIGIN = \"{origin}\";\n");
    fs::write(
        agent.join("hooks/ts_stop.ts"),
        TS_HOOK.replacen('\n', &format!("\n{origin_const}"), 1),
    )
    .unwrap();
    fs::write(
        agent.join("hooks/py_stop.py"),
        PY_HOOK.replacen("\n\n\n", &format!("\n\nORIGIN = \"{origin}\"\n\n\n"), 1),
    )
    .unwrap();
    let mut toml = String::new();
    for slug in ["ts_stop", "py_stop"] {
        toml += &format!(
            "[hooks.\"{slug}\"]\ndeadline_ms = 20000\n[hooks.\"{slug}\".grants]\nlog = {{}}\nread = {{}}\ntranscript = {{}}\n\
             [hooks.\"{slug}\".grants.write]\nfile = \"hook-log.txt\"\n\
             [hooks.\"{slug}\".grants.secret.secrets.hub]\nenv = \"HOOKRT_TEST_HUB_TOKEN\"\norigins = [\"{origin}\"]\n\
             header = \"Authorization\"\nprefix = \"Bearer \"\n"
        );
    }
    fs::write(agent.join("hookrt.toml"), toml).unwrap();
    let a = agent.to_str().unwrap();
    let locked = run(&["lock", a]);
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    let input = json!({"session_id": "s1", "transcript_path": transcript, "cwd": project,
        "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": false});
    let mut command = hookrt(&["hook", "--agent", "claude-code", a]);
    command
        .current_dir(&project)
        .env("CLAUDE_CONFIG_DIR", &claude)
        .env("HOOKRT_TEST_HUB_TOKEN", TOKEN);
    let out = with_stdin(command, &input.to_string());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = fs::read_to_string(project.join("hook-log.txt")).unwrap();
    let mut lines: Vec<&str> = log.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "py readme=10 env=denied lines=3 status=200 echo=masked",
            "ts readme=10 env=denied lines=3 status=200 echo=masked",
        ],
        "{}",
        text(&out.stderr)
    );
    let requests: Vec<String> = got.try_iter().collect();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for r in &requests {
        assert!(
            r.contains(&format!("authorization: Bearer {TOKEN}\r\n")),
            "{r}"
        );
    }
    assert!(!text(&out.stderr).contains(TOKEN) && !text(&out.stdout).contains(TOKEN));
}
