//! One `interceptor/invoke`: its params read (`name`, `event`, `phase`,
//! `payload`, `config?`, `timeoutMs?`, `context?`), the `mcp` protocol's
//! input the hooks get for it, and the invocation's result made of what
//! they answered: a validation (`valid`, `severity`, `messages`) or a
//! mutation (`modified`, `payload`), with `interceptor`, `type`, `phase`
//! and `durationMs`; or the draft's error.

use std::time::Duration;

use hookrt::front::bridge::mcp::call_params;
use serde_json::{Value, json};

use crate::interceptors::{Interceptor, Kind, Phase};

/// Why an invocation has no result, as the draft's JSON-RPC errors say.
#[derive(Debug, Clone, PartialEq)]
pub enum InvokeError {
    /// Params that are not an invocation of an interceptor offered here,
    /// on an event and phase it is hooked on (`-32602`).
    Params(String),
    /// The interceptor failed: a mutator whose hooks refused the call
    /// (`-32603`, "Interceptor execution failed").
    Failed {
        /// The interceptor.
        interceptor: &'static str,
        /// Why.
        reason: String,
    },
}

impl InvokeError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            InvokeError::Params(_) => -32602,
            InvokeError::Failed { .. } => -32603,
        }
    }

    /// The error's message.
    pub fn message(&self) -> String {
        match self {
            InvokeError::Params(why) => why.clone(),
            InvokeError::Failed { .. } => "Interceptor execution failed".to_owned(),
        }
    }

    /// The error's data.
    pub fn data(&self) -> Option<Value> {
        match self {
            InvokeError::Params(_) => None,
            InvokeError::Failed {
                interceptor,
                reason,
            } => Some(json!({"interceptor": interceptor, "reason": reason})),
        }
    }
}

/// One invocation, read.
#[derive(Debug)]
pub struct Invocation {
    /// The interceptor invoked.
    pub interceptor: &'static Interceptor,
    /// The `mcp` protocol's event it is handed over as.
    pub hook: &'static str,
    /// The phase.
    pub phase: Phase,
    /// The message (or its params) as the invoker gives it.
    pub payload: Value,
    /// The invoker's `config`, `context`, as given.
    config: Value,
    context: Value,
    /// The invoker's `timeoutMs`.
    pub timeout: Option<Duration>,
}

impl Invocation {
    /// The invocation `params` ask for; an error says what is wrong.
    pub fn read(params: Option<&Value>) -> Result<Invocation, InvokeError> {
        let params = params.and_then(Value::as_object).ok_or_else(|| {
            InvokeError::Params("`interceptor/invoke` takes an object of params".into())
        })?;
        let text = |key: &str| -> Result<&str, InvokeError> {
            params
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| InvokeError::Params(format!("`{key}` is missing or not a text")))
        };
        let name = text("name")?;
        let interceptor = Interceptor::named(name)
            .ok_or_else(|| InvokeError::Params(format!("Interceptor '{name}' not found")))?;
        let event = text("event")?;
        let phase = text("phase")?;
        let phase = Phase::named(phase).ok_or_else(|| {
            InvokeError::Params(format!(
                "`phase` is `{phase}`; it is `request` or `response`"
            ))
        })?;
        let hook = interceptor.hook(event, phase).ok_or_else(|| {
            InvokeError::Params(format!(
                "Interceptor '{name}' is not hooked on `{event}` at phase `{}` (see interceptors/list)",
                phase.word()
            ))
        })?;
        let payload = params
            .get("payload")
            .cloned()
            .ok_or_else(|| InvokeError::Params("`payload` is missing".into()))?;
        let timeout = match params.get("timeoutMs") {
            None | Some(Value::Null) => None,
            Some(ms) => Some(Duration::from_millis(ms.as_u64().ok_or_else(|| {
                InvokeError::Params(format!(
                    "`timeoutMs` is not a whole number of milliseconds: {ms}"
                ))
            })?)),
        };
        let field = |key: &str| params.get(key).cloned().unwrap_or(Value::Null);
        Ok(Invocation {
            interceptor,
            hook,
            phase,
            payload,
            config: field("config"),
            context: field("context"),
            timeout,
        })
    }

    /// The `mcp` protocol's input of this invocation: its own fields,
    /// `hook` naming the event, `sessionId` the invoker's
    /// `context.sessionId`, else `session` (the MCP session's).
    pub fn hook_input(&self, session: &str) -> Value {
        let session = self
            .context
            .get("sessionId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(session);
        json!({
            "hook": self.hook,
            "interceptor": self.interceptor.name,
            "phase": self.phase.word(),
            "sessionId": session,
            "payload": self.payload,
            "config": self.config,
            "context": self.context,
        })
    }

    /// The invocation's result from the hooks' `answer` (the protocol's
    /// body, or `None`: nothing to say), `took` after it was read.
    pub fn result(&self, answer: Option<Value>, took: Duration) -> Result<Value, InvokeError> {
        let mut body = match (self.interceptor.kind, answer) {
            // The hooks let it run only rewritten: valid when it is already
            // as they would have it (the mutator rewrote it earlier in the
            // chain, and a second rewrite leaves it so).
            (Kind::Validation, Some(mut body)) if body.get("arguments").is_some() => {
                let arguments = body.as_object_mut().and_then(|b| b.remove("arguments"));
                match arguments.as_ref() == call_params(&self.payload).get("arguments") {
                    true => json!({"valid": true}),
                    false => body,
                }
            }
            (Kind::Validation, Some(body)) => body,
            (Kind::Validation, None) => json!({"valid": true}),
            (Kind::Mutation, Some(body)) if body.get("failed").is_some() => {
                return Err(InvokeError::Failed {
                    interceptor: self.interceptor.name,
                    reason: body["failed"].as_str().unwrap_or_default().to_owned(),
                });
            }
            (Kind::Mutation, Some(body)) => {
                let arguments = body.get("arguments").cloned().unwrap_or(Value::Null);
                json!({"modified": true, "payload": self.with_arguments(arguments)})
            }
            (Kind::Mutation, None) => json!({"modified": false, "payload": self.payload}),
        };
        body["interceptor"] = json!(self.interceptor.name);
        body["type"] = json!(self.interceptor.kind_word());
        body["phase"] = json!(self.phase.word());
        body["durationMs"] = json!(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
        Ok(body)
    }

    /// The payload with the call's `arguments` replaced, where the payload
    /// holds them (the params themselves, or the message's `params`).
    fn with_arguments(&self, arguments: Value) -> Value {
        let mut payload = self.payload.clone();
        let params = match payload.get("method") {
            Some(_) => &mut payload["params"],
            None => &mut payload,
        };
        params["arguments"] = arguments;
        payload
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invoke(params: Value) -> Result<Invocation, InvokeError> {
        Invocation::read(Some(&params))
    }

    #[test]
    fn an_invocation_names_an_interceptor_offered_on_an_event_it_is_hooked_on() {
        let call = json!({"name": "echo", "arguments": {"note": "hi"}});
        let ok = invoke(
            json!({"name": "hookrt", "event": "tools/call", "phase": "request", "payload": call}),
        );
        assert_eq!(ok.unwrap().hook, "tools/call");
        let unknown = invoke(
            json!({"name": "nope", "event": "tools/call", "phase": "request", "payload": {}}),
        );
        assert_eq!(
            unknown.unwrap_err(),
            InvokeError::Params("Interceptor 'nope' not found".into())
        );
        let unhooked = invoke(
            json!({"name": "hookrt-rewrite", "event": "tools/call", "phase": "response", "payload": {}}),
        );
        assert_eq!(unhooked.unwrap_err().code(), -32602);
        let other = invoke(
            json!({"name": "hookrt", "event": "resources/read", "phase": "request", "payload": {}}),
        );
        assert!(
            other
                .unwrap_err()
                .message()
                .contains("not hooked on `resources/read`")
        );
        let no_payload =
            invoke(json!({"name": "hookrt", "event": "tools/call", "phase": "request"}));
        assert_eq!(
            no_payload.unwrap_err(),
            InvokeError::Params("`payload` is missing".into())
        );
        let bad_timeout = invoke(
            json!({"name": "hookrt", "event": "tools/call", "phase": "request", "payload": {}, "timeoutMs": -1}),
        );
        assert_eq!(bad_timeout.unwrap_err().code(), -32602);
        assert_eq!(Invocation::read(None).unwrap_err().code(), -32602);
    }

    #[test]
    fn results_are_the_drafts_shapes_and_a_rewrite_lands_where_the_payload_holds_the_arguments() {
        let took = Duration::from_millis(3);
        for payload in [
            json!({"name": "echo", "arguments": {"note": "hi"}}),
            json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"note": "hi"}}}),
        ] {
            let m = invoke(json!({"name": "hookrt-rewrite", "event": "tools/call", "phase": "request", "payload": payload})).unwrap();
            let same = m.result(None, took).unwrap();
            assert_eq!(same["modified"], false);
            assert_eq!(same["payload"], payload);
            let changed = m
                .result(
                    Some(json!({"modified": true, "arguments": {"note": "HI"}})),
                    took,
                )
                .unwrap();
            assert_eq!(
                (&changed["type"], &changed["phase"], &changed["interceptor"]),
                (
                    &json!("mutation"),
                    &json!("request"),
                    &json!("hookrt-rewrite")
                )
            );
            assert_eq!(
                call_params(&changed["payload"])["arguments"],
                json!({"note": "HI"})
            );
            assert_eq!(call_params(&changed["payload"])["name"], "echo");
            let failed = m.result(Some(json!({"failed": "no"})), took).unwrap_err();
            assert_eq!(
                (failed.code(), failed.data().unwrap()["reason"].clone()),
                (-32603, json!("no"))
            );
        }
        let v = invoke(json!({"name": "hookrt", "event": "tools/call", "phase": "request", "payload": {"name": "echo", "arguments": {"note": "HI"}}, "context": {"sessionId": "s1"}})).unwrap();
        assert_eq!(v.result(None, took).unwrap()["valid"], true);
        // Hooks that would rewrite: valid only where the call already is so.
        let refused = json!({"valid": false, "severity": "error", "messages": [{"message": "only rewritten", "severity": "error"}]});
        let rewriting = |arguments: Value| {
            let mut body = refused.clone();
            body["arguments"] = arguments;
            v.result(Some(body), took).unwrap()
        };
        let same = rewriting(json!({"note": "HI"}));
        assert_eq!(
            (same["valid"].clone(), same.get("messages")),
            (json!(true), None)
        );
        let other = rewriting(json!({"note": "HI!"}));
        assert_eq!(other["valid"], false);
        assert!(other.get("arguments").is_none(), "{other}");
        assert_eq!(v.hook_input("mcp-1")["sessionId"], "s1");
        let bare = invoke(
            json!({"name": "hookrt", "event": "tools/call", "phase": "response", "payload": {}}),
        )
        .unwrap();
        assert_eq!(bare.hook_input("mcp-1")["sessionId"], "mcp-1");
        assert_eq!(bare.hook_input("mcp-1")["hook"], "tools/call:response");
    }
}
