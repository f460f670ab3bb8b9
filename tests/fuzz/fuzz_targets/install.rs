//! `hookrt install`'s merge of hookrt's entries into an agent's settings
//! file (runtime/cli/src/commands/install/merge.rs, the command's own code
//! through a `#[path]` module: the CLI is a binary). The input's first line
//! names the agent (`claude-code`, `codex`, `gemini`, `cursor`, `copilot`)
//! and, with a second word `http`, `--http`; the rest is the file's text,
//! read as `install` reads it (blank: `{}`; not JSON: refused before the
//! merge). Invariants: the merge refuses with an error or never panics, and
//! what it makes
//! - keeps every key of the user's, and every entry (group, hook) it does
//!   not own, equal as JSON and in order; a group that held one of hookrt's
//!   hooks keeps its other hooks and keys (dropped only when nothing of the
//!   user's is left in it), a list that held none is kept as it was;
//! - holds hookrt's entry (`Transport::hook`) exactly once under each event
//!   installed, and none of hookrt's anywhere else, after the user's entries;
//! - is a fixed point: merged again it is unchanged (as JSON and as the text
//!   written), and a switch to the other transport and back ends where it
//!   began; its text reads back as itself.
//!
//! `install` has no uninstall, so there is nothing to restore.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../../runtime/cli/src/commands/install"]
#[allow(dead_code)]
mod install {
    mod entry;
    mod merge;
    mod pin;

    use hookrt::front::bridge::Bridge;
    use hookrt::front::bridge::protocol::Shape;
    use serde_json::{Map, Value, json};

    use entry::{Agent, Transport, is_ours};
    use pin::Pinned;

    fn transport(http: bool) -> Transport {
        Transport {
            hookrt: "/usr/local/bin/hookrt".into(),
            dir: "/home/me/my agent".into(),
            http: http.then(|| "http://127.0.0.1:7700".into()),
            lock: Pinned::default(),
        }
    }

    /// What must be left of the user's list `entries` of one event.
    fn users(entries: &[Value], agent: &Agent) -> Vec<Value> {
        let mut left = Vec::new();
        for entry in entries {
            let grouped = agent.install.shape == Shape::Grouped;
            match entry.get("hooks").and_then(Value::as_array) {
                Some(list) if grouped && list.iter().any(|h| is_ours(h, agent)) => {
                    let theirs: Vec<Value> = list
                        .iter()
                        .filter(|h| !is_ours(h, agent))
                        .cloned()
                        .collect();
                    if !theirs.is_empty() {
                        let mut group = entry.clone();
                        group["hooks"] = Value::Array(theirs);
                        left.push(group);
                    }
                }
                _ if !grouped && is_ours(entry, agent) => {}
                _ => left.push(entry.clone()),
            }
        }
        left
    }

    /// The hooks of hookrt's in one event's list.
    fn ours(entries: &[Value], agent: &Agent) -> Vec<Value> {
        let hooks: Vec<&Value> = match agent.install.shape {
            Shape::Grouped => entries
                .iter()
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
                .collect(),
            Shape::Flat => entries.iter().collect(),
        };
        hooks
            .into_iter()
            .filter(|h| is_ours(h, agent))
            .cloned()
            .collect()
    }

    fn list<'a>(hooks: &'a Map<String, Value>, event: &str) -> &'a [Value] {
        hooks
            .get(event)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// `after` against `before` (both objects: the merge took `before`).
    fn check_kept(before: &Value, after: &Value, agent: &Agent, transport: &Transport) {
        let (b, a) = (before.as_object().unwrap(), after.as_object().unwrap());
        let flat = agent.install.shape == Shape::Flat;
        for (key, value) in b.iter().filter(|(k, _)| *k != "hooks") {
            assert_eq!(a.get(key), Some(value), "the user's `{key}` changed");
        }
        for key in a.keys() {
            assert!(
                b.contains_key(key) || key == "hooks" || (flat && key == "version"),
                "`{key}` added"
            );
        }
        if flat {
            assert_eq!(a["version"], 1);
        }
        let empty = Map::new();
        let was = b.get("hooks").and_then(Value::as_object).unwrap_or(&empty);
        let now = a["hooks"].as_object().expect("`hooks` is an object");
        let installed: Vec<&str> = agent.installed().collect();
        for event in was.keys().chain(now.keys()) {
            let (old, new) = (list(was, event), list(now, event));
            let mut want = users(old, agent);
            let untouched = ours(old, agent).is_empty() && was.contains_key(event);
            if installed.contains(&event.as_str()) {
                let hook = transport.hook(agent, event);
                assert_eq!(ours(new, agent), [hook.clone()], "hookrt's under {event}");
                let last = new.last().expect("hookrt's entry");
                let one = match agent.install.shape {
                    Shape::Grouped => last["hooks"] == json!([hook]),
                    Shape::Flat => *last == hook,
                };
                assert!(one, "hookrt's entry is not last under {event}: {last}");
                want.push(last.clone());
            } else {
                assert!(ours(new, agent).is_empty(), "hookrt's under {event}");
            }
            if want.is_empty() && !untouched {
                assert!(!now.contains_key(event), "an emptied `{event}` is left");
            } else if untouched && !installed.contains(&event.as_str()) {
                assert_eq!(now.get(event), was.get(event), "the user's `{event}`");
            } else {
                assert_eq!(new, want.as_slice(), "the user's entries of {event}");
            }
        }
    }

    pub fn check(data: &[u8]) {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let (head, file) = text.split_once('\n').unwrap_or((text, ""));
        let mut words = head.split(' ');
        let Some(bridge) = words.next().and_then(Bridge::named) else {
            return;
        };
        let http = words.next() == Some("http");
        let agent = Agent::of(bridge);
        // As `install` reads the file.
        let before: Value = if file.trim().is_empty() {
            json!({})
        } else {
            match serde_json::from_str(file) {
                Ok(v) => v,
                Err(_) => return,
            }
        };
        let (here, there) = (transport(http), transport(!http));
        let mut after = before.clone();
        let Ok(kept) = merge::merge(&mut after, &agent, &here) else {
            return;
        };
        check_kept(&before, &after, &agent, &here);
        let written = format!("{}\n", serde_json::to_string_pretty(&after).unwrap());
        let read: Value = serde_json::from_str(&written).expect("the written file is JSON");
        assert_eq!(read, after, "the written file reads back otherwise");
        let mut again = after.clone();
        let kept_again = merge::merge(&mut again, &agent, &here).expect("a merge of a merge");
        assert_eq!(again, after, "a second merge changed the file");
        assert_eq!(kept_again, kept, "a second merge counts otherwise");
        merge::merge(&mut again, &agent, &there).expect("a switch of transport");
        merge::merge(&mut again, &agent, &here).expect("a switch back");
        assert_eq!(
            again, after,
            "a switch of transport and back changed the file"
        );
    }
}

fuzz_target!(|data: &[u8]| install::check(data));
