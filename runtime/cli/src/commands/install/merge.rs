//! hookrt's entries merged into an agent's hook settings (the JSON read
//! from its file): hookrt's earlier entries dropped wherever they are, the
//! user's kept, and one entry of hookrt's put on every installed event.
//! Pure: no file, no process; `tests/fuzz` (target `install`) runs it
//! through a `#[path]` module, so it names only `entry`, `pin` and crates.

use anyhow::{Result, bail};
use hookrt::front::bridge::protocol::Shape;
use serde_json::{Map, Value, json};

use super::entry::{Agent, Transport, is_ours};

/// Puts hookrt's entry on every event of `settings["hooks"]` (of
/// `settings[NAME]` for [`Shape::Named`]), replacing hookrt's earlier ones
/// and keeping every other; returns how many other hook entries there are.
pub(super) fn merge(settings: &mut Value, agent: &Agent, transport: &Transport) -> Result<usize> {
    let shape = agent.install.shape;
    if let Shape::Plugin(_) | Shape::Scripts = shape {
        bail!(
            "{} takes files of hookrt's, not hook settings",
            agent.bridge.name()
        );
    }
    let Some(root) = settings.as_object_mut() else {
        bail!("the settings are not a JSON object");
    };
    if shape == Shape::Flat {
        match root.get("version") {
            None => {
                root.insert("version".into(), json!(1));
            }
            Some(v) if v == 1 => {}
            Some(v) => bail!("`version` is {v}; this agent reads version 1"),
        }
    }
    let (key, others) = match shape {
        Shape::Named(name) => (name, other_names(root, name)),
        _ => ("hooks", 0),
    };
    let hooks = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("`{key}` is not an object");
    };
    let kept = drop_ours(hooks, key, agent)? + others;
    for event in agent.installed() {
        let hook = transport.hook(agent, event);
        let tool_event = agent.install.tool_events.contains(&event);
        // A name's tool events take groups, its others bare entries.
        let grouped = shape == Shape::Grouped || (matches!(shape, Shape::Named(_)) && tool_event);
        let entry = match grouped {
            true => {
                let mut group = Map::new();
                if tool_event {
                    group.insert("matcher".into(), json!("*"));
                }
                group.insert("hooks".into(), json!([hook]));
                Value::Object(group)
            }
            false => hook,
        };
        hooks
            .entry(event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("a list: checked or made above")
            .push(entry);
    }
    if let Shape::Named(name) = shape {
        // A name's hooks run only where it says so (agy reads a name
        // without `enabled` as off in some releases); a name left with no
        // event goes.
        match hooks.is_empty() {
            true => {
                root.remove(name);
            }
            false => {
                hooks.insert("enabled".into(), json!(true));
            }
        }
    }
    Ok(kept)
}

/// How many hook entries the names other than `ours` hold (the user's own
/// hooks, whatever their shape: they are left as they are).
fn other_names(root: &Map<String, Value>, ours: &str) -> usize {
    let entries = |list: &Vec<Value>| -> usize {
        list.iter()
            .map(|e| e.get("hooks").and_then(Value::as_array).map_or(1, Vec::len))
            .sum()
    };
    root.iter()
        .filter(|(name, _)| name.as_str() != ours)
        .filter_map(|(_, events)| events.as_object())
        .flat_map(|events| events.values().filter_map(Value::as_array))
        .map(entries)
        .sum()
}

/// Drops hookrt's entries from every event of `hooks` (`settings[key]`;
/// also under events this release no longer has), keeping the user's: a group or an event's
/// list goes only when hookrt's were all it held (a user's empty one stays
/// as it was); returns how many hook entries of the user's there are.
fn drop_ours(hooks: &mut Map<String, Value>, key: &str, agent: &Agent) -> Result<usize> {
    let mut kept = 0;
    let mut emptied = Vec::new();
    let named = matches!(agent.install.shape, Shape::Named(_));
    for (event, entries) in hooks.iter_mut() {
        // A name's switch, beside its events.
        if named && event == "enabled" {
            continue;
        }
        let Some(entries) = entries.as_array_mut() else {
            bail!("`{key}.{event}` is not a list");
        };
        let had = entries.len();
        entries.retain_mut(|entry| {
            let grouped = match agent.install.shape {
                Shape::Grouped => true,
                // A name's tool events hold groups, its others entries.
                Shape::Named(_) => entry.get("hooks").is_some(),
                Shape::Flat | Shape::Plugin(_) | Shape::Scripts => false,
            };
            if !grouped {
                let ours = is_ours(entry, agent);
                kept += usize::from(!ours);
                return !ours;
            }
            let Some(list) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let held = list.len();
            list.retain(|h| !is_ours(h, agent));
            kept += list.len();
            !list.is_empty() || held == 0
        });
        if entries.is_empty() && had > 0 {
            emptied.push(event.clone());
        }
    }
    hooks.retain(|event, _| !emptied.contains(event));
    if named && hooks.keys().all(|k| k == "enabled") {
        hooks.clear();
    }
    Ok(kept)
}
