//! hookrt's entries merged into an agent's hook settings (the JSON read
//! from its file): hookrt's earlier entries dropped wherever they are, the
//! user's kept, and one entry of hookrt's put on every installed event.
//! Pure: no file, no process; `tests/fuzz` (target `install`) runs it
//! through a `#[path]` module, so it names only `entry`, `pin` and crates.

use anyhow::{Result, bail};
use hookrt::front::bridge::protocol::Shape;
use serde_json::{Map, Value, json};

use super::entry::{Agent, Transport, is_ours};

/// Puts hookrt's entry on every event of `settings["hooks"]`, replacing
/// hookrt's earlier ones and keeping every other; returns how many other
/// hook entries there are.
pub(super) fn merge(settings: &mut Value, agent: &Agent, transport: &Transport) -> Result<usize> {
    if let Shape::Plugin(_) | Shape::Scripts = agent.install.shape {
        bail!(
            "{} takes files of hookrt's, not hook settings",
            agent.bridge.name()
        );
    }
    let Some(root) = settings.as_object_mut() else {
        bail!("the settings are not a JSON object");
    };
    if agent.install.shape == Shape::Flat {
        match root.get("version") {
            None => {
                root.insert("version".into(), json!(1));
            }
            Some(v) if v == 1 => {}
            Some(v) => bail!("`version` is {v}; this agent reads version 1"),
        }
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("`hooks` is not an object");
    };
    let kept = drop_ours(hooks, agent)?;
    for event in agent.installed() {
        let hook = transport.hook(agent, event);
        let entry = match agent.install.shape {
            Shape::Grouped => {
                let mut group = Map::new();
                if agent.install.tool_events.contains(&event) {
                    group.insert("matcher".into(), json!("*"));
                }
                group.insert("hooks".into(), json!([hook]));
                Value::Object(group)
            }
            // (A plugin or scripts are refused above.)
            Shape::Flat | Shape::Plugin(_) | Shape::Scripts => hook,
        };
        hooks
            .entry(event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("a list: checked or made above")
            .push(entry);
    }
    Ok(kept)
}

/// Drops hookrt's entries from every event of `hooks` (also under events
/// this release no longer has), keeping the user's: a group or an event's
/// list goes only when hookrt's were all it held (a user's empty one stays
/// as it was); returns how many hook entries of the user's there are.
fn drop_ours(hooks: &mut Map<String, Value>, agent: &Agent) -> Result<usize> {
    let mut kept = 0;
    let mut emptied = Vec::new();
    for (event, entries) in hooks.iter_mut() {
        let Some(entries) = entries.as_array_mut() else {
            bail!("`hooks.{event}` is not a list");
        };
        let had = entries.len();
        match agent.install.shape {
            Shape::Grouped => entries.retain_mut(|group| {
                let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let held = list.len();
                list.retain(|h| !is_ours(h, agent));
                kept += list.len();
                !list.is_empty() || held == 0
            }),
            Shape::Flat | Shape::Plugin(_) | Shape::Scripts => {
                entries.retain(|h| !is_ours(h, agent));
                kept += entries.len();
            }
        }
        if entries.is_empty() && had > 0 {
            emptied.push(event.clone());
        }
    }
    hooks.retain(|event, _| !emptied.contains(event));
    Ok(kept)
}
