//! The event vocabulary: every event kind a hook can subscribe to.
//!
//! The names follow Eve's runtime stream vocabulary (`session.*`, `turn.*`,
//! `step.*`, `message.*`, `action(s).*`, `input.*`, `task.*`, ...): every kind
//! of Eve's public stream is a kind here, observed unless hookrt decides or
//! edits on it; deviations are recorded in `docs/adr/0001-event-vocabulary.md`
//! and the Eve bridge's mapping in `docs/adr/0002-eve-bridge.md`. Agent servers may also emit their own
//! kinds under the `custom.` prefix.

/// The subscription that matches every event.
pub const WILDCARD: &str = "*";
/// Prefix of a subscription that watches a decision or edit event without a
/// say in it (`observe:actions.requested`): the hook's answer and its failure
/// count for nothing, and it casts no vote.
pub(crate) const OBSERVE_PREFIX: &str = "observe:";
/// Prefix of a subscription that votes on a decision event and may also
/// rewrite the requested call's input (`rewrite:actions.requested`,
/// `rewrite:permission.requested`; world 0.3.0). A rewrite from a plain
/// subscription is a malformed answer.
pub(crate) const REWRITE_PREFIX: &str = "rewrite:";
/// The decision kinds whose calls' input a `rewrite:` subscription may rewrite.
pub const REWRITABLE: [&str; 2] = ["actions.requested", "permission.requested"];
/// Prefix of kinds an agent server defines itself.
pub(crate) const CUSTOM_PREFIX: &str = "custom.";

/// What an event lets a hook do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventClass {
    /// Hooks observe; what they return is ignored.
    Observe,
    /// Hooks answer; answers are merged by a fixed rule (`decision.rs`).
    Decision,
    /// Hooks may edit the agent input state; edits are validated and rolled
    /// back as one (`edit.rs`).
    Edit,
    /// The event asks whether something may go on (or whether a turn may
    /// stop); hooks answer a gate, merged block > continue > pass
    /// (`decision.rs`). World 0.3.0.
    Gate,
}

/// What a gate kind takes besides `pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateRule {
    /// `block(reason)`: what the event announces does not happen.
    Block,
    /// `continue(reason)`: the turn goes on, under the loop governor.
    Continue,
}

/// The kind whose stops the loop governor counts.
pub const TURN_STOPPING: &str = "turn.stopping";
/// The kind of a permission request (answered with a permission).
pub(crate) const PERMISSION_REQUESTED: &str = "permission.requested";

/// What gate kind `kind` takes; `None` for a kind that is no gate.
pub fn gate_rule(kind: &str) -> Option<GateRule> {
    match class_of(kind) {
        Gate if kind == TURN_STOPPING => Some(GateRule::Continue),
        Gate => Some(GateRule::Block),
        _ => None,
    }
}

/// The observe kinds on which agents take context from hooks (session
/// start, tool results, subagent start, and Claude Code's events that have
/// `additionalContext`). On these, on tool approvals, permission requests
/// and gates a hook's context is gathered; elsewhere (file edits, edits of
/// the agent input, other observe kinds) no agent takes it and it is ignored.
pub(crate) const CONTEXT_KINDS: [&str; 11] = [
    "session.started",
    "action.result",
    "subagent.started",
    "custom.claude.post_tool_batch",
    "custom.claude.setup",
    "custom.claude.notification",
    "custom.claude.post_model_switch",
    "custom.claude.user_prompt_expansion",
    "custom.claude.subagent_start",
    "custom.codex.subagent_start",
    "custom.copilot.subagent_start",
];

/// Whether hooks' context is gathered on `kind` (see [`CONTEXT_KINDS`]).
pub fn takes_context(kind: &str) -> bool {
    REWRITABLE.contains(&kind) || class_of(kind) == Gate || CONTEXT_KINDS.contains(&kind)
}

/// Whether only hooks of world 0.3.0 or later can answer `kind` (gates and
/// permission requests): older hooks observe it.
pub(crate) fn answered_from_v3(kind: &str) -> bool {
    answered_from_v3_as(kind, class_of(kind))
}

/// [`answered_from_v3`] for a kind whose class is known (no lookup).
pub(crate) fn answered_from_v3_as(kind: &str, class: EventClass) -> bool {
    kind == PERMISSION_REQUESTED || class == Gate
}

/// One event kind of the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventKind {
    /// The kind as it appears in envelopes, e.g. `message.completed`.
    pub name: &'static str,
    /// When the agent emits it.
    pub when: &'static str,
    /// What hooks may do with it.
    pub class: EventClass,
    /// Which streams carry it: hookrt's own and Eve's, or Eve's alone. The
    /// SDK types its data after it (`events::` or `eve::`).
    pub origin: Origin,
    /// The fields of its data on hookrt's own streams, in order, each `name`
    /// or `name?` (optional: absent means none). Every SDK types exactly
    /// these (`tests/all/vocabulary.rs` holds them to it). Empty for a kind
    /// only Eve's stream carries: its data is Eve's, typed by the Rust SDK's
    /// `eve::` structs alone.
    pub fields: &'static [&'static str],
}

impl EventKind {
    /// A kind of hookrt's own vocabulary, whose data has `fields`.
    const fn hookrt(
        name: &'static str,
        class: EventClass,
        fields: &'static [&'static str],
        when: &'static str,
    ) -> EventKind {
        EventKind {
            name,
            when,
            class,
            origin: Origin::Hookrt,
            fields,
        }
    }

    /// A kind only Eve's stream carries.
    const fn eve(name: &'static str, class: EventClass, when: &'static str) -> EventKind {
        EventKind {
            name,
            when,
            class,
            origin: Origin::Eve,
            fields: &[],
        }
    }
}

/// Which streams carry an event kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// hookrt's own vocabulary: every transport sends it (Eve's stream too,
    /// with Eve's own data: see `docs/adr/0002-eve-bridge.md`).
    Hookrt,
    /// Only Eve's stream sends it (`hookrt run --format eve`, the Eve bridge).
    Eve,
}

use EventClass::{Decision, Edit, Gate, Observe};

/// Every known kind, in lifecycle order.
pub const KINDS: &[EventKind] = &[
    EventKind::hookrt(
        "session.started",
        Observe,
        &["agent_name", "model?"],
        "a new session begins",
    ),
    EventKind::hookrt(
        "session.completed",
        Observe,
        &["turns"],
        "the session ends successfully",
    ),
    EventKind::hookrt(
        "session.failed",
        Observe,
        &["reason", "hook?", "event_id?", "outcome?", "message?"],
        "the session ends with a terminal failure",
    ),
    EventKind::hookrt(
        "turn.started",
        Observe,
        &["input_message_id?"],
        "a new turn begins within the session",
    ),
    EventKind::hookrt(
        "turn.stopping",
        Gate,
        &["continued", "last_message?"],
        "the agent is about to end its turn; hooks may keep it going",
    ),
    EventKind::hookrt(
        "turn.completed",
        Edit,
        &["steps", "usage?", "state?"],
        "a turn finishes successfully",
    ),
    EventKind::hookrt(
        "turn.failed",
        Observe,
        &["reason", "hook?", "event_id?", "outcome?", "message?"],
        "a turn finishes with an error",
    ),
    EventKind::hookrt(
        "step.started",
        Observe,
        &["index"],
        "a model step (one model call) begins",
    ),
    EventKind::hookrt(
        "step.completed",
        Edit,
        &["index", "finish_reason", "state?"],
        "a model step finishes, after its tool results are committed",
    ),
    EventKind::hookrt(
        "message.received",
        Observe,
        &["message_id", "role", "content"],
        "a user message arrives",
    ),
    EventKind::hookrt(
        "prompt.submitted",
        Gate,
        &["prompt", "source?", "history?"],
        "a user prompt is submitted, before the model sees it",
    ),
    EventKind::hookrt(
        "message.completed",
        Observe,
        &["message_id", "role", "content", "finish_reason?", "usage?"],
        "the model completes a message",
    ),
    EventKind::hookrt(
        "actions.requested",
        Decision,
        &["actions"],
        "the model requests tool calls, before they run",
    ),
    EventKind::hookrt(
        "action.result",
        Observe,
        &[
            "call_id",
            "tool",
            "status",
            "output?",
            "error?",
            "duration_ms?",
        ],
        "a tool call returns a result",
    ),
    EventKind::hookrt(
        "input.requested",
        Observe,
        &["request_id", "prompt"],
        "a tool or the model asks a human for input",
    ),
    EventKind::hookrt(
        "input.received",
        Observe,
        &["request_id", "answer"],
        "the human answers an input request",
    ),
    EventKind::hookrt(
        "file.edit.requested",
        Decision,
        &["path", "content", "before_content?", "global_storage"],
        "the agent is about to write a file",
    ),
    EventKind::hookrt(
        "permission.requested",
        Decision,
        &["tool", "input", "call_id?", "suggestions?"],
        "the agent is about to ask a human to allow a tool call",
    ),
    EventKind::hookrt(
        "task.created",
        Gate,
        &["task_id", "subject", "description?"],
        "a task (a to-do item of the agent's) is about to be created",
    ),
    EventKind::hookrt(
        "config.changed",
        Gate,
        &["source", "path?"],
        "the agent's settings changed and are about to apply",
    ),
    // The rest of Eve's stream (docs/adr/0002-eve-bridge.md): observed.
    EventKind::eve(
        "session.waiting",
        Observe,
        "the session parks until the next user message (Eve)",
    ),
    EventKind::eve(
        "turn.waiting",
        Observe,
        "an open turn parks for input or tasks (Eve)",
    ),
    EventKind::eve(
        "turn.cancelled",
        Observe,
        "a turn is cancelled; not a failure (Eve)",
    ),
    EventKind::eve("step.failed", Observe, "a model step fails (Eve)"),
    EventKind::eve(
        "reasoning.appended",
        Observe,
        "a delta of the model's reasoning (Eve)",
    ),
    EventKind::eve(
        "reasoning.completed",
        Observe,
        "a reasoning block is final (Eve)",
    ),
    EventKind::eve(
        "message.appended",
        Observe,
        "a delta of the assistant's text (Eve)",
    ),
    EventKind::eve(
        "result.completed",
        Observe,
        "a structured result of an output-schema turn (Eve)",
    ),
    EventKind::eve(
        "action.input.appended",
        Observe,
        "a delta of a tool call's raw input text, before it is requested (Eve)",
    ),
    EventKind::eve(
        "action.partial",
        Observe,
        "a preliminary result of a streaming tool (Eve)",
    ),
    EventKind::eve(
        "input.resolved",
        Observe,
        "the server accepted answers to input requests (Eve; hookrt's own streams say input.received)",
    ),
    EventKind::eve(
        "approval.candidate",
        Observe,
        "one responder's approval candidate changed (Eve)",
    ),
    EventKind::eve(
        "approval.settled",
        Observe,
        "an approval request settled (Eve)",
    ),
    EventKind::eve(
        "task.started",
        Observe,
        "an agent or workflow call started a task, maybe a child session (Eve)",
    ),
    EventKind::eve(
        "task.detached",
        Observe,
        "a waited task moved to the background (Eve)",
    ),
    EventKind::eve(
        "task.settled",
        Observe,
        "a task reached its first outcome (Eve)",
    ),
    EventKind::eve(
        "task.ended",
        Observe,
        "a task ended after its last outcome (Eve)",
    ),
    EventKind::eve(
        "agent.started",
        Observe,
        "a workflow opened a child agent session (Eve)",
    ),
    EventKind::eve(
        "compaction.requested",
        Gate,
        "history compaction began (Eve)",
    ),
    EventKind::eve(
        "compaction.completed",
        Observe,
        "a compaction checkpoint was written (Eve)",
    ),
    EventKind::eve(
        "context.cleared",
        Observe,
        "the model-message history was cleared (Eve)",
    ),
    EventKind::eve(
        "authorization.required",
        Observe,
        "a connection needs the user to sign in (Eve)",
    ),
    EventKind::eve(
        "authorization.completed",
        Observe,
        "a sign-in resolved (Eve)",
    ),
    EventKind::eve(
        "subagent.called",
        Observe,
        "a parent started a subagent session (Eve, before stream version 25)",
    ),
    EventKind::eve(
        "subagent.started",
        Observe,
        "an inline subagent began (Eve, before stream version 25)",
    ),
    EventKind::eve(
        "subagent.event",
        Observe,
        "one event of a subagent, wrapped by its parent (Eve, before stream version 25)",
    ),
    EventKind::eve(
        "subagent.completed",
        Observe,
        "a subagent finished (Eve, before stream version 25)",
    ),
];

/// The class of `kind`: `custom.` and unknown kinds are observed.
pub fn class_of(kind: &str) -> EventClass {
    KINDS
        .iter()
        .find(|k| k.name == kind)
        .map_or(Observe, |k| k.class)
}

/// Whether `kind` is an event kind an envelope may carry.
pub fn is_known(kind: &str) -> bool {
    KINDS.iter().any(|k| k.name == kind) || is_custom(kind)
}

/// Whether `kind` is a well-formed `custom.` kind (`custom.` followed by
/// lowercase dotted words).
pub(crate) fn is_custom(kind: &str) -> bool {
    kind.strip_prefix(CUSTOM_PREFIX).is_some_and(|rest| {
        !rest.is_empty()
            && rest.split('.').all(|w| {
                !w.is_empty()
                    && w.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
                    })
            })
    })
}

/// Whether `key` is a valid subscription: a known kind, the wildcard,
/// `observe:` and a decision, edit or gate kind, or `rewrite:` and a kind
/// whose calls can be rewritten.
pub fn is_subscribable(key: &str) -> bool {
    key == WILDCARD
        || is_known(key)
        || observed_kind(key).is_some_and(|k| class_of(k) != Observe)
        || rewritten_kind(key).is_some_and(|k| REWRITABLE.contains(&k))
}

/// The kind an `observe:<kind>` subscription watches; `None` for any other key.
pub fn observed_kind(key: &str) -> Option<&str> {
    key.strip_prefix(OBSERVE_PREFIX)
}

/// The kind a `rewrite:<kind>` subscription votes on and rewrites; `None`
/// for any other key.
pub fn rewritten_kind(key: &str) -> Option<&str> {
    key.strip_prefix(REWRITE_PREFIX)
}

/// The kind a subscription key handles: the key itself, or the kind after
/// `observe:` / `rewrite:` (`*` stays `*`).
pub fn handled_kind(key: &str) -> &str {
    observed_kind(key)
        .or_else(|| rewritten_kind(key))
        .unwrap_or(key)
}

/// Why `key` is not a valid subscription, for a load problem.
pub fn subscription_problem(key: &str) -> String {
    if rewritten_kind(key).is_some() {
        return format!(
            "subscribes to `{key}`, but only {} can be rewritten (`rewrite:` followed by one of them)",
            REWRITABLE.map(|k| format!("`{k}`")).join(" and ")
        );
    }
    match observed_kind(key) {
        Some(k) if is_known(k) => format!(
            "subscribes to `{key}`, but `{k}` is an observe event already: subscribe to `{k}`"
        ),
        Some(k) => format!("subscribes to `{key}`: {}", unknown_kind_message(k)),
        None => format!("subscribes to an {}", unknown_kind_message(key)),
    }
}

/// The known kind closest to `unknown`, when one is close enough to be a typo.
pub(crate) fn suggest(unknown: &str) -> Option<&'static str> {
    KINDS
        .iter()
        .map(|k| (strsim::levenshtein(unknown, k.name), k.name))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// "unknown event kind `x`" with a suggestion when there is one.
pub(crate) fn unknown_kind_message(kind: &str) -> String {
    match suggest(kind) {
        Some(s) => format!("unknown event kind `{kind}` (did you mean `{s}`?)"),
        None => format!(
            "unknown event kind `{kind}` (known kinds are listed in docs/envelope.md; own kinds start with `custom.`)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typo_gets_the_closest_kind() {
        assert_eq!(suggest("mesage.completed"), Some("message.completed"));
        assert_eq!(suggest("totally.else"), None);
    }

    #[test]
    fn observe_subscriptions_take_decision_and_edit_kinds_only() {
        assert!(is_subscribable("observe:actions.requested"));
        assert!(is_subscribable("observe:step.completed"));
        assert!(!is_subscribable("observe:message.completed"));
        assert!(!is_subscribable("observe:actions.requestd"));
        assert_eq!(
            observed_kind("observe:file.edit.requested"),
            Some("file.edit.requested")
        );
        assert_eq!(observed_kind("actions.requested"), None);
        assert_eq!(
            subscription_problem("observe:message.completed"),
            "subscribes to `observe:message.completed`, but `message.completed` is an observe event already: subscribe to `message.completed`"
        );
    }

    #[test]
    fn custom_kinds_must_be_well_formed() {
        assert!(is_known("custom.deploy.finished"));
        assert!(!is_known("custom."));
        assert!(!is_known("custom.Deploy"));
    }
}
