//! hookrt as a plugin file of the agent's own ([`Shape::Plugin`]: OpenCode
//! and Kilo CLI, which have no hook configuration): the agent's plugin
//! text with its `SETTINGS` line filled in (the command hook as argv, or
//! `hookrt serve`'s route with `--http`; the events hookrt is the hook of;
//! the gates; the wait). The file is hookrt's alone: rewritten whole, and
//! a file of that name that is not hookrt's plugin is refused, not
//! overwritten.

use anyhow::{Result, bail};
use hookrt::front::bridge::protocol::Shape;
use serde_json::json;

use super::entry::{
    Agent, COMMAND_TIMEOUT_S, HTTP_BUDGET_MS, HTTP_TIMEOUT_S, TOKEN_ENV, Transport,
};

/// The line of the plugin's text that `install` fills in.
const SETTINGS_LINE: &str = "const SETTINGS: Settings = ";

/// The first line of a file that is not hookrt's, cut for a message.
pub(super) fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(80)
        .collect()
}

/// The plugin text of `agent` for `transport`, to replace `old` (the
/// file's text, if there is one); an error when `old` is not hookrt's.
pub(super) fn render(agent: &Agent, transport: &Transport, old: Option<&str>) -> Result<String> {
    let Shape::Plugin(template) = agent.install.shape else {
        bail!("{} takes hook settings, not a plugin", agent.bridge.name());
    };
    let first = template.lines().next().unwrap_or_default();
    if let Some(old) = old.filter(|o| !o.trim().is_empty() && !o.starts_with(first)) {
        let head = first_line(old);
        bail!(
            "this file is not hookrt's plugin (it begins `{head}`): move it away or give --settings another file"
        );
    }
    let bridge = agent.bridge;
    let timeout_s = match transport.http {
        Some(_) => HTTP_TIMEOUT_S,
        None => COMMAND_TIMEOUT_S,
    };
    let settings = json!({
        "command": transport.argv(agent),
        "url": transport.http.as_ref().map(|url| format!("{url}{}", bridge.route())),
        "tokenEnv": TOKEN_ENV,
        "budgetMs": HTTP_BUDGET_MS,
        "events": agent.installed().collect::<Vec<_>>(),
        "gates": bridge.gates(),
        "timeoutMs": agent.install.timeout.1.of(timeout_s),
    });
    let mut text = String::with_capacity(template.len() + 512);
    let mut filled = false;
    for line in template.lines() {
        if line.starts_with(SETTINGS_LINE) {
            text.push_str(SETTINGS_LINE);
            text.push_str(&settings.to_string());
            filled = true;
        } else {
            text.push_str(line);
        }
        text.push('\n');
    }
    if !filled {
        bail!("{}'s plugin has no `{SETTINGS_LINE}` line", bridge.name());
    }
    Ok(text)
}
