//! The interceptors hookrt offers and `interceptors/list`: `hookrt`, a
//! validator of `tools/call` requests and responses, and `hookrt-rewrite`,
//! a mutator of `tools/call` requests. An invoker runs a request's mutators
//! before its validators, so `hookrt` judges the call as `hookrt-rewrite`
//! left it. Each is described in the draft's wire shape, its defaults left
//! out (`failOpen` false: a call is blocked when the interceptor fails;
//! `priorityHint` 0); `mode` is said only when it is `audit`.

use hookrt::front::bridge::mcp::{RESPONSE, REWRITE, VALIDATE};
use serde_json::{Value, json};

/// The extension key `initialize` advertises the interceptors under.
pub const EXTENSION: &str = "io.modelcontextprotocol/interceptors";

/// The one MCP event the interceptors are hooked on.
pub const EVENT: &str = "tools/call";

/// What an interceptor does with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Says whether the message is valid.
    Validation,
    /// Gives the message back, changed or not.
    Mutation,
}

/// Which message of an exchange an invocation is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The request (a `tools/call` before it runs).
    Request,
    /// The response (its result).
    Response,
}

impl Phase {
    /// The draft's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Phase::Request => "request",
            Phase::Response => "response",
        }
    }

    /// The phase the draft's word names.
    pub fn named(word: &str) -> Option<Phase> {
        match word {
            "request" => Some(Phase::Request),
            "response" => Some(Phase::Response),
            _ => None,
        }
    }
}

/// Whether the interceptors block what they refuse (`active`) or only say
/// so (`audit`: the invoker never blocks on them, so the hooks' decisions
/// are recorded and not enforced, a shadow rollout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The invoker blocks on a refusal (the draft's default).
    #[default]
    Active,
    /// The invoker only records the results.
    Audit,
}

/// One interceptor hookrt offers.
#[derive(Debug)]
pub struct Interceptor {
    /// Its name.
    pub name: &'static str,
    /// What it does.
    pub kind: Kind,
    /// The phases of `tools/call` it is hooked on.
    pub phases: &'static [Phase],
    /// What it is, for the invoker's people.
    pub description: &'static str,
}

/// Every interceptor offered, in the order `interceptors/list` gives them.
pub static OFFERED: [Interceptor; 2] = [
    Interceptor {
        name: "hookrt",
        kind: Kind::Validation,
        phases: &[Phase::Request, Phase::Response],
        description: "the hookrt agent folder's hooks decide each tool call (a deny or an ask is an error) and see each result",
    },
    Interceptor {
        name: "hookrt-rewrite",
        kind: Kind::Mutation,
        phases: &[Phase::Request],
        description: "the hookrt agent folder's hooks rewrite a tool call's arguments (put it before `hookrt` in the chain)",
    },
];

impl Interceptor {
    /// The interceptor named `name`.
    pub fn named(name: &str) -> Option<&'static Interceptor> {
        OFFERED.iter().find(|i| i.name == name)
    }

    /// The `mcp` protocol's event an invocation of this interceptor on
    /// `event` at `phase` is handed to the hooks as; `None` where it is
    /// not hooked.
    pub fn hook(&self, event: &str, phase: Phase) -> Option<&'static str> {
        if event != EVENT {
            return None;
        }
        match (self.kind, phase) {
            (Kind::Validation, Phase::Request) => Some(VALIDATE),
            (Kind::Validation, Phase::Response) => Some(RESPONSE),
            (Kind::Mutation, Phase::Request) => Some(REWRITE),
            (Kind::Mutation, Phase::Response) => None,
        }
    }

    /// The draft's word for its kind.
    pub fn kind_word(&self) -> &'static str {
        match self.kind {
            Kind::Validation => "validation",
            Kind::Mutation => "mutation",
        }
    }

    /// Its descriptor in the draft's wire shape.
    pub fn descriptor(&self, mode: Mode) -> Value {
        let hooks: Vec<Value> = self
            .phases
            .iter()
            .map(|p| json!({"events": [EVENT], "phase": p.word()}))
            .collect();
        let mut d = json!({
            "name": self.name,
            "version": env!("CARGO_PKG_VERSION"),
            "description": self.description,
            "type": self.kind_word(),
            "hooks": hooks,
        });
        if mode == Mode::Audit {
            d["mode"] = json!("audit");
        }
        d
    }
}

/// Whether an `interceptors/list` filter `event` takes an interceptor on
/// [`EVENT`]: the event itself, `*`, or a namespace wildcard (`tools/*`).
fn filter_takes(event: &str) -> bool {
    event == EVENT
        || event == "*"
        || event
            .strip_suffix('*')
            .is_some_and(|prefix| prefix.ends_with('/') && EVENT.starts_with(prefix))
}

/// The result of `interceptors/list` with `params` (`{event?}`): every
/// interceptor offered, or those the event filter takes; an error says
/// what is wrong with the params.
pub fn list(params: Option<&Value>, mode: Mode) -> Result<Value, String> {
    let event = match params.and_then(|p| p.get("event")) {
        None | Some(Value::Null) => None,
        Some(Value::String(e)) => Some(e.as_str()),
        Some(other) => return Err(format!("`event` is not a text: {other}")),
    };
    let listed: Vec<Value> = match event {
        Some(e) if !filter_takes(e) => Vec::new(),
        _ => OFFERED.iter().map(|i| i.descriptor(mode)).collect(),
    };
    Ok(json!({"interceptors": listed}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_filter_takes_tools_call_and_wildcards_only() {
        for e in ["tools/call", "*", "tools/*"] {
            assert!(filter_takes(e), "{e}");
        }
        for e in ["prompts/get", "tools/list", "tool*", "resources/*"] {
            assert!(!filter_takes(e), "{e}");
        }
        let all = list(None, Mode::Active).unwrap();
        assert_eq!(all["interceptors"].as_array().unwrap().len(), 2);
        assert!(all["interceptors"][0].get("mode").is_none());
        let none = list(Some(&json!({"event": "prompts/get"})), Mode::Audit).unwrap();
        assert_eq!(none, json!({"interceptors": []}));
        let audit = list(Some(&json!({"event": "tools/call"})), Mode::Audit).unwrap();
        assert_eq!(audit["interceptors"][1]["mode"], "audit");
        assert!(list(Some(&json!({"event": 3})), Mode::Active).is_err());
    }

    #[test]
    fn each_interceptor_hands_over_only_what_it_is_hooked_on() {
        let (v, m) = (&OFFERED[0], &OFFERED[1]);
        assert_eq!(v.hook("tools/call", Phase::Request), Some(VALIDATE));
        assert_eq!(v.hook("tools/call", Phase::Response), Some(RESPONSE));
        assert_eq!(m.hook("tools/call", Phase::Request), Some(REWRITE));
        assert_eq!(m.hook("tools/call", Phase::Response), None);
        assert_eq!(v.hook("resources/read", Phase::Request), None);
    }
}
