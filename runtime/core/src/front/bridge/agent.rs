//! The registry of agents, [`Bridge::ALL`], and one way to speak to each:
//! read its hook input ([`Bridge::read`]), tell which gate an input serves
//! ([`Bridge::gate_served`]), answer it ([`Bridge::answer`]), refuse a gate
//! it could not decide ([`Bridge::refusal`]), and exit as its command hooks
//! must ([`Bridge::failure`]). `hookrt hook --agent NAME`, `hookrt
//! claude-hook`, `hookrt install` and `hookrt serve`'s agent routes all go
//! through here, so every transport answers an agent alike; everything a
//! bridge knows of its agent is the agent's [`Protocol`].

use serde_json::Value;

use super::hook_input::{BridgeError, BridgeEvent, Stamp, read, read_stamped};
use super::protocol::{Protocol, Silence};
use super::reply;
use crate::delivery::record::Resolution;

/// An agent whose hooks hookrt stands in for: a handle on its [`Protocol`].
#[derive(Clone, Copy)]
pub struct Bridge(&'static Protocol);

/// What a command hook does when hookrt failed: what it prints on stdout
/// (the agent's refusal, where the exit code alone would not refuse) and
/// its exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Printed on stdout, when the agent needs JSON to refuse.
    pub stdout: Option<Value>,
    /// The exit code.
    pub code: u8,
}

impl PartialEq for Bridge {
    fn eq(&self, other: &Bridge) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Bridge {}

impl std::hash::Hash for Bridge {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bridge({})", self.name())
    }
}

impl Bridge {
    /// Every agent, in the order the docs list them: the one list of
    /// agents, made by the registry line in `bridge/mod.rs` (a new agent is
    /// its module and its name there).
    pub const ALL: [Bridge; super::REGISTERED.len()] = {
        let mut all = [Bridge(super::REGISTERED[0]); super::REGISTERED.len()];
        let mut i = 1;
        while i < all.len() {
            all[i] = Bridge(super::REGISTERED[i]);
            i += 1;
        }
        all
    };

    /// The bridge of an agent `protocol` describes, registered or not (an
    /// agent a test defines, an embedder's own).
    pub const fn of(protocol: &'static Protocol) -> Bridge {
        Bridge(protocol)
    }

    /// The agent's name on the command line and in URLs (`claude-code`,
    /// `codex`, …): also the agent name hooks see unless told another.
    pub fn name(self) -> &'static str {
        self.0.agent
    }

    /// The agent named `name` ([`Bridge::name`]).
    pub fn named(name: &str) -> Option<Bridge> {
        Bridge::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The names of every agent, for messages.
    pub fn names() -> String {
        Bridge::ALL.map(Bridge::name).join(", ")
    }

    /// Everything about the agent's hooks.
    pub fn protocol(self) -> &'static Protocol {
        self.0
    }

    /// The agent's route on `hookrt serve` (`/v1/claude-code`).
    pub fn route(self) -> String {
        format!("/v1/{}", self.name())
    }

    /// Every event of the pinned release of the agent and its kind.
    pub fn events(self) -> &'static [(&'static str, &'static str)] {
        self.0.events
    }

    /// The envelope of one hook input: `agent` is the name hooks see,
    /// `event` names the event when the input does not, `transport` is how
    /// it came (`command`, `http`).
    pub fn read(
        self,
        agent: &str,
        input: &str,
        event: Option<&str>,
        transport: &str,
    ) -> Result<BridgeEvent, BridgeError> {
        read(self.0, agent, input, event, transport)
    }

    /// [`Bridge::read`] of an input its source says it sent at `sent`
    /// (after the Unix epoch; a signed source's verified timestamp): the
    /// envelope's timestamp is that, not when it was read, so a source that
    /// names its events ([`Protocol::id_field`]) and sends one again (a
    /// retry) sends the very same event, decided once.
    pub fn read_sent_at(
        self,
        agent: &str,
        input: &str,
        event: Option<&str>,
        transport: &str,
        sent: std::time::Duration,
    ) -> Result<BridgeEvent, BridgeError> {
        let stamp = Stamp {
            timestamp: crate::event::clock::rfc3339(sent),
            ..Stamp::now()
        };
        read_stamped(self.0, agent, input, event, transport, stamp)
    }

    /// [`Bridge::read`] stamped as `stamp` says (a replayed recording).
    pub(crate) fn read_stamped(
        self,
        agent: &str,
        input: &str,
        event: Option<&str>,
        transport: &str,
        stamp: Stamp,
    ) -> Result<BridgeEvent, BridgeError> {
        read_stamped(self.0, agent, input, event, transport, stamp)
    }

    /// The events that gate something: hookrt failing on one must refuse.
    pub fn gates(self) -> &'static [&'static str] {
        self.0.gates
    }

    /// Whether event `name` gates something.
    pub fn is_gate(self, name: &str) -> bool {
        self.gates().contains(&name)
    }

    /// The gate a raw input names, read without parsing it (so also when it
    /// is broken).
    pub(crate) fn gate_named(self, input: &str) -> Option<&'static str> {
        reply::gate_named(self.gates(), input)
    }

    /// The one answer to "which gate does this input serve", before it is
    /// parsed: the event the hook entry names (`--event`, `?event=`) when it
    /// names one, else the gate the raw input names (`None` while the input
    /// is not read). Once parsed, the input's own event decides
    /// ([`Bridge::is_gate`]).
    pub fn gate_served(self, named: Option<&str>, input: Option<&str>) -> Option<&'static str> {
        match named {
            Some(event) => self.gates().iter().copied().find(|g| *g == event),
            None => input.and_then(|i| self.gate_named(i)),
        }
    }

    /// What the agent reads back after event `name`, whose hooks decided
    /// `resolution`: `None` when there is nothing to say.
    pub fn answer(self, name: &str, resolution: Option<&Resolution>) -> Option<Value> {
        (self.0.answer)(name, resolution)
    }

    /// What a command hook prints when there is nothing to say: nothing,
    /// or `{}` where the agent would read anything else on stderr or stdout
    /// as a message (Gemini CLI), or the allow of a source every answer of
    /// which must be a verdict (Anthropic's inference hooks).
    pub fn no_opinion(self) -> Option<Value> {
        match self.0.silence {
            Silence::Nothing => None,
            Silence::Json(text) => Some(
                serde_json::from_str(text).expect("a protocol's silence is JSON (unit-tested)"),
            ),
        }
    }

    /// The answer that refuses gate `name` because hookrt could not decide
    /// it (`reason` says why).
    pub fn refusal(self, name: &str, reason: &str) -> Value {
        (self.0.refusal)(name, reason)
    }

    /// What a command hook hookrt failed in does: refuse `gate` (the gate
    /// the input names, if it names one) so the agent blocks what it
    /// guards, or, for any other event, exit so the agent shows the error
    /// and goes on (1). Every agent blocks a tool call on exit 2; a gate the
    /// agent lets through on a failing exit ([`Protocol::refuses_in_json`])
    /// refuses in JSON and exits 0.
    pub fn failure(self, gate: Option<&str>, reason: &str) -> Failure {
        match gate {
            None => Failure {
                stdout: None,
                code: 1,
            },
            Some(g) if self.0.refuses_in_json.contains(&g) => Failure {
                stdout: Some(self.refusal(g, reason)),
                code: 0,
            },
            Some(_) => Failure {
                stdout: None,
                code: 2,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::event::kind::{CONTEXT_KINDS, takes_context};

    #[test]
    fn context_kinds_list_every_agents_custom_context_kind_and_no_other() {
        let mut derived = BTreeSet::new();
        for bridge in Bridge::ALL {
            for event in bridge.protocol().context_events {
                let (_, kind) = bridge
                    .events()
                    .iter()
                    .find(|(name, _)| name == event)
                    .unwrap_or_else(|| panic!("{bridge:?}: context event {event} is no event"));
                assert!(takes_context(kind), "{bridge:?} {event}: {kind}");
                if kind.starts_with("custom.") {
                    derived.insert(*kind);
                }
            }
        }
        let listed: BTreeSet<&str> = CONTEXT_KINDS
            .iter()
            .copied()
            .filter(|k| k.starts_with("custom."))
            .collect();
        assert_eq!(
            listed, derived,
            "event::kind::CONTEXT_KINDS lists the custom kinds the agents' context events map to"
        );
    }

    #[test]
    fn every_agent_is_registered_once_and_names_only_its_own_events() {
        let names: BTreeSet<&str> = Bridge::ALL.iter().map(|b| b.name()).collect();
        let words: BTreeSet<&str> = Bridge::ALL.iter().map(|b| b.protocol().word).collect();
        assert_eq!(
            (names.len(), words.len()),
            (Bridge::ALL.len(), Bridge::ALL.len())
        );
        for bridge in Bridge::ALL {
            let p = bridge.protocol();
            let known = |e: &&str| bridge.events().iter().any(|(name, _)| name == e);
            let installed = p
                .install
                .iter()
                .flat_map(|i| [i.tool_events, i.not_installed, i.command_only]);
            for list in [p.gates, p.context_events].into_iter().chain(installed) {
                assert!(list.iter().all(known), "{bridge:?}: {list:?}");
            }
            assert!(p.refuses_in_json.iter().all(|g| bridge.is_gate(g)));
            // A silence given as JSON text parses (`no_opinion` relies on it).
            let _ = bridge.no_opinion();
            assert_eq!(Bridge::named(bridge.name()), Some(bridge));
        }
    }

    /// Each agent's failure form, written out rather than read back from
    /// the protocols: exit 2 blocks every gate, but Copilot CLI lets a
    /// prompt through on any exit, so its prompt gate refuses in JSON and
    /// exits 0 (as an inference hook's frames do: a verdict is the only
    /// answer, hookrt's OpenCode plugin's gates: it reads stdout, and
    /// Cline's, which reads no exit code); any
    /// other event exits 1 (shown, and the agent goes on).
    #[test]
    fn each_agents_failure_blocks_its_gates_and_lets_other_events_go_on() {
        let reason = "the agent folder does not exist";
        let said = format!("hookrt could not decide this, so it is refused: {reason}");
        let verdict = serde_json::json!({"action": "deny", "deny_reason": said});
        let in_json = [
            (
                "copilot",
                "userPromptSubmitted",
                serde_json::json!({"decision": "block", "reason": said}),
            ),
            ("anthropic-inference", "prompt", verdict.clone()),
            ("anthropic-inference", "tool_call", verdict),
        ];
        // hookrt's plugin reads every answer on stdout: it throws a deny.
        let deny = serde_json::json!({"decision": "deny", "reason": said});
        // Cline reads no exit code: its cancel.
        let cancel = serde_json::json!({"cancel": true, "errorMessage": said});
        let in_json: Vec<_> = in_json
            .into_iter()
            .chain(["opencode", "kilo"].into_iter().flat_map(|agent| {
                ["tool.execute.before", "permission.ask", "chat.message"]
                    .map(|gate| (agent, gate, deny.clone()))
            }))
            .chain([("cline", "PreToolUse", cancel)])
            // goose blocks on its block on stdout whatever the exit code;
            // Antigravity CLI shows no stderr: its deny, with the reason.
            .chain([
                (
                    "goose",
                    "PreToolUse",
                    serde_json::json!({"decision": "block", "reason": said}),
                ),
                ("antigravity", "PreToolUse", deny.clone()),
            ])
            // Every answer of the MCP interceptors is a result's body.
            .chain([
                (
                    "mcp",
                    "tools/call",
                    serde_json::json!({"valid": false, "severity": "error",
                        "messages": [{"message": said, "severity": "error"}]}),
                ),
                (
                    "mcp",
                    "tools/call:rewrite",
                    serde_json::json!({"failed": said}),
                ),
            ])
            .collect();
        let mut refused_in_json = 0;
        for bridge in Bridge::ALL {
            assert!(!bridge.gates().is_empty(), "{bridge:?} has gates");
            for gate in bridge.gates() {
                let failure = bridge.failure(Some(gate), reason);
                match in_json
                    .iter()
                    .find(|(a, g, _)| *a == bridge.name() && g == gate)
                {
                    Some((_, _, answer)) => {
                        refused_in_json += 1;
                        assert_eq!(failure.code, 0, "{bridge:?} {gate}");
                        assert_eq!(failure.stdout.as_ref(), Some(answer), "{bridge:?} {gate}");
                    }
                    None => {
                        assert_eq!(failure.code, 2, "{bridge:?} {gate}");
                        assert_eq!(failure.stdout, None, "{bridge:?} {gate}");
                    }
                }
            }
            let other = bridge.failure(None, reason);
            assert_eq!((other.code, other.stdout), (1, None), "{bridge:?}");
        }
        assert_eq!(
            refused_in_json,
            in_json.len(),
            "each JSON refusal is some agent's gate"
        );
    }
}
