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
pub const OBSERVE_PREFIX: &str = "observe:";
/// Prefix of a subscription that votes on a decision event and may also
/// rewrite the requested call's input (`rewrite:actions.requested`,
/// `rewrite:permission.requested`; world 0.3.0). A rewrite from a plain
/// subscription is a malformed answer.
pub const REWRITE_PREFIX: &str = "rewrite:";
/// The decision kinds whose calls' input a `rewrite:` subscription may rewrite.
pub const REWRITABLE: [&str; 2] = ["actions.requested", "permission.requested"];
/// Prefix of kinds an agent server defines itself.
pub const CUSTOM_PREFIX: &str = "custom.";

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
pub const PERMISSION_REQUESTED: &str = "permission.requested";

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
pub const CONTEXT_KINDS: [&str; 11] = [
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
pub fn answered_from_v3(kind: &str) -> bool {
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
use Origin::{Eve, Hookrt};

/// Every known kind, in lifecycle order.
pub const KINDS: &[EventKind] = &[
    EventKind {
        name: "session.started",
        when: "a new session begins",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "session.completed",
        when: "the session ends successfully",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "session.failed",
        when: "the session ends with a terminal failure",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "turn.started",
        when: "a new turn begins within the session",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "turn.stopping",
        when: "the agent is about to end its turn; hooks may keep it going",
        class: Gate,
        origin: Hookrt,
    },
    EventKind {
        name: "turn.completed",
        when: "a turn finishes successfully",
        class: Edit,
        origin: Hookrt,
    },
    EventKind {
        name: "turn.failed",
        when: "a turn finishes with an error",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "step.started",
        when: "a model step (one model call) begins",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "step.completed",
        when: "a model step finishes, after its tool results are committed",
        class: Edit,
        origin: Hookrt,
    },
    EventKind {
        name: "message.received",
        when: "a user message arrives",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "prompt.submitted",
        when: "a user prompt is submitted, before the model sees it",
        class: Gate,
        origin: Hookrt,
    },
    EventKind {
        name: "message.completed",
        when: "the model completes a message",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "actions.requested",
        when: "the model requests tool calls, before they run",
        class: Decision,
        origin: Hookrt,
    },
    EventKind {
        name: "action.result",
        when: "a tool call returns a result",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "input.requested",
        when: "a tool or the model asks a human for input",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "input.received",
        when: "the human answers an input request",
        class: Observe,
        origin: Hookrt,
    },
    EventKind {
        name: "file.edit.requested",
        when: "the agent is about to write a file",
        class: Decision,
        origin: Hookrt,
    },
    EventKind {
        name: "permission.requested",
        when: "the agent is about to ask a human to allow a tool call",
        class: Decision,
        origin: Hookrt,
    },
    EventKind {
        name: "task.created",
        when: "a task (a to-do item of the agent's) is about to be created",
        class: Gate,
        origin: Hookrt,
    },
    EventKind {
        name: "config.changed",
        when: "the agent's settings changed and are about to apply",
        class: Gate,
        origin: Hookrt,
    },
    // The rest of Eve's stream (docs/adr/0002-eve-bridge.md): observed.
    EventKind {
        name: "session.waiting",
        when: "the session parks until the next user message (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "turn.waiting",
        when: "an open turn parks for input or tasks (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "turn.cancelled",
        when: "a turn is cancelled; not a failure (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "step.failed",
        when: "a model step fails (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "reasoning.appended",
        when: "a delta of the model's reasoning (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "reasoning.completed",
        when: "a reasoning block is final (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "message.appended",
        when: "a delta of the assistant's text (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "result.completed",
        when: "a structured result of an output-schema turn (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "action.input.appended",
        when: "a delta of a tool call's raw input text, before it is requested (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "action.partial",
        when: "a preliminary result of a streaming tool (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "input.resolved",
        when: "the server accepted answers to input requests (Eve; hookrt's own streams say input.received)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "approval.candidate",
        when: "one responder's approval candidate changed (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "approval.settled",
        when: "an approval request settled (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "task.started",
        when: "an agent or workflow call started a task, maybe a child session (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "task.detached",
        when: "a waited task moved to the background (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "task.settled",
        when: "a task reached its first outcome (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "task.ended",
        when: "a task ended after its last outcome (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "agent.started",
        when: "a workflow opened a child agent session (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "compaction.requested",
        when: "history compaction began (Eve)",
        class: Gate,
        origin: Eve,
    },
    EventKind {
        name: "compaction.completed",
        when: "a compaction checkpoint was written (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "context.cleared",
        when: "the model-message history was cleared (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "authorization.required",
        when: "a connection needs the user to sign in (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "authorization.completed",
        when: "a sign-in resolved (Eve)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "subagent.called",
        when: "a parent started a subagent session (Eve, before stream version 25)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "subagent.started",
        when: "an inline subagent began (Eve, before stream version 25)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "subagent.event",
        when: "one event of a subagent, wrapped by its parent (Eve, before stream version 25)",
        class: Observe,
        origin: Eve,
    },
    EventKind {
        name: "subagent.completed",
        when: "a subagent finished (Eve, before stream version 25)",
        class: Observe,
        origin: Eve,
    },
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
pub fn is_custom(kind: &str) -> bool {
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
pub fn suggest(unknown: &str) -> Option<&'static str> {
    KINDS
        .iter()
        .map(|k| (strsim::levenshtein(unknown, k.name), k.name))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// "unknown event kind `x`" with a suggestion when there is one.
pub fn unknown_kind_message(kind: &str) -> String {
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
