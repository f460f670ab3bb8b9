//! Claude Code's plugin: `.claude-plugin/plugin.json`, its hooks'
//! entries taking `args` with `${CLAUDE_PLUGIN_ROOT}`, and a marketplace in
//! `.claude-plugin/marketplace.json` (`claude plugin marketplace add OUT`,
//! then `claude plugin install NAME@MARKETPLACE`).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::format::{Format, Marketplace, Named};

pub(super) static FORMAT: Format = Format {
    agent: "claude-code",
    title: "Claude Code",
    manifest: ".claude-plugin/plugin.json",
    marketplace: Some(Marketplace {
        file: ".claude-plugin/marketplace.json",
        json: marketplace_json,
    }),
    root: "CLAUDE_PLUGIN_ROOT",
    hooks,
    manifest_json,
    try_it,
};

fn hooks() -> Map<String, Value> {
    let mut hooks = Map::new();
    hooks.insert(
        "description".into(),
        json!("hookrt: the agent folder in agent/, sandboxed, gating every event its hooks take"),
    );
    hooks
}

fn manifest_json(named: &Named) -> Value {
    json!({
        "name": named.name,
        "version": named.version,
        "description": named.description,
        "author": {"name": "hookrt"},
        "license": "Apache-2.0",
    })
}

fn marketplace_json(named: &Named, marketplace: &str) -> Value {
    json!({
        "name": marketplace,
        "owner": {"name": "hookrt"},
        "plugins": [{
            "name": named.name,
            "source": format!("./plugins/{}", named.name),
            "description": named.description,
            "version": named.version,
        }],
    })
}

fn try_it(named: &Named, out: &Path, marketplace: Option<&str>) -> String {
    match marketplace {
        Some(m) => format!(
            "add it with `claude plugin marketplace add {}`, then `claude plugin install {}@{m}`",
            out.display(),
            named.name
        ),
        None => format!("try it with `claude --plugin-dir {}`", out.display()),
    }
}
