//! Tool-call policy, observe only: warns (tool and call id, never the input itself) when
//! the model asks for a recursive forced delete in a shell, or for a network tool.
//! A later version will deny these once tool approval is a decision event.

use hookrt_sdk::prelude::*;

/// Tools that reach the network; `web_*` is matched by prefix.
const NETWORK_TOOLS: &[&str] = &["http_fetch", "curl"];
const NETWORK_PREFIX: &str = "web_";
/// Tools whose input is a shell command.
const SHELL_TOOLS: &[&str] = &["run_shell", "shell", "bash", "exec"];

#[derive(Default)]
pub struct Policy;

impl Policy {
    fn actions_requested(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let requested: ActionsRequested = event.data()?;
        for action in &requested.actions {
            if let Some(reason) = concern(action) {
                log::warn(
                    reason,
                    &[
                        ("tool", &action.tool),
                        ("call_id", &action.call_id),
                        ("event_id", event.id()),
                    ],
                );
            }
        }
        Ok(())
    }
}

fn concern(action: &RequestedAction) -> Option<&'static str> {
    let tool = action.tool.as_str();
    if NETWORK_TOOLS.contains(&tool) || tool.starts_with(NETWORK_PREFIX) {
        return Some("network tool requested");
    }
    if SHELL_TOOLS.contains(&tool)
        && shell_command(&action.input).is_some_and(is_recursive_force_rm)
    {
        return Some("destructive shell command requested (rm -rf)");
    }
    None
}

/// The command text of a shell tool input: `{"command": "..."}` or a bare string.
fn shell_command(input: &serde_json::Value) -> Option<&str> {
    input
        .get("command")
        .and_then(|c| c.as_str())
        .or_else(|| input.as_str())
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
}
