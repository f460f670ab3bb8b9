//! Anthropic's inference hooks (Claude Enterprise, beta; the protocol of
//! "Develop an Inference hooks integration", October 2026): before each
//! governed prompt, and before the tool calls a model's answer asks for,
//! Anthropic POSTs a frame (`type`, `request_id`, `tenant_id`, `actor`,
//! `source`, `session_id`, `model`, `metadata`, `messages`: the transcript)
//! signed with Standard Webhooks headers, and waits for a verdict,
//! `{"action": "allow" | "deny", "deny_reason", "reference_id"}`, always
//! with status 200. Not an agent's hooks but a plane over every Claude
//! surface of an organisation (claude.ai, Claude Code, Cowork): one frame
//! is one event, a prompt frame `prompt.submitted` (the last message's
//! text, the earlier ones as its history), a tool-call frame
//! `actions.requested` (one action per `tool_use` of the last assistant
//! message, one verdict for all).
//!
//! A verdict cannot rewrite, ask or add context: a rewritten or asked call
//! is denied, context dropped; an unknown `type` is observed and allowed.
//! `request_id` (the `webhook-id`) names the event: a retry is the same
//! event. No file is installed: the endpoint is set in claude.ai's admin
//! settings (docs/agents.md, "Anthropic inference hooks").

use serde_json::{Map, Value, json};

use super::protocol::{Mapped, Missing, OpenApi, Protocol, Reading, Signature, Silence};
use super::reply;
use crate::delivery::record::Resolution;
use crate::event::answer::{Approval, Gate};

/// Every frame `type` of the protocol and its kind.
pub(super) const INFERENCE_EVENTS: [(&str, &str); 2] = [
    ("prompt", "prompt.submitted"),
    ("tool_call", "actions.requested"),
];

/// The frames that gate something: both.
pub(super) const INFERENCE_GATES: [&str; 2] = ["prompt", "tool_call"];

/// The longest `deny_reason` Anthropic shows (it cuts a longer one).
const MAX_DENY_REASON: usize = 500;

/// The longest `reference_id` Anthropic keeps (it drops a longer one).
const MAX_REFERENCE_ID: usize = 50;

/// How an inference hook's frame reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "anthropic-inference",
    label: "Anthropic inference hooks",
    word: "inference",
    events: &INFERENCE_EVENTS,
    event_field: Some("type"),
    // `session_id` may be null (a client that sends none): the request's
    // own id stands in.
    session_fields: &["session_id", "request_id"],
    id_field: Some("request_id"),
    subagent_fields: None,
    kept: &["model", "tenant_id", "actor", "metadata"],
    dropped: &[],
    transcripts: None,
    map: inference_data,
    turn_field: None,
    gates: &INFERENCE_GATES,
    context_events: &[],
    answer: inference_answer,
    refusal: inference_refusal,
    silence: Silence::Json(r#"{"action":"allow"}"#),
    refuses_in_json: &INFERENCE_GATES,
    install: None,
    signature: Some(Signature::StandardWebhooks),
    openapi: OpenApi {
        operation_id: "anthropicInferenceHook",
        input_schema: "AnthropicInferenceFrame",
    },
};

/// The kind and data of a frame.
fn inference_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let missing = |field| Missing {
        event: event.to_owned(),
        field,
    };
    let messages = fields
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| missing("messages"))?;
    match event {
        "prompt" => {
            let (last, earlier) = messages.split_last().ok_or_else(|| missing("messages"))?;
            let history: Vec<Value> = earlier
                .iter()
                .map(|m| json!({"role": role(m), "text": text_of(m)}))
                .collect();
            let source = fields
                .get("source")
                .and_then(|s| s.get("application"))
                .cloned()
                .unwrap_or(Value::Null);
            Ok(Mapped {
                kind: kind.to_owned(),
                step: None,
                data: json!({"prompt": text_of(last), "source": source, "history": history}),
            })
        }
        _ => {
            // The calls are the last assistant message's: earlier messages
            // may come before it in later versions of the protocol.
            let asked = messages
                .iter()
                .rev()
                .find(|m| role(m) == "assistant")
                .ok_or_else(|| missing("messages"))?;
            let actions: Vec<Value> = blocks(asked)
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .map(|b| {
                    let call_id = id.call_id(b.get("id"));
                    let mut action = json!({
                        "call_id": call_id,
                        "tool": b.get("tool_name").and_then(Value::as_str).unwrap_or(""),
                        "input": b.get("input").cloned().unwrap_or(Value::Null),
                    });
                    if let Some(info) = b.get("tool_info") {
                        action["tool_info"] = info.clone();
                    }
                    action
                })
                .collect();
            if actions.is_empty() {
                return Err(missing("tool_use"));
            }
            let step = match actions.as_slice() {
                [one] => one["call_id"].as_str().map(str::to_owned),
                _ => None,
            };
            Ok(Mapped {
                kind: kind.to_owned(),
                step,
                data: json!({"actions": actions}),
            })
        }
    }
}

/// A message's role (`user`, `assistant`, or one a later protocol adds).
fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// A message's content blocks (a bare string is one text block).
fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Everything of a message a policy reads as text, blocks joined by a
/// blank line: text, an attachment's extracted text (after its name), a
/// tool result, a tool call (its name and input as JSON). Blocks of a type
/// the protocol may add later are skipped.
fn text_of(message: &Value) -> String {
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        return text.to_owned();
    }
    let str_of = |b: &Value, k: &str| b.get(k).and_then(Value::as_str).map(str::to_owned);
    let parts: Vec<String> = blocks(message)
        .filter_map(|b| match b.get("type").and_then(Value::as_str)? {
            "text" => str_of(b, "text"),
            "tool_result" => str_of(b, "content"),
            "attachment" => {
                let text = str_of(b, "text")?;
                let name = str_of(b, "file_name").unwrap_or_else(|| "attachment".into());
                Some(format!("[{name}]\n{text}"))
            }
            "tool_use" => Some(format!(
                "{}: {}",
                str_of(b, "tool_name").unwrap_or_default(),
                b.get("input").unwrap_or(&Value::Null)
            )),
            _ => None,
        })
        .collect();
    parts.join("\n\n")
}

/// The verdict on a frame whose hooks decided `resolution`: always one
/// (nothing decided is an allow).
fn inference_answer(_name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let denied = match resolution {
        Some(Resolution::ToolApproval(t)) => t.calls.iter().find_map(|call| {
            let by = call.decided_by.clone();
            match &call.verdict {
                Approval::Deny(why) => Some((why.clone(), by)),
                Approval::Ask(question) => Some((reply::cannot_ask(question), by)),
                // A rewrite cannot go back: the call as asked is not what
                // the hooks let run.
                _ if call.input.is_some() => Some((REWRITE_NOT_CARRIED.to_owned(), by)),
                _ => None,
            }
        }),
        Some(Resolution::Gate(g)) => match &g.verdict {
            Gate::Block(why) => Some((why.clone(), g.decided_by.clone())),
            Gate::Continue(_) | Gate::Pass => None,
        },
        _ => None,
    };
    Some(match denied {
        Some((why, by)) => deny(&why, by.as_deref()),
        None => json!({"action": "allow"}),
    })
}

/// The reason of a deny that stands in for a rewrite.
const REWRITE_NOT_CARRIED: &str = "hookrt's hooks let this call run only with a rewritten input, which an inference hook's verdict cannot carry: denied";

/// The verdict refusing a frame hookrt could not decide.
fn inference_refusal(_name: &str, reason: &str) -> Value {
    deny(&reply::refused(reason), None)
}

/// A deny saying `why` (cut to what Anthropic shows), naming the hook that
/// decided as its `reference_id` where it fits the protocol's alphabet.
fn deny(why: &str, by: Option<&str>) -> Value {
    let reason: String = why.chars().take(MAX_DENY_REASON).collect();
    let mut verdict = json!({"action": "deny", "deny_reason": reason});
    if let Some(hook) = by.filter(|h| {
        !h.is_empty()
            && h.len() <= MAX_REFERENCE_ID
            && h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:/-".contains(&b))
    }) {
        verdict["reference_id"] = json!(hook);
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::bridge::Bridge;

    fn bridge() -> Bridge {
        Bridge::of(&PROTOCOL)
    }

    #[test]
    fn a_prompt_frame_is_its_last_messages_text_with_the_earlier_ones_as_history() {
        let frame = json!({
            "type": "prompt", "request_id": "req_1", "tenant_id": "t", "session_id": null,
            "actor": {"type": "user", "id": "user_1", "email_address": null},
            "source": {"application": "claude-code"}, "model": "claude-sonnet-4-5",
            "metadata": {},
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hello"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "tool_name": "bash", "input": {"command": "ls"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "tool_name": "bash", "content": "a\nb", "is_error": false},
                    {"type": "text", "text": "now summarize"},
                    {"type": "attachment", "file_name": "r.pdf", "media_type": "application/pdf", "size_bytes": 3, "text": "Q2"},
                    {"type": "attachment", "file_name": null, "media_type": "image/png", "size_bytes": 9, "text": null},
                    {"type": "hologram", "x": 1}]}
            ]
        });
        let read = bridge()
            .read("anthropic-inference", &frame.to_string(), None, "http")
            .unwrap();
        let e = &read.envelope;
        assert_eq!(
            (read.name.as_str(), e.kind.as_str()),
            ("prompt", "prompt.submitted")
        );
        assert_eq!(e.data["prompt"], "a\nb\n\nnow summarize\n\n[r.pdf]\nQ2");
        assert_eq!(e.data["source"], "claude-code");
        assert_eq!(
            e.data["history"],
            json!([{"role": "user", "text": "hello"}, {"role": "assistant", "text": "bash: {\"command\":\"ls\"}"}])
        );
        assert_eq!(e.data["actor"]["id"], "user_1");
        // No session: the request stands in.
        assert_eq!(e.coordinates.session, "req_1");
    }

    #[test]
    fn the_request_id_names_the_event_so_a_retry_is_the_same_event() {
        let frame = |id: &str| {
            json!({"type": "tool_call", "request_id": id, "session_id": "s",
                "messages": [{"role": "assistant", "content": [
                    {"type": "text", "text": "I'll look"},
                    {"type": "tool_use", "id": "toolu_a", "tool_name": "bash", "input": {"command": "rm -rf build/"}, "tool_info": {"type": "client", "tool_type": "bash_20250124"}},
                    {"type": "tool_use", "id": "toolu_b", "tool_name": "crm_search", "input": {}}]}]})
            .to_string()
        };
        let read = |id| {
            bridge()
                .read("a", &frame(id), None, "http")
                .unwrap()
                .envelope
        };
        let (one, again, other) = (read("req_1"), read("req_1"), read("req_2"));
        assert_eq!(one.id, again.id);
        assert_ne!(one.id, other.id);
        assert!(one.id.starts_with("inference-") && one.id.len() <= MAX_REFERENCE_ID);
        let actions = one.data["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 2);
        assert_eq!(actions[0]["input"]["command"], "rm -rf build/");
        assert_eq!(actions[0]["tool_info"]["tool_type"], "bash_20250124");
        assert_eq!(one.coordinates.step, None, "two calls, no one step");
        let no_id = json!({"type": "prompt", "session_id": "s", "messages": [{"role": "user", "content": "x"}]});
        let e = bridge()
            .read("a", &no_id.to_string(), None, "http")
            .unwrap_err();
        assert!(e.to_string().contains("`request_id` is missing"), "{e}");
        let no_calls = json!({"type": "tool_call", "request_id": "r", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]});
        let e = bridge()
            .read("a", &no_calls.to_string(), None, "http")
            .unwrap_err();
        assert!(e.to_string().contains("tool_use"), "{e}");
    }

    #[test]
    fn verdicts_are_allow_or_deny_within_the_protocols_bounds() {
        let b = bridge();
        assert_eq!(b.answer("prompt", None), Some(json!({"action": "allow"})));
        assert_eq!(b.no_opinion(), Some(json!({"action": "allow"})));
        let long = "x".repeat(MAX_DENY_REASON + 20);
        let refusal = b.refusal("prompt", &long);
        assert_eq!(refusal["action"], "deny");
        assert_eq!(
            refusal["deny_reason"].as_str().unwrap().chars().count(),
            MAX_DENY_REASON
        );
        assert!(refusal.get("reference_id").is_none());
        assert_eq!(
            deny("no", Some("policy/guard"))["reference_id"],
            "policy/guard"
        );
        assert!(deny("no", Some("a b")).get("reference_id").is_none());
        assert!(
            deny("no", Some(&"a".repeat(51)))
                .get("reference_id")
                .is_none()
        );
    }
}
