//! Edits: hooks changing the agent input state on `step.completed` and
//! `turn.completed`, validated after each edit and rolled back as one.
//!
//! The event's `data.state` is the agent input state. Hooks run in
//! registration order and each sees the state as the previous hooks left it.
//! After every edit the new state is checked (see [`validate`]); the first
//! invalid edit, or any failed delivery (error, trap, timeout, fuel, memory),
//! restores the one backup taken before the first hook ran, so no partial edit
//! of that event survives, and later edits of the event are ignored. The
//! caller gets the final state and an account per hook.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::envelope::MAX_DATA_BYTES;
use crate::sandbox::outcome::Outcome;

/// What became of one hook's edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", content = "detail", rename_all = "snake_case")]
pub enum EditStatus {
    /// The edit passed validation and was applied.
    Applied,
    /// The hook did not edit.
    Unchanged,
    /// The edit broke a rule (the reason); the event's edits were rolled back.
    Invalid(String),
    /// The delivery failed; the event's edits were rolled back.
    Failed(Outcome),
    /// An earlier edit of this event was rolled back; this one was not applied.
    Ignored,
    /// A `*` handler failed: it observes and cannot edit, so nothing was rolled back.
    ObserverFailed(Outcome),
}

/// One hook's account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditAccount {
    /// The hook's slug.
    pub hook: String,
    /// What became of its edit.
    #[serde(flatten)]
    pub status: EditStatus,
    /// True when it was applied and later undone by the rollback.
    pub rolled_back: bool,
}

/// The result of an edit event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditResult {
    /// The final agent input state.
    pub state: Value,
    /// Whether it differs from the state the event carried.
    pub changed: bool,
    /// Why the event's edits were rolled back, if they were.
    pub rolled_back: Option<String>,
    /// One account per hook asked, in order.
    pub accounts: Vec<EditAccount>,
}

/// The edits of one event in progress.
pub(crate) struct EditSession {
    /// The event's data as it came, its `state` taken out (left `null`, in
    /// its place); `None` when the data is no object.
    rest: Option<serde_json::Map<String, Value>>,
    /// The state as the event carried it (`null` when it carried none): the
    /// one backup, restored by a rollback.
    backup: Value,
    /// The state after the last valid edit; `None` while it is the backup
    /// (no edit yet, or rolled back), so nothing is copied until a hook edits.
    current: Option<Value>,
    rolled_back: Option<String>,
    accounts: Vec<EditAccount>,
}

impl EditSession {
    /// Starts from the event's `data.state`, copying the data once. When
    /// the event has none, every edit is invalid: there is nothing to
    /// validate it against.
    pub(crate) fn new(data: &Value) -> EditSession {
        let mut rest = data.as_object().cloned();
        let backup = rest
            .as_mut()
            .and_then(|d| d.get_mut("state"))
            .map(Value::take)
            .unwrap_or(Value::Null);
        EditSession {
            rest,
            backup,
            current: None,
            rolled_back: None,
            accounts: Vec::new(),
        }
    }

    /// The state as the hooks so far left it.
    fn state(&self) -> &Value {
        self.current.as_ref().unwrap_or(&self.backup)
    }

    /// The event's data with the current state, as JSON text for the next
    /// hook; `None` while no edit holds (the next hook gets the event's data
    /// as it came, its own text).
    pub(crate) fn data_for_next(&self) -> Option<String> {
        let (Some(rest), Some(state)) = (&self.rest, &self.current) else {
            return None;
        };
        // The data's members in their order, `state` in its place: what
        // inserting the state into a copy of the data would serialize to.
        struct WithState<'a>(&'a serde_json::Map<String, Value>, &'a Value);
        impl Serialize for WithState<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (key, value) in self.0 {
                    map.serialize_entry(key, if key == "state" { self.1 } else { value })?;
                }
                map.end()
            }
        }
        // Serializing values cannot fail.
        serde_json::to_string(&WithState(rest, state)).ok()
    }

    /// Records one hook's delivery: `Ok(None)` no edit, `Ok(Some(json))` an
    /// edit, `Err(outcome)` a failed delivery. `hook` is its id (accounts and
    /// reasons name it); `slug` names its own `extras` namespace, as its
    /// context tells it (`cx.slug()`, bare for a subagent's hook too).
    pub(crate) fn apply(
        &mut self,
        hook: &str,
        slug: &str,
        result: Result<Option<String>, Outcome>,
    ) {
        let status = if self.rolled_back.is_some() {
            EditStatus::Ignored
        } else {
            match result {
                Err(outcome) => {
                    self.rollback(format!("hook `{hook}` failed ({outcome})"));
                    EditStatus::Failed(outcome)
                }
                Ok(None) => EditStatus::Unchanged,
                Ok(Some(_)) if self.backup.is_null() => {
                    let reason = "the event carries no `state` to edit".to_owned();
                    self.rollback(format!("hook `{hook}`: {reason}"));
                    EditStatus::Invalid(reason)
                }
                Ok(Some(text)) => {
                    let checked = serde_json::from_str::<Value>(&text)
                        .map_err(|e| format!("the edit is not JSON: {e}"))
                        .and_then(|new| {
                            validate(&new, self.state(), &self.backup, slug, text.len())
                                .map(|()| new)
                        });
                    match checked {
                        Ok(new) => {
                            self.current = Some(new);
                            EditStatus::Applied
                        }
                        Err(reason) => {
                            self.rollback(format!("hook `{hook}`: {reason}"));
                            EditStatus::Invalid(reason)
                        }
                    }
                }
            }
        };
        self.accounts.push(EditAccount {
            hook: hook.to_owned(),
            status,
            rolled_back: false,
        });
    }

    /// Records that a `*` handler failed on this event: no rollback.
    pub(crate) fn observer_failed(&mut self, hook: &str, outcome: Outcome) {
        self.accounts.push(EditAccount {
            hook: hook.to_owned(),
            status: EditStatus::ObserverFailed(outcome),
            rolled_back: false,
        });
    }

    fn rollback(&mut self, reason: String) {
        self.current = None;
        self.rolled_back = Some(reason);
        for a in &mut self.accounts {
            a.rolled_back |= a.status == EditStatus::Applied;
        }
    }

    /// The final state and the accounts.
    pub(crate) fn finish(self) -> EditResult {
        EditResult {
            changed: self.current.as_ref().is_some_and(|c| *c != self.backup),
            state: self.current.unwrap_or(self.backup),
            rolled_back: self.rolled_back,
            accounts: self.accounts,
        }
    }
}

/// Checks an edited state against the rules:
/// - it keeps the shape: `messages`, `tool_calls`, `tool_results` arrays and an `extras` object;
/// - reserved `progress` and `immutable_history` are untouched;
/// - the first `immutable_history` messages are untouched;
/// - every tool call keeps exactly one result and every result its call;
/// - `extras` outside the hook's own namespace (`extras[slug]`) are untouched;
/// - it stays within the size limit of event data.
pub(crate) fn validate(
    new: &Value,
    prev: &Value,
    original: &Value,
    slug: &str,
    size: usize,
) -> Result<(), String> {
    if size > MAX_DATA_BYTES {
        return Err(format!(
            "the edited state is {size} bytes, above the {MAX_DATA_BYTES}-byte limit"
        ));
    }
    fn arr<'v>(v: &'v Value, k: &str) -> Option<&'v Vec<Value>> {
        v.get(k).and_then(Value::as_array)
    }
    let (Some(messages), Some(calls), Some(results)) = (
        arr(new, "messages"),
        arr(new, "tool_calls"),
        arr(new, "tool_results"),
    ) else {
        return Err(
            "the edited state must keep `messages`, `tool_calls` and `tool_results` arrays".into(),
        );
    };
    let Some(extras) = new.get("extras").and_then(Value::as_object) else {
        return Err("the edited state must keep an `extras` object".into());
    };
    // Absent and null are the same (an SDK may write back `null` or `0` for them).
    fn field<'v>(v: &'v Value, k: &str) -> &'v Value {
        v.get(k).unwrap_or(&Value::Null)
    }
    if field(new, "progress") != field(original, "progress") {
        return Err("reserved `progress` fields were changed".into());
    }
    let frozen_of = |v: &Value| {
        v.get("immutable_history")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    if frozen_of(new) != frozen_of(original) {
        return Err("`immutable_history` was changed".into());
    }
    let frozen = frozen_of(original) as usize;
    let original_messages = arr(original, "messages").map_or(&[][..], Vec::as_slice);
    for i in 0..frozen.min(original_messages.len()) {
        if messages.get(i) != original_messages.get(i) {
            return Err(format!(
                "message {i} is in the immutable history and was changed"
            ));
        }
    }
    let ids = |v: &[Value]| {
        v.iter()
            .map(|c| {
                c.get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            })
            .collect::<Vec<_>>()
    };
    let (call_ids, result_ids) = (ids(calls), ids(results));
    for id in &call_ids {
        match result_ids.iter().filter(|r| *r == id).count() {
            1 => {}
            0 => return Err(format!("tool call `{id}` lost its result")),
            _ => return Err(format!("tool call `{id}` has more than one result")),
        }
    }
    if let Some(orphan) = result_ids.iter().find(|r| !call_ids.contains(r)) {
        return Err(format!("tool result `{orphan}` has no tool call"));
    }
    let empty = serde_json::Map::new();
    let prev_extras = prev
        .get("extras")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for key in prev_extras.keys().chain(extras.keys()) {
        if key != slug && prev_extras.get(key) != extras.get(key) {
            return Err(format!("extras[`{key}`] belongs to another hook"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> Value {
        json!({
            "messages": [{"id": "m1", "role": "user", "content": "hi"}, {"id": "m2", "role": "assistant", "content": "ok"}],
            "tool_calls": [{"call_id": "c1", "tool": "read_file", "input": {}}],
            "tool_results": [{"call_id": "c1", "status": "ok", "output": "x"}],
            "extras": {}, "progress": {"step": 1}, "immutable_history": 1
        })
    }

    #[test]
    fn an_invalid_edit_rolls_back_earlier_valid_ones() {
        let data = json!({"index": 0, "state": state()});
        let mut s = EditSession::new(&data);
        let mut ok = state();
        ok["extras"]["a"] = json!({"n": 1});
        s.apply("a", "a", Ok(Some(ok.to_string())));
        let mut orphan = ok.clone();
        orphan["tool_results"] = json!([]);
        s.apply("b", "b", Ok(Some(orphan.to_string())));
        s.apply("c", "c", Ok(None));
        let r = s.finish();
        assert_eq!(r.state, state());
        assert!(!r.changed);
        assert_eq!(
            r.rolled_back.as_deref(),
            Some("hook `b`: tool call `c1` lost its result")
        );
        let outcomes: Vec<(&EditStatus, bool)> = r
            .accounts
            .iter()
            .map(|a| (&a.status, a.rolled_back))
            .collect();
        assert_eq!(
            outcomes,
            [
                (&EditStatus::Applied, true),
                (
                    &EditStatus::Invalid("tool call `c1` lost its result".into()),
                    false
                ),
                (&EditStatus::Ignored, false)
            ]
        );
    }

    #[test]
    fn the_next_hook_gets_the_data_with_the_state_the_last_valid_edit_left() {
        let data = json!({"index": 0, "state": state(), "zeta": [1, 2]});
        let mut s = EditSession::new(&data);
        assert_eq!(s.data_for_next(), None, "no edit yet: the event's own data");
        s.apply("a", "a", Ok(None));
        assert_eq!(s.data_for_next(), None, "an unchanged state is no edit");
        let mut edited = state();
        edited["extras"]["a"] = json!({"n": 1});
        s.apply("a", "a", Ok(Some(edited.to_string())));
        let mut expected = data.clone();
        expected["state"] = edited;
        // Byte for byte what the data with the state put in its place serializes to.
        assert_eq!(s.data_for_next(), Some(expected.to_string()));
        s.apply("b", "b", Err(Outcome::Trap));
        assert_eq!(s.data_for_next(), None, "rolled back: the event's own data");
        let r = s.finish();
        assert_eq!((r.state, r.changed), (state(), false));
    }

    #[test]
    fn each_rule_names_what_broke() {
        let orig = state();
        let check = |f: &dyn Fn(&mut Value)| {
            let mut v = orig.clone();
            f(&mut v);
            validate(&v, &orig, &orig, "me", 10).unwrap_err()
        };
        assert_eq!(
            check(&|v| v["progress"]["step"] = json!(9)),
            "reserved `progress` fields were changed"
        );
        assert_eq!(
            check(&|v| v["messages"][0]["content"] = json!("rewritten")),
            "message 0 is in the immutable history and was changed"
        );
        assert_eq!(
            check(&|v| v["extras"]["other"] = json!(1)),
            "extras[`other`] belongs to another hook"
        );
        assert_eq!(
            check(&|v| v["tool_calls"] = json!([])),
            "tool result `c1` has no tool call"
        );
        let mut mine = orig.clone();
        mine["extras"]["me"] = json!({"pruned": 2});
        mine["messages"][1]["content"] = json!("shorter");
        assert_eq!(validate(&mine, &orig, &orig, "me", 10), Ok(()));
    }
}
