//! Tool-call approval policy (a decision on `actions.requested`): one answer per requested
//! call, in order. Denies recursive forced deletes in a shell (`rm -rf` in any spelling),
//! asks a human before any network tool, and abstains on everything else so other hooks
//! (or the agent's own policy) decide. Logs the tool and call id of each concern, never the
//! input itself.

use hookrt_sdk::prelude::*;

/// Tools that reach the network; `web_*` is matched by prefix.
const NETWORK_TOOLS: &[&str] = &["http_fetch", "curl", "webfetch", "websearch"];
const NETWORK_PREFIX: &str = "web_";
/// Tools whose input is a shell command, as each agent names them (lowercased):
/// Claude Code's and Codex's `Bash`, Copilot CLI's and OpenCode's `bash`, Gemini
/// CLI's `run_shell_command`, Cursor's `shell` (hookrt's name for its shell
/// events), Cline's `run_commands` (a list of commands), OpenHands' `terminal`,
/// Antigravity CLI's `run_command` (its `CommandLine`), goose's `developer__shell`
/// (by its own name, after the extension's).
const SHELL_TOOLS: &[&str] = &[
    "run_shell",
    "shell",
    "bash",
    "exec",
    "run_shell_command",
    "run_commands",
    "terminal",
    "run_command",
];

#[derive(Default)]
pub struct Policy;

impl Policy {
    fn actions_requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
        let requested: ActionsRequested = event.data()?;
        let approvals = requested.actions.iter().map(approval).collect::<Vec<_>>();
        for (action, approval) in requested.actions.iter().zip(&approvals) {
            let verdict = match approval {
                Approval::Deny(_) => "denied",
                Approval::Ask(_) => "asked",
                Approval::Allow | Approval::Abstain => continue,
            };
            log::warn(
                verdict,
                &[
                    ("tool", &action.tool),
                    ("call_id", &action.call_id),
                    ("event_id", event.id()),
                ],
            );
        }
        Ok(approvals)
    }
}

/// The policy's answer for one call.
fn approval(action: &RequestedAction) -> Approval {
    // Tool names differ in case between agents (`bash`, Claude Code's `Bash`);
    // an extension's tool is named after it (goose's `developer__shell`).
    let own = action.tool.rsplit_once("__").map_or(action.tool.as_str(), |(_, own)| own);
    let lower = own.to_ascii_lowercase();
    let tool = lower.as_str();
    if SHELL_TOOLS.contains(&tool)
        && shell_commands(&action.input)
            .into_iter()
            .any(is_recursive_force_rm)
    {
        return Approval::deny(
            "recursive forced delete (rm -rf) is not allowed by the policy hook; delete specific paths instead",
        );
    }
    if NETWORK_TOOLS.contains(&tool) || tool.starts_with(NETWORK_PREFIX) {
        return Approval::ask(format!(
            "Allow the agent to use the network tool `{}`?",
            action.tool
        ));
    }
    Approval::Abstain
}

/// The command texts of a shell tool input: `{"command": "..."}`, Cline's
/// `{"commands": ["...", ...]}`, Antigravity CLI's `{"CommandLine": "..."}`, or
/// a bare string.
fn shell_commands(input: &serde_json::Value) -> Vec<&str> {
    if let Some(list) = input.get("commands").and_then(|c| c.as_array()) {
        return list.iter().filter_map(|c| c.as_str()).collect();
    }
    input
        .get("command")
        .or_else(|| input.get("CommandLine"))
        .and_then(|c| c.as_str())
        .or_else(|| input.as_str())
        .into_iter()
        .collect()
}

/// True for `rm` with both recursive and force flags, in any spelling (`-rf`, `-fr`,
/// `-r -f`, `--recursive --force`), anywhere in a pipeline or `&&` chain.
fn is_recursive_force_rm(command: &str) -> bool {
    let separators = |c: char| matches!(c, ';' | '&' | '|' | '\n' | '(' | ')');
    command.split(separators).any(|part| {
        let mut words = part
            .split_whitespace()
            .skip_while(|w| *w == "sudo" || w.contains('='));
        if !words
            .next()
            .is_some_and(|w| w == "rm" || w.ends_with("/rm"))
        {
            return false;
        }
        let (mut recursive, mut force) = (false, false);
        for word in words {
            match word {
                "--recursive" => recursive = true,
                "--force" => force = true,
                flags if flags.starts_with('-') && !flags.starts_with("--") => {
                    recursive |= flags.contains('r') || flags.contains('R');
                    force |= flags.contains('f');
                }
                _ => {}
            }
        }
        recursive && force
    })
}

hookrt_sdk::define_hook!(Policy {
    "actions.requested" => actions_requested,
});

#[cfg(test)]
mod tests {
    use super::is_recursive_force_rm as rm;
    use super::*;

    #[test]
    fn recognises_recursive_force_deletes() {
        assert!(rm("rm -rf target/"));
        assert!(rm("cd /tmp && sudo rm -fr build"));
        assert!(rm("rm -r -f x"));
        assert!(rm("rm --recursive --force x"));
        assert!(!rm("rm -r x"));
        assert!(!rm("echo rm -rf"));
        assert!(!rm("cargo clean"));
    }

    fn action(tool: &str, input: serde_json::Value) -> RequestedAction {
        RequestedAction {
            call_id: "c".into(),
            tool: tool.into(),
            input,
        }
    }

    #[test]
    fn answers_each_call_in_order() {
        let event = Event::from_json(
            r#"{"schema_version":1,"id":"e1","kind":"actions.requested","timestamp":"t",
            "coordinates":{"agent":"a","session":"s","sequence":0},
            "data":{"actions":[
                {"call_id":"c1","tool":"run_shell","input":{"command":"rm -rf target/"}},
                {"call_id":"c2","tool":"http_fetch","input":{"url":"https://docs.rs"}},
                {"call_id":"c3","tool":"read_file","input":{"path":"src/lib.rs"}}]}}"#,
        )
        .expect("event");
        let cx = Context::new("actions.requested", "policy", 100);
        let answers = Policy.actions_requested(&event, &cx).expect("answers");
        assert!(matches!(&answers[0], Approval::Deny(r) if r.contains("rm -rf")));
        assert_eq!(
            answers[1],
            Approval::ask("Allow the agent to use the network tool `http_fetch`?")
        );
        assert_eq!(answers[2], Approval::Abstain);
    }

    #[test]
    fn network_tools_include_the_web_prefix_and_shells_only_deny_rm_rf() {
        assert!(
            matches!(approval(&action("web_search", serde_json::json!({}))), Approval::Ask(q) if q.contains("`web_search`"))
        );
        assert!(matches!(
            approval(&action("curl", serde_json::json!("x"))),
            Approval::Ask(_)
        ));
        assert_eq!(
            approval(&action("bash", serde_json::json!("ls -la"))),
            Approval::Abstain
        );
        assert!(matches!(
            approval(&action("bash", serde_json::json!("sudo rm -fr /"))),
            Approval::Deny(_)
        ));
        // A file tool whose input mentions rm -rf is not a shell.
        assert_eq!(
            approval(&action(
                "write_file",
                serde_json::json!({"command":"rm -rf x"})
            )),
            Approval::Abstain
        );
    }
}
