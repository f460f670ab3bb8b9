//! World 0.4.0's grants from the TypeScript and Python SDKs: a hook that uses
//! one of `read`, `transcript`, `secret`, `notify` or `write` builds, and
//! imports exactly that grant's interface, which `hookrt check` names when
//! it refuses the hook (this hookrt provides none of the five yet; a hookrt
//! that does refuses it until `hookrt.toml` grants it). `exec`, which this
//! hookrt provides, runs end to end from both SDKs in `templates.rs`.

use std::fs;

use crate::{run, text};

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
